//! The XML half of an IR: `model.xml` read into [`Document`] (layers with their `<data>`
//! attributes and ports, and edges), with nothing interpreted yet.
//!
//! The reader is quick-xml's pull parser over the file's bytes, held to the parts of XML an IR
//! uses: a `<!DOCTYPE>` is refused outright (an IR has none, and its entity definitions are what
//! expansion bombs are made of), entity references other than XML's five and character references
//! are refused, nesting is bounded ([`MAX_DEPTH`]), and a document that ends inside an element is
//! truncated. Everything else the IR format carries (`rt_info`, `meta_data`, comments) is skipped.

use super::IrError;
use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;
use std::collections::BTreeMap;

/// The deepest element nesting read. An IR nests `net/layers/layer/output/port/dim` and some
/// `rt_info` below that: a dozen levels at most in practice.
pub const MAX_DEPTH: usize = 64;

/// A port's dimension as written in `<dim>`: a size, or `-1` / `?` / a range for a dynamic one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dim {
    /// A fixed size.
    Fixed(u64),
    /// A dynamic size (`-1`, `?`, or a range such as `1..10`).
    Dynamic(String),
}

/// A size as a number, a dynamic one as `?` (for `-1` or `?`) or as its range (`1..10`).
impl std::fmt::Display for Dim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Dim::Fixed(v) => write!(f, "{v}"),
            Dim::Dynamic(s) if s == "-1" => f.write_str("?"),
            Dim::Dynamic(s) => f.write_str(&shorten(s)),
        }
    }
}

/// One `<port>` of a layer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Port {
    /// Its `id`, as written.
    pub id: String,
    /// Its `precision` (`FP32`, `I64`, ...), when given.
    pub precision: Option<String>,
    /// Its `names` (comma-separated tensor names, IR v11), when given.
    pub names: Option<String>,
    /// Its `<dim>` children, in order.
    pub dims: Vec<Dim>,
    /// The line of the `<port>` tag, for messages.
    pub line: usize,
}

/// One `<layer>`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Layer {
    /// Its `id`, as written.
    pub id: String,
    /// Its `name` (may be empty).
    pub name: String,
    /// Its `type` (`Parameter`, `Const`, `Gather`, ...).
    pub kind: String,
    /// Its `version` (`opset1`, `opset8`, ...), empty when absent.
    pub version: String,
    /// The attributes of its `<data>` element, by name.
    pub data: BTreeMap<String, String>,
    /// Its `<input>` ports, in document order.
    pub inputs: Vec<Port>,
    /// Its `<output>` ports, in document order.
    pub outputs: Vec<Port>,
    /// The line of the `<layer>` tag, for messages.
    pub line: usize,
}

/// One `<edge>`: `from-layer`/`from-port` to `to-layer`/`to-port`, as written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Edge {
    /// The producing layer's id.
    pub from_layer: String,
    /// The producing layer's output port id.
    pub from_port: String,
    /// The consuming layer's id.
    pub to_layer: String,
    /// The consuming layer's input port id.
    pub to_port: String,
    /// The line of the `<edge>` tag, for messages.
    pub line: usize,
}

/// A parsed `model.xml`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Document {
    /// `<net name>`.
    pub name: String,
    /// `<net version>`, as written.
    pub version: String,
    /// The layers in document order.
    pub layers: Vec<Layer>,
    /// The edges in document order.
    pub edges: Vec<Edge>,
}

/// Why `model.xml` is not a readable IR document; the message names the line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {what}")]
pub struct XmlError {
    /// 1-based line of the problem.
    pub line: usize,
    /// What is wrong.
    pub what: String,
}

/// Where the parser is: the IR elements whose content matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// Anything read past (`rt_info`, `meta_data`, unknown elements).
    Skipped,
    Net,
    Layers,
    Layer,
    Input,
    Output,
    Port,
    Dim,
    Edges,
}

/// How many events are read between two looks at the case's deadline.
const EVENTS_PER_DEADLINE_CHECK: u32 = 4096;

