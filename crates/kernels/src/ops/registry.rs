//! The registry: `(domain, op_type)` -> the versions we implement, each with its type
//! constraints, attributes and kernel, and the shared checks every call passes ([`resolve`], then
//! [`invoke`]). For front ends that read nodes; a runtime's tests mostly want the typed structs in
//! [`super`], or [`call`].

use super::{
    attr::{AttrKind, AttrValue},
    index, spec_err, Reduction, SpecError, REGISTRY,
};
use super::{
    attr::{AttrSpec, Attrs},
    DEFAULT_MAX_OUTPUT_BYTES,
};
use crate::tensor::{dtype, DType, DTypeSet, Elem, Tensor};

/// What an input is for, so that coverage, diagnosis, `bench` and the generator find inputs by
/// their part in the operation rather than by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The tensor read from (gathers) or copied and written into (scatters).
    Data,
    /// Positions: indices, index tuples or write offsets.
    Indices,
    /// Values written or added at the positions (scatter updates, a gradient `dY`).
    Updates,
    /// The output's shape, as a 1-D integer tensor (the backward ops).
    Shape,
    /// The axis, as an input rather than an attribute (OpenVINO Gather-8).
    Axis,
    /// A value passed through (graph plumbing).
    Value,
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
    /// What the input is for.
    pub role: Role,
    /// Whether this last input repeats: the node may give it any number of times, one at least
    /// (Concat's `inputs`), each bound to the same constraint.
    pub variadic: bool,
}

impl InputSpec {
    /// A required input.
    pub const fn required(name: &'static str, constraint: &'static str, role: Role) -> InputSpec {
        InputSpec {
            name,
            constraint,
            optional: false,
            role,
            variadic: false,
        }
    }

    /// An optional input.
    pub const fn optional(name: &'static str, constraint: &'static str, role: Role) -> InputSpec {
        InputSpec {
            name,
            constraint,
            optional: true,
            role,
            variadic: false,
        }
    }

