//! The Markdown report against the rendering rules of GitHub-flavoured Markdown, checked by a
//! small validator written here from the GFM spec (not from the renderer): a table renders only
//! when its header, delimiter row and every body row have the same number of cells, with a blank
//! line before and after it; a `|` inside a cell must be escaped; raw HTML must not be able to
//! open or close anything (`<`, `>`, `&` of case names and reasons escaped); a `<details>` block
//! needs its `<summary>` on the next line and blank lines around the Markdown inside it. Run over
//! a run with failures, errors, skips and hostile case names (pipes, backticks, `<script>`, a
//! `</details>`, a newline), and snapshotted.

use crate::support::{copy_case, fixture, run};
use std::path::Path;

/// The HTML tags the report may use; any other `<` outside code is an escaping bug.
const ALLOWED_TAGS: [&str; 8] = [
    "<details>",
    "</details>",
    "<summary>",
    "</summary>",
    "<strong>",
    "</strong>",
    "<code>",
    "</code>",
];

/// The cells of a table row: split on `|` not preceded by a backslash, without the outer pipes.
/// `None` when the row does not start and end with an unescaped pipe.
fn cells(row: &str) -> Option<Vec<String>> {
    let row = row.trim();
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut escaped = false;
    let mut pipes = 0;
    for c in row.chars() {
        if c == '|' && !escaped {
            pipes += 1;
            if pipes > 1 {
                cells.push(std::mem::take(&mut cell));
            }
            continue;
        }
        escaped = c == '\\' && !escaped;
        if pipes == 0 {
            return None;
        }
        cell.push(c);
    }
    (row.starts_with('|') && row.ends_with('|') && !row.ends_with("\\|") && pipes >= 2)
        .then_some(cells)
}

/// A GFM delimiter row: `| :--- | ---: |`.
fn is_delimiter_row(line: &str) -> bool {
    cells(line).is_some_and(|cs| {
        !cs.is_empty()
            && cs.iter().all(|c| {
                let c = c.trim().trim_start_matches(':').trim_end_matches(':');
                !c.is_empty() && c.bytes().all(|b| b == b'-')
            })
    })
}

