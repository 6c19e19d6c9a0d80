//! `cargo xtask testdata`: turns the descriptions in [`crate::spec_examples`] into ONNX node-test
//! directories under `testdata/spec-examples/`, in the layout of ONNX's own node tests:
//!
//! ```text
//! <case>/model.onnx
//! <case>/test_data_set_0/input_<K>.pb, output_<K>.pb
//! ```
//!
//! Everything is encoded with prost, which writes fields in a fixed order, so the bytes depend only
//! on the descriptions and `--check` can compare them exactly with the committed files.

use crate::fsutil::{ensure_file_contents, project_root};
use crate::pb;
use crate::spec_examples::{self, Attribute, Case, Storage, Tensor, Values};
use anyhow::{bail, ensure, Context, Result};
use prost::Message;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Written into every generated model, so a reader can tell them from exported ONNX tests.
pub const PRODUCER_NAME: &str = "onnx-idx-check xtask";

const COMMAND: &str = "testdata";

/// Regenerates `testdata/spec-examples/`, or in check mode fails when any committed file differs
/// from what would be written, is missing, or is no longer described.
pub fn generate(check: bool) -> Result<()> {
    let dir = project_root().join("testdata/spec-examples");
    let cases = spec_examples::cases();
    let mut expected = BTreeSet::new();
    for case in &cases {
        for (rel, bytes) in render(case).with_context(|| format!("case {}", case.name))? {
            ensure_file_contents(&dir.join(&rel), &bytes, check, COMMAND)?;
            expected.insert(rel);
        }
    }
    let readme = PathBuf::from("README.md");
    ensure_file_contents(
        &dir.join(&readme),
        readme_text(&cases).as_bytes(),
        check,
        COMMAND,
    )?;
    expected.insert(readme);
    // Read by `onnx-idx-check` as the cases' origin (reports' `origin` field).
    let provenance = PathBuf::from("PROVENANCE");
    ensure_file_contents(
        &dir.join(&provenance),
        PROVENANCE.as_bytes(),
        check,
        COMMAND,
    )?;
    expected.insert(provenance);
    remove_strays(&dir, &expected, &[], check, COMMAND)
}

/// The origin line of the spec examples.
const PROVENANCE: &str = "worked examples of the operator specifications (ONNX operator docs, OpenVINO Gather-8), written by `cargo xtask testdata`\n";

/// The files of one case, as paths relative to `testdata/spec-examples/` and their bytes.
fn render(case: &Case) -> Result<Vec<(PathBuf, Vec<u8>)>> {
    let dir = PathBuf::from(case.name);
    let mut files = vec![(dir.join("model.onnx"), model(case)?.encode_to_vec())];
    let data_set = dir.join("test_data_set_0");
    for (kind, tensors) in [("input", &case.inputs), ("output", &case.outputs)] {
        for (k, t) in tensors.iter().enumerate() {
            let proto = tensor_proto(t, case.storage)
                .with_context(|| format!("{kind} {k} ({})", t.name))?;
            files.push((
                data_set.join(format!("{kind}_{k}.pb")),
                proto.encode_to_vec(),
            ));
        }
    }
    Ok(files)
}

/// The IR version `onnx.helper.make_model` stamps on a model importing ai.onnx `opset`: the
/// lowest IR of the ONNX release that introduced that opset (`onnx.helper.VERSION_TABLE` in
/// ONNX 1.23.2). Opsets 2-4 never shipped in a release; they share opset 1's IR.
///
/// | opset | 1-8 | 9 | 10 | 11 | 12-14 | 15-18 | 19-20 | 21-22 | 23 | 24 | 25-27 | 28 |
/// |-------|-----|---|----|----|-------|-------|-------|-------|----|----|-------|----|
/// | IR    | 3   | 4 | 5  | 6  | 7     | 8     | 9     | 10    | 11 | 12 | 13    | 14 |
pub fn ir_version_for_opset(opset: i64) -> Result<i64> {
    Ok(match opset {
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
        _ => bail!("opset {opset} is not in ONNX 1.23.2's version table"),
    })
}

