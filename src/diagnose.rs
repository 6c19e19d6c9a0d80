//! Diagnosis of wrong results.
//!
//! For an indexing op, every output element comes from somewhere: a data element picked by an
//! index, or a data element combined with the updates aimed at it. This module models that
//! *provenance* once per operator, with switches ("quirks") for the wrong semantics that real
//! runtimes have shipped: negative indices not normalised, out-of-range indices wrapped, clamped
//! or zero-filled, duplicates resolved first-write-wins, the reduction ignored, the axis or
//! batch_dims ignored, a reduction accumulated in another order. A wrong output is explained by
//! every quirk whose result reproduces it exactly, most specific first; each listed mismatch is
//! explained by the provenance of its element under the correct semantics.
//!
//! Values under a quirk are computed by the same element copies and reduction arithmetic as the
//! kernels ([`crate::ops::reduction`]), so a reproduction is bit-exact, not approximate.

use crate::compare::{compare, Mode, Tolerance};
use crate::ops::gather_elements::{check_element_shapes, for_each_element};
use crate::ops::reduction::{self, Reduction, Visit};
use crate::ops::{self, Attrs, Resolution};
use crate::pb::NodeProto;
use crate::tensor::{numel, strides, unravel, DType, Layout, Storage, Tensor};

/// A known class of wrong indexing semantics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BugClass {
    /// Negative indices used as they are (read as index 0, or as a zero element).
    NegativeNotNormalized,
    /// Out-of-range indices taken modulo the axis size.
    OobWrapped,
    /// Out-of-range indices clamped to the nearest valid index.
    OobClamped,
    /// Out-of-range indices giving zeros (gathers) or ignored (scatters).
    OobZeroFilled,
    /// Duplicate scatter indices resolved by the first write instead of the last.
    FirstWriteWins,
    /// The `reduction` attribute ignored (treated as `none`).
    ReductionIgnored,
    /// The `axis` attribute ignored (0 used).
    AxisIgnored,
    /// The `batch_dims` attribute ignored (0 used).
    BatchDimsIgnored,
    /// A float reduction accumulated in another order (reverse row-major).
    AccumulationOrder,
}

impl BugClass {
    /// Every class, in the order they are tried.
    pub const ALL: [BugClass; 9] = [
        BugClass::NegativeNotNormalized,
        BugClass::OobWrapped,
        BugClass::OobClamped,
        BugClass::OobZeroFilled,
        BugClass::FirstWriteWins,
        BugClass::ReductionIgnored,
        BugClass::AxisIgnored,
        BugClass::BatchDimsIgnored,
        BugClass::AccumulationOrder,
    ];

    /// The stable identifier used in reports.
    pub fn id(self) -> &'static str {
        match self {
            BugClass::NegativeNotNormalized => "negative-not-normalized",
            BugClass::OobWrapped => "oob-wrapped",
            BugClass::OobClamped => "oob-clamped",
            BugClass::OobZeroFilled => "oob-zero-filled",
            BugClass::FirstWriteWins => "first-write-wins",
            BugClass::ReductionIgnored => "reduction-ignored",
            BugClass::AxisIgnored => "axis-ignored",
            BugClass::BatchDimsIgnored => "batch-dims-ignored",
            BugClass::AccumulationOrder => "accumulation-order",
        }
    }

    /// A sentence for people.
    pub fn sentence(self) -> &'static str {
        match self {
            BugClass::NegativeNotNormalized => {
                "negative indices were not normalised (read as index 0 or as a zero element instead of counting from the back)"
            }
            BugClass::OobWrapped => "out-of-range indices were wrapped modulo the axis size",
            BugClass::OobClamped => "out-of-range indices were clamped to the nearest valid index",
            BugClass::OobZeroFilled => {
                "out-of-range indices produced zeros (or their updates were dropped)"
            }
            BugClass::FirstWriteWins => "duplicate indices kept the first write instead of the last in row-major order",
            BugClass::ReductionIgnored => "the reduction attribute was ignored: updates overwrote instead of combining",
            BugClass::AxisIgnored => "the axis attribute was ignored: axis 0 was used",
            BugClass::BatchDimsIgnored => "the batch_dims attribute was ignored: batch_dims 0 was used",
            BugClass::AccumulationOrder => {
                "the reduction accumulated in another order (reverse row-major) than the sequential row-major order"
            }
        }
    }
}

/// The node whose output is diagnosed, and the inputs it received.
#[derive(Debug)]
pub struct Subject<'a> {
    /// The node.
    pub node: &'a NodeProto,
    /// Its canonical domain (`""` for ONNX).
    pub domain: &'a str,
    /// The resolved version (`since`).
    pub since: i64,
    /// Inputs by position.
    pub inputs: Vec<Option<&'a Tensor>>,
}

/// How negative indices resolve.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
enum Neg {
    #[default]
    FromBack,
    AsIndexZero,
    AsZeroValue,
}

/// How out-of-range indices resolve.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
enum Oob {
    #[default]
    Invalid,
    Wrap,
    Clamp,
    Zero,
}

/// The wrong semantics being tried (all off: the correct semantics).
#[derive(Clone, Copy, Debug, Default)]
pub struct Quirks {
    neg: Neg,
    oob: Oob,
    reverse: bool,
    reduction: Option<Reduction>,
    axis_zero: bool,
    batch_zero: bool,
    /// The most output elements worth computing: the size of the output being explained, since
    /// an interpretation of another size cannot reproduce it. Bounds what a hostile case can
    /// make the diagnosis allocate; `None` where the op's own output was already computed.
    cap: Option<usize>,
}

