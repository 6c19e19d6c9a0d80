//! The library's `check` and the command line's `run` are one pipeline: for the same tree and
//! options, `CheckReport::to_json()` is the document `run --format json` writes, durations aside.

use crate::support::{fixtures, root, run};
use onnx_idx_check::{check, CheckOptions};
use std::path::Path;

/// Durations differ between runs; everything else must not.
fn without_durations(s: &str) -> String {
    let re = regex::Regex::new(r#""duration_(ms|ns)": \d+"#).unwrap();
    re.replace_all(s, r#""duration_$1": "[D]""#).into_owned()
}

/// `run PATH --format json ARGS` and `check(PATH, options)` write the same document, and `run`'s
/// exit status is the report's gate.
fn same_document(path: &Path, args: &[&str], options: &CheckOptions) {
    let mut argv = vec!["run", path.to_str().unwrap(), "--format", "json"];
    argv.extend(args);
    let cli = run(&argv);
    let report = check(&[path], options).unwrap();
    assert_eq!(
        cli.code,
        if report.passed() { 0 } else { 1 },
        "{}",
        cli.stderr
    );
    assert_eq!(
        without_durations(&report.to_json()),
        without_durations(&cli.stdout)
    );
}

#[test]
fn check_writes_runs_json_for_the_committed_test_data() {
    same_document(&root().join("testdata"), &[], &CheckOptions::default());
}

#[test]
fn check_writes_runs_json_for_every_verdict() {
    let mixed = crate::snapshots::MIXED;
    same_document(
        &fixtures(),
        &["--filter", mixed, "--jobs", "2"],
        &CheckOptions::default().filter(mixed).jobs(2),
    );
}

#[test]
fn check_writes_runs_json_with_expectations_and_requirements() {
    let file = crate::expectations::file("ratchet.toml");
    let everything = crate::expectations::EVERYTHING;
    same_document(
        &fixtures(),
        &[
            "--filter",
            everything,
            "--expectations",
            file.to_str().unwrap(),
            "--strict-expectations",
            "--min-cases",
            "100",
            "--require-op",
            "GatherND-12",
            "--tolerant",
            "--rtol",
            "0.5",
        ],
        &CheckOptions::default()
            .filter(everything)
            .expectations(&file)
            .strict_expectations(true)
            .min_cases(100)
            .require_op("GatherND-12")
            .tolerant()
            .tolerance(0.5, 1e-7),
    );
}
