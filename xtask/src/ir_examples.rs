//! `cargo xtask testdata` (second half): the seven worked examples of OpenVINO's Gather-8
//! specification as OpenVINO IR cases under `testdata/openvino-ir/`, as OpenVINO users write the
//! layer: `<case>/model.xml` (IR v11) with a `Gather` `opset8` layer whose `data` and `indices`
//! are Parameters and whose `axis` is a Const in `<case>/model.bin`, and the usual
//! `<case>/test_data_set_0/input_K.pb`, `output_K.pb` (input 0 = data, input 1 = indices).
//!
//! The data are the ONNX-dialect cases' of [`crate::spec_examples`] (the same literals, inputs and
//! expected outputs), so each example has one source; only the file format differs. The IR text
//! comes from the library's own single-layer writer (`src/load/ir/write.rs`, compiled in here as
//! the prost types are), which depends on nothing but `std`.

use crate::fsutil::{ensure_file_contents, project_root};
use crate::spec_examples::{self, Attribute, Case, Storage, Tensor, Values, OPENVINO};
use crate::testdata::{remove_strays, tensor_proto};
use anyhow::{bail, ensure, Context, Result};
use prost::Message;
use std::collections::BTreeSet;
use std::path::PathBuf;

#[allow(dead_code)]
#[path = "../../crates/checker/src/load/ir/write.rs"]
mod ir_write;

const COMMAND: &str = "testdata";

/// One IR case: a spec example's data under a Gather version.
struct IrCase {
    /// The ONNX-dialect case whose literals it uses.
    case: Case,
    /// The Gather version of the layer (`opsetN`).
    version: i64,
    /// The directory name.
    name: String,
    /// Where the example comes from.
    source: String,
}

/// The IR cases: the seven Gather-8 examples; Examples 1-5 again at Gather-7, whose
/// specification prints the same five (inputs, attributes and outputs); and Example 1 at
/// Gather-1, which uses nothing Gather-1 lacks (no batch_dims, indices in [0, 4]), its output
/// worked from Gather-1's formula `output[i] = data[indices[i]]`: [1, 1, 5].
fn cases() -> Vec<IrCase> {
    let ov: Vec<Case> = spec_examples::cases()
        .into_iter()
        .filter(|c| c.domain == OPENVINO && c.op_type == "Gather")
        .collect();
    let stem = |c: &Case| {
        c.name
            .rsplit_once("_opset")
            .map_or(c.name, |(s, _)| s)
            .trim_start_matches("openvino_gather8_")
            .to_string()
    };
    let mut out = Vec::new();
    for c in &ov {
        out.push(IrCase {
            name: format!("openvino_gather8_{}_ir", stem(c)),
            source: c.source.to_string(),
            version: 8,
            case: c.clone(),
        });
    }
    for (k, c) in ov.iter().take(5).enumerate() {
        out.push(IrCase {
            name: format!("openvino_gather7_{}_ir", stem(c)),
            source: format!(
                "OpenVINO Gather-7 spec, Example {} (the same inputs, attributes and output as Gather-8's)",
                k + 1
            ),
            version: 7,
            case: c.clone(),
        });
    }
    let mut first = ov[0].clone();
    first.attributes.clear();
    out.push(IrCase {
        name: format!("openvino_gather1_{}_ir", stem(&first)),
        source: "Gather-8/Gather-7 spec Example 1 at Gather-1 (no batch_dims; output worked from \
                 Gather-1's formula)"
            .to_string(),
        version: 1,
        case: first,
    });
    out
}

/// Regenerates `testdata/openvino-ir/`, or in check mode fails when any file differs.
pub fn generate(check: bool) -> Result<()> {
    let dir = project_root().join("testdata/openvino-ir");
    let cases = cases();
    ensure!(
        cases.len() == 13,
        "expected 7 + 5 + 1 examples, found {}",
        cases.len()
    );
    let mut expected = BTreeSet::new();
    for case in &cases {
        for (rel, bytes) in render(case).with_context(|| format!("case {}", case.name))? {
            ensure_file_contents(&dir.join(&rel), &bytes, check, COMMAND)?;
            expected.insert(rel);
        }
    }
    for (name, text) in [
        ("README.md", readme_text(&cases)),
        ("PROVENANCE", PROVENANCE.to_string()),
    ] {
        ensure_file_contents(&dir.join(name), text.as_bytes(), check, COMMAND)?;
        expected.insert(PathBuf::from(name));
    }
    remove_strays(&dir, &expected, &[], check, COMMAND)
}

/// The origin line of the IR cases.
const PROVENANCE: &str = "worked examples of OpenVINO's Gather-8 specification as OpenVINO IR v11, written by `cargo xtask testdata`\n";

/// OpenVINO's element type name for a literal's dtype.
fn element_type(v: &Values) -> Result<&'static str> {
    Ok(match v {
        Values::Float(_) => "f32",
        Values::Double(_) => "f64",
        Values::Float16(_) => "f16",
        Values::Bfloat16(_) => "bf16",
        Values::Int32(_) => "i32",
        Values::Int64(_) => "i64",
        Values::Bool(_) => "boolean",
        Values::String(_) => bail!("string Consts are not written to IR"),
    })
}

/// Little-endian bytes of a literal, as `model.bin` holds a Const.
fn le_bytes(v: &Values) -> Result<Vec<u8>> {
    Ok(match v {
        Values::Int32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        Values::Int64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        other => bail!("axis literal of unexpected type {other:?}"),
    })
}

