//! Several runtimes judged side by side (`run --runtime A --runtime B`, `--actual NAME=DIR`):
//! a table of cases x runtimes for people, and for machines every runtime's whole report plus
//! the same table per case.

use onnx_idx_check::check::CheckReport;
use onnx_idx_check::report::human::{summary_line, Style};
use onnx_idx_check::report::{json, label, one_line, ToolInfo};
use onnx_idx_check::verdict::{CaseResult, Status};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// One runtime's column: its name and the report of its check.
pub struct Column {
    /// The runtime's name: the `--runtime` spec, the name a `--runtime-cmd` worker gave, or the
    /// NAME of `--actual NAME=DIR`.
    pub name: String,
    /// Its check.
    pub report: CheckReport,
}

/// A column's cases by name (every runtime ran the same selection, but `--fail-fast` may
/// have left some out).
struct Lookup<'a>(std::collections::HashMap<&'a str, &'a CaseResult>);

impl<'a> Lookup<'a> {
    fn of(col: &'a Column) -> Lookup<'a> {
        Lookup(
            col.report
                .cases
                .iter()
                .map(|c| (c.name.as_str(), c))
                .collect(),
        )
    }

    fn get(&self, name: &str) -> Option<&'a CaseResult> {
        self.0.get(name).copied()
    }
}

/// A cell: the case's label, with the diagnosis of its first wrong output when one fits
/// (`FAIL oob-clamped`).
fn cell(c: &CaseResult) -> String {
    match diagnosis(c) {
        Some(d) => format!("{} {d}", label(c)),
        None => label(c).to_string(),
    }
}

/// The id of the bug class that reproduces the case's first wrong output.
pub(crate) fn diagnosis(c: &CaseResult) -> Option<&'static str> {
    c.data_sets
        .iter()
        .flat_map(|d| &d.outputs)
        .find(|o| o.status == Status::Failed)
        .and_then(|o| o.diagnosis())
        .map(|b| b.id())
}

/// The table, the reasons of every cell that did not pass, and a summary line per runtime.
pub fn human(columns: &[Column], style: Style) -> String {
    let mut out = String::new();
    let Some(first) = columns.first() else {
        return out;
    };
    let names: Vec<&str> = first.report.cases.iter().map(|c| c.name.as_str()).collect();
    let found: Vec<Lookup<'_>> = columns.iter().map(Lookup::of).collect();
    let cells: Vec<Vec<String>> = found
        .iter()
        .map(|f| {
            names
                .iter()
                .map(|n| f.get(n).map_or_else(String::new, cell))
                .collect()
        })
        .collect();
    let shown: Vec<String> = names.iter().map(|n| one_line(n)).collect();
    let headers: Vec<String> = columns.iter().map(|c| one_line(&c.name)).collect();
    let case_w = shown
        .iter()
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    let widths: Vec<usize> = headers
        .iter()
        .zip(&cells)
        .map(|(head, cs)| {
            cs.iter()
                .map(String::len)
                .chain([head.chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    // The last column is not padded: no line ends in spaces.
    let last = columns.len() - 1;
    let mut line = format!("{:<case_w$}", "case");
    for (j, (head, w)) in headers.iter().zip(&widths).enumerate() {
        let w = if j == last { 0 } else { *w };
        let _ = write!(line, "  {head:<w$}");
    }
    let _ = writeln!(out, "{}", line.trim_end());
    for (i, name) in shown.iter().enumerate() {
        let _ = write!(out, "{name:<case_w$}");
        for (j, (cs, w)) in cells.iter().zip(&widths).enumerate() {
            let text = cs.get(i).map_or("", String::as_str);
            let w = if j == last { 0 } else { *w };
            let _ = write!(out, "  {}", paint(style, text, w));
        }
        out.push('\n');
    }
    // Why each cell did not pass, case by case.
    for (name, shown) in names.iter().zip(&shown) {
        let mut lines = String::new();
        for (head, f) in headers.iter().zip(&found) {
            if let Some(c) = f.get(name).filter(|c| c.status != Status::Passed) {
                let reason = c.reason.as_deref().unwrap_or("");
                let _ = writeln!(
                    lines,
                    "    {head}: {}: {}",
                    label(c),
                    onnx_idx_check::report::human::shorten(&one_line(reason))
                );
            }
        }
        if !lines.is_empty() {
            let _ = write!(out, "\n--- {shown}\n{lines}");
        }
    }
    out.push('\n');
    for (col, head) in columns.iter().zip(&headers) {
        let version = col
            .report
            .runtime
            .as_ref()
            .map_or(String::new(), |r| format!(" {}", one_line(&r.version)));
        let line = summary_line(&col.report.summary, col.report.duration, style);
        // The rule line is printed once, above the first runtime.
        let body = line.lines().last().unwrap_or_default();
        let body = body.strip_prefix("Summary").unwrap_or(body).trim_start();
        let _ = writeln!(out, "{head}{version}: {body}");
    }
    out
}

/// A cell padded to `w`, coloured by its label.
fn paint(style: Style, text: &str, w: usize) -> String {
    let padded = format!("{text:<w$}");
    if !style.color {
        return padded;
    }
    let code = match text.split(' ').next().unwrap_or_default() {
        "PASS" => "32",
        "SKIP" | "XFAIL" => "33",
        "FAIL" | "NONDET" | "XPASS" | "EXPIRED" => "31",
        _ => "35",
    };
    format!("\x1b[{code}m{padded}\x1b[0m")
}

/// The JSON document: the run's gate over every runtime, each runtime's whole report (as
/// `run --format json` writes it) and, per case, each runtime's verdict.
#[derive(Serialize)]
struct Matrix<'a> {
    schema_version: u32,
    tool: json::Tool<'a>,
    gate: MatrixGate<'a>,
    runtimes: Vec<NamedReport<'a>>,
    cases: Vec<MatrixCase<'a>>,
}

/// `gate`: what decides the exit status, over every runtime.
#[derive(Serialize)]
struct MatrixGate<'a> {
    /// `passed` when every runtime's gate passed, else `failed`.
    status: &'static str,
    /// Every runtime's reasons, in column order.
    reasons: Vec<MatrixGateReason<'a>>,
}

/// One entry of `gate.reasons`: a reason of one runtime's gate.
#[derive(Serialize)]
struct MatrixGateReason<'a> {
    /// The runtime's key in `runtimes` and `cases[].runtimes`.
    runtime: &'a str,
    /// As in a single run's `summary.gate.reasons[].kind`.
    kind: &'static str,
    /// As in a single run's `summary.gate.reasons[].message`.
    message: &'a str,
}

#[derive(Serialize)]
struct NamedReport<'a> {
    name: &'a str,
    report: json::Report<'a>,
}

