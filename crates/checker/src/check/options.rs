//! What a check may be asked, as `run`'s options say it, and their validation: everything is
//! checked and compiled before the first case is looked for.

use super::select::Shard;
use super::CheckError;
use crate::compare::{Mode, Tolerance};
use crate::runner::{DEFAULT_MAX_TENSOR_BYTES, DEFAULT_TIMEOUT};
use crate::verdict::{RequiredOp, Requirements};
use std::path::PathBuf;
use std::time::Duration;

/// How [`check`](crate::check()) runs: the options of `onnx-idx-check run`, with the same
/// defaults. Set fields directly or chain the builder methods of the same names (a repeatable
/// option's method adds one value).
///
/// ```
/// use onnx_idx_check::CheckOptions;
///
/// let options = CheckOptions::default()
///     .filter("^test_gather_elements")
///     .exclude("negative")
///     .jobs(2)
///     .require_op("GatherElements-13")
///     .min_cases(2);
/// let report = onnx_idx_check::check(
///     &[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")],
///     &options,
/// )?;
/// assert_eq!(report.summary.total, 2);
/// assert!(report.passed());
/// # Ok::<(), onnx_idx_check::CheckError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct CheckOptions {
    /// How float outputs are compared (`--rtol`, `--atol`, `--exact`, `--tolerant`): `rtol` and
    /// `atol` must be finite and `>= 0`.
    pub tolerance: Tolerance,
    /// The largest tensor, in bytes, that may be loaded or created (`--max-tensor-bytes`); larger
    /// declared tensors and outputs make the case errored before anything is allocated.
    pub max_tensor_bytes: usize,
    /// Judge another runtime's outputs, found in this directory mirroring the case tree
    /// (`--actual DIR`), instead of onnx-idx-check's own result.
    pub actual: Option<PathBuf>,
    /// Run this runtime under test on every data set and judge its outputs as `actual`'s
    /// (`--runtime NAME[:KEY=VALUE,...]`): a bundled adapter, `onnxruntime`, `openvino`, `tract`
    /// or `onnx-reference`, run with `$ONNX_IDX_CHECK_PYTHON` (else `python3`). Not with
    /// `actual`.
    pub runtime: Option<String>,
    /// Any other runtime under test: a command speaking the protocol of
    /// `docs/runtime-protocol.md` (`--runtime-cmd 'CMD ARGS'`). Not with `runtime`.
    pub runtime_cmd: Option<String>,
    /// The name of the runtime whose outputs `actual` holds (`--actual NAME=DIR`): expectations
    /// entries with this `runtime` apply to the run.
    pub runtime_name: Option<String>,
    /// Times the runtime under test runs each data set (`--repeat`, at least 1); any difference
    /// between runs is a `nondeterministic` failure.
    pub repeat: usize,
    /// Cases the runtime under test runs side by side in one model at most (`--batch`): one
    /// load and compile for many; a case that does not pass there is judged again alone, so
    /// verdicts are those of cases run alone. `None`: 16 for a bundled runtime that compiles each
    /// model (tvm, iree, tinygrad), 1 (each case alone) for the others. Only under `repeat` 1.
    pub batch: Option<usize>,
    /// Write onnx-idx-check's result for every failed or missing expected output under this
    /// directory, for `onnx-idx-check review` (`--pending DIR`; not with `actual`).
    pub pending: Option<PathBuf>,
    /// Known failures: a TOML file of expected verdicts (`--expectations FILE`).
    pub expectations: Option<PathBuf>,
    /// Rewrite the expectations file to this run's results before judging
    /// (`--update-expectations`; a missing file starts empty). Needs `expectations`.
    pub update_expectations: bool,
    /// Fail the run when an expectations entry matches no case (`--strict-expectations`).
    /// Needs `expectations`.
    pub strict_expectations: bool,
    /// How long one case may run before it is errored (`--timeout`); `None`, or zero, for no
    /// limit.
    pub timeout: Option<Duration>,
    /// Cases evaluated in parallel (`--jobs`); `None` for the number of cores. At least 1, and at
    /// most 4 times the cores (but 16 at least and 1024 at most).
    pub jobs: Option<usize>,
    /// Only cases whose name matches one of these regular expressions (`--filter`; none: every
    /// case).
    pub filter: Vec<String>,
    /// Leave out cases whose name matches one of these regular expressions (`--exclude`).
    pub exclude: Vec<String>,
    /// Only this shard of the selected cases (`--shard K/N`).
    pub shard: Option<Shard>,
    /// Stop starting new cases after the first failed or errored one (`--fail-fast`).
    pub fail_fast: bool,
    /// Skipped cases fail the run (`--deny-skip`).
    pub deny_skip: bool,
    /// The run fails when fewer cases ran (`--min-cases`; skipped cases do not count).
    pub min_cases: Option<usize>,
    /// The run fails when no case ran this operator (`ScatterElements`: any version) or operator
    /// version (`GatherND-12`; outside the default domain `com.microsoft.GatherGrad-1`)
    /// (`--require-op`). Names the registry does not know are refused.
    pub require_ops: Vec<String>,
    /// Record the sha256 of every model and tensor file read, for the JSON report's `files`
    /// (on by default, as `run --format json` does; off saves hashing every byte read).
    pub digests: bool,
    /// Which data sets' coverage traits each [`CaseResult`](crate::verdict::CaseResult) records
    /// (off by default; every data set for the command line's HTML scoreboard, whose grid by
    /// trait needs the traits of failed and refused cases too).
    pub traits: crate::runner::Traits,
}

