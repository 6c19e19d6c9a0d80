//! ScatterElements: <https://onnx.ai/onnx/operators/onnx__ScatterElements.html>
//! and the deprecated Scatter: <https://onnx.ai/onnx/operators/onnx__Scatter.html>
//!
//! | op | since | change |
//! |---|---|---|
//! | Scatter | 9 | ScatterElements-11's semantics; negative indices not defined (D2: out of range) |
//! | Scatter | 11 | deprecated: a node resolving here is invalid (D5) |
//! | ScatterElements | 11 | `out = data; out[i with i[axis] := indices[i]] = updates[i]`, negatives from the back |
//! | ScatterElements | 13 | bfloat16 |
//! | ScatterElements | 16 | `reduction`: none, add, mul |
//! | ScatterElements | 18 | `reduction`: max, min |
//!
//! Updates apply in row-major order of `indices`, so with duplicates the last write wins (D7) and
//! reductions accumulate in that order (D8).

use super::fast::{self, IndexWord};
use super::gather_elements::{check_element_shapes, for_each_element};
use super::index::{normalize_indices, Indices, Negatives};
use super::provenance::{resolve, IndexInfo, Quirks, Resolved, Semantics, Subject};
use super::reduction::{self, deal, Reduction, Visit};
use super::{
    AttrSpec, Attrs, Constraint, Evaluated, Indexing, InputSpec, Invocation, OpDef, OpVersion,
    Role, SpecError,
};
use super::{CLASSIC_BF16_TIND32_64, CLASSIC_TIND32_64};
use super::{REDUCTIONS_16 as R16, REDUCTIONS_18 as R18};
use crate::spec_err;
use crate::tensor::{numel, strides, DType, Tensor};

/// How many updates ahead the aligned walk names destinations for prefetching: enough misses in
/// flight to cover a trip to L3 or memory.
const UPDATES_AHEAD: usize = 16;

const INPUTS: &[InputSpec] = &[
    InputSpec::required("data", "T", Role::Data),
    InputSpec::required("indices", "Tind", Role::Indices),
    InputSpec::required("updates", "T", Role::Updates),
];

const AXIS: &[AttrSpec] = &[AttrSpec::int("axis", 0)];

/// A version whose `reduction` attribute chooses among `modes`.
const fn version(
    since: i64,
    attrs: &'static [AttrSpec],
    constraints: &'static [Constraint],
    modes: &'static [&'static str],
) -> OpVersion {
    OpVersion::base(since, attrs, INPUTS, constraints, eval).with_modes("reduction", modes)
}

/// The deprecated Scatter operator: version 9, and the deprecation at 11.
pub(crate) static SCATTER: OpDef = OpDef {
    domain: "",
    op_type: "Scatter",
    spec: "https://onnx.ai/onnx/operators/onnx__Scatter.html",
    plumbing: false,
    context: false,
    gathers: false,
    indexing: Indexing::Elements,
    provenance: Some(provenance),
    versions: &[
        OpVersion {
            negatives: false,
            ..version(9, AXIS, CLASSIC_TIND32_64, &["none"])
        },
        OpVersion {
            deprecated: true,
            negatives: false,
            ..version(11, AXIS, CLASSIC_TIND32_64, &[])
        },
    ],
};

/// The ScatterElements operator, versions 11, 13, 16 and 18.
pub(crate) static SCATTER_ELEMENTS: OpDef = OpDef {
    domain: "",
    op_type: "ScatterElements",
    spec: "https://onnx.ai/onnx/operators/onnx__ScatterElements.html",
    plumbing: false,
    context: false,
    gathers: false,
    indexing: Indexing::Elements,
    provenance: Some(provenance),
    versions: &[
        version(11, AXIS, CLASSIC_TIND32_64, &["none"]),
        version(13, AXIS, CLASSIC_BF16_TIND32_64, &["none"]),
        version(
            16,
            &[AttrSpec::int("axis", 0), AttrSpec::choice("reduction", R16)],
            CLASSIC_BF16_TIND32_64,
            R16,
        ),
        version(
            18,
            &[AttrSpec::int("axis", 0), AttrSpec::choice("reduction", R18)],
            CLASSIC_BF16_TIND32_64,
            R18,
        ),
    ],
};

