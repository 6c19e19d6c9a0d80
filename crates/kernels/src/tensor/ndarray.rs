//! Conversions between [`Tensor`] and [`ndarray`](::ndarray) arrays (cargo feature `ndarray`),
//! for runtimes that hold their tensors as arrays (tract among them).
//!
//! An array of any memory layout (transposed, sliced with steps, broadcast) becomes a tensor of
//! its elements in logical row-major order, the order `array.iter()` visits them, which is the
//! only order a [`Tensor`] knows. An owned array in standard layout gives its buffer to the
//! tensor without a copy where the element is stored as itself (every plain number except the
//! complex types, whose storage words are wider-aligned).

use super::{numel, DTypeMismatch, Elem, Element, Tensor};
use ::ndarray::{ArrayBase, ArrayD, Data, Dimension, IxDyn};
use thiserror::Error;

/// A tensor could not become an array of the requested element type.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ToArrayError {
    /// The tensor's dtype is not the one of the requested element type.
    #[error(transparent)]
    DType(#[from] DTypeMismatch),
    /// The shape has no elements but dims whose product ndarray cannot represent (it requires the
    /// product of the non-zero dims to fit in `isize`), e.g. `[0, 2^62, 4]`.
    #[error("shape {shape:?} cannot be an ndarray array: the product of its non-zero dims exceeds isize::MAX")]
    Shape {
        /// The tensor's shape.
        shape: Vec<usize>,
    },
}

impl Tensor {
    /// A tensor of the array's element type and shape, holding its elements in logical row-major
    /// order whatever the array's memory layout (views, transposes, steps, broadcasts). An owned
    /// array in standard layout is moved in without a copy of its elements where the storage
    /// allows it.
    ///
    /// ```
    /// use ndarray::{array, s};
    /// use onnx_idx_check_kernels::{DType, Tensor};
    ///
    /// let a = array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]];
    /// // The transpose is read in its own row-major order, not in memory order.
    /// let t = Tensor::from_array(a.t());
    /// assert_eq!((t.dtype(), t.shape()), (DType::Float, &[3, 2][..]));
    /// assert_eq!(t.to_vec::<f32>()?, [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    /// // Every other column.
    /// let t = Tensor::from_array(a.slice(s![.., ..;2]));
    /// assert_eq!(t.to_vec::<f32>()?, [1.0, 3.0, 4.0, 6.0]);
    /// # Ok::<(), onnx_idx_check_kernels::DTypeMismatch>(())
    /// ```
    pub fn from_array<S, D>(array: ArrayBase<S, D>) -> Tensor
    where
        S: Data,
        S::Elem: Element,
        D: Dimension,
    {
        let shape = array.shape().to_vec();
        let len = array.len();
        let values: Vec<S::Elem> = if array.is_standard_layout() {
            // Free for an owned array, one copy for a view.
            let (mut values, offset) = array.into_owned().into_raw_vec_and_offset();
            // Standard layout: the elements are contiguous from `offset`, in order.
            let start = offset.unwrap_or(0);
            values.truncate(start + len);
            values.drain(..start);
            values
        } else {
            array.iter().cloned().collect()
        };
        debug_assert_eq!(values.len(), len);
        debug_assert_eq!(numel(&shape), Some(len));
        // ndarray keeps the product of the non-zero dims within isize, so the element count of
        // `shape` cannot overflow and matches the values.
        Tensor {
            dtype: S::Elem::DTYPE,
            shape,
            data: super::Data::Owned(<S::Elem as Element>::Word::into_storage(
                S::Elem::into_words(values),
            )),
        }
    }

    /// The elements as an array of `T` with the tensor's shape, when `T` is the tensor's element
    /// type.
    ///
    /// ```
    /// use ndarray::{array, ArrayD};
    /// use onnx_idx_check_kernels::Tensor;
    ///
    /// let t = Tensor::from_vec(vec![2, 2], vec![1i64, 2, 3, 4])?;
    /// let a: ArrayD<i64> = t.to_array()?;
    /// assert_eq!(a, array![[1i64, 2], [3, 4]].into_dyn());
    /// assert!(t.to_array::<i32>().is_err()); // no implicit conversion
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn to_array<T: Element>(&self) -> Result<ArrayD<T>, ToArrayError> {
        let values = self.to_vec::<T>()?;
        ArrayD::from_shape_vec(IxDyn(&self.shape), values).map_err(|_| ToArrayError::Shape {
            shape: self.shape.clone(),
        })
    }
}

