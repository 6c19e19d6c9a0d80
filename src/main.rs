//! The `onnx-idx-check` binary: the command line of [`onnx_idx_check_cli::main`], with the
//! kernels' allocator.

use onnx_idx_check::kernels::alloc;
use std::process::ExitCode;

/// Large tensors on huge pages (see `alloc`).
#[global_allocator]
static ALLOC: alloc::HugePageAlloc = alloc::HugePageAlloc;

fn main() -> ExitCode {
    alloc::keep_freed_memory();
    ExitCode::from(onnx_idx_check_cli::main(std::env::args_os()))
}
