//! Pending snapshots: the results of our kernels written beside the test tree (`run --pending DIR`)
//! where an expected output failed or was missing, for `review` to accept or reject.
//!
//! Layout: `DIR/<case name>/test_data_set_N/output_K.pb.new` (a `TensorProto` file),
//! `output_K.pb.diff` beside it (text for people) and `output_K.pb.sources`: the sha256 of every
//! file the result may depend on (every file of the case's tree, external data in subdirectories
//! included, but the other data sets, the data set's expected outputs and snapshot files: see
//! [`Sources::of`]), one `HEX  PATH` line each as `sha256sum` writes
//! them, so that `review` refuses a snapshot whose case changed since (a stale snapshot would
//! write an old result as the expected output). `<case name>` is [`Case::name`], so its `/`
//! separators become directories.
//!
//! Names that could leave DIR (absolute, `..`, empty components) are refused, existing directories
//! on the way must be real directories (not symbolic links), files are written through a temporary
//! file and a rename, and [`find`] never follows symbolic links.
//!
//! [`Case::name`]: crate::discover::Case::name

use crate::load::save::encode_tensor;
use crate::tensor::{value, Tensor};
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};
use thiserror::Error;
use walkdir::WalkDir;

/// One pending snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pending {
    /// The case's name ([`Case::name`](crate::discover::Case::name)), `/`-separated.
    pub case: String,
    /// `test_data_set_N`.
    pub data_set: String,
    /// K of `output_K.pb`.
    pub output: usize,
    /// `DIR/<case>/<data set>/output_K.pb.new`.
    pub new_file: PathBuf,
    /// `DIR/<case>/<data set>/output_K.pb.diff` (it may be missing).
    pub diff_file: PathBuf,
    /// `DIR/<case>/<data set>/output_K.pb.sources` (missing from a snapshot of an older version).
    pub sources_file: PathBuf,
}

