//! Running the real binary and reading what it reports.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The package root (tests run the binary from here).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `tests/fixtures/`, absolute.
pub fn fixtures() -> PathBuf {
    root().join("tests/fixtures")
}

/// A fixture's directory from its `group/name`.
pub fn fixture(name: &str) -> PathBuf {
    fixtures().join(name)
}

/// What one run of the binary did.
#[derive(Debug)]
pub struct Run {
    /// The exit status (-1 when killed by a signal).
    pub code: i32,
    /// Everything written to stdout.
    pub stdout: String,
    /// Everything written to stderr.
    pub stderr: String,
}

impl Run {
    /// stdout parsed as JSON; panics with both streams when it is not JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e})\n~~~ stdout\n{}\n~~~ stderr\n{}\n~~~",
                self.stdout, self.stderr
            )
        })
    }

    /// Panics, showing both streams, unless the exit status is `code`.
    pub fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(
            self.code, code,
            "exit status\n~~~ stdout\n{}\n~~~ stderr\n{}\n~~~",
            self.stdout, self.stderr
        );
        self
    }
}

/// A command for the binary, run from the package root with a fixed terminal width and no
/// colour preference from the environment.
pub fn command() -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::new(env!("CARGO_BIN_EXE_onnx-idx-check"));
    cmd.current_dir(root())
        .env("COLUMNS", "100")
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .timeout(Duration::from_secs(60));
    cmd
}

/// Runs the binary with `args`.
pub fn run<I, S>(args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let out = command()
        .args(args)
        .output()
        .expect("the binary runs (and finishes within the timeout)");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `run <path> --format json <extra>`: the exit status and the report.
pub fn run_json(path: &Path, extra: &[&str]) -> (i32, Value) {
    let mut args: Vec<std::ffi::OsString> = vec!["run".into(), path.into()];
    args.extend(["--format", "json"].iter().map(Into::into));
    args.extend(extra.iter().map(Into::into));
    let r = run(args);
    let json = r.json();
    (r.code, json)
}

/// The `cases` array of a JSON report.
pub fn cases(report: &Value) -> &Vec<Value> {
    report["cases"].as_array().expect("`cases` is an array")
}

/// The case called `name` in a JSON report.
pub fn case<'a>(report: &'a Value, name: &str) -> &'a Value {
    cases(report)
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no case {name} in the report"))
}

/// A count from the report's summary.
pub fn count(report: &Value, key: &str) -> u64 {
    report["summary"][key]
        .as_u64()
        .unwrap_or_else(|| panic!("summary.{key} is not a count"))
}

/// Every fixture as `group/name`, sorted: the directories under `tests/fixtures/` holding a
/// `model.onnx`.
pub fn fixture_names() -> Vec<String> {
    let mut names = Vec::new();
    for group in std::fs::read_dir(fixtures()).expect("tests/fixtures exists") {
        let group = group.unwrap().path();
        if !group.is_dir() {
            continue;
        }
        for case in std::fs::read_dir(&group).unwrap() {
            let case = case.unwrap().path();
            if case.join("model.onnx").is_file() {
                names.push(format!(
                    "{}/{}",
                    group.file_name().unwrap().to_string_lossy(),
                    case.file_name().unwrap().to_string_lossy()
                ));
            }
        }
    }
    names.sort();
    names
}

/// The verdict a fixture must get alone, from its group directory.
pub fn verdict_of_group(name: &str) -> &'static str {
    match name.split('/').next() {
        Some("passing") => "passed",
        Some("failing") => "failed",
        Some("errored") => "errored",
        Some("skipped") => "skipped",
        _ => panic!("{name} is in no known group"),
    }
}

/// Copies a case directory (regular files and directories only) to `to`.
pub fn copy_case(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_case(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Decodes a `.pb` tensor file.
pub fn read_tensor(path: &Path) -> onnx_idx_check::pb::TensorProto {
    use prost::Message;
    onnx_idx_check::pb::TensorProto::decode(std::fs::read(path).unwrap().as_slice()).unwrap()
}

/// Encodes a tensor into a `.pb` file.
pub fn write_tensor(path: &Path, t: &onnx_idx_check::pb::TensorProto) {
    use prost::Message;
    std::fs::write(path, t.encode_to_vec()).unwrap();
}

/// Decodes `model.onnx`, changes it and writes it back.
pub fn rewrite_model(path: &Path, change: impl FnOnce(&mut onnx_idx_check::pb::ModelProto)) {
    use prost::Message;
    let mut m =
        onnx_idx_check::pb::ModelProto::decode(std::fs::read(path).unwrap().as_slice()).unwrap();
    change(&mut m);
    std::fs::write(path, m.encode_to_vec()).unwrap();
}
