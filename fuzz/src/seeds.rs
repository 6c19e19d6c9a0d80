//! The seed corpora of the six targets, rebuilt on demand rather than kept in git: the campaigns'
//! grown corpora stay on the machine that grew them (`fuzz/corpus/` is ignored), and what a past
//! finding needs to stay fixed is in `fuzz/regressions/`.
//!
//! `tensor_proto`, `case_pipeline` and `ir_reader` start from the repository's own cases
//! (`testdata/` and `tests/fixtures/`): every `.pb` file, every case directory (model and first
//! data set) and every OpenVINO IR. The kernel targets decode their bytes with `arbitrary`, so any
//! bytes are a case: their seeds are byte strings from a fixed generator, the same on every
//! machine. `cargo run -p onnx-idx-check-fuzz --example seed` writes them to `fuzz/corpus/`, and
//! `cargo test -p onnx-idx-check-fuzz` replays them from memory.

use crate::pipeline::{pack, read_case};
use crate::replay::fuzz_dir;
use std::path::Path;

/// Every target, by the name of its `fuzz_targets/*.rs` and its corpus directory.
pub const TARGETS: [&str; 6] = [
    "tensor_proto",
    "case_pipeline",
    "ir_reader",
    "gather_kernels",
    "scatter_kernels",
    "large_kernels",
];

/// One seed: a stable file name and its bytes.
pub type Seed = (String, Vec<u8>);

/// The seeds of `target`, in a fixed order; none for a name that is not a target.
pub fn seeds(target: &str) -> std::io::Result<Vec<Seed>> {
    match target {
        "tensor_proto" | "case_pipeline" | "ir_reader" => from_cases(target),
        // The large target's cases are megabytes each, built from the seed: a few suffice.
        "gather_kernels" | "scatter_kernels" => Ok(generated(target, 256)),
        "large_kernels" => Ok(generated(target, 8)),
        _ => Ok(Vec::new()),
    }
}

/// `count` byte strings of 8 to 1,031 bytes from a splitmix64 generator seeded by the target's
/// name, so that the two kernel targets do not share seeds.
fn generated(target: &str, count: usize) -> Vec<Seed> {
    let mut state = target.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let mut next = move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    (0..count)
        .map(|i| {
            let len = 8 + (next() % 1024) as usize;
            let bytes = (0..len).map(|_| next() as u8).collect();
            (format!("seed_{i:04}"), bytes)
        })
        .collect()
}

/// `a/b/c` -> `a__b__c`, a flat and stable file name.
fn flat_name(rel: &Path) -> String {
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("__")
}

/// The seeds of a target fed by the repository's cases.
fn from_cases(target: &str) -> std::io::Result<Vec<Seed>> {
    let root = fuzz_dir()
        .parent()
        .expect("the fuzz crate sits in the repository");
    let mut seeds = Vec::new();
    for top in ["testdata", "tests/fixtures"] {
        let mut stack = vec![root.join(top)];
        while let Some(dir) = stack.pop() {
            let mut entries: Vec<_> = std::fs::read_dir(&dir)?.filter_map(Result::ok).collect();
            entries.sort_by_key(|e| e.file_name());
            for e in entries {
                let path = e.path();
                let kind = e.file_type()?;
                let rel = path.strip_prefix(root).expect("under the root");
                let case = || path.parent().expect("a case directory");
                let case_name = || flat_name(case().strip_prefix(root).expect("under the root"));
                if kind.is_dir() {
                    stack.push(path.clone());
                } else if !kind.is_file() {
                    continue;
                } else if target == "tensor_proto" && path.extension().is_some_and(|x| x == "pb") {
                    seeds.push((flat_name(rel), std::fs::read(&path)?));
                } else if target == "case_pipeline" && e.file_name() == "model.onnx" {
                    seeds.push((case_name(), pack(&read_case(case())?)));
                } else if target == "ir_reader" && e.file_name() == "model.xml" {
                    let mut seed = std::fs::read(&path)?;
                    if let Ok(bin) = std::fs::read(case().join("model.bin")) {
                        seed.extend_from_slice(crate::ir::BIN_SEPARATOR);
                        seed.extend_from_slice(&bin);
                    }
                    seeds.push((case_name(), seed));
                }
            }
        }
    }
    seeds.sort();
    Ok(seeds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_target_has_seeds_and_they_are_the_same_each_time() {
        for target in TARGETS {
            let first = seeds(target).unwrap();
            assert!(!first.is_empty(), "{target}: no seeds");
            assert_eq!(first, seeds(target).unwrap(), "{target}: seeds differ");
        }
        assert_ne!(
            seeds("gather_kernels").unwrap()[0].1,
            seeds("scatter_kernels").unwrap()[0].1
        );
    }
}