/// Why pending snapshots could not be written or listed.
#[derive(Debug, Error)]
pub enum PendingError {
    /// A case or data set name that would escape DIR or is not a valid name there.
    #[error("refusing {what} name '{name}': {why}")]
    BadName {
        /// "case" or "data set".
        what: &'static str,
        /// The name, escaped for display.
        name: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// A path on the way is a symbolic link or a file where a directory must be.
    #[error("{0}: not a directory (symbolic links are not followed)")]
    NotADirectory(String),
    /// DIR does not exist.
    #[error("pending directory {0} does not exist (nothing pending?)")]
    Missing(String),
    /// A file or directory could not be read, created or written.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> PendingError + '_ {
    move |source| PendingError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// What [`write()`] writes for one output.
#[derive(Clone, Copy, Debug)]
pub struct Snapshot<'a> {
    /// Our result.
    pub tensor: &'a Tensor,
    /// The graph output's name, which the `TensorProto` carries.
    pub output_name: &'a str,
    /// The `.diff` text.
    pub diff: &'a str,
    /// What the result was computed from.
    pub sources: &'a Sources,
}

/// Writes `DIR/<case>/<data_set>/output_K.pb.new` (the tensor encoded as a `TensorProto` named
/// `output_name`), the `.diff` text and the `.sources` digests beside it, creating the directories; returns the `.new`
/// file's path. Refuses case names and data set names that would escape DIR (absolute, `..`, `.`,
/// empty components) and data set names other than `test_data_set_N`; refuses to go through a
/// symbolic link on the way. The files replace earlier ones atomically. Runs may share DIR: a
/// directory removed by another run while this one writes is made again.
pub fn write(
    dir: &Path,
    case: &str,
    data_set: &str,
    output: usize,
    snapshot: &Snapshot<'_>,
) -> Result<PathBuf, PendingError> {
    let Snapshot {
        tensor,
        output_name,
        diff,
        sources,
    } = *snapshot;
    let components = case_components(case)?;
    check_data_set(data_set)?;
    let diff_name = format!("output_{output}.pb.diff");
    let sources_name = format!("output_{output}.pb.sources");
    let new_name = format!("output_{output}.pb.new");
    let attempt = || {
        std::fs::create_dir_all(dir).map_err(io_error(dir))?;
        let mut at = dir.to_path_buf();
        for c in components.iter().copied().chain([data_set]) {
            at.push(c);
            ensure_real_dir(&at)?;
        }
        // The diff first: an interrupted write leaves at worst a `.diff` that `find` ignores.
        write_atomic(&at, &diff_name, diff.as_bytes())?;
        write_atomic(&at, &sources_name, sources.render().as_bytes())?;
        write_atomic(&at, &new_name, &encode_tensor(tensor, output_name))?;
        Ok(at.join(&new_name))
    };
    // Another run sharing DIR may remove a directory it finds empty between our mkdir and our
    // first write into it: make the directories again (a few times; each loss needs that
    // other run to win a narrow race again).
    let mut tries = 0;
    loop {
        match attempt() {
            Err(PendingError::Io { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound && tries < VANISHED_RETRIES =>
            {
                tries += 1;
            }
            done => return done,
        }
    }
}

/// How often [`write`] makes its directories again when one vanished under it.
const VANISHED_RETRIES: u32 = 16;

/// Every pending snapshot under DIR (every regular `output_K.pb.new` in a `test_data_set_N`
/// directory below a case directory), sorted by case, data set number and output; symbolic links
/// are never followed (nor listed). A missing DIR is an error.
pub fn find(dir: &Path) -> Result<Vec<Pending>, PendingError> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(PendingError::NotADirectory(dir.display().to_string())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(PendingError::Missing(dir.display().to_string()))
        }
        Err(e) => return Err(io_error(dir)(e)),
    }
    let mut found: Vec<(u64, Pending)> = Vec::new();
    for entry in WalkDir::new(dir).follow_links(false).sort_by_file_name() {
        let entry = entry.map_err(|e| {
            let path = e
                .path()
                .map_or_else(|| dir.display().to_string(), |p| p.display().to_string());
            PendingError::Io {
                path,
                source: e.into(),
            }
        })?;
        if !entry.file_type().is_file() {
            continue;
        }
        let Some(output) = entry
            .file_name()
            .to_str()
            .and_then(|n| number(n, "output_", ".pb.new"))
            .and_then(|k| usize::try_from(k).ok())
        else {
            continue;
        };
        let path = entry.path();
        let Some(ds_dir) = path.parent() else {
            continue;
        };
        let Some(ds_number) = ds_dir
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(data_set_number)
        else {
            continue;
        };
        let Some(rel) = ds_dir.parent().and_then(|p| p.strip_prefix(dir).ok()) else {
            continue;
        };
        let parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts.is_empty() {
            continue;
        }
        found.push((
            ds_number,
            Pending {
                case: parts.join("/"),
                data_set: format!("test_data_set_{ds_number}"),
                output,
                new_file: path.to_path_buf(),
                diff_file: ds_dir.join(format!("output_{output}.pb.diff")),
                sources_file: ds_dir.join(format!("output_{output}.pb.sources")),
            },
        ));
    }
    found.sort_by(|(na, a), (nb, b)| (&a.case, na, a.output).cmp(&(&b.case, nb, b.output)));
    Ok(found.into_iter().map(|(_, p)| p).collect())
}

/// The files a data set's result is computed from, with their sha256: every regular file at the
/// top of the case directory (the model and its external data) and the data set's `input_K.pb`
/// files, by path relative to the case directory (`/`-separated), sorted. Symbolic links are
/// neither followed nor listed, as in discovery.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sources(Vec<(String, String)>);

/// A `.sources` file larger than this is not one this tool wrote.
const SOURCES_LIMIT: u64 = 1 << 20;

impl Sources {
    /// Hashes the sources of data set `data_set` of the case in `case_dir` as they are now:
    /// every regular file of the case's tree (the model and its external data, wherever they
    /// are) except the other `test_data_set_*` directories, and in `data_set` every file but its
    /// expected outputs `output_K.pb` (what `review` replaces) and pending snapshot files (so an
    /// input's external data counts). Symbolic links are not followed, so nothing outside the case
    /// is read.
    pub fn of(case_dir: &Path, data_set: &str) -> Result<Sources, PendingError> {
        let mut found = Vec::new();
        let walk = WalkDir::new(case_dir)
            .min_depth(1)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|e| {
                let name = e.file_name().to_string_lossy();
                !(e.depth() == 1
                    && e.file_type().is_dir()
                    && name.starts_with("test_data_set_")
                    && name != data_set)
            });
        for e in walk {
            let e = e.map_err(|e| {
                let path = e.path().unwrap_or(case_dir).to_path_buf();
                io_error(&path)(e.into())
            })?;
            if !e.file_type().is_file() {
                continue;
            }
            let rel = e.path().strip_prefix(case_dir).unwrap_or(e.path());
            let rel: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            let name = rel.last().map_or("", String::as_str);
            let in_data_set = rel.len() == 2 && rel[0] == data_set;
            let snapshot = [".pb.new", ".pb.diff", ".pb.sources"]
                .iter()
                .any(|x| name.ends_with(x));
            if snapshot || (in_data_set && number(name, "output_", ".pb").is_some()) {
                continue;
            }
            let sha = crate::load::sha256_file_hex(e.path()).map_err(io_error(e.path()))?;
            found.push((rel.join("/"), sha));
        }
        found.sort();
        Ok(Sources(found))
    }

