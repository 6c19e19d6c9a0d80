//! `hunt --runtime RUNTIME`: differential testing. Cases come from the generator's space in a
//! seeded order ([`plan`]); each runs through the runtime under test, and every disagreement is
//! classified by what it means for the runtime's users ([`Class`]). One bug is one finding
//! ([`findings`]): the first case that shows a behaviour is minimized, holding the behaviour fixed,
//! and written with its report; later cases with the same behaviour add the versions and data
//! types they were seen on. A runtime that refuses every case of what it does not implement is not
//! buggy there: [`coverage`] keeps those refusals out of the findings and their cases untried.
//! The hunt stops when its time is up or after `--max-cases`.
//!
//! - [`plan`]: the case order, the rounds of fresh variants and the shards;
//! - [`batch`]: many valid cases in one model, for a runtime that pays a compile per model;
//! - [`coverage`]: what the runtime implements, as the hunt learns it;
//! - [`findings`]: a finding, its key and `findings.json`;
//! - [`modes`]: the runtime's modes (optimizations on and off, ...) the cases are spread over;
//! - [`command`]: the subcommand and its progress display.

pub(crate) mod batch;
pub(crate) mod command;
pub(crate) mod coverage;
pub(crate) mod findings;
pub(crate) mod modes;
pub(crate) mod plan;

use crate::generate::cases::CaseSpec;
use crate::generate::variant::Variant;
use crate::minimize::behaviour::{self, Behaviour, Class};
use crate::minimize::command::Chosen;
use crate::minimize::report::{observe, Observed};
use crate::minimize::{self, Judge, MinimizeError, Outcome};
use crate::owned::OwnedDir;
use coverage::{Coverage, Group, NotImplemented};
use findings::{Finding, Key};
use onnx_idx_check::ops::{OpDef, Role};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The longest a hunt spends shrinking one finding (beyond the candidate being judged then): a
/// runtime that hangs costs `--timeout` per candidate, and the hunt must go on.
const MINIMIZE_TIME: Duration = Duration::from_secs(60);

/// How many times a nondeterministic disagreement is minimized before it is taken for one that
/// does not show again.
const RACE_ATTEMPTS: u32 = 3;

/// Runs of a case where a race can show (a reduction of duplicate indices, a large case), at
/// alternating thread counts: without any flag, a hunt finds a lost update between threads.
const RACE_RUNS: usize = 3;

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
    /// Cases per model at most (`--batch`); `None`: [`batch::SIZE`] for a runtime whose hello
    /// says it batches, else 1.
    pub batch: Option<usize>,
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
    /// Cases left out because the runtime does not implement what they need.
    pub not_implemented: u64,
    /// Cases left out because a case of their kind hung already.
    pub after_hang: u64,
    /// Cases left out because a finding says the runtime computes their operator version as
    /// another operator (`domain-ignored`): every case of it is that bug, and hides any other.
    pub explained: u64,
    /// Cases the runtime disagreed on (refusals of what it does not implement are not counted).
    pub disagreements: u64,
    /// Of them, those whose behaviour was already a finding.
    pub duplicates: u64,
    /// The findings, in the order found.
    pub findings: Vec<Finding>,
    /// What the runtime does not implement.
    pub coverage: Vec<NotImplemented>,
    /// Of the cases judged, those the runtime ran in a model with other cases and that agreed
    /// there.
    pub batched: u64,
    /// Models of more than one case the runtime ran.
    pub batches: u64,
    /// Rounds begun (round 0: the full profile; later: fresh variants).
    pub rounds: u64,
    /// How long it ran.
    pub elapsed: Duration,
    /// Every case tried (a line of `tried.tsv` each), for the scoreboard's grid.
    pub cases: Vec<crate::scoreboard::hunt::Tried>,
}

/// A hunt in progress.
struct Hunt<'a> {
    out: &'a mut OwnedDir,
    chosen: &'a Chosen,
    opts: &'a Options,
    judge: Judge,
    deadline: Instant,
    coverage: Coverage,
    keys: BTreeMap<Key, usize>,
    /// Refusals of valid cases of a group not yet known to run: findings once one case runs.
    pending: BTreeMap<Group, Vec<(CaseSpec, u64, Variant)>>,
    /// The kinds of case that hung: a hang costs `--timeout`, once per kind.
    hung: HashSet<String>,
    /// Operator versions (alone, not in a context graph) a whole-operator finding explains.
    explained: HashSet<(String, i64)>,
    /// The findings whose minimal case holds an empty tensor, by index.
    with_empty: HashSet<usize>,
    /// Cases per model at most.
    batch_size: usize,
    /// Where merged batches are written.
    scratch: PathBuf,
    /// `tried.tsv`: one line per case judged.
    log: std::io::BufWriter<std::fs::File>,
    summary: Summary,
    /// The runtime's modes, and the one the judge runs in now.
    modes: modes::Modes,
    mode: usize,
}

