//! The modes a hunt runs its cases in: a bundled runtime's ways of running that take other code
//! paths (onnxruntime with graph optimizations all or disabled, OpenVINO at f32 or at the
//! device's own precision), as its adapter declares them ([`onnx_idx_check::runtime::Adapter::modes`]).
//! Cases are spread over the modes by seed and case number, each mode's runtime started when its
//! first case comes; a finding's minimal case is judged in every mode.

use crate::minimize::command::Chosen;
use onnx_idx_check::runtime::{Runtime, RuntimeError, RuntimeSpec};
use std::sync::Arc;

/// The mode case number `index` of a round seeded `seed` runs in, of `n` modes: each mode for
/// an equal share of the cases, independently of the variant the case is shown in.
pub(crate) fn mode(seed: u64, index: u64, n: usize) -> usize {
    if n <= 1 {
        return 0;
    }
    // Its own constant: the variant of a case (`plan::variant`) must not decide its mode.
    (mix(seed ^ index.wrapping_mul(0x9FB2_1C65_1E98_DF25)) % n as u64) as usize
}

/// SplitMix64's output function (Steele, Lea and Flood 2014): a bijective mix of 64 bits.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// One mode of the hunted runtime.
#[derive(Debug)]
pub(crate) struct Mode {
    /// In words (`optimizations disabled`); empty for a runtime of one mode.
    pub name: String,
    /// Its id in `findings.json`: the options that make it (`optimization=disabled`).
    pub id: String,
    /// The adapter's options in this mode: the user's, then the mode's where the user set no
    /// such key.
    pub options: Vec<(String, String)>,
    /// The command-line flag that runs the runtime in this mode (`--runtime
    /// onnxruntime:optimization=disabled`), for rerun commands.
    pub flag: String,
    spec: RuntimeSpec,
    runtime: Option<Arc<Runtime>>,
}

/// The hunted runtime's modes, each runtime started on first use.
#[derive(Debug)]
pub(crate) struct Modes {
    modes: Vec<Mode>,
}

impl Modes {
    /// The modes of `chosen`'s runtime: those its adapter declares, less those the user's own
    /// options make the same as an earlier one (`--runtime onnxruntime:optimization=basic` runs
    /// in one mode); one mode, the runtime as started, for a command runtime or an adapter
    /// without modes. The first mode is the adapter without options: `chosen`'s runtime.
    pub(crate) fn of(chosen: &Chosen) -> Modes {
        let spec = chosen.runtime.spec();
        let declared = match spec {
            RuntimeSpec::Bundled { adapter, .. } => adapter.modes,
            RuntimeSpec::Command { .. } => &[],
        };
        let mut modes: Vec<Mode> = Vec::new();
        for (k, m) in declared.iter().enumerate() {
            let moded = spec.with_options(m.options);
            if modes.iter().any(|other| other.spec == moded) {
                continue;
            }
            let options = moded.options().to_vec();
            let added: Vec<String> = m
                .options
                .iter()
                .map(|(key, v)| {
                    let set = options
                        .iter()
                        .find(|(o, _)| o == key)
                        .map_or(*v, |(_, v)| v);
                    format!("{key}={set}")
                })
                .collect();
            modes.push(Mode {
                name: m.name.to_string(),
                id: added.join(","),
                flag: format!(
                    "--runtime {}",
                    onnx_idx_check::report::shell_quote(&spec_text(&moded))
                ),
                options,
                // The first mode is what the adapter does without its options: the runtime
                // already started.
                runtime: (k == 0).then(|| chosen.runtime.clone()),
                spec: moded,
            });
        }
        if modes.len() <= 1 {
            modes = vec![Mode {
                name: String::new(),
                id: String::new(),
                options: spec.options().to_vec(),
                flag: chosen.flag.clone(),
                spec: spec.clone(),
                runtime: Some(chosen.runtime.clone()),
            }];
        }
        Modes { modes }
    }

    /// How many modes there are.
    pub(crate) fn len(&self) -> usize {
        self.modes.len()
    }

