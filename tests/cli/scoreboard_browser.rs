//! The scoreboard in a real browser: Debian's `chromium`, headless, driven over the DevTools
//! protocol on a pipe (`--remote-debugging-pipe`: commands on its fd 3, replies and events on
//! its fd 4, each message a JSON object ended by a NUL byte). It loads the page written for
//! testdata/ with two runtimes ([`super::scoreboard::two_runtime_page`]) at 1366x768, takes a
//! screenshot (decoded here: its size, and the grid's passed and failed colours in it), clicks a
//! grid cell with a real mouse event and reads the case list it opened from the DOM, then opens a
//! cell of the trait grid from a fragment link.
//!
//! `#[ignore]`d with the reason: a plain `cargo test` counts it as ignored; `.ci/run` installs
//! Chromium where it can and runs it with `--include-ignored`. Run that way without Chromium it
//! says `SKIPPED: chromium not installed`, and fails instead when
//! `ONNX_IDX_CHECK_REQUIRE_CHROMIUM=1`. `$ONNX_IDX_CHECK_CHROMIUM` names another binary.
#![allow(unsafe_code)]

use serde_json::{json, Value};
use std::io::Write;
use std::os::fd::FromRawFd;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

/// The Okabe–Ito colours of passed and failed in page.css.
const PASSED: [u8; 3] = [0x00, 0x72, 0xb2];
const FAILED: [u8; 3] = [0xd5, 0x5e, 0x00];

/// How long one DevTools command may take.
const REPLY: Duration = Duration::from_secs(20);

/// The Chromium binary: `$ONNX_IDX_CHECK_CHROMIUM`, else the first of Debian's and others' names
/// on PATH.
pub fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("ONNX_IDX_CHECK_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |d| d.join(name)))
        .find(|p| p.is_file())
}

/// A headless Chromium and one page of it, attached over the pipe.
struct Browser {
    child: Child,
    to: std::fs::File,
    from: Receiver<Value>,
    next: u64,
    session: Option<String>,
    _profile: tempfile::TempDir,
}

impl Browser {
    fn launch(binary: &Path) -> Browser {
        let profile = tempfile::tempdir().unwrap();
        let (to_read, to_write) = pipe();
        let (from_read, from_write) = pipe();
        let mut cmd = Command::new(binary);
        cmd.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--hide-scrollbars",
            "--remote-debugging-pipe",
            "--window-size=1366,768",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("about:blank")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        // SAFETY: between fork and exec only async-signal-safe calls: fcntl and dup2 put the
        // pipe's ends on fds 3 and 4 (through fds above 10, so neither is overwritten first).
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut cmd, move || {
                let a = libc::fcntl(to_read, libc::F_DUPFD, 10);
                let b = libc::fcntl(from_write, libc::F_DUPFD, 10);
                if a < 0 || b < 0 || libc::dup2(a, 3) < 0 || libc::dup2(b, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().expect("chromium starts");
        // SAFETY: the fds are this process's own, from pipe2, each wrapped once.
        let (to, from_file) = unsafe {
            libc::close(to_read);
            libc::close(from_write);
            (
                std::fs::File::from_raw_fd(to_write),
                std::fs::File::from_raw_fd(from_read),
            )
        };
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut reader = std::io::BufReader::new(from_file);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match std::io::BufRead::read_until(&mut reader, 0, &mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        if buf.last() == Some(&0) {
                            buf.pop();
                        }
                        if let Ok(v) = serde_json::from_slice::<Value>(&buf) {
                            if tx.send(v).is_err() {
                                return;
                            }
                        }
                    }
                }
            }
        });
        Browser {
            child,
            to,
            from: rx,
            next: 0,
            session: None,
            _profile: profile,
        }
    }

    /// Sends a command (to the page once attached) and waits for its result.
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let mut msg = json!({"id": self.next, "method": method, "params": params});
        if let Some(s) = &self.session {
            msg["sessionId"] = Value::from(s.clone());
        }
        let mut bytes = serde_json::to_vec(&msg).unwrap();
        bytes.push(0);
        self.to.write_all(&bytes).unwrap();
        let deadline = Instant::now() + REPLY;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let v = self
                .from
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("no reply to {method}: {e}"));
            if v["id"] == self.next {
                assert!(v.get("error").is_none(), "{method}: {v}");
                return v["result"].clone();
            }
        }
    }

    /// A new page, attached, at 1366x768.
    fn open_page(&mut self) {
        let target = self.call("Target.createTarget", json!({"url": "about:blank"}));
        let attached = self.call(
            "Target.attachToTarget",
            json!({"targetId": target["targetId"], "flatten": true}),
        );
        self.session = Some(attached["sessionId"].as_str().unwrap().to_string());
        self.call("Page.enable", json!({}));
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": 1366, "height": 768, "deviceScaleFactor": 1, "mobile": false}),
        );
    }

    /// The value of a JavaScript expression.
    fn eval(&mut self, expr: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expr, "returnByValue": true}),
        );
        assert!(r.get("exceptionDetails").is_none(), "{expr}: {r}");
        r["result"]["value"].clone()
    }

    /// A real click (press and release) at the centre of the element the expression `find` gives.
    fn click(&mut self, find: &str) {
        let at = self.eval(&format!(
            "(() => {{ const e = {find}; e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()"
        ));
        let (x, y) = (at[0].as_f64().unwrap(), at[1].as_f64().unwrap());
        self.call(
            "Input.dispatchMouseEvent",
            json!({"type": "mouseMoved", "x": x, "y": y}),
        );
        for kind in ["mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            );
        }
    }
}

