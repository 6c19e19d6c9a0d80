//! onnx-idx-check-kernels: reference kernels of ONNX's indexing operators at every opset version
//! (Gather, GatherElements, GatherND, Scatter, ScatterElements, ScatterND, TensorScatter,
//! OpenVINO's Gather-8, GatherGrad and GatherElementsGrad), each version checked against its own
//! text of the specification: an oracle a runtime puts in its `dev-dependencies` to check its own
//! kernels in unit tests. No files, no protobuf, no processes: tensors in, a tensor or a
//! [`SpecError`] out.
//!
//! - [`ops`]: one typed call per operator (`Gather { axis }.eval(opset, &data, &indices)`), and
//!   [`ops::call`] by domain, op type and opset for a front end that reads nodes;
//! - [`tensor`]: [`Tensor`] (a dtype, a shape and storage checked to fit them), built from and
//!   read as slices of Rust numbers ([`Element`]), or `ndarray` arrays with the `ndarray` feature;
//! - [`alloc`]: the allocator policy the command line installs for large tensors (optional).
//!
//! A runtime's unit test compares its kernel with the oracle, version by version:
//!
//! ```
//! use onnx_idx_check_kernels::ops::{GatherElements, Reduction, ScatterElements};
//! use onnx_idx_check_kernels::{SpecError, Tensor};
//!
//! // The runtime's kernel under test (here, a stand-in).
//! fn my_gather_elements(data: &[f32], indices: &[i64]) -> Vec<f32> {
//!     vec![data[indices[0] as usize], data[indices[1] as usize], 4.0, 3.0]
//! }
//!
//! let data = Tensor::from_vec(vec![2, 2], vec![1.0f32, 2.0, 3.0, 4.0])?;
//! let indices = Tensor::from_vec(vec![2, 2], vec![0i64, 0, 1, 0])?;
//! let want = GatherElements { axis: 1 }.eval(13, &data, &indices)?;
//! assert_eq!(want.to_vec::<f32>()?, my_gather_elements(&[1.0, 2.0], &[0, 0]));
//!
//! // Strict per version: reductions arrive with ScatterElements-16, max and min with 18, and an
//! // index out of range is an error, never a wrap or a clamp.
//! let max = ScatterElements { axis: 1, reduction: Reduction::Max };
//! assert!(max.eval(16, &data, &indices, &data).is_err());
//! assert!(max.eval(18, &data, &indices, &data).is_ok());
//! let far = Tensor::from_vec(vec![2, 2], vec![0i64, 0, 2, 0])?;
//! let err = GatherElements { axis: 1 }.eval(13, &data, &far).unwrap_err();
//! assert!(matches!(err, SpecError::Violation(_)));
//! assert!(err.to_string().contains("out of range"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod alloc;
pub mod ops;
pub mod tensor;

pub use ops::SpecError;

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
pub use tensor::{DType, DTypeMismatch, Element, ShapeError, Tensor};

// The kernels' macros, crate-private, at the paths the modules use (`crate::spec_err!`).
pub(crate) use ops::index::{dispatch_words, with_indices};
pub(crate) use ops::spec_err;
