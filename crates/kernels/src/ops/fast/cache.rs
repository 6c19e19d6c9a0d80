//! The sizes of this CPU's caches, read once at run time, and the working-set sizes the kernels
//! derive from them. The kernels were first tuned with constants measured on one CPU (an AMD EPYC
//! with 1 MiB of L2 per core and a 32 MiB L3); the same constants left other cache shapes (an
//! Intel Xeon with 2 MiB of L2 and a large shared L3) short, so each is now a fraction or a
//! multiple of the cache it was sized for, with the EPYC's values as the fallback.
//!
//! Only the speed depends on these sizes: they choose how work is cut into blocks, never what is
//! computed or in what order updates reach an element (D8), so results are the same on every CPU.

use std::path::Path;
use std::sync::OnceLock;

/// The caches the kernels size their blocks by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Caches {
    /// The private second-level cache of one core, in bytes (data or unified).
    pub(crate) l2: usize,
    /// The last-level cache as one core sees it (shared with the others), in bytes.
    pub(crate) l3: usize,
}

/// What is assumed where the sizes cannot be read: the CPU the constants were first measured on.
const FALLBACK: Caches = Caches {
    l2: 1 << 20,
    l3: 32 << 20,
};

impl Caches {
    /// This CPU's caches: Linux's `/sys/devices/system/cpu/cpu0/cache/` where it can be read
    /// (each size clamped to a plausible range), [`FALLBACK`] for what it does not say.
    pub(crate) fn get() -> Caches {
        static CACHES: OnceLock<Caches> = OnceLock::new();
        *CACHES.get_or_init(|| Caches::read(Path::new("/sys/devices/system/cpu/cpu0/cache")))
    }

    /// The caches described under `dir` (a `cache/` directory of sysfs: `index*/level`, `type`
    /// and `size`), with [`FALLBACK`] for a level it does not describe.
    fn read(dir: &Path) -> Caches {
        let mut found = Caches { l2: 0, l3: 0 };
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let field = |name: &str| {
                std::fs::read_to_string(entry.path().join(name))
                    .map(|s| s.trim().to_string())
                    .unwrap_or_default()
            };
            if field("type") == "Instruction" {
                continue;
            }
            let Some(size) = parse_size(&field("size")) else {
                continue;
            };
            match field("level").as_str() {
                "2" => found.l2 = found.l2.max(size),
                "3" => found.l3 = found.l3.max(size),
                _ => {}
            }
        }
        // A hypervisor may report nothing, or nonsense: keep sizes where the blocks stay sane.
        let l2 = match found.l2 {
            0 => FALLBACK.l2,
            s => s.clamp(256 << 10, 8 << 20),
        };
        let l3 = match found.l3 {
            0 => FALLBACK.l3.max(l2),
            s => s.clamp(l2, 1 << 30),
        };
        Caches { l2, l3 }
    }

    /// The data band one GatherElements task packs and works through: one and a half L2s. Wider
    /// bands take fewer, longer strips of each index and output row (a strip is a whole row
    /// apart from the next); the gathers from the packed table then partly hit L3, which the
    /// out-of-order core hides. On a large GatherElements along axis 0, bands of a quarter or
    /// half an L2 were far slower, two L2s no faster, three and four slower again.
    pub(crate) fn band_bytes(self) -> usize {
        self.l2 + self.l2 / 2
    }

    /// The tallest band that is packed rather than read in place: four L2s (a band of the
    /// narrowest width, 16 columns, on a huge axis).
    pub(crate) fn pack_max_bytes(self) -> usize {
        self.l2 * 4
    }

    /// Outputs at least this large are written with non-temporal stores: one and a half times
    /// the last-level cache. Outputs several times the L3 copy faster streamed; one just over the
    /// L3 copies slower, as ordinary stores into a buffer reused warm still partly hit L3.
    pub(crate) fn stream_min_bytes(self) -> usize {
        self.l3 + self.l3 / 2
    }

    /// The bytes of each of the split walk's two generations of buckets: four L2s. Its threads
    /// meet once per round, and a round's size is this scratch: on a quiet machine one, two and
    /// four L2s time the same, but with another process on the second core a thread waits for
    /// the other's time slice at every meeting, so fewer, larger rounds are much faster.
    pub(crate) fn split_scratch_bytes(self) -> usize {
        self.l2 * 4
    }

    /// Reduction outputs at least this large are shared by threads through the split walk:
    /// smaller ones stay in one core's L2 anyway.
    pub(crate) fn split_min_bytes(self) -> usize {
        self.l2
    }
}

/// A sysfs cache size: `48K`, `2048K`, `32M`, or bytes.
fn parse_size(s: &str) -> Option<usize> {
    let (digits, unit) = match s.as_bytes().last()? {
        b'K' | b'k' => (&s[..s.len() - 1], 1 << 10),
        b'M' | b'm' => (&s[..s.len() - 1], 1 << 20),
        b'G' | b'g' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    digits.parse::<usize>().ok()?.checked_mul(unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(dir: &Path, i: usize, level: &str, kind: &str, size: &str) {
        let d = dir.join(format!("index{i}"));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("level"), format!("{level}\n")).unwrap();
        std::fs::write(d.join("type"), format!("{kind}\n")).unwrap();
        std::fs::write(d.join("size"), format!("{size}\n")).unwrap();
    }

    #[test]
    fn sizes_are_read_from_sysfs_skipping_instruction_caches() {
        let dir = tempfile::tempdir().unwrap();
        // An Intel Xeon's shape: 2 MiB of L2 per core, a large shared L3.
        index(dir.path(), 0, "1", "Data", "48K");
        index(dir.path(), 1, "1", "Instruction", "32K");
        index(dir.path(), 2, "2", "Unified", "2048K");
        index(dir.path(), 3, "3", "Unified", "491520K");
        let c = Caches::read(dir.path());
        assert_eq!(
            c,
            Caches {
                l2: 2 << 20,
                l3: 480 << 20
            }
        );
        assert_eq!(c.band_bytes(), 3 << 20);
        assert_eq!(c.split_scratch_bytes(), 8 << 20);
        assert_eq!(c.stream_min_bytes(), 720 << 20);
    }

    #[test]
    fn what_sysfs_does_not_say_falls_back_and_nonsense_is_clamped() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Caches::read(&dir.path().join("missing")), FALLBACK);
        index(dir.path(), 0, "2", "Unified", "1K");
        index(dir.path(), 1, "3", "Unified", "garbage");
        let c = Caches::read(dir.path());
        assert_eq!(c.l2, 256 << 10);
        assert_eq!(c.l3, FALLBACK.l3);
        // An instruction-only level 2 is not a data cache.
        let dir = tempfile::tempdir().unwrap();
        index(dir.path(), 0, "2", "Instruction", "4096K");
        assert_eq!(Caches::read(dir.path()), FALLBACK);
    }

    #[test]
    fn sysfs_sizes_parse_with_their_units() {
        assert_eq!(parse_size("48K"), Some(48 << 10));
        assert_eq!(parse_size("32M"), Some(32 << 20));
        assert_eq!(parse_size("1G"), Some(1 << 30));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size(""), None);
        assert_eq!(parse_size("K"), None);
        assert_eq!(parse_size("99999999999999999999K"), None);
    }

    #[test]
    fn this_machines_sizes_are_within_the_clamps() {
        let c = Caches::get();
        assert!((256 << 10..=8 << 20).contains(&c.l2), "{c:?}");
        assert!(c.l3 >= c.l2 && c.l3 <= 1 << 30, "{c:?}");
    }
}
