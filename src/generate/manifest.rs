//! `MANIFEST.json`: what a generated suite holds and how each file's bytes must hash, so that a
//! copied suite can be checked ([`super::verify`]) and a later `generate` can recognise a
//! directory it wrote.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The manifest's file name, at the top of OUTDIR.
pub const FILE: &str = "MANIFEST.json";

/// The version of the manifest's layout; raised on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// The whole manifest. Maps are `BTreeMap`s so that the JSON, like every other file, is the same
/// bytes for the same seed and tool version.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The tool that wrote the suite (`onnx-idx-check`).
    pub tool: String,
    /// Its version: with the seed and profile, what fixes every byte.
    pub tool_version: String,
    /// The seed of the random values.
    pub seed: u64,
    /// The profile (`quick`).
    pub profile: String,
    /// The operators generated (`--ops`, or every one the generator knows).
    pub ops: Vec<String>,
    /// The files beside the cases (`expectations.toml`), by name, with their sha256.
    pub files: BTreeMap<String, String>,
    /// Every case, keyed by its directory name.
    pub cases: BTreeMap<String, CaseEntry>,
}

/// What the spec requires of a case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Expected {
    /// The outputs are in the case's `output_K.pb`.
    Passed,
    /// The spec requires an error; the case has no output file.
    Errored,
}

/// One case of the manifest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CaseEntry {
    /// The operator (`op_type`).
    pub op: String,
    /// Its domain (`""` for ai.onnx).
    pub domain: String,
    /// The operator version under test (its `since`).
    pub version: i64,
    /// The opset the model imports.
    pub opset: i64,
    /// The data type of the value input.
    pub dtype: String,
    /// What the case exercises.
    pub traits: Vec<String>,
    /// What the spec requires.
    pub expected: Expected,
    /// For an errored case, the error the spec requires, in the reference's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Every file of the case, by path relative to the case directory (`/`-separated), with its
    /// sha256 as lower-case hex.
    pub files: BTreeMap<String, String>,
}

impl Manifest {
    /// Every file the manifest lists, relative to OUTDIR (`/`-separated), with its sha256; the
    /// manifest itself is not among them.
    pub fn all_files(&self) -> BTreeMap<String, &str> {
        let mut all: BTreeMap<String, &str> = self
            .files
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str()))
            .collect();
        for (case, entry) in &self.cases {
            for (rel, sha) in &entry.files {
                all.insert(format!("{case}/{rel}"), sha.as_str());
            }
        }
        all
    }

    /// The manifest as pretty JSON with a trailing newline.
    pub fn to_json(&self) -> serde_json::Result<String> {
        let mut s = serde_json::to_string_pretty(self)?;
        s.push('\n');
        Ok(s)
    }
}
