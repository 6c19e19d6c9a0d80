//! House rules, checked over the whole tree by `cargo test` (in the spirit of rust-analyzer's
//! `tidy`): rules that a reviewer would otherwise have to remember.
//!
//! - **Long files.** No Rust file over [`LONG_FILE_LINES`] lines unless it says why, on a line
//!   holding `tidy: long file:` and the reason.
//! - **`unsafe`.** Only in the modules that need it: the kernels' fast paths, reductions, tensor
//!   storage and allocator, and the checker's operating-system glue (the runtime's interrupt handler
//!   (process groups, scratch directories), reaper and workers, and the zero-copy view of a file's buffer). The checker crate
//!   denies `unsafe_code` at its root and allows it on those modules only.
//! - **Docs.** Every library crate's root lints `missing_docs`, so that `clippy -D warnings` fails
//!   on an undocumented public item.
//! - **Operator names.** The indexing operators are named, in code, only by the kernels' operator
//!   files and registry (`crates/kernels/src/ops/`): everything else asks the registry (roles,
//!   indexing kinds, versions). Tests, tools and fuzz targets are exempt; so are the exceptions
//!   listed in [`OP_NAME_EXCEPTIONS`], each with its reason.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The longest a Rust file may be without a reason written in it.
const LONG_FILE_LINES: usize = 1_200;

/// The marker of a long file's reason.
const LONG_FILE_MARKER: &str = "tidy: long file:";

/// Files (or directories, ending in `/`) where `unsafe` may appear in code, with why.
const UNSAFE_ALLOWED: &[(&str, &str)] = &[
    (
        "crates/kernels/src/ops/fast/",
        "the kernels' fast paths (SIMD, uninitialised outputs, threads writing disjoint parts)",
    ),
    (
        "crates/kernels/src/ops/reduction/",
        "parallel reductions writing disjoint elements, SIMD deals",
    ),
    (
        "crates/kernels/src/tensor/",
        "storage shared with a file's buffer (`Tensor::from_shared`)",
    ),
    ("crates/kernels/src/alloc.rs", "the global allocator"),
    (
        "crates/checker/src/runtime/interrupt/",
        "the interrupt handler: killing process groups, removing scratch directories (libc)",
    ),
    (
        "crates/checker/src/runtime/reaper.rs",
        "waiting for and killing child process groups (libc)",
    ),
    (
        "crates/checker/src/runtime/worker.rs",
        "a runtime worker's process group (libc pre_exec)",
    ),
    (
        "crates/checker/src/load/tensor.rs",
        "the zero-copy view of a tensor file's buffer (`Tensor::from_shared`)",
    ),
    ("python/src/lib.rs", "the extension module's allocator hook"),
    (
        "tests/",
        "tests of the unsafe constructors and of hostile processes",
    ),
];

/// Non-test files outside the kernels' operators that name an indexing operator, with why.
const OP_NAME_EXCEPTIONS: &[(&str, &str)] = &[(
    "crates/checker/src/load/ir/mod.rs",
    "OpenVINO IR layer types (`Gather`) are OpenVINO's names, mapped to ONNX nodes",
)];

/// The indexing operators, by the names nodes give them.
const OPERATORS: &[&str] = &[
    "Gather",
    "GatherElements",
    "GatherND",
    "Scatter",
    "ScatterElements",
    "ScatterND",
    "TensorScatter",
    "GatherGrad",
    "GatherElementsGrad",
];

/// The repository's root (xtask sits in it).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask sits in the repository")
        .to_path_buf()
}

