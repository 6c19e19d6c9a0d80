//! Validated settings: what [`crate::cli`] parsed, checked and compiled once (regexes, sizes,
//! tolerances), so nothing downstream handles raw option strings.

use crate::cli::{ColorChoice, Format, RunArgs};
use clap::ValueEnum;
use onnx_idx_check::check::{CheckError, CheckOptions, Shard};
use onnx_idx_check::compare::{Mode, Tolerance};
use onnx_idx_check::report::Dest;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// An argument that cannot be used (exit status 2).
#[derive(Debug, Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// A [`CheckError`] as the command line reports it: what the library refuses of the arguments
/// (or of the paths) is a usage error with the same message; every error exits 2.
pub fn usage(e: CheckError) -> anyhow::Error {
    match e {
        CheckError::WriteExpectations { .. } | CheckError::UpdatedExpectations { .. } => {
            anyhow::Error::msg(e.to_string())
        }
        _ => UsageError(e.to_string()).into(),
    }
}

/// `--shard K/N`.
pub fn shard(given: Option<&str>) -> Result<Option<Shard>, UsageError> {
    given
        .map(str::parse)
        .transpose()
        .map_err(|e: CheckError| UsageError(e.to_string()))
}

/// The options of `run` that the library's [`onnx_idx_check::check()`] takes, parsed from their strings;
/// the check validates them. The JSON and JUnit reports state the digest of every file judged.
pub fn check_options(args: &RunArgs, reports: &[ReportSpec]) -> Result<CheckOptions, UsageError> {
    let sel = &args.selection;
    // `CheckOptions` is non-exhaustive: start from its defaults and set what `run` decides.
    let mut o = CheckOptions::default();
    o.tolerance = tolerance(args);
    o.max_tensor_bytes = parse_bytes(&args.max_tensor_bytes)?;
    o.repeat = args.repeat;
    o.batch = args.batch;
    o.pending = args.pending.clone();
    o.expectations = args.expectations.clone();
    o.update_expectations = args.update_expectations;
    o.strict_expectations = args.strict_expectations;
    o.timeout = onnx_idx_check::deadline::parse_limit(&args.timeout)
        .map_err(|e| UsageError(format!("--timeout: {e}")))?;
    o.jobs = args.jobs;
    o.filter = sel.filter.clone();
    o.exclude = sel.exclude.clone();
    o.shard = shard(sel.shard.as_deref())?;
    o.fail_fast = args.fail_fast;
    o.deny_skip = args.deny_skip;
    o.min_cases = args.min_cases;
    o.require_ops = args.require_op.clone();
    o.digests = reports
        .iter()
        .any(|r| matches!(r.format, Format::Json | Format::Junit));
    // The scoreboard's grid by trait counts every case, whatever its verdict.
    if reports.iter().any(|r| r.format == Format::Html) {
        o.traits = onnx_idx_check::runner::Traits::Every;
    }
    Ok(o)
}

/// One runtime under test of `run`: its outputs in a tree (`--actual [NAME=]DIR`), a bundled
/// adapter (`--runtime`) or a command (`--runtime-cmd`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// `--actual`: the name (the directory as given, without NAME=) and the directory.
    Actual(String, PathBuf),
    /// `--runtime SPEC`.
    Runtime(String),
    /// `--runtime-cmd CMD`.
    Command(String),
}

impl Source {
    /// Sets this source on `o`, the check's options without one.
    pub fn apply(&self, o: &mut CheckOptions) {
        match self {
            Source::Actual(name, dir) => {
                o.actual = Some(dir.clone());
                o.runtime_name = Some(name.clone());
            }
            Source::Runtime(spec) => o.runtime = Some(spec.clone()),
            Source::Command(cmd) => o.runtime_cmd = Some(cmd.clone()),
        }
    }
}

