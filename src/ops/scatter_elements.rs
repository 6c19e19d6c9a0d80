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

use super::gather_elements::{check_element_shapes, for_each_element};
use super::index::{normalize_indices, Negatives};
use super::reduction::{self, Reduction, Visit};
use super::{attr, Constraint, Evaluated, InputSpec, Invocation, KernelError, OpDef, OpVersion};
use crate::spec_err;
use crate::tensor::dtype::{CLASSIC15, CLASSIC15_BF16, INDEX32_64};
use crate::tensor::{strides, Tensor};

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
    InputSpec {
        name: "updates",
        constraint: "T",
        optional: false,
    },
];

const T15: &[Constraint] = &[
    Constraint {
        name: "T",
        dtypes: CLASSIC15,
    },
    Constraint {
        name: "Tind",
        dtypes: INDEX32_64,
    },
];

const T16: &[Constraint] = &[
    Constraint {
        name: "T",
        dtypes: CLASSIC15_BF16,
    },
    Constraint {
        name: "Tind",
        dtypes: INDEX32_64,
    },
];

/// The deprecated Scatter operator: version 9, and the deprecation at 11.
pub static SCATTER: OpDef = OpDef {
    domain: "",
    op_type: "Scatter",
    spec: "https://onnx.ai/onnx/operators/onnx__Scatter.html",
    plumbing: false,
    versions: &[
        OpVersion {
            since: 9,
            deprecated: false,
            attrs: &["axis"],
            inputs: INPUTS,
            outputs: 1,
            constraints: T15,
            modes: &["none"],
            eval: eval_scatter9,
        },
        OpVersion {
            since: 11,
            deprecated: true,
            attrs: &["axis"],
            inputs: INPUTS,
            outputs: 1,
            constraints: T15,
            modes: &[],
            eval: eval_scatter9,
        },
    ],
};

/// The ScatterElements operator, versions 11, 13, 16 and 18.
pub static SCATTER_ELEMENTS: OpDef = OpDef {
    domain: "",
    op_type: "ScatterElements",
    spec: "https://onnx.ai/onnx/operators/onnx__ScatterElements.html",
    plumbing: false,
    versions: &[
        OpVersion {
            since: 11,
            deprecated: false,
            attrs: &["axis"],
            inputs: INPUTS,
            outputs: 1,
            constraints: T15,
            modes: &["none"],
            eval: eval_v11,
        },
        OpVersion {
            since: 13,
            deprecated: false,
            attrs: &["axis"],
            inputs: INPUTS,
            outputs: 1,
            constraints: T16,
            modes: &["none"],
            eval: eval_v11,
        },
        OpVersion {
            since: 16,
            deprecated: false,
            attrs: &["axis", "reduction"],
            inputs: INPUTS,
            outputs: 1,
            constraints: T16,
            modes: &["none", "add", "mul"],
            eval: eval_v16,
        },
        OpVersion {
            since: 18,
            deprecated: false,
            attrs: &["axis", "reduction"],
            inputs: INPUTS,
            outputs: 1,
            constraints: T16,
            modes: &["none", "add", "mul", "max", "min"],
            eval: eval_v18,
        },
    ],
};

fn eval_scatter9(inv: &Invocation<'_>) -> Result<Evaluated, KernelError> {
    scatter(inv, Negatives::Forbidden("Scatter-9"), Reduction::None)
}

fn eval_v11(inv: &Invocation<'_>) -> Result<Evaluated, KernelError> {
    scatter(inv, Negatives::FromBack, Reduction::None)
}

fn eval_v16(inv: &Invocation<'_>) -> Result<Evaluated, KernelError> {
    let allowed = [Reduction::None, Reduction::Add, Reduction::Mul];
    let r = Reduction::parse(
        &attr::string(inv.node, "reduction", "none")?,
        &allowed,
        &inv.op_name(),
    )?;
    scatter(inv, Negatives::FromBack, r)
}

fn eval_v18(inv: &Invocation<'_>) -> Result<Evaluated, KernelError> {
    let allowed = [
        Reduction::None,
        Reduction::Add,
        Reduction::Mul,
        Reduction::Max,
        Reduction::Min,
    ];
    let r = Reduction::parse(
        &attr::string(inv.node, "reduction", "none")?,
        &allowed,
        &inv.op_name(),
    )?;
    scatter(inv, Negatives::FromBack, r)
}

/// The element updates of a ScatterElements, in row-major order of `indices`.
struct ElementPlan<'a> {
    ishape: &'a [usize],
    dshape: &'a [usize],
    axis: usize,
    axis_stride: usize,
    idx: &'a [usize],
}

impl Visit for ElementPlan<'_> {
    fn visit<F: FnMut(usize, usize)>(&self, mut f: F) {
        for_each_element(self.ishape, self.dshape, self.axis, |pos, base| {
            f(base + self.idx[pos] * self.axis_stride, pos)
        });
    }
}

fn scatter(
    inv: &Invocation<'_>,
    negatives: Negatives,
    reduction: Reduction,
) -> Result<Evaluated, KernelError> {
    let data = inv.input(0)?;
    let indices = inv.input(1)?;
    let updates = inv.input(2)?;
    let axis = check_element_shapes(data, indices, attr::int(inv.node, "axis", 0)?)?;
    if updates.shape() != indices.shape() {
        return Err(spec_err!(
            "updates has shape {:?} but indices has shape {:?}; they must be equal",
            updates.shape(),
            indices.shape()
        ));
    }
    let idx = normalize_indices(indices, "indices", data.shape()[axis], axis, negatives)?;
    inv.check_output_size(data.dtype(), data.shape())?;
    let plan = ElementPlan {
        ishape: indices.shape(),
        dshape: data.shape(),
        axis,
        axis_stride: strides(data.shape())[axis],
        idx: &idx,
    };
    let mut storage = data.storage().clone();
    reduction::apply(
        data.dtype(),
        reduction,
        &mut storage,
        updates.storage(),
        &plan,
    )?;
    let out =
        Tensor::new(data.dtype(), data.shape().to_vec(), storage).map_err(|e| spec_err!("{e}"))?;
    Ok(Evaluated {
        outputs: vec![out],
        arithmetic: reduction != Reduction::None,
    })
}
