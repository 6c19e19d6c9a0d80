//! `show --format json`: the same content as the human view, as data. This file is the only
//! definition of its shape; bump [`SCHEMA_VERSION`] on any incompatible change.
//!
//! Values are one flat array in row-major order beside the shape: numbers for numeric types
//! (`"nan"`, `"inf"`, `"-inf"` for non-finite floats, which JSON cannot hold), `true`/`false`,
//! strings (decoded as UTF-8, invalid bytes replaced), `[re, im]` pairs for complex numbers.
//! Unless every value is asked for, a tensor of more than [`SUMMARY_THRESHOLD`] values holds its
//! first [`SUMMARY_THRESHOLD`] and says `values_complete: false`.

use super::layout::SUMMARY_THRESHOLD;
use super::{
    attr_type_name, node_domain, storage, AttrValue, CaseView, DataSetView, Dim, Model, Shown,
    Slot, SlotContent, TensorFile, ValueType,
};
use onnx_idx_check::load::LoadedTensor;
use onnx_idx_check::tensor::value::{scalar, Scalar};
use onnx_idx_check::tensor::{DType, Tensor};
use serde::ser::{SerializeSeq, Serializer};
use serde::Serialize;

/// The schema version written as `schema_version`.
pub const SCHEMA_VERSION: u32 = 1;

/// The whole document.
#[derive(Debug, Serialize)]
pub struct Document<'a> {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// `tensor`, `model` or `case`: which of the next fields is set.
    pub kind: &'static str,
    /// A tensor file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tensor: Option<JsonTensor<'a>>,
    /// A model file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<JsonModel<'a>>,
    /// A case directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub case: Option<JsonCase<'a>>,
}

/// A tensor with its values.
#[derive(Debug, Serialize)]
pub struct JsonTensor<'a> {
    /// The file given as PATH; absent in a case (the data set's entry names it) and for tensors
    /// inside a model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<&'a str>,
    /// sha256 of the file, in hex.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256: Option<&'a str>,
    /// The name stored in the tensor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<&'a str>,
    /// Element type.
    pub dtype: &'static str,
    /// Shape.
    pub shape: &'a [usize],
    /// Number of values.
    pub numel: usize,
    /// Where the values were stored: `raw_data`, the typed field (`float_data`, ...), `external
    /// data` or `no data`; absent for tensors inside a model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub storage: Option<&'static str>,
    /// The values, flat, in row-major order.
    pub values: Values<'a>,
    /// Whether `values` holds every value.
    pub values_complete: bool,
}

/// The first `count` values of a tensor, serialised one by one (never collected).
#[derive(Debug)]
pub struct Values<'a> {
    tensor: &'a Tensor,
    count: usize,
}

impl Serialize for Values<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.count))?;
        for i in 0..self.count {
            seq.serialize_element(&Element(self.tensor, i))?;
        }
        seq.end()
    }
}

/// Element `i` of a tensor as a JSON value.
struct Element<'a>(&'a Tensor, usize);

impl Serialize for Element<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Element(t, i) = *self;
        // f32-based types print their shortest f32 form (`0.1`, not `0.10000000149011612`).
        let narrow = matches!(t.dtype(), DType::Float | DType::Float16 | DType::Bfloat16);
        match scalar(t, i) {
            Some(Scalar::Real { value, .. }) => JsonFloat::new(value, narrow).serialize(s),
            Some(Scalar::Complex { re, im, .. }) => {
                let narrow = t.dtype() == DType::Complex64;
                [JsonFloat::new(re, narrow), JsonFloat::new(im, narrow)].serialize(s)
            }
            Some(Scalar::Int(v)) => match (i64::try_from(v), u64::try_from(v)) {
                (Ok(v), _) => s.serialize_i64(v),
                (_, Ok(v)) => s.serialize_u64(v),
                _ => s.serialize_str(&v.to_string()),
            },
            Some(Scalar::Bool(b)) => s.serialize_bool(b),
            Some(Scalar::Bytes(b)) => s.serialize_str(&String::from_utf8_lossy(b)),
            None => s.serialize_none(),
        }
    }
}