/// The most cases one shared model holds (`--batch`).
pub const MAX_BATCH: usize = 256;

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            tolerance: Tolerance::default(),
            max_tensor_bytes: DEFAULT_MAX_TENSOR_BYTES,
            actual: None,
            runtime: None,
            runtime_cmd: None,
            runtime_name: None,
            repeat: 1,
            batch: None,
            pending: None,
            expectations: None,
            update_expectations: false,
            strict_expectations: false,
            timeout: Some(DEFAULT_TIMEOUT),
            jobs: None,
            filter: Vec::new(),
            exclude: Vec::new(),
            shard: None,
            fail_fast: false,
            deny_skip: false,
            min_cases: None,
            require_ops: Vec::new(),
            digests: true,
            traits: crate::runner::Traits::Off,
        }
    }
}

/// Chainable setters, one per field.
impl CheckOptions {
    /// Sets [`rtol`](Tolerance::rtol) and [`atol`](Tolerance::atol), keeping the mode.
    ///
    /// ```
    /// let o = onnx_idx_check::CheckOptions::default().tolerance(1e-2, 0.0);
    /// assert_eq!((o.tolerance.rtol, o.tolerance.atol), (1e-2, 0.0));
    /// ```
    pub fn tolerance(mut self, rtol: f64, atol: f64) -> Self {
        self.tolerance.rtol = rtol;
        self.tolerance.atol = atol;
        self
    }

    /// Compares every float output bit for bit, reductions included (`--exact`).
    ///
    /// ```
    /// use onnx_idx_check::compare::Mode;
    /// assert_eq!(onnx_idx_check::CheckOptions::default().exact().tolerance.mode, Mode::Exact);
    /// ```
    pub fn exact(mut self) -> Self {
        self.tolerance.mode = Mode::Exact;
        self
    }

    /// Applies the tolerance to every float output, data movement included (`--tolerant`).
    ///
    /// ```
    /// use onnx_idx_check::compare::Mode;
    /// let o = onnx_idx_check::CheckOptions::default().tolerant();
    /// assert_eq!(o.tolerance.mode, Mode::Tolerant);
    /// ```
    pub fn tolerant(mut self) -> Self {
        self.tolerance.mode = Mode::Tolerant;
        self
    }

    /// Sets [`max_tensor_bytes`](Self::max_tensor_bytes).
    ///
    /// ```
    /// let o = onnx_idx_check::CheckOptions::default().max_tensor_bytes(1 << 20);
    /// assert_eq!(o.max_tensor_bytes, 1 << 20);
    /// ```
    pub fn max_tensor_bytes(mut self, bytes: usize) -> Self {
        self.max_tensor_bytes = bytes;
        self
    }

    /// Sets [`runtime`](Self::runtime).
    ///
    /// ```
    /// let o = onnx_idx_check::CheckOptions::default().runtime("onnxruntime:threads=1");
    /// assert_eq!(o.runtime.as_deref(), Some("onnxruntime:threads=1"));
    /// ```
    pub fn runtime(mut self, spec: impl Into<String>) -> Self {
        self.runtime = Some(spec.into());
        self
    }

    /// Sets [`runtime_cmd`](Self::runtime_cmd).
    ///
    /// ```
    /// let o = onnx_idx_check::CheckOptions::default().runtime_cmd("./my-runner --cpu");
    /// assert_eq!(o.runtime_cmd.as_deref(), Some("./my-runner --cpu"));
    /// ```
    pub fn runtime_cmd(mut self, cmd: impl Into<String>) -> Self {
        self.runtime_cmd = Some(cmd.into());
        self
    }

