//! `run --runtime NAME` with the bundled adapters against the real runtimes, where their packages
//! are installed for `$ONNX_IDX_CHECK_PYTHON` (else `python3`). Every test is `#[ignore]`d with
//! that reason, so a plain `cargo test` counts them as ignored rather than passed; `cargo test
//! --test cli bundled_runtimes -- --include-ignored` runs them, and each says it was skipped for a
//! runtime that is not installed. CI (.ci/run) installs the pinned versions of
//! `scripts/requirements-*.txt`, runs them with `--include-ignored` and sets
//! `ONNX_IDX_CHECK_REQUIRE_RUNTIMES=1`, under which a missing runtime fails instead.
//!
//! The verdicts asserted are the runtimes' own behaviour at the pinned versions, found by running
//! them: what they refuse (with their messages), and the one crash.

use crate::support::{case, command, root};

/// The Python the adapters run with.
fn python() -> String {
    std::env::var("ONNX_IDX_CHECK_PYTHON").unwrap_or_else(|_| "python3".to_string())
}

/// The version of `module` importable by the adapters' Python, or `None` (with the skip said,
/// or a failure when CI requires the runtimes).
fn installed(module: &str, test: &str) -> Option<String> {
    let out = std::process::Command::new(python())
        .args(["-c", &format!("import {module}; print({module}.__version__ if hasattr({module}, '__version__') else {module}.version())")])
        .output();
    match out {
        Ok(o) if o.status.success() => Some(String::from_utf8_lossy(&o.stdout).trim().to_string()),
        _ => {
            assert!(
                std::env::var_os("ONNX_IDX_CHECK_REQUIRE_RUNTIMES").is_none(),
                "{test}: {module} is not importable by {} though ONNX_IDX_CHECK_REQUIRE_RUNTIMES is set",
                python()
            );
            crate::support::skipped(&format!(
                "{test}: SKIPPED: {module} is not importable by {}",
                python()
            ));
            None
        }
    }
}

/// Runs testdata/ through `runtime`; the JSON report.
fn judge(runtime: &str) -> serde_json::Value {
    let out = command()
        .env("ONNX_IDX_CHECK_PYTHON", python())
        .current_dir(root())
        .args(["run", "testdata", "--runtime", runtime, "--format", "json"])
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{runtime}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The refused cases of a report, with the start of each reason.
fn refused(report: &serde_json::Value) -> Vec<String> {
    report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["fault"] == "refused")
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect()
}

const OPENVINO_DIALECT: [&str; 7] = [
    "spec-examples/openvino_gather8_example1_opset13",
    "spec-examples/openvino_gather8_example2_opset13",
    "spec-examples/openvino_gather8_example3_opset13",
    "spec-examples/openvino_gather8_example4_opset13",
    "spec-examples/openvino_gather8_example5_opset13",
    "spec-examples/openvino_gather8_example6_opset13",
    "spec-examples/openvino_gather8_example7_opset13",
];
/// The Gather examples as OpenVINO IR (`model.xml`), which only OpenVINO reads: Gather-1's one,
/// Gather-7's five, Gather-8's seven.
const OPENVINO_IR: [&str; 13] = [
    "openvino-ir/openvino_gather1_example1_ir",
    "openvino-ir/openvino_gather7_example1_ir",
    "openvino-ir/openvino_gather7_example2_ir",
    "openvino-ir/openvino_gather7_example3_ir",
    "openvino-ir/openvino_gather7_example4_ir",
    "openvino-ir/openvino_gather7_example5_ir",
    "openvino-ir/openvino_gather8_example1_ir",
    "openvino-ir/openvino_gather8_example2_ir",
    "openvino-ir/openvino_gather8_example3_ir",
    "openvino-ir/openvino_gather8_example4_ir",
    "openvino-ir/openvino_gather8_example5_ir",
    "openvino-ir/openvino_gather8_example6_ir",
    "openvino-ir/openvino_gather8_example7_ir",
];
const TRAINING: [&str; 4] = [
    "spec-examples/gather_elements_grad_axis0_opset13",
    "spec-examples/gather_elements_grad_axis1_float16_opset13",
    "spec-examples/gather_grad_axis0_opset13",
    "spec-examples/gather_grad_axis1_double_opset13",
];

