//! Reporting: turns verdicts into the human, JSON and JUnit formats. The runner never formats;
//! each reporter only reads [`CaseResult`](crate::verdict::CaseResult)s and the
//! [`Summary`](crate::verdict::Summary).

pub mod human;
pub mod json;
pub mod junit;

use std::time::Duration;

/// The tool's name and version, as reports state them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolInfo {
    /// `onnx-idx-check`.
    pub name: &'static str,
    /// The crate version.
    pub version: &'static str,
}

/// This build's [`ToolInfo`].
pub const TOOL: ToolInfo = ToolInfo {
    name: env!("CARGO_PKG_NAME"),
    version: env!("CARGO_PKG_VERSION"),
};

/// Milliseconds, rounded down, for reports.
pub fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
