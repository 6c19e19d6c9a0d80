//! What an operator does, element by element, for the diagnosis of a wrong output: the
//! [`Subject`] (a node and the inputs it received), the switches for wrong semantics that real
//! runtimes have shipped ([`Quirks`]), the shapes of provenance the operators share
//! ([`Semantics`]: gathered or scattered, element by element) and their execution with the
//! kernels' own element copies and reduction arithmetic, so that a reproduction is bit-exact.
//!
//! Each operator's file builds its own semantics and names the builder in its registry entry
//! ([`Provenance`]); the search for the bug classes that reproduce an output is the checker's.

use super::reduction::{self, Reduction, Visit};
use super::{Attrs, Resolution};
use crate::tensor::{numel, strides, unravel, DType, Layout, Storage, Tensor};

/// The node whose output is diagnosed, and the inputs it received.
#[derive(Debug)]
pub struct Subject<'a> {
    /// The node's operator.
    pub op_type: &'a str,
    /// Its attributes.
    pub attrs: Attrs<'a>,
    /// Its canonical domain (`""` for ONNX).
    pub domain: &'a str,
    /// The resolved version (`since`).
    pub since: i64,
    /// Inputs by position.
    pub inputs: Vec<Option<&'a Tensor>>,
}

/// How negative indices resolve.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Neg {
    /// Counted from the back (the correct semantics).
    #[default]
    FromBack,
    /// Read as index 0.
    AsIndexZero,
    /// Read as a zero value.
    AsZeroValue,
}

/// How out-of-range indices resolve.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Oob {
    /// An error (the correct semantics).
    #[default]
    Invalid,
    /// Wrapped around the axis.
    Wrap,
    /// Clamped to the axis.
    Clamp,
    /// Read as a zero value.
    Zero,
}

/// The wrong semantics being tried (all off: the correct semantics).
#[derive(Clone, Copy, Debug, Default)]
pub struct Quirks {
    /// How negative indices resolve.
    pub neg: Neg,
    /// How out-of-range indices resolve.
    pub oob: Oob,
    /// Duplicate writes applied in reverse order (first write wins).
    pub reverse: bool,
    /// A reduction imposed instead of the node's.
    pub reduction: Option<Reduction>,
    /// The axis forced to 0.
    pub axis_zero: bool,
    /// `batch_dims` forced to 0.
    pub batch_zero: bool,
    /// The most output elements worth computing: the size of the output being explained, since
    /// an interpretation of another size cannot reproduce it. Bounds what a hostile case can
    /// make the diagnosis allocate; `None` where the op's own output was already computed.
    pub cap: Option<usize>,
}

impl Quirks {
    /// Whether an output of `n` elements is worth computing.
    pub fn admits(&self, n: usize) -> bool {
        self.cap.is_none_or(|cap| n <= cap)
    }
}

impl<'a> Subject<'a> {
    /// Input `i`, when present.
    pub fn input(&self, i: usize) -> Option<&'a Tensor> {
        self.inputs.get(i).copied().flatten()
    }

    /// The INT attribute `name`, or `default`; `None` when it is mistyped.
    pub fn int_attr(&self, name: &str, default: i64) -> Option<i64> {
        self.attrs.int(name, default).ok()
    }

    /// The `axis` attribute (default 0) normalised against `rank`, or 0 under the axis-ignored
    /// quirk.
    pub fn axis(&self, rank: usize, q: &Quirks) -> Option<usize> {
        if q.axis_zero {
            Some(0)
        } else {
            norm_axis(self.int_attr("axis", 0)?, rank)
        }
    }

    /// The `batch_dims` attribute (default 0), or 0 under the batch-dims-ignored quirk.
    pub fn batch_dims(&self, q: &Quirks) -> Option<i64> {
        if q.batch_zero {
            Some(0)
        } else {
            self.int_attr("batch_dims", 0)
        }
    }

    /// The `reduction` attribute (default none), or the one a quirk imposes.
    pub fn reduction(&self, q: &Quirks) -> Option<Reduction> {
        q.reduction.or_else(|| reduction_of(&self.attrs))
    }
}

