//! Target `case_pipeline`: any bytes as a whole case directory, run the way `run` runs it.
//!
//! The bytes are a small container ([`unpack`]): a flags byte, then records of a tag (`m` for
//! `model.onnx`, `i` for the next `input_K.pb`, `o` for the next `output_K.pb`), a 4-byte
//! little-endian length and that many bytes. [`pack`] writes the same container, so seeds come
//! from real cases (`cargo run -p onnx-idx-check-fuzz --example seed`). The files are written
//! into a scratch directory, discovered and run by `runner::run_case`, which does not catch
//! panics: a panic anywhere in loading, planning, evaluation, comparison or diagnosis reaches
//! libFuzzer. A verdict other than passed must carry a reason.

use crate::MAX_TENSOR_BYTES;
use onnx_idx_check::compare::{Mode, Tolerance};
use onnx_idx_check::discover::discover;
use onnx_idx_check::runner::{run_case, RunOptions};
use onnx_idx_check::verdict::Status;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The files of one case, as the container holds them.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct CaseFiles {
    /// Bit 0: record digests; bit 1: record coverage traits; bits 2-3: 1 compares exactly, 2
    /// tolerantly.
    pub flags: u8,
    /// `model.onnx`; absent when no `m` record is present.
    pub model: Option<Vec<u8>>,
    /// `test_data_set_0/input_K.pb`, in order.
    pub inputs: Vec<Vec<u8>>,
    /// `test_data_set_0/output_K.pb`, in order.
    pub outputs: Vec<Vec<u8>>,
}

/// Splits the container; a truncated last record keeps the bytes that are there.
pub fn unpack(bytes: &[u8]) -> CaseFiles {
    let mut files = CaseFiles::default();
    let Some((&flags, mut rest)) = bytes.split_first() else {
        return files;
    };
    files.flags = flags;
    while let Some((&tag, after)) = rest.split_first() {
        let (len, after) = match after.split_first_chunk::<4>() {
            Some((len, after)) => (u32::from_le_bytes(*len), after),
            None => (0, &[][..]),
        };
        let len = usize::try_from(len).unwrap_or(usize::MAX).min(after.len());
        let (body, after) = after.split_at(len);
        match tag {
            b'm' => files.model = Some(body.to_vec()),
            b'i' => files.inputs.push(body.to_vec()),
            b'o' => files.outputs.push(body.to_vec()),
            _ => {}
        }
        rest = after;
    }
    files
}

/// Writes the container [`unpack`] reads.
pub fn pack(files: &CaseFiles) -> Vec<u8> {
    let mut out = vec![files.flags];
    let mut record = |tag: u8, body: &[u8]| {
        out.push(tag);
        let len = u32::try_from(body.len()).expect("a seed file under 4 GiB");
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(body);
    };
    if let Some(m) = &files.model {
        record(b'm', m);
    }
    for i in &files.inputs {
        record(b'i', i);
    }
    for o in &files.outputs {
        record(b'o', o);
    }
    out
}

/// Reads a case directory's model and first data set into a container (for seeds).
pub fn read_case(dir: &Path) -> std::io::Result<CaseFiles> {
    let ds = dir.join("test_data_set_0");
    let numbered = |prefix: &str| -> std::io::Result<Vec<Vec<u8>>> {
        let mut v = Vec::new();
        while let Ok(bytes) = std::fs::read(ds.join(format!("{prefix}_{}.pb", v.len()))) {
            v.push(bytes);
        }
        Ok(v)
    };
    Ok(CaseFiles {
        flags: 0,
        model: Some(std::fs::read(dir.join("model.onnx"))?),
        inputs: numbered("input")?,
        outputs: numbered("output")?,
    })
}

/// Removes this process's scratch directory: for the replay tests, whose process would
/// otherwise leave it in the temporary directory. Checks after it fail.
pub fn remove_scratch() {
    let _ = std::fs::remove_dir_all(scratch());
}

/// The scratch case directory of this process, emptied before each input.
fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        std::env::temp_dir().join(format!("onnx-idx-check-fuzz-case-{}", std::process::id()))
    })
}

/// Writes the case, runs it, and checks that the verdict is complete.
pub fn check(bytes: &[u8]) {
    let files = unpack(bytes);
    let dir = scratch().join("case");
    let _ = std::fs::remove_dir_all(&dir);
    let ds = dir.join("test_data_set_0");
    std::fs::create_dir_all(&ds).expect("create the scratch case");
    if let Some(model) = &files.model {
        std::fs::write(dir.join("model.onnx"), model).expect("write model.onnx");
    }
    for (k, body) in files.inputs.iter().enumerate() {
        std::fs::write(ds.join(format!("input_{k}.pb")), body).expect("write an input");
    }
    for (k, body) in files.outputs.iter().enumerate() {
        std::fs::write(ds.join(format!("output_{k}.pb")), body).expect("write an output");
    }
    let found = discover(std::slice::from_ref(&dir)).expect("discover the scratch case");
    let opts = RunOptions {
        max_tensor_bytes: MAX_TENSOR_BYTES,
        digests: files.flags & 1 != 0,
        // Bit 16 records the traits of every data set, bit 2 those of passing ones.
        traits: if files.flags & 16 != 0 {
            onnx_idx_check::runner::Traits::Every
        } else if files.flags & 2 != 0 {
            onnx_idx_check::runner::Traits::Passing
        } else {
            onnx_idx_check::runner::Traits::Off
        },
        tolerance: Tolerance {
            mode: match files.flags >> 2 & 3 {
                1 => Mode::Exact,
                2 => Mode::Tolerant,
                _ => Mode::Default,
            },
            ..Tolerance::default()
        },
        ..RunOptions::default()
    };
    for case in &found.cases {
        let result = run_case(case, &opts);
        if result.status != Status::Passed {
            assert!(
                result.reason.as_deref().is_some_and(|r| !r.is_empty()),
                "a {:?} verdict without a reason",
                result.status
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_and_unpack_are_inverse() {
        let files = CaseFiles {
            flags: 5,
            model: Some(b"model".to_vec()),
            inputs: vec![b"a".to_vec(), Vec::new()],
            outputs: vec![b"out".to_vec()],
        };
        assert_eq!(unpack(&pack(&files)), files);
    }

    #[test]
    fn a_truncated_record_keeps_its_bytes() {
        let files = unpack(&[0, b'i', 9, 0, 0, 0, 1, 2]);
        assert_eq!(files.inputs, vec![vec![1, 2]]);
        assert_eq!(unpack(&[]), CaseFiles::default());
    }
}
