//! What the tool knows and what a tree holds, without running anything: the `ops` support matrix
//! (from the registry) and the `list` of cases.

use onnx_idx_check::discover::Case;
use onnx_idx_check::eval::{self, PlanError};
use onnx_idx_check::ops::{OpVersion, Role, REGISTRY};
use onnx_idx_check::tensor::dtype::CLASSIC15;
use onnx_idx_check::tensor::{DType, DTypeSet};
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
    /// A context operator: evaluated only around an operator under test.
    pub context: bool,
    /// Type constraints: name -> dtypes.
    pub types: BTreeMap<&'static str, Vec<&'static str>>,
    /// Reductions or modes.
    pub modes: &'static [&'static str],
    /// Attributes.
    pub attributes: Vec<&'static str>,
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
                context: def.context,
                types: v
                    .constraints
                    .iter()
                    .filter(|c| v.inputs.iter().any(|i| i.constraint == c.name) || c.name == "T")
                    .map(|c| (c.name, c.dtypes.iter().map(DType::name).collect()))
                    .collect(),
                modes: v.modes,
                attributes: v.attr_names(),
                spec: def.spec,
            });
        }
    }
    rows
}

/// `classic15`, `classic15 + bfloat16`, `all types` or the plain list, for the table.
fn summarize(set: DTypeSet) -> String {
    if set == DTypeSet::of(&DType::ALL) {
        return "all types".to_string();
    }
    if set == onnx_idx_check::tensor::dtype::INTEGERS {
        return "any integer".to_string();
    }
    if CLASSIC15.iter().all(|d| set.contains(d)) {
        let float8 = DTypeSet::of(&[
            DType::Float8E4M3Fn,
            DType::Float8E4M3Fnuz,
            DType::Float8E5M2,
            DType::Float8E5M2Fnuz,
            DType::Float8E8M0,
        ]);
        let all_float8 = float8.iter().all(|d| set.contains(d));
        let mut extra: Vec<&str> = set
            .iter()
            .filter(|d| !(CLASSIC15.contains(*d) || all_float8 && float8.contains(*d)))
            .map(DType::name)
            .collect();
        if all_float8 {
            extra.push("float8*");
        }
        return if extra.is_empty() {
            "classic15".to_string()
        } else {
            format!("classic15 + {}", extra.join(" "))
        };
    }
    set.iter().map(DType::name).collect::<Vec<_>>().join(" ")
}

/// The matrix's T and INDICES columns: the dtypes of the value input and of the index input,
/// found by their roles (whatever the op calls them and their constraints).
fn type_columns(v: &OpVersion) -> (String, String) {
    let column = |i: Option<usize>| {
        i.and_then(|i| v.constraint_of(i))
            .map_or("-".to_string(), |c| summarize(c.dtypes))
    };
    (column(v.value_input()), column(v.input_with(Role::Indices)))
}

