//! The verdicts: [`Status`] of every case, data set and output, and [`Fault`], what a runtime
//! under test did when that decided one.

/// A verdict.
///
/// ```
/// use onnx_idx_check::verdict::Status;
/// use onnx_idx_check::{check, CheckOptions};
///
/// let report = check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &CheckOptions::default().filter("^test_gather_0$"))?;
/// assert_eq!(report.cases[0].status, Status::Passed);
/// assert_eq!(Status::Errored.as_str(), "errored");
/// # Ok::<(), onnx_idx_check::CheckError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Status {
    /// Our result equals the expected output.
    Passed,
    /// Our result differs from the expected output.
    Failed,
    /// The case could not be evaluated: a malformed file, an invalid model, or inputs the spec
    /// forbids (an out-of-range index, say).
    Errored,
    /// The case uses something the tool does not implement.
    Skipped,
}

impl Status {
    /// Lower-case name, as in reports.
    ///
    /// ```
    /// use onnx_idx_check::verdict::Status;
    ///
    /// assert_eq!(Status::Skipped.as_str(), "skipped");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Passed => "passed",
            Status::Failed => "failed",
            Status::Errored => "errored",
            Status::Skipped => "skipped",
        }
    }
}

/// What a runtime under test did, when its answer was not outputs to compare: told apart in every
/// report (`run --runtime`, and `--actual` for missing outputs).
///
/// ```
/// use onnx_idx_check::verdict::Fault;
///
/// assert_eq!(Fault::TimedOut.as_str(), "timed-out");
/// assert_eq!(Fault::Crashed.label(), "CRASHED");
/// assert_eq!(Fault::WroteNothing.label(), "NOTHING");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Fault {
    /// Its process died: a signal, an exit, a reply that is not the protocol's.
    Crashed,
    /// It gave no answer within `--timeout`.
    TimedOut,
    /// It raised an error (its message is the reason) where the spec requires outputs.
    Refused,
    /// It answered, but an output file is missing.
    WroteNothing,
    /// Under `--repeat`, two runs of the same data set gave different outputs.
    Nondeterministic,
}

impl Fault {
    /// Its name in machine-readable reports (`crashed`, `wrote-nothing`).
    pub fn as_str(self) -> &'static str {
        match self {
            Fault::Refused => "refused",
            Fault::Crashed => "crashed",
            Fault::TimedOut => "timed-out",
            Fault::WroteNothing => "wrote-nothing",
            Fault::Nondeterministic => "nondeterministic",
        }
    }

    /// Its label on a human case line, in place of `FAIL` or `ERROR`.
    pub fn label(self) -> &'static str {
        match self {
            Fault::Refused => "REFUSED",
            Fault::Crashed => "CRASHED",
            Fault::TimedOut => "TIMEOUT",
            Fault::WroteNothing => "NOTHING",
            Fault::Nondeterministic => "NONDET",
        }
    }

    /// In words, for summaries: `crashed`, `timed out`, `wrote nothing`.
    pub fn words(self) -> &'static str {
        match self {
            Fault::Refused => "refused",
            Fault::Crashed => "crashed",
            Fault::TimedOut => "timed out",
            Fault::WroteNothing => "wrote nothing",
            Fault::Nondeterministic => "nondeterministic",
        }
    }
}
