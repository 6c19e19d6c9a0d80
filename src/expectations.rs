//! Expectations files: the known failures of a run, ratcheted (`run --expectations FILE`).
//!
//! A CI pipeline lists the cases it knows to fail, error or be skipped, each with a reason. A
//! listed case that still ends as listed does not fail the gate; one that passes now, or ends
//! differently, does, so the list can only shrink. Entries may carry an expiry date, an opset
//! range and per-case tolerances; an entry without `status` only overrides tolerances.
//!
//! ```toml
//! # onnx-idx-check expectations: known failures, ratcheted
//! [[expect]]
//! case = "onnx-node/test_scatternd_*"   # a case name or a glob (`*` does not cross `/`, `**` does)
//! status = "failed"                     # failed | errored | skipped; omit it for a tolerance-only entry
//! reason = "tract#1234: ScatterND add not implemented"   # required, non-empty
//! link = "https://github.com/sonos/tract/issues/1234"    # optional
//! until = 2027-03-31                    # optional TOML date (or "2027-03-31"): after it the entry fails the run
//! opset = { min = 13, max = 17 }        # optional: only cases whose ai.onnx opset is in range (both bounds optional, inclusive)
//! rtol = 1e-2                           # optional per-case tolerance override
//! atol = 1e-5
//! mismatches = 3                        # optional failure signature (status = "failed" only)
//! first_mismatch = [1, 0]               # optional: coordinates of the first mismatched element
//!
//! [[expect]]                            # a tolerance-only entry: no status, the verdict stands
//! case = "spec-examples/**"
//! reason = "float16 reductions round differently in our runtime"
//! rtol = 5e-3
//! ```
//!
//! Fields:
//!
//! - `case` (required): a case name (the path relative to the `run` argument, with `/`), or a
//!   glob: `*`, `?`, `[abc]`, `{a,b}`; `*` does not cross `/`, `**` as a whole path component
//!   does (`onnx-node/**`, `**/test_gather_*`); `\` escapes the next character.
//! - `status`: `failed`, `errored` or `skipped` (`passed` is not an expectation: delete the entry).
//!   Without it the entry only overrides tolerances.
//! - `reason` (required, non-empty) and `link`: for people; reports show them.
//! - `until`: the last day (UTC) the entry is valid; from the next day on the run fails until the
//!   entry is renewed or removed.
//! - `opset`: the entry applies only to cases whose `ai.onnx` opset import lies in `[min, max]`
//!   (a bound left out is open). A case without an `ai.onnx` import is outside any range that has
//!   a bound.
//! - `rtol`, `atol`: finite numbers >= 0 replacing `--rtol` / `--atol` for the matching cases.
//! - `mismatches`, `first_mismatch`: the failure signature of a `failed` case, from its first
//!   failed data set's first failed output: the number of differing elements and the coordinates
//!   of the first one (a dtype or shape difference has 0 mismatches and no coordinates). Each is
//!   compared only when present.
//!
//! Which entry applies to a case: among the entries whose pattern matches the case's name and
//! whose opset range admits it, an entry with a `status` wins over tolerance-only entries, an
//! exact name wins over a glob, and otherwise the first in the file wins. Each of `rtol` and
//! `atol` comes from the first matching entry (exact names first, then file order) that sets it.
//!
//! `run --update-expectations` rewrites the file with [`Expectations::update`]: entries sorted by
//! pattern, reasons, links, dates, opset ranges and tolerances kept, new non-passing cases added
//! with `reason = "TODO"`, entries of cases that pass now removed. Comments are not kept.

use crate::compare::Tolerance;
use crate::verdict::{CaseResult, Status};
use globset::{GlobBuilder, GlobMatcher};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::{self, Write as _};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::{SystemTime, UNIX_EPOCH};
use thiserror::Error;
use toml::{Spanned, Value};

/// The fields an entry may have, in the order [`Expectations::update`] writes them.
pub const FIELDS: [&str; 10] = [
    "case",
    "status",
    "reason",
    "link",
    "until",
    "opset",
    "rtol",
    "atol",
    "mismatches",
    "first_mismatch",
];

/// A calendar date (proleptic Gregorian), as in `until`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug, Hash)]
pub struct Date {
    /// The year.
    pub year: i32,
    /// The month, 1 to 12.
    pub month: u32,
    /// The day of the month, from 1.
    pub day: u32,
}

/// A string that is not a valid `YYYY-MM-DD` date.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("'{0}' is not a valid date (YYYY-MM-DD)")]
pub struct DateError(pub String);

impl Date {
    /// The date, if it exists (`Date::new(2027, 2, 29)` does not).
    pub fn new(year: i32, month: u32, day: u32) -> Option<Date> {
        let valid = (1..=12).contains(&month) && day >= 1 && day <= days_in_month(year, month);
        valid.then_some(Date { year, month, day })
    }

    /// Today in UTC, from the system clock.
    pub fn today() -> Date {
        let secs = match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(d) => i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
            // A clock before 1970: count backwards.
            Err(e) => i64::try_from(e.duration().as_secs()).map_or(i64::MIN, |s| -s - 1),
        };
        Date::from_unix_days(secs.div_euclid(86_400))
    }

    /// The date `days` days after 1970-01-01 (before it when negative), by Howard Hinnant's
    /// civil-from-days algorithm.
    pub fn from_unix_days(days: i64) -> Date {
        let z = i128::from(days) + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097; // [0, 146096]
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
        let mp = (5 * doy + 2) / 153; // [0, 11], March first
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = yoe + era * 400 + i128::from(month <= 2);
        Date {
            year: year.clamp(i128::from(i32::MIN), i128::from(i32::MAX)) as i32,
            month: month as u32,
            day: day as u32,
        }
    }
}

fn days_in_month(year: i32, month: u32) -> u32 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        _ => 31,
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

impl FromStr for Date {
    type Err = DateError;

    /// Parses exactly `YYYY-MM-DD`.
    fn from_str(s: &str) -> Result<Date, DateError> {
        let err = || DateError(s.to_string());
        let b = s.as_bytes();
        let shape_ok = b.len() == 10
            && b[4] == b'-'
            && b[7] == b'-'
            && b.iter()
                .enumerate()
                .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
        if !shape_ok {
            return Err(err());
        }
        let year = s[0..4].parse().map_err(|_| err())?;
        let month = s[5..7].parse().map_err(|_| err())?;
        let day = s[8..10].parse().map_err(|_| err())?;
        Date::new(year, month, day).ok_or_else(err)
    }
}

/// An opset range: (min, max), inclusive, each bound optional.
pub type OpsetRange = (Option<i64>, Option<i64>);

/// One `[[expect]]` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// A case name or a glob.
    pub case: String,
    /// The expected verdict (never [`Status::Passed`]); `None` for a tolerance-only entry.
    pub status: Option<Status>,
    /// Why the case does not pass.
    pub reason: String,
    /// An issue or a discussion.
    pub link: Option<String>,
    /// The last day the entry is valid.
    pub until: Option<Date>,
    /// The admitted `ai.onnx` opsets.
    pub opset: Option<OpsetRange>,
    /// Relative tolerance override.
    pub rtol: Option<f64>,
    /// Absolute tolerance override.
    pub atol: Option<f64>,
    /// Expected number of mismatches of the failure signature.
    pub mismatches: Option<usize>,
    /// Expected coordinates of the first mismatch of the failure signature.
    pub first_mismatch: Option<Vec<usize>>,
}

impl Entry {
    /// Whether `case` is a plain name (possibly with escaped glob characters) rather than a glob.
    pub fn is_exact(&self) -> bool {
        literal(&self.case).is_some()
    }

    /// Whether the entry's opset range admits a case whose `ai.onnx` opset is `opset`.
    pub fn admits_opset(&self, opset: Option<i64>) -> bool {
        match self.opset {
            None | Some((None, None)) => true,
            Some((min, max)) => {
                opset.is_some_and(|v| min.is_none_or(|m| v >= m) && max.is_none_or(|m| v <= m))
            }
        }
    }

    /// Whether a failure signature agrees with the entry's signature fields (absent fields agree
    /// with anything).
    pub fn signature_matches(&self, sig: &Signature) -> bool {
        self.mismatches.is_none_or(|m| m == sig.mismatches)
            && self
                .first_mismatch
                .as_ref()
                .is_none_or(|f| Some(f) == sig.first_mismatch.as_ref())
    }

    fn has_tolerance(&self) -> bool {
        self.rtol.is_some() || self.atol.is_some()
    }

