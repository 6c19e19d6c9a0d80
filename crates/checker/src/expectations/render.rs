//! Writing entries back as an expectations file: a header, then each entry's fields in the order
//! of [`FIELDS`](super::FIELDS), as TOML that reads back to the same entries.

use super::Entry;
use std::fmt::Write as _;

/// A TOML basic string.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The file text for `entries`, in their order, as `run --update-expectations` writes it.
pub(super) fn render(entries: &[Entry]) -> String {
    render_with_header(
        "# onnx-idx-check expectations: known failures, ratcheted.\n\
         # Written by `onnx-idx-check run --update-expectations`: entries in their\n\
         # order (which decides between globs), new ones last; comments not kept. Fill in every\n\
         # reason = \"TODO\" (an issue, a missing feature) before committing.\n",
        entries,
    )
}

/// The file text for `entries`, in their order, after `header` (comment lines, each ending in a
/// newline): also what `generate` writes for the cases the spec requires an error for.
pub fn render_with_header(header: &str, entries: &[Entry]) -> String {
    let mut s = String::from(header);
    for e in entries {
        s.push_str("\n[[expect]]\n");
        let _ = writeln!(s, "case = {}", quote(&e.case));
        if let Some(runtime) = &e.runtime {
            let _ = writeln!(s, "runtime = {}", quote(runtime));
        }
        if let Some(status) = e.status {
            let _ = writeln!(s, "status = {}", quote(status.as_str()));
        }
        let _ = writeln!(s, "reason = {}", quote(&e.reason));
        if let Some(link) = &e.link {
            let _ = writeln!(s, "link = {}", quote(link));
        }
        if let Some(until) = e.until {
            let _ = writeln!(s, "until = {until}");
        }
        if let Some((min, max)) = e.opset {
            let bounds: Vec<String> = [("min", min), ("max", max)]
                .into_iter()
                .filter_map(|(k, v)| v.map(|v| format!("{k} = {v}")))
                .collect();
            if bounds.is_empty() {
                s.push_str("opset = {}\n");
            } else {
                let _ = writeln!(s, "opset = {{ {} }}", bounds.join(", "));
            }
        }
        // `{:?}` is the shortest representation that reads back exactly, and valid TOML.
        if let Some(rtol) = e.rtol {
            let _ = writeln!(s, "rtol = {rtol:?}");
        }
        if let Some(atol) = e.atol {
            let _ = writeln!(s, "atol = {atol:?}");
        }
        if let Some(n) = e.mismatches {
            let _ = writeln!(s, "mismatches = {n}");
        }
        if let Some(at) = &e.first_mismatch {
            let parts: Vec<String> = at.iter().map(usize::to_string).collect();
            let _ = writeln!(s, "first_mismatch = [{}]", parts.join(", "));
        }
        if let Some(dtype) = &e.actual_dtype {
            let _ = writeln!(s, "actual_dtype = {}", quote(dtype));
        }
        if let Some(shape) = &e.actual_shape {
            let parts: Vec<String> = shape.iter().map(usize::to_string).collect();
            let _ = writeln!(s, "actual_shape = [{}]", parts.join(", "));
        }
    }
    s
}
