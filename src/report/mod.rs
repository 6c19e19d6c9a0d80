//! Reporting: every output format is a [`Reporter`] that receives the run's [`Event`]s, in the
//! manner of cargo-nextest. The runner produces verdicts and never formats; the app turns what it
//! produced into events and hands each to every reporter of the run ([`Reporters`]), so one run
//! writes several formats at once (`--report junit=FILE --report markdown=FILE` beside the human
//! output on the terminal).
//!
//! - [`human`]: status lines as cases finish, failure details, the summary (and the `.diff` text of
//!   pending snapshots);
//! - [`json`]: one JSON document, schema_version 1;
//! - [`junit`]: JUnit XML;
//! - [`markdown`]: GitHub-flavoured Markdown for `$GITHUB_STEP_SUMMARY`.
//!
//! Reporters read only the shared data of [`crate::verdict`]: no format imports another's types.

pub mod human;
pub mod json;
#[cfg(feature = "cli")]
pub mod junit;
pub mod markdown;
mod progress;

use crate::verdict::{CaseResult, ExpectationsReport, Gate, Summary};
use anyhow::{Context, Result};
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
pub fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Something that happened in a run, in the order it happened.
#[derive(Clone, Copy, Debug)]
pub enum Event<'a> {
    /// The run starts with this many selected cases.
    RunStarted {
        /// Cases selected.
        cases: usize,
    },
    /// A case finished (delivered in case order). Its expectation note, if any, is what the
    /// expectations say of this case alone; [`RunFinished`](Event::RunFinished) carries the final
    /// results.
    CaseFinished(&'a CaseResult),
    /// The run finished.
    RunFinished(&'a RunEnd<'a>),
}

/// Everything known when a run has finished.
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
    std::fs::write(path, contents)
        .with_context(|| format!("writing the report to {}", path.display()))
}

/// The command that re-runs one case alone with the run's settings: the same paths (so the case
/// keeps its name, and expectations still match) narrowed by an anchored `--filter`, then the
/// options that shape verdicts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rerun {
    /// `onnx-idx-check run PATH...`, quoted.
    pub prefix: String,
    /// The options after the filter, quoted (with a leading space), or empty.
    pub suffix: String,
}

impl Rerun {
    /// The command for the case named `case`.
    pub fn command(&self, case: &str) -> String {
        format!(
            "{} --filter {}{}",
            self.prefix,
            shell_quote(&format!("^{}$", regex::escape(case))),
            self.suffix
        )
    }
}

/// Quotes a word for a POSIX shell when it needs it.
pub fn shell_quote(word: &str) -> String {
    let safe = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-./:=@%+,".contains(&b));
    if safe {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The label of a case in the human and Markdown reports: `PASS`, `FAIL`, `ERROR`, `SKIP`, or
/// `XFAIL` / `XPASS` for a case an expectations entry lists.
pub fn label(c: &CaseResult) -> &'static str {
    match c.expectation.as_ref().map(|e| e.outcome) {
        Some("expected-failure") => "XFAIL",
        Some("unexpectedly-passed") => "XPASS",
        _ => match c.status {
            crate::verdict::Status::Passed => "PASS",
            crate::verdict::Status::Failed => "FAIL",
            crate::verdict::Status::Errored => "ERROR",
            crate::verdict::Status::Skipped => "SKIP",
        },
    }
}

/// Whether a failed or errored case needs its rerun command: it fails the gate, or only its
/// tolerance came from the expectations (an expected failure needs none).
pub fn needs_rerun(c: &CaseResult) -> bool {
    c.expectation
        .as_ref()
        .is_none_or(|e| e.fails_gate || e.outcome == "tolerance-only")
}
