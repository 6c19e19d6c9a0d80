//! Diagnosis of wrong results.
//!
//! For an indexing op, every output element comes from somewhere: a data element picked by an
//! index, or a data element combined with the updates aimed at it. This module models that
//! *provenance* once per operator, with switches ("quirks") for the wrong semantics that real
//! runtimes have shipped: negative indices not normalised, out-of-range indices wrapped, clamped
//! or zero-filled, duplicates resolved first-write-wins, the reduction ignored, the axis or
//! batch_dims ignored, a reduction accumulated in another order. A wrong output is explained by
//! every quirk whose result reproduces it exactly, most specific first; each listed mismatch is
//! explained by the provenance of its element under the correct semantics.
//!
//! Each operator models its own provenance beside its kernel ([`crate::ops::provenance`]), and
//! values under a quirk are computed by the same element copies and reduction arithmetic as the
//! kernels, so a reproduction is bit-exact, not approximate.
//!
//! - `class`: the bug classes;
//! - here: the quirks that realise each class, the search for the classes that reproduce an
//!   output, and the mismatch sources.

pub(crate) mod class;

pub use crate::ops::provenance::{Quirks, Semantics, Subject};
pub use class::BugClass;

use crate::compare::{compare, Mode, Tolerance};
use crate::ops::provenance::{correct_reduction, execute, semantics, Neg, Oob};
use crate::ops::{resolve, Reduction, Resolution};
use crate::tensor::{unravel, Tensor};

/// Whether two tensors are identical (dtype, shape, every element; NaN equal to NaN).
fn identical(a: &Tensor, b: &Tensor) -> bool {
    let exact = Tolerance {
        mode: Mode::Exact,
        ..Tolerance::default()
    };
    compare(a, b, false, &exact).passed
}

/// The quirks that realise a bug class for this subject, or none when the class cannot apply
/// (no negative index, no reduction, axis already 0, ...).
fn quirk_variants(class: BugClass, subj: &Subject<'_>) -> Vec<Quirks> {
    let red = correct_reduction(subj);
    let base = Quirks::default();
    match class {
        BugClass::NegativeNotNormalized => vec![
            Quirks {
                neg: Neg::AsIndexZero,
                ..base
            },
            Quirks {
                neg: Neg::AsZeroValue,
                ..base
            },
        ],
        BugClass::OobWrapped => vec![Quirks {
            oob: Oob::Wrap,
            ..base
        }],
        BugClass::OobClamped => vec![Quirks {
            oob: Oob::Clamp,
            ..base
        }],
        BugClass::OobZeroFilled => vec![Quirks {
            oob: Oob::Zero,
            ..base
        }],
        BugClass::FirstWriteWins if red == Reduction::None => vec![Quirks {
            reverse: true,
            ..base
        }],
        BugClass::ReductionIgnored if red != Reduction::None => {
            vec![Quirks {
                reduction: Some(Reduction::None),
                ..base
            }]
        }
        BugClass::AxisIgnored => vec![Quirks {
            axis_zero: true,
            ..base
        }],
        BugClass::BatchDimsIgnored => vec![Quirks {
            batch_zero: true,
            ..base
        }],
        BugClass::AccumulationOrder if red != Reduction::None => vec![Quirks {
            reverse: true,
            ..base
        }],
        _ => Vec::new(),
    }
}

/// The first bug class of [`classify_all`]: the most specific one that reproduces `actual`.
#[cfg(test)]
fn classify(subj: &Subject<'_>, reference: Option<&Tensor>, actual: &Tensor) -> Option<BugClass> {
    classify_all(subj, reference, actual).into_iter().next()
}

/// Every bug class whose semantics reproduce `actual` exactly, when `actual` is wrong, most
/// specific first (the order of [`BugClass::ALL`]); empty when none does. `reference` is the
/// correct output, or `None` when the spec requires an error for these inputs.
pub fn classify_all(
    subj: &Subject<'_>,
    reference: Option<&Tensor>,
    actual: &Tensor,
) -> Vec<BugClass> {
    explain(subj, reference, actual).exact
}

/// What the bug classes make of a wrong output, from one run of each class's variants.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Explanation {
    /// The classes that reproduce it exactly, as [`classify_all`] lists them.
    pub exact: Vec<BugClass>,
    /// When its shape differs from the reference's, the classes whose output has its dtype and
    /// shape: with no exact class, one of them is likely part of the story with another bug on
    /// top (a runtime that ignores the axis and clamps indices).
    pub same_shape: Vec<BugClass>,
}

