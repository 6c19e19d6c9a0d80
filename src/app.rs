//! One function per subcommand: assembles discover -> runner -> reporters and returns the exit
//! status.

use crate::cli::{
    BenchArgs, Cli, Command, CoverageArgs, Format, ListArgs, ListFormat, OpsArgs, ReviewArgs,
    RunArgs, Selection,
};
use crate::config::{self, CaseFilter, UsageError};
use crate::discover::{self, Case};
use crate::exit;
use crate::expectations::{Date, Expectations, Judgement, Outcome};
use crate::report::{
    human, json, junit, markdown, shell_quote, write_stdout, Dest, Event, Reporters, Rerun, RunEnd,
};
use crate::runner::{self, RunOptions};
use crate::verdict::{
    CaseResult, ExpectationNote, ExpectationsReport, Gate, Requirements, Summary,
};
use anyhow::{Context, Result};
use std::time::Instant;

/// Runs the command line; usage problems come back as [`UsageError`] in the chain.
pub fn run(cli: Cli) -> Result<u8> {
    match cli.command {
        Command::Run(args) => run_cases(*args),
        Command::List(args) => list(args),
        Command::Ops(args) => ops(args),
        Command::Bench(args) => bench(args),
        Command::Review(args) => review(args),
        Command::Coverage(args) => coverage(args),
    }
}

/// Discovers the selected cases; no case at all is a usage error.
fn select(sel: &Selection) -> Result<Vec<Case>> {
    select_with_names(sel).map(|(cases, _)| cases)
}

/// [`select`], also returning the names of every case found before `--filter`, `--exclude` and
/// `--shard` (expectations entries for cases left out are not "unmatched").
fn select_with_names(sel: &Selection) -> Result<(Vec<Case>, Vec<String>)> {
    let filter = CaseFilter::new(sel)?;
    let found = discover::discover(&sel.paths).map_err(|e| UsageError(e.to_string()))?;
    for w in &found.warnings {
        eprintln!("warning: {w}");
    }
    let total = found.cases.len();
    let names: Vec<String> = found.cases.iter().map(|c| c.name.clone()).collect();
    let cases: Vec<Case> = found
        .cases
        .into_iter()
        .filter(|c| filter.matches(c))
        .collect();
    if cases.is_empty() {
        let paths: Vec<String> = sel.paths.iter().map(|p| p.display().to_string()).collect();
        let why = if total == 0 {
            "no directory with a model.onnx".to_string()
        } else {
            format!("{total} cases found, none selected by --filter/--exclude")
        };
        return Err(UsageError(format!("no case found under {}: {why}", paths.join(", "))).into());
    }
    // An empty shard is not an error: a CI matrix may have more shards than cases.
    Ok((
        cases.into_iter().filter(|c| filter.in_shard(c)).collect(),
        names,
    ))
}

/// `run`: options -> select cases -> reporters -> runner -> gate -> exit status.
fn run_cases(args: RunArgs) -> Result<u8> {
    let settings = RunSettings::new(&args)?;
    let (cases, all_names) = select_with_names(&args.selection)?;
    let mut reporters = reporters(&args, &settings)?;
    let (results, duration, not_run) = run_reported(&cases, &args, &settings, &mut reporters);
    let (results, expectations, expectation_gate) =
        judge_expectations(results, &cases, &args, &settings, &all_names)?;
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
fn reporters(args: &RunArgs, settings: &RunSettings) -> Result<Reporters> {
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
    Ok(reporters)
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
    _cases: &[Case],
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

fn list(args: ListArgs) -> Result<u8> {
    let cases = select(&args.selection)?;
    let listed: Vec<_> = cases
        .iter()
        .map(|c| crate::catalog::list_case(c, runner::DEFAULT_MAX_TENSOR_BYTES))
        .collect();
    let doc = match args.format {
        ListFormat::Human => crate::catalog::render_list(&listed),
        ListFormat::Json => {
            let mut s = serde_json::to_string_pretty(&listed).context("serialising the list")?;
            s.push('\n');
            s
        }
    };
    write_stdout(&doc)?;
    Ok(exit::OK)
}

fn ops(args: OpsArgs) -> Result<u8> {
    let doc = match args.format {
        ListFormat::Human => crate::catalog::render_matrix(),
        ListFormat::Json => {
            let mut s = serde_json::to_string_pretty(&crate::catalog::matrix())
                .context("serialising the matrix")?;
            s.push('\n');
            s
        }
    };
    write_stdout(&doc)?;
    Ok(exit::OK)
}

fn review(args: ReviewArgs) -> Result<u8> {
    let found = discover::discover(&args.paths).map_err(|e| UsageError(e.to_string()))?;
    for w in &found.warnings {
        eprintln!("warning: {w}");
    }
    let mode = if args.accept_all {
        crate::review::Mode::AcceptAll
    } else if args.reject_all {
        crate::review::Mode::RejectAll
    } else if args.list {
        crate::review::Mode::List
    } else {
        crate::review::Mode::Interactive
    };
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut out = std::io::stdout().lock();
    let summary = crate::review::review(
        &args.dir,
        &found.cases,
        mode,
        &mut input,
        &mut out,
        config::use_color(args.color),
    )
    .map_err(|e| UsageError(e.to_string()))?;
    Ok(if summary.problems > 0 {
        exit::CASES_FAILED
    } else {
        exit::OK
    })
}

fn coverage(args: CoverageArgs) -> Result<u8> {
    let cases = select(&args.selection)?;
    let opts = RunOptions {
        coverage: true,
        ..RunOptions::default()
    };
    let (results, _) = runner::run_all(&cases, &opts, config::jobs(args.jobs)?, false, |_| {});
    let rows = crate::coverage::report(&results);
    let doc = match args.format {
        ListFormat::Human => {
            let passed = results
                .iter()
                .filter(|r| r.status == crate::verdict::Status::Passed)
                .count();
            format!(
                "{}{passed} of {} cases passed; traits counted from passing cases only\n",
                crate::coverage::render(&rows),
                results.len()
            )
        }
        ListFormat::Json => {
            let mut s = serde_json::to_string_pretty(&rows).context("serialising the coverage")?;
            s.push('\n');
            s
        }
    };
    write_stdout(&doc)?;
    Ok(exit::OK)
}

fn bench(args: BenchArgs) -> Result<u8> {
    let opts = RunOptions {
        max_tensor_bytes: config::parse_bytes(&args.max_tensor_bytes)?,
        ..RunOptions::default()
    };
    let found = discover::discover(std::slice::from_ref(&args.case))
        .map_err(|e| UsageError(e.to_string()))?;
    let case = found
        .cases
        .into_iter()
        .find(|c| c.dir == args.case)
        .ok_or_else(|| {
            UsageError(format!(
                "{} is not a case directory (no model.onnx)",
                args.case.display()
            ))
        })?;
    let r = crate::bench::bench(&case, &opts, args.warmup, args.iters).map_err(UsageError)?;
    let doc = match args.format {
        ListFormat::Human => crate::bench::render(&r),
        ListFormat::Json => {
            let mut s = serde_json::to_string(&r).context("serialising the result")?;
            s.push('\n');
            s
        }
    };
    write_stdout(&doc)?;
    Ok(exit::OK)
}
