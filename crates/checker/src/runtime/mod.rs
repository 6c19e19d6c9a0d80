//! Runtimes under test, driven as child processes (`run --runtime NAME`, `--runtime-cmd CMD`):
//! the protocol of `docs/runtime-protocol.md`, the bundled adapters, and the pool of workers
//! that runs one data set at a time per worker.
//!
//! - `worker`: one worker process: spawn, one line out and one in, crash and hang detection;
//! - `feed`: a request's inputs as `.npy` files;
//! - `groups`: the workers' process groups, killed when the tool is interrupted;
//! - [`reaper`]: the workers' descendants that left their process group.

pub(crate) mod feed;
// The operating system's side of a runtime under test (libc: process groups, signals, waiting):
// the only modules of the checker allowed `unsafe`.
#[allow(unsafe_code)]
pub mod interrupt;
#[allow(unsafe_code)]
pub mod reaper;
#[allow(unsafe_code)]
pub(crate) mod worker;

use crate::tensor::{DType, Tensor};
use serde::Deserialize;
use std::collections::HashSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;
use worker::{After, Death, Worker};

/// The runtime under test of a run (`--runtime`, `--runtime-cmd`), as it introduced itself.
///
/// ```
/// use onnx_idx_check::{check, CheckOptions};
///
/// // A run of onnx-idx-check's own result has none.
/// let report = check(&[concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/onnx-node")], &CheckOptions::default().filter("^test_gather_0$"))?;
/// assert!(report.runtime.is_none());
/// # Ok::<(), onnx_idx_check::CheckError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuntimeInfo {
    /// Its name in reports: the `--runtime` spec, or the name its worker gave.
    pub name: String,
    /// The version its worker gave.
    pub version: String,
    /// The command its workers run.
    pub command: String,
}

/// How long a worker's output is watched after a reply for a second reply or its end, which
/// are that request's protocol faults. Kept short: every request waits it out.
const AFTER_REPLY: Duration = Duration::from_millis(5);

/// A runtime adapter that ships inside the binary: a short script speaking the protocol (Python,
/// or JavaScript for Node), written out to a temporary directory when a run needs it.
#[derive(Debug, PartialEq, Eq)]
pub struct Adapter {
    /// The name `--runtime` takes.
    pub name: &'static str,
    /// Other names it answers to.
    pub aliases: &'static [&'static str],
    /// The file name of its script.
    pub file: &'static str,
    /// What runs the script.
    pub interpreter: Interpreter,
    /// What to install for it, as its interpreter's package manager names it (`pip install ...`,
    /// `npm install ...`).
    pub package: &'static str,
    /// The script.
    pub source: &'static str,
    /// The modes a hunt runs its cases in, each taking other code paths of the runtime; the
    /// first is what the adapter does without these options. Empty: one mode.
    pub modes: &'static [Mode],
    /// Whether it compiles each model, paying seconds per model: `run` then puts cases side by
    /// side in shared models unless told otherwise (`--batch`).
    pub compiles: bool,
}

/// The program that runs an adapter's script.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interpreter {
    /// Python: `$ONNX_IDX_CHECK_PYTHON`, else `python3`.
    Python,
    /// Node: `$ONNX_IDX_CHECK_NODE`, else `node`.
    Node,
}

impl Interpreter {
    /// The program to run.
    pub fn program(self) -> OsString {
        match self {
            Interpreter::Python => python(),
            Interpreter::Node => node(),
        }
    }

    /// Its name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Interpreter::Python => "Python 3",
            Interpreter::Node => "Node.js",
        }
    }

    /// The environment variable that names its program.
    pub fn env_var(self) -> &'static str {
        match self {
            Interpreter::Python => "ONNX_IDX_CHECK_PYTHON",
            Interpreter::Node => "ONNX_IDX_CHECK_NODE",
        }
    }

    /// How to install `package` for it, in words.
    pub fn install(self, package: &str) -> String {
        match self {
            Interpreter::Python => format!("pip install {package}"),
            Interpreter::Node => format!(
                "npm install {package} in a directory DIR, then ONNX_IDX_CHECK_NODE_MODULES=DIR"
            ),
        }
    }
}

/// A way of running a bundled runtime that takes other code paths (onnxruntime with its graph
/// optimizations disabled), as options of its adapter.
#[derive(Debug, PartialEq, Eq)]
pub struct Mode {
    /// The mode in words, for reports: `optimizations disabled`.
    pub name: &'static str,
    /// The adapter's options that make it (`optimization=disabled`).
    pub options: &'static [(&'static str, &'static str)],
}

