//! The JSON report (`--format json`). This file is the only definition of its shape; bump
//! [`SCHEMA_VERSION`] on any incompatible change.

use super::{millis, nanos, Dest, Event, Reporter, RunEnd, ToolInfo};
use crate::verdict::{CaseResult, Counts, DataSetResult, Fault, Gate, OutputResult};
use anyhow::Result;
use serde::Serialize;
use std::collections::BTreeMap;

/// The schema version written as `schema_version`.
pub const SCHEMA_VERSION: u32 = 1;

/// The whole document.
#[derive(Debug, Serialize)]
pub struct Report<'a> {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The tool.
    pub tool: Tool<'a>,
    /// The runtime under test, when one ran the data sets (`--runtime`, `--runtime-cmd`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runtime: Option<JsonRuntime<'a>>,
    /// Counts.
    pub summary: JsonSummary<'a>,
    /// The expectations file's own verdicts, when `--expectations` was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expectations: Option<&'a ExpectationsReport>,
    /// Every case, in path order.
    pub cases: Vec<JsonCase<'a>>,
}

pub use crate::verdict::ExpectationsReport;

/// The runtime under test.
#[derive(Debug, Serialize)]
pub struct JsonRuntime<'a> {
    /// Its name: the `--runtime` spec, or the name its worker gave.
    pub name: &'a str,
    /// The version its worker gave.
    pub version: &'a str,
    /// The command its workers ran.
    pub command: &'a str,
}

/// An expectations entry applied to a case.
#[derive(Debug, Serialize)]
pub struct JsonExpectation<'a> {
    /// `expected-failure`, `unexpectedly-passed`, `different` or `tolerance-only`.
    pub outcome: &'a str,
    /// The entry's case pattern.
    pub entry: &'a str,
    /// The entry's reason.
    pub reason: &'a str,
    /// The entry's link.
    pub link: Option<&'a str>,
    /// How the case differs from the entry.
    pub detail: Option<&'a str>,
    /// Whether this fails the run.
    pub fails_gate: bool,
}

/// `tool`.
#[derive(Debug, Serialize)]
pub struct Tool<'a> {
    /// Name.
    pub name: &'a str,
    /// Version.
    pub version: &'a str,
}

/// `summary`.
#[derive(Debug, Serialize)]
pub struct JsonSummary<'a> {
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
    /// Not run because of `--fail-fast`.
    pub not_run: usize,
    /// Wall time of the run, in milliseconds (rounded down).
    pub duration_ms: u64,
    /// Wall time of the run, in nanoseconds.
    pub duration_ns: u64,
    /// Cases an expectations entry lists as failing that still fail the same way.
    pub expected_failures: usize,
    /// Cases listed as failing that passed (each fails the run).
    pub unexpected_passes: usize,
    /// Cases under an expired expectations entry (each fails the run).
    pub expired: usize,
    /// Cases whose verdict the runtime under test's fault decided, per fault (`crashed`,
    /// `timed-out`, `refused`, `wrote-nothing`, `nondeterministic`); only those that occurred.
    pub faults: BTreeMap<&'static str, usize>,
    /// Counts per operator version (`Gather-13`; a bare op type when unresolved).
    pub by_op: BTreeMap<&'a str, JsonCounts>,
    /// The run's own verdict: what decides the exit status.
    pub gate: JsonGate<'a>,
}

/// `summary.gate`.
#[derive(Debug, Serialize)]
pub struct JsonGate<'a> {
    /// `passed` or `failed`.
    pub status: &'static str,
    /// Why the run fails (empty when it passes).
    pub reasons: Vec<JsonGateReason<'a>>,
}

/// One entry of `summary.gate.reasons`.
#[derive(Debug, Serialize)]
pub struct JsonGateReason<'a> {
    /// `cases`, `expectations`, `min-cases` or `require-op`.
    pub kind: &'static str,
    /// What failed, for people.
    pub message: &'a str,
}

/// The cases of one operator version, each counted once (see [`Counts`]).
#[derive(Debug, Serialize)]
pub struct JsonCounts {
    /// Passed (and not listed as failing).
    pub passed: usize,
    /// Failed, and not an expected failure.
    pub failed: usize,
    /// Errored, and not an expected failure.
    pub errored: usize,
    /// Skipped, and not an expected failure.
    pub skipped: usize,
    /// Expected failures.
    pub xfailed: usize,
    /// Listed as failing, but passed.
    pub xpassed: usize,
    /// Under an expired expectations entry.
    pub expired: usize,
}

