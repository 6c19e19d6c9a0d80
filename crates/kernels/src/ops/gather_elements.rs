//! GatherElements: <https://onnx.ai/onnx/operators/onnx__GatherElements.html>
//!
//! | since | change |
//! |---|---|
//! | 11 | `out[i] = data[i with i[axis] := indices[i]]`; negative indices count from the back |
//! | 13 | bfloat16 |
//!
//! Shape rule (D6): equal ranks, `indices.shape[d] <= data.shape[d]` off the axis, the axis free.

use super::fast;
use super::index::{normalize_axis, normalize_indices, Indices, Negatives};
use super::provenance::{resolve, IndexInfo, Quirks, Resolved, Semantics, Subject};
use super::{
    check_heap_bytes, AttrSpec, Attrs, Constraint, Evaluated, Indexing, InputSpec, Invocation,
    OpDef, OpVersion, Role, SpecError,
};
use super::{CLASSIC_BF16_TIND32_64, CLASSIC_TIND32_64};
use crate::spec_err;
use crate::tensor::{numel, strides, Elem, Layout, Storage, Tensor};

const INPUTS: &[InputSpec] = &[
    InputSpec::required("data", "T", Role::Data),
    InputSpec::required("indices", "Tind", Role::Indices),
];

const AXIS: &[AttrSpec] = &[AttrSpec::int("axis", 0)];

const fn version(since: i64, constraints: &'static [Constraint]) -> OpVersion {
    OpVersion::base(since, AXIS, INPUTS, constraints, eval)
}

/// The GatherElements operator, versions 11 and 13.
pub(crate) static GATHER_ELEMENTS: OpDef = OpDef {
    domain: "",
    op_type: "GatherElements",
    spec: "https://onnx.ai/onnx/operators/onnx__GatherElements.html",
    plumbing: false,
    context: false,
    gathers: true,
    indexing: Indexing::Elements,
    provenance: Some(provenance),
    versions: &[
        version(11, CLASSIC_TIND32_64),
        version(13, CLASSIC_BF16_TIND32_64),
    ],
};

/// GatherElements' attributes: the typed entry to the kernel of every version.
///
/// ```
/// use onnx_idx_check_kernels::ops::GatherElements;
/// use onnx_idx_check_kernels::{SpecError, Tensor};
///
/// let data = Tensor::from_vec(vec![2], vec![1.0f32, 2.0])?;
/// let indices = Tensor::from_vec(vec![1], vec![2i64])?;
/// // Out of range is an error naming the index, never a wrap or a clamp.
/// let err = GatherElements::default().eval(13, &data, &indices).unwrap_err();
/// assert!(matches!(&err, SpecError::Violation(m) if m.contains("indices[0] = 2")));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GatherElements {
    /// The axis the indices pick along; negative counts from the back. Default 0.
    pub axis: i64,
}

impl GatherElements {
    /// `out[i] = data[i with i[axis] := indices[i]]`, as GatherElements does at `opset`: the same
    /// checks and kernel as a node in a model.
    ///
    /// ```
    /// use onnx_idx_check_kernels::ops::GatherElements;
    /// use onnx_idx_check_kernels::Tensor;
    ///
    /// // The specification's first example.
    /// let data = Tensor::from_vec(vec![2, 2], vec![1i32, 2, 3, 4])?;
    /// let indices = Tensor::from_vec(vec![2, 2], vec![0i64, 0, 1, 0])?;
    /// let out = GatherElements { axis: 1 }.eval(13, &data, &indices)?;
    /// assert_eq!(out.to_vec::<i32>()?, [1, 1, 4, 3]);
    ///
    /// // An index past the axis is an error, never a wrap.
    /// let past = Tensor::from_vec(vec![1, 1], vec![2i64])?;
    /// let e = GatherElements { axis: 1 }.eval(13, &data, &past).unwrap_err();
    /// assert_eq!(e.to_string(), "indices[0,0] = 2 is out of range [-2, 1] for axis 1 (size 2)");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn eval(&self, opset: i64, data: &Tensor, indices: &Tensor) -> Result<Tensor, SpecError> {
        super::call_typed(
            &GATHER_ELEMENTS,
            opset,
            Attrs::new().with_int("axis", self.axis),
            &[Some(data), Some(indices)],
        )
    }
}

