//! The context operators (Shape, Reshape, Unsqueeze, Concat, ...) around an indexing operator:
//! `run` evaluates the whole graph and compares its output, `list` names them as context, and a
//! graph of context operators alone is still skipped as having no indexing operator. The models
//! are built here node by node; their expected outputs are worked out by hand.

use crate::support::{case, cases, run, run_json};
use onnx_idx_check::pb::{
    attribute_proto::AttributeType, tensor_proto::DataType, type_proto, AttributeProto, GraphProto,
    ModelProto, NodeProto, OperatorSetIdProto, TensorProto, TensorShapeProto, TypeProto,
    ValueInfoProto,
};
use prost::Message;
use std::path::Path;

fn value(name: &str, dtype: DataType) -> ValueInfoProto {
    ValueInfoProto {
        name: name.into(),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: dtype as i32,
                shape: None::<TensorShapeProto>,
            })),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn node(op: &str, inputs: &[&str], output: &str, attrs: Vec<AttributeProto>) -> NodeProto {
    NodeProto {
        op_type: op.into(),
        input: inputs.iter().map(|s| (*s).into()).collect(),
        output: vec![output.into()],
        attribute: attrs,
        ..Default::default()
    }
}

/// A Constant node holding int64 `ints` (a scalar when `scalar`).
fn constant(output: &str, ints: &[i64], scalar: bool) -> NodeProto {
    let attr = if scalar {
        AttributeProto {
            name: "value_int".into(),
            r#type: AttributeType::Int as i32,
            i: Some(ints[0]),
            ..Default::default()
        }
    } else {
        AttributeProto {
            name: "value_ints".into(),
            r#type: AttributeType::Ints as i32,
            ints: ints.to_vec(),
            ..Default::default()
        }
    };
    node("Constant", &[], output, vec![attr])
}

fn int_attr(name: &str, i: i64) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: AttributeType::Int as i32,
        i: Some(i),
        ..Default::default()
    }
}

fn floats(dims: &[i64], v: &[f32]) -> TensorProto {
    TensorProto {
        dims: dims.to_vec(),
        data_type: DataType::Float as i32,
        raw_data: v
            .iter()
            .flat_map(|f| f.to_le_bytes())
            .collect::<Vec<u8>>()
            .into(),
        ..Default::default()
    }
}

fn int64s(dims: &[i64], v: &[i64]) -> TensorProto {
    TensorProto {
        dims: dims.to_vec(),
        data_type: DataType::Int64 as i32,
        raw_data: v
            .iter()
            .flat_map(|f| f.to_le_bytes())
            .collect::<Vec<u8>>()
            .into(),
        ..Default::default()
    }
}

/// Writes a case: the model of `nodes` at opset 15 (graph inputs and outputs as given) with one
/// data set.
fn write_case(
    dir: &Path,
    nodes: Vec<NodeProto>,
    inputs: &[(&str, DataType, TensorProto)],
    outputs: &[(&str, DataType, TensorProto)],
) {
    let model = ModelProto {
        ir_version: 8,
        opset_import: vec![OperatorSetIdProto {
            domain: String::new(),
            version: 15,
        }],
        graph: Some(GraphProto {
            name: "context".into(),
            node: nodes,
            input: inputs.iter().map(|(n, d, _)| value(n, *d)).collect(),
            output: outputs.iter().map(|(n, d, _)| value(n, *d)).collect(),
            ..Default::default()
        }),
        ..Default::default()
    };
    let ds = dir.join("test_data_set_0");
    std::fs::create_dir_all(&ds).unwrap();
    std::fs::write(dir.join("model.onnx"), model.encode_to_vec()).unwrap();
    for (k, (_, _, t)) in inputs.iter().enumerate() {
        std::fs::write(ds.join(format!("input_{k}.pb")), t.encode_to_vec()).unwrap();
    }
    for (k, (_, _, t)) in outputs.iter().enumerate() {
        std::fs::write(ds.join(format!("output_{k}.pb")), t.encode_to_vec()).unwrap();
    }
}

