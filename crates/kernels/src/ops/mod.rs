//! The operators, one file each with its versions side by side, and the typed API over them: one
//! struct per operator ([`Gather`], [`ScatterElements`], ...) whose `eval` takes typed tensors,
//! the attributes and the opset, and returns the output or a [`SpecError`].
//!
//! Behind the structs is one registry ([`REGISTRY`], [`registry`]) that carries everything the
//! tool knows about each operator version: type constraints, attributes, inputs and their roles,
//! the kernel, the provenance a diagnosis replays. A front end that reads nodes (a model loader,
//! the Python package) calls an operator by name through [`call`], or resolves and invokes it
//! step by step ([`resolve`], [`invoke`]).
//! Version resolution (decision D1) and the checks every version shares (input count, type
//! constraints D4, attributes the version does not define D5) live there, once; the kernels only
//! see inputs that passed them. The typed API and the command line go through the same checks.
//!
//! ```
//! use onnx_idx_check_kernels::ops::Gather;
//! use onnx_idx_check_kernels::Tensor;
//!
//! let data = Tensor::from_vec(vec![3, 2], vec![1.0f32, 1.2, 2.3, 3.4, 4.5, 5.7])?;
//! let indices = Tensor::from_vec(vec![2, 2], vec![0i64, 1, 1, 2])?;
//! let out = Gather { axis: 0 }.eval(13, &data, &indices)?;
//! assert_eq!(out.shape(), [2, 2, 2]);
//! assert_eq!(out.to_vec::<f32>()?, [1.0, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod attr;
pub mod context;
#[cfg(test)]
mod determinism;
pub(crate) mod fast;
mod gather;
pub(crate) mod gather_elements;
mod gather_grad;
pub(crate) mod gather_nd;
pub(crate) mod index;
mod openvino_gather;
pub(crate) mod plumbing;
#[cfg(test)]
mod proptests;
pub mod provenance;
pub mod quotes;
pub(crate) mod reduction;
pub mod registry;
mod scatter_elements;
mod scatter_nd;
mod tensor_scatter;
#[cfg(test)]
pub(crate) mod testutil;

pub use gather::Gather;
pub use gather_elements::GatherElements;
pub use gather_grad::{GatherElementsGrad, GatherGrad};
pub use gather_nd::GatherNd;
pub use openvino_gather::OpenVinoGather;
pub use reduction::Reduction;
pub use scatter_elements::{Scatter, ScatterElements};
pub use scatter_nd::ScatterNd;
pub use tensor_scatter::{Mode, TensorScatter};

pub use attr::{AttrKind, AttrSpec, AttrValue, Attrs, TensorAttr};
pub use registry::*;

/// Every operator the tool knows, default domain first, then plumbing, then the context
/// operators.
pub static REGISTRY: &[&OpDef] = &[
    &gather::GATHER,
    &gather_elements::GATHER_ELEMENTS,
    &gather_nd::GATHER_ND,
    &scatter_elements::SCATTER,
    &scatter_elements::SCATTER_ELEMENTS,
    &scatter_nd::SCATTER_ND,
    &tensor_scatter::TENSOR_SCATTER,
    &openvino_gather::OPENVINO_GATHER,
    &gather_grad::GATHER_GRAD,
    &gather_grad::GATHER_ELEMENTS_GRAD,
    &plumbing::CONSTANT,
    &plumbing::IDENTITY,
    &context::shape::SHAPE,
    &context::shape::RESHAPE,
    &context::shape::UNSQUEEZE,
    &context::shape::SQUEEZE,
    &context::concat::CONCAT,
    &context::transpose::TRANSPOSE,
    &context::cast::CAST,
    &context::arith::ADD,
    &context::arith::SUB,
    &context::arith::MUL,
];

use thiserror::Error;

/// Why an operator produced no output: the inputs or attributes break its specification at the
/// version asked for, the tool does not implement what they ask, or the output would be too large.
/// The message says what, where and why, e.g. `indices[1,0] = 4 is out of range [-4, 3] for axis 1
/// (size 4)`.
///
/// ```
/// use onnx_idx_check_kernels::ops::{ScatterElements, Reduction};
/// use onnx_idx_check_kernels::{SpecError, Tensor};
///
/// let data = Tensor::from_vec(vec![2], vec![b"a".to_vec(), b"b".to_vec()])?;
/// let indices = Tensor::from_vec(vec![1], vec![4i64])?;
/// let updates = Tensor::from_vec(vec![1], vec![b"c".to_vec()])?;
/// let plain = ScatterElements::default();
/// // The inputs break the spec: errored.
/// assert!(matches!(plain.eval(13, &data, &indices, &updates), Err(SpecError::Violation(_))));
/// // Allowed by the spec, not implemented (D8: no max of strings): skipped.
/// let indices = Tensor::from_vec(vec![1], vec![0i64])?;
/// let max = ScatterElements { reduction: Reduction::Max, ..plain };
/// assert!(matches!(max.eval(18, &data, &indices, &updates), Err(SpecError::Unsupported(_))));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum SpecError {
    /// The spec forbids these inputs or attributes at this version (out-of-range index, wrong
    /// shape, disallowed dtype, undefined attribute, ...): the case is errored.
    #[error("{0}")]
    Violation(String),
    /// The inputs break a decision of this project where the spec is silent or ambiguous
    /// (docs/semantics.md D1-D15): the case is errored as for a [`SpecError::Violation`], but
    /// it is onnx-idx-check's rule that was broken, not the spec, and reports say so.
    #[error("{message} (onnx-idx-check's decision {rule}, not the spec: docs/semantics.md#{anchor})", anchor = rule.anchor())]
    Decision {
        /// The decision broken.
        rule: Decision,
        /// What, where and why, as for a violation.
        message: String,
    },
    /// The spec allows this but the tool does not implement it: the case is skipped.
    #[error("{0}")]
    Unsupported(String),
    /// An output would exceed `--max-tensor-bytes`: the case is errored.
    #[error("{0}")]
    TooLarge(String),
}

