//! Writing generated files, or checking that the committed ones are fresh.

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

/// The repository root (xtask lives one level below it).
pub fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask sits inside the repository")
        .to_path_buf()
}

/// Writes `contents` to `path` unless it already holds them. In check mode nothing is written and
/// a difference is an error naming the command that regenerates the file.
pub fn ensure_file_contents(
    path: &Path,
    contents: &[u8],
    check: bool,
    command: &str,
) -> Result<()> {
    let current = std::fs::read(path).ok();
    // Text may come back from a checkout with CRLF line ends; binary test files (kept out of
    // newline conversion by testdata/.gitattributes) must match byte for byte, since a 0x0D byte
    // in them is data.
    let binary = matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("pb" | "onnx")
    );
    let fresh = match current.as_deref() {
        Some(current) if binary => current == contents,
        Some(current) => normalize_newlines(current) == normalize_newlines(contents),
        None => false,
    };
    if fresh {
        return Ok(());
    }
    if check {
        bail!(
            "`{}` is not up to date: run `cargo xtask {command}` and commit the result",
            path.display()
        );
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(path, contents).with_context(|| format!("writing {}", path.display()))?;
    eprintln!("updated {}", path.display());
    Ok(())
}

fn normalize_newlines(bytes: &[u8]) -> Vec<u8> {
    bytes.iter().copied().filter(|&b| b != b'\r').collect()
}