/// `x.view(x.size(0), -1)` as exporters write it: Shape -> Gather(0) -> Unsqueeze -> Concat ->
/// Reshape.
fn shape_chain() -> Vec<NodeProto> {
    vec![
        node("Shape", &["x"], "s", vec![]),
        constant("k", &[0], true),
        node("Gather", &["s", "k"], "d", vec![]),
        constant("axes", &[0], false),
        node("Unsqueeze", &["d", "axes"], "d1", vec![]),
        constant("rest", &[-1], false),
        node(
            "Concat",
            &["d1", "rest"],
            "new_shape",
            vec![int_attr("axis", 0)],
        ),
        node("Reshape", &["x", "new_shape"], "y", vec![]),
    ]
}

const X: [f32; 12] = [
    1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0,
];

#[test]
fn the_shape_chain_is_evaluated_whole_and_lists_its_context() {
    let dir = tempfile::tempdir().unwrap();
    // [2, 3, 2] viewed as [2, 6]: the same twelve values in order.
    write_case(
        &dir.path().join("chain"),
        shape_chain(),
        &[("x", DataType::Float, floats(&[2, 3, 2], &X))],
        &[("y", DataType::Float, floats(&[2, 6], &X))],
    );
    // The same graph with the view the chain does not make ([6, 2]): must fail.
    write_case(
        &dir.path().join("chain_wrong_shape"),
        shape_chain(),
        &[("x", DataType::Float, floats(&[2, 3, 2], &X))],
        &[("y", DataType::Float, floats(&[6, 2], &X))],
    );
    let (code, report) = run_json(dir.path(), &[]);
    assert_eq!(code, 1, "{report:#}");
    let ok = case(&report, "chain");
    assert_eq!(ok["status"], "passed", "{ok:#}");
    let bad = case(&report, "chain_wrong_shape");
    assert_eq!(bad["status"], "failed", "{bad:#}");
    // `list` names the context operators apart from the operator under test.
    let r = run(["list", dir.path().join("chain").to_str().unwrap()]);
    r.expect_code(0);
    assert!(
        r.stdout.contains(
            "Constant-13 Gather-13 (context: Shape-15 Unsqueeze-13 Concat-13 Reshape-14)"
        ),
        "{}",
        r.stdout
    );
    let r = run([
        "list",
        dir.path().join("chain").to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(
        r.json()[0]["context"],
        serde_json::json!(["Shape-15", "Unsqueeze-13", "Concat-13", "Reshape-14"])
    );
}

#[test]
fn a_graph_of_context_operators_alone_is_skipped_as_having_no_indexing_operator() {
    let dir = tempfile::tempdir().unwrap();
    write_case(
        dir.path(),
        vec![node("Shape", &["x"], "y", vec![])],
        &[("x", DataType::Float, floats(&[2, 3, 2], &X))],
        &[("y", DataType::Int64, int64s(&[3], &[2, 3, 2]))],
    );
    let (code, report) = run_json(dir.path(), &[]);
    assert_eq!(code, 0, "{report:#}");
    let c = &cases(&report)[0];
    assert_eq!(c["status"], "skipped");
    assert_eq!(
        c["reason"],
        "op Shape (ai.onnx, opset 15) is not supported on its own: the graph has no indexing operator"
    );
    let r = run(["list", dir.path().to_str().unwrap(), "--format", "json"]);
    assert_eq!(r.json()[0]["status"], "unsupported");
}

#[test]
fn a_context_operator_the_spec_refuses_errs_the_case_naming_it() {
    // Gather picks rows [0] of [2, 3, 2]: 6 values, which no shape [5, -1] holds.
    let dir = tempfile::tempdir().unwrap();
    write_case(
        dir.path(),
        vec![
            constant("k", &[0], false),
            node("Gather", &["x", "k"], "g", vec![]),
            constant("shape", &[5, -1], false),
            node("Reshape", &["g", "shape"], "y", vec![]),
        ],
        &[("x", DataType::Float, floats(&[2, 3, 2], &X))],
        &[("y", DataType::Float, floats(&[6], &X[..6]))],
    );
    let (code, report) = run_json(dir.path(), &[]);
    assert_eq!(code, 1, "{report:#}");
    let c = &cases(&report)[0];
    assert_eq!(c["status"], "errored", "{c:#}");
    let reason = c["reason"].as_str().unwrap();
    assert!(
        reason.contains("Reshape-14") && reason.contains("[5, -1]"),
        "{reason}"
    );
}
