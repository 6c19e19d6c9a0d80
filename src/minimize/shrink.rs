//! The shrinking steps: each turns a subject into a smaller (or plainer) candidate, or says it
//! does not apply. Which dimensions a step may touch follows how the operator's family addresses
//! its data (along an axis, element by element, by index tuples); a candidate that breaks a rule
//! of the operator anyway is caught by the reference (it then requires an error where the
//! original did not) and never reaches the runtime.

use super::subject::Subject;
use super::tensors::{index_tensor, readable, remove_dim, take};
use onnx_idx_check::ops::{Indexing, Role};

/// One shrinking step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// Keep positions `lo..hi` of the indices along `dim` (and of the updates along the
    /// dimension that pairs with it).
    Indices {
        /// The indices' dimension.
        dim: usize,
        /// First position kept.
        lo: usize,
        /// One past the last.
        hi: usize,
    },
    /// Keep only the data rows the indices reference along `dim`, renumbering the indices.
    Compact {
        /// The data's dimension.
        dim: usize,
    },
    /// Cut the data along `dim` after the last row the indices reference (indices unchanged
    /// but for negative ones, which keep counting from the new end).
    Truncate {
        /// The data's dimension.
        dim: usize,
    },
    /// Keep positions `lo..hi` of the data along `dim`, which no index addresses.
    Data {
        /// The data's dimension.
        dim: usize,
        /// First position kept.
        lo: usize,
        /// One past the last.
        hi: usize,
    },
    /// Drop dimension `dim` (of size 1) of the indices.
    SqueezeIndices {
        /// The indices' dimension.
        dim: usize,
    },
    /// Drop dimension `dim` (of size 1) of the data, with the dimensions paired with it.
    SqueezeData {
        /// The data's dimension.
        dim: usize,
    },
    /// Replace the values of input `input` by 1, 2, 3, ... (`zero`: by zeros).
    Values {
        /// The graph input.
        input: usize,
        /// Zeros instead of counting.
        zero: bool,
    },
}

impl Step {
    /// In words, for the summary.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Step::Indices { .. } => "fewer indices",
            Step::Compact { .. } | Step::Truncate { .. } | Step::Data { .. } => "smaller data",
            Step::SqueezeIndices { .. } | Step::SqueezeData { .. } => "fewer dims",
            Step::Values { .. } => "simpler values",
        }
    }
}

/// How the operator addresses its data, with the attributes that say where.
struct Layout {
    indexing: Indexing,
    /// The addressed axis, normalised (axis and elements families).
    axis: Option<usize>,
    /// The axis as written (its sign is kept when dimensions before or after go).
    axis_raw: i64,
    /// Whether the axis is an input rather than an attribute (then data dims stay).
    axis_input: bool,
    batch_dims: usize,
}

fn layout(s: &Subject) -> Option<Layout> {
    let data_rank = s.tensor_of(Role::Data).map(|t| t.rank());
    let axis_input = s.input_of(Role::Axis).is_some();
    let axis_raw = if axis_input {
        s.tensor_of(Role::Axis)?.to_i64_vec()?.first().copied()?
    } else {
        s.int_attr("axis").unwrap_or(0)
    };
    let axis = data_rank.and_then(|r| {
        let a = if axis_raw < 0 {
            axis_raw + r as i64
        } else {
            axis_raw
        };
        usize::try_from(a).ok().filter(|&a| a < r)
    });
    let batch_dims = usize::try_from(s.int_attr("batch_dims").unwrap_or(0)).ok()?;
    Some(Layout {
        indexing: s.def.indexing,
        axis,
        axis_raw,
        axis_input,
        batch_dims,
    })
}

/// The updates' dimension that pairs with the indices' dimension `d`, when there is one.
fn updates_dim(s: &Subject, l: &Layout, d: usize) -> Option<usize> {
    let idx = s.tensor_of(Role::Indices)?;
    let upd = s.tensor_of(Role::Updates)?;
    match l.indexing {
        Indexing::Elements => Some(d),
        Indexing::Tuples => (d + 1 < idx.rank()).then_some(d),
        // A gradient dY: data[:axis] + indices + data[axis+1:], the data's rank being
        // dY's minus the indices' plus one.
        Indexing::Axis => {
            let rank = (upd.rank() + 1).checked_sub(idx.rank())?;
            let a = if l.axis_raw < 0 {
                l.axis_raw + rank as i64
            } else {
                l.axis_raw
            };
            Some(usize::try_from(a).ok()? + d)
        }
        _ => None,
    }
}

