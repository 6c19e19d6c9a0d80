//! `run --runtime onnxruntime-web`: the bundled onnxruntime-web adapter
//! (crates/checker/src/runtime/adapters/onnxruntime_web.js), a worker of the runtime protocol
//! written in JavaScript, against the real onnxruntime-web on its WebAssembly backend, where Node and the package are installed (the
//! worker finds the package through `$ONNX_IDX_CHECK_NODE_MODULES`, a directory where
//! scripts/requirements-onnxruntime-web.txt was installed with npm, or `NODE_PATH`). `#[ignore]`d
//! as tests/cli/bundled_runtimes.rs is, and named so that the same filter (`bundled_runtimes`)
//! runs it in CI, where `ONNX_IDX_CHECK_REQUIRE_RUNTIMES=1` makes a missing runtime a failure.

use crate::support::{case, cases, command, root};

/// onnxruntime-web's version from the worker's hello, or `None` (with the skip said, or a failure
/// when CI requires the runtimes) when Node or the package is missing.
fn installed(test: &str) -> Option<String> {
    let out = std::process::Command::new("node")
        .arg(root().join("crates/checker/src/runtime/adapters/onnxruntime_web.js"))
        .stdin(std::process::Stdio::null())
        .output();
    let hello: Option<serde_json::Value> = out
        .ok()
        .and_then(|o| serde_json::from_slice(o.stdout.split(|b| *b == b'\n').next()?).ok());
    let why = match &hello {
        Some(h) if h["version"].is_string() => return h["version"].as_str().map(String::from),
        Some(h) => h["error"].to_string(),
        None => "node did not run the worker".to_string(),
    };
    assert!(
        std::env::var_os("ONNX_IDX_CHECK_REQUIRE_RUNTIMES").is_none(),
        "{test}: onnxruntime-web cannot run though ONNX_IDX_CHECK_REQUIRE_RUNTIMES is set: {why}"
    );
    crate::support::skipped(&format!("{test}: SKIPPED: {why}"));
    None
}

#[test]
#[ignore = "needs node and onnxruntime-web (scripts/requirements-onnxruntime-web.txt, $ONNX_IDX_CHECK_NODE_MODULES); run with --include-ignored"]
fn onnxruntime_web_passes_all_but_dialects_ir_and_bfloat16() {
    let test = "onnxruntime_web_passes_all_but_dialects_ir_and_bfloat16";
    let Some(version) = installed(test) else {
        return;
    };
    let out = command()
        .args([
            "run",
            "testdata",
            "--runtime",
            "onnxruntime-web",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["runtime"]["name"], "onnxruntime-web");
    assert_eq!(r["runtime"]["version"], version.as_str());
    if version != "1.30.0" {
        return;
    }
    // What it refuses, by the reason each kind gives: OpenVINO's IR (not a protobuf), the
    // org.openvinotoolkit and com.microsoft dialects (no kernels in onnxruntime-web), and
    // bfloat16, which onnxruntime-web cannot describe though onnxruntime runs it.
    let mut refused = 0;
    for c in cases(&r) {
        let name = c["name"].as_str().unwrap();
        let reason = c["reason"].as_str().unwrap_or("");
        let want = if name.starts_with("openvino-ir/") {
            Some("protobuf parsing failed")
        } else if name.contains("openvino_gather8") || name.contains("_grad_") {
            Some("is not a registered function/op")
        } else if name == "spec-examples/gather_bfloat16_opset13" {
            Some("unsupported data type: 16")
        } else {
            None
        };
        match want {
            Some(text) => {
                refused += 1;
                assert_eq!(c["fault"], "refused", "{name}: {c}");
                assert!(reason.contains(text), "{name}: {reason}");
            }
            None => assert_eq!(c["status"], "passed", "{name}: {c}"),
        }
    }
    assert_eq!(refused, 25);
    assert_eq!(r["summary"]["passed"], 82);
    assert_eq!(
        case(&r, "onnx-node/test_gather_0")["status"],
        "passed",
        "{r}"
    );
}