/// The support matrix as a table for people.
pub fn render_matrix() -> String {
    let classic: Vec<&str> = CLASSIC15.iter().map(DType::name).collect();
    let mut rows: Vec<[String; 7]> = vec![[
        "OP".into(),
        "DOMAIN".into(),
        "VERSION".into(),
        "OPSETS".into(),
        "T".into(),
        "INDICES".into(),
        "REDUCTION/MODE".into(),
    ]];
    for def in REGISTRY {
        let domain = eval::display_domain(def.domain).to_string();
        if def.plumbing {
            let (types, what) = if def.context {
                ("-", "(evaluated as context)")
            } else {
                ("all types", "(graph plumbing)")
            };
            rows.push([
                def.op_type.into(),
                domain,
                "all".into(),
                format!("{}+", def.versions.first().map_or(1, |v| v.since)),
                types.into(),
                "-".into(),
                what.into(),
            ]);
            continue;
        }
        for (i, v) in def.versions.iter().enumerate() {
            let opsets = match def.versions.get(i + 1) {
                Some(n) if n.since - 1 > v.since => format!("{}-{}", v.since, n.since - 1),
                Some(_) => v.since.to_string(),
                None => format!("{}+", v.since),
            };
            let (t, tind, modes) = if v.deprecated {
                (
                    "deprecated: errored".to_string(),
                    "-".to_string(),
                    "-".to_string(),
                )
            } else {
                let modes = if v.modes.is_empty() {
                    "-".to_string()
                } else {
                    v.modes.join(" ")
                };
                let (t, tind) = type_columns(v);
                (t, tind, modes)
            };
            rows.push([
                def.op_type.into(),
                domain.clone(),
                v.since.to_string(),
                opsets,
                t,
                tind,
                modes,
            ]);
        }
    }
    let mut widths = [0usize; 7];
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.len());
        }
    }
    let mut s = String::new();
    for r in &rows {
        let line: Vec<String> = r
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        let _ = writeln!(s, "{}", line.join("  ").trim_end());
    }
    let _ = writeln!(s, "\nclassic15 = {}", classic.join(" "));
    s.push_str("float8* = float8e4m3fn float8e4m3fnuz float8e5m2 float8e5m2fnuz float8e8m0\n");
    s.push_str(
        "Reductions apply to integer and float types; bool: add (OR), mul (AND); string: add\n\
         (concatenation); complex: add, mul. Other combinations are skipped.\n",
    );
    s.push_str(
        "Operators evaluated as context are computed exactly around an indexing operator (Shape,\n\
         Reshape, Unsqueeze, Squeeze, Concat and Transpose on every type; Cast between integer\n\
         and float types; Add, Sub and Mul on integers); a graph of them alone is skipped.\n",
    );
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
    /// Resolved `Op-version`s (empty unless the model is supported).
    pub resolved: Vec<String>,
    /// Those of `resolved` that are evaluated as context (Shape, Reshape, ...) around the
    /// operators under test.
    pub context: Vec<String>,
    /// Opset imports.
    pub opset: BTreeMap<String, i64>,
    /// Data sets found.
    pub data_sets: usize,
    /// `supported`, `unsupported`, `invalid` or `no-data-set` (supported, but without a
    /// `test_data_set_N` directory, which `run` errors).
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
        context: Vec::new(),
        opset: BTreeMap::new(),
        data_sets: case.data_sets.len(),
        status: "supported",
        reason: None,
    };
    let limit = onnx_idx_check::load::file_limit(max_tensor_bytes);
    let model =
        match onnx_idx_check::load::load_case_model(&case.dir, limit, max_tensor_bytes, false) {
            Ok((m, _)) => m,
            Err(e) => {
                l.status = if e.is_unsupported() {
                    "unsupported"
                } else {
                    "invalid"
                };
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
        // `run` judges the model before looking for data, so only a supported case gets here.
        Ok(p) if case.data_sets.is_empty() => {
            l.resolved = p.resolved_ops();
            l.context = p.context_ops();
            l.status = "no-data-set";
            l.reason = Some(onnx_idx_check::runner::NO_DATA_SET.to_string());
        }
        Ok(p) => {
            l.resolved = p.resolved_ops();
            l.context = p.context_ops();
        }
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
    // Every column aligned (by characters, so non-ASCII names line up too).
    let rows: Vec<[String; 4]> = cases
        .iter()
        .map(|c| {
            // `-` where the model says nothing (it could not be read): an empty column or `[]`
            // reads as a column gone missing.
            let what = match (&c.resolved[..], &c.ops[..]) {
                ([], []) => "-".to_string(),
                ([], ops) => ops.join(" "),
                (resolved, _) if c.context.is_empty() => resolved.join(" "),
                // The context operators after the others, marked as such.
                (resolved, _) => {
                    let tested: Vec<&str> = resolved
                        .iter()
                        .filter(|r| !c.context.contains(r))
                        .map(String::as_str)
                        .collect();
                    format!("{} (context: {})", tested.join(" "), c.context.join(" "))
                }
            };
            let opset: Vec<String> = c.opset.iter().map(|(d, v)| format!("{d} {v}")).collect();
            let opset = if opset.is_empty() {
                "-".to_string()
            } else {
                format!("[{}]", opset.join(", "))
            };
            let status = match &c.reason {
                Some(r) => format!("{}: {r}", c.status),
                None => c.status.to_string(),
            };
            // Names, operators and domains come from the files: shown with their control
            // characters escaped.
            [c.name.as_str(), &what, &opset, &status].map(onnx_idx_check::report::one_line)
        })
        .collect();
    let width = |i: usize| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0);
    let (w0, w1, w2) = (width(0).max(4), width(1), width(2));
    let mut s = String::new();
    // `{:<w$}` pads by characters.
    for [name, what, opset, status] in &rows {
        let _ = writeln!(s, "{name:<w0$}  {what:<w1$}  {opset:<w2$}  {status}");
    }
    let supported = cases.iter().filter(|c| c.status == "supported").count();
    let _ = writeln!(
        s,
        "{}, {supported} supported",
        onnx_idx_check::report::counted(cases.len(), "case", "cases")
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use onnx_idx_check::ops::{Constraint, InputSpec, OpVersion};
    use onnx_idx_check::tensor::dtype::INDEX64;

    /// An op whose inputs and constraints carry none of the usual names: the matrix finds the
    /// value and index types by the inputs' roles.
    static UNUSUAL: OpVersion = OpVersion {
        since: 1,
        deprecated: false,
        attrs: &[],
        inputs: &[
            InputSpec::required("positions", "P", Role::Indices),
            InputSpec::required("gradient", "G", Role::Updates),
        ],
        outputs: &["out"],
        constraints: &[
            Constraint::new("G", DTypeSet::of(&[DType::Float, DType::Double])),
            Constraint::new("P", INDEX64),
        ],
        negatives: true,
        modes: &[],
        mode_attr: None,
        eval: |_| {
            Err(onnx_idx_check::ops::SpecError::Unsupported(
                "never run".into(),
            ))
        },
    };

    #[test]
    fn type_columns_follow_the_roles_not_the_names() {
        assert_eq!(
            type_columns(&UNUSUAL),
            ("float double".to_string(), "int64".to_string())
        );
    }
}
