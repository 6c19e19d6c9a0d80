//! Writing a single-layer OpenVINO IR (v11): `model.xml` text and `model.bin` bytes for one
//! operator layer fed by Parameters and Consts, with one Result.
//!
//! Depends on nothing but `std`, so that `cargo xtask testdata` compiles this very file (as it
//! does the prost types) and the IR it commits is written exactly as `generate --format ir`
//! writes IR.

use std::fmt::Write as _;

/// An input of the layer: a Parameter (bound to `input_K.pb`) or, with `constant`, a Const whose
/// little-endian bytes go to `model.bin`.
#[derive(Clone, Debug)]
pub struct Operand<'a> {
    /// The Parameter's or Const's layer name (a Parameter's is the input's name).
    pub name: &'a str,
    /// OpenVINO element type (`f32`, `i64`, `boolean`, ...).
    pub element_type: &'a str,
    /// Dimensions; empty for a scalar.
    pub shape: &'a [u64],
    /// The Const's bytes; `None` for a Parameter.
    pub constant: Option<&'a [u8]>,
}

/// The operator layer.
#[derive(Clone, Debug)]
pub struct OpLayer<'a> {
    /// Layer name.
    pub name: &'a str,
    /// Layer type (`Gather`).
    pub kind: &'a str,
    /// Layer version (`opset8`).
    pub version: &'a str,
    /// `<data>` attributes, written in this order; none: no `<data>` element.
    pub attrs: &'a [(&'a str, String)],
    /// Its inputs, ports 0.. in order.
    pub inputs: &'a [Operand<'a>],
    /// The Result layer's name.
    pub output_name: &'a str,
    /// The output's element type.
    pub output_type: &'a str,
    /// The output's dims.
    pub output_shape: &'a [u64],
}

/// The port `precision` IR v10/v11 writes for an element type.
pub fn precision(element_type: &str) -> String {
    match element_type {
        "f16" => "FP16".into(),
        "f32" => "FP32".into(),
        "f64" => "FP64".into(),
        "boolean" => "BOOL".into(),
        other => other.to_ascii_uppercase(),
    }
}

/// Escapes text for an attribute value.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn port(
    out: &mut String,
    indent: &str,
    id: usize,
    element_type: &str,
    shape: &[u64],
    names: Option<&str>,
) {
    let names = names.map_or(String::new(), |n| format!(" names=\"{}\"", escape(n)));
    if shape.is_empty() {
        let _ = writeln!(
            out,
            "{indent}<port id=\"{id}\" precision=\"{}\"{names}/>",
            precision(element_type)
        );
        return;
    }
    let _ = writeln!(
        out,
        "{indent}<port id=\"{id}\" precision=\"{}\"{names}>",
        precision(element_type)
    );
    for d in shape {
        let _ = writeln!(out, "{indent}\t<dim>{d}</dim>");
    }
    let _ = writeln!(out, "{indent}</port>");
}

fn shape_attr(shape: &[u64]) -> String {
    shape
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// The `model.xml` text and `model.bin` bytes of `layer` in a net named `net`. Layer ids are
/// 0.. for the inputs in order, then the operator, then the Result; Consts' bytes are laid out
/// in input order without padding.
pub fn single_layer(net: &str, layer: &OpLayer<'_>) -> (String, Vec<u8>) {
    let mut xml = String::new();
    let mut bin = Vec::new();
    let _ = writeln!(xml, "<?xml version=\"1.0\"?>");
    let _ = writeln!(xml, "<net name=\"{}\" version=\"11\">", escape(net));
    let _ = writeln!(xml, "\t<layers>");
    for (id, input) in layer.inputs.iter().enumerate() {
        let shape = shape_attr(input.shape);
        match input.constant {
            None => {
                let _ = writeln!(
                    xml,
                    "\t\t<layer id=\"{id}\" name=\"{}\" type=\"Parameter\" version=\"opset1\">",
                    escape(input.name)
                );
                let _ = writeln!(
                    xml,
                    "\t\t\t<data shape=\"{shape}\" element_type=\"{}\"/>",
                    input.element_type
                );
            }
            Some(bytes) => {
                let _ = writeln!(
                    xml,
                    "\t\t<layer id=\"{id}\" name=\"{}\" type=\"Const\" version=\"opset1\">",
                    escape(input.name)
                );
                let _ = writeln!(
                    xml,
                    "\t\t\t<data element_type=\"{}\" shape=\"{shape}\" offset=\"{}\" size=\"{}\"/>",
                    input.element_type,
                    bin.len(),
                    bytes.len()
                );
                bin.extend_from_slice(bytes);
            }
        }
        let _ = writeln!(xml, "\t\t\t<output>");
        port(
            &mut xml,
            "\t\t\t\t",
            0,
            input.element_type,
            input.shape,
            Some(input.name),
        );
        let _ = writeln!(xml, "\t\t\t</output>");
        let _ = writeln!(xml, "\t\t</layer>");
    }
    let op = layer.inputs.len();
    let _ = writeln!(
        xml,
        "\t\t<layer id=\"{op}\" name=\"{}\" type=\"{}\" version=\"{}\">",
        escape(layer.name),
        escape(layer.kind),
        escape(layer.version)
    );
    if !layer.attrs.is_empty() {
        let attrs: Vec<String> = layer
            .attrs
            .iter()
            .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
            .collect();
        let _ = writeln!(xml, "\t\t\t<data {}/>", attrs.join(" "));
    }
    let _ = writeln!(xml, "\t\t\t<input>");
    for (p, input) in layer.inputs.iter().enumerate() {
        port(
            &mut xml,
            "\t\t\t\t",
            p,
            input.element_type,
            input.shape,
            None,
        );
    }
    let _ = writeln!(xml, "\t\t\t</input>");
    let _ = writeln!(xml, "\t\t\t<output>");
    port(
        &mut xml,
        "\t\t\t\t",
        op,
        layer.output_type,
        layer.output_shape,
        Some(layer.output_name),
    );
    let _ = writeln!(xml, "\t\t\t</output>");
    let _ = writeln!(xml, "\t\t</layer>");
    let result = op + 1;
    let _ = writeln!(
        xml,
        "\t\t<layer id=\"{result}\" name=\"{}\" type=\"Result\" version=\"opset1\">",
        escape(layer.output_name)
    );
    let _ = writeln!(xml, "\t\t\t<input>");
    port(
        &mut xml,
        "\t\t\t\t",
        0,
        layer.output_type,
        layer.output_shape,
        None,
    );
    let _ = writeln!(xml, "\t\t\t</input>");
    let _ = writeln!(xml, "\t\t</layer>");
    let _ = writeln!(xml, "\t</layers>");
    let _ = writeln!(xml, "\t<edges>");
    for p in 0..op {
        let _ = writeln!(
            xml,
            "\t\t<edge from-layer=\"{p}\" from-port=\"0\" to-layer=\"{op}\" to-port=\"{p}\"/>"
        );
    }
    let _ = writeln!(
        xml,
        "\t\t<edge from-layer=\"{op}\" from-port=\"{op}\" to-layer=\"{result}\" to-port=\"0\"/>"
    );
    let _ = writeln!(xml, "\t</edges>");
    let _ = writeln!(xml, "</net>");
    (xml, bin)
}
