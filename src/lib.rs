//! onnx-idx-check: a conformance checker for ONNX's indexing operators.
//!
//! It reads ONNX node-test directories (`model.onnx` plus `test_data_set_N/{input,output}_K.pb`),
//! evaluates each model with its own reference kernels, compares the results with the expected
//! outputs and reports the verdicts. Data flows one way: discover -> load -> evaluate (kernels in
//! [`ops`]) -> [`compare`] -> [`report`].
//!
//! As a library it is an oracle for other runtimes' tests. The public API is small:
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
//! Everything else is crate-private. Without the default feature `cli` the library builds with
//! none of the command line's crates.
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
// allow it (runtime/{groups,reaper,scratch,worker}.rs, load/tensor.rs).
#![deny(unsafe_code)]
// Without the command line, what only it uses (the reporters and the progress bar, `bench`'s
// prepared cases, the exit codes) is unused; the default build, which has it, lints dead code.
#![cfg_attr(not(feature = "cli"), allow(dead_code))]

#[cfg(feature = "cli")]
pub(crate) mod app;
#[cfg(feature = "cli")]
pub(crate) mod bench;
#[cfg(feature = "cli")]
pub(crate) mod catalog;
pub mod check;
#[cfg(feature = "cli")]
pub(crate) mod cli;
pub mod compare;
#[cfg(feature = "cli")]
pub(crate) mod config;
pub(crate) mod coverage;
pub(crate) mod deadline;
pub(crate) mod diagnose;
pub(crate) mod discover;
pub(crate) mod eval;
pub(crate) mod exit;
pub(crate) mod expectations;
pub(crate) mod fsutil;
#[cfg(feature = "cli")]
pub(crate) mod generate;
#[cfg(feature = "cli")]
pub(crate) mod hunt;
pub(crate) mod load;
#[cfg(feature = "cli")]
pub(crate) mod minimize;
#[cfg(feature = "cli")]
pub(crate) mod owned;
pub(crate) mod pb;
pub(crate) mod pending;
pub mod report;
#[cfg(feature = "cli")]
pub(crate) mod review;
pub(crate) mod runner;
pub(crate) mod runtime;
#[cfg(feature = "cli")]
pub(crate) mod show;
pub mod verdict;

/// Not part of the library's API: what this workspace's own binary, benchmarks, fuzz targets and
/// tests reach inside the crate for (the command line, the registry below the typed structs, the
/// loader, the runner, the allocator). Hidden from the documentation, with no stability promise:
/// it may change in any release. Depend on the items at the crate root and in the public modules.
#[doc(hidden)]
pub mod internal {
    /// The command line (`main.rs`).
    #[cfg(feature = "cli")]
    pub mod cli {
        pub use crate::app::{error_text, run};
        pub use crate::cli::Cli;
        pub use crate::exit::{CASES_FAILED, OK, USAGE};
    }
    /// The ONNX protobuf messages (prost types generated from `proto/onnx.proto3`).
    pub mod pb {
        pub use crate::pb::*;
    }
    /// The allocator the binary installs, and its settings.
    pub mod memory {
        pub use onnx_idx_check_kernels::alloc::{
            keep_freed_memory, HugePageAlloc, ReuseLargeAlloc,
        };
    }
    /// The registry below the typed structs: nodes as the model loader sees them.
    pub mod ops {
        pub use crate::ops::attr::AttrValue;
        pub use crate::ops::attr::Attrs;
        pub use crate::ops::registry::{
            call_op, find_op, invoke, resolve, Evaluated, Invocation, OpDef, Resolution,
        };
    }
    /// Reading and writing tensors and models.
    pub mod load {
        pub use crate::load::attrs::{attrs_of, value_of};
        pub use crate::load::ir::{check_xml, load_ir, write as ir_write, IrError, IrModel};
        pub use crate::load::load_tensor_file;
        pub use crate::load::save::{encode_tensor, tensor_to_proto};
        pub use crate::load::tensor::{tensor_from_proto, TensorContext};
    }
    /// The human report's pieces (the Python module's pytest plugin shows a case's failure as
    /// `run` prints it).
    pub mod report {
        pub use crate::report::human::{failure_details, Style};
    }
    /// Finding and running cases one by one.
    pub mod runner {
        pub use crate::discover::discover;
        pub use crate::runner::{run_case, RunOptions};
        pub use crate::runtime::Runtime;
    }
}

pub use check::{check, check_with, CheckError, CheckOptions, CheckReport};
/// The operators and tensors: the kernels crate, re-exported so that `onnx_idx_check::ops::Gather`
/// and `onnx_idx_check::Tensor` are the same items as `onnx_idx_check_kernels`'.
pub use onnx_idx_check_kernels::{ops, tensor};
pub use onnx_idx_check_kernels::{DType, DTypeMismatch, Element, ShapeError, SpecError, Tensor};
