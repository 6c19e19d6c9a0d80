//! Shape (<https://onnx.ai/onnx/operators/onnx__Shape.html>), Reshape
//! (<https://onnx.ai/onnx/operators/onnx__Reshape.html>), Unsqueeze
//! (<https://onnx.ai/onnx/operators/onnx__Unsqueeze.html>) and Squeeze
//! (<https://onnx.ai/onnx/operators/onnx__Squeeze.html>): the operators that read or change a
//! shape without moving an element.
//!
//! | op | since | change |
//! |---|---|---|
//! | Shape | 15 | `start`, `end`: a slice of the dims, negatives from the back, clamped |
//! | Reshape | 5 | the shape is an input (Reshape-1's attribute form is skipped) |
//! | Reshape | 14 | `allowzero`: a 0 is a zero dim, not a copy of the input's |
//! | Unsqueeze, Squeeze | 11 | negative axes |
//! | Unsqueeze, Squeeze | 13 | `axes` is an input |
//!
//! The other versions only widen the types.

use super::{int64_list, norm_axis, types_at, FLOATS_1, INT64};
use crate::ops::{
    AttrSpec, Constraint, Evaluated, InputSpec, Invocation, OpDef, OpVersion, Role, SpecError,
};
use crate::spec_err;
use crate::tensor::Tensor;

/// A context operator's entry: plumbing, context, no indexing.
macro_rules! context_op {
    ($op:literal, $versions:expr) => {
        $crate::ops::OpDef {
            domain: "",
            op_type: $op,
            spec: concat!("https://onnx.ai/onnx/operators/onnx__", $op, ".html"),
            plumbing: true,
            context: true,
            gathers: false,
            indexing: $crate::ops::Indexing::None,
            provenance: None,
            versions: $versions,
        }
    };
}
pub(crate) use context_op;

/// One version of a context operator: no negatives flag (it has no indices).
pub(crate) const fn version(
    since: i64,
    attrs: &'static [AttrSpec],
    inputs: &'static [InputSpec],
    constraints: &'static [Constraint],
    eval: crate::ops::EvalFn,
) -> OpVersion {
    OpVersion {
        negatives: false,
        ..OpVersion::base(since, attrs, inputs, constraints, eval)
    }
}

/// `T` at version `since` (the shape operators' sets) and `T1` int64.
macro_rules! shape_constraints {
    ($since:literal) => {
        &[
            Constraint::new("T", types_at($since)),
            Constraint::new("T1", INT64),
        ]
    };
}

const DATA: InputSpec = InputSpec::required("data", "T", Role::Value);
const SHAPE_INPUTS: &[InputSpec] = &[DATA];
const START_END: &[AttrSpec] = &[AttrSpec::int("start", 0), AttrSpec::any("end")];

/// Shape, every version.
pub(crate) static SHAPE: OpDef = context_op!(
    "Shape",
    &[
        version(1, &[], SHAPE_INPUTS, shape_constraints!(1), shape),
        version(13, &[], SHAPE_INPUTS, shape_constraints!(13), shape),
        version(15, START_END, SHAPE_INPUTS, shape_constraints!(15), shape),
        version(19, START_END, SHAPE_INPUTS, shape_constraints!(19), shape),
        version(21, START_END, SHAPE_INPUTS, shape_constraints!(21), shape),
        version(23, START_END, SHAPE_INPUTS, shape_constraints!(23), shape),
        version(24, START_END, SHAPE_INPUTS, shape_constraints!(24), shape),
        version(25, START_END, SHAPE_INPUTS, shape_constraints!(25), shape),
    ]
);

/// Shape-15: "Optional attributes start and end can be used to compute a slice of the input
/// tensor's shape. ... Negative value means counting dimensions from the back. ... start axis
/// will be clamped to the range [0, r], where r is the rank of the input tensor" (end alike).
fn shape(inv: &Invocation<'_>) -> Result<Evaluated, SpecError> {
    let data = inv.input(0)?;
    let r = data.rank() as i64;
    let clamp = |a: i64| (if a < 0 { a + r } else { a }).clamp(0, r) as usize;
    let start = clamp(inv.int("start")?);
    let end = match inv.attrs.find("end")? {
        None => r as usize,
        Some(_) => clamp(inv.attrs.int("end", r)?),
    };
    let dims: Vec<i64> = data.shape()[start..end.max(start)]
        .iter()
        .map(|&d| d as i64)
        .collect();
    let n = dims.len();
    Ok(Evaluated::moved(
        Tensor::from_vec(vec![n], dims).map_err(|e| spec_err!("internal error: {e}"))?,
    ))
}