impl Quirks {
    /// Whether an output of `n` elements is worth computing.
    fn admits(&self, n: usize) -> bool {
        self.cap.is_none_or(|cap| n <= cap)
    }
}

/// Where an index points.
enum Resolved {
    At(usize),
    Zero,
    Invalid,
}

fn resolve(k: i64, s: usize, q: &Quirks) -> Resolved {
    let si = i64::try_from(s).unwrap_or(i64::MAX);
    if (0..si).contains(&k) {
        return Resolved::At(k as usize);
    }
    if k < 0 && k >= -si {
        return match q.neg {
            Neg::FromBack => Resolved::At((k + si) as usize),
            Neg::AsIndexZero => Resolved::At(0),
            Neg::AsZeroValue => Resolved::Zero,
        };
    }
    if s == 0 {
        return Resolved::Invalid;
    }
    match q.oob {
        Oob::Invalid => Resolved::Invalid,
        Oob::Wrap => Resolved::At(k.rem_euclid(si) as usize),
        Oob::Clamp => Resolved::At(if k < 0 { 0 } else { s - 1 }),
        Oob::Zero => Resolved::Zero,
    }
}

/// The op's index input as values and shape, for messages.
pub struct IndexInfo {
    values: Vec<i64>,
    shape: Vec<usize>,
    /// The axis indexed (element-wise ops), or `None` for tuple indices (GatherND/ScatterND).
    axis: Option<usize>,
    /// Tuple length for ND ops.
    tuple: usize,
}

impl IndexInfo {
    /// `indices[1,0] = -2 on axis 0`, or `indices[1,:] = [0, -1]` for a tuple.
    fn describe(&self, pos: usize) -> String {
        let coords = |flat: usize, shape: &[usize]| {
            unravel(flat, shape)
                .iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        match self.axis {
            Some(axis) if self.shape.is_empty() => {
                format!(
                    "indices = {} on axis {axis}",
                    self.values.get(pos).copied().unwrap_or(0)
                )
            }
            Some(axis) => format!(
                "indices[{}] = {} on axis {axis}",
                coords(pos, &self.shape),
                self.values.get(pos).copied().unwrap_or(0)
            ),
            None => {
                let lead = &self.shape[..self.shape.len().saturating_sub(1)];
                let tuple: Vec<String> = self
                    .values
                    .iter()
                    .skip(pos * self.tuple)
                    .take(self.tuple)
                    .map(|v| v.to_string())
                    .collect();
                let c = coords(pos, lead);
                let sep = if c.is_empty() { "" } else { "," };
                format!("indices[{c}{sep}:] = [{}]", tuple.join(", "))
            }
        }
    }
}

/// What an op does, element by element, under some quirks.
pub enum Semantics<'a> {
    /// Each output element is a copy of one data element (or zero).
    Gathered {
        /// The tensor read from.
        data: &'a Tensor,
        /// The output's shape.
        shape: Vec<usize>,
        /// Per output element: (data flat offset or None for zero, index position).
        origin: Vec<(Option<usize>, usize)>,
        /// The index input, for messages.
        index: IndexInfo,
    },
    /// The output starts as data (or zeros) and receives updates in order.
    Scattered {
        /// The starting tensor, or `None` for zeros.
        base: Option<&'a Tensor>,
        /// The output's dtype.
        dtype: DType,
        /// The output's shape.
        shape: Vec<usize>,
        /// The values written.
        updates: &'a Tensor,
        /// (output flat, updates flat, index position), in application order.
        pairs: Vec<(usize, usize, usize)>,
        /// How an update combines with what is there.
        reduction: Reduction,
        /// The index input, for messages.
        index: IndexInfo,
    },
}

impl<'a> Subject<'a> {
    /// Input `i`, when present.
    pub fn input(&self, i: usize) -> Option<&'a Tensor> {
        self.inputs.get(i).copied().flatten()
    }

    /// The INT attribute `name`, or `default`; `None` when it is mistyped.
    pub fn int_attr(&self, name: &str, default: i64) -> Option<i64> {
        Attrs::of_node(self.node).int(name, default).ok()
    }

    /// The `axis` attribute (default 0) normalised against `rank`, or 0 under the axis-ignored
    /// quirk.
    pub fn axis(&self, rank: usize, q: &Quirks) -> Option<usize> {
        if q.axis_zero {
            Some(0)
        } else {
            norm_axis(self.int_attr("axis", 0)?, rank)
        }
    }

    /// The `batch_dims` attribute (default 0), or 0 under the batch-dims-ignored quirk.
    pub fn batch_dims(&self, q: &Quirks) -> Option<i64> {
        if q.batch_zero {
            Some(0)
        } else {
            self.int_attr("batch_dims", 0)
        }
    }

    /// The `reduction` attribute (default none), or the one a quirk imposes.
    pub fn reduction(&self, q: &Quirks) -> Option<Reduction> {
        q.reduction.or_else(|| reduction_of(self.node))
    }
}

impl Quirks {
    /// The reduction a quirk imposes, if any (the backward ops' accumulation is add otherwise).
    pub fn reduction(&self) -> Option<Reduction> {
        self.reduction
    }

