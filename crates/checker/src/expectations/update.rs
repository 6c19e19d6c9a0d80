//! `--update-expectations`: the entries rewritten to a run's results, so that the same results
//! pass the gate and the list only shrinks.

use super::lookup::ai_onnx;
use super::pattern::{escape, Matcher};
use super::render::render;
use super::{Date, Entry, Expectations, Signature};
use crate::verdict::{CaseResult, Status};
use std::collections::{BTreeMap, BTreeSet};

/// The rewritten file and what changed, for the message `wrote 12 entries: 3 added, ...`.
#[derive(Clone, Debug, PartialEq)]
pub struct Update {
    /// The new file's text.
    pub text: String,
    /// The entries written, in order.
    pub entries: Vec<Entry>,
    /// Entries that are new: a case no entry covered, or a glob's case given its own entry.
    pub added: usize,
    /// Entries of the old file that are not in the new one.
    pub removed: usize,
    /// Entries kept with another status, signature or (tolerance-only) form.
    pub changed: usize,
}

impl Update {
    /// Written entries whose `until` date is before `today`: the update keeps them, and they
    /// still fail the runs of their cases until their date is renewed or they are removed.
    pub fn expired(&self, today: Date) -> usize {
        self.entries
            .iter()
            .filter(|e| e.until.is_some_and(|d| d < today))
            .count()
    }
}

/// An entry being rewritten, with the index of the old entry it comes from (`None`: new).
struct Work {
    entry: Entry,
    matcher: Matcher,
    from: Option<usize>,
}

