//! `--actual DIR`: a runtime's outputs, read from the tree that mirrors the cases.

use super::case::Record;
use super::{RunOptions, Verdict};
use crate::discover::{Case, DataSet};
use crate::tensor::Tensor;
use crate::verdict::{Fault, Status};
use std::path::Path;

/// Loads a runtime's outputs for a data set from the `--actual` tree.
pub(super) fn load_actual(
    root: &Path,
    case: &Case,
    ds: &DataSet,
    n: usize,
    opts: &RunOptions,
    record: &mut Record,
) -> Result<Vec<(String, Option<Tensor>)>, Verdict> {
    // The tree mirrors case names, as `--pending` does (a case given as PATH itself is named by
    // its directory).
    let dir = root.join(&case.name).join(&ds.name);
    (0..n)
        .map(|k| {
            let path = dir.join(format!("output_{k}.pb"));
            let shown = path.display().to_string();
            // A missing file is judged later: right when the spec requires an error.
            if std::fs::symlink_metadata(&path).is_err() {
                return Ok((shown, None));
            }
            let t = record
                .tensor(&path, &shown, opts)
                .map_err(Verdict::from)?
                .tensor;
            Ok((shown, Some(t)))
        })
        .collect()
}

/// The runtime's outputs, all present but those it may leave out (`excused[k]`, kept as
/// `None`); any other missing one errors the data set with its path, or with the runtime's
/// message when it refused the data set (`refusal`), or as what `runtime` did not write.
pub(super) fn all_present(
    actual: Vec<(String, Option<Tensor>)>,
    excused: &[bool],
    refusal: Option<&str>,
    runtime: Option<&str>,
) -> Result<Vec<Option<Tensor>>, Verdict> {
    actual
        .into_iter()
        .enumerate()
        .map(|(k, (shown, t))| match t {
            Some(t) => Ok(Some(t)),
            None if excused.get(k).copied().unwrap_or(false) => Ok(None),
            None if refusal.is_some() => Err(Verdict(
                Status::Errored,
                refusal.unwrap_or_default().to_string(),
                Some(Fault::Refused),
            )),
            None => Err(Verdict(
                Status::Errored,
                match runtime {
                    Some(name) => format!(
                        "runtime {name} wrote nothing: it answered done, but output {k} has no \
                         file (output_{k}.pb, output_{k}.npy or outputs.npz)"
                    ),
                    None => format!("actual output {shown} is missing"),
                },
                Some(Fault::WroteNothing),
            )),
        })
        .collect()
}
