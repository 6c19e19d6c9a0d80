//! What a minimization writes and prints: the smallest case as a node-test directory with
//! `REPORT.md` (a bug report for the runtime's tracker), and the one-screen summary.

use super::behaviour::{self, Class};
use super::decision::{output_decision, rounds_per_step};
use super::python::{self, Api};
use super::subject::{Reference, Subject};
use super::Minimized;
use onnx_idx_check::runtime::{Input, Outcome, Request, Runtime};
use onnx_idx_check::tensor::Tensor;
use onnx_idx_check::verdict::{BugClass, RuntimeInfo, Status};
use std::path::Path;

/// The report's file name.
pub(crate) const REPORT_FILE: &str = "REPORT.md";

/// What the runtime answered for the minimal case, run once more to show it.
pub(crate) enum Observed {
    /// Its outputs (`None` for one it did not write as `output_K.pb`).
    Outputs(Vec<Option<Tensor>>),
    /// It refused, with this message.
    Refused(String),
    /// It crashed, like this.
    Crashed(String),
    /// It did not answer in time.
    TimedOut(std::time::Duration),
    /// onnx-idx-check could not ask it.
    Unknown(String),
}

/// Runs the case in `dir` once in `runtime` and reads what it answered.
pub(crate) fn observe(runtime: &Runtime, dir: &Path, s: &Subject) -> Observed {
    let ds = dir.join("test_data_set_0");
    // A variant moves the inputs after the first into the model: the data set holds the rest.
    let fed = if s.variant.feed == crate::generate::variant::Feed::Graph {
        s.inputs.len()
    } else {
        s.inputs.len().min(1)
    };
    let pbs: Vec<_> = (0..fed).map(|k| ds.join(format!("input_{k}.pb"))).collect();
    let model = dir.join("model.onnx");
    let names: Vec<String> = (0..s.model.graph.as_ref().map_or(0, |g| g.output.len()))
        .map(|k| s.output_name(k))
        .collect();
    let req = Request {
        case: &s.name,
        data_set: "test_data_set_0",
        model: &model,
        inputs: s
            .inputs
            .iter()
            .zip(&pbs)
            .map(|((name, tensor), pb)| Input { name, pb, tensor })
            .collect(),
        outputs: names.iter().map(|n| (n.as_str(), None)).collect(),
    };
    // The job holds the outputs' directory: it must outlive the reading of them.
    let job = match runtime.prepare(&req) {
        Ok(job) => job,
        Err(e) => return Observed::Unknown(e.to_string()),
    };
    match runtime.run(&job, None) {
        Ok(Outcome::Done(out)) => Observed::Outputs(
            (0..names.len())
                .map(|k| {
                    let path = out.path().join(format!("output_{k}.pb"));
                    onnx_idx_check::load::load_tensor_file(
                        &path,
                        "output",
                        onnx_idx_check::runner::DEFAULT_MAX_TENSOR_BYTES,
                    )
                    .ok()
                    .map(|(_, t)| t)
                })
                .collect(),
        ),
        Ok(Outcome::Refused(m)) => Observed::Refused(m),
        Ok(Outcome::Crashed(m)) => Observed::Crashed(m),
        Ok(Outcome::TimedOut(d)) => Observed::TimedOut(d),
        Err(e) => Observed::Unknown(e.to_string()),
    }
}

/// A tensor for people: dtype, shape and every value when there are few.
fn tensor_text(t: &Tensor, file: &str) -> String {
    let head = format!(
        "{} {}",
        t.dtype().name(),
        onnx_idx_check::tensor::shape_text(t.shape())
    );
    if t.numel() > python::LITERAL_LIMIT {
        return format!("{head}, {} values (see `{file}`)", t.numel());
    }
    let values: Vec<String> = (0..t.numel())
        .map(|i| onnx_idx_check::tensor::value::display(t, i))
        .collect();
    format!("{head} = [{}]", values.join(", "))
}

/// The diagnosis in words.
fn diagnosis_words(id: &str) -> String {
    match BugClass::from_id(id) {
        Some(c) => format!("{} (`{}`)", c.sentence(), c.id()),
        None => {
            "none of the bug classes onnx-idx-check knows reproduces the output (`none`)".into()
        }
    }
}

/// The command that judges the written case again.
pub(crate) fn rerun_command(dir: &Path, runtime_flag: &str) -> String {
    format!(
        "onnx-idx-check run {} {runtime_flag}",
        onnx_idx_check::report::shell_quote(&dir.display().to_string())
    )
}

/// What the hunt knows about a finding beyond its minimal case: its class, the variants and the
/// runtime's modes it was tried in, the adapter's options of the mode it is reported in, where it
/// was seen, and the context graph of a case in context.
#[derive(Clone, Debug)]
pub(crate) struct Finding<'a> {
    /// What the disagreement means for the runtime's users.
    pub class: Class,
    /// Variants tried (`"constant indices"`, `"symbolic shapes"`) and whether each fails.
    pub variants: &'a [(String, bool)],
    /// The runtime's modes tried (`"optimizations disabled (`optimization=disabled`)"`) and
    /// whether each fails; empty for a runtime of one mode.
    pub modes: &'a [(String, bool)],
    /// The bundled adapter's options the reproducer makes its session with (a failing mode's);
    /// `None`: those the runtime was started with.
    pub options: Option<&'a [(String, String)]>,
    /// The line listing the operator versions and data types it was seen on (`Seen on: ...`),
    /// empty when not known.
    pub seen_on: &'a str,
    /// For a case in context, the graph in words (`the shape chain (Shape -> ...)`): the case
    /// is written as generated, not minimized.
    pub context: Option<&'a str>,
}

