//! The order a hunt tries cases in: round 0 is every case of the full profile for the selected
//! operators under `--seed`, shuffled by the seed and then layered, every kind of case (operator,
//! version and what it tests) once before any kind twice, with the stress profile's large cases
//! (where races and index-width bugs show) after the first layer, and after them the crossed
//! cases (traits tried alone elsewhere, crossed on shapes and types drawn from the round's seed);
//! each later round is the same kinds with fresh random values (the generator under a seed of its
//! own), the crossed cases with fresh shapes and types too, shuffled again. Cases are numbered
//! across rounds; case `i` belongs to shard `i mod N + 1`, so shards never overlap and together
//! cover the single run's cases.

use crate::generate::cases::{self, Breadth, CaseSpec};
use crate::generate::variant::Variant;
use onnx_idx_check::ops::OpDef;
#[cfg(test)]
use std::collections::BTreeMap;
use std::collections::{HashMap, HashSet, VecDeque};

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

/// The cases of one round, in their shuffled order: the first layer of kinds, round 0's large
/// cases of `generate --profile stress`, the crossed cases, then the other layers.
pub(crate) fn round(ops: &[&'static OpDef], seed: u64, round: u64) -> Vec<CaseSpec> {
    let s = round_seed(seed, round);
    // The operator alone, and in the small graphs real models put it in.
    let mut specs: Vec<CaseSpec> = cases::versions(ops)
        .into_iter()
        .flat_map(|(def, v)| {
            let mut c = cases::of_version(Breadth::Full, s, def, v);
            c.extend(cases::context::in_context(s, def, v));
            c
        })
        .collect();
    // Fisher-Yates with the round's seed.
    let mut rng = SplitMix(s ^ 0x5DEE_CE66_D1CE_5EED);
    shuffle(&mut specs, &mut rng);
    // Every kind of case once (on a random dtype pair) before any kind twice: a bug that shows on
    // one kind of case is found in the first pass over the kinds, not after the crossings of
    // every dtype with every index type of the kinds before it.
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut layered: Vec<(usize, CaseSpec)> = specs
        .into_iter()
        .map(|c| {
            let n = seen.entry(c.kind.clone()).or_default();
            *n += 1;
            (*n, c)
        })
        .collect();
    layered.sort_by_key(|(n, _)| *n);
    let first_layer = layered.iter().take_while(|(n, _)| *n == 1).count();
    let mut specs: Vec<CaseSpec> = layered.into_iter().map(|(_, c)| c).collect();
    // The traits crossed, on shapes and types drawn from the round's seed (one case a kind): after
    // the first layer (and round 0's large cases), so that each trait alone is tried first and
    // the cases before them keep their numbers.
    let mut crossed: Vec<CaseSpec> = cases::versions(ops)
        .into_iter()
        .flat_map(|(def, v)| cases::crossed(s, def, v))
        .collect();
    shuffle(&mut crossed, &mut rng);
    if round == 0 {
        let big: Vec<CaseSpec> = cases::versions(ops)
            .into_iter()
            .flat_map(|(def, v)| cases::large(s, def, v))
            .collect();
        crossed.splice(0..0, big);
    }
    specs.splice(first_layer..first_layer, crossed);
    specs
}

/// Fisher-Yates with `rng`.
fn shuffle(specs: &mut [CaseSpec], rng: &mut SplitMix) {
    for i in (1..specs.len()).rev() {
        let j = (rng.next() % (i as u64 + 1)) as usize;
        specs.swap(i, j);
    }
}

/// The variant case number `index` of a round seeded `seed` is shown in: the default form for
/// half of the cases, each other variant for a tenth, so that every kind meets them over its
/// data types.
pub(crate) fn variant(seed: u64, index: u64) -> Variant {
    let pick = SplitMix(seed ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03)).next() % 10;
    match pick {
        0..=4 => Variant::DEFAULT,
        k => Variant::ALL[(k - 4) as usize],
    }
}

