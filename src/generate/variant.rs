//! Variants of a case: the same single-node case with its inputs after the first (indices,
//! updates, axis, shape, write_indices, ...) fed to the node another way, and its shapes static or
//! symbolic. Runtimes take other code paths for constant indices (constant folding, checks done
//! only at compile time) and for unknown dims (kernels built for dynamic shapes) than for the
//! default form, a graph input of static shape, so a bug may show in one variant only.
//!
//! A variant changes how the model is written, never what it computes: the data set keeps the
//! first input (`input_0.pb`) and the expected outputs, and the values of the other inputs move
//! into the model.

use onnx_idx_check::eval::data_inputs;
use onnx_idx_check::load::LoadError;
use onnx_idx_check::pb::{self, ModelProto, TensorProto};
use onnx_idx_check::tensor::Tensor;
use prost::Message;
use std::path::Path;
use thiserror::Error;

/// How every input but the first reaches the node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Feed {
    /// As graph inputs, bound to the data set's files (the default form).
    Graph,
    /// As graph initializers holding the data set's values.
    Initializer,
    /// As the outputs of `Constant` nodes whose `value` attribute holds the data set's values.
    Constant,
}

/// Whether the graph declares its inputs' and outputs' dims.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Shapes {
    /// Every dim a `dim_value` (the default form).
    Static,
    /// Every dim of every graph input and output a distinct `dim_param`: `d{K}_{J}` for dim J of
    /// graph input K, `out{K}_{J}` for dim J of graph output K.
    Symbolic,
}

/// One way of writing a case: how its inputs after the first are fed, and its shapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Variant {
    /// How the inputs after the first reach the node.
    pub(crate) feed: Feed,
    /// Static or symbolic dims.
    pub(crate) shapes: Shapes,
}

impl Variant {
    /// The form every case is generated in: graph inputs, static shapes.
    pub(crate) const DEFAULT: Variant = Variant {
        feed: Feed::Graph,
        shapes: Shapes::Static,
    };

    /// Every variant, the default first.
    pub(crate) const ALL: [Variant; 6] = [
        Variant::DEFAULT,
        Variant {
            feed: Feed::Graph,
            shapes: Shapes::Symbolic,
        },
        Variant {
            feed: Feed::Initializer,
            shapes: Shapes::Static,
        },
        Variant {
            feed: Feed::Initializer,
            shapes: Shapes::Symbolic,
        },
        Variant {
            feed: Feed::Constant,
            shapes: Shapes::Static,
        },
        Variant {
            feed: Feed::Constant,
            shapes: Shapes::Symbolic,
        },
    ];

    /// The variant's short name: `input-static`, `initializer-symbolic`, `constant-static`, ...
    pub(crate) fn id(self) -> &'static str {
        match (self.feed, self.shapes) {
            (Feed::Graph, Shapes::Static) => "input-static",
            (Feed::Graph, Shapes::Symbolic) => "input-symbolic",
            (Feed::Initializer, Shapes::Static) => "initializer-static",
            (Feed::Initializer, Shapes::Symbolic) => "initializer-symbolic",
            (Feed::Constant, Shapes::Static) => "constant-static",
            (Feed::Constant, Shapes::Symbolic) => "constant-symbolic",
        }
    }

    /// The variant whose [`id`](Variant::id) is `id`.
    #[cfg(test)]
    pub(crate) fn from_id(id: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.id() == id)
    }

    /// The variant in words, for reports: "indices and other inputs as an initializer (symbolic
    /// shapes)".
    pub(crate) fn words(self) -> String {
        let feed = match self.feed {
            Feed::Graph => "indices and other inputs as graph inputs",
            Feed::Initializer => "indices and other inputs as an initializer",
            Feed::Constant => "indices and other inputs from Constant nodes",
        };
        let shapes = match self.shapes {
            Shapes::Static => "static shapes",
            Shapes::Symbolic => "symbolic shapes",
        };
        format!("{feed} ({shapes})")
    }
}

impl std::fmt::Display for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

impl serde::Serialize for Variant {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.id())
    }
}

