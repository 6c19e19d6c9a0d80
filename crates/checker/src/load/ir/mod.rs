//! OpenVINO IR cases: `model.xml` + `model.bin` (IR v10 and v11) in place of `model.onnx`.
//!
//! The IR is read into the [`ModelProto`] the ONNX loader would have produced for the same graph,
//! so that planning, evaluation, comparison and every report treat both formats alike:
//!
//! | IR layer | becomes |
//! |---|---|
//! | `Parameter` | a graph input (its `element_type` and `shape`), in layer order: `input_K.pb` binds to the K-th |
//! | `Const` | an initializer whose bytes are `model.bin[offset..offset + size]` |
//! | `Gather` (`opset1`, `opset7`, `opset8`) | a node of domain `org.openvinotoolkit`, which the model imports at that version, its `<data>` attributes as node attributes |
//! | `Result` | a graph output, in layer order: `output_K.pb` binds to the K-th |
//!
//! Any other layer type is skipped with the reason, as an unknown ONNX op is (D1). A Parameter's
//! tensor is named after the layer (what OpenVINO calls the input); any other output port's after
//! its first tensor name (`names`, IR v11), else `<layer id>:<port id>`. Two ports carrying one
//! name make an invalid model, as two ONNX nodes writing one tensor do (D15).
//!
//! Nothing is taken on trust: ids, ports and edges are checked (an edge to a missing port, an
//! input port fed twice or never, a cycle are invalid models), every dimension and element count
//! uses checked arithmetic, and a Const's `offset` and `size` are checked against its shape and
//! against `model.bin`'s actual length before anything is allocated; `model.bin` is read only as a
//! regular file in the case directory, never through a symbolic link. One model may not mix Gather
//! versions (the plan resolves one version per domain, D1): such an IR is skipped with the reason.

pub mod write;
pub mod xml;

use super::{open_no_follow, LoadError};
use crate::pb::{
    attribute_proto::AttributeType, tensor_shape_proto, type_proto, AttributeProto, GraphProto,
    ModelProto, NodeProto, OperatorSetIdProto, TensorProto, TensorShapeProto, TypeProto,
    ValueInfoProto,
};
use crate::tensor::shape_text;
use crate::tensor::DType;
use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use thiserror::Error;
use xml::{Dim, Document, Layer};

/// The IR's topology file in a case directory.
pub const XML_FILE: &str = "model.xml";
/// The IR's weights file in a case directory.
pub const BIN_FILE: &str = "model.bin";
/// The domain IR Gather layers are planned in (docs/semantics.md D13).
pub const DOMAIN: &str = "org.openvinotoolkit";
/// The Gather versions the reader maps (`version="opsetN"`).
pub const GATHER_VERSIONS: [i64; 3] = [1, 7, 8];

