//! The shapes of provenance the operators share ([`Semantics`]: gathered or scattered, element by
//! element), built under some [`Quirks`], and their execution with the kernels' own element copies
//! and reduction arithmetic, so that a reproduction is bit-exact.

use super::subject::{Neg, Oob, Quirks};
use crate::ops::gather_elements::{check_element_shapes, for_each_element};
use crate::ops::gather_nd::check_nd_shapes;
use crate::ops::reduction::{self, Reduction, Visit};
use crate::tensor::{numel, strides, unravel, DType, Layout, Storage, Tensor};

/// Where an index points.
enum Resolved {
    At(usize),
    Zero,
    Invalid,
}

fn resolve(k: i64, s: usize, q: &Quirks) -> Resolved {
    let si = i64::try_from(s).unwrap_or(i64::MAX);
    if (0..si).contains(&k) {
        return Resolved::At(k as usize);
    }
    if k < 0 && k >= -si {
        return match q.neg {
            Neg::FromBack => Resolved::At((k + si) as usize),
            Neg::AsIndexZero => Resolved::At(0),
            Neg::AsZeroValue => Resolved::Zero,
        };
    }
    if s == 0 {
        return Resolved::Invalid;
    }
    match q.oob {
        Oob::Invalid => Resolved::Invalid,
        Oob::Wrap => Resolved::At(k.rem_euclid(si) as usize),
        Oob::Clamp => Resolved::At(if k < 0 { 0 } else { s - 1 }),
        Oob::Zero => Resolved::Zero,
    }
}

/// The op's index input as values and shape, for messages.
pub struct IndexInfo {
    values: Vec<i64>,
    shape: Vec<usize>,
    /// The axis indexed (element-wise ops), or `None` for tuple indices (GatherND/ScatterND).
    axis: Option<usize>,
    /// Tuple length for ND ops.
    tuple: usize,
}

impl IndexInfo {
    /// `indices[1,0] = -2 on axis 0`, or `indices[1,:] = [0, -1]` for a tuple.
    pub(super) fn describe(&self, pos: usize) -> String {
        let coords = |flat: usize, shape: &[usize]| {
            unravel(flat, shape)
                .iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        match self.axis {
            Some(axis) if self.shape.is_empty() => {
                format!(
                    "indices = {} on axis {axis}",
                    self.values.get(pos).copied().unwrap_or(0)
                )
            }
            Some(axis) => format!(
                "indices[{}] = {} on axis {axis}",
                coords(pos, &self.shape),
                self.values.get(pos).copied().unwrap_or(0)
            ),
            None => {
                let lead = &self.shape[..self.shape.len().saturating_sub(1)];
                let tuple: Vec<String> = self
                    .values
                    .iter()
                    .skip(pos * self.tuple)
                    .take(self.tuple)
                    .map(|v| v.to_string())
                    .collect();
                let c = coords(pos, lead);
                let sep = if c.is_empty() { "" } else { "," };
                format!("indices[{c}{sep}:] = [{}]", tuple.join(", "))
            }
        }
    }
}

/// What an op does, element by element, under some quirks.
pub enum Semantics<'a> {
    /// Each output element is a copy of one data element (or zero).
    Gathered {
        /// The tensor read from.
        data: &'a Tensor,
        /// The output's shape.
        shape: Vec<usize>,
        /// Per output element: (data flat offset or None for zero, index position).
        origin: Vec<(Option<usize>, usize)>,
        /// The index input, for messages.
        index: IndexInfo,
    },
    /// The output starts as data (or zeros) and receives updates in order.
    Scattered {
        /// The starting tensor, or `None` for zeros.
        base: Option<&'a Tensor>,
        /// The output's dtype.
        dtype: DType,
        /// The output's shape.
        shape: Vec<usize>,
        /// The values written.
        updates: &'a Tensor,
        /// (output flat, updates flat, index position), in application order.
        pairs: Vec<(usize, usize, usize)>,
        /// How an update combines with what is there.
        reduction: Reduction,
        /// The index input, for messages.
        index: IndexInfo,
    },
}

