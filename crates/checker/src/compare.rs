//! Comparison of a computed output with the expected one (decision D9).
//!
//! dtype and shape must match exactly. Integers, bools and strings compare exactly. Floats from
//! pure data movement compare bit for bit (any NaN equals any NaN, `-0.0 != +0.0`); floats from
//! arithmetic reductions compare with `|actual - expected| <= atol + rtol * |expected|`.
//!
//! ```
//! use onnx_idx_check::compare::{compare, Tolerance};
//! use onnx_idx_check::Tensor;
//!
//! let want = Tensor::from_vec(vec![2], vec![1i32, 2])?;
//! assert!(compare(&want, &want.clone(), false, &Tolerance::default()).passed);
//! // dtype must match exactly.
//! let got = Tensor::from_vec(vec![2], vec![1i64, 2])?;
//! assert!(!compare(&want, &got, false, &Tolerance::default()).passed);
//! # Ok::<(), onnx_idx_check::ShapeError>(())
//! ```

use crate::tensor::value::{display, scalar, Scalar};
use crate::tensor::{unravel, Class, DType, Elem, Tensor};
use serde::Serialize;

/// Which comparison applies to float outputs.
///
/// ```
/// use onnx_idx_check::compare::{compare, Mode, Tolerance};
/// use onnx_idx_check::Tensor;
///
/// let want = Tensor::from_vec(vec![1], vec![1.0f32])?;
/// let got = Tensor::from_vec(vec![1], vec![1.0000001f32])?;
/// // Data movement is exact by default; `Tolerant` applies the tolerance everywhere.
/// assert!(!compare(&want, &got, false, &Tolerance::default()).passed);
/// let tolerant = Tolerance { mode: Mode::Tolerant, ..Tolerance::default() };
/// assert!(compare(&want, &got, false, &tolerant).passed);
/// # Ok::<(), onnx_idx_check::ShapeError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Exact for data movement, tolerant for arithmetic (D9).
    #[default]
    Default,
    /// Exact everywhere (`--exact`).
    Exact,
    /// Tolerant everywhere (`--tolerant`, ONNX backend runner behaviour).
    Tolerant,
}

/// Comparison settings.
///
/// ```
/// use onnx_idx_check::compare::{compare, Tolerance};
/// use onnx_idx_check::Tensor;
///
/// let want = Tensor::from_vec(vec![2], vec![100.0f32, 1.0])?;
/// let got = Tensor::from_vec(vec![2], vec![100.05f32, 1.0])?;
/// // From a reduction (arithmetic): |got - want| <= atol + rtol * |want|.
/// assert!(compare(&want, &got, true, &Tolerance::default()).passed);
/// let tight = Tolerance { rtol: 1e-5, ..Tolerance::default() };
/// assert!(!compare(&want, &got, true, &tight).passed);
/// # Ok::<(), onnx_idx_check::ShapeError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    /// Relative tolerance.
    pub rtol: f64,
    /// Absolute tolerance.
    pub atol: f64,
    /// Which outputs the tolerance applies to.
    pub mode: Mode,
}

impl Default for Tolerance {
    fn default() -> Self {
        Tolerance {
            rtol: 1e-3,
            atol: 1e-7,
            mode: Mode::Default,
        }
    }
}

/// How many mismatches are listed individually.
pub(crate) const LISTED_MISMATCHES: usize = 10;

/// One differing element.
///
/// ```
/// use onnx_idx_check::compare::{compare, Tolerance};
/// use onnx_idx_check::Tensor;
///
/// let want = Tensor::from_vec(vec![2, 2], vec![1i64, 2, 3, 4])?;
/// let got = Tensor::from_vec(vec![2, 2], vec![1i64, 2, 3, 5])?;
/// let m = &compare(&want, &got, false, &Tolerance::default()).first_mismatches[0];
/// assert_eq!((m.index.as_slice(), m.expected.as_str(), m.actual.as_str()), (&[1, 1][..], "4", "5"));
/// # Ok::<(), onnx_idx_check::ShapeError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Mismatch {
    /// Its n-d coordinates.
    pub index: Vec<usize>,
    /// The expected value, rendered.
    pub expected: String,
    /// Our value, rendered.
    pub actual: String,
    /// Where the correct value comes from (filled in by diagnosis), e.g.
    /// `data[1,0], from indices[1,0] = -2 on axis 0`.
    pub source: Option<String>,
    /// Its flat offset.
    #[serde(skip)]
    pub flat: usize,
}

