//! Crossed traits, for the hunt's rounds: the default suite tries each trait alone (negative
//! indices on axis 0, over-long tuples of zeros, a sequence shorter than the cache), where a
//! runtime's bug often needs two at once. Each case here crosses several: negative indices on
//! every axis and beside `batch_dims`, duplicates under every reduction along every axis (some
//! spelled negative), tuples that are too long or out of range in a component other than the
//! first and with negative neighbours, TensorScatter updates as long as the cache written from
//! its end. The shapes (ranks, dims, index counts, axes, `batch_dims`) and the data type pair are
//! drawn from the seed, so each round of a hunt draws new ones; the kinds stay the same.
//!
//! Every case renders through the reference like any other: a valid one gets its expected output
//! from it, and a violation is made only where the spec (or a decision of docs/semantics.md)
//! requires an error.

use super::{call, mode_attr, offsets, tuples, Builder, Call, Family, Pass};
use crate::generate::rng::Rng;
use onnx_idx_check::tensor::{Class, DType};

/// How many drawn cases each crossing of tuples and offsets makes per round (their shapes
/// differ, so that one round meets more of them).
const DRAWS: usize = 2;

/// Makes one crossed call and its traits from the builder, the case's generator and its dtype
/// pair; `None` where the crossing does not apply to the drawn shape.
type Make<'f, 'o> =
    dyn Fn(&Builder<'o>, &mut Rng, DType, DType) -> Option<(Call, Vec<String>)> + 'f;

impl<'o> Builder<'o> {
    /// The crossed cases of the version (none for a deprecated one: it only refuses).
    pub(super) fn crossed_cases(&mut self) {
        if self.v.deprecated {
            return;
        }
        match self.fam {
            Family::Axis => self.crossed_axis(),
            Family::Elements { scatter } => self.crossed_elements(scatter),
            Family::Tuples { scatter } => self.crossed_tuples(scatter),
            Family::Offsets => self.crossed_offsets(),
        }
        self.pass = None;
    }

    /// Draws the case's value and index dtypes from the seed and the kind (signed indices only
    /// when `signed`), and sets them as the pass so that the name carries them. `None` when no
    /// index dtype fits.
    fn draw_pair(&mut self, slug: &str, signed: bool) -> Option<(DType, DType)> {
        let mut r = Rng::for_case(
            self.seed,
            &format!(
                "{}:{}:{}:{slug}",
                self.def.domain, self.def.op_type, self.v.since
            ),
        );
        let ds = self.allowed_dtypes();
        let is: Vec<DType> = self
            .allowed_idx_dtypes()
            .into_iter()
            .filter(|i| !signed || i.class() == Class::Signed)
            .collect();
        if ds.is_empty() || is.is_empty() {
            return None;
        }
        let d = ds[r.below(ds.len())];
        let i = is[r.below(is.len())];
        self.pass = Some(Pass { dtype: d, idx: i });
        Some((d, i))
    }

    /// Adds crossed case `slug` made by `make` on a drawn dtype pair; `make` returns `None` where
    /// the crossing does not apply to the drawn shape.
    fn cross(&mut self, slug: &str, signed: bool, violation: bool, make: &Make<'_, 'o>) {
        let Some((d, i)) = self.draw_pair(slug, signed) else {
            return;
        };
        let mut rng = self.rng(d, slug);
        if let Some((c, mut traits)) = make(self, &mut rng, d, i) {
            traits.push("crossed".to_owned());
            if violation {
                traits.push(format!("violation:{}", slug.replace('_', "-")));
            }
            self.push(&mut rng, c, slug, &traits, violation);
        }
    }

    /// A call along `axis` of a drawn rank in `ranks` (dims 1 to 4, the axis at least 1 long, 2
    /// when `long`), the axis given positive or negative at random; the indices of the family's
    /// shape (Axis: rank 0 to 3, dims 1 to 3; Elements: each dim up to the data's, the axis dim
    /// up to 2 past it for a gather), filled with valid non-negative indices.
    fn drawn_call(
        &self,
        rng: &mut Rng,
        d: DType,
        i: DType,
        axis: usize,
        ranks: (usize, usize),
    ) -> Call {
        let fam = self.fam;
        let rank = rng.range(ranks.0.max(axis + 1), ranks.1.max(axis + 1));
        let a = if rng.below(2) == 0 {
            axis as i64
        } else {
            axis as i64 - rank as i64
        };
        let mut c = call(rng, fam, d, i, rank, Some(a));
        let hi = if rank <= 2 { 4 } else { 3 };
        c.data_shape = (0..rank).map(|_| rng.range(1, hi)).collect();
        c.data_shape[axis] = rng.range(2, hi);
        c.idx_shape = match fam {
            Family::Axis => (0..rng.range(0, 3)).map(|_| rng.range(1, 3)).collect(),
            Family::Elements { scatter } => c
                .data_shape
                .iter()
                .enumerate()
                .map(|(k, &n)| rng.range(1, if k == axis && !scatter { n + 2 } else { n }))
                .collect(),
            _ => Vec::new(),
        };
        c.fill(rng, fam);
        c
    }

    /// The traits of a drawn call along axis `k`.
    fn shape_traits(c: &Call, k: usize) -> Vec<String> {
        vec![
            format!("rank:{}", c.data_shape.len()),
            format!("axis:{}", c.axis.unwrap_or(k as i64)),
            format!("axis-position:{k}"),
        ]
    }

    /// Writes about half of the indices of `c` (and at least one) counted from the back: the
    /// same positions, spelled negative.
    fn negate_some(c: &mut Call, rng: &mut Rng) {
        let s = c.axis_len() as i64;
        let first = rng.below(c.idx.len());
        for (k, x) in c.idx.iter_mut().enumerate() {
            if (k == first || rng.below(2) == 0) && *x >= 0 && *x < s {
                *x -= s;
            }
        }
    }

    /// Puts one index of `c`, at a drawn position, just past the end of its axis or (where
    /// negative indices count) just before its start; `-1` where they do not (D2). Returns
    /// the trait.
    fn out_of_range_one(&self, c: &mut Call, rng: &mut Rng, negatives: bool) -> &'static str {
        let s = c.axis_len() as i64;
        let at = rng.below(c.idx.len());
        match rng.below(2) {
            0 => {
                c.idx[at] = s;
                "index-past-end"
            }
            _ if negatives => {
                c.idx[at] = -s - 1;
                "index-before-start"
            }
            _ => {
                c.idx[at] = -1;
                "negative-index-refused"
            }
        }
    }

    /// Gathers along an axis (and their gradients): negative indices on every axis position,
    /// beside `batch_dims` where the version has it, and out-of-range ones on every axis (zeros
    /// where the version zero-fills, an error elsewhere).
    fn crossed_axis(&mut self) {
        let zero_fill = self.v.zero_fills();
        let counts = self.v.negatives;
        for k in 0..4usize {
            let slug = format!("cross_negative_indices_axis_position{k}");
            if counts {
                self.cross(&slug, true, false, &|b, rng, d, i| {
                    let mut c = b.drawn_call(rng, d, i, k, (1, 4));
                    if c.idx.is_empty() {
                        return None;
                    }
                    Self::negate_some(&mut c, rng);
                    let mut t = Self::shape_traits(&c, k);
                    t.push("negative-indices".into());
                    Some((c, t))
                });
            }
            let slug = format!("cross_out_of_range_axis_position{k}");
            self.cross(&slug, counts, !zero_fill, &|b, rng, d, i| {
                let mut c = b.drawn_call(rng, d, i, k, (1, 4));
                if c.idx.is_empty() {
                    return None;
                }
                let negatives = counts && b.negatives(i);
                if negatives {
                    Self::negate_some(&mut c, rng);
                }
                let what = b.out_of_range_one(&mut c, rng, negatives);
                let mut t = Self::shape_traits(&c, k);
                t.push(what.into());
                if negatives {
                    t.push("negative-indices".into());
                }
                if zero_fill {
                    t.push("out-of-range-zero-fill".into());
                }
                Some((c, t))
            });
        }
        if self.v.attr("batch_dims").is_none() {
            return;
        }
        for n in 0..3usize {
            // Where negative indices do not count (OpenVINO's Gather-7), the shapes alone.
            let slug = if counts {
                format!("cross_batch_dims_negative_indices_{n}")
            } else {
                format!("cross_batch_dims_drawn_{n}")
            };
            self.cross(&slug, counts, false, &|b, rng, d, i| {
                let mut c = b.batched_axis_call(rng, d, i)?;
                let mut t = vec![
                    "batch_dims>0".to_owned(),
                    format!("rank:{}", c.data_shape.len()),
                    format!("axis:{}", c.axis.unwrap_or(0)),
                ];
                if counts {
                    Self::negate_some(&mut c, rng);
                    t.push("negative-indices".into());
                }
                if c.batch_dims.is_some_and(|x| x < 0) {
                    t.push("batch-dims:negative".into());
                }
                Some((c, t))
            });
        }
        if zero_fill {
            self.cross(
                "cross_batch_dims_out_of_range_zero_fill",
                true,
                false,
                &|b, rng, d, i| {
                    let mut c = b.batched_axis_call(rng, d, i)?;
                    Self::negate_some(&mut c, rng);
                    let what = b.out_of_range_one(&mut c, rng, true);
                    let t = vec![
                        "batch_dims>0".to_owned(),
                        "negative-indices".to_owned(),
                        "out-of-range-zero-fill".to_owned(),
                        what.to_owned(),
                    ];
                    Some((c, t))
                },
            );
        }
    }

    /// A valid gather along an axis with `batch_dims` b from 1 to 2: data of rank b+1 to 4, the
    /// axis at or after b (positive or negative), indices `data[..b]` and up to two dims more,
    /// `batch_dims` given negative (from the indices' rank) half of the time it can be.
    fn batched_axis_call(&self, rng: &mut Rng, d: DType, i: DType) -> Option<Call> {
        let b = rng.range(1, 2);
        let rank = rng.range(b + 1, 4);
        let axis = rng.range(b, rank - 1);
        let mut c = call(rng, self.fam, d, i, rank, Some(axis as i64));
        c.data_shape = (0..rank).map(|_| rng.range(1, 3)).collect();
        c.data_shape[axis] = rng.range(2, 4);
        if rng.below(2) == 0 {
            c.axis = Some(axis as i64 - rank as i64);
        }
        c.idx_shape = c.data_shape[..b].to_vec();
        for _ in 0..rng.range(0, 2) {
            c.idx_shape.push(rng.range(1, 3));
        }
        let ri = c.idx_shape.len() as i64;
        c.batch_dims = Some(if ri > b as i64 && rng.below(2) == 0 {
            b as i64 - ri
        } else {
            b as i64
        });
        c.fill(rng, self.fam);
        (!c.idx.is_empty()).then_some(c)
    }

    /// Element-wise ops: negative indices on every axis position; duplicates along every axis
    /// under every reduction the version has (some of them spelled negative); an out-of-range
    /// index on every axis position with negative neighbours.
    fn crossed_elements(&mut self, scatter: bool) {
        let counts = self.v.negatives;
        let modes: Vec<&'static str> = match mode_attr(self.v) {
            Some(_) => self.v.modes.to_vec(),
            None => vec![""],
        };
        for k in 0..4usize {
            if counts {
                let slug = format!("cross_negative_indices_axis_position{k}");
                self.cross(&slug, true, false, &|b, rng, d, i| {
                    let mut c = b.drawn_call(rng, d, i, k, (1, 4));
                    Self::negate_some(&mut c, rng);
                    let mut t = Self::shape_traits(&c, k);
                    t.push("negative-indices".into());
                    Some((c, t))
                });
            }
            let slug = format!("cross_out_of_range_axis_position{k}");
            self.cross(&slug, counts, true, &|b, rng, d, i| {
                let mut c = b.drawn_call(rng, d, i, k, (1, 4));
                let negatives = counts && b.negatives(i);
                if negatives {
                    Self::negate_some(&mut c, rng);
                }
                let what = b.out_of_range_one(&mut c, rng, negatives);
                let mut t = Self::shape_traits(&c, k);
                t.push(what.into());
                Some((c, t))
            });
        }
        if !scatter && !self.grad() {
            // Reads of one position twice: one crossing, every axis position drawn.
            for k in 0..3usize {
                let slug = format!("cross_duplicates_axis_position{k}");
                self.cross(&slug, counts, false, &|b, rng, d, i| {
                    let c = b.duplicated_call(rng, d, i, k, counts && b.negatives(i));
                    let mut t = Self::shape_traits(&c, k);
                    t.push("duplicates".into());
                    Some((c, t))
                });
            }
            return;
        }
        for &m in &modes {
            for k in 0..3usize {
                let slug = match (mode_attr(self.v), m) {
                    (Some(attr), m) => format!("cross_duplicates_{attr}_{m}_axis_position{k}"),
                    (None, _) => format!("cross_duplicates_axis_position{k}"),
                };
                self.cross(&slug, counts, false, &|b, rng, d, i| {
                    let mut c = b.duplicated_call(rng, d, i, k, counts && b.negatives(i));
                    let mut t = Self::shape_traits(&c, k);
                    t.push("duplicates".into());
                    if let Some(attr) = mode_attr(b.v) {
                        c.mode = Some(m);
                        t.push(format!("{attr}:{m}"));
                    }
                    Some((c, t))
                });
            }
        }
    }

    /// A drawn call along axis position `k` whose indices are equal along each line of the axis
    /// (two to four of them), about half spelled negative when `negatives`.
    fn duplicated_call(
        &self,
        rng: &mut Rng,
        d: DType,
        i: DType,
        k: usize,
        negatives: bool,
    ) -> Call {
        let mut c = self.drawn_call(rng, d, i, k, (1, 3));
        c.idx_shape[k] = rng.range(2, 4);
        c.duplicate(rng, self.fam);
        if negatives {
            Self::negate_some(&mut c, rng);
        }
        c
    }

    /// Index tuples: negative components beside `batch_dims` 0 to 2 and every tuple length;
    /// duplicate targets under every reduction (spelled positive and negative, `k` from 0 for
    /// scatters); tuples longer than the data allows, of non-zero and negative components; one
    /// component out of range at a drawn position.
    fn crossed_tuples(&mut self, scatter: bool) {
        let batched = self.v.attr("batch_dims").is_some();
        let counts = self.v.negatives;
        for n in 0..DRAWS {
            if counts {
                let slug = format!("cross_negative_tuples_{n}");
                self.cross(&slug, true, false, &|b, rng, d, i| {
                    let mut c = b.drawn_tuples(rng, d, i, batched, scatter, false)?;
                    negate_components(&mut c, rng);
                    let mut t = tuple_traits(&c);
                    t.push("negative-indices".into());
                    Some((c, t))
                });
            }
            let slug = format!("cross_tuple_too_long_{n}");
            self.cross(&slug, counts, true, &|b, rng, d, i| {
                let mut c = b.drawn_tuples(rng, d, i, batched, scatter, false)?;
                let bd = c.batch_dims.unwrap_or(0) as usize;
                let r = c.data_shape.len();
                // GatherND needs k <= r - b, ScatterND k <= r.
                let room = if scatter { r } else { r - bd };
                let k = room + rng.range(1, 2);
                let q = c.idx_shape.len();
                c.idx_shape[q - 1] = k;
                let n: usize = c.idx_shape.iter().product();
                c.idx = (0..n)
                    .map(|j| {
                        let dim = c.data_shape.get(bd + j % k).copied().unwrap_or(3) as i64;
                        let mut x = rng.range_i64(-dim, dim - 1);
                        if x == 0 {
                            x = -1;
                        }
                        if !counts && x < 0 {
                            x += dim;
                        }
                        x
                    })
                    .collect();
                let mut t = tuple_traits(&c);
                t.push("tuple-too-long".into());
                Some((c, t))
            });
            let slug = format!("cross_component_out_of_range_{n}");
            self.cross(&slug, counts, true, &|b, rng, d, i| {
                let mut c = b.drawn_tuples(rng, d, i, batched, scatter, false)?;
                let k = c.idx_shape.last().copied().unwrap_or(0);
                if k == 0 || c.idx.is_empty() {
                    return None;
                }
                if counts {
                    negate_components(&mut c, rng);
                }
                let bd = c.batch_dims.unwrap_or(0) as usize;
                let at = rng.below(c.idx.len());
                let dim = c.data_shape[bd + at % k] as i64;
                let before = counts && rng.below(2) == 0;
                c.idx[at] = if before { -dim - 1 } else { dim };
                let mut t = tuple_traits(&c);
                t.push(format!("component-position:{}", at % k));
                t.push(
                    if before {
                        "index-before-start"
                    } else {
                        "index-past-end"
                    }
                    .into(),
                );
                Some((c, t))
            });
        }
        let modes: Vec<&'static str> = match mode_attr(self.v) {
            Some(_) if scatter => self.v.modes.to_vec(),
            _ => vec![""],
        };
        for &m in &modes {
            let slug = match mode_attr(self.v) {
                Some(attr) if scatter => format!("cross_duplicate_tuples_{attr}_{m}"),
                _ => "cross_duplicate_tuples".to_owned(),
            };
            self.cross(&slug, counts, false, &|b, rng, d, i| {
                let mut c = b.drawn_tuples(rng, d, i, batched, scatter, true)?;
                if counts {
                    negate_components(&mut c, rng);
                }
                let mut t = tuple_traits(&c);
                t.push("duplicates".into());
                if let (Some(attr), true) = (mode_attr(b.v), scatter) {
                    c.mode = Some(m);
                    t.push(format!("{attr}:{m}"));
                }
                Some((c, t))
            });
        }
    }

    /// A valid tuple call: `batch_dims` b from 0 to 2 when `batched` (else none), data of rank
    /// b+1 to b+3 (dims 1 to 3, the batch dims and the tuple dims at least 1), tuples of k from 1
    /// (0 for a scatter with `dups`) to r - b, one to two leading index dims after the batch
    /// ones. Scatters' targets are distinct unless `dups`; with `dups` the first target is
    /// written (or read) again by the last tuple of each batch row, and the tuples draw from few
    /// targets.
    fn drawn_tuples(
        &self,
        rng: &mut Rng,
        d: DType,
        i: DType,
        batched: bool,
        scatter: bool,
        dups: bool,
    ) -> Option<Call> {
        let bd = if batched { rng.range(0, 2) } else { 0 };
        let rank = rng.range(bd + 1, (bd + 3).min(5));
        let kmin = if scatter && dups { 0 } else { 1 };
        let k = rng.range(kmin, rank - bd);
        let mut c = call(rng, Family::Axis, d, i, 1, None);
        c.data_shape = (0..rank).map(|_| rng.range(1, 3)).collect();
        let space: usize = c.data_shape[bd..bd + k].iter().product();
        let mut lead: Vec<usize> = c.data_shape[..bd].to_vec();
        let first = if scatter && !dups {
            rng.range(1, space.min(3))
        } else {
            rng.range(if dups { 2 } else { 1 }, 3)
        };
        lead.push(first);
        let second = rng.below(2) == 0;
        if second && (dups || !scatter) {
            lead.push(rng.range(1, 2));
        }
        c.idx_shape = lead;
        c.idx_shape.push(k);
        c.batch_dims = (bd > 0 || (batched && rng.below(2) == 0)).then_some(bd as i64);
        tuples::fill(&mut c, rng, scatter && !dups);
        if dups && k > 0 {
            // The last tuple of each row of tuples repeats the first.
            let per = first * k;
            let rows = c.idx.len() / per.max(1);
            for r in 0..rows {
                let (a, z) = (r * per, r * per + per - k);
                for j in 0..k {
                    c.idx[z + j] = c.idx[a + j];
                }
            }
        }
        Some(c)
    }

    /// TensorScatter: as many batch rows as the cache is long, updates as long as the cache (or
    /// drawn), written from its last position (wrapping in circular mode, ending exactly at it in
    /// linear mode) on every sequence axis; and the rules these shapes break.
    fn crossed_offsets(&mut self) {
        let Some(attr) = mode_attr(self.v) else {
            return;
        };
        let (linear, circular) = match self.v.modes {
            [l, c, ..] => (*l, *c),
            _ => return,
        };
        for n in 0..DRAWS {
            let slug = format!("cross_full_cache_circular_from_end_{n}");
            self.cross(&slug, false, false, &|b, rng, d, i| {
                let mut c = b.drawn_offsets(rng, d, i);
                let m = offsets::max_len(&c);
                let full = rng.below(2) == 0;
                offsets::set_len(&mut c, if full { m } else { rng.range(1, m) });
                c.mode = Some(circular);
                // The last position, and past it: the write index is taken modulo M.
                c.idx = (0..c.idx.len())
                    .map(|j| match j % 3 {
                        0 => m as i64 - 1,
                        1 => (m + rng.range(0, m)) as i64,
                        _ => rng.range(0, m - 1) as i64,
                    })
                    .collect();
                let mut t = offset_traits(&c, &format!("{attr}:{circular}"));
                t.push("circular-wrap".into());
                t.push("write-indices:end".into());
                Some((c, t))
            });
            let slug = format!("cross_full_cache_linear_to_end_{n}");
            self.cross(&slug, false, false, &|b, rng, d, i| {
                let mut c = b.drawn_offsets(rng, d, i);
                let m = offsets::max_len(&c);
                let l = if rng.below(2) == 0 {
                    m
                } else {
                    rng.range(1, m)
                };
                offsets::set_len(&mut c, l);
                if rng.below(2) == 0 {
                    c.mode = Some(linear);
                }
                c.idx = (0..c.idx.len())
                    .map(|j| {
                        if j % 2 == 0 {
                            (m - l) as i64
                        } else {
                            rng.range(0, m - l) as i64
                        }
                    })
                    .collect();
                let mut t = offset_traits(&c, &format!("{attr}:{linear}"));
                t.push("write-indices:end".into());
                Some((c, t))
            });
        }
        self.cross(
            "cross_full_cache_no_write_indices",
            false,
            false,
            &|b, rng, d, i| {
                let mut c = b.drawn_offsets(rng, d, i);
                let m = offsets::max_len(&c);
                offsets::set_len(&mut c, m);
                c.omit_optional = true;
                let mode = if rng.below(2) == 0 { linear } else { circular };
                c.mode = Some(mode);
                let mut t = offset_traits(&c, &format!("{attr}:{mode}"));
                t.push("write-indices:absent".into());
                Some((c, t))
            },
        );
        // The rules: a full-length update written from 1 in linear mode runs past the end; a
        // negative write index is an error in either mode (D2).
        self.cross(
            "cross_full_cache_linear_past_end",
            false,
            true,
            &|b, rng, d, i| {
                let mut c = b.drawn_offsets(rng, d, i);
                let m = offsets::max_len(&c);
                offsets::set_len(&mut c, m);
                let at = rng.below(c.idx.len());
                c.idx = vec![0; c.idx.len()];
                c.idx[at] = rng.range(1, m) as i64;
                let t = offset_traits(&c, &format!("{attr}:{linear}"));
                Some((c, t))
            },
        );
        self.cross(
            "cross_full_cache_negative_write_index",
            false,
            true,
            &|b, rng, d, i| {
                let mut c = b.drawn_offsets(rng, d, i);
                let m = offsets::max_len(&c);
                offsets::set_len(&mut c, m);
                c.mode = Some(if rng.below(2) == 0 { linear } else { circular });
                let at = rng.below(c.idx.len());
                c.idx = vec![0; c.idx.len()];
                c.idx[at] = -rng.range_i64(1, m as i64);
                let t = offset_traits(&c, &format!("{attr}:{}", c.mode.unwrap_or(linear)));
                Some((c, t))
            },
        );
    }

    /// A TensorScatter call of rank 3 to 4 on a drawn sequence axis (never the batch axis 0;
    /// positive or negative), the cache `M` 2 to 5 long with as many batch rows, other dims 1 to
    /// 3, and one write index per row.
    fn drawn_offsets(&self, rng: &mut Rng, d: DType, i: DType) -> Call {
        let rank = rng.range(3, 4);
        let axis = rng.range(1, rank - 1);
        let a = if rng.below(2) == 0 {
            axis as i64
        } else {
            axis as i64 - rank as i64
        };
        let mut c = self.offset_call_on(rng, d, i, rank, Some(a));
        let m = rng.range(2, 5);
        c.data_shape = (0..rank).map(|_| rng.range(1, 3)).collect();
        c.data_shape[axis] = m;
        c.data_shape[0] = m;
        offsets::set_len(&mut c, 1);
        c.idx_shape = vec![m];
        c.idx = vec![0; m];
        c
    }
}