    /// The entry turned into a tolerance-only one.
    fn tolerance_only(mut self) -> Entry {
        self.status = None;
        self.mismatches = None;
        self.first_mismatch = None;
        self
    }

    /// What the entry expects, for messages: `failed with 3 mismatches first at [1,0]`.
    fn expected_text(&self) -> String {
        let mut s = self.status.map_or("-", Status::as_str).to_string();
        match (&self.mismatches, &self.first_mismatch) {
            (Some(n), Some(at)) => {
                let _ = write!(s, " with {} first at {}", plural(*n), coords(at));
            }
            (Some(n), None) => {
                let _ = write!(s, " with {}", plural(*n));
            }
            (None, Some(at)) => {
                let _ = write!(s, " with the first mismatch at {}", coords(at));
            }
            (None, None) => {}
        }
        s
    }
}

/// The failure signature of a failed case: its first failed data set's first failed output.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Signature {
    /// Differing elements (0 when the dtype or shape differs).
    pub mismatches: usize,
    /// Coordinates of the first differing element.
    pub first_mismatch: Option<Vec<usize>>,
}

impl Signature {
    /// The signature of a failed case; `None` for any other verdict. A failed case without a
    /// failed output has the signature of a dtype/shape difference: 0 mismatches, no coordinates.
    pub fn of(result: &CaseResult) -> Option<Signature> {
        if result.status != Status::Failed {
            return None;
        }
        let output = result
            .data_sets
            .iter()
            .find(|d| d.status == Status::Failed)
            .and_then(|d| d.outputs.iter().find(|o| o.status == Status::Failed));
        Some(output.map_or_else(Signature::default, |o| Signature {
            mismatches: o.mismatches,
            first_mismatch: o.first_mismatches.first().map(|m| m.index.clone()),
        }))
    }
}

impl fmt::Display for Signature {
    /// `5 mismatches first at [0,2]`, or `0 mismatches (dtype or shape differs)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.first_mismatch {
            Some(at) => write!(f, "{} first at {}", plural(self.mismatches), coords(at)),
            None if self.mismatches == 0 => write!(f, "0 mismatches (dtype or shape differs)"),
            None => write!(f, "{}", plural(self.mismatches)),
        }
    }
}

fn plural(n: usize) -> String {
    if n == 1 {
        "1 mismatch".to_string()
    } else {
        format!("{n} mismatches")
    }
}

/// `[1,0]`, as reports print coordinates.
fn coords(index: &[usize]) -> String {
    let parts: Vec<String> = index.iter().map(usize::to_string).collect();
    format!("[{}]", parts.join(","))
}

/// What went wrong with one field of an entry.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum Problem {
    /// A required field is absent.
    #[error("missing (it is required)")]
    Missing,
    /// A field that entries do not have.
    #[error("unknown field (expected one of case, status, reason, link, until, opset, rtol, atol, mismatches, first_mismatch)")]
    Unknown,
    /// A value of the wrong TOML type.
    #[error("expected {expected}, found {found}")]
    Type {
        /// What the field takes.
        expected: &'static str,
        /// The TOML type found.
        found: &'static str,
    },
    /// An empty string where text is required.
    #[error("must not be empty")]
    Empty,
    /// `status = "passed"`.
    #[error("'passed' is not an expectation: delete the entry, or omit `status` for a tolerance-only entry")]
    Passed,
    /// A status other than failed, errored or skipped.
    #[error("'{0}' is not a status (failed, errored or skipped)")]
    Status(String),
    /// A string that is not a date.
    #[error(transparent)]
    Date(#[from] DateError),
    /// A TOML date-time with a time or an offset.
    #[error("'{0}' has a time or an offset; expected a plain date (YYYY-MM-DD)")]
    DateTime(String),
    /// A pattern globset rejects.
    #[error("invalid glob: {0}")]
    Glob(String),
    /// A negative or non-finite tolerance.
    #[error("must be a finite number >= 0, got {0}")]
    Tolerance(f64),
    /// A negative count or coordinate.
    #[error("must be >= 0, got {0}")]
    Negative(i64),
    /// An opset range whose minimum exceeds its maximum.
    #[error("min {min} is greater than max {max}")]
    OpsetRange {
        /// The lower bound.
        min: i64,
        /// The upper bound.
        max: i64,
    },
    /// A signature field on an entry whose status is not `failed`.
    #[error("only allowed with status = \"failed\"")]
    NeedsFailed,
}

/// An expectations file that cannot be used.
#[derive(Debug, Error)]
pub enum ExpectationsError {
    /// The file cannot be read (a missing file included).
    #[error("{}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Not TOML, or not a list of `[[expect]]` tables (an unknown top-level key, say). The
    /// message gives the line and column.
    #[error("{}: {source}", path.display())]
    Toml {
        /// The file.
        path: PathBuf,
        /// The parser's error.
        source: toml::de::Error,
    },
    /// An invalid field of an entry.
    #[error("{}: entry {entry} (line {line}): `{field}`: {problem}", path.display())]
    Entry {
        /// The file.
        path: PathBuf,
        /// The entry's number, from 1, in file order.
        entry: usize,
        /// The line of the field (of the entry, for a missing field), from 1.
        line: usize,
        /// The field (`opset.min` inside `opset`).
        field: String,
        /// What is wrong with it.
        problem: Problem,
    },
}

/// How an entry matches case names.
#[derive(Clone, Debug)]
enum Matcher {
    /// A plain name (escapes resolved).
    Exact(String),
    /// A compiled glob.
    Glob(GlobMatcher),
}

impl Matcher {
    fn new(pattern: &str) -> Result<Matcher, globset::Error> {
        if let Some(name) = literal(pattern) {
            return Ok(Matcher::Exact(name));
        }
        let glob = GlobBuilder::new(pattern)
            .literal_separator(true)
            .backslash_escape(true)
            .build()?;
        Ok(Matcher::Glob(glob.compile_matcher()))
    }

    fn is_match(&self, name: &str) -> bool {
        match self {
            Matcher::Exact(n) => n == name,
            Matcher::Glob(g) => g.is_match(name),
        }
    }

    fn is_exact(&self) -> bool {
        matches!(self, Matcher::Exact(_))
    }
}

/// The name a pattern matches when it matches exactly one: no glob syntax other than escapes
/// (`\*`) and one-character classes (`[*]`, as [`globset::escape`] writes them).
fn literal(pattern: &str) -> Option<String> {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push(chars.next()?),
            '[' => {
                let inner = chars.next()?;
                if matches!(inner, '!' | '^' | '\\') || chars.next()? != ']' {
                    return None;
                }
                out.push(inner);
            }
            '*' | '?' | ']' | '{' | '}' => return None,
            c => out.push(c),
        }
    }
    Some(out)
}

/// A pattern that matches exactly `name`.
fn escape(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '*' | '?' | '[' | ']' | '{' | '}' => {
                out.push('[');
                out.push(c);
                out.push(']');
            }
            c => out.push(c),
        }
    }
    out
}

/// The `ai.onnx` opset import of a case.
fn ai_onnx(result: &CaseResult) -> Option<i64> {
    result.opset.get("ai.onnx").copied()
}

/// A loaded expectations file.
#[derive(Clone, Debug)]
pub struct Expectations {
    path: PathBuf,
    entries: Vec<Entry>,
    matchers: Vec<Matcher>,
}

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
}

impl Outcome {
    /// Whether this outcome fails the gate by itself.
    pub fn fails_gate(&self) -> bool {
        matches!(self, Outcome::UnexpectedlyPassed | Outcome::Different(_))
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::ExpectedFailure => f.write_str("expected failure"),
            Outcome::UnexpectedlyPassed => f.write_str("passed, but is listed as not passing"),
            Outcome::Different(how) => f.write_str(how),
            Outcome::ToleranceOnly => f.write_str("tolerance override"),
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

type Fields = BTreeMap<String, Spanned<Value>>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    expect: Vec<Spanned<Fields>>,
}

/// Where an entry is, for errors.
struct Ctx<'a> {
    path: &'a Path,
    text: &'a str,
    entry: usize,
    line: usize,
}

fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

