//! What a minimization writes and prints: the smallest case as a node-test directory with
//! `REPORT.md` (a bug report for the runtime's tracker), and the one-screen summary.

use super::python::{self, Api};
use super::subject::{Reference, Subject};
use super::Minimized;
use crate::runtime::{Input, Outcome, Request, Runtime};
use crate::tensor::Tensor;
use crate::verdict::{BugClass, Status};
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
    let pbs: Vec<_> = (0..s.inputs.len())
        .map(|k| ds.join(format!("input_{k}.pb")))
        .collect();
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
                    crate::load::load_tensor_file(
                        &path,
                        "output",
                        crate::runner::DEFAULT_MAX_TENSOR_BYTES,
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
        crate::tensor::shape_text(t.shape())
    );
    if t.numel() > python::LITERAL_LIMIT {
        return format!("{head}, {} values (see `{file}`)", t.numel());
    }
    let values: Vec<String> = (0..t.numel())
        .map(|i| crate::tensor::value::display(t, i))
        .collect();
    format!("{head} = [{}]", values.join(", "))
}

/// The verdict in words.
fn verdict_words(m: &Minimized) -> String {
    let sig = &m.signature;
    match sig.fault {
        Some(f) => format!("{} ({})", f.words(), sig.status.as_str()),
        None if m.reference.is_error() => {
            "returned an output where the spec requires an error (failed)".into()
        }
        None => "returned a wrong output (failed)".into(),
    }
}

/// The diagnosis in words.
fn diagnosis_words(id: &str) -> String {
    match BugClass::ALL.iter().find(|c| c.id() == id) {
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
        crate::report::shell_quote(&dir.display().to_string())
    )
}

/// `REPORT.md` for the minimal case written to `dir`.
pub(crate) fn render(
    m: &Minimized,
    info: &crate::verdict::RuntimeInfo,
    runtime_flag: &str,
    api: Option<Api>,
    observed: &Observed,
    dir: &Path,
) -> String {
    let s = &m.subject;
    let dtype = s
        .tensor_of(crate::ops::Role::Data)
        .or_else(|| s.tensor_of(crate::ops::Role::Updates))
        .map_or("?", |t| t.dtype().name());
    let version = s.def.version_name(s.version);
    let mut md = format!(
        "# {} {}: {} {} on {dtype} data\n\n",
        info.name,
        info.version,
        version,
        verdict_words(m)
    );
    md.push_str(&format!(
        "Found by onnx-idx-check {}: minimized from the case `{}` ({}, {} elements) to {} ({} elements).\n\n",
        env!("CARGO_PKG_VERSION"),
        m.original.name,
        m.original.shapes(),
        m.original.size(),
        s.shapes(),
        s.size()
    ));
    md.push_str("## What happens\n\n");
    // A bundled adapter runs from a scratch directory that is gone by the time anyone reads
    // this: name the adapter, not its temporary path.
    let how = match api {
        Some(_) => format!("onnx-idx-check's bundled adapter, `{runtime_flag}`"),
        None => format!("`{}`", info.command),
    };
    md.push_str(&format!(
        "- **Runtime**: {} {} ({how})\n",
        info.name, info.version
    ));
    let attrs: Vec<String> = s
        .node()
        .map(|n| {
            n.attribute
                .iter()
                .map(|a| match a.r#type {
                    3 => format!("{}={}", a.name, python::py_str(&a.s)),
                    _ => format!("{}={}", a.name, a.i),
                })
                .collect()
        })
        .unwrap_or_default();
    md.push_str(&format!(
        "- **Operator**: `{}` ({}), opset {} ({version}){}\n",
        s.def.op_type,
        if s.def.domain.is_empty() {
            "ai.onnx"
        } else {
            s.def.domain
        },
        s.opset,
        if attrs.is_empty() {
            String::new()
        } else {
            format!(", attributes: {}", attrs.join(", "))
        }
    ));
    let ds = m.result.data_sets.first();
    let reason = ds
        .and_then(|d| d.reason.clone())
        .or_else(|| m.result.reason.clone())
        .unwrap_or_default();
    md.push_str(&format!(
        "- **Verdict**: {}: {}\n",
        m.signature.verdict(),
        reason.replace('\n', " ")
    ));
    md.push_str(&format!(
        "- **Diagnosis**: {}\n\n",
        diagnosis_words(m.signature.diagnosis)
    ));
    md.push_str("## Inputs\n\n");
    for (k, (name, t)) in s.inputs.iter().enumerate() {
        md.push_str(&format!(
            "- `{name}`: {}\n",
            tensor_text(t, &format!("test_data_set_0/input_{k}.pb"))
        ));
    }
    md.push_str("\n## Expected output (onnx-idx-check's reference)\n\n");
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
            "The spec requires an error for these inputs: {e}\n"
        )),
    }
    md.push_str(&format!("\n## Actual output ({})\n\n", info.name));
    match observed {
        Observed::Outputs(outs) => {
            for (k, t) in outs.iter().enumerate() {
                let text = t.as_ref().map_or("(no output_K.pb written)".into(), |t| {
                    tensor_text(t, "the runtime's output")
                });
                md.push_str(&format!("- `{}`: {text}\n", s.output_name(k)));
            }
        }
        Observed::Refused(msg) => md.push_str(&format!("Refused: {msg}\n")),
        Observed::Crashed(msg) => md.push_str(&format!("Crashed: {msg}\n")),
        Observed::TimedOut(d) => md.push_str(&format!("No answer within {} s.\n", d.as_secs_f64())),
        Observed::Unknown(e) => md.push_str(&format!("(could not be run again: {e})\n")),
    }
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
    md.push_str("\n## Reproduce with onnx-idx-check\n\n```sh\n");
    md.push_str(&rerun_command(dir, runtime_flag));
    md.push_str("\n```\n");
    if let Some(api) = api {
        // The reproducer reads a tensor from the case's files only when it cannot write it out.
        let reads_files = s.inputs.iter().any(|(_, t)| python::array(t).is_none())
            || matches!(&m.reference, Reference::Outputs(outs)
                if outs.iter().any(|t| python::array(t).is_none()));
        let from_here = if reads_files {
            "Run from this directory: tensors too large to write out (or of a type numpy lacks) are read from its `.pb` files.\n\n"
        } else {
            ""
        };
        md.push_str(&format!(
            "\n## Reproduce with {} (Python)\n\n{from_here}```python\n",
            match api {
                Api::OnnxRuntime => "onnxruntime",
                Api::OpenVino => "OpenVINO",
                Api::Tract => "tract",
                Api::Reference => "onnx.reference.ReferenceEvaluator",
            }
        ));
        md.push_str(&python::reproducer(s, &m.reference, api));
        md.push_str("```\n");
    }
    md
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
/// [`crate::owned`]) and emptied of an earlier minimization.
pub(crate) fn write(
    m: &Minimized,
    runtime: &Runtime,
    runtime_flag: &str,
    api: Option<Api>,
    dir: &Path,
) -> std::io::Result<()> {
    m.subject.write(dir, &m.reference)?;
    let observed = observe(runtime, dir, &m.subject);
    let md = render(m, &runtime.info(), runtime_flag, api, &observed, dir);
    crate::fsutil::write_atomic(dir, REPORT_FILE, md.as_bytes()).map_err(|e| e.source)
}
