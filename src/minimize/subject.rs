//! The case being shrunk, in memory: its single-node model, the operator version the node
//! resolves to, one data set's inputs, and what our reference makes of them. A subject writes
//! itself as a node-test directory whose expected outputs are the reference's.

use crate::generate::variant::{self, Variant};
use onnx_idx_check::eval::EvalError;
use onnx_idx_check::ops::{
    OpDef, OpVersion, Resolution, Role, SpecError, DEFAULT_MAX_OUTPUT_BYTES,
};
use onnx_idx_check::pb::{self, ModelProto};
use onnx_idx_check::tensor::Tensor;
use prost::Message;
use std::path::Path;

/// One data set of a single-node case.
#[derive(Clone, Debug)]
pub(crate) struct Subject {
    /// The case's name (the directory name the runtime is shown).
    pub name: String,
    /// The model as read; its graph's declared shapes are rewritten on every write.
    pub model: ModelProto,
    /// The node's operator.
    pub def: &'static OpDef,
    /// The version the model's opset resolves it to.
    pub version: &'static OpVersion,
    /// The opset the node's domain is imported at.
    pub opset: i64,
    /// The graph's inputs, in order, with the tensors of the data set.
    pub inputs: Vec<(String, Tensor)>,
    /// The role of each graph input in the node (`None` for one the node does not take).
    pub roles: Vec<Option<Role>>,
    /// How the case is written: its inputs after the first as graph inputs, initializers or
    /// Constant nodes, its shapes static or symbolic. Shrinking changes `inputs`; the variant
    /// applies whenever the subject is written or rendered.
    pub variant: Variant,
}

/// What our reference makes of a subject.
#[derive(Clone, Debug)]
pub(crate) enum Reference {
    /// The outputs the spec defines.
    Outputs(Vec<Tensor>),
    /// The spec (or one of this project's decisions, [`SpecError::decision`]) requires an
    /// error: why.
    Error(SpecError),
}

impl Reference {
    /// Whether the spec requires an error.
    pub(crate) fn is_error(&self) -> bool {
        matches!(self, Reference::Error(_))
    }

    /// The decision of this project that requires the error, `None` where the spec does (or
    /// the spec defines outputs).
    pub(crate) fn decision(&self) -> Option<onnx_idx_check::ops::Decision> {
        match self {
            Reference::Error(e) => e.decision(),
            Reference::Outputs(_) => None,
        }
    }
}

/// Why a case cannot be shrunk.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SubjectError {
    /// A file could not be read.
    #[error("{0}")]
    Load(#[from] onnx_idx_check::load::LoadError),
    /// The model is not one node of an indexing operator on the graph's inputs.
    #[error("{case}: {why}; minimize handles models of one indexing node whose inputs are the graph's inputs")]
    Shape {
        /// The case directory.
        case: String,
        /// What is wrong.
        why: String,
    },
}

impl Subject {
    /// Reads `case_dir`'s model and the inputs of its data set `data_set`.
    pub(crate) fn load(
        case_dir: &Path,
        name: &str,
        data_set: &str,
        max_bytes: usize,
    ) -> Result<Subject, SubjectError> {
        let limit = onnx_idx_check::load::file_limit(max_bytes);
        let model =
            onnx_idx_check::load::load_model(&case_dir.join("model.onnx"), "model.onnx", limit)?;
        let shape_err = |why: String| SubjectError::Shape {
            case: case_dir.display().to_string(),
            why,
        };
        let graph = model
            .graph
            .as_ref()
            .ok_or_else(|| shape_err("model.onnx has no graph".into()))?;
        let [node] = &graph.node[..] else {
            return Err(shape_err(format!(
                "the graph has {} nodes",
                graph.node.len()
            )));
        };
        if !graph.initializer.is_empty() {
            return Err(shape_err("the graph has initializers".into()));
        }
        let opsets = onnx_idx_check::eval::opsets(&model).map_err(|e| shape_err(e.to_string()))?;
        let domain = onnx_idx_check::ops::canonical_domain(&node.domain);
        let opset = *opsets.get(domain).ok_or_else(|| {
            shape_err(format!(
                "the model does not import the node's domain '{domain}'"
            ))
        })?;
        let (def, version) = match onnx_idx_check::ops::resolve(domain, &node.op_type, opset) {
            Resolution::Found(d, v) if !d.plumbing => (d, v),
            _ => {
                return Err(shape_err(format!(
                    "{} at opset {opset} is not an indexing operator onnx-idx-check implements",
                    node.op_type
                )))
            }
        };
        let mut inputs = Vec::with_capacity(graph.input.len());
        let mut roles = Vec::with_capacity(graph.input.len());
        for (k, vi) in graph.input.iter().enumerate() {
            let file = format!("input_{k}.pb");
            let path = case_dir.join(data_set).join(&file);
            let shown = format!("{data_set}/{file}");
            let (_, t) = onnx_idx_check::load::load_tensor_file(&path, &shown, max_bytes)?;
            inputs.push((vi.name.clone(), t));
            let role = node
                .input
                .iter()
                .position(|i| *i == vi.name)
                .and_then(|j| version.inputs.get(j))
                .map(|s| s.role);
            roles.push(role);
        }
        Ok(Subject {
            name: name.to_string(),
            model,
            def,
            version,
            opset,
            inputs,
            roles,
            variant: Variant::DEFAULT,
        })
    }

