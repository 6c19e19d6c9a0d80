//! The public API abused: every operator's typed `eval` and the `Tensor` constructors called with
//! inconsistent lengths, overflowing dims, out-of-range indices and attributes, absurd opsets,
//! wrong dtypes, omitted optional inputs and zero-size everything.
//!
//! The contract: every call returns `Ok` or `Err` with a message; it never panics, never takes
//! more than a fraction of a second and never allocates what a shape merely claims. Where a call
//! returns `Ok`, the output is checked against the naive reference ([`onnx_idx_check_reference`],
//! written from the specification, `docs/semantics.md`, independent of the kernels).

#[allow(dead_code)]
mod common;

use common::reference::from_tensor;
use onnx_idx_check::ops::{
    Gather, GatherElements, GatherElementsGrad, GatherGrad, GatherNd, Mode, OpenVinoGather,
    Reduction, Scatter, ScatterElements, ScatterNd, TensorScatter, DEFAULT_MAX_OUTPUT_BYTES,
};
use onnx_idx_check::tensor::Storage;
use onnx_idx_check::{DType, SpecError, Tensor};
use onnx_idx_check_reference::{evaluate, Attr, Op, Outcome, RTensor};
use std::alloc::{GlobalAlloc, System};
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------------
// The harness: no panic, bounded time, bounded allocation.

/// Records the largest single allocation: per thread (to blame the call that made it) and over
/// the whole process (the kernels' worker threads included).
struct Counting;

static LARGEST_ANYWHERE: AtomicUsize = AtomicUsize::new(0);
thread_local! {
    static LARGEST_HERE: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        note(layout.size());
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        note(layout.size());
        System.alloc_zeroed(layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        System.realloc(ptr, layout, new_size)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        System.dealloc(ptr, layout)
    }
}

fn note(size: usize) {
    LARGEST_ANYWHERE.fetch_max(size, Ordering::Relaxed);
    // `try_with`: the thread-local may be gone while a thread shuts down.
    let _ = LARGEST_HERE.try_with(|c| c.set(c.get().max(size)));
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// The largest allocation any call here may make: every input is tiny, so anything bigger is
/// memory reserved on a shape's word alone.
const MAX_ALLOC: usize = 16 << 20;

/// What one call may take, generous for a debug build on a busy machine (or under a sanitizer).
const MAX_TIME: Duration = Duration::from_millis(500);

/// Runs `f`, failing the test with `what` when it panics, takes too long or allocates too much.
fn guarded<R>(what: &str, f: impl FnOnce() -> R) -> R {
    LARGEST_HERE.with(|c| c.set(0));
    if std::env::var_os("PUBLIC_API_TRACE").is_some() {
        eprintln!("{what}");
    }
    let start = Instant::now();
    let r = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(e) => {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            panic!("{what} panicked: {msg}")
        }
    };
    let took = start.elapsed();
    assert!(took < MAX_TIME, "{what} took {took:?}");
    let here = LARGEST_HERE.with(Cell::get);
    assert!(here <= MAX_ALLOC, "{what} allocated {here} bytes at once");
    let anywhere = LARGEST_ANYWHERE.load(Ordering::Relaxed);
    assert!(
        anywhere <= MAX_ALLOC,
        "an allocation of {anywhere} bytes was made (last call: {what})"
    );
    r
}

/// Every error carries a message.
fn check_err(what: &str, e: &SpecError) {
    assert!(!e.to_string().trim().is_empty(), "{what}: empty error");
}

// ---------------------------------------------------------------------------------------------
// Tensors and a naive n-d model.

fn i64s(shape: &[usize], v: &[i64]) -> Tensor {
    Tensor::from_slice(shape, v).unwrap()
}

/// Distinct values `10 * flat + 1`, so that every output element says where it came from.
fn numbered(shape: &[usize]) -> Tensor {
    let n = numel(shape).unwrap();
    Tensor::from_vec(shape.to_vec(), (0..n as i64).map(|i| 10 * i + 1).collect()).unwrap()
}

fn numel(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d))
}

/// The values of an int32 or int64 tensor (for messages).
fn index_values(t: &Tensor) -> Option<Vec<i64>> {
    match t.dtype() {
        DType::Int64 => t.to_vec::<i64>().ok(),
        DType::Int32 => t
            .to_vec::<i32>()
            .ok()
            .map(|v| v.into_iter().map(i64::from).collect()),
        _ => None,
    }
}

/// The dims a 1-D int32 or int64 `shape` input holds (`None` when it holds none).
fn read_shape(t: &Tensor) -> Option<Vec<usize>> {
    if t.rank() != 1 {
        return None;
    }
    index_values(t)?
        .into_iter()
        .map(|d| usize::try_from(d).ok())
        .collect()
}

