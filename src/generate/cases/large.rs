//! The stress profile's large cases, made for the latest version of each operator only (a
//! runtime runs one kernel for every version of an operator, and these cases are after its
//! kernel's index arithmetic and threads, not a version's rules):
//!
//! - an axis longer than 65,536, where an index kept in 16 bits wraps;
//! - an axis longer than 2^24, where an index computed in float32 rounds (2^24 + 1 is not a
//!   float32), on the smallest data type the version allows;
//! - two million indices, enough for a runtime to split the work among threads; scatters write
//!   them once each, and where the version reduces (or a gradient accumulates) they land on a
//!   few hot rows, hundreds of updates on each element, which a lost update between threads
//!   changes. Values are multiples of 0.5 in [-8, 8] whose sums are exact in float, so the
//!   expected output does not depend on the order of the updates;
//! - ranks 8 and 10.
//!
//! Reads of the long axes see [`values::ramp`]'s data, whose neighbouring elements differ: a
//! wrong index reads a wrong value.

use super::{mode_attr, offsets, tuples, values, Builder, Call, Family};
use onnx_idx_check::ops::Role;
use onnx_idx_check::tensor::DType;

/// An axis longer than 65,536.
const LONG: usize = 70_000;
/// An axis longer than 2^24.
const HUGE: usize = (1 << 24) + 8;
/// Two million indices.
const MANY: usize = 1 << 21;
/// The rows the reductions' updates land on: each element receives about 256 of them.
const HOT: usize = 8;
/// The data of the cases with many indices, `[ROWS, COLS]` (or `[ROWS * COLS]` where each index
/// reads one element): 8 MiB of float.
const ROWS: usize = 2048;
const COLS: usize = 1024;

/// The indices that tell a long axis of length `s` apart from a truncated one: each side of
/// 2^16 and of 2^24 (odd values above 2^24 are no float32), the last and the first.
fn picks(s: usize) -> Vec<i64> {
    let t = 1i64 << 24;
    let mut v: Vec<i64> = [
        65_535,
        65_536,
        t - 1,
        t,
        t + 1,
        t + 3,
        t + 5,
        s as i64 - 1,
        0,
    ]
    .into_iter()
    .filter(|&x| x < s as i64)
    .collect();
    v.dedup();
    v
}