/// The result of comparing one output.
///
/// ```
/// use onnx_idx_check::compare::{compare, Tolerance};
/// use onnx_idx_check::Tensor;
///
/// let want = Tensor::from_vec(vec![3], vec![1.0f32, 2.0, 3.0])?;
/// let got = Tensor::from_vec(vec![3], vec![1.0f32, 2.5, 3.0])?;
/// let diff = compare(&want, &got, false, &Tolerance::default());
/// assert!(!diff.passed);
/// assert_eq!((diff.mismatches, diff.max_abs_diff), (1, Some(0.5)));
/// # Ok::<(), onnx_idx_check::ShapeError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Diff {
    /// Whether the output matches.
    pub passed: bool,
    /// Why not, in one line; `None` when it matches.
    pub reason: Option<String>,
    /// Differing elements (0 when dtype or shape differ).
    pub mismatches: usize,
    /// Largest absolute difference over comparable numeric elements.
    pub max_abs_diff: Option<f64>,
    /// Largest relative difference over comparable numeric elements.
    pub max_rel_diff: Option<f64>,
    /// The first differing elements (ten at most).
    pub first_mismatches: Vec<Mismatch>,
    /// Whether the tolerance was applied.
    pub tolerant: bool,
}

/// Compares `actual` with `expected`; `arithmetic` says whether `actual` came from a reduction.
///
/// ```
/// use onnx_idx_check::compare::{compare, Tolerance};
/// use onnx_idx_check::Tensor;
///
/// let want = Tensor::from_vec(vec![2], vec![0.0f32, f32::NAN])?;
/// // Exact data movement: any NaN equals any NaN, but -0.0 is not +0.0.
/// assert!(compare(&want, &Tensor::from_vec(vec![2], vec![0.0f32, -f32::NAN])?, false, &Tolerance::default()).passed);
/// let diff = compare(&want, &Tensor::from_vec(vec![2], vec![-0.0f32, f32::NAN])?, false, &Tolerance::default());
/// assert!(!diff.passed);
/// // A shape difference is a failure with its reason.
/// let diff = compare(&want, &Tensor::from_vec(vec![1, 2], vec![0.0f32, f32::NAN])?, false, &Tolerance::default());
/// assert!(diff.reason.unwrap().contains("shape"));
/// # Ok::<(), onnx_idx_check::ShapeError>(())
/// ```
pub fn compare(expected: &Tensor, actual: &Tensor, arithmetic: bool, tol: &Tolerance) -> Diff {
    // Only floats (and complex numbers) have a tolerance; integers, bools and strings are exact.
    let floating = matches!(expected.dtype().class(), Class::Float | Class::Complex);
    let tolerant = floating
        && match tol.mode {
            Mode::Exact => false,
            Mode::Tolerant => true,
            Mode::Default => arithmetic,
        };
    let fail = |reason: String| Diff {
        passed: false,
        reason: Some(reason),
        mismatches: 0,
        max_abs_diff: None,
        max_rel_diff: None,
        first_mismatches: Vec::new(),
        tolerant,
    };
    if expected.dtype() != actual.dtype() {
        return fail(format!(
            "dtype differs: expected {}, got {}",
            expected.dtype(),
            actual.dtype()
        ));
    }
    if expected.shape() != actual.shape() {
        return fail(format!(
            "shape differs: expected {}, got {}",
            crate::tensor::shape_text(expected.shape()),
            crate::tensor::shape_text(actual.shape())
        ));
    }
    let numeric = !matches!(expected.dtype(), DType::Bool | DType::String);
    let zero = if numeric { Some(0.0) } else { None };
    // Identical storage matches under every rule.
    if same_words(expected, actual) {
        return Diff {
            passed: true,
            reason: None,
            mismatches: 0,
            max_abs_diff: zero,
            max_rel_diff: zero,
            first_mismatches: Vec::new(),
            tolerant,
        };
    }
    let mut mismatches = 0usize;
    let mut first = Vec::new();
    let mut max_abs: Option<f64> = zero;
    let mut max_rel: Option<f64> = zero;
    // A mismatch whose size cannot be measured (NaN against a number, an infinity against a
    // finite value) makes the largest differences undefined: they are reported as null.
    let mut unmeasurable = false;
    let mut visit = |i: usize| {
        let (Some(e), Some(a)) = (scalar(expected, i), scalar(actual, i)) else {
            return;
        };
        let (equal, abs, rel) = element(&e, &a, tolerant, tol);
        if let Some(abs) = abs {
            max_abs = Some(max_abs.map_or(abs, |m| m.max(abs)));
        }
        if let Some(rel) = rel {
            max_rel = Some(max_rel.map_or(rel, |m| m.max(rel)));
        }
        if !equal {
            unmeasurable |= numeric && !abs.is_some_and(f64::is_finite);
            mismatches += 1;
            if first.len() < LISTED_MISMATCHES {
                first.push(Mismatch {
                    index: unravel(i, expected.shape()),
                    expected: display(expected, i),
                    actual: display(actual, i),
                    source: None,
                    flat: i,
                });
            }
        }
    };
    // An element whose bits are the same in both is equal under every rule and differs by 0
    // (or, a NaN, by nothing measurable), so for numbers only the differing words need a look:
    // a failed comparison of a large tensor costs little more than a passed one.
    if !(numeric && for_each_differing(expected, actual, &mut visit)) {
        (0..expected.numel()).for_each(visit);
    }
    let finite = |v: Option<f64>| v.filter(|x| x.is_finite() && !unmeasurable);
    let reason =
        (mismatches > 0).then(|| {
            let total = expected.numel();
            let rule = if tolerant {
                format!(" (tolerance rtol {} atol {})", tol.rtol, tol.atol)
            } else {
                String::new()
            };
            match first.first() {
                Some(m) => format!(
                "{mismatches} of {total} elements differ{rule}; first at [{}]: expected {}, got {}",
                m.index.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(","),
                m.expected,
                m.actual
            ),
                None => format!("{mismatches} of {total} elements differ{rule}"),
            }
        });
    Diff {
        passed: mismatches == 0,
        reason,
        mismatches,
        max_abs_diff: finite(max_abs),
        max_rel_diff: finite(max_rel),
        first_mismatches: first,
        tolerant,
    }
}

