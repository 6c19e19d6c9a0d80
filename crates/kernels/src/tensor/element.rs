//! Typed elements: the Rust types that stand for ONNX dtypes ([`Element`]), so that callers build
//! and read tensors as `Vec<f32>` or `&[i64]` rather than as storage words.
//!
//! Each element type maps to exactly one dtype and to the storage word of its width (an `f32` is
//! kept as its bits in a `u32`). Dtypes with no Rust type of their own (the float8, float6 and
//! float4 formats, the packed 4- and 2-bit integers) go through [`Tensor::from_le_bytes`] and
//! [`Tensor::to_le_bytes`].

use super::{DType, Elem, Layout, ShapeError, Storage, Tensor};
use half::{bf16, f16};
use num_complex::{Complex32, Complex64};
use thiserror::Error;

mod sealed {
    pub trait Sealed {}
}

/// A Rust type that is the element of one ONNX dtype. Implemented for `f32`, `f64`, the signed
/// and unsigned integers of 8 to 64 bits, `bool`, `half::f16` (float16), `half::bf16` (bfloat16),
/// `num_complex::Complex32` (complex64), `num_complex::Complex64` (complex128) and `Vec<u8>`
/// (string: ONNX strings are bytes, not necessarily UTF-8). Sealed: the set follows the dtypes.
///
/// ```
/// use half::f16;
/// use onnx_idx_check_kernels::{DType, Element, Tensor};
///
/// assert_eq!(<f16 as Element>::DTYPE, DType::Float16);
/// let t = Tensor::from_vec(vec![2], vec![f16::from_f32(0.5), f16::from_f32(-2.0)])?;
/// assert_eq!(t.dtype(), DType::Float16);
/// # Ok::<(), onnx_idx_check_kernels::ShapeError>(())
/// ```
pub trait Element: Clone + sealed::Sealed + 'static {
    /// The dtype this type stands for.
    ///
    /// ```
    /// use onnx_idx_check_kernels::{DType, Element};
    ///
    /// assert_eq!(<i32 as Element>::DTYPE, DType::Int32);
    /// assert_eq!(<Vec<u8> as Element>::DTYPE, DType::String);
    /// ```
    const DTYPE: DType;
    /// The storage word of the dtype's width.
    #[doc(hidden)]
    type Word: Elem;
    /// The value as a storage word.
    #[doc(hidden)]
    fn to_word(self) -> Self::Word;
    /// The value of a storage word.
    #[doc(hidden)]
    fn from_word(w: &Self::Word) -> Self;
    /// The words seen as values without a copy, where every bit pattern of the word is a value
    /// of this type (`None` for bool, whose words may only be 0 or 1, and for strings).
    #[doc(hidden)]
    fn view(words: &[Self::Word]) -> Option<&[Self]>;
    /// The values as storage words, reusing the vector's allocation where the two types have the
    /// same size and alignment.
    #[doc(hidden)]
    fn into_words(values: Vec<Self>) -> Vec<Self::Word> {
        values.into_iter().map(Self::to_word).collect()
    }
}

macro_rules! pod_element {
    ($t:ty, $dtype:ident, $word:ty) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: DType = DType::$dtype;
            type Word = $word;
            fn to_word(self) -> $word {
                bytemuck::cast(self)
            }
            fn from_word(w: &$word) -> Self {
                bytemuck::cast(*w)
            }
            fn view(words: &[$word]) -> Option<&[Self]> {
                Some(bytemuck::cast_slice(words))
            }
            fn into_words(values: Vec<Self>) -> Vec<$word> {
                // Complex32 (align 4) and u64 (align 8) differ: those are copied.
                bytemuck::allocation::try_cast_vec(values)
                    .unwrap_or_else(|(_, v)| v.into_iter().map(Self::to_word).collect())
            }
        }
    };
}

pod_element!(f32, Float, u32);
pod_element!(f64, Double, u64);
pod_element!(i8, Int8, u8);
pod_element!(i16, Int16, u16);
pod_element!(i32, Int32, u32);
pod_element!(i64, Int64, u64);
pod_element!(u8, Uint8, u8);
pod_element!(u16, Uint16, u16);
pod_element!(u32, Uint32, u32);
pod_element!(u64, Uint64, u64);
pod_element!(f16, Float16, u16);
pod_element!(bf16, Bfloat16, u16);
pod_element!(Complex32, Complex64, u64);
pod_element!(Complex64, Complex128, u128);

