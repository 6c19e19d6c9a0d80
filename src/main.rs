//! The `onnx-idx-check` binary: parse, run, map the outcome to an exit status.

use clap::Parser;
use onnx_idx_check::{app, cli::Cli, config::UsageError, exit};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match app::run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            // Usage errors and anything else that stops the run before verdicts (an unwritable
            // --output, say) both exit 2; 1 is reserved for cases that failed or errored.
            let _usage = e.chain().any(|c| c.is::<UsageError>());
            ExitCode::from(exit::USAGE)
        }
    }
}