/// The common part every adapter imports.
const WORKER_FILE: (&str, &str) = (
    "onnx_idx_check_worker.py",
    include_str!("adapters/onnx_idx_check_worker.py"),
);

/// The bundled adapters.
pub const ADAPTERS: &[Adapter] = &[
    Adapter {
        name: "onnxruntime",
        aliases: &["ort"],
        file: "onnxruntime.py",
        interpreter: Interpreter::Python,
        package: "onnxruntime",
        source: include_str!("adapters/onnxruntime.py"),
        modes: &[
            Mode {
                name: "optimizations all",
                options: &[("optimization", "all")],
            },
            Mode {
                name: "optimizations disabled",
                options: &[("optimization", "disabled")],
            },
        ],
        compiles: false,
    },
    Adapter {
        name: "openvino",
        aliases: &["ov"],
        file: "openvino.py",
        interpreter: Interpreter::Python,
        package: "openvino",
        source: include_str!("adapters/openvino.py"),
        modes: &[
            Mode {
                name: "precision f32",
                options: &[("precision", "f32")],
            },
            Mode {
                name: "the device's default precision",
                options: &[("precision", "default")],
            },
        ],
        compiles: false,
    },
    Adapter {
        name: "tract",
        aliases: &[],
        file: "tract.py",
        interpreter: Interpreter::Python,
        package: "tract",
        source: include_str!("adapters/tract.py"),
        modes: &[],
        compiles: false,
    },
    Adapter {
        name: "tvm",
        aliases: &[],
        file: "tvm.py",
        interpreter: Interpreter::Python,
        package: "apache-tvm onnx",
        source: include_str!("adapters/tvm.py"),
        modes: &[],
        compiles: true,
    },
    Adapter {
        name: "iree",
        aliases: &[],
        file: "iree.py",
        interpreter: Interpreter::Python,
        package: "iree-base-compiler iree-base-runtime onnx",
        source: include_str!("adapters/iree.py"),
        modes: &[],
        compiles: true,
    },
    Adapter {
        name: "tinygrad",
        aliases: &[],
        file: "tinygrad.py",
        interpreter: Interpreter::Python,
        package: "tinygrad",
        source: include_str!("adapters/tinygrad.py"),
        modes: &[],
        compiles: true,
    },
    Adapter {
        name: "onnxruntime-web",
        aliases: &["ort-web"],
        file: "onnxruntime_web.js",
        interpreter: Interpreter::Node,
        package: "onnxruntime-web@1.30.0",
        source: include_str!("adapters/onnxruntime_web.js"),
        modes: &[],
        compiles: false,
    },
    Adapter {
        name: "onnx-reference",
        aliases: &["reference"],
        file: "onnx_reference.py",
        interpreter: Interpreter::Python,
        package: "onnx",
        source: include_str!("adapters/onnx_reference.py"),
        modes: &[],
        compiles: false,
    },
];

/// The files of the bundled adapters, their common module first: file name and contents.
pub fn adapter_files() -> impl Iterator<Item = (&'static str, &'static str)> {
    std::iter::once(WORKER_FILE).chain(ADAPTERS.iter().map(|a| (a.file, a.source)))
}

/// Writes every bundled adapter and their common module into `dir`.
pub(crate) fn write_adapters(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for (file, source) in adapter_files() {
        std::fs::write(dir.join(file), source)?;
    }
    Ok(())
}

/// The Python that runs the bundled adapters: `$ONNX_IDX_CHECK_PYTHON`, else `python3`.
pub fn python() -> OsString {
    std::env::var_os(Interpreter::Python.env_var())
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "python3".into())
}

/// The Node that runs the JavaScript adapters: `$ONNX_IDX_CHECK_NODE`, else `node`.
pub fn node() -> OsString {
    std::env::var_os(Interpreter::Node.env_var())
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "node".into())
}

/// Which runtime to drive, as the command line names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RuntimeSpec {
    /// A bundled adapter with its options (`onnxruntime:threads=2,providers=CPUExecutionProvider`
    /// gives the script `--threads 2 --providers CPUExecutionProvider`).
    Bundled {
        /// The adapter.
        adapter: &'static Adapter,
        /// Its options, in order.
        options: Vec<(String, String)>,
        /// The spec as written, the runtime's name in reports.
        label: String,
    },
    /// Any program speaking the protocol (`--runtime-cmd 'CMD ARGS'`).
    Command {
        /// Its argv.
        argv: Vec<String>,
    },
}

