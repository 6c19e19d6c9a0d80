//! `run`: options -> select cases -> reporters -> runner -> gate -> exit status. Each step is one
//! function below; the runner produces verdicts, the reporters ([`crate::report`]) receive them as
//! events, and the exit status follows the run's [`Gate`].

use super::select_with_names;
use crate::cli::{Format, RunArgs};
use crate::config::{self, UsageError};
use crate::discover::{self, Case};
use crate::exit;
use crate::expectations::{Date, Expectations, Judgement, Outcome};
use crate::report::{
    human, json, junit, markdown, shell_quote, Dest, Event, Reporters, Rerun, RunEnd,
};
use crate::runner::{self, RunOptions};
use crate::verdict::{
    CaseResult, ExpectationNote, ExpectationsReport, Gate, Requirements, Summary,
};
use anyhow::{Context, Result};
use std::time::Instant;

/// `run`: options -> select cases -> reporters -> runner -> gate -> exit status.
pub(super) fn run_cases(args: RunArgs) -> Result<u8> {
    let settings = RunSettings::new(&args)?;
    let (cases, all_names) = select_with_names(&args.selection)?;
    let mut reporters = reporters(&args, &settings);
    let (results, duration, not_run) = run_reported(&cases, &args, &settings, &mut reporters);
    let (results, expectations, expectation_gate) =
        judge_expectations(results, &args, &settings, &all_names)?;
    let summary = Summary::of(&results, not_run);
    let gate = Gate::of(
        &results,
        args.deny_skip,
        expectation_gate,
        &settings.requirements,
    );
    reporters.report(&Event::RunFinished(&RunEnd {
        results: &results,
        summary: &summary,
        duration,
        expectations: expectations.as_ref(),
        gate: &gate,
    }));
    reporters.finish()?;
    Ok(if gate.passed() {
        exit::OK
    } else {
        exit::CASES_FAILED
    })
}

/// What `run` checked and compiled from its arguments before looking for cases.
struct RunSettings {
    opts: RunOptions,
    jobs: usize,
    expectations: Option<Expectations>,
    reports: Vec<config::ReportSpec>,
    /// Whether the human output streams to stdout.
    terminal: bool,
    requirements: Requirements,
    rerun: Rerun,
}

impl RunSettings {
    fn new(args: &RunArgs) -> Result<RunSettings> {
        let expectations = load_expectations(args)?;
        let (reports, terminal) = config::reports(args)?;
        let opts = RunOptions {
            tolerance: config::tolerance(args)?,
            max_tensor_bytes: config::parse_bytes(&args.max_tensor_bytes)?,
            actual: match &args.actual {
                Some(dir) if !dir.is_dir() => {
                    return Err(
                        UsageError(format!("--actual {}: not a directory", dir.display())).into(),
                    )
                }
                other => other.clone(),
            },
            // The JSON and JUnit reports state the digest of every file judged.
            digests: reports
                .iter()
                .any(|r| matches!(r.format, Format::Json | Format::Junit)),
            coverage: false,
            pending: args.pending.clone(),
            expectations: expectations.clone().map(std::sync::Arc::new),
            timeout: crate::deadline::parse_limit(&args.timeout)
                .map_err(|e| UsageError(format!("--timeout: {e}")))?,
        };
        Ok(RunSettings {
            opts,
            jobs: config::jobs(args.jobs)?,
            expectations,
            reports,
            terminal,
            requirements: config::requirements(args)?,
            rerun: rerun_command(args),
        })
    }
}

/// The reporters of a run: the human output (streaming on the terminal, or its summary alone on
/// stderr when a report takes stdout), then the report of `--format` / `--output` and each
/// `--report`.
fn reporters(args: &RunArgs, settings: &RunSettings) -> Reporters {
    let mut reporters = Reporters::default();
    if settings.terminal {
        let style = human::Style {
            color: config::use_color(args.color),
        };
        reporters.push(Box::new(human::HumanReporter::terminal(
            style,
            settings.rerun.clone(),
        )));
    } else if settings.reports.iter().any(|r| r.dest == Dest::Stdout) {
        reporters.push(Box::new(human::HumanReporter::brief()));
    }
    for spec in &settings.reports {
        let dest = spec.dest.clone();
        reporters.push(match spec.format {
            Format::Human => Box::new(human::HumanReporter::document(dest, settings.rerun.clone())),
            Format::Json => Box::new(json::JsonReporter { dest }),
            Format::Junit => Box::new(junit::JunitReporter { dest }),
            Format::Markdown => Box::new(markdown::MarkdownReporter {
                dest,
                rerun: settings.rerun.clone(),
            }),
        });
    }
    reporters
}

