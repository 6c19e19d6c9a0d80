//! Choosing how a plan's updates reach the output ([`Walk`]) and the walks on one thread or by
//! output ranges: [`combine`] is where every fixed-width reduction goes.

use super::split::{split, Destinations, DEAL_BATCH};
use super::{Visit, SKIP};
use crate::ops::fast;
use bytemuck::Pod;
use std::mem::MaybeUninit;

/// How [`combine`] walks a plan's updates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Walk {
    /// Selective plans: the output is copied and updated one cache-sized range at a time (in
    /// parallel when large), each range visiting exactly its own updates.
    Ranges,
    /// Many updates landing anywhere in a large output, from a plan that can start anywhere in
    /// its updates, with threads to share them: [`split`].
    Split,
    /// Anything else: a copy, then one sweep over the updates, prefetching destinations.
    Sweep,
}

impl Walk {
    /// The walk for `plan` on an output of `n` elements of `size` bytes.
    fn of<V: Visit>(plan: &V, n: usize, size: usize) -> Walk {
        let grain = plan.grain();
        if plan.selective() && n > 0 && grain > 0 && n % grain == 0 {
            return Walk::Ranges;
        }
        let many = plan.updates().saturating_mul(size) >= fast::PAR_MIN_BYTES;
        // Smaller outputs stay in one core's L2 anyway.
        let large = n.saturating_mul(size) >= fast::Caches::get().split_min_bytes();
        let threads = rayon::current_num_threads() >= 2;
        if many && large && threads && plan.spans() && n < SKIP as usize {
            return Walk::Split;
        }
        Walk::Sweep
    }
}

/// `data` with the updates of `plan` combined in by `f`, in the plan's order per element.
pub(super) fn combine<W: Pod + Send + Sync, V: Visit>(
    data: &[W],
    upd: &[W],
    plan: &V,
    f: impl Fn(W, W) -> W + Sync,
) -> Vec<W> {
    let n = data.len();
    let size = std::mem::size_of::<W>();
    match Walk::of(plan, n, size) {
        Walk::Ranges => {
            let range = ranges_of(plan, n);
            // Direct plans update each range while it is cached; long ranges are copied past
            // the cache when they are large (see `fast::streams`).
            let stream = !plan.direct() && fast::streams::<W>(n, range);
            let grain_bytes = plan
                .grain()
                .saturating_mul(size)
                .min(GRAIN_PREFETCH_MAX_BYTES);
            let fill = |start: usize, chunk: &mut [MaybeUninit<W>]| {
                let from = &data[start..start + chunk.len()];
                if stream {
                    fast::stream_into(chunk, from);
                } else {
                    fast::copy_into(chunk, from);
                }
                // Reading back this thread's own non-temporal stores needs no fence.
                // SAFETY: the copy wrote every element of `chunk` (copy_into and stream_into
                // write all of it or panic), and MaybeUninit<W> has W's layout.
                let chunk = unsafe { &mut *(chunk as *mut [MaybeUninit<W>] as *mut [W]) };
                let range = start..start + chunk.len();
                let batched = plan.visit_range_batched(range.clone(), |base, ks, at| {
                    // No destination reaches SKIP, so that get_mut refuses it.
                    let from = base - start;
                    let to = chunk.len().min(from.saturating_add(SKIP as usize));
                    let row = &mut chunk[from..to];
                    for (&k, &u) in ks.iter().zip(&upd[at..at + ks.len()]) {
                        if let Some(c) = row.get_mut(k as usize) {
                            *c = f(*c, u);
                        }
                    }
                });
                if !batched {
                    let base = chunk.as_ptr().wrapping_sub(start);
                    plan.visit_range_ahead(
                        range,
                        |d, s| {
                            let c = &mut chunk[d - start];
                            *c = f(*c, upd[s]);
                        },
                        // A destination just streamed out is in memory, not in the cache.
                        |d| fast::prefetch_bytes(base.wrapping_add(d), grain_bytes),
                    );
                }
                true
            };
            // SAFETY: each fill writes its whole chunk before it returns true (above).
            unsafe { fast::build(n, range, fill) }.unwrap_or_default()
        }
        Walk::Split => {
            // The plan is passed as a trait object: it is called once per batch of updates, and
            // this keeps the split walk from being compiled once per plan as well.
            let plan = Destinations {
                updates: plan.updates(),
                of: &|span, dst| plan.destinations(span, dst),
                deal: &|span, vals, buckets, dst| plan.deal_split(span, vals, buckets, dst),
            };
            if rayon::current_num_threads() >= 4 {
                split::<W, 4>(data, upd, plan, &f)
            } else {
                split::<W, 2>(data, upd, plan, &f)
            }
        }
        Walk::Sweep if plan.spans() && n < SKIP as usize => {
            let mut out = fast::copy(data);
            sweep_spans(&mut out, upd, plan, &f);
            out
        }
        Walk::Sweep => {
            let mut out = fast::copy(data);
            // Updates land anywhere in the output: ask for each destination's line a few
            // updates before it is read, so that several misses are in flight at once.
            let o: &mut [W] = &mut out;
            let base = o.as_ptr();
            plan.visit_ahead(
                |d, s| {
                    let (c, u) = (&mut o[d], upd[s]);
                    *c = f(*c, u)
                },
                |d| fast::prefetch_line(base.wrapping_add(d)),
            );
            out
        }
    }
}