/// Compares two elements: (equal, absolute difference, relative difference).
fn element(
    e: &Scalar<'_>,
    a: &Scalar<'_>,
    tolerant: bool,
    tol: &Tolerance,
) -> (bool, Option<f64>, Option<f64>) {
    match (e, a) {
        (
            Scalar::Real {
                value: ev,
                bits: eb,
            },
            Scalar::Real {
                value: av,
                bits: ab,
            },
        ) => {
            let equal = if tolerant {
                close(*ev, *av, tol)
            } else {
                eb == ab || (ev.is_nan() && av.is_nan())
            };
            let (abs, rel) = diffs(*ev, *av);
            (equal, abs, rel)
        }
        (
            Scalar::Complex {
                re: er,
                im: ei,
                bits: eb,
            },
            Scalar::Complex {
                re: ar,
                im: ai,
                bits: ab,
            },
        ) => {
            let equal = if tolerant {
                close(*er, *ar, tol) && close(*ei, *ai, tol)
            } else {
                let part = |e: f64, a: f64, shift: u32, width: u32| {
                    let mask = if width == 64 {
                        u128::from(u64::MAX)
                    } else {
                        u128::from(u32::MAX)
                    };
                    ((eb >> shift) & mask) == ((ab >> shift) & mask) || (e.is_nan() && a.is_nan())
                };
                // complex64 keeps 32-bit halves, complex128 64-bit halves.
                let w = if eb >> 64 == 0
                    && ab >> 64 == 0
                    && (er.to_bits() >> 32 != 0 || ar.to_bits() >> 32 != 0)
                {
                    32
                } else {
                    64
                };
                part(*er, *ar, 0, w) && part(*ei, *ai, w, w)
            };
            let abs = ((er - ar).powi(2) + (ei - ai).powi(2)).sqrt();
            let norm = (er.powi(2) + ei.powi(2)).sqrt();
            let abs = (!abs.is_nan()).then_some(abs);
            let rel = abs.map(|d| {
                if norm > 0.0 {
                    d / norm
                } else if d == 0.0 {
                    0.0
                } else {
                    f64::INFINITY
                }
            });
            (equal, abs, rel)
        }
        (Scalar::Int(x), Scalar::Int(y)) => {
            let d = (*x - *y).unsigned_abs() as f64;
            let rel = if *x != 0 {
                d / (*x as f64).abs()
            } else if d == 0.0 {
                0.0
            } else {
                f64::INFINITY
            };
            (x == y, Some(d), Some(rel))
        }
        (x, y) => (x == y, None, None),
    }
}