impl From<&Counts> for JsonCounts {
    fn from(c: &Counts) -> JsonCounts {
        JsonCounts {
            passed: c.passed,
            failed: c.failed,
            errored: c.errored,
            skipped: c.skipped,
            xfailed: c.xfailed,
            xpassed: c.xpassed,
            expired: c.expired,
        }
    }
}

/// One entry of `cases`.
#[derive(Debug, Serialize)]
pub struct JsonCase<'a> {
    /// Name (path relative to the argument it was found under).
    pub name: &'a str,
    /// Directory.
    pub path: String,
    /// Operators of the graph.
    pub ops: &'a [String],
    /// Opset imports, domain -> version.
    pub opset: &'a BTreeMap<String, i64>,
    /// passed / failed / errored / skipped.
    pub status: &'static str,
    /// The label of the human report: `PASS`, `FAIL`, `ERROR`, `SKIP`, `NEW` (errored only for
    /// want of expected outputs), `XFAIL`, `XPASS` or `EXPIRED`.
    pub label: &'static str,
    /// Why it did not pass.
    pub reason: Option<&'a str>,
    /// What the runtime under test did, where that decided the verdict: `crashed`,
    /// `timed-out`, `refused`, `wrote-nothing` or `nondeterministic`; null otherwise.
    pub fault: Option<&'static str>,
    /// Wall time, in milliseconds (rounded down).
    pub duration_ms: u64,
    /// Wall time, in nanoseconds.
    pub duration_ns: u64,
    /// What the expectations file says of the case (null without one, or when no entry applies).
    pub expectation: Option<JsonExpectation<'a>>,
    /// Where the data comes from, when the case tree says (a PROVENANCE file or a README naming
    /// the ONNX release).
    pub origin: Option<&'a str>,
    /// sha256 of every model and tensor file read.
    pub files: Vec<JsonFile<'a>>,
    /// Data sets.
    pub data_sets: Vec<JsonDataSet<'a>>,
}

/// One file read, with its digest.
#[derive(Debug, Serialize)]
pub struct JsonFile<'a> {
    /// Path relative to the case directory (absolute for `--actual` files).
    pub path: &'a str,
    /// sha256, hex.
    pub sha256: &'a str,
}

/// One entry of `data_sets`.
#[derive(Debug, Serialize)]
pub struct JsonDataSet<'a> {
    /// `test_data_set_N`.
    pub name: &'a str,
    /// Verdict.
    pub status: &'static str,
    /// Why it did not pass.
    pub reason: Option<&'a str>,
    /// What the runtime under test did, as in the case's `fault`.
    pub fault: Option<&'static str>,
    /// Output comparisons.
    pub outputs: Vec<JsonOutput<'a>>,
}

/// One entry of `outputs`.
#[derive(Debug, Serialize)]
pub struct JsonOutput<'a> {
    /// Graph output name.
    pub name: &'a str,
    /// passed / failed / errored (no expected output yet).
    pub status: &'static str,
    /// Why it did not pass.
    pub reason: Option<&'a str>,
    /// Expected dtype.
    pub dtype: &'static str,
    /// Our dtype.
    pub actual_dtype: &'static str,
    /// Expected shape.
    pub expected_shape: Option<&'a [usize]>,
    /// Our shape.
    pub actual_shape: &'a [usize],
    /// "exact" or "tolerant".
    pub comparison: &'static str,
    /// Differing elements.
    pub mismatches: usize,
    /// Largest absolute difference (null for non-numeric types or when not finite).
    pub max_abs_diff: Option<f64>,
    /// Largest relative difference.
    pub max_rel_diff: Option<f64>,
    /// The first differing elements, each with where its correct value comes from.
    pub first_mismatches: &'a [crate::compare::Mismatch],
    /// The known bug class that reproduces the wrong output exactly (`domain-ignored`,
    /// `negative-not-normalized`, `oob-wrapped`, `oob-clamped`, `oob-zero-filled`, `first-write-wins`, `reduction-ignored`,
    /// `axis-ignored`, `batch-dims-ignored`, `accumulation-order`), or null.
    pub diagnosis: Option<&'static str>,
    /// Every known bug class that reproduces the wrong output exactly, most specific first
    /// (`diagnosis` is the first); empty when none does.
    pub diagnoses: Vec<&'static str>,
    /// onnx-idx-check's result in brief (`float [2, 2], 4 values: 1.0, 2.0, 3.0, 4.0`) when the
    /// output has no expected file yet; null otherwise.
    pub computed: Option<&'a str>,
}

