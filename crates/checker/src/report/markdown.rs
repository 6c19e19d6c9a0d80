//! The Markdown report (`--format markdown`, `--report markdown=FILE`), made for GitHub's job
//! summary (`$GITHUB_STEP_SUMMARY`): the counts, the gate, the per-operator table, then each
//! failed or errored case in a collapsed `<details>` block with its reason, mismatch tables and
//! rerun command, and the skipped cases in one more.
//!
//! GitHub-flavoured Markdown renders a table only when every row has as many cells as its header,
//! and raw HTML ends at the first blank line; so every text that comes from a case (names,
//! reasons, values) is escaped where it lands: in Markdown text, HTML's `&`, `<` and `>` become
//! entities, Markdown's punctuation (`|`, `` ` ``, `*`, ...) is backslash-escaped and control
//! characters are shown as `\n`, `\t`, ...; inside HTML (`<summary>`) only the entities and the
//! control characters apply; a rerun command goes in a code fence longer than any run of
//! backticks it holds.
//!
//! ```
//! use onnx_idx_check::report::{markdown, Rerun};
//! use onnx_idx_check::{check, CheckOptions};
//!
//! let options = CheckOptions::default().filter("^test_scatternd$");
//! let report = check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &options)?;
//! let md = markdown::render(&report.run_end(), &Rerun::default());
//! // Every table row has as many cells as its header.
//! let rows: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
//! assert!(rows.iter().all(|r| r.matches('|').count() == rows[0].matches('|').count()));
//! # Ok::<(), onnx_idx_check::CheckError>(())
//! ```

use super::{label, needs_rerun, Dest, Event, Reporter, Rerun, RunEnd};
use crate::verdict::{CaseResult, OutputResult, Status, Summary};
use anyhow::Result;
use std::fmt::Write as _;

/// Renders the report.
///
/// ```
/// use onnx_idx_check::report::{markdown, Rerun};
/// use onnx_idx_check::{check, CheckOptions};
///
/// let report = check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &CheckOptions::default().filter("^test_gather_elements"))?;
/// let md = markdown::render(&report.run_end(), &Rerun::default());
/// assert!(md.starts_with("## onnx-idx-check: "));
/// assert!(md.contains("**Gate: passed**"));
/// assert!(md.contains("| GatherElements-13 |"));
/// # Ok::<(), onnx_idx_check::CheckError>(())
/// ```
pub fn render(end: &RunEnd<'_>, rerun: &Rerun) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "## onnx-idx-check: {}\n", counts(end.summary));
    if end.gate.passed() {
        s.push_str("**Gate: passed**\n\n");
    } else {
        s.push_str("**Gate: failed**\n\n");
        for r in &end.gate.reasons {
            let _ = writeln!(s, "- {}", text(&r.message));
        }
        s.push('\n');
    }
    if !end.summary.by_op.is_empty() {
        // The expectations' columns only when a case is under them.
        let o = &end.summary.outcomes;
        let listed = o.xfailed + o.xpassed + o.expired > 0;
        s.push_str("| Operator | Passed | Failed | Errored | Skipped |");
        s.push_str(if listed {
            " XFailed | XPassed | Expired |\n| :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n"
        } else {
            "\n| :--- | ---: | ---: | ---: | ---: |\n"
        });
        for (op, c) in &end.summary.by_op {
            let _ = write!(
                s,
                "| {} | {} | {} | {} | {} |",
                text(op),
                c.passed,
                c.failed,
                c.errored,
                c.skipped
            );
            if listed {
                let _ = write!(s, " {} | {} | {} |", c.xfailed, c.xpassed, c.expired);
            }
            s.push('\n');
        }
        s.push('\n');
    }
    let failures: Vec<&CaseResult> = end
        .results
        .iter()
        .filter(|c| matches!(c.status, Status::Failed | Status::Errored) || label(c) == "XPASS")
        .collect();
    if !failures.is_empty() {
        s.push_str("### Failures\n\n");
        for c in failures {
            failure(&mut s, c, rerun);
        }
    }
    let skipped: Vec<&CaseResult> = end
        .results
        .iter()
        .filter(|c| c.status == Status::Skipped)
        .collect();
    if !skipped.is_empty() {
        let _ = writeln!(
            s,
            "<details>\n<summary>Skipped cases ({})</summary>\n",
            skipped.len()
        );
        s.push_str("| Case | Reason |\n| :--- | :--- |\n");
        for c in skipped {
            let _ = writeln!(
                s,
                "| {} | {} |",
                text(&c.name),
                text(c.reason.as_deref().unwrap_or(""))
            );
        }
        s.push_str("\n</details>\n\n");
    }
    s
}

/// `5 cases: 1 passed, 2 failed, 1 xfailed, 1 expired`: each case counted once, categories
/// other than passed only when non-zero, as in the human summary line.
fn counts(summary: &Summary) -> String {
    let mut parts: Vec<String> = summary
        .outcomes
        .parts()
        .into_iter()
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
    if summary.not_run > 0 {
        parts.push(format!("{} not run (--fail-fast)", summary.not_run));
    }
    let noun = if summary.total == 1 { "case" } else { "cases" };
    format!("{} {noun}: {}", summary.total, parts.join(", "))
}

