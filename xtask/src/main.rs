//! Repository automation, run as `cargo xtask <command>` (alias in `.cargo/config.toml`).
//!
//! - `codegen [--check]`: regenerates `src/pb/onnx.rs` from `proto/onnx.proto3`.
//! - `testdata [--check]`: regenerates `testdata/spec-examples/` from the Rust descriptions in
//!   `xtask/src/spec_examples.rs`.
//!
//! `--check` compares with the committed files and fails when they differ, writing nothing.

mod codegen;
mod fsutil;

use anyhow::{bail, Result};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let check = args.iter().any(|a| a == "--check");
    match args.first().map(String::as_str) {
        Some("codegen") => codegen::generate(check),
        _ => bail!("usage: cargo xtask codegen [--check]"),
    }
}
