//! Running one hook through the process door and reading what it said.
//!
//! The hook is `sh -c COMMAND` in the workspace, in its own session and process group (killed
//! with its children at the time limit), with the scrubbed environment plus the variables its
//! entry names and `CLAUDE_PROJECT_DIR` (scripts written for Claude Code read it; the hook's
//! working folder is the same workspace). Its stdin gets the event's JSON and is closed; stdout and stderr are read
//! at once, each kept up to `MAX_OUTPUT` bytes, so a chatty hook cannot fill a pipe and hang.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

use super::{Hook, HookError, HookEvent, Outcome};
use crate::process::GroupGuard;
use crate::rules::Verdict;

/// What is kept of each of a hook's streams.
const MAX_OUTPUT: usize = 64 * 1024;

/// One hook's run, as the tool panel, the session log and `/hooks` see it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HookRun {
    pub event: String,
    pub command: String,
    /// `None` when it was killed, timed out or could not start.
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    pub blocked: bool,
    /// What the run said: the block's reason, the failure, or empty.
    pub note: String,
    stdout: String,
    stderr: String,
}

impl HookRun {
    /// The hook failed (not exit 0 or 2), timed out or did not start.
    pub fn failed(&self) -> bool {
        !matches!(self.exit_code, Some(0) | Some(2))
    }

    /// Adds what this run said to the event's outcome.
    pub(super) fn fold_into(&self, event: HookEvent, outcome: &mut Outcome) {
        if self.exit_code == Some(2) {
            outcome.blocked = Some(self.note.clone());
            return;
        }
        if self.exit_code != Some(0) {
            return;
        }
        let text = self.stdout.trim();
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(json)) => fold_json(&json, outcome),
            // Plain stdout is context where Claude Code takes it so.
            _ if matches!(event, HookEvent::UserPromptSubmit | HookEvent::SessionStart)
                && !text.is_empty() =>
            {
                outcome.context.push(text.to_string());
            }
            _ => {}
        }
    }
}