    /// Whether the axis is forced to 0.
    pub fn axis_ignored(&self) -> bool {
        self.axis_zero
    }

    /// These quirks for an op whose correct semantics zero-fill out-of-range indices (OpenVINO
    /// Gather-8): unless a quirk says otherwise, out of range reads as zero.
    pub fn zero_filling(&self) -> Quirks {
        if self.oob == Oob::Invalid {
            Quirks {
                oob: Oob::Zero,
                ..*self
            }
        } else {
            *self
        }
    }
}

/// Builds what operator `def` does, element by element, for a subject under some quirks: the
/// registry's hook ([`crate::ops::OpDef::provenance`]) that lets one diagnosis serve every op.
pub type Provenance = for<'a> fn(&Subject<'a>, &Quirks) -> Option<Semantics<'a>>;

fn norm_axis(axis: i64, rank: usize) -> Option<usize> {
    let r = i64::try_from(rank).ok()?;
    let a = if axis < 0 { axis + r } else { axis };
    (0..r).contains(&a).then_some(a as usize)
}

fn reduction_of(node: &NodeProto) -> Option<Reduction> {
    parse_reduction(&Attrs::of_node(node).string("reduction", "none").ok()?)
}

fn parse_reduction(s: &str) -> Option<Reduction> {
    let all = [
        Reduction::None,
        Reduction::Add,
        Reduction::Mul,
        Reduction::Max,
        Reduction::Min,
    ];
    all.into_iter().find(|r| r.name() == s)
}

/// What the op combines updates with under its correct semantics: the `reduction` attribute
/// where the version has one, else what the registry says the version always does (the backward
/// ops accumulate with add).
fn correct_reduction(subj: &Subject<'_>) -> Reduction {
    let Resolution::Found(_, v) = ops::resolve(subj.domain, &subj.node.op_type, subj.since) else {
        return Reduction::None;
    };
    match v.mode_attr {
        Some(_) => reduction_of(subj.node),
        None => v.modes.first().and_then(|m| parse_reduction(m)),
    }
    .unwrap_or(Reduction::None)
}

/// Builds the semantics of `subj` under `q` through its operator's registry entry; `None` when
/// the op is not modelled or its inputs cannot be evaluated under these quirks.
fn semantics<'a>(subj: &Subject<'a>, q: &Quirks) -> Option<Semantics<'a>> {
    let Resolution::Found(def, _) = ops::resolve(subj.domain, &subj.node.op_type, subj.since)
    else {
        return None;
    };
    (def.provenance?)(subj, q)
}

/// A `shape` input's dims, when all are non-negative.
pub fn dims_of(t: &Tensor) -> Option<Vec<usize>> {
    t.to_i64_vec()?
        .iter()
        .map(|&d| usize::try_from(d).ok())
        .collect()
}

/// The provenance shape shared by the ops that work like gather.
pub fn gather<'a>(
    data: &'a Tensor,
    indices: &Tensor,
    axis: usize,
    b: usize,
    q: &Quirks,
) -> Option<Semantics<'a>> {
    // A quirk (axis 0 forced) can name an axis the tensor does not have.
    if axis >= data.rank() {
        return None;
    }
    let ds = data.shape();
    let is = indices.shape();
    if ds.is_empty() || b > axis || b > is.len() || ds[..b] != is[..b] {
        return None;
    }
    let values = indices.to_i64_vec()?;
    let s = ds[axis];
    let (batch, mid, inner) = (
        numel(&ds[..b])?,
        numel(&ds[b..axis])?,
        numel(&ds[axis + 1..])?,
    );
    let per_batch = numel(&is[b..])?;
    let count = numel(&[batch, mid, per_batch, inner])?;
    if !q.admits(count) {
        return None;
    }
    let mut origin = Vec::with_capacity(count);
    for bi in 0..batch {
        for m in 0..mid {
            for j in 0..per_batch {
                let pos = bi * per_batch + j;
                let src = match resolve(values[pos], s, q) {
                    Resolved::At(k) => Some(((bi * mid + m) * s + k) * inner),
                    Resolved::Zero => None,
                    Resolved::Invalid => return None,
                };
                for e in 0..inner {
                    origin.push((src.map(|s| s + e), pos));
                }
            }
        }
    }
    let mut shape = ds[..axis].to_vec();
    shape.extend_from_slice(&is[b..]);
    shape.extend_from_slice(&ds[axis + 1..]);
    Some(Semantics::Gathered {
        data,
        shape,
        origin,
        index: IndexInfo {
            values,
            shape: is.to_vec(),
            axis: Some(axis),
            tuple: 0,
        },
    })
}

