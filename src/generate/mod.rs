//! `generate OUTDIR`: writes a conformance suite for the indexing operators in ONNX's node-test
//! layout (`<case>/model.onnx`, `<case>/test_data_set_0/input_K.pb`, `output_K.pb`), one small
//! case per operator version, data type and trait, plus one per rule of the spec that requires an
//! error, with `MANIFEST.json` ([`manifest`]) and `expectations.toml` for the errored ones. The
//! [`Profile`] says how many: `full` crosses every case with every value and index dtype,
//! `stress` adds large cases.
//!
//! The expected outputs come from this tool's own evaluation, the path `run` takes (the files
//! are decoded by the loader and the model is planned and evaluated by [`onnx_idx_check::eval`]): the
//! suite is the reference. The generator's tests check them against an independent naive
//! reference instead.
//!
//! The same seed, profile, operator list and tool version write the same bytes: the values come
//! from a seeded generator of our own ([`rng`]) per case, and every file is encoded by prost.
//! The suite is written, one operator version at a time (never whole in memory: `stress` is
//! 0.7 GB), to a hidden sibling directory and then put in OUTDIR's place, so OUTDIR holds either
//! the previous suite or the new one, never a mix.

pub(crate) mod cases;
mod ir;
pub(crate) mod manifest;
mod model;
mod rng;
mod values;
pub(crate) mod variant;
pub(crate) mod verify;

use crate::owned;
use anyhow::Context;
use manifest::{CaseEntry, Expected, Manifest};
use model::{tensor_proto, NodeModel};
use onnx_idx_check::eval::{EvalError, PlanError};
use onnx_idx_check::expectations::{render_with_header, Entry};
use onnx_idx_check::load::tensor::{tensor_from_proto, TensorContext};
use onnx_idx_check::ops::{OpDef, SpecError, DEFAULT_MAX_OUTPUT_BYTES, REGISTRY};
use onnx_idx_check::tensor::Tensor;
use onnx_idx_check::verdict::Status;
use prost::Message;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The expectations file written beside the cases.
pub const EXPECTATIONS_FILE: &str = "expectations.toml";

/// How much to generate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// Small cases, one per version, dtype and trait: for every CI run.
    Quick,
    /// The same small cases on every allowed value dtype crossed with every allowed index
    /// dtype: a superset of quick.
    Full,
    /// The quick cases and, for the latest version of each operator, large ones: long axes,
    /// two million indices, high ranks.
    Stress,
}

impl Profile {
    /// The profile's name, as `--profile` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Quick => "quick",
            Profile::Full => "full",
            Profile::Stress => "stress",
        }
    }
}

/// What to generate.
#[derive(Clone, Debug)]
pub struct Options {
    /// The profile.
    pub profile: Profile,
    /// The seed of the random values.
    pub seed: u64,
    /// Operators to generate (`op_type`s); empty for every one the generator knows.
    pub ops: Vec<String>,
    /// The largest tensor a case may hold, in bytes: a case with a bigger one (in practice one of
    /// the stress profile's large cases) is left out.
    pub max_tensor_bytes: usize,
    /// The model format: `model.onnx`, or OpenVINO IR (`model.xml`), which holds the OpenVINO
    /// dialect's operators only.
    pub format: onnx_idx_check::load::ir::ModelFormat,
}

/// Why `generate` refused to start; every one is the caller's to fix (a usage error).
#[derive(Debug, Error)]
pub enum GenerateError {
    /// `--ops` names an operator the registry does not have.
    #[error("--ops: unknown operator '{name}' (onnx-idx-check knows {known})")]
    UnknownOp {
        /// The name given.
        name: String,
        /// The operators the registry knows.
        known: String,
    },
    /// `--format ir` with no OpenVINO operator among those selected.
    #[error("--format ir writes the OpenVINO dialect only ({ir}); --ops selects none of it")]
    NoIrOps {
        /// The operators that have an IR form.
        ir: String,
    },
    /// `--ops` names an operator the generator does not write yet.
    #[error("--ops: {name} is not generated yet (generate writes {generated})")]
    NotGenerated {
        /// The name given.
        name: String,
        /// The operators the generator writes.
        generated: String,
    },
    /// OUTDIR holds something other than a suite this command wrote.
    #[error("{path} is not empty and is not a suite written by generate ({reason}); give an empty or new directory")]
    NotASuite {
        /// OUTDIR.
        path: String,
        /// What is in the way.
        reason: String,
    },
    /// OUTDIR exists and is not a directory.
    #[error("{0} exists and is not a directory")]
    NotADirectory(String),
}

