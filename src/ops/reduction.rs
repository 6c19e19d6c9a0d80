//! Scatter reductions (`none`, `add`, `mul`, `max`, `min`) and the per-dtype arithmetic behind
//! them (decision D8).
//!
//! Every output element receives its updates one at a time in the order the kernel visits them
//! (row-major over the indices), because that order decides float results and duplicates; threads
//! only ever split the output between them, so results are the same at every thread count. Integers
//! wrap; float16 and bfloat16 compute in f32 and round to nearest-even after every step; max and
//! min propagate NaN; bool add/mul are OR/AND; string add concatenates bytes.

use super::fast;
use super::KernelError;
use crate::spec_err;
use crate::tensor::{DType, Elem, Layout, Storage};
use bytemuck::Pod;
use half::{bf16, f16};
use num_complex::{Complex32, Complex64 as C64};
use std::mem::MaybeUninit;
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
    /// scanning them all); such plans build the output range by range, in parallel when large.
    fn selective(&self) -> bool {
        false
    }

    /// Whether [`Visit::visit_range`] costs in proportion to its range (it goes straight to the
    /// updates aimed there, rather than scanning every update to pick them out): such plans are
    /// asked for many small, cache-sized ranges, the others for a few per thread.
    fn direct(&self) -> bool {
        false
    }

    /// Writes the destinations of the updates at positions `span` of the application order (the
    /// first [`Visit::updates`] positions in all) into `dst`, one per position, [`SKIP`] for an
    /// update whose index is out of range (flagged as the plan flags it in its walks). Only
    /// called when [`Visit::spans`] is true, so plans saying so must override it.
    fn destinations(&self, span: Range<usize>, dst: &mut [u32]) {
        let _ = span;
        dst.fill(SKIP);
    }

    /// Deals the updates at positions `span`, whose 4-byte words are `vals`, into the split
    /// walk's two buckets as [`deal2::deal`] does: below `split` or from it. `dst` is scratch as
    /// long as the span. The default names the destinations ([`Visit::destinations`]) and deals
    /// them; plans whose destinations are their indices do both in one pass
    /// ([`deal2::deal_indices`]). Only called when [`Visit::spans`] is true.
    fn deal_split(
        &self,
        span: Range<usize>,
        vals: &[u32],
        split: u32,
        buckets: [&mut [deal2::Slot]; 2],
        cur: &mut [usize; 2],
        dst: &mut [u32],
    ) {
        deal_destinations(self, span, vals, split, buckets, cur, dst)
    }

    /// Whether [`Visit::destinations`] starts at its span (rather than scanning everything) and
    /// update `i` in the application order reads element `i` of the updates; such plans with many
    /// updates take the split walk, in parallel.
    fn spans(&self) -> bool {
        false
    }
}

/// [`Visit::deal_split`] by way of [`Visit::destinations`]: the default, and the fallback of
/// plans that override it for some layouts only.
pub fn deal_destinations<V: Visit + ?Sized>(
    plan: &V,
    span: Range<usize>,
    vals: &[u32],
    split: u32,
    buckets: [&mut [deal2::Slot]; 2],
    cur: &mut [usize; 2],
    dst: &mut [u32],
) {
    plan.destinations(span, dst);
    deal2::deal(dst, vals, split, buckets, cur);
}

/// Each of the split walk's ([`split`]) two generations of buckets takes this many bytes,
/// whatever the input size. Since the rounds run as steps of one parallel call, 1, 2 and 4 MiB
/// time the same on W6 (with a parallel call per round, 1 and 2 MiB were 10-20% slower); the
/// smallest leaves the most of the shared L3 to the output.
const SPLIT_SCRATCH_BYTES: usize = 1 << 20;

/// Outputs at least this large take the split walk when the updates are many: smaller ones stay
/// in L2 on one thread anyway.
const SPLIT_MIN_BYTES: usize = 1 << 20;

