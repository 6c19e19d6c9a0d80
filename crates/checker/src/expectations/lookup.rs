//! Which entry applies to a case: the pattern, the opset range and the precedence among matching
//! entries, and the per-case tolerance they give.

use super::{Entry, Expectations};
use crate::compare::Tolerance;
use crate::verdict::CaseResult;

/// The `ai.onnx` opset import of a case.
pub(super) fn ai_onnx(result: &CaseResult) -> Option<i64> {
    result.opset.get("ai.onnx").copied()
}

impl Expectations {
    /// Whether entry `i`'s case pattern matches `case_name` (opset range aside).
    pub fn pattern_matches(&self, i: usize, case_name: &str) -> bool {
        self.matchers.get(i).is_some_and(|m| m.is_match(case_name))
    }

    /// Whether entry `i` applies to a case: its pattern matches the name and its opset range
    /// admits the case's `ai.onnx` opset.
    pub(super) fn matches(&self, i: usize, case_name: &str, opset: Option<i64>) -> bool {
        self.matchers[i].is_match(case_name) && self.entries[i].admits_opset(opset)
    }

    /// Entry indices by precedence: exact names in file order, then globs in file order.
    fn by_precedence(&self) -> impl Iterator<Item = usize> + '_ {
        let exact = (0..self.entries.len()).filter(|&i| self.matchers[i].is_exact());
        let globs = (0..self.entries.len()).filter(|&i| !self.matchers[i].is_exact());
        exact.chain(globs)
    }

    /// The entry with a status that applies to a case, by precedence.
    pub(super) fn status_entry(&self, case_name: &str, opset: Option<i64>) -> Option<usize> {
        self.by_precedence()
            .find(|&i| self.entries[i].status.is_some() && self.matches(i, case_name, opset))
    }

    /// The entry that applies to a case (`opset` is its `ai.onnx` opset): among the entries
    /// whose pattern matches the name and whose opset range admits the case, one with a status
    /// before tolerance-only ones, an exact name before a glob, then the first in file order.
    pub fn entry_for(&self, case_name: &str, opset: Option<i64>) -> Option<usize> {
        self.status_entry(case_name, opset).or_else(|| {
            self.by_precedence()
                .find(|&i| self.matches(i, case_name, opset))
        })
    }

    /// The tolerance for a case: `base` with `rtol` and `atol` each replaced by the first
    /// matching entry (exact names first, then file order) that sets it. The mode stays.
    pub fn tolerance_for(&self, case_name: &str, opset: Option<i64>, base: Tolerance) -> Tolerance {
        let first = |get: fn(&Entry) -> Option<f64>| {
            self.by_precedence()
                .filter(|&i| self.matches(i, case_name, opset))
                .find_map(|i| get(&self.entries[i]))
        };
        Tolerance {
            rtol: first(|e| e.rtol).unwrap_or(base.rtol),
            atol: first(|e| e.atol).unwrap_or(base.atol),
            mode: base.mode,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::Mode;
    use crate::expectations::testutil::{at_opset, case, outcomes, parse};
    use crate::expectations::Outcome;
    use crate::verdict::Status;

    // Matching.

    #[test]
    fn a_star_stays_within_a_path_component_and_a_double_star_crosses() {
        let exp = parse(
            "[[expect]]\ncase = \"onnx-node/test_gather_*\"\nreason = \"r\"\n\n\
             [[expect]]\ncase = \"mine/**\"\nreason = \"r\"\n\n\
             [[expect]]\ncase = \"**/deep_?\"\nreason = \"r\"\n",
        );
        let at = |name: &str| exp.entry_for(name, Some(13));
        assert_eq!(at("onnx-node/test_gather_0"), Some(0));
        assert_eq!(at("onnx-node/test_gather_elements_1"), Some(0));
        assert_eq!(at("onnx-node/test_gather_0/sub"), None);
        assert_eq!(at("x/onnx-node/test_gather_0"), None);
        assert_eq!(at("mine/a"), Some(1));
        assert_eq!(at("mine/a/b/c"), Some(1));
        assert_eq!(at("deep_1"), Some(2));
        assert_eq!(at("a/b/deep_1"), Some(2));
        assert_eq!(at("a/b/deep_12"), None);
    }

    #[test]
    fn an_exact_name_matches_only_itself() {
        let exp = parse(
            "[[expect]]\ncase = \"onnx-node/test_gather_0\"\nreason = \"r\"\n\n\
             [[expect]]\ncase = \"odd/x[[]1[]]\"\nreason = \"r\"\n\n\
             [[expect]]\ncase = \"odd/y\\\\*\"\nreason = \"r\"\n",
        );
        assert!(exp.entries().iter().all(Entry::is_exact));
        assert_eq!(exp.entry_for("onnx-node/test_gather_0", None), Some(0));
        assert_eq!(exp.entry_for("onnx-node/test_gather_01", None), None);
        assert_eq!(exp.entry_for("onnx-node/test_gather", None), None);
        assert_eq!(exp.entry_for("odd/x[1]", None), Some(1));
        assert_eq!(exp.entry_for("odd/x1", None), None);
        assert_eq!(exp.entry_for("odd/y*", None), Some(2));
        assert_eq!(exp.entry_for("odd/yz", None), None);
    }

    #[test]
    fn opset_ranges_are_inclusive_and_need_an_ai_onnx_import() {
        let exp = parse(
            "[[expect]]\ncase = \"a\"\nreason = \"r\"\nopset = { min = 13, max = 17 }\n\n\
             [[expect]]\ncase = \"b\"\nreason = \"r\"\nopset = { min = 16 }\n\n\
             [[expect]]\ncase = \"c\"\nreason = \"r\"\nopset = { max = 12 }\n\n\
             [[expect]]\ncase = \"d\"\nreason = \"r\"\nopset = {}\n",
        );
        let admits = |name: &str, v: Option<i64>| exp.entry_for(name, v).is_some();
        assert!(!admits("a", Some(12)));
        assert!(admits("a", Some(13)));
        assert!(admits("a", Some(17)));
        assert!(!admits("a", Some(18)));
        assert!(!admits("a", None));
        assert!(admits("b", Some(16)) && admits("b", Some(99)) && !admits("b", Some(15)));
        assert!(admits("c", Some(1)) && admits("c", Some(12)) && !admits("c", Some(13)));
        assert!(admits("d", None) && admits("d", Some(7)));
    }

    #[test]
    fn the_opset_of_a_case_is_its_ai_onnx_import() {
        let exp = parse(
            "[[expect]]\ncase = \"a\"\nstatus = \"errored\"\nreason = \"r\"\nopset = { min = 13, max = 13 }\n",
        );
        let results = [
            at_opset(case("a", Status::Errored), Some(13)),
            at_opset(case("a", Status::Errored), Some(14)),
            at_opset(case("a", Status::Errored), None),
        ];
        assert_eq!(
            outcomes(&exp, &results),
            vec![Some(Outcome::ExpectedFailure), None, None]
        );
    }

    #[test]
    fn status_entries_and_exact_names_take_precedence_then_file_order() {
        let exp = parse(
            "[[expect]]\ncase = \"a/*\"\nreason = \"tolerance\"\nrtol = 0.1\n\n\
             [[expect]]\ncase = \"a/*\"\nstatus = \"failed\"\nreason = \"glob 1\"\n\n\
             [[expect]]\ncase = \"a/x*\"\nstatus = \"errored\"\nreason = \"glob 2\"\n\n\
             [[expect]]\ncase = \"a/x1\"\nstatus = \"skipped\"\nreason = \"exact\"\n\n\
             [[expect]]\ncase = \"b/*\"\nreason = \"tolerance\"\n",
        );
        assert_eq!(exp.entry_for("a/x1", Some(13)), Some(3));
        assert_eq!(exp.entry_for("a/x2", Some(13)), Some(1));
        assert_eq!(exp.entry_for("a/y", Some(13)), Some(1));
        assert_eq!(exp.entry_for("b/y", Some(13)), Some(4));
        assert_eq!(exp.entry_for("c/y", Some(13)), None);
    }

    #[test]
    fn tolerance_overrides_apply_per_field() {
        let exp = parse(
            "[[expect]]\ncase = \"r/*\"\nreason = \"r\"\nrtol = 0.25\natol = 0.5\n\n\
             [[expect]]\ncase = \"r/x\"\nstatus = \"failed\"\nreason = \"r\"\natol = 1e-3\n\n\
             [[expect]]\ncase = \"r/*\"\nreason = \"later\"\nrtol = 0.75\n\n\
             [[expect]]\ncase = \"o\"\nreason = \"r\"\nrtol = 1\nopset = { max = 12 }\n",
        );
        let base = Tolerance {
            rtol: 1e-3,
            atol: 1e-7,
            mode: Mode::Tolerant,
        };
        let tol = |name: &str, opset: Option<i64>| {
            let t = exp.tolerance_for(name, opset, base);
            (t.rtol, t.atol, t.mode)
        };
        assert_eq!(tol("r/y", Some(13)), (0.25, 0.5, Mode::Tolerant));
        // The exact entry sets atol; rtol comes from the first glob that sets it.
        assert_eq!(tol("r/x", Some(13)), (0.25, 1e-3, Mode::Tolerant));
        assert_eq!(tol("o", Some(12)), (1.0, 1e-7, Mode::Tolerant));
        assert_eq!(tol("o", Some(13)), (1e-3, 1e-7, Mode::Tolerant));
        assert_eq!(tol("z", None), (1e-3, 1e-7, Mode::Tolerant));
    }
}
