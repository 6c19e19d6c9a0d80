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
        .args(["-c", &format!("import {module}; print(getattr({module}, '__version__', None) or ({module}.version() if hasattr({module}, 'version') else 'installed'))")])
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
        // from run to run): the known read past the end of 1-D integer data (docs/guide/hunt.md).
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
        report.contains("the bundled adapter of onnx-idx-check 0.1.0, `--runtime onnxruntime`)"),
        "{report}"
    );
    assert!(
        !report.contains("onnx-idx-check-"),
        "a scratch path: {report}"
    );
    assert!(
        report.contains("## Reproduce (onnxruntime, Python)"),
        "{report}"
    );
    assert!(
        !report.contains(".pb` files"),
        "every tensor is written out: {report}"
    );
}

/// Writes a one-node case with `$ONNX_IDX_CHECK_PYTHON`'s onnx: `script` builds `node`, the
/// graph `inputs` (name, numpy value) and `opset`; the helper writes model.onnx and the inputs.
fn python_case(dir: &std::path::Path, script: &str) {
    let prelude = "import numpy as np, onnx, os, sys\nfrom onnx import helper, numpy_helper, TensorProto as T\n";
    let epilogue = r#"
d = sys.argv[1]
os.makedirs(os.path.join(d, "test_data_set_0"))
def vi(n, a):
    t = T.STRING if a.dtype == object else helper.np_dtype_to_tensor_dtype(a.dtype)
    return helper.make_tensor_value_info(n, t, a.shape)
g = helper.make_graph([node], "g", [vi(n, a) for n, a in inputs], [helper.make_tensor_value_info(o, out_type, None) for o in node.output])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]), os.path.join(d, "model.onnx"))
for k, (n, a) in enumerate(inputs):
    onnx.save_tensor(numpy_helper.from_array(a, n), os.path.join(d, "test_data_set_0", f"input_{k}.pb"))
