//! The order a hunt tries cases in: round 0 is every case of the full profile for the selected
//! operators under `--seed`, shuffled by the seed; each later round is the same cases with fresh
//! random values (the generator under a seed of its own), shuffled again. Cases are numbered
//! across rounds; case `i` belongs to shard `i mod N + 1`, so shards never overlap and together
//! cover the single run's cases.

use crate::generate::cases::{self, Breadth, CaseSpec};
use crate::ops::OpDef;

/// A small, seeded generator (splitmix64): the order must be the same on every machine.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// The generator's seed for round `round` of a hunt seeded `seed`.
pub(crate) fn round_seed(seed: u64, round: u64) -> u64 {
    if round == 0 {
        seed
    } else {
        SplitMix(seed ^ round.wrapping_mul(0xA24B_AED4_963E_E407)).next()
    }
}

/// The cases of one round, in their shuffled order; with `large`, round 0 starts with the large
/// cases of `generate --profile stress` (a race shows on big inputs, under `--repeat`).
pub(crate) fn round(ops: &[&'static OpDef], seed: u64, round: u64, large: bool) -> Vec<CaseSpec> {
    let s = round_seed(seed, round);
    let mut specs: Vec<CaseSpec> = cases::versions(ops)
        .into_iter()
        .flat_map(|(def, v)| cases::of_version(Breadth::Full, s, def, v))
        .collect();
    // Fisher-Yates with the round's seed.
    let mut rng = SplitMix(s ^ 0x5DEE_CE66_D1CE_5EED);
    for i in (1..specs.len()).rev() {
        let j = (rng.next() % (i as u64 + 1)) as usize;
        specs.swap(i, j);
    }
    if large && round == 0 {
        let mut big: Vec<CaseSpec> = cases::versions(ops)
            .into_iter()
            .flat_map(|(def, v)| cases::large(s, def, v))
            .collect();
        big.extend(specs);
        return big;
    }
    specs
}

/// Whether case number `i` belongs to shard `k` of `n` (1-based `k`).
pub(crate) fn in_shard(i: u64, k: u64, n: u64) -> bool {
    n <= 1 || i % n == k - 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_numbers() {
        for i in 0..20 {
            let owners = (1..=3).filter(|&k| in_shard(i, k, 3)).count();
            assert_eq!(owners, 1);
        }
        assert_ne!(round_seed(0, 1), round_seed(0, 2));
        assert_eq!(round_seed(7, 0), 7);
    }

    #[test]
    fn a_round_is_the_same_on_every_call_and_another_round_differs() {
        let ops = crate::generate::select_ops(&["Gather".to_string()]).unwrap();
        let a: Vec<String> = round(&ops, 1, 0, false)
            .into_iter()
            .map(|c| c.name)
            .collect();
        let b: Vec<String> = round(&ops, 1, 0, false)
            .into_iter()
            .map(|c| c.name)
            .collect();
        assert_eq!(a, b);
        assert!(a.len() > 50);
        let c: Vec<String> = round(&ops, 1, 1, false)
            .into_iter()
            .map(|c| c.name)
            .collect();
        assert_ne!(a, c);
        // Under --repeat the large cases come first, then the same shuffled round.
        let d: Vec<String> = round(&ops, 1, 0, true)
            .into_iter()
            .map(|c| c.name)
            .collect();
        assert!(d[0].contains("stress"), "{}", d[0]);
        assert!(d.ends_with(&a));
    }
}
