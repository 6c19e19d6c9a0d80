//! `hunt --runtime-cmd ...` against tests/fixtures/runtime/buggy_runtime.py: the planted bug is
//! found, deduplicated, minimized to a case that reproduces it, and shards split a hunt without
//! overlap.

use crate::minimize::buggy;
use crate::support::run;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

/// The (number, seed, case, verdict) rows of a hunt's tried.tsv, in the order tried.
fn rows(dir: &Path) -> Vec<(u64, String, String, String)> {
    std::fs::read_to_string(dir.join("tried.tsv"))
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let text = |k: usize| f[k].to_string();
            (f[0].parse().unwrap(), text(1), text(2), text(3))
        })
        .collect()
}

/// The (number, seed, case) rows of a hunt's tried.tsv.
fn tried(dir: &Path) -> BTreeSet<(u64, String, String)> {
    rows(dir)
        .into_iter()
        .map(|(n, s, c, _)| (n, s, c))
        .collect()
}

#[test]
fn hunt_finds_the_planted_bug_once_per_key_and_its_case_reproduces() {
    if !crate::support::python3("hunt") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("hunt");
    let r = run([
        "hunt",
        "--runtime-cmd",
        &buggy(1),
        "--ops",
        "Gather",
        "--time",
        "4",
        "--out",
        out.to_str().unwrap(),
    ]);
    r.expect_code(0);
    let findings: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("findings.json")).unwrap()).unwrap();
    let list = findings.as_array().unwrap();
    assert!(!list.is_empty(), "{}", r.stdout);
    let mut keys = BTreeSet::new();
    for f in list {
        // The planted bug and nothing else: float Gather, a wrong output no class explains.
        assert_eq!(
            (
                &f["runtime"],
                &f["op"],
                &f["dtype"],
                &f["verdict"],
                &f["diagnosis"]
            ),
            (
                &Value::from("buggy"),
                &Value::from("Gather"),
                &Value::from("float"),
                &Value::from("failed"),
                &Value::from("none")
            ),
            "{f}"
        );
        for key in [
            "runtime_version",
            "version",
            "fault",
            "case",
            "original",
            "seed",
        ] {
            assert!(f.get(key).is_some(), "{key} missing in {f}");
        }
        assert!(
            keys.insert(f["version"].to_string()),
            "a duplicate finding: {f}"
        );
        assert!(f["minimal_size"].as_u64() <= f["original_size"].as_u64());
        // Its directory holds a case that fails the same way.
        let case = out.join(f["case"].as_str().unwrap());
        assert!(case.join("REPORT.md").is_file());
        let again = run([
            "run",
            case.to_str().unwrap(),
            "--runtime-cmd",
            &buggy(1),
            "--format",
            "json",
        ]);
        again.expect_code(1);
        let report: Value = serde_json::from_str(&again.stdout).unwrap();
        assert_eq!(report["cases"][0]["status"], "failed");
    }
    // Once a kind of case fails, its other type pairs come next, out of the seeded order: the
    // row after the first failure is another type pair of the same kind.
    let rows: Vec<(String, String)> = rows(&out).into_iter().map(|(_, _, c, v)| (c, v)).collect();
    let first_failure = rows
        .iter()
        .position(|r| r.1 == "failed")
        .expect("a failure");
    // `test_gather_13_int8_basic_indices_int32` is of the kind `gather_13_basic`.
    let kind = |name: &str| {
        let parts: Vec<&str> = name.split('_').collect();
        let slug = parts[4..].join("_");
        let slug = match slug.rsplit_once("_indices_") {
            Some((s, _)) => s.to_string(),
            None => slug,
        };
        format!("{}_{}_{slug}", parts[1], parts[2])
    };
    let next = rows
        .get(first_failure + 1)
        .expect("a case after the failure");
    assert_eq!(kind(&next.0), kind(&rows[first_failure].0), "{rows:?}");
    // Many cases hit the bug; each key is kept once.
    let counts = r
        .stdout
        .lines()
        .find(|l| l.contains("disagreements"))
        .unwrap_or_default()
        .to_string();
    let n: Vec<u64> = counts
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    assert!(n.len() >= 3 && n[0] > n[1], "{}", r.stdout);
    assert!(r.stderr.contains("finding: buggy Gather-"), "{}", r.stderr);
}

