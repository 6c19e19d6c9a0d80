//! Every fixture of `tests/fixtures/` run alone: its verdict, the key words of its reason and
//! the exit status; then the details of the failed ones, and the whole tree in one run.

use crate::support::{
    case, cases, copy_case, count, fixture, fixture_names, fixtures, rewrite_model, run_json,
    verdict_of_group, write_tensor, ONLY_GROUPS,
};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::Path;

/// Runs one fixture alone with `--format json` and checks the verdict, that the reason contains
/// every key word (a passed case has none), and the exit status. Returns the case's report.
fn alone(name: &str, status: &str, words: &[&str]) -> Value {
    assert_eq!(
        status,
        verdict_of_group(name),
        "{name}: the test and the fixture's group disagree"
    );
    let (code, report) = run_json(&fixture(name), &[]);
    assert_eq!(count(&report, "total"), 1, "{report:#}");
    let c = cases(&report)[0].clone();
    assert_eq!(c["status"], status, "{name}: {c:#}");
    match c["reason"].as_str() {
        None => assert!(words.is_empty(), "{name}: no reason, expected {words:?}"),
        Some(reason) => {
            assert_ne!(
                status, "passed",
                "{name}: a passed case with a reason: {reason}"
            );
            for w in words {
                assert!(reason.contains(w), "{name}: reason lacks {w:?}: {reason}");
            }
        }
    }
    let want = if matches!(status, "failed" | "errored") {
        1
    } else {
        0
    };
    assert_eq!(code, want, "{name}: exit status");
    c
}

macro_rules! alone_tests {
    ($($test:ident: $name:literal => $status:literal $words:expr;)*) => {
        $(
            #[test]
            fn $test() {
                alone($name, $status, &$words);
            }
        )*

        /// Every fixture with a test of its own above.
        const TESTED: &[&str] = &[$($name),*];
    };
}