/// Every runtime under test `run` names, in the order: `--actual`, `--runtime`, `--runtime-cmd`.
/// An `--actual` value is `NAME=DIR` unless it names an existing directory as a whole.
pub fn sources(args: &RunArgs) -> Vec<Source> {
    let actual = args.actual.iter().map(|a| match a.split_once('=') {
        Some((name, dir)) if !Path::new(a).is_dir() && !name.is_empty() => {
            Source::Actual(name.to_string(), PathBuf::from(dir))
        }
        _ => Source::Actual(a.clone(), PathBuf::from(a)),
    });
    actual
        .chain(args.runtime.iter().cloned().map(Source::Runtime))
        .chain(args.runtime_cmd.iter().cloned().map(Source::Command))
        .collect()
}

/// Parses `--max-tensor-bytes`: `4096`, `64K`, `512MiB`, `4G`, `4GiB`, `1TiB` (K/M/G/T and
/// KiB/MiB/GiB/TiB are all powers of 1024).
pub fn parse_bytes(s: &str) -> Result<usize, UsageError> {
    match parse_size(s) {
        // Unlike `--timeout 0` (no limit), zero bytes would refuse every tensor but the empty.
        Ok(0) => Err(UsageError(format!(
            "--max-tensor-bytes: '{s}' would refuse every non-empty tensor; give a positive size \
             (e.g. 512MiB)"
        ))),
        Ok(n) => Ok(n),
        Err(e) => Err(UsageError(format!("--max-tensor-bytes: {e}"))),
    }
}

fn parse_size(s: &str) -> Result<usize, UsageError> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, suffix) = t.split_at(split);
    let shift = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => {
            return Err(UsageError(format!(
                "'{s}' is not a byte size (e.g. 4096, 512MiB, 4GiB)"
            )))
        }
    };
    if digits.is_empty() {
        return Err(UsageError(format!(
            "'{s}' is not a byte size (e.g. 4096, 512MiB, 4GiB)"
        )));
    }
    // Only digits are left, so a parse error is an overflow.
    let n: u64 = digits
        .parse()
        .map_err(|_| UsageError(format!("'{s}' is too large")))?;
    n.checked_mul(1u64 << shift)
        .and_then(|b| usize::try_from(b).ok())
        .ok_or_else(|| UsageError(format!("'{s}' is too large")))
}

/// The tolerance rules of `run` (checked by [`onnx_idx_check::check()`]).
pub fn tolerance(args: &RunArgs) -> Tolerance {
    let mode = if args.exact {
        Mode::Exact
    } else if args.tolerant {
        Mode::Tolerant
    } else {
        Mode::Default
    };
    Tolerance {
        rtol: args.rtol,
        atol: args.atol,
        mode,
    }
}

/// Whether to colour output written to stdout.
pub fn use_color(choice: ColorChoice) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stdout().is_terminal()
        }
    }
}

/// `--jobs`, defaulting to the number of cores and bounded as [`onnx_idx_check::check()`] bounds it.
pub fn jobs(requested: Option<usize>) -> Result<usize, UsageError> {
    onnx_idx_check::check::jobs(requested).map_err(|e| UsageError(e.to_string()))
}

/// Where one `--report` goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportSpec {
    /// The format.
    pub format: Format,
    /// Its destination.
    pub dest: Dest,
}

/// Parses `--report FORMAT=FILE` (`-` for stdout).
pub fn report_spec(s: &str) -> Result<ReportSpec, UsageError> {
    let bad = |why: &str| UsageError(format!("--report '{s}': {why}"));
    let (format, file) = s
        .split_once('=')
        .ok_or_else(|| bad("expected FORMAT=FILE, e.g. junit=report.xml or markdown=-"))?;
    let format = Format::from_str(format, true).map_err(|_| {
        bad(&format!(
            "unknown format '{format}' (one of human, json, junit, markdown, html)"
        ))
    })?;
    let dest = match file {
        "" => return Err(bad("no FILE after '=' (a path, or - for stdout)")),
        "-" if format == Format::Human => {
            return Err(bad(
                "the human report goes to stdout already; give a FILE for a copy",
            ))
        }
        "-" => Dest::Stdout,
        path => Dest::File(PathBuf::from(path)),
    };
    Ok(ReportSpec { format, dest })
}