/// The deprecated Scatter's attributes: the typed entry to its kernel (opset 9 and 10).
///
/// ```
/// use onnx_idx_check_kernels::ops::Scatter;
/// use onnx_idx_check_kernels::Tensor;
///
/// let data = Tensor::from_vec(vec![3], vec![0i32; 3])?;
/// let indices = Tensor::from_vec(vec![1], vec![2i64])?;
/// let updates = Tensor::from_vec(vec![1], vec![9i32])?;
/// assert_eq!(Scatter::default().eval(9, &data, &indices, &updates)?.to_vec::<i32>()?, [0, 0, 9]);
/// // Deprecated since opset 11 (ScatterElements replaces it).
/// assert!(Scatter::default().eval(11, &data, &indices, &updates).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Scatter {
    /// The axis the indices write along. Default 0.
    pub axis: i64,
}

impl Scatter {
    /// ScatterElements-11's semantics without negative indices, as Scatter does at `opset` (9
    /// or 10; from 11 on the operator is deprecated and every call is an error).
    ///
    /// ```
    /// use onnx_idx_check_kernels::ops::Scatter;
    /// use onnx_idx_check_kernels::Tensor;
    ///
    /// let data = Tensor::from_vec(vec![1, 5], vec![1.0f32, 2.0, 3.0, 4.0, 5.0])?;
    /// let indices = Tensor::from_vec(vec![1, 2], vec![1i64, 3])?;
    /// let updates = Tensor::from_vec(vec![1, 2], vec![1.1f32, 2.1])?;
    /// let out = Scatter { axis: 1 }.eval(10, &data, &indices, &updates)?;
    /// assert_eq!(out.to_vec::<f32>()?, [1.0, 1.1, 3.0, 2.1, 5.0]);
    /// assert!(Scatter { axis: 1 }.eval(11, &data, &indices, &updates).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn eval(
        &self,
        opset: i64,
        data: &Tensor,
        indices: &Tensor,
        updates: &Tensor,
    ) -> Result<Tensor, SpecError> {
        super::call_typed(
            &SCATTER,
            opset,
            Attrs::new().with_int("axis", self.axis),
            &[Some(data), Some(indices), Some(updates)],
        )
    }
}

/// ScatterElements' attributes: the typed entry to the kernel of every version.
///
/// ```
/// use onnx_idx_check_kernels::ops::{Reduction, ScatterElements};
/// use onnx_idx_check_kernels::Tensor;
///
/// let data = Tensor::from_vec(vec![3], vec![1.0f32; 3])?;
/// let indices = Tensor::from_vec(vec![2], vec![0i64, 0])?;
/// let updates = Tensor::from_vec(vec![2], vec![2.0f32, 3.0])?;
/// // Duplicate indices combine in row-major order under a reduction.
/// let mul = ScatterElements { reduction: Reduction::Mul, ..Default::default() };
/// assert_eq!(mul.eval(16, &data, &indices, &updates)?.to_vec::<f32>()?, [6.0, 1.0, 1.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScatterElements {
    /// The axis the indices write along; negative counts from the back. Default 0.
    pub axis: i64,
    /// How updates combine with what is there (from version 16; max and min from 18).
    /// [`Reduction::None`], the default, is accepted at every version.
    pub reduction: Reduction,
}

impl ScatterElements {
    /// `out = data; out[i with i[axis] := indices[i]] (op)= updates[i]` in row-major order of
    /// `indices`, as ScatterElements does at `opset`: the same checks and kernel as a node in a
    /// model.
    ///
    /// ```
    /// use onnx_idx_check_kernels::ops::{Reduction, ScatterElements};
    /// use onnx_idx_check_kernels::Tensor;
    ///
    /// // The specification's reduction example: duplicates add up.
    /// let data = Tensor::from_vec(vec![1, 5], vec![1.0f32, 2.0, 3.0, 4.0, 5.0])?;
    /// let indices = Tensor::from_vec(vec![1, 2], vec![1i64, 1])?;
    /// let updates = Tensor::from_vec(vec![1, 2], vec![1.1f32, 2.1])?;
    /// let add = ScatterElements { axis: 1, reduction: Reduction::Add };
    /// assert_eq!(add.eval(18, &data, &indices, &updates)?.to_vec::<f32>()?, [1.0, 5.2, 3.0, 4.0, 5.0]);
    ///
    /// // Reductions arrive with version 16.
    /// assert!(add.eval(13, &data, &indices, &updates).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn eval(
        &self,
        opset: i64,
        data: &Tensor,
        indices: &Tensor,
        updates: &Tensor,
    ) -> Result<Tensor, SpecError> {
        let attrs = Attrs::new().with_int("axis", self.axis);
        let attrs = match self.reduction {
            Reduction::None => attrs,
            r => attrs.with_str("reduction", r.name()),
        };
        super::call_typed(
            &SCATTER_ELEMENTS,
            opset,
            attrs,
            &[Some(data), Some(indices), Some(updates)],
        )
    }
}

