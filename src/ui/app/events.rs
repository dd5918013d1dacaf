//! How agent events change what is shown: the chat cells, the tool panel, the transcript, the
//! saved files, the meters and the dialogs. One event at a time, in the order the agent sent
//! them; a specialist's (`AgentEvent::Scoped`) go on to `agents`. Nothing here sends an `Op`:
//! the dialogs it opens are answered through the key map.
//!
//! `handle_agent_event` names every event and hands each family to its own step: the session's
//! settings, the turn and its stream, notices, tool calls, and usage and cost.

use super::*;
use crate::protocol::{PlanStep, StepStatus};
use crate::ui::approval::PendingApproval;
use crate::ui::cache::CacheView;
use crate::ui::cost::CostView;

impl App {
    /// Updates the panes from an agent event.
    pub fn handle_agent_event(&mut self, event: AgentEvent) {
        match event {
            event @ (AgentEvent::SessionConfigured { .. }
            | AgentEvent::ModeChanged { .. }
            | AgentEvent::McpPrompts { .. }
            | AgentEvent::CommandFiles { .. }) => self.session_event(event),
            event @ (AgentEvent::Prompt { .. }
            | AgentEvent::TurnStarted { .. }
            | AgentEvent::TextDelta { .. }
            | AgentEvent::ReasoningDelta { .. }
            | AgentEvent::Retrying { .. }
            | AgentEvent::Error { .. }
            | AgentEvent::TurnFinished { .. }) => self.turn_event(event),
            event @ (AgentEvent::Route { .. }
            | AgentEvent::EarlyExit { .. }
            | AgentEvent::Notice { .. }
            | AgentEvent::Rewound { .. }) => self.notice_event(event),
            event @ (AgentEvent::ToolCallStarted { .. }
            | AgentEvent::ToolCallProgress { .. }
            | AgentEvent::ToolCall { .. }
            | AgentEvent::ApprovalRequest { .. }
            | AgentEvent::ToolResult { .. }) => self.tool_event(event),
            AgentEvent::HookRan {
                event,
                command,
                exit_code,
                duration_ms,
                blocked,
                note,
            } => {
                let how = match (blocked, exit_code) {
                    (true, _) => format!("blocked: {note}"),
                    (false, Some(0)) => "ok".to_string(),
                    (false, _) => note,
                };
                let summary = format!("{command} · {duration_ms} ms · {how}");
                self.tools.note(&format!("hook {event}"), summary);
            }
            AgentEvent::CacheWarm { lifetime_secs, .. } => {
                let lifetime = std::time::Duration::from_secs(lifetime_secs);
                self.status.cache_until = Some(std::time::Instant::now() + lifetime);
            }
            event @ (AgentEvent::Usage { .. }
            | AgentEvent::CacheMiss { .. }
            | AgentEvent::CostReport { .. }
            | AgentEvent::CacheReport { .. }
            | AgentEvent::Cost { .. }) => self.usage_event(event),
            AgentEvent::PlanUpdated { plan, explanation } => self.plan_updated(plan, explanation),
            // Only ever sent scoped; handled there.
            AgentEvent::AgentFinished { .. } => {}
            AgentEvent::Scoped { agent, task, event } => {
                self.handle_specialist_event(&agent, task, *event)
            }
        }
    }

    /// The session's provider, model, mode and MCP commands.
    fn session_event(&mut self, event: AgentEvent) {
        match event {
            AgentEvent::SessionConfigured {
                provider,
                model,
                mode,
                context_window,
                price_estimated,
                ..
            } => {
                self.status.provider = provider;
                self.status.model = model;
                self.status.mode = mode;
                self.status.context_window = context_window;
                self.status.price_estimated = price_estimated;
            }
            AgentEvent::ModeChanged { mode } => self.status.mode = mode,
            AgentEvent::McpPrompts { commands } => {
                self.session.dynamic_commands.retain(|c| c.file);
                self.session.dynamic_commands.extend(commands);
            }
            AgentEvent::CommandFiles { commands } => {
                self.session.dynamic_commands.retain(|c| !c.file);
                self.session.dynamic_commands.extend(commands);
            }
            // Every other family has its own step (see `handle_agent_event`).
            _ => {}
        }
        self.input.palette_extra = self.session.dynamic_commands.clone();
    }

