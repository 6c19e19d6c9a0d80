//! The `coverage` subcommand's table: every trait each operator version can exercise (from the
//! registry), and which of them the passing cases covered.

use onnx_idx_check::ops::{OpDef, OpVersion, Role, REGISTRY};
use onnx_idx_check::verdict::{ByOp, CaseResult, Status};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// Every trait a version can exercise, from what the registry says of it.
pub fn possible_traits(def: &OpDef, v: &OpVersion) -> BTreeSet<String> {
    let mut t = BTreeSet::new();
    if let Some(c) = v.value_input().and_then(|i| v.constraint_of(i)) {
        t.extend(c.dtypes.iter().map(|d| format!("dtype:{d}")));
    }
    if let Some(i) = v.input_with(Role::Indices) {
        if let Some(c) = v.constraint_of(i) {
            t.extend(c.dtypes.iter().map(|d| format!("indices:{d}")));
        }
        if v.negatives {
            t.insert("negative-indices".into());
        }
        if def.indexing.scalar_indices() {
            t.insert("rank0-indices".into());
        }
        if def.indexing.duplicates() {
            t.insert("duplicates".into());
        }
    }
    if v.attr("batch_dims").is_some() {
        t.insert("batch_dims>0".into());
    }
    if let Some(a) = v.mode_attr {
        t.extend(v.modes.iter().map(|m| format!("{a}:{m}")));
    }
    t.insert("zero-size-dims".into());
    t.insert("storage:raw".into());
    t.insert("storage:typed".into());
    t
}

/// The version of the JSON document [`Coverage`]; raised on any incompatible change. Its own
/// number, not `run`'s: the two documents change independently.
pub const SCHEMA_VERSION: u32 = 1;

/// The coverage report: what `coverage --format json` prints, and what the table shows.
#[derive(Debug, Serialize)]
pub struct Coverage {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Cases evaluated (the selection).
    pub cases: usize,
    /// Of them, the passing ones: the only ones whose traits count.
    pub passed: usize,
    /// Rows shown: the versions some selected case uses, or every version with `--all`.
    pub versions_shown: usize,
    /// Registered versions no selected case uses, left out of `rows` (0 with `--all`).
    pub versions_left_out: usize,
    /// One row per version, in the order of `run`'s per-operator table.
    pub rows: Vec<Row>,
}

/// One row of the coverage report.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Row {
    /// `Op-since`.
    pub op: String,
    /// Passing cases that use this version.
    pub passing_cases: usize,
    /// Traits some passing case exercises.
    pub covered: Vec<String>,
    /// Traits no passing case exercises.
    pub missing: Vec<String>,
}

/// Aggregates the traits of passing cases into one row per registered operator version
/// (plumbing and deprecated versions left out): the versions some case of `results` uses (a
/// failing one included, since its version then has work left), or every one when `all`.
pub fn report(results: &[CaseResult], all: bool) -> Coverage {
    let passing = results.iter().filter(|r| r.status == Status::Passed);
    let mut seen: BTreeMap<String, (usize, BTreeSet<String>)> = BTreeMap::new();
    for r in passing.clone() {
        let mut ops_in_case = BTreeSet::new();
        for (op, traits) in &r.traits {
            let e = seen.entry(op.clone()).or_default();
            e.1.extend(traits.iter().cloned());
            ops_in_case.insert(op.clone());
        }
        for op in ops_in_case {
            seen.entry(op).or_default().0 += 1;
        }
    }
    let used: BTreeSet<&str> = results
        .iter()
        .flat_map(|r| r.op_versions.iter().map(String::as_str))
        .collect();
    let mut rows = ByOp::new();
    let mut left_out = 0;
    for def in REGISTRY.iter().filter(|d| !d.plumbing) {
        for v in def.versions.iter().filter(|v| !v.deprecated) {
            let key = def.version_name(v);
            if !all && !used.contains(key.as_str()) {
                left_out += 1;
                continue;
            }
            let possible = possible_traits(def, v);
            let (cases, covered) = seen.get(&key).cloned().unwrap_or_default();
            let row = Row {
                op: key.clone(),
                passing_cases: cases,
                covered: possible.intersection(&covered).cloned().collect(),
                missing: possible.difference(&covered).cloned().collect(),
            };
            rows.insert(key, row);
        }
    }
    Coverage {
        schema_version: SCHEMA_VERSION,
        cases: results.len(),
        passed: passing.count(),
        versions_shown: rows.len(),
        versions_left_out: left_out,
        rows: rows.into_values().collect(),
    }
}