/// The range length [`Walk::Ranges`] builds the output by, a multiple of the plan's grain: one
/// grain for direct plans ([`fast::build`] groups them into cache-sized tasks), otherwise a few
/// ranges per thread, each scanning every update once.
fn ranges_of<V: Visit>(plan: &V, n: usize) -> usize {
    let grain = plan.grain();
    if plan.direct() {
        return grain;
    }
    let parts = rayon::current_num_threads() * 4;
    (n / grain).div_ceil(parts).max(1) * grain
}

/// The sweep for plans that name destinations by span ([`Visit::spans`]): destinations come a
/// batch at a time from the plan's (vectorised) [`Visit::destinations`], so the loop that applies
/// them normalises nothing and prefetches from the batch. On many random updates into an output
/// larger than L2 it beats the plan's own walk, whose loop normalised each index twice (once to
/// prefetch).
fn sweep_spans<W: Copy, V: Visit>(out: &mut [W], upd: &[W], plan: &V, f: &impl Fn(W, W) -> W) {
    let total = plan.updates();
    let base = out.as_ptr();
    // buf[..have] holds the destinations of positions [at, at + have).
    let mut buf = [SKIP; SWEEP_AHEAD + DEAL_BATCH];
    let (mut at, mut have) = (0, 0);
    while at < total {
        let len = DEAL_BATCH.min(total - (at + have));
        plan.destinations(at + have..at + have + len, &mut buf[have..have + len]);
        have += len;
        // Keep the last SWEEP_AHEAD for the next round, so that every update but the last few
        // prefetches the destination SWEEP_AHEAD positions later.
        let run = if at + have < total {
            have - SWEEP_AHEAD
        } else {
            have
        };
        for j in 0..run {
            if let Some(&d) = buf[..have].get(j + SWEEP_AHEAD) {
                fast::prefetch_line(base.wrapping_add(d as usize));
            }
            let d = buf[j];
            if d == SKIP {
                continue;
            }
            let c = &mut out[d as usize];
            *c = f(*c, upd[at + j]);
        }
        buf.copy_within(run..have, 0);
        have -= run;
        at += run;
    }
}

/// How much of an update's grain (its slice, for ScatterND) the ranges walk asks for ahead.
const GRAIN_PREFETCH_MAX_BYTES: usize = 512;