    /// A case of several nodes (a case in context: the operator under test inside a small
    /// graph) as it is, to be judged and reported, not shrunk: `def` at `version` is the node
    /// under test (its first node in the graph, when there are two), imported at `opset`; the
    /// inputs are the graph's, with their roles in that node.
    pub(crate) fn in_graph(
        case_dir: &Path,
        name: &str,
        (def, version, opset): (&'static OpDef, &'static OpVersion, i64),
        max_bytes: usize,
    ) -> Result<Subject, SubjectError> {
        let limit = onnx_idx_check::load::file_limit(max_bytes);
        let model =
            onnx_idx_check::load::load_model(&case_dir.join("model.onnx"), "model.onnx", limit)?;
        let mut s = Subject {
            name: name.to_string(),
            model,
            def,
            version,
            opset,
            inputs: Vec::new(),
            roles: Vec::new(),
            variant: Variant::DEFAULT,
        };
        let names: Vec<String> = s.model.graph.as_ref().map_or_else(Vec::new, |g| {
            onnx_idx_check::eval::data_inputs(g)
                .iter()
                .map(|v| v.name.clone())
                .collect()
        });
        for (k, input) in names.into_iter().enumerate() {
            let shown = format!("test_data_set_0/input_{k}.pb");
            let (_, t) =
                onnx_idx_check::load::load_tensor_file(&case_dir.join(&shown), &shown, max_bytes)?;
            let role = s
                .node()
                .and_then(|n| n.input.iter().position(|i| *i == input))
                .and_then(|j| version.inputs.get(j))
                .map(|spec| spec.role);
            s.inputs.push((input, t));
            s.roles.push(role);
        }
        Ok(s)
    }

    /// The node under test: the graph's first node of the subject's operator (the one node of
    /// a single-node case).
    pub(crate) fn node(&self) -> Option<&pb::NodeProto> {
        let g = self.model.graph.as_ref()?;
        g.node
            .iter()
            .find(|n| {
                n.op_type == self.def.op_type
                    && onnx_idx_check::ops::canonical_domain(&n.domain) == self.def.domain
            })
            .or_else(|| g.node.first())
    }

    /// The node types of a graph of its own (a case in context: several nodes, or
    /// initializers), in order (`Shape, Constant, Gather, ...`); `None` for a single node on
    /// the graph's inputs.
    pub(crate) fn graph_nodes(&self) -> Option<Vec<&str>> {
        let g = self.model.graph.as_ref()?;
        (g.node.len() > 1 || !g.initializer.is_empty())
            .then(|| g.node.iter().map(|n| n.op_type.as_str()).collect())
    }

    /// The index of the graph input with `role`.
    pub(crate) fn input_of(&self, role: Role) -> Option<usize> {
        self.roles.iter().position(|r| *r == Some(role))
    }

    /// The tensor of the graph input with `role`.
    pub(crate) fn tensor_of(&self, role: Role) -> Option<&Tensor> {
        self.input_of(role).map(|k| &self.inputs[k].1)
    }

    /// The node's INT attribute `name`, if set.
    pub(crate) fn int_attr(&self, name: &str) -> Option<i64> {
        self.node()?
            .attribute
            .iter()
            .find(|a| a.name == name)
            .map(|a| a.i())
    }

