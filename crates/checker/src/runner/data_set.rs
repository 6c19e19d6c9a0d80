//! One data set: its files, the evaluation of the graph and the judgement of every output of the
//! source on trial (`trial.rs`: the expected files, an `--actual` tree or a runtime).

use super::pending::{missing_expected, passed, snapshot};
use super::record::{severity, Record};
use super::trial::{with_changes, Pair, Trial};
use super::{RunOptions, Traits, Verdict};
use crate::compare::compare;
use crate::deadline;
use crate::diagnose;
use crate::discover::{Case, DataSet};
use crate::eval::{EvalError, Plan, Trace};
use crate::load;
use crate::ops::SpecError;
use crate::pb::{tensor_shape_proto::dimension::Value as Dim, type_proto, ValueInfoProto};
use crate::report::text::{diagnosis_note, shape_hint};
use crate::tensor::{DType, Tensor};
use crate::verdict::{DataSetResult, Fault, OutputResult, Status};

/// Judges one data set. With an `answer` of the runtime from a shared model, the data set is
/// judged with it first and, unless it passed, judged again with the runtime run alone: a
/// shared model stands only for a pass.
pub(super) fn run_data_set(
    plan: &Plan<'_>,
    initializers: &[(String, Tensor)],
    case: &Case,
    ds: &DataSet,
    opts: &RunOptions,
    answer: Option<&[Tensor]>,
    record: &mut Record,
) -> DataSetResult {
    if let Some(answer) = answer.filter(|a| a.len() == plan.outputs.len()) {
        let kept = record.mark();
        let r = judge_data_set(plan, initializers, case, ds, opts, Some(answer), record);
        if r.status == Status::Passed && r.fault.is_none() {
            return r;
        }
        record.rewind(kept);
    }
    judge_data_set(plan, initializers, case, ds, opts, None, record)
}

