//! The README's sample sessions are what today's tool prints. Every fenced block of README.md that
//! starts with `$ onnx-idx-check` (or `$ VAR=value onnx-idx-check`) is a sample: it is either run
//! here, in a fresh directory set up for it, and compared line by line with what the binary prints
//! (stdout and stderr together), or listed in [`NOT_RUN`] with the reason it cannot run in
//! `cargo test` (a runtime, a terminal, timings). A new sample that is neither fails the test, so
//! no sample goes stale unnoticed.
//!
//! In a sample, a line `...` stands for any number of lines; durations (`[ 95.5µs]`, the times of
//! `--durations`) and the names of the slowest cases, which change from run to run, are compared
//! as placeholders.

use std::path::Path;
use std::process::Command;

/// Samples this test does not run, by their first command, with the reason.
const NOT_RUN: &[(&str, &str)] = &[
    (
        "onnx-idx-check run testdata/ --runtime onnxruntime --runtime openvino --runtime tract --runtime onnx-reference",
        "needs the four pinned runtimes (tests/cli/bundled_runtimes.rs checks the same table where they are installed)",
    ),
    (
        "onnx-idx-check run testdata/ --actual ort-out/ --expectations scripts/onnxruntime-1.31.1.expectations.toml",
        "needs onnxruntime's outputs (scripts/ort_outputs.py)",
    ),
    (
        "onnx-idx-check run cases/ --pending pending/",
        "an interactive review in a terminal (tests/review_tty.rs drives it in a pty)",
    ),
    (
        "onnx-idx-check bench testdata/onnx-node/test_gather_0",
        "timings",
    ),
];

/// The expectations file of the GitHub Actions sample: `mine/fixed` (a passing case listed as
/// failing) on line 2, an entry matching nothing on line 7.
const KNOWN_TOML: &str = "# known failures of our runtime
[[expect]]
case = \"mine/fixed\"
status = \"failed\"
reason = \"the reduction drops updates\"

[[expect]]
case = \"old/*\"
status = \"failed\"
reason = \"removed long ago\"
";

/// The fixtures (`tests/fixtures/GROUP/NAME`) a sample's `cases/` tree is made of, by the sample's
/// first command: `cases/mine/NAME` for each (`GROUP/NAME>NEW` names it `NEW`).
fn cases_of(first: &str) -> &'static [&'static str] {
    match first {
        "GITHUB_ACTIONS=true onnx-idx-check run cases/ --expectations known.toml --min-cases 3 | grep '^::'" => &[
            "passing/nan_payloads_are_equal>fixed",
            "failing/wrong_value",
        ],
        "onnx-idx-check run cases/" => &[
            "skipped/bool_reduction_max",
            "failing/diagnosed_negative_not_normalized",
            "errored/gather_index_out_of_range",
            "passing/nan_payloads_are_equal",
        ],
        "onnx-idx-check run cases/mine/missing_output" => &["errored/missing_output"],
        _ => &[],
    }
}

/// One sample: its commands, each with the lines it shows.
#[derive(Debug)]
struct Sample {
    /// The README's line of the opening fence, for messages.
    line: usize,
    /// `(command, expected lines)` in order.
    steps: Vec<(String, Vec<String>)>,
}

/// The samples of a Markdown text: fenced blocks whose first line is a `$ ` command that runs the
/// tool.
fn samples(markdown: &str) -> Vec<Sample> {
    let mut out = Vec::new();
    let mut lines = markdown.lines().enumerate();
    while let Some((i, line)) = lines.next() {
        if !line.starts_with("```") {
            continue;
        }
        let mut body = Vec::new();
        for (_, l) in lines.by_ref() {
            if l.starts_with("```") {
                break;
            }
            body.push(l);
        }
        let runs_the_tool = |l: &str| {
            l.strip_prefix("$ ").is_some_and(|c| {
                c.split_whitespace()
                    .find(|w| !w.contains('='))
                    .is_some_and(|w| w == "onnx-idx-check")
            })
        };
        if !body.first().is_some_and(|l| runs_the_tool(l)) {
            continue;
        }
        let mut steps: Vec<(String, Vec<String>)> = Vec::new();
        for l in body {
            match l.strip_prefix("$ ") {
                Some(cmd) => steps.push((cmd.to_string(), Vec::new())),
                None => steps.last_mut().unwrap().1.push(l.to_string()),
            }
        }
        // A blank line between two commands separates them; it is not output.
        for (_, expected) in &mut steps {
            while expected.last().is_some_and(|l| l.trim().is_empty()) {
                expected.pop();
            }
        }
        out.push(Sample { line: i + 1, steps });
    }
    out
}

