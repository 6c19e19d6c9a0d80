//! GitHub Actions annotations: when `GITHUB_ACTIONS=true`, every failure of the gate becomes a
//! workflow command (`::error file=F,line=L,title=T::MESSAGE`) that GitHub shows on the job's
//! page and, for files of the pull request, beside the line. A failed or errored case (and a
//! skipped one under `--deny-skip`) points at its `model.onnx`; an outcome of the expectations
//! file (an unexpected pass, a different failure, an expired or unmatched entry) points at the
//! entry's line in that file, as an error when it fails the gate and a warning when it does
//! not; the run's own requirements (`--min-cases`, `--require-op`) have no file.
//!
//! Text is escaped as GitHub's toolkit escapes it: `%`, CR and LF in the message, and also `:`
//! and `,` in the properties, so a case name or a reason cannot end the command early. Before
//! that, every control character of a name, a path or a reason is made a visible escape (see
//! [`one_line`]): the log shows `\n` and `\u{1b}` where a case's name holds them.

use super::{human, multi_line, one_line, Dest, Event, Reporter, Rerun, RunEnd};
use crate::verdict::{CaseResult, Status};
use anyhow::Result;
use std::fmt::Write as _;
use std::path::Path;

/// Whether the environment asks for annotations: GitHub Actions sets `GITHUB_ACTIONS=true` in
/// every step.
pub fn wanted() -> bool {
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
            props.push(format!("file={}", property(&one_line(f))));
        }
        if let Some(l) = self.line {
            props.push(format!("line={l}"));
        }
        props.push(format!("title={}", property(&one_line(&self.title))));
        format!(
            "::{} {}::{}\n",
            self.level,
            props.join(","),
            data(&multi_line(&self.message))
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
        if let Some(a) = case_annotation(c, end.gate.deny_skip, rerun, exp_file, workspace) {
            out.push_str(&a.render());
        }
    }
    if let Some(e) = end.expectations {
        let file = Some(workspace_path(Path::new(&e.file), workspace));
        for ((p, line), fails) in e.expired.iter().zip(&e.expired_lines).zip(&e.expired_fails) {
            // As the gate has it: an entry for cases this run left out does not fail it.
            let (level, left_out) = if *fails {
                ("error", "")
            } else {
                (
                    "warning",
                    ", but it applies only to cases this run left out (a run that runs them fails)",
                )
            };
            out.push_str(
                &Annotation {
                    level,
                    file: file.clone(),
                    line: *line,
                    title: format!("onnx-idx-check: expired expectation '{p}'"),
                    message: format!(
                        "the entry for '{}' has expired (its `until` date has passed){left_out}: \
                         renew the date or remove the entry",
                        one_line(p)
                    ),
                }
                .render(),
            );
        }
        for (i, (p, line)) in e.unmatched.iter().zip(&e.unmatched_lines).enumerate() {
            let why = e.unmatched_why.get(i).cloned().unwrap_or_default();
            out.push_str(
                &Annotation {
                    level: if e.strict { "error" } else { "warning" },
                    file: file.clone(),
                    line: *line,
                    title: format!("onnx-idx-check: unmatched expectation '{p}'"),
                    message: format!("the entry for '{}' {why}", one_line(p)),
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
                message: one_line(&r.message),
            }
            .render(),
        );
    }
    out
}

/// The annotation of a case that fails the gate, if it does: at the expectations entry when
/// the entry's outcome fails it, else at the case's model.
fn case_annotation<'a>(
    c: &CaseResult,
    deny_skip: bool,
    rerun: &Rerun,
    exp_file: Option<&str>,
    workspace: Option<&Path>,
) -> Option<Annotation<'a>> {
    if !c.fails_gate(deny_skip) {
        return None;
    }
    let label = super::label(c);
    if let (Some(e), Some(file)) = (&c.expectation, exp_file) {
        if e.fails_gate {
            let mut message = human::expectation_text(e);
            if let Some(reason) = &c.reason {
                let _ = write!(message, "\n{}", human::shorten(&one_line(reason)));
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
    let mut message = human::shorten(&one_line(c.reason.as_deref().unwrap_or_default()));
    if c.status == Status::Skipped {
        message.push_str("\nskipped cases fail the run (--deny-skip)");
    } else {
        let _ = write!(message, "\nrerun: {}", rerun.for_case(c));
    }
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
pub struct GithubReporter {
    /// Standard output, or standard error when a report takes stdout (the runner reads both).
    pub dest: GithubDest,
    /// The rerun command of each case.
    pub rerun: Rerun,
}

/// Where the annotations go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GithubDest {
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
