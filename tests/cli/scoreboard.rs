//! `--report html=FILE`: the scoreboard page of `run` (our kernels, one runtime, several) and
//! of `hunt`. The counts are read from the JSON the page embeds and checked against what the
//! trees the tests build make them by hand; the page's data is snapshotted with its timings
//! redacted. `scoreboard_browser` loads the page in Chromium.

use crate::support::{files_under, fixtures, root, run, run_within};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The case whose output the runtime `B` of [`two_runtimes`] gets wrong: its expected output is
/// replaced by another case's of the same dtype and shape ([2, 3] float) and other values.
pub const WRONG: &str = "onnx-node/test_gather_elements_negative_indices";

/// The case whose output stands in for [`WRONG`]'s.
const DONOR: &str = "onnx-node/test_gather_elements_1";

/// The JSON document a page embeds, as the browser's `JSON.parse` reads it.
pub fn embedded(html: &str) -> Value {
    let start = html
        .find(r#"<script type="application/json" id="data">"#)
        .expect("the data script");
    let body = &html[start..];
    let body = &body[body.find('>').unwrap() + 1..];
    serde_json::from_str(&body[..body.find("</script>").unwrap()]).expect("the data is JSON")
}

/// Every case directory of testdata/ (holding a model.onnx or an IR's model.xml), by name.
fn testdata_cases() -> Vec<String> {
    let mut names: Vec<String> = files_under(&root().join("testdata"))
        .iter()
        .filter(|p| p.ends_with("model.onnx") || p.ends_with("model.xml"))
        .map(|p| p.parent().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Two `--actual` trees holding testdata/'s expected outputs, `B` with [`WRONG`]'s replaced by
/// [`DONOR`]'s.
pub fn two_runtimes(dir: &Path) -> (PathBuf, PathBuf) {
    let testdata = root().join("testdata");
    let (a, b) = (dir.join("A"), dir.join("B"));
    for tree in [&a, &b] {
        for f in files_under(&testdata) {
            let name = f.file_name().unwrap().to_string_lossy();
            if name.starts_with("output_") && name.ends_with(".pb") {
                std::fs::create_dir_all(tree.join(f.parent().unwrap())).unwrap();
                std::fs::copy(testdata.join(&f), tree.join(&f)).unwrap();
            }
        }
    }
    let out = "test_data_set_0/output_0.pb";
    std::fs::copy(testdata.join(DONOR).join(out), b.join(WRONG).join(out)).unwrap();
    (a, b)
}

/// Writes the scoreboard of testdata/ through runtimes `A` and `B` (see [`two_runtimes`]) to
/// `dir/page.html`; returns its path.
pub fn two_runtime_page(dir: &Path) -> PathBuf {
    let (a, b) = two_runtimes(dir);
    let page = dir.join("page.html");
    let r = run([
        "run".into(),
        "testdata/".into(),
        "--actual".into(),
        format!("A={}", a.display()),
        "--actual".into(),
        format!("B={}", b.display()),
        "--report".into(),
        format!("html={}", page.display()),
    ]);
    // B fails one case: the run fails.
    r.expect_code(1);
    page
}

fn row<'a>(grid: &'a Value, key: &str) -> &'a Value {
    grid.as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"] == key)
        .unwrap_or_else(|| panic!("no row {key} in {grid}"))
}

fn counts(passed: u64, failed: u64) -> Value {
    serde_json::json!({"passed": passed, "failed": failed, "refused": 0, "crashed": 0, "other": 0})
}

#[test]
fn the_scoreboard_of_our_kernels_counts_every_case_of_testdata() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("kernels.html");
    run([
        "run",
        "testdata/",
        "--report",
        &format!("html={}", page.display()),
    ])
    .expect_code(0);
    let html = std::fs::read_to_string(&page).unwrap();
    let data = embedded(&html);
    let names = testdata_cases();
    let cases = data["cases"].as_array().unwrap();
    assert_eq!(cases.len(), names.len());
    assert_eq!(data["runtimes"].as_array().unwrap().len(), 1);
    assert_eq!(data["runtimes"][0]["name"], "onnx-idx-check kernels");
    assert_eq!(data["runtimes"][0]["totals"], counts(names.len() as u64, 0));
    assert_eq!(data["kind"], "run");
    assert_eq!(data["paths"], serde_json::json!(["testdata/"]));
    // Every case counts in the row of its operator version, and the rows add up to the cases
    // (a testdata/ case tests one operator version).
    let ops_total: u64 = data["ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["cells"][0]["passed"].as_u64().unwrap())
        .sum();
    assert_eq!(ops_total, names.len() as u64);
    // Our kernels evaluate every case: each has its traits, among them its indices' type.
    for c in cases {
        let traits: Vec<&str> = c["traits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        assert!(traits.iter().any(|t| t.starts_with("dtype:")), "{c}");
    }
    // A name with "negative_indices" exercises negative indices.
    for c in cases
        .iter()
        .filter(|c| c["name"].as_str().unwrap().contains("negative_indices"))
    {
        assert!(
            c["traits"]
                .as_array()
                .unwrap()
                .contains(&Value::from("negative-indices")),
            "{c}"
        );
    }
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("default-src 'none'"));
}

#[test]
fn the_scoreboard_of_two_runtimes_shows_the_one_wrong_output_in_its_rows() {
    let dir = tempfile::tempdir().unwrap();
    let page = two_runtime_page(dir.path());
    let data = embedded(&std::fs::read_to_string(&page).unwrap());
    let n = testdata_cases().len() as u64;
    let names: Vec<&str> = data["runtimes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["A", "B"]);
    assert_eq!(data["runtimes"][0]["totals"], counts(n, 0));
    assert_eq!(data["runtimes"][1]["totals"], counts(n - 1, 1));
    // GatherElements-13: the cases of testdata/ at opset 13 and up whose name says gather_elements
    // (not the grad's); B fails one of them.
    let ge13 = testdata_cases()
        .iter()
        .filter(|c| {
            let plain = c.contains("gather_elements") && !c.contains("grad");
            let opset = c
                .rsplit("_opset")
                .next()
                .and_then(|v| v.parse::<u32>().ok());
            plain && (c.starts_with("onnx-node/") || opset.is_some_and(|v| v >= 13))
        })
        .count() as u64;
    let cells = &row(&data["ops"], "GatherElements-13")["cells"];
    assert_eq!(cells[0], counts(ge13, 0), "{cells}");
    assert_eq!(cells[1], counts(ge13 - 1, 1), "{cells}");
    // It has negative indices: the trait's row of B has its failure.
    let neg = &row(&data["traits"], "negative-indices")["cells"];
    assert_eq!(neg[1]["failed"], 1);
    assert_eq!(
        neg[0]["passed"].as_u64().unwrap(),
        neg[1]["passed"].as_u64().unwrap() + 1
    );
    // Every other row is the same for both.
    for r in data["ops"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["key"] != "GatherElements-13")
    {
        assert_eq!(r["cells"][0], r["cells"][1], "{r}");
    }
    let wrong = data["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == WRONG)
        .unwrap();
    assert_eq!(wrong["results"][0]["cat"], "passed");
    assert_eq!(wrong["results"][1]["cat"], "failed");
    assert_eq!(wrong["results"][1]["label"], "FAIL");
    // The first differing element, as the runner says: 7.0 expected, 4.0 from the donor.
    let reason = wrong["results"][1]["reason"].as_str().unwrap();
    assert!(reason.contains("expected 7.0, got 4.0"), "{reason}");
    let rerun = wrong["rerun"].as_str().unwrap();
    assert!(
        rerun.starts_with("onnx-idx-check run testdata/ --filter '^onnx\\-node/test_gather_elements_negative_indices$' --actual A="),
        "{rerun}"
    );
}

#[test]
fn the_scoreboard_data_of_a_mixed_run_is_stable() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("mixed.html");
    run([
        "run",
        fixtures().to_str().unwrap(),
        "--filter",
        crate::snapshots::MIXED,
        "--report",
        &format!("html={}", page.display()),
    ])
    .expect_code(1);
    let data = embedded(&std::fs::read_to_string(&page).unwrap());
    crate::snapshots::settings().bind(|| {
        insta::assert_json_snapshot!("scoreboard_mixed", data, {
            ".wall_ms" => "[ms]",
            ".runtimes[].duration_ms" => "[ms]",
            ".tool.version" => "[VERSION]",
        });
    });
}

#[test]
fn html_is_a_format_of_the_matrix_and_the_only_report_of_a_hunt() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("hunt");
    for bad in ["json=x.json", "html=-", "html"] {
        let r = run([
            "hunt",
            "--runtime-cmd",
            "true",
            "--out",
            out.to_str().unwrap(),
            "--report",
            bad,
        ]);
        r.expect_code(2);
        assert!(r.stderr.contains("--report"), "{bad}: {}", r.stderr);
    }
    // Nothing was written: the arguments are refused before the runtime starts.
    assert!(!out.exists());
    let r = run(["run", "testdata/", "--report", "xml=x"]);
    r.expect_code(2);
    assert!(
        r.stderr
            .contains("one of human, json, junit, markdown, html"),
        "{}",
        r.stderr
    );
}

#[test]
fn the_scoreboard_of_a_hunt_lists_its_finding_with_a_link_to_its_report() {
    if !crate::support::python3("the_scoreboard_of_a_hunt") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("hunt");
    let site = dir.path().join("site");
    std::fs::create_dir(&site).unwrap();
    let page = site.join("hunt.html");
    run_within(
        Duration::from_secs(300),
        [
            "hunt",
            "--runtime-cmd",
            &crate::minimize::buggy(1),
            "--ops",
            "Gather",
            "--max-cases",
            "60",
            "--time",
            "300",
            "--out",
            out.to_str().unwrap(),
            "--report",
            &format!("html={}", page.display()),
        ],
    )
    .expect_code(0);
    let data = embedded(&std::fs::read_to_string(&page).unwrap());
    assert_eq!(data["kind"], "hunt");
    // The grid counts every line of tried.tsv (but its header).
    let tried = std::fs::read_to_string(out.join("tried.tsv")).unwrap();
    let lines = tried.lines().count() as u64 - 1;
    assert_eq!(data["cases"].as_array().unwrap().len() as u64, lines);
    let totals = &data["runtimes"][0]["totals"];
    let sum: u64 = ["passed", "failed", "refused", "crashed", "other"]
        .iter()
        .map(|k| totals[k].as_u64().unwrap())
        .sum();
    assert_eq!(sum, lines);
    assert_eq!(data["runtimes"][0]["name"], "buggy");
    // The one finding of findings.json, its REPORT.md linked relative to the page.
    let findings: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("findings.json")).unwrap()).unwrap();
    let f = &data["findings"][0];
    assert_eq!(data["findings"].as_array().unwrap().len(), 1);
    assert_eq!(f["class"], "wrong-output");
    assert_eq!(f["case"], findings[0]["case"]);
    let link = f["report"].as_str().unwrap();
    assert!(link.starts_with("../hunt/"), "{link}");
    assert!(site.join(link).is_file(), "{link}");
    // Expected and actual values from REPORT.md.
    let report = std::fs::read_to_string(site.join(link)).unwrap();
    let first = |s: &str| s.lines().next().unwrap_or_default().to_string();
    assert!(!f["expected"].as_str().unwrap().is_empty());
    assert!(report.contains(&first(f["expected"].as_str().unwrap())));
    assert!(report.contains(&first(f["actual"].as_str().unwrap())));
    // The hunt's row of the finding's operator version counts a failure.
    let failed: u64 = data["ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["cells"][0]["failed"].as_u64().unwrap())
        .sum();
    assert!(failed >= 1, "{}", data["ops"]);
}

#[test]
fn a_case_named_to_end_the_script_stays_data_in_the_page() {
    let dir = tempfile::tempdir().unwrap();
    // Three directories, one case: its name is their path, slashes and all.
    let case = dir
        .path()
        .join("a<")
        .join("script><script>alert(1)<")
        .join("script>\u{2028}<!--x");
    crate::common::copy_tree(&root().join("testdata/onnx-node/test_gather_0"), &case);
    let page = dir.path().join("page.html");
    run([
        "run".into(),
        dir.path().as_os_str().to_owned(),
        "--report".into(),
        format!("html={}", page.display()).into(),
    ])
    .expect_code(0);
    let html = std::fs::read_to_string(&page).unwrap();
    // The data script's end and the page script's: no third.
    assert_eq!(html.matches("</script>").count(), 2);
    assert!(!html.contains("alert(1)</script>") && !html.contains("<!--x"));
    assert!(!html.contains('\u{2028}'));
    let data = embedded(&html);
    assert_eq!(
        data["cases"][0]["name"],
        "a</script><script>alert(1)</script>\u{2028}<!--x"
    );
}