/// Why a runtime could not be used.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// `--runtime` names no bundled adapter.
    #[error("--runtime {0}: no such runtime; the bundled ones are {list} (any other: --runtime-cmd 'CMD ARGS')", list = bundled_names())]
    Unknown(String),
    /// A spec's options are not `key=value` pairs, or a command is empty.
    #[error("{0}")]
    Invalid(String),
    /// The worker did not say hello.
    #[error("runtime {label} could not start ({command}): {message}")]
    Start {
        /// The runtime's name.
        label: String,
        /// The command that was run.
        command: String,
        /// Why.
        message: String,
    },
    /// The scratch directory could not be made.
    #[error("runtime {label}: {source}")]
    Io {
        /// The runtime's name.
        label: String,
        /// What failed.
        source: std::io::Error,
    },
}

fn bundled_names() -> String {
    ADAPTERS
        .iter()
        .map(|a| a.name)
        .collect::<Vec<_>>()
        .join(", ")
}

impl RuntimeSpec {
    /// Parses `--runtime NAME[:KEY=VALUE,...]`.
    pub fn bundled(spec: &str) -> Result<RuntimeSpec, RuntimeError> {
        let (name, opts) = spec.split_once(':').unwrap_or((spec, ""));
        let adapter = ADAPTERS
            .iter()
            .find(|a| a.name == name || a.aliases.contains(&name))
            .ok_or_else(|| RuntimeError::Unknown(name.to_string()))?;
        let mut options = Vec::new();
        for part in opts.split(',').filter(|p| !p.is_empty()) {
            let (k, v) = part.split_once('=').ok_or_else(|| {
                RuntimeError::Invalid(format!(
                    "--runtime {spec}: '{part}' is not KEY=VALUE (options follow the name: \
                     onnxruntime:threads=2,providers=CPUExecutionProvider)"
                ))
            })?;
            options.push((k.to_string(), v.to_string()));
        }
        Ok(RuntimeSpec::Bundled {
            adapter,
            options,
            label: spec.to_string(),
        })
    }

    /// The spec with `added` options after its own, each only where the spec does not set its
    /// key already (the user's options win), and its label kept (the runtime's name in reports);
    /// a command runtime takes no options and is returned as it is.
    pub fn with_options(&self, added: &[(&str, &str)]) -> RuntimeSpec {
        let RuntimeSpec::Bundled {
            adapter,
            options,
            label,
        } = self
        else {
            return self.clone();
        };
        let mut options = options.clone();
        for (k, v) in added {
            if !options.iter().any(|(key, _)| key == k) {
                options.push((k.to_string(), v.to_string()));
            }
        }
        RuntimeSpec::Bundled {
            adapter,
            options,
            label: label.clone(),
        }
    }

    /// The options of a bundled runtime (none for a command).
    pub fn options(&self) -> &[(String, String)] {
        match self {
            RuntimeSpec::Bundled { options, .. } => options,
            RuntimeSpec::Command { .. } => &[],
        }
    }

    /// Parses `--runtime-cmd 'CMD ARGS'`: words split as a POSIX shell would, without
    /// expansions.
    pub fn command(cmd: &str) -> Result<RuntimeSpec, RuntimeError> {
        let argv = split_words(cmd).ok_or_else(|| {
            RuntimeError::Invalid(format!("--runtime-cmd {cmd}: an unterminated quote"))
        })?;
        if argv.is_empty() {
            return Err(RuntimeError::Invalid(
                "--runtime-cmd: an empty command".to_string(),
            ));
        }
        Ok(RuntimeSpec::Command { argv })
    }
}

/// Splits `s` into words: blanks separate, single quotes keep everything, double quotes keep
/// everything but `\"` and `\\`, a backslash outside quotes escapes the next character. `None`
/// for an unterminated quote.
fn split_words(s: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => word.push(c),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => match chars.next()? {
                            c @ ('"' | '\\') => word.push(c),
                            c => {
                                word.push('\\');
                                word.push(c);
                            }
                        },
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.push(chars.next()?);
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

/// What the worker says first.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct Hello {
    /// The protocol version it speaks.
    pub protocol: u32,
    /// The runtime's name.
    #[serde(default)]
    pub runtime: String,
    /// The runtime's version.
    #[serde(default)]
    pub version: String,
    /// Whether it honours a request's `threads`.
    #[serde(default)]
    pub threads: bool,
    /// Whether bad input cannot damage the worker's memory (a runtime in Python or Rust): its
    /// workers are reused even after they gave an output where the spec requires an error.
    #[serde(default)]
    pub memory_safe: bool,
    /// Whether it runs a model of several independent subgraphs as it runs each alone: a hunt
    /// may then judge many cases in one model.
    #[serde(default)]
    pub batches: bool,
    /// Why it cannot run.
    #[serde(default)]
    pub error: Option<String>,
}