/// A float as a JSON number, or `"nan"`, `"inf"`, `"-inf"`; `narrow` (an f32 or narrower
/// value) prints its shortest f32 form.
#[derive(Clone, Copy, Debug)]
pub struct JsonFloat {
    value: f64,
    narrow: bool,
}

impl JsonFloat {
    fn new(value: f64, narrow: bool) -> JsonFloat {
        JsonFloat { value, narrow }
    }
}

impl From<f32> for JsonFloat {
    fn from(f: f32) -> JsonFloat {
        JsonFloat::new(f64::from(f), true)
    }
}

impl Serialize for JsonFloat {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let JsonFloat { value: v, narrow } = *self;
        if v.is_nan() {
            s.serialize_str("nan")
        } else if v.is_infinite() {
            s.serialize_str(if v > 0.0 { "inf" } else { "-inf" })
        } else if narrow {
            s.serialize_f32(v as f32)
        } else {
            s.serialize_f64(v)
        }
    }
}

/// A model.
#[derive(Debug, Serialize)]
pub struct JsonModel<'a> {
    /// The file.
    pub file: &'a str,
    /// sha256 of the file, in hex.
    pub sha256: &'a str,
    /// `ir_version`.
    pub ir_version: i64,
    /// `producer_name`.
    pub producer_name: &'a str,
    /// `producer_version`.
    pub producer_version: &'a str,
    /// `domain`.
    pub domain: &'a str,
    /// `model_version`.
    pub model_version: i64,
    /// `opset_import`, in file order (`ai.onnx` for the default domain).
    pub opset_import: Vec<JsonOpset<'a>>,
    /// The main graph (null when the model has none).
    pub graph: Option<JsonGraph<'a>>,
}

/// One opset import.
#[derive(Debug, Serialize)]
pub struct JsonOpset<'a> {
    /// Domain.
    pub domain: &'a str,
    /// Version.
    pub version: i64,
}

/// The main graph.
#[derive(Debug, Serialize)]
pub struct JsonGraph<'a> {
    /// Name.
    pub name: &'a str,
    /// Declared inputs, in order.
    pub inputs: Vec<JsonValueInfo<'a>>,
    /// Declared outputs, in order.
    pub outputs: Vec<JsonValueInfo<'a>>,
    /// Initializers, in order.
    pub initializers: Vec<JsonInitializer<'a>>,
    /// Nodes, in order.
    pub nodes: Vec<JsonNode<'a>>,
}

/// A declared graph input or output.
#[derive(Debug, Serialize)]
pub struct JsonValueInfo<'a> {
    /// Name.
    pub name: &'a str,
    /// `tensor`, `sparse tensor`, `sequence`, `map`, `optional`, `opaque` or `unknown`.
    pub kind: &'static str,
    /// Element type of a tensor (`undefined`, or `type N` for an unknown id); null otherwise.
    pub dtype: Option<String>,
    /// Dims: a number, a symbolic name, or null when unknown; null for an unknown rank.
    pub shape: Option<Vec<Dim>>,
    /// For an input: whether an initializer gives it a default (data sets do not bind to it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub has_initializer: Option<bool>,
}

/// An initializer: its tensor, or why it does not decode.
#[derive(Debug, Serialize)]
pub struct JsonInitializer<'a> {
    /// Name.
    pub name: &'a str,
    /// The tensor (null on error).
    pub tensor: Option<JsonTensor<'a>>,
    /// Why it could not be read (null when it could).
    pub error: Option<&'a str>,
}

/// A node.
#[derive(Debug, Serialize)]
pub struct JsonNode<'a> {
    /// Name (may be empty).
    pub name: &'a str,
    /// Operator.
    pub op_type: &'a str,
    /// Domain (`ai.onnx` for the default).
    pub domain: &'a str,
    /// Input names (empty: an omitted optional input).
    pub inputs: &'a [String],
    /// Output names.
    pub outputs: &'a [String],
    /// Attributes, in order.
    pub attributes: Vec<JsonAttribute<'a>>,
}