    /// A turn: its answer streaming into the chat, a retry's wait, an error, its end.
    fn turn_event(&mut self, event: AgentEvent) {
        match event {
            // The UI showed the prompt when it was sent.
            AgentEvent::Prompt { .. } => {}
            AgentEvent::TurnStarted { .. } => self.chat.push(CellKind::Assistant {
                text: String::new(),
                reasoning: String::new(),
                tool_calls: Vec::new(),
                usage: None,
            }),
            AgentEvent::TextDelta { text } => {
                self.status.retry = None;
                self.status.streamed(text.len());
                self.with_assistant(|t, _, _| t.push_str(&text))
            }
            AgentEvent::ReasoningDelta { text } => {
                self.status.streamed(text.len());
                self.with_assistant(|_, r, _| r.push_str(&text))
            }
            AgentEvent::Retrying {
                attempt,
                max,
                wait_ms,
                reason,
            } => {
                // Counted down on the border each second until the request goes again.
                let until = Instant::now() + Duration::from_millis(wait_ms);
                self.status.retry = Some((until, format!("(attempt {attempt}/{max}): {reason}")));
                self.requests.wake =
                    Some(Instant::now() + Duration::from_millis(wait_ms.min(1000)));
            }
            AgentEvent::Error { message } => {
                self.chat.pop_last_if(is_empty_answer);
                self.chat.push(CellKind::Error(message))
            }
            AgentEvent::TurnFinished { stop_reason, .. } => self.turn_finished(&stop_reason),
            // Every other family has its own step (see `handle_agent_event`).
            _ => {}
        }
    }

    /// The turn ended: the working state goes, and the next queued prompt is sent (after an
    /// interrupt the queue waits for the user instead).
    fn turn_finished(&mut self, stop_reason: &str) {
        self.chat.pop_last_if(is_empty_answer);
        self.running = false;
        // The work ended: "interrupting…", "compacting…" and a retry wait end with it.
        self.status.notice = None;
        self.status.retry = None;
        if stop_reason != "interrupted" {
            self.notify_unfocused("chatcli: the answer is ready");
        }
        self.overlays.take_approval();
        self.status.busy = false;
        self.status.streamed_bytes = 0;
        self.tools.cancel_running();
        if stop_reason != "interrupted" && self.status.mode == Mode::Plan {
            self.chat.push(CellKind::Notice(
                "plan mode: /accept carries the plan out in coder mode; or say what to change and it is refined".into(),
            ));
        }
        if stop_reason == "interrupted" {
            let queued = self.input.queue.len();
            self.chat.push(CellKind::Notice(if queued == 0 {
                "interrupted".into()
            } else {
                format!(
                    "interrupted; {queued} queued prompt(s) wait: Enter on an empty prompt sends the next, Esc drops the newest"
                )
            }));
        } else if let Some((shown, full, mode)) = self.input.next_queued() {
            self.start_prompt(shown, full, mode);
        }
    }

    /// Lines in the chat the agent sends besides answers: a reroute, an early exit, a notice,
    /// a rewind replayed.
    fn notice_event(&mut self, event: AgentEvent) {
        match event {
            // Only a reroute changes what happens; the signals stay in the JSON events and the log.
            AgentEvent::Route {
                decision: Mode::Chat,
                reason,
            } => {
                self.chat.push(CellKind::Notice(format!(
                    "answered as chat (one request, no tools): {reason}"
                )));
            }
            AgentEvent::Route { .. } => {}
            AgentEvent::EarlyExit {
                repeats,
                kind,
                fingerprint,
            } => {
                let what = if kind == "cycle" {
                    format!("two tool batches alternated {repeats} times")
                } else {
                    format!("the same tool calls came {repeats} times in a row")
                };
                self.chat.push(CellKind::Notice(format!(
                    "stopped early: {what} without progress (fingerprint {fingerprint}); the last batch was not run. Send a new prompt to go on."
                )));
            }
            AgentEvent::Notice { message } => {
                // "compacting…" ends with the compaction's own notice.
                if self
                    .status
                    .notice
                    .as_ref()
                    .is_some_and(|(text, _)| text == "compacting…")
                    && !message.starts_with("compacting")
                {
                    self.status.notice = None;
                }
                self.chat.push(CellKind::Notice(message))
            }
            // The picker already cut the chat; a resumed session's replay cuts it here.
            AgentEvent::Rewound { prompt } => self.chat.cut_before_prompt(prompt),
            // Every other family has its own step (see `handle_agent_event`).
            _ => {}
        }
    }

