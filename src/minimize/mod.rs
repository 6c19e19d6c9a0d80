//! `minimize CASE --runtime RUNTIME`: shrinks a case on which a runtime under test disagrees
//! with onnx-idx-check's reference to a smallest case on which it still disagrees the same way,
//! and writes it with a bug report ready to paste upstream.
//!
//! The same disagreement means the same [`Signature`]: verdict, fault and the first bug class
//! that reproduces the wrong output. Shrinking is greedy: the steps of [`shrink`] (fewer
//! indices, smaller data, fewer dimensions, plainer values) are tried in order, the first
//! candidate that keeps the signature is taken, and the steps start again from it, until none
//! helps or the step budget is spent. Every candidate is a node-test case whose expected outputs
//! are our reference's, judged by the runner with the one runtime the caller started.
//!
//! - [`behaviour`]: what a disagreement means (its class) and what identifies it;
//! - [`subject`]: the case in memory, its reference outputs, writing it;
//! - [`shrink`]: the steps;
//! - [`tensors`]: slicing, squeezing and readable values;
//! - [`report`]: `REPORT.md` and the summary;
//! - [`python`]: the reproducer in the runtime's own Python API;
//! - [`command`]: the subcommand.

// Parts of it are used only once the hunt is rewritten on it (issue 31).
pub(crate) mod behaviour;
pub(crate) mod command;
pub(crate) mod decision;
pub(crate) mod python;
pub(crate) mod report;
pub(crate) mod shrink;
pub(crate) mod subject;
pub(crate) mod tensors;

use crate::generate::variant::Variant;
use behaviour::Behaviour;
use onnx_idx_check::discover::{Case, DataSet};
use onnx_idx_check::runner::RunOptions;
use onnx_idx_check::runtime::Runtime;
use onnx_idx_check::verdict::{CaseResult, Fault, Status};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use subject::{Reference, Subject};

/// How a runtime disagrees with the reference on a data set: what shrinking must keep.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Signature {
    /// `failed` or `errored`.
    pub status: Status,
    /// What the runtime did, when that decided the verdict.
    pub fault: Option<Fault>,
    /// The id of the first bug class that reproduces the wrong output, `none` for none.
    pub diagnosis: &'static str,
    /// For a refusal, the kind of error the runtime raised (the message's first word, such as
    /// `IndexError`): without it shrinking slips from one refusal to another.
    pub refusal: String,
}

impl Signature {
    /// The verdict in one word: the fault's name (`crashed`), else the status (`failed`).
    pub(crate) fn verdict(&self) -> &'static str {
        self.fault.map_or(self.status.as_str(), Fault::as_str)
    }
}

/// The first data set of `result` on which the runtime disagrees (failed, or errored by what the
/// runtime did), with how.
pub(crate) fn disagreement(result: &CaseResult) -> Option<(usize, Signature)> {
    result.data_sets.iter().enumerate().find_map(|(i, ds)| {
        let disagrees =
            ds.status == Status::Failed || (ds.status == Status::Errored && ds.fault.is_some());
        disagrees.then(|| {
            let diagnosis = ds
                .outputs
                .iter()
                .find(|o| o.status == Status::Failed)
                .and_then(|o| o.diagnosis())
                .map_or("none", |c| c.id());
            (
                i,
                Signature {
                    status: ds.status,
                    fault: ds.fault,
                    diagnosis,
                    refusal: refusal_kind(ds),
                },
            )
        })
    })
}

/// The first word of a refusal's message (`runtime X refused: IndexError: ...` gives
/// `IndexError`), empty for other verdicts.
fn refusal_kind(ds: &onnx_idx_check::verdict::DataSetResult) -> String {
    if ds.fault != Some(Fault::Refused) {
        return String::new();
    }
    let reason = ds.reason.as_deref().unwrap_or_default();
    let message = reason.split_once("refused: ").map_or(reason, |(_, m)| m);
    message
        .split(|c: char| c == ':' || c.is_whitespace())
        .next()
        .unwrap_or_default()
        .to_string()
}

/// Settings of a minimization.
#[derive(Clone, Debug)]
pub(crate) struct Options {
    /// Candidates the runtime may judge at most.
    pub max_steps: usize,
    /// `--repeat`: runs of each data set in the runtime.
    pub repeat: usize,
    /// The largest tensor that may be loaded.
    pub max_tensor_bytes: usize,
    /// Wall-clock time after which no further candidate is judged (a hunt's budget per finding:
    /// a runtime that hangs costs `--timeout` per candidate).
    pub time: Option<Duration>,
    /// The variant every candidate is written in; the case itself is in the default form.
    pub variant: Variant,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_steps: 500,
            repeat: 1,
            max_tensor_bytes: onnx_idx_check::runner::DEFAULT_MAX_TENSOR_BYTES,
            time: None,
            variant: Variant::DEFAULT,
        }
    }
}