#[test]
#[ignore = "needs the pinned runtimes of scripts/requirements-*.txt for $ONNX_IDX_CHECK_PYTHON; run with --include-ignored"]
fn onnxruntime_passes_all_but_the_dialects_it_does_not_register() {
    let Some(version) = installed("onnxruntime", "onnxruntime") else {
        return;
    };
    let r = judge("onnxruntime");
    assert_eq!(r["runtime"]["version"], version.as_str());
    // Its bfloat16 Gather runs now: the adapter feeds the bits as an OrtValue.
    assert_eq!(
        case(&r, "spec-examples/gather_bfloat16_opset13")["status"],
        "passed"
    );
    if version == "1.31.1" {
        let mut want: Vec<String> = OPENVINO_DIALECT
            .iter()
            .chain(&OPENVINO_IR)
            .chain(&TRAINING)
            .map(|s| s.to_string())
            .collect();
        want.sort();
        assert_eq!(refused(&r), want);
        assert_eq!(r["summary"]["passed"], 83);
        // An IR is not a protobuf: onnxruntime says so.
        let reason = case(&r, OPENVINO_IR[0])["reason"].as_str().unwrap();
        assert!(reason.contains("INVALID_PROTOBUF"), "{reason}");
        let reason = case(&r, TRAINING[0])["reason"].as_str().unwrap();
        assert!(
            reason.contains("com.microsoft:GatherElementsGrad(-1) is not a registered function/op"),
            "{reason}"
        );
    }
}

#[test]
#[ignore = "needs the pinned runtimes of scripts/requirements-*.txt for $ONNX_IDX_CHECK_PYTHON; run with --include-ignored"]
fn openvino_refuses_tensor_scatter_and_string_scatters() {
    let Some(version) = installed("openvino", "openvino") else {
        return;
    };
    let r = judge("openvino");
    if version == "2026.4.1" {
        assert_eq!(r["summary"]["passed"], 88);
        assert_eq!(r["summary"]["faults"]["refused"], 18);
        // It reads the Gather examples as IR, which its ONNX frontend cannot take in the
        // org.openvinotoolkit dialect, and agrees on all but one. On Gather-8's Example 7 (int64 data [1, 2, 3, 4, 5],
        // indices [3, 10, -20]) its CPU plugin gives the first element right and, for the two
        // indices out of range, values read from outside the data instead of zeros (they change
        // from run to run): the known read past the end of 1-D integer data (README).
        for name in &OPENVINO_IR[..12] {
            assert_eq!(case(&r, name)["status"], "passed", "{name}");
        }
        let seventh = case(&r, OPENVINO_IR[12]);
        assert_eq!(seventh["status"], "failed", "{seventh}");
        let reason = seventh["reason"].as_str().unwrap();
        assert!(
            reason.contains("2 of 3 elements differ; first at [1]: expected 0, got"),
            "{reason}"
        );
        for name in [
            "onnx-node/test_tensorscatter",
            "spec-examples/scatter_elements_string_opset13",
            "spec-examples/tensor_scatter_linear_opset24",
        ] {
            assert_eq!(case(&r, name)["fault"], "refused", "{name}");
        }
    }
}

#[test]
#[ignore = "needs the pinned runtimes of scripts/requirements-*.txt for $ONNX_IDX_CHECK_PYTHON; run with --include-ignored"]
fn tract_crashes_on_a_scatter_nd_max_and_refuses_bfloat16() {
    let Some(version) = installed("tract", "tract") else {
        return;
    };
    let r = judge("tract");
    if version == "0.23.9" {
        let c = case(&r, "spec-examples/scatter_nd_reduction_max_opset18");
        assert_eq!(c["fault"], "crashed");
        let reason = c["reason"].as_str().unwrap();
        // The panic's location and message, kept past the backtrace that follows them.
        assert!(reason.contains("killed by signal 6 (SIGABRT)"), "{reason}");
        assert!(
            reason.contains("scatter_nd.rs:100:22: | assertion failed: index < dim"),
            "{reason}"
        );
        assert_eq!(
            case(&r, "spec-examples/gather_bfloat16_opset13")["fault"],
            "refused"
        );
        assert_eq!(r["summary"]["passed"], 73);
    }
}

