//! `hunt --runtime RUNTIME`: differential testing. Cases come from the generator's space in a
//! seeded order ([`plan`]); each runs through the runtime under test; every disagreement that is
//! new by its key (operator, version, data type, verdict, diagnosis: [`findings`]) is minimized
//! with [`crate::minimize`] and written with its report. The hunt stops when its time is up or
//! after `--max-cases`.
//!
//! - [`plan`]: the case order, the rounds of fresh variants and the shards;
//! - [`findings`]: a finding, its key and `findings.json`;
//! - [`command`]: the subcommand and its progress display.

pub(crate) mod command;
pub(crate) mod findings;
pub(crate) mod plan;

use crate::minimize::command::Chosen;
use crate::minimize::{self, disagreement, Judge, Outcome};
use crate::ops::OpDef;
use crate::owned::OwnedDir;
use crate::verdict::{Fault, Status};
use findings::Finding;
use std::collections::BTreeSet;
use std::io::Write;
use std::time::{Duration, Instant};

/// The longest a hunt spends shrinking one finding (beyond the candidate being judged then): a
/// runtime that hangs costs `--timeout` per candidate, and the hunt must go on.
const MINIMIZE_TIME: Duration = Duration::from_secs(60);

/// What to hunt.
pub(crate) struct Options {
    /// The operators whose cases are drawn.
    pub ops: Vec<&'static OpDef>,
    /// The seed of the order and of the variants.
    pub seed: u64,
    /// Shard `k` of `n` (1-based); `(1, 1)` for all.
    pub shard: (u64, u64),
    /// How long to hunt.
    pub time: Duration,
    /// Try only the cases numbered below this (in the seeded order, before sharding).
    pub max_cases: Option<u64>,
    /// How each finding is minimized.
    pub minimize: minimize::Options,
}

/// What happened, as it happens, for the progress display.
pub(crate) enum Event<'a> {
    /// A case was judged.
    Case {
        /// Cases judged so far.
        tried: u64,
        /// Findings so far.
        findings: usize,
    },
    /// A new finding was written.
    Finding(&'a Finding),
    /// Something to tell (a case that could not be minimized).
    Note(String),
}

/// What a hunt did.
#[derive(Debug, Default)]
pub(crate) struct Summary {
    /// Cases judged by the runtime.
    pub tried: u64,
    /// Cases our reference does not implement, left out.
    pub skipped: u64,
    /// Cases the runtime disagreed on.
    pub disagreements: u64,
    /// Of them, those whose key was already found.
    pub duplicates: u64,
    /// The findings, in the order found.
    pub findings: Vec<Finding>,
    /// Rounds begun (round 0: the full profile; later: fresh variants).
    pub rounds: u64,
    /// How long it ran.
    pub elapsed: Duration,
}

