//! Counting: the verdicts of a run, in total and per operator version.

use super::{CaseResult, ExpectationOutcome, Fault, Status};
use std::collections::BTreeMap;

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
