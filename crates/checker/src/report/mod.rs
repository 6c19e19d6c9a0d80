//! Reporting: what a run tells as it goes ([`Event`]) and when it ends ([`RunEnd`]), and the
//! formats that render it.
//!
//! Inside the crate every output format is a reporter that receives the run's events, in the
//! manner of cargo-nextest: the runner produces verdicts and never formats; the app hands each
//! event to every reporter of the run, so one run writes several formats at once
//! (`--report junit=FILE --report markdown=FILE` beside the human output on the terminal). The
//! formats: human status lines and summary, one JSON document (schema_version 1, also
//! [`CheckReport::to_json`](crate::CheckReport::to_json)), JUnit XML, and GitHub-flavoured
//! Markdown for `$GITHUB_STEP_SUMMARY` ([`markdown::render`]), and GitHub Actions annotations
//! when the run is a GitHub Actions step.
//!
//! Reporters read only the shared data of [`crate::verdict`]: no format imports another's types.
//!
//! ```
//! use onnx_idx_check::report::{markdown, Rerun};
//! use onnx_idx_check::{check, CheckOptions};
//!
//! let report = check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &CheckOptions::default())?;
//! let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
//! let md = markdown::render(&report.run_end(), &Rerun::default());
//! assert_eq!(json["summary"]["total"], 29);
//! assert!(md.contains("29 passed"));
//! # Ok::<(), onnx_idx_check::CheckError>(())
//! ```

pub mod github;
pub mod human;
pub mod json;
pub mod markdown;
pub mod text;

use crate::verdict::{
    CaseResult, ExpectationOutcome, ExpectationsReport, Gate, RuntimeInfo, Summary,
};
use anyhow::{Context, Result};
use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The tool's name and version, as reports state them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolInfo {
    /// `onnx-idx-check`.
    pub name: &'static str,
    /// The crate version.
    pub version: &'static str,
}

/// This build's [`ToolInfo`].
pub const TOOL: ToolInfo = ToolInfo {
    name: env!("CARGO_PKG_NAME"),
    version: env!("CARGO_PKG_VERSION"),
};

/// Milliseconds, rounded down, for reports.
pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Nanoseconds, for reports (saturating after 584 years).
pub(crate) fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Something that happened in a run, in the order it happened.
///
/// ```
/// use onnx_idx_check::report::Event;
/// use onnx_idx_check::{check_with, CheckOptions};
///
/// let (mut started, mut finished, mut ended) = (0, 0, false);
/// check_with(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &CheckOptions::default().filter("^test_gather_[01]$"), |event| match event {
///     Event::RunStarted { cases } => started = *cases,
///     Event::CaseFinished(_) => finished += 1,
///     Event::RunFinished(end) => ended = end.gate.passed(),
/// })?;
/// assert_eq!((started, finished, ended), (2, 2, true));
/// # Ok::<(), onnx_idx_check::CheckError>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub enum Event<'a> {
    /// The run starts with this many selected cases.
    RunStarted {
        /// Cases selected.
        cases: usize,
    },
    /// A case finished (delivered in case order). Its expectation note, if any, is what the
    /// expectations say of this case alone; [`RunFinished`](Event::RunFinished) carries the final
    /// results. When the run rewrites its expectations file, every case is delivered once the
    /// file is rewritten, with the new file's note.
    CaseFinished(&'a CaseResult),
    /// The run finished.
    RunFinished(&'a RunEnd<'a>),
}

/// Everything known when a run has finished.
///
/// ```
/// use onnx_idx_check::{check, CheckOptions};
///
/// let report = check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &CheckOptions::default().filter("^test_scatternd"))?;
/// let end = report.run_end();
/// assert_eq!(end.results.len(), end.summary.total);
/// assert!(end.expectations.is_none());
/// # Ok::<(), onnx_idx_check::CheckError>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct RunEnd<'a> {
    /// Every case that ran, in case order, with its origin and its expectation note.
    pub results: &'a [CaseResult],
    /// Counts.
    pub summary: &'a Summary,
    /// Wall time of the run.
    pub duration: Duration,
    /// The expectations file's own verdicts, when `--expectations` was given.
    pub expectations: Option<&'a ExpectationsReport>,
    /// The run's own verdict and its reasons.
    pub gate: &'a Gate,
    /// The runtime under test, when one ran the data sets.
    pub runtime: Option<&'a RuntimeInfo>,
}

/// One output format: receives every event of a run.
pub trait Reporter {
    /// Handles one event. An error stops nothing else: the run goes on and the first error is
    /// returned at the end (see [`Reporters`]).
    fn report(&mut self, event: &Event<'_>) -> Result<()>;
}

/// Every reporter of a run: hands each event to each of them, in order, keeping the first error.
#[derive(Default)]
pub struct Reporters {
    reporters: Vec<Box<dyn Reporter>>,
    error: Option<anyhow::Error>,
}

impl Reporters {
    /// Adds a reporter.
    pub fn push(&mut self, r: Box<dyn Reporter>) {
        self.reporters.push(r);
    }