impl SpecError {
    /// The decision of this project the error rests on, `None` when the spec itself decides it
    /// (or the error is not about the inputs).
    pub fn decision(&self) -> Option<Decision> {
        match self {
            SpecError::Decision { rule, .. } => Some(*rule),
            _ => None,
        }
    }

    /// Whether the inputs or attributes are errored (by the spec or by a decision).
    pub fn is_invalid_input(&self) -> bool {
        matches!(self, SpecError::Violation(_) | SpecError::Decision { .. })
    }
}

/// One of this project's decisions (docs/semantics.md section 2): a rule where the ONNX text
/// is silent, ambiguous, or leaves the behaviour to the runtime.
///
/// ```
/// use onnx_idx_check_kernels::ops::{Decision, Gather};
/// use onnx_idx_check_kernels::{SpecError, Tensor};
///
/// let data = Tensor::from_vec(vec![3], vec![1.0f32, 2.0, 3.0])?;
/// let minus_one = Tensor::from_vec(vec![1], vec![-1i64])?;
/// // Gather-1 never says whether -1 is in bounds: out of range by decision D2, not by the spec.
/// let e = Gather::default().eval(1, &data, &minus_one).unwrap_err();
/// assert_eq!(e.decision(), Some(Decision::D2));
/// assert!(e.to_string().contains("docs/semantics.md#d2-negative-indices-before-opset-11"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Decision {
    /// Version resolution.
    D1,
    /// Negative indices before opset 11 (Gather-1, Scatter-9) and in TensorScatter.
    D2,
    /// Out-of-range indices.
    D3,
    /// Type constraints.
    D4,
    /// Attributes.
    D5,
    /// Shape rules.
    D6,
    /// Duplicates without a reduction.
    D7,
    /// Reduction order and arithmetic.
    D8,
    /// Comparison.
    D9,
    /// Tensor files.
    D10,
    /// External data.
    D11,
    /// No allocation on trust.
    D12,
    /// OpenVINO Gather dialect.
    D13,
    /// Backward (training) dialect.
    D14,
    /// Graphs.
    D15,
}

impl Decision {
    /// Its heading's anchor in docs/semantics.md (`d2-negative-indices-before-opset-11`).
    pub fn anchor(self) -> &'static str {
        match self {
            Decision::D1 => "d1-version-resolution",
            Decision::D2 => "d2-negative-indices-before-opset-11",
            Decision::D3 => "d3-out-of-range-indices",
            Decision::D4 => "d4-type-constraints",
            Decision::D5 => "d5-attributes",
            Decision::D6 => "d6-shape-rules",
            Decision::D7 => "d7-duplicates-without-a-reduction",
            Decision::D8 => "d8-reduction-order-and-arithmetic",
            Decision::D9 => "d9-comparison",
            Decision::D10 => "d10-tensor-files",
            Decision::D11 => "d11-external-data",
            Decision::D12 => "d12-no-allocation-on-trust",
            Decision::D13 => "d13-openvino-gather-dialect",
            Decision::D14 => "d14-backward-training-dialect",
            Decision::D15 => "d15-graphs",
        }
    }
}

impl std::fmt::Display for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self:?}")
    }
}

/// Shorthand for a [`SpecError::Violation`] with a formatted message.
macro_rules! spec_err {
    ($($arg:tt)*) => { $crate::ops::SpecError::Violation(format!($($arg)*)) };
}
pub(crate) use spec_err;

/// Shorthand for a [`SpecError::Decision`] of decision `$rule` with a formatted message.
macro_rules! decision_err {
    ($rule:ident, $($arg:tt)*) => {
        $crate::ops::SpecError::Decision {
            rule: $crate::ops::Decision::$rule,
            message: format!($($arg)*),
        }
    };
}
pub(crate) use decision_err;

/// The largest output the typed API creates: 4 GiB, the CLI's default `--max-tensor-bytes`.
///
/// ```
/// use onnx_idx_check_kernels::ops::{Gather, DEFAULT_MAX_OUTPUT_BYTES};
/// use onnx_idx_check_kernels::{SpecError, Tensor};
///
/// // Gathering one f32 row of 2^20 elements 2^11 times over is 8 GiB: too large, refused before
/// // anything is allocated.
/// assert_eq!(DEFAULT_MAX_OUTPUT_BYTES, 4 << 30);
/// let data = Tensor::from_vec(vec![1, 1 << 20], vec![0.0f32; 1 << 20])?;
/// let indices = Tensor::from_vec(vec![1 << 11], vec![0i64; 1 << 11])?;
/// assert!(matches!(Gather::default().eval(13, &data, &indices), Err(SpecError::TooLarge(_))));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 4 << 30;

impl Default for Reduction {
    /// `none`: what a scatter does without a `reduction` attribute.
    fn default() -> Self {
        Reduction::None
    }
}
