//! The workers' descendants that left their process group (a `setsid()` daemon), which killing
//! the group cannot reach.
//!
//! On Linux the binary makes itself a child subreaper ([`enable`]): a descendant whose parent
//! dies is then re-parented to onnx-idx-check rather than to init. A live worker's descendants
//! are found through `/proc/PID/task/TID/children` and killed with it (`kill_descendants`);
//! the orphans of workers that already ended are onnx-idx-check's own children, and every such
//! child that is not a live worker is killed and reaped whenever no worker is live
//! (`ended`; at the latest when the run ends), and by the interrupt handler
//! (`on_signal`).
//!
//! Only the binary opts in: a program that uses the library may have children of its own, which
//! are none of this module's business.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Whether this process is a subreaper that ends its workers' orphans.
static ENABLED: AtomicBool = AtomicBool::new(false);

/// Held while a worker is spawned and counted, and while orphans are swept: a worker spawned
/// but not yet counted would look like an orphan.
static SPAWNING: Mutex<()> = Mutex::new(());

/// The workers started and not yet reaped.
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// Makes this process the reaper of its workers' orphans (Linux; elsewhere nothing happens and
/// the guarantee covers the workers' process groups only).
pub fn enable() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: prctl with PR_SET_CHILD_SUBREAPER only sets a flag of this process.
        let set = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
        if set == 0 {
            ENABLED.store(true, Ordering::SeqCst);
        }
    }
}

/// Runs `spawn`, which starts a worker, and counts the worker as live, with no sweep in between.
pub(crate) fn spawning<T>(spawn: impl FnOnce() -> std::io::Result<T>) -> std::io::Result<T> {
    let _held = SPAWNING.lock().unwrap_or_else(|e| e.into_inner());
    let started = spawn()?;
    LIVE.fetch_add(1, Ordering::SeqCst);
    Ok(started)
}

/// A worker counted by [`spawning`] was reaped: when it was the last, its orphans and those of
/// the workers before it are ended.
pub(crate) fn ended() {
    if LIVE.fetch_sub(1, Ordering::SeqCst) == 1 {
        sweep_if_idle();
    }
}

/// The processes whose parent is `pid`, through `/proc/PID/task/*/children` (empty where the
/// system does not say).
#[cfg(target_os = "linux")]
fn children_of(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|text| {
            text.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// Kills every descendant of the live, unreaped process `pid` (not `pid` itself), wherever its
/// process group or session: all of them are found first, then killed.
pub(crate) fn kill_descendants(pid: u32) {
    #[cfg(target_os = "linux")]
    if ENABLED.load(Ordering::SeqCst) {
        kill_tree_below(pid);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = pid;
}

#[cfg(target_os = "linux")]
fn kill_tree_below(pid: u32) {
    let mut found = Vec::new();
    let mut next = children_of(pid);
    // A bound on the walk, should the system report a cycle (pids reused mid-walk).
    while let Some(p) = next.pop() {
        if found.len() >= 4096 || found.contains(&p) {
            continue;
        }
        found.push(p);
        next.extend(children_of(p));
    }
    for p in found {
        if let Ok(p) = libc::pid_t::try_from(p) {
            // SAFETY: kill only sends a signal; `p` is a descendant of a worker, unreaped by
            // its parent an instant ago.
            unsafe {
                libc::kill(p, libc::SIGKILL);
            }
        }
    }
}

/// When no worker is live, kills and reaps this process's children that are not workers: the
/// re-parented orphans of workers that ended. Their own children become this process's in turn,
/// so it goes on until none is left (a few rounds at most).
fn sweep_if_idle() {
    #[cfg(target_os = "linux")]
    if ENABLED.load(Ordering::SeqCst) {
        sweep();
    }
}

/// Kills and reaps the children of this process while no worker is live (see [`sweep_if_idle`]).
#[cfg(target_os = "linux")]
fn sweep() {
    let _held = SPAWNING.lock().unwrap_or_else(|e| e.into_inner());
    if LIVE.load(Ordering::SeqCst) > 0 {
        return;
    }
    for _ in 0..16 {
        let orphans = children_of(std::process::id());
        if orphans.is_empty() {
            return;
        }
        for p in orphans {
            let Ok(p) = libc::pid_t::try_from(p) else {
                continue;
            };
            // SAFETY: `p` is this process's child and no worker (none is live, and none is
            // being spawned while SPAWNING is held), so an orphan; waitpid reaps only it.
            unsafe {
                libc::kill(p, libc::SIGKILL);
                libc::waitpid(p, std::ptr::null_mut(), 0);
            }
        }
    }
}

/// From the interrupt handler, after the workers' groups were killed: waits (briefly) for each
/// worker in `pids` to die, so that its orphans are re-parented here, then kills and reaps
/// every child of this process, for a few rounds. Async-signal-safe calls only.
#[cfg(target_os = "linux")]
pub(super) fn on_signal(pids: impl Iterator<Item = i32> + Clone) {
    if !ENABLED.load(Ordering::SeqCst) {
        return;
    }
    // Up to about a second for the killed workers to be gone (ECHILD: another thread reaped it).
    for _ in 0..100 {
        let mut waiting = false;
        for pid in pids.clone() {
            // SAFETY: waitpid with WNOHANG only reaps the worker `pid`, which was just killed.
            let r = unsafe { libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG) };
            waiting |= r == 0;
        }
        if !waiting {
            break;
        }
        nap();
    }
    for _ in 0..16 {
        // SAFETY: this process is ending; every child of its is a worker or a worker's orphan.
        if unsafe { kill_children() } == 0 {
            return;
        }
        nap();
        // SAFETY: reaps the children just killed, without blocking.
        while unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) } > 0 {}
    }
}

