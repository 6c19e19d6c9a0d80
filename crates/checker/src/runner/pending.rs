//! `--pending DIR`: our result written for `review` where an expected output failed or is
//! missing. The `.diff` text beside each snapshot comes from the human renderer
//! ([`crate::report::human::pending_diff`]); this file only decides what is written and notes it
//! in the output's reason.

use super::RunOptions;
use crate::discover::{Case, DataSet};
use crate::report::human::pending_diff;
use crate::tensor::Tensor;
use crate::verdict::{OutputResult, Status};

/// Under `--pending`, writes our result for a failed or missing output `k` for review, and notes
/// in the output's reason where (or why it could not be written).
pub(super) fn snapshot(
    case: &Case,
    ds: &DataSet,
    k: usize,
    out: &mut OutputResult,
    ours: &Tensor,
    opts: &RunOptions,
) {
    let Some(dir) = &opts.pending else {
        return;
    };
    let diff = pending_diff(&case.name, &ds.name, k, out, ours);
    // What the result was computed from, so that `review` can refuse it once the case changes.
    let written = crate::pending::Sources::of(&case.dir, &ds.name).and_then(|sources| {
        let snapshot = crate::pending::Snapshot {
            tensor: ours,
            output_name: &out.name,
            diff: &diff,
            sources: &sources,
        };
        crate::pending::write(dir, &case.name, &ds.name, k, &snapshot)
    });
    let note = note(written);
    out.reason.get_or_insert_with(String::new).push_str(&note);
}

/// What the reason says of a snapshot written (or not).
fn note(written: Result<std::path::PathBuf, crate::pending::PendingError>) -> String {
    match written {
        Ok(path) => format!(
            "; onnx-idx-check's result is pending review in {}",
            path.display()
        ),
        Err(e) => format!("; could not write the pending snapshot: {e}"),
    }
}

/// An output with no expected file, a new snapshot: errored (the case is not complete until a
/// result is accepted), with our result in brief; under `--pending` written for review.
pub(super) fn missing_expected(
    case: &Case,
    ds: &DataSet,
    k: usize,
    name: &str,
    ours: &Tensor,
    opts: &RunOptions,
) -> OutputResult {
    let mut out = OutputResult {
        name: name.to_string(),
        status: Status::Errored,
        reason: Some(format!(
            "no expected output yet: {}/output_{k}.pb is missing",
            ds.name
        )),
        dtype: ours.dtype(),
        actual_dtype: ours.dtype(),
        expected_shape: None,
        actual_shape: ours.shape().to_vec(),
        mismatches: 0,
        max_abs_diff: None,
        max_rel_diff: None,
        first_mismatches: Vec::new(),
        tolerant: false,
        diagnoses: Vec::new(),
        computed: Some(crate::pending::preview(ours)),
    };
    if opts.pending.is_some() {
        snapshot(case, ds, k, &mut out, ours, opts);
    } else if let Some(r) = &mut out.reason {
        r.push_str("; run with --pending DIR to compute it for review");
    }
    out
}

/// Under `--pending`, an output that passes now: a snapshot of it from an earlier run is stale
/// and is removed, as insta does (`review` would otherwise offer a difference that is gone).
pub(super) fn passed(
    case: &Case,
    ds: &DataSet,
    k: usize,
    out: &mut OutputResult,
    opts: &RunOptions,
) {
    let Some(dir) = &opts.pending else {
        return;
    };
    if let Err(e) = crate::pending::remove(dir, &case.name, &ds.name, k) {
        out.reason = Some(format!("could not remove the stale pending snapshot: {e}"));
    }
}