/// The provenance shape shared by the ops that work like gather.
pub fn gather<'a>(
    data: &'a Tensor,
    indices: &Tensor,
    axis: usize,
    b: usize,
    q: &Quirks,
) -> Option<Semantics<'a>> {
    // A quirk (axis 0 forced) can name an axis the tensor does not have.
    if axis >= data.rank() {
        return None;
    }
    let ds = data.shape();
    let is = indices.shape();
    if ds.is_empty() || b > axis || b > is.len() || ds[..b] != is[..b] {
        return None;
    }
    let values = indices.to_i64_vec()?;
    let s = ds[axis];
    let (batch, mid, inner) = (
        numel(&ds[..b])?,
        numel(&ds[b..axis])?,
        numel(&ds[axis + 1..])?,
    );
    let per_batch = numel(&is[b..])?;
    let count = numel(&[batch, mid, per_batch, inner])?;
    if !q.admits(count) {
        return None;
    }
    let mut origin = Vec::with_capacity(count);
    for bi in 0..batch {
        for m in 0..mid {
            for j in 0..per_batch {
                let pos = bi * per_batch + j;
                let src = match resolve(values[pos], s, q) {
                    Resolved::At(k) => Some(((bi * mid + m) * s + k) * inner),
                    Resolved::Zero => None,
                    Resolved::Invalid => return None,
                };
                for e in 0..inner {
                    origin.push((src.map(|s| s + e), pos));
                }
            }
        }
    }
    let mut shape = ds[..axis].to_vec();
    shape.extend_from_slice(&is[b..]);
    shape.extend_from_slice(&ds[axis + 1..]);
    Some(Semantics::Gathered {
        data,
        shape,
        origin,
        index: IndexInfo {
            values,
            shape: is.to_vec(),
            axis: Some(axis),
            tuple: 0,
        },
    })
}

/// The provenance shape shared by the ops that work like gather elements.
pub fn gather_elements<'a>(
    data: &'a Tensor,
    indices: &Tensor,
    axis: usize,
    q: &Quirks,
) -> Option<Semantics<'a>> {
    // A quirk (axis 0 forced) can name an axis the tensor does not have.
    let (ds, is) = (data.shape(), indices.shape());
    // The kernel's own shape rules (equal ranks, off-axis dims no larger, a real axis).
    check_element_shapes(ds, is, axis as i64).ok()?;
    let values = indices.to_i64_vec()?;
    let stride = strides(ds)[axis];
    let mut origin = Vec::with_capacity(values.len());
    let mut ok = true;
    for_each_element(is, ds, axis, |pos, base| {
        let src = match resolve(values[pos], ds[axis], q) {
            Resolved::At(k) => Some(base + k * stride),
            Resolved::Zero => None,
            Resolved::Invalid => {
                ok = false;
                None
            }
        };
        origin.push((src, pos));
    });
    ok.then(|| Semantics::Gathered {
        data,
        shape: is.to_vec(),
        origin,
        index: IndexInfo {
            values,
            shape: is.to_vec(),
            axis: Some(axis),
            tuple: 0,
        },
    })
}

/// Resolves a k-tuple against `dims`; `None` inside for a zero result, outer `None` for invalid.
fn resolve_tuple(tuple: &[i64], dims: &[usize], q: &Quirks) -> Option<Option<usize>> {
    let st = strides(dims);
    let mut off = 0;
    for (j, &v) in tuple.iter().enumerate() {
        match resolve(v, dims[j], q) {
            Resolved::At(k) => off += k * st[j],
            Resolved::Zero => return Some(None),
            Resolved::Invalid => return None,
        }
    }
    Some(Some(off))
}

/// The provenance shape shared by the ops that work like gather nd.
pub fn gather_nd<'a>(
    data: &'a Tensor,
    indices: &Tensor,
    b: usize,
    q: &Quirks,
) -> Option<Semantics<'a>> {
    let (ds, is) = (data.shape(), indices.shape());
    // The kernel's own shape rules.
    let (b, k) = check_nd_shapes(ds, is, i64::try_from(b).ok()?).ok()?;
    let qr = is.len();
    let values = indices.to_i64_vec()?;
    let (batches, tuples) = (numel(&ds[..b])?, numel(&is[b..qr - 1])?);
    let (block, slice) = (numel(&ds[b..])?, numel(&ds[b + k..])?);
    if !q.admits(numel(&[batches, tuples, slice])?) {
        return None;
    }
    let mut origin = Vec::new();
    for bi in 0..batches {
        for t in 0..tuples {
            let pos = bi * tuples + t;
            let off = resolve_tuple(&values[pos * k..(pos + 1) * k], &ds[b..b + k], q)?;
            for e in 0..slice {
                origin.push((off.map(|o| bi * block + o * slice + e), pos));
            }
        }
    }
    let mut shape = is[..qr - 1].to_vec();
    shape.extend_from_slice(&ds[b + k..]);
    Some(Semantics::Gathered {
        data,
        shape,
        origin,
        index: IndexInfo {
            values,
            shape: is.to_vec(),
            axis: None,
            tuple: k,
        },
    })
}

