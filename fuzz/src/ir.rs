//! Target `ir_reader`: any bytes as an OpenVINO IR case, `model.xml` and `model.bin`.
//!
//! The input is the `model.xml` text, then optionally the separator [`BIN_SEPARATOR`] and the
//! `model.bin` bytes. Both are written to a scratch case directory and read by the IR reader as
//! `run` reads them (XML parsing with DTDs refused and depth bounded, the graph's ids, ports,
//! edges and cycles checked, every Const's range checked against `model.bin`'s real length).
//! Whatever the outcome, it must be a value: an error with a message, or a model whose every
//! initializer is within the size limit and which the reader without `model.bin` accepts too.

use crate::MAX_TENSOR_BYTES;
use onnx_idx_check::load::ir::{check_xml, load_ir};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Between `model.xml` and `model.bin` in an input.
pub const BIN_SEPARATOR: &[u8] = b"\0--model.bin--\0";

/// Removes this process's scratch directory: for the replay tests, whose process would
/// otherwise leave it in the temporary directory. Checks after it fail.
pub fn remove_scratch() {
    let _ = std::fs::remove_dir_all(case_dir());
}

/// The scratch case directory, one per process.
fn case_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir =
            std::env::temp_dir().join(format!("onnx-idx-check-fuzz-ir-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create the fuzz case directory");
        dir
    })
}

/// `model.xml` and `model.bin` of an input.
pub fn split(bytes: &[u8]) -> (&[u8], &[u8]) {
    match bytes
        .windows(BIN_SEPARATOR.len())
        .position(|w| w == BIN_SEPARATOR)
    {
        Some(at) => (&bytes[..at], &bytes[at + BIN_SEPARATOR.len()..]),
        None => (bytes, &[]),
    }
}

/// Reads `bytes` as an IR case; panics only if the reader misbehaves.
pub fn check(bytes: &[u8]) {
    let (xml, bin) = split(bytes);
    let dir = case_dir();
    std::fs::write(dir.join("model.xml"), xml).expect("write model.xml");
    std::fs::write(dir.join("model.bin"), bin).expect("write model.bin");
    let model = match load_ir(dir, 1 << 20, MAX_TENSOR_BYTES, true) {
        Ok(m) => m.model,
        Err(e) => {
            assert!(!e.to_string().is_empty(), "an error without a message");
            return;
        }
    };
    let graph = model.graph.as_ref().expect("a read IR has a graph");
    for t in &graph.initializer {
        assert!(
            t.raw_data.len() <= MAX_TENSOR_BYTES,
            "a Const of {} bytes beyond the limit of {MAX_TENSOR_BYTES}",
            t.raw_data.len()
        );
    }
    // The graph checks do not depend on model.bin: what reads with it reads without it.
    if let Err(e) = check_xml(xml) {
        panic!("model.xml reads with model.bin but not alone: {e}");
    }
}