#[test]
#[ignore = "needs the pinned runtimes of scripts/requirements-*.txt for $ONNX_IDX_CHECK_PYTHON; run with --include-ignored"]
fn the_reference_evaluator_has_no_scatter_and_no_dialects() {
    let Some(version) = installed("onnx", "onnx-reference") else {
        return;
    };
    let r = judge("onnx-reference");
    if version == "1.23.2" {
        assert_eq!(r["summary"]["passed"], 79);
        let reason = case(&r, "onnx-node/test_scatter_with_axis")["reason"]
            .as_str()
            .unwrap();
        assert!(
            reason.contains("No registered implementation for operator 'Scatter'"),
            "{reason}"
        );
        // A runtime's message is whole in JSON (new-user report 2026-11-27 #2): the evaluator's
        // list of the operators it has runs to the end of the alphabet.
        assert!(reason.ends_with("Where, Xor"), "{reason}");
    }
}

#[test]
#[ignore = "needs the pinned runtimes of scripts/requirements-*.txt for $ONNX_IDX_CHECK_PYTHON; run with --include-ignored"]
fn several_runtimes_make_one_matrix() {
    if installed("onnxruntime", "matrix").is_none() || installed("onnx", "matrix").is_none() {
        return;
    }
    let out = command()
        .env("ONNX_IDX_CHECK_PYTHON", python())
        .current_dir(root())
        .args([
            "run",
            "testdata",
            "--runtime",
            "onnxruntime",
            "--runtime",
            "onnx-reference",
            "--color",
            "never",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    let row = text
        .lines()
        .find(|l| l.starts_with("onnx-node/test_scatter_with_axis "))
        .unwrap_or_else(|| panic!("{text}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        cells,
        ["onnx-node/test_scatter_with_axis", "PASS", "REFUSED"]
    );
    assert!(
        text.lines()
            .next()
            .unwrap()
            .ends_with("onnxruntime  onnx-reference"),
        "{text}"
    );
    assert!(
        text.contains("\n--- onnx-node/test_scatter_with_axis\n    onnx-reference: REFUSED: "),
        "{text}"
    );
}

/// New-user report 2026-11-27 #4: a REPORT.md written for a bundled adapter names the adapter,
/// not the scratch path it ran from (gone by the time anyone reads the report), and says the
/// Python reproducer reads `.pb` files only when it does. onnxruntime's string Gather keeps only
/// the first string of each gathered block (hunt-verification report, O1), so the generated
/// `test_gather_13_string_basic` fails on it.
#[test]
#[ignore = "needs the pinned runtimes (scripts/requirements-*.txt) for $ONNX_IDX_CHECK_PYTHON; run with --include-ignored"]
fn a_minimized_report_names_the_bundled_adapter_not_its_scratch_path() {
    if installed(
        "onnxruntime",
        "a_minimized_report_names_the_bundled_adapter",
    )
    .is_none()
    {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let suite = tmp.path().join("suite");
    let out = command()
        .args(["generate", suite.to_str().unwrap(), "--ops", "Gather"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let min = tmp.path().join("min");
    let out = command()
        .env("ONNX_IDX_CHECK_PYTHON", python())
        .args([
            "minimize",
            suite.join("test_gather_13_string_basic").to_str().unwrap(),
            "--runtime",
            "onnxruntime",
            "--out",
            min.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let report = std::fs::read_to_string(min.join("REPORT.md")).unwrap();
    assert!(
        report.contains("(onnx-idx-check's bundled adapter, `--runtime onnxruntime`)"),
        "{report}"
    );
    assert!(
        !report.contains("onnx-idx-check-"),
        "a scratch path: {report}"
    );
    assert!(
        report.contains("## Reproduce with onnxruntime (Python)"),
        "{report}"
    );
    assert!(
        !report.contains(".pb` files"),
        "every tensor is written out: {report}"
    );
}