"#;
    let out = std::process::Command::new(python())
        .args([
            "-c",
            &format!("{prelude}{script}{epilogue}"),
            dir.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Issue 31, honest reports: `minimize` against the real runtimes writes a REPORT.md a
/// maintainer can file (a title naming the bug, an environment, the spec's own text, no
/// temporary path), and its Python reproducer, run standalone with `$ONNX_IDX_CHECK_PYTHON`
/// from a directory of its own, exits 1 and prints the bug it reports. The hunt's reproducers
/// are meant to be run by this same check (`reproducer_shows_its_bug`).
#[test]
#[ignore = "needs the pinned runtimes (scripts/requirements-*.txt) for $ONNX_IDX_CHECK_PYTHON; run with --include-ignored"]
fn minimized_reports_are_ready_to_file_and_their_reproducers_show_the_bug() {
    let test = "minimized_reports_are_ready_to_file";
    // (runtime, module, case script, words the report's title holds, what the reproducer prints)
    let cases = [
        (
            "onnxruntime",
            "onnxruntime",
            // Hunt-verification report O1: only the first string of each gathered block.
            "node = helper.make_node('Gather', ['data', 'indices'], ['output'])\ninputs = [('data', np.array([['a', 'bb'], ['c', 'dd']], dtype=object)), ('indices', np.array([1, 0], dtype=np.int64))]\nout_type, opset = T.STRING, 13\n",
            "Gather-13 on string data returns empty strings in",
            "BUG: wrong output",
        ),
        (
            "tract",
            "tract",
            // T4: a valid negative GatherND index panics (`index < dim`).
            "node = helper.make_node('GatherND', ['data', 'indices'], ['output'])\ninputs = [('data', np.array([[1, 2], [3, 4], [5, 6]], dtype=np.float32)), ('indices', np.array([[-1, 0]], dtype=np.int64))]\nout_type, opset = T.FLOAT, 13\n",
            "GatherND-13 on float data crashes",
            "BUG: the process running the model died: SIGABRT",
        ),
        (
            "onnxruntime",
            "onnxruntime",
            // D8: onnxruntime has no float16 `add` reduction for ScatterElements.
            "node = helper.make_node('ScatterElements', ['data', 'indices', 'updates'], ['output'], reduction='add')\ninputs = [('data', np.array([1, 2, 3], dtype=np.float16)), ('indices', np.array([0], dtype=np.int64)), ('updates', np.array([1], dtype=np.float16))]\nout_type, opset = T.FLOAT16, 16\n",
            "ScatterElements-16 on float16 data refuses valid input",
            "BUG: valid input refused:",
        ),
        (
            "onnxruntime",
            "onnxruntime",
            // O6: a negative index at Gather-1 is out of range by decision D2 only.
            "node = helper.make_node('Gather', ['data', 'indices'], ['output'])\ninputs = [('data', np.array([1, 2, 3], dtype=np.float32)), ('indices', np.array([-1], dtype=np.int64))]\nout_type, opset = T.FLOAT, 1\n",
            "returns an output where onnx-idx-check's decision D2 requires an error",
            "BUG: an output where an error is required",
        ),
        (
            "tvm",
            "tvm",
            // TVM writes to the wrong elements when the indices are smaller than the data off
            // the axis (every version, ranks 3 to 6).
            "node = helper.make_node('ScatterElements', ['data', 'indices', 'updates'], ['output'], axis=0)\ninputs = [('data', np.arange(1, 9, dtype=np.int32).reshape(2, 2, 2)), ('indices', np.array([[[0], [1]]], dtype=np.int64)), ('updates', np.array([[[101], [102]]], dtype=np.int32))]\nout_type, opset = T.INT32, 11\n",
            "ScatterElements-11 on int32 data returns wrong values",
            "BUG: wrong output",
        ),
        (
            "iree",
            "iree.runtime",
            // IREE demotes float64 to float32 inside a function whose buffers stay float64.
            "node = helper.make_node('ScatterElements', ['data', 'indices', 'updates'], ['output'], axis=1)\ninputs = [('data', np.arange(1, 9, dtype=np.float64).reshape(2, 4)), ('indices', np.array([[0, 2], [1, 3]], dtype=np.int64)), ('updates', np.array([[101, 103], [102, 104]], dtype=np.float64))]\nout_type, opset = T.DOUBLE, 13\n",
            "ScatterElements-13 on double data returns wrong values",
            "BUG: wrong output",
        ),
        (
            "tinygrad",
            "tinygrad",
            // tinygrad's `add` widens int8 to int32.
            "node = helper.make_node('ScatterElements', ['data', 'indices', 'updates'], ['output'], axis=1, reduction='add')\ninputs = [('data', np.array([[1, 2]], dtype=np.int8)), ('indices', np.array([[0]], dtype=np.int64)), ('updates', np.array([[101]], dtype=np.int8))]\nout_type, opset = T.INT8, 16\n",
            "ScatterElements-16 on int8 data returns int32 instead of int8",
            "BUG: wrong output",
        ),
    ];
    let tmp = tempfile::tempdir().unwrap();
    for (k, (runtime, module, script, title, shows)) in cases.into_iter().enumerate() {
        if installed(module, test).is_none() {
            continue;
        }
        let case = tmp.path().join(format!("case{k}"));
        python_case(&case, script);
        let min = tmp.path().join(format!("min{k}"));
        let out = command()
            .env("ONNX_IDX_CHECK_PYTHON", python())
            .args([
                "minimize",
                case.to_str().unwrap(),
                "--runtime",
                runtime,
                "--out",
                min.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{runtime} {title}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let report = std::fs::read_to_string(min.join("REPORT.md")).unwrap();
        let first = report.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("# ") && first.contains(title),
            "{runtime}: title {first:?}\n{report}"
        );
        for part in [
            "## Environment",
            "- Python ",
            "- OS: ",
            "- CPU: ",
            "## What decides it",
            "> ",
        ] {
            assert!(
                report.contains(part),
                "{runtime} {title}: no {part:?}\n{report}"
            );
        }
        assert!(
            !report.contains("/tmp/"),
            "{runtime} {title}: a temporary path\n{report}"
        );
        assert!(
            !report.contains("the spec requires"),
            "{runtime} {title}: {report}"
        );
        if title.contains("decision D2") {
            assert!(report.contains("onnx-idx-check's decision D2"), "{report}");
            assert!(
                report.contains("docs/semantics.md#d2-negative-indices-before-opset-11"),
                "{report}"
            );
        }
        let repro = reproducer_of(&report);
        assert!(
            !repro.contains("/tmp/"),
            "{runtime} {title}: a temporary path\n{repro}"
        );
        reproducer_shows_its_bug(&min, &repro, shows);
    }
}

/// The Python block of a REPORT.md.
pub fn reproducer_of(report: &str) -> String {
    let start = report.find("```python\n").expect("no Python reproducer") + "```python\n".len();
    let len = report[start..].find("\n```").expect("an unclosed block");
    report[start..start + len + 1].to_string()
}

/// Runs `repro` (written into `case_dir`, the finding's directory, and run from there with
/// `$ONNX_IDX_CHECK_PYTHON`) and checks it exits 1 and prints `shows`.
pub fn reproducer_shows_its_bug(case_dir: &std::path::Path, repro: &str, shows: &str) {
    let file = case_dir.join("repro.py");
    std::fs::write(&file, repro).unwrap();
    let out = std::process::Command::new(python())
        .arg(&file)
        .current_dir(case_dir)
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(1), "{}: {said}", file.display());
    assert!(
        said.contains(shows),
        "{}: no {shows:?} in\n{said}",
        file.display()
    );
}

/// Issue 31: every reproducer a hunt writes shows its bug when run standalone. A hunt of the first
/// 120 Gather cases against onnxruntime finds the string Gather bug, the D2 negative index at
/// Gather-1 and whatever else it finds; every finding's REPORT.md names no temporary path and its
/// reproducer exits 1.
#[test]
#[ignore = "needs the pinned runtimes (scripts/requirements-*.txt) for $ONNX_IDX_CHECK_PYTHON; run with --include-ignored"]
fn every_reproducer_a_hunt_writes_shows_its_bug() {
    if installed("onnxruntime", "every_reproducer_a_hunt_writes").is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("hunt");
    let done = command()
        .timeout(std::time::Duration::from_secs(900))
        .env("ONNX_IDX_CHECK_PYTHON", python())
        .args([
            "hunt",
            "--runtime",
            "onnxruntime",
            "--ops",
            "Gather",
            "--max-cases",
            "120",
            "--time",
            "900",
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&done.stdout);
    assert!(
        done.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let findings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("findings.json")).unwrap()).unwrap();
    let list = findings.as_array().unwrap();
    assert!(
        list.iter()
            .any(|f| f["class"] == "wrong-output" && f["dtypes"][0] == "string"),
        "no string Gather finding: {stdout}"
    );
    for f in list {
        let dir = out.join(f["case"].as_str().unwrap());
        let report = std::fs::read_to_string(dir.join("REPORT.md")).unwrap();
        assert!(!report.contains("/tmp/"), "a temporary path\n{report}");
        let shows = match f["class"].as_str().unwrap() {
            "crash" => "BUG: the process running the model died",
            "refuses-valid" => "BUG: valid input refused",
            "accepts-invalid" | "unsafe" => "BUG: an output where an error is required",
            _ => "BUG:",
        };
        reproducer_shows_its_bug(&dir, &reproducer_of(&report), shows);
    }
}

/// Issue 31: valid cases share models (one load and compile for many), and that finds what
/// cases run one by one find. The same 200 cases of Gather and GatherElements hunted in
/// onnxruntime with `--batch 1` and with the default batches give the same findings (class,
/// operator, data types), and the default run judged most of its cases in shared models.
#[test]
#[ignore = "needs the pinned runtimes (scripts/requirements-*.txt) for $ONNX_IDX_CHECK_PYTHON; run with --include-ignored"]
fn batched_cases_find_what_cases_run_alone_find() {
    if installed(
        "onnxruntime",
        "batched_cases_find_what_cases_run_alone_find",
    )
    .is_none()
    {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let hunt = |extra: &[&str]| {
        let out = tmp.path().join(format!("hunt{}", extra.len()));
        let done = command()
            .timeout(std::time::Duration::from_secs(900))
            .env("ONNX_IDX_CHECK_PYTHON", python())
            .args([
                "hunt",
                "--runtime",
                "onnxruntime",
                "--ops",
                "Gather,GatherElements",
            ])
            .args(["--max-cases", "200", "--time", "900", "--out"])
            .arg(&out)
            .args(extra)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&done.stdout).into_owned();
        assert!(done.status.success(), "{stdout}");
        let findings: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("findings.json")).unwrap())
                .unwrap();
        let mut found: Vec<String> = findings
            .as_array()
            .unwrap()
            .iter()
            .map(|f| format!("{} {} {}", f["class"], f["op"], f["dtypes"]))
            .collect();
        found.sort();
        (found, stdout)
    };
    let (alone, alone_out) = hunt(&["--batch", "1"]);
    let (batched, batched_out) = hunt(&[]);
    assert_eq!(
        alone, batched,
        "--batch 1:\n{alone_out}\nbatched:\n{batched_out}"
    );
    assert!(!alone.is_empty(), "{alone_out}");
    assert!(!alone_out.contains("shared model"), "{alone_out}");
    let shared = regex::Regex::new(
        r"cases tried \((\d+) of them agreed in shared models; (\d+) shared models run\)",
    )
    .unwrap()
    .captures(&batched_out)
    .unwrap_or_else(|| panic!("no batches: {batched_out}"));
    let in_batches: u32 = shared[1].parse().unwrap();
    assert!(in_batches >= 100, "{batched_out}");
}

