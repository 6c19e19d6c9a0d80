//! Coverage: which traits of each operator version the passing cases exercise (int32 and int64
//! indices, negative indices, duplicates, rank-0 indices, zero-size dims, batch_dims > 0, each
//! reduction or mode, each data type, raw and typed storage), and which none does.
//!
//! - here: the traits one evaluated node exercises, recorded by the runner for passing data sets;
//! - the command line's `coverage` subcommand: every trait each version can exercise, and the table
//!   of what the passing cases covered.

use crate::eval::Trace;
use crate::load::attrs::attrs_of;
use crate::load::StorageForm;
use crate::ops::{resolve, Resolution, Role};
use std::collections::BTreeSet;

/// The traits one evaluated node exercises; `form` tells how a named value was stored in its file.
pub fn node_traits(
    trace: &Trace<'_>,
    form: &dyn Fn(&str) -> Option<StorageForm>,
) -> (String, BTreeSet<String>) {
    let mut t = BTreeSet::new();
    let Resolution::Found(def, v) = resolve(trace.domain, &trace.node.op_type, trace.since) else {
        return (trace.node.op_type.clone(), t);
    };
    // Coverage reads integers and strings only: no tensor value is decoded.
    let attrs = attrs_of(trace.node, std::path::Path::new("."), 0);
    let input = |i: usize| trace.inputs.get(i).and_then(Option::as_ref);
    if let Some(d) = v.value_input().and_then(input) {
        t.insert(format!("dtype:{}", d.dtype()));
    }
    if let Some(idx) = v.input_with(Role::Indices).and_then(input) {
        t.insert(format!("indices:{}", idx.dtype()));
        if idx
            .to_i64_vec()
            .is_some_and(|vals| vals.iter().any(|&x| x < 0))
        {
            t.insert("negative-indices".into());
        }
        if idx.rank() == 0 {
            t.insert("rank0-indices".into());
        }
        if crate::diagnose::has_duplicates(&trace.subject()) {
            t.insert("duplicates".into());
        }
    }
    if attrs.int("batch_dims", 0).is_ok_and(|b| b != 0) {
        t.insert("batch_dims>0".into());
    }
    if let (Some(a), Some(first)) = (v.mode_attr, v.modes.first()) {
        if let Ok(m) = attrs.string(a, first) {
            t.insert(format!("{a}:{m}"));
        }
    }
    if trace
        .inputs
        .iter()
        .flatten()
        .any(|x| x.shape().contains(&0))
    {
        t.insert("zero-size-dims".into());
    }
    for name in &trace.node.input {
        match form(name) {
            Some(StorageForm::Raw) => {
                t.insert("storage:raw".into());
            }
            Some(StorageForm::Typed) => {
                t.insert("storage:typed".into());
            }
            _ => {}
        }
    }
    (def.version_name(v), t)
}
