//! Scatter reductions (`none`, `add`, `mul`, `max`, `min`) and the per-dtype arithmetic behind
//! them (decision D8).
//!
//! Updates are applied one at a time in the order the kernel visits them (row-major over the
//! indices), never in parallel, because that order decides float results and duplicates. Integers
//! wrap; float16 and bfloat16 compute in f32 and round to nearest-even after every step; max and
//! min propagate NaN; bool add/mul are OR/AND; string add concatenates bytes.

use super::KernelError;
use crate::spec_err;
use crate::tensor::{DType, Elem, Layout, Storage};
use half::{bf16, f16};
use num_complex::{Complex32, Complex64 as C64};
use rayon::prelude::*;
use std::ops::Range;

/// A scatter reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduction {
    /// Overwrite: the last write wins.
    None,
    /// `out = out + update`.
    Add,
    /// `out = out * update`.
    Mul,
    /// `out = max(out, update)`.
    Max,
    /// `out = min(out, update)`.
    Min,
}

impl Reduction {
    /// The attribute spelling.
    pub fn name(self) -> &'static str {
        match self {
            Reduction::None => "none",
            Reduction::Add => "add",
            Reduction::Mul => "mul",
            Reduction::Max => "max",
            Reduction::Min => "min",
        }
    }

    /// Parses the `reduction` attribute against the reductions `op` allows.
    pub fn parse(s: &str, allowed: &[Reduction], op: &str) -> Result<Reduction, KernelError> {
        let all = [
            Reduction::None,
            Reduction::Add,
            Reduction::Mul,
            Reduction::Max,
            Reduction::Min,
        ];
        let names: Vec<&str> = allowed.iter().map(|r| r.name()).collect();
        match all.into_iter().find(|r| r.name() == s) {
            Some(r) if allowed.contains(&r) => Ok(r),
            Some(_) => Err(spec_err!(
                "reduction '{s}' is not allowed by {op} (allowed: {}); max and min arrive with version 18",
                names.join(", ")
            )),
            None => Err(spec_err!(
                "reduction '{s}' is not a known reduction (allowed by {op}: {})",
                names.join(", ")
            )),
        }
    }
}

/// The order in which updates reach the output: calls `f(dst, src)` for each element update, with
/// `dst` a flat offset into the output and `src` one into the updates.
///
/// Plans that can enumerate the updates aimed at a range of the output cheaply override
/// [`Visit::visit_range`] and [`Visit::updates`]; then large scatters run on several threads, each
/// owning a contiguous range of the output and applying the updates aimed there in their order.
/// Every element still receives its updates sequentially in row-major order, so results are
/// bit-identical at every thread count (D8).
pub trait Visit: Sync {
    /// Calls `f` once per element update, in application order.
    fn visit<F: FnMut(usize, usize)>(&self, f: F);

    /// [`Visit::visit`], also calling `ahead` now and then with the destination of an update a few
    /// steps ahead (unvalidated), so that the caller can prefetch it; plans whose destinations
    /// land at random call it, the default never does.
    fn visit_ahead<F: FnMut(usize, usize), P: FnMut(usize)>(&self, f: F, ahead: P) {
        let _ = ahead;
        self.visit(f)
    }

    /// Calls `f` for the updates whose destination lies in `range`, in application order.
    fn visit_range<F: FnMut(usize, usize)>(&self, range: Range<usize>, mut f: F) {
        self.visit(|d, s| {
            if range.contains(&d) {
                f(d, s)
            }
        })
    }

    /// How many element updates the plan makes, when it supports [`Visit::visit_range`]
    /// efficiently; 0 keeps it on one thread.
    fn updates(&self) -> usize {
        0
    }

    /// Output ranges given to [`Visit::visit_range`] start and end at multiples of this.
    fn grain(&self) -> usize {
        1
    }

    /// Whether [`Visit::visit_range`] reads only the updates aimed at its range (rather than
    /// scanning them all); only such plans run on several threads.
    fn selective(&self) -> bool {
        false
    }
}

