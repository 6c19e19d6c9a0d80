//! The parallel loops every kernel goes through ([`par_tasks`], [`par_steps`]) and the builder
//! of outputs written in disjoint chunks into uninitialised memory ([`build`], [`SharedOut`]).

use rayon::prelude::*;
use std::mem::MaybeUninit;

/// Outputs smaller than this are built on the calling thread: spawning costs more than copying.
pub(crate) const PAR_MIN_BYTES: usize = 1 << 20;

/// Roughly how many bytes one parallel task writes. Each task ends with a store fence for its
/// non-temporal stores, so smaller tasks wait on more fences: with 64 KiB tasks a long streamed
/// copy was markedly slower.
const TASK_BYTES: usize = 1 << 20;

/// Builds a `total`-element vector by calling `fill(start, chunk)` on disjoint chunks covering
/// it, each a whole number of `row` elements but perhaps the last; in parallel when the output is
/// large. `None` when any `fill` returns false (nothing of the vector is kept). `fill` may use
/// [`super::stream_into`]: each chunk is fenced on the thread that wrote it.
///
/// # Safety
/// Each call of `fill` that returns true must have initialised every element of its `chunk`
/// (the vector is then handed out as initialised without reading it). A `fill` that may leave
/// elements unwritten must return false, or panic.
pub(crate) unsafe fn build<T, F>(total: usize, row: usize, fill: F) -> Option<Vec<T>>
where
    T: Copy + Send + Sync,
    F: Fn(usize, &mut [MaybeUninit<T>]) -> bool + Sync,
{
    let mut out: Vec<T> = Vec::with_capacity(total);
    let spare = &mut out.spare_capacity_mut()[..total];
    let size = std::mem::size_of::<T>().max(1);
    let ok = if total * size >= PAR_MIN_BYTES && row > 0 {
        let rows_per_task = (TASK_BYTES / (row * size)).max(1);
        let grain = rows_per_task * row;
        let base = SharedOut(spare.as_mut_ptr());
        par_tasks(total.div_ceil(grain), &|c| {
            let start = c * grain;
            // SAFETY: chunk c is [start, start + len) within the capacity, and par_tasks calls
            // each c at most once, so no two tasks share an element.
            let chunk = unsafe { base.chunk(start, grain.min(total - start)) };
            let ok = fill(start, chunk);
            stream_fence();
            ok
        })
    } else {
        let ok = fill(0, spare);
        stream_fence();
        ok
    };
    if !ok {
        return None;
    }
    // SAFETY: the chunks cover 0..total (consecutive from 0 in steps of `grain`, the last cut at
    // `total`; or one chunk of all), each `fill` returned true, and the caller promised that such
    // a fill initialised its whole chunk; total is within the capacity.
    unsafe { out.set_len(total) };
    Some(out)
}

/// The spare capacity of an output vector, written at disjoint offsets by several threads.
pub(super) struct SharedOut<T>(pub(super) *mut MaybeUninit<T>);

// SAFETY: tasks write disjoint elements, and the vector is not touched until they finish.
unsafe impl<T: Send> Send for SharedOut<T> {}
// SAFETY: as for Send: shared only among tasks that write disjoint elements.
unsafe impl<T: Send> Sync for SharedOut<T> {}

impl<T> SharedOut<T> {
    /// The `len` elements from `start`.
    ///
    /// # Safety
    /// They must be within the capacity, and no other thread may use them while the slice lives.
    #[allow(clippy::mut_from_ref)]
    #[inline(always)]
    pub(super) unsafe fn chunk(&self, start: usize, len: usize) -> &mut [MaybeUninit<T>] {
        // SAFETY: within the capacity and unshared, by this function's contract.
        unsafe { std::slice::from_raw_parts_mut(self.0.add(start), len) }
    }
}

/// Runs `task(i)` for every `i` in `0..tasks` on rayon's threads, and says whether every call
/// returned true (after a false, tasks not yet started may be skipped). Each `i` is run at most
/// once.
///
/// Every parallel loop of the kernels goes through this one non-generic function, so rayon's
/// machinery is compiled once instead of once per kernel instantiation: instantiated for each
/// element type, reduction and plan, it had bloated every debug test binary.
pub(crate) fn par_tasks(tasks: usize, task: &(dyn Fn(usize) -> bool + Sync)) -> bool {
    (0..tasks).into_par_iter().all(task)
}