#[derive(Deserialize)]
struct Reply {
    id: Option<u64>,
    status: String,
    #[serde(default)]
    message: Option<String>,
}

/// One input of a request: the graph input it feeds, its file, the tensor as loaded.
pub struct Input<'a> {
    /// The graph input's name.
    pub name: &'a str,
    /// `input_K.pb`.
    pub pb: &'a Path,
    /// Its tensor.
    pub tensor: &'a Tensor,
}

/// One data set for the runtime.
pub struct Request<'a> {
    /// The case's name.
    pub case: &'a str,
    /// `test_data_set_N`.
    pub data_set: &'a str,
    /// The model file.
    pub model: &'a Path,
    /// The graph's inputs, in order.
    pub inputs: Vec<Input<'a>>,
    /// The graph's outputs with the element type they declare.
    pub outputs: Vec<(&'a str, Option<DType>)>,
}

/// A data set made ready for the runtime: its inputs written once as `.npy` files, for every run
/// of `--repeat`; removed when dropped.
#[derive(Debug)]
pub struct Job {
    dir: ScratchDir,
    /// The elements of its inputs: what its time limit scales with ([`scaled_timeout`]).
    elements: usize,
    /// The request without `id`, `output_dir` and `threads`.
    body: serde_json::Map<String, serde_json::Value>,
    /// The workers (by serial number) that answered it.
    ran_on: Mutex<Vec<u64>>,
    /// How many times `--timeout` it may take: a model of several cases (runner/batch.rs) is
    /// compiled and run as one.
    patience: u32,
}

/// What the runtime did with a request.
#[derive(Debug)]
pub enum Outcome {
    /// It answered `done`; its outputs are in the directory.
    Done(ScratchDir),
    /// It raised an error: its message.
    Refused(String),
    /// It died: how, and its last words.
    Crashed(String),
    /// It gave no answer in time.
    TimedOut(Duration),
}

/// A directory of the runtime's scratch space, removed when dropped.
#[derive(Debug)]
pub struct ScratchDir(PathBuf);

impl ScratchDir {
    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A runtime under test: its command, what it said at the start, and its idle workers.
pub struct Runtime {
    label: String,
    /// The spec it was started from.
    spec: RuntimeSpec,
    adapter: Option<&'static str>,
    argv: Vec<OsString>,
    hello: Hello,
    scratch: tempfile::TempDir,
    /// The scratch directory, registered for removal on an interrupt; declared after it, so that
    /// it is forgotten only once the directory is gone.
    _on_interrupt: interrupt::scratch::Registered,
    /// The workers waiting for a request, each with its serial number.
    idle: Mutex<Vec<(u64, Worker)>>,
    /// Workers to end instead of reusing once they answer (see [`Runtime::retire`]).
    condemned: Mutex<HashSet<u64>>,
    /// The next fresh worker, started when the last one was needed and importing its runtime
    /// since (its hello not yet read): a runtime whose workers are retired or crash pays for the
    /// import while the other one works, not between requests.
    spare: Mutex<Option<Worker>>,
    next_id: AtomicU64,
    timeout: Duration,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("label", &self.label)
            .field("argv", &self.argv)
            .finish_non_exhaustive()
    }
}

/// The input elements of a request that `--timeout` is for: a larger request gets `--timeout`
/// times its elements over this.
pub(crate) const ELEMENTS_PER_TIMEOUT: usize = 1 << 22;

/// How long a request of `elements` input elements may take: `timeout` for up to
/// [`ELEMENTS_PER_TIMEOUT`] (4 Mi) elements, and in proportion beyond, `timeout × elements /
/// 4 Mi`. A runtime's work grows with its inputs: a correct but slow one (a Python reference
/// reading 2^24 elements) is not hung, and a hang still ends in time bounded by the input's size,
/// which `--max-tensor-bytes` bounds.
pub(crate) fn scaled_timeout(timeout: Duration, elements: usize) -> Duration {
    if elements <= ELEMENTS_PER_TIMEOUT {
        return timeout;
    }
    let factor = elements as f64 / ELEMENTS_PER_TIMEOUT as f64;
    Duration::try_from_secs_f64(timeout.as_secs_f64() * factor).unwrap_or(Duration::MAX)
}

/// How long a worker may take to say hello: importing a runtime takes seconds on a busy machine.
fn startup(timeout: Duration) -> Duration {
    timeout.max(Duration::from_secs(120))
}

