//! `--runtime`: the runtime under test runs the data set in its worker; its outputs are judged as
//! `--actual`'s are. Under `--repeat N` it runs N times, alternating thread counts where its
//! adapter can set them, and any difference between runs is found here.

use super::actual::outputs_in;
use super::record::Record;
use super::{RunOptions, Verdict};
use crate::compare::{compare, Mode, Tolerance};
use crate::discover::{Case, DataSet};
use crate::eval::Plan;
use crate::runtime::{Input, Job, Outcome, Request};
use crate::tensor::{DType, Tensor};
use crate::verdict::{Fault, OutputResult, Status};

/// A runtime's outputs, each with the name shown for it; `None` where it wrote none.
type Outputs = Vec<(String, Option<Tensor>)>;

/// What the runtime gave for a data set.
pub(super) struct FromRuntime {
    /// Its outputs (of the first run), each with the name shown for it; `None` where it wrote
    /// none (all of them after a refusal).
    pub outputs: Outputs,
    /// The reason to give, when it refused the data set (`runtime NAME refused: MESSAGE`).
    pub refusal: Option<String>,
    /// The outputs that differed between two runs, as comparisons of the later run with the
    /// first (`--repeat`).
    pub changed: Vec<OutputResult>,
    /// The request as the runtime got it, to retire its workers when they may be damaged.
    pub job: Job,
}

/// The thread counts of the runs of `--repeat`, in turn: as many threads as cores (at least 2),
/// one thread, and twice as many as cores. Races show with several threads, and differently
/// with more threads than cores; one thread is the runs' deterministic baseline.
fn threads_of_run(run: usize, repeat: usize) -> Option<usize> {
    if repeat < 2 {
        return None;
    }
    let many = std::thread::available_parallelism().map_or(2, |n| n.get().max(2));
    Some(match run % 3 {
        0 => many,
        1 => 1,
        _ => 2 * many,
    })
}