alone_tests! {
    // passing/: controls.
    a_reduction_off_by_less_than_the_tolerance_passes:
        "passing/reduction_within_tolerance" => "passed" [];
    nan_payloads_do_not_matter:
        "passing/nan_payloads_are_equal" => "passed" [];
    external_data_inside_the_directory_is_read:
        "passing/external_data_inside_the_directory" => "passed" [];
    openvino_gather8_zero_fills_out_of_range_indices:
        "passing/openvino_gather8_zero_fills" => "passed" [];
    the_default_domain_may_be_imported_as_ai_onnx:
        "passing/default_domain_imported_as_ai_onnx" => "passed" [];
    int32_negative_and_repeated_indices_in_typed_storage_pass:
        "passing/gather_int32_negative_indices_typed" => "passed" [];

    // failing/: the expected output is wrong.
    a_changed_element_fails_at_its_index:
        "failing/wrong_value" => "failed"
        ["output 'output'", "1 of 4 elements differ", "first at [1,0]: expected 7.0, got 5.0"];
    a_transposed_shape_fails_naming_both_shapes:
        "failing/wrong_shape" => "failed" ["shape differs: expected [2, 3], got [3, 2]"];
    a_double_expected_output_fails_against_a_float_result:
        "failing/wrong_dtype" => "failed" ["dtype differs: expected double, got float"];
    an_expected_nan_fails_against_a_number:
        "failing/nan_expected" => "failed" ["1 of 2 elements differ", "expected NaN, got 3.0"];
    an_expected_negative_zero_fails_against_positive_zero:
        "failing/negative_zero_expected" => "failed" ["expected -0.0, got 0.0"];
    a_reduction_off_by_more_than_the_tolerance_fails:
        "failing/reduction_beyond_tolerance" => "failed"
        ["tolerance", "first at [0,1]: expected 5.02, got 5.0"];
    a_rank0_result_is_not_a_one_element_vector:
        "failing/rank0_expected_as_rank1" => "failed" ["shape differs: expected [1], got []"];
    a_wrong_gathernd_element_fails_at_its_index:
        "failing/gathernd_wrong_value" => "failed"
        ["output 'output'", "1 of 2 elements differ", "first at [1]: expected 2, got 3"];
    a_scatternd_expecting_the_first_of_two_writes_fails:
        "failing/scatternd_wrong_value" => "failed"
        ["1 of 8 elements differ", "first at [4]: expected 9.0, got 11.0"];
    a_tensor_scatter_missing_its_wrapped_write_fails:
        "failing/tensor_scatter_wrong_value" => "failed"
        ["output 'present_cache'", "2 of 16 elements differ", "first at [1,0,0]: expected 0.0, got 7.0"];
    an_openvino_gather_expecting_clamped_indices_fails:
        "failing/openvino_gather_wrong_value" => "failed"
        ["2 of 3 elements differ", "first at [1]: expected 5, got 0"];
    a_gather_grad_that_overwrites_instead_of_accumulating_fails:
        "failing/gather_grad_wrong_value" => "failed"
        ["output 'dX'", "tolerance", "first at [0]: expected 2.0, got 3.0"];
    a_gather_elements_grad_that_overwrites_instead_of_accumulating_fails:
        "failing/gather_elements_grad_wrong_value" => "failed"
        ["output 'dX'", "tolerance", "first at [0,1]: expected 4.0, got 7.0"];

    // failing/diagnosed_*: the expected output is what a runtime with a known bug produces
    // (diagnosis.rs asserts the class each is diagnosed with).
    an_expected_output_reading_negative_indices_as_zero_fails:
        "failing/diagnosed_negative_not_normalized" => "failed"
        ["2 of 4 elements differ", "first at [0,0]: expected 1.0, got 5.0", "(negative-not-normalized)"];
    an_expected_output_keeping_the_first_of_two_writes_fails:
        "failing/diagnosed_first_write_wins" => "failed"
        ["1 of 3 elements differ", "first at [0,1]: expected 5.0, got 7.0", "(first-write-wins)"];
    an_expected_output_that_overwrites_instead_of_adding_fails:
        "failing/diagnosed_reduction_ignored" => "failed"
        ["2 of 5 elements differ", "tolerance", "first at [0,1]: expected 10.0, got 12.0", "(reduction-ignored)"];
    an_expected_output_gathered_along_axis_0_fails:
        "failing/diagnosed_axis_ignored" => "failed"
        ["3 of 4 elements differ", "first at [0,1]: expected 2.0, got 1.0", "(axis-ignored)"];
    an_expected_output_of_batch_dims_0_fails_on_its_shape:
        "failing/diagnosed_batch_dims_ignored" => "failed"
        ["shape differs: expected [2, 2, 2], got [2, 2]", "(batch-dims-ignored)"];
    an_expected_sum_in_reverse_order_fails:
        "failing/diagnosed_accumulation_order" => "failed"
        ["1 of 1 elements differ", "tolerance", "first at [0]: expected 1.0, got 0.0", "(accumulation-order)"];

    // errored/: spec violations (D2-D6).
    an_out_of_range_gather_index_errors_with_position_value_and_range:
        "errored/gather_index_out_of_range" => "errored"
        ["Gather-13", "indices[1,0] = 4", "out of range [-4, 3]", "axis 1 (size 4)"];
    an_out_of_range_negative_gather_elements_index_errors:
        "errored/gather_elements_index_out_of_range" => "errored"
        ["GatherElements-13", "indices[1,0] = -3", "out of range [-2, 1]", "axis 0 (size 2)"];
    an_out_of_range_scatter_elements_index_errors:
        "errored/scatter_elements_index_out_of_range" => "errored"
        ["ScatterElements-13", "indices[0,1] = 5", "out of range [-5, 4]", "axis 1 (size 5)"];
    a_negative_index_at_gather_1_errors:
        "errored/gather_negative_index_opset1" => "errored"
        ["Gather-1", "indices[0] = -1", "negative", "opset 11"];
    a_negative_index_at_scatter_9_errors:
        "errored/scatter_negative_index_opset10" => "errored"
        ["Scatter-9", "indices[0,0] = -1", "negative", "opset 11"];
    scatter_at_opset_11_errors_as_deprecated:
        "errored/scatter_deprecated_opset11" => "errored" ["Scatter", "deprecated", "opset 11"];
    a_reduction_attribute_at_scatter_elements_13_errors:
        "errored/reduction_attribute_opset13" => "errored"
        ["attribute 'reduction'", "not defined by ScatterElements-13", "version 16"];
    reduction_max_at_opset_16_errors:
        "errored/reduction_max_opset16" => "errored"
        ["reduction 'max'", "not allowed by ScatterElements-16", "version 18"];
    an_unknown_reduction_errors:
        "errored/reduction_sub_opset18" => "errored" ["reduction 'sub'", "not a known reduction"];
    an_axis_out_of_range_errors:
        "errored/axis_out_of_range" => "errored" ["axis 2", "out of range [-2, 1]", "rank 2"];
    gather_elements_with_unequal_ranks_errors:
        "errored/gather_elements_rank_mismatch" => "errored"
        ["indices has rank 1", "data has rank 2"];
    scatter_elements_updates_shaped_unlike_indices_errors:
        "errored/scatter_elements_updates_shape" => "errored"
        ["updates has shape [1, 3]", "indices has shape [1, 2]"];
    bfloat16_at_gather_elements_11_errors:
        "errored/bfloat16_gather_elements_opset11" => "errored"
        ["bfloat16", "not allowed by GatherElements-11", "allowed from version 13"];
    float8_data_at_gather_13_errors:
        "errored/float8_gather_opset13" => "errored" ["float8e4m3fn", "not allowed by Gather-13"];
    int16_indices_error:
        "errored/int16_indices" => "errored" ["input 'indices'", "int16", "not allowed by Gather-13"];
    gather_on_rank0_data_errors:
        "errored/gather_rank0_data" => "errored" ["rank >= 1", "scalar"];
    a_node_in_a_domain_the_model_does_not_import_errors:
        "errored/domain_not_imported" => "errored" ["com.example", "does not import"];
    gathernd_with_int32_indices_errors:
        "errored/gathernd_int32_indices" => "errored"
        ["input 'indices'", "int32", "not allowed by GatherND-13"];
    batch_dims_at_gathernd_11_errors:
        "errored/gathernd_batch_dims_opset11" => "errored"
        ["attribute 'batch_dims'", "not defined by GatherND-11", "version 12"];
    an_out_of_range_gathernd_index_errors:
        "errored/gathernd_index_out_of_range" => "errored"
        ["GatherND-13", "indices[1,0] = 2", "out of range [-2, 1]", "(size 2)"];
    scatternd_updates_of_the_wrong_shape_error:
        "errored/scatternd_updates_shape" => "errored"
        ["ScatterND-13", "updates has shape [3]", "[4]"];
    gathernd_tuples_longer_than_the_rank_left_by_batch_dims_error:
        "errored/gathernd_k_exceeds_rank_minus_batch_dims" => "errored"
        ["GatherND-13", "indices.shape[-1] = 2", "[1, 1]", "minus batch_dims 1"];
    gathernd_batch_dims_of_different_sizes_error:
        "errored/gathernd_batch_dims_mismatch" => "errored"
        ["GatherND-13", "batch_dims (1)", "indices [4, 1]", "data [2, 2, 2]", "must be equal"];
    a_negative_gathernd_batch_dims_errors:
        "errored/gathernd_batch_dims_negative" => "errored"
        ["GatherND-13", "batch_dims -1", "must be in [0, 2)"];
    an_out_of_range_scatternd_index_errors:
        "errored/scatternd_index_out_of_range" => "errored"
        ["ScatterND-13", "indices[2,0] = 8", "out of range [-8, 7]", "(size 8)"];
    a_reduction_attribute_at_scatternd_13_errors:
        "errored/scatternd_reduction_attribute_opset13" => "errored"
        ["attribute 'reduction'", "not defined by ScatterND-13", "version 16"];
    reduction_max_at_scatternd_16_errors:
        "errored/scatternd_reduction_max_opset16" => "errored"
        ["reduction 'max'", "not allowed by ScatterND-16", "version 18"];
    a_linear_tensor_scatter_past_the_end_errors:
        "errored/tensor_scatter_linear_overflow" => "errored"
        ["TensorScatter-24", "linear mode", "write_indices[0]", "(3 + 2)", "max sequence length 4"];
    a_negative_tensor_scatter_write_index_errors:
        "errored/tensor_scatter_negative_write_index" => "errored"
        ["TensorScatter-24", "write_indices[1] = -1", "negative"];
    tensor_scatter_on_the_batch_axis_errors:
        "errored/tensor_scatter_axis_0" => "errored" ["TensorScatter-24", "axis 0", "batch axis"];
    an_unknown_tensor_scatter_mode_errors:
        "errored/tensor_scatter_mode_foo" => "errored"
        ["TensorScatter-24", "mode must be 'linear' or 'circular'", "'foo'"];
    tensor_scatter_write_indices_unlike_the_batch_error:
        "errored/tensor_scatter_write_indices_length" => "errored"
        ["TensorScatter-24", "write_indices has shape [3]", "[batch_size] = [2]"];
    openvino_gather_batch_dims_past_the_axis_errors:
        "errored/openvino_gather_batch_dims_exceeds_axis" => "errored"
        ["(Gather-8)", "batch_dims (1)", "<= axis (0)"];
    an_openvino_gather_axis_of_two_elements_errors:
        "errored/openvino_gather_axis_two_elements" => "errored"
        ["(Gather-8)", "axis input", "scalar or have 1 element", "shape [2]"];
    a_gather_grad_dy_unlike_the_forward_output_errors:
        "errored/gather_grad_dy_shape_mismatch" => "errored"
        ["GatherGrad-1", "dY has shape [3, 2]", "[2, 2]"];
    an_out_of_range_gather_grad_index_errors:
        "errored/gather_grad_index_out_of_range" => "errored"
        ["GatherGrad-1", "indices[1] = 3", "out of range [-3, 2]", "axis 0 (size 3)"];

    // errored/: malformed files and data sets.
    a_truncated_model_errors:
        "errored/truncated_model" => "errored" ["model.onnx", "not a valid ONNX ModelProto"];
    a_garbage_input_file_errors:
        "errored/garbage_input" => "errored"
        ["test_data_set_0/input_0.pb", "not a valid ONNX TensorProto"];
    raw_data_of_the_wrong_size_errors:
        "errored/raw_data_size_mismatch" => "errored"
        ["input_0.pb", "raw_data holds 7 bytes", "needs exactly 8"];
    raw_data_beside_float_data_errors:
        "errored/raw_and_float_data" => "errored"
        ["more than one value field", "raw_data", "float_data"];
    an_unknown_data_type_errors:
        "errored/unknown_data_type" => "errored" ["data_type 99", "not a known"];
    dims_claiming_four_tebibytes_error_on_the_limit:
        "errored/huge_dims" => "errored"
        ["[1099511627776]", "4398046511104 bytes", "limit", "--max-tensor-bytes"];
    external_data_escaping_the_directory_errors:
        "errored/external_data_escaping" => "errored"
        ["external data", "'../secret.bin'", "outside the directory"];
    external_data_at_an_absolute_path_errors:
        "errored/external_data_absolute" => "errored"
        ["external data", "'/etc/passwd'", "must be a relative path"];
    a_missing_output_file_errors:
        "errored/missing_output" => "errored" ["output_0.pb", "missing"];
    an_extra_input_file_errors:
        "errored/extra_input" => "errored" ["input_2.pb", "no graph input"];
    a_missing_input_file_errors:
        "errored/missing_input" => "errored" ["input_1.pb", "missing"];
    an_input_unlike_its_declaration_errors:
        "errored/input_dtype_mismatch" => "errored"
        ["input_1.pb", "holds int32", "'indices'", "declared int64"];
    an_int8_entry_of_300_errors:
        "errored/int8_entry_out_of_range" => "errored" ["int32_data[1] = 300", "int8"];

    // skipped/: valid but not implemented.
    an_unsupported_op_is_skipped:
        "skipped/unsupported_op_add" => "skipped" ["Add", "ai.onnx", "opset 13", "not supported"];
    an_op_in_an_unknown_domain_is_skipped:
        "skipped/unknown_domain" => "skipped"
        ["Gather", "com.example", "opset 1", "not supported", "unknown domain"];
    a_string_product_reduction_is_skipped:
        "skipped/string_reduction_mul" => "skipped" ["reduction 'mul'", "string", "not implemented"];
    a_bool_max_reduction_is_skipped:
        "skipped/bool_reduction_max" => "skipped" ["reduction 'max'", "bool", "not implemented"];
    a_segment_tensor_is_skipped:
        "skipped/segment_tensor" => "skipped" ["input_0.pb", "segment", "not supported"];
    // hostile/: built to crash, exhaust or escape a loader; each refused with its reason.
    a_subgraph_nested_10000_deep_stops_at_the_nesting_limit:
        "hostile/subgraph_nested_10000_deep" => "errored"
        ["model.onnx", "not a valid ONNX ModelProto", "levels", "recursion limit reached"];
    a_node_name_that_is_not_utf8_errors:
        "hostile/node_name_not_utf8" => "errored"
        ["model.onnx", "NodeProto.name", "not UTF-8"];
    an_empty_model_errors:
        "hostile/empty_model" => "errored" ["model.onnx", "empty"];
    a_raw_data_length_beyond_the_file_errors:
        "hostile/raw_data_length_claims_a_terabyte" => "errored"
        ["input_0.pb", "TensorProto.raw_data", "buffer underflow"];
    a_packed_field_length_beyond_the_file_errors:
        "hostile/packed_field_claims_two_gigabytes" => "errored"
        ["input_1.pb", "TensorProto.int64_data", "buffer underflow"];
    dims_whose_product_overflows_error:
        "hostile/dims_product_overflows" => "errored"
        ["input_0.pb", "tensor 'data'", "[4294967296, 4294967296, 4294967296]", "more elements than can be addressed"];
    a_negative_dim_errors:
        "hostile/negative_dim" => "errored" ["input_0.pb", "[-2]", "negative"];
    an_expected_output_claiming_a_terabyte_errors:
        "hostile/expected_output_claims_a_terabyte" => "errored"
        ["output_0.pb", "tensor 'output'", "1099511627776 bytes", "--max-tensor-bytes"];
    strings_claiming_a_terabyte_error:
        "hostile/strings_claim_a_terabyte" => "errored"
        ["input_0.pb", "string tensor of shape [1099511627776]", "--max-tensor-bytes"];
    an_output_of_a_terabyte_errors_before_it_is_allocated:
        "hostile/gather_grad_output_of_a_terabyte" => "errored"
        ["GatherGrad-1", "output float tensor of shape [274877906944]", "1099511627776 bytes", "--max-tensor-bytes"];
    a_shape_input_whose_product_overflows_errors:
        "hostile/gather_grad_shape_overflows" => "errored"
        ["GatherGrad-1", "dY has shape [1]", "4611686018427387904"];
    external_data_with_a_nul_byte_errors:
        "hostile/external_data_with_a_nul_byte" => "errored"
        ["input_0.pb", "\"data.bin\\0.txt\"", "not a valid file name"];
    external_data_climbing_through_a_subdirectory_errors:
        "hostile/external_data_climbing_through_a_subdirectory" => "errored"
        ["'sub/../../secret.bin'", "outside the directory"];
    external_data_past_the_end_errors:
        "hostile/external_data_offset_past_the_end" => "errored"
        ["'data.bin'", "offset 16 + length 8 exceeds the file size 8"];
    external_offset_and_length_that_overflow_error:
        "hostile/external_data_offset_plus_length_overflows" => "errored"
        ["'data.bin'", "offset 9223372036854775807 + length 9223372036854775807", "exceeds the file size 8"];
    external_data_claiming_a_terabyte_errors:
        "hostile/external_data_length_claims_a_terabyte" => "errored"
        ["input_0.pb", "1099511627776 bytes", "--max-tensor-bytes"];
    external_data_that_is_a_directory_errors:
        "hostile/external_data_is_a_directory" => "errored"
        ["location 'sub'", "not a regular file"];
    external_data_without_a_location_errors:
        "hostile/external_data_location_missing" => "errored"
        ["input_0.pb", "no `location`"];
    an_initializer_with_external_data_outside_the_case_errors:
        "hostile/initializer_external_data_escaping" => "errored"
        ["model.onnx", "tensor 'indices'", "'../../etc/passwd'", "outside the directory"];
}

