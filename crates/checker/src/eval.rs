//! Evaluation: resolve every node of a model against the registry, then run the graph in order
//! (decision D15: initializers and Constant feed inputs, Identity passes through).

use crate::load::attrs::attrs_of;
use crate::ops::{self, Evaluated, Invocation, OpDef, OpVersion, Resolution, SpecError};
use crate::pb::{type_proto, GraphProto, ModelProto, NodeProto, ValueInfoProto};
use crate::tensor::Tensor;
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use thiserror::Error;

/// Why a model cannot be evaluated at all.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum PlanError {
    /// The model is invalid (errored).
    #[error("{0}")]
    Invalid(String),
    /// The model uses something the tool does not implement (skipped).
    #[error("{0}")]
    Unsupported(String),
}

/// Why evaluating a data set failed.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum EvalError {
    /// A kernel refused or failed.
    #[error("node {node}: {error}")]
    Kernel {
        /// `'name' (Op-since)`.
        node: String,
        /// The failing step's position in the plan.
        step: usize,
        /// The kernel's error.
        error: SpecError,
    },
    /// The graph's wiring is broken.
    #[error("{0}")]
    Graph(String),
    /// The case's time limit ran out between two nodes.
    #[error(transparent)]
    TimedOut(#[from] crate::deadline::TimedOut),
}

/// One resolved node.
#[derive(Debug)]
struct Step {
    node: usize,
    def: &'static OpDef,
    version: &'static OpVersion,
}

/// A model whose nodes all resolved to implemented kernels.
#[derive(Debug)]
pub struct Plan<'m> {
    graph: &'m GraphProto,
    steps: Vec<Step>,
    /// The graph inputs that data sets must provide (those that are not initializers), in order.
    pub inputs: Vec<&'m ValueInfoProto>,
    /// The graph outputs, in order.
    pub outputs: Vec<&'m ValueInfoProto>,
}

/// Name -> (value, produced by arithmetic).
type Store<'s> = HashMap<&'s str, (Cow<'s, Tensor>, bool)>;

/// A node of a plan with the inputs it received in one evaluation.
#[derive(Debug)]
pub struct Trace<'m> {
    /// The node.
    pub node: &'m NodeProto,
    /// Its operator's domain (`""` for ONNX).
    pub domain: &'static str,
    /// The resolved version.
    pub since: i64,
    /// Its inputs.
    pub inputs: Vec<Option<Tensor>>,
}

impl Trace<'_> {
    /// The node and inputs as a diagnosis subject.
    pub fn subject(&self) -> crate::diagnose::Subject<'_> {
        crate::diagnose::Subject {
            op_type: &self.node.op_type,
            // Diagnosis reads integers and strings only: no tensor value is decoded.
            attrs: attrs_of(self.node, Path::new("."), 0),
            domain: self.domain,
            since: self.since,
            inputs: self.inputs.iter().map(Option::as_ref).collect(),
        }
    }
}

pub(crate) use crate::ops::Value;

/// The model's opset imports, with `ai.onnx` folded into `""`.
pub fn opsets(model: &ModelProto) -> Result<BTreeMap<String, i64>, PlanError> {
    let mut map = BTreeMap::new();
    for o in &model.opset_import {
        let domain = ops::canonical_domain(&o.domain).to_string();
        if let Some(prev) = map.insert(domain.clone(), o.version) {
            if prev != o.version {
                return Err(PlanError::Invalid(format!(
                    "opset_import lists domain '{}' twice (versions {prev} and {})",
                    display_domain(&domain),
                    o.version
                )));
            }
        }
    }
    Ok(map)
}

/// `ai.onnx` for the default domain, else the domain itself.
pub fn display_domain(domain: &str) -> &str {
    if domain.is_empty() {
        "ai.onnx"
    } else {
        domain
    }
}

