//! The tuple family: the last dim of the indices holds tuples of `k` indices into the data's
//! leading dims (after `batch_dims` shared ones); a gather reads the slice each tuple names, a
//! scatter writes (or reduces) an update slice there. The traits that broke runtimes are each a
//! case of their own: data rank above the indices' rank, `k < q-1`, `k == r`, a single tuple,
//! batch_dims 1 and 2, and for scatters `k == 0` (each update is the whole tensor).

use super::{Builder, Call, Family};
use crate::generate::rng::Rng;
use crate::generate::values;
use onnx_idx_check::tensor::DType;

/// The `batch_dims` of `c` (0 when absent or negative, which only violations give).
fn batch(c: &Call) -> usize {
    usize::try_from(c.batch_dims.unwrap_or(0)).unwrap_or(0)
}

/// The data dims the tuples of `c` index.
fn tuple_dims(c: &Call) -> Vec<usize> {
    let (b, k) = (batch(c), c.idx_shape.last().copied().unwrap_or(0));
    c.data_shape.get(b..b + k).unwrap_or_default().to_vec()
}

/// Random valid tuples for the shapes of `c`; distinct targets when `distinct` (a scatter
/// without duplicates) and the dims have room for them.
pub(super) fn fill(c: &mut Call, rng: &mut Rng, distinct: bool) {
    let dims = tuple_dims(c);
    let q = c.idx_shape.len();
    let n: usize = c.idx_shape[..q.saturating_sub(1)].iter().product();
    let space: usize = dims.iter().product();
    let perm = if distinct {
        rng.permutation(space)
    } else {
        Vec::new()
    };
    c.idx = (0..n)
        .flat_map(|t| {
            let flat = if distinct {
                perm.get(t % space.max(1)).copied().unwrap_or(0)
            } else {
                rng.below(space)
            };
            onnx_idx_check::tensor::unravel(flat, &dims)
        })
        .map(|x| x as i64)
        .collect();
}

/// Three tuples naming one target (the last write wins under `none`, D7; reductions combine).
pub(super) fn duplicate(c: &mut Call, rng: &mut Rng) {
    let k = c.idx_shape.last().copied().unwrap_or(1);
    c.idx_shape = vec![3, k];
    fill(c, rng, false);
    let first: Vec<i64> = c.idx.iter().take(k).copied().collect();
    c.idx = first.repeat(3);
}

/// Each component minus its dim: the same targets, counted from the back.
fn negate(c: &mut Call) {
    let dims = tuple_dims(c);
    let k = dims.len().max(1);
    for (i, x) in c.idx.iter_mut().enumerate() {
        *x -= dims.get(i % k).copied().unwrap_or(0) as i64;
    }
}

