#![no_main]
// A whole case (model, inputs, expected outputs) from raw bytes (see `onnx_idx_check_fuzz::pipeline`).
libfuzzer_sys::fuzz_target!(|data: &[u8]| onnx_idx_check_fuzz::pipeline::check(data));