/// `|a - e| <= atol + rtol * |e|`, NaN equal to NaN, infinities equal only to themselves.
fn close(e: f64, a: f64, tol: &Tolerance) -> bool {
    if e.is_nan() || a.is_nan() {
        return e.is_nan() && a.is_nan();
    }
    if e.is_infinite() || a.is_infinite() {
        return e == a;
    }
    (a - e).abs() <= tol.atol + tol.rtol * e.abs()
}

fn diffs(e: f64, a: f64) -> (Option<f64>, Option<f64>) {
    if e.is_nan() || a.is_nan() {
        return (None, None);
    }
    if e == a {
        return (Some(0.0), Some(0.0));
    }
    let abs = (a - e).abs();
    let rel = if e != 0.0 {
        abs / e.abs()
    } else {
        f64::INFINITY
    };
    (Some(abs), Some(rel))
}

/// Calls `visit` with the flat position of every element whose words differ between two
/// tensors of one fixed-width dtype, in order; `false` (and no call) when their elements are not
/// words to compare.
fn for_each_differing(expected: &Tensor, actual: &Tensor, visit: &mut impl FnMut(usize)) -> bool {
    fn words<T: Elem + PartialEq>(e: &Tensor, a: &Tensor, visit: &mut impl FnMut(usize)) -> bool {
        let (Some(e), Some(a)) = (e.elems::<T>(), a.elems::<T>()) else {
            return false;
        };
        // Blocks compare as memory; only a block that differs is walked element by element.
        const BLOCK: usize = 256;
        for (k, (eb, ab)) in e.chunks(BLOCK).zip(a.chunks(BLOCK)).enumerate() {
            if eb != ab {
                for (j, (x, y)) in eb.iter().zip(ab).enumerate() {
                    if x != y {
                        visit(k * BLOCK + j);
                    }
                }
            }
        }
        true
    }
    if matches!(expected.dtype().layout(), crate::tensor::Layout::String) {
        return false;
    }
    onnx_idx_check_kernels::dispatch_by_width!(
        expected.dtype(),
        false,
        words(expected, actual, visit)
    )
}