/// The output starts as data; each update goes (or reduces) where its index points on the axis.
fn provenance<'a>(s: &Subject<'a>, q: &Quirks) -> Option<Semantics<'a>> {
    let (data, indices, updates) = (s.input(0)?, s.input(1)?, s.input(2)?);
    let axis = s.axis(data.rank(), q)?;
    let (dtype, shape) = (data.dtype(), data.shape());
    semantics(
        Some(data),
        dtype,
        shape,
        indices,
        updates,
        axis,
        s.reduction(q)?,
        q,
    )
}

#[allow(clippy::too_many_arguments)]
/// What the ops that work like scatter elements do, element by element.
pub(crate) fn semantics<'a>(
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

fn eval(inv: &Invocation<'_>) -> Result<Evaluated, SpecError> {
    scatter(inv, inv.negatives(), super::reduction_of(inv)?)
}

/// The element updates of a ScatterElements, in row-major order of `indices` (already checked
/// to be in range).
struct ElementPlan<'a, I> {
    ishape: &'a [usize],
    dshape: &'a [usize],
    axis: usize,
    axis_len: usize,
    /// Whether negative indices count from the back (false at Scatter-9).
    negatives: bool,
    axis_stride: usize,
    idx: &'a [I],
    /// `[outer, len, inner]` when indices and data agree off the axis: then positions walk in
    /// three plain loops instead of an odometer.
    flat: Option<(usize, usize, usize)>,
    /// Set when an index is out of range. Validation happens during the walk (each index is read
    /// once); the caller then drops the output and reports the first offending position.
    bad: std::sync::atomic::AtomicBool,
}

