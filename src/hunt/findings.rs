//! A hunt's findings: one per bug, which is one [`Behaviour`] of the runtime (its class,
//! diagnosis and symptom) on one operator, whatever the versions, data types and variants it was
//! seen on; and `findings.json`, the list of them. Hunts on several machines (`--shard`) write
//! lists of the same shape, merged by the same key.

use crate::minimize::behaviour::{Behaviour, Class};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::Path;

/// The file listing a hunt's findings.
pub(crate) const FILE: &str = "findings.json";

/// The file listing every case a hunt tried, in order.
pub(crate) const TRIED_FILE: &str = "tried.tsv";

/// What makes two disagreements one finding: the operator and the behaviour, an output on
/// invalid input counting as one behaviour whether or not it was found unsafe.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Key {
    op: String,
    invalid_output: bool,
    class: Option<Class>,
    diagnosis: &'static str,
    symptom: String,
}

impl Key {
    /// The key of behaviour `b` of operator `op`.
    pub(crate) fn new(op: &str, b: &Behaviour) -> Key {
        let invalid_output = matches!(b.class, Class::Unsafe | Class::AcceptsInvalid);
        Key {
            op: op.to_string(),
            invalid_output,
            class: (!invalid_output).then_some(b.class),
            // Where the spec requires an error the rule broken is the bug; the class that
            // happens to reproduce the output is not (it says whether values were made up,
            // which the finding's class tells).
            diagnosis: if invalid_output { "" } else { b.diagnosis },
            symptom: b.symptom.clone(),
        }
    }
}

/// One finding.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct Finding {
    /// What it means for the runtime's users.
    pub class: Class,
    /// The runtime's name.
    pub runtime: String,
    /// Its version.
    pub runtime_version: String,
    /// The operator (`Gather`, `org.openvinotoolkit.Gather`).
    pub op: String,
    /// The operator versions it was seen on (their `since`).
    pub versions: BTreeSet<i64>,
    /// The value data types it was seen on.
    pub dtypes: BTreeSet<String>,
    /// The ids of the variants of the minimal case that show it (`input-static`, ...).
    pub variants_failing: Vec<String>,
    /// The ids of those that do not.
    pub variants_passing: Vec<String>,
    /// The ids of the runtime's modes the minimal case shows it in (`optimization=disabled`);
    /// empty for a runtime of one mode.
    #[serde(default)]
    pub modes_failing: Vec<String>,
    /// The ids of those it does not show it in.
    #[serde(default)]
    pub modes_passing: Vec<String>,
    /// The first bug class that reproduces the wrong output, `none` for none.
    pub diagnosis: String,
    /// What the disagreement looks like, sizes and values blanked (a crash's site, a refusal's
    /// message, where a wrong output differs).
    pub symptom: String,
    /// For an output where an error is required: the rule the inputs break, in the reference's
    /// words.
    pub rule: Option<String>,
    /// The disagreements seen with this behaviour.
    pub seen: u64,
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
    /// Whether the case was shrunk (a case of several nodes is written as found).
    pub minimized: bool,
    /// Why the minimal case did not pass, as the runner says.
    pub reason: String,
}

/// The directory name of a finding, in characters every file system takes:
/// `crash-gathernd-13-float`.
pub(crate) fn dir_name(class: Class, op: &str, version: i64, dtype: &str) -> String {
    let raw = format!("{}-{op}-{version}-{dtype}", class.id());
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
            dir_name(Class::WrongOutput, "org.openvinotoolkit.Gather", 8, "float"),
            "wrong-output-org_openvinotoolkit_gather-8-float"
        );
    }

    #[test]
    fn one_key_for_an_output_on_invalid_input_found_unsafe_or_not() {
        let b = |class, symptom: &str| Behaviour {
            class,
            diagnosis: "none",
            symptom: symptom.to_string(),
        };
        let rule = "index # out of range";
        assert_eq!(
            Key::new("Gather", &b(Class::Unsafe, rule)),
            Key::new("Gather", &b(Class::AcceptsInvalid, rule))
        );
        assert_ne!(
            Key::new("Gather", &b(Class::AcceptsInvalid, rule)),
            Key::new("GatherND", &b(Class::AcceptsInvalid, rule))
        );
        assert_ne!(
            Key::new("Gather", &b(Class::WrongOutput, "values: empty")),
            Key::new("Gather", &b(Class::WrongOutput, "values: zero"))
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
