//! Element storage keyed by width, and the [`Elem`] trait that lets one kernel serve all widths.

use super::{DType, Layout};

/// The elements of a tensor. Fixed-width values are kept as little-endian words of their width
/// (an `f32` is its bit pattern in a `u32`), so data movement is the same code for every type.
///
/// ```
/// use onnx_idx_check_kernels::tensor::{DType, Storage, Tensor};
///
/// // int64 and double share 64-bit words; the dtype says what the bits mean.
/// let t = Tensor::new(DType::Int64, vec![2], Storage::W64(vec![5, u64::MAX]))?;
/// assert_eq!(t.to_vec::<i64>().unwrap(), [5, -1]);
/// # Ok::<(), onnx_idx_check_kernels::ShapeError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Storage {
    /// 1-byte elements: uint8, int8, bool (0 or 1), the float8 formats.
    W8(Vec<u8>),
    /// 2-byte elements: uint16, int16, float16, bfloat16.
    W16(Vec<u16>),
    /// 4-byte elements: float, int32, uint32.
    W32(Vec<u32>),
    /// 8-byte elements: double, int64, uint64, complex64 (real part in the low half).
    W64(Vec<u64>),
    /// 16-byte elements: complex128 (real part in the low half).
    W128(Vec<u128>),
    /// Sub-byte types (int4, uint4, float4e2m1, int2, uint2, float6): packed bytes, first element
    /// in the least significant bits, unused high bits of the last byte zero.
    Packed(Vec<u8>),
    /// Strings, as bytes (ONNX does not guarantee UTF-8).
    Str(Vec<Vec<u8>>),
}

impl Storage {
    /// Whether this variant is the one `dtype` is stored in.
    pub(crate) fn fits(&self, dtype: DType) -> bool {
        matches!(
            (self, dtype.layout()),
            (Storage::W8(_), Layout::Bytes(1))
                | (Storage::W16(_), Layout::Bytes(2))
                | (Storage::W32(_), Layout::Bytes(4))
                | (Storage::W64(_), Layout::Bytes(8))
                | (Storage::W128(_), Layout::Bytes(16))
                | (Storage::Packed(_), Layout::Packed(_))
                | (Storage::Str(_), Layout::String)
        )
    }

    /// Elements held (bytes for packed storage).
    ///
    /// ```
    /// use onnx_idx_check_kernels::tensor::Storage;
    ///
    /// assert_eq!(Storage::W16(vec![1, 2, 3]).len(), 3);
    /// // Packed storage counts bytes: five int4 elements take three.
    /// assert_eq!(Storage::Packed(vec![0; 3]).len(), 3);
    /// ```
    pub fn len(&self) -> usize {
        match self {
            Storage::W8(v) | Storage::Packed(v) => v.len(),
            Storage::W16(v) => v.len(),
            Storage::W32(v) => v.len(),
            Storage::W64(v) => v.len(),
            Storage::W128(v) => v.len(),
            Storage::Str(v) => v.len(),
        }
    }

    /// Whether there are no elements.
    ///
    /// ```
    /// use onnx_idx_check_kernels::tensor::Storage;
    ///
    /// assert!(Storage::Str(vec![]).is_empty());
    /// assert!(!Storage::W8(vec![0]).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of fixed-width data (for strings: one byte per element, a lower bound).
    ///
    /// ```
    /// use onnx_idx_check_kernels::tensor::Storage;
    ///
    /// assert_eq!(Storage::W64(vec![0; 2]).byte_size(), 16);
    /// assert_eq!(Storage::W128(vec![0]).byte_size(), 16);
    /// ```
    pub fn byte_size(&self) -> usize {
        match self {
            Storage::W8(v) | Storage::Packed(v) => v.len(),
            Storage::W16(v) => v.len() * 2,
            Storage::W32(v) => v.len() * 4,
            Storage::W64(v) => v.len() * 8,
            Storage::W128(v) => v.len() * 16,
            Storage::Str(v) => v.len(),
        }
    }

    /// The variant's name, for error messages.
    pub(crate) fn kind_name(&self) -> &'static str {
        match self {
            Storage::W8(_) => "8-bit words",
            Storage::W16(_) => "16-bit words",
            Storage::W32(_) => "32-bit words",
            Storage::W64(_) => "64-bit words",
            Storage::W128(_) => "128-bit words",
            Storage::Packed(_) => "packed sub-byte data",
            Storage::Str(_) => "strings",
        }
    }
}

/// Keeps [`Elem`] to the types of this file: the kernels are written over it.
mod sealed {
    /// The storage element types.
    pub trait Sealed {}
}

