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
        &[
            "no case found",
            "no directory with a model.onnx or model.xml",
        ],
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

/// Every flag of every subcommand is documented in README.md or a page under docs/ (the guides
/// hold the tables of options).
#[test]
fn the_documents_describe_every_flag_of_every_subcommand() {
    let readme: String = crate::readme::documents()
        .into_iter()
        .map(|(_, text)| text)
        .collect::<Vec<_>>()
        .join("\n");
    for sub in [
        "run", "list", "ops", "bench", "review", "coverage", "show", "generate", "minimize",
        "hunt", "adapters", "man",
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
            "neither README.md nor docs/ documents {sub} {missing:?}"
        );
    }
}

/// The support matrix of docs/operators.md names every operator version `ops` reports, so a new
/// operator or version cannot be left out of it (its T and index columns are the `ops` table's).
#[test]
fn the_documented_support_matrix_lists_every_operator_version() {
    let readme = std::fs::read_to_string(crate::support::root().join("docs/operators.md")).unwrap();
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
        "docs/operators.md's support matrix lacks {missing:#?}"
    );
}

/// Report #28: option errors say what is wrong, the same way for every option. A number too
/// large for a byte size is "too large" whether or not it has a suffix; `--max-tensor-bytes 0`
/// (which would refuse every tensor) is refused rather than silently erroring every case; a
/// negative tolerance reaches the tolerance check instead of clap's tip about `-- -1`.
#[test]
fn report_28_option_errors_are_consistent() {
    for size in ["99999999999999999999999", "20000000T"] {
        usage_error(
            &["run", "tests/fixtures", "--max-tensor-bytes", size],
            &[&format!("--max-tensor-bytes: '{size}' is too large")],
        );
    }
    usage_error(
        &["run", "tests/fixtures", "--max-tensor-bytes", "12Q"],
        &["'12Q' is not a byte size"],
    );
    usage_error(
        &["run", "tests/fixtures", "--max-tensor-bytes", "0"],
        &["would refuse every non-empty tensor; give a positive size"],
    );
    for flag in ["--rtol", "--atol"] {
        let r = usage_error(
            &["run", "tests/fixtures", flag, "-1"],
            &[&format!("{flag} must be a finite number >= 0, got -1")],
        );
        assert!(!r.stderr.contains("-- -1"), "{}", r.stderr);
    }
}

/// Report #28: a shard that holds no case is not an error (a CI matrix may have more shards
/// than cases), but it says so; `--min-cases` turns it into a failure.
#[test]
fn report_28_an_empty_shard_says_so_and_min_cases_fails_it() {
    // One case, two shards: exactly one of them is empty.
    let args = |k: &str| {
        vec![
            "run".to_string(),
            "testdata/onnx-node".to_string(),
            "--filter".to_string(),
            "^test_gather_0$".to_string(),
            "--shard".to_string(),
            format!("{k}/2"),
        ]
    };
    let (a, b) = (run(args("1")), run(args("2")));
    let empty = if a.stdout.contains("0 cases") { a } else { b };
    empty.expect_code(0);
    assert!(
        empty.stderr.contains("note: shard ")
            && empty.stderr.contains("holds none of the cases found"),
        "{}",
        empty.stderr
    );
    let mut strict = args(if empty.stderr.contains("shard 1/2") {
        "1"
    } else {
        "2"
    });
    strict.extend(["--min-cases".to_string(), "1".to_string()]);
    run(strict).expect_code(1);
}

/// The subcommands `--help` lists, `help` itself left out.
fn subcommands() -> Vec<String> {
    let r = run(["--help"]);
    r.expect_code(0);
    let listed: Vec<String> = r
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        // A description's continuation lines are indented further.
        .filter(|l| !l[2..].starts_with(' '))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| *w != "help" && w.chars().all(|c| c.is_ascii_lowercase()))
        .map(str::to_string)
        .collect();
    assert!(listed.len() >= 13, "{listed:?}");
    listed
}

#[test]
fn every_shell_s_completion_script_knows_every_subcommand() {
    let subs = subcommands();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let r = run(["completions", shell]);
        r.expect_code(0);
        for sub in &subs {
            assert!(
                r.stdout.contains(sub.as_str()),
                "{shell} completion lacks {sub}"
            );
        }
    }
    let bash = run(["completions", "bash"]).stdout;
    assert!(bash.contains("complete -F"), "{bash}");
    // A flag of a subcommand, not only the names.
    assert!(bash.contains("--runtime-cmd"), "{bash}");
    usage_error(&["completions", "tcsh"], &["tcsh"]);
}

#[test]
fn the_manual_page_is_roff_with_every_subcommand_and_a_page_each() {
    let r = run(["man"]);
    r.expect_code(0);
    assert!(
        r.stdout.starts_with(".ie") || r.stdout.contains("\n.TH "),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains(".TH onnx-idx-check 1"), "{}", r.stdout);
    assert!(r.stdout.contains(".SH NAME"), "{}", r.stdout);
    for sub in subcommands() {
        assert!(r.stdout.contains(&sub), "the page lacks {sub}");
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("man1");
    run(["man", "--out", out.to_str().unwrap()]).expect_code(0);
    let main = std::fs::read_to_string(out.join("onnx-idx-check.1")).unwrap();
    assert_eq!(main, r.stdout);
    let page = std::fs::read_to_string(out.join("onnx-idx-check-run.1")).unwrap();
    assert!(page.contains(".TH onnx-idx-check-run 1"), "{page}");
    assert!(page.contains("\\-\\-timeout"), "{page}");
}