/// Runs the data set through the runtime under test, if the run has one (`opts.repeat`
/// times), and reads what it wrote.
pub(super) fn run_runtime(
    plan: &Plan<'_>,
    case: &Case,
    ds: &DataSet,
    inputs: &[Tensor],
    wants: &[(String, Option<DType>)],
    opts: &RunOptions,
    record: &mut Record,
) -> Result<Option<FromRuntime>, Verdict> {
    let Some(rt) = opts.runtime.as_deref() else {
        return Ok(None);
    };
    let pbs: Vec<_> = (0..inputs.len())
        .map(|k| ds.dir.join(format!("input_{k}.pb")))
        .collect();
    // model.onnx, or an IR's model.xml (the runtime finds model.bin beside it).
    let model = case.dir.join(crate::load::model_file_of(&case.dir));
    let repeat = opts.repeat.max(1);
    // The first run's outputs and thread count: what later runs must equal.
    let mut first: Option<(Outputs, Option<usize>)> = None;
    let mut changed = Vec::new();
    let req = Request {
        case: &case.name,
        data_set: &ds.name,
        model: &model,
        inputs: plan
            .inputs
            .iter()
            .zip(inputs)
            .zip(&pbs)
            .map(|((info, tensor), pb)| Input {
                name: &info.name,
                pb,
                tensor,
            })
            .collect(),
        outputs: plan
            .outputs
            .iter()
            .zip(wants)
            .map(|(info, (_, want))| (info.name.as_str(), *want))
            .collect(),
    };
    let ours = |e: std::io::Error| {
        Verdict(
            Status::Errored,
            format!(
                "runtime {}: onnx-idx-check could not write the request's files: {e}",
                rt.label()
            ),
            None,
        )
    };
    // The inputs are written once, for every run.
    let job = rt.prepare(&req).map_err(ours)?;
    for run in 0..repeat {
        let threads = threads_of_run(run, repeat);
        let outcome = rt.run(&job, threads).map_err(ours)?;
        let on_run = |what: String| {
            if repeat > 1 {
                format!(
                    "run {} of {repeat}{}: {what}",
                    run + 1,
                    threads_note(threads)
                )
            } else {
                what
            }
        };
        let outputs = match outcome {
            Outcome::Crashed(why) => {
                return Err(Verdict(
                    Status::Errored,
                    on_run(format!("runtime {} crashed: {why}", rt.label())),
                    Some(Fault::Crashed),
                ))
            }
            Outcome::TimedOut(t) => {
                return Err(Verdict(
                    Status::Errored,
                    on_run(format!(
                    "runtime {} timed out: no answer after {} s (--timeout); its worker was killed",
                    rt.label(),
                    t.as_secs_f64()
                )),
                    Some(Fault::TimedOut),
                ))
            }
            Outcome::Refused(message) => {
                if run == 0 {
                    // The verdict depends on whether the spec requires an error: judged later.
                    return Ok(Some(FromRuntime {
                        outputs: (0..plan.outputs.len())
                            .map(|k| (format!("{}: output_{k}", rt.label()), None))
                            .collect(),
                        refusal: Some(format!("runtime {} refused: {message}", rt.label())),
                        changed,
                        job,
                    }));
                }
                return Err(Verdict(
                    Status::Failed,
                    on_run(format!(
                        "runtime {} refused what it ran before: {message}",
                        rt.label()
                    )),
                    Some(Fault::Nondeterministic),
                ));
            }
            Outcome::Done(out) => {
                let show = |file: &str| format!("{}: {file}", rt.label());
                outputs_in(out.path(), &show, wants, opts, record)?
            }
        };
        match &first {
            None => first = Some((outputs, threads)),
            Some((before, before_threads)) => {
                for (k, ((_, a), (_, b))) in before.iter().zip(&outputs).enumerate() {
                    if changed
                        .iter()
                        .any(|c: &OutputResult| c.name == plan.outputs[k].name)
                    {
                        continue;
                    }
                    if let Some(c) = difference(a.as_ref(), b.as_ref(), &plan.outputs[k].name) {
                        changed.push(OutputResult {
                            reason: c.reason.map(|r| {
                                format!(
                                    "differs between runs of runtime {}: run {} of {repeat}{} against run 1{}: {r}",
                                    rt.label(),
                                    run + 1,
                                    threads_note(threads),
                                    threads_note(*before_threads)
                                )
                            }),
                            ..c
                        });
                    }
                }
            }
        }
    }
    let (outputs, _) = first.unwrap_or_default();
    Ok(Some(FromRuntime {
        outputs,
        refusal: None,
        changed,
        job,
    }))
}

/// ` (2 threads)`, or nothing when the run did not ask for a thread count.
fn threads_note(threads: Option<usize>) -> String {
    match threads {
        Some(1) => " (1 thread)".to_string(),
        Some(n) => format!(" ({n} threads)"),
        None => String::new(),
    }
}

/// The comparison of one output of two runs, when they differ (bit for bit, NaN equal to NaN).
fn difference(first: Option<&Tensor>, later: Option<&Tensor>, name: &str) -> Option<OutputResult> {
    let exact = Tolerance {
        mode: Mode::Exact,
        ..Tolerance::default()
    };
    let (a, b) = match (first, later) {
        (Some(a), Some(b)) => (a, b),
        (None, None) => return None,
        (a, b) => {
            let which = if a.is_some() {
                "the later run"
            } else {
                "the first run"
            };
            // The output that was written, set against itself: its dtype and shape, no mismatch.
            let t = a.or(b)?;
            let mut out = OutputResult::of_diff(name, t, t, compare(t, t, false, &exact));
            out.status = Status::Failed;
            out.reason = Some(format!("{which} wrote no output '{name}'"));
            return Some(out);
        }
    };
    let out = OutputResult::of_diff(name, a, b, compare(a, b, false, &exact));
    (out.status == Status::Failed).then_some(out)
}
