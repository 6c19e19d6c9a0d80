//! `run`: the library's check ([`mod@onnx_idx_check::check`]: select cases -> runner -> expectations ->
//! gate) with the command line's own parts around it: the arguments become
//! [`CheckOptions`](onnx_idx_check::CheckOptions), the reporters ([`onnx_idx_check::report`]) receive the check's
//! events, and the exit status follows the run's gate.

use super::last_run;
use super::{cli_error, warn};
use crate::cli::{Format, RunArgs};
use crate::config::UsageError;
use crate::config::{self, ReportSpec};
use crate::exit;
use crate::junit;
use crate::scoreboard;
use anyhow::Result;
use onnx_idx_check::check::Prepared;
use onnx_idx_check::report::github::{self, GithubDest, GithubReporter};
use onnx_idx_check::report::{human, json, markdown, shell_quote, Dest, Reporters, Rerun};
use std::path::Path;

/// `run`: arguments -> the check's options -> select cases -> reporters -> the check's run ->
/// exit status.
pub(super) fn run_cases(args: RunArgs) -> Result<u8> {
    let (reports, terminal) = config::reports(&args)?;
    let mut options = config::check_options(&args, &reports)?;
    let sources = config::sources(&args);
    if sources.len() > 1 {
        return super::matrix::run_matrix(&args, &reports, options, &sources);
    }
    if let Some(source) = sources.first() {
        source.apply(&mut options);
    }
    let mut prepared = Prepared::new(&args.selection.paths, &options).map_err(cli_error)?;
    warn(prepared.warnings());
    let record_file = last_run::path(args.last_run.as_deref());
    if let (Some(shard), true) = (&args.selection.shard, prepared.cases().is_empty()) {
        // Not an error: a CI matrix may have more shards than cases; --min-cases guards that.
        eprintln!("note: shard {shard} holds none of the cases found: nothing to run");
    }
    if args.rerun_failed {
        rerun_failed(&mut prepared, &record_file)?;
    }
    let mut reporters = reporters(&args, &reports, terminal);
    let report = prepared
        .run(&mut |event| reporters.report(event))
        .map_err(config::usage)?;
    reporters.finish()?;
    record(&record_file, &report.cases, args.deny_skip);
    Ok(if report.passed() {
        exit::OK
    } else {
        exit::CASES_FAILED
    })
}

/// Narrows the selection to the cases the record lists as failed; when it lists none of them
/// (or there is no record yet), every selected case runs, as with pytest's `--lf`.
fn rerun_failed(prepared: &mut Prepared, record_file: &Path) -> Result<()> {
    let record = last_run::read(record_file).map_err(|e| UsageError(format!("{e:#}")))?;
    let selected = prepared.cases().len();
    let Some(record) = record else {
        eprintln!(
            "note: no record of a previous run in {}: running all {selected} selected cases",
            record_file.display()
        );
        return Ok(());
    };
    let failed =
        |c: &onnx_idx_check::discover::Case| record.failed.contains_key(&last_run::key(&c.dir));
    let n = prepared.cases().iter().filter(|c| failed(c)).count();
    if n == 0 {
        eprintln!(
            "note: none of the {selected} selected cases failed in the last run ({}): running them all",
            record_file.display()
        );
    } else {
        prepared.retain(failed);
        eprintln!(
            "note: rerunning the {n} of {selected} selected cases that failed in the last run"
        );
    }
    Ok(())
}

/// Records the run's failures for the next `--rerun-failed`; a record that cannot be written
/// is a warning, since the run itself is done.
fn record(file: &Path, results: &[onnx_idx_check::verdict::CaseResult], deny_skip: bool) {
    let old = match last_run::read(file) {
        Ok(r) => r.unwrap_or_default(),
        // A damaged record is replaced by this run's.
        Err(_) => Default::default(),
    };
    if let Err(e) = old.update(results, deny_skip).write(file) {
        eprintln!("warning: could not record this run's failures for --rerun-failed: {e:#}");
    }
}

/// The reporters of a run: the human output (streaming on the terminal, or its summary alone on
/// stderr when a report takes stdout), then the report of `--format` / `--output` and each
/// `--report`, then GitHub's annotations when the run is a GitHub Actions step.
fn reporters(args: &RunArgs, reports: &[ReportSpec], terminal: bool) -> Reporters {
    let rerun = rerun_command(args);
    let mut reporters = Reporters::default();
    if terminal {
        let style = human::Style {
            color: config::use_color(args.color),
        };
        reporters.push(Box::new(
            human::HumanReporter::terminal(
                style,
                rerun.clone(),
                Box::<crate::progress::Bar>::default(),
            )
            .with_durations(args.durations),
        ));
    } else if reports.iter().any(|r| r.dest == Dest::Stdout) {
        reporters.push(Box::new(human::HumanReporter::brief()));
    }
    for spec in reports {
        let dest = spec.dest.clone();
        reporters.push(match spec.format {
            Format::Human => Box::new(
                human::HumanReporter::document(dest, rerun.clone()).with_durations(args.durations),
            ),
            Format::Json => Box::new(json::JsonReporter { dest }),
            Format::Junit => Box::new(junit::JunitReporter { dest }),
            Format::Markdown => Box::new(markdown::MarkdownReporter {
                dest,
                rerun: rerun.clone(),
            }),
            Format::Html => Box::new(scoreboard::HtmlReporter {
                dest,
                rerun: rerun.clone(),
                paths: args.selection.paths.clone(),
                source: config::sources(args).into_iter().find_map(|s| match s {
                    config::Source::Actual(name, _) => Some(name),
                    _ => None,
                }),
            }),
        });
    }
    if github::wanted() {
        let stdout_taken = reports.iter().any(|r| r.dest == Dest::Stdout);
        reporters.push(Box::new(GithubReporter {
            dest: if stdout_taken {
                GithubDest::Stderr
            } else {
                GithubDest::Stdout
            },
            rerun,
        }));
    }
    reporters
}

/// The command that re-runs one case alone with the same settings: the PATH that holds it (so
/// the case keeps its name, and expectations still match) narrowed by an anchored `--filter`,
/// then every option that shapes verdicts.
pub(super) fn rerun_command(args: &RunArgs) -> Rerun {
    let mut suffix = String::new();
    let mut flag = |name: &str, value: Option<String>| {
        suffix.push_str(&format!(" --{name}"));
        if let Some(v) = value {
            suffix.push(' ');
            suffix.push_str(&shell_quote(&v));
        }
    };
    for dir in &args.actual {
        flag("actual", Some(dir.clone()));
    }
    for spec in &args.runtime {
        flag("runtime", Some(spec.clone()));
    }
    for cmd in &args.runtime_cmd {
        flag("runtime-cmd", Some(cmd.clone()));
    }
    if args.repeat != 1 {
        flag("repeat", Some(args.repeat.to_string()));
    }
    if args.rtol != 1e-3 {
        flag("rtol", Some(args.rtol.to_string()));
    }
    if args.atol != 1e-7 {
        flag("atol", Some(args.atol.to_string()));
    }
    if args.exact {
        flag("exact", None);
    }
    if args.tolerant {
        flag("tolerant", None);
    }
    if args.max_tensor_bytes != "4GiB" {
        flag("max-tensor-bytes", Some(args.max_tensor_bytes.clone()));
    }
    if args.timeout != "60" {
        flag("timeout", Some(args.timeout.clone()));
    }
    if let Some(file) = &args.expectations {
        flag("expectations", Some(file.display().to_string()));
    }
    Rerun {
        prefix: "onnx-idx-check run".to_string(),
        roots: args.selection.paths.clone(),
        suffix,
    }
}