    /// A required input that repeats (the last input of a version): given once or more.
    pub const fn variadic(name: &'static str, constraint: &'static str, role: Role) -> InputSpec {
        InputSpec {
            name,
            constraint,
            optional: false,
            role,
            variadic: true,
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

/// `T`: the classic 15 types; `Tind`: int32 or int64 (Gather, GatherElements, ScatterElements
/// before version 13).
pub(crate) const CLASSIC_TIND32_64: &[Constraint] = &[
    Constraint::new("T", dtype::CLASSIC15),
    Constraint::new("Tind", dtype::INDEX32_64),
];

/// `T`: the classic 15 types and bfloat16; `Tind`: int32 or int64 (the same ops from version 13).
pub(crate) const CLASSIC_BF16_TIND32_64: &[Constraint] = &[
    Constraint::new("T", dtype::CLASSIC15_BF16),
    Constraint::new("Tind", dtype::INDEX32_64),
];

/// `T`: the classic 15 types; `Tind`: int64 (GatherND and ScatterND before version 13).
pub(crate) const CLASSIC_TIND64: &[Constraint] = &[
    Constraint::new("T", dtype::CLASSIC15),
    Constraint::new("Tind", dtype::INDEX64),
];

/// `T`: the classic 15 types and bfloat16; `Tind`: int64 (GatherND and ScatterND from 13).
pub(crate) const CLASSIC_BF16_TIND64: &[Constraint] = &[
    Constraint::new("T", dtype::CLASSIC15_BF16),
    Constraint::new("Tind", dtype::INDEX64),
];

/// The reductions ScatterElements and ScatterND take from version 16 on.
pub(crate) const REDUCTIONS_16: &[&str] = &["none", "add", "mul"];

/// The reductions ScatterElements and ScatterND take from version 18 on.
pub(crate) const REDUCTIONS_18: &[&str] = &["none", "add", "mul", "max", "min"];

/// The mode of a version whose out-of-range indices give zeros instead of an error (OpenVINO
/// Gather-8, D13), as the support matrix shows it.
pub(crate) const OUT_OF_RANGE_ZEROS: &str = "out-of-range: zeros";

/// One computed output and how it was made.
#[derive(Debug, Clone)]
pub struct Value {
    /// The tensor.
    pub tensor: Tensor,
    /// Whether the values come from float arithmetic (a reduction) rather than pure data
    /// movement; decides exact versus tolerant comparison (D9).
    pub arithmetic: bool,
}

/// What a kernel produced.
#[derive(Debug)]
pub struct Evaluated {
    /// The outputs, in the node's output order.
    pub outputs: Vec<Value>,
}

impl Evaluated {
    /// One output made by pure data movement.
    pub fn moved(tensor: Tensor) -> Evaluated {
        Evaluated {
            outputs: vec![Value {
                tensor,
                arithmetic: false,
            }],
        }
    }

    /// One output, `arithmetic` when a reduction combined values into it.
    pub fn one(tensor: Tensor, arithmetic: bool) -> Evaluated {
        Evaluated {
            outputs: vec![Value { tensor, arithmetic }],
        }
    }
}

/// A kernel: reads the call's attributes, checks the spec's rules and computes.
pub type EvalFn = fn(&Invocation<'_>) -> Result<Evaluated, SpecError>;

/// How an operator addresses its data with its index input: decides which traits coverage can
/// look for, which index rules the generator must obey and how diagnosis traces an element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Indexing {
    /// No index input (graph plumbing).
    None,
    /// Indices of any rank, scalars included, pick positions along one axis (Gather).
    Axis,
    /// Indices of the data's rank pick one position per element (GatherElements).
    Elements,
    /// The last dim of the indices holds index tuples into the leading data dims (GatherND).
    Tuples,
    /// One write offset per batch row, never negative; duplicates are meaningless (TensorScatter).
    Offsets,
}

impl Indexing {
    /// Whether the indices may be a scalar (rank 0).
    pub fn scalar_indices(self) -> bool {
        self == Indexing::Axis
    }

    /// Whether two equal indices aim at the same element, so duplicates are a trait to test.
    pub fn duplicates(self) -> bool {
        matches!(self, Indexing::Axis | Indexing::Elements | Indexing::Tuples)
    }
}

/// One version of an operator.
#[derive(Debug)]
pub struct OpVersion {
    /// The opset version that introduced this version.
    pub since: i64,
    /// Set when the op was removed at this version: nodes resolving to it are invalid.
    pub deprecated: bool,
    /// Attributes this version defines; any other attribute is an error (D5).
    pub attrs: &'static [AttrSpec],
    /// Inputs, in order.
    pub inputs: &'static [InputSpec],
    /// Output names, in order.
    pub outputs: &'static [&'static str],
    /// Type constraints.
    pub constraints: &'static [Constraint],
    /// Whether negative indices count from the back (D2); false at Gather-1 and Scatter-9, where
    /// they are out of range, and where indices are offsets.
    pub negatives: bool,
    /// Reductions or modes the version performs, for the support matrix and coverage.
    pub modes: &'static [&'static str],
    /// The attribute that selects among [`OpVersion::modes`] (absent: the first), when one
    /// does; `None` where the modes only describe the op.
    pub mode_attr: Option<&'static str>,
    /// The kernel.
    pub eval: EvalFn,
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
    /// Whether this is graph plumbing (Constant, Identity, and the context operators) rather than
    /// an operator under test: left out of coverage, of `generate` and of the per-operator summary.
    pub plumbing: bool,
    /// Whether this is a context operator (Shape, Reshape, Transpose, integer Add, ...): plumbing
    /// that the evaluator computes only around an operator under test, so that a graph of context
    /// operators alone is not a case the tool judges.
    pub context: bool,
    /// Whether the op reads its data input only where it gathers (rather than copying it whole,
    /// as scatters do); decides the bytes `bench` counts as moved.
    pub gathers: bool,
    /// How the index input addresses the data.
    pub indexing: Indexing,
    /// What the op does element by element, with the switches for known wrong semantics, so
    /// that a wrong output can be diagnosed; `None` where the op is not modelled.
    pub provenance: Option<super::provenance::Provenance>,
    /// The versions.
    pub versions: &'static [OpVersion],
}

impl OpDef {
    /// Whether the op hands its input on unchanged (Identity): a graph output it produces comes
    /// from the node before it.
    pub fn passes_through(&self) -> bool {
        self.plumbing
            && !self.context
            && self
                .versions
                .iter()
                .all(|v| v.input_with(Role::Value).is_some())
    }

