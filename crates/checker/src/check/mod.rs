//! The library's entry point for whole runs: [`check()`] runs exactly what `onnx-idx-check run`
//! runs (select the cases, run them, judge the expectations, gate) without the command line, and
//! returns the report as data. The command line's `run` is this same pipeline with reporters on
//! its events ([`check_with`]) and an exit status read from the gate.
//!
//! ```
//! use onnx_idx_check::{check, CheckOptions};
//!
//! let report = check(
//!     &[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")],
//!     &CheckOptions::default(),
//! )?;
//! assert!(report.passed());
//! assert_eq!(report.summary.passed, report.summary.total);
//! # Ok::<(), onnx_idx_check::CheckError>(())
//! ```

mod expect;
mod options;
mod select;

pub use options::CheckOptions;
pub use select::Shard;

pub use options::jobs;
pub use select::{select, CaseFilter};

use crate::discover::{self, Case, DiscoverError};
use crate::expectations::{Date, Expectations, ExpectationsError};
use crate::report::{json, Event, RunEnd, TOOL};
use crate::runner::{self, RunOptions};
use crate::verdict::{CaseResult, ExpectationsReport, Gate, Requirements, RuntimeInfo, Summary};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use thiserror::Error;

/// Why a check could not run. Each message says what and why, in the words of the command
/// line's usage errors (`--jobs must be at least 1`); no case has run when one is returned,
/// except for the two about rewriting the expectations file.
///
/// ```
/// use onnx_idx_check::{check, CheckError, CheckOptions};
///
/// let testdata = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata");
/// let bad = CheckOptions::default().filter("(");
/// match check(&[testdata], &bad) {
///     Err(CheckError::InvalidOption { option: "filter", message }) => {
///         assert!(message.starts_with("--filter '(': "))
///     }
///     other => panic!("{other:?}"),
/// }
/// let nothing = CheckOptions::default().filter("^no-such-case$");
/// assert!(matches!(check(&[testdata], &nothing), Err(CheckError::NoCase { found: 107, .. })));
/// ```
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum CheckError {
    /// An option that cannot be used: a bad pattern, an unknown `require_op`, zero `jobs`, a
    /// negative tolerance, an `actual` that is not a directory, no path at all...
    #[error("{message}")]
    InvalidOption {
        /// The option, as the command line spells it without dashes (`filter`, `require-op`).
        option: &'static str,
        /// What is wrong with it.
        message: String,
    },
    /// The runtime under test could not be used: an unknown name, or a worker that did not
    /// start (its package is not installed, say).
    #[error("{0}")]
    Runtime(String),
    /// A path does not exist, cannot be read, or is not a directory.
    #[error(transparent)]
    Path(#[from] DiscoverError),
    /// No case under the paths, or none the patterns select.
    #[error(
        "no case found under {}: {}",
        list(paths),
        none_selected(*found, *symlinks_not_followed)
    )]
    NoCase {
        /// The paths searched.
        paths: Vec<PathBuf>,
        /// How many cases were found before `filter` and `exclude` (0: no directory holds a
        /// `model.onnx`).
        found: usize,
        /// Symbolic links to directories discovery passed over (it never follows one): where
        /// the cases are, when a tree holds only links to them.
        symlinks_not_followed: usize,
        /// Directories or entries discovery could not read (perhaps where the cases are).
        warnings: Vec<String>,
    },
    /// Two cases found under different paths have the same name, which selection, the
    /// expectations, `actual` and `pending` could not tell apart.
    #[error(
        "{} cases are named '{name}' ({}): names must be unique, since --filter, the expectations, \
         --actual and --pending identify cases by name; run each path on its own, or give a \
         common parent",
        dirs.len(),
        list(dirs)
    )]
    DuplicateName {
        /// The name.
        name: String,
        /// The case directories that have it.
        dirs: Vec<PathBuf>,
    },
    /// The expectations file cannot be read (a missing one included) or is not valid.
    #[error(transparent)]
    Expectations(Box<ExpectationsError>),
    /// The expectations file could not be rewritten (`update_expectations`).
    #[error("writing {}: {source}", path.display())]
    WriteExpectations {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The rewritten expectations file does not read back (a bug of the rewriting).
    #[error("re-reading the updated {}: {source}", path.display())]
    UpdatedExpectations {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        source: Box<ExpectationsError>,
    },
}

