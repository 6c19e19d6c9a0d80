//! One `[[expect]]` entry as loaded: its fields, its opset range, and what it expects of a case.

use super::pattern::literal;
use super::signature::{coords, plural, Signature};
use super::Date;
use crate::verdict::Status;
use std::fmt::Write as _;

/// The fields an entry may have, in the order [`Expectations::update`](super::Expectations::update)
/// writes them.
pub const FIELDS: [&str; 13] = [
    "case",
    "runtime",
    "status",
    "reason",
    "link",
    "until",
    "opset",
    "rtol",
    "atol",
    "mismatches",
    "first_mismatch",
    "actual_dtype",
    "actual_shape",
];

/// An opset range: (min, max), inclusive, each bound optional.
pub type OpsetRange = (Option<i64>, Option<i64>);

/// One `[[expect]]` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// A case name or a glob.
    pub case: String,
    /// The runtime under test the entry is about (`--runtime` NAME, the name a `--runtime-cmd`
    /// worker gives, `--actual` NAME=DIR); `None` for every run.
    pub runtime: Option<String>,
    /// The expected verdict (never [`Status::Passed`]); `None` for a tolerance-only entry.
    pub status: Option<Status>,
    /// Why the case does not pass.
    pub reason: String,
    /// An issue or a discussion.
    pub link: Option<String>,
    /// The last day the entry is valid.
    pub until: Option<Date>,
    /// The admitted `ai.onnx` opsets.
    pub opset: Option<OpsetRange>,
    /// Relative tolerance override.
    pub rtol: Option<f64>,
    /// Absolute tolerance override.
    pub atol: Option<f64>,
    /// Expected number of mismatches of the failure signature.
    pub mismatches: Option<usize>,
    /// Expected coordinates of the first mismatch of the failure signature.
    pub first_mismatch: Option<Vec<usize>>,
    /// The dtype of the wrong output, when the failure is a dtype or shape difference.
    pub actual_dtype: Option<String>,
    /// The shape of the wrong output, when the failure is a dtype or shape difference.
    pub actual_shape: Option<Vec<usize>>,
}

impl Entry {
    /// An entry for `case` expecting `status`, with no other field.
    pub fn new(case: String, status: Status, reason: String) -> Entry {
        Entry {
            case,
            runtime: None,
            status: Some(status),
            reason,
            link: None,
            until: None,
            opset: None,
            rtol: None,
            atol: None,
            mismatches: None,
            first_mismatch: None,
            actual_dtype: None,
            actual_shape: None,
        }
    }

    /// Whether `case` is a plain name (possibly with escaped glob characters) rather than a glob.
    pub fn is_exact(&self) -> bool {
        literal(&self.case).is_some()
    }

    /// Whether the entry's opset range admits a case whose `ai.onnx` opset is `opset`.
    pub fn admits_opset(&self, opset: Option<i64>) -> bool {
        match self.opset {
            None | Some((None, None)) => true,
            Some((min, max)) => {
                opset.is_some_and(|v| min.is_none_or(|m| v >= m) && max.is_none_or(|m| v <= m))
            }
        }
    }

    /// Whether a failure signature agrees with the entry's signature fields (absent fields agree
    /// with anything).
    pub fn signature_matches(&self, sig: &Signature) -> bool {
        self.mismatches.is_none_or(|m| m == sig.mismatches)
            && self
                .first_mismatch
                .as_ref()
                .is_none_or(|f| Some(f) == sig.first_mismatch.as_ref())
            && self
                .actual_dtype
                .as_ref()
                .is_none_or(|d| Some(d) == sig.actual_dtype.as_ref())
            && self
                .actual_shape
                .as_ref()
                .is_none_or(|s| Some(s) == sig.actual_shape.as_ref())
    }

    /// Sets the signature fields to `sig`'s (clears them for `None`).
    pub(super) fn set_signature(&mut self, sig: Option<&Signature>) {
        self.mismatches = sig.map(|s| s.mismatches);
        self.first_mismatch = sig.and_then(|s| s.first_mismatch.clone());
        self.actual_dtype = sig.and_then(|s| s.actual_dtype.clone());
        self.actual_shape = sig.and_then(|s| s.actual_shape.clone());
    }

    pub(super) fn has_tolerance(&self) -> bool {
        self.rtol.is_some() || self.atol.is_some()
    }

    /// The entry turned into a tolerance-only one.
    pub(super) fn tolerance_only(mut self) -> Entry {
        self.status = None;
        self.set_signature(None);
        self
    }

    /// What the entry expects, for messages: `failed with 3 mismatches first at [1,0]`.
    pub(super) fn expected_text(&self) -> String {
        let mut s = self.status.map_or("-", Status::as_str).to_string();
        match (&self.mismatches, &self.first_mismatch) {
            (Some(n), Some(at)) => {
                let _ = write!(s, " with {} first at {}", plural(*n), coords(at));
            }
            (Some(n), None) => {
                let _ = write!(s, " with {}", plural(*n));
            }
            (None, Some(at)) => {
                let _ = write!(s, " with the first mismatch at {}", coords(at));
            }
            (None, None) => {}
        }
        if self.actual_dtype.is_some() || self.actual_shape.is_some() {
            let dtype = self.actual_dtype.as_deref().unwrap_or("any dtype");
            let shape = self
                .actual_shape
                .as_ref()
                .map_or("any shape".to_string(), |s| {
                    crate::tensor::shape_text(s).to_string()
                });
            let _ = write!(s, " (got {dtype} {shape})");
        }
        s
    }
}
