//! The `onnx-idx-check` binary: parse, run, map the outcome to an exit status.

use clap::Parser;
use onnx_idx_check::{app, cli::Cli, exit};
use std::process::ExitCode;

fn main() -> ExitCode {
    keep_freed_memory();
    let cli = Cli::parse();
    match app::run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            // Usage errors and anything else that stops the run before verdicts (an unwritable
            // --output, say) both exit 2; 1 is reserved for cases that failed or errored.
            ExitCode::from(exit::USAGE)
        }
    }
}

/// Large tensors are allocated, freed and allocated again (every case, every `bench` iteration).
/// glibc serves allocations over 32 MiB with fresh `mmap`s, so each one pays a page fault and a
/// kernel zeroing per page; keeping them in the heap and never trimming it lets freed pages be
/// reused warm, as runtimes' arena allocators do.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn keep_freed_memory() {
    // SAFETY: mallopt only adjusts allocator parameters; called before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_MAX, 0);
        libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn keep_freed_memory() {}
