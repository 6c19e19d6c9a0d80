//! Cast (<https://onnx.ai/onnx/operators/onnx__Cast.html>) between the integer types and from
//! integers to floats and back, as far as the spec says what the result is (Cast-19's text,
//! which states what earlier versions did):
//!
//! - integer to integer: "when OOR, discard higher bits and reinterpret (with respect to two's
//!   complement representation for signed types). For example, 200 (int16) -> -56 (int8)";
//! - integer to float (float, double, float16, bfloat16): rounded to nearest, ties to even,
//!   "+/- infinity if OOR";
//! - float to integer: exact where the value is an integer within the target's range; "undefined
//!   if OOR", and the spec does not say how a fraction rounds, so those are skipped.
//!
//! Every other pair (bool, string, float to float, float8 and the packed types), Cast-1 (whose
//! `to` is a string), `saturate` and `round_mode` (which only act on float8 and float4 targets)
//! are not evaluated: skipped, or accepted and unused.
//!
//! | since | change |
//! |---|---|
//! | 6 | `to` is an INT (a STRING at 1) |
//! | 9, 13, 19, 21, 23, 24, 25, 28 | more types; `saturate` (19), `round_mode` (24) |

use super::shape::{context_op, version};
use super::{FLOAT8_19, INTEGERS};
use crate::ops::{AttrSpec, Constraint, Evaluated, InputSpec, Invocation, OpDef, Role, SpecError};
use crate::spec_err;
use crate::tensor::{DType, DTypeSet, Storage, Tensor};

const INPUTS: &[InputSpec] = &[InputSpec::required("input", "T1", Role::Value)];
const TO: &[AttrSpec] = &[AttrSpec::any("to")];
const SATURATE: &[AttrSpec] = &[AttrSpec::any("to"), AttrSpec::int("saturate", 1)];
const ROUND_MODE: &[AttrSpec] = &[
    AttrSpec::any("to"),
    AttrSpec::int("saturate", 1),
    AttrSpec::any("round_mode"),
];

/// Cast's types by version, as `onnx.defs` of ONNX 1.23.2 lists them: bool, the integer and
/// the float types at 1 and 6, string from 9, bfloat16 from 13, the float8 formats from 19,
/// int4/uint4 from 21, float4e2m1 from 23, float8e8m0 from 24, int2/uint2 from 25, the float6
/// formats from 28.
const fn types(since: i64) -> DTypeSet {
    let mut s = INTEGERS.with(DTypeSet::of(&[
        DType::Bool,
        DType::Float16,
        DType::Float,
        DType::Double,
    ]));
    let steps: [(i64, DTypeSet); 8] = [
        (9, DTypeSet::of(&[DType::String])),
        (13, DTypeSet::of(&[DType::Bfloat16])),
        (19, FLOAT8_19),
        (21, DTypeSet::of(&[DType::Int4, DType::Uint4])),
        (23, DTypeSet::of(&[DType::Float4E2M1])),
        (24, DTypeSet::of(&[DType::Float8E8M0])),
        (25, DTypeSet::of(&[DType::Int2, DType::Uint2])),
        (28, DTypeSet::of(&[DType::Float6E2M3, DType::Float6E3M2])),
    ];
    let mut i = 0;
    while i < steps.len() {
        if since >= steps[i].0 {
            s = s.with(steps[i].1);
        }
        i += 1;
    }
    s
}

macro_rules! cast_version {
    ($since:literal, $attrs:expr) => {
        version(
            $since,
            $attrs,
            INPUTS,
            &[
                Constraint::new("T1", types($since)),
                Constraint::new("T2", types($since)),
            ],
            cast,
        )
    };
}

/// Cast, every version.
pub(crate) static CAST: OpDef = context_op!(
    "Cast",
    &[
        cast_version!(1, TO),
        cast_version!(6, TO),
        cast_version!(9, TO),
        cast_version!(13, TO),
        cast_version!(19, SATURATE),
        cast_version!(21, SATURATE),
        cast_version!(23, SATURATE),
        cast_version!(24, ROUND_MODE),
        cast_version!(25, ROUND_MODE),
        cast_version!(28, ROUND_MODE),
    ]
);

/// The float types a Cast from or to an integer is evaluated for.
const FLOATS: DTypeSet =
    DTypeSet::of(&[DType::Float16, DType::Bfloat16, DType::Float, DType::Double]);

