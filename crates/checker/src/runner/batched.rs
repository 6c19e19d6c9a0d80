//! `run`'s shared models ([`RunOptions::batch`] > 1): before a window of cases is judged, the
//! runtime runs those that can share a model ([`batch::ready`]) side by side, a model of up to
//! `batch` cases at a time, and each member's outputs are kept as its answer. Its data set is
//! then judged with that answer and judged again with the runtime alone unless it passed
//! (`data_set.rs`): a shared model only ever stands for a pass, never for a failure.
//!
//! Cases alike in opset, operators and input types share models (a runtime tends to run or
//! refuse them alike). A model the runtime does not answer is tried once more as two halves;
//! when both are refused too, the rest of that kind runs alone.

use super::actual::{outputs_in, wanted};
use super::batch::{self, Ready};
use super::record::Record;
use super::RunOptions;
use crate::discover::Case;
use crate::pb::ModelProto;
use crate::runtime::{Input, Outcome, Request, Runtime};
use crate::tensor::Tensor;
use crate::verdict::Status;
use prost::Message;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Mutex;

/// How many times `--timeout` a shared model may take: its compile grows with its members.
const PATIENCE: u32 = 4;

/// What shared models answered: each answered case's outputs (of its one data set), by case
/// directory.
#[derive(Default)]
pub(super) struct Answers(HashMap<PathBuf, Vec<Tensor>>);

impl Answers {
    /// The outputs a shared model gave for `case`'s only data set.
    pub(super) fn of(&self, case: &Case) -> Option<&[Tensor]> {
        self.0.get(&case.dir).map(Vec::as_slice)
    }
}

/// What the cases of one model share: the batch key, and the kind of their graphs.
type Kind = (batch::Key, Vec<String>);

/// The answers of shared models for `cases`, on `jobs` threads.
pub(super) fn answer(cases: &[Case], opts: &RunOptions, rt: &Runtime, jobs: usize) -> Answers {
    let size = opts.batch.max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build();
    // Only cases whose expected files our kernels reproduce: one whose inputs require an error
    // would make the runtime refuse (or crash on) the whole model, and it is judged alone anyway.
    let plain = RunOptions {
        runtime: None,
        batch: 1,
        traits: super::Traits::Off,
        pending: None,
        digests: false,
        ..opts.clone()
    };
    let shareable = |case: &Case| {
        let one = case.data_sets.len() == 1 && case.data_sets[0].name == "test_data_set_0";
        one.then(|| batch::ready(&case.dir))
            .flatten()
            .filter(|_| super::run_case(case, &plain).status == Status::Passed)
    };
    let ready: Vec<Option<(batch::Key, Ready)>> = match &pool {
        Ok(pool) => pool.install(|| {
            use rayon::prelude::*;
            cases.par_iter().map(shareable).collect()
        }),
        Err(_) => cases.iter().map(shareable).collect(),
    };
    let mut kinds: BTreeMap<Kind, Vec<Ready>> = BTreeMap::new();
    for (key, ready) in ready.into_iter().flatten() {
        kinds.entry((key, ready.kind())).or_default().push(ready);
    }
    // Each model's members, with the number of their kind.
    let models: Vec<(usize, &[Ready])> = kinds
        .values()
        .enumerate()
        .flat_map(|(kind, members)| members.chunks(size).map(move |c| (kind, c)))
        .filter(|(_, c)| c.len() > 1)
        .collect();
    let refusing: Mutex<HashSet<usize>> = Mutex::new(HashSet::new());
    let found: Mutex<Answers> = Mutex::new(Answers::default());
    let each = |&(kind, members): &(usize, &[Ready])| {
        let members: Vec<&Ready> = members.iter().collect();
        let got = judge(&members, rt, opts, &refusing, kind, true);
        if let Ok(mut found) = found.lock() {
            found.0.extend(got);
        }
    };
    match &pool {
        Ok(pool) => pool.install(|| {
            use rayon::prelude::*;
            models.par_iter().with_max_len(1).for_each(each);
        }),
        Err(_) => models.iter().for_each(each),
    }
    found.into_inner().unwrap_or_default()
}

