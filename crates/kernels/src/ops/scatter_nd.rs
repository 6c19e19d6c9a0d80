//! ScatterND: <https://onnx.ai/onnx/operators/onnx__ScatterND.html>
//!
//! | since | change |
//! |---|---|
//! | 11 | `out = data; out[indices[I..]] = updates[I..]` (a slice of `data.shape[k..]` per tuple); int64 indices |
//! | 13 | bfloat16 |
//! | 16 | `reduction`: none, add, mul |
//! | 18 | `reduction`: max, min |
//!
//! Rules (D6): indices rank q >= 1, `k = indices.shape[-1] <= r`,
//! `updates.shape == indices.shape[:-1] ++ data.shape[k:]`. `k = 0` is allowed: every update
//! replaces (or reduces into) the whole tensor. Updates apply in row-major order of the tuples.

use super::index::tuple_offsets;
use super::provenance::{resolve_tuple, IndexInfo, Quirks, Semantics, Subject};
use super::reduction::{self, Reduction, Visit};
use super::{
    AttrSpec, Attrs, Constraint, Evaluated, Indexing, InputSpec, Invocation, OpDef, OpVersion,
    Role, SpecError,
};
use super::{CLASSIC_BF16_TIND64, CLASSIC_TIND64};
use super::{REDUCTIONS_16 as R16, REDUCTIONS_18 as R18};
use crate::spec_err;
use crate::tensor::{numel, DType, Tensor};

const INPUTS: &[InputSpec] = &[
    InputSpec::required("data", "T", Role::Data),
    InputSpec::required("indices", "Tind", Role::Indices),
    InputSpec::required("updates", "T", Role::Updates),
];

/// A version whose `reduction` attribute chooses among `modes`.
const fn version(
    since: i64,
    attrs: &'static [AttrSpec],
    constraints: &'static [Constraint],
    modes: &'static [&'static str],
) -> OpVersion {
    OpVersion::base(since, attrs, INPUTS, constraints, eval).with_modes("reduction", modes)
}

/// The ScatterND operator, versions 11, 13, 16 and 18.
pub(crate) static SCATTER_ND: OpDef = OpDef {
    domain: "",
    op_type: "ScatterND",
    spec: "https://onnx.ai/onnx/operators/onnx__ScatterND.html",
    plumbing: false,
    context: false,
    gathers: false,
    indexing: Indexing::Tuples,
    provenance: Some(provenance),
    versions: &[
        version(11, &[], CLASSIC_TIND64, &["none"]),
        version(13, &[], CLASSIC_BF16_TIND64, &["none"]),
        version(
            16,
            &[AttrSpec::choice("reduction", R16)],
            CLASSIC_BF16_TIND64,
            R16,
        ),
        version(
            18,
            &[AttrSpec::choice("reduction", R18)],
            CLASSIC_BF16_TIND64,
            R18,
        ),
    ],
};

/// ScatterND's attributes: the typed entry to the kernel of every version.
///
/// ```
/// use onnx_idx_check_kernels::ops::{Reduction, ScatterNd};
/// use onnx_idx_check_kernels::Tensor;
///
/// let data = Tensor::from_vec(vec![2, 2], vec![1i64, 2, 3, 4])?;
/// let indices = Tensor::from_vec(vec![1, 1], vec![1i64])?;
/// let updates = Tensor::from_vec(vec![1, 2], vec![10i64, 20])?;
/// let add = ScatterNd { reduction: Reduction::Add };
/// assert_eq!(add.eval(16, &data, &indices, &updates)?.to_vec::<i64>()?, [1, 2, 13, 24]);
/// // Reductions arrive with ScatterND-16.
/// assert!(add.eval(13, &data, &indices, &updates).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScatterNd {
    /// How updates combine with what is there (from version 16; max and min from 18).
    /// [`Reduction::None`], the default, is accepted at every version.
    pub reduction: Reduction,
}

