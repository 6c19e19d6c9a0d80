//! Options of `run` (selection, --fail-fast, --output, --format) and the `list`, `ops` and `bench`
//! subcommands.

use crate::support::{
    cases, count, fixture_names, fixtures, read_tensor, root, run, run_json, ONLY_GROUPS,
};
use serde_json::Value;

fn names(report: &Value) -> Vec<String> {
    cases(report)
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect()
}

fn fixtures_in(group: &str) -> Vec<String> {
    fixture_names()
        .into_iter()
        .filter(|n| n.starts_with(&format!("{group}/")))
        .collect()
}

#[test]
fn filter_selects_the_cases_whose_name_matches() {
    let (code, report) = run_json(&fixtures(), &["--filter", "^failing/"]);
    assert_eq!(code, 1);
    assert_eq!(names(&report), fixtures_in("failing"));
    assert_eq!(
        count(&report, "failed"),
        fixtures_in("failing").len() as u64
    );
}

#[test]
fn repeated_filters_select_cases_matching_any() {
    let (code, report) = run_json(
        &fixtures(),
        &["--filter", "^passing/", "--filter", "^skipped/"],
    );
    assert_eq!(code, 0);
    let mut want = fixtures_in("passing");
    want.extend(fixtures_in("skipped"));
    assert_eq!(names(&report), want);
}

#[test]
fn exclude_leaves_out_the_cases_whose_name_matches() {
    let (code, report) = run_json(
        &fixtures(),
        &[
            "--exclude",
            "^(errored|failing|hostile)/",
            "--exclude",
            "segment",
            ONLY_GROUPS[0],
            ONLY_GROUPS[1],
        ],
    );
    assert_eq!(code, 0);
    let mut want = fixtures_in("passing");
    want.extend(fixtures_in("skipped"));
    want.retain(|n| !n.contains("segment"));
    assert_eq!(names(&report), want);
}

#[test]
fn filter_and_exclude_combine() {
    let (_, report) = run_json(
        &fixtures(),
        &[
            "--filter",
            "external_data",
            "--exclude",
            "absolute",
            "--exclude",
            "^hostile/",
        ],
    );
    assert_eq!(
        names(&report),
        [
            "errored/external_data_escaping",
            "passing/external_data_inside_the_directory"
        ]
    );
}

#[test]
fn fail_fast_stops_starting_cases_after_the_first_bad_one() {
    let all = fixtures_in("errored").len() as u64;
    let (code, report) = run_json(&fixtures().join("errored"), &["--fail-fast", "--jobs", "1"]);
    assert_eq!(code, 1);
    let run = count(&report, "total");
    let not_run = count(&report, "not_run");
    assert!(run >= 1 && not_run >= 1, "run {run}, not run {not_run}");
    assert_eq!(run + not_run, all);
    assert_eq!(count(&report, "errored"), run);
    // The human summary says so.
    let r = run_human(&[
        "run",
        "tests/fixtures/errored",
        "--fail-fast",
        "--jobs",
        "1",
    ]);
    assert!(r.contains("not run (--fail-fast)"), "{r}");
    // Without it, everything runs.
    let (_, report) = run_json(&fixtures().join("errored"), &["--jobs", "1"]);
    assert_eq!(
        (count(&report, "total"), count(&report, "not_run")),
        (all, 0)
    );
}

fn run_human(args: &[&str]) -> String {
    let mut args = args.to_vec();
    args.extend(["--color", "never"]);
    run(&args).stdout
}

#[test]
fn output_writes_the_report_to_the_file_and_keeps_the_human_lines_on_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("report.json");
    let r = run([
        "run",
        "tests/fixtures/passing",
        "--format",
        "json",
        "--color",
        "never",
        "--output",
        file.to_str().unwrap(),
    ]);
    r.expect_code(0);
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    // Names are relative to the argument, here the group directory.
    let want: Vec<String> = fixtures_in("passing")
        .iter()
        .map(|n| n.trim_start_matches("passing/").to_string())
        .collect();
    assert_eq!(names(&report), want);
    assert!(r.stdout.contains("PASS"), "{}", r.stdout);
    assert!(r.stdout.contains("Summary"), "{}", r.stdout);

    // The human report can go to a file too; stdout then stays quiet.
    let file = dir.path().join("report.txt");
    let r = run([
        "run",
        "tests/fixtures/failing",
        "--output",
        file.to_str().unwrap(),
    ]);
    r.expect_code(1);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("FAIL"), "{text}");
    assert!(text.contains("Summary"), "{text}");
    assert!(!text.contains('\x1b'), "no colour in a file: {text:?}");
    assert!(r.stdout.is_empty(), "{}", r.stdout);
}

#[test]
fn json_on_stdout_sends_the_summary_to_stderr() {
    let r = run(["run", "tests/fixtures/passing", "--format", "json"]);
    r.expect_code(0);
    assert_eq!(r.json()["schema_version"], 1);
    assert!(r.stderr.contains("Summary"), "{}", r.stderr);
}

