//! Tensors: a dtype, a shape and the elements, stored by element width.
//!
//! Data-movement kernels never look at what an element means, only at how wide it is, so the
//! storage is keyed by width (`f32` and `i32` both live in [`Storage::W32`]) and kernels are
//! written once over [`Elem`]. Arithmetic (reductions, comparison) reinterprets the words through
//! the dtype.

pub mod dtype;
mod element;
#[cfg(feature = "ndarray")]
mod ndarray;
pub(crate) mod storage;
pub mod value;

#[cfg(feature = "ndarray")]
pub use self::ndarray::ToArrayError;
pub use dtype::{Class, DType, DTypeSet, Layout};
pub use element::{DTypeMismatch, Element};
pub use storage::{Elem, Storage};

use thiserror::Error;

/// A tensor whose storage is guaranteed to match its dtype and shape.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    dtype: DType,
    shape: Vec<usize>,
    storage: Storage,
}

/// A tensor's parts did not fit together.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ShapeError {
    /// The product of the dims does not fit in memory's address space.
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

/// The number of elements of `shape`, or `None` when the product overflows `usize`.
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
            storage,
        })
    }

    /// Builds a tensor from a typed element vector (the width must match the dtype).
    pub fn from_elems<T: Elem>(
        dtype: DType,
        shape: Vec<usize>,
        data: Vec<T>,
    ) -> Result<Tensor, ShapeError> {
        Tensor::new(dtype, shape, T::into_storage(data))
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The dims; empty for a scalar.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The rank.
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// The number of elements (the shape was checked when the tensor was built).
    pub fn numel(&self) -> usize {
        numel(&self.shape).unwrap_or(0)
    }

    /// The elements.
    pub fn storage(&self) -> &Storage {
        &self.storage
    }

    /// The elements as a slice of `T`, when `T` is this dtype's storage element.
    pub fn elems<T: Elem>(&self) -> Option<&[T]> {
        T::slice(&self.storage)
    }

    /// Bytes the elements occupy in memory (string payloads included).
    pub fn byte_size(&self) -> usize {
        match &self.storage {
            Storage::Str(v) => v.iter().map(|s| s.len()).sum::<usize>() + v.len(),
            s => s.byte_size(),
        }
    }

    /// The same elements with another shape of equal element count.
    pub fn reshaped(self, shape: Vec<usize>) -> Result<Tensor, ShapeError> {
        Tensor::new(self.dtype, shape, self.storage)
    }

    /// The integer elements widened to i64 (for index tensors of any integer dtype), or `None` for
    /// a non-integer dtype.
    pub fn to_i64_vec(&self) -> Option<Vec<i64>> {
        use DType::*;
        let s = &self.storage;
        Some(match self.dtype {
            Int64 => u64::slice(s)?.iter().map(|&v| v as i64).collect(),
            Int32 => u32::slice(s)?.iter().map(|&v| v as i32 as i64).collect(),
            Int16 => u16::slice(s)?.iter().map(|&v| v as i16 as i64).collect(),
            Int8 => u8::slice(s)?.iter().map(|&v| v as i8 as i64).collect(),
            Uint32 => u32::slice(s)?.iter().map(|&v| i64::from(v)).collect(),
            Uint16 => u16::slice(s)?.iter().map(|&v| i64::from(v)).collect(),
            Uint8 => u8::slice(s)?.iter().map(|&v| i64::from(v)).collect(),
            // u64 values above i64::MAX keep their bits; callers range-check anyway.
            Uint64 => u64::slice(s)?.iter().map(|&v| v as i64).collect(),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
