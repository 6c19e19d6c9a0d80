//! One worker process of a runtime under test: started once, asked one JSON line at a time,
//! stopped when it dies, hangs or is no longer needed.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The longest protocol line accepted: replies are short, and a worker that writes megabytes
/// without a newline is broken, not slow.
const MAX_LINE: u64 = 1 << 20;
/// Lines of the worker's standard error kept for the message of a crash: the last ones, and
/// the first lines of a panic.
const STDERR_LINES: usize = 8;
const NOTABLE_LINES: usize = 4;
/// How long a worker that was asked to finish (its input closed) may take to exit.
const FINISH: Duration = Duration::from_secs(5);

/// What a worker wrote after a reply, within the grace [`Worker::after_reply`] gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum After {
    /// Nothing: it waits for the next request, as the protocol says.
    Quiet,
    /// Another line (a second reply, or a stray line of a log).
    Line(String),
    /// A line it could not deliver whole: why.
    Broken(String),
    /// It closed its standard output (or exited).
    Closed,
}

/// Why a worker gave no usable reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Death {
    /// It exited or was killed (by a signal), or wrote a line that is not a reply.
    Crashed(String),
    /// No reply within the time limit; the worker was killed.
    TimedOut(Duration),
}

/// A running worker.
pub(crate) struct Worker {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Result<String, String>>,
    stderr: Arc<Mutex<Stderr>>,
    /// Whether [`Worker::kill`] has run.
    ended: bool,
    /// The id of the request it last answered (a late second reply carries it).
    pub(crate) answered: Option<u64>,
}

/// What a worker wrote to its standard error that a crash message quotes.
#[derive(Default)]
struct Stderr {
    /// A panic's location and message (a Rust runtime's backtrace would push them out of
    /// `last`).
    notable: Vec<String>,
    /// Whether the line before was a panic's location.
    after_panic: bool,
    /// The last lines.
    last: VecDeque<String>,
}

