//! The operator registry: `(domain, op_type)` -> the versions we implement, each with its type
//! constraints, attributes and kernel.
//!
//! One table drives both evaluation ([`resolve`], then [`invoke`]) and the `ops` support matrix
//! ([`REGISTRY`]). Version resolution (decision D1) and the checks every version shares (input
//! count, type constraints D4, attributes the version does not define D5) live here, once; the
//! kernels only see inputs that passed them.

pub mod attr;
#[cfg(test)]
mod determinism;
pub(crate) mod fast;
pub mod gather;
pub mod gather_elements;
pub mod gather_grad;
pub mod gather_nd;
pub mod index;
pub mod openvino_gather;
pub mod plumbing;
#[cfg(test)]
mod proptests;
pub mod reduction;
pub mod scatter_elements;
pub mod scatter_nd;
pub mod tensor_scatter;
#[cfg(test)]
pub(crate) mod testutil;

use crate::pb::NodeProto;
use crate::tensor::{DType, DTypeSet, Elem, Tensor};
use thiserror::Error;

/// Why a kernel did not produce outputs.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum KernelError {
    /// The spec forbids these inputs or attributes (out-of-range index, wrong shape, disallowed
    /// dtype, ...): the case is errored.
    #[error("{0}")]
    Spec(String),
    /// The spec allows this but the tool does not implement it: the case is skipped.
    #[error("{0}")]
    Unsupported(String),
    /// An output would exceed `--max-tensor-bytes`: the case is errored.
    #[error("{0}")]
    TooLarge(String),
}

/// Shorthand for a [`KernelError::Spec`] with a formatted message.
#[macro_export]
macro_rules! spec_err {
    ($($arg:tt)*) => { $crate::ops::KernelError::Spec(format!($($arg)*)) };
}

/// One input of an operator version.
#[derive(Debug)]
pub struct InputSpec {
    /// The input's name in the spec.
    pub name: &'static str,
    /// The type constraint it belongs to (`"T"`, `"Tind"`), an index into
    /// [`OpVersion::constraints`] by name.
    pub constraint: &'static str,
    /// Whether the input may be omitted.
    pub optional: bool,
}

impl InputSpec {
    /// A required input.
    pub const fn required(name: &'static str, constraint: &'static str) -> InputSpec {
        InputSpec {
            name,
            constraint,
            optional: false,
        }
    }

    /// An optional input.
    pub const fn optional(name: &'static str, constraint: &'static str) -> InputSpec {
        InputSpec {
            name,
            constraint,
            optional: true,
        }
    }
}

/// A type constraint: a name and the dtypes it admits.
#[derive(Debug)]
pub struct Constraint {
    /// `"T"`, `"Tind"`, ...
    pub name: &'static str,
    /// Admitted dtypes.
    pub dtypes: DTypeSet,
}

impl Constraint {
    /// The constraint `name` admitting `dtypes`.
    pub const fn new(name: &'static str, dtypes: DTypeSet) -> Constraint {
        Constraint { name, dtypes }
    }
}

/// What a kernel produced.
#[derive(Debug)]
pub struct Evaluated {
    /// The outputs, in the node's output order.
    pub outputs: Vec<Tensor>,
    /// Whether the values come from float arithmetic (a reduction) rather than pure data movement;
    /// decides exact versus tolerant comparison (D9).
    pub arithmetic: bool,
}

/// A kernel: parses the node's attributes, checks the spec's rules and computes.
pub type EvalFn = fn(&Invocation<'_>) -> Result<Evaluated, KernelError>;

/// One version of an operator.
#[derive(Debug)]
pub struct OpVersion {
    /// The opset version that introduced this version.
    pub since: i64,
    /// Set when the op was removed at this version: nodes resolving to it are invalid.
    pub deprecated: bool,
    /// Attributes this version defines; any other attribute is an error (D5).
    pub attrs: &'static [&'static str],
    /// Inputs, in order.
    pub inputs: &'static [InputSpec],
    /// Number of outputs.
    pub outputs: usize,
    /// Type constraints.
    pub constraints: &'static [Constraint],
    /// Reductions or modes the version supports, for the support matrix.
    pub modes: &'static [&'static str],
    /// The kernel.
    pub eval: EvalFn,
}

impl OpVersion {
    /// A (not deprecated) version with one output.
    pub const fn new(
        since: i64,
        attrs: &'static [&'static str],
        inputs: &'static [InputSpec],
        constraints: &'static [Constraint],
        modes: &'static [&'static str],
        eval: EvalFn,
    ) -> OpVersion {
        OpVersion {
            since,
            deprecated: false,
            attrs,
            inputs,
            outputs: 1,
            constraints,
            modes,
            eval,
        }
    }
}