impl Builder<'_> {
    fn scatters(&self) -> bool {
        self.fam == (Family::Tuples { scatter: true })
    }

    /// A valid call: data of `rank` (dims 2 to 4 at rank <= 2, 2 to 3 up to 4, 2 above), tuples
    /// of `k`, the indices' leading dims `lead`.
    pub(super) fn tuple_call(
        &self,
        rng: &mut Rng,
        d: DType,
        idx: DType,
        rank: usize,
        k: usize,
        lead: &[usize],
    ) -> Call {
        let mut c = super::call(rng, Family::Axis, d, idx, 1, None);
        let hi = match rank {
            0..=2 => 4,
            3..=4 => 3,
            _ => 2,
        };
        c.data_shape = (0..rank).map(|_| rng.range(2, hi)).collect();
        c.idx_shape = lead.to_vec();
        c.idx_shape.push(k);
        let distinct = self.scatters();
        // Room for distinct targets.
        let n: usize = lead.iter().product();
        if distinct && k > 0 && tuple_dims(&c).iter().product::<usize>() < n {
            c.data_shape[0] = n;
        }
        fill(&mut c, rng, distinct);
        c
    }

    /// Adds case `slug`: a call of `rank`, `k` and `lead`, changed by `change`.
    #[allow(clippy::too_many_arguments)]
    fn tuple_case(
        &mut self,
        d: DType,
        i64d: DType,
        slug: &str,
        (rank, k, lead): (usize, usize, &[usize]),
        traits: &[&str],
        violation: bool,
        change: &dyn Fn(&mut Call, &mut Rng),
    ) {
        let mut rng = self.rng(d, slug);
        let mut c = self.tuple_call(&mut rng, d, i64d, rank, k, lead);
        change(&mut c, &mut rng);
        let mut t: Vec<String> = traits.iter().map(|s| (*s).to_owned()).collect();
        if violation {
            t.push(format!("violation:{}", slug.replace('_', "-")));
        }
        self.push(&mut rng, c, slug, &t, violation);
    }

    pub(super) fn build_tuples(&mut self, f: DType, i64d: DType) {
        let scatter = self.scatters();
        let none = &|_: &mut Call, _: &mut Rng| {};
        // Every dtype, in both storage forms; every index dtype.
        for d in self.dtypes() {
            for (form, slug) in [
                (super::Form::Raw, "basic"),
                (super::Form::Typed, "storage_typed"),
            ] {
                if form == super::Form::Typed && d == DType::String {
                    continue;
                }
                self.tuple_case(d, i64d, slug, (2, 1, &[2]), &[], false, &|c, _| {
                    c.form = form
                });
            }
        }
        for d in self.idx_dtypes() {
            let slug = format!("indices_{d}");
            self.tuple_case(f, d, &slug, (2, 2, &[2]), &[], false, none);
        }
        if self.v.negatives {
            self.tuple_case(
                f,
                i64d,
                "negative_indices",
                (2, 2, &[2]),
                &["negative-indices"],
                false,
                &|c, _| negate(c),
            );
        }
        // Each end of each component: (0, s1-1), (s0-1, 0), (-1, -1), (-s0, -s1); four
        // distinct targets.
        let neg = self.v.negatives;
        self.tuple_case(
            f,
            i64d,
            "boundary_indices",
            (2, 2, &[if neg { 4 } else { 2 }]),
            if neg {
                &["boundary-indices", "negative-indices"]
            } else {
                &["boundary-indices"]
            },
            false,
            &|c, _| {
                let (s0, s1) = (c.data_shape[0] as i64, c.data_shape[1] as i64);
                c.idx = vec![0, s1 - 1, s0 - 1, 0];
                if c.idx_shape[0] == 4 {
                    c.idx.extend([-1, -1, -s0, -s1]);
                }
            },
        );
        // The same tuple three times: read three times, or written three times (the last write
        // wins, D7).
        self.tuple_case(
            f,
            i64d,
            "duplicates",
            (2, 1, &[2]),
            &["duplicates"],
            false,
            &|c, rng| duplicate(c, rng),
        );
        // The shapes runtimes got wrong.
        self.tuple_case(
            f,
            i64d,
            "data_rank_above_indices_rank",
            (3, 1, &[2]),
            &["data-rank-above-indices-rank"],
            false,
            none,
        );
        self.tuple_case(
            f,
            i64d,
            "k_below_q_minus_1",
            (2, 1, &[2, 2]),
            &["k-below-q-minus-1"],
            false,
            none,
        );
        self.tuple_case(
            f,
            i64d,
            "k_equals_r",
            (3, 3, &[2]),
            &["k-equals-r"],
            false,
            none,
        );
        self.tuple_case(
            f,
            i64d,
            "single_tuple",
            (2, 1, &[]),
            &["single-tuple"],
            false,
            none,
        );
        self.tuple_case(
            f,
            i64d,
            "single_tuple_k_equals_r",
            (2, 2, &[]),
            &["single-tuple", "k-equals-r"],
            false,
            none,
        );
        if self.v.attr("batch_dims").is_some() {
            self.batch_dims_tuple_cases(f, i64d);
        } else if self.later_has("batch_dims") {
            // batch_dims arrives with a later version.
            self.tuple_case(
                f,
                i64d,
                "batch_dims_attribute_not_defined",
                (3, 1, &[2, 2]),
                &[],
                true,
                &|c, rng| {
                    c.data_shape[0] = 2;
                    c.batch_dims = Some(1);
                    fill(c, rng, false);
                },
            );
        }
        if scatter {
            // k = 0: every update is the whole tensor; under none the last one wins.
            self.tuple_case(
                f,
                i64d,
                "k_zero",
                (2, 0, &[2]),
                &["k-zero", "duplicates"],
                false,
                none,
            );
            if self.v.modes.contains(&"add") {
                self.tuple_case(
                    f,
                    i64d,
                    "k_zero_reduction_add",
                    (2, 0, &[3]),
                    &["k-zero", "duplicates", "reduction:add"],
                    false,
                    &|c, _| c.mode = Some("add"),
                );
            }
        }
        // Ranks 1 to 6, tuples of a random length.
        for rank in 1..=6usize {
            let slug = format!("rank{rank}");
            let mut rng = self.rng(f, &slug);
            let k = rng.range(1, rank);
            let mut c = self.tuple_call(&mut rng, f, i64d, rank, k, &[2]);
            c.form = super::Form::Raw;
            let traits = [format!("rank:{rank}")];
            self.push(&mut rng, c, &slug, &traits, false);
        }
        // No tuples at all; data with an empty dim past the tuples.
        self.tuple_case(
            f,
            i64d,
            "zero_size_indices",
            (2, 1, &[0]),
            &["zero-size-dims"],
            false,
            none,
        );
        self.tuple_case(
            f,
            i64d,
            "zero_size_data",
            (2, 1, &[2]),
            &["zero-size-dims"],
            false,
            &|c, rng| {
                c.data_shape[1] = 0;
                fill(c, rng, scatter);
            },
        );
        // Float specials in row 0 of the data (read by every gather), or written by a scatter.
        for d in self
            .dtypes()
            .into_iter()
            .filter(|&d| values::has_specials(d))
        {
            let sp: Vec<Option<u64>> = values::specials(d).into_iter().map(Some).collect();
            let n = sp.len();
            self.tuple_case(
                d,
                i64d,
                "float_specials",
                (2, 1, &[2]),
                &["float-specials"],
                false,
                &|c, _| {
                    c.data_shape = vec![2, n];
                    c.data_overrides = sp.clone();
                    if scatter {
                        c.idx_shape = vec![1, 1];
                        c.idx = vec![1];
                        c.updates_overrides = sp.clone();
                    } else {
                        c.idx = vec![1, 0];
                    }
                },
            );
        }
        self.mode_cases(i64d);
        self.trait_cases(i64d);
        self.tuple_violations(f, i64d);
    }

    /// Whether a later version defines attribute `name`.
    fn later_has(&self, name: &str) -> bool {
        self.def
            .versions
            .iter()
            .any(|x| x.since > self.v.since && x.attr(name).is_some())
    }

    /// batch_dims 1 and 2 (k == r - b at 2), and the batch_dims rules (D6).
    fn batch_dims_tuple_cases(&mut self, f: DType, i64d: DType) {
        let batched = |b: usize, k: usize| {
            move |c: &mut Call, rng: &mut Rng| {
                for d in 0..b {
                    c.idx_shape.insert(d, c.data_shape[d]);
                }
                c.batch_dims = Some(b as i64);
                c.idx_shape.truncate(b + 2);
                let last = c.idx_shape.len() - 1;
                c.idx_shape[last] = k;
                fill(c, rng, false);
            }
        };
        let traits = |b: &str| ["batch_dims>0".to_owned(), format!("batch-dims:{b}")];
        for (b, rank, k) in [(1usize, 3usize, 1usize), (2, 4, 2)] {
            let slug = format!("batch_dims_{b}");
            let mut rng = self.rng(f, &slug);
            let mut c = self.tuple_call(&mut rng, f, i64d, rank, k, &[2]);
            batched(b, k)(&mut c, &mut rng);
            self.push(&mut rng, c, &slug, &traits(&b.to_string()), false);
        }
        let v = true;
        self.tuple_case(
            f,
            i64d,
            "batch_dims_too_large",
            (2, 1, &[2]),
            &[],
            v,
            &|c, _| c.batch_dims = Some(2),
        );
        self.tuple_case(
            f,
            i64d,
            "batch_dims_negative",
            (2, 1, &[2]),
            &[],
            v,
            &|c, _| c.batch_dims = Some(-1),
        );
        self.tuple_case(
            f,
            i64d,
            "batch_dims_mismatch",
            (3, 1, &[2]),
            &[],
            v,
            &|c, rng| {
                batched(1, 1)(c, rng);
                c.idx_shape[0] = c.data_shape[0] + 1;
                fill(c, rng, false);
            },
        );
        self.tuple_case(
            f,
            i64d,
            "batch_dims_tuple_too_long",
            (3, 1, &[2]),
            &[],
            v,
            &|c, rng| {
                batched(1, 3)(c, rng);
                c.idx = vec![0; c.idx_shape.iter().product()];
            },
        );
    }

    fn tuple_violations(&mut self, f: DType, i64d: DType) {
        let v = true;
        self.tuple_case(f, i64d, "index_past_end", (2, 2, &[2]), &[], v, &|c, _| {
            c.idx[0] = c.data_shape[0] as i64
        });
        self.tuple_case(
            f,
            i64d,
            "last_component_past_end",
            (2, 2, &[2]),
            &[],
            v,
            &|c, _| c.idx[3] = c.data_shape[1] as i64,
        );
        if self.v.negatives {
            self.tuple_case(
                f,
                i64d,
                "index_before_start",
                (2, 2, &[2]),
                &[],
                v,
                &|c, _| c.idx[1] = -(c.data_shape[1] as i64) - 1,
            );
        }
        self.tuple_case(f, i64d, "tuple_too_long", (2, 3, &[2]), &[], v, &|c, _| {
            c.idx = vec![0; 6]
        });
        if !self.scatters() {
            self.tuple_case(f, i64d, "empty_tuple", (2, 0, &[2]), &[], v, &|_, _| {});
        } else {
            self.tuple_case(
                f,
                i64d,
                "updates_shape_mismatch",
                (2, 1, &[2]),
                &[],
                v,
                &|c, _| {
                    let mut s = vec![2];
                    s.extend(c.data_shape[1..].iter().map(|&d| d + 1));
                    c.updates_shape = Some(s);
                },
            );
        }
        self.tuple_case(f, i64d, "rank0_indices", (2, 1, &[]), &[], v, &|c, _| {
            c.idx_shape = Vec::new();
            c.idx = vec![0];
            c.updates_shape = Some(c.data_shape.clone());
        });
        self.common_violations(f, i64d);
    }
}
