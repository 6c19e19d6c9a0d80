//! `TensorProto` -> [`Tensor`], following the storage rules of docs/semantics.md section 4 exactly.
//!
//! Nothing is allocated on the strength of what a file claims: the declared byte size is checked
//! against `--max-tensor-bytes` and against the bytes actually present before any buffer is made.

use super::external::{self, ExternalError};
use crate::pb::{tensor_proto::DataLocation, TensorProto};
use crate::tensor::{byte_len, numel, DType, Layout, Storage, Tensor};
use bytes::Bytes;
use std::path::Path;
use thiserror::Error;

/// Why a `TensorProto` could not become a tensor.
#[derive(Debug, Error)]
pub enum TensorError {
    /// `data_type` is 0 (UNDEFINED) or not an ONNX id.
    #[error("data_type {0} is not a known ONNX element type")]
    UnknownDType(i32),
    /// A dim is negative.
    #[error("dims {} contain a negative dimension", crate::tensor::shape_text(.dims))]
    NegativeDim {
        /// The dims as stored.
        dims: Vec<i64>,
    },
    /// The element count or byte size overflows.
    #[error("dims {} describe more elements than can be addressed", crate::tensor::shape_text(.dims))]
    Overflow {
        /// The dims as stored.
        dims: Vec<i64>,
    },
    /// The declared size exceeds the limit.
    #[error("{dtype} tensor of shape {} would take {bytes} bytes, more than the limit of {limit} bytes (--max-tensor-bytes)", crate::tensor::shape_text(.shape))]
    TooLarge {
        /// Element type.
        dtype: DType,
        /// Declared shape.
        shape: Vec<usize>,
        /// Bytes it would take.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// Chunked (`segment`) tensors are not implemented.
    #[error("segmented tensors (the `segment` field) are not supported")]
    Segment,
    /// More than one value field is set.
    #[error("more than one value field is set ({0}); exactly one may hold the data")]
    SeveralFields(String),
    /// No value field is set for a non-empty tensor.
    #[error("no data: {numel} elements declared but no value field is set")]
    NoData {
        /// Declared element count.
        numel: usize,
    },
    /// The data is in a typed field that is not the one for this dtype.
    #[error("{dtype} values must be stored in {expected}, not in {found}")]
    WrongField {
        /// Element type.
        dtype: DType,
        /// The field the dtype uses.
        expected: &'static str,
        /// The field that holds data.
        found: &'static str,
    },
    /// Strings may not be stored as raw bytes.
    #[error("string data must be stored in string_data, not in raw_data")]
    StringInRaw,
    /// The data has the wrong size.
    #[error(
        "{field} holds {actual} {unit}, but {dtype} of shape {} needs exactly {needed}",
        crate::tensor::shape_text(.shape)
    )]
    Size {
        /// The field.
        field: &'static str,
        /// Element type.
        dtype: DType,
        /// Declared shape.
        shape: Vec<usize>,
        /// What the shape needs.
        needed: usize,
        /// What is present.
        actual: usize,
        /// "bytes" or "entries".
        unit: &'static str,
    },
    /// A typed-field entry does not fit the element type.
    #[error("{field}[{index}] = {value} does not fit in {dtype}")]
    ValueRange {
        /// The field.
        field: &'static str,
        /// Position of the entry.
        index: usize,
        /// The entry.
        value: i128,
        /// Element type.
        dtype: DType,
    },
    /// External data could not be read safely.
    #[error("external data: {0}")]
    External(#[from] ExternalError),
    /// An unknown `data_location`.
    #[error("data_location {0} is not DEFAULT (0) or EXTERNAL (1)")]
    BadLocation(i32),
}

impl TensorError {
    /// Whether this is something valid that the tool does not implement (a skip, not an error).
    pub fn is_unsupported(&self) -> bool {
        matches!(self, TensorError::Segment)
    }
}

/// Limits and context for decoding tensors of one file.
#[derive(Clone, Copy, Debug)]
pub struct TensorContext<'a> {
    /// Directory of the file holding the tensor: external data must lie strictly inside it.
    pub base_dir: &'a Path,
    /// The largest tensor, in bytes, that may be created.
    pub max_bytes: usize,
}