/// What a generation wrote.
#[derive(Debug)]
pub struct Summary {
    /// Where.
    pub outdir: PathBuf,
    /// Cases written.
    pub cases: usize,
    /// Of them, those the spec requires an error for.
    pub errored: usize,
    /// Cases left out because the tool does not implement what they ask (D8's string and bool
    /// reductions, say): their expected outputs would not come from a reference.
    pub left_out: usize,
    /// Cases left out because a tensor of theirs has a type OpenVINO IR cannot hold (`--format
    /// ir` only): those types' names, with the number of cases of each.
    pub no_ir_type: BTreeMap<String, usize>,
    /// Cases left out because a tensor of theirs is larger than `max_tensor_bytes`.
    pub too_large: usize,
    /// Files written, the manifest included.
    pub files: usize,
    /// Their total size in bytes.
    pub bytes: u64,
    /// The number of cases of the previous suite this one replaced, when OUTDIR held one.
    pub replaced: Option<usize>,
}

/// How `--ops` and the manifest name an operator: its op_type in the default domain, else
/// `domain.op_type`, as reports name it (`org.openvinotoolkit.Gather`).
pub fn op_name(d: &OpDef) -> String {
    match d.domain {
        "" => d.op_type.to_owned(),
        domain => format!("{domain}.{}", d.op_type),
    }
}

/// Whether `--ops` entry `name` selects `d`: its full name, or its bare op_type when no
/// default-domain operator has that op_type (`GatherGrad` for `com.microsoft.GatherGrad`, while
/// `Gather` is ai.onnx's).
fn names_op(name: &str, d: &OpDef) -> bool {
    let shadowed = REGISTRY
        .iter()
        .any(|x| !x.plumbing && x.domain.is_empty() && x.op_type == name);
    op_name(d) == name || (d.op_type == name && (d.domain.is_empty() || !shadowed))
}

/// The operators `names` asks for (every generated one when empty), in registry order.
pub fn select_ops(names: &[String]) -> Result<Vec<&'static OpDef>, GenerateError> {
    let generated = cases::generated_ops();
    let list = |defs: &mut dyn Iterator<Item = &&'static OpDef>| {
        let v: Vec<String> = defs.map(|d| op_name(d)).collect();
        v.join(", ")
    };
    for name in names {
        if !REGISTRY.iter().any(|d| !d.plumbing && names_op(name, d)) {
            return Err(GenerateError::UnknownOp {
                name: name.clone(),
                known: list(&mut REGISTRY.iter().filter(|d| !d.plumbing)),
            });
        }
        if !generated.iter().any(|d| names_op(name, d)) {
            return Err(GenerateError::NotGenerated {
                name: name.clone(),
                generated: list(&mut generated.iter()),
            });
        }
    }
    Ok(generated
        .into_iter()
        .filter(|d| names.is_empty() || names.iter().any(|n| names_op(n, d)))
        .collect())
}

/// [`select_ops`], kept to the OpenVINO dialect for `--format ir` (the only operators with an IR
/// layer).
fn select_ops_in(
    names: &[String],
    format: onnx_idx_check::load::ir::ModelFormat,
) -> Result<Vec<&'static OpDef>, GenerateError> {
    let mut ops = select_ops(names)?;
    if format == onnx_idx_check::load::ir::ModelFormat::Ir {
        ops.retain(|d| d.domain == onnx_idx_check::load::ir::DOMAIN);
        if ops.is_empty() {
            return Err(GenerateError::NoIrOps {
                ir: format!("{}.Gather", onnx_idx_check::load::ir::DOMAIN),
            });
        }
    }
    Ok(ops)
}

