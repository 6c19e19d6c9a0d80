//! GitHub Actions annotations (`::error file=...,line=...::`), written when `GITHUB_ACTIONS` is
//! `true`: one per case that fails the gate, at its model or at its expectations entry, one per
//! expired or unmatched entry, and one per unmet requirement.

use crate::support::{command, fixture, fixtures, Run};

/// Three cases: one passing (listed as failing, so an unexpected pass), one failing, one
/// errored.
const THREE: &str =
    "^(passing/reduction_within_tolerance|failing/wrong_value|errored/gather_index_out_of_range)$";

/// Two entries: the first (at line 2) makes the passing case an XPASS, the second (at line 7)
/// matches nothing. Counted by hand from the text.
const EXPECTATIONS: &str = "# known failures
[[expect]]
case = \"passing/reduction_within_tolerance\"
status = \"failed\"
reason = \"listed, but it passes\"

[[expect]]
case = \"nothing/*\"
status = \"failed\"
reason = \"matches nothing\"
";

fn run_env(args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = command();
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.args(args).output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn annotations(text: &str) -> Vec<&str> {
    text.lines().filter(|l| l.starts_with("::")).collect()
}

#[test]
fn annotations_point_at_models_entries_and_requirements_on_github_actions() {
    let dir = tempfile::tempdir().unwrap();
    let exp = dir.path().join("known.toml");
    std::fs::write(&exp, EXPECTATIONS).unwrap();
    let fixtures = fixtures();
    let args = [
        "run",
        fixtures.to_str().unwrap(),
        "--filter",
        THREE,
        "--expectations",
        exp.to_str().unwrap(),
        "--min-cases",
        "10",
        "--color",
        "never",
    ];
    let r = run_env(&args, &[("GITHUB_ACTIONS", "true")]);
    r.expect_code(1);
    let got = annotations(&r.stdout);
    let model = |case: &str| fixture(case).join("model.onnx").display().to_string();
    let exp_file = exp.display().to_string().replace(':', "%3A");
    let expected_starts = [
        format!(
            "::error file={},title=onnx-idx-check%3A ERROR errored/gather_index_out_of_range::test_data_set_0: ",
            model("errored/gather_index_out_of_range")
        ),
        format!(
            "::error file={},title=onnx-idx-check%3A FAIL failing/wrong_value::test_data_set_0: output 'output': 1 of 4 elements differ",
            model("failing/wrong_value")
        ),
        format!(
            "::error file={exp_file},line=2,title=onnx-idx-check%3A XPASS passing/reduction_within_tolerance::unexpectedly passed"
        ),
        format!(
            "::warning file={exp_file},line=7,title=onnx-idx-check%3A unmatched expectation 'nothing/*'::the entry for 'nothing/*' matches no case"
        ),
        "::error title=onnx-idx-check%3A min-cases::--min-cases 10: only 3 cases ran".to_string(),
    ];
    assert_eq!(got.len(), expected_starts.len(), "{}", r.stdout);
    for (line, start) in got.iter().zip(&expected_starts) {
        assert!(
            line.starts_with(start.as_str()),
            "{line}\n  should start with\n{start}"
        );
    }
    // A multi-line message stays on one line: the rerun command follows an escaped newline.
    assert!(
        got[1].contains("%0Arerun: onnx-idx-check run "),
        "{}",
        got[1]
    );

    // Outside GitHub Actions, the same run annotates nothing.
    let plain = run_env(&args, &[]);
    assert!(annotations(&plain.stdout).is_empty(), "{}", plain.stdout);
    assert!(annotations(&plain.stderr).is_empty(), "{}", plain.stderr);
}

#[test]
fn annotations_go_to_stderr_when_a_report_takes_stdout_and_paths_are_workspace_relative() {
    let root = crate::support::root();
    let r = run_env(
        &[
            "run",
            fixtures().to_str().unwrap(),
            "--filter",
            "^failing/wrong_value$",
            "--format",
            "json",
        ],
        &[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_WORKSPACE", root.to_str().unwrap()),
        ],
    );
    r.expect_code(1);
    assert_eq!(r.json()["summary"]["failed"], 1);
    assert_eq!(
        annotations(&r.stderr)
            .iter()
            .map(|l| l.split("::").nth(1).unwrap())
            .collect::<Vec<_>>(),
        ["error file=tests/fixtures/failing/wrong_value/model.onnx,title=onnx-idx-check%3A FAIL failing/wrong_value"],
        "{}",
        r.stderr
    );
}

#[test]
fn a_passing_run_annotates_nothing() {
    let r = run_env(
        &["run", "testdata/onnx-node", "--filter", "^test_gather_0$"],
        &[("GITHUB_ACTIONS", "true")],
    );
    r.expect_code(0);
    assert!(annotations(&r.stdout).is_empty(), "{}", r.stdout);
}

/// Case names that hold a newline followed by a workflow command, CR, ESC and BEL (a pull
/// request controls directory names): no line of stdout or stderr starts with a command the
/// tool did not write, no control byte reaches the log, and the rerun command, printed on one
/// line, selects exactly its case when the shell runs it.
#[test]
fn case_names_with_control_characters_cannot_inject_workflow_commands() {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    let names = [
        "a\n::stop-commands::pwned",
        "b\n::error file=README.md,line=1::injected by a case name",
        "c\x1b]0;hijacked title\x07\x1b[2J\r::warning::cr",
        "d\u{9b}31m\x7f",
    ];
    for n in names {
        crate::support::copy_case(&fixture("failing/wrong_value"), &tree.join(n));
    }
    let t = tree.to_str().unwrap();
    let r = run_env(
        &["run", t, "--color", "never"],
        &[("GITHUB_ACTIONS", "true")],
    );
    r.expect_code(1);
    for (stream, text) in [("stdout", &r.stdout), ("stderr", &r.stderr)] {
        for line in text.lines().filter(|l| l.starts_with("::")) {
            assert!(
                line.starts_with("::error file=")
                    && line.contains(",title=onnx-idx-check%3A FAIL "),
                "{stream}: a workflow command the tool did not write: {line:?}"
            );
        }
        for bad in ['\x1b', '\x07', '\r', '\u{9b}', '\x7f'] {
            assert!(!text.contains(bad), "{stream} holds {bad:?}:\n{text}");
        }
    }
    // One annotation per case, each naming its case with visible escapes.
    assert_eq!(annotations(&r.stdout).len(), 4, "{}", r.stdout);
    assert!(
        r.stdout.contains("FAIL a\\n%3A%3Astop-commands%3A%3Apwned"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("] a\\n::stop-commands::pwned\n"),
        "{}",
        r.stdout
    );

    // Each rerun command is one line and selects its case alone.
    let reruns: Vec<&str> = r
        .stdout
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("rerun: "))
        .collect();
    assert!(reruns.len() >= 4, "{}", r.stdout);
    let bin = env!("CARGO_BIN_EXE_onnx-idx-check");
    for (rerun, name) in reruns.iter().zip(names) {
        let line = rerun.replacen("onnx-idx-check run", &format!("'{bin}' run"), 1);
        let out = std::process::Command::new("sh")
            .args(["-c", &format!("{line} --format json")])
            .current_dir(crate::support::root())
            .output()
            .unwrap();
        let report: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{line}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
        let ran: Vec<&str> = report["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(ran, [name], "{line}");
    }
}

/// An expired entry whose cases a `--filter` leaves out does not fail the run (it fails a run
/// that runs them): its annotation is a warning, as the gate has it.
#[test]
fn an_expired_entry_for_cases_left_out_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let exp = dir.path().join("known.toml");
    std::fs::write(
        &exp,
        "[[expect]]\ncase = \"failing/wrong_value\"\nstatus = \"failed\"\nreason = \"old\"\nuntil = 2020-01-01\n",
    )
    .unwrap();
    let fixtures = fixtures();
    let r = run_env(
        &[
            "run",
            fixtures.to_str().unwrap(),
            "--filter",
            "^passing/reduction_within_tolerance$",
            "--expectations",
            exp.to_str().unwrap(),
        ],
        &[("GITHUB_ACTIONS", "true")],
    );
    r.expect_code(0);
    let got = annotations(&r.stdout);
    assert_eq!(got.len(), 1, "{}", r.stdout);
    assert!(
        got[0].starts_with("::warning ") && got[0].contains("expired"),
        "{}",
        got[0]
    );
}