/// The single-node model of a case (also the starting point of `cargo xtask fixtures`).
pub(crate) fn model(case: &Case) -> Result<pb::ModelProto> {
    let names = |ts: &[Tensor]| ts.iter().map(|t| t.name.to_owned()).collect::<Vec<_>>();
    let node = pb::NodeProto {
        input: names(&case.inputs),
        output: names(&case.outputs),
        name: case.name.to_owned(),
        op_type: case.op_type.to_owned(),
        domain: case.domain.to_owned(),
        attribute: case.attributes.iter().map(attribute).collect(),
        ..Default::default()
    };
    let graph = pb::GraphProto {
        node: vec![node],
        name: case.name.to_owned(),
        doc_string: case.source.to_owned(),
        input: case.inputs.iter().map(value_info).collect(),
        output: case.outputs.iter().map(value_info).collect(),
        ..Default::default()
    };
    Ok(pb::ModelProto {
        ir_version: ir_version_for_opset(case.opset)?,
        opset_import: std::iter::once(("", case.opset))
            .chain(case.imports.iter().copied())
            .map(|(domain, version)| pb::OperatorSetIdProto {
                domain: domain.to_owned(),
                version,
            })
            .collect(),
        producer_name: PRODUCER_NAME.to_owned(),
        graph: Some(graph),
        ..Default::default()
    })
}

fn attribute(a: &Attribute) -> pb::AttributeProto {
    use pb::attribute_proto::AttributeType;
    match *a {
        Attribute::Int(name, i) => pb::AttributeProto {
            name: name.to_owned(),
            r#type: AttributeType::Int as i32,
            i: Some(i),
            ..Default::default()
        },
        Attribute::Str(name, s) => pb::AttributeProto {
            name: name.to_owned(),
            r#type: AttributeType::String as i32,
            s: s.as_bytes().to_vec(),
            ..Default::default()
        },
    }
}

