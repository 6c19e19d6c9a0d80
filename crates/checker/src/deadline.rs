//! Per-case time limits (`--timeout`). The runner gives the thread working on a case that
//! case's deadline; evaluation checks it before every node and the runner between data sets
//! and outputs, so a pathological case ends as errored while the run goes on. A single kernel
//! call is not interrupted: its work is bounded by `--max-tensor-bytes`.

use std::cell::Cell;
use std::time::{Duration, Instant};
use thiserror::Error;

thread_local! {
    /// The deadline of the case this thread works on, and the limit it came from.
    static CURRENT: Cell<Option<(Instant, Duration)>> = const { Cell::new(None) };
}

/// The case's time ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("timed out: still running after {} (--timeout)", seconds(*.0))]
pub struct TimedOut(pub Duration);

/// `1.5 s`, `60 s`.
fn seconds(d: Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

/// Runs `f` with a deadline `limit` from now on this thread (no deadline for `None`), restoring
/// the previous deadline afterwards, even on panic. Nested calls are fine: rayon may run another
/// case on this thread while the first waits.
pub fn with_limit<R>(limit: Option<Duration>, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<(Instant, Duration)>);
    impl Drop for Restore {
        fn drop(&mut self) {
            CURRENT.set(self.0);
        }
    }
    let deadline = limit.and_then(|l| Some((Instant::now().checked_add(l)?, l)));
    let _restore = Restore(CURRENT.replace(deadline));
    f()
}

/// Fails once this thread's deadline has passed.
pub fn check() -> Result<(), TimedOut> {
    match CURRENT.get() {
        Some((at, limit)) if Instant::now() >= at => Err(TimedOut(limit)),
        _ => Ok(()),
    }
}

/// Parses `--timeout`: seconds, fractions allowed; `0` means no limit. A positive value that
/// rounds to zero nanoseconds is refused: as a `Duration` it would read as "no limit".
pub fn parse_limit(text: &str) -> Result<Option<Duration>, String> {
    let secs: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a number of seconds"))?;
    if !secs.is_finite() || secs < 0.0 {
        return Err(format!("'{text}' is not a number of seconds"));
    }
    if secs == 0.0 {
        return Ok(None);
    }
    match Duration::try_from_secs_f64(secs) {
        Ok(d) if d.is_zero() => Err(format!(
            "'{text}' seconds is shorter than the clock's resolution (1 ns); 0 means no limit"
        )),
        Ok(d) => Ok(Some(d)),
        Err(_) => Err(format!("'{text}' seconds is too long")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_deadline_never_times_out() {
        assert_eq!(check(), Ok(()));
        with_limit(None, || assert_eq!(check(), Ok(())));
    }

    #[test]
    fn a_passed_deadline_times_out_and_is_restored_afterwards() {
        let limit = Duration::from_millis(1);
        with_limit(Some(limit), || {
            std::thread::sleep(Duration::from_millis(5));
            assert_eq!(check(), Err(TimedOut(limit)));
            with_limit(Some(Duration::from_secs(3600)), || {
                assert_eq!(check(), Ok(()))
            });
            assert_eq!(check(), Err(TimedOut(limit)));
        });
        assert_eq!(check(), Ok(()));
    }

    #[test]
    fn a_huge_limit_means_no_deadline() {
        with_limit(Some(Duration::MAX), || assert_eq!(check(), Ok(())));
    }

    #[test]
    fn the_message_names_the_limit_and_the_flag() {
        assert_eq!(
            TimedOut(Duration::from_millis(1500)).to_string(),
            "timed out: still running after 1.5 s (--timeout)"
        );
    }

    #[test]
    fn limits_parse_as_seconds_with_zero_for_none() {
        assert_eq!(parse_limit("60"), Ok(Some(Duration::from_secs(60))));
        assert_eq!(parse_limit("0.25"), Ok(Some(Duration::from_millis(250))));
        assert_eq!(parse_limit("0"), Ok(None));
        for bad in ["-1", "abc", "inf", "NaN", ""] {
            assert!(parse_limit(bad).is_err(), "{bad}");
        }
        assert!(parse_limit("1e300").is_err());
    }

    #[test]
    fn a_positive_limit_under_a_nanosecond_is_refused_not_unlimited() {
        let e = parse_limit("0.0000000001").unwrap_err();
        assert!(e.contains("shorter than the clock's resolution"), "{e}");
        assert!(parse_limit("1e-300").is_err());
        assert_eq!(
            parse_limit("0.000000001"),
            Ok(Some(Duration::from_nanos(1)))
        );
        assert_eq!(parse_limit("0.0"), Ok(None));
    }
}
