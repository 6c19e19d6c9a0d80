//! The prose of verdicts: the sentences reasons and reports say of bug classes, decisions and
//! errors the spec requires. The verdict types carry the facts ([`BugClass`], [`Decision`]); the
//! words for them are written here, once, for every reporter and for the reasons the runner
//! records (the JSON report's `reason` fields, schema version 1, carry them).

use crate::ops::Decision;
use crate::verdict::BugClass;

/// What a reason says of the classes that reproduce a wrong output, most specific first:
/// `; diagnosis: <sentence> (<id>)`, then `; also reproduced by: <sentence> (<id>), ...` when
/// more than one does; empty for none.
pub fn diagnosis_note(classes: &[BugClass]) -> String {
    let Some((first, rest)) = classes.split_first() else {
        return String::new();
    };
    format!(
        "; diagnosis: {} ({}){}",
        first.sentence(),
        first.id(),
        also_reproduced_by(rest)
    )
}

/// The note of an errored case whose expected output matches known bugs (the spec requires an
/// error for its inputs): ` (the expected output matches a known bug: <id>, <sentence>)`, with
/// the other classes as in [`diagnosis_note`]; empty for none.
pub fn known_bug_hint(classes: &[BugClass]) -> String {
    let Some((first, rest)) = classes.split_first() else {
        return String::new();
    };
    format!(
        " (the expected output matches a known bug: {}, {}{})",
        first.id(),
        first.sentence(),
        also_reproduced_by(rest)
    )
}

/// `; also reproduced by: <sentence> (<id>), ...`, or nothing.
pub fn also_reproduced_by(classes: &[BugClass]) -> String {
    if classes.is_empty() {
        return String::new();
    }
    let named: Vec<String> = classes
        .iter()
        .map(|c| format!("{} ({})", c.sentence(), c.id()))
        .collect();
    format!("; also reproduced by: {}", named.join(", "))
}

/// `; shape consistent with axis-ignored (...); values differ further`, for a wrong shape no
/// class reproduces exactly but some explain; empty for none.
pub fn shape_hint(classes: &[BugClass]) -> String {
    if classes.is_empty() {
        return String::new();
    }
    let named: Vec<String> = classes
        .iter()
        .map(|c| format!("{} ({})", c.id(), c.sentence()))
        .collect();
    format!(
        "; shape consistent with {}; values differ further",
        named.join(", or ")
    )
}

/// Who requires the error: `onnx-idx-check's decision D2 (docs/semantics.md#d2-...)`.
pub fn decided(d: Decision) -> String {
    format!(
        "onnx-idx-check's decision {d}, not the spec: docs/semantics.md#{}",
        d.anchor()
    )
}

/// Who requires an error for a case's inputs, as a clause: `the spec requires an error for
/// these inputs`, or `onnx-idx-check's decision D2 requires an error for these inputs
/// (docs/semantics.md#...; the spec does not)` where a decision does.
pub fn requires_error(d: Option<Decision>) -> String {
    match d {
        None => "the spec requires an error for these inputs".to_string(),
        Some(d) => format!(
            "onnx-idx-check's decision {d} requires an error for these inputs (docs/semantics.md#{}; the spec does not)",
            d.anchor()
        ),
    }
}
