//! The runner: for each case, load -> evaluate -> compare, producing a [`CaseResult`]. Cases run
//! in parallel; results are delivered in case order.

use crate::compare::{compare, Tolerance};
use crate::deadline::{self, TimedOut};
use crate::diagnose::{self, BugClass};
use crate::discover::{Case, DataSet};
use crate::eval::{self, EvalError, Plan, PlanError};
use crate::load::{self, tensor::TensorContext, LoadError};
use crate::ops::KernelError;
use crate::pb::{tensor_shape_proto::dimension::Value as Dim, type_proto, ValueInfoProto};
use crate::tensor::{DType, Tensor};
use crate::verdict::{CaseResult, DataSetResult, OutputResult, Status};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Settings that shape every case's verdict.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Comparison rules.
    pub tolerance: Tolerance,
    /// The largest tensor, in bytes, that may be loaded or created.
    pub max_tensor_bytes: usize,
    /// `--actual DIR`: judge these outputs of a runtime under test instead of our own result.
    pub actual: Option<PathBuf>,
    /// Record the sha256 of every model and tensor file read (for the JSON and JUnit reports).
    pub digests: bool,
    /// Record the coverage traits of passing data sets (the `coverage` subcommand).
    pub coverage: bool,
    /// `--pending DIR`: write our result for every failed or missing expected output there, for
    /// `review`.
    pub pending: Option<PathBuf>,
    /// Per-case tolerance overrides from an expectations file.
    pub expectations: Option<std::sync::Arc<crate::expectations::Expectations>>,
    /// `--timeout`: how long one case may run before it is errored; `None` for no limit.
    pub timeout: Option<std::time::Duration>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            tolerance: Tolerance::default(),
            max_tensor_bytes: DEFAULT_MAX_TENSOR_BYTES,
            actual: None,
            digests: false,
            coverage: false,
            pending: None,
            expectations: None,
            timeout: Some(DEFAULT_TIMEOUT),
        }
    }
}

/// One minute per case: generous for the largest tensors `--max-tensor-bytes` allows.
pub const DEFAULT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// 4 GiB (decision D12).
pub const DEFAULT_MAX_TENSOR_BYTES: usize = 4 << 30;

/// What loading a case's files leaves besides tensors: digests and storage forms.
#[derive(Debug, Default)]
struct Record {
    /// (file relative to the case directory, sha256 hex).
    files: Vec<(String, String)>,
    /// How each graph input of the current data set was stored.
    forms: std::collections::HashMap<String, load::StorageForm>,
    /// Coverage traits of passing data sets.
    traits: Vec<(String, std::collections::BTreeSet<String>)>,
}

impl Record {
    /// Loads a tensor file, noting its digest when asked.
    fn tensor(
        &mut self,
        path: &Path,
        file: &str,
        opts: &RunOptions,
    ) -> Result<load::LoadedTensor, LoadError> {
        let loaded = load::load_tensor_file_with(path, file, opts.max_tensor_bytes, opts.digests)?;
        if let Some(sha) = &loaded.sha256 {
            self.files.push((file.to_string(), sha.clone()));
        }
        Ok(loaded)
    }
}

/// A non-pass verdict with its reason.
struct Verdict(Status, String);

impl From<LoadError> for Verdict {
    fn from(e: LoadError) -> Self {
        let status = if e.is_unsupported() {
            Status::Skipped
        } else {
            Status::Errored
        };
        Verdict(status, e.to_string())
    }
}

impl From<TimedOut> for Verdict {
    fn from(e: TimedOut) -> Self {
        Verdict(Status::Errored, e.to_string())
    }
}

impl From<PlanError> for Verdict {
    fn from(e: PlanError) -> Self {
        match e {
            PlanError::Invalid(m) => Verdict(Status::Errored, m),
            PlanError::Unsupported(m) => Verdict(Status::Skipped, m),
        }
    }
}

impl From<EvalError> for Verdict {
    fn from(e: EvalError) -> Self {
        let status = match &e {
            EvalError::Kernel {
                error: KernelError::Unsupported(_),
                ..
            } => Status::Skipped,
            _ => Status::Errored,
        };
        Verdict(status, e.to_string())
    }
}