/// Reads `model.xml`'s bytes into a [`Document`]. Fails with [`IrError::Xml`] for a document
/// that is not a readable IR, and with [`IrError::TimedOut`] once the case's deadline
/// (`--timeout`) has passed.
pub fn parse(bytes: &[u8]) -> Result<Document, IrError> {
    let mut lines = Lines::new(bytes);
    let text = std::str::from_utf8(bytes).map_err(|e| XmlError {
        line: lines.at(e.valid_up_to()),
        what: format!(
            "not UTF-8 (invalid byte at offset {}); IR files are UTF-8",
            e.valid_up_to()
        ),
    })?;
    let mut reader = Reader::from_str(text);
    reader.config_mut().check_end_names = true;
    reader.config_mut().check_comments = true;
    let mut doc = Document::default();
    let mut stack: Vec<(Place, String)> = Vec::new();
    let mut seen_root = false;
    let mut dim_text = String::new();
    let mut events = 0u32;
    loop {
        events = events.wrapping_add(1);
        if events % EVENTS_PER_DEADLINE_CHECK == 0 {
            crate::deadline::check()?;
        }
        let at = usize::try_from(reader.buffer_position()).unwrap_or(usize::MAX);
        let line_no = lines.at(at);
        let line = || line_no;
        let err = |what: String| IrError::from(XmlError { line: line(), what });
        let event = match reader.read_event() {
            Ok(event) => event,
            Err(e) => {
                let at = usize::try_from(reader.error_position()).unwrap_or(0);
                return Err(XmlError {
                    line: lines.at(at),
                    what: format!("malformed XML: {e}"),
                }
                .into());
            }
        };
        match event {
            Event::DocType(_) => {
                return Err(err(
                    "a <!DOCTYPE> is refused: IR files have none, and the entities it could define are not expanded".into(),
                ))
            }
            Event::Start(e) | Event::Empty(e) if stack.len() >= MAX_DEPTH => {
                let _ = e;
                return Err(err(format!(
                    "elements nest deeper than {MAX_DEPTH} levels"
                )));
            }
            Event::Start(ref e) | Event::Empty(ref e) => {
                let empty = matches!(event, Event::Empty(_));
                let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
                let parent = stack.last().map(|(p, _)| *p);
                let place = match (parent, name.as_str()) {
                    (None, "net") if !seen_root => Place::Net,
                    (None, _) if seen_root => {
                        return Err(err(format!(
                            "a second root element <{name}> after </net>"
                        )))
                    }
                    (None, _) => {
                        return Err(err(format!(
                            "the root element is <{name}>, not <net>: not an OpenVINO IR"
                        )))
                    }
                    (Some(Place::Net), "layers") => Place::Layers,
                    (Some(Place::Net), "edges") => Place::Edges,
                    (Some(Place::Layers), "layer") => Place::Layer,
                    (Some(Place::Layer), "input") => Place::Input,
                    (Some(Place::Layer), "output") => Place::Output,
                    (Some(Place::Input | Place::Output), "port") => Place::Port,
                    (Some(Place::Port), "dim") => Place::Dim,
                    _ => Place::Skipped,
                };
                let attrs = || attributes(e).map_err(&err);
                match place {
                    Place::Net => {
                        seen_root = true;
                        let a = attrs()?;
                        doc.name = a.get("name").cloned().unwrap_or_default();
                        doc.version = a.get("version").cloned().unwrap_or_default();
                    }
                    Place::Layer => {
                        let mut a = attrs()?;
                        doc.layers.push(Layer {
                            id: a.remove("id").unwrap_or_default(),
                            name: a.remove("name").unwrap_or_default(),
                            kind: a.remove("type").unwrap_or_default(),
                            version: a.remove("version").unwrap_or_default(),
                            line: line(),
                            ..Layer::default()
                        });
                    }
                    Place::Skipped
                        if parent == Some(Place::Layer) && name == "data" =>
                    {
                        let layer = doc.layers.last_mut().ok_or_else(|| err("<data> outside a layer".into()))?;
                        if !layer.data.is_empty() {
                            return Err(err(format!(
                                "layer id '{}' has two <data> elements",
                                layer.id
                            )));
                        }
                        layer.data = attrs()?;
                    }
                    Place::Port => {
                        let mut a = attrs()?;
                        let port = Port {
                            id: a.remove("id").unwrap_or_default(),
                            precision: a.remove("precision"),
                            names: a.remove("names"),
                            dims: Vec::new(),
                            line: line(),
                        };
                        let layer = doc.layers.last_mut().ok_or_else(|| err("<port> outside a layer".into()))?;
                        if parent == Some(Place::Input) {
                            layer.inputs.push(port);
                        } else {
                            layer.outputs.push(port);
                        }
                    }
                    Place::Dim => dim_text.clear(),
                    Place::Skipped if parent == Some(Place::Edges) && name == "edge" => {
                        let mut a = attrs()?;
                        let mut take = |k: &str| {
                            a.remove(k)
                                .ok_or_else(|| err(format!("<edge> has no '{k}' attribute")))
                        };
                        doc.edges.push(Edge {
                            from_layer: take("from-layer")?,
                            from_port: take("from-port")?,
                            to_layer: take("to-layer")?,
                            to_port: take("to-port")?,
                            line: line(),
                        });
                    }
                    _ => {}
                }
                if empty {
                    if place == Place::Dim {
                        return Err(err("an empty <dim/>: a dimension needs a value".into()));
                    }
                } else {
                    stack.push((place, name));
                }
            }
            Event::End(_) => {
                if let Some((Place::Dim, _)) = stack.last() {
                    let dim = parse_dim(dim_text.trim()).map_err(&err)?;
                    if let Some(port) = doc.layers.last_mut().and_then(|l| {
                        if stack.iter().any(|(p, _)| *p == Place::Input) {
                            l.inputs.last_mut()
                        } else {
                            l.outputs.last_mut()
                        }
                    }) {
                        port.dims.push(dim);
                    }
                }
                stack.pop();
            }
            Event::Text(t) => {
                if let Some((Place::Dim, _)) = stack.last() {
                    let s = t
                        .decode()
                        .map_err(|e| err(format!("undecodable text: {e}")))?;
                    dim_text.push_str(&s);
                }
            }
            Event::GeneralRef(r) => {
                let name = String::from_utf8_lossy(&r).into_owned();
                let known = r.is_char_ref()
                    || matches!(name.as_str(), "lt" | "gt" | "amp" | "apos" | "quot");
                if !known {
                    return Err(err(format!(
                        "entity reference '&{name};' is refused: only XML's predefined entities are read, and nothing defines others"
                    )));
                }
                if let Some((Place::Dim, _)) = stack.last() {
                    return Err(err(format!(
                        "a reference '&{name};' inside <dim>: a dimension is written as plain digits"
                    )));
                }
            }
            Event::CData(_) => {
                if let Some((Place::Dim, _)) = stack.last() {
                    return Err(err("CDATA inside <dim>: a dimension is written as plain digits".into()));
                }
            }
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) => {}
            Event::Eof => {
                if let Some((_, open)) = stack.last() {
                    return Err(err(format!(
                        "the file ends inside <{open}>: truncated ({} element(s) left open)",
                        stack.len()
                    )));
                }
                if !seen_root {
                    return Err(err("no <net> element: not an OpenVINO IR".into()));
                }
                return Ok(doc);
            }
        }
    }
}