impl sealed::Sealed for bool {}
impl Element for bool {
    const DTYPE: DType = DType::Bool;
    type Word = u8;
    fn to_word(self) -> u8 {
        u8::from(self)
    }
    fn from_word(w: &u8) -> Self {
        *w != 0
    }
    fn view(_: &[u8]) -> Option<&[Self]> {
        None
    }
}

impl sealed::Sealed for Vec<u8> {}
impl Element for Vec<u8> {
    const DTYPE: DType = DType::String;
    type Word = Vec<u8>;
    fn to_word(self) -> Vec<u8> {
        self
    }
    fn from_word(w: &Vec<u8>) -> Self {
        w.clone()
    }
    fn view(_: &[Vec<u8>]) -> Option<&[Self]> {
        None
    }
    fn into_words(values: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        values
    }
}

/// A tensor was read as an element type other than its own.
///
/// ```
/// use onnx_idx_check_kernels::{DType, DTypeMismatch, Tensor};
///
/// let t = Tensor::from_vec(vec![1], vec![1.0f64])?;
/// let err = t.to_vec::<f32>().unwrap_err();
/// assert_eq!(err, DTypeMismatch { requested: DType::Float, actual: DType::Double });
/// assert_eq!(err.to_string(), "the tensor is double, not float");
/// # Ok::<(), onnx_idx_check_kernels::ShapeError>(())
/// ```
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("the tensor is {actual}, not {requested}")]
pub struct DTypeMismatch {
    /// The dtype asked for.
    pub requested: DType,
    /// The tensor's dtype.
    pub actual: DType,
}

impl Tensor {
    /// A tensor of `T`'s dtype from its elements in row-major order.
    ///
    /// ```
    /// use onnx_idx_check_kernels::{DType, Tensor};
    ///
    /// let t = Tensor::from_vec(vec![2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    /// assert_eq!((t.dtype(), t.shape()), (DType::Float, &[2, 3][..]));
    /// // The element count must match the shape.
    /// assert!(Tensor::from_vec(vec![4], vec![1i64, 2, 3]).is_err());
    /// # Ok::<(), onnx_idx_check_kernels::ShapeError>(())
    /// ```
    pub fn from_vec<T: Element>(shape: Vec<usize>, data: Vec<T>) -> Result<Tensor, ShapeError> {
        Tensor::new(T::DTYPE, shape, T::Word::into_storage(T::into_words(data)))
    }

    /// [`Tensor::from_vec`] from a slice.
    ///
    /// ```
    /// use onnx_idx_check_kernels::Tensor;
    ///
    /// let t = Tensor::from_slice(&[3], &[true, false, true])?;
    /// assert_eq!(t.to_vec::<bool>().unwrap(), [true, false, true]);
    /// # Ok::<(), onnx_idx_check_kernels::ShapeError>(())
    /// ```
    pub fn from_slice<T: Element>(shape: &[usize], data: &[T]) -> Result<Tensor, ShapeError> {
        Tensor::from_vec(shape.to_vec(), data.to_vec())
    }

    /// A rank-0 tensor holding `value`.
    ///
    /// ```
    /// use onnx_idx_check_kernels::Tensor;
    ///
    /// let t = Tensor::scalar(7i64);
    /// assert!(t.shape().is_empty());
    /// assert_eq!(t.to_vec::<i64>().unwrap(), [7]);
    /// ```
    pub fn scalar<T: Element>(value: T) -> Tensor {
        Tensor {
            dtype: T::DTYPE,
            shape: Vec::new(),
            data: super::Data::Owned(T::Word::into_storage(vec![value.to_word()])),
        }
    }

    /// The elements as `T`, in row-major order, when `T` is this tensor's element type.
    ///
    /// ```
    /// use onnx_idx_check_kernels::Tensor;
    ///
    /// let t = Tensor::from_vec(vec![2], vec![-1i32, 5])?;
    /// assert_eq!(t.to_vec::<i32>()?, [-1, 5]);
    /// assert!(t.to_vec::<i64>().is_err()); // no implicit conversion
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>, DTypeMismatch> {
        Ok(self.words::<T>()?.iter().map(T::from_word).collect())
    }

