//! The data-movement loops of the gathers for fixed-width elements: index validation fused into
//! the copy (each index is read once), outputs written once into uninitialised memory, and large
//! outputs split over rayon's threads by contiguous output blocks.
//!
//! Fusing validation into the copy keeps decision D3 intact: an out-of-range index makes the
//! kernel return no output at all (the partly written buffer is dropped unread), and the caller
//! then finds the first offending position with a sequential scan, so the message is the same
//! whatever the thread count.

use rayon::prelude::*;
use std::mem::MaybeUninit;

/// Outputs smaller than this are built on the calling thread: spawning costs more than copying.
pub const PAR_MIN_BYTES: usize = 1 << 20;

/// Roughly how many bytes one parallel task writes.
const TASK_BYTES: usize = 1 << 16;

/// An index word: int32 or int64, read as signed.
pub trait IndexWord: Copy + Send + Sync + 'static {
    /// The value, widened.
    fn get(self) -> i64;

    /// A slice of these words as what it is, for loops written per width.
    fn words(s: &[Self]) -> IndexWords<'_>;
}

/// A slice of index words by width (see [`IndexWord::words`]).
pub enum IndexWords<'a> {
    /// int32 words.
    I32(&'a [i32]),
    /// int64 words.
    I64(&'a [i64]),
}

impl IndexWord for i32 {
    #[inline(always)]
    fn get(self) -> i64 {
        i64::from(self)
    }

    fn words(s: &[i32]) -> IndexWords<'_> {
        IndexWords::I32(s)
    }
}

impl IndexWord for i64 {
    #[inline(always)]
    fn get(self) -> i64 {
        self
    }

    fn words(s: &[i64]) -> IndexWords<'_> {
        IndexWords::I64(s)
    }
}

/// Normalises index `k` against an axis of size `s`: negatives count from the back when
/// `negatives` is set. `None` when out of range.
#[inline(always)]
pub fn norm(k: i64, s: usize, negatives: bool) -> Option<usize> {
    let k = if k < 0 && negatives {
        k.wrapping_add(s as i64)
    } else {
        k
    };
    ((k as u64) < s as u64).then_some(k as usize)
}

/// Builds a `total`-element vector by calling `fill(start, chunk)` on disjoint chunks covering
/// it, each a whole number of `row` elements; in parallel when the output is large. `None` when
/// any `fill` returns false (nothing of the vector is kept). `fill` may use [`stream_into`]: each
/// chunk is fenced on the thread that wrote it.
pub fn build<T, F>(total: usize, row: usize, fill: F) -> Option<Vec<T>>
where
    T: Copy + Send + Sync,
    F: Fn(usize, &mut [MaybeUninit<T>]) -> bool + Sync,
{
    let mut out: Vec<T> = Vec::with_capacity(total);
    let spare = &mut out.spare_capacity_mut()[..total];
    let size = std::mem::size_of::<T>().max(1);
    let ok = if total * size >= PAR_MIN_BYTES && row > 0 {
        let rows_per_task = (TASK_BYTES / (row * size)).max(1);
        let grain = rows_per_task * row;
        let base = SharedOut(spare.as_mut_ptr());
        par_tasks(total.div_ceil(grain), &|c| {
            let start = c * grain;
            // SAFETY: chunk c is [start, start + len) within the capacity, and par_tasks calls
            // each c at most once, so no two tasks share an element.
            let chunk = unsafe { base.chunk(start, grain.min(total - start)) };
            let ok = fill(start, chunk);
            stream_fence();
            ok
        })
    } else {
        let ok = fill(0, spare);
        stream_fence();
        ok
    };
    if !ok {
        return None;
    }
    // SAFETY: every element of 0..total was written by `fill`, which returned true for each chunk.
    unsafe { out.set_len(total) };
    Some(out)
}

/// Outputs at least this large are written with non-temporal stores ([`stream_into`]): far larger
/// than the caches, they would only evict what is still to be read, and an ordinary store first
/// reads every destination line it fills (half as much traffic again as the copy itself).
/// Measured on a 32 MiB L3: 64-200 MiB outputs (W1, W7, W8) copy 8-15% faster streamed, a
/// 33 MiB one (W9) 20% slower, since ordinary stores into a buffer reused warm partly hit L3.
pub const STREAM_MIN_BYTES: usize = 48 << 20;

/// Rows shorter than this are copied with ordinary stores even into large outputs: the aligned
/// head and tail would be most of the row.
const STREAM_MIN_ROW_BYTES: usize = 64;

/// Whether copies of `row` elements of `T` into an output of `total` elements should stream.
#[inline]
pub(crate) fn streams<T>(total: usize, row: usize) -> bool {
    let size = std::mem::size_of::<T>();
    total.saturating_mul(size) >= STREAM_MIN_BYTES
        && row.saturating_mul(size) >= STREAM_MIN_ROW_BYTES
}

