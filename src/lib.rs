//! onnx-idx-check: a conformance checker for ONNX's indexing operators.
//!
//! It reads ONNX node-test directories (`model.onnx` plus `test_data_set_N/{input,output}_K.pb`),
//! evaluates each model with its own reference kernels, compares the results with the expected
//! outputs and reports the verdicts. Data flows one way:
//!
//! [`discover`] -> [`load`] -> [`eval`] (kernels in [`ops`]) -> [`compare`] -> [`report`],
//! orchestrated per case by [`runner`].

#![warn(missing_docs)]

pub mod app;
pub mod bench;
pub mod catalog;
pub mod cli;
pub mod compare;
pub mod config;
pub mod coverage;
pub mod deadline;
pub mod diagnose;
pub mod discover;
pub mod eval;
pub mod exit;
pub mod expectations;
pub mod load;
pub mod memory;
pub mod ops;
pub mod pb;
pub mod pending;
pub mod report;
pub mod review;
pub mod runner;
pub mod tensor;
pub mod verdict;

pub use ops::SpecError;
pub use tensor::{DType, DTypeMismatch, Element, ShapeError, Tensor};
