//! `run --pending DIR` and the non-interactive `review` flows (`--list`, `--accept-all`,
//! `--reject-all`), on copies of fixtures in a temporary directory. The interactive flow in a
//! real terminal is `tests/review_tty.rs`.

use crate::support::{blocks, case_lines, copy_case, files_under, fixture, read_floats, run, Run};
use std::path::{Path, PathBuf};

/// A naive sha256 is not at hand; the `sha2` crate is independent of the code under test.
fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A temporary copy of three fixtures: one whose expected output is wrong
/// (failing/wrong_value: 7 at [1,0] where the gather gives 5), one without an expected output
/// (errored/missing_output) and one that passes; and a pending directory beside them.
struct Workspace {
    tmp: tempfile::TempDir,
}

const CASES: [&str; 3] = [
    "errored/missing_output",
    "failing/wrong_value",
    "passing/nan_payloads_are_equal",
];

impl Workspace {
    fn new() -> Workspace {
        let tmp = tempfile::tempdir().unwrap();
        for name in CASES {
            copy_case(&fixture(name), &tmp.path().join("tree").join(name));
        }
        Workspace { tmp }
    }

    fn tree(&self) -> PathBuf {
        self.tmp.path().join("tree")
    }

    fn pending(&self) -> PathBuf {
        self.tmp.path().join("pending")
    }

    /// Runs the binary with `args` where each `{tree}` and `{pending}` is replaced.
    fn run(&self, args: &[&str]) -> Run {
        let tree = self.tree().display().to_string();
        let pending = self.pending().display().to_string();
        run(args
            .iter()
            .map(|a| a.replace("{tree}", &tree).replace("{pending}", &pending))
            .chain(["--color".to_string(), "never".to_string()]))
    }

    /// `run {tree} --pending {pending}`: both broken cases are reported and leave a snapshot.
    fn run_pending(&self) -> Run {
        let r = self.run(&["run", "{tree}", "--pending", "{pending}"]);
        r.expect_code(1);
        r
    }

    /// Every file of the tree with its bytes.
    fn tree_files(&self) -> Vec<(PathBuf, Vec<u8>)> {
        files_under(&self.tree())
            .into_iter()
            .map(|p| {
                let bytes = std::fs::read(self.tree().join(&p)).unwrap();
                (p, bytes)
            })
            .collect()
    }
}

fn snapshot(case: &str, ext: &str) -> PathBuf {
    Path::new(case).join(format!("test_data_set_0/output_0.pb.{ext}"))
}

