//! Hostile cases that cannot be committed, built in a temporary directory when the test runs:
//! symbolic links and hard links leading out of a case (docs/semantics.md section 8, D11), a FIFO in
//! place of a tensor file, and files that claim a terabyte (D12).
//!
//! Each starts from a copy of `passing/external_data_inside_the_directory`, whose input_0.pb keeps
//! its two floats in `test_data_set_0/data.bin`; the copy passes until it is tampered with.

use crate::support::{
    cases, copy_case, fixture, read_tensor, rewrite_model, run_json, write_tensor,
};
use onnx_idx_check::pb::{tensor_proto::DataLocation, StringStringEntryProto};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A workspace with a fresh copy of the control case at `<tmp>/case` and a directory
/// `<tmp>/outside` beside it holding `data.bin` with the same two floats.
struct Workspace {
    _tmp: tempfile::TempDir,
    case: PathBuf,
    outside: PathBuf,
}

/// The external data of the control case: float32 1.0 and 2.0, little-endian.
const TWO_FLOATS: [u8; 8] = [0, 0, 0x80, 0x3F, 0, 0, 0, 0x40];

impl Workspace {
    fn new() -> Workspace {
        let tmp = tempfile::tempdir().unwrap();
        let case = tmp.path().join("case");
        copy_case(
            &fixture("passing/external_data_inside_the_directory"),
            &case,
        );
        assert_eq!(
            std::fs::read(case.join("test_data_set_0/data.bin")).unwrap(),
            TWO_FLOATS
        );
        let outside = tmp.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("data.bin"), TWO_FLOATS).unwrap();
        Workspace {
            _tmp: tmp,
            case,
            outside,
        }
    }

    fn data_set(&self) -> PathBuf {
        self.case.join("test_data_set_0")
    }

    /// Points input_0.pb's external data at `location`.
    fn set_location(&self, location: &str) {
        let file = self.data_set().join("input_0.pb");
        let mut t = read_tensor(&file);
        assert_eq!(t.data_location, DataLocation::External as i32);
        t.external_data = vec![
            StringStringEntryProto {
                key: "location".into(),
                value: location.into(),
            },
            StringStringEntryProto {
                key: "length".into(),
                value: "8".into(),
            },
        ];
        write_tensor(&file, &t);
    }

    /// Runs the case and returns its report entry.
    fn run(&self, extra: &[&str]) -> Value {
        let (code, report) = run_json(&self.case, extra);
        let c = cases(&report)[0].clone();
        let want = if matches!(c["status"].as_str(), Some("failed" | "errored")) {
            1
        } else {
            0
        };
        assert_eq!(code, want, "{c:#}");
        c
    }
}

fn assert_errored(c: &Value, words: &[&str]) {
    assert_eq!(c["status"], "errored", "{c:#}");
    let reason = c["reason"].as_str().unwrap();
    for w in words {
        assert!(reason.contains(w), "reason lacks {w:?}: {reason}");
    }
}

#[test]
fn the_untampered_copy_passes() {
    let w = Workspace::new();
    assert_eq!(w.run(&[])["status"], "passed");
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) {
    std::os::unix::fs::symlink(target, link).unwrap();
}

#[cfg(unix)]
#[test]
fn external_data_that_is_a_symlink_out_of_the_case_is_refused() {
    let w = Workspace::new();
    let data = w.data_set().join("data.bin");
    std::fs::remove_file(&data).unwrap();
    symlink(&w.outside.join("data.bin"), &data);
    assert_errored(&w.run(&[]), &["input_0.pb", "'data.bin'", "symbolic link"]);
}

#[cfg(unix)]
#[test]
fn external_data_under_a_symlinked_directory_is_refused() {
    let w = Workspace::new();
    symlink(&w.outside, &w.data_set().join("sub"));
    w.set_location("sub/data.bin");
    assert_errored(&w.run(&[]), &["'sub/data.bin'", "'sub' is a symbolic link"]);
}

#[cfg(unix)]
#[test]
fn a_hard_linked_external_file_is_refused() {
    let w = Workspace::new();
    let data = w.data_set().join("data.bin");
    std::fs::remove_file(&data).unwrap();
    std::fs::hard_link(w.outside.join("data.bin"), &data).unwrap();
    assert_errored(&w.run(&[]), &["'data.bin'", "2 hard links"]);
}

