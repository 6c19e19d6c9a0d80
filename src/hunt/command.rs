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
    let time = crate::deadline::parse_limit(&args.time)
        .map_err(|e| UsageError(format!("--time: {e}")))?
        .filter(|t| !t.is_zero())
        .ok_or_else(|| UsageError("--time: give the seconds to hunt for (more than 0)".into()))?;
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
                "finding: {} {}-{} {} {}{} (diagnosis: {}), {} -> {} elements: {}",
                f.runtime,
                f.op,
                f.version,
                f.dtype,
                f.verdict,
                f.fault
                    .as_ref()
                    .map_or(String::new(), |x| format!(" ({x})")),
                f.diagnosis,
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
    println!(
        "hunted {} for {:.1} s (seed {}{shard_note}): {} cases tried in {} round(s), {} left out (not implemented by the reference)\n  {} disagreements, {} findings ({} duplicates)\n  wrote {}",
        label,
        summary.elapsed.as_secs_f64(),
        args.seed,
        summary.tried,
        summary.rounds,
        summary.skipped,
        summary.disagreements,
        summary.findings.len(),
        summary.duplicates,
        args.out.join(findings::FILE).display()
    );
    for f in &summary.findings {
        println!(
            "  {}: {}-{} {} {} ({})",
            f.case, f.op, f.version, f.dtype, f.verdict, f.diagnosis
        );
    }
    Ok(exit::OK)
}
