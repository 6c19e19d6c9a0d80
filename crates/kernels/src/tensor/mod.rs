//! Tensors: a dtype, a shape and the elements, stored by element width.
//!
//! Data-movement kernels never look at what an element means, only at how wide it is, so the
//! storage is keyed by width (`f32` and `i32` both live in [`Storage::W32`]) and kernels are
//! written once over [`Elem`]. Arithmetic (reductions, comparison) reinterprets the words through
//! the dtype.
//!
//! ```
//! use onnx_idx_check_kernels::tensor::{DType, Storage, Tensor};
//!
//! let t = Tensor::from_vec(vec![2], vec![1.0f32, 2.0])?;
//! // An f32 lives in Storage::W32 as its bits, like an i32 or a u32.
//! assert_eq!(t.storage(), &Storage::W32(vec![1.0f32.to_bits(), 2.0f32.to_bits()]));
//! assert_eq!(t.dtype(), DType::Float);
//! # Ok::<(), onnx_idx_check_kernels::ShapeError>(())
//! ```

pub mod dtype;
mod element;
#[cfg(feature = "ndarray")]
mod ndarray;
pub mod storage;
pub mod value;

#[cfg(feature = "ndarray")]
pub use self::ndarray::ToArrayError;
pub use dtype::DTypeSet;
pub use dtype::{Class, DType, Layout};
pub use element::{DTypeMismatch, Element};
pub use storage::{Elem, Storage};

use thiserror::Error;

/// A tensor whose storage is guaranteed to match its dtype and shape.
///
/// ```
/// use onnx_idx_check_kernels::{DType, Tensor};
///
/// let t = Tensor::from_vec(vec![2, 2], vec![1i64, 2, 3, 4])?;
/// assert_eq!((t.dtype(), t.shape(), t.numel()), (DType::Int64, &[2, 2][..], 4));
/// assert_eq!(t.to_vec::<i64>().unwrap(), [1, 2, 3, 4]);
/// # Ok::<(), onnx_idx_check_kernels::ShapeError>(())
/// ```
#[derive(Clone)]
pub struct Tensor {
    dtype: DType,
    shape: Vec<usize>,
    data: Data,
}

/// Where a tensor's elements are: in its own storage, or in memory another owner keeps (a numpy
/// array, a mapped file), read in place.
#[derive(Clone)]
enum Data {
    Owned(Storage),
    Shared(Shared),
}

/// Fixed-width elements read in place from memory kept alive and unchanged by `owner`.
#[derive(Clone)]
struct Shared {
    /// The first element, aligned to the word width.
    ptr: std::ptr::NonNull<u8>,
    /// The number of elements (of the dtype's word width).
    count: usize,
    // Held, never read: it keeps the memory alive.
    #[allow(dead_code)]
    owner: std::sync::Arc<dyn std::any::Any + Send + Sync>,
    /// The elements copied into storage, made the first time a caller asks for [`Storage`].
    copy: std::sync::OnceLock<Storage>,
}

// SAFETY: the memory behind `ptr` is only read, and `Tensor::from_shared`'s contract keeps it
// valid and unchanged for as long as `owner` lives, from any thread.
unsafe impl Send for Shared {}
// SAFETY: as above; `copy` is a OnceLock.
unsafe impl Sync for Shared {}

impl Shared {
    /// The elements as words of `T`, which has the shared words' width.
    fn words<T: Copy>(&self) -> &[T] {
        // SAFETY: `from_shared` checked the alignment and the size for this width, and its
        // contract keeps the memory readable and unchanged while `self` (holding `owner`) lives.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr().cast::<T>(), self.count) }
    }

    fn to_storage(&self, width: usize) -> Storage {
        match width {
            1 => Storage::W8(self.words::<u8>().to_vec()),
            2 => Storage::W16(self.words::<u16>().to_vec()),
            4 => Storage::W32(self.words::<u32>().to_vec()),
            8 => Storage::W64(self.words::<u64>().to_vec()),
            _ => Storage::W128(self.words::<u128>().to_vec()),
        }
    }
}

impl std::fmt::Debug for Tensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tensor")
            .field("dtype", &self.dtype)
            .field("shape", &self.shape)
            .field("storage", self.storage())
            .finish()
    }
}

