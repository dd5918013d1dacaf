//! `run_command`: a shell command in the workspace. Asks first.
//!
//! The command starts through the process door (`crate::process`): its own session and process
//! group with no terminal, a scrubbed environment, the session's sandbox. A timeout or an
//! interrupt kills the group with every child it started (a `cargo test` and its test binaries),
//! not just the shell. Both pipes are drained at the same time (a command that floods stderr
//! while stdout stays open must not block), each keeping its head and tail; a stream larger than
//! the result shows is also written, as it arrives, to a scratch file (a gigabyte of output costs
//! a 64 KiB chunk, the head and the tail in memory), and the result's first line says what was
//! cut and names the file (`tools::cut`). The call ends when the
//! shell exits, not when the pipes close: a background child (`server &`) would hold them open
//! forever. After a one-second grace for output in flight, whatever is left of the group is killed
//! and the result says so; the door's registry kills what is left when the session ends. A write
//! the sandbox refused is named after the exit line so the model does not retry blindly.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::process::{GroupGuard, group_alive};
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::json;
use tokio::io::AsyncReadExt;

use super::cut::{Cut, count};
use super::scratch::ScratchFile;
use super::workspace::confine;
use super::{
    Scratch, Tool, ToolContext, ToolError, ToolOutput, cap_head_tail, optional_str, optional_usize,
    required_str,
};
use crate::conversation::ToolSpec;

/// Default and largest timeout, in seconds.
pub const DEFAULT_TIMEOUT_SECS: u64 = 120;
const MAX_TIMEOUT_SECS: u64 = 1800;
/// Characters of output kept from the start and from the end of each stream.
const HEAD_CHARS: usize = 12_000;
const TAIL_CHARS: usize = 4_000;
/// Bytes kept from the start and the end of each stream (a UTF-8 character is at most 4 bytes,
/// so these always hold the characters above); the middle is drained and only counted.
const HEAD_BYTES: usize = HEAD_CHARS * 4;
const TAIL_BYTES: usize = TAIL_CHARS * 4;
/// How long output in flight may still arrive after the shell exited.
const EXIT_GRACE: Duration = Duration::from_secs(1);
/// How long the pipes may take to close once the group was killed.
const KILL_GRACE: Duration = Duration::from_secs(2);

/// The `run_command` tool.
pub struct RunCommand;

impl Tool for RunCommand {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "run_command".into(),
            description:
                "Run a shell command in the workspace (or `dir`); returns exit code and output."
                    .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "cmd": {"type": "string"},
                    "dir": {"type": "string"},
                    "timeout": {"type": "integer", "description": "seconds, default 120"}
                },
                "required": ["cmd"]
            }),
        }
    }

    fn read_only(&self) -> bool {
        false
    }

    fn time_limit(&self, args: &serde_json::Value) -> Duration {
        // The command's own timeout, then the kill and the pipes' grace, then a margin.
        requested_timeout(args).unwrap_or(Duration::from_secs(MAX_TIMEOUT_SECS))
            + EXIT_GRACE
            + KILL_GRACE
            + Duration::from_secs(30)
    }

    fn run<'a>(
        &'a self,
        args: &'a serde_json::Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        async move {
            let cmd = required_str(args, "cmd")?;
            let dir = confine(ctx, optional_str(args, "dir").unwrap_or("."))?;
            let timeout = requested_timeout(args)?;
            let ran = run_confined(cmd, &dir, timeout, ctx.door("sh")?, Some(&ctx.scratch)).await?;
            let refused = ctx
                .sandbox
                .explain_denial(&ran.output, &dir, &ctx.writable_roots());
            Ok(ToolOutput {
                exit_code: ran.exit_code,
                saved_path: ran.saved.first().cloned(),
                ..ToolOutput::text(ran.text(refused.as_deref()))
            })
        }
        .boxed()
    }
}