#[test]
fn shards_together_try_exactly_the_cases_of_a_single_hunt() {
    if !crate::support::python3("hunt") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let hunt = |name: &str, shard: Option<&str>| {
        let out = tmp.path().join(name);
        let mut args = vec![
            "hunt".to_string(),
            "--runtime-cmd".into(),
            buggy(999),
            "--ops".into(),
            "GatherElements".into(),
            "--seed".into(),
            "7".into(),
            "--max-cases".into(),
            "25".into(),
            "--time".into(),
            "60".into(),
            "--out".into(),
            out.to_str().unwrap().into(),
        ];
        if let Some(s) = shard {
            args.push("--shard".into());
            args.push(s.into());
        }
        run(&args).expect_code(0);
        tried(&out)
    };
    let all = hunt("all", None);
    let one = hunt("one", Some("1/2"));
    let two = hunt("two", Some("2/2"));
    assert_eq!(all.len(), 25);
    assert!(one.is_disjoint(&two));
    assert_eq!(one.union(&two).cloned().collect::<BTreeSet<_>>(), all);
    assert!(one.iter().all(|(i, _, _)| i % 2 == 0));
    // The same seed tries the same cases in the same order.
    assert_eq!(hunt("again", None), all);
}

#[test]
fn hunt_refuses_bad_arguments_with_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("h");
    let out = out.to_str().unwrap();
    run(["hunt", "--out", out]).expect_code(2);
    run([
        "hunt",
        "--runtime-cmd",
        "true",
        "--ops",
        "Gaher",
        "--out",
        out,
    ])
    .expect_code(2);
    run([
        "hunt",
        "--runtime-cmd",
        "true",
        "--shard",
        "3/2",
        "--out",
        out,
    ])
    .expect_code(2);
    run(["hunt", "--runtime-cmd", "true", "--time", "0", "--out", out]).expect_code(2);
}

/// Adversary D1: `hunt --out` on a directory holding a `findings.json` beside the user's files
/// refuses it (exit 2) and removes nothing, whether the runtime starts or not; a hunt's own
/// output, finding directories included, is replaced only while it holds nothing else.
#[test]
fn hunt_out_never_removes_what_it_did_not_write() {
    if !crate::support::python3("hunt") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    std::fs::create_dir_all(project.join("src")).unwrap();
    for f in ["REPORT.md", "findings.json", "src/main.rs", "thesis.tex"] {
        std::fs::write(project.join(f), f).unwrap();
    }
    let before = crate::minimize::tree(&project);
    let hunt = |runtime: &str, out: &Path| {
        run([
            "hunt",
            "--runtime-cmd",
            runtime,
            "--ops",
            "Gather",
            "--time",
            "4",
            "--out",
            out.to_str().unwrap(),
        ])
    };
    let buggy_1 = buggy(1);
    for runtime in [buggy_1.as_str(), "/nonexistent/runtime"] {
        let r = hunt(runtime, &project);
        r.expect_code(2);
        assert!(
            r.stderr
                .contains("holds REPORT.md, which onnx-idx-check did not write there"),
            "{}",
            r.stderr
        );
        assert_eq!(crate::minimize::tree(&project), before);
    }
    // A runtime that cannot start leaves even a hunt's own output as it was.
    let out = tmp.path().join("hunt");
    hunt(&buggy(1), &out).expect_code(0);
    let first = crate::minimize::tree(&out);
    let finding = first
        .iter()
        .find_map(|f| f.strip_suffix("/REPORT.md"))
        .unwrap_or_else(|| panic!("no finding directory: {first:?}"))
        .to_string();
    hunt("/nonexistent/runtime", &out).expect_code(2);
    assert_eq!(crate::minimize::tree(&out), first);
    // A file of the user's inside a finding's directory: refused, kept.
    let notes = out.join(&finding).join("notes.txt");
    std::fs::write(&notes, "mine").unwrap();
    let r = hunt(&buggy(1), &out);
    r.expect_code(2);
    assert!(
        r.stderr.contains(&format!("holds {finding}/notes.txt")),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "mine");
    // Without it, the earlier hunt's output is replaced by a new one.
    std::fs::remove_file(&notes).unwrap();
    hunt(&buggy(1), &out).expect_code(0);
    assert!(out.join("findings.json").is_file());
    assert!(!crate::minimize::tree(&out).is_empty());
}