/// The provenance shape shared by the ops that work like gather elements.
pub fn gather_elements<'a>(
    data: &'a Tensor,
    indices: &Tensor,
    axis: usize,
    q: &Quirks,
) -> Option<Semantics<'a>> {
    // A quirk (axis 0 forced) can name an axis the tensor does not have.
    let (ds, is) = (data.shape(), indices.shape());
    // The kernel's own shape rules (equal ranks, off-axis dims no larger, a real axis).
    check_element_shapes(ds, is, axis as i64).ok()?;
    let values = indices.to_i64_vec()?;
    let stride = strides(ds)[axis];
    let mut origin = Vec::with_capacity(values.len());
    let mut ok = true;
    for_each_element(is, ds, axis, |pos, base| {
        let src = match resolve(values[pos], ds[axis], q) {
            Resolved::At(k) => Some(base + k * stride),
            Resolved::Zero => None,
            Resolved::Invalid => {
                ok = false;
                None
            }
        };
        origin.push((src, pos));
    });
    ok.then(|| Semantics::Gathered {
        data,
        shape: is.to_vec(),
        origin,
        index: IndexInfo {
            values,
            shape: is.to_vec(),
            axis: Some(axis),
            tuple: 0,
        },
    })
}

/// Resolves a k-tuple against `dims`; `None` inside for a zero result, outer `None` for invalid.
fn resolve_tuple(tuple: &[i64], dims: &[usize], q: &Quirks) -> Option<Option<usize>> {
    let st = strides(dims);
    let mut off = 0;
    for (j, &v) in tuple.iter().enumerate() {
        match resolve(v, dims[j], q) {
            Resolved::At(k) => off += k * st[j],
            Resolved::Zero => return Some(None),
            Resolved::Invalid => return None,
        }
    }
    Some(Some(off))
}

/// The provenance shape shared by the ops that work like gather nd.
pub fn gather_nd<'a>(
    data: &'a Tensor,
    indices: &Tensor,
    b: usize,
    q: &Quirks,
) -> Option<Semantics<'a>> {
    let (ds, is) = (data.shape(), indices.shape());
    let (r, qr) = (ds.len(), is.len());
    if qr == 0 || b >= r.min(qr) || ds[..b] != is[..b] {
        return None;
    }
    let k = is[qr - 1];
    if k < 1 || k > r - b {
        return None;
    }
    let values = indices.to_i64_vec()?;
    let (batches, tuples) = (numel(&ds[..b])?, numel(&is[b..qr - 1])?);
    let (block, slice) = (numel(&ds[b..])?, numel(&ds[b + k..])?);
    if !q.admits(numel(&[batches, tuples, slice])?) {
        return None;
    }
    let mut origin = Vec::new();
    for bi in 0..batches {
        for t in 0..tuples {
            let pos = bi * tuples + t;
            let off = resolve_tuple(&values[pos * k..(pos + 1) * k], &ds[b..b + k], q)?;
            for e in 0..slice {
                origin.push((off.map(|o| bi * block + o * slice + e), pos));
            }
        }
    }
    let mut shape = is[..qr - 1].to_vec();
    shape.extend_from_slice(&ds[b + k..]);
    Some(Semantics::Gathered {
        data,
        shape,
        origin,
        index: IndexInfo {
            values,
            shape: is.to_vec(),
            axis: None,
            tuple: k,
        },
    })
}

#[allow(clippy::too_many_arguments)]
/// The provenance shape shared by the ops that work like scatter elements.
pub fn scatter_elements<'a>(
    base: Option<&'a Tensor>,
    dtype: DType,
    shape: &[usize],
    indices: &Tensor,
    updates: &'a Tensor,
    axis: usize,
    reduction: Reduction,
    q: &Quirks,
) -> Option<Semantics<'a>> {
    let is = indices.shape();
    // The kernel's own shape rules (a quirk forcing axis 0 can name an axis the data lacks).
    if updates.shape() != is || !q.admits(numel(shape)?) {
        return None;
    }
    check_element_shapes(shape, is, axis as i64).ok()?;
    let values = indices.to_i64_vec()?;
    let stride = strides(shape)[axis];
    let mut pairs = Vec::with_capacity(values.len());
    let mut ok = true;
    for_each_element(is, shape, axis, |pos, b| {
        match resolve(values[pos], shape[axis], q) {
            Resolved::At(k) => pairs.push((b + k * stride, pos, pos)),
            Resolved::Zero => {}
            Resolved::Invalid => ok = false,
        }
    });
    if q.reverse {
        pairs.reverse();
    }
    ok.then(|| Semantics::Scattered {
        base,
        dtype,
        shape: shape.to_vec(),
        updates,
        pairs,
        reduction,
        index: IndexInfo {
            values,
            shape: is.to_vec(),
            axis: Some(axis),
            tuple: 0,
        },
    })
}

/// The provenance shape shared by the ops that work like scatter nd.
pub fn scatter_nd<'a>(
    data: &'a Tensor,
    indices: &Tensor,
    updates: &'a Tensor,
    reduction: Reduction,
    q: &Quirks,
) -> Option<Semantics<'a>> {
    let (ds, is) = (data.shape(), indices.shape());
    let qr = is.len();
    if qr == 0 || is[qr - 1] > ds.len() {
        return None;
    }
    let k = is[qr - 1];
    let mut want = is[..qr - 1].to_vec();
    want.extend_from_slice(&ds[k..]);
    if updates.shape() != want.as_slice() {
        return None;
    }
    let values = indices.to_i64_vec()?;
    let slice = numel(&ds[k..])?;
    let mut pairs = Vec::new();
    for t in 0..numel(&is[..qr - 1])? {
        if let Some(off) = resolve_tuple(&values[t * k..(t + 1) * k], &ds[..k], q)? {
            for e in 0..slice {
                pairs.push((off * slice + e, t * slice + e, t));
            }
        }
    }
    if q.reverse {
        pairs.reverse();
    }
    Some(Semantics::Scattered {
        base: Some(data),
        dtype: data.dtype(),
        shape: ds.to_vec(),
        updates,
        pairs,
        reduction,
        index: IndexInfo {
            values,
            shape: is.to_vec(),
            axis: None,
            tuple: k,
        },
    })
}