/// Every Rust file of the repository (not `target/`, not hidden directories), relative paths
/// with `/`, sorted.
fn rust_files() -> Vec<String> {
    let root = root();
    let mut out = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir)
            .expect("a readable directory")
            .flatten()
        {
            let path = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || name == "target" || name == "corpus" {
                continue;
            }
            let kind = e.file_type().expect("a file type");
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() && name.ends_with(".rs") {
                let rel = path.strip_prefix(&root).expect("under the root");
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out.sort();
    out
}

/// A Rust source split into its code (comments removed, string and char literals emptied) and
/// its string literals with their line numbers.
#[derive(Debug, Default, PartialEq)]
struct Lexed {
    code: String,
    strings: Vec<(usize, String)>,
}

/// Splits `src` into code and string literals. Not a full lexer: enough for these rules (line and
/// block comments, plain, byte and raw strings, char literals beside lifetimes).
fn lex(src: &str) -> Lexed {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Lexed::default();
    let (mut i, mut line) = (0, 1);
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            i += 2;
            while i < chars.len() && !(chars[i] == '*' && at(i + 1) == '/') {
                if chars[i] == '\n' {
                    line += 1;
                    out.code.push('\n');
                }
                i += 1;
            }
            i += 2;
        } else if c == 'r' && (at(i + 1) == '"' || at(i + 1) == '#') && !ident_before(&chars, i) {
            let mut j = i + 1;
            let mut hashes = 0;
            while at(j) == '#' {
                hashes += 1;
                j += 1;
            }
            if at(j) != '"' {
                out.code.push(c);
                i += 1;
                continue;
            }
            let start_line = line;
            let mut text = String::new();
            j += 1;
            loop {
                if j >= chars.len() {
                    break;
                }
                if chars[j] == '"' && (0..hashes).all(|h| at(j + 1 + h) == '#') {
                    j += 1 + hashes;
                    break;
                }
                if chars[j] == '\n' {
                    line += 1;
                }
                text.push(chars[j]);
                j += 1;
            }
            out.strings.push((start_line, text));
            out.code.push_str("\"\"");
            i = j;
        } else if c == '"' {
            let start_line = line;
            let mut text = String::new();
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    text.push(chars[i]);
                    i += 1;
                }
                if at(i) == '\n' {
                    line += 1;
                }
                text.push(at(i));
                i += 1;
            }
            i += 1;
            out.strings.push((start_line, text));
            out.code.push_str("\"\"");
        } else if c == '\'' && (at(i + 2) == '\'' || at(i + 1) == '\\') {
            // A char literal ('x', '\n', '\u{..}'), not a lifetime.
            i += 1;
            while i < chars.len() && chars[i] != '\'' {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.code.push_str("' '");
        } else {
            if c == '\n' {
                line += 1;
            }
            out.code.push(c);
            i += 1;
        }
    }
    out
}

/// Whether the character before `i` continues an identifier (so `r` there is not a raw string's).
fn ident_before(chars: &[char], i: usize) -> bool {
    i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')
}

/// `src` without its test module (by this house's convention, a `#[cfg(test)] mod` at the end).
fn without_tests(src: &str) -> &str {
    let mut offset = 0;
    for line in src.split_inclusive('\n') {
        if line.trim() == "#[cfg(test)]" {
            let rest = &src[offset + line.len()..];
            let next = rest.lines().next().unwrap_or("").trim_start();
            if next.starts_with("mod ") || next.starts_with("pub(crate) mod ") {
                return &src[..offset];
            }
        }
        offset += line.len();
    }
    src
}

/// Whether `path` lies under an entry of `list` (a file, or a directory ending in `/`).
fn listed(path: &str, list: &[(&str, &str)]) -> bool {
    list.iter()
        .any(|(p, _)| path == *p || (p.ends_with('/') && path.starts_with(p)))
}

/// The lines of `code` holding the keyword `unsafe`.
fn unsafe_lines(code: &str) -> Vec<usize> {
    code.lines()
        .enumerate()
        .filter(|(_, l)| {
            l.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|w| w == "unsafe")
        })
        .map(|(i, _)| i + 1)
        .collect()
}

/// The string literals of `lexed` that are exactly an operator's name, with their lines.
fn operator_literals(lexed: &Lexed) -> Vec<(usize, &str)> {
    lexed
        .strings
        .iter()
        .filter(|(_, s)| OPERATORS.contains(&s.as_str()))
        .map(|(l, s)| (*l, s.as_str()))
        .collect()
}

/// Whether a file of `lines` lines is too long for its text.
fn too_long(text: &str) -> bool {
    text.lines().count() > LONG_FILE_LINES && !text.contains(LONG_FILE_MARKER)
}

#[test]
fn no_long_file_without_a_reason() {
    let mut bad = Vec::new();
    for f in rust_files() {
        // Generated by `cargo xtask codegen` from proto/onnx.proto3.
        if f == "crates/checker/src/pb/onnx.rs" {
            continue;
        }
        let text = std::fs::read_to_string(root().join(&f)).unwrap();
        if too_long(&text) {
            bad.push(format!("{f}: {} lines", text.lines().count()));
        }
    }
    assert!(
        bad.is_empty(),
        "files over {LONG_FILE_LINES} lines without a '{LONG_FILE_MARKER} <reason>' line (split \
         them, or say why they are one file):\n  {}",
        bad.join("\n  ")
    );
}