/// Writes each component of about half of the tuples of `c` (and of the first) counted from
/// the back of its dim.
fn negate_components(c: &mut Call, rng: &mut Rng) {
    let bd = usize::try_from(c.batch_dims.unwrap_or(0)).unwrap_or(0);
    let k = c.idx_shape.last().copied().unwrap_or(0);
    if k == 0 {
        return;
    }
    for (j, x) in c.idx.iter_mut().enumerate() {
        let dim = c.data_shape.get(bd + j % k).copied().unwrap_or(0) as i64;
        if (j == 0 || rng.below(2) == 0) && *x >= 0 && *x < dim {
            *x -= dim;
        }
    }
}

/// The shape traits of a tuple call.
fn tuple_traits(c: &Call) -> Vec<String> {
    let b = c.batch_dims.unwrap_or(0);
    let mut t = vec![
        format!("rank:{}", c.data_shape.len()),
        format!("k:{}", c.idx_shape.last().copied().unwrap_or(0)),
    ];
    if b > 0 {
        t.push("batch_dims>0".into());
        t.push(format!("batch-dims:{b}"));
    }
    t
}

/// The shape traits of an offsets call, with its mode's trait.
fn offset_traits(c: &Call, mode: &str) -> Vec<String> {
    let mut t = vec![
        format!("rank:{}", c.data_shape.len()),
        format!("axis:{}", c.axis.unwrap_or(-2)),
        "batch-as-long-as-cache".to_owned(),
        mode.to_owned(),
    ];
    if offsets::len_of(c) == offsets::max_len(c) {
        t.push("full-sequence".into());
    }
    t
}

