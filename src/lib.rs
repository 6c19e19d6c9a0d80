//! onnx-idx-check library.
pub mod pb;
