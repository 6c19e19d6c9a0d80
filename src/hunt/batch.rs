//! Many cases in one model: a runtime that pays a load and a compile per model (OpenVINO most of
//! all) spends most of a hunt on them, not on running cases. Valid cases of one opset are put side
//! by side in one model, each its own subgraph with its names prefixed (`m3_indices`), so that one
//! request runs them all; each case's outputs are then judged on their own.
//!
//! Only a runtime whose hello says `batches` gets batches (docs/runtime-protocol.md), and only
//! with cases where the spec defines outputs: one case that requires an error would make the
//! whole model one. What a batch shows is never a finding by itself: a case whose outputs
//! disagree in the batch, and every case of a batch the runtime did not answer, is judged again
//! alone, which is what the hunt reports.

use onnx_idx_check::pb::{self, ModelProto, TensorProto};
use prost::Message;
use std::path::{Path, PathBuf};

/// Cases in one model at most: enough that the compile is paid once for many, few enough that a
/// batch the runtime refuses is split in a few steps.
pub(crate) const SIZE: usize = 16;

/// The largest case (its files' bytes) put in a batch: large cases are where sizes and threads
/// matter, and they run alone.
const MAX_CASE_BYTES: u64 = 256 * 1024;

/// What the cases of one model must share: the IR version and the opset imports.
pub(crate) type Key = (i64, Vec<(String, i64)>);

/// A case ready to be batched: its directory (in the variant the runtime is shown) and model.
pub(crate) struct Ready {
    /// The case directory, `model.onnx` and `test_data_set_0`.
    pub(crate) dir: PathBuf,
    model: ModelProto,
}

/// The case in `dir` if it can share a model: one data set of `input_K.pb` and `output_K.pb`
/// files only (no external data), small, and a graph without subgraphs; with its batch key.
pub(crate) fn ready(dir: &Path) -> Option<(Key, Ready)> {
    let mut bytes = 0;
    for entry in std::fs::read_dir(dir).ok()? {
        let entry = entry.ok()?;
        let name = entry.file_name().to_string_lossy().into_owned();
        match name.as_str() {
            "model.onnx" => bytes += entry.metadata().ok()?.len(),
            "test_data_set_0" => {
                for file in std::fs::read_dir(entry.path()).ok()? {
                    let file = file.ok()?;
                    let f = file.file_name().to_string_lossy().into_owned();
                    let numbered = |prefix: &str| {
                        f.strip_prefix(prefix)
                            .and_then(|r| r.strip_suffix(".pb"))
                            .is_some_and(|k| k.parse::<usize>().is_ok())
                    };
                    if !(numbered("input_") || numbered("output_")) {
                        return None;
                    }
                    bytes += file.metadata().ok()?.len();
                }
            }
            _ => return None,
        }
    }
    if bytes > MAX_CASE_BYTES {
        return None;
    }
    let model = ModelProto::decode(std::fs::read(dir.join("model.onnx")).ok()?.as_slice()).ok()?;
    let g = model.graph.as_ref()?;
    let nested = g.node.iter().any(|n| {
        n.attribute
            .iter()
            .any(|a| a.g.is_some() || !a.graphs.is_empty())
    });
    if nested || !g.sparse_initializer.is_empty() {
        return None;
    }
    let mut opsets: Vec<(String, i64)> = model
        .opset_import
        .iter()
        .map(|o| (o.domain.clone(), o.version))
        .collect();
    opsets.sort();
    Some((
        (model.ir_version, opsets),
        Ready {
            dir: dir.to_path_buf(),
            model,
        },
    ))
}

/// `name` in member `k`'s subgraph (an empty name, an absent optional input, stays empty).
fn prefixed(k: usize, name: &str) -> String {
    if name.is_empty() {
        String::new()
    } else {
        format!("m{k}_{name}")
    }
}

