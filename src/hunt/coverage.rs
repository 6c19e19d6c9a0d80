//! What the runtime implements, as a hunt learns it: a runtime that refuses every case of an
//! operator, version or data type it never claimed is not buggy there, it does not cover it.
//! Such refusals are no findings: they go into one table of the hunt's summary, and the rest of
//! those cases are not tried. A refusal of valid input where the runtime runs other cases of the
//! same operator version and type is a finding (refuses valid input).
//!
//! The levels: a data type of an operator version is not implemented after [`REFUSALS`]
//! refusals of its valid cases and no case run; an operator version after [`VERSION_REFUSALS`]
//! refusals over at least two of its data types and none run; an operator (every version of it,
//! its domain included) after two of its versions are not and none ran.

use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// Refusals of valid cases, with none run, after which a data type of a version is not
/// implemented.
pub(crate) const REFUSALS: u32 = 2;
/// Refusals of valid cases of a version, over two data types or more and with none run, after
/// which the version is not implemented.
pub(crate) const VERSION_REFUSALS: u32 = 4;

/// A data type of an operator version.
pub(crate) type Group = (String, i64, String);

#[derive(Default)]
struct Tally {
    refused: u32,
    runs: u32,
    /// The first refusal's message.
    message: String,
}

/// The runtime's coverage as seen so far.
#[derive(Default)]
pub(crate) struct Coverage {
    groups: BTreeMap<Group, Tally>,
    /// Cases left out because what they need is not implemented.
    skipped: BTreeMap<Group, u64>,
}

/// One row of the summary's table: what the runtime does not implement.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct NotImplemented {
    /// The operator (`org.openvinotoolkit.Gather`).
    pub op: String,
    /// Its versions not implemented (every version tried when the whole operator is not).
    pub versions: BTreeSet<i64>,
    /// The data types not implemented; empty when no version of the row runs at all.
    pub dtypes: BTreeSet<String>,
    /// Whether no case of the operator ran at all.
    pub whole_op: bool,
    /// Valid cases refused, and cases then left out.
    pub cases: u64,
    /// The runtime's message for the first refusal.
    pub message: String,
}

impl Coverage {
    /// Whether a valid case of `g` ran (any answer but a refusal).
    pub(crate) fn ran(&mut self, g: &Group) {
        self.groups.entry(g.clone()).or_default().runs += 1;
    }

    /// A valid case of `g` was refused with `message`.
    pub(crate) fn refused(&mut self, g: &Group, message: &str) {
        let t = self.groups.entry(g.clone()).or_default();
        if t.refused == 0 {
            message.clone_into(&mut t.message);
        }
        t.refused += 1;
    }

    /// Whether `g` is known to run.
    pub(crate) fn runs(&self, g: &Group) -> bool {
        self.groups.get(g).is_some_and(|t| t.runs > 0)
    }

    /// Whether a valid case of `g` was refused and none ran: a case of it is tried alone.
    pub(crate) fn doubtful(&self, g: &Group) -> bool {
        self.groups
            .get(g)
            .is_some_and(|t| t.runs == 0 && t.refused > 0)
    }

    fn group_out(&self, g: &Group) -> bool {
        self.groups
            .get(g)
            .is_some_and(|t| t.runs == 0 && t.refused >= REFUSALS)
    }

    fn version_runs(&self, op: &str, v: i64) -> bool {
        self.groups
            .iter()
            .any(|((o, ver, _), t)| o == op && *ver == v && t.runs > 0)
    }

    fn version_out(&self, op: &str, v: i64) -> bool {
        let of_version = || {
            self.groups
                .iter()
                .filter(move |((o, ver, _), _)| o == op && *ver == v)
        };
        !self.version_runs(op, v)
            && of_version().map(|(_, t)| t.refused).sum::<u32>() >= VERSION_REFUSALS
            && of_version().filter(|(_, t)| t.refused > 0).count() >= 2
    }

    fn op_out(&self, op: &str) -> bool {
        let versions: BTreeSet<i64> = self
            .groups
            .keys()
            .filter(|(o, ..)| o == op)
            .map(|(_, v, _)| *v)
            .collect();
        !self.groups.iter().any(|((o, ..), t)| o == op && t.runs > 0)
            && versions
                .iter()
                .filter(|&&v| self.version_out(op, v))
                .count()
                >= 2
    }