/// Runs `cases` on `jobs` threads, calling `on_result` with each result in case order. With
/// `fail_fast`, no case starts after one has failed or errored; returns the results and the
/// number of cases not run.
pub fn run_all(
    cases: &[Case],
    opts: &RunOptions,
    jobs: usize,
    fail_fast: bool,
    mut on_result: impl FnMut(&CaseResult),
) -> (Vec<CaseResult>, usize) {
    let stop = AtomicBool::new(false);
    let (tx, rx) = std::sync::mpsc::channel::<(usize, Option<CaseResult>)>();
    let mut results: Vec<Option<CaseResult>> = vec![None; cases.len()];
    let mut not_run = 0;
    std::thread::scope(|scope| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(jobs.max(1))
            .build();
        let stop = &stop;
        let work = move |(i, case): (usize, &Case), tx: &std::sync::mpsc::Sender<_>| {
            if stop.load(Ordering::Relaxed) {
                let _ = tx.send((i, None));
                return;
            }
            // A bug in a kernel must not take the other cases down: a panic becomes an errored
            // verdict for its case alone.
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_case(case, opts)))
                .unwrap_or_else(|panic| panicked(case, panic.as_ref()));
            if fail_fast && matches!(r.status, Status::Failed | Status::Errored) {
                stop.store(true, Ordering::Relaxed);
            }
            let _ = tx.send((i, Some(r)));
        };
        scope.spawn(move || match pool {
            Ok(pool) => pool.install(|| {
                use rayon::prelude::*;
                cases
                    .par_iter()
                    .enumerate()
                    .with_max_len(1)
                    .for_each_with(tx, |tx, item| work(item, tx));
            }),
            // No thread pool (resource exhaustion): run sequentially.
            Err(_) => cases.iter().enumerate().for_each(|item| work(item, &tx)),
        });
        // Deliver in order: hold results until every earlier case has arrived.
        let mut next = 0;
        let mut arrived: Vec<Option<Option<CaseResult>>> = vec![None; cases.len()];
        for (i, r) in rx.iter() {
            arrived[i] = Some(r);
            while next < cases.len() {
                let Some(slot) = arrived[next].take() else {
                    break;
                };
                match slot {
                    Some(r) => {
                        on_result(&r);
                        results[next] = Some(r);
                    }
                    None => not_run += 1,
                }
                next += 1;
            }
        }
    });
    (results.into_iter().flatten().collect(), not_run)
}

/// The verdict of a case whose evaluation panicked (a bug in onnx-idx-check).
fn panicked(case: &Case, panic: &(dyn std::any::Any + Send)) -> CaseResult {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string());
    CaseResult {
        name: case.name.clone(),
        path: case.dir.clone(),
        ops: Vec::new(),
        opset: BTreeMap::new(),
        op_versions: Vec::new(),
        files: Vec::new(),
        origin: None,
        expectation: None,
        traits: Vec::new(),
        status: Status::Errored,
        reason: Some(format!(
            "internal error in onnx-idx-check (please report it): {what}"
        )),
        data_sets: Vec::new(),
        duration: Default::default(),
    }
}

/// Runs one case.
pub fn run_case(case: &Case, opts: &RunOptions) -> CaseResult {
    let start = Instant::now();
    let mut result = CaseResult {
        name: case.name.clone(),
        path: case.dir.clone(),
        ops: Vec::new(),
        opset: BTreeMap::new(),
        op_versions: Vec::new(),
        files: Vec::new(),
        origin: None,
        expectation: None,
        traits: Vec::new(),
        status: Status::Passed,
        reason: None,
        data_sets: Vec::new(),
        duration: Default::default(),
    };
    let inner = deadline::with_limit(opts.timeout, || run_case_inner(case, opts, &mut result));
    if let Err(Verdict(status, reason)) = inner {
        result.status = status;
        result.reason = Some(reason);
    } else if let Some(ds) = result.data_sets.iter().max_by_key(|d| severity(d.status)) {
        if ds.status != Status::Passed {
            result.status = ds.status;
            // File errors already name the data set in their path.
            result.reason = ds.reason.as_ref().map(|r| {
                if r.starts_with(&format!("{}/", ds.name)) {
                    r.clone()
                } else {
                    format!("{}: {r}", ds.name)
                }
            });
        }
    }
    result.duration = start.elapsed();
    result
}

/// Which data-set verdict decides the case's: errored over skipped over failed.
fn severity(s: Status) -> u8 {
    match s {
        Status::Passed => 0,
        Status::Failed => 1,
        Status::Skipped => 2,
        Status::Errored => 3,
    }
}