/// The steps to try on `s`, most shrinking first; `hint` is the indices' position that the first
/// mismatching output element came from, when the family tells.
pub(crate) fn steps(s: &Subject, hint: Option<&[usize]>) -> Vec<Step> {
    let mut out = Vec::new();
    let Some(l) = layout(s) else {
        return out;
    };
    if let Some(idx) = s.tensor_of(Role::Indices) {
        for (d, &n) in idx.shape().iter().enumerate() {
            // A tuple's length is not a count of indices.
            if n <= 1 || (l.indexing == Indexing::Tuples && d + 1 == idx.rank()) {
                continue;
            }
            if let Some(&p) = hint.and_then(|h| h.get(d)).filter(|&&p| p < n) {
                out.push(Step::Indices {
                    dim: d,
                    lo: p,
                    hi: p + 1,
                });
            }
            out.push(Step::Indices {
                dim: d,
                lo: 0,
                hi: n / 2,
            });
            out.push(Step::Indices {
                dim: d,
                lo: n / 2,
                hi: n,
            });
            if n <= 32 {
                for p in 0..n {
                    let single = Step::Indices {
                        dim: d,
                        lo: p,
                        hi: p + 1,
                    };
                    if !out.contains(&single) {
                        out.push(single);
                    }
                }
            }
        }
    }
    if let (Some(data), false) = (s.tensor_of(Role::Data), l.axis_input) {
        for (d, &n) in data.shape().iter().enumerate() {
            if addressed(s, &l, d).is_some() {
                out.push(Step::Compact { dim: d });
                out.push(Step::Truncate { dim: d });
            } else if n > 1 {
                out.push(Step::Data {
                    dim: d,
                    lo: 0,
                    hi: n / 2,
                });
                out.push(Step::Data {
                    dim: d,
                    lo: n / 2,
                    hi: n,
                });
                out.push(Step::Data {
                    dim: d,
                    lo: 0,
                    hi: n - 1,
                });
                out.push(Step::Data {
                    dim: d,
                    lo: 1,
                    hi: n,
                });
            }
        }
        for (d, &n) in data.shape().iter().enumerate() {
            if n == 1 {
                out.push(Step::SqueezeData { dim: d });
            }
        }
    }
    if let Some(idx) = s.tensor_of(Role::Indices) {
        if l.indexing == Indexing::Axis {
            for (d, &n) in idx.shape().iter().enumerate() {
                if n == 1 && d >= l.batch_dims {
                    out.push(Step::SqueezeIndices { dim: d });
                }
            }
        }
    }
    for role in [Role::Data, Role::Updates] {
        if let Some(k) = s.input_of(role) {
            out.push(Step::Values {
                input: k,
                zero: false,
            });
            if role == Role::Data {
                out.push(Step::Values {
                    input: k,
                    zero: true,
                });
            }
        }
    }
    out
}

/// Which index components address data dimension `d`: `Some(None)` every index value (axis
/// and elements families), `Some(Some(c))` component `c` of each tuple, `None` no index.
fn addressed(s: &Subject, l: &Layout, d: usize) -> Option<Option<usize>> {
    match l.indexing {
        Indexing::Axis | Indexing::Elements => (l.axis == Some(d)).then_some(None),
        Indexing::Tuples => {
            let k = *s.tensor_of(Role::Indices)?.shape().last()?;
            // Lazily: below batch_dims, `d - batch_dims` would underflow.
            (d >= l.batch_dims && d < l.batch_dims + k).then(|| Some(d - l.batch_dims))
        }
        _ => None,
    }
}

