//! `list`, and what discovery says about the PATHs it is given. Tests named `report_27_*` answer
//! item 27 of the new user's report (2026-11-24). Trees that cannot be committed (a case without
//! its data sets, symbolic links) are built in a temporary directory from the fixtures.

use crate::snapshots::settings;
use crate::support::{case, copy_case, fixture, fixtures, run, run_json};
use serde_json::Value;
use std::path::Path;

/// What `run` says of a case without any `test_data_set_N` directory, as the `list` sample of
/// docs/guide/inspect.md shows it: the words `list` must repeat.
const NO_DATA_SET: &str = "no test_data_set_N directory: nothing to check";

/// A tree of three cases: `good` (a passing fixture), `no_data` (its model alone) and
/// `truncated` (errored/truncated_model, a model.onnx cut short: no ModelProto).
fn three_cases(root: &Path) {
    let good = fixture("passing/nan_payloads_are_equal");
    copy_case(&good, &root.join("good"));
    std::fs::create_dir(root.join("no_data")).unwrap();
    std::fs::copy(good.join("model.onnx"), root.join("no_data/model.onnx")).unwrap();
    copy_case(&fixture("errored/truncated_model"), &root.join("truncated"));
}

/// `list` of the three cases of [`three_cases`], for people.
fn list_three_cases() -> String {
    let tmp = tempfile::tempdir().unwrap();
    three_cases(tmp.path());
    let r = run(["list", tmp.path().to_str().unwrap()]);
    r.expect_code(0);
    r.stdout
}

fn list_json(root: &Path) -> Value {
    let r = run(["list", root.to_str().unwrap(), "--format", "json"]);
    r.expect_code(0);
    r.json()
}

fn listed<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc.as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {doc}"))
}

#[test]
fn report_27_list_says_a_case_without_data_set_is_not_runnable_in_run_s_words() {
    let tmp = tempfile::tempdir().unwrap();
    three_cases(tmp.path());
    let doc = list_json(tmp.path());
    let no_data = listed(&doc, "no_data");
    assert_eq!(no_data["status"], "no-data-set");
    assert_eq!(no_data["reason"], NO_DATA_SET);
    assert_eq!(no_data["data_sets"], 0);
    // The model itself is fine: it still says what it resolves to.
    assert_eq!(no_data["resolved"], serde_json::json!(["Gather-13"]));
    assert_eq!(listed(&doc, "good")["status"], "supported");

    // `run` errors it with the same words.
    let (code, report) = run_json(tmp.path(), &["--filter", "^no_data$"]);
    assert_eq!(code, 1);
    let c = case(&report, "no_data");
    assert_eq!(
        (&c["status"], &c["reason"]),
        (&"errored".into(), &NO_DATA_SET.into())
    );
}

#[test]
fn report_27_list_shows_an_unreadable_model_without_empty_brackets() {
    let table = list_three_cases();
    let line = table
        .lines()
        .find(|l| l.starts_with("truncated "))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(!line.contains("[]"), "{line}");
    // Name, no operators, no opsets, the status: nothing can be read from the model.
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(&words[..4], ["truncated", "-", "-", "invalid:"], "{line}");
    assert!(
        line.contains("model.onnx: not a valid ONNX ModelProto"),
        "{line}"
    );
}

#[test]
fn report_27_the_list_table_is_stable() {
    let table = list_three_cases();
    settings().bind(|| insta::assert_snapshot!("list_human", table));
}

#[cfg(unix)]
#[test]
fn report_27_a_tree_of_symlinks_says_how_many_were_not_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let links = tmp.path().join("links");
    std::fs::create_dir(&links).unwrap();
    for name in ["passing/nan_payloads_are_equal", "failing/wrong_value"] {
        let target = fixture(name);
        let link = links.join(target.file_name().unwrap());
        std::os::unix::fs::symlink(&target, link).unwrap();
    }
    let r = run(["run", links.to_str().unwrap()]);
    r.expect_code(2);
    assert!(
        r.stderr.contains(&format!(
            "no case found under {}: no directory with a model.onnx or model.xml (2 symlinks not followed)",
            links.display()
        )),
        "{}",
        r.stderr
    );
    // A link given as PATH is followed, as any PATH is.
    let one = links.join("nan_payloads_are_equal");
    let (code, report) = run_json(&one, &[]);
    assert_eq!(code, 0);
    assert_eq!(case(&report, "nan_payloads_are_equal")["status"], "passed");
}

#[test]
fn report_27_a_model_onnx_given_as_path_is_its_case() {
    let dir = fixture("passing/nan_payloads_are_equal");
    let (code, report) = run_json(&dir.join("model.onnx"), &[]);
    assert_eq!(code, 0);
    // Named by its directory, as when the directory is given.
    let c = case(&report, "nan_payloads_are_equal");
    assert_eq!(c["status"], "passed");

    // `--actual` maps it by its name, as when its directory is given: DIR/<name>/test_data_set_N.
    // The fixtures' runtime gives 7.0 where `differs` expects 5.0, and agrees with `agrees`.
    let actual = fixtures().join(crate::support::ACTUAL);
    let outputs = actual.join("outputs");
    for (name, code, status) in [("agrees", 0, "passed"), ("differs", 1, "failed")] {
        let model = actual.join("cases").join(name).join("model.onnx");
        let (got, report) = run_json(&model, &["--actual", outputs.to_str().unwrap()]);
        assert_eq!(
            (got, &case(&report, name)["status"]),
            (code, &status.into())
        );
    }
}

#[test]
fn report_27_any_other_file_is_still_not_a_directory() {
    let r = run(["run", "tests/fixtures/README.md"]);
    r.expect_code(2);
    assert!(
        r.stderr
            .contains("tests/fixtures/README.md is not a directory"),
        "{}",
        r.stderr
    );
}
