//! Cases as ONNX files: the single-node `ModelProto` with the lowest IR version its opset needs,
//! and tensors as `TensorProto`s in either storage form (`raw_data` or the typed field).
//!
//! Everything is encoded with prost, which writes fields in a fixed order, so the bytes depend
//! only on the case.

use onnx_idx_check::load::save::tensor_to_proto;
use onnx_idx_check::pb::{self, TensorProto};
use onnx_idx_check::tensor::{DType, Storage, Tensor};

/// `producer_name` of every generated model, so a reader can tell them from exported tests.
pub const PRODUCER_NAME: &str = "onnx-idx-check generate";

/// The ai.onnx opset a model imports beside another domain (`org.openvinotoolkit`,
/// `com.microsoft`): a current one that runtimes of those domains accept (IR 7).
pub const ONNX_OPSET_BESIDE_DOMAIN: i64 = 13;

/// How a tensor's values are stored in its file (both forms are a coverage trait).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// `raw_data`, little-endian (strings, which the format forbids there, stay typed).
    Raw,
    /// The dtype's typed field (`float_data`, `int32_data`, ...).
    Typed,
}

/// The IR version `onnx.helper.make_model` stamps on a model importing ai.onnx `opset`: the
/// lowest IR of the ONNX release that introduced the opset (`onnx.helper.VERSION_TABLE` in ONNX
/// 1.23.2), so that runtimes accept the models (onnxruntime 1.31.1 refuses IR 14). Opsets 2-4
/// never shipped in a release; they share opset 1's IR. `None` past the table.
///
/// | opset | 1-8 | 9 | 10 | 11 | 12-14 | 15-18 | 19-20 | 21-22 | 23 | 24 | 25-27 | 28 |
/// |-------|-----|---|----|----|-------|-------|-------|-------|----|----|-------|----|
/// | IR    | 3   | 4 | 5  | 6  | 7     | 8     | 9     | 10    | 11 | 12 | 13    | 14 |
pub fn ir_version_for_opset(opset: i64) -> Option<i64> {
    Some(match opset {
        1..=8 => 3,
        9 => 4,
        10 => 5,
        11 => 6,
        12..=14 => 7,
        15..=18 => 8,
        19..=20 => 9,
        21..=22 => 10,
        23 => 11,
        24 => 12,
        25..=27 => 13,
        28 => 14,
        _ => return None,
    })
}

/// The tensor as a `TensorProto` named `name`, its values in `form`.
pub fn tensor_proto(t: &Tensor, name: &str, form: Form) -> TensorProto {
    let mut p = tensor_to_proto(t, name);
    if form == Form::Raw || t.dtype() == DType::String {
        return p;
    }
    p.raw_data = Default::default();
    // docs/semantics.md section 4: which typed field holds each dtype, and how.
    match (t.dtype(), t.storage()) {
        (DType::Float, Storage::W32(v)) => {
            p.float_data = v.iter().map(|&b| f32::from_bits(b)).collect()
        }
        (DType::Int32, Storage::W32(v)) => p.int32_data = v.iter().map(|&b| b as i32).collect(),
        (DType::Uint32, Storage::W32(v)) => {
            p.uint64_data = v.iter().map(|&b| u64::from(b)).collect()
        }
        (DType::Double, Storage::W64(v)) => {
            p.double_data = v.iter().map(|&b| f64::from_bits(b)).collect()
        }
        (DType::Int64, Storage::W64(v)) => p.int64_data = v.iter().map(|&b| b as i64).collect(),
        (DType::Uint64, Storage::W64(v)) => p.uint64_data = v.clone(),
        // (re, im) pairs of floats.
        (DType::Complex64, Storage::W64(v)) => {
            p.float_data = v
                .iter()
                .flat_map(|&b| [f32::from_bits(b as u32), f32::from_bits((b >> 32) as u32)])
                .collect();
        }
        (DType::Complex128, Storage::W128(v)) => {
            p.double_data = v
                .iter()
                .flat_map(|&b| [f64::from_bits(b as u64), f64::from_bits((b >> 64) as u64)])
                .collect();
        }
        // Signed 16-bit values sign-extended; float16, bfloat16 and uint16 as their unsigned
        // bit pattern.
        (DType::Int16, Storage::W16(v)) => {
            p.int32_data = v.iter().map(|&b| i32::from(b as i16)).collect()
        }
        (_, Storage::W16(v)) => p.int32_data = v.iter().map(|&b| i32::from(b)).collect(),
        (DType::Int8, Storage::W8(v)) => {
            p.int32_data = v.iter().map(|&b| i32::from(b as i8)).collect()
        }
        (_, Storage::W8(v)) => p.int32_data = v.iter().map(|&b| i32::from(b)).collect(),
        // Anything else (packed types, which no generated op allows) stays raw.
        _ => return tensor_to_proto(t, name),
    }
    p
}

