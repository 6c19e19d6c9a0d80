#![no_main]
// TensorProto decoding and conversion from raw bytes (see `onnx_idx_check_fuzz::tensor`).
libfuzzer_sys::fuzz_target!(|data: &[u8]| onnx_idx_check_fuzz::tensor::check(data));