/// [`run_data_set`] with the runtime's `answer` from a shared model, or the source on trial's
/// own.
fn judge_data_set(
    plan: &Plan<'_>,
    initializers: &[(String, Tensor)],
    case: &Case,
    ds: &DataSet,
    opts: &RunOptions,
    answer: Option<&[Tensor]>,
    record: &mut Record,
) -> DataSetResult {
    let mut r = DataSetResult {
        name: ds.name.clone(),
        status: Status::Passed,
        reason: None,
        outputs: Vec::new(),
        fault: None,
    };
    match load_and_evaluate(plan, initializers, case, ds, opts, answer, record) {
        Ok((outputs, fault)) => {
            r.outputs = outputs;
            r.fault = fault;
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
        Err(Verdict(status, reason, fault)) => {
            r.status = status;
            r.reason = Some(reason);
            r.fault = fault;
        }
    }
    r
}

/// Loads a data set's files, evaluates the graph and judges every output of the source on
/// trial ([`Trial`]) against its reference.
fn load_and_evaluate(
    plan: &Plan<'_>,
    initializers: &[(String, Tensor)],
    case: &Case,
    ds: &DataSet,
    opts: &RunOptions,
    answer: Option<&[Tensor]>,
    record: &mut Record,
) -> Result<(Vec<OutputResult>, Option<Fault>), Verdict> {
    let files = DataSetFiles::scan(ds)?;
    // Expected outputs are optional: under --actual our kernels stand in where they are
    // missing; otherwise the output is a new snapshot, shown (and under --pending written for
    // review) rather than compared.
    files.check_counts(plan.inputs.len(), plan.outputs.len(), &ds.name)?;
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
        if !files.has_output(k) {
            expected.push(None);
            continue;
        }
        let file = format!("{}/output_{k}.pb", ds.name);
        let t = record
            .tensor(&ds.dir.join(format!("output_{k}.pb")), &file, opts)?
            .tensor;
        expected.push(Some(t));
    }
    let trace = |step: usize| {
        plan.trace(
            step,
            initializers,
            &inputs,
            &case.dir,
            opts.max_tensor_bytes,
        )
    };
    // Before the source on trial answers: a refusal, a crash or a wrong output keeps the traits
    // of the inputs it was given.
    if opts.traits == Traits::Every {
        record_traits(plan, &trace, record);
    }
    let trial = match answer {
        Some(outputs) => Trial::shared(opts, outputs),
        None => Trial::open(plan, case, ds, &inputs, &expected, opts, record)?,
    };
    deadline::check()?;
    let ours = match plan.evaluate(initializers, &inputs, &case.dir, opts.max_tensor_bytes) {
        Ok(v) => v,
        Err(EvalError::Kernel { node, step, error }) if error.is_invalid_input() => {
            let why = match &error {
                SpecError::Decision { message, .. } => message.clone(),
                e => e.to_string(),
            };
            let t = trace(step);
            let explain = |output: &Tensor| {
                t.as_ref().map_or_else(Vec::new, |t| {
                    diagnose::classify_all(&t.subject(), None, output)
                })
            };
            return trial.on_required_error(
                plan,
                opts,
                format!("node {node}: {why}"),
                error.decision(),
                &explain,
                &expected,
            );
        }
        Err(e) => return Err(e.into()),
    };
    let settled = trial.settle(plan, &trace, opts)?;
    let mut results = Vec::with_capacity(plan.outputs.len());
    for (k, (info, value)) in plan.outputs.iter().zip(&ours).enumerate() {
        deadline::check()?;
        let pair = settled.pair(k, &info.name, ds, value, expected[k].as_ref(), opts)?;
        let (reference, checked, exp, act) = match pair {
            Pair::Excused => continue, // refused input with duplicate writes
            Pair::Snapshot => {
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
            Pair::Judge {
                reference,
                checked,
                expected,
                actual,
            } => (reference, checked, expected, actual),
        };
        let mut out = OutputResult::of_diff(
            &info.name,
            exp,
            act,
            compare(exp, act, value.arithmetic, &opts.tolerance),
        );
        if out.status == Status::Failed {
            if let Some(t) = plan.producer_step(k).and_then(trace) {
                let subject = t.subject();
                let found = diagnose::explain(&subject, Some(reference), checked);
                out.diagnoses = found.exact;
                for m in &mut out.first_mismatches {
                    m.source = diagnose::provenance(&subject, m.flat);
                }
                if let Some(r) = out.reason.as_mut() {
                    r.push_str(&diagnosis_note(&out.diagnoses));
                    if out.diagnoses.is_empty() {
                        r.push_str(&shape_hint(&found.same_shape));
                    }
                }
            }
        }
        // The pending store keeps snapshots of expected files, not of a runtime's outputs.
        if settled.expected_on_trial() {
            if out.status == Status::Failed {
                snapshot(case, ds, k, &mut out, &value.tensor, opts);
            } else {
                passed(case, ds, k, &mut out, opts);
            }
        }
        results.push(out);
    }
    if opts.traits == Traits::Passing && results.iter().all(|o| o.status == Status::Passed) {
        record_traits(plan, &trace, record);
    }
    Ok(with_changes(results, settled.changed))
}

/// Records the coverage traits of every operator node of a data set (a passing one for
/// `coverage`, every one for the scoreboard).
fn record_traits<'p>(
    plan: &'p Plan<'_>,
    trace: &dyn Fn(usize) -> Option<Trace<'p>>,
    record: &mut Record,
) {
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

/// The `input_K.pb` / `output_K.pb` numbers present in a data set directory.
pub(super) struct DataSetFiles {
    inputs: Vec<u64>,
    outputs: Vec<u64>,
}

impl DataSetFiles {
    pub(super) fn scan(ds: &DataSet) -> Result<DataSetFiles, Verdict> {
        let files = ds
            .tensor_files()
            .map_err(|e| Verdict(Status::Errored, format!("{}: {e}", ds.name), None))?;
        Ok(DataSetFiles {
            inputs: files.inputs,
            outputs: files.outputs,
        })
    }

    /// Whether `output_k.pb` is present.
    pub(super) fn has_output(&self, k: usize) -> bool {
        self.outputs.contains(&(k as u64))
    }

    /// Exactly `input_0..n`, and `output_K` only for K < m, matched by K to the graph's inputs
    /// and outputs. A missing output file is a new snapshot, not an error here.
    pub(super) fn check_counts(
        &self,
        n_inputs: usize,
        n_outputs: usize,
        ds: &str,
    ) -> Result<(), Verdict> {
        if let Some(missing) = (0..n_inputs as u64).find(|k| !self.inputs.contains(k)) {
            return Err(Verdict(
                Status::Errored,
                format!(
                    "{ds}/input_{missing}.pb is missing: the graph has {n_inputs} input(s) to match by position"
                ),
                None,
            ));
        }
        for (kind, have, want) in [
            ("input", &self.inputs, n_inputs),
            ("output", &self.outputs, n_outputs),
        ] {
            if let Some(extra) = have.iter().find(|&&k| k >= want as u64) {
                return Err(Verdict(
                    Status::Errored,
                    format!(
                        "{ds}/{kind}_{extra}.pb has no graph {kind} to match: the graph has {want} {kind}(s) (initializers excluded)"
                    ),
                    None,
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
    let bad = |what: String| Err(Verdict(Status::Errored, format!("{file}: {what}"), None));
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
                "has shape {} (rank {}) but graph {role} '{}' is declared with rank {}",
                crate::tensor::shape_text(t.shape()),
                t.rank(),
                info.name,
                shape.dim.len()
            ));
        }
        for (i, (d, &actual)) in shape.dim.iter().zip(t.shape()).enumerate() {
            if let Some(Dim::DimValue(v)) = d.value {
                if u64::try_from(v).ok() != u64::try_from(actual).ok() {
                    return bad(format!(
                        "has shape {} but graph {role} '{}' declares dimension {i} as {v}",
                        crate::tensor::shape_text(t.shape()),
                        info.name
                    ));
                }
            }
        }
    }
    Ok(())
}
