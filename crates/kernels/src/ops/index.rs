//! Axis and index normalisation shared by the kernels: checked arithmetic, messages that name the
//! position, the value and the valid range (decision D3).

use super::SpecError;
use crate::spec_err;
use crate::tensor::{unravel, Tensor};

/// Normalises `axis` against `rank` (negative counts from the back).
pub fn normalize_axis(axis: i64, rank: usize, what: &str) -> Result<usize, SpecError> {
    let r = i64::try_from(rank).unwrap_or(i64::MAX);
    let a = if axis < 0 {
        axis.checked_add(r)
    } else {
        Some(axis)
    };
    match a {
        Some(a) if (0..r).contains(&a) => Ok(a as usize),
        _ => Err(spec_err!(
            "{what} {axis} is out of range [{}, {}] for rank {rank}",
            -r,
            r - 1
        )),
    }
}

/// Whether negative indices count from the back (opset 11 on) or are out of range (Gather-1,
/// Scatter-9; decision D2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Negatives {
    /// `-1` is the last element.
    FromBack,
    /// Negative values are out of range at this operator version (named in the message).
    Forbidden {
        /// The operator.
        op: &'static str,
        /// Its version.
        since: i64,
        /// The first opset of its domain whose version counts negatives from the back (11 for
        /// ONNX, 8 for OpenVINO's Gather).
        allowed_from: i64,
        /// The decision that forbids them where the spec does not (D2 at ONNX Gather-1 and
        /// Scatter-9); `None` where the spec's own range starts at 0 (OpenVINO Gather-1, -7).
        rule: Option<crate::ops::Decision>,
    },
}

/// `indices[1,0]` (or `indices` for a scalar), for messages.
pub fn position(name: &str, flat: usize, shape: &[usize]) -> String {
    if shape.is_empty() {
        return format!("{name} (a scalar)");
    }
    let coords: Vec<String> = unravel(flat, shape).iter().map(|c| c.to_string()).collect();
    format!("{name}[{}]", coords.join(","))
}

/// Reads an integer index tensor and normalises every value against `dim` (the size of `axis`),
/// failing on the first value out of range, before any output is written.
pub fn normalize_indices(
    indices: &Tensor,
    name: &str,
    dim: usize,
    axis: usize,
    negatives: Negatives,
) -> Result<Vec<usize>, SpecError> {
    let values = indices.to_i64_vec().ok_or_else(|| {
        spec_err!(
            "{name} must be an integer tensor, found {}",
            indices.dtype()
        )
    })?;
    let s = i64::try_from(dim).unwrap_or(i64::MAX);
    let mut out = Vec::with_capacity(values.len());
    for (i, &k) in values.iter().enumerate() {
        let norm = if k < 0 {
            match negatives {
                Negatives::FromBack => k.checked_add(s),
                Negatives::Forbidden {
                    op,
                    since,
                    allowed_from,
                    rule,
                } => {
                    let message = format!(
                        "{} = {k} is negative, which {op}-{since} does not allow (negative indices arrive with opset {allowed_from}); valid range [0, {}] for axis {axis} (size {dim})",
                        position(name, i, indices.shape()),
                        s - 1
                    );
                    return Err(match rule {
                        Some(rule) => SpecError::Decision { rule, message },
                        None => SpecError::Violation(message),
                    });
                }
            }
        } else {
            Some(k)
        };
        match norm {
            Some(v) if v >= 0 && v < s => out.push(v as usize),
            _ => {
                let lo = match negatives {
                    Negatives::FromBack => -s,
                    Negatives::Forbidden { .. } => 0,
                };
                return Err(if dim == 0 {
                    spec_err!(
                        "{} = {k} is out of range: axis {axis} has size 0",
                        position(name, i, indices.shape())
                    )
                } else {
                    spec_err!(
                        "{} = {k} is out of range [{lo}, {}] for axis {axis} (size {dim})",
                        position(name, i, indices.shape()),
                        s - 1
                    )
                });
            }
        }
    }
    Ok(out)
}

/// For GatherND/ScatterND: reads `indices` (last dim `k = dims.len()`) and turns each k-tuple into
/// the row-major offset it addresses within `dims` (the data dims it indexes, starting at data
/// dimension `first_dim`), normalising negatives and failing on the first component out of range.
pub fn tuple_offsets(
    indices: &Tensor,
    dims: &[usize],
    first_dim: usize,
) -> Result<Vec<usize>, SpecError> {
    let values = indices.to_i64_vec().ok_or_else(|| {
        spec_err!(
            "indices must be an integer tensor, found {}",
            indices.dtype()
        )
    })?;
    let k = dims.len();
    if k == 0 {
        let tuples =
            crate::tensor::numel(&indices.shape()[..indices.rank().saturating_sub(1)]).unwrap_or(0);
        return Ok(vec![0; tuples]);
    }
    let strides = crate::tensor::strides(dims);
    let mut out = Vec::with_capacity(values.len() / k);
    for (t, tuple) in values.chunks_exact(k).enumerate() {
        let mut offset = 0usize;
        for (j, &v) in tuple.iter().enumerate() {
            let s = i64::try_from(dims[j]).unwrap_or(i64::MAX);
            let norm = if v < 0 { v.checked_add(s) } else { Some(v) };
            match norm {
                Some(n) if n >= 0 && n < s => offset += n as usize * strides[j],
                _ => {
                    let pos = position("indices", t * k + j, indices.shape());
                    return Err(if s == 0 {
                        spec_err!(
                            "{pos} = {v} is out of range: data dimension {} has size 0",
                            first_dim + j
                        )
                    } else {
                        spec_err!(
                            "{pos} = {v} is out of range [{}, {}] for data dimension {} (size {s})",
                            -s,
                            s - 1,
                            first_dim + j
                        )
                    });
                }
            }
        }
        out.push(offset);
    }
    Ok(out)
}