/// The timeout the call asks for, clamped to 1 s..30 min.
fn requested_timeout(args: &serde_json::Value) -> Result<Duration, ToolError> {
    let secs = optional_usize(args, "timeout")?
        .map(|t| t as u64)
        .unwrap_or(DEFAULT_TIMEOUT_SECS)
        .clamp(1, MAX_TIMEOUT_SECS);
    Ok(Duration::from_secs(secs))
}

/// Bytes of a stream the result can show whole: past this (a character is at least a byte, so
/// up to here `HEAD_CHARS + TAIL_CHARS` is never cut), the stream is saved to the scratch folder.
const SAVE_FROM: u64 = (HEAD_CHARS + TAIL_CHARS) as u64;

/// One stream's output: its first bytes, its last bytes, how many there were in all, and the
/// scratch file the whole stream went to once it outgrew what the result shows.
#[derive(Default)]
struct Capture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
    /// The scratch file holding the whole stream (written as it arrives).
    saved: Option<PathBuf>,
    /// Why the stream could not be saved.
    unsaved: Option<String>,
}

impl Capture {
    fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = HEAD_BYTES.saturating_sub(self.head.len());
        let (to_head, rest) = bytes.split_at(room.min(bytes.len()));
        self.head.extend_from_slice(to_head);
        bytes = rest;
        if let Some(from) = bytes.len().checked_sub(TAIL_BYTES) {
            self.tail.clear();
            bytes = bytes.get(from..).unwrap_or_default();
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(TAIL_BYTES);
        self.tail.drain(..overflow);
        self.tail.extend(bytes);
    }

    /// Every byte so far, while nothing was dropped (`total <= SAVE_FROM`).
    fn so_far(&self) -> Vec<u8> {
        let mut all = self.head.clone();
        all.extend(self.tail.iter());
        all
    }

    /// The text kept: head and tail in characters, with a marker for what was dropped between,
    /// and whether anything was.
    fn text(&self) -> (String, bool) {
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        let dropped = self.total - self.head.len() as u64 - tail.len() as u64;
        if dropped == 0 {
            let mut all = self.head.clone();
            all.extend_from_slice(&tail);
            let all = String::from_utf8_lossy(&all);
            let kept = cap_head_tail(&all, HEAD_CHARS, TAIL_CHARS);
            let cut = kept.len() != all.len();
            return (kept, cut);
        }
        let head = String::from_utf8_lossy(&self.head);
        let (head, _) = super::take_chars(&head, HEAD_CHARS);
        // The tail may start inside a UTF-8 sequence: skip its continuation bytes.
        let start = tail
            .iter()
            .position(|b| b & 0xC0 != 0x80)
            .unwrap_or(tail.len());
        let tail = String::from_utf8_lossy(tail.get(start..).unwrap_or_default());
        let tail = super::last_chars(&tail, TAIL_CHARS);
        let omitted = self.total - head.len() as u64 - tail.len() as u64;
        (
            format!("{head}\n[... {omitted} bytes omitted ...]\n{tail}"),
            true,
        )
    }
}

/// Drains `stream` into `capture` until it closes; past `SAVE_FROM` bytes, the whole stream also
/// goes to a new file in `save` (named after `name`), written off the runtime, so a gigabyte of
/// output is kept on disk with only a chunk, the head and the tail in memory.
async fn drain(
    mut stream: impl tokio::io::AsyncRead + Unpin,
    capture: Arc<Mutex<Capture>>,
    save: Option<(Scratch, &'static str)>,
) {
    let mut chunk = vec![0u8; 64 * 1024];
    let mut file: Option<ScratchFile> = None;
    let mut saving = save.is_some();
    loop {
        let n = match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let bytes = chunk.get(..n).unwrap_or_default();
        let total = capture.lock().map(|c| c.total).unwrap_or_default();
        if saving && file.is_none() && total + n as u64 > SAVE_FROM {
            let so_far = capture.lock().map(|c| c.so_far()).unwrap_or_default();
            file = start_saving(&save, so_far, &capture).await;
            saving = file.is_some();
        }
        if let Some(open) = file.take() {
            let piece = bytes.to_vec();
            match tokio::task::spawn_blocking(move || {
                let mut open = open;
                let written = open.write(&piece);
                (open, written)
            })
            .await
            {
                Ok((open, Ok(()))) => file = Some(open),
                Ok((_, Err(e))) => unsaved(&capture, e.to_string()),
                Err(e) => unsaved(&capture, e.to_string()),
            }
            saving = file.is_some();
        }
        if let Ok(mut c) = capture.lock() {
            c.push(bytes);
        }
    }
    if let Some(open) = file {
        match tokio::task::spawn_blocking(move || open.finish()).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => unsaved(&capture, e.to_string()),
            Err(e) => unsaved(&capture, e.to_string()),
        }
    }
}