/// The human table, its lines at most `width` characters where the names allow: a header, a
/// line per version with its `covered:` and `missing:` traits under it, and what was left out.
pub fn render(cov: &Coverage, width: usize) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "coverage of {} ({} passed): traits exercised by passing cases, per operator version",
        onnx_idx_check::report::counted(cov.cases, "case", "cases"),
        cov.passed
    );
    let w = cov
        .rows
        .iter()
        .map(|r| r.op.chars().count())
        .max()
        .unwrap_or(2);
    for r in &cov.rows {
        let total = r.covered.len() + r.missing.len();
        // The singular keeps the column's width: the counts stay aligned.
        let passing =
            onnx_idx_check::report::counted(r.passing_cases, "passing case ", "passing cases");
        let _ = writeln!(
            s,
            "{:<w$}  {passing:>18}  {:>3}/{total} traits covered",
            r.op,
            r.covered.len()
        );
        for (label, traits) in [("covered:", &r.covered), ("missing:", &r.missing)] {
            if !traits.is_empty() {
                // Indented by 2 rather than under the counts: the lists need the room more.
                s.push_str(&wrap_items(2, label, traits, width));
            }
        }
    }
    if cov.versions_left_out > 0 {
        let _ = writeln!(
            s,
            "{} operator version{} left out (no selected case uses {}); --all shows them",
            cov.versions_left_out,
            if cov.versions_left_out == 1 { "" } else { "s" },
            if cov.versions_left_out == 1 {
                "it"
            } else {
                "them"
            }
        );
    }
    s
}

