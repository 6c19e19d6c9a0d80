#![no_main]
// Scatter, ScatterElements, ScatterND and TensorScatter against the naive reference.
libfuzzer_sys::fuzz_target!(|data: &[u8]| onnx_idx_check_fuzz::kernels::check_scatters(data));
