//! Cases in context: the operator under test inside the small graphs real models put it in, so
//! that a runtime's constant folding, shape inference and fusions run on it (issue 31):
//!
//! - the shape chain (`x.view(x.size(0), -1)`): Shape -> Gather (constant index) -> Unsqueeze ->
//!   Concat -> Reshape of the data;
//! - a Gather, GatherElements or GatherND on a Transpose's output;
//! - an embedding lookup: a Gather on weights that are an initializer, the indices a graph input
//!   (int64 and int32; an index past the vocabulary is a case the spec requires an error for);
//! - two gathers sharing one indices input, both outputs graph outputs (one data read along two
//!   axes, or two data read at the same positions);
//! - an update chain: a ScatterND or ScatterElements writing into the output of another, with
//!   overlapping or shared indices, the second one reducing where the version can.
//!
//! The expected outputs are what the evaluator computes on the whole graph, the context
//! operators included ([`onnx_idx_check::ops::context`]). As in [`super`], nothing here names an
//! operator: which graphs a version gets follows from its indexing, its input roles and its
//! attributes. These cases are not part of any `generate` profile; the hunt plans them.

use super::super::model::{attr_proto, int_attr, ints_attr, Attr, Form, GraphNode};
use super::super::rng::Rng;
use super::super::values;
use super::{mode_attr, snake, CaseSpec};
use onnx_idx_check::ops::{Indexing, OpDef, OpVersion, Role};
use onnx_idx_check::tensor::{DType, Tensor};

/// Which graph a case in context puts the operator in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContextKind {
    /// Shape -> Gather -> Unsqueeze -> Concat -> Reshape.
    ShapeChain,
    /// The gather reads a Transpose's output.
    AfterTranspose,
    /// Gather on initializer weights, the indices a graph input.
    Embedding,
    /// Two gathers share one indices input.
    SharedIndices,
    /// A scatter writes into another scatter's output.
    UpdateChain,
}

impl ContextKind {
    /// The slug in case names and kinds (`shape_chain`).
    pub fn slug(self) -> &'static str {
        match self {
            ContextKind::ShapeChain => "shape_chain",
            ContextKind::AfterTranspose => "after_transpose",
            ContextKind::Embedding => "embedding",
            ContextKind::SharedIndices => "shared_indices",
            ContextKind::UpdateChain => "update_chain",
        }
    }

    /// The trait the case carries (`context:shape-chain`).
    pub fn trait_name(self) -> String {
        format!("context:{}", self.slug().replace('_', "-"))
    }
}

/// The graph around the node under test: every node (the node under test among them), the
/// initializers, and the names of the graph's inputs (bound in order to the case's `inputs`) and
/// outputs.
#[derive(Clone, Debug)]
pub struct Context {
    /// Which graph this is (for the hunt's variants; the traits carry it too).
    #[allow(dead_code)]
    pub kind: ContextKind,
    /// The nodes, in order.
    pub nodes: Vec<GraphNode>,
    /// Initializers (an embedding's weights).
    pub initializers: Vec<(String, Tensor)>,
    /// The graph inputs' names, in the order of the case's `inputs`.
    pub inputs: Vec<String>,
    /// The graph outputs' names.
    pub outputs: Vec<String>,
}

/// The cases in context of one operator version: the graphs of the module doc that make sense
/// for it (none for an operator outside ai.onnx, a deprecated version, or an op with no index
/// input). `seed` draws the data and updates.
pub(crate) fn in_context(seed: u64, def: &'static OpDef, v: &'static OpVersion) -> Vec<CaseSpec> {
    let has = |r| v.input_with(r).is_some();
    if def.plumbing
        || v.deprecated
        || !def.domain.is_empty()
        || !has(Role::Data)
        || !has(Role::Indices)
        || has(Role::Shape)
        || has(Role::Axis)
    {
        return Vec::new();
    }
    let mut b = Builder {
        seed,
        def,
        v,
        opset: opset_for(def, v),
        out: Vec::new(),
    };
    match (def.indexing, has(Role::Updates)) {
        (Indexing::Axis, false) => {
            b.shape_chain();
            b.after_transpose();
            b.embedding();
            b.shared_indices();
        }
        (Indexing::Elements, false) => {
            b.after_transpose();
            b.shared_indices();
        }
        (Indexing::Tuples, false) => b.after_transpose(),
        (Indexing::Elements | Indexing::Tuples, true) => b.update_chain(),
        _ => {}
    }
    b.out
}

