//! What an interrupt of the tool must undo: the first worker started (or the first scratch
//! directory registered) installs a handler for SIGINT, SIGTERM and SIGHUP that kills every
//! registered worker's process group (`groups`), reaps what they forked into sessions of their
//! own, removes the registered scratch directories ([`scratch`]), then dies of the same signal, as
//! the tool would have without the handler.
//!
//! The handler may only do what is async-signal-safe: it reads fixed tables of atomics and calls
//! `killpg`, the file calls of [`scratch`], `signal` and `raise`.

pub(crate) mod groups;
pub mod scratch;

#[cfg(unix)]
use std::sync::atomic::Ordering;

#[cfg(unix)]
/// Installs the handler, once.
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
/// No handler where there are no signals.
pub(super) fn install() {}

#[cfg(unix)]
extern "C" fn on_signal(sig: libc::c_int) {
    for slot in &groups::GROUPS {
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
        groups::GROUPS
            .iter()
            .map(|s| s.load(Ordering::SeqCst))
            .filter(|&g| g > 0),
    );
    // The workers are gone, so nothing writes into their scratch directories any more.
    scratch::remove_all();
    // SAFETY: both are async-signal-safe; the default action ends the process with `sig`.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}