/// The distinct operators of a model in graph order, domain-qualified outside the default domain.
pub fn op_names(model: &ModelProto) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for n in model.graph.iter().flat_map(|g| &g.node) {
        let d = ops::canonical_domain(&n.domain);
        let name = if d.is_empty() {
            n.op_type.clone()
        } else {
            format!("{d}.{}", n.op_type)
        };
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// `'name' (Gather-13)` or `#3 (Gather-13)` for an unnamed node.
fn node_label(node: &NodeProto, index: usize, op: &str) -> String {
    if node.name.is_empty() {
        format!("#{index} ({op})")
    } else {
        format!("'{}' ({op})", node.name)
    }
}

/// Resolves every node (D1) and checks that the graph's inputs and outputs are tensors.
pub fn plan(model: &ModelProto) -> Result<Plan<'_>, PlanError> {
    let graph = model
        .graph
        .as_ref()
        .ok_or_else(|| PlanError::Invalid("model.onnx has no graph".into()))?;
    let opsets = opsets(model)?;
    check_ssa(graph)?;
    let mut steps = Vec::with_capacity(graph.node.len());
    for (i, node) in graph.node.iter().enumerate() {
        if node.op_type.is_empty() {
            return Err(PlanError::Invalid(format!("node #{i} has no op_type")));
        }
        let domain = ops::canonical_domain(&node.domain);
        let Some(&opset) = opsets.get(domain) else {
            return Err(PlanError::Invalid(format!(
                "node {} is in domain '{}', which the model does not import (opset_import)",
                node_label(node, i, &node.op_type),
                display_domain(domain)
            )));
        };
        match ops::resolve(domain, &node.op_type, opset) {
            Resolution::Found(def, version) => steps.push(Step {
                node: i,
                def,
                version,
            }),
            Resolution::TooOld(def) => {
                return Err(PlanError::Invalid(format!(
                    "node {}: {} does not exist at {} opset {opset} (its first version is {})",
                    node_label(node, i, &node.op_type),
                    node.op_type,
                    display_domain(domain),
                    def.versions.first().map_or(0, |v| v.since)
                )))
            }
            Resolution::Unknown => {
                let what = if ops::knows_domain(domain) {
                    "is not supported"
                } else {
                    "is not supported (unknown domain)"
                };
                return Err(PlanError::Unsupported(format!(
                    "op {} ({}, opset {opset}) {what}",
                    node.op_type,
                    display_domain(domain)
                )));
            }
        }
    }
    // Context operators are evaluated only around an operator under test: a graph of them
    // alone (with or without Constant and Identity) is not a case the tool judges.
    if steps.iter().all(|s| s.def.plumbing) {
        if let Some(s) = steps.iter().find(|s| s.def.context) {
            let node = &graph.node[s.node];
            return Err(PlanError::Unsupported(format!(
                "op {} ({}, opset {}) is not supported on its own: the graph has no indexing operator",
                node.op_type,
                display_domain(s.def.domain),
                opsets.get(s.def.domain).copied().unwrap_or(0),
            )));
        }
    }
    let inputs = data_inputs(graph);
    let outputs: Vec<&ValueInfoProto> = graph.output.iter().collect();
    for (role, list) in [("input", &inputs), ("output", &outputs)] {
        for v in list.iter() {
            if let Some(kind) = non_tensor_kind(v) {
                return Err(PlanError::Unsupported(format!(
                    "graph {role} '{}' is {kind}; only tensors are supported",
                    v.name
                )));
            }
        }
    }
    if !graph.sparse_initializer.is_empty() {
        return Err(PlanError::Unsupported(
            "sparse initializers are not supported".into(),
        ));
    }
    Ok(Plan {
        graph,
        steps,
        inputs,
        outputs,
    })
}

/// The graph inputs that data sets must provide, in order: those that are not initializers (an
/// initializer with a graph input's name is that input's default, and `input_K.pb` files bind to
/// the others by position).
pub fn data_inputs(graph: &GraphProto) -> Vec<&ValueInfoProto> {
    let init: std::collections::HashSet<&str> =
        graph.initializer.iter().map(|t| t.name.as_str()).collect();
    graph
        .input
        .iter()
        .filter(|v| !init.contains(v.name.as_str()))
        .collect()
}

