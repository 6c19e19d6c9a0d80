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

/// Compiled `--filter` / `--exclude`.
#[derive(Debug, Default)]
pub struct CaseFilter {
    include: Vec<Regex>,
    exclude: Vec<Regex>,
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
        })
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
