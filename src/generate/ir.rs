//! `generate --format ir`: the OpenVINO dialect's cases as OpenVINO IR v11, `model.xml` (+
//! `model.bin` when there are Consts) in place of `model.onnx`, with the same
//! `test_data_set_0` files. The layer is `Gather` of version `opsetN` for the OpenVINO Gather
//! version N under test; every input, the axis included, is a Parameter bound to its
//! `input_K.pb`, so that the cases' inputs (a two-element axis, say) stay exactly those of the
//! ONNX form and the expected outputs, already computed for it, hold unchanged.

use super::cases::CaseSpec;
use super::model::Attr;
use super::Rendered;
use crate::load::ir::{element_type_of, write, XML_FILE};
use crate::pb::TensorProto;
use prost::Message;

/// The IR form of a rendered case, `None` when one of its tensors has a type OpenVINO has no
/// element type for (strings, complex, float8 fnuz, int2, float6).
pub(super) fn ir_form(mut r: Rendered, spec: &CaseSpec) -> Option<Rendered> {
    let shapes: Vec<Vec<u64>> = spec
        .inputs
        .iter()
        .map(|t| t.shape().iter().map(|&d| d as u64).collect())
        .collect();
    let operands = spec
        .inputs
        .iter()
        .zip(spec.version.inputs)
        .zip(&shapes)
        .map(|((t, input), shape)| {
            Some(write::Operand {
                name: input.name,
                element_type: element_type_of(t.dtype())?,
                shape,
                constant: None,
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
    r.files.retain(|(rel, _)| rel != "model.onnx");
    r.files.insert(0, (XML_FILE.to_owned(), xml.into_bytes()));
    if !bin.is_empty() {
        r.files
            .insert(1, (crate::load::ir::BIN_FILE.to_owned(), bin));
    }
    r.entry.files = r
        .files
        .iter()
        .map(|(rel, b)| (rel.clone(), crate::load::sha256_hex(b)))
        .collect();
    Some(r)
}