#[test]
fn pending_writes_a_snapshot_and_a_diff_for_each_failed_or_missing_output() {
    let w = Workspace::new();
    let before = w.tree_files();
    let r = w.run_pending();
    assert_eq!(
        case_lines(&r.stdout),
        [
            ("NEW".to_string(), "errored/missing_output".to_string()),
            ("FAIL".to_string(), "failing/wrong_value".to_string()),
            (
                "PASS".to_string(),
                "passing/nan_payloads_are_equal".to_string()
            ),
        ],
        "{}",
        r.stdout
    );
    // Nothing for the passing case; the tree itself is not touched.
    assert_eq!(
        files_under(&w.pending()),
        [
            snapshot("errored/missing_output", "diff"),
            snapshot("errored/missing_output", "new"),
            snapshot("errored/missing_output", "sources"),
            snapshot("failing/wrong_value", "diff"),
            snapshot("failing/wrong_value", "new"),
            snapshot("failing/wrong_value", "sources"),
        ]
    );
    assert_eq!(w.tree_files(), before);
    // Each snapshot records the sha256 of what it was computed from, as `sha256sum` prints them:
    // the model and the data set's inputs (the expected output is not a source).
    let sources =
        std::fs::read_to_string(w.pending().join(snapshot("failing/wrong_value", "sources")))
            .unwrap();
    let names: Vec<&str> = sources
        .lines()
        .map(|l| l.split_once("  ").unwrap().1)
        .collect();
    assert_eq!(
        names,
        [
            "model.onnx",
            "test_data_set_0/input_0.pb",
            "test_data_set_0/input_1.pb"
        ],
        "{sources}"
    );
    let model = std::fs::read(w.tree().join("failing/wrong_value/model.onnx")).unwrap();
    assert!(
        sources.starts_with(&format!("{}  model.onnx\n", sha256_hex(&model))),
        "{sources}"
    );
    // Each snapshot is onnx-idx-check's result: rows 0 and 2 of [[1, 2], [3, 4], [5, 6]].
    for case in ["errored/missing_output", "failing/wrong_value"] {
        let t = crate::support::read_tensor(&w.pending().join(snapshot(case, "new")));
        assert_eq!(t.name, "output", "{case}");
        assert_eq!(
            read_floats(&w.pending().join(snapshot(case, "new"))),
            (vec![2, 2], vec![1.0, 2.0, 5.0, 6.0]),
            "{case}"
        );
    }
    // The reasons say where the snapshots are.
    let new_file = |case: &str| {
        w.pending()
            .join(snapshot(case, "new"))
            .display()
            .to_string()
    };
    assert!(
        r.stdout.contains(&format!(
            "test_data_set_0: output 'output': 1 of 4 elements differ; first at [1,0]: expected \
             7.0, got 5.0; onnx-idx-check's result is pending review in {}",
            new_file("failing/wrong_value")
        )),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(&format!(
            "test_data_set_0: output 'output': no expected output yet: \
             test_data_set_0/output_0.pb is missing; onnx-idx-check's result is pending review in {}",
            new_file("errored/missing_output")
        )),
        "{}",
        r.stdout
    );
    // The diffs, for people: the mismatch table with provenance, or a preview of the values.
    let diff =
        |case: &str| std::fs::read_to_string(w.pending().join(snapshot(case, "diff"))).unwrap();
    assert_eq!(
        diff("failing/wrong_value"),
        // The sides named for review: what the file holds, what accepting writes.
        "--- failing/wrong_value test_data_set_0 output 'output'\n\
         \x20   1 of 4 elements differ; first at [1,0]: current file 7.0, would write 5.0\n\
         \x20   current file float [2, 2], would write float [2, 2]; exact comparison\n\
         \x20   mismatches: 1, max abs diff 2, max rel diff 0.285714\n\
         \x20   index  current file  would write  correct value from\n\
         \x20   [1,0]  7.0           5.0          data[2,0], from indices[1] = 2 on axis 0\n"
    );
    assert_eq!(
        diff("errored/missing_output"),
        "--- errored/missing_output test_data_set_0 output 'output'\n\
         \x20   no expected output file (test_data_set_0/output_0.pb); onnx-idx-check computed:\n\
         \x20   float [2, 2], 4 values: 1.0, 2.0, 5.0, 6.0\n"
    );
    // Without --pending, the missing output errors the case as a new snapshot (`NEW`), with
    // the values computed and the way to write them (new-user report #21). The values: Gather
    // of data [[1, 2], [3, 4], [5, 6]] at rows [0, 2], as the input files' bytes read by hand.
    let r = w.run(&["run", "{tree}"]);
    r.expect_code(1);
    let b = &blocks(&r.stdout)["errored/missing_output"];
    assert_eq!(b.label, "NEW");
    assert_eq!(
        b.lines[..2],
        [
            "test_data_set_0: output 'output': no expected output yet: test_data_set_0/output_0.pb \
             is missing; run with --pending DIR to compute it for review",
            "computed test_data_set_0 'output': float [2, 2], 4 values: 1.0, 2.0, 5.0, 6.0",
        ]
    );
}

#[test]
fn review_list_names_the_snapshots_and_changes_nothing() {
    let w = Workspace::new();
    w.run_pending();
    let tree = w.tree_files();
    let pending = files_under(&w.pending());
    let r = w.run(&["review", "{pending}", "{tree}", "--list"]);
    r.expect_code(0);
    assert_eq!(
        r.stdout,
        "errored/missing_output test_data_set_0 output_0\n\
         failing/wrong_value test_data_set_0 output_0\n\
         2 pending\n"
    );
    assert_eq!(w.tree_files(), tree);
    assert_eq!(files_under(&w.pending()), pending);
}

