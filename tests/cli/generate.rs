//! `generate OUTDIR` and `generate --verify OUTDIR`. The generated expected outputs come from the
//! tool's own kernels, so they are checked here against the naive reference of the fuzz crate
//! (`fuzz/src/reference.rs`, written from SEMANTICS.md one coordinate at a time, sharing no code
//! with the kernels), case by case; the rest runs the real binary on the suite it wrote.

use crate::reference::{self, Attr, AttrValue, Op, Outcome, RTensor, Word};
use crate::support::{files_under, run, sha256_hex};
use onnx_idx_check::internal::load::{tensor_from_proto, TensorContext};
use onnx_idx_check::internal::pb::{ModelProto, TensorProto};
use onnx_idx_check::tensor::{Class, DType};
use prost::Message;
use serde_json::Value;
use std::path::Path;

/// Generates a suite into `dir` with `extra` arguments and returns its parsed manifest.
fn generate(dir: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["generate".to_owned(), dir.display().to_string()];
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    let r = run(&args);
    r.expect_code(0);
    assert!(r.stdout.starts_with("wrote "), "{}", r.stdout);
    serde_json::from_str(&std::fs::read_to_string(dir.join("MANIFEST.json")).unwrap()).unwrap()
}

/// The quick suite with the default seed, generated once per test run for the tests that only
/// read it (writing its 3,000-odd files is most of these tests' time), in the build's scratch
/// space, over the previous run's suite: its directory and manifest.
fn quick_suite() -> (&'static Path, &'static Value) {
    static SUITE: std::sync::OnceLock<(std::path::PathBuf, Value)> = std::sync::OnceLock::new();
    let (dir, m) = SUITE.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("generate-quick");
        let m = generate(&dir, &[]);
        (dir, m)
    });
    (dir, m)
}

