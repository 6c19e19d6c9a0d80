//! `coverage PATH`: per operator version, the traits the passing cases exercise and the ones
//! none does. The selection is three passing Gather-13 fixtures and a failing one, whose traits
//! are worked out by hand from their descriptions in `xtask/src/fixtures.rs`.

use crate::support::{fixtures, run};
use serde_json::{json, Value};

/// nan_payloads_are_equal and default_domain_imported_as_ai_onnx: float data, int64 indices
/// [0, 1] and [0, 2], raw storage. gather_int32_negative_indices_typed: int32 data, int32
/// indices [[-1, 0], [0, -3]] (negative, and element 0 read three times), typed storage.
/// failing/wrong_value is a Gather-13 too, but traits count from passing cases only.
pub const SELECTION: &str = "^(passing/(nan_payloads_are_equal|default_domain_imported_as_ai_onnx|gather_int32_negative_indices_typed)|failing/wrong_value)$";

pub fn coverage(format: &str) -> crate::support::Run {
    let r = run([
        "coverage",
        fixtures().to_str().unwrap(),
        "--filter",
        SELECTION,
        "--format",
        format,
    ]);
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

fn row<'a>(rows: &'a Value, op: &str) -> &'a Value {
    rows.as_array()
        .unwrap()
        .iter()
        .find(|r| r["op"] == op)
        .unwrap_or_else(|| panic!("no row {op}"))
}

#[test]
fn json_lists_the_covered_and_missing_traits_of_each_operator_version() {
    let rows = coverage("json").json();
    assert_eq!(
        *row(&rows, "Gather-13"),
        json!({
            "op": "Gather-13",
            "passing_cases": 3,
            "covered": COVERED,
            "missing": MISSING
        })
    );
    // Versions no passing case uses are listed with everything missing.
    let g11 = row(&rows, "Gather-11");
    assert_eq!(g11["passing_cases"], 0);
    assert_eq!(g11["covered"], json!([]));
    // Gather-11 has no bfloat16 (it arrives with version 13): 15 types + 8 other traits.
    assert_eq!(g11["missing"].as_array().unwrap().len(), 23);
    assert!(!g11["missing"]
        .as_array()
        .unwrap()
        .contains(&json!("dtype:bfloat16")));
    // Every registered non-deprecated version has a row, in registry order.
    let ops: Vec<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["op"].as_str().unwrap())
        .collect();
    assert_eq!(&ops[..3], ["Gather-1", "Gather-11", "Gather-13"]);
    assert!(!ops.contains(&"Scatter-11"), "deprecated: {ops:?}");
    assert!(ops.contains(&"ScatterElements-18"));
    assert!(ops.contains(&"org.openvinotoolkit.Gather-8"));
    assert!(ops.contains(&"com.microsoft.GatherGrad-1"));
}

#[test]
fn the_human_table_shows_the_count_and_the_missing_traits() {
    let r = coverage("human");
    let lines: Vec<&str> = r.stdout.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("Gather-13 "))
        .unwrap_or_else(|| panic!("{}", r.stdout));
    let words: Vec<&str> = lines[at].split_whitespace().collect();
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
    assert_eq!(
        lines[at + 1].trim_start(),
        format!("missing: {}", MISSING.join(" "))
    );
    assert_eq!(
        lines.last().unwrap(),
        &"3 of 4 cases passed; traits counted from passing cases only"
    );
}

#[test]
fn a_failing_case_adds_no_trait() {
    let r = run([
        "coverage",
        fixtures().to_str().unwrap(),
        "--filter",
        "^failing/wrong_value$",
        "--format",
        "json",
    ]);
    r.expect_code(0);
    let rows = r.json();
    let g13 = row(&rows, "Gather-13");
    assert_eq!(g13["passing_cases"], 0);
    assert_eq!(g13["covered"], json!([]));
    assert_eq!(g13["missing"].as_array().unwrap().len(), 24);
}