/// [`classify_all`], and the classes that give `actual`'s shape where the reference's differs.
pub fn explain(subj: &Subject<'_>, reference: Option<&Tensor>, actual: &Tensor) -> Explanation {
    let mut found = Explanation::default();
    if reference.is_some_and(|r| identical(r, actual)) {
        return found;
    }
    // A quirk explains the output only if it changes something: compare with the correct result,
    // or, where the spec requires an error, with what the op computes when its indices are valid
    // (then an error about something else, such as a dtype, is not blamed on index handling).
    let cap = Some(actual.numel());
    let computed;
    let baseline = match reference {
        Some(r) => Some(r),
        None => {
            let q = Quirks {
                cap,
                ..Quirks::default()
            };
            computed = semantics(subj, &q).and_then(|s| execute(&s));
            computed.as_ref()
        }
    };
    let shape_differs = reference.is_some_and(|r| r.shape() != actual.shape());
    if as_onnx_operator(subj, cap).iter().any(|out| {
        let changes_something = baseline.is_none_or(|b| !identical(b, out));
        let its_shape =
            shape_differs && out.shape() == actual.shape() && out.dtype() == actual.dtype();
        changes_something && (identical(out, actual) || its_shape)
    }) {
        found.exact.push(BugClass::DomainIgnored);
    }
    // The grads' reduction is their accumulation: "ignored" there means overwrite.
    for class in BugClass::ALL {
        let mut same_shape = false;
        for q in quirk_variants(class, subj) {
            let q = Quirks { cap, ..q };
            let Some(out) = semantics(subj, &q).and_then(|s| execute(&s)) else {
                // A shape does not depend on index values: where the quirk takes an index out of
                // range (axis 0 forced on indices meant for a longer axis), the same quirk with
                // out-of-range reads zero-filled still gives the shape it would produce.
                if shape_differs && q.oob == Oob::Invalid {
                    let lenient = Quirks {
                        oob: Oob::Zero,
                        ..q
                    };
                    same_shape |= semantics(subj, &lenient)
                        .and_then(|s| execute(&s))
                        .is_some_and(|out| {
                            out.shape() == actual.shape() && out.dtype() == actual.dtype()
                        });
                }
                continue;
            };
            let changes_something = baseline.is_none_or(|b| !identical(b, &out));
            if changes_something && identical(&out, actual) {
                found.exact.push(class);
                // One variant reproducing it is enough for this class.
                break;
            }
            same_shape |=
                shape_differs && out.shape() == actual.shape() && out.dtype() == actual.dtype();
        }
        if same_shape && found.exact.last() != Some(&class) {
            found.same_shape.push(class);
        }
    }
    found
}

/// What the ONNX operator of the same name as `subj`'s computes (its latest version, with the
/// attributes it defines), for a node of another domain: with its indices checked, and where
/// they are out of range for it, read as the quirks read them (a runtime that takes the node
/// for the ONNX one does not check them either). Empty for an ONNX node or when ONNX has no
/// such operator.
fn as_onnx_operator(subj: &Subject<'_>, cap: Option<usize>) -> Vec<Tensor> {
    if subj.domain.is_empty() {
        return Vec::new();
    }
    let Resolution::Found(_, v) = resolve("", subj.op_type, i64::MAX) else {
        return Vec::new();
    };
    let onnx = Subject {
        op_type: subj.op_type,
        domain: "",
        since: v.since,
        attrs: subj.attrs.clone().retain(|name| v.attr(name).is_some()),
        inputs: subj.inputs.clone(),
    };
    [Oob::Invalid, Oob::Wrap, Oob::Clamp, Oob::Zero]
        .into_iter()
        .filter_map(|oob| {
            let q = Quirks {
                cap,
                oob,
                ..Quirks::default()
            };
            semantics(&onnx, &q).and_then(|s| execute(&s))
        })
        .collect()
}

/// Whether a scatter with reduction "none" writes one output element more than once: input the
/// spec says should not occur ("indices should not have duplicate entries"), which D7 resolves
/// as the last write and a runtime may refuse.
pub fn duplicate_writes(subj: &Subject<'_>) -> bool {
    let mut seen = std::collections::HashSet::new();
    match semantics(subj, &Quirks::default()) {
        Some(Semantics::Scattered {
            pairs,
            reduction: Reduction::None,
            ..
        }) => pairs.iter().any(|p| !seen.insert(p.0)),
        _ => false,
    }
}

