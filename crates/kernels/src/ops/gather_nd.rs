//! GatherND: <https://onnx.ai/onnx/operators/onnx__GatherND.html>
//!
//! | since | change |
//! |---|---|
//! | 11 | `out[I.., T..] = data[indices[I.., 0..k].., T..]`; int64 indices; negatives from the back |
//! | 12 | `batch_dims`: the first b dims of data and indices are shared batch dims |
//! | 13 | bfloat16 |
//!
//! Rules (D6): indices rank q >= 1, `b < min(q, r)`, `indices.shape[:b] == data.shape[:b]`,
//! `1 <= k <= r - b`. Each index tuple selects a contiguous slice of `prod(data.shape[b+k..])`
//! elements, so the kernel is one block copy per tuple.

use super::index::tuple_offsets;
use super::provenance::{resolve_tuple, IndexInfo, Quirks, Semantics, Subject};
use super::{
    check_heap_bytes, AttrSpec, Attrs, Constraint, Evaluated, Indexing, InputSpec, Invocation,
    OpDef, OpVersion, Role, SpecError,
};
use super::{CLASSIC_BF16_TIND64, CLASSIC_TIND64};
use crate::spec_err;
use crate::tensor::{numel, Elem, Layout, Storage, Tensor};

const INPUTS: &[InputSpec] = &[
    InputSpec::required("data", "T", Role::Data),
    InputSpec::required("indices", "Tind", Role::Indices),
];

const fn version(
    since: i64,
    attrs: &'static [AttrSpec],
    constraints: &'static [Constraint],
) -> OpVersion {
    OpVersion::base(since, attrs, INPUTS, constraints, eval)
}

const BATCH_DIMS: &[AttrSpec] = &[AttrSpec::int("batch_dims", 0)];

/// The GatherND operator, versions 11, 12 and 13.
pub(crate) static GATHER_ND: OpDef = OpDef {
    domain: "",
    op_type: "GatherND",
    spec: "https://onnx.ai/onnx/operators/onnx__GatherND.html",
    plumbing: false,
    context: false,
    gathers: true,
    indexing: Indexing::Tuples,
    provenance: Some(provenance),
    versions: &[
        version(11, &[], CLASSIC_TIND64),
        version(12, BATCH_DIMS, CLASSIC_TIND64),
        version(13, BATCH_DIMS, CLASSIC_BF16_TIND64),
    ],
};

/// GatherND's attributes: the typed entry to the kernel of every version.
///
/// ```
/// use onnx_idx_check_kernels::ops::GatherNd;
/// use onnx_idx_check_kernels::Tensor;
///
/// let data = Tensor::from_vec(vec![2, 2], vec![1i64, 2, 3, 4])?;
/// let indices = Tensor::from_vec(vec![2, 1], vec![1i64, 0])?;
/// // batch_dims arrives with GatherND-12.
/// let batched = GatherNd { batch_dims: 1 };
/// assert_eq!(batched.eval(12, &data, &indices)?.to_vec::<i64>()?, [2, 3]);
/// assert!(batched.eval(11, &data, &indices).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GatherNd {
    /// How many leading dims data and indices share as batch dims (from version 12; 0, the
    /// default, is the only value version 11 accepts).
    pub batch_dims: i64,
}

impl GatherNd {
    /// Each index tuple in the last dim of `indices` selects a slice of `data`, as GatherND does
    /// at `opset`: the same checks and kernel as a node in a model.
    ///
    /// ```
    /// use onnx_idx_check_kernels::ops::GatherNd;
    /// use onnx_idx_check_kernels::Tensor;
    ///
    /// // The specification's example 5: batch_dims = 1.
    /// let data = Tensor::from_vec(vec![2, 2, 2], vec![0i32, 1, 2, 3, 4, 5, 6, 7])?;
    /// let indices = Tensor::from_vec(vec![2, 1], vec![1i64, 0])?;
    /// let out = GatherNd { batch_dims: 1 }.eval(13, &data, &indices)?;
    /// assert_eq!(out.shape(), [2, 2]);
    /// assert_eq!(out.to_vec::<i32>()?, [2, 3, 4, 5]);
    ///
    /// // batch_dims arrives with version 12.
    /// assert!(GatherNd { batch_dims: 1 }.eval(11, &data, &indices).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn eval(&self, opset: i64, data: &Tensor, indices: &Tensor) -> Result<Tensor, SpecError> {
        let attrs = match self.batch_dims {
            0 => Attrs::new(),
            b => Attrs::new().with_int("batch_dims", b),
        };
        super::call_typed(&GATHER_ND, opset, attrs, &[Some(data), Some(indices)])
    }
}

/// Each output slice is the data slice its index tuple names, within its batch.
fn provenance<'a>(s: &Subject<'a>, q: &Quirks) -> Option<Semantics<'a>> {
    let (data, indices) = (s.input(0)?, s.input(1)?);
    let b = usize::try_from(s.batch_dims(q)?).ok()?;
    semantics(data, indices, b, q)
}