/// `s` after `step`, or `None` when the step does not apply or changes nothing.
pub(crate) fn apply(s: &Subject, step: &Step) -> Option<Subject> {
    let l = layout(s)?;
    let mut c = s.clone();
    match *step {
        Step::Indices { dim, lo, hi } => {
            let keep: Vec<usize> = (lo..hi).collect();
            let k = s.input_of(Role::Indices)?;
            let ud = updates_dim(s, &l, dim);
            c.inputs[k].1 = take(&s.inputs[k].1, dim, &keep)?;
            if let (Some(u), Some(ud)) = (s.input_of(Role::Updates), ud) {
                c.inputs[u].1 = take(&s.inputs[u].1, ud, &keep)?;
            }
        }
        Step::Compact { dim } | Step::Truncate { dim } => {
            let comp = addressed(s, &l, dim)?;
            let k = s.input_of(Role::Indices)?;
            let dk = s.input_of(Role::Data)?;
            let n = *s.inputs[dk].1.shape().get(dim)? as i64;
            let idx = &s.inputs[k].1;
            let values = idx.to_i64_vec()?;
            let width = match comp {
                Some(_) => *idx.shape().last()?,
                None => 1,
            };
            let hits = |i: usize| comp.is_none_or(|c| i % width.max(1) == c);
            let norm = |v: i64| {
                let u = if v < 0 { v + n } else { v };
                (0..n).contains(&u).then_some(u)
            };
            let mut rows: Vec<i64> = values
                .iter()
                .enumerate()
                .filter(|(i, _)| hits(*i))
                .filter_map(|(_, &v)| norm(v))
                .collect();
            rows.sort_unstable();
            rows.dedup();
            let (keep, new_n): (Vec<usize>, i64) = if matches!(step, Step::Compact { .. }) {
                (
                    rows.iter().map(|&r| r as usize).collect(),
                    rows.len() as i64,
                )
            } else {
                let m = rows.last().map_or(0, |&r| r + 1);
                ((0..m as usize).collect(), m)
            };
            if new_n >= n {
                return None;
            }
            let renumber = |v: i64| -> i64 {
                match norm(v) {
                    Some(u) => {
                        let pos = keep.iter().position(|&r| r as i64 == u).unwrap_or(0) as i64;
                        if v < 0 {
                            pos - new_n
                        } else {
                            pos
                        }
                    }
                    // Out of range stays out of range by as much.
                    None if v >= n => new_n + (v - n),
                    None => v + n - new_n,
                }
            };
            let new_values: Vec<i64> = values
                .iter()
                .enumerate()
                .map(|(i, &v)| if hits(i) { renumber(v) } else { v })
                .collect();
            c.inputs[k].1 = index_tensor(idx, new_values)?;
            c.inputs[dk].1 = take(&s.inputs[dk].1, dim, &keep)?;
        }
        Step::Data { dim, lo, hi } => {
            let keep: Vec<usize> = (lo..hi).collect();
            let dk = s.input_of(Role::Data)?;
            c.inputs[dk].1 = take(&s.inputs[dk].1, dim, &keep)?;
            // Batch dims pair the data with the indices (and updates); a ScatterND's trailing
            // dims pair it with the updates' trailing dims.
            if dim < l.batch_dims {
                for role in [Role::Indices, Role::Updates] {
                    if let Some(k) = s.input_of(role) {
                        c.inputs[k].1 = take(&s.inputs[k].1, dim, &keep)?;
                    }
                }
            } else if l.indexing == Indexing::Tuples {
                if let (Some(u), Some(idx)) =
                    (s.input_of(Role::Updates), s.tensor_of(Role::Indices))
                {
                    let tuple = *idx.shape().last()?;
                    let ud = idx.rank() - 1 + dim.checked_sub(l.batch_dims + tuple)?;
                    c.inputs[u].1 = take(&s.inputs[u].1, ud, &keep)?;
                }
            }
        }
        Step::SqueezeIndices { dim } => {
            let k = s.input_of(Role::Indices)?;
            c.inputs[k].1 = remove_dim(&s.inputs[k].1, dim)?;
        }
        Step::SqueezeData { dim } => {
            let dk = s.input_of(Role::Data)?;
            if addressed(s, &l, dim).is_some() || dim < l.batch_dims {
                return None;
            }
            c.inputs[dk].1 = remove_dim(&s.inputs[dk].1, dim)?;
            match l.indexing {
                Indexing::Elements => {
                    for role in [Role::Indices, Role::Updates] {
                        if let Some(k) = s.input_of(role) {
                            c.inputs[k].1 = remove_dim(&s.inputs[k].1, dim)?;
                        }
                    }
                }
                Indexing::Tuples => {
                    if let (Some(u), Some(idx)) =
                        (s.input_of(Role::Updates), s.tensor_of(Role::Indices))
                    {
                        let tuple = *idx.shape().last()?;
                        let ud = idx.rank() - 1 + dim.checked_sub(l.batch_dims + tuple)?;
                        c.inputs[u].1 = remove_dim(&s.inputs[u].1, ud)?;
                    }
                }
                _ => {}
            }
            // The axis keeps pointing at the same dimension, counted from the side it is
            // written from.
            if let Some(a) = l.axis {
                let new = match (dim < a, l.axis_raw < 0) {
                    (true, false) => Some(l.axis_raw - 1),
                    (false, true) => Some(l.axis_raw + 1),
                    _ => None,
                };
                if let Some(new) = new {
                    if !c.set_int_attr("axis", new) {
                        return None;
                    }
                }
            }
        }
        Step::Values { input, zero } => {
            let t = &s.inputs.get(input)?.1;
            let first = if s.roles[input] == Some(Role::Updates) {
                101
            } else {
                1
            };
            // Counting values are the plainest that still tell elements apart; zeros only
            // when counting lost the disagreement. Never back from either (no cycles).
            let counting = readable(t, first, false)?;
            let zeros = readable(t, first, true)?;
            if *t == zeros || (zero && *t == counting) {
                return None;
            }
            c.inputs[input].1 = if zero { zeros } else { counting };
        }
    }
    let changed = c
        .inputs
        .iter()
        .zip(&s.inputs)
        .any(|((_, a), (_, b))| a != b)
        || c.model != s.model;
    changed.then_some(c)
}

/// The indices' position that output element `out` (its coordinates) was gathered through, for
/// the families where that is a slice of the coordinates.
pub(crate) fn hint(s: &Subject, out: &[usize]) -> Option<Vec<usize>> {
    let l = layout(s)?;
    let idx = s.tensor_of(Role::Indices)?;
    if s.input_of(Role::Updates).is_some() || l.batch_dims != 0 {
        return None;
    }
    match l.indexing {
        Indexing::Axis => out
            .get(l.axis?..l.axis? + idx.rank())
            .map(<[usize]>::to_vec),
        Indexing::Elements => Some(out.to_vec()),
        Indexing::Tuples => out.get(..idx.rank().checked_sub(1)?).map(<[usize]>::to_vec),
        _ => None,
    }
}