    /// `Op-since` in the default domain, `domain.Op-since` elsewhere: how reports name an
    /// operator version (`Gather-13`, `com.microsoft.GatherGrad-1`).
    pub fn version_name(&self, v: &OpVersion) -> String {
        if self.domain.is_empty() {
            format!("{}-{}", self.op_type, v.since)
        } else {
            format!("{}.{}-{}", self.domain, self.op_type, v.since)
        }
    }
}

impl OpVersion {
    /// A live version with one output named `output`, negative indices counting from the back
    /// and no modes: what most versions are. The others change fields with struct update
    /// (`OpVersion { negatives: false, ..OpVersion::base(..) }`).
    pub(crate) const fn base(
        since: i64,
        attrs: &'static [AttrSpec],
        inputs: &'static [InputSpec],
        constraints: &'static [Constraint],
        eval: EvalFn,
    ) -> OpVersion {
        OpVersion {
            since,
            deprecated: false,
            attrs,
            inputs,
            outputs: &["output"],
            constraints,
            negatives: true,
            modes: &[],
            mode_attr: None,
            eval,
        }
    }

    /// This version with the modes `modes`, chosen by the attribute `attr` (ScatterElements' and
    /// ScatterND's `reduction`, TensorScatter's `mode`).
    pub(crate) const fn with_modes(
        self,
        attr: &'static str,
        modes: &'static [&'static str],
    ) -> OpVersion {
        OpVersion {
            modes,
            mode_attr: Some(attr),
            ..self
        }
    }

    /// Whether an index outside `[-s, s-1]` reads as zeros rather than breaking the spec.
    pub fn zero_fills(&self) -> bool {
        self.modes.contains(&OUT_OF_RANGE_ZEROS)
    }

    /// The input playing `role`, if any.
    pub fn input_with(&self, role: Role) -> Option<usize> {
        self.inputs.iter().position(|i| i.role == role)
    }

    /// The input whose dtype is the op's value type: the data, or else the updates (the backward
    /// ops' gradient).
    pub fn value_input(&self) -> Option<usize> {
        self.input_with(Role::Data)
            .or_else(|| self.input_with(Role::Updates))
    }

    /// The type constraint of input `i`.
    pub fn constraint_of(&self, i: usize) -> Option<&'static Constraint> {
        let name = self.inputs.get(i)?.constraint;
        self.constraints.iter().find(|c| c.name == name)
    }

    /// The declared attribute `name`.
    pub fn attr(&self, name: &str) -> Option<&'static AttrSpec> {
        self.attrs.iter().find(|a| a.name == name)
    }

    /// The attribute names, in declaration order.
    pub fn attr_names(&self) -> Vec<&'static str> {
        self.attrs.iter().map(|a| a.name).collect()
    }
}

/// Everything a kernel sees.
#[derive(Debug)]
pub struct Invocation<'a> {
    /// The operator.
    pub def: &'static OpDef,
    /// The resolved version.
    pub version: &'static OpVersion,
    /// The attributes given.
    pub attrs: Attrs<'a>,
    /// Inputs by position; `None` for an omitted optional input.
    pub inputs: Vec<Option<&'a Tensor>>,
    /// How many outputs the caller asks for (a node's declared outputs).
    pub outputs: usize,
    /// Largest output, in bytes, a kernel may create.
    pub max_bytes: usize,
}

