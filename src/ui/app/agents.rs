//! Events of dispatched specialists (`AgentEvent::Scoped`): each specialist is a row of the tool
//! panel with its live `N↑ M↓`, state and duration, its calls nested under it; its usage counts
//! in the status bar like any request; its approvals open the same dialog, labelled with its name.
//!
//! A specialist's words never enter the chat: the orchestrator reads its answer and answers the
//! user. Call ids are only unique within one specialist, so the panel and the transcript key a
//! specialist's call as `TASK:AGENT/ID`; the agent still gets the bare id back in `Op::Approve`.

use super::*;

impl App {
    /// Updates the panes from an event of specialist `agent`, task `task`.
    pub(super) fn handle_specialist_event(&mut self, agent: &str, task: u32, event: AgentEvent) {
        let row = format!("{task}:{agent}");
        let key = |id: &str| format!("{row}/{id}");
        match event {
            AgentEvent::Prompt { text, .. } => self.tools.agent_started(&row, agent, &text),
            AgentEvent::TextDelta { text } | AgentEvent::ReasoningDelta { text } => {
                self.status.streamed(text.len());
            }
            AgentEvent::ToolCallStarted { id, name } => {
                self.status.streamed(name.len());
                self.tools.receiving_in(&row, &key(&id), &name);
            }
            AgentEvent::ToolCallProgress { id, bytes } => {
                let new = self.tools.progress(&key(&id), bytes);
                self.status.streamed(new as usize);
            }
            AgentEvent::ToolCall { id, name, args } => {
                let summary = super::super::tool_panel::summarize_args(&args);
                self.records.started(&key(&id), &name, &args, summary);
                self.tools.started_in(&row, &key(&id), &name, &args);
            }
            AgentEvent::ApprovalRequest {
                id,
                name,
                args,
                preview,
            } => {
                self.tools.awaiting(&key(&id));
                let panel_key = key(&id);
                let mut pending = self.approval_for(id, name, args, preview);
                pending.agent = Some(agent.to_string());
                pending.panel_key = Some(panel_key);
                self.overlays.ask(pending);
            }
            result @ AgentEvent::ToolResult { .. } => {
                if let AgentEvent::ToolResult { id, .. } = &result {
                    let key = key(id);
                    self.finish_call(&key, result);
                }
            }
            AgentEvent::Usage {
                usage, cost_usd, ..
            } => {
                // The context meter is the orchestrator's window, not a specialist's.
                let context = self.status.last_input;
                self.status.add_usage(&usage, cost_usd);
                self.status.last_input = context;
                self.chart.requests.push(usage);
                self.tools
                    .agent_usage(&row, usage.input_tokens, usage.output_tokens);
            }
            AgentEvent::AgentFinished {
                stop_reason,
                duration_ms,
                ..
            } => self
                .tools
                .agent_finished(&row, &stop_reason, Duration::from_millis(duration_ms)),
            AgentEvent::PlanUpdated { plan, .. } => {
                self.tools.plans.set_specialist(&row, agent, plan)
            }
            AgentEvent::Error { message } => {
                self.chat
                    .push(CellKind::Error(format!("{agent} agent: {message}")));
            }
            AgentEvent::CacheMiss {
                block,
                rewritten_tokens,
                ..
            } => self.cache_miss_note(&format!("{agent}: {block}"), rewritten_tokens),
            // Its turns, answers, notices and totals belong to the orchestrator's account.
            _ => {}
        }
    }
}
