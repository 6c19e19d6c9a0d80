//! Exit statuses, in one place (as grep and cargo-nextest document theirs).

/// Every case passed (or was skipped, without `--deny-skip`).
pub const OK: u8 = 0;
/// At least one case failed or errored (or, with `--deny-skip`, was skipped); for `show`, a file
/// of the case could not be read.
pub const CASES_FAILED: u8 = 1;
/// Usage error: bad arguments, an unreadable path, or no case found (for `show`, a PATH that is
/// no tensor file, model or case).
pub const USAGE: u8 = 2;
