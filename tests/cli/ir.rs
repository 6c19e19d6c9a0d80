//! OpenVINO IR cases (`model.xml` + `model.bin`): the Gather-1, -7 and -8 examples of
//! `testdata/openvino-ir/` through `run`, `list`, `coverage`, `--actual` and `--pending`/`review`,
//! and hostile IRs built from them in a temporary directory, each with its asserted verdict and
//! reason. Expected values are the specification's literals (in the committed `output_0.pb`).

use crate::common::copy_tree;
use crate::support::{case, cases, root, run, run_json};
use std::path::{Path, PathBuf};

const EXAMPLES: [&str; 7] = [
    "openvino_gather8_example1_ir",
    "openvino_gather8_example2_ir",
    "openvino_gather8_example3_ir",
    "openvino_gather8_example4_ir",
    "openvino_gather8_example5_ir",
    "openvino_gather8_example6_ir",
    "openvino_gather8_example7_ir",
];

fn ir_dir() -> PathBuf {
    root().join("testdata/openvino-ir")
}

#[test]
fn the_gather_examples_pass_as_ir_at_their_versions() {
    let (code, r) = run_json(&ir_dir(), &[]);
    assert_eq!(code, 0, "{r}");
    let names: Vec<&str> = cases(&r)
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    let mut want = vec!["openvino_gather1_example1_ir".to_string()];
    want.extend((1..=5).map(|k| format!("openvino_gather7_example{k}_ir")));
    want.extend(EXAMPLES.iter().map(|s| s.to_string()));
    assert_eq!(names, want);
    for c in cases(&r) {
        let name = c["name"].as_str().unwrap();
        let version = &name["openvino_gather".len()..="openvino_gather".len()];
        assert_eq!(c["status"], "passed", "{c}");
        assert_eq!(
            c["ops"],
            serde_json::json!(["org.openvinotoolkit.Gather"]),
            "{c}"
        );
        assert_eq!(
            c["opset"],
            serde_json::json!({"org.openvinotoolkit": version.parse::<i64>().unwrap()}),
            "{c}"
        );
        // The digests of the IR's two files come first.
        assert_eq!(c["files"][0]["path"], "model.xml", "{c}");
        assert_eq!(c["files"][1]["path"], "model.bin", "{c}");
    }
}