impl Worker {
    /// Starts `argv` in a process group of its own (a runtime may fork helpers, and killing the
    /// group ends them too), with the protocol on its standard input and output.
    pub(crate) fn spawn(argv: &[OsString]) -> std::io::Result<Worker> {
        let (program, args) = argv.split_first().ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "empty command")
        })?;
        let mut cmd = Command::new(program);
        cmd.args(args)
            .env("ONNX_IDX_CHECK_PROTOCOL", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            cmd.process_group(0);
        }
        let mut child = super::reaper::spawning(|| cmd.spawn())?;
        if let Ok(pid) = i32::try_from(child.id()) {
            super::interrupt::groups::register(pid);
        }
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let stderr_pipe = child.stderr.take();
        let (tx, lines) = std::sync::mpsc::channel();
        if let Some(out) = stdout {
            std::thread::spawn(move || {
                let mut reader = BufReader::new(out);
                loop {
                    let mut line = Vec::new();
                    let read = (&mut reader).take(MAX_LINE).read_until(b'\n', &mut line);
                    let sent = match read {
                        Ok(0) => break,
                        Ok(_) if line.last() != Some(&b'\n') && line.len() as u64 >= MAX_LINE => {
                            tx.send(Err(format!("a line longer than {MAX_LINE} bytes")))
                        }
                        Ok(_) => tx.send(Ok(String::from_utf8_lossy(&line).trim_end().to_string())),
                        Err(e) => tx.send(Err(format!("reading its output: {e}"))),
                    };
                    if sent.is_err() {
                        break;
                    }
                }
            });
        }
        let stderr = Arc::new(Mutex::new(Stderr::default()));
        if let Some(err) = stderr_pipe {
            let keep = Arc::clone(&stderr);
            std::thread::spawn(move || {
                let mut reader = BufReader::new(err);
                let mut line = Vec::new();
                loop {
                    line.clear();
                    match (&mut reader).take(MAX_LINE).read_until(b'\n', &mut line) {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {
                            let text = String::from_utf8_lossy(&line).trim_end().to_string();
                            if text.is_empty() {
                                continue;
                            }
                            let panic_line = text.contains("panicked at");
                            if let Ok(mut kept) = keep.lock() {
                                if kept.notable.len() < NOTABLE_LINES
                                    && (panic_line || kept.after_panic)
                                {
                                    kept.notable.push(text.clone());
                                }
                                // The message follows a panic's location on the next line.
                                kept.after_panic = panic_line;
                                if kept.last.len() == STDERR_LINES {
                                    kept.last.pop_front();
                                }
                                kept.last.push_back(text);
                            }
                        }
                    }
                }
            });
        }
        Ok(Worker {
            child,
            stdin,
            lines,
            stderr,
            ended: false,
            answered: None,
        })
    }

    /// The next line the worker writes, within `timeout`. A worker whose resident memory grows
    /// past [`memory_limit`] is stopped as crashed: a runtime that loops allocating would
    /// otherwise take the machine down before the time limit.
    pub(crate) fn receive(&mut self, timeout: Duration) -> Result<String, Death> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self
                .lines
                .recv_timeout(left.min(Duration::from_millis(200)))
            {
                Ok(Ok(line)) => return Ok(line),
                Ok(Err(why)) => return Err(self.crashed(&why)),
                Err(RecvTimeoutError::Timeout) if left.is_zero() => {
                    self.kill();
                    return Err(Death::TimedOut(timeout));
                }
                Err(RecvTimeoutError::Timeout) => {
                    // A worker that died while a process it forked holds its output open
                    // (OpenVINO's telemetry child) sends no end of file; its exit tells. A line
                    // it wrote just before exiting still counts.
                    if matches!(self.child.try_wait(), Ok(Some(_))) {
                        return match self.lines.recv_timeout(Duration::from_millis(50)) {
                            Ok(Ok(line)) => Ok(line),
                            _ => Err(self.crashed("")),
                        };
                    }
                    let limit = memory_limit();
                    if let Some(rss) = self.resident_bytes().filter(|&r| r > limit) {
                        let why = format!(
                            "its memory grew to {} MiB, past the {} MiB limit for a worker",
                            rss >> 20,
                            limit >> 20
                        );
                        return Err(self.crashed(&why));
                    }
                }
                Err(RecvTimeoutError::Disconnected) => return Err(self.crashed("")),
            }
        }
    }

    /// What the worker writes within `grace` after a reply (nothing, for a worker that keeps
    /// the protocol). A zero grace only looks at what has already arrived.
    pub(crate) fn after_reply(&self, grace: Duration) -> After {
        match self.lines.recv_timeout(grace) {
            Ok(Ok(line)) => After::Line(line),
            Ok(Err(why)) => After::Broken(why),
            Err(RecvTimeoutError::Timeout) => After::Quiet,
            Err(RecvTimeoutError::Disconnected) => After::Closed,
        }
    }

    /// The worker's resident memory, where the system tells (`/proc/PID/statm` on Linux).
    fn resident_bytes(&self) -> Option<u64> {
        let statm = std::fs::read_to_string(format!("/proc/{}/statm", self.child.id())).ok()?;
        let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
        Some(pages.saturating_mul(page_size()))
    }

    /// Sends one line and waits for the reply.
    pub(crate) fn ask(&mut self, line: &str, timeout: Duration) -> Result<String, Death> {
        let sent = self
            .stdin
            .as_mut()
            .map(|w| {
                w.write_all(line.as_bytes())
                    .and_then(|()| w.write_all(b"\n"))
            })
            .map(|r| r.and_then(|()| self.stdin.as_mut().map_or(Ok(()), |w| w.flush())));
        match sent {
            Some(Ok(())) => self.receive(timeout),
            // A worker that died between two requests: its end of file says how.
            _ => Err(self.crashed("")),
        }
    }

    /// A worker that is not well: kill it and say how it ended, with what it last wrote to its
    /// standard error.
    pub(crate) fn crashed(&mut self, why: &str) -> Death {
        // Give a dying process a moment to be reaped, so the signal shows rather than a kill.
        let deadline = Instant::now() + Duration::from_millis(500);
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(s)) => break Some(s),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                _ => break None,
            }
        };
        self.kill();
        let mut message = match status {
            Some(s) => exit_description(s),
            None => "onnx-idx-check stopped the worker".to_string(),
        };
        if !why.is_empty() {
            message = format!("{why}; {message}");
        }
        let tail = self.stderr_tail();
        if !tail.is_empty() {
            message.push_str("; its last words: ");
            message.push_str(&tail);
        }
        Death::Crashed(message)
    }

    /// The last lines of the worker's standard error, joined with ` | `.
    pub(crate) fn stderr_tail(&self) -> String {
        // Its reader thread may still be draining the pipe of a process that just died.
        std::thread::sleep(Duration::from_millis(20));
        self.stderr
            .lock()
            .map(|s| {
                let mut lines = s.notable.clone();
                lines.extend(s.last.iter().filter(|l| !s.notable.contains(l)).cloned());
                lines.join(" | ")
            })
            .unwrap_or_default()
    }

    /// Ends the worker and everything it forked, once. The group is killed even when the worker
    /// itself has died: what it forked lives on in the group (OpenVINO's telemetry forks a child
    /// that deadlocks, and would outlive every crashed worker).
    pub(crate) fn kill(&mut self) {
        if self.ended {
            return;
        }
        self.ended = true;
        // Those that left the group first, while the worker still holds them in its tree. Only
        // while it is unreaped: the number of a reaped worker may be another process's by now.
        if let Ok(None) = self.child.try_wait() {
            super::reaper::kill_descendants(self.child.id());
        }
        #[cfg(unix)]
        if let Ok(pid) = libc::pid_t::try_from(self.child.id()) {
            // SAFETY: killpg only sends a signal; the group is the child's own (process_group(0)),
            // and its number cannot be taken by another group while this one has a member.
            unsafe {
                libc::killpg(pid, libc::SIGKILL);
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.forget();
        self.stdin = None;
        super::reaper::ended();
    }

    /// Takes the worker's group off the list an interrupt kills: it is reaped, or about to be.
    fn forget(&self) {
        if let Ok(pid) = i32::try_from(self.child.id()) {
            super::interrupt::groups::unregister(pid);
        }
    }

    /// Closes the worker's input and waits a little for it to exit; kills it after that.
    pub(crate) fn finish(mut self) {
        self.stdin = None;
        let deadline = Instant::now() + FINISH;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        self.kill();
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The memory page size.
fn page_size() -> u64 {
    #[cfg(unix)]
    {
        // SAFETY: sysconf only reads a configuration value.
        let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if let Ok(n) = u64::try_from(n) {
            if n > 0 {
                return n;
            }
        }
    }
    4096
}

/// The most resident memory a worker may hold: `$ONNX_IDX_CHECK_WORKER_MEMORY` bytes, else half
/// the machine's memory (2 GiB at least).
pub(crate) fn memory_limit() -> u64 {
    static LIMIT: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        if let Some(n) = std::env::var("ONNX_IDX_CHECK_WORKER_MEMORY")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
        {
            return n;
        }
        #[cfg(unix)]
        {
            // SAFETY: sysconf only reads a configuration value.
            let pages = unsafe { libc::sysconf(libc::_SC_PHYS_PAGES) };
            if let Ok(pages) = u64::try_from(pages) {
                return (pages.saturating_mul(page_size()) / 2).max(2 << 30);
            }
        }
        8 << 30
    })
}

/// `killed by signal 8 (SIGFPE)`, `exited with status 3`.
fn exit_description(status: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return format!("killed by signal {sig} ({})", signal_name(sig));
        }
    }
    match status.code() {
        Some(code) => format!("exited with status {code}"),
        None => "ended".to_string(),
    }
}

