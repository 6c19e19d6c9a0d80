//! `show` for people: a tensor file as its facts and its values in nested rows, a model as its
//! header, declarations and nodes, a case as its model and then every data set. Names and
//! messages read from files have their control characters escaped, so no file can move the
//! terminal's cursor or change its colours.

use super::layout::{self, EDGE_ITEMS, SUMMARY_THRESHOLD};
use super::{
    attr_type_name, node_domain, storage, AttrValue, CaseView, DataSetView, Dim, Model, Shown,
    Slot, SlotContent, TensorFile, ValueType,
};
use onnx_idx_check::load::LoadedTensor;
use onnx_idx_check::pending::{preview, PREVIEW_VALUES};
use onnx_idx_check::report::one_line;
use onnx_idx_check::tensor::Tensor;
use std::fmt::Write as _;

/// The whole text, ending with a newline.
pub fn render(shown: &Shown, full: bool) -> String {
    let mut out = String::new();
    match shown {
        Shown::Tensor(t) => tensor_file(&mut out, t, full),
        Shown::Model(m) => model(&mut out, m, full),
        Shown::Case(c) => case(&mut out, c, full),
    }
    out
}

fn tensor_file(out: &mut String, f: &TensorFile, full: bool) {
    let t = &f.loaded.tensor;
    let n = t.numel();
    let _ = writeln!(out, "file:    {}", one_line(&f.file));
    let _ = writeln!(
        out,
        "sha256:  {}",
        f.loaded.sha256.as_deref().unwrap_or("-")
    );
    let _ = writeln!(out, "name:    {}", quoted(&f.loaded.name));
    let _ = writeln!(out, "dtype:   {}", t.dtype());
    let _ = writeln!(out, "shape:   {}", shape(t.shape()));
    let _ = writeln!(out, "values:  {n}, in {}", storage(&f.loaded));
    values(out, t, full, "");
}

/// The values of `t` in nested rows, each line after `indent`, and a note when some were left out.
fn values(out: &mut String, t: &Tensor, full: bool, indent: &str) {
    let l = layout::render(t, full);
    for line in l.text.lines() {
        if line.is_empty() {
            out.push('\n');
        } else {
            let _ = writeln!(out, "{indent}{line}");
        }
    }
    if l.summarized {
        let _ = writeln!(
            out,
            "{indent}(more than {SUMMARY_THRESHOLD} values: the first and last {EDGE_ITEMS} along each long axis; --full shows all {})",
            t.numel()
        );
    }
}

/// `[5, 4, 3]`.
fn shape(dims: &[usize]) -> String {
    let dims: Vec<String> = dims.iter().map(usize::to_string).collect();
    format!("[{}]", dims.join(", "))
}

/// `'name'`, escaped, or `(none)` for an empty name.
fn quoted(name: &str) -> String {
    if name.is_empty() {
        "(none)".to_string()
    } else {
        format!("'{}'", one_line(name))
    }
}

