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
