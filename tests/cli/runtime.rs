//! `run --runtime-cmd`: the protocol's Rust side against the fixture runtime of
//! `tests/fixtures/runtime/fixture_runtime.py`, which crashes, hangs, refuses, writes nothing,
//! writes garbage or changes its outputs between runs as each case's name asks. Every such case
//! must be reported as itself, and the run must complete. The fixture is a Python script of the
//! standard library alone: these tests say they are skipped when `python3` is missing.

use crate::support::{case, command, python3, root, run};
use std::path::Path;

fn fixture_cmd(extra: &str) -> String {
    let script = root().join("tests/fixtures/runtime/fixture_runtime.py");
    format!("python3 '{}'{extra}", script.display())
}

/// A tree of copies of one bundled case, named for the fixture's modes.
fn tree(dir: &Path, modes: &[&str]) {
    let src = root().join("testdata/onnx-node/test_gather_0");
    for m in modes {
        copy_dir(&src, &dir.join(format!("{m}_gather")));
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

#[test]
fn every_misbehaviour_of_a_runtime_is_reported_as_itself_and_the_run_completes() {
    if !python3("every_misbehaviour") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let modes = [
        "ok", "crash", "abort", "hang", "refuse", "nothing", "garbage", "flaky", "noisy",
    ];
    tree(dir.path(), &modes);
    let cmd = fixture_cmd("");
    let d = dir.path().to_str().unwrap();
    let out = command()
        .args([
            "run",
            d,
            "--runtime-cmd",
            &cmd,
            "--timeout",
            "2",
            "--repeat",
            "2",
        ])
        .args(["--color", "never", "-j", "2", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["runtime"]["name"], "fixture");
    assert_eq!(report["runtime"]["version"], "1.0");
    let expect = [
        ("ok_gather", "passed", None, ""),
        (
            "crash_gather",
            "errored",
            Some("crashed"),
            "killed by signal 8 (SIGFPE)",
        ),
        (
            "abort_gather",
            "errored",
            Some("crashed"),
            "killed by signal 6 (SIGABRT)",
        ),
        (
            "hang_gather",
            "errored",
            Some("timed-out"),
            "no answer after 2 s (--timeout)",
        ),
        (
            "refuse_gather",
            "errored",
            Some("refused"),
            "runtime fixture refused: fixture refuses refuse_gather: its runtime has no such op",
        ),
        (
            "nothing_gather",
            "errored",
            Some("wrote-nothing"),
            "it answered done, but output 0 has no file",
        ),
        (
            "garbage_gather",
            "errored",
            None,
            "fixture: output_0.pb: not a valid ONNX TensorProto",
        ),
        (
            "flaky_gather",
            "failed",
            Some("nondeterministic"),
            "differs between runs of runtime fixture: run 2 of 2 (1 thread) against run 1",
        ),
        (
            "noisy_gather",
            "errored",
            Some("crashed"),
            "protocol: a reply that is not JSON",
        ),
    ];
    for (name, status, fault, reason) in expect {
        let c = case(&report, name);
        assert_eq!(c["status"], status, "{name}: {c}");
        assert_eq!(c["fault"].as_str(), fault, "{name}: {c}");
        assert!(
            c["reason"].as_str().unwrap_or("").contains(reason),
            "{name}: {}",
            c["reason"]
        );
    }
    // The flaky output's changed element, as a mismatch of run 2 against run 1.
    let flaky = &case(&report, "flaky_gather")["data_sets"][0];
    assert_eq!(flaky["fault"], "nondeterministic");
    let changed = flaky["outputs"].as_array().unwrap().last().unwrap();
    assert_eq!(changed["mismatches"], 1);
    let faults = &report["summary"]["faults"];
    assert_eq!(
        (&faults["crashed"], &faults["timed-out"], &faults["refused"]),
        (&3.into(), &1.into(), &1.into())
    );
    assert_eq!(
        (&faults["wrote-nothing"], &faults["nondeterministic"]),
        (&1.into(), &1.into())
    );
}

#[test]
fn the_human_report_labels_each_fault_and_counts_them() {
    if !python3("the_human_report_labels") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path(), &["ok", "crash", "refuse", "nothing"]);
    let cmd = fixture_cmd("");
    let r = run([
        "run",
        dir.path().to_str().unwrap(),
        "--runtime-cmd",
        &cmd,
        "--color",
        "never",
    ]);
    r.expect_code(1);
    for line in ["CRASHED [", "REFUSED [", "NOTHING [", "   PASS ["] {
        assert!(r.stdout.contains(line), "{line}: {}", r.stdout);
    }
    assert!(
        r.stdout.contains("  runtime fixture 1.0 (python3 "),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(
            "4 cases: 1 passed, 3 errored, runtime: 1 crashed, 1 refused, 1 wrote nothing"
        ),
        "{}",
        r.stdout
    );
    // The rerun command keeps the runtime.
    assert!(
        r.stdout
            .contains("--filter '^crash_gather$' --runtime-cmd "),
        "{}",
        r.stdout
    );
}

#[test]
fn junit_markdown_and_github_tell_each_fault() {
    if !python3("junit_types") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path(), &["crash", "refuse"]);
    let cmd = fixture_cmd("");
    let r = run([
        "run",
        dir.path().to_str().unwrap(),
        "--runtime-cmd",
        &cmd,
        "--format",
        "junit",
    ]);
    r.expect_code(1);
    assert!(r.stdout.contains(r#"type="crashed""#), "{}", r.stdout);
    assert!(r.stdout.contains(r#"type="refused""#), "{}", r.stdout);
    // Markdown and GitHub's annotations label each case as the human report does.
    let d = dir.path().to_str().unwrap();
    let r = run(["run", d, "--runtime-cmd", &cmd, "--format", "markdown"]);
    r.expect_code(1);
    assert!(
        r.stdout.contains("| CRASHED |") || r.stdout.contains("CRASHED"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("REFUSED"), "{}", r.stdout);
    let out = command()
        .env("GITHUB_ACTIONS", "true")
        .args(["run", d, "--runtime-cmd", &cmd, "--color", "never"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("title=onnx-idx-check%3A CRASHED crash_gather"),
        "{text}"
    );
    assert!(
        text.contains("title=onnx-idx-check%3A REFUSED refuse_gather"),
        "{text}"
    );
}

#[test]
fn a_refusal_where_the_spec_requires_an_error_passes() {
    if !python3("a_refusal_where") {
        return;
    }
    // An out-of-range index: refusing is what the spec asks for.
    let dir = tempfile::tempdir().unwrap();
    copy_dir(
        &root().join("tests/fixtures/errored/gather_index_out_of_range"),
        &dir.path().join("refuse_oob"),
    );
    let cmd = fixture_cmd("");
    let r = run(["run", dir.path().to_str().unwrap(), "--runtime-cmd", &cmd]);
    r.expect_code(0);
}

#[test]
fn threads_are_asked_for_only_under_repeat() {
    if !python3("threads_are_asked") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path(), &["threads"]);
    let cmd = fixture_cmd("");
    let d = dir.path().to_str().unwrap();
    // One run asks for no thread count: the fixture refuses.
    run(["run", d, "--runtime-cmd", &cmd]).expect_code(1);
    run(["run", d, "--runtime-cmd", &cmd, "--repeat", "3"]).expect_code(0);
}

/// OpenVINO's worker dies with SIGFPE on a zero-size Gather while the child its telemetry forked
/// still holds the worker's output open: the run waited for the end of file until `--timeout`
/// and reported a time-out. The worker's exit is what tells.
#[test]
fn a_worker_that_dies_while_its_child_holds_its_output_is_crashed_not_timed_out() {
    if !python3("a_worker_that_dies_while_its_child") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path(), &["orphan", "ok"]);
    let cmd = fixture_cmd("");
    let started = std::time::Instant::now();
    let out = command()
        .args([
            "run",
            dir.path().to_str().unwrap(),
            "--runtime-cmd",
            &cmd,
            "--timeout",
            "60",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let orphan = case(&report, "orphan_gather");
    assert_eq!(orphan["fault"], "crashed", "{orphan}");
    assert!(
        orphan["reason"]
            .as_str()
            .unwrap()
            .contains("killed by signal 8 (SIGFPE)"),
        "{}",
        orphan["reason"]
    );
    assert_eq!(case(&report, "ok_gather")["status"], "passed");
    assert!(started.elapsed() < std::time::Duration::from_secs(45));
}

#[test]
fn a_worker_that_grows_past_its_memory_limit_is_stopped_as_crashed() {
    if !python3("a_worker_that_grows") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path(), &["hog", "ok"]);
    let cmd = fixture_cmd("");
    let out = command()
        .env("ONNX_IDX_CHECK_WORKER_MEMORY", (200u64 << 20).to_string())
        .args([
            "run",
            dir.path().to_str().unwrap(),
            "--runtime-cmd",
            &cmd,
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let hog = case(&report, "hog_gather");
    assert_eq!(hog["fault"], "crashed");
    assert!(
        hog["reason"]
            .as_str()
            .unwrap()
            .contains("MiB, past the 200 MiB limit for a worker"),
        "{}",
        hog["reason"]
    );
    assert_eq!(case(&report, "ok_gather")["status"], "passed");
}

#[test]
fn a_runtime_that_cannot_start_stops_the_run_with_its_reason() {
    if !python3("a_runtime_that_cannot_start") {
        return;
    }
    let d = root().join("testdata/onnx-node/test_gather_0");
    let d = d.to_str().unwrap();
    let r = run(["run", d, "--runtime-cmd", &fixture_cmd(" --hello-error")]);
    r.expect_code(2);
    assert!(r.stderr.contains("could not start"), "{}", r.stderr);
    assert!(
        r.stderr.ends_with(": fixture: no runtime here\n"),
        "{}",
        r.stderr
    );
    let r = run(["run", d, "--runtime-cmd", &fixture_cmd(" --not-json")]);
    r.expect_code(2);
    assert!(
        r.stderr
            .contains("its first line is not the protocol's hello")
            && r.stderr.contains("Welcome to the fixture runtime!"),
        "{}",
        r.stderr
    );
    let r = run(["run", d, "--runtime", "caffe2"]);
    r.expect_code(2);
    assert!(r.stderr.contains("--runtime caffe2: no such runtime; the bundled ones are onnxruntime, openvino, tract, tvm, iree, tinygrad, onnxruntime-web, onnx-reference"), "{}", r.stderr);
    let r = run(["run", d, "--repeat", "2"]);
    r.expect_code(2);
    assert!(
        r.stderr.contains("--repeat 2 needs a runtime"),
        "{}",
        r.stderr
    );
}

#[test]
fn expectations_entries_may_name_the_runtime_they_are_about() {
    if !python3("expectations_entries_may_name") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cases = dir.path().join("cases");
    tree(&cases, &["refuse", "crash"]);
    let file = dir.path().join("expectations.toml");
    std::fs::write(
        &file,
        "[[expect]]\ncase = \"refuse_gather\"\nruntime = \"fixture\"\nstatus = \"errored\"\nreason = \"no such op in the fixture\"\n\n\
         [[expect]]\ncase = \"crash_gather\"\nruntime = \"onnxruntime\"\nstatus = \"errored\"\nreason = \"about another runtime\"\n",
    )
    .unwrap();
    let cmd = fixture_cmd("");
    let c = cases.to_str().unwrap();
    let f = file.to_str().unwrap();
    let out = command()
        .args([
            "run",
            c,
            "--runtime-cmd",
            &cmd,
            "--expectations",
            f,
            "--strict-expectations",
        ])
        .args(["--format", "json"])
        .output()
        .unwrap();
    // The crash is not excused: its entry is about onnxruntime, and is not unmatched either.
    assert_eq!(out.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        case(&report, "refuse_gather")["expectation"]["outcome"],
        "expected-failure"
    );
    assert!(case(&report, "crash_gather")["expectation"].is_null());
    assert_eq!(
        report["summary"]["gate"]["reasons"]
            .as_array()
            .unwrap()
            .len(),
        1,
        "{}",
        report["summary"]["gate"]
    );
    // Rewriting the file would drop the other runtime's entry: refused.
    let r = run([
        "run",
        c,
        "--runtime-cmd",
        &cmd,
        "--expectations",
        f,
        "--update-expectations",
    ]);
    r.expect_code(2);
    assert!(
        r.stderr
            .contains("without its entries for the runtime(s) onnxruntime"),
        "{}",
        r.stderr
    );
}

/// The pids of live processes whose environment holds `marker` (zombies have none).
#[cfg(target_os = "linux")]
fn processes_with(marker: &str) -> Vec<u32> {
    let needle = format!("ONNX_IDX_CHECK_TEST_MARKER={marker}");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .map(|env| env.split(|&b| b == 0).any(|v| v == needle.as_bytes()))
                .unwrap_or(false)
        })
        .collect()
}

/// Whether `pid` leads a session (its session id, the fourth field after the command in
/// `/proc/PID/stat`, is its own pid).
#[cfg(target_os = "linux")]
fn leads_a_session(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    after.split_whitespace().nth(3) == Some(pid.to_string().as_str())
}

#[cfg(target_os = "linux")]
#[test]
fn an_interrupted_run_takes_its_busy_workers_with_it() {
    use std::os::unix::process::ExitStatusExt;
    use std::time::{Duration, Instant};
    if !python3("an_interrupted_run") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // It hangs after forking a child into a session of its own, which a group kill misses.
    tree(dir.path(), &["daemonhang"]);
    let marker = dir.path().display().to_string();
    // The tool's temporary directory, to see that its scratch space goes too.
    let tmp = tempfile::tempdir().unwrap();
    let mut tool = std::process::Command::new(env!("CARGO_BIN_EXE_onnx-idx-check"))
        .args([
            "run",
            &marker,
            "--runtime-cmd",
            &fixture_cmd(""),
            "--timeout",
            "0",
        ])
        .env("ONNX_IDX_CHECK_TEST_MARKER", &marker)
        .env("TMPDIR", tmp.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let until = |secs: u64, what: &dyn Fn() -> bool| {
        let end = Instant::now() + Duration::from_secs(secs);
        while Instant::now() < end {
            if what() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    };
    // The worker is up (its own process group, so a terminal's Ctrl-C would not reach it), and
    // so is its child in a session of its own.
    let busy = until(30, &|| {
        processes_with(&marker).into_iter().any(leads_a_session)
    });
    assert!(busy, "no worker started");
    std::thread::sleep(Duration::from_millis(300));
    let interrupted = std::process::Command::new("kill")
        .args(["-INT", &tool.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    let status = tool.wait().unwrap();
    assert_eq!(status.signal(), Some(2), "{status:?}");
    let gone = until(10, &|| processes_with(&marker).is_empty());
    assert!(gone, "left running: {:?}", processes_with(&marker));
    // Its scratch directory (the case's inputs, written for the worker) is removed too.
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "left in the temporary directory: {left:?}");
}

#[test]
fn a_worker_that_answered_where_the_spec_requires_an_error_is_not_reused() {
    if !python3("a_worker_that_answered") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Names sort the damaging case first; one job runs them in that order.
    copy_dir(
        &root().join("tests/fixtures/errored/gather_index_out_of_range"),
        &dir.path().join("damage_gather"),
    );
    tree(dir.path(), &["ok"]);
    let d = dir.path().to_str().unwrap();
    let r = run([
        "run",
        d,
        "--runtime-cmd",
        &fixture_cmd(""),
        "-j",
        "1",
        "--format",
        "json",
    ]);
    r.expect_code(1);
    let report = r.json();
    assert_eq!(case(&report, "damage_gather")["status"], "failed");
    // A fresh worker ran it: the damaged one would have written garbage.
    assert_eq!(case(&report, "ok_gather")["status"], "passed", "{report}");
}

/// Two `--runtime-cmd` workers whose hello gives the same name (two builds of one runtime, one
/// of them wrong): each keeps its own column, `fixture` and `fixture#2`, in the JSON's
/// `runtimes` and in every case's `runtimes`, and the top-level gate fails as the exit status
/// does.
#[test]
fn two_runtimes_of_one_name_keep_a_column_each() {
    if !python3("two_runtimes_of_one_name") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path(), &["ok"]);
    let right = fixture_cmd("");
    let wrong = format!("env FIXTURE_WRONG=1 {right}");
    let d = dir.path().to_str().unwrap();
    let matrix = |format: &str| {
        run([
            "run",
            d,
            "--runtime-cmd",
            &right,
            "--runtime-cmd",
            &wrong,
            "--format",
            format,
            "--color",
            "never",
        ])
    };
    let r = matrix("json");
    r.expect_code(1);
    let j = r.json();
    let names: Vec<&str> = j["runtimes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["fixture", "fixture#2"]);
    let cells = &j["cases"][0]["runtimes"];
    assert_eq!(cells["fixture"]["status"], "passed", "{cells}");
    assert_eq!(cells["fixture#2"]["status"], "failed", "{cells}");
    assert_eq!(j["gate"]["status"], "failed");
    let reasons = j["gate"]["reasons"].as_array().unwrap();
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    assert_eq!(reasons[0]["runtime"], "fixture#2");
    assert_eq!(reasons[0]["kind"], "cases");

    // The table heads its columns the same way, and no line ends in spaces.
    let r = matrix("human");
    r.expect_code(1);
    let head = r.stdout.lines().next().unwrap();
    assert_eq!(
        head.split_whitespace().collect::<Vec<_>>(),
        ["case", "fixture", "fixture#2"]
    );
    assert!(r.stdout.contains("    fixture#2: FAIL: "), "{}", r.stdout);
    for line in r.stdout.lines() {
        assert_eq!(line, line.trim_end(), "trailing spaces in {line:?}");
    }

    // One runtime alone passes: the wrong one alone fails.
    run(["run", d, "--runtime-cmd", &right]).expect_code(0);
}

/// A runtime's 500 KB refusal: whole in the JSON and JUnit reports; on the terminal one line,
/// shortened in the middle so that its start and its cause (at the end) both show, and its
/// newline, ESC and workflow command escaped.
#[test]
fn a_long_refusal_is_whole_in_reports_and_shortened_in_the_middle_on_the_terminal() {
    if !python3("a_long_refusal") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path(), &["longrefuse"]);
    let cmd = fixture_cmd("");
    let junit = dir.path().join("r.xml");
    let json = dir.path().join("r.json");
    let r = run([
        "run".into(),
        dir.path().as_os_str().to_owned(),
        "--runtime-cmd".into(),
        cmd.into(),
        "--color".into(),
        "never".into(),
        "--report".into(),
        format!("junit={}", junit.display()).into(),
        "--report".into(),
        format!("json={}", json.display()).into(),
    ] as [std::ffi::OsString; 10]);
    r.expect_code(1);
    let middle = "x".repeat(500_000);
    let whole = format!(
        "START of the message\n::error::injected\x1b[2J {middle} CAUSE: axis value is not set"
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let reason = report["cases"][0]["reason"].as_str().unwrap();
    assert!(reason.ends_with(&whole), "{}", &reason[..200]);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains(&middle), "the JUnit report cut the message");
    assert!(xml.contains("CAUSE: axis value is not set"));
    // The terminal: no line longer than a few thousand characters, both ends shown.
    assert!(
        r.stdout.lines().all(|l| l.len() < 4096),
        "a line of {} bytes",
        r.stdout.lines().map(str::len).max().unwrap_or(0)
    );
    let line = r
        .stdout
        .lines()
        .find(|l| l.contains("START of the message"))
        .unwrap_or_else(|| panic!("{}", &r.stdout[..r.stdout.len().min(2000)]));
    assert!(
        line.contains("START of the message\\n::error::injected\\u{1b}[2J x"),
        "{line}"
    );
    assert!(line.ends_with("x CAUSE: axis value is not set"), "{line}");
    assert!(line.contains(" chars] … "), "{line}");
    assert!(!r.stdout.contains('\x1b'));
    assert!(!r.stdout.lines().any(|l| l.starts_with("::")));
}

#[test]
fn a_protocol_fault_after_a_reply_is_charged_to_its_case_not_the_next() {
    if !python3("a_protocol_fault_after_a_reply") {
        return;
    }
    // Each run: a faulty case, then (names sort so, and -j 1 keeps the order) an innocent one.
    for (fault, blame) in [
        ("double", Some("answered request")),
        (
            "closeout",
            Some("closed its output after answering request"),
        ),
        // Its second reply comes too late to blame it: the next request goes to a fresh worker.
        ("late", None),
    ] {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path(), &[fault, "ok"]);
        // A fault is charged when it comes within a few milliseconds of the reply: on a loaded
        // machine the worker may not be scheduled in time, so a missed fault is tried again
        // (a fault never charged in three runs fails below).
        let mut tries = 0;
        let (out, report) = loop {
            tries += 1;
            let out = command()
                .args(["run", dir.path().to_str().unwrap(), "--runtime-cmd"])
                .arg(fixture_cmd(""))
                .args(["--timeout", "20", "-j", "1", "--format", "json"])
                .output()
                .unwrap();
            let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            let charged = case(&report, &format!("{fault}_gather"))["status"] != "passed";
            if blame.is_none() || charged || tries == 3 {
                break (out, report);
            }
        };
        let innocent = case(&report, "ok_gather");
        assert_eq!(innocent["status"], "passed", "after {fault}: {innocent}");
        let faulty = case(&report, &format!("{fault}_gather"));
        match blame {
            Some(why) => {
                assert_eq!(faulty["status"], "errored", "{fault}: {faulty}");
                assert_eq!(faulty["fault"], "crashed", "{fault}: {faulty}");
                let reason = faulty["reason"].as_str().unwrap();
                assert!(reason.contains(why), "{fault}: {reason}");
                assert_eq!(out.status.code(), Some(1), "{fault}");
            }
            None => {
                assert_eq!(faulty["status"], "passed", "{fault}: {faulty}");
                assert_eq!(out.status.code(), Some(0), "{fault}");
            }
        }
    }
}

#[cfg(target_os = "linux")]
#[test]
fn what_a_worker_forked_into_its_own_session_does_not_outlive_the_run() {
    use std::time::{Duration, Instant};
    if !python3("what_a_worker_forked_into_its_own_session") {
        return;
    }
    // daemon_: the worker answers and lives on until the run ends; daemonhang_: it is killed
    // for its timeout while its child is still its own.
    for mode in ["daemon", "daemonhang"] {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path(), &[mode]);
        let marker = dir.path().display().to_string();
        let out = command()
            .args(["run", &marker, "--runtime-cmd"])
            .arg(fixture_cmd(""))
            .args(["--timeout", "3", "--format", "json"])
            .env("ONNX_IDX_CHECK_TEST_MARKER", &marker)
            .output()
            .unwrap();
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let want = if mode == "daemon" {
            "passed"
        } else {
            "errored"
        };
        assert_eq!(case(&report, &format!("{mode}_gather"))["status"], want);
        // The tool has exited; nothing it started may be left (its child slept for a minute).
        let end = Instant::now() + Duration::from_secs(5);
        while !processes_with(&marker).is_empty() && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(
            processes_with(&marker).is_empty(),
            "{mode}: left running: {:?}",
            processes_with(&marker)
        );
    }
}

#[test]
fn adapters_lists_the_bundled_ones_and_writes_them_out_without_replacing_a_user_s_file() {
    let r = run(["adapters"]);
    r.expect_code(0);
    for want in [
        "onnxruntime.py",
        "openvino.py",
        "tract.py",
        "tvm.py",
        "iree.py",
        "tinygrad.py",
        "onnxruntime_web.js",
        "npm install onnxruntime-web@1.30.0",
        "onnx_reference.py",
        "onnx_idx_check_worker.py",
        "pip install onnxruntime",
    ] {
        assert!(r.stdout.contains(want), "{want}: {}", r.stdout);
    }
    let dir = tempfile::tempdir().unwrap();
    let to = dir.path().join("adapters");
    let to_s = to.to_str().unwrap();
    run(["adapters", "--write", to_s]).expect_code(0);
    // The files are the ones in the source tree, byte for byte.
    let src = root().join("crates/checker/src/runtime/adapters");
    let mut names: Vec<_> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    let mut written: Vec<_> = std::fs::read_dir(&to)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    written.sort();
    assert_eq!(written, names);
    for n in &names {
        assert_eq!(
            std::fs::read(to.join(n)).unwrap(),
            std::fs::read(src.join(n)).unwrap()
        );
    }
    // Again into the same directory: identical files are fine.
    let again = run(["adapters", "--write", to_s]);
    again.expect_code(0);
    assert!(
        again
            .stderr
            .contains(&format!("0 of {} files written", names.len())),
        "{}",
        again.stderr
    );
    // A file the user changed is refused, and nothing else is written.
    std::fs::write(to.join("tract.py"), "# mine\n").unwrap();
    std::fs::remove_file(to.join("openvino.py")).unwrap();
    let refused = run(["adapters", "--write", to_s]);
    refused.expect_code(2);
    assert!(refused.stderr.contains("tract.py"), "{}", refused.stderr);
    assert_eq!(
        std::fs::read_to_string(to.join("tract.py")).unwrap(),
        "# mine\n"
    );
    assert!(!to.join("openvino.py").exists());
}

#[test]
fn the_protocol_document_names_only_subcommands_that_exist() {
    let doc = std::fs::read_to_string(root().join("docs/runtime-protocol.md")).unwrap();
    let help = run(["--help"]).stdout;
    // Commands are quoted: `onnx-idx-check adapters --write DIR`.
    for (at, _) in doc.match_indices("`onnx-idx-check ") {
        let word = doc[at + "`onnx-idx-check ".len()..]
            .split(|c: char| !c.is_ascii_lowercase())
            .next()
            .unwrap_or("");
        if word.is_empty() {
            continue;
        }
        assert!(
            help.lines()
                .any(|l| l.trim_start().starts_with(&format!("{word} "))),
            "docs/runtime-protocol.md names `onnx-idx-check {word}`, which --help does not list"
        );
    }
}