/// Runs the cases, handing each result to the reporters as it arrives; returns the results (with
/// their origins), the run's wall time and the number of cases `--fail-fast` left out.
fn run_reported(
    cases: &[Case],
    args: &RunArgs,
    settings: &RunSettings,
    reporters: &mut Reporters,
) -> (Vec<CaseResult>, std::time::Duration, usize) {
    let today = Date::today();
    // As a case finishes, what the expectations say of it alone.
    let note_for = |r: &CaseResult| {
        settings
            .expectations
            .as_ref()
            .and_then(|e| note(e, &e.judge(std::slice::from_ref(r), today), 0))
    };
    reporters.report(&Event::RunStarted { cases: cases.len() });
    let start = Instant::now();
    let (mut results, not_run) =
        runner::run_all(cases, &settings.opts, settings.jobs, args.fail_fast, |r| {
            let mut shown = r.clone();
            shown.expectation = note_for(r);
            reporters.report(&Event::CaseFinished(&shown));
        });
    let duration = start.elapsed();
    let mut origins = discover::Origins::default();
    for (r, case) in results.iter_mut().zip(cases) {
        r.origin = origins.of(case);
    }
    (results, duration, not_run)
}

/// With `--expectations`: rewrites the file first under `--update-expectations`, judges every
/// case (its note), then the entries themselves; returns the results, what the file's own
/// verdicts are, and the gate's messages about the file (expired entries, and unmatched ones
/// under `--strict-expectations`).
fn judge_expectations(
    mut results: Vec<CaseResult>,
    args: &RunArgs,
    settings: &RunSettings,
    all_names: &[String],
) -> Result<(Vec<CaseResult>, Option<ExpectationsReport>, Vec<String>)> {
    let Some(exp) = &settings.expectations else {
        return Ok((results, None, Vec::new()));
    };
    let (exp, updated) = if args.update_expectations {
        let text = exp.update(&results);
        std::fs::write(exp.path(), &text)
            .with_context(|| format!("writing {}", exp.path().display()))?;
        let updated = Expectations::parse(&text, exp.path())
            .with_context(|| format!("re-reading the updated {}", exp.path().display()))?;
        (updated, true)
    } else {
        (exp.clone(), false)
    };
    let judgement = exp.judge(&results, Date::today());
    for (i, r) in results.iter_mut().enumerate() {
        r.expectation = note(&exp, &judgement, i);
    }
    let pattern = |i: &usize| exp.entries()[*i].case.clone();
    let expired: Vec<String> = judgement.expired.iter().map(pattern).collect();
    // Entries for cases that --filter, --exclude or --shard left out are not unmatched.
    let unmatched: Vec<String> = judgement
        .unmatched
        .iter()
        .filter(|&&i| !all_names.iter().any(|n| exp.pattern_matches(i, n)))
        .map(pattern)
        .collect();
    let mut gate = Vec::new();
    for e in &expired {
        gate.push(format!(
            "expectations: the entry for '{e}' has expired (its `until` date has passed)"
        ));
    }
    if args.strict_expectations {
        for u in &unmatched {
            gate.push(format!(
                "expectations: the entry for '{u}' matches no case (--strict-expectations)"
            ));
        }
    }
    let report = ExpectationsReport {
        file: exp.path().display().to_string(),
        updated,
        expired,
        unmatched,
        strict: args.strict_expectations,
    };
    Ok((results, Some(report), gate))
}

/// Loads `--expectations`; with `--update-expectations` a missing file starts empty.
fn load_expectations(args: &RunArgs) -> Result<Option<Expectations>> {
    let Some(path) = &args.expectations else {
        return Ok(None);
    };
    if args.update_expectations && !path.exists() {
        return Ok(Some(
            Expectations::parse("", path).map_err(|e| UsageError(e.to_string()))?,
        ));
    }
    Expectations::load(path)
        .map(Some)
        .map_err(|e| UsageError(e.to_string()).into())
}

/// What the expectations say of result `index` of a judgement.
fn note(exp: &Expectations, judgement: &Judgement, index: usize) -> Option<ExpectationNote> {
    let j = judgement.cases.get(index)?.as_ref()?;
    let entry = exp.entries().get(j.entry)?;
    let (outcome, detail) = match &j.outcome {
        Outcome::ExpectedFailure => ("expected-failure", None),
        Outcome::UnexpectedlyPassed => ("unexpectedly-passed", None),
        Outcome::Different(how) => ("different", Some(how.clone())),
        Outcome::ToleranceOnly => ("tolerance-only", None),
    };
    Some(ExpectationNote {
        outcome,
        entry: entry.case.clone(),
        reason: entry.reason.clone(),
        link: entry.link.clone(),
        detail,
        fails_gate: j.outcome.fails_gate(),
    })
}

/// The command that re-runs one case alone with the same settings: the same paths (so the
/// case keeps its name, and expectations still match) narrowed by an anchored `--filter`, then
/// every option that shapes verdicts.
fn rerun_command(args: &RunArgs) -> Rerun {
    let mut prefix = vec!["onnx-idx-check".to_string(), "run".to_string()];
    prefix.extend(
        args.selection
            .paths
            .iter()
            .map(|p| shell_quote(&p.display().to_string())),
    );
    let mut suffix = String::new();
    let mut flag = |name: &str, value: Option<String>| {
        suffix.push_str(&format!(" --{name}"));
        if let Some(v) = value {
            suffix.push(' ');
            suffix.push_str(&shell_quote(&v));
        }
    };
    if let Some(dir) = &args.actual {
        flag("actual", Some(dir.display().to_string()));
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
        prefix: prefix.join(" "),
        suffix,
    }
}
