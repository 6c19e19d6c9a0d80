//! `tests/fixtures/onnx-node-sample/`: official ONNX 1.23.2 node tests from outside the operator
//! families, copied unmodified (see its README). The tool must skip what it does not implement,
//! naming why, and pass the plumbing it does implement; it must never error or fail on these
//! valid cases.

use crate::support::{cases, count, fixtures, run_json, ONNX_NODE_SAMPLE};
use serde_json::{json, Value};
use std::path::PathBuf;

fn sample() -> PathBuf {
    fixtures().join(ONNX_NODE_SAMPLE)
}

/// Every case of the sample: its verdict and the key part of its reason (`None` when passed).
const EXPECTED: &[(&str, &str, Option<&str>)] = &[
    (
        "test_adagrad",
        "skipped",
        Some("op Adagrad (ai.onnx.preview.training, opset 1) is not supported (unknown domain)"),
    ),
    (
        "test_add",
        "skipped",
        // Add is evaluated as context only: alone, it is still no case the tool judges.
        Some("op Add (ai.onnx, opset 14) is not supported on its own: the graph has no indexing operator"),
    ),
    (
        "test_ai_onnx_ml_array_feature_extractor",
        "skipped",
        Some("op ArrayFeatureExtractor (ai.onnx.ml, opset 1) is not supported (unknown domain)"),
    ),
    // The int2 input is never read: a graph of context operators alone decides first.
    (
        "test_cast_INT2_to_INT8",
        "skipped",
        Some("op Cast (ai.onnx, opset 28) is not supported on its own"),
    ),
    ("test_clip_default_inbounds_expanded", "passed", None),
    ("test_constant", "passed", None),
    ("test_identity", "passed", None),
    (
        "test_identity_opt",
        "skipped",
        Some("graph input 'opt_in' is an optional; only tensors are supported"),
    ),
    (
        "test_identity_sequence",
        "skipped",
        Some("graph input 'x' is a sequence; only tensors are supported"),
    ),
    (
        "test_loop11",
        "skipped",
        Some("op Loop (ai.onnx, opset 11) is not supported"),
    ),
    // Gather and GatherElements are in the graph, but the first unsupported node decides
    // (Unsqueeze, before it, is evaluated as context).
    (
        "test_nllloss_NCd1_weight_expanded",
        "skipped",
        Some("op Neg (ai.onnx, opset 22) is not supported"),
    ),
];

fn report() -> (i32, Value) {
    run_json(&sample(), &[])
}

#[test]
fn every_sample_case_gets_its_verdict_and_reason() {
    let (code, report) = report();
    // Nothing failed or errored, so the run passes.
    assert_eq!(code, 0, "{report:#}");
    let listed: Vec<&str> = cases(&report)
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    let want: Vec<&str> = EXPECTED.iter().map(|(n, _, _)| *n).collect();
    assert_eq!(listed, want, "every case once, sorted");
    let mut wrong = Vec::new();
    for (c, (name, status, reason)) in cases(&report).iter().zip(EXPECTED) {
        if c["status"] != *status {
            wrong.push(format!(
                "{name}: {} ({}), expected {status}",
                c["status"], c["reason"]
            ));
            continue;
        }
        match (c["reason"].as_str(), reason) {
            (None, None) => {}
            (Some(got), Some(key)) if got.contains(key) => {}
            (got, key) => wrong.push(format!("{name}: reason {got:?}, expected {key:?}")),
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    assert_eq!(count(&report, "passed"), 3);
    assert_eq!(count(&report, "skipped"), 8);
    assert_eq!(count(&report, "failed") + count(&report, "errored"), 0);
}

#[test]
fn the_sample_directory_holds_exactly_the_tested_cases() {
    let mut on_disk: Vec<String> = std::fs::read_dir(sample())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("model.onnx").is_file())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    let tested: Vec<&str> = EXPECTED.iter().map(|(n, _, _)| *n).collect();
    assert_eq!(on_disk, tested);
    assert!(sample().join("README.md").is_file());
}

fn case_of<'a>(report: &'a Value, name: &str) -> &'a Value {
    crate::support::case(report, name)
}

#[test]
fn skipped_sample_cases_load_no_data_and_passed_ones_compare_every_output() {
    let (_, report) = report();
    for (name, status, _) in EXPECTED {
        let c = case_of(&report, name);
        let sets = c["data_sets"].as_array().unwrap();
        if *status == "skipped" {
            assert!(sets.is_empty(), "{name}: {c:#}");
            continue;
        }
        assert_eq!(sets.len(), 1, "{name}");
        for o in sets[0]["outputs"].as_array().unwrap() {
            assert_eq!(o["status"], "passed", "{name}");
            assert_eq!(o["comparison"], "exact", "{name}: plumbing moves data");
        }
    }
}

#[test]
fn the_report_names_the_ops_and_imports_of_foreign_domains() {
    let (_, report) = report();
    let c = case_of(&report, "test_ai_onnx_ml_array_feature_extractor");
    assert_eq!(c["ops"], json!(["ai.onnx.ml.ArrayFeatureExtractor"]));
    // The model imports ai.onnx.ml only, no default domain.
    assert_eq!(c["opset"], json!({"ai.onnx.ml": 1}));
    let c = case_of(&report, "test_adagrad");
    assert_eq!(c["opset"], json!({"ai.onnx.preview.training": 1}));
    let c = case_of(&report, "test_nllloss_NCd1_weight_expanded");
    let ops: Vec<&str> = c["ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o.as_str().unwrap())
        .collect();
    for op in ["Gather", "GatherElements", "Unsqueeze", "Constant"] {
        assert!(ops.contains(&op), "{op} in {ops:?}");
    }
    assert_eq!(c["opset"], json!({"ai.onnx": 22}));
}

#[test]
fn skips_fail_the_sample_run_only_with_deny_skip() {
    let (code, report) = run_json(&sample(), &["--deny-skip"]);
    assert_eq!((code, count(&report, "skipped")), (1, 8));
    let (code, report) = run_json(&sample(), &["--filter", "^test_(constant|identity)$"]);
    assert_eq!((code, count(&report, "passed")), (0, 2));
}

#[test]
fn list_agrees_with_run_on_the_sample() {
    let r = crate::support::run(["list", sample().to_str().unwrap(), "--format", "json"]);
    r.expect_code(0);
    let listed = r.json();
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), EXPECTED.len());
    for (entry, (name, status, reason)) in listed.iter().zip(EXPECTED) {
        assert_eq!(entry["name"], *name);
        let want = if *status == "passed" {
            "supported"
        } else {
            "unsupported"
        };
        assert_eq!(entry["status"], want, "{name}: {entry:#}");
        if let Some(key) = reason {
            let got = entry["reason"].as_str().unwrap_or_default();
            assert!(got.contains(key), "{name}: {got}");
        }
    }
}
