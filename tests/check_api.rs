//! The library's `check` entry point, called as a runtime's test suite would call it: on the
//! committed test data, on a copy with a broken expected output, with expectations, and with
//! options it must refuse. Needs no cargo feature (`cargo test --no-default-features` runs it);
//! that its JSON is the command line's is tested beside the binary (tests/cli/check_api.rs).

mod common;

use onnx_idx_check::check::Shard;
use onnx_idx_check::report::Event;
use onnx_idx_check::verdict::{ExpectationOutcome, Status};
use onnx_idx_check::{check, check_with, CheckError, CheckOptions, CheckReport};
use std::path::{Path, PathBuf};

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata")
}

/// The committed test data: 29 of ONNX's node tests and 65 spec examples, all passing.
const TESTDATA_CASES: usize = 107;

fn names_with(report: &CheckReport, status: Status) -> Vec<&str> {
    report
        .cases
        .iter()
        .filter(|c| c.status == status)
        .map(|c| c.name.as_str())
        .collect()
}

/// A tree of two Gather cases from ONNX's node tests, `test_gather_0` with its expected output
/// broken: the output is a float tensor [3, 4, 3, 2] whose `raw_data` ends the file, so flipping
/// the top bit of the last byte negates the last element, at [2, 3, 2, 1].
fn tree_with_a_broken_expected_output() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    for case in ["test_gather_0", "test_gather_1"] {
        common::copy_tree(
            &testdata().join("onnx-node").join(case),
            &tmp.path().join(case),
        );
    }
    let output = tmp.path().join("test_gather_0/test_data_set_0/output_0.pb");
    let mut bytes = std::fs::read(&output).unwrap();
    *bytes.last_mut().unwrap() ^= 0x80;
    std::fs::write(&output, bytes).unwrap();
    tmp
}

#[test]
fn the_committed_test_data_passes_107_of_107() {
    let report = check(&[testdata()], &CheckOptions::default()).unwrap();
    assert_eq!(names_with(&report, Status::Failed), Vec::<&str>::new());
    assert_eq!(report.cases.len(), TESTDATA_CASES);
    assert_eq!(
        (
            report.summary.total,
            report.summary.passed,
            report.summary.not_run
        ),
        (TESTDATA_CASES, TESTDATA_CASES, 0)
    );
    assert!(report.passed(), "{:?}", report.gate);
    assert!(report.warnings.is_empty());
    // Digests are on by default, as for `run --format json`.
    assert!(report.cases.iter().all(|c| !c.files.is_empty()));
    assert_eq!(
        report.cases[0].origin.as_deref(),
        Some("ONNX 1.23.2"),
        "{}",
        report.cases[0].name
    );
}

#[test]
fn a_broken_expected_output_fails_its_case_and_the_run() {
    let tmp = tree_with_a_broken_expected_output();
    let report = check(&[tmp.path()], &CheckOptions::default()).unwrap();
    assert!(!report.passed());
    assert_eq!(names_with(&report, Status::Failed), ["test_gather_0"]);
    assert_eq!(names_with(&report, Status::Passed), ["test_gather_1"]);
    let reasons: Vec<&str> = report
        .gate
        .reasons
        .iter()
        .map(|r| r.message.as_str())
        .collect();
    assert_eq!(reasons, ["cases: 1 failed"]);
    let output = &report.cases[0].data_sets[0].outputs[0];
    assert_eq!(output.mismatches, 1);
    assert_eq!(output.first_mismatches[0].index, [2, 3, 2, 1]);
    // The JSON names it too.
    let doc: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
    assert_eq!(doc["summary"]["gate"]["status"], "failed");
    assert_eq!(doc["cases"][0]["name"], "test_gather_0");
    assert_eq!(doc["cases"][0]["status"], "failed");
}

