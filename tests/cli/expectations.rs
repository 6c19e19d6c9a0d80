//! `run --expectations FILE`: known failures with ratchet semantics, over the fixtures of
//! `tests/fixtures/` and the expectations files of `tests/fixtures/expectations/` (see the
//! comment above each entry there).

use crate::support::{blocks, case, cases, count, fixtures, run, Run, EXPECTATIONS};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// `tests/fixtures/expectations/<name>`.
pub fn file(name: &str) -> PathBuf {
    fixtures().join(EXPECTATIONS).join(name)
}

/// The cases whose ratchet.toml entries hold: every one ends as listed, or passes under a
/// tolerance-only entry, or has no entry and passes.
pub const AS_LISTED: &str = "^(failing/(wrong_value|gather_grad_wrong_value|gather_elements_grad_wrong_value|reduction_beyond_tolerance)|errored/(gather_negative_index_opset1|scatter_negative_index_opset10)|passing/reduction_within_tolerance)$";

/// Every case ratchet.toml names, plus one failure it does not list (failing/wrong_shape) and
/// one errored case its glob matches by name but not by opset (errored/reduction_attribute_opset13,
/// at ai.onnx 13).
pub const EVERYTHING: &str = "^(failing/(wrong_value|nan_expected|reduction_beyond_tolerance|wrong_shape|gather_grad_wrong_value|gather_elements_grad_wrong_value)|passing/nan_payloads_are_equal|errored/(gather_index_out_of_range|gather_negative_index_opset1|scatter_negative_index_opset10|reduction_attribute_opset13))$";

/// `run tests/fixtures --filter FILTER --expectations FILE --color never <extra>`.
pub fn run_with(filter: &str, expectations: &Path, extra: &[&str]) -> Run {
    let mut args = vec![
        "run".to_string(),
        fixtures().display().to_string(),
        "--filter".into(),
        filter.into(),
        "--expectations".into(),
        expectations.display().to_string(),
        "--color".into(),
        "never".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    run(args)
}

fn json_with(filter: &str, expectations: &Path, extra: &[&str]) -> (i32, Value) {
    let mut extra = extra.to_vec();
    extra.extend(["--format", "json"]);
    let r = run_with(filter, expectations, &extra);
    let report = r.json();
    (r.code, report)
}

fn expectation<'a>(report: &'a Value, name: &str) -> &'a Value {
    &case(report, name)["expectation"]
}

#[test]
fn cases_that_end_as_listed_do_not_fail_the_run() {
    let ratchet = file("ratchet.toml");
    let (code, report) = json_with(AS_LISTED, &ratchet, &[]);
    assert_eq!(code, 0, "{report:#}");
    // The verdicts stand; the expectations only judge them.
    assert_eq!(
        (
            count(&report, "total"),
            count(&report, "passed"),
            count(&report, "failed"),
            count(&report, "errored")
        ),
        (7, 2, 3, 2)
    );
    assert_eq!(count(&report, "expected_failures"), 5);
    assert_eq!(count(&report, "unexpected_passes"), 0);
    assert_eq!(case(&report, "failing/wrong_value")["status"], "failed");
    assert_eq!(
        *expectation(&report, "failing/wrong_value"),
        json!({
            "outcome": "expected-failure",
            "entry": "failing/wrong_value",
            "reason": "runtime#1: Gather copies the wrong row",
            "link": "https://example.com/runtime/issues/1",
            "detail": null,
            "fails_gate": false
        })
    );
    assert_eq!(
        *expectation(&report, "passing/reduction_within_tolerance"),
        Value::Null
    );
    assert_eq!(
        report["expectations"],
        json!({
            "file": ratchet.display().to_string(),
            "updated": false,
            "written": null,
            "expired": [],
            // Entries for cases that --filter left out are not unmatched.
            "unmatched": ["failing/renamed_long_ago"]
        })
    );
    // People see XFAIL with the reason and link, no rerun command, and warnings.
    let r = run_with(AS_LISTED, &ratchet, &[]);
    r.expect_code(0);
    let out = &r.stdout;
    assert!(
        out.lines()
            .any(|l| l.starts_with("  XFAIL [") && l.ends_with("] failing/wrong_value")),
        "{out}"
    );
    assert!(
        out.contains(
            "expected: runtime#1: Gather copies the wrong row <https://example.com/runtime/issues/1>"
        ),
        "{out}"
    );
    // Expected failures need no rerun command under their status line.
    for (name, b) in blocks(out) {
        if b.label == "XFAIL" {
            assert!(
                !b.lines.iter().any(|l| l.starts_with("rerun:")),
                "{name}: {b:?}"
            );
        }
    }
    assert!(
        out.contains(&format!(
            "expectations warning: the entry for 'failing/renamed_long_ago' in {} matches no case",
            ratchet.display()
        )),
        "{out}"
    );
    assert!(
        // Each case counted once: the five expected failures are not failures too.
        out.contains("7 cases: 2 passed, 5 xfailed"),
        "{out}"
    );
}

