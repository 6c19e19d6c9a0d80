//! The tensor surgery shrinking needs: keeping some positions along one dimension, dropping a
//! dimension of size 1, rewriting index values and putting small, readable values in place of
//! the data. Every function returns `None` where it cannot apply (a packed sub-byte type, an
//! index dtype other than int32/int64), so that the step is skipped rather than a panic.

use onnx_idx_check::tensor::{DType, Storage, Tensor};

/// `v`'s elements at positions `keep` along the middle axis of an `outer x n x inner` layout.
fn pick<T: Clone>(v: &[T], outer: usize, n: usize, inner: usize, keep: &[usize]) -> Vec<T> {
    let mut out = Vec::with_capacity(outer * keep.len() * inner);
    for o in 0..outer {
        for &k in keep {
            let start = (o * n + k) * inner;
            out.extend_from_slice(&v[start..start + inner]);
        }
    }
    out
}

/// `t` with only the positions `keep` (in that order) along dimension `dim`.
pub(crate) fn take(t: &Tensor, dim: usize, keep: &[usize]) -> Option<Tensor> {
    let shape = t.shape();
    let n = *shape.get(dim)?;
    if keep.iter().any(|&k| k >= n) {
        return None;
    }
    let outer: usize = shape[..dim].iter().product();
    let inner: usize = shape[dim + 1..].iter().product();
    let storage = match t.storage() {
        Storage::W8(v) => Storage::W8(pick(v, outer, n, inner, keep)),
        Storage::W16(v) => Storage::W16(pick(v, outer, n, inner, keep)),
        Storage::W32(v) => Storage::W32(pick(v, outer, n, inner, keep)),
        Storage::W64(v) => Storage::W64(pick(v, outer, n, inner, keep)),
        Storage::W128(v) => Storage::W128(pick(v, outer, n, inner, keep)),
        Storage::Str(v) => Storage::Str(pick(v, outer, n, inner, keep)),
        // Sub-byte elements share bytes: no generated operator takes them as data.
        Storage::Packed(_) => return None,
    };
    let mut new_shape = shape.to_vec();
    new_shape[dim] = keep.len();
    Tensor::new(t.dtype(), new_shape, storage).ok()
}

/// `t` without dimension `dim`, which must have size 1 (the elements stay as they are).
pub(crate) fn remove_dim(t: &Tensor, dim: usize) -> Option<Tensor> {
    if t.shape().get(dim) != Some(&1) {
        return None;
    }
    let mut shape = t.shape().to_vec();
    shape.remove(dim);
    t.clone().reshaped(shape).ok()
}

/// An index tensor of `like`'s dtype and shape holding `values`.
pub(crate) fn index_tensor(like: &Tensor, values: Vec<i64>) -> Option<Tensor> {
    let shape = like.shape().to_vec();
    match like.dtype() {
        DType::Int64 => Tensor::from_vec(shape, values).ok(),
        DType::Int32 => {
            let v: Option<Vec<i32>> = values.iter().map(|&x| i32::try_from(x).ok()).collect();
            Tensor::from_vec(shape, v?).ok()
        }
        _ => None,
    }
}

/// The element `value` in `dtype`'s bits, for the dtypes a readable integer fits; `None` for
/// bool, packed types and float8 formats, whose values would not read as the integer.
fn word(dtype: DType, value: u64) -> Option<u128> {
    use half::{bf16, f16};
    Some(match dtype {
        DType::Float => u128::from((value as f32).to_bits()),
        DType::Double => u128::from((value as f64).to_bits()),
        DType::Float16 => u128::from(f16::from_f32(value as f32).to_bits()),
        DType::Bfloat16 => u128::from(bf16::from_f32(value as f32).to_bits()),
        DType::Complex64 => u128::from((value as f32).to_bits()),
        DType::Complex128 => u128::from((value as f64).to_bits()),
        DType::Int8
        | DType::Uint8
        | DType::Int16
        | DType::Uint16
        | DType::Int32
        | DType::Uint32
        | DType::Int64
        | DType::Uint64 => u128::from(value),
        _ => return None,
    })
}

/// `t`'s shape and dtype holding `first`, `first + 1`, ... (wrapping after 100 values, so that
/// 8-bit types stay readable), or zeros (empty strings) when `zero`.
pub(crate) fn readable(t: &Tensor, first: u64, zero: bool) -> Option<Tensor> {
    let n = t.numel();
    let value = |i: usize| if zero { 0 } else { first + (i % 100) as u64 };
    let storage = match t.storage() {
        Storage::Str(_) => Storage::Str(
            (0..n)
                .map(|i| {
                    if zero {
                        Vec::new()
                    } else {
                        value(i).to_string().into_bytes()
                    }
                })
                .collect(),
        ),
        Storage::W8(_) => Storage::W8(
            (0..n)
                .map(|i| word(t.dtype(), value(i)).map(|w| w as u8))
                .collect::<Option<_>>()?,
        ),
        Storage::W16(_) => Storage::W16(
            (0..n)
                .map(|i| word(t.dtype(), value(i)).map(|w| w as u16))
                .collect::<Option<_>>()?,
        ),
        Storage::W32(_) => Storage::W32(
            (0..n)
                .map(|i| word(t.dtype(), value(i)).map(|w| w as u32))
                .collect::<Option<_>>()?,
        ),
        Storage::W64(_) => Storage::W64(
            (0..n)
                .map(|i| word(t.dtype(), value(i)).map(|w| w as u64))
                .collect::<Option<_>>()?,
        ),
        Storage::W128(_) => Storage::W128(
            (0..n)
                .map(|i| word(t.dtype(), value(i)))
                .collect::<Option<_>>()?,
        ),
        Storage::Packed(_) => return None,
    };
    Tensor::new(t.dtype(), t.shape().to_vec(), storage).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn take_keeps_positions_along_a_middle_dimension() {
        let t = Tensor::from_vec(vec![2, 3], vec![1i64, 2, 3, 4, 5, 6]).unwrap();
        let k = take(&t, 1, &[2, 0]).unwrap();
        assert_eq!(k.shape(), [2, 2]);
        assert_eq!(k.to_i64_vec().unwrap(), [3, 1, 6, 4]);
        assert!(take(&t, 1, &[3]).is_none());
        assert!(take(&t, 2, &[0]).is_none());
        let r = remove_dim(&take(&t, 0, &[1]).unwrap(), 0).unwrap();
        assert_eq!(r.shape(), [3]);
    }

    #[test]
    fn readable_values_count_from_first_and_zero_empties_strings() {
        let t = Tensor::from_vec(vec![3], vec![0.5f32, -2.0, 7.0]).unwrap();
        let r = readable(&t, 1, false).unwrap();
        assert_eq!(r.to_vec::<f32>().unwrap(), [1.0, 2.0, 3.0]);
        let z = readable(&t, 1, true).unwrap();
        assert_eq!(z.to_vec::<f32>().unwrap(), [0.0, 0.0, 0.0]);
        let s = Tensor::new(
            DType::String,
            vec![2],
            Storage::Str(vec![b"x".to_vec(), b"y".to_vec()]),
        )
        .unwrap();
        let r = readable(&s, 1, false).unwrap();
        assert_eq!(
            r.storage(),
            &Storage::Str(vec![b"1".to_vec(), b"2".to_vec()])
        );
    }
}
