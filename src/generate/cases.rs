//! The case specs: for every operator version the registry lists, one small case per data type
//! and per trait, and one per rule of the spec that requires an error. How a version addresses
//! its data (its [`Family`]: along an axis, element by element, by index tuples, by write
//! offsets) decides the shapes; the tuple and offset families live in [`tuples`] and [`offsets`].
//!
//! Nothing here names an operator: the versions, their dtypes, index dtypes, attributes, modes,
//! input roles (an axis input, a `shape` input with a gradient for the backward ops), whether
//! negative indices count and whether out-of-range indices read as zeros all come from the
//! registry ([`onnx_idx_check::ops::REGISTRY`]).

// tidy: long file: one concern, the case builder: a table of cases per operator family, read top to bottom.

pub(crate) mod context;
mod crossed;
mod large;
mod offsets;
mod traits;
mod tuples;

use super::model::{Attr, Form};
use super::rng::Rng;
use super::values;
use onnx_idx_check::ops::{Indexing, OpDef, OpVersion, Role, REGISTRY};
use onnx_idx_check::tensor::{DType, Tensor};
use std::collections::BTreeMap;

/// One case to write, before evaluation.
#[derive(Clone, Debug)]
pub struct CaseSpec {
    /// The directory name, e.g. `test_gather_13_float_negative_indices`.
    pub name: String,
    /// What the case tests apart from its data and index types: the operator, version and
    /// slug (`gather_13_negative_indices`), the same for every dtype pair of the full profile.
    pub kind: String,
    /// The operator.
    pub def: &'static OpDef,
    /// The version under test.
    pub version: &'static OpVersion,
    /// The opset the model imports: the version's own `since`.
    pub opset: i64,
    /// The data type of the value input.
    pub dtype: DType,
    /// The node's attributes.
    pub attrs: Vec<Attr>,
    /// The inputs, in the version's input order.
    pub inputs: Vec<Tensor>,
    /// How the input files store their values.
    pub form: Form,
    /// Whether the value input's bytes are in a file beside its `.pb` (`input_K.bin`).
    pub external: bool,
    /// What the case exercises (`negative-indices`, `reduction:add`, `dtype:float`, ...).
    pub traits: Vec<String>,
    /// Whether the spec requires an error for this case (the generator checks that the
    /// reference agrees, both ways).
    pub violation: bool,
    /// The graph around the node, for a case in context ([`context::in_context`]): then
    /// `inputs` are that graph's inputs, in its order. `None`: the node alone, every input a
    /// graph input.
    pub context: Option<context::Context>,
}

impl CaseSpec {
    /// Whether an integer attribute is negative (an axis counted from the end).
    pub(crate) fn negative_attr(&self) -> bool {
        self.attrs
            .iter()
            .any(|a| matches!(a, Attr::Int(_, v) if *v < 0))
    }
}

/// How a version's inputs address the data. A version whose value input is a gradient (`dY`,
/// with a `shape` input in place of the data) belongs to the family of its forward op: the
/// generator makes the forward call and feeds the gradient of its output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Family {
    /// Indices of any rank along one axis (an attribute or an input); updates only as a
    /// gradient.
    Axis,
    /// Indices of the data's rank, one position per element; `scatter` when updates are written.
    Elements { scatter: bool },
    /// Index tuples in the last dim of the indices; `scatter` when updates are written.
    Tuples { scatter: bool },
    /// One write offset per batch row, a sequence of updates written from it.
    Offsets,
}

fn family(def: &OpDef, v: &OpVersion) -> Option<Family> {
    let has = |r| v.input_with(r).is_some();
    let roles_known = v.inputs.iter().all(|i| {
        matches!(
            i.role,
            Role::Data | Role::Indices | Role::Updates | Role::Axis | Role::Shape
        )
    });
    // The data, or for a gradient its shape.
    let addressed = has(Role::Data) || has(Role::Shape) && has(Role::Updates);
    if def.plumbing || !roles_known || !addressed || !has(Role::Indices) {
        return None;
    }
    let scatter = has(Role::Updates);
    match def.indexing {
        Indexing::Axis if !scatter || has(Role::Shape) => Some(Family::Axis),
        Indexing::Elements => Some(Family::Elements { scatter }),
        Indexing::Tuples => Some(Family::Tuples { scatter }),
        Indexing::Offsets if scatter => Some(Family::Offsets),
        _ => None,
    }
}

/// The operators the generator writes: those whose every version is of a known family.
pub fn generated_ops() -> Vec<&'static OpDef> {
    REGISTRY
        .iter()
        .copied()
        .filter(|d| !d.plumbing && d.versions.iter().all(|v| family(d, v).is_some()))
        .collect()
}

/// The attribute that selects the version's mode, when the version defines it (the registry
/// names `reduction` for every ScatterElements version; only 16 and later define it).
fn mode_attr(v: &OpVersion) -> Option<&'static str> {
    v.mode_attr.filter(|a| v.attr(a).is_some())
}

/// The case-name prefix of an operator outside the default domain: the domain's last part
/// (`openvinotoolkit_`, `microsoft_`), so that its names cannot meet ai.onnx's.
fn domain_prefix(domain: &str) -> String {
    match domain.rsplit('.').next() {
        Some(last) if !domain.is_empty() => format!("{}_", last.to_ascii_lowercase()),
        _ => String::new(),
    }
}