/// What the ops that work like gather nd do, element by element.
pub(crate) fn semantics<'a>(
    data: &'a Tensor,
    indices: &Tensor,
    b: usize,
    q: &Quirks,
) -> Option<Semantics<'a>> {
    let (ds, is) = (data.shape(), indices.shape());
    // The kernel's own shape rules.
    let (b, k) = check_nd_shapes(ds, is, i64::try_from(b).ok()?).ok()?;
    let qr = is.len();
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

/// The geometry of a GatherND: `batches` x `tuples` index tuples, each selecting a slice of
/// `slice` elements from a batch block of `block` elements.
struct Geometry {
    batches: usize,
    tuples: usize,
    block: usize,
    slice: usize,
}

/// GatherND's shape rules (D6) for data of shape `dshape`, indices of shape `ishape` and the
/// `batch_dims` attribute: returns `(b, k)`, the batch dims and the tuple length. Shared with the
/// ops that share GatherND's geometry (its backward pass, its diagnosis).
pub(crate) fn check_nd_shapes(
    dshape: &[usize],
    ishape: &[usize],
    batch_dims: i64,
) -> Result<(usize, usize), SpecError> {
    let (r, q) = (dshape.len(), ishape.len());
    if r == 0 {
        return Err(spec_err!("data must have rank >= 1, it is a scalar"));
    }
    if q == 0 {
        return Err(spec_err!("indices must have rank >= 1, it is a scalar"));
    }
    let b = usize::try_from(batch_dims)
        .ok()
        .filter(|&b| b < q.min(r))
        .ok_or_else(|| {
            spec_err!("batch_dims {batch_dims} must be in [0, {}) (less than the ranks of data ({r}) and indices ({q}))", q.min(r))
        })?;
    if ishape[..b] != dshape[..b] {
        return Err(spec_err!(
            "the first batch_dims ({b}) dims of indices {} and data {} must be equal",
            crate::tensor::shape_text(ishape),
            crate::tensor::shape_text(dshape)
        ));
    }
    let k = ishape[q - 1];
    if k < 1 || k > r - b {
        return Err(spec_err!(
            "indices.shape[-1] = {k} must be in [1, {}] (rank of data {r} minus batch_dims {b})",
            r - b
        ));
    }
    Ok((b, k))
}

fn eval(inv: &Invocation<'_>) -> Result<Evaluated, SpecError> {
    let data = inv.input(0)?;
    let indices = inv.input(1)?;
    let (dshape, ishape) = (data.shape(), indices.shape());
    let (b, k) = check_nd_shapes(dshape, ishape, inv.int("batch_dims")?)?;
    let q = ishape.len();
    let mut oshape = ishape[..q - 1].to_vec();
    oshape.extend_from_slice(&dshape[b + k..]);
    inv.check_output_size(data.dtype(), &oshape)?;
    let g = Geometry {
        batches: numel(&dshape[..b]).unwrap_or(0),
        tuples: numel(&ishape[b..q - 1]).unwrap_or(0),
        block: numel(&dshape[b..]).unwrap_or(0),
        slice: numel(&dshape[b + k..]).unwrap_or(0),
    };
    let dims = &dshape[b..b + k];
    let validate = || tuple_offsets(indices, dims, b);
    let out = match data.dtype().layout() {
        Layout::Bytes(_) => {
            let idx: &[i64] = bytemuck::cast_slice(
                indices
                    .elems::<u64>()
                    .ok_or_else(|| spec_err!("indices must be int64"))?,
            );
            match crate::dispatch_words!(data.dtype(), None, gather_nd_words(data, idx, dims, &g)) {
                Some(storage) => {
                    Tensor::new(data.dtype(), oshape, storage).map_err(|e| spec_err!("{e}"))?
                }
                None => {
                    validate()?;
                    return Err(spec_err!(
                        "internal error: an index was refused but every index is valid"
                    ));
                }
            }
        }
        _ => {
            let offsets = validate()?;
            crate::dispatch_by_width!(
                data.dtype(),
                Err(SpecError::Unsupported(format!(
                    "GatherND on {} is not implemented",
                    data.dtype()
                ))),
                gather_nd_t(data, &offsets, &g, oshape, inv.max_bytes)
            )?
        }
    };
    Ok(Evaluated::moved(out))
}

/// The fast path for fixed-width elements; `None` when an index is out of range.
fn gather_nd_words<T: Elem + Copy>(
    data: &Tensor,
    idx: &[i64],
    dims: &[usize],
    g: &Geometry,
) -> Option<Storage> {
    let src = data.elems::<T>()?;
    super::fast::gather_nd(src, idx, dims, g.batches, g.tuples, g.slice).map(T::into_storage)
}

