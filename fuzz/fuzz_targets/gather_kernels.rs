#![no_main]
// Gather, GatherElements, GatherND and OpenVINO Gather-8 against the naive reference.
libfuzzer_sys::fuzz_target!(|data: &[u8]| onnx_idx_check_fuzz::kernels::check_gathers(data));
