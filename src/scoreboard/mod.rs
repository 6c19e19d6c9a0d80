//! The HTML scoreboard (`--report html=FILE` on `run` and `hunt`): one self-contained page, in
//! the spirit of wpt.fyi's interop grid, of operator versions (and coverage traits) x runtimes,
//! each cell a bar of its cases' shares of passed / failed / refused / crashed / other, with the
//! cases of a cell, filters, and for a hunt its findings by severity.
//!
//! The page is `page.html` with `page.css` and `page.js` inlined (no network, no CDN, no font:
//! it opens from a `file://` URL and from a CI artifact); the data is one JSON document in a
//! `<script type="application/json">` whose `<`, `>`, `&`, U+2028 and U+2029 are escaped, so no
//! case name or runtime message can end the script; the script puts every string it shows
//! through `textContent`. Everything but the timings (`wall_ms`, `duration_ms`) follows from
//! the input alone.

pub(crate) mod hunt;

use onnx_idx_check::report::{label, Dest, Event, Reporter, Rerun, ToolInfo};
use onnx_idx_check::verdict::{CaseResult, ExpectationOutcome, Fault, RuntimeInfo, Status};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

const PAGE: &str = include_str!("page.html");
const STYLE: &str = include_str!("page.css");
const SCRIPT: &str = include_str!("page.js");

/// The version of the embedded JSON document's shape.
const SCHEMA_VERSION: u32 = 1;

/// Where a case's verdict for one runtime falls on the scoreboard.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Category {
    /// The runtime's outputs are right (an unexpected pass of an expectations entry, `XPASS`,
    /// among them: the runtime got it right).
    Passed,
    /// Wrong outputs (`FAIL`), an output missing (`NOTHING`) or outputs that change between runs
    /// (`NONDET`).
    Failed,
    /// The runtime raised an error where the spec requires outputs (`REFUSED`).
    Refused,
    /// Its process died (`CRASHED`) or gave no answer in time (`TIMEOUT`).
    Crashed,
    /// What judges no runtime: a case skipped (`SKIP`), errored before the runtime was asked
    /// (`ERROR`, `NEW`), or a failure an expectations entry lists (`XFAIL`).
    Other,
}

impl Category {
    /// Every category, in the order of the bars and the legend.
    pub(crate) const ALL: [Category; 5] = [
        Category::Passed,
        Category::Failed,
        Category::Refused,
        Category::Crashed,
        Category::Other,
    ];

    /// Its id in the page's data (`passed`).
    pub(crate) fn id(self) -> &'static str {
        match self {
            Category::Passed => "passed",
            Category::Failed => "failed",
            Category::Refused => "refused",
            Category::Crashed => "crashed",
            Category::Other => "other",
        }
    }

    /// The glyph beside its colour, so colour never carries it alone.
    fn glyph(self) -> &'static str {
        match self {
            Category::Passed => "✓",
            Category::Failed => "✗",
            Category::Refused => "⊘",
            Category::Crashed => "‼",
            Category::Other => "–",
        }
    }

    /// What falls here, for the legend (for `run`; a hunt's words are in [`hunt`]).
    fn maps(self) -> &'static str {
        match self {
            Category::Passed => "PASS, XPASS: the outputs are right",
            Category::Failed => "FAIL, NOTHING, NONDET: wrong, missing or unstable outputs",
            Category::Refused => "REFUSED: an error where the spec requires outputs",
            Category::Crashed => "CRASHED, TIMEOUT: the process died or hung",
            Category::Other => {
                "SKIP, ERROR, NEW, XFAIL, EXPIRED: skipped, not evaluable, or a known failure"
            }
        }
    }
}

/// The category of a case's verdict (see [`Category`] for what maps where).
pub(crate) fn category(c: &CaseResult) -> Category {
    match c.expectation.as_ref().map(|e| e.outcome) {
        Some(ExpectationOutcome::ExpectedFailure | ExpectationOutcome::Expired) => {
            return Category::Other
        }
        Some(ExpectationOutcome::UnexpectedlyPassed) => return Category::Passed,
        _ => {}
    }
    if c.is_new() {
        return Category::Other;
    }
    match (c.status, c.fault) {
        (Status::Passed, _) => Category::Passed,
        (_, Some(Fault::Refused)) => Category::Refused,
        (_, Some(Fault::Crashed | Fault::TimedOut)) => Category::Crashed,
        (_, Some(Fault::WroteNothing | Fault::Nondeterministic)) | (Status::Failed, None) => {
            Category::Failed
        }
        (Status::Errored | Status::Skipped, None) => Category::Other,
    }
}