/// Why an IR cannot be read into a model. `Invalid` makes the case errored, `Unsupported`
/// skipped.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum IrError {
    /// `model.xml` is not well-formed, or is hostile (a DTD, undefined entities, deep nesting).
    #[error("{0}")]
    Xml(#[from] xml::XmlError),
    /// The case's time (`--timeout`) ran out while the file was read.
    #[error("{0}")]
    TimedOut(#[from] crate::deadline::TimedOut),
    /// The document breaks the IR's rules: ids, ports, edges, shapes, types, offsets.
    #[error("{0}")]
    Invalid(String),
    /// The IR is valid but uses something this tool does not implement.
    #[error("{0}")]
    Unsupported(String),
}

/// An IR read into a model, with the digests of its files when asked for.
#[derive(Debug)]
pub struct IrModel {
    /// The graph as the ONNX loader would have produced it.
    pub model: ModelProto,
    /// `(file, sha256 hex)` of `model.xml` and (when present) `model.bin`.
    pub files: Vec<(String, String)>,
}

/// Reads `model.xml` and `model.bin` of the case directory `dir` into a model. `limit` bounds the
/// size of `model.xml`; `max_tensor_bytes` that of any one Const.
pub fn load_ir(
    dir: &Path,
    limit: u64,
    max_tensor_bytes: usize,
    digest: bool,
) -> Result<IrModel, LoadError> {
    let bytes = super::read_file(&dir.join(XML_FILE), XML_FILE, limit)?;
    if bytes.is_empty() {
        return Err(LoadError::Empty {
            file: XML_FILE.to_string(),
        });
    }
    let mut files = Vec::new();
    if digest {
        files.push((XML_FILE.to_string(), super::sha256_hex(&bytes)));
    }
    let ir = |file: &str, source: IrError| LoadError::Ir {
        file: file.to_string(),
        source: Box::new(source),
    };
    let doc = xml::parse(&bytes).map_err(|e| ir(XML_FILE, e))?;
    drop(bytes);
    let graph = Graph::check(&doc).map_err(|e| ir(XML_FILE, e))?;
    let consts = graph.consts(&doc).map_err(|e| ir(XML_FILE, e))?;
    let weights = if consts.is_empty() {
        Vec::new()
    } else {
        let bin = dir.join(BIN_FILE);
        let (w, sha) = read_weights(&bin, &consts, max_tensor_bytes, digest)?;
        if let Some(sha) = sha {
            files.push((BIN_FILE.to_string(), sha));
        }
        w
    };
    let model = graph
        .lower(&doc, consts, weights)
        .map_err(|e| ir(XML_FILE, e))?;
    Ok(IrModel { model, files })
}

/// A layer label for messages: `layer 'name' (id 3, Gather opset8)`.
fn label(l: &Layer) -> String {
    let kind = if l.version.is_empty() {
        l.kind.clone()
    } else {
        format!("{} {}", l.kind, l.version)
    };
    format!("layer '{}' (id {}, {kind})", l.name, l.id)
}

/// The checked topology: layer order and, for each input port, the tensor feeding it.
struct Graph {
    /// Layer indices (into `Document::layers`) in an order where producers come first.
    order: Vec<usize>,
    /// `(layer index, input port position)` -> tensor name.
    feeds: HashMap<(usize, usize), String>,
}

/// The name of the tensor an output port carries: a Parameter's layer name (what OpenVINO calls
/// the input), else the port's first tensor name (`names`, IR v11), else `<layer id>:<port id>`.
fn tensor_name(doc: &Document, layer: usize, port: usize) -> String {
    let l = &doc.layers[layer];
    let p = &l.outputs[port];
    let first = p
        .names
        .as_deref()
        .and_then(|n| n.split(',').next())
        .map(str::trim)
        .filter(|n| !n.is_empty());
    if l.kind == "Parameter" && !l.name.is_empty() {
        l.name.clone()
    } else if let Some(n) = first {
        n.to_string()
    } else {
        format!("{}:{}", l.id, p.id)
    }
}

impl Graph {
    /// Checks ids, ports and edges, and orders the layers (a cycle is invalid).
    fn check(doc: &Document) -> Result<Graph, IrError> {
        let invalid = |m: String| Err(IrError::Invalid(m));
        match doc.version.as_str() {
            "10" | "11" => {}
            "" => {
                return invalid("<net> has no version attribute (IR v10 and v11 are read)".into())
            }
            v => {
                return Err(IrError::Unsupported(format!(
                    "IR version {} is not supported (v10 and v11 are)",
                    xml::shorten(v)
                )))
            }
        }
        let mut by_id: HashMap<&str, usize> = HashMap::new();
        for (i, l) in doc.layers.iter().enumerate() {
            if l.id.is_empty() {
                return invalid(format!("line {}: a <layer> has no id", l.line));
            }
            if l.kind.is_empty() {
                return invalid(format!("line {}: {} has no type", l.line, label(l)));
            }
            if let Some(j) = by_id.insert(l.id.as_str(), i) {
                return invalid(format!(
                    "line {}: layers '{}' and '{}' share id {}",
                    l.line, doc.layers[j].name, l.name, l.id
                ));
            }
            let mut ports: Vec<&str> = Vec::new();
            for p in l.inputs.iter().chain(&l.outputs) {
                if p.id.is_empty() {
                    return invalid(format!("line {}: a port of {} has no id", p.line, label(l)));
                }
                if ports.contains(&p.id.as_str()) {
                    return invalid(format!(
                        "line {}: {} has two ports with id {}",
                        p.line,
                        label(l),
                        p.id
                    ));
                }
                ports.push(&p.id);
            }
        }
        // Every output port's tensor has its own name (SSA, D15).
        let mut carried: HashMap<String, (usize, &str)> = HashMap::new();
        for (i, l) in doc.layers.iter().enumerate() {
            for (k, p) in l.outputs.iter().enumerate() {
                let name = tensor_name(doc, i, k);
                if let Some((j, port)) = carried.insert(name.clone(), (i, p.id.as_str())) {
                    return invalid(format!(
                        "line {}: output port {} of {} and output port {port} of {} both carry tensor '{name}'",
                        p.line,
                        p.id,
                        label(l),
                        label(&doc.layers[j])
                    ));
                }
            }
        }
        let mut feeds: HashMap<(usize, usize), String> = HashMap::new();
        // Consumers of each layer, for the topological order.
        let mut users: Vec<Vec<usize>> = vec![Vec::new(); doc.layers.len()];
        let mut pending: Vec<usize> = vec![0; doc.layers.len()];
        for e in &doc.edges {
            let at = format!(
                "line {}: edge {}:{} -> {}:{}",
                e.line, e.from_layer, e.from_port, e.to_layer, e.to_port
            );
            let Some(&from) = by_id.get(e.from_layer.as_str()) else {
                return invalid(format!(
                    "{at} starts at layer id {}, which does not exist",
                    e.from_layer
                ));
            };
            let Some(&to) = by_id.get(e.to_layer.as_str()) else {
                return invalid(format!(
                    "{at} ends at layer id {}, which does not exist",
                    e.to_layer
                ));
            };
            let Some(out) = doc.layers[from]
                .outputs
                .iter()
                .position(|p| p.id == e.from_port)
            else {
                return invalid(format!(
                    "{at} starts at port {} of {}, which has no such output port",
                    e.from_port,
                    label(&doc.layers[from])
                ));
            };
            let Some(inp) = doc.layers[to].inputs.iter().position(|p| p.id == e.to_port) else {
                return invalid(format!(
                    "{at} ends at port {} of {}, which has no such input port",
                    e.to_port,
                    label(&doc.layers[to])
                ));
            };
            if feeds
                .insert((to, inp), tensor_name(doc, from, out))
                .is_some()
            {
                return invalid(format!(
                    "{at}: input port {} of {} is fed by two edges",
                    e.to_port,
                    label(&doc.layers[to])
                ));
            }
            users[from].push(to);
            pending[to] += 1;
        }
        for (i, l) in doc.layers.iter().enumerate() {
            if let Some(p) = (0..l.inputs.len()).find(|&p| !feeds.contains_key(&(i, p))) {
                return invalid(format!(
                    "line {}: input port {} of {} is not connected by any edge",
                    l.inputs[p].line,
                    l.inputs[p].id,
                    label(l)
                ));
            }
        }
        // Kahn's algorithm, taking ready layers in document order.
        let mut ready: std::collections::BTreeSet<usize> =
            (0..doc.layers.len()).filter(|&i| pending[i] == 0).collect();
        let mut order = Vec::with_capacity(doc.layers.len());
        while let Some(i) = ready.pop_first() {
            order.push(i);
            for &u in &users[i] {
                pending[u] -= 1;
                if pending[u] == 0 {
                    ready.insert(u);
                }
            }
        }
        if order.len() < doc.layers.len() {
            let stuck: Vec<String> = (0..doc.layers.len())
                .filter(|&i| pending[i] > 0)
                .take(5)
                .map(|i| format!("'{}' (id {})", doc.layers[i].name, doc.layers[i].id))
                .collect();
            return invalid(format!(
                "the edges form a cycle: layers {} wait on each other",
                stuck.join(", ")
            ));
        }
        Ok(Graph { order, feeds })
    }

    /// The Const layers, in document order, with their checked placement in `model.bin`.
    fn consts(&self, doc: &Document) -> Result<Vec<ConstSpec>, IrError> {
        let mut out = Vec::new();
        for (i, l) in doc.layers.iter().enumerate() {
            if l.kind != "Const" {
                continue;
            }
            // Before anything names the Const's tensor after its one output port (found by
            // fuzzing: a Const without ports indexed past the end of its port list).
            if !l.inputs.is_empty() || l.outputs.len() != 1 {
                return Err(IrError::Invalid(format!(
                    "{} has {} input and {} output port(s); a Const has 0 and 1",
                    label(l),
                    l.inputs.len(),
                    l.outputs.len()
                )));
            }
            let dtype = element_type(l)?;
            let shape = shape_attr(l)?;
            let numel = shape
                .iter()
                .try_fold(1usize, |a, &d| a.checked_mul(d))
                .ok_or_else(|| {
                    IrError::Invalid(format!(
                        "{}: shape {} overflows",
                        label(l),
                        shape_text(&shape)
                    ))
                })?;
            let bytes = crate::tensor::byte_len(dtype, numel).ok_or_else(|| {
                IrError::Invalid(format!(
                    "{}: shape {} overflows",
                    label(l),
                    shape_text(&shape)
                ))
            })?;
            let num = |key: &str| -> Result<u64, IrError> {
                let v = l.data.get(key).ok_or_else(|| {
                    IrError::Invalid(format!("{}: <data> has no '{key}'", label(l)))
                })?;
                v.trim().parse::<u64>().map_err(|_| {
                    IrError::Invalid(format!(
                        "{}: {key} '{}' is not a byte count",
                        label(l),
                        xml::shorten(v)
                    ))
                })
            };
            let (offset, size) = (num("offset")?, num("size")?);
            if size != bytes as u64 {
                return Err(IrError::Invalid(format!(
                    "{}: size {size} does not match its {numel} {dtype} element(s) of shape {} ({bytes} bytes)",
                    label(l),
                    shape_text(&shape)
                )));
            }
            check_port_dims(l, &shape)?;
            out.push(ConstSpec {
                layer: i,
                label: label(l),
                dtype,
                shape,
                offset,
                size: bytes,
            });
        }
        Ok(out)
    }

    /// Builds the model: Parameters and Results in document order, nodes in producer order.
    fn lower(
        &self,
        doc: &Document,
        consts: Vec<ConstSpec>,
        weights: Vec<Vec<u8>>,
    ) -> Result<ModelProto, IrError> {
        let mut graph = GraphProto {
            name: doc.name.clone(),
            doc_string: format!("OpenVINO IR v{} read from {XML_FILE}", doc.version),
            ..GraphProto::default()
        };
        for (c, raw) in consts.into_iter().zip(weights) {
            graph.initializer.push(TensorProto {
                name: tensor_name(doc, c.layer, 0),
                dims: c.shape.iter().map(|&d| d as i64).collect(),
                data_type: c.dtype.onnx_id(),
                raw_data: raw.into(),
                ..TensorProto::default()
            });
        }
        let mut unsupported: Option<String> = None;
        let mut gather_version: Option<(i64, usize)> = None;
        let mut param_names: HashMap<&str, &Layer> = HashMap::new();
        for (i, l) in doc.layers.iter().enumerate() {
            let ports = |ins: usize, outs: usize| -> Result<(), IrError> {
                if l.inputs.len() != ins || l.outputs.len() != outs {
                    return Err(IrError::Invalid(format!(
                        "{} has {} input and {} output port(s); a {} has {ins} and {outs}",
                        label(l),
                        l.inputs.len(),
                        l.outputs.len(),
                        l.kind
                    )));
                }
                Ok(())
            };
            match l.kind.as_str() {
                "Parameter" => {
                    ports(0, 1)?;
                    if let Some(other) = param_names.insert(l.name.as_str(), l) {
                        return Err(IrError::Invalid(format!(
                            "{} and {} are both named '{}': inputs are bound by name",
                            label(other),
                            label(l),
                            l.name
                        )));
                    }
                    let dtype = element_type(l)?;
                    let dims = parameter_dims(l)?;
                    graph
                        .input
                        .push(value_info(tensor_name(doc, i, 0), Some(dtype), Some(dims)));
                }
                "Const" => ports(0, 1)?,
                "Result" => ports(1, 0)?,
                "Gather" => {
                    let v = gather_version_of(l);
                    match v {
                        Some(v) => match gather_version {
                            Some((w, j)) if w != v => {
                                unsupported.get_or_insert(format!(
                                    "{} and {} mix Gather versions in one model, which is not supported (the plan resolves one version per domain)",
                                    label(&doc.layers[j]),
                                    label(l)
                                ));
                            }
                            _ => gather_version = Some((v, i)),
                        },
                        None => {
                            unsupported.get_or_insert(format!(
                                "{}: Gather version '{}' is not supported (opset1, opset7 and opset8 are)",
                                label(l),
                                xml::shorten(&l.version)
                            ));
                        }
                    }
                }
                _ => {
                    unsupported.get_or_insert(format!(
                        "{}: layer type {} is not supported (the IR reader knows Parameter, Const, Result and Gather)",
                        label(l),
                        xml::shorten(&l.kind)
                    ));
                }
            }
        }
        for &i in &self.order {
            let l = &doc.layers[i];
            if l.kind != "Gather" {
                continue;
            }
            if l.outputs.len() != 1 {
                return Err(IrError::Invalid(format!(
                    "{} has {} output ports; a Gather has 1",
                    label(l),
                    l.outputs.len()
                )));
            }
            graph.node.push(NodeProto {
                name: l.name.clone(),
                op_type: "Gather".into(),
                domain: DOMAIN.into(),
                input: (0..l.inputs.len())
                    .map(|p| self.feeds[&(i, p)].clone())
                    .collect(),
                output: vec![tensor_name(doc, i, 0)],
                attribute: l.data.iter().map(|(k, v)| attribute(k, v)).collect(),
                ..NodeProto::default()
            });
        }
        for (i, l) in doc.layers.iter().enumerate() {
            if l.kind == "Result" {
                graph
                    .output
                    .push(value_info(self.feeds[&(i, 0)].clone(), None, None));
            }
        }
        if let Some(why) = unsupported {
            return Err(IrError::Unsupported(why));
        }
        let mut model = ModelProto {
            ir_version: 10,
            producer_name: "OpenVINO IR".into(),
            graph: Some(graph),
            ..ModelProto::default()
        };
        if let Some((v, _)) = gather_version {
            model.opset_import.push(OperatorSetIdProto {
                domain: DOMAIN.into(),
                version: v,
            });
        }
        Ok(model)
    }
}

/// A Const's place in `model.bin`, checked against its shape.
#[derive(Debug)]
struct ConstSpec {
    layer: usize,
    /// The layer, for messages.
    label: String,
    dtype: DType,
    shape: Vec<usize>,
    offset: u64,
    size: usize,
}

/// A Gather layer's version: `Some(1 | 7 | 8)`, `None` for any other.
fn gather_version_of(l: &Layer) -> Option<i64> {
    l.version
        .strip_prefix("opset")
        .and_then(|v| v.parse::<i64>().ok())
        .filter(|v| GATHER_VERSIONS.contains(v))
}

/// A `<data>` attribute as a node attribute: INT when it reads as one, else STRING (which the
/// registry refuses where it expects an INT, naming the attribute).
fn attribute(name: &str, value: &str) -> AttributeProto {
    match value.trim().parse::<i64>() {
        Ok(i) => AttributeProto {
            name: name.into(),
            r#type: AttributeType::Int as i32,
            i: Some(i),
            ..AttributeProto::default()
        },
        Err(_) => AttributeProto {
            name: name.into(),
            r#type: AttributeType::String as i32,
            s: value.as_bytes().to_vec(),
            ..AttributeProto::default()
        },
    }
}

/// A value info with an optional element type and shape.
fn value_info(name: String, dtype: Option<DType>, dims: Option<Vec<Dim>>) -> ValueInfoProto {
    let shape = dims.map(|dims| TensorShapeProto {
        dim: dims
            .into_iter()
            .map(|d| tensor_shape_proto::Dimension {
                value: Some(match d {
                    Dim::Fixed(v) => tensor_shape_proto::dimension::Value::DimValue(v as i64),
                    Dim::Dynamic(s) => tensor_shape_proto::dimension::Value::DimParam(s),
                }),
                ..Default::default()
            })
            .collect(),
    });
    ValueInfoProto {
        name,
        r#type: dtype.map(|d| TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: d.onnx_id(),
                shape,
            })),
            ..TypeProto::default()
        }),
        ..ValueInfoProto::default()
    }
}

