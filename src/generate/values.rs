//! Element values for generated tensors: small random values of every dtype the generator
//! writes, and the float specials (NaN, ±0, ±inf) of each float type.
//!
//! Values are chosen to be exact and readable: floats are multiples of 0.5 in [-8, 8] (exact in
//! every float type, bfloat16 included), integers lie in [-9, 9] (or [0, 9] unsigned), strings
//! are one to four lower-case letters. Wrap-around and rounding chains are traits of their own,
//! for later profiles.

use super::rng::Rng;
use half::{bf16, f16};
use onnx_idx_check::tensor::{Class, DType, Layout, Storage, Tensor};

/// A float in [-8, 8], a multiple of 0.5.
fn half_step(rng: &mut Rng) -> f64 {
    (rng.range_i64(-16, 16) as f64) * 0.5
}

/// An integer in [-9, 9], or [0, 9] for unsigned types.
fn small_int(rng: &mut Rng, d: DType) -> i64 {
    if d.class() == Class::Unsigned {
        rng.range_i64(0, 9)
    } else {
        rng.range_i64(-9, 9)
    }
}

/// The bits of float `x` in float dtype `d` (a 16-, 32- or 64-bit float).
pub fn float_bits(d: DType, x: f64) -> u64 {
    match d {
        DType::Float16 => u64::from(f16::from_f64(x).to_bits()),
        DType::Bfloat16 => u64::from(bf16::from_f64(x).to_bits()),
        DType::Float => u64::from((x as f32).to_bits()),
        _ => x.to_bits(),
    }
}

/// The bits of one random element of fixed-width (or packed) dtype `d`, zero-extended.
fn random_bits(rng: &mut Rng, d: DType) -> u128 {
    match d.layout() {
        // The packed sub-byte types and the one-byte floats: any code is a value (NaN codes
        // included, which data movement must keep).
        Layout::Packed(bits) => return rng.below(1 << bits) as u128,
        Layout::Bytes(1) if d.class() == Class::Float => return rng.below(256) as u128,
        _ => {}
    }
    match d {
        DType::Bool => rng.below(2) as u128,
        DType::Complex64 => {
            let (re, im) = (half_step(rng) as f32, half_step(rng) as f32);
            u128::from(re.to_bits()) | (u128::from(im.to_bits()) << 32)
        }
        DType::Complex128 => {
            let (re, im) = (half_step(rng), half_step(rng));
            u128::from(re.to_bits()) | (u128::from(im.to_bits()) << 64)
        }
        d if d.class() == Class::Float => u128::from(float_bits(d, half_step(rng))),
        // Two's complement bits truncated to the width by `tensor` below.
        d => small_int(rng, d) as u64 as u128,
    }
}

/// One random string: one to four lower-case letters.
fn random_string(rng: &mut Rng) -> Vec<u8> {
    let n = rng.range(1, 4);
    (0..n).map(|_| b'a' + rng.below(26) as u8).collect()
}

/// The float specials of float dtype `d`, in this order: NaN, -0, +0, +inf, -inf; empty for
/// other dtypes (complex included: its specials are a trait of their own).
pub fn specials(d: DType) -> Vec<u64> {
    let xs = [f64::NAN, -0.0, 0.0, f64::INFINITY, f64::NEG_INFINITY];
    match d {
        DType::Float16 | DType::Bfloat16 | DType::Float | DType::Double => {
            xs.iter().map(|&x| float_bits(d, x)).collect()
        }
        _ => Vec::new(),
    }
}

/// NaNs that are not the canonical one, which data movement must copy bit for bit: a quiet NaN
/// with a payload, a signalling NaN, a negative quiet NaN with a payload; empty for other dtypes.
pub fn nan_payloads(d: DType) -> Vec<u64> {
    match d {
        DType::Float16 => vec![0x7e01, 0x7c01, 0xfe55],
        DType::Bfloat16 => vec![0x7fc1, 0x7f81, 0xffc5],
        DType::Float => vec![0x7fc0_1234, 0x7f80_0001, 0xffc0_0abc],
        DType::Double => vec![
            0x7ff8_0000_0000_1234,
            0x7ff0_0000_0000_0001,
            0xfff8_0000_0000_0abc,
        ],
        _ => Vec::new(),
    }
}

/// Subnormals of float dtype `d`: the smallest, the largest, and a negative one.
pub fn subnormals(d: DType) -> Vec<u64> {
    match d {
        DType::Float16 => vec![0x0001, 0x03ff, 0x8001],
        DType::Bfloat16 => vec![0x0001, 0x007f, 0x8001],
        DType::Float => vec![0x0000_0001, 0x007f_ffff, 0x8000_0001],
        DType::Double => vec![1, 0x000f_ffff_ffff_ffff, 0x8000_0000_0000_0001],
        _ => Vec::new(),
    }
}

/// Strings a runtime may mishandle: empty, non-ASCII (multi-byte UTF-8, an emoji), and long
/// (3,000 bytes).
pub fn unusual_strings() -> Vec<Vec<u8>> {
    vec![
        Vec::new(),
        "größe → 😀 ✓".as_bytes().to_vec(),
        b"0123456789".repeat(300),
    ]
}

