//! The results of a run: every case ([`CaseResult`]), its data sets ([`DataSetResult`]) and
//! their outputs ([`OutputResult`]).

use super::{BugClass, ExpectationNote, Fault, Status};
use crate::compare::Mismatch;
use crate::tensor::DType;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// The comparison of one graph output.
///
/// ```
/// use onnx_idx_check::verdict::Status;
/// use onnx_idx_check::{check, CheckOptions, DType};
///
/// let report = check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &CheckOptions::default().filter("^test_scatternd_add$"))?;
/// let out = &report.cases[0].data_sets[0].outputs[0];
/// assert_eq!((out.status, out.dtype, out.mismatches), (Status::Passed, DType::Float, 0));
/// assert_eq!(out.expected_shape.as_deref(), Some(&out.actual_shape[..]));
/// assert!(out.diagnosis().is_none());
/// # Ok::<(), onnx_idx_check::CheckError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct OutputResult {
    /// The graph output's name.
    pub name: String,
    /// Passed or failed.
    pub status: Status,
    /// Why it failed.
    pub reason: Option<String>,
    /// The expected dtype.
    pub dtype: DType,
    /// Our dtype.
    pub actual_dtype: DType,
    /// The expected shape; `None` when there is no expected output (the spec requires an error,
    /// or the expected file is missing).
    pub expected_shape: Option<Vec<usize>>,
    /// Our shape.
    pub actual_shape: Vec<usize>,
    /// Differing elements.
    pub mismatches: usize,
    /// Largest absolute difference.
    pub max_abs_diff: Option<f64>,
    /// Largest relative difference.
    pub max_rel_diff: Option<f64>,
    /// The first differing elements.
    pub first_mismatches: Vec<Mismatch>,
    /// Whether the comparison used a tolerance.
    pub tolerant: bool,
    /// Every known bug class that reproduces the wrong output exactly, most specific first.
    pub diagnoses: Vec<BugClass>,
    /// onnx-idx-check's result in brief (dtype, shape, first values), for an output that has no
    /// expected file yet: a new snapshot.
    pub computed: Option<String>,
}

impl OutputResult {
    /// The comparison of output `name`, `expected` against `actual`, as `d` found it: passed or
    /// failed, with no diagnosis yet.
    pub(crate) fn of_diff(
        name: &str,
        expected: &crate::Tensor,
        actual: &crate::Tensor,
        d: crate::compare::Diff,
    ) -> OutputResult {
        OutputResult {
            name: name.to_string(),
            status: if d.passed {
                Status::Passed
            } else {
                Status::Failed
            },
            reason: d.reason,
            dtype: expected.dtype(),
            actual_dtype: actual.dtype(),
            expected_shape: Some(expected.shape().to_vec()),
            actual_shape: actual.shape().to_vec(),
            mismatches: d.mismatches,
            max_abs_diff: d.max_abs_diff,
            max_rel_diff: d.max_rel_diff,
            first_mismatches: d.first_mismatches,
            tolerant: d.tolerant,
            diagnoses: Vec::new(),
            computed: None,
        }
    }

    /// The most specific bug class that reproduces the wrong output (`diagnosis` in reports).
    ///
    /// ```
    /// use onnx_idx_check::{check, CheckOptions};
    ///
    /// // A passing output has no diagnosis; a wrong one names the bug class that reproduces it.
    /// let report = check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &CheckOptions::default().filter("^test_gather_0$"))?;
    /// assert!(report.cases[0].data_sets[0].outputs[0].diagnosis().is_none());
    /// # Ok::<(), onnx_idx_check::CheckError>(())
    /// ```
    pub fn diagnosis(&self) -> Option<BugClass> {
        self.diagnoses.first().copied()
    }
}

