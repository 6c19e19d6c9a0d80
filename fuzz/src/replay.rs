//! Replays the committed inputs of a target without libFuzzer: its corpus
//! (`fuzz/corpus/<target>/`, seeds plus what campaigns kept) and the inputs of every fixed
//! finding (`fuzz/regressions/<target>/`).

use std::path::{Path, PathBuf};

/// The fuzz crate's directory.
pub fn fuzz_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every committed input of `target`, sorted.
pub fn inputs(target: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for group in ["corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(fuzz_dir().join(group).join(target)) else {
            continue;
        };
        files.extend(
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_file()),
        );
    }
    files.sort();
    files
}

/// Runs `check` on every committed input of `target`; a panic names the input. Returns how many
/// inputs ran.
pub fn replay(target: &str, check: fn(&[u8])) -> usize {
    let files = inputs(target);
    for file in &files {
        let bytes = std::fs::read(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        if let Err(panic) = std::panic::catch_unwind(|| check(&bytes)) {
            let what = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            panic!("{}: {what}", file.display());
        }
    }
    files.len()
}