impl PartialEq for Tensor {
    fn eq(&self, other: &Tensor) -> bool {
        self.dtype == other.dtype && self.shape == other.shape && self.storage() == other.storage()
    }
}

/// A tensor's parts did not fit together.
///
/// ```
/// use onnx_idx_check_kernels::{ShapeError, Tensor};
///
/// let err = Tensor::from_vec(vec![2, 2], vec![1.0f32; 3]).unwrap_err();
/// assert!(matches!(err, ShapeError::Size { needed: 4, actual: 3, .. }));
/// assert_eq!(err.to_string(), "float tensor of shape [2, 2] needs 4 elements, storage has 3");
/// let err = Tensor::from_vec(vec![1 << 40, 1 << 40], Vec::<f32>::new()).unwrap_err();
/// assert!(matches!(err, ShapeError::Overflow { .. }));
/// ```
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ShapeError {
    /// The product of the dims does not fit in memory's address space (counted without regard to
    /// a zero dim: `[4, 2^62, 0]` overflows too, so that every partial product of a tensor's dims
    /// is in range).
    #[error("the element count of shape {shape:?} overflows")]
    Overflow {
        /// The offending shape.
        shape: Vec<usize>,
    },
    /// The storage holds a different number of elements (or bytes) than the shape needs.
    #[error("{dtype} tensor of shape {shape:?} needs {needed} {unit}, storage has {actual}")]
    Size {
        /// The dtype.
        dtype: DType,
        /// The shape.
        shape: Vec<usize>,
        /// What the shape needs.
        needed: usize,
        /// What the storage holds.
        actual: usize,
        /// "elements" or "bytes".
        unit: &'static str,
    },
    /// The storage variant is not the one the dtype is stored in.
    #[error("{dtype} data cannot be stored as {storage}")]
    Kind {
        /// The dtype.
        dtype: DType,
        /// The storage variant's name.
        storage: &'static str,
    },
}

/// The number of elements of `shape`, or `None` when the product overflows `usize`. A zero dim
/// does not rescue dims whose product overflows before it (`[4, 2^62, 0]` is `None`): no tensor
/// is built with such a shape, so every product of a tensor's dims fits in `usize` and the
/// kernels' partial products (outer, axis, inner) cannot wrap.
pub fn numel(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d))
}

/// The bytes that `count` elements of `dtype` occupy in memory (strings count as one pointer-sized
/// slot each, their bytes are not known up front); `None` on overflow.
pub fn byte_len(dtype: DType, count: usize) -> Option<usize> {
    match dtype.layout() {
        Layout::Bytes(w) => count.checked_mul(w),
        Layout::Packed(bits) => count.checked_mul(bits as usize).map(|b| b.div_ceil(8)),
        Layout::String => count.checked_mul(std::mem::size_of::<Vec<u8>>()),
    }
}

/// How many leading dims [`ShapeText`] shows of a long shape; the last [`SHAPE_TAIL`] follow.
const SHAPE_HEAD: usize = 8;
/// How many trailing dims [`ShapeText`] shows of a long shape.
const SHAPE_TAIL: usize = 2;

/// A shape as people read it in a message: `[2, 3]`. A shape of more than
/// `SHAPE_HEAD + SHAPE_TAIL` dims shows its first and last dims and its rank, `[1, 1, 1, 1, 1, 1,
/// 1, 1, ..., 1, 5] (rank 200001)`, so that a hostile rank cannot make a message unbounded.
pub struct ShapeText<'a, T>(pub &'a [T]);

impl<T: std::fmt::Display> std::fmt::Display for ShapeText<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let dims = self.0;
        let list = |f: &mut std::fmt::Formatter<'_>, part: &[T]| -> std::fmt::Result {
            for (i, d) in part.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{d}")?;
            }
            Ok(())
        };
        f.write_str("[")?;
        if dims.len() <= SHAPE_HEAD + SHAPE_TAIL {
            list(f, dims)?;
            return f.write_str("]");
        }
        list(f, &dims[..SHAPE_HEAD])?;
        f.write_str(", ..., ")?;
        list(f, &dims[dims.len() - SHAPE_TAIL..])?;
        write!(f, "] (rank {})", dims.len())
    }
}