/// One case, rendered: its files (relative to the case directory) and its manifest entry.
pub(crate) struct Rendered {
    /// The case's directory name.
    pub(crate) name: String,
    /// Its files: path relative to the case directory, bytes.
    pub(crate) files: Vec<(String, Vec<u8>)>,
    entry: CaseEntry,
    /// The byte size of its largest tensor, input or expected output.
    largest: usize,
}

impl Rendered {
    /// Writes the case's files into `case_dir` (its own directory, created as needed).
    pub(crate) fn write_to(&self, case_dir: &Path) -> std::io::Result<()> {
        for (rel, bytes) in &self.files {
            let path = case_dir.join(rel);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(path, bytes)?;
        }
        Ok(())
    }

    /// For a case where the spec requires an error, that error in the reference's words.
    pub(crate) fn error(&self) -> Option<&str> {
        self.entry.error.as_deref()
    }
}

/// What the reference makes of a case.
enum Outcome {
    Outputs(Vec<Tensor>),
    Error(String),
    /// Allowed by the spec, not implemented: no reference value, so no case.
    Unsupported,
}

/// Evaluates `model` on the decoded inputs, as `run` does.
fn evaluate(model: &onnx_idx_check::pb::ModelProto, inputs: &[Tensor]) -> Result<Outcome, String> {
    let plan = match onnx_idx_check::eval::plan(model) {
        Ok(p) => p,
        Err(PlanError::Unsupported(_)) => return Ok(Outcome::Unsupported),
        Err(PlanError::Invalid(e)) => return Ok(Outcome::Error(e)),
    };
    // A case in context may hold initializers (an embedding's weights).
    let ctx = TensorContext {
        base_dir: Path::new("."),
        max_bytes: DEFAULT_MAX_OUTPUT_BYTES,
    };
    let initializers: Vec<(String, Tensor)> = plan
        .initializers()
        .iter()
        .map(|p| tensor_from_proto(p, &ctx).map(|t| (p.name.clone(), t)))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("an initializer does not read back: {e}"))?;
    match plan.evaluate(
        &initializers,
        inputs,
        Path::new("."),
        DEFAULT_MAX_OUTPUT_BYTES,
    ) {
        Ok(values) => Ok(Outcome::Outputs(
            values.into_iter().map(|v| v.tensor).collect(),
        )),
        Err(EvalError::Kernel {
            error: SpecError::Unsupported(_),
            ..
        }) => Ok(Outcome::Unsupported),
        Err(EvalError::Kernel { error, .. }) => Ok(Outcome::Error(error.to_string())),
        Err(e) => Err(e.to_string()),
    }
}

