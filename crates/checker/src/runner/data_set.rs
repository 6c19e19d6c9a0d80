//! One data set: its files, the evaluation of the graph and the comparison of every output, with
//! the expected outputs or, under `--actual`, with a runtime's.

use super::actual::{all_present, load_actual, wanted};
use super::pending::{missing_expected, passed, snapshot};
use super::record::{severity, Record};
use super::runtime::run_runtime;
use super::{RunOptions, Verdict};
use crate::compare::compare;
use crate::deadline;
use crate::diagnose::{self, BugClass};
use crate::discover::{Case, DataSet};
use crate::eval::{EvalError, Plan};
use crate::load;
use crate::ops::SpecError;
use crate::pb::{tensor_shape_proto::dimension::Value as Dim, type_proto, ValueInfoProto};
use crate::tensor::{DType, Tensor};
use crate::verdict::{diagnosis_note, known_bug_hint, DataSetResult, Fault, OutputResult, Status};

pub(super) fn run_data_set(
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
        fault: None,
    };
    match load_and_evaluate(plan, initializers, case, ds, opts, record) {
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

/// Loads a data set's files, evaluates the graph and compares every output: with the expected
/// outputs, or with a runtime's outputs under `--actual`.
fn load_and_evaluate(
    plan: &Plan<'_>,
    initializers: &[(String, Tensor)],
    case: &Case,
    ds: &DataSet,
    opts: &RunOptions,
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
    let mut refusal = None;
    let mut changed = Vec::new();
    let mut job = None;
    let wants: Vec<_> = plan
        .outputs
        .iter()
        .zip(&expected)
        .map(|(info, e)| wanted(info, e.as_ref()))
        .collect();
    let runtime = match &opts.actual {
        Some(root) => Some(load_actual(root, case, ds, &wants, opts, record)?),
        None => match run_runtime(plan, case, ds, &inputs, &wants, opts, record)? {
            Some(got) => {
                refusal = got.refusal;
                changed = got.changed;
                job = Some(got.job);
                Some(got.outputs)
            }
            None => None,
        },
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
    let ours = match plan.evaluate(initializers, &inputs, &case.dir, opts.max_tensor_bytes) {
        Ok(v) => v,
        Err(EvalError::Kernel { node, step, error }) if error.is_invalid_input() => {
            let decision = error.decision();
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
            let reason = format!("node {node}: {why}");
            let answered = runtime
                .as_ref()
                .is_some_and(|a| a.iter().any(|(_, a)| a.is_some()));
            if let (true, Some(rt), Some(job)) = (answered, opts.runtime.as_deref(), &job) {
                rt.retire(job);
            }
            return match runtime {
                // Every output the runtime produced where the spec requires an error is
                // failed; producing none at all (or refusing) is what the spec asks for.
                Some(actual) => Ok(with_changes(
                    plan.outputs
                        .iter()
                        .zip(actual)
                        .filter_map(|(info, (_, a))| {
                            a.map(|a| {
                                spec_error_output(&info.name, &reason, decision, explain(&a), a)
                            })
                        })
                        .collect(),
                    changed,
                )),
                None => {
                    let hint = expected
                        .iter()
                        .flatten()
                        .map(explain)
                        .find(|found| !found.is_empty())
                        .map_or(String::new(), |found| known_bug_hint(&found));
                    let by = decision.map_or(String::new(), |d| format!(" ({})", decided(d)));
                    Err(Verdict(
                        Status::Errored,
                        format!("{reason}{by}{hint}"),
                        None,
                    ))
                }
            };
        }
        Err(e) => return Err(e.into()),
    };
    // With reduction "none" the spec says indices should not hold duplicates: D7 picks the last
    // write for our result, but a runtime that refuses such input (writes no output) is right
    // too, as where the spec requires an error. An output it did write is judged against D7.
    let refused: Vec<bool> = match &runtime {
        Some(actual) => actual
            .iter()
            .enumerate()
            .map(|(k, (_, a))| {
                a.is_none()
                    && plan
                        .producer_step(k)
                        .and_then(trace)
                        .is_some_and(|t| diagnose::duplicate_writes(&t.subject()))
            })
            .collect(),
        None => Vec::new(),
    };
    let runtime = runtime
        .map(|a| {
            let label = opts.runtime.as_ref().map(|rt| rt.label());
            all_present(a, &refused, refusal.as_deref(), label)
        })
        .transpose()?;
    let mut results = Vec::with_capacity(plan.outputs.len());
    for (k, (info, value)) in plan.outputs.iter().zip(&ours).enumerate() {
        deadline::check()?;
        let tolerance = &opts.tolerance;
        let (reference, checked) = match &runtime {
            None => match &expected[k] {
                Some(e) => (&value.tensor, e),
                None => {
                    // No expected file to compare with: a new snapshot.
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
                let Some(actual) = &actual[k] else {
                    continue; // refused input with duplicate writes
                };
                let reference = match expected.get(k).and_then(Option::as_ref) {
                    Some(e) => {
                        let d = compare(e, &value.tensor, value.arithmetic, tolerance);
                        if !d.passed {
                            return Err(Verdict(
                                Status::Errored,
                                format!(
                                    "reference disputes expected output: output '{}' of {}/output_{k}.pb differs from onnx-idx-check's result: {}; {}",
                                    info.name,
                                    ds.name,
                                    d.reason.as_deref().unwrap_or_default(),
                                    three_way(e, &value.tensor, actual, &d, value.arithmetic, tolerance)
                                ),
                                None,
                            ));
                        }
                        e
                    }
                    None => &value.tensor,
                };
                (reference, actual)
            }
        };
        // In the plain run the file is checked against our result; under --actual the runtime's
        // output is checked against the reference. Either way `checked` is on trial.
        let (exp, act) = if runtime.is_some() {
            (reference, checked)
        } else {
            (checked, reference)
        };
        let mut out = OutputResult::of_diff(
            &info.name,
            exp,
            act,
            compare(exp, act, value.arithmetic, tolerance),
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
        if runtime.is_none() && out.status == Status::Failed {
            snapshot(case, ds, k, &mut out, &value.tensor, opts);
        } else if runtime.is_none() {
            passed(case, ds, k, &mut out, opts);
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
    Ok(with_changes(results, changed))
}

/// The judged outputs, followed by those that changed between runs (`--repeat`), which make
/// the data set nondeterministic.
fn with_changes(
    mut results: Vec<OutputResult>,
    changed: Vec<OutputResult>,
) -> (Vec<OutputResult>, Option<Fault>) {
    if changed.is_empty() {
        return (results, None);
    }
    results.extend(changed);
    (results, Some(Fault::Nondeterministic))
}

/// `; shape consistent with axis-ignored (...); values differ further`, for a wrong shape no
/// class reproduces exactly but some explain; empty for none.
fn shape_hint(classes: &[BugClass]) -> String {
    if classes.is_empty() {
        return String::new();
    }
    let named: Vec<String> = classes
        .iter()
        .map(|c| format!("{} ({})", c.id(), c.sentence()))
        .collect();
    format!(
        "; shape consistent with {}; values differ further",
        named.join(", or ")
    )
}

/// Where the expected file and onnx-idx-check's result disagree, which of them the runtime's
/// output agrees with, and the three values at the first disputed element:
/// `the runtime agrees with the file; at [1,0]: file 9.0, onnx-idx-check 5.7, runtime 9.0`.
fn three_way(
    file: &Tensor,
    ours: &Tensor,
    runtime: &Tensor,
    dispute: &crate::compare::Diff,
    arithmetic: bool,
    tolerance: &crate::compare::Tolerance,
) -> String {
    let with_file = compare(file, runtime, arithmetic, tolerance).passed;
    let with_ours = compare(ours, runtime, arithmetic, tolerance).passed;
    let side = match (with_file, with_ours) {
        (true, _) => "the runtime agrees with the file",
        (false, true) => "the runtime agrees with onnx-idx-check",
        (false, false) => "the runtime agrees with neither",
    };
    let Some(m) = dispute.first_mismatches.first() else {
        // A dtype or shape dispute: the reason already names both; add the runtime's.
        return format!(
            "{side} (the runtime wrote {} {})",
            runtime.dtype(),
            crate::tensor::shape_text(runtime.shape())
        );
    };
    let at = if runtime.shape() == ours.shape() && m.index.len() == runtime.rank() {
        let flat: usize = crate::tensor::strides(runtime.shape())
            .iter()
            .zip(&m.index)
            .map(|(s, i)| s * i)
            .sum();
        crate::tensor::value::display(runtime, flat)
    } else {
        format!(
            "{} {}",
            runtime.dtype(),
            crate::tensor::shape_text(runtime.shape())
        )
    };
    let idx: Vec<String> = m.index.iter().map(ToString::to_string).collect();
    format!(
        "{side}; at [{}]: file {}, onnx-idx-check {}, runtime {at}",
        idx.join(","),
        m.expected,
        m.actual
    )
}

/// Who requires the error: `onnx-idx-check's decision D2 (docs/semantics.md#d2-...)`.
pub(crate) fn decided(d: crate::ops::Decision) -> String {
    format!(
        "onnx-idx-check's decision {d}, not the spec: docs/semantics.md#{}",
        d.anchor()
    )
}

/// Who requires an error for a case's inputs, as a clause: `the spec requires an error for
/// these inputs`, or `onnx-idx-check's decision D2 requires an error for these inputs
/// (docs/semantics.md#...; the spec does not)` where a decision does.
pub(crate) fn requires_error(d: Option<crate::ops::Decision>) -> String {
    match d {
        None => "the spec requires an error for these inputs".to_string(),
        Some(d) => format!(
            "onnx-idx-check's decision {d} requires an error for these inputs (docs/semantics.md#{}; the spec does not)",
            d.anchor()
        ),
    }
}

/// The verdict of a runtime output produced where the spec (or a decision) requires an error.
fn spec_error_output(
    name: &str,
    reason: &str,
    decision: Option<crate::ops::Decision>,
    diagnoses: Vec<BugClass>,
    actual: Tensor,
) -> OutputResult {
    let mut why = format!(
        "{} ({reason}), but the runtime produced an output",
        requires_error(decision)
    );
    why.push_str(&diagnosis_note(&diagnoses));
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
        diagnoses,
        computed: None,
    }
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
