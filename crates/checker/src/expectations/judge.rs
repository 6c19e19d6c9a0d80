//! Judging a run against the expectations: each listed case's outcome (expected failure,
//! unexpectedly passed, ended differently), expired entries and entries that matched no case.

use super::lookup::ai_onnx;
use super::{Date, Entry, Expectations, Signature};
use crate::verdict::{CaseResult, Status};
use std::fmt;

/// What the expectations say about one case.
#[derive(Clone, Debug, PartialEq)]
pub struct CaseJudgement {
    /// The applying entry (an index into [`Expectations::entries`]).
    pub entry: usize,
    /// The outcome.
    pub outcome: Outcome,
}

/// How a listed case ended compared with its entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Listed with this status and it still ends so (same signature): not a gate failure.
    ExpectedFailure,
    /// Listed as not passing but it passed now: a gate failure, so the list only shrinks.
    UnexpectedlyPassed,
    /// Listed, but it now ends differently (another verdict, or a failed case with a different
    /// signature): a gate failure. The text says how: `expected failed with 3 mismatches first
    /// at [1,0], got 5 mismatches first at [0,2]`, `expected errored, got failed`.
    Different(String),
    /// Only tolerance overrides apply to this case (an entry without status); the normal verdict
    /// stands.
    ToleranceOnly,
    /// The entry applies but its `until` date (given) has passed: a gate failure in the run that
    /// ran the case, whatever the case did (unless it already fails the gate otherwise).
    Expired(Date),
}

impl Outcome {
    /// Whether this outcome fails the gate by itself.
    pub fn fails_gate(&self) -> bool {
        matches!(
            self,
            Outcome::UnexpectedlyPassed | Outcome::Different(_) | Outcome::Expired(_)
        )
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::ExpectedFailure => f.write_str("expected failure"),
            Outcome::UnexpectedlyPassed => f.write_str("passed, but is listed as not passing"),
            Outcome::Different(how) => f.write_str(how),
            Outcome::ToleranceOnly => f.write_str("tolerance override"),
            Outcome::Expired(until) => {
                write!(
                    f,
                    "the entry expired on {until} (its `until` date has passed)"
                )
            }
        }
    }
}

/// The expectations' verdict on a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Judgement {
    /// Per case, parallel to the results: the applying entry and the outcome; `None` when no
    /// entry matches.
    pub cases: Vec<Option<CaseJudgement>>,
    /// Entries whose `until` is before today (indices into [`Expectations::entries`]).
    pub expired: Vec<usize>,
    /// Entries that matched no case of the run (pattern and opset range).
    pub unmatched: Vec<usize>,
}

impl Judgement {
    /// Whether case `index`, whose verdict is `status`, fails the gate: its outcome does, or no
    /// status entry covers it and it failed or errored (or was skipped, with `deny_skip`).
    /// Expired and unmatched entries are not counted here.
    pub fn case_fails_gate(&self, index: usize, status: Status, deny_skip: bool) -> bool {
        match self.cases.get(index).and_then(Option::as_ref) {
            Some(j) if j.outcome != Outcome::ToleranceOnly => j.outcome.fails_gate(),
            _ => match status {
                Status::Passed => false,
                Status::Failed | Status::Errored => true,
                Status::Skipped => deny_skip,
            },
        }
    }
}

impl Expectations {
    /// Judges the results of a run on `today` (see [`Date::today`]).
    pub fn judge(&self, results: &[CaseResult], today: Date) -> Judgement {
        let mut matched = vec![false; self.entries.len()];
        let cases = results
            .iter()
            .map(|r| {
                let opset = ai_onnx(r);
                for (i, m) in matched.iter_mut().enumerate() {
                    *m = *m || self.matches(i, &r.name, opset);
                }
                let entry = self.entry_for(&r.name, opset)?;
                let e = &self.entries[entry];
                let outcome = match (outcome(e, r), e.until) {
                    // An outcome that fails the gate by itself says more than the expiry.
                    (o, Some(until)) if until < today && !o.fails_gate() => Outcome::Expired(until),
                    (o, _) => o,
                };
                Some(CaseJudgement { entry, outcome })
            })
            .collect();
        Judgement {
            cases,
            expired: (0..self.entries.len())
                .filter(|&i| self.entries[i].until.is_some_and(|d| d < today))
                .collect(),
            unmatched: (0..self.entries.len()).filter(|&i| !matched[i]).collect(),
        }
    }
}

