//! What a run found: the verdict of every case, data set and output. Produced by the runner,
//! consumed by the reporters.
//!
//! ```
//! use onnx_idx_check::verdict::Status;
//! use onnx_idx_check::{check, CheckOptions};
//!
//! let report = check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &CheckOptions::default())?;
//! for case in &report.cases {
//!     for ds in &case.data_sets {
//!         assert!(ds.outputs.iter().all(|o| o.status == Status::Passed), "{}", case.name);
//!     }
//! }
//! # Ok::<(), onnx_idx_check::CheckError>(())
//! ```

use crate::compare::Mismatch;
pub use crate::diagnose::class::BugClass;
use crate::tensor::DType;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// A verdict.
///
/// ```
/// use onnx_idx_check::verdict::Status;
/// use onnx_idx_check::{check, CheckOptions};
///
/// let report = check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &CheckOptions::default().filter("^test_gather_0$"))?;
/// assert_eq!(report.cases[0].status, Status::Passed);
/// assert_eq!(Status::Errored.as_str(), "errored");
/// # Ok::<(), onnx_idx_check::CheckError>(())
/// ```
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
    ///
    /// ```
    /// use onnx_idx_check::verdict::Status;
    ///
    /// assert_eq!(Status::Skipped.as_str(), "skipped");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Passed => "passed",
            Status::Failed => "failed",
            Status::Errored => "errored",
            Status::Skipped => "skipped",
        }
    }
}

/// What a runtime under test did, when its answer was not outputs to compare: told apart in every
/// report (`run --runtime`, and `--actual` for missing outputs).
///
/// ```
/// use onnx_idx_check::verdict::Fault;
///
/// assert_eq!(Fault::TimedOut.as_str(), "timed-out");
/// assert_eq!(Fault::Crashed.label(), "CRASHED");
/// assert_eq!(Fault::WroteNothing.label(), "NOTHING");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Fault {
    /// Its process died: a signal, an exit, a reply that is not the protocol's.
    Crashed,
    /// It gave no answer within `--timeout`.
    TimedOut,
    /// It raised an error (its message is the reason) where the spec requires outputs.
    Refused,
    /// It answered, but an output file is missing.
    WroteNothing,
    /// Under `--repeat`, two runs of the same data set gave different outputs.
    Nondeterministic,
}

impl Fault {
    /// Its name in machine-readable reports (`crashed`, `wrote-nothing`).
    pub fn as_str(self) -> &'static str {
        match self {
            Fault::Refused => "refused",
            Fault::Crashed => "crashed",
            Fault::TimedOut => "timed-out",
            Fault::WroteNothing => "wrote-nothing",
            Fault::Nondeterministic => "nondeterministic",
        }
    }

    /// Its label on a human case line, in place of `FAIL` or `ERROR`.
    pub fn label(self) -> &'static str {
        match self {
            Fault::Refused => "REFUSED",
            Fault::Crashed => "CRASHED",
            Fault::TimedOut => "TIMEOUT",
            Fault::WroteNothing => "NOTHING",
            Fault::Nondeterministic => "NONDET",
        }
    }

    /// In words, for summaries: `crashed`, `timed out`, `wrote nothing`.
    pub fn words(self) -> &'static str {
        match self {
            Fault::Refused => "refused",
            Fault::Crashed => "crashed",
            Fault::TimedOut => "timed out",
            Fault::WroteNothing => "wrote nothing",
            Fault::Nondeterministic => "nondeterministic",
        }
    }
}

/// The runtime under test of a run, as it introduced itself: the runtime's own description,
/// re-exported here among the results it appears in.
pub use crate::runtime::RuntimeInfo;

/// The comparison of one graph output.
///
/// ```
/// use onnx_idx_check::verdict::Status;
/// use onnx_idx_check::{check, CheckOptions, DType};
///
/// let report = check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &CheckOptions::default().filter("^test_scatternd_add$"))?;
/// let out = &report.cases[0].data_sets[0].outputs[0];
/// assert_eq!((out.status, out.dtype, out.mismatches), (Status::Passed, DType::Float, 0));
/// assert_eq!(out.expected_shape.as_deref(), Some(&out.actual_shape[..]));
/// assert!(out.diagnosis().is_none());
/// # Ok::<(), onnx_idx_check::CheckError>(())
/// ```
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
    /// onnx-idx-check's result in brief (dtype, shape, first values), for an output that has no
    /// expected file yet: a new snapshot.
    pub computed: Option<String>,
}

