//! `show PATH`: what a tensor file, a model or a whole case holds, for people ([`human`]) or as
//! JSON ([`json`]), without Python.
//!
//! [`load`] reads PATH into a [`Shown`] with the same loaders as `run` (no symbolic links, no
//! allocation on a size a file merely claims, `--max-tensor-bytes`, external data only from inside
//! the file's own directory); the renderers only format it. PATH decides what is shown: a directory
//! holding `model.onnx` is a case (the model, then every `test_data_set_N` with its inputs named by
//! the graph inputs they bind to by position and its expected outputs named by the graph outputs),
//! a `*.onnx` file is a model alone, any other file is a `TensorProto`.
//!
//! A PATH that cannot be used at all is a [`PathError`]; a file of a case that cannot be read is
//! shown with its error and counted in [`Shown::problems`], and the rest is still shown.

pub mod human;
pub mod json;
mod layout;

use onnx_idx_check::discover::{self, DataSet};
use onnx_idx_check::load::{self, LoadError, LoadedTensor};
use onnx_idx_check::pb::{
    attribute_proto::AttributeType, tensor_shape_proto::dimension::Value as DimValue, type_proto,
    AttributeProto, GraphProto, ModelProto, NodeProto, ValueInfoProto,
};
use onnx_idx_check::tensor::{DType, Tensor};
use std::path::Path;
use thiserror::Error;

/// How much to show and the limit on what may be loaded.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Every value of every tensor, instead of a summary of large ones.
    pub full: bool,
    /// The largest tensor, in bytes, that may be loaded (`--max-tensor-bytes`).
    pub max_tensor_bytes: usize,
}

