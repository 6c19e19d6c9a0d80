//! One function per subcommand: assembles discover -> runner -> reporters and returns the exit
//! status. `run`, the one with a pipeline of its own, is in [`run`].

mod last_run;
mod matrix;
mod run;
mod tools;

use crate::cli::{
    BenchArgs, Cli, Command, CoverageArgs, GenerateArgs, ListArgs, ListFormat, OpsArgs, ReviewArgs,
    Selection, ShowArgs,
};
use crate::config::{self, UsageError};
use crate::exit;
use anyhow::{Context, Result};
use onnx_idx_check::check::{self, CaseFilter, CheckError};
use onnx_idx_check::discover::{self, Case};
use onnx_idx_check::report::write_stdout;
use onnx_idx_check::runner::{self, RunOptions};
use serde::Serialize;

/// Runs the command line; usage problems come back as `UsageError` in the chain.
pub fn run(cli: Cli) -> Result<u8> {
    // The workers of a runtime under test must not leave daemons behind.
    onnx_idx_check::runtime::reaper::enable();
    match cli.command {
        Command::Run(args) => run::run_cases(*args),
        Command::List(args) => list(args),
        Command::Ops(args) => ops(args),
        Command::Bench(args) => bench(args),
        Command::Review(args) => review(args),
        Command::Coverage(args) => coverage(args),
        Command::Show(args) => show(args),
        Command::Generate(args) => generate(args),
        Command::Minimize(args) => crate::minimize::command::run(args),
        Command::Hunt(args) => crate::hunt::command::run(args),
        Command::Adapters(args) => tools::adapters(args),
        Command::Completions(args) => tools::completions(args),
        Command::Man(args) => tools::man(args),
    }
}

/// Discovers the selected cases, as `run` selects them; no case at all is a usage error.
fn select(sel: &Selection) -> Result<Vec<Case>> {
    let shard = config::shard(sel.shard.as_deref())?;
    let filter = CaseFilter::new(&sel.filter, &sel.exclude, shard).map_err(cli_error)?;
    let selected = check::select(&sel.paths, &filter).map_err(cli_error)?;
    warn(&selected.warnings);
    Ok(selected.cases)
}

/// Prints what discovery could not read (paths escaped: a name may hold control characters).
fn warn(warnings: &[String]) {
    for w in warnings {
        eprintln!("warning: {}", onnx_idx_check::report::one_line(w));
    }
}

/// The text of an error that stops a command, with its causes, on one line: a path or a case
/// name in it cannot start a line of its own or steer the terminal.
pub fn error_text(e: &anyhow::Error) -> String {
    onnx_idx_check::report::one_line(&format!("{e:#}"))
}

/// A [`CheckError`] for the command line (see [`config::usage`]); when no case was found, what
/// discovery could not read is printed first, as it would have been before a run.
fn cli_error(e: CheckError) -> anyhow::Error {
    if let CheckError::NoCase { warnings, .. } = &e {
        warn(warnings);
    }
    config::usage(e)
}

fn list(args: ListArgs) -> Result<u8> {
    let cases = select(&args.selection)?;
    let listed: Vec<_> = cases
        .iter()
        .map(|c| crate::catalog::list_case(c, runner::DEFAULT_MAX_TENSOR_BYTES))
        .collect();
    let doc = match args.format {
        ListFormat::Human => crate::catalog::render_list(&listed),
        ListFormat::Json => json_document(&listed, true, "the list")?,
    };
    write_stdout(&doc)?;
    Ok(exit::OK)
}

fn ops(args: OpsArgs) -> Result<u8> {
    let doc = match args.format {
        ListFormat::Human => crate::catalog::render_matrix(),
        ListFormat::Json => json_document(&crate::catalog::matrix(), true, "the matrix")?,
    };
    write_stdout(&doc)?;
    Ok(exit::OK)
}

fn review(args: ReviewArgs) -> Result<u8> {
    let found = discover::discover(&args.paths).map_err(|e| UsageError(e.to_string()))?;
    warn(&found.warnings);
    let mode = if args.accept_all {
        crate::review::Mode::AcceptAll
    } else if args.accept_new {
        crate::review::Mode::AcceptNew
    } else if args.reject_all {
        crate::review::Mode::RejectAll
    } else if args.list {
        crate::review::Mode::List
    } else {
        crate::review::Mode::Interactive
    };
    use std::io::IsTerminal;
    let stdin = std::io::stdin();
    let mut lines = stdin.lock();
    // In a terminal one key answers, as in `cargo insta review`; piped answers are lines.
    let term = console::Term::stdout();
    let mut key = || -> std::io::Result<Option<char>> {
        Ok(match term.read_key()? {
            console::Key::Char(c) => Some(c),
            console::Key::Escape => Some('\u{1b}'),
            console::Key::Enter => Some('\n'),
            _ => Some('?'),
        })
    };
    let input = if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
        crate::review::Answers::Keys(&mut key)
    } else {
        crate::review::Answers::Lines(&mut lines)
    };
    let mut out = std::io::stdout().lock();
    let summary = crate::review::review(
        &args.dir,
        &found.cases,
        mode,
        input,
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
        traits: onnx_idx_check::runner::Traits::Passing,
        ..RunOptions::default()
    };
    let (results, _) = runner::run_all(&cases, &opts, config::jobs(args.jobs)?, false, |_| {});
    let cov = crate::coverage_report::report(&results, args.all);
    let doc = match args.format {
        ListFormat::Human => crate::coverage_report::render(&cov, stdout_width()),
        ListFormat::Json => json_document(&cov, true, "the coverage")?,
    };
    write_stdout(&doc)?;
    Ok(exit::OK)
}