    /// A tool call of the main agent: arriving, started, waiting for approval, finished.
    fn tool_event(&mut self, event: AgentEvent) {
        match event {
            AgentEvent::ToolCallStarted { id, name } => {
                self.status.streamed(name.len());
                self.tools.receiving(&id, &name);
            }
            AgentEvent::ToolCallProgress { id, bytes } => {
                let new = self.tools.progress(&id, bytes);
                self.status.streamed(new as usize);
            }
            AgentEvent::ToolCall { id, name, args } => {
                let summary = super::super::tool_panel::summarize_args(&args);
                self.records.started(&id, &name, &args, summary.clone());
                self.tools.started(&id, &name, &args);
                self.with_assistant(|_, _, calls| {
                    calls.push(ToolLine {
                        id,
                        name,
                        summary,
                        ..ToolLine::default()
                    })
                });
            }
            AgentEvent::ApprovalRequest {
                id,
                name,
                args,
                preview,
            } => {
                self.tools.awaiting(&id);
                self.notify_unfocused(&format!("chatcli: {name} waits for your approval"));
                let pending = self.approval_for(id, name, args, preview);
                self.overlays.ask(pending);
            }
            result @ AgentEvent::ToolResult { .. } => {
                if let AgentEvent::ToolResult { id, .. } = &result {
                    let id = id.clone();
                    if let Some(outcome) = self.finish_call(&id, result) {
                        self.set_tool_outcome(&id, outcome);
                    }
                }
            }
            // Every other family has its own step (see `handle_agent_event`).
            _ => {}
        }
    }

    /// The model's plan changed: the panel's checklist, and the new plan in the transcript.
    fn plan_updated(&mut self, plan: Vec<PlanStep>, explanation: Option<String>) {
        let done = plan
            .iter()
            .filter(|s| s.status == StepStatus::Completed)
            .count();
        let mut text = format!("plan updated ({done}/{} done)", plan.len());
        if let Some(why) = explanation {
            text.push_str(": ");
            text.push_str(&why);
        }
        for line in crate::tools::update_plan::checklist(&plan) {
            text.push('\n');
            text.push_str(&line);
        }
        self.tools.plans.set_main(plan);
        self.chat.push(CellKind::Notice(text));
    }

    /// The dialog for a call that waits; a command's shows the sandbox it would run under.
    pub(super) fn approval_for(
        &self,
        id: String,
        name: String,
        args: serde_json::Value,
        preview: Option<String>,
    ) -> PendingApproval {
        let mut pending = PendingApproval::new(id, name, args, preview);
        if pending.name == "run_command" {
            pending.policy = self.session.command_policy();
        }
        pending
    }

    /// What requests used and cost: the meters, the chart, the `/cost` and `/cache` reports.
    fn usage_event(&mut self, event: AgentEvent) {
        match event {
            AgentEvent::Usage {
                usage,
                cost_usd,
                turn: 0,
            } => {
                // Housekeeping (a compaction summary, HyDE): it counts, but belongs to no answer.
                self.status.add_usage(&usage, cost_usd);
                self.chart.requests.push(usage);
            }
            AgentEvent::Usage {
                usage, cost_usd, ..
            } => {
                self.status.add_usage(&usage, cost_usd);
                self.chart.requests.push(usage);
                let figures = (usage.input_tokens, usage.output_tokens);
                self.chat.update_last(|cell| {
                    if let CellKind::Assistant { usage, .. } = cell {
                        *usage = Some(figures);
                    }
                });
            }
            AgentEvent::CacheMiss {
                block,
                rewritten_tokens,
                ..
            } => self.cache_miss_note(&block, rewritten_tokens),
            report @ AgentEvent::CostReport { .. } => self.overlays.cost = cost_view(report),
            AgentEvent::CacheReport {
                mode,
                tools_tokens,
                system_tokens,
                mcp_catalog_tokens,
                blocks,
            } => {
                self.overlays.cache = Some(CacheView {
                    mode,
                    tools_tokens,
                    system_tokens,
                    mcp_catalog_tokens,
                    blocks,
                });
            }
            // The agent's totals are authoritative; keep the live sum in step with them.
            AgentEvent::Cost { cost_usd: None, .. } => self.status.cost_usd = None,
            // A known total, and every other family (see `handle_agent_event`).
            _ => {}
        }
    }

