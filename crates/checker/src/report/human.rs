//! The human report: one status line per case as it finishes, then the details of every failure
//! (the mismatch table) and a closing summary line, in the manner of cargo-nextest.
//! [`HumanReporter`] writes it to the terminal as the run goes, to a file when the run ends, or
//! as the closing summary alone on stderr (when a machine-readable report takes stdout).

use super::{needs_rerun, one_line, Dest, Event, Reporter, Rerun, RunEnd};
use crate::tensor::Tensor;
use crate::verdict::{
    CaseResult, ExpectationNote, ExpectationOutcome, ExpectationsReport, Gate, OutputResult,
    Status, Summary,
};
use anyhow::{Context, Result};
use std::fmt::Write as _;
use std::io::Write;
use std::time::Duration;

/// ANSI styling, on or off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Style {
    /// Whether to emit colour escapes.
    pub color: bool,
}

impl Style {
    fn paint(self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    fn status(self, s: Status) -> String {
        let (code, label) = match s {
            Status::Passed => ("1;32", "PASS"),
            Status::Failed => ("1;31", "FAIL"),
            Status::Errored => ("1;35", "ERROR"),
            Status::Skipped => ("1;33", "SKIP"),
        };
        self.paint(code, &format!("{label:>7}"))
    }
}

/// A duration to three significant digits in the unit that shows them: `812ns`, `41.2µs`,
/// `3.07ms`, `1.25s`; at most 8 characters below 100,000 s, so the case lines stay aligned.
pub fn duration_text(d: Duration) -> String {
    let ns = d.as_nanos();
    if ns < 1_000 {
        return format!("{ns}ns");
    }
    let (value, unit) = if ns < 1_000_000 {
        (ns as f64 / 1e3, "µs")
    } else if ns < 1_000_000_000 {
        (ns as f64 / 1e6, "ms")
    } else {
        (d.as_secs_f64(), "s")
    };
    // Decimals so that three digits show; 999.96 rounds to "1000", still in this unit.
    let decimals = if value < 10.0 {
        2
    } else if value < 100.0 {
        1
    } else {
        0
    };
    format!("{value:.decimals$}{unit}")
}

/// At most this many characters of a reason or a message are shown on one line of the human
/// reports; the reports for machines keep it whole.
const SHOWN_CHARS: usize = 1000;

/// `text` shortened in the middle when longer than `SHOWN_CHARS`: its head and its tail stay
/// (a runtime's message often names its cause last), the middle becomes `… [N chars] …`.
pub fn shorten(text: &str) -> String {
    let n = text.chars().count();
    if n <= SHOWN_CHARS {
        return text.to_string();
    }
    let keep = SHOWN_CHARS / 2;
    let head: String = text.chars().take(keep).collect();
    let tail: String = text.chars().skip(n - keep).collect();
    format!("{head} … [{} chars] … {tail}", n - 2 * keep)
}

/// `[  41.2µs]`: the duration in brackets, padded to 8 characters.
fn bracketed(d: Duration) -> String {
    format!("[{:>8}]", duration_text(d))
}

/// The line printed when a case finishes, plus its reason on a second line when it did not pass.
/// `rerun` is the command that re-runs the case alone, shown for failed and errored cases.
/// A case an expectations entry lists is labelled `XFAIL` while it fails as listed and `XPASS`
/// when it unexpectedly passes, `EXPIRED` when its entry's date has passed.
pub fn case_line(c: &CaseResult, style: Style, rerun: &str) -> String {
    let outcome = c.expectation.as_ref().map(|e| e.outcome);
    let label = match outcome {
        Some(ExpectationOutcome::ExpectedFailure) => {
            style.paint("1;33", &format!("{:>7}", "XFAIL"))
        }
        Some(ExpectationOutcome::UnexpectedlyPassed) => {
            style.paint("1;31", &format!("{:>7}", "XPASS"))
        }
        Some(ExpectationOutcome::Expired) => style.paint("1;31", &format!("{:>7}", "EXPIRED")),
        _ if c.is_new() => style.paint("1;34", &format!("{:>7}", "NEW")),
        // What the runtime under test did says more than FAIL or ERROR.
        _ => match c.fault.filter(|_| c.status != Status::Passed) {
            Some(f) => style.paint(
                if c.status == Status::Failed {
                    "1;31"
                } else {
                    "1;35"
                },
                &format!("{:>7}", f.label()),
            ),
            None => style.status(c.status),
        },
    };
    let mut s = format!("{label} {} {}\n", bracketed(c.duration), one_line(&c.name));
    if let Some(reason) = &c.reason {
        let _ = writeln!(s, "{:>17} {}", "", shorten(&one_line(reason)));
    }
    s.push_str(&computed_lines(c, style));
    if let Some(e) = &c.expectation {
        let _ = writeln!(s, "{:>17} {}", "", expectation_text(e));
    }
    if matches!(c.status, Status::Failed | Status::Errored) && needs_rerun(c) {
        let _ = writeln!(s, "{:>17} {} {rerun}", "", style.paint("2", "rerun:"));
    }
    s
}

/// At most this many new outputs are shown under a case line.
const COMPUTED_SHOWN: usize = 4;

/// Under a case with outputs that have no expected file yet, what onnx-idx-check computed for
/// them: `computed test_data_set_0 'y': float [2, 2], 4 values: ...`.
fn computed_lines(c: &CaseResult, style: Style) -> String {
    let new: Vec<(&str, &OutputResult, &str)> = c
        .data_sets
        .iter()
        .flat_map(|d| {
            d.outputs
                .iter()
                .filter_map(move |o| o.computed.as_deref().map(|v| (d.name.as_str(), o, v)))
        })
        .collect();
    let mut s = String::new();
    for (ds, o, value) in new.iter().take(COMPUTED_SHOWN) {
        let _ = writeln!(
            s,
            "{:>17} {} {} '{}': {}",
            "",
            style.paint("2", "computed"),
            one_line(ds),
            one_line(&o.name),
            one_line(value)
        );
    }
    if new.len() > COMPUTED_SHOWN {
        let _ = writeln!(
            s,
            "{:>17} ... and {} more new outputs",
            "",
            new.len() - COMPUTED_SHOWN
        );
    }
    s
}

/// What an expectations entry makes of a case, for people: `expected: REASON <LINK>`,
/// `unexpectedly passed: ...; remove the entry`, and so on.
pub(crate) fn expectation_text(e: &ExpectationNote) -> String {
    one_line(&expectation_prose(e))
}

/// [`expectation_text`] before its control characters are escaped.
fn expectation_prose(e: &ExpectationNote) -> String {
    let link = e.link.as_ref().map_or(String::new(), |l| format!(" <{l}>"));
    match e.outcome {
        ExpectationOutcome::ExpectedFailure => format!("expected: {}{link}", e.reason),
        ExpectationOutcome::UnexpectedlyPassed => format!(
            "unexpectedly passed: the expectations list '{}' as failing ({}); remove the entry{link}",
            e.entry, e.reason
        ),
        ExpectationOutcome::Different => format!(
            "fails differently than expected: {} (entry '{}': {}){link}",
            e.detail.as_deref().unwrap_or(""),
            e.entry,
            e.reason
        ),
        ExpectationOutcome::Expired => format!(
            "expectation expired: {} (entry '{}': {}); renew its date or remove it{link}",
            e.detail.as_deref().unwrap_or(""),
            e.entry,
            e.reason
        ),
        ExpectationOutcome::ToleranceOnly => {
            format!("tolerance from the expectations: {}{link}", e.reason)
        }
    }
}

/// Problems of the expectations file itself: expired entries (each fails the run) and entries
/// that matched no case (a warning, or a failure with `--strict-expectations`).
pub fn expectations(e: &ExpectationsReport, style: Style) -> String {
    let mut s = String::new();
    if e.written.is_none() && (!e.expired.is_empty() || !e.unmatched.is_empty()) {
        s.push('\n');
    }
    if let Some(w) = &e.written {
        let _ = writeln!(
            s,
            "\n{} wrote {} {} to {}: {w}",
            style.paint("1;36", "expectations:"),
            w.entries,
            if w.entries == 1 { "entry" } else { "entries" },
            one_line(&e.file)
        );
    }
    for (i, p) in e.expired.iter().enumerate() {
        // As the gate has it: an entry for cases this run left out does not fail it.
        let (head, left_out) = if e.expired_fails.get(i).copied().unwrap_or(true) {
            (style.paint("1;31", "expectations:"), "")
        } else {
            (
                style.paint("1;33", "expectations warning:"),
                ", but it applies only to cases this run left out (a run that runs them fails)",
            )
        };
        let _ = writeln!(
            s,
            "{head} the entry for '{}' in {} has expired (its `until` date has passed){left_out}: \
             renew the date or remove the entry",
            one_line(p),
            one_line(&e.file)
        );
    }
    for (i, p) in e.unmatched.iter().enumerate() {
        let why = e.unmatched_why.get(i).cloned().unwrap_or_default();
        let (code, word) = if e.strict {
            ("1;31", "error")
        } else {
            ("1;33", "warning")
        };
        let _ = writeln!(
            s,
            "{} the entry for '{}' in {} {why}",
            style.paint(code, &format!("expectations {word}:")),
            one_line(p),
            one_line(&e.file)
        );
    }
    s
}

/// The details of one failed output: header, reason, shapes, differences, diagnosis and the
/// mismatch table (also the `.diff` of a pending snapshot).
pub fn output_details(case: &str, ds: &str, o: &OutputResult, style: Style) -> String {
    details_with(case, ds, o, style, &RUN_SIDES)
}

/// What the two sides of a comparison are called.
struct Sides {
    /// The value on file (the table's and the shape line's left side).
    left: &'static str,
    /// The other value, as the table heads it.
    right: &'static str,
    /// The other value, as the shape line introduces it.
    got: &'static str,
}

/// In a run: the expected file against what was computed or produced.
const RUN_SIDES: Sides = Sides {
    left: "expected",
    right: "actual",
    got: "got",
};

/// In a pending snapshot's diff: what the file holds against what accepting writes.
const REVIEW_SIDES: Sides = Sides {
    left: "current file",
    right: "would write",
    got: "would write",
};

/// [`output_details`] with the two sides named.
fn details_with(case: &str, ds: &str, o: &OutputResult, style: Style, sides: &Sides) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\n{} {} {} output '{}'",
        style.paint("1;31", "---"),
        style.paint("1", &one_line(case)),
        one_line(ds),
        one_line(&o.name)
    );
    if let Some(r) = &o.reason {
        let _ = writeln!(s, "    {}", shorten(&one_line(r)));
    }
    match &o.expected_shape {
        Some(shape) => {
            let _ = writeln!(
                s,
                "    {} {} {}, {} {} {}; {} comparison",
                sides.left,
                o.dtype,
                crate::tensor::shape_text(shape),
                sides.got,
                o.actual_dtype,
                crate::tensor::shape_text(&o.actual_shape),
                if o.tolerant { "tolerant" } else { "exact" }
            );
        }
        None if o.computed.is_some() => {
            let _ = writeln!(
                s,
                "    no expected output yet; {} {} {}",
                sides.got,
                o.actual_dtype,
                crate::tensor::shape_text(&o.actual_shape)
            );
        }
        // The only other output without an expected shape: an error is required (the reason
        // above says whether by the spec or by one of this project's decisions).
        None => {
            let _ = writeln!(
                s,
                "    an error is required for these inputs (any expected output file is \
                 ignored); {} {} {}",
                sides.got,
                o.actual_dtype,
                crate::tensor::shape_text(&o.actual_shape)
            );
        }
    }
    if o.mismatches > 0 {
        let fmt = |v: Option<f64>| v.map_or("-".to_string(), short);
        let _ = writeln!(
            s,
            "    mismatches: {}, max abs diff {}, max rel diff {}",
            o.mismatches,
            fmt(o.max_abs_diff),
            fmt(o.max_rel_diff)
        );
    }
    // The reason line already ends with the diagnosis when there is one.
    if let Some(c) = o
        .diagnosis()
        .filter(|_| !o.reason.as_deref().unwrap_or("").contains("diagnosis:"))
    {
        let _ = writeln!(
            s,
            "    {} {} ({}){}",
            style.paint("1;36", "diagnosis:"),
            c.sentence(),
            c.id(),
            super::text::also_reproduced_by(&o.diagnoses[1..])
        );
    }
    if !o.first_mismatches.is_empty() {
        let rows: Vec<(String, String, String, String)> = o
            .first_mismatches
            .iter()
            .map(|m| {
                let idx: Vec<String> = m.index.iter().map(|i| i.to_string()).collect();
                (
                    format!("[{}]", idx.join(",")),
                    one_line(&m.expected),
                    one_line(&m.actual),
                    one_line(m.source.as_deref().unwrap_or("")),
                )
            })
            .collect();
        // Widths in characters, as `{:<w$}` pads (a string value may be non-ASCII).
        let width = |cells: Vec<&str>, head: &str| {
            cells
                .into_iter()
                .chain([head])
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        };
        let w0 = width(rows.iter().map(|r| r.0.as_str()).collect(), "index");
        let w1 = width(rows.iter().map(|r| r.1.as_str()).collect(), sides.left);
        let w2 = width(rows.iter().map(|r| r.2.as_str()).collect(), sides.right);
        let from = if rows.iter().any(|r| !r.3.is_empty()) {
            "correct value from"
        } else {
            ""
        };
        let head = format!(
            "    {:<w0$}  {:<w1$}  {:<w2$}  {from}",
            "index", sides.left, sides.right
        );
        let _ = writeln!(s, "{}", head.trim_end());
        for (i, e, a, src) in rows {
            let line = format!("    {i:<w0$}  {e:<w1$}  {a:<w2$}  {src}");
            let _ = writeln!(s, "{}", line.trim_end());
        }
        if o.mismatches > o.first_mismatches.len() {
            let _ = writeln!(
                s,
                "    ... and {} more",
                o.mismatches - o.first_mismatches.len()
            );
        }
    }
    s
}