/// The terminal's width when stdout is one, else 100 columns (the width of `--help`): a file or
/// a pipe has no width, and 100 reads well in logs and editors.
fn stdout_width() -> usize {
    console::Term::stdout()
        .size_checked()
        .map_or(100, |(_, cols)| usize::from(cols))
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
                "{} is not a case directory (no model.onnx or model.xml)",
                args.case.display()
            ))
        })?;
    let r = crate::bench::bench(
        &case,
        &opts,
        crate::bench::Warmup {
            runs: args.warmup,
            at_least: std::time::Duration::from_millis(args.warmup_ms),
        },
        args.iters,
    )
    .map_err(UsageError)?;
    let doc = match args.format {
        ListFormat::Human => crate::bench::render(&r),
        ListFormat::Json => json_document(&r, false, "the result")?,
    };
    write_stdout(&doc)?;
    Ok(exit::OK)
}

/// `show`: 0 when everything was shown, 1 when some file of a case could not be, 2 (a usage
/// error) when PATH itself cannot be.
fn show(args: ShowArgs) -> Result<u8> {
    let opts = crate::show::Options {
        full: args.full,
        max_tensor_bytes: config::parse_bytes(&args.max_tensor_bytes)?,
    };
    let shown = crate::show::load(&args.path, &opts).map_err(|e| UsageError(e.to_string()))?;
    let doc = match args.format {
        ListFormat::Human => crate::show::human::render(&shown, opts.full),
        ListFormat::Json => {
            crate::show::json::render(&shown, opts.full).context("serialising the document")?
        }
    };
    write_stdout(&doc)?;
    Ok(if shown.problems() > 0 {
        exit::CASES_FAILED
    } else {
        exit::OK
    })
}

/// `generate`: 0 written or verified, 1 when `--verify` found a file that does not match the
/// manifest, 2 (a usage error) when OUTDIR or `--ops` cannot be used.
fn generate(args: GenerateArgs) -> Result<u8> {
    use crate::generate::{self, verify, GenerateError};
    if args.verify {
        let v = verify::verify(&args.outdir).map_err(|e| UsageError(e.to_string()))?;
        let mut doc = String::new();
        for p in &v.problems {
            doc.push_str(&format!("{p}\n"));
        }
        let m = &v.manifest;
        let what = format!(
            "{} files of {} cases (MANIFEST.json: seed {}, profile {}, {} {})",
            v.files,
            m.cases.len(),
            m.seed,
            m.profile,
            m.tool,
            m.tool_version
        );
        if v.problems.is_empty() {
            doc.push_str(&format!("{}: verified {what}\n", args.outdir.display()));
        } else {
            doc.push_str(&format!(
                "{}: {} problem(s) in {what}\n",
                args.outdir.display(),
                v.problems.len()
            ));
        }
        write_stdout(&doc)?;
        return Ok(if v.problems.is_empty() {
            exit::OK
        } else {
            exit::CASES_FAILED
        });
    }
    let opts = generate::Options {
        profile: match args.profile {
            crate::cli::Profile::Quick => generate::Profile::Quick,
            crate::cli::Profile::Full => generate::Profile::Full,
            crate::cli::Profile::Stress => generate::Profile::Stress,
        },
        seed: args.seed,
        ops: args.ops,
        max_tensor_bytes: config::parse_bytes(&args.max_tensor_bytes)?,
        format: match args.format {
            crate::cli::ModelFormat::Onnx => onnx_idx_check::load::ir::ModelFormat::Onnx,
            crate::cli::ModelFormat::Ir => onnx_idx_check::load::ir::ModelFormat::Ir,
        },
    };
    let s = generate::generate(&args.outdir, &opts).map_err(|e| {
        if e.downcast_ref::<GenerateError>().is_some() {
            UsageError(e.to_string()).into()
        } else {
            e
        }
    })?;
    let mut doc = format!(
        "wrote {} cases to {}: {} with expected outputs, {} that require an error; {} files, {} bytes\n",
        s.cases,
        s.outdir.display(),
        s.cases - s.errored,
        s.errored,
        s.files,
        s.bytes
    );
    if let Some(n) = s.replaced {
        doc.push_str(&format!("replaced a previous suite of {n} cases\n"));
    }
    if s.left_out > 0 {
        doc.push_str(&format!(
            "left out {} cases onnx-idx-check does not implement (no reference values)\n",
            s.left_out
        ));
    }
    if !s.no_ir_type.is_empty() {
        let types: Vec<String> = s
            .no_ir_type
            .iter()
            .map(|(t, n)| format!("{t} {n}"))
            .collect();
        doc.push_str(&format!(
            "left out {} cases whose type OpenVINO IR cannot hold ({})\n",
            s.no_ir_type.values().sum::<usize>(),
            types.join(", ")
        ));
    }
    if s.too_large > 0 {
        doc.push_str(&format!(
            "left out {} cases with a tensor larger than --max-tensor-bytes ({})\n",
            s.too_large, args.max_tensor_bytes
        ));
    }
    doc.push_str(&format!(
        "run them: onnx-idx-check run {} --expectations {}\n",
        s.outdir.display(),
        s.outdir.join(generate::EXPECTATIONS_FILE).display()
    ));
    write_stdout(&doc)?;
    Ok(exit::OK)
}

/// A JSON document with a trailing newline, pretty-printed or on one line.
fn json_document(value: &impl Serialize, pretty: bool, what: &str) -> Result<String> {
    let mut s = if pretty {
        serde_json::to_string_pretty(value)
    } else {
        serde_json::to_string(value)
    }
    .with_context(|| format!("serialising {what}"))?;
    s.push('\n');
    Ok(s)
}
