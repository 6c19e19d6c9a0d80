//! `run` with several runtimes under test (`--runtime A --runtime B`, `--actual NAME=DIR`): one
//! check per runtime over the same cases, then one report of cases x runtimes. The exit status
//! gates on every runtime.

use super::cli_error;
use crate::cli::{Format, RunArgs};
use crate::config::{self, ReportSpec, Source, UsageError};
use crate::exit;
use crate::matrix::{self, Column};
use anyhow::Result;
use onnx_idx_check::check::Prepared;
use onnx_idx_check::report::{human, Dest, TOOL};
use onnx_idx_check::CheckOptions;

/// Runs the check once per source and reports the matrix in the format asked for.
pub(super) fn run_matrix(
    args: &RunArgs,
    reports: &[ReportSpec],
    options: CheckOptions,
    sources: &[Source],
) -> Result<u8> {
    // The matrix has a human, a JSON and an HTML form; the other formats report one runtime
    // each.
    if let Some(r) = reports
        .iter()
        .find(|r| !matches!(r.format, Format::Human | Format::Json | Format::Html))
    {
        return Err(UsageError(format!(
            "with {} runtimes, the report is a table of cases x runtimes: --format human, json \
             or html (not {}); run each runtime on its own for JUnit or Markdown",
            sources.len(),
            clap::ValueEnum::to_possible_value(&r.format)
                .map_or_else(String::new, |v| v.get_name().to_string())
        ))
        .into());
    }
    if args.pending.is_some() || args.rerun_failed || args.update_expectations {
        return Err(UsageError(
            "--pending, --rerun-failed and --update-expectations judge one runtime: run it on its \
             own"
            .to_string(),
        )
        .into());
    }
    let mut columns = Vec::with_capacity(sources.len());
    for source in sources {
        let mut o = options.clone();
        source.apply(&mut o);
        let prepared = Prepared::new(&args.selection.paths, &o).map_err(cli_error)?;
        if columns.is_empty() {
            super::warn(prepared.warnings());
        }
        let label = match source {
            Source::Actual(name, _) => name.clone(),
            Source::Runtime(spec) => spec.clone(),
            Source::Command(cmd) => cmd.clone(),
        };
        eprintln!(
            "running {} through {label}",
            onnx_idx_check::report::counted(prepared.cases().len(), "case", "cases")
        );
        let report = prepared.run(&mut |_| {}).map_err(config::usage)?;
        let name = match (source, &report.runtime) {
            (Source::Command(_), Some(rt)) => rt.name.clone(),
            _ => label,
        };
        let taken: Vec<&str> = columns.iter().map(|c: &Column| c.name.as_str()).collect();
        let name = unique(name, &taken);
        columns.push(Column { name, report });
    }
    let style = human::Style {
        color: config::use_color(args.color),
    };
    let mut shown_on_stdout = false;
    for r in reports {
        let text = match r.format {
            Format::Json => matrix::json(&TOOL, &columns),
            Format::Html => crate::scoreboard::matrix(
                &TOOL,
                &args.selection.paths,
                &columns,
                &super::run::rerun_command(args),
            ),
            _ => matrix::human(&columns, human::Style { color: false }),
        };
        shown_on_stdout |= r.dest == Dest::Stdout;
        r.dest.write(&text)?;
    }
    if !shown_on_stdout {
        Dest::Stdout.write(&matrix::human(&columns, style))?;
    }
    Ok(if columns.iter().all(|c| c.report.passed()) {
        exit::OK
    } else {
        exit::CASES_FAILED
    })
}

/// `name` as a column's key: itself, or when an earlier column has it (two `--runtime-cmd`
/// workers whose hello gives the same name, two builds of one runtime), `name#2`, `name#3`, ...:
/// the first that is free, so every report and header tells the runtimes apart.
fn unique(name: String, taken: &[&str]) -> String {
    let free = |n: &str| !taken.contains(&n);
    if free(&name) {
        return name;
    }
    (2..)
        .map(|k| format!("{name}#{k}"))
        .find(|n| free(n))
        .unwrap_or(name)
}

#[cfg(test)]
mod tests {
    use super::unique;

    #[test]
    fn a_name_taken_gets_the_first_free_number() {
        assert_eq!(unique("fake".into(), &[]), "fake");
        assert_eq!(unique("fake".into(), &["fake"]), "fake#2");
        assert_eq!(unique("fake".into(), &["fake", "fake#2"]), "fake#3");
        // A runtime that calls itself `fake#2` does not collide with the renamed one.
        assert_eq!(
            unique("fake".into(), &["fake", "fake#2", "other"]),
            "fake#3"
        );
        assert_eq!(unique("fake#2".into(), &["fake"]), "fake#2");
    }
}
