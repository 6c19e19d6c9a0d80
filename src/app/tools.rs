//! The subcommands around the checker: `adapters` (the bundled runtime adapters as files),
//! `completions` and `man` (generated from the clap definition).

use crate::cli::{AdaptersArgs, Cli, CompletionsArgs, ManArgs};
use crate::config::UsageError;
use crate::exit;
use anyhow::{Context, Result};
use clap::CommandFactory;
use onnx_idx_check::report::write_stdout;
use onnx_idx_check::runtime::{adapter_files, ADAPTERS};
use std::path::Path;

/// The binary's name, as completions and manual pages call it.
const BIN: &str = "onnx-idx-check";

/// `adapters`: lists the bundled adapters, or writes them into `--write DIR`.
pub(super) fn adapters(args: AdaptersArgs) -> Result<u8> {
    match args.write {
        None => write_stdout(&adapter_list())?,
        Some(dir) => {
            let written = write_new_files(&dir)?;
            eprintln!(
                "{} of {} files written to {} (the others were there, identical)",
                written,
                adapter_files().count(),
                dir.display()
            );
        }
    }
    Ok(exit::OK)
}

/// One line per adapter (its name, aliases, file and package), then the common module.
fn adapter_list() -> String {
    let mut out = String::new();
    for a in ADAPTERS {
        let aliases = if a.aliases.is_empty() {
            String::new()
        } else {
            format!(" (also {})", a.aliases.join(", "))
        };
        out.push_str(&format!(
            "{:<16} {:<26} needs: {}{aliases}\n",
            a.name,
            a.file,
            a.interpreter.install(a.package)
        ));
    }
    if let Some((worker, _)) = adapter_files().next() {
        out.push_str(&format!(
            "{:<16} {worker:<26} the protocol's loop, imported by every adapter\n",
            "(common)"
        ));
    }
    out
}

/// Writes the adapter files missing from `dir`, after checking that every file already there is
/// a regular file with the same bytes (else nothing is written); how many it wrote.
fn write_new_files(dir: &Path) -> Result<usize> {
    let mut missing = Vec::new();
    for (name, source) in adapter_files() {
        let path = dir.join(name);
        match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => missing.push((path, source)),
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
            Ok(meta) => {
                let same = meta.is_file()
                    && std::fs::read(&path)
                        .with_context(|| format!("reading {}", path.display()))?
                        == source.as_bytes();
                if !same {
                    return Err(UsageError(format!(
                        "--write {}: {name} is there and differs from this binary's adapter; \
                         nothing was written (remove it, or write into another directory)",
                        dir.display()
                    ))
                    .into());
                }
            }
        }
    }
    std::fs::create_dir_all(dir).with_context(|| format!("making {}", dir.display()))?;
    for (path, source) in &missing {
        // A new file only: never through a link or over a file that appeared meanwhile.
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .and_then(|mut f| std::io::Write::write_all(&mut f, source.as_bytes()))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(missing.len())
}

/// `completions SHELL`: the completion script on standard output.
pub(super) fn completions(args: CompletionsArgs) -> Result<u8> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), BIN, &mut script);
    write_stdout(&String::from_utf8_lossy(&script))?;
    Ok(exit::OK)
}

/// `man`: the main page on standard output, or every page into `--out DIR`.
pub(super) fn man(args: ManArgs) -> Result<u8> {
    let mut cmd = Cli::command().name(BIN);
    // Built, as `generate_to` builds it: the `help` subcommand is listed then.
    cmd.build();
    match args.out {
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(cmd)
                .render(&mut page)
                .context("rendering the manual page")?;
            write_stdout(&String::from_utf8_lossy(&page))?;
        }
        Some(dir) => {
            std::fs::create_dir_all(&dir).with_context(|| format!("making {}", dir.display()))?;
            clap_mangen::generate_to(cmd, &dir)
                .with_context(|| format!("writing the manual pages into {}", dir.display()))?;
        }
    }
    Ok(exit::OK)
}
