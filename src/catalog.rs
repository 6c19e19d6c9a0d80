//! What the tool knows and what a tree holds, without running anything: the `ops` support matrix
//! (from the registry) and the `list` of cases.

use crate::discover::Case;
use crate::eval::{self, PlanError};
use crate::ops::{OpDef, REGISTRY};
use crate::tensor::DType;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One row of the support matrix.
#[derive(Debug, Serialize)]
pub struct OpRow {
    /// Operator.
    pub op: &'static str,
    /// Domain (`ai.onnx` for the default).
    pub domain: &'static str,
    /// The version's `since_version`.
    pub version: i64,
    /// Opsets that resolve to this version: first..=last (`null` last: no later version).
    pub opsets: (i64, Option<i64>),
    /// Deprecated (nodes resolving here are errored).
    pub deprecated: bool,
    /// Graph plumbing rather than an operator under test.
    pub plumbing: bool,
    /// Type constraints: name -> dtypes.
    pub types: BTreeMap<&'static str, Vec<&'static str>>,
    /// Reductions or modes.
    pub modes: &'static [&'static str],
    /// Attributes.
    pub attributes: &'static [&'static str],
    /// Specification.
    pub spec: &'static str,
}

/// Every version of every registered operator.
pub fn matrix() -> Vec<OpRow> {
    let mut rows = Vec::new();
    for def in REGISTRY {
        for (i, v) in def.versions.iter().enumerate() {
            let next = def.versions.get(i + 1).map(|n| n.since - 1);
            rows.push(OpRow {
                op: def.op_type,
                domain: eval::display_domain(def.domain),
                version: v.since,
                opsets: (v.since, next),
                deprecated: v.deprecated,
                plumbing: def.plumbing,
                types: v
                    .constraints
                    .iter()
                    .filter(|c| v.inputs.iter().any(|i| i.constraint == c.name) || c.name == "T")
                    .map(|c| (c.name, c.dtypes.iter().map(DType::name).collect()))
                    .collect(),
                modes: v.modes,
                attributes: v.attrs,
                spec: def.spec,
            });
        }
    }
    rows
}

/// The support matrix as a table for people.
pub fn render_matrix() -> String {
    let mut s = String::new();
    let mut current: Option<&OpDef> = None;
    for def in REGISTRY {
        for (i, v) in def.versions.iter().enumerate() {
            if current.is_none_or(|c| !std::ptr::eq(c, *def)) {
                current = Some(def);
                let kind = if def.plumbing {
                    " (graph plumbing)"
                } else {
                    ""
                };
                let _ = writeln!(
                    s,
                    "{} [{}]{kind}  {}",
                    def.op_type,
                    eval::display_domain(def.domain),
                    def.spec
                );
            }
            let opsets = match def.versions.get(i + 1) {
                Some(n) if n.since - 1 > v.since => format!("opset {}-{}", v.since, n.since - 1),
                Some(_) => format!("opset {}", v.since),
                None => format!("opset {}+", v.since),
            };
            let head = format!("  v{:<3} {:<12}", v.since, opsets);
            if v.deprecated {
                let _ = writeln!(s, "{head} deprecated: nodes resolving here are errored");
                continue;
            }
            let mut parts = Vec::new();
            for c in v.constraints {
                if def.plumbing && c.name == "V" {
                    continue;
                }
                let names: Vec<&str> = c.dtypes.iter().map(DType::name).collect();
                let list = if names.len() == DType::ALL.len() {
                    "all types".to_string()
                } else {
                    names.join(" ")
                };
                parts.push(format!("{}: {list}", c.name));
            }
            if !v.modes.is_empty() {
                parts.push(format!("reduction: {}", v.modes.join(" ")));
            }
            let _ = writeln!(s, "{head} {}", parts.join("; "));
        }
    }
    s.push_str("\nReductions on bool: add (OR), mul (AND); on string: add (concatenation); on complex: add, mul;\nother combinations are skipped (SEMANTICS D8).\n");
    s
}

/// One case of `list`.
#[derive(Debug, Serialize)]
pub struct Listed {
    /// Case name.
    pub name: String,
    /// Directory.
    pub path: String,
    /// Operators.
    pub ops: Vec<String>,
    /// Resolved `Op-version`s (empty unless supported).
    pub resolved: Vec<String>,
    /// Opset imports.
    pub opset: BTreeMap<String, i64>,
    /// Data sets found.
    pub data_sets: usize,
    /// `supported`, `unsupported` or `invalid`.
    pub status: &'static str,
    /// Why not supported.
    pub reason: Option<String>,
}

/// Inspects a case's model without loading its data.
pub fn list_case(case: &Case, max_tensor_bytes: usize) -> Listed {
    let mut l = Listed {
        name: case.name.clone(),
        path: case.dir.display().to_string(),
        ops: Vec::new(),
        resolved: Vec::new(),
        opset: BTreeMap::new(),
        data_sets: case.data_sets.len(),
        status: "supported",
        reason: None,
    };
    let limit = crate::load::file_limit(max_tensor_bytes);
    let model = match crate::load::load_model(&case.dir.join("model.onnx"), "model.onnx", limit) {
        Ok(m) => m,
        Err(e) => {
            l.status = "invalid";
            l.reason = Some(e.to_string());
            return l;
        }
    };
    l.ops = eval::op_names(&model);
    if let Ok(o) = eval::opsets(&model) {
        l.opset = o
            .iter()
            .map(|(d, v)| (eval::display_domain(d).to_string(), *v))
            .collect();
    }
    match eval::plan(&model) {
        Ok(p) => l.resolved = p.resolved_ops(),
        Err(PlanError::Unsupported(r)) => {
            l.status = "unsupported";
            l.reason = Some(r);
        }
        Err(PlanError::Invalid(r)) => {
            l.status = "invalid";
            l.reason = Some(r);
        }
    }
    l
}

/// The `list` table.
pub fn render_list(cases: &[Listed]) -> String {
    let w = cases.iter().map(|c| c.name.len()).max().unwrap_or(4).max(4);
    let mut s = String::new();
    for c in cases {
        let what = if c.resolved.is_empty() {
            c.ops.join(" ")
        } else {
            c.resolved.join(" ")
        };
        let opset: Vec<String> = c.opset.iter().map(|(d, v)| format!("{d} {v}")).collect();
        let status = match &c.reason {
            Some(r) => format!("{}: {r}", c.status),
            None => c.status.to_string(),
        };
        let _ = writeln!(
            s,
            "{:<w$}  {what}  [{}]  {status}",
            c.name,
            opset.join(", ")
        );
    }
    let supported = cases.iter().filter(|c| c.status == "supported").count();
    let _ = writeln!(s, "{} cases, {supported} supported", cases.len());
    s
}