fn run_case_inner(case: &Case, opts: &RunOptions, result: &mut CaseResult) -> Result<(), Verdict> {
    let limit = load::file_limit(opts.max_tensor_bytes);
    let (model, sha) = load::load_model_with(
        &case.dir.join("model.onnx"),
        "model.onnx",
        limit,
        opts.digests,
    )?;
    if let Some(sha) = sha {
        result.files.push(("model.onnx".to_string(), sha));
    }
    result.ops = eval::op_names(&model);
    let opsets = eval::opsets(&model)?;
    result.opset = opsets
        .iter()
        .map(|(d, v)| (eval::display_domain(d).to_string(), *v))
        .collect();
    // Until the plan resolves, the per-operator summary counts the bare op types.
    result.op_versions = result
        .ops
        .iter()
        .filter(|o| !matches!(o.as_str(), "Constant" | "Identity"))
        .cloned()
        .collect();
    let plan = eval::plan(&model)?;
    result.op_versions = plan.tested_ops();
    // An expectations entry may loosen (or tighten) the tolerance of this case alone.
    let adjusted;
    let opts = match &opts.expectations {
        Some(e) => {
            let tolerance = e.tolerance_for(
                &case.name,
                result.opset.get("ai.onnx").copied(),
                opts.tolerance,
            );
            adjusted = RunOptions {
                tolerance,
                ..opts.clone()
            };
            &adjusted
        }
        None => opts,
    };
    let ctx = TensorContext {
        base_dir: &case.dir,
        max_bytes: opts.max_tensor_bytes,
    };
    let initializers = plan
        .initializers()
        .iter()
        .map(|p| load::convert_tensor(p, "model.onnx", &ctx).map(|t| (p.name.clone(), t)))
        .collect::<Result<Vec<_>, _>>()?;
    if case.data_sets.is_empty() {
        return Err(Verdict(
            Status::Errored,
            "no test_data_set_N directory: nothing to check".into(),
        ));
    }
    let mut record = Record::default();
    for ds in &case.data_sets {
        deadline::check()?;
        result.data_sets.push(run_data_set(
            &plan,
            &initializers,
            case,
            ds,
            opts,
            &mut record,
        ));
    }
    result.files.append(&mut record.files);
    result.traits.append(&mut record.traits);
    Ok(())
}

fn run_data_set(
    plan: &Plan<'_>,
    initializers: &[(String, Tensor)],
    case: &Case,
    ds: &DataSet,
    opts: &RunOptions,
    record: &mut Record,
) -> DataSetResult {
    let mut r = DataSetResult {
        name: ds.name.clone(),
        status: Status::Passed,
        reason: None,
        outputs: Vec::new(),
    };
    match load_and_evaluate(plan, initializers, case, ds, opts, record) {
        Ok(outputs) => {
            r.outputs = outputs;
            // A missing expected file (under --pending) errors the data set; a difference fails it.
            if let Some(o) = r
                .outputs
                .iter()
                .max_by_key(|o| severity(o.status))
                .filter(|o| o.status != Status::Passed)
            {
                r.status = o.status;
                r.reason = Some(format!(
                    "output '{}': {}",
                    o.name,
                    o.reason.as_deref().unwrap_or("differs")
                ));
            }
        }
        Err(Verdict(status, reason)) => {
            r.status = status;
            r.reason = Some(reason);
        }
    }
    r
}