    /// The `sha256sum` text: `HEX  PATH` per line (a path holding a newline or a backslash is
    /// escaped and its line starts with `\`, as `sha256sum` does).
    pub fn render(&self) -> String {
        let mut s = String::new();
        for (path, hex) in &self.0 {
            if path.contains(['\\', '\n', '\r']) {
                let escaped = path
                    .replace('\\', "\\\\")
                    .replace('\n', "\\n")
                    .replace('\r', "\\r");
                let _ = writeln!(s, "\\{hex}  {escaped}");
            } else {
                let _ = writeln!(s, "{hex}  {path}");
            }
        }
        s
    }

    /// Reads a `.sources` file; `None` when it is missing, too large or not in the format
    /// [`Sources::render`] writes.
    pub fn read(file: &Path) -> Option<Sources> {
        let text = crate::load::read_file(file, "", SOURCES_LIMIT).ok()?;
        let text = String::from_utf8(text).ok()?;
        let mut found = Vec::new();
        for line in text.lines() {
            let (escaped, line) = match line.strip_prefix('\\') {
                Some(rest) => (true, rest),
                None => (false, line),
            };
            let (hex, path) = line.split_once("  ")?;
            if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            let path = if escaped {
                unescape(path)?
            } else {
                path.to_string()
            };
            found.push((path, hex.to_string()));
        }
        Some(Sources(found))
    }

    /// What differs from `now` (this being the record): each file changed, added or removed.
    pub fn changes(&self, now: &Sources) -> Vec<String> {
        let mut out = Vec::new();
        for (path, hex) in &self.0 {
            match now.0.iter().find(|(p, _)| p == path) {
                Some((_, h)) if h == hex => {}
                Some(_) => out.push(format!("{path} changed")),
                None => out.push(format!("{path} was removed")),
            }
        }
        for (path, _) in &now.0 {
            if !self.0.iter().any(|(p, _)| p == path) {
                out.push(format!("{path} was added"));
            }
        }
        out
    }
}

/// Undoes `sha256sum`'s escaping of a file name.
fn unescape(s: &str) -> Option<String> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        out.push(match chars.next()? {
            '\\' => '\\',
            'n' => '\n',
            'r' => '\r',
            _ => return None,
        });
    }
    Some(out)
}

/// Removes the snapshot of output `k` of a data set, if there is one (its output passes now, so
/// the snapshot is stale), with the directories this leaves empty. Names that could leave DIR are
/// ignored: nothing was written for them.
pub fn remove(dir: &Path, case: &str, data_set: &str, output: usize) -> Result<(), PendingError> {
    let (Ok(components), Ok(())) = (case_components(case), check_data_set(data_set)) else {
        return Ok(());
    };
    let mut at = dir.to_path_buf();
    for c in components.iter().copied().chain([data_set]) {
        at.push(c);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.is_dir() => {}
            _ => return Ok(()),
        }
    }
    for ext in ["new", "diff", "sources"] {
        let f = at.join(format!("output_{output}.pb.{ext}"));
        match std::fs::remove_file(&f) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_error(&f)(e)),
        }
    }
    remove_empty_dirs(dir, &at);
    Ok(())
}

