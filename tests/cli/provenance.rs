//! Provenance: the sha256 of every file a case read (`cases[].files` in JSON, `sha256:<file>`
//! properties in JUnit) and where the data comes from (`cases[].origin`, the `origin` property).
//! The digests are computed here with the `sha2` crate, independently of the tool.

use crate::support::{cases, copy_case, fixture, root, run, run_json, sha256_hex};
use serde_json::{json, Value};
use std::path::Path;

/// `{"path": rel, "sha256": ...}` for each file of `dir`, in the order given.
fn digests(dir: &Path, files: &[&str]) -> Value {
    json!(files
        .iter()
        .map(|f| json!({"path": f, "sha256": sha256_hex(&dir.join(f))}))
        .collect::<Vec<_>>())
}

#[test]
fn json_lists_the_sha256_of_the_model_and_of_every_tensor_file_read() {
    let (code, report) = run_json(
        &root().join("testdata/onnx-node"),
        &["--filter", "^test_gather_0$"],
    );
    assert_eq!(code, 0);
    let c = &cases(&report)[0];
    let dir = root().join("testdata/onnx-node/test_gather_0");
    assert_eq!(
        c["files"],
        digests(
            &dir,
            &[
                "model.onnx",
                "test_data_set_0/input_0.pb",
                "test_data_set_0/input_1.pb",
                "test_data_set_0/output_0.pb",
            ]
        )
    );
    // The official node tests name their ONNX release in their README.
    assert_eq!(c["origin"], "ONNX 1.23.2");
    // Every onnx-node case has it, whichever path the run starts from.
    let (_, report) = run_json(&root().join("testdata"), &["--filter", "^onnx-node/"]);
    assert!(cases(&report).len() >= 16);
    for c in cases(&report) {
        assert_eq!(c["origin"], "ONNX 1.23.2", "{}", c["name"]);
    }
}

#[test]
fn a_failed_case_lists_every_input_and_the_expected_output_it_judged() {
    let dir = fixture("failing/diagnosed_reduction_ignored");
    let (code, report) = run_json(&dir, &[]);
    assert_eq!(code, 1);
    assert_eq!(
        cases(&report)[0]["files"],
        digests(
            &dir,
            &[
                "model.onnx",
                "test_data_set_0/input_0.pb",
                "test_data_set_0/input_1.pb",
                "test_data_set_0/input_2.pb",
                "test_data_set_0/output_0.pb",
            ]
        )
    );
    // The fixtures name no origin.
    assert_eq!(cases(&report)[0]["origin"], Value::Null);
}

#[test]
fn junit_carries_the_origin_and_the_digests_in_system_out() {
    let r = run([
        "run",
        "testdata/onnx-node",
        "--filter",
        "^test_gather_0$",
        "--format",
        "junit",
    ]);
    r.expect_code(0);
    let dir = root().join("testdata/onnx-node/test_gather_0");
    // sha256sum's format, so `sha256sum -c` can check a saved copy.
    let mut want = String::from("            <system-out>origin: ONNX 1.23.2\n");
    for f in [
        "model.onnx",
        "test_data_set_0/input_0.pb",
        "test_data_set_0/input_1.pb",
        "test_data_set_0/output_0.pb",
    ] {
        want.push_str(&format!("{}  {f}\n", sha256_hex(&dir.join(f))));
    }
    want.push_str("</system-out>\n");
    assert!(r.stdout.contains(&want), "{}\n--- want\n{want}", r.stdout);
}

#[test]
fn a_provenance_file_names_the_origin_of_the_cases_below_it() {
    let tmp = tempfile::tempdir().unwrap();
    copy_case(
        &fixture("passing/nan_payloads_are_equal"),
        &tmp.path().join("mine/a"),
    );
    copy_case(
        &fixture("passing/nan_payloads_are_equal"),
        &tmp.path().join("other/b"),
    );
    std::fs::write(
        tmp.path().join("mine/PROVENANCE"),
        "\n# written by hand by the runtime team, 2026-01-05\nmore text\n",
    )
    .unwrap();
    let (code, report) = run_json(tmp.path(), &[]);
    assert_eq!(code, 0);
    let origins: Vec<(&str, &Value)> = cases(&report)
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), &c["origin"]))
        .collect();
    assert_eq!(
        origins,
        [
            (
                "mine/a",
                &json!("written by hand by the runtime team, 2026-01-05")
            ),
            ("other/b", &Value::Null)
        ]
    );
}

/// `testdata/README.md` names ONNX 1.23.2 in its row for `onnx-node/`, and the origin rule
/// (the first README up the tree naming an ONNX release) credits that release to the
/// spec-examples too, which `cargo xtask testdata` writes from the operator specifications.
#[test]
fn spec_examples_are_not_credited_to_an_onnx_release() {
    let (_, report) = run_json(&root().join("testdata"), &["--filter", "^spec-examples/"]);
    for c in cases(&report) {
        assert_ne!(c["origin"], "ONNX 1.23.2", "{}", c["name"]);
    }
}
