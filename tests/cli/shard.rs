//! `--shard K/N`: a stable partition of the cases by name, for CI matrices.

use crate::support::{cases, count, fixtures, run, run_json};
use serde_json::Value;
use std::collections::BTreeMap;

/// Name -> status of every case of a report.
fn verdicts(report: &Value) -> BTreeMap<String, String> {
    cases(report)
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                c["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The whole of `tests/fixtures/` (every tree in it), in shard `shard` or whole.
fn fixtures_run(shard: Option<&str>) -> (i32, Value) {
    match shard {
        Some(s) => run_json(&fixtures(), &["--shard", s]),
        None => run_json(&fixtures(), &[]),
    }
}

#[test]
fn the_shards_partition_the_run_without_overlap() {
    let (_, full) = fixtures_run(None);
    let full = verdicts(&full);
    for n in [2, 3] {
        let mut union = BTreeMap::new();
        for k in 1..=n {
            let (code, report) = fixtures_run(Some(&format!("{k}/{n}")));
            let shard = verdicts(&report);
            assert!(!shard.is_empty(), "shard {k}/{n} is empty");
            assert_eq!(count(&report, "total"), shard.len() as u64);
            // The exit status is that of the shard's own cases.
            let bad = shard.values().any(|s| s == "failed" || s == "errored");
            assert_eq!(code, i32::from(bad), "shard {k}/{n}");
            for (name, status) in shard {
                // Each case in one shard only, with the verdict of the full run.
                assert_eq!(full.get(&name), Some(&status), "{name} in {k}/{n}");
                assert!(
                    union.insert(name.clone(), k).is_none(),
                    "{name} is in two shards of {n}"
                );
            }
        }
        assert_eq!(
            union.keys().collect::<Vec<_>>(),
            full.keys().collect::<Vec<_>>(),
            "the union of the {n} shards is the full run"
        );
    }
}

/// The shard a name falls in, by the documented rule: FNV-1a 64 of the name's bytes, modulo
/// N, plus 1. Written here again so a change of hash in the tool breaks this test.
fn fnv1a_shard(name: &str, n: u64) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h % n + 1
}

#[test]
fn the_shard_assignment_is_stable() {
    let (_, report) = fixtures_run(Some("1/2"));
    let names: Vec<String> = verdicts(&report).into_keys().collect();
    // A change of hash (or of how names are formed) changes this list.
    crate::snapshots::settings()
        .bind(|| insta::assert_snapshot!("shard_1_of_2_names", names.join("\n")));
    // ... and so does this independent computation of the documented rule.
    let (_, full) = fixtures_run(None);
    for name in verdicts(&full).keys() {
        assert_eq!(names.contains(name), fnv1a_shard(name, 2) == 1, "{name}");
    }
}

#[test]
fn an_empty_shard_is_not_an_error() {
    // A single case lands in one of two shards; the other is empty.
    let case = fixtures().join("failing/wrong_value");
    let (first, _) = run_json(&case, &["--shard", "1/2"]);
    let (second, _) = run_json(&case, &["--shard", "2/2"]);
    let (empty, full) = if fnv1a_shard("wrong_value", 2) == 1 {
        ("2/2", first)
    } else {
        ("1/2", second)
    };
    assert_eq!(full, 1, "the shard with the failing case fails");
    let (code, report) = run_json(&case, &["--shard", empty]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(count(&report, "total"), 0);
}

#[test]
fn a_malformed_shard_is_a_usage_error() {
    for bad in ["0/3", "4/3", "1/0", "x/2", "3"] {
        let r = run(["run", "tests/fixtures", "--shard", bad]);
        r.expect_code(2);
        assert!(
            r.stderr.contains(&format!("--shard '{bad}'")),
            "{bad}: {}",
            r.stderr
        );
    }
}

/// The CI example of docs/guide/ci.md runs each shard with the same expectations file. An entry whose
/// case exists but falls in another shard is reported as matching no case (unmatched is
/// judged on the shard's results only), so with `--strict-expectations` every shard fails even
/// when every listed case fails exactly as listed.
#[test]
fn strict_expectations_hold_in_every_shard() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    // Two copies of a failing case, named so that they fall in different shards of 2.
    let names: Vec<String> = (0..)
        .map(|i| format!("case_{i}"))
        .scan(None, |first: &mut Option<u64>, n| {
            let s = fnv1a_shard(&n, 2);
            Some(match first {
                None => {
                    *first = Some(s);
                    Some(n)
                }
                Some(f) if *f != s => Some(n),
                _ => None,
            })
        })
        .flatten()
        .take(2)
        .collect();
    let mut toml = String::new();
    for n in &names {
        crate::support::copy_case(
            &crate::support::fixture("failing/wrong_value"),
            &tree.join(n),
        );
        toml.push_str(&format!(
            "[[expect]]\ncase = \"{n}\"\nstatus = \"failed\"\nreason = \"known\"\n\n"
        ));
    }
    let exp = tmp.path().join("exp.toml");
    std::fs::write(&exp, toml).unwrap();
    for k in 1..=2 {
        let (code, report) = run_json(
            &tree,
            &[
                "--shard",
                &format!("{k}/2"),
                "--expectations",
                exp.to_str().unwrap(),
                "--strict-expectations",
            ],
        );
        assert_eq!(count(&report, "total"), 1);
        assert_eq!(count(&report, "expected_failures"), 1);
        assert_eq!(code, 0, "shard {k}/2: {report:#}");
    }
}
