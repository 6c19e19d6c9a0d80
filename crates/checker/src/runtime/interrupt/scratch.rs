//! The runtimes' scratch directories, removed by the interrupt handler ([`super`])
//! (`generate` registers its partial suite here too).
//!
//! A runtime's scratch directory (its adapters and each data set's inputs, as large as the case)
//! is a `TempDir`, removed when the runtime is dropped. A Ctrl-C or SIGTERM ends the tool without
//! dropping anything, so the handler removes the directories registered here itself, after it
//! has killed the workers that write into them.
//!
//! The handler may only do what is async-signal-safe: it reads a fixed table (a path is written
//! before its slot is marked ready, and a slot being written is skipped) and removes each tree
//! with `open`, `getdents64`, `unlinkat` and `close`, without allocating and without following
//! symbolic links.

use std::cell::UnsafeCell;
use std::path::Path;
use std::sync::atomic::{AtomicU8, Ordering};

/// Room for this many runtimes at once (a matrix of runtimes has one each); a directory beyond it
/// is still removed when its runtime is dropped, just not on an interrupt.
const SLOTS: usize = 16;

/// The longest path a slot holds, its terminating NUL included (Linux's `PATH_MAX`).
const PATH_BYTES: usize = 4096;

/// A slot's states. A slot the handler is removing stays REMOVING: the process is about to end,
/// and a registration must not rewrite a path the handler is reading.
const FREE: u8 = 0;
const WRITING: u8 = 1;
const READY: u8 = 2;
const REMOVING: u8 = 3;

struct Slot {
    state: AtomicU8,
    path: UnsafeCell<[u8; PATH_BYTES]>,
}

// SAFETY: `path` is written only by the thread that moved `state` from FREE to WRITING, and read
// only by the handler that moved it from READY to REMOVING (READY is set with Release after the
// write, taken with Acquire); a REMOVING slot never becomes FREE again, so no read overlaps a
// write.
unsafe impl Sync for Slot {}

static TABLE: [Slot; SLOTS] = [const {
    Slot {
        state: AtomicU8::new(FREE),
        path: UnsafeCell::new([0; PATH_BYTES]),
    }
}; SLOTS];

/// A directory registered for removal on an interrupt; dropping it forgets the directory (drop
/// it after the directory itself is gone).
#[derive(Debug)]
pub struct Registered(Option<usize>);

impl Drop for Registered {
    fn drop(&mut self) {
        if let Some(i) = self.0 {
            // Left as it is when the handler has taken it (the process is ending).
            let _ =
                TABLE[i]
                    .state
                    .compare_exchange(READY, FREE, Ordering::Release, Ordering::Relaxed);
        }
    }
}