/// An element's attributes, unescaped (XML's five entities and character references only).
fn attributes(e: &BytesStart<'_>) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    for a in e.attributes() {
        let a = a.map_err(|e| format!("malformed attribute: {e}"))?;
        let key = String::from_utf8_lossy(a.key.as_ref()).into_owned();
        let value = a
            .normalized_value(quick_xml::XmlVersion::Implicit1_0)
            .map_err(|e| format!("attribute '{key}': {e}"))?
            .into_owned();
        if out.insert(key.clone(), value).is_some() {
            return Err(format!("attribute '{key}' is given twice"));
        }
    }
    Ok(out)
}

/// A `<dim>`'s text: digits, or `-1`, `?` or a range (`1..10`, `..5`) for a dynamic size.
fn parse_dim(s: &str) -> Result<Dim, String> {
    if s == "-1" || s == "?" || (s.contains("..") && !s.is_empty()) {
        return Ok(Dim::Dynamic(s.to_string()));
    }
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "dimension '{}' is not a size (digits, or -1 / ? for a dynamic one)",
            shorten(s)
        ));
    }
    s.parse::<u64>()
        .ok()
        .filter(|&v| i64::try_from(v).is_ok())
        .map(Dim::Fixed)
        .ok_or_else(|| format!("dimension {} overflows a 64-bit size", shorten(s)))
}

