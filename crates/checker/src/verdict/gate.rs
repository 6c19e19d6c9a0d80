//! The gate: whether a run passes as a whole (the cases, the expectations file, the required
//! operators and case count), and why not.

use super::{CaseResult, ExpectationOutcome, Status};

/// The run's own verdict: whether it passes, and every reason it does not. The exit status is
/// read from it, and every report receives it.
///
/// ```
/// use onnx_idx_check::verdict::GateKind;
/// use onnx_idx_check::{check, CheckOptions};
///
/// let options = CheckOptions::default().filter("^test_gather_0$").min_cases(2);
/// let report = check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &options)?;
/// assert!(!report.gate.passed());
/// assert_eq!(report.gate.reasons[0].kind, GateKind::MinCases);
/// # Ok::<(), onnx_idx_check::CheckError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Gate {
    /// Why the run fails, in a fixed order (cases, expectations, requirements); empty when it
    /// passes.
    pub reasons: Vec<GateReason>,
    /// Whether skipped cases fail the run (`--deny-skip`): the reports show them as failures of
    /// the gate.
    pub deny_skip: bool,
}

/// How `c` fails the gate, if it does: an index into the ways [`Gate::of`] counts (failed,
/// errored, skipped under `deny_skip`, passed unexpectedly, failed differently, expired).
fn gate_failure(c: &CaseResult, deny_skip: bool) -> Option<usize> {
    match &c.expectation {
        Some(n) if n.outcome != ExpectationOutcome::ToleranceOnly => match n.outcome {
            _ if !n.fails_gate => None,
            ExpectationOutcome::UnexpectedlyPassed => Some(3),
            ExpectationOutcome::Expired => Some(5),
            _ => Some(4),
        },
        _ => match c.status {
            Status::Failed => Some(0),
            Status::Errored => Some(1),
            Status::Skipped if deny_skip => Some(2),
            _ => None,
        },
    }
}

impl CaseResult {
    /// Whether the case fails the run's gate: it failed or errored and no expectation excuses
    /// it, an expectation's outcome fails it (an unexpected pass, a different failure, an
    /// expired entry), or it was skipped under `deny_skip`.
    ///
    /// ```
    /// use onnx_idx_check::{check, CheckOptions};
    ///
    /// let report = check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &CheckOptions::default().filter("^test_gather_0$"))?;
    /// assert!(!report.cases[0].fails_gate(false));
    /// # Ok::<(), onnx_idx_check::CheckError>(())
    /// ```
    pub fn fails_gate(&self, deny_skip: bool) -> bool {
        gate_failure(self, deny_skip).is_some()
    }
}

/// One reason a run fails.
///
/// ```
/// use onnx_idx_check::verdict::GateKind;
/// use onnx_idx_check::{check, CheckOptions};
///
/// let options = CheckOptions::default().filter("^test_gather_0$").require_op("ScatterND");
/// let reason = &check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &options)?.gate.reasons[0];
/// assert_eq!((reason.kind, reason.kind.id()), (GateKind::RequireOp, "require-op"));
/// assert!(reason.message.contains("ScatterND"));
/// # Ok::<(), onnx_idx_check::CheckError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GateReason {
    /// What kind of rule failed.
    pub kind: GateKind,
    /// What failed, for people: `--min-cases 5: only 3 cases ran`.
    pub message: String,
}

/// The rules a run is gated by.
///
/// ```
/// use onnx_idx_check::verdict::GateKind;
///
/// assert_eq!(GateKind::MinCases.id(), "min-cases");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GateKind {
    /// Cases that failed, errored, passed unexpectedly or (with `--deny-skip`) were skipped.
    Cases,
    /// The expectations file itself: an expired entry, or (with `--strict-expectations`) an
    /// entry that matched no case.
    Expectations,
    /// `--min-cases N`: fewer cases ran.
    MinCases,
    /// `--require-op OP[-VERSION]`: no case ran that operator (version).
    RequireOp,
}

