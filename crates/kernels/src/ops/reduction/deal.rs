//! The split walk's deal for two ranges and 4-byte words, four updates at a time with AVX2:
//! each group of four entries is left-packed once per range by a permutation chosen from a
//! table by the group's mask, and stored whole: about 6 instructions per update where the scalar
//! deal takes about 18. [`deal_indices`] also reads the plan's indices itself, in the same
//! loop: the indices' loads overlap the deal's work instead of stalling a loop of their own.

use super::SKIP;
use crate::ops::fast::{norm, IndexWords};
use std::mem::MaybeUninit;

/// A bucket entry as the deal writes it: the offset in its range, then the value's word.
pub(crate) type Slot = MaybeUninit<[u32; 2]>;

/// Whether this CPU runs the vector loops (the functions below work anywhere; elsewhere
/// they run a scalar loop, which the split walk's own deal beats).
pub(crate) fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("popcnt")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// The loops [`deal_indices_on`] can run: the tests name each, the walks take the best.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Loop {
    /// One update at a time; runs anywhere.
    Scalar,
    /// Four at a time, by permutation tables (AVX2 and POPCNT).
    Avx2,
    /// Eight at a time, by the compress instruction (AVX-512 F and VL, and a compiler of Rust
    /// 1.89 or newer).
    Avx512,
}

impl Loop {
    /// The fastest loop this CPU (and compiler) runs.
    pub(super) fn best() -> Loop {
        [Loop::Avx512, Loop::Avx2]
            .into_iter()
            .find(|l| l.runs())
            .unwrap_or(Loop::Scalar)
    }

    /// Whether this CPU (and compiler) runs the loop.
    pub(super) fn runs(self) -> bool {
        match self {
            Loop::Scalar => true,
            Loop::Avx2 => available(),
            Loop::Avx512 => available() && crate::ops::fast::avx512(),
        }
    }
}

/// The two buckets one part of a split-walk round deals into, with their counts. A count only
/// moves past an entry the functions of this module have just written, so the entries below
/// the counts of buckets made by [`Buckets::new`] are exactly the ones dealt: what lets the split
/// walk take them as initialised, whatever a plan does with the buckets it is handed.
pub(crate) struct Buckets<'a> {
    slots: [&'a mut [Slot]; 2],
    cur: [usize; 2],
    split: u32,
}

