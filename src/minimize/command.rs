//! The `minimize` subcommand: arguments -> the runtime -> [`super::minimize`] -> the written
//! case, its report and the summary -> exit status.

use super::python::Api;
use super::{report, MinimizeError, Options, Outcome};
use crate::cli::MinimizeArgs;
use crate::config::UsageError;
use crate::exit;
use anyhow::Result;
use onnx_idx_check::runtime::{Runtime, RuntimeSpec};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The runtime that `--runtime` / `--runtime-cmd` name, started, with the flag that names it
/// again in commands and the Python API its reproducer may use.
pub(crate) struct Chosen {
    /// The started runtime.
    pub runtime: Arc<Runtime>,
    /// `--runtime onnxruntime` or `--runtime-cmd '...'`, for rerun commands.
    pub flag: String,
    /// The reproducer's API (bundled adapters only).
    pub api: Option<Api>,
}

/// Starts the runtime of `--runtime` / `--runtime-cmd` with `--timeout`.
pub(crate) fn start_runtime(
    runtime: Option<&str>,
    runtime_cmd: Option<&str>,
    timeout: &str,
) -> Result<Chosen, UsageError> {
    let (spec, flag, api) = match (runtime, runtime_cmd) {
        (Some(name), _) => (
            RuntimeSpec::bundled(name),
            format!("--runtime {}", onnx_idx_check::report::shell_quote(name)),
            Api::of_bundled(name),
        ),
        (None, Some(cmd)) => (
            RuntimeSpec::command(cmd),
            format!("--runtime-cmd {}", onnx_idx_check::report::shell_quote(cmd)),
            None,
        ),
        (None, None) => {
            return Err(UsageError(
                "name the runtime under test: --runtime NAME or --runtime-cmd 'CMD ARGS'".into(),
            ))
        }
    };
    let spec = spec.map_err(|e| UsageError(e.to_string()))?;
    let limit = onnx_idx_check::deadline::parse_limit(timeout)
        .map_err(|e| UsageError(format!("--timeout: {e}")))?
        .filter(|t| !t.is_zero())
        // No limit: a day stands for it, as for `run`.
        .unwrap_or(Duration::from_secs(24 * 3600));
    let runtime = Runtime::start(&spec, limit).map_err(|e| UsageError(e.to_string()))?;
    Ok(Chosen {
        runtime: Arc::new(runtime),
        flag,
        api,
    })
}

/// The command named in the output directory's record.
const COMMAND: &str = "minimize";

/// `minimize`: 0 when a minimal case was written, 1 when the runtime does not disagree on CASE,
/// 2 for usage errors (a bad CASE, runtime or --out).
pub(crate) fn run(args: MinimizeArgs) -> Result<u8> {
    let case = args.case.clone();
    let name = std::fs::canonicalize(&case)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "case".into());
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("minimized").join(&name));
    let out_error = |e: crate::owned::OwnedError| UsageError(format!("--out: {e}"));
    // Refused before any work; nothing is removed until the minimal case is ready.
    crate::owned::check(&out, COMMAND).map_err(out_error)?;
    let chosen = start_runtime(
        args.runtime.as_deref(),
        args.runtime_cmd.as_deref(),
        &args.timeout,
    )?;
    let opts = Options {
        max_steps: args.max_steps,
        repeat: usize::try_from(args.repeat).unwrap_or(usize::MAX),
        ..Options::default()
    };
    let mut judge = super::Judge::new(chosen.runtime.clone(), opts.repeat)
        .map_err(|e| anyhow::anyhow!("creating a scratch directory: {e}"))?;
    let outcome = match super::minimize(&case, &name, &mut judge, &opts) {
        Ok(o) => o,
        Err(e @ MinimizeError::NotReproducible { .. }) => {
            eprintln!("{e}");
            return Ok(exit::CASES_FAILED);
        }
        Err(e @ MinimizeError::Io(_)) => return Err(e.into()),
        Err(e) => return Err(UsageError(e.to_string()).into()),
    };
    match outcome {
        Outcome::Agrees(result) => {
            println!(
                "{}: {} agrees with onnx-idx-check's reference ({}): nothing to minimize",
                case.display(),
                chosen.runtime.label(),
                result.status.as_str()
            );
            Ok(exit::CASES_FAILED)
        }
        Outcome::Minimized(m) => {
            let mut owned = crate::owned::OwnedDir::take(&out, COMMAND).map_err(out_error)?;
            report::write(&m, &chosen.runtime, &chosen.flag, chosen.api, &out)
                .map_err(|e| anyhow::anyhow!("writing {}: {e}", out.display()))?;
            owned.record_tree("")?;
            print!("{}", report::summary(&m, &out, &chosen.flag));
            Ok(exit::OK)
        }
    }
}
