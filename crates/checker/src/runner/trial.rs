//! The source on trial for a data set: the expected files of a plain run, a tree of a runtime's
//! outputs (`--actual`), or a runtime run in its worker (`--runtime`). The runner asks each the
//! same questions: what the outputs on trial are, what answers a case whose inputs require an
//! error, which outputs may be missing, and, for every output, what is judged against what.

use super::actual::{all_present, load_actual, wanted};
use super::record::Record;
use super::runtime::run_runtime;
use super::{RunOptions, Verdict};
use crate::compare::compare;
use crate::diagnose::BugClass;
use crate::discover::{Case, DataSet};
use crate::eval::{Plan, Trace, Value};
use crate::ops::Decision;
use crate::report::text::{decided, diagnosis_note, known_bug_hint, requires_error};
use crate::runtime::Job;
use crate::tensor::Tensor;
use crate::verdict::{Fault, OutputResult, Status};

/// What is on trial in a data set.
pub(super) enum Trial {
    /// The expected output files, each judged against our result; a missing one is a new
    /// snapshot.
    Expected,
    /// A runtime's outputs, each judged against the reference: the expected file (itself first
    /// checked against our result) or, where there is none, our result.
    Runtime(Answer),
}

/// What a runtime gave for a data set.
pub(super) struct Answer {
    /// Its outputs, each with the name shown for it; `None` where it wrote none.
    outputs: Vec<(String, Option<Tensor>)>,
    /// Why it refused the data set, when it did (`runtime NAME refused: MESSAGE`).
    refusal: Option<String>,
    /// The outputs that changed between its runs (`--repeat`).
    changed: Vec<OutputResult>,
    /// The request it ran (a runtime worker, not an `--actual` tree), to retire its workers
    /// when they may be damaged.
    job: Option<Job>,
}

/// The outputs on trial once our result is known: which may be missing has been decided.
pub(super) struct Settled {
    /// `None` for the expected files; for a runtime, each output or `None` where leaving it out
    /// was acceptable.
    runtime: Option<Vec<Option<Tensor>>>,
    /// The outputs that changed between a runtime's runs (`--repeat`).
    pub(super) changed: Vec<OutputResult>,
}

/// What is judged for one output.
pub(super) enum Pair<'a> {
    /// `checked` is on trial against `reference`. The comparison and the report name them
    /// `expected` and `actual`: in a plain run the file is the expected side and our result the
    /// actual one; for a runtime, the reference is expected and its output actual.
    Judge {
        /// The value taken as right.
        reference: &'a Tensor,
        /// The value on trial.
        checked: &'a Tensor,
        /// The side the report calls expected.
        expected: &'a Tensor,
        /// The side the report calls actual.
        actual: &'a Tensor,
    },
    /// No expected file, in a plain run: our result is a new snapshot.
    Snapshot,
    /// The runtime left this output out where that is acceptable: nothing to judge.
    Excused,
}

impl Trial {
    /// The source on trial of this run, with what it produced for the data set.
    pub(super) fn open(
        plan: &Plan<'_>,
        case: &Case,
        ds: &DataSet,
        inputs: &[Tensor],
        expected: &[Option<Tensor>],
        opts: &RunOptions,
        record: &mut Record,
    ) -> Result<Trial, Verdict> {
        if opts.actual.is_none() && opts.runtime.is_none() {
            return Ok(Trial::Expected);
        }
        let wants: Vec<_> = plan
            .outputs
            .iter()
            .zip(expected)
            .map(|(info, e)| wanted(info, e.as_ref()))
            .collect();
        if let Some(root) = &opts.actual {
            return Ok(Trial::Runtime(Answer {
                outputs: load_actual(root, case, ds, &wants, opts, record)?,
                refusal: None,
                changed: Vec::new(),
                job: None,
            }));
        }
        Ok(
            match run_runtime(plan, case, ds, inputs, &wants, opts, record)? {
                Some(got) => Trial::Runtime(Answer {
                    outputs: got.outputs,
                    refusal: got.refusal,
                    changed: got.changed,
                    job: Some(got.job),
                }),
                None => Trial::Expected,
            },
        )
    }

    /// The outputs a runtime gave for the data set in a model shared with other cases
    /// (`batched.rs`), in the graph's order.
    pub(super) fn shared(opts: &RunOptions, outputs: &[Tensor]) -> Trial {
        let label = opts.runtime.as_deref().map_or("runtime", |rt| rt.label());
        Trial::Runtime(Answer {
            outputs: outputs
                .iter()
                .enumerate()
                .map(|(k, t)| {
                    (
                        format!("{label}: output_{k} (in a shared model)"),
                        Some(t.clone()),
                    )
                })
                .collect(),
            refusal: None,
            changed: Vec::new(),
            job: None,
        })
    }