/// How far ahead [`sweep_spans`] prefetches.
const SWEEP_AHEAD: usize = 16;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::reduction::plan::fixtures::*;
    use crate::ops::reduction::{apply, Reduction};
    use crate::ops::testutil::under;
    use crate::tensor::{DType, Storage};

    /// A plan that breaks the [`Visit`] contracts in the ways a careless implementation could:
    /// it claims `claimed` updates, names destinations `d(i)` (any u32), and deals nothing at
    /// all when `idle`.
    struct Liar {
        claimed: usize,
        d: fn(usize) -> u32,
        idle: bool,
    }

    impl Visit for Liar {
        fn visit<F: FnMut(usize, usize)>(&self, mut f: F) {
            for s in 0..self.claimed {
                f((self.d)(s) as usize, s);
            }
        }
        fn destinations(&self, span: std::ops::Range<usize>, dst: &mut [u32]) {
            for (o, s) in dst.iter_mut().zip(span) {
                *o = (self.d)(s);
            }
        }
        fn deal_split(
            &self,
            span: std::ops::Range<usize>,
            vals: &[u32],
            buckets: &mut crate::ops::reduction::deal::Buckets<'_>,
            dst: &mut [u32],
        ) {
            if !self.idle {
                crate::ops::reduction::deal_destinations(self, span, vals, buckets, dst)
            }
        }
        fn updates(&self) -> usize {
            self.claimed
        }
        fn spans(&self) -> bool {
            true
        }
    }

    #[test]
    fn plans_that_break_their_contract_get_a_panic_or_a_wrong_output_never_ub() {
        // Large enough for the split walk at 2 and 4 threads (and the batched sweep at 1).
        let (n, m) = (300_000usize, 400_000usize);
        let data = Storage::W32((0..n as u32).collect());
        let upd = Storage::W32(vec![1; m]);
        let run = |threads: usize, plan: &Liar| {
            under(threads, || {
                apply(DType::Int32, Reduction::Add, &data, &upd, plan).unwrap()
            })
        };
        for threads in [1, 2, 4] {
            if threads > 1 {
                let liar = Liar {
                    claimed: m,
                    d: |_| 0,
                    idle: false,
                };
                assert_eq!(under(threads, || Walk::of(&liar, n, 4)), Walk::Split);
            }
            // More updates claimed than there are.
            let liar = Liar {
                claimed: m + 1,
                d: |s| s as u32 % 1000,
                idle: false,
            };
            crate::ops::fast::panics("updates past the end", || run(threads, &liar));
            // Destinations past the output (below SKIP, so not skipped).
            let liar = Liar {
                claimed: m,
                d: |s| 300_000 + s as u32,
                idle: false,
            };
            crate::ops::fast::panics("destinations past the output", || run(threads, &liar));
            let liar = Liar {
                claimed: m,
                d: |_| SKIP - 1,
                idle: false,
            };
            crate::ops::fast::panics("destinations at u32::MAX - 1", || run(threads, &liar));
            // A deal that deals nothing (asked for by the vector deal of two ranges): the buckets
            // stay empty, the output is the data.
            if threads == 2 && crate::ops::reduction::deal::available() {
                let liar = Liar {
                    claimed: m,
                    d: |s| s as u32 % 1000,
                    idle: true,
                };
                assert!(
                    run(threads, &liar) == data,
                    "an idle deal changed the output"
                );
            }
        }
    }

    #[test]
    fn the_split_walk_equals_a_naive_loop_at_every_thread_count() {
        // Over the thresholds of this CPU's caches (1.2 MB of output and 2.8 MB of updates on
        // 1 MiB of L2), and several rounds.
        let caches = fast::Caches::get();
        let n = (caches.split_min_bytes() / 4).max(300_000) + 7;
        let m = n * 7 / 3;
        let dst = mixed_destinations(n, m, 11);
        let plan = Spans(dst.clone());
        assert_eq!(under(1, || Walk::of(&plan, n, 4)), Walk::Sweep);
        assert_eq!(under(2, || Walk::of(&plan, n, 4)), Walk::Split);
        assert!(
            m > 2 * caches.split_scratch_bytes() / (4 * 8),
            "several rounds"
        );
        let mut g = lcg(12);
        // Magnitudes far apart, so that any change of order changes the rounding.
        let mut float = || (g() % 2000) as f32 / 1000.0 * 10f32.powi((g() % 12) as i32 - 4);
        let data: Vec<f32> = (0..n).map(|_| float()).collect();
        let upd: Vec<f32> = (0..m).map(|_| float()).collect();
        let mut want = data.clone();
        for (s, d) in dst.iter().enumerate() {
            if let Some(d) = *d {
                want[d] += upd[s];
            }
        }
        let bits = |v: &[f32]| Storage::W32(v.iter().map(|x| x.to_bits()).collect());
        for threads in [1, 2, 3, 4, 8] {
            let got = under(threads, || {
                apply(
                    DType::Float,
                    Reduction::Add,
                    &bits(&data),
                    &bits(&upd),
                    &plan,
                )
                .unwrap()
            });
            assert!(got == bits(&want), "float add at {threads} threads");
        }
        // 64-bit words: integer multiplication, wrapping.
        let data: Vec<u64> = (0..n as u64).map(|v| v * 3 + 1).collect();
        let upd: Vec<u64> = (0..m as u64).map(|v| v | 1).collect();
        let mut want = data.clone();
        for (s, d) in dst.iter().enumerate() {
            if let Some(d) = *d {
                want[d] = want[d].wrapping_mul(upd[s]);
            }
        }
        for threads in [1, 2, 4] {
            let got = under(threads, || {
                let (d, u) = (Storage::W64(data.clone()), Storage::W64(upd.clone()));
                apply(DType::Int64, Reduction::Mul, &d, &u, &plan).unwrap()
            });
            assert!(
                got == Storage::W64(want.clone()),
                "int64 mul at {threads} threads"
            );
        }
    }

    /// Runs a two-bucket deal into buckets that already hold entries (11 | 22, 33) and have

    #[test]
    fn the_batched_sweep_applies_every_update_in_order_at_any_length() {
        // Lengths around the prefetch distance and the batch, where the carried-over
        // destinations change hands; some destinations out of range, many repeated.
        for m in [
            0, 1, 15, 16, 17, 511, 512, 513, 527, 528, 529, 1024, 1040, 5000,
        ] {
            let n = 37;
            let dst = mixed_destinations(n, m, m as u64 + 3);
            let plan = Spans(dst.clone());
            // Non-commutative in effect: each step shifts the old value, so order shows.
            let f = |a: u64, b: u64| a.rotate_left(5) ^ b;
            let upd: Vec<u64> = (0..m as u64).map(|v| v * 7919 + 1).collect();
            let mut want: Vec<u64> = (0..n as u64).collect();
            for (s, d) in dst.iter().enumerate() {
                if let Some(d) = *d {
                    want[d] = f(want[d], upd[s]);
                }
            }
            let mut got: Vec<u64> = (0..n as u64).collect();
            sweep_spans(&mut got, &upd, &plan, &f);
            assert_eq!(got, want, "{m} updates");
        }
    }
}
