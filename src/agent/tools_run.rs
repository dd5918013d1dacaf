//! Executing one batch of tool calls: in parallel when every call only reads, results in call order.
//!
//! Every call in the batch gets exactly one result, whatever happens: an unknown tool, arguments
//! that are not a JSON object, a denied approval, a failure or an interrupt all become an error
//! result the model can read. Calls that write or execute go one at a time, each approved first.
//! Known secrets are masked in each result before it enters the conversation (`run_command env`
//! would otherwise send the user's keys to the provider) and in every event about a call.

use std::collections::HashSet;
use std::time::Instant;

use futures_util::future::join_all;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::gate::{Gate, Pass};
use super::sink::EventSink;
use crate::conversation::ContentBlock;
use crate::protocol::{AgentEvent, ApprovalDecision};
use crate::provider::UsageRecord;
use crate::tools::{ToolContext, ToolError, ToolOutput, ToolRegistry};

/// The tool-runtime part of the agent: the context tools run in, the approvals (shared with
/// the specialists a session dispatches), the specialists `dispatch` may run, and the MCP tools
/// as offered. A new tool family registers here and in `ToolRegistry`, not in the turn loop.
pub(super) struct ToolRuntime {
    pub(super) ctx: ToolContext,
    /// Shared with the specialists this session dispatches.
    pub(super) approvals: std::sync::Arc<tokio::sync::Mutex<Approvals>>,
    /// The specialists `dispatch` may run (empty with parallel mode off).
    pub(super) roster: std::sync::Arc<crate::agents::Roster>,
    /// Set when this loop is a dispatched specialist: its spec and its task's index.
    pub(super) specialist: Option<super::dispatch::Specialist>,
    /// The MCP tools as offered, frozen until a server's tool list changes.
    pub(super) mcp_tools: Option<crate::mcp::McpToolSet>,
    /// Project MCP servers the user was asked about.
    pub(super) mcp_asked: Vec<String>,
    /// The permission rules and hooks every call passes (shared with the specialists).
    pub(super) gate: super::gate::Gate,
}

/// One call as the model made it: id, tool name, arguments.
pub type Call = (String, String, serde_json::Value);

/// The result text for a call the user interrupted.
pub const CANCELLED: &str = "cancelled by the user";
/// The result text for a call the user denied.
pub const DENIED: &str = "denied by the user: the call was not run";
/// The result text for a call headless mode denied.
pub const DENIED_HEADLESS: &str =
    "not run: chatcli exec denies calls that write or execute unless it is given --yes";

/// How calls that write or execute are approved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalPolicy {
    /// Ask the user (the TUI shows a modal).
    Ask,
    /// Approve every call (`exec --yes`).
    AutoApprove,
    /// Deny every call (`exec` without `--yes`).
    Deny,
}

/// The result text for a call refused by `/permissions read-only`.
pub const REFUSED_READ_ONLY: &str = "refused without asking: the session is in read-only permission mode (the user can allow writes and commands with /permissions ask)";

/// The result text for a write to a protected path when nobody can be asked.
pub const REFUSED_PROTECTED: &str = "refused: the path is protected (.git, .chatcli, .mcp.json, .agents, .claude or chatcli's own folder) and a write there always needs the user's approval, which this session cannot ask for";

/// The approval state of a session: its policy, the tools allowed for good, and the answers.
pub struct Approvals {
    pub policy: ApprovalPolicy,
    /// What the user lets tools do without asking (`/permissions`).
    pub permission: crate::protocol::Permission,
    pub always: HashSet<String>,
    pub answers: mpsc::UnboundedReceiver<(String, ApprovalDecision)>,
}

impl Approvals {
    /// Whether the call may run; `Err` holds the result text for a call that may not.
    async fn decide(
        &mut self,
        asking: Asking<'_>,
        cancel: &CancellationToken,
        events: &EventSink,
    ) -> Result<Option<Remember>, &'static str> {
        let Asking {
            call: (id, name, args),
            key,
            preview,
            protected,
            pass,
            gate,
        } = asking;
        use crate::protocol::Permission;
        if self.permission == Permission::ReadOnly && *pass != Pass::Allow {
            return Err(REFUSED_READ_ONLY);
        }
        match self.policy {
            // A protected path is asked for every time: no mode, rule or --yes covers it.
            ApprovalPolicy::AutoApprove | ApprovalPolicy::Deny if protected => {
                return Err(REFUSED_PROTECTED);
            }
            ApprovalPolicy::Ask if protected => {}
            // A rule or hook allowed it: no dialog, in exec without --yes too.
            _ if *pass == Pass::Allow => return Ok(None),
            ApprovalPolicy::AutoApprove => return Ok(None),
            ApprovalPolicy::Deny => return Err(DENIED_HEADLESS),
            // An `ask` rule or hook asks past auto-edit and "allow always".
            ApprovalPolicy::Ask if *pass == Pass::Ask => {}
            // Writes stay confined to the workspace by the tools themselves.
            ApprovalPolicy::Ask
                if self.permission == Permission::AutoEdit
                    && matches!(name.as_str(), "write_file" | "patch_file") =>
            {
                return Ok(None);
            }
            ApprovalPolicy::Ask if self.always.contains(key) => return Ok(None),
            ApprovalPolicy::Ask => {}
        }
        gate.notify(
            format!("chatcli needs your permission to use {name}"),
            events,
        );
        events.emit(AgentEvent::ApprovalRequest {
            id: id.clone(),
            name: name.clone(),
            args: args.clone(),
            preview,
        });
        loop {
            let answer = tokio::select! {
                _ = cancel.cancelled() => return Err(CANCELLED),
                answer = self.answers.recv() => answer,
            };
            match answer {
                Some((answer_id, decision)) if answer_id == *id => {
                    return match decision {
                        ApprovalDecision::AllowOnce => Ok(None),
                        ApprovalDecision::AllowAlways => {
                            self.always.insert(key.to_string());
                            Ok(None)
                        }
                        ApprovalDecision::AllowAlwaysProject => Ok(Some(Remember::Project)),
                        ApprovalDecision::AllowAlwaysUser => Ok(Some(Remember::User)),
                        ApprovalDecision::Deny => Err(DENIED),
                    };
                }
                // An answer to a call that is no longer waiting.
                Some(_) => continue,
                None => return Err(DENIED),
            }
        }
    }
}

