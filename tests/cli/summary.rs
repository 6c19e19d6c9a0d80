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

#[test]
fn the_json_summary_counts_verdicts_per_operator_version() {
    let report = mixed("json").json();
    // Resolved versions where the model resolves; the bare op type (domain-qualified outside
    // ai.onnx) where it does not (Add is not implemented; the com.example Gather of
    // domain_not_imported has no version to resolve to); nothing for a model that cannot be
    // decoded.
    assert_eq!(
        report["summary"]["by_op"],
        json!({
            "Add": {"passed": 0, "failed": 0, "errored": 0, "skipped": 1},
            "Gather-13": {"passed": 0, "failed": 1, "errored": 1, "skipped": 0},
            "ScatterElements-16": {"passed": 1, "failed": 0, "errored": 0, "skipped": 0},
            "com.example.Gather": {"passed": 0, "failed": 0, "errored": 1, "skipped": 0}
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
        .skip_while(|l| !l.starts_with("  Add "))
        .take_while(|l| !l.starts_with('─'))
        .collect();
    // Sorted by name (upper case first), padded to the longest (18 characters).
    assert_eq!(
        table,
        [
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
    // Four fixtures' models cannot be decoded: errored/truncated_model, and hostile/empty_model,
    // node_name_not_utf8 and subgraph_nested_10000_deep.
    assert_eq!(counted, report["summary"]["total"].as_u64().unwrap() - 4);
    assert_eq!(
        by_op["org.openvinotoolkit.Gather-8"],
        json!({"passed": 1, "failed": 1, "errored": 2, "skipped": 0})
    );
    assert_eq!(
        by_op["TensorScatter-24"],
        json!({"passed": 0, "failed": 1, "errored": 5, "skipped": 0})
    );
}