/// Issue 31: the modes a hunt runs the bundled runtimes in start and run a case:
/// onnxruntime with its graph optimizations disabled, OpenVINO without its f32 precision hint;
/// an option value the adapter does not know is refused at the start, naming the ones it knows.
#[test]
#[ignore = "needs the pinned runtimes (scripts/requirements-*.txt) for $ONNX_IDX_CHECK_PYTHON; run with --include-ignored"]
fn the_second_modes_of_onnxruntime_and_openvino_start_and_run_a_case() {
    let case = "testdata/spec-examples/gather_doc_example1_axis0_opset11";
    let run = |runtime: &str| {
        command()
            .env("ONNX_IDX_CHECK_PYTHON", python())
            .current_dir(root())
            .args(["run", case, "--runtime", runtime, "--format", "json"])
            .output()
            .unwrap()
    };
    for (module, runtime, bad, known) in [
        (
            "onnxruntime",
            "onnxruntime:optimization=disabled",
            "onnxruntime:optimization=none",
            "one of all, extended, basic, disabled",
        ),
        (
            "openvino",
            "openvino:precision=default",
            "openvino:precision=f16",
            "f32 or default",
        ),
    ] {
        if installed(module, runtime).is_none() {
            continue;
        }
        let out = run(runtime);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{runtime}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["summary"]["passed"], 1, "{runtime}: {report}");
        let out = run(bad);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(known), "{bad}: {stderr}");
    }
}
