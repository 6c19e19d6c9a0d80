//! The project's documents (README.md and every page under docs/) hold together, and their sample
//! sessions are what today's tool prints.
//!
//! Every relative link of those documents resolves to a file (and a heading, when it names one),
//! and every file under docs/ is reachable from README.md through such links.
//!
//! Every fenced block of the documents that starts with `$ onnx-idx-check` (or
//! `$ VAR=value onnx-idx-check`) is a sample: it is either run
//! here, in a fresh directory set up for it, and compared line by line with what the binary prints
//! (stdout and stderr together), or listed in [`NOT_RUN`] with the reason it cannot run in
//! `cargo test` (a runtime, a terminal, timings). A new sample that is neither fails the test, so
//! no sample goes stale unnoticed.
//!
//! In a sample, a line `...` stands for any number of lines; durations (`[ 95.5µs]`, the times of
//! `--durations`) and the names of the slowest cases, which change from run to run, are compared
//! as placeholders.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The project's documents: README.md, then every Markdown page under docs/ (sorted), each as its
/// path relative to the repository root (with `/`) and its text.
pub(crate) fn documents() -> Vec<(String, String)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else {
                out.push(path);
            }
        }
    }
    let root = crate::support::root();
    let mut pages = Vec::new();
    walk(&root.join("docs"), &mut pages);
    pages.retain(|p| p.extension().is_some_and(|e| e == "md"));
    pages.sort();
    std::iter::once(root.join("README.md"))
        .chain(pages)
        .map(|p| {
            let rel = p
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (rel, std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

/// Samples this test does not run, by their first command, with the reason.
const NOT_RUN: &[(&str, &str)] = &[
    (
        "onnx-idx-check run testdata/ --runtime onnxruntime --runtime openvino --runtime tract --runtime onnx-reference",
        "needs the four pinned runtimes (tests/cli/bundled_runtimes.rs checks the same table where they are installed)",
    ),
    (
        "onnx-idx-check run testdata/ --actual ort-out/ --expectations scripts/onnxruntime-1.31.1.expectations.toml",
        "needs onnxruntime's outputs (scripts/ort_outputs.py)",
    ),
    (
        "onnx-idx-check run cases/ --pending pending/",
        "an interactive review in a terminal (tests/review_tty.rs drives it in a pty)",
    ),
    (
        "onnx-idx-check bench testdata/onnx-node/test_gather_0",
        "timings",
    ),
];

/// The expectations file of the GitHub Actions sample: `mine/fixed` (a passing case listed as
/// failing) on line 2, an entry matching nothing on line 7.
const KNOWN_TOML: &str = "# known failures of our runtime
[[expect]]
case = \"mine/fixed\"
status = \"failed\"
reason = \"the reduction drops updates\"

[[expect]]
case = \"old/*\"
status = \"failed\"
reason = \"removed long ago\"
";

/// The fixtures (`tests/fixtures/GROUP/NAME`) a sample's `cases/` tree is made of, by the sample's
/// first command: `cases/mine/NAME` for each (`GROUP/NAME>NEW` names it `NEW`).
fn cases_of(first: &str) -> &'static [&'static str] {
    match first {
        "GITHUB_ACTIONS=true onnx-idx-check run cases/ --expectations known.toml --min-cases 3 | grep '^::'" => &[
            "passing/nan_payloads_are_equal>fixed",
            "failing/wrong_value",
        ],
        "onnx-idx-check run cases/" => &[
            "skipped/bool_reduction_max",
            "failing/diagnosed_negative_not_normalized",
            "errored/gather_index_out_of_range",
            "passing/nan_payloads_are_equal",
        ],
        "onnx-idx-check run cases/mine/missing_output" => &["errored/missing_output"],
        _ => &[],
    }
}

/// One sample: its commands, each with the lines it shows.
#[derive(Debug)]
struct Sample {
    /// The document's line of the opening fence, for messages.
    line: usize,
    /// `(command, expected lines)` in order.
    steps: Vec<(String, Vec<String>)>,
}

/// The samples of a Markdown text: fenced blocks whose first line is a `$ ` command that runs the
/// tool.
fn samples(markdown: &str) -> Vec<Sample> {
    let mut out = Vec::new();
    let mut lines = markdown.lines().enumerate();
    while let Some((i, line)) = lines.next() {
        if !line.starts_with("```") {
            continue;
        }
        let mut body = Vec::new();
        for (_, l) in lines.by_ref() {
            if l.starts_with("```") {
                break;
            }
            body.push(l);
        }
        let runs_the_tool = |l: &str| {
            l.strip_prefix("$ ").is_some_and(|c| {
                c.split_whitespace()
                    .find(|w| !w.contains('='))
                    .is_some_and(|w| w == "onnx-idx-check")
            })
        };
        if !body.first().is_some_and(|l| runs_the_tool(l)) {
            continue;
        }
        let mut steps: Vec<(String, Vec<String>)> = Vec::new();
        for l in body {
            match l.strip_prefix("$ ") {
                Some(cmd) => steps.push((cmd.to_string(), Vec::new())),
                None => steps.last_mut().unwrap().1.push(l.to_string()),
            }
        }
        // A blank line between two commands separates them; it is not output.
        for (_, expected) in &mut steps {
            while expected.last().is_some_and(|l| l.trim().is_empty()) {
                expected.pop();
            }
        }
        out.push(Sample { line: i + 1, steps });
    }
    out
}

/// A line with what changes from run to run replaced: `[ 95.5µs]` by `[TIME]`, and a line of the
/// `--durations` list (`     493µs  spec-examples/...`) by `TIME NAME`; trailing spaces dropped.
fn normalized(line: &str) -> String {
    let is_duration = |s: &str| {
        let digits = s.trim_end_matches(|c: char| c.is_ascii_alphabetic() || c == 'µ');
        let unit = &s[digits.len()..];
        !digits.is_empty()
            && digits.chars().all(|c| c.is_ascii_digit() || c == '.')
            && ["ns", "µs", "ms", "s"].contains(&unit)
    };
    let words: Vec<&str> = line.split_whitespace().collect();
    if words.len() == 2 && is_duration(words[0]) && line.starts_with("  ") {
        return "TIME NAME".into();
    }
    let mut out = String::new();
    let mut rest = line;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find(']') else {
            break;
        };
        let inside = rest[open + 1..open + close].trim();
        out.push_str(&rest[..open]);
        if is_duration(inside) {
            out.push_str("[TIME]");
        } else {
            out.push_str(&rest[open..=open + close]);
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    out.trim_end().to_string()
}

/// Whether `actual` matches `expected`, where an expected `...` line matches any run of lines.
fn matches(expected: &[String], actual: &[String]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((e, rest)) if e.trim() == "..." => {
            (0..=actual.len()).any(|skip| matches(rest, &actual[skip..]))
        }
        Some((e, rest)) => actual
            .split_first()
            .is_some_and(|(a, more)| a == e && matches(rest, more)),
    }
}

/// A fresh directory for a sample: `testdata/` copied in, and its `cases/` tree.
fn workdir(first: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    crate::support::copy_case(
        &crate::support::root().join("testdata"),
        &dir.path().join("testdata"),
    );
    for fixture in cases_of(first) {
        let (fixture, name) = match fixture.split_once('>') {
            Some((f, n)) => (f, n),
            None => (*fixture, fixture.rsplit('/').next().unwrap()),
        };
        crate::support::copy_case(
            &crate::support::fixture(fixture),
            &dir.path().join("cases/mine").join(name),
        );
    }
    if first.contains("known.toml") {
        std::fs::write(dir.path().join("known.toml"), KNOWN_TOML).unwrap();
    }
    if first == "onnx-idx-check list testdata/onnx-node" {
        // `list cases`: a model that does not decode, a good case, and one with no data set.
        let cases = dir.path().join("cases");
        std::fs::create_dir_all(cases.join("garbage_model")).unwrap();
        std::fs::write(cases.join("garbage_model/model.onnx"), b"\x0f\xff garbage").unwrap();
        let good = crate::support::root().join("testdata/onnx-node/test_gather_0");
        crate::support::copy_case(&good, &cases.join("good"));
        std::fs::create_dir_all(cases.join("nodata")).unwrap();
        std::fs::copy(good.join("model.onnx"), cases.join("nodata/model.onnx")).unwrap();
    }
    dir
}

/// Runs one command line of a sample in `dir` with the binary first on PATH, stdout and stderr
/// together, as a terminal shows them.
fn run_line(dir: &Path, cmd: &str) -> Vec<String> {
    let bin = Path::new(env!("CARGO_BIN_EXE_onnx-idx-check"));
    let path = std::env::join_paths(std::iter::once(bin.parent().unwrap().to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("exec 2>&1; {cmd}"))
        .current_dir(dir)
        .env("PATH", path)
        .env("ONNX_IDX_CHECK_LAST_RUN", dir.join(".last-run.json"))
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_WORKSPACE")
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(normalized)
        .collect()
}

#[test]
fn every_sample_of_the_documents_is_what_the_tool_prints() {
    let all: Vec<(String, Sample)> = documents()
        .into_iter()
        .flat_map(|(doc, text)| samples(&text).into_iter().map(move |s| (doc.clone(), s)))
        .collect();
    let mut checked = 0;
    let mut wrong = Vec::new();
    for (doc, sample) in &all {
        let first = sample.steps[0].0.as_str();
        if NOT_RUN.iter().any(|(c, _)| *c == first) {
            continue;
        }
        let dir = workdir(first);
        for (cmd, expected) in &sample.steps {
            let expected: Vec<String> = expected.iter().map(|l| normalized(l)).collect();
            let actual = run_line(dir.path(), cmd);
            if !matches(&expected, &actual) {
                wrong.push(format!(
                    "{doc} line {}: `{cmd}`\n~~~ the document shows\n{}\n~~~ the tool prints\n{}\n~~~",
                    sample.line,
                    expected.join("\n"),
                    actual.join("\n")
                ));
            }
        }
        checked += 1;
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
    // Every sample not run is still in a document under the command listed for it.
    for (cmd, why) in NOT_RUN {
        assert!(
            all.iter().any(|(_, s)| s.steps[0].0 == *cmd),
            "NOT_RUN lists `{cmd}` ({why}), which no sample starts with any more"
        );
    }
    assert!(
        checked >= 8,
        "only {checked} samples were run; the parser may have missed some"
    );
    eprintln!(
        "samples of the documents: {checked} run, {} not run (listed with their reasons in tests/cli/readme.rs)",
        NOT_RUN.len()
    );
}

#[test]
fn the_sample_matcher_can_fail() {
    let l = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(matches(&l(&["a", "...", "z"]), &l(&["a", "b", "c", "z"])));
    assert!(matches(&l(&["a", "...", "z"]), &l(&["a", "z"])));
    assert!(!matches(&l(&["a", "...", "z"]), &l(&["a", "b"])));
    assert!(!matches(&l(&["a", "b"]), &l(&["a", "b", "c"])));
    assert_eq!(
        normalized("Summary [   545µs] 4 cases: 1 passed"),
        "Summary [TIME] 4 cases: 1 passed"
    );
    assert_eq!(normalized("     493µs  spec-examples/x"), "TIME NAME");
    assert_eq!(normalized("data [2, 3]  "), "data [2, 3]");
}

/// A document's lines with what is not prose blanked: fenced code blocks become empty lines and
/// inline code spans are dropped, so a `[x](y)` inside code is not taken for a link.
fn prose_lines(markdown: &str) -> Vec<String> {
    let mut in_fence = false;
    markdown
        .lines()
        .map(|line| {
            if line.trim_start().starts_with("```") {
                in_fence = !in_fence;
                return String::new();
            }
            if in_fence {
                return String::new();
            }
            // Backtick runs delimit code spans; a span closes at the next run of the same length.
            let mut out = String::new();
            let mut rest = line;
            while let Some(at) = rest.find('`') {
                out.push_str(&rest[..at]);
                let run = rest[at..].len() - rest[at..].trim_start_matches('`').len();
                let after = &rest[at + run..];
                let fence = &rest[at..at + run];
                match after.find(fence) {
                    Some(close) => rest = &after[close + run..],
                    None => {
                        rest = after;
                        break;
                    }
                }
            }
            out.push_str(rest);
            out
        })
        .collect()
}

/// The targets of the inline links and images (`[text](target)`) of a line of prose, without a
/// title; links with a scheme (`https:`, `mailto:`) are left out.
fn relative_links(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(close) = after.find(')') else { break };
        let target = after[..close].split_whitespace().next().unwrap_or("");
        let has_scheme = target
            .split_once(':')
            .is_some_and(|(s, _)| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphabetic()));
        if rest[..at].contains('[') && !target.is_empty() && !has_scheme {
            out.push(target.to_string());
        }
        rest = &after[close + 1..];
    }
    out
}

/// The anchor GitHub gives a heading: its text (a link's text, code without the backticks)
/// lower-cased, everything but letters, digits, `-`, `_` and spaces dropped, spaces made `-`.
fn heading_anchor(heading: &str) -> String {
    let mut text = String::new();
    let mut rest = heading.trim();
    // `[text](target)` counts as its text.
    while let Some(open) = rest.find('[') {
        let Some(mid) = rest[open..].find("](") else {
            break;
        };
        let Some(close) = rest[open + mid..].find(')') else {
            break;
        };
        text.push_str(&rest[..open]);
        text.push_str(&rest[open + 1..open + mid]);
        rest = &rest[open + mid + close + 1..];
    }
    text.push_str(rest);
    text.to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Every anchor a document has: its headings' (a repeated one numbered `-1`, `-2`, ... as GitHub
/// numbers them) and those of `<a id="...">` / `<a name="...">` tags.
fn anchors(markdown: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    let mut in_fence = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let hashes = line.len() - line.trim_start_matches('#').len();
        if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
            let base = heading_anchor(&line[hashes..]);
            let n = seen.entry(base.clone()).or_insert(0);
            out.insert(if *n == 0 {
                base.clone()
            } else {
                format!("{base}-{n}")
            });
            *n += 1;
        }
        for attr in ["<a id=\"", "<a name=\""] {
            for (at, _) in line.match_indices(attr) {
                let value = &line[at + attr.len()..];
                if let Some(end) = value.find('"') {
                    out.insert(value[..end].to_string());
                }
            }
        }
    }
    out
}

/// `base/target` with `.` and `..` worked out, relative to the repository root (`None` when it
/// climbs out of it).
fn resolve(base: &str, target: &str) -> Option<String> {
    let mut parts: Vec<&str> = base.split('/').collect();
    parts.pop(); // the document's own file name
    for part in target.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

/// The problems of the documents' relative links (a missing file or heading), and the files under
/// docs/ that no chain of links from README.md reaches.
fn link_problems(docs: &[(String, String)], exists: impl Fn(&str) -> bool) -> Vec<String> {
    let text_of: BTreeMap<&str, &str> =
        docs.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    let mut problems = Vec::new();
    let mut edges: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (doc, text) in docs {
        for (i, line) in prose_lines(text).iter().enumerate() {
            for target in relative_links(line) {
                let (path, anchor) = match target.split_once('#') {
                    Some((p, a)) => (p, Some(a)),
                    None => (target.as_str(), None),
                };
                let file = if path.is_empty() {
                    Some(doc.clone())
                } else {
                    resolve(doc, path)
                };
                let Some(file) = file.filter(|f| exists(f)) else {
                    problems.push(format!("{doc}:{}: `{target}`: no such file", i + 1));
                    continue;
                };
                if let (Some(anchor), Some(linked)) = (anchor, text_of.get(file.as_str())) {
                    if !anchors(linked).contains(anchor) {
                        problems.push(format!(
                            "{doc}:{}: `{target}`: {file} has no heading with anchor #{anchor}",
                            i + 1
                        ));
                    }
                }
                edges.entry(doc.as_str()).or_default().push(file);
            }
        }
    }
    // Every page under docs/ is reached from README.md, directly or through other pages.
    let mut reached = BTreeSet::from(["README.md".to_string()]);
    let mut todo = vec!["README.md".to_string()];
    while let Some(doc) = todo.pop() {
        for next in edges.get(doc.as_str()).into_iter().flatten() {
            if reached.insert(next.clone()) {
                todo.push(next.clone());
            }
        }
    }
    for (doc, _) in docs {
        if doc.starts_with("docs/") && !reached.contains(doc) {
            problems.push(format!("{doc}: no link from README.md reaches it"));
        }
    }
    problems
}

#[test]
fn every_link_of_the_documents_resolves_and_every_page_is_reachable() {
    let root = crate::support::root();
    let docs = documents();
    assert!(
        docs.len() > 5,
        "found only {:?}",
        docs.iter().map(|d| &d.0).collect::<Vec<_>>()
    );
    // The other READMEs the documents link to are checked too (their links, and their headings as
    // anchors); files under docs/ that are not Markdown must be linked as well.
    let mut all = docs.clone();
    for other in ["fuzz/README.md", "python/README.md"] {
        all.push((
            other.to_string(),
            std::fs::read_to_string(root.join(other)).unwrap(),
        ));
    }
    let mut stack = vec![root.join("docs")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_none_or(|e| e != "md") {
                let rel = path
                    .strip_prefix(&root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                all.push((rel, String::new()));
            }
        }
    }
    let problems = link_problems(&all, |f| root.join(f).exists());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_link_checker_can_fail() {
    let docs = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect()
    };
    // GitHub's anchors, as its pages show them.
    assert_eq!(
        heading_anchor(" Running a runtime under test: `--runtime`"),
        "running-a-runtime-under-test---runtime"
    );
    assert_eq!(
        heading_anchor(" OpenVINO IR cases (`model.xml` + `model.bin`)"),
        "openvino-ir-cases-modelxml--modelbin"
    );
    assert_eq!(
        heading_anchor(" D2: negative indices before opset 11"),
        "d2-negative-indices-before-opset-11"
    );
    assert_eq!(
        heading_anchor(" See [the page](x.md) now"),
        "see-the-page-now"
    );
    assert_eq!(
        anchors("# A\n## A\n```\n# not a heading\n```\n<a id=\"x\"></a>"),
        BTreeSet::from(["a".to_string(), "a-1".to_string(), "x".to_string()])
    );
    assert_eq!(
        relative_links(
            &prose_lines(
                "see [a](docs/a.md#b), `[c](d.md)`, [e](https://x.org/f) and ![g](h.png \"t\")"
            )[0]
        ),
        ["docs/a.md#b", "h.png"]
    );
    assert_eq!(prose_lines("a `[c](d.md)` b ``x ` y`` c")[0], "a  b  c");
    assert_eq!(
        resolve("docs/guide/run.md", "../design.md").as_deref(),
        Some("docs/design.md")
    );
    assert_eq!(resolve("README.md", "../x.md"), None);
    let files = ["README.md", "docs/a.md", "docs/b.md", "docs/c.png"];
    let exists = |f: &str| files.contains(&f);
    let good = docs(&[
        ("README.md", "# T\n[a](docs/a.md#sec-one)\n"),
        (
            "docs/a.md",
            "# A\n## Sec one\n[b](b.md) [top](#a) ![c](c.png)\n",
        ),
        ("docs/b.md", "# B\n"),
        ("docs/c.png", ""),
    ]);
    assert_eq!(link_problems(&good, exists), Vec::<String>::new());
    let bad = docs(&[
        ("README.md", "# T\n[a](docs/a.md#sec-two) [z](docs/z.md)\n"),
        ("docs/a.md", "# A\n## Sec one\n[top](#nowhere)\n"),
        ("docs/b.md", "# B\n"),
    ]);
    assert_eq!(
        link_problems(&bad, exists),
        [
            "README.md:2: `docs/a.md#sec-two`: docs/a.md has no heading with anchor #sec-two",
            "README.md:2: `docs/z.md`: no such file",
            "docs/a.md:3: `#nowhere`: docs/a.md has no heading with anchor #nowhere",
            "docs/b.md: no link from README.md reaches it",
        ]
    );
}