/// Renders one case; `None` when the tool does not implement it. An error means the generator
/// and the reference disagree on whether the spec allows the case: a bug of the generator.
pub(crate) fn render_case(spec: &cases::CaseSpec) -> anyhow::Result<Option<Rendered>> {
    let v = spec.version;
    // A case in context names its graph inputs and outputs itself.
    let names: Vec<&str> = match &spec.context {
        Some(c) => c.inputs.iter().map(String::as_str).collect(),
        None => v.inputs.iter().map(|i| i.name).collect(),
    };
    let protos: Vec<_> = spec
        .inputs
        .iter()
        .zip(&names)
        .map(|(t, n)| tensor_proto(t, n, spec.form))
        .collect();
    // The inputs as `run` will read them back from the files.
    let ctx = TensorContext {
        base_dir: Path::new("."),
        max_bytes: DEFAULT_MAX_OUTPUT_BYTES,
    };
    let decoded: Vec<Tensor> = protos
        .iter()
        .map(|p| tensor_from_proto(p, &ctx))
        .collect::<Result<_, _>>()
        .with_context(|| format!("{}: an input does not read back", spec.name))?;
    let bound: Vec<(&str, &Tensor)> = names.iter().copied().zip(&decoded).collect();
    let out_names: Vec<&str> = match &spec.context {
        Some(c) => c.outputs.iter().map(String::as_str).collect(),
        None => v.outputs.to_vec(),
    };
    let node = |outputs: &[(&str, onnx_idx_check::DType, Option<Vec<usize>>)]| {
        match &spec.context {
            Some(c) => model::graph_model(&model::GraphModel {
                name: &spec.name,
                opset: spec.opset,
                nodes: &c.nodes,
                initializers: &c.initializers,
                inputs: &bound,
                outputs,
                form: spec.form,
            }),
            None => model::model(&NodeModel {
                name: &spec.name,
                domain: spec.def.domain,
                op_type: spec.def.op_type,
                opset: spec.opset,
                attrs: &spec.attrs,
                inputs: &bound,
                outputs,
            }),
        }
        .with_context(|| format!("{}: opset {} has no IR version", spec.name, spec.opset))
    };
    let unknown: Vec<_> = out_names.iter().map(|&n| (n, spec.dtype, None)).collect();
    // A single node's model declares its first output; a graph in context every one of its own.
    let declared = if spec.context.is_some() {
        &unknown[..]
    } else {
        &unknown[..1]
    };
    let outcome = evaluate(&node(declared)?, &decoded)
        .map_err(|e| anyhow::anyhow!("{}: evaluation failed: {e}", spec.name))?;
    let mut files = Vec::new();
    let data_set = "test_data_set_0";
    let external = if spec.external { v.value_input() } else { None };
    for (k, p) in protos.iter().enumerate() {
        if external == Some(k) && !p.raw_data.is_empty() {
            let (p, bytes) = external_form(p, &format!("input_{k}.bin"));
            files.push((format!("{data_set}/input_{k}.pb"), p.encode_to_vec()));
            files.push((format!("{data_set}/input_{k}.bin"), bytes));
        } else {
            files.push((format!("{data_set}/input_{k}.pb"), p.encode_to_vec()));
        }
    }
    let mut largest = decoded.iter().map(Tensor::byte_size).max().unwrap_or(0);
    let (model, expected, error) = match outcome {
        Outcome::Unsupported => return Ok(None),
        Outcome::Outputs(_) if spec.violation => {
            anyhow::bail!(
                "{}: the spec requires an error, but the reference computed an output",
                spec.name
            )
        }
        Outcome::Error(e) if !spec.violation => {
            anyhow::bail!(
                "{}: the reference refused a case the spec allows: {e}",
                spec.name
            )
        }
        Outcome::Outputs(outs) => {
            largest = outs.iter().map(Tensor::byte_size).fold(largest, usize::max);
            let typed: Vec<_> = out_names
                .iter()
                .zip(&outs)
                .map(|(&n, t)| (n, t.dtype(), Some(t.shape().to_vec())))
                .collect();
            for (k, (t, n)) in outs.iter().zip(&out_names).enumerate() {
                files.push((
                    format!("{data_set}/output_{k}.pb"),
                    tensor_proto(t, n, spec.form).encode_to_vec(),
                ));
            }
            (node(&typed)?, Expected::Passed, None)
        }
        Outcome::Error(e) => (node(declared)?, Expected::Errored, Some(e)),
    };
    files.insert(0, ("model.onnx".to_owned(), model.encode_to_vec()));
    let entry = CaseEntry {
        op: spec.def.op_type.to_owned(),
        domain: spec.def.domain.to_owned(),
        version: v.since,
        opset: spec.opset,
        dtype: spec.dtype.to_string(),
        traits: spec.traits.clone(),
        expected,
        error,
        files: files
            .iter()
            .map(|(rel, bytes)| (rel.clone(), onnx_idx_check::load::sha256_hex(bytes)))
            .collect(),
    };
    Ok(Some(Rendered {
        name: spec.name.clone(),
        files,
        entry,
        largest,
    }))
}

/// `p` (in `raw_data` form) with its bytes moved to the file `location` beside it, whole
/// (`offset` 0, `length` the byte count): the proto to write and the file's bytes.
fn external_form(
    p: &onnx_idx_check::pb::TensorProto,
    location: &str,
) -> (onnx_idx_check::pb::TensorProto, Vec<u8>) {
    use onnx_idx_check::pb::{tensor_proto::DataLocation, StringStringEntryProto};
    let mut p = p.clone();
    let bytes = std::mem::take(&mut p.raw_data);
    let entry = |key: &str, value: String| StringStringEntryProto {
        key: key.to_owned(),
        value,
    };
    p.data_location = DataLocation::External as i32;
    p.external_data = vec![
        entry("location", location.to_owned()),
        entry("offset", "0".to_owned()),
        entry("length", bytes.len().to_string()),
    ];
    (p, bytes.to_vec())
}