/// The opset a case imports: the version's own, raised to 7 where the version is still the one
/// in force there (Gather-1: onnxruntime runs no model below opset 7, and the shape chain needs
/// Reshape-5).
fn opset_for(def: &OpDef, v: &OpVersion) -> i64 {
    let next = def
        .versions
        .iter()
        .find(|x| x.since > v.since)
        .map_or(i64::MAX, |x| x.since);
    if v.since < 7 && next > 7 {
        7
    } else {
        v.since
    }
}

/// An index tensor's shape and values.
type Indices = (Vec<usize>, Vec<i64>);

struct Builder {
    seed: u64,
    def: &'static OpDef,
    v: &'static OpVersion,
    opset: i64,
    out: Vec<CaseSpec>,
}

/// One case in the making.
struct Made {
    kind: ContextKind,
    /// Appended to the kind's slug (`_last_dim`), or empty.
    variant: &'static str,
    /// The graph's data type (its outputs').
    dtype: DType,
    /// The node under test's data and index types, for the traits.
    tested: (DType, DType),
    /// The node under test's attributes (the last one's, for two).
    attrs: Vec<Attr>,
    inputs: Vec<(&'static str, Tensor)>,
    nodes: Vec<GraphNode>,
    initializers: Vec<(String, Tensor)>,
    outputs: Vec<&'static str>,
    traits: Vec<&'static str>,
    violation: bool,
}

impl Builder {
    fn data(&self, tag: &str, shape: &[usize]) -> Tensor {
        let mut rng = Rng::for_case(self.seed, &format!("{}-{tag}", self.name_stem()));
        values::tensor(&mut rng, DType::Float, shape, &[]).expect("a float tensor of a small shape")
    }

    fn name_stem(&self) -> String {
        format!("{}_{}", snake(self.def.op_type), self.v.since)
    }

    /// The node under test reading `inputs` into `output` with `attrs`.
    fn tested(&self, inputs: &[&str], output: &str, attrs: &[Attr]) -> GraphNode {
        GraphNode::new(
            self.def.op_type,
            inputs,
            &[output],
            attrs.iter().map(attr_proto).collect(),
        )
    }

    fn idx(shape: &[usize], v: &[i64]) -> Tensor {
        values::indices(DType::Int64, shape, v).expect("indices of a small shape")
    }

    fn push(&mut self, m: Made) {
        let stem = self.name_stem();
        let slug = format!("in_context_{}{}", m.kind.slug(), m.variant);
        let idx_tag = if m.tested.1 == DType::Int64 {
            String::new()
        } else {
            format!("_indices_{}", m.tested.1)
        };
        let mut traits = vec![
            m.kind.trait_name(),
            format!("dtype:{}", m.tested.0),
            format!("indices:{}", m.tested.1),
            "storage:raw".to_owned(),
        ];
        traits.extend(m.traits.iter().map(|t| (*t).to_owned()));
        traits.sort();
        traits.dedup();
        let (names, inputs): (Vec<String>, Vec<Tensor>) =
            m.inputs.into_iter().map(|(n, t)| (n.to_owned(), t)).unzip();
        self.out.push(CaseSpec {
            name: format!("test_{stem}_{}_{slug}{idx_tag}", m.dtype),
            kind: format!("{stem}_{slug}"),
            def: self.def,
            version: self.v,
            opset: self.opset,
            dtype: m.dtype,
            attrs: m.attrs,
            inputs,
            form: Form::Raw,
            external: false,
            traits,
            violation: m.violation,
            context: Some(Context {
                kind: m.kind,
                nodes: m.nodes,
                initializers: m.initializers,
                inputs: names,
                outputs: m.outputs.iter().map(|o| (*o).to_owned()).collect(),
            }),
        });
    }

