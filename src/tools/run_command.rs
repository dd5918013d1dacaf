//! `run_command`: a shell command in the workspace. Asks first.
//!
//! The command runs in its own process group, so a timeout or an interrupt kills it with every
//! child it started (a `cargo test` and its test binaries), not just the shell. Output is stdout
//! then stderr, capped: the head and the tail are kept with a marker between them, cut on
//! character boundaries.

use std::process::Stdio;
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::json;
use tokio::io::AsyncReadExt;
use tokio::process::Command;

use super::workspace::confine;
use super::{
    Tool, ToolContext, ToolError, ToolOutput, cap_head_tail, optional_str, optional_usize,
    required_str,
};
use crate::conversation::ToolSpec;

/// Default and largest timeout, in seconds.
pub const DEFAULT_TIMEOUT_SECS: u64 = 120;
const MAX_TIMEOUT_SECS: u64 = 1800;
/// Characters of output kept from the start and from the end.
const HEAD_CHARS: usize = 12_000;
const TAIL_CHARS: usize = 4_000;
/// Bytes read from each stream at most (the rest is drained and dropped).
const READ_CAP: usize = 4 * 1024 * 1024;

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

    fn run<'a>(
        &'a self,
        args: &'a serde_json::Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        async move {
            let cmd = required_str(args, "cmd")?;
            let dir = confine(ctx, optional_str(args, "dir").unwrap_or("."))?;
            let timeout = optional_usize(args, "timeout")?
                .map(|t| t as u64)
                .unwrap_or(DEFAULT_TIMEOUT_SECS)
                .clamp(1, MAX_TIMEOUT_SECS);
            let out = run_shell(cmd, &dir, Duration::from_secs(timeout)).await?;
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

/// Kills the whole process group when dropped (timeout, interrupt, or the session ending).
struct GroupGuard(Option<u32>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pid) = self.0.take() {
            kill_group(pid);
        }
    }
}

fn kill_group(pid: u32) {
    #[cfg(unix)]
    // SAFETY: killpg only sends a signal to the group this command started; no memory is touched.
    unsafe {
        libc::killpg(pid as libc::pid_t, libc::SIGKILL);
    }
    #[cfg(not(unix))]
    let _ = pid;
}

async fn read_capped(mut stream: impl tokio::io::AsyncRead + Unpin) -> Vec<u8> {
    let mut kept = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return kept,
            Ok(n) => {
                let room = READ_CAP.saturating_sub(kept.len());
                kept.extend_from_slice(&chunk[..n.min(room)]);
            }
        }
    }
}

/// Runs `cmd` with `sh -c` in `dir`; returns the exit line and capped output.
pub async fn run_shell(
    cmd: &str,
    dir: &std::path::Path,
    timeout: Duration,
) -> Result<String, ToolError> {
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(cmd)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    command.process_group(0);
    let mut child = command
        .spawn()
        .map_err(|e| ToolError::Failed(format!("cannot start the command: {e}")))?;
    let mut guard = GroupGuard(child.id());
    let stdout = child.stdout.take().map(read_capped);
    let stderr = child.stderr.take().map(read_capped);
    let collect = async {
        let out = match stdout {
            Some(f) => f.await,
            None => Vec::new(),
        };
        let err = match stderr {
            Some(f) => f.await,
            None => Vec::new(),
        };
        let status = child.wait().await;
        (out, err, status)
    };
    let (out, err, status) = match tokio::time::timeout(timeout, collect).await {
        Ok(done) => done,
        Err(_) => {
            drop(guard);
            let after = crate::provider::wait_text(timeout.as_millis() as u64);
            return Err(ToolError::Failed(format!(
                "timed out after {after}: the command and its children were killed"
            )));
        }
    };
    // Finished: nothing left to kill (and the pid may be reused soon).
    guard.0 = None;
    let code = match status {
        Ok(s) => s
            .code()
            .map(|c| format!("exit code {c}"))
            .unwrap_or_else(|| "killed by a signal".into()),
        Err(e) => format!("unknown exit status ({e})"),
    };
    let mut text = String::from_utf8_lossy(&out).to_string();
    let err = String::from_utf8_lossy(&err);
    if !err.trim().is_empty() {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str("[stderr]\n");
        text.push_str(&err);
    }
    Ok(format!(
        "{code}\n{}",
        cap_head_tail(&text, HEAD_CHARS, TAIL_CHARS)
    ))
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
        assert!(out.contains("characters omitted"));
        assert!(out.trim_end().ends_with("20000"));
    }
}