/// Applies `updates` to `out` along `plan` with `reduction`, for elements of `dtype`.
pub fn apply<V: Visit>(
    dtype: DType,
    reduction: Reduction,
    out: &mut Storage,
    updates: &Storage,
    plan: &V,
) -> Result<(), KernelError> {
    if reduction == Reduction::None {
        return match dtype.layout() {
            Layout::String => overwrite::<Vec<u8>>(out, updates, plan),
            _ => crate::dispatch_words!(
                dtype,
                Err(KernelError::Unsupported(format!(
                    "scattering {dtype} (a packed sub-byte type) is not implemented"
                ))),
                overwrite_words(out, updates, plan)
            ),
        };
    }
    use DType::*;
    use Reduction::*;
    let unsupported = || {
        KernelError::Unsupported(format!(
            "reduction '{}' on {dtype} is not implemented (D8: only add/mul for bool and complex, only add for string)",
            reduction.name()
        ))
    };
    macro_rules! ints {
        ($word:ty, $int:ty) => {{
            let (o, u) = words::<$word>(out, updates)?;
            let o: &mut [$int] = bytemuck::cast_slice_mut(o);
            let u: &[$int] = bytemuck::cast_slice(u);
            match reduction {
                Add => combine(o, u, plan, |a: $int, b| a.wrapping_add(b)),
                Mul => combine(o, u, plan, |a: $int, b| a.wrapping_mul(b)),
                Max => combine(o, u, plan, |a: $int, b| a.max(b)),
                _ => combine(o, u, plan, |a: $int, b| a.min(b)),
            }
        }};
    }
    macro_rules! floats {
        ($word:ty, $float:ty) => {{
            let (o, u) = words::<$word>(out, updates)?;
            let o: &mut [$float] = bytemuck::cast_slice_mut(o);
            let u: &[$float] = bytemuck::cast_slice(u);
            match reduction {
                Add => combine(o, u, plan, |a: $float, b| a + b),
                Mul => combine(o, u, plan, |a: $float, b| a * b),
                Max => combine(o, u, plan, |a: $float, b| {
                    if a.is_nan() || b.is_nan() {
                        <$float>::NAN
                    } else if a > b || (a == b && b.is_sign_negative()) {
                        a
                    } else {
                        b
                    }
                }),
                _ => combine(o, u, plan, |a: $float, b| {
                    if a.is_nan() || b.is_nan() {
                        <$float>::NAN
                    } else if a < b || (a == b && a.is_sign_negative()) {
                        a
                    } else {
                        b
                    }
                }),
            }
        }};
    }
    // float16 and bfloat16: through f32, one rounding per step.
    macro_rules! halves {
        ($half:ty) => {{
            let (o, u) = words::<u16>(out, updates)?;
            let o: &mut [$half] = bytemuck::cast_slice_mut(o);
            let u: &[$half] = bytemuck::cast_slice(u);
            let widen = |a: $half, b: $half| (a.to_f32(), b.to_f32());
            match reduction {
                Add => combine(o, u, plan, |a, b| {
                    let (x, y) = widen(a, b);
                    <$half>::from_f32(x + y)
                }),
                Mul => combine(o, u, plan, |a, b| {
                    let (x, y) = widen(a, b);
                    <$half>::from_f32(x * y)
                }),
                Max => combine(o, u, plan, |a, b| {
                    let (x, y) = widen(a, b);
                    if x.is_nan() || y.is_nan() {
                        <$half>::NAN
                    } else if x > y || (x == y && y.is_sign_negative()) {
                        a
                    } else {
                        b
                    }
                }),
                _ => combine(o, u, plan, |a, b| {
                    let (x, y) = widen(a, b);
                    if x.is_nan() || y.is_nan() {
                        <$half>::NAN
                    } else if x < y || (x == y && x.is_sign_negative()) {
                        a
                    } else {
                        b
                    }
                }),
            }
        }};
    }
    match dtype {
        Int8 => ints!(u8, i8),
        Uint8 => ints!(u8, u8),
        Int16 => ints!(u16, i16),
        Uint16 => ints!(u16, u16),
        Int32 => ints!(u32, i32),
        Uint32 => ints!(u32, u32),
        Int64 => ints!(u64, i64),
        Uint64 => ints!(u64, u64),
        Float => floats!(u32, f32),
        Double => floats!(u64, f64),
        Float16 => halves!(f16),
        Bfloat16 => halves!(bf16),
        Bool => {
            let (o, u) = words::<u8>(out, updates)?;
            match reduction {
                Add => combine(o, u, plan, |a, b| a | b),
                Mul => combine(o, u, plan, |a, b| a & b),
                _ => return Err(unsupported()),
            }
        }
        Complex64 => {
            let (o, u) = words::<u64>(out, updates)?;
            let o: &mut [Complex32] = bytemuck::cast_slice_mut(o);
            let u: &[Complex32] = bytemuck::cast_slice(u);
            match reduction {
                Add => combine(o, u, plan, |a, b| a + b),
                Mul => combine(o, u, plan, |a, b| a * b),
                _ => return Err(unsupported()),
            }
        }
        Complex128 => {
            let (o, u) = words::<u128>(out, updates)?;
            let o: &mut [C64] = bytemuck::cast_slice_mut(o);
            let u: &[C64] = bytemuck::cast_slice(u);
            match reduction {
                Add => combine(o, u, plan, |a, b| a + b),
                Mul => combine(o, u, plan, |a, b| a * b),
                _ => return Err(unsupported()),
            }
        }
        String if reduction == Add => {
            let (o, u) = words::<Vec<u8>>(out, updates)?;
            plan.visit(|d, s| o[d].extend_from_slice(&u[s]));
        }
        _ => return Err(unsupported()),
    }
    Ok(())
}