#[cfg(test)]
mod tests {
    use super::super::{crossed, generated_ops, versions, CaseSpec};
    use crate::generate::model::Attr;
    use onnx_idx_check::ops::Role;

    /// Every crossed case of every version under `seed`.
    fn all(seed: u64) -> Vec<CaseSpec> {
        versions(&generated_ops())
            .into_iter()
            .flat_map(|(def, v)| crossed(seed, def, v))
            .collect()
    }

    #[test]
    fn every_crossed_case_renders_and_the_reference_agrees_on_its_violation() {
        // `render_case` fails when the reference computes an output for a case made to break
        // the spec, or refuses one made valid.
        for seed in 0..6 {
            let cases = all(seed);
            assert!(cases.len() > 200, "{} cases", cases.len());
            for c in &cases {
                let r = crate::generate::render_case(c);
                assert!(r.is_ok(), "seed {seed}: {}: {:#}", c.name, r.err().unwrap());
            }
        }
    }

    /// The crossed cases of `op`-`since` under seeds 0 to 7.
    fn of(op: &str, since: i64) -> Vec<CaseSpec> {
        let ops = crate::generate::select_ops(&[op.to_owned()]).unwrap();
        (0..8)
            .flat_map(|seed| {
                versions(&ops)
                    .into_iter()
                    .filter(|(_, v)| v.since == since)
                    .flat_map(move |(def, v)| crossed(seed, def, v))
            })
            .collect()
    }

