//! The process's memory policy for large tensors, set by the binary (and the benchmarks) once at
//! start: freed blocks stay in the heap for the next case or iteration to reuse warm, and large
//! blocks are backed by transparent huge pages where the kernel offers them.
//!
//! Huge pages matter because the kernels read data at random rows: GatherElements on axis 0
//! touches a different 4 KiB page for almost every element, and a page-table walk per element
//! costs more than the copy. With 2 MiB pages a 64 MiB table needs 32 TLB entries instead of
//! 16384.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Blocks at least this large are advised to use huge pages: two huge pages, so that at least one
/// aligned 2 MiB extent lies inside.
const HUGE_MIN_BYTES: usize = 4 << 20;

/// The huge page size on x86-64 and aarch64 Linux with 4 KiB base pages.
const HUGE_PAGE: usize = 2 << 20;

/// The system allocator, asking the kernel for transparent huge pages behind every block of
/// `HUGE_MIN_BYTES` or more (Linux `madvise(MADV_HUGEPAGE)`, effective when
/// `/sys/kernel/mm/transparent_hugepage/enabled` is `madvise` or `always`; a no-op elsewhere).
/// The advice is given before the block is first written, so its pages fault in huge.
pub struct HugePageAlloc;

// SAFETY: every call forwards to `System` unchanged; the advice only changes how the kernel backs
// the pages of a block that is already ours.
unsafe impl GlobalAlloc for HugePageAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let p = unsafe { System.alloc(layout) };
        advise_huge(p, layout.size());
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let p = unsafe { System.alloc_zeroed(layout) };
        advise_huge(p, layout.size());
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        advise_huge(p, new_size);
        p
    }
}

/// The end of the highest range advised so far. With the heap kept (see [`keep_freed_memory`])
/// large blocks come from a heap that only grows, so memory below this mark was advised when it
/// was fresh, or was touched before and would only be collapsed into huge pages in the
/// background, stalling the process for nothing: a block reused there is left alone.
static ADVISED_END: AtomicUsize = AtomicUsize::new(0);

/// Advises huge pages for the 2 MiB-aligned extents inside `[p, p + len)` above the mark, when
/// `len` is large. Only whole aligned extents are advised, so the advice never reaches memory
/// outside the block.
#[inline]
fn advise_huge(p: *mut u8, len: usize) {
    if let Some((start, len)) = huge_extents(p as usize, len) {
        let end = start + len;
        let mark = ADVISED_END.fetch_max(end, Ordering::Relaxed);
        if end > mark {
            let from = start.max(mark);
            madvise_huge(from, end - from);
        }
    }
}

/// The aligned huge-page extents inside the block `[addr, addr + len)` as (start, length), or
/// `None` for a null or small block, or one with no whole aligned extent inside.
fn huge_extents(addr: usize, len: usize) -> Option<(usize, usize)> {
    if addr == 0 || len < HUGE_MIN_BYTES {
        return None;
    }
    let start = addr.checked_next_multiple_of(HUGE_PAGE)?;
    let end = addr.checked_add(len)? / HUGE_PAGE * HUGE_PAGE;
    (end > start).then(|| (start, end - start))
}

#[cfg(target_os = "linux")]
fn madvise_huge(start: usize, len: usize) {
    // SAFETY: the range is page-aligned and lies inside a block this process owns; MADV_HUGEPAGE
    // is advice and changes no contents. A failure (THP disabled) is harmless and ignored.
    unsafe {
        libc::madvise(start as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
    }
}

#[cfg(not(target_os = "linux"))]
fn madvise_huge(_start: usize, _len: usize) {}

/// Large blocks kept for reuse by [`ReuseLargeAlloc`]: at most this many...
const REUSE_BLOCKS: usize = 8;
/// ...and at most this many bytes in all.
const REUSE_BYTES: usize = 1 << 30;
/// Blocks handed out from the cache that are larger than their request, so that freeing them
/// gives the allocator their real size.
const LENT_BLOCKS: usize = 64;

/// One block of memory: address, real size, alignment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Block {
    addr: usize,
    size: usize,
    align: usize,
}