/// OpenVINO element type names and the dtypes they are.
const ELEMENT_TYPES: &[(&str, DType)] = &[
    ("boolean", DType::Bool),
    ("bf16", DType::Bfloat16),
    ("f16", DType::Float16),
    ("f32", DType::Float),
    ("f64", DType::Double),
    ("i4", DType::Int4),
    ("i8", DType::Int8),
    ("i16", DType::Int16),
    ("i32", DType::Int32),
    ("i64", DType::Int64),
    ("u2", DType::Uint2),
    ("u4", DType::Uint4),
    ("u8", DType::Uint8),
    ("u16", DType::Uint16),
    ("u32", DType::Uint32),
    ("u64", DType::Uint64),
    ("f8e4m3", DType::Float8E4M3Fn),
    ("f8e5m2", DType::Float8E5M2),
    ("f8e8m0", DType::Float8E8M0),
    ("f4e2m1", DType::Float4E2M1),
];

/// The dtype of an OpenVINO element type name, `None` for a name it does not map.
pub fn dtype_of(element_type: &str) -> Option<DType> {
    ELEMENT_TYPES
        .iter()
        .find(|(n, _)| *n == element_type)
        .map(|(_, d)| *d)
}

/// The OpenVINO element type name of a dtype, `None` where OpenVINO has none.
pub fn element_type_of(dtype: DType) -> Option<&'static str> {
    ELEMENT_TYPES
        .iter()
        .find(|(_, d)| *d == dtype)
        .map(|(n, _)| *n)
}

