//! `run --pending DIR` and the non-interactive `review` flows (`--list`, `--accept-all`,
//! `--reject-all`), on copies of fixtures in a temporary directory. The interactive flow in a
//! real terminal is `tests/review_tty.rs`.

use crate::support::{case_lines, copy_case, files_under, fixture, read_floats, run, Run};
use std::path::{Path, PathBuf};

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
            ("ERROR".to_string(), "errored/missing_output".to_string()),
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
            snapshot("failing/wrong_value", "diff"),
            snapshot("failing/wrong_value", "new"),
        ]
    );
    assert_eq!(w.tree_files(), before);
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
            "test_data_set_0: output 'output': test_data_set_0/output_0.pb is missing; \
             onnx-idx-check's result is pending review in {}",
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
        "\n--- failing/wrong_value test_data_set_0 output 'output'\n\
         \x20   1 of 4 elements differ; first at [1,0]: expected 7.0, got 5.0\n\
         \x20   expected float [2, 2], got float [2, 2]; exact comparison\n\
         \x20   mismatches: 1, max abs diff 2.000000e0, max rel diff 2.857143e-1\n\
         \x20   index  expected  actual  correct value from\n\
         \x20   [1,0]  7.0       5.0     data[2,0], from indices[1] = 2 on axis 0\n"
    );
    assert_eq!(
        diff("errored/missing_output"),
        "--- errored/missing_output test_data_set_0 output 'output'\n\
         \x20   no expected output file (test_data_set_0/output_0.pb); onnx-idx-check computed:\n\
         \x20   float [2, 2], 4 values: 1.0, 2.0, 5.0, 6.0\n"
    );
    // Without --pending, the missing output is a malformed data set, as before.
    let r = w.run(&["run", "{tree}"]);
    r.expect_code(1);
    assert!(
        r.stdout.contains(
            "test_data_set_0/output_0.pb is missing: the graph has 1 output(s) to match by position"
        ),
        "{}",
        r.stdout
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
        ["ERROR", "FAIL", "PASS"]
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
    assert_eq!(files_under(&w.pending()).len(), 4);
}
