//! Output directories this tool owns (`hunt --out`, `minimize --out`): the tool removes only
//! what it can show it wrote. Every such directory holds a record, [`MARKER`], naming the command
//! and every file and directory it wrote there; a directory may be reused only when it is missing,
//! empty, or holds nothing but what its record lists, and then only the listed entries are
//! removed (the directory itself stays). `generate` keeps the same rule with its manifest and
//! shares the walk ([`first_foreign`]).

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The record of what the tool wrote into an output directory.
pub(crate) const MARKER: &str = ".onnx-idx-check-out.json";

/// What [`MARKER`] holds.
#[derive(Debug, Serialize, Deserialize)]
struct Marker {
    /// Always `onnx-idx-check`.
    tool: String,
    /// The subcommand that wrote the directory (`hunt`, `minimize`).
    command: String,
    /// Every file and directory written, relative and `/`-separated; directories end in `/`.
    entries: BTreeSet<String>,
}

/// Why an output directory may not be (re)used.
#[derive(Debug, Error)]
pub(crate) enum OwnedError {
    /// The path is a file or something else that is not a directory.
    #[error("{0} is not a directory")]
    NotADirectory(String),
    /// The directory holds an entry the tool cannot show it wrote.
    #[error(
        "{dir} holds {entry}, which onnx-idx-check did not write there ({why}); nothing was \
         removed: give a new or empty directory, or move its contents away yourself"
    )]
    Foreign {
        /// The directory.
        dir: String,
        /// The first such entry, relative to it.
        entry: String,
        /// Why it is not the tool's.
        why: String,
    },
    /// The directory holds another command's output.
    #[error(
        "{dir} holds the output of `onnx-idx-check {found}`, not of `{wanted}`; nothing was \
         removed: give another directory"
    )]
    OtherCommand {
        /// The directory.
        dir: String,
        /// The command its record names.
        found: String,
        /// The command that wants it.
        wanted: String,
    },
    /// Reading, removing or writing failed.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> OwnedError + '_ {
    move |source| OwnedError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// What an entry of a tree is (symbolic links are not followed, and are [`Kind::Other`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link, FIFO, socket or device.
    Other,
}

/// Every entry under `dir`: its path relative to `dir` (`/`-separated) and kind, in name order,
/// parents before their contents. Symbolic links are not followed.
pub(crate) fn entries(dir: &Path) -> Result<Vec<(String, Kind)>, OwnedError> {
    let mut out = Vec::new();
    for e in walkdir::WalkDir::new(dir).min_depth(1).sort_by_file_name() {
        let e = e.map_err(|e| {
            let path = e.path().unwrap_or(dir).to_path_buf();
            io_error(&path)(e.into())
        })?;
        let t = e.file_type();
        let kind = if t.is_file() {
            Kind::File
        } else if t.is_dir() {
            Kind::Dir
        } else {
            Kind::Other
        };
        out.push((relative(dir, e.path()), kind));
    }
    Ok(out)
}

/// The first of [`entries`] of `dir` that `owns` does not accept, or `None` when it accepts
/// them all.
pub(crate) fn first_foreign(
    dir: &Path,
    owns: &dyn Fn(&str, Kind) -> bool,
) -> Result<Option<String>, OwnedError> {
    Ok(entries(dir)?
        .into_iter()
        .find(|(rel, kind)| !owns(rel, *kind))
        .map(|(rel, _)| rel))
}

fn relative(dir: &Path, path: &Path) -> String {
    let rel: Vec<String> = path
        .strip_prefix(dir)
        .unwrap_or(path)
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    rel.join("/")
}