/// What [`build`] made, beside the files it handed on.
pub struct Built {
    /// The manifest (its own file included among those handed on, last).
    pub manifest: Manifest,
    /// Cases the tool does not implement, left out.
    pub left_out: usize,
    /// Cases of a type OpenVINO IR cannot hold, left out (`--format ir`), by type name.
    pub no_ir_type: BTreeMap<String, usize>,
    /// Cases over the size bound, left out.
    pub too_large: usize,
    /// Files handed on.
    pub files: usize,
    /// Their total size in bytes.
    pub bytes: u64,
}

/// The cases of one operator version in `opts.profile`.
fn cases_of(
    opts: &Options,
    def: &'static OpDef,
    v: &'static onnx_idx_check::ops::OpVersion,
) -> Vec<cases::CaseSpec> {
    use cases::Breadth;
    match opts.profile {
        Profile::Quick => cases::of_version(Breadth::Quick, opts.seed, def, v),
        Profile::Full => cases::of_version(Breadth::Full, opts.seed, def, v),
        Profile::Stress => {
            let mut specs = cases::of_version(Breadth::Quick, opts.seed, def, v);
            specs.extend(cases::large(opts.seed, def, v));
            specs
        }
    }
}

/// Builds the suite `opts` asks for, one operator version at a time, handing each file (its
/// path relative to OUTDIR, `/`-separated, and its bytes) to `sink` as soon as it is made, so
/// that a large suite is never whole in memory; the manifest comes last.
pub fn build(
    opts: &Options,
    sink: &mut dyn FnMut(&str, &[u8]) -> anyhow::Result<()>,
) -> anyhow::Result<Built> {
    let ops = select_ops_in(&opts.ops, opts.format)?;
    let mut entries = BTreeMap::new();
    let mut errored = Vec::new();
    let (mut left_out, mut too_large, mut files, mut bytes) = (0, 0, 0, 0u64);
    let mut no_ir_type = BTreeMap::new();
    let mut hand_on = |rel: &str, b: &[u8]| {
        files += 1;
        bytes += b.len() as u64;
        sink(rel, b)
    };
    for (def, v) in cases::versions(&ops) {
        for spec in &cases_of(opts, def, v) {
            let ir = opts.format == onnx_idx_check::load::ir::ModelFormat::Ir;
            // A type IR cannot hold is the reason first: such a case would not be written even
            // were it implemented.
            if let Some(d) = ir.then(|| ir::unholdable(spec)).flatten() {
                *no_ir_type.entry(d.to_string()).or_insert(0) += 1;
                continue;
            }
            let Some(r) = render_case(spec)? else {
                left_out += 1;
                continue;
            };
            let r = if ir {
                ir::ir_form(r, spec).with_context(|| {
                    format!(
                        "{}: no IR form, though its types have element types",
                        spec.name
                    )
                })?
            } else {
                r
            };
            if r.largest > opts.max_tensor_bytes {
                too_large += 1;
                continue;
            }
            if let Some(e) = &r.entry.error {
                errored.push(Entry::new(r.name.clone(), Status::Errored, e.clone()));
            }
            if entries.contains_key(&r.name) {
                anyhow::bail!("two cases are named {}", r.name);
            }
            for (rel, b) in &r.files {
                hand_on(&format!("{}/{rel}", r.name), b)?;
            }
            entries.insert(r.name, r.entry);
        }
    }
    let expectations = render_with_header(
        "# The cases of this suite where the spec requires an error: they have no output file,\n\
         # and `onnx-idx-check run OUTDIR --expectations OUTDIR/expectations.toml` expects them\n\
         # errored. Written by `onnx-idx-check generate`; MANIFEST.json holds its sha256.\n",
        &errored,
    );
    let mut top = BTreeMap::new();
    top.insert(
        EXPECTATIONS_FILE.to_owned(),
        onnx_idx_check::load::sha256_hex(expectations.as_bytes()),
    );
    hand_on(EXPECTATIONS_FILE, expectations.as_bytes())?;
    let manifest = Manifest {
        schema_version: manifest::SCHEMA_VERSION,
        tool: onnx_idx_check::report::TOOL.name.to_owned(),
        tool_version: onnx_idx_check::report::TOOL.version.to_owned(),
        seed: opts.seed,
        profile: opts.profile.name().to_owned(),
        ops: ops.iter().map(|d| op_name(d)).collect(),
        files: top,
        cases: entries,
    };
    let json = manifest.to_json().context("serialising the manifest")?;
    hand_on(manifest::FILE, json.as_bytes())?;
    Ok(Built {
        manifest,
        left_out,
        no_ir_type,
        too_large,
        files,
        bytes,
    })
}