#[cfg(unix)]
#[test]
fn an_input_file_that_is_a_symlink_is_refused() {
    let w = Workspace::new();
    let input = w.data_set().join("input_1.pb");
    std::fs::rename(&input, w.outside.join("input_1.pb")).unwrap();
    symlink(&w.outside.join("input_1.pb"), &input);
    assert_errored(&w.run(&[]), &["input_1.pb", "not a regular file"]);
}

#[cfg(unix)]
#[test]
fn a_model_that_is_a_symlink_is_refused() {
    let w = Workspace::new();
    let model = w.case.join("model.onnx");
    std::fs::rename(&model, w.outside.join("model.onnx")).unwrap();
    symlink(&w.outside.join("model.onnx"), &model);
    assert_errored(&w.run(&[]), &["model.onnx", "not a regular file"]);
}

#[cfg(unix)]
#[test]
fn a_symlinked_data_set_directory_is_not_followed() {
    let w = Workspace::new();
    let real = w.outside.join("test_data_set_0");
    std::fs::rename(w.data_set(), &real).unwrap();
    symlink(&real, &w.data_set());
    assert_errored(&w.run(&[]), &["no test_data_set_N directory"]);
}

#[cfg(unix)]
#[test]
fn a_fifo_in_place_of_an_input_file_is_refused_without_blocking() {
    let w = Workspace::new();
    let input = w.data_set().join("input_1.pb");
    std::fs::remove_file(&input).unwrap();
    let path = std::ffi::CString::new(input.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo only creates a file system entry.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    // Nobody ever writes to the FIFO: a reader that opened it for reading would block, and the
    // command's timeout would fail the test.
    assert_errored(&w.run(&[]), &["input_1.pb", "not a regular file"]);
}

#[cfg(unix)]
#[test]
fn a_fifo_as_external_data_is_refused_without_blocking() {
    let w = Workspace::new();
    let data = w.data_set().join("data.bin");
    std::fs::remove_file(&data).unwrap();
    let path = std::ffi::CString::new(data.to_str().unwrap()).unwrap();
    // SAFETY: as above.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    assert_errored(&w.run(&[]), &["'data.bin'", "not a regular file"]);
}

#[test]
fn locations_that_climb_out_through_a_subdirectory_or_backslashes_are_refused() {
    // CVE-2024-27318 hid `..` behind a subdirectory. Each location below would reach
    // <case>/data.bin, which holds the right bytes, so only the check stands between the loader
    // and a pass.
    for location in ["sub/../../data.bin", "./../data.bin", "..\\data.bin"] {
        let w = Workspace::new();
        std::fs::create_dir(w.data_set().join("sub")).unwrap();
        std::fs::write(w.case.join("data.bin"), TWO_FLOATS).unwrap();
        w.set_location(location);
        assert_errored(&w.run(&[]), &["outside the directory"]);
    }
}

/// 2^38 floats: 1 TiB.
const TERABYTE_OF_FLOATS: i64 = 1 << 38;

#[test]
fn a_file_claiming_a_terabyte_of_raw_data_errors_quickly_even_under_a_higher_limit() {
    let w = Workspace::new();
    let file = w.data_set().join("input_0.pb");
    let mut t = read_tensor(&file);
    t.data_location = DataLocation::Default as i32;
    t.external_data.clear();
    t.raw_data = (TWO_FLOATS.to_vec()).into();
    t.dims = vec![TERABYTE_OF_FLOATS];
    write_tensor(&file, &t);
    let start = Instant::now();
    // The limit admits the claim, so only the size check can refuse it.
    let c = w.run(&["--max-tensor-bytes", "2048GiB"]);
    let took = start.elapsed();
    assert_errored(
        &c,
        &[
            "input_0.pb",
            "raw_data holds 8 bytes",
            "needs exactly 1099511627776",
        ],
    );
    assert!(took < Duration::from_secs(10), "took {took:?}");
    // Under the default limit of 4 GiB the claim itself is refused.
    let c = w.run(&[]);
    assert_errored(&c, &["1099511627776 bytes", "limit"]);
}

#[test]
fn external_data_claiming_a_terabyte_errors_quickly_even_under_a_higher_limit() {
    let w = Workspace::new();
    let file = w.data_set().join("input_0.pb");
    let mut t = read_tensor(&file);
    t.dims = vec![TERABYTE_OF_FLOATS];
    t.external_data = vec![
        StringStringEntryProto {
            key: "location".into(),
            value: "data.bin".into(),
        },
        StringStringEntryProto {
            key: "length".into(),
            value: (TERABYTE_OF_FLOATS * 4).to_string(),
        },
    ];
    write_tensor(&file, &t);
    let start = Instant::now();
    let c = w.run(&["--max-tensor-bytes", "2048GiB"]);
    let took = start.elapsed();
    assert_errored(&c, &["'data.bin'", "exceeds the file size 8"]);
    assert!(took < Duration::from_secs(10), "took {took:?}");
}

#[test]
fn an_output_larger_than_the_limit_errors_before_it_is_computed() {
    // failing/wrong_value is Gather-13 on axis 0; give it data [1, 64] and 64 zero indices, so the
    // output would be [64, 64] floats: 16384 bytes against a limit of 1 KiB, while every file
    // (256, 512 and 16 bytes of values) is under it.
    let tmp = tempfile::tempdir().unwrap();
    let case = tmp.path().join("case");
    copy_case(&fixture("failing/wrong_value"), &case);
    rewrite_model(&case.join("model.onnx"), |m| {
        for v in &mut m.graph.as_mut().unwrap().input {
            if let Some(onnx_idx_check::pb::type_proto::Value::TensorType(t)) =
                v.r#type.as_mut().and_then(|t| t.value.as_mut())
            {
                t.shape = None;
            }
        }
    });
    let ds = case.join("test_data_set_0");
    let mut data = read_tensor(&ds.join("input_0.pb"));
    data.dims = vec![1, 64];
    data.raw_data = (vec![0; 64 * 4]).into();
    write_tensor(&ds.join("input_0.pb"), &data);
    let mut indices = read_tensor(&ds.join("input_1.pb"));
    indices.dims = vec![64];
    indices.raw_data = (vec![0; 64 * 8]).into();
    write_tensor(&ds.join("input_1.pb"), &indices);
    let (code, report) = run_json(&case, &["--max-tensor-bytes", "1KiB"]);
    assert_eq!(code, 1);
    assert_errored(
        &cases(&report)[0],
        &[
            "Gather-13",
            "[64, 64]",
            "16384 bytes",
            "limit of 1024 bytes",
        ],
    );
    // Under the default limit the same case runs, and fails on the shape.
    let (_, report) = run_json(&case, &[]);
    let c = &cases(&report)[0];
    assert_eq!(c["status"], "failed", "{c:#}");
    assert!(
        c["reason"].as_str().unwrap().contains("got [64, 64]"),
        "{c:#}"
    );
}

/// A tree holding a copy of the control case at `<tmp>/tree/good`.
fn tree_with_a_good_case() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    copy_case(
        &fixture("passing/external_data_inside_the_directory"),
        &tree.join("good"),
    );
    (tmp, tree)
}

