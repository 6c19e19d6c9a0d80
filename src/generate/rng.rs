//! The generator's pseudo-random numbers: SplitMix64, written here so that the sequence for a
//! seed is fixed by this file alone (no crate upgrade can change a generated suite), seeded per
//! case from the suite's seed and the case's name, so that adding or removing a case leaves every
//! other case's bytes as they were.

/// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014):
/// one 64-bit state, every output a bijective mix of it.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// The generator for case `name` of a suite generated with `seed`.
    pub fn for_case(seed: u64, name: &str) -> Rng {
        // FNV-1a of the name, folded into the seed: stable across platforms and Rust versions,
        // unlike `std`'s hashers, which promise neither.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in name.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        let mut rng = Rng(seed ^ h);
        // One step so that seeds differing in one bit start far apart.
        rng.next_u64();
        rng
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0). The modulo bias is below 2^-50 for the small `n`
    /// the generator asks for, and a fixed bias cannot break determinism.
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        (self.next_u64() % n as u64) as usize
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi.saturating_sub(lo) + 1)
    }

    /// A signed number in `lo..=hi`.
    pub fn range_i64(&mut self, lo: i64, hi: i64) -> i64 {
        let span = hi.saturating_sub(lo).saturating_add(1).max(1) as u64;
        lo + (self.next_u64() % span) as i64
    }

    /// `0..n` in a random order (Fisher-Yates).
    pub fn permutation(&mut self, n: usize) -> Vec<usize> {
        let mut p: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let j = self.below(i + 1);
            p.swap(i, j);
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_matches_the_published_sequence() {
        // The reference outputs of SplitMix64 from state 0 (as in Vigna's splitmix64.c).
        let mut r = Rng(0);
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
    }

    #[test]
    fn cases_get_their_own_streams_and_the_same_stream_every_time() {
        let a = Rng::for_case(7, "a").next_u64();
        assert_eq!(a, Rng::for_case(7, "a").next_u64());
        assert_ne!(a, Rng::for_case(7, "b").next_u64());
        assert_ne!(a, Rng::for_case(8, "a").next_u64());
    }

    #[test]
    fn permutations_hold_every_number_once() {
        let mut r = Rng::for_case(1, "p");
        let mut p = r.permutation(10);
        p.sort_unstable();
        assert_eq!(p, (0..10).collect::<Vec<_>>());
    }
}