/// Sleeps 10 ms (`nanosleep` is async-signal-safe).
#[cfg(target_os = "linux")]
fn nap() {
    let ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 10_000_000,
    };
    // SAFETY: nanosleep reads `ts` only.
    unsafe {
        libc::nanosleep(&ts, std::ptr::null_mut());
    }
}

/// Sends SIGKILL to every child of this process (listed in `/proc/self/task/TID/children`) and
/// says how many it found. No allocation: fixed buffers, `open`, `getdents64`, `read`, `kill`.
///
/// # Safety
/// Every child of this process must be one to kill.
#[cfg(target_os = "linux")]
unsafe fn kill_children() -> usize {
    let mut found = 0;
    // SAFETY: the path is NUL-terminated; the descriptor is closed below.
    let dir = unsafe {
        libc::open(
            c"/proc/self/task".as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if dir < 0 {
        return 0;
    }
    let mut buf = [0u64; 256];
    let bytes = std::mem::size_of_val(&buf);
    loop {
        // SAFETY: the buffer holds `bytes` writable bytes; getdents64 writes whole records.
        let n = unsafe { libc::syscall(libc::SYS_getdents64, dir, buf.as_mut_ptr(), bytes) };
        if n <= 0 {
            break;
        }
        let base = buf.as_ptr().cast::<u8>();
        let mut at = 0usize;
        while at + 19 < n as usize {
            // SAFETY: a record starts at `at` < n, within what the kernel wrote: its length at
            // offset 16, its NUL-terminated name from offset 19 (u64 inode, i64 offset, u16
            // length, u8 type).
            let (len, name) = unsafe {
                let rec = base.add(at);
                (
                    usize::from(rec.add(16).cast::<u16>().read_unaligned()),
                    rec.add(19),
                )
            };
            if len == 0 {
                break;
            }
            at += len;
            // "/proc/self/task/" + the thread id + "/children" + NUL.
            let mut path = [0u8; 64];
            let mut k = 0;
            for &b in b"/proc/self/task/" {
                path[k] = b;
                k += 1;
            }
            let mut digits = 0;
            // SAFETY: the name is NUL-terminated within its record; a thread id has at most
            // ten digits, so at most eleven bytes are read.
            unsafe {
                while digits <= 10 && name.add(digits).read().is_ascii_digit() {
                    path[k] = name.add(digits).read();
                    k += 1;
                    digits += 1;
                }
                if digits == 0 || digits > 10 || name.add(digits).read() != 0 {
                    continue;
                }
            }
            for &b in b"/children\0" {
                path[k] = b;
                k += 1;
            }
            // SAFETY: `path` is NUL-terminated.
            found += unsafe { kill_listed(path.as_ptr().cast()) };
        }
    }
    // SAFETY: `dir` is open.
    unsafe { libc::close(dir) };
    found
}

/// Sends SIGKILL to every pid listed (space-separated) in the file at `path`; how many.
///
/// # Safety
/// `path` must be NUL-terminated, and every pid it lists one to kill.
#[cfg(target_os = "linux")]
unsafe fn kill_listed(path: *const libc::c_char) -> usize {
    // SAFETY: the caller's promise; the descriptor is closed below.
    let fd = unsafe { libc::open(path, libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return 0;
    }
    let mut text = [0u8; 4096];
    let mut len = 0;
    while len < text.len() {
        // SAFETY: reads into the unused end of `text`.
        let n = unsafe { libc::read(fd, text.as_mut_ptr().add(len).cast(), text.len() - len) };
        if n <= 0 {
            break;
        }
        len += n as usize;
    }
    // SAFETY: `fd` is open.
    unsafe { libc::close(fd) };
    let mut found = 0;
    let mut pid: libc::pid_t = 0;
    // A trailing blank ends the last number; a number cut off by a full buffer is dropped.
    for &b in &text[..len] {
        if b.is_ascii_digit() {
            pid = pid
                .saturating_mul(10)
                .saturating_add(libc::pid_t::from(b - b'0'));
        } else {
            if pid > 0 {
                // SAFETY: kill only sends a signal, to a child of this process.
                unsafe { libc::kill(pid, libc::SIGKILL) };
                found += 1;
            }
            pid = 0;
        }
    }
    found
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn the_children_of_a_process_are_listed() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        assert!(children_of(std::process::id()).contains(&child.id()));
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(!children_of(std::process::id()).contains(&child.id()));
    }
}
