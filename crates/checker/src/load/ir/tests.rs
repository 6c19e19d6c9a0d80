//! The IR reader on small IRs written by [`super::write`], and on hostile ones.

use super::write::{single_layer, OpLayer, Operand};
use super::*;
use crate::eval;
use crate::tensor::Tensor;

fn le_i64(v: &[i64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A case directory holding `xml` and `bin`.
fn case_dir(xml: &str, bin: &[u8]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(XML_FILE), xml).unwrap();
    std::fs::write(dir.path().join(BIN_FILE), bin).unwrap();
    dir
}

/// Gather `version` on Parameters `data` (i64, `dshape`) and `indices` (i64, `ishape`), with
/// the axis a Const.
fn gather_ir(
    version: &str,
    attrs: &[(&str, String)],
    dshape: &[u64],
    ishape: &[u64],
    axis: i64,
    oshape: &[u64],
) -> (String, Vec<u8>) {
    let axis_bytes = le_i64(&[axis]);
    let inputs = [
        Operand {
            name: "data",
            element_type: "i64",
            shape: dshape,
            constant: None,
        },
        Operand {
            name: "indices",
            element_type: "i64",
            shape: ishape,
            constant: None,
        },
        Operand {
            name: "axis",
            element_type: "i64",
            shape: &[],
            constant: Some(&axis_bytes),
        },
    ];
    single_layer(
        "g",
        &OpLayer {
            name: "gather",
            kind: "Gather",
            version,
            attrs,
            inputs: &inputs,
            output_name: "output",
            output_type: "i64",
            output_shape: oshape,
        },
    )
}

fn load(dir: &tempfile::TempDir) -> Result<ModelProto, LoadError> {
    load_ir(dir.path(), 1 << 20, 1 << 20, false).map(|m| m.model)
}

fn error(xml: &str, bin: &[u8]) -> String {
    let dir = case_dir(xml, bin);
    load(&dir).unwrap_err().to_string()
}

/// Runs the model on `inputs` and returns its one output.
fn run(model: &ModelProto, dir: &Path, inputs: &[Tensor]) -> Result<Tensor, String> {
    let plan = eval::plan(model).map_err(|e| e.to_string())?;
    let ctx = crate::load::tensor::TensorContext {
        base_dir: dir,
        max_bytes: 1 << 20,
    };
    let inits: Vec<(String, Tensor)> = plan
        .initializers()
        .iter()
        .map(|p| {
            (
                p.name.clone(),
                crate::load::convert_tensor(p, XML_FILE, &ctx).unwrap(),
            )
        })
        .collect();
    let out = plan
        .evaluate(&inits, inputs, dir, 1 << 20)
        .map_err(|e| e.to_string())?;
    Ok(out.into_iter().next().unwrap().tensor)
}

fn i64s(shape: &[usize], v: &[i64]) -> Tensor {
    Tensor::from_vec(shape.to_vec(), v.to_vec()).unwrap()
}

#[test]
fn gather8_example2_reads_and_evaluates_as_the_spec_prints() {
    // OpenVINO Gather-8 spec, Example 2: batch_dims 1, axis 1.
    let (xml, bin) = gather_ir(
        "opset8",
        &[("batch_dims", "1".into())],
        &[2, 5],
        &[2, 3],
        1,
        &[2, 3],
    );
    let dir = case_dir(&xml, &bin);
    let model = load(&dir).unwrap();
    assert_eq!(model.opset_import[0].domain, DOMAIN);
    assert_eq!(model.opset_import[0].version, 8);
    let plan = eval::plan(&model).unwrap();
    let names: Vec<&str> = plan.inputs.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["data", "indices"]);
    let out = run(
        &model,
        dir.path(),
        &[
            i64s(&[2, 5], &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]),
            i64s(&[2, 3], &[0, 0, 4, 4, 0, 0]),
        ],
    )
    .unwrap();
    assert_eq!(out, i64s(&[2, 3], &[1, 1, 5, 10, 6, 6]));
}

#[test]
fn each_gather_version_keeps_its_own_index_rules() {
    let data = i64s(&[5], &[1, 2, 3, 4, 5]);
    let indices = i64s(&[3], &[0, -2, -1]);
    let with = |version: &str, attrs: &[(&str, String)]| {
        let (xml, bin) = gather_ir(version, attrs, &[5], &[3], 0, &[3]);
        let dir = case_dir(&xml, &bin);
        let model = load(&dir).unwrap();
        run(&model, dir.path(), &[data.clone(), indices.clone()])
    };
    // Gather-8, Example 6: negative indices count from the back.
    assert_eq!(with("opset8", &[]).unwrap(), i64s(&[3], &[1, 4, 5]));
    // Gather-1 and Gather-7: indices lie in [0, s-1].
    for v in ["opset1", "opset7"] {
        let e = with(v, &[]).unwrap_err();
        assert!(
            e.contains("indices[1] = -2 is negative")
                && e.contains("negative indices arrive with opset 8"),
            "{v}: {e}"
        );
    }
    // Gather-1 has no batch_dims (D5: an attribute the version does not define).
    let e = with("opset1", &[("batch_dims", "0".into())]).unwrap_err();
    assert!(e.contains("batch_dims"), "{e}");
}

