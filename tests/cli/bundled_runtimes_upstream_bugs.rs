//! upstream-bugs/ (the minimal cases of the upstream bugs docs/upstream-bugs.md follows, written by
//! scripts/upstream_bugs.py) through every bundled runtime: each bug's fate at the pinned version
//! becomes a regression check. A bug still there keeps failing (or crashing, or being refused, as
//! observed); a fixed one keeps passing; a runtime at another version only gets its report printed.
//! `#[ignore]`d as tests/cli/bundled_runtimes.rs is and named so that its CI filter
//! (`bundled_runtimes`) runs them: a runtime that cannot start is a visible SKIPPED, or a failure
//! under `ONNX_IDX_CHECK_REQUIRE_RUNTIMES=1`. The Python runtimes run with `$ONNX_IDX_CHECK_PYTHON`
//! (CI: one venv holding them all; locally one venv per runtime works as well), onnxruntime-web
//! with Node and `$ONNX_IDX_CHECK_NODE_MODULES`.
//!
//! Plus, not ignored: onnx-idx-check's own kernels pass every case, so the hand-worked expected
//! values and the kernels agree.

use crate::support::{case, cases, command, count, root};

/// What `runtime` does with upstream-bugs/ at version `pinned`: every case not listed passes;
/// a listed one ends as its `(status or fault, a piece of its reason)`.
struct Fates {
    runtime: &'static str,
    pinned: &'static str,
    not_passed: &'static [(&'static str, &'static str, &'static str)],
}

/// The NaN twins of iree-org/iree#24503 (ScatterElements and ScatterND max/min with a NaN in the
/// data and in the updates): NaN must propagate. Runtimes that let the update win, keep the
/// current value or drop the NaN fail them.
const NAN_TWINS: [&str; 8] = [
    "iree-24503-scatterelements-max-nan-const",
    "iree-24503-scatterelements-max-nan-input",
    "iree-24503-scatterelements-min-nan-const",
    "iree-24503-scatterelements-min-nan-input",
    "iree-24503-scatternd-max-nan-const",
    "iree-24503-scatternd-max-nan-input",
    "iree-24503-scatternd-min-nan-const",
    "iree-24503-scatternd-min-nan-input",
];

/// Every NaN twin failed, with `got` in the reason of each.
macro_rules! nan_twins_fail {
    ($elements:literal, $nd_elements:literal) => {
        [
            (NAN_TWINS[0], "failed", $elements),
            (NAN_TWINS[1], "failed", $elements),
            (NAN_TWINS[2], "failed", $elements),
            (NAN_TWINS[3], "failed", $elements),
            (NAN_TWINS[4], "failed", $nd_elements),
            (NAN_TWINS[5], "failed", $nd_elements),
            (NAN_TWINS[6], "failed", $nd_elements),
            (NAN_TWINS[7], "failed", $nd_elements),
        ]
    };
}

/// onnxruntime's `cur > upd ? cur : upd` lets the update win whenever a NaN is compared: the NaN
/// in the data is lost (`[1, NaN]`).
const UPDATE_WINS: [(&str, &str, &str); 8] =
    nan_twins_fail!("expected NaN, got 1.0", "expected NaN, got 1.0");
/// OpenVINO and tract keep the current value when the update is NaN (`[NaN, 2]`).
const NAN_UPDATE_LOST: [(&str, &str, &str); 8] =
    nan_twins_fail!("expected NaN, got 2.0", "expected NaN, got 2.0");