    fn int_attr(c: &CaseSpec, name: &str) -> Option<i64> {
        c.attrs.iter().find_map(|a| match a {
            Attr::Int(n, x) if *n == name => Some(*x),
            _ => None,
        })
    }

    fn str_attr(c: &CaseSpec, name: &str) -> Option<String> {
        c.attrs.iter().find_map(|a| match a {
            Attr::Str(n, x) if *n == name => Some(x.clone()),
            _ => None,
        })
    }

    fn input(c: &CaseSpec, role: Role) -> (Vec<usize>, Vec<i64>) {
        let t = &c.inputs[c.version.input_with(role).expect("the input")];
        (t.shape().to_vec(), t.to_i64_vec().unwrap_or_default())
    }

    /// The case's axis (attribute or input, default 0), normalised by the data's rank.
    fn axis(c: &CaseSpec, rank: usize) -> usize {
        let a = int_attr(c, "axis")
            .or_else(|| {
                c.version
                    .input_with(Role::Axis)
                    .and_then(|i| c.inputs[i].to_i64_vec())
                    .and_then(|v| v.first().copied())
            })
            .unwrap_or(0);
        (if a < 0 { a + rank as i64 } else { a }) as usize
    }

    #[test]
    fn negative_indices_are_drawn_on_a_non_zero_axis_beside_batch_dims() {
        // OpenVINO's Gather-8: an axis after a batch dim, a negative index, valid.
        let cases = of("org.openvinotoolkit.Gather", 8);
        let hit = cases.iter().any(|c| {
            let data = c.inputs[0].shape().len();
            let (_, idx) = input(c, Role::Indices);
            !c.violation
                && int_attr(c, "batch_dims").is_some_and(|b| b != 0)
                && axis(c, data) > 0
                && idx.iter().any(|&x| x < 0)
        });
        assert!(hit);
        // Gather-13 and GatherElements-13: a negative index on each axis from 0 to 3.
        for (op, v) in [("Gather", 13), ("GatherElements", 13)] {
            let cases = of(op, v);
            for k in 0..4 {
                assert!(
                    cases.iter().any(|c| {
                        let data = c.inputs[0].shape().len();
                        !c.violation
                            && axis(c, data) == k
                            && input(c, Role::Indices).1.iter().any(|&x| x < 0)
                    }),
                    "{op}-{v}: no negative index on axis {k}"
                );
            }
        }
        // GatherND-13: a negative component past the first with batch_dims 1 or 2.
        let cases = of("GatherND", 13);
        assert!(cases.iter().any(|c| {
            let (shape, idx) = input(c, Role::Indices);
            let k = *shape.last().unwrap();
            !c.violation
                && int_attr(c, "batch_dims").is_some_and(|b| b > 0)
                && idx.iter().enumerate().any(|(j, &x)| j % k > 0 && x < 0)
        }));
    }