impl Browser {
    /// A key pressed and released on the focused element.
    fn key(&mut self, key: &str, code: u32, text: &str) {
        for kind in ["keyDown", "keyUp"] {
            let mut event =
                json!({"type": kind, "key": key, "code": key, "windowsVirtualKeyCode": code});
            if kind == "keyDown" && !text.is_empty() {
                event["text"] = Value::from(text);
            }
            self.call("Input.dispatchKeyEvent", event);
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A pipe whose ends close on exec (the child gets its own copies on fds 3 and 4).
fn pipe() -> (i32, i32) {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two fds into the array it is given.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    assert_eq!(rc, 0, "pipe2: {}", std::io::Error::last_os_error());
    (fds[0], fds[1])
}

/// Standard base64, as the protocol sends a screenshot.
fn base64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let digits: Vec<u8> = text.bytes().filter(|&c| c != b'=').map(value).collect();
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, &d)| acc | u32::from(d) << (18 - 6 * i));
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    out
}

/// A decoded 8-bit RGB or RGBA PNG: width, height and its pixels' RGB.
fn png(bytes: &[u8]) -> (u32, u32, Vec<[u8; 3]>) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    let (mut at, mut idat) = (8, Vec::new());
    let (mut width, mut height, mut channels) = (0u32, 0u32, 0usize);
    while at + 8 <= bytes.len() {
        let len = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        let kind = &bytes[at + 4..at + 8];
        let body = &bytes[at + 8..at + 8 + len];
        match kind {
            b"IHDR" => {
                width = u32::from_be_bytes(body[0..4].try_into().unwrap());
                height = u32::from_be_bytes(body[4..8].try_into().unwrap());
                assert_eq!(body[8], 8, "bit depth");
                assert_eq!(body[12], 0, "interlaced");
                channels = match body[9] {
                    2 => 3,
                    6 => 4,
                    t => panic!("colour type {t}"),
                };
            }
            b"IDAT" => idat.extend_from_slice(body),
            b"IEND" => break,
            _ => {}
        }
        at += 12 + len;
    }
    let raw = miniz_oxide::inflate::decompress_to_vec_zlib(&idat).expect("zlib");
    let stride = width as usize * channels;
    let mut prev = vec![0u8; stride];
    let mut pixels = Vec::with_capacity(width as usize * height as usize);
    for y in 0..height as usize {
        let line = &raw[y * (stride + 1)..(y + 1) * (stride + 1)];
        let mut cur = line[1..].to_vec();
        for i in 0..stride {
            let a = if i >= channels { cur[i - channels] } else { 0 };
            let (b, c) = (prev[i], if i >= channels { prev[i - channels] } else { 0 });
            let add = match line[0] {
                0 => 0,
                1 => a,
                2 => b,
                3 => ((u16::from(a) + u16::from(b)) / 2) as u8,
                4 => {
                    let p = i16::from(a) + i16::from(b) - i16::from(c);
                    let (pa, pb, pc) = (
                        (p - i16::from(a)).abs(),
                        (p - i16::from(b)).abs(),
                        (p - i16::from(c)).abs(),
                    );
                    if pa <= pb && pa <= pc {
                        a
                    } else if pb <= pc {
                        b
                    } else {
                        c
                    }
                }
                f => panic!("filter {f}"),
            };
            cur[i] = cur[i].wrapping_add(add);
        }
        pixels.extend(cur.chunks(channels).map(|p| [p[0], p[1], p[2]]));
        prev = cur;
    }
    (width, height, pixels)
}