/// [`ShapeText`] of `dims`.
pub fn shape_text<T>(dims: &[T]) -> ShapeText<'_, T> {
    ShapeText(dims)
}

/// Row-major strides (in elements) of `shape`.
pub fn strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1usize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1].saturating_mul(shape[i + 1]);
    }
    strides
}

/// The n-d coordinates of flat offset `flat` in a row-major `shape`.
pub fn unravel(mut flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut coords = vec![0usize; shape.len()];
    for (c, &d) in coords.iter_mut().zip(shape).rev() {
        if d > 0 {
            *c = flat % d;
            flat /= d;
        }
    }
    coords
}

impl Tensor {
    /// Builds a tensor, checking that `storage` is the right kind and size for `dtype` and `shape`.
    ///
    /// ```
    /// use onnx_idx_check_kernels::tensor::{DType, Storage, Tensor};
    ///
    /// // An int4 tensor of three elements: two bytes, low nibble first.
    /// let t = Tensor::new(DType::Int4, vec![3], Storage::Packed(vec![0x21, 0x03]))?;
    /// assert_eq!((t.numel(), t.storage().len()), (3, 2));
    /// // Three int4 elements do not fit in one byte.
    /// assert!(Tensor::new(DType::Int4, vec![3], Storage::Packed(vec![0x21])).is_err());
    /// // float is stored in 32-bit words, not bytes.
    /// assert!(Tensor::new(DType::Float, vec![1], Storage::W8(vec![0])).is_err());
    /// # Ok::<(), onnx_idx_check_kernels::ShapeError>(())
    /// ```
    pub fn new(dtype: DType, shape: Vec<usize>, storage: Storage) -> Result<Tensor, ShapeError> {
        let n = numel(&shape).ok_or_else(|| ShapeError::Overflow {
            shape: shape.clone(),
        })?;
        if !storage.fits(dtype) {
            return Err(ShapeError::Kind {
                dtype,
                storage: storage.kind_name(),
            });
        }
        let (needed, actual, unit) = match dtype.layout() {
            Layout::Packed(_) => (
                byte_len(dtype, n).ok_or_else(|| ShapeError::Overflow {
                    shape: shape.clone(),
                })?,
                storage.len(),
                "bytes",
            ),
            _ => (n, storage.len(), "elements"),
        };
        if needed != actual {
            return Err(ShapeError::Size {
                dtype,
                shape,
                needed,
                actual,
                unit,
            });
        }
        Ok(Tensor {
            dtype,
            shape,
            data: Data::Owned(storage),
        })
    }