/// An index tensor's values, borrowed when they are int32 or int64 words (no copy), widened
/// otherwise (OpenVINO accepts any integer type).
pub enum Indices<'a> {
    /// int32 words.
    I32(&'a [i32]),
    /// int64 words.
    I64(&'a [i64]),
    /// Any other integer type, widened.
    Wide(Vec<i64>),
}

impl<'a> Indices<'a> {
    /// The values of an integer tensor.
    pub fn of(t: &'a Tensor) -> Option<Indices<'a>> {
        use crate::tensor::DType;
        Some(match t.dtype() {
            DType::Int32 => Indices::I32(bytemuck::cast_slice(t.elems::<u32>()?)),
            DType::Int64 => Indices::I64(bytemuck::cast_slice(t.elems::<u64>()?)),
            _ => Indices::Wide(t.to_i64_vec()?),
        })
    }
}

/// Evaluates `$body` with `$v` bound to the index words as `&[i32]` or `&[i64]`.
macro_rules! with_indices {
    ($indices:expr, |$v:ident| $body:expr) => {
        match $indices {
            $crate::ops::index::Indices::I32($v) => $body,
            $crate::ops::index::Indices::I64($v) => $body,
            $crate::ops::index::Indices::Wide(ref w) => {
                let $v: &[i64] = w;
                $body
            }
        }
    };
}
pub(crate) use with_indices;

/// Calls `$f::<T>($args)` with `T` the word type of the fixed-width `$dtype`; strings and packed
/// types evaluate `$other` instead.
macro_rules! dispatch_words {
    ($dtype:expr, $other:expr, $f:ident ( $($arg:expr),* $(,)? )) => {
        match $dtype.layout() {
            $crate::tensor::Layout::Bytes(1) => $f::<u8>($($arg),*),
            $crate::tensor::Layout::Bytes(2) => $f::<u16>($($arg),*),
            $crate::tensor::Layout::Bytes(4) => $f::<u32>($($arg),*),
            $crate::tensor::Layout::Bytes(8) => $f::<u64>($($arg),*),
            $crate::tensor::Layout::Bytes(_) => $f::<u128>($($arg),*),
            _ => $other,
        }
    };
}
pub(crate) use dispatch_words;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::DType;

    fn idx(shape: Vec<usize>, v: Vec<i64>) -> Tensor {
        Tensor::from_elems(
            DType::Int64,
            shape,
            v.into_iter().map(|x| x as u64).collect(),
        )
        .unwrap()
    }

    #[test]
    fn message_names_position_value_and_range() {
        let t = idx(vec![2, 2], vec![0, 1, 4, 2]);
        let e = normalize_indices(&t, "indices", 4, 1, Negatives::FromBack).unwrap_err();
        assert_eq!(
            e.to_string(),
            "indices[1,0] = 4 is out of range [-4, 3] for axis 1 (size 4)"
        );
    }

    #[test]
    fn extreme_values_do_not_overflow() {
        let t = idx(vec![2], vec![i64::MIN, i64::MAX]);
        assert!(normalize_indices(&t, "indices", 3, 0, Negatives::FromBack).is_err());
        let t = idx(vec![1], vec![i64::MAX]);
        assert!(normalize_indices(&t, "indices", 3, 0, Negatives::FromBack).is_err());
    }

    #[test]
    fn negatives_count_from_the_back_or_are_refused() {
        let t = idx(vec![3], vec![-1, -3, 0]);
        assert_eq!(
            normalize_indices(&t, "indices", 3, 0, Negatives::FromBack).unwrap(),
            vec![2, 0, 0]
        );
        let e = normalize_indices(
            &t,
            "indices",
            3,
            0,
            Negatives::Forbidden {
                op: "Gather",
                since: 1,
                allowed_from: 11,
                rule: Some(crate::ops::Decision::D2),
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("opset 11"), "{e}");
        assert_eq!(e.decision(), Some(crate::ops::Decision::D2));
        let t = idx(vec![1], vec![-4]);
        assert!(normalize_indices(&t, "indices", 3, 0, Negatives::FromBack).is_err());
    }

    #[test]
    fn an_empty_axis_admits_no_index() {
        let t = idx(vec![1], vec![0]);
        let e = normalize_indices(&t, "indices", 0, 0, Negatives::FromBack).unwrap_err();
        assert!(e.to_string().contains("size 0"), "{e}");
    }

    #[test]
    fn axes_normalise_like_indices() {
        assert_eq!(normalize_axis(-1, 3, "axis"), Ok(2));
        assert!(normalize_axis(3, 3, "axis").is_err());
        assert!(normalize_axis(-4, 3, "axis").is_err());
        assert!(normalize_axis(i64::MIN, 3, "axis").is_err());
    }
}