/// The provenance shape shared by the ops that work like gather grad.
pub fn gather_grad<'a>(
    shape: &[usize],
    indices: &Tensor,
    dy: &'a Tensor,
    axis: usize,
    q: &Quirks,
) -> Option<Semantics<'a>> {
    // A quirk (axis 0 forced) can name an axis the tensor does not have.
    if axis >= shape.len() {
        return None;
    }
    let mut want = shape[..axis].to_vec();
    want.extend_from_slice(indices.shape());
    want.extend_from_slice(&shape[axis + 1..]);
    if dy.shape() != want.as_slice() || !q.admits(numel(shape)?) {
        return None;
    }
    let values = indices.to_i64_vec()?;
    let (outer, s, inner, n) = (
        numel(&shape[..axis])?,
        shape[axis],
        numel(&shape[axis + 1..])?,
        values.len(),
    );
    let mut pairs = Vec::new();
    for o in 0..outer {
        for (j, &v) in values.iter().enumerate() {
            match resolve(v, s, q) {
                Resolved::At(k) => {
                    for e in 0..inner {
                        pairs.push(((o * s + k) * inner + e, (o * n + j) * inner + e, j));
                    }
                }
                Resolved::Zero => {}
                Resolved::Invalid => return None,
            }
        }
    }
    if q.reverse {
        pairs.reverse();
    }
    Some(Semantics::Scattered {
        base: None,
        dtype: dy.dtype(),
        shape: shape.to_vec(),
        updates: dy,
        pairs,
        reduction: q.reduction.unwrap_or(Reduction::Add),
        index: IndexInfo {
            values,
            shape: indices.shape().to_vec(),
            axis: Some(axis),
            tuple: 0,
        },
    })
}

/// The (dst, src) pairs of a scatter, for the shared reduction arithmetic.
struct Pairs<'p>(&'p [(usize, usize, usize)]);

impl Visit for Pairs<'_> {
    fn visit<F: FnMut(usize, usize)>(&self, mut f: F) {
        for &(d, s, _) in self.0 {
            f(d, s);
        }
    }
}

/// Computes the output the semantics describe. Sizes are those of the checked inputs.
fn execute(sem: &Semantics<'_>) -> Option<Tensor> {
    match sem {
        Semantics::Gathered {
            data,
            shape,
            origin,
            ..
        } => {
            let picked: Vec<Option<usize>> = origin.iter().map(|o| o.0).collect();
            let storage =
                crate::dispatch_by_width!(data.dtype(), None, pick(data.storage(), &picked))?;
            Tensor::new(data.dtype(), shape.clone(), storage).ok()
        }
        Semantics::Scattered {
            base,
            dtype,
            shape,
            updates,
            pairs,
            reduction,
            ..
        } => {
            let zeroed;
            let start = match base {
                Some(b) => b.storage(),
                None => {
                    zeroed = zeros(*dtype, numel(shape)?)?;
                    &zeroed
                }
            };
            let storage =
                reduction::apply(*dtype, *reduction, start, updates.storage(), &Pairs(pairs))
                    .ok()?;
            Tensor::new(*dtype, shape.clone(), storage).ok()
        }
    }
}

fn pick<T: crate::tensor::Elem>(src: &Storage, picked: &[Option<usize>]) -> Option<Storage> {
    let src = T::slice(src)?;
    let out: Option<Vec<T>> = picked
        .iter()
        .map(|p| match p {
            Some(i) => src.get(*i).cloned(),
            None => Some(T::zero()),
        })
        .collect();
    Some(T::into_storage(out?))
}

fn zeros(dtype: DType, n: usize) -> Option<Storage> {
    Some(match dtype.layout() {
        Layout::Bytes(1) => Storage::W8(vec![0; n]),
        Layout::Bytes(2) => Storage::W16(vec![0; n]),
        Layout::Bytes(4) => Storage::W32(vec![0; n]),
        Layout::Bytes(8) => Storage::W64(vec![0; n]),
        Layout::Bytes(_) => Storage::W128(vec![0; n]),
        _ => return None,
    })
}

/// Whether two tensors are identical (dtype, shape, every element; NaN equal to NaN).
fn identical(a: &Tensor, b: &Tensor) -> bool {
    let exact = Tolerance {
        mode: Mode::Exact,
        ..Tolerance::default()
    };
    compare(a, b, false, &exact).passed
}