    /// A tensor of a fixed-width dtype whose elements are read in place, without a copy, from
    /// memory that `owner` keeps: a numpy array's buffer, a mapped file. `ptr` must be aligned
    /// to the dtype's width (an error otherwise, as for a wrong dtype or shape).
    ///
    /// # Safety
    ///
    /// `ptr` must be valid for reads of `numel(shape) * width` bytes, and those bytes must not
    /// change, for as long as `owner` lives: the tensor and every clone of it hold `owner`, and
    /// read the memory at any time and from any thread until the last of them is dropped.
    ///
    /// ```
    /// use onnx_idx_check_kernels::Tensor;
    /// use std::sync::Arc;
    ///
    /// let words: Arc<Vec<u32>> = Arc::new(vec![1.5f32.to_bits(), 2.5f32.to_bits()]);
    /// let ptr = words.as_ptr().cast::<u8>();
    /// // SAFETY: the Arc keeps the vector alive, and nothing writes to it.
    /// let t = unsafe { Tensor::from_shared(onnx_idx_check_kernels::DType::Float, vec![2], ptr, words) }?;
    /// assert_eq!(t.to_vec::<f32>()?, [1.5, 2.5]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub unsafe fn from_shared(
        dtype: DType,
        shape: Vec<usize>,
        ptr: *const u8,
        owner: std::sync::Arc<dyn std::any::Any + Send + Sync>,
    ) -> Result<Tensor, ShapeError> {
        let count = numel(&shape).ok_or_else(|| ShapeError::Overflow {
            shape: shape.clone(),
        })?;
        let Layout::Bytes(width) = dtype.layout() else {
            return Err(ShapeError::Kind {
                dtype,
                storage: "shared memory (only fixed-width elements can be shared)",
            });
        };
        if count
            .checked_mul(width)
            .is_none_or(|b| b > isize::MAX as usize)
        {
            return Err(ShapeError::Overflow { shape });
        }
        let Some(ptr) = std::ptr::NonNull::new(ptr.cast_mut()) else {
            return Err(ShapeError::Kind {
                dtype,
                storage: "a null pointer",
            });
        };
        if ptr.as_ptr().align_offset(width) != 0 {
            return Err(ShapeError::Kind {
                dtype,
                storage: "memory not aligned to its width",
            });
        }
        Ok(Tensor {
            dtype,
            shape,
            data: Data::Shared(Shared {
                ptr,
                count,
                owner,
                copy: std::sync::OnceLock::new(),
            }),
        })
    }

    /// Builds a tensor from a typed element vector (the width must match the dtype).
    ///
    /// ```
    /// use onnx_idx_check_kernels::tensor::{DType, Tensor};
    ///
    /// // bfloat16 1.0 is the word 0x3f80.
    /// let t = Tensor::from_elems(DType::Bfloat16, vec![1], vec![0x3f80u16])?;
    /// assert_eq!(t.to_vec::<half::bf16>().unwrap(), [half::bf16::ONE]);
    /// # Ok::<(), onnx_idx_check_kernels::ShapeError>(())
    /// ```
    pub fn from_elems<T: Elem>(
        dtype: DType,
        shape: Vec<usize>,
        data: Vec<T>,
    ) -> Result<Tensor, ShapeError> {
        Tensor::new(dtype, shape, T::into_storage(data))
    }

    /// The element type.
    ///
    /// ```
    /// use onnx_idx_check_kernels::{DType, Tensor};
    ///
    /// assert_eq!(Tensor::scalar(1u8).dtype(), DType::Uint8);
    /// ```
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The dims; empty for a scalar.
    ///
    /// ```
    /// use onnx_idx_check_kernels::Tensor;
    ///
    /// assert_eq!(Tensor::from_vec(vec![3, 0], Vec::<f32>::new())?.shape(), [3, 0]);
    /// assert!(Tensor::scalar(1.0f32).shape().is_empty());
    /// # Ok::<(), onnx_idx_check_kernels::ShapeError>(())
    /// ```
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The rank.
    ///
    /// ```
    /// use onnx_idx_check_kernels::Tensor;
    ///
    /// assert_eq!(Tensor::from_vec(vec![1, 2, 1], vec![0i8, 1])?.rank(), 3);
    /// # Ok::<(), onnx_idx_check_kernels::ShapeError>(())
    /// ```
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// The number of elements (the shape was checked when the tensor was built).
    ///
    /// ```
    /// use onnx_idx_check_kernels::Tensor;
    ///
    /// assert_eq!(Tensor::from_vec(vec![2, 3], vec![0i32; 6])?.numel(), 6);
    /// assert_eq!(Tensor::scalar(0i32).numel(), 1);
    /// # Ok::<(), onnx_idx_check_kernels::ShapeError>(())
    /// ```
    pub fn numel(&self) -> usize {
        numel(&self.shape).unwrap_or(0)
    }

    /// The elements.
    ///
    /// ```
    /// use onnx_idx_check_kernels::tensor::{Storage, Tensor};
    ///
    /// let t = Tensor::from_vec(vec![2], vec![1.0f32, -0.0])?;
    /// assert_eq!(t.storage(), &Storage::W32(vec![0x3f80_0000, 0x8000_0000]));
    /// # Ok::<(), onnx_idx_check_kernels::ShapeError>(())
    /// ```
    pub fn storage(&self) -> &Storage {
        match &self.data {
            Data::Owned(s) => s,
            // A tensor read in place has no storage of its own: the first caller pays a copy.
            Data::Shared(sh) => sh
                .copy
                .get_or_init(|| sh.to_storage(self.dtype.byte_width().unwrap_or(1))),
        }
    }

    /// The storage, given up: hands the elements to another owner (a numpy array, say) without
    /// copying them.
    ///
    /// ```
    /// use onnx_idx_check_kernels::tensor::{Storage, Tensor};
    ///
    /// let t = Tensor::from_vec(vec![2], vec![7i16, -1])?;
    /// assert_eq!(t.into_storage(), Storage::W16(vec![7, 0xffff]));
    /// # Ok::<(), onnx_idx_check_kernels::ShapeError>(())
    /// ```
    pub fn into_storage(self) -> Storage {
        match self.data {
            Data::Owned(s) => s,
            Data::Shared(mut sh) => sh
                .copy
                .take()
                .unwrap_or_else(|| sh.to_storage(self.dtype.byte_width().unwrap_or(1))),
        }
    }

    /// The elements as a slice of `T`, when `T` is this dtype's storage element.
    ///
    /// ```
    /// use onnx_idx_check_kernels::Tensor;
    ///
    /// let t = Tensor::from_vec(vec![2], vec![7i16, -1])?;
    /// assert_eq!(t.elems::<u16>(), Some(&[7u16, 0xffff][..]));
    /// assert_eq!(t.elems::<u32>(), None);
    /// # Ok::<(), onnx_idx_check_kernels::ShapeError>(())
    /// ```
    pub fn elems<T: Elem>(&self) -> Option<&[T]> {
        match &self.data {
            Data::Owned(s) => T::slice(s),
            Data::Shared(sh) => {
                (T::WORD_BYTES != 0 && Some(T::WORD_BYTES) == self.dtype.byte_width()).then(|| {
                    // SAFETY: T is a plain word of the shared elements' width (WORD_BYTES is 0
                    // for the string element, the one Elem type that is not a word).
                    unsafe { std::slice::from_raw_parts(sh.ptr.as_ptr().cast::<T>(), sh.count) }
                })
            }
        }
    }

    /// Whether the elements are read in place from memory another owner keeps (see
    /// [`Tensor::from_shared`]) rather than held in the tensor's own storage.
    pub fn is_shared(&self) -> bool {
        matches!(self.data, Data::Shared(_))
    }

    /// Bytes the elements occupy in memory (string payloads included).
    ///
    /// ```
    /// use onnx_idx_check_kernels::Tensor;
    ///
    /// assert_eq!(Tensor::from_vec(vec![3], vec![0f64; 3])?.byte_size(), 24);
    /// // Strings: their bytes plus one per element.
    /// assert_eq!(Tensor::from_vec(vec![2], vec![b"ab".to_vec(), b"c".to_vec()])?.byte_size(), 5);
    /// # Ok::<(), onnx_idx_check_kernels::ShapeError>(())
    /// ```
    pub fn byte_size(&self) -> usize {
        if let Data::Shared(sh) = &self.data {
            return sh.count * self.dtype.byte_width().unwrap_or(1);
        }
        match self.storage() {
            Storage::Str(v) => v.iter().map(|s| s.len()).sum::<usize>() + v.len(),
            s => s.byte_size(),
        }
    }

    /// The same elements with another shape of equal element count.
    ///
    /// ```
    /// use onnx_idx_check_kernels::Tensor;
    ///
    /// let t = Tensor::from_vec(vec![6], vec![0u8; 6])?.reshaped(vec![2, 3])?;
    /// assert_eq!(t.shape(), [2, 3]);
    /// assert!(t.reshaped(vec![4]).is_err());
    /// # Ok::<(), onnx_idx_check_kernels::ShapeError>(())
    /// ```
    pub fn reshaped(self, shape: Vec<usize>) -> Result<Tensor, ShapeError> {
        if numel(&shape) == Some(self.numel()) {
            return Ok(Tensor { shape, ..self });
        }
        Tensor::new(self.dtype, shape, self.into_storage())
    }

    /// The integer elements widened to i64 (for index tensors of any integer dtype), or `None` for
    /// a non-integer dtype.
    ///
    /// ```
    /// use onnx_idx_check_kernels::Tensor;
    ///
    /// assert_eq!(Tensor::from_vec(vec![2], vec![-1i32, 3])?.to_i64_vec(), Some(vec![-1, 3]));
    /// assert_eq!(Tensor::scalar(1.0f32).to_i64_vec(), None);
    /// # Ok::<(), onnx_idx_check_kernels::ShapeError>(())
    /// ```
    pub fn to_i64_vec(&self) -> Option<Vec<i64>> {
        use DType::*;
        Some(match self.dtype {
            Int64 => self.elems::<u64>()?.iter().map(|&v| v as i64).collect(),
            Int32 => self
                .elems::<u32>()?
                .iter()
                .map(|&v| v as i32 as i64)
                .collect(),
            Int16 => self
                .elems::<u16>()?
                .iter()
                .map(|&v| v as i16 as i64)
                .collect(),
            Int8 => self
                .elems::<u8>()?
                .iter()
                .map(|&v| v as i8 as i64)
                .collect(),
            Uint32 => self.elems::<u32>()?.iter().map(|&v| i64::from(v)).collect(),
            Uint16 => self.elems::<u16>()?.iter().map(|&v| i64::from(v)).collect(),
            Uint8 => self.elems::<u8>()?.iter().map(|&v| i64::from(v)).collect(),
            // u64 values above i64::MAX keep their bits; callers range-check anyway.
            Uint64 => self.elems::<u64>()?.iter().map(|&v| v as i64).collect(),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_read_as_lists_and_long_ones_are_cut_with_their_rank() {
        assert_eq!(shape_text::<usize>(&[]).to_string(), "[]");
        assert_eq!(shape_text(&[2usize, 3]).to_string(), "[2, 3]");
        let ten: Vec<usize> = (1..=10).collect();
        assert_eq!(
            shape_text(&ten).to_string(),
            "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
        );
        let long: Vec<usize> = (1..=200_001).collect();
        assert_eq!(
            shape_text(&long).to_string(),
            "[1, 2, 3, 4, 5, 6, 7, 8, ..., 200000, 200001] (rank 200001)"
        );
    }

    #[test]
    fn new_rejects_storage_of_the_wrong_size_or_kind() {
        assert!(Tensor::new(DType::Float, vec![2, 3], Storage::W32(vec![0; 6])).is_ok());
        assert!(matches!(
            Tensor::new(DType::Float, vec![2, 3], Storage::W32(vec![0; 5])),
            Err(ShapeError::Size { .. })
        ));
        assert!(matches!(
            Tensor::new(DType::Float, vec![2], Storage::W64(vec![0; 2])),
            Err(ShapeError::Kind { .. })
        ));
        assert!(matches!(
            Tensor::new(DType::Float, vec![usize::MAX, 2], Storage::W32(vec![])),
            Err(ShapeError::Overflow { .. })
        ));
    }

    #[test]
    fn packed_types_count_bytes_rounded_up() {
        assert!(Tensor::new(DType::Int4, vec![3], Storage::Packed(vec![0; 2])).is_ok());
        assert!(Tensor::new(DType::Int4, vec![3], Storage::Packed(vec![0; 3])).is_err());
        assert!(Tensor::new(DType::Float6E2M3, vec![4], Storage::Packed(vec![0; 3])).is_ok());
        assert!(Tensor::new(DType::Uint2, vec![5], Storage::Packed(vec![0; 2])).is_ok());
    }

    #[test]
    fn strides_and_unravel_are_row_major() {
        assert_eq!(strides(&[2, 3, 4]), vec![12, 4, 1]);
        assert_eq!(strides(&[]), Vec::<usize>::new());
        assert_eq!(unravel(23, &[2, 3, 4]), vec![1, 2, 3]);
        assert_eq!(unravel(5, &[2, 3]), vec![1, 2]);
    }

    #[test]
    fn signed_indices_widen_with_their_sign() {
        let t = Tensor::from_elems(DType::Int32, vec![2], vec![(-3i32) as u32, 7]).unwrap();
        assert_eq!(t.to_i64_vec(), Some(vec![-3, 7]));
        let t = Tensor::from_elems(DType::Float, vec![1], vec![0u32]).unwrap();
        assert_eq!(t.to_i64_vec(), None);
    }
}