/// Copies `src` into uninitialised `dst` of the same length with non-temporal stores (SSE2 on
/// x86-64; an ordinary copy elsewhere): the written lines go to memory without being read into
/// the cache first. The stores are weakly ordered, so the thread must call [`stream_fence`]
/// before the memory is handed to another thread ([`build`] does, after each chunk).
#[inline(always)]
pub fn stream_into<T: Copy>(dst: &mut [MaybeUninit<T>], src: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
        let n = std::mem::size_of_val(dst).min(std::mem::size_of_val(src));
        let d = dst.as_mut_ptr().cast::<u8>();
        let s = src.as_ptr().cast::<u8>();
        let head = d.align_offset(16).min(n);
        let body = (n - head) / 16 * 16;
        // SAFETY: head + body <= n, and both slices hold n bytes; they cannot overlap (dst is
        // uninitialised memory of a vector being built, src borrowed from an input). The stores
        // in the loop go to 16-byte aligned addresses, as _mm_stream_si128 requires; SSE2 is
        // part of x86-64.
        unsafe {
            std::ptr::copy_nonoverlapping(s, d, head);
            let mut at = head;
            while at < head + body {
                let v = _mm_loadu_si128(s.add(at).cast::<__m128i>());
                _mm_stream_si128(d.add(at).cast::<__m128i>(), v);
                at += 16;
            }
            std::ptr::copy_nonoverlapping(s.add(at), d.add(at), n - at);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    copy_into(dst, src)
}

/// Orders this thread's non-temporal stores before anything it does next.
#[inline(always)]
pub fn stream_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a store fence has no preconditions; SSE2 is part of x86-64.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

/// Copies `src` into uninitialised `dst` of the same length.
#[inline(always)]
pub fn copy_into<T: Copy>(dst: &mut [MaybeUninit<T>], src: &[T]) {
    debug_assert_eq!(dst.len(), src.len());
    let n = dst.len().min(src.len());
    // SAFETY: both slices hold at least n elements and cannot overlap (dst is uninitialised
    // memory of a vector being built, src borrowed from an input).
    unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst.as_mut_ptr().cast::<T>(), n) }
}

/// Gather: output rows of `inner` elements, row `(o, j)` copied from data row
/// `o * axis_len + norm(idx[j])`.
pub fn gather<T: Copy + Send + Sync, I: IndexWord>(
    src: &[T],
    idx: &[I],
    outer: usize,
    axis_len: usize,
    inner: usize,
    negatives: bool,
) -> Option<Vec<T>> {
    let n = idx.len();
    let total = outer * n * inner;
    if total == 0 {
        // Nothing to copy, but every index must still be valid.
        return idx
            .iter()
            .all(|k| norm(k.get(), axis_len, negatives).is_some())
            .then(Vec::new);
    }
    if inner == 1 {
        // Gathering the last axis: each output row picks single elements from one data row.
        return build(total, n, |start, chunk| {
            for (r, dst) in chunk.chunks_exact_mut(n).enumerate() {
                let base = (start / n + r) * axis_len;
                let row = &src[base..base + axis_len];
                let next = src.get(base + axis_len..base + 2 * axis_len);
                if !pick_row(dst, idx, row, next, negatives) {
                    return false;
                }
            }
            true
        });
    }
    let stream = streams::<T>(total, inner);
    build(total, inner, |start, chunk| {
        let first = start / inner;
        let rows = chunk.len() / inner;
        for (r, dst) in chunk.chunks_exact_mut(inner).enumerate() {
            let row = first + r;
            let (o, j) = (row / n, row % n);
            let Some(k) = norm(idx[j].get(), axis_len, negatives) else {
                return false;
            };
            let s = (o * axis_len + k) * inner;
            // Rows are picked at random: ask for one a few rows ahead while copying this one.
            if r + AHEAD < rows {
                let ahead = row + AHEAD;
                if let Some(k) = norm(idx[ahead % n].get(), axis_len, negatives) {
                    prefetch(src, ((ahead / n) * axis_len + k) * inner, inner);
                }
            }
            if stream {
                stream_into(dst, &src[s..s + inner]);
            } else {
                copy_into(dst, &src[s..s + inner]);
            }
        }
        true
    })
}

/// One output row of a last-axis gather: `dst[j] = row[norm(idx[j])]`; false on an index out of
/// range. The picks land anywhere in the row, which defeats the hardware prefetcher, but the next
/// output row reads `next`, the data row right after this one: when the picks are dense enough to
/// need most of its lines (at least one pick per line) and the row is long, its lines are
/// prefetched one at a time, spread evenly over this row's picks.
#[inline(always)]
fn pick_row<T: Copy, I: IndexWord>(
    dst: &mut [MaybeUninit<T>],
    idx: &[I],
    row: &[T],
    next: Option<&[T]>,
    negatives: bool,
) -> bool {
    let s = row.len();
    let lines = std::mem::size_of_val(row).div_ceil(64);
    let ahead = next.filter(|_| lines >= ROW_AHEAD_MIN_LINES && idx.len() >= lines);
    let seg = match ahead {
        Some(_) => idx.len() / lines,
        None => idx.len(),
    }
    .max(1);
    for (line, (dst, idx)) in dst.chunks_mut(seg).zip(idx.chunks(seg)).enumerate() {
        if let Some(next) = ahead.filter(|_| line < lines) {
            prefetch_bytes(next.as_ptr().cast::<u8>().wrapping_add(line * 64), 64);
        }
        for (d, k) in dst.iter_mut().zip(idx) {
            // Indexing the row, whose length is the bound just checked, lets the compiler drop
            // the second bounds check.
            let Some(k) = norm(k.get(), s, negatives) else {
                return false;
            };
            d.write(row[k]);
        }
    }
    true
}