#[test]
fn list_and_coverage_read_ir_cases() {
    let r = run([
        "list".as_ref(),
        ir_dir().as_os_str(),
        "--format".as_ref(),
        "json".as_ref(),
    ]);
    let listed = r.expect_code(0).json();
    let first = &listed[0];
    assert_eq!(first["status"], "supported", "{first}");
    assert_eq!(
        first["resolved"],
        serde_json::json!(["org.openvinotoolkit.Gather-1"])
    );
    let r = run([
        "coverage".as_ref(),
        ir_dir().as_os_str(),
        "--format".as_ref(),
        "json".as_ref(),
    ]);
    let cov = r.expect_code(0).json();
    let ops: Vec<&str> = cov["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["op"].as_str().unwrap())
        .collect();
    assert_eq!(
        ops,
        [
            "org.openvinotoolkit.Gather-1",
            "org.openvinotoolkit.Gather-7",
            "org.openvinotoolkit.Gather-8"
        ]
    );
    let row = &cov["rows"][2];
    assert_eq!(row["passing_cases"], 7);
    let covered: Vec<&str> = row["covered"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    // Example 6 has negative indices, examples 2-5 batch_dims > 0, 5 and 6 int32 indices.
    for t in [
        "negative-indices",
        "batch_dims>0",
        "indices:int32",
        "indices:int64",
    ] {
        assert!(covered.contains(&t), "{t} not in {covered:?}");
    }
}

/// A copy of example `n`'s case in a fresh temporary tree, as `<tmp>/tree/<name>`.
fn copy_example(tmp: &Path, n: usize) -> PathBuf {
    let dst = tmp.join("tree").join(EXAMPLES[n - 1]);
    copy_tree(&ir_dir().join(EXAMPLES[n - 1]), &dst);
    dst
}

/// Rewrites `model.xml` of `case` with `edit`.
fn edit_xml(case: &Path, edit: impl Fn(String) -> String) {
    let p = case.join("model.xml");
    let text = std::fs::read_to_string(&p).unwrap();
    let changed = edit(text.clone());
    assert_ne!(changed, text, "the edit changed nothing");
    std::fs::write(p, changed).unwrap();
}

/// One hostile IR: a name, how it is made from example 1 (data [5], indices [3], axis Const
/// i64 scalar at bytes 0..8), and the verdict and the start of the reason it must get.
struct Hostile {
    name: &'static str,
    make: fn(&Path),
    status: &'static str,
    reason: &'static str,
}

fn hostile() -> Vec<Hostile> {
    vec![
        Hostile {
            name: "truncated_xml",
            make: |c| edit_xml(c, |t| t[..t.find("<edges>").unwrap()].to_string()),
            status: "errored",
            reason: "model.xml: line 50: the file ends inside <net>: truncated (1 element(s) left open)",
        },
        Hostile {
            name: "entity_expansion_bomb",
            make: |c| {
                edit_xml(c, |t| {
                    let lol = "<!DOCTYPE net [<!ENTITY a \"aaaaaaaaaa\">\
                               <!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">\
                               <!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">\
                               <!ENTITY d \"&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;\">]>\n";
                    t.replacen("<net ", &format!("{lol}<net "), 1)
                        .replacen("name=\"data\" type", "name=\"&d;\" type", 1)
                })
            },
            status: "errored",
            reason: "model.xml: line 2: a <!DOCTYPE> is refused",
        },
        Hostile {
            name: "const_past_the_end_of_model_bin",
            make: |c| edit_xml(c, |t| t.replace("offset=\"0\" size=\"8\"", "offset=\"4\" size=\"8\"")),
            status: "errored",
            reason: "model.bin: layer 'axis' (id 2, Const opset1) (offset 4, size 8): the range ends past the end of model.bin (8 bytes)",
        },
        Hostile {
            name: "const_claiming_an_exabyte",
            make: |c| {
                edit_xml(c, |t| {
                    t.replace(
                        "element_type=\"i64\" shape=\"\" offset=\"0\" size=\"8\"",
                        "element_type=\"i64\" shape=\"131072,131072,65536\" offset=\"0\" size=\"9007199254740992\"",
                    )
                    .replacen("<port id=\"0\" precision=\"I64\" names=\"axis\"/>", "<port id=\"0\" precision=\"I64\" names=\"axis\"><dim>131072</dim><dim>131072</dim><dim>65536</dim></port>", 1)
                })
            },
            status: "errored",
            reason: "model.bin: layer 'axis' (id 2, Const opset1) (offset 0, size 9007199254740992): the range ends past the end of model.bin (8 bytes)",
        },
        Hostile {
            name: "model_bin_hard_linked_outside",
            make: |c| {
                // The same bytes, but the case's model.bin is another name of a file outside it.
                let outside = c.parent().unwrap().parent().unwrap().join("outside.bin");
                std::fs::rename(c.join("model.bin"), &outside).unwrap();
                std::fs::hard_link(&outside, c.join("model.bin")).unwrap();
            },
            status: "errored",
            reason: "model.bin: the file has 2 hard links, and a hard link can point outside the case directory",
        },
        Hostile {
            name: "shape_of_200001_dims",
            make: |c| {
                let dims = format!("{}5", "1,".repeat(200_000));
                edit_xml(c, |t| t.replacen("<data shape=\"5\"", &format!("<data shape=\"{dims}\""), 1))
            },
            status: "errored",
            reason: "model.xml: layer 'data' (id 0, Parameter opset1): shape [1, 1, 1, 1, 1, 1, 1, 1, ..., 1, 5] (rank 200001) and output port dims [5] disagree",
        },
        Hostile {
            name: "dynamic_shape_against_a_fixed_port",
            make: |c| edit_xml(c, |t| t.replacen("<data shape=\"5\"", "<data shape=\"-1,1..10\"", 1)),
            status: "errored",
            reason: "model.xml: layer 'data' (id 0, Parameter opset1): shape [?, 1..10] and output port dims [5] disagree",
        },
        Hostile {
            name: "dims_that_overflow",
            make: |c| edit_xml(c, |t| t.replacen("<dim>5</dim>", "<dim>99999999999999999999</dim>", 1)),
            status: "errored",
            reason: "model.xml: line 8: dimension 99999999999999999999 overflows a 64-bit size",
        },
        Hostile {
            name: "shape_product_that_overflows",
            make: |c| {
                edit_xml(c, |t| {
                    t.replace("shape=\"\" offset", "shape=\"4294967296,4294967296,4294967296\" offset")
                })
            },
            status: "errored",
            reason: "model.xml: layer 'axis' (id 2, Const opset1): shape [4294967296, 4294967296, 4294967296] overflows",
        },
        Hostile {
            name: "edge_to_a_missing_port",
            make: |c| edit_xml(c, |t| t.replace("to-layer=\"3\" to-port=\"2\"", "to-layer=\"3\" to-port=\"9\"")),
            status: "errored",
            reason: "model.xml: line 53: edge 2:0 -> 3:9 ends at port 9 of layer 'openvino_gather8_example1_ir' (id 3, Gather opset8), which has no such input port",
        },
        Hostile {
            name: "cycle",
            make: |c| {
                // The Gather's data comes from its own output.
                edit_xml(c, |t| {
                    t.replace(
                        "from-layer=\"0\" from-port=\"0\" to-layer=\"3\" to-port=\"0\"",
                        "from-layer=\"3\" from-port=\"3\" to-layer=\"3\" to-port=\"0\"",
                    )
                })
            },
            status: "errored",
            reason: "model.xml: the edges form a cycle: layers 'openvino_gather8_example1_ir' (id 3), 'output' (id 4) wait on each other",
        },
        Hostile {
            name: "unknown_layer_type",
            make: |c| edit_xml(c, |t| t.replace("type=\"Gather\" version=\"opset8\"", "type=\"Interpolate\" version=\"opset11\"")),
            status: "skipped",
            reason: "model.xml: layer 'openvino_gather8_example1_ir' (id 3, Interpolate opset11): layer type Interpolate is not supported",
        },
    ]
}

#[test]
fn hostile_irs_get_errored_verdicts_with_reasons() {
    let tmp = tempfile::tempdir().unwrap();
    let list = hostile();
    for h in &list {
        let case = copy_example(tmp.path(), 1);
        let dst = case.with_file_name(h.name);
        std::fs::rename(&case, &dst).unwrap();
        (h.make)(&dst);
    }
    let (code, r) = run_json(&tmp.path().join("tree"), &[]);
    assert_eq!(code, 1, "{r}");
    assert_eq!(cases(&r).len(), list.len());
    for h in &list {
        let c = case(&r, h.name);
        assert_eq!(c["status"], h.status, "{}: {c}", h.name);
        let reason = c["reason"].as_str().unwrap_or_default();
        assert!(reason.starts_with(h.reason), "{}: {reason}", h.name);
        // Reasons are bounded, whatever the file holds.
        assert!(reason.len() < 1000, "{}: {} bytes", h.name, reason.len());
    }
}

#[test]
fn actual_outputs_and_pending_review_work_on_ir_cases() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy_example(tmp.path(), 7);
    // A runtime that did not zero-fill: it wrote example 7's output as [4, 0, 4].
    let actual = tmp
        .path()
        .join("actual")
        .join(EXAMPLES[6])
        .join("test_data_set_0");
    std::fs::create_dir_all(&actual).unwrap();
    let mut t = crate::support::read_tensor(&dir.join("test_data_set_0/output_0.pb"));
    t.raw_data = [4i64, 0, 4].iter().flat_map(|v| v.to_le_bytes()).collect();
    crate::support::write_tensor(&actual.join("output_0.pb"), &t);
    let tree = tmp.path().join("tree");
    let actual_root = tmp.path().join("actual");
    let (code, r) = run_json(&tree, &["--actual", actual_root.to_str().unwrap()]);
    assert_eq!(code, 1, "{r}");
    let c = case(&r, EXAMPLES[6]);
    assert_eq!(c["status"], "failed", "{c}");
    assert!(
        c["reason"].as_str().unwrap().contains("expected 0, got 4"),
        "{c}"
    );
    // --pending: the expected output is removed, our result waits for review, and accepting it
    // writes the specification's literal back.
    let expected = std::fs::read(dir.join("test_data_set_0/output_0.pb")).unwrap();
    std::fs::remove_file(dir.join("test_data_set_0/output_0.pb")).unwrap();
    let pending = tmp.path().join("pending");
    let r = run([
        "run".as_ref(),
        tree.as_os_str(),
        "--pending".as_ref(),
        pending.as_os_str(),
    ]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    let r = run([
        "review".as_ref(),
        pending.as_os_str(),
        tree.as_os_str(),
        "--accept-all".as_ref(),
    ]);
    r.expect_code(0);
    let written = crate::support::read_tensor(&dir.join("test_data_set_0/output_0.pb"));
    let committed = {
        use prost::Message;
        onnx_idx_check::pb::TensorProto::decode(expected.as_slice()).unwrap()
    };
    assert_eq!(written.dims, committed.dims);
    assert_eq!(written.raw_data, committed.raw_data);
}

/// The id of the layer named `name` of type `kind` in a generated `model.xml`.
fn layer_id(xml: &str, name: &str, kind: &str) -> Option<String> {
    let tag = format!(" name=\"{name}\" type=\"{kind}\"");
    let line = xml
        .lines()
        .find(|l| l.contains("<layer ") && l.contains(&tag))?;
    let rest = line.split("id=\"").nth(1)?;
    Some(rest.split('"').next()?.to_owned())
}

/// New-user report #1: OpenVINO cannot run a Gather whose axis is a Parameter ("axis value is
/// not set"), so `generate --format ir` writes the axis as a Const with its bytes in model.bin,
/// as `testdata/openvino-ir/` does, and leaves its `input_2.pb` out. Report #8: the cases left out
/// for their type say so.
#[test]
fn generate_format_ir_writes_the_openvino_dialect_as_ir_that_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("g");
    let r = run([
        "generate".as_ref(),
        out.as_os_str(),
        "--format".as_ref(),
        "ir".as_ref(),
    ]);
    r.expect_code(0);
    assert!(
        r.stdout
            .contains(" cases whose type OpenVINO IR cannot hold (")
            && r.stdout.contains("string ")
            && !r.stdout.contains("does not implement"),
        "{}",
        r.stdout
    );
    // (case, the axis Const's element type, shape attribute, its bytes in model.bin): the
    // generator's axis for these cases is -1, given as an int64 scalar unless the case says
    // otherwise; the two-element axis, which the spec forbids, is a Const too.
    let axes: [(&str, &str, &str, Vec<u8>); 4] = [
        (
            "test_openvinotoolkit_gather_8_float_rank3_axis_neg2",
            "i64",
            "",
            (-2i64).to_le_bytes().to_vec(),
        ),
        (
            "test_openvinotoolkit_gather_1_float_axis_input_int32",
            "i32",
            "",
            (-1i32).to_le_bytes().to_vec(),
        ),
        (
            "test_openvinotoolkit_gather_7_float_axis_input_1d",
            "i64",
            "1",
            (-1i64).to_le_bytes().to_vec(),
        ),
        (
            "test_openvinotoolkit_gather_8_float_axis_input_two_elements",
            "i64",
            "2",
            [0u8; 16].to_vec(),
        ),
    ];
    for (case, et, shape, bin) in axes {
        let dir = out.join(case);
        let xml = std::fs::read_to_string(dir.join("model.xml")).unwrap();
        let id = layer_id(&xml, "axis", "Const").unwrap_or_else(|| panic!("{case}: {xml}"));
        assert!(
            xml.contains(&format!(
                "<data element_type=\"{et}\" shape=\"{shape}\" offset=\"0\" size=\"{}\"/>",
                bin.len()
            )),
            "{case}: {xml}"
        );
        let gather = layer_id(&xml, case, "Gather").unwrap();
        assert!(
            xml.contains(&format!(
                "<edge from-layer=\"{id}\" from-port=\"0\" to-layer=\"{gather}\" to-port=\"2\"/>"
            )),
            "{case}: {xml}"
        );
        assert!(layer_id(&xml, "data", "Parameter").is_some(), "{case}");
        assert!(layer_id(&xml, "indices", "Parameter").is_some(), "{case}");
        assert!(layer_id(&xml, "axis", "Parameter").is_none(), "{case}");
        assert_eq!(std::fs::read(dir.join("model.bin")).unwrap(), bin, "{case}");
        let ds = dir.join("test_data_set_0");
        assert!(ds.join("input_1.pb").is_file(), "{case}");
        assert!(!ds.join("input_2.pb").exists(), "{case}");
    }
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("MANIFEST.json")).unwrap()).unwrap();
    assert_eq!(
        manifest["ops"],
        serde_json::json!(["org.openvinotoolkit.Gather"])
    );
    let cases = manifest["cases"].as_object().unwrap();
    assert!(cases.len() > 100, "{}", cases.len());
    for (name, c) in cases {
        let files = c["files"].as_object().unwrap();
        assert!(
            files.contains_key("model.xml") && !files.contains_key("model.onnx"),
            "{name}"
        );
    }
    assert!(
        out.join("test_openvinotoolkit_gather_7_float_batch_dims_1/model.xml")
            .is_file()
            || cases
                .keys()
                .any(|k| k.starts_with("test_openvinotoolkit_gather_7_"))
    );
    let expectations = out.join("expectations.toml");
    let r = run([
        "run".as_ref(),
        out.as_os_str(),
        "--expectations".as_ref(),
        expectations.as_os_str(),
    ]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let r = run(["generate".as_ref(), "--verify".as_ref(), out.as_os_str()]);
    r.expect_code(0);
    // ai.onnx's operators have no IR form.
    let r = run([
        "generate".as_ref(),
        tmp.path().join("h").as_os_str(),
        "--format".as_ref(),
        "ir".as_ref(),
        "--ops".as_ref(),
        "GatherElements".as_ref(),
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("--format ir writes the OpenVINO dialect only"),
        "{}",
        r.stderr
    );
}

#[test]
fn show_reads_an_ir_case() {
    let case = ir_dir().join(EXAMPLES[1]);
    let r = run(["show".as_ref(), case.as_os_str()]);
    r.expect_code(0);
    assert!(r.stdout.contains("model.xml"), "{}", r.stdout);
    assert!(r.stdout.contains("Gather"), "{}", r.stdout);
    // Example 2's expected output, as the specification prints it, bound to the Result's
    // tensor by the port's name (so no "stored as" note).
    assert!(
        r.stdout.contains("output_0.pb 'output': int64 [2, 3]"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("[[ 1,  1,  5],\n     [10,  6,  6]]"),
        "{}",
        r.stdout
    );
}

#[test]
fn a_github_annotation_points_at_an_ir_cases_model_xml() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy_example(tmp.path(), 1);
    // The expected output made wrong: [1, 1, 5] -> [1, 1, 6].
    let out = dir.join("test_data_set_0/output_0.pb");
    let mut t = crate::support::read_tensor(&out);
    t.raw_data = [1i64, 1, 6].iter().flat_map(|v| v.to_le_bytes()).collect();
    crate::support::write_tensor(&out, &t);
    let r = crate::support::command()
        .env("GITHUB_ACTIONS", "true")
        .args(["run".as_ref(), tmp.path().join("tree").as_os_str()])
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&r.stdout);
    let want = format!("::error file={},", dir.join("model.xml").display());
    assert!(stdout.lines().any(|l| l.starts_with(&want)), "{stdout}");
}