const RESHAPE_INPUTS: &[InputSpec] = &[DATA, InputSpec::required("shape", "T1", Role::Shape)];
const ALLOWZERO: &[AttrSpec] = &[AttrSpec::int("allowzero", 0)];

/// Reshape, every version (Reshape-1 skipped).
pub(crate) static RESHAPE: OpDef = context_op!(
    "Reshape",
    &[
        version(
            1,
            &[AttrSpec::any("shape"), AttrSpec::any("consumed_inputs")],
            SHAPE_INPUTS,
            &[Constraint::new("T", FLOATS_1)],
            reshape_1
        ),
        version(5, &[], RESHAPE_INPUTS, shape_constraints!(5), reshape),
        version(13, &[], RESHAPE_INPUTS, shape_constraints!(13), reshape),
        version(
            14,
            ALLOWZERO,
            RESHAPE_INPUTS,
            shape_constraints!(14),
            reshape
        ),
        version(
            19,
            ALLOWZERO,
            RESHAPE_INPUTS,
            shape_constraints!(19),
            reshape
        ),
        version(
            21,
            ALLOWZERO,
            RESHAPE_INPUTS,
            shape_constraints!(21),
            reshape
        ),
        version(
            23,
            ALLOWZERO,
            RESHAPE_INPUTS,
            shape_constraints!(23),
            reshape
        ),
        version(
            24,
            ALLOWZERO,
            RESHAPE_INPUTS,
            shape_constraints!(24),
            reshape
        ),
        version(
            25,
            ALLOWZERO,
            RESHAPE_INPUTS,
            shape_constraints!(25),
            reshape
        ),
    ]
);

fn reshape_1(_: &Invocation<'_>) -> Result<Evaluated, SpecError> {
    Err(SpecError::Unsupported(
        "Reshape-1 (the shape as an attribute) is not implemented".into(),
    ))
}

/// The output dims of Reshape: "At most one dimension of the new shape can be -1 ... A dimension
/// could also be 0, in which case the actual dimension value is unchanged (i.e. taken from the
/// input tensor). If 'allowzero' is set, and the new shape includes 0, the dimension will be set
/// explicitly to zero ... it is invalid for the specified shape to contain both a zero value and
/// -1 ... The input tensor's shape and the output tensor's shape are required to have the same
/// number of elements."
pub(crate) fn reshape_dims(
    input: &[usize],
    shape: &[i64],
    allowzero: bool,
) -> Result<Vec<usize>, SpecError> {
    let numel: usize = input.iter().product();
    let mut dims = Vec::with_capacity(shape.len());
    let mut infer = None;
    for (i, &s) in shape.iter().enumerate() {
        dims.push(match s {
            -1 if infer.is_some() => {
                return Err(spec_err!(
                    "shape {} has more than one -1",
                    crate::tensor::shape_text(shape)
                ))
            }
            -1 => {
                infer = Some(i);
                1
            }
            0 if allowzero => 0,
            0 => *input.get(i).ok_or_else(|| {
                spec_err!(
                    "shape[{i}] = 0 copies dim {i} of the input, which has rank {}",
                    input.len()
                )
            })?,
            s if s < 0 => {
                return Err(spec_err!(
                    "shape[{i}] = {s} is negative (only -1 is allowed)"
                ))
            }
            s => usize::try_from(s).map_err(|_| spec_err!("shape[{i}] = {s} is too large"))?,
        });
    }
    if allowzero && infer.is_some() && shape.contains(&0) {
        return Err(spec_err!(
            "shape {} holds both 0 and -1, which allowzero = 1 forbids",
            crate::tensor::shape_text(shape)
        ));
    }
    let known = dims
        .iter()
        .try_fold(1usize, |p, &d| p.checked_mul(d))
        .ok_or_else(|| spec_err!("shape {} overflows", crate::tensor::shape_text(shape)))?;
    if let Some(i) = infer {
        if known == 0 || numel % known != 0 {
            return Err(spec_err!(
                "shape {}: no size of the -1 dim gives the input's {numel} elements",
                crate::tensor::shape_text(shape)
            ));
        }
        dims[i] = numel / known;
    } else if known != numel {
        return Err(spec_err!(
            "shape {} holds {known} elements, the input {} holds {numel}",
            crate::tensor::shape_text(shape),
            crate::tensor::shape_text(input)
        ));
    }
    Ok(dims)
}