impl Finding<'static> {
    /// The finding of `minimize` run alone: its class from the minimal case's verdict, no
    /// variants.
    pub(crate) fn of(m: &Minimized) -> Finding<'static> {
        // The minimizer held the behaviour fixed: its class is the minimal case's.
        let class = m.behaviour.class;
        Finding {
            class,
            variants: &[],
            modes: &[],
            options: None,
            seen_on: "",
            context: None,
        }
    }
}

/// The machine a report was made on and the versions that matter, found once per process.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Environment {
    /// `Linux 6.8.0 x86_64`.
    pub os: String,
    /// The CPU's model name.
    pub cpu: String,
    /// Python, numpy and onnx versions of the runtime's interpreter, when known.
    pub python: Option<PythonVersions>,
}

/// The versions of the runtime's Python packages.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Deserialize)]
pub(crate) struct PythonVersions {
    /// `3.12.3`.
    pub python: String,
    /// numpy's version.
    pub numpy: String,
    /// onnx's version (`None` when not installed).
    pub onnx: Option<String>,
}

impl Environment {
    /// This machine, and the versions of `python`'s packages (`None`: not a Python runtime).
    /// Asked once per process and interpreter: a hunt writes many reports.
    pub(crate) fn probe(python: Option<&std::ffi::OsStr>) -> Environment {
        use std::collections::HashMap;
        use std::sync::{Mutex, OnceLock};
        static CACHE: OnceLock<Mutex<HashMap<Option<std::ffi::OsString>, Environment>>> =
            OnceLock::new();
        let key = python.map(std::ffi::OsStr::to_os_string);
        let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
        if let Some(env) = cache.lock().ok().and_then(|c| c.get(&key).cloned()) {
            return env;
        }
        let env = Environment {
            os: os_text(),
            cpu: cpu_model(),
            python: python.and_then(python_versions),
        };
        if let Ok(mut c) = cache.lock() {
            c.insert(key, env.clone());
        }
        env
    }
}

/// `uname -srm`, else the target's OS and architecture.
fn os_text() -> String {
    std::process::Command::new("uname")
        .arg("-srm")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| format!("{} {}", std::env::consts::OS, std::env::consts::ARCH))
}

/// The CPU's model name from /proc/cpuinfo, else `unknown`.
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name") || l.starts_with("Model"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

/// Python's, numpy's and onnx's versions as `python` reports them; `None` when it cannot.
fn python_versions(python: &std::ffi::OsStr) -> Option<PythonVersions> {
    const SCRIPT: &str = "import json, platform\nv = {'python': platform.python_version(), 'numpy': '', 'onnx': None}\ntry:\n    import numpy; v['numpy'] = numpy.__version__\nexcept Exception: pass\ntry:\n    import onnx; v['onnx'] = onnx.__version__\nexcept Exception: pass\nprint(json.dumps(v))\n";
    let out = std::process::Command::new(python)
        .args(["-c", SCRIPT])
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    serde_json::from_slice(&out.stdout).ok()
}

/// The Python a runtime runs in: the adapters' for a bundled one. A `--runtime-cmd` runtime's
/// own packages are its business (asking a Python costs a second, in a hunt's budget).
fn runtime_python(api: Option<Api>) -> Option<std::ffi::OsString> {
    api.map(|_| onnx_idx_check::runtime::python())
}