    /// Hands `event` to every reporter.
    pub fn report(&mut self, event: &Event<'_>) {
        for r in &mut self.reporters {
            if let Err(e) = r.report(event) {
                self.error.get_or_insert(e);
            }
        }
    }

    /// The first error any reporter returned, if any (after the run).
    pub fn finish(self) -> Result<()> {
        self.error.map_or(Ok(()), Err)
    }
}

/// Where a report goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dest {
    /// Standard output.
    Stdout,
    /// A file, replaced when the run finishes.
    File(PathBuf),
}

impl Dest {
    /// Writes a whole document; a closed pipe on stdout (`| head`) is not an error.
    pub fn write(&self, contents: &str) -> Result<()> {
        match self {
            Dest::Stdout => write_stdout(contents),
            Dest::File(path) => write_file(path, contents),
        }
    }
}

/// Writes to stdout; a closed pipe (`| head`) is not an error.
pub fn write_stdout(s: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(s.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e).context("writing to stdout"),
        _ => Ok(()),
    }
}

fn write_file(path: &Path, contents: &str) -> Result<()> {
    crate::fsutil::write_user_file(path, contents.as_bytes())
        .map_err(|e| e.source)
        .with_context(|| format!("writing the report to {}", path.display()))
}

/// The command that re-runs one case alone with the run's settings: the PATH that holds it (so
/// the case keeps its name, and expectations still match) narrowed by an anchored `--filter`,
/// then the options that shape verdicts.
///
/// ```
/// use onnx_idx_check::report::Rerun;
///
/// let rerun = Rerun { prefix: "onnx-idx-check run".into(), roots: vec!["cases/".into()], suffix: " --exact".into() };
/// assert_eq!(rerun.command("test_gather_0"), "onnx-idx-check run cases/ --filter '^test_gather_0$' --exact");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rerun {
    /// `onnx-idx-check run`.
    pub prefix: String,
    /// The run's PATHs, in order.
    pub roots: Vec<PathBuf>,
    /// The options after the filter, quoted (with a leading space), or empty.
    pub suffix: String,
}

impl Rerun {
    /// The command for the case named `case`, with every PATH of the run.
    ///
    /// ```
    /// use onnx_idx_check::report::Rerun;
    ///
    /// // Regex metacharacters in a case name are escaped, and the pattern quoted for the shell.
    /// let rerun = Rerun { prefix: "onnx-idx-check run".into(), roots: vec![".".into()], suffix: String::new() };
    /// assert_eq!(rerun.command("a.b"), r"onnx-idx-check run . --filter '^a\.b$'");
    /// ```
    pub fn command(&self, case: &str) -> String {
        self.with_roots(&self.roots.iter().collect::<Vec<_>>(), case)
    }

    /// The command for a case that ran, with only the PATH it was found under (the first, if
    /// several hold it); every PATH when none does.
    ///
    /// ```
    /// use onnx_idx_check::report::Rerun;
    /// use onnx_idx_check::{check, CheckOptions};
    ///
    /// let roots = [concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node"), concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/spec-examples")];
    /// let report = check(&roots, &CheckOptions::default().filter("^test_gather_0$"))?;
    /// let rerun = Rerun { prefix: "onnx-idx-check run".into(), roots: roots.iter().map(Into::into).collect(), suffix: String::new() };
    /// let command = rerun.for_case(&report.cases[0]);
    /// assert!(command.contains("/testdata/onnx-node --filter") && !command.contains("spec-examples"));
    /// # Ok::<(), onnx_idx_check::CheckError>(())
    /// ```
    pub fn for_case(&self, case: &CaseResult) -> String {
        let holding: Vec<&PathBuf> = self
            .roots
            .iter()
            .filter(|r| case.path.starts_with(r))
            .take(1)
            .collect();
        if holding.is_empty() {
            self.command(&case.name)
        } else {
            self.with_roots(&holding, &case.name)
        }
    }

    fn with_roots(&self, roots: &[&PathBuf], case: &str) -> String {
        let mut s = self.prefix.clone();
        for r in roots {
            s.push(' ');
            s.push_str(&shell_quote(&r.display().to_string()));
        }
        format!(
            "{s} --filter {}{}",
            shell_quote(&format!("^{}$", regex_literal(case))),
            self.suffix
        )
    }
}

