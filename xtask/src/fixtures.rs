//! `cargo xtask fixtures`: writes `tests/fixtures/`, the deliberately failing, invalid, malformed
//! and unsupported cases the integration tests run the binary on. They live apart from
//! `testdata/`, where every case must pass.
//!
//! Each [`Fixture`] starts as a valid single-node case described like a spec example (a
//! [`Case`], rendered by [`crate::testdata`]) and then goes through explicit [`Edit`]s: changes to
//! the model or to one tensor before encoding, then byte surgery on the encoded files (truncation,
//! literal garbage, copies, deletions). Every byte is a function of this file, so
//! `cargo xtask fixtures --check` can compare the committed tree exactly.
//!
//! Expected outputs are literals worked by hand (in the comments), never computed by a kernel.
//! Where a fixture must be refused before anything is compared, its expected output is still a
//! well-formed literal, but its value does not matter and the comment says so.
//!
//! Symbolic and hard links are never committed: the integration tests build those cases in a
//! temporary directory at run time.

// tidy: long file: data: one fixture per failing, invalid or malformed case the tests run.

use crate::fsutil::{ensure_file_contents, project_root};
use crate::pb;
use crate::pb::tensor_proto::{DataLocation, DataType, Segment};
use crate::spec_examples::{f32s, i32s, i64s, strs, tensor, Case, Storage, Tensor, Values};
use crate::testdata;
use anyhow::{bail, Context, Result};
use prost::Message;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const COMMAND: &str = "fixtures";

/// `tests/fixtures/onnx-node-sample/`: official ONNX node tests copied by hand (see its README),
/// not generated here; `cargo xtask fixtures` leaves it alone.
pub const ONNX_NODE_SAMPLE: &str = "onnx-node-sample";

/// `tests/fixtures/npy/`: `.npy` / `.npz` files written by numpy for the reader's unit tests
/// (`src/load/npy.rs`), made by its own `make.py`; `cargo xtask fixtures` leaves it alone.
const NPY: &str = "npy";

/// `tests/fixtures/runtime/`: runtimes under test written by hand for `run --runtime-cmd`
/// (`tests/cli/runtime.rs`); `cargo xtask fixtures` leaves it alone.
const RUNTIME: &str = "runtime";

const MODEL: &str = "model.onnx";
const INPUT_0: &str = "test_data_set_0/input_0.pb";
const INPUT_1: &str = "test_data_set_0/input_1.pb";
const INPUT_2: &str = "test_data_set_0/input_2.pb";
const OUTPUT_0: &str = "test_data_set_0/output_0.pb";

/// The verdict a fixture must get when run alone; also its directory under `tests/fixtures/`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Group {
    /// `passing/`: passed.
    Passing,
    /// `failing/`: failed.
    Failing,
    /// `errored/`: errored (spec violations and malformed files).
    Errored,
    /// `skipped/`: skipped.
    Skipped,
    /// `hostile/`: errored; files built to crash, exhaust or escape a loader.
    Hostile,
}

impl Group {
    const ALL: [Group; 5] = [
        Group::Passing,
        Group::Failing,
        Group::Errored,
        Group::Skipped,
        Group::Hostile,
    ];

    /// The directory under `tests/fixtures/`.
    pub fn dir(self) -> &'static str {
        match self {
            Group::Passing => "passing",
            Group::Failing => "failing",
            Group::Errored => "errored",
            Group::Skipped => "skipped",
            Group::Hostile => "hostile",
        }
    }

    /// The verdict, as the reports spell it.
    pub fn verdict(self) -> &'static str {
        match self {
            Group::Passing => "passed",
            Group::Failing => "failed",
            Group::Errored | Group::Hostile => "errored",
            Group::Skipped => "skipped",
        }
    }
}

/// One fixture: a case description and the edits that break it.
pub struct Fixture {
    /// Where it goes and the verdict it must get.
    pub group: Group,
    /// Directory name under the group's directory.
    pub name: &'static str,
    /// What it holds (what is wrong with it, or what it controls), in one sentence: the README
    /// and the graph's doc_string.
    pub about: &'static str,
    /// The case before the edits.
    pub case: Case,
    /// Applied in order within each stage: proto edits first, then byte edits.
    pub edits: Vec<Edit>,
}