const ONNXRUNTIME: Fates = Fates {
    runtime: "onnxruntime",
    pinned: "1.31.1",
    not_passed: &UPDATE_WINS,
};
const OPENVINO: Fates = Fates {
    runtime: "openvino",
    pinned: "2026.4.1",
    not_passed: &NAN_UPDATE_LOST,
};
const TRACT: Fates = Fates {
    runtime: "tract",
    pinned: "0.23.9",
    not_passed: &[
        (NAN_TWINS[0], "failed", "expected NaN, got 2.0"),
        (NAN_TWINS[1], "failed", "expected NaN, got 2.0"),
        (NAN_TWINS[2], "failed", "expected NaN, got 2.0"),
        (NAN_TWINS[3], "failed", "expected NaN, got 2.0"),
        (NAN_TWINS[4], "failed", "expected NaN, got 2.0"),
        (NAN_TWINS[5], "failed", "expected NaN, got 2.0"),
        (NAN_TWINS[6], "failed", "expected NaN, got 2.0"),
        (NAN_TWINS[7], "failed", "expected NaN, got 2.0"),
        // tract has tvm#20217's bug in its own way: a negative GatherND index panics, a
        // negative ScatterND index is refused as out of bounds.
        (
            "tinygrad-8241-gathernd-batchdims-const",
            "crashed",
            "index < dim",
        ),
        (
            "tinygrad-8241-gathernd-batchdims-input",
            "crashed",
            "index < dim",
        ),
        (
            "tvm-20217-gathernd-negative-const",
            "crashed",
            "index < dim",
        ),
        (
            "tvm-20217-gathernd-negative-input",
            "crashed",
            "index < dim",
        ),
        (
            "tvm-20217-scatternd-negative-const",
            "refused",
            "index -1 out of bounds",
        ),
        (
            "tvm-20217-scatternd-negative-input",
            "refused",
            "index -1 out of bounds",
        ),
    ],
};
const ONNX_REFERENCE: Fates = Fates {
    runtime: "onnx-reference",
    pinned: "1.23.2",
    // Its ScatterElements keeps the current value when the update is NaN; its ScatterND
    // (numpy's maximum/minimum) propagates.
    not_passed: &[
        (NAN_TWINS[0], "failed", "expected NaN, got 2.0"),
        (NAN_TWINS[1], "failed", "expected NaN, got 2.0"),
        (NAN_TWINS[2], "failed", "expected NaN, got 2.0"),
        (NAN_TWINS[3], "failed", "expected NaN, got 2.0"),
    ],
};
/// apache/tvm#20217, #19435 and #19531 are fixed in 0.27: all their cases pass.
const TVM: Fates = Fates {
    runtime: "tvm",
    pinned: "0.27.0.post1",
    not_passed: &UPDATE_WINS,
};
/// IREE propagates NaN through ScatterND max/min (iree-org/iree#24503's arith.maximumf, which
/// numpy and semantics D8 agree with) and refuses ScatterElements max/min.
const IREE: Fates = Fates {
    runtime: "iree",
    pinned: "3.13.0",
    not_passed: &[
        (
            NAN_TWINS[0],
            "refused",
            "failed to legalize operation 'torch.operator'",
        ),
        (
            NAN_TWINS[1],
            "refused",
            "failed to legalize operation 'torch.operator'",
        ),
        (
            NAN_TWINS[2],
            "refused",
            "failed to legalize operation 'torch.operator'",
        ),
        (
            NAN_TWINS[3],
            "refused",
            "failed to legalize operation 'torch.operator'",
        ),
        (
            "tvm-19435-scatterelements-max-const",
            "refused",
            "torch.onnx.reduction = \"max\"",
        ),
        (
            "tvm-19435-scatterelements-max-input",
            "refused",
            "torch.onnx.reduction = \"max\"",
        ),
    ],
};
/// tinygrad's Gather still takes a path of its own for constant indices (tinygrad#14185), which
/// breaks on indices of rank 2; its ScatterND (tinygrad#8241) loses an update that repeats an
/// index within one row of the indices (1 + 20 + 40 instead of 1 + 10 + 20 + 40); NaN is dropped
/// by ScatterElements max/min both ways and by ScatterND when it is the update.
const TINYGRAD: Fates = Fates {
    runtime: "tinygrad",
    pinned: "0.14.0",
    not_passed: &[
        (NAN_TWINS[0], "failed", "expected NaN, got 1.0"),
        (NAN_TWINS[1], "failed", "expected NaN, got 1.0"),
        (NAN_TWINS[2], "failed", "expected NaN, got 1.0"),
        (NAN_TWINS[3], "failed", "expected NaN, got 1.0"),
        (NAN_TWINS[4], "failed", "expected NaN, got 2.0"),
        (NAN_TWINS[5], "failed", "expected NaN, got 2.0"),
        (NAN_TWINS[6], "failed", "expected NaN, got 2.0"),
        (NAN_TWINS[7], "failed", "expected NaN, got 2.0"),
        (
            "tinygrad-14185-gather-2d-const",
            "refused",
            "'<' not supported between instances of 'list' and 'int'",
        ),
        (
            "onnxruntime-web-16855-gather-int32-negative-const",
            "refused",
            "'<' not supported between instances of 'list' and 'int'",
        ),
        (
            "onnxruntime-web-16855-gather-int64-negative-const",
            "refused",
            "'<' not supported between instances of 'list' and 'int'",
        ),
        (
            "tinygrad-8241-scatternd-add-duplicates-const",
            "failed",
            "expected 71.0, got 61.0",
        ),
        (
            "tinygrad-8241-scatternd-add-duplicates-input",
            "failed",
            "expected 71.0, got 61.0",
        ),
    ],
};
/// microsoft/onnxruntime#16855 and #32731 live in the WebGPU backend, which Node does not reach:
/// on WebAssembly their cases pass.
const ONNXRUNTIME_WEB: Fates = Fates {
    runtime: "onnxruntime-web",
    pinned: "1.30.0",
    not_passed: &UPDATE_WINS,
};

