//! The scoreboard of a hunt: its findings by severity, and the grid of what it tried (each case
//! of `tried.tsv` under its operator version, with the word `tried.tsv` gives it).

use super::{Case, Category, Counts, Finding, Page, Runtime};
use onnx_idx_check::report::ToolInfo;
use std::path::{Component, Path};
use std::time::Duration;

/// Lines of a `REPORT.md` section the page shows at most.
const SECTION_LINES: usize = 8;

/// Characters of a `REPORT.md` section the page shows at most.
const SECTION_CHARS: usize = 600;

/// The category of a word of `tried.tsv`.
pub(crate) fn category(word: &str) -> Category {
    match word {
        "passed" => Category::Passed,
        "failed" | "wrong-output" | "unsafe" | "accepts-invalid" | "nondeterministic" => {
            Category::Failed
        }
        "refused" | "refuses-valid" | "not-implemented" => Category::Refused,
        "crash" => Category::Crashed,
        // errored, skipped, unsupported, not-generated, kind-hung, explained, not-tried.
        _ => Category::Other,
    }
}

/// What falls in a category on a hunt's page.
pub(crate) fn legend(c: Category) -> String {
    match c {
        Category::Passed => "passed: the runtime agreed with the reference",
        Category::Failed => {
            "wrong-output, unsafe, accepts-invalid, nondeterministic: a disagreement on outputs"
        }
        Category::Refused => {
            "refuses-valid, refused, not-implemented: an error where outputs are required, or a \
             group the runtime does not implement"
        }
        Category::Crashed => "crash: the process died or hung",
        Category::Other => {
            "errored, unsupported, not-generated, kind-hung, explained, not-tried: not judged"
        }
    }
    .to_string()
}

/// One case a hunt tried: its name, operator version and the word of `tried.tsv`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Tried {
    /// The generated case's name.
    pub(crate) name: String,
    /// `Gather-13`.
    pub(crate) op_version: String,
    /// `passed`, `wrong-output`, `not-implemented`, ...
    pub(crate) word: &'static str,
}

/// A finding as the hunt holds it, for the page.
pub(crate) struct HuntFinding<'a> {
    /// The class's id (`wrong-output`).
    pub(crate) class: &'static str,
    /// The class's heading.
    pub(crate) title: &'static str,
    /// `Gather-1/11, GatherND-12`.
    pub(crate) operators: String,
    /// Its data types.
    pub(crate) dtypes: Vec<String>,
    /// Its diagnosis.
    pub(crate) diagnosis: &'a str,
    /// Its directory under the hunt's output.
    pub(crate) case: &'a str,
    /// The runner's reason for the minimal case.
    pub(crate) reason: &'a str,
    /// Disagreements seen.
    pub(crate) seen: u64,
}

/// What a hunt tells its page.
pub(crate) struct Hunted<'a> {
    /// The runtime's name and version.
    pub(crate) runtime: (&'a str, &'a str),
    /// The hunt's output directory.
    pub(crate) out: &'a Path,
    /// The page's file: links to `REPORT.md` are relative to its directory.
    pub(crate) page: &'a Path,
    /// Every case tried, in order.
    pub(crate) tried: &'a [Tried],
    /// The findings, most severe first.
    pub(crate) findings: Vec<HuntFinding<'a>>,
    /// How long it ran.
    pub(crate) elapsed: Duration,
}

/// The page of a hunt.
pub(crate) fn page(tool: &ToolInfo, h: &Hunted<'_>) -> Page {
    let mut totals = Counts::default();
    let cases: Vec<Case> = h
        .tried
        .iter()
        .map(|t| {
            let cat = category(t.word);
            totals.add(cat);
            Case {
                name: t.name.clone(),
                ops: vec![t.op_version.clone()],
                traits: Vec::new(),
                rerun: None,
                results: vec![Some(super::Verdict::word(cat, t.word))],
            }
        })
        .collect();
    let base = h.page.parent().unwrap_or(Path::new("."));
    let findings = h
        .findings
        .iter()
        .map(|f| {
            let report_md = h.out.join(f.case).join("REPORT.md");
            let text = std::fs::read_to_string(&report_md).unwrap_or_default();
            Finding {
                class: f.class.to_string(),
                title: f.title.to_string(),
                operators: f.operators.clone(),
                dtypes: f.dtypes.clone(),
                diagnosis: f.diagnosis.to_string(),
                case: f.case.to_string(),
                expected: section(&text, "## Expected"),
                actual: section(&text, "## Actual"),
                reason: f.reason.to_string(),
                report: link(&report_md, base),
                seen: f.seen,
            }
        })
        .collect();
    let runtimes = vec![Runtime {
        name: h.runtime.0.to_string(),
        version: Some(h.runtime.1.to_string()),
        duration_ms: super::millis(h.elapsed),
        totals,
    }];
    let notes = vec![
        "The grid counts every generated case the hunt tried, by the word tried.tsv gives it; \
         the findings are the minimal cases of its disagreements. A hunt's cases have no traits \
         and no rerun command (they live in a scratch directory); each finding's directory \
         holds its case and REPORT.md."
            .to_string(),
    ];
    Page::assemble(
        tool,
        "hunt",
        &[h.out.to_path_buf()],
        h.elapsed,
        runtimes,
        cases,
        Some(findings),
        notes,
    )
}

/// The body of the section of `md` under `heading` (`## Expected`, or `## Actual (ort 1.2)`),
/// clipped to a few lines.
pub(crate) fn section(md: &str, heading: &str) -> String {
    let mut lines = md.lines().skip_while(|l| !l.starts_with(heading));
    let Some(_) = lines.next() else {
        return String::new();
    };
    let body: Vec<&str> = lines
        .take_while(|l| !l.starts_with("## "))
        .filter(|l| !l.trim().is_empty())
        .collect();
    let mut out = body
        .iter()
        .take(SECTION_LINES)
        .copied()
        .collect::<Vec<_>>()
        .join("\n");
    if out.chars().count() > SECTION_CHARS {
        out = out.chars().take(SECTION_CHARS).collect();
        out.push('…');
    } else if body.len() > SECTION_LINES {
        out.push_str("\n…");
    }
    out
}

/// `target` relative to the directory `base` (both made absolute), with `/` separators, for a
/// link that still works when the folder holding both moves.
pub(crate) fn link(target: &Path, base: &Path) -> String {
    let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let (t, b) = (normal(&abs(target)), normal(&abs(base)));
    let common = t.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut parts: Vec<String> = vec!["..".to_string(); b.len() - common];
    parts.extend(t[common..].iter().map(|c| c.to_string_lossy().into_owned()));
    parts.join("/")
}

/// The components of an absolute path with `.` and `..` resolved lexically.
fn normal(p: &Path) -> Vec<std::ffi::OsString> {
    let mut out: Vec<std::ffi::OsString> = Vec::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(s) => out.push(s.to_os_string()),
            Component::RootDir | Component::Prefix(_) => {
                out.clear();
                out.push(c.as_os_str().to_os_string());
            }
            Component::CurDir => {}
        }
    }
    out
}