/// Example 1 with `extra` unconnected Parameter layers before its own: a large model.xml whose
/// lines are many.
fn with_extra_layers(tmp: &Path, extra: usize) -> PathBuf {
    let case = copy_example(tmp, 1);
    edit_xml(&case, |t| {
        let layers: String = (0..extra)
            .map(|k| {
                format!(
                    "\t\t<layer id=\"{}\" name=\"p{k}\" type=\"Parameter\" version=\"opset1\">\n\
                     \t\t\t<data shape=\"1\" element_type=\"f32\"/>\n\
                     \t\t\t<output><port id=\"0\" precision=\"FP32\"><dim>1</dim></port></output>\n\
                     \t\t</layer>\n",
                    1000 + k
                )
            })
            .collect();
        t.replacen("<layers>\n", &format!("<layers>\n{layers}"), 1)
    });
    case
}

#[test]
fn an_ir_of_many_layers_is_read_within_the_timeout() {
    // Reading 60,000 layers once took minutes (the line of each element was counted from the
    // start of the file); read in one pass, it takes well under the limit even unoptimised.
    let tmp = tempfile::tempdir().unwrap();
    let case = with_extra_layers(tmp.path(), 60_000);
    let (code, r) = run_json(&case, &["--timeout", "60"]);
    assert_eq!(code, 1, "{r}");
    let c = &cases(&r)[0];
    assert_eq!(c["status"], "errored", "{c}");
    let reason = c["reason"].as_str().unwrap();
    assert!(!reason.contains("timed out"), "{reason}");
}

#[test]
fn a_case_whose_model_outlasts_the_timeout_while_it_is_read_is_timed_out() {
    let tmp = tempfile::tempdir().unwrap();
    let case = with_extra_layers(tmp.path(), 60_000);
    let (code, r) = run_json(&case, &["--timeout", "0.001"]);
    assert_eq!(code, 1, "{r}");
    let c = &cases(&r)[0];
    assert_eq!(c["status"], "errored", "{c}");
    assert_eq!(
        c["reason"],
        "model.xml: timed out: still running after 0.001 s (--timeout)"
    );
}