    /// Whether the cases of `g` need what the runtime does not implement: they are not tried.
    pub(crate) fn not_implemented(&self, g: &Group) -> bool {
        !self.runs(g) && (self.group_out(g) || self.version_out(&g.0, g.1) || self.op_out(&g.0))
    }

    /// A case of `g` left out.
    pub(crate) fn skip(&mut self, g: &Group) {
        *self.skipped.entry(g.clone()).or_default() += 1;
    }

    /// The table: one row per operator not implemented at all, else per version whose data types
    /// are not (or which is not at all).
    pub(crate) fn table(&self) -> Vec<NotImplemented> {
        let mut rows: BTreeMap<(String, Option<i64>), NotImplemented> = BTreeMap::new();
        for (g, t) in &self.groups {
            if !self.not_implemented(g) {
                continue;
            }
            let (op, v, dtype) = g;
            let whole_op = self.op_out(op);
            let whole_version = whole_op || self.version_out(op, *v);
            let row = rows
                .entry((op.clone(), (!whole_op).then_some(*v)))
                .or_insert_with(|| NotImplemented {
                    op: op.clone(),
                    versions: BTreeSet::new(),
                    dtypes: BTreeSet::new(),
                    whole_op,
                    cases: 0,
                    message: t.message.clone(),
                });
            row.versions.insert(*v);
            if !whole_version {
                row.dtypes.insert(dtype.clone());
            }
            row.cases += u64::from(t.refused) + self.skipped.get(g).copied().unwrap_or(0);
        }
        // Left-out cases of groups never tried themselves (their version or operator was out).
        for (g, n) in &self.skipped {
            if self.groups.contains_key(g) {
                continue;
            }
            let key_op = (g.0.clone(), None);
            let key_v = (g.0.clone(), Some(g.1));
            if let Some(row) = rows.get_mut(&key_op) {
                row.versions.insert(g.1);
                row.cases += n;
            } else if let Some(row) = rows.get_mut(&key_v) {
                row.cases += n;
            }
        }
        rows.into_values().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(op: &str, v: i64, t: &str) -> Group {
        (op.to_string(), v, t.to_string())
    }

    #[test]
    fn a_type_is_out_after_refusals_with_no_run_and_in_once_a_case_runs() {
        let mut c = Coverage::default();
        let bf = g("GatherND", 13, "bfloat16");
        for _ in 0..REFUSALS - 1 {
            c.refused(&bf, "no kernel");
        }
        assert!(!c.not_implemented(&bf));
        c.refused(&bf, "no kernel");
        assert!(c.not_implemented(&bf));
        // Another type of the version runs: the version is in, bfloat16 alone is out.
        c.ran(&g("GatherND", 13, "float"));
        assert!(!c.not_implemented(&g("GatherND", 13, "int8")));
        let table = c.table();
        assert_eq!(table.len(), 1);
        assert_eq!(table[0].dtypes, BTreeSet::from(["bfloat16".to_string()]));
        assert!(!table[0].whole_op);
        assert_eq!(table[0].message, "no kernel");
        // A type that refuses some cases but runs others is implemented: its refusals are
        // findings.
        let s = g("ScatterND", 13, "float");
        c.ran(&s);
        for _ in 0..5 {
            c.refused(&s, "negative index");
        }
        assert!(!c.not_implemented(&s));
    }

    #[test]
    fn an_operator_no_version_of_which_runs_is_out_whole() {
        let mut c = Coverage::default();
        let op = "org.openvinotoolkit.Gather";
        for (v, t) in [(1, "float"), (1, "int8"), (7, "float"), (7, "int32")] {
            for _ in 0..VERSION_REFUSALS / 2 {
                c.refused(&g(op, v, t), "unknown domain");
            }
        }
        // A version and a type never tried are out with the operator.
        assert!(c.not_implemented(&g(op, 8, "uint8")));
        c.skip(&g(op, 8, "uint8"));
        let table = c.table();
        assert_eq!(table.len(), 1, "{table:?}");
        assert!(table[0].whole_op);
        assert_eq!(table[0].versions, BTreeSet::from([1, 7, 8]));
        assert!(table[0].dtypes.is_empty());
        assert_eq!(table[0].cases, 2 * u64::from(VERSION_REFUSALS) + 1);
    }
}