impl Invocation<'_> {
    /// Input `i`, which the registry has checked is present when it is not optional.
    pub fn input(&self, i: usize) -> Result<&Tensor, SpecError> {
        self.inputs
            .get(i)
            .copied()
            .flatten()
            .ok_or_else(|| spec_err!("input {} is missing", i))
    }

    /// How this version treats negative indices, as the registry says (D2).
    pub fn negatives(&self) -> index::Negatives {
        if self.version.negatives {
            index::Negatives::FromBack
        } else {
            index::Negatives::Forbidden {
                op: self.def.op_type,
                since: self.version.since,
                // The first version of the same op that counts from the back: Gather-11 in
                // ONNX, Gather-8 in OpenVINO's opsets.
                allowed_from: self
                    .def
                    .versions
                    .iter()
                    .find(|v| v.negatives && v.since > self.version.since)
                    .map_or(11, |v| v.since),
                // ONNX Gather-1 and Scatter-9 never say whether a negative index is in bounds;
                // OpenVINO's Gather-1 and -7 give the range [0, data[axis] - 1] themselves.
                rule: self
                    .def
                    .domain
                    .is_empty()
                    .then_some(crate::ops::Decision::D2),
            }
        }
    }

    /// `Op-since`, e.g. `ScatterElements-16`, for messages.
    pub fn op_name(&self) -> String {
        format!("{}-{}", self.def.op_type, self.version.since)
    }

    /// The INT attribute `name`, or the version's default for it.
    pub fn int(&self, name: &str) -> Result<i64, SpecError> {
        let default = match self.version.attr(name).map(|a| a.kind) {
            Some(AttrKind::Int(d)) => d,
            _ => 0,
        };
        self.attrs.int(name, default)
    }

    /// The STRING attribute `name`, or the version's default for it.
    pub fn string(&self, name: &str) -> Result<String, SpecError> {
        let default = match self.version.attr(name).map(|a| a.kind) {
            Some(AttrKind::Str { default, .. }) => default,
            _ => "",
        };
        self.attrs.string(name, default)
    }

    /// Fails with [`SpecError::TooLarge`] when `count` elements of `dtype` exceed the limit.
    pub fn check_output_size(&self, dtype: DType, shape: &[usize]) -> Result<usize, SpecError> {
        let n = crate::tensor::numel(shape).ok_or_else(|| {
            SpecError::TooLarge(format!(
                "output shape {} overflows",
                crate::tensor::shape_text(shape)
            ))
        })?;
        let bytes = crate::tensor::byte_len(dtype, n).unwrap_or(usize::MAX);
        if bytes > self.max_bytes {
            return Err(SpecError::TooLarge(format!(
                "output {dtype} tensor of shape {} would take {bytes} bytes, more than the limit of {} bytes (--max-tensor-bytes)",
                crate::tensor::shape_text(shape),
                self.max_bytes
            )));
        }
        // Under a raised limit the allocator may still refuse, which would abort the process:
        // ask first (address space only; no page is touched) and error instead.
        if Vec::<u8>::new().try_reserve_exact(bytes).is_err() {
            return Err(SpecError::TooLarge(format!(
                "output {dtype} tensor of shape {} would take {bytes} bytes, which this machine cannot allocate",
                crate::tensor::shape_text(shape)
            )));
        }
        Ok(n)
    }
}

/// Fails with [`SpecError::TooLarge`] when the string payloads an output would copy exceed the
/// limit: a gather can repeat one long string many times, which the element count alone misses.
pub fn check_heap_bytes<T: Elem>(
    src: &[T],
    picks: impl Iterator<Item = usize>,
    max_bytes: usize,
) -> Result<(), SpecError> {
    if !T::OWNS_HEAP {
        return Ok(());
    }
    let mut total = 0usize;
    for i in picks {
        total = total.saturating_add(src.get(i).map_or(0, Elem::heap_len));
        if total > max_bytes {
            return Err(SpecError::TooLarge(format!(
                "the output's strings would take more than the limit of {max_bytes} bytes (--max-tensor-bytes)"
            )));
        }
    }
    Ok(())
}

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
    let Some(def) = find_op(domain, op_type) else {
        return Resolution::Unknown;
    };
    match def.versions.iter().rev().find(|v| v.since <= opset) {
        Some(v) => Resolution::Found(def, v),
        None => Resolution::TooOld(def),
    }
}

