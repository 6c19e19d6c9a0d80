//! Replays every target's seeds, the input of every fixed finding (`fuzz/regressions/`) and any
//! local corpus through its target's check, so that `cargo test` catches a regression of a past
//! finding without running libFuzzer.

use onnx_idx_check_fuzz::replay::{replay, Replayed};
use onnx_idx_check_fuzz::{ir, kernels, pipeline, tensor};

/// Every target has seeds, and a target with regressions must have replayed them.
fn assert_ran(target: &str, replayed: Replayed) {
    assert!(replayed.seeds > 0, "{target}: no seeds replayed");
    let regressions = onnx_idx_check_fuzz::replay::fuzz_dir()
        .join("regressions")
        .join(target);
    let committed = std::fs::read_dir(regressions).map_or(0, |d| d.count());
    assert!(
        replayed.files >= committed,
        "{target}: {committed} regressions, {} files replayed",
        replayed.files
    );
}

#[test]
fn tensor_proto_inputs_replay() {
    let replayed = replay("tensor_proto", tensor::check);
    tensor::remove_scratch();
    assert_ran("tensor_proto", replayed);
}

#[test]
fn case_pipeline_inputs_replay() {
    let replayed = replay("case_pipeline", pipeline::check);
    pipeline::remove_scratch();
    assert_ran("case_pipeline", replayed);
}

#[test]
fn gather_kernels_inputs_replay() {
    assert_ran(
        "gather_kernels",
        replay("gather_kernels", kernels::check_gathers),
    );
}

#[test]
fn scatter_kernels_inputs_replay() {
    assert_ran(
        "scatter_kernels",
        replay("scatter_kernels", kernels::check_scatters),
    );
}

#[test]
fn large_kernels_inputs_replay() {
    assert_ran(
        "large_kernels",
        replay("large_kernels", onnx_idx_check_fuzz::large::check),
    );
}

#[test]
fn ir_reader_inputs_replay() {
    let replayed = replay("ir_reader", ir::check);
    ir::remove_scratch();
    assert_ran("ir_reader", replayed);
}