#[test]
fn gather7_takes_batch_dims_and_refuses_out_of_range() {
    // OpenVINO Gather-7 spec, Example 2: batch_dims 1, axis 1.
    let (xml, bin) = gather_ir(
        "opset7",
        &[("batch_dims", "1".into())],
        &[2, 5],
        &[2, 3],
        1,
        &[2, 3],
    );
    let dir = case_dir(&xml, &bin);
    let model = load(&dir).unwrap();
    let data = i64s(&[2, 5], &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    let out = run(
        &model,
        dir.path(),
        &[data.clone(), i64s(&[2, 3], &[0, 0, 4, 4, 0, 0])],
    )
    .unwrap();
    assert_eq!(out, i64s(&[2, 3], &[1, 1, 5, 10, 6, 6]));
    let e = run(
        &model,
        dir.path(),
        &[data, i64s(&[2, 3], &[0, 0, 5, 4, 0, 0])],
    )
    .unwrap_err();
    assert!(e.contains("indices[0,2] = 5 is out of range [0, 4]"), "{e}");
}

#[test]
fn const_ranges_are_checked_against_the_file_before_reading() {
    let (xml, bin) = gather_ir("opset8", &[], &[5], &[3], 0, &[3]);
    // The axis Const claims bytes 0..8; a 4-byte model.bin does not hold them.
    let e = error(&xml, &bin[..4]);
    assert!(e.starts_with("model.bin: layer 'axis' (id 2, Const opset1) (offset 0, size 8): the range ends past the end of model.bin (4 bytes)"), "{e}");
    // An offset near u64::MAX does not wrap.
    let far = xml.replace("offset=\"0\"", "offset=\"18446744073709551615\"");
    assert!(error(&far, &bin).contains("ends past the end of model.bin"));
    // A size that does not match the shape is refused before the file is opened.
    let lying = xml.replace("size=\"8\"", "size=\"4\"");
    assert!(error(&lying, &bin).contains("size 4 does not match its 1 int64 element(s)"));
    // Dims whose product overflows.
    let huge = xml.replace(
        "element_type=\"i64\" shape=\"\"",
        "element_type=\"i64\" shape=\"4294967296,4294967296,4294967296\"",
    );
    let e = error(&huge, &bin);
    assert!(e.contains("overflows"), "{e}");
    // A missing model.bin.
    let dir = case_dir(&xml, &bin);
    std::fs::remove_file(dir.path().join(BIN_FILE)).unwrap();
    assert!(load(&dir)
        .unwrap_err()
        .to_string()
        .starts_with("model.bin: "));
}

#[cfg(unix)]
#[test]
fn model_bin_is_never_read_through_a_symbolic_link() {
    let (xml, bin) = gather_ir("opset8", &[], &[5], &[3], 0, &[3]);
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("w.bin"), &bin).unwrap();
    let dir = case_dir(&xml, &bin);
    std::fs::remove_file(dir.path().join(BIN_FILE)).unwrap();
    std::os::unix::fs::symlink(outside.path().join("w.bin"), dir.path().join(BIN_FILE)).unwrap();
    let e = load(&dir).unwrap_err().to_string();
    assert!(e.contains("not a regular file"), "{e}");
}

#[test]
fn broken_wiring_is_an_invalid_model_naming_the_edge_or_port() {
    let (xml, bin) = gather_ir("opset8", &[], &[5], &[3], 0, &[3]);
    let missing_port = xml.replace(
        "to-layer=\"3\" to-port=\"2\"",
        "to-layer=\"3\" to-port=\"7\"",
    );
    let e = error(&missing_port, &bin);
    assert!(
        e.contains(
            "ends at port 7 of layer 'gather' (id 3, Gather opset8), which has no such input port"
        ),
        "{e}"
    );
    let missing_layer = xml.replace("from-layer=\"1\"", "from-layer=\"42\"");
    assert!(error(&missing_layer, &bin).contains("starts at layer id 42, which does not exist"));
    let dropped = xml.replace(
        "\t\t<edge from-layer=\"2\" from-port=\"0\" to-layer=\"3\" to-port=\"2\"/>\n",
        "",
    );
    assert!(error(&dropped, &bin)
        .contains("input port 2 of layer 'gather' (id 3, Gather opset8) is not connected"));
    let twice = xml.replace(
        "to-layer=\"3\" to-port=\"1\"",
        "to-layer=\"3\" to-port=\"0\"",
    );
    assert!(error(&twice, &bin).contains("is fed by two edges"));
    let dup = xml.replace("<layer id=\"1\"", "<layer id=\"0\"");
    assert!(error(&dup, &bin).contains("share id 0"));
}