/// Runs upstream-bugs/ through `fates.runtime` and checks the fates when the runtime is at its
/// pinned version. Skips (or fails, under `ONNX_IDX_CHECK_REQUIRE_RUNTIMES`) when it cannot start.
fn check(fates: &Fates) {
    let runtime = fates.runtime;
    let out = command()
        .current_dir(root())
        .args([
            "run",
            "upstream-bugs",
            "--runtime",
            runtime,
            "--format",
            "json",
        ])
        // IREE compiles each of the cases for seconds, on a busy machine more.
        .timeout(std::time::Duration::from_secs(900))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(2) && stderr.contains("could not start") {
        assert!(
            std::env::var_os("ONNX_IDX_CHECK_REQUIRE_RUNTIMES").is_none(),
            "{}: the runtime cannot start though ONNX_IDX_CHECK_REQUIRE_RUNTIMES is set: {stderr}",
            fates.runtime
        );
        crate::support::skipped(&format!(
            "upstream bugs through {}: SKIPPED: {}",
            fates.runtime,
            stderr.trim()
        ));
        return;
    }
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}: exit status {:?}: {stderr}",
        fates.runtime,
        out.status
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["runtime"]["name"], fates.runtime);
    let version = r["runtime"]["version"].as_str().unwrap_or_default();
    if version != fates.pinned {
        crate::support::skipped(&format!(
            "upstream bugs through {} {version}: not the pinned {}, fates not checked: {}",
            fates.runtime, fates.pinned, r["summary"]
        ));
        return;
    }
    assert_eq!(cases(&r).len(), case_dirs().len(), "every case ran");
    for c in cases(&r) {
        let name = c["name"].as_str().unwrap();
        let status = c["status"].as_str().unwrap();
        let verdict = c["fault"].as_str().unwrap_or(status);
        let reason = c["reason"].as_str().unwrap_or_default();
        match fates.not_passed.iter().find(|(n, _, _)| *n == name) {
            None => assert_eq!(
                status, "passed",
                "{} {version}: {name} no longer passes: {reason}",
                fates.runtime
            ),
            Some((_, want, piece)) => {
                assert_eq!(
                    verdict, *want,
                    "{} {version}: {name} changed fate (a bug fixed, or a new one): {reason}",
                    fates.runtime
                );
                assert!(
                    reason.contains(piece),
                    "{} {version}: {name}: {reason:?} does not say {piece:?}",
                    fates.runtime
                );
            }
        }
    }
    for (name, _, _) in fates.not_passed {
        case(&r, name);
    }
}

/// The case directories under upstream-bugs/, sorted.
fn case_dirs() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root().join("upstream-bugs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("model.onnx").is_file())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn upstream_bug_cases_pass_without_a_runtime() {
    let dirs = case_dirs();
    // Two forms (indices as an input and as an initializer) of each of the 17 triggers.
    assert_eq!(dirs.len(), 34, "{dirs:?}");
    let out = command()
        .current_dir(root())
        .args(["run", "upstream-bugs", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(count(&r, "passed"), 34);
    let names: Vec<&str> = cases(&r)
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, dirs);
}

#[test]
#[ignore = "needs the pinned runtimes of scripts/requirements-*.txt for $ONNX_IDX_CHECK_PYTHON; run with --include-ignored"]
fn upstream_bugs_through_onnxruntime() {
    check(&ONNXRUNTIME);
}

#[test]
#[ignore = "needs the pinned runtimes of scripts/requirements-*.txt for $ONNX_IDX_CHECK_PYTHON; run with --include-ignored"]
fn upstream_bugs_through_openvino() {
    check(&OPENVINO);
}

#[test]
#[ignore = "needs the pinned runtimes of scripts/requirements-*.txt for $ONNX_IDX_CHECK_PYTHON; run with --include-ignored"]
fn upstream_bugs_through_tract() {
    check(&TRACT);
}

#[test]
#[ignore = "needs the pinned runtimes of scripts/requirements-*.txt for $ONNX_IDX_CHECK_PYTHON; run with --include-ignored"]
fn upstream_bugs_through_the_reference_evaluator() {
    check(&ONNX_REFERENCE);
}

#[test]
#[ignore = "needs the pinned runtimes of scripts/requirements-*.txt for $ONNX_IDX_CHECK_PYTHON; run with --include-ignored"]
fn upstream_bugs_through_tvm() {
    check(&TVM);
}

#[test]
#[ignore = "needs the pinned runtimes of scripts/requirements-*.txt for $ONNX_IDX_CHECK_PYTHON; run with --include-ignored"]
fn upstream_bugs_through_iree() {
    check(&IREE);
}

#[test]
#[ignore = "needs the pinned runtimes of scripts/requirements-*.txt for $ONNX_IDX_CHECK_PYTHON; run with --include-ignored"]
fn upstream_bugs_through_tinygrad() {
    check(&TINYGRAD);
}

#[test]
#[ignore = "needs node and onnxruntime-web (scripts/requirements-onnxruntime-web.txt, $ONNX_IDX_CHECK_NODE_MODULES); run with --include-ignored"]
fn upstream_bugs_through_onnxruntime_web() {
    check(&ONNXRUNTIME_WEB);
}