impl ScatterNd {
    /// `out = data`, then each index tuple in the last dim of `indices` writes (or reduces) its
    /// slice of `updates` into `out`, in row-major order, as ScatterND does at `opset`: the same
    /// checks and kernel as a node in a model.
    ///
    /// ```
    /// use onnx_idx_check_kernels::ops::{Reduction, ScatterNd};
    /// use onnx_idx_check_kernels::Tensor;
    ///
    /// // The specification's first example.
    /// let data = Tensor::from_vec(vec![8], vec![1i64, 2, 3, 4, 5, 6, 7, 8])?;
    /// let indices = Tensor::from_vec(vec![4, 1], vec![4i64, 3, 1, 7])?;
    /// let updates = Tensor::from_vec(vec![4], vec![9i64, 10, 11, 12])?;
    /// let out = ScatterNd::default().eval(11, &data, &indices, &updates)?;
    /// assert_eq!(out.to_vec::<i64>()?, [1, 11, 3, 10, 9, 6, 7, 12]);
    ///
    /// // With duplicates and `mul`, updates multiply in order.
    /// let twice = Tensor::from_vec(vec![2, 1], vec![0i64, 0])?;
    /// let by = Tensor::from_vec(vec![2], vec![3i64, 5])?;
    /// let mul = ScatterNd { reduction: Reduction::Mul };
    /// assert_eq!(mul.eval(16, &data, &twice, &by)?.to_vec::<i64>()?[0], 15);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn eval(
        &self,
        opset: i64,
        data: &Tensor,
        indices: &Tensor,
        updates: &Tensor,
    ) -> Result<Tensor, SpecError> {
        let attrs = match self.reduction {
            Reduction::None => Attrs::new(),
            r => Attrs::new().with_str("reduction", r.name()),
        };
        super::call_typed(
            &SCATTER_ND,
            opset,
            attrs,
            &[Some(data), Some(indices), Some(updates)],
        )
    }
}

/// The output starts as data; each update slice goes (or reduces) where its tuple points.
fn provenance<'a>(s: &Subject<'a>, q: &Quirks) -> Option<Semantics<'a>> {
    let (data, indices, updates) = (s.input(0)?, s.input(1)?, s.input(2)?);
    let red = s.reduction(q)?;
    semantics(
        Some(data),
        data.dtype(),
        data.shape(),
        indices,
        updates,
        0,
        red,
        q,
    )
}

