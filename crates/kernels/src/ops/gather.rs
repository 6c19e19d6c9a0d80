//! Gather: <https://onnx.ai/onnx/operators/onnx__Gather.html>
//!
//! | since | change |
//! |---|---|
//! | 1  | `out[a.., i.., b..] = data[a.., indices[i..], b..]`; negative indices not defined (D2: out of range) |
//! | 11 | negative indices count from the back |
//! | 13 | bfloat16 |
//!
//! A pure copy of contiguous blocks of `prod(data.shape[axis+1..])` elements.

use super::fast;
use super::index::{normalize_axis, normalize_indices, Indices, Negatives};
use super::provenance::{resolve, IndexInfo, Quirks, Resolved, Semantics, Subject};
use super::{
    check_heap_bytes, AttrSpec, Attrs, Constraint, Evaluated, Indexing, InputSpec, Invocation,
    OpDef, OpVersion, Role, SpecError,
};
use super::{CLASSIC_BF16_TIND32_64, CLASSIC_TIND32_64};
use crate::spec_err;
use crate::tensor::{numel, Elem, Layout, Storage, Tensor};

const INPUTS: &[InputSpec] = &[
    InputSpec::required("data", "T", Role::Data),
    InputSpec::required("indices", "Tind", Role::Indices),
];

const ATTRS: &[AttrSpec] = &[AttrSpec::int("axis", 0)];

const fn version(since: i64, constraints: &'static [Constraint], negatives: bool) -> OpVersion {
    OpVersion {
        negatives,
        ..OpVersion::base(since, ATTRS, INPUTS, constraints, eval)
    }
}

/// The Gather operator, versions 1, 11 and 13.
pub(crate) static GATHER: OpDef = OpDef {
    domain: "",
    op_type: "Gather",
    spec: "https://onnx.ai/onnx/operators/onnx__Gather.html",
    plumbing: false,
    context: false,
    gathers: true,
    indexing: Indexing::Axis,
    provenance: Some(provenance),
    versions: &[
        version(1, CLASSIC_TIND32_64, false),
        version(11, CLASSIC_TIND32_64, true),
        version(13, CLASSIC_BF16_TIND32_64, true),
    ],
};

/// Gather's attributes: the typed entry to the kernel of every version.
///
/// ```
/// use onnx_idx_check_kernels::ops::Gather;
/// use onnx_idx_check_kernels::{SpecError, Tensor};
///
/// let data = Tensor::from_vec(vec![3], vec![10i32, 20, 30])?;
/// let last = Tensor::from_vec(vec![1], vec![-1i64])?;
/// // Negative indices count from the back from Gather-11 on; Gather-1 refuses them, by this
/// // project's decision D2 (its text defines no bounds).
/// assert_eq!(Gather::default().eval(13, &data, &last)?.to_vec::<i32>()?, [30]);
/// assert!(matches!(
///     Gather::default().eval(1, &data, &last),
///     Err(SpecError::Decision { rule: onnx_idx_check_kernels::ops::Decision::D2, .. })
/// ));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Gather {
    /// The axis to gather on; negative counts from the back. Default 0.
    pub axis: i64,
}

impl Gather {
    /// Gathers `data` along [`Gather::axis`] at the positions in `indices`, as Gather does at
    /// `opset` (the version with the highest `since` <= `opset`): the same checks and kernel as a
    /// node in a model.
    ///
    /// ```
    /// use onnx_idx_check_kernels::ops::Gather;
    /// use onnx_idx_check_kernels::Tensor;
    ///
    /// // The specification's first example.
    /// let data = Tensor::from_vec(vec![3, 2], vec![1.0f32, 1.2, 2.3, 3.4, 4.5, 5.7])?;
    /// let indices = Tensor::from_vec(vec![2, 2], vec![0i64, 1, 1, 2])?;
    /// let out = Gather { axis: 0 }.eval(13, &data, &indices)?;
    /// assert_eq!(out.shape(), [2, 2, 2]);
    /// assert_eq!(out.to_vec::<f32>()?, [1.0, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7]);
    ///
    /// // Negative indices arrive with opset 11.
    /// let last = Tensor::from_vec(vec![1], vec![-1i64])?;
    /// assert!(Gather { axis: 0 }.eval(1, &data, &last).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn eval(&self, opset: i64, data: &Tensor, indices: &Tensor) -> Result<Tensor, SpecError> {
        super::call_typed(
            &GATHER,
            opset,
            Attrs::new().with_int("axis", self.axis),
            &[Some(data), Some(indices)],
        )
    }
}