/// The naive reference's output for `op` at `opset` with `attrs` on `inputs` (`Err`: the
/// reference refuses the call, and says why).
fn reference(
    op: Op,
    opset: i64,
    attrs: &[Attr],
    inputs: &[Option<&Tensor>],
) -> Result<RTensor, String> {
    let inputs: Vec<Option<RTensor>> = inputs.iter().map(|t| t.map(from_tensor)).collect();
    match evaluate(op, opset, attrs, &inputs, DEFAULT_MAX_OUTPUT_BYTES) {
        Outcome::Ok { out, .. } => Ok(out),
        other => Err(format!("the reference says {other:?}")),
    }
}

/// The reference's attributes for a typed call: `name` unless it has its default 0 (the typed
/// call passes it at every opset, the reference only where the version defines it).
fn int_unless_zero(name: &str, v: i64) -> Vec<Attr> {
    if v == 0 {
        Vec::new()
    } else {
        vec![Attr::int(name, v)]
    }
}

/// The `reduction` attribute of a typed scatter, unless it is `none`.
fn reduction_attr(r: Reduction) -> Vec<Attr> {
    let name = match r {
        Reduction::None => return Vec::new(),
        Reduction::Add => "add",
        Reduction::Mul => "mul",
        Reduction::Max => "max",
        Reduction::Min => "min",
    };
    vec![Attr::text("reduction", name)]
}

/// Compares an `Ok` output with the reference's (`Err`: the reference says the call should have
/// been refused).
fn check_ok(what: &str, out: &Tensor, dtype: DType, want: Result<RTensor, String>) {
    let want = want.unwrap_or_else(|why| panic!("{what} returned Ok, but {why}"));
    assert_eq!(out.dtype(), dtype, "{what}: dtype");
    assert_eq!(out.shape(), &want.shape[..], "{what}: shape");
    if out.numel() == 0 {
        return;
    }
    assert_eq!(from_tensor(out), want, "{what}: values");
}

// ---------------------------------------------------------------------------------------------
// The pools the matrices draw from.

const OPSETS: &[i64] = &[
    i64::MIN,
    -1,
    0,
    1,
    7,
    8,
    9,
    10,
    11,
    12,
    13,
    16,
    18,
    23,
    24,
    25,
    i64::MAX,
];

const AXES: &[i64] = &[
    i64::MIN,
    i64::MIN + 1,
    -3,
    -2,
    -1,
    0,
    1,
    2,
    1 << 40,
    i64::MAX,
];

const BIG: usize = 1 << 62;

fn data_pool() -> Vec<Tensor> {
    let mut v: Vec<Tensor> = [
        &[][..],
        &[0],
        &[3],
        &[2, 3],
        &[3, 0],
        &[2, 1, 3],
        &[2, 2, 2],
    ]
    .iter()
    .map(|s| numbered(s))
    .collect();
    // Empty, with dims whose other products overflow.
    v.push(Tensor::from_vec(vec![0, BIG, 4], Vec::<i64>::new()).unwrap());
    v.push(Tensor::from_vec(vec![1 << 40, 0], Vec::<i64>::new()).unwrap());
    v.push(Tensor::from_vec(vec![2, 0, BIG], Vec::<i64>::new()).unwrap());
    // Other dtypes: one float, one string, one bool.
    v.push(Tensor::from_vec(vec![2, 2], vec![1.5f32, -0.0, f32::NAN, 4.0]).unwrap());
    v.push(Tensor::from_vec(vec![3], vec![b"a".to_vec(), vec![], b"ccc".to_vec()]).unwrap());
    v.push(Tensor::from_vec(vec![2], vec![true, false]).unwrap());
    v
}

fn index_pool() -> Vec<Tensor> {
    vec![
        Tensor::scalar(1i64),
        Tensor::scalar(-1i64),
        i64s(&[0], &[]),
        i64s(&[2], &[0, -1]),
        i64s(&[2], &[2, -3]),
        i64s(&[1], &[i64::MAX]),
        i64s(&[1], &[i64::MIN]),
        i64s(&[1], &[-(1 << 62)]),
        Tensor::from_vec(vec![3, 1 << 40, 0], Vec::<i64>::new()).unwrap(),
        Tensor::from_vec(vec![0, BIG], Vec::<i64>::new()).unwrap(),
        i64s(&[2, 3], &[0, 1, 2, -1, -2, -3]),
        i64s(&[2, 3], &[1, 0, 1, 0, 1, 0]),
        i64s(&[2, 1], &[1, 0]),
        i64s(&[2, 2], &[0, 1, 1, -1]),
        i64s(&[1, 1], &[0]),
        i64s(&[1, 2], &[0, 2]),
        i64s(&[2, 1, 3], &[0, 0, 0, 0, 0, 0]),
        i64s(&[2, 1, 1], &[1, -2]),
        i64s(&[2, 0], &[]),
        i64s(&[1, 3], &[0, 0, 0]),
        Tensor::from_vec(vec![2], vec![0i32, -1]).unwrap(),
        Tensor::from_vec(vec![2], vec![i32::MIN, i32::MAX]).unwrap(),
        Tensor::from_vec(vec![1], vec![0.0f32]).unwrap(),
        Tensor::from_vec(vec![1], vec![0u8]).unwrap(),
    ]
}

