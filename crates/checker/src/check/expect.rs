//! The expectations step of a check: load the file, rewrite it when asked, judge every case
//! (its note) and then the entries themselves (expired, unmatched).

use super::{CheckError, CheckOptions};
use crate::expectations::{Date, Expectations, Judgement, Outcome};
use crate::verdict::{
    CaseResult, ExpectationNote, ExpectationOutcome, ExpectationsReport, NoMatch, Written,
};
use std::collections::BTreeSet;

/// Loads `options.expectations`; when updating, a missing file starts empty.
pub(crate) fn load(options: &CheckOptions) -> Result<Option<Expectations>, CheckError> {
    let Some(path) = &options.expectations else {
        return Ok(None);
    };
    if options.update_expectations && !path.exists() {
        return Ok(Some(Expectations::parse("", path)?));
    }
    Ok(Some(Expectations::load(path)?))
}

/// What the expectations say of `result` alone, as it finishes.
pub(crate) fn note_alone(
    exp: Option<&Expectations>,
    result: &CaseResult,
    today: Date,
) -> Option<ExpectationNote> {
    let exp = exp?;
    note(exp, &exp.judge(std::slice::from_ref(result), today), 0)
}

/// What the expectations found, once every case ran.
pub(crate) struct Judged {
    /// The file's own verdicts.
    pub(crate) report: ExpectationsReport,
    /// The gate's messages about the file: expired entries, and unmatched ones when strict.
    pub(crate) gate: Vec<String>,
}

/// Rewrites the file first when updating, sets every result's note, then judges the entries;
/// `all_names` are the names of every case found before selection (an entry for cases the
/// patterns, the shard or `--fail-fast` left out is neither unmatched nor dropped).
pub(crate) fn judge(
    exp: &Expectations,
    results: &mut [CaseResult],
    options: &CheckOptions,
    all_names: &[String],
) -> Result<Judged, CheckError> {
    let today = Date::today();
    let ran: BTreeSet<&str> = results.iter().map(|r| r.name.as_str()).collect();
    let left_out: Vec<String> = all_names
        .iter()
        .filter(|n| !ran.contains(n.as_str()))
        .cloned()
        .collect();
    let (exp, written) = if options.update_expectations {
        let update = exp.update(results, &left_out);
        let path = exp.path();
        // A failed write (a full disk) must leave the user's file whole: temp file + rename.
        crate::fsutil::write_user_file(path, update.text.as_bytes()).map_err(|e| {
            CheckError::WriteExpectations {
                path: path.to_path_buf(),
                source: e.source,
            }
        })?;
        let updated = Expectations::parse(&update.text, path).map_err(|source| {
            CheckError::UpdatedExpectations {
                path: path.to_path_buf(),
                source: Box::new(source),
            }
        })?;
        let written = Written {
            entries: update.entries.len(),
            added: update.added,
            removed: update.removed,
            changed: update.changed,
            expired: update.expired(today),
        };
        (updated, Some(written))
    } else {
        (exp.clone(), None)
    };
    let judgement = exp.judge(results, today);
    for (i, r) in results.iter_mut().enumerate() {
        r.expectation = note(&exp, &judgement, i);
    }
    let pattern = |i: &usize| exp.entries()[*i].case.clone();
    // Whether entry `i` may apply to a case that was found but not run (its opset unknown).
    let elsewhere = |i: usize| left_out.iter().any(|n| exp.pattern_matches(i, n));
    let expired: Vec<String> = judgement.expired.iter().map(pattern).collect();
    let expired_lines = judgement.expired.iter().map(|&i| exp.line(i)).collect();
    // Left out: applies to no case of the run, but possibly to one the selection left out.
    let expired_fails = judgement
        .expired
        .iter()
        .map(|&i| !(judgement.unmatched.contains(&i) && elsewhere(i)))
        .collect();
    // An expired entry fails the gate through the cases it applies to, in the run (the shard)
    // that ran them; one that applies to no case at all fails every run by itself.
    let expired_alone: Vec<String> = judgement
        .expired
        .iter()
        .filter(|&&i| judgement.unmatched.contains(&i) && !elsewhere(i))
        .map(pattern)
        .collect();
    // Unmatched: applies to no case of the run (name and opset range), nor possibly to one left
    // out.
    let unmatched_at: Vec<usize> = judgement
        .unmatched
        .iter()
        .copied()
        .filter(|&i| !elsewhere(i))
        .collect();
    let unmatched: Vec<String> = unmatched_at.iter().map(pattern).collect();
    let unmatched_why: Vec<NoMatch> = unmatched_at
        .iter()
        .map(|&i| no_match(&exp, i, results))
        .collect();
    let mut gate = Vec::new();
    for e in &expired_alone {
        gate.push(format!(
            "expectations: the entry for '{e}' has expired (its `until` date has passed) and matches no case"
        ));
    }
    if options.strict_expectations {
        for (u, why) in unmatched.iter().zip(&unmatched_why) {
            gate.push(format!(
                "expectations: the entry for '{u}' {why} (--strict-expectations)"
            ));
        }
    }
    let report = ExpectationsReport {
        file: exp.path().display().to_string(),
        updated: written.is_some(),
        written,
        expired,
        unmatched,
        expired_lines,
        expired_fails,
        unmatched_lines: unmatched_at.iter().map(|&i| exp.line(i)).collect(),
        unmatched_why,
        strict: options.strict_expectations,
    };
    Ok(Judged { report, gate })
}

/// Why entry `i`, which applies to no case of `results`, does not: how many names its pattern
/// matches, and their opsets, which its range does not admit.
fn no_match(exp: &Expectations, i: usize, results: &[CaseResult]) -> NoMatch {
    let named: Vec<&CaseResult> = results
        .iter()
        .filter(|r| exp.pattern_matches(i, &r.name))
        .collect();
    let mut opsets: Vec<Option<i64>> = named
        .iter()
        .map(|r| r.opset.get("ai.onnx").copied())
        .collect();
    opsets.sort_unstable();
    opsets.dedup();
    NoMatch {
        by_name: named.len(),
        opsets,
        range: exp.entries()[i].opset.unwrap_or((None, None)),
    }
}

/// What the expectations say of result `index` of a judgement.
fn note(exp: &Expectations, judgement: &Judgement, index: usize) -> Option<ExpectationNote> {
    let j = judgement.cases.get(index)?.as_ref()?;
    let entry = exp.entries().get(j.entry)?;
    let (outcome, detail) = match &j.outcome {
        Outcome::ExpectedFailure => (ExpectationOutcome::ExpectedFailure, None),
        Outcome::UnexpectedlyPassed => (ExpectationOutcome::UnexpectedlyPassed, None),
        Outcome::Different(how) => (ExpectationOutcome::Different, Some(how.clone())),
        Outcome::ToleranceOnly => (ExpectationOutcome::ToleranceOnly, None),
        Outcome::Expired(_) => (ExpectationOutcome::Expired, Some(j.outcome.to_string())),
    };
    Some(ExpectationNote {
        outcome,
        entry: entry.case.clone(),
        reason: entry.reason.clone(),
        link: entry.link.clone(),
        detail,
        fails_gate: j.outcome.fails_gate(),
        line: exp.line(j.entry),
    })
}
