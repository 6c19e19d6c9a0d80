//! Reading single elements as values, for comparison and display.

use super::{DType, Storage, Tensor};
use half::{bf16, f16};

/// One element, interpreted through its dtype.
#[derive(Clone, Debug, PartialEq)]
pub enum Scalar<'a> {
    /// A float of any width, widened (exactly) to f64; `bits` keeps the stored pattern so that
    /// exact comparison can tell `-0.0` from `+0.0`.
    Real {
        /// The value.
        value: f64,
        /// The stored bit pattern.
        bits: u64,
    },
    /// A complex number (real, imaginary), widened to f64, with the stored bits.
    Complex {
        /// Real part.
        re: f64,
        /// Imaginary part.
        im: f64,
        /// The stored bit pattern.
        bits: u128,
    },
    /// An integer of any width.
    Int(i128),
    /// A bool.
    Bool(bool),
    /// A string's bytes.
    Bytes(&'a [u8]),
}

/// Element `i` of `t`, or `None` past the end.
pub fn scalar(t: &Tensor, i: usize) -> Option<Scalar<'_>> {
    use DType::*;
    let s = t.storage();
    let real = |value: f64, bits: u64| Some(Scalar::Real { value, bits });
    match (t.dtype(), s) {
        (Bool, Storage::W8(v)) => v.get(i).map(|&b| Scalar::Bool(b != 0)),
        (Int8, Storage::W8(v)) => v.get(i).map(|&b| Scalar::Int(i128::from(b as i8))),
        (Uint8, Storage::W8(v)) => v.get(i).map(|&b| Scalar::Int(i128::from(b))),
        (Int16, Storage::W16(v)) => v.get(i).map(|&b| Scalar::Int(i128::from(b as i16))),
        (Uint16, Storage::W16(v)) => v.get(i).map(|&b| Scalar::Int(i128::from(b))),
        (Int32, Storage::W32(v)) => v.get(i).map(|&b| Scalar::Int(i128::from(b as i32))),
        (Uint32, Storage::W32(v)) => v.get(i).map(|&b| Scalar::Int(i128::from(b))),
        (Int64, Storage::W64(v)) => v.get(i).map(|&b| Scalar::Int(i128::from(b as i64))),
        (Uint64, Storage::W64(v)) => v.get(i).map(|&b| Scalar::Int(i128::from(b))),
        (Float, Storage::W32(v)) => {
            let &b = v.get(i)?;
            real(f64::from(f32::from_bits(b)), u64::from(b))
        }
        (Double, Storage::W64(v)) => {
            let &b = v.get(i)?;
            real(f64::from_bits(b), b)
        }
        (Float16, Storage::W16(v)) => {
            let &b = v.get(i)?;
            real(f64::from(f16::from_bits(b).to_f32()), u64::from(b))
        }
        (Bfloat16, Storage::W16(v)) => {
            let &b = v.get(i)?;
            real(f64::from(bf16::from_bits(b).to_f32()), u64::from(b))
        }
        (Complex64, Storage::W64(v)) => {
            let &b = v.get(i)?;
            Some(Scalar::Complex {
                re: f64::from(f32::from_bits(b as u32)),
                im: f64::from(f32::from_bits((b >> 32) as u32)),
                bits: u128::from(b),
            })
        }
        (Complex128, Storage::W128(v)) => {
            let &b = v.get(i)?;
            Some(Scalar::Complex {
                re: f64::from_bits(b as u64),
                im: f64::from_bits((b >> 64) as u64),
                bits: b,
            })
        }
        (String, Storage::Str(v)) => v.get(i).map(|b| Scalar::Bytes(b)),
        (
            d @ (Float8E4M3Fn | Float8E4M3Fnuz | Float8E5M2 | Float8E5M2Fnuz | Float8E8M0),
            Storage::W8(v),
        ) => {
            let &b = v.get(i)?;
            real(minifloat(d, u32::from(b)), u64::from(b))
        }
        (d, Storage::Packed(bytes)) => {
            let bits = match d.layout() {
                super::Layout::Packed(b) => b,
                _ => return None,
            };
            let code = packed_code(bytes, i, bits)?;
            match d {
                Int4 | Int2 => {
                    let shift = 32 - bits;
                    Some(Scalar::Int(i128::from(((code << shift) as i32) >> shift)))
                }
                Uint4 | Uint2 => Some(Scalar::Int(i128::from(code))),
                _ => real(minifloat(d, code), u64::from(code)),
            }
        }
        _ => None,
    }
}