/// The record in `dir`, checked: `Ok(None)` when `dir` is missing or empty (free to take).
fn examine(dir: &Path, command: &str) -> Result<Option<Marker>, OwnedError> {
    let shown = dir.display().to_string();
    match std::fs::metadata(dir) {
        Ok(m) if !m.is_dir() => return Err(OwnedError::NotADirectory(shown)),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error(dir)(e)),
    }
    let Some(first) = first_foreign(dir, &|_, _| false)? else {
        return Ok(None);
    };
    let foreign = |entry: String, why: String| OwnedError::Foreign {
        dir: shown.clone(),
        entry,
        why,
    };
    let marker_path = dir.join(MARKER);
    let marker = match std::fs::symlink_metadata(&marker_path) {
        Ok(m) if m.is_file() => {
            let text = std::fs::read(&marker_path).map_err(io_error(&marker_path))?;
            match serde_json::from_slice::<Marker>(&text) {
                Ok(m) if m.tool == onnx_idx_check::report::TOOL.name => m,
                _ => {
                    return Err(foreign(
                        MARKER.into(),
                        "not a record this tool wrote".into(),
                    ))
                }
            }
        }
        Ok(_) => return Err(foreign(MARKER.into(), "not a regular file".into())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(foreign(
                first,
                format!("there is no {MARKER} recording what it wrote"),
            ))
        }
        Err(e) => return Err(io_error(&marker_path)(e)),
    };
    // A forged record must not name anything outside the directory for removal.
    let inside = |rel: &str| {
        let rel = rel.strip_suffix('/').unwrap_or(rel);
        !rel.is_empty()
            && !rel.contains('\\')
            && rel
                .split('/')
                .all(|c| !c.is_empty() && c != "." && c != "..")
    };
    if !marker.entries.iter().all(|rel| inside(rel)) {
        return Err(foreign(
            MARKER.into(),
            "it lists a path outside the directory".into(),
        ));
    }
    if marker.command != command {
        return Err(OwnedError::OtherCommand {
            dir: shown,
            found: marker.command,
            wanted: command.into(),
        });
    }
    let listed = |rel: &str, kind: Kind| match kind {
        Kind::File => rel == MARKER || marker.entries.contains(rel),
        Kind::Dir => marker.entries.contains(&format!("{rel}/")),
        Kind::Other => false,
    };
    if let Some(entry) = first_foreign(dir, &listed)? {
        return Err(foreign(entry, format!("{MARKER} does not list it")));
    }
    Ok(Some(marker))
}

/// Checks, touching nothing, that `command` may write into `dir`: it is missing, empty, or holds
/// only what an earlier run of `command` recorded writing.
pub(crate) fn check(dir: &Path, command: &str) -> Result<(), OwnedError> {
    examine(dir, command).map(|_| ())
}

/// An output directory taken by a command, with its record.
#[derive(Debug)]
pub(crate) struct OwnedDir {
    dir: PathBuf,
    marker: Marker,
}