impl<'a> Buckets<'a> {
    /// Empty buckets over `slots`: destinations below `split` go to the first, the others to the
    /// second at their offset from `split`.
    pub(crate) fn new(slots: [&'a mut [Slot]; 2], split: u32) -> Self {
        Buckets {
            slots,
            cur: [0, 0],
            split,
        }
    }

    /// Buckets whose first `cur` entries are already there (for tests that deal after them).
    #[cfg(test)]
    fn resume(slots: [&'a mut [Slot]; 2], split: u32, cur: [usize; 2]) -> Self {
        assert!(cur[0] <= slots[0].len() && cur[1] <= slots[1].len());
        Buckets { slots, cur, split }
    }

    /// How many entries each bucket holds.
    pub(crate) fn counts(&self) -> [usize; 2] {
        self.cur
    }

    /// The buckets' entries as pointers and their counts, once each is known to take `n` more
    /// entries (the only check the deal loops need).
    ///
    /// # Panics
    /// If a bucket cannot take `n` more entries.
    fn room(&mut self, n: usize) -> ([*mut u64; 2], &mut [usize; 2]) {
        for (b, &c) in self.slots.iter().zip(&self.cur) {
            assert!(
                c.checked_add(n).is_some_and(|end| end <= b.len()),
                "split walk bucket overflow"
            );
        }
        let slots = [0, 1].map(|r| self.slots[r].as_mut_ptr().cast::<u64>());
        (slots, &mut self.cur)
    }
}

/// Appends the entry `(d - start of its range, v)` of each update with destination `d` in
/// `dst` and value `v` in `vals` to bucket 0 (`d` below the split) or 1, skipping destinations
/// equal to [`SKIP`].
///
/// # Panics
/// If `dst` and `vals` differ in length, or a bucket cannot take `dst.len()` more entries.
pub(crate) fn deal(dst: &[u32], vals: &[u32], buckets: &mut Buckets<'_>) {
    deal_on(available(), dst, vals, buckets)
}

/// [`deal`], with the vector loop when `vector` (and the CPU has it).
pub(super) fn deal_on(vector: bool, dst: &[u32], vals: &[u32], buckets: &mut Buckets<'_>) {
    assert_eq!(dst.len(), vals.len(), "destinations and values");
    let n = dst.len();
    let split = buckets.split;
    let (slots, cur) = buckets.room(n);
    #[cfg(target_arch = "x86_64")]
    if vector && available() {
        #[cfg(test)]
        tests::VECTOR_CALLS.with(|c| c.set(c.get() + 1));
        // SAFETY: the CPU has AVX2 and POPCNT; dst and vals hold n each; room() checked that
        // each bucket takes n more entries.
        unsafe { x86::deal(dst, vals, split, slots, cur) };
        return;
    }
    let _ = vector;
    for (&d, &v) in dst.iter().zip(vals) {
        // SAFETY: room() checked that each bucket takes n more entries; this loop puts at most n.
        unsafe { put(d, d != SKIP, v, split, slots, cur) };
    }
}

/// [`deal`] for updates whose destinations are `base + k` for their indices `k` in `idx`,
/// normalised against an axis of size `s` ([`norm`]), skipping indices out of range: the
/// plan's loop and the deal in one pass over the indices. Says whether every index was in
/// range.
///
/// # Panics
/// If `idx` and `vals` differ in length, `base + s` does not fit in a u32 below [`SKIP`], or a
/// bucket cannot take `idx.len()` more entries.
pub(crate) fn deal_indices(
    idx: IndexWords<'_>,
    s: usize,
    negatives: bool,
    base: u32,
    vals: &[u32],
    buckets: &mut Buckets<'_>,
) -> bool {
    deal_indices_on(Loop::best(), idx, s, negatives, base, vals, buckets)
}

/// [`deal_indices`] with the loop `with` (the scalar loop when the CPU lacks it).
pub(super) fn deal_indices_on(
    with: Loop,
    idx: IndexWords<'_>,
    s: usize,
    negatives: bool,
    base: u32,
    vals: &[u32],
    buckets: &mut Buckets<'_>,
) -> bool {
    let n = match idx {
        IndexWords::I32(w) => w.len(),
        IndexWords::I64(w) => w.len(),
    };
    assert_eq!(n, vals.len(), "indices and values");
    // Destinations are below base + s: they must not wrap, nor reach SKIP.
    assert!(
        (base as usize)
            .checked_add(s)
            .is_some_and(|end| end <= SKIP as usize),
        "destinations {base} + [0, {s}) do not fit below u32::MAX"
    );
    let split = buckets.split;
    let (slots, cur) = buckets.room(n);
    #[cfg(target_arch = "x86_64")]
    if with != Loop::Scalar && with.runs() {
        #[cfg(test)]
        tests::VECTOR_CALLS.with(|c| c.set(c.get() + 1));
        if with == Loop::Avx512 {
            // SAFETY: runs() saw AVX-512 F and VL (fast::avx512) and POPCNT; idx and vals hold n
            // each; room() checked that each bucket takes n more entries.
            return unsafe {
                x86::deal_indices_wide(idx, n, s, negatives, base, vals, split, slots, cur)
            };
        }
        // SAFETY: the CPU has AVX2 and POPCNT; idx and vals hold n each; room() checked that
        // each bucket takes n more entries.
        return unsafe { x86::deal_indices(idx, n, s, negatives, base, vals, split, slots, cur) };
    }
    let _ = with;
    // SAFETY: room() checked that each bucket takes n more entries.
    unsafe { deal_indices_from(0, idx, n, s, negatives, base, vals, split, slots, cur) }
}

/// The scalar deal of the updates `from..n` (indices and values at the same positions): the
/// loop of CPUs without the vector loops, and the vector loops' tail. Says whether each index
/// was in range.
///
/// # Safety
/// At least n indices and values; each bucket with room for `n - from` entries at its count.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn deal_indices_from(
    from: usize,
    idx: IndexWords<'_>,
    n: usize,
    s: usize,
    negatives: bool,
    base: u32,
    vals: &[u32],
    split: u32,
    slots: [*mut u64; 2],
    cur: &mut [usize; 2],
) -> bool {
    let mut ok = true;
    for (j, &v) in vals.iter().enumerate().take(n).skip(from) {
        let k = match idx {
            IndexWords::I32(w) => i64::from(w[j]),
            IndexWords::I64(w) => w[j],
        };
        let d = norm(k, s, negatives).map(|k| base.wrapping_add(k as u32));
        ok &= d.is_some();
        // SAFETY: the caller's room; this loop puts at most n - from entries.
        unsafe { put(d.unwrap_or(SKIP), d.is_some(), v, split, slots, cur) };
    }
    ok
}

/// Appends one entry, when `keep`.
///
/// # Safety
/// Each bucket must have room at its count.
#[inline(always)]
unsafe fn put(d: u32, keep: bool, v: u32, split: u32, slots: [*mut u64; 2], cur: &mut [usize; 2]) {
    if !keep {
        return;
    }
    let (r, off) = if d >= split { (1, d - split) } else { (0, d) };
    // SAFETY: the caller's promise; entries need no alignment.
    unsafe {
        slots[r]
            .add(cur[r])
            .write_unaligned(u64::from(off) | (u64::from(v) << 32))
    };
    cur[r] += 1;
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{deal_indices_from, put, SKIP};
    use crate::ops::fast::IndexWords;
    use std::arch::x86_64::*;

    /// For each 4-bit mask, the u32 lanes that move the selected 64-bit entries of a group
    /// to its front, in order.
    const PACK: [[u32; 8]; 16] = {
        let mut t = [[0u32; 8]; 16];
        let mut m = 0;
        while m < 16 {
            let (mut lane, mut out) = (0, 0);
            while lane < 4 {
                if m & (1 << lane) != 0 {
                    t[m][2 * out] = 2 * lane as u32;
                    t[m][2 * out + 1] = 2 * lane as u32 + 1;
                    out += 1;
                }
                lane += 1;
            }
            m += 1;
        }
        t
    };

    /// Appends the four entries of destinations `d` and values `v` whose lanes are set in
    /// `keep` to their buckets.
    ///
    /// # Safety
    /// AVX2 and POPCNT; each bucket must have room for 4 entries at its count.
    #[inline]
    #[target_feature(enable = "avx2,popcnt")]
    unsafe fn put4(
        d: __m128i,
        keep: __m128i,
        v: __m128i,
        split: __m128i,
        slots: [*mut u64; 2],
        cur: &mut [usize; 2],
    ) {
        // d >= split, unsigned.
        let past = _mm_cmpeq_epi32(_mm_max_epu32(d, split), d);
        let off = _mm_sub_epi32(d, _mm_and_si128(past, split));
        let e = _mm256_set_m128i(_mm_unpackhi_epi32(off, v), _mm_unpacklo_epi32(off, v));
        let m1 = _mm_movemask_ps(_mm_castsi128_ps(_mm_and_si128(keep, past))) as usize;
        let m0 = _mm_movemask_ps(_mm_castsi128_ps(_mm_andnot_si128(past, keep))) as usize;
        // SAFETY: PACK[m] is in bounds for any 4-bit m; the stores write 4 entries at the
        // counts, where the caller promised room.
        unsafe {
            let p0 = _mm256_loadu_si256(PACK[m0].as_ptr().cast());
            let p1 = _mm256_loadu_si256(PACK[m1].as_ptr().cast());
            _mm256_storeu_si256(
                slots[0].add(cur[0]).cast(),
                _mm256_permutevar8x32_epi32(e, p0),
            );
            _mm256_storeu_si256(
                slots[1].add(cur[1]).cast(),
                _mm256_permutevar8x32_epi32(e, p1),
            );
        }
        cur[0] += m0.count_ones() as usize;
        cur[1] += m1.count_ones() as usize;
    }

    /// [`super::deal`].
    ///
    /// # Safety
    /// AVX2 and POPCNT; `dst` and `vals` of equal length n, each bucket with room for n
    /// entries at its count.
    #[target_feature(enable = "avx2,popcnt")]
    pub unsafe fn deal(
        dst: &[u32],
        vals: &[u32],
        split: u32,
        slots: [*mut u64; 2],
        cur: &mut [usize; 2],
    ) {
        let n = dst.len();
        let at = _mm_set1_epi32(split as i32);
        let skip = _mm_set1_epi32(SKIP as i32);
        let mut j = 0;
        while j + 4 <= n {
            // SAFETY: j + 4 <= n, so both loads are inside the slices; a group's entries
            // go below count + 4 <= the count at the start + n, within the room promised.
            unsafe {
                let d = _mm_loadu_si128(dst.as_ptr().add(j).cast());
                let v = _mm_loadu_si128(vals.as_ptr().add(j).cast());
                let keep = _mm_xor_si128(_mm_cmpeq_epi32(d, skip), _mm_set1_epi32(-1));
                put4(d, keep, v, at, slots, cur);
            }
            j += 4;
        }
        for (&d, &v) in dst[j..].iter().zip(&vals[j..]) {
            // SAFETY: within the room promised.
            unsafe { put(d, d != SKIP, v, split, slots, cur) };
        }
    }

    /// [`super::deal_indices`] for the first `n` indices (at most as many as `vals`).
    ///
    /// # Safety
    /// AVX2 and POPCNT; at least n indices and values, each bucket with room for n entries
    /// at its count.
    #[allow(clippy::too_many_arguments)]
    #[target_feature(enable = "avx2,popcnt")]
    pub unsafe fn deal_indices(
        idx: IndexWords<'_>,
        n: usize,
        s: usize,
        negatives: bool,
        base: u32,
        vals: &[u32],
        split: u32,
        slots: [*mut u64; 2],
        cur: &mut [usize; 2],
    ) -> bool {
        let at = _mm_set1_epi32(split as i32);
        let size = _mm256_set1_epi64x(s as i64);
        // Added to negative indices: the axis size when they count from the back, else 0
        // (they stay negative, out of range).
        let back = _mm256_set1_epi64x(if negatives { s as i64 } else { 0 });
        let first = _mm_set1_epi32(base as i32);
        let zero = _mm256_setzero_si256();
        // The low 32 bits of each 64-bit lane, in the low 128 bits.
        let low = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
        let mut missed = _mm_setzero_si128();
        let mut j = 0;
        while j + 4 <= n {
            // SAFETY: j + 4 <= n, so the loads are inside the slices; a group's entries go
            // below count + 4 <= the count at the start + n, within the room promised.
            unsafe {
                let k = match idx {
                    IndexWords::I64(w) => _mm256_loadu_si256(w.as_ptr().add(j).cast()),
                    IndexWords::I32(w) => {
                        _mm256_cvtepi32_epi64(_mm_loadu_si128(w.as_ptr().add(j).cast()))
                    }
                };
                let k = _mm256_add_epi64(k, _mm256_and_si256(_mm256_cmpgt_epi64(zero, k), back));
                // 0 <= k < s.
                let ok =
                    _mm256_andnot_si256(_mm256_cmpgt_epi64(zero, k), _mm256_cmpgt_epi64(size, k));
                let keep = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(ok, low));
                let d = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(k, low));
                let d = _mm_add_epi32(d, first);
                missed = _mm_or_si128(missed, _mm_xor_si128(keep, _mm_set1_epi32(-1)));
                let v = _mm_loadu_si128(vals.as_ptr().add(j).cast());
                put4(d, keep, v, at, slots, cur);
            }
            j += 4;
        }
        let all_in = _mm_testz_si128(missed, missed) == 1;
        // SAFETY: the groups above put at most j entries, so the room left covers n - j.
        let tail =
            unsafe { deal_indices_from(j, idx, n, s, negatives, base, vals, split, slots, cur) };
        all_in & tail
    }

    /// [`super::deal_indices`] eight updates at a time: each group's entries are built as 64-bit
    /// lanes, packed to the front once per bucket by the compress instruction, and stored whole.
    /// With the indices in cache it is the fastest of the deals: one compress per bucket packs
    /// eight lanes, where the AVX2 loop looks up a permutation for every four.
    ///
    /// # Safety
    /// AVX-512 F and VL and POPCNT (`fast::avx512` and [`super::available`]); at least n
    /// indices and values; each bucket with room for n entries at its count.
    #[rustversion::since(1.89)]
    #[allow(clippy::too_many_arguments)]
    #[target_feature(enable = "avx512f,avx512vl,popcnt")]
    pub unsafe fn deal_indices_wide(
        idx: IndexWords<'_>,
        n: usize,
        s: usize,
        negatives: bool,
        base: u32,
        vals: &[u32],
        split: u32,
        slots: [*mut u64; 2],
        cur: &mut [usize; 2],
    ) -> bool {
        let size = _mm512_set1_epi64(s as i64);
        // Added to negative indices: the axis size when they count from the back, else 0
        // (they stay negative: huge as unsigned, so out of range below).
        let back = _mm512_set1_epi64(if negatives { s as i64 } else { 0 });
        let first = _mm512_set1_epi64(i64::from(base));
        let at = _mm512_set1_epi64(i64::from(split));
        let zero = _mm512_setzero_si512();
        let mut missed: __mmask8 = 0;
        let mut j = 0;
        while j + 8 <= n {
            // SAFETY: j + 8 <= n, so the loads are inside the slices; a group's entries go
            // below count + 8 <= the count at the start + n, within the room promised.
            unsafe {
                let k = match idx {
                    IndexWords::I64(w) => _mm512_loadu_si512(w.as_ptr().add(j).cast()),
                    IndexWords::I32(w) => {
                        _mm512_cvtepi32_epi64(_mm256_loadu_si256(w.as_ptr().add(j).cast()))
                    }
                };
                let k = _mm512_mask_add_epi64(k, _mm512_cmplt_epi64_mask(k, zero), k, back);
                // 0 <= k < s, as one unsigned compare.
                let keep = _mm512_cmplt_epu64_mask(k, size);
                missed |= !keep;
                // Below base + s <= SKIP for the lanes kept (the caller checked).
                let d = _mm512_add_epi64(k, first);
                let past = _mm512_cmpge_epu64_mask(d, at);
                let off = _mm512_mask_sub_epi64(d, past, d, at);
                let v = _mm512_cvtepu32_epi64(_mm256_loadu_si256(vals.as_ptr().add(j).cast()));
                let e = _mm512_or_si512(off, _mm512_slli_epi64::<32>(v));
                let (m0, m1) = (keep & !past, keep & past);
                _mm512_storeu_si512(
                    slots[0].add(cur[0]).cast(),
                    _mm512_maskz_compress_epi64(m0, e),
                );
                _mm512_storeu_si512(
                    slots[1].add(cur[1]).cast(),
                    _mm512_maskz_compress_epi64(m1, e),
                );
                cur[0] += m0.count_ones() as usize;
                cur[1] += m1.count_ones() as usize;
            }
            j += 8;
        }
        // SAFETY: the groups above put at most j entries, so the room left covers n - j.
        let tail =
            unsafe { deal_indices_from(j, idx, n, s, negatives, base, vals, split, slots, cur) };
        (missed == 0) & tail
    }

    /// [`deal_indices_wide`] before Rust 1.89: never called (`fast::avx512` is false).
    ///
    /// # Safety
    /// None needed; it panics.
    #[rustversion::before(1.89)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn deal_indices_wide(
        _idx: IndexWords<'_>,
        _n: usize,
        _s: usize,
        _negatives: bool,
        _base: u32,
        _vals: &[u32],
        _split: u32,
        _slots: [*mut u64; 2],
        _cur: &mut [usize; 2],
    ) -> bool {
        unreachable!("the AVX-512 deal needs Rust 1.89")
    }
}