/// What the ops that work like scatter nd do, element by element: the output (of `shape`)
/// starts as `base`, or zeros, and each index tuple's slice of `updates` goes (or reduces) to the
/// slice it names within its batch (the first `b` dims of `shape` and `indices`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn semantics<'a>(
    base: Option<&'a Tensor>,
    dtype: DType,
    shape: &[usize],
    indices: &Tensor,
    updates: &'a Tensor,
    b: usize,
    reduction: Reduction,
    q: &Quirks,
) -> Option<Semantics<'a>> {
    let is = indices.shape();
    let qr = is.len();
    if qr <= b || b > shape.len() || shape[..b] != is[..b] || !q.admits(numel(shape)?) {
        return None;
    }
    let k = is[qr - 1];
    if b + k > shape.len() {
        return None;
    }
    let mut want = is[..qr - 1].to_vec();
    want.extend_from_slice(&shape[b + k..]);
    if updates.shape() != want.as_slice() {
        return None;
    }
    let values = indices.to_i64_vec()?;
    let dims = &shape[b..b + k];
    let (slots, slice) = (numel(dims)?, numel(&shape[b + k..])?);
    let per_batch = numel(&is[b..qr - 1])?;
    let mut pairs = Vec::new();
    for t in 0..numel(&is[..qr - 1])? {
        if let Some(off) = resolve_tuple(&values[t * k..(t + 1) * k], dims, q)? {
            let batch = t.checked_div(per_batch).unwrap_or(0);
            for e in 0..slice {
                pairs.push(((batch * slots + off) * slice + e, t * slice + e, t));
            }
        }
    }
    if q.reverse {
        pairs.reverse();
    }
    Some(Semantics::Scattered {
        base,
        dtype,
        shape: shape.to_vec(),
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

fn eval(inv: &Invocation<'_>) -> Result<Evaluated, SpecError> {
    scatter_nd(inv, super::reduction_of(inv)?)
}

/// How many slices ahead of its updates a range of ScatterND asks for their destinations. The
/// ranges walk streams its copy of the data out of the cache, so every destination slice is a
/// trip to memory: with several asked for ahead their misses overlap instead of being waited
/// for one at a time. The count is not critical (half or twice as many do as well).
const SLICES_AHEAD: usize = 8;

/// Tuple `t` writes the `slice` elements of updates starting at `t * slice` to the output
/// starting at `offsets[t] * slice`: the plan of any op that moves whole slices named by index
/// tuples, shared with the ops built like ScatterND.
pub(crate) struct SlicePlan<'a> {
    /// Per tuple, the output slot its slice goes to (in units of slices).
    pub(crate) offsets: &'a [usize],
    /// Elements per slice.
    pub(crate) slice: usize,
}

impl Visit for SlicePlan<'_> {
    fn visit<F: FnMut(usize, usize)>(&self, mut f: F) {
        for (t, &o) in self.offsets.iter().enumerate() {
            let (dst, src) = (o * self.slice, t * self.slice);
            for e in 0..self.slice {
                f(dst + e, src + e);
            }
        }
    }

    fn visit_range<F: FnMut(usize, usize)>(&self, range: std::ops::Range<usize>, f: F) {
        self.visit_range_ahead(range, f, |_| {});
    }

    #[inline(always)]
    fn visit_range_ahead<F: FnMut(usize, usize), P: FnMut(usize)>(
        &self,
        range: std::ops::Range<usize>,
        mut f: F,
        mut ahead: P,
    ) {
        // Ranges are whole slices, so a tuple's slice is either all inside or all outside. The
        // tuples inside are found SLICES_AHEAD before they are applied (a ring of their
        // numbers), so that their slices' trips to memory overlap.
        let mut inside = self
            .offsets
            .iter()
            .enumerate()
            .filter(|&(_, &o)| range.contains(&(o * self.slice)));
        let mut ring = [(0usize, 0usize); SLICES_AHEAD];
        let (mut head, mut queued) = (0, 0);
        loop {
            while queued < SLICES_AHEAD {
                let Some((t, &o)) = inside.next() else { break };
                let dst = o * self.slice;
                ahead(dst);
                ring[(head + queued) % SLICES_AHEAD] = (dst, t * self.slice);
                queued += 1;
            }
            if queued == 0 {
                return;
            }
            let (dst, src) = ring[head];
            (head, queued) = ((head + 1) % SLICES_AHEAD, queued - 1);
            for e in 0..self.slice {
                f(dst + e, src + e);
            }
        }
    }

    fn updates(&self) -> usize {
        self.offsets.len() * self.slice
    }

    fn grain(&self) -> usize {
        self.slice
    }

    fn selective(&self) -> bool {
        // Each range scans every tuple, which pays when a tuple moves a long slice.
        self.slice >= 16
    }
}