/// Makes sure OUTDIR may be (re)written: it is created when missing; an existing one must be
/// empty or a suite this command wrote, holding nothing its manifest does not list (so that
/// replacing it loses nothing of the user's). Returns its canonical path and the number of cases
/// of the suite it holds (`None` when it was empty).
fn prepare_outdir(outdir: &Path) -> anyhow::Result<(PathBuf, Option<usize>)> {
    let shown = outdir.display().to_string();
    match std::fs::metadata(outdir) {
        Ok(m) if !m.is_dir() => return Err(GenerateError::NotADirectory(shown).into()),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(outdir).with_context(|| format!("creating {shown}"))?;
        }
        Err(e) => return Err(e).with_context(|| format!("reading {shown}")),
    }
    let dir = std::fs::canonicalize(outdir).with_context(|| format!("resolving {shown}"))?;
    let not_a_suite = |reason: String| GenerateError::NotASuite {
        path: shown.clone(),
        reason,
    };
    let empty = std::fs::read_dir(&dir)
        .with_context(|| format!("listing {shown}"))?
        .next()
        .is_none();
    if empty {
        return Ok((dir, None));
    }
    let old = match verify::read_manifest(&dir) {
        Ok(m) => m,
        Err(verify::VerifyError::NoManifest { .. }) => {
            return Err(not_a_suite(format!("it has no {}", manifest::FILE)).into())
        }
        Err(e) => return Err(not_a_suite(e.to_string()).into()),
    };
    let listed = old.all_files();
    let dirs: BTreeSet<&str> = listed
        .keys()
        .flat_map(|rel| rel.match_indices('/').map(move |(i, _)| &rel[..i]))
        .collect();
    let owns = |rel: &str, kind: owned::Kind| match kind {
        owned::Kind::File => rel == manifest::FILE || listed.contains_key(rel),
        owned::Kind::Dir => dirs.contains(rel),
        owned::Kind::Other => false,
    };
    if let Some(rel) = owned::first_foreign(&dir, &owns)? {
        return Err(not_a_suite(format!("{rel} is not part of it")).into());
    }
    Ok((dir, Some(old.cases.len())))
}

/// Builds the suite into the new directory `dir`.
fn write_suite(dir: &Path, opts: &Options) -> anyhow::Result<Built> {
    std::fs::create_dir(dir).with_context(|| format!("creating {}", dir.display()))?;
    build(opts, &mut |rel, bytes| {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))
    })
}

