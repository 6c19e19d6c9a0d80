//! The process groups of the live workers, which the interrupt handler ([`super`]) kills.
//!
//! Workers run in process groups of their own, so the terminal's Ctrl-C (SIGINT to the
//! foreground group) does not reach them; an idle worker exits when its input closes, but one
//! busy on a hung or memory-hungry case would run on after the tool is gone.

use std::sync::atomic::{AtomicI32, Ordering};

/// Room for the workers of `--jobs` up to this; a worker beyond it runs unregistered (it is still
/// ended by the tool in every other way).
const SLOTS: usize = 256;

/// The live groups; 0 is a free slot.
pub(super) static GROUPS: [AtomicI32; SLOTS] = [const { AtomicI32::new(0) }; SLOTS];

/// Records the process group `pgid` (a worker's own) as live; installs the handler once.
pub(crate) fn register(pgid: i32) {
    if pgid <= 0 {
        return;
    }
    super::install();
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