/// Every rule `md` breaks, one message each (empty when it follows them all).
fn violations(md: &str) -> Vec<String> {
    let lines: Vec<&str> = md.lines().collect();
    let blank = |i: usize| lines.get(i).is_none_or(|l| l.trim().is_empty());
    let mut errors = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    let mut depth = 0i32;
    // An HTML block (CommonMark type 6: a line starting with `<details>`, `<summary>`, ...) runs
    // to the next blank line; Markdown is not parsed inside it, but tags and entities are.
    let mut html_block = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let t = line.trim_start();
        // Fenced code: literal until a closing fence of the same character, at least as long.
        let run = |c: char| t.chars().take_while(|&x| x == c).count();
        if let Some((c, n)) = fence {
            if run(c) >= n && t.trim_end().chars().all(|x| x == c) {
                fence = None;
                if !blank(i + 1) {
                    errors.push(format!("line {}: no blank line after a code fence", i + 1));
                }
            }
            i += 1;
            continue;
        }
        for c in ['`', '~'] {
            if run(c) >= 3 {
                fence = Some((c, run(c)));
            }
        }
        if fence.is_some() {
            i += 1;
            continue;
        }
        if t.trim().is_empty() {
            html_block = false;
        } else if ["<details", "</details", "<summary", "</summary"]
            .iter()
            .any(|tag| t.starts_with(tag))
        {
            html_block = true;
        }
        // Raw HTML: only the allowed tags; `&` only as an entity; no unescaped backtick (the
        // report uses no code spans, so one would come from a case name).
        let mut rest = line;
        while let Some(at) = rest.find('<') {
            let tag = ALLOWED_TAGS.iter().find(|t| rest[at..].starts_with(*t));
            match tag {
                Some(t) => {
                    depth += match *t {
                        "<details>" => 1,
                        "</details>" => -1,
                        _ => 0,
                    };
                    rest = &rest[at + t.len()..];
                }
                None => {
                    errors.push(format!(
                        "line {}: raw '<' outside a known tag: {line}",
                        i + 1
                    ));
                    rest = &rest[at + 1..];
                }
            }
        }
        if depth < 0 {
            errors.push(format!("line {}: </details> closes nothing", i + 1));
            depth = 0;
        }
        for (at, _) in line.match_indices('&') {
            let entity = ["&amp;", "&lt;", "&gt;", "&quot;"]
                .iter()
                .any(|e| line[at..].starts_with(e));
            if !entity {
                errors.push(format!("line {}: a bare '&': {line}", i + 1));
            }
        }
        let mut escaped = false;
        for c in line.chars().filter(|_| !html_block) {
            if c == '`' && !escaped {
                errors.push(format!("line {}: an unescaped backtick: {line}", i + 1));
            }
            escaped = c == '\\' && !escaped;
        }
        // <details> then <summary>...</summary> on the next line, then a blank line; a blank line
        // before </details>.
        if t.starts_with("<details>") {
            let next = lines.get(i + 1).copied().unwrap_or("");
            if !(next.starts_with("<summary>") && next.trim_end().ends_with("</summary>")) {
                errors.push(format!(
                    "line {}: <details> without a one-line <summary>",
                    i + 1
                ));
            } else if !blank(i + 2) {
                errors.push(format!("line {}: no blank line after <summary>", i + 2));
            }
        }
        if t.starts_with("</details>") && !blank(i.wrapping_sub(1)) {
            errors.push(format!("line {}: no blank line before </details>", i + 1));
        }
        // A table: header, delimiter row, rows; every row as many cells as the header.
        if t.starts_with('|') {
            let header = cells(line);
            let delimiter = lines.get(i + 1).copied().unwrap_or("");
            match header {
                Some(h) if is_delimiter_row(delimiter) => {
                    if i > 0 && !blank(i - 1) {
                        errors.push(format!("line {}: no blank line before a table", i + 1));
                    }
                    let width = h.len();
                    if cells(delimiter).map(|c| c.len()) != Some(width) {
                        errors.push(format!(
                            "line {}: delimiter row has another cell count than its header",
                            i + 2
                        ));
                    }
                    let mut j = i + 2;
                    while j < lines.len() && lines[j].trim_start().starts_with('|') {
                        match cells(lines[j]) {
                            Some(c) if c.len() == width => {}
                            Some(c) => errors.push(format!(
                                "line {}: {} cells where the header has {width}: {}",
                                j + 1,
                                c.len(),
                                lines[j]
                            )),
                            None => errors.push(format!(
                                "line {}: a row that does not end with '|': {}",
                                j + 1,
                                lines[j]
                            )),
                        }
                        j += 1;
                    }
                    if !blank(j) {
                        errors.push(format!(
                            "line {}: no blank line after a table: {}",
                            j + 1,
                            lines[j]
                        ));
                    }
                    i = j;
                    continue;
                }
                _ => errors.push(format!(
                    "line {}: a line starting with '|' that is no table: {line}",
                    i + 1
                )),
            }
        }
        i += 1;
    }
    if fence.is_some() {
        errors.push("a code fence is never closed".into());
    }
    if depth != 0 {
        errors.push(format!("{depth} <details> never closed"));
    }
    errors
}