/// Loads a data set's files, evaluates the graph and compares every output: with the expected
/// outputs, or with a runtime's outputs under `--actual`.
fn load_and_evaluate(
    plan: &Plan<'_>,
    initializers: &[(String, Tensor)],
    case: &Case,
    ds: &DataSet,
    opts: &RunOptions,
    record: &mut Record,
) -> Result<Vec<OutputResult>, Verdict> {
    let files = DataSetFiles::scan(ds)?;
    // Under --actual and --pending the expected files are optional: our kernels stand in where
    // they are missing (--actual), or their result is written for review (--pending).
    let lenient = opts.actual.is_some() || opts.pending.is_some();
    files.check_counts(plan.inputs.len(), plan.outputs.len(), &ds.name, lenient)?;
    let mut inputs = Vec::with_capacity(plan.inputs.len());
    for (k, info) in plan.inputs.iter().enumerate() {
        let file = format!("{}/input_{k}.pb", ds.name);
        let loaded = record.tensor(&ds.dir.join(format!("input_{k}.pb")), &file, opts)?;
        record.forms.insert(info.name.clone(), loaded.form);
        let t = loaded.tensor;
        check_declared(info, &t, &file, "input")?;
        inputs.push(t);
    }
    let mut expected: Vec<Option<Tensor>> = Vec::with_capacity(plan.outputs.len());
    for k in 0..plan.outputs.len() {
        if !files.outputs.contains(&(k as u64)) {
            expected.push(None);
            continue;
        }
        let file = format!("{}/output_{k}.pb", ds.name);
        let t = record
            .tensor(&ds.dir.join(format!("output_{k}.pb")), &file, opts)?
            .tensor;
        expected.push(Some(t));
    }
    let runtime = match &opts.actual {
        Some(root) => Some(load_actual(
            root,
            case,
            ds,
            plan.outputs.len(),
            opts,
            record,
        )?),
        None => None,
    };
    let trace = |step: usize| {
        plan.trace(
            step,
            initializers,
            &inputs,
            &case.dir,
            opts.max_tensor_bytes,
        )
    };
    deadline::check()?;
    let ours =
        match plan.evaluate(initializers, &inputs, &case.dir, opts.max_tensor_bytes) {
            Ok(v) => v,
            Err(EvalError::Kernel {
                node,
                step,
                error: KernelError::Spec(why),
            }) => {
                let t = trace(step);
                let explain = |output: &Tensor| {
                    t.as_ref()
                        .and_then(|t| diagnose::classify(&t.subject(), None, output))
                };
                let reason = format!("node {node}: {why}");
                return match runtime {
                    // Every output the runtime produced where the spec requires an error is
                    // failed; producing none at all is what the spec asks for.
                    Some(actual) => Ok(plan
                        .outputs
                        .iter()
                        .zip(actual)
                        .filter_map(|(info, (_, a))| {
                            a.map(|a| spec_error_output(&info.name, &reason, explain(&a), a))
                        })
                        .collect()),
                    None => {
                        let hint = expected.iter().flatten().find_map(explain).map_or(
                            String::new(),
                            |c| {
                                format!(
                                    " (the expected output matches a known bug: {}, {})",
                                    c.id(),
                                    c.sentence()
                                )
                            },
                        );
                        Err(Verdict(Status::Errored, format!("{reason}{hint}")))
                    }
                };
            }
            Err(e) => return Err(e.into()),
        };
    let runtime = runtime.map(all_present).transpose()?;
    let mut results = Vec::with_capacity(plan.outputs.len());
    for (k, (info, value)) in plan.outputs.iter().zip(&ours).enumerate() {
        deadline::check()?;
        let tolerance = &opts.tolerance;
        let (reference, checked) = match &runtime {
            None => match &expected[k] {
                Some(e) => (&value.tensor, e),
                None => {
                    // Only --pending gets here: no expected file to compare with.
                    results.push(missing_expected(
                        case,
                        ds,
                        k,
                        &info.name,
                        &value.tensor,
                        opts,
                    ));
                    continue;
                }
            },
            Some(actual) => {
                let reference = match expected.get(k).and_then(Option::as_ref) {
                    Some(e) => {
                        let d = compare(e, &value.tensor, value.arithmetic, tolerance);
                        if !d.passed {
                            return Err(Verdict(
                                Status::Errored,
                                format!(
                                    "reference disputes expected output: output '{}' of {}/output_{k}.pb differs from onnx-idx-check's result: {}",
                                    info.name,
                                    ds.name,
                                    d.reason.unwrap_or_default()
                                ),
                            ));
                        }
                        e
                    }
                    None => &value.tensor,
                };
                (reference, &actual[k])
            }
        };
        // In the plain run the file is checked against our result; under --actual the runtime's
        // output is checked against the reference. Either way `checked` is on trial.
        let (exp, act) = if runtime.is_some() {
            (reference, checked)
        } else {
            (checked, reference)
        };
        let d = compare(exp, act, value.arithmetic, tolerance);
        let mut out = OutputResult {
            name: info.name.clone(),
            status: if d.passed {
                Status::Passed
            } else {
                Status::Failed
            },
            reason: d.reason,
            dtype: exp.dtype(),
            actual_dtype: act.dtype(),
            expected_shape: Some(exp.shape().to_vec()),
            actual_shape: act.shape().to_vec(),
            mismatches: d.mismatches,
            max_abs_diff: d.max_abs_diff,
            max_rel_diff: d.max_rel_diff,
            first_mismatches: d.first_mismatches,
            tolerant: d.tolerant,
            diagnosis: None,
        };
        if !d.passed {
            if let Some(t) = plan.producer_step(k).and_then(trace) {
                let subject = t.subject();
                out.diagnosis = diagnose::classify(&subject, Some(reference), checked);
                for m in &mut out.first_mismatches {
                    m.source = diagnose::provenance(&subject, m.flat);
                }
                if let (Some(c), Some(r)) = (out.diagnosis, out.reason.as_mut()) {
                    r.push_str(&format!("; diagnosis: {} ({})", c.sentence(), c.id()));
                }
            }
        }
        if let (Some(dir), None, Status::Failed) = (&opts.pending, &runtime, out.status) {
            let diff = crate::report::human::output_details(
                &case.name,
                &ds.name,
                &out,
                crate::report::human::Style { color: false },
            );
            match crate::pending::write(
                dir,
                &case.name,
                &ds.name,
                k,
                &value.tensor,
                &info.name,
                &diff,
            ) {
                Ok(path) => append(
                    &mut out.reason,
                    &format!(
                        "; onnx-idx-check's result is pending review in {}",
                        path.display()
                    ),
                ),
                Err(e) => append(
                    &mut out.reason,
                    &format!("; could not write the pending snapshot: {e}"),
                ),
            }
        }
        results.push(out);
    }
    if opts.coverage && results.iter().all(|o| o.status == Status::Passed) {
        let initializers: std::collections::HashMap<&str, load::StorageForm> = plan
            .initializers()
            .iter()
            .map(|p| (p.name.as_str(), load::StorageForm::of(p)))
            .collect();
        let forms = &record.forms;
        let form = |name: &str| {
            forms
                .get(name)
                .copied()
                .or_else(|| initializers.get(name).copied())
        };
        let mut traits = Vec::new();
        for step in (0..plan.step_count()).filter(|&s| !plan.is_plumbing(s)) {
            if let Some(t) = trace(step) {
                traits.push(crate::coverage::node_traits(&t, &form));
            }
        }
        record.traits.extend(traits);
    }
    Ok(results)
}