impl OutputResult {
    /// The comparison of output `name`, `expected` against `actual`, as `d` found it: passed or
    /// failed, with no diagnosis yet.
    pub(crate) fn of_diff(
        name: &str,
        expected: &crate::Tensor,
        actual: &crate::Tensor,
        d: crate::compare::Diff,
    ) -> OutputResult {
        OutputResult {
            name: name.to_string(),
            status: if d.passed {
                Status::Passed
            } else {
                Status::Failed
            },
            reason: d.reason,
            dtype: expected.dtype(),
            actual_dtype: actual.dtype(),
            expected_shape: Some(expected.shape().to_vec()),
            actual_shape: actual.shape().to_vec(),
            mismatches: d.mismatches,
            max_abs_diff: d.max_abs_diff,
            max_rel_diff: d.max_rel_diff,
            first_mismatches: d.first_mismatches,
            tolerant: d.tolerant,
            diagnoses: Vec::new(),
            computed: None,
        }
    }

    /// The most specific bug class that reproduces the wrong output (`diagnosis` in reports).
    ///
    /// ```
    /// use onnx_idx_check::{check, CheckOptions};
    ///
    /// // A passing output has no diagnosis; a wrong one names the bug class that reproduces it.
    /// let report = check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &CheckOptions::default().filter("^test_gather_0$"))?;
    /// assert!(report.cases[0].data_sets[0].outputs[0].diagnosis().is_none());
    /// # Ok::<(), onnx_idx_check::CheckError>(())
    /// ```
    pub fn diagnosis(&self) -> Option<BugClass> {
        self.diagnoses.first().copied()
    }
}

/// What a reason says of the classes that reproduce a wrong output, most specific first:
/// `; diagnosis: <sentence> (<id>)`, then `; also reproduced by: <sentence> (<id>), ...` when
/// more than one does; empty for none.
pub(crate) fn diagnosis_note(classes: &[BugClass]) -> String {
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
pub(crate) fn known_bug_hint(classes: &[BugClass]) -> String {
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
///
/// ```
/// use onnx_idx_check::{check, CheckOptions};
///
/// let report = check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &CheckOptions::default().filter("^test_gather_1$"))?;
/// let ds = &report.cases[0].data_sets[0];
/// assert_eq!((ds.name.as_str(), ds.outputs.len()), ("test_data_set_0", 1));
/// # Ok::<(), onnx_idx_check::CheckError>(())
/// ```
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
    /// What the runtime under test did, when that decided the verdict.
    pub fault: Option<Fault>,
}

/// The verdict of one case.
///
/// ```
/// use onnx_idx_check::{check, CheckOptions};
///
/// let report = check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &CheckOptions::default().filter("^test_scatter_elements_with_axis$"))?;
/// let case = &report.cases[0];
/// assert_eq!(case.name, "test_scatter_elements_with_axis");
/// assert_eq!(case.op_versions, ["ScatterElements-18"]);
/// assert!(case.path.ends_with("test_scatter_elements_with_axis"));
/// # Ok::<(), onnx_idx_check::CheckError>(())
/// ```
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
    /// What the runtime under test did in the data set that gave the reason.
    pub fault: Option<Fault>,
    /// The data sets.
    pub data_sets: Vec<DataSetResult>,
    /// Wall time spent on the case.
    pub duration: Duration,
}

/// An expectations entry applied to a case.
///
/// ```
/// use onnx_idx_check::{check, CheckOptions};
///
/// // Without an expectations file no case carries a note.
/// let report = check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &CheckOptions::default().filter("^test_gather"))?;
/// assert!(report.cases.iter().all(|c| c.expectation.is_none()));
/// # Ok::<(), onnx_idx_check::CheckError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ExpectationNote {
    /// What the entry made of the case.
    pub outcome: ExpectationOutcome,
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
    /// The line of the entry's `[[expect]]` in the expectations file, from 1.
    pub line: Option<usize>,
}