/// The outcome of a case under the entry that applies to it.
fn outcome(entry: &Entry, r: &CaseResult) -> Outcome {
    let Some(expected) = entry.status else {
        return Outcome::ToleranceOnly;
    };
    if r.status == Status::Passed {
        return Outcome::UnexpectedlyPassed;
    }
    if r.status != expected {
        return Outcome::Different(format!(
            "expected {}, got {}",
            expected.as_str(),
            r.status.as_str()
        ));
    }
    match Signature::of(r) {
        Some(sig) if !entry.signature_matches(&sig) => {
            Outcome::Different(format!("expected {}, got {sig}", entry.expected_text()))
        }
        _ => Outcome::ExpectedFailure,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expectations::testutil::{case, date, failed, outcomes, parse, today};

    #[test]
    fn a_case_that_still_ends_as_listed_is_an_expected_failure() {
        let exp = parse(
            "[[expect]]\ncase = \"f\"\nstatus = \"failed\"\nreason = \"r\"\nmismatches = 3\nfirst_mismatch = [1, 0]\n\n\
             [[expect]]\ncase = \"e\"\nstatus = \"errored\"\nreason = \"r\"\n\n\
             [[expect]]\ncase = \"s\"\nstatus = \"skipped\"\nreason = \"r\"\n\n\
             [[expect]]\ncase = \"g/*\"\nstatus = \"failed\"\nreason = \"r\"\n",
        );
        let results = [
            failed("f", 3, Some(&[1, 0])),
            case("e", Status::Errored),
            case("s", Status::Skipped),
            failed("g/1", 9, Some(&[0, 0])),
            failed("g/2", 0, None),
        ];
        let j = exp.judge(&results, today());
        let entries: Vec<usize> = j.cases.iter().map(|c| c.as_ref().unwrap().entry).collect();
        assert_eq!(entries, vec![0, 1, 2, 3, 3]);
        assert!(j
            .cases
            .iter()
            .all(|c| c.as_ref().unwrap().outcome == Outcome::ExpectedFailure));
        assert!(j.expired.is_empty() && j.unmatched.is_empty());
        assert!(!Outcome::ExpectedFailure.fails_gate());
    }

    #[test]
    fn a_listed_case_that_passes_now_fails_the_gate() {
        let exp = parse(
            "[[expect]]\ncase = \"f\"\nstatus = \"failed\"\nreason = \"r\"\n\n\
             [[expect]]\ncase = \"s\"\nstatus = \"skipped\"\nreason = \"r\"\n",
        );
        let results = [case("f", Status::Passed), case("s", Status::Passed)];
        assert_eq!(
            outcomes(&exp, &results),
            vec![
                Some(Outcome::UnexpectedlyPassed),
                Some(Outcome::UnexpectedlyPassed)
            ]
        );
        assert!(Outcome::UnexpectedlyPassed.fails_gate());
    }

    #[test]
    fn a_listed_case_that_ends_differently_fails_the_gate() {
        let exp = parse(
            "[[expect]]\ncase = \"e\"\nstatus = \"errored\"\nreason = \"r\"\n\n\
             [[expect]]\ncase = \"f\"\nstatus = \"failed\"\nreason = \"r\"\nmismatches = 3\nfirst_mismatch = [1, 0]\n\n\
             [[expect]]\ncase = \"n\"\nstatus = \"failed\"\nreason = \"r\"\nmismatches = 1\n\n\
             [[expect]]\ncase = \"i\"\nstatus = \"failed\"\nreason = \"r\"\nfirst_mismatch = [2]\n\n\
             [[expect]]\ncase = \"x\"\nstatus = \"failed\"\nreason = \"r\"\n",
        );
        let results = [
            failed("e", 3, Some(&[1, 0])),
            failed("f", 5, Some(&[0, 2])),
            failed("n", 0, None),
            failed("i", 1, Some(&[3])),
            case("x", Status::Skipped),
        ];
        let different = |s: &str| Some(Outcome::Different(s.to_string()));
        assert_eq!(
            outcomes(&exp, &results),
            vec![
                different("expected errored, got failed"),
                different("expected failed with 3 mismatches first at [1,0], got 5 mismatches first at [0,2]"),
                different("expected failed with 1 mismatch, got 0 mismatches (got float [3, 2])"),
                different("expected failed with the first mismatch at [2], got 1 mismatch first at [3]"),
                different("expected failed, got skipped"),
            ]
        );
        assert!(Outcome::Different(String::new()).fails_gate());
    }

    #[test]
    fn signature_fields_are_compared_only_when_present() {
        let exp = parse(
            "[[expect]]\ncase = \"n\"\nstatus = \"failed\"\nreason = \"r\"\nmismatches = 5\n\n\
             [[expect]]\ncase = \"i\"\nstatus = \"failed\"\nreason = \"r\"\nfirst_mismatch = [0, 2]\n",
        );
        let results = [
            failed("n", 5, Some(&[4, 4])),
            failed("i", 99, Some(&[0, 2])),
        ];
        assert_eq!(
            outcomes(&exp, &results),
            vec![
                Some(Outcome::ExpectedFailure),
                Some(Outcome::ExpectedFailure)
            ]
        );
    }

    #[test]
    fn an_entry_without_status_only_overrides_tolerances() {
        let exp = parse("[[expect]]\ncase = \"t/*\"\nreason = \"r\"\nrtol = 0.5\n");
        let results = [
            case("t/p", Status::Passed),
            failed("t/f", 1, Some(&[0])),
            case("u", Status::Failed),
        ];
        let j = exp.judge(&results, today());
        assert_eq!(
            j.cases[0],
            Some(CaseJudgement {
                entry: 0,
                outcome: Outcome::ToleranceOnly
            })
        );
        assert_eq!(j.cases[1].as_ref().unwrap().outcome, Outcome::ToleranceOnly);
        assert_eq!(j.cases[2], None);
        assert!(!Outcome::ToleranceOnly.fails_gate());
        // The verdict stands for tolerance-only and unlisted cases.
        assert!(!j.case_fails_gate(0, Status::Passed, false));
        assert!(j.case_fails_gate(1, Status::Failed, false));
        assert!(j.case_fails_gate(2, Status::Failed, false));
    }

    #[test]
    fn case_fails_gate_combines_outcomes_and_verdicts() {
        let exp = parse(
            "[[expect]]\ncase = \"f\"\nstatus = \"failed\"\nreason = \"r\"\n\n\
             [[expect]]\ncase = \"p\"\nstatus = \"failed\"\nreason = \"r\"\n",
        );
        let results = [
            failed("f", 1, None),
            case("p", Status::Passed),
            case("s", Status::Skipped),
            case("q", Status::Passed),
        ];
        let j = exp.judge(&results, today());
        assert!(!j.case_fails_gate(0, Status::Failed, true));
        assert!(j.case_fails_gate(1, Status::Passed, false));
        assert!(!j.case_fails_gate(2, Status::Skipped, false));
        assert!(j.case_fails_gate(2, Status::Skipped, true));
        assert!(!j.case_fails_gate(3, Status::Passed, true));
    }

    #[test]
    fn an_entry_is_valid_through_its_until_day() {
        let exp = parse(
            "[[expect]]\ncase = \"a\"\nstatus = \"failed\"\nreason = \"r\"\nuntil = 2026-05-31\n\n\
             [[expect]]\ncase = \"b\"\nstatus = \"failed\"\nreason = \"r\"\nuntil = 2026-06-01\n\n\
             [[expect]]\ncase = \"c\"\nstatus = \"failed\"\nreason = \"r\"\nuntil = \"2026-06-02\"\n\n\
             [[expect]]\ncase = \"d\"\nreason = \"r\"\nuntil = 2020-01-01\n\n\
             [[expect]]\ncase = \"e\"\nstatus = \"failed\"\nreason = \"r\"\n",
        );
        // Expired entries are listed whether or not they match a case; a case an expired entry
        // applies to is judged `Expired` (a gate failure in the run that ran it), unless its
        // outcome already fails the gate.
        let results = [
            failed("a", 1, None),
            failed("b", 1, None),
            case("d", Status::Passed),
        ];
        let j = exp.judge(&results, date("2026-06-01"));
        assert_eq!(j.expired, vec![0, 3]);
        let outcome = |j: &Judgement, i: usize| j.cases[i].as_ref().unwrap().outcome.clone();
        assert_eq!(outcome(&j, 0), Outcome::Expired(date("2026-05-31")));
        assert!(j.case_fails_gate(0, Status::Failed, false));
        assert_eq!(outcome(&j, 1), Outcome::ExpectedFailure);
        assert_eq!(outcome(&j, 2), Outcome::Expired(date("2020-01-01")));
        assert_eq!(
            outcome(&j, 0).to_string(),
            "the entry expired on 2026-05-31 (its `until` date has passed)"
        );
        // A listed case that passes is told to go: that says more than the expiry.
        let j = exp.judge(&[case("a", Status::Passed)], date("2026-06-01"));
        assert_eq!(outcome(&j, 0), Outcome::UnexpectedlyPassed);
        assert_eq!(
            exp.judge(&results, date("2026-06-02")).expired,
            vec![0, 1, 3]
        );
        assert_eq!(
            exp.judge(&[], date("2020-01-01")).expired,
            Vec::<usize>::new()
        );
    }

    #[test]
    fn entries_that_match_no_case_are_unmatched() {
        let exp = parse(
            "[[expect]]\ncase = \"a\"\nstatus = \"failed\"\nreason = \"r\"\n\n\
             [[expect]]\ncase = \"gone\"\nstatus = \"failed\"\nreason = \"r\"\n\n\
             [[expect]]\ncase = \"a\"\nstatus = \"failed\"\nreason = \"r\"\nopset = { min = 18 }\n\n\
             [[expect]]\ncase = \"t/*\"\nreason = \"r\"\n\n\
             [[expect]]\ncase = \"*\"\nreason = \"r\"\n",
        );
        let results = [failed("a", 1, None), case("t/p", Status::Passed)];
        let j = exp.judge(&results, today());
        // `*` matches `a` (it is shadowed there, but it matched).
        assert_eq!(j.unmatched, vec![1, 2]);
        assert_eq!(exp.judge(&[], today()).unmatched, vec![0, 1, 2, 3, 4]);
    }
}
