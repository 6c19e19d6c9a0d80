//! `testdata/` is the tool's conformance baseline: every case in it must pass.

use crate::support::{cases, count, root, run_json};

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