fn read_tensor(path: &Path) -> onnx_idx_check::Tensor {
    let p = TensorProto::decode(std::fs::read(path).unwrap().as_slice()).unwrap();
    let ctx = TensorContext {
        base_dir: path.parent().unwrap(),
        max_bytes: 1 << 30,
    };
    tensor_from_proto(&p, &ctx).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The reference's operator for a manifest entry (this file's own table, not the registry's).
fn reference_op(op: &str, domain: &str) -> Op {
    match (domain, op) {
        ("", "Gather") => Op::Gather,
        ("", "GatherElements") => Op::GatherElements,
        ("", "GatherND") => Op::GatherND,
        ("", "Scatter") => Op::Scatter,
        ("", "ScatterElements") => Op::ScatterElements,
        ("", "ScatterND") => Op::ScatterND,
        ("", "TensorScatter") => Op::TensorScatter,
        ("org.openvinotoolkit", "Gather") => Op::OvGather,
        _ => panic!("the reference does not model {domain}.{op}"),
    }
}

/// Whether the element bits of float dtype `d` are a NaN.
fn is_nan(d: DType, w: &Word) -> bool {
    let Word::Bits(b) = w else { return false };
    match d {
        DType::Float16 => b & 0x7fff > 0x7c00,
        DType::Bfloat16 => b & 0x7fff > 0x7f80,
        DType::Float => f32::from_bits(*b as u32).is_nan(),
        DType::Double => f64::from_bits(*b).is_nan(),
        _ => false,
    }
}

/// Exact comparison, except that any NaN equals any NaN where a reduction computed the value.
fn same(expected: &RTensor, actual: &RTensor, arithmetic: bool) -> bool {
    expected.dtype == actual.dtype
        && expected.shape == actual.shape
        && expected.words.iter().zip(&actual.words).all(|(a, b)| {
            a == b
                || arithmetic
                    && expected.dtype.class() == Class::Float
                    && is_nan(expected.dtype, a)
                    && is_nan(expected.dtype, b)
        })
}

#[test]
fn every_case_of_the_quick_suite_agrees_with_the_naive_reference() {
    let (dir, m) = quick_suite();
    let cases = m["cases"].as_object().unwrap();
    let (mut checked, mut errored, mut unmodelled) = (0, 0, Vec::new());
    for (name, entry) in cases {
        let case = dir.join(name);
        let model =
            ModelProto::decode(std::fs::read(case.join("model.onnx")).unwrap().as_slice()).unwrap();
        let graph = model.graph.as_ref().unwrap();
        let node = &graph.node[0];
        assert_eq!(node.op_type, entry["op"], "{name}");
        let opset = model.opset_import[0].version;
        assert_eq!(opset, entry["opset"].as_i64().unwrap(), "{name}");
        let ds = case.join("test_data_set_0");
        let inputs: Vec<_> = (0..node.input.len())
            .map(|k| read_tensor(&ds.join(format!("input_{k}.pb"))))
            .collect();
        // complex128 is the one dtype the reference does not model.
        if inputs.iter().any(|t| t.dtype() == DType::Complex128) {
            unmodelled.push(name.clone());
            continue;
        }
        let attrs: Vec<Attr> = node
            .attribute
            .iter()
            .map(|a| Attr {
                name: a.name.clone(),
                value: if a.r#type == 3 {
                    AttrValue::Str(a.s.clone())
                } else {
                    AttrValue::Int(a.i)
                },
            })
            .collect();
        let rin: Vec<Option<RTensor>> = inputs
            .iter()
            .map(|t| Some(RTensor::from_tensor(t)))
            .collect();
        let op = reference_op(
            entry["op"].as_str().unwrap(),
            entry["domain"].as_str().unwrap(),
        );
        let outcome = reference::evaluate(op, opset, &attrs, &rin, 1 << 30);
        match (entry["expected"].as_str().unwrap(), outcome) {
            ("passed", Outcome::Ok { out, arithmetic }) => {
                let file = read_tensor(&ds.join("output_0.pb"));
                let written = RTensor::from_tensor(&file);
                assert!(
                    same(&out, &written, arithmetic),
                    "{name}: the suite's output differs from the reference\n  suite:     {:?} {:?} {:?}\n  reference: {:?} {:?} {:?}",
                    written.dtype, written.shape, written.words, out.dtype, out.shape, out.words
                );
                checked += 1;
            }
            ("errored", Outcome::Invalid(why)) => {
                assert!(
                    !ds.join("output_0.pb").exists(),
                    "{name} has an output file"
                );
                assert!(
                    entry["error"].is_string(),
                    "{name}: no error in the manifest ({why})"
                );
                errored += 1;
            }
            (expected, outcome) => {
                panic!("{name}: the manifest says {expected}, the reference {outcome:?}")
            }
        }
    }
    assert!(checked > 500, "only {checked} valid cases checked");
    assert!(errored > 50, "only {errored} errored cases checked");
    // Only complex128 cases go unchecked, and not many.
    assert!(
        unmodelled.iter().all(|n| n.contains("_complex128_")) && unmodelled.len() < 40,
        "{unmodelled:?}"
    );
}

#[test]
fn run_with_the_suite_s_expectations_exits_0() {
    let (dir, m) = quick_suite();
    let exp = dir.join("expectations.toml");
    let r = run([
        "run".as_ref(),
        dir.as_os_str(),
        "--expectations".as_ref(),
        exp.as_os_str(),
        "--format".as_ref(),
        "json".as_ref(),
    ]);
    let report = r.expect_code(0).json();
    let cases = m["cases"].as_object().unwrap();
    let errored = cases
        .values()
        .filter(|c| c["expected"] == "errored")
        .count();
    assert_eq!(report["summary"]["total"], cases.len());
    assert_eq!(report["summary"]["expected_failures"], errored);
    assert_eq!(report["summary"]["passed"], cases.len() - errored);
    // Without the expectations, exactly the errored cases fail the run.
    let r = run([
        "run".as_ref(),
        dir.as_os_str(),
        "--format".as_ref(),
        "json".as_ref(),
    ]);
    assert_eq!(r.expect_code(1).json()["summary"]["errored"], errored);
}