    /// `x.view(x.size(k), -1)` for k = 0, and `x.view(-1, x.size(-1))` where negative indices
    /// count: the gather picks one dim of the data's shape with a constant scalar index.
    fn shape_chain(&mut self) {
        let mut ks = vec![(0i64, "")];
        if self.v.negatives {
            ks.push((-1, "_last_dim"));
        }
        for (k, variant) in ks {
            let mut nodes = vec![
                GraphNode::new("Shape", &["data"], &["shape"], vec![]),
                GraphNode::constant("k", &Tensor::scalar(k)),
                self.tested(&["shape", "k"], "dim", &[]),
            ];
            if self.opset >= 13 {
                nodes.push(GraphNode::constant("axes", &Self::idx(&[1], &[0])));
                nodes.push(GraphNode::new(
                    "Unsqueeze",
                    &["dim", "axes"],
                    &["dim1"],
                    vec![],
                ));
            } else {
                nodes.push(GraphNode::new(
                    "Unsqueeze",
                    &["dim"],
                    &["dim1"],
                    vec![ints_attr("axes", &[0])],
                ));
            }
            nodes.push(GraphNode::constant("rest", &Self::idx(&[1], &[-1])));
            let parts: [&str; 2] = if k == 0 {
                ["dim1", "rest"]
            } else {
                ["rest", "dim1"]
            };
            nodes.push(GraphNode::new(
                "Concat",
                &parts,
                &["new_shape"],
                vec![int_attr("axis", 0)],
            ));
            nodes.push(GraphNode::new(
                "Reshape",
                &["data", "new_shape"],
                &["y"],
                vec![],
            ));
            let data = self.data("shape_chain", &[2, 3, 4]);
            self.push(Made {
                kind: ContextKind::ShapeChain,
                variant,
                dtype: DType::Float,
                tested: (DType::Int64, DType::Int64),
                attrs: vec![],
                inputs: vec![("data", data)],
                nodes,
                initializers: vec![],
                outputs: vec!["y"],
                traits: if k < 0 {
                    vec!["negative-indices", "rank0-indices"]
                } else {
                    vec!["rank0-indices"]
                },
                violation: false,
            });
        }
    }

