//! Reductions with duplicate indices are bit-identical at every thread count (issue 5's
//! determinism requirement), and the parallel paths agree with a naive sequential loop written
//! here. The inputs are large enough (over a megabyte of updates) for the kernels to use threads.

use super::testutil::*;
use crate::tensor::{unravel, Tensor};

/// A tiny deterministic generator (no dependency, same sequence everywhere).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    /// Values of very different magnitudes, so that the order of a sum changes its rounding.
    fn float(&mut self) -> f32 {
        let m = (self.next() % 2000) as f32 / 1000.0 - 1.0;
        let e = (self.next() % 12) as i32 - 4;
        m * 10f32.powi(e)
    }
}

fn floats(t: &Tensor) -> Vec<u32> {
    t.elems::<u32>().unwrap().to_vec()
}

fn combine(red: &str, a: f32, b: f32) -> f32 {
    match red {
        "none" => b,
        "add" => a + b,
        "mul" => a * b,
        "max" => {
            if a.is_nan() || b.is_nan() {
                f32::NAN
            } else if a > b || (a == b && b.is_sign_negative()) {
                a
            } else {
                b
            }
        }
        _ => {
            if a.is_nan() || b.is_nan() {
                f32::NAN
            } else if a < b || (a == b && a.is_sign_negative()) {
                a
            } else {
                b
            }
        }
    }
}

/// ScatterElements on `dshape` with indices/updates of `ishape` along `axis`.
fn scatter_elements_case(dshape: &[usize], ishape: &[usize], axis: usize, seed: u64) {
    let mut g = Lcg(seed);
    let dn: usize = dshape.iter().product();
    let n: usize = ishape.iter().product();
    let data: Vec<f32> = (0..dn).map(|_| g.float()).collect();
    // A quarter of the indices count from the back.
    let s = dshape[axis] as i64;
    let idx: Vec<i64> = (0..n)
        .map(|_| {
            let k = (g.next() % s as u64) as i64;
            if g.next() % 4 == 0 {
                k - s
            } else {
                k
            }
        })
        .collect();
    let upd: Vec<f32> = (0..n).map(|_| g.float()).collect();
    let (d, i, u) = (f32s(dshape, &data), i64s(ishape, &idx), f32s(ishape, &upd));
    for red in ["none", "add", "mul", "max", "min"] {
        let attrs = || vec![int_attr("axis", axis as i64), str_attr("reduction", red)];
        let run_at = |t| {
            under(t, || {
                run("ScatterElements", 18, attrs(), &[&d, &i, &u]).unwrap()
            })
        };
        let one = run_at(1);
        for t in [2, 8] {
            assert_eq!(
                floats(&one),
                floats(&run_at(t)),
                "{red} at {t} threads, {dshape:?} axis {axis}"
            );
        }
        // A naive row-major loop.
        let mut want = data.clone();
        let strides = crate::tensor::strides(dshape);
        for p in 0..n {
            let mut c = unravel(p, ishape);
            c[axis] = (if idx[p] < 0 { idx[p] + s } else { idx[p] }) as usize;
            let o: usize = c.iter().zip(&strides).map(|(a, b)| a * b).sum();
            want[o] = combine(red, want[o], upd[p]);
        }
        let want: Vec<u32> = want.iter().map(|v| v.to_bits()).collect();
        assert!(
            floats(&one) == want,
            "{red}: parallel result differs from the sequential loop"
        );
    }
}

#[test]
fn scatter_elements_off_axis_0_is_deterministic() {
    scatter_elements_case(&[64, 1024], &[64, 8192], 1, 1);
    // Over a megabyte of output: rows are built on several threads, a few at a time.
    scatter_elements_case(&[300, 1024], &[300, 1024], 1, 8);
}

#[test]
fn scatter_elements_on_axis_0_is_deterministic() {
    scatter_elements_case(&[1024, 64], &[8192, 64], 0, 2);
}

#[test]
fn scatter_elements_rank1_with_heavy_duplicates_is_deterministic() {
    scatter_elements_case(&[4096], &[600_000], 0, 3);
}

/// Outputs over a megabyte with many updates on axis 0: the walk that splits the output between
/// threads (rank 1, and rows of 64 elements).
#[test]
fn scatter_elements_split_between_threads_is_deterministic() {
    scatter_elements_case(&[300_000], &[600_000], 0, 6);
    scatter_elements_case(&[5000, 64], &[6000, 64], 0, 7);
}