/// The cases of one cell, by category.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Counts {
    passed: u64,
    failed: u64,
    refused: u64,
    crashed: u64,
    other: u64,
}

impl Counts {
    /// Counts one more case of `c`.
    fn add(&mut self, c: Category) {
        *match c {
            Category::Passed => &mut self.passed,
            Category::Failed => &mut self.failed,
            Category::Refused => &mut self.refused,
            Category::Crashed => &mut self.crashed,
            Category::Other => &mut self.other,
        } += 1;
    }

    /// Every case counted.
    #[cfg(test)]
    fn total(&self) -> u64 {
        self.passed + self.failed + self.refused + self.crashed + self.other
    }
}

/// One runtime's verdict on one case, as the page shows it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Verdict {
    /// Its [`Category`].
    cat: Category,
    /// The label of the human report (`FAIL`, `REFUSED`, ...), or a hunt's word.
    label: String,
    /// The id of the bug class that reproduces the first wrong output.
    #[serde(skip_serializing_if = "Option::is_none")]
    diagnosis: Option<String>,
    /// Why it did not pass: the runtime's message for a refusal or a crash.
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

impl Verdict {
    /// The verdict of a case that ran.
    fn of(c: &CaseResult) -> Verdict {
        Verdict {
            cat: category(c),
            label: label(c).to_string(),
            diagnosis: crate::matrix::diagnosis(c).map(str::to_string),
            reason: c.reason.clone().filter(|_| c.status != Status::Passed),
        }
    }

    /// A verdict given by a category and a word (a hunt's `tried.tsv`).
    pub(crate) fn word(cat: Category, word: &str) -> Verdict {
        Verdict {
            cat,
            label: word.to_string(),
            diagnosis: None,
            reason: None,
        }
    }
}

/// One case: its operator versions and traits (the rows it counts in) and each runtime's
/// verdict.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Case {
    /// Its name.
    pub(crate) name: String,
    /// Its operator versions (`Gather-13`); `(no operator)` when none was resolved.
    pub(crate) ops: Vec<String>,
    /// The coverage traits its inputs exercise, over every node and data set; none when our
    /// kernels could not trace it.
    pub(crate) traits: Vec<String>,
    /// The command that reruns it alone, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) rerun: Option<String>,
    /// Each runtime's verdict, in the order of [`Page::runtimes`]; `None` where it did not run
    /// (`--fail-fast`).
    pub(crate) results: Vec<Option<Verdict>>,
}

/// The row a case without a resolved operator counts in.
const NO_OPERATOR: &str = "(no operator)";

/// One runtime's column.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Runtime {
    /// Its name.
    pub(crate) name: String,
    /// The version its worker gave, when one ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) version: Option<String>,
    /// Wall time of its run, in milliseconds (a timing: not deterministic).
    pub(crate) duration_ms: u64,
    /// Its cases by category.
    pub(crate) totals: Counts,
}

/// One row of a grid: its key and a cell per runtime.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Row {
    /// `Gather-13`, or a trait (`negative-indices`).
    pub(crate) key: String,
    /// Each runtime's cases of this row, by category.
    pub(crate) cells: Vec<Counts>,
}

/// The legend entry of a category.
#[derive(Clone, Debug, PartialEq, Serialize)]
struct LegendEntry {
    id: &'static str,
    glyph: &'static str,
    maps: String,
}

/// A finding of a hunt, as the page shows it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Finding {
    /// Its class's id (`wrong-output`), the severity order's key.
    pub(crate) class: String,
    /// Its class as a heading (`Wrong output`).
    pub(crate) title: String,
    /// Where it was seen: `Gather-1/11, GatherND-12`.
    pub(crate) operators: String,
    /// The data types it was seen on.
    pub(crate) dtypes: Vec<String>,
    /// The diagnosis, `none` for none.
    pub(crate) diagnosis: String,
    /// The minimal case's directory under the hunt's output.
    pub(crate) case: String,
    /// The `## Expected` section of its `REPORT.md`, clipped.
    pub(crate) expected: String,
    /// The `## Actual` section, clipped.
    pub(crate) actual: String,
    /// The runtime's message (why the minimal case did not pass).
    pub(crate) reason: String,
    /// Its `REPORT.md`, relative to the page's directory.
    pub(crate) report: String,
    /// Disagreements seen with this behaviour.
    pub(crate) seen: u64,
}

