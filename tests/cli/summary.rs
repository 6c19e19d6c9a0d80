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

/// The case line's and the summary's durations: three digits in an adaptive unit, in a
/// 10-character bracket so that the names stay aligned.
fn is_duration(s: &str) -> bool {
    regex::Regex::new(r"^\d+(\.\d+)?(ns|µs|ms|s)$")
        .unwrap()
        .is_match(s)
}

/// Report #23: times in adaptive units rather than `[   0.000s]` everywhere, and pytest's
/// `--durations N` listing the slowest cases. The order is checked against the JSON report of
/// the same run (`--report json=FILE`), which carries every case's nanoseconds.
#[test]
fn report_23_durations_lists_the_slowest_cases_in_adaptive_units() {
    let dir = tempfile::tempdir().unwrap();
    let json_file = dir.path().join("r.json");
    let r = run([
        "run",
        crate::support::root().join("testdata").to_str().unwrap(),
        "--durations",
        "5",
        "--color",
        "never",
        "--report",
        &format!("json={}", json_file.display()),
    ]);
    r.expect_code(0);
    for line in r
        .stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("PASS ["))
    {
        let inside = line.split_once('[').unwrap().1.split_once(']').unwrap().0;
        assert_eq!(inside.chars().count(), 8, "{line}");
        assert!(is_duration(inside.trim_start()), "{line}");
    }
    assert!(!r.stdout.contains("0.000s"), "{}", r.stdout);

    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json_file).unwrap()).unwrap();
    let total = report["cases"].as_array().unwrap().len();
    let mut by_time: Vec<(u64, String)> = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["duration_ns"].as_u64().unwrap(),
                c["name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    by_time.sort_by_key(|c| std::cmp::Reverse(c.0));

    let heading = format!("The 5 slowest of {total} cases:");
    let listing: Vec<&str> = r
        .stdout
        .lines()
        .skip_while(|l| *l != heading)
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(listing.len(), 5, "{}", r.stdout);
    let names: Vec<&str> = listing
        .iter()
        .map(|l| {
            let (time, name) = l.trim_start().split_once("  ").unwrap();
            assert!(is_duration(time), "{l}");
            name.trim_start()
        })
        .collect();
    // Ties in nanoseconds may come in either order; the times themselves must be the top five.
    let top: Vec<u64> = by_time.iter().take(5).map(|(ns, _)| *ns).collect();
    for name in &names {
        let ns = by_time.iter().find(|(_, n)| n == name).unwrap().0;
        assert!(
            ns >= top[4],
            "{name} ({ns} ns) is not among the 5 slowest: {by_time:?}"
        );
    }
}

/// `--durations 0` lists every case, as pytest does.
#[test]
fn durations_zero_lists_every_case() {
    let r = run([
        "run",
        fixtures().to_str().unwrap(),
        "--filter",
        "^passing/",
        "--durations",
        "0",
        "--color",
        "never",
    ]);
    let passing = r.stdout.lines().filter(|l| l.contains("PASS [")).count();
    assert!(passing > 1, "{}", r.stdout);
    assert!(
        r.stdout
            .contains(&format!("Durations, slowest first ({passing} cases):")),
        "{}",
        r.stdout
    );
}
