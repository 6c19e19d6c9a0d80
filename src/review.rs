//! `review DIR PATH...`: walks the pending snapshots of DIR (see [`onnx_idx_check::pending`]) and accepts
//! them (the `.new` file replaces the case's `test_data_set_N/output_K.pb`), rejects them (the
//! pending files are deleted) or skips them (left as they are), in the manner of
//! `cargo insta review`.
//!
//! A snapshot is matched to a case by [`Case::name`]; one whose case is not among the given cases
//! (or is ambiguous) is reported and skipped, never written anywhere. Accepting first checks that
//! the `.new` file is a valid, self-contained `TensorProto`, then writes exactly the bytes it
//! checked through a temporary file renamed over `output_K.pb`. Directories of DIR left empty are
//! removed.

use onnx_idx_check::discover::Case;
use onnx_idx_check::load::tensor::TensorContext;
use onnx_idx_check::load::{self, LoadError};
use onnx_idx_check::pb::tensor_proto::DataLocation;
use onnx_idx_check::pb::TensorProto;
use onnx_idx_check::pending::{self, Pending, PendingError};
use onnx_idx_check::report::{multi_line, one_line};
use onnx_idx_check::runner::DEFAULT_MAX_TENSOR_BYTES;
use prost::Message;
use std::fmt;
use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// What `review` does with each pending snapshot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Show each snapshot and ask.
    Interactive,
    /// Accept every snapshot (`--accept-all`).
    AcceptAll,
    /// Accept the snapshots of outputs that have no expected file yet, leave the others
    /// (`--accept-new`).
    AcceptNew,
    /// Reject every snapshot (`--reject-all`).
    RejectAll,
    /// List the snapshots, change nothing (`--list`).
    List,
}

/// What a review did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReviewSummary {
    /// Snapshots whose `.new` file became the expected output.
    pub accepted: usize,
    /// Snapshots deleted.
    pub rejected: usize,
    /// Snapshots left pending (skipped, listed, not new under `--accept-new`, or not
    /// reviewable).
    pub skipped: usize,
    /// Snapshots not reached because the review was quit.
    pub not_reviewed: usize,
    /// Snapshots that ran into a problem: no case or several cases of that name, a `.new` file
    /// refused on accept, pending files that could not be removed. Each is also counted as
    /// skipped, except an accepted one whose pending files could not be removed afterwards.
    pub problems: usize,
}

impl fmt::Display for ReviewSummary {
    /// `2 accepted, 1 rejected, 0 skipped`, plus `(1 with problems)` when there were problems.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} accepted, {} rejected, {} skipped",
            self.accepted, self.rejected, self.skipped
        )?;
        if self.not_reviewed > 0 {
            write!(f, ", {} not reviewed (quit)", self.not_reviewed)?;
        }
        if self.problems > 0 {
            write!(f, " ({} with problems)", self.problems)?;
        }
        Ok(())
    }
}