impl GateKind {
    /// The stable identifier used in reports.
    ///
    /// ```
    /// use onnx_idx_check::verdict::GateKind;
    ///
    /// assert_eq!(GateKind::Cases.id(), "cases");
    /// ```
    pub fn id(self) -> &'static str {
        match self {
            GateKind::Cases => "cases",
            GateKind::Expectations => "expectations",
            GateKind::MinCases => "min-cases",
            GateKind::RequireOp => "require-op",
        }
    }

    /// Whether the rule is one the run was asked to meet (`--min-cases`, `--require-op`) rather
    /// than a verdict the reports already show case by case.
    pub(crate) fn is_requirement(self) -> bool {
        matches!(self, GateKind::MinCases | GateKind::RequireOp)
    }
}

/// What the run must show to pass besides its verdicts: `--min-cases` and `--require-op`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Requirements {
    /// `--min-cases N`: at least this many cases must run (passed, failed or errored; skipped
    /// cases and cases `--fail-fast` left out do not count).
    pub min_cases: Option<usize>,
    /// `--require-op`: operator versions (`GatherND-12`) or operators (`ScatterElements`, any
    /// version) at least one case must run, as the per-operator summary spells them.
    pub ops: Vec<RequiredOp>,
}

/// One `--require-op`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RequiredOp {
    /// As given on the command line.
    pub given: String,
    /// The operator as the per-operator summary names it, without version
    /// (`com.microsoft.GatherGrad`, `Gather`).
    pub op: String,
    /// The exact `since_version`, or `None` for any.
    pub version: Option<i64>,
}

impl RequiredOp {
    /// Whether a per-operator key (`Gather-13`, `com.microsoft.GatherGrad-1`) is this operator
    /// (version).
    pub(crate) fn matches(&self, key: &str) -> bool {
        let Some((op, version)) = key.rsplit_once('-') else {
            return false;
        };
        op == self.op && self.version.is_none_or(|v| version.parse::<i64>() == Ok(v))
    }
}

/// Whether a case counts as run for `--min-cases` and `--require-op`: it was evaluated (passed,
/// failed or errored), not skipped.
fn ran(c: &CaseResult) -> bool {
    c.status != Status::Skipped
}

impl Gate {
    /// Whether the run passes.
    ///
    /// ```
    /// use onnx_idx_check::{check, CheckOptions};
    ///
    /// let report = check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &CheckOptions::default().filter("^test_gather_0$"))?;
    /// assert!(report.gate.passed());
    /// # Ok::<(), onnx_idx_check::CheckError>(())
    /// ```
    pub fn passed(&self) -> bool {
        self.reasons.is_empty()
    }