#[allow(clippy::too_many_arguments)]
/// The provenance shape shared by the ops that work like scatter elements.
pub fn scatter_elements<'a>(
    base: Option<&'a Tensor>,
    dtype: DType,
    shape: &[usize],
    indices: &Tensor,
    updates: &'a Tensor,
    axis: usize,
    reduction: Reduction,
    q: &Quirks,
) -> Option<Semantics<'a>> {
    let is = indices.shape();
    // The kernel's own shape rules (a quirk forcing axis 0 can name an axis the data lacks).
    if updates.shape() != is || !q.admits(numel(shape)?) {
        return None;
    }
    check_element_shapes(shape, is, axis as i64).ok()?;
    let values = indices.to_i64_vec()?;
    let stride = strides(shape)[axis];
    let mut pairs = Vec::with_capacity(values.len());
    let mut ok = true;
    for_each_element(is, shape, axis, |pos, b| {
        match resolve(values[pos], shape[axis], q) {
            Resolved::At(k) => pairs.push((b + k * stride, pos, pos)),
            Resolved::Zero => {}
            Resolved::Invalid => ok = false,
        }
    });
    if q.reverse {
        pairs.reverse();
    }
    ok.then(|| Semantics::Scattered {
        base,
        dtype,
        shape: shape.to_vec(),
        updates,
        pairs,
        reduction,
        index: IndexInfo {
            values,
            shape: is.to_vec(),
            axis: Some(axis),
            tuple: 0,
        },
    })
}

/// The provenance shape shared by the ops that work like scatter nd: the output (of `shape`)
/// starts as `base`, or zeros, and each index tuple's slice of `updates` goes (or reduces) to the
/// slice it names within its batch (the first `b` dims of `shape` and `indices`).
#[allow(clippy::too_many_arguments)]
pub fn scatter_nd<'a>(
    base: Option<&'a Tensor>,
    dtype: DType,
    shape: &[usize],
    indices: &Tensor,
    updates: &'a Tensor,
    b: usize,
    reduction: Reduction,
    q: &Quirks,
) -> Option<Semantics<'a>> {
    let is = indices.shape();
    let qr = is.len();
    if qr <= b || b > shape.len() || shape[..b] != is[..b] || !q.admits(numel(shape)?) {
        return None;
    }
    let k = is[qr - 1];
    if b + k > shape.len() {
        return None;
    }
    let mut want = is[..qr - 1].to_vec();
    want.extend_from_slice(&shape[b + k..]);
    if updates.shape() != want.as_slice() {
        return None;
    }
    let values = indices.to_i64_vec()?;
    let dims = &shape[b..b + k];
    let (slots, slice) = (numel(dims)?, numel(&shape[b + k..])?);
    let per_batch = numel(&is[b..qr - 1])?;
    let mut pairs = Vec::new();
    for t in 0..numel(&is[..qr - 1])? {
        if let Some(off) = resolve_tuple(&values[t * k..(t + 1) * k], dims, q)? {
            let batch = t.checked_div(per_batch).unwrap_or(0);
            for e in 0..slice {
                pairs.push(((batch * slots + off) * slice + e, t * slice + e, t));
            }
        }
    }
    if q.reverse {
        pairs.reverse();
    }
    Some(Semantics::Scattered {
        base,
        dtype,
        shape: shape.to_vec(),
        updates,
        pairs,
        reduction,
        index: IndexInfo {
            values,
            shape: is.to_vec(),
            axis: None,
            tuple: k,
        },
    })
}

/// The provenance shape shared by the ops that work like gather grad.
pub fn gather_grad<'a>(
    shape: &[usize],
    indices: &Tensor,
    dy: &'a Tensor,
    axis: usize,
    q: &Quirks,
) -> Option<Semantics<'a>> {
    // A quirk (axis 0 forced) can name an axis the tensor does not have.
    if axis >= shape.len() {
        return None;
    }
    let mut want = shape[..axis].to_vec();
    want.extend_from_slice(indices.shape());
    want.extend_from_slice(&shape[axis + 1..]);
    if dy.shape() != want.as_slice() || !q.admits(numel(shape)?) {
        return None;
    }
    let values = indices.to_i64_vec()?;
    let (outer, s, inner, n) = (
        numel(&shape[..axis])?,
        shape[axis],
        numel(&shape[axis + 1..])?,
        values.len(),
    );
    let mut pairs = Vec::new();
    for o in 0..outer {
        for (j, &v) in values.iter().enumerate() {
            match resolve(v, s, q) {
                Resolved::At(k) => {
                    for e in 0..inner {
                        pairs.push(((o * s + k) * inner + e, (o * n + j) * inner + e, j));
                    }
                }
                Resolved::Zero => {}
                Resolved::Invalid => return None,
            }
        }
    }
    if q.reverse {
        pairs.reverse();
    }
    Some(Semantics::Scattered {
        base: None,
        dtype: dy.dtype(),
        shape: shape.to_vec(),
        updates: dy,
        pairs,
        reduction: q.reduction.unwrap_or(Reduction::Add),
        index: IndexInfo {
            values,
            shape: indices.shape().to_vec(),
            axis: Some(axis),
            tuple: 0,
        },
    })
}