fn gather_nd_t<T: Elem>(
    data: &Tensor,
    offsets: &[usize],
    g: &Geometry,
    oshape: Vec<usize>,
    max_bytes: usize,
) -> Result<Tensor, SpecError> {
    let src = data
        .elems::<T>()
        .ok_or_else(|| spec_err!("data storage does not match its dtype"))?;
    let starts = || {
        (0..g.batches).flat_map(move |bi| {
            offsets[bi * g.tuples..(bi + 1) * g.tuples]
                .iter()
                .map(move |&o| bi * g.block + o * g.slice)
        })
    };
    check_heap_bytes(src, starts().flat_map(|s| s..s + g.slice), max_bytes)?;
    let mut out: Vec<T> = Vec::with_capacity(g.batches * g.tuples * g.slice);
    for start in starts() {
        out.extend_from_slice(&src[start..start + g.slice]);
    }
    Tensor::from_elems(data.dtype(), oshape, out).map_err(|e| spec_err!("{e}"))
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;

    #[test]
    fn spec_examples() {
        // onnx__GatherND.html examples 1-5.
        let d = i64s(&[2, 2], &[0, 1, 2, 3]);
        assert_eq!(
            run("GatherND", 11, vec![], &[&d, &i64s(&[2, 2], &[0, 0, 1, 1])]).unwrap(),
            i64s(&[2], &[0, 3])
        );
        assert_eq!(
            run("GatherND", 11, vec![], &[&d, &i64s(&[2, 1], &[1, 0])]).unwrap(),
            i64s(&[2, 2], &[2, 3, 0, 1])
        );
        let d3 = i64s(&[2, 2, 2], &[0, 1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(
            run(
                "GatherND",
                11,
                vec![],
                &[&d3, &i64s(&[2, 2], &[0, 1, 1, 0])]
            )
            .unwrap(),
            i64s(&[2, 2], &[2, 3, 4, 5])
        );
        assert_eq!(
            run(
                "GatherND",
                11,
                vec![],
                &[&d3, &i64s(&[2, 1, 2], &[0, 1, 1, 0])]
            )
            .unwrap(),
            i64s(&[2, 1, 2], &[2, 3, 4, 5])
        );
        assert_eq!(
            run(
                "GatherND",
                12,
                vec![int_attr("batch_dims", 1)],
                &[&d3, &i64s(&[2, 1], &[1, 0])]
            )
            .unwrap(),
            i64s(&[2, 2], &[2, 3, 4, 5])
        );
    }

    #[test]
    fn negative_components_count_from_their_own_dimension() {
        let d = i64s(&[2, 3], &[0, 1, 2, 3, 4, 5]);
        let out = run("GatherND", 13, vec![], &[&d, &i64s(&[1, 2], &[-1, -3])]).unwrap();
        assert_eq!(out, i64s(&[1], &[3]));
        let e = err(run("GatherND", 13, vec![], &[&d, &i64s(&[1, 2], &[0, 3])]));
        assert_eq!(
            e,
            "indices[0,1] = 3 is out of range [-3, 2] for data dimension 1 (size 3)"
        );
    }

    #[test]
    fn shape_rules_are_errors() {
        let d = i64s(&[2, 2], &[0, 1, 2, 3]);
        assert!(err(run(
            "GatherND",
            13,
            vec![],
            &[&d, &i64s(&[1, 3], &[0, 0, 0])]
        ))
        .contains("indices.shape[-1] = 3"));
        assert!(err(run("GatherND", 13, vec![], &[&d, &i64s(&[2, 0], &[])]))
            .contains("indices.shape[-1] = 0"));
        assert!(err(run("GatherND", 13, vec![], &[&d, &i64s(&[], &[0])])).contains("rank >= 1"));
        let e = err(run(
            "GatherND",
            13,
            vec![int_attr("batch_dims", 1)],
            &[&d, &i64s(&[3, 1], &[0, 0, 0])],
        ));
        assert!(e.contains("must be equal"), "{e}");
        assert!(err(run(
            "GatherND",
            13,
            vec![int_attr("batch_dims", -1)],
            &[&d, &i64s(&[2, 1], &[0, 0])]
        ))
        .contains("batch_dims -1"));
        assert!(err(run(
            "GatherND",
            13,
            vec![int_attr("batch_dims", 2)],
            &[&d, &i64s(&[2, 1], &[0, 0])]
        ))
        .contains("batch_dims 2"));
        let e = err(run(
            "GatherND",
            11,
            vec![int_attr("batch_dims", 0)],
            &[&d, &i64s(&[2, 1], &[0, 0])],
        ));
        assert!(
            e.contains("not defined by GatherND-11") && e.contains("version 12"),
            "{e}"
        );
        assert!(err(run("GatherND", 13, vec![], &[&d, &i32s(&[1, 1], &[0])])).contains("int32"));
    }
}
