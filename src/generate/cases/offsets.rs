//! The offset family: a cache `[B, .., M, ..]` whose sequence axis (the `axis` attribute, default
//! -2, never the batch axis 0) receives, per batch row, a sequence of `L` update slices written
//! from that row's write index (linear: `w + L <= M`; circular: positions wrap modulo `M`); no
//! write indices means every row writes from 0.

use super::{Builder, Call, Family, Form};
use crate::generate::rng::Rng;
use crate::generate::values;
use onnx_idx_check::tensor::{DType, Layout};

/// The sequence axis of `c`, normalised (the attribute's default is -2).
fn seq_axis(c: &Call) -> usize {
    let r = c.data_shape.len() as i64;
    let a = c.axis.unwrap_or(-2);
    usize::try_from(if a < 0 { a + r } else { a }).unwrap_or(0)
}

/// Sets the update length to `l` and the update's shape to match.
pub(super) fn set_len(c: &mut Call, l: usize) {
    let mut s = c.data_shape.clone();
    if let Some(d) = s.get_mut(seq_axis(c)) {
        *d = l;
    }
    c.updates_shape = Some(s);
}

pub(super) fn len_of(c: &Call) -> usize {
    c.updates_shape
        .as_ref()
        .and_then(|s| s.get(seq_axis(c)).copied())
        .unwrap_or(0)
}

pub(super) fn max_len(c: &Call) -> usize {
    c.data_shape.get(seq_axis(c)).copied().unwrap_or(0)
}

/// Random linear write indices: `w + L <= M` for every row.
fn fill(c: &mut Call, rng: &mut Rng) {
    let room = max_len(c).saturating_sub(len_of(c));
    let b = c.data_shape.first().copied().unwrap_or(0);
    c.idx_shape = vec![b];
    c.idx = (0..b).map(|_| rng.range(0, room) as i64).collect();
}

