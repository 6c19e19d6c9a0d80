//! Discovery: finds case directories (those holding `model.onnx`) under the given paths, and each
//! case's `test_data_set_N` folders in numeric order.
//!
//! The walk never follows symbolic links, so it cannot leave the given trees or loop.

use std::path::{Path, PathBuf};
use thiserror::Error;
use walkdir::WalkDir;

/// One test case: a directory with `model.onnx`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    /// The case's name: its path relative to the argument it was found under (the directory's own
    /// name when the argument is the case itself), with `/` separators.
    pub name: String,
    /// The case directory.
    pub dir: PathBuf,
    /// The case directory relative to the argument it was found under (empty when the argument
    /// is the case itself).
    pub rel: PathBuf,
    /// Its data sets, in numeric order.
    pub data_sets: Vec<DataSet>,
}

/// One `test_data_set_N` folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataSet {
    /// `test_data_set_N`.
    pub name: String,
    /// Its directory.
    pub dir: PathBuf,
}

/// A path given on the command line could not be used.
#[derive(Debug, Error)]
pub enum DiscoverError {
    /// The path does not exist or cannot be read.
    #[error("cannot read {path}: {source}")]
    Unreadable {
        /// The path.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The path is neither a directory nor a case's `model.onnx`.
    #[error("{0} is not a directory")]
    NotADirectory(String),
}

/// What discovery found, and what it had to pass over.
#[derive(Debug, Default)]
pub struct Discovery {
    /// The cases, sorted by path.
    pub cases: Vec<Case>,
    /// Directories or entries that could not be read (the walk went on without them).
    pub warnings: Vec<String>,
    /// Symbolic links to directories the walk passed over (it never follows one), so that
    /// finding no case can say why a tree of links looked empty.
    pub symlinks_not_followed: usize,
}

/// Walks `roots` and returns every case below them, sorted by directory path. A root that names a
/// `model.onnx` stands for its directory.
pub fn discover(roots: &[PathBuf]) -> Result<Discovery, DiscoverError> {
    let mut found = Discovery::default();
    for given in roots {
        let meta = std::fs::metadata(given).map_err(|source| DiscoverError::Unreadable {
            path: given.display().to_string(),
            source,
        })?;
        // A case's own `model.onnx` given as PATH (tab completion stops there) means the case:
        // its directory becomes the root, so the case is named and mapped (`--actual`,
        // `--pending`) exactly as when that directory is given.
        let root = match model_dir(given) {
            Some(dir) if meta.is_file() => dir,
            _ if !meta.is_dir() => {
                return Err(DiscoverError::NotADirectory(given.display().to_string()))
            }
            _ => given.clone(),
        };
        let root = &root;
        for entry in WalkDir::new(root).follow_links(false).sort_by_file_name() {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    found
                        .warnings
                        .push(format!("skipped unreadable entry: {e}"));
                    continue;
                }
            };
            if entry.file_type().is_symlink() && entry.path().is_dir() {
                found.symlinks_not_followed += 1;
                continue;
            }
            if !is_model_file(entry.file_name()) || entry.file_type().is_dir() {
                continue;
            }
            let Some(dir) = entry.path().parent() else {
                continue;
            };
            let name = case_name(root, dir);
            let rel = dir
                .strip_prefix(root)
                .unwrap_or(Path::new(""))
                .to_path_buf();
            let data_sets = data_sets(dir, &mut found.warnings);
            found.cases.push(Case {
                name,
                dir: dir.to_path_buf(),
                rel,
                data_sets,
            });
        }
    }
    found.cases.sort_by(|a, b| a.dir.cmp(&b.dir));
    found.cases.dedup_by(|a, b| a.dir == b.dir);
    Ok(found)
}

/// Whether a file name is a case's model: `model.onnx`, or an OpenVINO IR's `model.xml`. A
/// directory holding both is one case (dedup by directory), read as ONNX.
fn is_model_file(name: &std::ffi::OsStr) -> bool {
    name == "model.onnx" || name == crate::load::ir::XML_FILE
}

/// The directory of `path` when `path` names a `model.onnx` or `model.xml` (`.` for a bare
/// file name).
fn model_dir(path: &Path) -> Option<PathBuf> {
    if !is_model_file(path.file_name()?) {
        return None;
    }
    match path.parent()? {
        p if p.as_os_str().is_empty() => Some(PathBuf::from(".")),
        p => Some(p.to_path_buf()),
    }
}