    /// The gather reads `Transpose(data)`: perm `[1, 0, 2]` along the first axis, and perm
    /// `[2, 0, 1]` along another (negative indices where they count).
    fn after_transpose(&mut self) {
        let neg = self.v.negatives;
        let axis_attr = self.v.attr("axis").is_some();
        // (perm, axis, indices shape, indices, variant)
        type Case = (&'static [i64], i64, Vec<usize>, Vec<i64>, &'static str);
        let cases: Vec<Case> = match self.def.indexing {
            // Transposed shapes [3, 2, 4] and [4, 2, 3].
            Indexing::Axis => vec![
                (&[1, 0, 2], 0, vec![2], vec![2, 0], ""),
                (
                    &[2, 0, 1],
                    1,
                    vec![2, 2],
                    if neg {
                        vec![-1, 0, 1, -2]
                    } else {
                        vec![1, 0, 1, 1]
                    },
                    "_axis_1",
                ),
            ],
            Indexing::Elements => vec![
                (
                    &[1, 0, 2],
                    0,
                    vec![2, 2, 4],
                    (0..16).map(|i| (i * 7 + 1) % 3).collect(),
                    "",
                ),
                (
                    &[2, 0, 1],
                    2,
                    vec![4, 2, 2],
                    (0..16)
                        .map(|i| (i * 5 + 2) % 3 - if neg && i % 4 == 1 { 3 } else { 0 })
                        .collect(),
                    "_axis_2",
                ),
            ],
            Indexing::Tuples => vec![
                (&[1, 0, 2], 0, vec![2, 2], vec![2, 1, 0, 0], ""),
                (
                    &[2, 0, 1],
                    0,
                    vec![3, 1],
                    vec![3, 0, if neg { -1 } else { 2 }],
                    "_slices",
                ),
            ],
            _ => return,
        };
        for (perm, axis, idx_shape, idx, variant) in cases {
            let attrs = if axis != 0 && axis_attr {
                vec![Attr::Int("axis", axis)]
            } else {
                vec![]
            };
            let negative = idx.iter().any(|&i| i < 0);
            let nodes = vec![
                GraphNode::new(
                    "Transpose",
                    &["data"],
                    &["t"],
                    vec![ints_attr("perm", perm)],
                ),
                self.tested(&["t", "indices"], "y", &attrs),
            ];
            let data = self.data(&format!("transpose{variant}"), &[2, 3, 4]);
            self.push(Made {
                kind: ContextKind::AfterTranspose,
                variant,
                dtype: DType::Float,
                tested: (DType::Float, DType::Int64),
                attrs,
                inputs: vec![("data", data), ("indices", Self::idx(&idx_shape, &idx))],
                nodes,
                initializers: vec![],
                outputs: vec!["y"],
                traits: if negative {
                    vec!["negative-indices"]
                } else {
                    vec![]
                },
                violation: false,
            });
        }
    }