/// `GatherElements` -> `gather_elements`, `ScatterND` -> `scatter_nd`: ONNX's own case names.
fn snake(op: &str) -> String {
    let mut s = String::new();
    let mut prev_lower = false;
    for c in op.chars() {
        if c.is_ascii_uppercase() && prev_lower {
            s.push('_');
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        s.push(c.to_ascii_lowercase());
    }
    s
}

/// One call of a version, valid for its family unless a violation case changes it.
#[derive(Clone, Debug)]
struct Call {
    dtype: DType,
    idx_dtype: DType,
    data_shape: Vec<usize>,
    /// The `axis` attribute; `None` leaves it out (0).
    axis: Option<i64>,
    idx_shape: Vec<usize>,
    idx: Vec<i64>,
    /// The mode attribute's value (`reduction`), when given.
    mode: Option<&'static str>,
    /// Attributes beyond axis and mode (violation cases).
    extra: Vec<Attr>,
    data_overrides: Vec<Option<u64>>,
    updates_overrides: Vec<Option<u64>>,
    /// The updates' shape when it is not what the family derives (a violation, or a sequence
    /// of its own length for the offsets family).
    updates_shape: Option<Vec<usize>>,
    /// The `batch_dims` attribute, when given.
    batch_dims: Option<i64>,
    /// The axis input's dtype and whether it is a 1-element 1-D tensor rather than a scalar (for
    /// versions taking the axis as an input); `axis_values` overrides its elements.
    axis_input: (DType, bool),
    axis_values: Option<Vec<i64>>,
    /// Leave the optional inputs at the end out (TensorScatter's write_indices).
    omit_optional: bool,
    /// String elements replacing the random ones in the data and the updates.
    strings: Vec<Option<Vec<u8>>>,
    /// Store the value input's bytes in a file beside its `.pb` (external data).
    external: bool,
    form: Form,
    /// The data and the updates hold [`values::ramp`]'s values instead of random ones.
    ramp: bool,
}

impl Call {
    fn axis(&self) -> usize {
        let r = self.data_shape.len() as i64;
        let a = self.axis.unwrap_or(0);
        usize::try_from(if a < 0 { a + r } else { a }).unwrap_or(0)
    }

    fn axis_len(&self) -> usize {
        self.data_shape.get(self.axis()).copied().unwrap_or(0)
    }

    /// Random valid indices for the current shapes: non-negative, and for scatters distinct
    /// within each line along the axis (duplicates under `none` are a trait of their own, D7).
    fn fill(&mut self, rng: &mut Rng, fam: Family) {
        let s = self.axis_len();
        let n: usize = self.idx_shape.iter().product();
        self.idx = match fam {
            Family::Elements { scatter: true } => {
                let axis = self.axis();
                let mut lines: BTreeMap<Vec<usize>, Vec<usize>> = BTreeMap::new();
                (0..n)
                    .map(|flat| {
                        let mut coords = onnx_idx_check::tensor::unravel(flat, &self.idx_shape);
                        let k = coords.get(axis).copied().unwrap_or(0);
                        if axis < coords.len() {
                            coords.remove(axis);
                        }
                        let perm = lines.entry(coords).or_insert_with(|| rng.permutation(s));
                        perm.get(k).copied().unwrap_or(0) as i64
                    })
                    .collect()
            }
            _ => (0..n).map(|_| rng.below(s) as i64).collect(),
        };
    }

    /// 1-D data of 6 to 8 elements and six indices, every other one past the end by 1 to
    /// twice the length.
    fn far_past_end(&mut self, rng: &mut Rng) {
        let s = rng.range(6, 8);
        self.data_shape = vec![s];
        self.axis = None;
        self.idx_shape = vec![6];
        let s = s as i64;
        self.idx = (0..6)
            .map(|k| {
                if k % 2 == 0 {
                    rng.range_i64(0, s - 1)
                } else {
                    s + 1 + rng.range_i64(0, s)
                }
            })
            .collect();
    }

    /// The shape of a gather's output (for a gradient `dY` of the same shape).
    fn gathered_shape(&self, fam: Family) -> Vec<usize> {
        match fam {
            Family::Axis => {
                let a = self.axis().min(self.data_shape.len());
                let b = self.batch_dims.unwrap_or(0).max(0) as usize;
                let mut s = self.data_shape[..a].to_vec();
                s.extend_from_slice(self.idx_shape.get(b..).unwrap_or_default());
                s.extend_from_slice(self.data_shape.get(a + 1..).unwrap_or_default());
                s
            }
            _ => self.idx_shape.clone(),
        }
    }

    /// Indices equal along each line of the axis (the same position gathered or written twice or
    /// more); the axis dim of the indices is made at least 2.
    fn duplicate(&mut self, rng: &mut Rng, fam: Family) {
        let s = self.axis_len() as i64;
        match fam {
            Family::Tuples { .. } | Family::Offsets => {}
            Family::Axis => {
                let v = rng.range_i64(0, s - 1);
                self.idx_shape = vec![3];
                self.idx = vec![v; 3];
            }
            Family::Elements { .. } => {
                let axis = self.axis();
                self.idx_shape[axis] = self.idx_shape[axis].max(2);
                let n: usize = self.idx_shape.iter().product();
                let mut lines: BTreeMap<Vec<usize>, i64> = BTreeMap::new();
                self.idx = (0..n)
                    .map(|flat| {
                        let mut coords = onnx_idx_check::tensor::unravel(flat, &self.idx_shape);
                        coords.remove(axis);
                        *lines
                            .entry(coords)
                            .or_insert_with(|| rng.range_i64(0, s - 1))
                    })
                    .collect();
            }
        }
    }
}

/// A valid call of rank `rank` along `axis` (the attribute, `None` to leave it out), dims 2 to 3
/// (2 to 4 for rank 2 and below), the indices' own dims no larger than the data's.
fn call(
    rng: &mut Rng,
    fam: Family,
    dtype: DType,
    idx_dtype: DType,
    rank: usize,
    axis: Option<i64>,
) -> Call {
    let hi = if rank <= 2 { 4 } else { 3 };
    let data_shape: Vec<usize> = (0..rank).map(|_| rng.range(2, hi)).collect();
    let mut c = Call {
        dtype,
        idx_dtype,
        data_shape,
        axis,
        idx_shape: Vec::new(),
        idx: Vec::new(),
        mode: None,
        extra: Vec::new(),
        data_overrides: Vec::new(),
        updates_overrides: Vec::new(),
        updates_shape: None,
        batch_dims: None,
        axis_input: (DType::Int64, false),
        axis_values: None,
        omit_optional: false,
        strings: Vec::new(),
        external: false,
        form: Form::Raw,
        ramp: false,
    };
    // Elements: each dim of the indices from 1 to the data's (the axis dim too, so that a
    // scatter's indices can be distinct along it).
    c.idx_shape = match fam {
        Family::Elements { .. } => c.data_shape.iter().map(|&n| rng.range(1, n)).collect(),
        _ => vec![rng.range(1, 3)],
    };
    c.fill(rng, fam);
    c
}

/// The traits every case carries: its dtype, index dtype and storage.
fn base_traits(c: &Call) -> Vec<String> {
    vec![
        format!("dtype:{}", c.dtype),
        format!("indices:{}", c.idx_dtype),
        match c.form {
            Form::Raw if c.dtype != DType::String => "storage:raw".to_owned(),
            _ => "storage:typed".to_owned(),
        },
    ]
}

/// The full profile's pass over one value dtype and one index dtype: every case of the version
/// made on that pair, where the quick profile makes the dtype-independent cases on the main pair
/// only (float data, int64 indices where allowed).
#[derive(Clone, Copy, Debug)]
struct Pass {
    dtype: DType,
    idx: DType,
}

/// Builds the cases of one operator version.
struct Builder<'a> {
    seed: u64,
    def: &'static OpDef,
    v: &'static OpVersion,
    fam: Family,
    out: &'a mut Vec<CaseSpec>,
    /// The full profile's current pass; `None` in the quick profile.
    pass: Option<Pass>,
}