/// Why a review stopped.
#[derive(Debug, Error)]
pub enum ReviewError {
    /// DIR could not be listed.
    #[error(transparent)]
    Pending(#[from] PendingError),
    /// The output could not be written.
    #[error("writing the review: {0}")]
    Output(std::io::Error),
    /// The answers could not be read.
    #[error("reading the answer: {0}")]
    Input(std::io::Error),
}

/// The prompt of interactive mode.
pub const PROMPT: &str = "accept (a), reject (r), skip (s), quit (q)? ";

/// Where the answers come from.
pub enum Answers<'a> {
    /// One answer per line: `a`, `accept`, ... (a pipe, a file).
    Lines(&'a mut dyn BufRead),
    /// One key per answer, no Enter (a terminal); `None` at the end of input.
    Keys(&'a mut dyn FnMut() -> std::io::Result<Option<char>>),
}

/// The most of a `.diff` file shown.
const DIFF_LIMIT: u64 = 256 << 10;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Decision {
    Accept,
    Reject,
    Skip,
    Quit,
}

struct Painter {
    color: bool,
}

impl Painter {
    fn paint(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
}

/// Reviews the pending snapshots of `dir` against `cases` (discovered by the caller from
/// PATH...), reading answers from `input` (interactive mode only) and writing to `out`; ends with
/// the summary line (`2 accepted, 1 rejected, 0 skipped`).
pub fn review(
    dir: &Path,
    cases: &[Case],
    mode: Mode,
    mut input: Answers<'_>,
    out: &mut dyn Write,
    color: bool,
) -> Result<ReviewSummary, ReviewError> {
    let o = ReviewError::Output;
    let style = Painter { color };
    // No DIR at all: `run --pending` found nothing to write, which is nothing to review.
    let pending = match pending::find(dir) {
        Err(PendingError::Missing(_)) => Vec::new(),
        found => found?,
    };
    let n = pending.len();
    let mut summary = ReviewSummary::default();
    if n == 0 {
        writeln!(
            out,
            "no pending snapshots in {}",
            one_line(&dir.display().to_string())
        )
        .map_err(o)?;
        writeln!(out, "{summary}").map_err(o)?;
        out.flush().map_err(o)?;
        return Ok(summary);
    }
    if mode == Mode::List {
        for p in &pending {
            let note = match resolve(cases, p) {
                Ok(case) => stale(p, case).map_or(String::new(), |why| format!("  (stale: {why})")),
                Err(why) => format!("  ({why})"),
            };
            writeln!(out, "{}{note}", title(p)).map_err(o)?;
        }
        writeln!(out, "{n} pending").map_err(o)?;
        out.flush().map_err(o)?;
        summary.skipped = n;
        return Ok(summary);
    }
    let mut quit = false;
    for (i, p) in pending.iter().enumerate() {
        if quit {
            summary.not_reviewed += 1;
            continue;
        }
        writeln!(
            out,
            "{}",
            style.paint("1", &format!("[{}/{n}] {}", i + 1, title(p)))
        )
        .map_err(o)?;
        let case = match resolve(cases, p) {
            Ok(c) => c,
            Err(why) => {
                writeln!(out, "  {}: {why}", style.paint("33", "skipped")).map_err(o)?;
                summary.skipped += 1;
                summary.problems += 1;
                continue;
            }
        };
        if mode != Mode::RejectAll {
            if let Some(why) = stale(p, case) {
                writeln!(
                    out,
                    "  {}: {}; not offered (run `onnx-idx-check run --pending` on the case again)",
                    style.paint("33", "stale"),
                    one_line(&why)
                )
                .map_err(o)?;
                summary.skipped += 1;
                summary.problems += 1;
                continue;
            }
        }
        let target = case
            .dir
            .join(&p.data_set)
            .join(format!("output_{}.pb", p.output));
        let exists = std::fs::symlink_metadata(&target).is_ok();
        let decision = match mode {
            Mode::AcceptAll => Decision::Accept,
            Mode::AcceptNew if exists => {
                writeln!(
                    out,
                    "  {}: not new (the expected file exists)",
                    style.paint("33", "skipped")
                )
                .map_err(o)?;
                summary.skipped += 1;
                continue;
            }
            Mode::AcceptNew => Decision::Accept,
            Mode::RejectAll => Decision::Reject,
            Mode::List | Mode::Interactive => {
                writeln!(
                    out,
                    "  expected output: {} ({})",
                    one_line(&target.display().to_string()),
                    if exists {
                        "accepting replaces it"
                    } else {
                        "does not exist yet"
                    }
                )
                .map_err(o)?;
                out.write_all(inputs_text(case, p).as_bytes()).map_err(o)?;
                out.write_all(diff_text(p).as_bytes()).map_err(o)?;
                ask(&mut input, out, &style)?
            }
        };
        match decision {
            Decision::Accept => match accept(p, case) {
                Ok(path) => {
                    writeln!(
                        out,
                        "  {}: wrote {}",
                        style.paint("32", "accepted"),
                        one_line(&path.display().to_string())
                    )
                    .map_err(o)?;
                    summary.accepted += 1;
                    if let Err(why) = remove_pending(dir, p) {
                        writeln!(out, "  warning: {}", one_line(&why)).map_err(o)?;
                        summary.problems += 1;
                    }
                }
                Err(why) => {
                    writeln!(
                        out,
                        "  {}: {}; left pending",
                        style.paint("31", "not accepted"),
                        one_line(&why)
                    )
                    .map_err(o)?;
                    summary.skipped += 1;
                    summary.problems += 1;
                }
            },
            Decision::Reject => match discard(dir, p) {
                Ok(()) => {
                    writeln!(
                        out,
                        "  {}: deleted the pending snapshot",
                        style.paint("31", "rejected")
                    )
                    .map_err(o)?;
                    summary.rejected += 1;
                }
                Err(why) => {
                    writeln!(out, "  cannot reject: {}", one_line(&why)).map_err(o)?;
                    summary.skipped += 1;
                    summary.problems += 1;
                }
            },
            Decision::Skip => {
                writeln!(out, "  {}", style.paint("33", "skipped")).map_err(o)?;
                summary.skipped += 1;
            }
            Decision::Quit => {
                quit = true;
                summary.not_reviewed += 1;
            }
        }
    }
    writeln!(out, "{summary}").map_err(o)?;
    out.flush().map_err(o)?;
    Ok(summary)
}

/// `<case> <data set> output_K`, safe to print.
fn title(p: &Pending) -> String {
    one_line(&format!("{} {} output_{}", p.case, p.data_set, p.output))
}

/// The one case named as the snapshot's case, or why there is none.
fn resolve<'a>(cases: &'a [Case], p: &Pending) -> Result<&'a Case, String> {
    let mut named = cases.iter().filter(|c| c.name == p.case);
    match (named.next(), named.next()) {
        (Some(c), None) => Ok(c),
        (None, _) => Err(
            "no case of this name under the given paths (a snapshot's case name is \
                          relative to the PATH given to `run --pending`: give `review` that PATH)"
                .to_string(),
        ),
        (Some(_), Some(_)) => Err(format!(
            "{} cases under the given paths have this name",
            cases.iter().filter(|c| c.name == p.case).count()
        )),
    }
}

/// Prompts until a valid answer; end of input quits.
fn ask(
    input: &mut Answers<'_>,
    out: &mut dyn Write,
    style: &Painter,
) -> Result<Decision, ReviewError> {
    let input = match input {
        Answers::Lines(lines) => &mut **lines,
        Answers::Keys(next) => return ask_key(&mut **next, out, style),
    };
    let o = ReviewError::Output;
    loop {
        write!(out, "{}", style.paint("1", PROMPT)).map_err(o)?;
        out.flush().map_err(o)?;
        let mut line = Vec::new();
        let read = input
            .read_until(b'\n', &mut line)
            .map_err(ReviewError::Input)?;
        if read == 0 {
            writeln!(out).map_err(o)?;
            return Ok(Decision::Quit);
        }
        let answer = String::from_utf8_lossy(&line).trim().to_ascii_lowercase();
        match answer.as_str() {
            "a" | "accept" => return Ok(Decision::Accept),
            "r" | "reject" => return Ok(Decision::Reject),
            "s" | "skip" => return Ok(Decision::Skip),
            "q" | "quit" => return Ok(Decision::Quit),
            _ => writeln!(out, "please answer a, r, s or q").map_err(o)?,
        }
    }
}

/// Prompts until a valid key; end of input, Ctrl-D and Esc quit. The key is echoed.
fn ask_key(
    next: &mut dyn FnMut() -> std::io::Result<Option<char>>,
    out: &mut dyn Write,
    style: &Painter,
) -> Result<Decision, ReviewError> {
    let o = ReviewError::Output;
    loop {
        write!(out, "{}", style.paint("1", PROMPT)).map_err(o)?;
        out.flush().map_err(o)?;
        let key = next().map_err(ReviewError::Input)?;
        let decision = match key.map(|c| c.to_ascii_lowercase()) {
            None | Some('\u{4}' | '\u{1b}') => Some(Decision::Quit),
            Some('a') => Some(Decision::Accept),
            Some('r') => Some(Decision::Reject),
            Some('s') => Some(Decision::Skip),
            Some('q') => Some(Decision::Quit),
            Some(_) => None,
        };
        match decision {
            Some(d) => {
                let shown = key.filter(char::is_ascii_alphabetic).unwrap_or(' ');
                writeln!(out, "{shown}").map_err(o)?;
                return Ok(d);
            }
            None => writeln!(out, "\n  press a, r, s or q").map_err(o)?,
        }
    }
}

/// Most bytes of one input file shown in review.
const INPUT_LIMIT: usize = 64 << 20;

/// The data set's inputs, one compact line each (`input_0.pb 'data': float [3, 2], 6 values:
/// ...`), so a snapshot is not accepted on trust.
fn inputs_text(case: &Case, p: &Pending) -> String {
    let ds = case.dir.join(&p.data_set);
    let mut files: Vec<(u64, PathBuf)> = std::fs::read_dir(&ds)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            let k = name
                .strip_prefix("input_")?
                .strip_suffix(".pb")?
                .parse()
                .ok()?;
            Some((k, e.path()))
        })
        .collect();
    files.sort();
    let mut s = String::from("  inputs:\n");
    for (k, path) in files {
        let shown = format!("{}/input_{k}.pb", p.data_set);
        let line = match load::load_tensor_file(&path, &shown, INPUT_LIMIT) {
            Ok((name, t)) => format!("input_{k}.pb '{name}': {}", pending::preview(&t)),
            Err(e) => format!("input_{k}.pb: cannot read: {e}"),
        };
        s.push_str("    ");
        s.push_str(&one_line(&line));
        s.push('\n');
    }
    s
}

