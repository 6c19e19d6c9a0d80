//! The JUnit XML report (`--format junit`): one test suite, one test case per ONNX case;
//! failed cases are `<failure>`, errored ones `<error>`, skipped ones `<skipped>`, each with its
//! reason as the message.
//!
//! It keeps to the strict schema CI servers validate with (Jenkins xunit's `junit-10.xsd`): a
//! case's provenance (its origin and the sha256 of every file judged) goes in its
//! `<system-out>`, not in per-case `<properties>`, and `<testsuites>` carries no `skipped`
//! count (the `<testsuite>` does).

use anyhow::Result;
use onnx_idx_check::report::{counted, Dest, Event, Reporter, RunEnd, ToolInfo};
use onnx_idx_check::verdict::{CaseResult, ExpectationOutcome, GateKind, Status};
use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};
use std::fmt::Write as _;

/// The classname of the test cases that stand for what fails the gate with no case of its own
/// (requirements, `--deny-skip`, the expectations file itself).
pub const GATE_CLASSNAME: &str = "onnx-idx-check.gate";

/// Renders the report as XML. Whatever fails the gate without a case of its own to show it is
/// one more test case, failed, in the class [`GATE_CLASSNAME`]: a requirement the run did not
/// meet (`--min-cases`, `--require-op`), the skipped cases under `--deny-skip`, and each failure
/// of the expectations file itself (an expired entry that matches no case, an unmatched entry
/// under `--strict-expectations`).
pub fn render(tool: &ToolInfo, end: &RunEnd<'_>) -> String {
    let (cases, duration) = (end.results, end.duration);
    let mut report = Report::new(tool.name);
    report.set_time(duration);
    let mut suite = TestSuite::new(tool.name);
    suite.set_time(duration);
    suite.add_property(Property::new("tool.version", tool.version));
    for c in cases {
        let outcome = c.expectation.as_ref().map(|e| e.outcome);
        // Expected failures are reported as skipped (they do not fail the gate); unexpected
        // passes as failures (they do).
        let mut status = match (outcome, c.status) {
            (Some(ExpectationOutcome::ExpectedFailure), _) => TestCaseStatus::skipped(),
            // Whatever fails the gate is a failure in every format: an expired entry too.
            (Some(ExpectationOutcome::UnexpectedlyPassed | ExpectationOutcome::Expired), _) => {
                TestCaseStatus::non_success(NonSuccessKind::Failure)
            }
            (_, Status::Passed) => TestCaseStatus::success(),
            (_, Status::Failed) => TestCaseStatus::non_success(NonSuccessKind::Failure),
            (_, Status::Errored) => TestCaseStatus::non_success(NonSuccessKind::Error),
            (_, Status::Skipped) => TestCaseStatus::skipped(),
        };
        let expectation = c.expectation.as_ref().map(|e| match e.outcome {
            ExpectationOutcome::ExpectedFailure => format!("expected failure ({}): ", e.reason),
            ExpectationOutcome::UnexpectedlyPassed => {
                format!("unexpectedly passed: listed as failing ({}); ", e.reason)
            }
            ExpectationOutcome::Different => format!(
                "fails differently than expected: {}; ",
                e.detail.as_deref().unwrap_or("")
            ),
            ExpectationOutcome::Expired => format!(
                "expectation expired ({}): {}; ",
                e.reason,
                e.detail.as_deref().unwrap_or("")
            ),
            ExpectationOutcome::ToleranceOnly => String::new(),
        });
        if matches!(
            outcome,
            Some(ExpectationOutcome::UnexpectedlyPassed | ExpectationOutcome::Expired)
        ) {
            status.set_message(
                expectation
                    .clone()
                    .unwrap_or_default()
                    .trim_end_matches("; ")
                    .to_string(),
            );
            status.set_type(outcome.map_or("", ExpectationOutcome::as_str));
        }
        if let Some(reason) = &c.reason {
            status.set_message(format!("{}{reason}", expectation.unwrap_or_default()));
            status.set_type(match (outcome, c.fault) {
                (Some(ExpectationOutcome::Expired), _) => "expired",
                // The runtime's fault: `crashed`, `timed-out`, ...
                (_, Some(f)) => f.as_str(),
                _ => c.status.as_str(),
            });
            let details = details(c);
            if !details.is_empty() {
                status.set_description(details);
            }
        }
        let mut tc = TestCase::new(c.name.as_str(), status);
        tc.set_classname(classname(&c.name));
        tc.set_time(c.duration);
        // Provenance: where the data comes from and exactly which bytes were judged, the
        // digests in `sha256sum`'s format.
        let mut out = String::new();
        if let Some(origin) = &c.origin {
            let _ = writeln!(out, "origin: {origin}");
        }
        for (path, sha) in &c.files {
            let _ = writeln!(out, "{sha}  {path}");
        }
        if !out.is_empty() {
            tc.set_system_out(out);
        }
        suite.add_test_case(tc);
    }
    let mut gate_case = |name: &str, kind: &str, message: String| {
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
        status.set_message(message);
        status.set_type(kind);
        let mut tc = TestCase::new(name, status);
        tc.set_classname(GATE_CLASSNAME);
        suite.add_test_case(tc);
    };
    let denied = end.gate.skipped_denied(cases);
    if !denied.is_empty() {
        // The first few by name; each has its own <skipped> test case.
        let mut names: Vec<&str> = denied.iter().take(10).map(|c| c.name.as_str()).collect();
        let more = format!("and {} more", denied.len().saturating_sub(10));
        if denied.len() > 10 {
            names.push(&more);
        }
        gate_case(
            "--deny-skip",
            "deny-skip",
            format!(
                "--deny-skip: {} skipped, and skipped cases fail the run: {}",
                counted(denied.len(), "case was", "cases were"),
                names.join(", ")
            ),
        );
    }
    for r in &end.gate.reasons {
        match r.kind {
            // Named by the entry's problem (`the entry for 'x/*' matches no case`), unique per
            // run.
            GateKind::Expectations => gate_case(
                r.message
                    .strip_prefix("expectations: ")
                    .unwrap_or(&r.message),
                r.kind.id(),
                r.message.clone(),
            ),
            // Named by the option and its value (`--require-op GatherND-12`), unique per run.
            GateKind::MinCases | GateKind::RequireOp => gate_case(
                r.message
                    .split_once(": ")
                    .map_or(r.kind.id(), |(rule, _)| rule),
                r.kind.id(),
                r.message.clone(),
            ),
            GateKind::Cases => {}
        }
    }
    report.add_test_suite(suite);
    let mut xml = report
        .to_string()
        .unwrap_or_else(|e| format!("<!-- cannot serialise the JUnit report: {e} -->"));
    if !xml.ends_with('\n') {
        xml.push('\n');
    }
    strict_testsuites(xml)
}

