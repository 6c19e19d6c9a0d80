//! Property tests: every kernel against a deliberately naive reference written here, coordinate
//! by coordinate, on random shapes, axes and indices. Data is filled with its own flat offsets, so
//! the expected value at each output coordinate is simply the offset the op should read.

use super::testutil::*;
use super::SpecError;
use crate::tensor::{strides, unravel, Tensor};
use proptest::prelude::*;

fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

fn offset(coords: &[usize], shape: &[usize]) -> usize {
    coords.iter().zip(strides(shape)).map(|(c, s)| c * s).sum()
}

/// `0, 1, 2, ...` as an int64 tensor of `shape`.
fn iota(shape: &[usize]) -> Tensor {
    i64s(shape, &(0..numel(shape) as i64).collect::<Vec<_>>())
}

fn values(t: &Tensor) -> Vec<i64> {
    t.to_i64_vec().unwrap()
}

fn norm(v: i64, s: usize) -> Option<usize> {
    let s = s as i64;
    let n = if v < 0 { v + s } else { v };
    (0..s).contains(&n).then_some(n as usize)
}

/// A shape of rank `lo..=hi` with dims in `0..=4` (mostly non-zero).
fn shape(lo: usize, hi: usize) -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(prop_oneof![1 => Just(0usize), 6 => 1usize..=4], lo..=hi)
}

