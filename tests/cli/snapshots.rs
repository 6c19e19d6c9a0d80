//! Snapshots of what people and CI systems read: the three report formats for a small mixed run
//! (one case of each verdict), the `ops` matrix and `run --help`. Stored in `tests/snapshots/`;
//! durations, absolute paths and the tool's version are redacted, so they are the same on every
//! machine and every run.
//!
//! After an intended change: `INSTA_UPDATE=always cargo test --test cli snapshots`, then review
//! the diff of `tests/snapshots/`. CI (`CI=true`) never rewrites them.

use crate::support::{fixtures, run};

/// One case of each verdict.
const MIXED: &str = "^(passing/reduction_within_tolerance|failing/wrong_value|errored/gather_index_out_of_range|skipped/unsupported_op_add)$";

fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path("../snapshots");
    // `[   0.001s]` in the human report.
    s.add_filter(r"\[\s*\d+\.\d+s\]", "[DURATION]");
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
        })
    });
}

#[test]
fn the_junit_report_of_a_mixed_run_is_stable() {
    let r = mixed_run("junit");
    settings().bind(|| insta::assert_snapshot!("junit_report", r.stdout));
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