/// The `.diff` text written beside a pending snapshot of output `k` (`--pending`), without
/// colour: the failure details of a failed output, or, for an output with no expected file, a
/// preview of what onnx-idx-check computed (`ours`).
pub fn pending_diff(case: &str, ds: &str, k: usize, o: &OutputResult, ours: &Tensor) -> String {
    if o.expected_shape.is_some() {
        // The comparison's reason says expected/got; the diff names its sides as review does.
        let mut o = o.clone();
        o.reason = o.reason.map(|r| {
            r.replacen(": expected ", ": current file ", 1)
                .replacen(", got ", ", would write ", 1)
        });
        let text = details_with(case, ds, &o, Style { color: false }, &REVIEW_SIDES);
        return text.trim_start_matches('\n').to_string();
    }
    format!(
        "--- {case} {ds} output '{}'\n    no expected output file ({ds}/output_{k}.pb); onnx-idx-check computed:\n    {}\n",
        o.name,
        crate::pending::preview(ours)
    )
}

/// The mismatch tables of every failed case, each ending with the command that re-runs the case
/// alone.
pub fn failure_details(cases: &[CaseResult], style: Style, rerun: &Rerun) -> String {
    let mut s = String::new();
    // An expected failure (XFAIL) is listed with its entry's reason and needs no details in
    // every CI log: the JSON, JUnit and Markdown reports keep them, and a run without
    // --expectations shows them.
    for c in cases
        .iter()
        .filter(|c| c.status == Status::Failed && needs_rerun(c))
    {
        for ds in &c.data_sets {
            for o in ds.outputs.iter().filter(|o| o.status == Status::Failed) {
                s.push_str(&output_details(&c.name, &ds.name, o, style));
            }
        }
        let _ = writeln!(
            s,
            "    {} {}",
            style.paint("2", "rerun:"),
            rerun.for_case(c)
        );
    }
    s
}