/// The quirks that realise a bug class for this subject, or none when the class cannot apply
/// (no negative index, no reduction, axis already 0, ...).
fn quirk_variants(class: BugClass, subj: &Subject<'_>) -> Vec<Quirks> {
    let red = correct_reduction(subj);
    let base = Quirks::default();
    match class {
        BugClass::NegativeNotNormalized => vec![
            Quirks {
                neg: Neg::AsIndexZero,
                ..base
            },
            Quirks {
                neg: Neg::AsZeroValue,
                ..base
            },
        ],
        BugClass::OobWrapped => vec![Quirks {
            oob: Oob::Wrap,
            ..base
        }],
        BugClass::OobClamped => vec![Quirks {
            oob: Oob::Clamp,
            ..base
        }],
        BugClass::OobZeroFilled => vec![Quirks {
            oob: Oob::Zero,
            ..base
        }],
        BugClass::FirstWriteWins if red == Reduction::None => vec![Quirks {
            reverse: true,
            ..base
        }],
        BugClass::ReductionIgnored if red != Reduction::None => {
            vec![Quirks {
                reduction: Some(Reduction::None),
                ..base
            }]
        }
        BugClass::AxisIgnored => vec![Quirks {
            axis_zero: true,
            ..base
        }],
        BugClass::BatchDimsIgnored => vec![Quirks {
            batch_zero: true,
            ..base
        }],
        BugClass::AccumulationOrder if red != Reduction::None => vec![Quirks {
            reverse: true,
            ..base
        }],
        _ => Vec::new(),
    }
}

/// The first bug class of [`classify_all`]: the most specific one that reproduces `actual`.
pub fn classify(
    subj: &Subject<'_>,
    reference: Option<&Tensor>,
    actual: &Tensor,
) -> Option<BugClass> {
    classify_all(subj, reference, actual).into_iter().next()
}

/// Every bug class whose semantics reproduce `actual` exactly, when `actual` is wrong, most
/// specific first (the order of [`BugClass::ALL`]); empty when none does. `reference` is the
/// correct output, or `None` when the spec requires an error for these inputs.
pub fn classify_all(
    subj: &Subject<'_>,
    reference: Option<&Tensor>,
    actual: &Tensor,
) -> Vec<BugClass> {
    let mut found = Vec::new();
    if reference.is_some_and(|r| identical(r, actual)) {
        return found;
    }
    // A quirk explains the output only if it changes something: compare with the correct result,
    // or, where the spec requires an error, with what the op computes when its indices are valid
    // (then an error about something else, such as a dtype, is not blamed on index handling).
    let cap = Some(actual.numel());
    let computed;
    let baseline = match reference {
        Some(r) => Some(r),
        None => {
            let q = Quirks {
                cap,
                ..Quirks::default()
            };
            computed = semantics(subj, &q).and_then(|s| execute(&s));
            computed.as_ref()
        }
    };
    // The grads' reduction is their accumulation: "ignored" there means overwrite.
    for class in BugClass::ALL {
        for q in quirk_variants(class, subj) {
            let q = Quirks { cap, ..q };
            let Some(sem) = semantics(subj, &q) else {
                continue;
            };
            let Some(out) = execute(&sem) else { continue };
            let changes_something = baseline.is_none_or(|b| !identical(b, &out));
            if changes_something && identical(&out, actual) {
                found.push(class);
                // One variant reproducing it is enough for this class.
                break;
            }
        }
    }
    found
}

/// Whether the op reads one data element twice (gathers) or writes one output element more than
/// once (scatters): the "duplicates" trait of coverage.
pub fn has_duplicates(subj: &Subject<'_>) -> bool {
    let mut seen = std::collections::HashSet::new();
    match semantics(subj, &Quirks::default()) {
        Some(Semantics::Gathered { origin, .. }) => origin
            .iter()
            .filter_map(|o| o.0)
            .any(|src| !seen.insert(src)),
        Some(Semantics::Scattered { pairs, .. }) => pairs.iter().any(|p| !seen.insert(p.0)),
        None => false,
    }
}

