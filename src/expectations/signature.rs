//! The failure signature of a failed case (how many elements differ, and where the first is), and
//! its text in messages.

use crate::verdict::{CaseResult, Status};
use std::fmt;

/// The failure signature of a failed case: its first failed data set's first failed output.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Signature {
    /// Differing elements (0 when the dtype or shape differs).
    pub mismatches: usize,
    /// Coordinates of the first differing element.
    pub first_mismatch: Option<Vec<usize>>,
}

impl Signature {
    /// The signature of a failed case; `None` for any other verdict. A failed case without a
    /// failed output has the signature of a dtype/shape difference: 0 mismatches, no coordinates.
    pub fn of(result: &CaseResult) -> Option<Signature> {
        if result.status != Status::Failed {
            return None;
        }
        let output = result
            .data_sets
            .iter()
            .find(|d| d.status == Status::Failed)
            .and_then(|d| d.outputs.iter().find(|o| o.status == Status::Failed));
        Some(output.map_or_else(Signature::default, |o| Signature {
            mismatches: o.mismatches,
            first_mismatch: o.first_mismatches.first().map(|m| m.index.clone()),
        }))
    }
}

impl fmt::Display for Signature {
    /// `5 mismatches first at [0,2]`, or `0 mismatches (dtype or shape differs)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.first_mismatch {
            Some(at) => write!(f, "{} first at {}", plural(self.mismatches), coords(at)),
            None if self.mismatches == 0 => write!(f, "0 mismatches (dtype or shape differs)"),
            None => write!(f, "{}", plural(self.mismatches)),
        }
    }
}

pub(super) fn plural(n: usize) -> String {
    if n == 1 {
        "1 mismatch".to_string()
    } else {
        format!("{n} mismatches")
    }
}

/// `[1,0]`, as reports print coordinates.
pub(super) fn coords(index: &[usize]) -> String {
    let parts: Vec<String> = index.iter().map(usize::to_string).collect();
    format!("[{}]", parts.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expectations::testutil::{case, failed};

    #[test]
    fn the_signature_is_the_first_failed_output_of_the_first_failed_data_set() {
        assert_eq!(
            Signature::of(&failed("f", 5, Some(&[0, 2]))),
            Some(Signature {
                mismatches: 5,
                first_mismatch: Some(vec![0, 2])
            })
        );
        assert_eq!(
            Signature::of(&failed("f", 0, None)),
            Some(Signature::default())
        );
        assert_eq!(
            Signature::of(&case("f", Status::Failed)),
            Some(Signature::default())
        );
        assert_eq!(Signature::of(&case("e", Status::Errored)), None);
    }
}