/// Whether the op reads one data element twice (gathers) or writes one output element more than
/// once (scatters): the "duplicates" trait of coverage.
pub fn has_duplicates(subj: &Subject<'_>) -> bool {
    let mut seen = std::collections::HashSet::new();
    match semantics(subj, &Quirks::default()) {
        Some(Semantics::Gathered { origin, .. }) => origin
            .iter()
            .filter_map(|o| o.0)
            .any(|src| !seen.insert(src)),
        Some(Semantics::Scattered { pairs, .. }) => pairs.iter().any(|p| !seen.insert(p.0)),
        None => false,
    }
}

/// Where output element `flat` comes from under the correct semantics, e.g.
/// `data[1,0], from indices[1,0] = -2 on axis 0`; `None` when the op is not modelled.
pub fn provenance(subj: &Subject<'_>, flat: usize) -> Option<String> {
    let sem = semantics(subj, &Quirks::default())?;
    let coords = |flat: usize, shape: &[usize]| {
        unravel(flat, shape)
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    match &sem {
        Semantics::Gathered {
            data,
            origin,
            index,
            ..
        } => {
            let (src, pos) = origin.get(flat)?;
            let from = index.describe(*pos);
            Some(match src {
                Some(s) => format!("data[{}], from {from}", coords(*s, data.shape())),
                None => format!("zero, from {from}"),
            })
        }
        Semantics::Scattered {
            base,
            shape,
            updates,
            pairs,
            reduction,
            index,
            ..
        } => {
            let start = if base.is_some() {
                format!("data[{}]", coords(flat, shape))
            } else {
                "0".to_string()
            };
            let hits: Vec<String> = pairs
                .iter()
                .filter(|(d, _, _)| *d == flat)
                .map(|(_, s, pos)| {
                    format!(
                        "updates[{}] ({})",
                        coords(*s, updates.shape()),
                        index.describe(*pos)
                    )
                })
                .collect();
            Some(match (hits.len(), reduction) {
                (0, _) => format!("{start}, no update aimed here"),
                (_, Reduction::None) => {
                    let last = hits.last().cloned().unwrap_or_default();
                    if hits.len() == 1 {
                        last
                    } else {
                        format!("{last}, the last of {} writes", hits.len())
                    }
                }
                (_, r) => format!("{} of {start}, {}", r.name(), hits.join(", ")),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pb::NodeProto;
    use crate::pb::{attribute_proto::AttributeType, AttributeProto};
    use crate::tensor::DType;

    fn f32s(shape: &[usize], v: &[f32]) -> Tensor {
        Tensor::from_elems(
            DType::Float,
            shape.to_vec(),
            v.iter().map(|x| x.to_bits()).collect(),
        )
        .unwrap()
    }

    fn i64s(shape: &[usize], v: &[i64]) -> Tensor {
        Tensor::from_elems(
            DType::Int64,
            shape.to_vec(),
            v.iter().map(|&x| x as u64).collect(),
        )
        .unwrap()
    }

    fn node(op: &str, attrs: &[(&str, i64)], reduction: Option<&str>) -> NodeProto {
        let mut attribute: Vec<AttributeProto> = attrs
            .iter()
            .map(|(n, i)| AttributeProto {
                name: (*n).into(),
                r#type: AttributeType::Int as i32,
                i: Some(*i),
                ..Default::default()
            })
            .collect();
        if let Some(r) = reduction {
            attribute.push(AttributeProto {
                name: "reduction".into(),
                r#type: AttributeType::String as i32,
                s: r.as_bytes().to_vec(),
                ..Default::default()
            });
        }
        NodeProto {
            op_type: op.into(),
            attribute,
            ..Default::default()
        }
    }

    #[test]
    fn every_class_that_reproduces_the_output_is_listed_most_specific_first() {
        // ScatterElements on an axis of size 2 with indices [0, -2]: both write element 0, and the
        // last write (2.0) wins. Keeping the first write (1.0) is first-write-wins; dropping the
        // un-normalised -2 leaves the first write too: both classes reproduce [1, 20].
        let n = node("ScatterElements", &[], None);
        let data = f32s(&[2], &[10.0, 20.0]);
        let idx = i64s(&[2], &[0, -2]);
        let upd = f32s(&[2], &[1.0, 2.0]);
        let subj = Subject {
            op_type: &n.op_type,
            attrs: crate::load::attrs::attrs_of(&n, std::path::Path::new("."), 0),
            domain: "",
            since: 13,
            inputs: vec![Some(&data), Some(&idx), Some(&upd)],
        };
        let reference = f32s(&[2], &[2.0, 20.0]);
        let wrong = f32s(&[2], &[1.0, 20.0]);
        assert_eq!(
            classify_all(&subj, Some(&reference), &wrong),
            vec![BugClass::NegativeNotNormalized, BugClass::FirstWriteWins]
        );
        assert_eq!(
            classify(&subj, Some(&reference), &wrong),
            Some(BugClass::NegativeNotNormalized)
        );
        assert!(classify_all(&subj, Some(&reference), &reference).is_empty());
    }

    #[test]
    fn a_shape_is_hinted_even_where_the_quirk_takes_an_index_out_of_range() {
        // Gather on axis 1 of [2, 3] with indices [2, 0]: the correct output is [2, 2]. A runtime
        // that ignores the axis and clamps gives rows [1, 0] of the data, shape [2, 3]; axis 0 has
        // size 2, so under axis-ignored alone index 2 is out of range, yet the shape is its.
        let n = node("Gather", &[("axis", 1)], None);
        let data = f32s(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let idx = i64s(&[2], &[2, 0]);
        let subj = Subject {
            op_type: &n.op_type,
            attrs: crate::load::attrs::attrs_of(&n, std::path::Path::new("."), 0),
            domain: "",
            since: 13,
            inputs: vec![Some(&data), Some(&idx)],
        };
        let reference = f32s(&[2, 2], &[3.0, 1.0, 6.0, 4.0]);
        let clamped_rows = f32s(&[2, 3], &[4.0, 5.0, 6.0, 1.0, 2.0, 3.0]);
        let found = explain(&subj, Some(&reference), &clamped_rows);
        assert!(found.exact.is_empty());
        assert_eq!(found.same_shape, vec![BugClass::AxisIgnored]);
        // A shape no quirk gives is hinted by none.
        let odd = f32s(&[3, 2], &[0.0; 6]);
        assert!(explain(&subj, Some(&reference), &odd).same_shape.is_empty());
    }

    #[test]
    fn negative_index_read_as_zero_is_recognised() {
        let n = node("Gather", &[], None);
        let data = f32s(&[3], &[1.0, 2.0, 3.0]);
        let idx = i64s(&[2], &[-1, 1]);
        let subj = Subject {
            op_type: &n.op_type,
            attrs: crate::load::attrs::attrs_of(&n, std::path::Path::new("."), 0),
            domain: "",
            since: 13,
            inputs: vec![Some(&data), Some(&idx)],
        };
        let reference = f32s(&[2], &[3.0, 2.0]);
        assert_eq!(
            classify(&subj, Some(&reference), &f32s(&[2], &[1.0, 2.0])),
            Some(BugClass::NegativeNotNormalized)
        );
        assert_eq!(
            classify(&subj, Some(&reference), &f32s(&[2], &[0.0, 2.0])),
            Some(BugClass::NegativeNotNormalized)
        );
        assert_eq!(classify(&subj, Some(&reference), &reference), None);
        assert_eq!(
            classify(&subj, Some(&reference), &f32s(&[2], &[9.0, 2.0])),
            None
        );
        assert_eq!(
            provenance(&subj, 0).unwrap(),
            "data[2], from indices[0] = -1 on axis 0"
        );
    }

    #[test]
    fn quirks_never_panic_on_rank0_tensors() {
        // Forcing axis 0 on a scalar used to index an empty stride list.
        let n = node("ScatterElements", &[], None);
        let scalar = f32s(&[], &[1.0]);
        let idx = i64s(&[], &[0]);
        let subj = Subject {
            op_type: &n.op_type,
            attrs: crate::load::attrs::attrs_of(&n, std::path::Path::new("."), 0),
            domain: "",
            since: 18,
            inputs: vec![Some(&scalar), Some(&idx), Some(&scalar)],
        };
        assert_eq!(classify(&subj, None, &scalar), None);
        let g = node("GatherElements", &[], None);
        let subj = Subject {
            op_type: &g.op_type,
            attrs: crate::load::attrs::attrs_of(&g, std::path::Path::new("."), 0),
            domain: "",
            since: 13,
            inputs: vec![Some(&scalar), Some(&idx)],
        };
        assert_eq!(classify(&subj, None, &scalar), None);
        assert_eq!(provenance(&subj, 0), None);
    }

    #[test]
    fn interpretations_larger_than_the_output_are_never_computed() {
        // Found by fuzzing: an erroring GatherGrad whose shape input asks for 2^40 elements made
        // the diagnosis allocate them. Only outputs the size of the one explained are computed.
        let g = node("GatherGrad", &[], None);
        let shape = i64s(&[1], &[1 << 40]);
        let idx = i64s(&[1], &[-(1 << 41)]);
        let dy = f32s(&[1], &[1.0]);
        let subj = Subject {
            op_type: &g.op_type,
            attrs: crate::load::attrs::attrs_of(&g, std::path::Path::new("."), 0),
            domain: "com.microsoft",
            since: 1,
            inputs: vec![Some(&shape), Some(&idx), Some(&dy)],
        };
        assert_eq!(classify(&subj, None, &dy), None);
        // The same for a Gather whose output would have 2^40 elements.
        let n = node("Gather", &[], None);
        let data = f32s(&[1, 1 << 20], &vec![0.0; 1 << 20]);
        let idx = i64s(&[1 << 20], &vec![0; 1 << 20]);
        let subj = Subject {
            op_type: &n.op_type,
            attrs: crate::load::attrs::attrs_of(&n, std::path::Path::new("."), 0),
            domain: "",
            since: 13,
            inputs: vec![Some(&data), Some(&idx)],
        };
        assert_eq!(classify(&subj, None, &data), None);
    }

    #[test]
    fn out_of_range_classes_are_told_apart() {
        let n = node("Gather", &[], None);
        let data = f32s(&[3], &[1.0, 2.0, 3.0]);
        let idx = i64s(&[2], &[4, 0]);
        let subj = Subject {
            op_type: &n.op_type,
            attrs: crate::load::attrs::attrs_of(&n, std::path::Path::new("."), 0),
            domain: "",
            since: 13,
            inputs: vec![Some(&data), Some(&idx)],
        };
        assert_eq!(
            classify(&subj, None, &f32s(&[2], &[2.0, 1.0])),
            Some(BugClass::OobWrapped)
        );
        assert_eq!(
            classify(&subj, None, &f32s(&[2], &[3.0, 1.0])),
            Some(BugClass::OobClamped)
        );
        assert_eq!(
            classify(&subj, None, &f32s(&[2], &[0.0, 1.0])),
            Some(BugClass::OobZeroFilled)
        );
    }

    #[test]
    fn scatter_classes() {
        let data = f32s(&[1, 3], &[0.0, 0.0, 0.0]);
        let idx = i64s(&[1, 2], &[1, 1]);
        let upd = f32s(&[1, 2], &[5.0, 7.0]);
        let none = node("ScatterElements", &[("axis", 1)], None);
        let subj = Subject {
            op_type: &none.op_type,
            attrs: crate::load::attrs::attrs_of(&none, std::path::Path::new("."), 0),
            domain: "",
            since: 18,
            inputs: vec![Some(&data), Some(&idx), Some(&upd)],
        };
        let reference = f32s(&[1, 3], &[0.0, 7.0, 0.0]);
        assert_eq!(
            classify(&subj, Some(&reference), &f32s(&[1, 3], &[0.0, 5.0, 0.0])),
            Some(BugClass::FirstWriteWins)
        );
        assert_eq!(
            provenance(&subj, 1).unwrap(),
            "updates[0,1] (indices[0,1] = 1 on axis 1), the last of 2 writes"
        );
        assert_eq!(
            provenance(&subj, 0).unwrap(),
            "data[0,0], no update aimed here"
        );
        let add = node("ScatterElements", &[("axis", 1)], Some("add"));
        let subj = Subject {
            op_type: &add.op_type,
            attrs: crate::load::attrs::attrs_of(&add, std::path::Path::new("."), 0),
            domain: "",
            since: 18,
            inputs: vec![Some(&data), Some(&idx), Some(&upd)],
        };
        let reference = f32s(&[1, 3], &[0.0, 12.0, 0.0]);
        assert_eq!(
            classify(&subj, Some(&reference), &f32s(&[1, 3], &[0.0, 7.0, 0.0])),
            Some(BugClass::ReductionIgnored)
        );
        let axis0 = node("ScatterElements", &[("axis", 1)], None);
        let d2 = f32s(&[2, 2], &[0.0; 4]);
        let i2 = i64s(&[1, 1], &[1]);
        let u2 = f32s(&[1, 1], &[9.0]);
        let subj = Subject {
            op_type: &axis0.op_type,
            attrs: crate::load::attrs::attrs_of(&axis0, std::path::Path::new("."), 0),
            domain: "",
            since: 18,
            inputs: vec![Some(&d2), Some(&i2), Some(&u2)],
        };
        let reference = f32s(&[2, 2], &[0.0, 9.0, 0.0, 0.0]);
        assert_eq!(
            classify(
                &subj,
                Some(&reference),
                &f32s(&[2, 2], &[0.0, 0.0, 9.0, 0.0])
            ),
            Some(BugClass::AxisIgnored)
        );
    }

    #[test]
    fn accumulation_order_is_recognised_bit_exactly() {
        // 1 + 1e8 - 1e8 in f32: forward loses the 1, reverse keeps it.
        let data = f32s(&[1], &[0.0]);
        let idx = i64s(&[3, 1], &[0, 0, 0]);
        let upd = f32s(&[3], &[1.0, 1e8, -1e8]);
        let add = node("ScatterND", &[], Some("add"));
        let subj = Subject {
            op_type: &add.op_type,
            attrs: crate::load::attrs::attrs_of(&add, std::path::Path::new("."), 0),
            domain: "",
            since: 18,
            inputs: vec![Some(&data), Some(&idx), Some(&upd)],
        };
        let forward = ((0.0f32 + 1.0) + 1e8) - 1e8;
        let reverse = ((0.0f32 - 1e8) + 1e8) + 1.0;
        assert_ne!(forward, reverse);
        let reference = f32s(&[1], &[forward]);
        assert_eq!(
            classify(&subj, Some(&reference), &f32s(&[1], &[reverse])),
            Some(BugClass::AccumulationOrder)
        );
    }

    #[test]
    fn batch_dims_ignored_changes_the_shape_and_is_recognised() {
        let data = i64s(&[2, 2, 2], &[0, 1, 2, 3, 4, 5, 6, 7]);
        let idx = i64s(&[2, 1], &[1, 0]);
        let n = node("GatherND", &[("batch_dims", 1)], None);
        let subj = Subject {
            op_type: &n.op_type,
            attrs: crate::load::attrs::attrs_of(&n, std::path::Path::new("."), 0),
            domain: "",
            since: 13,
            inputs: vec![Some(&data), Some(&idx)],
        };
        let reference = i64s(&[2, 2], &[2, 3, 4, 5]);
        let ignored = i64s(&[2, 2, 2], &[4, 5, 6, 7, 0, 1, 2, 3]);
        assert_eq!(
            classify(&subj, Some(&reference), &ignored),
            Some(BugClass::BatchDimsIgnored)
        );
        assert_eq!(
            provenance(&subj, 1).unwrap(),
            "data[0,1,1], from indices[0,:] = [1]"
        );
    }

    #[test]
    fn another_domain_computed_as_the_onnx_operator_is_recognised() {
        // OpenVINO's Gather-8 with batch_dims 1: out[b, j] = data[b, indices[b, j]]. ONNX's
        // Gather has no batch_dims: out[i, j, k] = data[i, indices[j, k]], worked by hand.
        let data = i64s(&[2, 3], &[1, 2, 3, 4, 5, 6]);
        let idx = i64s(&[2, 1], &[0, 2]);
        let n = node("Gather", &[("axis", 1), ("batch_dims", 1)], None);
        let subj = Subject {
            op_type: &n.op_type,
            attrs: crate::load::attrs::attrs_of(&n, std::path::Path::new("."), 0),
            domain: "org.openvinotoolkit",
            since: 8,
            inputs: vec![Some(&data), Some(&idx)],
        };
        let reference = i64s(&[2, 1], &[1, 6]);
        let as_onnx = i64s(&[2, 2, 1], &[1, 3, 4, 6]);
        assert_eq!(
            classify(&subj, Some(&reference), &as_onnx),
            Some(BugClass::DomainIgnored)
        );
        assert_eq!(classify(&subj, Some(&reference), &reference), None);
        // An ONNX node is never blamed on its domain.
        let plain = node("Gather", &[("axis", 1)], None);
        let onnx = Subject {
            domain: "",
            since: 13,
            attrs: crate::load::attrs::attrs_of(&plain, std::path::Path::new("."), 0),
            ..subj
        };
        assert!(!classify_all(&onnx, Some(&as_onnx), &reference).contains(&BugClass::DomainIgnored));
    }
}
