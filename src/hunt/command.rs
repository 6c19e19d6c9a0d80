//! The `hunt` subcommand: arguments -> the runtime -> [`super::hunt`] with a progress display
//! (a spinner line on a terminal, a plain line per finding otherwise) -> the summary.

use super::{findings, Event, Options};
use crate::cli::HuntArgs;
use crate::config::UsageError;
use crate::exit;
use anyhow::Result;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// The command named in the output directory's record.
const COMMAND: &str = "hunt";

/// `hunt`: 0 when the hunt ran (findings or not), 2 for usage errors.
pub(crate) fn run(args: HuntArgs) -> Result<u8> {
    let ops = crate::generate::select_ops(&args.ops).map_err(|e| UsageError(e.to_string()))?;
    let shard = crate::config::shard(args.shard.as_deref())?.map_or((1, 1), |s| (s.k(), s.n()));
    let time = onnx_idx_check::deadline::parse_limit(&args.time)
        .map_err(|e| UsageError(format!("--time: {e}")))?
        .filter(|t| !t.is_zero())
        .ok_or_else(|| UsageError("--time: give the seconds to hunt for (more than 0)".into()))?;
    let pages = pages(&args.report)?;
    let out_error = |e: crate::owned::OwnedError| UsageError(format!("--out: {e}"));
    // Refused before the runtime starts; nothing is removed until it has.
    crate::owned::check(&args.out, COMMAND).map_err(out_error)?;
    let chosen = crate::minimize::command::start_runtime(
        args.runtime.as_deref(),
        args.runtime_cmd.as_deref(),
        &args.timeout,
    )?;
    let mut out = crate::owned::OwnedDir::take(&args.out, COMMAND).map_err(out_error)?;
    let opts = Options {
        ops,
        seed: args.seed,
        shard,
        time,
        max_cases: args.max_cases,
        batch: args.batch.map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
        minimize: crate::minimize::Options {
            max_steps: args.max_steps,
            repeat: usize::try_from(args.repeat).unwrap_or(usize::MAX),
            ..Default::default()
        },
    };
    let start = Instant::now();
    let terminal = std::io::stderr().is_terminal();
    let bar = terminal.then(|| {
        let bar = indicatif::ProgressBar::new_spinner();
        bar.enable_steady_tick(Duration::from_millis(200));
        bar
    });
    let label = chosen.runtime.label().to_string();
    let mut on_event = |e: Event<'_>| match e {
        Event::Case { tried, findings } => {
            if let Some(bar) = &bar {
                let left = time.saturating_sub(start.elapsed()).as_secs();
                bar.set_message(format!(
                    "hunting {label}: {tried} cases tried, {findings} findings, {left} s left"
                ));
            }
        }
        Event::Finding(f) => {
            let line = format!(
                "finding: {} {}: {}-{} {} ({}), {} -> {} elements: {}",
                f.runtime,
                f.class.title().to_lowercase(),
                f.op,
                f.versions.iter().next().copied().unwrap_or_default(),
                f.dtypes.iter().next().map_or("", String::as_str),
                what(f),
                f.original_size,
                f.minimal_size,
                args.out.join(&f.case).display()
            );
            match &bar {
                Some(bar) => bar.println(line),
                None => eprintln!("{line}"),
            }
        }
        Event::Note(n) => match &bar {
            Some(bar) => bar.println(format!("note: {n}")),
            None => eprintln!("note: {n}"),
        },
    };
    let summary = super::hunt(&mut out, &chosen, &opts, &mut on_event)?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let shard_note = if shard.1 > 1 {
        format!(", shard {}/{}", shard.0, shard.1)
    } else {
        String::new()
    };
    print!(
        "{}",
        summary_text(&summary, &label, args.seed, &shard_note, &args.out)
    );
    let info = chosen.runtime.info();
    for page in &pages {
        let html = scoreboard(&summary, (&info.name, &info.version), &args.out, page);
        // A page inside --out is the hunt's, as its findings are: recorded before it is written,
        // so the next hunt into the directory may replace it.
        if let Ok(inside) = page.strip_prefix(&args.out) {
            out.record([inside.to_string_lossy().into_owned()])?;
        }
        onnx_idx_check::report::Dest::File(page.clone()).write(&html)?;
    }
    Ok(exit::OK)
}

/// The files of `--report html=FILE`: a hunt writes its scoreboard and no other report.
fn pages(specs: &[String]) -> Result<Vec<std::path::PathBuf>, UsageError> {
    specs
        .iter()
        .map(|s| match crate::config::report_spec(s)? {
            crate::config::ReportSpec {
                format: crate::cli::Format::Html,
                dest: onnx_idx_check::report::Dest::File(path),
            } => Ok(path),
            _ => Err(UsageError(format!(
                "--report '{s}': a hunt writes one report, its HTML scoreboard, to a file: \
                 html=FILE (findings.json is its JSON)"
            ))),
        })
        .collect()
}

