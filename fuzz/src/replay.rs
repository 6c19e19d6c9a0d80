//! Replays a target's inputs without libFuzzer: its seeds, the inputs of every fixed finding
//! (`fuzz/regressions/<target>/`) and whatever local corpus this machine holds.

use std::path::{Path, PathBuf};

/// The fuzz crate's directory.
pub fn fuzz_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The inputs of `target` on disk, sorted: its local corpus (`fuzz/corpus/<target>/`, not in
/// git: seeds plus what campaigns on this machine kept) and the inputs of every fixed finding
/// (`fuzz/regressions/<target>/`, in git).
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

/// How many inputs a replay ran, by where they came from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Replayed {
    /// The target's seeds, built in memory ([`crate::seeds`]).
    pub seeds: usize,
    /// Files of `fuzz/corpus/` and `fuzz/regressions/`.
    pub files: usize,
}

/// Runs `check` on every seed of `target` and every input of it on disk; a panic names the seed
/// or the file.
pub fn replay(target: &str, check: fn(&[u8])) -> Replayed {
    let run = |name: &dyn std::fmt::Display, bytes: &[u8]| {
        if let Err(panic) = std::panic::catch_unwind(|| check(bytes)) {
            let what = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            panic!("{name}: {what}");
        }
    };
    let seeds = crate::seeds::seeds(target).unwrap_or_else(|e| panic!("{target} seeds: {e}"));
    for (name, bytes) in &seeds {
        run(&format_args!("{target} seed {name}"), bytes);
    }
    let files = inputs(target);
    for file in &files {
        let bytes = std::fs::read(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        run(&file.display(), &bytes);
    }
    Replayed {
        seeds: seeds.len(),
        files: files.len(),
    }
}