/// Registers `dir` for removal if the tool is interrupted, and installs the handler. A path too
/// long for a slot, holding a NUL, or arriving when every slot is taken is not registered.
#[cfg(unix)]
pub fn register(dir: &Path) -> Registered {
    use std::os::unix::ffi::OsStrExt;
    let bytes = dir.as_os_str().as_bytes();
    if bytes.len() >= PATH_BYTES || bytes.contains(&0) {
        return Registered(None);
    }
    super::install();
    for (i, slot) in TABLE.iter().enumerate() {
        if slot
            .state
            .compare_exchange(FREE, WRITING, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
        {
            // SAFETY: this thread moved the slot to WRITING, so nothing else reads or writes
            // `path` until the store below (see `Slot`).
            let path = unsafe { &mut *slot.path.get() };
            path[..bytes.len()].copy_from_slice(bytes);
            path[bytes.len()] = 0;
            slot.state.store(READY, Ordering::Release);
            return Registered(Some(i));
        }
    }
    Registered(None)
}

/// Elsewhere than on Unix nothing is registered (there is no handler).
#[cfg(not(unix))]
pub(crate) fn register(_dir: &Path) -> Registered {
    Registered(None)
}

/// Removes every registered directory, as far as it can. Called from the signal handler: only
/// async-signal-safe calls below.
pub(super) fn remove_all() {
    (0..SLOTS).for_each(remove_slot);
}

/// Removes the directory of slot `i`, when one is registered there.
fn remove_slot(i: usize) {
    let slot = &TABLE[i];
    if slot
        .state
        .compare_exchange(READY, REMOVING, Ordering::Acquire, Ordering::Relaxed)
        .is_ok()
    {
        // SAFETY: the slot was READY, so its path is written and NUL-terminated, and as
        // REMOVING nothing rewrites it.
        unsafe { remove_tree(slot.path.get().cast::<libc::c_char>()) };
    }
}

/// How deep below a scratch directory the removal goes (its files are two levels down:
/// `jobs/N/input_0.npy`); deeper trees are left, never followed further.
const DEPTH: u32 = 8;

/// Removes the tree at `path`, not following symbolic links.
///
/// # Safety
/// `path` must point to a NUL-terminated string.
#[cfg(target_os = "linux")]
unsafe fn remove_tree(path: *const libc::c_char) {
    // SAFETY: `path` is NUL-terminated (the caller's promise); the descriptor is closed below.
    unsafe {
        let fd = libc::open(
            path,
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return;
        }
        empty(fd, 0);
        libc::close(fd);
        libc::rmdir(path);
    }
}

/// Elsewhere than Linux the directory is left (there is no `getdents64`).
#[cfg(not(target_os = "linux"))]
unsafe fn remove_tree(_path: *const libc::c_char) {}

/// Removes what the open directory `dir` holds.
///
/// # Safety
/// `dir` must be an open directory descriptor.
#[cfg(target_os = "linux")]
unsafe fn empty(dir: libc::c_int, depth: u32) {
    // Entries are 8-byte aligned records: u64 inode, i64 offset, u16 length, u8 type, then the
    // NUL-terminated name.
    let mut buf = [0u64; 512];
    let bytes = std::mem::size_of_val(&buf);
    // Removing entries while reading the directory may make the reads skip some: read it again
    // from the start until a pass removes nothing (a few passes at most).
    for _ in 0..8 {
        let mut removed = false;
        loop {
            // SAFETY: the buffer holds `bytes` writable bytes; getdents64 writes whole records.
            let n = unsafe { libc::syscall(libc::SYS_getdents64, dir, buf.as_mut_ptr(), bytes) };
            if n <= 0 {
                break;
            }
            let base = buf.as_ptr().cast::<u8>();
            let mut at = 0usize;
            while at + 19 < n as usize {
                // SAFETY: a record starts at `at` < n, within what the kernel wrote; its length
                // field is at offset 16 and its name at 19, NUL-terminated within the record.
                unsafe {
                    let rec = base.add(at);
                    let len = usize::from(rec.add(16).cast::<u16>().read_unaligned());
                    let name = rec.add(19).cast::<libc::c_char>();
                    if len == 0 {
                        break;
                    }
                    at += len;
                    if is_dot(name) {
                        continue;
                    }
                    if libc::unlinkat(dir, name, 0) == 0 {
                        removed = true;
                        continue;
                    }
                    // Not a file: a directory, emptied first.
                    if depth < DEPTH {
                        let sub = libc::openat(
                            dir,
                            name,
                            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                        );
                        if sub >= 0 {
                            empty(sub, depth + 1);
                            libc::close(sub);
                        }
                    }
                    if libc::unlinkat(dir, name, libc::AT_REMOVEDIR) == 0 {
                        removed = true;
                    }
                }
            }
        }
        if !removed {
            return;
        }
        // SAFETY: rewinding a directory descriptor has no other effect.
        unsafe { libc::lseek(dir, 0, libc::SEEK_SET) };
    }
}

/// Whether the NUL-terminated `name` is `.` or `..`.
///
/// # Safety
/// `name` must point to a NUL-terminated string.
#[cfg(target_os = "linux")]
unsafe fn is_dot(name: *const libc::c_char) -> bool {
    // SAFETY: reading up to the NUL, which comes by the third byte for both names.
    unsafe {
        let b = |i: usize| *name.add(i) as u8;
        b(0) == b'.' && (b(1) == 0 || (b(1) == b'.' && b(2) == 0))
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_registered_tree_is_removed_without_following_its_links() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("keep"), b"not ours").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("scratch");
        // Two levels of directories, files, a link to a directory outside and an empty dir.
        std::fs::create_dir_all(root.join("jobs/1")).unwrap();
        std::fs::create_dir_all(root.join("adapters")).unwrap();
        std::fs::create_dir_all(root.join("jobs/2")).unwrap();
        for i in 0..300 {
            std::fs::write(root.join(format!("jobs/1/input_{i}.npy")), [0u8; 10]).unwrap();
        }
        std::fs::write(root.join("adapters/a.py"), b"print()").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("jobs/outside")).unwrap();
        // Only this slot is removed here: other tests' runtimes have theirs registered too.
        let registered = register(&root);
        let i = registered.0.expect("a free slot");
        remove_slot(i);
        assert!(!root.exists(), "the tree is left: {root:?}");
        assert!(outside.path().join("keep").exists(), "followed a link");
        // A slot the handler took is never handed out again, even once its runtime is gone.
        assert_eq!(TABLE[i].state.load(Ordering::SeqCst), REMOVING);
        drop(registered);
        assert_eq!(TABLE[i].state.load(Ordering::SeqCst), REMOVING);
        // A runtime that goes first frees its slot.
        let other = dir.path().join("other");
        std::fs::create_dir(&other).unwrap();
        let registered = register(&other);
        let j = registered.0.expect("a free slot");
        drop(registered);
        assert_eq!(TABLE[j].state.load(Ordering::SeqCst), FREE);
    }

    #[test]
    fn paths_that_do_not_fit_a_slot_are_not_registered() {
        let long = std::path::PathBuf::from("/".repeat(PATH_BYTES));
        assert!(register(&long).0.is_none());
    }
}
