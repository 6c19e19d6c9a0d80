//! What a runtime's disagreement with the reference means for the runtime's users, and the
//! behaviour that identifies it: its [`Class`] (crash, wrong output, ...), its diagnosis and its
//! symptom (where a wrong output differs and how, a crash's site, a refusal's message with its
//! numbers blanked). A hunt counts one finding per behaviour, and shrinking keeps the behaviour
//! fixed, so that a case cannot slip from one bug to another that shares a verdict.

use crate::verdict::{CaseResult, DataSetResult, Fault, OutputResult, Status};
use serde::{Deserialize, Serialize};

/// What a disagreement means for the runtime's users, most severe first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Class {
    /// The process died, hung past `--timeout` or grew memory without end, on any input.
    Crash,
    /// Valid input, a wrong value, shape or type.
    WrongOutput,
    /// The spec requires an error, and the runtime returned values that are not in its inputs or
    /// that change from run to run: it read memory it should not.
    Unsafe,
    /// Valid input, different outputs between runs or thread counts.
    Nondeterministic,
    /// Valid input refused, where the runtime runs other cases of that operator version and type.
    RefusesValid,
    /// The spec requires an error, and the runtime returned a plausible output.
    AcceptsInvalid,
}

impl Class {
    /// Every class, most severe first.
    pub(crate) const ALL: [Class; 6] = [
        Class::Crash,
        Class::WrongOutput,
        Class::Unsafe,
        Class::Nondeterministic,
        Class::RefusesValid,
        Class::AcceptsInvalid,
    ];

    /// Its name in files and machine-readable output (`wrong-output`).
    pub(crate) fn id(self) -> &'static str {
        match self {
            Class::Crash => "crash",
            Class::WrongOutput => "wrong-output",
            Class::Unsafe => "unsafe",
            Class::Nondeterministic => "nondeterministic",
            Class::RefusesValid => "refuses-valid",
            Class::AcceptsInvalid => "accepts-invalid",
        }
    }

    /// Its name as a heading (`Wrong output`).
    pub(crate) fn title(self) -> &'static str {
        match self {
            Class::Crash => "Crash",
            Class::WrongOutput => "Wrong output",
            Class::Unsafe => "Unsafe on invalid input",
            Class::Nondeterministic => "Nondeterministic",
            Class::RefusesValid => "Refuses valid input",
            Class::AcceptsInvalid => "Accepts invalid input",
        }
    }
}

/// The symptom of a crash that is a hang past `--timeout`.
pub(crate) const TIMED_OUT: &str = "timed out";

/// How a runtime disagrees with the reference: what identifies one bug.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Behaviour {
    /// What it means for the runtime's users. [`behaviour`] gives [`Class::AcceptsInvalid`] for
    /// every output where the spec requires an error; only running the case again tells
    /// [`Class::Unsafe`] from it.
    pub class: Class,
    /// The id of the first bug class that reproduces the wrong output, `none` for none.
    pub diagnosis: &'static str,
    /// What the disagreement looks like, with the case's sizes and values blanked: where and how
    /// a wrong output differs (`values: empty`), a crash's site, a refusal's message, the rule an
    /// accepted invalid input breaks.
    pub symptom: String,
}

impl Behaviour {
    /// Whether `other` is the same behaviour, an output on invalid input counting as one whether
    /// or not it was found unsafe.
    pub(crate) fn same_as(&self, other: &Behaviour) -> bool {
        let invalid = |c: Class| matches!(c, Class::Unsafe | Class::AcceptsInvalid);
        (self.class == other.class || (invalid(self.class) && invalid(other.class)))
            && self.diagnosis == other.diagnosis
            && self.symptom == other.symptom
    }
}

/// The first data set of `result` on which the runtime disagrees with the reference, and how;
/// `rule` is why the spec requires an error for the case's inputs (`None` when it defines outputs).
pub(crate) fn behaviour(result: &CaseResult, rule: Option<&str>) -> Option<(usize, Behaviour)> {
    result
        .data_sets
        .iter()
        .enumerate()
        .find_map(|(i, ds)| of_data_set(ds, rule).map(|b| (i, b)))
}

