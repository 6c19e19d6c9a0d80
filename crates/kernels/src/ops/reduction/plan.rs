//! How an operator names its updates to the walks: the [`Visit`] trait.

use super::deal;
use std::ops::Range;

/// The order in which updates reach the output: calls `f(dst, src)` for each element update, with
/// `dst` a flat offset into the output and `src` one into the updates.
///
/// Plans that can enumerate the updates aimed at a range of the output cheaply override
/// [`Visit::visit_range`] and [`Visit::updates`]; then large scatters run on several threads, each
/// owning a contiguous range of the output and applying the updates aimed there in their order.
/// Every element still receives its updates sequentially in row-major order, so results are
/// bit-identical at every thread count (D8).
///
/// # Memory safety
/// The trait is safe to implement, and crate-private (so sealed to this crate): no walk trusts a
/// plan for memory safety. Destinations and update positions are bounds-checked where the walks
/// index with them, [`Visit::updates`] only bounds the positions asked for, and the split walk's
/// buckets are handed over as [`deal::Buckets`], whose counts only the deal can advance. A plan
/// that breaks the contracts below gives a wrong output or a panic, never undefined behaviour.
pub(crate) trait Visit: Sync {
    /// Calls `f` once per element update, in application order.
    fn visit<F: FnMut(usize, usize)>(&self, f: F);

    /// [`Visit::visit`], also calling `ahead` now and then with the destination of an update a few
    /// steps ahead (unvalidated), so that the caller can prefetch it; plans whose destinations
    /// land at random call it, the default never does.
    fn visit_ahead<F: FnMut(usize, usize), P: FnMut(usize)>(&self, f: F, ahead: P) {
        let _ = ahead;
        self.visit(f)
    }

    /// Calls `f` for the updates whose destination lies in `range`, in application order.
    fn visit_range<F: FnMut(usize, usize)>(&self, range: Range<usize>, mut f: F) {
        self.visit(|d, s| {
            if range.contains(&d) {
                f(d, s)
            }
        })
    }

    /// [`Visit::visit_range`], also calling `ahead(d)` with the destination of an update in
    /// `range` a few updates before `f` gets it (unvalidated; the update's whole grain starts
    /// there), so that the caller can prefetch it. Plans whose updates land at random in large
    /// ranges call it; the default never does.
    fn visit_range_ahead<F: FnMut(usize, usize), P: FnMut(usize)>(
        &self,
        range: Range<usize>,
        f: F,
        ahead: P,
    ) {
        let _ = ahead;
        self.visit_range(range, f)
    }
    /// [`Visit::visit_range`] a batch at a time, when the plan can: calls `f(base, ks, src)` for
    /// batches of the updates aimed at `range`, in application order, where update `src + j`
    /// goes to `base + ks[j]` and a `ks[j]` of [`SKIP`] to nowhere (an index out of range,
    /// flagged as the plan flags it). The walk's loop over a batch then reads two arrays instead
    /// of taking a call per update. Returns false, having called nothing, when the plan cannot;
    /// the default.
    fn visit_range_batched<F: FnMut(usize, &[u32], usize)>(
        &self,
        range: Range<usize>,
        f: F,
    ) -> bool {
        let _ = (range, f);
        false
    }
    /// How many element updates the plan makes, when it supports [`Visit::visit_range`]
    /// efficiently; 0 keeps it on one thread.
    fn updates(&self) -> usize {
        0
    }

    /// Output ranges given to [`Visit::visit_range`] start and end at multiples of this.
    fn grain(&self) -> usize {
        1
    }

    /// Whether [`Visit::visit_range`] reads only the updates aimed at its range (rather than
    /// scanning them all); such plans build the output range by range, in parallel when large.
    fn selective(&self) -> bool {
        false
    }

    /// Whether [`Visit::visit_range`] costs in proportion to its range (it goes straight to the
    /// updates aimed there, rather than scanning every update to pick them out): such plans are
    /// asked for many small, cache-sized ranges, the others for a few per thread.
    fn direct(&self) -> bool {
        false
    }