impl CheckError {
    pub(crate) fn invalid(option: &'static str, message: impl Into<String>) -> CheckError {
        CheckError::InvalidOption {
            option,
            message: message.into(),
        }
    }
}

impl From<ExpectationsError> for CheckError {
    fn from(e: ExpectationsError) -> CheckError {
        CheckError::Expectations(Box::new(e))
    }
}

fn list(paths: &[PathBuf]) -> String {
    let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    shown.join(", ")
}

fn none_selected(found: usize, symlinks: usize) -> String {
    if found == 0 {
        match symlinks {
            0 => "no directory with a model.onnx or model.xml".to_string(),
            n => format!(
                "no directory with a model.onnx or model.xml ({n} symlink{} not followed)",
                if n == 1 { "" } else { "s" }
            ),
        }
    } else {
        format!(
            "{} found, none selected by --filter/--exclude",
            crate::report::counted(found, "case", "cases")
        )
    }
}

/// What a check found: every case's verdict, the counts, the expectations file's own verdicts
/// and the run's gate. It owns its data; [`to_json`](CheckReport::to_json) writes it as
/// `onnx-idx-check run --format json` does.
///
/// ```
/// use onnx_idx_check::verdict::Status;
/// use onnx_idx_check::{check, CheckOptions};
///
/// let options = CheckOptions::default().filter("^test_scatter_elements");
/// let report = check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &options)?;
/// assert!(report.cases.iter().all(|c| c.status == Status::Passed));
/// assert!(report.gate.reasons.is_empty());
/// assert!(report.expectations.is_none());
/// # Ok::<(), onnx_idx_check::CheckError>(())
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct CheckReport {
    /// Every case that ran, in path order, with its data sets and outputs, its origin and what
    /// the expectations say of it.
    pub cases: Vec<CaseResult>,
    /// The counts, overall and per operator version.
    pub summary: Summary,
    /// The run's own verdict and every reason it fails.
    pub gate: Gate,
    /// Wall time of the run (selection excluded).
    pub duration: Duration,
    /// The expectations file's own verdicts, when one was given.
    pub expectations: Option<ExpectationsReport>,
    /// Directories or entries discovery could not read and went on without (the command line
    /// prints them as warnings).
    pub warnings: Vec<String>,
    /// The runtime under test, when one ran the data sets.
    pub runtime: Option<RuntimeInfo>,
}

impl CheckReport {
    /// Whether the run passes its gate: no case failed or errored (or was skipped, with
    /// `deny_skip`) beyond what the expectations allow, and every requirement was met. The
    /// command line exits 0 exactly when this holds.
    ///
    /// ```
    /// use onnx_idx_check::{check, CheckOptions};
    ///
    /// let testdata = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata");
    /// assert!(check(&[testdata], &CheckOptions::default())?.passed());
    /// let more = CheckOptions::default().min_cases(1000);
    /// assert!(!check(&[testdata], &more)?.passed());
    /// # Ok::<(), onnx_idx_check::CheckError>(())
    /// ```
    pub fn passed(&self) -> bool {
        self.gate.passed()
    }

    /// The JSON report (schema_version 1, described in docs/report-schema.md): the document
    /// `onnx-idx-check run --format json` writes for the same run, pretty-printed, with a
    /// trailing newline.
    ///
    /// ```
    /// use onnx_idx_check::{check, CheckOptions};
    ///
    /// let options = CheckOptions::default().filter("^test_gather_0$");
    /// let report = check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &options)?;
    /// let doc: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
    /// assert_eq!(doc["schema_version"], 1);
    /// assert_eq!(doc["summary"]["gate"]["status"], "passed");
    /// assert_eq!(doc["cases"][0]["name"], "test_gather_0");
    /// # Ok::<(), onnx_idx_check::CheckError>(())
    /// ```
    pub fn to_json(&self) -> String {
        json::render(&TOOL, &self.run_end())
    }