/// The hunt's scoreboard page, its links to each finding's REPORT.md relative to `page`.
fn scoreboard(
    s: &super::Summary,
    runtime: (&str, &str),
    out: &std::path::Path,
    page: &std::path::Path,
) -> String {
    use crate::scoreboard::hunt::{HuntFinding, Hunted};
    let mut sorted: Vec<&findings::Finding> = s.findings.iter().collect();
    sorted.sort_by_key(|f| f.class);
    let hunted = Hunted {
        runtime,
        out,
        page,
        tried: &s.cases,
        findings: sorted
            .iter()
            .map(|f| HuntFinding {
                class: f.class.id(),
                title: f.class.title(),
                operators: f.operators_text(),
                dtypes: f.dtypes.iter().cloned().collect(),
                diagnosis: &f.diagnosis,
                case: &f.case,
                reason: &f.reason,
                seen: f.seen,
            })
            .collect(),
        elapsed: s.elapsed,
    };
    crate::scoreboard::hunt::page(&onnx_idx_check::report::TOOL, &hunted).render()
}

/// What a finding's behaviour is, in brief: its symptom, its diagnosis when one explains it.
fn what(f: &findings::Finding) -> String {
    let mut parts = Vec::new();
    if !f.symptom.is_empty() {
        parts.push(f.symptom.clone());
    }
    if f.diagnosis != "none" {
        parts.push(format!("diagnosis: {}", f.diagnosis));
    }
    if parts.is_empty() {
        parts.push(f.class.id().to_string());
    }
    parts.join("; ")
}

/// The summary a hunt prints: the findings by severity, then what the runtime does not
/// implement, then the counts.
fn summary_text(
    s: &super::Summary,
    label: &str,
    seed: u64,
    shard_note: &str,
    out: &std::path::Path,
) -> String {
    use onnx_idx_check::report::counted;
    use std::fmt::Write as _;
    let mut t = String::new();
    let _ = writeln!(
        t,
        "hunted {label} for {:.1} s (seed {seed}{shard_note}): {} in {}",
        s.elapsed.as_secs_f64(),
        counted(s.findings.len(), "finding", "findings"),
        counted(s.tried as usize, "case tried", "cases tried"),
    );
    let mut sorted: Vec<&findings::Finding> = s.findings.iter().collect();
    sorted.sort_by_key(|f| f.class);
    for class in crate::minimize::behaviour::Class::ALL {
        let of: Vec<&&findings::Finding> = sorted.iter().filter(|f| f.class == class).collect();
        if of.is_empty() {
            continue;
        }
        let _ = writeln!(t, "\n{} ({})", class.title(), of.len());
        for f in of {
            let dtypes: Vec<&str> = f.dtypes.iter().map(String::as_str).collect();
            // A bug of some modes of the runtime only says which.
            let only = if f.modes_passing.is_empty() {
                String::new()
            } else {
                format!("; only with {}", f.modes_failing.join(", "))
            };
            let context = f
                .context
                .as_ref()
                .map_or(String::new(), |c| format!(" (in context: {c})"));
            let _ = writeln!(
                t,
                "  {}{context} on {}: {} ({}{only})\n    {}",
                f.operators_text(),
                dtypes.join(", "),
                what(f),
                counted(f.seen as usize, "case", "cases"),
                out.join(&f.case).display()
            );
        }
    }
    if !s.coverage.is_empty() {
        let _ = writeln!(
            t,
            "\nNot implemented by the runtime (refused every case; not findings, not tried again)"
        );
        for row in &s.coverage {
            let versions: Vec<String> = row.versions.iter().map(i64::to_string).collect();
            let what = if row.whole_op {
                "every version".to_string()
            } else if row.dtypes.is_empty() {
                "every type".to_string()
            } else {
                row.dtypes.iter().cloned().collect::<Vec<_>>().join(", ")
            };
            let _ = writeln!(
                t,
                "  {}-{}: {what} ({}): {}",
                row.op,
                versions.join("/"),
                counted(row.cases as usize, "case", "cases"),
                onnx_idx_check::report::one_line(&crate::minimize::behaviour::clip(
                    &row.message,
                    100
                ))
            );
        }
    }
    let batched = if s.batches > 0 {
        format!(
            " ({} of them agreed in shared models; {} run)",
            s.batched,
            counted(s.batches as usize, "shared model", "shared models")
        )
    } else {
        String::new()
    };
    let _ = writeln!(
        t,
        "\n{}{batched} in {}; {} disagreements ({} more of known findings); left out: {} not implemented by the runtime, {} after a hang of their kind, {} of an operator version a finding says is computed as another, {} not implemented by onnx-idx-check\nwrote {}",
        counted(s.tried as usize, "case tried", "cases tried"),
        counted(s.rounds as usize, "round", "rounds"),
        s.disagreements,
        s.duplicates,
        s.not_implemented,
        s.after_hang,
        s.explained,
        s.skipped,
        out.join(findings::FILE).display()
    );
    t
}