/// Generates the suite into `outdir`.
pub fn generate(outdir: &Path, opts: &Options) -> anyhow::Result<Summary> {
    // Refuse a bad OUTDIR or --ops before any work.
    select_ops_in(&opts.ops, opts.format)?;
    let (dir, replaced) = prepare_outdir(outdir)?;
    let (Some(parent), Some(base)) = (dir.parent(), dir.file_name()) else {
        return Err(GenerateError::NotADirectory(outdir.display().to_string()).into());
    };
    let base = base.to_string_lossy();
    let pid = std::process::id();
    let fresh = parent.join(format!(".{base}.generate-{pid}"));
    let old = parent.join(format!(".{base}.replaced-{pid}"));
    for leftover in [&fresh, &old] {
        if leftover.exists() {
            std::fs::remove_dir_all(leftover)
                .with_context(|| format!("removing {}", leftover.display()))?;
        }
    }
    // An interrupt removes the partial suite (the runtimes' handler does it); every error
    // below removes it here.
    let on_interrupt = onnx_idx_check::runtime::interrupt::scratch::register(&fresh);
    let swapped = write_suite(&fresh, opts).and_then(|suite| {
        swap_in(&fresh, &dir, &old)
            .with_context(|| format!("moving the new suite to {}", outdir.display()))?;
        Ok(suite)
    });
    if swapped.is_err() {
        let _ = std::fs::remove_dir_all(&fresh);
    }
    drop(on_interrupt);
    let suite = swapped?;
    {
        // The previous suite, checked against its manifest, is the tool's own to finish removing.
        let _on_interrupt = onnx_idx_check::runtime::interrupt::scratch::register(&old);
        std::fs::remove_dir_all(&old).with_context(|| format!("removing {}", old.display()))?;
    }
    let errored = suite
        .manifest
        .cases
        .values()
        .filter(|c| c.expected == Expected::Errored)
        .count();
    Ok(Summary {
        outdir: outdir.to_path_buf(),
        cases: suite.manifest.cases.len(),
        errored,
        left_out: suite.left_out,
        no_ir_type: suite.no_ir_type,
        too_large: suite.too_large,
        files: suite.files,
        bytes: suite.bytes,
        replaced,
    })
}

/// Swaps the suite in `fresh` into `dir`, whose contents move to `old`: a reader sees the old
/// suite or the new one. On an error `dir` is as it was.
fn swap_in(fresh: &Path, dir: &Path, old: &Path) -> std::io::Result<()> {
    std::fs::rename(dir, old)?;
    if let Err(e) = std::fs::rename(fresh, dir) {
        let _ = std::fs::rename(old, dir);
        return Err(e);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quick() -> Options {
        Options {
            profile: Profile::Quick,
            seed: 0,
            ops: Vec::new(),
            max_tensor_bytes: onnx_idx_check::runner::DEFAULT_MAX_TENSOR_BYTES,
            format: onnx_idx_check::load::ir::ModelFormat::Onnx,
        }
    }

    #[test]
    fn the_quick_suite_builds_and_the_reference_agrees_on_every_violation() {
        // `build` fails when the reference computes an output for a case the generator made to
        // break the spec, or refuses one it made valid.
        let suite = build(&quick(), &mut |_, _| Ok(())).unwrap();
        let m = &suite.manifest;
        assert!(m.cases.len() > 300, "{} cases", m.cases.len());
        let mut errored = m.cases.values().filter(|c| c.expected == Expected::Errored);
        assert!(errored.clone().count() > 30);
        assert!(errored.clone().all(|c| c.error.is_some()));
        assert!(errored.all(|c| !c.files.keys().any(|f| f.contains("output_"))));
    }

    #[test]
    fn unknown_and_ungenerated_ops_are_refused_by_name() {
        let e = select_ops(&["Gaher".into()]).unwrap_err();
        assert!(e.to_string().contains("'Gaher'"), "{e}");
        assert!(matches!(e, GenerateError::UnknownOp { .. }));
        // A bare op_type is the default domain's where it has one; others by full name or, when
        // unshadowed, bare.
        let names = |ops: &[&str]| -> Vec<String> {
            let ops: Vec<String> = ops.iter().map(|s| (*s).to_owned()).collect();
            select_ops(&ops)
                .unwrap()
                .iter()
                .map(|d| op_name(d))
                .collect()
        };
        assert_eq!(names(&["Gather"]), ["Gather"]);
        assert_eq!(
            names(&["org.openvinotoolkit.Gather", "GatherGrad"]),
            ["org.openvinotoolkit.Gather", "com.microsoft.GatherGrad"]
        );
        // Every operator of the registry is generated.
        assert_eq!(
            select_ops(&[]).unwrap().len(),
            REGISTRY.iter().filter(|d| !d.plumbing).count()
        );
    }
}
