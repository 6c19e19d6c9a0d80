//! `run --batch N`: cases run side by side in shared models through a runtime whose hello says
//! it batches (tests/fixtures/runtime/sharing_runtime.py). The verdicts must be those of the
//! cases run alone, a case that fails in a shared model must be judged alone, and the runtime
//! must have been asked fewer times than there are cases.

use crate::support::{python3, root, run};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// The sharing runtime's command, logging its requests to `log`.
fn sharing(log: &Path) -> String {
    format!(
        "python3 '{}' '{}'",
        root()
            .join("tests/fixtures/runtime/sharing_runtime.py")
            .display(),
        log.display()
    )
}

/// Each case's status and reason in a JSON report.
fn verdicts(report: &Value) -> BTreeMap<String, (String, String)> {
    report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                (
                    c["status"].as_str().unwrap().to_string(),
                    c["reason"].as_str().unwrap_or("").to_string(),
                ),
            )
        })
        .collect()
}

/// The number of outputs of each request the runtime logged.
fn requests(log: &Path) -> Vec<usize> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect()
}

#[test]
fn shared_models_give_the_verdicts_of_cases_run_alone_in_fewer_requests() {
    if !python3("shared_models") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let suite = tmp.path().join("suite");
    run(["generate", suite.to_str().unwrap(), "--ops", "Gather"]).expect_code(0);
    let (alone_log, shared_log) = (tmp.path().join("alone.log"), tmp.path().join("shared.log"));
    let judge = |log: &Path, batch: &str| {
        let cmd = sharing(log);
        let r = run([
            "run",
            suite.to_str().unwrap(),
            "--runtime-cmd",
            &cmd,
            "--batch",
            batch,
            "--format",
            "json",
        ]);
        r.expect_code(1);
        verdicts(&r.json())
    };
    let alone = judge(&alone_log, "1");
    let shared = judge(&shared_log, "16");
    assert_eq!(alone, shared);

    // The runtime's own rules, case by case: every valid int8 case whose output is stored as
    // raw bytes fails (the last byte is its last element's), every valid double case is
    // refused; the others pass.
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(suite.join("MANIFEST.json")).unwrap())
            .unwrap();
    let mut checked = (0, 0);
    for (name, (status, reason)) in &shared {
        let valid = manifest["cases"][name]["expected"] == "passed";
        if valid && name.contains("_int8_") && !name.contains("storage") {
            assert_eq!(status, "failed", "{name}: {reason}");
            assert!(
                !reason.contains("shared model"),
                "{name} was judged alone: {reason}"
            );
            checked.0 += 1;
        } else if valid && name.contains("_double_") {
            assert_eq!(status, "errored", "{name}: {reason}");
            assert!(
                reason.contains("sharing: double not implemented"),
                "{reason}"
            );
            checked.1 += 1;
        } else if valid && !name.contains("_int8_") {
            assert_eq!(status, "passed", "{name}: {reason}");
        }
    }
    assert!(checked.0 >= 2 && checked.1 >= 2, "{checked:?}");

    let (alone, shared) = (requests(&alone_log), requests(&shared_log));
    assert!(alone.iter().all(|&n| n == 1), "{alone:?}");
    assert!(
        shared.len() * 2 < alone.len(),
        "{} requests shared, {} alone",
        shared.len(),
        alone.len()
    );
    assert!(shared.iter().any(|&n| n >= 8), "{shared:?}");
}

#[test]
fn batch_is_refused_without_a_runtime_and_at_zero() {
    let dir = root().join("testdata/onnx-node");
    let d = dir.to_str().unwrap();
    for (args, says) in [
        (vec!["run", d, "--batch", "0"], "--batch 0"),
        (vec!["run", d, "--batch", "4"], "needs a runtime"),
        (
            vec![
                "run",
                d,
                "--batch",
                "4",
                "--runtime-cmd",
                "true",
                "--repeat",
                "2",
            ],
            "--repeat 2",
        ),
    ] {
        let r = run(&args);
        r.expect_code(2);
        assert!(r.stderr.contains(says), "{args:?}: {}", r.stderr);
    }
}