/// Converts a decoded `TensorProto` into a tensor.
pub fn tensor_from_proto(
    proto: &TensorProto,
    ctx: &TensorContext<'_>,
) -> Result<Tensor, TensorError> {
    let dtype =
        DType::from_onnx(proto.data_type).ok_or(TensorError::UnknownDType(proto.data_type))?;
    let shape = proto
        .dims
        .iter()
        .map(|&d| usize::try_from(d))
        .collect::<Result<Vec<usize>, _>>()
        .map_err(|_| TensorError::NegativeDim {
            dims: proto.dims.clone(),
        })?;
    let overflow = || TensorError::Overflow {
        dims: proto.dims.clone(),
    };
    let n = numel(&shape).ok_or_else(overflow)?;
    let bytes = byte_len(dtype, n).ok_or_else(overflow)?;
    if bytes > ctx.max_bytes {
        return Err(TensorError::TooLarge {
            dtype,
            shape,
            bytes,
            limit: ctx.max_bytes,
        });
    }
    if proto.segment.is_some() {
        return Err(TensorError::Segment);
    }
    let location = proto.data_location;
    if location == DataLocation::External as i32 {
        let present = typed_fields(proto);
        if !proto.raw_data.is_empty() || !present.is_empty() {
            let mut names = vec!["external data"];
            if !proto.raw_data.is_empty() {
                names.push("raw_data");
            }
            names.extend(present.iter().map(|(name, _)| *name));
            return Err(TensorError::SeveralFields(names.join(", ")));
        }
        if dtype == DType::String {
            return Err(TensorError::StringInRaw);
        }
        let raw = external::read(&proto.external_data, ctx.base_dir, bytes)?;
        return from_raw(dtype, shape, n, &Bytes::from(raw), "external data");
    }
    if location != DataLocation::Default as i32 {
        return Err(TensorError::BadLocation(location));
    }

    let present = typed_fields(proto);
    match (proto.raw_data.is_empty(), present.as_slice()) {
        (false, []) => {
            if dtype == DType::String {
                return Err(TensorError::StringInRaw);
            }
            from_raw(dtype, shape, n, &proto.raw_data, "raw_data")
        }
        (true, []) => {
            if n == 0 {
                empty(dtype, shape)
            } else {
                Err(TensorError::NoData { numel: n })
            }
        }
        (true, [(field, _)]) => {
            let expected = typed_field_for(dtype);
            if *field != expected {
                return Err(TensorError::WrongField {
                    dtype,
                    expected,
                    found: field,
                });
            }
            from_typed(proto, dtype, shape, n)
        }
        (raw_empty, fields) => {
            let mut names: Vec<&str> = Vec::new();
            if !raw_empty {
                names.push("raw_data");
            }
            names.extend(fields.iter().map(|(name, _)| *name));
            Err(TensorError::SeveralFields(names.join(", ")))
        }
    }
}

/// The typed value fields that hold data, with their entry counts.
fn typed_fields(p: &TensorProto) -> Vec<(&'static str, usize)> {
    [
        ("float_data", p.float_data.len()),
        ("int32_data", p.int32_data.len()),
        ("string_data", p.string_data.len()),
        ("int64_data", p.int64_data.len()),
        ("double_data", p.double_data.len()),
        ("uint64_data", p.uint64_data.len()),
    ]
    .into_iter()
    .filter(|&(_, n)| n > 0)
    .collect()
}

/// The typed field a dtype's values live in.
pub(crate) fn typed_field_for(dtype: DType) -> &'static str {
    use DType::*;
    match dtype {
        Float | Complex64 => "float_data",
        Double | Complex128 => "double_data",
        Int64 => "int64_data",
        Uint32 | Uint64 => "uint64_data",
        String => "string_data",
        _ => "int32_data",
    }
}

fn empty(dtype: DType, shape: Vec<usize>) -> Result<Tensor, TensorError> {
    let storage = match dtype.layout() {
        Layout::Bytes(1) => Storage::W8(Vec::new()),
        Layout::Bytes(2) => Storage::W16(Vec::new()),
        Layout::Bytes(4) => Storage::W32(Vec::new()),
        Layout::Bytes(8) => Storage::W64(Vec::new()),
        Layout::Bytes(_) => Storage::W128(Vec::new()),
        Layout::Packed(_) => Storage::Packed(Vec::new()),
        Layout::String => Storage::Str(Vec::new()),
    };
    build(dtype, shape, storage)
}

fn build(dtype: DType, shape: Vec<usize>, storage: Storage) -> Result<Tensor, TensorError> {
    // The sizes were checked against the shape already; a failure here is a bug, reported as
    // a size error rather than a panic.
    Tensor::new(dtype, shape.clone(), storage).map_err(|_| TensorError::Size {
        field: "data",
        dtype,
        shape,
        needed: 0,
        actual: 0,
        unit: "elements",
    })
}