/// A graph input or output with its type: `shape` `None` leaves the shape unknown (the output of
/// a case the spec requires an error for has none).
fn value_info(name: &str, dtype: DType, shape: Option<&[usize]>) -> pb::ValueInfoProto {
    use pb::tensor_shape_proto::{dimension::Value, Dimension};
    let shape = shape.map(|shape| pb::TensorShapeProto {
        dim: shape
            .iter()
            .map(|&d| Dimension {
                value: Some(Value::DimValue(d as i64)),
                ..Default::default()
            })
            .collect(),
    });
    pb::ValueInfoProto {
        name: name.to_owned(),
        r#type: Some(pb::TypeProto {
            value: Some(pb::type_proto::Value::TensorType(pb::type_proto::Tensor {
                elem_type: dtype.onnx_id(),
                shape,
            })),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The graph inputs (typed and shaped after their tensors) and outputs of a generated model.
fn graph_io(
    inputs: &[(&str, &Tensor)],
    outputs: &[(&str, DType, Option<Vec<usize>>)],
) -> (Vec<pb::ValueInfoProto>, Vec<pb::ValueInfoProto>) {
    (
        inputs
            .iter()
            .map(|(n, t)| value_info(n, t.dtype(), Some(t.shape())))
            .collect(),
        outputs
            .iter()
            .map(|(n, d, s)| value_info(n, *d, s.as_deref()))
            .collect(),
    )
}

/// An attribute of a generated node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Attr {
    /// An INT attribute.
    Int(&'static str, i64),
    /// A STRING attribute.
    Str(&'static str, String),
}

fn attribute(a: &Attr) -> pb::AttributeProto {
    use pb::attribute_proto::AttributeType;
    match a {
        Attr::Int(name, i) => pb::AttributeProto {
            name: (*name).to_owned(),
            r#type: AttributeType::Int as i32,
            i: Some(*i),
            ..Default::default()
        },
        Attr::Str(name, s) => pb::AttributeProto {
            name: (*name).to_owned(),
            r#type: AttributeType::String as i32,
            s: s.as_bytes().to_vec(),
            ..Default::default()
        },
    }
}

/// What a single-node model is made of.
pub struct NodeModel<'a> {
    /// The case's name: the node's and the graph's.
    pub name: &'a str,
    /// The node's domain (`""` for ai.onnx).
    pub domain: &'a str,
    /// The node's op_type.
    pub op_type: &'a str,
    /// The opset the model imports for the node's domain (ai.onnx is then imported at
    /// [`ONNX_OPSET_BESIDE_DOMAIN`] too).
    pub opset: i64,
    /// The node's attributes.
    pub attrs: &'a [Attr],
    /// Graph inputs: name and tensor (for its dtype and shape).
    pub inputs: &'a [(&'a str, &'a Tensor)],
    /// Graph outputs: name, dtype and shape (`None`: unknown, for a case the spec requires an
    /// error for, which has no output to take it from).
    pub outputs: &'a [(&'a str, DType, Option<Vec<usize>>)],
}