fn case_name(root: &Path, dir: &Path) -> String {
    let rel = dir.strip_prefix(root).unwrap_or(dir);
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.is_empty() {
        // The root is the case itself: name it by its own directory name.
        let canonical = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        canonical.file_name().map_or_else(
            || dir.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    } else {
        parts.join("/")
    }
}

/// Finds where a case's data comes from: the first line of a `PROVENANCE` file (or
/// `PROVENANCE.md` / `PROVENANCE.txt`), else an "ONNX x.y.z" release named in a `README.md`,
/// looking in the case directory and then each parent up to the path the case was found under.
/// Results are cached per directory, since sibling cases share them.
#[derive(Debug, Default)]
pub struct Origins {
    cache: std::collections::HashMap<PathBuf, Option<String>>,
}

impl Origins {
    /// The origin of `case`, if its tree names one.
    pub fn of(&mut self, case: &Case) -> Option<String> {
        let depth = case.rel.components().count();
        let mut dir = case.dir.clone();
        for level in 0..=depth {
            if let Some(found) = self.in_dir(&dir) {
                return Some(found);
            }
            if level < depth && !dir.pop() {
                break;
            }
        }
        None
    }

    fn in_dir(&mut self, dir: &Path) -> Option<String> {
        if let Some(cached) = self.cache.get(dir) {
            return cached.clone();
        }
        let found = origin_in(dir);
        self.cache.insert(dir.to_path_buf(), found.clone());
        found
    }
}

fn origin_in(dir: &Path) -> Option<String> {
    // Small text files only: a hostile tree could hold anything under these names.
    let read = |name: &str| {
        let path = dir.join(name);
        let meta = std::fs::symlink_metadata(&path).ok()?;
        (meta.is_file() && meta.len() <= 1 << 20).then(|| std::fs::read_to_string(&path).ok())?
    };
    for name in ["PROVENANCE", "PROVENANCE.md", "PROVENANCE.txt"] {
        if let Some(text) = read(name) {
            let line = text
                .lines()
                .map(|l| l.trim_start_matches('#').trim())
                .find(|l| !l.is_empty())?;
            return Some(line.chars().take(200).collect());
        }
    }
    let readme = read("README.md")?;
    let re =
        regex::Regex::new(r"(?i)\bonnx\W{0,3}(?:version\s+|==\s*|v)?(\d+\.\d+(?:\.\d+)?)").ok()?;
    re.captures(&readme).map(|c| format!("ONNX {}", &c[1]))
}

/// `test_data_set_N` directories (not symlinks) of a case, ordered by N; a directory that cannot
/// be listed adds a warning.
pub fn data_sets(dir: &Path, warnings: &mut Vec<String>) -> Vec<DataSet> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            warnings.push(format!("cannot list {}: {e}", dir.display()));
            return Vec::new();
        }
    };
    let mut sets: Vec<(u64, DataSet)> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            let n = data_set_number(&name)?;
            Some((
                n,
                DataSet {
                    name,
                    dir: e.path(),
                },
            ))
        })
        .collect();
    sets.sort_by_key(|(n, _)| *n);
    sets.into_iter().map(|(_, d)| d).collect()
}

/// The `input_K.pb` / `output_K.pb` numbers present in a data set directory, each list sorted.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct TensorFiles {
    /// K of every `input_K.pb`.
    pub inputs: Vec<u64>,
    /// K of every `output_K.pb`.
    pub outputs: Vec<u64>,
}

impl DataSet {
    /// The tensor files of the data set (names that are not exactly `input_K.pb` or
    /// `output_K.pb` with K in decimal digits are not listed).
    pub fn tensor_files(&self) -> std::io::Result<TensorFiles> {
        let mut files = TensorFiles::default();
        for e in std::fs::read_dir(&self.dir)?.filter_map(Result::ok) {
            let Some(name) = e.file_name().to_str().map(str::to_string) else {
                continue;
            };
            let number = |prefix: &str| {
                let digits = name.strip_prefix(prefix)?.strip_suffix(".pb")?;
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                digits.parse::<u64>().ok()
            };
            if let Some(k) = number("input_") {
                files.inputs.push(k);
            } else if let Some(k) = number("output_") {
                files.outputs.push(k);
            }
        }
        files.inputs.sort_unstable();
        files.outputs.sort_unstable();
        Ok(files)
    }
}

