//! Add, Sub and Mul (<https://onnx.ai/onnx/operators/onnx__Add.html>, `onnx__Sub`, `onnx__Mul`)
//! on integers: index arithmetic around an indexing operator. "Performs element-wise binary
//! addition (with Numpy-style broadcasting support)."
//!
//! | since | change |
//! |---|---|
//! | 1, 6 | `broadcast` and `axis` attributes (the legacy broadcast): skipped |
//! | 7 | numpy broadcasting; float and int32/int64/uint32/uint64 |
//! | 13 | bfloat16 |
//! | 14 | int8, int16, uint8, uint16 |
//!
//! The spec does not say what an integer overflow gives, so a result outside its type's range
//! is skipped rather than wrapped; float types are skipped (the context needs none).

use super::cast::wrap;
use super::shape::{context_op, version};
use super::{FLOATS_1, INTEGERS};
use crate::ops::{AttrSpec, Constraint, Evaluated, InputSpec, Invocation, OpDef, Role, SpecError};
use crate::spec_err;
use crate::tensor::{DType, DTypeSet, Tensor};

const INPUTS: &[InputSpec] = &[
    InputSpec::required("A", "T", Role::Value),
    InputSpec::required("B", "T", Role::Value),
];
const LEGACY_1: &[AttrSpec] = &[
    AttrSpec::int("axis", 0),
    AttrSpec::int("broadcast", 0),
    AttrSpec::any("consumed_inputs"),
];
const LEGACY_6: &[AttrSpec] = &[AttrSpec::int("axis", 0), AttrSpec::int("broadcast", 0)];

const T_6: DTypeSet = FLOATS_1.with(DTypeSet::of(&[
    DType::Int32,
    DType::Int64,
    DType::Uint32,
    DType::Uint64,
]));
const T_13: DTypeSet = T_6.with(DTypeSet::of(&[DType::Bfloat16]));
const T_14: DTypeSet = T_13.with(INTEGERS);

macro_rules! arith_op {
    ($op:literal, $eval:expr) => {
        context_op!(
            $op,
            &[
                version(
                    1,
                    LEGACY_1,
                    INPUTS,
                    &[Constraint::new("T", FLOATS_1)],
                    legacy
                ),
                version(6, LEGACY_6, INPUTS, &[Constraint::new("T", T_6)], legacy),
                version(7, &[], INPUTS, &[Constraint::new("T", T_6)], $eval),
                version(13, &[], INPUTS, &[Constraint::new("T", T_13)], $eval),
                version(14, &[], INPUTS, &[Constraint::new("T", T_14)], $eval),
            ]
        )
    };
}

/// Add, every version (1 and 6 skipped).
pub(crate) static ADD: OpDef = arith_op!("Add", add);
/// Sub, every version (1 and 6 skipped).
pub(crate) static SUB: OpDef = arith_op!("Sub", sub);
/// Mul, every version (1 and 6 skipped).
pub(crate) static MUL: OpDef = arith_op!("Mul", mul);

fn legacy(inv: &Invocation<'_>) -> Result<Evaluated, SpecError> {
    Err(SpecError::Unsupported(format!(
        "{} (the legacy broadcast attributes) is not implemented",
        inv.op_name()
    )))
}

fn add(inv: &Invocation<'_>) -> Result<Evaluated, SpecError> {
    binary(inv, i128::checked_add)
}

fn sub(inv: &Invocation<'_>) -> Result<Evaluated, SpecError> {
    binary(inv, i128::checked_sub)
}

fn mul(inv: &Invocation<'_>) -> Result<Evaluated, SpecError> {
    binary(inv, i128::checked_mul)
}

/// The numpy broadcast of two shapes: aligned at the back, each pair equal or one of them 1.
pub(crate) fn broadcast(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let r = a.len().max(b.len());
    let at = |s: &[usize], i: usize| (i + s.len()).checked_sub(r).map_or(1, |k| s[k]);
    (0..r)
        .map(|i| match (at(a, i), at(b, i)) {
            (x, y) if x == y => Some(x),
            (1, y) => Some(y),
            (x, 1) => Some(x),
            _ => None,
        })
        .collect()
}

/// The flat position in a tensor of `shape` (broadcast to `out`) of output coordinates `c`.
fn source(c: &[usize], shape: &[usize], strides: &[usize]) -> usize {
    let skip = c.len() - shape.len();
    shape
        .iter()
        .zip(strides)
        .zip(&c[skip..])
        .map(|((&d, &s), &i)| if d == 1 { 0 } else { i * s })
        .sum()
}