impl Ctx<'_> {
    fn err(&self, field: &str, span: Option<Range<usize>>, problem: Problem) -> ExpectationsError {
        ExpectationsError::Entry {
            path: self.path.to_owned(),
            entry: self.entry,
            line: span.map_or(self.line, |s| line_of(self.text, s.start)),
            field: field.to_string(),
            problem,
        }
    }

    fn type_err(
        &self,
        field: &str,
        v: &Spanned<Value>,
        expected: &'static str,
    ) -> ExpectationsError {
        let found = v.get_ref().type_str();
        self.err(field, Some(v.span()), Problem::Type { expected, found })
    }

    fn string(&self, f: &Fields, key: &str) -> Result<Option<String>, ExpectationsError> {
        let Some(v) = f.get(key) else { return Ok(None) };
        match v.get_ref() {
            Value::String(s) if s.trim().is_empty() => {
                Err(self.err(key, Some(v.span()), Problem::Empty))
            }
            Value::String(s) => Ok(Some(s.clone())),
            _ => Err(self.type_err(key, v, "a string")),
        }
    }

    fn required_string(&self, f: &Fields, key: &str) -> Result<String, ExpectationsError> {
        self.string(f, key)?
            .ok_or_else(|| self.err(key, None, Problem::Missing))
    }

    fn tolerance(&self, f: &Fields, key: &str) -> Result<Option<f64>, ExpectationsError> {
        let Some(v) = f.get(key) else { return Ok(None) };
        let x = match *v.get_ref() {
            Value::Float(x) => x,
            Value::Integer(n) => n as f64,
            _ => return Err(self.type_err(key, v, "a number")),
        };
        if !x.is_finite() || x < 0.0 {
            return Err(self.err(key, Some(v.span()), Problem::Tolerance(x)));
        }
        Ok(Some(x))
    }

    fn count(&self, key: &str, v: &Value, span: Range<usize>) -> Result<usize, ExpectationsError> {
        match *v {
            Value::Integer(n) => {
                usize::try_from(n).map_err(|_| self.err(key, Some(span), Problem::Negative(n)))
            }
            _ => Err(self.err(
                key,
                Some(span),
                Problem::Type {
                    expected: "a non-negative integer",
                    found: v.type_str(),
                },
            )),
        }
    }

    fn until(&self, f: &Fields) -> Result<Option<Date>, ExpectationsError> {
        let Some(v) = f.get("until") else {
            return Ok(None);
        };
        let err = |p: Problem| self.err("until", Some(v.span()), p);
        match v.get_ref() {
            Value::Datetime(dt) => match (dt.date, dt.time, dt.offset) {
                (Some(d), None, None) => Date::new(i32::from(d.year), d.month.into(), d.day.into())
                    .map(Some)
                    .ok_or_else(|| err(Problem::Date(DateError(dt.to_string())))),
                _ => Err(err(Problem::DateTime(dt.to_string()))),
            },
            Value::String(s) => s.parse().map(Some).map_err(|e| err(Problem::Date(e))),
            _ => Err(self.type_err("until", v, "a date (YYYY-MM-DD)")),
        }
    }

    fn opset(&self, f: &Fields) -> Result<Option<OpsetRange>, ExpectationsError> {
        let Some(v) = f.get("opset") else {
            return Ok(None);
        };
        let Value::Table(t) = v.get_ref() else {
            return Err(self.type_err("opset", v, "a table like { min = 13, max = 17 }"));
        };
        let bound = |key: &str| -> Result<Option<i64>, ExpectationsError> {
            match t.get(key) {
                None => Ok(None),
                Some(Value::Integer(n)) => Ok(Some(*n)),
                Some(other) => Err(self.err(
                    &format!("opset.{key}"),
                    Some(v.span()),
                    Problem::Type {
                        expected: "an integer",
                        found: other.type_str(),
                    },
                )),
            }
        };
        let (min, max) = (bound("min")?, bound("max")?);
        if let Some(key) = t.keys().find(|k| *k != "min" && *k != "max") {
            return Err(self.err(&format!("opset.{key}"), Some(v.span()), Problem::Unknown));
        }
        if let (Some(min), Some(max)) = (min, max) {
            if min > max {
                return Err(self.err("opset", Some(v.span()), Problem::OpsetRange { min, max }));
            }
        }
        Ok(Some((min, max)))
    }

    fn entry(&self, f: &Fields) -> Result<(Entry, Matcher), ExpectationsError> {
        if let Some((key, v)) = f.iter().find(|(k, _)| !FIELDS.contains(&k.as_str())) {
            return Err(self.err(key, Some(v.span()), Problem::Unknown));
        }
        let case = self.required_string(f, "case")?;
        let matcher = Matcher::new(&case).map_err(|e| {
            let span = f.get("case").map(Spanned::span);
            self.err("case", span, Problem::Glob(e.kind().to_string()))
        })?;
        let status = match self.string(f, "status")? {
            None => None,
            Some(s) => Some(match s.as_str() {
                "failed" => Status::Failed,
                "errored" => Status::Errored,
                "skipped" => Status::Skipped,
                _ => {
                    let span = f.get("status").map(Spanned::span);
                    let problem = if s == "passed" {
                        Problem::Passed
                    } else {
                        Problem::Status(s)
                    };
                    return Err(self.err("status", span, problem));
                }
            }),
        };
        let mismatches = match f.get("mismatches") {
            None => None,
            Some(v) => Some(self.count("mismatches", v.get_ref(), v.span())?),
        };
        let first_mismatch = match f.get("first_mismatch") {
            None => None,
            Some(v) => {
                let Value::Array(items) = v.get_ref() else {
                    return Err(self.type_err("first_mismatch", v, "an array of integers"));
                };
                let coords = items
                    .iter()
                    .map(|x| self.count("first_mismatch", x, v.span()))
                    .collect::<Result<Vec<_>, _>>()?;
                Some(coords)
            }
        };
        for key in ["mismatches", "first_mismatch"] {
            if let Some(v) = f.get(key) {
                if status != Some(Status::Failed) {
                    return Err(self.err(key, Some(v.span()), Problem::NeedsFailed));
                }
            }
        }
        let entry = Entry {
            case,
            status,
            reason: self.required_string(f, "reason")?,
            link: self.string(f, "link")?,
            until: self.until(f)?,
            opset: self.opset(f)?,
            rtol: self.tolerance(f, "rtol")?,
            atol: self.tolerance(f, "atol")?,
            mismatches,
            first_mismatch,
        };
        Ok((entry, matcher))
    }
}

impl Expectations {
    /// Reads and validates a file. A missing file is an error; an empty one has no entries.
    pub fn load(path: &Path) -> Result<Expectations, ExpectationsError> {
        let text = std::fs::read_to_string(path).map_err(|source| ExpectationsError::Read {
            path: path.to_owned(),
            source,
        })?;
        Expectations::parse(&text, path)
    }

