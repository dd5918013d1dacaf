//! `chatcli exec`: one prompt through the same agent task, printed as text or JSON lines.
//!
//! With `--json` every `AgentEvent` is one line of JSON on stdout, `cost` last; without it only
//! the final answer is printed. Errors go to stderr as one line, and the exit code says whether
//! the prompt finished (0) or not (1). A session log that cannot be written is said once on
//! stderr (in both modes); when not one line of it could be written the exit code is 1 too, so a
//! script learns that the session was not saved.

use std::io::Write;
use std::sync::Arc;

use crate::agent::{self, AgentOptions};
use crate::protocol::{AgentEvent, Mode, Op};
use crate::provider::Provider;
use crate::session_log;

/// How the run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecOutcome {
    pub ok: bool,
    pub errors: Vec<String>,
    /// `turn_finished.stop_reason`, when the prompt got that far.
    pub stop_reason: Option<String>,
    /// Storage failures to say on stderr whatever the output mode.
    pub warnings: Vec<String>,
}

impl ExecOutcome {
    /// The process exit code: 0 when the prompt finished, 130 when it was interrupted (as a shell
    /// reports SIGINT), 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match (self.ok, self.stop_reason.as_deref()) {
            (_, Some("interrupted")) => 130,
            (true, _) => 0,
            (false, _) => 1,
        }
    }
}

/// Runs `prompt` to completion, writing to `out`.
pub async fn run(
    provider: Arc<dyn Provider>,
    options: AgentOptions,
    prompt: String,
    mode: Mode,
    json: bool,
    out: &mut (dyn Write + Send),
) -> std::io::Result<ExecOutcome> {
    let mut handle = agent::spawn(provider, options);
    let _ = handle.ops.send(Op::Submit { text: prompt, mode });
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let mut log_lost = false;
    let mut finished = None;
    while let Some(event) = handle.events.recv().await {
        if json {
            let line = serde_json::to_string(&event).map_err(std::io::Error::other)?;
            writeln!(out, "{line}")?;
        }
        match &event {
            AgentEvent::Error { message } => errors.push(message.clone()),
            AgentEvent::Notice { message } if message.starts_with(session_log::LOG_NOT_WRITTEN) => {
                log_lost = true;
                warnings.push(message.clone());
            }
            AgentEvent::Notice { message } if message.starts_with(session_log::LOG_STOPPED) => {
                warnings.push(message.clone());
            }
            AgentEvent::TurnFinished { text, stop_reason } => {
                finished = Some(stop_reason.clone());
                if !json {
                    writeln!(out, "{}", text.trim_end())?;
                }
            }
            AgentEvent::Cost { .. } if finished.is_some() => {
                let _ = handle.ops.send(Op::Shutdown);
                break;
            }
            _ => {}
        }
    }
    out.flush()?;
    let _ = handle.join.await;
    let ok =
        errors.is_empty() && !log_lost && finished.as_deref().is_some_and(|r| r != "interrupted");
    Ok(ExecOutcome {
        ok,
        errors,
        warnings,
        stop_reason: finished,
    })
}
