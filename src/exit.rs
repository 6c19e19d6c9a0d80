//! Exit statuses, in one place (as grep and cargo-nextest document theirs).

/// Every case passed (or was skipped, without `--deny-skip`).
pub const OK: u8 = 0;
/// At least one case failed or errored (or, with `--deny-skip`, was skipped).
pub const CASES_FAILED: u8 = 1;
/// Usage error: bad arguments, an unreadable path, or no case found.
pub const USAGE: u8 = 2;
