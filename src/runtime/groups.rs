//! The process groups of the live workers, ended when the tool itself is interrupted.
//!
//! Workers run in process groups of their own, so the terminal's Ctrl-C (SIGINT to the
//! foreground group) does not reach them; an idle worker exits when its input closes, but one
//! busy on a hung or memory-hungry case would run on after the tool is gone. So the first worker
//! started installs a handler for SIGINT, SIGTERM and SIGHUP that kills every registered group
//! and removes the runtimes' scratch directories ([`super::scratch`]), then dies of the same
//! signal, as the tool would have without the handler.
//!
//! The handler may only do what is async-signal-safe: it reads fixed tables of atomics and calls
//! `killpg`, the file calls of [`super::scratch`], `signal` and `raise`.

use std::sync::atomic::{AtomicI32, Ordering};

/// Room for the workers of `--jobs` up to this; a worker beyond it runs unregistered (it is still
/// ended by the tool in every other way).
const SLOTS: usize = 256;

static GROUPS: [AtomicI32; SLOTS] = [const { AtomicI32::new(0) }; SLOTS];

/// Records the process group `pgid` (a worker's own) as live; installs the handler once.
pub(crate) fn register(pgid: i32) {
    if pgid <= 0 {
        return;
    }
    install();
    for slot in &GROUPS {
        if slot
            .compare_exchange(0, pgid, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            return;
        }
    }
}

/// Forgets the process group `pgid`: its worker is gone (a later process may get its number).
pub(crate) fn unregister(pgid: i32) {
    if pgid <= 0 {
        return;
    }
    for slot in &GROUPS {
        if slot
            .compare_exchange(pgid, 0, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            return;
        }
    }
}

/// The live groups, for tests.
#[cfg(test)]
fn live() -> Vec<i32> {
    GROUPS
        .iter()
        .map(|s| s.load(Ordering::SeqCst))
        .filter(|&g| g != 0)
        .collect()
}

#[cfg(unix)]
pub(super) fn install() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            // SAFETY: `on_signal` is an `extern "C" fn(c_int)` that only calls async-signal-safe
            // functions; installing it replaces the default action, which it restores before
            // re-raising the signal.
            unsafe {
                libc::signal(sig, on_signal as *const () as libc::sighandler_t);
            }
        }
    });
}

#[cfg(not(unix))]
pub(super) fn install() {}

#[cfg(unix)]
extern "C" fn on_signal(sig: libc::c_int) {
    for slot in &GROUPS {
        let pgid = slot.load(Ordering::SeqCst);
        if pgid > 0 {
            // SAFETY: killpg only sends a signal, to a group a live worker leads.
            unsafe {
                libc::killpg(pgid, libc::SIGKILL);
            }
        }
    }
    // What the workers forked into sessions of their own, which no group kill reaches.
    #[cfg(target_os = "linux")]
    super::reaper::on_signal(
        GROUPS
            .iter()
            .map(|s| s.load(Ordering::SeqCst))
            .filter(|&g| g > 0),
    );
    // The workers are gone, so nothing writes into their scratch directories any more.
    super::scratch::remove_all();
    // SAFETY: both are async-signal-safe; the default action ends the process with `sig`.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_recorded_until_forgotten() {
        // Numbers no process of this test has; other tests register real ones concurrently.
        register(i32::MAX - 7);
        register(i32::MAX - 8);
        assert!(live().contains(&(i32::MAX - 7)));
        unregister(i32::MAX - 7);
        assert!(!live().contains(&(i32::MAX - 7)));
        assert!(live().contains(&(i32::MAX - 8)));
        unregister(i32::MAX - 8);
        assert!(!live().contains(&(i32::MAX - 8)));
        register(0);
        register(-3);
        assert!(!live().iter().any(|&g| g <= 0));
    }
}