/// Renames a value's name and its symbolic dims, so that no two members share either: a
/// runtime unifies dims of one name across the whole model.
fn rename_value(k: usize, vi: &mut pb::ValueInfoProto) {
    use pb::tensor_shape_proto::dimension::Value;
    vi.name = prefixed(k, &vi.name);
    if let Some(pb::type_proto::Value::TensorType(tt)) =
        vi.r#type.as_mut().and_then(|t| t.value.as_mut())
    {
        for d in tt.shape.iter_mut().flat_map(|s| s.dim.iter_mut()) {
            if let Some(Value::DimParam(p)) = d.value.as_mut() {
                *p = prefixed(k, p);
            }
        }
    }
}

/// Writes the members side by side as one case into `out` (created): one model whose graph
/// holds every member's nodes, inputs, initializers and outputs under prefixed names, and one
/// data set of their inputs and expected outputs in member order. Says, per member, the names
/// of its outputs in the merged model.
pub(crate) fn merge(members: &[&Ready], out: &Path) -> std::io::Result<Vec<Vec<String>>> {
    let first = &members
        .first()
        .ok_or_else(|| std::io::Error::other("an empty batch"))?
        .model;
    let mut graph = pb::GraphProto {
        name: "batch".to_string(),
        ..Default::default()
    };
    let ds = out.join("test_data_set_0");
    std::fs::create_dir_all(&ds)?;
    let (mut inputs, mut outputs) = (0, 0);
    let mut names = Vec::with_capacity(members.len());
    for (k, member) in members.iter().enumerate() {
        let Some(g) = member.model.graph.clone() else {
            return Err(std::io::Error::other("a member without a graph"));
        };
        let fed = onnx_idx_check::eval::data_inputs(&g).len();
        for mut node in g.node {
            node.name = prefixed(k, &node.name);
            for v in node.input.iter_mut().chain(node.output.iter_mut()) {
                *v = prefixed(k, v);
            }
            graph.node.push(node);
        }
        for mut init in g.initializer {
            init.name = prefixed(k, &init.name);
            graph.initializer.push(init);
        }
        for mut vi in g.input {
            rename_value(k, &mut vi);
            graph.input.push(vi);
        }
        for mut vi in g.value_info {
            rename_value(k, &mut vi);
            graph.value_info.push(vi);
        }
        let mut mine = Vec::with_capacity(g.output.len());
        for mut vi in g.output {
            rename_value(k, &mut vi);
            mine.push(vi.name.clone());
            graph.output.push(vi);
        }
        let from = member.dir.join("test_data_set_0");
        for j in 0..fed {
            copy_tensor(&from.join(format!("input_{j}.pb")), k, &ds, "input", inputs)?;
            inputs += 1;
        }
        for j in 0..mine.len() {
            copy_tensor(
                &from.join(format!("output_{j}.pb")),
                k,
                &ds,
                "output",
                outputs,
            )?;
            outputs += 1;
        }
        names.push(mine);
    }
    let model = ModelProto {
        graph: Some(graph),
        ..first.clone()
    };
    std::fs::write(out.join("model.onnx"), model.encode_to_vec())?;
    Ok(names)
}

/// Copies the tensor file `from` into `ds` as `{what}_{n}.pb`, its name prefixed for member `k`.
fn copy_tensor(from: &Path, k: usize, ds: &Path, what: &str, n: usize) -> std::io::Result<()> {
    let bytes = std::fs::read(from)?;
    let mut t = TensorProto::decode(bytes.as_slice())
        .map_err(|e| std::io::Error::other(format!("{}: {e}", from.display())))?;
    t.name = prefixed(k, &t.name);
    std::fs::write(ds.join(format!("{what}_{n}.pb")), t.encode_to_vec())
}

/// What a batch's verdict says of one member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Seen {
    /// Every output of it passed.
    Agrees,
    /// Some output of it did not: it is judged alone.
    Disagrees,
}