/// A call that may need the user's answer, and what is known of it.
struct Asking<'a> {
    call: &'a Call,
    /// What "allow always" remembers for the session.
    key: &'a str,
    preview: Option<String>,
    /// Its file is a protected path: asked for whatever the mode.
    protected: bool,
    pass: &'a Pass,
    gate: &'a Gate,
}

/// Where the user asked "allow always" to be saved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Remember {
    Project,
    User,
}

/// Why a write call must be asked for whatever the mode: its file is a protected path.
fn protected_write(ctx: &ToolContext, (_, name, args): &Call) -> Option<String> {
    if !matches!(name.as_str(), "write_file" | "patch_file") {
        return None;
    }
    let file = args.get("file")?.as_str()?;
    crate::tools::workspace::protected_reason(ctx, file)
}

/// Runs the calls and returns their `ToolResult` blocks in call order, with the usage of any
/// model request a tool made.
///
/// Every call passes the gate first (rules, `PreToolUse` hooks) and after (`PostToolUse`).
/// `approvals` is shared with the session's dispatched specialists: a call that needs an answer
/// holds it while it asks, so with several specialists waiting the user sees one dialog at a time.
pub async fn run_calls(
    tools: &ToolRegistry,
    ctx: &ToolContext,
    calls: &[Call],
    approvals: &tokio::sync::Mutex<Approvals>,
    gate: &Gate,
    cancel: &CancellationToken,
    events: &EventSink,
) -> Vec<(ContentBlock, Option<UsageRecord>)> {
    let mut passes = Vec::with_capacity(calls.len());
    for call in calls {
        passes.push(gate.before(call, events).await);
    }
    let all_read_only = calls.iter().zip(&passes).all(|((_, name, args), pass)| {
        *pass != Pass::Ask && tools.get(name).is_none_or(|t| t.read_only_call(args))
    });
    if all_read_only {
        return join_all(calls.iter().zip(passes).map(|(call, pass)| async move {
            announce(call, events);
            match pass {
                Pass::Refuse(text) => refused(call, text, events),
                _ => run_one(tools, ctx, call, cancel, events, None, gate).await,
            }
        }))
        .await;
    }
    let mut results = Vec::with_capacity(calls.len());
    for (call, pass) in calls.iter().zip(passes) {
        results.push(run_in_turn(tools, ctx, call, pass, approvals, gate, cancel, events).await);
    }
    results
}

/// One call of a batch that writes or runs something: asked for when it must be, then run.
#[allow(clippy::too_many_arguments)] // the batch's shared state, passed through unchanged
async fn run_in_turn(
    tools: &ToolRegistry,
    ctx: &ToolContext,
    call: &Call,
    pass: Pass,
    approvals: &tokio::sync::Mutex<Approvals>,
    gate: &Gate,
    cancel: &CancellationToken,
    events: &EventSink,
) -> (ContentBlock, Option<UsageRecord>) {
    if let Pass::Refuse(text) = pass {
        announce(call, events);
        return refused(call, text, events);
    }
    let tool = tools.get(&call.1);
    let needs_approval = pass == Pass::Ask || tool.is_some_and(|t| !t.read_only_call(&call.2));
    let key = tool
        .and_then(|t| t.approval_key(&call.2))
        .unwrap_or_else(|| call.1.clone());
    // Computed once, before the call runs: the dialog shows it, the result keeps it.
    let preview = tool
        .filter(|_| call.2.is_object())
        .and_then(|t| t.preview(&call.2, ctx));
    let protected = protected_write(ctx, call);
    let preview = match (&protected, preview) {
        (Some(why), Some(preview)) => Some(format!("⚠ {why}\n{preview}")),
        (Some(why), None) => Some(format!("⚠ {why}")),
        (None, preview) => preview,
    };
    let verdict = if needs_approval && !cancel.is_cancelled() {
        // Announced once its turn to ask has come: while another specialist's dialog is
        // open, the call neither shows as running nor counts its time.
        let mut approvals = tokio::select! {
            _ = cancel.cancelled() => None,
            guard = approvals.lock() => Some(guard),
        };
        announce(call, events);
        match approvals.as_mut() {
            Some(approvals) => {
                approvals
                    .decide(
                        Asking {
                            call,
                            key: &key,
                            preview: preview.clone(),
                            protected: protected.is_some(),
                            pass: &pass,
                            gate,
                        },
                        cancel,
                        events,
                    )
                    .await
            }
            None => Err(CANCELLED),
        }
    } else {
        announce(call, events);
        Ok(None)
    };
    match verdict {
        Ok(remember) => {
            if let Some(remember) = remember {
                let scope = match remember {
                    Remember::Project => crate::user_settings::Scope::Project,
                    Remember::User => crate::user_settings::Scope::User,
                };
                let message = gate.remember(call, Some(scope));
                events.emit(AgentEvent::Notice { message });
            }
            run_one(tools, ctx, call, cancel, events, preview, gate).await
        }
        Err(text) => refused(call, text.to_string(), events),
    }
}