#[test]
fn unsafe_code_only_where_it_is_allowed() {
    let mut bad = Vec::new();
    for f in rust_files() {
        if listed(&f, UNSAFE_ALLOWED) || f.starts_with("xtask/") {
            continue;
        }
        let lexed = lex(&std::fs::read_to_string(root().join(&f)).unwrap());
        bad.extend(unsafe_lines(&lexed.code).iter().map(|l| format!("{f}:{l}")));
    }
    assert!(
        bad.is_empty(),
        "`unsafe` outside the modules allowed it (xtask/src/tidy.rs UNSAFE_ALLOWED):\n  {}",
        bad.join("\n  ")
    );
    for f in ["crates/checker/src/lib.rs", "src/lib.rs"] {
        let text = std::fs::read_to_string(root().join(f)).unwrap();
        assert!(
            text.contains("#![deny(unsafe_code)]"),
            "{f}: the checker and command-line crates must deny unsafe_code at their roots"
        );
    }
}

#[test]
fn every_library_crate_lints_missing_docs() {
    let roots = rust_files()
        .into_iter()
        .filter(|f| f == "src/lib.rs" || (f.starts_with("crates/") && f.ends_with("/src/lib.rs")));
    let mut bad = Vec::new();
    let mut seen = 0;
    for f in roots {
        seen += 1;
        let text = std::fs::read_to_string(root().join(&f)).unwrap();
        if !text.contains("#![warn(missing_docs)]") && !text.contains("#![deny(missing_docs)]") {
            bad.push(f);
        }
    }
    assert!(seen >= 3, "found {seen} library crate roots");
    assert!(
        bad.is_empty(),
        "crate roots without #![warn(missing_docs)]: {bad:?}"
    );
}

#[test]
fn operators_are_named_only_by_the_kernels_operator_files() {
    let mut bad = Vec::new();
    for f in rust_files() {
        let checked = (f.starts_with("src/") || f.starts_with("crates/"))
            && !f.starts_with("crates/kernels/src/ops/")
            && !f.ends_with("/tests.rs")
            && !f.contains("testutil")
            && !listed(&f, OP_NAME_EXCEPTIONS);
        if !checked {
            continue;
        }
        let text = std::fs::read_to_string(root().join(&f)).unwrap();
        let lexed = lex(without_tests(&text));
        bad.extend(
            operator_literals(&lexed)
                .into_iter()
                .map(|(l, name)| format!("{f}:{l}: \"{name}\"")),
        );
    }
    assert!(
        bad.is_empty(),
        "operator names outside crates/kernels/src/ops/ (ask the registry for roles, indexing \
         kinds and versions instead, or list the file in OP_NAME_EXCEPTIONS with its reason):\n  {}",
        bad.join("\n  ")
    );
}

/// Folders whose files must not import each other in a circle (each folder's `mod.rs`, which
/// assembles its children, aside).
const NO_CIRCLES: &[&str] = &[
    "crates/checker/src/runner/",
    "crates/checker/src/report/",
    "crates/checker/src/verdict/",
    "crates/kernels/src/ops/",
];

/// The sibling modules `code` (comments and strings removed, tests left out) names through
/// `super::NAME` or `<crate_path>NAME`, `use super::{a, b::c}` included, among `siblings`.
fn sibling_imports(code: &str, crate_path: &str, siblings: &[String]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for prefix in ["super::", crate_path] {
        for (at, _) in code.match_indices(prefix) {
            let rest = &code[at + prefix.len()..];
            let names: Vec<&str> = match rest.strip_prefix('{') {
                // The top-level names of a group: `{a, b::{c, d}, e}`.
                Some(group) => {
                    let (mut depth, mut names, mut start) = (0usize, Vec::new(), 0);
                    for (i, c) in group.char_indices() {
                        match c {
                            '{' => depth += 1,
                            '}' if depth == 0 => {
                                names.push(&group[start..i]);
                                break;
                            }
                            '}' => depth -= 1,
                            ',' if depth == 0 => {
                                names.push(&group[start..i]);
                                start = i + 1;
                            }
                            _ => {}
                        }
                    }
                    names
                }
                None => vec![rest],
            };
            for n in names {
                let name: String = n
                    .trim_start()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if siblings.contains(&name) {
                    out.insert(name);
                }
            }
        }
    }
    out
}