impl Runtime {
    /// Starts the runtime's first worker and reads its hello; `timeout` is how long one request
    /// may take.
    pub fn start(spec: &RuntimeSpec, timeout: Duration) -> Result<Runtime, RuntimeError> {
        let label_of_spec = match spec {
            RuntimeSpec::Bundled { label, .. } => label.clone(),
            RuntimeSpec::Command { argv } => argv.join(" "),
        };
        let io = |source| RuntimeError::Io {
            label: label_of_spec.clone(),
            source,
        };
        let scratch = tempfile::Builder::new()
            .prefix("onnx-idx-check-")
            .tempdir()
            .map_err(io)?;
        let on_interrupt = interrupt::scratch::register(scratch.path());
        let argv: Vec<OsString> = match spec {
            RuntimeSpec::Bundled {
                adapter, options, ..
            } => {
                let dir = scratch.path().join("adapters");
                write_adapters(&dir).map_err(io)?;
                let mut argv = vec![
                    adapter.interpreter.program(),
                    dir.join(adapter.file).into_os_string(),
                ];
                for (k, v) in options {
                    argv.push(format!("--{k}").into());
                    argv.push(v.into());
                }
                argv
            }
            RuntimeSpec::Command { argv } => argv.iter().map(OsString::from).collect(),
        };
        let shown = argv
            .iter()
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ");
        let fail = |message: String| RuntimeError::Start {
            label: label_of_spec.clone(),
            command: shown.clone(),
            message,
        };
        let (worker, hello) = spawn(&argv, startup(timeout)).map_err(|m| {
            let hint = match spec {
                RuntimeSpec::Bundled { adapter, .. } if m.contains("No module named") => {
                    format!(
                        " (install it for {}: {})",
                        adapter.interpreter.program().to_string_lossy(),
                        adapter.interpreter.install(adapter.package)
                    )
                }
                RuntimeSpec::Bundled { adapter, .. }
                    if m.starts_with(&*adapter.interpreter.program().to_string_lossy())
                        && m.contains("No such file") =>
                {
                    format!(
                        " (its interpreter is missing: install {}, or name it with {})",
                        adapter.interpreter.name(),
                        adapter.interpreter.env_var()
                    )
                }
                _ => String::new(),
            };
            fail(format!("{m}{hint}"))
        })?;
        let label = match spec {
            RuntimeSpec::Bundled { label, .. } => label.clone(),
            RuntimeSpec::Command { .. } if !hello.runtime.is_empty() => hello.runtime.clone(),
            RuntimeSpec::Command { .. } => label_of_spec.clone(),
        };
        Ok(Runtime {
            label,
            spec: spec.clone(),
            adapter: match spec {
                RuntimeSpec::Bundled { adapter, .. } => Some(adapter.name),
                RuntimeSpec::Command { .. } => None,
            },
            argv,
            hello,
            scratch,
            _on_interrupt: on_interrupt,
            idle: Mutex::new(vec![(0, worker)]),
            condemned: Mutex::new(HashSet::new()),
            spare: Mutex::new(None),
            next_id: AtomicU64::new(1),
            timeout,
        })
    }

    /// The runtime's name in reports.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Whether its hello says it runs independent subgraphs of one model as each alone.
    pub fn batches(&self) -> bool {
        self.hello.batches
    }

    /// Cases a suite run puts in one model by default: [`batch::SIZE`](crate::runner::batch::SIZE)
    /// for a bundled runtime that compiles each model ([`Adapter::compiles`]) and says it batches,
    /// else 1.
    pub fn default_batch(&self) -> usize {
        let compiles = ADAPTERS
            .iter()
            .any(|a| Some(a.name) == self.adapter && a.compiles);
        if compiles && self.batches() {
            crate::runner::batch::SIZE
        } else {
            1
        }
    }

    /// The spec it was started from.
    pub fn spec(&self) -> &RuntimeSpec {
        &self.spec
    }