    /// Sets [`repeat`](Self::repeat).
    ///
    /// ```
    /// assert_eq!(onnx_idx_check::CheckOptions::default().repeat(3).repeat, 3);
    /// ```
    pub fn repeat(mut self, n: usize) -> Self {
        self.repeat = n;
        self
    }

    /// Sets [`batch`](Self::batch).
    ///
    /// ```
    /// assert_eq!(onnx_idx_check::CheckOptions::default().batch(8).batch, Some(8));
    /// ```
    pub fn batch(mut self, n: usize) -> Self {
        self.batch = Some(n);
        self
    }

    /// Sets [`actual`](Self::actual).
    ///
    /// ```
    /// let o = onnx_idx_check::CheckOptions::default().actual("ort-out");
    /// assert_eq!(o.actual.unwrap(), std::path::Path::new("ort-out"));
    /// ```
    pub fn actual(mut self, dir: impl Into<PathBuf>) -> Self {
        self.actual = Some(dir.into());
        self
    }

    /// Sets [`pending`](Self::pending).
    ///
    /// ```
    /// let o = onnx_idx_check::CheckOptions::default().pending("pending");
    /// assert!(o.pending.is_some());
    /// ```
    pub fn pending(mut self, dir: impl Into<PathBuf>) -> Self {
        self.pending = Some(dir.into());
        self
    }

    /// Sets [`expectations`](Self::expectations).
    ///
    /// ```
    /// let o = onnx_idx_check::CheckOptions::default().expectations("known-failures.toml");
    /// assert!(o.expectations.is_some());
    /// ```
    pub fn expectations(mut self, file: impl Into<PathBuf>) -> Self {
        self.expectations = Some(file.into());
        self
    }

    /// Sets [`update_expectations`](Self::update_expectations).
    ///
    /// ```
    /// let o = onnx_idx_check::CheckOptions::default()
    ///     .expectations("known-failures.toml")
    ///     .update_expectations(true);
    /// assert!(o.update_expectations);
    /// ```
    pub fn update_expectations(mut self, yes: bool) -> Self {
        self.update_expectations = yes;
        self
    }

    /// Sets [`strict_expectations`](Self::strict_expectations).
    ///
    /// ```
    /// let o = onnx_idx_check::CheckOptions::default()
    ///     .expectations("known-failures.toml")
    ///     .strict_expectations(true);
    /// assert!(o.strict_expectations);
    /// ```
    pub fn strict_expectations(mut self, yes: bool) -> Self {
        self.strict_expectations = yes;
        self
    }

    /// Sets [`timeout`](Self::timeout).
    ///
    /// ```
    /// use std::time::Duration;
    /// let o = onnx_idx_check::CheckOptions::default().timeout(None);
    /// assert_eq!(o.timeout, None);
    /// let o = o.timeout(Some(Duration::from_secs(5)));
    /// assert_eq!(o.timeout, Some(Duration::from_secs(5)));
    /// ```
    pub fn timeout(mut self, limit: Option<Duration>) -> Self {
        self.timeout = limit;
        self
    }

    /// Sets [`jobs`](Self::jobs).
    ///
    /// ```
    /// assert_eq!(onnx_idx_check::CheckOptions::default().jobs(2).jobs, Some(2));
    /// ```
    pub fn jobs(mut self, jobs: usize) -> Self {
        self.jobs = Some(jobs);
        self
    }

    /// Adds a [`filter`](Self::filter) pattern.
    ///
    /// ```
    /// let o = onnx_idx_check::CheckOptions::default().filter("^a").filter("b$");
    /// assert_eq!(o.filter, ["^a", "b$"]);
    /// ```
    pub fn filter(mut self, pattern: impl Into<String>) -> Self {
        self.filter.push(pattern.into());
        self
    }

    /// Adds an [`exclude`](Self::exclude) pattern.
    ///
    /// ```
    /// let o = onnx_idx_check::CheckOptions::default().exclude("slow");
    /// assert_eq!(o.exclude, ["slow"]);
    /// ```
    pub fn exclude(mut self, pattern: impl Into<String>) -> Self {
        self.exclude.push(pattern.into());
        self
    }

