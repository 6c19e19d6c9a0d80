//! What a run found: the verdict of every case, data set and output. Produced by the runner,
//! consumed by the reporters.

use crate::compare::Mismatch;
use crate::diagnose::BugClass;
use crate::tensor::DType;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// A verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Status {
    /// Our result equals the expected output.
    Passed,
    /// Our result differs from the expected output.
    Failed,
    /// The case could not be evaluated: a malformed file, an invalid model, or inputs the spec
    /// forbids (an out-of-range index, say).
    Errored,
    /// The case uses something the tool does not implement.
    Skipped,
}

impl Status {
    /// Lower-case name, as in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Passed => "passed",
            Status::Failed => "failed",
            Status::Errored => "errored",
            Status::Skipped => "skipped",
        }
    }
}

/// The comparison of one graph output.
#[derive(Clone, Debug, PartialEq)]
pub struct OutputResult {
    /// The graph output's name.
    pub name: String,
    /// Passed or failed.
    pub status: Status,
    /// Why it failed.
    pub reason: Option<String>,
    /// The expected dtype.
    pub dtype: DType,
    /// Our dtype.
    pub actual_dtype: DType,
    /// The expected shape; `None` when there is no expected output (the spec requires an error,
    /// or the expected file is missing).
    pub expected_shape: Option<Vec<usize>>,
    /// Our shape.
    pub actual_shape: Vec<usize>,
    /// Differing elements.
    pub mismatches: usize,
    /// Largest absolute difference.
    pub max_abs_diff: Option<f64>,
    /// Largest relative difference.
    pub max_rel_diff: Option<f64>,
    /// The first differing elements.
    pub first_mismatches: Vec<Mismatch>,
    /// Whether the comparison used a tolerance.
    pub tolerant: bool,
    /// Every known bug class that reproduces the wrong output exactly, most specific first.
    pub diagnoses: Vec<BugClass>,
}

impl OutputResult {
    /// The most specific bug class that reproduces the wrong output (`diagnosis` in reports).
    pub fn diagnosis(&self) -> Option<BugClass> {
        self.diagnoses.first().copied()
    }
}

/// What a reason says of the classes that reproduce a wrong output, most specific first:
/// `; diagnosis: <sentence> (<id>)`, then `; also reproduced by: <sentence> (<id>), ...` when
/// more than one does; empty for none.
pub fn diagnosis_note(classes: &[BugClass]) -> String {
    let Some((first, rest)) = classes.split_first() else {
        return String::new();
    };
    format!(
        "; diagnosis: {} ({}){}",
        first.sentence(),
        first.id(),
        also_reproduced_by(rest)
    )
}

/// The note of an errored case whose expected output matches known bugs (the spec requires an
/// error for its inputs): ` (the expected output matches a known bug: <id>, <sentence>)`, with
/// the other classes as in [`diagnosis_note`]; empty for none.
pub fn known_bug_hint(classes: &[BugClass]) -> String {
    let Some((first, rest)) = classes.split_first() else {
        return String::new();
    };
    format!(
        " (the expected output matches a known bug: {}, {}{})",
        first.id(),
        first.sentence(),
        also_reproduced_by(rest)
    )
}

/// `; also reproduced by: <sentence> (<id>), ...`, or nothing.
pub fn also_reproduced_by(classes: &[BugClass]) -> String {
    if classes.is_empty() {
        return String::new();
    }
    let named: Vec<String> = classes
        .iter()
        .map(|c| format!("{} ({})", c.sentence(), c.id()))
        .collect();
    format!("; also reproduced by: {}", named.join(", "))
}

/// The verdict of one data set.
#[derive(Clone, Debug, PartialEq)]
pub struct DataSetResult {
    /// `test_data_set_N`.
    pub name: String,
    /// The verdict.
    pub status: Status,
    /// Why it did not pass.
    pub reason: Option<String>,
    /// Per-output comparisons (empty when the data set could not be evaluated).
    pub outputs: Vec<OutputResult>,
}