/// The model of one node whose inputs and outputs are the graph's, or `None` for an opset past
/// the IR version table.
pub fn model(m: &NodeModel<'_>) -> Option<pb::ModelProto> {
    let node = pb::NodeProto {
        input: m.inputs.iter().map(|(n, _)| (*n).to_owned()).collect(),
        output: m.outputs.iter().map(|(n, _, _)| (*n).to_owned()).collect(),
        name: m.name.to_owned(),
        op_type: m.op_type.to_owned(),
        domain: m.domain.to_owned(),
        attribute: m.attrs.iter().map(attribute).collect(),
        ..Default::default()
    };
    let (input, output) = graph_io(m.inputs, m.outputs);
    let graph = pb::GraphProto {
        node: vec![node],
        name: m.name.to_owned(),
        input,
        output,
        ..Default::default()
    };
    // A node of another domain imports that domain at its version, beside ai.onnx at
    // [`ONNX_OPSET_BESIDE_DOMAIN`] (as the project's own fixtures of those domains do); the IR
    // version follows the ai.onnx opset.
    let onnx_opset = if m.domain.is_empty() {
        m.opset
    } else {
        ONNX_OPSET_BESIDE_DOMAIN
    };
    let mut opset_import = vec![pb::OperatorSetIdProto {
        domain: String::new(),
        version: onnx_opset,
    }];
    if !m.domain.is_empty() {
        opset_import.push(pb::OperatorSetIdProto {
            domain: m.domain.to_owned(),
            version: m.opset,
        });
    }
    Some(pb::ModelProto {
        ir_version: ir_version_for_opset(onnx_opset)?,
        opset_import,
        producer_name: PRODUCER_NAME.to_owned(),
        producer_version: onnx_idx_check::report::TOOL.version.to_owned(),
        graph: Some(graph),
        ..Default::default()
    })
}

/// One node of a generated graph of several nodes (a case in context), its attributes already
/// in their proto form (INTS and TENSOR attributes among them).
#[derive(Clone, Debug)]
pub struct GraphNode {
    /// The node's op_type (ai.onnx).
    pub op_type: &'static str,
    /// Its input names (`""` for an omitted optional input).
    pub inputs: Vec<String>,
    /// Its output names.
    pub outputs: Vec<String>,
    /// Its attributes.
    pub attrs: Vec<pb::AttributeProto>,
}

impl GraphNode {
    /// A node of `op_type` from `inputs` to `outputs` with `attrs`.
    pub fn new(
        op_type: &'static str,
        inputs: &[&str],
        outputs: &[&str],
        attrs: Vec<pb::AttributeProto>,
    ) -> GraphNode {
        GraphNode {
            op_type,
            inputs: inputs.iter().map(|s| (*s).to_owned()).collect(),
            outputs: outputs.iter().map(|s| (*s).to_owned()).collect(),
            attrs,
        }
    }

    /// A `Constant` node writing `value` to `output`.
    pub fn constant(output: &str, value: &Tensor) -> GraphNode {
        let attr = pb::AttributeProto {
            name: "value".to_owned(),
            r#type: pb::attribute_proto::AttributeType::Tensor as i32,
            t: Some(tensor_proto(value, output, Form::Raw)),
            ..Default::default()
        };
        GraphNode::new("Constant", &[], &[output], vec![attr])
    }
}

/// An INT attribute in proto form.
pub fn int_attr(name: &str, i: i64) -> pb::AttributeProto {
    pb::AttributeProto {
        name: name.to_owned(),
        r#type: pb::attribute_proto::AttributeType::Int as i32,
        i: Some(i),
        ..Default::default()
    }
}

/// An INTS attribute in proto form.
pub fn ints_attr(name: &str, ints: &[i64]) -> pb::AttributeProto {
    pb::AttributeProto {
        name: name.to_owned(),
        r#type: pb::attribute_proto::AttributeType::Ints as i32,
        ints: ints.to_vec(),
        ..Default::default()
    }
}

/// [`attribute`] for the node under test of a graph.
pub fn attr_proto(a: &Attr) -> pb::AttributeProto {
    attribute(a)
}

/// What a model of several ai.onnx nodes is made of.
pub struct GraphModel<'a> {
    /// The case's name: the graph's.
    pub name: &'a str,
    /// The ai.onnx opset the model imports.
    pub opset: i64,
    /// The nodes, in order.
    pub nodes: &'a [GraphNode],
    /// Initializers: name and value, stored in `form`.
    pub initializers: &'a [(String, Tensor)],
    /// Graph inputs (the data sets' `input_K.pb`): name and tensor (for its dtype and shape).
    pub inputs: &'a [(&'a str, &'a Tensor)],
    /// Graph outputs: name, dtype and shape (`None`: unknown).
    pub outputs: &'a [(&'a str, DType, Option<Vec<usize>>)],
    /// How the initializers store their values.
    pub form: Form,
}

