//! The `coverage` subcommand's table: every trait each operator version can exercise (from the
//! registry), and which of them the passing cases covered.

use crate::ops::{OpDef, OpVersion, Role, REGISTRY};
use crate::verdict::{CaseResult, Status};
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

/// One row of the coverage report.
#[derive(Debug, Serialize)]
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
/// (plumbing left out), in registry order.
pub fn report(results: &[CaseResult]) -> Vec<Row> {
    let mut seen: BTreeMap<String, (usize, BTreeSet<String>)> = BTreeMap::new();
    for r in results.iter().filter(|r| r.status == Status::Passed) {
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
    let mut rows = Vec::new();
    for def in REGISTRY.iter().filter(|d| !d.plumbing) {
        for v in def.versions.iter().filter(|v| !v.deprecated) {
            let key = def.version_name(v);
            let possible = possible_traits(def, v);
            let (cases, covered) = seen.get(&key).cloned().unwrap_or_default();
            rows.push(Row {
                op: key,
                passing_cases: cases,
                covered: possible.intersection(&covered).cloned().collect(),
                missing: possible.difference(&covered).cloned().collect(),
            });
        }
    }
    rows
}

/// The human table.
pub fn render(rows: &[Row]) -> String {
    let w = rows.iter().map(|r| r.op.len()).max().unwrap_or(2);
    let mut s = String::new();
    for r in rows {
        let total = r.covered.len() + r.missing.len();
        let _ = writeln!(
            s,
            "{:<w$}  {:>4} passing cases  {:>3}/{total} traits covered",
            r.op,
            r.passing_cases,
            r.covered.len()
        );
        if !r.missing.is_empty() {
            let _ = writeln!(s, "{:<w$}  missing: {}", "", r.missing.join(" "));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::REGISTRY;

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
