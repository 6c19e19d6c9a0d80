//! Concat (<https://onnx.ai/onnx/operators/onnx__Concat.html>): "Concatenate a list of tensors
//! into a single tensor. All input tensors must have the same shape, except for the dimension
//! size of the axis to concatenate on."
//!
//! | since | change |
//! |---|---|
//! | 1 | `axis` optional, default 1; float types only |
//! | 4 | `axis` required; classic15 |
//! | 11 | negative `axis` counts from the back |
//! | 13 | bfloat16 |

use super::shape::{context_op, version};
use super::{norm_axis, pick, FLOATS_1};
use crate::ops::{AttrSpec, Constraint, Evaluated, InputSpec, Invocation, OpDef, Role, SpecError};
use crate::spec_err;
use crate::tensor::dtype::{CLASSIC15, CLASSIC15_BF16};

const INPUTS: &[InputSpec] = &[InputSpec::variadic("inputs", "T", Role::Value)];
const AXIS: &[AttrSpec] = &[AttrSpec::any("axis")];

/// Concat, every version.
pub(crate) static CONCAT: OpDef = context_op!(
    "Concat",
    &[
        version(1, AXIS, INPUTS, &[Constraint::new("T", FLOATS_1)], concat),
        version(4, AXIS, INPUTS, &[Constraint::new("T", CLASSIC15)], concat),
        version(11, AXIS, INPUTS, &[Constraint::new("T", CLASSIC15)], concat),
        version(
            13,
            AXIS,
            INPUTS,
            &[Constraint::new("T", CLASSIC15_BF16)],
            concat
        ),
    ]
);

fn concat(inv: &Invocation<'_>) -> Result<Evaluated, SpecError> {
    let inputs: Vec<&crate::Tensor> = (0..inv.inputs.len())
        .map(|i| inv.input(i))
        .collect::<Result<_, _>>()?;
    let first = inputs[0];
    let axis = match (inv.attrs.find("axis")?, inv.version.since) {
        (None, 1) => 1,
        (None, _) => return Err(spec_err!("{} needs the 'axis' attribute", inv.op_name())),
        (Some(_), _) => inv.attrs.int("axis", 0)?,
    };
    let rank = first.rank();
    if rank == 0 {
        return Err(spec_err!("Concat cannot join scalars (rank 0)"));
    }
    let axis = norm_axis(axis, rank, inv.version.since >= 11, "axis")?;
    let mut dims = first.shape().to_vec();
    dims[axis] = 0;
    for (k, t) in inputs.iter().enumerate() {
        let s = t.shape();
        let same = s.len() == rank && (0..rank).all(|d| d == axis || s[d] == dims[d]);
        if !same {
            return Err(spec_err!(
                "input {k} has shape {}, which does not match input 0's {} outside axis {axis}",
                crate::tensor::shape_text(s),
                crate::tensor::shape_text(first.shape())
            ));
        }
        dims[axis] += s[axis];
    }
    inv.check_output_size(first.dtype(), &dims)?;
    // Row-major: for each outer index, each input's block along the axis and inward in turn.
    let outer: usize = dims[..axis].iter().product();
    let mut picks: Vec<(usize, usize)> = Vec::new();
    for o in 0..outer {
        for (k, t) in inputs.iter().enumerate() {
            let block: usize = t.shape()[axis..].iter().product();
            picks.extend((o * block..(o + 1) * block).map(|i| (k, i)));
        }
    }
    // Every input is one tensor laid end to end, then picked from.
    let mut offsets = vec![0usize; inputs.len()];
    for k in 1..inputs.len() {
        offsets[k] = offsets[k - 1] + inputs[k - 1].numel();
    }
    let joined = join(&inputs)?;
    Ok(Evaluated::moved(pick(
        &joined,
        dims,
        picks.into_iter().map(|(k, i)| offsets[k] + i),
    )?))
}