#[derive(Serialize)]
struct MatrixCase<'a> {
    name: &'a str,
    runtimes: BTreeMap<&'a str, Cell<'a>>,
}

#[derive(Serialize)]
struct Cell<'a> {
    status: &'static str,
    label: &'static str,
    fault: Option<&'static str>,
    diagnosis: Option<&'static str>,
    reason: Option<&'a str>,
}

/// The JSON document of a matrix run.
pub fn json(tool: &ToolInfo, columns: &[Column]) -> String {
    let ends: Vec<_> = columns.iter().map(|c| c.report.run_end()).collect();
    let runtimes = columns
        .iter()
        .zip(&ends)
        .map(|(col, end)| NamedReport {
            name: &col.name,
            report: json::build(tool, end),
        })
        .collect();
    let names: Vec<&str> = columns
        .first()
        .map(|c| c.report.cases.iter().map(|c| c.name.as_str()).collect())
        .unwrap_or_default();
    let found: Vec<Lookup<'_>> = columns.iter().map(Lookup::of).collect();
    let cases = names
        .iter()
        .map(|name| MatrixCase {
            name,
            runtimes: columns
                .iter()
                .zip(&found)
                .filter_map(|(col, f)| {
                    let c = f.get(name)?;
                    Some((
                        col.name.as_str(),
                        Cell {
                            status: c.status.as_str(),
                            label: label(c),
                            fault: c.fault.map(onnx_idx_check::verdict::Fault::as_str),
                            diagnosis: diagnosis(c),
                            reason: c.reason.as_deref(),
                        },
                    ))
                })
                .collect(),
        })
        .collect();
    let reasons: Vec<MatrixGateReason<'_>> = columns
        .iter()
        .flat_map(|col| {
            col.report.gate.reasons.iter().map(|r| MatrixGateReason {
                runtime: &col.name,
                kind: r.kind.id(),
                message: &r.message,
            })
        })
        .collect();
    let doc = Matrix {
        schema_version: json::SCHEMA_VERSION,
        tool: json::Tool {
            name: tool.name,
            version: tool.version,
        },
        gate: MatrixGate {
            status: if reasons.is_empty() {
                "passed"
            } else {
                "failed"
            },
            reasons,
        },
        runtimes,
        cases,
    };
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}
