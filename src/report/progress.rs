//! The progress bar of a long run on a terminal: indicatif's with the `cli` feature, nothing
//! without it (a library user's run shows no bar).

use std::io::IsTerminal;

/// A progress bar on stderr, or nothing.
pub(crate) struct Progress {
    #[cfg(feature = "cli")]
    bar: indicatif::ProgressBar,
}

impl Progress {
    /// No bar.
    pub(crate) fn hidden() -> Progress {
        Progress {
            #[cfg(feature = "cli")]
            bar: indicatif::ProgressBar::hidden(),
        }
    }

    /// A bar for `len` cases, only on a terminal and only for runs long enough to need one.
    pub(crate) fn for_cases(len: usize) -> Progress {
        if !std::io::stderr().is_terminal() || len < 50 {
            return Progress::hidden();
        }
        #[cfg(feature = "cli")]
        {
            let bar = indicatif::ProgressBar::new(len as u64);
            if let Ok(style) =
                indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} cases [{elapsed}]")
            {
                bar.set_style(style);
            }
            Progress { bar }
        }
        #[cfg(not(feature = "cli"))]
        Progress::hidden()
    }

    /// Runs `f` (which prints) with the bar out of the way.
    pub(crate) fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        #[cfg(feature = "cli")]
        return self.bar.suspend(f);
        #[cfg(not(feature = "cli"))]
        f()
    }

    /// One more case done.
    pub(crate) fn inc(&self) {
        #[cfg(feature = "cli")]
        self.bar.inc(1);
    }

    /// Removes the bar.
    pub(crate) fn finish(&self) {
        #[cfg(feature = "cli")]
        self.bar.finish_and_clear();
    }
}