/// An operator: its domain, name and versions (in increasing `since` order).
#[derive(Debug)]
pub struct OpDef {
    /// Domain, `""` for the default ONNX domain.
    pub domain: &'static str,
    /// Operator name.
    pub op_type: &'static str,
    /// Link to the operator's specification.
    pub spec: &'static str,
    /// Whether this is graph plumbing (Constant, Identity) rather than an operator under test.
    pub plumbing: bool,
    /// Whether the op reads its first input only where it gathers (rather than copying it whole,
    /// as scatters do); decides the bytes `bench` counts as moved.
    pub gathers: bool,
    /// The versions.
    pub versions: &'static [OpVersion],
}

/// Everything a kernel sees.
#[derive(Debug)]
pub struct Invocation<'a> {
    /// The node.
    pub node: &'a NodeProto,
    /// The operator.
    pub def: &'static OpDef,
    /// The resolved version.
    pub version: &'static OpVersion,
    /// Inputs by position; `None` for an omitted optional input.
    pub inputs: Vec<Option<&'a Tensor>>,
    /// Largest output, in bytes, a kernel may create.
    pub max_bytes: usize,
    /// Directory of the model file (for Constant tensors stored externally).
    pub model_dir: &'a std::path::Path,
}

impl Invocation<'_> {
    /// Input `i`, which the registry has checked is present when it is not optional.
    pub fn input(&self, i: usize) -> Result<&Tensor, KernelError> {
        self.inputs
            .get(i)
            .copied()
            .flatten()
            .ok_or_else(|| spec_err!("input {} is missing", i))
    }

    /// `Op-since`, e.g. `ScatterElements-16`, for messages.
    pub fn op_name(&self) -> String {
        format!("{}-{}", self.def.op_type, self.version.since)
    }

    /// Fails with [`KernelError::TooLarge`] when `count` elements of `dtype` exceed the limit.
    pub fn check_output_size(&self, dtype: DType, shape: &[usize]) -> Result<usize, KernelError> {
        let n = crate::tensor::numel(shape)
            .ok_or_else(|| KernelError::TooLarge(format!("output shape {shape:?} overflows")))?;
        let bytes = crate::tensor::byte_len(dtype, n).unwrap_or(usize::MAX);
        if bytes > self.max_bytes {
            return Err(KernelError::TooLarge(format!(
                "output {dtype} tensor of shape {shape:?} would take {bytes} bytes, more than the limit of {} bytes (--max-tensor-bytes)",
                self.max_bytes
            )));
        }
        // Under a raised limit the allocator may still refuse, which would abort the process:
        // ask first (address space only; no page is touched) and error instead.
        if Vec::<u8>::new().try_reserve_exact(bytes).is_err() {
            return Err(KernelError::TooLarge(format!(
                "output {dtype} tensor of shape {shape:?} would take {bytes} bytes, which this machine cannot allocate"
            )));
        }
        Ok(n)
    }
}

/// Fails with [`KernelError::TooLarge`] when the string payloads an output would copy exceed the
/// limit: a gather can repeat one long string many times, which the element count alone misses.
pub fn check_heap_bytes<T: Elem>(
    src: &[T],
    picks: impl Iterator<Item = usize>,
    max_bytes: usize,
) -> Result<(), KernelError> {
    if !T::OWNS_HEAP {
        return Ok(());
    }
    let mut total = 0usize;
    for i in picks {
        total = total.saturating_add(src.get(i).map_or(0, Elem::heap_len));
        if total > max_bytes {
            return Err(KernelError::TooLarge(format!(
                "the output's strings would take more than the limit of {max_bytes} bytes (--max-tensor-bytes)"
            )));
        }
    }
    Ok(())
}

/// Every operator the tool knows, default domain first.
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
];

