//! `hunt --runtime-cmd ...` against tests/fixtures/runtime/buggy_runtime.py: the planted bug is
//! found, deduplicated, minimized to a case that reproduces it, and shards split a hunt without
//! overlap.

use crate::minimize::buggy;
use crate::support::{run, run_within, Run};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

/// The longest a hunt bounded by `--max-cases` may take on a loaded machine.
const LONG: std::time::Duration = std::time::Duration::from_secs(900);

/// The (number, seed, case, verdict) rows of a hunt's tried.tsv, in the order tried.
fn rows(dir: &Path) -> Vec<(u64, String, String, String)> {
    std::fs::read_to_string(dir.join("tried.tsv"))
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let text = |k: usize| f[k].to_string();
            (f[0].parse().unwrap(), text(1), text(2), text(3))
        })
        .collect()
}

/// The (number, seed, case) rows of a hunt's tried.tsv.
fn tried(dir: &Path) -> BTreeSet<(u64, String, String)> {
    rows(dir)
        .into_iter()
        .map(|(n, s, c, _)| (n, s, c))
        .collect()
}

#[test]
fn hunt_finds_the_planted_bug_once_and_its_case_reproduces() {
    if !crate::support::python3("hunt") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("hunt");
    let r = run_within(
        LONG,
        [
            "hunt",
            "--runtime-cmd",
            &buggy(1),
            "--ops",
            "Gather",
            "--max-cases",
            "150",
            "--time",
            "900",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    r.expect_code(0);
    let findings: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("findings.json")).unwrap()).unwrap();
    let list = findings.as_array().unwrap();
    // One bug, one finding, whatever the versions it shows on.
    assert_eq!(list.len(), 1, "{}", r.stdout);
    let f = &list[0];
    // The planted bug and nothing else: float Gather, a wrong output no class explains.
    assert_eq!(
        (
            &f["runtime"],
            &f["class"],
            &f["op"],
            &f["dtypes"],
            &f["diagnosis"]
        ),
        (
            &Value::from("buggy"),
            &Value::from("wrong-output"),
            &Value::from("Gather"),
            &serde_json::json!(["float"]),
            &Value::from("none")
        ),
        "{f}"
    );
    for key in [
        "runtime_version",
        "versions",
        "symptom",
        "seen",
        "case",
        "original",
        "seed",
    ] {
        assert!(f.get(key).is_some(), "{key} missing in {f}");
    }
    assert!(f["minimal_size"].as_u64() <= f["original_size"].as_u64());
    // Its directory holds a case that fails the same way.
    let case = out.join(f["case"].as_str().unwrap());
    assert!(case.join("REPORT.md").is_file());
    let again = run([
        "run",
        case.to_str().unwrap(),
        "--runtime-cmd",
        &buggy(1),
        "--format",
        "json",
    ]);
    again.expect_code(1);
    let report: Value = serde_json::from_str(&again.stdout).unwrap();
    assert_eq!(report["cases"][0]["status"], "failed");
    // Many cases hit the bug, on more than one version: they are sightings of the one finding.
    assert!(f["seen"].as_u64().unwrap() > 1, "{f}");
    assert!(
        r.stdout.contains("\nWrong output (1)\n  Gather-"),
        "{}",
        r.stdout
    );
    assert!(
        r.stderr.contains("finding: buggy wrong output: Gather-"),
        "{}",
        r.stderr
    );
}

#[test]
fn shards_together_try_exactly_the_cases_of_a_single_hunt() {
    if !crate::support::python3("hunt") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let hunt = |name: &str, shard: Option<&str>| {
        let out = tmp.path().join(name);
        let mut args = vec![
            "hunt".to_string(),
            "--runtime-cmd".into(),
            buggy(999),
            "--ops".into(),
            "GatherElements".into(),
            "--seed".into(),
            "7".into(),
            "--max-cases".into(),
            "25".into(),
            "--time".into(),
            "60".into(),
            "--out".into(),
            out.to_str().unwrap().into(),
        ];
        if let Some(s) = shard {
            args.push("--shard".into());
            args.push(s.into());
        }
        run(&args).expect_code(0);
        tried(&out)
    };
    let all = hunt("all", None);
    let one = hunt("one", Some("1/2"));
    let two = hunt("two", Some("2/2"));
    assert_eq!(all.len(), 25);
    assert!(one.is_disjoint(&two));
    assert_eq!(one.union(&two).cloned().collect::<BTreeSet<_>>(), all);
    assert!(one.iter().all(|(i, _, _)| i % 2 == 0));
    // The same seed tries the same cases in the same order.
    assert_eq!(hunt("again", None), all);
}

