//! Diagnosis of wrong outputs: one fixture per known bug class, each named by exactly that class
//! in the JSON report (`outputs[].diagnosis`) and by its sentence in the human report; and the
//! provenance of each listed mismatch (`first_mismatches[].source`).
//!
//! Six classes are shown with a wrong expected output in a plain run (`failing/diagnosed_*`).
//! The three out-of-range classes need inputs for which the spec requires an error, so they are
//! shown with a runtime's output under `--actual` (`actual/cases/diagnosed_oob_*`).

use crate::support::{
    cases, copy_case, fixture, fixtures, read_tensor, rewrite_model, run, run_json, write_tensor,
    ACTUAL,
};
use serde_json::{json, Value};
use std::path::PathBuf;

/// Each class: its id, the sentence the reports use, the fixture that shows it, and whether the
/// fixture is judged under `--actual`.
const CLASSES: [(&str, &str, &str, bool); 9] = [
    (
        "negative-not-normalized",
        "negative indices were not normalised (read as index 0 or as a zero element instead of counting from the back)",
        "failing/diagnosed_negative_not_normalized",
        false,
    ),
    (
        "oob-wrapped",
        "out-of-range indices were wrapped modulo the axis size",
        "diagnosed_oob_wrapped",
        true,
    ),
    (
        "oob-clamped",
        "out-of-range indices were clamped to the nearest valid index",
        "diagnosed_oob_clamped",
        true,
    ),
    (
        "oob-zero-filled",
        "out-of-range indices produced zeros (or their updates were dropped)",
        "diagnosed_oob_zero_filled",
        true,
    ),
    (
        "first-write-wins",
        "duplicate indices kept the first write instead of the last in row-major order",
        "failing/diagnosed_first_write_wins",
        false,
    ),
    (
        "reduction-ignored",
        "the reduction attribute was ignored: updates overwrote instead of combining",
        "failing/diagnosed_reduction_ignored",
        false,
    ),
    (
        "axis-ignored",
        "the axis attribute was ignored: axis 0 was used",
        "failing/diagnosed_axis_ignored",
        false,
    ),
    (
        "batch-dims-ignored",
        "the batch_dims attribute was ignored: batch_dims 0 was used",
        "failing/diagnosed_batch_dims_ignored",
        false,
    ),
    (
        "accumulation-order",
        "the reduction accumulated in another order (reverse row-major) than the sequential row-major order",
        "failing/diagnosed_accumulation_order",
        false,
    ),
];

/// The arguments that run one class's fixture alone, in `format`.
fn args(fixture_name: &str, under_actual: bool, format: &str) -> Vec<String> {
    let mut a: Vec<String> = if under_actual {
        vec![
            "run".into(),
            fixtures().join(ACTUAL).join("cases").display().to_string(),
            "--actual".into(),
            fixtures()
                .join(ACTUAL)
                .join("outputs")
                .display()
                .to_string(),
            "--filter".into(),
            format!("^{fixture_name}$"),
        ]
    } else {
        vec!["run".into(), fixture(fixture_name).display().to_string()]
    };
    a.extend([
        "--format".into(),
        format.into(),
        "--color".into(),
        "never".into(),
    ]);
    a
}

/// The single output of the single data set of the single case of a report.
fn only_output(report: &Value) -> Value {
    let c = &cases(report)[0];
    assert_eq!(cases(report).len(), 1, "{report:#}");
    let outputs = c["data_sets"][0]["outputs"].as_array().unwrap();
    assert_eq!(outputs.len(), 1, "{c:#}");
    outputs[0].clone()
}

#[test]
fn each_bug_class_is_named_by_its_own_fixture() {
    for (id, sentence, name, under_actual) in CLASSES {
        let r = run(args(name, under_actual, "json"));
        r.expect_code(1);
        let report = r.json();
        assert_eq!(cases(&report)[0]["status"], "failed", "{name}");
        let o = only_output(&report);
        assert_eq!(o["status"], "failed", "{name}");
        assert_eq!(o["diagnosis"], id, "{name}: {o:#}");
        let reason = cases(&report)[0]["reason"].as_str().unwrap().to_string();
        assert!(
            reason.ends_with(&format!("; diagnosis: {sentence} ({id})")),
            "{name}: {reason}"
        );
        // The human report says it in words, with the id.
        let r = run(args(name, under_actual, "human"));
        r.expect_code(1);
        assert!(
            r.stdout.contains(&format!("diagnosis: {sentence} ({id})")),
            "{name}: {}",
            r.stdout
        );
    }
}

