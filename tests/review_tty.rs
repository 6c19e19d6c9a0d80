//! The snapshot workflow in a real terminal: `run --pending DIR` writes our kernels' results for a
//! wrong and a missing expected output and for a case whose input then changes; `review DIR TREE`
//! (driven through a pseudo-terminal with rexpect, one key per answer) shows each snapshot's
//! inputs, accepts the first two and refuses the stale one; a second run shows the effect.

#![cfg(unix)]

mod common;

use onnx_idx_check::load::load_tensor_file;
use onnx_idx_check::load::save::encode_tensor;
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
fn review_answers_on_one_key_shows_inputs_refuses_stale_and_accepts_new_in_a_terminal() {
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
    // b_missing_output: no expected output at all (a new case).
    let missing = tree.join("b_missing_output");
    common::copy_tree(&gather_0(), &missing);
    std::fs::remove_file(missing.join("test_data_set_0/output_0.pb")).unwrap();
    // c_changed_since: wrong like a_wrong_value, but its input changes after `run --pending`.
    let changed_since = tree.join("c_changed_since");
    common::copy_tree(&wrong, &changed_since);

    // 1. run --pending: no case passes, so exit 1, and every snapshot is written.
    let o = run(
        root.path(),
        &["run", "tree", "--pending", "pending", "--color", "never"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    for case in ["a_wrong_value", "b_missing_output", "c_changed_since"] {
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
    // The author edits c_changed_since's data after the snapshot: it no longer holds.
    let input = changed_since.join("test_data_set_0/input_0.pb");
    let data = tensor(&input);
    std::fs::write(&input, encode_tensor(&data, "edited")).unwrap();

    // 2. review in a terminal, one key per answer (no Enter): accept the changed value, accept
    // the new snapshot; the stale one is not offered.
    let mut s = spawn_command(
        command(root.path(), &["review", "pending", "tree"]),
        Some(EXPECT_TIMEOUT_MS),
    )
    .unwrap();
    s.process_mut().set_kill_timeout(Some(2_000));
    expect(&mut s, "[1/3] a_wrong_value test_data_set_0 output_0");
    // The inputs, then the diff with its sides named for review.
    expect(&mut s, "inputs:");
    // (test_gather_0 of ONNX's node tests: data [5, 4, 3, 2], indices [0, 1, 3] on axis 0.)
    expect(
        &mut s,
        "input_0.pb 'data': float [5, 4, 3, 2], 120 values, the first 16: ",
    );
    expect(&mut s, "input_1.pb 'indices': int64 [3], 3 values: 0, 1, 3");
    expect(&mut s, "current file  would write  correct value from");
    expect(&mut s, PROMPT);
    // A key that is not one of the four asks again.
    key(&mut s, 'x');
    expect(&mut s, "press a, r, s or q");
    expect(&mut s, PROMPT);
    key(&mut s, 'a');
    expect(&mut s, "accepted: wrote");
    expect(&mut s, "[2/3] b_missing_output test_data_set_0 output_0");
    expect(&mut s, "(does not exist yet)");
    expect(&mut s, "no expected output");
    expect(&mut s, PROMPT);
    key(&mut s, 'a');
    expect(&mut s, "accepted: wrote");
    expect(&mut s, "[3/3] c_changed_since test_data_set_0 output_0");
    expect(
        &mut s,
        "stale: the case changed since the snapshot was computed (test_data_set_0/input_0.pb changed); not offered",
    );
    expect(
        &mut s,
        "2 accepted, 0 rejected, 1 skipped (1 with problems)",
    );
    if let Err(e) = s.exp_eof() {
        panic!("review did not exit: {e}");
    }
    match s.process().wait().unwrap() {
        // The stale snapshot is a problem: exit 1, so a script notices.
        WaitStatus::Exited(_, code) => assert_eq!(code, 1, "review's exit status"),
        other => panic!("review ended with {other:?}"),
    }

    // The accepted snapshots became the expected outputs; only the stale one is pending.
    assert_eq!(tensor(&wrong.join("test_data_set_0/output_0.pb")), original);
    assert_eq!(
        tensor(&missing.join("test_data_set_0/output_0.pb")),
        original
    );
    let left: Vec<PathBuf> = files_under(&pending)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "new"))
        .collect();
    assert_eq!(
        left,
        [pending.join("c_changed_since/test_data_set_0/output_0.pb.new")]
    );

    // 3. run again: the two accepted cases pass.
    for case in ["tree/a_wrong_value", "tree/b_missing_output"] {
        let o = run(root.path(), &["run", case, "--color", "never"]);
        assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    }
}

/// Sends one key, without Enter.
fn key(s: &mut PtySession, k: char) {
    s.send(&k.to_string()).unwrap();
    s.flush().unwrap();
}