fn binary(
    inv: &Invocation<'_>,
    op: fn(i128, i128) -> Option<i128>,
) -> Result<Evaluated, SpecError> {
    let (a, b) = (inv.input(0)?, inv.input(1)?);
    let dtype = a.dtype();
    if !INTEGERS.contains(dtype) {
        return Err(SpecError::Unsupported(format!(
            "{} of {dtype} is not evaluated (integer types only)",
            inv.op_name()
        )));
    }
    let out = broadcast(a.shape(), b.shape()).ok_or_else(|| {
        spec_err!(
            "shapes {} and {} do not broadcast",
            crate::tensor::shape_text(a.shape()),
            crate::tensor::shape_text(b.shape())
        )
    })?;
    inv.check_output_size(dtype, &out)?;
    let values = |t: &Tensor| -> Vec<i128> {
        if dtype == DType::Uint64 {
            t.elems::<u64>()
                .unwrap_or_default()
                .iter()
                .map(|&v| i128::from(v))
                .collect()
        } else {
            t.to_i64_vec()
                .unwrap_or_default()
                .into_iter()
                .map(i128::from)
                .collect()
        }
    };
    let (va, vb) = (values(a), values(b));
    let (sa, sb) = (
        crate::tensor::strides(a.shape()),
        crate::tensor::strides(b.shape()),
    );
    let (lo, hi) = super::cast::range(dtype);
    let n: usize = out.iter().product();
    let mut result = Vec::with_capacity(n);
    for flat in 0..n {
        let c = crate::tensor::unravel(flat, &out);
        let (x, y) = (
            va[source(&c, a.shape(), &sa)],
            vb[source(&c, b.shape(), &sb)],
        );
        match op(x, y).filter(|r| (lo..=hi).contains(r)) {
            Some(r) => result.push(r),
            None => {
                return Err(SpecError::Unsupported(format!(
                    "{} of {x} and {y} overflows {dtype}; the spec does not say what that gives",
                    inv.op_name()
                )))
            }
        }
    }
    Tensor::new(dtype, out, wrap(dtype, &result))
        .map(Evaluated::moved)
        .map_err(|e| spec_err!("internal error: {e}"))
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{i64s, run, t};
    use crate::ops::SpecError;

    #[test]
    fn integer_arithmetic_broadcasts_as_numpy_does() {
        // numpy: np.arange(6).reshape(2, 3) + np.array([10, 20, 30]) == [[10, 21, 32], [13, 24, 35]]
        let a = t(&[2, 3], &[0i64, 1, 2, 3, 4, 5]);
        let b = t(&[3], &[10i64, 20, 30]);
        assert_eq!(
            i64s(run("Add", 14, &[], &[&a, &b])),
            (vec![2, 3], vec![10, 21, 32, 13, 24, 35])
        );
        // [[1], [2]] * [3, 4] == [[3, 4], [6, 8]]
        let c = t(&[2, 1], &[1i64, 2]);
        let d = t(&[2], &[3i64, 4]);
        assert_eq!(
            i64s(run("Mul", 13, &[], &[&c, &d])),
            (vec![2, 2], vec![3, 4, 6, 8])
        );
        // A scalar: the shape chain's "-1".
        let s = crate::Tensor::scalar(1i64);
        assert_eq!(i64s(run("Sub", 7, &[], &[&d, &s])), (vec![2], vec![2, 3]));
        let y = run("Sub", 14, &[], &[&t(&[1], &[5i8]), &t(&[1], &[7i8])]).unwrap();
        assert_eq!(y.to_vec::<i8>().unwrap(), [-2]);
    }

    #[test]
    fn overflow_floats_and_the_legacy_versions_are_skipped_and_bad_shapes_are_errors() {
        let big = t(&[1], &[i64::MAX]);
        assert!(matches!(
            run("Add", 14, &[], &[&big, &big]),
            Err(SpecError::Unsupported(_))
        ));
        let u = t(&[1], &[1u32]);
        let v = t(&[1], &[2u32]);
        assert!(matches!(
            run("Sub", 14, &[], &[&u, &v]),
            Err(SpecError::Unsupported(_))
        ));
        let f = t(&[1], &[1.0f32]);
        assert!(matches!(
            run("Add", 14, &[], &[&f, &f]),
            Err(SpecError::Unsupported(_))
        ));
        let i = t(&[1], &[1i64]);
        assert!(matches!(
            run("Add", 6, &[], &[&i, &i]),
            Err(SpecError::Unsupported(_))
        ));
        // int8 arrives with version 14.
        let b = t(&[1], &[1i8]);
        assert!(matches!(
            run("Add", 13, &[], &[&b, &b]),
            Err(SpecError::Violation(_))
        ));
        let x = t(&[2], &[1i64, 2]);
        let y = t(&[3], &[1i64, 2, 3]);
        assert!(matches!(
            run("Add", 14, &[], &[&x, &y]),
            Err(SpecError::Violation(_))
        ));
    }
}