fn dims(t: &Tensor) -> Vec<u64> {
    t.shape.iter().map(|&d| d as u64).collect()
}

/// The files of one IR case, relative to `testdata/openvino-ir/`.
fn render(ir: &IrCase) -> Result<Vec<(PathBuf, Vec<u8>)>> {
    let case = &ir.case;
    ensure!(
        case.inputs.len() == 3 && case.outputs.len() == 1,
        "not a Gather-8 case"
    );
    let (data, indices, axis) = (&case.inputs[0], &case.inputs[1], &case.inputs[2]);
    let out = &case.outputs[0];
    let axis_bytes = le_bytes(&axis.values)?;
    let (dd, id, ad, od) = (dims(data), dims(indices), dims(axis), dims(out));
    let operands = [
        ir_write::Operand {
            name: data.name,
            element_type: element_type(&data.values)?,
            shape: &dd,
            constant: None,
        },
        ir_write::Operand {
            name: indices.name,
            element_type: element_type(&indices.values)?,
            shape: &id,
            constant: None,
        },
        ir_write::Operand {
            name: axis.name,
            element_type: element_type(&axis.values)?,
            shape: &ad,
            constant: Some(&axis_bytes),
        },
    ];
    let attrs: Vec<(&str, String)> = case
        .attributes
        .iter()
        .map(|a| match a {
            Attribute::Int(k, v) => Ok((*k, v.to_string())),
            Attribute::Str(k, _) => bail!("string attribute {k} on a Gather-8 case"),
        })
        .collect::<Result<_>>()?;
    let name = &ir.name;
    let version = format!("opset{}", ir.version);
    let (xml, bin) = ir_write::single_layer(
        name,
        &ir_write::OpLayer {
            name,
            kind: "Gather",
            version: &version,
            attrs: &attrs,
            inputs: &operands,
            output_name: out.name,
            output_type: element_type(&out.values)?,
            output_shape: &od,
        },
    );
    let dir = PathBuf::from(name);
    let mut files = vec![
        (dir.join("model.xml"), xml.into_bytes()),
        (dir.join("model.bin"), bin),
    ];
    let ds = dir.join("test_data_set_0");
    for (k, t) in [data, indices].into_iter().enumerate() {
        files.push((
            ds.join(format!("input_{k}.pb")),
            tensor_proto(t, Storage::Raw)?.encode_to_vec(),
        ));
    }
    files.push((
        ds.join("output_0.pb"),
        tensor_proto(out, Storage::Raw)?.encode_to_vec(),
    ));
    Ok(files)
}

fn readme_text(cases: &[IrCase]) -> String {
    let mut s = String::from(
        "# OpenVINO IR cases\n\
         \n\
         The seven worked examples of OpenVINO's Gather-8 specification as OpenVINO users write\n\
         the layer, the five of Gather-7's (the same as Gather-8's first five) and Example 1 at\n\
         Gather-1: `<case>/model.xml` (IR v11) holding Parameters `data` and `indices`, a Const\n\
         `axis` whose bytes are in `<case>/model.bin`, one `Gather` layer of version `opsetN` (with\n\
         `<data batch_dims=\"...\"/>` where the example sets it) and one Result; and\n\
         `<case>/test_data_set_0/input_0.pb` (data), `input_1.pb` (indices), `output_0.pb`.\n\
         \n\
         Generated by `cargo xtask testdata` from the same literals as the ONNX-dialect cases\n\
         `spec-examples/openvino_gather8_example*_opset13` (`xtask/src/spec_examples.rs`); do not\n\
         edit by hand (`cargo test` fails when these files are stale). The expected outputs are the\n\
         specification's, never computed by an implementation of the operator.\n\
         \n\
         | case | layer | literals of | source |\n\
         |---|---|---|---|\n",
    );
    for c in cases {
        s.push_str(&format!(
            "| `{}` | Gather opset{} | `spec-examples/{}` | {} |\n",
            c.name, c.version, c.case.name, c.source
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fails when `testdata/openvino-ir/` differs from what `cargo xtask testdata` would write.
    #[test]
    fn ir_cases_are_fresh() {
        generate(true).unwrap();
    }

    #[test]
    fn the_axis_is_a_const_and_data_and_indices_are_parameters() {
        let case = cases()
            .into_iter()
            .find(|c| c.name.contains("example3"))
            .unwrap();
        let files = render(&case).unwrap();
        let xml = String::from_utf8(files[0].1.clone()).unwrap();
        assert!(xml.contains("type=\"Gather\" version=\"opset8\""));
        assert!(xml.contains("<data batch_dims=\"2\"/>"));
        assert!(xml.contains("name=\"axis\" type=\"Const\""));
        assert!(xml.contains("name=\"data\" type=\"Parameter\""));
        // Example 3's axis is the 1-element 1-D int64 tensor [2].
        assert_eq!(files[1].1, 2i64.to_le_bytes());
        let one = cases().into_iter().find(|c| c.version == 1).unwrap();
        let xml = String::from_utf8(render(&one).unwrap()[0].1.clone()).unwrap();
        assert!(xml.contains("type=\"Gather\" version=\"opset1\""));
        assert!(!xml.contains("batch_dims"), "Gather-1 has no batch_dims");
    }
}