/// The (dst, src) pairs of a scatter, for the shared reduction arithmetic.
struct Pairs<'p>(&'p [(usize, usize, usize)]);

impl Visit for Pairs<'_> {
    fn visit<F: FnMut(usize, usize)>(&self, mut f: F) {
        for &(d, s, _) in self.0 {
            f(d, s);
        }
    }
}

/// Computes the output the semantics describe. Sizes are those of the checked inputs.
pub(super) fn execute(sem: &Semantics<'_>) -> Option<Tensor> {
    match sem {
        Semantics::Gathered {
            data,
            shape,
            origin,
            ..
        } => {
            let picked: Vec<Option<usize>> = origin.iter().map(|o| o.0).collect();
            let storage =
                crate::dispatch_by_width!(data.dtype(), None, pick(data.storage(), &picked))?;
            Tensor::new(data.dtype(), shape.clone(), storage).ok()
        }
        Semantics::Scattered {
            base,
            dtype,
            shape,
            updates,
            pairs,
            reduction,
            ..
        } => {
            let zeroed;
            let start = match base {
                Some(b) => b.storage(),
                None => {
                    zeroed = zeros(*dtype, numel(shape)?)?;
                    &zeroed
                }
            };
            let storage =
                reduction::apply(*dtype, *reduction, start, updates.storage(), &Pairs(pairs))
                    .ok()?;
            Tensor::new(*dtype, shape.clone(), storage).ok()
        }
    }
}

fn pick<T: crate::tensor::Elem>(src: &Storage, picked: &[Option<usize>]) -> Option<Storage> {
    let src = T::slice(src)?;
    let out: Option<Vec<T>> = picked
        .iter()
        .map(|p| match p {
            Some(i) => src.get(*i).cloned(),
            None => Some(T::zero()),
        })
        .collect();
    Some(T::into_storage(out?))
}

fn zeros(dtype: DType, n: usize) -> Option<Storage> {
    Some(match dtype.layout() {
        Layout::Bytes(1) => Storage::W8(vec![0; n]),
        Layout::Bytes(2) => Storage::W16(vec![0; n]),
        Layout::Bytes(4) => Storage::W32(vec![0; n]),
        Layout::Bytes(8) => Storage::W64(vec![0; n]),
        Layout::Bytes(_) => Storage::W128(vec![0; n]),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testutil::{f32s, i64s};

    #[test]
    fn scatter_nd_from_zeros_adds_each_slice_within_its_batch() {
        // Shape [2, 2, 2], batch_dims 1, one tuple per batch: [1] in batch 0 and [0] in batch 1,
        // each adding a slice of 2. By hand: batch 0 row 1 = [1, 2], batch 1 row 0 = [3, 4].
        let (indices, updates) = (i64s(&[2, 1], &[1, 0]), f32s(&[2, 2], &[1.0, 2.0, 3.0, 4.0]));
        let q = Quirks::default();
        let sem = scatter_nd(
            None,
            DType::Float,
            &[2, 2, 2],
            &indices,
            &updates,
            1,
            Reduction::Add,
            &q,
        )
        .unwrap();
        let want = f32s(&[2, 2, 2], &[0.0, 0.0, 1.0, 2.0, 3.0, 4.0, 0.0, 0.0]);
        assert_eq!(execute(&sem).unwrap(), want);
        // Batch dims that differ, or updates not shaped like the forward output, model nothing.
        let other = i64s(&[3, 1], &[0, 0, 0]);
        assert!(scatter_nd(
            None,
            DType::Float,
            &[2, 2, 2],
            &other,
            &updates,
            1,
            Reduction::Add,
            &q
        )
        .is_none());
        let flat = f32s(&[4], &[0.0; 4]);
        assert!(scatter_nd(
            None,
            DType::Float,
            &[2, 2, 2],
            &indices,
            &flat,
            1,
            Reduction::Add,
            &q
        )
        .is_none());
    }
}
