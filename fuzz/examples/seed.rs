//! Writes the seed corpora of the six targets into `fuzz/corpus/<target>/` (see
//! `onnx_idx_check_fuzz::seeds`), where `cargo fuzz run` starts from them. Run from anywhere:
//! `cargo run -p onnx-idx-check-fuzz --example seed`. Files already there are kept: a grown
//! corpus only gains the seeds it lacks.

use onnx_idx_check_fuzz::replay::fuzz_dir;
use onnx_idx_check_fuzz::seeds::{seeds, TARGETS};

fn main() -> std::io::Result<()> {
    for target in TARGETS {
        let dir = fuzz_dir().join("corpus").join(target);
        std::fs::create_dir_all(&dir)?;
        let seeds = seeds(target)?;
        for (name, bytes) in &seeds {
            std::fs::write(dir.join(name), bytes)?;
        }
        println!("{target}: {} seeds in {}", seeds.len(), dir.display());
    }
    Ok(())
}
