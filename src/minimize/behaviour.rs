//! What a runtime's disagreement with the reference means for the runtime's users, and the
//! behaviour that identifies it: its [`Class`] (crash, wrong output, ...), its diagnosis and its
//! symptom (where a wrong output differs and how, a crash's site, a refusal's message with its
//! numbers blanked). A hunt counts one finding per behaviour, and shrinking keeps the behaviour
//! fixed, so that a case cannot slip from one bug to another that shares a verdict.

use onnx_idx_check::tensor::{DType, Tensor};
use onnx_idx_check::verdict::{CaseResult, DataSetResult, Fault, OutputResult, Status};
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
    /// Whether the behaviour shows one cause whatever operator shows it, so that a finding is
    /// keyed without its operator: a crash at one panic site (a shared library's, such as
    /// ndarray's index check, or one file two operators share), or a wrong output that is a
    /// precision loss of a whole data type (double computed as float, subnormals flushed to
    /// zero), a refusal by a compiler the runtime runs as a program of its own (tinygrad's
    /// clang failing on the C it wrote for bfloat16, whatever operator it came from), or a
    /// refusal by one of the runtime's internal checks, which is one site in its code (TVM's
    /// `Check failed: pb->value != 0 : Divide by zero` on zero-size data). A signal,
    /// a hang, another refusal or a wrong output of another kind is the operator's.
    pub(crate) fn any_operator(&self) -> bool {
        match self.class {
            Class::Crash => self.symptom.starts_with(PANIC_AT),
            Class::WrongOutput => self.symptom.starts_with(PRECISION),
            Class::RefusesValid => {
                self.symptom.starts_with(SUBPROCESS_FAILED)
                    || self.symptom.starts_with(CHECK_FAILED)
            }
            _ => false,
        }
    }

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
/// `data` gives the data input of the case's first data set, asked for only when a wrong output
/// there may be that input returned unchanged (`None`: not known, as in a graph of several
/// nodes).
pub(crate) fn behaviour(
    result: &CaseResult,
    rule: Option<&str>,
    data: impl FnOnce() -> Option<Tensor>,
) -> Option<(usize, Behaviour)> {
    let (i, mut b, relatable) = result
        .data_sets
        .iter()
        .enumerate()
        .find_map(|(i, ds)| of_data_set(ds, rule).map(|(b, o)| (i, b, o)))?;
    // How the wrong elements relate to the inputs says more than what they hold: the data
    // returned unchanged holds zeros for one data type and other values for the next.
    if let (0, Some(o)) = (i, relatable) {
        if data().is_some_and(|d| unchanged(o, &d)) {
            b.symptom = DATA_UNCHANGED.to_string();
        }
    }
    Some((i, b))
}

/// The symptom of a wrong output whose wrong elements hold the data input's values at their
/// positions: the data returned unchanged (its updates dropped, the operator skipped).
pub(crate) const DATA_UNCHANGED: &str = "values: the data input unchanged";

/// What a wrong output's symptom says, in words for a title (`rounds double values to float`),
/// for the symptoms that say more than what the wrong elements hold.
pub(crate) fn symptom_words(symptom: &str) -> Option<&'static str> {
    Some(match symptom.strip_prefix(PRECISION) {
        Some("double rounded to float") => "rounds double values to float precision",
        Some("int64 cut to int32") => "cuts int64 values to 32 bits",
        Some("uint64 cut to uint32") => "cuts uint64 values to 32 bits",
        Some("subnormals flushed to zero") => "flushes subnormal values to zero",
        Some(_) => "loses the precision of the data type",
        None if symptom == DATA_UNCHANGED => "returns its data input unchanged",
        None => return None,
    })
}

/// The start of a crash's symptom at a Rust panic's site.
const PANIC_AT: &str = "panic at ";

/// How a Python runtime's message starts when a program it ran failed (`subprocess`'s error):
/// its code generator's compiler, not the operator it was compiling.
const SUBPROCESS_FAILED: &str = "CalledProcessError: Command ";

/// How TVM's messages start when one of its internal checks (`ICHECK`) fails: the check's
/// expression names its site.
const CHECK_FAILED: &str = "InternalError: Check failed: ";

/// The start of a wrong output's symptom that is the precision loss of a whole data type.
const PRECISION: &str = "precision: ";