#[test]
fn strict_expectations_fail_the_run_on_entries_that_match_no_case() {
    let ratchet = file("ratchet.toml");
    let r = run_with(AS_LISTED, &ratchet, &["--strict-expectations"]);
    r.expect_code(1);
    assert!(
        r.stdout.contains(&format!(
            "expectations error: the entry for 'failing/renamed_long_ago' in {} matches no case",
            ratchet.display()
        )),
        "{}",
        r.stdout
    );
    // With a machine format on stdout, the gate's reasons go to stderr.
    let r = run_with(
        AS_LISTED,
        &ratchet,
        &["--strict-expectations", "--format", "json"],
    );
    r.expect_code(1);
    assert!(
        r.stderr.contains(
            "expectations: the entry for 'failing/renamed_long_ago' matches no case (--strict-expectations)"
        ),
        "{}",
        r.stderr
    );
    assert_eq!(
        r.json()["expectations"]["unmatched"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn a_listed_case_that_passes_fails_the_run() {
    let (code, report) = json_with(
        "^passing/nan_payloads_are_equal$",
        &file("ratchet.toml"),
        &[],
    );
    assert_eq!(code, 1);
    assert_eq!(
        case(&report, "passing/nan_payloads_are_equal")["status"],
        "passed"
    );
    assert_eq!(count(&report, "unexpected_passes"), 1);
    assert_eq!(count(&report, "expected_failures"), 0);
    assert_eq!(
        *expectation(&report, "passing/nan_payloads_are_equal"),
        json!({
            "outcome": "unexpectedly-passed",
            "entry": "passing/nan_payloads_are_equal",
            "reason": "runtime#2: NaN payloads differ",
            "link": null,
            "detail": null,
            "fails_gate": true
        })
    );
    let r = run_with(
        "^passing/nan_payloads_are_equal$",
        &file("ratchet.toml"),
        &[],
    );
    r.expect_code(1);
    assert!(
        r.stdout.contains(
            "unexpectedly passed: the expectations list 'passing/nan_payloads_are_equal' as \
             failing (runtime#2: NaN payloads differ); remove the entry"
        ),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("1 xpassed"), "{}", r.stdout);
}

#[test]
fn a_listed_case_that_ends_with_another_verdict_fails_the_run() {
    let (code, report) = json_with(
        "^errored/gather_index_out_of_range$",
        &file("ratchet.toml"),
        &[],
    );
    assert_eq!(code, 1);
    let e = expectation(&report, "errored/gather_index_out_of_range");
    assert_eq!(e["outcome"], "different");
    assert_eq!(e["detail"], "expected failed, got errored");
    assert_eq!(e["fails_gate"], true);
    assert_eq!(count(&report, "expected_failures"), 0);
}

#[test]
fn a_listed_failure_with_another_signature_fails_the_run() {
    let (code, report) = json_with("^failing/nan_expected$", &file("ratchet.toml"), &[]);
    assert_eq!(code, 1);
    let e = expectation(&report, "failing/nan_expected");
    assert_eq!(e["outcome"], "different");
    assert_eq!(
        e["detail"],
        "expected failed with 2 mismatches, got 1 mismatch first at [0]"
    );
    let r = run_with("^failing/nan_expected$", &file("ratchet.toml"), &[]);
    assert!(
        r.stdout.contains(
            "fails differently than expected: expected failed with 2 mismatches, got 1 mismatch \
             first at [0] (entry 'failing/nan_expected': runtime#4: NaN is not propagated)"
        ),
        "{}",
        r.stdout
    );
    // A case that fails differently is a gate failure: it gets a rerun command.
    assert!(
        r.stdout.contains("rerun: onnx-idx-check run "),
        "{}",
        r.stdout
    );
}

#[test]
fn an_expired_entry_fails_the_run_even_when_its_case_fails_as_listed() {
    let expired = file("expired.toml");
    let (code, report) = json_with("^failing/wrong_value$", &expired, &[]);
    assert_eq!(code, 1);
    // New-user report #2: the case fails the gate, and says so in the report.
    let e = expectation(&report, "failing/wrong_value");
    assert_eq!(e["outcome"], "expired");
    assert_eq!(e["fails_gate"], true);
    assert!(
        e["detail"]
            .as_str()
            .unwrap()
            .starts_with("the entry expired on "),
        "{e}"
    );
    assert_eq!(count(&report, "expected_failures"), 0);
    assert_eq!(report["summary"]["gate"]["status"], "failed");
    assert_eq!(
        report["summary"]["gate"]["reasons"][0]["message"],
        "cases: 1 listed under an expired expectation"
    );
    assert_eq!(
        report["expectations"]["expired"],
        json!(["failing/wrong_value"])
    );
    assert_eq!(report["expectations"]["unmatched"], json!([]));
    let r = run_with("^failing/wrong_value$", &expired, &[]);
    r.expect_code(1);
    assert!(
        r.stdout.contains("EXPIRED [")
            && r.stdout
                .contains("expectation expired: the entry expired on "),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(&format!(
            "expectations: the entry for 'failing/wrong_value' in {} has expired (its `until` date has passed)",
            expired.display()
        )),
        "{}",
        r.stdout
    );
    // ratchet.toml's `until = 2999-12-31` has not expired.
    let (code, report) = json_with("^failing/wrong_value$", &file("ratchet.toml"), &[]);
    assert_eq!(code, 0);
    assert_eq!(report["expectations"]["expired"], json!([]));
}

/// New-user report #2: with two shards, the shard that never ran the expired entry's case failed
/// too, and the one that ran it reported the case as skipped in JUnit and `fails_gate: false` in
/// JSON. Now the expiry fails only the run that ran the case, as a failure in every format.
#[test]
fn report_2_an_expired_entry_fails_only_the_run_that_ran_its_case_in_every_format() {
    let expired = file("expired.toml");
    // A run that does not select the case (a filter, like a shard that left it out) still lists
    // the entry as expired, but does not fail on it.
    let (code, report) = json_with("^passing/nan_payloads_are_equal$", &expired, &[]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["summary"]["gate"]["status"], "passed");
    assert_eq!(
        report["expectations"]["expired"],
        json!(["failing/wrong_value"])
    );
    // The run that ran it: a JUnit failure, typed as an expired expectation.
    let r = run_with("^failing/wrong_value$", &expired, &["--format", "junit"]);
    r.expect_code(1);
    assert!(r.stdout.contains("failures=\"1\""), "{}", r.stdout);
    assert!(r.stdout.contains("skipped=\"0\""), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("<failure message=\"expectation expired (")
            && r.stdout.contains("type=\"expired\""),
        "{}",
        r.stdout
    );
}

#[test]
fn a_glob_entry_covers_every_case_it_matches() {
    let (code, report) = json_with(
        "^failing/(gather_grad_wrong_value|gather_elements_grad_wrong_value|wrong_shape)$",
        &file("ratchet.toml"),
        &[],
    );
    // wrong_shape matches no entry and fails the run on its own.
    assert_eq!(code, 1);
    for name in [
        "failing/gather_grad_wrong_value",
        "failing/gather_elements_grad_wrong_value",
    ] {
        let e = expectation(&report, name);
        assert_eq!(e["outcome"], "expected-failure", "{name}");
        assert_eq!(e["entry"], "failing/*_grad_wrong_value", "{name}");
    }
    assert_eq!(*expectation(&report, "failing/wrong_shape"), Value::Null);
    assert_eq!(count(&report, "expected_failures"), 2);
}

#[test]
fn an_opset_range_limits_an_entry_to_the_cases_it_admits() {
    // Every errored fixture named *_opset1*, at ai.onnx 1, 10, 11, 13, 16 or 18.
    let (code, report) = json_with("^errored/.*_opset1", &file("ratchet.toml"), &[]);
    assert_eq!(code, 1);
    let mut admitted = Vec::new();
    let mut outside = Vec::new();
    for c in cases(&report) {
        assert_eq!(c["status"], "errored", "{c:#}");
        let name = c["name"].as_str().unwrap().to_string();
        let opset = c["opset"]["ai.onnx"].as_i64().unwrap();
        match c["expectation"]["entry"].as_str() {
            Some("errored/*_opset1*") => {
                assert_eq!(c["expectation"]["outcome"], "expected-failure");
                admitted.push((name, opset));
            }
            None => outside.push(opset),
            Some(other) => panic!("{name}: entry {other}"),
        }
    }
    assert_eq!(
        admitted,
        [
            ("errored/gather_negative_index_opset1".to_string(), 1),
            ("errored/scatter_negative_index_opset10".to_string(), 10)
        ]
    );
    assert!(
        !outside.is_empty() && outside.iter().all(|&o| o > 10),
        "{outside:?}"
    );
}

#[test]
fn a_tolerance_override_turns_a_failed_reduction_into_a_pass() {
    // Without the file: 5.0 against 5.02 fails at the default rtol 1e-3.
    let r = run([
        "run",
        fixtures().to_str().unwrap(),
        "--filter",
        "^failing/reduction_beyond_tolerance$",
        "--format",
        "json",
    ]);
    r.expect_code(1);
    assert_eq!(cases(&r.json())[0]["status"], "failed");
    let (code, report) = json_with(
        "^failing/reduction_beyond_tolerance$",
        &file("ratchet.toml"),
        &[],
    );
    assert_eq!(code, 0);
    let c = case(&report, "failing/reduction_beyond_tolerance");
    assert_eq!(c["status"], "passed");
    assert_eq!(c["data_sets"][0]["outputs"][0]["comparison"], "tolerant");
    assert_eq!(
        c["expectation"],
        json!({
            "outcome": "tolerance-only",
            "entry": "failing/reduction_beyond_tolerance",
            "reason": "runtime#7: reductions accumulate in float16",
            "link": null,
            "detail": null,
            "fails_gate": false
        })
    );
    // A tolerance-only entry does not count as an expected failure.
    assert_eq!(count(&report, "expected_failures"), 0);
    // ... and it tightens as well as loosens: rtol 0 fails 5.0 against 5.004.
    let (code, report) = json_with(
        "^passing/reduction_within_tolerance$",
        &file("tighter_tolerance.toml"),
        &[],
    );
    assert_eq!(code, 1);
    let c = case(&report, "passing/reduction_within_tolerance");
    assert_eq!(c["status"], "failed");
    assert_eq!(c["expectation"]["outcome"], "tolerance-only");
}

/// ratchet.toml rewritten for the results of [`EVERYTHING`], worked by hand from the rules of
/// `--update-expectations`: in the file's order; the XPASS entry and the entry that matches no
/// case dropped; the exact entries of nan_expected and gather_index_out_of_range refreshed to
/// the current signature and verdict, keeping their reasons; the globs and the tolerance-only
/// entry kept as they were; new TODO entries, last and in case order, for
/// reduction_attribute_opset13 (outside the glob's opset range) and wrong_shape; comments
/// dropped.
const UPDATED: &str = r#"# onnx-idx-check expectations: known failures, ratcheted.
# Written by `onnx-idx-check run --update-expectations`: entries in their
# order (which decides between globs), new ones last; comments not kept. Fill in every
# reason = "TODO" (an issue, a missing feature) before committing.

[[expect]]
case = "failing/wrong_value"
status = "failed"
reason = "runtime#1: Gather copies the wrong row"
link = "https://example.com/runtime/issues/1"
until = 2999-12-31
mismatches = 1
first_mismatch = [1, 0]

[[expect]]
case = "errored/gather_index_out_of_range"
status = "errored"
reason = "runtime#3: out-of-range indices are clamped"

[[expect]]
case = "failing/nan_expected"
status = "failed"
reason = "runtime#4: NaN is not propagated"
mismatches = 1
first_mismatch = [0]

[[expect]]
case = "failing/*_grad_wrong_value"
status = "failed"
reason = "runtime#5: gradients overwrite instead of accumulating"

[[expect]]
case = "errored/*_opset1*"
status = "errored"
reason = "runtime#6: negative indices before opset 11"
opset = { max = 10 }

[[expect]]
case = "failing/reduction_beyond_tolerance"
reason = "runtime#7: reductions accumulate in float16"
rtol = 0.01

[[expect]]
case = "errored/reduction_attribute_opset13"
status = "errored"
reason = "TODO"

[[expect]]
case = "failing/wrong_shape"
status = "failed"
reason = "TODO"
mismatches = 0
actual_dtype = "float"
actual_shape = [3, 2]
"#;

#[test]
fn update_expectations_rewrites_a_copy_of_the_file_to_the_current_results() {
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("expectations.toml");
    std::fs::copy(file("ratchet.toml"), &copy).unwrap();
    // Before: the XPASS, the other verdict, the other signature and the unlisted failures fail.
    let (code, _) = json_with(EVERYTHING, &copy, &[]);
    assert_eq!(code, 1);
    let (code, report) = json_with(EVERYTHING, &copy, &["--update-expectations"]);
    // The run is judged with the rewritten file.
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["expectations"]["updated"], true);
    assert_eq!(
        report["expectations"]["written"],
        json!({"entries": 8, "added": 2, "removed": 2, "changed": 2, "expired": 0})
    );
    // The entry that matched no case is gone, so nothing is unmatched any more.
    assert_eq!(report["expectations"]["unmatched"], json!([]));
    assert_eq!(std::fs::read_to_string(&copy).unwrap(), UPDATED);
    // The committed fixture is untouched.
    assert!(std::fs::read_to_string(file("ratchet.toml"))
        .unwrap()
        .contains("passing/nan_payloads_are_equal"));
    // A second run with the updated file passes the gate; nothing has expired.
    let (code, report) = json_with(EVERYTHING, &copy, &[]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["expectations"]["updated"], false);
    assert_eq!(report["expectations"]["expired"], json!([]));
    assert_eq!(count(&report, "unexpected_passes"), 0);
    assert_eq!(
        expectation(&report, "failing/wrong_shape")["reason"],
        "TODO"
    );
    assert_eq!(
        *expectation(&report, "passing/nan_payloads_are_equal"),
        Value::Null
    );
    // Updating again changes nothing.
    let r = run_with(EVERYTHING, &copy, &["--update-expectations"]);
    r.expect_code(0);
    assert_eq!(std::fs::read_to_string(&copy).unwrap(), UPDATED);
    assert!(
        r.stdout.contains(&format!(
            "expectations: wrote 8 entries to {}: 0 added, 0 removed, 0 changed",
            copy.display()
        )),
        "{}",
        r.stdout
    );
}

#[test]
fn update_expectations_starts_a_missing_file() {
    let tmp = tempfile::tempdir().unwrap();
    let new = tmp.path().join("new.toml");
    let r = run_with(
        "^(failing/wrong_shape|passing/nan_payloads_are_equal)$",
        &new,
        &["--update-expectations"],
    );
    r.expect_code(0);
    let text = std::fs::read_to_string(&new).unwrap();
    assert!(
        text.ends_with(
            "\n[[expect]]\ncase = \"failing/wrong_shape\"\nstatus = \"failed\"\nreason = \"TODO\"\nmismatches = 0\nactual_dtype = \"float\"\nactual_shape = [3, 2]\n"
        ),
        "{text}"
    );
    assert_eq!(text.matches("[[expect]]").count(), 1, "{text}");
}

#[test]
fn junit_reports_expected_failures_as_skipped_and_unexpected_passes_as_failures() {
    let r = run_with(
        "^(failing/wrong_value|passing/nan_payloads_are_equal|passing/reduction_within_tolerance)$",
        &file("ratchet.toml"),
        &["--format", "junit"],
    );
    r.expect_code(1);
    let xml = &r.stdout;
    assert!(xml.contains(r#"tests="3""#), "{xml}");
    assert!(xml.contains(r#"skipped="1""#), "{xml}");
    assert!(xml.contains(r#"failures="1""#), "{xml}");
    let testcase = |name: &str| {
        let start = xml
            .find(&format!(r#"<testcase name="{name}""#))
            .unwrap_or_else(|| panic!("no testcase {name}: {xml}"));
        let end = start + xml[start..].find("</testcase>").unwrap();
        xml[start..end].to_string()
    };
    let xfail = testcase("failing/wrong_value");
    assert!(
        xfail.contains(
            "<skipped message=\"expected failure (runtime#1: Gather copies the wrong row): \
             test_data_set_0: output &apos;output&apos;: 1 of 4 elements differ; first at [1,0]: \
             expected 7.0, got 5.0\" type=\"failed\">"
        ),
        "{xfail}"
    );
    assert!(!xfail.contains("<failure"), "{xfail}");
    let xpass = testcase("passing/nan_payloads_are_equal");
    assert!(
        xpass.contains(
            "<failure message=\"unexpectedly passed: listed as failing (runtime#2: NaN payloads \
             differ)\" type=\"unexpectedly-passed\"/>"
        ),
        "{xpass}"
    );
    let pass = testcase("passing/reduction_within_tolerance");
    assert!(
        !pass.contains("<failure") && !pass.contains("<skipped"),
        "{pass}"
    );
}

#[test]
fn an_unreadable_or_invalid_expectations_file_is_a_usage_error() {
    let r = run_with(
        "^failing/wrong_value$",
        Path::new("/nonexistent/exp.toml"),
        &[],
    );
    r.expect_code(2);
    assert!(r.stderr.contains("/nonexistent/exp.toml"), "{}", r.stderr);
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("bad.toml");
    std::fs::write(
        &bad,
        "[[expect]]\ncase = \"failing/wrong_value\"\nstatus = \"passed\"\nreason = \"x\"\n",
    )
    .unwrap();
    let r = run_with("^failing/wrong_value$", &bad, &[]);
    r.expect_code(2);
    assert!(
        r.stderr
            .contains("entry 1 (line 3): `status`: 'passed' is not an expectation"),
        "{}",
        r.stderr
    );
    // --update-expectations and --strict-expectations need --expectations.
    let r = run(["run", "tests/fixtures/failing", "--update-expectations"]);
    r.expect_code(2);
    let r = run(["run", "tests/fixtures/failing", "--strict-expectations"]);
    r.expect_code(2);
}

/// Writes `text` to a fresh expectations file; the directory lives as long as the guard.
fn temp_file(text: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("expectations.toml");
    std::fs::write(&path, text).unwrap();
    (tmp, path)
}

/// New-user report #3: `--update-expectations` sorted the entries, so the broader glob
/// (`*` sorts before letters) took over and the specific entry that was in effect was dropped.
#[test]
fn report_3_update_keeps_the_entry_that_wins_and_the_file_order() {
    let text = "[[expect]]\ncase = \"failing/gather_grad_*\"\nstatus = \"failed\"\nreason = \"B: specific, listed first so it wins\"\n\n\
                [[expect]]\ncase = \"failing/*grad*\"\nstatus = \"failed\"\nreason = \"A: broader\"\n";
    let (_tmp, path) = temp_file(text);
    let filter = "^failing/gather_grad_wrong_value$";
    let reason = |report: &Value| {
        expectation(report, "failing/gather_grad_wrong_value")["reason"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let (code, before) = json_with(filter, &path, &[]);
    assert_eq!(code, 0, "{before:#}");
    assert_eq!(reason(&before), "B: specific, listed first so it wins");
    let (code, after) = json_with(filter, &path, &["--update-expectations"]);
    assert_eq!(code, 0, "{after:#}");
    assert_eq!(reason(&after), "B: specific, listed first so it wins");
    let written = std::fs::read_to_string(&path).unwrap();
    // B is first and still there; A, which matches cases the filter left out
    // (failing/gather_elements_grad_wrong_value), is kept as it was.
    let b = written
        .find("case = \"failing/gather_grad_*\"")
        .expect(&written);
    let a = written.find("case = \"failing/*grad*\"").expect(&written);
    assert!(b < a, "{written}");
    let (_, again) = json_with(filter, &path, &[]);
    assert_eq!(reason(&again), "B: specific, listed first so it wins");
}

/// New-user report #9: an entry whose opset range excluded the only case it names was never
/// reported as unmatched.
#[test]
fn report_9_an_entry_whose_opset_range_excludes_every_case_it_names_is_unmatched() {
    // failing/wrong_value imports ai.onnx 13.
    let text = "[[expect]]\ncase = \"failing/wrong_value\"\nstatus = \"failed\"\nreason = \"only opset 11-12\"\nopset = { min = 11, max = 12 }\n";
    let (_tmp, path) = temp_file(text);
    let (code, report) = json_with("^failing/wrong_value$", &path, &[]);
    assert_eq!(code, 1, "the case fails, uncovered");
    assert_eq!(
        report["expectations"]["unmatched"],
        json!(["failing/wrong_value"])
    );
    let r = run_with("^failing/wrong_value$", &path, &[]);
    assert!(
        r.stdout.contains(&format!(
            "expectations warning: the entry for 'failing/wrong_value' in {} matches 1 case by \
             name, but its opset range 11-12 admits none of them (opset 13)",
            path.display()
        )),
        "{}",
        r.stdout
    );
    let (_, report) = json_with("^failing/wrong_value$", &path, &["--strict-expectations"]);
    let reasons = report["summary"]["gate"]["reasons"].to_string();
    assert!(
        reasons.contains("admits none of them (opset 13) (--strict-expectations)"),
        "{reasons}"
    );
    // An entry whose cases a filter left out is not unmatched: they may be in its range.
    let (code, report) = json_with("^failing/wrong_shape$", &path, &["--strict-expectations"]);
    assert_eq!(code, 1, "wrong_shape fails on its own");
    assert_eq!(report["expectations"]["unmatched"], json!([]));
}

/// New-user report #10: the update run printed the case lines judged by the old file and the
/// summary judged by the new one, kept entries that match no case, and never said what it wrote.
#[test]
fn report_10_an_update_reports_one_state_and_says_what_it_wrote() {
    let text = "[[expect]]\ncase = \"failing/wrong_value\"\nstatus = \"failed\"\nreason = \"runtime#1\"\nuntil = 2020-01-31\n\n\
                [[expect]]\ncase = \"passing/nan_payloads_are_equal\"\nstatus = \"failed\"\nreason = \"fixed since\"\n\n\
                [[expect]]\ncase = \"failing/does_not_exist_*\"\nstatus = \"failed\"\nreason = \"renamed\"\n";
    let (_tmp, path) = temp_file(text);
    let filter = "^(failing/(wrong_value|wrong_shape)|passing/nan_payloads_are_equal)$";
    let r = run_with(filter, &path, &["--update-expectations"]);
    let out = &r.stdout;
    // One state: the new file's. wrong_shape is an expected failure under its new TODO entry in
    // the case lines and in the summary alike.
    assert!(
        out.lines()
            .any(|l| l.starts_with("  XFAIL [") && l.ends_with("] failing/wrong_shape")),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("   PASS [") && l.ends_with("] passing/nan_payloads_are_equal")),
        "{out}"
    );
    assert!(!out.contains("  FAIL ["), "{out}");
    assert!(
        out.contains(&format!(
            "expectations: wrote 2 entries to {}: 1 added, 2 removed, 1 changed, 1 expired kept",
            path.display()
        )),
        "{out}"
    );
    assert!(
        out.contains(
            "has expired (its `until` date has passed): renew the date or remove the entry"
        ),
        "{out}"
    );
    // The expired entry is kept (its date is the author's call, and it gained its signature)
    // and still fails the run.
    r.expect_code(1);
    let written = std::fs::read_to_string(&path).unwrap();
    assert!(written.contains("until = 2020-01-31"), "{written}");
    assert!(!written.contains("does_not_exist"), "{written}");
    assert!(!written.contains("nan_payloads"), "{written}");
    // Renewing the date makes the same run green.
    std::fs::write(&path, written.replace("2020-01-31", "2999-01-31")).unwrap();
    run_with(filter, &path, &[]).expect_code(0);
}

/// New-user report #6: the summary counted the expected failures twice (`16 failed, 17 errored,
/// 33 expected failures`), the per-operator rows did not separate them, and an expired entry
/// showed as a plain XFAIL without its date.
#[test]
fn report_6_each_case_is_counted_once_and_an_expired_entry_shows_its_date() {
    let text = "[[expect]]\ncase = \"failing/*grad_wrong_value\"\nstatus = \"failed\"\nreason = \"runtime#5\"\n\n\
                [[expect]]\ncase = \"failing/wrong_value\"\nstatus = \"failed\"\nreason = \"runtime#1\"\nuntil = 2020-01-31\n";
    let (_tmp, path) = temp_file(text);
    let filter = "^(failing/(wrong_value|wrong_shape|gather_grad_wrong_value|gather_elements_grad_wrong_value)|passing/nan_payloads_are_equal)$";
    let r = run_with(filter, &path, &[]);
    r.expect_code(1);
    let out = &r.stdout;
    assert!(
        out.contains("5 cases: 1 passed, 1 failed, 2 xfailed, 1 expired"),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("EXPIRED [") && l.ends_with("] failing/wrong_value")),
        "{out}"
    );
    assert!(out.contains("the entry expired on 2020-01-31"), "{out}");
    assert!(
        out.lines().any(|l| l.trim_start().starts_with("Gather-13")
            && l.ends_with("1 passed, 1 failed, 1 expired")),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.trim_start().starts_with("com.microsoft.GatherGrad-1")
                && l.ends_with(" 1 xfailed")),
        "{out}"
    );
    let (_, report) = json_with(filter, &path, &[]);
    let s = &report["summary"];
    // The verdicts stay as they are; the partition is in `by_op` and the expectation counts.
    assert_eq!(
        (
            s["failed"].as_u64(),
            s["expected_failures"].as_u64(),
            s["expired"].as_u64()
        ),
        (Some(4), Some(2), Some(1))
    );
    assert_eq!(s["by_op"]["Gather-13"]["expired"], 1);
    assert_eq!(s["by_op"]["com.microsoft.GatherGrad-1"]["xfailed"], 1);
}

/// New-user report #7: a shape failure that turned into another wrong shape still counted as the
/// expected failure, since the signature was only `mismatches = 0`.
#[test]
fn report_7_a_shape_failure_that_changes_shape_fails_differently() {
    // failing/wrong_shape: the expected file says [2, 3], onnx-idx-check computes [3, 2].
    let entry = |shape: &str| {
        format!(
            "[[expect]]\ncase = \"failing/wrong_shape\"\nstatus = \"failed\"\nreason = \"r\"\nmismatches = 0\nactual_dtype = \"float\"\nactual_shape = {shape}\n"
        )
    };
    let (_tmp, path) = temp_file(&entry("[3, 2]"));
    let (code, report) = json_with("^failing/wrong_shape$", &path, &[]);
    assert_eq!(code, 0, "{report:#}");
    let (_tmp, path) = temp_file(&entry("[2, 2]"));
    let (code, report) = json_with("^failing/wrong_shape$", &path, &[]);
    assert_eq!(code, 1);
    assert_eq!(
        expectation(&report, "failing/wrong_shape")["detail"],
        "expected failed with 0 mismatches (got float [2, 2]), got 0 mismatches (got float [3, 2])"
    );
}

/// Report #29: an expected failure is one XFAIL line with its entry's reason; its mismatch
/// table stays out of the human report (the JSON report keeps it), as it would fill every CI log.
#[test]
fn report_29_expected_failures_get_no_detail_block() {
    let ratchet = file("ratchet.toml");
    let r = run_with(AS_LISTED, &ratchet, &[]);
    r.expect_code(0);
    let xfails: Vec<String> = crate::support::case_lines(&r.stdout)
        .into_iter()
        .filter(|(label, _)| label == "XFAIL")
        .map(|(_, name)| name)
        .collect();
    assert!(!xfails.is_empty(), "{}", r.stdout);
    for name in &xfails {
        assert!(
            !r.stdout.contains(&format!("--- {name} ")),
            "{name} has a detail block:\n{}",
            r.stdout
        );
    }
    // At least one of them failed on its values, and JSON has its mismatches.
    let (_, report) = json_with(AS_LISTED, &ratchet, &[]);
    let failed = xfails
        .iter()
        .map(|n| case(&report, n))
        .find(|c| c["status"] == "failed")
        .expect("an expected failure that failed");
    assert!(
        failed["data_sets"][0]["outputs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["status"] == "failed"
                && !o["first_mismatches"].as_array().unwrap().is_empty()),
        "{failed:#}"
    );
}

/// An entry whose name matches a case that ran but whose `opset` range excludes it says so,
/// rather than "matches no case" (the case is right there in the report).
#[test]
fn an_entry_excluded_by_its_opset_range_says_which_cases_its_name_matched() {
    let dir = tempfile::tempdir().unwrap();
    let exp = dir.path().join("opset.toml");
    // errored/reduction_attribute_opset13 imports ai.onnx 13 (its name says so).
    std::fs::write(
        &exp,
        "[[expect]]\ncase = \"errored/reduction_attribute_opset13\"\nstatus = \"errored\"\n\
         reason = \"r\"\nopset = { min = 11, max = 12 }\n",
    )
    .unwrap();
    let r = run_with(
        "^errored/reduction_attribute_opset13$",
        &exp,
        &["--strict-expectations"],
    );
    r.expect_code(1);
    let why = "matches 1 case by name, but its opset range 11-12 admits none of them (opset 13)";
    assert!(
        r.stdout.contains(&format!(
            "expectations error: the entry for 'errored/reduction_attribute_opset13' in {} {why}",
            exp.display()
        )),
        "{}",
        r.stdout
    );
    let (_, report) = json_with(
        "^errored/reduction_attribute_opset13$",
        &exp,
        &["--strict-expectations"],
    );
    let reasons = report["summary"]["gate"]["reasons"].as_array().unwrap();
    assert!(
        reasons
            .iter()
            .any(|r| r["message"].as_str().unwrap().contains(why)),
        "{reasons:?}"
    );
}

/// Adversary D2: a rewrite that fails part-way (a full disk) must leave the expectations file
/// whole. The full disk is a file size limit (`ulimit -f`, SIGXFSZ ignored, so the write fails
/// with EFBIG as it would with ENOSPC), below the size of the rewrite.
#[test]
fn a_failed_update_of_the_expectations_leaves_the_file_whole_and_no_temporary_file() {
    let tmp = tempfile::tempdir().unwrap();
    let original = "# the user's own notes\n";
    let full = tmp.path().join("full.toml");
    std::fs::write(&full, original).unwrap();
    let r = run_with(EVERYTHING, &full, &["--update-expectations"]);
    assert!(r.code == 0 || r.code == 1, "{}", r.stderr);
    let rewrite = std::fs::read_to_string(&full).unwrap();
    // More than the limit below (512 or 1024 bytes, as the shell counts blocks).
    assert!(rewrite.len() > 1024, "{rewrite}");
    let limited = tmp.path().join("limited.toml");
    std::fs::write(&limited, original).unwrap();
    let mut args = vec![
        "-c".to_string(),
        "trap '' XFSZ; ulimit -f 1 || exit 99; exec \"$@\"".into(),
        "sh".into(),
        env!("CARGO_BIN_EXE_onnx-idx-check").into(),
        "run".into(),
        crate::support::fixtures().display().to_string(),
        "--filter".into(),
        EVERYTHING.into(),
        "--expectations".into(),
        limited.display().to_string(),
        "--update-expectations".into(),
    ];
    args.extend(["--color".into(), "never".into()]);
    let out = std::process::Command::new("sh")
        .args(&args)
        .current_dir(crate::support::root())
        .env("ONNX_IDX_CHECK_LAST_RUN", tmp.path().join("last-run.json"))
        .output()
        .unwrap();
    if out.status.code() == Some(99) {
        crate::support::skipped(
            "a_failed_update_of_the_expectations_leaves_the_file_whole: SKIPPED: cannot lower the file size limit",
        );
        return;
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("limited.toml"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&limited).unwrap(), original);
    let mut left: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with("last-run"))
        .collect();
    left.sort();
    assert_eq!(left, ["full.toml", "limited.toml"]);
}

/// Adversary D2 on a real full file system: a 16 KiB tmpfs, filled up. Needs root (to mount);
/// elsewhere it says SKIPPED.
#[cfg(target_os = "linux")]
#[test]
fn a_full_file_system_leaves_the_expectations_file_whole() {
    const TEST: &str = "a_full_file_system_leaves_the_expectations_file_whole";
    let uid = std::process::Command::new("id").arg("-u").output();
    if !uid.is_ok_and(|o| o.stdout.starts_with(b"0\n")) {
        crate::support::skipped(&format!("{TEST}: SKIPPED: needs root to mount a tmpfs"));
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mnt = tmp.path().join("tiny");
    std::fs::create_dir(&mnt).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=16k", "tmpfs"])
        .arg(&mnt)
        .status();
    if !mounted.is_ok_and(|s| s.success()) {
        crate::support::skipped(&format!("{TEST}: SKIPPED: could not mount a tmpfs"));
        return;
    }
    /// Unmounts when the test ends, passed or not.
    struct Unmount<'a>(&'a Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(self.0).status();
        }
    }
    let _unmount = Unmount(&mnt);
    let original = "# the user's own notes\n";
    let known = mnt.join("known.toml");
    std::fs::write(&known, original).unwrap();
    // Fill the rest, a page at a time, until the file system says no.
    {
        use std::io::Write;
        let mut filler = std::fs::File::create(mnt.join("filler")).unwrap();
        while filler.write_all(&[0u8; 4096]).is_ok() {}
        let _ = filler.sync_all();
    }
    let r = run_with(EVERYTHING, &known, &["--update-expectations"]);
    r.expect_code(2);
    assert!(r.stderr.contains("known.toml"), "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(&known).unwrap(), original);
    let mut left: Vec<String> = std::fs::read_dir(&mnt)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["filler", "known.toml"]);
}