/// [`Tensor::from_array`].
///
/// ```
/// use ndarray::array;
/// use onnx_idx_check_kernels::Tensor;
///
/// let t: Tensor = array![true, false].into();
/// assert_eq!(t.to_vec::<bool>()?, [true, false]);
/// # Ok::<(), onnx_idx_check_kernels::DTypeMismatch>(())
/// ```
impl<S, D> From<ArrayBase<S, D>> for Tensor
where
    S: Data,
    S::Elem: Element,
    D: Dimension,
{
    fn from(array: ArrayBase<S, D>) -> Tensor {
        Tensor::from_array(array)
    }
}

/// [`Tensor::to_array`].
///
/// ```
/// use ndarray::ArrayD;
/// use onnx_idx_check_kernels::Tensor;
///
/// let t = Tensor::scalar(2.5f64);
/// let a = ArrayD::<f64>::try_from(&t)?;
/// assert_eq!((a.ndim(), a[[]]), (0, 2.5));
/// # Ok::<(), onnx_idx_check_kernels::tensor::ToArrayError>(())
/// ```
impl<T: Element> TryFrom<&Tensor> for ArrayD<T> {
    type Error = ToArrayError;

    fn try_from(tensor: &Tensor) -> Result<ArrayD<T>, ToArrayError> {
        tensor.to_array()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DType;
    use ::ndarray::{array, s, Array, Array2, Array3, ArrayView1, Axis};
    use half::f16;
    use num_complex::Complex32;

    /// The elements of a 2-D array read with its own indexing, row by row: the expected order.
    fn logical2<T: Clone>(a: &ArrayBase<impl Data<Elem = T>, ::ndarray::Ix2>) -> Vec<T> {
        let (r, c) = a.dim();
        let mut v = Vec::new();
        for i in 0..r {
            for j in 0..c {
                v.push(a[[i, j]].clone());
            }
        }
        v
    }

    #[test]
    fn a_transposed_array_is_read_in_its_logical_order() {
        let a = Array2::from_shape_fn((3, 4), |(i, j)| (10 * i + j) as i32);
        let at = a.t();
        assert!(!at.is_standard_layout());
        let t = Tensor::from_array(at);
        assert_eq!(t.shape(), [4, 3]);
        assert_eq!(t.to_vec::<i32>().unwrap(), logical2(&at));
        // Spot-check against the numbers themselves: row 1 of the transpose is column 1.
        assert_eq!(&t.to_vec::<i32>().unwrap()[3..6], [1, 11, 21]);
        // An owned array in Fortran order too.
        let f = at.to_owned();
        assert!(!f.is_standard_layout());
        assert_eq!(
            Tensor::from_array(f.clone()).to_vec::<i32>().unwrap(),
            logical2(&f)
        );
    }

    #[test]
    fn stepped_and_reversed_slices_are_read_in_their_logical_order() {
        let a = Array2::from_shape_fn((5, 6), |(i, j)| (i * 6 + j) as u16);
        let v = a.slice(s![1..;2, ..;-3]);
        let t = Tensor::from_array(v);
        assert_eq!(t.shape(), [2, 2]);
        assert_eq!(t.to_vec::<u16>().unwrap(), logical2(&v));
        // Rows 1 and 3, columns 5 and 2 (a negative step starts from the end).
        assert_eq!(t.to_vec::<u16>().unwrap(), [11, 8, 23, 20]);
        // An owned array sliced in place keeps its whole buffer with an offset.
        let mut owned = a.clone();
        owned.slice_collapse(s![2.., ..]);
        assert!(owned.is_standard_layout());
        let t = Tensor::from_array(owned.clone());
        assert_eq!(t.to_vec::<u16>().unwrap(), logical2(&owned));
        assert_eq!(t.to_vec::<u16>().unwrap()[0], 12);
        // Sliced in place to a non-contiguous window.
        let mut owned = a.clone();
        owned.slice_collapse(s![1..3, 2..4]);
        assert!(!owned.is_standard_layout());
        assert_eq!(
            Tensor::from_array(owned.clone()).to_vec::<u16>().unwrap(),
            logical2(&owned)
        );
    }

    #[test]
    fn a_broadcast_view_repeats_its_elements() {
        let row = array![1.5f64, -2.0, 0.25];
        let b = row.broadcast((2, 3)).unwrap();
        let t = Tensor::from_array(b);
        assert_eq!(t.shape(), [2, 3]);
        assert_eq!(t.to_vec::<f64>().unwrap(), logical2(&b));
        let col = array![[7i8], [8]];
        let b = col.broadcast((2, 4)).unwrap();
        assert_eq!(
            Tensor::from_array(b).to_vec::<i8>().unwrap(),
            [7, 7, 7, 7, 8, 8, 8, 8]
        );
    }

    #[test]
    fn higher_rank_views_follow_the_array_indexing() {
        let a = Array3::from_shape_fn((2, 3, 4), |(i, j, k)| (i * 100 + j * 10 + k) as u64);
        let v = a.view().permuted_axes([2, 0, 1]);
        let v = v.slice(s![..;-2, .., 1..]);
        let t = Tensor::from_array(v);
        let mut want = Vec::new();
        for i in 0..v.shape()[0] {
            for j in 0..v.shape()[1] {
                for k in 0..v.shape()[2] {
                    want.push(v[[i, j, k]]);
                }
            }
        }
        assert_eq!(t.shape(), v.shape());
        assert_eq!(t.to_vec::<u64>().unwrap(), want);
        // Back to an array: equal to the view, element by element.
        assert_eq!(t.to_array::<u64>().unwrap(), v.into_dyn());
    }

    #[test]
    fn zero_size_and_rank_0_arrays_keep_their_shape() {
        let e = Array3::<f32>::zeros((2, 0, 5));
        let t = Tensor::from_array(e.view());
        assert_eq!((t.shape(), t.numel()), (&[2, 0, 5][..], 0));
        assert_eq!(t.to_array::<f32>().unwrap().shape(), [2, 0, 5]);
        // An empty view of a non-empty array.
        let a = Array2::from_elem((3, 3), 1u8);
        let t = Tensor::from_array(a.slice(s![1..1, ..]));
        assert_eq!(t.shape(), [0, 3]);
        let z = Array::from_elem((), 42i16);
        let t = Tensor::from_array(z.clone());
        assert!(t.shape().is_empty());
        assert_eq!(t.to_vec::<i16>().unwrap(), [z[[]]]);
        let back = t.to_array::<i16>().unwrap();
        assert_eq!((back.ndim(), back[[]]), (0, 42));
    }

    #[test]
    fn a_zero_size_tensor_too_large_for_ndarray_is_an_error() {
        let t = Tensor::from_vec(vec![0, 1 << 62, 4], Vec::<f32>::new()).unwrap();
        assert_eq!(
            t.to_array::<f32>().unwrap_err(),
            ToArrayError::Shape {
                shape: vec![0, 1 << 62, 4]
            }
        );
    }

    #[test]
    fn strings_bool_and_halves_convert_both_ways() {
        let a = array![[b"ab".to_vec(), vec![]], [vec![0xff], b"z".to_vec()]];
        let t = Tensor::from_array(a.t());
        assert_eq!(t.dtype(), DType::String);
        assert_eq!(t.to_vec::<Vec<u8>>().unwrap(), logical2(&a.t()));
        assert_eq!(t.to_array::<Vec<u8>>().unwrap(), a.t().into_dyn());

        let b = array![[true, false, false], [false, true, true]];
        let t: Tensor = b.slice(s![.., 1..]).into();
        assert_eq!(t.dtype(), DType::Bool);
        assert_eq!(t.to_vec::<bool>().unwrap(), [false, false, true, true]);
        // Bool words are 0 and 1, as every other constructor makes them.
        assert_eq!(t.to_le_bytes().unwrap(), [0, 0, 1, 1]);

        let halves = [f16::from_f32(0.5), f16::NEG_INFINITY];
        let h = ArrayView1::from(&halves[..]);
        let t = Tensor::from_array(h);
        assert_eq!(t.dtype(), DType::Float16);
        assert_eq!(t.to_vec::<f16>().unwrap(), h.to_vec());

        // Complex storage words are wider-aligned: the elements are copied, still in order.
        let c = array![Complex32::new(1.0, 2.0), Complex32::new(-3.0, 0.5)];
        let t = Tensor::from_array(c.clone());
        assert_eq!(t.to_array::<Complex32>().unwrap(), c.into_dyn());
    }

    #[test]
    fn an_owned_standard_array_moves_its_buffer() {
        let a = Array2::from_shape_fn((64, 64), |(i, j)| (i * 64 + j) as f32);
        let ptr = a.as_ptr() as usize;
        let t = Tensor::from_array(a);
        assert_eq!(t.as_slice::<f32>().unwrap().as_ptr() as usize, ptr);
        assert_eq!(t.as_slice::<f32>().unwrap()[64 * 3 + 5], 197.0);
    }

    #[test]
    fn the_wrong_element_type_is_an_error() {
        let t = Tensor::from_vec(vec![2], vec![1i32, 2]).unwrap();
        assert_eq!(
            ArrayD::<u32>::try_from(&t).unwrap_err().to_string(),
            "the tensor is int32, not uint32"
        );
        // Axis-collapsed views are still read correctly.
        let a = Array2::from_shape_fn((3, 2), |(i, j)| (i * 2 + j) as i32);
        let col = a.index_axis(Axis(1), 1);
        assert_eq!(Tensor::from_array(col).to_vec::<i32>().unwrap(), [1, 3, 5]);
    }
}