/// A circle in `edges` (module -> the modules it imports), as the modules along it.
fn find_circle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        m: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == m) {
            let mut circle = path[at..].to_vec();
            circle.push(m.to_string());
            return Some(circle);
        }
        if done.contains(m) {
            return None;
        }
        path.push(m.to_string());
        for next in edges.get(m).into_iter().flatten() {
            if let Some(c) = visit(next, edges, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(m.to_string());
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|m| visit(m, edges, &mut Vec::new(), &mut done))
}

#[test]
fn no_circle_of_imports_among_the_files_of_a_folder() {
    let files = rust_files();
    for dir in NO_CIRCLES {
        // `crates/checker/src/runner/` is reached as `crate::runner::` too.
        let inner = dir.split_once("/src/").map_or("", |(_, d)| d);
        let crate_path = format!("crate::{}", inner.replace('/', "::"));
        let here: Vec<&String> = files
            .iter()
            .filter(|f| f.strip_prefix(dir).is_some_and(|r| !r.contains('/')))
            .filter(|f| !f.ends_with("/mod.rs"))
            .collect();
        let name = |f: &str| f[dir.len()..].trim_end_matches(".rs").to_string();
        let siblings: Vec<String> = here.iter().map(|f| name(f)).collect();
        assert!(siblings.len() >= 3, "{dir}: found {siblings:?}");
        let mut edges = BTreeMap::new();
        for f in &here {
            let text = std::fs::read_to_string(root().join(f)).unwrap();
            let lexed = lex(without_tests(&text));
            let mut deps = sibling_imports(&lexed.code, &crate_path, &siblings);
            deps.remove(&name(f));
            edges.insert(name(f), deps);
        }
        if let Some(circle) = find_circle(&edges) {
            panic!(
                "{dir}: its files import each other in a circle: {} (move what they share \
                 into one of them, or into a file both import)",
                circle.join(" -> ")
            );
        }
    }
}

#[test]
fn a_circle_is_found_and_a_tree_is_not() {
    let siblings: Vec<String> = ["a", "b", "c"].iter().map(ToString::to_string).collect();
    let grouped = sibling_imports(
        "use super::{a::X, b::{Y, Z}};\nuse crate::ops::c::W;",
        "crate::ops::",
        &siblings,
    );
    assert_eq!(grouped.into_iter().collect::<Vec<_>>(), ["a", "b", "c"]);
    let edges = |pairs: &[(&str, &str)]| {
        let mut e: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (from, to) in pairs {
            e.entry(from.to_string())
                .or_default()
                .insert(to.to_string());
        }
        e
    };
    assert_eq!(
        find_circle(&edges(&[("a", "b"), ("b", "c"), ("a", "c")])),
        None
    );
    assert_eq!(
        find_circle(&edges(&[("a", "b"), ("b", "c"), ("c", "a")])),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
}

#[test]
fn the_lexer_keeps_code_and_finds_strings_but_not_comments() {
    let src = "let a = \"Gather\"; // unsafe \"ScatterND\"\n/* unsafe */ let b = r#\"x\"#;\nlet c = '\"'; fn f<'a>(x: &'a u8) {}\nunsafe { b\"GatherND\" }\n";
    let lexed = lex(src);
    assert_eq!(unsafe_lines(&lexed.code), [4]);
    let strings: Vec<&str> = lexed.strings.iter().map(|(_, s)| s.as_str()).collect();
    assert_eq!(strings, ["Gather", "x", "GatherND"]);
    assert_eq!(operator_literals(&lexed), [(1, "Gather"), (4, "GatherND")]);
}

#[test]
fn test_modules_are_left_out_and_long_files_need_a_reason() {
    let src = "fn a() {}\n#[cfg(test)]\nmod tests {\n    const X: &str = \"Gather\";\n}\n";
    assert_eq!(without_tests(src), "fn a() {}\n");
    let long = "fn a() {}\n".repeat(LONG_FILE_LINES + 1);
    assert!(too_long(&long));
    assert!(!too_long(&format!(
        "// {LONG_FILE_MARKER} one table.\n{long}"
    )));
    assert!(!too_long("fn a() {}\n"));
    assert!(listed("crates/kernels/src/ops/fast/par.rs", UNSAFE_ALLOWED));
    assert!(!listed(
        "crates/checker/src/report/human.rs",
        UNSAFE_ALLOWED
    ));
}