/// Returns `data` with `updates` applied along `plan` with `reduction`, for elements of `dtype`.
pub fn apply<V: Visit>(
    dtype: DType,
    reduction: Reduction,
    data: &Storage,
    updates: &Storage,
    plan: &V,
) -> Result<Storage, KernelError> {
    if reduction == Reduction::None {
        return match dtype.layout() {
            Layout::String => overwrite::<Vec<u8>>(data, updates, plan),
            _ => crate::dispatch_words!(
                dtype,
                Err(KernelError::Unsupported(format!(
                    "scattering {dtype} (a packed sub-byte type) is not implemented"
                ))),
                overwrite_words(data, updates, plan)
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

/// The arithmetic of an element type with reductions (D8): add and mul for all of them.
trait Arith: Copy {
    fn add(self, b: Self) -> Self;
    fn mul(self, b: Self) -> Self;
}

/// Max and min for the ordered element types (D8).
trait Ordered: Copy {
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
struct Flag(u8);

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
fn add<W: Pod, E: Arith + Pod>(a: W, b: W) -> W {
    bytemuck::cast(E::add(bytemuck::cast(a), bytemuck::cast(b)))
}

/// `a * b` on elements `E` stored as words `W`.
#[inline(always)]
fn mul<W: Pod, E: Arith + Pod>(a: W, b: W) -> W {
    bytemuck::cast(E::mul(bytemuck::cast(a), bytemuck::cast(b)))
}

/// `max(a, b)` on elements `E` stored as words `W`.
#[inline(always)]
fn max<W: Pod, E: Ordered + Pod>(a: W, b: W) -> W {
    bytemuck::cast(E::maximum(bytemuck::cast(a), bytemuck::cast(b)))
}

/// `min(a, b)` on elements `E` stored as words `W`.
#[inline(always)]
fn min<W: Pod, E: Ordered + Pod>(a: W, b: W) -> W {
    bytemuck::cast(E::minimum(bytemuck::cast(a), bytemuck::cast(b)))
}

/// Reduction `none`: the update replaces the element.
#[inline(always)]
fn last<W>(_: W, update: W) -> W {
    update
}

/// Both storages as slices of `T`.
fn words<'a, T: Elem>(
    data: &'a Storage,
    updates: &'a Storage,
) -> Result<(&'a [T], &'a [T]), KernelError> {
    match (T::slice(data), T::slice(updates)) {
        (Some(d), Some(u)) => Ok((d, u)),
        _ => Err(spec_err!("data and updates are stored differently")),
    }
}

fn overwrite<T: Elem>(
    data: &Storage,
    updates: &Storage,
    plan: &impl Visit,
) -> Result<Storage, KernelError> {
    let (d, u) = words::<T>(data, updates)?;
    let mut o = d.to_vec();
    plan.visit(|d, s| o[d].clone_from(&u[s]));
    Ok(T::into_storage(o))
}

fn overwrite_words<T: Elem + Pod>(
    data: &Storage,
    updates: &Storage,
    plan: &impl Visit,
) -> Result<Storage, KernelError> {
    let (d, u) = words::<T>(data, updates)?;
    Ok(T::into_storage(combine(d, u, plan, last::<T>)))
}

/// How [`combine`] walks a plan's updates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Walk {
    /// Selective plans: the output is copied and updated one cache-sized range at a time (in
    /// parallel when large), each range visiting exactly its own updates.
    Ranges,
    /// Many updates landing anywhere in a large output, from a plan that can start anywhere in
    /// its updates, with threads to share them: [`split`].
    Split,
    /// Anything else: a copy, then one sweep over the updates, prefetching destinations.
    Sweep,
}

impl Walk {
    /// The walk for `plan` on an output of `n` elements of `size` bytes.
    fn of<V: Visit>(plan: &V, n: usize, size: usize) -> Walk {
        let grain = plan.grain();
        if plan.selective() && n > 0 && grain > 0 && n % grain == 0 {
            return Walk::Ranges;
        }
        let many = plan.updates().saturating_mul(size) >= fast::PAR_MIN_BYTES;
        let large = n.saturating_mul(size) >= SPLIT_MIN_BYTES;
        let threads = rayon::current_num_threads() >= 2;
        if many && large && threads && plan.spans() && n < SKIP as usize {
            return Walk::Split;
        }
        Walk::Sweep
    }
}

/// `data` with the updates of `plan` combined in by `f`, in the plan's order per element.
fn combine<W: Pod + Send + Sync, V: Visit>(
    data: &[W],
    upd: &[W],
    plan: &V,
    f: impl Fn(W, W) -> W + Sync,
) -> Vec<W> {
    let n = data.len();
    let size = std::mem::size_of::<W>();
    match Walk::of(plan, n, size) {
        Walk::Ranges => {
            let range = ranges_of(plan, n);
            // Direct plans update each range while it is cached; long ranges are copied past
            // the cache when they are large (see `fast::STREAM_MIN_BYTES`).
            let stream = !plan.direct() && fast::streams::<W>(n, range);
            fast::build(n, range, |start, chunk| {
                let from = &data[start..start + chunk.len()];
                if stream {
                    fast::stream_into(chunk, from);
                } else {
                    fast::copy_into(chunk, from);
                }
                // Reading back this thread's own non-temporal stores needs no fence.
                // SAFETY: the copy wrote every element of `chunk`, and MaybeUninit<W> has W's
                // layout.
                let chunk = unsafe { &mut *(chunk as *mut [MaybeUninit<W>] as *mut [W]) };
                plan.visit_range(start..start + chunk.len(), |d, s| {
                    let c = &mut chunk[d - start];
                    *c = f(*c, upd[s]);
                });
                true
            })
            .unwrap_or_default()
        }
        Walk::Split => {
            // The plan is passed as a trait object: it is called once per batch of updates, and
            // this keeps the split walk from being compiled once per plan as well.
            let plan = Destinations {
                updates: plan.updates(),
                of: &|span, dst| plan.destinations(span, dst),
                deal: &|span, vals, split, buckets, cur, dst| {
                    plan.deal_split(span, vals, split, buckets, cur, dst)
                },
            };
            if rayon::current_num_threads() >= 4 {
                split::<W, 4>(data, upd, plan, &f)
            } else {
                split::<W, 2>(data, upd, plan, &f)
            }
        }
        Walk::Sweep if plan.spans() && n < SKIP as usize => {
            let mut out = fast::copy(data);
            sweep_spans(&mut out, upd, plan, &f);
            out
        }
        Walk::Sweep => {
            let mut out = fast::copy(data);
            // Updates land anywhere in the output: ask for each destination's line a few
            // updates before it is read, so that several misses are in flight at once.
            let o: &mut [W] = &mut out;
            let base = o.as_ptr();
            plan.visit_ahead(
                |d, s| {
                    let (c, u) = (&mut o[d], upd[s]);
                    *c = f(*c, u)
                },
                |d| fast::prefetch_line(base.wrapping_add(d)),
            );
            out
        }
    }
}

/// The range length [`Walk::Ranges`] builds the output by, a multiple of the plan's grain: one
/// grain for direct plans ([`fast::build`] groups them into cache-sized tasks), otherwise a few
/// ranges per thread, each scanning every update once.
fn ranges_of<V: Visit>(plan: &V, n: usize) -> usize {
    let grain = plan.grain();
    if plan.direct() {
        return grain;
    }
    let parts = rayon::current_num_threads() * 4;
    (n / grain).div_ceil(parts).max(1) * grain
}

/// The split walk: `H` threads share the updates of a large output by cutting it into `H`
/// contiguous ranges. Round by round, each of `H` parts of the round's updates (in order) deals
/// its updates into one bucket per range, keeping their order; in the next round's step each
/// range applies those buckets, part by part, on its own thread, while the same thread deals its
/// part of the round after (into the other generation of buckets). Every element thus receives
/// its updates in the plan's order, and results do not depend on the thread count (D8).
fn split<W: Pod + Send + Sync, const H: usize>(
    data: &[W],
    upd: &[W],
    plan: Destinations,
    f: &(impl Fn(W, W) -> W + Sync),
) -> Vec<W> {
    let n = data.len();
    let total = plan.updates;
    // Range h covers [starts[h], starts[h + 1]).
    let starts: [usize; H] = std::array::from_fn(|h| n * h / H);
    let entry = std::mem::size_of::<Entry<W>>();
    // Each bucket can hold a whole part: any part may send all its updates to one range.
    let part = (SPLIT_SCRATCH_BYTES / (H * H * entry))
        .min(total.div_ceil(H))
        .max(1);
    // gens[g][p][h]: part p's updates for range h, in the bucket's initialised length. Rounds
    // alternate between the two generations. The buckets start empty, not filled: entries are
    // written before they are read, and filling them was a serial step (0.6 ms for 8 MiB).
    // A bucket takes at most one entry per update of its part; the vector deal's whole-group
    // stores end within that too (see deal2::deal's room check).
    let generation = || -> Vec<Part<W, H>> {
        (0..H)
            .map(|_| std::array::from_fn(|_| Vec::with_capacity(part)))
            .collect()
    };
    let mut gens = [generation(), generation()];
    let vector = H == 2 && std::mem::size_of::<W>() == 4 && deal2::available();
    let rounds = total.div_ceil(part * H);
    // Deals part p of round k.
    let deal = |k: usize, p: usize, buckets: &mut Part<W, H>| {
        let from = (k * part * H + p * part).min(total);
        let to = (from + part).min(total);
        for b in buckets.iter_mut() {
            b.clear();
        }
        let mut cur = [0usize; H];
        // The plan names destinations a batch at a time into a small (L1) buffer.
        let mut dst = [SKIP; DEAL_BATCH];
        if vector {
            let (first, second) = buckets.split_at_mut(1);
            let mut room = [entry_slots(&mut first[0]), entry_slots(&mut second[0])];
            let mut two = [0; 2];
            for at in (from..to).step_by(DEAL_BATCH) {
                let len = DEAL_BATCH.min(to - at);
                let words: &[u32] = bytemuck::cast_slice(&upd[at..at + len]);
                let [b0, b1] = &mut room;
                let split = starts[1] as u32;
                (plan.deal)(
                    at..at + len,
                    words,
                    split,
                    [b0, b1],
                    &mut two,
                    &mut dst[..len],
                );
            }
            cur[0] = two[0];
            cur[1] = two[1];
        } else {
            let slots: [*mut Entry<W>; H] = buckets.each_mut().map(|b| b.as_mut_ptr());
            for at in (from..to).step_by(DEAL_BATCH) {
                let len = DEAL_BATCH.min(to - at);
                let dst = &mut dst[..len];
                (plan.of)(at..at + len, dst);
                for (&d, &v) in dst.iter().zip(&upd[at..at + len]) {
                    if d == SKIP {
                        continue;
                    }
                    // The range holding d (how many later ranges start at or before it),
                    // without branches: d is random, and a branch on it would miss half the
                    // time.
                    let mut h = 0;
                    let mut first = 0;
                    for &b in &starts[1..] {
                        let past = d as usize >= b;
                        h += usize::from(past);
                        first = if past { b } else { first };
                    }
                    let c = cur[h];
                    debug_assert!(c < part);
                    // SAFETY: c < part, within the bucket's capacity: each bucket takes at
                    // most one entry per update of the part, and the part has at most `part`
                    // updates.
                    unsafe { Entry::write(slots[h].add(c), d - first as u32, v) };
                    cur[h] = c + 1;
                }
            }
        }
        for (b, c) in buckets.iter_mut().zip(cur) {
            // SAFETY: the deal wrote entries 0..c of the bucket, c <= part is within its
            // capacity, and entries are plain data with nothing to drop.
            unsafe { b.set_len(c) };
        }
    };
    let mut out: Vec<W> = Vec::with_capacity(n);
    let shared = Lanes {
        out: out.as_mut_ptr(),
        gens: gens.each_mut().map(|g| g.as_mut_ptr()),
    };
    let len = |h: usize| if h + 1 < H { starts[h + 1] } else { n } - starts[h];
    // Step 0: lane h copies range h of the output from `data` and deals part h of round 0.
    // Step k + 1: lane h applies round k's buckets for range h and deals part h of round k + 1
    // into the other generation. Odd lanes apply first, so that while one thread streams
    // indices from memory the other works in cache. The steps run back to back on the same
    // threads (a parallel call per round cost 14 us each in wake-ups).
    fast::par_steps(rounds + 1, H, &|step, h| {
        // SAFETY (for the accesses below): in a step, lane h alone writes range h of the
        // output and the buckets of part h in generation `step % 2`; every lane reads the
        // other generation, which no lane writes in this step; par_steps orders the steps.
        let range = unsafe { shared.range(starts[h], len(h)) };
        let fill = unsafe { shared.part_mut(step % 2, h) };
        if step == 0 {
            fast::copy_into(range, &data[starts[h]..starts[h] + range.len()]);
            deal(0, h, fill);
            return;
        }
        // SAFETY: step 0 copied every range.
        let range = unsafe { &mut *(range as *mut [MaybeUninit<W>] as *mut [W]) };
        let k = step - 1;
        let apply = |range: &mut [W]| {
            for p in 0..H {
                // SAFETY: see above; generation k % 2 is the one this step does not write.
                let now = unsafe { shared.part(k % 2, p) };
                apply_run(range, &now[h], f);
            }
        };
        if h % 2 == 1 {
            apply(range);
        }
        if k + 1 < rounds {
            deal(k + 1, h, fill);
        }
        if h % 2 == 0 {
            apply(range);
        }
    });
    // SAFETY: step 0 copied every range, and the ranges cover 0..n.
    unsafe { out.set_len(n) };
    out
}

/// The split walk's output and two generations of buckets, shared by the lanes of its steps
/// ([`fast::par_steps`]) as pointers: within a step the lanes write disjoint ranges and parts
/// and read only the generation nobody writes.
struct Lanes<W, const H: usize> {
    out: *mut W,
    gens: [*mut Part<W, H>; 2],
}

// SAFETY: see the struct's doc; the pointers outlive the steps (split owns what they point to).
unsafe impl<W: Send, const H: usize> Sync for Lanes<W, H> {}

impl<W, const H: usize> Lanes<W, H> {
    /// The output elements `start..start + len`.
    ///
    /// # Safety
    /// Within the output's capacity, and used by no other lane while the slice lives.
    #[allow(clippy::mut_from_ref)]
    unsafe fn range(&self, start: usize, len: usize) -> &mut [MaybeUninit<W>] {
        // SAFETY: the caller's promise.
        unsafe { std::slice::from_raw_parts_mut(self.out.add(start).cast(), len) }
    }

    /// Part `p`'s buckets in generation `g`, to deal into.
    ///
    /// # Safety
    /// `p < H`, and no other lane may use the part while the reference lives.
    #[allow(clippy::mut_from_ref)]
    unsafe fn part_mut(&self, g: usize, p: usize) -> &mut Part<W, H> {
        // SAFETY: the caller's promise.
        unsafe { &mut *self.gens[g].add(p) }
    }

    /// Part `p`'s buckets in generation `g`, to apply.
    ///
    /// # Safety
    /// `p < H`, and no lane may write the generation while the reference lives.
    unsafe fn part(&self, g: usize, p: usize) -> &Part<W, H> {
        // SAFETY: the caller's promise.
        unsafe { &*self.gens[g].add(p) }
    }
}

/// One generation of the split walk's buckets for one part: a bucket per range, whose length is
/// the number of entries the round dealt to it.
type Part<W, const H: usize> = [Vec<Entry<W>>; H];

/// The free capacity of a bucket of 4-byte words' entries, as the slots [`deal2`] writes.
fn entry_slots<W: Pod>(bucket: &mut Vec<Entry<W>>) -> &mut [deal2::Slot] {
    // Holds for the 4-byte words the split walk uses the vector deal for.
    assert!(
        std::mem::size_of::<Entry<W>>() == std::mem::size_of::<deal2::Slot>()
            && std::mem::align_of::<Entry<W>>() >= std::mem::align_of::<deal2::Slot>(),
        "the vector deal takes 4-byte words"
    );
    let spare = bucket.spare_capacity_mut();
    // SAFETY: same size and compatible alignment (checked above); an Entry of a 4-byte word is
    // repr(C) (offset, then value), the layout of a slot; both are uninitialised memory.
    unsafe { std::slice::from_raw_parts_mut(spare.as_mut_ptr().cast(), spare.len()) }
}

/// An update dealt to a range by the split walk: its offset in the range and its value.
#[derive(Clone, Copy)]
#[repr(C)]
struct Entry<W> {
    off: u32,
    val: W,
}

impl<W: Pod> Entry<W> {
    /// Writes an entry to `at`, with a single 8-byte store for 4-byte words (the compiler wrote
    /// the two halves separately, and dealing is mostly stores).
    ///
    /// # Safety
    /// `at` must be valid for writes of an `Entry<W>`.
    #[inline(always)]
    unsafe fn write(at: *mut Entry<W>, off: u32, val: W) {
        if std::mem::size_of::<W>() == 4 && std::mem::size_of::<Entry<W>>() == 8 {
            // repr(C): off in the first four bytes, val in the next four.
            let val: u32 = bytemuck::pod_read_unaligned(bytemuck::bytes_of(&val));
            let pair: [u32; 2] = [off, val];
            // SAFETY: the entry is 8 bytes with this layout; write_unaligned needs no alignment.
            unsafe { at.cast::<u64>().write_unaligned(bytemuck::cast(pair)) };
        } else {
            // SAFETY: the caller's promise.
            unsafe { at.write(Entry { off, val }) };
        }
    }
}

/// The sweep for plans that name destinations by span ([`Visit::spans`]): destinations come a
/// batch at a time from the plan's (vectorised) [`Visit::destinations`], so the loop that applies
/// them normalises nothing and prefetches from the batch. Measured on W6 (16M random updates into
/// 4 MiB) on one thread with AVX2: 40 ms, against 47 ms for the plan's own walk, whose loop
/// normalised each index twice (once to prefetch).
fn sweep_spans<W: Copy, V: Visit>(out: &mut [W], upd: &[W], plan: &V, f: &impl Fn(W, W) -> W) {
    let total = plan.updates();
    let base = out.as_ptr();
    // buf[..have] holds the destinations of positions [at, at + have).
    let mut buf = [SKIP; SWEEP_AHEAD + DEAL_BATCH];
    let (mut at, mut have) = (0, 0);
    while at < total {
        let len = DEAL_BATCH.min(total - (at + have));
        plan.destinations(at + have..at + have + len, &mut buf[have..have + len]);
        have += len;
        // Keep the last SWEEP_AHEAD for the next round, so that every update but the last few
        // prefetches the destination SWEEP_AHEAD positions later.
        let run = if at + have < total {
            have - SWEEP_AHEAD
        } else {
            have
        };
        for j in 0..run {
            if let Some(&d) = buf[..have].get(j + SWEEP_AHEAD) {
                fast::prefetch_line(base.wrapping_add(d as usize));
            }
            let d = buf[j];
            if d == SKIP {
                continue;
            }
            let c = &mut out[d as usize];
            *c = f(*c, upd[at + j]);
        }
        buf.copy_within(run..have, 0);
        have -= run;
        at += run;
    }
}

/// How far ahead [`sweep_spans`] prefetches.
const SWEEP_AHEAD: usize = 16;

/// A plan as the split walk sees it: how many updates, and the destinations of a span of them
/// ([`Visit::destinations`]).
#[derive(Clone, Copy)]
struct Destinations<'a> {
    updates: usize,
    of: &'a (dyn Fn(Range<usize>, &mut [u32]) + Sync),
    /// [`Visit::deal_split`].
    deal: &'a DealSplit<'a>,
}

/// [`Visit::deal_split`] as a trait object.
type DealSplit<'a> = dyn Fn(Range<usize>, &[u32], u32, [&mut [deal2::Slot]; 2], &mut [usize; 2], &mut [u32])
    + Sync
    + 'a;

/// Applies `(offset, value)` entries to `range` in order, prefetching destinations a few
/// entries ahead (the range is larger than L2).
#[inline(always)]
fn apply_run<W: Copy>(range: &mut [W], run: &[Entry<W>], f: &impl Fn(W, W) -> W) {
    let base = range.as_ptr();
    for (i, e) in run.iter().enumerate() {
        if let Some(a) = run.get(i + ENTRIES_AHEAD) {
            fast::prefetch_line(base.wrapping_add(a.off as usize));
        }
        let c = &mut range[e.off as usize];
        *c = f(*c, e.val);
    }
}

/// The split walk's deal for two ranges and 4-byte words, four updates at a time with AVX2:
/// each group of four entries is left-packed once per range by a permutation chosen from a
/// table by the group's mask, and stored whole: about 6 instructions per update where the scalar
/// deal takes about 18 (W6 went from 30.6 to 23.2 ms). [`deal2::deal_indices`] also reads the
/// plan's indices itself, in the same loop: W6 went from 22.1 to 20.6 ms, the indices' loads
/// overlapping the deal's work instead of stalling a loop of their own.
pub mod deal2 {
    use super::SKIP;
    use crate::ops::fast::{norm, IndexWords};
    use std::mem::MaybeUninit;

    /// A bucket entry as the deal writes it: the offset in its range, then the value's word.
    pub type Slot = MaybeUninit<[u32; 2]>;

    /// Whether this CPU runs the vector loops (the functions below work anywhere; elsewhere
    /// they run a scalar loop, which the split walk's own deal beats).
    pub fn available() -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("popcnt")
        }
        #[cfg(not(target_arch = "x86_64"))]
        false
    }

    /// Appends the entry `(d - start of its range, v)` of each update with destination `d` in
    /// `dst` and value `v` in `vals` to bucket 0 (`d < split`) or 1, at its count `cur[r]`,
    /// advancing `cur`; skips destinations equal to [`SKIP`].
    ///
    /// # Panics
    /// If a bucket cannot take `cur[r] + dst.len()` entries.
    pub fn deal(
        dst: &[u32],
        vals: &[u32],
        split: u32,
        buckets: [&mut [Slot]; 2],
        cur: &mut [usize; 2],
    ) {
        deal_on(available(), dst, vals, split, buckets, cur)
    }

    /// [`deal`], with the vector loop when `vector` (and the CPU has it).
    pub(super) fn deal_on(
        vector: bool,
        dst: &[u32],
        vals: &[u32],
        split: u32,
        buckets: [&mut [Slot]; 2],
        cur: &mut [usize; 2],
    ) {
        let n = dst.len().min(vals.len());
        let slots = room(buckets, cur, n);
        #[cfg(target_arch = "x86_64")]
        if vector && available() {
            // SAFETY: the CPU has AVX2 and POPCNT; room() checked the buckets' room.
            unsafe { x86::deal(&dst[..n], &vals[..n], split, slots, cur) };
            return;
        }
        let _ = vector;
        for (&d, &v) in dst[..n].iter().zip(vals) {
            // SAFETY: room() checked the buckets' room.
            unsafe { put(d, d != SKIP, v, split, slots, cur) };
        }
    }

    /// [`deal`] for updates whose destinations are `base + k` for their indices `k` in `idx`,
    /// normalised against an axis of size `s` ([`norm`]), skipping indices out of range: the
    /// plan's loop and the deal in one pass over the indices. Says whether every index was in
    /// range. `base + s` must fit in a u32.
    ///
    /// # Panics
    /// If a bucket cannot take `cur[r] + idx.len()` entries.
    #[allow(clippy::too_many_arguments)]
    pub fn deal_indices(
        idx: IndexWords<'_>,
        s: usize,
        negatives: bool,
        base: u32,
        vals: &[u32],
        split: u32,
        buckets: [&mut [Slot]; 2],
        cur: &mut [usize; 2],
    ) -> bool {
        deal_indices_on(
            available(),
            idx,
            s,
            negatives,
            base,
            vals,
            split,
            buckets,
            cur,
        )
    }

    /// [`deal_indices`], with the vector loop when `vector` (and the CPU has it).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn deal_indices_on(
        vector: bool,
        idx: IndexWords<'_>,
        s: usize,
        negatives: bool,
        base: u32,
        vals: &[u32],
        split: u32,
        buckets: [&mut [Slot]; 2],
        cur: &mut [usize; 2],
    ) -> bool {
        let len = match idx {
            IndexWords::I32(w) => w.len(),
            IndexWords::I64(w) => w.len(),
        };
        let n = len.min(vals.len());
        let slots = room(buckets, cur, n);
        #[cfg(target_arch = "x86_64")]
        if vector && available() {
            // SAFETY: the CPU has AVX2 and POPCNT; room() checked the buckets' room.
            return unsafe {
                x86::deal_indices(idx, n, s, negatives, base, vals, split, slots, cur)
            };
        }
        let _ = vector;
        let mut ok = true;
        for (j, &v) in vals[..n].iter().enumerate() {
            let k = match idx {
                IndexWords::I32(w) => i64::from(w[j]),
                IndexWords::I64(w) => w[j],
            };
            let d = norm(k, s, negatives).map(|k| base.wrapping_add(k as u32));
            ok &= d.is_some();
            // SAFETY: room() checked the buckets' room.
            unsafe { put(d.unwrap_or(SKIP), d.is_some(), v, split, slots, cur) };
        }
        ok
    }

    /// The buckets' entries as pointers, once each is known to take `cur[r] + n` entries.
    fn room(buckets: [&mut [Slot]; 2], cur: &[usize; 2], n: usize) -> [*mut u64; 2] {
        for (b, &c) in buckets.iter().zip(cur) {
            assert!(
                c.checked_add(n).is_some_and(|end| end <= b.len()),
                "split walk bucket overflow"
            );
        }
        buckets.map(|b| b.as_mut_ptr().cast::<u64>())
    }

    /// Appends one entry, when `keep`.
    ///
    /// # Safety
    /// Each bucket must have room at its count.
    #[inline(always)]
    unsafe fn put(
        d: u32,
        keep: bool,
        v: u32,
        split: u32,
        slots: [*mut u64; 2],
        cur: &mut [usize; 2],
    ) {
        if !keep {
            return;
        }
        let (r, off) = if d >= split { (1, d - split) } else { (0, d) };
        // SAFETY: the caller's promise; entries need no alignment.
        unsafe {
            slots[r]
                .add(cur[r])
                .write_unaligned(u64::from(off) | (u64::from(v) << 32))
        };
        cur[r] += 1;
    }

    #[cfg(target_arch = "x86_64")]
    mod x86 {
        use super::{put, SKIP};
        use crate::ops::fast::{norm, IndexWords};
        use std::arch::x86_64::*;

        /// For each 4-bit mask, the u32 lanes that move the selected 64-bit entries of a group
        /// to its front, in order.
        const PACK: [[u32; 8]; 16] = {
            let mut t = [[0u32; 8]; 16];
            let mut m = 0;
            while m < 16 {
                let (mut lane, mut out) = (0, 0);
                while lane < 4 {
                    if m & (1 << lane) != 0 {
                        t[m][2 * out] = 2 * lane as u32;
                        t[m][2 * out + 1] = 2 * lane as u32 + 1;
                        out += 1;
                    }
                    lane += 1;
                }
                m += 1;
            }
            t
        };

        /// Appends the four entries of destinations `d` and values `v` whose lanes are set in
        /// `keep` to their buckets.
        ///
        /// # Safety
        /// AVX2 and POPCNT; each bucket must have room for 4 entries at its count.
        #[inline]
        #[target_feature(enable = "avx2,popcnt")]
        unsafe fn put4(
            d: __m128i,
            keep: __m128i,
            v: __m128i,
            split: __m128i,
            slots: [*mut u64; 2],
            cur: &mut [usize; 2],
        ) {
            // d >= split, unsigned.
            let past = _mm_cmpeq_epi32(_mm_max_epu32(d, split), d);
            let off = _mm_sub_epi32(d, _mm_and_si128(past, split));
            let e = _mm256_set_m128i(_mm_unpackhi_epi32(off, v), _mm_unpacklo_epi32(off, v));
            let m1 = _mm_movemask_ps(_mm_castsi128_ps(_mm_and_si128(keep, past))) as usize;
            let m0 = _mm_movemask_ps(_mm_castsi128_ps(_mm_andnot_si128(past, keep))) as usize;
            // SAFETY: PACK[m] is in bounds for any 4-bit m; the stores write 4 entries at the
            // counts, where the caller promised room.
            unsafe {
                let p0 = _mm256_loadu_si256(PACK[m0].as_ptr().cast());
                let p1 = _mm256_loadu_si256(PACK[m1].as_ptr().cast());
                _mm256_storeu_si256(
                    slots[0].add(cur[0]).cast(),
                    _mm256_permutevar8x32_epi32(e, p0),
                );
                _mm256_storeu_si256(
                    slots[1].add(cur[1]).cast(),
                    _mm256_permutevar8x32_epi32(e, p1),
                );
            }
            cur[0] += m0.count_ones() as usize;
            cur[1] += m1.count_ones() as usize;
        }

        /// [`super::deal`].
        ///
        /// # Safety
        /// AVX2 and POPCNT; `dst` and `vals` of equal length n, each bucket with room for n
        /// entries at its count.
        #[target_feature(enable = "avx2,popcnt")]
        pub unsafe fn deal(
            dst: &[u32],
            vals: &[u32],
            split: u32,
            slots: [*mut u64; 2],
            cur: &mut [usize; 2],
        ) {
            let n = dst.len();
            let at = _mm_set1_epi32(split as i32);
            let skip = _mm_set1_epi32(SKIP as i32);
            let mut j = 0;
            while j + 4 <= n {
                // SAFETY: j + 4 <= n, so both loads are inside the slices; a group's entries
                // go below count + 4 <= the count at the start + n, within the room promised.
                unsafe {
                    let d = _mm_loadu_si128(dst.as_ptr().add(j).cast());
                    let v = _mm_loadu_si128(vals.as_ptr().add(j).cast());
                    let keep = _mm_xor_si128(_mm_cmpeq_epi32(d, skip), _mm_set1_epi32(-1));
                    put4(d, keep, v, at, slots, cur);
                }
                j += 4;
            }
            for (&d, &v) in dst[j..].iter().zip(&vals[j..]) {
                // SAFETY: within the room promised.
                unsafe { put(d, d != SKIP, v, split, slots, cur) };
            }
        }

        /// [`super::deal_indices`] for the first `n` indices (at most as many as `vals`).
        ///
        /// # Safety
        /// AVX2 and POPCNT; at least n indices and values, each bucket with room for n entries
        /// at its count.
        #[allow(clippy::too_many_arguments)]
        #[target_feature(enable = "avx2,popcnt")]
        pub unsafe fn deal_indices(
            idx: IndexWords<'_>,
            n: usize,
            s: usize,
            negatives: bool,
            base: u32,
            vals: &[u32],
            split: u32,
            slots: [*mut u64; 2],
            cur: &mut [usize; 2],
        ) -> bool {
            let at = _mm_set1_epi32(split as i32);
            let size = _mm256_set1_epi64x(s as i64);
            // Added to negative indices: the axis size when they count from the back, else 0
            // (they stay negative, out of range).
            let back = _mm256_set1_epi64x(if negatives { s as i64 } else { 0 });
            let first = _mm_set1_epi32(base as i32);
            let zero = _mm256_setzero_si256();
            // The low 32 bits of each 64-bit lane, in the low 128 bits.
            let low = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
            let mut missed = _mm_setzero_si128();
            let mut j = 0;
            while j + 4 <= n {
                // SAFETY: j + 4 <= n, so the loads are inside the slices; a group's entries go
                // below count + 4 <= the count at the start + n, within the room promised.
                unsafe {
                    let k = match idx {
                        IndexWords::I64(w) => _mm256_loadu_si256(w.as_ptr().add(j).cast()),
                        IndexWords::I32(w) => {
                            _mm256_cvtepi32_epi64(_mm_loadu_si128(w.as_ptr().add(j).cast()))
                        }
                    };
                    let k =
                        _mm256_add_epi64(k, _mm256_and_si256(_mm256_cmpgt_epi64(zero, k), back));
                    // 0 <= k < s.
                    let ok = _mm256_andnot_si256(
                        _mm256_cmpgt_epi64(zero, k),
                        _mm256_cmpgt_epi64(size, k),
                    );
                    let keep = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(ok, low));
                    let d = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(k, low));
                    let d = _mm_add_epi32(d, first);
                    missed = _mm_or_si128(missed, _mm_xor_si128(keep, _mm_set1_epi32(-1)));
                    let v = _mm_loadu_si128(vals.as_ptr().add(j).cast());
                    put4(d, keep, v, at, slots, cur);
                }
                j += 4;
            }
            let mut ok = _mm_testz_si128(missed, missed) == 1;
            for (j, &v) in vals.iter().enumerate().take(n).skip(j) {
                let k = match idx {
                    IndexWords::I32(w) => i64::from(w[j]),
                    IndexWords::I64(w) => w[j],
                };
                let d = norm(k, s, negatives).map(|k| base.wrapping_add(k as u32));
                ok &= d.is_some();
                // SAFETY: within the room promised.
                unsafe { put(d.unwrap_or(SKIP), d.is_some(), v, split, slots, cur) };
            }
            ok
        }
    }
}