/// Rows shorter than this many cache lines (4 KiB) are left to the hardware prefetcher.
const ROW_AHEAD_MIN_LINES: usize = 64;

/// How many rows ahead the random-row copies prefetch.
const AHEAD: usize = 4;

/// How many slices ahead GatherND prefetches its sources. Slices are short (W7: 256 bytes), so
/// each copy takes less time than a trip to memory: more must be in flight than for rows.
/// Measured on W7: 4 ahead 7.5 ms, 8 ahead 7.0, 12 ahead 7.3, 16 ahead 7.5.
const SLICES_AHEAD: usize = 8;

/// How many rows ahead the column-band loops of GatherElements prefetch their strips.
const STRIPS_AHEAD: usize = 4;

/// The size of the data band one GatherElements task packs and works through: about a typical
/// L2. Measured on W4 (f32 [4096, 4096], axis 0): 256 KiB bands are half as fast (more strips of
/// indices and output to start), 4 MiB bands spill out of cache.
const BAND_BYTES: usize = 512 << 10;

/// Bands taller than this (a huge axis) are read in place rather than packed.
const PACK_MAX_BYTES: usize = 4 << 20;

/// Hints that `len` elements of `src` from `at` will be read soon (the first lines of the block;
/// the hardware prefetcher follows a sequential run once it starts).
#[inline(always)]
fn prefetch<T>(src: &[T], at: usize, len: usize) {
    if at < src.len() {
        prefetch_bytes(
            src[at..].as_ptr(),
            (len * std::mem::size_of::<T>()).min(256),
        );
    }
}

/// Hints that the cache line holding `p` will be used soon.
#[inline(always)]
pub(crate) fn prefetch_line<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; it never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast::<i8>())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Hints that the `bytes` from `p` will be used soon, one request per cache line.
#[inline(always)]
pub(crate) fn prefetch_bytes<T>(p: *const T, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let p = p.cast::<i8>();
        for off in (0..bytes).step_by(64) {
            // SAFETY: prefetching is a hint; it never faults, whatever the address.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                    p.wrapping_add(off),
                )
            };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, bytes);
}

/// GatherElements where indices and data agree on every dim but the axis: the output is
/// `[outer, len, inner]` (len = indices' axis dim), `out[o, i, m] = data[o, norm(idx[o, i, m]), m]`.
pub fn gather_elements<T: Copy + Send + Sync, I: IndexWord>(
    src: &[T],
    idx: &[I],
    outer: usize,
    len: usize,
    axis_len: usize,
    inner: usize,
) -> Option<Vec<T>> {
    let total = outer * len * inner;
    if total == 0 {
        return Some(Vec::new());
    }
    if inner == 1 {
        // The axis is the last dim: each output row reads within one data row.
        return build(total, len, |start, chunk| {
            let mut pos = start;
            for dst in chunk.chunks_exact_mut(len) {
                let base = (pos / len) * axis_len;
                let row = &src[base..base + axis_len];
                let next = src.get(base + axis_len..base + 2 * axis_len);
                if !pick_row(dst, &idx[pos..pos + len], row, next, true) {
                    return false;
                }
                pos += len;
            }
            true
        });
    }
    // Otherwise the element of output row (o, i) at column m comes from data row
    // (o, idx[o, i, m]) at the same column m: rows far apart, columns in step. Each task takes a
    // band of columns through every row, so the data lines of that band stay in cache while all
    // the output rows read from them; tasks write disjoint columns of the output.
    //
    // The band's lines sit a whole data row apart, and rows are often a power of two long: their
    // addresses then share their low bits and compete for a handful of cache sets (a 16 KiB row
    // stride leaves an 8-way L2 about 8 KiB of the band). So the task first packs its band into a
    // dense scratch table (about the size of L2) and gathers from that.
    let size = std::mem::size_of::<T>().max(1);
    let band = (BAND_BYTES / (axis_len.max(1) * size))
        .clamp(16, inner.max(16))
        .next_multiple_of(16)
        .min(inner);
    // A band spanning whole rows is dense already; a band too tall to pack is read in place.
    let pack = band < inner && axis_len * band * size <= PACK_MAX_BYTES;
    let bands: Vec<(usize, usize, usize)> = (0..outer)
        .flat_map(|o| {
            (0..inner)
                .step_by(band)
                .map(move |t0| (o, t0, (t0 + band).min(inner)))
        })
        .collect();
    let idx_size = std::mem::size_of::<I>();
    let mut out: Vec<T> = Vec::with_capacity(total);
    let dst = SharedOut(out.spare_capacity_mut().as_mut_ptr());
    let fill = |scratch: &mut Vec<T>, &(o, t0, t1): &(usize, usize, usize)| -> bool {
        let block = &src[o * axis_len * inner..(o + 1) * axis_len * inner];
        let w = t1 - t0;
        // Element (k, m) of the band is table[k * stride + m - first].
        let (table, stride, first) = if pack {
            scratch.clear();
            for k in 0..axis_len {
                let s = k * inner + t0;
                if k + STRIPS_AHEAD < axis_len {
                    prefetch_bytes(
                        block.as_ptr().wrapping_add(s + STRIPS_AHEAD * inner),
                        w * size,
                    );
                }
                scratch.extend_from_slice(&block[s..s + w]);
            }
            (&scratch[..], w, t0)
        } else {
            (block, inner, 0)
        };
        for i in 0..len {
            let row = (o * len + i) * inner;
            // The strips of indices and output this band takes from each row are far apart
            // (a whole row each); the hardware prefetchers do not follow them, so ask for the
            // strips a few rows ahead while this one is copied.
            if i + STRIPS_AHEAD < len {
                let ahead = row + STRIPS_AHEAD * inner + t0;
                prefetch_bytes(idx.as_ptr().wrapping_add(ahead), w * idx_size);
                prefetch_bytes(dst.0.wrapping_add(ahead), w * size);
            }
            for m in t0..t1 {
                let Some(k) = norm(idx[row + m].get(), axis_len, true) else {
                    return false;
                };
                // SAFETY: row + m < total (o < outer, i < len, m < inner) and no other task
                // writes column m of this row, since bands are disjoint.
                unsafe { dst.write(row + m, table[k * stride + m - first]) };
            }
        }
        true
    };
    let ok = if total * size >= PAR_MIN_BYTES {
        // One scratch table per thread, reused by its tasks (the mutexes are never contended).
        let threads = rayon::current_num_threads();
        let scratch: Vec<std::sync::Mutex<Vec<T>>> =
            (0..=threads).map(|_| Default::default()).collect();
        par_tasks(bands.len(), &|b| {
            let t = rayon::current_thread_index()
                .unwrap_or(threads)
                .min(threads);
            let mut s = scratch[t].lock().unwrap_or_else(|e| e.into_inner());
            fill(&mut s, &bands[b])
        })
    } else {
        let mut scratch = Vec::new();
        bands.iter().all(|b| fill(&mut scratch, b))
    };
    if !ok {
        return None;
    }
    // SAFETY: the bands cover every (o, i, m) of the output once, and all succeeded.
    unsafe { out.set_len(total) };
    Some(out)
}