/// Runs `task(step, lane)` for every step in `0..steps` and lane in `0..width`, steps in order:
/// no task of a step starts before every task of the step before has returned. Up to `width`
/// of rayon's threads take part; between steps they spin (then yield) instead of returning to
/// the pool, which for short steps costs far less than a parallel call per step.
///
/// It cannot deadlock when fewer threads show up (the pool is busy elsewhere, or has one
/// thread): tasks are claimed in order, and a thread only ever waits for tasks claimed before
/// its own, which are running on threads that do not wait for it. A panicking task makes the
/// others stop and the panic reach the caller.
pub(crate) fn par_steps(steps: usize, width: usize, task: &(dyn Fn(usize, usize) + Sync)) {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let total = steps.saturating_mul(width);
    let (next, done, failed) = (
        AtomicUsize::new(0),
        AtomicUsize::new(0),
        AtomicBool::new(false),
    );
    // Marks the walk failed if the task unwinds.
    struct Poison<'a>(&'a AtomicBool);
    impl Drop for Poison<'_> {
        fn drop(&mut self) {
            if std::thread::panicking() {
                self.0.store(true, Ordering::Relaxed);
            }
        }
    }
    let ran = par_tasks(width.min(total), &|_| loop {
        let t = next.fetch_add(1, Ordering::Relaxed);
        if t >= total {
            return true;
        }
        // Every task of the previous steps: t's step times the width.
        let before = t - t % width;
        let mut spins = 0u32;
        // Acquire: pairs with the Release below, so the earlier tasks' writes are visible.
        while done.load(Ordering::Acquire) < before {
            if failed.load(Ordering::Relaxed) {
                return false;
            }
            spins = spins.saturating_add(1);
            if spins < SPINS_BEFORE_YIELD {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        let poison = Poison(&failed);
        task(t / width, t % width);
        std::mem::forget(poison);
        done.fetch_add(1, Ordering::Release);
    });
    // Callers take "par_steps returned" as "every task ran" (the split walk then hands out the
    // output its first step wrote): checked here, once, rather than trusted. A failed task
    // panicked, and par_tasks has already passed the panic on.
    assert!(
        ran && done.load(Ordering::Acquire) == total,
        "par_steps returned before every task ran"
    );
}

/// How many times [`par_steps`] spins on a step's barrier before it yields its CPU.
const SPINS_BEFORE_YIELD: u32 = 1 << 12;

/// Orders this thread's non-temporal stores before anything it does next.
#[inline(always)]
pub(crate) fn stream_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a store fence has no preconditions; SSE2 is part of x86-64.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs par_steps and returns, for every task in the order they started, (step, lane, how
    /// many tasks had finished when it started).
    fn record_steps(steps: usize, width: usize) -> Vec<(usize, usize, usize)> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Mutex;
        let finished = AtomicUsize::new(0);
        let log = Mutex::new(Vec::new());
        par_steps(steps, width, &|step, lane| {
            let seen = finished.load(Ordering::SeqCst);
            log.lock().unwrap().push((step, lane, seen));
            // Long enough for another thread to start the next task, were it allowed to.
            std::thread::sleep(std::time::Duration::from_micros(200));
            finished.fetch_add(1, Ordering::SeqCst);
        });
        log.into_inner().unwrap()
    }

    #[test]
    fn par_steps_runs_every_task_once_and_never_ahead_of_its_step() {
        use crate::ops::testutil::under;
        for threads in [1, 2, 3, 8] {
            for (steps, width) in [(0, 2), (1, 1), (5, 2), (4, 3), (3, 8)] {
                let log = under(threads, || record_steps(steps, width));
                let mut ran: Vec<(usize, usize)> = log.iter().map(|&(s, l, _)| (s, l)).collect();
                ran.sort_unstable();
                let all: Vec<(usize, usize)> = (0..steps)
                    .flat_map(|s| (0..width).map(move |l| (s, l)))
                    .collect();
                assert_eq!(ran, all, "{threads} threads, {steps} x {width}");
                for &(step, lane, seen) in &log {
                    assert!(
                        seen >= step * width,
                        "step {step} lane {lane} started after only {seen} tasks ({threads} threads)"
                    );
                }
            }
        }
    }

    #[test]
    fn par_steps_finishes_alone_when_the_other_threads_are_busy() {
        use crate::ops::testutil::under;
        use std::sync::atomic::{AtomicBool, Ordering};
        // One of the pool's two threads waits for the steps to end; the other must run them all.
        let over = AtomicBool::new(false);
        let log = under(2, || {
            rayon::join(
                || {
                    while !over.load(Ordering::SeqCst) {
                        std::thread::yield_now();
                    }
                },
                || {
                    let log = record_steps(6, 2);
                    over.store(true, Ordering::SeqCst);
                    log
                },
            )
            .1
        });
        assert_eq!(log.len(), 12);
    }

    #[test]
    fn a_panic_in_one_step_reaches_the_caller_without_hanging_the_others() {
        use crate::ops::testutil::under;
        for threads in [1, 2, 4] {
            let r = under(threads, || {
                std::panic::catch_unwind(|| {
                    par_steps(10, 2, &|step, lane| {
                        if (step, lane) == (3, 1) {
                            panic!("task failed");
                        }
                    })
                })
            });
            assert!(r.is_err(), "{threads} threads");
        }
    }
}
