//! The context operators: what real models put around an indexing operator (the shape chain
//! Shape -> Gather -> Unsqueeze -> Concat -> Reshape, a Transpose before a Gather, a Cast of the
//! indices, integer index arithmetic), evaluated exactly so that a case can hold the operator
//! under test inside such a graph. They are plumbing (`OpDef::plumbing`, left out of coverage,
//! `generate` and the per-operator summary) with `OpDef::context` set: a graph of context
//! operators alone has no operator under test and is skipped
//! (the checker's evaluation plan).
//!
//! | operator | versions | evaluated |
//! |---|---|---|
//! | Shape | 1, 13, 15 (`start`, `end`), 19, 21, 23, 24, 25 | every type |
//! | Reshape | 5, 13, 14 (`allowzero`), 19, 21, 23, 24, 25 | every type; Reshape-1 (shape as an attribute) skipped |
//! | Unsqueeze, Squeeze | 1, 11 (`axes` attribute; negatives from 11), 13, 21, 23, 24, 25 (`axes` input) | every type |
//! | Concat | 1, 4, 11 (negative `axis`), 13 | every type but the packed sub-byte ones |
//! | Transpose | 1, 13, 21, 23, 24, 25 | every type but the packed sub-byte ones |
//! | Cast | 1, 6, 9, 13, 19, 21, 23, 24, 25, 28 | integer to integer (wrapping, as the spec says), integer to float, float to integer where the value is an integer in range; others skipped |
//! | Add, Sub, Mul | 7, 13, 14 (numpy broadcasting) | integer types, where no result overflows; others skipped |
//!
//! Kept simple and exact rather than fast: each output element is copied or computed one at a
//! time. Where the spec requires an error (a Reshape whose element counts differ, a Squeeze of a
//! dimension that is not 1, an axis out of range) the kernel errs ([`SpecError::Violation`]);
//! where the spec leaves the result undefined or unsaid (a float cast to an integer out of
//! range or with a fraction, an integer overflow in Add) the case is skipped
//! ([`SpecError::Unsupported`]).

pub(crate) mod arith;
pub(crate) mod cast;
pub(crate) mod concat;
pub(crate) mod shape;
pub(crate) mod transpose;

use super::SpecError;
use crate::spec_err;
pub(crate) use crate::tensor::dtype::INTEGERS;
use crate::tensor::dtype::{CLASSIC15, CLASSIC15_BF16};
use crate::tensor::{DType, DTypeSet, Storage, Tensor};

/// The float8 formats of opset 19 (e8m0 came with 24).
pub(crate) const FLOAT8_19: DTypeSet = DTypeSet::of(&[
    DType::Float8E4M3Fn,
    DType::Float8E4M3Fnuz,
    DType::Float8E5M2,
    DType::Float8E5M2Fnuz,
]);

/// The data types of the shape operators (Shape, Reshape, Unsqueeze, Squeeze, Transpose) by
/// opset, as `onnx.defs` of ONNX 1.23.2 lists them: classic15 at 1, bfloat16 from 13, the
/// float8 formats from 19, int4/uint4 from 21, float4e2m1 from 23, float8e8m0 from 24,
/// int2/uint2 from 25.
pub(crate) const ALL_1: DTypeSet = CLASSIC15;
/// See [`ALL_1`].
pub(crate) const ALL_13: DTypeSet = CLASSIC15_BF16;
/// See [`ALL_1`].
pub(crate) const ALL_19: DTypeSet = ALL_13.with(FLOAT8_19);
/// See [`ALL_1`].
pub(crate) const ALL_21: DTypeSet = ALL_19.with(DTypeSet::of(&[DType::Int4, DType::Uint4]));
/// See [`ALL_1`].
pub(crate) const ALL_23: DTypeSet = ALL_21.with(DTypeSet::of(&[DType::Float4E2M1]));
/// See [`ALL_1`].
pub(crate) const ALL_24: DTypeSet = ALL_23.with(DTypeSet::of(&[DType::Float8E8M0]));
/// See [`ALL_1`].
pub(crate) const ALL_25: DTypeSet = ALL_24.with(DTypeSet::of(&[DType::Int2, DType::Uint2]));

/// float16, float, double: the only types of the first versions of Reshape, Concat, Add.
pub(crate) const FLOATS_1: DTypeSet = DTypeSet::of(&[DType::Float16, DType::Float, DType::Double]);

/// int64 alone: shapes and axes.
pub(crate) const INT64: DTypeSet = DTypeSet::of(&[DType::Int64]);