/// Each member's part of the batch's verdict, from the names [`merge`] gave its outputs; `None`
/// when the runtime answered the batch with no outputs (it refused, crashed or hung).
pub(crate) fn split(
    result: &onnx_idx_check::verdict::CaseResult,
    names: &[Vec<String>],
) -> Option<Vec<Seen>> {
    use onnx_idx_check::verdict::Status;
    let ds = result.data_sets.first()?;
    if ds.outputs.is_empty()
        || ds
            .fault
            .is_some_and(|f| f != onnx_idx_check::verdict::Fault::Nondeterministic)
    {
        return None;
    }
    Some(
        names
            .iter()
            .map(|mine| {
                let all = mine.iter().all(|n| {
                    ds.outputs
                        .iter()
                        .any(|o| &o.name == n && o.status == Status::Passed)
                });
                if all {
                    Seen::Agrees
                } else {
                    Seen::Disagrees
                }
            })
            .collect(),
    )
}

/// Whether the batch's verdict says the runtime gave no answer in time.
pub(crate) fn timed_out(result: &onnx_idx_check::verdict::CaseResult) -> bool {
    result
        .data_sets
        .iter()
        .any(|d| d.fault == Some(onnx_idx_check::verdict::Fault::TimedOut))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::cases::{self, Breadth};
    use crate::generate::variant::{rewrite_case, Variant};

    /// Our runner's verdict on the case in `dir`.
    fn run(dir: &Path, name: &str) -> onnx_idx_check::verdict::CaseResult {
        let case = onnx_idx_check::discover::Case {
            name: name.to_string(),
            dir: dir.to_path_buf(),
            rel: PathBuf::new(),
            data_sets: vec![onnx_idx_check::discover::DataSet {
                name: "test_data_set_0".to_string(),
                dir: dir.join("test_data_set_0"),
            }],
        };
        onnx_idx_check::runner::run_case(&case, &onnx_idx_check::runner::RunOptions::default())
    }

    /// The quick profile's valid cases, written under `root` in turn in each variant, grouped
    /// by operator version and batch key.
    fn written(root: &Path) -> Vec<Vec<(Key, Ready)>> {
        let mut groups = Vec::new();
        for (def, v) in cases::versions(&cases::generated_ops()) {
            let mut group = Vec::new();
            for (i, spec) in cases::of_version(Breadth::Quick, 0, def, v)
                .into_iter()
                .filter(|s| !s.violation)
                .enumerate()
            {
                let Some(r) = crate::generate::render_case(&spec).unwrap() else {
                    continue;
                };
                let dir = root
                    .join(format!("{}-{}", crate::generate::op_name(def), v.since))
                    .join(&r.name);
                r.write_to(&dir).unwrap();
                let variant = Variant::ALL[i % Variant::ALL.len()];
                let _ = rewrite_case(&dir, variant);
                if let Some(ready) = ready(&dir) {
                    group.push(ready);
                }
            }
            groups.push(group);
        }
        groups
    }

    #[test]
    fn every_member_of_a_merged_batch_keeps_its_verdict_and_a_wrong_one_is_pointed_at() {
        let tmp = tempfile::tempdir().unwrap();
        let (mut merged, mut members) = (0, 0);
        for group in written(&tmp.path().join("cases")) {
            let mut by_key: std::collections::BTreeMap<Key, Vec<&Ready>> = Default::default();
            for (k, r) in &group {
                by_key.entry(k.clone()).or_default().push(r);
            }
            for (_, rs) in by_key {
                for chunk in rs.chunks(SIZE) {
                    let dir = tmp.path().join(format!("batch-{merged}"));
                    let names = merge(chunk, &dir).unwrap();
                    let result = run(&dir, "batch");
                    assert_eq!(
                        split(&result, &names),
                        Some(vec![Seen::Agrees; chunk.len()]),
                        "{}: {:?}",
                        chunk[0].dir.display(),
                        result.reason
                    );
                    if let Some(keep) = std::env::var_os("ONNX_IDX_CHECK_KEEP_BATCH") {
                        let _ =
                            std::fs::rename(&dir, Path::new(&keep).join(format!("batch-{merged}")));
                    }
                    merged += 1;
                    members += chunk.len();
                }
            }
        }
        assert!(
            merged > 20 && members > 200,
            "{merged} batches of {members} cases"
        );
    }
}
