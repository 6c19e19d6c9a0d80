//! Validated settings: what [`crate::cli`] parsed, checked and compiled once (regexes, sizes,
//! tolerances), so nothing downstream handles raw option strings.

use crate::cli::{ColorChoice, RunArgs, Selection};
use crate::compare::{Mode, Tolerance};
use crate::discover::Case;
use regex::Regex;
use std::io::IsTerminal;
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

/// `--jobs`, defaulting to the number of cores.
pub fn jobs(requested: Option<usize>) -> Result<usize, UsageError> {
    match requested {
        Some(0) => Err(UsageError("--jobs must be at least 1".into())),
        Some(n) => Ok(n),
        None => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
    }
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