    /// How long one request may take.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The bundled adapter's name, for a bundled runtime.
    pub(crate) fn adapter_name(&self) -> Option<&'static str> {
        self.adapter
    }

    /// Its name, version and command, for reports.
    pub fn info(&self) -> RuntimeInfo {
        RuntimeInfo {
            name: self.label.clone(),
            version: self.hello.version.clone(),
            command: self
                .argv
                .iter()
                .map(|a| a.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" "),
        }
    }

    /// Writes a data set's inputs into the scratch space, once for all its runs. An error is
    /// onnx-idx-check's own (its scratch directory could not be written).
    pub fn prepare(&self, req: &Request<'_>) -> std::io::Result<Job> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let dir = ScratchDir(self.scratch.path().join("jobs").join(id.to_string()));
        std::fs::create_dir_all(dir.path())?;
        let mut inputs = Vec::with_capacity(req.inputs.len());
        let elements = req.inputs.iter().map(|i| i.tensor.numel()).sum();
        for (k, input) in req.inputs.iter().enumerate() {
            let npy = dir.path().join(format!("input_{k}.npy"));
            feed::write_npy(&npy, input.tensor)?;
            inputs.push(serde_json::json!({
                "name": input.name,
                "pb": absolute(input.pb),
                "npy": npy,
                "dtype": input.tensor.dtype().name(),
                "shape": input.tensor.shape(),
            }));
        }
        let outputs: Vec<_> = req
            .outputs
            .iter()
            .map(|(name, d)| serde_json::json!({"name": name, "dtype": d.map(DType::name)}))
            .collect();
        let mut body = serde_json::Map::new();
        body.insert("case".into(), req.case.into());
        body.insert("data_set".into(), req.data_set.into());
        body.insert("model".into(), serde_json::json!(absolute(req.model)));
        body.insert("inputs".into(), inputs.into());
        body.insert("outputs".into(), outputs.into());
        Ok(Job {
            dir,
            elements,
            body,
            ran_on: Mutex::new(Vec::new()),
            patience: 1,
        })
    }

    /// [`prepare`](Runtime::prepare) for a model of several cases side by side: it may take
    /// `patience` times `--timeout`.
    pub(crate) fn prepare_shared(&self, req: &Request<'_>, patience: u32) -> std::io::Result<Job> {
        let mut job = self.prepare(req)?;
        job.patience = patience.max(1);
        Ok(job)
    }

    /// A fresh directory in the runtime's scratch space, removed when dropped.
    pub(crate) fn scratch_dir(&self, what: &str) -> std::io::Result<ScratchDir> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let dir = ScratchDir(self.scratch.path().join(format!("{what}-{id}")));
        std::fs::create_dir_all(dir.path())?;
        Ok(dir)
    }

    /// Runs a prepared data set once, asking for `threads` when the worker honours a thread
    /// count, and says what came of it. An error is onnx-idx-check's own (its scratch directory
    /// could not be written).
    pub fn run(&self, job: &Job, threads: Option<usize>) -> std::io::Result<Outcome> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let out = ScratchDir(job.dir.path().join(format!("out-{id}")));
        std::fs::create_dir_all(out.path())?;
        let mut request = job.body.clone();
        request.insert("id".into(), id.into());
        request.insert("output_dir".into(), serde_json::json!(out.path()));
        request.insert(
            "threads".into(),
            serde_json::json!(threads.filter(|_| self.hello.threads)),
        );
        let line = serde_json::Value::Object(request).to_string();
        let idle = self.idle.lock().ok().and_then(|mut v| v.pop());
        let (mut serial, mut worker, mut reused) = match idle {
            // A worker that wrote more after its last reply, or closed its output, broke the
            // protocol after that request's verdict was given: this request goes to a fresh one.
            Some((s, w)) if w.after_reply(Duration::ZERO) == After::Quiet => (s, w, true),
            _ => match self.fresh() {
                Ok((s, w)) => (s, w, false),
                Err(m) => return Ok(Outcome::Crashed(m)),
            },
        };
        let reply = loop {
            if let Ok(mut ran_on) = job.ran_on.lock() {
                ran_on.push(serial);
            }
            let answer = match worker.ask(
                &line,
                scaled_timeout(self.timeout, job.elements).saturating_mul(job.patience),
            ) {
                Ok(a) => a,
                Err(Death::Crashed(m)) => return Ok(Outcome::Crashed(m)),
                Err(Death::TimedOut(t)) => return Ok(Outcome::TimedOut(t)),
            };
            match serde_json::from_str::<Reply>(&answer) {
                Ok(r) if r.id == Some(id) => break r,
                // A late second reply to the worker's previous request: its fault, not this
                // request's, which a fresh worker takes.
                Ok(r) if reused && r.id.is_some() && r.id == worker.answered => {
                    worker.kill();
                    (serial, worker) = match self.fresh() {
                        Ok(w) => w,
                        Err(m) => return Ok(Outcome::Crashed(m)),
                    };
                    reused = false;
                }
                Ok(r) => {
                    let theirs = r.id.map_or("(none)".to_string(), |i| i.to_string());
                    let why = format!("protocol: the reply is for request {theirs}, not {id}");
                    return Ok(Outcome::Crashed(crash_of(worker.crashed(&why))));
                }
                Err(e) => {
                    let why = format!(
                        "protocol: a reply that is not JSON ({e}): {}",
                        clip(&answer)
                    );
                    return Ok(Outcome::Crashed(crash_of(worker.crashed(&why))));
                }
            }
        };
        worker.answered = Some(id);
        // A second reply or a closed output right after this one is this request's fault; the
        // grace is short, and a later one sends the next request to a fresh worker (above).
        let after = match worker.after_reply(AFTER_REPLY) {
            After::Quiet => None,
            After::Line(l) => Some(match serde_json::from_str::<Reply>(&l) {
                Ok(r) if r.id == Some(id) => format!("protocol: answered request {id} twice"),
                _ => format!(
                    "protocol: another line after its reply to request {id}: {}",
                    clip(&l)
                ),
            }),
            After::Broken(why) => Some(format!("protocol: after its reply to request {id}: {why}")),
            After::Closed => Some(format!(
                "protocol: closed its output after answering request {id}"
            )),
        };
        if let Some(why) = after {
            return Ok(Outcome::Crashed(crash_of(worker.crashed(&why))));
        }
        let outcome = match reply.status.as_str() {
            "done" => Outcome::Done(out),
            // Kept whole (the cause is often at the end): the terminal shortens it in the
            // middle, the JSON and JUnit reports keep it all. The reply line is bounded.
            "refused" => {
                Outcome::Refused(reply.message.unwrap_or_else(|| "(no message)".to_string()))
            }
            other => {
                let why = format!(
                    "protocol: status '{}' is neither done nor refused",
                    clip(other)
                );
                return Ok(Outcome::Crashed(crash_of(worker.crashed(&why))));
            }
        };
        if let Ok(mut idle) = self.idle.lock() {
            let condemned = self
                .condemned
                .lock()
                .map(|mut c| c.remove(&serial))
                .unwrap_or(false);
            if !condemned {
                idle.push((serial, worker));
            }
        }
        Ok(outcome)
    }

    /// Starts a fresh worker (its hello read) and gives it a serial number; the message says
    /// why it could not.
    /// The spare started before is taken if there is one; another spare starts either way.
    fn fresh(&self) -> Result<(u64, Worker), String> {
        let spare = self.spare.lock().ok().and_then(|mut s| s.take());
        // A spare that cannot even be spawned is not kept; the request's own spawn below says
        // why.
        let next = Worker::spawn(&self.argv).ok();
        if let Ok(mut s) = self.spare.lock() {
            *s = next;
        }
        let started = match spare {
            Some(w) => greet(w, startup(self.timeout)),
            None => spawn(&self.argv, startup(self.timeout)),
        };
        let (w, _) = started.map_err(|m| format!("could not restart: {m}"))?;
        Ok((self.next_id.fetch_add(1, Ordering::Relaxed), w))
    }

    /// Ends the workers that answered `job` instead of reusing them: a runtime that gave an
    /// output where the spec requires an error (an index out of range) may have read or written
    /// outside its buffers, and a damaged worker would fail later, innocent data sets. A worker
    /// busy with another request is ended when it answers. Nothing is ended for a runtime whose
    /// hello says it is memory safe: a fresh worker costs an import of the runtime.
    pub(crate) fn retire(&self, job: &Job) {
        if self.hello.memory_safe {
            return;
        }
        let serials = job.ran_on.lock().map(|v| v.clone()).unwrap_or_default();
        let Ok(mut idle) = self.idle.lock() else {
            return;
        };
        for serial in serials {
            match idle.iter().position(|(s, _)| *s == serial) {
                Some(i) => drop(idle.swap_remove(i)),
                None => {
                    if let Ok(mut c) = self.condemned.lock() {
                        c.insert(serial);
                    }
                }
            }
        }
    }

    /// Ends every idle worker (closes its input and waits a little) and the spare.
    pub fn finish(&self) {
        if let Ok(mut spare) = self.spare.lock() {
            drop(spare.take());
        }
        let workers = self
            .idle
            .lock()
            .map(|mut v| std::mem::take(&mut *v))
            .unwrap_or_default();
        for (_, w) in workers {
            w.finish();
        }
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.finish();
    }
}