/// N of `test_data_set_N`.
fn data_set_number(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("test_data_set_")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_cases_sorted_with_data_sets_in_numeric_order() {
        let root = tempfile::tempdir().unwrap();
        for case in ["b", "a/x"] {
            let dir = root.path().join(case);
            for ds in [
                "test_data_set_10",
                "test_data_set_2",
                "test_data_set_x",
                "other",
            ] {
                std::fs::create_dir_all(dir.join(ds)).unwrap();
            }
            std::fs::write(dir.join("model.onnx"), b"").unwrap();
        }
        let found = discover(&[root.path().to_path_buf()]).unwrap();
        let names: Vec<&str> = found.cases.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, vec!["a/x", "b"]);
        let sets: Vec<&str> = found.cases[0]
            .data_sets
            .iter()
            .map(|d| d.name.as_str())
            .collect();
        assert_eq!(sets, vec!["test_data_set_2", "test_data_set_10"]);
    }

    #[test]
    fn a_case_given_directly_is_named_after_its_directory() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("test_gather_0");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("model.onnx"), b"").unwrap();
        let found = discover(std::slice::from_ref(&dir)).unwrap();
        assert_eq!(found.cases[0].name, "test_gather_0");
        // Its model.onnx given instead is the same case, named and placed alike.
        let by_model = discover(&[dir.join("model.onnx")]).unwrap();
        assert_eq!(by_model.cases, found.cases);
        // Any other file is no case.
        std::fs::write(dir.join("notes.txt"), b"").unwrap();
        assert!(matches!(
            discover(&[dir.join("notes.txt")]),
            Err(DiscoverError::NotADirectory(_))
        ));
    }

    #[test]
    fn origins_come_from_provenance_files_or_readmes_up_the_tree() {
        let root = tempfile::tempdir().unwrap();
        for case in ["node/a", "mine/b"] {
            std::fs::create_dir_all(root.path().join(case)).unwrap();
            std::fs::write(root.path().join(case).join("model.onnx"), b"").unwrap();
        }
        std::fs::write(
            root.path().join("node/README.md"),
            "Exported from the `onnx` 1.23.2 package.\nONNX **1.23.2**",
        )
        .unwrap();
        std::fs::write(
            root.path().join("mine/PROVENANCE"),
            "\n# hand-written by the runtime team\n",
        )
        .unwrap();
        let found = discover(&[root.path().to_path_buf()]).unwrap();
        let mut origins = Origins::default();
        let got: Vec<Option<String>> = found.cases.iter().map(|c| origins.of(c)).collect();
        assert_eq!(
            got,
            vec![
                Some("hand-written by the runtime team".into()),
                Some("ONNX 1.23.2".into())
            ]
        );
    }

    #[test]
    fn missing_paths_are_errors() {
        assert!(discover(&[PathBuf::from("/nonexistent/onnx-idx-check")]).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn symlinked_directories_are_not_followed() {
        let root = tempfile::tempdir().unwrap();
        let real = root.path().join("real");
        std::fs::create_dir_all(&real).unwrap();
        std::fs::write(real.join("model.onnx"), b"").unwrap();
        std::os::unix::fs::symlink(&real, root.path().join("link")).unwrap();
        std::os::unix::fs::symlink(root.path(), real.join("loop")).unwrap();
        let found = discover(&[root.path().to_path_buf()]).unwrap();
        assert_eq!(found.cases.len(), 1);
        assert_eq!(found.cases[0].name, "real");
        // `link` and `loop`, counted for the message when no case is found.
        assert_eq!(found.symlinks_not_followed, 2);
    }

    #[test]
    fn model_dir_takes_the_parent_of_a_model_onnx_only() {
        assert_eq!(
            model_dir(Path::new("cases/x/model.onnx")),
            Some(PathBuf::from("cases/x"))
        );
        assert_eq!(model_dir(Path::new("model.onnx")), Some(PathBuf::from(".")));
        assert_eq!(model_dir(Path::new("cases/x/other.onnx")), None);
        assert_eq!(model_dir(Path::new("cases/x")), None);
    }
}