/// Every report of `run`: the one of `--format` / `--output` first, then each `--report`.
/// At most one may take stdout, and no two may write the same file. Returns them and whether the
/// human output on the terminal streams to stdout (it does unless a report takes stdout, or
/// `--format human --output FILE` sends it to a file, as it always has).
pub fn reports(args: &RunArgs) -> Result<(Vec<ReportSpec>, bool), UsageError> {
    let primary = ReportSpec {
        format: args.format,
        dest: args.output.clone().map_or(Dest::Stdout, Dest::File),
    };
    let mut specs = Vec::new();
    let terminal = match &primary.dest {
        // Plain `--format human` is the terminal output itself.
        Dest::Stdout if primary.format == Format::Human => true,
        _ => {
            specs.push(primary.clone());
            primary.format != Format::Human
        }
    };
    for r in &args.report {
        specs.push(report_spec(r)?);
    }
    let name = |spec: &ReportSpec| match (&spec.dest, spec == &primary) {
        (Dest::Stdout, true) => format!("--format {}", format_name(spec.format)),
        (Dest::Stdout, false) => format!("--report {}=-", format_name(spec.format)),
        (Dest::File(p), true) => format!("--output {}", p.display()),
        (Dest::File(p), false) => format!("--report {}={}", format_name(spec.format), p.display()),
    };
    let on_stdout: Vec<&ReportSpec> = specs.iter().filter(|s| s.dest == Dest::Stdout).collect();
    if let [first, second, ..] = on_stdout.as_slice() {
        return Err(UsageError(format!(
            "{} and {} would both write to stdout: send one to a file",
            name(first),
            name(second)
        )));
    }
    for (i, a) in specs.iter().enumerate() {
        if let Some(b) = specs[i + 1..]
            .iter()
            .find(|b| matches!(&b.dest, Dest::File(_)) && b.dest == a.dest)
        {
            return Err(UsageError(format!(
                "{} and {} would write the same file",
                name(a),
                name(b)
            )));
        }
    }
    let terminal = terminal && on_stdout.is_empty();
    Ok((specs, terminal))
}

/// The name of a format as the command line spells it.
pub fn format_name(f: Format) -> &'static str {
    match f {
        Format::Human => "human",
        Format::Json => "json",
        Format::Junit => "junit",
        Format::Markdown => "markdown",
        Format::Html => "html",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_specs_name_a_format_and_a_file_or_stdout() {
        let spec = report_spec("junit=out/j.xml").unwrap();
        assert_eq!(spec.format, Format::Junit);
        assert_eq!(spec.dest, Dest::File(PathBuf::from("out/j.xml")));
        assert_eq!(report_spec("markdown=-").unwrap().dest, Dest::Stdout);
        // A file name may hold '='.
        assert_eq!(
            report_spec("json=a=b.json").unwrap().dest,
            Dest::File(PathBuf::from("a=b.json"))
        );
        for bad in ["junit", "xml=a", "json=", "human=-", "=a"] {
            assert!(report_spec(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn byte_sizes_take_binary_suffixes() {
        assert_eq!(parse_bytes("4096").unwrap(), 4096);
        assert_eq!(parse_bytes("64K").unwrap(), 64 << 10);
        assert_eq!(parse_bytes("512MiB").unwrap(), 512 << 20);
        assert_eq!(parse_bytes("4GiB").unwrap(), 4 << 30);
        assert!(parse_bytes("4XB").is_err());
        assert!(parse_bytes("").is_err());
        assert!(parse_bytes("99999999999999999999").is_err());
    }
}
