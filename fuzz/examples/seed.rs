//! Writes the seed corpora of the `tensor_proto`, `case_pipeline` and `ir_reader` targets from the
//! cases in `testdata/` and `tests/fixtures/`: every `.pb` file as a tensor seed, every case
//! directory (model and first data set) as a pipeline seed, every OpenVINO IR (`model.xml`, the
//! separator, `model.bin`) as an IR seed. Run from anywhere:
//! `cargo run -p onnx-idx-check-fuzz --example seed`.

use onnx_idx_check_fuzz::pipeline::{pack, read_case};
use onnx_idx_check_fuzz::replay::fuzz_dir;
use std::path::Path;

/// `a/b/c` -> `a__b__c`, a flat and stable file name.
fn flat_name(rel: &Path) -> String {
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("__")
}

fn main() -> std::io::Result<()> {
    let root = fuzz_dir()
        .parent()
        .expect("the fuzz crate sits in the repository");
    let tensors = fuzz_dir().join("corpus/tensor_proto");
    let cases = fuzz_dir().join("corpus/case_pipeline");
    let irs = fuzz_dir().join("corpus/ir_reader");
    std::fs::create_dir_all(&tensors)?;
    std::fs::create_dir_all(&cases)?;
    std::fs::create_dir_all(&irs)?;
    let (mut n_tensors, mut n_cases, mut n_irs) = (0, 0, 0);
    for top in ["testdata", "tests/fixtures"] {
        let mut stack = vec![root.join(top)];
        while let Some(dir) = stack.pop() {
            let mut entries: Vec<_> = std::fs::read_dir(&dir)?.filter_map(Result::ok).collect();
            entries.sort_by_key(|e| e.file_name());
            for e in entries {
                let path = e.path();
                let kind = e.file_type()?;
                let rel = path.strip_prefix(root).expect("under the root");
                if kind.is_dir() {
                    stack.push(path.clone());
                } else if kind.is_file() && path.extension().is_some_and(|x| x == "pb") {
                    std::fs::copy(&path, tensors.join(flat_name(rel)))?;
                    n_tensors += 1;
                } else if kind.is_file() && e.file_name() == "model.onnx" {
                    let case = path.parent().expect("a case directory");
                    let name = flat_name(case.strip_prefix(root).expect("under the root"));
                    std::fs::write(cases.join(name), pack(&read_case(case)?))?;
                    n_cases += 1;
                } else if kind.is_file() && e.file_name() == "model.xml" {
                    let case = path.parent().expect("a case directory");
                    let name = flat_name(case.strip_prefix(root).expect("under the root"));
                    let mut seed = std::fs::read(&path)?;
                    if let Ok(bin) = std::fs::read(case.join("model.bin")) {
                        seed.extend_from_slice(onnx_idx_check_fuzz::ir::BIN_SEPARATOR);
                        seed.extend_from_slice(&bin);
                    }
                    std::fs::write(irs.join(name), seed)?;
                    n_irs += 1;
                }
            }
        }
    }
    println!("wrote {n_tensors} tensor seeds, {n_cases} case seeds and {n_irs} IR seeds");
    Ok(())
}