    /// A ⚠ line in the tool panel for a cache miss: what changed (`block`, with the agent's
    /// name for a specialist's) and how many tokens were written again.
    pub(super) fn cache_miss_note(&mut self, block: &str, rewritten_tokens: u64) {
        // An expiry's words already say what was written again and what it cost.
        let summary = if block.starts_with("cache expired") {
            block.to_string()
        } else {
            format!(
                "{block}: ~{} re-written",
                super::super::text::compact(rewritten_tokens)
            )
        };
        self.tools.note("cache miss", summary);
    }

    /// Books a finished call under `key` (its id, or a specialist's `TASK:AGENT/ID`): the
    /// transcript record, a saved file, the panel row. Returns the outcome it showed; `None` for
    /// any other event.
    pub(super) fn finish_call(&mut self, key: &str, result: AgentEvent) -> Option<ToolOutcome> {
        let (outcome, saved_path) = self.records.finished(key, result)?;
        self.tools.finished(key, &outcome, saved_path);
        Some(outcome)
    }

    fn set_tool_outcome(&mut self, id: &str, outcome: ToolOutcome) {
        // A call opened in place while it ran shows its result now.
        if self.chat.call_open(id)
            && let Some(detail) = self.records.transcript.detail(id)
        {
            self.chat.refresh_call(id, detail);
        }
        let index = self.chat.cells().iter().rposition(|cell| {
            matches!(cell.kind(), CellKind::Assistant { tool_calls, .. }
                if tool_calls.iter().any(|c| c.id == id))
        });
        if let Some(index) = index {
            self.chat.update_at(index, |cell| {
                if let CellKind::Assistant { tool_calls, .. } = cell
                    && let Some(call) = tool_calls.iter_mut().rev().find(|c| c.id == id)
                {
                    call.outcome = Some(outcome);
                }
            });
        }
    }

    /// Edits the assistant cell of the current request (made by `TurnStarted`).
    fn with_assistant(&mut self, f: impl FnOnce(&mut String, &mut String, &mut Vec<ToolLine>)) {
        let is_assistant = matches!(
            self.chat.cells().last().map(|c| c.kind()),
            Some(CellKind::Assistant { .. })
        );
        if !is_assistant {
            self.chat.push(CellKind::Assistant {
                text: String::new(),
                reasoning: String::new(),
                tool_calls: Vec::new(),
                usage: None,
            });
        }
        self.chat.update_last(|cell| {
            if let CellKind::Assistant {
                text,
                reasoning,
                tool_calls,
                ..
            } = cell
            {
                f(text, reasoning, tool_calls);
            }
        });
    }
}

/// `/cost`'s view of the agent's report; `None` for any other event.
fn cost_view(report: AgentEvent) -> Option<CostView> {
    let AgentEvent::CostReport {
        provider,
        model,
        requests,
        uncached_input_tokens,
        input_tokens,
        output_tokens,
        cache_read_tokens,
        cache_creation_tokens,
        cost_usd,
        saved_usd,
        budget_usd,
        by_model,
        by_agent,
        images,
        image_tokens,
        expiries,
    } = report
    else {
        return None;
    };
    Some(CostView {
        by_agent,
        images: (images, image_tokens),
        expiries,
        provider,
        model,
        requests,
        input_tokens,
        uncached_input_tokens,
        output_tokens,
        cache_read_tokens,
        cache_creation_tokens,
        cost_usd,
        saved_usd,
        budget_usd,
        by_model,
    })
}