    /// Sets the node's INT attribute `name` (which must exist).
    pub(crate) fn set_int_attr(&mut self, name: &str, value: i64) -> bool {
        let Some(node) = self.model.graph.as_mut().and_then(|g| g.node.first_mut()) else {
            return false;
        };
        match node.attribute.iter_mut().find(|a| a.name == name) {
            Some(a) => {
                a.i = Some(value);
                true
            }
            None => false,
        }
    }

    /// The elements of every input: the size the minimizer shrinks.
    pub(crate) fn size(&self) -> usize {
        self.inputs.iter().map(|(_, t)| t.numel()).sum()
    }

    /// The inputs' shapes, `data [5, 4] indices [3]`.
    pub(crate) fn shapes(&self) -> String {
        self.inputs
            .iter()
            .map(|(n, t)| format!("{n} {}", onnx_idx_check::tensor::shape_text(t.shape())))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The model with the graph's declared input shapes set to the tensors' and its outputs'
    /// to `outputs` (unknown when `None`: the spec requires an error).
    pub(crate) fn model_for(&self, outputs: Option<&[Tensor]>) -> ModelProto {
        use pb::tensor_shape_proto::{dimension::Value, Dimension};
        let mut m = self.model.clone();
        let shape_of = |dims: &[usize]| pb::TensorShapeProto {
            dim: dims
                .iter()
                .map(|&d| Dimension {
                    value: Some(Value::DimValue(d as i64)),
                    ..Default::default()
                })
                .collect(),
        };
        let set = |vi: &mut pb::ValueInfoProto, dtype: Option<i32>, shape: Option<&[usize]>| {
            let tt = match vi
                .r#type
                .get_or_insert_with(Default::default)
                .value
                .get_or_insert(pb::type_proto::Value::TensorType(Default::default()))
            {
                pb::type_proto::Value::TensorType(tt) => tt,
                // Not a tensor: the plan refuses it; leave it for that message.
                _ => return,
            };
            if let Some(d) = dtype {
                tt.elem_type = d;
            }
            tt.shape = shape.map(shape_of);
        };
        if let Some(g) = m.graph.as_mut() {
            for (vi, (_, t)) in g.input.iter_mut().zip(&self.inputs) {
                set(vi, Some(t.dtype().onnx_id()), Some(t.shape()));
            }
            for (k, vi) in g.output.iter_mut().enumerate() {
                let t = outputs.and_then(|o| o.get(k));
                set(vi, t.map(|t| t.dtype().onnx_id()), t.map(Tensor::shape));
            }
            // Intermediate shapes of the old inputs would contradict the new ones.
            g.value_info.clear();
        }
        m
    }

    /// Our reference's answer; `Err` when it cannot give one (an unsupported feature, or a
    /// model it cannot plan for a reason other than the spec's).
    pub(crate) fn reference(&self) -> Result<Reference, String> {
        let model = self.model_for(None);
        let plan = match onnx_idx_check::eval::plan(&model) {
            Ok(p) => p,
            Err(onnx_idx_check::eval::PlanError::Invalid(e)) => {
                return Ok(Reference::Error(SpecError::Violation(e)))
            }
            Err(onnx_idx_check::eval::PlanError::Unsupported(e)) => return Err(e),
        };
        let inputs: Vec<Tensor> = self.inputs.iter().map(|(_, t)| t.clone()).collect();
        // A graph's own initializers (an embedding's weights, in a case in context).
        let ctx = onnx_idx_check::load::tensor::TensorContext {
            base_dir: Path::new("."),
            max_bytes: DEFAULT_MAX_OUTPUT_BYTES,
        };
        let initializers = plan
            .initializers()
            .iter()
            .map(|t| {
                Ok((
                    t.name.clone(),
                    onnx_idx_check::load::tensor::tensor_from_proto(t, &ctx)?,
                ))
            })
            .collect::<Result<Vec<_>, onnx_idx_check::load::tensor::TensorError>>()
            .map_err(|e| e.to_string())?;
        match plan.evaluate(
            &initializers,
            &inputs,
            Path::new("."),
            DEFAULT_MAX_OUTPUT_BYTES,
        ) {
            Ok(values) => Ok(Reference::Outputs(
                values.into_iter().map(|v| v.tensor).collect(),
            )),
            Err(EvalError::Kernel {
                error: SpecError::Unsupported(e),
                ..
            }) => Err(e.to_string()),
            Err(EvalError::Kernel { error, .. }) => Ok(Reference::Error(error)),
            Err(e) => Err(e.to_string()),
        }
    }

    /// [`Subject::model_for`] in the subject's variant: what [`Subject::write`] writes.
    pub(crate) fn variant_model(
        &self,
        outputs: Option<&[Tensor]>,
    ) -> Result<ModelProto, variant::VariantError> {
        let inputs: Vec<Tensor> = self.inputs.iter().map(|(_, t)| t.clone()).collect();
        variant::apply(&self.model_for(outputs), &inputs, self.variant)
    }

    /// Writes the subject as a node-test case in `dir` (created): `model.onnx` and
    /// `test_data_set_0/` with the inputs and, unless the spec requires an error, the
    /// reference's outputs; then rewrites it into the subject's variant.
    pub(crate) fn write(&self, dir: &Path, reference: &Reference) -> std::io::Result<()> {
        let ds = dir.join("test_data_set_0");
        std::fs::create_dir_all(&ds)?;
        let outputs = match reference {
            Reference::Outputs(o) => Some(&o[..]),
            Reference::Error(_) => None,
        };
        std::fs::write(
            dir.join("model.onnx"),
            self.model_for(outputs).encode_to_vec(),
        )?;
        for (k, (name, t)) in self.inputs.iter().enumerate() {
            std::fs::write(
                ds.join(format!("input_{k}.pb")),
                onnx_idx_check::load::save::encode_tensor(t, name),
            )?;
        }
        if let Some(outs) = outputs {
            for (k, t) in outs.iter().enumerate() {
                std::fs::write(
                    ds.join(format!("output_{k}.pb")),
                    onnx_idx_check::load::save::encode_tensor(t, &self.output_name(k)),
                )?;
            }
        }
        variant::rewrite_case(dir, self.variant).map_err(std::io::Error::other)
    }

    /// The name of graph output `k`.
    pub(crate) fn output_name(&self, k: usize) -> String {
        self.model
            .graph
            .as_ref()
            .and_then(|g| g.output.get(k))
            .map_or_else(|| format!("output_{k}"), |v| v.name.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use onnx_idx_check::verdict::Status;

    #[test]
    fn every_shrinking_step_of_a_variant_subject_is_written_in_that_variant() {
        // Steps change the subject's inputs; the variant applies when it is written, so every
        // candidate is a case our runner reads back to its reference: passed, or errored where
        // the spec requires an error.
        let tmp = tempfile::tempdir().unwrap();
        let def = crate::generate::select_ops(&["GatherND".into()]).unwrap()[0];
        let v = def.versions.iter().find(|v| v.since == 13).unwrap();
        let spec =
            crate::generate::cases::of_version(crate::generate::cases::Breadth::Quick, 0, def, v)
                .into_iter()
                .find(|s| s.name == "test_gather_nd_13_float_batch_dims_1")
                .unwrap();
        let r = crate::generate::render_case(&spec).unwrap().unwrap();
        let case = tmp.path().join("case");
        r.write_to(&case).unwrap();
        let mut s = Subject::load(&case, "case", "test_data_set_0", 1 << 20).unwrap();
        let mut judged = 0;
        for variant in Variant::ALL {
            s.variant = variant;
            for (k, step) in super::super::shrink::steps(&s, None).iter().enumerate() {
                let Some(c) = super::super::shrink::apply(&s, step) else {
                    continue;
                };
                assert_eq!(c.variant, variant);
                let Ok(reference) = c.reference() else {
                    continue;
                };
                let dir = tmp
                    .path()
                    .join(format!("{}-{k}", variant.id()))
                    .join("case");
                c.write(&dir, &reference).unwrap();
                let moved = variant.feed != crate::generate::variant::Feed::Graph;
                assert_eq!(
                    dir.join("test_data_set_0/input_1.pb").exists(),
                    !moved,
                    "{}",
                    variant.id()
                );
                let mut warnings = Vec::new();
                let case = onnx_idx_check::discover::Case {
                    name: "case".into(),
                    dir: dir.clone(),
                    rel: std::path::PathBuf::new(),
                    data_sets: onnx_idx_check::discover::data_sets(&dir, &mut warnings),
                };
                let result = onnx_idx_check::runner::run_case(&case, &Default::default());
                let want = if reference.is_error() {
                    Status::Errored
                } else {
                    Status::Passed
                };
                assert_eq!(
                    result.status,
                    want,
                    "{} step {k}: {:?}",
                    variant.id(),
                    result.reason
                );
                judged += 1;
            }
        }
        assert!(judged > 6 * 3, "{judged} candidates judged");
    }
}