fn append(reason: &mut Option<String>, text: &str) {
    reason.get_or_insert_with(String::new).push_str(text);
}

/// Under `--pending`, an output with no expected file: our result is written for review and the
/// output is errored (a missing file is a malformed case until the result is accepted).
fn missing_expected(
    case: &Case,
    ds: &DataSet,
    k: usize,
    name: &str,
    ours: &Tensor,
    opts: &RunOptions,
) -> OutputResult {
    let file = format!("{}/output_{k}.pb", ds.name);
    let diff = format!(
        "--- {} {} output '{name}'\n    no expected output file ({file}); onnx-idx-check computed:\n    {}\n",
        case.name,
        ds.name,
        crate::pending::preview(ours)
    );
    let mut reason = format!("{file} is missing");
    if let Some(dir) = &opts.pending {
        match crate::pending::write(dir, &case.name, &ds.name, k, ours, name, &diff) {
            Ok(path) => reason.push_str(&format!(
                "; onnx-idx-check's result is pending review in {}",
                path.display()
            )),
            Err(e) => reason.push_str(&format!("; could not write the pending snapshot: {e}")),
        }
    }
    OutputResult {
        name: name.to_string(),
        status: Status::Errored,
        reason: Some(reason),
        dtype: ours.dtype(),
        actual_dtype: ours.dtype(),
        expected_shape: None,
        actual_shape: ours.shape().to_vec(),
        mismatches: 0,
        max_abs_diff: None,
        max_rel_diff: None,
        first_mismatches: Vec::new(),
        tolerant: false,
        diagnosis: None,
    }
}

/// The verdict of a runtime output produced where the spec requires an error.
fn spec_error_output(
    name: &str,
    reason: &str,
    diagnosis: Option<BugClass>,
    actual: Tensor,
) -> OutputResult {
    let mut why = format!("the spec requires an error for these inputs ({reason}), but the runtime produced an output");
    if let Some(c) = diagnosis {
        why.push_str(&format!("; diagnosis: {} ({})", c.sentence(), c.id()));
    }
    OutputResult {
        name: name.to_string(),
        status: Status::Failed,
        reason: Some(why),
        dtype: actual.dtype(),
        actual_dtype: actual.dtype(),
        expected_shape: None,
        actual_shape: actual.shape().to_vec(),
        mismatches: 0,
        max_abs_diff: None,
        max_rel_diff: None,
        first_mismatches: Vec::new(),
        tolerant: false,
        diagnosis,
    }
}

