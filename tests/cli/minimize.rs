//! `minimize CASE --runtime-cmd ...` against tests/fixtures/runtime/buggy_runtime.py, a runtime
//! right everywhere but where float data is gathered with the index 3 (the last bit of its
//! output flipped): shrinking must keep that index, and the written case must reproduce.

use crate::support::{root, run};
use serde_json::Value;

/// The `--runtime-cmd` of the buggy fixture, its bug on index `trigger`.
pub fn buggy(trigger: i64) -> String {
    format!(
        "python3 {} --trigger {trigger}",
        root()
            .join("tests/fixtures/runtime/buggy_runtime.py")
            .display()
    )
}

#[test]
fn minimize_shrinks_a_gather_case_to_the_index_that_matters_and_the_case_reproduces() {
    if !crate::support::python3("minimize") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("min");
    let r = run([
        "minimize",
        "testdata/onnx-node/test_gather_0",
        "--runtime-cmd",
        &buggy(3),
        "--out",
        out.to_str().unwrap(),
    ]);
    r.expect_code(0);
    // data [5, 4, 3, 2] with indices [0, 1, 3]: the index 3 alone stays, with data up to it.
    assert!(
        r.stdout
            .contains("data [5, 4, 3, 2] indices [3] -> data [4] indices []"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("123 -> 5 elements"), "{}", r.stdout);
    assert!(
        r.stdout.contains("keeps:    failed (diagnosis: none)"),
        "{}",
        r.stdout
    );
    let md = std::fs::read_to_string(out.join("REPORT.md")).unwrap();
    for section in [
        "# buggy 0.1: Gather-13 on float data returns wrong values in 1 of 1 output elements\n",
        "**Wrong output** (`wrong-output`).",
        "## Environment\n\n- Runtime: buggy 0.1 (`--runtime-cmd python3 ",
        "- OS: ",
        "One `Gather` node (ai.onnx), opset 13 (Gather-13), attributes: axis=0",
        "- `data`: float [4] = [1.0, 2.0, 3.0, 4.0]",
        "- `indices`: int64 [] = [3]",
        "## Expected\n\n- `y`: float [] = [4.0]",
        // 4.0f32 with the last bit of its raw_data flipped: 0x41800000.
        "## Actual (buggy 0.1)\n\n- `y`: float [] = [16.0]",
        // Gather-13's own text, as onnx.defs.get_schema("Gather", 13) gives it.
        "## What decides it",
        "> `indices`: Tensor of int32/int64 indices, of any rank q. All index values are expected to be within bounds [-s, s-1] along axis of size s. It is an error if any of the index values are out of bounds.",
        "in this directory, `onnx-idx-check run . --runtime-cmd ",
    ] {
        assert!(md.contains(section), "REPORT.md lacks {section:?}:\n{md}");
    }
    // No tool section for a maintainer who lacks the tool, and no diagnosis line without one.
    assert!(!md.contains("## Reproduce with onnx-idx-check"), "{md}");
    assert!(!md.contains("Diagnosis:"), "{md}");
    // The written case fails the same way when run on its own.
    let again = run([
        "run",
        out.to_str().unwrap(),
        "--runtime-cmd",
        &buggy(3),
        "--format",
        "json",
    ]);
    again.expect_code(1);
    let report: Value = serde_json::from_str(&again.stdout).unwrap();
    let case = &report["cases"][0];
    assert_eq!(case["status"], "failed", "{case}");
    // With the bug on another index, the same case passes: the index is what matters.
    run(["run", out.to_str().unwrap(), "--runtime-cmd", &buggy(2)]).expect_code(0);
    // A second minimization may replace the first.
    run([
        "minimize",
        out.to_str().unwrap(),
        "--runtime-cmd",
        &buggy(3),
        "--out",
        out.to_str().unwrap(),
    ]);
}

#[test]
fn minimize_exits_1_when_the_runtime_agrees() {
    if !crate::support::python3("minimize") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("min");
    let r = run([
        "minimize",
        "testdata/onnx-node/test_gather_0",
        "--runtime-cmd",
        &buggy(999),
        "--out",
        out.to_str().unwrap(),
    ]);
    r.expect_code(1);
    assert!(r.stdout.contains("nothing to minimize"), "{}", r.stdout);
    assert!(!out.exists());
}

#[test]
fn minimize_refuses_bad_arguments_with_exit_2() {
    let r = run(["minimize", "testdata/onnx-node/test_gather_0"]);
    r.expect_code(2);
    let tmp = tempfile::tempdir().unwrap();
    let r = run([
        "minimize",
        tmp.path().to_str().unwrap(),
        "--runtime-cmd",
        "true",
    ]);
    r.expect_code(2);
    // An --out holding something else is not overwritten.
    std::fs::write(tmp.path().join("notes.txt"), "mine").unwrap();
    let r = run([
        "minimize",
        "testdata/onnx-node/test_gather_0",
        "--runtime-cmd",
        "true",
        "--out",
        tmp.path().to_str().unwrap(),
    ]);
    r.expect_code(2);
    assert!(
        r.stderr
            .contains("holds notes.txt, which onnx-idx-check did not write there"),
        "{}",
        r.stderr
    );
    assert!(tmp.path().join("notes.txt").exists());
}

/// Every file under `dir`, relative and sorted, as text.
pub fn tree(dir: &std::path::Path) -> Vec<String> {
    crate::support::files_under(dir)
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect()
}

/// Adversary D1: a directory holding a `REPORT.md` (one of the commonest names in a project)
/// beside the user's files is not a previous minimization: refused, nothing removed. A previous
/// minimization is replaced only while it holds nothing but what it recorded writing.
#[test]
fn minimize_out_never_removes_what_it_did_not_write() {
    if !crate::support::python3("minimize") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    std::fs::create_dir_all(project.join("src")).unwrap();
    for (f, text) in [
        ("REPORT.md", "# my report"),
        ("findings.json", "[]"),
        ("src/main.rs", "fn main() {}"),
        ("thesis.tex", "\\begin{document}"),
    ] {
        std::fs::write(project.join(f), text).unwrap();
    }
    let before = tree(&project);
    let minimize = |out: &std::path::Path| {
        run([
            "minimize",
            "testdata/onnx-node/test_gather_0",
            "--runtime-cmd",
            &buggy(3),
            "--out",
            out.to_str().unwrap(),
        ])
    };
    let r = minimize(&project);
    r.expect_code(2);
    assert!(
        r.stderr
            .contains("holds REPORT.md, which onnx-idx-check did not write there"),
        "{}",
        r.stderr
    );
    assert_eq!(tree(&project), before);
    assert_eq!(
        std::fs::read_to_string(project.join("thesis.tex")).unwrap(),
        "\\begin{document}"
    );
    // A minimization of its own is replaced, twice over.
    let out = tmp.path().join("min");
    minimize(&out).expect_code(0);
    let written = tree(&out);
    assert!(
        written.contains(&".onnx-idx-check-out.json".to_string()),
        "{written:?}"
    );
    assert!(written.contains(&"REPORT.md".to_string()), "{written:?}");
    minimize(&out).expect_code(0);
    assert_eq!(tree(&out), written);
    // Not once a file of the user's is among its files, however deep.
    std::fs::write(out.join("test_data_set_0/notes.txt"), "mine").unwrap();
    let r = minimize(&out);
    r.expect_code(2);
    assert!(
        r.stderr.contains("holds test_data_set_0/notes.txt"),
        "{}",
        r.stderr
    );
    assert_eq!(
        std::fs::read_to_string(out.join("test_data_set_0/notes.txt")).unwrap(),
        "mine"
    );
    assert!(out.join("REPORT.md").is_file());
}

/// Shrinking a GatherND case with `batch_dims` 1 asks which index component addresses data
/// dimension 0, a batch dimension: it once computed `0 - batch_dims` first and panicked on the
/// underflow (in builds with overflow checks, as this test's binary is).
#[test]
fn minimize_shrinks_a_gather_nd_case_with_batch_dims() {
    if !crate::support::python3("minimize") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let suite = tmp.path().join("suite");
    run(["generate", suite.to_str().unwrap(), "--ops", "GatherND"]).expect_code(0);
    let out = tmp.path().join("min");
    // data [2, 3, 2], indices [[[2], [0]], [[1], [0]]]: the index 2 triggers the bug.
    let r = run([
        "minimize",
        suite
            .join("test_gather_nd_13_float_batch_dims_1")
            .to_str()
            .unwrap(),
        "--runtime-cmd",
        &buggy(2),
        "--out",
        out.to_str().unwrap(),
    ]);
    r.expect_code(0);
    assert!(r.stdout.contains("keeps:    failed"), "{}", r.stdout);
    let md = std::fs::read_to_string(out.join("REPORT.md")).unwrap();
    assert!(md.contains("attributes: batch_dims=1"), "{md}");
}
