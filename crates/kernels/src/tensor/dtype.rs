//! Element types: the ONNX `TensorProto.DataType` ids and what each means for storage.

use std::fmt;

/// Every element type of ONNX IR version 14 (`TensorProto.DataType`, without UNDEFINED).
///
/// ```
/// use onnx_idx_check_kernels::DType;
///
/// assert_eq!(DType::from_onnx(10), Some(DType::Float16));
/// assert_eq!(DType::Float16.name(), "float16");
/// assert_eq!(DType::Bfloat16.to_string(), "bfloat16");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[allow(missing_docs)] // the variant names are the ONNX names
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

/// How the elements of a dtype are laid out in memory.
///
/// ```
/// use onnx_idx_check_kernels::tensor::{DType, Layout};
///
/// assert_eq!(DType::Complex64.layout(), Layout::Bytes(8));
/// assert_eq!(DType::Int4.layout(), Layout::Packed(4));
/// assert_eq!(DType::String.layout(), Layout::String);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// One element per `n` bytes, little-endian.
    Bytes(usize),
    /// Several elements per byte, packed least-significant bits first (`bits` per element).
    Packed(u32),
    /// Variable-length byte strings.
    String,
}

/// The broad class of a dtype, for arithmetic and for comparison.
///
/// ```
/// use onnx_idx_check_kernels::tensor::{Class, DType};
///
/// assert_eq!(DType::Float8E5M2.class(), Class::Float);
/// assert_eq!(DType::Uint4.class(), Class::Unsigned);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// bool.
    Bool,
    /// Signed integers (including int4 and int2).
    Signed,
    /// Unsigned integers (including uint4 and uint2).
    Unsigned,
    /// IEEE-like floating point types, including the float8/6/4 formats.
    Float,
    /// complex64 and complex128.
    Complex,
    /// string.
    String,
}

impl DType {
    /// Every dtype, in ONNX id order.
    ///
    /// ```
    /// use onnx_idx_check_kernels::DType;
    ///
    /// assert_eq!(DType::ALL[0], DType::Float);
    /// assert!(DType::ALL.iter().enumerate().all(|(i, d)| d.onnx_id() == i as i32 + 1));
    /// ```
    pub const ALL: [DType; 28] = [
        DType::Float,
        DType::Uint8,
        DType::Int8,
        DType::Uint16,
        DType::Int16,
        DType::Int32,
        DType::Int64,
        DType::String,
        DType::Bool,
        DType::Float16,
        DType::Double,
        DType::Uint32,
        DType::Uint64,
        DType::Complex64,
        DType::Complex128,
        DType::Bfloat16,
        DType::Float8E4M3Fn,
        DType::Float8E4M3Fnuz,
        DType::Float8E5M2,
        DType::Float8E5M2Fnuz,
        DType::Uint4,
        DType::Int4,
        DType::Float4E2M1,
        DType::Float8E8M0,
        DType::Uint2,
        DType::Int2,
        DType::Float6E2M3,
        DType::Float6E3M2,
    ];

    /// The dtype with ONNX id `id`, or `None` for UNDEFINED (0) and unknown ids.
    ///
    /// ```
    /// use onnx_idx_check_kernels::DType;
    ///
    /// assert_eq!(DType::from_onnx(7), Some(DType::Int64));
    /// assert_eq!(DType::from_onnx(0), None); // UNDEFINED
    /// assert_eq!(DType::from_onnx(99), None);
    /// ```
    pub fn from_onnx(id: i32) -> Option<DType> {
        usize::try_from(id)
            .ok()
            .and_then(|i| i.checked_sub(1))
            .and_then(|i| Self::ALL.get(i).copied())
    }

    /// The ONNX `TensorProto.DataType` id.
    ///
    /// ```
    /// use onnx_idx_check_kernels::DType;
    ///
    /// assert_eq!(DType::Float.onnx_id(), 1);
    /// assert_eq!(DType::Bfloat16.onnx_id(), 16);
    /// ```
    pub fn onnx_id(self) -> i32 {
        // ALL is in id order starting at 1, and has 28 entries.
        Self::ALL
            .iter()
            .position(|&d| d == self)
            .map_or(0, |i| i as i32 + 1)
    }

