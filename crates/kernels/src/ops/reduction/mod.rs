//! Scatter reductions (`none`, `add`, `mul`, `max`, `min`) and the walks that apply them
//! (decision D8).
//!
//! Every output element receives its updates one at a time in the order the kernel visits them
//! (row-major over the indices), because that order decides float results and duplicates; threads
//! only ever split the output between them, so results are the same at every thread count. Integers
//! wrap; float16 and bfloat16 compute in f32 and round to nearest-even after every step; max and
//! min propagate NaN; bool add/mul are OR/AND; string add concatenates bytes.
//!
//! This file holds the attribute ([`Reduction`]) and the entry point ([`apply`]); the parts:
//! [`arith`] (per-dtype arithmetic), [`plan`] (the [`Visit`] trait, how an operator names its
//! updates), [`walk`] (choosing and running a walk: ranges, sweeps), [`split`] (the split walk
//! for large outputs on several threads) and [`deal`] (its AVX2 deal into buckets).

mod arith;
pub(crate) mod deal;
mod plan;
mod split;
mod walk;

use super::SpecError;
use crate::spec_err;
use crate::tensor::{DType, Elem, Layout, Storage};
use arith::{add, last, max, min, mul, Flag};
use bytemuck::Pod;
use half::{bf16, f16};
use num_complex::{Complex32, Complex64 as C64};
pub(crate) use plan::{deal_destinations, Visit, SKIP};
use walk::combine;

/// A scatter reduction.
///
/// ```
/// use onnx_idx_check_kernels::ops::{Reduction, ScatterElements};
/// use onnx_idx_check_kernels::Tensor;
///
/// let data = Tensor::from_vec(vec![2], vec![5i32, 5])?;
/// let indices = Tensor::from_vec(vec![2], vec![1i64, 1])?;
/// let updates = Tensor::from_vec(vec![2], vec![7i32, 3])?;
/// let with = |reduction| ScatterElements { axis: 0, reduction }.eval(18, &data, &indices, &updates);
/// assert_eq!(with(Reduction::None)?.to_vec::<i32>()?, [5, 3]); // the last write wins (D7)
/// assert_eq!(with(Reduction::Add)?.to_vec::<i32>()?, [5, 15]);
/// assert_eq!(with(Reduction::Max)?.to_vec::<i32>()?, [5, 7]);
/// assert_eq!(with(Reduction::Min)?.to_vec::<i32>()?, [5, 3]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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
    ///
    /// ```
    /// use onnx_idx_check_kernels::ops::Reduction;
    ///
    /// assert_eq!(Reduction::Mul.name(), "mul");
    /// assert_eq!(Reduction::default().name(), "none");
    /// ```
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
    pub(crate) fn parse(s: &str, allowed: &[Reduction], op: &str) -> Result<Reduction, SpecError> {
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

/// Returns `data` with `updates` applied along `plan` with `reduction`, for elements of `dtype`.
pub(crate) fn apply<V: Visit>(
    dtype: DType,
    reduction: Reduction,
    data: &impl Words,
    updates: &impl Words,
    plan: &V,
) -> Result<Storage, SpecError> {
    if reduction == Reduction::None {
        return match dtype.layout() {
            Layout::String => overwrite::<Vec<u8>>(data, updates, plan),
            _ => crate::dispatch_words!(
                dtype,
                Err(SpecError::Unsupported(format!(
                    "scattering {dtype} (a packed sub-byte type) is not implemented"
                ))),
                overwrite_words(data, updates, plan)
            ),
        };
    }
    use DType::*;
    use Reduction::*;
    let unsupported = || {
        SpecError::Unsupported(format!(
            "reduction '{}' on {dtype} is not implemented (only add and mul are defined for bool and complex, only add for string)",
            reduction.name()
        ))
    };
    // Storage moves words; the arithmetic casts them to the element type of the same width.
    // Each operation is a function item defined outside this generic function, so its type, and
    // the walks instantiated for it, are shared by every plan.
    macro_rules! run {
        ($word:ty, $f:expr) => {{
            let (d, u) = words::<$word>(data, updates)?;
            <$word>::into_storage(combine(d, u, plan, $f))
        }};
    }
    macro_rules! all_four {
        ($word:ty, $elem:ty) => {
            match reduction {
                Add => run!($word, add::<$word, $elem>),
                Mul => run!($word, mul::<$word, $elem>),
                Max => run!($word, max::<$word, $elem>),
                _ => run!($word, min::<$word, $elem>),
            }
        };
    }
    macro_rules! add_mul {
        ($word:ty, $elem:ty) => {
            match reduction {
                Add => run!($word, add::<$word, $elem>),
                Mul => run!($word, mul::<$word, $elem>),
                _ => return Err(unsupported()),
            }
        };
    }
    macro_rules! max_min {
        ($word:ty, $elem:ty) => {
            match reduction {
                Max => run!($word, max::<$word, $elem>),
                _ => run!($word, min::<$word, $elem>),
            }
        };
    }
    // Wrapping add and mul give the same bits on signed and unsigned words: both signs share the
    // unsigned instantiation.
    let wraps = matches!(reduction, Add | Mul);
    Ok(match dtype {
        Int8 | Uint8 if wraps => add_mul!(u8, u8),
        Int16 | Uint16 if wraps => add_mul!(u16, u16),
        Int32 | Uint32 if wraps => add_mul!(u32, u32),
        Int64 | Uint64 if wraps => add_mul!(u64, u64),
        Int8 => max_min!(u8, i8),
        Uint8 => max_min!(u8, u8),
        Int16 => max_min!(u16, i16),
        Uint16 => max_min!(u16, u16),
        Int32 => max_min!(u32, i32),
        Uint32 => max_min!(u32, u32),
        Int64 => max_min!(u64, i64),
        Uint64 => max_min!(u64, u64),
        Float => all_four!(u32, f32),
        Double => all_four!(u64, f64),
        Float16 => all_four!(u16, f16),
        Bfloat16 => all_four!(u16, bf16),
        Bool => add_mul!(u8, Flag),
        Complex64 => add_mul!(u64, Complex32),
        Complex128 => add_mul!(u128, C64),
        String if reduction == Add => {
            let (d, u) = words::<Vec<u8>>(data, updates)?;
            let mut o = d.to_vec();
            plan.visit(|d, s| o[d].extend_from_slice(&u[s]));
            Storage::Str(o)
        }
        _ => return Err(unsupported()),
    })
}

/// What a scatter reads its data or updates from: storage, or a tensor (whose elements may be
/// read in place, without the copy that asking it for [`Storage`] would make).
pub(crate) trait Words {
    /// The elements as words of `T`, when `T` is their storage element.
    fn words<T: Elem>(&self) -> Option<&[T]>;
}

impl Words for Storage {
    fn words<T: Elem>(&self) -> Option<&[T]> {
        T::slice(self)
    }
}

impl Words for crate::Tensor {
    fn words<T: Elem>(&self) -> Option<&[T]> {
        self.elems()
    }
}

/// Both as slices of `T`.
fn words<'a, T: Elem>(
    data: &'a impl Words,
    updates: &'a impl Words,
) -> Result<(&'a [T], &'a [T]), SpecError> {
    match (data.words::<T>(), updates.words::<T>()) {
        (Some(d), Some(u)) => Ok((d, u)),
        _ => Err(spec_err!("data and updates are stored differently")),
    }
}

