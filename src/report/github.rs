//! GitHub Actions annotations: when `GITHUB_ACTIONS=true`, every failure of the gate becomes a
//! workflow command (`::error file=F,line=L,title=T::MESSAGE`) that GitHub shows on the job's
//! page and, for files of the pull request, beside the line. A failed or errored case points at
//! its `model.onnx`; an outcome of the expectations file (an unexpected pass, a different
//! failure, an expired or unmatched entry) points at the entry's line in that file; the run's
//! own requirements (`--min-cases`, `--require-op`) have no file.
//!
//! Text is escaped as GitHub's toolkit escapes it: `%`, CR and LF in the message, and also `:`
//! and `,` in the properties, so a case name or a reason cannot end the command early.

use super::{human, Dest, Event, Reporter, Rerun, RunEnd};
use crate::verdict::{CaseResult, GateKind};
use anyhow::Result;
use std::fmt::Write as _;
use std::path::Path;

/// Whether the environment asks for annotations: GitHub Actions sets `GITHUB_ACTIONS=true` in
/// every step.
pub(crate) fn wanted() -> bool {
    std::env::var_os("GITHUB_ACTIONS").is_some_and(|v| v == "true")
}

/// One annotation.
struct Annotation<'a> {
    /// `error` or `warning`.
    level: &'a str,
    /// The file, relative to the workspace where possible.
    file: Option<String>,
    /// Its line, from 1.
    line: Option<usize>,
    /// The annotation's heading.
    title: String,
    /// The text, which may span lines.
    message: String,
}

impl Annotation<'_> {
    fn render(&self) -> String {
        let mut props = Vec::new();
        if let Some(f) = &self.file {
            props.push(format!("file={}", property(f)));
        }
        if let Some(l) = self.line {
            props.push(format!("line={l}"));
        }
        props.push(format!("title={}", property(&self.title)));
        format!(
            "::{} {}::{}\n",
            self.level,
            props.join(","),
            data(&self.message)
        )
    }
}

/// The escaping of a command's message.
fn data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// The escaping of a command's property value.
fn property(s: &str) -> String {
    data(s).replace(':', "%3A").replace(',', "%2C")
}

/// A path as GitHub expects it: relative to the workspace when it lies inside
/// `GITHUB_WORKSPACE`, else as given (relative paths are relative to the step's directory,
/// usually the workspace).
fn workspace_path(path: &Path, workspace: Option<&Path>) -> String {
    let shown = workspace
        .filter(|_| path.is_absolute())
        .and_then(|w| path.strip_prefix(w).ok())
        .unwrap_or(path);
    shown.display().to_string()
}

/// Every annotation of a run, one line each: the cases that fail the gate, in case order, then
/// the expectations file's expired and unmatched entries, then the unmet requirements.
pub(crate) fn render(end: &RunEnd<'_>, rerun: &Rerun, workspace: Option<&Path>) -> String {
    let mut out = String::new();
    let exp_file = end.expectations.map(|e| e.file.as_str());
    for c in end.results {
        if let Some(a) = case_annotation(c, rerun, exp_file, workspace) {
            out.push_str(&a.render());
        }
    }
    if let Some(e) = end.expectations {
        let file = Some(workspace_path(Path::new(&e.file), workspace));
        for (p, line) in e.expired.iter().zip(&e.expired_lines) {
            out.push_str(
                &Annotation {
                    level: "error",
                    file: file.clone(),
                    line: *line,
                    title: format!("onnx-idx-check: expired expectation '{p}'"),
                    message: format!(
                        "the entry for '{p}' has expired (its `until` date has passed): renew \
                         the date or remove the entry"
                    ),
                }
                .render(),
            );
        }
        for (p, line) in e.unmatched.iter().zip(&e.unmatched_lines) {
            out.push_str(
                &Annotation {
                    level: if e.strict { "error" } else { "warning" },
                    file: file.clone(),
                    line: *line,
                    title: format!("onnx-idx-check: unmatched expectation '{p}'"),
                    message: format!("the entry for '{p}' matches no case"),
                }
                .render(),
            );
        }
    }
    for r in end.gate.reasons.iter().filter(|r| r.kind.is_requirement()) {
        out.push_str(
            &Annotation {
                level: "error",
                file: None,
                line: None,
                title: format!("onnx-idx-check: {}", r.kind.id()),
                message: r.message.clone(),
            }
            .render(),
        );
    }
    // Skipped cases fail the gate only under --deny-skip, which the results do not carry: the
    // gate's own message says so when no case was annotated for it.
    if out.is_empty() {
        if let Some(r) = end.gate.reasons.iter().find(|r| r.kind == GateKind::Cases) {
            out.push_str(
                &Annotation {
                    level: "error",
                    file: None,
                    line: None,
                    title: "onnx-idx-check".to_string(),
                    message: r.message.clone(),
                }
                .render(),
            );
        }
    }
    out
}