#[test]
fn an_expectations_file_turns_the_listed_failure_into_an_expected_one() {
    let tmp = tree_with_a_broken_expected_output();
    let file = tmp.path().join("known.toml");
    std::fs::write(
        &file,
        "[[expect]]\ncase = \"test_gather_0\"\nstatus = \"failed\"\nreason = \"the last element's sign\"\n\
         [[expect]]\ncase = \"test_gone\"\nstatus = \"failed\"\nreason = \"renamed\"\n",
    )
    .unwrap();
    let options = CheckOptions::default().expectations(&file);
    let report = check(&[tmp.path()], &options).unwrap();
    assert!(report.passed(), "{:?}", report.gate);
    assert_eq!(report.summary.expected_failures, 1);
    let note = report.cases[0].expectation.as_ref().unwrap();
    assert_eq!(
        (note.outcome, note.fails_gate),
        (ExpectationOutcome::ExpectedFailure, false)
    );
    let exp = report.expectations.as_ref().unwrap();
    assert_eq!(exp.unmatched, ["test_gone"]);
    assert!(!exp.updated);
    // Strict: the entry that matches nothing fails the run.
    let strict = check(&[tmp.path()], &options.clone().strict_expectations(true)).unwrap();
    let reasons: Vec<&str> = strict
        .gate
        .reasons
        .iter()
        .map(|r| r.message.as_str())
        .collect();
    assert_eq!(
        reasons,
        ["expectations: the entry for 'test_gone' matches no case (--strict-expectations)"]
    );
    // Updating rewrites the file to the results: the failure's signature is recorded.
    let updated = check(&[tmp.path()], &options.update_expectations(true)).unwrap();
    assert!(updated.expectations.as_ref().unwrap().updated);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains("mismatches = 1\nfirst_mismatch = [2, 3, 2, 1]\n"),
        "{text}"
    );
}

#[test]
fn requirements_and_selection_shape_the_gate() {
    let onnx_node = testdata().join("onnx-node");
    let options = CheckOptions::default()
        .filter("^test_gather_elements")
        .exclude("negative")
        .min_cases(3)
        .require_op("GatherElements-13")
        .require_op("ScatterND");
    let report = check(&[&onnx_node], &options).unwrap();
    assert_eq!(report.summary.total, 2);
    let kinds: Vec<&str> = report.gate.reasons.iter().map(|r| r.kind.id()).collect();
    assert_eq!(kinds, ["min-cases", "require-op"]);
    assert!(!report.passed());
    // Two shards partition the cases.
    let half = |k| {
        let report = check(
            &[&onnx_node],
            &CheckOptions::default().shard(Shard::new(k, 2).unwrap()),
        );
        report.unwrap().summary.total
    };
    let all = check(&[&onnx_node], &CheckOptions::default()).unwrap();
    assert_eq!(half(1) + half(2), all.summary.total);
}

#[test]
fn events_arrive_in_order_and_agree_with_the_report() {
    let mut seen = Vec::new();
    let report = check_with(
        &[testdata().join("onnx-node")],
        &CheckOptions::default().filter("^test_scatternd").jobs(2),
        |event| {
            seen.push(match event {
                Event::RunStarted { cases } => format!("started {cases}"),
                Event::CaseFinished(c) => c.name.clone(),
                Event::RunFinished(end) => format!("finished {}", end.summary.total),
            })
        },
    )
    .unwrap();
    let mut expected = vec![format!("started {}", report.cases.len())];
    expected.extend(report.cases.iter().map(|c| c.name.clone()));
    expected.push(format!("finished {}", report.cases.len()));
    assert_eq!(seen, expected);
    assert!(report.cases.len() >= 3, "{seen:?}");
}

#[test]
fn fail_fast_leaves_cases_out_and_deny_skip_gates_skips() {
    let tmp = tree_with_a_broken_expected_output();
    let report = check(
        &[tmp.path()],
        &CheckOptions::default().jobs(1).fail_fast(true),
    )
    .unwrap();
    assert_eq!((report.cases.len(), report.summary.not_run), (1, 1));
    // A graph of an operator the tool does not implement is skipped.
    let skipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/skipped");
    let options = CheckOptions::default().filter("^unsupported_op_add$");
    assert!(check(&[&skipped], &options).unwrap().passed());
    assert!(!check(&[&skipped], &options.deny_skip(true))
        .unwrap()
        .passed());
}

/// The variant and message of an option `check` refuses on `testdata/`.
fn refused(options: CheckOptions) -> CheckError {
    match check(&[testdata()], &options) {
        Ok(report) => panic!("accepted: {} cases", report.cases.len()),
        Err(e) => e,
    }
}

fn invalid_option(e: &CheckError) -> (&'static str, &str) {
    match e {
        CheckError::InvalidOption { option, message } => (option, message),
        other => panic!("not an invalid option: {other:?}"),
    }
}