/// Whether two tensors of one dtype hold the same words (floats bit for bit), read where they
/// are: a tensor that shares a file's buffer is not copied to be compared.
fn same_words(expected: &Tensor, actual: &Tensor) -> bool {
    fn words<T: Elem + PartialEq>(e: &Tensor, a: &Tensor) -> bool {
        match (e.elems::<T>(), a.elems::<T>()) {
            (Some(e), Some(a)) => e == a,
            _ => e.storage() == a.storage(),
        }
    }
    onnx_idx_check_kernels::dispatch_by_width!(
        expected.dtype(),
        expected.storage() == actual.storage(),
        words(expected, actual)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(shape: Vec<usize>, v: &[f32]) -> Tensor {
        Tensor::from_elems(DType::Float, shape, v.iter().map(|x| x.to_bits()).collect()).unwrap()
    }

    #[test]
    fn data_movement_is_bit_exact_but_nan_equals_nan() {
        let tol = Tolerance::default();
        let e = f32s(vec![3], &[1.0, f32::NAN, 0.0]);
        assert!(compare(&e, &f32s(vec![3], &[1.0, -f32::NAN, 0.0]), false, &tol).passed);
        let d = compare(&e, &f32s(vec![3], &[1.0, f32::NAN, -0.0]), false, &tol);
        assert!(!d.passed);
        assert_eq!(d.mismatches, 1);
        assert_eq!(d.first_mismatches[0].index, vec![2]);
        let d = compare(&e, &f32s(vec![3], &[1.0, 3.0, 0.0]), false, &tol);
        assert_eq!(
            (d.mismatches, d.max_abs_diff, d.max_rel_diff),
            (1, None, None)
        );
        assert!(!compare(&e, &f32s(vec![3], &[1.0000001, f32::NAN, 0.0]), false, &tol).passed);
    }

    #[test]
    fn reductions_use_rtol_and_atol() {
        let tol = Tolerance::default();
        let e = f32s(vec![2], &[1000.0, f32::INFINITY]);
        assert!(compare(&e, &f32s(vec![2], &[1000.9, f32::INFINITY]), true, &tol).passed);
        assert!(!compare(&e, &f32s(vec![2], &[1001.2, f32::INFINITY]), true, &tol).passed);
        assert!(!compare(&e, &f32s(vec![2], &[1000.0, f32::NEG_INFINITY]), true, &tol).passed);
        let exact = Tolerance {
            mode: Mode::Exact,
            ..tol
        };
        assert!(!compare(&e, &f32s(vec![2], &[1000.9, f32::INFINITY]), true, &exact).passed);
    }

    #[test]
    fn dtype_and_shape_must_match_exactly() {
        let tol = Tolerance::default();
        let scalar = f32s(vec![], &[1.0]);
        let one = f32s(vec![1], &[1.0]);
        let d = compare(&scalar, &one, false, &tol);
        assert!(!d.passed);
        assert!(d.reason.unwrap().contains("shape differs"));
        let dbl = Tensor::from_elems(DType::Double, vec![1], vec![1.0f64.to_bits()]).unwrap();
        assert!(compare(&dbl, &one, false, &tol)
            .reason
            .unwrap()
            .contains("dtype differs"));
    }

    #[test]
    fn reports_max_differences() {
        let tol = Tolerance::default();
        let d = compare(
            &f32s(vec![2], &[1.0, 4.0]),
            &f32s(vec![2], &[1.5, 4.0]),
            false,
            &tol,
        );
        assert_eq!(d.max_abs_diff, Some(0.5));
        assert_eq!(d.max_rel_diff, Some(0.5));
        assert_eq!(d.first_mismatches[0].expected, "1.0");
        assert_eq!(d.first_mismatches[0].actual, "1.5");
    }

    #[test]
    fn complex64_exact_comparison_uses_each_half() {
        let w = |re: f32, im: f32| u64::from(re.to_bits()) | (u64::from(im.to_bits()) << 32);
        let t = |v: u64| Tensor::from_elems(DType::Complex64, vec![1], vec![v]).unwrap();
        let tol = Tolerance::default();
        assert!(compare(&t(w(1.0, 2.0)), &t(w(1.0, 2.0)), false, &tol).passed);
        assert!(!compare(&t(w(1.0, 2.0)), &t(w(1.0, 3.0)), false, &tol).passed);
        assert!(compare(&t(w(f32::NAN, 2.0)), &t(w(f32::NAN, 2.0)), false, &tol).passed);
    }

    #[test]
    fn long_tensors_report_every_difference_in_order_across_blocks() {
        let tol = Tolerance::default();
        let e: Vec<f32> = (0..1000).map(|i| i as f32).collect();
        let mut a = e.clone();
        // In the first block, in a later one, and in the partial last block; a NaN of the same
        // bits in both, which is equal; a NaN against a number, which is not measurable.
        a[3] = 3.5;
        a[700] = 690.0;
        a[999] = 1000.0;
        let (mut e2, mut a2) = (e.clone(), a.clone());
        e2[500] = f32::NAN;
        a2[500] = f32::NAN;
        let d = compare(&f32s(vec![1000], &e2), &f32s(vec![1000], &a2), false, &tol);
        assert_eq!(d.mismatches, 3);
        let at: Vec<_> = d.first_mismatches.iter().map(|m| m.index[0]).collect();
        assert_eq!(at, [3, 700, 999]);
        assert_eq!(d.max_abs_diff, Some(10.0));
        assert_eq!(d.max_rel_diff, Some(0.5 / 3.0_f64));
        a2[10] = f32::NAN;
        let d = compare(&f32s(vec![1000], &e2), &f32s(vec![1000], &a2), false, &tol);
        assert_eq!(
            (d.mismatches, d.max_abs_diff, d.max_rel_diff),
            (4, None, None)
        );
        // Bools are not numbers: no differences measured, every mismatch listed.
        let b = |v: &[u8]| Tensor::from_elems(DType::Bool, vec![v.len()], v.to_vec()).unwrap();
        let d = compare(&b(&[1, 0, 1]), &b(&[1, 1, 0]), false, &tol);
        assert_eq!(
            (d.mismatches, d.max_abs_diff, d.max_rel_diff),
            (2, None, None)
        );
    }
}