/// The rules of the gate the run did not meet, one line each after a blank line: skipped cases
/// under `--deny-skip` (their lines say only `SKIP`), `--min-cases`, `--require-op`; empty when
/// it met them. Failed cases and expectations have their own lines.
pub fn unmet_requirements(gate: &Gate, results: &[CaseResult], style: Style) -> String {
    let mut s = String::new();
    let denied = gate.skipped_denied(results).len();
    if denied > 0 {
        let _ = writeln!(
            s,
            "\n{} --deny-skip: {} skipped, and skipped cases fail the run",
            style.paint("1;31", "gate:"),
            super::counted(denied, "case was", "cases were")
        );
    }
    for r in gate.reasons.iter().filter(|r| r.kind.is_requirement()) {
        if s.is_empty() {
            s.push('\n');
        }
        let _ = writeln!(
            s,
            "{} {}",
            style.paint("1;31", "gate:"),
            one_line(&r.message)
        );
    }
    s
}

/// The `n` slowest cases, slowest first (all of them for 0), between a heading and a blank line;
/// ties keep case order.
pub fn slowest(results: &[CaseResult], n: usize) -> String {
    let mut by_time: Vec<&CaseResult> = results.iter().collect();
    by_time.sort_by_key(|c| std::cmp::Reverse(c.duration));
    let shown = if n == 0 {
        by_time.len()
    } else {
        n.min(by_time.len())
    };
    if shown == 0 {
        return String::new();
    }
    let mut s = if shown == by_time.len() {
        format!(
            "\nDurations, slowest first ({}):\n",
            super::counted(shown, "case", "cases")
        )
    } else {
        format!("\nThe {shown} slowest of {} cases:\n", by_time.len())
    };
    for c in &by_time[..shown] {
        let _ = writeln!(
            s,
            "  {:>8}  {}",
            duration_text(c.duration),
            one_line(&c.name)
        );
    }
    s.push('\n');
    s
}

