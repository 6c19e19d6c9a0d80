//! Validated settings: what [`crate::cli`] parsed, checked and compiled once (regexes, sizes,
//! tolerances), so nothing downstream handles raw option strings.

use crate::cli::{ColorChoice, Format, RunArgs, Selection};
use crate::compare::{Mode, Tolerance};
use crate::discover::Case;
use crate::report::Dest;
use crate::verdict::{RequiredOp, Requirements};
use clap::ValueEnum;
use regex::Regex;
use std::io::IsTerminal;
use std::path::PathBuf;
use thiserror::Error;

/// An argument that cannot be used (exit status 2).
#[derive(Debug, Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Compiled `--filter` / `--exclude` / `--shard`.
#[derive(Debug, Default)]
pub struct CaseFilter {
    include: Vec<Regex>,
    exclude: Vec<Regex>,
    shard: Option<Shard>,
}

/// `--shard K/N`: this run takes the cases whose name hashes to `k - 1` modulo `n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// 1-based shard number.
    pub k: u64,
    /// Number of shards.
    pub n: u64,
}

impl Shard {
    /// Parses `K/N`.
    pub fn parse(s: &str) -> Result<Shard, UsageError> {
        let bad = || {
            UsageError(format!(
                "--shard '{s}': expected K/N with 1 <= K <= N, e.g. 2/4"
            ))
        };
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (k, n): (u64, u64) = (
            k.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if k == 0 || n == 0 || k > n {
            return Err(bad());
        }
        Ok(Shard { k, n })
    }

    /// Whether the case named `name` belongs to this shard. FNV-1a keeps the partition stable
    /// across platforms, Rust versions and runs (std's hasher is randomly seeded).
    pub fn contains(&self, name: &str) -> bool {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in name.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        h % self.n == self.k - 1
    }
}

impl CaseFilter {
    /// Compiles the selection's patterns.
    pub fn new(sel: &Selection) -> Result<CaseFilter, UsageError> {
        let compile = |flag: &str, patterns: &[String]| {
            patterns
                .iter()
                .map(|p| Regex::new(p).map_err(|e| UsageError(format!("--{flag} '{p}': {e}"))))
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(CaseFilter {
            include: compile("filter", &sel.filter)?,
            exclude: compile("exclude", &sel.exclude)?,
            shard: sel.shard.as_deref().map(Shard::parse).transpose()?,
        })
    }

    /// Whether a case falls in the selected shard (every case without `--shard`).
    pub fn in_shard(&self, case: &Case) -> bool {
        self.shard.is_none_or(|s| s.contains(&case.name))
    }

    /// Whether a case is selected.
    pub fn matches(&self, case: &Case) -> bool {
        (self.include.is_empty() || self.include.iter().any(|r| r.is_match(&case.name)))
            && !self.exclude.iter().any(|r| r.is_match(&case.name))
    }
}

/// Parses `--max-tensor-bytes`: `4096`, `64K`, `512MiB`, `4G`, `4GiB`, `1TiB` (K/M/G/T and
/// KiB/MiB/GiB/TiB are all powers of 1024).
pub fn parse_bytes(s: &str) -> Result<usize, UsageError> {
    parse_size(s).map_err(|e| UsageError(format!("--max-tensor-bytes: {e}")))
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
    let n: u64 = digits.parse().map_err(|_| {
        UsageError(format!(
            "'{s}' is not a byte size (e.g. 4096, 512MiB, 4GiB)"
        ))
    })?;
    n.checked_mul(1u64 << shift)
        .and_then(|b| usize::try_from(b).ok())
        .ok_or_else(|| UsageError(format!("'{s}' is too large")))
}

/// The tolerance rules of `run`.
pub fn tolerance(args: &RunArgs) -> Result<Tolerance, UsageError> {
    for (flag, v) in [("rtol", args.rtol), ("atol", args.atol)] {
        if !v.is_finite() || v < 0.0 {
            return Err(UsageError(format!(
                "--{flag} must be a finite number >= 0, got {v}"
            )));
        }
    }
    let mode = if args.exact {
        Mode::Exact
    } else if args.tolerant {
        Mode::Tolerant
    } else {
        Mode::Default
    };
    Ok(Tolerance {
        rtol: args.rtol,
        atol: args.atol,
        mode,
    })
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

/// `--jobs`, defaulting to the number of cores. Cases are CPU-bound, so threads beyond the cores
/// add only memory and contention: more than [`max_jobs`] is refused (`--jobs 100000` once
/// started 14,592 threads).
pub fn jobs(requested: Option<usize>) -> Result<usize, UsageError> {
    let cores = cores();
    match requested {
        Some(0) => Err(UsageError("--jobs must be at least 1".into())),
        Some(n) if n > max_jobs(cores) => Err(UsageError(format!(
            "--jobs {n}: at most {} (4 x the {cores} available cores, but at least {} and at \
             most {}): cases are CPU-bound, more threads only add memory and contention",
            max_jobs(cores),
            MIN_JOBS_CAP,
            MAX_JOBS_CAP
        ))),
        Some(n) => Ok(n),
        None => Ok(cores),
    }
}

/// The cores this process may use.
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The largest `--jobs` never refused, whatever the machine.
pub const MIN_JOBS_CAP: usize = 16;

/// The largest `--jobs` accepted on any machine.
pub const MAX_JOBS_CAP: usize = 1024;

/// The largest `--jobs` accepted with `cores` cores: 4 per core, within
/// [`MIN_JOBS_CAP`]..=[`MAX_JOBS_CAP`].
pub fn max_jobs(cores: usize) -> usize {
    cores.saturating_mul(4).clamp(MIN_JOBS_CAP, MAX_JOBS_CAP)
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
            "unknown format '{format}' (one of human, json, junit, markdown)"
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
    }
}

/// `--min-cases` and `--require-op`, the operators checked against the registry.
pub fn requirements(args: &RunArgs) -> Result<Requirements, UsageError> {
    Ok(Requirements {
        min_cases: args.min_cases,
        ops: args
            .require_op
            .iter()
            .map(|s| required_op(s))
            .collect::<Result<_, _>>()?,
    })
}

/// Parses one `--require-op OP[-VERSION]`: `ScatterElements`, `GatherND-12`,
/// `com.microsoft.GatherGrad-1` (the domain as the per-operator summary spells it; `ai.onnx.` may
/// be given for the default domain). An operator the registry does not know, or a version it does
/// not have, is refused.
pub fn required_op(given: &str) -> Result<RequiredOp, UsageError> {
    // Every operator version as reports name it, split into (operator, since_version).
    let known: Vec<(String, i64)> = crate::ops::REGISTRY
        .iter()
        .filter(|def| !def.plumbing)
        .flat_map(|def| {
            def.versions
                .iter()
                .map(move |v| (def.version_name(v), v.since))
        })
        .filter_map(|(name, since)| Some((name.rsplit_once('-')?.0.to_string(), since)))
        .collect();
    let (name, version) = match given.rsplit_once('-') {
        Some((op, v)) if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) => (
            op,
            Some(
                v.parse::<i64>()
                    .map_err(|_| bad_op(given, "version too large"))?,
            ),
        ),
        _ => (given, None),
    };
    let name = name.strip_prefix("ai.onnx.").unwrap_or(name);
    let versions: Vec<i64> = known
        .iter()
        .filter(|(op, _)| op == name)
        .map(|(_, since)| *since)
        .collect();
    if versions.is_empty() {
        let mut ops: Vec<&str> = known.iter().map(|(op, _)| op.as_str()).collect();
        ops.dedup();
        return Err(bad_op(
            given,
            &format!(
                "no such operator in the registry (known: {})",
                ops.join(", ")
            ),
        ));
    }
    if let Some(v) = version.filter(|v| !versions.contains(v)) {
        let listed: Vec<String> = versions.iter().map(i64::to_string).collect();
        return Err(bad_op(
            given,
            &format!(
                "{name} has no version {v} (its versions, by since_version: {})",
                listed.join(", ")
            ),
        ));
    }
    Ok(RequiredOp {
        given: given.to_string(),
        op: name.to_string(),
        version,
    })
}

fn bad_op(given: &str, why: &str) -> UsageError {
    UsageError(format!("--require-op '{given}': {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_cases_exactly_once() {
        let shards: Vec<Shard> = (1..=3)
            .map(|k| Shard::parse(&format!("{k}/3")).unwrap())
            .collect();
        for i in 0..200 {
            let name = format!("onnx-node/test_case_{i}");
            assert_eq!(
                shards.iter().filter(|s| s.contains(&name)).count(),
                1,
                "{name}"
            );
        }
        // The hash is fixed: this assignment must never change between versions.
        assert!(
            Shard::parse("1/2").unwrap().contains("a")
                != Shard::parse("2/2").unwrap().contains("a")
        );
        assert!(Shard { k: 1, n: 1 }.contains("anything"));
        for bad in ["0/3", "4/3", "1/0", "x/2", "3"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn jobs_are_bounded_by_four_per_core_within_16_and_1024() {
        assert_eq!(max_jobs(1), 16);
        assert_eq!(max_jobs(2), 16);
        assert_eq!(max_jobs(8), 32);
        assert_eq!(max_jobs(1000), 1024);
        assert_eq!(max_jobs(usize::MAX), 1024);
        assert_eq!(jobs(Some(16)).unwrap(), 16);
        assert!(jobs(Some(1025)).is_err());
        assert!(jobs(Some(0)).is_err());
    }

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
    fn required_ops_are_checked_against_the_registry() {
        let r = required_op("GatherND-12").unwrap();
        assert_eq!((r.op.as_str(), r.version), ("GatherND", Some(12)));
        assert!(r.matches("GatherND-12") && !r.matches("GatherND-13"));
        let r = required_op("ScatterElements").unwrap();
        assert_eq!(r.version, None);
        assert!(r.matches("ScatterElements-18") && !r.matches("ScatterND-18"));
        let r = required_op("com.microsoft.GatherGrad-1").unwrap();
        assert!(r.matches("com.microsoft.GatherGrad-1") && !r.matches("GatherGrad-1"));
        assert_eq!(required_op("ai.onnx.Gather-13").unwrap().op, "Gather");
        // The bare name is the default domain's operator, not OpenVINO's.
        assert!(!required_op("Gather")
            .unwrap()
            .matches("org.openvinotoolkit.Gather-8"));
        for bad in [
            "Gathr",
            "Gather-12",
            "GatherGrad-1",
            "Constant",
            "",
            "Gather-",
        ] {
            assert!(required_op(bad).is_err(), "{bad}");
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
