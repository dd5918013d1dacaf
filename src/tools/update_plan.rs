//! `update_plan`: the model's own checklist for a task of several steps (Codex's tool of the
//! same name, Claude Code's TodoWrite).
//!
//! The tool changes nothing on disk and asks nothing: it checks the plan's shape and says so.
//! What the user sees comes from the agent, which turns each accepted call into a
//! `plan_updated` event (tool panel checklist, transcript line, `exec --json`, session log).
//! The one thing a newcomer gets wrong: the whole plan comes in every call, never a delta, so
//! the last accepted call is the plan.

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::json;

use super::{Tool, ToolContext, ToolError, ToolOutput};
use crate::conversation::ToolSpec;
use crate::protocol::{PlanStep, StepStatus};

/// The tool's name, as the agent looks for its calls.
pub const NAME: &str = "update_plan";

/// Steps one plan may have: a checklist, not a backlog.
const MAX_STEPS: usize = 50;
/// Characters of one step's text.
const MAX_STEP_CHARS: usize = 300;

/// The `update_plan` tool.
pub struct UpdatePlan;

impl Tool for UpdatePlan {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: NAME.into(),
            description: "Keep a checklist for multi-step work: send the whole plan each time; at most one step in_progress.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "plan": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "step": {"type": "string"},
                                "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]}
                            },
                            "required": ["step", "status"]
                        }
                    },
                    "explanation": {"type": "string"}
                },
                "required": ["plan"]
            }),
        }
    }

    fn read_only(&self) -> bool {
        true
    }

    fn run<'a>(
        &'a self,
        args: &'a serde_json::Value,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        async move {
            let (plan, _) = parse(args)?;
            let done = plan
                .iter()
                .filter(|s| s.status == StepStatus::Completed)
                .count();
            Ok(ToolOutput::text(format!(
                "Plan updated: {done} of {} steps completed.",
                plan.len()
            )))
        }
        .boxed()
    }
}

/// The plan and explanation of an `update_plan` call, or what is wrong with them.
pub fn parse(args: &serde_json::Value) -> Result<(Vec<PlanStep>, Option<String>), ToolError> {
    let Some(items) = args.get("plan").and_then(|p| p.as_array()) else {
        return Err(ToolError::InvalidArgs(
            "`plan` (an array of {step, status}) is required".into(),
        ));
    };
    if items.is_empty() || items.len() > MAX_STEPS {
        return Err(ToolError::InvalidArgs(format!(
            "`plan` must have 1 to {MAX_STEPS} steps (got {})",
            items.len()
        )));
    }
    let mut plan = Vec::with_capacity(items.len());
    for (n, item) in items.iter().enumerate() {
        plan.push(step(n + 1, item)?);
    }
    let running = plan
        .iter()
        .filter(|s| s.status == StepStatus::InProgress)
        .count();
    if running > 1 {
        return Err(ToolError::InvalidArgs(format!(
            "at most one step may be in_progress (got {running})"
        )));
    }
    let explanation = super::optional_str(args, "explanation").map(|e| e.trim().to_string());
    Ok((plan, explanation.filter(|e| !e.is_empty())))
}

/// Step `n` (from 1) of the plan.
fn step(n: usize, item: &serde_json::Value) -> Result<PlanStep, ToolError> {
    let text = item
        .get("step")
        .and_then(|s| s.as_str())
        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|s| !s.is_empty())
        .ok_or_else(|| {
            ToolError::InvalidArgs(format!("step {n}: `step` (a string) is required"))
        })?;
    let status = item.get("status").and_then(|s| s.as_str()).unwrap_or("");
    let status = match status.trim().to_ascii_lowercase().as_str() {
        "pending" => StepStatus::Pending,
        "in_progress" | "in-progress" => StepStatus::InProgress,
        "completed" | "done" => StepStatus::Completed,
        other => {
            return Err(ToolError::InvalidArgs(format!(
                "step {n}: `status` must be pending, in_progress or completed (got \"{other}\")"
            )));
        }
    };
    let (step, _) = super::take_chars(&text, MAX_STEP_CHARS);
    Ok(PlanStep {
        step: step.to_string(),
        status,
    })
}

/// The plan as checklist lines: `☐` pending, `◐` in progress, `☑` completed.
pub fn checklist(plan: &[PlanStep]) -> Vec<String> {
    plan.iter()
        .map(|s| format!("{} {}", mark(s.status), s.step))
        .collect()
}

/// The mark of a step's status.
pub fn mark(status: StepStatus) -> &'static str {
    match status {
        StepStatus::Pending => "☐",
        StepStatus::InProgress => "◐",
        StepStatus::Completed => "☑",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_parses_with_its_explanation() {
        let (plan, why) = parse(&json!({
            "plan": [
                {"step": "Read the parser", "status": "completed"},
                {"step": "Fix  the\nbug", "status": "in_progress"},
                {"step": "Add a test", "status": "pending"}
            ],
            "explanation": "found the cause"
        }))
        .expect("valid");
        assert_eq!(plan.len(), 3);
        assert_eq!(plan[1].step, "Fix the bug");
        assert_eq!(plan[1].status, StepStatus::InProgress);
        assert_eq!(why.as_deref(), Some("found the cause"));
        assert_eq!(
            checklist(&plan),
            ["☑ Read the parser", "◐ Fix the bug", "☐ Add a test"]
        );
    }

    #[test]
    fn bad_plans_say_what_is_wrong() {
        let cases = [
            (json!({}), "`plan`"),
            (json!({"plan": []}), "1 to 50 steps"),
            (json!({"plan": [{"status": "pending"}]}), "step 1: `step`"),
            (
                json!({"plan": [{"step": "a", "status": "started"}]}),
                "got \"started\"",
            ),
            (
                json!({"plan": [{"step": "a", "status": "in_progress"}, {"step": "b", "status": "in_progress"}]}),
                "at most one",
            ),
        ];
        for (args, expected) in cases {
            let err = parse(&args)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(err.contains(expected), "{args}: {err}");
        }
    }
}
