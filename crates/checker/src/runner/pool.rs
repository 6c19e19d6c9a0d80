//! Cases on a thread pool of `--jobs` threads, their results delivered in case order.

use super::batched::{self, Answers};
use super::case::{bare_result, run_case_answered};
use super::RunOptions;
use crate::discover::Case;
use crate::verdict::{CaseResult, Status};
use std::sync::atomic::{AtomicBool, Ordering};

/// Cases judged after one round of shared models at most (`RunOptions::batch`): enough for
/// full models of each kind, few enough that results keep arriving.
const WINDOW: usize = 512;

/// Runs `cases` on `jobs` threads, calling `on_result` with each result in case order. With
/// `fail_fast`, no case starts after one has failed or errored; returns the results and the
/// number of cases not run. Under [`RunOptions::batch`] a window of cases at a time is first run
/// in shared models (`batched.rs`).
pub fn run_all(
    cases: &[Case],
    opts: &RunOptions,
    jobs: usize,
    fail_fast: bool,
    mut on_result: impl FnMut(&CaseResult),
) -> (Vec<CaseResult>, usize) {
    let stop = AtomicBool::new(false);
    let Some(rt) = batched::wanted_for(opts) else {
        return run_some(cases, opts, None, jobs, fail_fast, &stop, &mut on_result);
    };
    let (mut results, mut not_run) = (Vec::with_capacity(cases.len()), 0);
    for window in cases.chunks(WINDOW) {
        let answers = if stop.load(Ordering::Relaxed) {
            Answers::default()
        } else {
            batched::answer(window, opts, rt, jobs)
        };
        let (r, n) = run_some(
            window,
            opts,
            Some(&answers),
            jobs,
            fail_fast,
            &stop,
            &mut on_result,
        );
        results.extend(r);
        not_run += n;
    }
    (results, not_run)
}

/// [`run_all`] of `cases` with the shared models' `answers`, `stop` shared across windows.
fn run_some(
    cases: &[Case],
    opts: &RunOptions,
    answers: Option<&Answers>,
    jobs: usize,
    fail_fast: bool,
    stop: &AtomicBool,
    on_result: &mut dyn FnMut(&CaseResult),
) -> (Vec<CaseResult>, usize) {
    let (tx, rx) = std::sync::mpsc::channel::<(usize, Option<CaseResult>)>();
    let mut results: Vec<Option<CaseResult>> = vec![None; cases.len()];
    let mut not_run = 0;
    std::thread::scope(|scope| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(jobs.max(1))
            .build();
        let work = move |(i, case): (usize, &Case), tx: &std::sync::mpsc::Sender<_>| {
            if stop.load(Ordering::Relaxed) {
                let _ = tx.send((i, None));
                return;
            }
            let answer = answers.and_then(|a| a.of(case));
            // A bug in a kernel must not take the other cases down: a panic becomes an errored
            // verdict for its case alone.
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                run_case_answered(case, opts, answer)
            }))
            .unwrap_or_else(|panic| panicked(case, panic.as_ref()));
            if fail_fast && matches!(r.status, Status::Failed | Status::Errored) {
                stop.store(true, Ordering::Relaxed);
            }
            let _ = tx.send((i, Some(r)));
        };
        scope.spawn(move || match pool {
            Ok(pool) => pool.install(|| {
                use rayon::prelude::*;
                cases
                    .par_iter()
                    .enumerate()
                    .with_max_len(1)
                    .for_each_with(tx, |tx, item| work(item, tx));
            }),
            // No thread pool (resource exhaustion): run sequentially.
            Err(_) => cases.iter().enumerate().for_each(|item| work(item, &tx)),
        });
        // Deliver in order: hold results until every earlier case has arrived.
        let mut next = 0;
        let mut arrived: Vec<Option<Option<CaseResult>>> = vec![None; cases.len()];
        for (i, r) in rx.iter() {
            arrived[i] = Some(r);
            while next < cases.len() {
                let Some(slot) = arrived[next].take() else {
                    break;
                };
                match slot {
                    Some(r) => {
                        on_result(&r);
                        results[next] = Some(r);
                    }
                    None => not_run += 1,
                }
                next += 1;
            }
        }
    });
    (results.into_iter().flatten().collect(), not_run)
}

/// The verdict of a case whose evaluation panicked (a bug in onnx-idx-check).
fn panicked(case: &Case, panic: &(dyn std::any::Any + Send)) -> CaseResult {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string());
    bare_result(
        case,
        Status::Errored,
        Some(format!(
            "internal error in onnx-idx-check (please report it): {what}"
        )),
    )
}
