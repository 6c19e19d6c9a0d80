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

/// Values that exercise the rules D8 leaves to the arithmetic: zeros of both signs and NaN,
/// among a few ordinary values, so that max and min meet ties of -0 and +0 and NaN on either side.
fn special(g: &mut Lcg) -> f32 {
    [-0.0, 0.0, -0.0, 0.0, 1.0, -1.0, 2.5, f32::NAN][(g.next() % 8) as usize]
}

/// `a <red> b` as D8 defines it, written from the definitions rather than from the kernels: add
/// and mul in f32; max and min are IEEE 754-2019 maximum and minimum, the operations that
/// propagate NaN (D8), which also order -0 below +0. numpy's `maximum` documents the same NaN
/// rule and leaves ties of zeros to `x1 >= x2`; f32::total_cmp gives IEEE's order of the zeros.
fn combine(red: &str, a: f32, b: f32) -> f32 {
    use std::cmp::Ordering::*;
    match red {
        "none" => b,
        "add" => a + b,
        "mul" => a * b,
        _ if a.is_nan() || b.is_nan() => f32::NAN,
        "max" => match a.total_cmp(&b) {
            Less => b,
            _ => a,
        },
        _ => match a.total_cmp(&b) {
            Greater => b,
            _ => a,
        },
    }
}

/// Whether a kernel's float output equals the reference's: bit for bit, any NaN equal to any
/// NaN (D9: NaN payloads after arithmetic are not compared).
fn same(got: &[u32], want: &[f32]) -> bool {
    got.len() == want.len()
        && got
            .iter()
            .zip(want)
            .all(|(&g, &w)| g == w.to_bits() || (f32::from_bits(g).is_nan() && w.is_nan()))
}

/// ScatterElements on `dshape` with indices/updates of `ishape` along `axis`, values from `value`.
fn scatter_elements_case_of(
    dshape: &[usize],
    ishape: &[usize],
    axis: usize,
    seed: u64,
    value: fn(&mut Lcg) -> f32,
) {
    let mut g = Lcg(seed);
    let dn: usize = dshape.iter().product();
    let n: usize = ishape.iter().product();
    let data: Vec<f32> = (0..dn).map(|_| value(&mut g)).collect();
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
    let upd: Vec<f32> = (0..n).map(|_| value(&mut g)).collect();
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
        assert!(
            same(&floats(&one), &want),
            "{red}: parallel result differs from the sequential loop, {dshape:?} axis {axis}"
        );
    }
}

/// ScatterElements with ordinary values of far apart magnitudes.
fn scatter_elements_case(dshape: &[usize], ishape: &[usize], axis: usize, seed: u64) {
    scatter_elements_case_of(dshape, ishape, axis, seed, Lcg::float);
}

#[test]
fn scatter_elements_max_min_meet_signed_zeros_and_nan_as_ieee_says() {
    // Small (one thread) and large (the split walk and the range walk on several threads).
    scatter_elements_case_of(&[64], &[4096], 0, 9, special);
    scatter_elements_case_of(&[300_000], &[600_000], 0, 10, special);
    scatter_elements_case_of(&[300, 1024], &[300, 1024], 1, 11, special);
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
        assert!(
            same(&floats(&one), &want),
            "{red}: parallel result differs from the sequential loop"
        );
    }
}

/// Runs a gather at 1, 2, 3 and 8 threads (one thread takes every task in order; 3 and 8 share
/// the tasks unevenly and in no fixed order) and checks every element of each output against
/// `want`, computed by a naive loop.
fn gather_at_every_thread_count(
    op: &str,
    attrs: &[super::testutil::Attr],
    inputs: &[&Tensor],
    want: &[f32],
    what: &str,
) {
    for threads in [1, 2, 3, 8] {
        let out = under(threads, || run(op, 13, attrs.to_vec(), inputs).unwrap());
        let got = floats(&out);
        assert_eq!(got.len(), want.len(), "{what} at {threads} threads");
        // Data movement is exact (D9): bits, element by element.
        if let Some(p) = (0..want.len()).find(|&p| got[p] != want[p].to_bits()) {
            panic!("{what} at {threads} threads: element {p} differs from the naive loop");
        }
    }
}

#[test]
fn large_gathers_equal_a_naive_loop_at_every_thread_count() {
    let mut g = Lcg(5);
    // Rows of 250 floats (1000 bytes): a parallel task takes 65 of them, so 4099 picked rows end
    // in a partial task. Every output below is over the parallel threshold (1 MiB).
    let (rows, cols) = (2048usize, 250usize);
    let data: Vec<f32> = (0..rows * cols).map(|_| g.float()).collect();
    let d = f32s(&[rows, cols], &data);
    let from_back = |k: i64, s: usize| if k < 0 { k + s as i64 } else { k } as usize;
    // Gather on axis 0: whole rows, indices anywhere, half from the back.
    let idx: Vec<i64> = (0..4099)
        .map(|_| (g.next() % (2 * rows as u64)) as i64 - rows as i64)
        .collect();
    let mut want = Vec::with_capacity(idx.len() * cols);
    for &k in &idx {
        let r = from_back(k, rows);
        for c in 0..cols {
            want.push(data[r * cols + c]);
        }
    }
    let i = i64s(&[idx.len()], &idx);
    gather_at_every_thread_count("Gather", &[], &[&d, &i], &want, "Gather axis 0");
    // GatherND with one index per tuple picks the same rows.
    let i = i64s(&[idx.len(), 1], &idx);
    gather_at_every_thread_count("GatherND", &[], &[&d, &i], &want, "GatherND rows");
    // Gather on the last axis: 600 picks from every row.
    let picks: Vec<i64> = (0..600)
        .map(|_| (g.next() % (2 * cols as u64)) as i64 - cols as i64)
        .collect();
    let mut want = Vec::with_capacity(rows * picks.len());
    for r in 0..rows {
        for &k in &picks {
            want.push(data[r * cols + from_back(k, cols)]);
        }
    }
    let i = i64s(&[picks.len()], &picks);
    let axis1 = [int_attr("axis", 1)];
    gather_at_every_thread_count("Gather", &axis1, &[&d, &i], &want, "Gather axis 1");
    // GatherND with pairs: single elements.
    let pairs: Vec<i64> = (0..300_000)
        .flat_map(|_| {
            let r = (g.next() % rows as u64) as i64 - (rows / 2) as i64;
            [r, (g.next() % cols as u64) as i64]
        })
        .collect();
    let want: Vec<f32> = pairs
        .chunks(2)
        .map(|p| data[from_back(p[0], rows) * cols + from_back(p[1], cols)])
        .collect();
    let i = i64s(&[pairs.len() / 2, 2], &pairs);
    gather_at_every_thread_count("GatherND", &[], &[&d, &i], &want, "GatherND elements");
    // GatherElements on axis 0 (the banded path) and axis 1 (rows), indices from the back too.
    for (axis, s) in [(0usize, rows), (1, cols)] {
        let idx: Vec<i64> = (0..rows * cols)
            .map(|_| (g.next() % (2 * s as u64)) as i64 - s as i64)
            .collect();
        let want: Vec<f32> = (0..rows * cols)
            .map(|p| {
                let (r, c) = (p / cols, p % cols);
                let k = from_back(idx[p], s);
                if axis == 0 {
                    data[k * cols + c]
                } else {
                    data[r * cols + k]
                }
            })
            .collect();
        let it = i64s(&[rows, cols], &idx);
        let attrs = [int_attr("axis", axis as i64)];
        let what = format!("GatherElements axis {axis}");
        gather_at_every_thread_count("GatherElements", &attrs, &[&d, &it], &want, &what);
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