/// Runs a node: the shared checks (deprecation, input count, attributes, type constraints),
/// then the kernel.
pub fn invoke(inv: &Invocation<'_>) -> Result<Evaluated, SpecError> {
    check_common(inv)?;
    (inv.version.eval)(inv)
}

/// Evaluates operator `def` at `opset` on `inputs` with `attrs`, as the typed API does: the same
/// resolution (D1), shared checks and kernel as a node of a model, and the first output.
pub(crate) fn call_typed(
    def: &'static OpDef,
    opset: i64,
    attrs: Attrs<'_>,
    inputs: &[Option<&Tensor>],
) -> Result<Tensor, SpecError> {
    let mut out = call_op(def, opset, attrs, inputs, 1, DEFAULT_MAX_OUTPUT_BYTES)?;
    Ok(out.swap_remove(0))
}

/// Evaluates operator `op_type` of `domain` (`""` or `"ai.onnx"` for ONNX) at `opset` as a node
/// with `outputs` outputs would be: the same resolution (D1), checks and kernel as a node of a
/// model, with outputs of at most `max_bytes` each. Returns every output the kernel makes, at
/// least one; an operator the tool does not know is [`SpecError::Unsupported`].
///
/// ```
/// use onnx_idx_check_kernels::ops::{call, Attrs, DEFAULT_MAX_OUTPUT_BYTES};
/// use onnx_idx_check_kernels::Tensor;
///
/// let data = Tensor::from_vec(vec![2, 2], vec![1i32, 2, 3, 4])?;
/// let indices = Tensor::from_vec(vec![2, 1], vec![1i64, 0])?;
/// let attrs = Attrs::new().with_int("axis", 1);
/// let inputs = [Some(&data), Some(&indices)];
/// let out = call("", "GatherElements", 13, attrs, &inputs, 1, DEFAULT_MAX_OUTPUT_BYTES)?;
/// assert_eq!(out[0].to_vec::<i32>()?, [2, 3]);
/// assert!(call("", "Gather", 13, Attrs::new(), &[], 1, 1 << 20).is_err());
/// assert!(call("", "Conv", 13, Attrs::new(), &[], 1, 1 << 20).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn call(
    domain: &str,
    op_type: &str,
    opset: i64,
    attrs: Attrs<'_>,
    inputs: &[Option<&Tensor>],
    outputs: usize,
    max_bytes: usize,
) -> Result<Vec<Tensor>, SpecError> {
    let def = find_op(domain, op_type).ok_or_else(|| {
        SpecError::Unsupported(format!(
            "{op_type} of domain '{domain}' is not an operator onnx-idx-check implements"
        ))
    })?;
    call_op(def, opset, attrs, inputs, outputs, max_bytes)
}

/// Evaluates operator `def` at `opset` as a node with `outputs` outputs would be (the same
/// resolution, checks and kernel), with outputs of at most `max_bytes` each: every output the
/// kernel makes, at least one. The Python module's functions and `reference_ops()` call this.
pub fn call_op(
    def: &'static OpDef,
    opset: i64,
    attrs: Attrs<'_>,
    inputs: &[Option<&Tensor>],
    outputs: usize,
    max_bytes: usize,
) -> Result<Vec<Tensor>, SpecError> {
    let version = match def.versions.iter().rev().find(|v| v.since <= opset) {
        Some(v) => v,
        None => {
            return Err(spec_err!(
                "{} does not exist at {} opset {opset} (its first version is {})",
                def.op_type,
                if def.domain.is_empty() {
                    "ai.onnx"
                } else {
                    def.domain
                },
                def.versions.first().map_or(0, |v| v.since)
            ))
        }
    };
    let inv = Invocation {
        def,
        version,
        attrs,
        inputs: inputs.to_vec(),
        outputs,
        max_bytes,
    };
    let out = invoke(&inv)?.outputs;
    if out.is_empty() {
        return Err(spec_err!(
            "internal error: {} made no output",
            inv.op_name()
        ));
    }
    Ok(out.into_iter().map(|v| v.tensor).collect())
}