fn crash_of(d: Death) -> String {
    match d {
        Death::Crashed(m) => m,
        Death::TimedOut(t) => format!("no reply after {} s", t.as_secs_f64()),
    }
}

/// The first 200 characters of a line, with `...` when there were more, for messages about a
/// line that is not the protocol's.
fn clip(s: &str) -> String {
    let mut out: String = s.chars().take(200).collect();
    if out.len() < s.len() {
        out.push_str("...");
    }
    out
}

/// `p` made absolute against the working directory (the worker may run elsewhere).
fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Starts a worker and reads its hello.
fn spawn(argv: &[OsString], timeout: Duration) -> Result<(Worker, Hello), String> {
    let w = Worker::spawn(argv).map_err(|e| {
        format!(
            "{}: {e}",
            argv.first()
                .map(|a| a.to_string_lossy())
                .unwrap_or_default()
        )
    })?;
    greet(w, timeout)
}

/// Reads a started worker's hello, within `timeout`.
fn greet(mut w: Worker, timeout: Duration) -> Result<(Worker, Hello), String> {
    let line = w.receive(timeout).map_err(crash_of)?;
    let hello: Hello = serde_json::from_str(&line).map_err(|e| {
        let tail = w.stderr_tail();
        format!(
            "its first line is not the protocol's hello ({e}): {}{}",
            clip(&line),
            if tail.is_empty() {
                String::new()
            } else {
                format!("; its standard error: {tail}")
            }
        )
    })?;
    if let Some(err) = &hello.error {
        return Err(err.clone());
    }
    if hello.protocol != 1 {
        return Err(format!(
            "it speaks protocol {}, onnx-idx-check speaks 1",
            hello.protocol
        ));
    }
    Ok((w, hello))
}

