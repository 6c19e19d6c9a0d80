//! `coverage PATH`: per operator version, the traits the passing cases exercise and the ones
//! none does. The selection is three passing Gather-13 fixtures and a failing one, whose traits
//! are worked out by hand from their descriptions in `xtask/src/fixtures.rs`. Tests named
//! `report_24_*` answer item 24 of the new user's report (2026-11-24).

use crate::support::{fixtures, run};
use serde_json::{json, Value};

/// nan_payloads_are_equal and default_domain_imported_as_ai_onnx: float data, int64 indices
/// [0, 1] and [0, 2], raw storage. gather_int32_negative_indices_typed: int32 data, int32
/// indices [[-1, 0], [0, -3]] (negative, and element 0 read three times), typed storage.
/// failing/wrong_value is a Gather-13 too, but traits count from passing cases only.
pub const SELECTION: &str = "^(passing/(nan_payloads_are_equal|default_domain_imported_as_ai_onnx|gather_int32_negative_indices_typed)|failing/wrong_value)$";

pub fn coverage(format: &str) -> crate::support::Run {
    coverage_of(SELECTION, format, &[])
}

/// `coverage` of the fixtures `filter` selects, in `format`, with `extra` flags.
fn coverage_of(filter: &str, format: &str, extra: &[&str]) -> crate::support::Run {
    let fixtures = fixtures();
    let mut args = vec![
        "coverage",
        fixtures.to_str().unwrap(),
        "--filter",
        filter,
        "--format",
        format,
    ];
    args.extend(extra);
    let r = run(args);
    // Coverage reports; it does not judge.
    r.expect_code(0);
    r
}

/// Gather-13's 24 traits: 16 data types (classic15 + bfloat16), int32 and int64 indices,
/// negative indices, duplicates, rank-0 indices, zero-size dims, raw and typed storage.
const COVERED: [&str; 8] = [
    "dtype:float",
    "dtype:int32",
    "duplicates",
    "indices:int32",
    "indices:int64",
    "negative-indices",
    "storage:raw",
    "storage:typed",
];
const MISSING: [&str; 16] = [
    "dtype:bfloat16",
    "dtype:bool",
    "dtype:complex128",
    "dtype:complex64",
    "dtype:double",
    "dtype:float16",
    "dtype:int16",
    "dtype:int64",
    "dtype:int8",
    "dtype:string",
    "dtype:uint16",
    "dtype:uint32",
    "dtype:uint64",
    "dtype:uint8",
    "rank0-indices",
    "zero-size-dims",
];

/// The operator versions a row can show, counted by hand from the support matrix of
/// docs/operators.md:
/// Gather 1/11/13, GatherElements 11/13, GatherND 11/12/13, Scatter 9 (11 is deprecated),
/// ScatterElements 11/13/16/18, ScatterND 11/13/16/18, TensorScatter 24, OpenVINO's Gather-8 and
/// onnxruntime's GatherGrad-1 and GatherElementsGrad-1; in the order of `run`'s per-operator
/// table, the names' byte order (upper case before lower case).
const EVERY_VERSION: [&str; 23] = [
    "Gather-1",
    "Gather-11",
    "Gather-13",
    "GatherElements-11",
    "GatherElements-13",
    "GatherND-11",
    "GatherND-12",
    "GatherND-13",
    "Scatter-9",
    "ScatterElements-11",
    "ScatterElements-13",
    "ScatterElements-16",
    "ScatterElements-18",
    "ScatterND-11",
    "ScatterND-13",
    "ScatterND-16",
    "ScatterND-18",
    "TensorScatter-24",
    "com.microsoft.GatherElementsGrad-1",
    "com.microsoft.GatherGrad-1",
    "org.openvinotoolkit.Gather-1",
    "org.openvinotoolkit.Gather-7",
    "org.openvinotoolkit.Gather-8",
];

fn row<'a>(doc: &'a Value, op: &str) -> &'a Value {
    doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["op"] == op)
        .unwrap_or_else(|| panic!("no row {op}"))
}

fn ops_of(doc: &Value) -> Vec<&str> {
    doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["op"].as_str().unwrap())
        .collect()
}

