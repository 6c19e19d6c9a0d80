//! A hunt's findings: one per distinct disagreement, keyed by operator, version, data type,
//! verdict and diagnosis, and `findings.json`, the list of them. Hunts on several machines
//! (`--shard`) write lists of the same shape, merged by the same key.

use serde::{Deserialize, Serialize};

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
}