#[test]
fn every_fixture_has_a_test_of_its_own() {
    let on_disk: BTreeSet<String> = fixture_names().into_iter().collect();
    let tested: BTreeSet<String> = TESTED.iter().map(|s| s.to_string()).collect();
    assert_eq!(
        on_disk.difference(&tested).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "fixtures without a test"
    );
    assert_eq!(
        tested.difference(&on_disk).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "tests without a fixture (run `cargo xtask fixtures`?)"
    );
}

/// The single output comparison of a failed case.
fn output(c: &Value) -> &Value {
    let outputs = c["data_sets"][0]["outputs"].as_array().unwrap();
    assert_eq!(outputs.len(), 1, "{c:#}");
    &outputs[0]
}

#[test]
fn each_differing_value_is_listed_with_its_index_expected_and_actual() {
    for (name, comparison, index, expected, actual) in [
        ("failing/wrong_value", "exact", json!([1, 0]), "7.0", "5.0"),
        ("failing/nan_expected", "exact", json!([0]), "NaN", "3.0"),
        (
            "failing/negative_zero_expected",
            "exact",
            json!([0]),
            "-0.0",
            "0.0",
        ),
        (
            "failing/reduction_beyond_tolerance",
            "tolerant",
            json!([0, 1]),
            "5.02",
            "5.0",
        ),
        (
            "failing/gathernd_wrong_value",
            "exact",
            json!([1]),
            "2",
            "3",
        ),
        (
            "failing/scatternd_wrong_value",
            "exact",
            json!([4]),
            "9.0",
            "11.0",
        ),
        // The backward ops add, so their float outputs are compared with the tolerance (D9).
        (
            "failing/gather_grad_wrong_value",
            "tolerant",
            json!([0]),
            "2.0",
            "3.0",
        ),
        (
            "failing/gather_elements_grad_wrong_value",
            "tolerant",
            json!([0, 1]),
            "4.0",
            "7.0",
        ),
    ] {
        let c = alone(name, "failed", &[]);
        let o = output(&c);
        assert_eq!(o["status"], "failed", "{name}");
        assert_eq!(o["comparison"], comparison, "{name}");
        assert_eq!(o["mismatches"], 1, "{name}");
        let m = &o["first_mismatches"];
        assert_eq!(m.as_array().map(Vec::len), Some(1), "{name}");
        assert_eq!(
            (&m[0]["index"], &m[0]["expected"], &m[0]["actual"]),
            (&index, &json!(expected), &json!(actual)),
            "{name}"
        );
        // Each listed mismatch says where the correct value comes from.
        assert!(
            m[0]["source"].as_str().is_some_and(|s| !s.is_empty()),
            "{name}: {m}"
        );
    }
}