/// What an expectations entry made of a case it lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExpectationOutcome {
    /// The case fails as the entry says (`XFAIL`).
    ExpectedFailure,
    /// The entry lists the case as failing, and it passed (`XPASS`).
    UnexpectedlyPassed,
    /// The case fails, but not as the entry says.
    Different,
    /// The entry only widens the case's tolerance.
    ToleranceOnly,
    /// The entry's `until` date has passed (`EXPIRED`).
    Expired,
}

impl ExpectationOutcome {
    /// The outcome's name in reports: `expected-failure`, `unexpectedly-passed`, `different`,
    /// `tolerance-only` or `expired`.
    pub fn as_str(self) -> &'static str {
        match self {
            ExpectationOutcome::ExpectedFailure => "expected-failure",
            ExpectationOutcome::UnexpectedlyPassed => "unexpectedly-passed",
            ExpectationOutcome::Different => "different",
            ExpectationOutcome::ToleranceOnly => "tolerance-only",
            ExpectationOutcome::Expired => "expired",
        }
    }
}

/// Counts that partition cases: each case is counted once, under its verdict unless the
/// expectations list it, in which case under what they make of it (an expected failure, an
/// unexpected pass, an expired entry).
///
/// ```
/// use onnx_idx_check::{check, CheckOptions};
///
/// let report = check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &CheckOptions::default().filter("^test_gathernd"))?;
/// let counts = &report.summary.by_op["GatherND-13"];
/// assert_eq!((counts.passed, counts.failed, counts.errored, counts.skipped), (3, 0, 0, 0));
/// assert_eq!(counts.total(), 3);
/// # Ok::<(), onnx_idx_check::CheckError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Passed (and not listed as failing).
    pub passed: usize,
    /// Failed, and not an expected failure.
    pub failed: usize,
    /// Errored, and not an expected failure.
    pub errored: usize,
    /// Skipped, and not an expected failure.
    pub skipped: usize,
    /// Listed in the expectations and ending as listed (`XFAIL`).
    pub xfailed: usize,
    /// Listed as failing, but passed (`XPASS`).
    pub xpassed: usize,
    /// Under an expectations entry whose `until` date has passed (`EXPIRED`).
    pub expired: usize,
}

impl Counts {
    /// Counts `case` once: under its expectation outcome when that is an expected failure, an
    /// unexpected pass or an expiry, else under its verdict.
    pub(crate) fn add(&mut self, case: &CaseResult) {
        match case.expectation.as_ref().map(|e| e.outcome) {
            Some(ExpectationOutcome::ExpectedFailure) => self.xfailed += 1,
            Some(ExpectationOutcome::UnexpectedlyPassed) => self.xpassed += 1,
            Some(ExpectationOutcome::Expired) => self.expired += 1,
            _ => match case.status {
                Status::Passed => self.passed += 1,
                Status::Failed => self.failed += 1,
                Status::Errored => self.errored += 1,
                Status::Skipped => self.skipped += 1,
            },
        }
    }

    /// Every case counted.
    pub fn total(&self) -> usize {
        self.passed
            + self.failed
            + self.errored
            + self.skipped
            + self.xfailed
            + self.xpassed
            + self.expired
    }

    /// The non-zero counts in the order people read them, each with its word: `passed` always,
    /// then `failed`, `errored`, `skipped`, `xfailed`, `xpassed`, `expired`.
    pub(crate) fn parts(&self) -> Vec<(usize, &'static str)> {
        let all = [
            (self.passed, "passed"),
            (self.failed, "failed"),
            (self.errored, "errored"),
            (self.skipped, "skipped"),
            (self.xfailed, "xfailed"),
            (self.xpassed, "xpassed"),
            (self.expired, "expired"),
        ];
        all.into_iter()
            .enumerate()
            .filter(|(i, (n, _))| *i == 0 || *n > 0)
            .map(|(_, p)| p)
            .collect()
    }
}

/// The row of the cases whose model could not be read, in [`Summary::by_op`].
///
/// ```
/// use onnx_idx_check::verdict::INVALID_MODEL;
/// use onnx_idx_check::{check, CheckOptions};
///
/// // Every bundled model reads, so the row is absent.
/// let report = check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &CheckOptions::default())?;
/// assert!(!report.summary.by_op.contains_key(INVALID_MODEL));
/// # Ok::<(), onnx_idx_check::CheckError>(())
/// ```
pub const INVALID_MODEL: &str = "(invalid model)";