#[test]
fn junit_marks_failures_errors_and_skips() {
    let r = run([
        "run",
        "tests/fixtures",
        "--format",
        "junit",
        "--filter",
        "^(passing/reduction_within_tolerance|failing/wrong_value|errored/gather_index_out_of_range|skipped/unsupported_op_add)$",
    ]);
    r.expect_code(1);
    let xml = &r.stdout;
    assert!(xml.starts_with("<?xml"), "{xml}");
    assert!(xml.contains(r#"tests="4""#), "{xml}");
    assert!(xml.contains(r#"failures="1""#), "{xml}");
    assert!(xml.contains(r#"errors="1""#), "{xml}");
    assert!(xml.contains(r#"skipped="1""#), "{xml}");
    assert_eq!(xml.matches("<testcase ").count(), 4, "{xml}");
    assert_eq!(xml.matches("<failure ").count(), 1, "{xml}");
    assert_eq!(xml.matches("<error ").count(), 1, "{xml}");
    assert_eq!(xml.matches("<skipped ").count(), 1, "{xml}");
    assert!(xml.contains("indices[1,0] = 4 is out of range"), "{xml}");
    // The description lists the mismatch, and where the correct value comes from.
    assert!(
        xml.contains("output[1,0]: expected 7.0, got 5.0 (correct value from data[2,0]"),
        "{xml}"
    );
    assert!(xml.trim_end().ends_with("</testsuites>"), "{xml}");
}

#[test]
fn list_names_every_case_with_its_support() {
    let r = run([
        "list",
        "tests/fixtures",
        "--format",
        "json",
        ONLY_GROUPS[0],
        ONLY_GROUPS[1],
    ]);
    r.expect_code(0);
    let listed = r.json();
    let listed = listed.as_array().unwrap();
    let got: Vec<&str> = listed.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(got, fixture_names());
    let entry = |name: &str| listed.iter().find(|c| c["name"] == name).unwrap();
    let wrong = entry("failing/wrong_value");
    assert_eq!(wrong["status"], "supported");
    assert_eq!(wrong["resolved"], serde_json::json!(["Gather-13"]));
    assert_eq!(wrong["opset"], serde_json::json!({"ai.onnx": 13}));
    assert_eq!(wrong["data_sets"], 1);
    assert_eq!(entry("skipped/unsupported_op_add")["status"], "unsupported");
    assert_eq!(entry("skipped/unknown_domain")["status"], "unsupported");
    assert_eq!(entry("errored/domain_not_imported")["status"], "invalid");
    assert_eq!(entry("errored/truncated_model")["status"], "invalid");

    let r = run(["list", "tests/fixtures", ONLY_GROUPS[0], ONLY_GROUPS[1]]);
    r.expect_code(0);
    let line = r
        .stdout
        .lines()
        .find(|l| l.starts_with("skipped/unsupported_op_add "))
        .unwrap_or_else(|| panic!("{}", r.stdout));
    assert!(line.contains("unsupported"), "{line}");
    let last = r.stdout.lines().last().unwrap();
    assert!(
        last.starts_with(&format!("{} cases", fixture_names().len())),
        "{last}"
    );
}

#[test]
fn ops_prints_the_support_matrix_for_people_and_as_json() {
    let r = run(["ops"]);
    r.expect_code(0);
    for word in [
        "Gather",
        "GatherElements",
        "ScatterElements",
        "Scatter",
        "ai.onnx",
        "bfloat16",
    ] {
        assert!(r.stdout.contains(word), "{word}: {}", r.stdout);
    }
    let r = run(["ops", "--format", "json"]);
    r.expect_code(0);
    let rows = r.json();
    let rows = rows.as_array().unwrap();
    let row = |op: &str, version: i64| {
        rows.iter()
            .find(|r| r["op"] == op && r["version"] == version)
            .unwrap_or_else(|| panic!("no {op}-{version}"))
    };
    for (op, versions) in [
        ("Gather", &[1, 11, 13][..]),
        ("GatherElements", &[11, 13]),
        ("ScatterElements", &[11, 13, 16, 18]),
        ("Scatter", &[9, 11]),
    ] {
        for &v in versions {
            assert_eq!(row(op, v)["domain"], "ai.onnx");
        }
    }
    assert_eq!(row("Scatter", 11)["deprecated"], true);
    assert_eq!(row("Scatter", 9)["deprecated"], false);
    let modes = |op, v| row(op, v)["modes"].clone();
    assert_eq!(
        modes("ScatterElements", 16),
        serde_json::json!(["none", "add", "mul"])
    );
    assert_eq!(
        modes("ScatterElements", 18),
        serde_json::json!(["none", "add", "mul", "max", "min"])
    );
    let t = |op, v| row(op, v)["types"]["T"].clone();
    let has = |v: &Value, dtype: &str| v.as_array().unwrap().iter().any(|d| d == dtype);
    assert!(!has(&t("GatherElements", 11), "bfloat16"));
    assert!(has(&t("GatherElements", 13), "bfloat16"));
    assert!(!has(&t("Gather", 13), "float8e4m3fn"));
}

#[test]
fn bench_prints_the_documented_keys_as_json() {
    let r = run([
        "bench",
        "testdata/onnx-node/test_gather_0",
        "--iters",
        "3",
        "--format",
        "json",
    ]);
    r.expect_code(0);
    let b = r.json();
    for key in [
        "case",
        "data_set",
        "iters",
        "min_ns",
        "median_ns",
        "max_ns",
        "bytes_moved",
        "gbps",
    ] {
        assert!(b.get(key).is_some(), "no {key}: {b}");
    }
    assert_eq!(b["case"], "test_gather_0");
    assert_eq!(b["data_set"], "test_data_set_0");
    assert_eq!(b["iters"], 3);
    let ns = |k: &str| b[k].as_u64().unwrap();
    assert!(
        ns("min_ns") <= ns("median_ns") && ns("median_ns") <= ns("max_ns"),
        "{b}"
    );
    assert!(ns("bytes_moved") > 0, "{b}");
    assert!(b["gbps"].as_f64().unwrap() >= 0.0, "{b}");

    let r = run(["bench", "testdata/onnx-node/test_gather_0", "--iters", "3"]);
    r.expect_code(0);
    assert!(r.stdout.contains("test_gather_0"), "{}", r.stdout);
    assert!(r.stdout.contains("median"), "{}", r.stdout);
    // Times in the unit that shows their digits (report #23), never `0.000 ms`.
    let times =
        regex::Regex::new(r"min \d+(\.\d+)?(ns|µs|ms|s)   median \d+(\.\d+)?(ns|µs|ms|s)   max ")
            .unwrap();
    assert!(times.is_match(&r.stdout), "{}", r.stdout);
}

/// The warm-up lasts at least --warmup-ms, however fast the kernel: a small case runs for the
/// whole floor before its timed runs.
#[test]
fn bench_warms_up_for_at_least_warmup_ms() {
    let case = "testdata/onnx-node/test_gather_0";
    let t = std::time::Instant::now();
    run([
        "bench",
        case,
        "--iters",
        "1",
        "--warmup",
        "0",
        "--warmup-ms",
        "400",
    ])
    .expect_code(0);
    assert!(
        t.elapsed() >= std::time::Duration::from_millis(400),
        "bench returned after {:?}",
        t.elapsed()
    );
    // Off, and with no warm-up runs either, the case is still timed and checked.
    let r = run([
        "bench",
        case,
        "--iters",
        "1",
        "--warmup",
        "0",
        "--warmup-ms",
        "0",
        "--format",
        "json",
    ]);
    r.expect_code(0);
    assert_eq!(r.json()["output_matches"], true);
}

/// Report #28: timing needs no expected output, so a new case can be benchmarked; the outputs
/// are then unchecked (`output_matches` null) and the human form says so.
#[test]
fn report_28_bench_times_a_case_without_expected_output() {
    let case = "tests/fixtures/errored/missing_output";
    let r = run(["bench", case, "--iters", "2", "--format", "json"]);
    r.expect_code(0);
    assert_eq!(r.json()["output_matches"], serde_json::Value::Null);
    let r = run(["bench", case, "--iters", "2"]);
    r.expect_code(0);
    assert!(
        r.stdout
            .contains("note: an expected output file is missing, so the outputs were not checked"),
        "{}",
        r.stdout
    );
}

#[test]
fn bench_counts_a_backward_op_as_a_scatter_not_as_a_gather() {
    // GatherGrad writes dY into a zero tensor: it reads every input whole and writes the output
    // once (the scatter count), although its name contains "Gather".
    let dir = root().join("testdata/spec-examples/gather_grad_axis0_opset13");
    let bytes = |t: &onnx_idx_check::pb::TensorProto| -> u64 {
        let n: i64 = t.dims.iter().product();
        let width = match t.data_type {
            1 => 4,  // float
            7 => 8,  // int64
            11 => 8, // double
            other => panic!("unexpected data type {other}"),
        };
        (n * width) as u64
    };
    let ds = dir.join("test_data_set_0");
    let inputs: u64 = (0..3)
        .map(|k| bytes(&read_tensor(&ds.join(format!("input_{k}.pb")))))
        .sum();
    let output = bytes(&read_tensor(&ds.join("output_0.pb")));
    let r = run([
        "bench",
        dir.to_str().unwrap(),
        "--iters",
        "1",
        "--format",
        "json",
    ]);
    r.expect_code(0);
    assert_eq!(r.json()["bytes_moved"], inputs + output);
}
