//! Scatter destinations from indices, in a loop written to vectorise ([`destinations`]).

use super::IndexWord;

/// Writes `base + k` for each index `k` of `idx`, normalised against an axis of size `s` (see
/// [`super::norm`]), into `dst` (as long as `idx`), or `skip` where `k` is out of range; says whether
/// every index was in range.
///
/// Large scatters spend much of their time here, so the loop is written to vectorise (selects,
/// no early exit), and on x86-64 runs as AVX2 code where the CPU has it: 64-bit compares need
/// SSE4.2 at least, and the portable build gets plain x86-64, where this loop stays scalar and
/// several times slower.
///
/// # Panics
/// If `dst` and `idx` differ in length, or `base + s` does not fit in a u32 (the destinations
/// would wrap).
pub(crate) fn destinations<I: IndexWord>(
    dst: &mut [u32],
    idx: &[I],
    s: usize,
    negatives: bool,
    base: usize,
    skip: u32,
) -> bool {
    assert_eq!(dst.len(), idx.len(), "one destination per index");
    assert!(
        base.checked_add(s)
            .is_some_and(|end| end <= u32::MAX as usize),
        "destinations {base} + [0, {s}) do not fit in u32"
    );
    #[cfg(target_arch = "x86_64")]
    if let Some(ok) = destinations_wide(dst, idx, s, negatives, base, skip) {
        return ok;
    }
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

/// [`destinations`] compiled for AVX-512 where the CPU has it (`None` where it has not, or where
/// the compiler is older than Rust 1.89, which stabilised AVX-512 code generation). Its 64-bit
/// compares run eight at a time instead of AVX2's four, which shortens scatters of many int64
/// indices.
#[cfg(target_arch = "x86_64")]
#[rustversion::since(1.89)]
fn destinations_wide<I: IndexWord>(
    dst: &mut [u32],
    idx: &[I],
    s: usize,
    negatives: bool,
    base: usize,
    skip: u32,
) -> Option<bool> {
    if super::avx512() {
        // SAFETY: the CPU has AVX-512 F and VL (and DQ), the one requirement of this function.
        return Some(unsafe { destinations_avx512(dst, idx, s, negatives, base, skip) });
    }
    None
}

/// [`destinations_wide`] before Rust 1.89: no AVX-512.
#[cfg(target_arch = "x86_64")]
#[rustversion::before(1.89)]
fn destinations_wide<I: IndexWord>(
    _dst: &mut [u32],
    _idx: &[I],
    _s: usize,
    _negatives: bool,
    _base: usize,
    _skip: u32,
) -> Option<bool> {
    None
}

/// [`destinations`] compiled for AVX-512.
///
/// # Safety
/// The CPU must support AVX-512 F and VL.
#[cfg(target_arch = "x86_64")]
#[rustversion::since(1.89)]
#[target_feature(enable = "avx512f,avx512vl")]
unsafe fn destinations_avx512<I: IndexWord>(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::fast::{lcg, panics};

    #[test]
    fn destinations_refuse_other_lengths_and_offsets_past_u32() {
        let idx = [0i64, 1, 2];
        panics("a short destination buffer", || {
            destinations(&mut [0; 2], &idx, 3, true, 0, u32::MAX)
        });
        panics("a long destination buffer", || {
            destinations(&mut [0; 4], &idx, 3, true, 0, u32::MAX)
        });
        let top = u32::MAX as usize;
        panics("an axis past u32", || {
            destinations(&mut [0; 3], &idx, top + 1, true, 0, u32::MAX)
        });
        panics("a base past u32", || {
            destinations(&mut [0; 3], &idx, 3, true, top, u32::MAX)
        });
        panics("base + s wrapping usize", || {
            destinations(&mut [0; 3], &idx, usize::MAX, true, 2, u32::MAX)
        });
        // At the edge: the last destination is u32::MAX - 1.
        let mut d = [0; 3];
        assert!(destinations(&mut d, &idx, 3, true, top - 3, u32::MAX));
        assert_eq!(d, [top as u32 - 3, top as u32 - 2, top as u32 - 1]);
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
}
