//! The `onnx-idx-check` command line: the subcommands (`run`, `list`, `ops`, `coverage`, `show`,
//! `review`, `generate`, `hunt`, `minimize`, `bench`, ...) over the checker library
//! (`onnx_idx_check`), and the reports only the command line writes (JUnit XML, the runtime
//! matrix, the coverage table, the progress bar).
//!
//! The library API is [`main`] alone: the binary and the Python package's console script both
//! call it with their arguments.

#![warn(missing_docs)]
#![deny(unsafe_code)]

mod app;
mod bench;
mod catalog;
mod cli;
mod config;
mod coverage_report;
mod exit;
mod generate;
mod hunt;
mod junit;
mod matrix;
mod minimize;
mod owned;
mod progress;
mod review;
mod scoreboard;
mod show;

use clap::Parser;
use std::ffi::OsString;

/// Runs the command line with `argv` (`argv[0]` the program name) and returns its exit status:
/// 0 when every case passed, 1 when a case failed or errored, 2 for a usage error or anything
/// else that stopped the run before its verdicts (`docs/guide/run.md` lists them). `--help` and
/// `--version` print and return 0, as clap's do.
pub fn main<I, T>(argv: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args = match cli::Cli::try_parse_from(argv) {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return u8::try_from(e.exit_code()).unwrap_or(exit::USAGE);
        }
    };
    match app::run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", app::error_text(&e));
            // Usage errors and anything else that stops the run before verdicts (an unwritable
            // --output, say) both exit 2; 1 is reserved for cases that failed or errored.
            exit::USAGE
        }
    }
}