#[test]
fn bad_options_are_refused_with_the_command_lines_words() {
    let e = refused(CheckOptions::default().filter("("));
    let (option, message) = invalid_option(&e);
    assert_eq!(option, "filter");
    assert!(
        message.starts_with("--filter '(': regex parse error"),
        "{message}"
    );
    assert_eq!(
        invalid_option(&refused(CheckOptions::default().exclude("[z-a]"))).0,
        "exclude"
    );
    assert_eq!(
        invalid_option(&refused(CheckOptions::default().jobs(0))),
        ("jobs", "--jobs must be at least 1")
    );
    let e = refused(CheckOptions::default().jobs(100_000));
    assert!(
        invalid_option(&e).1.starts_with("--jobs 100000: at most "),
        "{e}"
    );
    let e = refused(CheckOptions::default().require_op("Gathr"));
    let (option, message) = invalid_option(&e);
    assert_eq!(option, "require-op");
    assert!(
        message
            .starts_with("--require-op 'Gathr': no such operator in the registry (known: Gather,"),
        "{message}"
    );
    let e = refused(CheckOptions::default().require_op("Gather-12"));
    assert!(
        invalid_option(&e).1.contains("Gather has no version 12"),
        "{e}"
    );
    assert_eq!(
        invalid_option(&refused(CheckOptions::default().tolerance(-1.0, 0.0))),
        ("rtol", "--rtol must be a finite number >= 0, got -1")
    );
    assert_eq!(
        invalid_option(&refused(
            CheckOptions::default().tolerance(0.0, f64::INFINITY)
        )),
        ("atol", "--atol must be a finite number >= 0, got inf")
    );
    let e = refused(CheckOptions::default().actual("/nonexistent/onnx-idx-check-actual"));
    assert_eq!(
        invalid_option(&e),
        (
            "actual",
            "--actual /nonexistent/onnx-idx-check-actual: does not exist (did the runtime write anything?)"
        )
    );
    let e = refused(
        CheckOptions::default()
            .actual(testdata())
            .pending("pending"),
    );
    assert_eq!(invalid_option(&e).0, "pending");
    let e = refused(CheckOptions::default().update_expectations(true));
    assert_eq!(invalid_option(&e).0, "update-expectations");
    let e = "2/1".parse::<Shard>().unwrap_err();
    assert_eq!(
        invalid_option(&e),
        (
            "shard",
            "--shard '2/1': expected K/N with 1 <= K <= N, e.g. 2/4"
        )
    );
}

#[test]
fn paths_without_cases_and_unreadable_files_are_their_own_errors() {
    let empty = tempfile::tempdir().unwrap();
    let e = check(&[empty.path()], &CheckOptions::default()).unwrap_err();
    assert!(matches!(e, CheckError::NoCase { found: 0, .. }), "{e:?}");
    assert_eq!(
        e.to_string(),
        format!(
            "no case found under {}: no directory with a model.onnx or model.xml",
            empty.path().display()
        )
    );
    let e = refused(CheckOptions::default().filter("^no-such-case$"));
    assert!(
        matches!(
            e,
            CheckError::NoCase {
                found: TESTDATA_CASES,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e
        .to_string()
        .ends_with(": 107 cases found, none selected by --filter/--exclude"));

    let e = check(
        &["/nonexistent/onnx-idx-check-tests"],
        &CheckOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(e, CheckError::Path(_)), "{e:?}");
    assert!(e
        .to_string()
        .starts_with("cannot read /nonexistent/onnx-idx-check-tests: "));

    let missing = empty.path().join("missing.toml");
    let e = refused(CheckOptions::default().expectations(&missing));
    assert!(matches!(e, CheckError::Expectations(_)), "{e:?}");
    assert!(
        e.to_string().starts_with(&missing.display().to_string()),
        "{e}"
    );
    // The I/O error underneath is its source.
    let io = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<std::io::Error>());
    assert_eq!(io.map(|e| e.kind()), Some(std::io::ErrorKind::NotFound));
    let invalid = empty.path().join("invalid.toml");
    std::fs::write(&invalid, "[[expect]]\ncase = 3\n").unwrap();
    let e = refused(CheckOptions::default().expectations(&invalid));
    assert!(e.to_string().contains("entry 1 (line 2): `case`"), "{e}");
}

#[test]
fn check_reports_own_their_data() {
    // A report outlives its options and paths, and moves across threads.
    let report = {
        let options = CheckOptions::default().filter("^test_gather_0$");
        check(&[testdata().join("onnx-node")], &options).unwrap()
    };
    let json = std::thread::spawn(move || report.to_json()).join().unwrap();
    assert!(json.ends_with("}\n"));
}
