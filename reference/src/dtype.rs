//! The element types, by their ONNX `TensorProto.DataType` ids.

use std::fmt;

/// An element type. The ids are ONNX's `TensorProto.DataType` (1-26); the two float6 types,
/// which ONNX does not define, follow as 27 and 28, as the tool numbers them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum DType {
    Float,
    Uint8,
    Int8,
    Uint16,
    Int16,
    Int32,
    Int64,
    String,
    Bool,
    Float16,
    Double,
    Uint32,
    Uint64,
    Complex64,
    Complex128,
    Bfloat16,
    Float8E4M3Fn,
    Float8E4M3Fnuz,
    Float8E5M2,
    Float8E5M2Fnuz,
    Uint4,
    Int4,
    Float4E2M1,
    Float8E8M0,
    Uint2,
    Int2,
    Float6E2M3,
    Float6E3M2,
}

/// How the elements of a dtype are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// One element per `n` bytes.
    Bytes(usize),
    /// Several elements per byte, `bits` each, least-significant bits first.
    Packed(u32),
    /// Byte strings.
    String,
}

impl DType {
    /// Every dtype, in id order from 1.
    pub const ALL: [DType; 28] = {
        use DType::*;
        [
            Float,
            Uint8,
            Int8,
            Uint16,
            Int16,
            Int32,
            Int64,
            String,
            Bool,
            Float16,
            Double,
            Uint32,
            Uint64,
            Complex64,
            Complex128,
            Bfloat16,
            Float8E4M3Fn,
            Float8E4M3Fnuz,
            Float8E5M2,
            Float8E5M2Fnuz,
            Uint4,
            Int4,
            Float4E2M1,
            Float8E8M0,
            Uint2,
            Int2,
            Float6E2M3,
            Float6E3M2,
        ]
    };

    /// The dtype with id `id` (`None` for 0, UNDEFINED, and unknown ids).
    pub fn from_onnx_id(id: i32) -> Option<DType> {
        let i = usize::try_from(id).ok()?.checked_sub(1)?;
        Self::ALL.get(i).copied()
    }

    /// The dtype's id.
    pub fn onnx_id(self) -> i32 {
        Self::ALL
            .iter()
            .position(|&d| d == self)
            .map_or(0, |i| i as i32 + 1)
    }

    /// The lower-case ONNX name, as in `tensor(float16)`.
    pub fn name(self) -> &'static str {
        use DType::*;
        match self {
            Float => "float",
            Uint8 => "uint8",
            Int8 => "int8",
            Uint16 => "uint16",
            Int16 => "int16",
            Int32 => "int32",
            Int64 => "int64",
            String => "string",
            Bool => "bool",
            Float16 => "float16",
            Double => "double",
            Uint32 => "uint32",
            Uint64 => "uint64",
            Complex64 => "complex64",
            Complex128 => "complex128",
            Bfloat16 => "bfloat16",
            Float8E4M3Fn => "float8e4m3fn",
            Float8E4M3Fnuz => "float8e4m3fnuz",
            Float8E5M2 => "float8e5m2",
            Float8E5M2Fnuz => "float8e5m2fnuz",
            Uint4 => "uint4",
            Int4 => "int4",
            Float4E2M1 => "float4e2m1",
            Float8E8M0 => "float8e8m0",
            Uint2 => "uint2",
            Int2 => "int2",
            Float6E2M3 => "float6e2m3",
            Float6E3M2 => "float6e3m2",
        }
    }

    /// How the elements are stored (the ONNX storage rules).
    pub fn layout(self) -> Layout {
        use DType::*;
        match self {
            Uint8 | Int8 | Bool | Float8E4M3Fn | Float8E4M3Fnuz | Float8E5M2 | Float8E5M2Fnuz
            | Float8E8M0 => Layout::Bytes(1),
            Uint16 | Int16 | Float16 | Bfloat16 => Layout::Bytes(2),
            Float | Int32 | Uint32 => Layout::Bytes(4),
            Double | Int64 | Uint64 | Complex64 => Layout::Bytes(8),
            Complex128 => Layout::Bytes(16),
            Uint4 | Int4 | Float4E2M1 => Layout::Packed(4),
            Uint2 | Int2 => Layout::Packed(2),
            Float6E2M3 | Float6E3M2 => Layout::Packed(6),
            String => Layout::String,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_follow_the_onnx_data_type_enum() {
        // onnx.proto3, TensorProto.DataType.
        assert_eq!(DType::from_onnx_id(1), Some(DType::Float));
        assert_eq!(DType::from_onnx_id(7), Some(DType::Int64));
        assert_eq!(DType::from_onnx_id(8), Some(DType::String));
        assert_eq!(DType::from_onnx_id(16), Some(DType::Bfloat16));
        assert_eq!(DType::from_onnx_id(22), Some(DType::Int4));
        assert_eq!(DType::from_onnx_id(26), Some(DType::Int2));
        assert_eq!(DType::from_onnx_id(0), None);
        for d in DType::ALL {
            assert_eq!(DType::from_onnx_id(d.onnx_id()), Some(d));
        }
    }
}