#[cfg(unix)]
#[test]
fn discovery_survives_symlink_loops_and_never_follows_them() {
    let (_tmp, tree) = tree_with_a_good_case();
    // A loop to the tree itself, one to its parent, and one that points at itself.
    symlink(&tree, &tree.join("good/test_data_set_0/again"));
    symlink(Path::new(".."), &tree.join("up"));
    symlink(Path::new("self"), &tree.join("self"));
    let start = Instant::now();
    let (code, report) = run_json(&tree, &[]);
    assert!(start.elapsed() < Duration::from_secs(20));
    assert_eq!(code, 0, "{report:#}");
    let names: Vec<&str> = cases(&report)
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["good"]);
    assert_eq!(cases(&report)[0]["status"], "passed");
}

#[cfg(target_os = "linux")]
#[test]
fn a_case_under_a_non_utf8_name_runs_and_is_reported_with_a_replacement_character() {
    use std::os::unix::ffi::OsStrExt;
    let (_tmp, tree) = tree_with_a_good_case();
    let odd = tree.join(std::ffi::OsStr::from_bytes(b"bad\xFFname"));
    copy_case(&fixture("passing/external_data_inside_the_directory"), &odd);
    let (code, report) = run_json(&tree, &[]);
    assert_eq!(code, 0, "{report:#}");
    let names: Vec<&str> = cases(&report)
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["bad\u{FFFD}name", "good"]);
    assert!(cases(&report).iter().all(|c| c["status"] == "passed"));
    // The human report names it the same way.
    let r = crate::support::run(["run".as_ref(), tree.as_os_str()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("bad\u{FFFD}name"), "{}", r.stdout);
}