/// Decodes little-endian fixed-width or packed bytes (raw_data or external data).
fn from_raw(
    dtype: DType,
    shape: Vec<usize>,
    n: usize,
    raw: &Bytes,
    field: &'static str,
) -> Result<Tensor, TensorError> {
    let needed = byte_len(dtype, n).unwrap_or(usize::MAX);
    if raw.len() != needed {
        return Err(TensorError::Size {
            field,
            dtype,
            shape,
            needed,
            actual: raw.len(),
            unit: "bytes",
        });
    }
    if let Some(t) = shared_raw(dtype, &shape, raw) {
        return Ok(t);
    }
    let storage = match dtype.layout() {
        Layout::Bytes(1) if dtype == DType::Bool => {
            Storage::W8(raw.iter().map(|&b| u8::from(b != 0)).collect())
        }
        Layout::Bytes(1) => Storage::W8(raw.to_vec()),
        Layout::Bytes(2) => Storage::W16(
            raw.chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect(),
        ),
        Layout::Bytes(4) => Storage::W32(
            raw.chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        ),
        Layout::Bytes(8) => Storage::W64(
            raw.chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
                .collect(),
        ),
        Layout::Bytes(_) => Storage::W128(
            raw.chunks_exact(16)
                .map(|c| u128::from_le_bytes(c.try_into().unwrap_or_default()))
                .collect(),
        ),
        Layout::Packed(bits) => Storage::Packed(clear_padding(raw.to_vec(), n, bits)),
        Layout::String => return Err(TensorError::StringInRaw),
    };
    build(dtype, shape, storage)
}

/// A tensor that reads `raw` in place, sharing its buffer (a tensor file or a `.npy` array as
/// read), where the bytes already are the elements' words: a
/// little-endian machine, a fixed-width dtype, the bytes aligned to its width, and for bool only
/// the bytes 0 and 1 (others are read as true and stored as 1, which needs a copy).
pub(crate) fn shared_raw(dtype: DType, shape: &[usize], raw: &Bytes) -> Option<Tensor> {
    let Layout::Bytes(width) = dtype.layout() else {
        return None;
    };
    if cfg!(target_endian = "big")
        || raw.is_empty()
        || (raw.as_ptr() as usize) % width != 0
        || (dtype == DType::Bool && raw.iter().any(|&b| b > 1))
    {
        return None;
    }
    let owner: std::sync::Arc<dyn std::any::Any + Send + Sync> = std::sync::Arc::new(raw.clone());
    // SAFETY: `raw` holds `numel(shape) * width` bytes (checked by the caller) that a `Bytes`
    // never changes, and `owner` is a handle to the same buffer, which it keeps alive.
    unsafe { Tensor::from_shared(dtype, shape.to_vec(), raw.as_ptr(), owner) }.ok()
}

/// Zeroes the bits after the last packed element, so equal tensors have equal bytes.
fn clear_padding(mut bytes: Vec<u8>, n: usize, bits: u32) -> Vec<u8> {
    let used = (n * bits as usize) % 8;
    if used != 0 {
        if let Some(last) = bytes.last_mut() {
            *last &= (1u8 << used) - 1;
        }
    }
    bytes
}