impl Builder<'_> {
    /// `test_<op>_<version>_<dtype>_<slug>`, and in a full-profile pass over other indices than
    /// the main ones `_indices_<dtype>` after it (unless the slug already says so: the quick
    /// profile's `indices_int32` case keeps its name, and so its values, in the full one).
    fn name(&self, dtype: DType, slug: &str) -> String {
        let tag = match self.pass {
            Some(p)
                if Some(p.idx) != self.default_idx() && slug != format!("indices_{}", p.idx) =>
            {
                format!("_indices_{}", p.idx)
            }
            _ => String::new(),
        };
        format!(
            "test_{}{}_{}_{}_{slug}{tag}",
            domain_prefix(self.def.domain),
            snake(self.def.op_type),
            self.v.since,
            dtype,
        )
    }

    fn rng(&self, dtype: DType, slug: &str) -> Rng {
        Rng::for_case(self.seed, &self.name(dtype, slug))
    }

    /// Adds the case `slug` of call `c`, with `traits` beyond the base ones.
    fn push(&mut self, rng: &mut Rng, c: Call, slug: &str, traits: &[String], violation: bool) {
        let mut inputs = Vec::with_capacity(self.v.inputs.len());
        // A gradient has no data input: the data's specials go to it.
        let grad = self.v.input_with(Role::Data).is_none();
        let values = |rng: &mut Rng, shape: &[usize], overrides: &[Option<u64>]| match c
            .ramp
            .then(|| values::ramp(c.dtype, shape))
            .flatten()
        {
            Some(t) => Ok(t),
            None => values::tensor(rng, c.dtype, shape, overrides),
        };
        for spec in self.v.inputs {
            if spec.optional && c.omit_optional {
                break;
            }
            let t = match spec.role {
                Role::Indices => values::indices(c.idx_dtype, &c.idx_shape, &c.idx),
                Role::Updates => {
                    let shape = c
                        .updates_shape
                        .clone()
                        .unwrap_or_else(|| self.updates_shape(&c));
                    let overrides = if grad {
                        &c.data_overrides
                    } else {
                        &c.updates_overrides
                    };
                    values(rng, &shape, overrides)
                }
                Role::Shape => {
                    let dims: Vec<i64> = c.data_shape.iter().map(|&d| d as i64).collect();
                    values::indices(DType::Int64, &[dims.len()], &dims)
                }
                Role::Axis => {
                    let vals = c
                        .axis_values
                        .clone()
                        .unwrap_or_else(|| vec![c.axis.unwrap_or(0)]);
                    let (d, one_d) = c.axis_input;
                    let shape = if one_d || vals.len() != 1 {
                        vec![vals.len()]
                    } else {
                        Vec::new()
                    };
                    values::indices(d, &shape, &vals)
                }
                _ => values(rng, &c.data_shape, &c.data_overrides),
            };
            let t = match (t, spec.role) {
                (Ok(t), Role::Data | Role::Updates) if !c.strings.is_empty() => {
                    values::with_strings(t, &c.strings)
                }
                (t, _) => t,
            };
            // A shape the generator got wrong is a bug in this file; leave the case out rather
            // than panic, and the suite's own tests (which count the cases) will notice.
            let Ok(t) = t else { return };
            inputs.push(t);
        }
        let mut attrs = Vec::new();
        if let (Some(a), Some(spec)) = (c.axis, self.v.attr("axis")) {
            attrs.push(Attr::Int(spec.name, a));
        }
        if let Some(b) = c.batch_dims {
            attrs.push(Attr::Int("batch_dims", b));
        }
        if let (Some(m), Some(attr)) =
            (c.mode, mode_attr(self.v).or_else(|| self.later_mode_attr()))
        {
            attrs.push(Attr::Str(attr, m.to_owned()));
        }
        attrs.extend(c.extra.iter().cloned());
        let mut all = base_traits(&c);
        all.extend(traits.iter().cloned());
        all.sort();
        all.dedup();
        self.out.push(CaseSpec {
            name: self.name(c.dtype, slug),
            kind: format!(
                "{}{}_{}_{slug}",
                domain_prefix(self.def.domain),
                snake(self.def.op_type),
                self.v.since
            ),
            def: self.def,
            version: self.v,
            opset: self.v.since,
            dtype: c.dtype,
            attrs,
            inputs,
            form: c.form,
            external: c.external,
            traits: all,
            violation,
            context: None,
        });
    }

    /// The updates' shape the family derives from the call: a gradient has its forward op's
    /// output shape, ScatterND's updates are `indices.shape[:-1] ++ data.shape[k:]`, a
    /// scatter's element-wise updates the indices' shape.
    fn updates_shape(&self, c: &Call) -> Vec<usize> {
        match self.fam {
            Family::Tuples { .. } => {
                let q = c.idx_shape.len();
                let k = c.idx_shape.last().copied().unwrap_or(0);
                let mut s = c.idx_shape[..q.saturating_sub(1)].to_vec();
                s.extend_from_slice(c.data_shape.get(k..).unwrap_or_default());
                s
            }
            fam => c.gathered_shape(fam),
        }
    }

    /// The mode attribute a later version of the op defines (`reduction` before version 16).
    fn later_mode_attr(&self) -> Option<&'static str> {
        self.def
            .versions
            .iter()
            .filter(|x| x.since > self.v.since)
            .find_map(mode_attr)
    }

    /// The default mode of the first later version with a mode attribute.
    fn later_default(&self) -> Option<&'static &'static str> {
        self.def
            .versions
            .iter()
            .filter(|x| x.since > self.v.since && mode_attr(x).is_some())
            .find_map(|x| x.modes.first())
    }

    /// Whether indices of dtype `idx` can be negative here: the version counts negative
    /// indices and `idx` is signed (OpenVINO Gather-8 also takes unsigned ones, where -1 is a
    /// large index).
    fn negatives(&self, idx: DType) -> bool {
        self.v.negatives && idx.class() == onnx_idx_check::tensor::Class::Signed
    }

    /// The value dtypes the version allows.
    fn allowed_dtypes(&self) -> Vec<DType> {
        self.v
            .value_input()
            .and_then(|i| self.v.constraint_of(i))
            .map(|c| c.dtypes.iter().collect())
            .unwrap_or_default()
    }

    /// The index dtypes the version allows.
    fn allowed_idx_dtypes(&self) -> Vec<DType> {
        self.v
            .input_with(Role::Indices)
            .and_then(|i| self.v.constraint_of(i))
            .map(|c| c.dtypes.iter().collect())
            .unwrap_or_default()
    }

    /// The value dtypes the cases that loop over dtypes make: the pass's one, else every
    /// allowed one.
    fn dtypes(&self) -> Vec<DType> {
        match self.pass {
            Some(p) => vec![p.dtype],
            None => self.allowed_dtypes(),
        }
    }

    /// The index dtypes the cases that loop over them make: the pass's one, else every allowed
    /// one.
    fn idx_dtypes(&self) -> Vec<DType> {
        match self.pass {
            Some(p) => vec![p.idx],
            None => self.allowed_idx_dtypes(),
        }
    }

    /// float where allowed: the value dtype of the quick profile's dtype-independent cases.
    fn default_dtype(&self) -> Option<DType> {
        let d = self.allowed_dtypes();
        d.iter()
            .copied()
            .find(|&x| x == DType::Float)
            .or(d.first().copied())
    }

    /// int64 where allowed: the index dtype of the quick profile's cases.
    fn default_idx(&self) -> Option<DType> {
        let d = self.allowed_idx_dtypes();
        d.iter()
            .copied()
            .find(|&x| x == DType::Int64)
            .or(d.first().copied())
    }

    /// The value dtype of the dtype-independent cases: the pass's, else the default.
    fn main_dtype(&self) -> Option<DType> {
        self.pass.map(|p| p.dtype).or(self.default_dtype())
    }

    /// The index dtype of the cases: the pass's, else the default.
    fn main_idx(&self) -> Option<DType> {
        self.pass.map(|p| p.idx).or(self.default_idx())
    }

    fn build(&mut self) {
        let (Some(f), Some(i64d)) = (self.main_dtype(), self.main_idx()) else {
            return;
        };
        let fam = self.fam;
        match fam {
            Family::Tuples { .. } => return self.build_tuples(f, i64d),
            Family::Offsets => return self.build_offsets(f, i64d),
            Family::Axis | Family::Elements { .. } => {}
        }
        if self.v.deprecated {
            let mut rng = self.rng(f, "deprecated");
            let c = call(&mut rng, fam, f, i64d, 2, None);
            self.push(
                &mut rng,
                c,
                "deprecated",
                &["violation:deprecated".into()],
                true,
            );
            return;
        }
        // Every dtype, in both storage forms.
        for d in self.dtypes() {
            for (form, slug) in [(Form::Raw, "basic"), (Form::Typed, "storage_typed")] {
                if form == Form::Typed && d == DType::String {
                    continue; // strings are always typed: their basic case is that one
                }
                let mut rng = self.rng(d, slug);
                let mut c = call(&mut rng, fam, d, i64d, 2, None);
                c.form = form;
                self.push(&mut rng, c, slug, &[], false);
            }
        }
        // Every index dtype.
        for d in self.idx_dtypes() {
            let slug = format!("indices_{d}");
            let mut rng = self.rng(f, &slug);
            let c = call(&mut rng, fam, f, d, 2, None);
            self.push(&mut rng, c, &slug, &[], false);
        }
        self.indices_cases(f, i64d);
        self.shape_cases(f, i64d);
        self.special_cases(i64d);
        self.mode_cases(i64d);
        self.axis_input_cases(f, i64d);
        self.batch_dims_cases(f, i64d);
        self.trait_cases(i64d);
        self.violation_cases(f, i64d);
    }

    /// Negative, boundary, rank-0, duplicate and empty indices.
    fn indices_cases(&mut self, f: DType, i64d: DType) {
        let fam = self.fam;
        let negatives = self.negatives(i64d);
        if negatives {
            let mut rng = self.rng(f, "negative_indices");
            let mut c = call(&mut rng, fam, f, i64d, 2, None);
            let s = c.axis_len() as i64;
            c.idx.iter_mut().for_each(|x| *x -= s);
            self.push(
                &mut rng,
                c,
                "negative_indices",
                &["negative-indices".into()],
                false,
            );
        }
        // 0, s-1, -1 and -s: each end from each side.
        let mut rng = self.rng(f, "boundary_indices");
        let s = rng.range(2, 4);
        let mut ends = vec![0, s as i64 - 1];
        if negatives {
            ends.extend([-1, -(s as i64)]);
        }
        let mut c = call(&mut rng, fam, f, i64d, 2, None);
        match fam {
            Family::Axis => {
                c.data_shape = vec![s, rng.range(1, 3)];
                c.idx_shape = vec![ends.len()];
            }
            // One end per line along axis 0, so no two land on one element of a scatter.
            _ => {
                c.data_shape = vec![s, ends.len()];
                c.idx_shape = vec![1, ends.len()];
            }
        }
        c.idx = ends;
        let traits = ["boundary-indices".to_owned(), "negative-indices".to_owned()];
        let n = if negatives { 2 } else { 1 };
        self.push(&mut rng, c, "boundary_indices", &traits[..n], false);
        if fam == Family::Axis {
            // A scalar index drops the axis; on 1-D data the output is a scalar too.
            for (rank, slug) in [(2, "rank0_indices"), (1, "rank0_indices_rank1_data")] {
                let mut rng = self.rng(f, slug);
                let mut c = call(&mut rng, fam, f, i64d, rank, None);
                c.idx_shape = Vec::new();
                c.fill(&mut rng, fam);
                self.push(&mut rng, c, slug, &["rank0-indices".into()], false);
            }
        }
        if self.def.indexing.duplicates() {
            let mut rng = self.rng(f, "duplicates");
            let mut c = call(&mut rng, fam, f, i64d, 2, None);
            c.duplicate(&mut rng, fam);
            self.push(&mut rng, c, "duplicates", &["duplicates".into()], false);
        }
        // Empty indices (nothing gathered or written), and data with an empty dim off the axis.
        let mut rng = self.rng(f, "zero_size_indices");
        let mut c = call(&mut rng, fam, f, i64d, 2, None);
        c.idx_shape[0] = 0;
        c.fill(&mut rng, fam);
        self.push(
            &mut rng,
            c,
            "zero_size_indices",
            &["zero-size-dims".into()],
            false,
        );
        let mut rng = self.rng(f, "zero_size_data");
        let mut c = call(&mut rng, fam, f, i64d, 2, None);
        c.data_shape[1] = 0;
        if fam != Family::Axis {
            c.idx_shape[1] = 0;
        }
        c.fill(&mut rng, fam);
        self.push(
            &mut rng,
            c,
            "zero_size_data",
            &["zero-size-dims".into()],
            false,
        );
    }

    /// Ranks 1 to 4, every axis, given positive and negative.
    fn shape_cases(&mut self, f: DType, i64d: DType) {
        for rank in 1..=4usize {
            let r = rank as i64;
            for a in (-r..r).rev() {
                let slug = if a < 0 {
                    format!("rank{rank}_axis_neg{}", -a)
                } else {
                    format!("rank{rank}_axis{a}")
                };
                let mut rng = self.rng(f, &slug);
                let c = call(&mut rng, self.fam, f, i64d, rank, Some(a));
                let traits = [format!("rank:{rank}"), format!("axis:{a}")];
                self.push(&mut rng, c, &slug, &traits, false);
            }
        }
    }

    /// NaN, -0, +0, +inf and -inf in the data (and updates) of every float dtype.
    fn special_cases(&mut self, i64d: DType) {
        let fam = self.fam;
        for d in self
            .dtypes()
            .into_iter()
            .filter(|&d| values::has_specials(d))
        {
            let sp: Vec<Option<u64>> = values::specials(d).into_iter().map(Some).collect();
            let mut rng = self.rng(d, "float_specials");
            let mut c = call(&mut rng, fam, d, i64d, 2, None);
            // Row 0 holds the specials; every row is read (gathers) or row 1 is overwritten
            // with specials while row 0 stays (scatters).
            c.data_shape = vec![2, sp.len()];
            c.data_overrides = sp.clone();
            match fam {
                Family::Axis => {
                    c.idx_shape = vec![2];
                    c.idx = vec![1, 0];
                }
                Family::Elements { scatter: false } => {
                    c.idx_shape = vec![2, sp.len()];
                    c.idx = (0..2 * sp.len())
                        .map(|i| 1 - (i / sp.len()) as i64)
                        .collect();
                }
                Family::Elements { scatter: true } => {
                    c.idx_shape = vec![1, sp.len()];
                    c.idx = vec![1; sp.len()];
                    c.updates_overrides = sp;
                }
                Family::Tuples { .. } | Family::Offsets => continue,
            }
            self.push(
                &mut rng,
                c,
                "float_specials",
                &["float-specials".into()],
                false,
            );
        }
    }

    /// The axis as an input (OpenVINO Gather-8): int32 as well as int64, a 1-element 1-D tensor
    /// as well as a scalar; two elements break the rule.
    fn axis_input_cases(&mut self, f: DType, i64d: DType) {
        if self.v.input_with(Role::Axis).is_none() {
            return;
        }
        let fam = self.fam;
        for (slug, input, values, trait_, violation) in [
            (
                "axis_input_int32",
                (DType::Int32, false),
                None,
                "axis-input:int32",
                false,
            ),
            (
                "axis_input_1d",
                (DType::Int64, true),
                None,
                "axis-input:1d",
                false,
            ),
            (
                "axis_input_two_elements",
                (DType::Int64, true),
                Some(vec![0, 0]),
                "violation:axis-input-two-elements",
                true,
            ),
        ] {
            let mut rng = self.rng(f, slug);
            let mut c = call(&mut rng, fam, f, i64d, 2, Some(-1));
            c.axis_input = input;
            c.axis_values = values;
            self.push(&mut rng, c, slug, &[trait_.into()], violation);
        }
    }

    /// batch_dims of a gather along an axis (OpenVINO Gather-8): 1, 2, negative (counted from
    /// the indices' rank), equal to the indices' rank; and its rules: at most the axis, within
    /// [-min(rd, ri), min(rd, ri)], equal leading dims.
    fn batch_dims_cases(&mut self, f: DType, i64d: DType) {
        if self.fam != Family::Axis || self.v.attr("batch_dims").is_none() {
            return;
        }
        // slug, data shape, indices shape, batch_dims, axis, traits, violation
        type BatchCase<'a> = (
            &'a str,
            &'a [usize],
            &'a [usize],
            i64,
            i64,
            &'a [&'a str],
            bool,
        );
        let cases: [BatchCase; 7] = [
            (
                "batch_dims_1",
                &[2, 3, 4],
                &[2, 2],
                1,
                2,
                &["batch-dims:1"],
                false,
            ),
            (
                "batch_dims_2",
                &[2, 2, 3, 2],
                &[2, 2, 3],
                2,
                2,
                &["batch-dims:2"],
                false,
            ),
            (
                "batch_dims_negative",
                &[2, 3, 4],
                &[2, 3],
                -1,
                1,
                &["batch-dims:negative"],
                false,
            ),
            (
                "batch_dims_equals_indices_rank",
                &[2, 3],
                &[2],
                1,
                1,
                &["batch-dims:indices-rank"],
                false,
            ),
            ("batch_dims_past_axis", &[2, 3], &[2, 2], 1, 0, &[], true),
            (
                "batch_dims_out_of_range",
                &[2, 3, 4],
                &[2, 2],
                3,
                2,
                &[],
                true,
            ),
            ("batch_dims_mismatch", &[2, 3, 4], &[3, 2], 1, 2, &[], true),
        ];
        for (slug, data, idx, b, axis, traits, violation) in cases {
            let mut rng = self.rng(f, slug);
            let mut c = call(&mut rng, self.fam, f, i64d, 2, Some(axis));
            c.data_shape = data.to_vec();
            c.idx_shape = idx.to_vec();
            c.batch_dims = Some(b);
            c.fill(&mut rng, self.fam);
            let mut t: Vec<String> = traits.iter().map(|s| (*s).to_owned()).collect();
            if violation {
                t.push(format!("violation:{}", slug.replace('_', "-")));
            } else {
                t.push("batch_dims>0".into());
            }
            self.push(&mut rng, c, slug, &t, violation);
        }
    }

    /// Each mode (reduction) of the version on every dtype, the updates landing two or more to
    /// an element; the default mode given explicitly.
    fn mode_cases(&mut self, i64d: DType) {
        let Some(attr) = mode_attr(self.v) else {
            return;
        };
        for (k, &m) in self.v.modes.iter().enumerate() {
            let dtypes = if k == 0 {
                self.main_dtype().into_iter().collect()
            } else {
                self.dtypes()
            };
            for d in dtypes {
                let slug = format!("{attr}_{m}");
                let mut rng = self.rng(d, &slug);
                let mut c = self.valid_call(&mut rng, d, i64d);
                c.mode = Some(m);
                self.make_duplicates(&mut c, &mut rng);
                let traits = [format!("{attr}:{m}"), "duplicates".to_owned()];
                self.push(&mut rng, c, &slug, &traits, false);
            }
        }
    }

    /// One case per rule the spec requires an error for: an index just past each end (or any
    /// negative index where they do not count), an axis past each end, a mode the version does
    /// not have, a dtype a later version allows, and the element-wise shape rules (D6).
    fn violation_cases(&mut self, f: DType, i64d: DType) {
        let fam = self.fam;
        let add = |b: &mut Self, slug: &str, change: &dyn Fn(&mut Call, &mut Rng)| {
            let mut rng = b.rng(f, slug);
            let mut c = call(&mut rng, fam, f, i64d, 2, None);
            change(&mut c, &mut rng);
            let t = format!("violation:{}", slug.replace('_', "-"));
            b.push(&mut rng, c, slug, &[t], true);
        };
        if self.v.zero_fills() {
            // Not a violation here: the output block of an index outside [-s, s-1] is zeros.
            for (slug, past) in [
                ("index_past_end_zero_fill", true),
                ("index_before_start_zero_fill", false),
            ] {
                if !past && !self.negatives(i64d) {
                    continue;
                }
                let mut rng = self.rng(f, slug);
                let mut c = call(&mut rng, fam, f, i64d, 2, None);
                let s = c.axis_len() as i64;
                c.idx_shape = vec![3];
                c.idx = vec![
                    if past { s } else { -s - 1 },
                    0,
                    if past { 100 } else { -100 },
                ];
                let traits = [
                    "out-of-range-zero-fill".to_owned(),
                    "negative-indices".into(),
                ];
                let n = if past { 1 } else { 2 };
                self.push(&mut rng, c, slug, &traits[..n], false);
            }
        } else {
            add(self, "index_past_end", &|c, _| {
                c.idx[0] = c.axis_len() as i64
            });
            // Several indices well past the end of a 1-D axis: a runtime that reads past its
            // buffer shows what lies there (OpenVINO's CPU plugin returns neighbouring memory for
            // 16/32/64-bit integers), where one index just past the end of a row may read zeros.
            if matches!(fam, Family::Axis | Family::Elements { .. }) {
                add(self, "indices_far_past_end", &|c, rng| c.far_past_end(rng));
            }
            if self.v.negatives {
                add(self, "index_before_start", &|c, _| {
                    c.idx[0] = -(c.axis_len() as i64) - 1
                });
            } else {
                add(self, "negative_index_refused", &|c, _| c.idx[0] = -1);
            }
        }
        add(self, "axis_past_end", &|c, _| {
            c.axis = Some(c.data_shape.len() as i64)
        });
        add(self, "axis_before_start", &|c, _| {
            c.axis = Some(-(c.data_shape.len() as i64) - 1)
        });
        if let Family::Elements { scatter } = fam {
            add(self, "indices_rank_mismatch", &|c, rng| {
                c.idx_shape = vec![c.idx_shape[0]];
                c.fill(rng, Family::Axis);
            });
            add(self, "indices_dim_too_large", &|c, rng| {
                c.idx_shape[1] = c.data_shape[1] + 1;
                c.fill(rng, fam);
            });
            if scatter {
                add(self, "updates_shape_mismatch", &|c, _| {
                    let mut s = c.idx_shape.clone();
                    s[1] += 1;
                    c.updates_shape = Some(s);
                });
            }
        } else if self.v.input_with(Role::Updates).is_some() {
            // A gradient of another shape than the forward output.
            add(self, "updates_shape_mismatch", &|c, _| {
                let mut s = c.gathered_shape(fam);
                if let Some(d) = s.last_mut() {
                    *d += 1;
                }
                c.updates_shape = Some(s);
            });
        }
        self.common_violations(f, i64d);
    }

    /// A valid call of the version's family, of rank 2 where the family allows it.
    fn valid_call(&self, rng: &mut Rng, d: DType, idx: DType) -> Call {
        match self.fam {
            Family::Tuples { .. } => self.tuple_call(rng, d, idx, 2, 1, &[2]),
            Family::Offsets => self.offset_call(rng, d, idx, 3),
            fam => call(rng, fam, d, idx, 2, None),
        }
    }

    /// Makes `c` land two or more positions on one element.
    fn make_duplicates(&self, c: &mut Call, rng: &mut Rng) {
        match self.fam {
            Family::Tuples { .. } => tuples::duplicate(c, rng),
            Family::Offsets => {}
            fam => c.duplicate(rng, fam),
        }
    }

    /// The violations every family shares: a mode the version does not have (or the mode
    /// attribute before the version that defines it), a dtype only a later version admits (or
    /// none does), an index dtype the version does not admit.
    fn common_violations(&mut self, f: DType, i64d: DType) {
        // Modes of later versions that this one does not have; where this version has no mode
        // attribute at all, one case gives it (with a mode other than the default, so that it
        // cannot pass for a no-op).
        let later: Vec<&'static str> = self
            .def
            .versions
            .iter()
            .filter(|x| x.since > self.v.since)
            .flat_map(|x| x.modes.iter().copied())
            .filter(|m| !self.v.modes.contains(m))
            .collect();
        let mut bad: Vec<(&'static str, String)> = Vec::new();
        match (mode_attr(self.v), self.later_mode_attr()) {
            (Some(attr), _) => {
                for m in later {
                    let slug = format!("{attr}_{m}_not_defined");
                    if !bad.iter().any(|(_, s)| *s == slug) {
                        bad.push((m, slug));
                    }
                }
            }
            (None, Some(attr)) => {
                if let Some(m) = later
                    .into_iter()
                    .find(|&m| Some(&m) != self.later_default())
                {
                    bad.push((m, format!("{attr}_attribute_not_defined")));
                }
            }
            (None, None) => {}
        }
        for (m, slug) in bad {
            let mut rng = self.rng(f, &slug);
            let mut c = self.valid_call(&mut rng, f, i64d);
            c.mode = Some(m);
            self.make_duplicates(&mut c, &mut rng);
            let t = format!("violation:{}", slug.replace('_', "-"));
            self.push(&mut rng, c, &slug, &[t], true);
        }
        // Dtypes a later version admits and this one does not (bfloat16 before 13); where no
        // version admits more, int32 when no version admits it (the backward ops' float T).
        let mine = self.allowed_dtypes();
        let mut later_dtypes: Vec<DType> = self
            .def
            .versions
            .iter()
            .filter(|x| x.since > self.v.since && !x.deprecated)
            .filter_map(|x| x.value_input().and_then(|i| x.constraint_of(i)))
            .flat_map(|c| c.dtypes.iter())
            .filter(|d| !mine.contains(d))
            .collect();
        let admitted_anywhere = |d: DType| {
            self.def.versions.iter().any(|x| {
                x.value_input()
                    .and_then(|i| x.constraint_of(i))
                    .is_some_and(|c| c.dtypes.contains(d))
            })
        };
        if later_dtypes.is_empty() && !admitted_anywhere(DType::Int32) {
            later_dtypes.push(DType::Int32);
        }
        later_dtypes.sort();
        later_dtypes.dedup();
        // Their names do not carry the value dtype of a full-profile pass: one pass makes them.
        if self.pass.is_some() && self.main_dtype() != self.default_dtype() {
            later_dtypes.clear();
        }
        for d in later_dtypes {
            let slug = "dtype_not_allowed";
            let mut rng = self.rng(d, slug);
            let c = self.valid_call(&mut rng, d, i64d);
            self.push(
                &mut rng,
                c,
                slug,
                &["violation:dtype-not-allowed".into()],
                true,
            );
        }
        // int32 indices where only int64 are admitted (D6).
        if !self.allowed_idx_dtypes().contains(&DType::Int32) {
            let slug = "indices_int32_not_allowed";
            let mut rng = self.rng(f, slug);
            let mut c = self.valid_call(&mut rng, f, DType::Int32);
            if c.omit_optional {
                c.omit_optional = false;
            }
            self.push(
                &mut rng,
                c,
                slug,
                &["violation:indices-dtype-not-allowed".into()],
                true,
            );
        }
    }
}