/// Rows keyed by operator version (`Gather-13`, `com.microsoft.GatherGrad-1`): the one order of
/// every per-operator table, `run`'s summary (human, JSON, Markdown) and `coverage` alike, so a
/// reader can hold one next to the other. The names' byte order puts the default domain's
/// operators first and the other domains (lower-case) after them.
pub type ByOp<T> = BTreeMap<String, T>;

/// Counts over a run.
///
/// ```
/// use onnx_idx_check::{check, CheckOptions};
///
/// let report = check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &CheckOptions::default().filter("^test_gathernd"))?;
/// let s = &report.summary;
/// assert_eq!((s.total, s.passed, s.failed, s.errored, s.skipped), (3, 3, 0, 0, 0));
/// assert_eq!(s.outcomes.passed, 3);
/// # Ok::<(), onnx_idx_check::CheckError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Cases run.
    pub total: usize,
    /// Passed (the verdict, whatever the expectations say).
    pub passed: usize,
    /// Failed (the verdict).
    pub failed: usize,
    /// Errored (the verdict).
    pub errored: usize,
    /// Skipped (the verdict).
    pub skipped: usize,
    /// Cases not run because `--fail-fast` stopped the run.
    pub not_run: usize,
    /// The cases partitioned by what they mean for the run (see [`Counts`]): what the summary
    /// line prints, adding up to `total`.
    pub outcomes: Counts,
    /// The same partition per operator version (`Gather-13`; a bare op type when unresolved;
    /// [`INVALID_MODEL`] for cases whose model could not be read). A case with several
    /// operators counts in each of their rows.
    pub by_op: ByOp<Counts>,
    /// Failed, errored or skipped cases that an expectations entry lists as such.
    pub expected_failures: usize,
    /// Cases listed as failing that passed.
    pub unexpected_passes: usize,
    /// Cases under an expectations entry whose `until` date has passed.
    pub expired: usize,
    /// Cases whose verdict a runtime under test's fault decided, per fault (`--runtime`,
    /// `--actual`), whatever the expectations say of them.
    pub faults: BTreeMap<Fault, usize>,
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
            if c.op_versions.is_empty() {
                s.by_op.entry(INVALID_MODEL.to_string()).or_default().add(c);
            }
            for op in &c.op_versions {
                s.by_op.entry(op.clone()).or_default().add(c);
            }
            s.outcomes.add(c);
            if let Some(f) = c.fault.filter(|_| c.status != Status::Passed) {
                *s.faults.entry(f).or_default() += 1;
            }
            match c.status {
                Status::Passed => s.passed += 1,
                Status::Failed => s.failed += 1,
                Status::Errored => s.errored += 1,
                Status::Skipped => s.skipped += 1,
            }
        }
        s.expected_failures = s.outcomes.xfailed;
        s.unexpected_passes = s.outcomes.xpassed;
        s.expired = s.outcomes.expired;
        s
    }
}

/// What `--expectations` found about the file itself.
///
/// ```
/// use onnx_idx_check::{check, CheckOptions};
///
/// // Present only when the run was given an expectations file.
/// let report = check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &CheckOptions::default().filter("^test_gather_0$"))?;
/// assert!(report.expectations.is_none());
/// # Ok::<(), onnx_idx_check::CheckError>(())
/// ```
#[derive(Clone, Debug, serde::Serialize)]
pub struct ExpectationsReport {
    /// The file.
    pub file: String,
    /// Whether `--update-expectations` rewrote it.
    pub updated: bool,
    /// What `--update-expectations` wrote; `None` when it did not rewrite the file.
    pub written: Option<Written>,
    /// Case patterns of entries whose `until` date has passed (each fails the run).
    pub expired: Vec<String>,
    /// Case patterns of entries that matched no case (a warning; an error with
    /// `--strict-expectations`).
    pub unmatched: Vec<String>,
    /// The line in the file of each entry of `expired`, in the same order (not in the JSON
    /// report).
    #[serde(skip)]
    pub expired_lines: Vec<Option<usize>>,
    /// Whether each entry of `expired` fails this run, in the same order: it applies to a case
    /// of the run, or to no case found at all. An entry for cases the selection (`--filter`,
    /// `--shard`) left out fails only a run that runs them (not in the JSON report: the gate
    /// says what failed).
    #[serde(skip)]
    pub expired_fails: Vec<bool>,
    /// The line in the file of each entry of `unmatched`, in the same order (not in the JSON
    /// report).
    #[serde(skip)]
    pub unmatched_lines: Vec<Option<usize>>,
    /// Why each entry of `unmatched` applies to no case, in the same order (not in the JSON
    /// report: the gate's message says it under `--strict-expectations`).
    #[serde(skip)]
    pub unmatched_why: Vec<NoMatch>,
    /// Whether `--strict-expectations` makes unmatched entries fail the run (not in the JSON
    /// report: the gate says what failed).
    #[serde(skip)]
    pub strict: bool,
}