#[test]
fn review_accept_all_writes_the_expected_outputs_and_the_cases_pass() {
    let w = Workspace::new();
    w.run_pending();
    let r = w.run(&["review", "{pending}", "{tree}", "--accept-all"]);
    r.expect_code(0);
    let target = |case: &str| w.tree().join(case).join("test_data_set_0/output_0.pb");
    assert_eq!(
        r.stdout,
        format!(
            "[1/2] errored/missing_output test_data_set_0 output_0\n  accepted: wrote {}\n\
             [2/2] failing/wrong_value test_data_set_0 output_0\n  accepted: wrote {}\n\
             2 accepted, 0 rejected, 0 skipped\n",
            target("errored/missing_output").display(),
            target("failing/wrong_value").display()
        )
    );
    for case in ["errored/missing_output", "failing/wrong_value"] {
        assert_eq!(
            read_floats(&target(case)),
            (vec![2, 2], vec![1.0, 2.0, 5.0, 6.0]),
            "{case}"
        );
    }
    assert_eq!(files_under(&w.pending()), Vec::<PathBuf>::new());
    // Every case passes now.
    let r = w.run(&["run", "{tree}"]);
    r.expect_code(0);
    assert!(
        case_lines(&r.stdout)
            .iter()
            .all(|(label, _)| label == "PASS"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("3 cases: 3 passed"), "{}", r.stdout);
}

#[test]
fn review_reject_all_deletes_the_snapshots_and_leaves_the_cases_as_they_were() {
    let w = Workspace::new();
    w.run_pending();
    let tree = w.tree_files();
    let r = w.run(&["review", "{pending}", "{tree}", "--reject-all"]);
    r.expect_code(0);
    assert_eq!(
        r.stdout,
        "[1/2] errored/missing_output test_data_set_0 output_0\n  rejected: deleted the pending snapshot\n\
         [2/2] failing/wrong_value test_data_set_0 output_0\n  rejected: deleted the pending snapshot\n\
         0 accepted, 2 rejected, 0 skipped\n"
    );
    assert_eq!(w.tree_files(), tree);
    assert_eq!(files_under(&w.pending()), Vec::<PathBuf>::new());
    let r = w.run(&["run", "{tree}"]);
    r.expect_code(1);
    assert_eq!(
        case_lines(&r.stdout)
            .into_iter()
            .map(|(label, _)| label)
            .collect::<Vec<_>>(),
        ["NEW", "FAIL", "PASS"]
    );
    // Nothing is left to review.
    let r = w.run(&["review", "{pending}", "{tree}", "--list"]);
    r.expect_code(0);
    assert!(
        r.stdout.starts_with("no pending snapshots in "),
        "{}",
        r.stdout
    );
}

#[test]
fn a_snapshot_whose_case_is_not_under_the_paths_is_left_pending_and_fails_the_review() {
    let w = Workspace::new();
    w.run_pending();
    // Review against the failing case alone: the missing_output snapshot has no case.
    let only = w.tree().join("failing");
    let r = run([
        "review",
        w.pending().to_str().unwrap(),
        only.to_str().unwrap(),
        "--accept-all",
        "--color",
        "never",
    ]);
    r.expect_code(1);
    assert!(
        r.stdout
            .contains("skipped: no case of this name under the given paths"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .ends_with("0 accepted, 0 rejected, 2 skipped (2 with problems)\n"),
        "{}",
        r.stdout
    );
    assert_eq!(files_under(&w.pending()).len(), 6);
}

/// New-user report #1: after `run --pending`, the author changed an input; `review` wrote the old
/// result as the expected output. A snapshot whose case changed is now refused, saying what changed.
#[test]
fn report_1_review_refuses_a_snapshot_whose_case_changed_since_run_pending() {
    let w = Workspace::new();
    w.run_pending();
    let case = w.tree().join("failing/wrong_value");
    let expected_before = std::fs::read(case.join("test_data_set_0/output_0.pb")).unwrap();
    // Gather rows 0 and 1 instead of 0 and 2: the snapshot's [1, 2, 5, 6] is no longer right.
    let mut indices = crate::support::read_tensor(&case.join("test_data_set_0/input_1.pb"));
    indices.int64_data = vec![0, 1];
    indices.raw_data.clear();
    crate::support::write_tensor(&case.join("test_data_set_0/input_1.pb"), &indices);
    for mode in ["--list", "--accept-all"] {
        let r = w.run(&["review", "{pending}", "{tree}", mode]);
        assert!(
            r.stdout.contains(
                "the case changed since the snapshot was computed (test_data_set_0/input_1.pb changed)"
            ),
            "{mode}: {}",
            r.stdout
        );
        if mode == "--accept-all" {
            r.expect_code(1);
            assert!(
                r.stdout
                    .ends_with("1 accepted, 0 rejected, 1 skipped (1 with problems)\n"),
                "{}",
                r.stdout
            );
        }
    }
    // The expected output is untouched and the stale snapshot stays pending for a fresh run.
    assert_eq!(
        std::fs::read(case.join("test_data_set_0/output_0.pb")).unwrap(),
        expected_before
    );
    assert!(w
        .pending()
        .join(snapshot("failing/wrong_value", "new"))
        .exists());
    // A new run computes it again from the new inputs, and review accepts that one.
    w.run_pending();
    let r = w.run(&["review", "{pending}", "{tree}", "--accept-all"]);
    r.expect_code(0);
    assert_eq!(
        read_floats(&case.join("test_data_set_0/output_0.pb")),
        (vec![2, 2], vec![1.0, 2.0, 3.0, 4.0])
    );
}

/// A snapshot without its `.sources` record (written by hand, or by an older version) cannot be
/// shown to be current: refused too.
#[test]
fn review_refuses_a_snapshot_without_its_sources_record() {
    let w = Workspace::new();
    w.run_pending();
    std::fs::remove_file(w.pending().join(snapshot("failing/wrong_value", "sources"))).unwrap();
    let r = w.run(&["review", "{pending}", "{tree}", "--accept-all"]);
    r.expect_code(1);
    assert!(
        r.stdout.contains("is missing or not one this tool wrote"),
        "{}",
        r.stdout
    );
    // Rejecting it is still possible.
    let r = w.run(&["review", "{pending}", "{tree}", "--reject-all"]);
    r.expect_code(0);
    assert_eq!(files_under(&w.pending()), Vec::<PathBuf>::new());
}

/// New-user report #5: a snapshot survived a passing re-run, and `review` then offered a difference
/// that was gone. A re-run under `--pending` removes the snapshot of every output that passes.
#[test]
fn report_5_a_passing_rerun_removes_the_stale_snapshot() {
    let w = Workspace::new();
    w.run_pending();
    // The author fixes the wrong expected output by hand: [[1, 2], [5, 6]].
    let expected = w
        .tree()
        .join("failing/wrong_value/test_data_set_0/output_0.pb");
    let mut t = crate::support::read_tensor(&expected);
    t.float_data = vec![1.0, 2.0, 5.0, 6.0];
    t.raw_data.clear();
    crate::support::write_tensor(&expected, &t);
    let r = w.run(&["run", "{tree}", "--pending", "{pending}"]);
    r.expect_code(1); // missing_output is still errored
    assert_eq!(
        files_under(&w.pending()),
        [
            snapshot("errored/missing_output", "diff"),
            snapshot("errored/missing_output", "new"),
            snapshot("errored/missing_output", "sources"),
        ]
    );
}

/// New-user report #15: the same case name under two roots printed two identical blocks, and
/// the second snapshot overwrote the first. Such a run is refused up front.
#[test]
fn report_15_two_cases_with_one_name_under_two_paths_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    for root in ["r1", "r2"] {
        crate::support::copy_case(
            &crate::support::fixture("failing/wrong_value"),
            &tmp.path().join(root).join("mine/wrong_value"),
        );
    }
    let pending = tmp.path().join("pending");
    let r = crate::support::run([
        "run".as_ref(),
        tmp.path().join("r1").as_os_str(),
        tmp.path().join("r2").as_os_str(),
        "--pending".as_ref(),
        pending.as_os_str(),
    ]);
    r.expect_code(2);
    assert!(
        r.stderr.contains("2 cases are named 'mine/wrong_value' (")
            && r.stderr.contains("names must be unique"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert!(!pending.exists());
    // One root at a time works.
    let r = crate::support::run([
        "run".as_ref(),
        tmp.path().join("r1").as_os_str(),
        "--pending".as_ref(),
        pending.as_os_str(),
    ]);
    r.expect_code(1);
}

/// Adversary D9: an input's values in external data (`test_data_set_0/data.bin`) or a file in a
/// subdirectory of the case (where a model's external data may live) changed after `run
/// --pending`: `review` must refuse the snapshot computed from the old bytes.
#[test]
fn review_refuses_a_snapshot_whose_external_data_changed_since() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    let pending = tmp.path().join("pending");
    let case = tree.join("ext");
    // input_0 (data [1.0, 2.0]) lives in data.bin; Gather index 1 gives 2.0.
    copy_case(
        &fixture("passing/external_data_inside_the_directory"),
        &case,
    );
    let expected = case.join("test_data_set_0/output_0.pb");
    std::fs::remove_file(&expected).unwrap();
    std::fs::create_dir(case.join("w")).unwrap();
    std::fs::write(case.join("w/idx.bin"), [0u8; 8]).unwrap();
    let (t, p) = (tree.display().to_string(), pending.display().to_string());
    let run_pending = || {
        run(["run", &t, "--pending", &p, "--color", "never"]).expect_code(1);
    };
    let review = || run(["review", &p, &t, "--accept-all", "--color", "never"]);
    for (changed, bytes) in [
        ("test_data_set_0/data.bin", [0, 0, 128, 63, 0, 0, 160, 64]), // [1.0, 5.0]
        ("w/idx.bin", [1, 0, 0, 0, 0, 0, 0, 0]),
    ] {
        run_pending();
        std::fs::write(case.join(changed), bytes).unwrap();
        let r = review();
        r.expect_code(1);
        assert!(
            r.stdout.contains(&format!(
                "the case changed since the snapshot was computed ({changed} changed)"
            )),
            "{}",
            r.stdout
        );
        assert!(!expected.exists());
    }
    // Computed again from the bytes there now, the snapshot is accepted: 5.0.
    run_pending();
    review().expect_code(0);
    assert_eq!(read_floats(&expected), (vec![1], vec![5.0]));
}
