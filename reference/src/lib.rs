//! A deliberately naive, independent model of every operator version onnx-idx-check implements:
//! ONNX Gather, GatherElements, GatherND, Scatter, ScatterElements, ScatterND and TensorScatter,
//! OpenVINO's Gather (`org.openvinotoolkit`) and onnxruntime's training ops GatherGrad and
//! GatherElementsGrad (`com.microsoft`).
//!
//! It is written for clarity, not speed, straight from the project's semantics
//! (`docs/semantics.md`): every output (or update) position is visited one coordinate tuple at a
//! time, indices are normalised here, shape and type rules are checked here. It shares no code
//! with the tool (it does not depend on `onnx-idx-check` at all: it has its own [`DType`] and
//! tensor type, [`RTensor`]), so that it is an independent source of expected values: the fuzz
//! targets run every node through the tool's kernels and through [`evaluate`] and require the
//! same verdict and the same bits, and the integration tests check the tool's typed API and the
//! suites `generate` writes against it. Conversions between its tensors and the tool's live in
//! those users, once each.
//!
//! ```
//! use onnx_idx_check_reference::{evaluate, Attr, DType, Op, Outcome, RTensor};
//!
//! // onnx__Gather.html, example 1: data [3, 2], indices [[0, 1], [1, 2]], axis 0.
//! let data = RTensor::bits(DType::Int64, &[3, 2], &[1, 2, 3, 4, 5, 6]);
//! let indices = RTensor::bits(DType::Int64, &[2, 2], &[0, 1, 1, 2]);
//! let out = evaluate(Op::Gather, 13, &[Attr::int("axis", 0)], &[Some(data), Some(indices)], 1 << 20);
//! let want = RTensor::bits(DType::Int64, &[2, 2, 2], &[1, 2, 3, 4, 3, 4, 5, 6]);
//! assert_eq!(out, Outcome::Ok { out: want, arithmetic: false });
//! ```

mod dtype;
mod numeric;
mod ops;
mod tensor;

pub use dtype::{DType, Layout};
pub use numeric::{f16_to_f32, f32_to_bf16, f32_to_f16, is_nan};
pub use ops::{evaluate, resolve_version, Attr, AttrValue, Op, Outcome};
pub use tensor::{show, Element, RTensor, Word};