/// Each output element is the data element its index picks along the axis.
fn provenance<'a>(s: &Subject<'a>, q: &Quirks) -> Option<Semantics<'a>> {
    let (data, indices) = (s.input(0)?, s.input(1)?);
    semantics(data, indices, s.axis(data.rank(), q)?, q)
}

/// What the ops that work like gather elements do, element by element.
pub(crate) fn semantics<'a>(
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

/// Checks the element-wise shape rule shared with ScatterElements and returns the normalised axis.
pub fn check_element_shapes(
    dshape: &[usize],
    ishape: &[usize],
    axis: i64,
) -> Result<usize, SpecError> {
    if dshape.is_empty() {
        return Err(spec_err!("data must have rank >= 1, it is a scalar"));
    }
    if ishape.len() != dshape.len() {
        return Err(spec_err!(
            "indices has rank {} but data has rank {}; they must be equal",
            ishape.len(),
            dshape.len()
        ));
    }
    let axis = normalize_axis(axis, dshape.len(), "axis")?;
    for (d, (&i, &s)) in ishape.iter().zip(dshape).enumerate() {
        if d != axis && i > s {
            // The spec's equations read data at the index's own position off the axis; that
            // such a position must exist is D6's reading, not the text's.
            return Err(crate::ops::decision_err!(
                D6,
                "indices shape {} exceeds data shape {} on dimension {d} ({i} > {s}); only the axis dimension ({axis}) may be larger",
                crate::tensor::shape_text(ishape),
                crate::tensor::shape_text(dshape)
            ));
        }
    }
    Ok(axis)
}

fn eval(inv: &Invocation<'_>) -> Result<Evaluated, SpecError> {
    let data = inv.input(0)?;
    let indices = inv.input(1)?;
    let axis = check_element_shapes(data.shape(), indices.shape(), inv.int("axis")?)?;
    inv.check_output_size(data.dtype(), indices.shape())?;
    let validate = || {
        normalize_indices(
            indices,
            "indices",
            data.shape()[axis],
            axis,
            Negatives::FromBack,
        )
    };
    let (ds, is) = (data.shape(), indices.shape());
    // The fast path needs the data and indices to agree off the axis, so both flatten to
    // [outer, axis, inner].
    let aligned = ds
        .iter()
        .zip(is)
        .enumerate()
        .all(|(d, (a, b))| d == axis || a == b);
    let words = match (data.dtype().layout(), aligned) {
        (Layout::Bytes(_), true) => {
            let ind = Indices::of(indices).ok_or_else(|| spec_err!("indices must be integers"))?;
            let shape = Flat {
                outer: numel(&ds[..axis]).unwrap_or(0),
                len: is[axis],
                axis_len: ds[axis],
                inner: numel(&ds[axis + 1..]).unwrap_or(0),
            };
            Some(crate::dispatch_words!(
                data.dtype(),
                None,
                gather_elements_words(data, &ind, shape)
            ))
        }
        _ => None,
    };
    let out = match words {
        Some(Some(storage)) => {
            Tensor::new(data.dtype(), is.to_vec(), storage).map_err(|e| spec_err!("{e}"))?
        }
        Some(None) => {
            validate()?;
            return Err(spec_err!(
                "internal error: an index was refused but every index is valid"
            ));
        }
        None => {
            let idx = validate()?;
            crate::dispatch_by_width!(
                data.dtype(),
                Err(SpecError::Unsupported(format!(
                    "GatherElements on {} is not implemented",
                    data.dtype()
                ))),
                gather_elements_t(data, is, &idx, axis, inv.max_bytes)
            )?
        }
    };
    Ok(Evaluated::moved(out))
}