/// A case written for a batch.
struct Waiting {
    spec: CaseSpec,
    seed: u64,
    index: u64,
    /// Its scratch directory, removed once it is judged.
    dir: PathBuf,
    written: Written,
    ready: batch::Ready,
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
    let scratch = tempfile::Builder::new()
        .prefix("onnx-idx-check-hunt-")
        .tempdir()?;
    out.record([findings::TRIED_FILE, findings::FILE])?;
    let log = std::io::BufWriter::new(std::fs::File::create(
        out.path().join(findings::TRIED_FILE),
    )?);
    let batch_size = match opts.batch {
        Some(n) => n.max(1),
        None if chosen.runtime.batches() => batch::SIZE,
        None => 1,
    };
    let mut h = Hunt {
        judge: Judge::new(chosen.runtime.clone(), opts.minimize.repeat)?,
        out,
        chosen,
        opts,
        deadline: start + opts.time,
        coverage: Coverage::default(),
        keys: BTreeMap::new(),
        pending: BTreeMap::new(),
        hung: HashSet::new(),
        explained: HashSet::new(),
        with_empty: HashSet::new(),
        batch_size,
        scratch: scratch.path().to_path_buf(),
        log,
        summary: Summary::default(),
        modes: modes::Modes::of(chosen),
        mode: 0,
    };
    writeln!(h.log, "index\tseed\tcase\tverdict")?;
    let mut first: u64 = 0;
    'rounds: for r in 0.. {
        if opts.max_cases.is_some_and(|m| first >= m) {
            break;
        }
        let specs = plan::round(&opts.ops, opts.seed, r);
        if specs.is_empty() {
            break;
        }
        h.summary.rounds = r + 1;
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
            if Instant::now() >= h.deadline {
                break 'rounds;
            }
            let dir = scratch.path().join(index.to_string());
            if h.batchable(&spec) {
                // The cases of one model share an operator version (so their opset imports).
                // At most one of them of a group not yet known to run: a batch the runtime
                // refuses costs one request more, not a split.
                let (def, since) = (spec.def, spec.version.since);
                let mut probing = !h.coverage.runs(&group(&spec));
                let mut cases = vec![(spec, index)];
                cases.extend(queue.take(h.batch_size - 1, |c| {
                    if !(std::ptr::eq(c.def, def) && c.version.since == since && h.batchable(c)) {
                        return false;
                    }
                    if h.coverage.runs(&group(c)) {
                        return true;
                    }
                    !std::mem::replace(&mut probing, true)
                }));
                h.batch(cases, seed, &mut queue, on_event)?;
                continue;
            }
            let verdict = h.case(&spec, seed, index, &dir, &mut queue, on_event)?;
            h.tried(index, seed, &spec, verdict, on_event)?;
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
    h.log.flush()?;
    let mut summary = h.summary;
    summary.coverage = h.coverage.table();
    write_findings(h.out, &summary.findings)?;
    summary.elapsed = start.elapsed();
    Ok(summary)
}

/// The data input of a case of one node (`None` in context: the graph's inputs are not the
/// node's).
fn data_input(spec: &CaseSpec) -> Option<onnx_idx_check::tensor::Tensor> {
    if spec.context.is_some() {
        return None;
    }
    spec.version
        .input_with(Role::Data)
        .and_then(|k| spec.inputs.get(k))
        .cloned()
}

/// Whether minimal case `m` holds a zero-size tensor: an input, or every output the spec
/// defines.
fn holds_empty(m: &minimize::Minimized) -> bool {
    m.subject.inputs.iter().any(|(_, t)| t.numel() == 0)
        || matches!(&m.reference, minimize::subject::Reference::Outputs(o) if o.iter().all(|t| t.numel() == 0))
}

/// The key of behaviour `b` of `spec`'s operator, in `spec`'s context graph.
fn key(spec: &CaseSpec, b: &Behaviour) -> Key {
    let op = crate::generate::op_name(spec.def);
    Key::new(&op, findings::context_of(spec).as_deref(), b)
}

/// Whether the runtime answered some data set of `result` with outputs.
fn answered(result: &onnx_idx_check::verdict::CaseResult) -> bool {
    result
        .data_sets
        .iter()
        .any(|d| !d.outputs.is_empty() && d.fault.is_none())
}

/// The group a case belongs to for coverage: operator, version, and data type with the reduction
/// it uses (a runtime may implement a reduction on some types only).
fn group(spec: &CaseSpec) -> Group {
    let mode = spec
        .traits
        .iter()
        .find_map(|t| t.strip_prefix("reduction:"))
        .filter(|m| *m != "none");
    (
        crate::generate::op_name(spec.def),
        spec.version.since,
        match mode {
            Some(m) => format!("{} (reduction {m})", spec.dtype),
            None => spec.dtype.to_string(),
        },
    )
}

/// A case rendered into a directory, and the rule its inputs break (`None`: the spec defines
/// outputs).
struct Written {
    name: String,
    /// The case in its default form.
    dir: PathBuf,
    rule: Option<String>,
    /// The variant the runtime is shown.
    variant: Variant,
    /// The case in that variant (`dir` for the default).
    judged: PathBuf,
}