#[test]
fn the_same_seed_writes_the_same_bytes_and_another_seed_other_values() {
    // A second generation of the whole quick suite, with the seed of the shared one.
    let (a, _) = quick_suite();
    let tmp = tempfile::tempdir().unwrap();
    let b = tmp.path().join("b");
    generate(&b, &["--seed", "0"]);
    let files = files_under(a);
    assert_eq!(files, files_under(&b));
    for f in &files {
        assert_eq!(
            std::fs::read(a.join(f)).unwrap(),
            std::fs::read(b.join(f)).unwrap(),
            "{}",
            f.display()
        );
    }
    // Another seed: the same cases (of one operator, to keep the test short), other values.
    let (c, d) = (tmp.path().join("c"), tmp.path().join("d"));
    generate(&c, &["--seed", "0", "--ops", "Gather"]);
    let md = generate(&d, &["--seed", "8", "--ops", "Gather"]);
    assert_eq!(md["seed"], 8);
    assert_eq!(
        files_under(&c),
        files_under(&d),
        "the seed changes values, not cases"
    );
    let changed = files_under(&c)
        .iter()
        .filter(|f| std::fs::read(c.join(f)).unwrap() != std::fs::read(d.join(f)).unwrap())
        .count();
    assert!(
        changed > files_under(&c).len() / 2,
        "only {changed} files differ"
    );
}

#[test]
fn the_manifest_lists_every_file_with_its_sha256() {
    let (dir, m) = quick_suite();
    assert_eq!(m["schema_version"], 1);
    assert_eq!(m["tool"], "onnx-idx-check");
    assert_eq!(m["profile"], "quick");
    let mut listed = vec![Path::new("MANIFEST.json").to_path_buf()];
    for (f, sha) in m["files"].as_object().unwrap() {
        assert_eq!(sha_of(&dir.join(f)), *sha);
        listed.push(f.into());
    }
    for (name, entry) in m["cases"].as_object().unwrap() {
        for key in [
            "op", "domain", "version", "opset", "dtype", "traits", "expected", "files",
        ] {
            assert!(!entry[key].is_null(), "{name}: no {key}");
        }
        for (f, sha) in entry["files"].as_object().unwrap() {
            assert_eq!(sha_of(&dir.join(name).join(f)), *sha, "{name}/{f}");
            listed.push(Path::new(name).join(f));
        }
    }
    listed.sort();
    assert_eq!(listed, files_under(dir));
}

fn sha_of(path: &Path) -> String {
    sha256_hex(path)
}

#[test]
fn verify_passes_on_a_fresh_suite_and_names_every_changed_missing_or_added_file() {
    // Its own suite (of one operator), since this test changes it.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("suite");
    generate(&dir, &["--ops", "Gather"]);
    let verify = || run(["generate".as_ref(), "--verify".as_ref(), dir.as_os_str()]);
    let r = verify();
    assert!(
        r.expect_code(0).stdout.contains(": verified "),
        "{}",
        r.stdout
    );
    // One byte changed.
    let changed = dir.join("test_gather_13_float_basic/test_data_set_0/input_1.pb");
    let mut bytes = std::fs::read(&changed).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&changed, bytes).unwrap();
    let r = verify();
    assert!(
        r.expect_code(1)
            .stdout
            .contains("changed: test_gather_13_float_basic/test_data_set_0/input_1.pb (sha256 "),
        "{}",
        r.stdout
    );
    // A file removed and one added.
    std::fs::remove_file(dir.join("test_gather_13_float_basic/model.onnx")).unwrap();
    std::fs::write(dir.join("stray.txt"), "x").unwrap();
    let out = verify().expect_code(1).stdout.clone();
    assert!(
        out.contains("missing: test_gather_13_float_basic/model.onnx"),
        "{out}"
    );
    assert!(out.contains("not in the manifest: stray.txt"), "{out}");
    assert!(out.contains("3 problem(s)"), "{out}");
}