/// The `bits`-wide code of element `i` in LSB-first packed `bytes`.
pub fn packed_code(bytes: &[u8], i: usize, bits: u32) -> Option<u32> {
    let start = i.checked_mul(bits as usize)?;
    let mut code = 0u32;
    for b in 0..bits as usize {
        let pos = start + b;
        let byte = *bytes.get(pos / 8)?;
        if (byte >> (pos % 8)) & 1 == 1 {
            code |= 1 << b;
        }
    }
    Some(code)
}

/// Sets element `i` of LSB-first packed `bytes` to the low `bits` bits of `code`; a position
/// past the end is ignored.
pub fn set_packed(bytes: &mut [u8], i: usize, bits: u32, code: u32) {
    let Some(start) = i.checked_mul(bits as usize) else {
        return;
    };
    for b in 0..bits as usize {
        let pos = start + b;
        if let Some(byte) = bytes.get_mut(pos / 8) {
            if (code >> b) & 1 == 1 {
                *byte |= 1 << (pos % 8);
            } else {
                *byte &= !(1 << (pos % 8));
            }
        }
    }
}

/// Decodes the small float formats (float8, float6, float4) exactly into f64.
pub fn minifloat(dtype: DType, code: u32) -> f64 {
    use DType::*;
    // (exponent bits, mantissa bits, bias)
    let (e_bits, m_bits, bias) = match dtype {
        Float8E4M3Fn => (4, 3, 7),
        Float8E4M3Fnuz => (4, 3, 8),
        Float8E5M2 => (5, 2, 15),
        Float8E5M2Fnuz => (5, 2, 16),
        Float4E2M1 => (2, 1, 1),
        Float6E2M3 => (2, 3, 1),
        Float6E3M2 => (3, 2, 3),
        Float8E8M0 => {
            return if code == 0xFF {
                f64::NAN
            } else {
                2f64.powi(code as i32 - 127)
            }
        }
        _ => return f64::NAN,
    };
    let total = 1 + e_bits + m_bits;
    let sign = (code >> (total - 1)) & 1 == 1;
    let e = (code >> m_bits) & ((1 << e_bits) - 1);
    let m = code & ((1 << m_bits) - 1);
    match dtype {
        // fnuz: the pattern of negative zero is the only NaN.
        Float8E4M3Fnuz | Float8E5M2Fnuz if code == 0x80 => return f64::NAN,
        Float8E4M3Fn if e == 0xF && m == 0x7 => return f64::NAN,
        Float8E5M2 if e == 0x1F => {
            return if m == 0 {
                if sign {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                }
            } else {
                f64::NAN
            }
        }
        _ => {}
    }
    let frac = f64::from(m) / f64::from(1u32 << m_bits);
    let magnitude = if e == 0 {
        frac * 2f64.powi(1 - bias)
    } else {
        (1.0 + frac) * 2f64.powi(e as i32 - bias)
    };
    if sign {
        -magnitude
    } else {
        magnitude
    }
}

/// A short human-readable rendering of element `i`.
pub fn display(t: &Tensor, i: usize) -> String {
    match (t.dtype(), scalar(t, i)) {
        (DType::Float16, Some(Scalar::Real { bits, .. })) => {
            let h = f16::from_bits(bits as u16);
            format_float(
                f64::from(h.to_f32()),
                &h.to_string(),
                &format!("{:e}", h.to_f32()),
            )
        }
        (DType::Bfloat16, Some(Scalar::Real { bits, .. })) => {
            let h = bf16::from_bits(bits as u16);
            format_float(
                f64::from(h.to_f32()),
                &h.to_string(),
                &format!("{:e}", h.to_f32()),
            )
        }
        (DType::Float, Some(Scalar::Real { value, .. })) => {
            let f = value as f32;
            format_float(value, &f.to_string(), &format!("{f:e}"))
        }
        (DType::Complex64, Some(Scalar::Complex { re, im, .. })) => {
            format!("({}{:+}j)", re as f32, im as f32)
        }
        (_, Some(Scalar::Real { value, .. })) => {
            format_float(value, &value.to_string(), &format!("{value:e}"))
        }
        (_, Some(Scalar::Complex { re, im, .. })) => format!("({re}{im:+}j)"),
        (_, Some(Scalar::Int(v))) => v.to_string(),
        (_, Some(Scalar::Bool(b))) => b.to_string(),
        (_, Some(Scalar::Bytes(b))) => format!("{:?}", String::from_utf8_lossy(b)),
        (_, None) => "?".to_string(),
    }
}