#[cfg(unix)]
#[test]
fn an_unreadable_directory_is_reported_and_the_run_goes_on() {
    use std::os::unix::fs::PermissionsExt;
    let (_tmp, tree) = tree_with_a_good_case();
    let locked = tree.join("locked");
    copy_case(
        &fixture("passing/external_data_inside_the_directory"),
        &locked.join("case"),
    );
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    // Root reads it anyway; then only the rest of the contract can be checked.
    let unreadable = std::fs::read_dir(&locked).is_err();
    let r = crate::support::run([
        "run".as_ref(),
        tree.as_os_str(),
        "--format".as_ref(),
        "json".as_ref(),
    ]);
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    let report = r.json();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(crate::support::case(&report, "good")["status"], "passed");
    if unreadable {
        assert_eq!(cases(&report).len(), 1, "{report:#}");
        assert!(
            r.stderr.contains("warning:") && r.stderr.contains("locked"),
            "{}",
            r.stderr
        );
    } else {
        assert_eq!(cases(&report).len(), 2, "{report:#}");
    }
}

/// A case that takes seconds on any machine from 50 KB of files: Gather-13 on data [1, 4096] with
/// 4096 zero indices builds a [4096, 4096] output (64 MiB) per data set, in each of 300 data sets
/// whose files are hard links to the first one's. (The expected output is [2, 2]: without a
/// time limit every data set fails on its shape.)
fn slow_case(dir: &Path) {
    copy_case(&fixture("failing/wrong_value"), dir);
    rewrite_model(&dir.join("model.onnx"), |m| {
        for v in &mut m.graph.as_mut().unwrap().input {
            if let Some(onnx_idx_check::pb::type_proto::Value::TensorType(t)) =
                v.r#type.as_mut().and_then(|t| t.value.as_mut())
            {
                t.shape = None;
            }
        }
    });
    let first = dir.join("test_data_set_0");
    let mut data = read_tensor(&first.join("input_0.pb"));
    data.dims = vec![1, 4096];
    data.raw_data = (vec![0; 4096 * 4]).into();
    write_tensor(&first.join("input_0.pb"), &data);
    let mut indices = read_tensor(&first.join("input_1.pb"));
    indices.dims = vec![4096];
    indices.raw_data = (vec![0; 4096 * 8]).into();
    write_tensor(&first.join("input_1.pb"), &indices);
    for k in 1..300 {
        let ds = dir.join(format!("test_data_set_{k}"));
        std::fs::create_dir(&ds).unwrap();
        for f in ["input_0.pb", "input_1.pb", "output_0.pb"] {
            std::fs::hard_link(first.join(f), ds.join(f)).unwrap();
        }
    }
}

#[test]
fn a_case_over_the_timeout_is_errored_and_the_others_still_run() {
    let tmp = tempfile::tempdir().unwrap();
    slow_case(&tmp.path().join("slow"));
    copy_case(
        &fixture("passing/external_data_inside_the_directory"),
        &tmp.path().join("quick"),
    );
    let start = Instant::now();
    let (code, report) = run_json(tmp.path(), &["--timeout", "1"]);
    let took = start.elapsed();
    assert_eq!(code, 1, "{report:#}");
    let slow = crate::support::case(&report, "slow");
    assert_errored(slow, &["timed out", "after 1 s", "--timeout"]);
    // Cut at the limit, not after all 300 data sets.
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert_eq!(crate::support::case(&report, "quick")["status"], "passed");
    assert_eq!(crate::support::count(&report, "errored"), 1);
    assert_eq!(crate::support::count(&report, "passed"), 1);
}

