//! Executing one batch of tool calls: in parallel when every call only reads, results in call order.
//!
//! Every call in the batch gets exactly one result, whatever happens: an unknown tool, bad
//! arguments, a failure or an interrupt all become an error result the model can read.

use std::time::Instant;

use futures_util::future::join_all;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::conversation::ContentBlock;
use crate::protocol::AgentEvent;
use crate::tools::{ToolContext, ToolError, ToolOutput, ToolRegistry};

/// The result text for a call the user interrupted.
pub const CANCELLED: &str = "cancelled by the user";

/// Runs the calls and returns their `ToolResult` blocks in call order.
pub async fn run_calls(
    tools: &ToolRegistry,
    ctx: &ToolContext,
    calls: &[(String, String, serde_json::Value)],
    cancel: &CancellationToken,
    events: &mpsc::UnboundedSender<AgentEvent>,
) -> Vec<ContentBlock> {
    let all_read_only = calls
        .iter()
        .all(|(_, name, _)| tools.get(name).is_none_or(|t| t.read_only()));
    if all_read_only {
        join_all(
            calls
                .iter()
                .map(|call| run_one(tools, ctx, call, cancel, events)),
        )
        .await
    } else {
        let mut results = Vec::with_capacity(calls.len());
        for call in calls {
            results.push(run_one(tools, ctx, call, cancel, events).await);
        }
        results
    }
}

async fn run_one(
    tools: &ToolRegistry,
    ctx: &ToolContext,
    (id, name, args): &(String, String, serde_json::Value),
    cancel: &CancellationToken,
    events: &mpsc::UnboundedSender<AgentEvent>,
) -> ContentBlock {
    let _ = events.send(AgentEvent::ToolCall {
        id: id.clone(),
        name: name.clone(),
        args: args.clone(),
    });
    let started = Instant::now();
    let outcome: Result<ToolOutput, ToolError> = if cancel.is_cancelled() {
        Err(ToolError::Failed(CANCELLED.into()))
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
    let duration_ms = started.elapsed().as_millis() as u64;
    let (content, is_error, saved_path) = match outcome {
        Ok(out) => (out.text, false, out.saved_path),
        Err(e) => (e.to_string(), true, None),
    };
    let _ = events.send(AgentEvent::ToolResult {
        id: id.clone(),
        name: name.clone(),
        ok: !is_error,
        chars: content.chars().count() as u64,
        saved_path: saved_path.map(|p| p.display().to_string()),
        duration_ms,
        error: is_error.then(|| content.lines().next().unwrap_or_default().to_string()),
    });
    ContentBlock::ToolResult {
        tool_use_id: id.clone(),
        content,
        is_error,
    }
}
