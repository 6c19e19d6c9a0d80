//! `run PATH --actual DIR`: judging another runtime's outputs. The cases are
//! `tests/fixtures/actual/cases/`, the runtime's outputs `tests/fixtures/actual/outputs/` (see
//! the fixtures README); every verdict, reason and mismatch below is worked by hand from the
//! descriptions in `xtask/src/fixtures.rs`.

use crate::support::{case, cases, count, fixtures, run, run_json, sha256_hex, ACTUAL};
use serde_json::{json, Value};
use std::path::PathBuf;

fn case_dir() -> PathBuf {
    fixtures().join(ACTUAL).join("cases")
}

fn outputs_dir() -> PathBuf {
    fixtures().join(ACTUAL).join("outputs")
}

/// `run actual/cases --actual actual/outputs --format json <extra>`.
fn judge(extra: &[&str]) -> (i32, Value) {
    let outputs = outputs_dir();
    let mut args = vec!["--actual", outputs.to_str().unwrap()];
    args.extend_from_slice(extra);
    run_json(&case_dir(), &args)
}

/// One case judged alone: the exit status and its report entry.
fn alone(name: &str) -> (i32, Value) {
    let filter = format!("^{name}$");
    let (code, report) = judge(&["--filter", &filter]);
    assert_eq!(count(&report, "total"), 1, "{report:#}");
    (code, cases(&report)[0].clone())
}

/// The single output comparison of a case's single data set.
fn output(c: &Value) -> &Value {
    let sets = c["data_sets"].as_array().unwrap();
    assert_eq!(sets.len(), 1, "{c:#}");
    let outputs = sets[0]["outputs"].as_array().unwrap();
    assert_eq!(outputs.len(), 1, "{c:#}");
    &outputs[0]
}

/// Every case of the tree: its verdict under --actual and words its reason must contain.
const EXPECTED: &[(&str, &str, &[&str])] = &[
    ("agrees", "passed", &[]),
    (
        "diagnosed_oob_clamped",
        "failed",
        &["the spec requires an error", "(oob-clamped)"],
    ),
    (
        "diagnosed_oob_wrapped",
        "failed",
        &["the spec requires an error", "(oob-wrapped)"],
    ),
    (
        "diagnosed_oob_zero_filled",
        "failed",
        &["the spec requires an error", "(oob-zero-filled)"],
    ),
    (
        "differs",
        "failed",
        &["1 of 4 elements differ; first at [1,0]: expected 5.0, got 7.0"],
    ),
    (
        "disputed_expected_output",
        "errored",
        &["reference disputes expected output"],
    ),
    (
        "missing_actual_output",
        "errored",
        &[
            "actual output",
            "missing_actual_output/test_data_set_0/output_0.pb is missing",
        ],
    ),
    ("no_expected_output_agrees", "passed", &[]),
    (
        "no_expected_output_differs",
        "failed",
        &["1 of 4 elements differ; first at [1,1]: expected 6.0, got 8.0"],
    ),
    ("spec_error_no_output", "passed", &[]),
    (
        "spec_error_unexplained",
        "failed",
        &["the spec requires an error"],
    ),
];