/// Why a case could not be minimized.
#[derive(Debug, thiserror::Error)]
pub(crate) enum MinimizeError {
    /// CASE is not a case directory.
    #[error("{0} is not a case directory (it holds no model.onnx)")]
    NotACase(String),
    /// The case is not one the steps understand.
    #[error("{0}")]
    Subject(#[from] subject::SubjectError),
    /// Our reference has no answer for the case.
    #[error("{case}: onnx-idx-check's reference cannot evaluate it: {why}")]
    NoReference {
        /// The case.
        case: String,
        /// Why.
        why: String,
    },
    /// With our reference's outputs as the expected ones, the runtime agrees.
    #[error("{case}: the runtime disagrees with the case's expected outputs ({verdict}), but not with onnx-idx-check's own result for the same inputs: the expected outputs are what is wrong")]
    NotReproducible {
        /// The case.
        case: String,
        /// The original verdict.
        verdict: &'static str,
    },
    /// A scratch file could not be written.
    #[error("writing a candidate case: {0}")]
    Io(#[from] std::io::Error),
}

/// What came of a minimization.
pub(crate) enum Outcome {
    /// The runtime does not disagree on the case: its verdict.
    Agrees(Box<CaseResult>),
    /// A smallest case that keeps the disagreement.
    Minimized(Box<Minimized>),
}

/// The smallest case found and how it was found.
pub(crate) struct Minimized {
    /// The data set the original disagreement is on.
    pub data_set: String,
    /// The original case's data set.
    pub original: Subject,
    /// The smallest case.
    pub subject: Subject,
    /// Our reference's answer for it.
    pub reference: Reference,
    /// The disagreement's verdict, fault and diagnosis.
    pub signature: Signature,
    /// What identifies the disagreement: held fixed while shrinking, so that the case cannot
    /// slip to another bug with the same verdict.
    pub behaviour: Behaviour,
    /// The runner's verdict on it.
    pub result: CaseResult,
    /// Candidates the runtime judged.
    pub tried: usize,
    /// The kind of every step taken, in order.
    pub taken: Vec<&'static str>,
    /// How long it took.
    pub elapsed: Duration,
}

/// Judges candidate cases with one runtime, each in a fresh scratch directory.
pub(crate) struct Judge {
    opts: RunOptions,
    scratch: tempfile::TempDir,
    next: usize,
}

impl Judge {
    /// A judge running `runtime` `repeat` times per data set.
    pub(crate) fn new(runtime: Arc<Runtime>, repeat: usize) -> std::io::Result<Judge> {
        Ok(Judge {
            opts: RunOptions {
                runtime: Some(runtime),
                repeat,
                // The runtime's answers have their own limit (as `run` does).
                timeout: None,
                ..RunOptions::default()
            },
            scratch: tempfile::Builder::new()
                .prefix("onnx-idx-check-minimize-")
                .tempdir()?,
            next: 0,
        })
    }

    /// The runner's verdict on the case in `dir`, named `name`, data sets as found.
    pub(crate) fn case(&self, dir: &Path, name: &str) -> CaseResult {
        self.case_repeated(dir, name, self.opts.repeat)
    }

    /// [`Judge::case`], running each data set `repeat` times in the runtime (alternating thread
    /// counts where the runtime takes one), whatever the judge's own repeat.
    pub(crate) fn case_repeated(&self, dir: &Path, name: &str, repeat: usize) -> CaseResult {
        let mut data_sets: Vec<DataSet> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                let k: usize = n.strip_prefix("test_data_set_")?.parse().ok()?;
                Some((
                    k,
                    DataSet {
                        name: n,
                        dir: e.path(),
                    },
                ))
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|(_, d)| d)
            .collect();
        data_sets.sort_by_key(|d| {
            d.name
                .trim_start_matches("test_data_set_")
                .parse::<usize>()
                .unwrap_or(usize::MAX)
        });
        let case = Case {
            name: name.to_string(),
            dir: dir.to_path_buf(),
            rel: PathBuf::new(),
            data_sets,
        };
        if repeat == self.opts.repeat {
            return onnx_idx_check::runner::run_case(&case, &self.opts);
        }
        let opts = RunOptions {
            repeat,
            ..self.opts.clone()
        };
        onnx_idx_check::runner::run_case(&case, &opts)
    }

    /// Judges with `runtime` from now on (a hunt runs its cases in several modes of one
    /// runtime, each a runtime of its own).
    pub(crate) fn set_runtime(&mut self, runtime: Arc<Runtime>) {
        self.opts.runtime = Some(runtime);
    }

    /// The runs of each data set this judge asks for.
    pub(crate) fn repeat(&self) -> usize {
        self.opts.repeat
    }

    /// Asks for `repeat` runs of each data set from now on.
    pub(crate) fn set_repeat(&mut self, repeat: usize) {
        self.opts.repeat = repeat.max(1);
    }

    /// Writes `s` (with `reference`'s outputs) to a scratch directory and judges it.
    pub(crate) fn subject(
        &mut self,
        s: &Subject,
        reference: &Reference,
    ) -> std::io::Result<CaseResult> {
        self.next += 1;
        let dir = self
            .scratch
            .path()
            .join(self.next.to_string())
            .join(&s.name);
        s.write(&dir, reference)?;
        let result = self.case(&dir, &s.name);
        let _ = std::fs::remove_dir_all(dir.parent().unwrap_or(&dir));
        Ok(result)
    }
}

/// Shrinks the case in `case_dir` (named `name`) against the judge's runtime.
pub(crate) fn minimize(
    case_dir: &Path,
    name: &str,
    judge: &mut Judge,
    opts: &Options,
) -> Result<Outcome, MinimizeError> {
    let start = Instant::now();
    if !case_dir.join("model.onnx").is_file() {
        return Err(MinimizeError::NotACase(case_dir.display().to_string()));
    }
    let (data_set, verdict) = if opts.variant == Variant::DEFAULT {
        let first = judge.case(case_dir, name);
        let Some((ds, sig)) = disagreement(&first) else {
            return Ok(Outcome::Agrees(Box::new(first)));
        };
        (first.data_sets[ds].name.clone(), sig.verdict())
    } else {
        // The case is in its default form, the disagreement was seen in the variant: the
        // subject is written in the variant from here on, and the baseline below confirms it.
        ("test_data_set_0".to_string(), "failed")
    };
    let mut original = Subject::load(case_dir, name, &data_set, opts.max_tensor_bytes)?;
    original.variant = opts.variant;
    let no_reference = |why: String| MinimizeError::NoReference {
        case: name.to_string(),
        why,
    };
    let reference = original.reference().map_err(no_reference)?;
    // The original with our outputs as the expected ones: the baseline every candidate is
    // compared with.
    let result = judge.subject(&original, &reference)?;
    let rule = |r: &Reference| match r {
        Reference::Error(e) => Some(e.to_string()),
        Reference::Outputs(_) => None,
    };
    let (Some((_, signature)), Some((_, behaviour))) = (
        disagreement(&result),
        behaviour::behaviour(&result, rule(&reference).as_deref(), || {
            original.tensor_of(onnx_idx_check::ops::Role::Data).cloned()
        }),
    ) else {
        return Err(MinimizeError::NotReproducible {
            case: name.to_string(),
            verdict,
        });
    };
    let mut best = Minimized {
        data_set,
        original: original.clone(),
        subject: original,
        reference,
        signature,
        behaviour,
        result,
        tried: 1,
        taken: Vec::new(),
        elapsed: Duration::ZERO,
    };
    'shrinking: loop {
        let hint = first_mismatch(&best.result).and_then(|at| shrink::hint(&best.subject, &at));
        for step in shrink::steps(&best.subject, hint.as_deref()) {
            if best.tried >= opts.max_steps || opts.time.is_some_and(|t| start.elapsed() >= t) {
                break 'shrinking;
            }
            let Some(candidate) = shrink::apply(&best.subject, &step) else {
                continue;
            };
            if candidate.size() > best.subject.size() {
                continue;
            }
            // The spec must still require an error exactly where it did: a candidate that
            // breaks a rule of the operator is another case, not a smaller one.
            let Ok(reference) = candidate.reference() else {
                continue;
            };
            if reference.is_error() != best.reference.is_error() {
                continue;
            }
            // Nor may the outputs come to rest on a decision of this project where they rested
            // on the text (or the other way): that is another rule, so another finding.
            if !reference.is_error()
                && decision::output_decision(&candidate) != decision::output_decision(&best.subject)
            {
                continue;
            }
            best.tried += 1;
            let result = judge.subject(&candidate, &reference)?;
            // The same bug, not merely the same verdict: a candidate that disagrees another way
            // (other elements wrong, another crash site, another rule broken) is another bug.
            let data = || {
                candidate
                    .tensor_of(onnx_idx_check::ops::Role::Data)
                    .cloned()
            };
            let same = behaviour::behaviour(&result, rule(&reference).as_deref(), data)
                .is_some_and(|(_, b)| b.same_as(&best.behaviour));
            if same && disagreement(&result).map(|(_, s)| s).as_ref() == Some(&best.signature) {
                best.subject = candidate;
                best.reference = reference;
                best.result = result;
                best.taken.push(step.kind());
                continue 'shrinking;
            }
        }
        break;
    }
    best.elapsed = start.elapsed();
    Ok(Outcome::Minimized(Box::new(best)))
}

/// The coordinates of the first mismatching output element of the first failing output.
fn first_mismatch(result: &CaseResult) -> Option<Vec<usize>> {
    let ds = result.data_sets.first()?;
    let out = ds.outputs.iter().find(|o| o.status == Status::Failed)?;
    out.first_mismatches.first().map(|m| m.index.clone())
}
