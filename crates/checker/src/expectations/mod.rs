//! Expectations files: the known failures of a run, ratcheted (`run --expectations FILE`).
//!
//! A CI pipeline lists the cases it knows to fail, error or be skipped, each with a reason. A
//! listed case that still ends as listed does not fail the gate; one that passes now, or ends
//! differently, does, so the list can only shrink. Entries may carry an expiry date, an opset
//! range and per-case tolerances; an entry without `status` only overrides tolerances.
//!
//! ```toml
//! # onnx-idx-check expectations: known failures, ratcheted
//! [[expect]]
//! case = "onnx-node/test_scatternd_*"   # a case name or a glob (`*` does not cross `/`, `**` does)
//! status = "failed"                     # failed | errored | skipped; omit it for a tolerance-only entry
//! reason = "tract#1234: ScatterND add not implemented"   # required, non-empty
//! link = "https://github.com/sonos/tract/issues/1234"    # optional
//! until = 2027-03-31                    # optional TOML date (or "2027-03-31"): after it the entry fails the run
//! opset = { min = 13, max = 17 }        # optional: only cases whose ai.onnx opset is in range (both bounds optional, inclusive)
//! rtol = 1e-2                           # optional per-case tolerance override
//! atol = 1e-5
//! mismatches = 3                        # optional failure signature (status = "failed" only)
//! first_mismatch = [1, 0]               # optional: coordinates of the first mismatched element
//!
//! [[expect]]                            # a tolerance-only entry: no status, the verdict stands
//! case = "spec-examples/**"
//! reason = "float16 reductions round differently in our runtime"
//! rtol = 5e-3
//! ```
//!
//! Fields:
//!
//! - `case` (required): a case name (the path relative to the `run` argument, with `/`), or a
//!   glob: `*`, `?`, `[abc]`, `{a,b}`; `*` does not cross `/`, `**` as a whole path component
//!   does (`onnx-node/**`, `**/test_gather_*`); `\` escapes the next character.
//! - `status`: `failed`, `errored` or `skipped` (`passed` is not an expectation: delete the entry).
//!   Without it the entry only overrides tolerances.
//! - `reason` (required, non-empty) and `link`: for people; reports show them.
//! - `until`: the last day (UTC) the entry is valid; from the next day on the run fails until the
//!   entry is renewed or removed.
//! - `opset`: the entry applies only to cases whose `ai.onnx` opset import lies in `[min, max]`
//!   (a bound left out is open). A case without an `ai.onnx` import is outside any range that has
//!   a bound.
//! - `rtol`, `atol`: finite numbers >= 0 replacing `--rtol` / `--atol` for the matching cases.
//! - `mismatches`, `first_mismatch`: the failure signature of a `failed` case, from its first
//!   failed data set's first failed output: the number of differing elements and the coordinates
//!   of the first one (a dtype or shape difference has 0 mismatches and no coordinates). Each is
//!   compared only when present.
//!
//! Which entry applies to a case: among the entries whose pattern matches the case's name and
//! whose opset range admits it, an entry with a `status` wins over tolerance-only entries, an
//! exact name wins over a glob, and otherwise the first in the file wins. Each of `rtol` and
//! `atol` comes from the first matching entry (exact names first, then file order) that sets it.
//!
//! `run --update-expectations` rewrites the file with [`Expectations::update`]: entries kept in
//! their order (new ones last, so precedence among globs holds) with their reasons, links,
//! dates, opset ranges and tolerances; new non-passing cases added with `reason = "TODO"`;
//! entries of cases that pass now, and entries that match no case, removed. Comments are not
//! kept.

// The parts: `parse` reads a file into entries (`entry`, `date`) and their matchers (`pattern`);
// `lookup` picks the entry that applies to a case; `judge` and `update` build on it, and `update`
// writes its result with `render`. `signature` is shared by judging and updating.
mod date;
mod entry;
mod judge;
mod lookup;
mod parse;
mod pattern;
mod render;
mod signature;
#[cfg(test)]
pub(crate) mod testutil;
mod update;

pub use date::{Date, DateError};
pub use entry::Entry;
pub use judge::{Judgement, Outcome};
pub use parse::ExpectationsError;
pub use render::render_with_header;
pub use signature::Signature;

use pattern::Matcher;
use std::path::{Path, PathBuf};

/// A loaded expectations file.
#[derive(Clone, Debug)]
pub struct Expectations {
    path: PathBuf,
    entries: Vec<Entry>,
    matchers: Vec<Matcher>,
    /// The line of each entry's `[[expect]]` in the file, from 1 (empty for entries not read
    /// from a file).
    lines: Vec<usize>,
}

impl Expectations {
    /// The file the expectations came from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The entries, in file order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The line of entry `i` in the file, from 1, for pointing at it (GitHub annotations).
    pub fn line(&self, i: usize) -> Option<usize> {
        self.lines.get(i).copied()
    }

    /// The entries that apply to a run of the runtime under test known by any of `names` (none
    /// for onnx-idx-check's own run, or an unnamed `--actual DIR`): those without `runtime`,
    /// and those whose `runtime` is one of the names. The others are left out, as if the file
    /// did not hold them; with the names of the runtimes they name.
    pub(crate) fn for_runtime(self, names: &[String]) -> (Expectations, Vec<String>) {
        let mut kept = Expectations {
            path: self.path,
            entries: Vec::new(),
            matchers: Vec::new(),
            lines: Vec::new(),
        };
        let mut others = Vec::new();
        let lines = self
            .lines
            .into_iter()
            .map(Some)
            .chain(std::iter::repeat(None));
        for ((e, m), line) in self.entries.into_iter().zip(self.matchers).zip(lines) {
            match &e.runtime {
                Some(r) if !names.contains(r) => {
                    if !others.contains(r) {
                        others.push(r.clone());
                    }
                }
                _ => {
                    kept.entries.push(e);
                    kept.matchers.push(m);
                    kept.lines.extend(line);
                }
            }
        }
        (kept, others)
    }
}
