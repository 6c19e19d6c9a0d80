//! What the expectations file said of a run: the note on each case it applies to, and the
//! report of the file as a whole (which entries matched, what an update wrote).

/// An expectations entry applied to a case.
///
/// ```
/// use onnx_idx_check::{check, CheckOptions};
///
/// // Without an expectations file no case carries a note.
/// let report = check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &CheckOptions::default().filter("^test_gather"))?;
/// assert!(report.cases.iter().all(|c| c.expectation.is_none()));
/// # Ok::<(), onnx_idx_check::CheckError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ExpectationNote {
    /// What the entry made of the case.
    pub outcome: ExpectationOutcome,
    /// The entry's case pattern.
    pub entry: String,
    /// The entry's reason.
    pub reason: String,
    /// The entry's link.
    pub link: Option<String>,
    /// How the case differs from the entry (`different` only).
    pub detail: Option<String>,
    /// Whether this fails the run.
    pub fails_gate: bool,
    /// The line of the entry's `[[expect]]` in the expectations file, from 1.
    pub line: Option<usize>,
}

/// What an expectations entry made of a case it lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExpectationOutcome {
    /// The case fails as the entry says (`XFAIL`).
    ExpectedFailure,
    /// The entry lists the case as failing, and it passed (`XPASS`).
    UnexpectedlyPassed,
    /// The case fails, but not as the entry says.
    Different,
    /// The entry only widens the case's tolerance.
    ToleranceOnly,
    /// The entry's `until` date has passed (`EXPIRED`).
    Expired,
}

impl ExpectationOutcome {
    /// The outcome's name in reports: `expected-failure`, `unexpectedly-passed`, `different`,
    /// `tolerance-only` or `expired`.
    pub fn as_str(self) -> &'static str {
        match self {
            ExpectationOutcome::ExpectedFailure => "expected-failure",
            ExpectationOutcome::UnexpectedlyPassed => "unexpectedly-passed",
            ExpectationOutcome::Different => "different",
            ExpectationOutcome::ToleranceOnly => "tolerance-only",
            ExpectationOutcome::Expired => "expired",
        }
    }
}

/// What `--expectations` found about the file itself.
///
/// ```
/// use onnx_idx_check::{check, CheckOptions};
///
/// // Present only when the run was given an expectations file.
/// let report = check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &CheckOptions::default().filter("^test_gather_0$"))?;
/// assert!(report.expectations.is_none());
/// # Ok::<(), onnx_idx_check::CheckError>(())
/// ```
#[derive(Clone, Debug, serde::Serialize)]
pub struct ExpectationsReport {
    /// The file.
    pub file: String,
    /// Whether `--update-expectations` rewrote it.
    pub updated: bool,
    /// What `--update-expectations` wrote; `None` when it did not rewrite the file.
    pub written: Option<Written>,
    /// Case patterns of entries whose `until` date has passed (each fails the run).
    pub expired: Vec<String>,
    /// Case patterns of entries that matched no case (a warning; an error with
    /// `--strict-expectations`).
    pub unmatched: Vec<String>,
    /// The line in the file of each entry of `expired`, in the same order (not in the JSON
    /// report).
    #[serde(skip)]
    pub expired_lines: Vec<Option<usize>>,
    /// Whether each entry of `expired` fails this run, in the same order: it applies to a case
    /// of the run, or to no case found at all. An entry for cases the selection (`--filter`,
    /// `--shard`) left out fails only a run that runs them (not in the JSON report: the gate
    /// says what failed).
    #[serde(skip)]
    pub expired_fails: Vec<bool>,
    /// The line in the file of each entry of `unmatched`, in the same order (not in the JSON
    /// report).
    #[serde(skip)]
    pub unmatched_lines: Vec<Option<usize>>,
    /// Why each entry of `unmatched` applies to no case, in the same order (not in the JSON
    /// report: the gate's message says it under `--strict-expectations`).
    #[serde(skip)]
    pub unmatched_why: Vec<NoMatch>,
    /// Whether `--strict-expectations` makes unmatched entries fail the run (not in the JSON
    /// report: the gate says what failed).
    #[serde(skip)]
    pub strict: bool,
}

/// What `--update-expectations` wrote: the entries, and how they differ from the old file's.
///
/// ```
/// use onnx_idx_check::verdict::Written;
///
/// let w = Written { entries: 3, added: 1, removed: 2, changed: 1, expired: 0 };
/// assert_eq!(w.to_string(), "1 added, 2 removed, 1 changed");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Written {
    /// Entries in the rewritten file.
    pub entries: usize,
    /// New entries: cases no entry covered, and a glob's cases given their own entries.
    pub added: usize,
    /// Entries of the old file that are gone: their cases pass, or they match no case.
    pub removed: usize,
    /// Entries kept with a new status, failure signature or tolerance-only form.
    pub changed: usize,
    /// Entries kept although their `until` date has passed: they still fail the runs of their
    /// cases until the date is renewed or the entry removed.
    pub expired: usize,
}

/// Why an expectations entry applies to no case of the run: no name matches its case pattern,
/// or some do but its `opset` range admits none of them.
///
/// ```
/// use onnx_idx_check::verdict::NoMatch;
///
/// assert_eq!(NoMatch::default().to_string(), "matches no case");
/// let opset = NoMatch { by_name: 1, opsets: vec![Some(13)], range: (Some(11), Some(12)) };
/// assert_eq!(
///     opset.to_string(),
///     "matches 1 case by name, but its opset range 11-12 admits none of them (opset 13)"
/// );
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NoMatch {
    /// The cases of the run whose name the entry's pattern matches.
    pub by_name: usize,
    /// Their `ai.onnx` opsets, distinct and ascending (`None` for a case that imports none).
    pub opsets: Vec<Option<i64>>,
    /// The entry's opset range (min, max), inclusive, each bound optional.
    pub range: (Option<i64>, Option<i64>),
}

impl std::fmt::Display for NoMatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.by_name == 0 {
            return write!(f, "matches no case");
        }
        let range = match self.range {
            (Some(a), Some(b)) if a == b => format!("{a}"),
            (Some(a), Some(b)) => format!("{a}-{b}"),
            (Some(a), None) => format!("{a} and later"),
            (None, Some(b)) => format!("up to {b}"),
            (None, None) => "(any)".to_string(),
        };
        let opsets: Vec<String> = self
            .opsets
            .iter()
            .map(|o| o.map_or("none".to_string(), |v| v.to_string()))
            .collect();
        write!(
            f,
            "matches {} by name, but its opset range {range} admits none of them ({} {})",
            crate::report::counted(self.by_name, "case", "cases"),
            if opsets.len() == 1 { "opset" } else { "opsets" },
            opsets.join(", ")
        )
    }
}

impl std::fmt::Display for Written {
    /// `3 added, 1 removed, 0 changed, 1 expired kept` (the expired part only when there are).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} added, {} removed, {} changed",
            self.added, self.removed, self.changed
        )?;
        if self.expired > 0 {
            write!(f, ", {} expired kept", self.expired)?;
        }
        Ok(())
    }
}