/// The data types of the shape operators' version `since` (see [`ALL_1`]).
pub(crate) const fn types_at(since: i64) -> DTypeSet {
    match since {
        ..=12 => ALL_1,
        13..=18 => ALL_13,
        19..=20 => ALL_19,
        21..=22 => ALL_21,
        23 => ALL_23,
        24 => ALL_24,
        _ => ALL_25,
    }
}

/// `t`'s elements at the flat positions `picks`, as a tensor of `shape` (whose element count is
/// the number of picks). The packed sub-byte types are skipped: no context case needs them.
pub(crate) fn pick(
    t: &Tensor,
    shape: Vec<usize>,
    picks: impl Iterator<Item = usize>,
) -> Result<Tensor, SpecError> {
    fn take<T: Clone>(v: &[T], picks: impl Iterator<Item = usize>) -> Vec<T> {
        picks.map(|i| v[i].clone()).collect()
    }
    let storage = match t.storage() {
        Storage::W8(v) => Storage::W8(take(v, picks)),
        Storage::W16(v) => Storage::W16(take(v, picks)),
        Storage::W32(v) => Storage::W32(take(v, picks)),
        Storage::W64(v) => Storage::W64(take(v, picks)),
        Storage::W128(v) => Storage::W128(take(v, picks)),
        Storage::Str(v) => Storage::Str(take(v, picks)),
        Storage::Packed(_) => {
            return Err(SpecError::Unsupported(format!(
                "moving {} elements one by one is not implemented for the context operators",
                t.dtype()
            )))
        }
    };
    Tensor::new(t.dtype(), shape, storage).map_err(|e| spec_err!("internal error: {e}"))
}

/// A 1-D (or scalar) int64 tensor's values: `axes`, `shape`.
pub(crate) fn int64_list(t: &Tensor, what: &str) -> Result<Vec<i64>, SpecError> {
    if t.rank() > 1 {
        return Err(spec_err!(
            "'{what}' must be a 1-D tensor, got shape {}",
            crate::tensor::shape_text(t.shape())
        ));
    }
    t.to_i64_vec()
        .ok_or_else(|| spec_err!("'{what}' must be an integer tensor, got {}", t.dtype()))
}

/// Axis `a` of a rank-`rank` tensor as a position: `[-rank, rank-1]` when `negatives`, else
/// `[0, rank-1]`.
pub(crate) fn norm_axis(
    a: i64,
    rank: usize,
    negatives: bool,
    what: &str,
) -> Result<usize, SpecError> {
    let r = rank as i64;
    let lo = if negatives { -r } else { 0 };
    if a < lo || a >= r {
        return Err(spec_err!(
            "{what} {a} is out of range [{lo}, {}] for rank {rank}",
            r - 1
        ));
    }
    Ok(if a < 0 { (a + r) as usize } else { a as usize })
}

#[cfg(test)]
pub(crate) mod testutil {
    //! Calls of a context operator in tests.

    use crate::ops::testutil::{attrs_of, Attr};
    use crate::ops::{call_typed as call, find_op, AttrValue, SpecError};
    use crate::tensor::{Element, Tensor};

    /// An INTS attribute.
    pub(crate) fn ints(name: &str, v: &[i64]) -> Attr {
        (name.into(), AttrValue::Ints(v.to_vec().into()))
    }

    /// An INT attribute.
    pub(crate) fn int(name: &str, v: i64) -> Attr {
        (name.into(), AttrValue::Int(v))
    }

    /// A tensor of `shape` holding `v`.
    pub(crate) fn t<T: Element>(shape: &[usize], v: &[T]) -> Tensor {
        Tensor::from_slice(shape, v).unwrap()
    }

    /// `op` at `opset` on `inputs` with `attrs`, as a node of a model would be evaluated.
    pub(crate) fn run(
        op: &str,
        opset: i64,
        attrs: &[Attr],
        inputs: &[&Tensor],
    ) -> Result<Tensor, SpecError> {
        let def = find_op("", op).unwrap();
        let a = attrs_of(attrs.to_vec());
        let inputs: Vec<Option<&Tensor>> = inputs.iter().map(|t| Some(*t)).collect();
        call(def, opset, a, &inputs)
    }

    /// The shape and the int64 values of a result.
    pub(crate) fn i64s(r: Result<Tensor, SpecError>) -> (Vec<usize>, Vec<i64>) {
        let t = r.unwrap();
        (t.shape().to_vec(), t.to_vec::<i64>().unwrap())
    }
}
