//! Kernel benchmarks (divan): every indexing kernel at a small, a medium and a large size, so
//! regressions show in `cargo bench`. Each iteration evaluates one node, output allocation
//! included, as the `bench` subcommand does.
//!
//!     cargo bench --bench kernels            # all
//!     cargo bench --bench kernels -- gather  # a subset

use divan::{black_box, Bencher};
use onnx_idx_check::load::attrs::attrs_of;
use onnx_idx_check::ops::{invoke, resolve, Invocation, Resolution};
use onnx_idx_check::pb::{attribute_proto::AttributeType, AttributeProto, NodeProto};
use onnx_idx_check::tensor::{DType, Tensor};

/// The binary's memory policy, so that kernels are timed as `bench` times them.
#[global_allocator]
static ALLOC: onnx_idx_check::kernels::alloc::HugePageAlloc =
    onnx_idx_check::kernels::alloc::HugePageAlloc;

fn main() {
    onnx_idx_check::kernels::alloc::keep_freed_memory();
    divan::main();
}

/// Small (fits in L1), medium (L2/L3) and large (DRAM) problem sizes: rows of data.
const SIZES: [usize; 3] = [64, 4096, 65536];

fn f32s(shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    Tensor::from_elems(
        DType::Float,
        shape.to_vec(),
        (0..n).map(|i| (i as f32).to_bits()).collect(),
    )
    .unwrap()
}

/// Pseudo-random indices in `[0, bound)` (a fixed LCG, so runs compare).
fn indices(shape: &[usize], bound: usize) -> Tensor {
    let n: usize = shape.iter().product();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let v: Vec<u64> = (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % bound as u64
        })
        .collect();
    Tensor::from_elems(DType::Int64, shape.to_vec(), v).unwrap()
}

fn attr_int(name: &str, i: i64) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: AttributeType::Int as i32,
        i: Some(i),
        ..Default::default()
    }
}

fn attr_str(name: &str, s: &str) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: AttributeType::String as i32,
        s: s.as_bytes().to_vec(),
        ..Default::default()
    }
}

fn run(b: Bencher, op: &str, opset: i64, attrs: Vec<AttributeProto>, inputs: Vec<Tensor>) {
    let Resolution::Found(def, version) = resolve("", op, opset) else {
        panic!("{op}")
    };
    let node = NodeProto {
        op_type: op.into(),
        input: (0..inputs.len()).map(|i| i.to_string()).collect(),
        output: vec!["y".into()],
        attribute: attrs,
        ..Default::default()
    };
    b.bench_local(|| {
        let inv = Invocation {
            def,
            version,
            attrs: attrs_of(&node, std::path::Path::new("."), usize::MAX),
            outputs: node.output.len(),
            inputs: inputs.iter().map(Some).collect(),
            max_bytes: usize::MAX,
        };
        black_box(invoke(&inv).unwrap())
    });
}

/// Embedding lookup: rows of 256 floats.
#[divan::bench(args = SIZES)]
fn gather_rows(b: Bencher, rows: usize) {
    run(
        b,
        "Gather",
        13,
        vec![],
        vec![f32s(&[rows, 256]), indices(&[rows / 2], rows)],
    );
}

/// Gather on the last axis: single elements.
#[divan::bench(args = SIZES)]
fn gather_last_axis(b: Bencher, rows: usize) {
    run(
        b,
        "Gather",
        13,
        vec![attr_int("axis", 1)],
        vec![f32s(&[rows, 256]), indices(&[128], 256)],
    );
}

#[divan::bench(args = SIZES)]
fn gather_elements_axis1(b: Bencher, rows: usize) {
    run(
        b,
        "GatherElements",
        13,
        vec![attr_int("axis", 1)],
        vec![f32s(&[rows, 256]), indices(&[rows, 256], 256)],
    );
}

#[divan::bench(args = SIZES)]
fn gather_elements_axis0(b: Bencher, rows: usize) {
    run(
        b,
        "GatherElements",
        13,
        vec![],
        vec![f32s(&[rows, 256]), indices(&[rows, 256], rows)],
    );
}

#[divan::bench(args = SIZES)]
fn gather_nd(b: Bencher, rows: usize) {
    run(
        b,
        "GatherND",
        13,
        vec![],
        vec![f32s(&[rows, 16, 64]), indices(&[rows, 2], 16)],
    );
}

#[divan::bench(args = SIZES)]
fn scatter_elements_none(b: Bencher, rows: usize) {
    let inputs = vec![
        f32s(&[rows, 256]),
        indices(&[rows, 256], 256),
        f32s(&[rows, 256]),
    ];
    run(b, "ScatterElements", 18, vec![attr_int("axis", 1)], inputs);
}

#[divan::bench(args = SIZES)]
fn scatter_elements_add_1d(b: Bencher, rows: usize) {
    let inputs = vec![
        f32s(&[rows * 16]),
        indices(&[rows * 256], rows * 16),
        f32s(&[rows * 256]),
    ];
    run(
        b,
        "ScatterElements",
        18,
        vec![attr_str("reduction", "add")],
        inputs,
    );
}

#[divan::bench(args = SIZES)]
fn scatter_nd_add(b: Bencher, rows: usize) {
    let inputs = vec![
        f32s(&[rows, 64]),
        indices(&[rows, 1], rows),
        f32s(&[rows, 64]),
    ];
    run(
        b,
        "ScatterND",
        18,
        vec![attr_str("reduction", "add")],
        inputs,
    );
}