/// The result of a call that did not run.
fn refused(call: &Call, text: String, events: &EventSink) -> (ContentBlock, Option<UsageRecord>) {
    finish(
        call,
        Err(ToolError::Failed(text)),
        Instant::now(),
        events,
        None,
    )
}

fn announce((id, name, args): &Call, events: &EventSink) {
    events.emit(AgentEvent::ToolCall {
        id: id.clone(),
        name: name.clone(),
        args: args.clone(),
    });
}

async fn run_one(
    tools: &ToolRegistry,
    ctx: &ToolContext,
    call: &Call,
    cancel: &CancellationToken,
    events: &EventSink,
    diff: Option<String>,
    gate: &Gate,
) -> (ContentBlock, Option<UsageRecord>) {
    let (_, name, args) = call;
    let started = Instant::now();
    let outcome: Result<ToolOutput, ToolError> = if cancel.is_cancelled() {
        Err(ToolError::Failed(CANCELLED.into()))
    } else if !args.is_object() {
        Err(ToolError::InvalidArgs(format!(
            "the arguments were not a JSON object: {}",
            args.to_string().chars().take(200).collect::<String>()
        )))
    } else {
        match tools.get(name) {
            None => Err(ToolError::Failed(format!(
                "unknown tool `{name}`; available: {}",
                tools
                    .specs()
                    .iter()
                    .map(|s| s.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
            Some(tool) => tokio::select! {
                _ = cancel.cancelled() => Err(ToolError::Failed(CANCELLED.into())),
                out = tool.run(args, ctx) => out,
            },
        }
    };
    // A diff is "what was applied" only when the call succeeded.
    let diff = diff.filter(|_| outcome.is_ok());
    let outcome = match outcome {
        Ok(mut out) => {
            if let Some(note) = gate.after(call, &out.text, false, events).await {
                out.text = format!("{}\n{note}", out.text.trim_end());
            }
            if let Some(image) = out.image.take() {
                ctx.images.hold(&call.0, image);
            }
            Ok(out)
        }
        Err(e) => Err(e),
    };
    finish(call, outcome, started, events, diff)
}

/// Reports a call's outcome and turns it into its `ToolResult` block.
/// The failed `tool_result` event of a call that did not run (or whose task failed): `output`
/// is the whole text, `error` the part the panel and the transcript show.
pub(super) fn failed_event(
    id: &str,
    name: &str,
    output: String,
    error: String,
    duration_ms: u64,
) -> AgentEvent {
    AgentEvent::ToolResult {
        id: id.to_string(),
        name: name.to_string(),
        ok: false,
        chars: output.chars().count() as u64,
        saved_path: None,
        duration_ms,
        error: Some(error),
        exit_code: None,
        output,
        diff: None,
    }
}

fn finish(
    (id, name, _): &Call,
    outcome: Result<ToolOutput, ToolError>,
    started: Instant,
    events: &EventSink,
    diff: Option<String>,
) -> (ContentBlock, Option<UsageRecord>) {
    let duration_ms = started.elapsed().as_millis() as u64;
    let (content, is_error, saved_path, usage, exit_code) = match outcome {
        Ok(out) => (out.text, false, out.saved_path, out.usage, out.exit_code),
        Err(e) => (e.to_string(), true, None, None, None),
    };
    // Known secrets never enter the conversation (a `run_command env` would send them).
    let content = events.mask(&content);
    events.emit(AgentEvent::ToolResult {
        id: id.clone(),
        name: name.clone(),
        ok: !is_error,
        chars: content.chars().count() as u64,
        saved_path: saved_path.map(|p| p.display().to_string()),
        duration_ms,
        error: is_error.then(|| content.lines().next().unwrap_or_default().to_string()),
        exit_code,
        output: content.clone(),
        diff,
    });
    let block = ContentBlock::ToolResult {
        tool_use_id: id.clone(),
        content,
        is_error,
    };
    (block, usage)
}