/// Updates for a scatter of `data` at `idx`: the shapes ScatterElements and ScatterND want (when
/// they exist), in data's dtype, plus ones of the wrong shape or dtype.
fn updates_for(data: &Tensor, idx: &Tensor) -> Vec<Tensor> {
    let mut shapes = vec![idx.shape().to_vec(), vec![1]];
    if let Some(&k) = idx.shape().last() {
        if k <= data.rank() {
            let mut s = idx.shape()[..idx.rank() - 1].to_vec();
            s.extend_from_slice(&data.shape()[k..]);
            shapes.push(s);
        }
    }
    let mut out: Vec<Tensor> = shapes.into_iter().filter_map(|s| like(data, &s)).collect();
    out.push(Tensor::scalar(7.0f64));
    out
}

/// A tensor of `data`'s dtype and `shape` with distinct values (`None` when it would be large).
fn like(data: &Tensor, shape: &[usize]) -> Option<Tensor> {
    let n = numel(shape)?;
    if n > 4096 {
        return None;
    }
    let s = shape.to_vec();
    Some(match data.dtype() {
        DType::Int64 => Tensor::from_vec(s, (0..n as i64).map(|i| -1000 - i).collect()).ok()?,
        DType::Float => Tensor::from_vec(s, (0..n).map(|i| 100.0 + i as f32).collect()).ok()?,
        DType::String => Tensor::from_vec(s, (0..n).map(|i| vec![b'u'; i % 3]).collect()).ok()?,
        DType::Bool => Tensor::from_vec(s, (0..n).map(|i| i % 2 == 0).collect()).ok()?,
        _ => return None,
    })
}

/// Every reduction where one may be valid (opsets 16 and 18); elsewhere `none` and one that must
/// be refused.
fn reductions_at(opset: i64) -> &'static [Reduction] {
    const ALL: &[Reduction] = &[
        Reduction::None,
        Reduction::Add,
        Reduction::Mul,
        Reduction::Max,
        Reduction::Min,
    ];
    if opset == 16 || opset == 18 {
        ALL
    } else {
        &[Reduction::None, Reduction::Max]
    }
}

/// Counts the calls a matrix made and how many were `Ok`, so that a matrix that never gets past
/// the checks is noticed.
#[derive(Default)]
struct Tally {
    calls: usize,
    ok: usize,
}

impl Tally {
    /// Fails unless at least `min` calls were `Ok`; prints the counts (`--nocapture`).
    fn finish(&self, what: &str, min: usize) {
        eprintln!("{what}: {} calls, {} Ok", self.calls, self.ok);
        assert!(
            self.ok >= min,
            "{what}: only {} of {} calls were Ok",
            self.ok,
            self.calls
        );
    }