/// Renders `spec` into `dir`, and a copy of it in variant `variant` where the case has one
/// (else the runtime is shown the default form): `None` when our reference does not implement
/// it.
fn write_case(spec: &CaseSpec, dir: &Path, variant: Variant) -> anyhow::Result<Option<Written>> {
    let Some(rendered) = crate::generate::render_case(spec)? else {
        return Ok(None);
    };
    let case_dir = dir.join(&rendered.name);
    rendered.write_to(&case_dir)?;
    let mut written = Written {
        rule: rendered.error().map(str::to_string),
        judged: case_dir.clone(),
        name: rendered.name.clone(),
        dir: case_dir,
        variant: Variant::DEFAULT,
    };
    if variant != Variant::DEFAULT {
        let judged = dir.join(variant.id()).join(&rendered.name);
        rendered.write_to(&judged)?;
        // A case the variant does not apply to (one input, a domain without ai.onnx) is shown
        // as it is.
        if crate::generate::variant::rewrite_case(&judged, variant).is_ok() {
            written.variant = variant;
            written.judged = judged;
        }
    }
    Ok(Some(written))
}

impl Hunt<'_> {
    /// Tries one case; the word for `tried.tsv`.
    fn case(
        &mut self,
        spec: &CaseSpec,
        seed: u64,
        index: u64,
        dir: &Path,
        queue: &mut plan::Queue,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> anyhow::Result<&'static str> {
        match self.admit(spec, seed, index, dir, on_event)? {
            Err(word) => Ok(word),
            Ok(written) => {
                self.use_mode(modes::mode(seed, index, self.modes.len()), on_event);
                self.judge_alone(spec, seed, &written, dir, queue, on_event)
            }
        }
    }

    /// The case written for the runtime, or the word for `tried.tsv` of why it is not tried: its
    /// group is not implemented by the runtime, its kind hung, or our reference does not
    /// implement it.
    fn admit(
        &mut self,
        spec: &CaseSpec,
        seed: u64,
        index: u64,
        dir: &Path,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> anyhow::Result<Result<Written, &'static str>> {
        let g = group(spec);
        if self.coverage.not_implemented(&g) {
            self.coverage.skip(&g);
            self.summary.not_implemented += 1;
            return Ok(Err("not-implemented"));
        }
        if self.hung.contains(&spec.kind) {
            self.summary.after_hang += 1;
            return Ok(Err("kind-hung"));
        }
        if spec.context.is_none()
            && self
                .explained
                .contains(&(crate::generate::op_name(spec.def), spec.version.since))
        {
            self.summary.explained += 1;
            return Ok(Err("explained"));
        }
        match write_case(spec, dir, plan::variant(seed, index)) {
            Ok(Some(w)) => Ok(Ok(w)),
            Ok(None) => {
                self.summary.skipped += 1;
                Ok(Err("unsupported"))
            }
            Err(e) => {
                // The generator and the reference disagree: a bug of ours, not the runtime's.
                on_event(Event::Note(format!("{}: not generated: {e:#}", spec.name)));
                Ok(Err("not-generated"))
            }
        }
    }

    /// One line of `tried.tsv` and the progress event for a case judged (or left out).
    fn tried(
        &mut self,
        index: u64,
        seed: u64,
        spec: &CaseSpec,
        verdict: &'static str,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> anyhow::Result<()> {
        let name = &spec.name;
        writeln!(self.log, "{index}\t{seed}\t{name}\t{verdict}")?;
        self.summary.cases.push(crate::scoreboard::hunt::Tried {
            name: name.clone(),
            op_version: format!(
                "{}-{}",
                crate::generate::op_name(spec.def),
                spec.version.since
            ),
            word: verdict,
        });
        on_event(Event::Case {
            tried: self.summary.tried,
            findings: self.summary.findings.len(),
        });
        Ok(())
    }

    /// Whether `spec` may wait for a batch: batches are on, the spec defines its outputs, it is
    /// not a case where a race may show (those run alone, repeatedly), and the runtime has not
    /// refused its group without running it (such a group would refuse every batch it is in).
    fn batchable(&self, spec: &CaseSpec) -> bool {
        self.batch_size > 1
            && !spec.violation
            && !plan::race_prone(spec)
            && !self.coverage.doubtful(&group(spec))
    }

    /// Writes `cases` and judges those that can share a model in batches (one per key), the
    /// others alone.
    fn batch(
        &mut self,
        cases: Vec<(CaseSpec, u64)>,
        seed: u64,
        queue: &mut plan::Queue,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> anyhow::Result<()> {
        let mut batches: BTreeMap<batch::Key, Vec<Waiting>> = BTreeMap::new();
        for (spec, index) in cases {
            let dir = self.scratch.join(index.to_string());
            let written = match self.admit(&spec, seed, index, &dir, on_event)? {
                Err(word) => {
                    self.tried(index, seed, &spec, word, on_event)?;
                    continue;
                }
                Ok(w) => w,
            };
            let shared = if written.rule.is_none() {
                batch::ready(&written.judged)
            } else {
                None
            };
            let Some((key, ready)) = shared else {
                self.use_mode(modes::mode(seed, index, self.modes.len()), on_event);
                let verdict = self.judge_alone(&spec, seed, &written, &dir, queue, on_event)?;
                self.tried(index, seed, &spec, verdict, on_event)?;
                let _ = std::fs::remove_dir_all(&dir);
                continue;
            };
            batches.entry(key).or_default().push(Waiting {
                spec,
                seed,
                index,
                dir,
                written,
                ready,
            });
        }
        for members in batches.into_values() {
            self.judge_batch(members, queue, on_event)?;
        }
        Ok(())
    }

    /// Judges `members` in one model: those that agree there are done; a member that disagrees is
    /// judged alone. A model the runtime does not answer is split in two, down to single cases,
    /// or, when it hung, its members are judged alone (a hang costs `--timeout` each time).
    fn judge_batch(
        &mut self,
        members: Vec<Waiting>,
        queue: &mut plan::Queue,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> anyhow::Result<()> {
        if members.len() > 1 && Instant::now() < self.deadline {
            self.summary.batches += 1;
            let dir = self.scratch.join(format!("batch-{}", members[0].index));
            let readies: Vec<&batch::Ready> = members.iter().map(|m| &m.ready).collect();
            let names = batch::merge(&readies, &dir)?;
            let first = &members[0];
            self.use_mode(
                modes::mode(first.seed, first.index, self.modes.len()),
                on_event,
            );
            let result = self.judge.case(&dir, "batch");
            let _ = std::fs::remove_dir_all(&dir);
            match batch::split(&result, &names) {
                Some(seen) => {
                    let mut alone = Vec::new();
                    for (m, s) in members.into_iter().zip(seen) {
                        if s == batch::Seen::Agrees {
                            self.summary.tried += 1;
                            self.summary.batched += 1;
                            self.group_runs(&group(&m.spec), &m.dir, queue, on_event)?;
                            self.tried(m.index, m.seed, &m.spec, "passed", on_event)?;
                            let _ = std::fs::remove_dir_all(&m.dir);
                        } else {
                            alone.push(m);
                        }
                    }
                    return self.judge_each(alone, queue, on_event);
                }
                None if batch::timed_out(&result) => {
                    return self.judge_each(members, queue, on_event);
                }
                None => {
                    // The likely cause is a group not yet known to run (a type the runtime does
                    // not implement): those cases alone, the others in a batch again; a batch of
                    // known groups only is split in two.
                    let (known, unknown): (Vec<Waiting>, Vec<Waiting>) = members
                        .into_iter()
                        .partition(|m| self.coverage.runs(&group(&m.spec)));
                    if unknown.is_empty() {
                        let mut left = known;
                        let right = left.split_off(left.len() / 2);
                        self.judge_batch(left, queue, on_event)?;
                        return self.judge_batch(right, queue, on_event);
                    }
                    self.judge_each(unknown, queue, on_event)?;
                    return self.judge_batch(known, queue, on_event);
                }
            }
        }
        self.judge_each(members, queue, on_event)
    }

    /// A valid case of `g` ran: the refusals of its cases held back so far are findings now.
    fn group_runs(
        &mut self,
        g: &Group,
        dir: &Path,
        queue: &mut plan::Queue,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> anyhow::Result<()> {
        let known = self.coverage.runs(g);
        self.coverage.ran(g);
        if !known {
            for (pending, seed, variant) in self.pending.remove(g).unwrap_or_default() {
                self.retry_pending(&pending, seed, variant, dir, queue, on_event)?;
            }
        }
        Ok(())
    }

    /// Judges each of `members` alone, as a case that was never batched.
    fn judge_each(
        &mut self,
        members: Vec<Waiting>,
        queue: &mut plan::Queue,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> anyhow::Result<()> {
        for m in members {
            let verdict = if Instant::now() >= self.deadline {
                "not-tried"
            } else if self.hung.contains(&m.spec.kind) {
                self.summary.after_hang += 1;
                "kind-hung"
            } else {
                self.use_mode(modes::mode(m.seed, m.index, self.modes.len()), on_event);
                self.judge_alone(&m.spec, m.seed, &m.written, &m.dir, queue, on_event)?
            };
            self.tried(m.index, m.seed, &m.spec, verdict, on_event)?;
            let _ = std::fs::remove_dir_all(&m.dir);
        }
        Ok(())
    }

    /// Judges a written case alone; the word for `tried.tsv`.
    fn judge_alone(
        &mut self,
        spec: &CaseSpec,
        seed: u64,
        written: &Written,
        dir: &Path,
        queue: &mut plan::Queue,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> anyhow::Result<&'static str> {
        let g = group(spec);
        let repeat = if plan::race_prone(spec) {
            self.opts.minimize.repeat.max(RACE_RUNS)
        } else {
            self.opts.minimize.repeat
        };
        let result = self
            .judge
            .case_repeated(&written.judged, &written.name, repeat);
        self.summary.tried += 1;
        let found = behaviour::behaviour(&result, written.rule.as_deref(), || data_input(spec))
            .map(|(_, b)| b);
        if !spec.violation {
            match &found {
                Some(b) if b.class == Class::RefusesValid => {
                    let reason = result
                        .data_sets
                        .iter()
                        .find_map(|d| d.reason.clone())
                        .unwrap_or_default();
                    self.coverage.refused(&g, &reason);
                    // The refused case may exercise what the runtime refuses on purpose: its
                    // plainest case tells whether it runs the group at all.
                    if !self.coverage.runs(&g) {
                        queue.probe(|c| !c.violation && c.context.is_none() && group(c) == g);
                    }
                }
                // A runtime that answered with outputs (or died trying) runs the group; one
                // that refused where a refusal is allowed (duplicates without a reduction) may
                // not.
                Some(b) if b.class != Class::Crash && !answered(&result) => {}
                None if !answered(&result) => {}
                // Its refusals so far were of cases it does not run: findings.
                _ => self.group_runs(&g, dir, queue, on_event)?,
            }
        }
        let Some(b) = found else {
            return Ok(result.status.as_str());
        };
        if b.class == Class::RefusesValid && !self.coverage.runs(&g) {
            self.pending
                .entry(g)
                .or_default()
                .push((spec.clone(), seed, written.variant));
            return Ok("refused");
        }
        if b.class == Class::Crash && b.symptom == behaviour::TIMED_OUT {
            self.hung.insert(spec.kind.clone());
        }
        let word = b.class.id();
        self.consider(spec, seed, written, b, queue, on_event)?;
        Ok(word)
    }

    /// A refusal held back until its group ran: judged again (which confirms it) and, if still
    /// refused, considered as a finding.
    fn retry_pending(
        &mut self,
        spec: &CaseSpec,
        seed: u64,
        variant: Variant,
        dir: &Path,
        queue: &mut plan::Queue,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> anyhow::Result<()> {
        let dir = dir.join("pending");
        let Some(written) = write_case(spec, &dir, variant)? else {
            return Ok(());
        };
        let result = self.judge.case(&written.judged, &written.name);
        if let Some((_, b)) =
            behaviour::behaviour(&result, written.rule.as_deref(), || data_input(spec))
        {
            self.consider(spec, seed, &written, b, queue, on_event)?;
        }
        let _ = std::fs::remove_dir_all(&dir);
        Ok(())
    }

    /// A disagreement: a new finding when its behaviour is new, else one more sighting.
    fn consider(
        &mut self,
        spec: &CaseSpec,
        seed: u64,
        written: &Written,
        b: Behaviour,
        queue: &mut plan::Queue,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> anyhow::Result<()> {
        self.summary.disagreements += 1;
        // A wrong output tends to differ by type; a crash, a hang or a refusal rarely does, and
        // costs a worker each time.
        if matches!(b.class, Class::WrongOutput | Class::Nondeterministic) {
            queue.promote(&spec.kind);
        }
        if self.seen(spec, &b)? {
            return Ok(());
        }
        let budget = minimize::Options {
            time: Some(MINIMIZE_TIME.min(self.deadline.saturating_duration_since(Instant::now()))),
            repeat: if b.class == Class::Nondeterministic || plan::race_prone(spec) {
                self.opts.minimize.repeat.max(RACE_RUNS)
            } else {
                self.opts.minimize.repeat
            },
            variant: written.variant,
            ..self.opts.minimize.clone()
        };
        let before = self.judge.repeat();
        // Minimizing and telling the variants apart both need the runs that show a race.
        self.judge.set_repeat(budget.repeat);
        // A race shows now and then: a minimizer that does not see it at first is asked again.
        let attempts = if b.class == Class::Nondeterministic {
            RACE_ATTEMPTS
        } else {
            1
        };
        let done = self.found(spec, seed, written, &budget, attempts, on_event);
        self.judge.set_repeat(before);
        done
    }

    /// Minimizes a disagreement with a new behaviour and writes it as a finding; a case in
    /// context is written as it was generated (the minimizer shrinks one node, and the bug may
    /// need the graph).
    fn found(
        &mut self,
        spec: &CaseSpec,
        seed: u64,
        written: &Written,
        budget: &minimize::Options,
        attempts: u32,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> anyhow::Result<()> {
        let mut left = attempts.max(1);
        let outcome = loop {
            left -= 1;
            let outcome = if spec.context.is_some() {
                self.as_generated(spec, written, budget)
            } else {
                minimize::minimize(&written.dir, &written.name, &mut self.judge, budget)
            };
            let unseen = matches!(
                outcome,
                Ok(Outcome::Agrees(_)) | Err(MinimizeError::NotReproducible { .. })
            );
            if !unseen || left == 0 || Instant::now() >= self.deadline {
                break outcome;
            }
        };
        match outcome {
            Ok(Outcome::Minimized(mut m)) => {
                // The minimal case's behaviour names the finding: a runtime whose outputs
                // change from run to run may show another one there, and that may be known.
                if self.seen(spec, &m.behaviour)? {
                    return Ok(());
                }
                if m.behaviour.class == Class::AcceptsInvalid && self.unsafe_output(&m)? {
                    m.behaviour.class = Class::Unsafe;
                }
                let variants = self.variants(&m)?;
                if let Some(i) = self.same_form(&m, spec, &variants) {
                    self.keys.insert(key(spec, &m.behaviour), i);
                    return self.sighting(i, spec);
                }
                let modes = self.judged_modes(&m);
                let mut finding =
                    self.write_finding(&m, spec, &written.name, seed, &variants, &modes)?;
                for (v, fails) in variants {
                    if fails {
                        finding.variants_failing.push(v.id().to_string());
                    } else {
                        finding.variants_passing.push(v.id().to_string());
                    }
                }
                for (k, fails) in modes {
                    let id = self.modes.get(k).id.clone();
                    if fails {
                        finding.modes_failing.push(id);
                    } else {
                        finding.modes_passing.push(id);
                    }
                }
                on_event(Event::Finding(&finding));
                if holds_empty(&m) && spec.context.is_none() {
                    self.with_empty.insert(self.summary.findings.len());
                }
                self.keys
                    .insert(key(spec, &m.behaviour), self.summary.findings.len());
                if spec.context.is_none() && findings::whole_operator(m.behaviour.diagnosis) {
                    self.explained
                        .insert((crate::generate::op_name(spec.def), spec.version.since));
                }
                self.summary.findings.push(finding);
                write_findings(self.out, &self.summary.findings)?;
            }
            Ok(Outcome::Agrees(_)) => on_event(Event::Note(format!(
                "{}: the runtime agreed when asked again (flaky?): not minimized",
                written.name
            ))),
            Err(MinimizeError::Subject(e)) => on_event(Event::Note(format!(
                "{}: not a case the minimizer shrinks ({e}): not written",
                written.name
            ))),
            Err(MinimizeError::NotReproducible { .. }) if attempts > 1 => {
                on_event(Event::Note(format!(
                    "{}: its outputs changed between runs once, and not in {attempts} more \
                     tries: not written",
                    written.name
                )))
            }
            Err(e) => on_event(Event::Note(format!(
                "{}: could not be minimized: {e}",
                written.name
            ))),
        }
        Ok(())
    }

    /// Whether behaviour `b` of `spec` is a finding already; if so, `spec`'s operator version
    /// and data type are added to it, and to the list in its `REPORT.md`. A case in context
    /// that shows a behaviour the operator shows alone is a sighting of that finding: only a
    /// behaviour new to the operator makes a finding of its context.
    fn seen(&mut self, spec: &CaseSpec, b: &Behaviour) -> anyhow::Result<bool> {
        let op = crate::generate::op_name(spec.def);
        let alone = self.keys.get(&Key::new(&op, None, b));
        let Some(&i) = alone.or_else(|| self.keys.get(&key(spec, b))) else {
            return Ok(false);
        };
        // A known finding that says the node is computed as another operator explains this
        // version too (TVM runs OpenVINO's Gather-1 as ONNX's Gather as it does Gather-8).
        if spec.context.is_none() && findings::whole_operator(b.diagnosis) {
            self.explained.insert((op, spec.version.since));
        }
        self.sighting(i, spec)?;
        Ok(true)
    }

    /// Finding `i` seen again on `spec`: its operator version and data type are added to it,
    /// and to the list in its `REPORT.md`.
    fn sighting(&mut self, i: usize, spec: &CaseSpec) -> anyhow::Result<()> {
        let op = crate::generate::op_name(spec.def);
        let f = &mut self.summary.findings[i];
        if f.saw(&op, spec.version.since, &spec.dtype.to_string()) {
            let dir = self.out.path().join(&f.case);
            crate::minimize::report::replace_line(&dir, findings::SEEN_ON, &f.seen_on_line())?;
        }
        self.summary.duplicates += 1;
        write_findings(self.out, &self.summary.findings)
    }

    /// The finding whose cause a new minimal case `m` shares by its form: when a case that
    /// holds an empty tensor fails only in some variants (with Constant nodes, say), the cause
    /// is how the runtime takes in an empty tensor in that form, not the operator (OpenVINO's
    /// frontend reads a zero-size Constant as a scalar, and each operator's shape check then
    /// refuses it in its own words). One finding of the same class that is such a case failing
    /// in the same variants is that cause.
    fn same_form(
        &self,
        m: &minimize::Minimized,
        spec: &CaseSpec,
        variants: &[(Variant, bool)],
    ) -> Option<usize> {
        let failing: Vec<&str> = variants
            .iter()
            .filter(|(_, fails)| *fails)
            .map(|(v, _)| v.id())
            .collect();
        let bound = !failing.is_empty() && failing.len() < variants.len();
        if !bound || !holds_empty(m) || spec.context.is_some() {
            return None;
        }
        let findings = &self.summary.findings;
        (0..findings.len()).find(|i| {
            self.with_empty.contains(i)
                && findings[*i].class == m.behaviour.class
                && findings[*i].variants_failing == failing
        })
    }

    /// Runs the judge in mode `k` (of [`modes::Modes`]) from now on, its runtime started on
    /// first use; a mode whose runtime cannot start is said once, and its cases run in the
    /// first mode.
    fn use_mode(&mut self, k: usize, on_event: &mut dyn FnMut(Event<'_>)) {
        if k == self.mode {
            return;
        }
        match self.modes.runtime(k) {
            Ok(runtime) => {
                self.judge.set_runtime(runtime);
                self.mode = k;
            }
            Err(e) => {
                on_event(Event::Note(format!(
                    "mode {} not run: {e}",
                    self.modes.get(k).name
                )));
                self.modes.drop_mode(k);
                self.use_mode(0, on_event);
            }
        }
    }

    /// Which of the runtime's modes show the minimal case's behaviour: the minimal case judged
    /// again in each other mode (none for a runtime of one mode). The judge is back in its mode
    /// after.
    fn judged_modes(&mut self, m: &minimize::Minimized) -> Vec<(usize, bool)> {
        if self.modes.len() < 2 {
            return Vec::new();
        }
        let home = self.mode;
        let rule = match &m.reference {
            minimize::subject::Reference::Error(e) => Some(e.to_string()),
            minimize::subject::Reference::Outputs(_) => None,
        };
        let mut seen = Vec::new();
        for k in 0..self.modes.len() {
            // The mode it was minimized in shows it: the minimizer held its behaviour fixed.
            if k == home {
                seen.push((k, true));
                continue;
            }
            // A hunt ends on time: modes not judged by then are named in neither list.
            if Instant::now() >= self.deadline {
                break;
            }
            let Ok(runtime) = self.modes.runtime(k) else {
                continue;
            };
            self.judge.set_runtime(runtime);
            let Ok(result) = self.judge.subject(&m.subject, &m.reference) else {
                continue;
            };
            let data = || m.subject.tensor_of(Role::Data).cloned();
            let fails = behaviour::behaviour(&result, rule.as_deref(), data)
                .is_some_and(|(_, b)| b.same_as(&m.behaviour));
            seen.push((k, fails));
        }
        if let Ok(runtime) = self.modes.runtime(home) {
            self.judge.set_runtime(runtime);
        }
        seen
    }

    /// A case in context as it was generated, in the variant it was shown in, judged again:
    /// the finding's example, unminimized.
    fn as_generated(
        &mut self,
        spec: &CaseSpec,
        written: &Written,
        budget: &minimize::Options,
    ) -> Result<Outcome, MinimizeError> {
        let start = Instant::now();
        let mut subject = minimize::subject::Subject::in_graph(
            &written.dir,
            &written.name,
            (spec.def, spec.version, spec.opset),
            budget.max_tensor_bytes,
        )?;
        subject.variant = written.variant;
        let reference = subject
            .reference()
            .map_err(|why| MinimizeError::NoReference {
                case: written.name.clone(),
                why,
            })?;
        let result = self.judge.subject(&subject, &reference)?;
        let rule = match &reference {
            minimize::subject::Reference::Error(e) => Some(e.to_string()),
            minimize::subject::Reference::Outputs(_) => None,
        };
        let data = || subject.tensor_of(Role::Data).cloned();
        let (Some((_, signature)), Some((_, behaviour))) = (
            minimize::disagreement(&result),
            behaviour::behaviour(&result, rule.as_deref(), data),
        ) else {
            return Ok(Outcome::Agrees(Box::new(result)));
        };
        Ok(Outcome::Minimized(Box::new(minimize::Minimized {
            data_set: "test_data_set_0".to_string(),
            original: subject.clone(),
            subject,
            reference,
            signature,
            behaviour,
            result,
            tried: 1,
            taken: Vec::new(),
            elapsed: start.elapsed(),
        })))
    }

    /// Which variants of the minimal case show its behaviour: the minimal case in each of them,
    /// judged again.
    fn variants(&mut self, m: &minimize::Minimized) -> anyhow::Result<Vec<(Variant, bool)>> {
        let mut seen = Vec::new();
        for v in Variant::ALL {
            if v == m.subject.variant {
                seen.push((v, true));
                continue;
            }
            // A hunt ends on time: variants not judged by then are named in neither list.
            if Instant::now() >= self.deadline {
                break;
            }
            let subject = minimize::subject::Subject {
                variant: v,
                ..m.subject.clone()
            };
            let Ok(result) = self.judge.subject(&subject, &m.reference) else {
                continue;
            };
            let rule = match &m.reference {
                minimize::subject::Reference::Error(e) => Some(e.to_string()),
                minimize::subject::Reference::Outputs(_) => None,
            };
            let data = || subject.tensor_of(Role::Data).cloned();
            let fails = behaviour::behaviour(&result, rule.as_deref(), data)
                .is_some_and(|(_, b)| b.same_as(&m.behaviour));
            seen.push((v, fails));
        }
        Ok(seen)
    }

    /// Whether the output the runtime gives for the minimal case, where the spec requires an
    /// error, holds a value that is in none of its value inputs (nor zero), or changes between
    /// two runs: then it read memory it should not.
    fn unsafe_output(&self, m: &minimize::Minimized) -> anyhow::Result<bool> {
        let scratch = tempfile::Builder::new()
            .prefix("onnx-idx-check-unsafe-")
            .tempdir()?;
        let dir = scratch.path().join(&m.subject.name);
        m.subject.write(&dir, &m.reference)?;
        // The mode the minimal case was found in.
        let runtime = &self
            .modes
            .started(self.mode)
            .unwrap_or_else(|| self.chosen.runtime.clone());
        let (Observed::Outputs(a), Observed::Outputs(b)) = (
            observe(runtime, &dir, &m.subject),
            observe(runtime, &dir, &m.subject),
        ) else {
            return Ok(false);
        };
        let texts = |t: &onnx_idx_check::tensor::Tensor| -> Vec<String> {
            (0..t.numel())
                .map(|i| onnx_idx_check::tensor::value::display(t, i))
                .collect()
        };
        let mut allowed: BTreeSet<String> = BTreeSet::new();
        for ((_, t), role) in m.subject.inputs.iter().zip(&m.subject.roles) {
            if matches!(role, Some(Role::Data | Role::Updates)) {
                allowed.extend(texts(t));
            }
        }
        let outputs = |o: &[Option<onnx_idx_check::tensor::Tensor>]| -> Vec<Vec<String>> {
            o.iter()
                .map(|t| t.as_ref().map(texts).unwrap_or_default())
                .collect()
        };
        let (a, b) = (outputs(&a), outputs(&b));
        // A reduction makes values of its own (sums, products): only a change between runs
        // tells a read out of bounds there.
        let reduces = m.subject.node().is_some_and(|n| {
            n.attribute
                .iter()
                .any(|a| a.name == "reduction" && a.s != b"none")
        });
        if reduces {
            return Ok(a != b);
        }
        Ok(a != b
            || a.iter()
                .flatten()
                .any(|v| !allowed.contains(v) && !behaviour::is_zero(v)))
    }

    /// Writes the minimal case `m` and its `REPORT.md` to a directory of `out` named for its
    /// class and first sighting, and says what was found; `original` and `seed` are the
    /// generated case it came from and the generator's seed. The report shows the runtime in the
    /// first of the `modes` (index, fails) judged that fails, and names them all.
    fn write_finding(
        &mut self,
        m: &minimize::Minimized,
        spec: &CaseSpec,
        original: &str,
        seed: u64,
        variants: &[(Variant, bool)],
        modes: &[(usize, bool)],
    ) -> anyhow::Result<Finding> {
        let op = crate::generate::op_name(spec.def);
        let dtype = spec.dtype.to_string();
        let b = &m.behaviour;
        let name = findings::unused_dir_name(
            self.out.path(),
            &findings::dir_name(b.class, &op, spec.version.since, &dtype),
        );
        self.out.record([format!("{name}/")])?;
        let words: Vec<(String, bool)> = variants.iter().map(|(v, f)| (v.words(), *f)).collect();
        let mode_words: Vec<(String, bool)> = modes
            .iter()
            .map(|&(k, f)| {
                let mode = self.modes.get(k);
                (format!("{} (`{}`)", mode.name, mode.id), f)
            })
            .collect();
        // The first mode that shows it: the runtime's own defaults where they do.
        let shown = modes
            .iter()
            .find(|&&(_, fails)| fails)
            .map_or(self.mode, |&(k, _)| k);
        let runtime = self.modes.runtime(shown)?;
        let mode = self.modes.get(shown);
        let mut finding = Finding {
            class: b.class,
            runtime: String::new(),
            runtime_version: String::new(),
            op: op.clone(),
            versions: BTreeSet::from([spec.version.since]),
            operators: BTreeSet::from([format!("{op}-{}", spec.version.since)]),
            context: findings::context_of(spec),
            dtypes: BTreeSet::from([dtype]),
            variants_failing: Vec::new(),
            variants_passing: Vec::new(),
            modes_failing: Vec::new(),
            modes_passing: Vec::new(),
            diagnosis: b.diagnosis.to_string(),
            symptom: b.symptom.clone(),
            rule: match &m.reference {
                minimize::subject::Reference::Error(e) => Some(e.to_string()),
                minimize::subject::Reference::Outputs(_) => None,
            },
            seen: 1,
            case: name.clone(),
            original: original.to_string(),
            seed,
            original_size: m.original.size(),
            minimal_size: m.subject.size(),
            minimized: spec.context.is_none(),
            reason: m
                .result
                .data_sets
                .first()
                .and_then(|d| d.reason.clone())
                .unwrap_or_default(),
        };
        let seen_on = finding.seen_on_line();
        crate::minimize::report::write_finding(
            m,
            &runtime,
            &mode.flag,
            self.chosen.api,
            &self.out.path().join(&name),
            &crate::minimize::report::Finding {
                class: b.class,
                variants: &words,
                modes: &mode_words,
                options: Some(&mode.options),
                seen_on: &seen_on,
                context: spec
                    .context
                    .as_ref()
                    .map(|c| findings::context_words(c.kind)),
            },
        )?;
        self.out.record_tree(&name)?;
        let info = self.chosen.runtime.info();
        finding.runtime = info.name.clone();
        finding.runtime_version = info.version.clone();
        Ok(finding)
    }
}

/// Writes `findings.json`, most severe first (rewritten after every finding, so a hunt cut short
/// keeps them).
fn write_findings(out: &OwnedDir, list: &[Finding]) -> anyhow::Result<()> {
    let mut sorted: Vec<&Finding> = list.iter().collect();
    sorted.sort_by_key(|f| f.class);
    let mut json = serde_json::to_string_pretty(&sorted)?;
    json.push('\n');
    onnx_idx_check::fsutil::write_atomic(out.path(), findings::FILE, json.as_bytes())?;
    Ok(())
}
