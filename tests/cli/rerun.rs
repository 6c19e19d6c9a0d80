//! The `rerun:` command after every failed or errored case: running it exactly as printed
//! (split as a POSIX shell would, then run without a shell) reproduces that case alone, with the
//! same verdict and reason.

use crate::support::{
    blocks, case_lines, copy_case, fixture, fixtures, run, Block, Run, ONLY_GROUPS,
};

/// Splits a command line as a POSIX shell does for the quoting the tool writes: bare words,
/// single-quoted strings and backslash escapes (as in `'it'\''s'`).
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                let mut closed = false;
                for q in chars.by_ref() {
                    if q == '\'' {
                        closed = true;
                        break;
                    }
                    word.push(q);
                }
                assert!(closed, "unterminated quote in {line:?}");
            }
            '\\' => {
                in_word = true;
                word.push(chars.next().expect("a character after a backslash"));
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

#[test]
fn shell_words_undo_the_quoting() {
    assert_eq!(
        shell_words(r"a 'b c' 'it'\''s' '^x\.y$'"),
        ["a", "b c", "it's", r"^x\.y$"]
    );
}

/// The rerun command of a block: its last line, which must be `rerun: ...`.
fn rerun_of(b: &Block) -> Vec<String> {
    let last = b
        .lines
        .last()
        .unwrap_or_else(|| panic!("{b:?} has no lines"));
    let cmd = last
        .strip_prefix("rerun: ")
        .unwrap_or_else(|| panic!("{}: the last line is not a rerun command: {last}", b.name));
    let words = shell_words(cmd);
    assert_eq!(words[0], "onnx-idx-check", "{cmd}");
    assert_eq!(words[1], "run", "{cmd}");
    words[1..].to_vec()
}

/// Runs every failed or errored block's rerun command and checks that it reports that case
/// alone, with the same block; returns how many were checked.
fn check_reruns(r: &Run) -> usize {
    let all = blocks(&r.stdout);
    let mut checked = 0;
    let mut wrong = Vec::new();
    for b in all
        .values()
        .filter(|b| !matches!(b.label.as_str(), "PASS" | "SKIP" | "XFAIL" | "NEW"))
    {
        // Exactly the printed words (colour is off anyway: stdout is not a terminal).
        let again = run(rerun_of(b));
        let again_blocks = blocks(&again.stdout);
        if again.code != 1 {
            wrong.push(format!("{}: exit {} on rerun", b.name, again.code));
        }
        match again_blocks.values().collect::<Vec<_>>().as_slice() {
            [only] if only.name == b.name && only.label == b.label && only.lines == b.lines => {}
            other => wrong.push(format!("{}: {b:?} became {other:?}", b.name)),
        }
        if !again.stdout.contains("\nSummary [") || !again.stdout.contains("] 1 case: ") {
            wrong.push(format!(
                "{}: not a run of one case: {}",
                b.name, again.stdout
            ));
        }
        checked += 1;
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    checked
}

#[test]
fn every_failed_or_errored_case_ends_with_a_rerun_command_that_reproduces_it() {
    // As a person would type it: a relative path, from the package root.
    let r = run([
        "run",
        "tests/fixtures",
        ONLY_GROUPS[0],
        ONLY_GROUPS[1],
        "--color",
        "never",
    ]);
    r.expect_code(1);
    let all = blocks(&r.stdout);
    let bad: Vec<&Block> = all
        .values()
        .filter(|b| !matches!(b.label.as_str(), "PASS" | "SKIP" | "XFAIL" | "NEW"))
        .collect();
    assert!(bad.len() > 50, "{} failed or errored cases", bad.len());
    // Passed and skipped cases get none.
    for b in all
        .values()
        .filter(|b| b.label == "PASS" || b.label == "SKIP")
    {
        assert!(!b.lines.iter().any(|l| l.starts_with("rerun:")), "{b:?}");
    }
    for b in &bad {
        assert_eq!(
            b.lines.last().map(String::as_str),
            Some(
                format!(
                    "rerun: onnx-idx-check run tests/fixtures --filter '^{}$'",
                    b.name
                )
                .as_str()
            ),
            "{b:?}"
        );
    }
    // The failure details of each failed case end with the same command.
    let details = &r.stdout[r.stdout.find("\n--- ").expect("failure details")..];
    for b in bad.iter().filter(|b| b.label == "FAIL") {
        let header = format!("--- {} test_data_set_0", b.name);
        let at = details
            .find(&header)
            .unwrap_or_else(|| panic!("no details for {}", b.name));
        let rerun_line = details[at..]
            .lines()
            .find(|l| l.starts_with("    rerun: "))
            .unwrap();
        assert_eq!(
            rerun_line.trim_start(),
            b.lines.last().unwrap(),
            "{}",
            b.name
        );
    }
    assert_eq!(check_reruns(&r), bad.len());
}

#[test]
fn the_rerun_command_keeps_the_options_that_shape_the_verdict() {
    let r = run([
        "run",
        "tests/fixtures/actual/cases",
        "--actual",
        "tests/fixtures/actual/outputs",
        "--rtol",
        "0.01",
        "--atol",
        "0.001",
        "--max-tensor-bytes",
        "1MiB",
        "--color",
        "never",
    ]);
    r.expect_code(1);
    assert_eq!(
        blocks(&r.stdout)["differs"].lines.last().unwrap(),
        "rerun: onnx-idx-check run tests/fixtures/actual/cases --filter '^differs$' --actual \
         tests/fixtures/actual/outputs --rtol 0.01 --atol 0.001 --max-tensor-bytes 1MiB"
    );
    // spec_error_no_output passes: the runtime refused, as the spec requires.
    assert_eq!(check_reruns(&r), 8);

    // --exact fails a reduction that passes with the default tolerance; the rerun keeps it.
    let r = run([
        "run",
        "tests/fixtures",
        "--filter",
        "^passing/reduction_within_tolerance$",
        "--exact",
        "--color",
        "never",
    ]);
    r.expect_code(1);
    let b = &blocks(&r.stdout)["passing/reduction_within_tolerance"];
    assert!(b.lines.last().unwrap().ends_with(" --exact"), "{b:?}");
    assert_eq!(check_reruns(&r), 1);

    // --tolerant is kept too.
    let r = run([
        "run",
        "tests/fixtures",
        "--filter",
        "^failing/wrong_shape$",
        "--tolerant",
        "--color",
        "never",
    ]);
    let b = &blocks(&r.stdout)["failing/wrong_shape"];
    assert!(b.lines.last().unwrap().ends_with(" --tolerant"), "{b:?}");
    assert_eq!(check_reruns(&r), 1);
}

#[test]
fn the_rerun_command_quotes_what_a_shell_would_split() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("it's a dir");
    copy_case(&fixture("failing/wrong_value"), &root.join("one case"));
    let r = run(["run", root.to_str().unwrap(), "--color", "never"]);
    r.expect_code(1);
    let b = &blocks(&r.stdout)["one case"];
    let quoted = format!("'{}'", root.display().to_string().replace('\'', r"'\''"));
    assert_eq!(
        b.lines.last().unwrap(),
        &format!("rerun: onnx-idx-check run {quoted} --filter '^one case$'")
    );
    assert_eq!(check_reruns(&r), 1);
}

/// `tighter_tolerance.toml` sets rtol 0 for passing/reduction_within_tolerance, so 5.0 against
/// 5.004 fails; the case is not an expected failure, so it gets a rerun command. That command
/// leaves out `--expectations` (app.rs `rerun_command` copies the paths, --actual and the
/// tolerance flags only), so it runs with the default rtol 1e-3 and the case passes: the rerun
/// does not reproduce the verdict.
#[test]
fn the_rerun_command_keeps_the_expectations_file() {
    let exp = fixtures().join("expectations/tighter_tolerance.toml");
    let r = run([
        "run",
        "tests/fixtures",
        "--filter",
        "^passing/reduction_within_tolerance$",
        "--expectations",
        exp.to_str().unwrap(),
        "--color",
        "never",
    ]);
    r.expect_code(1);
    assert_eq!(
        case_lines(&r.stdout),
        [(
            "FAIL".to_string(),
            "passing/reduction_within_tolerance".to_string()
        )]
    );
    assert_eq!(check_reruns(&r), 1);
}

/// `--rerun-failed`, as pytest's `--lf`: a run records the cases that failed its gate; the next
/// run with the flag runs only those; once they pass, the record is empty and the flag runs
/// everything again. The loop a case author goes through: run, fix (here, accept the pending
/// snapshot), rerun the failures.
#[test]
fn rerun_failed_runs_only_the_last_failures_until_they_pass() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("cases");
    copy_case(&fixture("failing/wrong_value"), &tree.join("wrong_value"));
    copy_case(
        &fixture("passing/reduction_within_tolerance"),
        &tree.join("fine"),
    );
    copy_case(
        &fixture("errored/gather_index_out_of_range"),
        &tree.join("out_of_range"),
    );
    let record = tmp.path().join("state/last.json");
    let record_arg = record.to_str().unwrap();
    let tree_arg = tree.to_str().unwrap();
    let names = |r: &Run| -> Vec<String> {
        let v = r.json();
        v["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_string())
            .collect()
    };
    let go = |extra: &[&str]| {
        let mut args = vec![
            "run",
            tree_arg,
            "--format",
            "json",
            "--last-run",
            record_arg,
        ];
        args.extend_from_slice(extra);
        run(args)
    };

    // Without a record, --rerun-failed runs everything and says so.
    let first = go(&["--rerun-failed"]);
    first.expect_code(1);
    assert_eq!(names(&first), ["fine", "out_of_range", "wrong_value"]);
    assert!(
        first
            .stderr
            .contains("note: no record of a previous run in"),
        "{}",
        first.stderr
    );
    let recorded: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
    let labels: Vec<(&str, &str)> = recorded["failed"]
        .as_object()
        .unwrap()
        .values()
        .map(|f| (f["name"].as_str().unwrap(), f["label"].as_str().unwrap()))
        .collect();
    assert_eq!(labels, [("out_of_range", "ERROR"), ("wrong_value", "FAIL")]);

    // The two failures alone.
    let second = go(&["--rerun-failed"]);
    second.expect_code(1);
    assert_eq!(names(&second), ["out_of_range", "wrong_value"]);
    assert!(
        second
            .stderr
            .contains("note: rerunning the 2 of 3 selected cases that failed in the last run"),
        "{}",
        second.stderr
    );

    // A filtered run that fixes one of them leaves the other recorded.
    let pending = tmp.path().join("pending");
    run([
        "run",
        tree_arg,
        "--filter",
        "^wrong_value$",
        "--pending",
        pending.to_str().unwrap(),
        "--last-run",
        record_arg,
    ])
    .expect_code(1);
    run([
        "review",
        pending.to_str().unwrap(),
        tree_arg,
        "--accept-all",
    ])
    .expect_code(0);
    go(&["--rerun-failed", "--filter", "^wrong_value$"]).expect_code(0);
    let third = go(&["--rerun-failed"]);
    assert_eq!(names(&third), ["out_of_range"]);

    // Once nothing selected failed last time, every case runs again.
    let fourth = go(&["--rerun-failed", "--filter", "^(fine|wrong_value)$"]);
    fourth.expect_code(0);
    assert_eq!(names(&fourth), ["fine", "wrong_value"]);
    assert!(
        fourth
            .stderr
            .contains("none of the 2 selected cases failed in the last run"),
        "{}",
        fourth.stderr
    );
}

/// A damaged record is named, and stops a `--rerun-failed` run (exit 2) rather than silently
/// running everything; a plain run replaces it.
#[test]
fn a_damaged_record_is_a_usage_error_for_rerun_failed_only() {
    let tmp = tempfile::tempdir().unwrap();
    let record = tmp.path().join("last.json");
    std::fs::write(&record, "[1, 2").unwrap();
    let args = |extra: &'static str| {
        let mut a = vec![
            "run".to_string(),
            fixture("passing/reduction_within_tolerance")
                .display()
                .to_string(),
            "--last-run".to_string(),
            record.display().to_string(),
        ];
        if !extra.is_empty() {
            a.push(extra.to_string());
        }
        a
    };
    let r = run(args("--rerun-failed"));
    r.expect_code(2);
    assert!(
        r.stderr
            .contains("is not a record of onnx-idx-check's last run (delete it, then run again)"),
        "{}",
        r.stderr
    );
    run(args("")).expect_code(0);
    let fixed: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
    assert_eq!(fixed["schema_version"], 1);
    assert_eq!(fixed["failed"], serde_json::json!({}));
}

/// Report #29: in a run over several PATHs, a case's rerun command names only the PATH that holds
/// it, and still reproduces it.
#[test]
fn report_29_the_rerun_command_names_only_the_path_holding_the_case() {
    let failing = fixtures().join("failing");
    let passing = fixtures().join("passing");
    let r = run([
        "run",
        passing.to_str().unwrap(),
        failing.to_str().unwrap(),
        "--filter",
        "^(wrong_value|nan_payloads_are_equal)$",
        "--color",
        "never",
    ]);
    r.expect_code(1);
    let b = &blocks(&r.stdout)["wrong_value"];
    let rerun = b
        .lines
        .iter()
        .find_map(|l| l.strip_prefix("rerun: "))
        .unwrap();
    assert_eq!(
        rerun,
        format!(
            "onnx-idx-check run {} --filter '^wrong_value$'",
            failing.display()
        )
    );
    let again = run(shell_words(rerun).into_iter().skip(1));
    again.expect_code(1);
    assert_eq!(
        case_lines(&again.stdout),
        [("FAIL".to_string(), "wrong_value".to_string())]
    );
}