fn of_data_set(ds: &DataSetResult, rule: Option<&str>) -> Option<Behaviour> {
    let failed = ds
        .outputs
        .iter()
        .find(|o| o.status == Status::Failed && !o.diagnoses.is_empty())
        .or_else(|| ds.outputs.iter().find(|o| o.status == Status::Failed));
    let mut diagnosis = failed
        .and_then(|o| o.diagnosis())
        .map_or("none", |c| c.id());
    // A NaN lost in a reduction is reproduced by a bug class now and then (the update that
    // replaced it is what an ignored reduction writes too): the class says nothing there.
    if failed.is_some_and(nan_lost) {
        diagnosis = "none";
    }
    let (class, symptom) = match (ds.status, ds.fault) {
        (_, Some(Fault::Crashed)) => (Class::Crash, crash_site(ds.reason.as_deref())),
        (_, Some(Fault::TimedOut)) => (Class::Crash, TIMED_OUT.to_string()),
        (_, Some(Fault::Nondeterministic)) => (Class::Nondeterministic, String::new()),
        // Where the spec requires an error, a refusal is right.
        (_, Some(Fault::Refused)) if rule.is_some() => return None,
        (_, Some(Fault::Refused)) => (Class::RefusesValid, refusal(ds.reason.as_deref())),
        (_, Some(Fault::WroteNothing)) => (Class::WrongOutput, "an output missing".to_string()),
        (Status::Failed, None) => match rule {
            Some(rule) => (Class::AcceptsInvalid, blank(rule)),
            None => (Class::WrongOutput, failed.map_or_else(String::new, how)),
        },
        _ => return None,
    };
    Some(Behaviour {
        class,
        diagnosis,
        symptom,
    })
}

/// Where and how a wrong output differs: its dtype, its shape, or its values, described by what
/// most wrong elements hold (`values: empty`).
fn how(o: &OutputResult) -> String {
    if o.actual_dtype != o.dtype {
        return format!("dtype {} for {}", o.actual_dtype, o.dtype);
    }
    if o.expected_shape
        .as_deref()
        .is_some_and(|s| s != o.actual_shape)
    {
        let rank = o.expected_shape.as_ref().map_or(0, Vec::len);
        return if rank == o.actual_shape.len() {
            "shape".to_string()
        } else {
            format!("rank {} for {rank}", o.actual_shape.len())
        };
    }
    // The kind most of the shown wrong elements have: a candidate with fewer wrong elements
    // keeps it, where the set of kinds would change with every element dropped.
    let most = |kinds: &mut dyn Iterator<Item = &'static str>| {
        let mut counts = [0usize; 5];
        for k in kinds {
            counts[KINDS.iter().position(|&x| x == k).unwrap_or(4)] += 1;
        }
        let at = (0..KINDS.len())
            .max_by_key(|&k| (counts[k], usize::MAX - k))
            .unwrap_or(4);
        KINDS[at]
    };
    format!(
        "values: {}",
        most(&mut o.first_mismatches.iter().map(|m| value_kind(&m.actual)))
    )
}

/// Whether most of the shown wrong elements of `o` should be NaN.
fn nan_lost(o: &OutputResult) -> bool {
    let nan = o
        .first_mismatches
        .iter()
        .filter(|m| value_kind(&m.expected) == "nan")
        .count();
    nan * 2 > o.first_mismatches.len()
}

/// Whether a rendered element is zero (`0`, `-0.0`, `false`): what a runtime that fills the
/// positions it cannot address writes.
pub(crate) fn is_zero(rendered: &str) -> bool {
    value_kind(rendered) == "zero"
}

/// What a wrong element may hold, most specific first.
const KINDS: [&str; 5] = ["empty", "nan", "inf", "zero", "other"];

/// What a wrong element holds, in words that do not depend on the case.
fn value_kind(actual: &str) -> &'static str {
    let v = actual.trim().trim_matches('"');
    if v.is_empty() {
        "empty"
    } else if v.eq_ignore_ascii_case("nan") || v.eq_ignore_ascii_case("-nan") {
        "nan"
    } else if v.trim_start_matches('-').eq_ignore_ascii_case("inf") {
        "inf"
    } else if v == "false" || v.parse::<f64>().is_ok_and(|x| x == 0.0) {
        "zero"
    } else {
        "other"
    }
}

/// A crash's site: a Rust panic's `file:line:col`, a signal's name, else the first line of the
/// message with its numbers blanked.
fn crash_site(reason: Option<&str>) -> String {
    let reason = reason.unwrap_or_default();
    if let Some(at) = reason.split("panicked at ").nth(1) {
        let site: String = at.chars().take_while(|c| !c.is_whitespace()).collect();
        let site = site.trim_end_matches(':');
        // `src/x.rs:75:52`: the path's last parts and the line identify the site.
        let parts: Vec<&str> = site.splitn(2, ".rs:").collect();
        if parts.len() == 2 {
            let line: String = parts[1].chars().take_while(char::is_ascii_digit).collect();
            return format!("panic at {}.rs:{line}", tail(parts[0]));
        }
    }
    for sig in [
        "SIGSEGV", "SIGABRT", "SIGFPE", "SIGBUS", "SIGILL", "SIGKILL",
    ] {
        if reason.contains(sig) {
            return sig.to_string();
        }
    }
    blank(reason.lines().next().unwrap_or_default())
}