/// One failed or errored case as a collapsed block.
fn failure(s: &mut String, c: &CaseResult, rerun: &Rerun) {
    let _ = writeln!(
        s,
        "<details>\n<summary><strong>{}</strong> <code>{}</code></summary>\n",
        label(c),
        html(&c.name)
    );
    if let Some(reason) = &c.reason {
        let _ = writeln!(s, "{}\n", text(reason));
    }
    if let Some(e) = &c.expectation {
        let _ = writeln!(
            s,
            "Expectations entry {}: {} ({})\n",
            text(&e.entry),
            text(e.outcome.as_str()),
            text(&e.reason)
        );
    }
    for ds in &c.data_sets {
        for o in ds.outputs.iter().filter(|o| o.status == Status::Failed) {
            output(s, &ds.name, o);
        }
    }
    if matches!(c.status, Status::Failed | Status::Errored) && needs_rerun(c) {
        let command = rerun.for_case(c);
        let fence = "`".repeat(longest_backtick_run(&command).max(2) + 1);
        let _ = writeln!(s, "Rerun:\n\n{fence}sh\n{command}\n{fence}\n");
    }
    s.push_str("</details>\n\n");
}

/// A failed output: its reason, shapes, diagnoses and mismatch table.
fn output(s: &mut String, ds: &str, o: &OutputResult) {
    let _ = writeln!(s, "**{}**, output '{}'\n", text(ds), text(&o.name));
    let shapes = match &o.expected_shape {
        Some(shape) => format!(
            "expected {} {}, got {} {}; {} comparison",
            o.dtype,
            crate::tensor::shape_text(shape),
            o.actual_dtype,
            crate::tensor::shape_text(&o.actual_shape),
            if o.tolerant { "tolerant" } else { "exact" }
        ),
        None => format!(
            "no expected output; got {} {}",
            o.actual_dtype,
            crate::tensor::shape_text(&o.actual_shape)
        ),
    };
    let _ = writeln!(s, "{}\n", text(&shapes));
    if !o.diagnoses.is_empty() {
        let named: Vec<String> = o
            .diagnoses
            .iter()
            .map(|c| format!("{} ({})", c.sentence(), c.id()))
            .collect();
        let _ = writeln!(s, "Diagnosis: {}\n", text(&named.join("; also: ")));
    }
    if o.first_mismatches.is_empty() {
        return;
    }
    s.push_str("| Index | Expected | Actual | Correct value from |\n");
    s.push_str("| :--- | :--- | :--- | :--- |\n");
    for m in &o.first_mismatches {
        let idx: Vec<String> = m.index.iter().map(|i| i.to_string()).collect();
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} |",
            text(&format!("[{}]", idx.join(","))),
            text(&m.expected),
            text(&m.actual),
            text(m.source.as_deref().unwrap_or(""))
        );
    }
    s.push('\n');
    if o.mismatches > o.first_mismatches.len() {
        let _ = writeln!(
            s,
            "... and {} more\n",
            o.mismatches - o.first_mismatches.len()
        );
    }
}

/// Control characters as visible escapes (`\n`, `\t`, `\u{1b}`): every text stays on its line.
fn visible(c: char, out: &mut String) -> bool {
    if c.is_control() {
        out.extend(c.escape_debug());
        true
    } else {
        false
    }
}

/// Text for Markdown (paragraphs, list items, table cells): one line, the punctuation that
/// Markdown reads backslash-escaped, HTML's special characters as entities. A leading `-`, `+`,
/// `=` or `1. ` is escaped too, so text at the start of a line never becomes a list or a heading.
pub(crate) fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    let s = if s.starts_with(['-', '+', '=']) {
        out.push('\\');
        s
    } else if digits > 0
        && s[digits..].starts_with(['.', ')'])
        && s[digits + 1..]
            .chars()
            .next()
            .is_none_or(|c| c == ' ' || c == '\t')
    {
        out.push_str(&s[..digits]);
        out.push('\\');
        &s[digits..]
    } else {
        s
    };
    for c in s.chars() {
        if visible(c, &mut out) {
            continue;
        }
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            // Emphasis, code, links, tables, headings, strike-through, images, GitHub's math.
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '#' | '~' | '!' | '$' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// Text inside raw HTML (`<summary>`, `<code>`): one line, HTML's special characters as entities.
pub(crate) fn html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if visible(c, &mut out) {
            continue;
        }
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

fn longest_backtick_run(s: &str) -> usize {
    s.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// The Markdown report as a [`Reporter`]: the document, written when the run ends.
pub struct MarkdownReporter {
    /// Where it goes.
    pub dest: Dest,
    /// The rerun command of each failed case.
    pub rerun: Rerun,
}

impl Reporter for MarkdownReporter {
    fn report(&mut self, event: &Event<'_>) -> Result<()> {
        match event {
            Event::RunFinished(end) => self.dest.write(&render(end, &self.rerun)),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_escapes_html_and_table_punctuation_on_one_line() {
        assert_eq!(text("a|b"), "a\\|b");
        assert_eq!(text("<script>&"), "&lt;script&gt;&amp;");
        assert_eq!(text("x\ny"), "x\\ny");
        assert_eq!(text("`c`"), "\\`c\\`");
        assert_eq!(text("- x"), "\\- x");
        assert_eq!(text("12. x"), "12\\. x");
        assert_eq!(text("4.0"), "4.0");
        assert_eq!(html("<b>\"&\n"), "&lt;b&gt;&quot;&amp;\\n");
        assert_eq!(longest_backtick_run("a ``` b ` c"), 3);
    }
}