#[test]
fn a_timeout_that_is_no_number_of_seconds_is_a_usage_error() {
    for bad in ["-1", "soon", "inf"] {
        let r = crate::support::run(["run", "testdata", &format!("--timeout={bad}")]);
        assert_eq!(r.code, 2, "{bad}: {}", r.stderr);
        assert!(r.stderr.contains("--timeout"), "{}", r.stderr);
    }
}

#[test]
fn a_time_limit_under_a_nanosecond_is_a_usage_error_not_no_limit() {
    // 1e-10 s rounds to a zero Duration, which elsewhere means "no limit".
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("found");
    let out = out.to_str().unwrap();
    for args in [
        &["run", "testdata", "--timeout=0.0000000001"][..],
        &["hunt", "--runtime", "ort", "--out", out, "--timeout=1e-10"][..],
        &["hunt", "--runtime", "ort", "--out", out, "--time=1e-10"][..],
        &[
            "minimize",
            "testdata/onnx-node/test_gather_0",
            "--runtime",
            "ort",
            "--timeout=1e-10",
        ][..],
    ] {
        let r = crate::support::run(args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("shorter than the clock's resolution"),
            "{args:?}: {}",
            r.stderr
        );
    }
}

#[cfg(target_os = "linux")]
#[test]
fn an_output_the_machine_cannot_allocate_errors_instead_of_aborting() {
    // Raising the limit to 2 TiB admits GatherGrad's 1 TiB output; the allocator then refuses it
    // (unless the kernel is told to overcommit without limit, mode 1).
    let mode = std::fs::read_to_string("/proc/sys/vm/overcommit_memory").unwrap_or_default();
    if mode.trim() == "1" {
        return;
    }
    let case = fixture("hostile/gather_grad_output_of_a_terabyte");
    let (code, report) = run_json(&case, &["--max-tensor-bytes", "2TiB"]);
    assert_eq!(code, 1);
    assert_errored(
        &cases(&report)[0],
        &["1099511627776 bytes", "this machine cannot allocate"],
    );
}

/// input_0.pb with its two floats in raw_data, then one more length-delimited field (`key`,
/// the field number and wire type 2 as a varint) that claims `claim` bytes, made a sparse file of
/// that size: a few KiB on disk.
fn with_sparse_field(w: &Workspace, key: &[u8], claim: u64) {
    let file = w.data_set().join("input_0.pb");
    let mut t = read_tensor(&file);
    t.data_location = DataLocation::Default as i32;
    t.external_data.clear();
    t.raw_data = TWO_FLOATS.to_vec().into();
    write_tensor(&file, &t);
    let mut bytes = std::fs::read(&file).unwrap();
    bytes.extend_from_slice(key);
    let mut n = claim;
    while n >= 0x80 {
        bytes.push((n as u8) | 0x80);
        n >>= 7;
    }
    bytes.push(n as u8);
    let len = bytes.len() as u64 + claim;
    std::fs::write(&file, bytes).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&file)
        .unwrap()
        .set_len(len)
        .unwrap();
}

#[test]
fn an_unknown_field_of_any_size_is_stepped_over_unread() {
    // 180 MB claimed by field 1000 (key 0xc2 0x3e) under a 20 MB limit: a field the decoder
    // skips costs nothing, so the case is judged on its tensor (a limit of 10 x 20 MB + 1 MiB
    // once let the file be read whole).
    let w = Workspace::new();
    with_sparse_field(&w, &[0xc2, 0x3e], 180_000_000);
    let c = w.run(&["--max-tensor-bytes", "20M"]);
    assert_eq!(c["status"], "passed", "{c:#}");
}

#[test]
fn a_data_field_larger_than_the_limit_allows_is_refused_unread() {
    // A second raw_data (field 9, key 0x4a) of 64 MiB for a 1 MiB limit: refused on its size.
    let w = Workspace::new();
    with_sparse_field(&w, &[0x4a], 64 << 20);
    let c = w.run(&["--max-tensor-bytes", "1M"]);
    assert_errored(
        &c,
        &[
            // Both raw_data fields: the two floats (10 bytes) and the claim (1 + 4 + 64 MiB).
            "input_0.pb: raw_data takes 67108879 bytes",
            // The limit: 1 MiB of elements and 1 MiB of room for keys and lengths.
            "more than the 2097152 bytes a tensor within the limit can need (--max-tensor-bytes)",
        ],
    );
}