/// The annotation of a case that fails the gate, if it does: at the expectations entry when
/// the entry's outcome fails it, else at the case's model.
fn case_annotation<'a>(
    c: &CaseResult,
    rerun: &Rerun,
    exp_file: Option<&str>,
    workspace: Option<&Path>,
) -> Option<Annotation<'a>> {
    if !c.fails_gate(false) {
        return None;
    }
    let label = super::label(c);
    if let (Some(e), Some(file)) = (&c.expectation, exp_file) {
        if e.fails_gate {
            let mut message = human::expectation_text(e);
            if let Some(reason) = &c.reason {
                let _ = write!(message, "\n{reason}");
            }
            return Some(Annotation {
                level: "error",
                file: Some(workspace_path(Path::new(file), workspace)),
                line: e.line,
                title: format!("onnx-idx-check: {label} {}", c.name),
                message,
            });
        }
    }
    let mut message = c.reason.clone().unwrap_or_default();
    let _ = write!(message, "\nrerun: {}", rerun.for_case(c));
    Some(Annotation {
        level: "error",
        // The case's model: model.onnx, or an IR case's model.xml.
        file: Some(workspace_path(
            &c.path.join(crate::load::model_file_of(&c.path)),
            workspace,
        )),
        line: None,
        title: format!("onnx-idx-check: {label} {}", c.name),
        message,
    })
}

/// Writes the annotations when the run ends.
pub(crate) struct GithubReporter {
    /// Standard output, or standard error when a report takes stdout (the runner reads both).
    pub dest: GithubDest,
    /// The rerun command of each case.
    pub rerun: Rerun,
}

/// Where the annotations go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GithubDest {
    /// Standard output.
    Stdout,
    /// Standard error, when a report takes stdout.
    Stderr,
}

impl Reporter for GithubReporter {
    fn report(&mut self, event: &Event<'_>) -> Result<()> {
        if let Event::RunFinished(end) = event {
            let workspace = std::env::var_os("GITHUB_WORKSPACE").map(std::path::PathBuf::from);
            let text = render(end, &self.rerun, workspace.as_deref());
            match self.dest {
                GithubDest::Stdout => Dest::Stdout.write(&text)?,
                GithubDest::Stderr => eprint!("{text}"),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_and_properties_are_escaped_as_the_toolkit_does() {
        assert_eq!(data("50% of a\r\nb"), "50%25 of a%0D%0Ab");
        assert_eq!(property("a:b,c%"), "a%3Ab%2Cc%25");
        let a = Annotation {
            level: "error",
            file: Some("x,y/model.onnx".into()),
            line: Some(7),
            title: "t: 1".into(),
            message: "one\ntwo".into(),
        };
        assert_eq!(
            a.render(),
            "::error file=x%2Cy/model.onnx,line=7,title=t%3A 1::one%0Atwo\n"
        );
    }

    #[test]
    fn paths_inside_the_workspace_become_relative() {
        let ws = Path::new("/home/runner/work/repo");
        assert_eq!(
            workspace_path(
                Path::new("/home/runner/work/repo/cases/a/model.onnx"),
                Some(ws)
            ),
            "cases/a/model.onnx"
        );
        assert_eq!(
            workspace_path(Path::new("cases/a/model.onnx"), Some(ws)),
            "cases/a/model.onnx"
        );
        assert_eq!(
            workspace_path(Path::new("/elsewhere/model.onnx"), Some(ws)),
            "/elsewhere/model.onnx"
        );
    }
}