/// A PNG screenshot of the page, its viewport `size` wide and high.
fn screenshot(b: &mut Browser, size: (u32, u32)) -> Vec<u8> {
    b.call(
        "Emulation.setDeviceMetricsOverride",
        json!({"width": size.0, "height": size.1, "deviceScaleFactor": 1, "mobile": false}),
    );
    let shot = b.call("Page.captureScreenshot", json!({"format": "png"}));
    base64(shot["data"].as_str().unwrap())
}

#[test]
fn base64_decodes_what_the_protocol_sends() {
    assert_eq!(base64("TWFu"), b"Man");
    assert_eq!(base64("TWE="), b"Ma");
    assert_eq!(base64("TQ=="), b"M");
}

#[test]
#[ignore = "needs Debian's chromium (apt-get install chromium); run with --include-ignored"]
fn the_scoreboard_draws_its_grid_and_a_click_opens_a_cells_cases_in_chromium() {
    let Some(binary) = chromium() else {
        if std::env::var_os("ONNX_IDX_CHECK_REQUIRE_CHROMIUM").is_some_and(|v| v == "1") {
            panic!("ONNX_IDX_CHECK_REQUIRE_CHROMIUM=1 but no chromium on PATH");
        }
        crate::support::skipped("the_scoreboard_in_chromium: SKIPPED: chromium not installed");
        return;
    };
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let page = super::scoreboard::two_runtime_page(dir.path());
    let url = format!("file://{}", page.display());
    let mut b = Browser::launch(&binary);
    b.open_page();
    b.call("Page.navigate", json!({"url": url}));
    wait_drawn(&mut b, &url);

    // The screenshot: the laptop screen's size, the grid's bars in the passed and the failed
    // colours (B's GatherElements-13 cell, and the legend's swatch).
    let shot = screenshot(&mut b, (1366, 768));
    if let Some(keep) = std::env::var_os("ONNX_IDX_CHECK_SCREENSHOT") {
        std::fs::write(keep, &shot).unwrap();
    }
    let (w, h, pixels) = png(&shot);
    assert_eq!((w, h), (1366, 768));
    let count = |rgb: [u8; 3]| pixels.iter().filter(|&&p| p == rgb).count();
    assert!(count(PASSED) > 2000, "passed pixels: {}", count(PASSED));
    assert!(count(FAILED) > 100, "failed pixels: {}", count(FAILED));
    let cells = b.eval("document.querySelectorAll('#grid-ops .cell').length");
    let rows = b.eval("document.querySelectorAll('#grid-ops tbody tr').length");
    assert_eq!(cells.as_u64().unwrap(), 2 * rows.as_u64().unwrap());
    assert_eq!(
        b.eval("document.getElementById('panel').hidden"),
        Value::Bool(true)
    );

    // A real click on B's GatherElements-13 cell opens its 8 cases, the failed one first.
    let cell = "[...document.querySelectorAll('#grid-ops .cell')].find(c => c.dataset.key === 'GatherElements-13' && c.dataset.rt === 'B')";
    assert_eq!(
        b.eval(&format!("{cell}.querySelector('.count').textContent")),
        "7/8"
    );
    b.click(cell);
    let opened = b.eval(
        "JSON.stringify({hidden: document.getElementById('panel').hidden, \
          title: document.getElementById('panel-title').textContent, hash: location.hash, \
          rows: [...document.querySelectorAll('#cases tbody tr')].map(tr => [tr.dataset.case, \
            [...tr.querySelectorAll('td.verdict')].map(td => td.dataset.cat), \
            tr.querySelector('td.msg').textContent, !!tr.querySelector('.rerun code')])})",
    );
    let opened: Value = serde_json::from_str(opened.as_str().unwrap()).unwrap();
    assert_eq!(opened["hidden"], false, "{opened}");
    assert_eq!(opened["title"], "GatherElements-13 · B: 8 cases");
    assert_eq!(opened["hash"], "#cell=GatherElements-13/B");
    let rows = opened["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 8, "{opened}");
    assert_eq!(rows[0][0], super::scoreboard::WRONG);
    assert_eq!(rows[0][1], json!(["passed", "failed"]));
    assert!(
        rows[0][2]
            .as_str()
            .unwrap()
            .contains("expected 7.0, got 4.0"),
        "{opened}"
    );
    assert_eq!(rows[0][3], true);
    for r in &rows[1..] {
        assert_eq!(r[1], json!(["passed", "passed"]), "{r}");
    }

    // A fragment link opens a cell of the trait grid, narrowed to B's failures.
    let link = format!("{url}#trait-cell=negative-indices/B&verdict=failed");
    b.call("Page.navigate", json!({"url": link}));
    wait_drawn(&mut b, &link);
    let title = b.eval("document.getElementById('panel').hidden ? '' : document.getElementById('panel-title').textContent");
    assert_eq!(title, "trait negative-indices · B: 1 case");
    assert_eq!(
        b.eval("document.querySelector('input[value=passed]').checked"),
        Value::Bool(false)
    );

    // The keyboard: Escape closes the cases; Enter on a focused cell (of those left by the
    // filter) opens them.
    b.key("Escape", 27, "");
    assert_eq!(
        b.eval("document.getElementById('panel').hidden"),
        Value::Bool(true)
    );
    b.eval("[...document.querySelectorAll('#grid-ops .cell')].find(c => c.dataset.key === 'GatherElements-13' && c.dataset.rt === 'B').focus()");
    b.key("Enter", 13, "\r");
    assert_eq!(
        b.eval("location.hash"),
        "#cell=GatherElements-13/B&verdict=failed"
    );
    assert_eq!(
        b.eval("document.activeElement.id"),
        "panel-title",
        "the focus moves to the cases"
    );
    drop(b);
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
}

/// Waits until the page at `url` (fragment included) has run its script.
fn wait_drawn(b: &mut Browser, url: &str) {
    let deadline = Instant::now() + REPLY;
    let want = serde_json::to_string(url).unwrap();
    let ready = format!(
        "document.readyState === 'complete' && document.documentElement.getAttribute('data-ready') === 'true' && decodeURI(location.href) === decodeURI({want})"
    );
    while b.eval(&ready) != Value::Bool(true) {
        assert!(Instant::now() < deadline, "the page was not drawn");
        std::thread::sleep(Duration::from_millis(50));
    }
}