/// D15: every tensor has one producer. No two node outputs share a name, and no node output
/// reuses a graph input's or an initializer's name (an initializer may share a graph input's
/// name: it is that input's default). Empty names are omitted optional outputs, not tensors.
fn check_ssa(graph: &GraphProto) -> Result<(), PlanError> {
    let invalid = |what: String| {
        Err(PlanError::Invalid(format!(
            "the graph is not in SSA form: {what}"
        )))
    };
    let inputs: std::collections::HashSet<&str> =
        graph.input.iter().map(|v| v.name.as_str()).collect();
    let initializers: std::collections::HashSet<&str> =
        graph.initializer.iter().map(|t| t.name.as_str()).collect();
    // Tensor name -> (node index, output position) of its first writer.
    let mut written: HashMap<&str, (usize, usize)> = HashMap::new();
    for (i, node) in graph.node.iter().enumerate() {
        let label = |index: usize| {
            let n = &graph.node[index];
            node_label(n, index, &n.op_type)
        };
        for (k, name) in node.output.iter().enumerate() {
            if name.is_empty() {
                continue;
            }
            let role = match (
                inputs.contains(name.as_str()),
                initializers.contains(name.as_str()),
            ) {
                (true, true) => Some("a graph input and an initializer"),
                (true, false) => Some("a graph input"),
                (false, true) => Some("an initializer"),
                (false, false) => None,
            };
            if let Some(role) = role {
                return invalid(format!(
                    "node {} writes tensor '{name}', which is {role}",
                    label(i)
                ));
            }
            match written.insert(name.as_str(), (i, k)) {
                None => {}
                Some((j, p)) if j == i => {
                    return invalid(format!(
                        "node {} writes tensor '{name}' twice (outputs {p} and {k})",
                        label(i)
                    ))
                }
                Some((j, _)) => {
                    return invalid(format!(
                        "nodes {} and {} both write tensor '{name}'",
                        label(j),
                        label(i)
                    ))
                }
            }
        }
    }
    Ok(())
}

/// `Some("a sequence")` etc. when a value is declared with a non-tensor type.
fn non_tensor_kind(v: &ValueInfoProto) -> Option<&'static str> {
    use type_proto::Value;
    match v.r#type.as_ref().and_then(|t| t.value.as_ref()) {
        None | Some(Value::TensorType(_)) => None,
        Some(Value::SequenceType(_)) => Some("a sequence"),
        Some(Value::MapType(_)) => Some("a map"),
        Some(Value::OptionalType(_)) => Some("an optional"),
        Some(Value::SparseTensorType(_)) => Some("a sparse tensor"),
        Some(Value::OpaqueType(_)) => Some("an opaque value"),
    }
}