/// Loads a runtime's outputs for a data set from the `--actual` tree.
fn load_actual(
    root: &Path,
    case: &Case,
    ds: &DataSet,
    n: usize,
    opts: &RunOptions,
    record: &mut Record,
) -> Result<Vec<(String, Option<Tensor>)>, Verdict> {
    let dir = root.join(&case.rel).join(&ds.name);
    (0..n)
        .map(|k| {
            let path = dir.join(format!("output_{k}.pb"));
            let shown = path.display().to_string();
            // A missing file is judged later: right when the spec requires an error.
            if std::fs::symlink_metadata(&path).is_err() {
                return Ok((shown, None));
            }
            let t = record
                .tensor(&path, &shown, opts)
                .map_err(Verdict::from)?
                .tensor;
            Ok((shown, Some(t)))
        })
        .collect()
}

/// The runtime's outputs, all present; a missing one errors the data set with its path.
fn all_present(actual: Vec<(String, Option<Tensor>)>) -> Result<Vec<Tensor>, Verdict> {
    actual
        .into_iter()
        .map(|(shown, t)| {
            t.ok_or_else(|| Verdict(Status::Errored, format!("actual output {shown} is missing")))
        })
        .collect()
}

/// The `input_K.pb` / `output_K.pb` numbers present in a data set directory.
struct DataSetFiles {
    inputs: Vec<u64>,
    outputs: Vec<u64>,
}

impl DataSetFiles {
    fn scan(ds: &DataSet) -> Result<DataSetFiles, Verdict> {
        let entries = std::fs::read_dir(&ds.dir)
            .map_err(|e| Verdict(Status::Errored, format!("{}: {e}", ds.name)))?;
        let mut files = DataSetFiles {
            inputs: Vec::new(),
            outputs: Vec::new(),
        };
        for e in entries.filter_map(Result::ok) {
            let Some(name) = e.file_name().to_str().map(str::to_string) else {
                continue;
            };
            let number = |prefix: &str| {
                let digits = name.strip_prefix(prefix)?.strip_suffix(".pb")?;
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                digits.parse::<u64>().ok()
            };
            if let Some(k) = number("input_") {
                files.inputs.push(k);
            } else if let Some(k) = number("output_") {
                files.outputs.push(k);
            }
        }
        files.inputs.sort_unstable();
        files.outputs.sort_unstable();
        Ok(files)
    }

