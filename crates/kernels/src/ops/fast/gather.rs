//! The loops of Gather, GatherElements and GatherND: rows, elements and slices picked by index
//! and copied into an output built once ([`super::par::build`]).

use super::par::{build, par_tasks, SharedOut, PAR_MIN_BYTES};
use super::stream::{copy_into, prefetch, prefetch_bytes, prefetch_upto, stream_into, streams};
use super::{norm, IndexWord};
use std::mem::MaybeUninit;

/// The product of `dims` (lengths a caller promises its slices have), or a panic naming them:
/// a product that wrapped would size the output wrongly.
fn product(dims: &[usize], what: &str) -> usize {
    crate::tensor::numel(dims).unwrap_or_else(|| panic!("{what} {dims:?} overflow usize"))
}

/// Gather: output rows of `inner` elements, row `(o, j)` copied from data row
/// `o * axis_len + norm(idx[j])` of `src` (`[outer, axis_len, inner]`). `None` when an index is
/// out of range.
///
/// # Panics
/// If `src` does not hold `outer * axis_len * inner` elements, or a product overflows.
pub(crate) fn gather<T: Copy + Send + Sync, I: IndexWord>(
    src: &[T],
    idx: &[I],
    outer: usize,
    axis_len: usize,
    inner: usize,
    negatives: bool,
) -> Option<Vec<T>> {
    let n = idx.len();
    let total = product(&[outer, n, inner], "Gather output");
    assert_eq!(src.len(), product(&[outer, axis_len, inner], "Gather data"));
    if total == 0 {
        // Nothing to copy, but every index must still be valid.
        return idx
            .iter()
            .all(|k| norm(k.get(), axis_len, negatives).is_some())
            .then(Vec::new);
    }
    if inner == 1 {
        // Gathering the last axis: each output row picks single elements from one data row.
        // SAFETY: chunks are whole rows of n (total = outer * n), each written by pick_row
        // from an index slice of its length, or the fill returns false.
        return unsafe {
            build(total, n, |start, chunk| {
                for (r, dst) in chunk.chunks_exact_mut(n).enumerate() {
                    let base = (start / n + r) * axis_len;
                    let row = &src[base..base + axis_len];
                    let next = src.get(base + axis_len..base + 2 * axis_len);
                    if !pick_row(dst, idx, row, next, negatives) {
                        return false;
                    }
                }
                true
            })
        };
    }
    let stream = streams::<T>(total, inner);
    let row_prefetch = (inner * std::mem::size_of::<T>()).min(ROW_PREFETCH_MAX_BYTES);
    let ahead_rows = (ROWS_AHEAD_BYTES / row_prefetch.max(1)).clamp(MIN_ROWS_AHEAD, MAX_ROWS_AHEAD);
    // Chunks are whole rows of `inner` (total = outer * n * inner), each row filled by a copy of a
    // source slice of its length, or the fill returns false.
    let fill = |start: usize, chunk: &mut [MaybeUninit<T>]| {
        let first = start / inner;
        let rows = chunk.len() / inner;
        for (r, dst) in chunk.chunks_exact_mut(inner).enumerate() {
            let row = first + r;
            let (o, j) = (row / n, row % n);
            let Some(k) = norm(idx[j].get(), axis_len, negatives) else {
                return false;
            };
            let s = (o * axis_len + k) * inner;
            // Rows are picked at random: ask for one several rows ahead while copying this one.
            if r + ahead_rows < rows {
                let ahead = row + ahead_rows;
                if let Some(k) = norm(idx[ahead % n].get(), axis_len, negatives) {
                    prefetch_upto(src, ((ahead / n) * axis_len + k) * inner, row_prefetch);
                }
            }
            if stream {
                stream_into(dst, &src[s..s + inner]);
            } else {
                copy_into(dst, &src[s..s + inner]);
            }
        }
        true
    };
    // SAFETY: `fill` fills every row of its chunk, or returns false (above).
    unsafe { build(total, inner, fill) }
}

