//! `chatcli exec`: one prompt through the same agent task, printed as text or JSON lines.
//!
//! With `--json` every `AgentEvent` is one line of JSON on stdout, `cost` last; without it only
//! the final answer is printed. Errors go to stderr as one line, and the exit code says whether
//! the prompt finished (0), was interrupted (130) or not (1). A session log that cannot be
//! written is said once on stderr (in both modes); when not one line of it could be written the
//! exit code is 1 too, so a script learns that the session was not saved.
//!
//! SIGTERM, SIGINT and SIGHUP are handled, not left to their default: a `run_command` runs in its
//! own process group, so dying by the signal would leave it (and whatever it started) running.
//! On a signal every group the session started is killed, the turn is interrupted, the events
//! that follow (the killed command's result) are still written and logged for a short grace,
//! and the exit code is the shell's convention for the signal: 130, 143, 129.

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use crate::agent::{self, AgentOptions};
use crate::protocol::{AgentEvent, Event, Mode, Op, SubmissionId};
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
    /// The signal that stopped the run, if one did.
    pub signal: Option<StopSignal>,
}

impl ExecOutcome {
    /// The process exit code: 128 + the signal's number when one stopped the run, 130 when the
    /// turn was interrupted (as a shell reports SIGINT), 0 when it finished, 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match (self.signal, self.stop_reason.as_deref()) {
            (Some(signal), _) => signal.exit_code(),
            (None, Some("interrupted")) => 130,
            (None, _) if self.ok => 0,
            (None, _) => 1,
        }
    }
}

/// A signal that ends `exec`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopSignal {
    Hangup,
    Interrupt,
    Terminate,
}

impl StopSignal {
    /// 128 + the signal number, as a shell reports it.
    pub fn exit_code(self) -> u8 {
        match self {
            StopSignal::Hangup => 129,
            StopSignal::Interrupt => 130,
            StopSignal::Terminate => 143,
        }
    }

    /// The signal's name.
    pub fn name(self) -> &'static str {
        match self {
            StopSignal::Hangup => "SIGHUP",
            StopSignal::Interrupt => "SIGINT",
            StopSignal::Terminate => "SIGTERM",
        }
    }
}

/// How long the events after a signal (the killed command's result) may take to arrive.
const SIGNAL_GRACE: Duration = Duration::from_secs(3);

/// SIGTERM, SIGINT and SIGHUP as one stream.
struct StopSignals {
    #[cfg(unix)]
    streams: Vec<(StopSignal, tokio::signal::unix::Signal)>,
}

impl StopSignals {
    fn install() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let streams = [
                (StopSignal::Terminate, SignalKind::terminate()),
                (StopSignal::Interrupt, SignalKind::interrupt()),
                (StopSignal::Hangup, SignalKind::hangup()),
            ]
            .into_iter()
            .filter_map(|(which, kind)| signal(kind).ok().map(|s| (which, s)))
            .collect();
            StopSignals { streams }
        }
        #[cfg(not(unix))]
        StopSignals {}
    }

    async fn recv(&mut self) -> StopSignal {
        #[cfg(unix)]
        {
            if self.streams.is_empty() {
                return std::future::pending().await;
            }
            let waits = self.streams.iter_mut().map(|(which, stream)| {
                let which = *which;
                Box::pin(async move {
                    stream.recv().await;
                    which
                })
            });
            futures_util::future::select_all(waits).await.0
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            StopSignal::Interrupt
        }
    }
}

/// What the run has gathered from its events so far.
#[derive(Default)]
struct Collected {
    errors: Vec<String>,
    warnings: Vec<String>,
    /// Not one line of the session log could be written.
    log_lost: bool,
    finished: Option<String>,
    /// The id of the run's prompt: its `turn_finished` (not a queued command's) ends the run.
    prompt: SubmissionId,
}