fn fold_json(json: &serde_json::Map<String, Value>, outcome: &mut Outcome) {
    let specific = json.get("hookSpecificOutput");
    let field = |key: &str| {
        specific
            .and_then(|s| s.get(key))
            .or_else(|| json.get(key))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    if let Some(context) = field("additionalContext").filter(|c| !c.trim().is_empty()) {
        outcome.context.push(context);
    }
    let reason = field("permissionDecisionReason")
        .or_else(|| field("reason"))
        .or_else(|| field("stopReason"))
        .unwrap_or_else(|| "blocked by a hook".into());
    let decision = field("permissionDecision").or_else(|| field("decision"));
    let stop = json.get("continue").and_then(Value::as_bool) == Some(false);
    match decision.as_deref() {
        Some("deny" | "block") => outcome.blocked = Some(reason),
        _ if stop => outcome.blocked = Some(reason),
        Some("allow" | "approve") => outcome.decision = Some(Verdict::Allow),
        Some("ask") => outcome.decision = Some(Verdict::Ask),
        _ => {}
    }
}

/// Runs `hook` with `stdin` in `cwd`.
pub(super) async fn run(hook: &Hook, stdin: &str, cwd: &Path) -> HookRun {
    let started = Instant::now();
    let mut run = HookRun {
        event: hook.event.as_str().into(),
        command: hook.command.clone(),
        ..HookRun::default()
    };
    match spawn_and_wait(hook, stdin, cwd).await {
        Ok((code, stdout, stderr)) => {
            run.exit_code = code;
            run.note = match code {
                Some(0) => String::new(),
                Some(2) => {
                    run.blocked = true;
                    match stderr.trim() {
                        "" => "blocked by a hook (it gave no reason on stderr)".into(),
                        reason => reason.to_string(),
                    }
                }
                Some(other) => format!(
                    "hook failed with exit code {other}: {}",
                    first_line(&stderr)
                ),
                None => "hook killed by a signal".into(),
            };
            run.stdout = stdout;
            run.stderr = stderr;
        }
        Err(why) => run.note = why.to_string(),
    }
    run.duration_ms = started.elapsed().as_millis() as u64;
    run
}

fn first_line(text: &str) -> &str {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
}

type Finished = (Option<i32>, String, String);

async fn spawn_and_wait(hook: &Hook, stdin: &str, cwd: &Path) -> Result<Finished, HookError> {
    let mut door = crate::process::Door::new("sh");
    let command = door.command();
    command
        .arg("-c")
        .arg(&hook.command)
        .current_dir(cwd)
        .env("CLAUDE_PROJECT_DIR", cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for name in &hook.env {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
    let mut child = door.into_tokio().spawn().map_err(|e| HookError::Process {
        what: "start",
        why: e.to_string(),
    })?;
    let guard = GroupGuard::new(child.id());
    let input = child.stdin.take();
    let payload = stdin.as_bytes().to_vec();
    // A hook that never reads its stdin must not stall us: write on the side, ignore EPIPE.
    let writer = tokio::spawn(async move {
        if let Some(mut input) = input {
            let _ = input.write_all(&payload).await;
            let _ = input.shutdown().await;
        }
    });
    let out = tokio::spawn(read_capped(child.stdout.take()));
    let err = tokio::spawn(read_capped(child.stderr.take()));
    let status = match tokio::time::timeout(hook.timeout, child.wait()).await {
        Ok(status) => status.map_err(|e| HookError::Process {
            what: "be waited for",
            why: e.to_string(),
        })?,
        Err(_) => {
            drop(guard);
            writer.abort();
            return Err(HookError::TimedOut(crate::provider::wait_text(
                hook.timeout.as_millis() as u64,
            )));
        }
    };
    // Children the hook left behind are killed with its group.
    drop(guard);
    writer.abort();
    let grace = Duration::from_secs(1);
    let stdout = tokio::time::timeout(grace, out)
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default();
    let stderr = tokio::time::timeout(grace, err)
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default();
    Ok((status.code(), stdout, stderr))
}

async fn read_capped(stream: Option<impl AsyncRead + Unpin>) -> String {
    let Some(mut stream) = stream else {
        return String::new();
    };
    let mut kept = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = MAX_OUTPUT.saturating_sub(kept.len());
                kept.extend_from_slice(chunk.get(..n.min(room)).unwrap_or_default());
            }
        }
    }
    String::from_utf8_lossy(&kept).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook(event: HookEvent, command: &str) -> Hook {
        super::super::parse(
            &serde_json::json!({ event.as_str(): [{"hooks": [{"command": command, "timeout": 5}]}] }),
            "test",
        )
        .expect("hook")
        .remove(0)
    }

    #[tokio::test]
    async fn exit_two_blocks_with_stderr_and_stdin_holds_the_event() {
        let dir = tempfile::tempdir().expect("tempdir");
        let h = hook(
            HookEvent::PreToolUse,
            "cat > seen.json; echo 'no rm here' >&2; exit 2",
        );
        let run = run(&h, r#"{"tool_name":"run_command"}"#, dir.path()).await;
        assert!(run.blocked);
        assert_eq!(run.note, "no rm here");
        let seen = std::fs::read_to_string(dir.path().join("seen.json")).expect("stdin saved");
        assert_eq!(seen, r#"{"tool_name":"run_command"}"#);
    }

    #[tokio::test]
    async fn json_decides_and_adds_context_and_a_slow_hook_is_killed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let h = hook(
            HookEvent::PreToolUse,
            r#"echo '{"hookSpecificOutput":{"permissionDecision":"allow","additionalContext":"ok by policy"}}'"#,
        );
        let mut outcome = Outcome::default();
        run(&h, "{}", dir.path())
            .await
            .fold_into(HookEvent::PreToolUse, &mut outcome);
        assert_eq!(outcome.decision, Some(Verdict::Allow));
        assert_eq!(outcome.context, ["ok by policy"]);
        let mut slow = hook(HookEvent::Stop, "sleep 30");
        slow.timeout = Duration::from_millis(200);
        let run = run(&slow, "{}", dir.path()).await;
        assert!(
            run.failed() && run.note.starts_with("hook timed out"),
            "{run:?}"
        );
    }
}