    /// Mode `k`.
    pub(crate) fn get(&self, k: usize) -> &Mode {
        &self.modes[k.min(self.modes.len() - 1)]
    }

    /// Mode `k`'s runtime if it was started.
    pub(crate) fn started(&self, k: usize) -> Option<Arc<Runtime>> {
        self.get(k).runtime.clone()
    }

    /// Mode `k`'s runtime, started now if it was not yet (with the first mode's timeout).
    pub(crate) fn runtime(&mut self, k: usize) -> Result<Arc<Runtime>, RuntimeError> {
        let k = k.min(self.modes.len() - 1);
        if let Some(r) = &self.modes[k].runtime {
            return Ok(r.clone());
        }
        let timeout = self.modes[0]
            .runtime
            .as_ref()
            .map_or(std::time::Duration::from_secs(20), |r| r.timeout());
        let started = Arc::new(Runtime::start(&self.modes[k].spec, timeout)?);
        self.modes[k].runtime = Some(started.clone());
        Ok(started)
    }

    /// Drops mode `k` (its runtime could not start): its cases run in the first mode.
    pub(crate) fn drop_mode(&mut self, k: usize) {
        if k > 0 && k < self.modes.len() {
            self.modes.remove(k);
        }
    }
}

/// `NAME:KEY=VALUE,...` for a bundled spec: the name as the user wrote it, every option.
fn spec_text(spec: &RuntimeSpec) -> String {
    match spec {
        RuntimeSpec::Bundled { options, label, .. } => {
            let name = label.split(':').next().unwrap_or(label);
            let opts: Vec<String> = options.iter().map(|(k, v)| format!("{k}={v}")).collect();
            if opts.is_empty() {
                name.to_string()
            } else {
                format!("{name}:{}", opts.join(","))
            }
        }
        RuntimeSpec::Command { argv } => argv.join(" "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_are_spread_evenly_and_reproducibly_over_the_modes() {
        let n = 4000u64;
        for modes in [2usize, 3] {
            let mut counts = vec![0u64; modes];
            for i in 0..n {
                let m = mode(7, i, modes);
                assert_eq!(
                    m,
                    mode(7, i, modes),
                    "the same seed and case, the same mode"
                );
                counts[m] += 1;
            }
            // An equal share each: n / modes, within 5% of n (a binomial's spread is ~1%).
            for c in &counts {
                let share = n / modes as u64;
                assert!(c.abs_diff(share) < n / 20, "{modes} modes: {counts:?}");
            }
        }
        // One mode: every case in it.
        assert!((0..100).all(|i| mode(3, i, 1) == 0 && mode(3, i, 0) == 0));
        // Another seed, another spread.
        let a: Vec<usize> = (0..64).map(|i| mode(0, i, 2)).collect();
        let b: Vec<usize> = (0..64).map(|i| mode(1, i, 2)).collect();
        assert_ne!(a, b);
        // Independent of the variant: among the cases shown in the default form (half of
        // them), both modes still come about equally.
        let default: Vec<u64> = (0..n)
            .filter(|&i| {
                super::super::plan::variant(7, i) == crate::generate::variant::Variant::DEFAULT
            })
            .collect();
        let first = default.iter().filter(|&&i| mode(7, i, 2) == 0).count() as u64;
        let len = default.len() as u64;
        assert!(first.abs_diff(len / 2) < len / 10, "{first} of {len}");
    }

    #[test]
    fn a_mode_adds_only_the_options_the_user_did_not_set() {
        let spec = RuntimeSpec::bundled("ort:threads=2").unwrap();
        let moded = spec.with_options(&[("optimization", "disabled")]);
        assert_eq!(
            spec_text(&moded),
            "ort:threads=2,optimization=disabled",
            "{moded:?}"
        );
        let user = RuntimeSpec::bundled("ort:optimization=basic").unwrap();
        assert_eq!(user.with_options(&[("optimization", "disabled")]), user);
        assert_eq!(spec_text(&RuntimeSpec::bundled("tract").unwrap()), "tract");
    }
}
