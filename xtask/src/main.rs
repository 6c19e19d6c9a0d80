//! Repository automation, run as `cargo xtask <command>` (alias in `.cargo/config.toml`).
//!
//! - `codegen [--check]`: regenerates `src/pb/onnx.rs` from `proto/onnx.proto3`.
//! - `testdata [--check]`: regenerates `testdata/spec-examples/` from the Rust descriptions in
//!   `xtask/src/spec_examples.rs`, and `testdata/openvino-ir/` (the Gather-8 examples as IR).
//! - `fixtures [--check]`: regenerates `tests/fixtures/`, the failing, invalid and malformed cases
//!   of the integration tests, from `xtask/src/fixtures.rs`.
//!
//! `--check` compares with the committed files and fails when they differ, writing nothing.

mod codegen;
mod fixtures;
mod fsutil;
mod ir_examples;
// The library's generated prost types, compiled into xtask directly rather than through a
// dependency on the root crate: xtask must build while the library does not (codegen is what
// repairs this file). The file is prettyplease's output, not rustfmt's, so formatting it from
// here would make `cargo xtask codegen --check` fail.
#[allow(clippy::all, dead_code)]
#[rustfmt::skip]
#[path = "../../crates/checker/src/pb/onnx.rs"]
mod pb;
mod spec_examples;
mod testdata;
#[cfg(test)]
mod tidy;

use anyhow::{bail, Result};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let check = args.iter().any(|a| a == "--check");
    match args.first().map(String::as_str) {
        Some("codegen") => codegen::generate(check),
        Some("testdata") => testdata::generate(check).and_then(|()| ir_examples::generate(check)),
        Some("fixtures") => fixtures::generate(check),
        _ => bail!("usage: cargo xtask <codegen|testdata|fixtures> [--check]"),
    }
}