/// Removes `from` and its parents while they are empty and inside `dir` (not `dir` itself). A
/// directory already gone (another run sharing DIR removed it) is passed over; one that is not
/// empty, or in use, ends the climb.
pub fn remove_empty_dirs(dir: &Path, from: &Path) {
    let mut at = from.to_path_buf();
    while at.starts_with(dir) && at != dir {
        match std::fs::remove_dir(&at) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(_) => break,
        }
        at.pop();
    }
}

/// At most this many values appear in a [`preview`].
pub const PREVIEW_VALUES: usize = 16;

/// A rendered value longer than this many characters is cut (long strings).
pub const PREVIEW_VALUE_CHARS: usize = 60;

/// A short text preview of a tensor: its dtype, shape and first values, for the diff of an output
/// that had no expected file. E.g. `float [3, 2], 6 values: 1.0, 1.2, 2.3, 3.4, 4.5, 5.7`, or
/// `int64 [100], 100 values, the first 16: 0, 1, ..., 15, ...`.
pub fn preview(t: &Tensor) -> String {
    let n = t.numel();
    let shape: Vec<String> = t.shape().iter().map(|d| d.to_string()).collect();
    let mut s = format!(
        "{} [{}], {n} value{}",
        t.dtype(),
        shape.join(", "),
        if n == 1 { "" } else { "s" }
    );
    if n == 0 {
        return s;
    }
    let shown = n.min(PREVIEW_VALUES);
    if shown < n {
        let _ = write!(s, ", the first {shown}");
    }
    s.push_str(": ");
    let values: Vec<String> = (0..shown).map(|i| short_value(t, i)).collect();
    s.push_str(&values.join(", "));
    if shown < n {
        s.push_str(", ...");
    }
    s
}

/// Element `i` of `t` rendered by [`value::display`], cut after [`PREVIEW_VALUE_CHARS`]
/// characters with `...` (long strings).
pub fn short_value(t: &Tensor, i: usize) -> String {
    let v = value::display(t, i);
    match v.char_indices().nth(PREVIEW_VALUE_CHARS) {
        Some((cut, _)) => format!("{}...", &v[..cut]),
        None => v,
    }
}

/// The components of a case name, each a plain name; anything that could leave DIR is refused.
fn case_components(case: &str) -> Result<Vec<&str>, PendingError> {
    let bad = |why| PendingError::BadName {
        what: "case",
        name: case.escape_debug().to_string(),
        why,
    };
    if case.is_empty() {
        return Err(bad("empty"));
    }
    let parts: Vec<&str> = case.split('/').collect();
    for p in &parts {
        check_component(p).map_err(bad)?;
    }
    Ok(parts)
}

/// A data set name must be one plain component, `test_data_set_N`.
fn check_data_set(data_set: &str) -> Result<(), PendingError> {
    let bad = |why| PendingError::BadName {
        what: "data set",
        name: data_set.escape_debug().to_string(),
        why,
    };
    check_component(data_set).map_err(bad)?;
    if data_set_number(data_set).is_none() {
        return Err(bad("not test_data_set_N"));
    }
    Ok(())
}

/// One path component that stays where it is put: not empty, `.`, `..`, a root or a drive.
fn check_component(p: &str) -> Result<(), &'static str> {
    if p.is_empty() {
        return Err("empty path component (absolute or doubled '/')");
    }
    if p == "." || p == ".." {
        return Err("'.' or '..' component");
    }
    if p.contains('\0') {
        return Err("NUL byte");
    }
    let mut comps = Path::new(p).components();
    match (comps.next(), comps.next()) {
        (Some(Component::Normal(c)), None) if c == p => Ok(()),
        _ => Err("not a plain file name"),
    }
}

/// N of `test_data_set_N`.
pub(crate) fn data_set_number(name: &str) -> Option<u64> {
    number(name, "test_data_set_", "")
}

