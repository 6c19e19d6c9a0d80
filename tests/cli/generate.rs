//! `generate OUTDIR` and `generate --verify OUTDIR`. The generated expected outputs come from the
//! tool's own kernels, so they are checked here against the naive reference
//! ([`onnx_idx_check_reference`], written from docs/semantics.md one coordinate at a time, sharing
//! no code with the kernels), case by case. The rest runs the real binary on the suite it wrote.

use crate::common::reference::from_tensor;
use crate::support::{files_under, run, run_within, sha256_hex};
use onnx_idx_check::load::tensor::{tensor_from_proto, TensorContext};
use onnx_idx_check::pb::{ModelProto, TensorProto};
use onnx_idx_check::tensor::DType;
use onnx_idx_check_reference::{self as reference, Attr, AttrValue, Op, Outcome, RTensor};
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
        ("com.microsoft", "GatherGrad") => Op::GatherGrad,
        ("com.microsoft", "GatherElementsGrad") => Op::GatherElementsGrad,
        _ => panic!("the reference does not model {domain}.{op}"),
    }
}

/// Exact comparison, except that any NaN equals any NaN where a reduction computed the value
/// (real float types only).
fn same(expected: &RTensor, actual: &RTensor, arithmetic: bool) -> bool {
    let float = expected.dtype != reference::DType::Complex64;
    expected.dtype == actual.dtype
        && expected.shape == actual.shape
        && expected.words.iter().zip(&actual.words).all(|(a, b)| {
            a == b
                || arithmetic
                    && float
                    && reference::is_nan(expected.dtype, a)
                    && reference::is_nan(expected.dtype, b)
        })
}

/// What [`check_with_reference`] checked.
#[derive(Default)]
struct Checked {
    /// Valid cases whose output equals the reference's.
    checked: usize,
    /// Cases the manifest and the reference both call errored.
    errored: usize,
    /// Cases the reference does not model (complex128).
    unmodelled: Vec<String>,
    /// Cases per operator version (`domain.op-version`).
    per_op: std::collections::BTreeMap<String, usize>,
}

/// Checks every case of the suite in `dir` (manifest `m`) with the naive references: a valid
/// case's output file equals their output, an errored case is refused by them and has no output
/// file. Panics on the first disagreement.
fn check_with_reference(dir: &Path, m: &Value) -> Checked {
    let cases = m["cases"].as_object().unwrap();
    let mut r = Checked::default();
    let op_key = |e: &Value| {
        format!(
            "{}.{}-{}",
            e["domain"].as_str().unwrap(),
            e["op"].as_str().unwrap(),
            e["version"]
        )
    };
    for (name, entry) in cases {
        let case = dir.join(name);
        let model =
            ModelProto::decode(std::fs::read(case.join("model.onnx")).unwrap().as_slice()).unwrap();
        let graph = model.graph.as_ref().unwrap();
        let node = &graph.node[0];
        assert_eq!(node.op_type, entry["op"], "{name}");
        // The opset of the node's own domain; ai.onnx 13 beside any other.
        let opset_of = |domain: &str| {
            model
                .opset_import
                .iter()
                .find(|o| o.domain == domain)
                .map(|o| o.version)
        };
        let opset = opset_of(&node.domain).unwrap();
        assert_eq!(opset, entry["opset"].as_i64().unwrap(), "{name}");
        if !node.domain.is_empty() {
            assert_eq!(opset_of(""), Some(13), "{name}");
            assert_eq!(model.ir_version, 7, "{name}");
        }
        let ds = case.join("test_data_set_0");
        let inputs: Vec<_> = (0..node.input.len())
            .map(|k| read_tensor(&ds.join(format!("input_{k}.pb"))))
            .collect();
        // complex128 is the one dtype the reference does not model.
        if inputs.iter().any(|t| t.dtype() == DType::Complex128) {
            r.unmodelled.push(name.clone());
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
                    AttrValue::Int(a.i())
                },
            })
            .collect();
        let rin: Vec<Option<RTensor>> = inputs.iter().map(|t| Some(from_tensor(t))).collect();
        let op = reference_op(
            entry["op"].as_str().unwrap(),
            entry["domain"].as_str().unwrap(),
        );
        let outcome = reference::evaluate(op, opset, &attrs, &rin, 1 << 30);
        *r.per_op.entry(op_key(entry)).or_insert(0) += 1;
        match (entry["expected"].as_str().unwrap(), outcome) {
            ("passed", Outcome::Ok { out, arithmetic }) => {
                let file = read_tensor(&ds.join("output_0.pb"));
                let written = from_tensor(&file);
                assert!(
                    same(&out, &written, arithmetic),
                    "{name}: the suite's output differs from the reference\n  suite:     {:?} {:?} {:?}\n  reference: {:?} {:?} {:?}",
                    written.dtype, written.shape, written.words, out.dtype, out.shape, out.words
                );
                r.checked += 1;
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
                r.errored += 1;
            }
            (expected, outcome) => {
                panic!("{name}: the manifest says {expected}, the reference {outcome:?}")
            }
        }
    }
    r
}

