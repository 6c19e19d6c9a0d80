//! Reading external tensor data without leaving the directory of the referencing file.
//!
//! The rules answer ONNX's own loader CVEs (docs/semantics.md D11): the location must be a plain
//! relative path (no absolute path, drive, `..`, NUL), every component must be a real directory
//! or, last, a regular file (no symlink anywhere, no hard link, no FIFO or device), and offset and
//! length are checked against the file's real size before a buffer is allocated.

use crate::pb::StringStringEntryProto;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Component, Path, PathBuf};
use thiserror::Error;

/// Why external data was refused.
#[derive(Debug, Error)]
pub enum ExternalError {
    /// No `location` key.
    #[error("the tensor is stored externally but has no `location`")]
    NoLocation,
    /// The location is absolute or has a drive or UNC prefix.
    #[error("location '{0}' must be a relative path")]
    Absolute(String),
    /// The location leaves the directory (`..`).
    #[error("location '{0}' points outside the directory of the file that references it")]
    Escapes(String),
    /// The location contains a NUL byte or is empty.
    #[error("location {0:?} is not a valid file name")]
    Invalid(String),
    /// A component of the path is a symbolic link.
    #[error("location '{location}': '{component}' is a symbolic link")]
    Symlink {
        /// The location.
        location: String,
        /// The component that is a link.
        component: String,
    },
    /// The target is not a regular file.
    #[error("location '{0}' is not a regular file")]
    NotRegular(String),
    /// The target has more than one hard link.
    #[error("location '{0}' has {1} hard links (a hard link can point outside the directory)")]
    HardLink(String, u64),
    /// An offset or length is not a non-negative decimal integer.
    #[error("`{key}` = '{value}' is not a non-negative integer")]
    BadNumber {
        /// The key.
        key: String,
        /// The value.
        value: String,
    },
    /// Offset and length reach past the end of the file.
    #[error(
        "location '{location}': offset {offset} + length {length} exceeds the file size {size}"
    )]
    PastEnd {
        /// The location.
        location: String,
        /// The offset.
        offset: u64,
        /// The length.
        length: u64,
        /// The file's size.
        size: u64,
    },
    /// The byte count differs from what the tensor needs.
    #[error("location '{location}' provides {actual} bytes, the tensor needs exactly {needed}")]
    Size {
        /// The location.
        location: String,
        /// Bytes the tensor needs.
        needed: usize,
        /// Bytes provided.
        actual: u64,
    },
    /// Reading failed.
    #[error("location '{location}': {source}")]
    Io {
        /// The location.
        location: String,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// Reads the `needed` bytes of an externally stored tensor whose `external_data` entries are
/// `entries`, relative to `base_dir`.
pub fn read(
    entries: &[StringStringEntryProto],
    base_dir: &Path,
    needed: usize,
) -> Result<Vec<u8>, ExternalError> {
    let mut location = None;
    let mut offset = 0u64;
    let mut length = None;
    for e in entries {
        match e.key.as_str() {
            "location" => location = Some(e.value.clone()),
            "offset" => offset = parse_u64(&e.key, &e.value)?,
            "length" => length = Some(parse_u64(&e.key, &e.value)?),
            // checksum, basepath and unknown keys are ignored, as onnx's loader does.
            _ => {}
        }
    }
    let location = location.ok_or(ExternalError::NoLocation)?;
    let path = resolve(&location, base_dir)?;
    let io = |source| ExternalError::Io {
        location: location.clone(),
        source,
    };
    let mut file = open_no_follow(&path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(ExternalError::NotRegular(location));
    }
    let links = hard_links(&meta);
    if links > 1 {
        return Err(ExternalError::HardLink(location, links));
    }
    let size = meta.len();
    let length = match length {
        Some(l) => l,
        None => size.saturating_sub(offset),
    };
    let end = offset.checked_add(length);
    if offset > size || end.is_none_or(|end| end > size) {
        return Err(ExternalError::PastEnd {
            location,
            offset,
            length,
            size,
        });
    }
    if u64::try_from(needed) != Ok(length) {
        return Err(ExternalError::Size {
            location,
            needed,
            actual: length,
        });
    }
    file.seek(SeekFrom::Start(offset)).map_err(io)?;
    let mut buf = vec![0u8; needed];
    file.read_exact(&mut buf).map_err(io)?;
    Ok(buf)
}

fn parse_u64(key: &str, value: &str) -> Result<u64, ExternalError> {
    let bad = || ExternalError::BadNumber {
        key: key.to_string(),
        value: value.to_string(),
    };
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    value.parse().map_err(|_| bad())
}

/// Checks `location` lexically and component by component, returning the path to open.
fn resolve(location: &str, base_dir: &Path) -> Result<PathBuf, ExternalError> {
    if location.is_empty() || location.contains('\0') {
        return Err(ExternalError::Invalid(location.to_string()));
    }
    let bytes = location.as_bytes();
    let drive = bytes.len() >= 2 && bytes[1] == b':' && bytes[0].is_ascii_alphabetic();
    if location.starts_with('/') || location.starts_with('\\') || drive {
        return Err(ExternalError::Absolute(location.to_string()));
    }
    // Windows separators would hide `..` from the component check below.
    if location.split(['/', '\\']).any(|c| c == "..") {
        return Err(ExternalError::Escapes(location.to_string()));
    }
    let mut path = base_dir.to_path_buf();
    let components: Vec<Component> = Path::new(location).components().collect();
    for (i, c) in components.iter().enumerate() {
        match c {
            Component::Normal(name) => path.push(name),
            Component::CurDir => continue,
            _ => return Err(ExternalError::Escapes(location.to_string())),
        }
        let meta = std::fs::symlink_metadata(&path).map_err(|source| ExternalError::Io {
            location: location.to_string(),
            source,
        })?;
        if meta.file_type().is_symlink() {
            return Err(ExternalError::Symlink {
                location: location.to_string(),
                component: Path::new(c.as_os_str()).display().to_string(),
            });
        }
        let last = i + 1 == components.len();
        if !last && !meta.is_dir() {
            return Err(ExternalError::NotRegular(location.to_string()));
        }
        if last && !meta.is_file() {
            return Err(ExternalError::NotRegular(location.to_string()));
        }
    }
    if path == base_dir {
        return Err(ExternalError::Invalid(location.to_string()));
    }
    Ok(path)
}

#[cfg(unix)]
fn open_no_follow(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    // O_NOFOLLOW closes the window between the symlink checks and the open; O_NONBLOCK keeps a
    // FIFO swapped in at that moment from blocking the open (it is then refused as not regular).
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_no_follow(path: &Path) -> std::io::Result<File> {
    File::open(path)
}

/// The number of hard links to a file: more than one, and another name of the file may lie
/// outside the directory being read.
#[cfg(unix)]
pub(crate) fn hard_links(meta: &std::fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    meta.nlink()
}

/// The number of hard links to a file (taken as 1 where the platform does not say).
#[cfg(not(unix))]
pub(crate) fn hard_links(_meta: &std::fs::Metadata) -> u64 {
    1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(pairs: &[(&str, &str)]) -> Vec<StringStringEntryProto> {
        pairs
            .iter()
            .map(|(k, v)| StringStringEntryProto {
                key: k.to_string(),
                value: v.to_string(),
            })
            .collect()
    }

    #[test]
    fn lexical_escapes_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        for (loc, want) in [
            ("/etc/passwd", "relative"),
            ("../x", "outside"),
            ("d/../../x", "outside"),
            ("a\\..\\..\\x", "outside"),
            ("C:x", "relative"),
            ("a\0b", "valid"),
            ("", "valid"),
        ] {
            let e = read(&entries(&[("location", loc)]), dir.path(), 4)
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{loc:?}: {e}");
        }
    }

    #[test]
    fn reads_the_exact_range_and_checks_it_against_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("w.bin"), [1u8, 2, 3, 4, 5, 6, 7, 8]).unwrap();
        let got = read(
            &entries(&[("location", "w.bin"), ("offset", "4"), ("length", "4")]),
            dir.path(),
            4,
        )
        .unwrap();
        assert_eq!(got, vec![5, 6, 7, 8]);
        let e = read(
            &entries(&[("location", "w.bin"), ("offset", "6"), ("length", "4")]),
            dir.path(),
            4,
        );
        assert!(matches!(e, Err(ExternalError::PastEnd { .. })));
        let e = read(
            &entries(&[("location", "w.bin"), ("length", "18446744073709551615")]),
            dir.path(),
            4,
        );
        assert!(matches!(e, Err(ExternalError::PastEnd { .. })));
        let e = read(&entries(&[("location", "w.bin")]), dir.path(), 4);
        assert!(matches!(
            e,
            Err(ExternalError::Size {
                needed: 4,
                actual: 8,
                ..
            })
        ));
        let e = read(
            &entries(&[("location", "w.bin"), ("offset", "-1")]),
            dir.path(),
            4,
        );
        assert!(matches!(e, Err(ExternalError::BadNumber { .. })));
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_and_hard_links_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), [0u8; 4]).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), dir.path().join("link")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("real"), [0u8; 4]).unwrap();
        std::fs::hard_link(dir.path().join("real"), dir.path().join("twin")).unwrap();
        let e = read(&entries(&[("location", "link")]), dir.path(), 4);
        assert!(matches!(e, Err(ExternalError::Symlink { .. })), "{e:?}");
        let e = read(&entries(&[("location", "sub/secret")]), dir.path(), 4);
        assert!(matches!(e, Err(ExternalError::Symlink { .. })), "{e:?}");
        let e = read(&entries(&[("location", "twin")]), dir.path(), 4);
        assert!(matches!(e, Err(ExternalError::HardLink(_, 2))), "{e:?}");
    }

    #[test]
    fn directories_are_not_data() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("d")).unwrap();
        let e = read(&entries(&[("location", "d")]), dir.path(), 4);
        assert!(matches!(e, Err(ExternalError::NotRegular(_))), "{e:?}");
        let e = read(&entries(&[("location", ".")]), dir.path(), 4);
        assert!(e.is_err());
    }
}