#[test]
fn the_largest_differences_are_reported_for_changed_values() {
    let c = alone("failing/wrong_value", "failed", &[]);
    let o = output(&c);
    assert_eq!(o["max_abs_diff"], json!(2.0));
    // |5 - 7| / |7|.
    let rel = o["max_rel_diff"].as_f64().unwrap();
    assert!((rel - 2.0 / 7.0).abs() < 1e-12, "{rel}");
    let c = alone("failing/reduction_beyond_tolerance", "failed", &[]);
    let abs = output(&c)["max_abs_diff"].as_f64().unwrap();
    assert!((abs - 0.02).abs() < 1e-5, "{abs}");
}

#[test]
fn a_nan_mismatch_reports_no_finite_largest_difference() {
    let c = alone("failing/nan_expected", "failed", &[]);
    let o = output(&c);
    // |3 - NaN| is NaN: not a finite difference, and certainly not 0.
    assert_eq!(o["max_abs_diff"], Value::Null, "{o:#}");
    assert_eq!(o["max_rel_diff"], Value::Null, "{o:#}");
}

#[test]
fn shape_and_dtype_failures_list_no_elements_but_both_sides() {
    for (name, dtype, actual_dtype, expected_shape, actual_shape) in [
        (
            "failing/wrong_shape",
            "float",
            "float",
            json!([2, 3]),
            json!([3, 2]),
        ),
        (
            "failing/wrong_dtype",
            "double",
            "float",
            json!([2, 2]),
            json!([2, 2]),
        ),
        (
            "failing/rank0_expected_as_rank1",
            "int64",
            "int64",
            json!([1]),
            json!([]),
        ),
    ] {
        let c = alone(name, "failed", &[]);
        let o = output(&c);
        assert_eq!(o["dtype"], dtype, "{name}");
        assert_eq!(o["actual_dtype"], actual_dtype, "{name}");
        assert_eq!(o["expected_shape"], expected_shape, "{name}");
        assert_eq!(o["actual_shape"], actual_shape, "{name}");
        assert_eq!(o["first_mismatches"], json!([]), "{name}");
    }
}

