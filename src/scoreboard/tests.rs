use super::*;
use onnx_idx_check::report::TOOL;
use std::collections::BTreeSet;
use std::path::Path;

fn case(
    name: &str,
    ops: &[&str],
    traits: &[&str],
    status: Status,
    fault: Option<Fault>,
) -> CaseResult {
    let mut c = CaseResult::bare(name, PathBuf::from("cases").join(name), status);
    c.op_versions = ops.iter().map(|s| s.to_string()).collect();
    // Two nodes' entries, one trait repeated: a case counts once per trait.
    c.traits = vec![
        (
            ops.first().map_or(String::new(), |s| s.to_string()),
            traits
                .iter()
                .map(|s| s.to_string())
                .collect::<BTreeSet<_>>(),
        ),
        (
            ops.last().map_or(String::new(), |s| s.to_string()),
            traits.iter().take(1).map(|s| s.to_string()).collect(),
        ),
    ];
    c.fault = fault;
    if status != Status::Passed {
        c.reason = Some(format!("{name}: why"));
    }
    c
}

fn counts(passed: u64, failed: u64, refused: u64, crashed: u64, other: u64) -> Counts {
    Counts {
        passed,
        failed,
        refused,
        crashed,
        other,
    }
}

/// The embedded document of a rendered page, as the browser's `JSON.parse` reads it.
fn embedded(html: &str) -> serde_json::Value {
    let start = html
        .find(r#"<script type="application/json" id="data">"#)
        .unwrap();
    let body = &html[start..];
    let body = &body[body.find('>').unwrap() + 1..];
    let end = body.find("</script>").unwrap();
    serde_json::from_str(&body[..end]).unwrap()
}

#[test]
fn verdicts_map_to_the_categories_the_legend_names() {
    let of = |status, fault| category(&case("c", &["Gather-13"], &[], status, fault));
    assert_eq!(of(Status::Passed, None), Category::Passed);
    assert_eq!(of(Status::Failed, None), Category::Failed);
    assert_eq!(
        of(Status::Failed, Some(Fault::WroteNothing)),
        Category::Failed
    );
    assert_eq!(
        of(Status::Failed, Some(Fault::Nondeterministic)),
        Category::Failed
    );
    assert_eq!(of(Status::Errored, Some(Fault::Refused)), Category::Refused);
    assert_eq!(of(Status::Errored, Some(Fault::Crashed)), Category::Crashed);
    assert_eq!(
        of(Status::Errored, Some(Fault::TimedOut)),
        Category::Crashed
    );
    assert_eq!(of(Status::Errored, None), Category::Other);
    assert_eq!(of(Status::Skipped, None), Category::Other);
    // A hunt's words.
    for (word, cat) in [
        ("passed", Category::Passed),
        ("wrong-output", Category::Failed),
        ("accepts-invalid", Category::Failed),
        ("unsafe", Category::Failed),
        ("nondeterministic", Category::Failed),
        ("refuses-valid", Category::Refused),
        ("not-implemented", Category::Refused),
        ("crash", Category::Crashed),
        ("kind-hung", Category::Other),
        ("unsupported", Category::Other),
    ] {
        assert_eq!(hunt::category(word), cat, "{word}");
    }
}

#[test]
fn the_grids_count_each_case_once_per_row_and_runtime() {
    // Runtime a: g1 passed, g2 failed, s1 refused. Runtime b: g1 crashed, g2 passed, and s1
    // not run (--fail-fast).
    let a = vec![
        case(
            "g1",
            &["Gather-13"],
            &["negative-indices", "dtype:float"],
            Status::Passed,
            None,
        ),
        case(
            "g2",
            &["Gather-13", "GatherND-12"],
            &["dtype:float"],
            Status::Failed,
            None,
        ),
        case(
            "s1",
            &["ScatterND-18"],
            &["duplicates"],
            Status::Errored,
            Some(Fault::Refused),
        ),
    ];
    let b = vec![
        case(
            "g1",
            &["Gather-13"],
            &["negative-indices", "dtype:float"],
            Status::Errored,
            Some(Fault::Crashed),
        ),
        case(
            "g2",
            &["Gather-13", "GatherND-12"],
            &["dtype:float"],
            Status::Passed,
            None,
        ),
    ];
    let cols = [
        Column {
            name: "a",
            runtime: None,
            results: &a,
            duration: Duration::from_millis(5),
        },
        Column {
            name: "b",
            runtime: None,
            results: &b,
            duration: Duration::from_millis(7),
        },
    ];
    let page = Page::of_run(&TOOL, &[PathBuf::from("cases")], &cols, &|c| {
        Some(format!("rerun {}", c.name))
    });
    let row = |rows: &[Row], key: &str| rows.iter().find(|r| r.key == key).unwrap().cells.clone();
    // Rows ordered by operator, then version as a number.
    let keys: Vec<&str> = page.ops.iter().map(|r| r.key.as_str()).collect();
    assert_eq!(keys, ["Gather-13", "GatherND-12", "ScatterND-18"]);
    assert_eq!(
        row(&page.ops, "Gather-13"),
        [counts(1, 1, 0, 0, 0), counts(1, 0, 0, 1, 0)]
    );
    assert_eq!(
        row(&page.ops, "GatherND-12"),
        [counts(0, 1, 0, 0, 0), counts(1, 0, 0, 0, 0)]
    );
    assert_eq!(
        row(&page.ops, "ScatterND-18"),
        [counts(0, 0, 1, 0, 0), counts(0, 0, 0, 0, 0)]
    );
    assert_eq!(
        row(&page.traits, "dtype:float"),
        [counts(1, 1, 0, 0, 0), counts(1, 0, 0, 1, 0)]
    );
    assert_eq!(
        row(&page.traits, "negative-indices"),
        [counts(1, 0, 0, 0, 0), counts(0, 0, 0, 1, 0)]
    );
    assert_eq!(
        row(&page.traits, "duplicates"),
        [counts(0, 0, 1, 0, 0), counts(0, 0, 0, 0, 0)]
    );
    assert_eq!(page.runtimes[0].totals, counts(1, 1, 1, 0, 0));
    assert_eq!(page.runtimes[1].totals, counts(1, 0, 0, 1, 0));
    assert_eq!((page.runtimes[1].totals.total(), page.wall_ms), (2, 12));
    assert!(page.cases[2].results[1].is_none());
    assert_eq!(page.cases[1].rerun.as_deref(), Some("rerun g2"));
    assert_eq!(
        page.cases[1].results[0].as_ref().unwrap().reason.as_deref(),
        Some("g2: why")
    );
    // A passing case carries no reason.
    assert!(page.cases[0].results[0].as_ref().unwrap().reason.is_none());
}

#[test]
fn a_hostile_case_name_cannot_end_the_data_script() {
    let name = "x</script><script>alert(1)</script><!--\u{2028}\u{2029}&amp;";
    let results = vec![case(
        name,
        &["Gather-13"],
        &["</script>"],
        Status::Failed,
        None,
    )];
    let cols = [Column {
        name: "</script>rt",
        runtime: None,
        results: &results,
        duration: Duration::ZERO,
    }];
    let html = Page::of_run(&TOOL, &[PathBuf::from("<dir>")], &cols, &|_| None).render();
    // The data script and the page's script, and no other end of a script.
    assert_eq!(html.matches("</script>").count(), 2, "{html}");
    assert_eq!(html.matches("<script").count(), 2);
    assert!(!html.contains('\u{2028}') && !html.contains('\u{2029}') && !html.contains("<!--"));
    let data = embedded(&html);
    assert_eq!(data["cases"][0]["name"], name);
    assert_eq!(data["runtimes"][0]["name"], "</script>rt");
    assert_eq!(data["paths"][0], "<dir>");
    assert_eq!(
        script_json("\"a<b>&\u{2028}\""),
        r#""a\u003cb\u003e\u0026\u2028""#
    );
}

#[test]
fn the_page_is_self_contained() {
    let html = Page::of_run(&TOOL, &[], &[], &|_| None).render();
    for marker in ["{{title}}", "{{style}}", "{{data}}", "{{script}}"] {
        assert!(!html.contains(marker), "{marker}");
    }
    // No resource from elsewhere: no src or stylesheet link, no URL but the CSP's none.
    for outside in [" src=", "<link", "http://", "https://", "@import", "url("] {
        assert!(!html.contains(outside), "{outside}");
    }
    assert!(html.contains("default-src 'none'"));
    // The script shows strings through textContent and attributes only.
    assert!(!SCRIPT.contains("innerHTML") && !SCRIPT.contains("outerHTML"));
    assert!(!SCRIPT.contains("insertAdjacentHTML") && !SCRIPT.contains("document.write"));
}

#[test]
fn report_sections_are_clipped_and_links_relative() {
    let md = "# t\n\n## Expected\n\n- `y`: float [2]: 1, 2\n\n## Actual (fake 1.0)\n\n- `y`: float [2]: 1, 3\n\n## More\nx\n";
    assert_eq!(hunt::section(md, "## Expected"), "- `y`: float [2]: 1, 2");
    assert_eq!(hunt::section(md, "## Actual"), "- `y`: float [2]: 1, 3");
    assert_eq!(hunt::section(md, "## Missing"), "");
    let long: String = (0..20).map(|k| format!("line {k}\n")).collect();
    let clipped = hunt::section(&format!("## Expected\n{long}"), "## Expected");
    assert_eq!(clipped.lines().count(), 9);
    assert!(clipped.ends_with('…'));
    assert_eq!(
        hunt::link(Path::new("/a/out/crash-x/REPORT.md"), Path::new("/a/site")),
        "../out/crash-x/REPORT.md"
    );
    assert_eq!(
        hunt::link(Path::new("/a/out/f/REPORT.md"), Path::new("/a/out/./x/..")),
        "f/REPORT.md"
    );
}