/// A line with what changes from run to run replaced: `[ 95.5µs]` by `[TIME]`, and a line of the
/// `--durations` list (`     493µs  spec-examples/...`) by `TIME NAME`; trailing spaces dropped.
fn normalized(line: &str) -> String {
    let is_duration = |s: &str| {
        let digits = s.trim_end_matches(|c: char| c.is_ascii_alphabetic() || c == 'µ');
        let unit = &s[digits.len()..];
        !digits.is_empty()
            && digits.chars().all(|c| c.is_ascii_digit() || c == '.')
            && ["ns", "µs", "ms", "s"].contains(&unit)
    };
    let words: Vec<&str> = line.split_whitespace().collect();
    if words.len() == 2 && is_duration(words[0]) && line.starts_with("  ") {
        return "TIME NAME".into();
    }
    let mut out = String::new();
    let mut rest = line;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find(']') else {
            break;
        };
        let inside = rest[open + 1..open + close].trim();
        out.push_str(&rest[..open]);
        if is_duration(inside) {
            out.push_str("[TIME]");
        } else {
            out.push_str(&rest[open..=open + close]);
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    out.trim_end().to_string()
}

/// Whether `actual` matches `expected`, where an expected `...` line matches any run of lines.
fn matches(expected: &[String], actual: &[String]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((e, rest)) if e.trim() == "..." => {
            (0..=actual.len()).any(|skip| matches(rest, &actual[skip..]))
        }
        Some((e, rest)) => actual
            .split_first()
            .is_some_and(|(a, more)| a == e && matches(rest, more)),
    }
}

/// A fresh directory for a sample: `testdata/` copied in, and its `cases/` tree.
fn workdir(first: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    crate::support::copy_case(
        &crate::support::root().join("testdata"),
        &dir.path().join("testdata"),
    );
    for fixture in cases_of(first) {
        let (fixture, name) = match fixture.split_once('>') {
            Some((f, n)) => (f, n),
            None => (*fixture, fixture.rsplit('/').next().unwrap()),
        };
        crate::support::copy_case(
            &crate::support::fixture(fixture),
            &dir.path().join("cases/mine").join(name),
        );
    }
    if first.contains("known.toml") {
        std::fs::write(dir.path().join("known.toml"), KNOWN_TOML).unwrap();
    }
    if first == "onnx-idx-check list testdata/onnx-node" {
        // `list cases`: a model that does not decode, a good case, and one with no data set.
        let cases = dir.path().join("cases");
        std::fs::create_dir_all(cases.join("garbage_model")).unwrap();
        std::fs::write(cases.join("garbage_model/model.onnx"), b"\x0f\xff garbage").unwrap();
        let good = crate::support::root().join("testdata/onnx-node/test_gather_0");
        crate::support::copy_case(&good, &cases.join("good"));
        std::fs::create_dir_all(cases.join("nodata")).unwrap();
        std::fs::copy(good.join("model.onnx"), cases.join("nodata/model.onnx")).unwrap();
    }
    dir
}

/// Runs one command line of a sample in `dir` with the binary first on PATH, stdout and stderr
/// together, as a terminal shows them.
fn run_line(dir: &Path, cmd: &str) -> Vec<String> {
    let bin = Path::new(env!("CARGO_BIN_EXE_onnx-idx-check"));
    let path = std::env::join_paths(std::iter::once(bin.parent().unwrap().to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("exec 2>&1; {cmd}"))
        .current_dir(dir)
        .env("PATH", path)
        .env("ONNX_IDX_CHECK_LAST_RUN", dir.join(".last-run.json"))
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_WORKSPACE")
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(normalized)
        .collect()
}

#[test]
fn every_sample_of_the_readme_is_what_the_tool_prints() {
    let readme = std::fs::read_to_string(crate::support::root().join("README.md")).unwrap();
    let all = samples(&readme);
    let mut checked = 0;
    let mut wrong = Vec::new();
    for sample in &all {
        let first = sample.steps[0].0.as_str();
        if NOT_RUN.iter().any(|(c, _)| *c == first) {
            continue;
        }
        let dir = workdir(first);
        for (cmd, expected) in &sample.steps {
            let expected: Vec<String> = expected.iter().map(|l| normalized(l)).collect();
            let actual = run_line(dir.path(), cmd);
            if !matches(&expected, &actual) {
                wrong.push(format!(
                    "README.md line {}: `{cmd}`\n~~~ the README shows\n{}\n~~~ the tool prints\n{}\n~~~",
                    sample.line,
                    expected.join("\n"),
                    actual.join("\n")
                ));
            }
        }
        checked += 1;
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
    // Every sample not run is still in the README under the command listed for it.
    for (cmd, why) in NOT_RUN {
        assert!(
            all.iter().any(|s| s.steps[0].0 == *cmd),
            "NOT_RUN lists `{cmd}` ({why}), which no README sample starts with any more"
        );
    }
    assert!(
        checked >= 8,
        "only {checked} README samples were run; the parser may have missed some"
    );
    eprintln!(
        "README samples: {checked} run, {} not run (listed with their reasons in tests/cli/readme.rs)",
        NOT_RUN.len()
    );
}

#[test]
fn the_sample_matcher_can_fail() {
    let l = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(matches(&l(&["a", "...", "z"]), &l(&["a", "b", "c", "z"])));
    assert!(matches(&l(&["a", "...", "z"]), &l(&["a", "z"])));
    assert!(!matches(&l(&["a", "...", "z"]), &l(&["a", "b"])));
    assert!(!matches(&l(&["a", "b"]), &l(&["a", "b", "c"])));
    assert_eq!(
        normalized("Summary [   545µs] 4 cases: 1 passed"),
        "Summary [TIME] 4 cases: 1 passed"
    );
    assert_eq!(normalized("     493µs  spec-examples/x"), "TIME NAME");
    assert_eq!(normalized("data [2, 3]  "), "data [2, 3]");
}