/// Both storages as slices of `T`.
fn words<'a, T: Elem>(
    out: &'a mut Storage,
    updates: &'a Storage,
) -> Result<(&'a mut [T], &'a [T]), KernelError> {
    match (T::slice_mut(out), T::slice(updates)) {
        (Some(o), Some(u)) => Ok((o, u)),
        _ => Err(spec_err!("data and updates are stored differently")),
    }
}

fn overwrite<T: Elem>(
    out: &mut Storage,
    updates: &Storage,
    plan: &impl Visit,
) -> Result<(), KernelError> {
    let (o, u) = words::<T>(out, updates)?;
    plan.visit(|d, s| o[d].clone_from(&u[s]));
    Ok(())
}

fn overwrite_words<T: Elem + Copy>(
    out: &mut Storage,
    updates: &Storage,
    plan: &impl Visit,
) -> Result<(), KernelError> {
    let (o, u) = words::<T>(out, updates)?;
    combine(o, u, plan, |_, u| u);
    Ok(())
}

fn combine<T: Copy + Send + Sync, V: Visit>(
    out: &mut [T],
    upd: &[T],
    plan: &V,
    f: impl Fn(T, T) -> T + Sync,
) {
    let grain = plan.grain().max(1);
    let threads = rayon::current_num_threads();
    let big = plan.updates().saturating_mul(std::mem::size_of::<T>()) >= super::fast::PAR_MIN_BYTES;
    // Threads only when each output range can go straight to its own updates: ranges that each
    // scan every update lose to one thread sweeping once.
    if !big || !plan.selective() || threads < 2 || out.len() < 2 * grain || out.len() % grain != 0 {
        // Updates land anywhere in the output: ask for each destination's line a few updates
        // before it is read, so that several misses are in flight at once.
        let base = out.as_ptr();
        let size = std::mem::size_of::<T>();
        plan.visit_ahead(
            |d, s| out[d] = f(out[d], upd[s]),
            |d| super::fast::prefetch_bytes(base.wrapping_add(d), size),
        );
        return;
    }
    // Contiguous output ranges at grain boundaries, a few per thread for balance.
    let rows = out.len() / grain;
    let parts = threads * 4;
    let per = rows.div_ceil(parts).max(1) * grain;
    out.par_chunks_mut(per).enumerate().for_each(|(p, chunk)| {
        let lo = p * per;
        plan.visit_range(lo..lo + chunk.len(), |d, s| {
            let c = &mut chunk[d - lo];
            *c = f(*c, upd[s]);
        });
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every update goes to element `dst[i]`, in order.
    struct Pairs(Vec<(usize, usize)>);
    impl Visit for Pairs {
        fn visit<F: FnMut(usize, usize)>(&self, mut f: F) {
            for &(d, s) in &self.0 {
                f(d, s);
            }
        }
    }

    fn all_to_zero(n: usize) -> Pairs {
        Pairs((0..n).map(|s| (0, s)).collect())
    }

    #[test]
    fn integers_wrap() {
        let mut out = Storage::W8(vec![100]);
        let upd = Storage::W8(vec![100, 2]);
        apply(DType::Int8, Reduction::Add, &mut out, &upd, &all_to_zero(2)).unwrap();
        assert_eq!(out, Storage::W8(vec![(-54i8) as u8]));
        let mut out = Storage::W64(vec![1 << 62]);
        apply(
            DType::Int64,
            Reduction::Mul,
            &mut out,
            &Storage::W64(vec![4]),
            &all_to_zero(1),
        )
        .unwrap();
        assert_eq!(out, Storage::W64(vec![0]));
    }

    #[test]
    fn float_max_and_min_propagate_nan_either_way() {
        for (data, upd) in [(1.0f32, f32::NAN), (f32::NAN, 5.0)] {
            for red in [Reduction::Max, Reduction::Min] {
                let mut out = Storage::W32(vec![data.to_bits()]);
                apply(
                    DType::Float,
                    red,
                    &mut out,
                    &Storage::W32(vec![upd.to_bits()]),
                    &all_to_zero(1),
                )
                .unwrap();
                let Storage::W32(v) = out else { panic!() };
                assert!(f32::from_bits(v[0]).is_nan());
            }
        }
    }

    #[test]
    fn float16_rounds_after_every_step() {
        // 2048 + 1 is not representable in f16 (spacing 2 there): each step rounds back to 2048.
        let h = |x: f32| f16::from_f32(x).to_bits();
        let mut out = Storage::W16(vec![h(2048.0)]);
        let upd = Storage::W16(vec![h(1.0), h(1.0)]);
        apply(
            DType::Float16,
            Reduction::Add,
            &mut out,
            &upd,
            &all_to_zero(2),
        )
        .unwrap();
        assert_eq!(out, Storage::W16(vec![h(2048.0)]));
    }

    #[test]
    fn bool_add_is_or_and_mul_is_and() {
        let mut out = Storage::W8(vec![0, 1]);
        apply(
            DType::Bool,
            Reduction::Add,
            &mut out,
            &Storage::W8(vec![1, 0]),
            &Pairs(vec![(0, 0), (1, 1)]),
        )
        .unwrap();
        assert_eq!(out, Storage::W8(vec![1, 1]));
        let mut out = Storage::W8(vec![1, 1]);
        apply(
            DType::Bool,
            Reduction::Mul,
            &mut out,
            &Storage::W8(vec![0, 1]),
            &Pairs(vec![(0, 0), (1, 1)]),
        )
        .unwrap();
        assert_eq!(out, Storage::W8(vec![0, 1]));
        let e = apply(
            DType::Bool,
            Reduction::Max,
            &mut out,
            &Storage::W8(vec![0, 1]),
            &Pairs(vec![]),
        );
        assert!(matches!(e, Err(KernelError::Unsupported(_))));
    }

    #[test]
    fn string_add_concatenates_and_mul_is_unsupported() {
        let mut out = Storage::Str(vec![b"a".to_vec()]);
        let upd = Storage::Str(vec![b"x".to_vec(), b"y".to_vec()]);
        apply(
            DType::String,
            Reduction::Add,
            &mut out,
            &upd,
            &all_to_zero(2),
        )
        .unwrap();
        assert_eq!(out, Storage::Str(vec![b"axy".to_vec()]));
        let e = apply(
            DType::String,
            Reduction::Mul,
            &mut out,
            &upd,
            &all_to_zero(2),
        );
        assert!(matches!(e, Err(KernelError::Unsupported(_))));
    }

    #[test]
    fn none_lets_the_last_write_win() {
        let mut out = Storage::W32(vec![0]);
        apply(
            DType::Int32,
            Reduction::None,
            &mut out,
            &Storage::W32(vec![7, 9]),
            &all_to_zero(2),
        )
        .unwrap();
        assert_eq!(out, Storage::W32(vec![9]));
    }

    #[test]
    fn complex_mul_follows_the_textbook_formula() {
        // (1 + 2i)(3 + 4i) = -5 + 10i
        let w = |re: f32, im: f32| u64::from(re.to_bits()) | (u64::from(im.to_bits()) << 32);
        let mut out = Storage::W64(vec![w(1.0, 2.0)]);
        apply(
            DType::Complex64,
            Reduction::Mul,
            &mut out,
            &Storage::W64(vec![w(3.0, 4.0)]),
            &all_to_zero(1),
        )
        .unwrap();
        assert_eq!(out, Storage::W64(vec![w(-5.0, 10.0)]));
    }

    #[test]
    fn parse_refuses_unknown_and_too_new_reductions() {
        let v16 = [Reduction::None, Reduction::Add, Reduction::Mul];
        assert_eq!(
            Reduction::parse("add", &v16, "ScatterElements-16"),
            Ok(Reduction::Add)
        );
        assert!(Reduction::parse("max", &v16, "ScatterElements-16").is_err());
        assert!(Reduction::parse("sub", &v16, "ScatterElements-16").is_err());
    }
}