/// Builds the document.
pub fn build<'a>(tool: &'a ToolInfo, end: &RunEnd<'a>) -> Report<'a> {
    let summary = end.summary;
    Report {
        schema_version: SCHEMA_VERSION,
        tool: Tool {
            name: tool.name,
            version: tool.version,
        },
        runtime: end.runtime.map(|r| JsonRuntime {
            name: &r.name,
            version: &r.version,
            command: &r.command,
        }),
        summary: JsonSummary {
            total: summary.total,
            passed: summary.passed,
            failed: summary.failed,
            errored: summary.errored,
            skipped: summary.skipped,
            not_run: summary.not_run,
            duration_ms: millis(end.duration),
            duration_ns: nanos(end.duration),
            expected_failures: summary.expected_failures,
            unexpected_passes: summary.unexpected_passes,
            expired: summary.expired,
            faults: summary
                .faults
                .iter()
                .map(|(f, n)| (f.as_str(), *n))
                .collect(),
            by_op: summary
                .by_op
                .iter()
                .map(|(op, c)| (op.as_str(), JsonCounts::from(c)))
                .collect(),
            gate: gate(end.gate),
        },
        expectations: end.expectations,
        cases: end.results.iter().map(case).collect(),
    }
}

fn gate(g: &Gate) -> JsonGate<'_> {
    JsonGate {
        status: if g.passed() { "passed" } else { "failed" },
        reasons: g
            .reasons
            .iter()
            .map(|r| JsonGateReason {
                kind: r.kind.id(),
                message: &r.message,
            })
            .collect(),
    }
}

fn case(c: &CaseResult) -> JsonCase<'_> {
    JsonCase {
        name: &c.name,
        path: c.path.display().to_string(),
        ops: &c.ops,
        opset: &c.opset,
        status: c.status.as_str(),
        label: super::label(c),
        reason: c.reason.as_deref(),
        fault: c.fault.map(Fault::as_str),
        duration_ms: millis(c.duration),
        duration_ns: nanos(c.duration),
        origin: c.origin.as_deref(),
        expectation: c.expectation.as_ref().map(|e| JsonExpectation {
            outcome: e.outcome.as_str(),
            entry: &e.entry,
            reason: &e.reason,
            link: e.link.as_deref(),
            detail: e.detail.as_deref(),
            fails_gate: e.fails_gate,
        }),
        files: c
            .files
            .iter()
            .map(|(path, sha256)| JsonFile { path, sha256 })
            .collect(),
        data_sets: c.data_sets.iter().map(data_set).collect(),
    }
}

fn data_set(d: &DataSetResult) -> JsonDataSet<'_> {
    JsonDataSet {
        name: &d.name,
        status: d.status.as_str(),
        reason: d.reason.as_deref(),
        fault: d.fault.map(Fault::as_str),
        outputs: d.outputs.iter().map(output).collect(),
    }
}

fn output(o: &OutputResult) -> JsonOutput<'_> {
    JsonOutput {
        name: &o.name,
        status: o.status.as_str(),
        reason: o.reason.as_deref(),
        dtype: o.dtype.name(),
        actual_dtype: o.actual_dtype.name(),
        expected_shape: o.expected_shape.as_deref(),
        actual_shape: &o.actual_shape,
        comparison: if o.tolerant { "tolerant" } else { "exact" },
        mismatches: o.mismatches,
        max_abs_diff: o.max_abs_diff,
        max_rel_diff: o.max_rel_diff,
        first_mismatches: &o.first_mismatches,
        diagnosis: o.diagnosis().map(|c| c.id()),
        diagnoses: o.diagnoses.iter().map(|c| c.id()).collect(),
        computed: o.computed.as_deref(),
    }
}

/// The document as pretty-printed JSON with a trailing newline.
pub fn render(tool: &ToolInfo, end: &RunEnd<'_>) -> String {
    let mut s = serde_json::to_string_pretty(&build(tool, end))
        .unwrap_or_else(|e| format!("{{\"error\": \"cannot serialise the report: {e}\"}}"));
    s.push('\n');
    s
}

/// The JSON report as a [`Reporter`]: the document, written when the run ends.
pub struct JsonReporter {
    /// Where it goes.
    pub dest: Dest,
}

impl Reporter for JsonReporter {
    fn report(&mut self, event: &Event<'_>) -> Result<()> {
        match event {
            Event::RunFinished(end) => self.dest.write(&render(&super::TOOL, end)),
            _ => Ok(()),
        }
    }
}