#[test]
fn hunt_refuses_bad_arguments_with_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("h");
    let out = out.to_str().unwrap();
    run(["hunt", "--out", out]).expect_code(2);
    run([
        "hunt",
        "--runtime-cmd",
        "true",
        "--ops",
        "Gaher",
        "--out",
        out,
    ])
    .expect_code(2);
    run([
        "hunt",
        "--runtime-cmd",
        "true",
        "--shard",
        "3/2",
        "--out",
        out,
    ])
    .expect_code(2);
    run(["hunt", "--runtime-cmd", "true", "--time", "0", "--out", out]).expect_code(2);
}

/// Adversary D1: `hunt --out` on a directory holding a `findings.json` beside the user's files
/// refuses it (exit 2) and removes nothing, whether the runtime starts or not; a hunt's own
/// output, finding directories included, is replaced only while it holds nothing else.
#[test]
fn hunt_out_never_removes_what_it_did_not_write() {
    if !crate::support::python3("hunt") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    std::fs::create_dir_all(project.join("src")).unwrap();
    for f in ["REPORT.md", "findings.json", "src/main.rs", "thesis.tex"] {
        std::fs::write(project.join(f), f).unwrap();
    }
    let before = crate::minimize::tree(&project);
    let hunt = |runtime: &str, out: &Path| {
        run_within(
            LONG,
            [
                "hunt",
                "--runtime-cmd",
                runtime,
                "--ops",
                "Gather",
                "--max-cases",
                "150",
                "--time",
                "900",
                "--out",
                out.to_str().unwrap(),
            ],
        )
    };
    let buggy_1 = buggy(1);
    for runtime in [buggy_1.as_str(), "/nonexistent/runtime"] {
        let r = hunt(runtime, &project);
        r.expect_code(2);
        assert!(
            r.stderr
                .contains("holds REPORT.md, which onnx-idx-check did not write there"),
            "{}",
            r.stderr
        );
        assert_eq!(crate::minimize::tree(&project), before);
    }
    // A runtime that cannot start leaves even a hunt's own output as it was.
    let out = tmp.path().join("hunt");
    hunt(&buggy(1), &out).expect_code(0);
    let first = crate::minimize::tree(&out);
    let finding = first
        .iter()
        .find_map(|f| f.strip_suffix("/REPORT.md"))
        .unwrap_or_else(|| panic!("no finding directory: {first:?}"))
        .to_string();
    hunt("/nonexistent/runtime", &out).expect_code(2);
    assert_eq!(crate::minimize::tree(&out), first);
    // A file of the user's inside a finding's directory: refused, kept.
    let notes = out.join(&finding).join("notes.txt");
    std::fs::write(&notes, "mine").unwrap();
    let r = hunt(&buggy(1), &out);
    r.expect_code(2);
    assert!(
        r.stderr.contains(&format!("holds {finding}/notes.txt")),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "mine");
    // Without it, the earlier hunt's output is replaced by a new one.
    std::fs::remove_file(&notes).unwrap();
    hunt(&buggy(1), &out).expect_code(0);
    assert!(out.join("findings.json").is_file());
    assert!(!crate::minimize::tree(&out).is_empty());
}

/// A hunt of tests/fixtures/runtime/planted_runtime.py over `ops`, its first `cases` cases of
/// the seeded order, however long they take on a loaded machine: its directory (the hunt in
/// `hunt/`), the runtime's command, the run and its findings.json.
fn planted_hunt(ops: &str, cases: u32) -> (tempfile::TempDir, String, Run, Value) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("hunt");
    let planted = format!(
        "python3 {}",
        crate::support::root()
            .join("tests/fixtures/runtime/planted_runtime.py")
            .display()
    );
    let r = run_within(
        LONG,
        [
            "hunt",
            "--runtime-cmd",
            &planted,
            "--ops",
            ops,
            "--max-cases",
            &cases.to_string(),
            "--time",
            "900",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    r.expect_code(0);
    let findings: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("findings.json")).unwrap()).unwrap();
    (tmp, planted, r, findings)
}