impl Expectations {
    /// The file rewritten to the current results (`--update-expectations`), in the file's own
    /// order (new entries at the end), so that which glob wins over which does not change:
    ///
    /// - an entry with a status that still applies to non-passing cases keeps its pattern,
    ///   reason, link, until, opset and tolerances; its status becomes theirs. When they
    ///   disagree, the entry keeps its status if some still have it (else the most common one)
    ///   and the others get exact-name entries with `reason = "TODO"`. An exact-name entry of a
    ///   failed case gets the current signature; a glob keeps its signature fields only while
    ///   all its failed cases agree with them.
    /// - a glob with a status that applies to a case that passes now is replaced by exact-name
    ///   entries (same reason, link, until and opset) for its non-passing cases;
    /// - an entry with a status that applies to no non-passing case (its cases pass, or other
    ///   entries take precedence) is dropped, or kept as a tolerance-only entry when it sets
    ///   `rtol` or `atol`;
    /// - an entry whose pattern matches a case that was found but not run (`left_out`: cases
    ///   a `--filter`, `--exclude`, `--shard` or `--fail-fast` left out) and that applies to no
    ///   case of the run is kept as it is; one that applies to no case at all is dropped;
    /// - tolerance-only entries are kept as they are while they apply to a case;
    /// - every non-passing case no entry covers gets an exact-name entry with its status,
    ///   `reason = "TODO"` and, when failed, its signature.
    ///
    /// Judging the same results with the written file yields no gate failure but expired
    /// entries.
    pub fn update(&self, results: &[CaseResult], left_out: &[String]) -> Update {
        let elsewhere: Vec<bool> = (0..self.entries.len())
            .map(|i| left_out.iter().any(|n| self.pattern_matches(i, n)))
            .collect();
        let mut work: Vec<Work> = self
            .entries
            .iter()
            .zip(&self.matchers)
            .enumerate()
            .map(|(i, (e, m))| Work {
                entry: e.clone(),
                matcher: m.clone(),
                from: Some(i),
            })
            .collect();
        let owners = |work: &[Work]| -> Vec<Option<usize>> {
            let view = view(&self.path, work);
            results
                .iter()
                .map(|r| view.status_entry(&r.name, ai_onnx(r)))
                .collect()
        };

        // Until no entry with a status applies to a passing case: narrow or drop those entries.
        loop {
            let own = owners(&work);
            let offending: BTreeSet<usize> = own
                .iter()
                .zip(results)
                .filter(|(_, r)| r.status == Status::Passed)
                .filter_map(|(o, _)| *o)
                .collect();
            if offending.is_empty() {
                break;
            }
            let mut next = Vec::new();
            for (i, w) in std::mem::take(&mut work).into_iter().enumerate() {
                if !offending.contains(&i) {
                    next.push(w);
                    continue;
                }
                if !w.matcher.is_exact() {
                    for (r, _) in results
                        .iter()
                        .zip(&own)
                        .filter(|(r, o)| **o == Some(i) && r.status != Status::Passed)
                    {
                        let mut narrow = exact_entry(r, w.entry.reason.clone());
                        narrow.link.clone_from(&w.entry.link);
                        narrow.until = w.entry.until;
                        narrow.opset = w.entry.opset;
                        next.push(Work {
                            entry: narrow,
                            matcher: Matcher::Exact(r.name.clone()),
                            from: None,
                        });
                    }
                }
                if w.entry.has_tolerance() {
                    next.push(Work {
                        entry: w.entry.tolerance_only(),
                        ..w
                    });
                }
            }
            work = next;
        }

        // Every entry with a status now applies only to non-passing cases.
        let own = owners(&work);
        let view = view(&self.path, &work);
        let applies: Vec<bool> = (0..work.len())
            .map(|i| results.iter().any(|r| view.matches(i, &r.name, ai_onnx(r))))
            .collect();
        let mut out: Vec<Work> = Vec::new();
        for (i, mut w) in work.into_iter().enumerate() {
            let kept_elsewhere = w.from.is_some_and(|f| elsewhere[f]);
            if w.entry.status.is_none() {
                if applies[i] || kept_elsewhere {
                    out.push(w);
                }
                continue;
            }
            let owned: Vec<&CaseResult> = results
                .iter()
                .zip(&own)
                .filter(|(_, o)| **o == Some(i))
                .map(|(r, _)| r)
                .collect();
            if owned.is_empty() {
                if kept_elsewhere && !applies[i] {
                    out.push(w); // its cases are not in this run
                } else if applies[i] && w.entry.has_tolerance() {
                    // Shadowed, but its tolerances still apply.
                    w.entry = w.entry.tolerance_only();
                    out.push(w);
                } else if kept_elsewhere {
                    out.push(w); // shadowed here, but it may own the cases left out
                }
                continue;
            }
            if w.matcher.is_exact() {
                let r = owned[0];
                w.entry.status = Some(r.status);
                let sig = Signature::of(r);
                w.entry.set_signature(sig.as_ref());
                out.push(w);
                continue;
            }
            let status = choose_status(w.entry.status, &owned);
            let keep_signature = status == Status::Failed
                && owned
                    .iter()
                    .filter(|r| r.status == status)
                    .all(|r| Signature::of(r).is_some_and(|s| w.entry.signature_matches(&s)));
            if !keep_signature {
                w.entry.set_signature(None);
            }
            w.entry.status = Some(status);
            out.push(w);
            for r in owned.iter().filter(|r| r.status != status) {
                out.push(new_work(r));
            }
        }
        let mut added = BTreeSet::new();
        for (r, o) in results.iter().zip(&own) {
            if o.is_none() && r.status != Status::Passed && added.insert(r.name.as_str()) {
                out.push(new_work(r));
            }
        }
        let kept = out.iter().filter(|w| w.from.is_some()).count();
        let changed = out
            .iter()
            .filter(|w| w.from.is_some_and(|f| self.entries[f] != w.entry))
            .count();
        let entries: Vec<Entry> = out.into_iter().map(|w| w.entry).collect();
        Update {
            text: render(&entries),
            added: entries.len() - kept,
            removed: self.entries.len() - kept,
            changed,
            entries,
        }
    }
}

/// Expectations over the entries being rewritten, to ask which applies to a case.
fn view(path: &std::path::Path, work: &[Work]) -> Expectations {
    Expectations {
        path: path.to_path_buf(),
        entries: work.iter().map(|w| w.entry.clone()).collect(),
        matchers: work.iter().map(|w| w.matcher.clone()).collect(),
        lines: Vec::new(),
    }
}

/// A new exact-name entry for a case no entry covers.
fn new_work(r: &CaseResult) -> Work {
    Work {
        entry: exact_entry(r, "TODO".to_string()),
        matcher: Matcher::Exact(r.name.clone()),
        from: None,
    }
}

/// A new exact-name entry for a non-passing case, with its status and signature.
fn exact_entry(r: &CaseResult, reason: String) -> Entry {
    let mut e = Entry::new(escape(&r.name), r.status, reason);
    e.set_signature(Signature::of(r).as_ref());
    e
}