    /// `weights[ids]` with `weights` a [5, 4] initializer and `ids` a [2, 3] graph input, in
    /// every index type the version takes; negative ids where they count; an id of 5 (past the
    /// vocabulary), which the spec requires an error for.
    fn embedding(&mut self) {
        let idx_types: Vec<DType> = self
            .v
            .input_with(Role::Indices)
            .and_then(|i| self.v.constraint_of(i))
            .map(|c| c.dtypes.iter().collect())
            .unwrap_or_default();
        let mut cases: Vec<(DType, Vec<i64>, &'static str, bool)> = Vec::new();
        for d in [DType::Int64, DType::Int32] {
            if idx_types.contains(&d) {
                cases.push((d, vec![0, 4, 1, 3, 3, 2], "", false));
            }
        }
        if self.v.negatives {
            cases.push((
                DType::Int64,
                vec![-1, 0, 2, -5, 4, 1],
                "_negative_indices",
                false,
            ));
        }
        cases.push((DType::Int64, vec![0, 5, 1, 2, 3, 4], "_out_of_range", true));
        let weights = self.data("embedding", &[5, 4]);
        for (d, ids, variant, violation) in cases {
            let mut traits = vec!["duplicates"];
            if ids.iter().any(|&i| i < 0) {
                traits.push("negative-indices");
            }
            if violation {
                traits.push("out-of-range");
            }
            let ids = values::indices(d, &[2, 3], &ids).expect("ids of a small shape");
            self.push(Made {
                kind: ContextKind::Embedding,
                variant,
                dtype: DType::Float,
                tested: (DType::Float, d),
                attrs: vec![],
                inputs: vec![("ids", ids)],
                nodes: vec![self.tested(&["weights", "ids"], "y", &[])],
                initializers: vec![("weights".to_owned(), weights.clone())],
                outputs: vec!["y"],
                traits,
                violation,
            });
        }
    }

    /// Two gathers on one indices input: one data read along axes 0 and 1 (a runtime that
    /// merges equal-looking nodes without their attributes gets one of them wrong), and two
    /// data read along axis 0 with a repeated index.
    fn shared_indices(&mut self) {
        if self.v.attr("axis").is_none() {
            return;
        }
        let neg = self.v.negatives;
        // Element-wise indices as large as the data, so that they fit it along both axes (the
        // reference evaluator of onnx also wants every other dim equal).
        let (idx_shape, idx): (Vec<usize>, Vec<i64>) = match self.def.indexing {
            Indexing::Axis => (vec![2], if neg { vec![-1, 0] } else { vec![2, 0] }),
            _ => (
                vec![3, 3],
                vec![2, 0, 1, 1, 1, 0, 0, 2, if neg { -1 } else { 2 }],
            ),
        };
        let x = self.data("shared", &[3, 3]);
        let axis1 = [Attr::Int("axis", 1)];
        self.push(Made {
            kind: ContextKind::SharedIndices,
            variant: "",
            dtype: DType::Float,
            tested: (DType::Float, DType::Int64),
            attrs: axis1.to_vec(),
            inputs: vec![("data", x), ("indices", Self::idx(&idx_shape, &idx))],
            nodes: vec![
                self.tested(&["data", "indices"], "y0", &[]),
                self.tested(&["data", "indices"], "y1", &axis1),
            ],
            initializers: vec![],
            outputs: vec!["y0", "y1"],
            traits: if idx.iter().any(|&i| i < 0) {
                vec!["negative-indices"]
            } else {
                vec![]
            },
            violation: false,
        });
        let (a_shape, b_shape, idx_shape, idx): (&[usize], &[usize], Vec<usize>, Vec<i64>) =
            match self.def.indexing {
                Indexing::Axis => (&[4, 3], &[4, 2], vec![3], vec![3, 1, 3]),
                _ => (&[3, 3], &[4, 3], vec![2, 3], vec![2, 0, 2, 1, 0, 1]),
            };
        let (a, b) = (
            self.data("shared_a", a_shape),
            self.data("shared_b", b_shape),
        );
        self.push(Made {
            kind: ContextKind::SharedIndices,
            variant: "_two_data",
            dtype: DType::Float,
            tested: (DType::Float, DType::Int64),
            attrs: vec![],
            inputs: vec![("a", a), ("b", b), ("indices", Self::idx(&idx_shape, &idx))],
            nodes: vec![
                self.tested(&["a", "indices"], "y0", &[]),
                self.tested(&["b", "indices"], "y1", &[]),
            ],
            initializers: vec![],
            outputs: vec!["y0", "y1"],
            traits: vec!["duplicates"],
            violation: false,
        });
    }

    /// A scatter into a scatter's output: overlapping indices (the second write wins), one
    /// indices input shared by both, and where the version reduces, the second adding onto the
    /// first's writes.
    fn update_chain(&mut self) {
        let neg = self.v.negatives;
        // ScatterND: data [4, 3], one row per index tuple. ScatterElements: data [3, 4] along
        // axis 0, indices distinct within each column of one scatter.
        let tuples = self.def.indexing == Indexing::Tuples;
        let data_shape: &[usize] = if tuples { &[4, 3] } else { &[3, 4] };
        let (i1, i2, shared): (Indices, Indices, Indices) = if tuples {
            (
                (vec![2, 1], vec![0, 2]),
                (vec![2, 1], vec![if neg { -2 } else { 2 }, 3]),
                (vec![2, 1], vec![1, 3]),
            )
        } else {
            (
                (vec![1, 4], vec![0, 1, 2, 0]),
                (vec![2, 4], vec![0, 2, 2, 1, 1, 0, 1, 2]),
                (vec![2, 4], vec![0, 2, 1, 1, 2, 0, 0, 2]),
            )
        };
        // The updates' shape: a row of 3 per tuple, or the indices' shape.
        let updates = |s: &[usize]| -> Vec<usize> {
            if tuples {
                vec![s[0], 3]
            } else {
                s.to_vec()
            }
        };
        let x = self.data("chain", data_shape);
        let u1 = self.data("chain_u1", &updates(&i1.0));
        let u2 = self.data("chain_u2", &updates(&i2.0));
        self.push(Made {
            kind: ContextKind::UpdateChain,
            variant: "",
            dtype: DType::Float,
            tested: (DType::Float, DType::Int64),
            attrs: vec![],
            inputs: vec![
                ("data", x.clone()),
                ("indices1", Self::idx(&i1.0, &i1.1)),
                ("updates1", u1),
                ("indices2", Self::idx(&i2.0, &i2.1)),
                ("updates2", u2),
            ],
            nodes: vec![
                self.tested(&["data", "indices1", "updates1"], "s", &[]),
                self.tested(&["s", "indices2", "updates2"], "y", &[]),
            ],
            initializers: vec![],
            outputs: vec!["y"],
            traits: if i2.1.iter().any(|&i| i < 0) {
                vec!["negative-indices"]
            } else {
                vec![]
            },
            violation: false,
        });
        let mut second: Vec<(Vec<Attr>, &'static str, Vec<&'static str>)> =
            vec![(vec![], "_shared", vec![])];
        if let Some(attr) = mode_attr(self.v).filter(|_| self.v.modes.contains(&"add")) {
            second.push((
                vec![Attr::Str(attr, "add".to_owned())],
                "_shared_add",
                vec!["reduction:add"],
            ));
        }
        let s1 = self.data("shared_u1", &updates(&shared.0));
        let s2 = self.data("shared_u2", &updates(&shared.0));
        for (attrs, variant, traits) in second {
            self.push(Made {
                kind: ContextKind::UpdateChain,
                variant,
                dtype: DType::Float,
                tested: (DType::Float, DType::Int64),
                attrs: attrs.clone(),
                inputs: vec![
                    ("data", x.clone()),
                    ("indices", Self::idx(&shared.0, &shared.1)),
                    ("updates1", s1.clone()),
                    ("updates2", s2.clone()),
                ],
                nodes: vec![
                    self.tested(&["data", "indices", "updates1"], "s", &[]),
                    self.tested(&["s", "indices", "updates2"], "y", &attrs),
                ],
                initializers: vec![],
                outputs: vec!["y"],
                traits,
                violation: false,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use onnx_idx_check::ops::REGISTRY;
    use onnx_idx_check::verdict::Status;

    /// Every case in context of every registered version.
    fn all() -> Vec<CaseSpec> {
        REGISTRY
            .iter()
            .flat_map(|d| d.versions.iter().map(move |v| (*d, v)))
            .flat_map(|(d, v)| in_context(7, d, v))
            .collect()
    }

    /// The number of cases in context of `op` at version `since`.
    fn count(op: &str, since: i64) -> usize {
        let def = onnx_idx_check::ops::find_op("", op).unwrap();
        let v = def.versions.iter().find(|v| v.since == since).unwrap();
        in_context(7, def, v).len()
    }

    #[test]
    fn each_version_gets_the_graphs_that_make_sense_for_it() {
        // Gather-13: the shape chain (index 0 and -1), two after a Transpose, the embedding
        // (int64, int32, negative ids, an id past the vocabulary), two with shared indices.
        assert_eq!(count("Gather", 13), 2 + 2 + 4 + 2);
        // Gather-1: no negative indices (one shape chain, no negative embedding).
        assert_eq!(count("Gather", 1), 1 + 2 + 3 + 2);
        assert_eq!(count("GatherElements", 13), 2 + 2);
        assert_eq!(count("GatherND", 13), 2);
        // Overlapping, shared, shared with the second adding.
        assert_eq!(count("ScatterND", 18), 3);
        assert_eq!(count("ScatterElements", 18), 3);
        assert_eq!(count("ScatterND", 13), 2);
        assert_eq!(count("Scatter", 9), 2);
        // Deprecated, other domains, and the context operators themselves: none.
        assert_eq!(count("Scatter", 11), 0);
        assert_eq!(count("TensorScatter", 24), 0);
        assert_eq!(count("Reshape", 14), 0);
        for d in REGISTRY.iter().filter(|d| !d.domain.is_empty()) {
            for v in d.versions {
                assert!(in_context(7, d, v).is_empty(), "{}", d.version_name(v));
            }
        }
    }

    #[test]
    fn names_and_kinds_are_unique_and_apart_from_the_single_node_cases() {
        let cases = all();
        let single: std::collections::HashSet<String> =
            super::super::versions(&super::super::generated_ops())
                .into_iter()
                .flat_map(|(d, v)| super::super::of_version(super::super::Breadth::Full, 7, d, v))
                .flat_map(|c| [c.kind, c.name])
                .collect();
        let mut names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "names repeat");
        for c in &cases {
            assert!(
                !single.contains(&c.kind) && !single.contains(&c.name),
                "{}",
                c.name
            );
            assert!(c.kind.contains("_in_context_"), "{}", c.kind);
            let kind = c.context.as_ref().unwrap().kind;
            assert!(
                c.traits.contains(&kind.trait_name()),
                "{}: {:?}",
                c.name,
                c.traits
            );
            assert!(c.traits.iter().any(|t| t.starts_with("context:")));
        }
    }

    /// Writes `specs` (rendered) under `dir`; the rendered cases with their specs.
    fn write(specs: &[CaseSpec], dir: &std::path::Path) -> Vec<(String, bool)> {
        let mut out = Vec::new();
        for s in specs {
            let r = crate::generate::render_case(s)
                .unwrap_or_else(|e| panic!("{e:#}"))
                .unwrap_or_else(|| panic!("{}: the evaluator skipped it", s.name));
            r.write_to(&dir.join(&r.name)).unwrap();
            out.push((s.name.clone(), s.violation));
        }
        out
    }

    #[test]
    fn every_case_in_context_renders_and_our_runner_passes_it_or_errs_where_the_spec_requires() {
        let specs = all();
        assert!(specs.len() >= 40, "{}", specs.len());
        let dir = tempfile::tempdir().unwrap();
        let written = write(&specs, dir.path());
        let found = onnx_idx_check::discover::discover(&[dir.path().to_path_buf()]).unwrap();
        assert_eq!(found.cases.len(), written.len());
        let opts = onnx_idx_check::runner::RunOptions::default();
        let mut errored = 0;
        for case in &found.cases {
            let violation = written.iter().find(|(n, _)| *n == case.name).unwrap().1;
            let r = onnx_idx_check::runner::run_case(case, &opts);
            let want = if violation {
                errored += 1;
                Status::Errored
            } else {
                Status::Passed
            };
            assert_eq!(r.status, want, "{}: {:?}", case.name, r.reason);
            // The operator under test is what the summary counts, never the context.
            assert!(
                r.op_versions.iter().all(|o| !o.starts_with("Shape")
                    && !o.starts_with("Transpose")
                    && !o.starts_with("Reshape")),
                "{}: {:?}",
                case.name,
                r.op_versions
            );
        }
        // One embedding out of range per Gather version (1, 11, 13).
        assert_eq!(errored, 3);
    }

    #[test]
    fn the_shape_chain_reshapes_the_data_as_the_view_it_stands_for() {
        let def = onnx_idx_check::ops::find_op("", "Gather").unwrap();
        let v = def.versions.last().unwrap();
        let specs: Vec<CaseSpec> = in_context(7, def, v)
            .into_iter()
            .filter(|c| c.kind.contains("shape_chain"))
            .collect();
        let dir = tempfile::tempdir().unwrap();
        write(&specs, dir.path());
        // x.view(x.size(0), -1) of a [2, 3, 4] tensor is [2, 12]; x.view(-1, x.size(-1)) [6, 4].
        for (spec, shape) in specs.iter().zip([[2usize, 12], [6, 4]]) {
            let out = dir
                .path()
                .join(&spec.name)
                .join("test_data_set_0/output_0.pb");
            let (_, t) =
                onnx_idx_check::load::load_tensor_file(&out, "output_0.pb", 1 << 20).unwrap();
            assert_eq!(t.shape(), shape, "{}", spec.name);
            // Reshape moves no element: the output holds the data in order.
            assert_eq!(t.storage(), spec.inputs[0].storage(), "{}", spec.name);
        }
    }

    /// onnxruntime and onnx's ReferenceEvaluator agree with the expected outputs of every valid
    /// case in context: independent evidence that the context operators are right.
    #[test]
    #[ignore = "needs onnxruntime and onnx for $ONNX_IDX_CHECK_PYTHON"]
    fn onnxruntime_and_the_reference_evaluator_agree_with_every_valid_case_in_context() {
        let Some(python) = std::env::var_os("ONNX_IDX_CHECK_PYTHON") else {
            eprintln!("SKIPPED: ONNX_IDX_CHECK_PYTHON is not set");
            return;
        };
        let specs: Vec<CaseSpec> = all().into_iter().filter(|c| !c.violation).collect();
        let dir = tempfile::tempdir().unwrap();
        write(&specs, dir.path());
        let out = std::process::Command::new(python)
            .arg("-c")
            .arg(CHECK_PY)
            .arg(dir.path())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        eprintln!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "{stdout}");
        assert!(
            stdout.contains(&format!("checked {} cases", specs.len())),
            "{stdout}"
        );
    }

    /// Runs every case under argv[1] with onnxruntime (all graph optimizations, and none) and
    /// the reference evaluator, and compares with `output_K.pb` (exactly, or to 1e-6 for a
    /// reduction); prints each disagreement and exits 1 if there is one.
    const CHECK_PY: &str = r#"
import os, sys
import numpy as np
import onnx
from onnx import numpy_helper
from onnx.reference import ReferenceEvaluator
import onnxruntime as ort

root = sys.argv[1]
bad = 0
n = 0
for name in sorted(os.listdir(root)):
    d = os.path.join(root, name)
    model = onnx.load(os.path.join(d, "model.onnx"))
    ds = os.path.join(d, "test_data_set_0")
    def read(f):
        t = onnx.TensorProto()
        with open(os.path.join(ds, f), "rb") as fh:
            t.ParseFromString(fh.read())
        return numpy_helper.to_array(t)
    inputs = [read(f"input_{k}.pb") for k in range(len(model.graph.input))]
    feeds = {i.name: x for i, x in zip(model.graph.input, inputs)}
    expected = [read(f"output_{k}.pb") for k in range(len(model.graph.output))]
    tolerant = "reduction:add" in name or "shared_add" in name
    runs = {}
    runs["reference"] = lambda: ReferenceEvaluator(model).run(None, feeds)
    for level, tag in [(ort.GraphOptimizationLevel.ORT_ENABLE_ALL, "all"), (ort.GraphOptimizationLevel.ORT_DISABLE_ALL, "none")]:
        def run(level=level):
            so = ort.SessionOptions()
            so.graph_optimization_level = level
            s = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
            return s.run(None, feeds)
        runs["onnxruntime/" + tag] = run
    for who, f in runs.items():
        try:
            got = f()
        except Exception as e:
            if "No registered implementation" in str(e):
                print(f"{name}: {who} does not implement the operator")
                continue
            print(f"{name}: {who} refused: {str(e)[:300]}")
            bad += 1
            continue
        for k, (g, w) in enumerate(zip(got, expected)):
            g = np.asarray(g)
            same = g.shape == w.shape and g.dtype == w.dtype and (
                np.allclose(g, w, rtol=1e-6, atol=1e-6) if tolerant else np.array_equal(g, w))
            if not same:
                print(f"{name}: {who} output {k}: {g.dtype}{list(g.shape)} {g.ravel()[:12]} != expected {w.dtype}{list(w.shape)} {w.ravel()[:12]}")
                bad += 1
    n += 1
print(f"checked {n} cases, {bad} disagreements")
sys.exit(1 if bad else 0)
"#;
}
