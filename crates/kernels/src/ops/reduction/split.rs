//! The split walk: many updates into a large output, shared by two or four threads that each own
//! a contiguous range of the output, round by round through buckets.

use super::deal;
use super::SKIP;
use crate::ops::fast;
use bytemuck::Pod;
use std::mem::MaybeUninit;
use std::ops::Range;

/// The split walk: `H` threads share the updates of a large output by cutting it into `H`
/// contiguous ranges. Round by round, each of `H` parts of the round's updates (in order) deals
/// its updates into one bucket per range, keeping their order; in the next round's step each
/// range applies those buckets, part by part, on its own thread, while the same thread deals its
/// part of the round after (into the other generation of buckets). Every element thus receives
/// its updates in the plan's order, and results do not depend on the thread count (D8).
pub(super) fn split<W: Pod + Send + Sync, const H: usize>(
    data: &[W],
    upd: &[W],
    plan: Destinations,
    f: &(impl Fn(W, W) -> W + Sync),
) -> Vec<W> {
    let n = data.len();
    // Offsets in the ranges and the vector deal's split are u32.
    assert!(n < SKIP as usize, "split walk output of {n} elements");
    let total = plan.updates;
    // Range h covers [starts[h], starts[h + 1]).
    let starts: [usize; H] = std::array::from_fn(|h| n * h / H);
    let entry = std::mem::size_of::<Entry<W>>();
    // Each bucket can hold a whole part: any part may send all its updates to one range.
    // Each of the two generations of buckets takes about one L2 whatever the input size (see
    // `Caches::split_scratch_bytes`; with a parallel call per round, smaller rounds were slower,
    // but the rounds run as steps of one parallel call).
    let scratch = fast::Caches::get().split_scratch_bytes();
    let part = (scratch / (H * H * entry)).min(total.div_ceil(H)).max(1);
    // gens[g][p][h]: part p's updates for range h, in the bucket's initialised length. Rounds
    // alternate between the two generations. The buckets start empty, not filled: entries are
    // written before they are read, and filling them was a serial step over all the scratch.
    // A bucket takes at most one entry per update of its part; the vector deal's whole-group
    // stores end within that too (see deal::deal's room check).
    let generation = || -> Vec<Part<W, H>> {
        (0..H)
            .map(|_| std::array::from_fn(|_| Vec::with_capacity(part)))
            .collect()
    };
    let mut gens = [generation(), generation()];
    let vector = H == 2 && std::mem::size_of::<W>() == 4 && deal::available();
    let rounds = total.div_ceil(part * H);
    // Deals part p of round k.
    let deal = |k: usize, p: usize, buckets: &mut Part<W, H>| {
        let from = (k * part * H + p * part).min(total);
        let to = (from + part).min(total);
        for b in buckets.iter_mut() {
            b.clear();
        }
        // A bucket takes at most one entry per update of the part: with this room, checked once,
        // the scalar deal below writes without a check per entry.
        assert!(
            buckets.iter().all(|b| b.capacity() >= to - from),
            "split walk buckets smaller than a part"
        );
        let mut cur = [0usize; H];
        // The plan names destinations a batch at a time into a small (L1) buffer.
        let mut dst = [SKIP; DEAL_BATCH];
        if vector {
            let (first, second) = buckets.split_at_mut(1);
            let slots = [entry_slots(&mut first[0]), entry_slots(&mut second[0])];
            // starts[1] < n < SKIP (checked above).
            let mut two = deal::Buckets::new(slots, starts[1] as u32);
            for at in (from..to).step_by(DEAL_BATCH) {
                let len = DEAL_BATCH.min(to - at);
                let words: &[u32] = bytemuck::cast_slice(&upd[at..at + len]);
                (plan.deal)(at..at + len, words, &mut two, &mut dst[..len]);
            }
            let [c0, c1] = two.counts();
            cur[0] = c0;
            cur[1] = c1;
        } else {
            let slots: [*mut Entry<W>; H] = buckets.each_mut().map(|b| b.as_mut_ptr());
            for at in (from..to).step_by(DEAL_BATCH) {
                let len = DEAL_BATCH.min(to - at);
                let dst = &mut dst[..len];
                (plan.of)(at..at + len, dst);
                for (&d, &v) in dst.iter().zip(&upd[at..at + len]) {
                    if d == SKIP {
                        continue;
                    }
                    // The range holding d (how many later ranges start at or before it),
                    // without branches: d is random, and a branch on it would miss half the
                    // time.
                    let mut h = 0;
                    let mut first = 0;
                    for &b in &starts[1..] {
                        let past = d as usize >= b;
                        h += usize::from(past);
                        first = if past { b } else { first };
                    }
                    let c = cur[h];
                    // SAFETY: c counts the entries this loop wrote to bucket h, at most one per
                    // update before this one, so c < to - from <= the bucket's capacity
                    // (asserted above).
                    unsafe { Entry::write(slots[h].add(c), d - first as u32, v) };
                    cur[h] = c + 1;
                }
            }
        }
        for (b, c) in buckets.iter_mut().zip(cur) {
            // SAFETY: entries 0..c of the bucket were written, by the scalar loop above (c <= to
            // - from <= capacity) or by the deal through `deal::Buckets`, whose counts start at 0
            // and only move past entries it wrote within the slots (the spare capacity); entries
            // are plain data with nothing to drop.
            unsafe { b.set_len(c) };
        }
    };
    let mut out: Vec<W> = Vec::with_capacity(n);
    let shared = Lanes {
        out: out.as_mut_ptr(),
        gens: gens.each_mut().map(|g| g.as_mut_ptr()),
    };
    let len = |h: usize| if h + 1 < H { starts[h + 1] } else { n } - starts[h];
    // Step 0: lane h copies range h of the output from `data` and deals part h of round 0.
    // Step k + 1: lane h applies round k's buckets for range h and deals part h of round k + 1
    // into the other generation. Odd lanes apply first, so that while one thread streams
    // indices from memory the other works in cache. The steps run back to back on the same
    // threads (a parallel call per round paid for waking the pool's threads every round).
    fast::par_steps(rounds + 1, H, &|step, h| {
        // In a step, lane h alone writes range h of the output and the buckets of part h in
        // generation `step % 2`; every lane reads the other generation, which no lane writes in
        // this step; par_steps orders the steps.
        // SAFETY: range h is within the output's capacity and lane h's alone (above).
        let range = unsafe { shared.range(starts[h], len(h)) };
        // SAFETY: h < H, and part h of this generation is lane h's alone (above).
        let fill = unsafe { shared.part_mut(step % 2, h) };
        if step == 0 {
            fast::copy_into(range, &data[starts[h]..starts[h] + range.len()]);
            deal(0, h, fill);
            return;
        }
        // SAFETY: step 0 copied every range.
        let range = unsafe { &mut *(range as *mut [MaybeUninit<W>] as *mut [W]) };
        let k = step - 1;
        let apply = |range: &mut [W]| {
            for p in 0..H {
                // SAFETY: see above; generation k % 2 is the one this step does not write.
                let now = unsafe { shared.part(k % 2, p) };
                apply_run(range, &now[h], f);
            }
        };
        if h % 2 == 1 {
            apply(range);
        }
        if k + 1 < rounds {
            deal(k + 1, h, fill);
        }
        if h % 2 == 0 {
            apply(range);
        }
    });
    // SAFETY: step 0 copied every range, and the ranges cover 0..n.
    unsafe { out.set_len(n) };
    out
}

