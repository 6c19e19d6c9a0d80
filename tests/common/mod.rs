//! Helpers every integration test crate shares (each crate includes this file with `mod common;`).

use std::path::Path;

// Conversions to and from the naive reference's tensors; not every test crate uses them.
#[allow(dead_code)]
pub mod reference;

/// Copies a directory tree (regular files and directories only) to `to`, creating it.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}