/// The per-operator rows (`  Gather-13  5 passed, 2 xfailed`), then the summary line between
/// rules.
pub fn summary(summary: &Summary, duration: Duration, style: Style) -> String {
    let mut table = String::new();
    let ops: Vec<String> = summary.by_op.keys().map(|op| one_line(op)).collect();
    let w = ops.iter().map(|op| op.chars().count()).max().unwrap_or(0);
    for (op, c) in ops.iter().zip(summary.by_op.values()) {
        let parts: Vec<String> = c
            .parts()
            .into_iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!("{n} {what}"))
            .collect();
        let _ = writeln!(table, "  {op:<w$}  {}", parts.join(", "));
    }
    format!("{table}{}", summary_line(summary, duration, style))
}

/// The closing line alone (also printed to stderr when a machine format takes stdout):
/// `Summary [   420ms] 37 cases: 30 passed, 1 failed, 5 xfailed, 1 expired`. Each case is
/// counted once (see [`Counts`](crate::verdict::Counts)); categories other than passed appear
/// only when non-zero.
pub fn summary_line(summary: &Summary, duration: Duration, style: Style) -> String {
    let mut parts: Vec<String> = summary
        .outcomes
        .parts()
        .into_iter()
        .map(|(n, what)| {
            let colour = match what {
                "passed" => "32",
                "failed" | "xpassed" | "expired" => "31",
                "errored" => "35",
                _ => "33",
            };
            style.paint(colour, &format!("{n} {what}"))
        })
        .collect();
    if !summary.faults.is_empty() {
        let faults: Vec<String> = summary
            .faults
            .iter()
            .map(|(f, n)| format!("{n} {}", f.words()))
            .collect();
        parts.push(format!("runtime: {}", faults.join(", ")));
    }
    if summary.not_run > 0 {
        parts.push(format!("{} not run (--fail-fast)", summary.not_run));
    }
    let rule = "─".repeat(12);
    let noun = if summary.total == 1 { "case" } else { "cases" };
    format!(
        "{rule}\n{} {} {} {noun}: {}\n",
        style.paint("1", "Summary"),
        bracketed(duration),
        summary.total,
        parts.join(", ")
    )
}