/// The inputs' elements one after the other, as a 1-D tensor.
fn join(inputs: &[&crate::Tensor]) -> Result<crate::Tensor, SpecError> {
    let mut out: Option<crate::Tensor> = None;
    for t in inputs {
        let flat = pick(t, vec![t.numel()], 0..t.numel())?;
        out = Some(match out {
            None => flat,
            Some(prev) => append(prev, flat)?,
        });
    }
    out.ok_or_else(|| spec_err!("Concat needs at least one input"))
}

/// `a` then `b`, both 1-D of one dtype.
fn append(a: crate::Tensor, b: crate::Tensor) -> Result<crate::Tensor, SpecError> {
    use crate::tensor::Storage::*;
    let dtype = a.dtype();
    let n = a.numel() + b.numel();
    let storage = match (a.into_storage(), b.into_storage()) {
        (W8(mut x), W8(y)) => {
            x.extend(y);
            W8(x)
        }
        (W16(mut x), W16(y)) => {
            x.extend(y);
            W16(x)
        }
        (W32(mut x), W32(y)) => {
            x.extend(y);
            W32(x)
        }
        (W64(mut x), W64(y)) => {
            x.extend(y);
            W64(x)
        }
        (W128(mut x), W128(y)) => {
            x.extend(y);
            W128(x)
        }
        (Str(mut x), Str(y)) => {
            x.extend(y);
            Str(x)
        }
        _ => {
            return Err(SpecError::Unsupported(format!(
                "Concat of {dtype} is not implemented"
            )))
        }
    };
    crate::Tensor::new(dtype, vec![n], storage).map_err(|e| spec_err!("internal error: {e}"))
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{i64s, int, run, t};
    use crate::ops::SpecError;

    #[test]
    fn concat_joins_along_the_axis() {
        // The spec's example: [[1, 2], [3, 4]] and [[5, 6], [7, 8]].
        let a = t(&[2, 2], &[1i64, 2, 3, 4]);
        let b = t(&[2, 2], &[5i64, 6, 7, 8]);
        assert_eq!(
            i64s(run("Concat", 13, &[int("axis", 0)], &[&a, &b])),
            (vec![4, 2], vec![1, 2, 3, 4, 5, 6, 7, 8])
        );
        assert_eq!(
            i64s(run("Concat", 13, &[int("axis", 1)], &[&a, &b])),
            (vec![2, 4], vec![1, 2, 5, 6, 3, 4, 7, 8])
        );
        assert_eq!(
            i64s(run("Concat", 11, &[int("axis", -1)], &[&a, &b])),
            (vec![2, 4], vec![1, 2, 5, 6, 3, 4, 7, 8])
        );
        // Different sizes along the axis, three inputs, one of them empty: the shape chain's
        // join of 1-D int64 pieces.
        let c = t(&[1], &[9i64]);
        let e = t::<i64>(&[0], &[]);
        assert_eq!(
            i64s(run(
                "Concat",
                13,
                &[int("axis", 0)],
                &[&c, &e, &a.clone().reshaped(vec![4]).unwrap()]
            )),
            (vec![5], vec![9, 1, 2, 3, 4])
        );
    }

    #[test]
    fn concat_errors_where_the_spec_requires() {
        let a = t(&[2, 2], &[1i64, 2, 3, 4]);
        let b = t(&[2, 1], &[5i64, 6]);
        let violation = |r: Result<crate::Tensor, SpecError>| {
            assert!(matches!(r, Err(SpecError::Violation(_))), "{r:?}")
        };
        violation(run("Concat", 13, &[int("axis", 0)], &[&a, &b]));
        assert!(run("Concat", 13, &[int("axis", 1)], &[&a, &b]).is_ok());
        // Axis required from 4, negatives from 11, in range, scalars refused, one dtype.
        violation(run("Concat", 4, &[], &[&a, &b]));
        violation(run("Concat", 4, &[int("axis", -1)], &[&a, &b]));
        violation(run("Concat", 13, &[int("axis", 2)], &[&a, &b]));
        let s = crate::Tensor::scalar(1i64);
        violation(run("Concat", 13, &[int("axis", 0)], &[&s, &s]));
        violation(run(
            "Concat",
            13,
            &[int("axis", 0)],
            &[&a, &t(&[1, 2], &[1i32, 2])],
        ));
    }
}
