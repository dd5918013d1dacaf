//! `run_command`: a shell command in the workspace. Asks first.
//!
//! The command starts through the process door (`crate::process`): its own session and process
//! group with no terminal, a scrubbed environment, the session's sandbox. A timeout or an
//! interrupt kills the group with every child it started (a `cargo test` and its test binaries),
//! not just the shell. Both pipes are drained at the same time (a command that floods stderr
//! while stdout stays open must not block), each keeping its head and tail. The call ends when the
//! shell exits, not when the pipes close: a background child (`server &`) would hold them open
//! forever. After a one-second grace for output in flight, whatever is left of the group is killed
//! and the result says so; the door's registry kills what is left when the session ends. A write
//! the sandbox refused is named after the exit line so the model does not retry blindly.

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::process::{GroupGuard, group_alive};
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::json;
use tokio::io::AsyncReadExt;

use super::workspace::confine;
use super::{
    Tool, ToolContext, ToolError, ToolOutput, cap_head_tail, optional_str, optional_usize,
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
            let out = run_confined(cmd, &dir, timeout, ctx.door("sh")?).await?;
            let out = match ctx
                .sandbox
                .explain_denial(&out, &dir, &ctx.writable_roots())
            {
                // After the exit line, so the model reads it before the output.
                Some(refused) => match out.split_once('\n') {
                    Some((code, rest)) => format!("{code}\n[{refused}]\n{rest}"),
                    None => format!("{out}\n[{refused}]\n"),
                },
                None => out,
            };
            // The result's first line is `exit code N` (see `run_shell`).
            let exit_code = out
                .lines()
                .next()
                .and_then(|l| l.strip_prefix("exit code "))
                .and_then(|n| n.trim().parse().ok());
            Ok(ToolOutput {
                exit_code,
                ..ToolOutput::text(out)
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

/// One stream's output: its first bytes, its last bytes, and how many there were in all.
#[derive(Default)]
struct Capture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
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

    /// The text kept: head and tail in characters, with a marker for what was dropped between.
    fn text(&self) -> String {
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        let dropped = self.total - self.head.len() as u64 - tail.len() as u64;
        if dropped == 0 {
            let mut all = self.head.clone();
            all.extend_from_slice(&tail);
            return cap_head_tail(&String::from_utf8_lossy(&all), HEAD_CHARS, TAIL_CHARS);
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
        format!("{head}\n[... {omitted} bytes omitted ...]\n{tail}")
    }
}

/// Drains `stream` into `capture` until it closes.
async fn drain(mut stream: impl tokio::io::AsyncRead + Unpin, capture: Arc<Mutex<Capture>>) {
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if let Ok(mut c) = capture.lock() {
                    c.push(chunk.get(..n).unwrap_or_default());
                }
            }
        }
    }
}

fn snapshot(capture: &Arc<Mutex<Capture>>) -> String {
    capture.lock().map(|c| c.text()).unwrap_or_default()
}

/// Runs `cmd` with `sh -c` in `dir`, unconfined; returns the exit line and capped output.
pub async fn run_shell(
    cmd: &str,
    dir: &std::path::Path,
    timeout: Duration,
) -> Result<String, ToolError> {
    run_confined(cmd, dir, timeout, crate::process::Door::new("sh")).await
}

/// `run_shell` through `door` (the session's sandbox, or none).
async fn run_confined(
    cmd: &str,
    dir: &std::path::Path,
    timeout: Duration,
    mut door: crate::process::Door,
) -> Result<String, ToolError> {
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
        readers.spawn(drain(stdout, out.clone()));
    }
    if let Some(stderr) = child.stderr.take() {
        readers.spawn(drain(stderr, err.clone()));
    }
    // The readers are aborted when `readers` drops, on every path out of here.
    let status = match tokio::time::timeout(timeout, child.wait()).await {
        Ok(status) => status,
        Err(_) => {
            drop(guard);
            pipes_closed(&mut readers, KILL_GRACE).await;
            let after = crate::provider::wait_text(timeout.as_millis() as u64);
            let output = combine(&snapshot(&out), &snapshot(&err));
            let mut message =
                format!("timed out after {after}: the command and its children were killed");
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
    let code = match status {
        Ok(s) => s
            .code()
            .map(|c| format!("exit code {c}"))
            .unwrap_or_else(|| "killed by a signal".into()),
        Err(e) => format!("unknown exit status ({e})"),
    };
    Ok(format!(
        "{code}\n{note}{}",
        combine(&snapshot(&out), &snapshot(&err))
    ))
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
        assert!(out.starts_with("exit code 0\n1\n2\n"));
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
        assert!(
            out.starts_with("exit code 0\nstdout-done\n[stderr]\neee"),
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
