//! The runner: for each case, load -> evaluate -> compare, producing a [`CaseResult`]. Cases run
//! in parallel; results are delivered in case order. The runner produces verdicts and never
//! formats a report: the reporters ([`crate::report`]) receive what it produced.
//!
//! - `pool`: the thread pool and the in-order delivery of results;
//! - `case`: one case: model, plan, initializers, its data sets;
//! - `data_set`: one data set: its files, the evaluation and the comparison of every output;
//! - `actual`: a runtime's outputs read from the `--actual` tree;
//! - `runtime`: a runtime's outputs from its worker (`--runtime`), run `--repeat` times;
//! - [`batch`]: many cases in one model; `batched`: the runtime's answers from such models;
//! - `pending`: snapshots of our result for `--pending`;
//! - `prepared`: a case loaded once for repeated evaluation (`bench`).
//!
//! [`CaseResult`]: crate::verdict::CaseResult

mod actual;
pub mod batch;
mod batched;
mod case;
mod data_set;
mod pending;
mod pool;
mod prepared;
mod record;
mod runtime;
mod trial;

pub use case::run_case;
// For `list`, which says what `run` will.
pub use case::NO_DATA_SET;
pub use pool::run_all;
pub use prepared::Prepared;

use crate::compare::Tolerance;
use crate::deadline::TimedOut;
use crate::eval::{EvalError, PlanError};
use crate::load::LoadError;
use crate::ops::SpecError;
use crate::verdict::Status;
use std::path::PathBuf;

/// Settings that shape every case's verdict.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Comparison rules.
    pub tolerance: Tolerance,
    /// The largest tensor, in bytes, that may be loaded or created.
    pub max_tensor_bytes: usize,
    /// `--actual DIR`: judge these outputs of a runtime under test instead of our own result.
    pub actual: Option<PathBuf>,
    /// Record the sha256 of every model and tensor file read (for the JSON and JUnit reports).
    pub digests: bool,
    /// Which data sets' coverage traits to record on [`CaseResult::traits`](crate::verdict::CaseResult::traits):
    /// none, the passing ones (the `coverage` subcommand), or every one our kernels evaluate
    /// whatever its verdict (the HTML scoreboard).
    pub traits: Traits,
    /// `--pending DIR`: write our result for every failed or missing expected output there, for
    /// `review`.
    pub pending: Option<PathBuf>,
    /// Per-case tolerance overrides from an expectations file.
    pub expectations: Option<std::sync::Arc<crate::expectations::Expectations>>,
    /// `--timeout`: how long one case may run before it is errored; `None` for no limit.
    pub timeout: Option<std::time::Duration>,
    /// `--runtime`: the runtime under test, run as a child process for every data set.
    pub runtime: Option<std::sync::Arc<crate::runtime::Runtime>>,
    /// `--repeat N`: how many times the runtime runs each data set.
    pub repeat: usize,
    /// `--batch N`: cases run side by side in one model at most, for a runtime whose hello says
    /// it runs a model's independent subgraphs as each alone ([`batch`]); a case that does not
    /// pass there is judged again alone. 1 runs every case alone.
    pub batch: usize,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            tolerance: Tolerance::default(),
            max_tensor_bytes: DEFAULT_MAX_TENSOR_BYTES,
            actual: None,
            digests: false,
            traits: Traits::Off,
            pending: None,
            expectations: None,
            timeout: Some(DEFAULT_TIMEOUT),
            runtime: None,
            repeat: 1,
            batch: 1,
        }
    }
}

/// Which data sets the runner records coverage traits of ([`RunOptions::traits`]).
///
/// ```
/// use onnx_idx_check::runner::Traits;
/// use onnx_idx_check::{check, CheckOptions};
///
/// // Under `Every` each case records what its inputs exercise, whatever its verdict.
/// let options = CheckOptions::default().filter("^test_gather_0$").traits(Traits::Every);
/// let report = check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &options)?;
/// assert!(report.cases[0].traits.iter().any(|(op, t)| op == "Gather-13" && t.contains("indices:int64")));
/// # Ok::<(), onnx_idx_check::CheckError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Traits {
    /// None (a plain run).
    #[default]
    Off,
    /// Those of data sets whose every output passed (the `coverage` subcommand: what the
    /// passing cases cover).
    Passing,
    /// Those of every data set whose inputs load and whose nodes our kernels trace, whatever
    /// the verdict of the source on trial (a runtime that refused or failed the data set).
    Every,
}

/// One minute per case: generous for the largest tensors `--max-tensor-bytes` allows.
pub const DEFAULT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// 4 GiB (decision D12).
pub const DEFAULT_MAX_TENSOR_BYTES: usize = 4 << 30;

/// A non-pass verdict with its reason and, when a runtime under test decided it, what it did.
struct Verdict(Status, String, Option<crate::verdict::Fault>);

impl From<LoadError> for Verdict {
    fn from(e: LoadError) -> Self {
        let status = if e.is_unsupported() {
            Status::Skipped
        } else {
            Status::Errored
        };
        Verdict(status, e.to_string(), None)
    }
}

impl From<TimedOut> for Verdict {
    fn from(e: TimedOut) -> Self {
        Verdict(Status::Errored, e.to_string(), None)
    }
}

impl From<PlanError> for Verdict {
    fn from(e: PlanError) -> Self {
        match e {
            PlanError::Invalid(m) => Verdict(Status::Errored, m, None),
            PlanError::Unsupported(m) => Verdict(Status::Skipped, m, None),
        }
    }
}

impl From<EvalError> for Verdict {
    fn from(e: EvalError) -> Self {
        let status = match &e {
            EvalError::Kernel {
                error: SpecError::Unsupported(_),
                ..
            } => Status::Skipped,
            _ => Status::Errored,
        };
        Verdict(status, e.to_string(), None)
    }
}