    fn record(&mut self, what: &str, r: &Result<Tensor, SpecError>) {
        self.calls += 1;
        match r {
            Ok(_) => self.ok += 1,
            Err(e) => check_err(what, e),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The operators.

#[test]
fn gather_never_panics_and_agrees_with_the_naive_model() {
    let mut t = Tally::default();
    for data in &data_pool() {
        for idx in &index_pool() {
            for &axis in AXES {
                for &opset in OPSETS {
                    let what = format!(
                        "Gather {{ axis: {axis} }}.eval({opset}, {:?} {:?}, {:?} {:?})",
                        data.dtype(),
                        data.shape(),
                        idx.dtype(),
                        idx.shape()
                    );
                    let r = guarded(&what, || Gather { axis }.eval(opset, data, idx));
                    t.record(&what, &r);
                    if let Ok(out) = r {
                        if opset < 1 {
                            panic!("{what} returned Ok before Gather existed");
                        }
                        let attrs = [Attr::int("axis", axis)];
                        let want = reference(Op::Gather, opset, &attrs, &[Some(data), Some(idx)]);
                        check_ok(&what, &out, data.dtype(), want);
                    }
                }
            }
        }
    }
    t.finish("Gather", 100);
}

#[test]
fn gather_elements_never_panics_and_agrees_with_the_naive_model() {
    let mut t = Tally::default();
    for data in &data_pool() {
        for idx in &index_pool() {
            for &axis in AXES {
                for &opset in OPSETS {
                    let what = format!(
                        "GatherElements {{ axis: {axis} }}.eval({opset}, {:?}, {:?} {:?})",
                        data.shape(),
                        idx.dtype(),
                        idx.shape()
                    );
                    let r = guarded(&what, || GatherElements { axis }.eval(opset, data, idx));
                    t.record(&what, &r);
                    if let Ok(out) = r {
                        assert!(opset >= 11, "{what} returned Ok before version 11");
                        check_ok(
                            &what,
                            &out,
                            data.dtype(),
                            reference(
                                Op::GatherElements,
                                opset,
                                &[Attr::int("axis", axis)],
                                &[Some(data), Some(idx)],
                            ),
                        );
                    }
                }
            }
        }
    }
    t.finish("GatherElements", 50);
}

#[test]
fn gather_nd_never_panics_and_agrees_with_the_naive_model() {
    let mut t = Tally::default();
    let batch_dims = [i64::MIN, -1, 0, 1, 2, 3, 1 << 40, i64::MAX];
    for data in &data_pool() {
        for idx in &index_pool() {
            for &b in &batch_dims {
                for &opset in OPSETS {
                    let what = format!(
                        "GatherNd {{ batch_dims: {b} }}.eval({opset}, {:?}, {:?} {:?})",
                        data.shape(),
                        idx.dtype(),
                        idx.shape()
                    );
                    let r = guarded(&what, || GatherNd { batch_dims: b }.eval(opset, data, idx));
                    t.record(&what, &r);
                    if let Ok(out) = r {
                        assert!(opset >= 11, "{what} returned Ok before version 11");
                        assert!(
                            b == 0 || opset >= 12,
                            "{what} accepted batch_dims before version 12"
                        );
                        let attrs = int_unless_zero("batch_dims", b);
                        let want = reference(Op::GatherND, opset, &attrs, &[Some(data), Some(idx)]);
                        check_ok(&what, &out, data.dtype(), want);
                    }
                }
            }
        }
    }
    t.finish("GatherND", 50);
}

#[test]
fn scatters_never_panic_and_agree_with_the_naive_model() {
    let mut t = Tally::default();
    // Smaller pools than the gathers': each combination is three operators and five reductions.
    let opsets = [i64::MIN, 0, 9, 11, 16, 18, i64::MAX];
    let axes = [i64::MIN, -1, 0, 1, i64::MAX];
    for data in &data_pool() {
        for idx in &index_pool() {
            for upd in &updates_for(data, idx) {
                for &opset in &opsets {
                    let shapes = format!(
                        "{:?} {:?}, {:?} {:?}, {:?} {:?}",
                        data.dtype(),
                        data.shape(),
                        idx.dtype(),
                        idx.shape(),
                        upd.dtype(),
                        upd.shape()
                    );
                    for &axis in &axes {
                        let what = format!("Scatter {{ axis: {axis} }}.eval({opset}, {shapes})");
                        let r = guarded(&what, || Scatter { axis }.eval(opset, data, idx, upd));
                        t.record(&what, &r);
                        if let Ok(out) = r {
                            assert!((9..11).contains(&opset), "{what}: Ok outside opsets 9-10");
                            let want = reference(
                                Op::Scatter,
                                opset,
                                &[Attr::int("axis", axis)],
                                &[Some(data), Some(idx), Some(upd)],
                            );
                            check_ok(&what, &out, data.dtype(), want);
                        }
                        for &reduction in reductions_at(opset) {
                            let op = ScatterElements { axis, reduction };
                            let what = format!("{op:?}.eval({opset}, {shapes})");
                            let r = guarded(&what, || op.eval(opset, data, idx, upd));
                            t.record(&what, &r);
                            if let Ok(out) = r {
                                let since = match reduction {
                                    Reduction::None => 11,
                                    Reduction::Add | Reduction::Mul => 16,
                                    _ => 18,
                                };
                                assert!(opset >= since, "{what}: Ok before version {since}");
                                let add = reduction == Reduction::Add;
                                if matches!(reduction, Reduction::None | Reduction::Add)
                                    && (!add || data.dtype() == DType::Int64)
                                {
                                    let mut attrs = vec![Attr::int("axis", axis)];
                                    attrs.extend(reduction_attr(reduction));
                                    let want = reference(
                                        Op::ScatterElements,
                                        opset,
                                        &attrs,
                                        &[Some(data), Some(idx), Some(upd)],
                                    );
                                    check_ok(&what, &out, data.dtype(), want);
                                } else {
                                    assert_eq!(out.shape(), data.shape(), "{what}: shape");
                                }
                            }
                        }
                    }
                    for &reduction in reductions_at(opset) {
                        let op = ScatterNd { reduction };
                        let what = format!("{op:?}.eval({opset}, {shapes})");
                        let r = guarded(&what, || op.eval(opset, data, idx, upd));
                        t.record(&what, &r);
                        if let Ok(out) = r {
                            assert!(opset >= 11, "{what}: Ok before version 11");
                            let add = reduction == Reduction::Add;
                            if matches!(reduction, Reduction::None | Reduction::Add)
                                && (!add || data.dtype() == DType::Int64)
                            {
                                check_ok(
                                    &what,
                                    &out,
                                    data.dtype(),
                                    reference(
                                        Op::ScatterND,
                                        opset,
                                        &reduction_attr(reduction),
                                        &[Some(data), Some(idx), Some(upd)],
                                    ),
                                );
                            } else {
                                assert_eq!(out.shape(), data.shape(), "{what}: shape");
                            }
                        }
                    }
                }
            }
        }
    }
    t.finish("Scatter, ScatterElements, ScatterND", 100);
}

#[test]
fn tensor_scatter_never_panics_and_agrees_with_the_naive_model() {
    let mut t = Tally::default();
    let pasts = [
        numbered(&[2, 4, 1]),
        numbered(&[2, 4]),
        numbered(&[1, 3, 2]),
        numbered(&[3]),
        numbered(&[0, 4, 2]),
        Tensor::from_vec(vec![2, 0, BIG], Vec::<i64>::new()).unwrap(),
        Tensor::from_vec(vec![0, BIG, 4], Vec::<i64>::new()).unwrap(),
    ];
    let wis = [
        None,
        Some(i64s(&[2], &[1, 3])),
        Some(i64s(&[2], &[-1, 0])),
        Some(i64s(&[2], &[i64::MAX, i64::MIN])),
        Some(i64s(&[2], &[9, 2])),
        Some(i64s(&[1], &[0])),
        Some(i64s(&[0], &[])),
        Some(Tensor::from_vec(vec![2], vec![0i32, 1]).unwrap()),
    ];
    let axes = [i64::MIN, -3, -2, -1, 0, 1, 2, 3, i64::MAX];
    for past in &pasts {
        let mut updates = vec![Tensor::scalar(1i64), Tensor::scalar(1.0f32)];
        // Every shape that agrees with past off one axis and is at most as long on it.
        for a in 0..past.rank() {
            for l in [0, 1, 2, 5] {
                let mut s = past.shape().to_vec();
                s[a] = l;
                updates.extend(like(past, &s));
            }
        }
        for upd in &updates {
            for wi in &wis {
                for &axis in &axes {
                    for mode in [Mode::Linear, Mode::Circular] {
                        for opset in [i64::MIN, 0, 23, 24, i64::MAX] {
                            let op = TensorScatter { axis, mode };
                            let what = format!(
                                "{op:?}.eval({opset}, {:?}, {:?}, {:?})",
                                past.shape(),
                                upd.shape(),
                                wi.as_ref().map(|w| (w.dtype(), w.shape().to_vec()))
                            );
                            let r = guarded(&what, || op.eval(opset, past, upd, wi.as_ref()));
                            t.record(&what, &r);
                            if let Ok(out) = r {
                                assert!(opset >= 24, "{what}: Ok before version 24");
                                let mode = match mode {
                                    Mode::Linear => "linear",
                                    Mode::Circular => "circular",
                                };
                                let want = reference(
                                    Op::TensorScatter,
                                    opset,
                                    &[Attr::int("axis", axis), Attr::text("mode", mode)],
                                    &[Some(past), Some(upd), wi.as_ref()],
                                );
                                check_ok(&what, &out, past.dtype(), want);
                            }
                        }
                    }
                }
            }
        }
    }
    t.finish("TensorScatter", 50);
}

#[test]
fn openvino_gather_never_panics_and_agrees_with_the_naive_model() {
    let mut t = Tally::default();
    let axes = [
        Tensor::scalar(0i64),
        Tensor::scalar(-1i32),
        i64s(&[1], &[1]),
        Tensor::scalar(2i64),
        Tensor::scalar(i64::MIN),
        Tensor::scalar(i64::MAX),
        i64s(&[2], &[0, 1]),
        i64s(&[0], &[]),
        Tensor::scalar(1.0f32),
    ];
    let batch_dims = [i64::MIN, -2, -1, 0, 1, 2, i64::MAX];
    let mut indices = index_pool();
    indices.push(Tensor::from_vec(vec![2], vec![-128i8, 127]).unwrap());
    for data in &data_pool() {
        for idx in &indices {
            for axis in &axes {
                for &b in &batch_dims {
                    for opset in [i64::MIN, 1, 7, 8, i64::MAX] {
                        let what = format!(
                            "OpenVinoGather {{ batch_dims: {b} }}.eval({opset}, {:?}, {:?} {:?}, axis {:?})",
                            data.shape(),
                            idx.dtype(),
                            idx.shape(),
                            index_values(axis)
                        );
                        let op = OpenVinoGather { batch_dims: b };
                        let r = guarded(&what, || op.eval(opset, data, idx, axis));
                        t.record(&what, &r);
                        if opset < 8 && index_values(idx).is_some_and(|v| v.iter().any(|&k| k < 0))
                        {
                            // Gather-1 and Gather-7 take indices in [0, s-1] only.
                            assert!(
                                r.is_err(),
                                "{what}: a negative index accepted before version 8"
                            );
                        }
                        if opset == 1 && b != 0 {
                            assert!(r.is_err(), "{what}: batch_dims accepted at version 1");
                        }
                        if let Ok(out) = r {
                            assert!(opset >= 1, "{what}: Ok before version 1");
                            // Where Gather-1/7 compute, every index is in range, so the naive
                            // zero-filling model of Gather-8 gives the same output.
                            check_ok(
                                &what,
                                &out,
                                data.dtype(),
                                reference(
                                    Op::OvGather,
                                    opset,
                                    &int_unless_zero("batch_dims", b),
                                    &[Some(data), Some(idx), Some(axis)],
                                ),
                            );
                        }
                    }
                }
            }
        }
    }
    t.finish("OpenVINO Gather", 50);
}

#[test]
fn gradients_never_panic_and_agree_with_the_naive_model() {
    let mut t = Tally::default();
    let shapes = [
        i64s(&[1], &[3]),
        i64s(&[2], &[2, 3]),
        i64s(&[2], &[0, 3]),
        i64s(&[3], &[0, 1 << 62, 4]),
        i64s(&[2], &[-1, 3]),
        i64s(&[2], &[i64::MAX, i64::MAX]),
        i64s(&[2], &[1 << 31, 1 << 31]),
        i64s(&[0], &[]),
        Tensor::scalar(3i64),
        Tensor::from_vec(vec![1], vec![3i32]).unwrap(),
    ];
    let dys_for = |idx: &Tensor, xs: &Tensor| {
        let mut v = vec![Tensor::scalar(1.0f32), Tensor::scalar(1i64)];
        let small = |s: &[usize]| {
            numel(s).filter(|&n| n <= 4096).map(|n| {
                Tensor::from_vec(s.to_vec(), (0..n).map(|i| 1.0 + i as f32).collect()).unwrap()
            })
        };
        v.extend(small(idx.shape()));
        if let Some(xs) = read_shape(xs) {
            for a in 0..xs.len() {
                let mut s = xs[..a].to_vec();
                s.extend_from_slice(idx.shape());
                s.extend_from_slice(&xs[a + 1..]);
                v.extend(small(&s));
            }
        }
        v
    };
    for xs in &shapes {
        for idx in &index_pool() {
            for dy in &dys_for(idx, xs) {
                for &axis in &[i64::MIN, -1, 0, 1, 2, i64::MAX] {
                    for opset in [i64::MIN, 0, 1, i64::MAX] {
                        let desc = format!(
                            "{opset}, shape {:?}, {:?} {:?}, dY {:?} {:?}",
                            index_values(xs),
                            idx.dtype(),
                            idx.shape(),
                            dy.dtype(),
                            dy.shape()
                        );
                        let what = format!("GatherGrad {{ axis: {axis} }}.eval({desc})");
                        let r = guarded(&what, || GatherGrad { axis }.eval(opset, xs, idx, dy));
                        t.record(&what, &r);
                        if let Ok(out) = r {
                            assert!(opset >= 1, "{what}: Ok before version 1");
                            check_ok(
                                &what,
                                &out,
                                dy.dtype(),
                                reference(
                                    Op::GatherGrad,
                                    opset,
                                    &[Attr::int("axis", axis)],
                                    &[Some(xs), Some(idx), Some(dy)],
                                ),
                            );
                        }
                        let what = format!("GatherElementsGrad {{ axis: {axis} }}.eval({desc})");
                        let op = GatherElementsGrad { axis };
                        let r = guarded(&what, || op.eval(opset, dy, xs, idx));
                        t.record(&what, &r);
                        if let Ok(out) = r {
                            assert!(opset >= 1, "{what}: Ok before version 1");
                            let want = reference(
                                Op::GatherElementsGrad,
                                opset,
                                &[Attr::int("axis", axis)],
                                &[Some(dy), Some(xs), Some(idx)],
                            );
                            check_ok(&what, &out, dy.dtype(), want);
                        }
                    }
                }
            }
        }
    }
    t.finish("GatherGrad, GatherElementsGrad", 20);
}

// ---------------------------------------------------------------------------------------------
// Pointed cases the matrices may not reach.

#[test]
fn huge_outputs_from_small_inputs_are_refused_before_allocating() {
    // Data [1, 2^26] int64 is 512 MiB: too big to build here, so its axis-0 view comes from an
    // empty tensor whose other dims are huge, and the indices ask for many copies.
    let data = Tensor::from_vec(vec![0, BIG], Vec::<i64>::new()).unwrap();
    let idx = i64s(&[1], &[0]);
    let r = guarded("Gather on [0, 2^62] at index 0", || {
        Gather { axis: 0 }.eval(13, &data, &idx)
    });
    let e = r.unwrap_err();
    check_err("Gather on [0, 2^62]", &e);
    // One string of 1 MiB gathered 10,000 times is 10 GiB of strings: refused, not built.
    let data = Tensor::from_vec(vec![1], vec![vec![b'x'; 1 << 20]]).unwrap();
    let idx = Tensor::from_vec(vec![10_000], vec![0i64; 10_000]).unwrap();
    let r = guarded("Gather of a 1 MiB string 10,000 times", || {
        Gather { axis: 0 }.eval(13, &data, &idx)
    });
    assert!(matches!(r, Err(SpecError::TooLarge(_))), "{r:?}");
    // GatherND with k = 0 is refused; with k = r over a huge empty batch it is zero-size.
    let data = Tensor::from_vec(vec![0, BIG, 4], Vec::<i64>::new()).unwrap();
    let idx = Tensor::from_vec(vec![3, 1 << 40, 0], Vec::<i64>::new()).unwrap();
    for op in [Gather { axis: 0 }, Gather { axis: 1 }, Gather { axis: 2 }] {
        let what = format!("{op:?} on [0, 2^62, 4] with indices [3, 2^40, 0]");
        let r = guarded(&what, || op.eval(13, &data, &idx));
        if let Ok(out) = r {
            check_ok(
                &what,
                &out,
                DType::Int64,
                reference(
                    Op::Gather,
                    13,
                    &[Attr::int("axis", op.axis)],
                    &[Some(&data), Some(&idx)],
                ),
            );
        }
    }
}

#[test]
fn tensor_constructors_refuse_inconsistent_parts() {
    type Case = (&'static str, Box<dyn Fn() -> bool>);
    let cases: Vec<Case> = vec![
        (
            "from_vec too short",
            Box::new(|| Tensor::from_vec(vec![4], vec![1i64, 2, 3]).is_err()),
        ),
        (
            "from_vec too long",
            Box::new(|| Tensor::from_vec(vec![1], vec![1u8, 2]).is_err()),
        ),
        (
            "from_vec overflowing dims",
            Box::new(|| Tensor::from_vec(vec![usize::MAX, 2], Vec::<f32>::new()).is_err()),
        ),
        (
            "from_vec [usize::MAX] empty",
            Box::new(|| Tensor::from_vec(vec![usize::MAX], Vec::<f32>::new()).is_err()),
        ),
        (
            "from_vec [0, 2^62, 4] empty",
            Box::new(|| {
                Tensor::from_vec(vec![0, BIG, 4], Vec::<f32>::new()).is_ok_and(|t| t.numel() == 0)
            }),
        ),
        (
            "from_vec [4, 2^62, 0] empty",
            Box::new(|| {
                // Zero elements, but the product of the first two dims overflows: either answer is
                // sound, as long as an Ok tensor has no elements.
                Tensor::from_vec(vec![4, BIG, 0], Vec::<f32>::new())
                    .map_or(true, |t| t.numel() == 0)
            }),
        ),
        (
            "from_slice mismatched",
            Box::new(|| Tensor::from_slice(&[2, 2], &[true]).is_err()),
        ),
        (
            "new wrong storage kind",
            Box::new(|| Tensor::new(DType::Float, vec![1], Storage::W64(vec![0])).is_err()),
        ),
        (
            "new wrong storage length",
            Box::new(|| Tensor::new(DType::Int16, vec![3], Storage::W16(vec![0; 2])).is_err()),
        ),
        (
            "new packed too short",
            Box::new(|| Tensor::new(DType::Int4, vec![5], Storage::Packed(vec![0; 2])).is_err()),
        ),
        (
            "new packed overflowing",
            Box::new(|| {
                Tensor::new(DType::Int4, vec![usize::MAX], Storage::Packed(vec![])).is_err()
            }),
        ),
        (
            "new strings with a float dtype",
            Box::new(|| Tensor::new(DType::Float, vec![1], Storage::Str(vec![vec![]])).is_err()),
        ),
        (
            "from_le_bytes huge claim",
            Box::new(|| Tensor::from_le_bytes(DType::Double, vec![1 << 40], &[0; 8]).is_err()),
        ),
        (
            "from_le_bytes overflowing",
            Box::new(|| Tensor::from_le_bytes(DType::Double, vec![BIG, 4], &[]).is_err()),
        ),
        (
            "from_le_bytes packed overflowing",
            Box::new(|| Tensor::from_le_bytes(DType::Uint4, vec![usize::MAX, 3], &[1]).is_err()),
        ),
        (
            "from_le_bytes string",
            Box::new(|| Tensor::from_le_bytes(DType::String, vec![1], &[0]).is_err()),
        ),
        (
            "from_le_bytes bool 2",
            Box::new(|| Tensor::from_le_bytes(DType::Bool, vec![1], &[2]).is_err()),
        ),
        (
            "reshaped past usize",
            Box::new(|| {
                Tensor::from_vec(vec![2], vec![1i32, 2])
                    .unwrap()
                    .reshaped(vec![BIG, 8])
                    .is_err()
            }),
        ),
        (
            "reshaped to another count",
            Box::new(|| {
                Tensor::from_vec(vec![2], vec![1i32, 2])
                    .unwrap()
                    .reshaped(vec![3])
                    .is_err()
            }),
        ),
        (
            "to_vec of another type",
            Box::new(|| Tensor::scalar(1u16).to_vec::<i16>().is_err()),
        ),
        (
            "as_slice of bool",
            Box::new(|| Tensor::scalar(true).as_slice::<bool>().is_none()),
        ),
        (
            "to_le_bytes of strings",
            Box::new(|| Tensor::scalar(b"x".to_vec()).to_le_bytes().is_none()),
        ),
        (
            "zero-size rank 3 round trip",
            Box::new(|| {
                let t = Tensor::from_vec(vec![3, 0, 2], Vec::<Vec<u8>>::new()).unwrap();
                t.to_vec::<Vec<u8>>().unwrap().is_empty() && t.shape() == [3, 0, 2]
            }),
        ),
    ];
    for (what, f) in cases {
        assert!(guarded(what, f), "{what}: wrong answer");
    }
}

#[test]
fn every_operator_takes_zero_size_everything() {
    let e = |s: &[usize]| Tensor::from_vec(s.to_vec(), Vec::<f32>::new()).unwrap();
    let ei = |s: &[usize]| Tensor::from_vec(s.to_vec(), Vec::<i64>::new()).unwrap();
    let (d, i) = (e(&[0, 3]), ei(&[0, 3]));
    let out = guarded("GatherElements zero", || {
        GatherElements { axis: 1 }.eval(13, &d, &i)
    });
    assert_eq!(out.unwrap().shape(), [0, 3]);
    let out = guarded("Gather zero", || Gather { axis: 1 }.eval(13, &d, &ei(&[0])));
    assert_eq!(out.unwrap().shape(), [0, 0]);
    let out = guarded("ScatterElements zero", || {
        ScatterElements::default().eval(18, &d, &i, &d)
    });
    assert_eq!(out.unwrap().shape(), [0, 3]);
    let out = guarded("ScatterND zero", || {
        ScatterNd::default().eval(18, &d, &ei(&[0, 1]), &e(&[0, 3]))
    });
    assert_eq!(out.unwrap().shape(), [0, 3]);
    let out = guarded("GatherND zero", || {
        GatherNd::default().eval(13, &e(&[3, 0]), &ei(&[0, 1]))
    });
    assert_eq!(out.unwrap().shape(), [0, 0]);
    let out = guarded("TensorScatter zero", || {
        TensorScatter::default().eval(24, &e(&[0, 4, 2]), &e(&[0, 1, 2]), None)
    });
    assert_eq!(out.unwrap().shape(), [0, 4, 2]);
    let out = guarded("GatherGrad zero", || {
        GatherGrad::default().eval(1, &i64s(&[2], &[0, 3]), &ei(&[0]), &e(&[0, 3]))
    });
    assert_eq!(out.unwrap().shape(), [0, 3]);
    let out = guarded("GatherElementsGrad zero", || {
        GatherElementsGrad::default().eval(1, &e(&[0, 3]), &i64s(&[2], &[0, 3]), &i)
    });
    assert_eq!(out.unwrap().shape(), [0, 3]);
    let out = guarded("OpenVinoGather zero", || {
        OpenVinoGather::default().eval(8, &d, &ei(&[0]), &Tensor::scalar(0i64))
    });
    assert_eq!(out.unwrap().shape(), [0, 3]);
}