    /// Writes the destinations of the updates at positions `span` of the application order (the
    /// first [`Visit::updates`] positions in all) into `dst`, one per position, [`SKIP`] for an
    /// update whose index is out of range (flagged as the plan flags it in its walks). Only
    /// called when [`Visit::spans`] is true, so plans saying so must override it.
    fn destinations(&self, span: Range<usize>, dst: &mut [u32]) {
        let _ = span;
        dst.fill(SKIP);
    }

    /// Deals the updates at positions `span`, whose 4-byte words are `vals`, into the split
    /// walk's two buckets as [`deal::deal`] does (below the buckets' split or from it). `dst` is
    /// scratch as long as the span. The default names the destinations ([`Visit::destinations`]) and deals
    /// them; plans whose destinations are their indices do both in one pass
    /// ([`deal::deal_indices`]). Only called when [`Visit::spans`] is true.
    fn deal_split(
        &self,
        span: Range<usize>,
        vals: &[u32],
        buckets: &mut deal::Buckets<'_>,
        dst: &mut [u32],
    ) {
        deal_destinations(self, span, vals, buckets, dst)
    }

    /// Whether [`Visit::destinations`] starts at its span (rather than scanning everything) and
    /// update `i` in the application order reads element `i` of the updates; such plans with many
    /// updates take the split walk, in parallel.
    fn spans(&self) -> bool {
        false
    }
}

/// [`Visit::deal_split`] by way of [`Visit::destinations`]: the default, and the fallback of
/// plans that override it for some layouts only.
pub(crate) fn deal_destinations<V: Visit + ?Sized>(
    plan: &V,
    span: Range<usize>,
    vals: &[u32],
    buckets: &mut deal::Buckets<'_>,
    dst: &mut [u32],
) {
    plan.destinations(span, dst);
    deal::deal(dst, vals, buckets);
}

/// A destination the split walk skips: the update's index was out of range (the plan flags it
/// and the case errors; the output is dropped). Outputs of the split walk are smaller.
pub(crate) const SKIP: u32 = u32::MAX;

/// Plans for the tests of the walks.
#[cfg(test)]
pub(crate) mod fixtures {
    use super::*;

    pub(crate) struct Pairs(pub(crate) Vec<(usize, usize)>);
    impl Visit for Pairs {
        fn visit<F: FnMut(usize, usize)>(&self, mut f: F) {
            for &(d, s) in &self.0 {
                f(d, s);
            }
        }
    }

    pub(crate) fn all_to_zero(n: usize) -> Pairs {
        Pairs((0..n).map(|s| (0, s)).collect())
    }

    /// Updates aimed at `dst[i]` in order (`None`: index out of range), able to start anywhere:
    /// the kind of plan the split walk takes.
    pub(crate) struct Spans(pub(crate) Vec<Option<usize>>);
    impl Visit for Spans {
        fn visit<F: FnMut(usize, usize)>(&self, mut f: F) {
            for (s, d) in self.0.iter().enumerate() {
                if let Some(d) = *d {
                    f(d, s);
                }
            }
        }
        fn destinations(&self, span: Range<usize>, dst: &mut [u32]) {
            for (o, d) in dst.iter_mut().zip(&self.0[span]) {
                *o = d.map_or(SKIP, |d| d as u32);
            }
        }
        fn updates(&self) -> usize {
            self.0.len()
        }
        fn spans(&self) -> bool {
            true
        }
    }

    /// A fixed generator, so that every run sees the same case.
    pub(crate) fn lcg(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed;
        move || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x >> 33
        }
    }

    /// Destinations for `m` updates into `n` elements: heavy duplicates on a few hot elements,
    /// crowds at the range boundaries of 2 and 4 threads, the rest anywhere, and some indices
    /// out of range.
    pub(crate) fn mixed_destinations(n: usize, m: usize, seed: u64) -> Vec<Option<usize>> {
        let mut g = lcg(seed);
        (0..m)
            .map(|_| match g() % 10 {
                0 => Some(g() as usize % 16),
                1 | 2 => Some(n / 2 - 8 + g() as usize % 16),
                3 => Some(n / 4 - 8 + g() as usize % 16),
                4 => Some(n - 1 - g() as usize % 8),
                _ if g() % 50 == 0 => None,
                _ => Some(g() as usize % n),
            })
            .collect()
    }
}
