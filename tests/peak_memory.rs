//! Files that claim a terabyte must be refused without the memory they claim (D12), a field
//! the decoder skips must be skipped unread, and a runtime's `.npy` read in place: this test
//! loads such cases through the library and reads the process's own peak resident set size
//! (`VmHWM` in /proc/self/status) before and after. It is a test binary of its own with a single
//! test, so nothing else runs in the process while it measures. (Measuring a child process from
//! the multi-threaded test harness does not work: until it execs, a spawned child shares the
//! harness's pages, and the kernel's peak for the child includes them.)

#![cfg(target_os = "linux")]

mod common;

use onnx_idx_check::discover::discover;
use onnx_idx_check::pb::{tensor_proto::DataLocation, StringStringEntryProto, TensorProto};
use onnx_idx_check::runner::{run_case, RunOptions};
use onnx_idx_check::verdict::Status;
use prost::Message;
use std::path::{Path, PathBuf};

/// 2^38 floats: 1 TiB.
const TERABYTE_OF_FLOATS: i64 = 1 << 38;

/// Peak resident set size of this process, in KiB.
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .expect("VmHWM in /proc/self/status");
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A copy of the external-data control case (input_0.pb holds two floats in data.bin) with
/// input_0.pb changed by `change`.
fn tampered(root: &Path, name: &str, change: impl FnOnce(&mut TensorProto)) -> PathBuf {
    let case = root.join(name);
    common::copy_tree(
        &fixture("passing/external_data_inside_the_directory"),
        &case,
    );
    let file = case.join("test_data_set_0/input_0.pb");
    let mut t = TensorProto::decode(std::fs::read(&file).unwrap().as_slice()).unwrap();
    change(&mut t);
    std::fs::write(&file, t.encode_to_vec()).unwrap();
    case
}

/// Runs the case with `opts`; returns its status and reason.
fn run(dir: &Path, opts: &RunOptions) -> (Status, String) {
    let found = discover(&[dir.to_path_buf()]).unwrap();
    assert_eq!(found.cases.len(), 1);
    let r = run_case(&found.cases[0], opts);
    (r.status, r.reason.unwrap_or_default())
}

#[test]
fn terabyte_claims_are_refused_without_raising_the_peak_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let raw = tampered(tmp.path(), "raw", |t| {
        t.data_location = DataLocation::Default as i32;
        t.external_data.clear();
        t.raw_data = vec![0, 0, 0x80, 0x3F, 0, 0, 0, 0x40].into();
        t.dims = vec![TERABYTE_OF_FLOATS];
    });
    let typed = tampered(tmp.path(), "typed", |t| {
        t.data_location = DataLocation::Default as i32;
        t.external_data.clear();
        t.float_data = vec![1.0, 2.0];
        t.dims = vec![TERABYTE_OF_FLOATS];
    });
    let external = tampered(tmp.path(), "external", |t| {
        t.dims = vec![TERABYTE_OF_FLOATS];
        t.external_data = vec![
            StringStringEntryProto {
                key: "location".into(),
                value: "data.bin".into(),
            },
            StringStringEntryProto {
                key: "length".into(),
                value: (TERABYTE_OF_FLOATS * 4).to_string(),
            },
        ];
    });
    // A limit of 2 TiB admits every claim, so only the checks against the bytes present (and,
    // for the GatherGrad whose output would take a terabyte, the default limit) stand between
    // the claims and the allocator.
    // A field the decoder does not know, claiming 180 MB in a sparse file of a few KiB, under a
    // 20 MiB limit: stepped over unread, so the case passes on its tensor.
    let unknown = tampered(tmp.path(), "unknown", |t| {
        t.data_location = DataLocation::Default as i32;
        t.external_data.clear();
        t.raw_data = vec![0, 0, 0x80, 0x3F, 0, 0, 0, 0x40].into();
    });
    let file = unknown.join("test_data_set_0/input_0.pb");
    let claim: u64 = 180_000_000;
    let mut bytes = std::fs::read(&file).unwrap();
    // Field 1000, wire type 2 (key 0xc2 0x3e), and the claim as a varint.
    bytes.extend_from_slice(&[0xc2, 0x3e]);
    let mut n = claim;
    while n >= 0x80 {
        bytes.push((n as u8) | 0x80);
        n >>= 7;
    }
    bytes.push(n as u8);
    let sparse_len = bytes.len() as u64 + claim;
    std::fs::write(&file, bytes).unwrap();
    let f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
    f.set_len(sparse_len).unwrap();
    let admitting = RunOptions {
        max_tensor_bytes: 2 << 40,
        ..RunOptions::default()
    };
    let before = peak_rss_kib();
    let results = [
        run(&raw, &admitting),
        run(&typed, &admitting),
        run(&external, &admitting),
        run(
            &fixture("hostile/gather_grad_output_of_a_terabyte"),
            &RunOptions::default(),
        ),
    ];
    let passed = run(
        &unknown,
        &RunOptions {
            max_tensor_bytes: 20 << 20,
            ..RunOptions::default()
        },
    );
    let after = peak_rss_kib();
    assert_eq!(passed.0, Status::Passed, "{}", passed.1);
    for (status, reason) in &results {
        assert_eq!(*status, Status::Errored, "{reason}");
    }
    assert!(
        results[0].1.contains("raw_data holds 8 bytes"),
        "{}",
        results[0].1
    );
    assert!(
        results[1].1.contains("float_data holds 2 entries"),
        "{}",
        results[1].1
    );
    assert!(
        results[2].1.contains("exceeds the file size 8"),
        "{}",
        results[2].1
    );
    assert!(
        results[3].1.contains("1099511627776 bytes"),
        "{}",
        results[3].1
    );
    assert!(
        after.saturating_sub(before) < 16 * 1024,
        "the peak RSS grew from {before} KiB to {after} KiB"
    );
    // The measurement sees memory that is really used: 64 MiB touched raise the peak.
    let touched = std::hint::black_box(vec![1u8; 64 << 20]);
    let with_touched = peak_rss_kib();
    assert!(with_touched >= after + 60 * 1024);
    drop(touched);
    let after = with_touched;

    // A runtime's 128 MiB .npy output (sparse) where 8 bytes are expected: read once and used
    // in place, so the peak grows by about the file, not by three times it (a copy to make it
    // little-endian and another into the tensor).
    let case = tampered(tmp.path(), "npy", |_| {});
    let actual = tmp.path().join("actual/npy/test_data_set_0");
    std::fs::create_dir_all(&actual).unwrap();
    let floats: u64 = 32 << 20;
    let mut header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({floats},), }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut npy = b"\x93NUMPY\x01\x00".to_vec();
    npy.extend_from_slice(&(header.len() as u16).to_le_bytes());
    npy.extend_from_slice(header.as_bytes());
    let npy_len = npy.len() as u64 + floats * 4;
    let file = actual.join("output_0.npy");
    std::fs::write(&file, npy).unwrap();
    let f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
    f.set_len(npy_len).unwrap();
    let (status, reason) = run(
        &case,
        &RunOptions {
            actual: Some(tmp.path().join("actual")),
            ..RunOptions::default()
        },
    );
    let peak = peak_rss_kib();
    assert_eq!(status, Status::Failed, "{reason}");
    assert!(reason.contains("shape differs"), "{reason}");
    let file_kib = npy_len / 1024;
    assert!(
        peak.saturating_sub(after) < file_kib * 3 / 2,
        "the peak RSS grew from {after} KiB to {peak} KiB for a {file_kib} KiB .npy"
    );
}
