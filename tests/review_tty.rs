//! The snapshot workflow in a real terminal: `run --pending DIR` writes our kernels' results for a
//! wrong and a missing expected output, `review DIR TREE` (driven through a pseudo-terminal with
//! rexpect) accepts the first and rejects the second, and a second run shows the effect.

#![cfg(unix)]

mod common;

use onnx_idx_check::internal::load::encode_tensor;
use onnx_idx_check::internal::load::load_tensor_file;
use onnx_idx_check::tensor::{Storage, Tensor};
use rexpect::process::WaitStatus;
use rexpect::session::{spawn_command, PtySession};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_onnx-idx-check");

/// Milliseconds each `exp_*` waits before the test fails.
const EXPECT_TIMEOUT_MS: u64 = 10_000;

const PROMPT: &str = "accept (a), reject (r), skip (s), quit (q)? ";

fn gather_0() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/onnx-node/test_gather_0")
}

fn command(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("TERM", "dumb");
    c
}

fn run(dir: &Path, args: &[&str]) -> Output {
    command(dir, args).output().unwrap()
}

fn show(o: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}--- stderr\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn tensor(path: &Path) -> Tensor {
    load_tensor_file(path, &path.display().to_string(), 1 << 20)
        .unwrap_or_else(|e| panic!("{e}"))
        .1
}

/// Every file left under `dir`.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                found.push(e.path());
            }
        }
    }
    found
}

fn expect(s: &mut PtySession, needle: &str) {
    if let Err(e) = s.exp_string(needle) {
        panic!("waiting for {needle:?} in the terminal: {e}");
    }
}

#[test]
fn review_accepts_and_rejects_in_a_terminal() {
    let root = tempfile::tempdir().unwrap();
    let tree = root.path().join("tree");
    let pending = root.path().join("pending");
    let original = tensor(&gather_0().join("test_data_set_0/output_0.pb"));

    // a_wrong_value: the expected output has one element changed (a valid tensor, wrong values).
    let wrong = tree.join("a_wrong_value");
    common::copy_tree(&gather_0(), &wrong);
    let Storage::W32(mut words) = original.storage().clone() else {
        panic!("test_gather_0's output is not float: {original:?}");
    };
    words[0] ^= 0x0040_0000;
    let changed = Tensor::new(
        original.dtype(),
        original.shape().to_vec(),
        Storage::W32(words),
    )
    .unwrap();
    std::fs::write(
        wrong.join("test_data_set_0/output_0.pb"),
        encode_tensor(&changed, "y"),
    )
    .unwrap();
    // b_missing_output: no expected output at all.
    let missing = tree.join("b_missing_output");
    common::copy_tree(&gather_0(), &missing);
    std::fs::remove_file(missing.join("test_data_set_0/output_0.pb")).unwrap();

    // 1. run --pending: both cases are not passed, so exit 1, and both snapshots are written.
    let o = run(
        root.path(),
        &["run", "tree", "--pending", "pending", "--color", "never"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    for case in ["a_wrong_value", "b_missing_output"] {
        let ds = pending.join(case).join("test_data_set_0");
        assert!(
            ds.join("output_0.pb.diff").is_file(),
            "{case}: {}",
            show(&o)
        );
        // The pending value is our kernels' result: test_gather_0's real expected output.
        assert_eq!(tensor(&ds.join("output_0.pb.new")), original, "{case}");
    }
    let diff =
        std::fs::read_to_string(pending.join("b_missing_output/test_data_set_0/output_0.pb.diff"))
            .unwrap();
    assert!(diff.contains("no expected output"), "{diff}");

    // 2. review in a terminal: accept the first, reject the second.
    let mut s = spawn_command(
        command(root.path(), &["review", "pending", "tree"]),
        Some(EXPECT_TIMEOUT_MS),
    )
    .unwrap();
    s.process_mut().set_kill_timeout(Some(2_000));
    expect(&mut s, "[1/2] a_wrong_value test_data_set_0 output_0");
    expect(&mut s, PROMPT);
    s.send_line("a").unwrap();
    expect(&mut s, "accepted");
    expect(&mut s, "[2/2] b_missing_output test_data_set_0 output_0");
    expect(&mut s, "no expected output");
    expect(&mut s, PROMPT);
    // An answer that is not one of the four asks again.
    s.send_line("x").unwrap();
    expect(&mut s, PROMPT);
    s.send_line("r").unwrap();
    expect(&mut s, "rejected");
    expect(&mut s, "1 accepted, 1 rejected, 0 skipped");
    if let Err(e) = s.exp_eof() {
        panic!("review did not exit: {e}");
    }
    match s.process().wait().unwrap() {
        WaitStatus::Exited(_, code) => assert_eq!(code, 0, "review's exit status"),
        other => panic!("review ended with {other:?}"),
    }

    // The accepted snapshot replaced the wrong expected output; nothing is pending any more.
    assert_eq!(tensor(&wrong.join("test_data_set_0/output_0.pb")), original);
    assert!(!missing.join("test_data_set_0/output_0.pb").exists());
    assert_eq!(files_under(&pending), Vec::<PathBuf>::new());

    // 3. run again: the accepted case passes; the rejected one still has no expected output.
    let o = run(
        root.path(),
        &["run", "tree/a_wrong_value", "--color", "never"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let o = run(root.path(), &["run", "tree", "--color", "never"]);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout
            .lines()
            .any(|l| l.contains("PASS") && l.ends_with("a_wrong_value")),
        "{}",
        show(&o)
    );
    assert!(
        !stdout
            .lines()
            .any(|l| l.contains("PASS") && l.ends_with("b_missing_output")),
        "{}",
        show(&o)
    );
    assert!(!pending
        .join("b_missing_output/test_data_set_0/output_0.pb.new")
        .exists());
}