#[test]
fn coverage_of_the_suite_misses_no_trait() {
    let (dir, _) = quick_suite();
    let r = run([
        "coverage".as_ref(),
        dir.as_os_str(),
        "--format".as_ref(),
        "json".as_ref(),
    ]);
    let cov = r.expect_code(0).json();
    let rows = cov["rows"].as_array().unwrap();
    assert!(rows.len() >= 9, "{rows:?}");
    for row in rows {
        assert_eq!(row["missing"], Value::Array(vec![]), "{}", row["op"]);
    }
}

#[test]
fn ops_limits_the_suite_and_unknown_ops_are_usage_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let m = generate(&tmp.path().join("g"), &["--ops", "GatherElements"]);
    assert_eq!(m["ops"], serde_json::json!(["GatherElements"]));
    let cases = m["cases"].as_object().unwrap();
    assert!(cases.values().all(|c| c["op"] == "GatherElements"));
    assert!(!cases.is_empty());
    let out = tmp.path().join("x");
    for (ops, named) in [
        ("Gather,Gaher", "'Gaher'"),
        ("GatherND", "GatherND is not generated yet"),
    ] {
        let r = run([
            "generate".as_ref(),
            out.as_os_str(),
            "--ops".as_ref(),
            ops.as_ref(),
        ]);
        assert!(r.expect_code(2).stderr.contains(named), "{}", r.stderr);
        assert!(!out.exists(), "OUTDIR created for a bad --ops");
    }
}

#[test]
fn outdir_must_be_new_empty_or_a_previous_suite() {
    let tmp = tempfile::tempdir().unwrap();
    // Someone else's directory is refused and left alone.
    let theirs = tmp.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::fs::write(theirs.join("notes.txt"), "mine").unwrap();
    let r = run(["generate".as_ref(), theirs.as_os_str()]);
    assert!(
        r.expect_code(2)
            .stderr
            .contains("is not a suite written by generate"),
        "{}",
        r.stderr
    );
    assert_eq!(
        std::fs::read_to_string(theirs.join("notes.txt")).unwrap(),
        "mine"
    );
    // A file.
    let file = theirs.join("notes.txt");
    let r = run(["generate".as_ref(), file.as_os_str()]);
    assert!(
        r.expect_code(2).stderr.contains("is not a directory"),
        "{}",
        r.stderr
    );
    // An empty directory, then the suite written there, are fine; a file added to it is not.
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    generate(&empty, &["--ops", "Gather"]);
    let m = generate(&empty, &["--ops", "GatherElements"]);
    assert!(m["cases"]
        .as_object()
        .unwrap()
        .keys()
        .all(|k| k.starts_with("test_gather_elements_")));
    assert!(
        files_under(&empty)
            .iter()
            .all(|f| !f.starts_with("test_gather_1_")),
        "the old suite's cases were not removed"
    );
    std::fs::write(empty.join("mine.txt"), "x").unwrap();
    let r = run(["generate".as_ref(), empty.as_os_str()]);
    assert!(
        r.expect_code(2)
            .stderr
            .contains("mine.txt is not part of it"),
        "{}",
        r.stderr
    );
    // Nothing left behind beside OUTDIR.
    let mut names: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["empty", "theirs"]);
}

#[test]
fn verify_of_a_directory_without_a_manifest_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let r = run([
        "generate".as_ref(),
        "--verify".as_ref(),
        tmp.path().as_os_str(),
    ]);
    assert!(
        r.expect_code(2).stderr.contains("MANIFEST.json"),
        "{}",
        r.stderr
    );
    let missing = tmp.path().join("nope");
    let r = run([
        "generate".as_ref(),
        "--verify".as_ref(),
        missing.as_os_str(),
    ]);
    assert!(
        r.expect_code(2)
            .stderr
            .contains("is not a readable directory"),
        "{}",
        r.stderr
    );
}
