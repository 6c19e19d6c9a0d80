//! The hunt's side of shared models ([`onnx_idx_check::runner::batch`]): what a merged model's
//! verdict says of each member. Only a runtime whose hello says `batches` gets batches
//! (docs/runtime-protocol.md), and only with cases where the spec defines outputs: one case that
//! requires an error would make the whole model one. What a batch shows is never a finding by
//! itself: a case whose outputs disagree in the batch, and every case of a batch the runtime did
//! not answer, is judged again alone, which is what the hunt reports.

pub(crate) use onnx_idx_check::runner::batch::{merge, ready, Key, Ready, SIZE};
#[cfg(test)]
use std::path::{Path, PathBuf};

/// What a batch's verdict says of one member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Seen {
    /// Every output of it passed.
    Agrees,
    /// Some output of it did not: it is judged alone.
    Disagrees,
}

/// Each member's part of the batch's verdict, from the names [`merge`] gave its outputs; `None`
/// when the runtime answered the batch with no outputs (it refused, crashed or hung).
pub(crate) fn split(
    result: &onnx_idx_check::verdict::CaseResult,
    names: &[Vec<String>],
) -> Option<Vec<Seen>> {
    use onnx_idx_check::verdict::Status;
    let ds = result.data_sets.first()?;
    if ds.outputs.is_empty()
        || ds
            .fault
            .is_some_and(|f| f != onnx_idx_check::verdict::Fault::Nondeterministic)
    {
        return None;
    }
    Some(
        names
            .iter()
            .map(|mine| {
                let all = mine.iter().all(|n| {
                    ds.outputs
                        .iter()
                        .any(|o| &o.name == n && o.status == Status::Passed)
                });
                if all {
                    Seen::Agrees
                } else {
                    Seen::Disagrees
                }
            })
            .collect(),
    )
}

/// Whether the batch's verdict says the runtime gave no answer in time.
pub(crate) fn timed_out(result: &onnx_idx_check::verdict::CaseResult) -> bool {
    result
        .data_sets
        .iter()
        .any(|d| d.fault == Some(onnx_idx_check::verdict::Fault::TimedOut))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::cases::{self, Breadth};
    use crate::generate::variant::{rewrite_case, Variant};

    /// Our runner's verdict on the case in `dir`.
    fn run(dir: &Path, name: &str) -> onnx_idx_check::verdict::CaseResult {
        let case = onnx_idx_check::discover::Case {
            name: name.to_string(),
            dir: dir.to_path_buf(),
            rel: PathBuf::new(),
            data_sets: vec![onnx_idx_check::discover::DataSet {
                name: "test_data_set_0".to_string(),
                dir: dir.join("test_data_set_0"),
            }],
        };
        onnx_idx_check::runner::run_case(&case, &onnx_idx_check::runner::RunOptions::default())
    }

    /// The quick profile's valid cases, written under `root` in turn in each variant, grouped
    /// by operator version and batch key.
    fn written(root: &Path) -> Vec<Vec<(Key, Ready)>> {
        let mut groups = Vec::new();
        for (def, v) in cases::versions(&cases::generated_ops()) {
            let mut group = Vec::new();
            for (i, spec) in cases::of_version(Breadth::Quick, 0, def, v)
                .into_iter()
                .filter(|s| !s.violation)
                .enumerate()
            {
                let Some(r) = crate::generate::render_case(&spec).unwrap() else {
                    continue;
                };
                let dir = root
                    .join(format!("{}-{}", crate::generate::op_name(def), v.since))
                    .join(&r.name);
                r.write_to(&dir).unwrap();
                let variant = Variant::ALL[i % Variant::ALL.len()];
                let _ = rewrite_case(&dir, variant);
                if let Some(ready) = ready(&dir) {
                    group.push(ready);
                }
            }
            groups.push(group);
        }
        groups
    }

    #[test]
    fn every_member_of_a_merged_batch_keeps_its_verdict_and_a_wrong_one_is_pointed_at() {
        let tmp = tempfile::tempdir().unwrap();
        let (mut merged, mut members) = (0, 0);
        for group in written(&tmp.path().join("cases")) {
            let mut by_key: std::collections::BTreeMap<Key, Vec<&Ready>> = Default::default();
            for (k, r) in &group {
                by_key.entry(k.clone()).or_default().push(r);
            }
            for (_, rs) in by_key {
                for chunk in rs.chunks(SIZE) {
                    let dir = tmp.path().join(format!("batch-{merged}"));
                    let names = merge(chunk, &dir).unwrap();
                    let result = run(&dir, "batch");
                    assert_eq!(
                        split(&result, &names),
                        Some(vec![Seen::Agrees; chunk.len()]),
                        "{}: {:?}",
                        chunk[0].dir.display(),
                        result.reason
                    );
                    if let Some(keep) = std::env::var_os("ONNX_IDX_CHECK_KEEP_BATCH") {
                        let _ =
                            std::fs::rename(&dir, Path::new(&keep).join(format!("batch-{merged}")));
                    }
                    merged += 1;
                    members += chunk.len();
                }
            }
        }
        assert!(
            merged > 20 && members > 200,
            "{merged} batches of {members} cases"
        );
    }
}