/// The split walk's output and two generations of buckets, shared by the lanes of its steps
/// ([`fast::par_steps`]) as pointers: within a step the lanes write disjoint ranges and parts
/// and read only the generation nobody writes.
struct Lanes<W, const H: usize> {
    out: *mut W,
    gens: [*mut Part<W, H>; 2],
}

// SAFETY: see the struct's doc; the pointers outlive the steps (split owns what they point to).
unsafe impl<W: Send, const H: usize> Sync for Lanes<W, H> {}

impl<W, const H: usize> Lanes<W, H> {
    /// The output elements `start..start + len`.
    ///
    /// # Safety
    /// Within the output's capacity, and used by no other lane while the slice lives.
    #[allow(clippy::mut_from_ref)]
    unsafe fn range(&self, start: usize, len: usize) -> &mut [MaybeUninit<W>] {
        // SAFETY: the caller's promise.
        unsafe { std::slice::from_raw_parts_mut(self.out.add(start).cast(), len) }
    }

    /// Part `p`'s buckets in generation `g`, to deal into.
    ///
    /// # Safety
    /// `p < H`, and no other lane may use the part while the reference lives.
    #[allow(clippy::mut_from_ref)]
    unsafe fn part_mut(&self, g: usize, p: usize) -> &mut Part<W, H> {
        // SAFETY: the caller's promise.
        unsafe { &mut *self.gens[g].add(p) }
    }