/// A progress bar the streaming [`HumanReporter`] drives (the command line's is indicatif's on a
/// terminal); the library shows none.
pub trait ProgressBar {
    /// The run starts with `cases` cases.
    fn start(&mut self, cases: usize);
    /// Runs `print` (which writes a line) with the bar out of the way.
    fn suspend(&self, print: &mut dyn FnMut());
    /// One more case done.
    fn inc(&self);
    /// Removes the bar.
    fn finish(&self);
}

/// No bar.
pub struct NoBar;

impl ProgressBar for NoBar {
    fn start(&mut self, _cases: usize) {}
    fn suspend(&self, print: &mut dyn FnMut()) {
        print()
    }
    fn inc(&self) {}
    fn finish(&self) {}
}

/// Where and how a [`HumanReporter`] writes.
enum Mode {
    /// Every line as the run goes (the terminal), with a progress bar on long runs.
    Stream {
        out: Box<dyn Write>,
        progress: Box<dyn ProgressBar>,
    },
    /// The whole report when the run ends, from the final results.
    Document(Dest),
    /// The run's failed requirements and expectations and the summary line alone, on stderr
    /// (a machine-readable report has stdout).
    Brief,
}

/// The human report as a [`Reporter`].
pub struct HumanReporter {
    mode: Mode,
    style: Style,
    rerun: Rerun,
    /// How many of the slowest cases to list (`--durations N`; 0 for all).
    durations: Option<usize>,
    /// The first error writing a streamed line (reported when the run ends).
    error: Option<std::io::Error>,
}

