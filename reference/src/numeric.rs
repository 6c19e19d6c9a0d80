//! Element values: integers read from their bits, and the half-precision float conversions the
//! reductions round through (IEEE 754 round to nearest, ties to even).

use crate::dtype::DType;
use crate::tensor::Word;

/// The integer value of an element of an integer dtype.
pub(crate) fn int_value(dtype: DType, w: &Word) -> Option<i128> {
    let Word::Bits(b) = *w else { return None };
    Some(match dtype {
        DType::Int8 => i128::from(b as u8 as i8),
        DType::Int16 => i128::from(b as u16 as i16),
        DType::Int32 => i128::from(b as u32 as i32),
        DType::Int64 => i128::from(b as i64),
        DType::Uint8 | DType::Uint16 | DType::Uint32 | DType::Uint64 => i128::from(b),
        _ => return None,
    })
}

/// float16 bits to f32 (exact).
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h & 0x8000) << 16;
    let exp = u32::from((h >> 10) & 0x1f);
    let man = u32::from(h & 0x3ff);
    if exp == 0 {
        let v = man as f32 * f32::powi(2.0, -24);
        return if sign != 0 { -v } else { v };
    }
    if exp == 31 {
        return f32::from_bits(sign | 0x7f80_0000 | (man << 13));
    }
    f32::from_bits(sign | ((exp + 127 - 15) << 23) | (man << 13))
}

/// f32 to float16 bits, rounding to nearest-even (NaN stays NaN, quiet).
pub fn f32_to_f16(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xff) as i32;
    let man = b & 0x7f_ffff;
    if exp == 0xff {
        return sign | if man != 0 { 0x7e00 } else { 0x7c00 };
    }
    let e = exp - 127;
    if e > 15 {
        return sign | 0x7c00;
    }
    if e >= -14 {
        let mut h = (((e + 15) as u32) << 10) | (man >> 13);
        let rem = man & 0x1fff;
        if rem > 0x1000 || (rem == 0x1000 && h & 1 == 1) {
            h += 1; // may carry into the exponent, up to infinity: correct
        }
        return sign | h as u16;
    }
    // Subnormal (or zero): value = m * 2^(e-23), in units of 2^-24 that is m * 2^(e+1).
    let m = man | 0x80_0000;
    let shift = (-(e + 1)) as u32; // >= 14
    if shift > 24 {
        return sign;
    }
    let mut h = m >> shift;
    let rem = m & ((1 << shift) - 1);
    let half = 1 << (shift - 1);
    if rem > half || (rem == half && h & 1 == 1) {
        h += 1;
    }
    sign | h as u16
}

/// f32 to bfloat16 bits, rounding to nearest-even.
pub fn f32_to_bf16(x: f32) -> u16 {
    let b = x.to_bits();
    if x.is_nan() {
        return ((b >> 16) as u16) | 0x0040;
    }
    ((b + 0x7fff + ((b >> 16) & 1)) >> 16) as u16
}

/// Whether `w` is a NaN of float dtype `dtype` (false for every other dtype). Where a reduction
/// computed a value, any NaN equals any NaN (docs/semantics.md D9): payloads are not specified.
pub fn is_nan(dtype: DType, w: &Word) -> bool {
    let Word::Bits(b) = *w else { return false };
    match dtype {
        DType::Float => f32::from_bits(b as u32).is_nan(),
        DType::Double => f64::from_bits(b).is_nan(),
        DType::Float16 => b & 0x7c00 == 0x7c00 && b & 0x3ff != 0,
        DType::Bfloat16 => f32::from_bits((b as u32) << 16).is_nan(),
        DType::Complex64 => {
            f32::from_bits(b as u32).is_nan() || f32::from_bits((b >> 32) as u32).is_nan()
        }
        _ => false,
    }
}