    /// Exactly `input_0..n` and `output_0..m`, matched by K to the graph's inputs and outputs.
    /// With `lenient_outputs`, missing output files are allowed (extra ones still are not).
    fn check_counts(
        &self,
        n_inputs: usize,
        n_outputs: usize,
        ds: &str,
        lenient_outputs: bool,
    ) -> Result<(), Verdict> {
        for (kind, have, want) in [
            ("input", &self.inputs, n_inputs),
            ("output", &self.outputs, n_outputs),
        ] {
            let lenient = lenient_outputs && kind == "output";
            if let Some(missing) = (0..want as u64).find(|k| !lenient && !have.contains(k)) {
                return Err(Verdict(
                    Status::Errored,
                    format!(
                        "{ds}/{kind}_{missing}.pb is missing: the graph has {want} {kind}(s) to match by position"
                    ),
                ));
            }
            if let Some(extra) = have.iter().find(|&&k| k >= want as u64) {
                return Err(Verdict(
                    Status::Errored,
                    format!(
                        "{ds}/{kind}_{extra}.pb has no graph {kind} to match: the graph has {want} {kind}(s) (initializers excluded)"
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Checks a loaded input against the graph's declaration (dtype, rank and fixed dims).
fn check_declared(
    info: &ValueInfoProto,
    t: &Tensor,
    file: &str,
    role: &str,
) -> Result<(), Verdict> {
    let Some(type_proto::Value::TensorType(tt)) =
        info.r#type.as_ref().and_then(|t| t.value.as_ref())
    else {
        return Ok(());
    };
    let bad = |what: String| Err(Verdict(Status::Errored, format!("{file}: {what}")));
    if tt.elem_type != 0 && DType::from_onnx(tt.elem_type) != Some(t.dtype()) {
        let declared = DType::from_onnx(tt.elem_type)
            .map_or(format!("type {}", tt.elem_type), |d| d.to_string());
        return bad(format!(
            "holds {} but graph {role} '{}' is declared {declared}",
            t.dtype(),
            info.name
        ));
    }
    if let Some(shape) = &tt.shape {
        if shape.dim.len() != t.rank() {
            return bad(format!(
                "has shape {:?} (rank {}) but graph {role} '{}' is declared with rank {}",
                t.shape(),
                t.rank(),
                info.name,
                shape.dim.len()
            ));
        }
        for (i, (d, &actual)) in shape.dim.iter().zip(t.shape()).enumerate() {
            if let Some(Dim::DimValue(v)) = d.value {
                if u64::try_from(v).ok() != u64::try_from(actual).ok() {
                    return bad(format!(
                        "has shape {:?} but graph {role} '{}' declares dimension {i} as {v}",
                        t.shape(),
                        info.name
                    ));
                }
            }
        }
    }
    Ok(())
}

/// A case prepared for repeated evaluation of its first data set (the `bench` subcommand).
pub struct Prepared {
    model: crate::pb::ModelProto,
    initializers: Vec<(String, Tensor)>,
    inputs: Vec<Tensor>,
    /// The data set's expected outputs.
    pub expected: Vec<Tensor>,
    dir: std::path::PathBuf,
    max_bytes: usize,
}

impl Prepared {
    /// Loads the model and data set `ds` of `case`.
    pub fn load(case: &Case, ds: &DataSet, opts: &RunOptions) -> Result<Prepared, String> {
        let limit = load::file_limit(opts.max_tensor_bytes);
        let model = load::load_model(&case.dir.join("model.onnx"), "model.onnx", limit)
            .map_err(|e| e.to_string())?;
        let (initializers, inputs, expected) = {
            let plan = eval::plan(&model).map_err(|e| e.to_string())?;
            let ctx = TensorContext {
                base_dir: &case.dir,
                max_bytes: opts.max_tensor_bytes,
            };
            let initializers = plan
                .initializers()
                .iter()
                .map(|p| load::convert_tensor(p, "model.onnx", &ctx).map(|t| (p.name.clone(), t)))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| e.to_string())?;
            let files = DataSetFiles::scan(ds).map_err(|Verdict(_, m)| m)?;
            files
                .check_counts(plan.inputs.len(), plan.outputs.len(), &ds.name, false)
                .map_err(|Verdict(_, m)| m)?;
            let load = |kind: &str, k: usize| {
                let file = format!("{}/{kind}_{k}.pb", ds.name);
                load::load_tensor_file(
                    &ds.dir.join(format!("{kind}_{k}.pb")),
                    &file,
                    opts.max_tensor_bytes,
                )
                .map(|(_, t)| t)
                .map_err(|e| e.to_string())
            };
            let inputs = (0..plan.inputs.len())
                .map(|k| load("input", k))
                .collect::<Result<Vec<_>, _>>()?;
            let expected = (0..plan.outputs.len())
                .map(|k| load("output", k))
                .collect::<Result<Vec<_>, _>>()?;
            (initializers, inputs, expected)
        };
        Ok(Prepared {
            model,
            initializers,
            inputs,
            expected,
            dir: case.dir.clone(),
            max_bytes: opts.max_tensor_bytes,
        })
    }

    /// Every graph input, data-set inputs first, then initializers.
    pub fn input_tensors(&self) -> Vec<&Tensor> {
        self.inputs
            .iter()
            .chain(self.initializers.iter().map(|(_, t)| t))
            .collect()
    }

    /// Whether the graph's operator reads its data only where it gathers (a gather), rather than
    /// copying it whole (a scatter).
    pub fn is_gather(&self) -> bool {
        eval::op_names(&self.model)
            .iter()
            .any(|op| op.contains("Gather"))
    }

    /// Evaluates the graph once.
    pub fn evaluate(&self) -> Result<Vec<eval::Value>, String> {
        let plan = eval::plan(&self.model).map_err(|e| e.to_string())?;
        plan.evaluate(&self.initializers, &self.inputs, &self.dir, self.max_bytes)
            .map_err(|e| e.to_string())
    }
}
