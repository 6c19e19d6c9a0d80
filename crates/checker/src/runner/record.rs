//! What the stages of one case share: the log of what loading its files left besides tensors
//! (digests, storage forms, coverage traits), and how data-set verdicts rank.

use super::RunOptions;
use crate::load::{self, LoadError};
use crate::verdict::Status;
use std::path::Path;

/// What loading a case's files leaves besides tensors: digests and storage forms.
#[derive(Debug, Default)]
pub(super) struct Record {
    /// (file relative to the case directory, sha256 hex).
    pub(super) files: Vec<(String, String)>,
    /// How each graph input of the current data set was stored.
    pub(super) forms: std::collections::HashMap<String, load::StorageForm>,
    /// Coverage traits of passing data sets.
    pub(super) traits: Vec<(String, std::collections::BTreeSet<String>)>,
}

impl Record {
    /// Loads a tensor file, noting its digest when asked.
    pub(super) fn tensor(
        &mut self,
        path: &Path,
        file: &str,
        opts: &RunOptions,
    ) -> Result<load::LoadedTensor, LoadError> {
        let loaded = load::load_tensor_file_with(path, file, opts.max_tensor_bytes, opts.digests)?;
        if let Some(sha) = &loaded.sha256 {
            self.files.push((file.to_string(), sha.clone()));
        }
        Ok(loaded)
    }

    /// How much has been recorded so far, to [`rewind`](Record::rewind) to.
    pub(super) fn mark(&self) -> (usize, usize) {
        (self.files.len(), self.traits.len())
    }

    /// Forgets what was recorded after `mark`: a data set judged again must not count twice.
    pub(super) fn rewind(&mut self, (files, traits): (usize, usize)) {
        self.files.truncate(files);
        self.traits.truncate(traits);
    }
}

/// Which data-set verdict decides the case's: errored over skipped over failed.
pub(super) fn severity(s: Status) -> u8 {
    match s {
        Status::Passed => 0,
        Status::Failed => 1,
        Status::Skipped => 2,
        Status::Errored => 3,
    }
}