impl Plan<'_> {
    /// `Op-since` of every node, in graph order, without duplicates.
    pub fn resolved_ops(&self) -> Vec<String> {
        self.op_versions(true)
    }

    /// `Op-since` of the operators under test (graph plumbing left out unless the graph has
    /// nothing else), for per-operator summaries.
    pub fn tested_ops(&self) -> Vec<String> {
        let tested = self.op_versions(false);
        if tested.is_empty() {
            self.op_versions(true)
        } else {
            tested
        }
    }

    /// `Op-since` of the context operators (Shape, Reshape, ...), in graph order, without
    /// duplicates.
    pub fn context_ops(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for s in self.steps.iter().filter(|s| s.def.context) {
            let name = s.def.version_name(s.version);
            if !out.contains(&name) {
                out.push(name);
            }
        }
        out
    }

    fn op_versions(&self, plumbing: bool) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for s in self.steps.iter().filter(|s| plumbing || !s.def.plumbing) {
            let name = s.def.version_name(s.version);
            if !out.contains(&name) {
                out.push(name);
            }
        }
        out
    }

    /// The number of nodes.
    pub fn step_count(&self) -> usize {
        self.steps.len()
    }

    /// Whether node `step` is graph plumbing (Constant, Identity).
    pub fn is_plumbing(&self, step: usize) -> bool {
        self.steps.get(step).is_some_and(|s| s.def.plumbing)
    }

    /// The operators of the resolved nodes, in graph order.
    pub fn defs(&self) -> impl Iterator<Item = &'static OpDef> + '_ {
        self.steps.iter().map(|s| s.def)
    }

    /// The initializer protos, for the caller to load once per case.
    pub fn initializers(&self) -> &[crate::pb::TensorProto] {
        &self.graph.initializer
    }

    /// Runs the graph on `inputs` (matched by position to [`Plan::inputs`]) and returns the graph
    /// outputs in order.
    pub fn evaluate(
        &self,
        initializers: &[(String, Tensor)],
        inputs: &[Tensor],
        model_dir: &Path,
        max_bytes: usize,
    ) -> Result<Vec<Value>, EvalError> {
        let mut store = self.seed(initializers, inputs);
        self.run_steps(&mut store, self.steps.len(), model_dir, max_bytes)?;
        // Computed outputs move out of the store; a copy is made only for a name listed twice or
        // for an output that is a graph input or initializer itself.
        let mut values: Vec<Value> = Vec::with_capacity(self.outputs.len());
        for (i, o) in self.outputs.iter().enumerate() {
            let value = match store.remove(o.name.as_str()) {
                Some((t, arithmetic)) => Value {
                    tensor: t.into_owned(),
                    arithmetic,
                },
                None => self.outputs[..i]
                    .iter()
                    .position(|p| p.name == o.name)
                    .map(|p| values[p].clone())
                    .ok_or_else(|| {
                        EvalError::Graph(format!(
                            "graph output '{}' is produced by no node, input or initializer",
                            o.name
                        ))
                    })?,
            };
            values.push(value);
        }
        Ok(values)
    }

    /// The value store, seeded with initializers and graph inputs.
    fn seed<'s>(&'s self, initializers: &'s [(String, Tensor)], inputs: &'s [Tensor]) -> Store<'s> {
        let mut store: Store<'s> = HashMap::new();
        for (name, t) in initializers {
            store.insert(name.as_str(), (Cow::Borrowed(t), false));
        }
        for (info, t) in self.inputs.iter().zip(inputs) {
            store.insert(info.name.as_str(), (Cow::Borrowed(t), false));
        }
        store
    }

    /// Runs the first `count` steps.
    fn run_steps<'s>(
        &'s self,
        store: &mut Store<'s>,
        count: usize,
        model_dir: &Path,
        max_bytes: usize,
    ) -> Result<(), EvalError> {
        for (index, step) in self.steps.iter().enumerate().take(count) {
            crate::deadline::check()?;
            let node = &self.graph.node[step.node];
            let label = || {
                node_label(
                    node,
                    step.node,
                    &format!("{}-{}", step.def.op_type, step.version.since),
                )
            };
            let args = self.args(store, step).map_err(|name| {
                EvalError::Graph(format!(
                    "node {} reads '{name}', which no graph input, initializer or earlier node produces",
                    label()
                ))
            })?;
            let inv = Invocation {
                def: step.def,
                version: step.version,
                attrs: attrs_of(node, model_dir, max_bytes),
                inputs: args,
                outputs: node.output.len(),
                max_bytes,
            };
            let Evaluated { outputs } = ops::invoke(&inv).map_err(|error| EvalError::Kernel {
                node: label(),
                step: index,
                error,
            })?;
            // The call borrows the store (its inputs); its attributes hold values to drop.
            drop(inv);
            // Values passed through Identity keep the arithmetic flag of their source.
            let passed = step.def.plumbing
                && node
                    .input
                    .iter()
                    .filter_map(|n| store.get(n.as_str()))
                    .any(|(_, a)| *a);
            for (name, v) in node.output.iter().zip(outputs) {
                if !name.is_empty() {
                    store.insert(
                        name.as_str(),
                        (Cow::Owned(v.tensor), v.arithmetic || passed),
                    );
                }
            }
        }
        Ok(())
    }

    /// The inputs of `step` from the store, or the name of the first one missing.
    fn args<'s>(
        &self,
        store: &'s Store<'_>,
        step: &Step,
    ) -> Result<Vec<Option<&'s Tensor>>, String> {
        let node = &self.graph.node[step.node];
        node.input
            .iter()
            .map(|name| {
                if name.is_empty() {
                    Ok(None)
                } else {
                    store
                        .get(name.as_str())
                        .map(|(t, _)| Some(t.as_ref()))
                        .ok_or_else(|| name.clone())
                }
            })
            .collect()
    }

    /// The step producing graph output `output`, looking through Identity nodes.
    pub fn producer_step(&self, output: usize) -> Option<usize> {
        let mut name = self.outputs.get(output)?.name.as_str();
        loop {
            let index = self
                .steps
                .iter()
                .rposition(|s| self.graph.node[s.node].output.iter().any(|o| o == name))?;
            let step = &self.steps[index];
            if !step.def.passes_through() {
                return Some(index);
            }
            name = self.graph.node[step.node].input.first()?;
        }
    }

    /// Re-runs the graph up to `step` and returns that node with the inputs it received, for
    /// diagnosis.
    pub fn trace(
        &self,
        step: usize,
        initializers: &[(String, Tensor)],
        inputs: &[Tensor],
        model_dir: &Path,
        max_bytes: usize,
    ) -> Option<Trace<'_>> {
        let mut store = self.seed(initializers, inputs);
        self.run_steps(&mut store, step, model_dir, max_bytes)
            .ok()?;
        let s = self.steps.get(step)?;
        let args = self.args(&store, s).ok()?;
        Some(Trace {
            node: &self.graph.node[s.node],
            domain: s.def.domain,
            since: s.version.since,
            inputs: args.into_iter().map(|a| a.cloned()).collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pb::{OperatorSetIdProto, TensorProto};

    fn node(name: &str, op: &str, inputs: &[&str], outputs: &[&str]) -> NodeProto {
        NodeProto {
            name: name.to_string(),
            op_type: op.to_string(),
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: outputs.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    fn value(name: &str) -> ValueInfoProto {
        ValueInfoProto {
            name: name.to_string(),
            ..Default::default()
        }
    }

    /// An opset-13 model with graph inputs `data` and `indices`, the given initializers (names
    /// only) and nodes, and graph output `y`.
    fn model(initializers: &[&str], nodes: Vec<NodeProto>) -> ModelProto {
        ModelProto {
            opset_import: vec![OperatorSetIdProto {
                domain: String::new(),
                version: 13,
            }],
            graph: Some(GraphProto {
                node: nodes,
                input: vec![value("data"), value("indices")],
                output: vec![value("y")],
                initializer: initializers
                    .iter()
                    .map(|n| TensorProto {
                        name: n.to_string(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    /// The message of an invalid-model error.
    fn invalid(m: &ModelProto) -> String {
        match plan(m) {
            Err(PlanError::Invalid(msg)) => msg,
            other => panic!("expected an invalid model, got {other:?}"),
        }
    }

    #[test]
    fn a_graph_in_ssa_form_plans() {
        let m = model(
            &[],
            vec![
                node("g", "Gather", &["data", "indices"], &["t"]),
                node("i", "Identity", &["t"], &["y"]),
            ],
        );
        let p = plan(&m).unwrap();
        assert_eq!(p.step_count(), 2);
        assert_eq!(p.inputs.len(), 2);
    }

    #[test]
    fn two_nodes_writing_one_tensor_are_an_invalid_model_naming_both() {
        let m = model(
            &[],
            vec![
                node("g", "Gather", &["data", "indices"], &["y"]),
                node("", "Identity", &["data"], &["y"]),
            ],
        );
        let msg = invalid(&m);
        assert_eq!(
            msg,
            "the graph is not in SSA form: nodes 'g' (Gather) and #1 (Identity) both write tensor 'y'"
        );
        // Also when the second writer is the same kind of node with the same inputs (the values
        // would agree: SSA is about the graph, not the values).
        let m = model(
            &[],
            vec![
                node("a", "Gather", &["data", "indices"], &["t"]),
                node("b", "Identity", &["t"], &["y"]),
                node("c", "Gather", &["data", "indices"], &["t"]),
            ],
        );
        assert!(
            invalid(&m).contains("nodes 'a' (Gather) and 'c' (Gather) both write tensor 't'"),
            "{}",
            invalid(&m)
        );
    }

    #[test]
    fn a_node_writing_one_tensor_twice_is_an_invalid_model() {
        let m = model(
            &[],
            vec![node("g", "Gather", &["data", "indices"], &["y", "y"])],
        );
        assert_eq!(
            invalid(&m),
            "the graph is not in SSA form: node 'g' (Gather) writes tensor 'y' twice (outputs 0 and 1)"
        );
    }

    #[test]
    fn a_node_writing_a_graph_input_or_an_initializer_is_an_invalid_model() {
        let m = model(
            &[],
            vec![node("g", "Gather", &["data", "indices"], &["data"])],
        );
        assert_eq!(
            invalid(&m),
            "the graph is not in SSA form: node 'g' (Gather) writes tensor 'data', which is a graph input"
        );
        let m = model(
            &["w"],
            vec![
                node("g", "Gather", &["data", "indices"], &["y"]),
                node("", "Identity", &["y"], &["w"]),
            ],
        );
        assert_eq!(
            invalid(&m),
            "the graph is not in SSA form: node #1 (Identity) writes tensor 'w', which is an initializer"
        );
        // An initializer that is the default of a graph input: both.
        let m = model(
            &["indices"],
            vec![node("g", "Gather", &["data", "indices"], &["indices"])],
        );
        assert!(
            invalid(&m)
                .ends_with("writes tensor 'indices', which is a graph input and an initializer"),
            "{}",
            invalid(&m)
        );
    }

    #[test]
    fn an_initializer_may_share_a_graph_inputs_name_as_its_default() {
        let m = model(
            &["indices"],
            vec![node("g", "Gather", &["data", "indices"], &["y"])],
        );
        let p = plan(&m).unwrap();
        // The defaulted input is not one the data sets must provide.
        let names: Vec<&str> = p.inputs.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["data"]);
    }

    #[test]
    fn empty_output_names_are_omitted_outputs_and_may_repeat() {
        let m = model(
            &[],
            vec![
                node("a", "Gather", &["data", "indices"], &["t", "", ""]),
                node("b", "Identity", &["t"], &["y", ""]),
            ],
        );
        assert!(plan(&m).is_ok(), "{:?}", plan(&m).err());
    }

    #[test]
    fn a_graph_not_in_ssa_form_is_invalid_even_with_an_unsupported_op() {
        // Invalid before unsupported: the graph is broken whatever its operators.
        let m = model(
            &[],
            vec![
                node("l", "Loop", &["data"], &["y"]),
                node("g", "Gather", &["data", "indices"], &["y"]),
            ],
        );
        assert!(invalid(&m).contains("nodes 'l' (Loop) and 'g' (Gather) both write tensor 'y'"));
        // Without the second writer the same model is only unsupported.
        let m = model(&[], vec![node("l", "Loop", &["data"], &["y"])]);
        assert!(matches!(plan(&m), Err(PlanError::Unsupported(_))));
    }
}