/// A Parameter's or Const's `element_type`.
fn element_type(l: &Layer) -> Result<DType, IrError> {
    let et = l
        .data
        .get("element_type")
        .ok_or_else(|| IrError::Invalid(format!("{}: <data> has no 'element_type'", label(l))))?;
    dtype_of(et).ok_or_else(|| {
        IrError::Unsupported(format!(
            "{}: element type '{}' is not supported",
            label(l),
            xml::shorten(et)
        ))
    })
}

/// A `shape` attribute: comma-separated dims, empty for a scalar; `None` when absent. Dynamic
/// dims (`?`, `-1`, ranges) are kept as such.
fn parse_shape(l: &Layer) -> Result<Option<Vec<Dim>>, IrError> {
    let Some(s) = l.data.get("shape") else {
        return Ok(None);
    };
    let s = s.trim();
    if s.is_empty() {
        return Ok(Some(Vec::new()));
    }
    s.split(',')
        .map(|d| {
            let d = d.trim();
            if d == "?" || d == "-1" || d.contains("..") {
                return Ok(Dim::Dynamic(d.to_string()));
            }
            d.parse::<u64>()
                .ok()
                .filter(|&v| i64::try_from(v).is_ok())
                .map(Dim::Fixed)
                .ok_or_else(|| {
                    IrError::Invalid(format!(
                        "{}: shape dimension '{}' is not a size that fits in 64 bits",
                        label(l),
                        xml::shorten(d)
                    ))
                })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// A Const's `shape`: required, and static.
fn shape_attr(l: &Layer) -> Result<Vec<usize>, IrError> {
    let dims = parse_shape(l)?
        .ok_or_else(|| IrError::Invalid(format!("{}: <data> has no 'shape'", label(l))))?;
    dims.iter()
        .map(|d| match d {
            Dim::Fixed(v) => usize::try_from(*v).map_err(|_| {
                IrError::Invalid(format!(
                    "{}: dimension {v} does not fit in memory",
                    label(l)
                ))
            }),
            Dim::Dynamic(s) => Err(IrError::Invalid(format!(
                "{}: a Const's shape must be static, dimension '{s}' is not",
                label(l)
            ))),
        })
        .collect()
}

/// A Const's output port dims, when written, must be its shape.
fn check_port_dims(l: &Layer, shape: &[usize]) -> Result<(), IrError> {
    let Some(port) = l.outputs.first() else {
        return Ok(());
    };
    let fixed: Option<Vec<usize>> = port
        .dims
        .iter()
        .map(|d| match d {
            Dim::Fixed(v) => usize::try_from(*v).ok(),
            Dim::Dynamic(_) => None,
        })
        .collect();
    match fixed {
        Some(dims) if (!dims.is_empty() || shape.is_empty()) && dims != shape => {
            Err(IrError::Invalid(format!(
                "line {}: {}: output port {} has dims {} but the shape is {}",
                port.line,
                label(l),
                port.id,
                shape_text(&dims),
                shape_text(shape)
            )))
        }
        _ => Ok(()),
    }
}

/// A Parameter's dims: its `shape`, else its output port's dims; both given must agree.
fn parameter_dims(l: &Layer) -> Result<Vec<Dim>, IrError> {
    let port = l.outputs.first().map(|p| &p.dims);
    match (parse_shape(l)?, port) {
        (Some(shape), Some(dims)) if !dims.is_empty() || shape.is_empty() => {
            if shape.len() != dims.len()
                || shape
                    .iter()
                    .zip(dims)
                    .any(|(a, b)| matches!((a, b), (Dim::Fixed(x), Dim::Fixed(y)) if x != y))
            {
                return Err(IrError::Invalid(format!(
                    "{}: shape {} and output port dims {} disagree",
                    label(l),
                    shape_text(&shape),
                    shape_text(dims)
                )));
            }
            Ok(shape)
        }
        (Some(shape), _) => Ok(shape),
        (None, Some(dims)) => Ok(dims.clone()),
        (None, None) => Ok(Vec::new()),
    }
}

/// Reads each Const's bytes from `model.bin`, after checking every range against the file's real
/// length and the size limit (nothing is allocated for a range the file does not hold).
fn read_weights(
    path: &Path,
    consts: &[ConstSpec],
    max_tensor_bytes: usize,
    digest: bool,
) -> Result<(Vec<Vec<u8>>, Option<String>), LoadError> {
    let io = |source| LoadError::Io {
        file: BIN_FILE.to_string(),
        source,
    };
    let not_regular = || LoadError::NotRegular {
        file: BIN_FILE.to_string(),
    };
    let meta = std::fs::symlink_metadata(path).map_err(io)?;
    if !meta.is_file() {
        return Err(not_regular());
    }
    let mut f = open_no_follow(path).map_err(io)?;
    let meta = f.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(not_regular());
    }
    let len = meta.len();
    let bad = |what: String| LoadError::Ir {
        file: BIN_FILE.to_string(),
        source: Box::new(IrError::Invalid(what)),
    };
    // The rule external data follows: another name of the file may be outside the case.
    let links = super::external::hard_links(&meta);
    if links > 1 {
        return Err(bad(format!(
            "the file has {links} hard links, and a hard link can point outside the case directory"
        )));
    }
    let mut out = Vec::with_capacity(consts.len());
    for c in consts {
        let end = c.offset.checked_add(c.size as u64);
        let what = |why: &str| format!("{} (offset {}, size {}): {why}", c.label, c.offset, c.size);
        match end {
            Some(end) if end <= len => {}
            _ => {
                return Err(bad(what(&format!(
                    "the range ends past the end of {BIN_FILE} ({len} bytes)"
                ))))
            }
        }
        if c.size > max_tensor_bytes {
            return Err(bad(what(&format!(
                "larger than the {max_tensor_bytes}-byte limit for a tensor (--max-tensor-bytes)"
            ))));
        }
        f.seek(SeekFrom::Start(c.offset)).map_err(io)?;
        let mut buf = Vec::with_capacity(c.size);
        (&mut f)
            .take(c.size as u64)
            .read_to_end(&mut buf)
            .map_err(io)?;
        if buf.len() != c.size {
            return Err(bad(what("the file shrank while it was read")));
        }
        out.push(buf);
    }
    let sha = if digest {
        Some(super::sha256_file_hex(path).map_err(io)?)
    } else {
        None
    };
    Ok((out, sha))
}

/// Which model a case directory holds: `model.onnx`, an IR, or (an error) both or neither.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelFormat {
    /// `model.onnx`.
    Onnx,
    /// `model.xml` (+ `model.bin`).
    Ir,
}

/// The format of the model in `dir`: `model.onnx` when present, else `model.xml` when present.
pub fn format_of(dir: &Path) -> Option<ModelFormat> {
    let present = |f: &str| std::fs::symlink_metadata(dir.join(f)).is_ok();
    if present("model.onnx") {
        Some(ModelFormat::Onnx)
    } else if present(XML_FILE) {
        Some(ModelFormat::Ir)
    } else {
        None
    }
}

/// Parses `model.xml` bytes and checks the graph, without `model.bin`: what the fuzz target
/// drives. Consts are checked for their shape and size but not read.
pub fn check_xml(bytes: &[u8]) -> Result<ModelProto, IrError> {
    let doc = xml::parse(bytes)?;
    let graph = Graph::check(&doc)?;
    let consts = graph.consts(&doc)?;
    let weights = consts.iter().map(|_| Vec::new()).collect();
    graph.lower(&doc, consts, weights)
}

#[cfg(test)]
mod tests;
