//! The record of which cases failed, for `run --rerun-failed` (pytest's `--lf`): every run
//! writes the cases that failed its gate to a small JSON file, and a run with `--rerun-failed`
//! runs only those of its selected cases.
//!
//! Cases are keyed by their directory, made absolute, so that a record stays right whichever
//! PATH named them. A run updates the record for the cases it ran and keeps what it says of the
//! others (a `--filter`ed or sharded run does not forget the failures it did not look at). The
//! file is replaced atomically, so parallel runs never leave a torn record.

use anyhow::{Context, Result};
use onnx_idx_check::verdict::CaseResult;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The default record, relative to the working directory, as pytest keeps `.pytest_cache/`.
pub(crate) const DEFAULT_FILE: &str = ".onnx-idx-check/last-run.json";

/// The environment variable that moves the default record.
pub(crate) const ENV: &str = "ONNX_IDX_CHECK_LAST_RUN";

/// A record larger than this is not read: no run has that many failures worth rerunning.
const MAX_BYTES: u64 = 64 << 20;

/// The file's contents.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Record {
    /// Version of this format.
    pub schema_version: u32,
    /// Case directory (absolute) -> what failed there.
    pub failed: BTreeMap<PathBuf, Failure>,
}

/// One case that failed the gate.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Failure {
    /// Its name in the run that recorded it.
    pub name: String,
    /// `FAIL`, `ERROR`, `XPASS`, ...
    pub label: String,
}

/// The record's path: `--last-run FILE`, else `$ONNX_IDX_CHECK_LAST_RUN`, else the default.
pub(crate) fn path(flag: Option<&Path>) -> PathBuf {
    flag.map(Path::to_path_buf)
        .or_else(|| std::env::var_os(ENV).map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from(DEFAULT_FILE))
}

/// A case directory as the record keys it (absolute; symbolic links resolved when it exists).
pub(crate) fn key(dir: &Path) -> PathBuf {
    std::fs::canonicalize(dir).unwrap_or_else(|_| std::path::absolute(dir).unwrap_or_default())
}

/// Reads the record; `Ok(None)` when there is none yet.
pub(crate) fn read(file: &Path) -> Result<Option<Record>> {
    if !file.exists() {
        return Ok(None);
    }
    let what = file.display().to_string();
    let bytes = onnx_idx_check::load::read_file(file, &what, MAX_BYTES)
        .with_context(|| format!("reading the record of the last run, {what}"))?;
    let record: Record = serde_json::from_slice(&bytes).with_context(|| {
        format!("{what} is not a record of onnx-idx-check's last run (delete it, then run again)")
    })?;
    Ok(Some(record))
}

impl Record {
    /// The record after a run: the cases that ran replace what was known of them.
    pub(crate) fn update(mut self, results: &[CaseResult], deny_skip: bool) -> Record {
        self.schema_version = 1;
        for c in results {
            let k = key(&c.path);
            if c.fails_gate(deny_skip) {
                let failure = Failure {
                    name: c.name.clone(),
                    label: onnx_idx_check::report::label(c).to_string(),
                };
                self.failed.insert(k, failure);
            } else {
                self.failed.remove(&k);
            }
        }
        self
    }

    /// Writes the record to `file` (through a fresh temporary file and a rename), creating its
    /// directory; a new `.onnx-idx-check/` directory gets a `.gitignore` of `*`, so that it
    /// never shows in `git status`.
    pub(crate) fn write(&self, file: &Path) -> Result<()> {
        let dir = file
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        if !dir.exists() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            if dir.file_name().is_some_and(|n| n == ".onnx-idx-check") {
                std::fs::write(dir.join(".gitignore"), "# written by onnx-idx-check\n*\n")
                    .with_context(|| format!("writing {}/.gitignore", dir.display()))?;
            }
        }
        let text = serde_json::to_string_pretty(self).context("serialising the record")? + "\n";
        let name = file
            .file_name()
            .with_context(|| format!("{} names no file", file.display()))?;
        onnx_idx_check::fsutil::write_atomic(dir, &name.to_string_lossy(), text.as_bytes())
            .with_context(|| format!("replacing {}", file.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use onnx_idx_check::verdict::Status;

    fn result(dir: &Path, name: &str, status: Status) -> CaseResult {
        CaseResult::bare(name, dir.join(name), status)
    }

    #[test]
    fn a_run_updates_the_cases_it_ran_and_keeps_the_others() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let first = Record::default().update(
            &[
                result(d, "a", Status::Failed),
                result(d, "b", Status::Errored),
                result(d, "c", Status::Passed),
                result(d, "s", Status::Skipped),
            ],
            false,
        );
        let names = |r: &Record| {
            r.failed
                .values()
                .map(|f| format!("{} {}", f.label, f.name))
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&first), ["FAIL a", "ERROR b"]);
        // A later run of `a` (now passing) and `c` (now failing) leaves `b` as it was.
        let second = first.update(
            &[
                result(d, "a", Status::Passed),
                result(d, "c", Status::Failed),
            ],
            false,
        );
        assert_eq!(names(&second), ["ERROR b", "FAIL c"]);
        // Under --deny-skip a skipped case fails the gate, so it is rerun.
        let third = second.update(&[result(d, "s", Status::Skipped)], true);
        assert_eq!(names(&third), ["ERROR b", "FAIL c", "SKIP s"]);
    }

    #[test]
    fn the_record_round_trips_and_a_bad_one_is_named() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join(".onnx-idx-check/last-run.json");
        assert!(read(&file).unwrap().is_none());
        let rec = Record::default().update(&[result(tmp.path(), "a", Status::Failed)], false);
        rec.write(&file).unwrap();
        assert_eq!(
            std::fs::read_to_string(tmp.path().join(".onnx-idx-check/.gitignore")).unwrap(),
            "# written by onnx-idx-check\n*\n"
        );
        let back = read(&file).unwrap().unwrap();
        assert_eq!(back.failed, rec.failed);
        std::fs::write(&file, "{not json").unwrap();
        let e = format!("{:#}", read(&file).unwrap_err());
        assert!(
            e.contains("is not a record of onnx-idx-check's last run"),
            "{e}"
        );
    }
}