/// What `--update-expectations` wrote: the entries, and how they differ from the old file's.
///
/// ```
/// use onnx_idx_check::verdict::Written;
///
/// let w = Written { entries: 3, added: 1, removed: 2, changed: 1, expired: 0 };
/// assert_eq!(w.to_string(), "1 added, 2 removed, 1 changed");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Written {
    /// Entries in the rewritten file.
    pub entries: usize,
    /// New entries: cases no entry covered, and a glob's cases given their own entries.
    pub added: usize,
    /// Entries of the old file that are gone: their cases pass, or they match no case.
    pub removed: usize,
    /// Entries kept with a new status, failure signature or tolerance-only form.
    pub changed: usize,
    /// Entries kept although their `until` date has passed: they still fail the runs of their
    /// cases until the date is renewed or the entry removed.
    pub expired: usize,
}

/// Why an expectations entry applies to no case of the run: no name matches its case pattern,
/// or some do but its `opset` range admits none of them.
///
/// ```
/// use onnx_idx_check::verdict::NoMatch;
///
/// assert_eq!(NoMatch::default().to_string(), "matches no case");
/// let opset = NoMatch { by_name: 1, opsets: vec![Some(13)], range: (Some(11), Some(12)) };
/// assert_eq!(
///     opset.to_string(),
///     "matches 1 case by name, but its opset range 11-12 admits none of them (opset 13)"
/// );
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NoMatch {
    /// The cases of the run whose name the entry's pattern matches.
    pub by_name: usize,
    /// Their `ai.onnx` opsets, distinct and ascending (`None` for a case that imports none).
    pub opsets: Vec<Option<i64>>,
    /// The entry's opset range (min, max), inclusive, each bound optional.
    pub range: (Option<i64>, Option<i64>),
}

impl std::fmt::Display for NoMatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.by_name == 0 {
            return write!(f, "matches no case");
        }
        let range = match self.range {
            (Some(a), Some(b)) if a == b => format!("{a}"),
            (Some(a), Some(b)) => format!("{a}-{b}"),
            (Some(a), None) => format!("{a} and later"),
            (None, Some(b)) => format!("up to {b}"),
            (None, None) => "(any)".to_string(),
        };
        let opsets: Vec<String> = self
            .opsets
            .iter()
            .map(|o| o.map_or("none".to_string(), |v| v.to_string()))
            .collect();
        write!(
            f,
            "matches {} by name, but its opset range {range} admits none of them ({} {})",
            crate::report::counted(self.by_name, "case", "cases"),
            if opsets.len() == 1 { "opset" } else { "opsets" },
            opsets.join(", ")
        )
    }
}

impl std::fmt::Display for Written {
    /// `3 added, 1 removed, 0 changed, 1 expired kept` (the expired part only when there are).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} added, {} removed, {} changed",
            self.added, self.removed, self.changed
        )?;
        if self.expired > 0 {
            write!(f, ", {} expired kept", self.expired)?;
        }
        Ok(())
    }
}

/// The run's own verdict: whether it passes, and every reason it does not. The exit status is
/// read from it, and every report receives it.
///
/// ```
/// use onnx_idx_check::verdict::GateKind;
/// use onnx_idx_check::{check, CheckOptions};
///
/// let options = CheckOptions::default().filter("^test_gather_0$").min_cases(2);
/// let report = check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &options)?;
/// assert!(!report.gate.passed());
/// assert_eq!(report.gate.reasons[0].kind, GateKind::MinCases);
/// # Ok::<(), onnx_idx_check::CheckError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Gate {
    /// Why the run fails, in a fixed order (cases, expectations, requirements); empty when it
    /// passes.
    pub reasons: Vec<GateReason>,
    /// Whether skipped cases fail the run (`--deny-skip`): the reports show them as failures of
    /// the gate.
    pub deny_skip: bool,
}

