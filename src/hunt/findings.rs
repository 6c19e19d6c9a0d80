//! A hunt's findings: one per distinct disagreement, keyed by operator, version, data type,
//! verdict and diagnosis, and `findings.json`, the list of them. Hunts on several machines
//! (`--shard`) write lists of the same shape, merged by the same key.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// The file listing a hunt's findings.
pub(crate) const FILE: &str = "findings.json";

/// The file listing every case a hunt tried, in order.
pub(crate) const TRIED_FILE: &str = "tried.tsv";

/// One finding.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct Finding {
    /// The runtime's name.
    pub runtime: String,
    /// Its version.
    pub runtime_version: String,
    /// The operator (`Gather`, `org.openvinotoolkit.Gather`).
    pub op: String,
    /// The operator version (its `since`).
    pub version: i64,
    /// The value data type.
    pub dtype: String,
    /// The verdict: `failed` or `errored`.
    pub verdict: String,
    /// What the runtime did, when that decided the verdict (`crashed`, ...).
    pub fault: Option<String>,
    /// The first bug class that reproduces the wrong output, `none` for none.
    pub diagnosis: String,
    /// The finding's directory under the hunt's output.
    pub case: String,
    /// The generated case it was minimized from.
    pub original: String,
    /// The generator's seed for that case (`generate --seed` with `--profile full` writes it).
    pub seed: u64,
    /// Input elements of the original case.
    pub original_size: usize,
    /// Input elements of the minimal case.
    pub minimal_size: usize,
    /// Why the minimal case did not pass, as the runner says.
    pub reason: String,
}

/// The directory name of a finding: its key, in characters every file system takes.
pub(crate) fn dir_name(
    op: &str,
    version: i64,
    dtype: &str,
    verdict: &str,
    diagnosis: &str,
) -> String {
    let raw = format!("{op}-{version}-{dtype}-{verdict}-{diagnosis}");
    raw.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// `name`, or when `out` already holds a directory of that name (two refusals with different
/// errors share a name) `name-2`, `name-3`, ...
pub(crate) fn unused_dir_name(out: &Path, name: &str) -> String {
    (1..)
        .map(|k| {
            if k == 1 {
                name.to_string()
            } else {
                format!("{name}-{k}")
            }
        })
        .find(|n| !out.join(n).exists())
        .unwrap_or_else(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directory_names_keep_the_key_readable() {
        assert_eq!(
            dir_name("org.openvinotoolkit.Gather", 8, "float", "failed", "none"),
            "org_openvinotoolkit_gather-8-float-failed-none"
        );
    }

    #[test]
    fn a_taken_directory_name_gets_a_number() {
        let out = tempfile::tempdir().unwrap();
        let name = "gather-13-float-refused-none";
        assert_eq!(unused_dir_name(out.path(), name), name);
        std::fs::create_dir(out.path().join(name)).unwrap();
        assert_eq!(unused_dir_name(out.path(), name), format!("{name}-2"));
        std::fs::create_dir(out.path().join(format!("{name}-2"))).unwrap();
        assert_eq!(unused_dir_name(out.path(), name), format!("{name}-3"));
    }
}