impl HumanReporter {
    /// Streams to stdout as cases finish, with `progress` kept out of the lines' way.
    pub fn terminal(style: Style, rerun: Rerun, progress: Box<dyn ProgressBar>) -> HumanReporter {
        HumanReporter {
            mode: Mode::Stream {
                out: Box::new(std::io::stdout()),
                progress,
            },
            style,
            rerun,
            durations: None,
            error: None,
        }
    }

    /// The whole report to `dest` when the run ends, without colour.
    pub fn document(dest: Dest, rerun: Rerun) -> HumanReporter {
        HumanReporter {
            mode: Mode::Document(dest),
            style: Style { color: false },
            rerun,
            durations: None,
            error: None,
        }
    }

    /// The closing lines alone, on stderr, without colour.
    pub fn brief() -> HumanReporter {
        HumanReporter {
            mode: Mode::Brief,
            style: Style { color: false },
            rerun: Rerun::default(),
            durations: None,
            error: None,
        }
    }

    /// Lists the `n` slowest cases before the summary (0 for all of them).
    pub fn with_durations(mut self, n: Option<usize>) -> HumanReporter {
        self.durations = n;
        self
    }

    /// Everything after the case lines: failure details, the expectations file's problems,
    /// unmet requirements, the per-operator table and the summary line.
    fn tail(&self, end: &RunEnd<'_>) -> String {
        let mut tail = failure_details(end.results, self.style, &self.rerun);
        if let Some(er) = end.expectations {
            tail.push_str(&expectations(er, self.style));
        }
        tail.push_str(&unmet_requirements(end.gate, end.results, self.style));
        if let Some(n) = self.durations {
            tail.push_str(&slowest(end.results, n));
        }
        if let Some(rt) = end.runtime {
            let _ = writeln!(
                tail,
                "  runtime {} {} ({})",
                one_line(&rt.name),
                one_line(&rt.version),
                one_line(&rt.command)
            );
        }
        tail.push_str(&summary(end.summary, end.duration, self.style));
        tail
    }
}

impl Reporter for HumanReporter {
    fn report(&mut self, event: &Event<'_>) -> Result<()> {
        let (style, rerun) = (self.style, &self.rerun);
        match (&mut self.mode, event) {
            (Mode::Stream { progress, .. }, Event::RunStarted { cases }) => {
                progress.start(*cases);
            }
            (Mode::Stream { out, progress }, Event::CaseFinished(c)) => {
                let line = case_line(c, style, &rerun.for_case(c));
                progress.suspend(&mut || {
                    if let Err(e) = out.write_all(line.as_bytes()) {
                        self.error.get_or_insert(e);
                    }
                });
                progress.inc();
            }
            (Mode::Stream { .. }, Event::RunFinished(end)) => {
                let tail = self.tail(end);
                let Mode::Stream { out, progress } = &mut self.mode else {
                    unreachable!()
                };
                progress.finish();
                out.write_all(tail.as_bytes()).ok();
                out.flush().ok();
                if let Some(e) = self.error.take() {
                    if e.kind() != std::io::ErrorKind::BrokenPipe {
                        return Err(e).context("writing the report");
                    }
                }
            }
            (Mode::Document(_), Event::RunFinished(end)) => {
                let mut s = String::new();
                for c in end.results {
                    s.push_str(&case_line(c, style, &rerun.for_case(c)));
                }
                s.push_str(&self.tail(end));
                let Mode::Document(dest) = &self.mode else {
                    unreachable!()
                };
                dest.write(&s)?;
            }
            (Mode::Brief, Event::RunFinished(end)) => {
                let mut s = String::new();
                // The cases' own reason only when skipped cases are among them: the summary line
                // counts the others, but not that a skip fails the run.
                let denied = !end.gate.skipped_denied(end.results).is_empty();
                for r in end
                    .gate
                    .reasons
                    .iter()
                    .filter(|r| denied || r.kind != crate::verdict::GateKind::Cases)
                {
                    let _ = writeln!(s, "{}", one_line(&r.message));
                }
                s.push_str(&summary_line(end.summary, end.duration, style));
                eprint!("{s}");
            }
            _ => {}
        }
        Ok(())
    }
}