#[test]
fn every_case_of_the_quick_suite_agrees_with_the_naive_reference() {
    let (dir, m) = quick_suite();
    let Checked {
        checked,
        errored,
        unmodelled,
        per_op,
    } = check_with_reference(dir, m);
    assert!(checked > 1200, "only {checked} valid cases checked");
    assert!(errored > 150, "only {errored} errored cases checked");
    // Every operator version of the registry is checked, each on many cases.
    assert_eq!(per_op.len(), 24, "{per_op:?}");
    assert!(
        per_op.iter().all(|(k, &n)| n >= 40 || k == ".Scatter-11"),
        "{per_op:?}"
    );
    // Only complex128 cases go unchecked, and not many.
    assert!(
        unmodelled.iter().all(|n| n.contains("_complex128_")) && unmodelled.len() < 80,
        "{unmodelled:?}"
    );
}

#[test]
fn a_sample_of_the_full_suite_agrees_with_the_naive_reference() {
    // Three operators of the full profile (every dtype crossed with every index dtype); the
    // whole profile is the ignored test below.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("full");
    let ops = "GatherND,TensorScatter,com.microsoft.GatherGrad";
    let m = generate(&dir, &["--profile", "full", "--ops", ops]);
    assert_eq!(m["profile"], "full");
    let r = check_with_reference(&dir, &m);
    assert!(r.checked > 1800, "only {} valid cases checked", r.checked);
    assert!(r.errored > 300, "only {} errored cases checked", r.errored);
    assert_eq!(r.per_op.len(), 5, "{:?}", r.per_op);
    assert!(r.unmodelled.iter().all(|n| n.contains("_complex128_")));
}

