//! The per-operator summary: verdict counts per resolved operator version, in the human table
//! above the summary line and in the JSON report's `summary.by_op`.

use crate::support::{fixtures, run};
use serde_json::json;

/// One case of each verdict (the mixed run of snapshots.rs), plus a case whose model cannot be
/// resolved (its node's domain is not imported) and one whose model cannot be read at all.
const MIXED: &str = "^(passing/reduction_within_tolerance|failing/wrong_value|errored/gather_index_out_of_range|skipped/unsupported_op_add|errored/domain_not_imported|errored/truncated_model)$";

fn mixed(format: &str) -> crate::support::Run {
    let r = run([
        "run",
        fixtures().to_str().unwrap(),
        "--filter",
        MIXED,
        "--format",
        format,
        "--color",
        "never",
    ]);
    r.expect_code(1);
    r
}

/// Counts with no expectations involved: `xfailed`, `xpassed` and `expired` are zero.
fn plain(passed: u64, failed: u64, errored: u64, skipped: u64) -> serde_json::Value {
    json!({"passed": passed, "failed": failed, "errored": errored, "skipped": skipped,
           "xfailed": 0, "xpassed": 0, "expired": 0})
}

/// New-user report #14: the rows left out the cases whose model could not be read, so they did
/// not add up to the total.
#[test]
fn report_14_the_json_summary_counts_verdicts_per_operator_version_and_invalid_models() {
    let report = mixed("json").json();
    // Resolved versions where the model resolves; the bare op type (domain-qualified outside
    // ai.onnx) where it does not (Add is not implemented; the com.example Gather of
    // domain_not_imported has no version to resolve to); a row of its own for the model that
    // cannot be decoded.
    assert_eq!(
        report["summary"]["by_op"],
        json!({
            "(invalid model)": plain(0, 0, 1, 0),
            "Add": plain(0, 0, 0, 1),
            "Gather-13": plain(0, 1, 1, 0),
            "ScatterElements-16": plain(1, 0, 0, 0),
            "com.example.Gather": plain(0, 0, 1, 0)
        })
    );
    assert_eq!(report["summary"]["total"], 6);
}

#[test]
fn the_human_table_lists_each_operator_version_with_its_non_zero_counts() {
    let r = mixed("human");
    let table: Vec<&str> = r
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("  (invalid model) "))
        .take_while(|l| !l.starts_with('─'))
        .collect();
    // Sorted by name (punctuation, then upper case first), padded to the longest (18
    // characters).
    assert_eq!(
        table,
        [
            "  (invalid model)     1 errored",
            "  Add                 1 skipped",
            "  Gather-13           1 failed, 1 errored",
            "  ScatterElements-16  1 passed",
            "  com.example.Gather  1 errored",
        ],
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("6 cases: 1 passed, 1 failed, 3 errored, 1 skipped"),
        "{}",
        r.stdout
    );
}

#[test]
fn a_case_counts_once_per_operator_version_it_tests() {
    // The whole verdict groups: every fixture is a single node, so the counts per version add
    // up to the cases whose model could be read.
    let r = run([
        "run",
        fixtures().to_str().unwrap(),
        crate::support::ONLY_GROUPS[0],
        crate::support::ONLY_GROUPS[1],
        "--format",
        "json",
    ]);
    let report = r.json();
    let by_op = report["summary"]["by_op"].as_object().unwrap();
    let counted: u64 = by_op
        .values()
        .flat_map(|c| c.as_object().unwrap().values())
        .map(|n| n.as_u64().unwrap())
        .sum();
    // Four fixtures' models cannot be decoded (errored/truncated_model, and hostile/empty_model,
    // node_name_not_utf8 and subgraph_nested_10000_deep): they have their own row.
    assert_eq!(counted, report["summary"]["total"].as_u64().unwrap());
    assert_eq!(by_op["(invalid model)"], plain(0, 0, 4, 0));
    assert_eq!(by_op["org.openvinotoolkit.Gather-8"], plain(1, 1, 2, 0));
    assert_eq!(by_op["TensorScatter-24"], plain(0, 1, 5, 0));
}