/// Whether a race between threads can show on `spec` (a reduction of duplicate indices, many
/// indices, a large update): such cases are run more than once, at more than one thread count.
pub(crate) fn race_prone(spec: &CaseSpec) -> bool {
    let has = |t: &str| spec.traits.iter().any(|x| x == t);
    let reduces = spec
        .traits
        .iter()
        .any(|t| t.starts_with("reduction:") && t != "reduction:none");
    (has("duplicates") && reduces) || has("many-indices") || has("large-update")
}

/// The cases of a round still to try, each with its number, in the order they are tried: the
/// seeded order, except that once a kind of case shows a disagreement its other dtype pairs come
/// next (a kind that fails on one type tends to fail differently on another, and each data type
/// is a finding of its own).
pub(crate) struct Queue {
    cases: VecDeque<(CaseSpec, u64)>,
    promoted: HashSet<String>,
}

impl FromIterator<(CaseSpec, u64)> for Queue {
    fn from_iter<I: IntoIterator<Item = (CaseSpec, u64)>>(iter: I) -> Self {
        Queue {
            cases: iter.into_iter().collect(),
            promoted: HashSet::new(),
        }
    }
}

impl Queue {
    /// The next case to try and its number.
    pub(crate) fn pop(&mut self) -> Option<(CaseSpec, u64)> {
        self.cases.pop_front()
    }

    /// Takes out up to `n` of the remaining cases that `wanted` accepts, the first ones in order.
    pub(crate) fn take(
        &mut self,
        n: usize,
        mut wanted: impl FnMut(&CaseSpec) -> bool,
    ) -> Vec<(CaseSpec, u64)> {
        let mut taken = Vec::new();
        let mut rest = VecDeque::with_capacity(self.cases.len());
        for (c, i) in std::mem::take(&mut self.cases) {
            if taken.len() < n && wanted(&c) {
                taken.push((c, i));
            } else {
                rest.push_back((c, i));
            }
        }
        self.cases = rest;
        taken
    }

    /// Moves the plainest remaining case that `wanted` accepts to the front: no empty input,
    /// then no negative attribute (an axis counted from the end), then the lowest rank, then the
    /// fewest elements, then the fewest traits. A runtime that refused a group's first cases for
    /// what they exercise (indices smaller than the data, a negative axis, an axis past 64)
    /// runs its plainest one, so the group is not taken for one it does not implement.
    pub(crate) fn probe(&mut self, mut wanted: impl FnMut(&CaseSpec) -> bool) {
        let plainness = |c: &CaseSpec| {
            let empty = c.inputs.iter().any(|t| t.numel() == 0);
            let negative = c.negative_attr();
            let rank = c.inputs.iter().map(|t| t.shape().len()).max().unwrap_or(0);
            let elements: usize = c.inputs.iter().map(|t| t.numel()).sum();
            (empty, negative, rank, elements, c.traits.len())
        };
        let best = self
            .cases
            .iter()
            .enumerate()
            .filter(|(_, (c, _))| wanted(c))
            .min_by_key(|(at, (c, _))| (plainness(c), *at))
            .map(|(at, _)| at);
        if let Some(case) = best.and_then(|at| self.cases.remove(at)) {
            self.cases.push_front(case);
        }
    }

