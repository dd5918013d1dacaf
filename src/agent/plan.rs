//! The plan part of the agent: plan mode (nothing writes or runs) and the model's checklist
//! (`update_plan`).
//!
//! Plan mode sends coder's prefix byte for byte — the same system blocks, the same tools array —
//! so switching between plan and coder writes nothing new to the provider's cache; what differs
//! is a rule in the volatile context of the newest turn, and the refusal here of every call that
//! would write or run, before approvals are even looked at (no permission mode or `--yes` lets
//! one through). A specialist dispatched from plan mode inherits the rule.
//!
//! Each accepted `update_plan` call that changes the plan becomes one `plan_updated` event; the
//! front ends draw the checklist from those events, and a resumed session replays them.

use super::{Agent, tools_run};
use crate::conversation::ContentBlock;
use crate::protocol::{AgentEvent, Mode, PlanStep};
use crate::provider::UsageRecord;
use crate::tools::{ToolRegistry, update_plan};

/// What the model reads while the session plans.
pub const PLAN_RULE: &str = "Plan mode: the user wants a plan before any change. Read, search and ask questions, but do not write files or run commands: such calls are refused. Track the steps with update_plan, then end your answer with the plan: numbered steps naming the files and what changes in each, and anything you need from the user. The user accepts it (coder mode then carries it out) or asks you to refine it.";

/// What the model reads once the session leaves plan mode.
pub const PLAN_OVER: &str =
    "Plan mode is over: you may write files and run commands again (approvals apply as usual).";

/// The result text of a write or command call in plan mode.
pub const REFUSED_PLAN_MODE: &str = "refused: the session is in plan mode, where nothing writes or runs; nothing was run. Finish the plan instead: the user accepts it (coder mode carries it out) or asks you to refine it";

/// Plan mode's state and the last plan the model gave.
#[derive(Debug, Default, Clone)]
pub(super) struct PlanState {
    /// The running prompt is in plan mode (a specialist: it was dispatched from one).
    pub(super) planning: bool,
    /// The session has planned at some point: leaving plan mode is then said once.
    pub(super) planned: bool,
    /// The last plan reported, to report only changes.
    last: Option<(Vec<PlanStep>, Option<String>)>,
}

impl PlanState {
    /// A specialist's: it plans when the loop that dispatched it does.
    pub(super) fn inherited(&self) -> PlanState {
        PlanState {
            planning: self.planning,
            planned: self.planning,
            last: None,
        }
    }

    /// The volatile `plan mode` block's text: the rule while planning, `PLAN_OVER` after.
    pub(super) fn rule(&self) -> Option<String> {
        if self.planning {
            Some(PLAN_RULE.to_string())
        } else if self.planned {
            Some(PLAN_OVER.to_string())
        } else {
            None
        }
    }
}

impl Agent {
    /// Enters the prompt's mode: plan mode is noted (a specialist keeps what it inherited), and
    /// the mode whose prefix the prompt sends is returned.
    pub(super) fn enter_mode(&mut self, mode: Mode) -> Mode {
        if self.tools.specialist.is_none() {
            self.plan.planning = mode == Mode::Plan;
            self.plan.planned |= self.plan.planning;
        }
        mode.prefix()
    }

    /// Whether this call is refused because the session plans: it would write or run.
    pub(super) fn refused_by_plan(
        &self,
        tools: &ToolRegistry,
        name: &str,
        args: &serde_json::Value,
    ) -> bool {
        self.plan.planning && tools.get(name).is_some_and(|t| !t.read_only_call(args))
    }

    /// The refused result of a write or command call in plan mode; nothing runs.
    pub(super) fn refuse_in_plan_mode(
        &self,
        (id, name, args): &tools_run::Call,
    ) -> (ContentBlock, Option<UsageRecord>) {
        self.sink.emit(AgentEvent::ToolCall {
            id: id.clone(),
            name: name.clone(),
            args: args.clone(),
        });
        self.sink.emit(tools_run::failed_event(
            id,
            name,
            REFUSED_PLAN_MODE.to_string(),
            REFUSED_PLAN_MODE.to_string(),
            0,
        ));
        (
            ContentBlock::ToolResult {
                tool_use_id: id.clone(),
                content: REFUSED_PLAN_MODE.to_string(),
                is_error: true,
            },
            None,
        )
    }

    /// Reports each accepted `update_plan` call of the batch whose plan differs from the last
    /// one as a `plan_updated` event.
    pub(super) fn report_plans(&mut self, calls: &[tools_run::Call], results: &[ContentBlock]) {
        for (id, name, args) in calls {
            if name != update_plan::NAME {
                continue;
            }
            let accepted = results.iter().any(|block| {
                matches!(block, ContentBlock::ToolResult { tool_use_id, is_error: false, .. }
                    if tool_use_id == id)
            });
            let Ok(plan) = update_plan::parse(args) else {
                continue;
            };
            if !accepted || self.plan.last.as_ref() == Some(&plan) {
                continue;
            }
            self.plan.last = Some(plan.clone());
            let (plan, explanation) = plan;
            self.sink
                .emit(AgentEvent::PlanUpdated { plan, explanation });
        }
    }
}