/// An element type a data-movement kernel can be instantiated with: one per storage width, plus
/// byte strings (`u8`, `u16`, `u32`, `u64`, `u128`, `Vec<u8>`). Sealed: no other type implements it.
///
/// ```
/// use onnx_idx_check_kernels::tensor::{DType, Tensor};
///
/// // Float bits live in the unsigned word of their width.
/// let t = Tensor::from_elems(DType::Float, vec![2], vec![1.5f32.to_bits(), 0])?;
/// assert_eq!(t.elems::<u32>(), Some(&[0x3fc0_0000u32, 0][..]));
/// assert_eq!(t.elems::<u64>(), None);
/// # Ok::<(), onnx_idx_check_kernels::ShapeError>(())
/// ```
pub trait Elem: sealed::Sealed + Clone + Send + Sync + 'static {
    // The kernels' plumbing, hidden: a caller names `Elem` only to pick a width.
    /// The elements, when `storage` is this type's variant.
    #[doc(hidden)]
    fn slice(storage: &Storage) -> Option<&[Self]>;
    /// The elements mutably, when `storage` is this type's variant.
    #[doc(hidden)]
    fn slice_mut(storage: &mut Storage) -> Option<&mut [Self]>;
    /// Wraps a vector in its storage variant.
    #[doc(hidden)]
    fn into_storage(v: Vec<Self>) -> Storage;
    /// The all-zero element (0, 0.0, false; the empty string).
    #[doc(hidden)]
    fn zero() -> Self;
    /// Bytes the element owns on the heap (a string's payload; 0 for fixed-width words), so that
    /// kernels can bound an output of strings before building it.
    #[doc(hidden)]
    fn heap_len(&self) -> usize {
        0
    }
    /// Whether `heap_len` can be non-zero.
    #[doc(hidden)]
    const OWNS_HEAP: bool = false;
    /// The width of this word type in bytes; 0 for the string element, which is not a word
    /// (tensors read in place hand out their memory as words of this width).
    #[doc(hidden)]
    const WORD_BYTES: usize;
}

macro_rules! impl_elem {
    ($t:ty, $variant:ident, $zero:expr) => {
        impl sealed::Sealed for $t {}
        impl Elem for $t {
            fn slice(storage: &Storage) -> Option<&[Self]> {
                match storage {
                    Storage::$variant(v) => Some(v),
                    _ => None,
                }
            }
            fn slice_mut(storage: &mut Storage) -> Option<&mut [Self]> {
                match storage {
                    Storage::$variant(v) => Some(v),
                    _ => None,
                }
            }
            fn into_storage(v: Vec<Self>) -> Storage {
                Storage::$variant(v)
            }
            fn zero() -> Self {
                $zero
            }
            const WORD_BYTES: usize = std::mem::size_of::<$t>();
        }
    };
}

impl_elem!(u8, W8, 0);
impl_elem!(u16, W16, 0);
impl_elem!(u32, W32, 0);
impl_elem!(u64, W64, 0);
impl_elem!(u128, W128, 0);
impl sealed::Sealed for Vec<u8> {}
impl Elem for Vec<u8> {
    fn slice(storage: &Storage) -> Option<&[Self]> {
        match storage {
            Storage::Str(v) => Some(v),
            _ => None,
        }
    }
    fn slice_mut(storage: &mut Storage) -> Option<&mut [Self]> {
        match storage {
            Storage::Str(v) => Some(v),
            _ => None,
        }
    }
    fn into_storage(v: Vec<Self>) -> Storage {
        Storage::Str(v)
    }
    fn zero() -> Self {
        Vec::new()
    }
    fn heap_len(&self) -> usize {
        self.len()
    }
    const OWNS_HEAP: bool = true;
    const WORD_BYTES: usize = 0;
}

/// Calls the generic function `$f::<T>($args)` with `T` the storage element of `$dtype`;
/// packed sub-byte dtypes evaluate `$packed` instead.
#[macro_export]
macro_rules! dispatch_by_width {
    ($dtype:expr, $packed:expr, $f:ident ( $($arg:expr),* $(,)? )) => {
        match $dtype.layout() {
            $crate::tensor::Layout::Bytes(1) => $f::<u8>($($arg),*),
            $crate::tensor::Layout::Bytes(2) => $f::<u16>($($arg),*),
            $crate::tensor::Layout::Bytes(4) => $f::<u32>($($arg),*),
            $crate::tensor::Layout::Bytes(8) => $f::<u64>($($arg),*),
            $crate::tensor::Layout::Bytes(_) => $f::<u128>($($arg),*),
            $crate::tensor::Layout::String => $f::<Vec<u8>>($($arg),*),
            $crate::tensor::Layout::Packed(_) => $packed,
        }
    };
}
pub use crate::dispatch_by_width;