    /// Sets [`shard`](Self::shard).
    ///
    /// ```
    /// use onnx_idx_check::check::Shard;
    /// let o = onnx_idx_check::CheckOptions::default().shard(Shard::new(1, 2)?);
    /// assert_eq!(o.shard, Some(Shard::new(1, 2)?));
    /// # Ok::<(), onnx_idx_check::CheckError>(())
    /// ```
    pub fn shard(mut self, shard: Shard) -> Self {
        self.shard = Some(shard);
        self
    }

    /// Sets [`fail_fast`](Self::fail_fast).
    ///
    /// ```
    /// assert!(onnx_idx_check::CheckOptions::default().fail_fast(true).fail_fast);
    /// ```
    pub fn fail_fast(mut self, yes: bool) -> Self {
        self.fail_fast = yes;
        self
    }

    /// Sets [`deny_skip`](Self::deny_skip).
    ///
    /// ```
    /// assert!(onnx_idx_check::CheckOptions::default().deny_skip(true).deny_skip);
    /// ```
    pub fn deny_skip(mut self, yes: bool) -> Self {
        self.deny_skip = yes;
        self
    }

    /// Sets [`min_cases`](Self::min_cases).
    ///
    /// ```
    /// assert_eq!(onnx_idx_check::CheckOptions::default().min_cases(90).min_cases, Some(90));
    /// ```
    pub fn min_cases(mut self, n: usize) -> Self {
        self.min_cases = Some(n);
        self
    }

    /// Adds a [`require_ops`](Self::require_ops) entry.
    ///
    /// ```
    /// let o = onnx_idx_check::CheckOptions::default().require_op("GatherND-12");
    /// assert_eq!(o.require_ops, ["GatherND-12"]);
    /// ```
    pub fn require_op(mut self, op: impl Into<String>) -> Self {
        self.require_ops.push(op.into());
        self
    }

    /// Sets [`digests`](Self::digests).
    ///
    /// ```
    /// assert!(!onnx_idx_check::CheckOptions::default().digests(false).digests);
    /// ```
    pub fn digests(mut self, yes: bool) -> Self {
        self.digests = yes;
        self
    }

    /// Sets [`traits`](Self::traits).
    ///
    /// ```
    /// use onnx_idx_check::runner::Traits;
    ///
    /// assert_eq!(onnx_idx_check::CheckOptions::default().traits(Traits::Every).traits, Traits::Every);
    /// ```
    pub fn traits(mut self, which: crate::runner::Traits) -> Self {
        self.traits = which;
        self
    }
}

/// Checks the options that do not need the file system beyond `actual`, in the order `run`
/// always has: the tolerance, `actual`, `jobs`, then the requirements.
pub(crate) fn validate(o: &CheckOptions) -> Result<(usize, Requirements), CheckError> {
    check_tolerance(&o.tolerance)?;
    if let Some(dir) = o.actual.as_ref().filter(|d| !d.is_dir()) {
        // A runtime's dump script that refused every model may have created nothing at all.
        let why = if std::fs::symlink_metadata(dir).is_err() {
            "does not exist (did the runtime write anything?)"
        } else {
            "not a directory"
        };
        return Err(CheckError::invalid(
            "actual",
            format!("--actual {}: {why}", dir.display()),
        ));
    }
    let runtimes = [
        o.actual.as_ref().map(|_| "--actual"),
        o.runtime.as_ref().map(|_| "--runtime"),
        o.runtime_cmd.as_ref().map(|_| "--runtime-cmd"),
    ];
    if let [first, second, ..] = runtimes.iter().flatten().collect::<Vec<_>>()[..] {
        return Err(CheckError::invalid(
            "runtime",
            format!("{first} and {second} both name the outputs to judge: give one per check"),
        ));
    }
    if o.repeat == 0 {
        return Err(CheckError::invalid(
            "repeat",
            "--repeat 0: a runtime runs each data set at least once",
        ));
    }
    match o.batch {
        Some(0) => {
            return Err(CheckError::invalid(
                "batch",
                "--batch 0: a model holds one case at least (1 runs each case alone)",
            ))
        }
        Some(n) if n > MAX_BATCH => {
            return Err(CheckError::invalid(
                "batch",
                format!(
                    "--batch {n}: at most {MAX_BATCH} cases share a model (one the runtime \
                     refuses costs them all a second run)"
                ),
            ))
        }
        Some(n) if n > 1 && o.runtime.is_none() && o.runtime_cmd.is_none() => {
            return Err(CheckError::invalid(
                "batch",
                format!("--batch {n} needs a runtime to run (--runtime or --runtime-cmd)"),
            ))
        }
        Some(n) if n > 1 && o.repeat > 1 => {
            return Err(CheckError::invalid(
                "batch",
                format!(
                    "--batch {n} with --repeat {}: repeated runs look for races, which run alone",
                    o.repeat
                ),
            ))
        }
        _ => {}
    }
    if o.repeat > 1 && o.runtime.is_none() && o.runtime_cmd.is_none() {
        return Err(CheckError::invalid(
            "repeat",
            format!(
                "--repeat {} needs a runtime to run again (--runtime or --runtime-cmd)",
                o.repeat
            ),
        ));
    }
    if (o.runtime.is_some() || o.runtime_cmd.is_some()) && o.pending.is_some() {
        return Err(CheckError::invalid(
            "pending",
            "--pending cannot be used with a runtime (judging a runtime's outputs leaves no result \
             of onnx-idx-check's own to review)",
        ));
    }
    if o.actual.is_some() && o.pending.is_some() {
        return Err(CheckError::invalid(
            "pending",
            "--pending cannot be used with --actual (judging a runtime's outputs leaves no result \
             of onnx-idx-check's own to review)",
        ));
    }
    for (flag, set) in [
        ("update-expectations", o.update_expectations),
        ("strict-expectations", o.strict_expectations),
    ] {
        if set && o.expectations.is_none() {
            return Err(CheckError::invalid(
                flag,
                format!("--{flag} needs an expectations file (--expectations FILE)"),
            ));
        }
    }
    let jobs = jobs(o.jobs)?;
    let requirements = Requirements {
        min_cases: o.min_cases,
        ops: o
            .require_ops
            .iter()
            .map(|s| required_op(s))
            .collect::<Result<_, _>>()?,
    };
    Ok((jobs, requirements))
}