impl Quirks {
    /// The reduction a quirk imposes, if any (the backward ops' accumulation is add otherwise).
    pub fn reduction(&self) -> Option<Reduction> {
        self.reduction
    }

    /// Whether the axis is forced to 0.
    pub fn axis_ignored(&self) -> bool {
        self.axis_zero
    }

    /// These quirks for an op whose correct semantics zero-fill out-of-range indices (OpenVINO
    /// Gather-8): unless a quirk says otherwise, out of range reads as zero.
    pub fn zero_filling(&self) -> Quirks {
        if self.oob == Oob::Invalid {
            Quirks {
                oob: Oob::Zero,
                ..*self
            }
        } else {
            *self
        }
    }
}

/// Builds what operator `def` does, element by element, for a subject under some quirks: the
/// registry's hook ([`super::OpDef::provenance`]) that lets one diagnosis serve every op.
pub type Provenance = for<'a> fn(&Subject<'a>, &Quirks) -> Option<Semantics<'a>>;

fn norm_axis(axis: i64, rank: usize) -> Option<usize> {
    let r = i64::try_from(rank).ok()?;
    let a = if axis < 0 { axis + r } else { axis };
    (0..r).contains(&a).then_some(a as usize)
}

fn reduction_of(attrs: &Attrs<'_>) -> Option<Reduction> {
    parse_reduction(&attrs.string("reduction", "none").ok()?)
}

fn parse_reduction(s: &str) -> Option<Reduction> {
    let all = [
        Reduction::None,
        Reduction::Add,
        Reduction::Mul,
        Reduction::Max,
        Reduction::Min,
    ];
    all.into_iter().find(|r| r.name() == s)
}

/// What the op combines updates with under its correct semantics: the `reduction` attribute
/// where the version has one, else what the registry says the version always does (the backward
/// ops accumulate with add).
pub fn correct_reduction(subj: &Subject<'_>) -> Reduction {
    let Resolution::Found(_, v) = super::resolve(subj.domain, subj.op_type, subj.since) else {
        return Reduction::None;
    };
    match v.mode_attr {
        Some(_) => reduction_of(&subj.attrs),
        None => v.modes.first().and_then(|m| parse_reduction(m)),
    }
    .unwrap_or(Reduction::None)
}

/// Builds the semantics of `subj` under `q` through its operator's registry entry; `None` when
/// the op is not modelled or its inputs cannot be evaluated under these quirks.
pub fn semantics<'a>(subj: &Subject<'a>, q: &Quirks) -> Option<Semantics<'a>> {
    let Resolution::Found(def, _) = super::resolve(subj.domain, subj.op_type, subj.since) else {
        return None;
    };
    (def.provenance?)(subj, q)
}

/// A `shape` input's dims, when all are non-negative.
pub fn dims_of(t: &Tensor) -> Option<Vec<usize>> {
    t.to_i64_vec()?
        .iter()
        .map(|&d| usize::try_from(d).ok())
        .collect()
}

/// Where an index points.
pub(crate) enum Resolved {
    /// This position on the axis.
    At(usize),
    /// A zero value (a quirk's fill).
    Zero,
    /// No position: the index is invalid.
    Invalid,
}

/// Where index `k` on an axis of size `s` points under `q`.
pub(crate) fn resolve(k: i64, s: usize, q: &Quirks) -> Resolved {
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
    /// The index values, flat.
    pub(crate) values: Vec<i64>,
    /// The index input's shape.
    pub(crate) shape: Vec<usize>,
    /// The axis indexed (element-wise ops), or `None` for tuple indices (GatherND/ScatterND).
    pub(crate) axis: Option<usize>,
    /// Tuple length for ND ops.
    pub(crate) tuple: usize,
}

impl IndexInfo {
    /// `indices[1,0] = -2 on axis 0`, or `indices[1,:] = [0, -1]` for a tuple.
    pub fn describe(&self, pos: usize) -> String {
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

/// Resolves a k-tuple against `dims`; `None` inside for a zero result, outer `None` for invalid.
pub(crate) fn resolve_tuple(tuple: &[i64], dims: &[usize], q: &Quirks) -> Option<Option<usize>> {
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
pub fn execute(sem: &Semantics<'_>) -> Option<Tensor> {
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
