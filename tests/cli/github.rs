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