/// Destinations the split walk asks the plan for at a time.
const DEAL_BATCH: usize = 512;

/// A destination the split walk skips: the update's index was out of range (the plan flags it
/// and the case errors; the output is dropped). Outputs of the split walk are smaller.
pub const SKIP: u32 = u32::MAX;

/// How far ahead [`apply_run`] prefetches.
const ENTRIES_AHEAD: usize = 16;

#[cfg(test)]
mod tests {
    use super::super::testutil::under;
    use super::*;
    use crate::ops::fast::IndexWords;

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

    /// Updates aimed at `dst[i]` in order (`None`: index out of range), able to start anywhere:
    /// the kind of plan the split walk takes.
    struct Spans(Vec<Option<usize>>);
    impl Visit for Spans {
        fn visit<F: FnMut(usize, usize)>(&self, mut f: F) {
            for (s, d) in self.0.iter().enumerate() {
                if let Some(d) = *d {
                    f(d, s);
                }
            }
        }
        fn destinations(&self, span: Range<usize>, dst: &mut [u32]) {
            for (o, d) in dst.iter_mut().zip(&self.0[span]) {
                *o = d.map_or(SKIP, |d| d as u32);
            }
        }
        fn updates(&self) -> usize {
            self.0.len()
        }
        fn spans(&self) -> bool {
            true
        }
    }