/// The status a glob keeps: its own if some of its cases still have it, else the most common
/// (ties to failed, then errored).
fn choose_status(current: Option<Status>, cases: &[&CaseResult]) -> Status {
    if let Some(s) = current.filter(|s| cases.iter().any(|r| r.status == *s)) {
        return s;
    }
    let mut counts: BTreeMap<Status, usize> = BTreeMap::new();
    for r in cases {
        *counts.entry(r.status).or_default() += 1;
    }
    counts
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
        .map_or(Status::Failed, |(s, _)| s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::Tolerance;
    use crate::expectations::testutil::{
        at_opset, case, date, failed, gate_clean, parse, today, FULL,
    };
    use crate::expectations::Outcome;
    use proptest::prelude::*;
    use std::path::Path;

    // Updating.

    fn update(text: &str, results: &[CaseResult]) -> (String, Expectations) {
        update_left_out(text, results, &[])
    }

    fn update_left_out(
        text: &str,
        results: &[CaseResult],
        left_out: &[&str],
    ) -> (String, Expectations) {
        let left_out: Vec<String> = left_out.iter().map(|n| n.to_string()).collect();
        let written = parse(text).update(results, &left_out).text;
        let reread = Expectations::parse(&written, Path::new("exp.toml"))
            .unwrap_or_else(|e| panic!("{e}\n{written}"));
        (written, reread)
    }

    fn find<'a>(exp: &'a Expectations, case: &str) -> Vec<&'a Entry> {
        exp.entries().iter().filter(|e| e.case == case).collect()
    }

    #[test]
    fn update_keeps_reasons_and_links_and_drops_entries_whose_cases_pass() {
        let text = "[[expect]]\ncase = \"b\"\nstatus = \"errored\"\nreason = \"tract#1\"\nlink = \"https://x/1\"\nuntil = 2027-01-31\nopset = { min = 11 }\n\n\
                    [[expect]]\ncase = \"a\"\nstatus = \"failed\"\nreason = \"fixed since\"\n\n\
                    [[expect]]\ncase = \"g/*\"\nstatus = \"skipped\"\nreason = \"no Loop\"\nlink = \"https://x/2\"\n";
        let results = [
            case("a", Status::Passed),
            case("b", Status::Errored),
            case("g/1", Status::Skipped),
            case("g/2", Status::Skipped),
        ];
        let (_, exp) = update(text, &results);
        let cases: Vec<&str> = exp.entries().iter().map(|e| e.case.as_str()).collect();
        assert_eq!(cases, vec!["b", "g/*"]);
        let b = &exp.entries()[0];
        assert_eq!(b.status, Some(Status::Errored));
        assert_eq!(b.reason, "tract#1");
        assert_eq!(b.link.as_deref(), Some("https://x/1"));
        assert_eq!(b.until, Some(date("2027-01-31")));
        assert_eq!(b.opset, Some((Some(11), None)));
        let g = &exp.entries()[1];
        assert_eq!(
            (g.status, g.reason.as_str(), g.link.as_deref()),
            (Some(Status::Skipped), "no Loop", Some("https://x/2"))
        );
        assert!(gate_clean(&exp, &results));
    }

    #[test]
    fn update_adds_todo_entries_for_new_failures() {
        let results = [
            case("ok", Status::Passed),
            failed("new/f", 2, Some(&[0, 1])),
            failed("new/shape", 0, None),
            case("new/e", Status::Errored),
            case("odd[1]", Status::Skipped),
        ];
        let (written, exp) = update("", &results);
        assert_eq!(
            written,
            "# onnx-idx-check expectations: known failures, ratcheted.\n\
             # Written by `onnx-idx-check run --update-expectations`: entries in their\n\
             # order (which decides between globs), new ones last; comments not kept. Fill in every\n\
             # reason = \"TODO\" (an issue, a missing feature) before committing.\n\
             \n[[expect]]\ncase = \"new/f\"\nstatus = \"failed\"\nreason = \"TODO\"\nmismatches = 2\nfirst_mismatch = [0, 1]\n\
             \n[[expect]]\ncase = \"new/shape\"\nstatus = \"failed\"\nreason = \"TODO\"\nmismatches = 0\nactual_dtype = \"float\"\nactual_shape = [3, 2]\n\
             \n[[expect]]\ncase = \"new/e\"\nstatus = \"errored\"\nreason = \"TODO\"\n\
             \n[[expect]]\ncase = \"odd[[]1[]]\"\nstatus = \"skipped\"\nreason = \"TODO\"\n"
        );
        assert!(exp
            .entries()
            .iter()
            .all(|e| e.reason == "TODO" && e.is_exact()));
        assert!(gate_clean(&exp, &results));
    }

    #[test]
    fn update_refreshes_the_signature_and_status_of_exact_entries() {
        let text = "[[expect]]\ncase = \"f\"\nstatus = \"failed\"\nreason = \"r\"\nmismatches = 3\nfirst_mismatch = [1, 0]\n\n\
                    [[expect]]\ncase = \"plain\"\nstatus = \"failed\"\nreason = \"r\"\n\n\
                    [[expect]]\ncase = \"now_errored\"\nstatus = \"failed\"\nreason = \"r\"\nmismatches = 1\n";
        let results = [
            failed("f", 5, Some(&[0, 2])),
            failed("plain", 4, Some(&[1])),
            case("now_errored", Status::Errored),
        ];
        assert!(!gate_clean(&parse(text), &results));
        let (_, exp) = update(text, &results);
        let f = find(&exp, "f")[0];
        assert_eq!(
            (f.mismatches, f.first_mismatch.clone()),
            (Some(5), Some(vec![0, 2]))
        );
        let plain = find(&exp, "plain")[0];
        assert_eq!(
            (plain.mismatches, plain.first_mismatch.clone()),
            (Some(4), Some(vec![1]))
        );
        let e = find(&exp, "now_errored")[0];
        assert_eq!(
            (e.status, e.mismatches, e.reason.as_str()),
            (Some(Status::Errored), None, "r")
        );
        assert!(gate_clean(&exp, &results));
    }

    #[test]
    fn update_splits_a_glob_whose_cases_disagree() {
        let text = "[[expect]]\ncase = \"g/*\"\nstatus = \"failed\"\nreason = \"tract#7\"\nmismatches = 1\n";
        let results = [
            failed("g/1", 1, Some(&[0])),
            failed("g/2", 1, Some(&[5])),
            case("g/3", Status::Errored),
        ];
        let (_, exp) = update(text, &results);
        let g = find(&exp, "g/*")[0];
        assert_eq!(
            (g.status, g.reason.as_str(), g.mismatches),
            (Some(Status::Failed), "tract#7", Some(1))
        );
        let g3 = find(&exp, "g/3")[0];
        assert_eq!(
            (g3.status, g3.reason.as_str()),
            (Some(Status::Errored), "TODO")
        );
        assert_eq!(exp.entries().len(), 2);
        assert!(gate_clean(&exp, &results));

        // No case keeps the glob's status: the most common one wins; a signature that no longer
        // holds is dropped.
        let results = [
            case("g/1", Status::Errored),
            case("g/2", Status::Errored),
            case("g/3", Status::Skipped),
        ];
        let (_, exp) = update(text, &results);
        let g = find(&exp, "g/*")[0];
        assert_eq!((g.status, g.mismatches), (Some(Status::Errored), None));
        assert_eq!(find(&exp, "g/3")[0].status, Some(Status::Skipped));
        assert!(gate_clean(&exp, &results));

        let results = [failed("g/1", 2, None)];
        let (_, exp) = update(text, &results);
        assert_eq!(find(&exp, "g/*")[0].mismatches, None);
    }

    #[test]
    fn update_narrows_a_glob_that_covers_a_passing_case() {
        let text = "[[expect]]\ncase = \"g/*\"\nstatus = \"failed\"\nreason = \"tract#7\"\nlink = \"L\"\nuntil = 2027-01-01\nopset = { min = 13 }\n";
        let results = [
            failed("g/1", 1, Some(&[0])),
            case("g/2", Status::Passed),
            case("g/3", Status::Errored),
        ];
        assert!(!gate_clean(&parse(text), &results));
        let (_, exp) = update(text, &results);
        let cases: Vec<&str> = exp.entries().iter().map(|e| e.case.as_str()).collect();
        assert_eq!(cases, vec!["g/1", "g/3"]);
        for e in exp.entries() {
            assert_eq!(e.reason, "tract#7");
            assert_eq!(e.link.as_deref(), Some("L"));
            assert_eq!(e.until, Some(date("2027-01-01")));
            assert_eq!(e.opset, Some((Some(13), None)));
        }
        assert_eq!(exp.entries()[0].mismatches, Some(1));
        assert_eq!(exp.entries()[1].status, Some(Status::Errored));
        assert!(gate_clean(&exp, &results));
    }

    #[test]
    fn update_keeps_the_tolerances_of_entries_whose_cases_pass() {
        let text = "[[expect]]\ncase = \"x\"\nstatus = \"failed\"\nreason = \"needs rtol\"\nrtol = 0.01\nmismatches = 1\n\n\
                    [[expect]]\ncase = \"g/*\"\nstatus = \"failed\"\nreason = \"loose\"\natol = 0.5\n";
        let results = [
            case("x", Status::Passed),
            case("g/1", Status::Passed),
            failed("g/2", 1, None),
        ];
        let (_, exp) = update(text, &results);
        let x = find(&exp, "x")[0];
        assert_eq!(
            (x.status, x.rtol, x.mismatches, x.reason.as_str()),
            (None, Some(0.01), None, "needs rtol")
        );
        let g = find(&exp, "g/*")[0];
        assert_eq!((g.status, g.atol), (None, Some(0.5)));
        let g2 = find(&exp, "g/2")[0];
        assert_eq!(
            (g2.status, g2.reason.as_str()),
            (Some(Status::Failed), "loose")
        );
        let base = Tolerance::default();
        assert_eq!(exp.tolerance_for("g/2", Some(13), base).atol, 0.5);
        assert_eq!(exp.tolerance_for("x", Some(13), base).rtol, 0.01);
        assert!(gate_clean(&exp, &results));
    }

    #[test]
    fn update_keeps_entries_for_cases_left_out_and_drops_entries_that_apply_to_none() {
        let text = "[[expect]]\ncase = \"t/*\"\nreason = \"tol\"\nrtol = 0.1\n\n\
                    [[expect]]\ncase = \"u/*\"\nreason = \"tol, no case\"\nrtol = 0.1\n\n\
                    [[expect]]\ncase = \"elsewhere\"\nstatus = \"failed\"\nreason = \"filtered out\"\nmismatches = 2\n\n\
                    [[expect]]\ncase = \"gone\"\nstatus = \"failed\"\nreason = \"renamed\"\n\n\
                    [[expect]]\ncase = \"w\"\nstatus = \"failed\"\nreason = \"wrong opset\"\nopset = { min = 99 }\n\n\
                    [[expect]]\ncase = \"*\"\nstatus = \"failed\"\nreason = \"shadowed\"\n\n\
                    [[expect]]\ncase = \"s\"\nstatus = \"failed\"\nreason = \"wins\"\n";
        let results = [failed("s", 1, None), case("t/1", Status::Passed)];
        let original = parse(text);
        // A complete run: what applies to no case goes (the renamed case, the opset range that
        // excludes every case, the tolerance without a case, the shadowed glob).
        let (_, exp) = update(text, &results);
        let cases: Vec<&str> = exp.entries().iter().map(|e| e.case.as_str()).collect();
        assert_eq!(cases, vec!["t/*", "s"]);
        assert_eq!(exp.entries()[0], original.entries()[0]);
        assert_eq!(exp.entries()[1].reason, "wins");
        assert!(gate_clean(&exp, &results));
        let u = original.update(&results, &[]);
        // `s` gains the failure signature.
        assert_eq!((u.added, u.removed, u.changed), (0, 5, 1));

        // A filtered run: entries that may apply to the cases left out stay as they are, the
        // glob `*` too (it is shadowed by `s` here, but it may own `w` and `elsewhere`).
        let (_, exp) = update_left_out(text, &results, &["elsewhere", "w"]);
        let cases: Vec<&str> = exp.entries().iter().map(|e| e.case.as_str()).collect();
        assert_eq!(cases, vec!["t/*", "elsewhere", "w", "*", "s"]);
        for (kept, i) in exp.entries().iter().zip([0, 2, 4, 5]) {
            assert_eq!(kept, &original.entries()[i]);
        }
        assert_eq!(exp.entries()[4].mismatches, Some(1));
        assert!(gate_clean(&exp, &results));
    }

    #[test]
    fn report_3_update_keeps_the_file_order_and_the_entry_that_wins() {
        // Two globs match every case; the first in the file wins. Sorting them would flip that.
        let text = "[[expect]]\ncase = \"spec-examples/openvino_*\"\nstatus = \"errored\"\nreason = \"B: specific\"\n\n\
                    [[expect]]\ncase = \"spec-examples/*gather8*\"\nstatus = \"errored\"\nreason = \"A: broader\"\n\n\
                    [[expect]]\ncase = \"a_new_one_sorts_first\"\nstatus = \"errored\"\nreason = \"C\"\n";
        let results = [
            case("spec-examples/openvino_gather8_example1", Status::Errored),
            case("spec-examples/openvino_gather8_example2", Status::Errored),
            case("a_new_one_sorts_first", Status::Errored),
            case("zz_new", Status::Failed),
            case("aa_new", Status::Errored),
        ];
        let before = parse(text).judge(&results, today());
        assert_eq!(before.cases[0].as_ref().unwrap().entry, 0);
        let u = parse(text).update(&results, &[]);
        let exp = parse(&u.text);
        let cases: Vec<&str> = exp.entries().iter().map(|e| e.case.as_str()).collect();
        // B stays and still wins; A, shadowed on every case, goes; the new cases follow in the
        // order of the run.
        assert_eq!(
            cases,
            vec![
                "spec-examples/openvino_*",
                "a_new_one_sorts_first",
                "zz_new",
                "aa_new"
            ]
        );
        let after = exp.judge(&results, today());
        assert_eq!(
            exp.entries()[after.cases[1].as_ref().unwrap().entry].reason,
            "B: specific"
        );
        assert_eq!((u.added, u.removed, u.changed), (2, 1, 0));
        // Updating again keeps the file as it is.
        assert_eq!(exp.update(&results, &[]).text, u.text);
    }

    #[test]
    fn update_counts_what_changed_and_the_expired_entries_it_kept() {
        let text = "[[expect]]\ncase = \"f\"\nstatus = \"failed\"\nreason = \"r\"\nmismatches = 3\nuntil = 2026-01-01\n\n\
                    [[expect]]\ncase = \"g/*\"\nstatus = \"failed\"\nreason = \"g\"\nuntil = 2027-01-01\n";
        let results = [
            failed("f", 4, None),
            case("g/1", Status::Passed),
            case("g/2", Status::Errored),
            case("g/3", Status::Errored),
        ];
        let u = parse(text).update(&results, &[]);
        // f changed (its signature); g/* was narrowed to g/2 and g/3, which keep its date.
        assert_eq!(
            (u.entries.len(), u.added, u.removed, u.changed),
            (3, 2, 1, 1)
        );
        assert_eq!(u.expired(today()), 1);
        assert_eq!(u.expired(date("2027-06-01")), 3);
    }

    #[test]
    fn update_output_parses_back_and_is_stable() {
        let text = r#"[[expect]]
case = "z/\"quoted\" \\\\ name"
status = "failed"
reason = "multi\nline \"reason\" with \\ and \t tab"
link = "https://example.com/a?b=c"
until = "2027-03-31"
opset = { min = 13, max = 17 }
rtol = 1e-7
atol = 0.1
mismatches = 3
first_mismatch = [1, 0]

[[expect]]
case = "a/**"
reason = "tolerance"
rtol = 3
opset = {}

[[expect]]
case = "m/*"
status = "skipped"
reason = "no Loop"
"#;
        let original = parse(text);
        let results = [
            failed("z/\"quoted\" \\ name", 3, Some(&[1, 0])),
            case("m/1", Status::Skipped),
            case("m/2", Status::Skipped),
            at_opset(failed("n/1", 1, Some(&[])), None),
        ];
        // `a/**` applies to no case of this run, only to one left out.
        let (written, exp) = update_left_out(text, &results, &["a/b"]);
        let cases: Vec<&str> = exp.entries().iter().map(|e| e.case.as_str()).collect();
        assert_eq!(cases, vec!["z/\"quoted\" \\\\ name", "a/**", "m/*", "n/1"]);
        assert_eq!(exp.entries()[0], original.entries()[0]);
        assert_eq!(exp.entries()[1], original.entries()[1]);
        assert_eq!(exp.entries()[2], original.entries()[2]);
        assert_eq!(exp.entries()[3].first_mismatch, Some(vec![]));
        assert!(written.contains("until = 2027-03-31\n"), "{written}");
        assert!(written.contains("opset = {}\n"), "{written}");
        assert!(written.contains("rtol = 1e-7\n"), "{written}");
        assert!(gate_clean(&exp, &results));
        // Updating again changes nothing.
        assert_eq!(exp.update(&results, &["a/b".to_string()]).text, written);
        // Every parsed entry renders back to itself.
        assert_eq!(
            parse(&render(original.entries())).entries(),
            original.entries()
        );
    }

    #[test]
    fn update_of_nothing_writes_only_the_header() {
        // The glob matches a case left out, and the tolerance-only entry applies: both stay.
        let passed = [at_opset(case("spec-examples/a", Status::Passed), Some(16))];
        let left_out = ["onnx-node/test_scatternd_add".to_string()];
        let written = parse(FULL).update(&passed, &left_out).text;
        let exp = parse(&written);
        assert_eq!(exp.entries(), parse(FULL).entries());
        // In a complete run the glob that matches nothing goes.
        let exp = parse(&parse(FULL).update(&passed, &[]).text);
        assert_eq!(exp.entries(), &parse(FULL).entries()[1..]);
        let written = parse("").update(&[case("a", Status::Passed)], &[]).text;
        assert!(written.lines().all(|l| l.starts_with('#')), "{written}");
        assert!(parse(&written).entries().is_empty());
    }

    // The ratchet: after an update, the same results pass the gate, and updating is idempotent.

    const NAMES: [&str; 6] = ["a/1", "a/2", "a/x1", "b/1", "b/2", "c"];
    const MENU: [&str; 8] = [
        "case = \"a/*\"\nstatus = \"failed\"\nreason = \"A\"\n",
        "case = \"a/x*\"\nstatus = \"errored\"\nreason = \"AX\"\nrtol = 0.5\n",
        "case = \"**\"\nstatus = \"skipped\"\nreason = \"ALL\"\nopset = { min = 14 }\n",
        "case = \"a/1\"\nstatus = \"failed\"\nreason = \"A1\"\nmismatches = 1\n",
        "case = \"b/*\"\nreason = \"tolerance\"\natol = 1\n",
        "case = \"b/2\"\nstatus = \"errored\"\nreason = \"B2\"\n",
        "case = \"c\"\nstatus = \"failed\"\nreason = \"C\"\nfirst_mismatch = [0]\n",
        "case = \"{a,b}/?\"\nstatus = \"failed\"\nreason = \"AB\"\nmismatches = 2\n",
    ];

    fn arb_result(name: &'static str) -> impl Strategy<Value = CaseResult> {
        (0..6u8, 0..3usize, 13..15i64).prop_map(move |(kind, n, opset)| {
            let r = match kind {
                0 | 1 => case(name, Status::Passed),
                2 => failed(name, n, (n > 0).then_some(&[0][..])),
                3 => failed(name, n, None),
                4 => case(name, Status::Errored),
                _ => case(name, Status::Skipped),
            };
            at_opset(r, Some(opset))
        })
    }

    proptest! {
        #[test]
        fn after_an_update_the_same_results_pass_the_gate(
            picks in proptest::collection::vec(0..MENU.len(), 0..6),
            results in (
                arb_result(NAMES[0]), arb_result(NAMES[1]), arb_result(NAMES[2]),
                arb_result(NAMES[3]), arb_result(NAMES[4]), arb_result(NAMES[5]),
            ),
        ) {
            let text: String = picks.iter().map(|&i| format!("[[expect]]\n{}\n", MENU[i])).collect();
            let (a, b, c, d, e, f) = results;
            let results = [a, b, c, d, e, f];
            let (written, exp) = update(&text, &results);
            prop_assert!(gate_clean(&exp, &results), "{}\n---\n{}", text, written);
            let j = exp.judge(&results, today());
            for (r, cj) in results.iter().zip(&j.cases) {
                let covered = cj.as_ref().is_some_and(|c| c.outcome == Outcome::ExpectedFailure);
                prop_assert_eq!(covered, r.status != Status::Passed, "{}\n---\n{}", text, written);
            }
            prop_assert_eq!(exp.update(&results, &[]).text, written);
        }
    }
}