fn check_tolerance(t: &Tolerance) -> Result<(), CheckError> {
    for (flag, v) in [("rtol", t.rtol), ("atol", t.atol)] {
        if !v.is_finite() || v < 0.0 {
            return Err(CheckError::invalid(
                flag,
                format!("--{flag} must be a finite number >= 0, got {v}"),
            ));
        }
    }
    Ok(())
}

/// `jobs`, defaulting to the number of cores. Cases are CPU-bound, so threads beyond the cores
/// add only memory and contention: more than `max_jobs` is refused (`--jobs 100000` once
/// started 14,592 threads).
pub fn jobs(requested: Option<usize>) -> Result<usize, CheckError> {
    let cores = cores();
    match requested {
        Some(0) => Err(CheckError::invalid("jobs", "--jobs must be at least 1")),
        Some(n) if n > max_jobs(cores) => Err(CheckError::invalid(
            "jobs",
            format!(
                "--jobs {n}: at most {} (4 x the {cores} available cores, but at least {} and \
                 at most {}): cases are CPU-bound, more threads only add memory and contention",
                max_jobs(cores),
                MIN_JOBS_CAP,
                MAX_JOBS_CAP
            ),
        )),
        Some(n) => Ok(n),
        None => Ok(cores),
    }
}

/// The cores this process may use.
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The largest `jobs` never refused, whatever the machine.
const MIN_JOBS_CAP: usize = 16;

/// The largest `jobs` accepted on any machine.
const MAX_JOBS_CAP: usize = 1024;

/// The largest `jobs` accepted with `cores` cores: 4 per core, within
/// [`MIN_JOBS_CAP`]..=[`MAX_JOBS_CAP`].
fn max_jobs(cores: usize) -> usize {
    cores.saturating_mul(4).clamp(MIN_JOBS_CAP, MAX_JOBS_CAP)
}