impl Builder<'_> {
    /// Whether this is the latest version of the operator that is not deprecated.
    fn latest(&self) -> bool {
        self.def
            .versions
            .iter()
            .rev()
            .find(|x| !x.deprecated)
            .is_some_and(|x| std::ptr::eq(x, self.v))
    }

    /// The allowed data type with the narrowest elements that [`values::ramp`] can fill,
    /// uint8 first.
    fn narrowest_dtype(&self) -> Option<DType> {
        self.allowed_dtypes()
            .into_iter()
            .filter(|&d| values::ramp(d, &[1]).is_some())
            .min_by_key(|&d| (d.byte_width(), d != DType::Uint8))
    }

    /// Every large case of the version (none unless it is the latest).
    pub(super) fn large_cases(&mut self) {
        let (Some(f), Some(i)) = (self.default_dtype(), self.default_idx()) else {
            return;
        };
        if !self.latest() {
            return;
        }
        self.long_axis_stress(f, i, LONG, "long-axis:65536");
        if let Some(small) = self.narrowest_dtype() {
            self.long_axis_stress(small, i, HUGE, "long-axis:2^24");
        }
        self.many_indices(f, i, None);
        if let Some(attr) = mode_attr(self.v) {
            if self.v.modes.contains(&"add") && self.fam != Family::Offsets {
                self.many_indices(f, i, Some((attr, "add")));
            }
        }
        for rank in [8, 10] {
            self.rank_stress(f, i, rank);
        }
    }

    /// Data (for a gradient, the shape) of one axis of length `s`, read or written at
    /// [`picks`]; gathers read the negative ones too where the version counts them.
    fn long_axis_stress(&mut self, d: DType, i: DType, s: usize, trait_: &str) {
        let slug = format!("stress_axis_{s}");
        let mut rng = self.rng(d, &slug);
        let mut c = self.valid_call(&mut rng, d, i);
        c.ramp = true;
        c.mode = None;
        c.batch_dims = None;
        let mut idx = picks(s);
        let reads = self.v.input_with(Role::Updates).is_none();
        if reads && self.v.negatives {
            idx.extend([-1, -(s as i64), 65_535 - s as i64]);
        }
        match self.fam {
            Family::Axis | Family::Elements { .. } => {
                c.axis = Some(0);
                c.data_shape = vec![s];
                c.idx_shape = vec![idx.len()];
            }
            Family::Tuples { .. } => {
                c.data_shape = vec![s];
                c.idx_shape = vec![idx.len(), 1];
            }
            Family::Offsets => {
                // One batch row writing two slots from the first pick above 2^16 (or 2^24).
                c.data_shape = vec![1, s, 1];
                offsets::set_len(&mut c, 2);
                c.idx_shape = vec![1];
                idx = vec![if s > 1 << 24 { (1 << 24) + 1 } else { 65_535 }];
            }
        }
        c.idx = idx;
        self.push(&mut rng, c, &slug, &[trait_.to_owned()], false);
    }

    /// Two million indices into 2^21 elements (`mode`: each lands on one of [`HOT`] rows, with
    /// that reduction); for the offset family, a large update of a long sequence instead.
    fn many_indices(&mut self, d: DType, i: DType, mode: Option<(&str, &'static str)>) {
        let slug = match (self.fam, mode) {
            (Family::Offsets, _) => "stress_large_update".to_owned(),
            (_, Some((attr, m))) => format!("stress_2m_indices_{attr}_{m}"),
            (_, None) => "stress_2m_indices".to_owned(),
        };
        let mut rng = self.rng(d, &slug);
        let mut c = self.valid_call(&mut rng, d, i);
        c.mode = mode.map(|(_, m)| m);
        c.batch_dims = None;
        // Gradients accumulate whatever their mode: they get the hot rows too.
        let hot = mode.is_some() || self.grad();
        let mut traits = vec!["many-indices".to_owned()];
        if let Some((attr, m)) = mode {
            traits.push(format!("{attr}:{m}"));
        }
        if hot {
            traits.push("duplicates".to_owned());
        }
        match self.fam {
            Family::Axis => {
                c.axis = Some(0);
                c.data_shape = vec![ROWS * 2];
                c.idx_shape = vec![MANY];
                let lo = if self.v.negatives {
                    -(ROWS as i64) * 2
                } else {
                    0
                };
                c.idx = (0..MANY)
                    .map(|_| rng.range_i64(lo, ROWS as i64 * 2 - 1))
                    .collect();
            }
            Family::Elements { scatter } => {
                c.axis = Some(0);
                c.data_shape = vec![ROWS, COLS];
                c.idx_shape = vec![ROWS, COLS];
                if hot {
                    c.idx = (0..MANY).map(|_| rng.below(HOT) as i64).collect();
                } else {
                    c.fill(&mut rng, Family::Elements { scatter });
                }
            }
            Family::Tuples { scatter } => {
                c.data_shape = vec![ROWS, COLS];
                c.idx_shape = vec![MANY, 2];
                if hot {
                    c.idx = (0..MANY)
                        .flat_map(|_| [rng.below(HOT) as i64, rng.below(COLS) as i64])
                        .collect();
                } else {
                    tuples::fill(&mut c, &mut rng, scatter);
                }
            }
            Family::Offsets => {
                // 16 rows of a 32,768-long sequence, half of it written.
                c.data_shape = vec![16, 32_768, 4];
                offsets::set_len(&mut c, 16_384);
                let room = offsets::max_len(&c) - offsets::len_of(&c);
                c.idx_shape = vec![16];
                c.idx = (0..16).map(|_| rng.range(0, room) as i64).collect();
                traits = vec!["large-update".to_owned()];
            }
        }
        self.push(&mut rng, c, &slug, &traits, false);
    }

    /// A valid call of rank `rank` (dims 2 to 3, 2 for tuples), along the last axis.
    fn rank_stress(&mut self, d: DType, i: DType, rank: usize) {
        let slug = format!("stress_rank{rank}");
        let mut rng = self.rng(d, &slug);
        let c: Call = match self.fam {
            Family::Tuples { .. } => {
                let k = rng.range(1, rank);
                self.tuple_call(&mut rng, d, i, rank, k, &[2])
            }
            Family::Offsets => self.offset_call_on(&mut rng, d, i, rank, Some(-2)),
            fam => super::call(&mut rng, fam, d, i, rank, Some(-1)),
        };
        self.push(&mut rng, c, &slug, &[format!("rank:{rank}")], false);
    }
}