fn cast(inv: &Invocation<'_>) -> Result<Evaluated, SpecError> {
    if inv.version.since == 1 {
        return Err(SpecError::Unsupported(
            "Cast-1 (the target type as a string) is not implemented".into(),
        ));
    }
    let input = inv.input(0)?;
    let to = match inv.attrs.find("to")? {
        None => return Err(spec_err!("{} needs the 'to' attribute", inv.op_name())),
        Some(_) => inv.attrs.int("to", 0)?,
    };
    let target = i32::try_from(to)
        .ok()
        .and_then(DType::from_onnx)
        .ok_or_else(|| spec_err!("'to' = {to} is no data type"))?;
    if !types(inv.version.since).contains(target) {
        return Err(spec_err!(
            "'to' = {target} is not allowed by {} (constraint T2)",
            inv.op_name()
        ));
    }
    let from = input.dtype();
    let unsupported = || {
        SpecError::Unsupported(format!(
            "Cast from {from} to {target} is not evaluated (only integer to integer, integer to float and float to integer)"
        ))
    };
    let (int_in, float_in) = (INTEGERS.contains(from), FLOATS.contains(from));
    let (int_out, float_out) = (INTEGERS.contains(target), FLOATS.contains(target));
    inv.check_output_size(target, input.shape())?;
    let out = if int_in && int_out {
        wrap(target, &ints(input).ok_or_else(unsupported)?)
    } else if int_in && float_out {
        let v: Vec<f32> = ints(input)
            .ok_or_else(unsupported)?
            .iter()
            // Through f32, correctly rounded; float16 and bfloat16 have at most 11 significant
            // bits, so rounding twice (24 bits, then theirs) gives the nearest value (2p + 2 <= 24).
            .map(|&i| i as f32)
            .collect();
        if target == DType::Double {
            let v: Vec<u64> = ints(input)
                .ok_or_else(unsupported)?
                .iter()
                .map(|&i| (i as f64).to_bits())
                .collect();
            Storage::W64(v)
        } else {
            floats_out(target, &v)
        }
    } else if float_in && int_out {
        let values = floats(input).ok_or_else(unsupported)?;
        let (lo, hi) = range(target);
        let mut out = Vec::with_capacity(values.len());
        for (k, &f) in values.iter().enumerate() {
            if !f.is_finite() || f.fract() != 0.0 || f < lo as f64 || f > hi as f64 {
                return Err(SpecError::Unsupported(format!(
                    "Cast of input[{k}] = {f} from {from} to {target}: the spec leaves a value out of range undefined and does not say how a fraction rounds"
                )));
            }
            out.push(f as i128);
        }
        wrap(target, &out)
    } else {
        return Err(unsupported());
    };
    Tensor::new(target, input.shape().to_vec(), out)
        .map(Evaluated::moved)
        .map_err(|e| spec_err!("internal error: {e}"))
}

/// An integer tensor's values.
fn ints(t: &Tensor) -> Option<Vec<i128>> {
    if t.dtype() == DType::Uint64 {
        return Some(t.elems::<u64>()?.iter().map(|&v| i128::from(v)).collect());
    }
    Some(t.to_i64_vec()?.into_iter().map(i128::from).collect())
}

/// A float tensor's values, each exact in f64.
fn floats(t: &Tensor) -> Option<Vec<f64>> {
    Some(match (t.dtype(), t.storage()) {
        (DType::Float, Storage::W32(v)) => {
            v.iter().map(|&b| f64::from(f32::from_bits(b))).collect()
        }
        (DType::Double, Storage::W64(v)) => v.iter().map(|&b| f64::from_bits(b)).collect(),
        (DType::Float16, Storage::W16(v)) => v
            .iter()
            .map(|&b| half::f16::from_bits(b).to_f64())
            .collect(),
        (DType::Bfloat16, Storage::W16(v)) => v
            .iter()
            .map(|&b| half::bf16::from_bits(b).to_f64())
            .collect(),
        _ => return None,
    })
}

/// The smallest and largest value of an integer type.
pub(crate) fn range(d: DType) -> (i128, i128) {
    match d {
        DType::Int8 => (i8::MIN.into(), i8::MAX.into()),
        DType::Int16 => (i16::MIN.into(), i16::MAX.into()),
        DType::Int32 => (i32::MIN.into(), i32::MAX.into()),
        DType::Int64 => (i64::MIN.into(), i64::MAX.into()),
        DType::Uint8 => (0, u8::MAX.into()),
        DType::Uint16 => (0, u16::MAX.into()),
        DType::Uint32 => (0, u32::MAX.into()),
        _ => (0, u64::MAX.into()),
    }
}

/// Integers as `target`, keeping the low bits (two's complement).
pub(crate) fn wrap(target: DType, v: &[i128]) -> Storage {
    match target.byte_width() {
        Some(1) => Storage::W8(v.iter().map(|&i| i as u8).collect()),
        Some(2) => Storage::W16(v.iter().map(|&i| i as u16).collect()),
        Some(4) => Storage::W32(v.iter().map(|&i| i as u32).collect()),
        _ => Storage::W64(v.iter().map(|&i| i as u64).collect()),
    }
}