/// A change to a rendered case. File paths are relative to the case directory.
pub enum Edit {
    /// Changes the model before it is encoded.
    Model(Box<dyn Fn(&mut pb::ModelProto)>),
    /// Changes the TensorProto of a data-set file before it is encoded.
    Tensor(&'static str, Box<dyn Fn(&mut pb::TensorProto)>),
    /// Keeps the first half (rounded down) of a file's encoded bytes.
    TruncateHalf(&'static str),
    /// Writes these bytes to a file, replacing it or adding it.
    Bytes(&'static str, Vec<u8>),
    /// Appends these bytes to a file's encoding (protobuf merges a repeated message field).
    Append(&'static str, Vec<u8>),
    /// Copies the encoded bytes of the first file to the second.
    Copy(&'static str, &'static str),
    /// Deletes a file.
    Remove(&'static str),
}

/// `tests/fixtures/actual/`: cases (`cases/`) and a runtime's outputs for them (`outputs/`).
pub const ACTUAL: &str = "actual";

/// A case with the outputs a runtime under test produced for it, for `run --actual`: the case
/// goes to `actual/cases/<name>/`, the runtime's outputs to
/// `actual/outputs/<name>/test_data_set_0/output_K.pb`.
pub struct RuntimeFixture {
    /// Directory name under `actual/cases/` and `actual/outputs/`.
    pub name: &'static str,
    /// What it holds, in one sentence: the README and the graph's doc_string.
    pub about: &'static str,
    /// The verdict `run --actual` must give it.
    pub verdict: &'static str,
    /// The case (its outputs are the expected outputs) before the edits.
    pub case: Case,
    /// Edits of the case, as for [`Fixture`].
    pub edits: Vec<Edit>,
    /// The runtime's outputs, one per graph output; `None` when the runtime wrote nothing.
    pub actual: Option<Vec<Tensor>>,
}

/// The files of a runtime fixture: the case and the runtime's outputs.
fn render_runtime(f: &RuntimeFixture) -> Result<Vec<(PathBuf, Vec<u8>)>> {
    let mut case = f.case.clone();
    case.name = f.name;
    case.source = f.about;
    let mut files = render_case(
        &case,
        &f.edits,
        &PathBuf::from(ACTUAL).join("cases").join(f.name),
    )?;
    let dir = PathBuf::from(ACTUAL)
        .join("outputs")
        .join(f.name)
        .join("test_data_set_0");
    for (k, t) in f.actual.iter().flatten().enumerate() {
        let proto = testdata::tensor_proto(t, case.storage)
            .with_context(|| format!("actual output {k} ({})", t.name))?;
        files.push((dir.join(format!("output_{k}.pb")), proto.encode_to_vec()));
    }
    Ok(files)
}

/// `tests/fixtures/expectations/`.
pub const EXPECTATIONS_DIR: &str = "expectations";

/// Regenerates `tests/fixtures/`, or in check mode fails when any committed file differs from
/// what would be written, is missing, or is no longer described.
pub fn generate(check: bool) -> Result<()> {
    let dir = project_root().join("tests/fixtures");
    let fixtures = fixtures();
    let runtime = runtime_fixtures();
    let mut expected = BTreeSet::new();
    let mut all = Vec::new();
    for f in &fixtures {
        all.extend(render(f).with_context(|| format!("fixture {}/{}", f.group.dir(), f.name))?);
    }
    for f in &runtime {
        all.extend(render_runtime(f).with_context(|| format!("fixture {ACTUAL}/{}", f.name))?);
    }
    for (name, text) in EXPECTATIONS {
        all.push((
            PathBuf::from(EXPECTATIONS_DIR).join(name),
            text.as_bytes().to_vec(),
        ));
    }
    all.push((
        PathBuf::from("README.md"),
        readme_text(&fixtures, &runtime).into_bytes(),
    ));
    all.push((
        PathBuf::from(".gitattributes"),
        GITATTRIBUTES.as_bytes().to_vec(),
    ));
    for (rel, bytes) in all {
        ensure_file_contents(&dir.join(&rel), &bytes, check, COMMAND)?;
        expected.insert(rel);
    }
    testdata::remove_strays(
        &dir,
        &expected,
        &[ONNX_NODE_SAMPLE, NPY, RUNTIME],
        check,
        COMMAND,
    )
}

const GITATTRIBUTES: &str = "\
# Fixture files are binary, the broken ones included: never convert their line ends.
*.onnx binary
*.pb binary
*.bin binary
";

/// The files of one fixture, as paths relative to `tests/fixtures/` and their bytes.
fn render(f: &Fixture) -> Result<Vec<(PathBuf, Vec<u8>)>> {
    render_case(
        &f.case,
        &f.edits,
        &PathBuf::from(f.group.dir()).join(f.name),
    )
}

/// The files of a case after its edits, under `dir` (relative to `tests/fixtures/`).
fn render_case(case: &Case, edits: &[Edit], dir: &Path) -> Result<Vec<(PathBuf, Vec<u8>)>> {
    let mut model = testdata::model(case)?;
    let mut tensors: BTreeMap<String, pb::TensorProto> = BTreeMap::new();
    for (kind, list) in [("input", &case.inputs), ("output", &case.outputs)] {
        for (k, t) in list.iter().enumerate() {
            let proto = testdata::tensor_proto(t, case.storage)
                .with_context(|| format!("{kind} {k} ({})", t.name))?;
            tensors.insert(format!("test_data_set_0/{kind}_{k}.pb"), proto);
        }
    }
    for edit in edits {
        match edit {
            Edit::Model(change) => change(&mut model),
            Edit::Tensor(file, change) => match tensors.get_mut(*file) {
                Some(t) => change(t),
                None => bail!("no tensor file {file} to edit"),
            },
            _ => {}
        }
    }
    let mut files: BTreeMap<String, Vec<u8>> = tensors
        .into_iter()
        .map(|(file, t)| (file, t.encode_to_vec()))
        .collect();
    files.insert(MODEL.to_string(), model.encode_to_vec());
    for edit in edits {
        match edit {
            Edit::TruncateHalf(file) => match files.get_mut(*file) {
                Some(bytes) => bytes.truncate(bytes.len() / 2),
                None => bail!("no file {file} to truncate"),
            },
            Edit::Bytes(file, bytes) => {
                files.insert(file.to_string(), bytes.clone());
            }
            Edit::Append(file, more) => match files.get_mut(*file) {
                Some(bytes) => bytes.extend_from_slice(more),
                None => bail!("no file {file} to append to"),
            },
            Edit::Copy(from, to) => match files.get(*from) {
                Some(bytes) => {
                    let bytes = bytes.clone();
                    files.insert(to.to_string(), bytes);
                }
                None => bail!("no file {from} to copy"),
            },
            Edit::Remove(file) => {
                if files.remove(*file).is_none() {
                    bail!("no file {file} to remove");
                }
            }
            Edit::Model(_) | Edit::Tensor(..) => {}
        }
    }
    Ok(files
        .into_iter()
        .map(|(file, bytes)| (dir.join(file), bytes))
        .collect())
}

fn readme_text(fixtures: &[Fixture], runtime: &[RuntimeFixture]) -> String {
    let mut s = String::from(
        "# Test fixtures\n\
         \n\
         Cases that must **not** simply pass, for the integration tests in `tests/cli/`: each is an\n\
         ONNX node-test directory (`<group>/<name>/model.onnx` plus `test_data_set_0/input_K.pb`,\n\
         `output_K.pb`), and its group is the verdict `onnx-idx-check run` must give it when run\n\
         alone:\n\
         \n\
         | group | verdict | exit status alone |\n\
         |---|---|---|\n\
         | `passing/` | passed (controls for the cases beside them) | 0 |\n\
         | `failing/` | failed: the expected output is wrong | 1 |\n\
         | `errored/` | errored: the model breaks the spec (docs/semantics.md D2-D6) or a file is malformed (D10-D12) | 1 |\n\
         | `skipped/` | skipped: valid, but not implemented (D1, D8, D10) | 0 (1 with `--deny-skip`) |\n\
         | `hostile/` | errored: files built to crash, exhaust or escape a loader (D11, D12) | 1 |\n\
         \n\
         Generated by `cargo xtask fixtures` from the descriptions in `xtask/src/fixtures.rs`; do\n\
         not edit by hand. Each fixture is a valid single-node case, described like a spec example,\n\
         followed by explicit edits: changes to the model or to one tensor before encoding, then\n\
         byte surgery on the encoded files (the truncated model and the garbage `.pb` are spelled\n\
         out there as transformations and literal bytes). `cargo test` fails when this tree is\n\
         stale; `cargo xtask fixtures --check` checks the same without writing anything.\n\
         \n\
         Expected outputs are literals worked by hand. In cases that must be refused before any\n\
         comparison, the expected output is well-formed but its values do not matter.\n\
         \n\
         Symbolic links, hard links and FIFOs are never committed (a checkout would not keep them\n\
         faithfully): `tests/cli/hostile.rs` builds those cases in a temporary directory when it\n\
         runs, from a copy of `passing/external_data_inside_the_directory`.\n\
         \n\
         `tests/cli/verdicts.rs` runs every fixture alone and asserts its verdict, the key words of\n\
         its reason and the exit status, then runs the whole tree at once and checks that every\n\
         verdict is the one the fixture gets alone. To add a fixture: describe it in\n\
         `xtask/src/fixtures.rs`, run `cargo xtask fixtures`, and give it a test in\n\
         `tests/cli/verdicts.rs` (`every_fixture_has_a_test_of_its_own` fails until you do).\n\
         \n\
         `onnx-node-sample/` is the exception: it is not generated but holds a few official ONNX\n\
         node tests from outside the operator families, copied unmodified (its README says from\n\
         where). `tests/cli/onnx_node_sample.rs` asserts their verdicts; `cargo xtask fixtures`\n\
         leaves that directory alone, and the tests above skip it.\n\
         \n\
         Two more generated directories are not verdict groups, and the tests that run the whole\n\
         tree leave them out: `actual/` holds cases together with the outputs of an imagined\n\
         runtime under test, for `run --actual` (`tests/cli/actual.rs`), and `expectations/` holds\n\
         expectations files naming the fixtures above (`tests/cli/expectations.rs`). Both are\n\
         described at the end of this file.\n",
    );
    for group in Group::ALL {
        s.push_str(&format!(
            "\n## `{}/` ({})\n\n| fixture | op | ai.onnx opset | what it holds |\n|---|---|---|---|\n",
            group.dir(),
            group.verdict()
        ));
        for f in fixtures.iter().filter(|f| f.group == group) {
            s.push_str(&format!(
                "| `{}` | {} | {} | {} |\n",
                f.name,
                testdata::op_label(&f.case),
                f.case.opset,
                f.about
            ));
        }
    }
    s.push_str(&format!(
        "\n## `{ACTUAL}/` (for `run --actual`)\n\
         \n\
         `{ACTUAL}/cases/` holds cases and `{ACTUAL}/outputs/` the outputs a runtime under test\n\
         produced for them, mirroring the case tree\n\
         (`{ACTUAL}/outputs/<case>/test_data_set_0/output_0.pb`; a case without one stands for a\n\
         runtime that wrote nothing). The verdict is the one of\n\
         `onnx-idx-check run tests/fixtures/{ACTUAL}/cases --actual tests/fixtures/{ACTUAL}/outputs`;\n\
         runtime outputs are literals worked by hand like the expected outputs.\n\
         \n\
         | case | op | ai.onnx opset | verdict | what it holds |\n\
         |---|---|---|---|---|\n"
    ));
    for f in runtime {
        s.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            f.name,
            testdata::op_label(&f.case),
            f.case.opset,
            f.verdict,
            f.about
        ));
    }
    s.push_str(&format!(
        "\n## `{EXPECTATIONS_DIR}/`\n\
         \n\
         Expectations files (`run --expectations FILE`) whose entries name the fixtures above by\n\
         their names relative to `tests/fixtures/`; each entry's comment says what it exercises.\n\
         \n\
         | file | what it holds |\n\
         |---|---|\n"
    ));
    for (name, text) in EXPECTATIONS {
        let about = text
            .lines()
            .next()
            .unwrap_or("")
            .trim_start_matches('#')
            .trim();
        s.push_str(&format!("| `{name}` | {about} |\n"));
    }
    s
}

// ---------------------------------------------------------------------------------------------
// Building blocks.

fn fixture(
    group: Group,
    name: &'static str,
    about: &'static str,
    mut case: Case,
    edits: Vec<Edit>,
) -> Fixture {
    case.name = name;
    case.source = about;
    Fixture {
        group,
        name,
        about,
        case,
        edits,
    }
}

fn case(op_type: &'static str, opset: i64) -> Case {
    Case {
        name: "",
        source: "",
        op_type,
        domain: "",
        opset,
        imports: Vec::new(),
        attributes: Vec::new(),
        inputs: Vec::new(),
        outputs: Vec::new(),
        storage: Storage::Raw,
    }
}

fn model(change: impl Fn(&mut pb::ModelProto) + 'static) -> Edit {
    Edit::Model(Box::new(change))
}

fn tensor_file(file: &'static str, change: impl Fn(&mut pb::TensorProto) + 'static) -> Edit {
    Edit::Tensor(file, Box::new(change))
}

/// Declares the graph input or output `name` with element type `dtype`.
fn declare(name: &'static str, dtype: DataType) -> Edit {
    model(move |m| {
        let Some(g) = m.graph.as_mut() else { return };
        for v in g.input.iter_mut().chain(g.output.iter_mut()) {
            if v.name != name {
                continue;
            }
            if let Some(pb::type_proto::Value::TensorType(t)) =
                v.r#type.as_mut().and_then(|t| t.value.as_mut())
            {
                t.elem_type = dtype as i32;
            }
        }
    })
}

/// Stores `file`'s tensor as `dtype` with these raw (little-endian) bytes.
fn store_raw(file: &'static str, dtype: DataType, raw: Vec<u8>) -> Edit {
    tensor_file(file, move |t| {
        t.data_type = dtype as i32;
        t.raw_data = raw.clone().into();
        t.float_data.clear();
        t.int32_data.clear();
        t.int64_data.clear();
    })
}

/// Declares graph value `name` as `dtype` and stores its file with these raw bytes.
fn retype(name: &'static str, file: &'static str, dtype: DataType, raw: Vec<u8>) -> Vec<Edit> {
    vec![declare(name, dtype), store_raw(file, dtype, raw)]
}

/// Moves `file`'s raw bytes out to external data at `location` (offset 0, length as stored).
fn external(file: &'static str, location: &'static str) -> Edit {
    tensor_file(file, move |t| {
        let length = t.raw_data.len().to_string();
        t.raw_data.clear();
        t.data_location = DataLocation::External as i32;
        t.external_data = vec![
            pb::StringStringEntryProto {
                key: "location".into(),
                value: location.into(),
            },
            pb::StringStringEntryProto {
                key: "length".into(),
                value: length,
            },
        ];
    })
}

/// OpenVINO's operator domain (D13).
const OPENVINO: &str = "org.openvinotoolkit";
/// onnxruntime's contrib and training domain (D14).
const MICROSOFT: &str = "com.microsoft";

/// Adds an opset import.
fn import(domain: &'static str, version: i64) -> Edit {
    model(move |m| {
        m.opset_import.push(pb::OperatorSetIdProto {
            domain: domain.into(),
            version,
        })
    })
}

/// Moves the single node into `domain`.
fn node_domain(domain: &'static str) -> Edit {
    model(move |m| {
        if let Some(g) = m.graph.as_mut() {
            for n in &mut g.node {
                n.domain = domain.into();
            }
        }
    })
}

fn le_f32(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Bytes that are no TensorProto: the first tag, the varint 0xDF 0x3A = 7519, has wire type
/// 7519 & 7 = 7, which protobuf does not define, so decoding fails on the first field. The rest
/// is arbitrary, written out so the file never depends on a random generator.
const GARBAGE: [u8; 32] = [
    0xDF, 0x3A, 0x91, 0x07, 0xC4, 0x5E, 0x22, 0xB8, 0x6F, 0x13, 0xE9, 0x80, 0x4D, 0xA7, 0x1C, 0xF2,
    0x58, 0x0B, 0x96, 0xE3, 0x71, 0x2D, 0xCA, 0x44, 0x9F, 0x36, 0xB1, 0x08, 0x65, 0xDE, 0x17, 0xAF,
];

// ---------------------------------------------------------------------------------------------
// Base cases, each valid and worked by hand.

/// Gather-13, axis 0: rows 0 and 2 of [[1, 2], [3, 4], [5, 6]] are [[1, 2], [5, 6]].
fn gather_rows(expected: &[f32]) -> Case {
    case("Gather", 13)
        .with_axis(0)
        .input(f32s("data", &[3, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
        .input(i64s("indices", &[2], &[0, 2]))
        .output(f32s("output", &[2, 2], expected))
}

/// Gather-13 on a 1-D float tensor [1, 2]: index 1 gives [2].
fn gather_1d(opset: i64) -> Case {
    case("Gather", opset)
        .with_axis(0)
        .input(f32s("data", &[2], &[1.0, 2.0]))
        .input(i64s("indices", &[1], &[1]))
        .output(f32s("output", &[1], &[2.0]))
}

/// ScatterElements-16 with reduction add, axis 1: both updates (1 and 2) land on output[0][1],
/// which starts at 2, so it ends at 2 + 1 + 2 = 5 and the output is [[1, 5, 3, 4, 5]]. Exact in
/// f32; `cell` replaces the 5 in the expected output.
fn scatter_add(cell: f32) -> Case {
    case("ScatterElements", 16)
        .with_axis(1)
        .with_reduction("add")
        .input(f32s("data", &[1, 5], &[1.0, 2.0, 3.0, 4.0, 5.0]))
        .input(i64s("indices", &[1, 2], &[1, 1]))
        .input(f32s("updates", &[1, 2], &[1.0, 2.0]))
        .output(f32s("output", &[1, 5], &[1.0, cell, 3.0, 4.0, 5.0]))
}

/// ScatterElements Example 2 (axis 1): positions 1 and 3 of [[1, 2, 3, 4, 5]] get 1.1 and 2.1.
fn scatter_example2(op_type: &'static str, opset: i64) -> Case {
    case(op_type, opset)
        .with_axis(1)
        .input(f32s("data", &[1, 5], &[1.0, 2.0, 3.0, 4.0, 5.0]))
        .input(i64s("indices", &[1, 2], &[1, 3]))
        .input(f32s("updates", &[1, 2], &[1.1, 2.1]))
        .output(f32s("output", &[1, 5], &[1.0, 1.1, 3.0, 2.1, 5.0]))
}

/// GatherND-`opset` Example 1: data [[0, 1], [2, 3]] at [0, 0] and [1, 1] is [0, 3]; `expected`
/// stands in the expected output.
fn gather_nd_example1(opset: i64, expected: &[i64]) -> Case {
    case("GatherND", opset)
        .input(i64s("data", &[2, 2], &[0, 1, 2, 3]))
        .input(i64s("indices", &[2, 2], &[0, 0, 1, 1]))
        .output(i64s("output", &[2], expected))
}

/// ScatterND-`opset` on data [1..8] with `indices` (shape [4, 1]) and updates [9, 10, 11, 12];
/// with ScatterND Example 1's indices [4, 3, 1, 7] the output is [1, 11, 3, 10, 9, 6, 7, 12].
fn scatter_nd_1d(opset: i64, indices: &[i64], expected: &[f32]) -> Case {
    case("ScatterND", opset)
        .input(f32s(
            "data",
            &[8],
            &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
        ))
        .input(i64s("indices", &[4, 1], indices))
        .input(f32s("updates", &[4], &[9.0, 10.0, 11.0, 12.0]))
        .output(f32s("output", &[8], expected))
}

/// TensorScatter-24 on past_cache zeros (2, 4, 2) with update (2, 2, 2) = rows [1, 2], [3, 4]
/// (batch 0) and [5, 6], [7, 8] (batch 1), and `write_indices` (default axis -2 = 1).
fn tensor_scatter(write_indices: Tensor, expected: &[f32]) -> Case {
    case("TensorScatter", 24)
        .input(f32s("past_cache", &[2, 4, 2], &[0.0; 16]))
        .input(f32s(
            "update",
            &[2, 2, 2],
            &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
        ))
        .input(write_indices)
        .output(f32s("present_cache", &[2, 4, 2], expected))
}

/// OpenVINO Gather-8 (org.openvinotoolkit 8 beside ai.onnx 13) on data [1, 2, 3, 4, 5] with
/// `indices`, the `axis` input and `batch_dims`.
fn openvino_gather(indices: Tensor, axis: Tensor, batch_dims: i64, expected: Tensor) -> Case {
    case("Gather", 13)
        .in_domain(OPENVINO, 8)
        .with_int("batch_dims", batch_dims)
        .input(i64s("data", &[5], &[1, 2, 3, 4, 5]))
        .input(indices)
        .input(axis)
        .output(expected)
}

/// com.microsoft GatherGrad-1, axis 0, on `shape` with `indices` and float `dY`.
fn gather_grad(shape: &[i64], indices: Tensor, dy: Tensor, expected: Tensor) -> Case {
    case("GatherGrad", 13)
        .in_domain(MICROSOFT, 1)
        .with_axis(0)
        .input(i64s("shape", &[shape.len() as i64], shape))
        .input(indices)
        .input(dy)
        .output(expected)
}

// ---------------------------------------------------------------------------------------------
// The fixtures.

/// Every fixture, by group.
pub fn fixtures() -> Vec<Fixture> {
    let mut all = passing();
    all.extend(failing());
    all.extend(diagnosed());
    all.extend(errored_spec());
    all.extend(errored_nd());
    all.extend(errored_new_ops());
    all.extend(errored_files());
    all.extend(skipped());
    all.extend(hostile());
    all
}

fn passing() -> Vec<Fixture> {
    use Group::Passing;
    let nan_a = f32::from_bits(0x7FC0_0000);
    let nan_b = f32::from_bits(0x7FC0_0001);
    vec![
        // |5.004 - 5| = 0.004 <= 1e-7 + 1e-3 * 5.004 = 0.0050041.
        fixture(
            Passing,
            "reduction_within_tolerance",
            "a reduction result 0.004 away from the expected 5.004, inside the default tolerance \
             (rtol 1e-3, atol 1e-7)",
            scatter_add(5.004),
            vec![],
        ),
        // Gathering element 0 copies the NaN with payload 0; the expected NaN has payload 1.
        fixture(
            Passing,
            "nan_payloads_are_equal",
            "the expected output is a NaN with another payload than the gathered one: any NaN \
             equals any NaN (D9)",
            case("Gather", 13)
                .with_axis(0)
                .input(f32s("data", &[2], &[nan_a, 1.0]))
                .input(i64s("indices", &[2], &[0, 1]))
                .output(f32s("output", &[2], &[nan_b, 1.0])),
            vec![],
        ),
        // OpenVINO's Gather-8 spec example: data [1, 2, 3, 4, 5], indices [3, 10, -20], axis 0:
        // 3 -> 4; 10 and -20 + 5 = -15 are outside [0, 4], so their outputs stay 0.
        fixture(
            Passing,
            "openvino_gather8_zero_fills",
            "OpenVINO Gather-8 (org.openvinotoolkit 8, beside ai.onnx 13) leaves out-of-range \
             indices' outputs zero instead of erroring (D13)",
            case("Gather", 13)
                .in_domain(OPENVINO, 8)
                .input(f32s("data", &[5], &[1.0, 2.0, 3.0, 4.0, 5.0]))
                .input(i64s("indices", &[3], &[3, 10, -20]))
                .input(i64s("axis", &[], &[0]))
                .output(f32s("output", &[3], &[4.0, 0.0, 0.0])),
            vec![],
        ),
        fixture(
            Passing,
            "external_data_inside_the_directory",
            "input_0.pb keeps its data in test_data_set_0/data.bin: external data inside the \
             directory is read (the control for the refused locations)",
            gather_1d(13),
            vec![
                external(INPUT_0, "data.bin"),
                Edit::Bytes("test_data_set_0/data.bin", le_f32(&[1.0, 2.0])),
            ],
        ),
        // Elements -1 + 3 = 2, 0, 0 and -3 + 3 = 0 of [10, 20, 30]: [[30, 10], [10, 10]].
        fixture(
            Passing,
            "gather_int32_negative_indices_typed",
            "Gather-13 with int32 indices, two of them negative and three reading element 0, \
             all tensors typed (int32_data): the traits the other passing Gathers lack",
            case("Gather", 13)
                .with_axis(0)
                .input(i32s("data", &[3], &[10, 20, 30]))
                .input(i32s("indices", &[2, 2], &[-1, 0, 0, -3]))
                .output(i32s("output", &[2, 2], &[30, 10, 10, 10]))
                .typed(),
            vec![],
        ),
        // Rows 0 and 2 of [[1, 2], [3, 4], [5, 6]].
        fixture(
            Passing,
            "default_domain_imported_as_ai_onnx",
            "a Gather node (domain \"\") in a model that imports the default domain under its \
             long name \"ai.onnx\" (D1: \"\" and \"ai.onnx\" are the same domain)",
            gather_rows(&[1.0, 2.0, 5.0, 6.0]),
            vec![model(|m| m.opset_import[0].domain = "ai.onnx".into())],
        ),
    ]
}

fn failing() -> Vec<Fixture> {
    use Group::Failing;
    vec![
        fixture(
            Failing,
            "wrong_value",
            "one expected element is wrong: [1,0] is 7 where the gather gives 5",
            gather_rows(&[1.0, 2.0, 7.0, 6.0]),
            vec![],
        ),
        // Rows 2, 0, 1 of [[1, 2], [3, 4], [5, 6]] are [[5, 6], [1, 2], [3, 4]], shape [3, 2].
        fixture(
            Failing,
            "wrong_shape",
            "the expected output has the right values in shape [2, 3]; the gather gives [3, 2]",
            case("Gather", 13)
                .with_axis(0)
                .input(f32s("data", &[3, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
                .input(i64s("indices", &[3], &[2, 0, 1]))
                .output(f32s("output", &[2, 3], &[5.0, 6.0, 1.0, 2.0, 3.0, 4.0])),
            vec![],
        ),
        fixture(
            Failing,
            "wrong_dtype",
            "the expected output holds the right values as double; the gather of float data \
             gives float",
            gather_rows(&[1.0, 2.0, 5.0, 6.0]),
            vec![tensor_file(OUTPUT_0, |t| {
                t.data_type = DataType::Double as i32;
                t.raw_data.clear();
                t.double_data = vec![1.0, 2.0, 5.0, 6.0];
            })],
        ),
        // Elements 2 and 0 of [1, 2, 3] are [3, 1].
        fixture(
            Failing,
            "nan_expected",
            "NaN is expected at [0], where the gather gives 3",
            case("Gather", 13)
                .with_axis(0)
                .input(f32s("data", &[3], &[1.0, 2.0, 3.0]))
                .input(i64s("indices", &[2], &[2, 0]))
                .output(f32s("output", &[2], &[f32::NAN, 1.0])),
            vec![],
        ),
        // Element 0 of [+0, 1] is +0.
        fixture(
            Failing,
            "negative_zero_expected",
            "-0.0 is expected where the gather copies +0.0: data movement compares bit for bit \
             (D9)",
            case("Gather", 13)
                .with_axis(0)
                .input(f32s("data", &[2], &[0.0, 1.0]))
                .input(i64s("indices", &[1], &[0]))
                .output(f32s("output", &[1], &[-0.0])),
            vec![],
        ),
        // |5.02 - 5| = 0.02 > 1e-7 + 1e-3 * 5.02 = 0.0050201.
        fixture(
            Failing,
            "reduction_beyond_tolerance",
            "a reduction result 0.02 away from the expected 5.02, outside the default tolerance",
            scatter_add(5.02),
            vec![],
        ),
        // A scalar index into 1-D data removes the only axis: element 3 of [10, 20, 30, 40] is
        // the rank-0 tensor 40.
        fixture(
            Failing,
            "rank0_expected_as_rank1",
            "the expected output is [40] of shape [1]; the gather gives the rank-0 tensor 40",
            case("Gather", 13)
                .with_axis(0)
                .input(i64s("data", &[4], &[10, 20, 30, 40]))
                .input(i64s("indices", &[], &[3]))
                .output(i64s("output", &[1], &[40])),
            vec![],
        ),
        // GatherND Example 1 gives [0, 3].
        fixture(
            Failing,
            "gathernd_wrong_value",
            "GatherND-13 Example 1 with the expected [0, 2]; data[1][1] is 3",
            gather_nd_example1(13, &[0, 2]),
            vec![],
        ),
        // indices [4, 3, 4, 7] with reduction none: [4] gets 9, then 11 (the last write wins,
        // D7), [3] gets 10, [7] gets 12: [1, 2, 3, 10, 11, 6, 7, 12].
        fixture(
            Failing,
            "scatternd_wrong_value",
            "ScatterND-13 writing [4] twice; the expected output keeps the first write (9) where \
             the last write in row-major order (11) wins (D7)",
            scatter_nd_1d(
                13,
                &[4, 3, 4, 7],
                &[1.0, 2.0, 3.0, 10.0, 9.0, 6.0, 7.0, 12.0],
            ),
            vec![],
        ),
        // Circular, write_indices [1, 3]: batch 0 rows 1, 2 = [1, 2], [3, 4]; batch 1 row 3 =
        // [5, 6] and row (3 + 1) mod 4 = 0 = [7, 8]. The expected output leaves row 0 at zero.
        fixture(
            Failing,
            "tensor_scatter_wrong_value",
            "TensorScatter-24 in circular mode; the expected output drops the write that wraps \
             around to row 0 of batch 1",
            tensor_scatter(
                i64s("write_indices", &[2], &[1, 3]),
                &[
                    0.0, 0.0, 1.0, 2.0, 3.0, 4.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 5.0, 6.0,
                ],
            )
            .with_str("mode", "circular"),
            vec![],
        ),
        // Spec Example 7: [3, 10, -20] gives [4, 0, 0]; clamping would give [4, 5, 1].
        fixture(
            Failing,
            "openvino_gather_wrong_value",
            "OpenVINO Gather-8 Example 7 with the expected output of a runtime that clamps \
             out-of-range indices ([4, 5, 1]) where Gather-8 fills zeros ([4, 0, 0])",
            openvino_gather(
                i64s("indices", &[3], &[3, 10, -20]),
                i64s("axis", &[], &[0]),
                0,
                i64s("output", &[3], &[4, 5, 1]),
            ),
            vec![],
        ),
        // indices [0, 0, 2], dY [1, 2, 3]: dX[0] = 1 + 2 = 3, dX[2] = 3, so [3, 0, 3]
        // (np.add.at(np.zeros(3), [0, 0, 2], [1, 2, 3])). Overwriting gives [2, 0, 3].
        fixture(
            Failing,
            "gather_grad_wrong_value",
            "GatherGrad-1 with a repeated index; the expected dX overwrites (2) where the \
             gradient accumulates (1 + 2 = 3)",
            gather_grad(
                &[3],
                i64s("indices", &[3], &[0, 0, 2]),
                f32s("dY", &[3], &[1.0, 2.0, 3.0]),
                f32s("dX", &[3], &[2.0, 0.0, 3.0]),
            ),
            vec![],
        ),
        // axis 1, indices [[1, 1, 1]], dY [[1, 2, 4]] on shape [1, 2]: dX[0][1] = 1 + 2 + 4 = 7
        // (np.add.at(dX, (0, [1, 1, 1]), [1, 2, 4])), so [[0, 7]]; overwriting gives [[0, 4]].
        fixture(
            Failing,
            "gather_elements_grad_wrong_value",
            "GatherElementsGrad-1 with a repeated index; the expected dX overwrites (4) where \
             the gradient accumulates (1 + 2 + 4 = 7)",
            case("GatherElementsGrad", 13)
                .in_domain(MICROSOFT, 1)
                .with_axis(1)
                .input(f32s("dY", &[1, 3], &[1.0, 2.0, 4.0]))
                .input(i64s("shape", &[2], &[1, 2]))
                .input(i64s("indices", &[1, 3], &[1, 1, 1]))
                .output(f32s("dX", &[1, 2], &[0.0, 4.0])),
            vec![],
        ),
    ]
}

/// Spec violations (D2-D6). The expected outputs are never compared.
fn errored_spec() -> Vec<Fixture> {
    use Group::Errored;
    let data_2x4 = || f32s("data", &[2, 4], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);
    vec![
        fixture(
            Errored,
            "gather_index_out_of_range",
            "indices[1,0] = 4 on an axis of size 4 (D3)",
            case("Gather", 13)
                .with_axis(1)
                .input(data_2x4())
                .input(i64s("indices", &[2, 2], &[0, 1, 4, 2]))
                .output(f32s("output", &[2, 2, 2], &[0.0; 8])),
            vec![],
        ),
        fixture(
            Errored,
            "gather_elements_index_out_of_range",
            "indices[1,0] = -3 on an axis of size 2, past the negative end (D3)",
            case("GatherElements", 13)
                .with_axis(0)
                .input(f32s("data", &[2, 2], &[1.0, 2.0, 3.0, 4.0]))
                .input(i64s("indices", &[2, 2], &[0, 1, -3, 0]))
                .output(f32s("output", &[2, 2], &[0.0; 4])),
            vec![],
        ),
        fixture(
            Errored,
            "scatter_elements_index_out_of_range",
            "indices[0,1] = 5 on an axis of size 5 (D3)",
            case("ScatterElements", 13)
                .with_axis(1)
                .input(f32s("data", &[1, 5], &[1.0, 2.0, 3.0, 4.0, 5.0]))
                .input(i64s("indices", &[1, 2], &[1, 5]))
                .input(f32s("updates", &[1, 2], &[1.1, 2.1]))
                .output(f32s("output", &[1, 5], &[0.0; 5])),
            vec![],
        ),
        fixture(
            Errored,
            "gather_negative_index_opset1",
            "a negative index at Gather-1, which has none (D2)",
            case("Gather", 1)
                .with_axis(0)
                .input(f32s("data", &[3, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
                .input(i64s("indices", &[1], &[-1]))
                .output(f32s("output", &[1, 2], &[5.0, 6.0])),
            vec![],
        ),
        fixture(
            Errored,
            "scatter_negative_index_opset10",
            "a negative index at Scatter-9, which has none (D2)",
            case("Scatter", 10)
                .with_axis(1)
                .input(f32s("data", &[1, 5], &[1.0, 2.0, 3.0, 4.0, 5.0]))
                .input(i64s("indices", &[1, 1], &[-1]))
                .input(f32s("updates", &[1, 1], &[9.0]))
                .output(f32s("output", &[1, 5], &[1.0, 2.0, 3.0, 4.0, 9.0])),
            vec![],
        ),
        fixture(
            Errored,
            "scatter_deprecated_opset11",
            "Scatter in a model importing opset 11, where it is deprecated (D5)",
            scatter_example2("Scatter", 11),
            vec![],
        ),
        fixture(
            Errored,
            "reduction_attribute_opset13",
            "a reduction attribute at ScatterElements-13, which has none (D5)",
            scatter_example2("ScatterElements", 13).with_reduction("add"),
            vec![],
        ),
        fixture(
            Errored,
            "reduction_max_opset16",
            "reduction \"max\" at ScatterElements-16, which allows none/add/mul (D5)",
            scatter_example2("ScatterElements", 16).with_reduction("max"),
            vec![],
        ),
        fixture(
            Errored,
            "reduction_sub_opset18",
            "the unknown reduction \"sub\" at ScatterElements-18 (D5)",
            scatter_example2("ScatterElements", 18).with_reduction("sub"),
            vec![],
        ),
        fixture(
            Errored,
            "axis_out_of_range",
            "axis 2 on rank-2 data (D5)",
            case("GatherElements", 13)
                .with_axis(2)
                .input(f32s("data", &[2, 2], &[1.0, 2.0, 3.0, 4.0]))
                .input(i64s("indices", &[2, 2], &[0, 0, 1, 0]))
                .output(f32s("output", &[2, 2], &[0.0; 4])),
            vec![],
        ),
        fixture(
            Errored,
            "gather_elements_rank_mismatch",
            "rank-1 indices with rank-2 data (D6)",
            case("GatherElements", 13)
                .with_axis(0)
                .input(f32s("data", &[2, 2], &[1.0, 2.0, 3.0, 4.0]))
                .input(i64s("indices", &[2], &[0, 1]))
                .output(f32s("output", &[2], &[0.0; 2])),
            vec![],
        ),
        fixture(
            Errored,
            "scatter_elements_updates_shape",
            "updates of shape [1, 3] with indices of shape [1, 2] (D6)",
            case("ScatterElements", 13)
                .with_axis(1)
                .input(f32s("data", &[1, 5], &[1.0, 2.0, 3.0, 4.0, 5.0]))
                .input(i64s("indices", &[1, 2], &[1, 3]))
                .input(f32s("updates", &[1, 3], &[1.1, 2.1, 3.1]))
                .output(f32s("output", &[1, 5], &[1.0, 1.1, 3.0, 2.1, 5.0])),
            vec![],
        ),
        // bfloat16 1, 2, 3, 4 = 0x3F80, 0x4000, 0x4040, 0x4080; Example 1 gives [[1, 1], [4, 3]].
        fixture(
            Errored,
            "bfloat16_gather_elements_opset11",
            "bfloat16 data at GatherElements-11; bfloat16 arrives with version 13 (D4)",
            case("GatherElements", 11)
                .with_axis(1)
                .input(tensor(
                    "data",
                    &[2, 2],
                    Values::Bfloat16(vec![0x3F80, 0x4000, 0x4040, 0x4080]),
                ))
                .input(i64s("indices", &[2, 2], &[0, 0, 1, 0]))
                .output(tensor(
                    "output",
                    &[2, 2],
                    Values::Bfloat16(vec![0x3F80, 0x3F80, 0x4080, 0x4040]),
                )),
            vec![],
        ),
        // float8e4m3fn 1, 2, 3, 4 = 0x38, 0x40, 0x44, 0x48; indices [1, 0] swap the rows.
        fixture(
            Errored,
            "float8_gather_opset13",
            "float8e4m3fn data at Gather-13, which no Gather version allows (D4)",
            case("Gather", 13)
                .with_axis(0)
                .input(f32s("data", &[2, 2], &[0.0; 4]))
                .input(i64s("indices", &[2], &[1, 0]))
                .output(f32s("output", &[2, 2], &[0.0; 4])),
            [
                retype(
                    "data",
                    INPUT_0,
                    DataType::Float8e4m3fn,
                    vec![0x38, 0x40, 0x44, 0x48],
                ),
                retype(
                    "output",
                    OUTPUT_0,
                    DataType::Float8e4m3fn,
                    vec![0x44, 0x48, 0x38, 0x40],
                ),
            ]
            .into_iter()
            .flatten()
            .collect(),
        ),
        fixture(
            Errored,
            "int16_indices",
            "int16 indices at Gather-13, which takes int32 or int64 (D4)",
            gather_rows(&[1.0, 2.0, 5.0, 6.0]),
            retype("indices", INPUT_1, DataType::Int16, vec![0, 0, 2, 0]),
        ),
        fixture(
            Errored,
            "gather_rank0_data",
            "Gather on rank-0 data (the reference evaluator returns [5.0])",
            case("Gather", 13)
                .with_axis(0)
                .input(f32s("data", &[], &[5.0]))
                .input(i64s("indices", &[1], &[0]))
                .output(f32s("output", &[1], &[5.0])),
            vec![],
        ),
        fixture(
            Errored,
            "domain_not_imported",
            "the node is in domain com.example, which the model does not import (D1)",
            gather_rows(&[1.0, 2.0, 5.0, 6.0]),
            vec![node_domain("com.example")],
        ),
    ]
}

/// Spec violations of GatherND and ScatterND (D3, D5, D6). The expected outputs are never
/// compared.
fn errored_nd() -> Vec<Fixture> {
    use Group::Errored;
    // GatherND's first official example: data [[0, 1], [2, 3]], indices [[0, 0], [1, 1]] pick
    // data[0][0] = 0 and data[1][1] = 3.
    let gather_nd = |opset, indices: Tensor| {
        case("GatherND", opset)
            .input(i64s("data", &[2, 2], &[0, 1, 2, 3]))
            .input(indices)
            .output(i64s("output", &[2], &[0, 3]))
    };
    vec![
        fixture(
            Errored,
            "gathernd_int32_indices",
            "int32 indices at GatherND-13, which takes int64 only (D6)",
            gather_nd(13, i32s("indices", &[2, 2], &[0, 0, 1, 1])),
            vec![],
        ),
        fixture(
            Errored,
            "gathernd_batch_dims_opset11",
            "a batch_dims attribute at GatherND-11, which has none (D5)",
            gather_nd(11, i64s("indices", &[2, 2], &[0, 0, 1, 1])).with_int("batch_dims", 0),
            vec![],
        ),
        fixture(
            Errored,
            "gathernd_index_out_of_range",
            "indices[1,0] = 2 on a dimension of size 2 (D3)",
            gather_nd(13, i64s("indices", &[2, 2], &[0, 0, 2, 1])),
            vec![],
        ),
        // ScatterND's official example with one update too few: indices [[4], [3], [1], [7]]
        // need updates of shape [4] ++ data.shape[1:] = [4].
        fixture(
            Errored,
            "scatternd_updates_shape",
            "updates of shape [3] where indices [4, 1] on data [8] need [4] (D6)",
            case("ScatterND", 13)
                .input(f32s(
                    "data",
                    &[8],
                    &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
                ))
                .input(i64s("indices", &[4, 1], &[4, 3, 1, 7]))
                .input(f32s("updates", &[3], &[9.0, 10.0, 11.0]))
                .output(f32s(
                    "output",
                    &[8],
                    &[1.0, 11.0, 3.0, 10.0, 9.0, 6.0, 7.0, 8.0],
                )),
            vec![],
        ),
    ]
}

/// Spec violations of GatherND, ScatterND, TensorScatter, OpenVINO Gather-8 and GatherGrad (D3,
/// D5, D6, D13, D14, docs/semantics.md sections 3, 4 and 6). The expected outputs are never compared.
fn errored_new_ops() -> Vec<Fixture> {
    use Group::Errored;
    let ts_zeros = [0.0; 16];
    vec![
        // b = 1 leaves r - b = 1 dimension to index, but the tuples have k = 2 components.
        fixture(
            Errored,
            "gathernd_k_exceeds_rank_minus_batch_dims",
            "GatherND-13 with batch_dims 1 on rank-2 data and tuples of 2: k = 2 > r - b = 1 (D6)",
            case("GatherND", 13)
                .with_int("batch_dims", 1)
                .input(i64s("data", &[2, 2], &[0, 1, 2, 3]))
                .input(i64s("indices", &[2, 2], &[0, 1, 1, 0]))
                .output(i64s("output", &[2], &[0, 0])),
            vec![],
        ),
        // ORT's CPU kernel accepts this (it checks only that 4 is a multiple of 2, ORT#25053).
        fixture(
            Errored,
            "gathernd_batch_dims_mismatch",
            "GatherND-13 with batch_dims 1: indices' batch dim is 4, data's is 2 (D6)",
            case("GatherND", 13)
                .with_int("batch_dims", 1)
                .input(f32s(
                    "data",
                    &[2, 2, 2],
                    &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0],
                ))
                .input(i64s("indices", &[4, 1], &[0, 1, 1, 0]))
                .output(f32s("output", &[4, 2], &[0.0; 8])),
            vec![],
        ),
        fixture(
            Errored,
            "gathernd_batch_dims_negative",
            "GatherND-13 with batch_dims -1; the spec requires 0 <= b < min(q, r) (D6)",
            gather_nd_example1(13, &[0, 3]).with_int("batch_dims", -1),
            vec![],
        ),
        fixture(
            Errored,
            "scatternd_index_out_of_range",
            "ScatterND-13 Example 1 with indices[2,0] = 8 on data of 8 elements (D3)",
            scatter_nd_1d(13, &[4, 3, 8, 7], &[0.0; 8]),
            vec![],
        ),
        fixture(
            Errored,
            "scatternd_reduction_attribute_opset13",
            "a reduction attribute at ScatterND-13, which has none (D5)",
            scatter_nd_1d(13, &[4, 3, 1, 7], &[0.0; 8]).with_reduction("add"),
            vec![],
        ),
        fixture(
            Errored,
            "scatternd_reduction_max_opset16",
            "reduction \"max\" at ScatterND-16, which allows none/add/mul (D5)",
            scatter_nd_1d(16, &[4, 3, 1, 7], &[0.0; 8]).with_reduction("max"),
            vec![],
        ),
        fixture(
            Errored,
            "tensor_scatter_linear_overflow",
            "TensorScatter-24 in linear mode with write_indices[0] + L = 3 + 2 > M = 4",
            tensor_scatter(i64s("write_indices", &[2], &[3, 0]), &ts_zeros),
            vec![],
        ),
        // The reference evaluator wraps -1 through Python's negative indexing.
        fixture(
            Errored,
            "tensor_scatter_negative_write_index",
            "TensorScatter-24 with write_indices[1] = -1 (write indices are never negative, D2)",
            tensor_scatter(i64s("write_indices", &[2], &[0, -1]), &ts_zeros),
            vec![],
        ),
        fixture(
            Errored,
            "tensor_scatter_axis_0",
            "TensorScatter-24 with axis 0, the batch axis",
            tensor_scatter(i64s("write_indices", &[2], &[0, 0]), &ts_zeros).with_axis(0),
            vec![],
        ),
        fixture(
            Errored,
            "tensor_scatter_mode_foo",
            "TensorScatter-24 with mode \"foo\" (linear or circular)",
            tensor_scatter(i64s("write_indices", &[2], &[0, 0]), &ts_zeros).with_str("mode", "foo"),
            vec![],
        ),
        fixture(
            Errored,
            "tensor_scatter_write_indices_length",
            "TensorScatter-24 with 3 write_indices for a batch of 2",
            tensor_scatter(i64s("write_indices", &[3], &[0, 1, 2]), &ts_zeros),
            vec![],
        ),
        // Rank-1 data and indices: batch_dims may be at most 1, and must not exceed axis 0.
        fixture(
            Errored,
            "openvino_gather_batch_dims_exceeds_axis",
            "OpenVINO Gather-8 with batch_dims 1 and axis 0: batch_dims must be <= axis (D13)",
            openvino_gather(
                i64s("indices", &[5], &[0, 1, 2, 3, 4]),
                i64s("axis", &[], &[0]),
                1,
                i64s("output", &[5], &[1, 2, 3, 4, 5]),
            ),
            vec![],
        ),
        fixture(
            Errored,
            "openvino_gather_axis_two_elements",
            "OpenVINO Gather-8 whose axis input is [0, 0], two elements (D13)",
            openvino_gather(
                i64s("indices", &[2], &[0, 4]),
                i64s("axis", &[2], &[0, 0]),
                0,
                i64s("output", &[2], &[1, 5]),
            ),
            vec![],
        ),
        // The forward Gather(data (3, 2), indices [0, 2], axis 0) gives dY of shape (2, 2), not
        // the (3, 2) given.
        fixture(
            Errored,
            "gather_grad_dy_shape_mismatch",
            "GatherGrad-1 with dY of shape [3, 2] where shape [3, 2] and indices [2] need [2, 2] \
             (D14)",
            gather_grad(
                &[3, 2],
                i64s("indices", &[2], &[0, 2]),
                f32s("dY", &[3, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
                f32s("dX", &[3, 2], &[0.0; 6]),
            ),
            vec![],
        ),
        fixture(
            Errored,
            "gather_grad_index_out_of_range",
            "GatherGrad-1 with indices[1] = 3 on an axis of size 3 (D3, D14)",
            gather_grad(
                &[3, 2],
                i64s("indices", &[2], &[0, 3]),
                f32s("dY", &[2, 2], &[1.0, 2.0, 3.0, 4.0]),
                f32s("dX", &[3, 2], &[0.0; 6]),
            ),
            vec![],
        ),
    ]
}

/// Malformed files (D10-D12, section 8) and data sets that do not match the graph.
fn errored_files() -> Vec<Fixture> {
    use Group::Errored;
    let valid = || gather_rows(&[1.0, 2.0, 5.0, 6.0]);
    vec![
        fixture(
            Errored,
            "truncated_model",
            "model.onnx is the first half of a valid model's bytes",
            valid(),
            vec![Edit::TruncateHalf(MODEL)],
        ),
        fixture(
            Errored,
            "garbage_input",
            "input_0.pb is 32 bytes that are no protobuf message (an undefined wire type first)",
            valid(),
            vec![Edit::Bytes(INPUT_0, GARBAGE.to_vec())],
        ),
        fixture(
            Errored,
            "raw_data_size_mismatch",
            "input_0.pb declares 2 floats and holds 7 bytes of raw_data",
            gather_1d(13),
            vec![tensor_file(INPUT_0, |t| t.raw_data.truncate(7))],
        ),
        fixture(
            Errored,
            "raw_and_float_data",
            "input_0.pb sets both raw_data and float_data",
            gather_1d(13),
            vec![tensor_file(INPUT_0, |t| t.float_data = vec![1.0, 2.0])],
        ),
        fixture(
            Errored,
            "unknown_data_type",
            "input_0.pb has data_type 99",
            gather_1d(13),
            vec![tensor_file(INPUT_0, |t| t.data_type = 99)],
        ),
        fixture(
            Errored,
            "huge_dims",
            "input_0.pb claims dims [2^40] floats (4 TiB) and holds 8 bytes: refused before \
             allocating (D12)",
            gather_1d(13),
            vec![tensor_file(INPUT_0, |t| t.dims = vec![1 << 40])],
        ),
        // A loader that skipped the check would find secret.bin (the case directory is the data
        // set's parent) and pass.
        fixture(
            Errored,
            "external_data_escaping",
            "input_0.pb's external data location is \"../secret.bin\", outside its directory \
             (D11); the file exists and holds the right bytes",
            gather_1d(13),
            vec![
                external(INPUT_0, "../secret.bin"),
                Edit::Bytes("secret.bin", le_f32(&[1.0, 2.0])),
            ],
        ),
        fixture(
            Errored,
            "external_data_absolute",
            "input_0.pb's external data location is the absolute path \"/etc/passwd\" (D11)",
            gather_1d(13),
            vec![external(INPUT_0, "/etc/passwd")],
        ),
        fixture(
            Errored,
            "missing_output",
            "test_data_set_0 has no output_0.pb",
            valid(),
            vec![Edit::Remove(OUTPUT_0)],
        ),
        fixture(
            Errored,
            "extra_input",
            "test_data_set_0 has an input_2.pb (a copy of input_1.pb) for a graph of 2 inputs",
            valid(),
            vec![Edit::Copy(INPUT_1, INPUT_2)],
        ),
        fixture(
            Errored,
            "missing_input",
            "test_data_set_0 has no input_1.pb",
            valid(),
            vec![Edit::Remove(INPUT_1)],
        ),
        fixture(
            Errored,
            "input_dtype_mismatch",
            "input_1.pb holds int32 indices; the graph declares them int64",
            case("Gather", 13)
                .with_axis(0)
                .input(f32s("data", &[3, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
                .input(i32s("indices", &[2], &[0, 2]))
                .output(f32s("output", &[2, 2], &[1.0, 2.0, 5.0, 6.0])),
            vec![declare("indices", DataType::Int64)],
        ),
        // Elements 1 and 0 of int8 [5, 300]: 300 does not fit.
        fixture(
            Errored,
            "int8_entry_out_of_range",
            "input_0.pb is int8 with the int32_data entry 300",
            case("Gather", 13)
                .with_axis(0)
                .input(i32s("data", &[2], &[5, 300]))
                .input(i64s("indices", &[2], &[1, 0]))
                .output(i32s("output", &[2], &[44, 5]))
                .typed(),
            vec![
                declare("data", DataType::Int8),
                declare("output", DataType::Int8),
                tensor_file(INPUT_0, |t| t.data_type = DataType::Int8 as i32),
                tensor_file(OUTPUT_0, |t| t.data_type = DataType::Int8 as i32),
            ],
        ),
    ]
}

/// A protobuf varint.
fn varint(v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    prost::encoding::encode_varint(v, &mut out);
    out
}

/// A length-delimited protobuf field: tag (wire type 2), length, body.
fn field(number: u64, body: &[u8]) -> Vec<u8> {
    let mut out = varint(number << 3 | 2);
    out.extend(varint(body.len() as u64));
    out.extend_from_slice(body);
    out
}

/// A length-delimited field whose length claims `claimed` bytes while `present` follow.
fn field_claiming(number: u64, claimed: u64, present: &[u8]) -> Vec<u8> {
    let mut out = varint(number << 3 | 2);
    out.extend(varint(claimed));
    out.extend_from_slice(present);
    out
}

/// A GraphProto holding one node nested `depth` levels deep: GraphProto.node (1) ->
/// NodeProto.attribute (5) -> AttributeProto.g (6) -> GraphProto..., built inside out as bytes
/// (encoding it as a message would recurse as deep).
fn nested_graph(depth: usize) -> Vec<u8> {
    let mut graph = Vec::new();
    for _ in 0..depth {
        graph = field(1, &field(5, &field(6, &graph)));
    }
    graph
}

/// Moves `file`'s raw bytes out to external data described by `entries` (key, value).
fn external_entries(file: &'static str, entries: &'static [(&'static str, &'static str)]) -> Edit {
    tensor_file(file, move |t| {
        t.raw_data.clear();
        t.data_location = DataLocation::External as i32;
        t.external_data = entries
            .iter()
            .map(|(k, v)| pb::StringStringEntryProto {
                key: k.to_string(),
                value: v.to_string(),
            })
            .collect();
    })
}

/// An int64 initializer `name` of `dims` whose data is external at `location`.
fn external_initializer(name: &'static str, dims: &'static [i64], location: &'static str) -> Edit {
    model(move |m| {
        if let Some(g) = m.graph.as_mut() {
            g.initializer.push(pb::TensorProto {
                name: name.into(),
                dims: dims.to_vec(),
                data_type: DataType::Int64 as i32,
                data_location: DataLocation::External as i32,
                external_data: vec![pb::StringStringEntryProto {
                    key: "location".into(),
                    value: location.into(),
                }],
                ..Default::default()
            });
        }
    })
}

/// 2^38 floats: 1 TiB.
const TERABYTE_OF_FLOATS: i64 = 1 << 38;

/// The attacks of issue 6 and docs/semantics.md section 8 that plain files can carry (links and FIFOs
/// are built at run time by `tests/cli/hostile.rs`). Each must be errored with its reason, fast,
/// without reading outside the case or allocating what it claims.
fn hostile() -> Vec<Fixture> {
    use Group::Hostile;
    // data.bin beside input_0.pb, holding exactly the two floats input_0.pb declares.
    let data_bin = || Edit::Bytes("test_data_set_0/data.bin", le_f32(&[1.0, 2.0]));
    vec![
        fixture(
            Hostile,
            "subgraph_nested_10000_deep",
            "model.onnx carries a node whose graph attribute nests 10,000 levels deep (30,000 \
             messages): decoding stops at the nesting limit instead of overflowing the stack",
            gather_1d(13),
            vec![Edit::Append(MODEL, field(7, &nested_graph(10_000)))],
        ),
        fixture(
            Hostile,
            "node_name_not_utf8",
            "model.onnx has a node named by the bytes FF FE, which are not UTF-8",
            gather_1d(13),
            vec![Edit::Append(MODEL, field(7, &field(1, &field(3, &[0xFF, 0xFE]))))],
        ),
        fixture(
            Hostile,
            "empty_model",
            "model.onnx is empty",
            gather_1d(13),
            vec![Edit::Bytes(MODEL, Vec::new())],
        ),
        fixture(
            Hostile,
            "raw_data_length_claims_a_terabyte",
            "input_0.pb ends in a raw_data field whose length prefix claims 2^40 bytes, followed by \
             4 bytes",
            gather_1d(13),
            vec![Edit::Append(INPUT_0, field_claiming(9, 1 << 40, &[0; 4]))],
        ),
        fixture(
            Hostile,
            "packed_field_claims_two_gigabytes",
            "input_1.pb ends in a packed int64_data field whose length prefix claims 2^31 bytes, \
             followed by 16",
            gather_1d(13),
            vec![Edit::Append(INPUT_1, field_claiming(7, 1 << 31, &[1; 16]))],
        ),
        fixture(
            Hostile,
            "dims_product_overflows",
            "input_0.pb has dims [2^32, 2^32, 2^32], whose product overflows 64 bits",
            gather_1d(13),
            vec![tensor_file(INPUT_0, |t| t.dims = vec![1 << 32, 1 << 32, 1 << 32])],
        ),
        fixture(
            Hostile,
            "negative_dim",
            "input_0.pb has dims [-2]",
            gather_1d(13),
            vec![tensor_file(INPUT_0, |t| t.dims = vec![-2])],
        ),
        fixture(
            Hostile,
            "expected_output_claims_a_terabyte",
            "output_0.pb claims dims [2^38] floats (1 TiB) and holds 4 bytes",
            gather_1d(13),
            vec![tensor_file(OUTPUT_0, |t| t.dims = vec![TERABYTE_OF_FLOATS])],
        ),
        fixture(
            Hostile,
            "strings_claim_a_terabyte",
            "input_0.pb is a string tensor of dims [2^40] holding one string",
            case("Gather", 13)
                .with_axis(0)
                .input(strs("data", &[2], &["a", "b"]))
                .input(i64s("indices", &[1], &[1]))
                .output(strs("output", &[1], &["b"])),
            vec![tensor_file(INPUT_0, |t| {
                t.dims = vec![1 << 40];
                t.string_data.truncate(1);
            })],
        ),
        fixture(
            Hostile,
            "gather_grad_output_of_a_terabyte",
            "GatherGrad's shape input asks for a [2^38] float output (1 TiB) from 40 bytes of \
             input: refused before allocating (D12); the expected output does not matter",
            gather_grad(
                &[TERABYTE_OF_FLOATS],
                i64s("indices", &[1], &[0]),
                f32s("dY", &[1], &[1.0]),
                f32s("dX", &[1], &[1.0]),
            ),
            vec![],
        ),
        fixture(
            Hostile,
            "gather_grad_shape_overflows",
            "GatherGrad's shape input is [2^62, 2^62], whose product overflows 64 bits, beside a dY \
             of [1]: refused on dY's shape, computed with checked arithmetic",
            gather_grad(
                &[1 << 62, 1 << 62],
                i64s("indices", &[1], &[0]),
                f32s("dY", &[1], &[1.0]),
                f32s("dX", &[1], &[1.0]),
            ),
            vec![],
        ),
        fixture(
            Hostile,
            "external_data_with_a_nul_byte",
            "input_0.pb's external data location is \"data.bin\\0.txt\"; data.bin exists and holds \
             the right bytes, so only a loader that cuts the name at the NUL would read it",
            gather_1d(13),
            vec![
                external_entries(INPUT_0, &[("location", "data.bin\0.txt"), ("length", "8")]),
                data_bin(),
            ],
        ),
        fixture(
            Hostile,
            "external_data_climbing_through_a_subdirectory",
            "input_0.pb's external data location is \"sub/../../secret.bin\"; secret.bin exists in \
             the case directory with the right bytes",
            gather_1d(13),
            vec![
                external(INPUT_0, "sub/../../secret.bin"),
                Edit::Bytes("secret.bin", le_f32(&[1.0, 2.0])),
                Edit::Bytes("test_data_set_0/sub/keep", Vec::new()),
            ],
        ),
        fixture(
            Hostile,
            "external_data_offset_past_the_end",
            "input_0.pb reads 8 bytes at offset 16 of the 8-byte data.bin",
            gather_1d(13),
            vec![
                external_entries(
                    INPUT_0,
                    &[("location", "data.bin"), ("offset", "16"), ("length", "8")],
                ),
                data_bin(),
            ],
        ),
        fixture(
            Hostile,
            "external_data_offset_plus_length_overflows",
            "input_0.pb's external offset and length are both 2^63 - 1, whose sum overflows 64 \
             bits",
            gather_1d(13),
            vec![
                external_entries(
                    INPUT_0,
                    &[
                        ("location", "data.bin"),
                        ("offset", "9223372036854775807"),
                        ("length", "9223372036854775807"),
                    ],
                ),
                data_bin(),
            ],
        ),
        fixture(
            Hostile,
            "external_data_length_claims_a_terabyte",
            "input_0.pb claims dims [2^38] floats in external data of length 2^40 from the 8-byte \
             data.bin",
            gather_1d(13),
            vec![
                external_entries(
                    INPUT_0,
                    &[("location", "data.bin"), ("length", "1099511627776")],
                ),
                tensor_file(INPUT_0, |t| t.dims = vec![TERABYTE_OF_FLOATS]),
                data_bin(),
            ],
        ),
        fixture(
            Hostile,
            "external_data_is_a_directory",
            "input_0.pb's external data location is \"sub\", a directory beside it",
            gather_1d(13),
            vec![
                external(INPUT_0, "sub"),
                Edit::Bytes("test_data_set_0/sub/keep", Vec::new()),
            ],
        ),
        fixture(
            Hostile,
            "external_data_location_missing",
            "input_0.pb says its data is external but names no location",
            gather_1d(13),
            vec![external_entries(INPUT_0, &[("length", "8")]), data_bin()],
        ),
        fixture(
            Hostile,
            "initializer_external_data_escaping",
            "model.onnx's initializer for indices keeps its data at \"../../etc/passwd\", outside \
             the case directory",
            gather_1d(13),
            vec![external_initializer("indices", &[1], "../../etc/passwd")],
        ),
    ]
}

fn skipped() -> Vec<Fixture> {
    use Group::Skipped;
    vec![
        // [1, 2] + [10, 20] = [11, 22].
        fixture(
            Skipped,
            "unsupported_op_add",
            "a single Add node: a valid ai.onnx op the tool does not implement (D1)",
            case("Add", 13)
                .input(f32s("A", &[2], &[1.0, 2.0]))
                .input(f32s("B", &[2], &[10.0, 20.0]))
                .output(f32s("C", &[2], &[11.0, 22.0])),
            vec![],
        ),
        fixture(
            Skipped,
            "unknown_domain",
            "a Gather node in domain com.example, which the model imports at version 1 (D1)",
            gather_rows(&[1.0, 2.0, 5.0, 6.0]),
            vec![node_domain("com.example"), import("com.example", 1)],
        ),
        // There is no string product, so the expected output is the data unchanged; it is never
        // compared.
        fixture(
            Skipped,
            "string_reduction_mul",
            "ScatterElements-18 with reduction \"mul\" on strings (D8)",
            case("ScatterElements", 18)
                .with_axis(0)
                .with_reduction("mul")
                .input(strs("data", &[3], &["a", "b", "c"]))
                .input(i64s("indices", &[2], &[2, 0]))
                .input(strs("updates", &[2], &["x", "y"]))
                .output(strs("output", &[3], &["a", "b", "c"])),
            vec![],
        ),
        // max is undefined on bool (D8); were it OR, [F, T, F] with True at 0 would give [T, T, F].
        fixture(
            Skipped,
            "bool_reduction_max",
            "ScatterND-18 with reduction \"max\" on bool (D8)",
            case("ScatterND", 18)
                .with_reduction("max")
                .input(tensor("data", &[3], Values::Bool(vec![false, true, false])))
                .input(i64s("indices", &[1, 1], &[0]))
                .input(tensor("updates", &[1], Values::Bool(vec![true])))
                .output(tensor(
                    "output",
                    &[3],
                    Values::Bool(vec![true, true, false]),
                )),
            vec![],
        ),
        fixture(
            Skipped,
            "segment_tensor",
            "input_0.pb is a segment (begin 0, end 2) of a chunked tensor (D10)",
            gather_1d(13),
            vec![tensor_file(INPUT_0, |t| {
                t.segment = Some(Segment { begin: 0, end: 2 })
            })],
        ),
    ]
}

/// Failing fixtures whose expected output is what a runtime with a known bug produces, one per
/// bug class the report names (the three out-of-range classes need a runtime output where the
/// spec requires an error: they are in [`runtime_fixtures`]). Each expected output is the
/// correct result worked by hand and then changed the way the bug changes it.
fn diagnosed() -> Vec<Fixture> {
    use Group::Failing;
    vec![
        // Rows 2 and 0 of [[1, 2], [3, 4], [5, 6]] are [[5, 6], [1, 2]]; reading -1 as index 0
        // gives rows 0 and 0: [[1, 2], [1, 2]].
        fixture(
            Failing,
            "diagnosed_negative_not_normalized",
            "Gather-13 with indices [-1, 0]; the expected output reads -1 as row 0 ([[1, 2], \
             [1, 2]]) where it is the last row ([[5, 6], [1, 2]]): negative-not-normalized",
            case("Gather", 13)
                .with_axis(0)
                .input(f32s("data", &[3, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
                .input(i64s("indices", &[2], &[-1, 0]))
                .output(f32s("output", &[2, 2], &[1.0, 2.0, 1.0, 2.0])),
            vec![],
        ),
        // Both updates (5, then 7 in row-major order) land on [0][1]: the last write wins (D7),
        // [[1, 7, 3]]; keeping the first gives [[1, 5, 3]].
        fixture(
            Failing,
            "diagnosed_first_write_wins",
            "ScatterElements-13 writing [0,1] twice; the expected output keeps the first write \
             (5) where the last in row-major order (7) wins: first-write-wins",
            case("ScatterElements", 13)
                .with_axis(1)
                .input(f32s("data", &[1, 3], &[1.0, 2.0, 3.0]))
                .input(i64s("indices", &[1, 2], &[1, 1]))
                .input(f32s("updates", &[1, 2], &[5.0, 7.0]))
                .output(f32s("output", &[1, 3], &[1.0, 5.0, 3.0])),
            vec![],
        ),
        // reduction add: [0][1] = 2 + 10 = 12, [0][3] = 4 + 20 = 24, so [[1, 12, 3, 24, 5]];
        // overwriting gives [[1, 10, 3, 20, 5]].
        fixture(
            Failing,
            "diagnosed_reduction_ignored",
            "ScatterElements-16 with reduction add; the expected output overwrites ([[1, 10, 3, \
             20, 5]]) where the updates add ([[1, 12, 3, 24, 5]]): reduction-ignored",
            case("ScatterElements", 16)
                .with_axis(1)
                .with_reduction("add")
                .input(f32s("data", &[1, 5], &[1.0, 2.0, 3.0, 4.0, 5.0]))
                .input(i64s("indices", &[1, 2], &[1, 3]))
                .input(f32s("updates", &[1, 2], &[10.0, 20.0]))
                .output(f32s("output", &[1, 5], &[1.0, 10.0, 3.0, 20.0, 5.0])),
            vec![],
        ),
        // GatherElements Example 1 (axis 1): out[i][j] = data[i][indices[i][j]] = [[1, 1], [4, 3]].
        // On axis 0, out[i][j] = data[indices[i][j]][j] = [[1, 2], [3, 2]].
        fixture(
            Failing,
            "diagnosed_axis_ignored",
            "GatherElements-13 Example 1 (axis 1) with the expected output gathered along axis 0 \
             ([[1, 2], [3, 2]] where axis 1 gives [[1, 1], [4, 3]]): axis-ignored",
            case("GatherElements", 13)
                .with_axis(1)
                .input(f32s("data", &[2, 2], &[1.0, 2.0, 3.0, 4.0]))
                .input(i64s("indices", &[2, 2], &[0, 0, 1, 0]))
                .output(f32s("output", &[2, 2], &[1.0, 2.0, 3.0, 2.0])),
            vec![],
        ),
        // batch_dims 1 on data [[[0, 1], [2, 3]], [[4, 5], [6, 7]]] with indices [[1], [0]]:
        // batch 0 takes data[0][1] = [2, 3], batch 1 data[1][0] = [4, 5]: [[2, 3], [4, 5]], shape
        // [2, 2]. With batch_dims 0 the tuples index the first axis: data[1], data[0] =
        // [[[4, 5], [6, 7]], [[0, 1], [2, 3]]], shape [2, 2, 2].
        fixture(
            Failing,
            "diagnosed_batch_dims_ignored",
            "GatherND-13 with batch_dims 1; the expected output is the batch_dims 0 result, of \
             shape [2, 2, 2] where batch_dims 1 gives [2, 2]: batch-dims-ignored",
            case("GatherND", 13)
                .with_int("batch_dims", 1)
                .input(i64s("data", &[2, 2, 2], &[0, 1, 2, 3, 4, 5, 6, 7]))
                .input(i64s("indices", &[2, 1], &[1, 0]))
                .output(i64s("output", &[2, 2, 2], &[4, 5, 6, 7, 0, 1, 2, 3])),
            vec![],
        ),
        // Three updates add onto data[0] = 0 in row-major order, in f32: 0 + 1 = 1, then
        // 1 + 1e8 = 100000001, which rounds to 1e8 (f32 spacing is 8 there), then 1e8 - 1e8 = 0.
        // In reverse order: 0 - 1e8 = -1e8, + 1e8 = 0, + 1 = 1.
        fixture(
            Failing,
            "diagnosed_accumulation_order",
            "ScatterElements-16 adding 1, 1e8 and -1e8 onto 0; the expected output is 1 (summed \
             in reverse order) where row-major order gives 0 in float: accumulation-order",
            case("ScatterElements", 16)
                .with_axis(0)
                .with_reduction("add")
                .input(f32s("data", &[1], &[0.0]))
                .input(i64s("indices", &[3], &[0, 0, 0]))
                .input(f32s("updates", &[3], &[1.0, 1e8, -1e8]))
                .output(f32s("output", &[1], &[1.0])),
            vec![],
        ),
    ]
}

/// The cases of `actual/`, each with a runtime's outputs (or none).
pub fn runtime_fixtures() -> Vec<RuntimeFixture> {
    let runtime = |name, about, verdict, case, edits, actual: Option<Tensor>| RuntimeFixture {
        name,
        about,
        verdict,
        case,
        edits,
        actual: actual.map(|t| vec![t]),
    };
    // Rows 0 and 2 of [[1, 2], [3, 4], [5, 6]]: [[1, 2], [5, 6]].
    let rows = |v: &[f32]| f32s("output", &[2, 2], v);
    // Gather-13, axis 0, indices [3, 0] on 3 rows: 3 is out of range [-3, 2] (D3), so the
    // spec requires an error and the expected output (zeros) is never compared. A runtime
    // that wraps reads row 3 mod 3 = 0, one that clamps row 2, one that zero-fills zeros.
    let gather_oob = || {
        case("Gather", 13)
            .with_axis(0)
            .input(f32s("data", &[3, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
            .input(i64s("indices", &[2], &[3, 0]))
            .output(f32s("output", &[2, 2], &[0.0; 4]))
    };
    vec![
        runtime(
            "agrees",
            "the runtime's output equals the expected one",
            "passed",
            gather_rows(&[1.0, 2.0, 5.0, 6.0]),
            vec![],
            Some(rows(&[1.0, 2.0, 5.0, 6.0])),
        ),
        runtime(
            "differs",
            "the runtime's output has 7 at [1,0] where the expected output has 5",
            "failed",
            gather_rows(&[1.0, 2.0, 5.0, 6.0]),
            vec![],
            Some(rows(&[1.0, 2.0, 7.0, 6.0])),
        ),
        runtime(
            "no_expected_output_agrees",
            "no expected output_0.pb: the runtime's output is compared with onnx-idx-check's \
             result, and equals it",
            "passed",
            gather_rows(&[1.0, 2.0, 5.0, 6.0]),
            vec![Edit::Remove(OUTPUT_0)],
            Some(rows(&[1.0, 2.0, 5.0, 6.0])),
        ),
        runtime(
            "no_expected_output_differs",
            "no expected output_0.pb: the runtime's output (8 at [1,1]) is compared with \
             onnx-idx-check's result (6)",
            "failed",
            gather_rows(&[1.0, 2.0, 5.0, 6.0]),
            vec![Edit::Remove(OUTPUT_0)],
            Some(rows(&[1.0, 2.0, 5.0, 8.0])),
        ),
        runtime(
            "disputed_expected_output",
            "the expected output has 7 at [1,0] where the gather gives 5: onnx-idx-check \
             disputes it rather than judging the runtime by it",
            "errored",
            gather_rows(&[1.0, 2.0, 7.0, 6.0]),
            vec![],
            Some(rows(&[1.0, 2.0, 5.0, 6.0])),
        ),
        runtime(
            "missing_actual_output",
            "the runtime wrote no output_0.pb for a valid case",
            "errored",
            gather_rows(&[1.0, 2.0, 5.0, 6.0]),
            vec![],
            None,
        ),
        runtime(
            "diagnosed_oob_wrapped",
            "Gather-13 with indices [3, 0] on 3 rows, where the spec requires an error; the \
             runtime wrapped 3 to row 0 ([[1, 2], [1, 2]]): oob-wrapped",
            "failed",
            gather_oob(),
            vec![],
            Some(rows(&[1.0, 2.0, 1.0, 2.0])),
        ),
        // GatherElements axis 0 on [[1, 2], [3, 4]] with indices [[0, 1], [2, 0]]: 2 is out of
        // range [-2, 1] (D3). Clamping 2 to 1: out[i][j] = data[idx[i][j]][j] =
        // [[data[0][0], data[1][1]], [data[1][0], data[0][1]]] = [[1, 4], [3, 2]].
        runtime(
            "diagnosed_oob_clamped",
            "GatherElements-13 with indices[1,0] = 2 on an axis of size 2, where the spec \
             requires an error; the runtime clamped it to 1 ([[1, 4], [3, 2]]): oob-clamped",
            "failed",
            case("GatherElements", 13)
                .with_axis(0)
                .input(f32s("data", &[2, 2], &[1.0, 2.0, 3.0, 4.0]))
                .input(i64s("indices", &[2, 2], &[0, 1, 2, 0]))
                .output(f32s("output", &[2, 2], &[0.0; 4])),
            vec![],
            Some(f32s("output", &[2, 2], &[1.0, 4.0, 3.0, 2.0])),
        ),
        // ScatterElements axis 1 on [[1, 2, 3, 4, 5]] with indices [[1, 5]]: 5 is out of range
        // [-5, 4] (D3). Dropping that update leaves [[1, 1.1, 3, 4, 5]].
        runtime(
            "diagnosed_oob_zero_filled",
            "ScatterElements-13 with indices[0,1] = 5 on an axis of size 5, where the spec \
             requires an error; the runtime dropped that update ([[1, 1.1, 3, 4, 5]]): \
             oob-zero-filled",
            "failed",
            case("ScatterElements", 13)
                .with_axis(1)
                .input(f32s("data", &[1, 5], &[1.0, 2.0, 3.0, 4.0, 5.0]))
                .input(i64s("indices", &[1, 2], &[1, 5]))
                .input(f32s("updates", &[1, 2], &[1.1, 2.1]))
                .output(f32s("output", &[1, 5], &[0.0; 5])),
            vec![],
            Some(f32s("output", &[1, 5], &[1.0, 1.1, 3.0, 4.0, 5.0])),
        ),
        runtime(
            "spec_error_unexplained",
            "Gather-13 with indices [3, 0] on 3 rows, where the spec requires an error; the \
             runtime produced [[9, 9], [9, 9]], which no known bug explains",
            "failed",
            gather_oob(),
            vec![],
            Some(rows(&[9.0; 4])),
        ),
        runtime(
            "spec_error_no_output",
            "Gather-13 with indices [3, 0] on 3 rows, where the spec requires an error; the \
             runtime wrote no output (it refused the inputs)",
            "errored",
            gather_oob(),
            vec![],
            None,
        ),
    ]
}

/// The expectations files under `expectations/`: (file name, text). The first line of each says
/// what it holds (the README quotes it).
pub const EXPECTATIONS: [(&str, &str); 3] = [
    (
        "ratchet.toml",
        r#"# One entry per ratchet outcome, over the fixtures of tests/fixtures/ (tests/cli/expectations.rs).

# Still fails exactly as listed (1 mismatch, first at [1,0]): an expected failure (XFAIL).
[[expect]]
case = "failing/wrong_value"
status = "failed"
reason = "runtime#1: Gather copies the wrong row"
link = "https://example.com/runtime/issues/1"
until = 2999-12-31
mismatches = 1
first_mismatch = [1, 0]

# Passes: unexpectedly passed (XPASS), which fails the run until the entry is removed.
[[expect]]
case = "passing/nan_payloads_are_equal"
status = "failed"
reason = "runtime#2: NaN payloads differ"

# Listed as failed, but errored: fails differently (another verdict).
[[expect]]
case = "errored/gather_index_out_of_range"
status = "failed"
reason = "runtime#3: out-of-range indices are clamped"

# Fails with 1 mismatch, listed with 2: fails differently (another signature).
[[expect]]
case = "failing/nan_expected"
status = "failed"
reason = "runtime#4: NaN is not propagated"
mismatches = 2

# A glob: failing/gather_grad_wrong_value and failing/gather_elements_grad_wrong_value.
[[expect]]
case = "failing/*_grad_wrong_value"
status = "failed"
reason = "runtime#5: gradients overwrite instead of accumulating"

# A glob with an opset range: of the errored cases named *_opset1*, only those importing
# ai.onnx 10 or lower (gather_negative_index_opset1, scatter_negative_index_opset10).
[[expect]]
case = "errored/*_opset1*"
status = "errored"
reason = "runtime#6: negative indices before opset 11"
opset = { max = 10 }

# Tolerance only: 5.0 against the expected 5.02 passes with rtol 1e-2
# (1e-7 + 1e-2 * 5.02 = 0.0502 >= 0.02).
[[expect]]
case = "failing/reduction_beyond_tolerance"
reason = "runtime#7: reductions accumulate in float16"
rtol = 1e-2

# Matches no case: a warning (an error with --strict-expectations).
[[expect]]
case = "failing/renamed_long_ago"
status = "failed"
reason = "runtime#8: this case was renamed"
"#,
    ),
    (
        "expired.toml",
        r#"# An expected failure whose entry expired on 2020-01-31 (tests/cli/expectations.rs).

[[expect]]
case = "failing/wrong_value"
status = "failed"
reason = "runtime#1: Gather copies the wrong row"
until = 2020-01-31
"#,
    ),
    (
        "tighter_tolerance.toml",
        r#"# A tolerance-only entry that tightens rtol to 0, so passing/reduction_within_tolerance (5.0 against 5.004) fails (tests/cli/rerun.rs).

[[expect]]
case = "passing/reduction_within_tolerance"
reason = "our reductions are exact: hold them to rtol 0"
rtol = 0.0
"#,
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Fails when `tests/fixtures/` differs from what `cargo xtask fixtures` would write.
    #[test]
    fn fixtures_are_fresh() {
        generate(true).unwrap();
    }

    #[test]
    fn names_are_unique_lower_case_directory_names() {
        let mut seen = BTreeSet::new();
        for f in fixtures() {
            assert!(seen.insert(f.name), "duplicate fixture {}", f.name);
            assert!(
                f.name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
                "{}",
                f.name
            );
        }
    }

    #[test]
    fn runtime_fixtures_have_unique_names_and_one_output_per_graph_output() {
        let mut seen = BTreeSet::new();
        for f in runtime_fixtures() {
            assert!(seen.insert(f.name), "duplicate runtime fixture {}", f.name);
            assert!(
                f.name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
                "{}",
                f.name
            );
            assert!(
                ["passed", "failed", "errored"].contains(&f.verdict),
                "{}",
                f.name
            );
            if let Some(actual) = &f.actual {
                let names: Vec<&str> = actual.iter().map(|t| t.name).collect();
                let outputs: Vec<&str> = f.case.outputs.iter().map(|t| t.name).collect();
                assert_eq!(names, outputs, "{}", f.name);
                for t in actual {
                    assert_eq!(t.values.len() as i64, t.numel(), "{} {}", f.name, t.name);
                }
            }
        }
    }

    #[test]
    fn runtime_outputs_mirror_the_case_tree() {
        let f = runtime_fixtures()
            .into_iter()
            .find(|f| f.name == "differs")
            .unwrap();
        let files = render_runtime(&f).unwrap();
        let paths: Vec<PathBuf> = files.iter().map(|(p, _)| p.clone()).collect();
        assert!(paths.contains(&PathBuf::from("actual/cases/differs/model.onnx")));
        assert!(paths.contains(&PathBuf::from(
            "actual/outputs/differs/test_data_set_0/output_0.pb"
        )));
        let missing = runtime_fixtures()
            .into_iter()
            .find(|f| f.name == "missing_actual_output")
            .unwrap();
        assert!(!render_runtime(&missing)
            .unwrap()
            .iter()
            .any(|(p, _)| p.starts_with("actual/outputs")));
    }

    #[test]
    fn expectations_files_say_what_they_hold_on_their_first_line() {
        let mut seen = BTreeSet::new();
        for (name, text) in EXPECTATIONS {
            assert!(seen.insert(name) && name.ends_with(".toml"), "{name}");
            assert!(text.starts_with("# "), "{name}");
            assert!(text.contains("[[expect]]"), "{name}");
        }
    }

    #[test]
    fn every_group_has_fixtures() {
        let all = fixtures();
        for g in Group::ALL {
            assert!(all.iter().any(|f| f.group == g), "{g:?}");
        }
    }

    #[test]
    fn every_tensor_before_the_edits_holds_as_many_values_as_its_shape() {
        for f in fixtures() {
            for t in f.case.inputs.iter().chain(&f.case.outputs) {
                assert_eq!(t.values.len() as i64, t.numel(), "{} {}", f.name, t.name);
            }
        }
    }

    fn file<'a>(files: &'a [(PathBuf, Vec<u8>)], rel: &str) -> &'a [u8] {
        &files
            .iter()
            .find(|(p, _)| p.ends_with(rel))
            .unwrap_or_else(|| panic!("no {rel}"))
            .1
    }

    fn find(name: &str) -> Fixture {
        fixtures().into_iter().find(|f| f.name == name).unwrap()
    }

    #[test]
    fn the_hand_copied_onnx_node_sample_is_kept() {
        let sample = project_root().join("tests/fixtures").join(ONNX_NODE_SAMPLE);
        assert!(sample.join("README.md").is_file(), "{}", sample.display());
        assert!(!fixtures().iter().any(|f| f.group.dir() == ONNX_NODE_SAMPLE));
    }

    #[test]
    fn stray_removal_leaves_foreign_directories_alone() {
        let dir = std::env::temp_dir().join(format!("xtask-strays-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for rel in ["kept/a.pb", "stray/b.pb", "sample/c.pb", "sample/d/e.pb"] {
            let path = dir.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, b"x").unwrap();
        }
        let expected: BTreeSet<PathBuf> = [PathBuf::from("kept/a.pb")].into();
        // Check mode names the stray, not the foreign files.
        let err = testdata::remove_strays(&dir, &expected, &["sample"], true, COMMAND)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("stray/b.pb") && !err.contains("sample/"),
            "{err}"
        );
        testdata::remove_strays(&dir, &expected, &["sample"], false, COMMAND).unwrap();
        assert!(!dir.join("stray").exists());
        assert!(dir.join("kept/a.pb").is_file());
        assert!(dir.join("sample/c.pb").is_file() && dir.join("sample/d/e.pb").is_file());
        testdata::remove_strays(&dir, &expected, &["sample"], true, COMMAND).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_garbage_is_no_tensor() {
        assert!(pb::TensorProto::decode(GARBAGE.as_slice()).is_err());
        let files = render(&find("garbage_input")).unwrap();
        assert_eq!(file(&files, INPUT_0), GARBAGE);
    }

    #[test]
    fn half_a_model_is_no_model() {
        let files = render(&find("truncated_model")).unwrap();
        let whole = testdata::model(&find("truncated_model").case)
            .unwrap()
            .encode_to_vec();
        let half = file(&files, MODEL);
        assert_eq!(half, &whole[..whole.len() / 2]);
        assert!(pb::ModelProto::decode(half).is_err());
    }

    #[test]
    fn removed_and_copied_files_are_as_described() {
        let files = render(&find("missing_input")).unwrap();
        assert!(!files.iter().any(|(p, _)| p.ends_with(INPUT_1)));
        let files = render(&find("extra_input")).unwrap();
        assert_eq!(file(&files, INPUT_2), file(&files, INPUT_1));
    }

    #[test]
    fn retyped_tensors_are_declared_and_stored_with_the_new_type() {
        let files = render(&find("float8_gather_opset13")).unwrap();
        let t = pb::TensorProto::decode(file(&files, INPUT_0)).unwrap();
        assert_eq!(t.data_type, DataType::Float8e4m3fn as i32);
        assert_eq!(t.raw_data[..], [0x38, 0x40, 0x44, 0x48]);
        let m = pb::ModelProto::decode(file(&files, MODEL)).unwrap();
        let declared = m.graph.unwrap().input[0].r#type.clone().unwrap().value;
        assert!(matches!(
            declared,
            Some(pb::type_proto::Value::TensorType(t)) if t.elem_type == DataType::Float8e4m3fn as i32
        ));
    }
}