    /// Moves the remaining cases of `kind` to the front, in their order; once per kind.
    pub(crate) fn promote(&mut self, kind: &str) {
        if !self.promoted.insert(kind.to_string()) {
            return;
        }
        let (same, rest): (VecDeque<_>, VecDeque<_>) = std::mem::take(&mut self.cases)
            .into_iter()
            .partition(|(c, _)| c.kind == kind);
        self.cases = same;
        self.cases.extend(rest);
    }
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
        let a: Vec<String> = round(&ops, 1, 0).into_iter().map(|c| c.name).collect();
        let b: Vec<String> = round(&ops, 1, 0).into_iter().map(|c| c.name).collect();
        assert_eq!(a, b);
        assert!(a.len() > 50);
        let c: Vec<String> = round(&ops, 1, 1).into_iter().map(|c| c.name).collect();
        assert_ne!(a, c);
        // Round 0 holds the large cases after its first layer, and round 1 none; the crossed
        // cases come after them.
        let kinds: std::collections::BTreeSet<String> = round(&ops, 1, 1)
            .into_iter()
            .filter(|c| !c.traits.iter().any(|t| t == "crossed"))
            .map(|c| c.kind)
            .collect();
        let at = a
            .iter()
            .position(|n| n.contains("stress"))
            .expect("a large case");
        assert_eq!(at, kinds.len(), "{:?}", &a[at]);
        // The crossed cases follow the large ones: the first layer keeps its order and numbers.
        let specs = round(&ops, 1, 0);
        let crossed = |c: &CaseSpec| c.traits.iter().any(|t| t == "crossed");
        let after = specs[at..]
            .iter()
            .position(|c| !c.name.contains("stress"))
            .unwrap();
        assert!(specs[..at].iter().all(|c| !crossed(c)));
        let n = specs.iter().filter(|c| crossed(c)).count();
        assert!(n > 10, "{n} crossed cases");
        assert!(specs[at + after..at + after + n].iter().all(crossed));
        assert!(!c.iter().any(|n| n.contains("stress")));
    }

    #[test]
    fn a_probe_brings_the_plainest_case_of_a_group_to_the_front() {
        let ops = crate::generate::select_ops(&["GatherElements".to_string()]).unwrap();
        let mut queue: Queue = round(&ops, 3, 0).into_iter().zip(0..).collect();
        let of_group = |c: &CaseSpec| c.version.since == 11 && !c.violation && c.context.is_none();
        // A naive search: the lowest (empty, negative axis, rank, elements, traits) among the
        // group's cases.
        let expected = queue
            .cases
            .iter()
            .filter(|(c, _)| of_group(c))
            .map(|(c, i)| {
                let ranks = c.inputs.iter().map(|t| t.shape().len());
                let sizes = c.inputs.iter().map(|t| t.shape().iter().product::<usize>());
                let empty = c.inputs.iter().any(|t| t.shape().contains(&0));
                let negative = c.name.contains("axis_neg");
                (
                    (
                        empty,
                        negative,
                        ranks.max().unwrap(),
                        sizes.sum::<usize>(),
                        c.traits.len(),
                    ),
                    *i,
                )
            })
            .min()
            .unwrap();
        let total = queue.cases.len();
        queue.probe(of_group);
        let (first, i) = queue.pop().unwrap();
        assert_eq!(i, expected.1, "{}", first.name);
        assert_eq!(first.inputs[0].shape().len(), 1, "{}", first.name);
        assert!(!first.name.contains("axis_neg"), "{}", first.name);
        assert_eq!(queue.cases.len(), total - 1);
        // Nothing wanted: the order stays.
        let before: Vec<u64> = queue.cases.iter().map(|(_, i)| *i).collect();
        queue.probe(|_| false);
        let after: Vec<u64> = queue.cases.iter().map(|(_, i)| *i).collect();
        assert_eq!(before, after);
    }

    #[test]
    fn a_disagreeing_kind_has_its_other_cases_tried_next_once() {
        let ops = crate::generate::select_ops(&["Gather".to_string()]).unwrap();
        let mut queue: Queue = round(&ops, 3, 0).into_iter().zip(0..).collect();
        let (first, _) = queue.pop().unwrap();
        let total = 1 + queue.cases.len();
        queue.promote(&first.kind);
        let same = queue
            .cases
            .iter()
            .filter(|(c, _)| c.kind == first.kind)
            .count();
        assert!(same > 5, "{same} more cases of {}", first.kind);
        let mut numbers = Vec::new();
        for _ in 0..same {
            let (c, n) = queue.pop().unwrap();
            assert_eq!(c.kind, first.kind);
            numbers.push(n);
        }
        // In their seeded order, and none lost.
        assert!(numbers.windows(2).all(|w| w[0] < w[1]), "{numbers:?}");
        assert_eq!(1 + same + queue.cases.len(), total);
        assert!(queue.cases.iter().all(|(c, _)| c.kind != first.kind));
        // A second disagreement of the kind moves nothing.
        let (next, _) = queue.pop().unwrap();
        let order: Vec<u64> = queue.cases.iter().map(|(_, n)| *n).collect();
        queue.promote(&first.kind);
        queue.promote(&next.kind);
        queue.promote(&next.kind);
        let after: Vec<u64> = queue.cases.iter().map(|(_, n)| *n).collect();
        assert_eq!(order.len(), after.len());
        assert_ne!(order, after);
    }

    #[test]
    fn every_kind_comes_once_before_any_comes_twice() {
        let ops = crate::generate::select_ops(&["Gather".to_string()]).unwrap();
        // Round 1 has no large cases: its layers are the kinds alone.
        let specs = round(&ops, 3, 1);
        let kinds: std::collections::BTreeSet<&str> =
            specs.iter().map(|c| c.kind.as_str()).collect();
        // Gather's full profile crosses its kinds with many dtype pairs.
        assert!(
            specs.len() > 5 * kinds.len(),
            "{} of {}",
            specs.len(),
            kinds.len()
        );
        let first: std::collections::BTreeSet<&str> = specs[..kinds.len()]
            .iter()
            .map(|c| c.kind.as_str())
            .collect();
        assert_eq!(first, kinds);
        assert!(specs
            .iter()
            .any(|c| c.kind == "gather_13_indices_far_past_end"));
    }

    #[test]
    fn reductions_of_duplicates_and_large_cases_are_run_for_races_and_plain_reads_are_not() {
        let ops =
            crate::generate::select_ops(&["ScatterND".to_string(), "Gather".to_string()]).unwrap();
        let specs = round(&ops, 5, 0);
        let prone: Vec<&CaseSpec> = specs.iter().filter(|c| race_prone(c)).collect();
        assert!(prone
            .iter()
            .any(|c| c.traits.iter().any(|t| t == "reduction:add")));
        assert!(prone.iter().any(|c| c.name.contains("stress_2m_indices")));
        assert!(prone
            .iter()
            .all(|c| crate::generate::op_name(c.def) == "ScatterND" || c.name.contains("stress")));
        assert!(
            prone.len() < specs.len() / 4,
            "{} of {}",
            prone.len(),
            specs.len()
        );
    }

    #[test]
    fn later_rounds_draw_new_shapes_for_the_crossed_kinds_and_the_same_ones_every_time() {
        let ops =
            crate::generate::select_ops(&["GatherND".to_string(), "ScatterElements".to_string()])
                .unwrap();
        type Shapes = BTreeMap<String, Vec<Vec<usize>>>;
        let shapes = |r: u64| -> Shapes {
            round(&ops, 9, r)
                .into_iter()
                .filter(|c| c.traits.iter().any(|t| t == "crossed"))
                .map(|c| {
                    let s = c.inputs.iter().map(|t| t.shape().to_vec()).collect();
                    (c.kind, s)
                })
                .collect()
        };
        let (zero, one) = (shapes(0), shapes(1));
        assert_eq!(one, shapes(1));
        // Both rounds hold the crossed kinds of both families.
        assert!(zero.len() > 40, "{} crossed cases", zero.len());
        // Round 1 draws data ranks and index shapes that round 0 has not for the same kind (and
        // its dtype pair, in the name).
        let rank = |s: &Vec<Vec<usize>>| s[0].len();
        let ranks_differ = zero
            .iter()
            .filter(|(n, s)| one.get(*n).is_some_and(|t| rank(t) != rank(s)))
            .count();
        let index_shapes_differ = zero
            .iter()
            .filter(|(n, s)| one.get(*n).is_some_and(|t| t[1] != s[1]))
            .count();
        assert!(ranks_differ > 5, "{ranks_differ} kinds change rank");
        assert!(index_shapes_differ > 10, "{index_shapes_differ}");
        let all_zero: std::collections::BTreeSet<&Vec<Vec<usize>>> = zero.values().collect();
        assert!(one.values().any(|s| !all_zero.contains(s)));
    }
}