    /// Part `p`'s buckets in generation `g`, to apply.
    ///
    /// # Safety
    /// `p < H`, and no lane may write the generation while the reference lives.
    unsafe fn part(&self, g: usize, p: usize) -> &Part<W, H> {
        // SAFETY: the caller's promise.
        unsafe { &*self.gens[g].add(p) }
    }
}

/// One generation of the split walk's buckets for one part: a bucket per range, whose length is
/// the number of entries the round dealt to it.
type Part<W, const H: usize> = [Vec<Entry<W>>; H];

/// The free capacity of a bucket of 4-byte words' entries, as the slots [`deal`] writes.
fn entry_slots<W: Pod>(bucket: &mut Vec<Entry<W>>) -> &mut [deal::Slot] {
    // Holds for the 4-byte words the split walk uses the vector deal for.
    assert!(
        std::mem::size_of::<Entry<W>>() == std::mem::size_of::<deal::Slot>()
            && std::mem::align_of::<Entry<W>>() >= std::mem::align_of::<deal::Slot>(),
        "the vector deal takes 4-byte words"
    );
    let spare = bucket.spare_capacity_mut();
    // SAFETY: same size and compatible alignment (checked above); an Entry of a 4-byte word is
    // repr(C) (offset, then value), the layout of a slot; both are uninitialised memory.
    unsafe { std::slice::from_raw_parts_mut(spare.as_mut_ptr().cast(), spare.len()) }
}

/// An update dealt to a range by the split walk: its offset in the range and its value.
#[derive(Clone, Copy)]
#[repr(C)]
struct Entry<W> {
    off: u32,
    val: W,
}

impl<W: Pod> Entry<W> {
    /// Writes an entry to `at`, with a single 8-byte store for 4-byte words (the compiler wrote
    /// the two halves separately, and dealing is mostly stores).
    ///
    /// # Safety
    /// `at` must be valid for writes of an `Entry<W>`.
    #[inline(always)]
    unsafe fn write(at: *mut Entry<W>, off: u32, val: W) {
        if std::mem::size_of::<W>() == 4 && std::mem::size_of::<Entry<W>>() == 8 {
            // repr(C): off in the first four bytes, val in the next four.
            let val: u32 = bytemuck::pod_read_unaligned(bytemuck::bytes_of(&val));
            let pair: [u32; 2] = [off, val];
            // SAFETY: the entry is 8 bytes with this layout; write_unaligned needs no alignment.
            unsafe { at.cast::<u64>().write_unaligned(bytemuck::cast(pair)) };
        } else {
            // SAFETY: the caller's promise.
            unsafe { at.write(Entry { off, val }) };
        }
    }
}

/// A plan as the split walk sees it: how many updates, and the destinations of a span of them
/// ([`Visit::destinations`]).
#[derive(Clone, Copy)]
pub(super) struct Destinations<'a> {
    pub(super) updates: usize,
    pub(super) of: &'a (dyn Fn(Range<usize>, &mut [u32]) + Sync),
    /// [`Visit::deal_split`].
    pub(super) deal: &'a DealSplit<'a>,
}

/// [`Visit::deal_split`] as a trait object.
type DealSplit<'a> = dyn Fn(Range<usize>, &[u32], &mut deal::Buckets<'_>, &mut [u32]) + Sync + 'a;

/// Applies `(offset, value)` entries to `range` in order, prefetching destinations a few
/// entries ahead (the range is larger than L2).
#[inline(always)]
fn apply_run<W: Copy>(range: &mut [W], run: &[Entry<W>], f: &impl Fn(W, W) -> W) {
    let base = range.as_ptr();
    for (i, e) in run.iter().enumerate() {
        if let Some(a) = run.get(i + ENTRIES_AHEAD) {
            fast::prefetch_line(base.wrapping_add(a.off as usize));
        }
        let c = &mut range[e.off as usize];
        *c = f(*c, e.val);
    }
}

/// Destinations the split walk asks the plan for at a time.
pub(super) const DEAL_BATCH: usize = 512;

/// How far ahead [`apply_run`] prefetches.
const ENTRIES_AHEAD: usize = 16;