#[cfg(test)]
mod tests {
    use crate::ops::fast::IndexWords;
    use crate::ops::reduction::deal;
    use crate::ops::reduction::plan::fixtures::lcg;
    use crate::ops::reduction::SKIP;

    thread_local! {
        /// How many times the vector loops ran on this thread: the tests check that the path
        /// they name is the one that ran.
        pub(super) static VECTOR_CALLS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// The paths to test: the scalar loop always, the vector loop where the CPU has it. Without
    /// AVX2 the vector deal cannot run; the test says so on the terminal (written past libtest's
    /// capture) rather than passing as if it had tested it.
    fn index_paths(test: &str) -> Vec<deal::Loop> {
        use deal::Loop;
        let (runs, lacks): (Vec<Loop>, Vec<Loop>) = [Loop::Scalar, Loop::Avx2, Loop::Avx512]
            .into_iter()
            .partition(|l| l.runs());
        if !lacks.is_empty() {
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "{test}: SKIPPED the {lacks:?} index deal (this CPU or compiler lacks it); tested {runs:?}"
            );
        }
        runs
    }

    fn paths(test: &str) -> Vec<bool> {
        if deal::available() {
            vec![false, true]
        } else {
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "{test}: SKIPPED the vector deal (this CPU lacks AVX2 or POPCNT); tested the scalar deal only"
            );
            vec![false]
        }
    }

    /// Runs a two-bucket deal (split at `split`) into buckets that already hold entries (11 | 22,
    /// 33) and have room for `len` more, checks that the vector loop ran exactly when `vector`,
    /// and returns what each bucket holds: entries as `offset | value << 32`.
    fn dealt(
        len: usize,
        split: u32,
        vector: bool,
        deal: impl FnOnce(&mut deal::Buckets<'_>),
    ) -> [Vec<u64>; 2] {
        let held: [&[u64]; 2] = [&[11], &[22, 33]];
        let mut buckets: [Vec<deal::Slot>; 2] = held.map(|h| {
            let mut b = vec![std::mem::MaybeUninit::new([0, 0]); h.len() + len];
            for (s, &e) in b.iter_mut().zip(h) {
                *s = std::mem::MaybeUninit::new([e as u32, (e >> 32) as u32]);
            }
            b
        });
        let before = VECTOR_CALLS.with(|c| c.get());
        let cur = {
            let [b0, b1] = &mut buckets;
            let mut b = deal::Buckets::resume([b0, b1], split, [1, 2]);
            deal(&mut b);
            b.counts()
        };
        let ran = VECTOR_CALLS.with(|c| c.get()) - before;
        assert_eq!(
            ran,
            usize::from(vector),
            "vector loop runs, asked for vector {vector}"
        );
        [0, 1].map(|r| {
            buckets[r][..cur[r]]
                .iter()
                .map(|s| {
                    // SAFETY: the buckets were initialised in full above.
                    let [off, v] = unsafe { s.assume_init() };
                    u64::from(off) | u64::from(v) << 32
                })
                .collect::<Vec<u64>>()
        })
    }

    /// What a two-bucket deal must produce from (destination or None, value) pairs.
    fn naive_deal(updates: impl Iterator<Item = (Option<u32>, u32)>, split: u32) -> [Vec<u64>; 2] {
        let mut want: [Vec<u64>; 2] = [vec![11], vec![22, 33]];
        for (d, v) in updates {
            if let Some(d) = d {
                let (r, off) = if d >= split { (1, d - split) } else { (0, d) };
                want[r].push(u64::from(off) | u64::from(v) << 32);
            }
        }
        want
    }

    #[test]
    fn the_vector_deal_keeps_each_ranges_updates_in_order() {
        let split = 1000u32;
        let mut g = lcg(21);
        for len in [0usize, 1, 3, 4, 5, 7, 8, 63, 64, 65, 512] {
            // Both sides of the split, its edges, and skipped updates.
            let dst: Vec<u32> = (0..len)
                .map(|_| match g() % 8 {
                    0 => SKIP,
                    1 => split,
                    2 => split - 1,
                    3 => 0,
                    _ => (g() % 2000) as u32,
                })
                .collect();
            let vals: Vec<u32> = (0..len as u32).map(|v| v * 31 + 7).collect();
            let want = naive_deal(
                dst.iter()
                    .zip(&vals)
                    .map(|(&d, &v)| ((d != SKIP).then_some(d), v)),
                split,
            );
            for vector in paths("the_vector_deal_keeps_each_ranges_updates_in_order") {
                let got = dealt(len, split, vector, |b| {
                    deal::deal_on(vector, &dst, &vals, b)
                });
                assert_eq!(got, want, "{len} updates, vector {vector}");
            }
        }
    }

    #[test]
    fn the_index_deal_normalises_skips_and_keeps_order() {
        // An axis of 700 at row start 1400, split at 1750: indices on both sides and at the
        // edges of the axis and the split, from the back, out of range by one, by 2^32 (whose
        // low half is in range), and the extremes.
        let (s, base, split) = (700usize, 1400u32, 1750u32);
        let mut g = lcg(5);
        let mut pick = || -> i64 {
            match g() % 12 {
                0 => 0,
                1 => 699,
                2 => 700,
                3 => -1,
                4 => -700,
                5 => -701,
                6 => 349,
                7 => 350,
                8 => (1 << 32) + 3,
                9 => i64::MIN,
                10 => i64::MAX,
                _ => (g() % 1400) as i64 - 700,
            }
        };
        for len in [0usize, 1, 3, 4, 5, 8, 9, 64, 67, 512] {
            let idx: Vec<i64> = (0..len).map(|_| pick()).collect();
            let vals: Vec<u32> = (0..len as u32).map(|v| v * 7 + 1).collect();
            for negatives in [true, false] {
                // Written out here rather than with the kernels' norm().
                let dest = |k: i64| -> Option<u32> {
                    let k = if negatives && k < 0 { k + s as i64 } else { k };
                    (0..s as i64).contains(&k).then(|| base + k as u32)
                };
                let want = naive_deal(idx.iter().zip(&vals).map(|(&k, &v)| (dest(k), v)), split);
                let all_in = idx.iter().all(|&k| dest(k).is_some());
                // int32 indices only where they fit: the rest are int64-only values.
                let narrow: Option<Vec<i32>> = idx.iter().map(|&k| i32::try_from(k).ok()).collect();
                for with in index_paths("the_index_deal_normalises_skips_and_keeps_order") {
                    let vector = with != deal::Loop::Scalar;
                    let mut ok = None;
                    let got = dealt(len, split, vector, |b| {
                        ok = Some(deal::deal_indices_on(
                            with,
                            IndexWords::I64(&idx),
                            s,
                            negatives,
                            base,
                            &vals,
                            b,
                        ))
                    });
                    let what = format!("{len} int64, negatives {negatives}, {with:?}");
                    assert_eq!(got, want, "{what}");
                    assert_eq!(ok, Some(all_in), "{what}");
                    if let Some(narrow) = &narrow {
                        let mut ok = None;
                        let got = dealt(len, split, vector, |b| {
                            ok = Some(deal::deal_indices_on(
                                with,
                                IndexWords::I32(narrow),
                                s,
                                negatives,
                                base,
                                &vals,
                                b,
                            ))
                        });
                        assert_eq!(got, want, "int32 {what}");
                        assert_eq!(ok, Some(all_in), "int32 {what}");
                    }
                }
            }
        }
    }

    #[test]
    fn deals_refuse_values_of_another_length_and_destinations_past_u32() {
        use crate::ops::fast::panics;
        let mut b0 = [std::mem::MaybeUninit::new([0u32; 2]); 8];
        let mut b1 = [std::mem::MaybeUninit::new([0u32; 2]); 8];
        let mut buckets = deal::Buckets::new([&mut b0, &mut b1], 10);
        use deal::Loop;
        for (vector, with) in [
            (false, Loop::Scalar),
            (true, Loop::Avx2),
            (true, Loop::Avx512),
        ] {
            panics("fewer values", || {
                deal::deal_on(vector, &[1, 2, 3], &[0; 2], &mut buckets)
            });
            panics("more values", || {
                deal::deal_on(vector, &[1, 2], &[0; 3], &mut buckets)
            });
            let idx = IndexWords::I64(&[0, 1]);
            panics("fewer index values", || {
                deal::deal_indices_on(with, idx, 4, true, 0, &[0], &mut buckets)
            });
            panics("an axis reaching SKIP", || {
                deal::deal_indices_on(with, idx, 2, true, u32::MAX - 1, &[0; 2], &mut buckets)
            });
            panics("an axis past u32", || {
                deal::deal_indices_on(with, idx, 1 << 33, true, 0, &[0; 2], &mut buckets)
            });
        }
        // Nothing was dealt by the refused calls.
        assert_eq!(buckets.counts(), [0, 0]);
    }

    #[test]
    #[should_panic(expected = "bucket overflow")]
    fn a_deal_refuses_buckets_without_room() {
        let mut small = [std::mem::MaybeUninit::new([0u32; 2]); 3];
        let mut other = [std::mem::MaybeUninit::new([0u32; 2]); 8];
        deal::deal(
            &[1, 2, 3, 4],
            &[0; 4],
            &mut deal::Buckets::new([&mut small, &mut other], 10),
        );
    }
}