/// `command` with every temporary path replaced: a reader cannot have it.
fn without_temp_paths(command: &str) -> String {
    let tmp = std::env::temp_dir().display().to_string();
    command
        .split(' ')
        .map(|w| {
            if w.contains("/tmp/") || (!tmp.is_empty() && tmp != "/" && w.contains(&tmp)) {
                "<temporary path>"
            } else {
                w
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The runtime and how it was driven, in words.
fn runtime_words(info: &RuntimeInfo, api: Option<Api>, runtime_flag: &str) -> String {
    match api {
        Some(api) => format!(
            "{} {} through its Python API (`{}`; the bundled adapter of onnx-idx-check {}, `{runtime_flag}`)",
            api.runtime(),
            info.version,
            api.call(),
            onnx_idx_check::report::TOOL.version
        ),
        // A bundled adapter whose runtime has no Python API to reproduce with (onnxruntime-web).
        None if runtime_flag.starts_with("--runtime ") => format!(
            "{} {} (the bundled adapter of onnx-idx-check {}, `{runtime_flag}`)",
            info.name,
            info.version,
            onnx_idx_check::report::TOOL.version
        ),
        None => format!(
            "{} {} (`--runtime-cmd {}`)",
            info.name,
            info.version,
            without_temp_paths(&info.command)
        ),
    }
}

/// The **Environment** block.
pub(crate) fn environment_block(
    info: &RuntimeInfo,
    api: Option<Api>,
    runtime_flag: &str,
    env: &Environment,
) -> String {
    let mut md = String::from("## Environment\n\n");
    md.push_str(&format!(
        "- Runtime: {}\n",
        runtime_words(info, api, runtime_flag)
    ));
    match &env.python {
        Some(p) => md.push_str(&format!(
            "- Python {}, numpy {}, onnx {}\n",
            p.python,
            if p.numpy.is_empty() {
                "(none)"
            } else {
                &p.numpy
            },
            p.onnx.as_deref().unwrap_or("(not installed)")
        )),
        None => md.push_str("- Python: not asked (a runtime not driven through its Python API)\n"),
    }
    md.push_str(&format!("- OS: {}\n- CPU: {}\n", env.os, env.cpu));
    md
}

/// What a wrong output's elements hold, in words (`empty strings`, `zeros`).
fn held(kinds: &str) -> String {
    let words: Vec<&str> = kinds
        .split(", ")
        .map(|k| match k {
            "empty" => "empty strings",
            "zero" => "zeros",
            "nan" => "NaN",
            "inf" => "infinities",
            _ => "other values",
        })
        .collect();
    words.join(" and ")
}

/// A title a maintainer would keep: the runtime, the operator version, the data type and what
/// goes wrong.
pub(crate) fn title(
    m: &Minimized,
    info: &RuntimeInfo,
    finding: &Finding<'_>,
    observed: &Observed,
) -> String {
    let class = finding.class;
    let s = &m.subject;
    let op = s.def.version_name(s.version);
    // In context, the graph says where; the data type of the graph's input is not the node's.
    let subject = match finding.context {
        Some(graph) => format!("{op} inside {}", graph.split(" (").next().unwrap_or(graph)),
        None => format!("{op} on {} data", data_dtype(s)),
    };
    let failed = m
        .result
        .data_sets
        .first()
        .and_then(|d| d.outputs.iter().find(|o| o.status == Status::Failed));
    let what = match class {
        Class::WrongOutput => match failed {
            Some(o) if o.actual_dtype != o.dtype => {
                format!("returns {} instead of {}", o.actual_dtype, o.dtype)
            }
            Some(o)
                if o.expected_shape
                    .as_deref()
                    .is_some_and(|e| e != o.actual_shape) =>
            {
                format!(
                    "returns shape {} instead of {}",
                    onnx_idx_check::tensor::shape_text(&o.actual_shape),
                    onnx_idx_check::tensor::shape_text(
                        o.expected_shape.as_deref().unwrap_or_default()
                    )
                )
            }
            Some(o) if o.mismatches > 0 => {
                let total: usize = o.actual_shape.iter().product();
                let desc = m.behaviour.symptom.strip_prefix("values: ").map(held);
                match (desc, m.signature.diagnosis) {
                    (_, d) if d != "none" => format!(
                        "returns a wrong output: {}",
                        BugClass::from_id(d).map_or(d, BugClass::sentence)
                    ),
                    _ if behaviour::symptom_words(&m.behaviour.symptom).is_some() => format!(
                        "{} ({} of {total} output elements wrong)",
                        behaviour::symptom_words(&m.behaviour.symptom).unwrap_or_default(),
                        o.mismatches
                    ),
                    (Some(desc), _) if desc != "other values" => format!(
                        "returns {desc} in {} of {total} output elements",
                        o.mismatches
                    ),
                    _ => format!(
                        "returns wrong values in {} of {total} output elements",
                        o.mismatches
                    ),
                }
            }
            _ => "returns a wrong output".to_string(),
        },
        Class::Crash => {
            let how = match observed {
                Observed::TimedOut(_) => "hangs".to_string(),
                _ => {
                    let site = &m.behaviour.symptom;
                    if site.is_empty() {
                        "crashes".to_string()
                    } else {
                        format!("crashes ({site})")
                    }
                }
            };
            let input = if m.reference.is_error() {
                "on invalid input where an error is required"
            } else {
                "on valid input"
            };
            format!("{how} {input}")
        }
        Class::Unsafe => {
            "returns values that are not in its inputs where an error is required".into()
        }
        Class::Nondeterministic => "gives different outputs from run to run".into(),
        Class::RefusesValid => "refuses valid input".into(),
        Class::AcceptsInvalid => match m.reference.decision() {
            Some(d) => {
                format!("returns an output where onnx-idx-check's decision {d} requires an error")
            }
            None => "returns an output where the spec requires an error".into(),
        },
    };
    format!("{} {}: {subject} {what}", info.name, info.version)
}

/// The dtype of the subject's data (or updates).
fn data_dtype(s: &Subject) -> &'static str {
    s.tensor_of(onnx_idx_check::ops::Role::Data)
        .or_else(|| s.tensor_of(onnx_idx_check::ops::Role::Updates))
        .map_or("?", |t| t.dtype().name())
}

/// **What decides it**: the operator's text for the version, and the decision when one does
/// (`decided`: the one the expected outputs rest on, from [`output_decision`](super::decision::output_decision)).
pub(crate) fn what_decides(
    def: &onnx_idx_check::ops::OpDef,
    v: &onnx_idx_check::ops::OpVersion,
    reference: &Reference,
    decided: Option<onnx_idx_check::ops::Decision>,
) -> String {
    let name = def.version_name(v);
    let mut md = String::from("## What decides it\n\n");
    match reference {
        Reference::Error(e) => match e.decision() {
            Some(d) => md.push_str(&format!(
                "An error is required here by **onnx-idx-check's decision {d}**, not by the ONNX text: \
                 a rule of this project where the spec is silent or ambiguous (onnx-idx-check's \
                 `docs/semantics.md#{}`). Weigh it as such; {name}'s own text is below.\n\n",
                d.anchor()
            )),
            None => md.push_str(&format!(
                "{name}'s text requires an error for these inputs ({}).\n\n",
                e
            )),
        },
        Reference::Outputs(_) => match decided {
            Some(d) => md.push_str(&format!(
                "The expected output rests on **onnx-idx-check's decision {d}**, not on the ONNX \
                 text, which is silent here ({}; onnx-idx-check's `docs/semantics.md#{}`). \
                 Weigh it as such; {name}'s own text is below.\n\n",
                match d {
                    onnx_idx_check::ops::Decision::D6 => {
                        "indices shorter than the data off the axis, or an empty index tuple \
                         of ScatterND, are valid"
                    }
                    _ => {
                        "a reduction's arithmetic: a `max` or `min` meeting NaN gives NaN, and \
                         float16 and bfloat16 round after each step, in row-major order"
                    }
                },
                d.anchor()
            )),
            None => md.push_str(&format!(
                "The expected output is {name} as its text defines it (computed by onnx-idx-check's reference).\n\n"
            )),
        },
    }
    match onnx_idx_check::ops::quotes::quote(def, v) {
        Some(q) => {
            md.push_str(&format!("{name} ({}):\n\n", q.source));
            for line in q.text.lines() {
                md.push_str(&format!("> {line}\n"));
            }
            md.push('\n');
        }
        None => md.push_str(&format!("(no text of {name} is quoted)\n\n")),
    }
    md
}

/// The variants line: `Fails with: ...; passes with: ...`, empty without variants.
pub(crate) fn variants_line(variants: &[(String, bool)]) -> String {
    fails_and_passes(variants)
}

/// The modes line: `In the runtime's modes: fails with ...; passes with ...`, empty for a
/// runtime of one mode.
pub(crate) fn modes_line(modes: &[(String, bool)]) -> String {
    let line = fails_and_passes(modes);
    if line.is_empty() {
        return line;
    }
    format!("Runtime modes: {}{}", &line[..1].to_lowercase(), &line[1..])
}

/// `Fails with: ...; passes with: ...` and a blank line, empty for an empty list.
fn fails_and_passes(variants: &[(String, bool)]) -> String {
    if variants.is_empty() {
        return String::new();
    }
    let list = |fails: bool| {
        variants
            .iter()
            .filter(|(_, f)| *f == fails)
            .map(|(w, _)| w.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (fails, passes) = (list(true), list(false));
    let mut line = format!(
        "Fails with: {}",
        if fails.is_empty() { "(none)" } else { &fails }
    );
    if !passes.is_empty() {
        line.push_str(&format!("; passes with: {passes}"));
    }
    line.push_str(".\n\n");
    line
}

/// What the reproducer must show for a finding of `class`.
fn shows(class: Class, observed: &Observed) -> python::Shows {
    match class {
        Class::WrongOutput => python::Shows::WrongOutput,
        Class::Nondeterministic => python::Shows::Nondeterministic(20),
        Class::Crash => python::Shows::Crash(match observed {
            Observed::TimedOut(d) => (d.as_secs() * 3).max(30),
            _ => 120,
        }),
        Class::RefusesValid => python::Shows::Refusal(match observed {
            Observed::Refused(m) => m.clone(),
            _ => String::new(),
        }),
        Class::Unsafe | Class::AcceptsInvalid => python::Shows::Output,
    }
}

/// `REPORT.md` for the minimal case written to `dir`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn render(
    m: &Minimized,
    info: &RuntimeInfo,
    runtime_flag: &str,
    api: Option<Api>,
    observed: &Observed,
    env: &Environment,
    finding: &Finding<'_>,
) -> String {
    let s = &m.subject;
    let version = s.def.version_name(s.version);
    let mut md = format!("# {}\n\n", title(m, info, finding, observed));
    md.push_str(&format!(
        "**{}** (`{}`). {}\n\n",
        finding.class.title(),
        finding.class.id(),
        class_sentence(finding.class)
    ));
    if let Some(graph) = finding.context {
        md.push_str(&format!(
            "**In context**: {version} fails inside {graph}, a graph real models contain. The case is written as generated, not minimized.\n\n"
        ));
    }
    md.push_str(&variants_line(finding.variants));
    md.push_str(&modes_line(finding.modes));
    if !finding.seen_on.is_empty() {
        md.push_str(&format!("{}\n\n", finding.seen_on));
    }
    md.push_str(&environment_block(info, api, runtime_flag, env));
    md.push_str("\n## The model\n\n");
    let attrs: Vec<String> = s
        .node()
        .map(|n| {
            n.attribute
                .iter()
                .map(|a| match a.r#type {
                    3 => format!("{}={}", a.name, python::py_str(&a.s)),
                    _ => format!("{}={}", a.name, a.i()),
                })
                .collect()
        })
        .unwrap_or_default();
    let domain = if s.def.domain.is_empty() {
        "ai.onnx"
    } else {
        s.def.domain
    };
    let attrs = if attrs.is_empty() {
        String::new()
    } else {
        format!(", attributes: {}", attrs.join(", "))
    };
    match (s.graph_nodes(), finding.context) {
        (Some(nodes), graph) => md.push_str(&format!(
            "The `{}` node under test ({domain}), opset {} ({version}){attrs}, inside {}: a graph of {} node(s) ({}); {}.\n\n",
            s.def.op_type,
            s.opset,
            graph.unwrap_or("a graph"),
            nodes.len(),
            nodes.join(", "),
            s.variant.words()
        )),
        (None, _) => md.push_str(&format!(
            "One `{}` node ({domain}), opset {} ({version}){attrs}; {}.\n\n",
            s.def.op_type,
            s.opset,
            s.variant.words()
        )),
    }
    md.push_str("Inputs:\n\n");
    for (k, (name, t)) in s.inputs.iter().enumerate() {
        md.push_str(&format!(
            "- `{name}`: {}\n",
            tensor_text(t, &format!("test_data_set_0/input_{k}.pb"))
        ));
    }
    // A graph's own initializers (an embedding's weights; a variant's are inputs above).
    let own: Vec<&onnx_idx_check::pb::TensorProto> = s
        .model
        .graph
        .as_ref()
        .map(|g| g.initializer.iter().collect())
        .unwrap_or_default();
    if !own.is_empty() {
        md.push_str("\nInitializers:\n\n");
        for t in own {
            let ctx = onnx_idx_check::load::tensor::TensorContext {
                base_dir: Path::new("."),
                max_bytes: onnx_idx_check::runner::DEFAULT_MAX_TENSOR_BYTES,
            };
            let text = onnx_idx_check::load::tensor::tensor_from_proto(t, &ctx).map_or_else(
                |e| format!("(not readable: {e})"),
                |v| tensor_text(&v, "model.onnx"),
            );
            md.push_str(&format!("- `{}`: {text}\n", t.name));
        }
    }
    md.push_str("\n## Expected\n\n");
    match &m.reference {
        Reference::Outputs(outs) => {
            for (k, t) in outs.iter().enumerate() {
                md.push_str(&format!(
                    "- `{}`: {}\n",
                    s.output_name(k),
                    tensor_text(t, &format!("test_data_set_0/output_{k}.pb"))
                ));
            }
        }
        Reference::Error(e) => md.push_str(&format!(
            "An error ({}): {}\n",
            match e.decision() {
                Some(d) => format!("onnx-idx-check's decision {d}; see below"),
                None => "the spec; see below".to_string(),
            },
            match e {
                onnx_idx_check::ops::SpecError::Decision { message, .. } => message.clone(),
                e => e.to_string(),
            }
        )),
    }
    md.push_str(&format!("\n## Actual ({} {})\n\n", info.name, info.version));
    match observed {
        Observed::Outputs(outs) => {
            for (k, t) in outs.iter().enumerate() {
                let text = t.as_ref().map_or("(no output written)".into(), |t| {
                    tensor_text(t, "the runtime's output")
                });
                md.push_str(&format!("- `{}`: {text}\n", s.output_name(k)));
            }
        }
        Observed::Refused(msg) => md.push_str(&format!("Refused: `{msg}`\n")),
        Observed::Crashed(msg) => {
            // The message's head (the signal, a panic's site); a backtrace follows it.
            let head: String = without_temp_paths(msg).chars().take(400).collect();
            md.push_str(&format!("Crashed: {head}\n"));
        }
        Observed::TimedOut(d) => md.push_str(&format!("No answer within {} s.\n", d.as_secs_f64())),
        Observed::Unknown(e) => md.push_str(&format!("(could not be run again: {e})\n")),
    }
    let ds = m.result.data_sets.first();
    if let Some(out) = ds.and_then(|d| d.outputs.iter().find(|o| o.status == Status::Failed)) {
        if !out.first_mismatches.is_empty() {
            md.push_str(&format!("\n{} element(s) differ:\n\n", out.mismatches));
            for mm in &out.first_mismatches {
                md.push_str(&format!(
                    "- at {:?}: expected {}, got {}{}\n",
                    mm.index,
                    mm.expected,
                    mm.actual,
                    mm.source
                        .as_ref()
                        .map_or(String::new(), |src| format!(" (the right value is {src})"))
                ));
            }
        }
    }
    if m.signature.diagnosis != "none" {
        md.push_str(&format!(
            "\nDiagnosis: {}\n",
            diagnosis_words(m.signature.diagnosis)
        ));
    }
    md.push('\n');
    // A wrong value of a low-precision reduction rests on D8's arithmetic before any shape rule.
    let decided = match m.behaviour.class {
        behaviour::Class::WrongOutput | behaviour::Class::Nondeterministic
            if rounds_per_step(s) =>
        {
            Some(onnx_idx_check::ops::Decision::D8)
        }
        _ => output_decision(s),
    };
    md.push_str(&what_decides(s.def, s.version, &m.reference, decided));
    if let Some(api) = api {
        // The reproducer reads a tensor from the case's files only when it cannot write it out.
        let reads_files = s.inputs.iter().any(|(_, t)| python::array(t).is_none())
            || matches!(&m.reference, Reference::Outputs(outs)
                if outs.iter().any(|t| python::array(t).is_none()));
        let from_here = if reads_files {
            "Run from this directory: tensors too large to write out (or of a type numpy lacks) are read from its `.pb` files. "
        } else {
            ""
        };
        md.push_str(&format!(
            "## Reproduce ({}, Python)\n\n{from_here}Exit status 1: the bug shows; 0: the runtime's answer is right; 2: something else happened (it says what).\n\n```python\n",
            api.runtime()
        ));
        md.push_str(&python::reproducer(s, &m.reference, api));
        let options = finding.options.unwrap_or_default();
        md.push_str(&python::run_and_check(
            api,
            &shows(finding.class, observed),
            options,
        ));
        md.push_str("```\n");
    }
    let how = if finding.context.is_some() {
        "written as generated"
    } else {
        "minimized from"
    };
    md.push_str(&format!(
        "\nFound by onnx-idx-check {} ({how} `{}`, {}, {} elements); in this directory, `onnx-idx-check run . {runtime_flag}` judges it again.\n",
        onnx_idx_check::report::TOOL.version,
        m.original.name,
        m.original.shapes(),
        m.original.size(),
    ));
    md
}

/// Replaces the line of `dir`'s `REPORT.md` that starts with `prefix` by `line` (a hunt keeps
/// the list of where a finding was seen up to date); a report without one is left as it is.
pub(crate) fn replace_line(dir: &Path, prefix: &str, line: &str) -> anyhow::Result<()> {
    let path = dir.join(REPORT_FILE);
    let Ok(md) = std::fs::read_to_string(&path) else {
        return Ok(());
    };
    let mut found = false;
    let replaced: Vec<&str> = md
        .split('\n')
        .map(|l| {
            if !found && l.starts_with(prefix) {
                found = true;
                line
            } else {
                l
            }
        })
        .collect();
    if found {
        onnx_idx_check::fsutil::write_atomic(dir, REPORT_FILE, replaced.join("\n").as_bytes())?;
    }
    Ok(())
}

/// One sentence on what a class means.
fn class_sentence(class: Class) -> &'static str {
    match class {
        Class::Crash => "The process running the model dies or hangs.",
        Class::WrongOutput => "Valid input, a wrong value, shape or type.",
        Class::Unsafe => "An error is required, and the runtime returns values that are not in its inputs or change from run to run: it reads memory it should not.",
        Class::Nondeterministic => "Valid input, different outputs between runs or thread counts.",
        Class::RefusesValid => "Valid input refused, where the runtime runs other cases of this operator version and type.",
        Class::AcceptsInvalid => "An error is required, and the runtime returns a plausible output instead (a missing check).",
    }
}

/// The one-screen summary printed after a minimization.
pub(crate) fn summary(m: &Minimized, dir: &Path, runtime_flag: &str) -> String {
    let mut kinds: Vec<(&str, usize)> = Vec::new();
    for k in &m.taken {
        match kinds.iter_mut().find(|(n, _)| n == k) {
            Some((_, c)) => *c += 1,
            None => kinds.push((k, 1)),
        }
    }
    let taken: Vec<String> = kinds.iter().map(|(k, c)| format!("{k} x{c}")).collect();
    format!(
        "minimized {} ({}): {} -> {}\n  size:     {} -> {} elements ({})\n  keeps:    {} (diagnosis: {})\n  steps:    {} candidates judged, {} taken{} in {:.1} s\n  wrote:    {} (with {REPORT_FILE})\n  rerun:    {}\n",
        m.original.name,
        m.data_set,
        m.original.shapes(),
        m.subject.shapes(),
        m.original.size(),
        m.subject.size(),
        m.subject.def.version_name(m.subject.version),
        m.signature.verdict(),
        m.signature.diagnosis,
        m.tried,
        m.taken.len(),
        if taken.is_empty() {
            String::new()
        } else {
            format!(" ({})", taken.join(", "))
        },
        m.elapsed.as_secs_f64(),
        dir.display(),
        rerun_command(dir, runtime_flag)
    )
}

/// Writes the minimal case and its report into `dir`, a directory the caller has taken (see
/// [`crate::owned`]) and emptied of an earlier minimization; the finding's class is derived
/// from the minimal case ([`Finding::of`]).
pub(crate) fn write(
    m: &Minimized,
    runtime: &Runtime,
    runtime_flag: &str,
    api: Option<Api>,
    dir: &Path,
) -> std::io::Result<()> {
    write_finding(m, runtime, runtime_flag, api, dir, &Finding::of(m))
}

/// [`write`] for a finding whose class and variants the caller (a hunt) knows.
pub(crate) fn write_finding(
    m: &Minimized,
    runtime: &Runtime,
    runtime_flag: &str,
    api: Option<Api>,
    dir: &Path,
    finding: &Finding<'_>,
) -> std::io::Result<()> {
    m.subject.write(dir, &m.reference)?;
    let observed = observe(runtime, dir, &m.subject);
    let info = runtime.info();
    let env = Environment::probe(runtime_python(api).as_deref());
    let finding = Finding {
        options: Some(finding.options.unwrap_or(runtime.spec().options())),
        ..finding.clone()
    };
    let md = render(m, &info, runtime_flag, api, &observed, &env, &finding);
    onnx_idx_check::fsutil::write_atomic(dir, REPORT_FILE, md.as_bytes()).map_err(|e| e.source)
}

#[cfg(test)]
mod tests {
    use super::*;
    use onnx_idx_check::ops::{Decision, SpecError, REGISTRY};

    fn gather(
        since: i64,
    ) -> (
        &'static onnx_idx_check::ops::OpDef,
        &'static onnx_idx_check::ops::OpVersion,
    ) {
        let def = REGISTRY
            .iter()
            .find(|d| d.domain.is_empty() && d.op_type == "Gather")
            .unwrap();
        (def, def.versions.iter().find(|v| v.since == since).unwrap())
    }

    #[test]
    fn nan_meeting_max_or_min_is_decided_by_d8_and_said_so() {
        let case =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/onnx-node/test_scatternd_max");
        let mut s = Subject::load(&case, "case", "test_data_set_0", 1 << 20).unwrap();
        assert_eq!(output_decision(&s), None, "no NaN in ONNX's own case");
        let n = s.inputs[0].1.numel();
        let mut values = vec![1.0f32; n];
        values[0] = f32::NAN;
        s.inputs[0].1 = Tensor::from_vec(s.inputs[0].1.shape().to_vec(), values).unwrap();
        assert_eq!(output_decision(&s), Some(onnx_idx_check::ops::Decision::D8));
        let md = what_decides(
            s.def,
            s.version,
            &Reference::Outputs(Vec::new()),
            output_decision(&s),
        );
        assert!(
            md.contains("**onnx-idx-check's decision D8**, not on the ONNX text"),
            "{md}"
        );
        assert!(
            md.contains("docs/semantics.md#d8-reduction-order-and-arithmetic"),
            "{md}"
        );
        // Without a max or min reduction the NaN is the text's business.
        let node = &mut s.model.graph.as_mut().unwrap().node[0];
        node.attribute
            .iter_mut()
            .find(|a| a.name == "reduction")
            .unwrap()
            .s = b"add".to_vec();
        assert_eq!(output_decision(&s), None);
    }

    #[test]
    fn a_low_precision_reduction_into_one_element_twice_rounds_per_step_by_d8() {
        use onnx_idx_check::tensor::DType;
        // ONNX's own case: data [4, 4, 4], indices [[0], [0]], updates [2, 4, 4], add.
        let case =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/onnx-node/test_scatternd_add");
        let mut s = Subject::load(&case, "case", "test_data_set_0", 1 << 20).unwrap();
        assert!(
            !rounds_per_step(&s),
            "float32 rounds once, as the text's loop does"
        );
        for k in [0, 2] {
            let t = &s.inputs[k].1;
            let halves = vec![half::f16::from_f32(1.0); t.numel()];
            s.inputs[k].1 = Tensor::from_vec(t.shape().to_vec(), halves).unwrap();
        }
        assert_eq!(s.inputs[0].1.dtype(), DType::Float16);
        assert!(
            rounds_per_step(&s),
            "two updates reduce into each element of data[0]"
        );
        // Distinct targets: each element receives one update, nothing to round twice.
        s.inputs[1].1 = Tensor::from_vec(vec![2, 1], vec![0i64, 1]).unwrap();
        assert!(!rounds_per_step(&s));
        // A negative index names the same element as its positive twin.
        s.inputs[1].1 = Tensor::from_vec(vec![2, 1], vec![3i64, -1]).unwrap();
        assert!(rounds_per_step(&s));
    }

    #[test]
    fn indices_shorter_than_the_data_off_the_axis_are_valid_by_d6_and_said_so() {
        // The case the reference evaluator refuses: data [1, 2], indices [1, 1], axis 0.
        let case =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/onnx-node/test_gather_elements_0");
        let mut s = Subject::load(&case, "case", "test_data_set_0", 1 << 20).unwrap();
        assert_eq!(
            output_decision(&s),
            None,
            "ONNX's own case has equal shapes"
        );
        s.inputs[0].1 = Tensor::from_vec(vec![1, 2], vec![1.0f32, 2.0]).unwrap();
        s.inputs[1].1 = Tensor::from_vec(vec![1, 1], vec![0i64]).unwrap();
        let axis = s.int_attr("axis").unwrap_or(0);
        assert!(s.set_int_attr("axis", 0) || axis == 0);
        assert_eq!(output_decision(&s), Some(onnx_idx_check::ops::Decision::D6));
        let md = what_decides(
            s.def,
            s.version,
            &Reference::Outputs(Vec::new()),
            output_decision(&s),
        );
        assert!(
            md.contains("**onnx-idx-check's decision D6**, not on the ONNX text")
                && md.contains("indices shorter than the data off the axis"),
            "{md}"
        );
        // Shorter on the axis itself is the text's own case.
        s.inputs[0].1 = Tensor::from_vec(vec![2, 1], vec![1.0f32, 2.0]).unwrap();
        assert_eq!(output_decision(&s), None);
    }

    #[test]
    fn a_decision_is_named_as_one_with_its_anchor_and_never_as_the_spec() {
        let (def, v) = gather(1);
        let e = SpecError::Decision {
            rule: Decision::D2,
            message: "indices[0] = -1 is negative".into(),
        };
        let md = what_decides(def, v, &Reference::Error(e), None);
        assert!(
            md.contains("**onnx-idx-check's decision D2**, not by the ONNX text"),
            "{md}"
        );
        assert!(
            md.contains("docs/semantics.md#d2-negative-indices-before-opset-11"),
            "{md}"
        );
        assert!(!md.contains("spec requires"), "{md}");
        // Gather-1's own words follow, quoted: they define no bounds.
        assert!(md.contains("> `indices`: Tensor of int32/int64 indices, of any rank q. All index values are expected to be within bounds. It is an error if any of the index values are out of bounds.\n"), "{md}");
        let md = what_decides(
            def,
            gather(13).1,
            &Reference::Error(SpecError::Violation(
                "indices[0] = 3 is out of range".into(),
            )),
            None,
        );
        assert!(md.contains("Gather-13's text requires an error for these inputs (indices[0] = 3 is out of range)"), "{md}");
        assert!(md.contains("within bounds [-s, s-1]"), "{md}");
    }

    #[test]
    fn the_environment_describes_the_adapter_and_names_no_temporary_path() {
        let info = RuntimeInfo {
            name: "onnxruntime".into(),
            version: "1.31.1".into(),
            command: "python3 /tmp/onnx-idx-check-x1/adapters/onnxruntime.py".into(),
        };
        let env = Environment {
            os: "Linux 6.8.0 x86_64".into(),
            cpu: "AMD EPYC".into(),
            python: Some(PythonVersions {
                python: "3.11.7".into(),
                numpy: "2.4.6".into(),
                onnx: Some("1.23.2".into()),
            }),
        };
        let md = environment_block(&info, Some(Api::OnnxRuntime), "--runtime onnxruntime", &env);
        assert_eq!(
            md,
            concat!(
                "## Environment\n\n",
                "- Runtime: onnxruntime 1.31.1 through its Python API (`onnxruntime.InferenceSession`; the bundled adapter of onnx-idx-check 0.1.0, `--runtime onnxruntime`)\n",
                "- Python 3.11.7, numpy 2.4.6, onnx 1.23.2\n",
                "- OS: Linux 6.8.0 x86_64\n",
                "- CPU: AMD EPYC\n",
            )
        );
        // A command runtime is its command, with the temporary path replaced.
        let md = environment_block(&info, None, "--runtime-cmd x", &Environment::default());
        assert!(
            md.contains("(`--runtime-cmd python3 <temporary path>`)"),
            "{md}"
        );
        assert!(!md.contains("/tmp/"), "{md}");
        assert!(md.contains("- Python: not asked"), "{md}");
        // A bundled adapter without a Python API (onnxruntime-web, in Node) is named as bundled.
        let web = RuntimeInfo {
            name: "onnxruntime-web".into(),
            version: "1.30.0".into(),
            ..info.clone()
        };
        let md = environment_block(
            &web,
            None,
            "--runtime onnxruntime-web",
            &Environment::default(),
        );
        assert!(
            md.contains("- Runtime: onnxruntime-web 1.30.0 (the bundled adapter of onnx-idx-check 0.1.0, `--runtime onnxruntime-web`)"),
            "{md}"
        );
    }

    #[test]
    fn variants_say_which_fail_and_which_pass() {
        assert_eq!(variants_line(&[]), "");
        let v = [
            ("constant indices".to_string(), true),
            ("graph-input indices".to_string(), false),
            ("symbolic shapes".to_string(), false),
        ];
        assert_eq!(
            variants_line(&v),
            "Fails with: constant indices; passes with: graph-input indices, symbolic shapes.\n\n"
        );
    }

    #[test]
    fn modes_say_which_fail_and_which_pass() {
        assert_eq!(modes_line(&[]), "");
        let m = [
            ("optimizations all (`optimization=all`)".to_string(), false),
            (
                "optimizations disabled (`optimization=disabled`)".to_string(),
                true,
            ),
        ];
        assert_eq!(
            modes_line(&m),
            "Runtime modes: fails with: optimizations disabled (`optimization=disabled`); passes with: optimizations all (`optimization=all`).\n\n"
        );
    }

    #[test]
    fn wrong_elements_are_named_by_what_they_hold() {
        assert_eq!(held("empty"), "empty strings");
        assert_eq!(held("nan, zero"), "NaN and zeros");
    }
}