    /// Whether two indices of `c` that differ only in their position along `axis` land on
    /// one element (negative ones counted from the back of a dim of `s`).
    fn has_duplicate_along(shape: &[usize], idx: &[i64], axis: usize, s: i64) -> bool {
        let norm = |x: i64| if x < 0 { x + s } else { x };
        (0..idx.len()).any(|a| {
            let ca = onnx_idx_check::tensor::unravel(a, shape);
            (a + 1..idx.len()).any(|b| {
                let cb = onnx_idx_check::tensor::unravel(b, shape);
                let same_line = (0..shape.len()).all(|d| d == axis || ca[d] == cb[d]);
                same_line && norm(idx[a]) == norm(idx[b])
            })
        })
    }

    #[test]
    fn duplicates_meet_every_reduction_on_every_axis_some_spelled_negative() {
        let cases = of("ScatterElements", 18);
        for m in ["none", "add", "mul", "max", "min"] {
            for k in 0..3 {
                let found = cases.iter().any(|c| {
                    let data = c.inputs[0].shape();
                    let (shape, idx) = input(c, Role::Indices);
                    !c.violation
                        && str_attr(c, "reduction").as_deref() == Some(m)
                        && axis(c, data.len()) == k
                        && has_duplicate_along(&shape, &idx, k, data[k] as i64)
                });
                assert!(found, "reduction {m} on axis {k}");
            }
        }
        // Some duplicate pair is spelled once positive and once negative.
        assert!(cases.iter().any(|c| {
            let (_, idx) = input(c, Role::Indices);
            let s = c.inputs[0].shape()[axis(c, c.inputs[0].shape().len())] as i64;
            idx.iter().any(|&x| x < 0 && idx.contains(&(x + s)))
        }));
        // ScatterND-18: a tuple written twice under every reduction.
        let cases = of("ScatterND", 18);
        for m in ["none", "add", "mul", "max", "min"] {
            assert!(
                cases.iter().any(|c| {
                    let data = c.inputs[0].shape().to_vec();
                    let (shape, idx) = input(c, Role::Indices);
                    let k = *shape.last().unwrap();
                    let targets: Vec<Vec<i64>> = idx
                        .chunks(k.max(1))
                        .map(|t| {
                            t.iter()
                                .zip(&data)
                                .map(|(&x, &d)| if x < 0 { x + d as i64 } else { x })
                                .collect()
                        })
                        .collect();
                    let dup = k == 0 && shape[0] > 1
                        || (0..targets.len()).any(|a| targets[a + 1..].contains(&targets[a]));
                    !c.violation && str_attr(c, "reduction").as_deref() == Some(m) && dup
                }),
                "ScatterND-18 {m}"
            );
        }
    }