/// Each output element is one data element, picked along the axis.
fn provenance<'a>(s: &Subject<'a>, q: &Quirks) -> Option<Semantics<'a>> {
    let (data, indices) = (s.input(0)?, s.input(1)?);
    semantics(data, indices, s.axis(data.rank(), q)?, 0, q)
}

/// What the ops that work like gather do, element by element.
pub(crate) fn semantics<'a>(
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

fn eval(inv: &Invocation<'_>) -> Result<Evaluated, SpecError> {
    let negatives = inv.negatives();
    let data = inv.input(0)?;
    let indices = inv.input(1)?;
    if data.rank() == 0 {
        return Err(spec_err!("data must have rank >= 1, it is a scalar"));
    }
    let axis = normalize_axis(inv.int("axis")?, data.rank(), "axis")?;
    let dshape = data.shape();
    let mut oshape = dshape[..axis].to_vec();
    oshape.extend_from_slice(indices.shape());
    oshape.extend_from_slice(&dshape[axis + 1..]);
    inv.check_output_size(data.dtype(), &oshape)?;
    let geometry = Geometry {
        outer: numel(&dshape[..axis]).unwrap_or(0),
        axis_len: dshape[axis],
        inner: numel(&dshape[axis + 1..]).unwrap_or(0),
    };
    // The index check that reports the first offending position, for the slow path and for
    // the fast path's failures.
    let validate = || normalize_indices(indices, "indices", dshape[axis], axis, negatives);
    let out = match data.dtype().layout() {
        Layout::String => {
            let idx = validate()?;
            gather_t::<Vec<u8>>(data, &idx, geometry, oshape, inv.max_bytes)?
        }
        Layout::Packed(_) => {
            return Err(SpecError::Unsupported(format!(
                "Gather on {} is not implemented",
                data.dtype()
            )))
        }
        Layout::Bytes(_) => {
            let ind = Indices::of(indices).ok_or_else(|| spec_err!("indices must be integers"))?;
            let from_back = negatives == Negatives::FromBack;
            let storage = crate::dispatch_words!(
                data.dtype(),
                None,
                gather_words(data, &ind, geometry, from_back)
            );
            match storage {
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
    };
    Ok(Evaluated::moved(out))
}

/// `data` seen as `[outer, axis_len, inner]`.
#[derive(Clone, Copy)]
struct Geometry {
    outer: usize,
    axis_len: usize,
    inner: usize,
}

/// The fast path for fixed-width elements; `None` when an index is out of range.
fn gather_words<T: Elem + Copy>(
    data: &Tensor,
    ind: &Indices<'_>,
    g: Geometry,
    from_back: bool,
) -> Option<Storage> {
    let src = data.elems::<T>()?;
    crate::with_indices!(ind, |v| fast::gather(
        src, v, g.outer, g.axis_len, g.inner, from_back
    ))
    .map(T::into_storage)
}

fn gather_t<T: Elem>(
    data: &Tensor,
    idx: &[usize],
    g: Geometry,
    oshape: Vec<usize>,
    max_bytes: usize,
) -> Result<Tensor, SpecError> {
    let src = data
        .elems::<T>()
        .ok_or_else(|| spec_err!("data storage does not match its dtype"))?;
    let picks = (0..g.outer).flat_map(|o| {
        idx.iter().flat_map(move |&k| {
            let start = (o * g.axis_len + k) * g.inner;
            start..start + g.inner
        })
    });
    check_heap_bytes(src, picks, max_bytes)?;
    let mut out: Vec<T> = Vec::with_capacity(g.outer * idx.len() * g.inner);
    for o in 0..g.outer {
        let base = o * g.axis_len;
        for &k in idx {
            let start = (base + k) * g.inner;
            out.extend_from_slice(&src[start..start + g.inner]);
        }
    }
    Tensor::from_elems(data.dtype(), oshape, out).map_err(|e| spec_err!("{e}"))
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;
    use crate::tensor::DType;

    #[test]
    fn spec_example_axis0_with_2d_indices() {
        // onnx__Gather.html, example 1.
        let data = f32s(&[3, 2], &[1.0, 1.2, 2.3, 3.4, 4.5, 5.7]);
        let idx = i64s(&[2, 2], &[0, 1, 1, 2]);
        let out = run("Gather", 13, vec![], &[&data, &idx]).unwrap();
        assert_eq!(
            out,
            f32s(&[2, 2, 2], &[1.0, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7])
        );
    }

    #[test]
    fn spec_example_axis1() {
        // onnx__Gather.html, example 2.
        let data = f32s(&[3, 3], &[1.0, 1.2, 1.9, 2.3, 3.4, 3.9, 4.5, 5.7, 5.9]);
        let idx = i32s(&[1, 2], &[0, 2]);
        let out = run("Gather", 11, vec![int_attr("axis", 1)], &[&data, &idx]).unwrap();
        assert_eq!(out, f32s(&[3, 1, 2], &[1.0, 1.9, 2.3, 3.9, 4.5, 5.9]));
    }

    #[test]
    fn scalar_index_drops_the_axis_and_1d_data_gives_a_scalar() {
        let data = f32s(&[3], &[1.0, 2.0, 3.0]);
        let out = run("Gather", 13, vec![], &[&data, &i64s(&[], &[-1])]).unwrap();
        assert_eq!(out, f32s(&[], &[3.0]));
    }

    #[test]
    fn empty_indices_check_nothing_and_give_an_empty_output() {
        let data = f32s(&[3, 4], &[0.0; 12]);
        let out = run("Gather", 13, vec![], &[&data, &i64s(&[2, 0], &[])]).unwrap();
        assert_eq!(out.shape(), &[2, 0, 4]);
        let out = run(
            "Gather",
            13,
            vec![int_attr("axis", 1)],
            &[&data, &i64s(&[0], &[])],
        )
        .unwrap();
        assert_eq!(out.shape(), &[3, 0]);
    }

    #[test]
    fn index_equal_to_the_axis_size_is_out_of_range() {
        let data = f32s(&[3], &[1.0, 2.0, 3.0]);
        let e = err(run("Gather", 13, vec![], &[&data, &i64s(&[2], &[0, 3])]));
        assert_eq!(
            e,
            "indices[1] = 3 is out of range [-3, 2] for axis 0 (size 3)"
        );
        assert!(
            err(run("Gather", 13, vec![], &[&data, &i64s(&[1], &[-4])])).contains("out of range")
        );
        assert!(err(run(
            "Gather",
            13,
            vec![],
            &[&data, &i64s(&[1], &[i64::MIN])]
        ))
        .contains("out of range"));
        assert!(err(run(
            "Gather",
            13,
            vec![],
            &[&data, &i32s(&[1], &[i32::MAX])]
        ))
        .contains("out of range"));
    }

    #[test]
    fn negative_indices_are_errors_at_opset_1_and_count_from_the_back_at_11() {
        let data = f32s(&[3], &[1.0, 2.0, 3.0]);
        let idx = i64s(&[1], &[-1]);
        let e = err(run("Gather", 10, vec![], &[&data, &idx]));
        assert!(e.contains("Gather-1") && e.contains("opset 11"), "{e}");
        assert_eq!(
            run("Gather", 11, vec![], &[&data, &idx]).unwrap(),
            f32s(&[1], &[3.0])
        );
    }

    #[test]
    fn rank0_data_and_bad_axes_are_errors() {
        let scalar = f32s(&[], &[5.0]);
        assert!(err(run("Gather", 13, vec![], &[&scalar, &i64s(&[], &[0])])).contains("rank >= 1"));
        let data = f32s(&[2, 2], &[0.0; 4]);
        let e = err(run(
            "Gather",
            13,
            vec![int_attr("axis", 2)],
            &[&data, &i64s(&[1], &[0])],
        ));
        assert_eq!(e, "axis 2 is out of range [-2, 1] for rank 2");
    }

    #[test]
    fn an_empty_axis_admits_no_index() {
        let data = f32s(&[0, 4], &[]);
        assert!(err(run("Gather", 13, vec![], &[&data, &i64s(&[1], &[0])])).contains("size 0"));
    }

    #[test]
    fn type_constraints_follow_the_version() {
        let bf16 = Tensor::from_elems(DType::Bfloat16, vec![2], vec![0x3F80u16, 0x4000]).unwrap();
        let idx = i64s(&[1], &[1]);
        let e = err(run("Gather", 11, vec![], &[&bf16, &idx]));
        assert!(
            e.contains("bfloat16") && e.contains("allowed from version 13"),
            "{e}"
        );
        let out = run("Gather", 13, vec![], &[&bf16, &idx]).unwrap();
        assert_eq!(out.elems::<u16>().unwrap(), &[0x4000]);
        let f8 = Tensor::from_elems(DType::Float8E4M3Fn, vec![1], vec![0x38u8]).unwrap();
        assert!(err(run("Gather", 13, vec![], &[&f8, &i64s(&[1], &[0])])).contains("float8e4m3fn"));
        let i16idx = Tensor::from_elems(DType::Int16, vec![1], vec![0u16]).unwrap();
        assert!(err(run("Gather", 13, vec![], &[&f32s(&[1], &[1.0]), &i16idx])).contains("Tind"));
    }

    #[test]
    fn strings_and_complex_move_like_any_element() {
        let s = Tensor::from_elems(
            DType::String,
            vec![3],
            vec![b"a".to_vec(), b"bc".to_vec(), vec![]],
        )
        .unwrap();
        let out = run("Gather", 13, vec![], &[&s, &i64s(&[2], &[2, 1])]).unwrap();
        assert_eq!(out.elems::<Vec<u8>>().unwrap(), &[vec![], b"bc".to_vec()]);
        let c = Tensor::from_elems(DType::Complex128, vec![2], vec![1u128, 2]).unwrap();
        let out = run("Gather", 13, vec![], &[&c, &i64s(&[1], &[-1])]).unwrap();
        assert_eq!(out.elems::<u128>().unwrap(), &[2]);
    }

    #[test]
    fn outputs_over_the_limit_are_refused_before_allocation() {
        let data = f32s(&[4], &[0.0; 4]);
        let idx = i64s(&[1000], &[0; 1000]);
        let e = run_limited("Gather", 13, vec![], &[&data, &idx], 1000);
        assert!(matches!(e, Err(SpecError::TooLarge(_))), "{e:?}");
        // One long string repeated: the element count alone would not catch it.
        let s = Tensor::from_elems(DType::String, vec![1], vec![vec![b'x'; 1000]]).unwrap();
        let e = run_limited("Gather", 13, vec![], &[&s, &idx], 100_000);
        assert!(matches!(e, Err(SpecError::TooLarge(_))), "{e:?}");
    }

    #[test]
    fn unknown_attributes_are_errors() {
        let data = f32s(&[2], &[1.0, 2.0]);
        let e = err(run(
            "Gather",
            13,
            vec![int_attr("batch_dims", 0)],
            &[&data, &i64s(&[1], &[0])],
        ));
        assert_eq!(e, "attribute 'batch_dims' is not defined by Gather-13");
    }
}
