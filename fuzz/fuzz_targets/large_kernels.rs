#![no_main]
// The kernels' parallel paths on megabyte-sized tensors against the naive reference, with the process's
// huge-page allocator (as the binary runs them).
#[global_allocator]
static ALLOC: onnx_idx_check::kernels::alloc::HugePageAlloc =
    onnx_idx_check::kernels::alloc::HugePageAlloc;

libfuzzer_sys::fuzz_target!(|data: &[u8]| onnx_idx_check_fuzz::large::check(data));