/// How many cases to make of each operator version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Breadth {
    /// Each dtype-independent case once, on float data and int64 indices where allowed; each
    /// dtype and index dtype in cases of their own.
    Quick,
    /// Every case on every allowed value dtype crossed with every allowed index dtype (a
    /// superset of quick: its cases keep their names and values).
    Full,
}

/// The operator versions of `ops` the generator writes, with their families, in a stable order.
pub fn versions(ops: &[&'static OpDef]) -> Vec<(&'static OpDef, &'static OpVersion)> {
    ops.iter()
        .flat_map(|&def| def.versions.iter().map(move |v| (def, v)))
        .filter(|(def, v)| family(def, v).is_some())
        .collect()
}

/// The cases of one operator version at `breadth`, in a stable order.
pub fn of_version(
    breadth: Breadth,
    seed: u64,
    def: &'static OpDef,
    v: &'static OpVersion,
) -> Vec<CaseSpec> {
    let mut out = Vec::new();
    let Some(fam) = family(def, v) else {
        return out;
    };
    let mut b = Builder {
        seed,
        def,
        v,
        fam,
        out: &mut out,
        pass: None,
    };
    if breadth == Breadth::Quick || v.deprecated {
        b.build();
        return out;
    }
    for idx in b.allowed_idx_dtypes() {
        for dtype in b.allowed_dtypes() {
            b.pass = Some(Pass { dtype, idx });
            b.build();
        }
    }
    out
}

/// The cases `make` builds for one operator version (none for a version of no family).
fn built(
    seed: u64,
    def: &'static OpDef,
    v: &'static OpVersion,
    make: impl FnOnce(&mut Builder<'_>),
) -> Vec<CaseSpec> {
    let mut out = Vec::new();
    if let Some(fam) = family(def, v) {
        make(&mut Builder {
            seed,
            def,
            v,
            fam,
            out: &mut out,
            pass: None,
        });
    }
    out
}

/// The stress profile's large cases of one operator version (none unless it is the latest):
/// see [`large`].
pub fn large(seed: u64, def: &'static OpDef, v: &'static OpVersion) -> Vec<CaseSpec> {
    built(seed, def, v, |b| b.large_cases())
}

/// The hunt's crossed cases of one operator version, their shapes and dtype pair drawn from
/// `seed`: see [`crossed`].
pub fn crossed(seed: u64, def: &'static OpDef, v: &'static OpVersion) -> Vec<CaseSpec> {
    built(seed, def, v, |b| b.crossed_cases())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_names_follow_onnx_s_snake_case() {
        assert_eq!(snake("GatherElements"), "gather_elements");
        assert_eq!(snake("ScatterND"), "scatter_nd");
        assert_eq!(snake("Gather"), "gather");
    }

    #[test]
    fn every_operator_of_the_registry_has_a_family() {
        let generated = generated_ops();
        for d in REGISTRY.iter().filter(|d| !d.plumbing) {
            assert!(
                generated.iter().any(|g| std::ptr::eq(*g, *d)),
                "{} has no family",
                d.op_type
            );
        }
        assert!(generated.iter().all(|d| !d.plumbing));
        assert_eq!(domain_prefix(""), "");
        assert_eq!(domain_prefix("org.openvinotoolkit"), "openvinotoolkit_");
    }

    /// Every case of `breadth`, in a stable order.
    fn all(breadth: Breadth) -> Vec<CaseSpec> {
        versions(&generated_ops())
            .into_iter()
            .flat_map(|(def, v)| of_version(breadth, 0, def, v))
            .collect()
    }

    #[test]
    fn names_are_unique() {
        for breadth in [Breadth::Quick, Breadth::Full] {
            let cases = all(breadth);
            let mut names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
            let n = names.len();
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), n, "{breadth:?}");
        }
    }

    #[test]
    fn far_past_end_reads_1d_data_at_every_other_index_well_past_its_end() {
        let quick = all(Breadth::Quick);
        let far: Vec<&CaseSpec> = quick
            .iter()
            .filter(|c| c.name.ends_with("_indices_far_past_end"))
            .collect();
        // Gather 1/11/13, GatherElements 11/13, Scatter-9, ScatterElements 11/13/16/18, the
        // two gradients and OpenVINO's Gather-1 and Gather-7; not its Gather-8, which zero-fills.
        assert_eq!(
            far.len(),
            14,
            "{:?}",
            far.iter().map(|c| &c.name).collect::<Vec<_>>()
        );
        for c in far {
            assert!(c.violation, "{}", c.name);
            let input = |role| {
                let i = c.version.input_with(role).expect("the input");
                c.inputs[i].to_i64_vec().expect("integers")
            };
            // The data's length, or for a gradient the one dim of its `shape` input.
            let s = match c.version.input_with(Role::Data) {
                Some(i) => c.inputs[i].shape().iter().product::<usize>() as i64,
                None => input(Role::Shape)[0],
            };
            let values = input(Role::Indices);
            assert_eq!(values.len(), 6, "{}", c.name);
            for (k, &x) in values.iter().enumerate() {
                if k % 2 == 0 {
                    assert!((0..s).contains(&x), "{}: {x} of {s}", c.name);
                } else {
                    assert!(x > s && x <= 2 * s + 1, "{}: {x} of {s}", c.name);
                }
            }
        }
    }

    #[test]
    fn full_holds_every_quick_case_unchanged_and_every_dtype_pair() {
        let quick = all(Breadth::Quick);
        let full: BTreeMap<String, CaseSpec> = all(Breadth::Full)
            .into_iter()
            .map(|c| (c.name.clone(), c))
            .collect();
        assert!(full.len() > 10 * quick.len(), "{} cases", full.len());
        for q in &quick {
            let f = &full[&q.name];
            assert_eq!(
                (&f.inputs, &f.attrs, &f.traits),
                (&q.inputs, &q.attrs, &q.traits)
            );
        }
        // Every value dtype of Gather-13 gets 1-D data read far past its end.
        for d in ["int16", "int32", "int64", "uint8", "float"] {
            let c = &full[&format!("test_gather_13_{d}_indices_far_past_end")];
            assert!(c.violation);
            assert_eq!(c.inputs[0].shape().len(), 1);
        }
        // A dtype-independent trait on a pair quick does not make: int8 data, int32 indices.
        let c = &full["test_gather_13_int8_negative_indices_indices_int32"];
        assert_eq!(c.inputs[0].dtype(), DType::Int8);
        assert_eq!(c.inputs[1].dtype(), DType::Int32);
    }
}