/// The spare capacity of an output vector, written at disjoint offsets by several threads.
struct SharedOut<T>(*mut MaybeUninit<T>);

// SAFETY: tasks write disjoint elements, and the vector is not touched until they finish.
unsafe impl<T: Send> Send for SharedOut<T> {}
unsafe impl<T: Send> Sync for SharedOut<T> {}

impl<T> SharedOut<T> {
    /// # Safety
    /// `at` must be within the capacity, and no other thread may write it.
    #[inline(always)]
    unsafe fn write(&self, at: usize, v: T) {
        unsafe { (*self.0.add(at)).write(v) };
    }

    /// The `len` elements from `start`.
    ///
    /// # Safety
    /// They must be within the capacity, and no other thread may use them while the slice lives.
    #[allow(clippy::mut_from_ref)]
    #[inline(always)]
    unsafe fn chunk(&self, start: usize, len: usize) -> &mut [MaybeUninit<T>] {
        unsafe { std::slice::from_raw_parts_mut(self.0.add(start), len) }
    }
}

/// Runs `task(i)` for every `i` in `0..tasks` on rayon's threads, and says whether every call
/// returned true (after a false, tasks not yet started may be skipped). Each `i` is run at most
/// once.
///
/// Every parallel loop of the kernels goes through this one non-generic function, so rayon's
/// machinery is compiled once instead of once per kernel instantiation: instantiated for each
/// element type, reduction and plan, it had made each debug test binary 600 MB.
pub fn par_tasks(tasks: usize, task: &(dyn Fn(usize) -> bool + Sync)) -> bool {
    (0..tasks).into_par_iter().all(task)
}

