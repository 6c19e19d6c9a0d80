//! A case loaded once and evaluated many times: the `bench` subcommand.

use super::case::initializers;
use super::data_set::DataSetFiles;
use super::{RunOptions, Verdict};
use crate::discover::{Case, DataSet};
use crate::eval;
use crate::load;
use crate::tensor::Tensor;

/// A case prepared for repeated evaluation of its first data set (the `bench` subcommand).
pub struct Prepared {
    model: crate::pb::ModelProto,
    initializers: Vec<(String, Tensor)>,
    inputs: Vec<Tensor>,
    /// The data set's expected outputs, `None` where the file is missing (timing needs none).
    pub expected: Vec<Option<Tensor>>,
    dir: std::path::PathBuf,
    max_bytes: usize,
}

impl Prepared {
    /// Loads the model and data set `ds` of `case`.
    pub fn load(case: &Case, ds: &DataSet, opts: &RunOptions) -> Result<Prepared, String> {
        let limit = load::file_limit(opts.max_tensor_bytes);
        let (model, _) = load::load_case_model(&case.dir, limit, opts.max_tensor_bytes, false)
            .map_err(|e| e.to_string())?;
        let (initializers, inputs, expected) = {
            let plan = eval::plan(&model).map_err(|e| e.to_string())?;
            let initializers =
                initializers(&plan, case, opts.max_tensor_bytes).map_err(|e| e.to_string())?;
            let files = DataSetFiles::scan(ds).map_err(|Verdict(_, m, _)| m)?;
            files
                .check_counts(plan.inputs.len(), plan.outputs.len(), &ds.name)
                .map_err(|Verdict(_, m, _)| m)?;
            let load = |kind: &str, k: usize| {
                let file = format!("{}/{kind}_{k}.pb", ds.name);
                load::load_tensor_file(
                    &ds.dir.join(format!("{kind}_{k}.pb")),
                    &file,
                    opts.max_tensor_bytes,
                )
                .map(|(_, t)| t)
                .map_err(|e| e.to_string())
            };
            let inputs = (0..plan.inputs.len())
                .map(|k| load("input", k))
                .collect::<Result<Vec<_>, _>>()?;
            let expected = (0..plan.outputs.len())
                .map(|k| {
                    if files.has_output(k) {
                        load("output", k).map(Some)
                    } else {
                        Ok(None)
                    }
                })
                .collect::<Result<Vec<_>, _>>()?;
            (initializers, inputs, expected)
        };
        Ok(Prepared {
            model,
            initializers,
            inputs,
            expected,
            dir: case.dir.clone(),
            max_bytes: opts.max_tensor_bytes,
        })
    }

    /// Every graph input, data-set inputs first, then initializers.
    pub fn input_tensors(&self) -> Vec<&Tensor> {
        self.inputs
            .iter()
            .chain(self.initializers.iter().map(|(_, t)| t))
            .collect()
    }

    /// Whether the graph's operator reads its data only where it gathers (a gather), rather than
    /// copying it whole (a scatter), as the registry says ([`crate::ops::OpDef::gathers`]).
    pub fn is_gather(&self) -> bool {
        eval::plan(&self.model).is_ok_and(|p| p.defs().any(|d| d.gathers))
    }

    /// Evaluates the graph once.
    pub fn evaluate(&self) -> Result<Vec<eval::Value>, String> {
        let plan = eval::plan(&self.model).map_err(|e| e.to_string())?;
        plan.evaluate(&self.initializers, &self.inputs, &self.dir, self.max_bytes)
            .map_err(|e| e.to_string())
    }
}