    #[test]
    fn over_long_and_out_of_range_tuples_have_non_zero_and_negative_components() {
        for (op, v) in [("GatherND", 13), ("ScatterND", 18)] {
            let cases = of(op, v);
            let too_long = cases.iter().any(|c| {
                let r = c.inputs[0].shape().len() as i64;
                let b = int_attr(c, "batch_dims").unwrap_or(0);
                let (shape, idx) = input(c, Role::Indices);
                let k = *shape.last().unwrap() as i64;
                let room = if op == "ScatterND" { r } else { r - b };
                c.violation && k > room && idx.iter().any(|&x| x < 0) && idx.iter().all(|&x| x != 0)
            });
            assert!(
                too_long,
                "{op}-{v}: no over-long tuple of non-zero, negative parts"
            );
            // One component out of range at a position past the first, among negative ones.
            let out = cases.iter().any(|c| {
                let data = c.inputs[0].shape().to_vec();
                let b = int_attr(c, "batch_dims").unwrap_or(0) as usize;
                let (shape, idx) = input(c, Role::Indices);
                let k = *shape.last().unwrap();
                if k == 0 || b + k > data.len() {
                    return false;
                }
                let bad = |j: usize, x: i64| {
                    let d = data[b + j % k] as i64;
                    x >= d || x < -d
                };
                c.violation
                    && idx.iter().any(|&x| x < 0)
                    && idx.iter().enumerate().any(|(j, &x)| j % k > 0 && bad(j, x))
            });
            assert!(out, "{op}-{v}: no component out of range past the first");
        }
    }