/// The behaviour on data set `ds`, and the failed output when its symptom is only what most
/// wrong elements hold (then how they relate to the inputs may say more).
fn of_data_set<'a>(
    ds: &'a DataSetResult,
    rule: Option<&str>,
) -> Option<(Behaviour, Option<&'a OutputResult>)> {
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
    // Nor does an order that happens to reproduce a float16 or bfloat16 reduction: one rounded
    // once from a wider sum (OpenVINO's) matches some order now and then, where the same
    // runtime's other cases match none.
    if diagnosis == "accumulation-order"
        && failed.is_some_and(|o| matches!(o.dtype, DType::Float16 | DType::Bfloat16))
    {
        diagnosis = "none";
    }
    let mut relatable = None;
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
            None => match failed.map(|o| (o, how(o))) {
                Some((o, How::Held(kind))) => {
                    relatable = Some(o);
                    (Class::WrongOutput, format!("values: {kind}"))
                }
                Some((_, How::Fixed(s))) => (Class::WrongOutput, s),
                None => (Class::WrongOutput, String::new()),
            },
        },
        _ => return None,
    };
    Some((
        Behaviour {
            class,
            diagnosis,
            symptom,
        },
        relatable,
    ))
}

/// What describes a wrong output.
enum How {
    /// Its dtype, its shape, a data type's precision lost, what a NaN lost was replaced by.
    Fixed(String),
    /// Only what most of its wrong elements hold (`empty`, `zero`, ...).
    Held(&'static str),
}

/// Where and how a wrong output differs: its dtype, its shape, the precision of its data type
/// lost, or its values, described by what most wrong elements hold (`values: empty`).
fn how(o: &OutputResult) -> How {
    if o.actual_dtype != o.dtype {
        return How::Fixed(format!("dtype {} for {}", o.actual_dtype, o.dtype));
    }
    if o.expected_shape
        .as_deref()
        .is_some_and(|s| s != o.actual_shape)
    {
        let rank = o.expected_shape.as_ref().map_or(0, Vec::len);
        return How::Fixed(if rank == o.actual_shape.len() {
            "shape".to_string()
        } else {
            format!("rank {} for {rank}", o.actual_shape.len())
        });
    }
    if let Some(loss) = precision_loss(o) {
        return How::Fixed(format!("{PRECISION}{loss}"));
    }
    // The kind most of the shown wrong elements have: a candidate with fewer wrong elements
    // keeps it, where the set of kinds would change with every element dropped.
    let mut counts = [0usize; 5];
    for m in &o.first_mismatches {
        let k = value_kind(&m.actual);
        counts[KINDS.iter().position(|&x| x == k).unwrap_or(4)] += 1;
    }
    let at = (0..KINDS.len())
        .max_by_key(|&k| (counts[k], usize::MAX - k))
        .unwrap_or(4);
    // A NaN lost (a max that skips it) leaves the data where the NaN belongs: that is not the
    // data returned unchanged, and relating it would merge it with that bug.
    if nan_lost(o) {
        return How::Fixed(format!("values: {}", KINDS[at]));
    }
    How::Held(KINDS[at])
}

/// The precision loss of a whole data type that every shown wrong element of `o` is, in words
/// (`double rounded to float`): each is its expected value converted to a narrower type
/// (rounded, or saturated at its largest value as some converters do), or a subnormal flushed
/// to zero. `None` when one is not, or none is shown.
fn precision_loss(o: &OutputResult) -> Option<&'static str> {
    let shown = &o.first_mismatches;
    if shown.is_empty() {
        return None;
    }
    let reals: Option<Vec<(f64, f64)>> = shown
        .iter()
        .map(|m| Some((real(&m.expected)?, real(&m.actual)?)))
        .collect();
    let ints: Option<Vec<(i128, i128)>> = shown
        .iter()
        .map(|m| {
            Some((
                m.expected.trim().parse().ok()?,
                m.actual.trim().parse().ok()?,
            ))
        })
        .collect();
    let max = f64::from(f32::MAX);
    let as_float =
        |e: f64, a: f64| a == f64::from(e as f32) || a == f64::from(e.clamp(-max, max) as f32);
    let cut = |pairs: &[(i128, i128)], wrap: fn(i128) -> i128, lo: i128, hi: i128| {
        pairs
            .iter()
            .all(|&(e, a)| a != e && (a == wrap(e) || a == e.clamp(lo, hi)))
    };
    match (o.dtype, &reals, &ints) {
        (DType::Double, Some(r), _) if r.iter().all(|&(e, a)| a != e && as_float(e, a)) => {
            return Some("double rounded to float")
        }
        (DType::Int64, _, Some(p))
            if cut(
                p,
                |e| i128::from(e as i32),
                i32::MIN.into(),
                i32::MAX.into(),
            ) =>
        {
            return Some("int64 cut to int32")
        }
        (DType::Uint64, _, Some(p)) if cut(p, |e| i128::from(e as u32), 0, u32::MAX.into()) => {
            return Some("uint64 cut to uint32")
        }
        _ => {}
    }
    let smallest_normal = match o.dtype {
        DType::Double => f64::MIN_POSITIVE,
        DType::Float | DType::Bfloat16 => f64::from(f32::MIN_POSITIVE),
        DType::Float16 => 6.103_515_625e-5,
        _ => return None,
    };
    reals?
        .iter()
        .all(|&(e, a)| a == 0.0 && e != 0.0 && e.abs() < smallest_normal)
        .then_some("subnormals flushed to zero")
}