/// Random index values in `[-s-1, s]`, so some are out of range.
fn raw_indices(n: usize, s: usize) -> impl Strategy<Value = Vec<i64>> {
    let s = s as i64;
    prop::collection::vec(-s - 1..=s, n)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn gather_matches_the_naive_reference(
        (dshape, axis, ishape, idx) in shape(1, 3).prop_flat_map(|d| {
            let r = d.len();
            (Just(d), 0..r, shape(0, 2))
        }).prop_flat_map(|(d, axis, i)| {
            let n = numel(&i);
            let s = d[axis];
            (Just(d), Just(axis), Just(i), raw_indices(n, s))
        })
    ) {
        let data = iota(&dshape);
        let indices = i64s(&ishape, &idx);
        let got = run("Gather", 13, vec![int_attr("axis", axis as i64)], &[&data, &indices]);
        let normalised: Option<Vec<usize>> = idx.iter().map(|&v| norm(v, dshape[axis])).collect();
        match normalised {
            None => prop_assert!(matches!(got, Err(SpecError::Violation(_)))),
            Some(n) => {
                let mut oshape = dshape[..axis].to_vec();
                oshape.extend_from_slice(&ishape);
                oshape.extend_from_slice(&dshape[axis + 1..]);
                let mut want = Vec::new();
                for flat in 0..numel(&oshape) {
                    let c = unravel(flat, &oshape);
                    let q = ishape.len();
                    let i_flat = offset(&c[axis..axis + q], &ishape);
                    let mut src = c[..axis].to_vec();
                    src.push(n[i_flat]);
                    src.extend_from_slice(&c[axis + q..]);
                    want.push(offset(&src, &dshape) as i64);
                }
                let got = got.unwrap();
                prop_assert_eq!(got.shape(), oshape.as_slice());
                prop_assert_eq!(values(&got), want);
            }
        }
    }

    #[test]
    fn gather_elements_matches_the_naive_reference(
        (dshape, axis, ishape, idx) in shape(1, 3).prop_flat_map(|d| {
            let r = d.len();
            (Just(d), 0..r)
        }).prop_flat_map(|(d, axis)| {
            // Off the axis, indices dims are <= data dims; on the axis, free.
            let dims: Vec<BoxedStrategy<usize>> = d.iter().enumerate().map(|(k, &s)| {
                if k == axis { (0usize..=4).boxed() } else { (0..=s).boxed() }
            }).collect();
            (Just(d), Just(axis), dims)
        }).prop_flat_map(|(d, axis, i)| {
            let n = numel(&i);
            let s = d[axis];
            (Just(d), Just(axis), Just(i), raw_indices(n, s))
        })
    ) {
        let data = iota(&dshape);
        let indices = i64s(&ishape, &idx);
        let got = run("GatherElements", 13, vec![int_attr("axis", axis as i64)], &[&data, &indices]);
        let normalised: Option<Vec<usize>> = idx.iter().map(|&v| norm(v, dshape[axis])).collect();
        match normalised {
            None => prop_assert!(matches!(got, Err(SpecError::Violation(_)))),
            Some(n) => {
                let want: Vec<i64> = (0..numel(&ishape)).map(|flat| {
                    let mut c = unravel(flat, &ishape);
                    c[axis] = n[flat];
                    offset(&c, &dshape) as i64
                }).collect();
                prop_assert_eq!(values(&got.unwrap()), want);
            }
        }
    }

    #[test]
    fn scatter_elements_matches_a_row_major_loop(
        (dshape, axis, ishape, idx) in shape(1, 3).prop_flat_map(|d| {
            let r = d.len();
            (Just(d), 0..r)
        }).prop_flat_map(|(d, axis)| {
            let dims: Vec<BoxedStrategy<usize>> = d.iter().enumerate().map(|(k, &s)| {
                if k == axis { (0usize..=4).boxed() } else { (0..=s).boxed() }
            }).collect();
            (Just(d), Just(axis), dims)
        }).prop_flat_map(|(d, axis, i)| {
            let n = numel(&i);
            let s = d[axis];
            (Just(d), Just(axis), Just(i), raw_indices(n, s))
        }),
        reduction in prop::sample::select(vec!["none", "add", "mul", "max", "min"]),
    ) {
        let data = iota(&dshape);
        let upd_vals: Vec<i64> = (0..numel(&ishape) as i64).map(|v| 1000 + 7 * v).collect();
        let updates = i64s(&ishape, &upd_vals);
        let indices = i64s(&ishape, &idx);
        let attrs = vec![int_attr("axis", axis as i64), str_attr("reduction", reduction)];
        let got = run("ScatterElements", 18, attrs, &[&data, &indices, &updates]);
        let normalised: Option<Vec<usize>> = idx.iter().map(|&v| norm(v, dshape[axis])).collect();
        match normalised {
            None => prop_assert!(matches!(got, Err(SpecError::Violation(_)))),
            Some(n) => {
                let mut want: Vec<i64> = (0..numel(&dshape) as i64).collect();
                for flat in 0..numel(&ishape) {
                    let mut c = unravel(flat, &ishape);
                    c[axis] = n[flat];
                    let o = offset(&c, &dshape);
                    let u = upd_vals[flat];
                    want[o] = match reduction {
                        "none" => u,
                        "add" => want[o].wrapping_add(u),
                        "mul" => want[o].wrapping_mul(u),
                        "max" => want[o].max(u),
                        _ => want[o].min(u),
                    };
                }
                prop_assert_eq!(values(&got.unwrap()), want);
            }
        }
    }

    #[test]
    fn gather_nd_matches_the_naive_reference(
        (dshape, b, batch_idx, k, idx) in shape(1, 4).prop_flat_map(|d| {
            let r = d.len();
            (Just(d), 0..r)
        }).prop_flat_map(|(d, b)| {
            let r = d.len();
            (Just(d.clone()), Just(b), shape(0, 2), 1..=(r - b))
        }).prop_flat_map(|(d, b, mid, k)| {
            let mut ishape = d[..b].to_vec();
            ishape.extend_from_slice(&mid);
            ishape.push(k);
            let n = numel(&ishape);
            let bound = d.iter().copied().max().unwrap_or(1);
            (Just(d), Just(b), Just(ishape), Just(k), raw_indices(n, bound))
        })
    ) {
        let ishape = batch_idx;
        let data = iota(&dshape);
        let indices = i64s(&ishape, &idx);
        let got = run("GatherND", 13, vec![int_attr("batch_dims", b as i64)], &[&data, &indices]);
        let q = ishape.len();
        let tuples = numel(&ishape[..q - 1]);
        let mut oshape = ishape[..q - 1].to_vec();
        oshape.extend_from_slice(&dshape[b + k..]);
        let mut ok = true;
        let mut want = Vec::new();
        'outer: for t in 0..tuples {
            let tc = unravel(t, &ishape[..q - 1]);
            let mut src = tc[..b].to_vec();
            for j in 0..k {
                match norm(idx[t * k + j], dshape[b + j]) {
                    Some(v) => src.push(v),
                    None => { ok = false; break 'outer; }
                }
            }
            for rest in 0..numel(&dshape[b + k..]) {
                let mut full = src.clone();
                full.extend(unravel(rest, &dshape[b + k..]));
                want.push(offset(&full, &dshape) as i64);
            }
        }
        if ok {
            let got = got.unwrap();
            prop_assert_eq!(got.shape(), oshape.as_slice());
            prop_assert_eq!(values(&got), want);
        } else {
            prop_assert!(matches!(got, Err(SpecError::Violation(_))));
        }
    }

    #[test]
    fn scatter_nd_matches_a_row_major_loop(
        (dshape, ishape, idx) in shape(1, 3).prop_flat_map(|d| {
            let r = d.len();
            (Just(d), shape(0, 2), 0..=r)
        }).prop_flat_map(|(d, mid, k)| {
            let mut ishape = mid;
            ishape.push(k);
            let n = numel(&ishape);
            let bound = d.iter().copied().max().unwrap_or(1);
            (Just(d), Just(ishape), raw_indices(n, bound))
        }),
        reduction in prop::sample::select(vec!["none", "add", "mul", "max", "min"]),
    ) {
        let q = ishape.len();
        let k = ishape[q - 1];
        let mut ushape = ishape[..q - 1].to_vec();
        ushape.extend_from_slice(&dshape[k..]);
        let data = iota(&dshape);
        let upd_vals: Vec<i64> = (0..numel(&ushape) as i64).map(|v| 1000 + 7 * v).collect();
        let got = run(
            "ScatterND",
            18,
            vec![str_attr("reduction", reduction)],
            &[&data, &i64s(&ishape, &idx), &i64s(&ushape, &upd_vals)],
        );
        let slice = numel(&dshape[k..]);
        let mut want: Vec<i64> = (0..numel(&dshape) as i64).collect();
        let mut ok = true;
        'outer: for t in 0..numel(&ishape[..q - 1]) {
            let mut prefix = Vec::new();
            for j in 0..k {
                match norm(idx[t * k + j], dshape[j]) {
                    Some(v) => prefix.push(v),
                    None => { ok = false; break 'outer; }
                }
            }
            for e in 0..slice {
                let mut full = prefix.clone();
                full.extend(unravel(e, &dshape[k..]));
                let o = offset(&full, &dshape);
                let u = upd_vals[t * slice + e];
                want[o] = match reduction {
                    "none" => u,
                    "add" => want[o].wrapping_add(u),
                    "mul" => want[o].wrapping_mul(u),
                    "max" => want[o].max(u),
                    _ => want[o].min(u),
                };
            }
        }
        if ok {
            prop_assert_eq!(values(&got.unwrap()), want);
        } else {
            prop_assert!(matches!(got, Err(SpecError::Violation(_))));
        }
    }
}