/// One output row of a last-axis gather: `dst[j] = row[norm(idx[j])]`; false on an index out of
/// range. The picks land anywhere in the row, which defeats the hardware prefetcher, but the next
/// output row reads `next`, the data row right after this one: when the picks are dense enough to
/// need most of its lines (at least one pick per line) and the row is long, its lines are
/// prefetched one at a time, spread evenly over this row's picks. Returning true, it has written
/// every element of `dst`.
///
/// # Panics
/// If `dst` and `idx` differ in length.
#[inline(always)]
fn pick_row<T: Copy, I: IndexWord>(
    dst: &mut [MaybeUninit<T>],
    idx: &[I],
    row: &[T],
    next: Option<&[T]>,
    negatives: bool,
) -> bool {
    assert_eq!(dst.len(), idx.len(), "one pick per output element");
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

/// The random-row copies of Gather keep about this many bytes of rows asked for ahead of the
/// copy (4 to 16 rows; up to [`ROW_PREFETCH_MAX_BYTES`] of each), so that many trips to memory
/// overlap the copies before them. A fixed 4 rows ahead with their first 256 bytes left both
/// short and long rows waiting on memory: short rows copy faster asked for whole and many rows
/// ahead, long ones with fewer rows ahead and part of each (more rows in flight beat more of
/// each, see [`ROW_PREFETCH_MAX_BYTES`]).
const ROWS_AHEAD_BYTES: usize = 8 << 10;
/// See [`ROWS_AHEAD_BYTES`].
const MIN_ROWS_AHEAD: usize = 4;
/// See [`ROWS_AHEAD_BYTES`].
const MAX_ROWS_AHEAD: usize = 16;
/// How much of a row ahead Gather asks for: the hardware prefetcher follows a longer row once
/// its first lines arrive, and more rows in flight beat more of each.
const ROW_PREFETCH_MAX_BYTES: usize = 1 << 10;

/// How many slices ahead GatherND prefetches its sources. Slices are short (the innermost dims
/// of the data, often a few hundred bytes), so each copy takes less time than a trip to memory:
/// more must be in flight than for rows. Fewer ahead leave the copies waiting on memory; more
/// were slower again (likely more misses than the core keeps in flight).
const SLICES_AHEAD: usize = 8;

/// How many rows ahead the column-band loops of GatherElements prefetch their strips.
const STRIPS_AHEAD: usize = 4;

/// GatherElements where indices and data agree on every dim but the axis: the output is
/// `[outer, len, inner]` (len = indices' axis dim), `out[o, i, m] = data[o, norm(idx[o, i, m]), m]`.
pub(crate) fn gather_elements<T: Copy + Send + Sync, I: IndexWord>(
    src: &[T],
    idx: &[I],
    outer: usize,
    len: usize,
    axis_len: usize,
    inner: usize,
) -> Option<Vec<T>> {
    // Every offset below is bounded by these two lengths, so none of its products can wrap.
    let total = product(&[outer, len, inner], "GatherElements output");
    assert_eq!(idx.len(), total, "GatherElements indices");
    assert_eq!(
        src.len(),
        product(&[outer, axis_len, inner], "GatherElements data")
    );
    if total == 0 {
        return Some(Vec::new());
    }
    if inner == 1 {
        // The axis is the last dim: each output row reads within one data row.
        // SAFETY: chunks are whole rows of `len` (total = outer * len), each written by pick_row
        // from an index slice of its length, or the fill returns false.
        return unsafe {
            build(total, len, |start, chunk| {
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
            })
        };
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
    let caches = super::Caches::get();
    let band = (caches.band_bytes() / (axis_len.max(1) * size))
        .clamp(16, inner.max(16))
        .next_multiple_of(16)
        .min(inner);
    // A band spanning whole rows is dense already; a band too tall to pack is read in place.
    let pack = band < inner && axis_len * band * size <= caches.pack_max_bytes();
    let bands: Vec<(usize, usize, usize)> = (0..outer)
        .flat_map(|o| {
            (0..inner)
                .step_by(band)
                .map(move |t0| (o, t0, (t0 + band).min(inner)))
        })
        .collect();
    let idx_size = std::mem::size_of::<I>();
    let wide = band_row_wide_available::<T, I>();
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
            // Column t0 + j of data row k is table[k * stride + j] of this view.
            let view = &table[t0 - first..];
            // SAFETY: row + t1 <= total (o < outer, i < len, t1 <= inner, and total is their
            // checked product) and no other task writes columns t0..t1 of this row, since bands
            // are disjoint. A slice of them, rather than a write through `dst` per element,
            // lets the loop keep the output's address in a register.
            let out_row = unsafe { dst.chunk(row + t0, w) };
            if !band_row(
                wide,
                out_row,
                &idx[row + t0..row + t1],
                view,
                stride,
                axis_len,
            ) {
                return false;
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
    // SAFETY: the bands cover every (o, t) of [0, outer) x [0, inner) once (steps of `band` >= 1
    // cut at `inner`), each succeeded, so it wrote every (o, i, m) of its columns for all i <
    // len: all `total` elements, within the capacity.
    unsafe { out.set_len(total) };
    Some(out)
}

/// One row of a GatherElements band: `out[j] = view[norm(ids[j]) * stride + j]`; false on an
/// index out of range (having written part of `out`). With `wide` (which
/// [`band_row_wide_available`] gives for these types), eight elements at a time by AVX-512
/// gathers, faster than the scalar loop on a tall band along axis 0.
///
/// # Panics
/// If `out` and `ids` differ in length, or a column of an in-range index lies past `view`.
#[inline(always)]
fn band_row<T: Copy, I: IndexWord>(
    wide: bool,
    out: &mut [MaybeUninit<T>],
    ids: &[I],
    view: &[T],
    stride: usize,
    axis_len: usize,
) -> bool {
    assert_eq!(out.len(), ids.len(), "one index per output element");
    #[cfg(target_arch = "x86_64")]
    if wide && std::mem::size_of::<T>() == 4 {
        if let super::IndexWords::I64(words) = I::words(ids) {
            // SAFETY: T is 4 bytes, so `view` holds view.len() readable 4-byte words and `out`
            // out.len() = words.len() writable ones (MaybeUninit<T> has T's layout); any T: Copy
            // can be copied as its bytes.
            let done = unsafe {
                x86::band_row_wide(
                    out.as_mut_ptr().cast(),
                    words,
                    view.as_ptr().cast(),
                    view.len(),
                    stride,
                    axis_len,
                )
            };
            return done.is_some_and(|j| {
                band_row_scalar(&mut out[j..], &ids[j..], view, stride, axis_len, j)
            });
        }
    }
    let _ = wide;
    band_row_scalar(out, ids, view, stride, axis_len, 0)
}

/// [`band_row`] one element at a time, for the columns from `j0` of the band.
#[inline(always)]
fn band_row_scalar<T: Copy, I: IndexWord>(
    out: &mut [MaybeUninit<T>],
    ids: &[I],
    view: &[T],
    stride: usize,
    axis_len: usize,
    j0: usize,
) -> bool {
    for (j, (d, ix)) in out.iter_mut().zip(ids).enumerate() {
        let Some(k) = norm(ix.get(), axis_len, true) else {
            return false;
        };
        d.write(view[k * stride + j0 + j]);
    }
    true
}

/// Whether [`band_row`] can take its AVX-512 loop for elements `T` and indices `I`: 4-byte
/// elements, int64 indices, and a CPU (and a compiler of Rust 1.89 or newer) with AVX-512 F and
/// DQ.
fn band_row_wide_available<T, I: IndexWord>() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::mem::size_of::<T>() == 4
            && matches!(I::words(&[]), super::IndexWords::I64(_))
            && super::avx512()
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    /// `out[j] = view[norm(ids[j]) * stride + j]` for the whole groups of 8 of `ids`: the column
    /// it stopped at (the tail is the caller's), or `None` at a group holding an index out of
    /// range.
    ///
    /// # Safety
    /// [`super::super::avx512`]; `out` writable for `ids.len()` 4-byte words and `view` readable for
    /// `view_len`.
    ///
    /// # Panics
    /// If an in-range index would read past `view_len` (checked once, for the largest offset).
    pub(super) unsafe fn band_row_wide(
        out: *mut u32,
        ids: &[i64],
        view: *const u32,
        view_len: usize,
        stride: usize,
        axis_len: usize,
    ) -> Option<usize> {
        let w = ids.len();
        if w == 0 || axis_len == 0 {
            // No column, or no index in range: the scalar loop says which.
            return Some(0);
        }
        // Every offset the gathers read is at most (axis_len - 1) * stride + w - 1.
        let last = (axis_len - 1)
            .checked_mul(stride)
            .and_then(|v| v.checked_add(w - 1));
        assert!(
            last.is_some_and(|l| l < view_len) && axis_len < i64::MAX as usize,
            "band row past its view"
        );
        // SAFETY: the caller's promises, and the check above.
        unsafe { groups(out, ids, view, stride, axis_len) }
    }

    #[rustversion::since(1.89)]
    #[target_feature(enable = "avx512f,avx512dq")]
    unsafe fn groups(
        out: *mut u32,
        ids: &[i64],
        view: *const u32,
        stride: usize,
        axis_len: usize,
    ) -> Option<usize> {
        use std::arch::x86_64::*;
        let w = ids.len();
        let s = _mm512_set1_epi64(axis_len as i64);
        let st = _mm512_set1_epi64(stride as i64);
        let zero = _mm512_setzero_si512();
        let eight = _mm512_set1_epi64(8);
        let mut jv = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
        let mut j = 0;
        while j + 8 <= w {
            // SAFETY: j + 8 <= w, so the load and the store are within ids and out. Each lane's
            // k is in [0, axis_len) (the whole group is checked before the gather) and its
            // column below w, so its offset is at most (axis_len - 1) * stride + w - 1, which
            // the caller checked to lie within the view; the 64-bit products cannot wrap for
            // the same reason.
            unsafe {
                let k = _mm512_loadu_si512(ids.as_ptr().add(j).cast());
                // Negative indices count from the back; as unsigned, any still negative is
                // past the axis.
                let k = _mm512_mask_add_epi64(k, _mm512_cmplt_epi64_mask(k, zero), k, s);
                if _mm512_cmplt_epu64_mask(k, s) != 0xff {
                    return None;
                }
                let off = _mm512_add_epi64(_mm512_mullo_epi64(k, st), jv);
                let v = _mm512_i64gather_epi32::<4>(off, view.cast());
                _mm256_storeu_si256(out.add(j).cast(), v);
            }
            jv = _mm512_add_epi64(jv, eight);
            j += 8;
        }
        Some(j)
    }

    /// Before Rust 1.89: never called ([`super::super::avx512`] is false).
    #[rustversion::before(1.89)]
    unsafe fn groups(
        _out: *mut u32,
        _ids: &[i64],
        _view: *const u32,
        _stride: usize,
        _axis_len: usize,
    ) -> Option<usize> {
        unreachable!("the AVX-512 band rows need Rust 1.89")
    }
}

/// GatherND: each of `batches * tuples` index tuples of length `k = dims.len()` (the data dims
/// indexed) selects a slice of `slice` elements from its batch block of `src`, whose blocks are
/// `dims` then `slice` elements (`prod(dims) * slice`). `None` when an index is out of range.
///
/// # Panics
/// If `idx` does not hold `batches * tuples * k` words, `src` does not hold `batches` blocks, or
/// a product overflows.
pub(crate) fn gather_nd<T: Copy + Send + Sync>(
    src: &[T],
    idx: &[i64],
    dims: &[usize],
    batches: usize,
    tuples: usize,
    slice: usize,
) -> Option<Vec<T>> {
    let k = dims.len();
    let slices = product(&[batches, tuples], "GatherND tuples");
    assert_eq!(
        idx.len(),
        product(&[slices, k], "GatherND indices"),
        "GatherND indices"
    );
    let block = product(&[product(dims, "GatherND dims"), slice], "GatherND block");
    assert_eq!(
        src.len(),
        product(&[batches, block], "GatherND data"),
        "GatherND data"
    );
    // Every slice start below is at most src.len() - slice: no sum or product can wrap.
    let total = product(&[slices, slice], "GatherND output");
    let strides = crate::tensor::strides(dims);
    let offset = |t: usize| -> Option<usize> {
        let mut off = 0;
        for j in 0..k {
            off += norm(idx[t * k + j], dims[j], true)? * strides[j];
        }
        Some(off)
    };
    if total == 0 {
        return (0..slices).all(|t| offset(t).is_some()).then(Vec::new);
    }
    let stream = streams::<T>(total, slice);
    // SAFETY: chunks are whole slices (total = slices * slice), and every slice of a chunk is
    // filled by a copy of a source slice of its length, or the fill returns false.
    let fill = |start: usize, chunk: &mut [MaybeUninit<T>]| {
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
    };
    // SAFETY: `fill` copies a whole slice into every row of its chunk, or returns false.
    unsafe { build(total, slice, fill) }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::fast::{lcg, panics};

    /// The dims of the heap overflow: (1 << 62) + 2 times 4 wraps to 8 in usize.
    const WRAPS: usize = (1 << 62) + 2;

    #[test]
    fn gathers_refuse_dims_whose_product_overflows_or_disagrees_with_the_lengths() {
        let src = [1u32; 4];
        let idx = [0i64; 16];
        // GatherElements: outer * len * inner wraps to 8, which used to size the output while
        // the loops wrote 16 (a heap overflow in release).
        panics("GatherElements, wrapping dims", || {
            gather_elements(&src, &idx, 1, WRAPS, 1, 4)
        });
        panics("GatherElements, wrapping data dims", || {
            gather_elements(&src, &idx[..4], 1, 1, WRAPS, 4)
        });
        panics("GatherElements, indices longer than the output", || {
            gather_elements(&src, &idx, 1, 2, 1, 4)
        });
        panics("GatherElements, indices shorter than the output", || {
            gather_elements(&src, &idx[..3], 1, 1, 1, 4)
        });
        panics("GatherElements, data shorter than its dims", || {
            gather_elements(&src, &idx[..8], 2, 1, 1, 4)
        });
        panics("GatherElements, data longer than its dims", || {
            gather_elements(&src, &idx[..2], 1, 1, 1, 2)
        });
        // Gather: the output is outer * indices * inner.
        panics("Gather, wrapping output", || {
            gather(&src, &idx, WRAPS, 1, 4, true)
        });
        panics("Gather, wrapping data dims", || {
            gather(&src, &idx, 1, WRAPS, 4, true)
        });
        panics("Gather, data shorter than its dims", || {
            gather(&src, &idx[..1], 1, 2, 4, true)
        });
        panics("Gather, last axis, data shorter than its dims", || {
            gather(&src, &idx[..1], 2, 4, 1, true)
        });
        // GatherND: the number of slices is batches * tuples, checked against the indices.
        let nd = [10u32, 11, 12, 13];
        panics("GatherND, a fifth element claimed", || {
            gather_nd(&nd, &[0, 1], &[2], 1, 3, 2)
        });
        panics("GatherND, wrapping tuples", || {
            gather_nd(&nd, &[0, 1], &[2], WRAPS, 4, 2)
        });
        panics("GatherND, wrapping block", || {
            gather_nd(&nd, &[0, 1], &[WRAPS], 1, 2, 4)
        });
        panics("GatherND, data of another batch count", || {
            gather_nd(&nd, &[0, 1, 0, 1], &[2], 2, 2, 2)
        });
        // The same arguments, consistent, give the definition's output.
        assert_eq!(
            gather_nd(&nd, &[1, 0], &[2], 1, 2, 2),
            Some(vec![12, 13, 10, 11])
        );
        assert_eq!(
            gather_elements(&src, &idx[..4], 1, 1, 1, 4),
            Some(vec![1; 4])
        );
    }

    #[test]
    fn out_of_range_values_give_none_whatever_the_path() {
        let src: Vec<u32> = (0..12).collect();
        for bad in [3i64, -4, i64::MIN, i64::MAX, 1 << 32] {
            // [1, 3, 4] data: gather axis 1 (rows of 4), last axis of [3, 4], GatherND on [3].
            assert_eq!(gather(&src, &[0, bad], 1, 3, 4, true), None, "{bad}");
            assert_eq!(gather(&src[..3], &[bad], 1, 3, 1, true), None, "{bad}");
            assert_eq!(
                gather_elements(&src[..3], &[bad], 1, 1, 3, 1),
                None,
                "{bad}"
            );
            assert_eq!(gather_nd(&src, &[bad], &[3], 1, 1, 4), None, "{bad}");
            // Empty outputs still validate every index.
            assert_eq!(gather(&src[..0], &[bad], 1, 3, 0, true), None, "{bad}");
            assert_eq!(gather_nd(&src[..0], &[bad], &[3], 1, 1, 0), None, "{bad}");
        }
        // Negatives are out of range where they do not count from the back.
        assert_eq!(gather(&src[..3], &[-1], 1, 3, 1, false), None);
        assert_eq!(gather(&src[..3], &[-1], 1, 3, 1, true), Some(vec![2]));
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
            let want = naive(&src, &idx, d, tuples, slice);
            let got = gather_nd(&src, &idx, &d, batches, tuples, slice);
            assert_eq!(got, Some(want), "{batches} x {tuples} x {slice}");
            // A bad tuple anywhere, also just past a batch (where it is first read ahead only).
            for bad in [0, 255, 256, 259, 263, 264, batches * tuples - 1] {
                let mut idx = idx.clone();
                idx[2 * bad + 1] = d[1] as i64;
                let got = gather_nd(&src, &idx, &d, batches, tuples, slice);
                assert_eq!(
                    got, None,
                    "bad tuple {bad} of {batches} x {tuples} x {slice}"
                );
            }
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
    fn packed_bands_gather_what_the_definition_says() {
        // Axis 8192 of u32: bands as wide as this CPU's caches make them, packed, with a
        // partial last band; the output is over the parallel threshold.
        let (outer, len, s) = (1, 8192, 8192);
        let caches = super::super::Caches::get();
        let band = (caches.band_bytes() / (s * 4)).max(16).next_multiple_of(16);
        let inner = band + band / 2 + 8;
        assert!(
            band < inner && s * band * 4 <= caches.pack_max_bytes(),
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
        assert!(
            s * 16 * 4 > super::super::Caches::get().pack_max_bytes(),
            "the unpacked path"
        );
        check_gather_elements(1, 300, s, inner);
    }

    #[test]
    fn band_rows_pick_what_the_definition_says_on_every_loop_the_cpu_has() {
        // A view of 13 rows of stride 29; rows of 0..=29 columns, so that groups of 8 and tails
        // both occur, with indices from the back and out of range in a group or in the tail.
        let (axis, stride) = (13usize, 29usize);
        let view: Vec<u32> = (0..axis * stride).map(|v| v as u32 * 3 + 1).collect();
        let wide = band_row_wide_available::<u32, i64>();
        if !wide {
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "band_rows_pick_what_the_definition_says_on_every_loop_the_cpu_has: SKIPPED the AVX-512 loop (this CPU or compiler lacks it)"
            );
        }
        let loops: &[bool] = if wide { &[false, true] } else { &[false] };
        for w in 0..=stride {
            let ids: Vec<i64> = lcg(w, w as u64 + 1)
                .map(|v| (v % (2 * axis as u64)) as i64 - axis as i64)
                .collect();
            // Written out: negative k counts from the back.
            let want: Vec<u32> = (0..w)
                .map(|j| {
                    let k = ids[j];
                    let k = if k < 0 { k + axis as i64 } else { k } as usize;
                    view[k * stride + j]
                })
                .collect();
            for &on in loops {
                let mut out = vec![MaybeUninit::<u32>::uninit(); w];
                assert!(band_row(on, &mut out, &ids, &view, stride, axis));
                // SAFETY: band_row returned true, so it wrote every element.
                let got: Vec<u32> = out.iter().map(|v| unsafe { v.assume_init() }).collect();
                assert_eq!(got, want, "{w} columns, wide {on}");
                for bad in [axis as i64, -(axis as i64) - 1, i64::MAX, i64::MIN] {
                    for at in [0, w / 2, w.saturating_sub(1)] {
                        if at >= w {
                            continue;
                        }
                        let mut ids = ids.clone();
                        ids[at] = bad;
                        let mut out = vec![MaybeUninit::<u32>::uninit(); w];
                        assert!(
                            !band_row(on, &mut out, &ids, &view, stride, axis),
                            "{w} columns, {bad} at {at}, wide {on}"
                        );
                    }
                }
            }
        }
    }
}