fn reshape(inv: &Invocation<'_>) -> Result<Evaluated, SpecError> {
    let data = inv.input(0)?;
    let shape = int64_list(inv.input(1)?, "shape")?;
    if inv.input(1)?.rank() != 1 {
        return Err(spec_err!("'shape' must be a 1-D tensor"));
    }
    let allowzero = match inv.int("allowzero")? {
        0 => false,
        1 => true,
        v => return Err(spec_err!("allowzero must be 0 or 1, got {v}")),
    };
    let dims = reshape_dims(data.shape(), &shape, allowzero)?;
    reshaped(data, dims)
}

/// `data` with the same elements under `dims`.
fn reshaped(data: &Tensor, dims: Vec<usize>) -> Result<Evaluated, SpecError> {
    Ok(Evaluated::moved(
        data.clone()
            .reshaped(dims)
            .map_err(|e| spec_err!("internal error: {e}"))?,
    ))
}

const AXES_ATTR: &[AttrSpec] = &[AttrSpec::any("axes")];
const AXES_INPUT: &[InputSpec] = &[DATA, InputSpec::required("axes", "T1", Role::Axis)];
const AXES_OPTIONAL: &[InputSpec] = &[DATA, InputSpec::optional("axes", "T1", Role::Axis)];

/// Unsqueeze, every version.
pub(crate) static UNSQUEEZE: OpDef = context_op!(
    "Unsqueeze",
    &[
        version(1, AXES_ATTR, SHAPE_INPUTS, shape_constraints!(1), unsqueeze),
        version(
            11,
            AXES_ATTR,
            SHAPE_INPUTS,
            shape_constraints!(11),
            unsqueeze
        ),
        version(13, &[], AXES_INPUT, shape_constraints!(13), unsqueeze),
        version(21, &[], AXES_INPUT, shape_constraints!(21), unsqueeze),
        version(23, &[], AXES_INPUT, shape_constraints!(23), unsqueeze),
        version(24, &[], AXES_INPUT, shape_constraints!(24), unsqueeze),
        version(25, &[], AXES_INPUT, shape_constraints!(25), unsqueeze),
    ]
);

/// Squeeze, every version.
pub(crate) static SQUEEZE: OpDef = context_op!(
    "Squeeze",
    &[
        version(1, AXES_ATTR, SHAPE_INPUTS, shape_constraints!(1), squeeze),
        version(11, AXES_ATTR, SHAPE_INPUTS, shape_constraints!(11), squeeze),
        version(13, &[], AXES_OPTIONAL, shape_constraints!(13), squeeze),
        version(21, &[], AXES_OPTIONAL, shape_constraints!(21), squeeze),
        version(23, &[], AXES_OPTIONAL, shape_constraints!(23), squeeze),
        version(24, &[], AXES_OPTIONAL, shape_constraints!(24), squeeze),
        version(25, &[], AXES_OPTIONAL, shape_constraints!(25), squeeze),
    ]
);

/// The `axes` of Unsqueeze or Squeeze: the attribute before 13, the input from 13 (`None`:
/// absent).
fn axes(inv: &Invocation<'_>) -> Result<Option<Vec<i64>>, SpecError> {
    if inv.version.since < 13 {
        inv.attrs.ints("axes")
    } else {
        inv.inputs
            .get(1)
            .copied()
            .flatten()
            .map(|t| int64_list(t, "axes"))
            .transpose()
    }
}

/// Positions of `axes` in rank `rank`, each once: "Each value in axes should be within the
/// (inclusive) range [-output_rank, output_rank - 1]" (non-negative before version 11).
fn positions(inv: &Invocation<'_>, axes: &[i64], rank: usize) -> Result<Vec<usize>, SpecError> {
    let negatives = inv.version.since >= 11;
    let mut seen = vec![false; rank];
    let mut out = Vec::with_capacity(axes.len());
    for &a in axes {
        let p = norm_axis(a, rank, negatives, "axes value")?;
        if std::mem::replace(&mut seen[p], true) {
            return Err(spec_err!(
                "axes {} name dim {p} twice",
                crate::tensor::shape_text(axes)
            ));
        }
        out.push(p);
    }
    Ok(out)
}

/// "Insert single-dimensional entries to the shape of an input tensor (data)."
fn unsqueeze(inv: &Invocation<'_>) -> Result<Evaluated, SpecError> {
    let data = inv.input(0)?;
    let axes = axes(inv)?.ok_or_else(|| spec_err!("{} needs 'axes'", inv.op_name()))?;
    let rank = data.rank() + axes.len();
    let at = positions(inv, &axes, rank)?;
    let mut rest = data.shape().iter();
    let dims = (0..rank)
        .map(|p| {
            if at.contains(&p) {
                1
            } else {
                rest.next().copied().unwrap_or(1)
            }
        })
        .collect();
    reshaped(data, dims)
}