/// How `c` fails the gate, if it does: an index into the ways [`Gate::of`] counts (failed,
/// errored, skipped under `deny_skip`, passed unexpectedly, failed differently, expired).
fn gate_failure(c: &CaseResult, deny_skip: bool) -> Option<usize> {
    match &c.expectation {
        Some(n) if n.outcome != ExpectationOutcome::ToleranceOnly => match n.outcome {
            _ if !n.fails_gate => None,
            ExpectationOutcome::UnexpectedlyPassed => Some(3),
            ExpectationOutcome::Expired => Some(5),
            _ => Some(4),
        },
        _ => match c.status {
            Status::Failed => Some(0),
            Status::Errored => Some(1),
            Status::Skipped if deny_skip => Some(2),
            _ => None,
        },
    }
}

impl CaseResult {
    /// A result with a name, a directory and a verdict, and nothing else known yet.
    pub fn bare(name: &str, path: PathBuf, status: Status) -> CaseResult {
        CaseResult {
            name: name.into(),
            path,
            ops: Vec::new(),
            opset: BTreeMap::new(),
            op_versions: Vec::new(),
            files: Vec::new(),
            origin: None,
            expectation: None,
            traits: Vec::new(),
            status,
            reason: None,
            fault: None,
            data_sets: Vec::new(),
            duration: Duration::ZERO,
        }
    }

    /// Whether the case errored only because expected outputs are missing: every output that
    /// did not pass is a new snapshot (see [`OutputResult::computed`]), as for a case just
    /// written.
    ///
    /// ```
    /// use onnx_idx_check::{check, CheckOptions};
    ///
    /// let report = check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &CheckOptions::default().filter("^test_gather_0$"))?;
    /// assert!(!report.cases[0].is_new());
    /// # Ok::<(), onnx_idx_check::CheckError>(())
    /// ```
    pub fn is_new(&self) -> bool {
        self.status == Status::Errored
            && !self.data_sets.is_empty()
            && self.data_sets.iter().all(|d| {
                d.status == Status::Passed
                    || (!d.outputs.is_empty()
                        && d.outputs
                            .iter()
                            .all(|o| o.status == Status::Passed || o.computed.is_some()))
            })
    }

    /// Whether the case fails the run's gate: it failed or errored and no expectation excuses
    /// it, an expectation's outcome fails it (an unexpected pass, a different failure, an
    /// expired entry), or it was skipped under `deny_skip`.
    ///
    /// ```
    /// use onnx_idx_check::{check, CheckOptions};
    ///
    /// let report = check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &CheckOptions::default().filter("^test_gather_0$"))?;
    /// assert!(!report.cases[0].fails_gate(false));
    /// # Ok::<(), onnx_idx_check::CheckError>(())
    /// ```
    pub fn fails_gate(&self, deny_skip: bool) -> bool {
        gate_failure(self, deny_skip).is_some()
    }
}

/// One reason a run fails.
///
/// ```
/// use onnx_idx_check::verdict::GateKind;
/// use onnx_idx_check::{check, CheckOptions};
///
/// let options = CheckOptions::default().filter("^test_gather_0$").require_op("ScatterND");
/// let reason = &check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &options)?.gate.reasons[0];
/// assert_eq!((reason.kind, reason.kind.id()), (GateKind::RequireOp, "require-op"));
/// assert!(reason.message.contains("ScatterND"));
/// # Ok::<(), onnx_idx_check::CheckError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GateReason {
    /// What kind of rule failed.
    pub kind: GateKind,
    /// What failed, for people: `--min-cases 5: only 3 cases ran`.
    pub message: String,
}

/// The rules a run is gated by.
///
/// ```
/// use onnx_idx_check::verdict::GateKind;
///
/// assert_eq!(GateKind::MinCases.id(), "min-cases");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GateKind {
    /// Cases that failed, errored, passed unexpectedly or (with `--deny-skip`) were skipped.
    Cases,
    /// The expectations file itself: an expired entry, or (with `--strict-expectations`) an
    /// entry that matched no case.
    Expectations,
    /// `--min-cases N`: fewer cases ran.
    MinCases,
    /// `--require-op OP[-VERSION]`: no case ran that operator (version).
    RequireOp,
}

