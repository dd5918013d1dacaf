//! The gate every tool call passes before and after it runs: the permission rules, then the
//! `PreToolUse` hooks; after the run, the `PostToolUse` hooks.
//!
//! Order and strength: a `deny` rule refuses the call before any hook runs (read-only calls
//! included: `Read(.env)` denied means the file is never read), whatever the permission mode or
//! `--yes`. A hook that blocks refuses it with the hook's reason. Then the call is either
//! allowed without asking (an `allow` rule, or a hook's `allow`), asked for (an `ask` rule or a
//! hook's `ask` — even a read-only call, even past "allow always"), or left to the approval
//! policy as before. A protected path is still asked for whatever a rule or hook says. The
//! gate is shared with the session's specialists (one set of rules, one set of tallies).

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use serde_json::json;

use super::sink::EventSink;
use super::tools_run::Call;
use crate::hooks::{HookEvent, HookRun, Hooks, Input};
use crate::protocol::AgentEvent;
use crate::rules::{Rule, RuleSet, Verdict};

/// Rules and hooks, as the session has them.
#[derive(Clone, Default)]
pub struct Gate {
    pub hooks: Arc<Hooks>,
    pub rules: Arc<RwLock<RuleSet>>,
    pub workspace: PathBuf,
    /// Where "allow always" may save a rule: the user's folder and the project's root.
    pub home: Option<PathBuf>,
    pub project_root: PathBuf,
}

/// What the gate says about a call before it runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Pass {
    /// Refused: the result text the model reads.
    Refuse(String),
    /// Run without asking.
    Allow,
    /// Ask the user, whatever the mode (or refuse where nobody can be asked).
    Ask,
    /// Nothing said: the approval policy decides, as without rules.
    Default,
}

impl Gate {
    /// The rules, for reading (a poisoned lock still holds usable rules).
    fn read_rules(&self) -> std::sync::RwLockReadGuard<'_, RuleSet> {
        match self.rules.read() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Adds rules that apply from now on (a saved "allow always", an approved project file).
    pub fn add_rules(&self, more: impl IntoIterator<Item = Rule>) {
        let mut rules = match self.rules.write() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        for rule in more {
            rules.push(rule);
        }
    }

    /// The rules' verdict on a call, strongest first, with the rule as written.
    fn rule_for(&self, name: &str, args: &serde_json::Value) -> Option<Rule> {
        self.read_rules()
            .verdict(name, args, &self.workspace)
            .cloned()
    }

    /// The rules, then the `PreToolUse` hooks.
    pub async fn before(&self, (_, name, args): &Call, events: &EventSink) -> Pass {
        let rule = self.rule_for(name, args);
        if let Some(rule) = rule.as_ref().filter(|r| r.verdict == Verdict::Deny) {
            return Pass::Refuse(format!(
                "denied by the permission rule `{}` ({}): the call was not run",
                rule.text, rule.source
            ));
        }
        let outcome = self
            .hooks
            .run(HookEvent::PreToolUse, Input::tool(name, args))
            .await;
        report(&outcome.runs, events);
        if let Some(reason) = outcome.blocked {
            return Pass::Refuse(format!("blocked by a PreToolUse hook: {reason}"));
        }
        match (outcome.decision, rule.map(|r| r.verdict)) {
            (Some(Verdict::Ask), _) | (_, Some(Verdict::Ask)) => Pass::Ask,
            (Some(Verdict::Allow), _) | (_, Some(Verdict::Allow)) => Pass::Allow,
            _ => Pass::Default,
        }
    }

    /// The `PostToolUse` hooks: what they add to the result the model reads (a block's reason,
    /// context), if anything.
    pub async fn after(
        &self,
        (_, name, args): &Call,
        result: &str,
        is_error: bool,
        events: &EventSink,
    ) -> Option<String> {
        if !self.hooks.any(HookEvent::PostToolUse) {
            return None;
        }
        let input = Input::tool(name, args).and(
            "tool_response",
            json!({"output": result, "is_error": is_error}),
        );
        let outcome = self.hooks.run(HookEvent::PostToolUse, input).await;
        report(&outcome.runs, events);
        let mut notes: Vec<String> = Vec::new();
        if let Some(reason) = outcome.blocked {
            notes.push(format!("[PostToolUse hook: {reason}]"));
        }
        notes.extend(outcome.context.into_iter().map(|c| format!("[hook: {c}]")));
        (!notes.is_empty()).then(|| notes.join("\n"))
    }

    /// `Notification` hooks, in the background (a dialog must not wait for a hook).
    pub fn notify(&self, message: String, events: &EventSink) {
        if !self.hooks.any(HookEvent::Notification) {
            return;
        }
        let hooks = Arc::clone(&self.hooks);
        let events = events.clone();
        tokio::spawn(async move {
            let input = Input::with("message", json!(message));
            let outcome = hooks.run(HookEvent::Notification, input).await;
            report(&outcome.runs, &events);
        });
    }

    /// Saves an "allow always" rule for `call` where the user chose, and applies it now.
    pub fn remember(&self, call: &Call, scope: Option<crate::user_settings::Scope>) -> String {
        let text = RuleSet::suggest(&call.1, &call.2);
        let saved = match (scope, &self.home) {
            (None, _) => Ok("this session".to_string()),
            (Some(scope), Some(home)) => {
                crate::user_settings::save_allow(scope, home, &self.project_root, &text)
                    .map(|path| path.display().to_string())
                    .map_err(|e| e.to_string())
            }
            (Some(_), None) => Err("this session has no settings folder".to_string()),
        };
        match saved {
            Ok(source) => {
                self.add_rules(Rule::parse(&text, Verdict::Allow, &source).ok());
                format!("allowed from now on: `{text}` (saved to {source})")
            }
            Err(why) => format!("the rule `{text}` was not saved: {why}"),
        }
    }

    /// `/permissions rules`: every rule with the file it came from.
    pub fn rules_report(&self) -> String {
        let rules = self.read_rules();
        if rules.rules().is_empty() {
            return "no permission rules: add `permissions.allow`, `ask` or `deny` lists to CHATCLI_HOME/settings.json or .chatcli/settings.json (see docs/guide/permissions.md)".into();
        }
        let mut lines = vec![format!(
            "{} permission rule(s), deny beats ask beats allow:",
            rules.rules().len()
        )];
        for rule in rules.rules() {
            lines.push(format!(
                "  {:<5} {}  ({})",
                rule.verdict.as_str(),
                rule.text,
                rule.source
            ));
        }
        lines.join("\n")
    }
}

/// Each hook run as an event: the tool panel shows it and the session log keeps it.
pub(super) fn report(runs: &[HookRun], events: &EventSink) {
    for run in runs {
        events.emit(AgentEvent::HookRan {
            event: run.event.clone(),
            command: run.command.clone(),
            exit_code: run.exit_code,
            duration_ms: run.duration_ms,
            blocked: run.blocked,
            note: run.note.clone(),
        });
    }
}