impl Collected {
    fn outcome(self, signal: Option<StopSignal>) -> ExecOutcome {
        let ok = signal.is_none()
            && self.errors.is_empty()
            && !self.log_lost
            && self.finished.as_deref().is_some_and(|r| r != "interrupted");
        ExecOutcome {
            ok,
            errors: self.errors,
            stop_reason: self.finished,
            warnings: self.warnings,
            signal,
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
    let mut signals = StopSignals::install();
    let mut handle = agent::spawn(provider, options);
    let mut seen = Collected::default();
    if let Ok(id) = handle.ops.send(Op::Submit { text: prompt, mode }) {
        seen.prompt = id;
    }
    loop {
        let event = tokio::select! {
            event = handle.events.recv() => event,
            signal = signals.recv() => return stop(signal, &mut handle, json, out, seen).await,
        };
        let Some(event) = event else { break };
        if write_event(&event, json, out, &mut seen)? {
            let _ = handle.ops.send(Op::Shutdown);
            break;
        }
    }
    out.flush()?;
    let _ = handle.join.await;
    Ok(seen.outcome(None))
}

/// Writes one event; true when it is the run's last (the cost after the finished turn).
fn write_event(
    stamped: &Event,
    json: bool,
    out: &mut (dyn Write + Send),
    seen: &mut Collected,
) -> std::io::Result<bool> {
    let event = &stamped.msg;
    let ours = stamped.id == seen.prompt;
    if json {
        let line = serde_json::to_string(event).map_err(std::io::Error::other)?;
        writeln!(out, "{line}")?;
    }
    match event {
        AgentEvent::Error { message } => seen.errors.push(message.clone()),
        AgentEvent::Notice { message } if message.starts_with(session_log::LOG_NOT_WRITTEN) => {
            seen.log_lost = true;
            seen.warnings.push(message.clone());
        }
        AgentEvent::Notice { message }
            if message.starts_with(session_log::LOG_STOPPED)
                || message.starts_with(crate::sandbox::NOTICE_PREFIX) =>
        {
            seen.warnings.push(message.clone());
        }
        AgentEvent::TurnFinished { text, stop_reason } if ours => {
            seen.finished = Some(stop_reason.clone());
            if !json {
                writeln!(out, "{}", text.trim_end())?;
            }
        }
        AgentEvent::Cost { .. } if seen.finished.is_some() => return Ok(true),
        _ => {}
    }
    Ok(false)
}

/// A signal arrived: kill every process group, interrupt the turn, write and log what follows
/// for a short grace, and end the agent.
async fn stop(
    signal: StopSignal,
    handle: &mut agent::AgentHandle,
    json: bool,
    out: &mut (dyn Write + Send),
    mut seen: Collected,
) -> std::io::Result<ExecOutcome> {
    let killed = crate::process::kill_all_groups();
    tracing::warn!(
        signal = signal.name(),
        killed_groups = killed,
        "exec stopped by a signal"
    );
    let _ = handle.ops.send(Op::Interrupt);
    let deadline = tokio::time::Instant::now() + SIGNAL_GRACE;
    while let Ok(Some(event)) = tokio::time::timeout_at(deadline, handle.events.recv()).await {
        tracing::info!(event = ?event, "event after the signal");
        // A closed stdout (the reader went away with the signal) must not stop the cleanup.
        match write_event(&event, json, out, &mut seen) {
            Ok(true) | Err(_) => break,
            Ok(false) => {}
        }
    }
    let _ = out.flush();
    let _ = handle.ops.send(Op::Shutdown);
    let _ = tokio::time::timeout(SIGNAL_GRACE, &mut handle.join).await;
    seen.errors.push(format!(
        "stopped by {}: {killed} process group(s) killed",
        signal.name()
    ));
    Ok(seen.outcome(Some(signal)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sandbox_notice_becomes_a_warning_on_stderr() {
        let mut seen = Collected::default();
        let mut out = Vec::new();
        let notice = AgentEvent::Notice {
            message: "sandbox: simulated: commands run with approvals only".into(),
        };
        write_event(&Event { id: 0, msg: notice }, false, &mut out, &mut seen).expect("written");
        let other = AgentEvent::Notice {
            message: "compacting".into(),
        };
        write_event(&Event { id: 0, msg: other }, false, &mut out, &mut seen).expect("written");
        assert_eq!(
            seen.warnings,
            ["sandbox: simulated: commands run with approvals only"]
        );
        assert!(out.is_empty(), "stdout stays the answer's");
    }

    #[test]
    fn only_the_runs_own_prompt_finishing_ends_it() {
        let mut seen = Collected {
            prompt: 1,
            ..Collected::default()
        };
        let mut out = Vec::new();
        let finished = |id| Event {
            id,
            msg: AgentEvent::TurnFinished {
                text: format!("answer {id}"),
                stop_reason: "end_turn".into(),
            },
        };
        let cost = |id| Event {
            id,
            msg: AgentEvent::Cost {
                input_tokens: 0,
                output_tokens: 0,
                cache_read_tokens: 0,
                cache_creation_tokens: 0,
                cost_usd: None,
                pricing: None,
                price_estimated: false,
            },
        };
        write_event(&finished(2), false, &mut out, &mut seen).expect("written");
        assert!(!write_event(&cost(2), false, &mut out, &mut seen).expect("written"));
        write_event(&finished(1), false, &mut out, &mut seen).expect("written");
        assert!(write_event(&cost(1), false, &mut out, &mut seen).expect("written"));
        assert_eq!(String::from_utf8_lossy(&out), "answer 1\n");
    }
}
