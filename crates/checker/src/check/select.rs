//! Which cases a check runs: discovery under the paths, then the name patterns (`filter`,
//! `exclude`) and the shard.

use super::CheckError;
use crate::discover::{self, Case};
use regex::Regex;
use std::path::PathBuf;

/// One shard of a stable partition of the cases (`--shard K/N`): the cases whose name hashes to
/// `k - 1` modulo `n`. Every case lands in exactly one of the `n` shards, whatever the machine,
/// the Rust version or the run, so a CI matrix of `n` jobs checks each case once.
///
/// ```
/// use onnx_idx_check::check::Shard;
///
/// let second_of_four = Shard::new(2, 4)?;
/// assert_eq!(second_of_four, "2/4".parse()?);
/// assert_eq!((second_of_four.k(), second_of_four.n()), (2, 4));
/// assert!(Shard::new(5, 4).is_err());
/// # Ok::<(), onnx_idx_check::CheckError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    k: u64,
    n: u64,
}

impl Shard {
    /// Shard `k` of `n`, with `1 <= k <= n`; anything else is [`CheckError::InvalidOption`].
    ///
    /// ```
    /// use onnx_idx_check::check::Shard;
    ///
    /// assert!(Shard::new(1, 1).is_ok());
    /// assert!(Shard::new(0, 3).is_err());
    /// ```
    pub fn new(k: u64, n: u64) -> Result<Shard, CheckError> {
        if k == 0 || n == 0 || k > n {
            return Err(bad_shard(&format!("{k}/{n}")));
        }
        Ok(Shard { k, n })
    }

    /// The shard's number, from 1.
    ///
    /// ```
    /// use onnx_idx_check::check::Shard;
    ///
    /// assert_eq!(Shard::new(3, 8)?.k(), 3);
    /// # Ok::<(), onnx_idx_check::CheckError>(())
    /// ```
    pub fn k(&self) -> u64 {
        self.k
    }

    /// The number of shards.
    ///
    /// ```
    /// use onnx_idx_check::check::Shard;
    ///
    /// assert_eq!(Shard::new(3, 8)?.n(), 8);
    /// # Ok::<(), onnx_idx_check::CheckError>(())
    /// ```
    pub fn n(&self) -> u64 {
        self.n
    }

    /// Whether the case named `name` belongs to this shard. FNV-1a keeps the partition stable
    /// across platforms, Rust versions and runs (std's hasher is randomly seeded).
    ///
    /// ```
    /// use onnx_idx_check::check::Shard;
    ///
    /// // Every name is in exactly one shard of a partition.
    /// let shards: Vec<Shard> = (1..=4).map(|k| Shard::new(k, 4)).collect::<Result<_, _>>()?;
    /// for name in ["test_gather_0", "test_scatternd", "a/b/c"] {
    ///     assert_eq!(shards.iter().filter(|s| s.contains(name)).count(), 1);
    /// }
    /// # Ok::<(), onnx_idx_check::CheckError>(())
    /// ```
    pub fn contains(&self, name: &str) -> bool {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in name.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        h % self.n == self.k - 1
    }
}

impl std::str::FromStr for Shard {
    type Err = CheckError;

    /// Parses `K/N`, as `--shard` takes it.
    fn from_str(s: &str) -> Result<Shard, CheckError> {
        let (k, n) = s.split_once('/').ok_or_else(|| bad_shard(s))?;
        match (k.trim().parse(), n.trim().parse()) {
            (Ok(k), Ok(n)) => Shard::new(k, n).map_err(|_| bad_shard(s)),
            _ => Err(bad_shard(s)),
        }
    }
}

fn bad_shard(given: &str) -> CheckError {
    CheckError::invalid(
        "shard",
        format!("--shard '{given}': expected K/N with 1 <= K <= N, e.g. 2/4"),
    )
}

/// Compiled `filter` / `exclude` patterns and the shard.
#[derive(Debug, Default)]
pub struct CaseFilter {
    include: Vec<Regex>,
    exclude: Vec<Regex>,
    shard: Option<Shard>,
}

