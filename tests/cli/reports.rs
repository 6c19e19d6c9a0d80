//! Several reports from one run (`--report FORMAT=FILE` beside `--format` / `--output`), the
//! run's gate (`--min-cases`, `--require-op`) in every format, and the bound on `--jobs`.

use crate::support::{fixtures, run, Run};
use serde_json::Value;
use std::path::Path;

/// The four cases of the snapshots' mixed run: one of each verdict.
const MIXED: &str = crate::snapshots::MIXED;

/// Durations differ between runs; everything else must not.
fn without_durations(s: &str) -> String {
    let re = regex::Regex::new(
        r#"\[\s*\d+(\.\d+)?(ns|µs|ms|s)\]|time="[0-9.]+"|"duration_(ms|ns)": \d+"#,
    )
    .unwrap();
    re.replace_all(s, "[D]").into_owned()
}

fn mixed(extra: &[&str]) -> Run {
    let mut args = vec![
        "run",
        fixtures().to_str().unwrap(),
        "--filter",
        MIXED,
        "--color",
        "never",
        "--jobs",
        "2",
    ]
    .into_iter()
    .map(String::from)
    .collect::<Vec<_>>();
    args.extend(extra.iter().map(|s| s.to_string()));
    run(args)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn one_run_writes_every_report_beside_the_human_output() {
    let dir = tempfile::tempdir().unwrap();
    let f = |name: &str| dir.path().join(name);
    let report = |format: &str, name: &str| format!("{format}={}", f(name).display());
    let r = mixed(&[
        "--report",
        &report("junit", "j.xml"),
        "--report",
        &report("markdown", "m.md"),
        "--report",
        &report("json", "r.json"),
        "--report",
        &report("human", "h.txt"),
    ]);
    r.expect_code(1);
    // The terminal output is the plain run's, and each file is what its --format writes.
    let plain = mixed(&[]);
    assert_eq!(
        without_durations(&r.stdout),
        without_durations(&plain.stdout)
    );
    for (format, file) in [("junit", "j.xml"), ("markdown", "m.md"), ("json", "r.json")] {
        let alone = mixed(&["--format", format]);
        assert_eq!(
            without_durations(&read(&f(file))),
            without_durations(&alone.stdout),
            "{format}"
        );
    }
    assert_eq!(
        without_durations(&read(&f("h.txt"))),
        without_durations(&plain.stdout)
    );
}

#[test]
fn a_report_on_stdout_moves_the_human_summary_to_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("j.xml");
    let r = mixed(&[
        "--report",
        "markdown=-",
        "--report",
        &format!("junit={}", junit.display()),
    ]);
    r.expect_code(1);
    assert!(
        r.stdout.starts_with("## onnx-idx-check: 4 cases"),
        "{}",
        r.stdout
    );
    assert!(r.stderr.contains("Summary"), "{}", r.stderr);
    assert!(read(&junit).contains("<testsuites"));
}

#[test]
fn two_reports_on_stdout_or_one_file_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let same = dir.path().join("same");
    let same = same.to_str().unwrap();
    for (args, words) in [
        (
            vec!["--format", "json", "--report", "markdown=-"],
            vec!["--format json", "--report markdown=-", "stdout"],
        ),
        (
            vec!["--report", "junit=-", "--report", "json=-"],
            vec!["--report junit=-", "--report json=-"],
        ),
        (
            vec![
                "--report",
                &format!("junit={same}"),
                "--report",
                &format!("json={same}"),
            ],
            vec!["same file"],
        ),
        (
            vec![
                "--format",
                "json",
                "--output",
                same,
                "--report",
                &format!("markdown={same}"),
            ],
            vec!["--output", "same file"],
        ),
        (vec!["--report", "human=-"], vec!["human"]),
        (vec!["--report", "xml=a"], vec!["unknown format 'xml'"]),
        (vec!["--report", "junit"], vec!["FORMAT=FILE"]),
    ] {
        let r = mixed(&args);
        r.expect_code(2);
        for w in words {
            assert!(r.stderr.contains(w), "{args:?}: {w} not in {}", r.stderr);
        }
        assert!(!Path::new(same).exists(), "{args:?}: nothing is written");
    }
}

/// `tests/fixtures/passing`: six cases, every one passes (Gather-13, ScatterElements-16,
/// OpenVINO's Gather-8).
fn passing(extra: &[&str], format: &str) -> Run {
    let mut args = vec![
        "run",
        "tests/fixtures/passing",
        "--color",
        "never",
        "--format",
        format,
    ];
    args.extend(extra);
    run(args)
}

fn gate(report: &Value) -> &Value {
    &report["summary"]["gate"]
}