/// Drops the `skipped` attribute that quick-junit writes on `<testsuites>`, which the strict
/// schema does not define there (the suite's own `skipped` stays).
fn strict_testsuites(mut xml: String) -> String {
    let Some(start) = xml.find("<testsuites") else {
        return xml;
    };
    let Some(len) = xml[start..].find('>') else {
        return xml;
    };
    let tag = &xml[start..start + len];
    if let Some(at) = tag.find(" skipped=\"") {
        let from = start + at;
        if let Some(close) = xml[from + " skipped=\"".len()..].find('"') {
            let to = from + " skipped=\"".len() + close + 1;
            xml.replace_range(from..to, "");
        }
    }
    xml
}

/// The case's parent path, so CI tools group cases by directory.
fn classname(name: &str) -> String {
    match name.rsplit_once('/') {
        Some((parent, _)) => parent.replace('/', "."),
        None => "onnx-idx-check".to_string(),
    }
}

/// Every non-passing data set and output, one per line.
fn details(c: &CaseResult) -> String {
    let mut lines = Vec::new();
    for ds in &c.data_sets {
        if let Some(r) = &ds.reason {
            lines.push(format!("{}: {r}", ds.name));
        }
        for o in ds.outputs.iter().filter(|o| o.status != Status::Passed) {
            if let Some(c) = o.diagnosis() {
                lines.push(format!(
                    "  diagnosis: {} ({}){}",
                    c.sentence(),
                    c.id(),
                    onnx_idx_check::report::text::also_reproduced_by(&o.diagnoses[1..])
                ));
            }
            for m in &o.first_mismatches {
                let idx: Vec<String> = m.index.iter().map(|i| i.to_string()).collect();
                let from = m
                    .source
                    .as_ref()
                    .map_or(String::new(), |s| format!(" (correct value from {s})"));
                lines.push(format!(
                    "  {}[{}]: expected {}, got {}{from}",
                    o.name,
                    idx.join(","),
                    m.expected,
                    m.actual
                ));
            }
        }
    }
    lines.join("\n")
}

/// The JUnit report as a [`Reporter`]: the document, written when the run ends.
pub struct JunitReporter {
    /// Where it goes.
    pub dest: Dest,
}

impl Reporter for JunitReporter {
    fn report(&mut self, event: &Event<'_>) -> Result<()> {
        match event {
            Event::RunFinished(end) => self.dest.write(&render(&onnx_idx_check::report::TOOL, end)),
            _ => Ok(()),
        }
    }
}