    /// A fixed generator, so that every run sees the same case.
    fn lcg(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed;
        move || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x >> 33
        }
    }

    /// Destinations for `m` updates into `n` elements: heavy duplicates on a few hot elements,
    /// crowds at the range boundaries of 2 and 4 threads, the rest anywhere, and some indices
    /// out of range.
    fn mixed_destinations(n: usize, m: usize, seed: u64) -> Vec<Option<usize>> {
        let mut g = lcg(seed);
        (0..m)
            .map(|_| match g() % 10 {
                0 => Some(g() as usize % 16),
                1 | 2 => Some(n / 2 - 8 + g() as usize % 16),
                3 => Some(n / 4 - 8 + g() as usize % 16),
                4 => Some(n - 1 - g() as usize % 8),
                _ if g() % 50 == 0 => None,
                _ => Some(g() as usize % n),
            })
            .collect()
    }

    #[test]
    fn the_split_walk_equals_a_naive_loop_at_every_thread_count() {
        // 1.2 MB of output and 2.8 MB of updates: over the thresholds, and several rounds.
        let (n, m) = (300_007usize, 700_000usize);
        let dst = mixed_destinations(n, m, 11);
        let plan = Spans(dst.clone());
        assert_eq!(under(1, || Walk::of(&plan, n, 4)), Walk::Sweep);
        assert_eq!(under(2, || Walk::of(&plan, n, 4)), Walk::Split);
        assert!(m > 2 * SPLIT_SCRATCH_BYTES / (4 * 8), "several rounds");
        let mut g = lcg(12);
        // Magnitudes far apart, so that any change of order changes the rounding.
        let mut float = || (g() % 2000) as f32 / 1000.0 * 10f32.powi((g() % 12) as i32 - 4);
        let data: Vec<f32> = (0..n).map(|_| float()).collect();
        let upd: Vec<f32> = (0..m).map(|_| float()).collect();
        let mut want = data.clone();
        for (s, d) in dst.iter().enumerate() {
            if let Some(d) = *d {
                want[d] += upd[s];
            }
        }
        let bits = |v: &[f32]| Storage::W32(v.iter().map(|x| x.to_bits()).collect());
        for threads in [1, 2, 3, 4, 8] {
            let got = under(threads, || {
                apply(
                    DType::Float,
                    Reduction::Add,
                    &bits(&data),
                    &bits(&upd),
                    &plan,
                )
                .unwrap()
            });
            assert!(got == bits(&want), "float add at {threads} threads");
        }
        // 64-bit words: integer multiplication, wrapping.
        let data: Vec<u64> = (0..n as u64).map(|v| v * 3 + 1).collect();
        let upd: Vec<u64> = (0..m as u64).map(|v| v | 1).collect();
        let mut want = data.clone();
        for (s, d) in dst.iter().enumerate() {
            if let Some(d) = *d {
                want[d] = want[d].wrapping_mul(upd[s]);
            }
        }
        for threads in [1, 2, 4] {
            let got = under(threads, || {
                let (d, u) = (Storage::W64(data.clone()), Storage::W64(upd.clone()));
                apply(DType::Int64, Reduction::Mul, &d, &u, &plan).unwrap()
            });
            assert!(
                got == Storage::W64(want.clone()),
                "int64 mul at {threads} threads"
            );
        }
    }

    /// Runs a two-bucket deal into buckets that already hold entries (11 | 22, 33) and have
    /// room for `len` more, and returns what each holds: entries as `offset | value << 32`.
    fn dealt(
        len: usize,
        deal: impl FnOnce([&mut [deal2::Slot]; 2], &mut [usize; 2]),
    ) -> [Vec<u64>; 2] {
        let held: [&[u64]; 2] = [&[11], &[22, 33]];
        let mut buckets: [Vec<deal2::Slot>; 2] = held.map(|h| {
            let mut b = vec![std::mem::MaybeUninit::new([0, 0]); h.len() + len];
            for (s, &e) in b.iter_mut().zip(h) {
                *s = std::mem::MaybeUninit::new([e as u32, (e >> 32) as u32]);
            }
            b
        });
        let mut cur = [1, 2];
        let [b0, b1] = &mut buckets;
        deal([b0, b1], &mut cur);
        [0, 1].map(|r| {
            buckets[r][..cur[r]]
                .iter()
                .map(|s| {
                    // SAFETY: the buckets were initialised in full above.
                    let [off, v] = unsafe { s.assume_init() };
                    u64::from(off) | u64::from(v) << 32
                })
                .collect::<Vec<u64>>()
        })
    }

    /// What a two-bucket deal must produce from (destination or None, value) pairs.
    fn naive_deal(updates: impl Iterator<Item = (Option<u32>, u32)>, split: u32) -> [Vec<u64>; 2] {
        let mut want: [Vec<u64>; 2] = [vec![11], vec![22, 33]];
        for (d, v) in updates {
            if let Some(d) = d {
                let (r, off) = if d >= split { (1, d - split) } else { (0, d) };
                want[r].push(u64::from(off) | u64::from(v) << 32);
            }
        }
        want
    }

    #[test]
    fn the_vector_deal_keeps_each_ranges_updates_in_order() {
        let split = 1000u32;
        let mut g = lcg(21);
        for len in [0usize, 1, 3, 4, 5, 7, 8, 63, 64, 65, 512] {
            // Both sides of the split, its edges, and skipped updates.
            let dst: Vec<u32> = (0..len)
                .map(|_| match g() % 8 {
                    0 => SKIP,
                    1 => split,
                    2 => split - 1,
                    3 => 0,
                    _ => (g() % 2000) as u32,
                })
                .collect();
            let vals: Vec<u32> = (0..len as u32).map(|v| v * 31 + 7).collect();
            let want = naive_deal(
                dst.iter()
                    .zip(&vals)
                    .map(|(&d, &v)| ((d != SKIP).then_some(d), v)),
                split,
            );
            for vector in [false, true] {
                let got = dealt(len, |b, cur| {
                    deal2::deal_on(vector, &dst, &vals, split, b, cur)
                });
                assert_eq!(got, want, "{len} updates, vector {vector}");
            }
        }
    }

    #[test]
    fn the_index_deal_normalises_skips_and_keeps_order() {
        // An axis of 700 at row start 1400, split at 1750: indices on both sides and at the
        // edges of the axis and the split, from the back, out of range by one, by 2^32 (whose
        // low half is in range), and the extremes.
        let (s, base, split) = (700usize, 1400u32, 1750u32);
        let mut g = lcg(5);
        let mut pick = || -> i64 {
            match g() % 12 {
                0 => 0,
                1 => 699,
                2 => 700,
                3 => -1,
                4 => -700,
                5 => -701,
                6 => 349,
                7 => 350,
                8 => (1 << 32) + 3,
                9 => i64::MIN,
                10 => i64::MAX,
                _ => (g() % 1400) as i64 - 700,
            }
        };
        for len in [0usize, 1, 3, 4, 5, 8, 9, 64, 67, 512] {
            let idx: Vec<i64> = (0..len).map(|_| pick()).collect();
            let vals: Vec<u32> = (0..len as u32).map(|v| v * 7 + 1).collect();
            for negatives in [true, false] {
                // Written out here rather than with the kernels' norm().
                let dest = |k: i64| -> Option<u32> {
                    let k = if negatives && k < 0 { k + s as i64 } else { k };
                    (0..s as i64).contains(&k).then(|| base + k as u32)
                };
                let want = naive_deal(idx.iter().zip(&vals).map(|(&k, &v)| (dest(k), v)), split);
                let all_in = idx.iter().all(|&k| dest(k).is_some());
                // int32 indices only where they fit: the rest are int64-only values.
                let narrow: Option<Vec<i32>> = idx.iter().map(|&k| i32::try_from(k).ok()).collect();
                for vector in [false, true] {
                    let mut ok = None;
                    let got = dealt(len, |b, cur| {
                        ok = Some(deal2::deal_indices_on(
                            vector,
                            IndexWords::I64(&idx),
                            s,
                            negatives,
                            base,
                            &vals,
                            split,
                            b,
                            cur,
                        ))
                    });
                    let what = format!("{len} int64, negatives {negatives}, vector {vector}");
                    assert_eq!(got, want, "{what}");
                    assert_eq!(ok, Some(all_in), "{what}");
                    if let Some(narrow) = &narrow {
                        let mut ok = None;
                        let got = dealt(len, |b, cur| {
                            ok = Some(deal2::deal_indices_on(
                                vector,
                                IndexWords::I32(narrow),
                                s,
                                negatives,
                                base,
                                &vals,
                                split,
                                b,
                                cur,
                            ))
                        });
                        assert_eq!(got, want, "int32 {what}");
                        assert_eq!(ok, Some(all_in), "int32 {what}");
                    }
                }
            }
        }
    }

    #[test]
    #[should_panic(expected = "bucket overflow")]
    fn a_deal_refuses_buckets_without_room() {
        let mut small = [std::mem::MaybeUninit::new([0u32; 2]); 3];
        let mut other = [std::mem::MaybeUninit::new([0u32; 2]); 8];
        deal2::deal(
            &[1, 2, 3, 4],
            &[0; 4],
            10,
            [&mut small, &mut other],
            &mut [0, 0],
        );
    }

    #[test]
    fn the_batched_sweep_applies_every_update_in_order_at_any_length() {
        // Lengths around the prefetch distance and the batch, where the carried-over
        // destinations change hands; some destinations out of range, many repeated.
        for m in [
            0, 1, 15, 16, 17, 511, 512, 513, 527, 528, 529, 1024, 1040, 5000,
        ] {
            let n = 37;
            let dst = mixed_destinations(n, m, m as u64 + 3);
            let plan = Spans(dst.clone());
            // Non-commutative in effect: each step shifts the old value, so order shows.
            let f = |a: u64, b: u64| a.rotate_left(5) ^ b;
            let upd: Vec<u64> = (0..m as u64).map(|v| v * 7919 + 1).collect();
            let mut want: Vec<u64> = (0..n as u64).collect();
            for (s, d) in dst.iter().enumerate() {
                if let Some(d) = *d {
                    want[d] = f(want[d], upd[s]);
                }
            }
            let mut got: Vec<u64> = (0..n as u64).collect();
            sweep_spans(&mut got, &upd, &plan, &f);
            assert_eq!(got, want, "{m} updates");
        }
    }

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
        assert!(matches!(e, Err(KernelError::Unsupported(_))));
    }

    #[test]
    fn string_add_concatenates_and_mul_is_unsupported() {
        let data = Storage::Str(vec![b"a".to_vec()]);
        let upd = Storage::Str(vec![b"x".to_vec(), b"y".to_vec()]);
        let out = apply(DType::String, Reduction::Add, &data, &upd, &all_to_zero(2)).unwrap();
        assert_eq!(out, Storage::Str(vec![b"axy".to_vec()]));
        let e = apply(DType::String, Reduction::Mul, &data, &upd, &all_to_zero(2));
        assert!(matches!(e, Err(KernelError::Unsupported(_))));
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