/// The decimal number between `prefix` and `suffix`.
fn number(name: &str, prefix: &str, suffix: &str) -> Option<u64> {
    let digits = name.strip_prefix(prefix)?.strip_suffix(suffix)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Creates `path` as a directory unless it is one; a symbolic link or a file there is refused.
pub fn ensure_real_dir(path: &Path) -> Result<(), PendingError> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(PendingError::NotADirectory(path.display().to_string())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            match std::fs::create_dir(path) {
                Ok(()) => Ok(()),
                // Created meanwhile by someone else: check what it is.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    match std::fs::symlink_metadata(path) {
                        Ok(m) if m.is_dir() => Ok(()),
                        _ => Err(PendingError::NotADirectory(path.display().to_string())),
                    }
                }
                Err(e) => Err(io_error(path)(e)),
            }
        }
        Err(e) => Err(io_error(path)(e)),
    }
}

/// [`crate::fsutil::write_atomic`], its error a [`PendingError`].
pub fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), PendingError> {
    crate::fsutil::write_atomic(dir, name, bytes).map_err(|e| PendingError::Io {
        path: e.path.display().to_string(),
        source: e.source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`super::write`] with no sources recorded, as the tests of the layout need.
    fn write(
        dir: &Path,
        case: &str,
        data_set: &str,
        output: usize,
        tensor: &Tensor,
        output_name: &str,
        diff: &str,
    ) -> Result<PathBuf, PendingError> {
        let snapshot = Snapshot {
            tensor,
            output_name,
            diff,
            sources: &Sources::default(),
        };
        super::write(dir, case, data_set, output, &snapshot)
    }
    use crate::load::load_tensor_file;
    use crate::tensor::DType;

    fn floats(v: &[f32]) -> Tensor {
        Tensor::from_elems(
            DType::Float,
            vec![v.len()],
            v.iter().map(|f| f.to_bits()).collect(),
        )
        .unwrap()
    }

    #[test]
    fn write_then_find_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let t = floats(&[1.0, -0.0, 2.5]);
        let new = write(
            dir.path(),
            "onnx-node/test_gather_0",
            "test_data_set_10",
            1,
            &t,
            "y",
            "diff text\n",
        )
        .unwrap();
        assert_eq!(
            new,
            dir.path()
                .join("onnx-node/test_gather_0/test_data_set_10/output_1.pb.new")
        );
        write(dir.path(), "b", "test_data_set_2", 0, &t, "y", "d").unwrap();
        write(dir.path(), "b", "test_data_set_2", 10, &t, "y", "d").unwrap();
        write(dir.path(), "b", "test_data_set_2", 2, &t, "y", "d").unwrap();
        write(
            dir.path(),
            "onnx-node/test_gather_0",
            "test_data_set_9",
            0,
            &t,
            "y",
            "d",
        )
        .unwrap();
        let found = find(dir.path()).unwrap();
        let keys: Vec<(&str, &str, usize)> = found
            .iter()
            .map(|p| (p.case.as_str(), p.data_set.as_str(), p.output))
            .collect();
        assert_eq!(
            keys,
            vec![
                ("b", "test_data_set_2", 0),
                ("b", "test_data_set_2", 2),
                ("b", "test_data_set_2", 10),
                ("onnx-node/test_gather_0", "test_data_set_9", 0),
                ("onnx-node/test_gather_0", "test_data_set_10", 1),
            ]
        );
        let last = &found[4];
        assert_eq!(last.new_file, new);
        assert_eq!(
            std::fs::read_to_string(&last.diff_file).unwrap(),
            "diff text\n"
        );
        let (name, back) = load_tensor_file(&new, "new", 1 << 20).unwrap();
        assert_eq!(name, "y");
        assert_eq!(back, t);
        // Rewriting replaces, and leaves no temporary files behind.
        write(
            dir.path(),
            "b",
            "test_data_set_2",
            0,
            &floats(&[7.0]),
            "y",
            "e",
        )
        .unwrap();
        let b = dir.path().join("b/test_data_set_2");
        let (_, back) = load_tensor_file(&b.join("output_0.pb.new"), "new", 1 << 20).unwrap();
        assert_eq!(back, floats(&[7.0]));
        let names: Vec<String> = std::fs::read_dir(&b)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(names.is_empty(), "{names:?}");
    }

    #[test]
    fn names_that_escape_are_refused() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("pending");
        let t = floats(&[1.0]);
        for case in [
            "",
            "/etc",
            "../x",
            "a/../../x",
            "a/./b",
            "a//b",
            "a/",
            ".",
            "..",
            "a\0b",
        ] {
            let r = write(&dir, case, "test_data_set_0", 0, &t, "y", "");
            assert!(
                matches!(r, Err(PendingError::BadName { what: "case", .. })),
                "{case:?}: {r:?}"
            );
        }
        for ds in [
            "..",
            "/tmp",
            "a/b",
            "",
            "test_data_set_",
            "test_data_set_x",
            "other",
        ] {
            let r = write(&dir, "c", ds, 0, &t, "y", "");
            assert!(
                matches!(
                    r,
                    Err(PendingError::BadName {
                        what: "data set",
                        ..
                    })
                ),
                "{ds:?}: {r:?}"
            );
        }
        // Names are checked before anything is created.
        assert!(!dir.exists());
        assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), 0);
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_are_neither_written_through_nor_found() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("pending");
        let outside = root.path().join("outside");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir_all(outside.join("test_data_set_0")).unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("link")).unwrap();
        let t = floats(&[1.0]);
        let r = write(&dir, "link", "test_data_set_0", 0, &t, "y", "");
        assert!(matches!(r, Err(PendingError::NotADirectory(_))), "{r:?}");
        assert!(!outside.join("test_data_set_0/output_0.pb.new").exists());
        // A snapshot reachable only through the link is not listed.
        std::fs::write(outside.join("test_data_set_0/output_0.pb.new"), b"x").unwrap();
        // Nor is a symlinked .new file.
        std::fs::create_dir_all(dir.join("c/test_data_set_0")).unwrap();
        std::os::unix::fs::symlink(
            outside.join("test_data_set_0/output_0.pb.new"),
            dir.join("c/test_data_set_0/output_0.pb.new"),
        )
        .unwrap();
        assert!(find(&dir).unwrap().is_empty());
    }

    #[test]
    fn find_ignores_other_files_and_needs_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        for f in [
            "c/test_data_set_0/output_0.pb.diff",
            "c/test_data_set_0/output_x.pb.new",
            "c/test_data_set_0/input_0.pb.new",
            "c/other/output_0.pb.new",
            "test_data_set_0/output_0.pb.new",
        ] {
            let p = dir.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, b"x").unwrap();
        }
        assert!(find(dir.path()).unwrap().is_empty());
        assert!(matches!(
            find(&dir.path().join("nope")),
            Err(PendingError::Missing(_))
        ));
    }

    #[test]
    fn preview_shows_dtype_shape_and_the_first_values() {
        let t = floats(&[1.0, -0.0, f32::NAN]);
        assert_eq!(preview(&t), "float [3], 3 values: 1.0, -0.0, NaN");
        let t = Tensor::from_elems(DType::Int64, vec![4, 5], (0..20u64).collect()).unwrap();
        assert_eq!(
            preview(&t),
            "int64 [4, 5], 20 values, the first 16: 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, ..."
        );
        let t = Tensor::from_elems(DType::Int64, vec![], vec![7u64]).unwrap();
        assert_eq!(preview(&t), "int64 [], 1 value: 7");
        let t = Tensor::from_elems(DType::Bool, vec![0, 3], Vec::<u8>::new()).unwrap();
        assert_eq!(preview(&t), "bool [0, 3], 0 values");
        let t = Tensor::from_elems(DType::String, vec![1], vec![vec![b'a'; 500]]).unwrap();
        let p = preview(&t);
        assert!(p.len() < 100 && p.ends_with("..."), "{p}");
    }

    #[test]
    fn sources_round_trip_in_sha256sum_format_with_escaped_names() {
        let hex = |c: char| c.to_string().repeat(64);
        let sources = Sources(vec![
            ("a\\b".to_string(), hex('1')),
            ("line\nbreak".to_string(), hex('2')),
            ("model.onnx".to_string(), hex('3')),
        ]);
        let text = sources.render();
        // As `sha256sum` writes such names: a leading backslash, then the escaped name.
        assert_eq!(
            text,
            format!(
                "\\{}  a\\\\b\n\\{}  line\\nbreak\n{}  model.onnx\n",
                hex('1'),
                hex('2'),
                hex('3')
            )
        );
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("output_0.pb.sources");
        std::fs::write(&file, &text).unwrap();
        assert_eq!(Sources::read(&file), Some(sources));
        for bad in ["xyz  model.onnx\n", "no separator\n", "\\0000  a\\qb\n"] {
            std::fs::write(&file, bad).unwrap();
            assert_eq!(Sources::read(&file), None, "{bad:?}");
        }
        assert_eq!(Sources::read(&dir.path().join("missing")), None);
    }

    #[test]
    fn sources_list_the_case_s_files_but_other_data_sets_and_outputs_and_see_every_change() {
        let dir = tempfile::tempdir().unwrap();
        let case = dir.path();
        for d in ["test_data_set_0", "test_data_set_1", "w"] {
            std::fs::create_dir_all(case.join(d)).unwrap();
        }
        for f in [
            "model.onnx",
            "weights.bin",
            "w/idx.bin",
            "test_data_set_0/input_0.pb",
            "test_data_set_0/input_0.bin",
            "test_data_set_0/output_0.pb",
            "test_data_set_0/output_0.pb.new",
            "test_data_set_1/input_0.pb",
        ] {
            std::fs::write(case.join(f), f.as_bytes()).unwrap();
        }
        let before = Sources::of(case, "test_data_set_0").unwrap();
        let names: Vec<&str> = before.0.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "model.onnx",
                "test_data_set_0/input_0.bin",
                "test_data_set_0/input_0.pb",
                "w/idx.bin",
                "weights.bin"
            ]
        );
        // sha256("model.onnx"), from `printf model.onnx | sha256sum`.
        assert_eq!(
            before.0[0].1,
            "d7c4b743081e6ccdf263598ab3a94f5df38c9f2aec014973c0806819d7762f26"
        );
        // Expected outputs, snapshots and other data sets are not sources.
        std::fs::write(case.join("test_data_set_0/output_0.pb"), b"x").unwrap();
        std::fs::write(case.join("test_data_set_0/output_0.pb.new"), b"x").unwrap();
        std::fs::write(case.join("test_data_set_1/input_0.pb"), b"x").unwrap();
        assert!(before
            .changes(&Sources::of(case, "test_data_set_0").unwrap())
            .is_empty());
        std::fs::write(case.join("weights.bin"), b"x").unwrap();
        std::fs::write(case.join("w/idx.bin"), b"x").unwrap();
        std::fs::write(case.join("test_data_set_0/input_0.bin"), b"x").unwrap();
        std::fs::remove_file(case.join("test_data_set_0/input_0.pb")).unwrap();
        std::fs::write(case.join("test_data_set_0/input_1.pb"), b"x").unwrap();
        assert_eq!(
            before.changes(&Sources::of(case, "test_data_set_0").unwrap()),
            [
                "test_data_set_0/input_0.bin changed",
                "test_data_set_0/input_0.pb was removed",
                "w/idx.bin changed",
                "weights.bin changed",
                "test_data_set_0/input_1.pb was added"
            ]
        );
    }

    /// Adversary D14: another run sharing DIR removes the directories it finds empty while this
    /// one writes; every snapshot must still be written.
    #[test]
    fn a_directory_removed_by_another_run_meanwhile_is_made_again() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let remover = {
            let (root, done) = (root.clone(), done.clone());
            // Like another run, which removes a directory it finds empty once per case it judged,
            // it removes each case's directories a bounded number of times (4, below the retries),
            // so the test measures the retry and not a remover that can always win the race.
            std::thread::spawn(move || {
                let mut removals = [0u32; 200];
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    for (k, n) in removals.iter_mut().enumerate() {
                        let ds = root.join(format!("case_{k}/test_data_set_0"));
                        if *n < 4 && ds.is_dir() {
                            *n += 1;
                            remove_empty_dirs(&root, &ds);
                        }
                    }
                }
            })
        };
        let t = floats(&[1.0]);
        let written: Vec<_> = (0..200)
            .map(|k| {
                write(
                    &root,
                    &format!("case_{k}"),
                    "test_data_set_0",
                    0,
                    &t,
                    "y",
                    "d",
                )
            })
            .collect();
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        remover.join().unwrap();
        for (k, w) in written.iter().enumerate() {
            let path = w.as_ref().unwrap_or_else(|e| panic!("case_{k}: {e}"));
            assert!(path.is_file(), "{}", path.display());
        }
    }
}
