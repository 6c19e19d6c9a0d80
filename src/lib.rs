//! onnx-idx-check: a conformance checker for ONNX's indexing operators.
//!
//! It reads ONNX node-test directories (`model.onnx` plus `test_data_set_N/{input,output}_K.pb`),
//! evaluates each model with its own reference kernels, compares the results with the expected
//! outputs and reports the verdicts. Data flows one way:
//!
//! [`discover`] -> [`load`] -> [`eval`] (kernels in [`ops`]) -> [`compare`] -> [`report`],
//! orchestrated per case by [`runner`].
//!
//! [`check()`] is that whole pipeline as one call: what `onnx-idx-check run` runs (selection, the
//! cases, the expectations file, the gate) on node-test trees, returning a [`CheckReport`].
//!
//! As a library it is an oracle for other runtimes' tests: every operator version is one call on
//! typed tensors, through the same checks and kernels as the command line.
//!
//! ```
//! use onnx_idx_check::ops::{GatherElements, Reduction, ScatterElements};
//! use onnx_idx_check::Tensor;
//!
//! let data = Tensor::from_vec(vec![2, 2], vec![1.0f32, 2.0, 3.0, 4.0])?;
//! let indices = Tensor::from_vec(vec![2, 2], vec![0i64, 0, 1, 0])?;
//! let out = GatherElements { axis: 1 }.eval(13, &data, &indices)?;
//! assert_eq!(out.to_vec::<f32>()?, [1.0, 1.0, 4.0, 3.0]);
//!
//! // Strict per version: reductions arrive with ScatterElements-16, max and min with 18.
//! let max = ScatterElements { axis: 1, reduction: Reduction::Max };
//! assert!(max.eval(16, &data, &indices, &data).is_err());
//! assert!(max.eval(18, &data, &indices, &data).is_ok());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

#[cfg(feature = "cli")]
pub mod app;
#[cfg(feature = "cli")]
pub(crate) mod bench;
#[cfg(feature = "cli")]
pub(crate) mod catalog;
pub mod check;
#[cfg(feature = "cli")]
pub mod cli;
pub mod compare;
#[cfg(feature = "cli")]
pub(crate) mod config;
pub(crate) mod coverage;
pub(crate) mod deadline;
pub(crate) mod diagnose;
pub mod discover;
pub(crate) mod eval;
pub mod exit;
pub(crate) mod expectations;
pub mod load;
pub mod memory;
pub mod ops;
pub mod pb;
pub(crate) mod pending;
pub mod report;
#[cfg(feature = "cli")]
pub(crate) mod review;
pub mod runner;
pub mod tensor;
pub mod verdict;

pub use check::{check, check_with, CheckError, CheckOptions, CheckReport};
pub use ops::SpecError;

// The kernels' macros, crate-private, at the paths the modules use (`crate::spec_err!`).
pub(crate) use ops::index::{dispatch_words, with_indices};
pub(crate) use ops::spec_err;
pub(crate) use tensor::storage::dispatch_by_width;
pub use tensor::{DType, DTypeMismatch, Element, ShapeError, Tensor};