#[test]
fn min_cases_fails_a_run_that_ran_fewer_in_every_format() {
    let count = crate::support::fixture_names()
        .iter()
        .filter(|n| n.starts_with("passing/"))
        .count();
    let enough = count.to_string();
    let too_many = (count + 1).to_string();
    let r = passing(&["--min-cases", &enough], "json");
    r.expect_code(0);
    assert_eq!(
        gate(&r.json()),
        &serde_json::json!({"status": "passed", "reasons": []})
    );

    let message =
        format!("--min-cases {too_many}: only {count} cases ran (skipped cases do not count)");
    let r = passing(&["--min-cases", &too_many], "json");
    r.expect_code(1);
    assert_eq!(
        gate(&r.json()),
        &serde_json::json!({"status": "failed", "reasons": [{"kind": "min-cases", "message": message}]})
    );
    assert!(r.stderr.contains(&message), "{}", r.stderr);
    let r = passing(&["--min-cases", &too_many], "human");
    r.expect_code(1);
    assert!(
        r.stdout.contains(&format!("gate: {message}")),
        "{}",
        r.stdout
    );
    let r = passing(&["--min-cases", &too_many], "junit");
    r.expect_code(1);
    assert!(
        r.stdout.contains(&format!(
            "<testcase name=\"--min-cases {too_many}\" classname=\"onnx-idx-check.gate\">"
        )),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("failures=\"1\""), "{}", r.stdout);
    let r = passing(&["--min-cases", &too_many], "markdown");
    r.expect_code(1);
    assert!(r.stdout.contains("**Gate: failed**"), "{}", r.stdout);
    assert!(
        r.stdout.contains("\\--min\\-cases") || r.stdout.contains("\\--min-cases"),
        "{}",
        r.stdout
    );

    // Skipped cases do not count.
    let r = run([
        "run",
        "tests/fixtures/skipped",
        "--min-cases",
        "1",
        "--format",
        "json",
    ]);
    r.expect_code(1);
    assert!(
        gate(&r.json())["reasons"][0]["message"]
            .as_str()
            .unwrap()
            .starts_with("--min-cases 1: only 0 cases ran"),
        "{}",
        r.stdout
    );
}

#[test]
fn require_op_fails_a_run_where_no_case_ran_the_operator_version() {
    for (op, code) in [
        ("Gather-13", 0),
        ("Gather", 0),
        ("ScatterElements", 0),
        ("org.openvinotoolkit.Gather-8", 0),
        ("GatherND-12", 1),
        ("ScatterElements-18", 1),
        ("com.microsoft.GatherGrad-1", 1),
    ] {
        let r = passing(&["--require-op", op], "json");
        r.expect_code(code);
        let report = r.json();
        let g = gate(&report);
        if code == 0 {
            assert_eq!(g["status"], "passed", "{op}: {g}");
        } else {
            assert_eq!(g["status"], "failed", "{op}: {g}");
            assert_eq!(g["reasons"][0]["kind"], "require-op", "{op}: {g}");
            assert!(
                g["reasons"][0]["message"]
                    .as_str()
                    .unwrap()
                    .starts_with(&format!("--require-op {op}: no case ran")),
                "{op}: {g}"
            );
        }
    }
    // Repeatable: each unmet one is a reason (and a JUnit test case) of its own.
    let r = passing(
        &[
            "--require-op",
            "GatherND-12",
            "--require-op",
            "Gather-13",
            "--require-op",
            "ScatterND",
        ],
        "junit",
    );
    r.expect_code(1);
    assert!(
        r.stdout.contains("name=\"--require-op GatherND-12\""),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("name=\"--require-op ScatterND\""),
        "{}",
        r.stdout
    );
    assert!(
        !r.stdout.contains("name=\"--require-op Gather-13\""),
        "{}",
        r.stdout
    );
    let r = passing(&["--require-op", "GatherND-12"], "human");
    r.expect_code(1);
    assert!(
        r.stdout
            .contains("gate: --require-op GatherND-12: no case ran GatherND-12"),
        "{}",
        r.stdout
    );
}

#[test]
fn require_op_refuses_what_the_registry_does_not_know() {
    for (op, words) in [
        ("Gathr", "no such operator"),
        ("Gather-12", "Gather has no version 12"),
        ("GatherGrad-1", "no such operator"),
        ("Constant", "no such operator"),
    ] {
        let r = passing(&["--require-op", op], "human");
        r.expect_code(2);
        assert!(r.stderr.contains(words), "{op}: {}", r.stderr);
        assert!(r.stdout.is_empty(), "{op}: nothing runs: {}", r.stdout);
    }
}