/// Calls `f(flat position in indices, data offset without the axis term)` in row-major order of
/// `ishape`, walking the data offsets with an odometer instead of dividing per element.
pub fn for_each_element(
    ishape: &[usize],
    dshape: &[usize],
    axis: usize,
    mut f: impl FnMut(usize, usize),
) {
    let n: usize = ishape.iter().product();
    if n == 0 {
        return;
    }
    let dstrides = strides(dshape);
    let rank = ishape.len();
    let mut coord = vec![0usize; rank];
    let mut base = 0usize;
    for pos in 0..n {
        f(pos, base);
        // Advance the odometer from the last dim.
        for d in (0..rank).rev() {
            coord[d] += 1;
            if d != axis {
                base += dstrides[d];
            }
            if coord[d] < ishape[d] {
                break;
            }
            if d != axis {
                base -= dstrides[d] * ishape[d];
            }
            coord[d] = 0;
        }
    }
}

/// Data and indices seen as `[outer, axis, inner]`.
#[derive(Clone, Copy)]
struct Flat {
    outer: usize,
    len: usize,
    axis_len: usize,
    inner: usize,
}

/// The fast path for fixed-width elements; `None` when an index is out of range.
fn gather_elements_words<T: Elem + Copy>(
    data: &Tensor,
    ind: &Indices<'_>,
    f: Flat,
) -> Option<Storage> {
    let src = data.elems::<T>()?;
    crate::with_indices!(ind, |v| fast::gather_elements(
        src, v, f.outer, f.len, f.axis_len, f.inner
    ))
    .map(T::into_storage)
}