#[test]
fn every_case_of_the_actual_tree_gets_its_verdict() {
    let (code, report) = judge(&[]);
    assert_eq!(code, 1, "{report:#}");
    let listed: Vec<&str> = cases(&report)
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    let want: Vec<&str> = EXPECTED.iter().map(|(n, _, _)| *n).collect();
    assert_eq!(listed, want, "every case of actual/cases once, sorted");
    let mut wrong = Vec::new();
    for (name, status, words) in EXPECTED {
        let c = case(&report, name);
        if c["status"] != *status {
            wrong.push(format!("{name}: {} instead of {status}", c["status"]));
        }
        let reason = c["reason"].as_str().unwrap_or("");
        for w in *words {
            if !reason.contains(w) {
                wrong.push(format!("{name}: reason lacks {w:?}: {reason}"));
            }
        }
        if *status == "passed" && !c["reason"].is_null() {
            wrong.push(format!("{name}: a passed case with a reason: {reason}"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    let (p, f, e) = (3, 6, 2);
    assert_eq!(
        (
            count(&report, "passed"),
            count(&report, "failed"),
            count(&report, "errored")
        ),
        (p, f, e)
    );
}

#[test]
fn every_case_directory_has_its_expectation_above() {
    let mut on_disk: Vec<String> = std::fs::read_dir(case_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    let want: Vec<&str> = EXPECTED.iter().map(|(n, _, _)| *n).collect();
    assert_eq!(
        on_disk, want,
        "run `cargo xtask fixtures`, then update EXPECTED"
    );
}

#[test]
fn an_output_equal_to_the_expected_one_passes() {
    let (code, c) = alone("agrees");
    assert_eq!((code, &c["status"]), (0, &json!("passed")), "{c:#}");
    let o = output(&c);
    assert_eq!(o["status"], "passed");
    assert_eq!(o["mismatches"], 0);
    assert_eq!(o["actual_shape"], json!([2, 2]));
}

#[test]
fn a_differing_output_fails_with_its_mismatches_and_where_the_correct_value_comes_from() {
    let (code, c) = alone("differs");
    assert_eq!(code, 1);
    assert_eq!(
        c["reason"],
        "test_data_set_0: output 'output': 1 of 4 elements differ; first at [1,0]: expected 5.0, got 7.0"
    );
    let o = output(&c);
    assert_eq!(o["status"], "failed");
    assert_eq!(o["comparison"], "exact");
    assert_eq!(o["mismatches"], 1);
    // Under --actual, "expected" is the correct value and "actual" the runtime's.
    assert_eq!(
        o["first_mismatches"],
        json!([{
            "index": [1, 0],
            "expected": "5.0",
            "actual": "7.0",
            "source": "data[2,0], from indices[1] = 2 on axis 0"
        }])
    );
    // 7 is no known bug's result.
    assert_eq!(o["diagnosis"], Value::Null);
}

#[test]
fn without_an_expected_file_the_output_is_compared_with_onnx_idx_checks_result() {
    let (code, c) = alone("no_expected_output_agrees");
    assert_eq!((code, &c["status"]), (0, &json!("passed")), "{c:#}");
    let (code, c) = alone("no_expected_output_differs");
    assert_eq!((code, &c["status"]), (1, &json!("failed")), "{c:#}");
    let o = output(&c);
    assert_eq!(
        o["first_mismatches"],
        json!([{
            "index": [1, 1],
            "expected": "6.0",
            "actual": "8.0",
            "source": "data[2,1], from indices[1] = 2 on axis 0"
        }])
    );
    // Without --actual the same case is malformed: its expected output is missing.
    let (code, report) = run_json(&case_dir().join("no_expected_output_agrees"), &[]);
    assert_eq!(code, 1);
    let c = &cases(&report)[0];
    assert_eq!(c["status"], "errored");
    assert!(
        c["reason"]
            .as_str()
            .unwrap()
            .contains("test_data_set_0/output_0.pb is missing"),
        "{c:#}"
    );
}

#[test]
fn an_expected_output_onnx_idx_check_disputes_errors_the_case() {
    let (code, c) = alone("disputed_expected_output");
    assert_eq!(code, 1);
    assert_eq!(c["status"], "errored");
    assert_eq!(
        c["reason"],
        "test_data_set_0: reference disputes expected output: output 'output' of \
         test_data_set_0/output_0.pb differs from onnx-idx-check's result: 1 of 4 elements \
         differ; first at [1,0]: expected 7.0, got 5.0; the runtime agrees with onnx-idx-check; \
         at [1,0]: file 7.0, onnx-idx-check 5.0, runtime 5.0"
    );
    // Neither side is trusted: nothing is compared with the runtime's output.
    assert_eq!(c["data_sets"][0]["outputs"], json!([]));
}

/// Report #25: a disputed expected output says which side the runtime's output agrees with,
/// and the three values at the first disputed element. Here the runtime wrote the file's
/// values (a copy of the expected output_0.pb, 7 at [1,0] where the gather gives 5).
#[test]
fn report_25_a_dispute_shows_the_file_the_reference_and_the_runtime() {
    let tmp = tempfile::tempdir().unwrap();
    let case = fixtures().join("actual/cases/disputed_expected_output");
    let out = tmp.path().join("disputed_expected_output/test_data_set_0");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::copy(
        case.join("test_data_set_0/output_0.pb"),
        out.join("output_0.pb"),
    )
    .unwrap();
    let (code, report) = run_json(
        &fixtures().join("actual/cases"),
        &[
            "--filter",
            "^disputed_expected_output$",
            "--actual",
            tmp.path().to_str().unwrap(),
        ],
    );
    assert_eq!(code, 1);
    let reason = cases(&report)[0]["reason"].as_str().unwrap();
    assert!(
        reason.ends_with(
            "first at [1,0]: expected 7.0, got 5.0; the runtime agrees with the file; at [1,0]: \
             file 7.0, onnx-idx-check 5.0, runtime 7.0"
        ),
        "{reason}"
    );
}

#[test]
fn a_missing_actual_output_errors_naming_its_path() {
    let (code, c) = alone("missing_actual_output");
    assert_eq!(code, 1);
    let path = outputs_dir().join("missing_actual_output/test_data_set_0/output_0.pb");
    assert_eq!(
        c["reason"],
        format!(
            "test_data_set_0: actual output {} is missing",
            path.display()
        )
    );
    // The path is the one given on the command line, relative when it was relative.
    let r = run([
        "run",
        "tests/fixtures/actual/cases",
        "--actual",
        "tests/fixtures/actual/outputs",
        "--filter",
        "^missing_actual_output$",
        "--color",
        "never",
    ]);
    r.expect_code(1);
    assert!(
        r.stdout.contains(
            "actual output tests/fixtures/actual/outputs/missing_actual_output/test_data_set_0/output_0.pb is missing"
        ),
        "{}",
        r.stdout
    );
}

#[test]
fn an_output_where_the_spec_requires_an_error_fails_with_a_diagnosis_when_one_fits() {
    for (name, node, why, diagnosis) in [
        (
            "diagnosed_oob_wrapped",
            "'diagnosed_oob_wrapped' (Gather-13)",
            "indices[0] = 3 is out of range [-3, 2] for axis 0 (size 3)",
            Some("out-of-range indices were wrapped modulo the axis size (oob-wrapped)"),
        ),
        (
            "diagnosed_oob_clamped",
            "'diagnosed_oob_clamped' (GatherElements-13)",
            "indices[1,0] = 2 is out of range [-2, 1] for axis 0 (size 2)",
            Some("out-of-range indices were clamped to the nearest valid index (oob-clamped)"),
        ),
        (
            "diagnosed_oob_zero_filled",
            "'diagnosed_oob_zero_filled' (ScatterElements-13)",
            "indices[0,1] = 5 is out of range [-5, 4] for axis 1 (size 5)",
            Some(
                "out-of-range indices produced zeros (or their updates were dropped) (oob-zero-filled)",
            ),
        ),
        (
            "spec_error_unexplained",
            "'spec_error_unexplained' (Gather-13)",
            "indices[0] = 3 is out of range [-3, 2] for axis 0 (size 3)",
            None,
        ),
    ] {
        let (code, c) = alone(name);
        assert_eq!((code, &c["status"]), (1, &json!("failed")), "{c:#}");
        let mut want = format!(
            "test_data_set_0: output 'output': the spec requires an error for these inputs \
             (node {node}: {why}), but the runtime produced an output"
        );
        if let Some(d) = diagnosis {
            want.push_str(&format!("; diagnosis: {d}"));
        }
        assert_eq!(c["reason"], want, "{name}");
        let o = output(&c);
        assert_eq!(o["status"], "failed", "{name}");
        assert_eq!(o["mismatches"], 0, "{name}");
        assert_eq!(o["first_mismatches"], json!([]), "{name}");
        let id = diagnosis.map(|d| {
            d.rsplit_once('(')
                .unwrap()
                .1
                .trim_end_matches(')')
                .to_string()
        });
        assert_eq!(o["diagnosis"], json!(id), "{name}");
    }
}

/// A runtime that refuses inputs the spec forbids writes no output: that is what the spec asks
/// for, so the data set passes (with no outputs to compare).
#[test]
fn no_output_where_the_spec_requires_an_error_passes() {
    let (code, c) = alone("spec_error_no_output");
    assert_eq!(code, 0);
    assert_eq!(c["status"], "passed");
    assert_eq!(c["data_sets"][0]["outputs"], json!([]));
}

#[test]
fn the_digests_cover_the_runtimes_outputs_by_their_path() {
    let (_, c) = alone("differs");
    let dir = case_dir().join("differs");
    let actual = outputs_dir().join("differs/test_data_set_0/output_0.pb");
    let want: Vec<Value> = [
        ("model.onnx".to_string(), dir.join("model.onnx")),
        (
            "test_data_set_0/input_0.pb".to_string(),
            dir.join("test_data_set_0/input_0.pb"),
        ),
        (
            "test_data_set_0/input_1.pb".to_string(),
            dir.join("test_data_set_0/input_1.pb"),
        ),
        (
            "test_data_set_0/output_0.pb".to_string(),
            dir.join("test_data_set_0/output_0.pb"),
        ),
        (actual.display().to_string(), actual.clone()),
    ]
    .into_iter()
    .map(|(path, file)| json!({"path": path, "sha256": sha256_hex(&file)}))
    .collect();
    assert_eq!(c["files"], json!(want));
}

/// New-user report #12: a missing `--actual` directory was called "not a directory".
#[test]
fn report_12_actual_must_be_an_existing_directory_and_excludes_pending() {
    let r = run([
        "run",
        "tests/fixtures/actual/cases",
        "--actual",
        "tests/fixtures/actual/no-such-dir",
    ]);
    r.expect_code(2);
    assert!(
        r.stderr
            .contains("--actual tests/fixtures/actual/no-such-dir: does not exist (did the runtime write anything?)"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    let tmp = tempfile::tempdir().unwrap();
    let r = run([
        "run",
        "tests/fixtures/actual/cases",
        "--actual",
        "tests/fixtures/actual/outputs",
        "--pending",
        tmp.path().to_str().unwrap(),
    ]);
    r.expect_code(2);
    assert!(r.stderr.contains("--pending"), "{}", r.stderr);
}

/// Where the spec requires an error there is no expected tensor, but the output is reported
/// with an empty expected shape (`runner::spec_error_output` sets `expected_shape` to `[]`):
/// the details read "expected float [], got float [2, 2]", i.e. a float scalar was expected,
/// and JSON says `"expected_shape": []` (a rank-0 shape) with the runtime's dtype as `dtype`.
#[test]
fn an_output_where_the_spec_requires_an_error_is_not_compared_with_a_scalar() {
    let r = run([
        "run",
        "tests/fixtures/actual/cases",
        "--actual",
        "tests/fixtures/actual/outputs",
        "--filter",
        "^diagnosed_oob_wrapped$",
        "--color",
        "never",
    ]);
    r.expect_code(1);
    assert!(
        !r.stdout.contains("expected float [], got float [2, 2]"),
        "{}",
        r.stdout
    );
}

/// New-user report #8: with reduction "none" the spec says indices should not hold duplicates,
/// yet a runtime that refused such input was errored (`actual output ... is missing`), unlike
/// one refusing out-of-range indices. Refusing passes now; an output that differs from D7 (the
/// last write wins) stays failed with its diagnosis.
#[test]
fn report_8_a_runtime_may_refuse_duplicate_indices_under_reduction_none() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = tmp.path().join("cases");
    let dup = cases.join("dup");
    crate::support::copy_case(&fixtures().join("failing/diagnosed_first_write_wins"), &dup);
    // Its expected file is what a first-write-wins runtime writes: make it that runtime's
    // output, and leave the case without an expected file (our D7 result is the reference).
    let fww = tmp.path().join("first_write_wins/dup/test_data_set_0");
    std::fs::create_dir_all(&fww).unwrap();
    std::fs::rename(
        dup.join("test_data_set_0/output_0.pb"),
        fww.join("output_0.pb"),
    )
    .unwrap();
    let refused = tmp.path().join("refused");
    std::fs::create_dir(&refused).unwrap();

    let (code, report) = run_json(&cases, &["--actual", refused.to_str().unwrap()]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(case(&report, "dup")["status"], "passed", "{report:#}");

    let actual = tmp.path().join("first_write_wins");
    let (code, report) = run_json(&cases, &["--actual", actual.to_str().unwrap()]);
    assert_eq!(code, 1);
    let c = case(&report, "dup");
    assert_eq!(c["status"], "failed", "{c:#}");
    assert_eq!(output(c)["diagnosis"], "first-write-wins", "{c:#}");
}

/// New-user report #13: with a case directory itself as PATH, the case was named by its
/// directory and `--pending` wrote under `DIR/<name>/`, but `--actual` looked in `DIR/` itself.
/// All three now follow the name.
#[test]
fn report_13_a_case_given_as_path_maps_by_its_name_for_actual_and_pending() {
    let tmp = tempfile::tempdir().unwrap();
    let case_dir = fixtures()
        .join(ACTUAL)
        .join("cases/no_expected_output_differs");
    // The runtime's output, mirrored under the case's name.
    let actual = tmp.path().join("actual");
    crate::support::copy_case(
        &outputs_dir().join("no_expected_output_differs"),
        &actual.join("no_expected_output_differs"),
    );
    let (code, report) = run_json(&case_dir, &["--actual", actual.to_str().unwrap()]);
    assert_eq!(code, 1);
    let c = case(&report, "no_expected_output_differs");
    assert_eq!(c["status"], "failed", "{c:#}");
    // Where it looked is in the digests: DIR/<name>/test_data_set_0/output_0.pb.
    let files = c["files"].to_string();
    assert!(
        files.contains("actual/no_expected_output_differs/test_data_set_0/output_0.pb"),
        "{files}"
    );

    // --pending writes under the same name.
    let pending = tmp.path().join("pending");
    // (the case has no expected output: our result is a new snapshot).
    run_json(&case_dir, &["--pending", pending.to_str().unwrap()]);
    assert!(pending
        .join("no_expected_output_differs/test_data_set_0/output_0.pb.new")
        .is_file());
}

/// The `.npy` (format 1.0) of a float tensor, as `np.save` writes it.
fn npy_f32(dims: &[i64], values: &[f32]) -> Vec<u8> {
    let shape: Vec<String> = dims.iter().map(i64::to_string).collect();
    let shape = match shape.len() {
        1 => format!("({},)", shape[0]),
        _ => format!("({})", shape.join(", ")),
    };
    let mut header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend(values.iter().flat_map(|v| v.to_le_bytes()));
    out
}

/// CRC-32 (IEEE), bitwise, for the zip archives below.
fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = (crc >> 1) ^ (0xEDB8_8320 & (crc & 1).wrapping_neg());
        }
    }
    !crc
}

/// A zip archive of `members`, stored (as `np.savez`) or deflated (as `np.savez_compressed`).
fn zip(members: &[(&str, Vec<u8>)], deflate: bool) -> Vec<u8> {
    let mut z = Vec::new();
    let mut central = Vec::new();
    for (name, data) in members {
        let stored = if deflate {
            miniz_oxide::deflate::compress_to_vec(data, 6)
        } else {
            data.clone()
        };
        let method: u16 = if deflate { 8 } else { 0 };
        let offset = z.len() as u32;
        let fields = |out: &mut Vec<u8>| {
            out.extend_from_slice(&[20, 0, 0, 0]);
            out.extend_from_slice(&method.to_le_bytes());
            out.extend_from_slice(&[0, 0, 0x21, 0]);
            out.extend_from_slice(&crc32(data).to_le_bytes());
            out.extend_from_slice(&(stored.len() as u32).to_le_bytes());
            out.extend_from_slice(&(data.len() as u32).to_le_bytes());
            out.extend_from_slice(&(name.len() as u16).to_le_bytes());
            out.extend_from_slice(&[0, 0]);
        };
        z.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        fields(&mut z);
        z.extend_from_slice(name.as_bytes());
        z.extend_from_slice(&stored);
        central.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        central.extend_from_slice(&[20, 0]);
        fields(&mut central);
        // Comment length, disk, attributes.
        central.extend_from_slice(&[0; 10]);
        central.extend_from_slice(&offset.to_le_bytes());
        central.extend_from_slice(name.as_bytes());
    }
    let cd_offset = z.len() as u32;
    z.extend_from_slice(&central);
    z.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    z.extend_from_slice(&[0, 0, 0, 0]);
    let n = members.len() as u16;
    z.extend_from_slice(&n.to_le_bytes());
    z.extend_from_slice(&n.to_le_bytes());
    z.extend_from_slice(&(central.len() as u32).to_le_bytes());
    z.extend_from_slice(&cd_offset.to_le_bytes());
    z.extend_from_slice(&[0, 0]);
    z
}

/// A tree for `case` whose output 0 is `files` (name, bytes) in test_data_set_0; the report.
fn judge_tree(case: &str, files: &[(&str, Vec<u8>)]) -> (i32, Value, tempfile::TempDir) {
    let tmp = tempfile::tempdir().unwrap();
    let ds = tmp.path().join(case).join("test_data_set_0");
    std::fs::create_dir_all(&ds).unwrap();
    for (name, bytes) in files {
        std::fs::write(ds.join(name), bytes).unwrap();
    }
    let filter = format!("^{case}$");
    let (code, report) = run_json(
        &case_dir(),
        &[
            "--filter",
            &filter,
            "--actual",
            tmp.path().to_str().unwrap(),
        ],
    );
    assert_eq!(count(&report, "total"), 1, "{report:#}");
    (code, cases(&report)[0].clone(), tmp)
}

/// The runtime's output 0 of `case` in the fixture tree, as a `.npy`.
fn as_npy(case: &str) -> Vec<u8> {
    let (dims, values) =
        crate::support::read_floats(&outputs_dir().join(case).join("test_data_set_0/output_0.pb"));
    npy_f32(&dims, &values)
}

#[test]
fn npy_outputs_are_judged_like_pb_ones() {
    let (code, c, tmp) = judge_tree("agrees", &[("output_0.npy", as_npy("agrees"))]);
    assert_eq!((code, &c["status"]), (0, &json!("passed")), "{c:#}");
    assert_eq!(output(&c)["actual_shape"], json!([2, 2]));
    // The digests cover the .npy by its path, as they do a .pb.
    let npy = tmp.path().join("agrees/test_data_set_0/output_0.npy");
    let last = c["files"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        last,
        json!({"path": npy.display().to_string(), "sha256": sha256_hex(&npy)})
    );

    // A wrong value: the same failure, mismatch and source as with the .pb.
    let (code, c, _tmp) = judge_tree("differs", &[("output_0.npy", as_npy("differs"))]);
    assert_eq!(code, 1);
    let (_, pb) = alone("differs");
    assert_eq!(c["reason"], pb["reason"]);
    assert_eq!(
        c["reason"],
        "test_data_set_0: output 'output': 1 of 4 elements differ; first at [1,0]: expected 5.0, got 7.0"
    );
    assert_eq!(
        output(&c)["first_mismatches"],
        output(&pb)["first_mismatches"]
    );
}

#[test]
fn npz_outputs_stored_or_compressed_by_position_or_by_name() {
    let good = as_npy("agrees");
    for deflate in [false, true] {
        for member in ["output_0.npy", "output.npy"] {
            let archive = zip(&[(member, good.clone())], deflate);
            let (code, c, _tmp) = judge_tree("agrees", &[("outputs.npz", archive)]);
            assert_eq!(
                (code, &c["status"]),
                (0, &json!("passed")),
                "{member} deflate={deflate}: {c:#}"
            );
        }
        let archive = zip(&[("output_0.npy", as_npy("differs"))], deflate);
        let (code, c, _tmp) = judge_tree("differs", &[("outputs.npz", archive)]);
        assert_eq!((code, &c["status"]), (1, &json!("failed")), "{c:#}");
    }
    // An archive without the output: missing, named as before.
    let archive = zip(&[("other.npy", good)], true);
    let (code, c, tmp) = judge_tree("agrees", &[("outputs.npz", archive)]);
    assert_eq!((code, &c["status"]), (1, &json!("errored")), "{c:#}");
    let pb = tmp.path().join("agrees/test_data_set_0/output_0.pb");
    assert_eq!(
        c["reason"],
        format!("test_data_set_0: actual output {} is missing", pb.display())
    );
}

#[test]
fn a_pb_and_an_npy_for_one_output_are_ambiguous() {
    let pb = std::fs::read(outputs_dir().join("agrees/test_data_set_0/output_0.pb")).unwrap();
    let (code, c, tmp) = judge_tree(
        "agrees",
        &[("output_0.pb", pb), ("output_0.npy", as_npy("agrees"))],
    );
    assert_eq!((code, &c["status"]), (1, &json!("errored")), "{c:#}");
    let dir = tmp.path().join("agrees/test_data_set_0");
    assert_eq!(
        c["reason"],
        format!(
            "test_data_set_0: actual output 0 is ambiguous: both {} and {} exist",
            dir.join("output_0.pb").display(),
            dir.join("output_0.npy").display()
        )
    );
}

#[test]
fn a_pb_or_an_npy_beside_an_npz_holding_the_output_is_ambiguous() {
    let pb = std::fs::read(outputs_dir().join("agrees/test_data_set_0/output_0.pb")).unwrap();
    let wrong = zip(&[("output_0.npy", as_npy("differs"))], true);
    let right = zip(&[("output.npy", as_npy("agrees"))], false);
    // Either way round, a right single file does not hide a wrong archive, nor the reverse.
    for (single, bytes) in [("output_0.pb", pb), ("output_0.npy", as_npy("agrees"))] {
        for (archive, member) in [(&wrong, "output_0"), (&right, "output")] {
            let (code, c, tmp) = judge_tree(
                "agrees",
                &[(single, bytes.clone()), ("outputs.npz", archive.clone())],
            );
            assert_eq!((code, &c["status"]), (1, &json!("errored")), "{c:#}");
            let dir = tmp.path().join("agrees/test_data_set_0");
            assert_eq!(
                c["reason"],
                format!(
                    "test_data_set_0: actual output 0 is ambiguous: both {} and {}:{member} exist",
                    dir.join(single).display(),
                    dir.join("outputs.npz").display()
                )
            );
        }
    }
    // An archive that does not hold the output is no rival: the single file is judged.
    let other = zip(&[("other.npy", as_npy("differs"))], true);
    let (code, c, _tmp) = judge_tree(
        "agrees",
        &[("output_0.npy", as_npy("agrees")), ("outputs.npz", other)],
    );
    assert_eq!((code, &c["status"]), (0, &json!("passed")), "{c:#}");
}

#[test]
fn a_malformed_npy_or_npz_errors_naming_the_file_and_the_array() {
    let mut cut = as_npy("agrees");
    cut.truncate(cut.len() - 3);
    let (code, c, tmp) = judge_tree("agrees", &[("output_0.npy", cut.clone())]);
    assert_eq!((code, &c["status"]), (1, &json!("errored")), "{c:#}");
    let npy = tmp.path().join("agrees/test_data_set_0/output_0.npy");
    assert_eq!(
        c["reason"],
        format!(
            "test_data_set_0: {}: descr '<f4' of shape [2, 2] needs 16 bytes of data after the header, the file has 13",
            npy.display()
        )
    );
    let (code, c, tmp) = judge_tree(
        "agrees",
        &[("outputs.npz", zip(&[("output.npy", cut)], true))],
    );
    assert_eq!((code, &c["status"]), (1, &json!("errored")), "{c:#}");
    let npz = tmp.path().join("agrees/test_data_set_0/outputs.npz");
    assert_eq!(
        c["reason"],
        format!(
            "test_data_set_0: {}: array 'output': descr '<f4' of shape [2, 2] needs 16 bytes of data after the header, the file has 13",
            npz.display()
        )
    );
}
