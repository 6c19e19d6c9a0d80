//! The `onnx-idx-check` binary: parse, run, map the outcome to an exit status.

use clap::Parser;
use onnx_idx_check::internal::{cli, memory};
use std::process::ExitCode;

/// Large tensors on huge pages (see `memory`).
#[global_allocator]
static ALLOC: memory::HugePageAlloc = memory::HugePageAlloc;

fn main() -> ExitCode {
    memory::keep_freed_memory();
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {}", cli::error_text(&e));
            // Usage errors and anything else that stops the run before verdicts (an unwritable
            // --output, say) both exit 2; 1 is reserved for cases that failed or errored.
            ExitCode::from(cli::USAGE)
        }
    }
}