/// Decodes the typed field of `dtype` (already known to be the one holding data).
fn from_typed(
    p: &TensorProto,
    dtype: DType,
    shape: Vec<usize>,
    n: usize,
) -> Result<Tensor, TensorError> {
    use DType::*;
    let field = typed_field_for(dtype);
    // Entries the field must have: complex types take two per element, packed types one per byte
    // (float6: one per element).
    let needed = match dtype {
        Complex64 | Complex128 => n.checked_mul(2),
        Int4 | Uint4 | Float4E2M1 => Some(n.div_ceil(2)),
        Int2 | Uint2 => Some(n.div_ceil(4)),
        _ => Some(n),
    }
    .unwrap_or(usize::MAX);
    let actual = match field {
        "float_data" => p.float_data.len(),
        "double_data" => p.double_data.len(),
        "int64_data" => p.int64_data.len(),
        "uint64_data" => p.uint64_data.len(),
        "string_data" => p.string_data.len(),
        _ => p.int32_data.len(),
    };
    if actual != needed {
        return Err(TensorError::Size {
            field,
            dtype,
            shape,
            needed,
            actual,
            unit: "entries",
        });
    }
    let range = |index: usize, value: i128| TensorError::ValueRange {
        field,
        index,
        value,
        dtype,
    };
    // Narrows int32_data entries into `lo..=hi`, failing on the first that does not fit.
    let narrow = |lo: i32, hi: i32| -> Result<Vec<i32>, TensorError> {
        p.int32_data
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                if (lo..=hi).contains(&v) {
                    Ok(v)
                } else {
                    Err(range(i, i128::from(v)))
                }
            })
            .collect()
    };
    let storage = match dtype {
        Float => Storage::W32(p.float_data.iter().map(|v| v.to_bits()).collect()),
        Complex64 => Storage::W64(
            p.float_data
                .chunks_exact(2)
                .map(|c| u64::from(c[0].to_bits()) | (u64::from(c[1].to_bits()) << 32))
                .collect(),
        ),
        Double => Storage::W64(p.double_data.iter().map(|v| v.to_bits()).collect()),
        Complex128 => Storage::W128(
            p.double_data
                .chunks_exact(2)
                .map(|c| u128::from(c[0].to_bits()) | (u128::from(c[1].to_bits()) << 64))
                .collect(),
        ),
        Int64 => Storage::W64(p.int64_data.iter().map(|&v| v as u64).collect()),
        Uint64 => Storage::W64(p.uint64_data.clone()),
        Uint32 => Storage::W32(
            p.uint64_data
                .iter()
                .enumerate()
                .map(|(i, &v)| u32::try_from(v).map_err(|_| range(i, i128::from(v))))
                .collect::<Result<_, _>>()?,
        ),
        String => Storage::Str(p.string_data.clone()),
        Int32 => Storage::W32(p.int32_data.iter().map(|&v| v as u32).collect()),
        Int16 => Storage::W16(
            narrow(-32768, 32767)?
                .into_iter()
                .map(|v| v as u16)
                .collect(),
        ),
        Uint16 | Float16 | Bfloat16 => {
            Storage::W16(narrow(0, 0xFFFF)?.into_iter().map(|v| v as u16).collect())
        }
        Int8 => Storage::W8(narrow(-128, 127)?.into_iter().map(|v| v as u8).collect()),
        Uint8 | Float8E4M3Fn | Float8E4M3Fnuz | Float8E5M2 | Float8E5M2Fnuz | Float8E8M0 => {
            Storage::W8(narrow(0, 255)?.into_iter().map(|v| v as u8).collect())
        }
        // Any nonzero entry is true (as numpy_helper reads it).
        Bool => Storage::W8(p.int32_data.iter().map(|&v| u8::from(v != 0)).collect()),
        Int4 | Uint4 | Float4E2M1 | Int2 | Uint2 => {
            let bits = match dtype.layout() {
                Layout::Packed(b) => b,
                _ => 4,
            };
            let packed = narrow(0, 255)?.into_iter().map(|v| v as u8).collect();
            Storage::Packed(clear_padding(packed, n, bits))
        }
        Float6E2M3 | Float6E3M2 => {
            let values = narrow(0, 63)?;
            Storage::Packed(pack_bits(&values, 6))
        }
    };
    build(dtype, shape, storage)
}

