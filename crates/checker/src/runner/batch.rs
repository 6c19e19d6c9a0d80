//! Many cases in one model: a runtime that pays a load and a compile per model (TVM, IREE and
//! OpenVINO most of all) spends most of a run on them, not on running cases. Cases of one IR
//! version and opset imports are put side by side in one model, each its own subgraph with its
//! names prefixed (`m3_indices`), so that one request runs them all; each case's outputs are
//! then judged on their own.
//!
//! What a shared model shows only ever stands for a case that passes in it: a case that
//! disagrees there, or that the runtime did not answer, is judged again alone. `run` does so
//! through [`RunOptions::batch`](super::RunOptions::batch), `hunt` through its `--batch`.

use crate::pb::{self, ModelProto, TensorProto};
use prost::Message;
use std::path::{Path, PathBuf};

/// Cases in one model at most: enough that the compile is paid once for many, few enough that a
/// batch the runtime refuses is split in a few steps.
pub const SIZE: usize = 16;

/// The largest case (its files' bytes) put in a batch: large cases are where sizes and threads
/// matter, and they run alone.
const MAX_CASE_BYTES: u64 = 256 * 1024;

/// What the cases of one model must share: the IR version and the opset imports.
pub type Key = (i64, Vec<(String, i64)>);

/// A case ready to be batched: its directory (in the variant the runtime is shown) and model.
pub struct Ready {
    /// The case directory, `model.onnx` and `test_data_set_0`.
    pub dir: PathBuf,
    model: ModelProto,
}

impl Ready {
    /// The node types of its graph (with their domains) and the element types its inputs
    /// declare: cases alike in these tend to be run, or refused, alike by a runtime.
    pub fn kind(&self) -> Vec<String> {
        let Some(g) = self.model.graph.as_ref() else {
            return Vec::new();
        };
        let mut kind: Vec<String> = g
            .node
            .iter()
            .map(|n| format!("{}:{}", n.domain, n.op_type))
            .chain(g.input.iter().map(
                |vi| match vi.r#type.as_ref().and_then(|t| t.value.as_ref()) {
                    Some(pb::type_proto::Value::TensorType(tt)) => {
                        format!("input:{}", tt.elem_type)
                    }
                    _ => "input:?".to_string(),
                },
            ))
            .collect();
        kind.sort();
        kind.dedup();
        kind
    }
}

/// The case in `dir` if it can share a model: one data set of `input_K.pb` and `output_K.pb`
/// files only (no external data), small, and a graph without subgraphs; with its batch key.
pub fn ready(dir: &Path) -> Option<(Key, Ready)> {
    let mut bytes = 0;
    for entry in std::fs::read_dir(dir).ok()? {
        let entry = entry.ok()?;
        // A link may lead outside the case directory: such a case is read alone, by the loader
        // that checks where its files are.
        if entry.file_type().ok()?.is_symlink() {
            return None;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        match name.as_str() {
            "model.onnx" => bytes += entry.metadata().ok()?.len(),
            "test_data_set_0" => {
                for file in std::fs::read_dir(entry.path()).ok()? {
                    let file = file.ok()?;
                    if !file.file_type().ok()?.is_file() {
                        return None;
                    }
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
pub fn merge(members: &[&Ready], out: &Path) -> std::io::Result<Vec<Vec<String>>> {
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
        let fed = crate::eval::data_inputs(&g).len();
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