/// Hunts with `chosen`'s runtime, writing findings into `out` (taken, and empty), each file
/// recorded there before it is written.
pub(crate) fn hunt(
    out: &mut OwnedDir,
    chosen: &Chosen,
    opts: &Options,
    on_event: &mut dyn FnMut(Event<'_>),
) -> anyhow::Result<Summary> {
    let start = Instant::now();
    let deadline = start + opts.time;
    let mut judge = Judge::new(chosen.runtime.clone(), opts.minimize.repeat)?;
    let scratch = tempfile::Builder::new()
        .prefix("onnx-idx-check-hunt-")
        .tempdir()?;
    out.record([findings::TRIED_FILE, findings::FILE])?;
    let mut tried_log = std::io::BufWriter::new(std::fs::File::create(
        out.path().join(findings::TRIED_FILE),
    )?);
    writeln!(tried_log, "index\tseed\tcase\tverdict")?;
    let mut seen = BTreeSet::new();
    let mut summary = Summary::default();
    let mut first: u64 = 0;
    'rounds: for r in 0.. {
        if opts.max_cases.is_some_and(|m| first >= m) {
            break;
        }
        let specs = plan::round(&opts.ops, opts.seed, r, opts.minimize.repeat > 1);
        if specs.is_empty() {
            break;
        }
        summary.rounds = r + 1;
        let seed = plan::round_seed(opts.seed, r);
        let n = specs.len() as u64;
        // Cases keep the numbers of the seeded order (the shards and --max-cases count those);
        // the queue is only the order this hunt tries its own cases in.
        let mut queue: plan::Queue = specs
            .into_iter()
            .zip(first..)
            .filter(|&(_, index)| {
                opts.max_cases.is_none_or(|m| index < m)
                    && plan::in_shard(index, opts.shard.0, opts.shard.1)
            })
            .collect();
        first += n;
        while let Some((spec, index)) = queue.pop() {
            if Instant::now() >= deadline {
                break 'rounds;
            }
            let mut log =
                |verdict: &str| writeln!(tried_log, "{index}\t{seed}\t{}\t{verdict}", spec.name);
            let rendered = match crate::generate::render_case(&spec) {
                Ok(Some(r)) => r,
                Ok(None) => {
                    summary.skipped += 1;
                    log("unsupported")?;
                    continue;
                }
                Err(e) => {
                    // The generator and the reference disagree: a bug of ours, not the runtime's.
                    on_event(Event::Note(format!("{}: not generated: {e:#}", spec.name)));
                    log("not-generated")?;
                    continue;
                }
            };
            let dir = scratch.path().join(index.to_string()).join(&rendered.name);
            for (rel, bytes) in &rendered.files {
                let path = dir.join(rel);
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                std::fs::write(path, bytes)?;
            }
            let result = judge.case(&dir, &rendered.name);
            summary.tried += 1;
            let found = disagreement(&result).filter(|(_, sig)| {
                // Where the spec requires an error a refusal is right, and only an output or a
                // crash is wrong.
                !spec.violation
                    || sig.fault == Some(Fault::Crashed)
                    || (sig.status == Status::Failed && sig.fault.is_none())
            });
            log(found
                .as_ref()
                .map_or(result.status.as_str(), |(_, s)| s.verdict()))?;
            if let Some((_, sig)) = found {
                summary.disagreements += 1;
                // A wrong output (or one that changes between runs) tends to differ by type; a
                // crash, a hang or a refusal rarely does, and costs a worker each time.
                if sig.status == Status::Failed {
                    queue.promote(&spec.kind);
                }
                let op = crate::generate::op_name(spec.def);
                let dtype = spec.dtype.to_string();
                let key = (op.clone(), spec.version.since, dtype.clone(), sig.clone());
                if !seen.insert(key.clone()) {
                    summary.duplicates += 1;
                } else {
                    let budget = minimize::Options {
                        time: Some(
                            MINIMIZE_TIME.min(deadline.saturating_duration_since(Instant::now())),
                        ),
                        ..opts.minimize.clone()
                    };
                    match minimize::minimize(&dir, &rendered.name, &mut judge, &budget) {
                        Ok(Outcome::Minimized(m)) => {
                            // The minimal case's own disagreement names the finding: a runtime
                            // whose outputs change from run to run may show another one there
                            // than on the case it came from, and that one may be known already.
                            let minimal = (
                                op.clone(),
                                spec.version.since,
                                dtype.clone(),
                                m.signature.clone(),
                            );
                            let known = minimal != key && !seen.insert(minimal);
                            if known {
                                summary.duplicates += 1;
                            } else {
                                let finding =
                                    write_finding(out, chosen, &m, (&spec, &rendered.name, seed))?;
                                on_event(Event::Finding(&finding));
                                summary.findings.push(finding);
                                write_findings(out, &summary.findings)?;
                            }
                        }
                        Ok(Outcome::Agrees(_)) => on_event(Event::Note(format!(
                            "{}: the runtime agreed when asked again (flaky?): not minimized",
                            rendered.name
                        ))),
                        Err(e) => on_event(Event::Note(format!(
                            "{}: could not be minimized: {e}",
                            rendered.name
                        ))),
                    }
                }
            }
            let _ = std::fs::remove_dir_all(dir.parent().unwrap_or(&dir));
            on_event(Event::Case {
                tried: summary.tried,
                findings: summary.findings.len(),
            });
        }
    }
    tried_log.flush()?;
    write_findings(out, &summary.findings)?;
    summary.elapsed = start.elapsed();
    Ok(summary)
}

/// Writes the minimal case `m` and its `REPORT.md` to a directory of `out` named for its key, and
/// says what was found; `from` is the generated case it came from, its name and generator seed.
fn write_finding(
    out: &mut OwnedDir,
    chosen: &Chosen,
    m: &minimize::Minimized,
    from: (&crate::generate::cases::CaseSpec, &str, u64),
) -> anyhow::Result<Finding> {
    let (spec, original, seed) = from;
    let sig = &m.signature;
    let op = crate::generate::op_name(spec.def);
    let dtype = spec.dtype.to_string();
    let name = findings::unused_dir_name(
        out.path(),
        &findings::dir_name(
            &op,
            spec.version.since,
            &dtype,
            sig.verdict(),
            sig.diagnosis,
        ),
    );
    out.record([format!("{name}/")])?;
    crate::minimize::report::write(
        m,
        &chosen.runtime,
        &chosen.flag,
        chosen.api,
        &out.path().join(&name),
    )?;
    out.record_tree(&name)?;
    let info = chosen.runtime.info();
    Ok(Finding {
        runtime: info.name.clone(),
        runtime_version: info.version.clone(),
        op,
        version: spec.version.since,
        dtype,
        verdict: sig.status.as_str().to_string(),
        fault: sig.fault.map(|f| f.as_str().to_string()),
        diagnosis: sig.diagnosis.to_string(),
        case: name,
        original: original.to_string(),
        seed,
        original_size: m.original.size(),
        minimal_size: m.subject.size(),
        reason: m
            .result
            .data_sets
            .first()
            .and_then(|d| d.reason.clone())
            .unwrap_or_default(),
    })
}

/// Writes `findings.json` (rewritten after every finding, so a hunt cut short keeps them).
fn write_findings(out: &OwnedDir, list: &[Finding]) -> anyhow::Result<()> {
    let mut json = serde_json::to_string_pretty(list)?;
    json.push('\n');
    crate::fsutil::write_atomic(out.path(), findings::FILE, json.as_bytes())?;
    Ok(())
}
