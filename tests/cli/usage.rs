//! Usage errors stop the run before any verdict, with exit status 2 and a message on stderr.

use crate::support::{fixtures, run, Run};

fn usage_error(args: &[&str], words: &[&str]) -> Run {
    let r = run(args);
    r.expect_code(2);
    assert!(r.stdout.is_empty(), "nothing on stdout: {}", r.stdout);
    for w in words {
        assert!(r.stderr.contains(w), "stderr lacks {w:?}: {}", r.stderr);
    }
    r
}

#[test]
fn a_path_that_does_not_exist_is_a_usage_error() {
    usage_error(
        &["run", "/nonexistent/onnx-idx-check-tests"],
        &["/nonexistent/onnx-idx-check-tests"],
    );
}

#[test]
fn a_directory_without_any_case_is_a_usage_error() {
    let empty = tempfile::tempdir().unwrap();
    usage_error(
        &["run", empty.path().to_str().unwrap()],
        &["no case found", "no directory with a model.onnx"],
    );
}

#[test]
fn a_file_instead_of_a_directory_is_a_usage_error() {
    usage_error(&["run", "tests/fixtures/README.md"], &["not a directory"]);
}

#[test]
fn a_filter_that_selects_nothing_is_a_usage_error() {
    usage_error(
        &["run", "tests/fixtures", "--filter", "^no-such-case$"],
        &["none selected"],
    );
}

#[test]
fn an_invalid_filter_regex_is_a_usage_error() {
    usage_error(
        &["run", "tests/fixtures", "--filter", "("],
        &["--filter '('"],
    );
    usage_error(
        &["run", "tests/fixtures", "--exclude", "[z-a]"],
        &["--exclude"],
    );
}

#[test]
fn zero_jobs_is_a_usage_error() {
    usage_error(&["run", "tests/fixtures", "--jobs", "0"], &["--jobs"]);
}

#[test]
fn a_bad_max_tensor_bytes_is_a_usage_error() {
    for bad in ["12XB", "", "-1", "4.5G", "99999999999999999999"] {
        let arg = format!("--max-tensor-bytes={bad}");
        usage_error(&["run", "tests/fixtures", &arg], &[bad]);
    }
}

#[test]
fn a_negative_tolerance_is_a_usage_error() {
    usage_error(&["run", "tests/fixtures", "--rtol=-1"], &["--rtol"]);
    usage_error(&["run", "tests/fixtures", "--atol=NaN"], &["--atol"]);
}

#[test]
fn exact_and_tolerant_together_are_a_usage_error() {
    usage_error(
        &["run", "tests/fixtures", "--exact", "--tolerant"],
        &["--tolerant"],
    );
}

#[test]
fn an_unknown_subcommand_or_format_is_a_usage_error() {
    usage_error(&["frobnicate"], &["frobnicate"]);
    usage_error(&["run", "tests/fixtures", "--format", "xml"], &["xml"]);
}

#[test]
fn bench_on_a_directory_that_is_no_case_is_a_usage_error() {
    usage_error(
        &["bench", fixtures().to_str().unwrap()],
        &["not a case directory"],
    );
    usage_error(
        &["bench", "testdata/onnx-node/test_gather_0", "--iters", "0"],
        &["--iters"],
    );
}

#[test]
fn an_unwritable_output_file_stops_the_run_with_status_2() {
    let r = run([
        "run",
        "tests/fixtures/passing",
        "--format",
        "json",
        "--output",
        "/nonexistent/dir/report.json",
    ]);
    r.expect_code(2);
    assert!(
        r.stderr.contains("/nonexistent/dir/report.json"),
        "{}",
        r.stderr
    );
}

/// The long flags `--help` of a subcommand lists, without `--help` itself.
fn flags_in_help(sub: &str) -> Vec<String> {
    let r = run([sub, "--help"]);
    r.expect_code(0);
    let mut flags: Vec<String> = r
        .stdout
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|w| w.starts_with("--") && w.len() > 2 && w != &"--help")
        .map(str::to_string)
        .collect();
    flags.sort();
    flags.dedup();
    flags
}

#[test]
fn the_readme_documents_every_flag_of_every_subcommand() {
    let readme = std::fs::read_to_string(crate::support::root().join("README.md")).unwrap();
    for sub in [
        "run", "list", "ops", "bench", "review", "coverage", "show", "generate",
    ] {
        let flags = flags_in_help(sub);
        assert!(!flags.is_empty(), "{sub} --help lists no flag");
        // A whole flag: `--iters` must not be satisfied by `--iterations`.
        let documented = |f: &str| {
            readme.match_indices(f).any(|(at, _)| {
                !readme[at + f.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '-')
            })
        };
        let missing: Vec<&String> = flags.iter().filter(|f| !documented(f)).collect();
        assert!(
            missing.is_empty(),
            "README.md does not document {sub} {missing:?}"
        );
    }
}

/// The README's copy of the support matrix names every operator version `ops` reports, so a new
/// operator or version cannot be left out of it (its T and index columns are the `ops` table's).
#[test]
fn the_readme_support_matrix_lists_every_operator_version() {
    let readme = std::fs::read_to_string(crate::support::root().join("README.md")).unwrap();
    let ops = crate::support::run(["ops", "--format", "json"]);
    let missing: Vec<String> = ops
        .expect_code(0)
        .json()
        .as_array()
        .unwrap()
        .iter()
        .filter(|row| row["plumbing"] == false)
        .map(|row| {
            format!(
                "| {} | {} | {} |",
                row["op"].as_str().unwrap(),
                row["domain"].as_str().unwrap(),
                row["version"]
            )
        })
        .filter(|row| !readme.lines().any(|l| l.starts_with(row.as_str())))
        .collect();
    assert!(
        missing.is_empty(),
        "README.md's ops table lacks {missing:#?}"
    );
}