fn scatter_nd(inv: &Invocation<'_>, reduction: Reduction) -> Result<Evaluated, SpecError> {
    let data = inv.input(0)?;
    let indices = inv.input(1)?;
    let updates = inv.input(2)?;
    let (r, q) = (data.rank(), indices.rank());
    if r == 0 {
        return Err(spec_err!("data must have rank >= 1, it is a scalar"));
    }
    if q == 0 {
        return Err(spec_err!("indices must have rank >= 1, it is a scalar"));
    }
    let (dshape, ishape) = (data.shape(), indices.shape());
    let k = ishape[q - 1];
    if k > r {
        return Err(spec_err!(
            "indices.shape[-1] = {k} must not exceed the rank of data ({r})"
        ));
    }
    let mut want = ishape[..q - 1].to_vec();
    want.extend_from_slice(&dshape[k..]);
    if updates.shape() != want.as_slice() {
        return Err(spec_err!(
            "updates has shape {} but must have indices.shape[:-1] ++ data.shape[{k}:] = {}",
            crate::tensor::shape_text(updates.shape()),
            crate::tensor::shape_text(&want)
        ));
    }
    inv.check_output_size(data.dtype(), dshape)?;
    // k = 0 indices hold no values, so nothing in memory bounds their leading dims (a
    // [3, 2^40, 0] tensor is empty): a tuple per position would be terabytes. Each tuple writes
    // the whole data, which is empty here, so no tuple writes anything; the reduction still runs
    // (on no update), so that one the dtype does not support is reported as for any other input.
    let offsets = if k == 0 && data.numel() == 0 {
        Vec::new()
    } else {
        tuple_offsets(indices, &dshape[..k], 0)?
    };
    let plan = SlicePlan {
        offsets: &offsets,
        slice: numel(&dshape[k..]).unwrap_or(0),
    };
    let storage = reduction::apply(data.dtype(), reduction, data, updates, &plan)?;
    let out = Tensor::new(data.dtype(), dshape.to_vec(), storage).map_err(|e| spec_err!("{e}"))?;
    Ok(Evaluated::one(out, reduction != Reduction::None))
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use crate::tensor::Tensor;

    #[test]
    fn k_0_over_empty_data_writes_nothing_and_allocates_nothing() {
        // Found by tests/public_api.rs: one offset per index tuple was 3 * 2^40 offsets.
        let d = Tensor::from_vec(vec![3, 0], Vec::<i64>::new()).unwrap();
        let i = Tensor::from_vec(vec![3, 1 << 40, 0], Vec::<i64>::new()).unwrap();
        let u = Tensor::from_vec(vec![3, 1 << 40, 3, 0], Vec::<i64>::new()).unwrap();
        assert_eq!(run("ScatterND", 18, vec![], &[&d, &i, &u]).unwrap(), d);
        let add = vec![str_attr("reduction", "add")];
        assert_eq!(run("ScatterND", 18, add, &[&d, &i, &u]).unwrap(), d);
        // A reduction the dtype has no arithmetic for is still unsupported (D8: bool min).
        let b = Tensor::from_vec(vec![3, 0], Vec::<bool>::new()).unwrap();
        let bu = Tensor::from_vec(vec![3, 1 << 40, 3, 0], Vec::<bool>::new()).unwrap();
        let min = vec![str_attr("reduction", "min")];
        assert!(matches!(
            run("ScatterND", 18, min, &[&b, &i, &bu]),
            Err(super::super::SpecError::Unsupported(_))
        ));
    }

    #[test]
    fn spec_example_1_elements() {
        let d = i64s(&[8], &[1, 2, 3, 4, 5, 6, 7, 8]);
        let i = i64s(&[4, 1], &[4, 3, 1, 7]);
        let u = i64s(&[4], &[9, 10, 11, 12]);
        assert_eq!(
            run("ScatterND", 11, vec![], &[&d, &i, &u]).unwrap(),
            i64s(&[8], &[1, 11, 3, 10, 9, 6, 7, 12])
        );
    }

    #[test]
    fn spec_example_2_slices() {
        let block = |v: i64| vec![v; 16];
        let d = i64s(
            &[4, 4, 4],
            &(1..=4)
                .flat_map(|_| (1..=4).flat_map(|r| vec![r, r, r, r]).collect::<Vec<_>>())
                .collect::<Vec<_>>(),
        );
        let i = i64s(&[2, 1], &[0, 2]);
        let u = i64s(&[2, 4, 4], &[block(5), block(1)].concat());
        let out = run("ScatterND", 13, vec![], &[&d, &i, &u]).unwrap();
        let mut want: Vec<i64> = block(5);
        want.extend((1..=4).flat_map(|r| vec![r, r, r, r]));
        want.extend(block(1));
        want.extend((1..=4).flat_map(|r| vec![r, r, r, r]));
        assert_eq!(out, i64s(&[4, 4, 4], &want));
        let _ = d;
    }

    #[test]
    fn reductions_accumulate_duplicates_in_order() {
        let d = f32s(&[4], &[1.0, 2.0, 3.0, 4.0]);
        let i = i64s(&[3, 1], &[1, 1, -1]);
        let u = f32s(&[3], &[10.0, 20.0, 0.5]);
        let r = |red: &str, opset| {
            run(
                "ScatterND",
                opset,
                vec![str_attr("reduction", red)],
                &[&d, &i, &u],
            )
            .unwrap()
        };
        assert_eq!(r("none", 16), f32s(&[4], &[1.0, 20.0, 3.0, 0.5]));
        assert_eq!(r("add", 16), f32s(&[4], &[1.0, 32.0, 3.0, 4.5]));
        assert_eq!(r("mul", 16), f32s(&[4], &[1.0, 400.0, 3.0, 2.0]));
        assert_eq!(r("max", 18), f32s(&[4], &[1.0, 20.0, 3.0, 4.0]));
        assert_eq!(r("min", 18), f32s(&[4], &[1.0, 2.0, 3.0, 0.5]));
        assert!(err(run(
            "ScatterND",
            16,
            vec![str_attr("reduction", "max")],
            &[&d, &i, &u]
        ))
        .contains("not allowed"));
        assert!(err(run(
            "ScatterND",
            13,
            vec![str_attr("reduction", "add")],
            &[&d, &i, &u]
        ))
        .contains("version 16"));
    }

    #[test]
    fn k_zero_replaces_the_whole_tensor_and_the_last_update_wins() {
        let d = f32s(&[2], &[1.0, 2.0]);
        let i = i64s(&[2, 0], &[]);
        let u = f32s(&[2, 2], &[5.0, 6.0, 7.0, 8.0]);
        assert_eq!(
            run("ScatterND", 13, vec![], &[&d, &i, &u]).unwrap(),
            f32s(&[2], &[7.0, 8.0])
        );
    }

    // k = 0 (D6): each index tuple is empty, so each update is a whole tensor that replaces, or
    // reduces into, the output; tuples apply in row-major order of indices.shape[:-1].

    #[test]
    fn k_zero_with_reduction_none_leaves_the_last_update_in_rank_1_and_rank_3() {
        // Rank 1, three updates, at every version and with `reduction = "none"` spelt out.
        let d = f32s(&[4], &[1.0, 2.0, 3.0, 4.0]);
        let i = i64s(&[3, 0], &[]);
        let u = f32s(
            &[3, 4],
            &[
                5.0, 6.0, 7.0, 8.0, -1.0, -2.0, -3.0, -4.0, 9.5, 0.5, 8.5, 1.5,
            ],
        );
        let last = f32s(&[4], &[9.5, 0.5, 8.5, 1.5]);
        for opset in [11, 13] {
            assert_eq!(
                run("ScatterND", opset, vec![], &[&d, &i, &u]).unwrap(),
                last
            );
        }
        for opset in [16, 18] {
            let none = vec![str_attr("reduction", "none")];
            assert_eq!(run("ScatterND", opset, none, &[&d, &i, &u]).unwrap(), last);
        }
        // Rank 1 with indices of shape [0]: no batch dimensions, so one empty tuple and one
        // update shaped like data.
        let i = i64s(&[0], &[]);
        let u = f32s(&[4], &[7.0, 8.0, 9.0, 10.0]);
        assert_eq!(run("ScatterND", 13, vec![], &[&d, &i, &u]).unwrap(), u);
        // Rank 3 (24 elements: slices this long take the range walk, shorter ones the sweep),
        // indices [2, 2, 0]: four updates, the one at [1, 1] is the last.
        let d = f32s(&[2, 3, 4], &(0..24).map(|v| v as f32).collect::<Vec<_>>());
        let i = i64s(&[2, 2, 0], &[]);
        let u: Vec<f32> = (0..96).map(|v| 100.0 + v as f32).collect();
        let u = f32s(&[2, 2, 2, 3, 4], &u);
        let want: Vec<f32> = (72..96).map(|v| 100.0 + v as f32).collect();
        assert_eq!(
            run("ScatterND", 13, vec![], &[&d, &i, &u]).unwrap(),
            f32s(&[2, 3, 4], &want)
        );
    }

    #[test]
    fn k_zero_add_and_mul_reduce_every_update_into_the_whole_tensor() {
        let d = f32s(&[3], &[1.0, 2.0, 3.0]);
        let i = i64s(&[2, 0], &[]);
        let u = f32s(&[2, 3], &[10.0, 20.0, 30.0, 0.5, 0.5, 2.0]);
        let r = |red: &str, i: &Tensor, u: &Tensor| {
            run(
                "ScatterND",
                16,
                vec![str_attr("reduction", red)],
                &[&d, i, u],
            )
            .unwrap()
        };
        // By hand: 1 + 10 + 0.5, 2 + 20 + 0.5, 3 + 30 + 2; 1 * 10 * 0.5, 2 * 20 * 0.5, 3 * 30 * 2.
        assert_eq!(r("add", &i, &u), f32s(&[3], &[11.5, 22.5, 35.0]));
        assert_eq!(r("mul", &i, &u), f32s(&[3], &[5.0, 20.0, 180.0]));
        // One update (indices of shape [0]): data + u, data * u.
        let i = i64s(&[0], &[]);
        let u = f32s(&[3], &[4.0, -1.0, 0.5]);
        assert_eq!(r("add", &i, &u), f32s(&[3], &[5.0, 1.0, 3.5]));
        assert_eq!(r("mul", &i, &u), f32s(&[3], &[4.0, -2.0, 1.5]));
        // An empty batch (indices [0, 0]): no update, data unchanged.
        let i = i64s(&[0, 0], &[]);
        let u = f32s(&[0, 3], &[]);
        assert_eq!(r("add", &i, &u), d);
        assert_eq!(r("mul", &i, &u), d);
    }

    /// How the naive reference combines an element with an update.
    type Combine = fn(f32, f32) -> f32;

    #[test]
    fn k_zero_reductions_agree_with_a_naive_loop_in_rank_1_and_rank_3() {
        // Values are odd multiples of 0.5 (never zero, never NaN): sums and products of a few
        // of them are exact in f32, so the order of the walk cannot hide behind rounding.
        let mut seed = 0x2545_f491_u32;
        let mut values = |n: usize| -> Vec<f32> {
            (0..n)
                .map(|_| {
                    seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                    ((seed >> 16) % 17) as f32 - 8.5
                })
                .collect()
        };
        // (data shape, indices shape with its last dimension 0)
        let cases: [(&[usize], &[usize]); 4] = [
            (&[5], &[3, 0]),
            (&[5], &[2, 2, 0]),
            (&[2, 3, 4], &[3, 0]),
            (&[2, 3, 4], &[2, 2, 0]),
        ];
        for (dshape, ishape) in cases {
            let n: usize = dshape.iter().product();
            let m: usize = ishape[..ishape.len() - 1].iter().product();
            let data = values(n);
            let upd = values(m * n);
            let mut ushape = ishape[..ishape.len() - 1].to_vec();
            ushape.extend_from_slice(dshape);
            let (d, i, u) = (f32s(dshape, &data), i64s(ishape, &[]), f32s(&ushape, &upd));
            let ops: [(&str, i64, Combine); 5] = [
                ("none", 16, |_, b| b),
                ("add", 16, |a, b| a + b),
                ("mul", 16, |a, b| a * b),
                ("max", 18, f32::max),
                ("min", 18, f32::min),
            ];
            for (red, opset, f) in ops {
                // Every update, in order, combined into every element.
                let mut want = data.clone();
                for t in 0..m {
                    for (e, w) in want.iter_mut().enumerate() {
                        *w = f(*w, upd[t * n + e]);
                    }
                }
                let got = run(
                    "ScatterND",
                    opset,
                    vec![str_attr("reduction", red)],
                    &[&d, &i, &u],
                )
                .unwrap();
                assert_eq!(got, f32s(dshape, &want), "{red} {dshape:?} {ishape:?}");
            }
        }
    }

    #[test]
    fn shape_rules_and_ranges_are_errors() {
        let d = f32s(&[2, 2], &[0.0; 4]);
        let e = err(run(
            "ScatterND",
            13,
            vec![],
            &[&d, &i64s(&[1, 1], &[0]), &f32s(&[1, 3], &[0.0; 3])],
        ));
        assert!(
            e.contains("updates has shape [1, 3]") && e.contains("[1, 2]"),
            "{e}"
        );
        let e = err(run(
            "ScatterND",
            13,
            vec![],
            &[&d, &i64s(&[1, 3], &[0, 0, 0]), &f32s(&[1], &[0.0])],
        ));
        assert!(e.contains("must not exceed"), "{e}");
        let e = err(run(
            "ScatterND",
            13,
            vec![],
            &[&d, &i64s(&[1, 2], &[0, 2]), &f32s(&[1], &[0.0])],
        ));
        assert_eq!(
            e,
            "indices[0,1] = 2 is out of range [-2, 1] for data dimension 1 (size 2)"
        );
        let e = err(run(
            "ScatterND",
            13,
            vec![],
            &[&d, &i64s(&[], &[0]), &f32s(&[2], &[0.0; 2])],
        ));
        assert!(e.contains("rank >= 1"), "{e}");
    }

    #[test]
    fn empty_indices_leave_data_unchanged() {
        let d = f32s(&[0, 3], &[]);
        assert_eq!(
            run(
                "ScatterND",
                13,
                vec![],
                &[&d, &i64s(&[0, 1], &[]), &f32s(&[0, 3], &[])]
            )
            .unwrap(),
            d
        );
        let d = f32s(&[2], &[1.0, 2.0]);
        assert_eq!(
            run(
                "ScatterND",
                13,
                vec![],
                &[&d, &i64s(&[0, 1], &[]), &f32s(&[0], &[])]
            )
            .unwrap(),
            d
        );
    }

    #[test]
    fn a_range_visits_its_slices_in_tuple_order_and_asks_for_each_before_it_arrives() {
        use super::super::reduction::Visit;
        use super::SlicePlan;
        // 40 tuples into 10 slots of 3 elements, with duplicates; slot = (7 t + 3) mod 10.
        let offsets: Vec<usize> = (0..40).map(|t| (7 * t + 3) % 10).collect();
        let plan = SlicePlan {
            offsets: &offsets,
            slice: 3,
        };
        for (lo, hi) in [(0, 10), (0, 1), (2, 5), (9, 10), (4, 4)] {
            let range = lo * 3..hi * 3;
            // Written out by hand: every tuple whose slot is in range, in tuple order.
            let mut want = Vec::new();
            for (t, &o) in offsets.iter().enumerate() {
                if (lo..hi).contains(&o) {
                    want.extend((0..3).map(|e| (o * 3 + e, t * 3 + e)));
                }
            }
            let (mut got, asked) = (Vec::new(), std::cell::RefCell::new(Vec::new()));
            plan.visit_range_ahead(
                range.clone(),
                |d, s| {
                    // The slice starting here was asked for before its first element arrived.
                    if s % 3 == 0 {
                        assert!(asked.borrow().contains(&d), "{d} not asked for ahead");
                    }
                    got.push((d, s))
                },
                |d| asked.borrow_mut().push(d),
            );
            assert_eq!(got, want, "range {range:?}");
            assert_eq!(
                asked.borrow().len() * 3,
                want.len(),
                "one request per slice"
            );
            let mut plain = Vec::new();
            plan.visit_range(range, |d, s| plain.push((d, s)));
            assert_eq!(plain, want);
        }
    }
}