/// Keeps `-0.0`, NaN and infinities recognisable, and whole floats visibly floats.
fn format_float(value: f64, shortest: &str, scientific: &str) -> String {
    if value.is_nan() {
        "NaN".into()
    } else if value.is_infinite() {
        if value > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        }
    } else if value != 0.0 && !(1e-5..1e16).contains(&value.abs()) {
        // Scientific notation keeps huge and tiny values readable.
        scientific.to_string()
    } else if value == value.trunc() && !shortest.contains(['.', 'e', 'E']) {
        format!("{shortest}.0")
    } else {
        shortest.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minifloats_decode_known_codes() {
        // Values from the OCP 8-bit floating point specification's tables.
        assert_eq!(minifloat(DType::Float8E4M3Fn, 0x7E), 448.0);
        assert!(minifloat(DType::Float8E4M3Fn, 0x7F).is_nan());
        assert_eq!(minifloat(DType::Float8E4M3Fn, 0x38), 1.0);
        assert_eq!(minifloat(DType::Float8E5M2, 0x3C), 1.0);
        assert_eq!(minifloat(DType::Float8E5M2, 0x7C), f64::INFINITY);
        assert_eq!(minifloat(DType::Float8E5M2, 0x7B), 57344.0);
        assert!(minifloat(DType::Float8E5M2Fnuz, 0x80).is_nan());
        assert_eq!(minifloat(DType::Float8E4M3Fnuz, 0x40), 1.0);
        assert_eq!(minifloat(DType::Float8E8M0, 127), 1.0);
        assert_eq!(minifloat(DType::Float4E2M1, 0x7), 6.0);
        assert_eq!(minifloat(DType::Float4E2M1, 0x1), 0.5);
        assert_eq!(minifloat(DType::Float4E2M1, 0xF), -6.0);
    }

    #[test]
    fn packed_codes_read_lsb_first() {
        assert_eq!(packed_code(&[0xE1, 0x03], 0, 4), Some(0x1));
        assert_eq!(packed_code(&[0xE1, 0x03], 1, 4), Some(0xE));
        assert_eq!(packed_code(&[0xE1, 0x03], 2, 4), Some(0x3));
        assert_eq!(packed_code(&[0xE1], 2, 4), None);
    }

    #[test]
    fn display_keeps_floats_recognisable() {
        let t = Tensor::from_elems(
            DType::Float,
            vec![4],
            vec![
                1.0f32.to_bits(),
                (-0.0f32).to_bits(),
                f32::NAN.to_bits(),
                0.1f32.to_bits(),
            ],
        )
        .unwrap();
        assert_eq!(display(&t, 0), "1.0");
        assert_eq!(display(&t, 1), "-0.0");
        assert_eq!(display(&t, 2), "NaN");
        assert_eq!(display(&t, 3), "0.1");
        let t = Tensor::from_elems(
            DType::Double,
            vec![2],
            vec![1.1e300f64.to_bits(), 2.5e-300f64.to_bits()],
        )
        .unwrap();
        assert_eq!(display(&t, 0), "1.1e300");
        assert_eq!(display(&t, 1), "2.5e-300");
        let t = Tensor::from_elems(DType::Float, vec![1], vec![1e20f32.to_bits()]).unwrap();
        assert_eq!(display(&t, 0), "1e20");
        let t = Tensor::from_elems(DType::String, vec![1], vec![b"a\"b".to_vec()]).unwrap();
        assert_eq!(display(&t, 0), "\"a\\\"b\"");
    }
}
