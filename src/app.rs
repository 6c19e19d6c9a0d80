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
use crate::report::{human, json, junit, TOOL};
use crate::runner::{self, RunOptions};
use crate::verdict::{CaseResult, ExpectationNote, Status, Summary};
use anyhow::{Context, Result};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Instant;

/// Runs the command line; usage problems come back as [`UsageError`] in the chain.
pub fn run(cli: Cli) -> Result<u8> {
    match cli.command {
        Command::Run(args) => run_cases(args),
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

fn run_cases(args: RunArgs) -> Result<u8> {
    let expectations = load_expectations(&args)?;
    let opts = RunOptions {
        tolerance: config::tolerance(&args)?,
        max_tensor_bytes: config::parse_bytes(&args.max_tensor_bytes)?,
        actual: match &args.actual {
            Some(dir) if !dir.is_dir() => {
                return Err(
                    UsageError(format!("--actual {}: not a directory", dir.display())).into(),
                )
            }
            other => other.clone(),
        },
        digests: args.format != Format::Human,
        coverage: false,
        pending: args.pending.clone(),
        expectations: expectations.clone().map(std::sync::Arc::new),
        timeout: crate::deadline::parse_limit(&args.timeout)
            .map_err(|e| UsageError(format!("--timeout: {e}")))?,
    };
    let jobs = config::jobs(args.jobs)?;
    let (cases, all_names) = select_with_names(&args.selection)?;
    let today = Date::today();
    let note_for = |r: &CaseResult| {
        expectations.as_ref().and_then(|e| {
            note(
                e,
                &e.judge(std::slice::from_ref(r), today),
                0,
                args.deny_skip,
            )
        })
    };
    // The human report goes to stdout unless a machine format takes stdout.
    let machine_to_stdout = args.format != Format::Human && args.output.is_none();
    let human_to_file = args.format == Format::Human && args.output.is_some();
    let color = !human_to_file && !machine_to_stdout && config::use_color(args.color);
    let style = human::Style { color };
    let mut human_out: Box<dyn Write> = if machine_to_stdout || human_to_file {
        Box::new(std::io::sink())
    } else {
        Box::new(std::io::stdout().lock())
    };
    let progress = progress_bar(cases.len(), !machine_to_stdout && !human_to_file);
    let start = Instant::now();
    let mut write_error: Option<std::io::Error> = None;
    let (mut results, not_run) = runner::run_all(&cases, &opts, jobs, args.fail_fast, |r| {
        let mut shown = r.clone();
        shown.expectation = note_for(r);
        let line = human::case_line(&shown, style, &rerun_command(&args, &r.name));
        progress.suspend(|| {
            if let Err(e) = human_out.write_all(line.as_bytes()) {
                write_error.get_or_insert(e);
            }
        });
        progress.inc(1);
    });
    progress.finish_and_clear();
    let duration = start.elapsed();
    let mut origins = discover::Origins::default();
    for (r, case) in results.iter_mut().zip(&cases) {
        r.origin = origins.of(case);
    }
    // Expectations: judge every case, then the entries themselves (expired, unmatched).
    let mut gate = Vec::new();
    let mut expectation_report = None;
    if let Some(exp) = &expectations {
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
        let judgement = exp.judge(&results, today);
        for (i, r) in results.iter_mut().enumerate() {
            r.expectation = note(&exp, &judgement, i, args.deny_skip);
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
        expectation_report = Some(json::ExpectationsReport {
            file: exp.path().display().to_string(),
            updated,
            expired,
            unmatched,
        });
    }
    let summary = Summary::of(&results, not_run);
    let mut tail =
        human::failure_details(&results, style, &|name: &str| rerun_command(&args, name));
    if let Some(er) = &expectation_report {
        tail.push_str(&human::expectations(er, args.strict_expectations, style));
    }
    tail.push_str(&human::summary(&summary, duration, style));
    human_out.write_all(tail.as_bytes()).ok();
    human_out.flush().ok();
    drop(human_out);
    if let Some(e) = write_error {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            return Err(e).context("writing the report");
        }
    }
    let document = match args.format {
        Format::Human if human_to_file => {
            let mut s = String::new();
            for r in &results {
                s.push_str(&human::case_line(r, style, &rerun_command(&args, &r.name)));
            }
            s.push_str(&tail);
            Some(s)
        }
        Format::Human => None,
        Format::Json => Some(json::render(
            &TOOL,
            &results,
            &summary,
            duration,
            expectation_report.as_ref(),
        )),
        Format::Junit => Some(junit::render(&TOOL, &results, &summary, duration)),
    };
    if let Some(doc) = document {
        match &args.output {
            Some(path) => write_file(path, &doc)?,
            None => {
                write_stdout(&doc)?;
                for g in &gate {
                    eprintln!("{g}");
                }
                eprint!(
                    "{}",
                    human::summary_line(&summary, duration, human::Style { color: false })
                );
            }
        }
    }
    let bad_case = results.iter().any(|r| match &r.expectation {
        Some(n) if n.outcome != "tolerance-only" => n.fails_gate,
        _ => {
            matches!(r.status, Status::Failed | Status::Errored)
                || (args.deny_skip && r.status == Status::Skipped)
        }
    });
    Ok(if bad_case || !gate.is_empty() {
        exit::CASES_FAILED
    } else {
        exit::OK
    })
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
fn note(
    exp: &Expectations,
    judgement: &Judgement,
    index: usize,
    deny_skip: bool,
) -> Option<ExpectationNote> {
    let j = judgement.cases.get(index)?.as_ref()?;
    let entry = exp.entries().get(j.entry)?;
    let (outcome, detail) = match &j.outcome {
        Outcome::ExpectedFailure => ("expected-failure", None),
        Outcome::UnexpectedlyPassed => ("unexpectedly-passed", None),
        Outcome::Different(how) => ("different", Some(how.clone())),
        Outcome::ToleranceOnly => ("tolerance-only", None),
    };
    let _ = deny_skip;
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
/// case keeps its name, and expectations still match) narrowed by an anchored `--filter`.
fn rerun_command(args: &RunArgs, case: &str) -> String {
    let mut parts = vec!["onnx-idx-check".to_string(), "run".to_string()];
    parts.extend(
        args.selection
            .paths
            .iter()
            .map(|p| shell_quote(&p.display().to_string())),
    );
    parts.push("--filter".into());
    parts.push(shell_quote(&format!("^{}$", regex::escape(case))));
    let mut flag = |name: &str, value: Option<String>| {
        parts.push(format!("--{name}"));
        if let Some(v) = value {
            parts.push(shell_quote(&v));
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
    parts.join(" ")
}

/// Quotes a word for a POSIX shell when it needs it.
fn shell_quote(word: &str) -> String {
    let safe = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-./:=@%+,".contains(&b));
    if safe {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

fn progress_bar(len: usize, wanted: bool) -> indicatif::ProgressBar {
    // Only on a terminal, and only for runs long enough to need one.
    if !wanted || !std::io::stderr().is_terminal() || len < 50 {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(len as u64);
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} cases [{elapsed}]")
    {
        bar.set_style(style);
    }
    bar
}

fn write_file(path: &PathBuf, contents: &str) -> Result<()> {
    std::fs::write(path, contents)
        .with_context(|| format!("writing the report to {}", path.display()))
}

/// Writes to stdout; a closed pipe (`| head`) is not an error.
fn write_stdout(s: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(s.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e).context("writing to stdout"),
        _ => Ok(()),
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
