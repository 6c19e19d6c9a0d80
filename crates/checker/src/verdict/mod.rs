//! What a run found: the verdict of every case, data set and output. Produced by the runner,
//! consumed by the reporters, which alone turn it into prose.
//!
//! ```
//! use onnx_idx_check::verdict::Status;
//! use onnx_idx_check::{check, CheckOptions};
//!
//! let report = check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &CheckOptions::default())?;
//! for case in &report.cases {
//!     for ds in &case.data_sets {
//!         assert!(ds.outputs.iter().all(|o| o.status == Status::Passed), "{}", case.name);
//!     }
//! }
//! # Ok::<(), onnx_idx_check::CheckError>(())
//! ```

mod expectation;
mod gate;
mod result;
mod status;
mod summary;

pub use crate::diagnose::class::BugClass;
pub use expectation::{ExpectationNote, ExpectationOutcome, ExpectationsReport, NoMatch, Written};
pub use gate::{Gate, GateKind, GateReason};
pub(crate) use gate::{RequiredOp, Requirements};
pub use result::{CaseResult, DataSetResult, OutputResult};
pub use status::{Fault, Status};
pub use summary::{ByOp, Counts, Summary, INVALID_MODEL};

/// The runtime under test of a run, as it introduced itself: the runtime's own description,
/// re-exported here among the results it appears in.
pub use crate::runtime::RuntimeInfo;