impl OwnedDir {
    /// Takes `dir` for `command`: checks it again as [`check`] does, removes the entries an
    /// earlier run recorded (nothing else), creates the directory when missing and writes a
    /// fresh record listing nothing yet.
    pub(crate) fn take(dir: &Path, command: &str) -> Result<OwnedDir, OwnedError> {
        if let Some(old) = examine(dir, command)? {
            // In reverse name order a directory's contents (its name, `/`, more) come before it,
            // so it is empty when its turn comes; one that is not (something appeared meanwhile)
            // fails and stays. A failure part-way leaves the record whole, so a retry can finish.
            let mut listed: Vec<(&str, bool)> = old
                .entries
                .iter()
                .map(|rel| (rel.trim_end_matches('/'), rel.ends_with('/')))
                .collect();
            listed.sort_unstable_by(|a, b| b.cmp(a));
            for (rel, is_dir) in listed {
                let path = dir.join(rel);
                let removed = if is_dir {
                    std::fs::remove_dir(&path)
                } else {
                    std::fs::remove_file(&path)
                };
                match removed {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        return Err(io_error(&path)(e))
                    }
                    _ => {}
                }
            }
        }
        std::fs::create_dir_all(dir).map_err(io_error(dir))?;
        let owned = OwnedDir {
            dir: dir.to_path_buf(),
            marker: Marker {
                tool: onnx_idx_check::report::TOOL.name.into(),
                command: command.into(),
                entries: BTreeSet::new(),
            },
        };
        owned.save()?;
        Ok(owned)
    }

    /// The directory.
    pub(crate) fn path(&self) -> &Path {
        &self.dir
    }

    /// Records entries about to be written (or written): files by their relative path,
    /// directories ending in `/`. Record before writing, so that an interrupted run leaves
    /// nothing unlisted behind.
    pub(crate) fn record<S: Into<String>>(
        &mut self,
        entries: impl IntoIterator<Item = S>,
    ) -> Result<(), OwnedError> {
        self.marker
            .entries
            .extend(entries.into_iter().map(Into::into));
        self.save()
    }

    /// Records the files and directories under `sub` (relative; empty for the whole directory),
    /// which this command has just written, and `sub` itself.
    pub(crate) fn record_tree(&mut self, sub: &str) -> Result<(), OwnedError> {
        let root = self.dir.join(sub);
        let prefix = if sub.is_empty() {
            String::new()
        } else {
            format!("{sub}/")
        };
        let mut found = Vec::new();
        if !sub.is_empty() {
            found.push(prefix.clone());
        }
        for (rel, kind) in entries(&root)? {
            let rel = format!("{prefix}{rel}");
            match kind {
                Kind::File if rel != MARKER => found.push(rel),
                Kind::Dir => found.push(format!("{rel}/")),
                // Never written by this tool: left unlisted, so a later run refuses the directory.
                _ => {}
            }
        }
        self.record(found)
    }

    fn save(&self) -> Result<(), OwnedError> {
        let mut json = serde_json::to_string_pretty(&self.marker)
            .map_err(|e| io_error(&self.dir)(e.into()))?;
        json.push('\n');
        onnx_idx_check::fsutil::write_atomic(&self.dir, MARKER, json.as_bytes()).map_err(|e| {
            OwnedError::Io {
                path: e.path.display().to_string(),
                source: e.source,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        entries(dir).unwrap().into_iter().map(|(n, _)| n).collect()
    }

    #[test]
    fn a_taken_directory_is_emptied_of_what_it_recorded_and_nothing_else() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("out");
        let mut owned = OwnedDir::take(&dir, "hunt").unwrap();
        owned.record(["a.json", "case/"]).unwrap();
        std::fs::write(dir.join("a.json"), "[]").unwrap();
        std::fs::create_dir_all(dir.join("case/sub")).unwrap();
        std::fs::write(dir.join("case/sub/x.pb"), "x").unwrap();
        owned.record_tree("case").unwrap();
        check(&dir, "hunt").unwrap();
        // Another command's output is not this one's.
        assert!(matches!(
            check(&dir, "minimize"),
            Err(OwnedError::OtherCommand { .. })
        ));
        // Taking it again leaves the directory and a fresh record only.
        let again = OwnedDir::take(&dir, "hunt").unwrap();
        assert_eq!(names(again.path()), [MARKER]);

        // An unlisted file, however deep, makes the directory foreign; nothing is removed.
        let mut owned = OwnedDir::take(&dir, "hunt").unwrap();
        owned.record(["case/"]).unwrap();
        std::fs::create_dir_all(dir.join("case")).unwrap();
        std::fs::write(dir.join("case/notes.txt"), "mine").unwrap();
        let e = OwnedDir::take(&dir, "hunt").unwrap_err();
        assert!(
            matches!(&e, OwnedError::Foreign { entry, .. } if entry == "case/notes.txt"),
            "{e}"
        );
        assert_eq!(names(&dir), [MARKER, "case", "case/notes.txt"]);
    }

    #[test]
    fn a_directory_without_a_record_or_with_a_forged_one_is_foreign() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::write(dir.join("findings.json"), "[]").unwrap();
        let e = check(dir, "hunt").unwrap_err();
        assert!(
            matches!(&e, OwnedError::Foreign { entry, .. } if entry == "findings.json"),
            "{e}"
        );
        std::fs::write(
            dir.join(MARKER),
            r#"{"tool":"other","command":"hunt","entries":[]}"#,
        )
        .unwrap();
        let e = check(dir, "hunt").unwrap_err();
        assert!(
            matches!(&e, OwnedError::Foreign { entry, .. } if entry == MARKER),
            "{e}"
        );
        // A record that names a path outside the directory is no record of this tool's.
        let outside = tmp.path().join("outside.txt");
        std::fs::write(&outside, "keep").unwrap();
        let sub = dir.join("sub");
        std::fs::create_dir(&sub).unwrap();
        std::fs::write(
            sub.join(MARKER),
            r#"{"tool":"onnx-idx-check","command":"hunt","entries":["../outside.txt"]}"#,
        )
        .unwrap();
        let e = OwnedDir::take(&sub, "hunt").unwrap_err();
        assert!(
            matches!(&e, OwnedError::Foreign { entry, .. } if entry == MARKER),
            "{e}"
        );
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep");
        // A missing or empty directory is free; a file is not a directory.
        check(&dir.join("new"), "hunt").unwrap();
        assert!(matches!(
            check(&dir.join("findings.json"), "hunt"),
            Err(OwnedError::NotADirectory(_))
        ));
    }

    #[cfg(unix)]
    #[test]
    fn a_symbolic_link_where_a_recorded_file_was_is_foreign_and_not_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("out");
        let outside = tmp.path().join("outside.txt");
        std::fs::write(&outside, "keep").unwrap();
        let mut owned = OwnedDir::take(&dir, "minimize").unwrap();
        owned.record(["REPORT.md"]).unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("REPORT.md")).unwrap();
        assert!(matches!(
            OwnedDir::take(&dir, "minimize"),
            Err(OwnedError::Foreign { .. })
        ));
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep");
    }
}