    #[test]
    fn tensor_scatter_writes_updates_as_long_as_the_cache_from_its_end() {
        let cases = of("TensorScatter", 24);
        let seq = |c: &CaseSpec| {
            let rank = c.inputs[0].shape().len() as i64;
            let a = int_attr(c, "axis").unwrap_or(-2);
            (if a < 0 { a + rank } else { a }) as usize
        };
        let found = |mode: &str, at_end: &dyn Fn(i64, i64) -> bool| {
            cases.iter().any(|c| {
                let (past, update) = (c.inputs[0].shape(), c.inputs[1].shape());
                let a = seq(c);
                let m = past[a] as i64;
                let Some(wi) = c.inputs.get(2).and_then(|t| t.to_i64_vec()) else {
                    return false;
                };
                !c.violation
                    && str_attr(c, "mode").as_deref().unwrap_or("linear") == mode
                    && a > 0
                    && update[a] == past[a]
                    && past[0] == past[a]
                    && wi.iter().any(|&w| at_end(w, m))
            })
        };
        // Circular: a full-length update from the last slot wraps over the whole cache.
        assert!(found("circular", &|w, m| w == m - 1));
        // Circular: a write index past the cache is taken modulo its length.
        assert!(found("circular", &|w, m| w >= m));
        // Linear: a full-length update fits only from 0; the same from 1 is an error.
        assert!(found("linear", &|w, _| w == 0));
        assert!(cases.iter().any(|c| {
            let a = seq(c);
            let (past, update) = (c.inputs[0].shape(), c.inputs[1].shape());
            let wi = c
                .inputs
                .get(2)
                .and_then(|t| t.to_i64_vec())
                .unwrap_or_default();
            c.violation && update[a] == past[a] && wi.iter().any(|&w| w > 0)
        }));
    }

    /// Writes every crossed case of seeds 0 to 3 into `$ONNX_IDX_CHECK_CROSSED_DIR`, valid ones
    /// under `valid/` and violations under `violation/`, for a check of a runtime against them:
    /// `onnx-idx-check run DIR/valid --runtime onnx-reference`.
    #[test]
    #[ignore = "writes the crossed cases for a runtime check; set ONNX_IDX_CHECK_CROSSED_DIR"]
    fn write_the_crossed_cases_for_a_runtime_check() {
        let Some(dir) = std::env::var_os("ONNX_IDX_CHECK_CROSSED_DIR") else {
            return;
        };
        let dir = std::path::PathBuf::from(dir);
        for seed in 0..4 {
            for c in all(seed) {
                let Some(r) = crate::generate::render_case(&c).unwrap() else {
                    continue;
                };
                let sub = if c.violation { "violation" } else { "valid" };
                r.write_to(&dir.join(sub).join(format!("seed{seed}")).join(&r.name))
                    .unwrap();
            }
        }
    }
}
