//! GatherElements: <https://onnx.ai/onnx/operators/onnx__GatherElements.html>
//!
//! | since | change |
//! |---|---|
//! | 11 | `out[i] = data[i with i[axis] := indices[i]]`; negative indices count from the back |
//! | 13 | bfloat16 |
//!
//! Shape rule (D6): equal ranks, `indices.shape[d] <= data.shape[d]` off the axis, the axis free.

use super::index::{normalize_axis, normalize_indices, Negatives};
use super::{attr, Constraint, Evaluated, InputSpec, Invocation, KernelError, OpDef, OpVersion};
use crate::spec_err;
use crate::tensor::dtype::{CLASSIC15, CLASSIC15_BF16, INDEX32_64};
use crate::tensor::{strides, Elem, Tensor};

const INPUTS: &[InputSpec] = &[
    InputSpec {
        name: "data",
        constraint: "T",
        optional: false,
    },
    InputSpec {
        name: "indices",
        constraint: "Tind",
        optional: false,
    },
];

/// The GatherElements operator, versions 11 and 13.
pub static GATHER_ELEMENTS: OpDef = OpDef {
    domain: "",
    op_type: "GatherElements",
    spec: "https://onnx.ai/onnx/operators/onnx__GatherElements.html",
    plumbing: false,
    versions: &[
        OpVersion {
            since: 11,
            deprecated: false,
            attrs: &["axis"],
            inputs: INPUTS,
            outputs: 1,
            constraints: &[
                Constraint {
                    name: "T",
                    dtypes: CLASSIC15,
                },
                Constraint {
                    name: "Tind",
                    dtypes: INDEX32_64,
                },
            ],
            modes: &[],
            eval,
        },
        OpVersion {
            since: 13,
            deprecated: false,
            attrs: &["axis"],
            inputs: INPUTS,
            outputs: 1,
            constraints: &[
                Constraint {
                    name: "T",
                    dtypes: CLASSIC15_BF16,
                },
                Constraint {
                    name: "Tind",
                    dtypes: INDEX32_64,
                },
            ],
            modes: &[],
            eval,
        },
    ],
};

/// Checks the element-wise shape rule shared with ScatterElements and returns the normalised axis.
pub fn check_element_shapes(
    data: &Tensor,
    indices: &Tensor,
    axis: i64,
) -> Result<usize, KernelError> {
    if data.rank() == 0 {
        return Err(spec_err!("data must have rank >= 1, it is a scalar"));
    }
    if indices.rank() != data.rank() {
        return Err(spec_err!(
            "indices has rank {} but data has rank {}; they must be equal",
            indices.rank(),
            data.rank()
        ));
    }
    let axis = normalize_axis(axis, data.rank(), "axis")?;
    for (d, (&i, &s)) in indices.shape().iter().zip(data.shape()).enumerate() {
        if d != axis && i > s {
            return Err(spec_err!(
                "indices shape {:?} exceeds data shape {:?} on dimension {d} ({i} > {s}); only the axis dimension ({axis}) may be larger",
                indices.shape(),
                data.shape()
            ));
        }
    }
    Ok(axis)
}

fn eval(inv: &Invocation<'_>) -> Result<Evaluated, KernelError> {
    let data = inv.input(0)?;
    let indices = inv.input(1)?;
    let axis = check_element_shapes(data, indices, attr::int(inv.node, "axis", 0)?)?;
    let idx = normalize_indices(
        indices,
        "indices",
        data.shape()[axis],
        axis,
        Negatives::FromBack,
    )?;
    inv.check_output_size(data.dtype(), indices.shape())?;
    let out = crate::dispatch_by_width!(
        data.dtype(),
        Err(KernelError::Unsupported(format!(
            "GatherElements on {} is not implemented",
            data.dtype()
        ))),
        gather_elements_t(data, indices.shape(), &idx, axis)
    )?;
    Ok(Evaluated {
        outputs: vec![out],
        arithmetic: false,
    })
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

fn gather_elements_t<T: Elem>(
    data: &Tensor,
    ishape: &[usize],
    idx: &[usize],
    axis: usize,
) -> Result<Tensor, KernelError> {
    let src = data
        .elems::<T>()
        .ok_or_else(|| spec_err!("data storage does not match its dtype"))?;
    let axis_stride = strides(data.shape())[axis];
    let mut out: Vec<T> = Vec::with_capacity(idx.len());
    for_each_element(ishape, data.shape(), axis, |pos, base| {
        out.push(src[base + idx[pos] * axis_stride].clone());
    });
    Tensor::from_elems(data.dtype(), ishape.to_vec(), out).map_err(|e| spec_err!("{e}"))
}