impl<'a, I: IndexWord> ElementPlan<'a, I> {
    fn new(
        ishape: &'a [usize],
        dshape: &'a [usize],
        axis: usize,
        idx: &'a [I],
        negatives: bool,
    ) -> Self {
        let aligned = ishape
            .iter()
            .zip(dshape)
            .enumerate()
            .all(|(d, (a, b))| d == axis || a == b);
        let flat = aligned.then(|| {
            (
                dshape[..axis].iter().product(),
                ishape[axis],
                dshape[axis + 1..].iter().product(),
            )
        });
        ElementPlan {
            ishape,
            dshape,
            axis,
            axis_len: dshape[axis],
            negatives,
            axis_stride: strides(dshape)[axis],
            idx,
            flat,
            bad: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// The index reader for hot loops, with a fresh out-of-range flag to pass back to
    /// [`ElementPlan::note`]. Loops read through a copy because the plan's atomic flag makes the
    /// compiler reload every plan field after each output write, which slows a hot loop markedly.
    #[inline(always)]
    fn reader(&self) -> (Reader<'a, I>, bool) {
        (
            Reader {
                idx: self.idx,
                s: self.axis_len,
                negatives: self.negatives,
            },
            false,
        )
    }

    /// Records that a walk met an index out of range.
    #[inline(always)]
    fn note(&self, bad: bool) {
        if bad {
            self.bad.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// The aligned walk over outer blocks `blocks`.
    #[inline(always)]
    fn walk_flat<F: FnMut(usize, usize), P: FnMut(usize)>(
        &self,
        blocks: std::ops::Range<usize>,
        len: usize,
        inner: usize,
        f: &mut F,
        ahead: &mut P,
    ) {
        // Axes addressable by u32 take the batched path (see `walk_flat_batched`).
        if inner == 1 && self.axis_len < reduction::SKIP as usize {
            return self.walk_flat_batched(blocks, len, f, ahead);
        }
        let (r, mut bad) = self.reader();
        let s = r.s;
        let mut pos = blocks.start * len * inner;
        for o in blocks {
            let base = o * s * inner;
            for j in 0..len {
                if inner == 1 {
                    // Name the destination a few updates ahead (unchecked: an index out of range
                    // is simply not named; it is flagged when its turn comes).
                    if j + UPDATES_AHEAD < len {
                        if let Some(k) = r.at(pos + UPDATES_AHEAD) {
                            ahead(base + k);
                        }
                    }
                    match r.at(pos) {
                        Some(k) => f(base + k, pos),
                        None => bad = true,
                    }
                    pos += 1;
                } else {
                    for m in 0..inner {
                        match r.at(pos) {
                            Some(k) => f(base + k * inner + m, pos),
                            None => bad = true,
                        }
                        pos += 1;
                    }
                }
            }
        }
        self.note(bad);
    }
}

impl<I: IndexWord> ElementPlan<'_, I> {
    /// [`ElementPlan::walk_flat`] when the axis is the last one: indices are normalised a batch
    /// at a time by the vectorised [`fast::destinations`], so the loop that calls `f` only reads
    /// them back, which shortens a row-by-row scatter bound by that loop.
    #[inline(always)]
    fn walk_flat_batched<F: FnMut(usize, usize), P: FnMut(usize)>(
        &self,
        blocks: std::ops::Range<usize>,
        len: usize,
        f: &mut F,
        ahead: &mut P,
    ) {
        self.batches(blocks, len, |base, ks, at| {
            for (j, &k) in ks.iter().enumerate() {
                // Name the destination a few updates ahead, within the batch.
                if let Some(&a) = ks.get(j + UPDATES_AHEAD) {
                    if a != reduction::SKIP {
                        ahead(base + a as usize);
                    }
                }
                if k != reduction::SKIP {
                    f(base + k as usize, at + j);
                }
            }
        });
    }

    /// The destinations of outer blocks `blocks` (the axis the last one, addressable by u32),
    /// normalised a batch at a time by the vectorised [`fast::destinations`]: `f(base, ks, at)`
    /// for each batch, update `at + j` going to `base + ks[j]` ([`reduction::SKIP`]: out of
    /// range, and flagged).
    #[inline(always)]
    fn batches<F: FnMut(usize, &[u32], usize)>(
        &self,
        blocks: std::ops::Range<usize>,
        len: usize,
        mut f: F,
    ) {
        const BATCH: usize = 512;
        let (r, mut bad) = self.reader();
        let s = r.s;
        let mut ks = [reduction::SKIP; BATCH];
        for o in blocks {
            let first = o * len;
            for at in (first..first + len).step_by(BATCH) {
                let n = BATCH.min(first + len - at);
                let ks = &mut ks[..n];
                bad |=
                    !fast::destinations(ks, &r.idx[at..at + n], s, r.negatives, 0, reduction::SKIP);
                f(o * s, ks, at);
            }
        }
        self.note(bad);
    }
}

/// Reads and normalises indices; see [`ElementPlan::reader`].
#[derive(Clone, Copy)]
struct Reader<'a, I> {
    idx: &'a [I],
    s: usize,
    negatives: bool,
}

impl<I: IndexWord> Reader<'_, I> {
    /// The normalised index at `pos`, or `None` when out of range.
    #[inline(always)]
    fn at(&self, pos: usize) -> Option<usize> {
        fast::norm(self.idx[pos].get(), self.s, self.negatives)
    }
}

impl<I: IndexWord> Visit for ElementPlan<'_, I> {
    fn visit<F: FnMut(usize, usize)>(&self, f: F) {
        self.visit_ahead(f, |_| {});
    }

    fn visit_ahead<F: FnMut(usize, usize), P: FnMut(usize)>(&self, mut f: F, mut ahead: P) {
        if let Some((outer, len, inner)) = self.flat {
            return self.walk_flat(0..outer, len, inner, &mut f, &mut ahead);
        }
        let (r, mut bad) = self.reader();
        let stride = self.axis_stride;
        for_each_element(self.ishape, self.dshape, self.axis, |pos, base| {
            match r.at(pos) {
                Some(k) => f(base + k * stride, pos),
                None => bad = true,
            }
        });
        self.note(bad);
    }

    fn visit_range<F: FnMut(usize, usize)>(&self, range: std::ops::Range<usize>, mut f: F) {
        if self.axis == 0 {
            // Destinations can be anywhere: scan everything, keep what lands in the range.
            return self.visit(|d, s| {
                if range.contains(&d) {
                    f(d, s)
                }
            });
        }
        // Off axis 0, row i of the indices writes only to row i of the output.
        let row = self.grain();
        let rows = (range.start / row)..(range.end / row).min(self.ishape[0]);
        if let Some((_, len, inner)) = self.flat {
            // Each row of dim 0 holds `per_row` outer blocks.
            let per_row: usize = self.dshape[1..self.axis].iter().product();
            return self.walk_flat(
                rows.start * per_row..rows.end * per_row,
                len,
                inner,
                &mut f,
                &mut |_| {},
            );
        }
        let irow: usize = self.ishape[1..].iter().product();
        let (r, mut bad) = self.reader();
        let stride = self.axis_stride;
        for i in rows {
            for_each_element(
                &self.ishape[1..],
                &self.dshape[1..],
                self.axis - 1,
                |p, base| {
                    let pos = i * irow + p;
                    match r.at(pos) {
                        Some(k) => f(i * row + base + k * stride, pos),
                        None => bad = true,
                    }
                },
            );
        }
        self.note(bad);
    }

