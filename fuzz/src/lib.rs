//! The checks behind onnx-idx-check's libFuzzer targets, kept in a library so that
//! `cargo test` can replay their seeds and regressions without libFuzzer.
//!
//! Each `fuzz_targets/*.rs` is one line that hands libFuzzer's bytes to a function here. A
//! check panics only when onnx-idx-check misbehaves: a panic inside the tool, a verdict without
//! a reason, a tensor larger than the limit it was given, or a kernel result that differs from
//! the naive reference ([`onnx_idx_check_reference`]).

pub mod convert;
pub mod ir;
pub mod kernels;
pub mod large;
pub mod pipeline;
pub mod replay;
pub mod seeds;
pub mod tensor;

/// The tensor size limit every target runs under: small, so that no input can make the tool
/// allocate more than a few megabytes however large the sizes it claims.
pub const MAX_TENSOR_BYTES: usize = 1 << 20;