impl CaseFilter {
    /// Compiles the patterns; a bad one is [`CheckError::InvalidOption`] naming it.
    pub fn new(
        filter: &[String],
        exclude: &[String],
        shard: Option<Shard>,
    ) -> Result<CaseFilter, CheckError> {
        let compile = |flag: &'static str, patterns: &[String]| {
            patterns
                .iter()
                .map(|p| {
                    Regex::new(p)
                        .map_err(|e| CheckError::invalid(flag, format!("--{flag} '{p}': {e}")))
                })
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(CaseFilter {
            include: compile("filter", filter)?,
            exclude: compile("exclude", exclude)?,
            shard,
        })
    }

    /// Whether a case falls in the selected shard (every case without one).
    fn in_shard(&self, case: &Case) -> bool {
        self.shard.is_none_or(|s| s.contains(&case.name))
    }

    /// Whether a case is selected by the patterns.
    fn matches(&self, case: &Case) -> bool {
        (self.include.is_empty() || self.include.iter().any(|r| r.is_match(&case.name)))
            && !self.exclude.iter().any(|r| r.is_match(&case.name))
    }
}

/// The cases a check runs, and what discovery saw on the way.
#[derive(Debug)]
pub struct Selected {
    /// The selected cases of this shard, sorted by path.
    pub cases: Vec<Case>,
    /// The names of every case found before the patterns and the shard (expectations entries
    /// for cases left out are not "unmatched").
    pub names: Vec<String>,
    /// Directories or entries discovery could not read (it went on without them).
    pub warnings: Vec<String>,
}

/// Discovers the cases under `paths` and selects them; no case at all is
/// [`CheckError::NoCase`]. An empty shard is not an error: a CI matrix may have more shards than
/// cases.
pub fn select(paths: &[PathBuf], filter: &CaseFilter) -> Result<Selected, CheckError> {
    let found = discover::discover(paths)?;
    let mut dirs_of: std::collections::BTreeMap<&str, Vec<PathBuf>> = Default::default();
    for c in &found.cases {
        dirs_of.entry(&c.name).or_default().push(c.dir.clone());
    }
    if let Some((name, dirs)) = dirs_of.into_iter().find(|(_, dirs)| dirs.len() > 1) {
        return Err(CheckError::DuplicateName {
            name: name.to_string(),
            dirs,
        });
    }
    let names: Vec<String> = found.cases.iter().map(|c| c.name.clone()).collect();
    let cases: Vec<Case> = found
        .cases
        .into_iter()
        .filter(|c| filter.matches(c))
        .collect();
    if cases.is_empty() {
        return Err(CheckError::NoCase {
            paths: paths.to_vec(),
            found: names.len(),
            symlinks_not_followed: found.symlinks_not_followed,
            warnings: found.warnings,
        });
    }
    Ok(Selected {
        cases: cases.into_iter().filter(|c| filter.in_shard(c)).collect(),
        names,
        warnings: found.warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_cases_exactly_once() {
        let shards: Vec<Shard> = (1..=3).map(|k| Shard::new(k, 3).unwrap()).collect();
        for i in 0..200 {
            let name = format!("onnx-node/test_case_{i}");
            assert_eq!(
                shards.iter().filter(|s| s.contains(&name)).count(),
                1,
                "{name}"
            );
        }
        // The hash is fixed: this assignment must never change between versions.
        let half = |k| Shard::new(k, 2).unwrap();
        assert!(half(1).contains("a") != half(2).contains("a"));
        assert!(Shard::new(1, 1).unwrap().contains("anything"));
    }

    #[test]
    fn a_shard_is_k_of_n_with_1_le_k_le_n() {
        assert_eq!(
            " 2 / 4".parse::<Shard>().unwrap(),
            Shard::new(2, 4).unwrap()
        );
        for bad in ["0/3", "4/3", "1/0", "x/2", "3", "-1/2", ""] {
            let e = bad.parse::<Shard>().unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("--shard '{bad}': expected K/N with 1 <= K <= N, e.g. 2/4")
            );
            assert!(matches!(
                e,
                CheckError::InvalidOption {
                    option: "shard",
                    ..
                }
            ));
        }
        assert!(Shard::new(0, 0).is_err());
    }

    #[test]
    fn a_bad_pattern_is_named_with_its_flag() {
        let e = CaseFilter::new(&[], &["[z-a]".into()], None).unwrap_err();
        assert!(e.to_string().starts_with("--exclude '[z-a]': "), "{e}");
        assert!(matches!(
            e,
            CheckError::InvalidOption {
                option: "exclude",
                ..
            }
        ));
    }
}