impl GateKind {
    /// The stable identifier used in reports.
    ///
    /// ```
    /// use onnx_idx_check::verdict::GateKind;
    ///
    /// assert_eq!(GateKind::Cases.id(), "cases");
    /// ```
    pub fn id(self) -> &'static str {
        match self {
            GateKind::Cases => "cases",
            GateKind::Expectations => "expectations",
            GateKind::MinCases => "min-cases",
            GateKind::RequireOp => "require-op",
        }
    }

    /// Whether the rule is one the run was asked to meet (`--min-cases`, `--require-op`) rather
    /// than a verdict the reports already show case by case.
    pub(crate) fn is_requirement(self) -> bool {
        matches!(self, GateKind::MinCases | GateKind::RequireOp)
    }
}

/// What the run must show to pass besides its verdicts: `--min-cases` and `--require-op`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Requirements {
    /// `--min-cases N`: at least this many cases must run (passed, failed or errored; skipped
    /// cases and cases `--fail-fast` left out do not count).
    pub min_cases: Option<usize>,
    /// `--require-op`: operator versions (`GatherND-12`) or operators (`ScatterElements`, any
    /// version) at least one case must run, as the per-operator summary spells them.
    pub ops: Vec<RequiredOp>,
}

/// One `--require-op`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RequiredOp {
    /// As given on the command line.
    pub given: String,
    /// The operator as the per-operator summary names it, without version
    /// (`com.microsoft.GatherGrad`, `Gather`).
    pub op: String,
    /// The exact `since_version`, or `None` for any.
    pub version: Option<i64>,
}

impl RequiredOp {
    /// Whether a per-operator key (`Gather-13`, `com.microsoft.GatherGrad-1`) is this operator
    /// (version).
    pub(crate) fn matches(&self, key: &str) -> bool {
        let Some((op, version)) = key.rsplit_once('-') else {
            return false;
        };
        op == self.op && self.version.is_none_or(|v| version.parse::<i64>() == Ok(v))
    }
}

/// Whether a case counts as run for `--min-cases` and `--require-op`: it was evaluated (passed,
/// failed or errored), not skipped.
fn ran(c: &CaseResult) -> bool {
    c.status != Status::Skipped
}

impl Gate {
    /// Whether the run passes.
    ///
    /// ```
    /// use onnx_idx_check::{check, CheckOptions};
    ///
    /// let report = check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &CheckOptions::default().filter("^test_gather_0$"))?;
    /// assert!(report.gate.passed());
    /// # Ok::<(), onnx_idx_check::CheckError>(())
    /// ```
    pub fn passed(&self) -> bool {
        self.reasons.is_empty()
    }

