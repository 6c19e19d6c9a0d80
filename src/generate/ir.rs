//! `generate --format ir`: the OpenVINO dialect's cases as OpenVINO IR v11, `model.xml` and
//! `model.bin` in place of `model.onnx`, with the same `test_data_set_0` files less those of the
//! axis. The layer is `Gather` of version `opsetN` for the OpenVINO Gather version N under test;
//! `data` and `indices` are Parameters bound to `input_0.pb` and `input_1.pb`, and the axis is a
//! Const whose bytes are in `model.bin`, as OpenVINO users write the layer and as OpenVINO
//! requires (its CPU plugin refuses a Gather whose axis is not a constant: "axis value is not
//! set"). A Const holds every axis the cases give, a two-element one or one out of range too, so
//! no case keeps its axis as a Parameter; the expected outputs, computed for the ONNX form, hold
//! unchanged.

use super::cases::CaseSpec;
use super::model::Attr;
use super::Rendered;
use onnx_idx_check::load::ir::{element_type_of, write, BIN_FILE, XML_FILE};
use onnx_idx_check::ops::Role;
use onnx_idx_check::pb::TensorProto;
use onnx_idx_check::DType;
use prost::Message;

/// The first dtype among the case's tensors (its inputs and its output) that OpenVINO has no
/// element type for (strings, complex, float8 fnuz, int2, float6), `None` when IR holds them all.
pub(super) fn unholdable(spec: &CaseSpec) -> Option<DType> {
    spec.inputs
        .iter()
        .map(|t| t.dtype())
        .chain([spec.dtype])
        .find(|&d| element_type_of(d).is_none())
}

/// Whether input `k` of the case is written as a Const (the axis) rather than a Parameter.
fn is_const(spec: &CaseSpec, k: usize) -> bool {
    spec.version.inputs.get(k).map(|i| i.role) == Some(Role::Axis)
}

/// The IR form of a rendered case, `None` when one of its tensors has a type OpenVINO has no
/// element type for (see [`unholdable`]).
pub(super) fn ir_form(mut r: Rendered, spec: &CaseSpec) -> Option<Rendered> {
    let shapes: Vec<Vec<u64>> = spec
        .inputs
        .iter()
        .map(|t| t.shape().iter().map(|&d| d as u64).collect())
        .collect();
    // The Consts' little-endian bytes (every element type IR holds has them).
    let bytes: Vec<Option<Vec<u8>>> = spec
        .inputs
        .iter()
        .enumerate()
        .map(|(k, t)| {
            if is_const(spec, k) {
                t.to_le_bytes()
            } else {
                None
            }
        })
        .collect();
    // input_K.pb binds to the K-th Parameter: a Const must not come before a Parameter, or the
    // files of the Parameters after it would have to be renumbered. The axis is OpenVINO
    // Gather's last input.
    debug_assert!((1..spec.inputs.len()).all(|k| !is_const(spec, k - 1) || is_const(spec, k)));
    let operands = spec
        .inputs
        .iter()
        .zip(spec.version.inputs)
        .zip(shapes.iter().zip(&bytes))
        .map(|((t, input), (shape, bytes))| {
            Some(write::Operand {
                name: input.name,
                element_type: element_type_of(t.dtype())?,
                shape,
                constant: bytes.as_deref(),
            })
        })
        .collect::<Option<Vec<_>>>()?;
    // The expected output's dims, when the case has one (an errored case has none: the port then
    // has no dims, which OpenVINO re-infers anyway).
    let output_shape: Vec<u64> = r
        .files
        .iter()
        .find(|(rel, _)| rel == "test_data_set_0/output_0.pb")
        .and_then(|(_, b)| TensorProto::decode(b.as_slice()).ok())
        .map(|p| p.dims.iter().map(|&d| d as u64).collect())
        .unwrap_or_default();
    let attrs: Vec<(&str, String)> = spec
        .attrs
        .iter()
        .map(|a| match a {
            Attr::Int(k, v) => (*k, v.to_string()),
            Attr::Str(k, v) => (*k, v.clone()),
        })
        .collect();
    let version = format!("opset{}", spec.version.since);
    let (xml, bin) = write::single_layer(
        &r.name,
        &write::OpLayer {
            name: &r.name,
            kind: spec.def.op_type,
            version: &version,
            attrs: &attrs,
            inputs: &operands,
            output_name: spec.version.outputs.first().copied().unwrap_or("output"),
            output_type: element_type_of(spec.dtype)?,
            output_shape: &output_shape,
        },
    );
    // The Consts' input files go: their values are in model.bin.
    let const_files: Vec<String> = (0..spec.inputs.len())
        .filter(|&k| is_const(spec, k))
        .flat_map(|k| ["pb", "bin"].map(|ext| format!("test_data_set_0/input_{k}.{ext}")))
        .collect();
    r.files
        .retain(|(rel, _)| rel != "model.onnx" && !const_files.contains(rel));
    r.files.insert(0, (XML_FILE.to_owned(), xml.into_bytes()));
    if !bin.is_empty() {
        r.files.insert(1, (BIN_FILE.to_owned(), bin));
    }
    r.entry.files = r
        .files
        .iter()
        .map(|(rel, b)| (rel.clone(), onnx_idx_check::load::sha256_hex(b)))
        .collect();
    Some(r)
}