/// Opens the stream's scratch file with what came so far in it; `None` (and the reason kept)
/// when it cannot be.
async fn start_saving(
    save: &Option<(Scratch, &'static str)>,
    so_far: Vec<u8>,
    capture: &Arc<Mutex<Capture>>,
) -> Option<ScratchFile> {
    let (scratch, name) = save.clone()?;
    let opened = tokio::task::spawn_blocking(move || {
        let mut file = scratch.stream(name, "txt")?;
        file.write(&so_far)?;
        Ok::<_, std::io::Error>(file)
    })
    .await;
    match opened {
        Ok(Ok(file)) => {
            if let Ok(mut c) = capture.lock() {
                c.saved = Some(file.path().to_path_buf());
            }
            Some(file)
        }
        Ok(Err(e)) => {
            unsaved(capture, e.to_string());
            None
        }
        Err(e) => {
            unsaved(capture, e.to_string());
            None
        }
    }
}

/// The stream stops being saved, for this reason; a partial file is not offered as the whole.
fn unsaved(capture: &Arc<Mutex<Capture>>, why: String) {
    if let Ok(mut c) = capture.lock() {
        c.saved = None;
        c.unsaved = Some(why);
    }
}

/// What the streams give the result: stdout then stderr, and the cut line when either was cut.
fn collect(out: &Arc<Mutex<Capture>>, err: &Arc<Mutex<Capture>>) -> Collected {
    let texts = [("stdout", out), ("stderr", err)].map(|(name, capture)| {
        let (text, cut) = capture.lock().map(|c| c.text()).unwrap_or_default();
        (name, text, cut, capture)
    });
    let output = combine(&texts[0].1, &texts[1].1);
    let mut shown = Vec::new();
    let mut saved = Vec::new();
    let mut unsaved = Vec::new();
    for (name, _, cut, capture) in &texts {
        let Ok(c) = capture.lock() else { continue };
        if !cut {
            if let Some(path) = &c.saved {
                // Saved on the way but shown whole after all (multi-byte text): not needed.
                let _ = crate::files::remove_file(path);
            }
            continue;
        }
        shown.push(format!(
            "the first {} and last {} characters of {name}'s {} bytes",
            count(HEAD_CHARS as u64),
            count(TAIL_CHARS as u64),
            count(c.total)
        ));
        match (&c.saved, &c.unsaved) {
            (Some(path), _) => saved.push((format!("the whole {name}"), path.clone())),
            (None, Some(why)) => unsaved.push(format!("{name} could not be saved ({why})")),
            (None, None) => unsaved.push(format!("{name}'s middle was not saved")),
        }
    }
    if shown.is_empty() {
        return Collected {
            output,
            cut: None,
            saved: Vec::new(),
        };
    }
    let mut cut = Cut::showing(shown.join(" and "));
    for (what, path) in &saved {
        cut = cut.saved(what.clone(), path);
    }
    cut = if unsaved.is_empty() {
        cut.read_on("read it with read_file (start/end) or search_files")
    } else {
        cut.read_on(format!(
            "{}: rerun with the output redirected to a file to see the middle",
            unsaved.join(", ")
        ))
    };
    Collected {
        output,
        cut: Some(cut),
        saved: saved.into_iter().map(|(_, path)| path).collect(),
    }
}

/// The streams as the result shows them.
struct Collected {
    output: String,
    cut: Option<Cut>,
    /// The scratch files the cut streams were saved to.
    saved: Vec<PathBuf>,
}

/// What a command gave back: how it ended, the output kept, and what was cut.
pub struct Ran {
    /// The exit code, when the shell exited by itself.
    pub exit_code: Option<i32>,
    /// `exit code N`, `killed by a signal`, ….
    pub status: String,
    /// The note about children left running and killed (with its line end), or nothing.
    pub note: String,
    /// Stdout, then stderr under a `[stderr]` line.
    pub output: String,
    /// The cut, when a stream was larger than the result shows.
    pub cut: Option<Cut>,
    /// The scratch files holding the streams that were cut, stdout's first.
    pub saved: Vec<PathBuf>,
}

impl Ran {
    /// The result as the model reads it: the cut line first, then the exit line, the sandbox's
    /// refusal (`refused`) when it explains a failure, the note, the output.
    pub fn text(&self, refused: Option<&str>) -> String {
        let mut text = String::new();
        if let Some(cut) = &self.cut {
            text.push_str(&cut.line());
            text.push('\n');
        }
        text.push_str(&self.status);
        text.push('\n');
        if let Some(refused) = refused {
            text.push_str(&format!("[{refused}]\n"));
        }
        text.push_str(&self.note);
        text.push_str(&self.output);
        text
    }
}

/// Runs `cmd` with `sh -c` in `dir`, unconfined, nothing saved; returns the exit line and
/// capped output.
pub async fn run_shell(
    cmd: &str,
    dir: &std::path::Path,
    timeout: Duration,
) -> Result<String, ToolError> {
    let ran = run_confined(cmd, dir, timeout, crate::process::Door::new("sh"), None).await?;
    Ok(ran.text(None))
}

/// `run_shell` through `door` (the session's sandbox, or none), saving a stream larger than the
/// result shows to `scratch`.
async fn run_confined(
    cmd: &str,
    dir: &std::path::Path,
    timeout: Duration,
    mut door: crate::process::Door,
    scratch: Option<&Scratch>,
) -> Result<Ran, ToolError> {
    door.command()
        .arg("-c")
        .arg(cmd)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = door
        .into_tokio()
        .spawn()
        .map_err(|e| ToolError::Failed(format!("cannot start the command: {e}")))?;
    let mut guard = GroupGuard::new(child.id());
    let out = Arc::new(Mutex::new(Capture::default()));
    let err = Arc::new(Mutex::new(Capture::default()));
    let mut readers = tokio::task::JoinSet::new();
    if let Some(stdout) = child.stdout.take() {
        let save = scratch.map(|s| (s.clone(), "command_stdout"));
        readers.spawn(drain(stdout, out.clone(), save));
    }
    if let Some(stderr) = child.stderr.take() {
        let save = scratch.map(|s| (s.clone(), "command_stderr"));
        readers.spawn(drain(stderr, err.clone(), save));
    }
    // The readers are aborted when `readers` drops, on every path out of here.
    let status = match tokio::time::timeout(timeout, child.wait()).await {
        Ok(status) => status,
        Err(_) => {
            drop(guard);
            pipes_closed(&mut readers, KILL_GRACE).await;
            let after = crate::provider::wait_text(timeout.as_millis() as u64);
            let Collected { output, cut, .. } = collect(&out, &err);
            let mut message = match cut {
                Some(cut) => format!("{}\n", cut.line()),
                None => String::new(),
            };
            message.push_str(&format!(
                "timed out after {after}: the command and its children were killed"
            ));
            if !output.trim().is_empty() {
                message.push_str("\noutput so far:\n");
                message.push_str(&output);
            }
            return Err(ToolError::Failed(message));
        }
    };
    // The shell is gone; background children may still hold the pipes or run detached.
    let closed = pipes_closed(&mut readers, EXIT_GRACE).await;
    let left_running = guard.pgid().is_some_and(group_alive);
    let mut note = String::new();
    if !closed || left_running {
        drop(guard);
        pipes_closed(&mut readers, KILL_GRACE).await;
        note = "[the shell exited but left child processes running; they were killed. \
                Run a server or a watcher outside chatcli]\n"
            .into();
    } else {
        // Finished with nothing left: nothing to kill (and the pid may be reused soon).
        guard.disarm();
    }
    let (exit_code, status) = exit_line(status);
    let Collected { output, cut, saved } = collect(&out, &err);
    Ok(Ran {
        exit_code,
        status,
        note,
        output,
        cut,
        saved,
    })
}

/// The exit code and the line that says how the shell ended.
fn exit_line(status: std::io::Result<std::process::ExitStatus>) -> (Option<i32>, String) {
    match status {
        Ok(s) => (
            s.code(),
            s.code()
                .map(|c| format!("exit code {c}"))
                .unwrap_or_else(|| "killed by a signal".into()),
        ),
        Err(e) => (None, format!("unknown exit status ({e})")),
    }
}

/// Whether both pipes closed within `within`.
async fn pipes_closed(readers: &mut tokio::task::JoinSet<()>, within: Duration) -> bool {
    let all = async { while readers.join_next().await.is_some() {} };
    tokio::time::timeout(within, all).await.is_ok()
}

/// Stdout, then stderr under a `[stderr]` line when it has anything.
fn combine(out: &str, err: &str) -> String {
    let mut text = out.to_string();
    if !err.trim().is_empty() {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str("[stderr]\n");
        text.push_str(err);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn reports_exit_code_and_both_streams() {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = run_shell(
            "echo hi; echo oops >&2; exit 3",
            dir.path(),
            Duration::from_secs(10),
        )
        .await
        .expect("ran");
        assert_eq!(out, "exit code 3\nhi\n[stderr]\noops\n");
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_timeout_kills_the_command_and_its_children() {
        let dir = tempfile::tempdir().expect("tempdir");
        let marker = dir.path().join("still-alive");
        // The child sleeps and would then write the marker; the kill must stop it first.
        let cmd = format!("(sleep 2; touch {}) & sleep 30", marker.display());
        let started = std::time::Instant::now();
        let err = run_shell(&cmd, dir.path(), Duration::from_millis(300))
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "timed out after 300 ms: the command and its children were killed"
        );
        let err = run_shell(
            "echo partial; sleep 30",
            dir.path(),
            Duration::from_millis(500),
        )
        .await
        .unwrap_err();
        assert!(
            err.to_string().ends_with("output so far:\npartial\n"),
            "{err}"
        );
        assert!(started.elapsed() < Duration::from_secs(5));
        tokio::time::sleep(Duration::from_millis(2500)).await;
        assert!(
            !marker.exists(),
            "the background child was killed with the group"
        );
    }

    #[tokio::test]
    async fn long_output_keeps_head_and_tail() {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = run_shell("seq 1 20000", dir.path(), Duration::from_secs(10))
            .await
            .expect("ran");
        let (first, rest) = out.split_once('\n').expect("lines");
        assert_eq!(
            first,
            "[cut: shown the first 12,000 and last 4,000 characters of stdout's 108,894 bytes; \
             stdout's middle was not saved: rerun with the output redirected to a file to see the middle]"
        );
        assert!(rest.starts_with("exit code 0\n1\n2\n"), "{rest}");
        assert!(out.contains("omitted ...]"));
        assert!(out.trim_end().ends_with("20000"));
    }

    #[tokio::test]
    async fn a_stderr_flood_with_stdout_open_neither_blocks_nor_loses_output() {
        let dir = tempfile::tempdir().expect("tempdir");
        // 1 MB to stderr while stdout stays open, then a line on stdout: reading stdout to the
        // end first would deadlock on the full stderr pipe until the timeout.
        let cmd = "head -c 1000000 /dev/zero | tr '\\0' e >&2; echo stdout-done; echo err-end >&2";
        let out = run_shell(cmd, dir.path(), Duration::from_secs(60))
            .await
            .expect("finished, not timed out");
        let (first, rest) = out.split_once('\n').expect("lines");
        assert!(
            first.starts_with(
                "[cut: shown the first 12,000 and last 4,000 characters of stderr's 1,000,008 bytes"
            ),
            "{first}"
        );
        assert!(
            rest.starts_with("exit code 0\nstdout-done\n[stderr]\neee"),
            "{out}"
        );
        assert!(
            out.contains("bytes omitted ...]"),
            "the stderr middle is capped"
        );
        assert!(
            out.trim_end().ends_with("eeeerr-end"),
            "the stderr tail is kept"
        );
        assert!(out.len() < 100_000, "capped: {} bytes", out.len());
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_background_child_holding_the_pipe_does_not_hold_the_call() {
        let dir = tempfile::tempdir().expect("tempdir");
        let started = std::time::Instant::now();
        let out = run_shell(
            "sleep 1000 & echo started",
            dir.path(),
            Duration::from_secs(60),
        )
        .await
        .expect("returns when the shell exits, not at the timeout");
        assert!(started.elapsed() < Duration::from_secs(30));
        assert!(
            out.starts_with(
                "exit code 0\n[the shell exited but left child processes running; they were killed."
            ),
            "{out}"
        );
        assert!(out.ends_with("started\n"), "{out}");
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_detached_child_is_killed_when_the_call_ends() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pidfile = dir.path().join("pid");
        let cmd = format!(
            "sleep 1000 >/dev/null 2>&1 & echo $! > {}",
            pidfile.display()
        );
        let out = run_shell(&cmd, dir.path(), Duration::from_secs(60))
            .await
            .expect("ran");
        assert!(
            out.contains("left child processes running; they were killed"),
            "{out}"
        );
        let pid: i32 = std::fs::read_to_string(&pidfile)
            .expect("pid file")
            .trim()
            .parse()
            .expect("a pid");
        assert!(!process_alive(pid), "the detached sleep {pid} was killed");
    }

    /// Whether `pid` is a live process (a zombie waiting for its parent counts as dead).
    #[cfg(unix)]
    fn process_alive(pid: i32) -> bool {
        // The kill is asynchronous: give the kernel a moment, generously.
        for _ in 0..100 {
            match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
                Err(_) => return false,
                Ok(stat) if stat.contains(") Z") => return false,
                Ok(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
        true
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_running_group_is_registered_until_its_call_ends() {
        // `kill_all_groups` itself is exercised against a real `chatcli exec` process (signals
        // suite): calling it here would kill the commands of tests running alongside.
        let dir = tempfile::tempdir().expect("tempdir");
        let pidfile = dir.path().join("pid");
        let cmd = format!("echo $$ > {}; exec sleep 1000", pidfile.display());
        let dir_path = dir.path().to_path_buf();
        let call =
            tokio::spawn(async move { run_shell(&cmd, &dir_path, Duration::from_secs(600)).await });
        let mut pid = None;
        for _ in 0..400 {
            if let Some(p) = std::fs::read_to_string(&pidfile)
                .ok()
                .and_then(|s| s.trim().parse::<u32>().ok())
            {
                pid = Some(p);
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        let pid = pid.expect("the command started");
        let registered = crate::process::is_registered;
        assert!(registered(pid));
        call.abort();
        let _ = call.await;
        assert!(
            !registered(pid),
            "dropping the call kills and forgets its group"
        );
        assert!(!process_alive(pid as i32));
    }
}
