//! onnx-idx-check: a conformance checker for ONNX's indexing operators.
//!
//! It reads ONNX node-test directories (`model.onnx` plus `test_data_set_N/{input,output}_K.pb`),
//! evaluates each model with its own reference kernels, compares the results with the expected
//! outputs and reports the verdicts. Data flows one way: discover -> load -> evaluate (kernels in
//! [`ops`]) -> [`compare`] -> [`report`].
//!
//! As a library it is an oracle for other runtimes' tests. Its main API:
//!
//! - [`ops`]: every operator version is one call on typed tensors (`Gather { axis }.eval(opset,
//!   &data, &indices)`), through the same checks and kernels as the command line, returning a
//!   [`Tensor`] or a [`SpecError`] that says what, where and why;
//! - [`tensor`]: [`Tensor`] (a dtype, a shape and storage checked to fit them), built from and
//!   read as slices of Rust numbers ([`Element`]), or `ndarray` arrays with the `ndarray` feature;
//! - [`check()`] / [`check_with`]: the whole pipeline as one call, what `onnx-idx-check run` runs
//!   (selection, the cases, the expectations file, the gate) on node-test trees, returning a
//!   [`CheckReport`] (its parts in [`verdict`], [`compare`]; [`report`] renders it);
//!
//! Below that API sit the floors a front end builds on (the command line in the
//! `onnx-idx-check-cli` package and the Python package are two): [`pb`] and [`load`] read ONNX
//! and OpenVINO IR files, [`discover`] finds cases, [`eval`] runs a model's graph on the kernels,
//! [`runner`] judges one case, [`runtime`] drives a runtime under test as a child process,
//! [`diagnose`] explains wrong results, [`expectations`] and [`pending`] keep the files a run
//! reads and writes beside the test tree. Each module's page says what it is for.
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
// `unsafe` lives in the kernels crate; here only the modules that talk to the operating system
// allow it (runtime/{interrupt,reaper,worker}, load/tensor.rs).
#![deny(unsafe_code)]

pub mod check;
pub mod compare;
pub mod coverage;
pub mod deadline;
pub mod diagnose;
pub mod discover;
pub mod eval;
pub mod expectations;
pub mod fsutil;
pub mod load;
pub mod pb;
pub mod pending;
pub mod report;
pub mod runner;
pub mod runtime;
pub mod verdict;

pub use check::{check, check_with, CheckError, CheckOptions, CheckReport};
/// The kernels crate itself (its allocators in [`kernels::alloc`]).
pub use onnx_idx_check_kernels as kernels;
/// The operators and tensors: the kernels crate, re-exported so that `onnx_idx_check::ops::Gather`
/// and `onnx_idx_check::Tensor` are the same items as `onnx_idx_check_kernels`'.
pub use onnx_idx_check_kernels::{ops, tensor};
pub use onnx_idx_check_kernels::{DType, DTypeMismatch, Element, ShapeError, SpecError, Tensor};