#[test]
fn a_cycle_is_an_invalid_model() {
    // Two Gathers feeding each other's data input.
    let xml = r#"<net name="c" version="11"><layers>
<layer id="0" name="i" type="Parameter" version="opset1"><data shape="1" element_type="i64"/><output><port id="0"><dim>1</dim></port></output></layer>
<layer id="1" name="a" type="Gather" version="opset8"><input><port id="0"/><port id="1"/><port id="2"/></input><output><port id="3"/></output></layer>
<layer id="2" name="b" type="Gather" version="opset8"><input><port id="0"/><port id="1"/><port id="2"/></input><output><port id="3"/></output></layer>
<layer id="3" name="r" type="Result" version="opset1"><input><port id="0"/></input></layer>
</layers><edges>
<edge from-layer="2" from-port="3" to-layer="1" to-port="0"/><edge from-layer="0" from-port="0" to-layer="1" to-port="1"/><edge from-layer="0" from-port="0" to-layer="1" to-port="2"/>
<edge from-layer="1" from-port="3" to-layer="2" to-port="0"/><edge from-layer="0" from-port="0" to-layer="2" to-port="1"/><edge from-layer="0" from-port="0" to-layer="2" to-port="2"/>
<edge from-layer="1" from-port="3" to-layer="3" to-port="0"/>
</edges></net>"#;
    let e = error(xml, b"");
    assert!(
        e.contains("the edges form a cycle: layers 'a' (id 1), 'b' (id 2)"),
        "{e}"
    );
}

#[test]
fn unknown_layers_mixed_versions_and_old_irs_are_unsupported() {
    let (xml, bin) = gather_ir("opset8", &[], &[5], &[3], 0, &[3]);
    let skipped = |xml: &str| {
        let dir = case_dir(xml, &bin);
        let e = load(&dir).unwrap_err();
        assert!(e.is_unsupported(), "{e}");
        e.to_string()
    };
    let e = skipped(&xml.replace("type=\"Gather\"", "type=\"Convert\""));
    assert!(e.contains("layer type Convert is not supported"), "{e}");
    let e = skipped(&xml.replace("version=\"opset8\"", "version=\"opset13\""));
    assert!(
        e.contains("Gather version 'opset13' is not supported"),
        "{e}"
    );
    let e = skipped(&xml.replace("version=\"11\"", "version=\"7\""));
    assert!(e.contains("IR version 7 is not supported"), "{e}");
    let e = skipped(&xml.replace(
        "element_type=\"i64\" shape=\"\"",
        "element_type=\"nf4\" shape=\"\"",
    ));
    assert!(e.contains("element type 'nf4' is not supported"), "{e}");
}

#[test]
fn hostile_xml_is_refused_with_the_line() {
    let (xml, bin) = gather_ir("opset8", &[], &[5], &[3], 0, &[3]);
    let e = error(&xml[..xml.len() / 2], &bin);
    assert!(e.starts_with("model.xml: line "), "{e}");
    let bomb = xml.replacen(
        "<net",
        "<!DOCTYPE net [<!ENTITY a \"x\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;\">]>\n<net",
        1,
    );
    assert!(error(&bomb, &bin).contains("<!DOCTYPE> is refused"));
    assert!(check_xml(b"\xff\xfe").is_err());
}

#[test]
fn a_case_directory_is_read_as_onnx_when_both_models_are_there() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(format_of(dir.path()), None);
    std::fs::write(dir.path().join(XML_FILE), "").unwrap();
    assert_eq!(format_of(dir.path()), Some(ModelFormat::Ir));
    std::fs::write(dir.path().join("model.onnx"), "").unwrap();
    assert_eq!(format_of(dir.path()), Some(ModelFormat::Onnx));
}

#[test]
fn tensors_take_the_ports_names_and_two_ports_may_not_share_one() {
    let (xml, bin) = gather_ir("opset8", &[], &[5], &[3], 0, &[3]);
    let dir = case_dir(&xml, &bin);
    let model = load(&dir).unwrap();
    let graph = model.graph.unwrap();
    // The writer names the Gather's output port `output`, the Const's `axis`.
    assert_eq!(graph.output[0].name, "output");
    assert_eq!(graph.node[0].input, ["data", "indices", "axis"]);
    let clash = xml.replace("names=\"output\"", "names=\"axis\"");
    let e = error(&clash, &bin);
    assert!(e.contains("both carry tensor 'axis'"), "{e}");
    // Without names, `<layer id>:<port id>`.
    let bare = xml
        .replace(" names=\"output\"", "")
        .replace(" names=\"axis\"", "");
    let model = load(&case_dir(&bare, &bin)).unwrap();
    assert_eq!(model.graph.unwrap().output[0].name, "3:3");
}

#[test]
fn a_const_without_its_output_port_is_an_invalid_model() {
    // Found by the ir_reader fuzz target: the Const's tensor was named after a port it lacked.
    let (xml, bin) = gather_ir("opset8", &[], &[5], &[3], 0, &[3]);
    let lone = xml.replacen(
        "\t</layers>",
        "\t\t<layer id=\"9\" name=\"lone\" type=\"Const\" version=\"opset1\">\
         <data element_type=\"i64\" shape=\"\" offset=\"0\" size=\"8\"/></layer>\n\t</layers>",
        1,
    );
    assert_ne!(lone, xml);
    let e = error(&lone, &bin);
    assert!(
        e.contains("layer 'lone' (id 9, Const opset1) has 0 input and 0 output port(s); a Const has 0 and 1"),
        "{e}"
    );
}