/// Runs `task(step, lane)` for every step in `0..steps` and lane in `0..width`, steps in order:
/// no task of a step starts before every task of the step before has returned. Up to `width`
/// of rayon's threads take part; between steps they spin (then yield) instead of returning to
/// the pool, which for short steps costs far less than a parallel call per step.
///
/// It cannot deadlock when fewer threads show up (the pool is busy elsewhere, or has one
/// thread): tasks are claimed in order, and a thread only ever waits for tasks claimed before
/// its own, which are running on threads that do not wait for it. A panicking task makes the
/// others stop and the panic reach the caller.
pub fn par_steps(steps: usize, width: usize, task: &(dyn Fn(usize, usize) + Sync)) {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let total = steps.saturating_mul(width);
    let (next, done, failed) = (
        AtomicUsize::new(0),
        AtomicUsize::new(0),
        AtomicBool::new(false),
    );
    // Marks the walk failed if the task unwinds.
    struct Poison<'a>(&'a AtomicBool);
    impl Drop for Poison<'_> {
        fn drop(&mut self) {
            if std::thread::panicking() {
                self.0.store(true, Ordering::Relaxed);
            }
        }
    }
    par_tasks(width.min(total), &|_| loop {
        let t = next.fetch_add(1, Ordering::Relaxed);
        if t >= total {
            return true;
        }
        // Every task of the previous steps: t's step times the width.
        let before = t - t % width;
        let mut spins = 0u32;
        // Acquire: pairs with the Release below, so the earlier tasks' writes are visible.
        while done.load(Ordering::Acquire) < before {
            if failed.load(Ordering::Relaxed) {
                return false;
            }
            spins = spins.saturating_add(1);
            if spins < SPINS_BEFORE_YIELD {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        let poison = Poison(&failed);
        task(t / width, t % width);
        std::mem::forget(poison);
        done.fetch_add(1, Ordering::Release);
    });
}

/// How many times [`par_steps`] spins on a step's barrier before it yields its CPU.
const SPINS_BEFORE_YIELD: u32 = 1 << 12;

/// GatherND: each of `batches * tuples` index tuples of length `k` selects a slice of `slice`
/// elements from its batch block of `block` elements; `dims` are the k data dims indexed.
pub fn gather_nd<T: Copy + Send + Sync>(
    src: &[T],
    idx: &[i64],
    dims: &[usize],
    tuples: usize,
    block: usize,
    slice: usize,
    total: usize,
) -> Option<Vec<T>> {
    let k = dims.len();
    let strides = crate::tensor::strides(dims);
    let offset = |t: usize| -> Option<usize> {
        let mut off = 0;
        for j in 0..k {
            off += norm(idx[t * k + j], dims[j], true)? * strides[j];
        }
        Some(off)
    };
    if total == 0 {
        return (0..idx.len() / k.max(1))
            .all(|t| offset(t).is_some())
            .then(Vec::new);
    }
    let stream = streams::<T>(total, slice);
    build(total, slice, |start, chunk| {
        let first = start / slice;
        let rows = chunk.len() / slice;
        // Slice starts are worked out a batch at a time, each index tuple read once (the copy
        // loop used to normalise every tuple twice, once to prefetch it); each batch also works
        // out the first few of the next, so that prefetching never pauses at a batch's end.
        let mut at = [0usize; SLICE_BATCH + SLICES_AHEAD];
        let mut here = Batch::of(first, tuples, block);
        for r0 in (0..rows).step_by(SLICE_BATCH) {
            let n = SLICE_BATCH.min(rows - r0);
            let named = (n + SLICES_AHEAD).min(rows - r0);
            let mut b = here;
            for (j, a) in at[..named].iter_mut().enumerate() {
                if j == n {
                    here = b;
                }
                *a = match offset(first + r0 + j) {
                    Some(off) => b.base + off * slice,
                    // Validated when its own batch comes; here only not prefetched.
                    None if j >= n => usize::MAX,
                    None => return false,
                };
                b.step(tuples, block);
            }
            if named == n {
                here = b;
            }
            if r0 == 0 {
                // The task's first slices, which the loop names too late.
                for &a in &at[..SLICES_AHEAD.min(n)] {
                    prefetch(src, a, slice);
                }
            }
            let rows = chunk[r0 * slice..(r0 + n) * slice].chunks_exact_mut(slice);
            for (j, dst) in rows.enumerate() {
                if j + SLICES_AHEAD < named {
                    prefetch(src, at[j + SLICES_AHEAD], slice);
                }
                let s = at[j];
                if stream {
                    stream_into(dst, &src[s..s + slice]);
                } else {
                    copy_into(dst, &src[s..s + slice]);
                }
            }
        }
        true
    })
}

/// Slices whose starts [`gather_nd`] works out at a time.
const SLICE_BATCH: usize = 256;

/// Where a GatherND slice's batch block starts, `(t / tuples) * block` for slice `t`, kept up to
/// date one slice at a time: a division per slice cost more than the copy of a short slice.
#[derive(Clone, Copy)]
struct Batch {
    /// The batch block's first element.
    base: usize,
    /// Slices left in the batch, this one included.
    left: usize,
}

impl Batch {
    /// The batch of slice `t`; `tuples` > 0.
    fn of(t: usize, tuples: usize, block: usize) -> Batch {
        Batch {
            base: (t / tuples) * block,
            left: tuples - t % tuples,
        }
    }

    /// Moves to the next slice.
    #[inline(always)]
    fn step(&mut self, tuples: usize, block: usize) {
        self.left -= 1;
        if self.left == 0 {
            self.left = tuples;
            self.base += block;
        }
    }
}

/// A copy of `src`, in parallel when large (a scatter's starting point).
pub fn copy<T: Copy + Send + Sync>(src: &[T]) -> Vec<T> {
    let stream = streams::<T>(src.len(), src.len());
    build(src.len(), 1, |start, chunk| {
        if stream {
            stream_into(chunk, &src[start..start + chunk.len()]);
        } else {
            copy_into(chunk, &src[start..start + chunk.len()]);
        }
        true
    })
    .unwrap_or_default()
}

/// Writes `base + k` for each index `k` of `idx`, normalised against an axis of size `s` (see
/// [`norm`]), into `dst` (as long as `idx`), or `skip` where `k` is out of range; says whether
/// every index was in range. `base + s` must fit in a u32.
///
/// Large scatters spend a third of their time here, so the loop is written to vectorise (selects,
/// no early exit), and on x86-64 runs as AVX2 code where the CPU has it: 64-bit compares need
/// SSE4.2 at least, and the portable build gets plain x86-64, where this loop stays scalar and
/// 3-4x slower.
pub fn destinations<I: IndexWord>(
    dst: &mut [u32],
    idx: &[I],
    s: usize,
    negatives: bool,
    base: usize,
    skip: u32,
) -> bool {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, the one requirement of this function.
        return unsafe { destinations_avx2(dst, idx, s, negatives, base, skip) };
    }
    destinations_loop(dst, idx, s, negatives, base, skip)
}