#[test]
fn no_two_fixtures_show_the_same_class() {
    // All the diagnosed fixtures in two runs: every class exactly once.
    let (_, plain) = run_json(&fixtures(), &["--filter", "^failing/diagnosed_"]);
    let outputs = fixtures().join(ACTUAL).join("outputs");
    let (_, actual) = run_json(
        &fixtures().join(ACTUAL).join("cases"),
        &[
            "--actual",
            outputs.to_str().unwrap(),
            "--filter",
            "^diagnosed_",
        ],
    );
    let mut found: Vec<(String, String)> = cases(&plain)
        .iter()
        .chain(cases(&actual))
        .map(|c| {
            let o = &c["data_sets"][0]["outputs"][0];
            (
                o["diagnosis"].as_str().unwrap_or("null").to_string(),
                c["name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    found.sort();
    let mut want: Vec<(String, String)> = CLASSES
        .iter()
        .map(|(id, _, name, _)| (id.to_string(), name.to_string()))
        .collect();
    want.sort();
    assert_eq!(found, want);
}

#[test]
fn gather_mismatches_name_the_data_element_and_the_index_that_picks_it() {
    let (_, report) = run_json(&fixture("failing/diagnosed_negative_not_normalized"), &[]);
    // In a plain run "expected" is the file on trial and "actual" onnx-idx-check's result; the
    // source explains the correct value.
    assert_eq!(
        only_output(&report)["first_mismatches"],
        json!([
            {"index": [0, 0], "expected": "1.0", "actual": "5.0",
             "source": "data[2,0], from indices[0] = -1 on axis 0"},
            {"index": [0, 1], "expected": "2.0", "actual": "6.0",
             "source": "data[2,1], from indices[0] = -1 on axis 0"},
        ])
    );
    let (_, report) = run_json(&fixture("failing/diagnosed_axis_ignored"), &[]);
    assert_eq!(
        only_output(&report)["first_mismatches"],
        json!([
            {"index": [0, 1], "expected": "2.0", "actual": "1.0",
             "source": "data[0,0], from indices[0,1] = 0 on axis 1"},
            {"index": [1, 0], "expected": "3.0", "actual": "4.0",
             "source": "data[1,1], from indices[1,0] = 1 on axis 1"},
            {"index": [1, 1], "expected": "2.0", "actual": "3.0",
             "source": "data[1,0], from indices[1,1] = 0 on axis 1"},
        ])
    );
    // GatherND names the whole index tuple.
    let (_, report) = run_json(&fixture("failing/gathernd_wrong_value"), &[]);
    assert_eq!(
        only_output(&report)["first_mismatches"][0]["source"],
        "data[1,1], from indices[1,:] = [1, 1]"
    );
}

#[test]
fn scatter_mismatches_name_the_updates_that_land_on_the_element() {
    let (_, report) = run_json(&fixture("failing/diagnosed_first_write_wins"), &[]);
    assert_eq!(
        only_output(&report)["first_mismatches"],
        json!([{"index": [0, 1], "expected": "5.0", "actual": "7.0",
                "source": "updates[0,1] (indices[0,1] = 1 on axis 1), the last of 2 writes"}])
    );
    let (_, report) = run_json(&fixture("failing/diagnosed_reduction_ignored"), &[]);
    assert_eq!(
        only_output(&report)["first_mismatches"],
        json!([
            {"index": [0, 1], "expected": "10.0", "actual": "12.0",
             "source": "add of data[0,1], updates[0,0] (indices[0,0] = 1 on axis 1)"},
            {"index": [0, 3], "expected": "20.0", "actual": "24.0",
             "source": "add of data[0,3], updates[0,1] (indices[0,1] = 3 on axis 1)"},
        ])
    );
    let (_, report) = run_json(&fixture("failing/diagnosed_accumulation_order"), &[]);
    assert_eq!(
        only_output(&report)["first_mismatches"][0]["source"],
        "add of data[0], updates[0] (indices[0] = 0 on axis 0), updates[1] (indices[1] = 0 on \
         axis 0), updates[2] (indices[2] = 0 on axis 0)"
    );
    let (_, report) = run_json(&fixture("failing/scatternd_wrong_value"), &[]);
    assert_eq!(
        only_output(&report)["first_mismatches"][0]["source"],
        "updates[2] (indices[2,:] = [4]), the last of 2 writes"
    );
}

#[test]
fn a_shape_difference_lists_no_element_but_still_gets_its_diagnosis() {
    let (_, report) = run_json(&fixture("failing/diagnosed_batch_dims_ignored"), &[]);
    let o = only_output(&report);
    assert_eq!(o["expected_shape"], json!([2, 2, 2]));
    assert_eq!(o["actual_shape"], json!([2, 2]));
    assert_eq!(o["mismatches"], 0);
    assert_eq!(o["first_mismatches"], json!([]));
    assert_eq!(o["diagnosis"], "batch-dims-ignored");
}

#[test]
fn a_wrong_output_no_bug_explains_has_no_diagnosis() {
    // [1,0] is 7 where the gather gives 5: no class reproduces that.
    let (_, report) = run_json(&fixture("failing/wrong_value"), &[]);
    let o = only_output(&report);
    assert_eq!(o["diagnosis"], Value::Null);
    assert_eq!(
        o["first_mismatches"][0]["source"],
        "data[2,0], from indices[1] = 2 on axis 0"
    );
}

/// GatherGrad accumulates dY into dX; `failing/gather_grad_wrong_value` expects dX = [2, 0, 3],
/// which is exactly what overwriting gives (the reduction ignored), where accumulating gives
/// [3, 0, 3]. `diagnose::quirk_variants` offers `ReductionIgnored` for the backward ops ("the
/// grads' reduction is their accumulation: 'ignored' there means overwrite"), but
/// `diagnose::semantics` builds GatherGrad and GatherElementsGrad with `Reduction::Add` whatever
/// the quirk says, so the class can never match and the diagnosis is null.
#[test]
fn a_gradient_that_overwrites_instead_of_accumulating_is_diagnosed_reduction_ignored() {
    for name in [
        "failing/gather_grad_wrong_value",
        "failing/gather_elements_grad_wrong_value",
    ] {
        let (_, report) = run_json(&fixture(name), &[]);
        assert_eq!(
            only_output(&report)["diagnosis"],
            "reduction-ignored",
            "{name}"
        );
    }
}

/// Where the spec requires an error, `diagnose::classify` is called without a reference and
/// accepts the first quirk whose result equals the output, even a quirk that changes nothing.
/// GatherND-11 with a `batch_dims` attribute errors because the attribute does not exist at
/// that version; its indices [[0, 0], [1, 1]] hold no negative value, yet an output equal to
/// the plain GatherND result ([0, 3]) is blamed on negative-not-normalized, the first class
/// tried. The same false hint is appended to the reasons of seven `errored/` fixtures in plain
/// runs (float8_gather_opset13, int16_indices, gathernd_int32_indices, ...).
#[test]
fn a_spec_error_unrelated_to_indices_is_not_blamed_on_negative_indices() {
    // Plain run: the hint in the errored reason.
    let (_, report) = run_json(&fixture("errored/gathernd_batch_dims_opset11"), &[]);
    let reason = cases(&report)[0]["reason"].as_str().unwrap().to_string();
    assert!(!reason.contains("negative-not-normalized"), "{reason}");
    // --actual: a runtime that ignores the undefined attribute and returns [0, 3].
    let tmp = tempfile::tempdir().unwrap();
    let cases_dir = tmp.path().join("cases");
    let outputs = tmp.path().join("outputs/x/test_data_set_0");
    copy_case(
        &fixture("errored/gathernd_batch_dims_opset11"),
        &cases_dir.join("x"),
    );
    std::fs::create_dir_all(&outputs).unwrap();
    std::fs::copy(
        cases_dir.join("x/test_data_set_0/output_0.pb"),
        outputs.join("output_0.pb"),
    )
    .unwrap();
    let out_root: PathBuf = tmp.path().join("outputs");
    let (code, report) = run_json(&cases_dir, &["--actual", out_root.to_str().unwrap()]);
    assert_eq!(code, 1);
    let c = &cases(&report)[0];
    assert_eq!(c["status"], "failed", "{c:#}");
    assert_ne!(
        c["data_sets"][0]["outputs"][0]["diagnosis"], "negative-not-normalized",
        "{c:#}"
    );
}

/// In a plain run the file on trial is "expected" and onnx-idx-check's result "actual", and the
/// source explains the correct value, i.e. the actual one. The human table puts it in its own
/// column ("correct value from"), but the JUnit description attaches it to the expected value:
/// `output[1,0]: expected 7.0 (data[2,0], from indices[1] = 2 on axis 0), got 5.0`, although
/// data[2,0] is 5.
#[test]
fn junit_does_not_attribute_the_correct_values_source_to_the_wrong_value() {
    let r = run([
        "run",
        fixture("failing/wrong_value").to_str().unwrap(),
        "--format",
        "junit",
    ]);
    r.expect_code(1);
    assert!(
        r.stdout
            .contains("data[2,0], from indices[1] = 2 on axis 0"),
        "{}",
        r.stdout
    );
    assert!(
        !r.stdout.contains("expected 7.0 (data[2,0]"),
        "{}",
        r.stdout
    );
}

/// ScatterElements-13 on an axis of size 2 with indices [0, -2] (data [[1, 2]], updates
/// [[5, 7]]): both indices name element [0][0], and the last write wins, so the correct output is
/// [[7, 2]]. The expected file says [[5, 2]]: keeping the first write (first-write-wins) gives
/// that, and so does dropping the un-normalised -2 (negative-not-normalized). Built in a temporary
/// directory from a copy of `failing/diagnosed_first_write_wins` (axis 1).
fn two_classes_case() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let case = tmp.path().join("scatter_elements_minus_two");
    copy_case(&fixture("failing/diagnosed_first_write_wins"), &case);
    rewrite_model(&case.join("model.onnx"), |m| {
        let g = m.graph.as_mut().unwrap();
        for v in g.input.iter_mut().chain(g.output.iter_mut()) {
            if let Some(onnx_idx_check::pb::type_proto::Value::TensorType(t)) =
                v.r#type.as_mut().and_then(|t| t.value.as_mut())
            {
                t.shape = None;
            }
        }
    });
    let ds = case.join("test_data_set_0");
    let floats = |file: &str, values: &[f32]| {
        let mut t = read_tensor(&ds.join(file));
        t.dims = vec![1, values.len() as i64];
        t.raw_data = Default::default();
        t.float_data = values.to_vec();
        write_tensor(&ds.join(file), &t);
    };
    floats("input_0.pb", &[1.0, 2.0]);
    floats("input_2.pb", &[5.0, 7.0]);
    floats("output_0.pb", &[5.0, 2.0]);
    let mut idx = read_tensor(&ds.join("input_1.pb"));
    idx.dims = vec![1, 2];
    idx.raw_data = Default::default();
    idx.int64_data = vec![0, -2];
    write_tensor(&ds.join("input_1.pb"), &idx);
    (tmp, case)
}

#[test]
fn every_class_that_reproduces_the_output_is_named_most_specific_first() {
    let (_tmp, case) = two_classes_case();
    let (code, report) = run_json(&case, &[]);
    assert_eq!(code, 1, "{report:#}");
    let o = only_output(&report);
    assert_eq!(o["status"], "failed", "{o:#}");
    // schema_version 1 readers keep `diagnosis`, the first of `diagnoses`.
    assert_eq!(o["diagnosis"], "negative-not-normalized", "{o:#}");
    assert_eq!(
        o["diagnoses"],
        json!(["negative-not-normalized", "first-write-wins"]),
        "{o:#}"
    );
    let (neg, fww) = (CLASSES[0], CLASSES[4]);
    let both = format!(
        "diagnosis: {} ({}); also reproduced by: {} ({})",
        neg.1, neg.0, fww.1, fww.0
    );
    let reason = cases(&report)[0]["reason"].as_str().unwrap();
    assert!(reason.ends_with(&both), "{reason}");
    let r = run(["run", case.to_str().unwrap(), "--color", "never"]);
    r.expect_code(1);
    assert!(r.stdout.contains(&both), "{}", r.stdout);
    let r = run(["run", case.to_str().unwrap(), "--format", "junit"]);
    r.expect_code(1);
    assert!(
        r.stdout.contains("first-write-wins"),
        "the JUnit report names the second class too: {}",
        r.stdout
    );
    // A single class keeps an empty "also" and a one-element `diagnoses`.
    let (_, single) = run_json(&fixture("failing/diagnosed_first_write_wins"), &[]);
    assert_eq!(
        only_output(&single)["diagnoses"],
        json!(["first-write-wins"])
    );
}

/// Report #26: a wrong shape that no bug class reproduces exactly, but that one class explains,
/// is hinted at. The spec's Gather example 2 (data [3, 3], indices [[0, 2]], axis 1) gives shape
/// [3, 1, 2]; a runtime that ignores the axis gathers rows: shape [1, 2, 3] (worked by hand:
/// indices' shape, then the data's dims after axis 0). Here the file has that shape with values
/// no class produces (all 9.0), as when a second bug is on top. (In a plain run the file is on
/// trial: "expected" is the file's shape, "got" the reference's.)
#[test]
fn report_26_a_wrong_shape_one_class_explains_is_hinted() {
    let tmp = tempfile::tempdir().unwrap();
    let case = tmp.path().join("gather_axis_ignored_and_more");
    copy_case(
        &crate::support::root().join("testdata/spec-examples/gather_doc_example2_axis1_opset13"),
        &case,
    );
    let file = case.join("test_data_set_0/output_0.pb");
    let mut t = read_tensor(&file);
    t.dims = vec![1, 2, 3];
    t.raw_data = Default::default();
    t.float_data = vec![9.0; 6];
    write_tensor(&file, &t);
    let (code, report) = crate::support::run_json(&case, &[]);
    assert_eq!(code, 1);
    let reason = report["cases"][0]["reason"].as_str().unwrap();
    assert_eq!(
        reason,
        "test_data_set_0: output 'output': shape differs: expected [1, 2, 3], got [3, 1, 2]; \
         shape consistent with axis-ignored (the axis attribute was ignored: axis 0 was used); \
         values differ further"
    );
    assert_eq!(
        report["cases"][0]["data_sets"][0]["outputs"][0]["diagnoses"],
        json!([])
    );
}

/// New-user report 2026-11-27 #12: the hint comes from shapes alone, which do not depend on index
/// values. Gather axis -1 on data [2, 3] with indices [[0, 2], [1, 0]] gives [2, 2, 2]; a runtime
/// that ignores the axis and clamps gathers rows clamp(indices) = [[0, 1], [1, 0]]: shape
/// [2, 2, 3], values worked by hand. Under axis-ignored alone index 2 is out of range on axis 0
/// (size 2), which used to suppress the hint.
#[test]
fn new_user_12_the_shape_hint_holds_where_the_quirk_would_be_out_of_range() {
    let tmp = tempfile::tempdir().unwrap();
    let case = tmp.path().join("gather_axis_ignored_and_clamped");
    copy_case(
        &crate::support::root().join("testdata/spec-examples/gather_negative_axis_opset13"),
        &case,
    );
    let file = case.join("test_data_set_0/output_0.pb");
    let mut t = read_tensor(&file);
    t.dims = vec![2, 2, 3];
    t.raw_data = Default::default();
    t.float_data = vec![
        1.0, 2.0, 3.0, 4.0, 5.0, 6.0, //
        4.0, 5.0, 6.0, 1.0, 2.0, 3.0,
    ];
    write_tensor(&file, &t);
    let (code, report) = crate::support::run_json(&case, &[]);
    assert_eq!(code, 1);
    let reason = report["cases"][0]["reason"].as_str().unwrap();
    assert_eq!(
        reason,
        "test_data_set_0: output 'output': shape differs: expected [2, 2, 3], got [2, 2, 2]; \
         shape consistent with axis-ignored (the axis attribute was ignored: axis 0 was used); \
         values differ further"
    );
}

/// A runtime that takes OpenVINO's Gather-8 for ONNX's Gather (TVM's Relax frontend reads the
/// op type and not the domain): the spec's Gather-8 example 2 (data [2, 5], indices [[0, 0, 4],
/// [4, 0, 0]], axis input 1, batch_dims 1) gives [2, 3]; ONNX's Gather has no axis input and no
/// batch_dims, so it gathers rows (axis 0): shape [2, 3, 5], worked by hand, where index 4 is out
/// of range for the 2 rows, so its values are whatever the runtime read. The shape names the
/// cause, whatever the values.
#[test]
fn a_node_of_another_domain_computed_as_the_onnx_operator_is_diagnosed_domain_ignored() {
    let tmp = tempfile::tempdir().unwrap();
    let case = tmp.path().join("gather8_as_onnx_gather");
    copy_case(
        &crate::support::root().join("testdata/spec-examples/openvino_gather8_example2_opset13"),
        &case,
    );
    let file = case.join("test_data_set_0/output_0.pb");
    let mut t = read_tensor(&file);
    t.dims = vec![2, 3, 5];
    t.raw_data = Default::default();
    t.int64_data = vec![7; 30];
    write_tensor(&file, &t);
    let (code, report) = crate::support::run_json(&case, &[]);
    assert_eq!(code, 1);
    assert_eq!(
        report["cases"][0]["data_sets"][0]["outputs"][0]["diagnoses"],
        json!(["domain-ignored"])
    );
    let human = run(["run", case.to_str().unwrap()]);
    assert!(
        human
            .stdout
            .contains("diagnosis: the node's domain was ignored")
            && human.stdout.contains("(domain-ignored)"),
        "{}",
        human.stdout
    );
}