/// The model of a graph of several ai.onnx nodes, or `None` for an opset past the IR version
/// table. The nodes are named after the case and their position (`name/0`, `name/1`, ...).
pub fn graph_model(m: &GraphModel<'_>) -> Option<pb::ModelProto> {
    let node = m
        .nodes
        .iter()
        .enumerate()
        .map(|(k, n)| pb::NodeProto {
            input: n.inputs.clone(),
            output: n.outputs.clone(),
            name: format!("{}/{k}", m.name),
            op_type: n.op_type.to_owned(),
            attribute: n.attrs.clone(),
            ..Default::default()
        })
        .collect();
    let (input, output) = graph_io(m.inputs, m.outputs);
    let graph = pb::GraphProto {
        node,
        name: m.name.to_owned(),
        initializer: m
            .initializers
            .iter()
            .map(|(n, t)| tensor_proto(t, n, m.form))
            .collect(),
        input,
        output,
        ..Default::default()
    };
    Some(pb::ModelProto {
        ir_version: ir_version_for_opset(m.opset)?,
        opset_import: vec![pb::OperatorSetIdProto {
            domain: String::new(),
            version: m.opset,
        }],
        producer_name: PRODUCER_NAME.to_owned(),
        producer_version: onnx_idx_check::report::TOOL.version.to_owned(),
        graph: Some(graph),
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use onnx_idx_check::load::tensor::{tensor_from_proto, TensorContext};

    #[test]
    fn typed_storage_round_trips_through_the_loader_for_every_dtype_the_ops_allow() {
        let ctx = TensorContext {
            base_dir: std::path::Path::new("."),
            max_bytes: 1 << 20,
        };
        let mut rng = super::super::rng::Rng::for_case(3, "typed");
        for d in onnx_idx_check::tensor::dtype::CLASSIC15_BF16.iter() {
            let mut overrides: Vec<Option<u64>> = super::super::values::specials(d)
                .into_iter()
                .map(Some)
                .collect();
            overrides.push(None);
            let t = super::super::values::tensor(&mut rng, d, &[6], &overrides).unwrap();
            for form in [Form::Raw, Form::Typed] {
                let p = tensor_proto(&t, "x", form);
                let back = tensor_from_proto(&p, &ctx).unwrap();
                assert_eq!(back.storage(), t.storage(), "{d} {form:?}");
                let typed = p.raw_data.is_empty();
                assert_eq!(
                    typed,
                    form == Form::Typed || d == DType::String,
                    "{d} {form:?}"
                );
            }
        }
    }

    #[test]
    fn ir_versions_are_the_lowest_for_each_opset() {
        assert_eq!(ir_version_for_opset(1), Some(3));
        assert_eq!(ir_version_for_opset(11), Some(6));
        assert_eq!(ir_version_for_opset(13), Some(7));
        assert_eq!(ir_version_for_opset(16), Some(8));
        assert_eq!(ir_version_for_opset(18), Some(8));
        assert_eq!(ir_version_for_opset(21), Some(10));
        assert_eq!(ir_version_for_opset(29), None);
    }

    #[test]
    fn an_int_attribute_of_zero_is_written_out() {
        use prost::Message;
        // Protobuf's wire format: field 3 as a varint is the key byte 0x18, then the value. A
        // proto3 writer leaves a 0 out, and a reader asking HasField("i") finds no value.
        let bytes = int_attr("axis", 0).encode_to_vec();
        assert!(
            bytes.windows(2).any(|w| w == [0x18, 0x00]),
            "no field i in {bytes:02x?}"
        );
        let bytes = attr_proto(&Attr::Int("batch_dims", 0)).encode_to_vec();
        assert!(bytes.windows(2).any(|w| w == [0x18, 0x00]), "{bytes:02x?}");
    }
}