fn gather_elements_t<T: Elem>(
    data: &Tensor,
    ishape: &[usize],
    idx: &[usize],
    axis: usize,
    max_bytes: usize,
) -> Result<Tensor, SpecError> {
    let src = data
        .elems::<T>()
        .ok_or_else(|| spec_err!("data storage does not match its dtype"))?;
    let axis_stride = strides(data.shape())[axis];
    if T::OWNS_HEAP {
        let mut picks = Vec::with_capacity(idx.len());
        for_each_element(ishape, data.shape(), axis, |pos, base| {
            picks.push(base + idx[pos] * axis_stride)
        });
        check_heap_bytes(src, picks.into_iter(), max_bytes)?;
    }
    let mut out: Vec<T> = Vec::with_capacity(idx.len());
    for_each_element(ishape, data.shape(), axis, |pos, base| {
        out.push(src[base + idx[pos] * axis_stride].clone());
    });
    Tensor::from_elems(data.dtype(), ishape.to_vec(), out).map_err(|e| spec_err!("{e}"))
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;

    #[test]
    fn spec_example_1_axis1() {
        let data = f32s(&[2, 2], &[1.0, 2.0, 3.0, 4.0]);
        let idx = i64s(&[2, 2], &[0, 0, 1, 0]);
        let out = run(
            "GatherElements",
            11,
            vec![int_attr("axis", 1)],
            &[&data, &idx],
        )
        .unwrap();
        assert_eq!(out, f32s(&[2, 2], &[1.0, 1.0, 4.0, 3.0]));
    }

    #[test]
    fn spec_example_2_axis0_with_fewer_rows() {
        let data = f32s(&[3, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
        let idx = i32s(&[2, 3], &[1, 2, 0, 2, 0, 0]);
        let out = run("GatherElements", 13, vec![], &[&data, &idx]).unwrap();
        assert_eq!(out, f32s(&[2, 3], &[4.0, 8.0, 3.0, 7.0, 2.0, 3.0]));
    }

    #[test]
    fn negative_indices_count_from_the_back() {
        let data = f32s(&[3, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
        let idx = i64s(&[2, 3], &[-1, -2, 0, -2, 0, 0]);
        let out = run("GatherElements", 13, vec![], &[&data, &idx]).unwrap();
        assert_eq!(out, f32s(&[2, 3], &[7.0, 5.0, 3.0, 4.0, 2.0, 3.0]));
    }

    #[test]
    fn indices_smaller_than_data_off_the_axis_and_longer_on_it() {
        // data 3x4, indices 2x2 on axis 1: out[i][j] = data[i][idx[i][j]].
        let data = f32s(&[3, 4], &(0..12).map(|v| v as f32).collect::<Vec<_>>());
        let idx = i64s(&[2, 2], &[3, 0, 1, -1]);
        let out = run(
            "GatherElements",
            13,
            vec![int_attr("axis", -1)],
            &[&data, &idx],
        )
        .unwrap();
        assert_eq!(out, f32s(&[2, 2], &[3.0, 0.0, 5.0, 7.0]));
        // Along the axis, indices may be longer than data: 3x6 from 3x4.
        let idx = i64s(&[1, 6], &[0, 1, 2, 3, 3, 3]);
        let out = run(
            "GatherElements",
            13,
            vec![int_attr("axis", 1)],
            &[&data, &idx],
        )
        .unwrap();
        assert_eq!(out, f32s(&[1, 6], &[0.0, 1.0, 2.0, 3.0, 3.0, 3.0]));
    }

    #[test]
    fn out_of_range_is_an_error_not_a_wrap() {
        let data = f32s(&[2, 4], &[0.0; 8]);
        let e = err(run(
            "GatherElements",
            13,
            vec![int_attr("axis", 1)],
            &[&data, &i64s(&[1, 1], &[4])],
        ));
        assert_eq!(
            e,
            "indices[0,0] = 4 is out of range [-4, 3] for axis 1 (size 4)"
        );
        assert!(err(run(
            "GatherElements",
            13,
            vec![int_attr("axis", 1)],
            &[&data, &i64s(&[1, 1], &[-5])]
        ))
        .contains("out of range"));
    }

    #[test]
    fn shape_rules_are_enforced() {
        let data = f32s(&[2, 4], &[0.0; 8]);
        let e = err(run(
            "GatherElements",
            13,
            vec![],
            &[&data, &i64s(&[2], &[0, 0])],
        ));
        assert!(e.contains("rank 1") && e.contains("rank 2"), "{e}");
        let e = err(run(
            "GatherElements",
            13,
            vec![int_attr("axis", 1)],
            &[&data, &i64s(&[3, 1], &[0, 0, 0])],
        ));
        assert!(e.contains("dimension 0"), "{e}");
        let e = err(run(
            "GatherElements",
            13,
            vec![int_attr("axis", 2)],
            &[&data, &i64s(&[1, 1], &[0])],
        ));
        assert!(e.contains("axis 2 is out of range"), "{e}");
    }

    #[test]
    fn rank3_matches_a_naive_loop() {
        // Naive reference: out[i][j][k] = data[i][j][idx[i][j][k]] for axis 2, data[a][b][c] = 100a+10b+c.
        let (a, b, c) = (2usize, 3usize, 4usize);
        let data = f32s(
            &[a, b, c],
            &(0..a * b * c)
                .map(|f| (100 * (f / 12) + 10 * (f / 4 % 3) + f % 4) as f32)
                .collect::<Vec<_>>(),
        );
        let idx_vals: Vec<i64> = (0..a * 2 * 3).map(|f| (f as i64 * 7) % 4 - 2).collect();
        let idx = i64s(&[a, 2, 3], &idx_vals);
        let out = run(
            "GatherElements",
            13,
            vec![int_attr("axis", 2)],
            &[&data, &idx],
        )
        .unwrap();
        let mut want = Vec::new();
        for i in 0..a {
            for j in 0..2 {
                for k in 0..3 {
                    let v = idx_vals[i * 6 + j * 3 + k];
                    let v = if v < 0 { v + 4 } else { v } as usize;
                    want.push((100 * i + 10 * j + v) as f32);
                }
            }
        }
        assert_eq!(out, f32s(&[a, 2, 3], &want));
    }
}
