//! Several runtimes judged side by side (`run --runtime A --runtime B`, `--actual NAME=DIR`):
//! a table of cases x runtimes for people, and for machines every runtime's whole report plus
//! the same table per case.

use super::human::{summary_line, Style};
use super::{json, label, ToolInfo};
use crate::check::CheckReport;
use crate::verdict::{CaseResult, Status};
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
fn diagnosis(c: &CaseResult) -> Option<&'static str> {
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
    let case_w = names.iter().map(|n| n.len()).max().unwrap_or(4).max(4);
    let widths: Vec<usize> = columns
        .iter()
        .zip(&cells)
        .map(|(col, cs)| {
            cs.iter()
                .map(String::len)
                .chain([col.name.len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let _ = write!(out, "{:<case_w$}", "case");
    for (col, w) in columns.iter().zip(&widths) {
        let _ = write!(out, "  {:<w$}", col.name);
    }
    out.push('\n');
    for (i, name) in names.iter().enumerate() {
        let _ = write!(out, "{name:<case_w$}");
        for (cs, w) in cells.iter().zip(&widths) {
            let text = cs.get(i).map_or("", String::as_str);
            let _ = write!(out, "  {}", paint(style, text, *w));
        }
        out.push('\n');
    }
    // Why each cell did not pass, case by case.
    for name in &names {
        let mut lines = String::new();
        for (col, f) in columns.iter().zip(&found) {
            if let Some(c) = f.get(name).filter(|c| c.status != Status::Passed) {
                let reason = c.reason.as_deref().unwrap_or("");
                let _ = writeln!(lines, "    {}: {}: {reason}", col.name, label(c));
            }
        }
        if !lines.is_empty() {
            let _ = write!(out, "\n--- {name}\n{lines}");
        }
    }
    out.push('\n');
    for col in columns {
        let version = col
            .report
            .runtime
            .as_ref()
            .map_or(String::new(), |r| format!(" {}", r.version));
        let line = summary_line(&col.report.summary, col.report.duration, style);
        // The rule line is printed once, above the first runtime.
        let body = line.lines().last().unwrap_or_default();
        let body = body.strip_prefix("Summary").unwrap_or(body).trim_start();
        let _ = writeln!(out, "{}{version}: {body}", col.name);
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

/// The JSON document: each runtime's whole report (as `run --format json` writes it) and, per
/// case, each runtime's verdict.
#[derive(Serialize)]
struct Matrix<'a> {
    schema_version: u32,
    tool: json::Tool<'a>,
    runtimes: Vec<NamedReport<'a>>,
    cases: Vec<MatrixCase<'a>>,
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
                            fault: c.fault.map(crate::verdict::Fault::as_str),
                            diagnosis: diagnosis(c),
                            reason: c.reason.as_deref(),
                        },
                    ))
                })
                .collect(),
        })
        .collect();
    let doc = Matrix {
        schema_version: json::SCHEMA_VERSION,
        tool: json::Tool {
            name: tool.name,
            version: tool.version,
        },
        runtimes,
        cases,
    };
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}
