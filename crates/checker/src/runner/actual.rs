//! `--actual DIR`: a runtime's outputs, read from the tree that mirrors the cases.
//!
//! Output K of a data set is `output_K.pb`, `output_K.npy`, or the array `output_K` or
//! `<graph output name>` of the data set's `outputs.npz` (docs/runtime-protocol.md); more than
//! one of them is ambiguous.

use super::record::Record;
use super::{RunOptions, Verdict};
use crate::discover::{Case, DataSet};
use crate::load::npy::{load_npy_file, Npz};
use crate::pb::{type_proto, ValueInfoProto};
use crate::tensor::{DType, Tensor};
use crate::verdict::{Fault, Status};
use std::path::Path;

/// What the runtime's output K is expected to be: the graph output's name, and its dtype when
/// known (declared by the graph, else that of the expected output file). The dtype says what
/// the bit patterns of a `.npy` array of a type numpy lacks stand for.
pub(super) fn wanted(info: &ValueInfoProto, expected: Option<&Tensor>) -> (String, Option<DType>) {
    let declared = match info.r#type.as_ref().and_then(|t| t.value.as_ref()) {
        Some(type_proto::Value::TensorType(tt)) => DType::from_onnx(tt.elem_type),
        _ => None,
    };
    (
        info.name.clone(),
        declared.or_else(|| expected.map(Tensor::dtype)),
    )
}

/// Loads a runtime's outputs for a data set from the `--actual` tree: one entry per graph output
/// (`outputs`: name and expected dtype), with the file shown for it and the tensor if present.
pub(super) fn load_actual(
    root: &Path,
    case: &Case,
    ds: &DataSet,
    outputs: &[(String, Option<DType>)],
    opts: &RunOptions,
    record: &mut Record,
) -> Result<Vec<(String, Option<Tensor>)>, Verdict> {
    // The tree mirrors case names, as `--pending` does (a case given as PATH itself is named by
    // its directory).
    let dir = root.join(&case.name).join(&ds.name);
    let show = |file: &str| dir.join(file).display().to_string();
    outputs_in(&dir, &show, outputs, opts, record)
}

/// The outputs a runtime wrote into `dir`: for output K, `output_K.pb`, `output_K.npy`, or the
/// array `output_K` or the output's name in `outputs.npz`. Two of these for one output is an
/// error (ambiguous: which one the runtime meant would be a guess). `show` names a file of
/// `dir` in messages.
pub(super) fn outputs_in(
    dir: &Path,
    show: &dyn Fn(&str) -> String,
    outputs: &[(String, Option<DType>)],
    opts: &RunOptions,
    record: &mut Record,
) -> Result<Vec<(String, Option<Tensor>)>, Verdict> {
    let exists = |p: &Path| std::fs::symlink_metadata(p).is_ok();
    // Opened whenever present, so that a stale single file beside it is caught as ambiguous.
    let npz_path = dir.join("outputs.npz");
    let npz_shown = show("outputs.npz");
    let npz = if exists(&npz_path) {
        let a = Npz::open(&npz_path, &npz_shown, opts.max_tensor_bytes, opts.digests)?;
        if let Some(sha) = a.sha256() {
            record.files.push((npz_shown.clone(), sha.to_string()));
        }
        Some(a)
    } else {
        None
    };
    let mut out = Vec::with_capacity(outputs.len());
    for (k, (name, want)) in outputs.iter().enumerate() {
        let pb_name = format!("output_{k}.pb");
        let npy_name = format!("output_{k}.npy");
        let (pb, npy) = (dir.join(&pb_name), dir.join(&npy_name));
        let (shown, npy_shown) = (show(&pb_name), show(&npy_name));
        let own = format!("output_{k}");
        let arrays = [own.as_str(), name.as_str()];
        let in_npz = npz.as_ref().and_then(|a| a.holds(&arrays));
        let ambiguous = |a: &str, b: &str| {
            Verdict(
                Status::Errored,
                format!("actual output {k} is ambiguous: both {a} and {b} exist"),
                None,
            )
        };
        match (exists(&pb), exists(&npy), in_npz) {
            (true, true, _) => return Err(ambiguous(&shown, &npy_shown)),
            (true, false, Some(array)) => {
                return Err(ambiguous(&shown, &format!("{npz_shown}:{array}")))
            }
            (false, true, Some(array)) => {
                return Err(ambiguous(&npy_shown, &format!("{npz_shown}:{array}")))
            }
            (true, false, None) => {
                let t = record
                    .tensor(&pb, &shown, opts)
                    .map_err(Verdict::from)?
                    .tensor;
                out.push((shown, Some(t)));
            }
            (false, true, None) => {
                let (t, sha) =
                    load_npy_file(&npy, &npy_shown, *want, opts.max_tensor_bytes, opts.digests)?;
                if let Some(sha) = sha {
                    record.files.push((npy_shown.clone(), sha));
                }
                out.push((npy_shown, Some(t)));
            }
            (false, false, _) => {
                let found = match &npz {
                    Some(a) => a.tensor(&arrays, *want)?,
                    None => None,
                };
                // A missing output is judged later: right when the spec requires an error.
                match found {
                    Some((array, t)) => out.push((show(&format!("outputs.npz:{array}")), Some(t))),
                    None => out.push((shown, None)),
                }
            }
        }
    }
    Ok(out)
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