    fn visit_range_batched<F: FnMut(usize, &[u32], usize)>(
        &self,
        range: std::ops::Range<usize>,
        f: F,
    ) -> bool {
        // Off axis 0, with the axis the last one, rows of the indices are rows of the output.
        let Some((_, len, 1)) = self.flat else {
            return false;
        };
        if self.axis == 0 || self.axis_len >= reduction::SKIP as usize {
            return false;
        }
        let row = self.grain();
        let rows = (range.start / row)..(range.end / row).min(self.ishape[0]);
        let per_row: usize = self.dshape[1..self.axis].iter().product();
        self.batches(rows.start * per_row..rows.end * per_row, len, f);
        true
    }

    fn destinations(&self, span: std::ops::Range<usize>, dst: &mut [u32]) {
        let Some((_, len, inner)) = self.flat else {
            // Never asked: `spans` is false without the aligned walk.
            dst.fill(reduction::SKIP);
            return;
        };
        let (r, mut bad) = self.reader();
        let per = len * inner;
        let mut pos = span.start;
        let mut rest: &mut [u32] = dst;
        while pos < span.end {
            let o = pos / per;
            let end = ((o + 1) * per).min(span.end);
            let base = o * r.s * inner;
            // The block's destinations are below its end: u32 with room for SKIP above.
            assert!(
                base + r.s * inner <= reduction::SKIP as usize,
                "destinations beyond u32"
            );
            let (d, tail) = std::mem::take(&mut rest).split_at_mut(end - pos);
            rest = tail;
            let idx = &r.idx[pos..end];
            if inner == 1 {
                bad |= !fast::destinations(d, idx, r.s, r.negatives, base, reduction::SKIP);
            } else {
                let mut m = (pos - o * per) % inner;
                for (d, &k) in d.iter_mut().zip(idx) {
                    let k = fast::norm(k.get(), r.s, r.negatives);
                    bad |= k.is_none();
                    *d = k.map_or(reduction::SKIP, |k| (base + k * inner + m) as u32);
                    m += 1;
                    if m == inner {
                        m = 0;
                    }
                }
            }
            pos = end;
        }
        self.note(bad);
    }

    fn deal_split(
        &self,
        span: std::ops::Range<usize>,
        vals: &[u32],
        buckets: &mut deal::Buckets<'_>,
        dst: &mut [u32],
    ) {
        // Destinations are the indices themselves (plus the row's start) when the updates run
        // along the last axis: the deal reads them directly, its index loads overlapping its work.
        let Some((_, len, 1)) = self.flat else {
            return reduction::deal_destinations(self, span, vals, buckets, dst);
        };
        let (r, mut bad) = self.reader();
        let mut pos = span.start;
        while pos < span.end {
            let o = pos / len;
            let end = ((o + 1) * len).min(span.end);
            // Row o starts at o * s in the output (deal_indices checks that its row fits in u32).
            let base = u32::try_from(o * r.s).expect("split walk rows start below u32::MAX");
            let v = &vals[pos - span.start..end - span.start];
            let idx = I::words(&r.idx[pos..end]);
            bad |= !deal::deal_indices(idx, r.s, r.negatives, base, v, buckets);
            pos = end;
        }
        self.note(bad);
    }

    fn updates(&self) -> usize {
        self.idx.len()
    }

    fn selective(&self) -> bool {
        self.axis != 0
    }

    fn direct(&self) -> bool {
        self.axis != 0
    }

    fn spans(&self) -> bool {
        self.flat.is_some()
    }

    fn grain(&self) -> usize {
        if self.axis == 0 {
            1
        } else {
            self.dshape[1..].iter().product()
        }
    }
}