/// The last two parts of a path (`array/gather`).
fn tail(path: &str) -> String {
    let parts: Vec<&str> = path.rsplit('/').take(2).collect();
    parts.into_iter().rev().collect::<Vec<_>>().join("/")
}

/// A refusal's message (after `refused: `), first line, numbers blanked.
fn refusal(reason: Option<&str>) -> String {
    let reason = reason.unwrap_or_default();
    let message = reason.split_once("refused: ").map_or(reason, |(_, m)| m);
    blank(message.lines().next().unwrap_or_default())
}

/// The first line of `s`, cut at `n` characters (`...` marks a cut).
pub(crate) fn clip(s: &str, n: usize) -> String {
    let line = s.lines().next().unwrap_or_default();
    let mut out: String = line.chars().take(n).collect();
    if out.len() < s.len() {
        out.push_str("...");
    }
    out
}

/// `s` with every number, quoted name and path blanked, and cut at 160 characters: what stays
/// is the same for two cases that differ only in sizes, values or names.
pub(crate) fn blank(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '0'..='9' => {
                while chars
                    .peek()
                    .is_some_and(|d| d.is_ascii_alphanumeric() || *d == '.')
                {
                    chars.next();
                }
                if out.ends_with('-') {
                    out.pop();
                }
                out.push('#');
            }
            '\'' | '"' | '`' => {
                for d in chars.by_ref() {
                    if d == c {
                        break;
                    }
                }
                out.push_str("''");
            }
            '/' if out.is_empty() || out.ends_with(' ') => {
                while chars
                    .peek()
                    .is_some_and(|d| !d.is_whitespace() && !matches!(d, ':' | ',' | ')'))
                {
                    chars.next();
                }
                out.push_str("PATH");
            }
            _ => out.push(c),
        }
        if out.chars().count() >= 160 {
            break;
        }
    }
    collapse_lists(&out)
}

/// `s` with every bracketed list of blanked numbers (`[[#, #], [#, #]]`, of any length and depth)
/// written `[..]`: a message that prints a tensor is the same for every tensor.
fn collapse_lists(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let tail = &rest[open..];
        let mut depth = 0usize;
        let mut end = None;
        for (i, c) in tail.char_indices() {
            match c {
                '[' => depth += 1,
                ']' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(i);
                        break;
                    }
                }
                '#' | ',' | ' ' | '.' => {}
                _ => break,
            }
        }
        match end {
            Some(i) => {
                out.push_str("[..]");
                rest = &tail[i + 1..];
            }
            None => {
                out.push('[');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blanking_keeps_the_words_and_drops_sizes_values_names_and_paths() {
        assert_eq!(
            blank("ScatterND index -2 out of bounds for data shape [3, 2]"),
            "ScatterND index # out of bounds for data shape [..]"
        );
        // A tensor printed in the message is blanked whatever its shape.
        assert_eq!(
            blank("indices tensor [[1, 2], [3, 4], [5, 6]], shape=[3, 2], at [x]"),
            blank("indices tensor [[1, 2]], shape=[1, 2], at [x]")
        );
        assert!(blank("at [x]").ends_with("[x]"));
        assert_eq!(
            blank("node 'g0' at /tmp/x/model.onnx: axis 1.5e3 bad"),
            "node '' at PATH: axis # bad"
        );
        assert_eq!(
            blank("index 7 out of range"),
            blank("index 12 out of range")
        );
    }

    #[test]
    fn a_panic_s_site_names_the_crash_and_not_its_values() {
        let a = crash_site(Some(
            "worker exited (SIGABRT): thread 'main' panicked at core/src/ops/array/gather.rs:75:52:\nindex out of bounds: the len is 3 but the index is 5",
        ));
        assert_eq!(a, "panic at array/gather.rs:75");
        let b = crash_site(Some(
            "thread 'main' panicked at core/src/ops/array/gather.rs:75:52: the len is 9",
        ));
        assert_eq!(a, b);
        assert_eq!(crash_site(Some("killed by SIGFPE")), "SIGFPE");
    }

    #[test]
    fn wrong_elements_are_described_by_what_they_hold() {
        assert_eq!(value_kind("\"\""), "empty");
        assert_eq!(value_kind("0"), "zero");
        assert_eq!(value_kind("-0.0"), "zero");
        assert_eq!(value_kind("false"), "zero");
        assert_eq!(value_kind("NaN"), "nan");
        assert_eq!(value_kind("-inf"), "inf");
        assert_eq!(value_kind("3.5"), "other");
    }

    #[test]
    fn the_classes_are_ordered_by_severity() {
        let mut sorted = Class::ALL;
        sorted.sort();
        assert_eq!(sorted, Class::ALL);
        assert_eq!(sorted[0], Class::Crash);
    }
}