/// Why a case could not be written in a variant.
#[derive(Debug, Error)]
pub(crate) enum VariantError {
    /// A file of the case could not be read.
    #[error("{0}")]
    Load(#[from] LoadError),
    /// The case is not one a variant applies to.
    #[error("{case}: {why}; variants apply to ONNX node-test cases with one data set")]
    NotApplicable {
        /// The case directory.
        case: String,
        /// What is wrong.
        why: String,
    },
    /// The model is not one a variant can be made of.
    #[error("the model {0}")]
    Model(String),
    /// A file could not be written or removed.
    #[error("{file}: {source}")]
    Io {
        /// The file.
        file: String,
        /// Why.
        source: std::io::Error,
    },
}

/// `model` written in variant `v`, `inputs` being the tensors of its graph inputs that data sets
/// provide ([`data_inputs`]), in order. Inputs after the first become initializers or `Constant`
/// nodes named as the inputs were, so the node is unchanged. Default is the model as it is.
pub(crate) fn apply(
    model: &ModelProto,
    inputs: &[Tensor],
    v: Variant,
) -> Result<ModelProto, VariantError> {
    let mut m = model.clone();
    let Some(g) = m.graph.as_mut() else {
        return Err(VariantError::Model("has no graph".into()));
    };
    let names: Vec<String> = data_inputs(g).iter().map(|i| i.name.clone()).collect();
    if names.len() != inputs.len() {
        return Err(VariantError::Model(format!(
            "has {} graph input(s) to feed, {} tensor(s) were given",
            names.len(),
            inputs.len()
        )));
    }
    let moved: Vec<(&String, &Tensor)> = names.iter().zip(inputs).skip(1).collect();
    match v.feed {
        Feed::Graph => {}
        _ if moved.is_empty() => {}
        Feed::Initializer => {
            g.input.retain(|i| !names[1..].contains(&i.name));
            g.initializer.extend(
                moved
                    .iter()
                    .map(|(n, t)| onnx_idx_check::load::save::tensor_to_proto(t, n)),
            );
            // IR 3 requires every initializer to be a graph input too, which makes it an
            // overridable default rather than a constant: IR 4 lifts that and reads every opset.
            m.ir_version = m.ir_version.max(4);
        }
        Feed::Constant => {
            // Constant has had its `value` attribute in ai.onnx since opset 1; a model of
            // another domain must import ai.onnx beside it.
            let imports_onnx = m.opset_import.iter().any(|o| {
                onnx_idx_check::ops::canonical_domain(&o.domain).is_empty() && o.version >= 1
            });
            if !imports_onnx {
                return Err(VariantError::Model(
                    "does not import ai.onnx, which Constant belongs to".into(),
                ));
            }
            let g = m.graph.as_mut().expect("checked above");
            g.input.retain(|i| !names[1..].contains(&i.name));
            let constants = moved.iter().map(|(n, t)| constant(n, t));
            g.node.splice(0..0, constants);
        }
    }
    if v.shapes == Shapes::Symbolic {
        let g = m.graph.as_mut().expect("checked above");
        // An index tuple's length decides the output's rank, and real models always know it:
        // a runtime refusing it unknown is no bug worth a finding.
        let tuples: Option<String> = g
            .node
            .iter()
            .find(|n| n.op_type.ends_with("ND"))
            .and_then(|n| n.input.get(1).cloned());
        for (k, vi) in g.input.iter_mut().enumerate() {
            let keep_last = tuples.as_deref() == Some(vi.name.as_str());
            symbolic(vi, &format!("d{k}"), keep_last);
        }
        for (k, vi) in g.output.iter_mut().enumerate() {
            symbolic(vi, &format!("out{k}"), false);
        }
    }
    Ok(m)
}

/// A `Constant` node whose output `name` holds `t`.
fn constant(name: &str, t: &Tensor) -> pb::NodeProto {
    use pb::attribute_proto::AttributeType;
    pb::NodeProto {
        output: vec![name.to_owned()],
        name: format!("{name}_constant"),
        op_type: "Constant".to_owned(),
        attribute: vec![pb::AttributeProto {
            name: "value".to_owned(),
            r#type: AttributeType::Tensor as i32,
            t: Some(onnx_idx_check::load::save::tensor_to_proto(t, name)),
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// Replaces every dim `vi` declares (but its last, with `keep_last`) with the `dim_param`
/// `{prefix}_{J}`; an unknown shape stays unknown.
fn symbolic(vi: &mut pb::ValueInfoProto, prefix: &str, keep_last: bool) {
    use pb::tensor_shape_proto::dimension::Value;
    let Some(pb::type_proto::Value::TensorType(tt)) =
        vi.r#type.as_mut().and_then(|t| t.value.as_mut())
    else {
        return;
    };
    let Some(shape) = tt.shape.as_mut() else {
        return;
    };
    let n = shape.dim.len() - usize::from(keep_last && !shape.dim.is_empty());
    for (j, d) in shape.dim.iter_mut().take(n).enumerate() {
        d.value = Some(Value::DimParam(format!("{prefix}_{j}")));
    }
}

/// Rewrites the node-test case in `dir` (`model.onnx` and its one data set `test_data_set_0`)
/// into variant `v`, in place. The runner binds `input_K.pb` to the K-th graph input that is not
/// an initializer ([`data_inputs`]); the inputs after the first move into the model with their
/// values, so their files (and an external-data file `input_K.bin` one names) are removed and
/// `input_0.pb` stays bound to the first. The expected outputs do not change. [`Variant::DEFAULT`]
/// leaves the case as it is.
pub(crate) fn rewrite_case(dir: &Path, v: Variant) -> Result<(), VariantError> {
    if v == Variant::DEFAULT {
        return Ok(());
    }
    let shown = dir.display().to_string();
    let not_applicable = |why: String| VariantError::NotApplicable {
        case: shown.clone(),
        why,
    };
    let model_path = dir.join("model.onnx");
    if !model_path.is_file() {
        return Err(not_applicable("it has no model.onnx".into()));
    }
    let mut warnings = Vec::new();
    let sets = onnx_idx_check::discover::data_sets(dir, &mut warnings);
    if sets.len() != 1 || sets[0].name != "test_data_set_0" {
        let names: Vec<&str> = sets.iter().map(|d| d.name.as_str()).collect();
        return Err(not_applicable(format!(
            "its data sets are [{}], not test_data_set_0 alone",
            names.join(", ")
        )));
    }
    let max = onnx_idx_check::runner::DEFAULT_MAX_TENSOR_BYTES;
    let model = onnx_idx_check::load::load_model(
        &model_path,
        "model.onnx",
        onnx_idx_check::load::file_limit(max),
    )?;
    let n = model.graph.as_ref().map_or(0, |g| data_inputs(g).len());
    let ds = &sets[0].dir;
    let mut inputs = Vec::with_capacity(n);
    let mut external = Vec::new();
    for k in 0..n {
        let file = format!("input_{k}.pb");
        let shown = format!("test_data_set_0/{file}");
        let loaded =
            onnx_idx_check::load::load_tensor_file_with(&ds.join(&file), &shown, max, false)?;
        inputs.push(loaded.tensor);
        if k > 0 && ds.join(format!("input_{k}.bin")).is_file() && names_bin(&ds.join(&file), k) {
            external.push(format!("input_{k}.bin"));
        }
    }
    let rewritten = apply(&model, &inputs, v)?;
    // A fresh name renamed over the model: a reader never sees half a model. Not synced to
    // disk as fsutil::write_atomic does: the case is scratch, rewritten once per case a hunt
    // tries, where a sync per case costs more than the run.
    let tmp = format!(".model.onnx.variant-{}.tmp", std::process::id());
    let io = |file: &str| {
        let file = file.to_owned();
        move |source| VariantError::Io { file, source }
    };
    std::fs::write(dir.join(&tmp), rewritten.encode_to_vec()).map_err(io(&tmp))?;
    if let Err(e) = std::fs::rename(dir.join(&tmp), &model_path) {
        let _ = std::fs::remove_file(dir.join(&tmp));
        return Err(io("model.onnx")(e));
    }
    if v.feed != Feed::Graph {
        let gone = (1..n).map(|k| format!("input_{k}.pb")).chain(external);
        for file in gone {
            std::fs::remove_file(ds.join(&file)).map_err(|source| VariantError::Io {
                file: format!("test_data_set_0/{file}"),
                source,
            })?;
        }
    }
    Ok(())
}

/// Whether the tensor file `pb` keeps its data in `input_{k}.bin` beside it (as `generate`
/// writes a large value input): that file is the input's alone and goes with it.
fn names_bin(pb: &Path, k: usize) -> bool {
    let Ok(bytes) = std::fs::read(pb) else {
        return false;
    };
    let Ok(p) = TensorProto::decode(bytes.as_slice()) else {
        return false;
    };
    p.external_data
        .iter()
        .any(|e| e.key == "location" && e.value == format!("input_{k}.bin"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::model::{model, NodeModel};
    use onnx_idx_check::pb::tensor_shape_proto::dimension::Value as Dim;
    use onnx_idx_check::verdict::Status;
    use std::path::PathBuf;

    /// The tensor file `t` named `name` at `dir/rel`.
    fn write_tensor(dir: &Path, rel: &str, t: &Tensor, name: &str) {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, onnx_idx_check::load::save::encode_tensor(t, name)).unwrap();
    }

    /// Gather-13 of data `[1.0, 2.0, 3.0]` at indices `[2, 0]`, axis 0: `[3.0, 1.0]` by the
    /// spec's definition (`output[i] = data[indices[i]]`).
    fn gather_case(dir: &Path) {
        let data = Tensor::from_vec(vec![3], vec![1.0f32, 2.0, 3.0]).unwrap();
        let indices = Tensor::from_vec(vec![2], vec![2i64, 0]).unwrap();
        let out = Tensor::from_vec(vec![2], vec![3.0f32, 1.0]).unwrap();
        let m = model(&NodeModel {
            name: "gather",
            domain: "",
            op_type: "Gather",
            opset: 13,
            attrs: &[],
            inputs: &[("data", &data), ("indices", &indices)],
            outputs: &[("output", onnx_idx_check::DType::Float, Some(vec![2]))],
        })
        .unwrap();
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("model.onnx"), m.encode_to_vec()).unwrap();
        write_tensor(dir, "test_data_set_0/input_0.pb", &data, "data");
        write_tensor(dir, "test_data_set_0/input_1.pb", &indices, "indices");
        write_tensor(dir, "test_data_set_0/output_0.pb", &out, "output");
    }

    /// The hand-built Gather case rewritten into the variant `id`: its directory (in the temporary
    /// directory returned with it) and its model.
    fn rewritten(id: &str) -> (tempfile::TempDir, PathBuf, ModelProto) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("gather");
        gather_case(&dir);
        rewrite_case(&dir, Variant::from_id(id).unwrap()).unwrap();
        let m = read_model(&dir);
        (tmp, dir, m)
    }

    /// Asserts that our runner passes the case in `dir`.
    fn passes(dir: &Path) {
        let r = run(dir);
        assert_eq!(r.status, Status::Passed, "{:?}", r.reason);
    }

    fn read_model(dir: &Path) -> ModelProto {
        ModelProto::decode(std::fs::read(dir.join("model.onnx")).unwrap().as_slice()).unwrap()
    }

    fn dims(vi: &pb::ValueInfoProto) -> Vec<Dim> {
        match vi.r#type.as_ref().and_then(|t| t.value.as_ref()) {
            Some(pb::type_proto::Value::TensorType(tt)) => tt
                .shape
                .iter()
                .flat_map(|s| &s.dim)
                .map(|d| d.value.clone().unwrap())
                .collect(),
            _ => panic!("not a tensor: {vi:?}"),
        }
    }

    /// The runner's verdict on the case in `dir`, as `run` gives it.
    fn run(dir: &Path) -> onnx_idx_check::verdict::CaseResult {
        run_with(dir, onnx_idx_check::runner::RunOptions::default())
    }

    /// The runner's verdict on the case in `dir` under `opts`.
    fn run_with(
        dir: &Path,
        opts: onnx_idx_check::runner::RunOptions,
    ) -> onnx_idx_check::verdict::CaseResult {
        let mut warnings = Vec::new();
        let case = onnx_idx_check::discover::Case {
            name: dir.file_name().unwrap().to_string_lossy().into_owned(),
            dir: dir.to_path_buf(),
            rel: PathBuf::new(),
            data_sets: onnx_idx_check::discover::data_sets(dir, &mut warnings),
        };
        onnx_idx_check::runner::run_case(&case, &opts)
    }

    fn files(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir.join("test_data_set_0"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn ids_and_words_name_each_variant_once() {
        let ids: Vec<&str> = Variant::ALL.iter().map(|v| v.id()).collect();
        assert_eq!(
            ids,
            [
                "input-static",
                "input-symbolic",
                "initializer-static",
                "initializer-symbolic",
                "constant-static",
                "constant-symbolic"
            ]
        );
        assert_eq!(Variant::ALL[0], Variant::DEFAULT);
        for v in Variant::ALL {
            assert_eq!(Variant::from_id(v.id()), Some(v));
            assert_eq!(
                serde_json::to_string(&v).unwrap(),
                format!("\"{}\"", v.id())
            );
        }
        assert_eq!(
            Variant::ALL[3].words(),
            "indices and other inputs as an initializer (symbolic shapes)"
        );
        assert_eq!(Variant::from_id("constant"), None);
    }

    #[test]
    fn the_default_variant_leaves_the_case_as_it_is() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("gather");
        gather_case(&dir);
        let before = std::fs::read(dir.join("model.onnx")).unwrap();
        rewrite_case(&dir, Variant::DEFAULT).unwrap();
        assert_eq!(std::fs::read(dir.join("model.onnx")).unwrap(), before);
        assert_eq!(files(&dir), ["input_0.pb", "input_1.pb", "output_0.pb"]);
    }

    #[test]
    fn initializer_static_moves_the_indices_into_the_model() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("gather");
        gather_case(&dir);
        let output = std::fs::read(dir.join("test_data_set_0/output_0.pb")).unwrap();
        rewrite_case(&dir, Variant::from_id("initializer-static").unwrap()).unwrap();
        let m = read_model(&dir);
        let g = m.graph.as_ref().unwrap();
        let inputs: Vec<&str> = g.input.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(inputs, ["data"]);
        assert_eq!(g.initializer.len(), 1);
        let init = &g.initializer[0];
        assert_eq!(init.name, "indices");
        assert_eq!(init.dims, [2]);
        assert_eq!(init.data_type, 7, "int64");
        assert_eq!(
            &init.raw_data[..],
            [2u64.to_le_bytes(), 0u64.to_le_bytes()].concat()
        );
        assert_eq!(dims(&g.input[0]), [Dim::DimValue(3)]);
        assert_eq!(g.node.len(), 1);
        assert_eq!(g.node[0].input, ["data", "indices"]);
        // The data set holds the first input only, still input_0.pb; the output is untouched.
        assert_eq!(files(&dir), ["input_0.pb", "output_0.pb"]);
        assert_eq!(
            std::fs::read(dir.join("test_data_set_0/output_0.pb")).unwrap(),
            output
        );
        passes(&dir);
    }

    #[test]
    fn constant_symbolic_feeds_the_indices_from_a_constant_node_and_names_every_dim() {
        let (_tmp, dir, m) = rewritten("constant-symbolic");
        let g = m.graph.as_ref().unwrap();
        assert_eq!(g.input.len(), 1);
        assert!(g.initializer.is_empty());
        let ops: Vec<&str> = g.node.iter().map(|n| n.op_type.as_str()).collect();
        assert_eq!(ops, ["Constant", "Gather"]);
        assert_eq!(g.node[0].output, ["indices"]);
        let value = &g.node[0].attribute[0];
        assert_eq!(value.name, "value");
        assert_eq!(value.t.as_ref().unwrap().dims, [2]);
        assert_eq!(dims(&g.input[0]), [Dim::DimParam("d0_0".into())]);
        assert_eq!(dims(&g.output[0]), [Dim::DimParam("out0_0".into())]);
        assert_eq!(files(&dir), ["input_0.pb", "output_0.pb"]);
        passes(&dir);
    }

    #[test]
    fn input_symbolic_keeps_every_input_and_names_their_dims() {
        let (_tmp, dir, m) = rewritten("input-symbolic");
        let g = m.graph.as_ref().unwrap();
        assert_eq!(dims(&g.input[0]), [Dim::DimParam("d0_0".into())]);
        assert_eq!(dims(&g.input[1]), [Dim::DimParam("d1_0".into())]);
        assert_eq!(files(&dir), ["input_0.pb", "input_1.pb", "output_0.pb"]);
        passes(&dir);
    }

    #[test]
    fn an_ir_3_model_gets_ir_4_for_initializers_and_a_constant_needs_ai_onnx() {
        let data = Tensor::from_vec(vec![3], vec![1.0f32, 2.0, 3.0]).unwrap();
        let indices = Tensor::from_vec(vec![1], vec![1i64]).unwrap();
        let node = |domain: &str, opset: i64| {
            model(&NodeModel {
                name: "g",
                domain,
                op_type: "Gather",
                opset,
                attrs: &[],
                inputs: &[("data", &data), ("indices", &indices)],
                outputs: &[("output", onnx_idx_check::DType::Float, None)],
            })
            .unwrap()
        };
        let tensors = [data.clone(), indices.clone()];
        let m = node("", 1);
        assert_eq!(m.ir_version, 3);
        let init = Variant::from_id("initializer-static").unwrap();
        assert_eq!(apply(&m, &tensors, init).unwrap().ir_version, 4);
        let constant = Variant::from_id("constant-static").unwrap();
        assert_eq!(apply(&m, &tensors, constant).unwrap().ir_version, 3);
        // A model of another domain that does not import ai.onnx beside it.
        let mut m = node("org.openvinotoolkit", 8);
        m.opset_import.retain(|o| !o.domain.is_empty());
        let e = apply(&m, &tensors, constant).unwrap_err();
        assert!(e.to_string().contains("does not import ai.onnx"), "{e}");
        let e = apply(&m, &tensors[..1], init).unwrap_err();
        assert!(e.to_string().contains("1 tensor(s)"), "{e}");
    }

    #[test]
    fn a_case_with_two_data_sets_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("gather");
        gather_case(&dir);
        std::fs::create_dir(dir.join("test_data_set_1")).unwrap();
        let e = rewrite_case(&dir, Variant::ALL[4]).unwrap_err();
        assert!(
            e.to_string().contains("test_data_set_0, test_data_set_1"),
            "{e}"
        );
        assert_eq!(files(&dir), ["input_0.pb", "input_1.pb", "output_0.pb"]);
    }

    /// Writes a rendered case's files under `dir`.
    fn write_rendered(dir: &Path, r: &crate::generate::Rendered) {
        r.write_to(dir).unwrap();
    }

    /// The quick profile's cases of `ops` (every generated operator when empty), with whether
    /// the spec requires an error for each.
    fn quick_cases(ops: &[&str]) -> Vec<(crate::generate::Rendered, bool)> {
        use crate::generate::cases;
        let defs: Vec<_> = cases::generated_ops()
            .into_iter()
            .filter(|d| ops.is_empty() || ops.contains(&crate::generate::op_name(d).as_str()))
            .collect();
        cases::versions(&defs)
            .into_iter()
            .flat_map(|(def, v)| cases::of_version(cases::Breadth::Quick, 0, def, v))
            .filter_map(|spec| {
                let r = crate::generate::render_case(&spec).unwrap()?;
                Some((r, spec.violation))
            })
            .collect()
    }

    #[test]
    fn our_runner_gives_every_variant_of_the_quick_suite_the_verdict_of_its_default_form() {
        // The expected outputs were computed on the default form; a variant that changed what
        // the node computes, or that the runner bound to the wrong files, would fail here. A
        // case the spec requires an error for stays errored. Every fourth case of every
        // operator's quick suite: a spread of traits, dtypes and domains in little time.
        let tmp = tempfile::tempdir().unwrap();
        let (mut runs, mut moved, mut errored) = (0, 0, 0);
        let mut wrong = Vec::new();
        for (r, violation) in quick_cases(&[]).into_iter().step_by(4) {
            errored += usize::from(violation);
            let want = if violation {
                Status::Errored
            } else {
                Status::Passed
            };
            for v in Variant::ALL {
                let dir = tmp.path().join(v.id()).join(&r.name);
                write_rendered(&dir, &r);
                let before = files(&dir);
                rewrite_case(&dir, v).unwrap();
                let after = files(&dir);
                if after.len() < before.len() {
                    moved += 1;
                }
                // Only input files go, and never input_0.pb.
                assert!(after.iter().all(|f| before.contains(f)), "{}", r.name);
                assert!(after.contains(&"input_0.pb".to_owned()), "{}", r.name);
                if v.feed != Feed::Graph {
                    assert!(
                        !after.iter().any(|f| f.starts_with("input_1")),
                        "{}",
                        r.name
                    );
                }
                let result = run(&dir);
                runs += 1;
                if result.status != want {
                    wrong.push(format!(
                        "{} {}: {:?} ({})",
                        r.name,
                        v.id(),
                        result.status,
                        result.reason.unwrap_or_default()
                    ));
                }
                std::fs::remove_dir_all(&dir).unwrap();
            }
        }
        assert!(
            wrong.is_empty(),
            "{} of {runs}:\n{}",
            wrong.len(),
            wrong.join("\n")
        );
        assert!(runs > 6 * 500, "{runs} runs");
        assert!(moved > 4 * 500, "{moved} cases lost an input file");
        assert!(
            errored > 30,
            "{errored} cases the spec requires an error for"
        );
    }

    /// The bundled runtime `name`, or `None` with the skip said (a failure when
    /// `ONNX_IDX_CHECK_REQUIRE_RUNTIMES` is set) when `ONNX_IDX_CHECK_PYTHON` is not set or the
    /// runtime does not start.
    fn bundled(name: &str, test: &str) -> Option<std::sync::Arc<onnx_idx_check::runtime::Runtime>> {
        use onnx_idx_check::runtime::{Runtime, RuntimeSpec};
        let required = std::env::var_os("ONNX_IDX_CHECK_REQUIRE_RUNTIMES").is_some();
        if std::env::var_os("ONNX_IDX_CHECK_PYTHON").is_none() {
            assert!(!required, "{test}: ONNX_IDX_CHECK_PYTHON is not set");
            println!("{test}: SKIPPED: ONNX_IDX_CHECK_PYTHON is not set");
            return None;
        }
        let spec = RuntimeSpec::bundled(name).unwrap();
        match Runtime::start(&spec, std::time::Duration::from_secs(60)) {
            Ok(r) => Some(std::sync::Arc::new(r)),
            Err(e) => {
                assert!(!required, "{test}: {name} does not start: {e}");
                println!("{test}: SKIPPED: {name} does not start: {e}");
                None
            }
        }
    }

    /// The verdict `runtime` gets on the case in `dir`.
    fn run_on(
        dir: &Path,
        runtime: &std::sync::Arc<onnx_idx_check::runtime::Runtime>,
    ) -> onnx_idx_check::verdict::CaseResult {
        let opts = onnx_idx_check::runner::RunOptions {
            runtime: Some(runtime.clone()),
            // The runtime's answers have their own limit, as under `run`.
            timeout: None,
            ..Default::default()
        };
        run_with(dir, opts)
    }

    #[test]
    #[ignore = "needs the pinned runtimes (scripts/requirements-*.txt) for $ONNX_IDX_CHECK_PYTHON; run with --include-ignored"]
    fn onnxruntime_and_the_onnx_reference_agree_with_us_on_every_variant() {
        // Valid float cases of Gather-13, GatherND-13 and ScatterND-18, where neither runtime
        // has a known bug: a variant they fail would be one the rewrite broke. Left out: max
        // and min reductions meeting a NaN, where onnxruntime lets the update win in every
        // form (docs/semantics.md, section 3).
        let cases: Vec<_> = quick_cases(&["Gather", "GatherND", "ScatterND"])
            .into_iter()
            .filter(|(r, violation)| {
                !violation
                    && !r.name.ends_with("_nan")
                    && ["_13_float_", "_18_float_"]
                        .iter()
                        .any(|v| r.name.contains(v))
            })
            .collect();
        assert!(cases.len() >= 50, "{} cases", cases.len());
        let test = "onnxruntime_and_the_onnx_reference_agree_with_us_on_every_variant";
        for name in ["onnxruntime", "onnx-reference"] {
            let Some(rt) = bundled(name, test) else {
                continue;
            };
            let tmp = tempfile::tempdir().unwrap();
            let mut wrong = Vec::new();
            for (r, _) in &cases {
                for v in Variant::ALL {
                    let dir = tmp.path().join(v.id()).join(&r.name);
                    write_rendered(&dir, r);
                    rewrite_case(&dir, v).unwrap();
                    let result = run_on(&dir, &rt);
                    if result.status != Status::Passed {
                        wrong.push(format!(
                            "{} {}: {:?} ({})",
                            r.name,
                            v.id(),
                            result.status,
                            result.reason.unwrap_or_default()
                        ));
                    }
                }
            }
            rt.finish();
            println!(
                "{name}: {} cases x {} variants, {} not passed",
                cases.len(),
                Variant::ALL.len(),
                wrong.len()
            );
            assert!(wrong.is_empty(), "{name}:\n{}", wrong.join("\n"));
        }
    }

    #[test]
    #[ignore = "needs the pinned runtimes (scripts/requirements-*.txt) for $ONNX_IDX_CHECK_PYTHON; run with --include-ignored"]
    fn openvino_gathers_constant_empty_indices_into_a_scalar_and_crashes_on_static_ones() {
        // Gather-13 of data [1.0, 2.0, 3.0] at empty indices of shape (0,) or (2, 0): by the
        // spec the output has the indices' shape, so it is empty. OpenVINO 2026.4.1 returns a
        // rank-0 tensor holding data[0] when the indices are constant, and the right output
        // when they are a graph input with symbolic shapes (hunt-verification 2026-11-27,
        // section 4).
        let Some(rt) = bundled("openvino", "openvino_gathers_constant_empty_indices") else {
            return;
        };
        let tmp = tempfile::tempdir().unwrap();
        let data = Tensor::from_vec(vec![3], vec![1.0f32, 2.0, 3.0]).unwrap();
        let mut seen = Vec::new();
        for shape in [vec![0], vec![2, 0]] {
            let indices = Tensor::from_vec(shape.clone(), Vec::<i64>::new()).unwrap();
            let out = Tensor::from_vec(shape.clone(), Vec::<f32>::new()).unwrap();
            for v in Variant::ALL {
                let dir = tmp
                    .path()
                    .join(format!("gather_empty_{}_{}", shape.len(), v.id()));
                let m = model(&NodeModel {
                    name: "gather_empty",
                    domain: "",
                    op_type: "Gather",
                    opset: 13,
                    attrs: &[],
                    inputs: &[("data", &data), ("indices", &indices)],
                    outputs: &[("output", onnx_idx_check::DType::Float, Some(shape.clone()))],
                })
                .unwrap();
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(dir.join("model.onnx"), m.encode_to_vec()).unwrap();
                write_tensor(&dir, "test_data_set_0/input_0.pb", &data, "data");
                write_tensor(&dir, "test_data_set_0/input_1.pb", &indices, "indices");
                write_tensor(&dir, "test_data_set_0/output_0.pb", &out, "output");
                rewrite_case(&dir, v).unwrap();
                let result = run_on(&dir, &rt);
                let got = result.data_sets[0].outputs.first();
                println!(
                    "openvino, indices {shape:?}, {}: {:?}, output shape {:?} ({})",
                    v.id(),
                    result.status,
                    got.map(|o| o.actual_shape.clone()),
                    result.reason.clone().unwrap_or_default()
                );
                seen.push((
                    shape.clone(),
                    v,
                    result.status,
                    got.map(|o| o.actual_shape.clone()),
                    result.reason.clone().unwrap_or_default(),
                ));
            }
        }
        rt.finish();
        // At the pinned version: with static shapes and the indices a graph input or an
        // initializer, the zero-size Gather crashes (SIGFPE, hunt-verification V3); with
        // symbolic shapes it is right; with the indices from a Constant node it is a scalar
        // in either shape form.
        for (shape, v, status, got, reason) in seen {
            let at = format!("indices {shape:?}, {}", v.id());
            match (v.feed, v.shapes) {
                (Feed::Constant, _) => {
                    assert_eq!(status, Status::Failed, "{at}");
                    assert_eq!(got, Some(vec![]), "a rank-0 output: {at}");
                }
                (_, Shapes::Symbolic) => assert_eq!(status, Status::Passed, "{at}: {reason}"),
                (_, Shapes::Static) => {
                    assert_eq!(status, Status::Errored, "{at}");
                    assert!(reason.contains("SIGFPE"), "{at}: {reason}");
                }
            }
        }
    }
}