#[test]
#[ignore = "writes and checks about 30,000 cases and 0.8 GB: run with --ignored"]
fn every_case_of_the_full_and_stress_suites_agrees_with_the_naive_reference() {
    let tmp = tempfile::tempdir().unwrap();
    for profile in ["full", "stress"] {
        let dir = tmp.path().join(profile);
        // Minutes in a debug build: past the usual time limit.
        crate::support::command()
            .args([
                "generate".as_ref(),
                dir.as_os_str(),
                "--profile".as_ref(),
                profile.as_ref(),
            ])
            .timeout(std::time::Duration::from_secs(3600))
            .assert()
            .success();
        let m: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("MANIFEST.json")).unwrap())
                .unwrap();
        let r = check_with_reference(&dir, &m);
        eprintln!(
            "{profile}: {} valid cases agree, {} errored, {} not modelled (complex128)",
            r.checked,
            r.errored,
            r.unmodelled.len()
        );
        assert!(r.unmodelled.iter().all(|n| n.contains("_complex128_")));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn stress_leaves_out_cases_over_the_size_bound_and_the_rest_agree() {
    // Under a 1 MiB bound the two-million-index and 2^24 cases go; the 70,000-long axis and the
    // ranks 8 and 10 stay.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("stress");
    let args = [
        "generate".to_owned(),
        dir.display().to_string(),
        "--profile".into(),
        "stress".into(),
        "--ops".into(),
        "ScatterElements,GatherElements".into(),
        "--max-tensor-bytes".into(),
        "1MiB".into(),
    ];
    // The stress profile's large cases take a debug build tens of seconds, and more on a busy
    // machine: a longer limit than the usual minute.
    let out = run_within(std::time::Duration::from_secs(300), &args)
        .expect_code(0)
        .stdout
        .clone();
    assert!(
        out.contains("left out 5 cases with a tensor larger than --max-tensor-bytes (1MiB)"),
        "{out}"
    );
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("MANIFEST.json")).unwrap()).unwrap();
    let names: Vec<&String> = m["cases"]
        .as_object()
        .unwrap()
        .keys()
        .filter(|n| n.contains("_stress_"))
        .collect();
    assert_eq!(
        names,
        [
            "test_gather_elements_13_float_stress_axis_70000",
            "test_gather_elements_13_float_stress_rank10",
            "test_gather_elements_13_float_stress_rank8",
            "test_scatter_elements_18_float_stress_axis_70000",
            "test_scatter_elements_18_float_stress_rank10",
            "test_scatter_elements_18_float_stress_rank8",
        ]
    );
    let r = check_with_reference(&dir, &m);
    assert!(r.checked > 300, "only {} valid cases checked", r.checked);
}