/// The `.diff` file's text for the terminal (control characters escaped), ending with a newline.
fn diff_text(p: &Pending) -> String {
    let shown = p.diff_file.display().to_string();
    let mut text = match read_prefix(&p.diff_file, DIFF_LIMIT) {
        Ok((bytes, len)) => {
            let mut t = multi_line(&String::from_utf8_lossy(&bytes));
            if len > DIFF_LIMIT {
                if !t.ends_with('\n') {
                    t.push('\n');
                }
                t.push_str(&format!(
                    "... (the diff has {len} bytes, the first {DIFF_LIMIT} shown; see {})",
                    one_line(&shown)
                ));
            }
            t
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => "(no .diff file)".to_string(),
        Err(e) => format!("(cannot read {}: {e})", one_line(&shown)),
    };
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// Up to `limit` bytes of a regular file (never through a symbolic link) and its length.
fn read_prefix(path: &Path, limit: u64) -> std::io::Result<(Vec<u8>, u64)> {
    let meta = std::fs::symlink_metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::other(
            "not a regular file (symbolic links are not followed)",
        ));
    }
    let f = open_no_follow(path)?;
    let len = f.metadata()?.len();
    let mut buf = Vec::new();
    f.take(limit).read_to_end(&mut buf)?;
    Ok((buf, len))
}

