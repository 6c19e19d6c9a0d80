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
    /// The wrong output's dtype, when no element was compared (its dtype or shape differs, or
    /// the spec requires an error): then the signature is what the output was instead.
    pub actual_dtype: Option<String>,
    /// The wrong output's shape, under the same condition.
    pub actual_shape: Option<Vec<usize>>,
}

impl Signature {
    /// The signature of a failed case; `None` for any other verdict. A failed case without a
    /// failed output has the signature of a dtype/shape difference: 0 mismatches, no coordinates
    /// and no dtype or shape.
    pub fn of(result: &CaseResult) -> Option<Signature> {
        if result.status != Status::Failed {
            return None;
        }
        let output = result
            .data_sets
            .iter()
            .find(|d| d.status == Status::Failed)
            .and_then(|d| d.outputs.iter().find(|o| o.status == Status::Failed));
        Some(output.map_or_else(Signature::default, |o| {
            // Nothing compared element by element: what the output was is the signature.
            let whole = o.mismatches == 0 && o.first_mismatches.is_empty();
            Signature {
                mismatches: o.mismatches,
                first_mismatch: o.first_mismatches.first().map(|m| m.index.clone()),
                actual_dtype: whole.then(|| o.actual_dtype.to_string()),
                actual_shape: whole.then(|| o.actual_shape.clone()),
            }
        }))
    }
}

impl fmt::Display for Signature {
    /// `5 mismatches first at [0,2]`, `0 mismatches (got float [2, 3])`, or `0 mismatches
    /// (dtype or shape differs)` when the output is not known.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.first_mismatch, &self.actual_dtype, &self.actual_shape) {
            (Some(at), _, _) => write!(f, "{} first at {}", plural(self.mismatches), coords(at)),
            (None, Some(dtype), Some(shape)) if self.mismatches == 0 => {
                write!(
                    f,
                    "0 mismatches (got {dtype} {})",
                    crate::tensor::shape_text(shape)
                )
            }
            (None, ..) if self.mismatches == 0 => {
                write!(f, "0 mismatches (dtype or shape differs)")
            }
            (None, ..) => write!(f, "{}", plural(self.mismatches)),
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
                first_mismatch: Some(vec![0, 2]),
                ..Signature::default()
            })
        );
        // Nothing compared element by element: the output's dtype and shape are the signature.
        assert_eq!(
            Signature::of(&failed("f", 0, None)),
            Some(Signature {
                actual_dtype: Some("float".to_string()),
                actual_shape: Some(vec![3, 2]),
                ..Signature::default()
            })
        );
        assert_eq!(
            Signature::of(&case("f", Status::Failed)),
            Some(Signature::default())
        );
        assert_eq!(Signature::of(&case("e", Status::Errored)), None);
    }

    #[test]
    fn report_7_a_shape_failure_that_changes_to_another_wrong_shape_is_another_signature() {
        let mut r = failed("f", 0, None);
        r.data_sets[1].outputs[1].actual_shape = vec![2, 3];
        let sig = Signature::of(&r).unwrap();
        assert_eq!(sig.to_string(), "0 mismatches (got float [2, 3])");
        let entry = |extra: &str| {
            crate::expectations::testutil::parse(&format!(
                "[[expect]]\ncase = \"f\"\nstatus = \"failed\"\nreason = \"r\"\nmismatches = 0\n{extra}"
            ))
            .entries()[0]
                .clone()
        };
        assert!(entry("actual_dtype = \"float\"\nactual_shape = [2, 3]\n").signature_matches(&sig));
        assert!(!entry("actual_dtype = \"float\"\nactual_shape = [3, 2]\n").signature_matches(&sig));
        assert!(!entry("actual_dtype = \"int64\"\n").signature_matches(&sig));
        // An entry written before these fields existed still matches.
        assert!(entry("").signature_matches(&sig));
    }
}
