//! `testdata/` is the tool's conformance baseline: every case in it must pass.

use crate::support::{case, cases, count, root, run_json};

#[test]
fn every_case_under_testdata_passes_and_the_run_exits_0() {
    let (code, report) = run_json(&root().join("testdata"), &[]);
    assert_eq!(code, 0, "{report:#}");
    let all = cases(&report);
    let not_passed: Vec<_> = all
        .iter()
        .filter(|c| c["status"] != "passed")
        .map(|c| format!("{} {}: {}", c["name"], c["status"], c["reason"]))
        .collect();
    assert!(not_passed.is_empty(), "{not_passed:#?}");
    assert_eq!(count(&report, "total"), all.len() as u64);
    assert_eq!(count(&report, "passed"), all.len() as u64);
    assert_eq!(count(&report, "not_run"), 0);
    let under = |prefix: &str| {
        all.iter()
            .filter(|c| c["name"].as_str().unwrap().starts_with(prefix))
            .count()
    };
    assert!(
        under("onnx-node/") >= 16,
        "{} onnx-node cases",
        under("onnx-node/")
    );
    assert!(
        under("spec-examples/") >= 12,
        "{} spec-examples cases",
        under("spec-examples/")
    );
}

#[test]
fn every_passing_output_is_compared_and_matches() {
    let (_, report) = run_json(&root().join("testdata"), &[]);
    for c in cases(&report) {
        let sets = c["data_sets"].as_array().unwrap();
        assert!(!sets.is_empty(), "{}: no data set", c["name"]);
        for ds in sets {
            let outputs = ds["outputs"].as_array().unwrap();
            assert!(!outputs.is_empty(), "{}: no output compared", c["name"]);
            for o in outputs {
                assert_eq!(o["status"], "passed", "{}", c["name"]);
                assert_eq!(o["mismatches"], 0, "{}", c["name"]);
                assert_eq!(o["dtype"], o["actual_dtype"], "{}", c["name"]);
                assert_eq!(o["expected_shape"], o["actual_shape"], "{}", c["name"]);
            }
        }
    }
}

#[test]
fn the_new_operators_have_spec_examples_compared_as_d9_says() {
    let (_, report) = run_json(&root().join("testdata/spec-examples"), &[]);
    // (name prefix, cases at least, how float outputs are compared)
    for (prefix, at_least, comparison) in [
        ("openvino_gather8_example", 7, "exact"),
        ("gather_nd_example", 5, "exact"),
        ("scatter_nd_example", 4, "exact"),
        ("scatter_nd_reduction_", 4, "tolerant"),
        ("tensor_scatter_", 2, "exact"),
        // The backward pass adds, so its float outputs get the tolerance.
        ("gather_grad_", 2, "tolerant"),
        ("gather_elements_grad_", 2, "tolerant"),
    ] {
        let matching: Vec<_> = cases(&report)
            .iter()
            .filter(|c| c["name"].as_str().unwrap().starts_with(prefix))
            .collect();
        assert!(matching.len() >= at_least, "{prefix}: {}", matching.len());
        for c in matching {
            assert_eq!(c["status"], "passed", "{c:#}");
            let o = &c["data_sets"][0]["outputs"][0];
            if matches!(o["dtype"].as_str(), Some("float" | "double" | "float16")) {
                assert_eq!(o["comparison"], comparison, "{}", c["name"]);
            }
        }
    }
    let ov = case(&report, "openvino_gather8_example7_opset13");
    assert_eq!(ov["ops"], serde_json::json!(["org.openvinotoolkit.Gather"]));
    assert_eq!(
        ov["opset"],
        serde_json::json!({"ai.onnx": 13, "org.openvinotoolkit": 8})
    );
    let grad = case(&report, "gather_grad_axis0_opset13");
    assert_eq!(
        grad["opset"],
        serde_json::json!({"ai.onnx": 13, "com.microsoft": 1})
    );
}