/// Blocks that [`Reuse::keep`] gave up, for the caller to free once the lock is released.
type Spare = [Option<Block>; REUSE_BLOCKS + 1];

/// The blocks [`ReuseLargeAlloc`] keeps and lends, in fixed arrays: the allocator cannot
/// allocate while it holds the lock.
struct Reuse {
    /// Oldest first, the `None`s after the last block.
    kept: [Option<Block>; REUSE_BLOCKS],
    lent: [Option<Block>; LENT_BLOCKS],
}

static REUSE: std::sync::Mutex<Reuse> = std::sync::Mutex::new(Reuse {
    kept: [None; REUSE_BLOCKS],
    lent: [None; LENT_BLOCKS],
});

impl Reuse {
    /// A kept block that fits `layout` (same alignment, at most a quarter larger), taken out of
    /// the cache; recorded as lent when larger than asked (and left kept when no record is
    /// free, since its real size could not be given back).
    fn take(&mut self, layout: Layout) -> Option<Block> {
        let (size, align) = (layout.size(), layout.align());
        let slot = self.kept.iter().position(|b| {
            b.is_some_and(|b| b.align == align && b.size >= size && b.size - size <= size / 4)
        })?;
        let block = self.remove(slot)?;
        if block.size != size {
            let Some(free) = self.lent.iter().position(Option::is_none) else {
                self.kept[self.kept.iter().position(Option::is_none)?] = Some(block);
                return None;
            };
            self.lent[free] = Some(block);
        }
        Some(block)
    }

    /// Takes the kept block at `slot` out, closing the gap so that the order stays oldest first.
    fn remove(&mut self, slot: usize) -> Option<Block> {
        let block = self.kept[slot].take()?;
        self.kept[slot..].rotate_left(1);
        Some(block)
    }

    /// The real block behind `addr` freed with `layout`: the one lent there, or the layout's.
    fn real(&mut self, addr: usize, layout: Layout) -> Block {
        let lent = self
            .lent
            .iter_mut()
            .find(|b| b.is_some_and(|b| b.addr == addr))
            .and_then(Option::take);
        lent.unwrap_or(Block {
            addr,
            size: layout.size(),
            align: layout.align(),
        })
    }

    /// Keeps `block`, the most recently freed and so the likeliest to fit the next request,
    /// making room by giving up the oldest kept blocks. The blocks returned are the caller's to
    /// free: none when there was room, `block` itself when it alone exceeds the limit.
    fn keep(&mut self, block: Block) -> Spare {
        let mut spare: Spare = [None; REUSE_BLOCKS + 1];
        if block.size > REUSE_BYTES {
            spare[0] = Some(block);
            return spare;
        }
        let mut held: usize = self.kept.iter().flatten().map(|b| b.size).sum();
        let mut given = 0;
        while held + block.size > REUSE_BYTES || self.kept[REUSE_BLOCKS - 1].is_some() {
            let Some(old) = self.remove(0) else { break };
            held -= old.size;
            spare[given] = Some(old);
            given += 1;
        }
        match self.kept.iter().position(Option::is_none) {
            Some(i) => self.kept[i] = Some(block),
            None => spare[REUSE_BLOCKS] = Some(block),
        }
        spare
    }
}

fn lock_reuse() -> std::sync::MutexGuard<'static, Reuse> {
    // The arrays stay consistent at every step, so a panic elsewhere cannot leave them broken.
    REUSE.lock().unwrap_or_else(|e| e.into_inner())
}

/// [`HugePageAlloc`] that also keeps up to eight freed blocks of 4 MiB or more (1 GiB in all) and
/// lends them to the next allocations of about their size, warm: for a process whose `malloc`
/// settings are not this crate's to change (the Python module, loaded into someone's Python),
/// where [`keep_freed_memory`] would change how every library in the process allocates. Each
/// call's output is then written into pages already mapped, as the binary's are.
pub struct ReuseLargeAlloc;

