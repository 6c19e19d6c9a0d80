//! The progress bar of a long run on a terminal: indicatif's, behind the human reporter's
//! [`ProgressBar`] hook (the library itself shows no bar).

use onnx_idx_check::report::human::ProgressBar;
use std::io::IsTerminal;

/// Runs shorter than this finish before a bar would tell anything.
const MIN_CASES: usize = 50;

/// indicatif's bar on stderr, made when the run starts if stderr is a terminal and the run is long.
#[derive(Default)]
pub(crate) struct Bar {
    bar: Option<indicatif::ProgressBar>,
}

impl ProgressBar for Bar {
    fn start(&mut self, cases: usize) {
        if !std::io::stderr().is_terminal() || cases < MIN_CASES {
            return;
        }
        let bar = indicatif::ProgressBar::new(cases as u64);
        if let Ok(style) =
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} cases [{elapsed}]")
        {
            bar.set_style(style);
        }
        self.bar = Some(bar);
    }

    fn suspend(&self, print: &mut dyn FnMut()) {
        match &self.bar {
            Some(bar) => bar.suspend(print),
            None => print(),
        }
    }

    fn inc(&self) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