#[test]
fn a_reduction_within_the_tolerance_is_compared_tolerantly_and_data_movement_exactly() {
    let c = alone("passing/reduction_within_tolerance", "passed", &[]);
    assert_eq!(output(&c)["comparison"], "tolerant");
    let c = alone("passing/nan_payloads_are_equal", "passed", &[]);
    assert_eq!(output(&c)["comparison"], "exact");
}

#[test]
fn a_skipped_case_fails_the_run_only_with_deny_skip() {
    let path = fixture("skipped/unsupported_op_add");
    let (code, report) = run_json(&path, &[]);
    assert_eq!((code, count(&report, "skipped")), (0, 1));
    let (code, report) = run_json(&path, &["--deny-skip"]);
    assert_eq!((code, count(&report, "skipped")), (1, 1));
    // A passed case is not affected.
    let (code, _) = run_json(&fixture("passing/nan_payloads_are_equal"), &["--deny-skip"]);
    assert_eq!(code, 0);
}

#[test]
fn one_bad_case_never_spoils_the_run() {
    let names = fixture_names();
    // The hand-copied official sample and the --actual tree have tests of their own
    // (onnx_node_sample.rs, actual.rs).
    let (code, report) = run_json(&fixtures(), &ONLY_GROUPS);
    assert_eq!(code, 1);
    let listed: Vec<&str> = cases(&report)
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(listed, names, "every fixture is reported once, in order");
    assert_eq!(count(&report, "total"), names.len() as u64);
    assert_eq!(count(&report, "not_run"), 0);
    let mut tally = [0u64; 4];
    let mut differ = Vec::new();
    for name in &names {
        let together = case(&report, name);
        let (_, alone) = run_json(&fixture(name), &[]);
        let alone = &cases(&alone)[0];
        for key in ["status", "reason", "data_sets"] {
            if together[key] != alone[key] {
                differ.push(format!(
                    "{name} {key}: together {}, alone {}",
                    together[key], alone[key]
                ));
            }
        }
        let status = together["status"].as_str().unwrap();
        if status != verdict_of_group(name) {
            differ.push(format!("{name}: {status} in a tree run"));
        }
        let slot = ["passed", "failed", "errored", "skipped"]
            .iter()
            .position(|s| *s == status)
            .unwrap();
        tally[slot] += 1;
    }
    assert!(differ.is_empty(), "{differ:#?}");
    for (key, n) in ["passed", "failed", "errored", "skipped"].iter().zip(tally) {
        assert_eq!(count(&report, key), n, "summary.{key}");
    }
}