/// A difference for people: 6 significant digits without trailing zeros (`3.3`, `0.425`), in
/// exponent form only when very small or very large (`1.5e-9`).
fn short(x: f64) -> String {
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let magnitude = x.abs().log10().floor() as i32;
    if (-4..6).contains(&magnitude) {
        let decimals = usize::try_from(5 - magnitude).unwrap_or(0);
        trim(format!("{x:.decimals$}"))
    } else {
        let s = format!("{x:.5e}");
        match s.split_once('e') {
            Some((m, e)) => format!("{}e{e}", trim(m.to_string())),
            None => s,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{duration_text, short, shorten, SHOWN_CHARS};
    use std::time::Duration;

    #[test]
    fn long_text_is_shortened_in_the_middle() {
        assert_eq!(shorten("short"), "short");
        let exact = "x".repeat(SHOWN_CHARS);
        assert_eq!(shorten(&exact), exact);
        // Head and tail stay: the cause a runtime names last is still shown.
        let long = format!("HEAD{}TAIL: axis value is not set", "é".repeat(500_000));
        let shown = shorten(&long);
        assert!(shown.starts_with("HEADéé"), "{}", &shown[..20]);
        assert!(shown.ends_with("éTAIL: axis value is not set"));
        let cut = long.chars().count() - SHOWN_CHARS;
        assert!(shown.contains(&format!(" … [{cut} chars] … ")));
        assert!(shown.chars().count() < SHOWN_CHARS + 40);
    }

    #[test]
    fn durations_show_three_digits_in_their_unit() {
        let ns = Duration::from_nanos;
        assert_eq!(duration_text(ns(0)), "0ns");
        assert_eq!(duration_text(ns(812)), "812ns");
        assert_eq!(duration_text(ns(1_000)), "1.00µs");
        assert_eq!(duration_text(ns(41_240)), "41.2µs");
        assert_eq!(duration_text(ns(412_400)), "412µs");
        assert_eq!(duration_text(ns(3_071_000)), "3.07ms");
        assert_eq!(duration_text(ns(420_000_000)), "420ms");
        assert_eq!(duration_text(ns(1_250_000_000)), "1.25s");
        assert_eq!(duration_text(Duration::from_secs(125)), "125s");
        // Rounding up stays in the unit and within the column.
        assert_eq!(duration_text(ns(999_999)), "1000µs");
        assert!(duration_text(Duration::from_secs(99_999)).chars().count() <= 8);
    }

    #[test]
    fn differences_read_as_people_write_them() {
        assert_eq!(short(3.3000000000000003), "3.3");
        assert_eq!(short(4.0), "4");
        assert_eq!(short(0.425), "0.425");
        assert_eq!(short(0.3666666666), "0.366667");
        assert_eq!(short(123456.7), "123457");
        assert_eq!(short(1234567.0), "1.23457e6");
        assert_eq!(short(99999.5), "99999.5");
        assert_eq!(short(0.0001), "0.0001");
        assert_eq!(short(1.5e-9), "1.5e-9");
        assert_eq!(short(0.0), "0");
        assert_eq!(short(f64::INFINITY), "inf");
    }
}