/// A count and its noun, singular for one: `1 case`, `2 cases`, `0 cases` (`counted(n, "entry",
/// "entries")`).
pub fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Text that came from a file or a runtime (a case name, a tensor name, a reason, a runtime's
/// message) made safe to print on one line of a terminal or a CI log: every control character
/// (C0, DEL, C1; newline, CR, ESC and BEL among them) is shown as a visible escape (`\n`,
/// `\u{1b}`), so no such text can start a line (a GitHub workflow command) or steer the
/// terminal. Every human-readable output passes such text through here.
pub fn one_line(s: &str) -> String {
    escape_controls(s, false)
}

/// [`one_line`] for text shown over several lines (a file's text, a diff): newlines and tabs
/// are kept, every other control character is escaped.
pub fn multi_line(s: &str) -> String {
    escape_controls(s, true)
}

fn escape_controls(s: &str, keep_lines: bool) -> String {
    if !s.chars().any(char::is_control) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if keep_lines && (c == '\n' || c == '\t') {
            out.push(c);
        } else if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// A regular expression that matches exactly `text`: its metacharacters escaped, and its
/// control characters written as `\x{..}`, so the pattern (and a command holding it) stays on
/// one line.
fn regex_literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    for c in regex::escape(text).chars() {
        if c.is_control() {
            let _ = write!(out, "\\x{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

/// Quotes a word for a POSIX shell when it needs it: in single quotes, or, when it holds
/// control characters, in dollar-single quotes (`$'a\nb'`, POSIX.1-2024, bash, zsh, ksh), so
/// the command stays on one line and types back as the same word.
pub fn shell_quote(word: &str) -> String {
    let safe = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-./:=@%+,".contains(&b));
    if safe {
        word.to_string()
    } else if word.chars().any(char::is_control) {
        let mut out = String::from("$'");
        for c in word.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\'' => out.push_str("\\'"),
                c if c.is_control() && u32::from(c) < 0x80 => {
                    let _ = write!(out, "\\x{:02x}", u32::from(c));
                }
                // A C1 control as its UTF-8 bytes, as `$'...'` takes them.
                c if c.is_control() => {
                    let mut buf = [0; 4];
                    for b in c.encode_utf8(&mut buf).bytes() {
                        let _ = write!(out, "\\x{b:02x}");
                    }
                }
                c => out.push(c),
            }
        }
        out.push('\'');
        out
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The label of a case in the human and Markdown reports: `PASS`, `FAIL`, `ERROR`, `SKIP`,
/// `NEW` for a case errored only for want of expected outputs (insta's new snapshot), the
/// [`Fault`](crate::verdict::Fault)'s label where a runtime under test decided the verdict, or
/// `XFAIL` / `XPASS` / `EXPIRED` for a case an expectations entry lists.
pub fn label(c: &CaseResult) -> &'static str {
    match c.expectation.as_ref().map(|e| e.outcome) {
        Some(ExpectationOutcome::ExpectedFailure) => "XFAIL",
        Some(ExpectationOutcome::UnexpectedlyPassed) => "XPASS",
        Some(ExpectationOutcome::Expired) => "EXPIRED",
        _ if c.is_new() => "NEW",
        // What the runtime under test did: `CRASHED`, `TIMEOUT`, `REFUSED`, `NOTHING`, `NONDET`.
        _ => match c.status {
            s if s != crate::verdict::Status::Passed && c.fault.is_some() => {
                c.fault.map_or("ERROR", crate::verdict::Fault::label)
            }
            crate::verdict::Status::Passed => "PASS",
            crate::verdict::Status::Failed => "FAIL",
            crate::verdict::Status::Errored => "ERROR",
            crate::verdict::Status::Skipped => "SKIP",
        },
    }
}

/// Whether a failed or errored case needs its rerun command: it fails the gate, or only its
/// tolerance came from the expectations (an expected failure needs none).
pub(crate) fn needs_rerun(c: &CaseResult) -> bool {
    c.expectation
        .as_ref()
        .is_none_or(|e| e.fails_gate || e.outcome == ExpectationOutcome::ToleranceOnly)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_become_visible_escapes() {
        assert_eq!(one_line("plain ü"), "plain ü");
        assert_eq!(
            one_line("a\n::stop-commands::x\r\x1b]0;t\x07\x7f\u{85}\u{9b}"),
            "a\\n::stop-commands::x\\r\\u{1b}]0;t\\u{7}\\u{7f}\\u{85}\\u{9b}"
        );
        assert_eq!(multi_line("a\n\tb\x1b"), "a\n\tb\\u{1b}");
    }

    #[test]
    fn a_name_with_control_characters_reruns_from_one_line() {
        let rerun = Rerun {
            prefix: "onnx-idx-check run".into(),
            roots: vec!["t".into()],
            suffix: String::new(),
        };
        // The regex crate reads `\x{a}` as a newline: the filter matches the name exactly.
        let command = rerun.command("a\n::x\x1b.");
        assert_eq!(
            command,
            "onnx-idx-check run t --filter '^a\\x{a}::x\\x{1b}\\.$'"
        );
        let re = regex::Regex::new("^a\\x{a}::x\\x{1b}\\.$").unwrap();
        assert!(re.is_match("a\n::x\x1b.") && !re.is_match("a\n::x\x1bz"));
    }

    #[test]
    fn words_with_control_characters_are_dollar_quoted() {
        assert_eq!(shell_quote("plain"), "plain");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote("a\nb'\\\x1b"), "$'a\\x0ab\\'\\\\\\x1b'");
        assert_eq!(shell_quote("c\u{85}"), "$'c\\xc2\\x85'");
    }

    #[test]
    fn counts_take_the_singular_for_one() {
        assert_eq!(counted(0, "case", "cases"), "0 cases");
        assert_eq!(counted(1, "case", "cases"), "1 case");
        assert_eq!(counted(2, "entry", "entries"), "2 entries");
    }
}