/// The embedded document.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Page {
    schema_version: u32,
    /// `run` or `hunt`.
    kind: &'static str,
    tool: Tool,
    /// The run's PATHs, or the hunt's output directory.
    paths: Vec<String>,
    /// Wall time, in milliseconds (a timing: not deterministic).
    wall_ms: u64,
    runtimes: Vec<Runtime>,
    legend: Vec<LegendEntry>,
    /// The grid of operator versions x runtimes.
    ops: Vec<Row>,
    /// The grid of traits x runtimes.
    traits: Vec<Row>,
    cases: Vec<Case>,
    /// A hunt's findings, most severe first; `None` for a run.
    #[serde(skip_serializing_if = "Option::is_none")]
    findings: Option<Vec<Finding>>,
    /// What the page wants its reader to know (what a grid leaves out).
    notes: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
struct Tool {
    name: &'static str,
    version: &'static str,
}

/// One runtime's results, as a run has them.
pub(crate) struct Column<'a> {
    /// The column's name.
    pub(crate) name: &'a str,
    /// The runtime, when one ran.
    pub(crate) runtime: Option<&'a RuntimeInfo>,
    /// Its cases.
    pub(crate) results: &'a [CaseResult],
    /// Its wall time.
    pub(crate) duration: Duration,
}

/// Orders operator versions by operator, then version as a number (`Gather-9` before
/// `Gather-13`); other keys by name. The key itself comes last, so no two keys share a row.
fn row_order(key: &str) -> (String, i64, String) {
    match key.rsplit_once('-').map(|(op, v)| (op, v.parse::<i64>())) {
        Some((op, Ok(v))) => (op.to_string(), v, key.to_string()),
        _ => (key.to_string(), -1, key.to_string()),
    }
}

/// The rows of one grid: for every key any case has, each runtime's cases by category.
fn grid<'c>(
    cases: &'c [Case],
    keys: impl Fn(&'c Case) -> &'c [String],
    runtimes: usize,
) -> Vec<Row> {
    let mut rows: BTreeMap<(String, i64, String), Row> = BTreeMap::new();
    for case in cases {
        let mut seen = BTreeSet::new();
        for key in keys(case) {
            if !seen.insert(key) {
                continue;
            }
            let row = rows.entry(row_order(key)).or_insert_with(|| Row {
                key: key.clone(),
                cells: vec![Counts::default(); runtimes],
            });
            for (cell, v) in row.cells.iter_mut().zip(&case.results) {
                if let Some(v) = v {
                    cell.add(v.cat);
                }
            }
        }
    }
    rows.into_values().collect()
}

impl Page {
    /// The page of a run over `columns` (one for a single runtime, or our kernels against the
    /// expected outputs); `rerun` gives each case's rerun command.
    pub(crate) fn of_run(
        tool: &ToolInfo,
        paths: &[PathBuf],
        columns: &[Column<'_>],
        rerun: &dyn Fn(&CaseResult) -> Option<String>,
    ) -> Page {
        let mut cases: Vec<Case> = Vec::new();
        let mut index: BTreeMap<&str, usize> = BTreeMap::new();
        for (k, col) in columns.iter().enumerate() {
            for c in col.results {
                let at = *index.entry(c.name.as_str()).or_insert_with(|| {
                    cases.push(Case {
                        name: c.name.clone(),
                        ops: if c.op_versions.is_empty() {
                            vec![NO_OPERATOR.to_string()]
                        } else {
                            c.op_versions.clone()
                        },
                        traits: Vec::new(),
                        rerun: rerun(c),
                        results: vec![None; columns.len()],
                    });
                    cases.len() - 1
                });
                let case = &mut cases[at];
                let mut traits: BTreeSet<String> = case.traits.drain(..).collect();
                traits.extend(c.traits.iter().flat_map(|(_, t)| t.iter().cloned()));
                case.traits = traits.into_iter().collect();
                case.results[k] = Some(Verdict::of(c));
            }
        }
        let runtimes = columns
            .iter()
            .map(|col| {
                let mut totals = Counts::default();
                for c in col.results {
                    totals.add(category(c));
                }
                Runtime {
                    name: col.name.to_string(),
                    version: col.runtime.map(|r| r.version.clone()),
                    duration_ms: millis(col.duration),
                    totals,
                }
            })
            .collect();
        let wall = columns.iter().map(|c| c.duration).sum();
        let notes = vec![
            "A case counts in the row of each operator version it tests, and in the row of each \
             trait its inputs exercise; a case our kernels cannot evaluate has no traits."
                .to_string(),
        ];
        Page::assemble(tool, "run", paths, wall, runtimes, cases, None, notes)
    }

    /// The page from its parts: the grids follow from the cases.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn assemble(
        tool: &ToolInfo,
        kind: &'static str,
        paths: &[PathBuf],
        wall: Duration,
        runtimes: Vec<Runtime>,
        cases: Vec<Case>,
        findings: Option<Vec<Finding>>,
        notes: Vec<String>,
    ) -> Page {
        let n = runtimes.len();
        let legend_words = if kind == "hunt" {
            hunt::legend
        } else {
            |c: Category| c.maps().to_string()
        };
        Page {
            schema_version: SCHEMA_VERSION,
            kind,
            tool: Tool {
                name: tool.name,
                version: tool.version,
            },
            paths: paths.iter().map(|p| p.display().to_string()).collect(),
            wall_ms: millis(wall),
            ops: grid(&cases, |c| &c.ops, n),
            traits: grid(&cases, |c| &c.traits, n),
            legend: Category::ALL
                .iter()
                .map(|&c| LegendEntry {
                    id: c.id(),
                    glyph: c.glyph(),
                    maps: legend_words(c),
                })
                .collect(),
            runtimes,
            cases,
            findings,
            notes,
        }
    }