// SAFETY: small blocks are forwarded to `HugePageAlloc` unchanged. A large block is either fresh
// from it or a kept one, which is only ever lent once at a time (taken out of `kept` under the
// lock) and has at least the requested size and exactly the requested alignment; its real layout
// is remembered in `lent` so that it is freed with the layout it was allocated with.
unsafe impl GlobalAlloc for ReuseLargeAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() >= HUGE_MIN_BYTES {
            if let Some(b) = lock_reuse().take(layout) {
                return b.addr as *mut u8;
            }
        }
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { HugePageAlloc.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() >= HUGE_MIN_BYTES {
            if let Some(b) = lock_reuse().take(layout) {
                let p = b.addr as *mut u8;
                // SAFETY: the block has at least `layout.size()` writable bytes.
                unsafe { p.write_bytes(0, layout.size()) };
                return p;
            }
        }
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { HugePageAlloc.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if layout.size() < HUGE_MIN_BYTES {
            // SAFETY: forwarded with the caller's guarantees (small blocks are never lent).
            return unsafe { HugePageAlloc.dealloc(ptr, layout) };
        }
        let spare = {
            let mut reuse = lock_reuse();
            let block = reuse.real(ptr as usize, layout);
            reuse.keep(block)
        };
        for b in spare.into_iter().flatten() {
            // SAFETY: `b` is the block's real size and alignment, as it was allocated.
            unsafe {
                HugePageAlloc.dealloc(
                    b.addr as *mut u8,
                    Layout::from_size_align_unchecked(b.size, b.align),
                )
            };
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if layout.size() < HUGE_MIN_BYTES && new_size < HUGE_MIN_BYTES {
            // SAFETY: forwarded with the caller's guarantees.
            return unsafe { HugePageAlloc.realloc(ptr, layout, new_size) };
        }
        // SAFETY: the caller guarantees a valid layout for `new_size` with this alignment.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: as `GlobalAlloc::realloc`'s default: a new block, the common prefix copied,
        // the old block freed with its own layout.
        unsafe {
            let new = self.alloc(new_layout);
            if !new.is_null() {
                std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
            new
        }
    }
}

/// Keeps large freed blocks in the heap. Large tensors are allocated, freed and allocated again
/// (every case, every `bench` iteration); glibc serves allocations over 32 MiB with fresh `mmap`s,
/// so each would pay a page fault and a kernel zeroing per page. Keeping them in the heap and
/// never trimming it lets freed pages be reused warm, as runtimes' arena allocators do.
///
/// Call it first thing in `main`, before any other thread exists.
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only adjusts allocator parameters; the caller runs it before other threads.
    unsafe {
        libc::mallopt(libc::M_MMAP_MAX, 0);
        libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_round_trip_through_the_allocator_with_their_contents() {
        let layout = Layout::from_size_align(HUGE_MIN_BYTES + 12345, 64).unwrap();
        // SAFETY: a non-zero layout; the block is written within its size and freed once.
        unsafe {
            let p = HugePageAlloc.alloc(layout);
            assert!(!p.is_null());
            p.write_bytes(7, layout.size());
            let q = HugePageAlloc.realloc(p, layout, layout.size() * 2);
            assert!(!q.is_null());
            assert_eq!(*q.add(layout.size() - 1), 7);
            HugePageAlloc.dealloc(q, Layout::from_size_align(layout.size() * 2, 64).unwrap());
            let z = HugePageAlloc.alloc_zeroed(layout);
            assert!(std::slice::from_raw_parts(z, layout.size())
                .iter()
                .all(|&b| b == 0));
            HugePageAlloc.dealloc(z, layout);
        }
    }

    #[test]
    fn freed_large_blocks_are_lent_again_to_requests_of_about_their_size() {
        let big = Layout::from_size_align(HUGE_MIN_BYTES * 2, 64).unwrap();
        // SAFETY: non-zero layouts; every block is written within its size and freed once with
        // the layout it was asked with.
        unsafe {
            let p = ReuseLargeAlloc.alloc(big);
            assert!(!p.is_null());
            p.write_bytes(9, big.size());
            ReuseLargeAlloc.dealloc(p, big);
            // A little smaller: the same block, warm (other tests may race for it: then any).
            let smaller = Layout::from_size_align(big.size() - 4096, 64).unwrap();
            let q = ReuseLargeAlloc.alloc_zeroed(smaller);
            assert!(!q.is_null());
            assert!(std::slice::from_raw_parts(q, smaller.size())
                .iter()
                .all(|&b| b == 0));
            // Grown past the block: moved, contents kept.
            q.write_bytes(3, smaller.size());
            let r = ReuseLargeAlloc.realloc(q, smaller, big.size() * 2);
            assert!(!r.is_null());
            assert_eq!(*r.add(smaller.size() - 1), 3);
            ReuseLargeAlloc.dealloc(r, Layout::from_size_align(big.size() * 2, 64).unwrap());
        }
    }

    #[test]
    fn the_cache_lends_a_block_once_and_only_to_fitting_requests() {
        let mut r = Reuse {
            kept: [None; REUSE_BLOCKS],
            lent: [None; LENT_BLOCKS],
        };
        let block = Block {
            addr: 1 << 30,
            size: 100 << 20,
            align: 64,
        };
        assert_eq!(r.keep(block), [None; REUSE_BLOCKS + 1]);
        let l = |size| Layout::from_size_align(size, 64).unwrap();
        // Too large, too small (more than a quarter to spare), or another alignment: no.
        assert_eq!(r.take(l(101 << 20)), None);
        assert_eq!(r.take(l(79 << 20)), None);
        assert_eq!(
            r.take(Layout::from_size_align(90 << 20, 128).unwrap()),
            None
        );
        // Fits: lent once, and remembered with its real size.
        assert_eq!(r.take(l(90 << 20)), Some(block));
        assert_eq!(r.take(l(90 << 20)), None);
        assert_eq!(r.real(block.addr, l(90 << 20)), block);
        // Not more than REUSE_BYTES in all.
        let huge = Block {
            addr: 1 << 40,
            size: REUSE_BYTES + 1,
            align: 64,
        };
        assert_eq!(r.keep(huge)[0], Some(huge));
        // Past REUSE_BLOCKS blocks, the oldest is given up first.
        let mb = |i: usize| Block {
            addr: (i + 1) << 32,
            size: 8 << 20,
            align: 64,
        };
        for i in 0..REUSE_BLOCKS {
            assert_eq!(r.keep(mb(i)), [None; REUSE_BLOCKS + 1]);
        }
        let spare = r.keep(mb(REUSE_BLOCKS));
        assert_eq!(spare[0], Some(mb(0)));
        assert!(spare[1..].iter().all(Option::is_none));
        // A block as large as the limit evicts all the others.
        let limit = Block {
            addr: 1 << 45,
            size: REUSE_BYTES,
            align: 64,
        };
        let spare = r.keep(limit);
        assert_eq!(spare.iter().flatten().count(), REUSE_BLOCKS);
        assert_eq!(r.take(l(REUSE_BYTES)), Some(limit));
    }

    #[test]
    fn only_whole_aligned_extents_inside_large_blocks_are_advised() {
        const M: usize = 1 << 20;
        assert_eq!(huge_extents(0, 64 * M), None);
        assert_eq!(huge_extents(2 * M, 4 * M - 1), None, "small");
        assert_eq!(huge_extents(2 * M, 4 * M), Some((2 * M, 4 * M)));
        assert_eq!(huge_extents(2 * M + 16, 4 * M), Some((4 * M, 2 * M)));
        assert_eq!(huge_extents(3 * M, 5 * M), Some((4 * M, 4 * M)));
        assert_eq!(huge_extents(M + 1, 4 * M), Some((2 * M, 2 * M)));
        // At the top of the address space: no overflow, and no extent past the end.
        assert_eq!(
            huge_extents(usize::MAX - 5 * M, 4 * M),
            Some((usize::MAX - 4 * M + 1, 2 * M))
        );
        assert_eq!(
            huge_extents(usize::MAX - 8 * M, 8 * M),
            Some((usize::MAX - 8 * M + 1, 6 * M))
        );
        assert_eq!(huge_extents(usize::MAX - M, 4 * M), None, "wraps around");
    }
}