#[test]
fn report_4_jobs_beyond_the_bound_are_a_usage_error_that_names_it() {
    let start = std::time::Instant::now();
    let r = run(["run", "tests/fixtures/passing", "--jobs", "100000"]);
    r.expect_code(2);
    assert!(r.stderr.contains("--jobs 100000: at most"), "{}", r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert!(start.elapsed() < std::time::Duration::from_secs(20));
    // 16 is always accepted, whatever the machine.
    run(["run", "tests/fixtures/passing", "--jobs", "16"]).expect_code(0);
    let r = run(["coverage", "tests/fixtures/passing", "--jobs", "100000"]);
    r.expect_code(2);
}

/// What Jenkins xunit's strict schema (`junit-10.xsd`) allows: per element, its attributes and
/// its child elements. Transcribed by hand from the schema, independently of the writer.
const JUNIT_10: &[(&str, &[&str], &[&str])] = &[
    (
        "testsuites",
        &["name", "time", "tests", "failures", "errors"],
        &["testsuite"],
    ),
    (
        "testsuite",
        &[
            "name",
            "tests",
            "failures",
            "errors",
            "group",
            "time",
            "skipped",
            "timestamp",
            "hostname",
            "id",
            "package",
            "file",
            "log",
            "url",
        ],
        &[
            "testsuite",
            "properties",
            "testcase",
            "system-out",
            "system-err",
        ],
    ),
    ("properties", &[], &["property"]),
    ("property", &["name", "value"], &[]),
    (
        "testcase",
        &["name", "time", "classname", "group"],
        &[
            "skipped",
            "error",
            "failure",
            "rerunFailure",
            "rerunError",
            "flakyFailure",
            "flakyError",
            "system-out",
            "system-err",
        ],
    ),
    ("failure", &["type", "message"], &[]),
    ("error", &["type", "message"], &[]),
    ("skipped", &["type", "message"], &[]),
    ("system-out", &[], &[]),
    ("system-err", &[], &[]),
];

/// Every element, attribute and nesting of `xml` that the strict schema does not allow.
fn junit_10_violations(xml: &str) -> Vec<String> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut stack: Vec<String> = Vec::new();
    let mut found = Vec::new();
    let mut check = |e: &quick_xml::events::BytesStart<'_>, stack: &[String]| {
        let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
        let Some((_, attrs, _)) = JUNIT_10.iter().find(|(n, ..)| *n == name) else {
            found.push(format!("element <{name}> is not in the schema"));
            return name;
        };
        match stack.last() {
            None if name != "testsuites" => found.push(format!("root <{name}>")),
            Some(parent) => {
                let allowed = JUNIT_10.iter().find(|(n, ..)| n == parent).map(|x| x.2);
                if !allowed.is_some_and(|a| a.contains(&name.as_str())) {
                    found.push(format!("<{name}> inside <{parent}>"));
                }
            }
            None => {}
        }
        for a in e.attributes() {
            let key = String::from_utf8_lossy(a.unwrap().key.as_ref()).into_owned();
            if !attrs.contains(&key.as_str()) {
                found.push(format!("attribute {key} on <{name}>"));
            }
        }
        name
    };
    loop {
        match reader.read_event().unwrap() {
            Event::Start(e) => {
                let name = check(&e, &stack);
                stack.push(name);
            }
            Event::Empty(e) => {
                check(&e, &stack);
            }
            Event::End(_) => {
                stack.pop();
            }
            Event::Eof => break,
            _ => {}
        }
    }
    found
}

/// New-user report #16: per-case `<properties>` and `skipped` on `<testsuites>` made the report
/// invalid against the strict schema CI servers use.
#[test]
fn report_16_the_junit_report_keeps_to_the_strict_schema() {
    // Every verdict, expectations outcomes and a failed requirement.
    let r = run([
        "run",
        crate::support::fixtures().to_str().unwrap(),
        "--expectations",
        crate::expectations::file("ratchet.toml").to_str().unwrap(),
        "--require-op",
        "GatherND-12",
        "--format",
        "junit",
    ]);
    r.expect_code(1);
    assert!(r.stdout.contains("<testcase "), "{}", r.stdout);
    assert!(r.stdout.contains("<system-out>"), "{}", r.stdout);
    let found = junit_10_violations(&r.stdout);
    assert!(found.is_empty(), "{found:#?}");
    // The checker itself finds what the report used to hold.
    let old = "<testsuites tests=\"1\" skipped=\"0\"><testsuite name=\"a\" tests=\"1\" failures=\"0\" errors=\"0\"><testcase name=\"c\"><properties/></testcase></testsuite></testsuites>";
    assert_eq!(
        junit_10_violations(old),
        [
            "attribute skipped on <testsuites>",
            "<properties> inside <testcase>"
        ]
    );
}