#[test]
fn tolerance_options_move_the_line_between_passed_and_failed() {
    // --exact compares reductions bit for bit: 5 is not 5.004.
    let (code, report) = run_json(&fixture("passing/reduction_within_tolerance"), &["--exact"]);
    assert_eq!((code, &cases(&report)[0]["status"]), (1, &json!("failed")));
    // A wider rtol admits 0.02 against 5.02: 1e-7 + 1e-2 * 5.02 = 0.0502.
    let (code, report) = run_json(
        &fixture("failing/reduction_beyond_tolerance"),
        &["--rtol", "0.01"],
    );
    assert_eq!((code, &cases(&report)[0]["status"]), (0, &json!("passed")));
    // --tolerant applies the tolerance to data movement too, where |-0 - 0| = 0.
    let (code, report) = run_json(&fixture("failing/negative_zero_expected"), &["--tolerant"]);
    assert_eq!((code, &cases(&report)[0]["status"]), (0, &json!("passed")));
    // Not to dtype or shape, though.
    let (code, _) = run_json(&fixture("failing/wrong_shape"), &["--tolerant"]);
    assert_eq!(code, 1);
}

#[test]
fn a_graph_where_two_nodes_write_one_tensor_is_an_invalid_model() {
    // D15: SSA form. A copy of a passing Gather case whose node is doubled: both copies compute
    // the same values, so only the check of the graph can catch it.
    let tmp = tempfile::tempdir().unwrap();
    let case = tmp.path().join("case");
    copy_case(
        &fixture("passing/gather_int32_negative_indices_typed"),
        &case,
    );
    let (code, report) = run_json(&case, &[]);
    assert_eq!((code, &cases(&report)[0]["status"]), (0, &json!("passed")));
    let mut written = String::new();
    rewrite_model(&case.join("model.onnx"), |m| {
        let g = m.graph.as_mut().unwrap();
        assert_eq!(g.node.len(), 1, "the control case has one node");
        assert_eq!(g.node[0].op_type, "Gather");
        g.node[0].name = "first".into();
        let mut second = g.node[0].clone();
        second.name = "second".into();
        g.node.push(second);
        written.clone_from(&g.node[0].output[0]);
    });
    let (code, report) = run_json(&case, &[]);
    assert_eq!(code, 1, "{report:#}");
    let c = &cases(&report)[0];
    assert_eq!(c["status"], "errored", "{c:#}");
    let reason = c["reason"].as_str().unwrap();
    for w in [
        "not in SSA form",
        "'first' (Gather)",
        "'second' (Gather)",
        &format!("both write tensor '{written}'"),
    ] {
        assert!(reason.contains(w), "reason lacks {w:?}: {reason}");
    }
}