/// Where output element `flat` comes from under the correct semantics, e.g.
/// `data[1,0], from indices[1,0] = -2 on axis 0`; `None` when the op is not modelled.
pub fn provenance(subj: &Subject<'_>, flat: usize) -> Option<String> {
    let sem = semantics(subj, &Quirks::default())?;
    let coords = |flat: usize, shape: &[usize]| {
        unravel(flat, shape)
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    match &sem {
        Semantics::Gathered {
            data,
            origin,
            index,
            ..
        } => {
            let (src, pos) = origin.get(flat)?;
            let from = index.describe(*pos);
            Some(match src {
                Some(s) => format!("data[{}], from {from}", coords(*s, data.shape())),
                None => format!("zero, from {from}"),
            })
        }
        Semantics::Scattered {
            base,
            shape,
            updates,
            pairs,
            reduction,
            index,
            ..
        } => {
            let start = if base.is_some() {
                format!("data[{}]", coords(flat, shape))
            } else {
                "0".to_string()
            };
            let hits: Vec<String> = pairs
                .iter()
                .filter(|(d, _, _)| *d == flat)
                .map(|(_, s, pos)| {
                    format!(
                        "updates[{}] ({})",
                        coords(*s, updates.shape()),
                        index.describe(*pos)
                    )
                })
                .collect();
            Some(match (hits.len(), reduction) {
                (0, _) => format!("{start}, no update aimed here"),
                (_, Reduction::None) => {
                    let last = hits.last().cloned().unwrap_or_default();
                    if hits.len() == 1 {
                        last
                    } else {
                        format!("{last}, the last of {} writes", hits.len())
                    }
                }
                (_, r) => format!("{} of {start}, {}", r.name(), hits.join(", ")),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pb::{attribute_proto::AttributeType, AttributeProto};

    fn f32s(shape: &[usize], v: &[f32]) -> Tensor {
        Tensor::from_elems(
            DType::Float,
            shape.to_vec(),
            v.iter().map(|x| x.to_bits()).collect(),
        )
        .unwrap()
    }

    fn i64s(shape: &[usize], v: &[i64]) -> Tensor {
        Tensor::from_elems(
            DType::Int64,
            shape.to_vec(),
            v.iter().map(|&x| x as u64).collect(),
        )
        .unwrap()
    }

    fn node(op: &str, attrs: &[(&str, i64)], reduction: Option<&str>) -> NodeProto {
        let mut attribute: Vec<AttributeProto> = attrs
            .iter()
            .map(|(n, i)| AttributeProto {
                name: (*n).into(),
                r#type: AttributeType::Int as i32,
                i: *i,
                ..Default::default()
            })
            .collect();
        if let Some(r) = reduction {
            attribute.push(AttributeProto {
                name: "reduction".into(),
                r#type: AttributeType::String as i32,
                s: r.as_bytes().to_vec(),
                ..Default::default()
            });
        }
        NodeProto {
            op_type: op.into(),
            attribute,
            ..Default::default()
        }
    }

    #[test]
    fn every_class_that_reproduces_the_output_is_listed_most_specific_first() {
        // ScatterElements on an axis of size 2 with indices [0, -2]: both write element 0, and the
        // last write (2.0) wins. Keeping the first write (1.0) is first-write-wins; dropping the
        // un-normalised -2 leaves the first write too: both classes reproduce [1, 20].
        let n = node("ScatterElements", &[], None);
        let data = f32s(&[2], &[10.0, 20.0]);
        let idx = i64s(&[2], &[0, -2]);
        let upd = f32s(&[2], &[1.0, 2.0]);
        let subj = Subject {
            node: &n,
            domain: "",
            since: 13,
            inputs: vec![Some(&data), Some(&idx), Some(&upd)],
        };
        let reference = f32s(&[2], &[2.0, 20.0]);
        let wrong = f32s(&[2], &[1.0, 20.0]);
        assert_eq!(
            classify_all(&subj, Some(&reference), &wrong),
            vec![BugClass::NegativeNotNormalized, BugClass::FirstWriteWins]
        );
        assert_eq!(
            classify(&subj, Some(&reference), &wrong),
            Some(BugClass::NegativeNotNormalized)
        );
        assert!(classify_all(&subj, Some(&reference), &reference).is_empty());
    }

    #[test]
    fn negative_index_read_as_zero_is_recognised() {
        let n = node("Gather", &[], None);
        let data = f32s(&[3], &[1.0, 2.0, 3.0]);
        let idx = i64s(&[2], &[-1, 1]);
        let subj = Subject {
            node: &n,
            domain: "",
            since: 13,
            inputs: vec![Some(&data), Some(&idx)],
        };
        let reference = f32s(&[2], &[3.0, 2.0]);
        assert_eq!(
            classify(&subj, Some(&reference), &f32s(&[2], &[1.0, 2.0])),
            Some(BugClass::NegativeNotNormalized)
        );
        assert_eq!(
            classify(&subj, Some(&reference), &f32s(&[2], &[0.0, 2.0])),
            Some(BugClass::NegativeNotNormalized)
        );
        assert_eq!(classify(&subj, Some(&reference), &reference), None);
        assert_eq!(
            classify(&subj, Some(&reference), &f32s(&[2], &[9.0, 2.0])),
            None
        );
        assert_eq!(
            provenance(&subj, 0).unwrap(),
            "data[2], from indices[0] = -1 on axis 0"
        );
    }

    #[test]
    fn quirks_never_panic_on_rank0_tensors() {
        // Forcing axis 0 on a scalar used to index an empty stride list.
        let n = node("ScatterElements", &[], None);
        let scalar = f32s(&[], &[1.0]);
        let idx = i64s(&[], &[0]);
        let subj = Subject {
            node: &n,
            domain: "",
            since: 18,
            inputs: vec![Some(&scalar), Some(&idx), Some(&scalar)],
        };
        assert_eq!(classify(&subj, None, &scalar), None);
        let g = node("GatherElements", &[], None);
        let subj = Subject {
            node: &g,
            domain: "",
            since: 13,
            inputs: vec![Some(&scalar), Some(&idx)],
        };
        assert_eq!(classify(&subj, None, &scalar), None);
        assert_eq!(provenance(&subj, 0), None);
    }

    #[test]
    fn interpretations_larger_than_the_output_are_never_computed() {
        // Found by fuzzing: an erroring GatherGrad whose shape input asks for 2^40 elements made
        // the diagnosis allocate them. Only outputs the size of the one explained are computed.
        let g = node("GatherGrad", &[], None);
        let shape = i64s(&[1], &[1 << 40]);
        let idx = i64s(&[1], &[-(1 << 41)]);
        let dy = f32s(&[1], &[1.0]);
        let subj = Subject {
            node: &g,
            domain: "com.microsoft",
            since: 1,
            inputs: vec![Some(&shape), Some(&idx), Some(&dy)],
        };
        assert_eq!(classify(&subj, None, &dy), None);
        // The same for a Gather whose output would have 2^40 elements.
        let n = node("Gather", &[], None);
        let data = f32s(&[1, 1 << 20], &vec![0.0; 1 << 20]);
        let idx = i64s(&[1 << 20], &vec![0; 1 << 20]);
        let subj = Subject {
            node: &n,
            domain: "",
            since: 13,
            inputs: vec![Some(&data), Some(&idx)],
        };
        assert_eq!(classify(&subj, None, &data), None);
    }

    #[test]
    fn out_of_range_classes_are_told_apart() {
        let n = node("Gather", &[], None);
        let data = f32s(&[3], &[1.0, 2.0, 3.0]);
        let idx = i64s(&[2], &[4, 0]);
        let subj = Subject {
            node: &n,
            domain: "",
            since: 13,
            inputs: vec![Some(&data), Some(&idx)],
        };
        assert_eq!(
            classify(&subj, None, &f32s(&[2], &[2.0, 1.0])),
            Some(BugClass::OobWrapped)
        );
        assert_eq!(
            classify(&subj, None, &f32s(&[2], &[3.0, 1.0])),
            Some(BugClass::OobClamped)
        );
        assert_eq!(
            classify(&subj, None, &f32s(&[2], &[0.0, 1.0])),
            Some(BugClass::OobZeroFilled)
        );
    }

    #[test]
    fn scatter_classes() {
        let data = f32s(&[1, 3], &[0.0, 0.0, 0.0]);
        let idx = i64s(&[1, 2], &[1, 1]);
        let upd = f32s(&[1, 2], &[5.0, 7.0]);
        let none = node("ScatterElements", &[("axis", 1)], None);
        let subj = Subject {
            node: &none,
            domain: "",
            since: 18,
            inputs: vec![Some(&data), Some(&idx), Some(&upd)],
        };
        let reference = f32s(&[1, 3], &[0.0, 7.0, 0.0]);
        assert_eq!(
            classify(&subj, Some(&reference), &f32s(&[1, 3], &[0.0, 5.0, 0.0])),
            Some(BugClass::FirstWriteWins)
        );
        assert_eq!(
            provenance(&subj, 1).unwrap(),
            "updates[0,1] (indices[0,1] = 1 on axis 1), the last of 2 writes"
        );
        assert_eq!(
            provenance(&subj, 0).unwrap(),
            "data[0,0], no update aimed here"
        );
        let add = node("ScatterElements", &[("axis", 1)], Some("add"));
        let subj = Subject {
            node: &add,
            domain: "",
            since: 18,
            inputs: vec![Some(&data), Some(&idx), Some(&upd)],
        };
        let reference = f32s(&[1, 3], &[0.0, 12.0, 0.0]);
        assert_eq!(
            classify(&subj, Some(&reference), &f32s(&[1, 3], &[0.0, 7.0, 0.0])),
            Some(BugClass::ReductionIgnored)
        );
        let axis0 = node("ScatterElements", &[("axis", 1)], None);
        let d2 = f32s(&[2, 2], &[0.0; 4]);
        let i2 = i64s(&[1, 1], &[1]);
        let u2 = f32s(&[1, 1], &[9.0]);
        let subj = Subject {
            node: &axis0,
            domain: "",
            since: 18,
            inputs: vec![Some(&d2), Some(&i2), Some(&u2)],
        };
        let reference = f32s(&[2, 2], &[0.0, 9.0, 0.0, 0.0]);
        assert_eq!(
            classify(
                &subj,
                Some(&reference),
                &f32s(&[2, 2], &[0.0, 0.0, 9.0, 0.0])
            ),
            Some(BugClass::AxisIgnored)
        );
    }

    #[test]
    fn accumulation_order_is_recognised_bit_exactly() {
        // 1 + 1e8 - 1e8 in f32: forward loses the 1, reverse keeps it.
        let data = f32s(&[1], &[0.0]);
        let idx = i64s(&[3, 1], &[0, 0, 0]);
        let upd = f32s(&[3], &[1.0, 1e8, -1e8]);
        let add = node("ScatterND", &[], Some("add"));
        let subj = Subject {
            node: &add,
            domain: "",
            since: 18,
            inputs: vec![Some(&data), Some(&idx), Some(&upd)],
        };
        let forward = ((0.0f32 + 1.0) + 1e8) - 1e8;
        let reverse = ((0.0f32 - 1e8) + 1e8) + 1.0;
        assert_ne!(forward, reverse);
        let reference = f32s(&[1], &[forward]);
        assert_eq!(
            classify(&subj, Some(&reference), &f32s(&[1], &[reverse])),
            Some(BugClass::AccumulationOrder)
        );
    }

    #[test]
    fn batch_dims_ignored_changes_the_shape_and_is_recognised() {
        let data = i64s(&[2, 2, 2], &[0, 1, 2, 3, 4, 5, 6, 7]);
        let idx = i64s(&[2, 1], &[1, 0]);
        let n = node("GatherND", &[("batch_dims", 1)], None);
        let subj = Subject {
            node: &n,
            domain: "",
            since: 13,
            inputs: vec![Some(&data), Some(&idx)],
        };
        let reference = i64s(&[2, 2], &[2, 3, 4, 5]);
        let ignored = i64s(&[2, 2, 2], &[4, 5, 6, 7, 0, 1, 2, 3]);
        assert_eq!(
            classify(&subj, Some(&reference), &ignored),
            Some(BugClass::BatchDimsIgnored)
        );
        assert_eq!(
            provenance(&subj, 1).unwrap(),
            "data[0,1,1], from indices[0,:] = [1]"
        );
    }
}