/// New-user report #27: `list` aligned only the names, so the opset and status columns were
/// ragged between operators of different name lengths.
#[test]
fn report_27_list_aligns_every_column() {
    let r = run(["list", "testdata/spec-examples"]);
    r.expect_code(0);
    let rows: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.contains(" [ai.onnx "))
        .collect();
    assert!(rows.len() > 10, "{}", r.stdout);
    // The opset column starts at one position, and so does the status column.
    let column = |l: &str, needle: &str| l.find(needle).unwrap_or_else(|| panic!("{l}"));
    let opset = column(rows[0], " [ai.onnx ");
    let status = column(rows[0], "supported");
    for l in &rows {
        assert_eq!(column(l, " [ai.onnx "), opset, "{}", r.stdout);
        assert_eq!(column(l, "supported"), status, "{}", r.stdout);
    }
}

/// Every reason the gate can give, and a run that passes although an expired entry lists a case
/// it left out: the exit status, the JSON gate, the JUnit failures, the Markdown `Gate:` line,
/// the `::error` annotations and the human report all tell the same verdict, and the human
/// report names the reason.
#[test]
fn every_format_tells_the_gate_s_verdict_for_every_reason() {
    let dir = tempfile::tempdir().unwrap();
    let toml = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    };
    let unmatched = toml(
        "unmatched.toml",
        "[[expect]]\ncase = \"nothing/*\"\nstatus = \"failed\"\nreason = \"stale\"\n",
    );
    let expired_alone = toml(
        "expired_alone.toml",
        "[[expect]]\ncase = \"nothing/*\"\nstatus = \"failed\"\nreason = \"old\"\nuntil = 2020-01-01\n",
    );
    let expired_left_out = toml(
        "expired_left_out.toml",
        "[[expect]]\ncase = \"failing/wrong_value\"\nstatus = \"failed\"\nreason = \"old\"\nuntil = 2020-01-01\n",
    );
    let one_passing = "^passing/reduction_within_tolerance$";
    // (what, arguments, fails, what the human report says)
    let rows: [(&str, Vec<&str>, bool, &str); 8] = [
        ("plain", vec!["--filter", one_passing], false, ""),
        (
            "a failed case",
            vec!["--filter", "^failing/wrong_value$"],
            true,
            "FAIL",
        ),
        (
            "--deny-skip",
            vec!["--filter", "^skipped/", "--deny-skip"],
            true,
            "gate: --deny-skip: ",
        ),
        (
            "--strict-expectations",
            vec![
                "--filter",
                one_passing,
                "--expectations",
                &unmatched,
                "--strict-expectations",
            ],
            true,
            "expectations error: the entry for 'nothing/*'",
        ),
        (
            "an expired entry that matches no case",
            vec!["--filter", one_passing, "--expectations", &expired_alone],
            true,
            "has expired",
        ),
        (
            "an expired entry for cases left out",
            vec!["--filter", one_passing, "--expectations", &expired_left_out],
            false,
            "expectations warning: the entry for 'failing/wrong_value'",
        ),
        (
            "--min-cases",
            vec!["--filter", one_passing, "--min-cases", "5"],
            true,
            "gate: --min-cases 5",
        ),
        (
            "--require-op",
            vec!["--filter", one_passing, "--require-op", "ScatterND"],
            true,
            "gate: --require-op ScatterND",
        ),
    ];
    let fixtures = fixtures();
    for (what, extra, fails, human) in rows {
        let (json, junit, md) = (
            dir.path().join("r.json"),
            dir.path().join("r.xml"),
            dir.path().join("r.md"),
        );
        let mut cmd = crate::support::command();
        cmd.env("GITHUB_ACTIONS", "true");
        cmd.args(["run", fixtures.to_str().unwrap(), "--color", "never"]);
        cmd.args(&extra);
        for (format, path) in [("json", &json), ("junit", &junit), ("markdown", &md)] {
            cmd.arg("--report")
                .arg(format!("{format}={}", path.display()));
        }
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let context = format!("{what}:\n{stdout}{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.status.code(), Some(i32::from(fails)), "{context}");
        let report: Value = serde_json::from_str(&read(&json)).unwrap();
        assert_eq!(
            gate(&report)["status"],
            if fails { "failed" } else { "passed" },
            "{context}"
        );
        let xml = read(&junit);
        let junit_failures = xml.matches("<failure").count() + xml.matches("<error").count();
        assert_eq!(junit_failures > 0, fails, "{context}\n{xml}");
        // A reason no case's own test case shows is a failed test case of the gate.
        assert_eq!(
            xml.contains("classname=\"onnx-idx-check.gate\""),
            fails && what != "a failed case",
            "{context}\n{xml}"
        );
        let md = read(&md);
        assert_eq!(md.contains("**Gate: failed**"), fails, "{context}\n{md}");
        assert_eq!(md.contains("**Gate: passed**"), !fails, "{context}\n{md}");
        let errors = stdout.lines().filter(|l| l.starts_with("::error")).count();
        assert_eq!(errors > 0, fails, "{context}");
        assert!(stdout.contains(human), "{context}");
    }
}
