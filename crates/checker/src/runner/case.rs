//! One case: its model, plan and initializers, then each of its data sets.

use super::data_set::run_data_set;
use super::record::{severity, Record};
use super::{RunOptions, Verdict};
use crate::deadline;
use crate::discover::Case;
use crate::eval;
use crate::load::{self, tensor::TensorContext, LoadError};
use crate::tensor::Tensor;
use crate::verdict::{CaseResult, Status};
use std::time::Instant;

/// Why a case without any `test_data_set_N` directory is errored; `list` says the same words,
/// so what it announces is what `run` reports.
pub const NO_DATA_SET: &str = "no test_data_set_N directory: nothing to check";

/// The result of `case` before anything is known of it: `status`, with `reason`.
pub(super) fn bare_result(case: &Case, status: Status, reason: Option<String>) -> CaseResult {
    CaseResult {
        reason,
        ..CaseResult::bare(&case.name, case.dir.clone(), status)
    }
}

/// The graph's initializers as tensors.
pub(super) fn initializers(
    plan: &eval::Plan<'_>,
    case: &Case,
    max_bytes: usize,
) -> Result<Vec<(String, crate::tensor::Tensor)>, LoadError> {
    let ctx = TensorContext {
        base_dir: &case.dir,
        max_bytes,
    };
    plan.initializers()
        .iter()
        .map(|p| {
            load::convert_tensor(p, load::model_file_of(&case.dir), &ctx)
                .map(|t| (p.name.clone(), t))
        })
        .collect()
}

/// Runs one case.
pub fn run_case(case: &Case, opts: &RunOptions) -> CaseResult {
    run_case_answered(case, opts, None)
}

/// Runs one case, taking the runtime's outputs of its only data set from a shared model
/// (`answer`, `batched.rs`) as long as they pass.
pub(super) fn run_case_answered(
    case: &Case,
    opts: &RunOptions,
    answer: Option<&[Tensor]>,
) -> CaseResult {
    let start = Instant::now();
    let mut result = bare_result(case, Status::Passed, None);
    let inner = deadline::with_limit(opts.timeout, || {
        run_case_inner(case, opts, answer, &mut result)
    });
    if let Err(Verdict(status, reason, fault)) = inner {
        result.status = status;
        result.reason = Some(reason);
        result.fault = fault;
    } else if let Some(ds) = result
        .data_sets
        .iter()
        // The first data set of the most severe verdict (`max_by_key` keeps the last of equals).
        .rev()
        .max_by_key(|d| severity(d.status))
    {
        if ds.status != Status::Passed {
            result.status = ds.status;
            result.fault = ds.fault;
            let others = result
                .data_sets
                .iter()
                .filter(|d| d.status != Status::Passed)
                .count()
                - 1;
            let more = match others {
                0 => String::new(),
                1 => " (and 1 more data set)".to_string(),
                n => format!(" (and {n} more data sets)"),
            };
            // File errors already name the data set in their path.
            result.reason = ds.reason.as_ref().map(|r| {
                if r.starts_with(&format!("{}/", ds.name)) {
                    format!("{r}{more}")
                } else {
                    format!("{}: {r}{more}", ds.name)
                }
            });
        }
    }
    result.duration = start.elapsed();
    result
}

fn run_case_inner(
    case: &Case,
    opts: &RunOptions,
    answer: Option<&[Tensor]>,
    result: &mut CaseResult,
) -> Result<(), Verdict> {
    let limit = load::file_limit(opts.max_tensor_bytes);
    // model.onnx, or an OpenVINO IR read into the same model.
    let (model, mut files) =
        load::load_case_model(&case.dir, limit, opts.max_tensor_bytes, opts.digests)?;
    result.files.append(&mut files);
    result.ops = eval::op_names(&model);
    let opsets = eval::opsets(&model)?;
    result.opset = opsets
        .iter()
        .map(|(d, v)| (eval::display_domain(d).to_string(), *v))
        .collect();
    // Until the plan resolves, the per-operator summary counts the bare op types.
    result.op_versions = result
        .ops
        .iter()
        .filter(|o| !matches!(o.as_str(), "Constant" | "Identity"))
        .cloned()
        .collect();
    let plan = eval::plan(&model)?;
    result.op_versions = plan.tested_ops();
    // An expectations entry may loosen (or tighten) the tolerance of this case alone.
    let adjusted;
    let opts = match &opts.expectations {
        Some(e) => {
            let tolerance = e.tolerance_for(
                &case.name,
                result.opset.get("ai.onnx").copied(),
                opts.tolerance,
            );
            adjusted = RunOptions {
                tolerance,
                ..opts.clone()
            };
            &adjusted
        }
        None => opts,
    };
    let initializers = initializers(&plan, case, opts.max_tensor_bytes)?;
    if case.data_sets.is_empty() {
        return Err(Verdict(Status::Errored, NO_DATA_SET.into(), None));
    }
    let mut record = Record::default();
    for ds in &case.data_sets {
        deadline::check()?;
        result.data_sets.push(run_data_set(
            &plan,
            &initializers,
            case,
            ds,
            opts,
            answer.filter(|_| case.data_sets.len() == 1),
            &mut record,
        ));
    }
    result.files.append(&mut record.files);
    result.traits.append(&mut record.traits);
    Ok(())
}
