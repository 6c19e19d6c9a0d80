//! Snapshots of what people and CI systems read: the four report formats for a small mixed run
//! (one case of each verdict), the `ops` matrix and `run --help`; the reports of an
//! expectations run (XFAIL/XPASS lines, the expectations section, the JSON `expectation` and
//! `expectations` parts, JUnit), the failure details with diagnoses and provenance, a `--actual`
//! run and the coverage table and JSON document. Stored in `tests/snapshots/`;
//! durations, absolute paths and the tool's version are redacted, so they are the same on every
//! machine and every run.
//!
//! After an intended change: `INSTA_UPDATE=always cargo test --test cli snapshots`, then review
//! the diff of `tests/snapshots/`. CI (`CI=true`) never rewrites them.

use crate::support::{fixtures, run};

/// One case of each verdict.
pub const MIXED: &str = "^(passing/reduction_within_tolerance|failing/wrong_value|errored/gather_index_out_of_range|skipped/unsupported_op_add)$";

pub fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path("../snapshots");
    // `[  41.2µs]` in the human report.
    s.add_filter(r"\[\s*\d+(\.\d+)?(ns|µs|ms|s)\]", "[DURATION]");
    // time="0.001" in JUnit.
    s.add_filter(r#"time="[0-9.]+""#, r#"time="[DURATION]""#);
    s.add_filter(
        r#"name="tool.version" value="[^"]*""#,
        r#"name="tool.version" value="[VERSION]""#,
    );
    s.add_filter(&regex::escape(fixtures().to_str().unwrap()), "[FIXTURES]");
    s
}

fn mixed_run(format: &str) -> crate::support::Run {
    let r = run([
        "run",
        fixtures().to_str().unwrap(),
        "--filter",
        MIXED,
        "--format",
        format,
        "--color",
        "never",
        "--jobs",
        "2",
    ]);
    r.expect_code(1);
    r
}

#[test]
fn the_human_report_of_a_mixed_run_is_stable() {
    let r = mixed_run("human");
    settings().bind(|| insta::assert_snapshot!("human_report", r.stdout));
}

#[test]
fn the_json_report_of_a_mixed_run_is_stable() {
    let report = mixed_run("json").json();
    settings().bind(|| {
        insta::assert_json_snapshot!("json_report", report, {
            ".tool.version" => "[VERSION]",
            ".summary.duration_ms" => "[DURATION]",
            ".cases[].duration_ms" => "[DURATION]",
            ".summary.duration_ns" => "[DURATION]",
            ".cases[].duration_ns" => "[DURATION]",
        })
    });
}

#[test]
fn the_junit_report_of_a_mixed_run_is_stable() {
    let r = mixed_run("junit");
    settings().bind(|| insta::assert_snapshot!("junit_report", r.stdout));
}

#[test]
fn the_markdown_report_of_a_mixed_run_is_stable() {
    let r = mixed_run("markdown");
    settings().bind(|| insta::assert_snapshot!("markdown_report", r.stdout));
}

#[test]
fn the_support_matrix_is_stable() {
    let r = run(["ops"]);
    r.expect_code(0);
    settings().bind(|| insta::assert_snapshot!("ops", r.stdout));
}

#[test]
fn the_help_of_run_is_stable() {
    let r = run(["run", "--help"]);
    r.expect_code(0);
    settings().bind(|| insta::assert_snapshot!("run_help", r.stdout));
}

/// The ratchet scenario of expectations.rs: XFAIL, XPASS, fails differently, tolerance-only,
/// a glob with an opset range, new failures and an entry that matches no case.
fn expectations_run(format: &str) -> crate::support::Run {
    let r = crate::expectations::run_with(
        crate::expectations::EVERYTHING,
        &crate::expectations::file("ratchet.toml"),
        &["--format", format, "--jobs", "2"],
    );
    r.expect_code(1);
    r
}

#[test]
fn the_human_report_of_an_expectations_run_is_stable() {
    let r = expectations_run("human");
    settings().bind(|| insta::assert_snapshot!("expectations_human_report", r.stdout));
}

#[test]
fn the_expectation_parts_of_the_json_report_are_stable() {
    let report = expectations_run("json").json();
    let parts = serde_json::json!({
        "summary": {
            "expected_failures": report["summary"]["expected_failures"],
            "unexpected_passes": report["summary"]["unexpected_passes"],
        },
        "expectations": report["expectations"],
        "cases": report["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| serde_json::json!({
                "name": c["name"],
                "status": c["status"],
                "expectation": c["expectation"],
            }))
            .collect::<Vec<_>>(),
    });
    settings().bind(|| insta::assert_json_snapshot!("expectations_json", parts));
}

#[test]
fn the_junit_report_of_an_expectations_run_is_stable() {
    let r = expectations_run("junit");
    settings().bind(|| insta::assert_snapshot!("expectations_junit", r.stdout));
}

#[test]
fn the_failure_details_with_diagnoses_and_provenance_are_stable() {
    let r = run([
        "run",
        fixtures().to_str().unwrap(),
        "--filter",
        "^failing/diagnosed_",
        "--color",
        "never",
        "--jobs",
        "2",
    ]);
    r.expect_code(1);
    settings().bind(|| insta::assert_snapshot!("diagnosis_human_report", r.stdout));
}

#[test]
fn the_human_report_of_an_actual_run_is_stable() {
    let actual = fixtures().join(crate::support::ACTUAL);
    let r = run([
        "run",
        actual.join("cases").to_str().unwrap(),
        "--actual",
        actual.join("outputs").to_str().unwrap(),
        "--color",
        "never",
        "--jobs",
        "2",
    ]);
    r.expect_code(1);
    settings().bind(|| insta::assert_snapshot!("actual_human_report", r.stdout));
}

#[test]
fn the_coverage_table_is_stable() {
    let r = crate::coverage::coverage("human");
    settings().bind(|| insta::assert_snapshot!("coverage_human", r.stdout));
}

#[test]
fn the_coverage_json_is_stable() {
    let r = crate::coverage::coverage("json");
    settings().bind(|| insta::assert_snapshot!("coverage_json", r.stdout));
}
