//! Replacing a file without ever leaving it half-written: every file the tool rewrites (the
//! expectations file, accepted outputs, pending snapshots, the last-run record, reports, a hunt's
//! lists, a minimization's report) goes through [`write_atomic`].

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use thiserror::Error;

/// A file that could not be written; the old one, if any, is untouched.
#[derive(Debug, Error)]
#[error("{}: {source}", path.display())]
pub struct WriteError {
    /// The file that failed: the temporary file, or the target for the rename.
    pub path: PathBuf,
    /// Why.
    #[source]
    pub source: std::io::Error,
}

/// Writes `dir/name` through a fresh temporary file in `dir` (created exclusively, so never
/// through a symbolic link) renamed over it: readers see the old file or the new one, and a
/// symbolic link at `dir/name` is replaced rather than followed. On any error (a full disk, a
/// file size limit) the temporary file is removed and the old file is left whole.
pub fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), WriteError> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| WriteError { path, source }
    };
    let target = dir.join(name);
    let (tmp, mut file) = loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}.{}-{n}.tmp", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(f) => break (tmp, f),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(err(&tmp)(e)),
        }
    };
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(err(&tmp))
        .and_then(|()| {
            drop(file);
            std::fs::rename(&tmp, &target).map_err(err(&target))
        });
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// [`write_atomic`] for a path: its directory (`.` for a bare file name) and file name.
pub(crate) fn write_file_atomic(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let Some(name) = path.file_name() else {
        return Err(WriteError {
            path: path.to_path_buf(),
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "not a file name (it ends in '..' or '/')",
            ),
        });
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    write_atomic(dir, &name.to_string_lossy(), bytes)
}

/// Replaces a file the user named (an expectations file, `--output`, `--report`): atomically
/// through [`write_atomic`] beside the file a symbolic link points to (the link is kept), with
/// the old file's permissions; a target that is not a regular file (`/dev/stdout`, a FIFO) is
/// written through, since it cannot be replaced.
pub(crate) fn write_user_file(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let err = |source| WriteError {
        path: path.to_path_buf(),
        source,
    };
    let (real, perms) = match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => return std::fs::write(path, bytes).map_err(err),
        Ok(m) => (
            std::fs::canonicalize(path).map_err(err)?,
            Some(m.permissions()),
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (path.to_path_buf(), None),
        Err(e) => return Err(err(e)),
    };
    write_file_atomic(&real, bytes)?;
    if let Some(perms) = perms {
        // The rename already made the new contents visible; a mode that cannot be restored is
        // not worth failing for.
        let _ = std::fs::set_permissions(&real, perms);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rewrite_replaces_the_file_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.toml");
        std::fs::write(&file, "old").unwrap();
        write_file_atomic(&file, b"new contents").unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), b"new contents");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn a_failed_rename_keeps_the_old_file_and_removes_the_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        // A non-empty directory at the target: rename(2) cannot replace it.
        std::fs::create_dir(dir.path().join("t")).unwrap();
        std::fs::write(dir.path().join("t/keep"), "x").unwrap();
        let e = write_atomic(dir.path(), "t", b"new").unwrap_err();
        assert_eq!(e.path, dir.path().join("t"));
        assert_eq!(std::fs::read(dir.path().join("t/keep")).unwrap(), b"x");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[cfg(unix)]
    #[test]
    fn a_user_file_behind_a_link_is_replaced_there_and_keeps_its_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.toml");
        std::fs::write(&real, "old").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
        let link = dir.path().join("link.toml");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_user_file(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
        let mode = std::fs::metadata(&real).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
    }

    #[test]
    fn a_path_without_a_file_name_is_refused() {
        let e = write_file_atomic(Path::new("/"), b"x").unwrap_err();
        assert_eq!(e.source.kind(), std::io::ErrorKind::InvalidInput);
    }
}
