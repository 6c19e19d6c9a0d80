//! The arithmetic of the reductions per element type (D8): wrapping integers, floats with NaN
//! propagating through max and min, half floats rounded after every step, bool as OR and AND,
//! complex numbers; each as a function on the storage words.

use bytemuck::Pod;
use half::{bf16, f16};
use num_complex::{Complex32, Complex64 as C64};

/// The arithmetic of an element type with reductions (D8): add and mul for all of them.
pub(super) trait Arith: Copy {
    fn add(self, b: Self) -> Self;
    fn mul(self, b: Self) -> Self;
}

/// Max and min for the ordered element types (D8).
pub(super) trait Ordered: Copy {
    fn maximum(self, b: Self) -> Self;
    fn minimum(self, b: Self) -> Self;
}

macro_rules! int_arith {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            #[inline(always)]
            fn add(self, b: Self) -> Self {
                self.wrapping_add(b)
            }
            #[inline(always)]
            fn mul(self, b: Self) -> Self {
                self.wrapping_mul(b)
            }
        }
        impl Ordered for $t {
            #[inline(always)]
            fn maximum(self, b: Self) -> Self {
                Ord::max(self, b)
            }
            #[inline(always)]
            fn minimum(self, b: Self) -> Self {
                Ord::min(self, b)
            }
        }
    )*};
}
int_arith!(i8, u8, i16, u16, i32, u32, i64, u64);

/// A float that max and min compare as (f32 or f64).
trait Ieee: PartialOrd + Copy {
    fn is_nan(self) -> bool;
    fn is_sign_negative(self) -> bool;
}

impl Ieee for f32 {
    #[inline(always)]
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
    #[inline(always)]
    fn is_sign_negative(self) -> bool {
        f32::is_sign_negative(self)
    }
}

impl Ieee for f64 {
    #[inline(always)]
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
    #[inline(always)]
    fn is_sign_negative(self) -> bool {
        f64::is_sign_negative(self)
    }
}

/// IEEE maximum (`most`) or minimum of `a` and `b`, whose values are `x` and `y`: NaN
/// propagates (as `nan`), and +0 > -0.
#[inline(always)]
fn ieee_pick<T, F: Ieee>(a: T, b: T, x: F, y: F, nan: T, most: bool) -> T {
    let first = if most {
        x > y || (x == y && y.is_sign_negative())
    } else {
        x < y || (x == y && x.is_sign_negative())
    };
    if x.is_nan() || y.is_nan() {
        nan
    } else if first {
        a
    } else {
        b
    }
}

// float16 and bfloat16 compute in f32 and round after every step (`$wide` is what they compute
// in, `$narrow` rounds back).
macro_rules! float_arith {
    ($($t:ty => $wide:ty, $narrow:path);*) => {$(
        impl Arith for $t {
            #[inline(always)]
            fn add(self, b: Self) -> Self {
                $narrow(<$wide>::from(self) + <$wide>::from(b))
            }
            #[inline(always)]
            fn mul(self, b: Self) -> Self {
                $narrow(<$wide>::from(self) * <$wide>::from(b))
            }
        }
        impl Ordered for $t {
            #[inline(always)]
            fn maximum(self, b: Self) -> Self {
                ieee_pick(self, b, <$wide>::from(self), <$wide>::from(b), <$t>::NAN, true)
            }
            #[inline(always)]
            fn minimum(self, b: Self) -> Self {
                ieee_pick(self, b, <$wide>::from(self), <$wide>::from(b), <$t>::NAN, false)
            }
        }
    )*};
}
float_arith!(f32 => f32, f32::from; f64 => f64, f64::from; f16 => f32, f16::from_f32; bf16 => f32, bf16::from_f32);

macro_rules! complex_arith {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            #[inline(always)]
            fn add(self, b: Self) -> Self {
                self + b
            }
            #[inline(always)]
            fn mul(self, b: Self) -> Self {
                self * b
            }
        }
    )*};
}
complex_arith!(Complex32, C64);

/// A bool element (one byte, 0 or 1): add is OR, mul is AND.
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
pub(super) struct Flag(u8);

impl Arith for Flag {
    #[inline(always)]
    fn add(self, b: Self) -> Self {
        Flag(self.0 | b.0)
    }
    #[inline(always)]
    fn mul(self, b: Self) -> Self {
        Flag(self.0 & b.0)
    }
}

/// `a + b` on elements `E` stored as words `W`.
#[inline(always)]
pub(super) fn add<W: Pod, E: Arith + Pod>(a: W, b: W) -> W {
    bytemuck::cast(E::add(bytemuck::cast(a), bytemuck::cast(b)))
}

/// `a * b` on elements `E` stored as words `W`.
#[inline(always)]
pub(super) fn mul<W: Pod, E: Arith + Pod>(a: W, b: W) -> W {
    bytemuck::cast(E::mul(bytemuck::cast(a), bytemuck::cast(b)))
}

/// `max(a, b)` on elements `E` stored as words `W`.
#[inline(always)]
pub(super) fn max<W: Pod, E: Ordered + Pod>(a: W, b: W) -> W {
    bytemuck::cast(E::maximum(bytemuck::cast(a), bytemuck::cast(b)))
}

/// `min(a, b)` on elements `E` stored as words `W`.
#[inline(always)]
pub(super) fn min<W: Pod, E: Ordered + Pod>(a: W, b: W) -> W {
    bytemuck::cast(E::minimum(bytemuck::cast(a), bytemuck::cast(b)))
}

/// Reduction `none`: the update replaces the element.
#[inline(always)]
pub(super) fn last<W>(_: W, update: W) -> W {
    update
}
