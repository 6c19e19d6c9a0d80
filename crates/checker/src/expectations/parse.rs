//! Reading an expectations file: TOML to validated entries and their matchers, with errors that
//! name the file, the entry, the line and the field.

use super::entry::{OpsetRange, FIELDS};
use super::pattern::Matcher;
use super::{Date, DateError, Entry, Expectations};
use crate::verdict::Status;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use thiserror::Error;
use toml::{Spanned, Value};

/// What went wrong with one field of an entry.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum Problem {
    /// A required field is absent.
    #[error("missing (it is required)")]
    Missing,
    /// A field that entries do not have.
    #[error("unknown field (expected one of case, status, reason, link, until, opset, rtol, atol, mismatches, first_mismatch, actual_dtype, actual_shape)")]
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

    /// An optional array of non-negative integers (coordinates, a shape).
    fn counts(&self, f: &Fields, key: &str) -> Result<Option<Vec<usize>>, ExpectationsError> {
        let Some(v) = f.get(key) else {
            return Ok(None);
        };
        let Value::Array(items) = v.get_ref() else {
            return Err(self.type_err(key, v, "an array of integers"));
        };
        items
            .iter()
            .map(|x| self.count(key, x, v.span()))
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
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
        let first_mismatch = self.counts(f, "first_mismatch")?;
        let actual_shape = self.counts(f, "actual_shape")?;
        let actual_dtype = self.string(f, "actual_dtype")?;
        for key in [
            "mismatches",
            "first_mismatch",
            "actual_dtype",
            "actual_shape",
        ] {
            if let Some(v) = f.get(key) {
                if status != Some(Status::Failed) {
                    return Err(self.err(key, Some(v.span()), Problem::NeedsFailed));
                }
            }
        }
        let entry = Entry {
            case,
            runtime: self.string(f, "runtime")?,
            status,
            reason: self.required_string(f, "reason")?,
            link: self.string(f, "link")?,
            until: self.until(f)?,
            opset: self.opset(f)?,
            rtol: self.tolerance(f, "rtol")?,
            atol: self.tolerance(f, "atol")?,
            mismatches,
            first_mismatch,
            actual_dtype,
            actual_shape,
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
        let mut lines = Vec::with_capacity(raw.expect.len());
        for (i, table) in raw.expect.iter().enumerate() {
            let ctx = Ctx {
                path,
                text,
                entry: i + 1,
                line: line_of(text, table.span().start),
            };
            let (entry, matcher) = ctx.entry(table.get_ref())?;
            lines.push(ctx.line);
            entries.push(entry);
            matchers.push(matcher);
        }
        Ok(Expectations {
            path: path.to_owned(),
            entries,
            matchers,
            lines,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expectations::testutil::{date, entry_error, parse, problem, FULL};

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
                    runtime: Some("tract".to_string()),
                    status: Some(Status::Failed),
                    reason: "tract#1234: ScatterND add not implemented".to_string(),
                    link: Some("https://github.com/sonos/tract/issues/1234".to_string()),
                    until: Some(date("2027-03-31")),
                    opset: Some((Some(13), Some(17))),
                    rtol: Some(1e-2),
                    atol: Some(1e-5),
                    mismatches: Some(3),
                    first_mismatch: Some(vec![1, 0]),
                    actual_dtype: None,
                    actual_shape: None,
                },
                Entry {
                    case: "spec-examples/**".to_string(),
                    runtime: None,
                    status: None,
                    reason: "float16 reductions".to_string(),
                    link: None,
                    until: Some(date("2026-12-31")),
                    opset: Some((None, Some(16))),
                    rtol: Some(0.0),
                    atol: None,
                    mismatches: None,
                    first_mismatch: None,
                    actual_dtype: None,
                    actual_shape: None,
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
}