/// The outcome of looking a node up.
#[derive(Debug)]
pub enum Resolution {
    /// The version that applies.
    Found(&'static OpDef, &'static OpVersion),
    /// The op is known, but the model's opset predates its first version (an invalid model).
    TooOld(&'static OpDef),
    /// Domain or op unknown to this tool.
    Unknown,
}

/// Canonical domain name: `"ai.onnx"` and `""` are the same domain.
pub fn canonical_domain(domain: &str) -> &str {
    if domain == "ai.onnx" {
        ""
    } else {
        domain
    }
}

/// Whether any registered operator lives in `domain`.
pub fn knows_domain(domain: &str) -> bool {
    let domain = canonical_domain(domain);
    REGISTRY.iter().any(|d| d.domain == domain)
}

/// Finds the version with the highest `since` <= `opset` (D1).
pub fn resolve(domain: &str, op_type: &str, opset: i64) -> Resolution {
    let domain = canonical_domain(domain);
    let Some(def) = REGISTRY
        .iter()
        .find(|d| d.domain == domain && d.op_type == op_type)
    else {
        return Resolution::Unknown;
    };
    match def.versions.iter().rev().find(|v| v.since <= opset) {
        Some(v) => Resolution::Found(def, v),
        None => Resolution::TooOld(def),
    }
}

/// Runs a node: the shared checks (deprecation, input count, attributes, type constraints),
/// then the kernel.
pub fn invoke(inv: &Invocation<'_>) -> Result<Evaluated, KernelError> {
    check_common(inv)?;
    (inv.version.eval)(inv)
}

fn check_common(inv: &Invocation<'_>) -> Result<(), KernelError> {
    let (def, v) = (inv.def, inv.version);
    if v.deprecated {
        let last = def
            .versions
            .iter()
            .rev()
            .find(|x| !x.deprecated)
            .map_or(String::new(), |x| {
                format!(" (the last version is {}-{})", def.op_type, x.since)
            });
        return Err(spec_err!(
            "{} is deprecated since opset {}{}",
            def.op_type,
            v.since,
            last
        ));
    }
    let given = inv.inputs.len();
    let required = v.inputs.iter().filter(|i| !i.optional).count();
    if given > v.inputs.len() {
        return Err(spec_err!(
            "{} takes at most {} inputs, the node has {given}",
            inv.op_name(),
            v.inputs.len()
        ));
    }
    for (i, spec) in v.inputs.iter().enumerate() {
        if !spec.optional && inv.inputs.get(i).copied().flatten().is_none() {
            return Err(spec_err!(
                "{} needs {required} inputs; input {i} ('{}') is missing",
                inv.op_name(),
                spec.name
            ));
        }
    }
    if inv.node.output.len() > v.outputs || inv.node.output.is_empty() {
        return Err(spec_err!(
            "{} has {} output(s), the node declares {}",
            inv.op_name(),
            v.outputs,
            inv.node.output.len()
        ));
    }
    for a in &inv.node.attribute {
        if !a.ref_attr_name.is_empty() {
            return Err(spec_err!(
                "attribute '{}' refers to a function attribute ('{}'), which a main graph cannot do",
                a.name,
                a.ref_attr_name
            ));
        }
        if !v.attrs.contains(&a.name.as_str()) {
            let later = def
                .versions
                .iter()
                .find(|x| x.since > v.since && x.attrs.contains(&a.name.as_str()))
                .map_or(String::new(), |x| {
                    format!(" (it arrives with version {})", x.since)
                });
            return Err(spec_err!(
                "attribute '{}' is not defined by {}{later}",
                a.name,
                inv.op_name()
            ));
        }
    }
    // Type constraints (D4): every input's dtype is admitted, and inputs sharing a constraint
    // share a dtype.
    let mut bound: Vec<(&str, DType, &str)> = Vec::new();
    for (spec, t) in v.inputs.iter().zip(&inv.inputs) {
        let Some(t) = t else { continue };
        let dtype = t.dtype();
        let Some(c) = v.constraints.iter().find(|c| c.name == spec.constraint) else {
            continue;
        };
        if !c.dtypes.contains(dtype) {
            let later = def
                .versions
                .iter()
                .filter(|x| x.since > v.since && !x.deprecated)
                .find(|x| {
                    x.constraints
                        .iter()
                        .any(|xc| xc.name == c.name && xc.dtypes.contains(dtype))
                })
                .map_or(String::new(), |x| {
                    format!("; it is allowed from version {}", x.since)
                });
            return Err(spec_err!(
                "input '{}' is {dtype}, which is not allowed by {} (constraint {}){later}",
                spec.name,
                inv.op_name(),
                c.name
            ));
        }
        if let Some((_, other, other_name)) = bound.iter().find(|(n, _, _)| *n == c.name) {
            if *other != dtype {
                return Err(spec_err!(
                    "input '{}' is {dtype} but '{other_name}' is {other}; both are {} and must have the same type",
                    spec.name,
                    c.name
                ));
            }
        } else {
            bound.push((c.name, dtype, spec.name));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolution_picks_the_highest_since_not_above_the_opset() {
        let since = |opset| match resolve("", "ScatterElements", opset) {
            Resolution::Found(_, v) => Some(v.since),
            _ => None,
        };
        assert_eq!(since(10), None);
        assert_eq!(since(11), Some(11));
        assert_eq!(since(12), Some(11));
        assert_eq!(since(15), Some(13));
        assert_eq!(since(17), Some(16));
        assert_eq!(since(18), Some(18));
        assert_eq!(since(25), Some(18));
        assert!(matches!(resolve("ai.onnx", "Gather", 1), Resolution::Found(_, v) if v.since == 1));
        assert!(matches!(
            resolve("", "GatherElements", 10),
            Resolution::TooOld(_)
        ));
        assert!(matches!(resolve("", "Loop", 13), Resolution::Unknown));
        assert!(matches!(
            resolve("com.example", "Gather", 13),
            Resolution::Unknown
        ));
    }

    #[test]
    fn every_op_lists_versions_in_increasing_order() {
        for def in REGISTRY {
            assert!(
                def.versions.windows(2).all(|w| w[0].since < w[1].since),
                "{}",
                def.op_type
            );
        }
    }
}
