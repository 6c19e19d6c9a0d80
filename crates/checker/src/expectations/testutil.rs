//! Helpers for the expectations' unit tests: parse a file's text, build case results with a
//! verdict and a failure signature, judge on a fixed day. Other modules' tests borrow [`case`].

use super::parse::Problem;
use super::{Date, Expectations, ExpectationsError, Outcome};
use crate::compare::Mismatch;
use crate::tensor::DType;
use crate::verdict::{CaseResult, DataSetResult, OutputResult, Status};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub(super) const FULL: &str = r#"# onnx-idx-check expectations: known failures, ratcheted
[[expect]]
case = "onnx-node/test_scatternd_*"
runtime = "tract"
status = "failed"
reason = "tract#1234: ScatterND add not implemented"
link = "https://github.com/sonos/tract/issues/1234"
until = 2027-03-31
opset = { min = 13, max = 17 }
rtol = 1e-2
atol = 1e-5
mismatches = 3
first_mismatch = [1, 0]

[[expect]]
case = "spec-examples/**"
reason = "float16 reductions"
until = "2026-12-31"
opset = { max = 16 }
rtol = 0
"#;

pub(super) fn parse(text: &str) -> Expectations {
    Expectations::parse(text, Path::new("exp.toml")).unwrap()
}

/// The entry number, line, field and problem of an entry error.
pub(super) fn entry_error(text: &str) -> (usize, usize, String, Problem) {
    match Expectations::parse(text, Path::new("exp.toml")) {
        Err(ExpectationsError::Entry {
            entry,
            line,
            field,
            problem,
            ..
        }) => (entry, line, field, problem),
        other => panic!("expected an entry error, got {other:?}"),
    }
}

pub(super) fn problem(text: &str) -> Problem {
    entry_error(text).3
}

pub(super) fn date(s: &str) -> Date {
    s.parse().unwrap()
}

fn output(name: &str, failed: bool, mismatches: usize, first: Option<Vec<usize>>) -> OutputResult {
    OutputResult {
        name: name.to_string(),
        status: if failed {
            Status::Failed
        } else {
            Status::Passed
        },
        reason: failed.then(|| "differs".to_string()),
        dtype: DType::Float,
        actual_dtype: DType::Float,
        expected_shape: Some(vec![3, 2]),
        actual_shape: vec![3, 2],
        mismatches,
        max_abs_diff: None,
        max_rel_diff: None,
        first_mismatches: first
            .into_iter()
            .map(|index| Mismatch {
                index,
                expected: "1.0".to_string(),
                actual: "2.0".to_string(),
                source: None,
                flat: 0,
            })
            .collect(),
        tolerant: false,
        diagnoses: Vec::new(),
        computed: None,
    }
}

/// A case with this verdict at `ai.onnx` opset 13 (and no data sets).
pub(crate) fn case(name: &str, status: Status) -> CaseResult {
    CaseResult {
        name: name.to_string(),
        path: PathBuf::new(),
        ops: vec!["Gather".to_string()],
        opset: BTreeMap::from([("ai.onnx".to_string(), 13)]),
        op_versions: vec!["Gather-13".to_string()],
        files: Vec::new(),
        origin: None,
        expectation: None,
        traits: Vec::new(),
        status,
        reason: (status != Status::Passed).then(|| "why".to_string()),
        fault: None,
        data_sets: Vec::new(),
        duration: Duration::ZERO,
    }
}

/// A failed case whose second data set's second output fails with this signature.
pub(super) fn failed(name: &str, mismatches: usize, first: Option<&[usize]>) -> CaseResult {
    let mut r = case(name, Status::Failed);
    let first = first.map(<[usize]>::to_vec);
    r.data_sets = vec![
        DataSetResult {
            name: "test_data_set_0".to_string(),
            status: Status::Passed,
            reason: None,
            outputs: vec![output("y", false, 0, None)],
            fault: None,
        },
        DataSetResult {
            name: "test_data_set_1".to_string(),
            status: Status::Failed,
            reason: Some("differs".to_string()),
            fault: None,
            outputs: vec![
                output("x", false, 0, None),
                output("y", true, mismatches, first),
                output("z", true, 7, Some(vec![9, 9])),
            ],
        },
    ];
    r
}

pub(super) fn at_opset(mut r: CaseResult, opset: Option<i64>) -> CaseResult {
    r.opset.clear();
    if let Some(v) = opset {
        r.opset.insert("ai.onnx".to_string(), v);
    }
    r.opset.insert("com.microsoft".to_string(), 1);
    r
}

pub(super) fn today() -> Date {
    date("2026-06-01")
}

pub(super) fn outcomes(exp: &Expectations, results: &[CaseResult]) -> Vec<Option<Outcome>> {
    exp.judge(results, today())
        .cases
        .into_iter()
        .map(|c| c.map(|c| c.outcome))
        .collect()
}

/// The gate is clean: no case outcome fails it.
pub(super) fn gate_clean(exp: &Expectations, results: &[CaseResult]) -> bool {
    let j = exp.judge(results, today());
    j.cases.iter().flatten().all(|c| !c.outcome.fails_gate())
}
