//! `show PATH`: a tensor file, a model or a case, for people and as JSON.
//!
//! Expected values come from outside the tool: the ONNX Gather documentation's Example 1 (the
//! spec example `gather_doc_example1_axis0_opset11`: data `[[1.0, 1.2], [2.3, 3.4], [4.5, 5.7]]`,
//! indices `[[0, 1], [1, 2]]`), numpy's `np.random.seed(0); np.random.randn()` sequence (ONNX's
//! generator of `test_gather_0` draws its data from it), the sha256 computed here, and `.pb` files
//! written byte by byte in the tests. Hostile files must give a message naming the file and the
//! problem with the documented exit status (0 all shown, 1 a file of the case unreadable, 2 PATH
//! unusable), never a panic.

use crate::snapshots::settings;
use crate::support::{copy_case, fixture, root, run, sha256_hex, Run};
use serde_json::{json, Value};
use std::path::Path;

/// The ONNX Gather documentation's Example 1, as a case.
const GATHER_DOC: &str = "testdata/spec-examples/gather_doc_example1_axis0_opset11";

/// `show` with `args`, checked not to have panicked.
fn show(args: &[&str]) -> Run {
    let mut all = vec!["show"];
    all.extend_from_slice(args);
    let r = run(all);
    assert!(
        !r.stderr.contains("panicked"),
        "the command panicked:\n{}",
        r.stderr
    );
    r
}

/// `show PATH` with the path as an argument.
fn show_path(path: &Path, extra: &[&str]) -> Run {
    let path = path.to_str().unwrap();
    let mut args = vec![path];
    args.extend_from_slice(extra);
    show(&args)
}