    /// The elements as a slice of `T`, without a copy, when `T` is this tensor's element type
    /// and a plain number (`None` for bool and string tensors: use [`Tensor::to_vec`]).
    ///
    /// ```
    /// use onnx_idx_check_kernels::Tensor;
    ///
    /// let t = Tensor::from_vec(vec![3], vec![1.5f64, 2.5, 3.5])?;
    /// assert_eq!(t.as_slice::<f64>(), Some(&[1.5, 2.5, 3.5][..]));
    /// assert_eq!(t.as_slice::<u64>(), None);
    /// # Ok::<(), onnx_idx_check_kernels::ShapeError>(())
    /// ```
    pub fn as_slice<T: Element>(&self) -> Option<&[T]> {
        T::view(self.words::<T>().ok()?)
    }

    fn words<T: Element>(&self) -> Result<&[T::Word], DTypeMismatch> {
        let mismatch = DTypeMismatch {
            requested: T::DTYPE,
            actual: self.dtype,
        };
        if self.dtype != T::DTYPE {
            return Err(mismatch);
        }
        self.elems::<T::Word>().ok_or(mismatch)
    }

    /// A tensor of any fixed-width or packed dtype from its little-endian bytes, as ONNX's
    /// `raw_data` holds them (packed types: first element in the low bits). The byte count must
    /// be exactly what the shape needs.
    ///
    /// ```
    /// use onnx_idx_check_kernels::{DType, Tensor};
    ///
    /// // Three int4 values (1, -2, 3) in two bytes.
    /// let t = Tensor::from_le_bytes(DType::Int4, vec![3], &[0xe1, 0x03])?;
    /// assert_eq!(t.to_le_bytes().unwrap(), [0xe1, 0x03]);
    /// assert!(Tensor::from_le_bytes(DType::Float, vec![2], &[0; 7]).is_err());
    /// # Ok::<(), onnx_idx_check_kernels::ShapeError>(())
    /// ```
    pub fn from_le_bytes(
        dtype: DType,
        shape: Vec<usize>,
        bytes: &[u8],
    ) -> Result<Tensor, ShapeError> {
        fn words<const N: usize, W>(bytes: &[u8], f: fn([u8; N]) -> W) -> Vec<W> {
            bytes
                .chunks_exact(N)
                .map(|c| {
                    let mut a = [0u8; N];
                    a.copy_from_slice(c);
                    f(a)
                })
                .collect()
        }
        let storage = match dtype.layout() {
            Layout::String => {
                return Err(ShapeError::Kind {
                    dtype,
                    storage: "little-endian bytes",
                })
            }
            Layout::Packed(bits) => {
                // The unused high bits of the last byte must be zero, as in `raw_data`.
                let used = super::numel(&shape)
                    .and_then(|n| n.checked_mul(bits as usize))
                    .map_or(0, |b| b % 8);
                if used != 0 && bytes.last().is_some_and(|&b| b >> used != 0) {
                    return Err(ShapeError::Kind {
                        dtype,
                        storage: "packed bytes whose unused high bits are not zero",
                    });
                }
                Storage::Packed(bytes.to_vec())
            }
            Layout::Bytes(w) => {
                let needed = super::numel(&shape)
                    .and_then(|n| n.checked_mul(w))
                    .ok_or_else(|| ShapeError::Overflow {
                        shape: shape.clone(),
                    })?;
                if bytes.len() != needed {
                    return Err(ShapeError::Size {
                        dtype,
                        shape,
                        needed,
                        actual: bytes.len(),
                        unit: "bytes",
                    });
                }
                match w {
                    1 => Storage::W8(bytes.to_vec()),
                    2 => Storage::W16(words(bytes, u16::from_le_bytes)),
                    4 => Storage::W32(words(bytes, u32::from_le_bytes)),
                    8 => Storage::W64(words(bytes, u64::from_le_bytes)),
                    _ => Storage::W128(words(bytes, u128::from_le_bytes)),
                }
            }
        };
        if dtype == DType::Bool && bytes.iter().any(|&b| b > 1) {
            return Err(ShapeError::Kind {
                dtype,
                storage: "bytes other than 0 and 1",
            });
        }
        Tensor::new(dtype, shape, storage)
    }

