//! Load-path benchmarks (divan): reading and decoding a tensor file, and comparing a loaded
//! expected output with a result, at a small, a medium and a large size, so that regressions in
//! the part of `run` that is not the kernels show in `cargo bench`.
//!
//!     cargo bench --bench load              # all
//!     cargo bench --bench load -- decode    # a subset
//!
//! The files are written once into a temporary directory; the page cache holds them after the
//! first iteration, so these time the copy out of the page cache and the decoding, not the disk.

use divan::{black_box, Bencher};
use onnx_idx_check::compare::{compare, Tolerance};
use onnx_idx_check::load::load_tensor_file;
use onnx_idx_check::load::save::encode_tensor;
use onnx_idx_check::tensor::{DType, Tensor};
use std::path::PathBuf;
use std::sync::OnceLock;

/// The binary's memory policy, so that loads are timed as `run` does them.
#[global_allocator]
static ALLOC: onnx_idx_check::kernels::alloc::HugePageAlloc =
    onnx_idx_check::kernels::alloc::HugePageAlloc;

fn main() {
    onnx_idx_check::kernels::alloc::keep_freed_memory();
    divan::main();
}

/// Elements of float32: 256 KiB, 16 MiB and 256 MiB tensors.
const SIZES: [usize; 3] = [1 << 16, 1 << 22, 1 << 26];

fn floats(n: usize) -> Tensor {
    Tensor::from_elems(
        DType::Float,
        vec![n],
        (0..n).map(|i| (i as f32 * 0.25).to_bits()).collect(),
    )
    .unwrap()
}

/// A directory holding `raw_N.pb` (raw_data, as numpy_helper writes them) and `typed_N.pb`
/// (float_data) for every size, written once.
fn files() -> &'static PathBuf {
    static DIR: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    &DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_path_buf();
        for n in SIZES {
            let t = floats(n);
            std::fs::write(path.join(format!("raw_{n}.pb")), encode_tensor(&t, "x")).unwrap();
            let typed = onnx_idx_check::pb::TensorProto {
                name: "x".into(),
                dims: vec![n as i64],
                data_type: 1,
                float_data: t.to_vec::<f32>().unwrap(),
                ..Default::default()
            };
            std::fs::write(
                path.join(format!("typed_{n}.pb")),
                prost::Message::encode_to_vec(&typed),
            )
            .unwrap();
        }
        (dir, path)
    })
    .1
}

/// Reading and decoding a `raw_data` file: the form of nearly every large test file.
#[divan::bench(args = SIZES)]
fn decode_raw(b: Bencher, n: usize) {
    let path = files().join(format!("raw_{n}.pb"));
    b.counter(divan::counter::BytesCount::new(n * 4))
        .bench(|| black_box(load_tensor_file(&path, "raw.pb", usize::MAX).unwrap()));
}

/// Reading and decoding a `float_data` file (packed repeated floats).
#[divan::bench(args = SIZES)]
fn decode_typed(b: Bencher, n: usize) {
    let path = files().join(format!("typed_{n}.pb"));
    b.counter(divan::counter::BytesCount::new(n * 4))
        .bench(|| black_box(load_tensor_file(&path, "typed.pb", usize::MAX).unwrap()));
}

/// Comparing an expected output as loaded (read in place from its file) with an equal result:
/// the common case of a passing data set.
#[divan::bench(args = SIZES)]
fn compare_equal(b: Bencher, n: usize) {
    let (_, expected) =
        load_tensor_file(&files().join(format!("raw_{n}.pb")), "x", usize::MAX).unwrap();
    let actual = floats(n);
    let tol = Tolerance::default();
    b.counter(divan::counter::BytesCount::new(n * 4))
        .bench(|| black_box(compare(&expected, &actual, false, &tol)));
}

/// Comparing with a result that differs in every 1000th element: every element is visited.
#[divan::bench(args = SIZES)]
fn compare_differing(b: Bencher, n: usize) {
    let (_, expected) =
        load_tensor_file(&files().join(format!("raw_{n}.pb")), "x", usize::MAX).unwrap();
    let words: Vec<u32> = (0..n)
        .map(|i| {
            let v = i as f32 * 0.25;
            if i % 1000 == 7 { v + 1.0 } else { v }.to_bits()
        })
        .collect();
    let actual = Tensor::from_elems(DType::Float, vec![n], words).unwrap();
    let tol = Tolerance::default();
    b.counter(divan::counter::BytesCount::new(n * 4))
        .bench(|| black_box(compare(&expected, &actual, false, &tol)));
}