/// The verdict of one data set.
///
/// ```
/// use onnx_idx_check::{check, CheckOptions};
///
/// let report = check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &CheckOptions::default().filter("^test_gather_1$"))?;
/// let ds = &report.cases[0].data_sets[0];
/// assert_eq!((ds.name.as_str(), ds.outputs.len()), ("test_data_set_0", 1));
/// # Ok::<(), onnx_idx_check::CheckError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct DataSetResult {
    /// `test_data_set_N`.
    pub name: String,
    /// The verdict.
    pub status: Status,
    /// Why it did not pass.
    pub reason: Option<String>,
    /// Per-output comparisons (empty when the data set could not be evaluated).
    pub outputs: Vec<OutputResult>,
    /// What the runtime under test did, when that decided the verdict.
    pub fault: Option<Fault>,
}

/// The verdict of one case.
///
/// ```
/// use onnx_idx_check::{check, CheckOptions};
///
/// let report = check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &CheckOptions::default().filter("^test_scatter_elements_with_axis$"))?;
/// let case = &report.cases[0];
/// assert_eq!(case.name, "test_scatter_elements_with_axis");
/// assert_eq!(case.op_versions, ["ScatterElements-18"]);
/// assert!(case.path.ends_with("test_scatter_elements_with_axis"));
/// # Ok::<(), onnx_idx_check::CheckError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct CaseResult {
    /// The case's name (its path relative to the argument it was found under).
    pub name: String,
    /// The case directory.
    pub path: PathBuf,
    /// The operators of the graph, in order (domain-qualified outside the default domain).
    pub ops: Vec<String>,
    /// The opset imports (domain, `ai.onnx` for the default one, -> version).
    pub opset: BTreeMap<String, i64>,
    /// The operators under test as resolved versions (`Gather-13`), or as bare op types when the
    /// model could not be resolved; keys of the per-operator summary.
    pub op_versions: Vec<String>,
    /// sha256 of every model and tensor file read (path relative to the case directory -> hex),
    /// when digests were requested.
    pub files: Vec<(String, String)>,
    /// Where the case's data comes from, when its tree says (a PROVENANCE file, or a README
    /// naming the ONNX release).
    pub origin: Option<String>,
    /// What the expectations file says of this case, when one applies.
    pub expectation: Option<ExpectationNote>,
    /// The coverage traits each operator version exercised, one entry per node and data set:
    /// of passing data sets or of every one, as [`Traits`](crate::runner::Traits) asked; empty
    /// when none was asked.
    pub traits: Vec<(String, std::collections::BTreeSet<String>)>,
    /// The verdict.
    pub status: Status,
    /// Why it did not pass: the first non-passing data set's reason, or the case-level one.
    pub reason: Option<String>,
    /// What the runtime under test did in the data set that gave the reason.
    pub fault: Option<Fault>,
    /// The data sets.
    pub data_sets: Vec<DataSetResult>,
    /// Wall time spent on the case.
    pub duration: Duration,
}

impl CaseResult {
    /// A result with a name, a directory and a verdict, and nothing else known yet.
    pub fn bare(name: &str, path: PathBuf, status: Status) -> CaseResult {
        CaseResult {
            name: name.into(),
            path,
            ops: Vec::new(),
            opset: BTreeMap::new(),
            op_versions: Vec::new(),
            files: Vec::new(),
            origin: None,
            expectation: None,
            traits: Vec::new(),
            status,
            reason: None,
            fault: None,
            data_sets: Vec::new(),
            duration: Duration::ZERO,
        }
    }

    /// Whether the case errored only because expected outputs are missing: every output that
    /// did not pass is a new snapshot (see [`OutputResult::computed`]), as for a case just
    /// written.
    ///
    /// ```
    /// use onnx_idx_check::{check, CheckOptions};
    ///
    /// let report = check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &CheckOptions::default().filter("^test_gather_0$"))?;
    /// assert!(!report.cases[0].is_new());
    /// # Ok::<(), onnx_idx_check::CheckError>(())
    /// ```
    pub fn is_new(&self) -> bool {
        self.status == Status::Errored
            && !self.data_sets.is_empty()
            && self.data_sets.iter().all(|d| {
                d.status == Status::Passed
                    || (!d.outputs.is_empty()
                        && d.outputs
                            .iter()
                            .all(|o| o.status == Status::Passed || o.computed.is_some()))
            })
    }
}