/// The conventional name of a signal number on Linux.
fn signal_name(sig: i32) -> String {
    let name = match sig {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        5 => "SIGTRAP",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        24 => "SIGXCPU",
        25 => "SIGXFSZ",
        31 => "SIGSYS",
        _ => return format!("signal {sig}"),
    };
    name.to_string()
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn sh(script: &str) -> Worker {
        Worker::spawn(&["sh".into(), "-c".into(), script.into()]).unwrap()
    }

    #[test]
    fn a_reply_line_comes_back() {
        let mut w = sh("read line; echo \"got $line\"");
        assert_eq!(w.ask("hi", Duration::from_secs(10)).unwrap(), "got hi");
        w.finish();
    }

    #[test]
    fn a_worker_killed_by_a_signal_is_crashed_with_the_signal_and_its_stderr() {
        let mut w = sh("echo 'about to die' >&2; kill -FPE $$");
        let Death::Crashed(why) = w.receive(Duration::from_secs(10)).unwrap_err() else {
            panic!("not a crash");
        };
        assert!(why.contains("killed by signal 8 (SIGFPE)"), "{why}");
        assert!(why.contains("about to die"), "{why}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn what_a_crashed_worker_forked_dies_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let mut w = sh(&format!(
            "sleep 300 </dev/null >/dev/null 2>&1 & echo $! > '{}'; kill -FPE $$",
            pid_file.display()
        ));
        assert!(matches!(
            w.receive(Duration::from_secs(10)),
            Err(Death::Crashed(_))
        ));
        drop(w);
        let pid = std::fs::read_to_string(&pid_file).unwrap();
        let alive = || {
            // A zombie waiting for init to reap it is dead too.
            std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()))
                .is_ok_and(|stat| !stat.contains(") Z "))
        };
        let end = Instant::now() + Duration::from_secs(5);
        while alive() && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!alive(), "the worker's child {pid} outlived it");
    }

    #[test]
    fn an_exit_is_crashed_with_its_status() {
        let mut w = sh("exit 3");
        let Death::Crashed(why) = w.receive(Duration::from_secs(10)).unwrap_err() else {
            panic!("not a crash");
        };
        assert!(why.starts_with("exited with status 3"), "{why}");
    }

    #[test]
    fn a_hang_times_out_and_the_whole_group_is_killed() {
        // The child forks a sleeper that keeps the pipe open: only killing the group ends it.
        let mut w = sh("sleep 600 & sleep 600");
        let start = Instant::now();
        let d = w.receive(Duration::from_millis(300)).unwrap_err();
        assert_eq!(d, Death::TimedOut(Duration::from_millis(300)));
        assert!(start.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn an_endless_line_is_refused_not_buffered() {
        let mut w = sh("head -c 3000000 /dev/zero | tr '\\0' x; sleep 600");
        let Death::Crashed(why) = w.receive(Duration::from_secs(20)).unwrap_err() else {
            panic!("not a crash");
        };
        assert!(why.starts_with("a line longer than 1048576 bytes"), "{why}");
    }

    #[test]
    fn a_panic_s_location_and_message_outlive_a_long_backtrace() {
        let mut w = sh("echo \"thread 'main' panicked at gather.rs:85:59:\" >&2; \
             echo 'index out of bounds' >&2; for i in $(seq 60); do echo \"  $i: frame\" >&2; done; \
             kill -ABRT $$");
        let Death::Crashed(why) = w.receive(Duration::from_secs(10)).unwrap_err() else {
            panic!("not a crash");
        };
        assert!(
            why.contains("panicked at gather.rs:85:59: | index out of bounds | "),
            "{why}"
        );
        assert!(why.ends_with("60: frame"), "{why}");
    }

    #[test]
    fn signal_names_are_the_usual_ones() {
        assert_eq!(signal_name(11), "SIGSEGV");
        assert_eq!(signal_name(6), "SIGABRT");
        assert_eq!(signal_name(64), "signal 64");
    }
}