/// tests/fixtures/runtime/planted_runtime.py: eight bugs modelled on upstream reports, one of each
/// class, one that only a case in context shows, and types and a domain it does not implement.
/// A hunt reports each bug once, in its class, and no refusal of what the runtime does not
/// implement: those are the coverage table.
#[test]
fn hunt_reports_each_planted_bug_once_in_its_class_and_no_unimplemented_refusal() {
    if !crate::support::python3("hunt") {
        return;
    }
    // The first 700 cases of the seeded order, however long they take on a loaded machine.
    let (tmp, planted, r, findings) = planted_hunt(
        "Gather,GatherElements,GatherND,ScatterND,ScatterElements,org.openvinotoolkit.Gather",
        700,
    );
    let out = tmp.path().join("hunt");
    let got: BTreeSet<(String, String, String)> = findings
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["class"].as_str().unwrap().to_string(),
                f["op"].as_str().unwrap().to_string(),
                f["context"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let want: BTreeSet<(String, String, String)> = [
        ("crash", "GatherND", ""),
        ("wrong-output", "Gather", ""),
        ("wrong-output", "GatherElements", ""),
        ("wrong-output", "GatherND", "after-transpose"),
        ("unsafe", "Gather", ""),
        ("nondeterministic", "ScatterND", ""),
        ("refuses-valid", "ScatterND", ""),
        ("accepts-invalid", "ScatterElements", ""),
    ]
    .into_iter()
    .map(|(c, o, x)| (c.to_string(), o.to_string(), x.to_string()))
    .collect();
    assert_eq!(got, want, "{}", r.stdout);
    assert_eq!(
        findings.as_array().unwrap().len(),
        want.len(),
        "{}",
        r.stdout
    );
    // The bugs that show on several versions are one finding each, listing them.
    let wrong = findings
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["class"] == "wrong-output")
        .unwrap();
    assert!(wrong["versions"].as_array().unwrap().len() > 1, "{wrong}");
    assert_eq!(
        wrong["operators"].as_array().unwrap().len(),
        wrong["versions"].as_array().unwrap().len(),
        "{wrong}"
    );
    // The bug only a graph shows is written with its graph, and its report says so.
    let in_context = findings
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["context"] == "after-transpose")
        .unwrap();
    assert_eq!(in_context["minimized"], false, "{in_context}");
    let dir = out.join(in_context["case"].as_str().unwrap());
    let report = std::fs::read_to_string(dir.join("REPORT.md")).unwrap();
    assert!(
        report.contains("**In context**: GatherND-")
            && report.contains("fails inside a gather on a Transpose's output"),
        "{report}"
    );
    assert!(
        report.contains("2 node(s) (Transpose, GatherND)"),
        "{report}"
    );
    assert!(report.contains("\nSeen on: GatherND-"), "{report}");
    let again = run([
        "run",
        dir.to_str().unwrap(),
        "--runtime-cmd",
        &planted,
        "--format",
        "json",
    ]);
    again.expect_code(1);
    // A bug of constant indices names the variants that show it, and those that do not.
    let constant = findings
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["op"] == "GatherElements")
        .unwrap();
    let ids = |key: &str| -> BTreeSet<String> {
        constant[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };
    let both = |a: &str, b: &str| -> BTreeSet<String> {
        ["static", "symbolic"]
            .iter()
            .flat_map(|s| [format!("{a}-{s}"), format!("{b}-{s}")])
            .collect()
    };
    assert_eq!(
        ids("variants_failing"),
        both("initializer", "constant"),
        "{constant}"
    );
    assert_eq!(
        ids("variants_passing"),
        ["input-static", "input-symbolic"]
            .map(str::to_string)
            .into(),
        "{constant}"
    );
    // What it does not implement is a table, not findings.
    let table = r
        .stdout
        .split("Not implemented by the runtime")
        .nth(1)
        .unwrap_or_else(|| panic!("no coverage table: {}", r.stdout));
    assert!(
        table.contains("org.openvinotoolkit.Gather-") && table.contains("every version"),
        "{table}"
    );
    assert!(table.contains("complex64"), "{table}");
    // By severity: crashes first, accepted invalid input last.
    let at = |h: &str| {
        r.stdout
            .find(h)
            .unwrap_or_else(|| panic!("{h} missing: {}", r.stdout))
    };
    assert!(at("Crash (1)") < at("Wrong output (3)"));
    assert!(at("Wrong output (3)") < at("Refuses valid input (1)"));
    assert!(at("Refuses valid input (1)") < at("Accepts invalid input (1)"));
    assert!(at("Accepts invalid input (1)") < at("Not implemented by the runtime"));
}