/// The values of a JSON tensor as f64 (numbers only).
fn floats(t: &Value) -> Vec<f64> {
    t["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect()
}

/// A `.pb` file written byte by byte: `TensorProto { dims: [2, 2], data_type: INT64 (7),
/// int64_data: [1, 2, 3, -1] (packed), name: "t" }`.
const INT64_2X2: &[u8] = &[
    0x08, 0x02, 0x08, 0x02, // dims = 2, dims = 2
    0x10, 0x07, // data_type = 7 (INT64)
    0x3A, 0x0D, 0x01, 0x02, 0x03, // int64_data (field 7, packed, 13 bytes): 1, 2, 3,
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, // -1 (ten-byte varint)
    0x42, 0x01, b't', // name = "t"
];

/// `TensorProto { dims: [4], data_type: FLOAT (1), float_data: [NaN, inf, -inf, 1.5] }`, by hand.
const FLOAT_SPECIALS: &[u8] = &[
    0x08, 0x04, // dims = 4
    0x10, 0x01, // data_type = 1 (FLOAT)
    0x22, 0x10, // float_data (field 4, packed, 16 bytes), little-endian:
    0x00, 0x00, 0xC0, 0x7F, // NaN
    0x00, 0x00, 0x80, 0x7F, // inf
    0x00, 0x00, 0x80, 0xFF, // -inf
    0x00, 0x00, 0xC0, 0x3F, // 1.5
];

#[test]
fn a_tensor_file_shows_its_facts_and_the_spec_values_in_rows() {
    let file = format!("{GATHER_DOC}/test_data_set_0/input_0.pb");
    let r = show(&[&file]);
    r.expect_code(0);
    assert!(r.stdout.contains(&sha256_hex(&root().join(&file))));
    settings().bind(|| insta::assert_snapshot!("show_tensor_human", r.stdout));

    let r = show(&[&file, "--format", "json"]);
    r.expect_code(0);
    let doc = r.json();
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(doc["kind"], "tensor");
    let t = &doc["tensor"];
    assert_eq!(t["name"], "data");
    assert_eq!(t["dtype"], "float");
    assert_eq!(t["shape"], json!([3, 2]));
    assert_eq!(t["numel"], 6);
    assert_eq!(t["storage"], "raw_data");
    assert_eq!(t["sha256"], sha256_hex(&root().join(&file)));
    assert_eq!(t["values_complete"], true);
    // The Gather documentation's data, as written there.
    assert_eq!(
        r.stdout
            .split("\"values\": ")
            .nth(1)
            .and_then(|v| v.split(']').next())
            .map(|v| v.split_whitespace().collect::<String>()),
        Some("[1.0,1.2,2.3,3.4,4.5,5.7".to_string())
    );
}

#[test]
fn a_case_shows_the_model_then_each_data_set_bound_to_the_graph() {
    let r = show(&[GATHER_DOC]);
    r.expect_code(0);
    assert!(r.stdout.contains(
        "#0 'gather_doc_example1_axis0_opset11' Gather (ai.onnx): data, indices -> output; axis=0"
    ));
    assert!(r
        .stdout
        .contains("  input_1.pb 'indices': int64 [2, 2], 4 values"));
    settings().bind(|| insta::assert_snapshot!("show_case_human", r.stdout));

    let r = show(&[GATHER_DOC, "--format", "json"]);
    r.expect_code(0);
    let doc = r.json();
    assert_eq!(doc["kind"], "case");
    let case = &doc["case"];
    let model = &case["model"];
    assert_eq!(
        model["opset_import"],
        json!([{"domain": "ai.onnx", "version": 11}])
    );
    assert_eq!(
        model["graph"]["inputs"],
        json!([
            {"name": "data", "kind": "tensor", "dtype": "float", "shape": [3, 2], "has_initializer": false},
            {"name": "indices", "kind": "tensor", "dtype": "int64", "shape": [2, 2], "has_initializer": false}
        ])
    );
    let node = &model["graph"]["nodes"][0];
    assert_eq!(node["op_type"], "Gather");
    assert_eq!(
        node["attributes"],
        json!([{"name": "axis", "type": "INT", "value": 0}])
    );
    let ds = &case["data_sets"][0];
    assert_eq!(ds["name"], "test_data_set_0");
    let indices = &ds["inputs"][1];
    assert_eq!(
        (&indices["file"], &indices["bound_to"], &indices["status"]),
        (&json!("input_1.pb"), &json!("indices"), &json!("ok"))
    );
    assert_eq!(indices["tensor"]["values"], json!([0, 1, 1, 2]));
    // The documentation's output: [[[1.0, 1.2], [2.3, 3.4]], [[2.3, 3.4], [4.5, 5.7]]].
    let output = &ds["outputs"][0];
    assert_eq!(output["bound_to"], "output");
    assert_eq!(output["tensor"]["shape"], json!([2, 2, 2]));
    let want = [1.0f32, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7];
    let got: Vec<f32> = floats(&output["tensor"])
        .iter()
        .map(|&v| v as f32)
        .collect();
    assert_eq!(got, want);
    settings().bind(|| insta::assert_snapshot!("show_case_json", r.stdout));
}

#[test]
fn a_model_file_shows_the_model_alone() {
    let file = format!("{GATHER_DOC}/model.onnx");
    let r = show(&[&file]);
    r.expect_code(0);
    assert!(r.stdout.starts_with(&format!(
        "{file}\n  sha256:       {}\n",
        sha256_hex(&root().join(&file))
    )));
    assert!(r.stdout.contains("  opset_import: ai.onnx 11\n"));
    assert!(!r.stdout.contains("test_data_set_0"));
    let doc = show(&[&file, "--format", "json"]).json();
    assert_eq!(doc["kind"], "model");
    assert_eq!(doc["model"]["ir_version"], 6);
}

#[test]
fn the_official_gather_test_holds_numpys_seeded_normal_values() {
    // np.random.seed(0); np.random.randn(5, 4, 3, 2).astype(np.float32) begins with these
    // (1.76405235, 0.40015721, 0.97873798, 2.2408932, 1.86755799, -0.97727788 as float64).
    let case = "testdata/onnx-node/test_gather_0";
    let doc = show(&[case, "--format", "json"]).expect_code(0).json();
    let ds = &doc["case"]["data_sets"][0];
    let data = &ds["inputs"][0]["tensor"];
    assert_eq!(data["shape"], json!([5, 4, 3, 2]));
    let values = floats(data);
    let want = [
        1.764_052_345_967_664,
        0.400_157_208_367_223_3,
        0.978_737_984_105_739_2,
        2.240_893_199_201_458,
        1.867_557_990_149_967_5,
        -0.977_277_879_876_411,
    ];
    for (got, want) in values.iter().zip(want) {
        assert_eq!(*got as f32, want as f32);
    }
    // indices [0, 1, 3] on axis 0: the expected output is those blocks of 24 values.
    assert_eq!(ds["inputs"][1]["tensor"]["values"], json!([0, 1, 3]));
    let out = floats(&ds["outputs"][0]["tensor"]);
    let blocks: Vec<f64> = [0, 1, 3]
        .iter()
        .flat_map(|&b| values[b * 24..(b + 1) * 24].to_vec())
        .collect();
    assert_eq!(out, blocks);
}

#[test]
fn hand_written_typed_fields_show_their_values() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("t.pb");
    std::fs::write(&file, INT64_2X2).unwrap();
    let r = show_path(&file, &[]);
    r.expect_code(0);
    assert!(r.stdout.contains("name:    't'\n"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("values:  4, in int64_data\n[[ 1,  2],\n [ 3, -1]]\n"),
        "{}",
        r.stdout
    );
    let t = show_path(&file, &["--format", "json"]).json()["tensor"].clone();
    assert_eq!(t["values"], json!([1, 2, 3, -1]));
    assert_eq!(t["storage"], "int64_data");

    std::fs::write(&file, FLOAT_SPECIALS).unwrap();
    let r = show_path(&file, &[]);
    assert!(
        r.stdout.ends_with("\n[ NaN,  inf, -inf,  1.5]\n"),
        "{}",
        r.stdout
    );
    let r = show_path(&file, &["--format", "json"]);
    assert_eq!(
        r.json()["tensor"]["values"],
        json!(["nan", "inf", "-inf", 1.5])
    );
}

#[test]
fn large_tensors_are_summarized_unless_full() {
    use onnx_idx_check::pb::TensorProto;
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("big.pb");
    let t = TensorProto {
        dims: vec![2000],
        data_type: 6, // INT32
        raw_data: (0..2000i32).flat_map(i32::to_le_bytes).collect(),
        name: "big".into(),
        ..Default::default()
    };
    crate::support::write_tensor(&file, &t);
    let r = show_path(&file, &[]);
    r.expect_code(0);
    assert!(
        r.stdout
            .contains("\n[   0,    1,    2, ..., 1997, 1998, 1999]\n"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("--full shows all 2000"));
    let r = show_path(&file, &["--full"]);
    assert!(r.stdout.contains(" 999, 1000, 1001,"));
    assert!(!r.stdout.contains("..."));
    let t = show_path(&file, &["--format", "json"]).json()["tensor"].clone();
    assert_eq!(t["values"].as_array().unwrap().len(), 1000);
    assert_eq!(t["values_complete"], false);
    let t = show_path(&file, &["--format", "json", "--full"]).json()["tensor"].clone();
    assert_eq!(t["values"].as_array().unwrap().len(), 2000);
    assert_eq!(t["values"][1999], 1999);
}

#[test]
fn missing_files_of_a_data_set_are_shown_as_missing() {
    let tmp = tempfile::tempdir().unwrap();
    let case = tmp.path().join("case");
    copy_case(&root().join(GATHER_DOC), &case);
    std::fs::remove_file(case.join("test_data_set_0/output_0.pb")).unwrap();
    let r = show_path(&case, &[]);
    r.expect_code(0);
    assert!(r
        .stdout
        .contains("  output_0.pb 'output': (missing: no expected output yet)\n"));
    let doc = show_path(&case, &["--format", "json"]).json();
    assert_eq!(
        doc["case"]["data_sets"][0]["outputs"][0]["status"],
        "missing"
    );

    std::fs::remove_file(case.join("test_data_set_0/input_1.pb")).unwrap();
    let r = show_path(&case, &[]);
    r.expect_code(1);
    assert!(r.stdout.contains("  input_1.pb 'indices': (missing)\n"));
}

#[test]
fn a_broken_file_of_a_case_is_shown_with_its_error_and_the_rest_still_is() {
    let r = show_path(&fixture("hostile/expected_output_claims_a_terabyte"), &[]);
    r.expect_code(1);
    let line = r
        .stdout
        .lines()
        .find(|l| l.starts_with("  output_0.pb 'output': error: "))
        .unwrap_or_else(|| panic!("{}", r.stdout));
    assert!(line.contains("test_data_set_0/output_0.pb"), "{line}");
    assert!(line.contains("1099511627776 bytes"), "{line}");
    assert!(line.contains("--max-tensor-bytes"), "{line}");
    assert!(r
        .stdout
        .contains("  input_0.pb 'data': float [2], 2 values"));

    // A model that does not decode: the data sets still show, unbound.
    let r = show_path(&fixture("hostile/empty_model"), &[]);
    r.expect_code(1);
    assert!(r
        .stdout
        .contains("model.onnx\n  error: model.onnx: the file is empty\n"));
    assert!(r
        .stdout
        .contains("  input_0.pb (no graph input at position 0): float [2], 2 values"));
    let doc = show_path(&fixture("hostile/empty_model"), &["--format", "json"]).json();
    assert_eq!(doc["case"]["model"], Value::Null);
    assert_eq!(doc["case"]["model_error"], "model.onnx: the file is empty");
}

/// PATH itself unusable: exit 2 with a message naming it and the problem, nothing on stdout.
fn refused(path: &Path, extra: &[&str], words: &[&str]) {
    let r = show_path(path, extra);
    r.expect_code(2);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    let shown = path.display().to_string();
    assert!(r.stderr.contains(&shown), "{}", r.stderr);
    for w in words {
        assert!(r.stderr.contains(w), "no '{w}' in: {}", r.stderr);
    }
}

#[test]
fn a_path_that_cannot_be_shown_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    refused(
        &tmp.path().join("nothing.pb"),
        &[],
        &["cannot read", "No such file"],
    );
    refused(
        tmp.path(),
        &[],
        &["is not a case directory (no model.onnx or model.xml in it)"],
    );

    // A truncated tensor file.
    let whole = std::fs::read(root().join(GATHER_DOC).join("test_data_set_0/input_0.pb")).unwrap();
    let cut = tmp.path().join("cut.pb");
    std::fs::write(&cut, &whole[..whole.len() / 2]).unwrap();
    refused(&cut, &[], &["not a valid ONNX TensorProto"]);

    // Garbage, and an empty file.
    let garbage = tmp.path().join("garbage.pb");
    std::fs::write(&garbage, [0xFF; 7]).unwrap();
    refused(&garbage, &[], &["not a valid ONNX TensorProto"]);
    let empty = tmp.path().join("empty.pb");
    std::fs::write(&empty, []).unwrap();
    refused(&empty, &[], &["the file is empty"]);

    // Shapes that claim more than can exist or be loaded, refused before any allocation.
    let hostile = fixture("hostile");
    refused(
        &hostile.join("expected_output_claims_a_terabyte/test_data_set_0/output_0.pb"),
        &[],
        &["1099511627776 bytes", "--max-tensor-bytes"],
    );
    refused(
        &hostile.join("dims_product_overflows/test_data_set_0/input_0.pb"),
        &[],
        &["more elements than can be addressed"],
    );
    refused(
        &root().join(GATHER_DOC).join("test_data_set_0/input_0.pb"),
        &["--max-tensor-bytes", "8"],
        &["24 bytes, more than the limit of 8 bytes"],
    );
    // A model nested past the decoder's limit.
    refused(
        &hostile.join("subgraph_nested_10000_deep/model.onnx"),
        &[],
        &["not a valid ONNX ModelProto", "recursion limit reached"],
    );
}

#[cfg(unix)]
#[test]
fn a_symbolic_link_is_not_followed_to_a_tensor() {
    let tmp = tempfile::tempdir().unwrap();
    let link = tmp.path().join("link.pb");
    std::os::unix::fs::symlink(
        root().join(GATHER_DOC).join("test_data_set_0/input_0.pb"),
        &link,
    )
    .unwrap();
    refused(&link, &[], &["not a regular file"]);
}