    /// The cases skipped that fail the run (under `--deny-skip`), in case order.
    pub fn skipped_denied<'a>(&self, cases: &'a [CaseResult]) -> Vec<&'a CaseResult> {
        cases
            .iter()
            .filter(|c| c.status == Status::Skipped && c.fails_gate(self.deny_skip))
            .collect()
    }

    /// The gate of a run: its cases (with their expectation notes), the expectations file's own
    /// failures (`expectations`, messages as they are), and the requirements.
    pub(crate) fn of(
        cases: &[CaseResult],
        deny_skip: bool,
        expectations: Vec<String>,
        requirements: &Requirements,
    ) -> Gate {
        let mut reasons = Vec::new();
        // Counted per way of failing, in this order.
        let mut bad = [
            ("failed", 0),
            ("errored", 0),
            ("skipped (--deny-skip)", 0),
            ("passed unexpectedly", 0),
            ("failed differently than expected", 0),
            ("listed under an expired expectation", 0),
        ];
        for c in cases {
            if let Some(i) = gate_failure(c, deny_skip) {
                bad[i].1 += 1;
            }
        }
        let parts: Vec<String> = bad
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(why, n)| format!("{n} {why}"))
            .collect();
        if !parts.is_empty() {
            reasons.push(GateReason {
                kind: GateKind::Cases,
                message: format!("cases: {}", parts.join(", ")),
            });
        }
        reasons.extend(expectations.into_iter().map(|message| GateReason {
            kind: GateKind::Expectations,
            message,
        }));
        let run = cases.iter().filter(|c| ran(c)).count();
        if let Some(min) = requirements.min_cases.filter(|&min| run < min) {
            reasons.push(GateReason {
                kind: GateKind::MinCases,
                message: format!(
                    "--min-cases {min}: only {run} {} ran (skipped cases do not count)",
                    if run == 1 { "case" } else { "cases" }
                ),
            });
        }
        for req in &requirements.ops {
            let exercised = cases
                .iter()
                .filter(|c| ran(c))
                .any(|c| c.op_versions.iter().any(|k| req.matches(k)));
            if !exercised {
                reasons.push(GateReason {
                    kind: GateKind::RequireOp,
                    message: format!(
                        "--require-op {}: no case ran {}",
                        req.given,
                        match req.version {
                            Some(v) => format!("{}-{v}", req.op),
                            None => format!("{} (any version)", req.op),
                        }
                    ),
                });
            }
        }
        Gate { reasons, deny_skip }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::ExpectationNote;
    use std::path::PathBuf;

    fn case(name: &str, status: Status, ops: &[&str]) -> CaseResult {
        CaseResult {
            op_versions: ops.iter().map(|s| s.to_string()).collect(),
            ..CaseResult::bare(name, PathBuf::from(name), status)
        }
    }

    fn op(op: &str, version: Option<i64>) -> RequiredOp {
        RequiredOp {
            given: match version {
                Some(v) => format!("{op}-{v}"),
                None => op.to_string(),
            },
            op: op.to_string(),
            version,
        }
    }

    fn messages(g: &Gate) -> Vec<(&'static str, &str)> {
        g.reasons
            .iter()
            .map(|r| (r.kind.id(), r.message.as_str()))
            .collect()
    }

    #[test]
    fn a_run_of_passes_and_skips_passes_unless_skips_are_denied() {
        let cases = [
            case("a", Status::Passed, &["Gather-13"]),
            case("b", Status::Skipped, &["Add"]),
        ];
        let none = Requirements::default();
        assert!(Gate::of(&cases, false, Vec::new(), &none).passed());
        let g = Gate::of(&cases, true, Vec::new(), &none);
        assert_eq!(messages(&g), [("cases", "cases: 1 skipped (--deny-skip)")]);
    }

    #[test]
    fn reasons_come_in_order_cases_expectations_requirements() {
        let mut xpass = case("x", Status::Passed, &["Gather-13"]);
        xpass.expectation = Some(ExpectationNote {
            outcome: ExpectationOutcome::UnexpectedlyPassed,
            entry: "x".into(),
            reason: "r".into(),
            link: None,
            detail: None,
            fails_gate: true,
            line: Some(1),
        });
        let mut xfail = case("y", Status::Failed, &["Gather-13"]);
        xfail.expectation = Some(ExpectationNote {
            outcome: ExpectationOutcome::ExpectedFailure,
            fails_gate: false,
            ..xpass.expectation.clone().unwrap()
        });
        let cases = [
            case("a", Status::Errored, &["GatherND-12"]),
            case("b", Status::Failed, &["Gather-13"]),
            case("c", Status::Failed, &["Gather-13"]),
            case("d", Status::Skipped, &["ScatterND-18"]),
            xpass,
            xfail,
        ];
        let req = Requirements {
            min_cases: Some(6),
            ops: vec![
                op("GatherND", Some(12)),
                op("ScatterND", None),
                op("Gather", Some(11)),
            ],
        };
        let g = Gate::of(&cases, false, vec!["expectations: expired".into()], &req);
        assert_eq!(
            messages(&g),
            [
                ("cases", "cases: 2 failed, 1 errored, 1 passed unexpectedly"),
                ("expectations", "expectations: expired"),
                (
                    "min-cases",
                    "--min-cases 6: only 5 cases ran (skipped cases do not count)"
                ),
                // GatherND-12 ran (errored counts); ScatterND only in a skipped case.
                (
                    "require-op",
                    "--require-op ScatterND: no case ran ScatterND (any version)"
                ),
                (
                    "require-op",
                    "--require-op Gather-11: no case ran Gather-11"
                ),
            ]
        );
        assert!(!g.passed());
        // The last two cases: both ran, both Gather.
        let met = Requirements {
            min_cases: Some(2),
            ops: vec![op("Gather", None)],
        };
        let g = Gate::of(&cases[4..], false, Vec::new(), &met);
        assert_eq!(messages(&g), [("cases", "cases: 1 passed unexpectedly")]);
    }
}