    /// The cases skipped that fail the run (under `--deny-skip`), in case order.
    pub fn skipped_denied<'a>(&self, cases: &'a [CaseResult]) -> Vec<&'a CaseResult> {
        cases
            .iter()
            .filter(|c| c.status == Status::Skipped && c.fails_gate(self.deny_skip))
            .collect()
    }

    /// The gate of a run: its cases (with their expectation notes), the expectations file's own
    /// failures (`expectations`, messages as they are), and the requirements.
    pub(crate) fn of(
        cases: &[CaseResult],
        deny_skip: bool,
        expectations: Vec<String>,
        requirements: &Requirements,
    ) -> Gate {
        let mut reasons = Vec::new();
        // Counted per way of failing, in this order.
        let mut bad = [
            ("failed", 0),
            ("errored", 0),
            ("skipped (--deny-skip)", 0),
            ("passed unexpectedly", 0),
            ("failed differently than expected", 0),
            ("listed under an expired expectation", 0),
        ];
        for c in cases {
            if let Some(i) = gate_failure(c, deny_skip) {
                bad[i].1 += 1;
            }
        }
        let parts: Vec<String> = bad
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(why, n)| format!("{n} {why}"))
            .collect();
        if !parts.is_empty() {
            reasons.push(GateReason {
                kind: GateKind::Cases,
                message: format!("cases: {}", parts.join(", ")),
            });
        }
        reasons.extend(expectations.into_iter().map(|message| GateReason {
            kind: GateKind::Expectations,
            message,
        }));
        let run = cases.iter().filter(|c| ran(c)).count();
        if let Some(min) = requirements.min_cases.filter(|&min| run < min) {
            reasons.push(GateReason {
                kind: GateKind::MinCases,
                message: format!(
                    "--min-cases {min}: only {run} {} ran (skipped cases do not count)",
                    if run == 1 { "case" } else { "cases" }
                ),
            });
        }
        for req in &requirements.ops {
            let exercised = cases
                .iter()
                .filter(|c| ran(c))
                .any(|c| c.op_versions.iter().any(|k| req.matches(k)));
            if !exercised {
                reasons.push(GateReason {
                    kind: GateKind::RequireOp,
                    message: format!(
                        "--require-op {}: no case ran {}",
                        req.given,
                        match req.version {
                            Some(v) => format!("{}-{v}", req.op),
                            None => format!("{} (any version)", req.op),
                        }
                    ),
                });
            }
        }
        Gate { reasons, deny_skip }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(name: &str, status: Status, ops: &[&str]) -> CaseResult {
        CaseResult {
            op_versions: ops.iter().map(|s| s.to_string()).collect(),
            ..CaseResult::bare(name, PathBuf::from(name), status)
        }
    }

    fn op(op: &str, version: Option<i64>) -> RequiredOp {
        RequiredOp {
            given: match version {
                Some(v) => format!("{op}-{v}"),
                None => op.to_string(),
            },
            op: op.to_string(),
            version,
        }
    }

    fn messages(g: &Gate) -> Vec<(&'static str, &str)> {
        g.reasons
            .iter()
            .map(|r| (r.kind.id(), r.message.as_str()))
            .collect()
    }

    #[test]
    fn a_run_of_passes_and_skips_passes_unless_skips_are_denied() {
        let cases = [
            case("a", Status::Passed, &["Gather-13"]),
            case("b", Status::Skipped, &["Add"]),
        ];
        let none = Requirements::default();
        assert!(Gate::of(&cases, false, Vec::new(), &none).passed());
        let g = Gate::of(&cases, true, Vec::new(), &none);
        assert_eq!(messages(&g), [("cases", "cases: 1 skipped (--deny-skip)")]);
    }

    #[test]
    fn reasons_come_in_order_cases_expectations_requirements() {
        let mut xpass = case("x", Status::Passed, &["Gather-13"]);
        xpass.expectation = Some(ExpectationNote {
            outcome: ExpectationOutcome::UnexpectedlyPassed,
            entry: "x".into(),
            reason: "r".into(),
            link: None,
            detail: None,
            fails_gate: true,
            line: Some(1),
        });
        let mut xfail = case("y", Status::Failed, &["Gather-13"]);
        xfail.expectation = Some(ExpectationNote {
            outcome: ExpectationOutcome::ExpectedFailure,
            fails_gate: false,
            ..xpass.expectation.clone().unwrap()
        });
        let cases = [
            case("a", Status::Errored, &["GatherND-12"]),
            case("b", Status::Failed, &["Gather-13"]),
            case("c", Status::Failed, &["Gather-13"]),
            case("d", Status::Skipped, &["ScatterND-18"]),
            xpass,
            xfail,
        ];
        let req = Requirements {
            min_cases: Some(6),
            ops: vec![
                op("GatherND", Some(12)),
                op("ScatterND", None),
                op("Gather", Some(11)),
            ],
        };
        let g = Gate::of(&cases, false, vec!["expectations: expired".into()], &req);
        assert_eq!(
            messages(&g),
            [
                ("cases", "cases: 2 failed, 1 errored, 1 passed unexpectedly"),
                ("expectations", "expectations: expired"),
                (
                    "min-cases",
                    "--min-cases 6: only 5 cases ran (skipped cases do not count)"
                ),
                // GatherND-12 ran (errored counts); ScatterND only in a skipped case.
                (
                    "require-op",
                    "--require-op ScatterND: no case ran ScatterND (any version)"
                ),
                (
                    "require-op",
                    "--require-op Gather-11: no case ran Gather-11"
                ),
            ]
        );
        assert!(!g.passed());
        // The last two cases: both ran, both Gather.
        let met = Requirements {
            min_cases: Some(2),
            ops: vec![op("Gather", None)],
        };
        let g = Gate::of(&cases[4..], false, Vec::new(), &met);
        assert_eq!(messages(&g), [("cases", "cases: 1 passed unexpectedly")]);
    }
}