/// A ScatterND-18 case in `dir` with `k = indices.shape[-1] = 0` (D6): data [2, 3] = 1..6,
/// indices [2, 0], two updates of the whole tensor combined by `reduction`, and `expected` as
/// the output.
fn scatter_nd_k_zero_case(dir: &Path, reduction: &str, expected: &[f32]) {
    use onnx_idx_check::pb::{
        attribute_proto::AttributeType, tensor_proto::DataType, type_proto, AttributeProto,
        GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TensorProto, TypeProto,
        ValueInfoProto,
    };
    use prost::Message;
    let value = |name: &str, elem: DataType| ValueInfoProto {
        name: name.into(),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: elem as i32,
                shape: None,
            })),
            ..Default::default()
        }),
        ..Default::default()
    };
    let model = ModelProto {
        ir_version: 8,
        opset_import: vec![OperatorSetIdProto {
            domain: String::new(),
            version: 18,
        }],
        graph: Some(GraphProto {
            name: "scatter_nd_k_zero".into(),
            node: vec![NodeProto {
                op_type: "ScatterND".into(),
                input: vec!["data".into(), "indices".into(), "updates".into()],
                output: vec!["y".into()],
                attribute: vec![AttributeProto {
                    name: "reduction".into(),
                    r#type: AttributeType::String as i32,
                    s: reduction.as_bytes().to_vec(),
                    ..Default::default()
                }],
                ..Default::default()
            }],
            input: vec![
                value("data", DataType::Float),
                value("indices", DataType::Int64),
                value("updates", DataType::Float),
            ],
            output: vec![value("y", DataType::Float)],
            ..Default::default()
        }),
        ..Default::default()
    };
    let ds = dir.join("test_data_set_0");
    std::fs::create_dir_all(&ds).unwrap();
    std::fs::write(dir.join("model.onnx"), model.encode_to_vec()).unwrap();
    let floats = |name: &str, dims: &[i64], v: &[f32]| TensorProto {
        name: name.into(),
        dims: dims.to_vec(),
        data_type: DataType::Float as i32,
        float_data: v.to_vec(),
        ..Default::default()
    };
    let indices = TensorProto {
        name: "indices".into(),
        dims: vec![2, 0],
        data_type: DataType::Int64 as i32,
        ..Default::default()
    };
    let updates = [
        10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0,
    ];
    write_tensor(
        &ds.join("input_0.pb"),
        &floats("data", &[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
    );
    write_tensor(&ds.join("input_1.pb"), &indices);
    write_tensor(
        &ds.join("input_2.pb"),
        &floats("updates", &[2, 2, 3], &updates),
    );
    write_tensor(&ds.join("output_0.pb"), &floats("y", &[2, 3], expected));
}

#[test]
fn scatter_nd_with_empty_index_tuples_updates_the_whole_tensor() {
    // D6: k = 0 is valid; each update replaces, or reduces into, the whole tensor. Expected
    // outputs by hand from data 1..6 and the updates 10..60 then 0.5..3.
    let tmp = tempfile::tempdir().unwrap();
    let last = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0];
    let add = [11.5, 23.0, 34.5, 46.0, 57.5, 69.0];
    let mul = [5.0, 40.0, 135.0, 320.0, 625.0, 1080.0];
    for (reduction, expected, status) in [
        ("none", &last, "passed"),
        ("add", &add, "passed"),
        ("mul", &mul, "passed"),
        // Applying only the last update is not a reduction.
        ("add", &last, "failed"),
    ] {
        let case = tmp.path().join(format!("{reduction}_{status}"));
        scatter_nd_k_zero_case(&case, reduction, expected);
        let (code, report) = run_json(&case, &[]);
        let c = &cases(&report)[0];
        assert_eq!(c["status"], status, "{reduction}: {c:#}");
        assert_eq!(code, i32::from(status != "passed"), "{reduction}: {c:#}");
        assert_eq!(
            (&c["ops"], &c["opset"]),
            (&json!(["ScatterND"]), &json!({"ai.onnx": 18})),
            "{c:#}"
        );
    }
}

/// New-user report #11: with several data sets failing, the case's reason named the last one.
/// It names the first, and how many more failed.
#[test]
fn report_11_the_reason_names_the_first_failing_data_set_and_counts_the_others() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("three_sets");
    copy_case(&fixture("failing/wrong_value"), &dir);
    // Sets 1 and 2 are copies of set 0, the same wrong expected value: the reason named set 2.
    for k in [1, 2] {
        copy_case(
            &dir.join("test_data_set_0"),
            &dir.join(format!("test_data_set_{k}")),
        );
    }
    let (code, report) = run_json(&dir, &[]);
    assert_eq!(code, 1);
    let reason = case(&report, "three_sets")["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        reason,
        "test_data_set_0: output 'output': 1 of 4 elements differ; first at [1,0]: expected 7.0, \
         got 5.0 (and 2 more data sets)"
    );
}
