//! The plan checklist at the top of the tool panel: the model's last `update_plan`, and each
//! dispatched specialist's under it, one line per step (`☑` done, `◐` in progress, `☐` to do).
//!
//! Built only from `plan_updated` events (live, or replayed by `--resume`), so the panel and
//! the session log never disagree. The checklist takes at most half the panel: the calls
//! below it stay visible, and a plan longer than its share ends with a `… N more` line.

// Step texts the model sent: no index that could panic on them (#34).
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use super::text::truncate;
use crate::protocol::{PlanStep, StepStatus};
use crate::tools::update_plan::mark;

/// One plan: the main agent's (`key` empty) or a specialist's (`key` its panel row).
#[derive(Debug, Clone, PartialEq)]
struct Plan {
    key: String,
    /// Who made it, as its heading says (`None` for the main agent).
    agent: Option<String>,
    steps: Vec<PlanStep>,
}

/// Every plan of the session, the main agent's first.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Checklists {
    plans: Vec<Plan>,
}

impl Checklists {
    /// The main agent's plan changed.
    pub fn set_main(&mut self, steps: Vec<PlanStep>) {
        self.set(String::new(), None, steps);
        // The main plan heads the list.
        self.plans.sort_by_key(|p| !p.key.is_empty());
    }

    /// Specialist `agent`'s plan (its panel row `key`) changed.
    pub fn set_specialist(&mut self, key: &str, agent: &str, steps: Vec<PlanStep>) {
        self.set(key.to_string(), Some(agent.to_string()), steps);
    }

    fn set(&mut self, key: String, agent: Option<String>, steps: Vec<PlanStep>) {
        match self.plans.iter_mut().find(|p| p.key == key) {
            Some(plan) => plan.steps = steps,
            None => self.plans.push(Plan { key, agent, steps }),
        }
    }

    /// Whether no plan was given yet.
    pub fn is_empty(&self) -> bool {
        self.plans.is_empty()
    }

    /// At most `rows` lines of `width` columns: each plan's heading and steps.
    pub fn lines(&self, width: usize, rows: usize) -> Vec<Line<'static>> {
        let mut all: Vec<Line<'static>> = Vec::new();
        for plan in &self.plans {
            let done = plan
                .steps
                .iter()
                .filter(|s| s.status == StepStatus::Completed)
                .count();
            let indent = if plan.agent.is_some() { "  " } else { "" };
            let heading = match &plan.agent {
                Some(agent) => format!("{agent} plan {done}/{}", plan.steps.len()),
                None => format!("Plan {done}/{}", plan.steps.len()),
            };
            all.push(Line::from(vec![
                Span::raw(indent),
                Span::styled(
                    truncate(&heading, width.saturating_sub(indent.len())),
                    Style::new()
                        .fg(Color::LightBlue)
                        .add_modifier(Modifier::BOLD),
                ),
            ]));
            for step in &plan.steps {
                all.push(step_line(step, indent, width));
            }
        }
        if all.len() > rows {
            let more = all.len() + 1 - rows;
            all.truncate(rows.saturating_sub(1));
            if rows > 0 {
                all.push(Line::styled(
                    truncate(&format!("… {more} more"), width),
                    Style::new().fg(Color::DarkGray),
                ));
            }
        }
        all
    }
}

fn step_line(step: &PlanStep, indent: &str, width: usize) -> Line<'static> {
    let (style, text_style) = match step.status {
        StepStatus::Completed => (
            Style::new().fg(Color::Green),
            Style::new()
                .fg(Color::DarkGray)
                .add_modifier(Modifier::CROSSED_OUT),
        ),
        StepStatus::InProgress => (
            Style::new().fg(Color::Yellow),
            Style::new().add_modifier(Modifier::BOLD),
        ),
        StepStatus::Pending => (Style::new().fg(Color::Gray), Style::new()),
    };
    let room = width.saturating_sub(indent.len() + 2);
    Line::from(vec![
        Span::raw(indent.to_string()),
        Span::styled(format!("{} ", mark(step.status)), style),
        Span::styled(truncate(&step.step, room), text_style),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(text: &str, status: StepStatus) -> PlanStep {
        PlanStep {
            step: text.into(),
            status,
        }
    }

    fn text(lines: &[Line]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn the_main_plan_heads_the_specialists_and_long_lists_are_cut() {
        let mut lists = Checklists::default();
        lists.set_specialist("0:coder", "coder", vec![step("Edit", StepStatus::Pending)]);
        lists.set_main(vec![
            step("Read", StepStatus::Completed),
            step("Fix", StepStatus::InProgress),
        ]);
        assert_eq!(
            text(&lists.lines(40, 10)),
            [
                "Plan 1/2",
                "☑ Read",
                "◐ Fix",
                "  coder plan 0/1",
                "  ☐ Edit"
            ]
        );
        assert_eq!(
            text(&lists.lines(40, 3)),
            ["Plan 1/2", "☑ Read", "… 3 more"]
        );
    }
}