    /// The lower-case ONNX name, as in `tensor(float16)`.
    ///
    /// ```
    /// use onnx_idx_check_kernels::DType;
    ///
    /// assert_eq!(DType::Float8E4M3Fn.name(), "float8e4m3fn");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            DType::Float => "float",
            DType::Uint8 => "uint8",
            DType::Int8 => "int8",
            DType::Uint16 => "uint16",
            DType::Int16 => "int16",
            DType::Int32 => "int32",
            DType::Int64 => "int64",
            DType::String => "string",
            DType::Bool => "bool",
            DType::Float16 => "float16",
            DType::Double => "double",
            DType::Uint32 => "uint32",
            DType::Uint64 => "uint64",
            DType::Complex64 => "complex64",
            DType::Complex128 => "complex128",
            DType::Bfloat16 => "bfloat16",
            DType::Float8E4M3Fn => "float8e4m3fn",
            DType::Float8E4M3Fnuz => "float8e4m3fnuz",
            DType::Float8E5M2 => "float8e5m2",
            DType::Float8E5M2Fnuz => "float8e5m2fnuz",
            DType::Uint4 => "uint4",
            DType::Int4 => "int4",
            DType::Float4E2M1 => "float4e2m1",
            DType::Float8E8M0 => "float8e8m0",
            DType::Uint2 => "uint2",
            DType::Int2 => "int2",
            DType::Float6E2M3 => "float6e2m3",
            DType::Float6E3M2 => "float6e3m2",
        }
    }

    /// How elements of this dtype are stored.
    ///
    /// ```
    /// use onnx_idx_check_kernels::tensor::{DType, Layout};
    ///
    /// assert_eq!(DType::Bool.layout(), Layout::Bytes(1));
    /// assert_eq!(DType::Float6E2M3.layout(), Layout::Packed(6));
    /// ```
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

    /// The arithmetic class.
    ///
    /// ```
    /// use onnx_idx_check_kernels::tensor::{Class, DType};
    ///
    /// assert_eq!(DType::Int2.class(), Class::Signed);
    /// assert_eq!(DType::Complex128.class(), Class::Complex);
    /// ```
    pub fn class(self) -> Class {
        use DType::*;
        match self {
            Bool => Class::Bool,
            Int8 | Int16 | Int32 | Int64 | Int4 | Int2 => Class::Signed,
            Uint8 | Uint16 | Uint32 | Uint64 | Uint4 | Uint2 => Class::Unsigned,
            Complex64 | Complex128 => Class::Complex,
            String => Class::String,
            _ => Class::Float,
        }
    }

    /// Bytes per element for fixed-width types, `None` for packed and string types.
    ///
    /// ```
    /// use onnx_idx_check_kernels::DType;
    ///
    /// assert_eq!(DType::Complex128.byte_width(), Some(16));
    /// assert_eq!(DType::Uint4.byte_width(), None);
    /// assert_eq!(DType::String.byte_width(), None);
    /// ```
    pub fn byte_width(self) -> Option<usize> {
        match self.layout() {
            Layout::Bytes(n) => Some(n),
            _ => None,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of dtypes, as a bit mask over ONNX ids; used for operator type constraints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct DTypeSet(u64);

impl DTypeSet {
    /// The empty set.
    pub const EMPTY: DTypeSet = DTypeSet(0);

    /// The set holding exactly `dtypes`.
    pub const fn of(dtypes: &[DType]) -> DTypeSet {
        let mut bits = 0u64;
        let mut i = 0;
        while i < dtypes.len() {
            bits |= 1 << (dtypes[i] as u32);
            i += 1;
        }
        DTypeSet(bits)
    }

    /// This set plus `other`.
    pub const fn with(self, other: DTypeSet) -> DTypeSet {
        DTypeSet(self.0 | other.0)
    }

    /// Whether `dtype` is in the set.
    pub fn contains(self, dtype: DType) -> bool {
        self.0 & (1 << (dtype as u32)) != 0
    }

    /// The members, in ONNX id order.
    pub fn iter(self) -> impl Iterator<Item = DType> {
        DType::ALL.into_iter().filter(move |&d| self.contains(d))
    }
}

/// The eight integer types, signed and unsigned ("any integer type").
pub const INTEGERS: DTypeSet = DTypeSet::of(&[
    DType::Int8,
    DType::Int16,
    DType::Int32,
    DType::Int64,
    DType::Uint8,
    DType::Uint16,
    DType::Uint32,
    DType::Uint64,
]);

/// The fifteen types most ops accept ("classic15" in docs/semantics.md section 3).
pub const CLASSIC15: DTypeSet = DTypeSet::of(&[
    DType::Bool,
    DType::Int8,
    DType::Int16,
    DType::Int32,
    DType::Int64,
    DType::Uint8,
    DType::Uint16,
    DType::Uint32,
    DType::Uint64,
    DType::Float16,
    DType::Float,
    DType::Double,
    DType::String,
    DType::Complex64,
    DType::Complex128,
]);

/// The classic fifteen plus bfloat16, as opset 13 widened most ops.
pub const CLASSIC15_BF16: DTypeSet = CLASSIC15.with(DTypeSet::of(&[DType::Bfloat16]));

/// int32 and int64, the usual index types.
pub const INDEX32_64: DTypeSet = DTypeSet::of(&[DType::Int32, DType::Int64]);

/// int64 only (GatherND, ScatterND, TensorScatter's write_indices).
pub const INDEX64: DTypeSet = DTypeSet::of(&[DType::Int64]);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn onnx_ids_round_trip_and_match_the_schema() {
        for id in 1..=28 {
            let d = DType::from_onnx(id).unwrap();
            assert_eq!(d.onnx_id(), id);
        }
        assert_eq!(DType::from_onnx(0), None);
        assert_eq!(DType::from_onnx(29), None);
        assert_eq!(DType::from_onnx(-1), None);
        assert_eq!(DType::from_onnx(99), None);
        // A few ids checked against onnx.proto's DataType enum.
        assert_eq!(DType::from_onnx(1), Some(DType::Float));
        assert_eq!(DType::from_onnx(8), Some(DType::String));
        assert_eq!(DType::from_onnx(12), Some(DType::Uint32));
        assert_eq!(DType::from_onnx(16), Some(DType::Bfloat16));
        assert_eq!(DType::from_onnx(22), Some(DType::Int4));
        assert_eq!(DType::from_onnx(24), Some(DType::Float8E8M0));
        assert_eq!(DType::from_onnx(28), Some(DType::Float6E3M2));
    }

    #[test]
    fn classic15_has_fifteen_members_and_no_bfloat16() {
        assert_eq!(CLASSIC15.iter().count(), 15);
        assert!(!CLASSIC15.contains(DType::Bfloat16));
        assert!(CLASSIC15_BF16.contains(DType::Bfloat16));
        assert!(!CLASSIC15_BF16.contains(DType::Float8E4M3Fn));
    }
}