/// Packs `bits`-wide values least-significant bits first.
fn pack_bits(values: &[i32], bits: u32) -> Vec<u8> {
    let total = values.len() * bits as usize;
    let mut out = vec![0u8; total.div_ceil(8)];
    for (i, &v) in values.iter().enumerate() {
        for b in 0..bits as usize {
            if (v >> b) & 1 == 1 {
                let pos = i * bits as usize + b;
                out[pos / 8] |= 1 << (pos % 8);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> TensorContext<'static> {
        TensorContext {
            base_dir: Path::new("/nonexistent"),
            max_bytes: 1 << 20,
        }
    }

    fn proto(dtype: i32, dims: &[i64]) -> TensorProto {
        TensorProto {
            data_type: dtype,
            dims: dims.to_vec(),
            ..Default::default()
        }
    }

    #[test]
    fn raw_floats_decode_little_endian() {
        let mut p = proto(1, &[2]);
        p.raw_data = ([1.0f32.to_le_bytes(), (-2.5f32).to_le_bytes()].concat()).into();
        let t = tensor_from_proto(&p, &ctx()).unwrap();
        assert_eq!(
            t.elems::<u32>().unwrap(),
            &[1.0f32.to_bits(), (-2.5f32).to_bits()]
        );
    }

    #[test]
    fn raw_data_of_the_wrong_length_is_rejected_both_ways() {
        let mut p = proto(1, &[2]);
        p.raw_data = (vec![0; 7]).into();
        assert!(matches!(
            tensor_from_proto(&p, &ctx()),
            Err(TensorError::Size {
                needed: 8,
                actual: 7,
                ..
            })
        ));
        p.raw_data = (vec![0; 12]).into();
        assert!(matches!(
            tensor_from_proto(&p, &ctx()),
            Err(TensorError::Size { .. })
        ));
    }

    #[test]
    fn typed_fields_must_match_the_dtype() {
        let mut p = proto(1, &[1]);
        p.int32_data = vec![1];
        assert!(matches!(
            tensor_from_proto(&p, &ctx()),
            Err(TensorError::WrongField { .. })
        ));
        let mut p = proto(12, &[1]);
        p.int32_data = vec![1];
        let e = tensor_from_proto(&p, &ctx()).unwrap_err().to_string();
        assert!(e.contains("uint64_data"), "{e}");
    }

    #[test]
    fn both_raw_and_typed_data_is_rejected() {
        let mut p = proto(1, &[1]);
        p.float_data = vec![1.0];
        p.raw_data = (1.0f32.to_le_bytes().to_vec()).into();
        assert!(matches!(
            tensor_from_proto(&p, &ctx()),
            Err(TensorError::SeveralFields(_))
        ));
    }

    #[test]
    fn unknown_and_undefined_dtypes_are_rejected() {
        assert!(matches!(
            tensor_from_proto(&proto(99, &[]), &ctx()),
            Err(TensorError::UnknownDType(99))
        ));
        assert!(matches!(
            tensor_from_proto(&proto(0, &[]), &ctx()),
            Err(TensorError::UnknownDType(0))
        ));
    }

    #[test]
    fn negative_and_overflowing_dims_are_rejected_before_allocating() {
        assert!(matches!(
            tensor_from_proto(&proto(1, &[-1]), &ctx()),
            Err(TensorError::NegativeDim { .. })
        ));
        let huge = proto(1, &[i64::MAX, i64::MAX]);
        assert!(matches!(
            tensor_from_proto(&huge, &ctx()),
            Err(TensorError::Overflow { .. })
        ));
        let tb = proto(1, &[1 << 40]);
        assert!(matches!(
            tensor_from_proto(&tb, &ctx()),
            Err(TensorError::TooLarge { .. })
        ));
    }

    #[test]
    fn int8_entries_out_of_range_are_malformed() {
        let mut p = proto(3, &[2]);
        p.int32_data = vec![5, 300];
        assert!(matches!(
            tensor_from_proto(&p, &ctx()),
            Err(TensorError::ValueRange {
                index: 1,
                value: 300,
                ..
            })
        ));
    }

    #[test]
    fn float16_bit_patterns_come_from_int32_data() {
        let mut p = proto(10, &[2]);
        p.int32_data = vec![0x3C00, 0xC000];
        let t = tensor_from_proto(&p, &ctx()).unwrap();
        assert_eq!(t.elems::<u16>().unwrap(), &[0x3C00, 0xC000]);
    }

    #[test]
    fn bools_normalise_any_nonzero_to_true() {
        let mut p = proto(9, &[3]);
        p.raw_data = (vec![0, 2, 1]).into();
        let t = tensor_from_proto(&p, &ctx()).unwrap();
        assert_eq!(t.elems::<u8>().unwrap(), &[0, 1, 1]);
    }

    #[test]
    fn strings_in_raw_data_are_rejected() {
        let mut p = proto(8, &[1]);
        p.raw_data = (b"abc".to_vec()).into();
        assert!(matches!(
            tensor_from_proto(&p, &ctx()),
            Err(TensorError::StringInRaw)
        ));
    }

    #[test]
    fn empty_tensors_need_no_data_field() {
        let t = tensor_from_proto(&proto(1, &[0, 3]), &ctx()).unwrap();
        assert_eq!(t.shape(), &[0, 3]);
        assert!(matches!(
            tensor_from_proto(&proto(1, &[]), &ctx()),
            Err(TensorError::NoData { numel: 1 })
        ));
    }

    #[test]
    fn complex64_takes_two_floats_per_element() {
        let mut p = proto(14, &[1]);
        p.float_data = vec![1.0, -1.0];
        let t = tensor_from_proto(&p, &ctx()).unwrap();
        let w = t.elems::<u64>().unwrap()[0];
        assert_eq!(w as u32, 1.0f32.to_bits());
        assert_eq!((w >> 32) as u32, (-1.0f32).to_bits());
    }

    #[test]
    fn int4_packs_two_per_entry_and_clears_padding() {
        let mut p = proto(22, &[3]);
        p.int32_data = vec![0xE1, 0xF3];
        let t = tensor_from_proto(&p, &ctx()).unwrap();
        assert_eq!(t.storage(), &Storage::Packed(vec![0xE1, 0x03]));
    }

    #[test]
    fn float6_packs_four_values_into_three_bytes() {
        assert_eq!(pack_bits(&[63, 0, 0, 63], 6), vec![0x3F, 0x00, 0xFC]);
    }
}