/// A graph input or output with its full static type, as `onnx.helper.make_tensor_value_info`.
fn value_info(t: &Tensor) -> pb::ValueInfoProto {
    use pb::tensor_shape_proto::{dimension::Value, Dimension};
    let dim = t
        .shape
        .iter()
        .map(|&d| Dimension {
            value: Some(Value::DimValue(d)),
            ..Default::default()
        })
        .collect();
    pb::ValueInfoProto {
        name: t.name.to_owned(),
        r#type: Some(pb::TypeProto {
            value: Some(pb::type_proto::Value::TensorType(pb::type_proto::Tensor {
                elem_type: data_type(&t.values) as i32,
                shape: Some(pb::TensorShapeProto { dim }),
            })),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn data_type(v: &Values) -> pb::tensor_proto::DataType {
    use pb::tensor_proto::DataType;
    match v {
        Values::Float(_) => DataType::Float,
        Values::Double(_) => DataType::Double,
        Values::Float16(_) => DataType::Float16,
        Values::Bfloat16(_) => DataType::Bfloat16,
        Values::Int32(_) => DataType::Int32,
        Values::Int64(_) => DataType::Int64,
        Values::Bool(_) => DataType::Bool,
        Values::String(_) => DataType::String,
    }
}

/// The TensorProto of one input or output, following the storage rules of docs/semantics.md section 8.
pub(crate) fn tensor_proto(t: &Tensor, storage: Storage) -> Result<pb::TensorProto> {
    ensure!(
        t.values.len() as i64 == t.numel(),
        "{} values for shape {:?}, which holds {}",
        t.values.len(),
        t.shape,
        t.numel()
    );
    let mut p = pb::TensorProto {
        dims: t.shape.clone(),
        data_type: data_type(&t.values) as i32,
        name: t.name.to_owned(),
        ..Default::default()
    };
    // Strings have no raw form (the format forbids raw_data for them), so they always fall
    // through to string_data.
    if let (Storage::Raw, Some(raw)) = (storage, raw_bytes(&t.values)) {
        p.raw_data = raw.into();
        return Ok(p);
    }
    match &t.values {
        Values::Float(v) => p.float_data = v.clone(),
        Values::Double(v) => p.double_data = v.clone(),
        // 16-bit floats travel as their bit pattern in the low half of an int32_data entry.
        Values::Float16(v) | Values::Bfloat16(v) => {
            p.int32_data = v.iter().map(|&x| i32::from(x)).collect();
        }
        Values::Int32(v) => p.int32_data = v.clone(),
        Values::Int64(v) => p.int64_data = v.clone(),
        Values::Bool(v) => p.int32_data = v.iter().map(|&b| i32::from(b)).collect(),
        Values::String(v) => p.string_data = v.iter().map(|s| s.as_bytes().to_vec()).collect(),
    }
    Ok(p)
}

/// The values as raw_data holds them: fixed width, little-endian, bool as one byte; `None` for
/// strings.
fn raw_bytes(v: &Values) -> Option<Vec<u8>> {
    Some(match v {
        Values::Float(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        Values::Double(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        Values::Float16(v) | Values::Bfloat16(v) => {
            v.iter().flat_map(|x| x.to_le_bytes()).collect()
        }
        Values::Int32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        Values::Int64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        Values::Bool(v) => v.iter().map(|&b| u8::from(b)).collect(),
        Values::String(_) => return None,
    })
}

fn readme_text(cases: &[Case]) -> String {
    let mut s = String::from(
        "# Spec examples\n\
         \n\
         The worked examples of the operator specifications (ONNX Gather, GatherElements,\n\
         GatherND, ScatterElements, ScatterND, TensorScatter and the deprecated Scatter;\n\
         OpenVINO's Gather-8; onnxruntime's GatherGrad and GatherElementsGrad), one ONNX node-test\n\
         directory per example: `<case>/model.onnx` with a single node, and\n\
         `<case>/test_data_set_0/input_K.pb`, `output_K.pb`.\n\
         \n\
         Generated by `cargo xtask testdata` from the descriptions in `xtask/src/spec_examples.rs`;\n\
         do not edit by hand. The expected outputs are stated literally there, copied from the spec\n\
         text or worked by hand from its equations (the working is in the comments), never computed\n\
         by an implementation of the operator. The backward-pass cases (GatherGrad,\n\
         GatherElementsGrad) are the exception: their float sums come from numpy's `np.add.at`,\n\
         and the comments give each expression. `cargo test` fails when these files are stale\n\
         (`cargo xtask testdata --check` checks the same without writing).\n\
         \n\
         Every model imports ai.onnx at the opset its name ends with. The OpenVINO cases put their\n\
         node in domain `org.openvinotoolkit` and import it at version 8; the backward-pass cases\n\
         use domain `com.microsoft` at version 1 (the op column names the domain).\n\
         \n\
         Models carry producer_name `onnx-idx-check xtask` and the IR version `onnx.helper` would\n\
         pick for their ai.onnx opset. Most tensors store their values in `raw_data`\n\
         (little-endian); the cases marked `typed` use `float_data`, `double_data`, `int32_data`\n\
         or `int64_data` instead, and strings always use `string_data`. Float outputs of\n\
         reductions (the backward pass included) are meant to be compared with a tolerance: the\n\
         literals are decimals as the spec writes them, while a kernel rounds after every step.\n\
         Everything else compares exactly.\n\
         \n\
         | case | op | ai.onnx opset | storage | source |\n\
         |---|---|---|---|---|\n",
    );
    for c in cases {
        let storage = match c.storage {
            Storage::Raw => "raw",
            Storage::Typed => "typed",
        };
        s.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            c.name,
            op_label(c),
            c.opset,
            storage,
            c.source
        ));
    }
    s
}

/// The op as the READMEs name it: `Gather` in the default domain, `Gather (org.openvinotoolkit 8)`
/// elsewhere.
pub(crate) fn op_label(c: &Case) -> String {
    match c.imports.iter().find(|(d, _)| *d == c.domain) {
        _ if c.domain.is_empty() => c.op_type.to_owned(),
        Some((d, v)) => format!("{} ({d} {v})", c.op_type),
        None => format!("{} ({})", c.op_type, c.domain),
    }
}

/// Files under `dir` that no description produces are removed, or reported in check mode, so a
/// renamed or deleted case does not linger as a test nobody maintains. `command` is the xtask
/// command that owns `dir`; the subdirectories of `dir` named in `foreign` belong to someone
/// else (committed by hand): their files are never reported or removed.
pub(crate) fn remove_strays(
    dir: &Path,
    expected: &BTreeSet<PathBuf>,
    foreign: &[&str],
    check: bool,
    command: &str,
) -> Result<()> {
    let mut strays = Vec::new();
    collect_files(dir, Path::new(""), &mut strays)?;
    strays.retain(|rel| {
        let top = rel.components().next().map(|c| c.as_os_str());
        !expected.contains(rel) && !foreign.iter().any(|f| top == Some(f.as_ref()))
    });
    strays.sort();
    if strays.is_empty() {
        return Ok(());
    }
    if check {
        bail!(
            "`{}` holds files no description produces ({}): run `cargo xtask {command}` and \
             commit the result",
            dir.display(),
            strays
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    for rel in &strays {
        let path = dir.join(rel);
        std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
        eprintln!("removed {}", path.display());
        // Drop the directories the removal emptied, up to (not including) `dir`.
        let mut parent = rel.parent();
        while let Some(p) = parent.filter(|p| !p.as_os_str().is_empty()) {
            if std::fs::remove_dir(dir.join(p)).is_err() {
                break;
            }
            parent = p.parent();
        }
    }
    Ok(())
}

fn collect_files(root: &Path, rel: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let path = root.join(rel);
    let entries = match std::fs::read_dir(&path) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("listing {}", path.display())),
    };
    for entry in entries {
        let entry = entry.with_context(|| format!("listing {}", path.display()))?;
        let child = rel.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            collect_files(root, &child, out)?;
        } else {
            out.push(child);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fails when `testdata/spec-examples/` differs from what `cargo xtask testdata` would write.
    #[test]
    fn spec_examples_are_fresh() {
        generate(true).unwrap();
    }

    #[test]
    fn ir_versions_follow_onnx_helper() {
        let table = [
            (1, 3),
            (8, 3),
            (9, 4),
            (10, 5),
            (11, 6),
            (13, 7),
            (16, 8),
            (18, 8),
            (21, 10),
        ];
        for (opset, ir) in table {
            assert_eq!(ir_version_for_opset(opset).unwrap(), ir, "opset {opset}");
        }
        assert!(ir_version_for_opset(0).is_err());
        assert!(ir_version_for_opset(29).is_err());
    }

    #[test]
    fn strings_never_use_raw_data() {
        let t = Tensor {
            name: "s",
            shape: vec![2],
            values: Values::String(vec!["a", "b"]),
        };
        for storage in [Storage::Raw, Storage::Typed] {
            let p = tensor_proto(&t, storage).unwrap();
            assert!(p.raw_data.is_empty());
            assert_eq!(p.string_data, [b"a".to_vec(), b"b".to_vec()]);
        }
    }

    #[test]
    fn raw_data_is_little_endian_and_sized_by_the_dtype() {
        let t = Tensor {
            name: "x",
            shape: vec![2],
            values: Values::Float16(vec![0x3C00, 0x4000]),
        };
        assert_eq!(
            tensor_proto(&t, Storage::Raw).unwrap().raw_data[..],
            [0x00, 0x3C, 0x00, 0x40]
        );
        let t = Tensor {
            name: "x",
            shape: vec![],
            values: Values::Int64(vec![-2]),
        };
        assert_eq!(
            tensor_proto(&t, Storage::Raw).unwrap().raw_data[..],
            (-2i64).to_le_bytes()
        );
        let t = Tensor {
            name: "x",
            shape: vec![3],
            values: Values::Bool(vec![true, false, true]),
        };
        assert_eq!(
            tensor_proto(&t, Storage::Raw).unwrap().raw_data[..],
            [1, 0, 1]
        );
    }

    #[test]
    fn a_value_count_that_does_not_fit_the_shape_is_refused() {
        let t = Tensor {
            name: "x",
            shape: vec![2, 2],
            values: Values::Float(vec![1.0; 3]),
        };
        assert!(tensor_proto(&t, Storage::Raw).is_err());
    }

    #[test]
    fn every_case_renders_a_model_and_one_file_per_tensor() {
        for case in spec_examples::cases() {
            let files = render(&case).unwrap();
            assert_eq!(
                files.len(),
                1 + case.inputs.len() + case.outputs.len(),
                "{}",
                case.name
            );
            let model = pb::ModelProto::decode(files[0].1.as_slice()).unwrap();
            let graph = model.graph.unwrap();
            assert_eq!(graph.node.len(), 1);
            assert_eq!(graph.node[0].op_type, case.op_type);
            assert_eq!(graph.node[0].domain, case.domain);
            assert_eq!(model.opset_import[0].domain, "");
            assert_eq!(model.opset_import[0].version, case.opset);
            let imports: Vec<(&str, i64)> = model.opset_import[1..]
                .iter()
                .map(|o| (o.domain.as_str(), o.version))
                .collect();
            assert_eq!(imports, case.imports, "{}", case.name);
        }
    }

    #[test]
    fn a_node_outside_the_default_domain_is_imported_after_ai_onnx() {
        let case = spec_examples::cases()
            .into_iter()
            .find(|c| c.name == "openvino_gather8_example1_opset13")
            .unwrap();
        let model = model(&case).unwrap();
        let imports: Vec<(&str, i64)> = model
            .opset_import
            .iter()
            .map(|o| (o.domain.as_str(), o.version))
            .collect();
        assert_eq!(imports, [("", 13), ("org.openvinotoolkit", 8)]);
        assert_eq!(model.graph.unwrap().node[0].domain, "org.openvinotoolkit");
        assert_eq!(op_label(&case), "Gather (org.openvinotoolkit 8)");
    }
}