/// f32 values as `target` (float, float16 or bfloat16), rounded to nearest even; out of range is
/// infinity.
fn floats_out(target: DType, v: &[f32]) -> Storage {
    match target {
        DType::Float16 => Storage::W16(
            v.iter()
                .map(|&f| half::f16::from_f32(f).to_bits())
                .collect(),
        ),
        DType::Bfloat16 => Storage::W16(
            v.iter()
                .map(|&f| half::bf16::from_f32(f).to_bits())
                .collect(),
        ),
        _ => Storage::W32(v.iter().map(|&f| f.to_bits()).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{int, run, t};
    use crate::ops::SpecError;
    use crate::tensor::DType;

    fn cast(opset: i64, x: &crate::Tensor, to: DType) -> Result<crate::Tensor, SpecError> {
        run("Cast", opset, &[int("to", i64::from(to.onnx_id()))], &[x])
    }

    #[test]
    fn integers_wrap_as_the_spec_says() {
        // The spec's example: 200 (int16) -> -56 (int8).
        let x = t(&[3], &[200i16, -1, 127]);
        let y = cast(19, &x, DType::Int8).unwrap();
        assert_eq!(y.to_vec::<i8>().unwrap(), [-56, -1, 127]);
        let y = cast(13, &x, DType::Uint8).unwrap();
        assert_eq!(y.to_vec::<u8>().unwrap(), [200, 255, 127]);
        let y = cast(13, &t(&[2], &[-1i64, 3]), DType::Int32).unwrap();
        assert_eq!(y.to_vec::<i32>().unwrap(), [-1, 3]);
        let y = cast(13, &t(&[1], &[u64::MAX]), DType::Int64).unwrap();
        assert_eq!(y.to_vec::<i64>().unwrap(), [-1]);
        let y = cast(13, &t(&[1], &[-1i32]), DType::Uint64).unwrap();
        assert_eq!(y.to_vec::<u64>().unwrap(), [u64::MAX]);
    }

    #[test]
    fn integers_to_floats_round_to_nearest_and_overflow_to_infinity() {
        // 2^24 + 1 is a tie between 2^24 and 2^24 + 2 in f32: even, 2^24.
        let x = t(&[3], &[16_777_217i64, -3, 0]);
        assert_eq!(
            cast(13, &x, DType::Float).unwrap().to_vec::<f32>().unwrap(),
            [16_777_216.0, -3.0, 0.0]
        );
        assert_eq!(
            cast(13, &x, DType::Double)
                .unwrap()
                .to_vec::<f64>()
                .unwrap(),
            [16_777_217.0, -3.0, 0.0]
        );
        // float16: 65504 is its largest; 65520 rounds up past it to infinity; 2049 is a tie
        // (2048, 2050) to even, 2048.
        let x = t(&[3], &[65504i32, 65520, 2049]);
        let y = cast(13, &x, DType::Float16)
            .unwrap()
            .to_vec::<half::f16>()
            .unwrap();
        assert_eq!(y[0].to_f32(), 65504.0);
        assert!(y[1].is_infinite());
        assert_eq!(y[2].to_f32(), 2048.0);
        // bfloat16: 257 is a tie between 256 and 258: even, 256.
        let y = cast(13, &t(&[1], &[257i32]), DType::Bfloat16).unwrap();
        assert_eq!(y.to_vec::<half::bf16>().unwrap()[0].to_f32(), 256.0);
    }

    #[test]
    fn floats_to_integers_only_where_exact_and_in_range() {
        let x = t(&[3], &[3.0f32, -2.0, 0.0]);
        assert_eq!(
            cast(13, &x, DType::Int64).unwrap().to_vec::<i64>().unwrap(),
            [3, -2, 0]
        );
        for bad in [2.5f32, 300.0, f32::NAN, f32::INFINITY] {
            assert!(
                matches!(
                    cast(13, &t(&[1], &[bad]), DType::Uint8),
                    Err(SpecError::Unsupported(_))
                ),
                "{bad}"
            );
        }
        assert!(matches!(
            cast(13, &t(&[1], &[-1.0f64]), DType::Uint32),
            Err(SpecError::Unsupported(_))
        ));
    }

    #[test]
    fn other_pairs_are_skipped_and_bad_targets_are_errors() {
        let f = t(&[1], &[1.0f32]);
        assert!(matches!(
            cast(13, &f, DType::Double),
            Err(SpecError::Unsupported(_))
        ));
        assert!(matches!(
            cast(13, &t(&[1], &[true]), DType::Int32),
            Err(SpecError::Unsupported(_))
        ));
        // bfloat16 is no type of Cast-9; 99 no type at all; `to` is required.
        assert!(matches!(
            cast(9, &f, DType::Bfloat16),
            Err(SpecError::Violation(_))
        ));
        assert!(matches!(
            run("Cast", 13, &[int("to", 99)], &[&f]),
            Err(SpecError::Violation(_))
        ));
        assert!(matches!(
            run("Cast", 13, &[], &[&f]),
            Err(SpecError::Violation(_))
        ));
    }
}
