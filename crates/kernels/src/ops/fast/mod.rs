//! The data-movement core of the kernels for fixed-width elements: outputs written once into
//! uninitialised memory, large ones split over rayon's threads by contiguous output blocks, with
//! index validation fused into the copy (each index is read once).
//!
//! Fusing validation into the copy keeps decision D3 intact: an out-of-range index makes the
//! kernel return no output at all (the partly written buffer is dropped unread), and the caller
//! then finds the first offending position with a sequential scan, so the message is the same
//! whatever the thread count.
//!
//! Everything here is crate-private. The parts: [`par`] (the parallel loops and the output
//! builder), [`stream`] (copies into uninitialised memory, streamed or not, and prefetch hints),
//! [`gather`] (the gathers' loops) and [`dest`] (scatter destinations from indices); this file
//! holds what they share, the index words and their normalisation.

mod cache;
mod dest;
mod gather;
mod par;
mod stream;

pub(crate) use cache::Caches;
pub(crate) use dest::destinations;
pub(crate) use gather::{gather, gather_elements, gather_nd};
pub(crate) use par::{build, par_steps, PAR_MIN_BYTES};
pub(crate) use stream::{copy, copy_into, prefetch_bytes, prefetch_line, stream_into, streams};

/// Whether the kernels' AVX-512 loops run here: the CPU has AVX-512 F, VL and DQ, and the
/// compiler is Rust 1.89 or newer (which stabilised AVX-512 code generation; older compilers
/// build without those loops). Every such loop asks this one question.
#[cfg(target_arch = "x86_64")]
#[rustversion::since(1.89)]
pub(crate) fn avx512() -> bool {
    std::is_x86_feature_detected!("avx512f")
        && std::is_x86_feature_detected!("avx512vl")
        && std::is_x86_feature_detected!("avx512dq")
}

/// [`avx512`] on other architectures: never.
#[cfg(not(target_arch = "x86_64"))]
pub(crate) fn avx512() -> bool {
    false
}

/// [`avx512`] before Rust 1.89: never.
#[cfg(target_arch = "x86_64")]
#[rustversion::before(1.89)]
pub(crate) fn avx512() -> bool {
    false
}

/// An index word: int32 or int64, read as signed.
pub(crate) trait IndexWord: Copy + Send + Sync + 'static {
    /// The value, widened.
    fn get(self) -> i64;

    /// A slice of these words as what it is, for loops written per width.
    fn words(s: &[Self]) -> IndexWords<'_>;
}

/// A slice of index words by width (see [`IndexWord::words`]).
#[derive(Clone, Copy)]
pub(crate) enum IndexWords<'a> {
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
pub(crate) fn norm(k: i64, s: usize, negatives: bool) -> Option<usize> {
    let k = if k < 0 && negatives {
        k.wrapping_add(s as i64)
    } else {
        k
    };
    ((k as u64) < s as u64).then_some(k as usize)
}

/// A fixed LCG for the tests, so the indices are the same every run.
#[cfg(test)]
fn lcg(n: usize, seed: u64) -> impl Iterator<Item = u64> {
    let mut x = seed;
    (0..n).map(move |_| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        x >> 33
    })
}

/// Asserts that `f` panics (cleanly: the unwinding is caught) instead of returning, for the tests
/// that call the crate-private kernels with arguments that break their contracts.
#[cfg(test)]
pub(crate) fn panics<R>(what: &str, f: impl FnOnce() -> R) {
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    assert!(r.is_err(), "{what}: returned instead of panicking");
}