#[test]
fn scatter_nd_slices_are_deterministic() {
    let mut g = Lcg(4);
    // A megabyte of output: built in ranges on several threads.
    let (rows, cols, n) = (16_384usize, 16usize, 65_536usize);
    let data: Vec<f32> = (0..rows * cols).map(|_| g.float()).collect();
    let idx: Vec<i64> = (0..n).map(|_| (g.next() % rows as u64) as i64).collect();
    let upd: Vec<f32> = (0..n * cols).map(|_| g.float()).collect();
    let (d, i, u) = (
        f32s(&[rows, cols], &data),
        i64s(&[n, 1], &idx),
        f32s(&[n, cols], &upd),
    );
    for red in ["none", "add", "mul", "max", "min"] {
        let run_at = |t| {
            under(t, || {
                run(
                    "ScatterND",
                    18,
                    vec![str_attr("reduction", red)],
                    &[&d, &i, &u],
                )
                .unwrap()
            })
        };
        let one = run_at(1);
        for t in [2, 8] {
            assert_eq!(floats(&one), floats(&run_at(t)), "{red} at {t} threads");
        }
        let mut want = data.clone();
        for (t, &r) in idx.iter().enumerate() {
            for c in 0..cols {
                let o = r as usize * cols + c;
                want[o] = combine(red, want[o], upd[t * cols + c]);
            }
        }
        let want: Vec<u32> = want.iter().map(|v| v.to_bits()).collect();
        assert!(
            floats(&one) == want,
            "{red}: parallel result differs from the sequential loop"
        );
    }
}

#[test]
fn large_gathers_match_at_every_thread_count() {
    let mut g = Lcg(5);
    let (rows, cols) = (2048usize, 256usize);
    let data: Vec<f32> = (0..rows * cols).map(|_| g.float()).collect();
    let d = f32s(&[rows, cols], &data);
    let idx: Vec<i64> = (0..4096)
        .map(|_| (g.next() % rows as u64) as i64 - rows as i64 / 2)
        .collect();
    let i = i64s(&[4096], &idx);
    let one = under(1, || run("Gather", 13, vec![], &[&d, &i]).unwrap());
    let two = under(2, || run("Gather", 13, vec![], &[&d, &i]).unwrap());
    assert_eq!(one, two);
    // Spot-check against the definition.
    let out = floats(&one);
    for (j, &k) in idx.iter().enumerate().step_by(97) {
        let k = if k < 0 { k + rows as i64 } else { k } as usize;
        assert_eq!(
            out[j * cols..(j + 1) * cols],
            floats(&d)[k * cols..(k + 1) * cols]
        );
    }
    // GatherElements on axis 0 (the tiled path) and axis 1.
    let ie: Vec<i64> = (0..rows * cols)
        .map(|_| (g.next() % rows as u64) as i64)
        .collect();
    for (axis, s) in [(0usize, rows), (1, cols)] {
        let idx: Vec<i64> = ie.iter().map(|&v| v % s as i64).collect();
        let it = i64s(&[rows, cols], &idx);
        let a = under(1, || {
            run(
                "GatherElements",
                13,
                vec![int_attr("axis", axis as i64)],
                &[&d, &it],
            )
            .unwrap()
        });
        let b = under(8, || {
            run(
                "GatherElements",
                13,
                vec![int_attr("axis", axis as i64)],
                &[&d, &it],
            )
            .unwrap()
        });
        assert_eq!(a, b);
        let out = floats(&a);
        for p in (0..rows * cols).step_by(101) {
            let (r, c) = (p / cols, p % cols);
            let src = if axis == 0 {
                idx[p] as usize * cols + c
            } else {
                r * cols + idx[p] as usize
            };
            assert_eq!(out[p], floats(&d)[src], "axis {axis} at {p}");
        }
    }
}

#[test]
fn an_out_of_range_index_in_a_parallel_gather_reports_the_first_position() {
    let d = f32s(&[1024, 512], &vec![0.0; 1024 * 512]);
    let mut idx = vec![0i64; 4096];
    idx[3000] = 5000;
    idx[100] = -2000;
    let i = i64s(&[4096], &idx);
    for t in [1, 2, 8] {
        let e = rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build()
            .unwrap()
            .install(|| err(run("Gather", 13, vec![], &[&d, &i])));
        assert_eq!(
            e,
            "indices[100] = -2000 is out of range [-1024, 1023] for axis 0 (size 1024)"
        );
    }
}