/// `s`, cut to 40 characters for a message.
pub(crate) fn shorten(s: &str) -> String {
    if s.chars().count() <= 40 {
        s.to_string()
    } else {
        format!("{}...", s.chars().take(40).collect::<String>())
    }
}

/// The 1-based line of a byte offset, counted on from the last offset asked about: offsets
/// asked in increasing order (as the parser moves through the file) cost one pass over the file
/// in all, where counting from the start every time would cost a pass per element.
struct Lines<'a> {
    bytes: &'a [u8],
    /// The offset counted up to, and the line it is on.
    offset: usize,
    line: usize,
    /// Bytes looked at so far, to show that the work is linear.
    #[cfg(test)]
    scanned: usize,
}

impl<'a> Lines<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Lines {
            bytes,
            offset: 0,
            line: 1,
            #[cfg(test)]
            scanned: 0,
        }
    }

    /// The line of byte `offset` (the end of the file for an offset past it).
    fn at(&mut self, offset: usize) -> usize {
        let offset = offset.min(self.bytes.len());
        // Only an error position may lie behind the last offset: counted again from the start.
        if offset < self.offset {
            self.offset = 0;
            self.line = 1;
        }
        let between = &self.bytes[self.offset..offset];
        self.line += between.iter().filter(|&&b| b == b'\n').count();
        #[cfg(test)]
        {
            self.scanned += between.len();
        }
        self.offset = offset;
        self.line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = r#"<?xml version="1.0"?>
<net name="g" version="11">
  <layers>
    <layer id="0" name="data" type="Parameter" version="opset1">
      <data shape="5" element_type="i64"/>
      <output><port id="0" precision="I64" names="data"><dim>5</dim></port></output>
    </layer>
    <layer id="1" name="out" type="Result" version="opset1">
      <input><port id="0"><dim>5</dim></port></input>
      <rt_info><attribute name="x" version="0" value="&lt;y&gt;"/></rt_info>
    </layer>
  </layers>
  <edges><edge from-layer="0" from-port="0" to-layer="1" to-port="0"/></edges>
</net>
"#;

    fn error(text: &str) -> String {
        parse(text.as_bytes()).unwrap_err().to_string()
    }

    #[test]
    fn a_small_ir_reads_into_layers_ports_and_edges() {
        let d = parse(SMALL.as_bytes()).unwrap();
        assert_eq!(d.version, "11");
        assert_eq!(d.layers.len(), 2);
        let p = &d.layers[0];
        assert_eq!((p.id.as_str(), p.kind.as_str()), ("0", "Parameter"));
        assert_eq!(p.data["element_type"], "i64");
        assert_eq!(p.outputs[0].dims, [Dim::Fixed(5)]);
        assert_eq!(p.outputs[0].names.as_deref(), Some("data"));
        assert_eq!(d.layers[1].inputs[0].dims, [Dim::Fixed(5)]);
        assert_eq!(d.edges.len(), 1);
        assert_eq!(d.edges[0].to_layer, "1");
        assert_eq!(d.edges[0].line, 13);
    }

    #[test]
    fn a_doctype_is_refused_before_any_entity_is_defined() {
        let bomb = r#"<?xml version="1.0"?>
<!DOCTYPE net [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>
<net version="11"><layers/></net>"#;
        let e = error(bomb);
        assert!(e.starts_with("line 2: a <!DOCTYPE> is refused"), "{e}");
    }

    #[test]
    fn undefined_entities_are_refused_in_text_and_attributes() {
        let e = error(r#"<net version="11"><layers>&b;</layers></net>"#);
        assert!(e.contains("entity reference '&b;' is refused"), "{e}");
        let e = error(r#"<net version="11" name="&b;"><layers/></net>"#);
        assert!(e.contains("attribute 'name'"), "{e}");
    }

    #[test]
    fn truncated_documents_name_the_open_element() {
        let cut = &SMALL[..SMALL.find("</layers>").unwrap()];
        let e = error(cut);
        assert!(
            e.contains("the file ends inside <layers>: truncated"),
            "{e}"
        );
        assert!(error("").contains("no <net> element"));
        let e = error(&SMALL[..SMALL.find("precision").unwrap()]);
        assert!(
            e.contains("malformed XML") || e.contains("truncated"),
            "{e}"
        );
    }

    #[test]
    fn deep_nesting_is_bounded() {
        let deep = format!(
            "<net version=\"11\">{}{}</net>",
            "<a>".repeat(100),
            "</a>".repeat(100)
        );
        assert!(error(&deep).contains("nest deeper than 64"));
    }

    #[test]
    fn dims_must_be_sizes_that_fit_in_64_bits() {
        let with_dim = |d: &str| SMALL.replacen("<dim>5</dim>", &format!("<dim>{d}</dim>"), 1);
        assert!(error(&with_dim("99999999999999999999")).contains("overflows"));
        assert!(error(&with_dim("9223372036854775808")).contains("overflows"));
        assert!(error(&with_dim("5x")).contains("is not a size"));
        assert!(error(&with_dim("&#53;")).contains("inside <dim>"));
        let d = parse(with_dim("?").as_bytes()).unwrap();
        assert_eq!(d.layers[0].outputs[0].dims, [Dim::Dynamic("?".into())]);
        let d = parse(with_dim(" 7 ").as_bytes()).unwrap();
        assert_eq!(d.layers[0].outputs[0].dims, [Dim::Fixed(7)]);
    }

    #[test]
    fn mismatched_tags_and_other_roots_are_malformed() {
        assert!(error("<net version=\"11\"><layers></edges></net>").contains("malformed XML"));
        assert!(error("<model/>").contains("not <net>"));
        assert!(error("<net/><net/>").contains("second root"));
        assert!(
            error("<net><layers><layer id=\"1\" id=\"2\"/></layers></net>").contains("twice")
                || error("<net><layers><layer id=\"1\" id=\"2\"/></layers></net>")
                    .contains("malformed")
        );
    }

    #[test]
    fn lines_are_counted_once_for_offsets_in_order_and_again_after_a_step_back() {
        let text = "a\nbb\n\nccc\nd";
        // Lines worked out by hand: offsets 0-1 are on line 1, 2-4 on 2, 5 on 3, 6-9 on 4, 10 on 5.
        let want = [1, 1, 2, 2, 2, 3, 4, 4, 4, 4, 5];
        let mut lines = Lines::new(text.as_bytes());
        for (offset, line) in want.iter().enumerate() {
            assert_eq!(lines.at(offset), *line, "offset {offset}");
        }
        assert_eq!(lines.scanned, text.len() - 1);
        assert_eq!(lines.at(3), 2);
        assert_eq!(lines.at(99), 5);
        // A long file read in order: every byte is looked at once, not once per query.
        let big = "<layer/>\n".repeat(10_000);
        let mut lines = Lines::new(big.as_bytes());
        for k in 0..10_000 {
            assert_eq!(lines.at(k * 9 + 4), k + 1);
        }
        assert!(
            lines.scanned <= big.len(),
            "{} bytes scanned",
            lines.scanned
        );
    }

    #[test]
    fn a_passed_deadline_stops_a_long_parse() {
        let layers: String = (0..10_000)
            .map(|k| format!("<layer id=\"{k}\" type=\"Parameter\"/>\n"))
            .collect();
        let doc = format!("<net version=\"11\"><layers>{layers}</layers></net>");
        assert_eq!(parse(doc.as_bytes()).unwrap().layers.len(), 10_000);
        let e = crate::deadline::with_limit(Some(std::time::Duration::from_nanos(1)), || {
            std::thread::sleep(std::time::Duration::from_millis(2));
            parse(doc.as_bytes()).unwrap_err()
        });
        assert!(matches!(e, IrError::TimedOut(_)), "{e}");
    }

    #[test]
    fn invalid_utf8_is_named_with_its_offset() {
        let mut b = SMALL.as_bytes().to_vec();
        b[30] = 0xFF;
        let e = parse(&b).unwrap_err().to_string();
        assert!(e.contains("not UTF-8 (invalid byte at offset 30)"), "{e}");
    }
}
