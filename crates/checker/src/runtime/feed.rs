//! The inputs of a request as `.npy` files (version 1.0), so that a worker needs numpy and not an
//! ONNX protobuf decoder. Types numpy lacks are written as their bit patterns (the table in
//! `docs/runtime-protocol.md`).

use crate::tensor::{value, DType, Layout, Storage, Tensor};
use std::io::Write;
use std::path::Path;

/// Writes `t` to `path` as a `.npy` file.
pub(crate) fn write_npy(path: &Path, t: &Tensor) -> std::io::Result<()> {
    let (descr, body) = encode(t);
    let shape = match t.shape() {
        [] => "()".to_string(),
        [n] => format!("({n},)"),
        dims => format!(
            "({})",
            dims.iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // The header ends in a newline and pads magic + length + header to a multiple of 64.
    let unpadded = 10 + header.len() + 1;
    header.push_str(&" ".repeat((64 - unpadded % 64) % 64));
    header.push('\n');
    let len = u16::try_from(header.len())
        .map_err(|_| std::io::Error::other("a shape too long for a .npy 1.0 header"))?;
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    f.write_all(b"\x93NUMPY\x01\x00")?;
    f.write_all(&len.to_le_bytes())?;
    f.write_all(header.as_bytes())?;
    f.write_all(&body)?;
    f.flush()
}

/// numpy's type string and the little-endian body of `t`.
fn encode(t: &Tensor) -> (String, Vec<u8>) {
    let d = t.dtype();
    match t.storage() {
        Storage::Str(strings) => strings_body(strings),
        Storage::Packed(bytes) => {
            let Layout::Packed(bits) = d.layout() else {
                unreachable!("packed storage holds a packed dtype")
            };
            let signed = matches!(d, DType::Int4 | DType::Int2);
            let body = (0..t.numel())
                .map(|i| {
                    let code = value::packed_code(bytes, i, bits).unwrap_or(0);
                    if signed && code >> (bits - 1) == 1 {
                        // Sign-extend the two's complement code into an int8.
                        (code | (u32::MAX << bits)) as u8
                    } else {
                        code as u8
                    }
                })
                .collect();
            (if signed { "|i1" } else { "|u1" }.to_string(), body)
        }
        Storage::W8(v) => (descr(d).to_string(), v.clone()),
        Storage::W16(v) => (descr(d).to_string(), bytemuck::cast_slice(v).to_vec()),
        Storage::W32(v) => (descr(d).to_string(), bytemuck::cast_slice(v).to_vec()),
        Storage::W64(v) => (descr(d).to_string(), bytemuck::cast_slice(v).to_vec()),
        Storage::W128(v) => (descr(d).to_string(), bytemuck::cast_slice(v).to_vec()),
    }
}

/// numpy's type string for a fixed-width dtype (bit patterns for those numpy lacks).
fn descr(d: DType) -> &'static str {
    match d {
        DType::Float => "<f4",
        DType::Double => "<f8",
        DType::Float16 => "<f2",
        DType::Int8 => "|i1",
        DType::Int16 => "<i2",
        DType::Int32 => "<i4",
        DType::Int64 => "<i8",
        DType::Uint8 => "|u1",
        DType::Uint16 | DType::Bfloat16 => "<u2",
        DType::Uint32 => "<u4",
        DType::Uint64 => "<u8",
        DType::Bool => "|b1",
        DType::Complex64 => "<c8",
        DType::Complex128 => "<c16",
        // The float8 formats; the packed and string types never reach here.
        _ => "|u1",
    }
}

/// `<U` (UTF-32) when every string is UTF-8, else `|S` bytes; padded to the longest.
fn strings_body(strings: &[Vec<u8>]) -> (String, Vec<u8>) {
    let texts: Option<Vec<&str>> = strings
        .iter()
        .map(|s| std::str::from_utf8(s).ok())
        .collect();
    match texts {
        Some(texts) => {
            let width = texts
                .iter()
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
                .max(1);
            let mut body = Vec::with_capacity(texts.len() * width * 4);
            for s in texts {
                let n = s.chars().count();
                for c in s.chars() {
                    body.extend_from_slice(&u32::from(c).to_le_bytes());
                }
                body.resize(body.len() + (width - n) * 4, 0);
            }
            (format!("<U{width}"), body)
        }
        None => {
            let width = strings.iter().map(Vec::len).max().unwrap_or(0).max(1);
            let mut body = Vec::with_capacity(strings.len() * width);
            for s in strings {
                body.extend_from_slice(s);
                body.resize(body.len() + width - s.len(), 0);
            }
            (format!("|S{width}"), body)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The file's header dict and body.
    fn written(t: &Tensor) -> (String, Vec<u8>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.npy");
        write_npy(&path, t).unwrap();
        let bytes = std::fs::read(path).unwrap();
        assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
        let len = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
        assert_eq!((10 + len) % 64, 0, "numpy aligns the data to 64 bytes");
        let header = String::from_utf8(bytes[10..10 + len].to_vec()).unwrap();
        assert!(header.ends_with('\n'));
        (header.trim_end().to_string(), bytes[10 + len..].to_vec())
    }

    #[test]
    fn floats_are_little_endian_f4_with_the_shape() {
        let t = Tensor::from_elems(
            DType::Float,
            vec![2, 1],
            vec![1.5f32.to_bits(), (-2.0f32).to_bits()],
        )
        .unwrap();
        let (h, body) = written(&t);
        assert_eq!(
            h,
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1), }"
        );
        assert_eq!(body, [0, 0, 0xc0, 0x3f, 0, 0, 0, 0xc0]);
    }

    #[test]
    fn a_scalar_and_a_vector_have_numpy_s_tuple_forms() {
        let s = Tensor::from_elems(DType::Int64, vec![], vec![7u64]).unwrap();
        assert!(written(&s).0.contains("'shape': ()"));
        let v = Tensor::from_elems(DType::Int32, vec![3], vec![1u32, 2, 3]).unwrap();
        assert!(written(&v).0.contains("'shape': (3,)"));
    }

    #[test]
    fn bfloat16_is_its_bits_as_u2_and_int4_one_signed_byte_each() {
        let b = Tensor::new(DType::Bfloat16, vec![1], Storage::W16(vec![0x3f80])).unwrap();
        let (h, body) = written(&b);
        assert!(h.contains("'<u2'"));
        assert_eq!(body, [0x80, 0x3f]);
        // int4 codes 0x7 and 0x9 (= -7), packed low nibble first.
        let i = Tensor::new(DType::Int4, vec![2], Storage::Packed(vec![0x97])).unwrap();
        let (h, body) = written(&i);
        assert!(h.contains("'|i1'"));
        assert_eq!(body, [7, (-7i8) as u8]);
    }

    #[test]
    fn strings_are_utf32_unless_one_is_not_utf8() {
        let s = Tensor::new(
            DType::String,
            vec![2],
            Storage::Str(vec![b"ab".to_vec(), "\u{e9}".as_bytes().to_vec()]),
        )
        .unwrap();
        let (h, body) = written(&s);
        assert!(h.contains("'<U2'"));
        assert_eq!(
            body,
            [b'a', 0, 0, 0, b'b', 0, 0, 0, 0xe9, 0, 0, 0, 0, 0, 0, 0]
        );
        let raw = Tensor::new(DType::String, vec![1], Storage::Str(vec![vec![0xff]])).unwrap();
        let (h, body) = written(&raw);
        assert!(h.contains("'|S1'"));
        assert_eq!(body, [0xff]);
    }
}
