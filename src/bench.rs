//! `bench`: times the evaluation of one case's first data set, kernels only.
//!
//! Loading happens once, before timing. Each timed run evaluates the whole graph, which includes
//! allocating the outputs (every kernel creates its output). `bytes_moved` counts what the
//! operator must touch: for gathers, the gathered data read plus indices read plus output
//! written; for scatters, data read, indices and updates read, output written.

use onnx_idx_check::discover::Case;
use onnx_idx_check::runner::{Prepared, RunOptions};
use serde::Serialize;
use std::time::Instant;

/// A benchmark result.
#[derive(Debug, Serialize)]
pub struct BenchResult {
    /// Case name.
    pub case: String,
    /// The data set timed.
    pub data_set: String,
    /// Timed iterations.
    pub iters: u32,
    /// Fastest run.
    pub min_ns: u64,
    /// Median run.
    pub median_ns: u64,
    /// Slowest run.
    pub max_ns: u64,
    /// Bytes the operator must read or write.
    pub bytes_moved: u64,
    /// `bytes_moved` per median run, in GB/s (10^9 bytes per second).
    pub gbps: f64,
    /// Whether the outputs of the first run equal the expected outputs; `None` when an
    /// expected output file is missing (a new case can be timed before it has one).
    pub output_matches: Option<bool>,
}

/// The untimed evaluations before the timed ones: at least `runs` of them, and more until
/// `at_least` has passed since the first.
///
/// The time floor is there because a fresh process on this project's VMs runs a memory-bound
/// kernel slowly for its first tens of milliseconds: a short gather took far longer for its first
/// several evaluations in some processes than afterwards (not the threads' placement: pinning
/// them changed nothing). Peers timed in a long-lived process never pay that.
#[derive(Clone, Copy, Debug)]
pub struct Warmup {
    /// Untimed evaluations, at least.
    pub runs: u32,
    /// How long to keep warming up, at least.
    pub at_least: std::time::Duration,
}

/// Runs the benchmark; errors are messages for the user.
pub fn bench(
    case: &Case,
    opts: &RunOptions,
    warmup: Warmup,
    iters: u32,
) -> Result<BenchResult, String> {
    let ds = case
        .data_sets
        .first()
        .ok_or_else(|| format!("{}: no test_data_set_N directory", case.dir.display()))?;
    let prepared = Prepared::load(case, ds, opts)?;
    let first = prepared.evaluate()?;
    let output_matches = prepared.expected.iter().all(Option::is_some).then(|| {
        first.len() == prepared.expected.len()
            && first
                .iter()
                .zip(prepared.expected.iter().flatten())
                .all(|(a, e)| {
                    onnx_idx_check::compare::compare(e, &a.tensor, a.arithmetic, &opts.tolerance)
                        .passed
                })
    });
    let output_bytes: usize = first.iter().map(|v| v.tensor.byte_size()).sum();
    let bytes_moved = bytes_moved(&prepared, output_bytes);
    drop(first);
    let started = Instant::now();
    let mut runs = 0u32;
    while runs < warmup.runs || started.elapsed() < warmup.at_least {
        prepared.evaluate()?;
        runs = runs.saturating_add(1);
    }
    let mut times = Vec::with_capacity(iters as usize);
    for _ in 0..iters {
        let t = Instant::now();
        let out = prepared.evaluate()?;
        times.push(u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX));
        // Freeing the outputs is not part of the kernel's work.
        drop(out);
    }
    times.sort_unstable();
    let median_ns = times[times.len() / 2];
    Ok(BenchResult {
        case: case.name.clone(),
        data_set: ds.name.clone(),
        iters,
        min_ns: times[0],
        median_ns,
        max_ns: times[times.len() - 1],
        bytes_moved,
        gbps: if median_ns > 0 {
            bytes_moved as f64 / median_ns as f64
        } else {
            0.0
        },
        output_matches,
    })
}

fn bytes_moved(p: &Prepared, output_bytes: usize) -> u64 {
    let inputs = p.input_tensors();
    let total_in: usize = inputs.iter().map(|t| t.byte_size()).sum();
    let moved = if p.is_gather() {
        // The data input (the first) is read only where gathered: as many bytes as the output.
        let data = inputs.first().map_or(0, |t| t.byte_size());
        total_in - data + 2 * output_bytes
    } else {
        total_in + output_bytes
    };
    moved as u64
}

/// The human rendering.
pub fn render(r: &BenchResult) -> String {
    let time =
        |ns: u64| onnx_idx_check::report::human::duration_text(std::time::Duration::from_nanos(ns));
    let mut s = format!(
        "{} ({}): {} iterations\n  min {}   median {}   max {}\n  {} bytes moved, {:.2} GB/s at the median\n",
        r.case,
        r.data_set,
        r.iters,
        time(r.min_ns),
        time(r.median_ns),
        time(r.max_ns),
        r.bytes_moved,
        r.gbps
    );
    match r.output_matches {
        Some(false) => s.push_str("  warning: the outputs differ from the expected outputs (run `onnx-idx-check run` on the case)\n"),
        None => s.push_str("  note: an expected output file is missing, so the outputs were not checked\n"),
        Some(true) => {}
    }
    s
}