/// PATH itself cannot be shown (exit status 2).
#[derive(Debug, Error)]
pub enum PathError {
    /// PATH does not exist or cannot be read.
    #[error("cannot read {path}: {source}")]
    Unreadable {
        /// PATH as given.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// PATH is a directory without `model.onnx` (or an IR's `model.xml`).
    #[error("{0} is not a case directory (no model.onnx or model.xml in it)")]
    NotACase(String),
    /// PATH is a file that does not load as what its name says.
    #[error(transparent)]
    Load(#[from] LoadError),
}

/// What PATH holds, loaded.
#[derive(Debug)]
pub enum Shown {
    /// A `.pb` tensor file.
    Tensor(TensorFile),
    /// A model file alone.
    Model(Model),
    /// A case directory.
    Case(CaseView),
}

impl Shown {
    /// How many things could not be shown: files that could not be read, missing inputs, tensors
    /// of the model that do not decode. Zero means everything was shown (exit status 0).
    pub fn problems(&self) -> usize {
        match self {
            Shown::Tensor(_) => 0,
            Shown::Model(m) => m.problems(),
            Shown::Case(c) => {
                let model = c.model.as_ref().map_or(1, Model::problems);
                let sets: usize = c
                    .data_sets
                    .iter()
                    .map(|d| {
                        usize::from(d.error.is_some())
                            + d.inputs
                                .iter()
                                .chain(&d.outputs)
                                .filter(|s| s.is_problem())
                                .count()
                    })
                    .sum();
                model + c.warnings.len() + sets
            }
        }
    }
}

/// A tensor file that loaded.
#[derive(Debug)]
pub struct TensorFile {
    /// The file as shown (PATH, or relative to the case directory).
    pub file: String,
    /// Its tensor, storage form and sha256.
    pub loaded: LoadedTensor,
}

/// A model that decoded, with what it declares.
#[derive(Debug)]
pub struct Model {
    /// The file as shown.
    pub file: String,
    /// sha256 of the file, in hex.
    pub sha256: String,
    /// The decoded model.
    pub proto: ModelProto,
    /// Every initializer of the main graph, in order, converted (or why not).
    pub initializers: Vec<Result<Tensor, String>>,
    /// Every TENSOR attribute of the main graph's nodes, converted: (node, attribute) positions.
    pub tensor_attributes: Vec<((usize, usize), Result<Tensor, String>)>,
}

impl Model {
    fn problems(&self) -> usize {
        usize::from(self.proto.graph.is_none())
            + self.initializers.iter().filter(|t| t.is_err()).count()
            + self
                .tensor_attributes
                .iter()
                .filter(|(_, t)| t.is_err())
                .count()
    }

    /// The converted tensor of attribute `attr` of node `node`, when it is a TENSOR attribute.
    pub fn tensor_attribute(&self, node: usize, attr: usize) -> Option<&Result<Tensor, String>> {
        self.tensor_attributes
            .iter()
            .find(|(at, _)| *at == (node, attr))
            .map(|(_, t)| t)
    }
}

/// A case directory: its model and its data sets.
#[derive(Debug)]
pub struct CaseView {
    /// The directory as given.
    pub dir: String,
    /// `model.onnx`, or why it could not be read.
    pub model: Result<Model, String>,
    /// The `test_data_set_N` directories in numeric order.
    pub data_sets: Vec<DataSetView>,
    /// Directories that could not be listed.
    pub warnings: Vec<String>,
}

/// One `test_data_set_N`.
#[derive(Debug)]
pub struct DataSetView {
    /// `test_data_set_N`.
    pub name: String,
    /// Why its files could not be listed.
    pub error: Option<String>,
    /// `input_K.pb`, by K: every graph input's position, and every file present.
    pub inputs: Vec<Slot>,
    /// `output_K.pb`, by K: every graph output's position, and every file present.
    pub outputs: Vec<Slot>,
}

/// One `input_K.pb` or `output_K.pb` of a data set.
#[derive(Debug)]
pub struct Slot {
    /// K.
    pub position: u64,
    /// `input_K.pb` or `output_K.pb`.
    pub file: String,
    /// The graph input or output it binds to by position (none past the graph's count, or when
    /// the model could not be read).
    pub bound_to: Option<String>,
    /// What the file holds.
    pub content: SlotContent,
}

/// What a data set's tensor file holds.
#[derive(Debug)]
pub enum SlotContent {
    /// The tensor.
    Loaded(LoadedTensor),
    /// The graph has an input or output at this position but there is no file.
    Missing,
    /// The file could not be read.
    Error(String),
}

impl Slot {
    /// Whether this slot counts as something that could not be shown: an unreadable file, or a
    /// missing input (a missing expected output is a case not finished yet, not a problem).
    fn is_problem(&self) -> bool {
        match self.content {
            SlotContent::Loaded(_) => false,
            SlotContent::Error(_) => true,
            SlotContent::Missing => self.file.starts_with("input_"),
        }
    }
}

/// Reads what PATH holds (see the module's documentation).
pub fn load(path: &Path, opts: &Options) -> Result<Shown, PathError> {
    let shown = path.display().to_string();
    // A directory given by a symbolic link is followed, as `run` follows its PATHs; files are
    // opened without following links by the loaders.
    let meta = std::fs::metadata(path).map_err(|source| PathError::Unreadable {
        path: shown.clone(),
        source,
    })?;
    if meta.is_dir() {
        let has_model = ["model.onnx", load::ir::XML_FILE]
            .iter()
            .any(|f| std::fs::symlink_metadata(path.join(f)).is_ok_and(|m| !m.is_dir()));
        if !has_model {
            return Err(PathError::NotACase(shown));
        }
        return Ok(Shown::Case(load_case(path, shown, opts)));
    }
    if path.extension().is_some_and(|e| e == "onnx") {
        return Ok(Shown::Model(load_model(path, shown, opts)?));
    }
    let loaded = load::load_tensor_file_with(path, &shown, opts.max_tensor_bytes, true)?;
    Ok(Shown::Tensor(TensorFile {
        file: shown,
        loaded,
    }))
}

fn load_model(path: &Path, file: String, opts: &Options) -> Result<Model, LoadError> {
    let limit = load::file_limit(opts.max_tensor_bytes);
    let (proto, sha256) = if file == load::ir::XML_FILE {
        // An OpenVINO IR, read into the model `run` evaluates; the digest shown is model.xml's.
        let dir = path.parent().unwrap_or(Path::new("."));
        let ir = load::ir::load_ir(dir, limit, opts.max_tensor_bytes, true)?;
        (ir.model, ir.files.into_iter().next().map(|(_, sha)| sha))
    } else {
        load::load_model_with(path, &file, limit, true)?
    };
    let ctx = load::tensor::TensorContext {
        base_dir: path.parent().unwrap_or(Path::new(".")),
        max_bytes: opts.max_tensor_bytes,
    };
    let convert = |t: &onnx_idx_check::pb::TensorProto| {
        load::convert_tensor(t, &file, &ctx).map_err(|e| e.to_string())
    };
    let graph = proto.graph.as_ref();
    let initializers = graph
        .map(|g| g.initializer.iter().map(convert).collect())
        .unwrap_or_default();
    let mut tensor_attributes = Vec::new();
    for (n, node) in graph.into_iter().flat_map(|g| g.node.iter()).enumerate() {
        for (a, attr) in node.attribute.iter().enumerate() {
            if let (Ok(AttributeType::Tensor), Some(t)) =
                (AttributeType::try_from(attr.r#type), &attr.t)
            {
                tensor_attributes.push(((n, a), convert(t)));
            }
        }
    }
    Ok(Model {
        file,
        sha256: sha256.unwrap_or_default(),
        proto,
        initializers,
        tensor_attributes,
    })
}

fn load_case(dir: &Path, shown: String, opts: &Options) -> CaseView {
    let file = load::model_file_of(dir);
    let model = load_model(&dir.join(file), file.to_string(), opts).map_err(|e| e.to_string());
    let (inputs, outputs): (Vec<String>, Vec<String>) = match &model {
        Ok(m) => {
            let graph = m.proto.graph.as_ref();
            (
                graph
                    .map(|g| {
                        onnx_idx_check::eval::data_inputs(g)
                            .iter()
                            .map(|v| v.name.clone())
                            .collect()
                    })
                    .unwrap_or_default(),
                graph
                    .map(|g| g.output.iter().map(|v| v.name.clone()).collect())
                    .unwrap_or_default(),
            )
        }
        Err(_) => (Vec::new(), Vec::new()),
    };
    let mut warnings = Vec::new();
    let data_sets = discover::data_sets(dir, &mut warnings)
        .iter()
        .map(|ds| load_data_set(ds, &inputs, &outputs, opts))
        .collect();
    CaseView {
        dir: shown,
        model,
        data_sets,
        warnings,
    }
}

fn load_data_set(
    ds: &DataSet,
    inputs: &[String],
    outputs: &[String],
    opts: &Options,
) -> DataSetView {
    let mut view = DataSetView {
        name: ds.name.clone(),
        error: None,
        inputs: Vec::new(),
        outputs: Vec::new(),
    };
    let files = match ds.tensor_files() {
        Ok(f) => f,
        Err(e) => {
            view.error = Some(format!("{}: {e}", ds.name));
            return view;
        }
    };
    let slots = |kind: &str, names: &[String], present: &[u64]| -> Vec<Slot> {
        let mut positions: Vec<u64> = (0..names.len() as u64)
            .chain(present.iter().copied())
            .collect();
        positions.sort_unstable();
        positions.dedup();
        positions
            .into_iter()
            .map(|k| {
                let file = format!("{kind}_{k}.pb");
                let content = if present.contains(&k) {
                    let path = ds.dir.join(&file);
                    let shown = format!("{}/{file}", ds.name);
                    match load::load_tensor_file_with(&path, &shown, opts.max_tensor_bytes, true) {
                        Ok(t) => SlotContent::Loaded(t),
                        Err(e) => SlotContent::Error(e.to_string()),
                    }
                } else {
                    SlotContent::Missing
                };
                Slot {
                    position: k,
                    file,
                    bound_to: usize::try_from(k).ok().and_then(|k| names.get(k)).cloned(),
                    content,
                }
            })
            .collect()
    };
    view.inputs = slots("input", inputs, &files.inputs);
    view.outputs = slots("output", outputs, &files.outputs);
    view
}

/// A declared value type: `float [5, N, ?]`, `int64 (unknown rank)`, `sequence`, ...
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueType {
    /// `tensor`, `sequence`, `map`, `optional`, `sparse tensor`, `opaque` or `unknown` (no type).
    pub kind: &'static str,
    /// The element type of a tensor or sparse tensor (`None` when undefined).
    pub dtype: Option<DType>,
    /// The element type id as stored, when it is not a known dtype (0 is undefined).
    pub elem_type: i32,
    /// The dims of a tensor's shape; `None` for an unknown rank.
    pub shape: Option<Vec<Dim>>,
}

/// One declared dimension; in JSON a number, a string or null.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(untagged)]
pub enum Dim {
    /// A fixed size.
    Value(i64),
    /// A symbolic size (`N`).
    Param(String),
    /// Unknown.
    Unknown,
}

impl ValueType {
    /// The type a graph input or output declares.
    pub fn of(v: &ValueInfoProto) -> ValueType {
        use type_proto::Value;
        let unknown = |kind| ValueType {
            kind,
            dtype: None,
            elem_type: 0,
            shape: None,
        };
        let tensor = |kind,
                      elem_type: i32,
                      shape: Option<&onnx_idx_check::pb::TensorShapeProto>| {
            ValueType {
                kind,
                dtype: DType::from_onnx(elem_type),
                elem_type,
                shape: shape.map(|s| {
                    s.dim
                        .iter()
                        .map(|d| match &d.value {
                            Some(DimValue::DimValue(v)) => Dim::Value(*v),
                            Some(DimValue::DimParam(p)) if !p.is_empty() => Dim::Param(p.clone()),
                            _ => Dim::Unknown,
                        })
                        .collect()
                }),
            }
        };
        match v.r#type.as_ref().and_then(|t| t.value.as_ref()) {
            None => unknown("unknown"),
            Some(Value::TensorType(t)) => tensor("tensor", t.elem_type, t.shape.as_ref()),
            Some(Value::SparseTensorType(t)) => {
                tensor("sparse tensor", t.elem_type, t.shape.as_ref())
            }
            Some(Value::SequenceType(_)) => unknown("sequence"),
            Some(Value::MapType(_)) => unknown("map"),
            Some(Value::OptionalType(_)) => unknown("optional"),
            Some(Value::OpaqueType(_)) => unknown("opaque"),
        }
    }

    /// The element type's name: the dtype's, `undefined`, or `type N` for an unknown id.
    pub fn dtype_name(&self) -> String {
        match (self.dtype, self.elem_type) {
            (Some(d), _) => d.name().to_string(),
            (None, 0) => "undefined".to_string(),
            (None, n) => format!("type {n}"),
        }
    }
}

/// An attribute's value, borrowed from the node (a TENSOR attribute's tensor is converted
/// when the model is loaded: see [`Model::tensor_attribute`]).
#[derive(Debug, Clone, PartialEq)]
pub enum AttrValue<'a> {
    /// INT.
    Int(i64),
    /// FLOAT.
    Float(f32),
    /// STRING (bytes; usually UTF-8).
    Str(&'a [u8]),
    /// INTS.
    Ints(&'a [i64]),
    /// FLOATS.
    Floats(&'a [f32]),
    /// STRINGS.
    Strings(&'a [Vec<u8>]),
    /// TENSOR.
    Tensor,
    /// GRAPH: its name and node count.
    Graph(&'a str, usize),
    /// Any other type (or an unknown type id): its name, not shown further.
    Other(String),
}

impl<'a> AttrValue<'a> {
    /// The value of `a`, by its declared type.
    pub fn of(a: &'a AttributeProto) -> AttrValue<'a> {
        match AttributeType::try_from(a.r#type) {
            Ok(AttributeType::Int) => AttrValue::Int(a.i()),
            Ok(AttributeType::Float) => AttrValue::Float(a.f()),
            Ok(AttributeType::String) => AttrValue::Str(&a.s),
            Ok(AttributeType::Ints) => AttrValue::Ints(&a.ints),
            Ok(AttributeType::Floats) => AttrValue::Floats(&a.floats),
            Ok(AttributeType::Strings) => AttrValue::Strings(&a.strings),
            Ok(AttributeType::Tensor) if a.t.is_some() => AttrValue::Tensor,
            Ok(AttributeType::Graph) => a.g.as_ref().map_or_else(
                || AttrValue::Other("GRAPH (empty)".to_string()),
                |g: &GraphProto| AttrValue::Graph(&g.name, g.node.len()),
            ),
            Ok(t) => AttrValue::Other(t.as_str_name().to_string()),
            Err(_) => AttrValue::Other(format!("type {}", a.r#type)),
        }
    }
}

/// The attribute type's name as the proto spells it (`INT`, `TENSOR`), or `type N`.
pub fn attr_type_name(a: &AttributeProto) -> String {
    AttributeType::try_from(a.r#type).map_or_else(
        |_| format!("type {}", a.r#type),
        |t| t.as_str_name().to_string(),
    )
}

/// A node's operator with its domain: `Gather (ai.onnx)`.
pub fn node_domain(node: &NodeProto) -> &str {
    onnx_idx_check::eval::display_domain(onnx_idx_check::ops::canonical_domain(&node.domain))
}

/// Where a loaded tensor's values were stored, as the proto names the field.
pub fn storage(t: &LoadedTensor) -> &'static str {
    t.form.field(t.tensor.dtype())
}