    /// The data set's outputs where our kernels find that the spec (or `decision`) requires an
    /// error (`reason` says which): every output a runtime produced is failed, producing none
    /// is right. In a plain run the data set is errored, with the bug class that reproduces an
    /// expected file, if one does (`explain`).
    pub(super) fn on_required_error(
        self,
        plan: &Plan<'_>,
        opts: &RunOptions,
        reason: String,
        decision: Option<Decision>,
        explain: &dyn Fn(&Tensor) -> Vec<BugClass>,
        expected: &[Option<Tensor>],
    ) -> Result<(Vec<OutputResult>, Option<Fault>), Verdict> {
        match self {
            Trial::Runtime(answer) => {
                let answered = answer.outputs.iter().any(|(_, a)| a.is_some());
                if let (true, Some(rt), Some(job)) =
                    (answered, opts.runtime.as_deref(), &answer.job)
                {
                    rt.retire(job);
                }
                let failed = plan
                    .outputs
                    .iter()
                    .zip(answer.outputs)
                    .filter_map(|(info, (_, a))| {
                        a.map(|a| spec_error_output(&info.name, &reason, decision, explain(&a), a))
                    })
                    .collect();
                Ok(with_changes(failed, answer.changed))
            }
            Trial::Expected => {
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
        }
    }

    /// Decides which outputs a runtime may have left out, now that our result is known: with
    /// reduction "none" the spec says indices should not hold duplicates; D7 picks the last
    /// write for our result, but a runtime that refuses such input (writes no output) is right
    /// too, as where the spec requires an error. An output it did write is judged against D7.
    /// Any other missing output errors the data set.
    pub(super) fn settle<'p>(
        self,
        plan: &'p Plan<'_>,
        trace: &dyn Fn(usize) -> Option<Trace<'p>>,
        opts: &RunOptions,
    ) -> Result<Settled, Verdict> {
        let Trial::Runtime(answer) = self else {
            return Ok(Settled {
                runtime: None,
                changed: Vec::new(),
            });
        };
        let refused: Vec<bool> = answer
            .outputs
            .iter()
            .enumerate()
            .map(|(k, (_, a))| {
                a.is_none()
                    && plan
                        .producer_step(k)
                        .and_then(trace)
                        .is_some_and(|t| crate::diagnose::duplicate_writes(&t.subject()))
            })
            .collect();
        let label = opts.runtime.as_ref().map(|rt| rt.label());
        let runtime = all_present(answer.outputs, &refused, answer.refusal.as_deref(), label)?;
        Ok(Settled {
            runtime: Some(runtime),
            changed: answer.changed,
        })
    }
}

impl Settled {
    /// Whether the expected files are on trial (a plain run): their snapshots are the pending
    /// store's business.
    pub(super) fn expected_on_trial(&self) -> bool {
        self.runtime.is_none()
    }

    /// What is judged for output `k` (`name` in data set `ds`), whose expected file is
    /// `expected` and our result `ours`. A runtime's output is judged against the expected file
    /// only when that file agrees with our result: where they disagree the reference itself is
    /// disputed, and the data set is errored with the three values.
    pub(super) fn pair<'a>(
        &'a self,
        k: usize,
        name: &str,
        ds: &DataSet,
        ours: &'a Value,
        expected: Option<&'a Tensor>,
        opts: &RunOptions,
    ) -> Result<Pair<'a>, Verdict> {
        let Some(runtime) = &self.runtime else {
            return Ok(match expected {
                Some(e) => Pair::Judge {
                    reference: &ours.tensor,
                    checked: e,
                    expected: e,
                    actual: &ours.tensor,
                },
                None => Pair::Snapshot,
            });
        };
        let Some(actual) = &runtime[k] else {
            return Ok(Pair::Excused);
        };
        let reference = match expected {
            Some(e) => {
                let d = compare(e, &ours.tensor, ours.arithmetic, &opts.tolerance);
                if !d.passed {
                    return Err(Verdict(
                        Status::Errored,
                        format!(
                            "reference disputes expected output: output '{name}' of {}/output_{k}.pb differs from onnx-idx-check's result: {}; {}",
                            ds.name,
                            d.reason.as_deref().unwrap_or_default(),
                            three_way(e, &ours.tensor, actual, &d, ours.arithmetic, &opts.tolerance)
                        ),
                        None,
                    ));
                }
                e
            }
            None => &ours.tensor,
        };
        Ok(Pair::Judge {
            reference,
            checked: actual,
            expected: reference,
            actual,
        })
    }
}

/// The judged outputs, followed by those that changed between runs (`--repeat`), which make
/// the data set nondeterministic.
pub(super) fn with_changes(
    mut results: Vec<OutputResult>,
    changed: Vec<OutputResult>,
) -> (Vec<OutputResult>, Option<Fault>) {
    if changed.is_empty() {
        return (results, None);
    }
    results.extend(changed);
    (results, Some(Fault::Nondeterministic))
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
