//! Replays every committed fuzz input (corpora and regressions) through its target's check, so
//! that `cargo test` catches a regression of any past finding without running libFuzzer.

use onnx_idx_check_fuzz::{ir, kernels, pipeline, replay::replay, tensor};

#[test]
fn tensor_proto_inputs_replay() {
    let replayed = replay("tensor_proto", tensor::check);
    tensor::remove_scratch();
    assert!(replayed > 0, "no tensor_proto corpus");
}

#[test]
fn case_pipeline_inputs_replay() {
    let replayed = replay("case_pipeline", pipeline::check);
    pipeline::remove_scratch();
    assert!(replayed > 0, "no case_pipeline corpus");
}

#[test]
fn gather_kernels_inputs_replay() {
    assert!(
        replay("gather_kernels", kernels::check_gathers) > 0,
        "no gather_kernels corpus"
    );
}

#[test]
fn scatter_kernels_inputs_replay() {
    assert!(
        replay("scatter_kernels", kernels::check_scatters) > 0,
        "no scatter_kernels corpus"
    );
}

#[test]
fn large_kernels_inputs_replay() {
    assert!(
        replay("large_kernels", onnx_idx_check_fuzz::large::check) > 0,
        "no large_kernels corpus"
    );
}

#[test]
fn ir_reader_inputs_replay() {
    let replayed = replay("ir_reader", ir::check);
    ir::remove_scratch();
    assert!(replayed > 0, "no ir_reader corpus");
}
