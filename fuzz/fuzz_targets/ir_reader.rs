#![no_main]
// OpenVINO IR `model.xml` + `model.bin` read as `run` reads them (see `onnx_idx_check_fuzz::ir`).
libfuzzer_sys::fuzz_target!(|data: &[u8]| onnx_idx_check_fuzz::ir::check(data));