#[test]
fn the_validator_finds_what_breaks_rendering() {
    let good = "## t\n\n| a | b |\n| --- | ---: |\n| 1 | x\\|y |\n\n<details>\n<summary>s</summary>\n\ntext\n\n```sh\n<script> | `\n```\n\n</details>\n";
    assert_eq!(violations(good), Vec::<String>::new());
    for (bad, why) in [
        (
            "| a | b |\n| --- | --- |\n| 1 | x|y |\n",
            "3 cells where the header has 2",
        ),
        ("| a | b |\n| --- |\n| 1 | 2 |\n", "delimiter"),
        ("text\n| a |\n| --- |\n| 1 |\n", "blank line before"),
        ("| a |\n| --- |\n| 1 |\ntext\n", "blank line after"),
        ("| a |\n| --- |\n| 1\n", "does not end"),
        (
            "<details>\n<summary>s</summary>\ntext\n\n</details>\n",
            "after <summary>",
        ),
        ("<details>\n\ntext\n\n</details>\n", "one-line <summary>"),
        (
            "<details>\n<summary>s</summary>\n\ntext\n</details>\n",
            "before </details>",
        ),
        ("a <script> b\n", "raw '<'"),
        ("a & b\n", "bare '&'"),
        ("a `b` c\n", "backtick"),
        // Inside an HTML block a backtick is literal; after its blank line it is Markdown again.
        (
            "<details>\n<summary>`s`</summary>\n\n`x`\n\n</details>\n",
            "line 4: an unescaped backtick",
        ),
        ("</details>\n", "closes nothing"),
        ("<details>\n<summary>s</summary>\n\n", "never closed"),
        ("```\ncode\n", "never closed"),
    ] {
        let found = violations(bad);
        assert!(
            found.iter().any(|e| e.contains(why)),
            "{bad:?}: expected a violation about {why}, got {found:?}"
        );
    }
}

/// Copies fixture `from` to `root/name` (`name` may hold `/`: nested directories).
fn case_named(root: &Path, name: &str, from: &str) {
    copy_case(&fixture(from), &root.join("hostile").join(name));
}

/// A tree with a passing, two failing, an errored and a skipped case, named to break Markdown.
fn hostile_tree() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    case_named(root, "fail|pipe`tick`", "failing/wrong_value");
    case_named(
        root,
        "<script>alert(1)",
        "errored/gather_index_out_of_range",
    );
    case_named(
        root,
        "new\nline & *stars* _x_",
        "skipped/unsupported_op_add",
    );
    // A name that holds `</details>`: the directory `a<` holding `details>`.
    case_named(root, "a</details>", "failing/diagnosed_first_write_wins");
    case_named(root, "- 1. ok", "passing/reduction_within_tolerance");
    tmp
}

#[test]
fn a_run_with_hostile_names_renders_as_gfm() {
    let tmp = hostile_tree();
    let md = tmp.path().join("summary.md");
    let r = run([
        "run".into(),
        tmp.path().join("hostile").into_os_string(),
        "--report".into(),
        format!("markdown={}", md.display()).into(),
        "--color".into(),
        "never".into(),
        "--jobs".into(),
        "2".into(),
    ] as [std::ffi::OsString; 8]);
    r.expect_code(1);
    let text = std::fs::read_to_string(&md).unwrap();
    assert_eq!(violations(&text), Vec::<String>::new(), "{text}");
    // Every case is there, failures in their blocks, the skipped one in its table.
    assert_eq!(text.matches("<details>").count(), 4, "{text}");
    for shown in [
        "<code>fail|pipe`tick`</code>",
        "<code>&lt;script&gt;alert(1)</code>",
        "<code>a&lt;/details&gt;</code>",
        "| new\\nline &amp; \\*stars\\* \\_x\\_ |",
    ] {
        assert!(text.contains(shown), "{shown} not in\n{text}");
    }
    // Raw only in the rerun command, inside its code fence (the validator checks the rest).
    let raw: Vec<&str> = text.lines().filter(|l| l.contains("<script>")).collect();
    assert_eq!(raw.len(), 1, "{text}");
    assert!(raw[0].starts_with("onnx-idx-check run "), "{text}");
    let tmp_path = regex::escape(tmp.path().to_str().unwrap());
    let mut settings = crate::snapshots::settings();
    settings.add_filter(&tmp_path, "[TMP]");
    settings.bind(|| insta::assert_snapshot!("markdown_hostile_names", text));
}