/// [`destinations`] compiled for AVX2.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn destinations_avx2<I: IndexWord>(
    dst: &mut [u32],
    idx: &[I],
    s: usize,
    negatives: bool,
    base: usize,
    skip: u32,
) -> bool {
    destinations_loop(dst, idx, s, negatives, base, skip)
}

#[inline(always)]
fn destinations_loop<I: IndexWord>(
    dst: &mut [u32],
    idx: &[I],
    s: usize,
    negatives: bool,
    base: usize,
    skip: u32,
) -> bool {
    debug_assert_eq!(dst.len(), idx.len());
    let (s, base) = (s as i64, base as u32);
    let mut bad = 0u32;
    for (d, &k) in dst.iter_mut().zip(idx) {
        let k = k.get();
        let k = if negatives && k < 0 {
            k.wrapping_add(s)
        } else {
            k
        };
        let ok = k >= 0 && k < s;
        *d = if ok {
            base.wrapping_add(k as u32)
        } else {
            skip
        };
        bad |= u32::from(!ok);
    }
    bad == 0
}

/// Whether every index is in range for an axis of size `s` (in parallel when there are many).
pub fn all_valid<I: IndexWord>(idx: &[I], s: usize, negatives: bool) -> bool {
    let ok = |c: &[I]| c.iter().all(|k| norm(k.get(), s, negatives).is_some());
    if std::mem::size_of_val(idx) >= PAR_MIN_BYTES {
        const CHUNK: usize = 1 << 16;
        par_tasks(idx.len().div_ceil(CHUNK), &|c| {
            ok(&idx[c * CHUNK..idx.len().min((c + 1) * CHUNK)])
        })
    } else {
        ok(idx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fixed LCG, so the indices are the same every run.
    fn lcg(n: usize, seed: u64) -> impl Iterator<Item = u64> {
        let mut x = seed;
        (0..n).map(move |_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x >> 33
        })
    }

    /// Runs par_steps and returns, for every task in the order they started, (step, lane, how
    /// many tasks had finished when it started).
    fn record_steps(steps: usize, width: usize) -> Vec<(usize, usize, usize)> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Mutex;
        let finished = AtomicUsize::new(0);
        let log = Mutex::new(Vec::new());
        par_steps(steps, width, &|step, lane| {
            let seen = finished.load(Ordering::SeqCst);
            log.lock().unwrap().push((step, lane, seen));
            // Long enough for another thread to start the next task, were it allowed to.
            std::thread::sleep(std::time::Duration::from_micros(200));
            finished.fetch_add(1, Ordering::SeqCst);
        });
        log.into_inner().unwrap()
    }

    #[test]
    fn par_steps_runs_every_task_once_and_never_ahead_of_its_step() {
        use crate::ops::testutil::under;
        for threads in [1, 2, 3, 8] {
            for (steps, width) in [(0, 2), (1, 1), (5, 2), (4, 3), (3, 8)] {
                let log = under(threads, || record_steps(steps, width));
                let mut ran: Vec<(usize, usize)> = log.iter().map(|&(s, l, _)| (s, l)).collect();
                ran.sort_unstable();
                let all: Vec<(usize, usize)> = (0..steps)
                    .flat_map(|s| (0..width).map(move |l| (s, l)))
                    .collect();
                assert_eq!(ran, all, "{threads} threads, {steps} x {width}");
                for &(step, lane, seen) in &log {
                    assert!(
                        seen >= step * width,
                        "step {step} lane {lane} started after only {seen} tasks ({threads} threads)"
                    );
                }
            }
        }
    }

    #[test]
    fn par_steps_finishes_alone_when_the_other_threads_are_busy() {
        use crate::ops::testutil::under;
        use std::sync::atomic::{AtomicBool, Ordering};
        // One of the pool's two threads waits for the steps to end; the other must run them all.
        let over = AtomicBool::new(false);
        let log = under(2, || {
            rayon::join(
                || {
                    while !over.load(Ordering::SeqCst) {
                        std::thread::yield_now();
                    }
                },
                || {
                    let log = record_steps(6, 2);
                    over.store(true, Ordering::SeqCst);
                    log
                },
            )
            .1
        });
        assert_eq!(log.len(), 12);
    }

    #[test]
    fn a_panic_in_one_step_reaches_the_caller_without_hanging_the_others() {
        use crate::ops::testutil::under;
        for threads in [1, 2, 4] {
            let r = under(threads, || {
                std::panic::catch_unwind(|| {
                    par_steps(10, 2, &|step, lane| {
                        if (step, lane) == (3, 1) {
                            panic!("task failed");
                        }
                    })
                })
            });
            assert!(r.is_err(), "{threads} threads");
        }
    }

    #[test]
    fn gather_nd_matches_a_naive_loop_across_batches_and_tasks() {
        // batches x [d0, d1, slice] data, `tuples` index pairs per batch, some negative.
        let naive = |src: &[u32], idx: &[i64], d: [usize; 2], tuples: usize, slice: usize| {
            let block = d[0] * d[1] * slice;
            let mut out = Vec::new();
            for (t, pair) in idx.chunks(2).enumerate() {
                let k0 = pair[0].rem_euclid(d[0] as i64) as usize;
                let k1 = pair[1].rem_euclid(d[1] as i64) as usize;
                let at = (t / tuples) * block + (k0 * d[1] + k1) * slice;
                out.extend_from_slice(&src[at..at + slice]);
            }
            out
        };
        // One sequential fill of 1200 slices (several batches, batch blocks crossing them), then
        // a parallel build of 6000 slices of 64 (tasks of whole batches).
        for (batches, tuples, slice) in [(3usize, 400usize, 3usize), (2, 3000, 64)] {
            let d = [7usize, 5usize];
            let block = d[0] * d[1] * slice;
            let src: Vec<u32> = (0..(batches * block) as u32).collect();
            let idx: Vec<i64> = lcg(batches * tuples * 2, 9)
                .enumerate()
                .map(|(i, v)| {
                    let s = d[i % 2] as i64;
                    (v % (2 * s as u64)) as i64 - s
                })
                .collect();
            let total = batches * tuples * slice;
            let want = naive(&src, &idx, d, tuples, slice);
            let got = gather_nd(&src, &idx, &d, tuples, block, slice, total);
            assert_eq!(got, Some(want), "{batches} x {tuples} x {slice}");
            // A bad tuple anywhere, also just past a batch (where it is first read ahead only).
            for bad in [0, 255, 256, 259, 263, 264, batches * tuples - 1] {
                let mut idx = idx.clone();
                idx[2 * bad + 1] = d[1] as i64;
                let got = gather_nd(&src, &idx, &d, tuples, block, slice, total);
                assert_eq!(
                    got, None,
                    "bad tuple {bad} of {batches} x {tuples} x {slice}"
                );
            }
        }
    }

    #[test]
    fn destinations_normalise_offset_and_flag_like_a_plain_loop() {
        let s = 1000usize;
        // Values around every boundary: -2s..2s, plus the extremes of each index type.
        let mut wide: Vec<i64> = lcg(4099, 5).map(|v| (v % 4000) as i64 - 2000).collect();
        wide.extend([0, -1, 999, 1000, -1000, -1001, i64::MIN, i64::MAX]);
        let narrow: Vec<i32> = wide.iter().map(|&v| v.clamp(-3000, 3000) as i32).collect();
        let base = 7usize << 20;
        let skip = u32::MAX;
        let naive = |idx: &[i64], negatives: bool| -> (Vec<u32>, bool) {
            let mut all = true;
            let out = idx
                .iter()
                .map(|&k| {
                    let k = if negatives && k < 0 { k + s as i64 } else { k };
                    if (0..s as i64).contains(&k) {
                        (base + k as usize) as u32
                    } else {
                        all = false;
                        skip
                    }
                })
                .collect();
            (out, all)
        };
        let widened: Vec<i64> = narrow.iter().map(|&v| i64::from(v)).collect();
        for negatives in [false, true] {
            // Only the in-range part, then everything.
            let ok = wide.iter().position(|&v| v < 0).unwrap();
            for idx in [&wide[..ok], &wide[..]] {
                let (want, all) = naive(idx, negatives);
                let mut got = vec![0; idx.len()];
                let flag = destinations(&mut got, idx, s, negatives, base, skip);
                assert_eq!(
                    (got, flag),
                    (want.clone(), all),
                    "i64, negatives {negatives}"
                );
                // The portable loop, whatever this CPU has.
                let mut got = vec![0; idx.len()];
                let flag = destinations_loop(&mut got, idx, s, negatives, base, skip);
                assert_eq!(
                    (got, flag),
                    (want, all),
                    "portable i64, negatives {negatives}"
                );
            }
            let (want, all) = naive(&widened, negatives);
            let mut got = vec![0; narrow.len()];
            let flag = destinations(&mut got, &narrow, s, negatives, base, skip);
            assert_eq!((got, flag), (want, all), "i32, negatives {negatives}");
        }
    }

    /// GatherElements written as its definition, one element at a time:
    /// `out[o, i, m] = data[o, norm(idx[o, i, m]), m]`.
    fn naive(
        src: &[u32],
        idx: &[i64],
        outer: usize,
        len: usize,
        s: usize,
        inner: usize,
    ) -> Vec<u32> {
        let mut out = Vec::new();
        for o in 0..outer {
            for i in 0..len {
                for m in 0..inner {
                    let k = idx[(o * len + i) * inner + m];
                    let k = if k < 0 { k + s as i64 } else { k } as usize;
                    out.push(src[(o * s + k) * inner + m]);
                }
            }
        }
        out
    }

    fn check_gather_elements(outer: usize, len: usize, s: usize, inner: usize) {
        let src: Vec<u32> = (0..outer * s * inner).map(|v| v as u32).collect();
        // Indices in [-s, s): negatives count from the back.
        let idx: Vec<i64> = lcg(outer * len * inner, 7)
            .map(|v| (v % (2 * s as u64)) as i64 - s as i64)
            .collect();
        let got = gather_elements(&src, &idx, outer, len, s, inner).expect("all indices valid");
        assert!(
            got == naive(&src, &idx, outer, len, s, inner),
            "outer {outer}, len {len}, axis {s}, inner {inner}"
        );
        // One index out of range anywhere discards the output.
        let mut bad = idx.clone();
        let last = bad.len() - 1;
        bad[last] = s as i64;
        assert_eq!(gather_elements(&src, &bad, outer, len, s, inner), None);
    }

    #[test]
    fn last_axis_gathers_with_rows_prefetched_ahead_pick_what_the_definition_says() {
        // Rows of 3000 u32 (188 lines): 400 picks prefetch the next row, 100 do not; the output
        // of 700 rows x 400 is over the parallel threshold.
        let (rows, s) = (700, 3000);
        let src: Vec<u32> = (0..rows * s).map(|v| v as u32).collect();
        for n in [400, 100] {
            let idx: Vec<i64> = lcg(n, 3)
                .map(|v| (v % (2 * s as u64)) as i64 - s as i64)
                .collect();
            let at = |r: usize, j: usize| {
                let k = idx[j];
                src[r * s + if k < 0 { k + s as i64 } else { k } as usize]
            };
            let want: Vec<u32> = (0..rows)
                .flat_map(|r| (0..n).map(move |j| (r, j)))
                .map(|(r, j)| at(r, j))
                .collect();
            assert!(
                gather(&src, &idx, rows, s, 1, true).unwrap() == want,
                "Gather, {n} picks"
            );
            // GatherElements with the same picks in every row.
            let every: Vec<i64> = (0..rows).flat_map(|_| idx.iter().copied()).collect();
            assert!(
                gather_elements(&src, &every, rows, n, s, 1).unwrap() == want,
                "GatherElements, {n} picks"
            );
            let mut bad = every.clone();
            bad[rows * n - 1] = s as i64;
            assert_eq!(gather_elements(&src, &bad, rows, n, s, 1), None);
        }
    }

    #[test]
    fn streamed_copies_equal_the_source_at_every_alignment_and_length() {
        let src: Vec<u8> = (0..300u32).map(|v| (v * 7 + 3) as u8).collect();
        let mut dst: Vec<MaybeUninit<u8>> = vec![MaybeUninit::uninit(); 300];
        for from in 0..20 {
            for to in 0..20 {
                for len in [0, 1, 15, 16, 17, 31, 64, 100, 255, 280] {
                    let d = &mut dst[to..to + len];
                    stream_into(d, &src[from..from + len]);
                    stream_fence();
                    // SAFETY: stream_into wrote all `len` elements.
                    let got: Vec<u8> = d.iter().map(|b| unsafe { b.assume_init() }).collect();
                    assert_eq!(
                        got,
                        &src[from..from + len],
                        "from {from}, to {to}, len {len}"
                    );
                }
            }
        }
        // Wider elements: the byte count, not the element count, drives the loop.
        let words: Vec<u64> = (0..41).map(|v| v * 0x0101_0101_0101).collect();
        let mut out: Vec<MaybeUninit<u64>> = vec![MaybeUninit::uninit(); 41];
        stream_into(&mut out, &words);
        stream_fence();
        // SAFETY: as above.
        assert!(out
            .iter()
            .zip(&words)
            .all(|(o, w)| unsafe { o.assume_init() } == *w));
    }

    #[test]
    fn only_large_outputs_of_long_rows_stream() {
        assert!(streams::<f32>(STREAM_MIN_BYTES / 4, 16));
        assert!(
            !streams::<f32>(STREAM_MIN_BYTES / 4 - 1, 16),
            "small output"
        );
        assert!(!streams::<f32>(STREAM_MIN_BYTES, 15), "short rows");
        assert!(!streams::<u8>(usize::MAX, 63));
        assert!(streams::<u8>(usize::MAX, usize::MAX), "no overflow");
    }

    #[test]
    fn packed_bands_gather_what_the_definition_says() {
        // Axis 8192 of u32: 16-column bands, packed (inner 40 leaves a partial last band); the
        // output is over the parallel threshold.
        let (outer, len, s, inner) = (1, 8192, 8192, 40);
        let band = (BAND_BYTES / (s * 4)).clamp(16, inner).next_multiple_of(16);
        assert!(
            band < inner && s * band * 4 <= PACK_MAX_BYTES,
            "the packed path"
        );
        assert!(
            outer * len * inner * 4 >= PAR_MIN_BYTES,
            "the parallel path"
        );
        check_gather_elements(outer, len, s, inner);
    }

    #[test]
    fn bands_of_several_outer_blocks_gather_what_the_definition_says() {
        // Axis in the middle: two outer blocks, indices longer than data on the axis.
        check_gather_elements(2, 5000, 4096, 40);
        // Small: sequential, unpacked (one band spans the row).
        check_gather_elements(3, 7, 5, 9);
    }

    #[test]
    fn bands_too_tall_to_pack_are_read_in_place() {
        let (s, inner) = (70_000, 20);
        assert!(s * 16 * 4 > PACK_MAX_BYTES, "the unpacked path");
        check_gather_elements(1, 300, s, inner);
    }
}