/// `t` with its string elements replaced where `strings` holds one at that position.
pub fn with_strings(
    t: Tensor,
    strings: &[Option<Vec<u8>>],
) -> Result<Tensor, onnx_idx_check::ShapeError> {
    let Storage::Str(mut v) = t.storage().clone() else {
        return Ok(t);
    };
    for (slot, s) in v.iter_mut().zip(strings) {
        if let Some(s) = s {
            slot.clone_from(s);
        }
    }
    Tensor::new(t.dtype(), t.shape().to_vec(), Storage::Str(v))
}

/// Whether `d` is a float type with specials ([`specials`] is not empty).
pub fn has_specials(d: DType) -> bool {
    !specials(d).is_empty()
}

/// A tensor of `d` and `shape` with random elements; where `overrides` holds `Some(bits)` at a
/// position, that element is those bits instead (for the float specials; an empty string for
/// strings).
pub fn tensor(
    rng: &mut Rng,
    d: DType,
    shape: &[usize],
    overrides: &[Option<u64>],
) -> Result<Tensor, onnx_idx_check::ShapeError> {
    let n: usize = shape.iter().product();
    let storage = if d.layout() == Layout::String {
        Storage::Str(
            (0..n)
                .map(|i| match overrides.get(i).copied().flatten() {
                    Some(_) => Vec::new(),
                    None => random_string(rng),
                })
                .collect(),
        )
    } else {
        let mut bits = (0..n).map(|i| match overrides.get(i).copied().flatten() {
            Some(b) => u128::from(b),
            None => random_bits(rng, d),
        });
        fixed_width(d, n, &mut bits)
    };
    Tensor::new(d, shape.to_vec(), storage)
}

/// A tensor of integer or float dtype `d` and `shape` whose element at flat position `i` is
/// `1 + i mod 101`: neighbours differ and none is zero, so a read or a write of the wrong
/// element shows; `None` for other dtypes.
pub fn ramp(d: DType, shape: &[usize]) -> Option<Tensor> {
    let n: usize = shape.iter().product();
    let value = |i: usize| 1 + (i % 101) as u64;
    let mut bits: Box<dyn Iterator<Item = u128>> = match (d.layout(), d.class()) {
        (Layout::Bytes(w), Class::Float) if w >= 2 => {
            Box::new((0..n).map(move |i| u128::from(float_bits(d, value(i) as f64))))
        }
        (Layout::Bytes(_), Class::Signed | Class::Unsigned) => {
            Box::new((0..n).map(move |i| u128::from(value(i))))
        }
        _ => return None,
    };
    Tensor::new(d, shape.to_vec(), fixed_width(d, n, &mut bits)).ok()
}

/// The storage of `n` elements of fixed-width (or packed) dtype `d` from their bits.
fn fixed_width(d: DType, n: usize, bits: &mut dyn Iterator<Item = u128>) -> Storage {
    match d.layout() {
        Layout::Bytes(1) => Storage::W8(bits.map(|b| b as u8).collect()),
        Layout::Bytes(2) => Storage::W16(bits.map(|b| b as u16).collect()),
        Layout::Bytes(4) => Storage::W32(bits.map(|b| b as u32).collect()),
        Layout::Bytes(8) => Storage::W64(bits.map(|b| b as u64).collect()),
        // Codes packed least-significant bits first (docs/semantics.md section 4).
        Layout::Packed(w) => {
            let w = w as usize;
            let mut bytes = vec![0u8; (n * w).div_ceil(8)];
            for (i, code) in bits.enumerate() {
                for b in 0..w {
                    if (code >> b) & 1 == 1 {
                        bytes[(i * w + b) / 8] |= 1 << ((i * w + b) % 8);
                    }
                }
            }
            Storage::Packed(bytes)
        }
        Layout::Bytes(_) | Layout::String => Storage::W128(bits.collect()),
    }
}

/// An index tensor of integer dtype `d` and `shape` holding `values` (two's complement,
/// truncated to the width: a negative value in an unsigned type is a large one).
pub fn indices(
    d: DType,
    shape: &[usize],
    values: &[i64],
) -> Result<Tensor, onnx_idx_check::ShapeError> {
    let storage = match d.layout() {
        Layout::Bytes(1) => Storage::W8(values.iter().map(|&v| v as u8).collect()),
        Layout::Bytes(2) => Storage::W16(values.iter().map(|&v| v as u16).collect()),
        Layout::Bytes(4) => Storage::W32(values.iter().map(|&v| v as u32).collect()),
        _ => Storage::W64(values.iter().map(|&v| v as u64).collect()),
    };
    Tensor::new(d, shape.to_vec(), storage)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specials_are_nan_signed_zeros_and_infinities() {
        let f = specials(DType::Float);
        assert!(f32::from_bits(f[0] as u32).is_nan());
        assert_eq!(f[1] as u32, (-0.0f32).to_bits());
        assert_eq!(f[2], 0);
        assert_eq!(f[3] as u32, f32::INFINITY.to_bits());
        assert_eq!(specials(DType::Bfloat16)[4], 0xff80);
        assert_eq!(specials(DType::Float16)[3], 0x7c00);
        assert!(specials(DType::Int32).is_empty());
    }

    #[test]
    fn every_dtype_of_the_classic_ops_gets_a_tensor_of_its_shape() {
        let mut rng = Rng::for_case(0, "t");
        for d in onnx_idx_check::tensor::dtype::CLASSIC15_BF16.iter() {
            let t = tensor(&mut rng, d, &[2, 3], &[]).unwrap();
            assert_eq!((t.dtype(), t.shape()), (d, &[2usize, 3][..]));
        }
    }
}