/// An attribute.
#[derive(Debug, Serialize)]
pub struct JsonAttribute<'a> {
    /// Name.
    pub name: &'a str,
    /// Type as the proto names it (`INT`, `STRING`, `TENSOR`, ...).
    #[serde(rename = "type")]
    pub kind: String,
    /// The value: a number, a string, a list, a tensor object, `{"graph": name, "nodes": N}`,
    /// or null for types not shown.
    pub value: JsonAttrValue<'a>,
    /// Why a TENSOR attribute could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'a str>,
}

/// An attribute's value.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum JsonAttrValue<'a> {
    /// INT.
    Int(i64),
    /// FLOAT.
    Float(JsonFloat),
    /// STRING.
    Str(String),
    /// INTS.
    Ints(&'a [i64]),
    /// FLOATS.
    Floats(Vec<JsonFloat>),
    /// STRINGS.
    Strings(Vec<String>),
    /// TENSOR.
    Tensor(Box<JsonTensor<'a>>),
    /// GRAPH.
    Graph {
        /// The subgraph's name.
        graph: &'a str,
        /// Its node count.
        nodes: usize,
    },
    /// Not shown (null).
    None,
}

/// A case.
#[derive(Debug, Serialize)]
pub struct JsonCase<'a> {
    /// The directory as given.
    pub path: &'a str,
    /// The model (null when it could not be read).
    pub model: Option<JsonModel<'a>>,
    /// Why the model could not be read (null when it could).
    pub model_error: Option<&'a str>,
    /// Directories that could not be listed.
    pub errors: &'a [String],
    /// The data sets in numeric order.
    pub data_sets: Vec<JsonDataSet<'a>>,
}

/// A data set.
#[derive(Debug, Serialize)]
pub struct JsonDataSet<'a> {
    /// `test_data_set_N`.
    pub name: &'a str,
    /// Why its files could not be listed.
    pub error: Option<&'a str>,
    /// `input_K.pb` by K.
    pub inputs: Vec<JsonSlot<'a>>,
    /// `output_K.pb` by K.
    pub outputs: Vec<JsonSlot<'a>>,
}

/// One `input_K.pb` or `output_K.pb`.
#[derive(Debug, Serialize)]
pub struct JsonSlot<'a> {
    /// `input_K.pb` or `output_K.pb`.
    pub file: &'a str,
    /// K.
    pub position: u64,
    /// The graph input or output it binds to by position, or null.
    pub bound_to: Option<&'a str>,
    /// `ok`, `missing` or `error`.
    pub status: &'static str,
    /// The tensor (when `ok`).
    pub tensor: Option<JsonTensor<'a>>,
    /// Why it could not be read (when `error`).
    pub error: Option<&'a str>,
}

/// The document as pretty-printed JSON with a trailing newline.
pub fn render(shown: &Shown, full: bool) -> serde_json::Result<String> {
    let mut doc = Document {
        schema_version: SCHEMA_VERSION,
        kind: "",
        tensor: None,
        model: None,
        case: None,
    };
    match shown {
        Shown::Tensor(f) => {
            doc.kind = "tensor";
            doc.tensor = Some(tensor_file(f, full));
        }
        Shown::Model(m) => {
            doc.kind = "model";
            doc.model = Some(model(m, full));
        }
        Shown::Case(c) => {
            doc.kind = "case";
            doc.case = Some(case(c, full));
        }
    }
    let mut s = serde_json::to_string_pretty(&doc)?;
    s.push('\n');
    Ok(s)
}

fn tensor(t: &Tensor, full: bool) -> JsonTensor<'_> {
    let n = t.numel();
    let count = if full { n } else { n.min(SUMMARY_THRESHOLD) };
    JsonTensor {
        file: None,
        sha256: None,
        name: None,
        dtype: t.dtype().name(),
        shape: t.shape(),
        numel: n,
        storage: None,
        values: Values { tensor: t, count },
        values_complete: count == n,
    }
}