fn model(out: &mut String, m: &Model, full: bool) {
    let p = &m.proto;
    let _ = writeln!(out, "{}", one_line(&m.file));
    let mut facts: Vec<(&str, String)> = vec![
        ("sha256", m.sha256.clone()),
        ("ir_version", p.ir_version.to_string()),
    ];
    let producer = format!("{} {}", p.producer_name, p.producer_version);
    if !producer.trim().is_empty() {
        facts.push(("producer", one_line(producer.trim())));
    }
    if !p.domain.is_empty() {
        facts.push(("domain", one_line(&p.domain)));
    }
    let opsets: Vec<String> = p
        .opset_import
        .iter()
        .map(|o| {
            let d = onnx_idx_check::eval::display_domain(onnx_idx_check::ops::canonical_domain(
                &o.domain,
            ));
            format!("{} {}", one_line(d), o.version)
        })
        .collect();
    facts.push(("opset_import", opsets.join(", ")));
    let graph = p.graph.as_ref();
    facts.push((
        "graph",
        graph.map_or("(none: the model has no graph)".to_string(), |g| {
            quoted(&g.name)
        }),
    ));
    for (key, value) in facts {
        let _ = writeln!(out, "  {:<14}{value}", format!("{key}:"));
    }
    let Some(g) = graph else {
        return;
    };
    let data_inputs = onnx_idx_check::eval::data_inputs(g);
    for (title, list) in [("inputs", &g.input), ("outputs", &g.output)] {
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(out, "  {title}:");
        let rows: Vec<(String, String)> = list
            .iter()
            .map(|v| {
                let mut ty = value_type(&ValueType::of(v));
                if title == "inputs" && !data_inputs.iter().any(|d| std::ptr::eq(*d, v)) {
                    ty.push_str(" (has an initializer)");
                }
                (one_line(&v.name), ty)
            })
            .collect();
        let width = rows
            .iter()
            .map(|(n, _)| n.chars().count())
            .max()
            .unwrap_or(0);
        for (name, ty) in rows {
            let _ = writeln!(out, "    {name:<width$}  {ty}");
        }
    }
    if !g.initializer.is_empty() {
        let _ = writeln!(out, "  initializers:");
        for (proto, t) in g.initializer.iter().zip(&m.initializers) {
            match t {
                Ok(t) => {
                    let _ = writeln!(out, "    {}: {}", quoted(&proto.name), summary(t));
                    values(out, t, full, "      ");
                }
                Err(e) => {
                    let _ = writeln!(out, "    {}: error: {}", quoted(&proto.name), one_line(e));
                }
            }
        }
    }
    let _ = writeln!(out, "  nodes:");
    if g.node.is_empty() {
        let _ = writeln!(out, "    (none)");
    }
    for (i, node) in g.node.iter().enumerate() {
        let name = if node.name.is_empty() {
            String::new()
        } else {
            format!(" {}", quoted(&node.name))
        };
        let names = |list: &[String]| {
            list.iter()
                .map(|n| {
                    if n.is_empty() {
                        "''".to_string()
                    } else {
                        one_line(n)
                    }
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut line = format!(
            "    #{i}{name} {} ({}): {} -> {}",
            one_line(&node.op_type),
            one_line(node_domain(node)),
            names(&node.input),
            names(&node.output)
        );
        let attrs: Vec<String> = node
            .attribute
            .iter()
            .enumerate()
            .map(|(a, attr)| {
                let value = match AttrValue::of(attr) {
                    AttrValue::Tensor => match m.tensor_attribute(i, a) {
                        Some(Ok(t)) => format!("<{}>", one_line(&preview(t))),
                        Some(Err(e)) => format!("<error: {}>", one_line(e)),
                        None => format!("<{}>", attr_type_name(attr)),
                    },
                    v => attr_value(&v, full),
                };
                format!("{}={value}", one_line(&attr.name))
            })
            .collect();
        if !attrs.is_empty() {
            let _ = write!(line, "; {}", attrs.join(", "));
        }
        let _ = writeln!(out, "{line}");
    }
}

/// `float [N, 3]`, `int64 (unknown rank)`, `sequence`.
fn value_type(t: &ValueType) -> String {
    if !matches!(t.kind, "tensor" | "sparse tensor") {
        return t.kind.to_string();
    }
    let prefix = if t.kind == "tensor" { "" } else { "sparse " };
    let dims = match &t.shape {
        None => "(unknown rank)".to_string(),
        Some(dims) => {
            let dims: Vec<String> = dims
                .iter()
                .map(|d| match d {
                    Dim::Value(v) => v.to_string(),
                    Dim::Param(p) => one_line(p),
                    Dim::Unknown => "?".to_string(),
                })
                .collect();
            format!("[{}]", dims.join(", "))
        }
    };
    format!("{prefix}{} {dims}", t.dtype_name())
}

/// An attribute's value: `0`, `"add"`, `[1, 2]`, `<graph 'body', 3 nodes>`; lists beyond
/// [`PREVIEW_VALUES`] entries are cut unless `full`.
fn attr_value(v: &AttrValue<'_>, full: bool) -> String {
    fn list<T>(items: &[T], full: bool, f: impl Fn(&T) -> String) -> String {
        let shown = if full {
            items.len()
        } else {
            items.len().min(PREVIEW_VALUES)
        };
        let mut parts: Vec<String> = items[..shown].iter().map(f).collect();
        if shown < items.len() {
            parts.push(format!("... ({} values)", items.len()));
        }
        format!("[{}]", parts.join(", "))
    }
    let text = |s: &[u8]| format!("{:?}", String::from_utf8_lossy(s));
    match v {
        AttrValue::Int(i) => i.to_string(),
        AttrValue::Float(f) => format!("{f:?}"),
        AttrValue::Str(s) => text(s),
        AttrValue::Ints(v) => list(v, full, i64::to_string),
        AttrValue::Floats(v) => list(v, full, |f| format!("{f:?}")),
        AttrValue::Strings(v) => list(v, full, |s| text(s)),
        AttrValue::Tensor => "<TENSOR>".to_string(),
        AttrValue::Graph(name, nodes) => format!(
            "<graph {}, {nodes} node{}>",
            quoted(name),
            if *nodes == 1 { "" } else { "s" }
        ),
        AttrValue::Other(t) => format!("<{t}>"),
    }
}

/// `float [3, 2], 6 values`.
fn summary(t: &Tensor) -> String {
    let n = t.numel();
    format!(
        "{} {}, {n} value{}",
        t.dtype(),
        shape(t.shape()),
        if n == 1 { "" } else { "s" }
    )
}

fn case(out: &mut String, c: &CaseView, full: bool) {
    let _ = writeln!(out, "case: {}", one_line(&c.dir));
    match &c.model {
        Ok(m) => model(out, m, full),
        Err(e) => {
            let _ = writeln!(out, "model.onnx");
            let _ = writeln!(out, "  error: {}", one_line(e));
        }
    }
    for w in &c.warnings {
        let _ = writeln!(out, "error: {}", one_line(w));
    }
    if c.data_sets.is_empty() {
        let _ = writeln!(out, "(no test_data_set_N directory)");
    }
    for ds in &c.data_sets {
        data_set(out, ds, full);
    }
}

fn data_set(out: &mut String, ds: &DataSetView, full: bool) {
    let _ = writeln!(out, "{}", one_line(&ds.name));
    if let Some(e) = &ds.error {
        let _ = writeln!(out, "  error: {}", one_line(e));
        return;
    }
    if ds.inputs.is_empty() && ds.outputs.is_empty() {
        let _ = writeln!(out, "  (no input_K.pb or output_K.pb)");
    }
    for (slot, graph_list) in ds
        .inputs
        .iter()
        .map(|s| (s, "input"))
        .chain(ds.outputs.iter().map(|s| (s, "output")))
    {
        self::slot(out, slot, graph_list, full);
    }
}

fn slot(out: &mut String, s: &Slot, kind: &str, full: bool) {
    let label = match &s.bound_to {
        Some(name) => format!("{} {}", s.file, quoted(name)),
        None => format!("{} (no graph {kind} at position {})", s.file, s.position),
    };
    match &s.content {
        SlotContent::Loaded(t) => {
            let _ = writeln!(out, "  {label}: {}", loaded(t, s.bound_to.as_deref()));
            values(out, &t.tensor, full, "    ");
        }
        SlotContent::Missing if kind == "output" => {
            let _ = writeln!(out, "  {label}: (missing: no expected output yet)");
        }
        SlotContent::Missing => {
            let _ = writeln!(out, "  {label}: (missing)");
        }
        SlotContent::Error(e) => {
            let _ = writeln!(out, "  {label}: error: {}", one_line(e));
        }
    }
}

/// `float [3, 2], 6 values, raw_data, sha256 9f86d081884c`, with the stored name when it is not
/// the graph's.
fn loaded(t: &LoadedTensor, bound_to: Option<&str>) -> String {
    let mut s = format!("{}, {}", summary(&t.tensor), storage(t));
    if let Some(sha) = &t.sha256 {
        let _ = write!(s, ", sha256 {}", &sha[..sha.len().min(12)]);
    }
    if bound_to != Some(t.name.as_str()) {
        let _ = write!(s, " (stored as {})", quoted(&t.name));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use onnx_idx_check::pb::{attribute_proto::AttributeType, AttributeProto, GraphProto};

    #[test]
    fn attribute_values_read_as_written() {
        assert_eq!(attr_value(&AttrValue::Int(-1), false), "-1");
        assert_eq!(attr_value(&AttrValue::Float(0.5), false), "0.5");
        assert_eq!(attr_value(&AttrValue::Str(b"add"), false), "\"add\"");
        assert_eq!(attr_value(&AttrValue::Ints(&[1, 2]), false), "[1, 2]");
        let many: Vec<i64> = (0..20).collect();
        let cut = attr_value(&AttrValue::Ints(&many), false);
        assert!(cut.ends_with(", 15, ... (20 values)]"), "{cut}");
        assert!(attr_value(&AttrValue::Ints(&many), true).ends_with(", 19]"));
        assert_eq!(
            attr_value(&AttrValue::Graph("body", 1), false),
            "<graph 'body', 1 node>"
        );
    }

    #[test]
    fn a_graph_attribute_is_named_not_expanded() {
        let a = AttributeProto {
            name: "then_branch".into(),
            r#type: AttributeType::Graph as i32,
            g: Some(GraphProto {
                name: "then".into(),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(
            attr_value(&AttrValue::of(&a), false),
            "<graph 'then', 0 nodes>"
        );
    }

    #[test]
    fn names_from_files_cannot_reach_the_terminal_raw() {
        assert_eq!(quoted("a\u{1b}[31mb"), "'a\\u{1b}[31mb'");
        assert_eq!(quoted(""), "(none)");
    }
}