/// A rendered real element's value (`NaN`, `-inf` and `5e-324` included).
fn real(s: &str) -> Option<f64> {
    s.trim().parse().ok()
}

/// Whether every shown wrong element of `o` holds the value `data` has at its position: the
/// output is the data input returned unchanged (as far as the shown elements tell).
fn unchanged(o: &OutputResult, data: &Tensor) -> bool {
    !o.first_mismatches.is_empty()
        && data.dtype() == o.actual_dtype
        && data.shape() == o.actual_shape.as_slice()
        && o.first_mismatches.iter().all(|m| {
            m.flat < data.numel()
                && onnx_idx_check::tensor::value::display(data, m.flat) == m.actual
        })
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
            return format!("{PANIC_AT}{}.rs:{line}", source_path(parts[0]));
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

/// The part of a panic's source path that names its site: from the crate's directory for a
/// library built from the registry (`ndarray-0.17.2/src/arraytraits`, the same in every
/// operator that calls it), else the last two parts (`array/gather`).
fn source_path(path: &str) -> String {
    let parts: Vec<&str> = path.split('/').collect();
    // `.../registry/src/index.crates.io-HASH/CRATE-VERSION/src/file`.
    if let Some(at) = parts.iter().position(|p| p.starts_with("index.crates.io")) {
        if at + 1 < parts.len() {
            return parts[at + 1..].join("/");
        }
    }
    tail(path)
}

/// The last two parts of a path (`array/gather`).
fn tail(path: &str) -> String {
    let parts: Vec<&str> = path.rsplit('/').take(2).collect();
    parts.into_iter().rev().collect::<Vec<_>>().join("/")
}

/// A refusal's message (after `refused: `): the last source site it names, where the check
/// that refused sits (`refused at include/gather_elements_shape_inference.hpp:56`: OpenVINO
/// wraps one check in other words at compile time and at inference), else its first line with
/// numbers blanked.
fn refusal(reason: Option<&str>) -> String {
    let reason = reason.unwrap_or_default();
    let message = reason.split_once("refused: ").map_or(reason, |(_, m)| m);
    match last_source_site(message) {
        Some((path, line)) => format!("{REFUSED_AT}{}:{line}", tail(path)),
        None => blank_signed(message.lines().next().unwrap_or_default()),
    }
}

/// The start of a refusal's symptom at a source site.
pub(crate) const REFUSED_AT: &str = "refused at ";

/// The last `path.ext:LINE` of C, C++, Rust or Python source that `message` names, and its line.
fn last_source_site(message: &str) -> Option<(&str, &str)> {
    const SOURCES: [&str; 8] = [".cpp", ".hpp", ".cc", ".cxx", ".h", ".c", ".rs", ".py"];
    let mut last = None;
    for (at, _) in message.match_indices(':') {
        let before = &message[..at];
        let start = before
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/')))
            .map_or(0, |i| i + 1);
        let path = &before[start..];
        let after = &message[at + 1..];
        let line = &after[..after
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(after.len())];
        if !line.is_empty() && SOURCES.iter().any(|ext| path.ends_with(ext)) {
            last = Some((path, line));
        }
    }
    last
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
    blank_with(s, false)
}

/// A runtime's message blanked as [`blank`] does, keeping the sign of each number (`index -#
/// out of bounds`): a runtime that mishandles negative indices or axes says so with a sign its
/// other refusals lack.
pub(crate) fn blank_signed(s: &str) -> String {
    blank_with(s, true)
}

fn blank_with(s: &str, signed: bool) -> String {
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
                if !signed && out.ends_with('-') {
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
        // Bounded work on a long message; lists are collapsed before the cut below, so that
        // a tensor printed at any length cuts the same.
        if out.len() >= 4096 {
            break;
        }
    }
    // A scalar index breaks a rule as an index of a tensor does.
    let collapsed = collapse_lists(&out.replace("indices (a scalar)", "indices[..]"));
    without_layouts(&collapsed).chars().take(160).collect()
}

/// `s` with the memory layout flags an ndarray prints after a tensor (`layout=CFcf`) blanked:
/// they follow the tensor's shape (one of length 1 is both C and F contiguous).
fn without_layouts(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find("layout=") {
        let after = &rest[at + "layout=".len()..];
        let flags = after
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(after.len());
        out.push_str(&rest[..at]);
        out.push_str("layout=..");
        rest = &after[flags..];
    }
    out.push_str(rest);
    out
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
                '#' | ',' | ' ' | '.' | '-' => {}
                _ => break,
            }
        }
        match end {
            Some(i) => {
                out.push_str("[..]");
                rest = &tail[i + 1..];
            }
            // A list of numbers cut off by the end of the message is a list all the same.
            None if tail
                .chars()
                .all(|c| matches!(c, '[' | ']' | '#' | ',' | ' ' | '.' | '-')) =>
            {
                out.push_str("[..]");
                rest = "";
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

/// Hand-made results for the tests of behaviours and keys: what the runner reports for a wrong
/// output or a crash, written out as real runtimes gave them.
#[cfg(test)]
pub(crate) mod made {
    use onnx_idx_check::compare::Mismatch;
    use onnx_idx_check::tensor::DType;
    use onnx_idx_check::verdict::{CaseResult, DataSetResult, Fault, OutputResult, Status};

    /// A case whose one output of `dtype` and `shape` differs at these (flat offset, expected,
    /// actual) elements.
    pub(crate) fn wrong(
        dtype: DType,
        shape: &[usize],
        wrong: &[(usize, &str, &str)],
    ) -> CaseResult {
        let mut r = CaseResult::bare("made", std::path::PathBuf::new(), Status::Failed);
        let index = |flat: usize| {
            let mut at = vec![0; shape.len()];
            let mut rest = flat;
            for (k, d) in shape.iter().enumerate().rev() {
                at[k] = rest % d.max(&1);
                rest /= d.max(&1);
            }
            at
        };
        r.data_sets = vec![DataSetResult {
            name: "test_data_set_0".into(),
            status: Status::Failed,
            reason: Some("differs".into()),
            fault: None,
            outputs: vec![OutputResult {
                name: "output".into(),
                status: Status::Failed,
                reason: Some("differs".into()),
                dtype,
                actual_dtype: dtype,
                expected_shape: Some(shape.to_vec()),
                actual_shape: shape.to_vec(),
                mismatches: wrong.len(),
                max_abs_diff: None,
                max_rel_diff: None,
                first_mismatches: wrong
                    .iter()
                    .map(|&(flat, e, a)| Mismatch {
                        index: index(flat),
                        expected: e.into(),
                        actual: a.into(),
                        source: None,
                        flat,
                    })
                    .collect(),
                tolerant: false,
                diagnoses: Vec::new(),
                computed: None,
            }],
        }];
        r
    }

    /// A case on which the runtime died, saying `reason`.
    pub(crate) fn crashed(reason: &str) -> CaseResult {
        let mut r = CaseResult::bare("made", std::path::PathBuf::new(), Status::Errored);
        r.data_sets = vec![DataSetResult {
            name: "test_data_set_0".into(),
            status: Status::Errored,
            reason: Some(reason.into()),
            fault: Some(Fault::Crashed),
            outputs: Vec::new(),
        }];
        r
    }

    /// tract 0.23.9's last words for its panic at ndarray's index check, as ScatterElements,
    /// Scatter and GatherElements died on out-of-range indices (the thread number differs).
    pub(crate) fn ndarray_panic(thread: u32) -> String {
        format!(
            "runtime tract crashed: killed by signal 6 (SIGABRT); its last words: thread '<unnamed>' ({thread}) panicked at /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/ndarray-0.17.2/src/arraytraits.rs:36:5: | ndarray: index out of bounds | thread '<unnamed>' ({thread}) panicked at /rustc/b940084d7eb6a299eb4bfeb8e34901bc051e7ac4/library/core/src/panicking.rs:225:5: | panic in a function that cannot unwind"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::made::{crashed, ndarray_panic, wrong};
    use super::*;

    /// The behaviour of `r` with no data input known.
    fn of(r: &CaseResult) -> Behaviour {
        behaviour(r, None, || None).unwrap().1
    }

    #[test]
    fn doubles_computed_as_floats_are_one_symptom_whatever_the_operator_and_value() {
        // OpenVINO 2026.4.1: Gather-1, GatherND-12 and Scatter-9 (a subnormal double that
        // float rounds to zero), and Gather-11 (infinity saturated at float's largest value).
        let cases = [
            wrong(DType::Double, &[], &[(0, "5e-324", "0.0")]),
            wrong(DType::Double, &[1], &[(0, "5e-324", "0.0")]),
            wrong(DType::Double, &[], &[(0, "inf", "3.4028234663852886e38")]),
            wrong(
                DType::Double,
                &[3],
                &[(0, "0.1", "0.10000000149011612"), (2, "-1e300", "-inf")],
            ),
        ];
        for r in &cases {
            let b = of(r);
            assert_eq!(b.symptom, "precision: double rounded to float", "{r:?}");
            assert!(b.any_operator());
        }
        // A wrong double that is not the float next to the right one is the operator's.
        let b = of(&wrong(DType::Double, &[2], &[(1, "1.5", "2.5")]));
        assert_eq!(b.symptom, "values: other");
        assert!(!b.any_operator());
        // One element rounded and one plainly wrong: not a precision loss.
        let b = of(&wrong(
            DType::Double,
            &[2],
            &[(0, "5e-324", "0.0"), (1, "1.5", "7.0")],
        ));
        assert_eq!(b.symptom, "values: zero");
    }

    #[test]
    fn subnormals_flushed_and_integers_cut_are_precision_losses_too() {
        // OpenVINO's constant folding of a bfloat16 ScatterElements-16.
        let b = of(&wrong(DType::Bfloat16, &[1], &[(0, "9.1835e-41", "0.0")]));
        assert_eq!(b.symptom, "precision: subnormals flushed to zero");
        assert!(b.any_operator());
        let b = of(&wrong(DType::Float16, &[1], &[(0, "6e-8", "0.0")]));
        assert_eq!(b.symptom, "precision: subnormals flushed to zero");
        // A normal value turned zero is a zero, not a flush.
        assert_eq!(
            of(&wrong(DType::Float, &[1], &[(0, "1.0", "0.0")])).symptom,
            "values: zero"
        );
        // 2^32 + 1 wraps to 1 in 32 bits; 2^40 saturates at 2^31 - 1.
        let b = of(&wrong(
            DType::Int64,
            &[2],
            &[(0, "4294967297", "1"), (1, "1099511627776", "2147483647")],
        ));
        assert_eq!(b.symptom, "precision: int64 cut to int32");
        assert_eq!(
            of(&wrong(DType::Uint64, &[1], &[(0, "4294967296", "0")])).symptom,
            "precision: uint64 cut to uint32"
        );
        assert_eq!(
            of(&wrong(DType::Int64, &[1], &[(0, "7", "1")])).symptom,
            "values: other"
        );
    }

    #[test]
    fn the_data_returned_unchanged_is_one_symptom_whatever_its_elements_hold() {
        // OpenVINO's ScatterND-16 with k = 0 (indices [1, 0]), reduction add: data [1] and
        // update 101 should give 102, and it gives the data; on bool, true or false gives
        // false, the data, which is a zero.
        let int8 = wrong(DType::Int8, &[1], &[(0, "102", "1")]);
        let bool_ = wrong(DType::Bool, &[1], &[(0, "true", "false")]);
        let data_int8 = Tensor::from_vec(vec![1], vec![1i8]).unwrap();
        let data_bool = Tensor::from_vec(vec![1], vec![false]).unwrap();
        // What the elements hold alone splits them.
        assert_ne!(of(&int8).symptom, of(&bool_).symptom);
        let a = behaviour(&int8, None, || Some(data_int8.clone()))
            .unwrap()
            .1;
        let b = behaviour(&bool_, None, || Some(data_bool.clone()))
            .unwrap()
            .1;
        assert_eq!(a.symptom, DATA_UNCHANGED);
        assert!(a.same_as(&b));
        assert!(
            !a.any_operator(),
            "the data unchanged is the operator's bug"
        );
        // Another wrong value of the same operator stays apart.
        let other = wrong(DType::Int8, &[1], &[(0, "102", "5")]);
        let c = behaviour(&other, None, || Some(data_int8.clone()))
            .unwrap()
            .1;
        assert_eq!(c.symptom, "values: other");
        // A data input of another shape (a gather's) says nothing of the output.
        let gathered = wrong(DType::Int8, &[2], &[(0, "3", "1")]);
        let d = behaviour(&gathered, None, || Some(data_int8.clone()))
            .unwrap()
            .1;
        assert_eq!(d.symptom, "values: other");
        // A NaN that a max lost leaves the data where it belongs: not the data unchanged.
        let nan = wrong(DType::Double, &[1], &[(0, "NaN", "1.0")]);
        let data = Tensor::from_vec(vec![1], vec![1.0f64]).unwrap();
        let e = behaviour(&nan, None, || Some(data)).unwrap().1;
        assert_eq!(e.symptom, "values: other");
    }

    #[test]
    fn one_panic_site_in_a_library_is_one_crash_whatever_operator_reaches_it() {
        let a = of(&crashed(&ndarray_panic(28654)));
        let b = of(&crashed(&ndarray_panic(1140)));
        assert_eq!(a.symptom, "panic at ndarray-0.17.2/src/arraytraits.rs:36");
        assert!(a.same_as(&b) && a.any_operator());
        // Two sites of one operator are two bugs.
        let c = of(&crashed("thread '<unnamed>' (1) panicked at core/src/ops/array/gather_nd.rs:72:23: | assertion failed: index < dim"));
        let d = of(&crashed("thread '<unnamed>' (2) panicked at core/src/ops/array/gather_nd.rs:28:9: | assertion `left == right` failed"));
        assert_eq!(c.symptom, "panic at array/gather_nd.rs:72");
        assert!(!c.same_as(&d));
        // A signal says nothing of where: the operator's.
        let e = of(&crashed(
            "runtime openvino crashed: killed by signal 11 (SIGSEGV)",
        ));
        assert_eq!(e.symptom, "SIGSEGV");
        assert!(!e.any_operator());
    }

    #[test]
    fn an_order_reproducing_a_half_precision_reduction_is_no_diagnosis() {
        use onnx_idx_check::diagnose::BugClass;
        // OpenVINO's bfloat16 mul: 1.5625 * 101 * 102 * 103 rounded once from a wider product.
        let mut r = wrong(DType::Bfloat16, &[1], &[(0, "1662976.0", "1654784.0")]);
        r.data_sets[0].outputs[0].diagnoses = vec![BugClass::AccumulationOrder];
        assert_eq!(of(&r).diagnosis, "none");
        let mut f = wrong(DType::Float, &[1], &[(0, "3.0", "3.0000002")]);
        f.data_sets[0].outputs[0].diagnoses = vec![BugClass::AccumulationOrder];
        assert_eq!(
            of(&f).diagnosis,
            "accumulation-order",
            "float keeps its diagnosis"
        );
    }

    #[test]
    fn a_refusal_naming_a_source_site_is_keyed_by_its_last_one() {
        // OpenVINO 2026.4.1 on GatherElements with indices shorter off the axis: at compile
        // time (static shapes) through the frontend, at inference (symbolic) through the CPU
        // plugin; one check refused both.
        let frontend = "runtime openvino refused: RuntimeError: Exception from src/inference/src/cpp/core.cpp:84: Check 'false' failed at src/frontends/common_translators/src/unconverted_ops_report.cpp:151: FrontEnd API failed with OpConversionFailure: Model wasn't fully converted. Failed operations detailed log: -- GatherElements-13 with a message: While validating ONNX node '<Node(GatherElements): output>': Check 'output_shape.merge_into(output_shape, indices_pshape)' failed at src/core/shape_inference/include/gather_elements_shape_inference.hpp:56: While validating node 'opset6::GatherElements GatherElements_26467 (opset1::Parameter data[0]:f32[0,2], opset1::Parameter indices[0]:i32[0,1]) -> (dynamic[...])' with friendly_name 'GatherElements_26467': Shapes [0,2] and [0,1] are not consistent. Summary: -- Conversion is failed for: GatherElements-13";
        let plugin = "runtime openvino refused: RuntimeError: Exception from src/inference/src/cpp/infer_request.cpp:224: Exception from src/plugins/intel_cpu/src/node.cpp:794: [CPU] GatherElements node with name 'output' Check 'output_shape.merge_into(output_shape, indices_pshape)' failed at src/core/shape_inference/include/gather_elements_shape_inference.hpp:56: While validating node 'opset6::GatherElements output (opset1::Parameter data[0]:i32[?,?], opset1::Constant indices_constant[0]:i32[1,1]) -> (i32[1,1])' with friendly_name 'output': Shapes {1,2} and {1,1} are not consistent";
        let site = "refused at include/gather_elements_shape_inference.hpp:56";
        assert_eq!(refusal(Some(frontend)), site);
        assert_eq!(refusal(Some(plugin)), site);
        // Another check is another site; a message without one keeps its words.
        let nd = "RuntimeError: Check 'indices_rank != 0' failed at src/core/shape_inference/include/scatter_nd_base_shape_inference.hpp:25: Indices rank must be at least 1";
        assert_eq!(
            refusal(Some(nd)),
            "refused at include/scatter_nd_base_shape_inference.hpp:25"
        );
        let numpy = "ValueError: Need at least 0 and at most 64 array objects.";
        assert_eq!(
            refusal(Some(numpy)),
            "ValueError: Need at least # and at most # array objects."
        );
        // A time of day or a ratio is not a site.
        assert_eq!(refusal(Some("took 12:30 min")), "took #:# min");
    }

    #[test]
    fn a_runtime_message_keeps_the_sign_of_its_numbers() {
        // The reference evaluator refuses a negative axis where it refuses shorter indices.
        assert_ne!(
            refusal(Some("ValueError: Except for dimension -1, all dimensions of index and self should be the same size.")),
            refusal(Some("ValueError: Except for dimension 0, all dimensions of index and self should be the same size."))
        );
        // A printed tensor of negative indices is a list all the same.
        assert_eq!(
            blank_signed("ScatterND index -1 out of bounds (indices tensor [[-1, -1], [-2, -2]], shape=[2, 2])"),
            blank_signed("ScatterND index -3 out of bounds (indices tensor [[-3]], shape=[1, 1])")
        );
        assert_eq!(
            blank_signed("index -1 out of bounds (indices tensor [[-1]])"),
            "index -# out of bounds (indices tensor [..])"
        );
        // tract 0.23.9 on ScatterND-11 and -18: ndarray's layout flags follow the shape.
        assert_eq!(
            blank_signed("ScatterND index -1 out of bounds for data shape [2, 2] (indices tensor [[-1, -1], [-2, -2]], shape=[2, 2], strides=[2, 1], layout=Cc (0x5), dynamic ndim=2)"),
            blank_signed("ScatterND index -1 out of bounds for data shape [1] (indices tensor [[-1]], shape=[1, 1], strides=[1, 1], layout=CFcf (0xf), dynamic ndim=2)")
        );
    }

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
        // A tensor printed long is cut after it is collapsed: the same symptom at any length.
        let message = |n: usize| {
            let list = vec!["[1, 2]"; n].join(", ");
            format!("TractError: Evaluating #0 'n' ScatterNd Caused by: ScatterND index -2 out of bounds for data shape [3, 2] (indices tensor [{list}], shape=[{n}, 2], strides=[2, 1], layout=CFcf)")
        };
        assert_eq!(blank(&message(1)), blank(&message(40)));
        assert_eq!(blank(&message(40)), blank(&message(400)));
        assert!(blank(&message(400)).chars().count() <= 160);
        assert_eq!(
            blank("indices (a scalar) = -1 is negative, which Gather-1 does not allow"),
            blank("indices[0, 2] = -3 is negative, which Gather-1 does not allow")
        );
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