fn overwrite<T: Elem>(
    data: &impl Words,
    updates: &impl Words,
    plan: &impl Visit,
) -> Result<Storage, SpecError> {
    let (d, u) = words::<T>(data, updates)?;
    let mut o = d.to_vec();
    plan.visit(|d, s| o[d].clone_from(&u[s]));
    Ok(T::into_storage(o))
}

fn overwrite_words<T: Elem + Pod>(
    data: &impl Words,
    updates: &impl Words,
    plan: &impl Visit,
) -> Result<Storage, SpecError> {
    let (d, u) = words::<T>(data, updates)?;
    Ok(T::into_storage(combine(d, u, plan, last::<T>)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use plan::fixtures::*;

    #[test]
    fn integers_wrap() {
        let data = Storage::W8(vec![100]);
        let upd = Storage::W8(vec![100, 2]);
        let out = apply(DType::Int8, Reduction::Add, &data, &upd, &all_to_zero(2)).unwrap();
        assert_eq!(out, Storage::W8(vec![(-54i8) as u8]));
        let data = Storage::W64(vec![1 << 62]);
        let out = apply(
            DType::Int64,
            Reduction::Mul,
            &data,
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
                let data = Storage::W32(vec![data.to_bits()]);
                let out = apply(
                    DType::Float,
                    red,
                    &data,
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
        let data = Storage::W16(vec![h(2048.0)]);
        let upd = Storage::W16(vec![h(1.0), h(1.0)]);
        let out = apply(DType::Float16, Reduction::Add, &data, &upd, &all_to_zero(2)).unwrap();
        assert_eq!(out, Storage::W16(vec![h(2048.0)]));
    }

    #[test]
    fn bool_add_is_or_and_mul_is_and() {
        let data = Storage::W8(vec![0, 1]);
        let out = apply(
            DType::Bool,
            Reduction::Add,
            &data,
            &Storage::W8(vec![1, 0]),
            &Pairs(vec![(0, 0), (1, 1)]),
        )
        .unwrap();
        assert_eq!(out, Storage::W8(vec![1, 1]));
        let data = Storage::W8(vec![1, 1]);
        let out = apply(
            DType::Bool,
            Reduction::Mul,
            &data,
            &Storage::W8(vec![0, 1]),
            &Pairs(vec![(0, 0), (1, 1)]),
        )
        .unwrap();
        assert_eq!(out, Storage::W8(vec![0, 1]));
        let e = apply(
            DType::Bool,
            Reduction::Max,
            &data,
            &Storage::W8(vec![0, 1]),
            &Pairs(vec![]),
        );
        assert!(matches!(e, Err(SpecError::Unsupported(_))));
    }

    #[test]
    fn string_add_concatenates_and_mul_is_unsupported() {
        let data = Storage::Str(vec![b"a".to_vec()]);
        let upd = Storage::Str(vec![b"x".to_vec(), b"y".to_vec()]);
        let out = apply(DType::String, Reduction::Add, &data, &upd, &all_to_zero(2)).unwrap();
        assert_eq!(out, Storage::Str(vec![b"axy".to_vec()]));
        let e = apply(DType::String, Reduction::Mul, &data, &upd, &all_to_zero(2));
        assert!(matches!(e, Err(SpecError::Unsupported(_))));
    }

    #[test]
    fn none_lets_the_last_write_win() {
        let data = Storage::W32(vec![0]);
        let out = apply(
            DType::Int32,
            Reduction::None,
            &data,
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
        let data = Storage::W64(vec![w(1.0, 2.0)]);
        let out = apply(
            DType::Complex64,
            Reduction::Mul,
            &data,
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
