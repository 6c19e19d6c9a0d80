//! Traits beyond the families' own shapes, each a small case of its own so that a failure names
//! it: ranks 5 and 6, an axis of 70 (ONNX's reference evaluator fails GatherElements from 64 on),
//! NaN payloads and subnormals that data movement must copy bit for bit, NaN inside max/min
//! (D8: it propagates), float16/bfloat16 add and mul chains whose step-by-step rounding differs
//! from the exact result, integer wrap in add and mul, unusual strings, and external data.

use super::{call, mode_attr, tuples, Builder, Call, Family, Role};
use crate::generate::rng::Rng;
use crate::generate::values::{self, float_bits};
use onnx_idx_check::tensor::DType;

/// A reduction chain: dtype, mode, the element's start value, the updates landing on it, and the
/// trait it shows.
type Chain = (DType, &'static str, f64, &'static [f64], &'static str);

/// Chains where rounding after every step (D8) differs from rounding the exact result once:
/// 2048 + 1 + 1 + 1 + 1 stays 2048 in float16 (2049 rounds to even), as 256 + 1 + ... does in
/// bfloat16; the products were found by search.
const ROUNDING: &[Chain] = &[
    (DType::Float16, "add", 2048.0, &[1.0; 4], "rounding-chain"),
    (DType::Bfloat16, "add", 256.0, &[1.0; 4], "rounding-chain"),
    (
        DType::Float16,
        "mul",
        1.78125,
        &[1.875, 1.015625, 1.90625],
        "rounding-chain",
    ),
    (
        DType::Bfloat16,
        "mul",
        1.5625,
        &[1.5, 1.25, 1.6875],
        "rounding-chain",
    ),
];

/// Integer chains that wrap (D8): two's complement modulo 2^8.
const WRAP: &[Chain] = &[
    (DType::Int8, "add", 120.0, &[10.0, 10.0], "integer-wrap"),
    (DType::Uint8, "add", 250.0, &[10.0, 10.0], "integer-wrap"),
    (DType::Int8, "mul", 16.0, &[16.0, 3.0], "integer-wrap"),
    (DType::Uint8, "mul", 16.0, &[16.0, 3.0], "integer-wrap"),
];

/// The bits of `x` in `d` (integers as two's complement, truncated by the tensor).
fn bits_of(d: DType, x: f64) -> u64 {
    match d {
        DType::Int8 | DType::Uint8 => x as i64 as u64,
        _ => float_bits(d, x),
    }
}

impl Builder<'_> {
    /// Whether the value input is a gradient (no data input): its values are added, never
    /// copied.
    pub(super) fn grad(&self) -> bool {
        self.v.input_with(Role::Data).is_none()
    }

    /// Whether updates are written into the data (or a gradient accumulated).
    fn writes(&self) -> bool {
        self.v.input_with(Role::Updates).is_some()
    }

    pub(super) fn trait_cases(&mut self, i64d: DType) {
        let Some(f) = self.main_dtype() else { return };
        self.high_rank_cases(f, i64d);
        self.long_axis_case(f, i64d);
        self.bit_pattern_cases(i64d);
        self.chain_cases(i64d);
        self.nan_max_min_cases(i64d);
        self.string_cases(i64d);
        self.external_case(f, i64d);
    }

    /// Ranks 5 and 6 on two axes each (ranks 1 to 6 are the tuple family's own; the offset
    /// family's sequence axis is never 0).
    fn high_rank_cases(&mut self, f: DType, i64d: DType) {
        let fam = self.fam;
        let axes: &[(usize, i64)] = match fam {
            Family::Axis | Family::Elements { .. } => &[(5, 0), (5, -1), (6, 2), (6, -1)],
            Family::Offsets => &[(5, 3), (6, -2)],
            Family::Tuples { .. } => &[],
        };
        for &(rank, a) in axes {
            let slug = if a < 0 {
                format!("rank{rank}_axis_neg{}", -a)
            } else {
                format!("rank{rank}_axis{a}")
            };
            let mut rng = self.rng(f, &slug);
            let c = if fam == Family::Offsets {
                self.offset_call_on(&mut rng, f, i64d, rank, Some(a))
            } else {
                call(&mut rng, fam, f, i64d, rank, Some(a))
            };
            let traits = [format!("rank:{rank}"), format!("axis:{a}")];
            self.push(&mut rng, c, &slug, &traits, false);
        }
    }

    /// An axis of 70 (64 and more), the other dims small; indices reach 0, 64 and 69.
    fn long_axis_case(&mut self, f: DType, i64d: DType) {
        let fam = self.fam;
        let slug = "long_axis";
        let mut rng = self.rng(f, slug);
        let c = match fam {
            Family::Axis => {
                let mut c = call(&mut rng, fam, f, i64d, 2, Some(0));
                c.data_shape = vec![70, 2];
                c.idx_shape = vec![4];
                c.idx = vec![69, 0, 64, rng.range_i64(0, 69)];
                c
            }
            Family::Elements { .. } => {
                let mut c = call(&mut rng, fam, f, i64d, 2, Some(0));
                c.data_shape = vec![70, 2];
                c.idx_shape = vec![70, 2];
                c.fill(&mut rng, fam);
                c
            }
            Family::Tuples { .. } => {
                let mut c = self.tuple_call(&mut rng, f, i64d, 2, 1, &[6]);
                c.data_shape = vec![70, 2];
                tuples::fill(&mut c, &mut rng, fam == Family::Tuples { scatter: true });
                c
            }
            Family::Offsets => {
                let mut c = self.offset_call(&mut rng, f, i64d, 3);
                c.data_shape[1] = 70;
                c.idx = vec![0, 66];
                c
            }
        };
        self.push(&mut rng, c, slug, &["long-axis".into()], false);
    }

    /// A call whose data row 0 holds `n` chosen elements (placed by the caller's overrides),
    /// every one of them reaching the output: gathers read row 0 and row 1; scatters write the
    /// updates (the same elements) over row 1 and keep row 0.
    fn showcase(&self, rng: &mut Rng, d: DType, i64d: DType, n: usize) -> Call {
        let mut c = self.valid_call(rng, d, i64d);
        c.data_shape = vec![2, n];
        match self.fam {
            Family::Axis => {
                c.axis = None;
                c.batch_dims = None;
                c.idx_shape = vec![2];
                c.idx = vec![1, 0];
            }
            Family::Elements { scatter: false } => {
                c.axis = None;
                c.idx_shape = vec![2, n];
                c.idx = (0..2 * n).map(|i| 1 - (i / n) as i64).collect();
            }
            Family::Elements { scatter: true } => {
                c.axis = None;
                c.idx_shape = vec![1, n];
                c.idx = vec![1; n];
            }
            Family::Tuples { scatter: false } => {
                c.idx_shape = vec![2, 1];
                c.idx = vec![1, 0];
            }
            Family::Tuples { scatter: true } => {
                c.idx_shape = vec![1, 1];
                c.idx = vec![1];
            }
            Family::Offsets => {
                c.data_shape = vec![1, n + 1];
                c.axis = Some(-1);
                c.updates_shape = Some(vec![1, n]);
                c.idx_shape = vec![1];
                c.idx = vec![1];
            }
        }
        c
    }

    /// NaN payloads (not for gradients, whose values are added) and subnormals of every float
    /// dtype: the expected output keeps their exact bits.
    fn bit_pattern_cases(&mut self, i64d: DType) {
        type Patterns = fn(DType) -> Vec<u64>;
        let kinds: [(&str, &str, Patterns); 2] = [
            ("nan_payloads", "nan-payloads", values::nan_payloads),
            ("subnormals", "subnormals", values::subnormals),
        ];
        for (slug, trait_, patterns) in kinds {
            if slug == "nan_payloads" && self.grad() {
                continue;
            }
            for d in self.dtypes() {
                let bits: Vec<Option<u64>> = patterns(d).into_iter().map(Some).collect();
                if bits.is_empty() {
                    continue;
                }
                let mut rng = self.rng(d, slug);
                let mut c = self.showcase(&mut rng, d, i64d, bits.len());
                c.data_overrides = bits.clone();
                c.updates_overrides = bits;
                self.push(&mut rng, c, slug, &[trait_.into()], false);
            }
        }
    }

    /// A call where `ups.len()` updates land on one element holding `start` (for a gradient,
    /// which starts from zero, `start` is its first update).
    fn chain_call(&self, rng: &mut Rng, d: DType, i64d: DType, start: u64, ups: &[u64]) -> Call {
        let mut c = self.valid_call(rng, d, i64d);
        let k = ups.len();
        c.data_shape = vec![2, 2];
        match self.fam {
            Family::Elements { .. } if self.grad() => {
                c.axis = None;
                c.data_shape = vec![2, 1];
                c.idx_shape = vec![k + 1, 1];
                c.idx = vec![0; k + 1];
            }
            Family::Axis => {
                c.axis = None;
                c.data_shape = vec![2, 1];
                c.idx_shape = vec![k + 1];
                c.idx = vec![0; k + 1];
            }
            Family::Elements { .. } => {
                c.axis = None;
                c.idx_shape = vec![k, 1];
                c.idx = vec![0; k];
            }
            _ => {
                c.idx_shape = vec![k, 1];
                c.idx = vec![0; k];
            }
        }
        if self.grad() {
            c.data_overrides = std::iter::once(start)
                .chain(ups.iter().copied())
                .map(Some)
                .collect();
        } else {
            c.data_overrides = vec![Some(start)];
            // Tuples: update row i lands on data row 0; its column 0 is the chain's.
            let stride = if matches!(self.fam, Family::Tuples { .. }) {
                2
            } else {
                1
            };
            c.updates_overrides = vec![None; k * stride];
            for (i, &u) in ups.iter().enumerate() {
                c.updates_overrides[i * stride] = Some(u);
            }
        }
        c
    }

    /// Rounding chains and integer wrap, for each reduction the version has (a gradient adds).
    fn chain_cases(&mut self, i64d: DType) {
        let writes_many = matches!(
            self.fam,
            Family::Elements { scatter: true } | Family::Tuples { scatter: true }
        ) || (self.grad() && self.writes());
        if !writes_many {
            return;
        }
        let modes: Vec<&str> = if self.grad() {
            vec!["add"]
        } else if mode_attr(self.v).is_some() {
            self.v.modes.to_vec()
        } else {
            return;
        };
        let dtypes = self.dtypes();
        for &(d, m, start, ups, trait_) in ROUNDING.iter().chain(WRAP) {
            if !dtypes.contains(&d) || !modes.contains(&m) {
                continue;
            }
            let slug = format!("{}_{m}", trait_.replace('-', "_"));
            let mut rng = self.rng(d, &slug);
            let ups: Vec<u64> = ups.iter().map(|&x| bits_of(d, x)).collect();
            let mut c = self.chain_call(&mut rng, d, i64d, bits_of(d, start), &ups);
            let mut traits = vec![trait_.to_owned(), "duplicates".to_owned()];
            if !self.grad() {
                c.mode = Some(m);
                traits.push(format!("reduction:{m}"));
            }
            self.push(&mut rng, c, &slug, &traits, false);
        }
    }

    /// NaN in the data and among the updates of max and min (D8: NaN propagates, whichever
    /// side it is on).
    fn nan_max_min_cases(&mut self, i64d: DType) {
        if !matches!(
            self.fam,
            Family::Elements { scatter: true } | Family::Tuples { scatter: true }
        ) || mode_attr(self.v).is_none()
        {
            return;
        }
        for m in ["max", "min"] {
            if !self.v.modes.contains(&m) {
                continue;
            }
            for d in self.dtypes() {
                if !values::has_specials(d) {
                    continue;
                }
                let slug = format!("reduction_{m}_nan");
                let mut rng = self.rng(d, &slug);
                let mut c = self.valid_call(&mut rng, d, i64d);
                let b = |x: f64| Some(float_bits(d, x));
                // out[0,0] = m(NaN, 5, 2): NaN from the data; out[0,1] = m(1, NaN, 3): NaN
                // from an update, then a number after it.
                c.data_shape = vec![2, 2];
                c.data_overrides = vec![b(f64::NAN), b(1.0)];
                c.updates_overrides = vec![b(5.0), b(f64::NAN), b(2.0), b(3.0)];
                c.mode = Some(m);
                if matches!(self.fam, Family::Elements { .. }) {
                    c.axis = None;
                    c.idx_shape = vec![2, 2];
                    c.idx = vec![0; 4];
                } else {
                    c.idx_shape = vec![2, 1];
                    c.idx = vec![0; 2];
                }
                let traits = [
                    "nan-in-max-min".to_owned(),
                    format!("reduction:{m}"),
                    "duplicates".to_owned(),
                ];
                self.push(&mut rng, c, &slug, &traits, false);
            }
        }
    }

    /// Empty, non-ASCII and long strings moved (and, where the version adds strings,
    /// concatenated by a scatter's add).
    fn string_cases(&mut self, i64d: DType) {
        if !self.dtypes().contains(&DType::String) {
            return;
        }
        let strings: Vec<Option<Vec<u8>>> =
            values::unusual_strings().into_iter().map(Some).collect();
        let mut rng = self.rng(DType::String, "unusual_strings");
        let mut c = self.showcase(&mut rng, DType::String, i64d, strings.len());
        c.strings = strings;
        self.push(
            &mut rng,
            c,
            "unusual_strings",
            &["strings:empty-non-ascii-long".into()],
            false,
        );
    }

    /// The value input's bytes in a file beside its `.pb` (`location` relative to the data
    /// set's directory, offset 0, the whole length).
    fn external_case(&mut self, f: DType, i64d: DType) {
        if f == DType::String {
            return; // strings have no raw bytes to move to a file
        }
        let slug = "external_data";
        let mut rng = self.rng(f, slug);
        let mut c = self.valid_call(&mut rng, f, i64d);
        c.external = true;
        c.form = super::Form::Raw;
        self.push(&mut rng, c, slug, &["storage:external".into()], false);
    }
}
