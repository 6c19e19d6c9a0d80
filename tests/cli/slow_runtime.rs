//! A runtime's time limit grows with the request: `tests/fixtures/runtime/slow_runtime.py` is
//! correct but takes time in proportion to its inputs, so a large case must pass where a fixed
//! `--timeout` would call it hung, and a real hang on the same case must still end as one, in
//! time bounded by the case's size.

use crate::support::{python3, root, run, run_within};
use std::time::{Duration, Instant};

/// The stress case of 2^24 + 8 uint8 data elements (and 12 indices), the onnx reference's slow
/// one: with `--timeout 1` it may take 1 × (2^24 + 20) / 2^22 ≈ 4 s.
const BIG: &str = "^test_gather_elements_13_uint8_stress_axis_16777224$";

fn slow(extra: &str) -> String {
    let script = root().join("tests/fixtures/runtime/slow_runtime.py");
    format!("python3 '{}' --per-4mi 0.5{extra}", script.display())
}

#[test]
fn a_large_case_gets_time_in_proportion_to_its_size_and_a_hang_on_it_still_ends() {
    if !python3("slow_runtime") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let suite = tmp.path().join("suite");
    run([
        "generate",
        "--profile",
        "stress",
        "--ops",
        "GatherElements",
        suite.to_str().unwrap(),
    ])
    .expect_code(0);
    // About 2 s of work, twice the --timeout of 1 s: correct, and slow in proportion.
    let r = run([
        "run",
        suite.to_str().unwrap(),
        "--filter",
        BIG,
        "--runtime-cmd",
        &slow(""),
        "--timeout",
        "1",
    ]);
    r.expect_code(0);
    assert!(r.stdout.contains("1 case: 1 passed"), "{}", r.stdout);
    // The same runtime hanging on that case is still a hang, after the scaled limit.
    let start = Instant::now();
    let r = run_within(
        Duration::from_secs(120),
        [
            "run",
            suite.to_str().unwrap(),
            "--filter",
            BIG,
            "--runtime-cmd",
            &slow(" --hang"),
            "--timeout",
            "1",
        ],
    );
    r.expect_code(1);
    assert!(r.stdout.contains("timed out"), "{}", r.stdout);
    // It waited the scaled limit (4 s), not more than a few seconds past it.
    let limit = r
        .stdout
        .split("no answer after ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("no limit named: {}", r.stdout));
    assert!((4.0..4.1).contains(&limit), "{limit}: {}", r.stdout);
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "{:?}",
        start.elapsed()
    );
    // A small case gets --timeout alone: a hang on it ends in about 1 s.
    let small = run_within(
        Duration::from_secs(120),
        [
            "run",
            suite.to_str().unwrap(),
            "--filter",
            "^test_gather_elements_13_float_stress_axis_70000$",
            "--runtime-cmd",
            &slow(" --hang --hang-above 0"),
            "--timeout",
            "1",
        ],
    );
    small.expect_code(1);
    assert!(
        small.stdout.contains("no answer after 1 s"),
        "{}",
        small.stdout
    );
}