/// Parses one `OP[-VERSION]`: `ScatterElements`, `GatherND-12`, `com.microsoft.GatherGrad-1`
/// (the domain as the per-operator summary spells it; `ai.onnx.` may be given for the default
/// domain). An operator the registry does not know, or a version it does not have, is refused.
fn required_op(given: &str) -> Result<RequiredOp, CheckError> {
    // Every operator version as reports name it, split into (operator, since_version).
    let known: Vec<(String, i64)> = crate::ops::REGISTRY
        .iter()
        .filter(|def| !def.plumbing)
        .flat_map(|def| {
            def.versions
                .iter()
                .map(move |v| (def.version_name(v), v.since))
        })
        .filter_map(|(name, since)| Some((name.rsplit_once('-')?.0.to_string(), since)))
        .collect();
    let (name, version) = match given.rsplit_once('-') {
        Some((op, v)) if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) => (
            op,
            Some(
                v.parse::<i64>()
                    .map_err(|_| bad_op(given, "version too large"))?,
            ),
        ),
        _ => (given, None),
    };
    let name = name.strip_prefix("ai.onnx.").unwrap_or(name);
    let versions: Vec<i64> = known
        .iter()
        .filter(|(op, _)| op == name)
        .map(|(_, since)| *since)
        .collect();
    if versions.is_empty() {
        let mut ops: Vec<&str> = known.iter().map(|(op, _)| op.as_str()).collect();
        ops.dedup();
        return Err(bad_op(
            given,
            &format!(
                "no such operator in the registry (known: {})",
                ops.join(", ")
            ),
        ));
    }
    if let Some(v) = version.filter(|v| !versions.contains(v)) {
        let listed: Vec<String> = versions.iter().map(i64::to_string).collect();
        return Err(bad_op(
            given,
            &format!(
                "{name} has no version {v} (its versions, by since_version: {})",
                listed.join(", ")
            ),
        ));
    }
    Ok(RequiredOp {
        given: given.to_string(),
        op: name.to_string(),
        version,
    })
}

fn bad_op(given: &str, why: &str) -> CheckError {
    CheckError::invalid("require-op", format!("--require-op '{given}': {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_are_bounded_by_four_per_core_within_16_and_1024() {
        assert_eq!(max_jobs(1), 16);
        assert_eq!(max_jobs(2), 16);
        assert_eq!(max_jobs(8), 32);
        assert_eq!(max_jobs(1000), 1024);
        assert_eq!(max_jobs(usize::MAX), 1024);
        assert_eq!(jobs(Some(16)).unwrap(), 16);
        assert!(jobs(Some(1025)).is_err());
        assert_eq!(
            jobs(Some(0)).unwrap_err().to_string(),
            "--jobs must be at least 1"
        );
    }

    #[test]
    fn required_ops_are_checked_against_the_registry() {
        let r = required_op("GatherND-12").unwrap();
        assert_eq!((r.op.as_str(), r.version), ("GatherND", Some(12)));
        assert!(r.matches("GatherND-12") && !r.matches("GatherND-13"));
        let r = required_op("ScatterElements").unwrap();
        assert_eq!(r.version, None);
        assert!(r.matches("ScatterElements-18") && !r.matches("ScatterND-18"));
        let r = required_op("com.microsoft.GatherGrad-1").unwrap();
        assert!(r.matches("com.microsoft.GatherGrad-1") && !r.matches("GatherGrad-1"));
        assert_eq!(required_op("ai.onnx.Gather-13").unwrap().op, "Gather");
        // The bare name is the default domain's operator, not OpenVINO's.
        assert!(!required_op("Gather")
            .unwrap()
            .matches("org.openvinotoolkit.Gather-8"));
        for bad in [
            "Gathr",
            "Gather-12",
            "GatherGrad-1",
            "Constant",
            "",
            "Gather-",
        ] {
            assert!(required_op(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn options_are_validated_in_runs_order_with_the_flags_named() {
        let err = |o: CheckOptions| validate(&o).unwrap_err().to_string();
        assert_eq!(
            err(CheckOptions::default().tolerance(f64::NAN, 0.0).jobs(0)),
            "--rtol must be a finite number >= 0, got NaN"
        );
        assert_eq!(
            err(CheckOptions::default().tolerance(0.0, -1.0)),
            "--atol must be a finite number >= 0, got -1"
        );
        assert_eq!(
            err(CheckOptions::default().actual("/nonexistent/onnx-idx-check")),
            "--actual /nonexistent/onnx-idx-check: does not exist (did the runtime write anything?)"
        );
        assert_eq!(
            err(CheckOptions::default().actual("Cargo.toml")),
            "--actual Cargo.toml: not a directory"
        );
        assert!(err(CheckOptions::default().actual(".").pending("p")).starts_with("--pending "));
        assert!(err(CheckOptions::default().strict_expectations(true))
            .starts_with("--strict-expectations needs an expectations file"));
        assert!(err(CheckOptions::default().jobs(0).require_op("Gathr")).starts_with("--jobs"));
        assert!(err(CheckOptions::default().require_op("Gathr"))
            .starts_with("--require-op 'Gathr': no such operator in the registry (known: "));
        let (jobs, req) = validate(&CheckOptions::default().jobs(3).min_cases(4)).unwrap();
        assert_eq!((jobs, req.min_cases, req.ops.len()), (3, Some(4), 0));
    }
}