fn loaded<'a>(file: Option<&'a str>, t: &'a LoadedTensor, full: bool) -> JsonTensor<'a> {
    JsonTensor {
        file,
        sha256: t.sha256.as_deref(),
        name: Some(&t.name),
        storage: Some(storage(t)),
        ..tensor(&t.tensor, full)
    }
}

fn tensor_file(f: &TensorFile, full: bool) -> JsonTensor<'_> {
    loaded(Some(&f.file), &f.loaded, full)
}

fn model(m: &Model, full: bool) -> JsonModel<'_> {
    let p = &m.proto;
    JsonModel {
        file: &m.file,
        sha256: &m.sha256,
        ir_version: p.ir_version,
        producer_name: &p.producer_name,
        producer_version: &p.producer_version,
        domain: &p.domain,
        model_version: p.model_version,
        opset_import: p
            .opset_import
            .iter()
            .map(|o| JsonOpset {
                domain: onnx_idx_check::eval::display_domain(
                    onnx_idx_check::ops::canonical_domain(&o.domain),
                ),
                version: o.version,
            })
            .collect(),
        graph: p.graph.as_ref().map(|g| {
            let data_inputs = onnx_idx_check::eval::data_inputs(g);
            JsonGraph {
                name: &g.name,
                inputs: g
                    .input
                    .iter()
                    .map(|v| JsonValueInfo {
                        has_initializer: Some(!data_inputs.iter().any(|d| std::ptr::eq(*d, v))),
                        ..value_info(v)
                    })
                    .collect(),
                outputs: g.output.iter().map(value_info).collect(),
                initializers: g
                    .initializer
                    .iter()
                    .zip(&m.initializers)
                    .map(|(proto, t)| JsonInitializer {
                        name: &proto.name,
                        tensor: t.as_ref().ok().map(|t| tensor(t, full)),
                        error: t.as_ref().err().map(String::as_str),
                    })
                    .collect(),
                nodes: g
                    .node
                    .iter()
                    .enumerate()
                    .map(|(i, node)| JsonNode {
                        name: &node.name,
                        op_type: &node.op_type,
                        domain: node_domain(node),
                        inputs: &node.input,
                        outputs: &node.output,
                        attributes: node
                            .attribute
                            .iter()
                            .enumerate()
                            .map(|(a, attr)| attribute(m, i, a, attr, full))
                            .collect(),
                    })
                    .collect(),
            }
        }),
    }
}

fn value_info(v: &onnx_idx_check::pb::ValueInfoProto) -> JsonValueInfo<'_> {
    let t = ValueType::of(v);
    let tensor = matches!(t.kind, "tensor" | "sparse tensor");
    JsonValueInfo {
        name: &v.name,
        kind: t.kind,
        dtype: tensor.then(|| t.dtype_name()),
        shape: t.shape,
        has_initializer: None,
    }
}

fn attribute<'a>(
    m: &'a Model,
    node: usize,
    a: usize,
    attr: &'a onnx_idx_check::pb::AttributeProto,
    full: bool,
) -> JsonAttribute<'a> {
    let text = |s: &[u8]| String::from_utf8_lossy(s).into_owned();
    let mut error = None;
    let value = match AttrValue::of(attr) {
        AttrValue::Int(i) => JsonAttrValue::Int(i),
        AttrValue::Float(f) => JsonAttrValue::Float(f.into()),
        AttrValue::Str(s) => JsonAttrValue::Str(text(s)),
        AttrValue::Ints(v) => JsonAttrValue::Ints(v),
        AttrValue::Floats(v) => JsonAttrValue::Floats(v.iter().map(|&f| f.into()).collect()),
        AttrValue::Strings(v) => JsonAttrValue::Strings(v.iter().map(|s| text(s)).collect()),
        AttrValue::Tensor => match m.tensor_attribute(node, a) {
            Some(Ok(t)) => JsonAttrValue::Tensor(Box::new(tensor(t, full))),
            Some(Err(e)) => {
                error = Some(e.as_str());
                JsonAttrValue::None
            }
            None => JsonAttrValue::None,
        },
        AttrValue::Graph(name, nodes) => JsonAttrValue::Graph { graph: name, nodes },
        AttrValue::Other(_) => JsonAttrValue::None,
    };
    JsonAttribute {
        name: &attr.name,
        kind: attr_type_name(attr),
        value,
        error,
    }
}