/// `label` and `items` after `indent` spaces, the items separated by spaces and broken into
/// lines of at most `width` characters, each continuation line indented under the first item.
/// An item is never broken: one longer than the room left stands alone on its line.
fn wrap_items(indent: usize, label: &str, items: &[String], width: usize) -> String {
    // Every item goes after a space, so the items of each line start one past `pad`.
    let pad = indent + label.chars().count();
    let mut out = format!("{:indent$}{label}", "");
    let mut used = pad;
    for (i, item) in items.iter().enumerate() {
        let len = item.chars().count();
        // The first item of a line stays there whatever its length: breaking before it would
        // only add an empty line.
        if i > 0 && used + 1 + len > width {
            let _ = write!(out, "\n{:pad$}", "");
            used = pad;
        }
        out.push(' ');
        out.push_str(item);
        used += 1 + len;
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use onnx_idx_check::ops::REGISTRY;
    use std::path::PathBuf;

    /// A case of Gather-13 with this verdict.
    fn case(name: &str, status: Status) -> CaseResult {
        let mut r = CaseResult::bare(name, PathBuf::new(), status);
        r.op_versions = vec!["Gather-13".to_string()];
        r
    }

    fn items(words: &[&str]) -> Vec<String> {
        words.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn wrapped_lines_fit_the_width_and_hang_under_the_first_item() {
        let got = wrap_items(
            4,
            "missing:",
            &items(&["aaa", "bbbb", "cc", "ddddd", "e"]),
            22,
        );
        // 4 + "missing:" = 12 columns before the items; " aaa bbbb" ends at 21, " cc" would
        // end at 24.
        assert_eq!(
            got,
            "    missing: aaa bbbb\n             cc ddddd\n             e\n"
        );
        assert!(got.lines().all(|l| l.chars().count() <= 22));
    }

    #[test]
    fn an_item_wider_than_the_room_stands_alone_unbroken() {
        let got = wrap_items(0, "covered:", &items(&["a", "dtype:complex128", "b"]), 12);
        assert_eq!(got, "covered: a\n         dtype:complex128\n         b\n");
        // Even first, it is not broken, and no empty line comes before it.
        let got = wrap_items(0, "covered:", &items(&["dtype:complex128"]), 12);
        assert_eq!(got, "covered: dtype:complex128\n");
    }

    #[test]
    fn a_short_list_stays_on_one_line() {
        let got = wrap_items(2, "missing:", &items(&["x", "y"]), 100);
        assert_eq!(got, "  missing: x y\n");
    }

    /// Every version a row can show, by name, in registry order.
    fn every_version() -> Vec<String> {
        REGISTRY
            .iter()
            .filter(|d| !d.plumbing)
            .flat_map(|d| {
                d.versions
                    .iter()
                    .filter(|v| !v.deprecated)
                    .map(|v| d.version_name(v))
            })
            .collect()
    }

    #[test]
    fn only_the_versions_a_case_uses_are_shown_unless_all() {
        let every = every_version();
        let passing = case("a", Status::Passed);
        // A failing case still counts as using its version: its traits do not count, but the
        // version is in the suite.
        let mut failing = case("b", Status::Failed);
        let other = every.last().unwrap().clone();
        failing.op_versions = vec![other.clone()];
        let mut expected = [passing.op_versions[0].clone(), other];
        expected.sort();
        let results = [passing, failing];

        let cov = report(&results, false);
        let ops: Vec<&String> = cov.rows.iter().map(|r| &r.op).collect();
        assert_eq!(ops, expected.iter().collect::<Vec<_>>());
        assert_eq!((cov.cases, cov.passed), (2, 1));
        assert_eq!(
            (cov.versions_shown, cov.versions_left_out),
            (2, every.len() - 2)
        );

        let cov = report(&results, true);
        assert_eq!(
            (cov.versions_shown, cov.versions_left_out),
            (every.len(), 0)
        );
        assert_eq!(cov.rows.len(), every.len());
    }

    #[test]
    fn the_rows_follow_the_order_of_the_run_summary() {
        let mut r = case("a", Status::Passed);
        r.op_versions = every_version();
        let summary = onnx_idx_check::verdict::Summary::of(std::slice::from_ref(&r), 0);
        let run_order: Vec<&String> = summary.by_op.keys().collect();
        let cov = report(&[r], false);
        let cov_order: Vec<&String> = cov.rows.iter().map(|r| &r.op).collect();
        assert_eq!(cov_order, run_order);
        // Registry order is another order: the test would pass vacuously without it.
        assert_ne!(cov_order, every_version().iter().collect::<Vec<_>>());
    }

    #[test]
    fn possible_traits_follow_the_version() {
        let gather = REGISTRY
            .iter()
            .find(|d| d.op_type == "Gather" && d.domain.is_empty())
            .unwrap();
        let v1 = possible_traits(gather, &gather.versions[0]);
        assert!(
            !v1.contains("negative-indices")
                && v1.contains("rank0-indices")
                && !v1.contains("dtype:bfloat16")
        );
        let v13 = possible_traits(gather, &gather.versions[2]);
        assert!(
            v13.contains("negative-indices")
                && v13.contains("dtype:bfloat16")
                && v13.contains("indices:int32")
        );
        let se = REGISTRY
            .iter()
            .find(|d| d.op_type == "ScatterElements")
            .unwrap();
        let v18 = possible_traits(se, se.versions.last().unwrap());
        assert!(
            v18.contains("reduction:max")
                && v18.contains("duplicates")
                && !v18.contains("rank0-indices")
        );
        let nd = REGISTRY.iter().find(|d| d.op_type == "GatherND").unwrap();
        assert!(!possible_traits(nd, &nd.versions[0]).contains("batch_dims>0"));
        assert!(possible_traits(nd, &nd.versions[1]).contains("batch_dims>0"));
    }
}