#[cfg(unix)]
fn open_no_follow(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_no_follow(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::File::open(path)
}

/// Why the snapshot must not become the expected output: the case's files changed since
/// `run --pending` computed it (or the snapshot does not say what it was computed from); `None`
/// when it is current.
fn stale(p: &Pending, case: &Case) -> Option<String> {
    let Some(recorded) = pending::Sources::read(&p.sources_file) else {
        return Some(format!(
            "{} is missing or not one this tool wrote, so the snapshot cannot be shown to be current",
            p.sources_file.display()
        ));
    };
    match pending::Sources::of(&case.dir, &p.data_set) {
        Ok(now) => {
            let changes = recorded.changes(&now);
            (!changes.is_empty()).then(|| {
                format!(
                    "the case changed since the snapshot was computed ({})",
                    changes.join(", ")
                )
            })
        }
        Err(e) => Some(format!("cannot hash the case's files: {e}")),
    }
}

/// Checks the `.new` file and makes it the case's expected output; returns the file written.
/// The pending files are left for the caller to remove.
fn accept(p: &Pending, case: &Case) -> Result<PathBuf, String> {
    let shown = p.new_file.display().to_string();
    let bytes = load::read_file(
        &p.new_file,
        &shown,
        load::file_limit(DEFAULT_MAX_TENSOR_BYTES),
    )
    .map_err(|e| e.to_string())?;
    check_tensor_bytes(&bytes, &p.new_file, &shown)?;
    let ds_dir = case.dir.join(&p.data_set);
    pending::ensure_real_dir(&ds_dir).map_err(|e| e.to_string())?;
    let name = format!("output_{}.pb", p.output);
    pending::write_atomic(&ds_dir, &name, &bytes).map_err(|e| e.to_string())?;
    Ok(ds_dir.join(name))
}

/// The bytes must decode as a `TensorProto` this tool loads, with its data inside the file
/// (external data would not move with it).
fn check_tensor_bytes(bytes: &[u8], path: &Path, shown: &str) -> Result<(), String> {
    if bytes.is_empty() {
        return Err(LoadError::Empty {
            file: shown.to_string(),
        }
        .to_string());
    }
    let proto = TensorProto::decode(bytes)
        .map_err(|e| format!("{shown}: not a valid ONNX TensorProto: {e}"))?;
    if proto.data_location == DataLocation::External as i32 || !proto.external_data.is_empty() {
        return Err(format!(
            "{shown}: the tensor refers to external data, which would not move with it"
        ));
    }
    let ctx = TensorContext {
        base_dir: path.parent().unwrap_or(Path::new(".")),
        max_bytes: DEFAULT_MAX_TENSOR_BYTES,
    };
    load::convert_tensor(&proto, shown, &ctx).map_err(|e| e.to_string())?;
    Ok(())
}

/// Deletes the snapshot's files.
fn discard(dir: &Path, p: &Pending) -> Result<(), String> {
    remove_pending(dir, p)
}

/// Removes the `.new`, `.diff` and `.sources` files (either may already be gone), then the directories of
/// `dir` this leaves empty.
fn remove_pending(dir: &Path, p: &Pending) -> Result<(), String> {
    for f in [&p.new_file, &p.diff_file, &p.sources_file] {
        match std::fs::remove_file(f) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("cannot remove {}: {e}", f.display())),
        }
    }
    if let Some(ds_dir) = p.new_file.parent() {
        pending::remove_empty_dirs(dir, ds_dir);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use onnx_idx_check::discover::{discover, DataSet};
    use onnx_idx_check::load::load_tensor_file;
    use onnx_idx_check::tensor::{DType, Tensor};

    fn floats(v: &[f32]) -> Tensor {
        Tensor::from_elems(
            DType::Float,
            vec![v.len()],
            v.iter().map(|f| f.to_bits()).collect(),
        )
        .unwrap()
    }

    /// A tree with cases `a` and `sub/b` (expected output [1, 2] in test_data_set_0), a pending
    /// directory with a snapshot ([9, 9]) for each, and the discovered cases.
    struct Fixture {
        _root: tempfile::TempDir,
        tree: PathBuf,
        pending: PathBuf,
        cases: Vec<Case>,
    }

    fn fixture() -> Fixture {
        let root = tempfile::tempdir().unwrap();
        let tree = root.path().join("tree");
        let pending = root.path().join("pending");
        for case in ["a", "sub/b"] {
            let ds = tree.join(case).join("test_data_set_0");
            std::fs::create_dir_all(&ds).unwrap();
            std::fs::write(tree.join(case).join("model.onnx"), b"").unwrap();
            std::fs::write(
                ds.join("output_0.pb"),
                onnx_idx_check::load::save::encode_tensor(&floats(&[1.0, 2.0]), "y"),
            )
            .unwrap();
            let sources = pending::Sources::of(&tree.join(case), "test_data_set_0").unwrap();
            let snapshot = pending::Snapshot {
                tensor: &floats(&[9.0, 9.0]),
                output_name: "y",
                diff: &format!("diff of {case}\n"),
                sources: &sources,
            };
            pending::write(&pending, case, "test_data_set_0", 0, &snapshot).unwrap();
        }
        let cases = discover(std::slice::from_ref(&tree)).unwrap().cases;
        assert_eq!(cases.len(), 2);
        Fixture {
            _root: root,
            tree,
            pending,
            cases,
        }
    }

    fn run(f: &Fixture, mode: Mode, answers: &str) -> (ReviewSummary, String) {
        let mut out = Vec::new();
        let s = review(
            &f.pending,
            &f.cases,
            mode,
            Answers::Lines(&mut answers.as_bytes()),
            &mut out,
            false,
        )
        .unwrap();
        (s, String::from_utf8(out).unwrap())
    }

    fn expected(f: &Fixture, case: &str) -> Option<Tensor> {
        let p = f.tree.join(case).join("test_data_set_0/output_0.pb");
        p.exists()
            .then(|| load_tensor_file(&p, "x", 1 << 20).unwrap().1)
    }

    fn pending_of(f: &Fixture) -> Vec<String> {
        pending::find(&f.pending)
            .unwrap()
            .into_iter()
            .map(|p| p.case)
            .collect()
    }

    #[test]
    fn accept_replaces_the_expected_file_and_reject_deletes() {
        let f = fixture();
        let (s, out) = run(&f, Mode::Interactive, "a\nr\n");
        assert_eq!(
            s,
            ReviewSummary {
                accepted: 1,
                rejected: 1,
                skipped: 0,
                not_reviewed: 0,
                problems: 0
            }
        );
        assert!(out.contains("[1/2] a test_data_set_0 output_0\n"), "{out}");
        assert!(out.contains("diff of a\n"), "{out}");
        assert!(
            out.contains("[2/2] sub/b test_data_set_0 output_0\n"),
            "{out}"
        );
        assert_eq!(out.matches(PROMPT).count(), 2, "{out}");
        assert!(
            out.ends_with("1 accepted, 1 rejected, 0 skipped\n"),
            "{out}"
        );
        assert_eq!(expected(&f, "a"), Some(floats(&[9.0, 9.0])));
        assert_eq!(expected(&f, "sub/b"), Some(floats(&[1.0, 2.0])));
        assert!(pending_of(&f).is_empty());
        // Every directory the snapshots lived in is gone; DIR itself stays.
        assert_eq!(std::fs::read_dir(&f.pending).unwrap().count(), 0);
        // No temporary file was left beside the expected output.
        assert_eq!(
            std::fs::read_dir(f.tree.join("a/test_data_set_0"))
                .unwrap()
                .count(),
            1
        );
    }

    #[test]
    fn skip_keeps_and_bad_answers_reask_and_eof_quits() {
        let f = fixture();
        let (s, out) = run(&f, Mode::Interactive, "what\n\ns\n");
        // One skipped; the end of input quits before the second.
        assert_eq!(
            (s.accepted, s.rejected, s.skipped, s.not_reviewed),
            (0, 0, 1, 1)
        );
        assert_eq!(
            out.matches("please answer a, r, s or q").count(),
            2,
            "{out}"
        );
        assert_eq!(pending_of(&f), vec!["a", "sub/b"]);
        assert_eq!(expected(&f, "a"), Some(floats(&[1.0, 2.0])));
        // Quit leaves the rest.
        let (s, out) = run(&f, Mode::Interactive, "q\na\n");
        assert_eq!((s.accepted, s.skipped, s.not_reviewed), (0, 0, 2));
        assert!(
            out.ends_with("0 accepted, 0 rejected, 0 skipped, 2 not reviewed (quit)\n"),
            "{out}"
        );
        assert_eq!(pending_of(&f), vec!["a", "sub/b"]);
    }

    #[test]
    fn accept_all_creates_a_missing_data_set_and_reject_all_deletes_all() {
        let f = fixture();
        std::fs::remove_dir_all(f.tree.join("a/test_data_set_0")).unwrap();
        let cases = discover(std::slice::from_ref(&f.tree)).unwrap().cases;
        let f = Fixture { cases, ..f };
        assert!(f.cases[0].data_sets.is_empty());
        let (s, out) = run(&f, Mode::AcceptAll, "");
        assert_eq!((s.accepted, s.skipped), (2, 0), "{out}");
        assert!(!out.contains(PROMPT));
        assert_eq!(expected(&f, "a"), Some(floats(&[9.0, 9.0])));
        assert_eq!(expected(&f, "sub/b"), Some(floats(&[9.0, 9.0])));

        let g = fixture();
        let (s, _) = run(&g, Mode::RejectAll, "");
        assert_eq!((s.rejected, s.skipped), (2, 0));
        assert!(pending_of(&g).is_empty());
        assert_eq!(expected(&g, "a"), Some(floats(&[1.0, 2.0])));
    }

    #[test]
    fn list_changes_nothing() {
        let f = fixture();
        let (s, out) = run(&f, Mode::List, "");
        assert_eq!(
            out,
            "a test_data_set_0 output_0\nsub/b test_data_set_0 output_0\n2 pending\n"
        );
        assert_eq!(s.skipped, 2);
        assert_eq!(pending_of(&f).len(), 2);
    }

    #[test]
    fn an_unknown_case_is_skipped_and_never_written() {
        let f = fixture();
        let only_b: Vec<Case> = f
            .cases
            .iter()
            .filter(|c| c.name == "sub/b")
            .cloned()
            .collect();
        let mut out = Vec::new();
        let s = review(
            &f.pending,
            &only_b,
            Mode::AcceptAll,
            Answers::Lines(&mut "".as_bytes()),
            &mut out,
            false,
        )
        .unwrap();
        let out = String::from_utf8(out).unwrap();
        assert_eq!((s.accepted, s.skipped, s.problems), (1, 1, 1), "{out}");
        assert!(out.contains("no case of this name"), "{out}");
        assert!(out.ends_with("1 accepted, 0 rejected, 1 skipped (1 with problems)\n"));
        assert_eq!(pending_of(&f), vec!["a"]);
        assert_eq!(expected(&f, "a"), Some(floats(&[1.0, 2.0])));
        // Two cases of the same name (from two roots) are ambiguous: skipped too.
        let mut twice = only_b.clone();
        twice.extend(f.cases.iter().filter(|c| c.name == "a").cloned());
        let mut other = twice[1].clone();
        other.dir = f.tree.join("elsewhere");
        other.data_sets = vec![DataSet {
            name: "test_data_set_0".into(),
            dir: other.dir.join("test_data_set_0"),
        }];
        twice.push(other);
        let mut out = Vec::new();
        let s = review(
            &f.pending,
            &twice,
            Mode::AcceptAll,
            Answers::Lines(&mut "".as_bytes()),
            &mut out,
            false,
        )
        .unwrap();
        let out = String::from_utf8(out).unwrap();
        assert_eq!((s.accepted, s.problems), (0, 1), "{out}");
        assert!(
            out.contains("2 cases under the given paths have this name"),
            "{out}"
        );
        assert!(!f.tree.join("elsewhere").exists());
    }

    #[test]
    fn a_corrupt_new_file_is_refused_on_accept() {
        let f = fixture();
        let a = f.pending.join("a/test_data_set_0/output_0.pb.new");
        let b = f.pending.join("sub/b/test_data_set_0/output_0.pb.new");
        std::fs::write(&a, b"\xff\xff\xff garbage").unwrap();
        // b decodes, but its raw data does not fit its shape.
        let mut proto = onnx_idx_check::load::save::tensor_to_proto(&floats(&[1.0, 2.0]), "y");
        proto.raw_data.truncate(proto.raw_data.len() - 1);
        std::fs::write(&b, proto.encode_to_vec()).unwrap();
        let (s, out) = run(&f, Mode::AcceptAll, "");
        assert_eq!((s.accepted, s.skipped, s.problems), (0, 2, 2), "{out}");
        assert_eq!(out.matches("not accepted").count(), 2, "{out}");
        assert!(out.contains("not a valid ONNX TensorProto"), "{out}");
        assert_eq!(expected(&f, "a"), Some(floats(&[1.0, 2.0])));
        assert_eq!(expected(&f, "sub/b"), Some(floats(&[1.0, 2.0])));
        assert_eq!(pending_of(&f).len(), 2);
        // External data is refused too, even where it would resolve.
        let mut proto = onnx_idx_check::load::save::tensor_to_proto(&floats(&[1.0, 2.0]), "y");
        let raw = std::mem::take(&mut proto.raw_data);
        std::fs::write(f.pending.join("a/test_data_set_0/data.bin"), raw).unwrap();
        proto.data_location = DataLocation::External as i32;
        proto.external_data = vec![onnx_idx_check::pb::StringStringEntryProto {
            key: "location".into(),
            value: "data.bin".into(),
        }];
        std::fs::write(&a, proto.encode_to_vec()).unwrap();
        let (s, out) = run(&f, Mode::AcceptAll, "");
        assert_eq!(s.accepted, 0, "{out}");
        assert!(out.contains("external data"), "{out}");
    }

    #[test]
    fn the_diff_is_shown_with_control_characters_escaped() {
        let f = fixture();
        std::fs::write(
            f.pending.join("a/test_data_set_0/output_0.pb.diff"),
            "line 1\n\x1b[2Jline 2\n",
        )
        .unwrap();
        std::fs::remove_file(f.pending.join("sub/b/test_data_set_0/output_0.pb.diff")).unwrap();
        let (_, out) = run(&f, Mode::Interactive, "s\ns\n");
        assert!(out.contains("line 1\n\\u{1b}[2Jline 2\n"), "{out}");
        assert!(!out.contains('\x1b'));
        assert!(out.contains("(no .diff file)\n"), "{out}");
    }

    #[test]
    fn nothing_pending_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let review_of = |pending: &Path| {
            let mut out = Vec::new();
            let s = review(
                pending,
                &[],
                Mode::Interactive,
                Answers::Lines(&mut "".as_bytes()),
                &mut out,
                false,
            )
            .unwrap();
            (s, String::from_utf8(out).unwrap())
        };
        let (s, out) = review_of(dir.path());
        assert_eq!(s, ReviewSummary::default());
        assert!(
            out.ends_with("0 accepted, 0 rejected, 0 skipped\n"),
            "{out}"
        );
        // No DIR at all: `run --pending` wrote nothing, so nothing is pending either.
        let (s, out) = review_of(&dir.path().join("missing"));
        assert_eq!(s, ReviewSummary::default());
        assert!(out.starts_with("no pending snapshots in "), "{out}");
    }

    #[test]
    fn keys_answer_without_enter_and_accept_new_leaves_changed_snapshots() {
        let f = fixture();
        // A key per answer: an unknown key asks again, then `a` accepts and `Esc` quits.
        let mut keys = "xa\u{1b}".chars();
        let mut next = || Ok(keys.next());
        let mut out = Vec::new();
        let s = review(
            &f.pending,
            &f.cases,
            Mode::Interactive,
            Answers::Keys(&mut next),
            &mut out,
            false,
        )
        .unwrap();
        let out = String::from_utf8(out).unwrap();
        assert_eq!((s.accepted, s.not_reviewed), (1, 1), "{out}");
        assert!(
            out.contains(&format!("{PROMPT}\n  press a, r, s or q\n{PROMPT}a\n")),
            "{out}"
        );
        // The inputs are shown before the diff.
        assert!(out.contains("  inputs:\n"), "{out}");

        // --accept-new: `a`'s expected file exists (not new), `sub/b` has none.
        let f = fixture();
        std::fs::remove_file(f.tree.join("sub/b/test_data_set_0/output_0.pb")).unwrap();
        let (s, out) = run(&f, Mode::AcceptNew, "");
        assert_eq!((s.accepted, s.skipped), (1, 1), "{out}");
        assert!(
            out.contains("skipped: not new (the expected file exists)"),
            "{out}"
        );
        assert_eq!(pending_of(&f), vec!["a"]);
    }
}