    /// The report as the reporters receive it when the run finishes
    /// ([`Event::RunFinished`]), to render it in any format.
    ///
    /// ```
    /// use onnx_idx_check::{check, CheckOptions};
    ///
    /// let options = CheckOptions::default().filter("^test_gather_0$");
    /// let report = check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &options)?;
    /// let rerun = onnx_idx_check::report::Rerun::default();
    /// let markdown = onnx_idx_check::report::markdown::render(&report.run_end(), &rerun);
    /// assert!(markdown.contains("Gather-13"));
    /// # Ok::<(), onnx_idx_check::CheckError>(())
    /// ```
    pub fn run_end(&self) -> RunEnd<'_> {
        RunEnd {
            results: &self.cases,
            summary: &self.summary,
            duration: self.duration,
            expectations: self.expectations.as_ref(),
            gate: &self.gate,
            runtime: self.runtime.as_ref(),
        }
    }
}

/// Runs every case under `paths` as `onnx-idx-check run PATH...` does with the same options,
/// and returns the report; the options are checked before any case is looked for.
///
/// ```
/// use onnx_idx_check::{check, CheckOptions};
///
/// let report = check(
///     &[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata")],
///     &CheckOptions::default().jobs(2),
/// )?;
/// assert_eq!((report.summary.passed, report.summary.total), (107, 107));
/// assert!(report.passed());
/// # Ok::<(), onnx_idx_check::CheckError>(())
/// ```
pub fn check<P: AsRef<Path>>(
    paths: &[P],
    options: &CheckOptions,
) -> Result<CheckReport, CheckError> {
    check_with(paths, options, |_| {})
}