#[cfg(test)]
mod scaled_timeout_tests {
    use super::*;

    #[test]
    fn large_requests_get_time_in_proportion_to_their_inputs() {
        let base = Duration::from_secs(20);
        assert_eq!(scaled_timeout(base, 0), base);
        assert_eq!(scaled_timeout(base, 1 << 22), base);
        assert_eq!(scaled_timeout(base, 3 << 21), Duration::from_secs(30));
        // The onnx reference's GatherElements on an axis of 2^24 + 8 uint8 elements.
        let big = scaled_timeout(base, (1 << 24) + 20);
        assert!(
            big > Duration::from_secs(80) && big < Duration::from_secs(81),
            "{big:?}"
        );
        // No limit stays no limit, without overflow.
        assert_eq!(scaled_timeout(Duration::MAX, 1 << 30), Duration::MAX);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_specs_take_aliases_and_options() {
        let RuntimeSpec::Bundled {
            adapter,
            options,
            label,
        } = RuntimeSpec::bundled("ort:threads=2,providers=CPUExecutionProvider").unwrap()
        else {
            panic!()
        };
        assert_eq!(adapter.name, "onnxruntime");
        assert_eq!(
            options,
            [
                ("threads".to_string(), "2".to_string()),
                ("providers".to_string(), "CPUExecutionProvider".to_string())
            ]
        );
        assert_eq!(label, "ort:threads=2,providers=CPUExecutionProvider");
        let e = RuntimeSpec::bundled("caffe2").unwrap_err().to_string();
        assert_eq!(e, "--runtime caffe2: no such runtime; the bundled ones are onnxruntime, openvino, tract, tvm, iree, tinygrad, onnxruntime-web, onnx-reference (any other: --runtime-cmd 'CMD ARGS')");
        assert!(RuntimeSpec::bundled("tract:fast")
            .unwrap_err()
            .to_string()
            .contains("'fast' is not KEY=VALUE"));
    }

    #[test]
    fn commands_split_like_a_shell_without_expansions() {
        assert_eq!(
            split_words(r#"python3 'my runner.py' --x "a \"b\"" c\ d $HOME"#).unwrap(),
            ["python3", "my runner.py", "--x", "a \"b\"", "c d", "$HOME"]
        );
        assert_eq!(split_words("  ").unwrap(), Vec::<String>::new());
        assert!(split_words("'open").is_none());
        assert!(RuntimeSpec::command(" ").is_err());
    }

    #[cfg(unix)]
    #[test]
    fn a_worker_that_cannot_start_says_why() {
        let spec = RuntimeSpec::command(
            r#"sh -c 'echo "{\"protocol\": 1, \"error\": \"no runtime here\"}"'"#,
        )
        .unwrap();
        let e = Runtime::start(&spec, Duration::from_secs(10))
            .unwrap_err()
            .to_string();
        assert!(e.ends_with(": no runtime here"), "{e}");
        let spec = RuntimeSpec::command("sh -c 'echo hello; exit 4'").unwrap();
        let e = Runtime::start(&spec, Duration::from_secs(10))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("its first line is not the protocol's hello"),
            "{e}"
        );
        let spec = RuntimeSpec::command("/nonexistent/runner").unwrap();
        let e = Runtime::start(&spec, Duration::from_secs(10))
            .unwrap_err()
            .to_string();
        assert!(e.contains("/nonexistent/runner: No such file"), "{e}");
    }
}