impl Builder<'_> {
    /// A valid linear call: a cache `[2, M, 2, ..]` of `rank` (M from 3 to 4 on the default
    /// axis, rank 3 and above; axis -1 at rank 2), a sequence of 1 to 2.
    pub(super) fn offset_call(&self, rng: &mut Rng, d: DType, idx: DType, rank: usize) -> Call {
        let axis = if rank < 3 { Some(-1) } else { None };
        self.offset_call_on(rng, d, idx, rank, axis)
    }

    /// A valid linear call as [`Self::offset_call`] makes, on sequence axis `axis` (`None`: the
    /// attribute left out, -2).
    pub(super) fn offset_call_on(
        &self,
        rng: &mut Rng,
        d: DType,
        idx: DType,
        rank: usize,
        axis: Option<i64>,
    ) -> Call {
        let mut c = super::call(rng, Family::Axis, d, idx, 1, None);
        c.axis = axis;
        c.data_shape = vec![2; rank];
        let ax = seq_axis(&c);
        c.data_shape[ax] = rng.range(3, 4);
        let l = rng.range(1, 2);
        set_len(&mut c, l);
        fill(&mut c, rng);
        c
    }

    #[allow(clippy::too_many_arguments)]
    fn offset_case(
        &mut self,
        d: DType,
        i64d: DType,
        slug: &str,
        rank: usize,
        traits: &[&str],
        violation: bool,
        change: &dyn Fn(&mut Call, &mut Rng),
    ) {
        let mut rng = self.rng(d, slug);
        let mut c = self.offset_call(&mut rng, d, i64d, rank);
        change(&mut c, &mut rng);
        let mut t: Vec<String> = traits.iter().map(|s| (*s).to_owned()).collect();
        if violation {
            t.push(format!("violation:{}", slug.replace('_', "-")));
        }
        self.push(&mut rng, c, slug, &t, violation);
    }

    pub(super) fn build_offsets(&mut self, f: DType, i64d: DType) {
        let none = &|_: &mut Call, _: &mut Rng| {};
        // Every dtype (the packed ones only in raw_data, their one form here).
        for d in self.dtypes() {
            for (form, slug) in [(Form::Raw, "basic"), (Form::Typed, "storage_typed")] {
                let typed_ok = d != DType::String && !matches!(d.layout(), Layout::Packed(_));
                if form == Form::Typed && !typed_ok {
                    continue;
                }
                self.offset_case(d, i64d, slug, 3, &[], false, &|c, _| c.form = form);
            }
        }
        for d in self.idx_dtypes() {
            let slug = format!("indices_{d}");
            self.offset_case(f, d, &slug, 3, &[], false, none);
        }
        let Some(attr) = super::mode_attr(self.v) else {
            return;
        };
        let (linear, circular) = match self.v.modes {
            [l, c, ..] => (*l, *c),
            _ => return,
        };
        let tr = |m: &str| format!("{attr}:{m}");
        let (tl, tc) = (tr(linear), tr(circular));
        self.offset_case(f, i64d, "mode_linear", 3, &[&tl], false, &|c, _| {
            c.mode = Some(linear)
        });
        // Circular: the last row starts at M-1 and wraps to 0.
        self.offset_case(
            f,
            i64d,
            "mode_circular_wraps",
            3,
            &[&tc, "circular-wrap"],
            false,
            &|c, _| {
                c.mode = Some(circular);
                set_len(c, 2);
                let m = max_len(c) as i64;
                c.idx = vec![1, m - 1];
            },
        );
        self.offset_case(
            f,
            i64d,
            "mode_circular_full_turn",
            3,
            &[&tc, "circular-wrap"],
            false,
            &|c, _| {
                c.mode = Some(circular);
                let m = max_len(c);
                set_len(c, m);
                c.idx = vec![m as i64 - 1, 1];
            },
        );
        self.offset_case(
            f,
            i64d,
            "no_write_indices",
            3,
            &["write-indices:absent"],
            false,
            &|c, _| c.omit_optional = true,
        );
        self.offset_case(
            f,
            i64d,
            "mode_circular_no_write_indices",
            3,
            &[&tc, "write-indices:absent"],
            false,
            &|c, _| {
                c.mode = Some(circular);
                c.omit_optional = true;
            },
        );
        // Row 0 writes from 0, row 1 ends exactly at M.
        self.offset_case(
            f,
            i64d,
            "boundary_indices",
            3,
            &["boundary-indices"],
            false,
            &|c, _| c.idx = vec![0, (max_len(c) - len_of(c)) as i64],
        );
        self.offset_case(
            f,
            i64d,
            "full_sequence",
            3,
            &["full-sequence"],
            false,
            &|c, _| {
                set_len(c, max_len(c));
                c.idx = vec![0, 0];
            },
        );
        self.offset_case(
            f,
            i64d,
            "zero_size_update",
            3,
            &["zero-size-dims"],
            false,
            &|c, rng| {
                set_len(c, 0);
                fill(c, rng);
            },
        );
        self.offset_case(
            f,
            i64d,
            "zero_size_batch",
            3,
            &["zero-size-dims"],
            false,
            &|c, rng| {
                c.data_shape[0] = 0;
                let l = len_of(c);
                set_len(c, l);
                fill(c, rng);
            },
        );
        // Ranks 2 to 4, every sequence axis, positive and negative.
        for rank in 2..=4usize {
            let r = rank as i64;
            for a in (1..r).flat_map(|a| [a, a - r]) {
                let slug = if a < 0 {
                    format!("rank{rank}_axis_neg{}", -a)
                } else {
                    format!("rank{rank}_axis{a}")
                };
                let traits = [format!("rank:{rank}"), format!("axis:{a}")];
                let traits: Vec<&str> = traits.iter().map(String::as_str).collect();
                self.offset_case(f, i64d, &slug, rank, &traits, false, &|c, rng| {
                    c.axis = Some(a);
                    c.data_shape = vec![2; rank];
                    let ax = seq_axis(c);
                    c.data_shape[ax] = 4;
                    set_len(c, 2);
                    fill(c, rng);
                });
            }
        }
        for d in self
            .dtypes()
            .into_iter()
            .filter(|&d| values::has_specials(d))
        {
            let sp: Vec<Option<u64>> = values::specials(d).into_iter().map(Some).collect();
            self.offset_case(
                d,
                i64d,
                "float_specials",
                2,
                &["float-specials"],
                false,
                &|c, _| {
                    c.data_shape = vec![1, sp.len() + 1];
                    set_len(c, sp.len());
                    c.idx = vec![1];
                    c.idx_shape = vec![1];
                    c.updates_overrides = sp.clone();
                },
            );
        }
        self.trait_cases(i64d);
        // The rules (D2, D5, section 3).
        let v = true;
        self.offset_case(f, i64d, "write_past_end", 3, &[], v, &|c, _| {
            c.idx[1] = (max_len(c) - len_of(c) + 1) as i64
        });
        self.offset_case(f, i64d, "negative_write_index", 3, &[], v, &|c, _| {
            c.idx[0] = -1
        });
        self.offset_case(
            f,
            i64d,
            "negative_write_index_circular",
            3,
            &[],
            v,
            &|c, _| {
                c.mode = Some(circular);
                c.idx[0] = -1;
            },
        );
        self.offset_case(f, i64d, "update_longer_than_cache", 3, &[], v, &|c, _| {
            set_len(c, max_len(c) + 1);
            c.idx = vec![0, 0];
        });
        self.offset_case(f, i64d, "axis_is_batch_axis", 3, &[], v, &|c, _| {
            c.axis = Some(0);
            c.updates_shape = Some(c.data_shape.clone());
        });
        self.offset_case(f, i64d, "axis_past_end", 3, &[], v, &|c, _| {
            c.axis = Some(3)
        });
        self.offset_case(f, i64d, "axis_before_start", 3, &[], v, &|c, _| {
            c.axis = Some(-4)
        });
        self.offset_case(f, i64d, "update_shape_mismatch", 3, &[], v, &|c, _| {
            if let Some(s) = c.updates_shape.as_mut() {
                s[2] += 1;
            }
        });
        self.offset_case(
            f,
            i64d,
            "write_indices_shape_mismatch",
            3,
            &[],
            v,
            &|c, _| {
                c.idx_shape = vec![3];
                c.idx = vec![0; 3];
            },
        );
        self.offset_case(
            f,
            i64d,
            &format!("{attr}_not_defined"),
            3,
            &[],
            v,
            &|c, _| c.mode = Some("sideways"),
        );
        self.common_violations(f, i64d);
    }
}
