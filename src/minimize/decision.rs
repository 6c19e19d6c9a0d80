//! The decisions of this project that a minimal case's expected outputs rest on, where the
//! operator's text of that version is silent (docs/semantics.md D6, D8): what `REPORT.md` names
//! beside the text, and what shrinking holds fixed.

use super::subject::Subject;

/// The decision the expected outputs of `s` rest on where the operator's text is silent
/// ([`decision_for`]).
pub(crate) fn output_decision(s: &Subject) -> Option<onnx_idx_check::ops::Decision> {
    use onnx_idx_check::ops::Role;
    let reduction = s
        .node()?
        .attribute
        .iter()
        .find(|a| a.name == "reduction")
        .map(|a| a.s.as_slice());
    decision_for(
        s.def,
        |r: Role| s.tensor_of(r),
        s.int_attr("axis"),
        reduction,
    )
}

/// Whether `s` reduces (`add`, `mul`) float16 or bfloat16 updates into an element more than
/// once: its expected value rests on D8's rounding after each step, in row-major order.
pub(crate) fn rounds_per_step(s: &Subject) -> bool {
    use onnx_idx_check::ops::Role;
    use onnx_idx_check::tensor::DType;
    let reduces = s.node().is_some_and(|n| {
        n.attribute
            .iter()
            .any(|a| a.name == "reduction" && matches!(a.s.as_slice(), b"add" | b"mul"))
    });
    let (Some(data), Some(indices)) = (s.tensor_of(Role::Data), s.tensor_of(Role::Indices)) else {
        return false;
    };
    if !reduces || !matches!(data.dtype(), DType::Float16 | DType::Bfloat16) {
        return false;
    }
    let Some(idx) = indices.to_i64_vec() else {
        return false;
    };
    let (d, i) = (data.shape(), indices.shape());
    // Each update's target element, its index normalized; one met twice is reduced into twice.
    let mut targets = std::collections::HashSet::new();
    let distinct = match s.def.indexing {
        onnx_idx_check::ops::Indexing::Tuples => {
            // With empty tuples (k = 0) every update reduces into the whole tensor.
            let k = i.last().copied().unwrap_or(0);
            let tuples: usize = i[..i.len().saturating_sub(1)].iter().product();
            if k == 0 {
                tuples < 2
            } else {
                idx.chunks(k).all(|t| {
                    let t: Vec<i64> = t
                        .iter()
                        .zip(d)
                        .map(|(&v, &n)| v.rem_euclid(n.max(1) as i64))
                        .collect();
                    targets.insert(t)
                })
            }
        }
        _ => {
            let rank = d.len() as i64;
            let axis = s.int_attr("axis").unwrap_or(0);
            let axis = usize::try_from(if axis < 0 { axis + rank } else { axis }).unwrap_or(0);
            let size = d.get(axis).copied().unwrap_or(1).max(1) as i64;
            (0..idx.len()).all(|p| {
                let mut at: Vec<i64> = onnx_idx_check::tensor::unravel(p, i)
                    .into_iter()
                    .map(|x| x as i64)
                    .collect();
                if let Some(a) = at.get_mut(axis) {
                    *a = idx[p].rem_euclid(size);
                }
                targets.insert(at)
            })
        }
    };
    !distinct
}

/// The decision the expected outputs of a case of operator `def` rest on where the operator's
/// text is silent, from its inputs by role, its `axis` and its `reduction`: D6 when the indices
/// of an element-wise operator with a data input (GatherElements, ScatterElements, Scatter) are
/// shorter than the data off the axis, or the index tuples of one that writes updates by tuples
/// (ScatterND) are empty (the text neither allows nor forbids either); D8 when a `max` or `min`
/// reduction meets a NaN (the text says nothing of NaN there).
pub(crate) fn decision_for<'a>(
    def: &onnx_idx_check::ops::OpDef,
    input: impl Fn(onnx_idx_check::ops::Role) -> Option<&'a onnx_idx_check::tensor::Tensor>,
    axis: Option<i64>,
    reduction: Option<&[u8]>,
) -> Option<onnx_idx_check::ops::Decision> {
    use onnx_idx_check::ops::Role;
    use onnx_idx_check::tensor::value::{scalar, Scalar};
    if let (Some(data), Some(indices)) = (input(Role::Data), input(Role::Indices)) {
        let (d, i) = (data.shape(), indices.shape());
        let rank = d.len() as i64;
        let shorter_off_axis = || {
            let axis = axis.unwrap_or(0);
            let axis = if axis < 0 { axis + rank } else { axis };
            d.len() == i.len() && (0..d.len()).any(|k| k as i64 != axis && i[k] < d[k])
        };
        let decided = match def.indexing {
            onnx_idx_check::ops::Indexing::Elements => shorter_off_axis(),
            onnx_idx_check::ops::Indexing::Tuples => {
                let scatters = def
                    .versions
                    .iter()
                    .any(|v| v.input_with(Role::Updates).is_some());
                scatters && i.last() == Some(&0)
            }
            _ => false,
        };
        if decided {
            return Some(onnx_idx_check::ops::Decision::D6);
        }
    }
    let reduces = matches!(reduction, Some(b"max" | b"min"));
    let nan = |t: &onnx_idx_check::tensor::Tensor| {
        (0..t.numel())
            .any(|i| matches!(scalar(t, i), Some(Scalar::Real { value, .. }) if value.is_nan()))
    };
    let any_nan = [Role::Data, Role::Updates]
        .into_iter()
        .filter_map(&input)
        .any(nan);
    (reduces && any_nan).then_some(onnx_idx_check::ops::Decision::D8)
}