fn case(c: &CaseView, full: bool) -> JsonCase<'_> {
    JsonCase {
        path: &c.dir,
        model: c.model.as_ref().ok().map(|m| model(m, full)),
        model_error: c.model.as_ref().err().map(String::as_str),
        errors: &c.warnings,
        data_sets: c.data_sets.iter().map(|d| data_set(d, full)).collect(),
    }
}

fn data_set(d: &DataSetView, full: bool) -> JsonDataSet<'_> {
    JsonDataSet {
        name: &d.name,
        error: d.error.as_deref(),
        inputs: d.inputs.iter().map(|s| slot(s, full)).collect(),
        outputs: d.outputs.iter().map(|s| slot(s, full)).collect(),
    }
}

fn slot(s: &Slot, full: bool) -> JsonSlot<'_> {
    let (status, tensor, error) = match &s.content {
        SlotContent::Loaded(t) => ("ok", Some(loaded(None, t, full)), None),
        SlotContent::Missing => ("missing", None, None),
        SlotContent::Error(e) => ("error", None, Some(e.as_str())),
    };
    JsonSlot {
        file: &s.file,
        position: s.position,
        bound_to: s.bound_to.as_deref(),
        status,
        tensor,
        error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Through the text, as the command writes it (`to_value` would widen f32 to f64 first).
    fn json(t: &Tensor, full: bool) -> serde_json::Value {
        serde_json::from_str(&serde_json::to_string(&tensor(t, full)).unwrap()).unwrap()
    }

    #[test]
    fn non_finite_floats_are_strings_and_floats_print_shortest() {
        let t = Tensor::from_vec(
            vec![5],
            vec![0.1f32, f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0],
        )
        .unwrap();
        let v = json(&t, false);
        assert_eq!(
            serde_json::to_string(&v["values"]).unwrap(),
            r#"[0.1,"nan","inf","-inf",-0.0]"#
        );
        assert_eq!(v["values_complete"], true);
        assert_eq!(v["shape"], serde_json::json!([5]));
    }

    #[test]
    fn integers_bools_strings_and_complex_numbers_keep_their_kind() {
        let t = Tensor::from_vec(vec![2], vec![u64::MAX, 1]).unwrap();
        assert_eq!(
            serde_json::to_string(&json(&t, false)["values"]).unwrap(),
            "[18446744073709551615,1]"
        );
        let t = Tensor::from_vec(vec![2], vec![true, false]).unwrap();
        assert_eq!(json(&t, false)["values"], serde_json::json!([true, false]));
        let t = Tensor::from_vec(vec![1], vec![b"\xffa".to_vec()]).unwrap();
        assert_eq!(json(&t, false)["values"], serde_json::json!(["\u{fffd}a"]));
        let t = Tensor::from_vec(vec![1], vec![num_complex::Complex32::new(1.5, -2.0)]).unwrap();
        assert_eq!(json(&t, false)["values"], serde_json::json!([[1.5, -2.0]]));
    }

    #[test]
    fn large_tensors_hold_their_first_values_unless_full() {
        let t = Tensor::from_vec(vec![1001], (0..1001i64).collect()).unwrap();
        let v = json(&t, false);
        assert_eq!(v["values"].as_array().unwrap().len(), SUMMARY_THRESHOLD);
        assert_eq!(v["values_complete"], false);
        assert_eq!(v["numel"], 1001);
        let v = json(&t, true);
        assert_eq!(v["values"].as_array().unwrap().len(), 1001);
        assert_eq!(v["values_complete"], true);
    }
}