    /// The whole HTML document.
    pub(crate) fn render(&self) -> String {
        let data = script_json(&serde_json::to_string(self).unwrap_or_else(|_| "{}".into()));
        let title = format!("{} {} scoreboard", self.tool.name, self.tool.version);
        // The template's markers are replaced once each, data last: no inserted text is
        // scanned for a marker again.
        let mut out = String::with_capacity(PAGE.len() + STYLE.len() + SCRIPT.len() + data.len());
        let mut rest = PAGE;
        for (marker, value) in [
            ("{{title}}", html_text(&title)),
            ("{{style}}", STYLE.to_string()),
            ("{{data}}", data),
            ("{{script}}", SCRIPT.to_string()),
        ] {
            if let Some((before, after)) = rest.split_once(marker) {
                out.push_str(before);
                out.push_str(&value);
                rest = after;
            }
        }
        out.push_str(rest);
        out
    }
}

/// Milliseconds, rounded down.
fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// JSON made safe inside `<script type="application/json">`: `<`, `>` and `&` as `\u003c`
/// (no `</script>` or `<!--` can appear), and U+2028 / U+2029 escaped too. These characters
/// occur only inside JSON strings, where the escapes mean the same.
pub(crate) fn script_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// Text escaped for an HTML element's content.
fn html_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The scoreboard of a single run as a [`Reporter`]: the page, written when the run ends.
pub(crate) struct HtmlReporter {
    /// Where it goes.
    pub(crate) dest: Dest,
    /// The rerun command of each case.
    pub(crate) rerun: Rerun,
    /// The run's PATHs.
    pub(crate) paths: Vec<PathBuf>,
    /// The column's name when no runtime ran: the NAME of `--actual NAME=DIR`, else our kernels.
    pub(crate) source: Option<String>,
}

/// The column's name of a run with no runtime under test and no `--actual`: our kernels
/// against the expected outputs.
pub(crate) const KERNELS: &str = "onnx-idx-check kernels";

impl Reporter for HtmlReporter {
    fn report(&mut self, event: &Event<'_>) -> anyhow::Result<()> {
        let Event::RunFinished(end) = event else {
            return Ok(());
        };
        let name = end
            .runtime
            .map(|r| r.name.clone())
            .or_else(|| self.source.clone())
            .unwrap_or_else(|| KERNELS.to_string());
        let column = Column {
            name: &name,
            runtime: end.runtime,
            results: end.results,
            duration: end.duration,
        };
        let page = Page::of_run(
            &onnx_idx_check::report::TOOL,
            &self.paths,
            std::slice::from_ref(&column),
            &|c| Some(self.rerun.for_case(c)),
        );
        self.dest.write(&page.render())
    }
}

/// The scoreboard of a matrix run (`run` with several runtimes).
pub(crate) fn matrix(
    tool: &ToolInfo,
    paths: &[PathBuf],
    columns: &[crate::matrix::Column],
    rerun: &Rerun,
) -> String {
    let cols: Vec<Column<'_>> = columns
        .iter()
        .map(|c| Column {
            name: &c.name,
            runtime: c.report.runtime.as_ref(),
            results: &c.report.cases,
            duration: c.report.duration,
        })
        .collect();
    Page::of_run(tool, paths, &cols, &|c| Some(rerun.for_case(c))).render()
}

#[cfg(test)]
mod tests;