fn scatter(
    inv: &Invocation<'_>,
    negatives: Negatives,
    reduction: Reduction,
) -> Result<Evaluated, SpecError> {
    let data = inv.input(0)?;
    let indices = inv.input(1)?;
    let updates = inv.input(2)?;
    let axis = check_element_shapes(data.shape(), indices.shape(), inv.int("axis")?)?;
    if updates.shape() != indices.shape() {
        return Err(spec_err!(
            "updates has shape {} but indices has shape {}; they must be equal",
            crate::tensor::shape_text(updates.shape()),
            crate::tensor::shape_text(indices.shape())
        ));
    }
    inv.check_output_size(data.dtype(), data.shape())?;
    let ind = Indices::of(indices).ok_or_else(|| spec_err!("indices must be integers"))?;
    let from_back = negatives == Negatives::FromBack;
    let s = data.shape()[axis];

    let storage = crate::with_indices!(ind, |v| {
        let plan = ElementPlan::new(indices.shape(), data.shape(), axis, v, from_back);
        let applied = reduction::apply(data.dtype(), reduction, data, updates, &plan);
        // An out-of-range index errors the case even where the reduction is not implemented.
        if plan.bad.load(std::sync::atomic::Ordering::Relaxed) || applied.is_err() {
            normalize_indices(indices, "indices", s, axis, negatives)?;
        }
        let storage = applied?;
        if plan.bad.load(std::sync::atomic::Ordering::Relaxed) {
            // Drop the output and report the first offending position.
            normalize_indices(indices, "indices", s, axis, negatives)?;
            return Err(spec_err!(
                "internal error: an index was refused but every index is valid"
            ));
        }
        Ok::<_, SpecError>(storage)
    })?;
    let out =
        Tensor::new(data.dtype(), data.shape().to_vec(), storage).map_err(|e| spec_err!("{e}"))?;
    Ok(Evaluated::one(out, reduction != Reduction::None))
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use crate::tensor::{DType, Tensor};

    fn example1() -> (Tensor, Tensor, Tensor) {
        (
            f32s(&[3, 3], &[0.0; 9]),
            i64s(&[2, 3], &[1, 0, 2, 0, 2, 1]),
            f32s(&[2, 3], &[1.0, 1.1, 1.2, 2.0, 2.1, 2.2]),
        )
    }

    #[test]
    fn spec_example_1_at_every_version() {
        let (d, i, u) = example1();
        let want = f32s(&[3, 3], &[2.0, 1.1, 0.0, 1.0, 0.0, 2.2, 0.0, 2.1, 1.2]);
        for opset in [11, 13, 16, 18] {
            assert_eq!(
                run("ScatterElements", opset, vec![], &[&d, &i, &u]).unwrap(),
                want,
                "opset {opset}"
            );
        }
        assert_eq!(run("Scatter", 10, vec![], &[&d, &i, &u]).unwrap(), want);
    }

    #[test]
    fn spec_example_2_axis1() {
        let d = f32s(&[1, 5], &[1.0, 2.0, 3.0, 4.0, 5.0]);
        let i = i64s(&[1, 2], &[1, 3]);
        let u = f32s(&[1, 2], &[1.1, 2.1]);
        let out = run(
            "ScatterElements",
            18,
            vec![int_attr("axis", 1)],
            &[&d, &i, &u],
        )
        .unwrap();
        assert_eq!(out, f32s(&[1, 5], &[1.0, 1.1, 3.0, 2.1, 5.0]));
    }

    #[test]
    fn duplicates_let_the_last_write_win_and_reductions_accumulate_in_order() {
        let d = f32s(&[1, 5], &[1.0, 2.0, 3.0, 4.0, 5.0]);
        let i = i64s(&[1, 2], &[1, 1]);
        let u = f32s(&[1, 2], &[1.1, 2.1]);
        let axis = || int_attr("axis", 1);
        let r = |red: &str, opset| {
            run(
                "ScatterElements",
                opset,
                vec![axis(), str_attr("reduction", red)],
                &[&d, &i, &u],
            )
            .unwrap()
        };
        assert_eq!(
            run("ScatterElements", 13, vec![axis()], &[&d, &i, &u]).unwrap(),
            f32s(&[1, 5], &[1.0, 2.1, 3.0, 4.0, 5.0])
        );
        assert_eq!(
            r("add", 16),
            f32s(&[1, 5], &[1.0, 2.0 + 1.1 + 2.1, 3.0, 4.0, 5.0])
        );
        assert_eq!(
            r("mul", 16),
            f32s(&[1, 5], &[1.0, 2.0 * 1.1 * 2.1, 3.0, 4.0, 5.0])
        );
        assert_eq!(r("max", 18), f32s(&[1, 5], &[1.0, 2.1, 3.0, 4.0, 5.0]));
        assert_eq!(r("min", 18), f32s(&[1, 5], &[1.0, 1.1, 3.0, 4.0, 5.0]));
    }

    /// `count` indices into an axis of `s`, from a fixed LCG: any value in range, counted from
    /// the back about a third of the time; many repeat.
    fn random_indices(count: usize, s: usize, seed: u64) -> Vec<i64> {
        let mut x = seed;
        (0..count)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let k = ((x >> 33) % s as u64) as i64;
                if x % 3 == 0 {
                    k - s as i64
                } else {
                    k
                }
            })
            .collect()
    }

    #[test]
    fn long_last_axis_rows_match_a_naive_loop_across_batches() {
        // Rows of 1300 updates cross the batches of the last-axis walk; indices count from
        // the back about a third of the time, and many repeat.
        let (rows, cols, len) = (3usize, 700usize, 1300usize);
        let data: Vec<i64> = (0..(rows * cols) as i64).collect();
        let idx = random_indices(rows * len, cols, 17);
        let upd: Vec<i64> = (0..(rows * len) as i64).map(|v| 5000 + 3 * v).collect();
        for reduction in ["none", "add"] {
            let mut want = data.clone();
            for r in 0..rows {
                for j in 0..len {
                    let k = idx[r * len + j].rem_euclid(cols as i64) as usize;
                    let u = upd[r * len + j];
                    let o = &mut want[r * cols + k];
                    *o = if reduction == "none" { u } else { *o + u };
                }
            }
            let got = run(
                "ScatterElements",
                18,
                vec![int_attr("axis", 1), str_attr("reduction", reduction)],
                &[
                    &i64s(&[rows, cols], &data),
                    &i64s(&[rows, len], &idx),
                    &i64s(&[rows, len], &upd),
                ],
            )
            .unwrap();
            assert_eq!(got, i64s(&[rows, cols], &want), "{reduction}");
        }
        // One index out of range in the second batch of the last row: an error naming it.
        let mut bad = idx.clone();
        bad[2 * len + 600] = cols as i64;
        let e = err(run(
            "ScatterElements",
            18,
            vec![int_attr("axis", 1)],
            &[
                &i64s(&[rows, cols], &data),
                &i64s(&[rows, len], &bad),
                &i64s(&[rows, len], &upd),
            ],
        ));
        assert!(e.contains("2,600") && e.contains("700"), "{e}");
    }

    #[test]
    fn large_one_dimensional_adds_match_a_naive_loop_on_every_thread_count() {
        // Large enough for the split walk on two threads (output and updates over 1 MiB), where
        // the deal reads the indices itself: random indices, a third from the back, int32 and
        // int64. The float values make the sums depend on their order.
        let (n, m) = (300_000usize, 400_000usize);
        let data: Vec<f32> = (0..n).map(|v| (v % 97) as f32 * 0.25).collect();
        let idx = random_indices(m, n, 5);
        let upd: Vec<f32> = (0..m).map(|v| 1.0 / (v % 1013 + 3) as f32).collect();
        let mut want = data.clone();
        for (&k, &u) in idx.iter().zip(&upd) {
            want[k.rem_euclid(n as i64) as usize] += u;
        }
        let want = f32s(&[n], &want);
        let narrow: Vec<i32> = idx.iter().map(|&k| k as i32).collect();
        let scatter = |indices: &Tensor| {
            run(
                "ScatterElements",
                18,
                vec![int_attr("axis", 0), str_attr("reduction", "add")],
                &[&f32s(&[n], &data), indices, &f32s(&[m], &upd)],
            )
        };
        for indices in [i64s(&[m], &idx), i32s(&[m], &narrow)] {
            for threads in [1, 2, 3] {
                let got = under(threads, || scatter(&indices)).unwrap();
                assert!(
                    got == want,
                    "{:?} indices, {threads} threads",
                    indices.dtype()
                );
            }
        }
        // Out of range past what 32 bits hold (its low half is in range), and just past the
        // axis, each in the middle: an error naming the index.
        for (at, k) in [(200_001, (1i64 << 32) + 5), (333_333, n as i64)] {
            let mut bad = idx.clone();
            bad[at] = k;
            let e = under(2, || err(scatter(&i64s(&[m], &bad))));
            assert!(e.contains(&at.to_string()), "{e} should name {at}");
        }
    }

    #[test]
    fn reductions_are_checked_against_the_version() {
        let (d, i, u) = example1();
        let e = err(run(
            "ScatterElements",
            13,
            vec![str_attr("reduction", "add")],
            &[&d, &i, &u],
        ));
        assert!(
            e.contains("'reduction' is not defined by ScatterElements-13")
                && e.contains("version 16"),
            "{e}"
        );
        let e = err(run(
            "ScatterElements",
            16,
            vec![str_attr("reduction", "max")],
            &[&d, &i, &u],
        ));
        assert!(e.contains("not allowed by ScatterElements-16"), "{e}");
        let e = err(run(
            "ScatterElements",
            18,
            vec![str_attr("reduction", "sub")],
            &[&d, &i, &u],
        ));
        assert!(e.contains("not a known reduction"), "{e}");
    }

    #[test]
    fn scatter_is_deprecated_at_11_and_forbids_negative_indices_at_9() {
        let (d, _, u) = example1();
        let i = i64s(&[2, 3], &[1, 0, 2, 0, 2, -1]);
        let e = err(run("Scatter", 11, vec![], &[&d, &i, &u]));
        assert!(e.contains("deprecated"), "{e}");
        let e = err(run("Scatter", 9, vec![], &[&d, &i, &u]));
        assert!(e.contains("Scatter-9") && e.contains("negative"), "{e}");
        assert!(run("ScatterElements", 11, vec![], &[&d, &i, &u]).is_ok());
    }

    #[test]
    fn shapes_and_indices_are_validated_before_writing() {
        let (d, i, _) = example1();
        let e = err(run(
            "ScatterElements",
            18,
            vec![],
            &[&d, &i, &f32s(&[3, 2], &[0.0; 6])],
        ));
        assert!(e.contains("updates has shape [3, 2]"), "{e}");
        let bad = i64s(&[2, 3], &[1, 0, 2, 0, 2, 3]);
        let e = err(run(
            "ScatterElements",
            18,
            vec![],
            &[&d, &bad, &f32s(&[2, 3], &[0.0; 6])],
        ));
        assert_eq!(
            e,
            "indices[1,2] = 3 is out of range [-3, 2] for axis 0 (size 3)"
        );
        let e = err(run(
            "ScatterElements",
            18,
            vec![],
            &[&d, &i64s(&[2], &[0, 1]), &f32s(&[2], &[0.0; 2])],
        ));
        assert!(e.contains("rank"), "{e}");
        let ints = i64s(&[2, 3], &[0; 6]);
        let e = err(run("ScatterElements", 18, vec![], &[&d, &i, &ints]));
        assert!(e.contains("int64") && e.contains("float"), "{e}");
    }

    #[test]
    fn empty_indices_leave_data_unchanged() {
        let d = f32s(&[2, 2], &[1.0, 2.0, 3.0, 4.0]);
        let out = run(
            "ScatterElements",
            18,
            vec![],
            &[&d, &i64s(&[0, 2], &[]), &f32s(&[0, 2], &[])],
        )
        .unwrap();
        assert_eq!(out, d);
    }

    #[test]
    fn bool_and_string_reductions() {
        let b = |v: &[u8]| Tensor::from_elems(DType::Bool, vec![v.len()], v.to_vec()).unwrap();
        let i = i64s(&[2], &[0, 0]);
        let out = run(
            "ScatterElements",
            18,
            vec![str_attr("reduction", "add")],
            &[&b(&[0, 0]), &i, &b(&[0, 1])],
        )
        .unwrap();
        assert_eq!(out, b(&[1, 0]));
        let s = |v: &[&str]| {
            Tensor::from_elems(
                DType::String,
                vec![v.len()],
                v.iter().map(|x| x.as_bytes().to_vec()).collect(),
            )
            .unwrap()
        };
        let out = run(
            "ScatterElements",
            18,
            vec![str_attr("reduction", "add")],
            &[&s(&["a", "b"]), &i, &s(&["x", "y"])],
        )
        .unwrap();
        assert_eq!(out, s(&["axy", "b"]));
        let e = run(
            "ScatterElements",
            18,
            vec![str_attr("reduction", "mul")],
            &[&s(&["a", "b"]), &i, &s(&["x", "y"])],
        );
        assert!(matches!(e, Err(crate::ops::SpecError::Unsupported(_))));
    }
}