/// The planted runtime refuses zero-size data on GatherND and on ScatterElements when the other
/// inputs are Constant nodes, each in its own words: one cause (how it takes in an empty
/// Constant), so one finding that lists both operators and fails with Constant nodes only.
#[test]
fn one_cause_shown_by_empty_constants_on_two_operators_is_one_finding() {
    if !crate::support::python3("hunt") {
        return;
    }
    let (tmp, _, r, findings) = planted_hunt("GatherND,ScatterElements", 3500);
    let out = tmp.path().join("hunt");
    let refusals: Vec<&Value> = findings
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["symptom"].as_str().unwrap().contains("shape inference"))
        .collect();
    assert_eq!(refusals.len(), 1, "{}", r.stdout);
    let f = refusals[0];
    assert_eq!(f["class"], "refuses-valid", "{f}");
    let operators: Vec<&str> = f["operators"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o.as_str().unwrap())
        .collect();
    for op in ["GatherND-", "ScatterElements-"] {
        assert!(operators.iter().any(|o| o.starts_with(op)), "{f}");
    }
    assert_eq!(
        f["variants_failing"],
        serde_json::json!(["constant-static", "constant-symbolic"]),
        "{f}"
    );
    let report =
        std::fs::read_to_string(out.join(f["case"].as_str().unwrap()).join("REPORT.md")).unwrap();
    assert!(report.contains("\nSeen on: GatherND-"), "{report}");
    assert!(report.contains("ScatterElements-"), "{report}");
}

/// A bug of one mode of a bundled runtime: the planted runtime stands in for the onnxruntime
/// adapter (a stand-in Python runs it in the adapter's place, with the adapter's options), and
/// its ScatterElements on float data is wrong only when started with `--optimization disabled`,
/// the adapter's second mode. The hunt runs cases in both modes without a flag; the finding
/// names the mode that shows the bug and the one that does not, and its report reruns and
/// reproduces it in the failing mode.
#[cfg(unix)]
#[test]
fn a_bug_of_one_mode_names_the_failing_mode_and_the_passing_one() {
    use std::os::unix::fs::PermissionsExt;
    if !crate::support::python3("hunt") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let planted = crate::support::root().join("tests/fixtures/runtime/planted_runtime.py");
    // The adapter's script is the first argument; anything else (`-c ...`, the environment
    // probe of the reports) is Python's.
    let python = tmp.path().join("python");
    std::fs::write(
        &python,
        format!(
            "#!/bin/sh\ncase \"$1\" in\n  *.py) shift; exec python3 '{}' \"$@\" ;;\n  *) exec python3 \"$@\" ;;\nesac\n",
            planted.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = tmp.path().join("hunt");
    let r = crate::support::command()
        .timeout(LONG)
        .env("ONNX_IDX_CHECK_PYTHON", &python)
        .args([
            "hunt",
            "--runtime",
            "onnxruntime",
            "--ops",
            "ScatterElements",
        ])
        .args(["--max-cases", "300", "--time", "900", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&r.stdout);
    assert_eq!(
        r.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&r.stderr)
    );
    let findings: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("findings.json")).unwrap()).unwrap();
    let wrong: Vec<&Value> = findings
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["class"] == "wrong-output" && f["op"] == "ScatterElements")
        .collect();
    assert_eq!(wrong.len(), 1, "{stdout}");
    let f = wrong[0];
    assert_eq!(
        f["modes_failing"],
        serde_json::json!(["optimization=disabled"]),
        "{f}"
    );
    assert_eq!(
        f["modes_passing"],
        serde_json::json!(["optimization=all"]),
        "{f}"
    );
    // A bug of every mode names both as failing (the missing check of ScatterElements-11/13).
    let accepts = findings
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["class"] == "accepts-invalid")
        .unwrap_or_else(|| panic!("{stdout}"));
    assert_eq!(accepts["modes_passing"], serde_json::json!([]), "{accepts}");
    assert_eq!(
        accepts["modes_failing"].as_array().map(Vec::len),
        Some(2),
        "{accepts}"
    );
    assert!(
        stdout.contains("; only with optimization=disabled)"),
        "{stdout}"
    );
    let report =
        std::fs::read_to_string(out.join(f["case"].as_str().unwrap()).join("REPORT.md")).unwrap();
    assert!(
        report.contains("Runtime modes: fails with: optimizations disabled (`optimization=disabled`); passes with: optimizations all (`optimization=all`).\n"),
        "{report}"
    );
    // Rerun and reproducer in the failing mode: its option and its session option.
    assert!(
        report.contains("`onnx-idx-check run . --runtime onnxruntime:optimization=disabled`"),
        "{report}"
    );
    assert!(
        report
            .contains("so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL\n"),
        "{report}"
    );
    // The runtime, run again for the report, showed the wrong output in that mode.
    let actual = report.split("## Actual").nth(1).unwrap_or_default();
    assert!(actual.contains("element(s) differ"), "{report}");
}