/// "Remove single-dimensional entries from the shape of a tensor ... If axes is not provided,
/// all the single dimensions will be removed from the shape. If an axis is selected with shape
/// entry not equal to one, an error is raised."
fn squeeze(inv: &Invocation<'_>) -> Result<Evaluated, SpecError> {
    let data = inv.input(0)?;
    let shape = data.shape();
    let at = match axes(inv)? {
        None => (0..shape.len()).filter(|&p| shape[p] == 1).collect(),
        Some(axes) => positions(inv, &axes, shape.len())?,
    };
    if let Some(&p) = at.iter().find(|&&p| shape[p] != 1) {
        return Err(spec_err!(
            "axis {p} has size {}, not 1: it cannot be squeezed",
            shape[p]
        ));
    }
    let dims = (0..shape.len())
        .filter(|p| !at.contains(p))
        .map(|p| shape[p])
        .collect();
    reshaped(data, dims)
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{i64s, int, ints, run, t};
    use crate::ops::SpecError;

    fn dims(shape: &[usize]) -> crate::tensor::Tensor {
        t(shape, &vec![0.5f32; shape.iter().product()])
    }

    #[test]
    fn shape_15_slices_as_the_spec_examples_do() {
        // The spec's examples: x of shape [2, 3, 4].
        let x = dims(&[2, 3, 4]);
        assert_eq!(i64s(run("Shape", 15, &[], &[&x])), (vec![3], vec![2, 3, 4]));
        assert_eq!(
            i64s(run("Shape", 15, &[int("start", -1)], &[&x])),
            (vec![1], vec![4])
        );
        assert_eq!(
            i64s(run("Shape", 15, &[int("end", -1)], &[&x])),
            (vec![2], vec![2, 3])
        );
        assert_eq!(
            i64s(run("Shape", 15, &[int("start", 1), int("end", 2)], &[&x])),
            (vec![1], vec![3])
        );
        // Clamped to [0, r]; start past end is empty.
        assert_eq!(
            i64s(run(
                "Shape",
                15,
                &[int("start", -10), int("end", 10)],
                &[&x]
            )),
            (vec![3], vec![2, 3, 4])
        );
        assert_eq!(
            i64s(run("Shape", 15, &[int("start", 2), int("end", 1)], &[&x])),
            (vec![0], vec![])
        );
        // A scalar's shape is empty; before 15 `start` is no attribute of Shape.
        assert_eq!(
            i64s(run("Shape", 13, &[], &[&crate::Tensor::scalar(1i64)])),
            (vec![0], vec![])
        );
        let e = run("Shape", 13, &[int("start", 1)], &[&x]).unwrap_err();
        assert!(e.to_string().contains("arrives with version 15"), "{e}");
    }

    fn reshape(
        opset: i64,
        input: &[usize],
        shape: &[i64],
        allowzero: Option<i64>,
    ) -> Result<Vec<usize>, SpecError> {
        let attrs: Vec<_> = allowzero.map(|a| int("allowzero", a)).into_iter().collect();
        let s = t(&[shape.len()], shape);
        run("Reshape", opset, &attrs, &[&dims(input), &s]).map(|r| r.shape().to_vec())
    }

    #[test]
    fn reshape_follows_the_spec_examples() {
        // The spec's examples, original shape [2, 3, 4].
        assert_eq!(reshape(14, &[2, 3, 4], &[4, 2, 3], None), Ok(vec![4, 2, 3]));
        assert_eq!(reshape(14, &[2, 3, 4], &[2, 12], None), Ok(vec![2, 12]));
        assert_eq!(reshape(14, &[2, 3, 4], &[24], None), Ok(vec![24]));
        assert_eq!(
            reshape(14, &[2, 3, 4], &[2, -1, 2], None),
            Ok(vec![2, 6, 2])
        );
        assert_eq!(
            reshape(14, &[2, 3, 4], &[-1, 2, 3, 4], None),
            Ok(vec![1, 2, 3, 4])
        );
        assert_eq!(
            reshape(14, &[2, 3, 4], &[2, 0, 4, 1], None),
            Ok(vec![2, 3, 4, 1])
        );
        assert_eq!(
            reshape(14, &[2, 3, 4], &[2, 0, 1, -1], None),
            Ok(vec![2, 3, 1, 4])
        );
        // allowzero: the spec's example, input [0, 3, 4] to shape [3, 4, 0].
        assert_eq!(
            reshape(14, &[0, 3, 4], &[3, 4, 0], Some(1)),
            Ok(vec![3, 4, 0])
        );
        // Without allowzero the 0 copies dim 2 (4): 48 elements for 0.
        assert!(reshape(14, &[0, 3, 4], &[3, 4, 0], None).is_err());
        // An empty shape makes a scalar of one element.
        assert_eq!(reshape(5, &[1, 1], &[], None), Ok(vec![]));
    }

    #[test]
    fn reshape_errors_where_the_spec_requires() {
        let violation = |r: Result<Vec<usize>, SpecError>| match r {
            Err(SpecError::Violation(m)) => m,
            other => panic!("{other:?}"),
        };
        let m = violation(reshape(13, &[2, 3], &[4, 2], None));
        assert_eq!(m, "shape [4, 2] holds 8 elements, the input [2, 3] holds 6");
        violation(reshape(13, &[2, 3], &[-1, -1], None));
        violation(reshape(13, &[2, 3], &[-2, 3], None));
        violation(reshape(13, &[2, 3], &[4, -1], None));
        // 0 copies a dim the input does not have.
        violation(reshape(13, &[6], &[6, 0], None));
        // allowzero with both 0 and -1.
        violation(reshape(14, &[0, 3], &[0, -1], Some(1)));
        // allowzero is no attribute of Reshape-13.
        violation(reshape(13, &[2, 3], &[2, 3], Some(0)));
        // Reshape-1 is skipped, not judged.
        let x = dims(&[2]);
        assert!(matches!(
            run("Reshape", 4, &[ints("shape", &[2])], &[&x]),
            Err(SpecError::Unsupported(_))
        ));
    }

    #[test]
    fn unsqueeze_takes_axes_as_an_attribute_then_as_an_input() {
        // The spec's example: x of shape [3, 4, 5], axes [0, 4] -> [1, 3, 4, 5, 1].
        let x = dims(&[3, 4, 5]);
        let axes = t(&[2], &[0i64, 4]);
        let shape = |r: Result<crate::Tensor, SpecError>| r.map(|t| t.shape().to_vec());
        assert_eq!(
            shape(run("Unsqueeze", 13, &[], &[&x, &axes])),
            Ok(vec![1, 3, 4, 5, 1])
        );
        assert_eq!(
            shape(run("Unsqueeze", 11, &[ints("axes", &[4, 0])], &[&x])),
            Ok(vec![1, 3, 4, 5, 1])
        );
        // Negative axes count from the back of the output rank from 11; before, an error.
        assert_eq!(
            shape(run("Unsqueeze", 11, &[ints("axes", &[-1])], &[&x])),
            Ok(vec![3, 4, 5, 1])
        );
        assert!(run("Unsqueeze", 1, &[ints("axes", &[-1])], &[&x]).is_err());
        // Out of range, repeated, missing.
        assert!(run("Unsqueeze", 13, &[], &[&x, &t(&[1], &[3i64])]).is_ok());
        assert!(run("Unsqueeze", 13, &[], &[&x, &t(&[1], &[4i64])]).is_err());
        assert!(run("Unsqueeze", 13, &[], &[&x, &t(&[2], &[1i64, 1])]).is_err());
        assert!(run("Unsqueeze", 11, &[], &[&x]).is_err());
        // A scalar unsqueezed at 0: the shape chain's step.
        let s = crate::Tensor::scalar(7i64);
        assert_eq!(
            i64s(run("Unsqueeze", 13, &[], &[&s, &t(&[1], &[0i64])])),
            (vec![1], vec![7])
        );
    }

    #[test]
    fn squeeze_removes_ones_and_refuses_other_dims() {
        let x = dims(&[1, 3, 1, 5]);
        let shape = |r: Result<crate::Tensor, SpecError>| r.map(|t| t.shape().to_vec());
        assert_eq!(shape(run("Squeeze", 13, &[], &[&x])), Ok(vec![3, 5]));
        assert_eq!(
            shape(run("Squeeze", 13, &[], &[&x, &t(&[1], &[-2i64])])),
            Ok(vec![1, 3, 5])
        );
        assert_eq!(
            shape(run("Squeeze", 1, &[ints("axes", &[0])], &[&x])),
            Ok(vec![3, 1, 5])
        );
        assert!(matches!(
            run("Squeeze", 13, &[], &[&x, &t(&[1], &[1i64])]),
            Err(SpecError::Violation(_))
        ));
        assert!(run("Squeeze", 1, &[ints("axes", &[-2])], &[&x]).is_err());
        assert!(run("Squeeze", 13, &[], &[&x, &t(&[1], &[4i64])]).is_err());
    }
}
