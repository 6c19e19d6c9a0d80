//! Transpose (<https://onnx.ai/onnx/operators/onnx__Transpose.html>): "Returns a transpose of
//! the input tensor (similar to numpy.transpose). ... perm: A list of integers. By default,
//! reverse the dimensions, otherwise permute the axes according to the values given." A `perm`
//! that is not a permutation of `0..rank` is an error. The versions only widen the types.

use super::shape::{context_op, version};
use super::{pick, types_at};
use crate::ops::{AttrSpec, Constraint, Evaluated, InputSpec, Invocation, OpDef, Role, SpecError};
use crate::spec_err;

const INPUTS: &[InputSpec] = &[InputSpec::required("data", "T", Role::Value)];
const PERM: &[AttrSpec] = &[AttrSpec::any("perm")];

macro_rules! transpose_version {
    ($since:literal) => {
        version(
            $since,
            PERM,
            INPUTS,
            &[Constraint::new("T", types_at($since))],
            transpose,
        )
    };
}

/// Transpose, every version.
pub(crate) static TRANSPOSE: OpDef = context_op!(
    "Transpose",
    &[
        transpose_version!(1),
        transpose_version!(13),
        transpose_version!(21),
        transpose_version!(23),
        transpose_version!(24),
        transpose_version!(25),
    ]
);

fn transpose(inv: &Invocation<'_>) -> Result<Evaluated, SpecError> {
    let data = inv.input(0)?;
    let rank = data.rank();
    let perm: Vec<usize> = match inv.attrs.ints("perm")? {
        None => (0..rank).rev().collect(),
        Some(p) => {
            let mut seen = vec![false; rank];
            let ok = p.len() == rank
                && p.iter().all(|&a| {
                    usize::try_from(a)
                        .ok()
                        .filter(|&a| a < rank)
                        .is_some_and(|a| !std::mem::replace(&mut seen[a], true))
                });
            if !ok {
                return Err(spec_err!(
                    "perm {} is not a permutation of the {rank} axes",
                    crate::tensor::shape_text(&p)
                ));
            }
            p.iter().map(|&a| a as usize).collect()
        }
    };
    let shape = data.shape();
    let dims: Vec<usize> = perm.iter().map(|&a| shape[a]).collect();
    inv.check_output_size(data.dtype(), &dims)?;
    let strides = crate::tensor::strides(shape);
    let n = data.numel();
    // Output element at coordinates c reads input coordinates c' with c'[perm[i]] = c[i].
    let picks: Vec<usize> = (0..n)
        .map(|flat| {
            crate::tensor::unravel(flat, &dims)
                .iter()
                .zip(&perm)
                .map(|(&c, &a)| c * strides[a])
                .sum()
        })
        .collect();
    Ok(Evaluated::moved(pick(data, dims, picks.into_iter())?))
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{i64s, ints, run, t};

    #[test]
    fn transpose_permutes_as_numpy_does() {
        // numpy.arange(6).reshape(2, 3).T == [[0, 3], [1, 4], [2, 5]]
        let x = t(&[2, 3], &[0i64, 1, 2, 3, 4, 5]);
        assert_eq!(
            i64s(run("Transpose", 13, &[], &[&x])),
            (vec![3, 2], vec![0, 3, 1, 4, 2, 5])
        );
        // numpy.arange(24).reshape(2, 3, 4).transpose(1, 0, 2)[1] == [[4..8], [16..20]]
        let y: Vec<i64> = (0..24).collect();
        let y = t(&[2, 3, 4], &y);
        let (shape, v) = i64s(run("Transpose", 13, &[ints("perm", &[1, 0, 2])], &[&y]));
        assert_eq!(shape, [3, 2, 4]);
        assert_eq!(v[8..16], [4, 5, 6, 7, 16, 17, 18, 19]);
        // transpose(2, 0, 1): out[k, i, j] = y[i, j, k]; out[1, 0, 2] = y[0, 2, 1] = 9.
        let (shape, v) = i64s(run("Transpose", 1, &[ints("perm", &[2, 0, 1])], &[&y]));
        assert_eq!(shape, [4, 2, 3]);
        assert_eq!(v[6 + 2], 9);
        for bad in [&[0, 1][..], &[0, 0, 1], &[0, 1, 3], &[-1, 0, 1]] {
            assert!(
                run("Transpose", 13, &[ints("perm", bad)], &[&y]).is_err(),
                "{bad:?}"
            );
        }
    }
}
