//! `generate --verify OUTDIR`: checks a suite, copied or not, against its `MANIFEST.json`: every
//! listed file present with the listed sha256, and no file the manifest does not list.

use super::manifest::{self, Manifest};
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use thiserror::Error;

/// Why a directory cannot be checked at all (a usage error, unlike a [`Problem`]).
#[derive(Debug, Error)]
pub enum VerifyError {
    /// OUTDIR is not a readable directory.
    #[error("{path} is not a readable directory: {source}")]
    NotADirectory {
        /// The path given.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// There is no manifest to check against.
    #[error("{path} has no readable {}: {source}", manifest::FILE)]
    NoManifest {
        /// The directory.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The manifest is not one this tool wrote.
    #[error(
        "{path}/{} is not a manifest of onnx-idx-check generate: {reason}",
        manifest::FILE
    )]
    BadManifest {
        /// The directory.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A directory could not be listed.
    #[error("listing {path}: {source}")]
    Walk {
        /// The directory.
        path: String,
        /// Why.
        source: walkdir::Error,
    },
}

/// One file that does not match the manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// Listed, not there.
    Missing(String),
    /// There, with other bytes.
    Changed {
        /// The file, relative to OUTDIR.
        path: String,
        /// The sha256 the manifest lists.
        expected: String,
        /// The sha256 of the file.
        found: String,
    },
    /// There, not listed (or not a regular file).
    Unlisted(String),
    /// Listed, but could not be read.
    Unreadable {
        /// The file, relative to OUTDIR.
        path: String,
        /// Why.
        error: String,
    },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Missing(p) => write!(f, "missing: {p}"),
            Problem::Changed {
                path,
                expected,
                found,
            } => write!(
                f,
                "changed: {path} (sha256 {found}, the manifest says {expected})"
            ),
            Problem::Unlisted(p) => write!(f, "not in the manifest: {p}"),
            Problem::Unreadable { path, error } => write!(f, "unreadable: {path}: {error}"),
        }
    }
}

/// What checking a suite found.
#[derive(Debug)]
pub struct Verified {
    /// The manifest checked against.
    pub manifest: Manifest,
    /// Files the manifest lists (itself left out).
    pub files: usize,
    /// Every mismatch, in path order.
    pub problems: Vec<Problem>,
}

/// Reads `dir/MANIFEST.json`.
pub fn read_manifest(dir: &Path) -> Result<Manifest, VerifyError> {
    let path = dir.display().to_string();
    let text = std::fs::read_to_string(dir.join(manifest::FILE)).map_err(|source| {
        VerifyError::NoManifest {
            path: path.clone(),
            source,
        }
    })?;
    let m: Manifest = serde_json::from_str(&text).map_err(|e| VerifyError::BadManifest {
        path: path.clone(),
        reason: e.to_string(),
    })?;
    if m.schema_version != manifest::SCHEMA_VERSION {
        return Err(VerifyError::BadManifest {
            path,
            reason: format!(
                "schema_version {} (this onnx-idx-check reads {})",
                m.schema_version,
                manifest::SCHEMA_VERSION
            ),
        });
    }
    Ok(m)
}

/// Every entry under `dir` that is not a directory, relative to it with `/` separators, with
/// whether it is a regular file; sorted.
pub fn entries_under(dir: &Path) -> Result<Vec<(String, bool)>, VerifyError> {
    let mut out = Vec::new();
    for e in walkdir::WalkDir::new(dir).min_depth(1).sort_by_file_name() {
        let e = e.map_err(|source| VerifyError::Walk {
            path: dir.display().to_string(),
            source,
        })?;
        if e.file_type().is_dir() {
            continue;
        }
        let rel = e.path().strip_prefix(dir).unwrap_or(e.path());
        let rel: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        out.push((rel.join("/"), e.file_type().is_file()));
    }
    out.sort();
    Ok(out)
}

/// Checks `dir` against its manifest.
pub fn verify(dir: &Path) -> Result<Verified, VerifyError> {
    std::fs::read_dir(dir).map_err(|source| VerifyError::NotADirectory {
        path: dir.display().to_string(),
        source,
    })?;
    let manifest = read_manifest(dir)?;
    let listed = manifest.all_files();
    let present: BTreeMap<String, bool> = entries_under(dir)?.into_iter().collect();
    let mut problems = Vec::new();
    for (rel, sha) in &listed {
        match present.get(rel) {
            None => problems.push(Problem::Missing(rel.clone())),
            Some(false) => problems.push(Problem::Unlisted(rel.clone())),
            Some(true) => match onnx_idx_check::load::sha256_file_hex(&dir.join(rel)) {
                Ok(found) if found == *sha => {}
                Ok(found) => problems.push(Problem::Changed {
                    path: rel.clone(),
                    expected: (*sha).to_owned(),
                    found,
                }),
                Err(e) => problems.push(Problem::Unreadable {
                    path: rel.clone(),
                    error: e.to_string(),
                }),
            },
        }
    }
    for rel in present.keys() {
        if rel != manifest::FILE && !listed.contains_key(rel) {
            problems.push(Problem::Unlisted(rel.clone()));
        }
    }
    problems.sort_by(|a, b| path_of(a).cmp(path_of(b)));
    Ok(Verified {
        files: listed.len(),
        manifest,
        problems,
    })
}

fn path_of(p: &Problem) -> &str {
    match p {
        Problem::Missing(p) | Problem::Unlisted(p) => p,
        Problem::Changed { path, .. } | Problem::Unreadable { path, .. } => path,
    }
}