/// The words of a trait list in the human table: `label` and the lines hanging under it.
fn listed(lines: &[&str], label: &str) -> Vec<String> {
    let at = lines
        .iter()
        .position(|l| l.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no {label} line"));
    let hang = lines[at].find(label).unwrap() + label.len() + 1;
    let mut words: Vec<String> = lines[at][hang..].split(' ').map(str::to_string).collect();
    for l in &lines[at + 1..] {
        if l.len() <= hang || !l[..hang].trim().is_empty() {
            break;
        }
        words.extend(l[hang..].split(' ').map(str::to_string));
    }
    words
}

#[test]
fn report_24_json_is_a_document_with_its_schema_version_and_counts() {
    let doc = coverage("json").json();
    assert_eq!(
        doc,
        json!({
            "schema_version": 1,
            "cases": 4,
            "passed": 3,
            "versions_shown": 1,
            "versions_left_out": 22,
            "rows": [{
                "op": "Gather-13",
                "passing_cases": 3,
                "covered": COVERED,
                "missing": MISSING
            }]
        })
    );
}

#[test]
fn report_24_all_shows_every_version_in_the_order_of_run() {
    let doc = coverage_of(SELECTION, "json", &["--all"]).json();
    assert_eq!(ops_of(&doc), EVERY_VERSION);
    assert_eq!(
        (&doc["versions_shown"], &doc["versions_left_out"]),
        (&json!(23), &json!(0))
    );
    // Versions no passing case uses are listed with everything missing.
    let g11 = row(&doc, "Gather-11");
    assert_eq!(g11["passing_cases"], 0);
    assert_eq!(g11["covered"], json!([]));
    // Gather-11 has no bfloat16 (it arrives with version 13): 15 types + 8 other traits.
    assert_eq!(g11["missing"].as_array().unwrap().len(), 23);
    assert!(!g11["missing"]
        .as_array()
        .unwrap()
        .contains(&json!("dtype:bfloat16")));
    assert_eq!(row(&doc, "Gather-13")["covered"], json!(COVERED));
}

#[test]
fn report_24_the_human_table_has_a_header_both_lists_and_what_was_left_out() {
    let r = coverage("human");
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(
        lines[0],
        "coverage of 4 cases (3 passed): traits exercised by passing cases, per operator version"
    );
    let words: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(
        words,
        [
            "Gather-13",
            "3",
            "passing",
            "cases",
            "8/24",
            "traits",
            "covered"
        ]
    );
    // The only version the selection uses: every other line belongs to its row or is the end.
    assert!(
        lines[2..lines.len() - 1]
            .iter()
            .all(|l| l.starts_with("  ")),
        "{}",
        r.stdout
    );
    assert_eq!(listed(&lines, "covered:"), COVERED);
    assert_eq!(listed(&lines, "missing:"), MISSING);
    assert_eq!(
        lines.last().unwrap(),
        &"22 operator versions left out (no selected case uses them); --all shows them"
    );
}

#[test]
fn report_24_trait_lists_wrap_at_100_columns_without_breaking_a_trait() {
    // Not a terminal: 100 columns. Gather-13's 16 missing traits take 204 characters.
    let r = coverage("human");
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(
        lines.iter().all(|l| l.chars().count() <= 100),
        "{}",
        r.stdout
    );
    let missing = lines
        .iter()
        .position(|l| l.starts_with("  missing: "))
        .unwrap();
    // Continuation lines hang under the first trait (2 + "missing: " = 11 columns).
    assert!(lines[missing + 1].starts_with(&" ".repeat(11)));
    assert!(lines[missing + 1].as_bytes()[11] != b' ');
    // Every word is a whole trait, in order (`listed` would show a broken one as two words).
    assert_eq!(listed(&lines, "missing:"), MISSING);
}

#[test]
fn report_24_versions_come_in_the_order_of_the_run_summary() {
    let cov = run(["coverage", "testdata/"]);
    cov.expect_code(0);
    let rows: Vec<&str> = cov
        .stdout
        .lines()
        .skip(1)
        .filter(|l| !l.starts_with(' ') && l.contains(" passing case"))
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    // testdata/ uses every version.
    assert_eq!(rows, EVERY_VERSION);
    let ran = run(["run", "testdata/", "--color", "never"]);
    ran.expect_code(0);
    let table: Vec<&str> = ran
        .stdout
        .lines()
        .filter(|l| l.starts_with("  ") && l.ends_with(" passed"))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(table, rows);
}

#[test]
fn a_failing_case_adds_no_trait() {
    let doc = coverage_of("^failing/wrong_value$", "json", &[]).json();
    assert_eq!((&doc["cases"], &doc["passed"]), (&json!(1), &json!(0)));
    // Its version is shown (the suite uses it), with nothing covered.
    assert_eq!(ops_of(&doc), ["Gather-13"]);
    let g13 = row(&doc, "Gather-13");
    assert_eq!(g13["passing_cases"], 0);
    assert_eq!(g13["covered"], json!([]));
    assert_eq!(g13["missing"].as_array().unwrap().len(), 24);
}