/// The operator `op_type` of `domain` (`""` and `"ai.onnx"` alike), at any version.
pub fn find_op(domain: &str, op_type: &str) -> Option<&'static OpDef> {
    let domain = canonical_domain(domain);
    REGISTRY
        .iter()
        .find(|d| d.domain == domain && d.op_type == op_type)
        .copied()
}

/// The `reduction` a scatter applies: the attribute, checked against the reductions the version
/// performs ([`OpVersion::modes`]); `none` where the version has no such attribute.
pub(crate) fn reduction_of(inv: &Invocation<'_>) -> Result<Reduction, SpecError> {
    if inv.version.attr("reduction").is_none() {
        return Ok(Reduction::None);
    }
    let all = [
        Reduction::None,
        Reduction::Add,
        Reduction::Mul,
        Reduction::Max,
        Reduction::Min,
    ];
    let allowed: Vec<Reduction> = all
        .into_iter()
        .filter(|r| inv.version.modes.contains(&r.name()))
        .collect();
    Reduction::parse(&inv.string("reduction")?, &allowed, &inv.op_name())
}

fn check_common(inv: &Invocation<'_>) -> Result<(), SpecError> {
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
    let variadic = v.inputs.last().is_some_and(|i| i.variadic);
    if given > v.inputs.len() && !variadic {
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
    if inv.outputs > v.outputs.len() || inv.outputs == 0 {
        return Err(spec_err!(
            "{} has {} output(s), the node declares {}",
            inv.op_name(),
            v.outputs.len(),
            inv.outputs
        ));
    }
    for i in 0..inv.attrs.count() {
        let Some((name, value)) = inv.attrs.get(i) else {
            break;
        };
        if let AttrValue::Ref(outer) = value {
            return Err(spec_err!(
                "attribute '{name}' refers to a function attribute ('{outer}'), which a main graph cannot do"
            ));
        }
        if v.attr(name).is_none() {
            let later = def
                .versions
                .iter()
                .find(|x| x.since > v.since && x.attr(name).is_some())
                .map_or(String::new(), |x| {
                    format!(" (it arrives with version {})", x.since)
                });
            return Err(spec_err!(
                "attribute '{name}' is not defined by {}{later}",
                inv.op_name()
            ));
        }
    }
    // Type constraints (D4): every input's dtype is admitted, and inputs sharing a constraint
    // share a dtype.
    let mut bound: Vec<(&str, DType, &str)> = Vec::new();
    // A variadic last input binds every input past the others.
    let specs = v
        .inputs
        .iter()
        .chain(std::iter::repeat_n(v.inputs.last(), usize::from(variadic) * given).flatten());
    for (k, (spec, t)) in specs.zip(&inv.inputs).enumerate() {
        if spec.variadic && t.is_none() {
            return Err(spec_err!(
                "{} needs every '{}' input; input {k} is missing",
                inv.op_name(),
                spec.name
            ));
        }
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

/// The registry checked against itself and against the spec's decisions: each flag a version
/// carries must be what its kernel does.
#[cfg(test)]
mod registry_tests {
    use super::*;
    use crate::tensor::Tensor;

    /// The versions that run (a deprecated version refuses every call), context operators left
    /// out (their own tests, in `src/ops/context/`, cover them).
    fn live() -> impl Iterator<Item = (&'static OpDef, &'static OpVersion)> {
        REGISTRY
            .iter()
            .filter(|d| !d.context)
            .flat_map(|d| d.versions.iter().map(move |v| (*d, v)))
            .filter(|(_, v)| !v.deprecated)
    }

    fn f32s(shape: &[usize], v: &[f32]) -> Tensor {
        Tensor::from_slice(shape, v).unwrap()
    }

    fn i64s(shape: &[usize], v: &[i64]) -> Tensor {
        Tensor::from_slice(shape, v).unwrap()
    }

    /// A small call of `v` built from its input roles and the op's indexing, valid with every
    /// attribute at its default when `index` is a valid index into a dim of size 2 (data is
    /// `[2, 3]` float, or `[2, 3, 2]` for TensorScatter). `None` for Constant, which has no
    /// inputs to build.
    fn small_call(def: &OpDef, v: &OpVersion, index: i64) -> Option<Vec<Tensor>> {
        let data = f32s(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let (indices, updates) = match def.indexing {
            // Along axis 0: one index picks one row of 3.
            Indexing::Axis => (i64s(&[1], &[index]), f32s(&[1, 3], &[7.0, 8.0, 9.0])),
            // Same shape as data; the first element carries the index, the rest are 0.
            Indexing::Elements => (
                i64s(&[2, 3], &[index, 0, 0, 0, 0, 0]),
                f32s(&[2, 3], &[7.0, 8.0, 9.0, 10.0, 11.0, 12.0]),
            ),
            // One 1-tuple into dim 0: a slice of 3.
            Indexing::Tuples => (i64s(&[1, 1], &[index]), f32s(&[1, 3], &[7.0, 8.0, 9.0])),
            Indexing::Offsets => {
                let past = f32s(&[2, 3, 2], &[0.0; 12]);
                let update = f32s(&[2, 1, 2], &[1.0, 2.0, 3.0, 4.0]);
                return Some(vec![past, update, i64s(&[2], &[index, index])]);
            }
            Indexing::None if v.inputs.is_empty() => return None,
            Indexing::None => (data.clone(), data.clone()),
        };
        let inputs = v
            .inputs
            .iter()
            .map(|spec| match spec.role {
                Role::Data | Role::Value => data.clone(),
                Role::Indices => indices.clone(),
                Role::Updates => updates.clone(),
                Role::Shape => i64s(&[2], &[2, 3]),
                Role::Axis => Tensor::scalar(0i64),
            })
            .collect();
        Some(inputs)
    }

    fn eval(
        def: &'static OpDef,
        v: &OpVersion,
        attrs: Attrs<'_>,
        inputs: &[Tensor],
    ) -> Result<Tensor, SpecError> {
        let inputs: Vec<Option<&Tensor>> = inputs.iter().map(Some).collect();
        call_typed(def, v.since, attrs, &inputs)
    }

    /// Whether `-1` counts from the back, as docs/semantics.md D2 (and D13, D14 for the dialects)
    /// decide, by version.
    fn d2_negatives(def: &OpDef, since: i64) -> bool {
        match (def.domain, def.op_type, since) {
            // D2: at Gather-1 and Scatter-9 a negative index is out of range.
            ("", "Gather", 1) | ("", "Scatter", 9) => false,
            // D2: Gather-11/13, every GatherElements, GatherND, ScatterElements, ScatterND.
            ("", "Gather" | "GatherElements" | "GatherND" | "ScatterElements" | "ScatterND", _) => {
                true
            }
            // Section 6 (D13): "if k < 0, k += data.shape[axis]".
            ("org.openvinotoolkit", "Gather", 8) => true,
            // OpenVINO Gather-1 and Gather-7: indices "in the range [0, data[axis] - 1]".
            ("org.openvinotoolkit", "Gather", 1 | 7) => false,
            // D14: the backward pass of Gather and GatherElements, whose indices count from
            // the back since opset 11.
            ("com.microsoft", "GatherGrad" | "GatherElementsGrad", 1) => true,
            _ => panic!(
                "no decision on negative indices for {}",
                def.version_name(def.versions.iter().find(|v| v.since == since).unwrap())
            ),
        }
    }

    #[test]
    fn the_negatives_flag_says_what_the_kernel_does_and_what_d2_decides() {
        let mut checked = 0;
        for (def, v) in live() {
            if !matches!(
                def.indexing,
                Indexing::Axis | Indexing::Elements | Indexing::Tuples
            ) {
                continue;
            }
            let name = def.version_name(v);
            assert_eq!(v.negatives, d2_negatives(def, v.since), "{name}: negatives");
            let last = eval(def, v, Attrs::new(), &small_call(def, v, 1).unwrap())
                .unwrap_or_else(|e| panic!("{name}: index 1 of 2 refused: {e}"));
            let minus_one = eval(def, v, Attrs::new(), &small_call(def, v, -1).unwrap());
            if v.negatives {
                assert_eq!(minus_one, Ok(last), "{name}: -1 is not the last position");
            } else {
                // Refused, or (an op that zero-fills out of range) not the last position.
                assert_ne!(minus_one, Ok(last), "{name}: -1 counts from the back");
            }
            checked += 1;
        }
        assert!(checked >= 18, "only {checked} versions checked");
    }

    #[test]
    fn ops_indexing_by_offsets_or_not_at_all_take_no_negatives() {
        for def in REGISTRY {
            if matches!(def.indexing, Indexing::Offsets | Indexing::None) {
                for v in def.versions {
                    assert!(!v.negatives, "{}", def.version_name(v));
                }
            }
        }
        // And the kernel agrees for TensorScatter: a -1 write index is refused.
        for (def, v) in live().filter(|(d, _)| d.indexing == Indexing::Offsets) {
            assert!(eval(def, v, Attrs::new(), &small_call(def, v, 0).unwrap()).is_ok());
            assert!(eval(def, v, Attrs::new(), &small_call(def, v, -1).unwrap()).is_err());
        }
    }

    #[test]
    fn a_mode_attribute_offers_exactly_the_modes() {
        let mut checked = 0;
        for def in REGISTRY {
            for v in def.versions {
                let Some(name) = v.mode_attr else { continue };
                if let Some(AttrSpec {
                    kind: AttrKind::Str { values, default },
                    ..
                }) = v.attr(name)
                {
                    assert_eq!(*values, v.modes, "{}: {name}", def.version_name(v));
                    assert_eq!(Some(default), v.modes.first(), "{}", def.version_name(v));
                    checked += 1;
                }
            }
        }
        // ScatterElements-16/18, ScatterND-16/18, TensorScatter-24.
        assert_eq!(checked, 5);
    }

    #[test]
    fn constraints_inputs_and_outputs_are_complete() {
        for def in REGISTRY {
            for v in def.versions {
                let name = def.version_name(v);
                assert!(!v.outputs.is_empty(), "{name} has no output");
                for input in v.inputs {
                    assert!(
                        v.constraints.iter().any(|c| c.name == input.constraint),
                        "{name}: input '{}' names constraint {}, which is not declared",
                        input.name,
                        input.constraint
                    );
                }
            }
        }
    }

    #[test]
    fn declared_defaults_are_accepted_explicitly_and_undeclared_attributes_refused() {
        let mut defaults = 0;
        for (def, v) in live() {
            let name = def.version_name(v);
            let inputs = small_call(def, v, 0);
            for spec in v.attrs {
                let attrs = match spec.kind {
                    AttrKind::Int(d) => Attrs::new().with_int(spec.name, d),
                    AttrKind::Str { default, .. } => Attrs::new().with_str(spec.name, default),
                    AttrKind::Any => continue,
                };
                let inputs = inputs.as_ref().expect("an op with attributes has inputs");
                let implicit = eval(def, v, Attrs::new(), inputs)
                    .unwrap_or_else(|e| panic!("{name}: the small call is refused: {e}"));
                let explicit = eval(def, v, attrs, inputs);
                assert_eq!(
                    explicit,
                    Ok(implicit),
                    "{name}: '{}' given its default",
                    spec.name
                );
                defaults += 1;
            }
            // An attribute no version declares, and one that only other versions declare.
            let others = def
                .versions
                .iter()
                .flat_map(|x| x.attrs.iter())
                .map(|a| a.name)
                .filter(|n| v.attr(n).is_none());
            for undeclared in std::iter::once("no_such_attribute").chain(others) {
                let attrs = Attrs::new().with_int(undeclared, 0);
                let e = match &inputs {
                    Some(inputs) => eval(def, v, attrs, inputs),
                    None => call_typed(def, v.since, attrs, &[]),
                };
                let e = e.expect_err(&format!("{name} accepted '{undeclared}'"));
                assert!(
                    e.to_string().contains("is not defined by"),
                    "{name}, '{undeclared}': {e}"
                );
            }
        }
        assert!(defaults >= 20, "only {defaults} defaults checked");
    }
}