#[test]
fn the_suite_holds_the_traits_that_broke_runtimes() {
    // Per operator version (domain.op-version), traits the manifest must name on some passing
    // case: the shapes, values and modes behind known runtime bugs (issue 15).
    let (_, m) = quick_suite();
    let mut traits: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> =
        Default::default();
    for c in m["cases"].as_object().unwrap().values() {
        if c["expected"] != "passed" {
            continue;
        }
        let key = format!(
            "{}.{}-{}",
            c["domain"].as_str().unwrap(),
            c["op"].as_str().unwrap(),
            c["version"]
        );
        let set = traits.entry(key).or_default();
        set.extend(
            c["traits"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap().to_owned()),
        );
    }
    let want: &[(&str, &[&str])] = &[
        (
            ".GatherND-13",
            &[
                "data-rank-above-indices-rank",
                "k-below-q-minus-1",
                "k-equals-r",
                "single-tuple",
                "batch-dims:1",
                "batch-dims:2",
                "negative-indices",
                "boundary-indices",
                "rank:5",
                "rank:6",
                "long-axis",
                "nan-payloads",
            ],
        ),
        (".GatherND-11", &["k-equals-r", "single-tuple"]),
        (
            ".ScatterND-18",
            &[
                "k-zero",
                "k-equals-r",
                "duplicates",
                "reduction:max",
                "nan-in-max-min",
                "rounding-chain",
                "integer-wrap",
                "subnormals",
            ],
        ),
        (".ScatterND-11", &["k-zero", "duplicates"]),
        (
            ".TensorScatter-24",
            &[
                "mode:linear",
                "mode:circular",
                "circular-wrap",
                "write-indices:absent",
                "dtype:int4",
                "dtype:float8e4m3fn",
                "rank:5",
                "storage:external",
            ],
        ),
        (
            "org.openvinotoolkit.Gather-8",
            &[
                "out-of-range-zero-fill",
                "batch-dims:negative",
                "batch-dims:indices-rank",
                "batch-dims:2",
                "axis-input:int32",
                "indices:uint8",
            ],
        ),
        (
            "com.microsoft.GatherGrad-1",
            &[
                "duplicates",
                "rounding-chain",
                "rank0-indices",
                "negative-indices",
            ],
        ),
        (
            "com.microsoft.GatherElementsGrad-1",
            &["duplicates", "rounding-chain", "long-axis"],
        ),
        (
            ".GatherElements-13",
            &[
                "long-axis",
                "rank:6",
                "nan-payloads",
                "strings:empty-non-ascii-long",
            ],
        ),
        (
            ".ScatterElements-18",
            &["nan-in-max-min", "rounding-chain", "integer-wrap"],
        ),
    ];
    for (op, names) in want {
        let got = traits
            .get(*op)
            .unwrap_or_else(|| panic!("no passing case of {op}"));
        for t in *names {
            assert!(got.contains(*t), "{op} has no passing case with {t}");
        }
    }
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
    // 23 versions: OpenVINO's Gather counts three (1, 7, 8).
    assert_eq!(rows.len(), 23, "{rows:?}");
    for row in rows {
        let missing: Vec<&str> = row["missing"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        assert!(missing.is_empty(), "{}: {missing:?}", row["op"]);
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
    // Other domains by full name; a bare op_type that ai.onnx lacks finds its domain.
    let m = generate(
        &tmp.path().join("ov"),
        &["--ops", "org.openvinotoolkit.Gather,GatherGrad"],
    );
    assert_eq!(
        m["ops"],
        serde_json::json!(["org.openvinotoolkit.Gather", "com.microsoft.GatherGrad"])
    );
    let cases = m["cases"].as_object().unwrap();
    assert!(cases.iter().all(|(k, c)| c["domain"] != ""
        && (k.starts_with("test_openvinotoolkit_gather_1_")
            || k.starts_with("test_openvinotoolkit_gather_7_")
            || k.starts_with("test_openvinotoolkit_gather_8_")
            || k.starts_with("test_microsoft_gather_grad_1_"))));
    let out = tmp.path().join("x");
    for (ops, named) in [
        ("Gather,Gaher", "'Gaher'"),
        ("com.microsoft.Gather", "'com.microsoft.Gather'"),
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
    let first = generate(&empty, &["--ops", "Gather"]);
    let gathers = first["cases"].as_object().unwrap().len();
    // New-user report #14: replacing a suite says so.
    let r = run([
        "generate".as_ref(),
        empty.as_os_str(),
        "--ops".as_ref(),
        "GatherElements".as_ref(),
    ]);
    assert!(
        r.expect_code(0)
            .stdout
            .contains(&format!("\nreplaced a previous suite of {gathers} cases\n")),
        "{}",
        r.stdout
    );
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(empty.join("MANIFEST.json")).unwrap())
            .unwrap();
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
    // So is a directory of the user's, even an empty one.
    std::fs::remove_file(empty.join("mine.txt")).unwrap();
    std::fs::create_dir(empty.join("drafts")).unwrap();
    let r = run(["generate".as_ref(), empty.as_os_str()]);
    assert!(
        r.expect_code(2).stderr.contains("drafts is not part of it"),
        "{}",
        r.stderr
    );
    assert!(empty.join("drafts").is_dir());
    // Nothing left behind beside OUTDIR.
    let mut names: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["empty", "theirs"]);
}

/// Adversary D11: a Ctrl-C while `generate` writes leaves no partial `.OUTDIR.generate-PID`
/// beside OUTDIR.
#[cfg(unix)]
#[test]
fn an_interrupted_generate_leaves_no_work_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_onnx-idx-check"))
        .args(["generate", "big", "--profile", "full", "--ops", "Gather"])
        .current_dir(tmp.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let work = || {
        std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".big.generate-"))
            .collect::<Vec<_>>()
    };
    let started = std::time::Instant::now();
    while work().is_empty() && started.elapsed() < std::time::Duration::from_secs(60) {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(!work().is_empty(), "no work directory appeared");
    // Some files written.
    std::thread::sleep(std::time::Duration::from_millis(300));
    let killed = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    // 130 or death by SIGINT when the suite was not finished; 0 when it beat the signal.
    use std::os::unix::process::ExitStatusExt;
    assert!(
        status.signal() == Some(2) || matches!(status.code(), Some(0 | 130)),
        "{status:?}"
    );
    assert_eq!(work(), Vec::<String>::new());
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
