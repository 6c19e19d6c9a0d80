//! Gather: <https://onnx.ai/onnx/operators/onnx__Gather.html>
//!
//! | since | change |
//! |---|---|
//! | 1  | `out[a.., i.., b..] = data[a.., indices[i..], b..]`; negative indices not defined (D2: out of range) |
//! | 11 | negative indices count from the back |
//! | 13 | bfloat16 |
//!
//! A pure copy of contiguous blocks of `prod(data.shape[axis+1..])` elements.

use super::index::{normalize_axis, normalize_indices, Negatives};
use super::{attr, Constraint, Evaluated, InputSpec, Invocation, KernelError, OpDef, OpVersion};
use crate::spec_err;
use crate::tensor::dtype::{CLASSIC15, CLASSIC15_BF16, INDEX32_64};
use crate::tensor::{numel, Elem, Tensor};

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

/// The Gather operator, versions 1, 11 and 13.
pub static GATHER: OpDef = OpDef {
    domain: "",
    op_type: "Gather",
    spec: "https://onnx.ai/onnx/operators/onnx__Gather.html",
    plumbing: false,
    versions: &[
        OpVersion {
            since: 1,
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
            eval: eval_v1,
        },
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
            eval: eval_v11,
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
            eval: eval_v11,
        },
    ],
};

fn eval_v1(inv: &Invocation<'_>) -> Result<Evaluated, KernelError> {
    eval(inv, Negatives::Forbidden("Gather-1"))
}

fn eval_v11(inv: &Invocation<'_>) -> Result<Evaluated, KernelError> {
    eval(inv, Negatives::FromBack)
}

fn eval(inv: &Invocation<'_>, negatives: Negatives) -> Result<Evaluated, KernelError> {
    let data = inv.input(0)?;
    let indices = inv.input(1)?;
    if data.rank() == 0 {
        return Err(spec_err!("data must have rank >= 1, it is a scalar"));
    }
    let axis = normalize_axis(attr::int(inv.node, "axis", 0)?, data.rank(), "axis")?;
    let dshape = data.shape();
    let idx = normalize_indices(indices, "indices", dshape[axis], axis, negatives)?;
    let mut oshape = dshape[..axis].to_vec();
    oshape.extend_from_slice(indices.shape());
    oshape.extend_from_slice(&dshape[axis + 1..]);
    inv.check_output_size(data.dtype(), &oshape)?;
    let geometry = Geometry {
        outer: numel(&dshape[..axis]).unwrap_or(0),
        axis_len: dshape[axis],
        inner: numel(&dshape[axis + 1..]).unwrap_or(0),
    };
    let out = crate::dispatch_by_width!(
        data.dtype(),
        Err(KernelError::Unsupported(format!(
            "Gather on {} is not implemented",
            data.dtype()
        ))),
        gather_t(data, &idx, geometry, oshape)
    )?;
    Ok(Evaluated {
        outputs: vec![out],
        arithmetic: false,
    })
}

/// `data` seen as `[outer, axis_len, inner]`.
#[derive(Clone, Copy)]
struct Geometry {
    outer: usize,
    axis_len: usize,
    inner: usize,
}

fn gather_t<T: Elem>(
    data: &Tensor,
    idx: &[usize],
    g: Geometry,
    oshape: Vec<usize>,
) -> Result<Tensor, KernelError> {
    let src = data
        .elems::<T>()
        .ok_or_else(|| spec_err!("data storage does not match its dtype"))?;
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