/// The answers of one model of `members`; where the runtime gave none, the model's two halves
/// are tried (`split`), and a kind whose halves are both refused runs alone from then on.
fn judge(
    members: &[&Ready],
    rt: &Runtime,
    opts: &RunOptions,
    refusing: &Mutex<HashSet<usize>>,
    kind: usize,
    split: bool,
) -> Vec<(PathBuf, Vec<Tensor>)> {
    if members.len() < 2 || refusing.lock().is_ok_and(|r| r.contains(&kind)) {
        return Vec::new();
    }
    match run_shared(members, rt, opts) {
        Some(got) => got,
        None if split && members.len() >= 4 => {
            let (left, right) = members.split_at(members.len() / 2);
            let mut got = judge(left, rt, opts, refusing, kind, false);
            let more = judge(right, rt, opts, refusing, kind, false);
            if got.is_empty() && more.is_empty() {
                if let Ok(mut r) = refusing.lock() {
                    r.insert(kind);
                }
            }
            got.extend(more);
            got
        }
        None => Vec::new(),
    }
}

/// Runs `members` as one model; each member's outputs when the runtime answered with every one
/// of them, `None` when it gave no answer (refused, crashed, timed out) or the model could not
/// be written. A member that lacks an output gets no answer: it runs alone.
fn run_shared(
    members: &[&Ready],
    rt: &Runtime,
    opts: &RunOptions,
) -> Option<Vec<(PathBuf, Vec<Tensor>)>> {
    let dir = rt.scratch_dir("batch").ok()?;
    let names = batch::merge(members, dir.path()).ok()?;
    let model_path = dir.path().join("model.onnx");
    let model = ModelProto::decode(std::fs::read(&model_path).ok()?.as_slice()).ok()?;
    let graph = model.graph.as_ref()?;
    let ds = dir.path().join("test_data_set_0");
    let load = |file: String| {
        crate::load::load_tensor_file_with(&ds.join(&file), &file, opts.max_tensor_bytes, false)
            .ok()
            .map(|l| l.tensor)
    };
    let fed = crate::eval::data_inputs(graph);
    let mut tensors = Vec::with_capacity(fed.len());
    let mut pbs = Vec::with_capacity(fed.len());
    for k in 0..fed.len() {
        tensors.push(load(format!("input_{k}.pb"))?);
        pbs.push(ds.join(format!("input_{k}.pb")));
    }
    let wants: Vec<_> = graph
        .output
        .iter()
        .enumerate()
        .map(|(k, info)| {
            let expected = ds
                .join(format!("output_{k}.pb"))
                .exists()
                .then(|| load(format!("output_{k}.pb")))
                .flatten();
            wanted(info, expected.as_ref())
        })
        .collect();
    let req = Request {
        case: "batch",
        data_set: "test_data_set_0",
        model: &model_path,
        inputs: fed
            .iter()
            .zip(&tensors)
            .zip(&pbs)
            .map(|((info, tensor), pb)| Input {
                name: &info.name,
                pb,
                tensor,
            })
            .collect(),
        outputs: wants.iter().map(|(n, d)| (n.as_str(), *d)).collect(),
    };
    let job = rt.prepare_shared(&req, PATIENCE).ok()?;
    let Ok(Outcome::Done(out)) = rt.run(&job, None) else {
        return None;
    };
    let show = |file: &str| format!("{}: {file} (a shared model)", rt.label());
    let mut outputs = outputs_in(out.path(), &show, &wants, opts, &mut Record::default())
        .ok()?
        .into_iter();
    let mut got = Vec::with_capacity(members.len());
    for (member, mine) in members.iter().zip(&names) {
        // Taken whole before it is looked at, so that the next member's outputs start right.
        let theirs: Vec<Option<Tensor>> =
            outputs.by_ref().take(mine.len()).map(|(_, t)| t).collect();
        if let Some(theirs) = theirs.into_iter().collect::<Option<Vec<Tensor>>>() {
            got.push((member.dir.clone(), theirs));
        }
    }
    Some(got)
}

/// Whether a run of `cases` should share models: only a runtime whose hello says it runs a
/// model's independent subgraphs as each alone, one run of each data set, and `batch` > 1.
pub(super) fn wanted_for(opts: &RunOptions) -> Option<&Runtime> {
    let rt = opts.runtime.as_deref()?;
    (opts.batch > 1 && opts.repeat <= 1 && rt.batches() && opts.actual.is_none()).then_some(rt)
}