    /// Validates the text of a file; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Expectations, ExpectationsError> {
        let raw: RawFile = toml::from_str(text).map_err(|source| ExpectationsError::Toml {
            path: path.to_owned(),
            source,
        })?;
        let mut entries = Vec::with_capacity(raw.expect.len());
        let mut matchers = Vec::with_capacity(raw.expect.len());
        for (i, table) in raw.expect.iter().enumerate() {
            let ctx = Ctx {
                path,
                text,
                entry: i + 1,
                line: line_of(text, table.span().start),
            };
            let (entry, matcher) = ctx.entry(table.get_ref())?;
            entries.push(entry);
            matchers.push(matcher);
        }
        Ok(Expectations {
            path: path.to_owned(),
            entries,
            matchers,
        })
    }

    /// The file the expectations came from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The entries, in file order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Whether entry `i` applies to a case: its pattern matches the name and its opset range
    /// admits the case's `ai.onnx` opset.
    /// Whether entry `i`'s case pattern matches `case_name` (opset range aside).
    pub fn pattern_matches(&self, i: usize, case_name: &str) -> bool {
        self.matchers.get(i).is_some_and(|m| m.is_match(case_name))
    }

    fn matches(&self, i: usize, case_name: &str, opset: Option<i64>) -> bool {
        self.matchers[i].is_match(case_name) && self.entries[i].admits_opset(opset)
    }

    /// Entry indices by precedence: exact names in file order, then globs in file order.
    fn by_precedence(&self) -> impl Iterator<Item = usize> + '_ {
        let exact = (0..self.entries.len()).filter(|&i| self.matchers[i].is_exact());
        let globs = (0..self.entries.len()).filter(|&i| !self.matchers[i].is_exact());
        exact.chain(globs)
    }

    /// The entry with a status that applies to a case, by precedence.
    fn status_entry(&self, case_name: &str, opset: Option<i64>) -> Option<usize> {
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
                Some(CaseJudgement {
                    entry,
                    outcome: outcome(&self.entries[entry], r),
                })
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

    /// The file rewritten to the current results (`--update-expectations`), sorted by pattern:
    ///
    /// - an entry with a status that still applies to non-passing cases keeps its pattern,
    ///   reason, link, until, opset and tolerances; its status becomes theirs. When they
    ///   disagree, the entry keeps its status if some still have it (else the most common one)
    ///   and the others get exact-name entries with `reason = "TODO"`. An exact-name entry of a
    ///   failed case gets the current signature; a glob keeps its signature fields only while
    ///   all its failed cases agree with them.
    /// - a glob with a status that applies to a case that passes now is replaced by exact-name
    ///   entries (same reason, link, until and opset) for its non-passing cases;
    /// - an entry with a status that no longer applies to a non-passing case (its cases pass, or
    ///   other entries take precedence) is dropped, or kept as a tolerance-only entry when it
    ///   sets `rtol` or `atol`;
    /// - tolerance-only entries, and entries that match no case of the run (a filtered run, a
    ///   renamed case), are kept as they are;
    /// - every non-passing case no entry covers gets an exact-name entry with its status,
    ///   `reason = "TODO"` and, when failed, its signature.
    ///
    /// Judging the same results with the written file yields no gate failure but expired
    /// entries.
    pub fn update(&self, results: &[CaseResult]) -> String {
        // Work in the written order, so precedence among globs is that of the output.
        let mut order: Vec<usize> = (0..self.entries.len()).collect();
        order.sort_by(|&a, &b| self.entries[a].case.cmp(&self.entries[b].case));
        let mut work = Expectations {
            path: self.path.clone(),
            entries: order.iter().map(|&i| self.entries[i].clone()).collect(),
            matchers: order.iter().map(|&i| self.matchers[i].clone()).collect(),
        };
        let owners = |work: &Expectations| -> Vec<Option<usize>> {
            results
                .iter()
                .map(|r| work.status_entry(&r.name, ai_onnx(r)))
                .collect()
        };

        // Until no entry with a status applies to a passing case: narrow or drop those entries.
        loop {
            let own = owners(&work);
            let offending: BTreeSet<usize> = own
                .iter()
                .zip(results)
                .filter(|(_, r)| r.status == Status::Passed)
                .filter_map(|(o, _)| *o)
                .collect();
            if offending.is_empty() {
                break;
            }
            let mut next = Vec::new();
            let entries = std::mem::take(&mut work.entries);
            let matchers = std::mem::take(&mut work.matchers);
            for (i, (e, m)) in entries.into_iter().zip(matchers).enumerate() {
                if !offending.contains(&i) {
                    next.push((e, m));
                    continue;
                }
                if !m.is_exact() {
                    for (r, _) in results
                        .iter()
                        .zip(&own)
                        .filter(|(r, o)| **o == Some(i) && r.status != Status::Passed)
                    {
                        let mut narrow = exact_entry(r, e.reason.clone());
                        narrow.link.clone_from(&e.link);
                        narrow.until = e.until;
                        narrow.opset = e.opset;
                        next.push((narrow, Matcher::Exact(r.name.clone())));
                    }
                }
                if e.has_tolerance() {
                    next.push((e.tolerance_only(), m));
                }
            }
            (work.entries, work.matchers) = next.into_iter().unzip();
        }

        // Every entry with a status now applies only to non-passing cases.
        let own = owners(&work);
        let matched: Vec<bool> = (0..work.entries.len())
            .map(|i| results.iter().any(|r| work.matches(i, &r.name, ai_onnx(r))))
            .collect();
        let mut out: Vec<Entry> = Vec::new();
        for (i, mut e) in std::mem::take(&mut work.entries).into_iter().enumerate() {
            if e.status.is_none() {
                out.push(e);
                continue;
            }
            let owned: Vec<&CaseResult> = results
                .iter()
                .zip(&own)
                .filter(|(_, o)| **o == Some(i))
                .map(|(r, _)| r)
                .collect();
            if owned.is_empty() {
                if !matched[i] {
                    out.push(e); // not in this run
                } else if e.has_tolerance() {
                    out.push(e.tolerance_only()); // shadowed, but its tolerances still apply
                }
                continue;
            }
            if work.matchers[i].is_exact() {
                let r = owned[0];
                e.status = Some(r.status);
                let sig = Signature::of(r);
                e.mismatches = sig.as_ref().map(|s| s.mismatches);
                e.first_mismatch = sig.and_then(|s| s.first_mismatch);
                out.push(e);
                continue;
            }
            let status = choose_status(e.status, &owned);
            let keep_signature = status == Status::Failed
                && owned
                    .iter()
                    .filter(|r| r.status == status)
                    .all(|r| Signature::of(r).is_some_and(|s| e.signature_matches(&s)));
            if !keep_signature {
                e.mismatches = None;
                e.first_mismatch = None;
            }
            e.status = Some(status);
            out.push(e);
            for r in owned.iter().filter(|r| r.status != status) {
                out.push(exact_entry(r, "TODO".to_string()));
            }
        }
        let mut added = BTreeSet::new();
        for (r, o) in results.iter().zip(&own) {
            if o.is_none() && r.status != Status::Passed && added.insert(r.name.as_str()) {
                out.push(exact_entry(r, "TODO".to_string()));
            }
        }
        out.sort_by(|a, b| a.case.cmp(&b.case));
        render(&out)
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

/// A new exact-name entry for a non-passing case, with its status and signature.
fn exact_entry(r: &CaseResult, reason: String) -> Entry {
    let sig = Signature::of(r);
    Entry {
        case: escape(&r.name),
        status: Some(r.status),
        reason,
        link: None,
        until: None,
        opset: None,
        rtol: None,
        atol: None,
        mismatches: sig.as_ref().map(|s| s.mismatches),
        first_mismatch: sig.and_then(|s| s.first_mismatch),
    }
}

/// The status a glob keeps: its own if some of its cases still have it, else the most common
/// (ties to failed, then errored).
fn choose_status(current: Option<Status>, cases: &[&CaseResult]) -> Status {
    if let Some(s) = current.filter(|s| cases.iter().any(|r| r.status == *s)) {
        return s;
    }
    let mut counts: BTreeMap<Status, usize> = BTreeMap::new();
    for r in cases {
        *counts.entry(r.status).or_default() += 1;
    }
    counts
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
        .map_or(Status::Failed, |(s, _)| s)
}

/// A TOML basic string.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The file text for `entries`, in their order.
fn render(entries: &[Entry]) -> String {
    let mut s = String::from(
        "# onnx-idx-check expectations: known failures, ratcheted.\n\
         # Written by `onnx-idx-check run --update-expectations`: entries sorted by case pattern,\n\
         # comments not kept. Fill in every reason = \"TODO\" (an issue, a missing feature) before\n\
         # committing.\n",
    );
    for e in entries {
        s.push_str("\n[[expect]]\n");
        let _ = writeln!(s, "case = {}", quote(&e.case));
        if let Some(status) = e.status {
            let _ = writeln!(s, "status = {}", quote(status.as_str()));
        }
        let _ = writeln!(s, "reason = {}", quote(&e.reason));
        if let Some(link) = &e.link {
            let _ = writeln!(s, "link = {}", quote(link));
        }
        if let Some(until) = e.until {
            let _ = writeln!(s, "until = {until}");
        }
        if let Some((min, max)) = e.opset {
            let bounds: Vec<String> = [("min", min), ("max", max)]
                .into_iter()
                .filter_map(|(k, v)| v.map(|v| format!("{k} = {v}")))
                .collect();
            if bounds.is_empty() {
                s.push_str("opset = {}\n");
            } else {
                let _ = writeln!(s, "opset = {{ {} }}", bounds.join(", "));
            }
        }
        // `{:?}` is the shortest representation that reads back exactly, and valid TOML.
        if let Some(rtol) = e.rtol {
            let _ = writeln!(s, "rtol = {rtol:?}");
        }
        if let Some(atol) = e.atol {
            let _ = writeln!(s, "atol = {atol:?}");
        }
        if let Some(n) = e.mismatches {
            let _ = writeln!(s, "mismatches = {n}");
        }
        if let Some(at) = &e.first_mismatch {
            let parts: Vec<String> = at.iter().map(usize::to_string).collect();
            let _ = writeln!(s, "first_mismatch = [{}]", parts.join(", "));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{Mismatch, Mode};
    use crate::tensor::DType;
    use crate::verdict::{DataSetResult, OutputResult};
    use proptest::prelude::*;
    use std::time::Duration;

    const FULL: &str = r#"# onnx-idx-check expectations: known failures, ratcheted
[[expect]]
case = "onnx-node/test_scatternd_*"
status = "failed"
reason = "tract#1234: ScatterND add not implemented"
link = "https://github.com/sonos/tract/issues/1234"
until = 2027-03-31
opset = { min = 13, max = 17 }
rtol = 1e-2
atol = 1e-5
mismatches = 3
first_mismatch = [1, 0]

[[expect]]
case = "spec-examples/**"
reason = "float16 reductions"
until = "2026-12-31"
opset = { max = 16 }
rtol = 0
"#;

    fn parse(text: &str) -> Expectations {
        Expectations::parse(text, Path::new("exp.toml")).unwrap()
    }

    /// The entry number, line, field and problem of an entry error.
    fn entry_error(text: &str) -> (usize, usize, String, Problem) {
        match Expectations::parse(text, Path::new("exp.toml")) {
            Err(ExpectationsError::Entry {
                entry,
                line,
                field,
                problem,
                ..
            }) => (entry, line, field, problem),
            other => panic!("expected an entry error, got {other:?}"),
        }
    }

    fn problem(text: &str) -> Problem {
        entry_error(text).3
    }

    fn date(s: &str) -> Date {
        s.parse().unwrap()
    }

    fn output(
        name: &str,
        failed: bool,
        mismatches: usize,
        first: Option<Vec<usize>>,
    ) -> OutputResult {
        OutputResult {
            name: name.to_string(),
            status: if failed {
                Status::Failed
            } else {
                Status::Passed
            },
            reason: failed.then(|| "differs".to_string()),
            dtype: DType::Float,
            actual_dtype: DType::Float,
            expected_shape: Some(vec![3, 2]),
            actual_shape: vec![3, 2],
            mismatches,
            max_abs_diff: None,
            max_rel_diff: None,
            first_mismatches: first
                .into_iter()
                .map(|index| Mismatch {
                    index,
                    expected: "1.0".to_string(),
                    actual: "2.0".to_string(),
                    source: None,
                    flat: 0,
                })
                .collect(),
            tolerant: false,
            diagnoses: Vec::new(),
        }
    }

    /// A case with this verdict at `ai.onnx` opset 13 (and no data sets).
    fn case(name: &str, status: Status) -> CaseResult {
        CaseResult {
            name: name.to_string(),
            path: PathBuf::new(),
            ops: vec!["Gather".to_string()],
            opset: BTreeMap::from([("ai.onnx".to_string(), 13)]),
            op_versions: vec!["Gather-13".to_string()],
            files: Vec::new(),
            origin: None,
            expectation: None,
            traits: Vec::new(),
            status,
            reason: (status != Status::Passed).then(|| "why".to_string()),
            data_sets: Vec::new(),
            duration: Duration::ZERO,
        }
    }

    /// A failed case whose second data set's second output fails with this signature.
    fn failed(name: &str, mismatches: usize, first: Option<&[usize]>) -> CaseResult {
        let mut r = case(name, Status::Failed);
        let first = first.map(<[usize]>::to_vec);
        r.data_sets = vec![
            DataSetResult {
                name: "test_data_set_0".to_string(),
                status: Status::Passed,
                reason: None,
                outputs: vec![output("y", false, 0, None)],
            },
            DataSetResult {
                name: "test_data_set_1".to_string(),
                status: Status::Failed,
                reason: Some("differs".to_string()),
                outputs: vec![
                    output("x", false, 0, None),
                    output("y", true, mismatches, first),
                    output("z", true, 7, Some(vec![9, 9])),
                ],
            },
        ];
        r
    }

    fn at_opset(mut r: CaseResult, opset: Option<i64>) -> CaseResult {
        r.opset.clear();
        if let Some(v) = opset {
            r.opset.insert("ai.onnx".to_string(), v);
        }
        r.opset.insert("com.microsoft".to_string(), 1);
        r
    }

    fn today() -> Date {
        date("2026-06-01")
    }

    fn outcomes(exp: &Expectations, results: &[CaseResult]) -> Vec<Option<Outcome>> {
        exp.judge(results, today())
            .cases
            .into_iter()
            .map(|c| c.map(|c| c.outcome))
            .collect()
    }

    /// The gate is clean: no case outcome fails it.
    fn gate_clean(exp: &Expectations, results: &[CaseResult]) -> bool {
        let j = exp.judge(results, today());
        j.cases.iter().flatten().all(|c| !c.outcome.fails_gate())
    }

    // Parsing.

    #[test]
    fn parses_every_field() {
        let exp = parse(FULL);
        assert_eq!(exp.path(), Path::new("exp.toml"));
        assert_eq!(
            exp.entries(),
            &[
                Entry {
                    case: "onnx-node/test_scatternd_*".to_string(),
                    status: Some(Status::Failed),
                    reason: "tract#1234: ScatterND add not implemented".to_string(),
                    link: Some("https://github.com/sonos/tract/issues/1234".to_string()),
                    until: Some(date("2027-03-31")),
                    opset: Some((Some(13), Some(17))),
                    rtol: Some(1e-2),
                    atol: Some(1e-5),
                    mismatches: Some(3),
                    first_mismatch: Some(vec![1, 0]),
                },
                Entry {
                    case: "spec-examples/**".to_string(),
                    status: None,
                    reason: "float16 reductions".to_string(),
                    link: None,
                    until: Some(date("2026-12-31")),
                    opset: Some((None, Some(16))),
                    rtol: Some(0.0),
                    atol: None,
                    mismatches: None,
                    first_mismatch: None,
                },
            ]
        );
        assert!(!exp.entries()[0].is_exact());
    }

    #[test]
    fn parses_each_status() {
        for (text, status) in [
            ("failed", Status::Failed),
            ("errored", Status::Errored),
            ("skipped", Status::Skipped),
        ] {
            let exp = parse(&format!(
                "[[expect]]\ncase = \"a\"\nstatus = \"{text}\"\nreason = \"r\"\n"
            ));
            assert_eq!(exp.entries()[0].status, Some(status));
        }
    }

    #[test]
    fn an_empty_file_has_no_entries() {
        assert!(parse("").entries().is_empty());
        assert!(parse("# nothing known to fail\n\n").entries().is_empty());
    }

    #[test]
    fn a_missing_file_is_an_error_and_an_existing_one_loads() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.toml");
        let err = Expectations::load(&missing).unwrap_err();
        match &err {
            ExpectationsError::Read { path, source } => {
                assert_eq!(path, &missing);
                assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
            }
            other => panic!("{other:?}"),
        }
        assert!(err.to_string().starts_with(&missing.display().to_string()));

        let file = dir.path().join("expectations.toml");
        std::fs::write(&file, FULL).unwrap();
        let exp = Expectations::load(&file).unwrap();
        assert_eq!(exp.entries().len(), 2);
        assert_eq!(exp.path(), file);
    }

    // Validation.

    #[test]
    fn toml_syntax_errors_name_the_file_and_line() {
        let err = Expectations::parse(
            "[[expect]]\ncase = \"a\"\nreason = \n",
            Path::new("ci/exp.toml"),
        )
        .unwrap_err();
        assert!(matches!(err, ExpectationsError::Toml { .. }), "{err:?}");
        let text = err.to_string();
        assert!(text.starts_with("ci/exp.toml: "), "{text}");
        assert!(text.contains("line 3"), "{text}");
    }

    #[test]
    fn unknown_top_level_keys_are_errors() {
        let err =
            Expectations::parse("[[expcet]]\ncase = \"a\"\n", Path::new("e.toml")).unwrap_err();
        assert!(matches!(err, ExpectationsError::Toml { .. }), "{err:?}");
        assert!(err.to_string().contains("expcet"), "{err}");
        assert!(err.to_string().contains("line 1"), "{err}");
    }

    #[test]
    fn unknown_fields_name_the_entry_line_and_field() {
        let text = "[[expect]]\ncase = \"a\"\nreason = \"r\"\n\n[[expect]]\ncase = \"b\"\nreason = \"r\"\nreson = \"typo\"\n";
        assert_eq!(
            entry_error(text),
            (2, 8, "reson".to_string(), Problem::Unknown)
        );
        let err = Expectations::parse(text, Path::new("e.toml")).unwrap_err();
        assert!(err
            .to_string()
            .starts_with("e.toml: entry 2 (line 8): `reson`: unknown field"));
    }

    #[test]
    fn status_must_be_failed_errored_or_skipped() {
        let text = "[[expect]]\ncase = \"a\"\nstatus = \"passed\"\nreason = \"r\"\n";
        assert_eq!(
            entry_error(text),
            (1, 3, "status".to_string(), Problem::Passed)
        );
        let text = "[[expect]]\ncase = \"a\"\nstatus = \"broken\"\nreason = \"r\"\n";
        assert_eq!(problem(text), Problem::Status("broken".to_string()));
        let text = "[[expect]]\ncase = \"a\"\nstatus = 1\nreason = \"r\"\n";
        assert_eq!(
            problem(text),
            Problem::Type {
                expected: "a string",
                found: "integer"
            }
        );
    }

    #[test]
    fn reason_is_required_and_must_not_be_empty() {
        let text = "# header\n[[expect]]\ncase = \"a\"\nstatus = \"failed\"\n";
        // A missing field is reported at the entry's line.
        assert_eq!(
            entry_error(text),
            (1, 2, "reason".to_string(), Problem::Missing)
        );
        let text = "[[expect]]\ncase = \"a\"\nreason = \"r\"\n\n\n[[expect]]\ncase = \"b\"\n";
        assert_eq!(
            entry_error(text),
            (2, 6, "reason".to_string(), Problem::Missing)
        );
        let text = "[[expect]]\ncase = \"a\"\nreason = \"  \"\n";
        assert_eq!(
            entry_error(text),
            (1, 3, "reason".to_string(), Problem::Empty)
        );
        let err = Expectations::parse(text, Path::new("e.toml")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "e.toml: entry 1 (line 3): `reason`: must not be empty"
        );
    }

    #[test]
    fn case_is_required_and_must_not_be_empty() {
        assert_eq!(
            entry_error("[[expect]]\nreason = \"r\"\n").2,
            "case".to_string()
        );
        assert_eq!(
            problem("[[expect]]\ncase = \"\"\nreason = \"r\"\n"),
            Problem::Empty
        );
    }

    #[test]
    fn until_must_be_a_plain_date() {
        let entry =
            |until: &str| format!("[[expect]]\ncase = \"a\"\nreason = \"r\"\nuntil = {until}\n");
        assert_eq!(
            problem(&entry("\"2027-02-30\"")),
            Problem::Date(DateError("2027-02-30".to_string()))
        );
        assert_eq!(
            problem(&entry("\"2027-3-31\"")),
            Problem::Date(DateError("2027-3-31".to_string()))
        );
        assert!(matches!(
            problem(&entry("2027-03-31T10:00:00")),
            Problem::DateTime(_)
        ));
        assert!(matches!(
            problem(&entry("2027-03-31T10:00:00Z")),
            Problem::DateTime(_)
        ));
        assert!(matches!(problem(&entry("10:00:00")), Problem::DateTime(_)));
        assert_eq!(
            problem(&entry("20270331")),
            Problem::Type {
                expected: "a date (YYYY-MM-DD)",
                found: "integer"
            }
        );
        assert_eq!(
            parse(&entry("2028-02-29")).entries()[0].until,
            Some(date("2028-02-29"))
        );
    }

    #[test]
    fn an_invalid_glob_is_an_error() {
        let (entry, line, field, p) = entry_error("[[expect]]\ncase = \"a/{b\"\nreason = \"r\"\n");
        assert_eq!((entry, line, field.as_str()), (1, 2, "case"));
        assert!(matches!(p, Problem::Glob(_)), "{p:?}");
        assert!(matches!(
            problem("[[expect]]\ncase = \"a/[b\"\nreason = \"r\"\n"),
            Problem::Glob(_)
        ));
    }

    #[test]
    fn tolerances_must_be_finite_and_non_negative() {
        let entry = |kv: &str| format!("[[expect]]\ncase = \"a\"\nreason = \"r\"\n{kv}\n");
        assert_eq!(problem(&entry("rtol = -1e-3")), Problem::Tolerance(-1e-3));
        assert_eq!(
            problem(&entry("atol = inf")),
            Problem::Tolerance(f64::INFINITY)
        );
        assert!(matches!(
            entry_error(&entry("atol = nan")),
            (1, 4, ref f, Problem::Tolerance(x)) if f == "atol" && x.is_nan()
        ));
        assert_eq!(
            problem(&entry("rtol = \"1e-3\"")),
            Problem::Type {
                expected: "a number",
                found: "string"
            }
        );
        assert_eq!(parse(&entry("atol = 2")).entries()[0].atol, Some(2.0));
    }

    #[test]
    fn an_opset_range_must_be_ordered_and_well_formed() {
        let entry = |kv: &str| format!("[[expect]]\ncase = \"a\"\nreason = \"r\"\n{kv}\n");
        assert_eq!(
            entry_error(&entry("opset = { min = 17, max = 13 }")),
            (
                1,
                4,
                "opset".to_string(),
                Problem::OpsetRange { min: 17, max: 13 }
            )
        );
        assert_eq!(
            entry_error(&entry("opset = { min = 13, low = 1 }")).2,
            "opset.low"
        );
        assert_eq!(
            problem(&entry("opset = { min = \"13\" }")),
            Problem::Type {
                expected: "an integer",
                found: "string"
            }
        );
        assert!(matches!(
            problem(&entry("opset = 13")),
            Problem::Type {
                found: "integer",
                ..
            }
        ));
        assert_eq!(
            parse(&entry("opset = { min = 13, max = 13 }")).entries()[0].opset,
            Some((Some(13), Some(13)))
        );
    }

    #[test]
    fn signature_fields_need_status_failed_and_non_negative_values() {
        let entry = |status: &str, kv: &str| {
            format!("[[expect]]\ncase = \"a\"\n{status}reason = \"r\"\n{kv}\n")
        };
        assert_eq!(
            entry_error(&entry("", "mismatches = 3")),
            (1, 4, "mismatches".to_string(), Problem::NeedsFailed)
        );
        assert_eq!(
            problem(&entry("status = \"errored\"\n", "first_mismatch = [0]")),
            Problem::NeedsFailed
        );
        assert_eq!(
            problem(&entry("status = \"failed\"\n", "mismatches = -1")),
            Problem::Negative(-1)
        );
        assert_eq!(
            problem(&entry("status = \"failed\"\n", "first_mismatch = [1, -2]")),
            Problem::Negative(-2)
        );
        assert_eq!(
            entry_error(&entry("status = \"failed\"\n", "first_mismatch = 1")).2,
            "first_mismatch"
        );
        let exp = parse(&entry("status = \"failed\"\n", "first_mismatch = []"));
        assert_eq!(exp.entries()[0].first_mismatch, Some(vec![]));
    }

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
    fn escaping_a_name_gives_an_exact_pattern_for_it() {
        for name in ["a/b", "a/x[1]", "w{1,2}", "q?*", "back\\slash", "]["] {
            let pattern = escape(name);
            assert_eq!(literal(&pattern).as_deref(), Some(name), "{pattern}");
            let glob = GlobBuilder::new(&pattern)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .unwrap()
                .compile_matcher();
            assert!(glob.is_match(name), "{pattern}");
        }
        assert_eq!(literal("a/*"), None);
        assert_eq!(literal("a/[ab]"), None);
        assert_eq!(literal("a/[!a]"), None);
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

    // Judging.

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
                different("expected failed with 1 mismatch, got 0 mismatches (dtype or shape differs)"),
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
    fn the_signature_is_the_first_failed_output_of_the_first_failed_data_set() {
        assert_eq!(
            Signature::of(&failed("f", 5, Some(&[0, 2]))),
            Some(Signature {
                mismatches: 5,
                first_mismatch: Some(vec![0, 2])
            })
        );
        assert_eq!(
            Signature::of(&failed("f", 0, None)),
            Some(Signature::default())
        );
        assert_eq!(
            Signature::of(&case("f", Status::Failed)),
            Some(Signature::default())
        );
        assert_eq!(Signature::of(&case("e", Status::Errored)), None);
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
        // Expired entries are listed whether or not they match a case, and still judge theirs.
        let results = [failed("a", 1, None)];
        let j = exp.judge(&results, date("2026-06-01"));
        assert_eq!(j.expired, vec![0, 3]);
        assert_eq!(
            j.cases[0].as_ref().unwrap().outcome,
            Outcome::ExpectedFailure
        );
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

    // Updating.

    fn update(text: &str, results: &[CaseResult]) -> (String, Expectations) {
        let written = parse(text).update(results);
        let reread = Expectations::parse(&written, Path::new("exp.toml"))
            .unwrap_or_else(|e| panic!("{e}\n{written}"));
        (written, reread)
    }

    fn find<'a>(exp: &'a Expectations, case: &str) -> Vec<&'a Entry> {
        exp.entries().iter().filter(|e| e.case == case).collect()
    }

    #[test]
    fn update_keeps_reasons_and_links_and_drops_entries_whose_cases_pass() {
        let text = "[[expect]]\ncase = \"b\"\nstatus = \"errored\"\nreason = \"tract#1\"\nlink = \"https://x/1\"\nuntil = 2027-01-31\nopset = { min = 11 }\n\n\
                    [[expect]]\ncase = \"a\"\nstatus = \"failed\"\nreason = \"fixed since\"\n\n\
                    [[expect]]\ncase = \"g/*\"\nstatus = \"skipped\"\nreason = \"no Loop\"\nlink = \"https://x/2\"\n";
        let results = [
            case("a", Status::Passed),
            case("b", Status::Errored),
            case("g/1", Status::Skipped),
            case("g/2", Status::Skipped),
        ];
        let (_, exp) = update(text, &results);
        let cases: Vec<&str> = exp.entries().iter().map(|e| e.case.as_str()).collect();
        assert_eq!(cases, vec!["b", "g/*"]);
        let b = &exp.entries()[0];
        assert_eq!(b.status, Some(Status::Errored));
        assert_eq!(b.reason, "tract#1");
        assert_eq!(b.link.as_deref(), Some("https://x/1"));
        assert_eq!(b.until, Some(date("2027-01-31")));
        assert_eq!(b.opset, Some((Some(11), None)));
        let g = &exp.entries()[1];
        assert_eq!(
            (g.status, g.reason.as_str(), g.link.as_deref()),
            (Some(Status::Skipped), "no Loop", Some("https://x/2"))
        );
        assert!(gate_clean(&exp, &results));
    }

    #[test]
    fn update_adds_todo_entries_for_new_failures() {
        let results = [
            case("ok", Status::Passed),
            failed("new/f", 2, Some(&[0, 1])),
            failed("new/shape", 0, None),
            case("new/e", Status::Errored),
            case("odd[1]", Status::Skipped),
        ];
        let (written, exp) = update("", &results);
        assert_eq!(
            written,
            "# onnx-idx-check expectations: known failures, ratcheted.\n\
             # Written by `onnx-idx-check run --update-expectations`: entries sorted by case pattern,\n\
             # comments not kept. Fill in every reason = \"TODO\" (an issue, a missing feature) before\n\
             # committing.\n\
             \n[[expect]]\ncase = \"new/e\"\nstatus = \"errored\"\nreason = \"TODO\"\n\
             \n[[expect]]\ncase = \"new/f\"\nstatus = \"failed\"\nreason = \"TODO\"\nmismatches = 2\nfirst_mismatch = [0, 1]\n\
             \n[[expect]]\ncase = \"new/shape\"\nstatus = \"failed\"\nreason = \"TODO\"\nmismatches = 0\n\
             \n[[expect]]\ncase = \"odd[[]1[]]\"\nstatus = \"skipped\"\nreason = \"TODO\"\n"
        );
        assert!(exp
            .entries()
            .iter()
            .all(|e| e.reason == "TODO" && e.is_exact()));
        assert!(gate_clean(&exp, &results));
    }

    #[test]
    fn update_refreshes_the_signature_and_status_of_exact_entries() {
        let text = "[[expect]]\ncase = \"f\"\nstatus = \"failed\"\nreason = \"r\"\nmismatches = 3\nfirst_mismatch = [1, 0]\n\n\
                    [[expect]]\ncase = \"plain\"\nstatus = \"failed\"\nreason = \"r\"\n\n\
                    [[expect]]\ncase = \"now_errored\"\nstatus = \"failed\"\nreason = \"r\"\nmismatches = 1\n";
        let results = [
            failed("f", 5, Some(&[0, 2])),
            failed("plain", 4, Some(&[1])),
            case("now_errored", Status::Errored),
        ];
        assert!(!gate_clean(&parse(text), &results));
        let (_, exp) = update(text, &results);
        let f = find(&exp, "f")[0];
        assert_eq!(
            (f.mismatches, f.first_mismatch.clone()),
            (Some(5), Some(vec![0, 2]))
        );
        let plain = find(&exp, "plain")[0];
        assert_eq!(
            (plain.mismatches, plain.first_mismatch.clone()),
            (Some(4), Some(vec![1]))
        );
        let e = find(&exp, "now_errored")[0];
        assert_eq!(
            (e.status, e.mismatches, e.reason.as_str()),
            (Some(Status::Errored), None, "r")
        );
        assert!(gate_clean(&exp, &results));
    }

    #[test]
    fn update_splits_a_glob_whose_cases_disagree() {
        let text = "[[expect]]\ncase = \"g/*\"\nstatus = \"failed\"\nreason = \"tract#7\"\nmismatches = 1\n";
        let results = [
            failed("g/1", 1, Some(&[0])),
            failed("g/2", 1, Some(&[5])),
            case("g/3", Status::Errored),
        ];
        let (_, exp) = update(text, &results);
        let g = find(&exp, "g/*")[0];
        assert_eq!(
            (g.status, g.reason.as_str(), g.mismatches),
            (Some(Status::Failed), "tract#7", Some(1))
        );
        let g3 = find(&exp, "g/3")[0];
        assert_eq!(
            (g3.status, g3.reason.as_str()),
            (Some(Status::Errored), "TODO")
        );
        assert_eq!(exp.entries().len(), 2);
        assert!(gate_clean(&exp, &results));

        // No case keeps the glob's status: the most common one wins; a signature that no longer
        // holds is dropped.
        let results = [
            case("g/1", Status::Errored),
            case("g/2", Status::Errored),
            case("g/3", Status::Skipped),
        ];
        let (_, exp) = update(text, &results);
        let g = find(&exp, "g/*")[0];
        assert_eq!((g.status, g.mismatches), (Some(Status::Errored), None));
        assert_eq!(find(&exp, "g/3")[0].status, Some(Status::Skipped));
        assert!(gate_clean(&exp, &results));

        let results = [failed("g/1", 2, None)];
        let (_, exp) = update(text, &results);
        assert_eq!(find(&exp, "g/*")[0].mismatches, None);
    }

    #[test]
    fn update_narrows_a_glob_that_covers_a_passing_case() {
        let text = "[[expect]]\ncase = \"g/*\"\nstatus = \"failed\"\nreason = \"tract#7\"\nlink = \"L\"\nuntil = 2027-01-01\nopset = { min = 13 }\n";
        let results = [
            failed("g/1", 1, Some(&[0])),
            case("g/2", Status::Passed),
            case("g/3", Status::Errored),
        ];
        assert!(!gate_clean(&parse(text), &results));
        let (_, exp) = update(text, &results);
        let cases: Vec<&str> = exp.entries().iter().map(|e| e.case.as_str()).collect();
        assert_eq!(cases, vec!["g/1", "g/3"]);
        for e in exp.entries() {
            assert_eq!(e.reason, "tract#7");
            assert_eq!(e.link.as_deref(), Some("L"));
            assert_eq!(e.until, Some(date("2027-01-01")));
            assert_eq!(e.opset, Some((Some(13), None)));
        }
        assert_eq!(exp.entries()[0].mismatches, Some(1));
        assert_eq!(exp.entries()[1].status, Some(Status::Errored));
        assert!(gate_clean(&exp, &results));
    }

    #[test]
    fn update_keeps_the_tolerances_of_entries_whose_cases_pass() {
        let text = "[[expect]]\ncase = \"x\"\nstatus = \"failed\"\nreason = \"needs rtol\"\nrtol = 0.01\nmismatches = 1\n\n\
                    [[expect]]\ncase = \"g/*\"\nstatus = \"failed\"\nreason = \"loose\"\natol = 0.5\n";
        let results = [
            case("x", Status::Passed),
            case("g/1", Status::Passed),
            failed("g/2", 1, None),
        ];
        let (_, exp) = update(text, &results);
        let x = find(&exp, "x")[0];
        assert_eq!(
            (x.status, x.rtol, x.mismatches, x.reason.as_str()),
            (None, Some(0.01), None, "needs rtol")
        );
        let g = find(&exp, "g/*")[0];
        assert_eq!((g.status, g.atol), (None, Some(0.5)));
        let g2 = find(&exp, "g/2")[0];
        assert_eq!(
            (g2.status, g2.reason.as_str()),
            (Some(Status::Failed), "loose")
        );
        let base = Tolerance::default();
        assert_eq!(exp.tolerance_for("g/2", Some(13), base).atol, 0.5);
        assert_eq!(exp.tolerance_for("x", Some(13), base).rtol, 0.01);
        assert!(gate_clean(&exp, &results));
    }

    #[test]
    fn update_keeps_tolerance_only_entries_and_entries_not_in_the_run() {
        let text = "[[expect]]\ncase = \"t/*\"\nreason = \"tol\"\nrtol = 0.1\nopset = { max = 12 }\n\n\
                    [[expect]]\ncase = \"elsewhere\"\nstatus = \"failed\"\nreason = \"filtered out\"\nmismatches = 2\n\n\
                    [[expect]]\ncase = \"w\"\nstatus = \"failed\"\nreason = \"wrong opset\"\nopset = { min = 99 }\n\n\
                    [[expect]]\ncase = \"*\"\nstatus = \"failed\"\nreason = \"shadowed\"\n\n\
                    [[expect]]\ncase = \"s\"\nstatus = \"failed\"\nreason = \"wins\"\n";
        let results = [failed("s", 1, None), case("t/1", Status::Passed)];
        let (_, exp) = update(text, &results);
        let original = parse(text);
        assert_eq!(find(&exp, "t/*")[0], &original.entries()[0]);
        assert_eq!(find(&exp, "elsewhere")[0], &original.entries()[1]);
        assert_eq!(find(&exp, "w")[0], &original.entries()[2]);
        assert!(find(&exp, "*").is_empty());
        assert_eq!(find(&exp, "s")[0].reason, "wins");
        assert!(gate_clean(&exp, &results));
    }

    #[test]
    fn update_output_parses_back_and_is_stable() {
        let text = r#"[[expect]]
case = "z/\"quoted\" \\\\ name"
status = "failed"
reason = "multi\nline \"reason\" with \\ and \t tab"
link = "https://example.com/a?b=c"
until = "2027-03-31"
opset = { min = 13, max = 17 }
rtol = 1e-7
atol = 0.1
mismatches = 3
first_mismatch = [1, 0]

[[expect]]
case = "a/**"
reason = "tolerance"
rtol = 3
opset = {}

[[expect]]
case = "m/*"
status = "skipped"
reason = "no Loop"
"#;
        let original = parse(text);
        let results = [
            failed("z/\"quoted\" \\ name", 3, Some(&[1, 0])),
            case("m/1", Status::Skipped),
            case("m/2", Status::Skipped),
            at_opset(failed("n/1", 1, Some(&[])), None),
        ];
        let (written, exp) = update(text, &results);
        let cases: Vec<&str> = exp.entries().iter().map(|e| e.case.as_str()).collect();
        assert_eq!(cases, vec!["a/**", "m/*", "n/1", "z/\"quoted\" \\\\ name"]);
        assert_eq!(exp.entries()[0], original.entries()[1]);
        assert_eq!(exp.entries()[1], original.entries()[2]);
        assert_eq!(exp.entries()[3], original.entries()[0]);
        assert_eq!(exp.entries()[2].first_mismatch, Some(vec![]));
        assert!(written.contains("until = 2027-03-31\n"), "{written}");
        assert!(written.contains("opset = {}\n"), "{written}");
        assert!(written.contains("rtol = 1e-7\n"), "{written}");
        assert!(gate_clean(&exp, &results));
        // Updating again changes nothing.
        assert_eq!(exp.update(&results), written);
        // Every parsed entry renders back to itself.
        assert_eq!(
            parse(&render(original.entries())).entries(),
            original.entries()
        );
    }

    #[test]
    fn update_of_nothing_writes_only_the_header() {
        let written = parse(FULL).update(&[case("spec-examples/a", Status::Passed)]);
        // The tolerance-only entry stays; the glob matched no case and stays too.
        let exp = parse(&written);
        assert_eq!(exp.entries(), parse(FULL).entries());
        let written = parse("").update(&[case("a", Status::Passed)]);
        assert!(written.lines().all(|l| l.starts_with('#')), "{written}");
        assert!(parse(&written).entries().is_empty());
    }

    // Dates.

    #[test]
    fn dates_parse_display_and_compare() {
        let d = date("2027-03-31");
        assert_eq!(
            d,
            Date {
                year: 2027,
                month: 3,
                day: 31
            }
        );
        assert_eq!(d.to_string(), "2027-03-31");
        assert_eq!(Date::new(5, 1, 2).unwrap().to_string(), "0005-01-02");
        assert!(date("2027-03-31") < date("2027-04-01"));
        assert!(date("2026-12-31") < date("2027-01-01"));
        assert!(Date::new(2028, 2, 29).is_some());
        assert!(Date::new(2027, 2, 29).is_none());
        assert!(Date::new(1900, 2, 29).is_none());
        assert!(Date::new(2000, 2, 29).is_some());
        assert!(Date::new(2027, 4, 31).is_none());
        assert!(Date::new(2027, 13, 1).is_none());
        assert!(Date::new(2027, 1, 0).is_none());
        for bad in [
            "",
            "2027-3-31",
            "2027/03/31",
            "27-03-31",
            "2027-03-31 ",
            "+027-03-31",
            "2027-00-10",
        ] {
            assert_eq!(
                bad.parse::<Date>(),
                Err(DateError(bad.to_string())),
                "{bad}"
            );
        }
    }

    #[test]
    fn days_since_the_epoch_convert_to_civil_dates() {
        assert_eq!(Date::from_unix_days(0), date("1970-01-01"));
        assert_eq!(Date::from_unix_days(-1), date("1969-12-31"));
        assert_eq!(Date::from_unix_days(11_016), date("2000-02-29"));
        assert_eq!(Date::from_unix_days(19_723), date("2024-01-01"));
        assert_eq!(Date::from_unix_days(20_513), date("2026-03-01"));
        // Walking day by day visits every valid date once, in order.
        let mut prev = Date::from_unix_days(-800);
        for day in -799..2_000 {
            let d = Date::from_unix_days(day);
            assert!(prev < d);
            assert!(Date::new(d.year, d.month, d.day).is_some());
            prev = d;
        }
    }

    #[test]
    fn today_is_a_plausible_date() {
        let today = Date::today();
        assert!(today >= date("2025-01-01"), "{today}");
        assert_eq!(today.to_string().parse::<Date>(), Ok(today));
    }

    // The ratchet: after an update, the same results pass the gate, and updating is idempotent.

    const NAMES: [&str; 6] = ["a/1", "a/2", "a/x1", "b/1", "b/2", "c"];
    const MENU: [&str; 8] = [
        "case = \"a/*\"\nstatus = \"failed\"\nreason = \"A\"\n",
        "case = \"a/x*\"\nstatus = \"errored\"\nreason = \"AX\"\nrtol = 0.5\n",
        "case = \"**\"\nstatus = \"skipped\"\nreason = \"ALL\"\nopset = { min = 14 }\n",
        "case = \"a/1\"\nstatus = \"failed\"\nreason = \"A1\"\nmismatches = 1\n",
        "case = \"b/*\"\nreason = \"tolerance\"\natol = 1\n",
        "case = \"b/2\"\nstatus = \"errored\"\nreason = \"B2\"\n",
        "case = \"c\"\nstatus = \"failed\"\nreason = \"C\"\nfirst_mismatch = [0]\n",
        "case = \"{a,b}/?\"\nstatus = \"failed\"\nreason = \"AB\"\nmismatches = 2\n",
    ];

    fn arb_result(name: &'static str) -> impl Strategy<Value = CaseResult> {
        (0..6u8, 0..3usize, 13..15i64).prop_map(move |(kind, n, opset)| {
            let r = match kind {
                0 | 1 => case(name, Status::Passed),
                2 => failed(name, n, (n > 0).then_some(&[0][..])),
                3 => failed(name, n, None),
                4 => case(name, Status::Errored),
                _ => case(name, Status::Skipped),
            };
            at_opset(r, Some(opset))
        })
    }

    proptest! {
        #[test]
        fn after_an_update_the_same_results_pass_the_gate(
            picks in proptest::collection::vec(0..MENU.len(), 0..6),
            results in (
                arb_result(NAMES[0]), arb_result(NAMES[1]), arb_result(NAMES[2]),
                arb_result(NAMES[3]), arb_result(NAMES[4]), arb_result(NAMES[5]),
            ),
        ) {
            let text: String = picks.iter().map(|&i| format!("[[expect]]\n{}\n", MENU[i])).collect();
            let (a, b, c, d, e, f) = results;
            let results = [a, b, c, d, e, f];
            let (written, exp) = update(&text, &results);
            prop_assert!(gate_clean(&exp, &results), "{}\n---\n{}", text, written);
            let j = exp.judge(&results, today());
            for (r, cj) in results.iter().zip(&j.cases) {
                let covered = cj.as_ref().is_some_and(|c| c.outcome == Outcome::ExpectedFailure);
                prop_assert_eq!(covered, r.status != Status::Passed, "{}\n---\n{}", text, written);
            }
            prop_assert_eq!(exp.update(&results), written);
        }
    }
}
