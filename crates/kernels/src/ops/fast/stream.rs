//! Copies into uninitialised memory, with non-temporal stores for outputs far larger than the
//! caches, and prefetch hints.

use super::par::build;
use super::Caches;
use std::mem::MaybeUninit;

/// Rows shorter than this are copied with ordinary stores even into large outputs. Streaming
/// pays off for long contiguous copies (a scatter's copy of its data) but not for many short
/// rows read from scattered places: on Zen 5, rows of a few KiB or less copied slower streamed
/// than with ordinary stores, though an older EPYC had timed them faster streamed.
const STREAM_MIN_ROW_BYTES: usize = 64 << 10;

/// Whether copies of `row` elements of `T` into an output of `total` elements should stream:
/// outputs far larger than the caches ([`Caches::stream_min_bytes`]) would only evict what is
/// still to be read, and an ordinary store first reads every destination line it fills (half as
/// much traffic again as the copy itself).
#[inline]
pub(crate) fn streams<T>(total: usize, row: usize) -> bool {
    streams_past::<T>(Caches::get().stream_min_bytes(), total, row)
}

/// [`streams`] with outputs of `min_bytes` or more streaming.
#[inline]
fn streams_past<T>(min_bytes: usize, total: usize, row: usize) -> bool {
    let size = std::mem::size_of::<T>();
    total.saturating_mul(size) >= min_bytes && row.saturating_mul(size) >= STREAM_MIN_ROW_BYTES
}

/// Copies `src` into uninitialised `dst` of the same length with non-temporal stores (SSE2 on
/// x86-64; an ordinary copy elsewhere): the written lines go to memory without being read into
/// the cache first. The stores are weakly ordered, so the thread must call [`stream_fence`](super::par::stream_fence)
/// before the memory is handed to another thread ([`build`] does, after each chunk).
///
/// # Panics
/// If the lengths differ: every element of `dst` is written, which callers rely on.
#[inline(always)]
pub(crate) fn stream_into<T: Copy>(dst: &mut [MaybeUninit<T>], src: &[T]) {
    assert_eq!(dst.len(), src.len(), "stream_into lengths");
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
        let n = std::mem::size_of_val(dst);
        let d = dst.as_mut_ptr().cast::<u8>();
        let s = src.as_ptr().cast::<u8>();
        let head = d.align_offset(16).min(n);
        let body = (n - head) / 16 * 16;
        // SAFETY: head + body <= n, and both slices hold n bytes (equal lengths, asserted above);
        // they cannot overlap, one being borrowed mutably and the other shared. The stores
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

/// Copies `src` into uninitialised `dst` of the same length.
///
/// # Panics
/// If the lengths differ: every element of `dst` is written, which callers rely on.
#[inline(always)]
pub(crate) fn copy_into<T: Copy>(dst: &mut [MaybeUninit<T>], src: &[T]) {
    assert_eq!(dst.len(), src.len(), "copy_into lengths");
    // The copy is safe code: MaybeUninit<T> has T's layout, and T: Copy.
    dst.copy_from_slice(as_uninit(src));
}

/// `s` as uninitialised-or-not elements, to copy from.
#[inline(always)]
fn as_uninit<T>(s: &[T]) -> &[MaybeUninit<T>] {
    // SAFETY: MaybeUninit<T> has T's size, alignment and layout, and every initialised T is a
    // valid MaybeUninit<T>; the shared borrow cannot be used to write.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast(), s.len()) }
}

/// Hints that `len` elements of `src` from `at` will be read soon (the first lines of the block;
/// the hardware prefetcher follows a sequential run once it starts).
#[inline(always)]
pub(super) fn prefetch<T>(src: &[T], at: usize, len: usize) {
    prefetch_upto(src, at, (len * std::mem::size_of::<T>()).min(256));
}

/// Hints that the `bytes` of `src` from element `at` will be read soon (nothing when `at` is
/// past the end).
#[inline(always)]
pub(super) fn prefetch_upto<T>(src: &[T], at: usize, bytes: usize) {
    if at < src.len() {
        prefetch_bytes(src[at..].as_ptr(), bytes);
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

/// A copy of `src`, in parallel when large (a scatter's starting point).
pub(crate) fn copy<T: Copy + Send + Sync>(src: &[T]) -> Vec<T> {
    let stream = streams::<T>(src.len(), src.len());
    // SAFETY: each fill copies a source slice of its chunk's length into the whole chunk (both
    // copies write every element of dst or panic).
    unsafe {
        build(src.len(), 1, |start, chunk| {
            if stream {
                stream_into(chunk, &src[start..start + chunk.len()]);
            } else {
                copy_into(chunk, &src[start..start + chunk.len()]);
            }
            true
        })
    }
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::super::par::stream_fence;
    use super::*;
    use crate::ops::fast::panics;

    #[test]
    fn copies_into_uninitialised_memory_refuse_a_source_of_another_length() {
        let src = [1u64, 2, 3];
        for short in [0, 2] {
            let mut dst = vec![MaybeUninit::<u64>::uninit(); 3];
            panics("copy_into, short source", || {
                copy_into(&mut dst, &src[..short])
            });
            panics("stream_into, short source", || {
                stream_into(&mut dst, &src[..short])
            });
            let mut dst = vec![MaybeUninit::<u64>::uninit(); short];
            panics("copy_into, long source", || copy_into(&mut dst, &src));
            panics("stream_into, long source", || stream_into(&mut dst, &src));
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
        assert!(out.iter().zip(&words).all(|(o, w)| {
            // SAFETY: stream_into wrote every element, and the fence made the writes visible.
            (unsafe { o.assume_init() }) == *w
        }));
    }

    #[test]
    fn only_large_outputs_of_long_rows_stream() {
        const MIN: usize = 48 << 20;
        assert!(streams_past::<f32>(MIN, MIN / 4, 16 << 10));
        assert!(
            !streams_past::<f32>(MIN, MIN / 4 - 1, 16 << 10),
            "small output"
        );
        assert!(!streams_past::<f32>(MIN, MIN, 15), "short rows");
        assert!(!streams_past::<u8>(MIN, usize::MAX, (64 << 10) - 1));
        assert!(streams_past::<u8>(MIN, usize::MAX, 64 << 10));
        assert!(
            streams_past::<u8>(MIN, usize::MAX, usize::MAX),
            "no overflow"
        );
        assert_eq!(
            streams::<u8>(usize::MAX, 64 << 10),
            streams_past::<u8>(Caches::get().stream_min_bytes(), usize::MAX, 64 << 10)
        );
    }
}