/// The verdict of one case.
#[derive(Clone, Debug, PartialEq)]
pub struct CaseResult {
    /// The case's name (its path relative to the argument it was found under).
    pub name: String,
    /// The case directory.
    pub path: PathBuf,
    /// The operators of the graph, in order (domain-qualified outside the default domain).
    pub ops: Vec<String>,
    /// The opset imports (domain, `ai.onnx` for the default one, -> version).
    pub opset: BTreeMap<String, i64>,
    /// The operators under test as resolved versions (`Gather-13`), or as bare op types when the
    /// model could not be resolved; keys of the per-operator summary.
    pub op_versions: Vec<String>,
    /// sha256 of every model and tensor file read (path relative to the case directory -> hex),
    /// when digests were requested.
    pub files: Vec<(String, String)>,
    /// Where the case's data comes from, when its tree says (a PROVENANCE file, or a README
    /// naming the ONNX release).
    pub origin: Option<String>,
    /// What the expectations file says of this case, when one applies.
    pub expectation: Option<ExpectationNote>,
    /// The coverage traits each operator version exercised in passing data sets, when
    /// coverage was requested.
    pub traits: Vec<(String, std::collections::BTreeSet<String>)>,
    /// The verdict.
    pub status: Status,
    /// Why it did not pass: the first non-passing data set's reason, or the case-level one.
    pub reason: Option<String>,
    /// The data sets.
    pub data_sets: Vec<DataSetResult>,
    /// Wall time spent on the case.
    pub duration: Duration,
}

/// An expectations entry applied to a case.
#[derive(Clone, Debug, PartialEq)]
pub struct ExpectationNote {
    /// `expected-failure`, `unexpectedly-passed`, `different` or `tolerance-only`.
    pub outcome: &'static str,
    /// The entry's case pattern.
    pub entry: String,
    /// The entry's reason.
    pub reason: String,
    /// The entry's link.
    pub link: Option<String>,
    /// How the case differs from the entry (`different` only).
    pub detail: Option<String>,
    /// Whether this fails the run.
    pub fails_gate: bool,
}

/// Verdict counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Passed.
    pub passed: usize,
    /// Failed.
    pub failed: usize,
    /// Errored.
    pub errored: usize,
    /// Skipped.
    pub skipped: usize,
}

impl Counts {
    fn add(&mut self, s: Status) {
        match s {
            Status::Passed => self.passed += 1,
            Status::Failed => self.failed += 1,
            Status::Errored => self.errored += 1,
            Status::Skipped => self.skipped += 1,
        }
    }
}

/// Counts over a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Cases run.
    pub total: usize,
    /// Passed.
    pub passed: usize,
    /// Failed.
    pub failed: usize,
    /// Errored.
    pub errored: usize,
    /// Skipped.
    pub skipped: usize,
    /// Cases not run because `--fail-fast` stopped the run.
    pub not_run: usize,
    /// Counts per operator version (`Gather-13`; a bare op type when unresolved).
    pub by_op: BTreeMap<String, Counts>,
    /// Failed, errored or skipped cases that an expectations entry lists as such.
    pub expected_failures: usize,
    /// Cases listed as failing that passed.
    pub unexpected_passes: usize,
}

impl Summary {
    /// Counts the verdicts of `cases`; `not_run` cases were never started.
    pub fn of(cases: &[CaseResult], not_run: usize) -> Summary {
        let mut s = Summary {
            total: cases.len(),
            not_run,
            ..Summary::default()
        };
        for c in cases {
            for op in &c.op_versions {
                s.by_op.entry(op.clone()).or_default().add(c.status);
            }
            match c.expectation.as_ref().map(|e| e.outcome) {
                Some("expected-failure") => s.expected_failures += 1,
                Some("unexpectedly-passed") => s.unexpected_passes += 1,
                _ => {}
            }
            match c.status {
                Status::Passed => s.passed += 1,
                Status::Failed => s.failed += 1,
                Status::Errored => s.errored += 1,
                Status::Skipped => s.skipped += 1,
            }
        }
        s
    }
}