/// [`check()`], handing each [`Event`] of the run to `on_event` as it happens: the run starts,
/// each case finishes (in case order), the run finishes. The command line's reporters are fed
/// this way.
///
/// ```
/// use onnx_idx_check::report::Event;
/// use onnx_idx_check::{check_with, CheckOptions};
///
/// let mut finished = Vec::new();
/// let report = check_with(
///     &[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")],
///     &CheckOptions::default().filter("^test_gather_elements"),
///     |event| {
///         if let Event::CaseFinished(case) = event {
///             finished.push(case.name.clone());
///         }
///     },
/// )?;
/// assert_eq!(finished.len(), report.cases.len());
/// assert_eq!(finished[0], "test_gather_elements_0");
/// # Ok::<(), onnx_idx_check::CheckError>(())
/// ```
pub fn check_with<P: AsRef<Path>>(
    paths: &[P],
    options: &CheckOptions,
    mut on_event: impl FnMut(&Event<'_>),
) -> Result<CheckReport, CheckError> {
    let paths: Vec<PathBuf> = paths.iter().map(|p| p.as_ref().to_path_buf()).collect();
    Prepared::new(&paths, options)?.run(&mut on_event)
}

/// Starts the runtime under test that `options` names, if any: its first worker says hello
/// before any case runs, so that a runtime that cannot start stops the run with its reason.
fn runtime_of(options: &CheckOptions) -> Result<Option<crate::runtime::Runtime>, CheckError> {
    use crate::runtime::{Runtime, RuntimeSpec};
    let spec = match (&options.runtime, &options.runtime_cmd) {
        (Some(name), _) => RuntimeSpec::bundled(name),
        (None, Some(cmd)) => RuntimeSpec::command(cmd),
        (None, None) => return Ok(None),
    }
    .map_err(|e| CheckError::Runtime(e.to_string()))?;
    let timeout = options
        .timeout
        .filter(|t| !t.is_zero())
        // No limit: a day stands for it.
        .unwrap_or(Duration::from_secs(24 * 3600));
    Runtime::start(&spec, timeout)
        .map(Some)
        .map_err(|e| CheckError::Runtime(e.to_string()))
}

/// The expectations entries that apply to this run: those naming no runtime, and those naming
/// the runtime under test by its `--runtime` spec, its adapter's name, the name its worker gave,
/// or the NAME of `--actual NAME=DIR`. Rewriting the file (`update_expectations`) would lose
/// the others, so it is refused when there are any.
fn for_runtime(
    exp: Expectations,
    options: &CheckOptions,
    runtime: Option<&crate::runtime::Runtime>,
) -> Result<Expectations, CheckError> {
    let mut names: Vec<String> = options.runtime_name.iter().cloned().collect();
    if let Some(spec) = &options.runtime {
        names.push(spec.clone());
        names.extend(spec.split_once(':').map(|(name, _)| name.to_string()));
    }
    if let Some(rt) = runtime {
        names.push(rt.label().to_string());
        names.push(rt.info().name);
        names.extend(rt.adapter_name().map(str::to_string));
    }
    let (kept, others) = exp.for_runtime(&names);
    if options.update_expectations && !others.is_empty() {
        return Err(CheckError::invalid(
            "update-expectations",
            format!(
                "--update-expectations would rewrite {} without its entries for the runtime(s) {}, \
                 which this run does not judge: keep one file per runtime to update it",
                kept.path().display(),
                others.join(", ")
            ),
        ));
    }
    Ok(kept)
}

/// A check whose options are validated and whose cases are selected, not yet run: the steps
/// of [`check_with`] apart, for the command line to print discovery's warnings before it runs.
pub struct Prepared {
    options: CheckOptions,
    run: RunOptions,
    jobs: usize,
    requirements: Requirements,
    expectations: Option<Expectations>,
    cases: Vec<Case>,
    /// Every case found before selection.
    names: Vec<String>,
    warnings: Vec<String>,
}

impl Prepared {
    /// Validates `options` (in the order `run` always has: the paths, the expectations file, the
    /// tolerance, `actual`, `jobs`, the requirements, the patterns) and selects the cases.
    pub fn new(paths: &[PathBuf], options: &CheckOptions) -> Result<Prepared, CheckError> {
        if paths.is_empty() {
            // The command line requires a PATH; a library caller may pass an empty list.
            return Err(CheckError::invalid(
                "paths",
                "no PATH given: name case directories (holding a model.onnx) or directories above them",
            ));
        }
        let expectations = expect::load(options)?;
        let (jobs, requirements) = options::validate(options)?;
        let filter = CaseFilter::new(&options.filter, &options.exclude, options.shard)?;
        let selected = select(paths, &filter)?;
        let runtime = runtime_of(options)?;
        let expectations = match expectations {
            Some(exp) => Some(for_runtime(exp, options, runtime.as_ref())?),
            None => None,
        };
        let run = RunOptions {
            tolerance: options.tolerance,
            max_tensor_bytes: options.max_tensor_bytes,
            actual: options.actual.clone(),
            digests: options.digests,
            traits: options.traits,
            pending: options.pending.clone(),
            expectations: expectations.clone().map(std::sync::Arc::new),
            timeout: options.timeout.filter(|t| !t.is_zero()),
            runtime: None,
            repeat: options.repeat,
            batch: 1,
        };
        let run = match runtime {
            // The runtime's answers have their own time limit; the case's would cut a slow
            // runtime off mid-case, without telling which data set.
            Some(rt) => RunOptions {
                batch: match options.repeat {
                    1 => options.batch.unwrap_or_else(|| rt.default_batch()),
                    _ => 1,
                },
                runtime: Some(std::sync::Arc::new(rt)),
                timeout: None,
                ..run
            },
            None => run,
        };
        Ok(Prepared {
            options: options.clone(),
            run,
            jobs,
            requirements,
            expectations,
            cases: selected.cases,
            names: selected.names,
            warnings: selected.warnings,
        })
    }

    /// What discovery could not read.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The selected cases.
    pub fn cases(&self) -> &[Case] {
        &self.cases
    }

    /// Narrows the selection further (`--rerun-failed`); the cases left out count as found but
    /// not run, as those of a `--filter` do.
    pub fn retain(&mut self, keep: impl FnMut(&Case) -> bool) {
        self.cases.retain(keep);
    }

    /// Runs the cases (each result to `on_event` as it arrives), judges the expectations and
    /// gates the run.
    pub fn run(self, on_event: &mut dyn FnMut(&Event<'_>)) -> Result<CheckReport, CheckError> {
        let today = Date::today();
        let exp = self.expectations.as_ref();
        on_event(&Event::RunStarted {
            cases: self.cases.len(),
        });
        let start = Instant::now();
        // Updating rewrites the file from every result: each case is reported once the new
        // file has judged it, so that the case lines and the summary tell the same story.
        let deferred = exp.is_some() && self.options.update_expectations;
        let (mut results, not_run) = runner::run_all(
            &self.cases,
            &self.run,
            self.jobs,
            self.options.fail_fast,
            // As a case finishes, what the expectations say of it alone.
            |r| match expect::note_alone(exp.filter(|_| !deferred), r, today) {
                _ if deferred => {} // reported below
                None => on_event(&Event::CaseFinished(r)),
                Some(note) => {
                    let mut shown = r.clone();
                    shown.expectation = Some(note);
                    on_event(&Event::CaseFinished(&shown));
                }
            },
        );
        let duration = start.elapsed();
        let mut origins = discover::Origins::default();
        for (r, case) in results.iter_mut().zip(&self.cases) {
            r.origin = origins.of(case);
        }
        let (expectations, expectation_gate) = match exp {
            Some(exp) => {
                let judged = expect::judge(exp, &mut results, &self.options, &self.names)?;
                (Some(judged.report), judged.gate)
            }
            None => (None, Vec::new()),
        };
        if deferred {
            for r in &results {
                on_event(&Event::CaseFinished(r));
            }
        }
        let summary = Summary::of(&results, not_run);
        let gate = Gate::of(
            &results,
            self.options.deny_skip,
            expectation_gate,
            &self.requirements,
        );
        let report = CheckReport {
            cases: results,
            summary,
            gate,
            duration,
            expectations,
            warnings: self.warnings,
            runtime: self.run.runtime.as_ref().map(|rt| rt.info()),
        };
        on_event(&Event::RunFinished(&report.run_end()));
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_case_says_whether_anything_was_found() {
        let none = |found, symlinks_not_followed| {
            CheckError::NoCase {
                paths: vec![PathBuf::from("a"), PathBuf::from("b c")],
                found,
                symlinks_not_followed,
                warnings: Vec::new(),
            }
            .to_string()
        };
        assert_eq!(
            none(0, 0),
            "no case found under a, b c: no directory with a model.onnx or model.xml"
        );
        assert_eq!(
            none(0, 1),
            "no case found under a, b c: no directory with a model.onnx or model.xml (1 symlink not followed)"
        );
        assert_eq!(
            none(0, 2),
            "no case found under a, b c: no directory with a model.onnx or model.xml (2 symlinks not followed)"
        );
        // Once cases were found, the links are not why none was selected.
        assert_eq!(
            none(3, 2),
            "no case found under a, b c: 3 cases found, none selected by --filter/--exclude"
        );
    }

    #[test]
    fn an_empty_list_of_paths_is_refused_before_anything_else() {
        let o = CheckOptions::default().jobs(0);
        let e = check::<&str>(&[], &o).unwrap_err();
        assert!(
            matches!(
                e,
                CheckError::InvalidOption {
                    option: "paths",
                    ..
                }
            ),
            "{e:?}"
        );
    }

    #[test]
    fn events_without_expectations_hand_over_the_runners_results() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/onnx-node");
        let options = CheckOptions::default().filter("^test_gather_[01]$").jobs(1);
        let mut names = Vec::new();
        let report = check_with(&[dir], &options, |e| {
            if let Event::CaseFinished(c) = e {
                assert!(c.expectation.is_none());
                names.push(c.name.clone());
            }
        })
        .unwrap();
        assert_eq!(names, ["test_gather_0", "test_gather_1"]);
        assert_eq!(report.summary.total, 2);
        assert_eq!(report.duration, report.run_end().duration);
    }
}