#[cfg(test)]
mod provenance_tests {
    use super::*;
    use crate::ops::provenance::execute;
    use crate::ops::testutil::{f32s, i64s};

    #[test]
    fn scatter_nd_from_zeros_adds_each_slice_within_its_batch() {
        // Shape [2, 2, 2], batch_dims 1, one tuple per batch: [1] in batch 0 and [0] in batch 1,
        // each adding a slice of 2. By hand: batch 0 row 1 = [1, 2], batch 1 row 0 = [3, 4].
        let (indices, updates) = (i64s(&[2, 1], &[1, 0]), f32s(&[2, 2], &[1.0, 2.0, 3.0, 4.0]));
        let q = Quirks::default();
        let sem = semantics(
            None,
            DType::Float,
            &[2, 2, 2],
            &indices,
            &updates,
            1,
            Reduction::Add,
            &q,
        )
        .unwrap();
        let want = f32s(&[2, 2, 2], &[0.0, 0.0, 1.0, 2.0, 3.0, 4.0, 0.0, 0.0]);
        assert_eq!(execute(&sem).unwrap(), want);
        // Batch dims that differ, or updates not shaped like the forward output, model nothing.
        let other = i64s(&[3, 1], &[0, 0, 0]);
        assert!(semantics(
            None,
            DType::Float,
            &[2, 2, 2],
            &other,
            &updates,
            1,
            Reduction::Add,
            &q
        )
        .is_none());
        let flat = f32s(&[4], &[0.0; 4]);
        assert!(semantics(
            None,
            DType::Float,
            &[2, 2, 2],
            &indices,
            &flat,
            1,
            Reduction::Add,
            &q
        )
        .is_none());
    }
}