    /// The elements as little-endian bytes (`None` for strings).
    ///
    /// ```
    /// use onnx_idx_check_kernels::Tensor;
    ///
    /// let t = Tensor::from_vec(vec![2], vec![1u16, 0x0203])?;
    /// assert_eq!(t.to_le_bytes(), Some(vec![1, 0, 3, 2]));
    /// assert_eq!(Tensor::scalar(b"x".to_vec()).to_le_bytes(), None);
    /// # Ok::<(), onnx_idx_check_kernels::ShapeError>(())
    /// ```
    pub fn to_le_bytes(&self) -> Option<Vec<u8>> {
        fn bytes<W: Copy, const N: usize>(v: &[W], f: fn(W) -> [u8; N]) -> Vec<u8> {
            v.iter().flat_map(|&w| f(w)).collect()
        }
        Some(match self.storage() {
            Storage::W8(v) | Storage::Packed(v) => v.clone(),
            Storage::W16(v) => bytes(v, u16::to_le_bytes),
            Storage::W32(v) => bytes(v, u32::to_le_bytes),
            Storage::W64(v) => bytes(v, u64::to_le_bytes),
            Storage::W128(v) => bytes(v, u128::to_le_bytes),
            Storage::Str(_) => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_element_type_round_trips_and_keeps_its_bits() {
        fn round<T: Element + PartialEq + std::fmt::Debug>(v: Vec<T>) {
            let t = Tensor::from_vec(vec![v.len()], v.clone()).unwrap();
            assert_eq!(t.dtype(), T::DTYPE);
            assert_eq!(t.to_vec::<T>().unwrap(), v);
        }
        round(vec![1.5f32, -0.0, f32::INFINITY]);
        round(vec![f64::MIN_POSITIVE, -2.0]);
        round(vec![i8::MIN, -1, i8::MAX]);
        round(vec![i16::MIN, i16::MAX]);
        round(vec![i32::MIN, -7]);
        round(vec![i64::MIN, i64::MAX]);
        round(vec![0u8, 255]);
        round(vec![u16::MAX]);
        round(vec![u32::MAX]);
        round(vec![u64::MAX]);
        round(vec![true, false]);
        round(vec![f16::from_f32(0.5), f16::NEG_INFINITY]);
        round(vec![bf16::from_f32(-3.0)]);
        round(vec![Complex32::new(1.0, -2.0)]);
        round(vec![Complex64::new(-1.0, 0.25)]);
        round(vec![b"ab".to_vec(), vec![0xff]]);
        // NaN payloads survive: the element is its bits.
        let nan = f32::from_bits(0x7fc0_1234);
        let t = Tensor::from_vec(vec![1], vec![nan]).unwrap();
        assert_eq!(t.to_vec::<f32>().unwrap()[0].to_bits(), 0x7fc0_1234);
    }

    #[test]
    fn storage_words_are_the_little_endian_layout_onnx_uses() {
        // complex64: real part in the low half of the word.
        let t = Tensor::from_vec(vec![1], vec![Complex32::new(1.0, 2.0)]).unwrap();
        let want: Vec<u8> = [1.0f32.to_le_bytes(), 2.0f32.to_le_bytes()].concat();
        assert_eq!(t.to_le_bytes().unwrap(), want);
        let back = Tensor::from_le_bytes(DType::Complex64, vec![1], &want).unwrap();
        assert_eq!(back, t);
        // int16 -2 is 0xfffe.
        let t = Tensor::from_le_bytes(DType::Int16, vec![1], &[0xfe, 0xff]).unwrap();
        assert_eq!(t.to_vec::<i16>().unwrap(), [-2]);
    }

    #[test]
    fn the_wrong_element_type_or_size_is_an_error() {
        let t = Tensor::from_vec(vec![2], vec![1i32, 2]).unwrap();
        assert_eq!(
            t.to_vec::<u32>().unwrap_err().to_string(),
            "the tensor is int32, not uint32"
        );
        assert!(t.as_slice::<f32>().is_none());
        assert!(Tensor::from_vec(vec![3], vec![1i32, 2]).is_err());
        assert!(Tensor::from_le_bytes(DType::Int32, vec![2], &[0; 7]).is_err());
        assert!(Tensor::from_le_bytes(DType::Int32, vec![2], &[0; 12]).is_err());
        assert!(Tensor::from_le_bytes(DType::String, vec![0], &[]).is_err());
        assert!(Tensor::from_le_bytes(DType::Bool, vec![1], &[2]).is_err());
        assert!(Tensor::from_le_bytes(DType::Int4, vec![3], &[0; 3]).is_err());
        assert!(Tensor::from_le_bytes(DType::Int4, vec![3], &[0, 0x10]).is_err());
        assert!(Tensor::from_le_bytes(DType::Int4, vec![3], &[0, 0x0f]).is_ok());
    }
}
