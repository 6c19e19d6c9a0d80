//! What is diagnosed ([`Subject`]: a node and the inputs it received), the switches for wrong
//! semantics ([`Quirks`]), and the registry hook through which each operator says what it does
//! ([`Provenance`]).

use super::shapes::Semantics;
use crate::ops::{self, Attrs, Reduction, Resolution};
use crate::pb::NodeProto;
use crate::tensor::Tensor;

/// The node whose output is diagnosed, and the inputs it received.
#[derive(Debug)]
pub struct Subject<'a> {
    /// The node.
    pub node: &'a NodeProto,
    /// Its canonical domain (`""` for ONNX).
    pub domain: &'a str,
    /// The resolved version (`since`).
    pub since: i64,
    /// Inputs by position.
    pub inputs: Vec<Option<&'a Tensor>>,
}

/// How negative indices resolve.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(super) enum Neg {
    #[default]
    FromBack,
    AsIndexZero,
    AsZeroValue,
}

/// How out-of-range indices resolve.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(super) enum Oob {
    #[default]
    Invalid,
    Wrap,
    Clamp,
    Zero,
}

/// The wrong semantics being tried (all off: the correct semantics).
#[derive(Clone, Copy, Debug, Default)]
pub struct Quirks {
    pub(super) neg: Neg,
    pub(super) oob: Oob,
    pub(super) reverse: bool,
    pub(super) reduction: Option<Reduction>,
    pub(super) axis_zero: bool,
    pub(super) batch_zero: bool,
    /// The most output elements worth computing: the size of the output being explained, since
    /// an interpretation of another size cannot reproduce it. Bounds what a hostile case can
    /// make the diagnosis allocate; `None` where the op's own output was already computed.
    pub(super) cap: Option<usize>,
}

impl Quirks {
    /// Whether an output of `n` elements is worth computing.
    pub(super) fn admits(&self, n: usize) -> bool {
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
        Attrs::of_node(self.node).int(name, default).ok()
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
        q.reduction.or_else(|| reduction_of(self.node))
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
/// registry's hook ([`crate::ops::OpDef::provenance`]) that lets one diagnosis serve every op.
pub type Provenance = for<'a> fn(&Subject<'a>, &Quirks) -> Option<Semantics<'a>>;

fn norm_axis(axis: i64, rank: usize) -> Option<usize> {
    let r = i64::try_from(rank).ok()?;
    let a = if axis < 0 { axis + r } else { axis };
    (0..r).contains(&a).then_some(a as usize)
}

fn reduction_of(node: &NodeProto) -> Option<Reduction> {
    parse_reduction(&Attrs::of_node(node).string("reduction", "none").ok()?)
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
pub(super) fn correct_reduction(subj: &Subject<'_>) -> Reduction {
    let Resolution::Found(_, v) = ops::resolve(subj.domain, &subj.node.op_type, subj.since) else {
        return Reduction::None;
    };
    match v.mode_attr {
        Some(_) => reduction_of(subj.node),
        None => v.modes.first().and_then(|m| parse_reduction(m)),
    }
    .unwrap_or(Reduction::None)
}

/// Builds the semantics of `subj` under `q` through its operator's registry entry; `None` when
/// the op is not modelled or its inputs cannot be evaluated under these quirks.
pub(super) fn semantics<'a>(subj: &Subject<'a>, q: &Quirks) -> Option<Semantics<'a>> {
    let Resolution::Found(def, _) = ops::resolve(subj.domain, &subj.node.op_type, subj.since)
    else {
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
