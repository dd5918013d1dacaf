//! The full record of what each tool call did, for the transcript pager (Ctrl+T) and for a
//! call opened in place under its line in the chat (Enter on a call picked with Ctrl+↑/↓).
//!
//! The chat pane and the tool panel show one line per call; this keeps the rest: the arguments,
//! the whole result the model received (a command's output, an error's text), and the diff a
//! write or patch applied. It is rebuilt from the same events on `--resume`, so a resumed session
//! pages through the same records.

// Tool output and diffs: no index that could panic on them (#34).
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

use super::files::Pager;
use super::tool_panel::format_duration;

/// One call and, once it finished, what it produced.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolRecord {
    pub id: String,
    pub name: String,
    pub args: serde_json::Value,
    pub outcome: Option<RecordOutcome>,
}

/// What a finished call produced.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordOutcome {
    pub ok: bool,
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    pub output: String,
    pub diff: Option<String>,
    pub saved_path: Option<String>,
}

/// Every call of the session, oldest first.
#[derive(Debug, Clone, Default)]
pub struct Transcript {
    records: Vec<ToolRecord>,
}

impl Transcript {
    /// A call started.
    pub fn started(&mut self, id: &str, name: &str, args: &serde_json::Value) {
        self.records.push(ToolRecord {
            id: id.to_string(),
            name: name.to_string(),
            args: args.clone(),
            outcome: None,
        });
    }

    /// A call finished.
    pub fn finished(&mut self, id: &str, outcome: RecordOutcome) {
        if let Some(record) = self.records.iter_mut().rev().find(|r| r.id == id) {
            record.outcome = Some(outcome);
        }
    }

    /// The records, oldest first.
    pub fn records(&self) -> &[ToolRecord] {
        &self.records
    }

    /// What opening call `id` in place shows under its line: the whole command of a
    /// `run_command` (its line shows it cut), the arguments of a call that applied no diff (a
    /// write's diff shows what it was given), the whole result and the applied diff; `true`
    /// marks diff lines. `None` for a call it has no record of.
    pub fn detail(&self, id: &str) -> Option<Vec<(String, bool)>> {
        let record = self.records.iter().rev().find(|r| r.id == id)?;
        let applied = record.outcome.as_ref().is_some_and(|o| o.diff.is_some());
        let mut lines = body_lines(record, record.name == "run_command" || !applied);
        match &record.outcome {
            None => lines.push((
                "(still running: its output shows here when it ends)".into(),
                false,
            )),
            Some(o) if o.output.is_empty() && o.diff.is_none() => {
                lines.push(("(no output)".into(), false))
            }
            Some(_) => {}
        }
        Some(lines)
    }

    /// A pager over one call (`Some(id)`) or the whole session (`None`).
    pub fn pager(&self, id: Option<&str>) -> Pager {
        let mut lines = Vec::new();
        let mut diff = Vec::new();
        let chosen: Vec<&ToolRecord> = self
            .records
            .iter()
            .filter(|r| id.is_none_or(|id| r.id == id))
            .collect();
        if chosen.is_empty() {
            lines.push("No tool calls in this session yet.".to_string());
            diff.push(false);
        }
        for record in chosen {
            for (line, is_diff) in record_lines(record) {
                lines.push(line);
                diff.push(is_diff);
            }
            lines.push(String::new());
            diff.push(false);
        }
        let title = match id {
            Some(_) => "tool call",
            None => "tool calls of this session",
        };
        Pager::text(title, lines, diff)
    }
}

/// A record as pager lines: its head, then its body; `true` marks diff lines.
fn record_lines(record: &ToolRecord) -> Vec<(String, bool)> {
    let mut out = vec![(format!("━━ {}", head(record)), false)];
    out.extend(body_lines(record, true));
    out
}

/// `✓ run_command · exit 0 · 1.2s · 42 chars`, or that the call has not ended.
fn head(record: &ToolRecord) -> String {
    match &record.outcome {
        None => format!("… {} (running or not run)", record.name),
        Some(o) => {
            let failed = !o.ok || o.exit_code.is_some_and(|c| c != 0);
            let mut parts = vec![format!(
                "{} {}",
                if failed { "✗" } else { "✓" },
                record.name
            )];
            if let Some(code) = o.exit_code {
                parts.push(format!("exit {code}"));
            }
            parts.push(format_duration(std::time::Duration::from_millis(
                o.duration_ms,
            )));
            parts.push(format!("{} chars", o.output.chars().count()));
            parts.join(" · ")
        }
    }
}

/// A record's arguments (when `args`), saved path, result and applied diff.
fn body_lines(record: &ToolRecord, args: bool) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    match record.args.get("cmd").and_then(|v| v.as_str()) {
        Some(cmd) if record.name == "run_command" => {
            for line in cmd.lines() {
                out.push((format!("$ {line}"), false));
            }
        }
        _ if !args => {}
        _ => {
            let args = serde_json::to_string_pretty(&record.args).unwrap_or_default();
            for line in args.lines() {
                out.push((line.to_string(), false));
            }
        }
    }
    if let Some(o) = &record.outcome {
        if let Some(path) = &o.saved_path {
            out.push((format!("(full body saved to {path})"), false));
        }
        out.push((
            if o.ok {
                "── result".to_string()
            } else {
                "── error".to_string()
            },
            false,
        ));
        // `git_diff`'s result (or any output that is a unified diff) is coloured like one.
        let is_diff = record.name == "git_diff" || looks_like_diff(&o.output);
        for line in o.output.lines() {
            out.push((line.to_string(), is_diff));
        }
        if let Some(d) = &o.diff {
            out.push(("── applied".to_string(), false));
            for line in d.lines() {
                out.push((line.to_string(), true));
            }
        }
    }
    out
}

/// Whether a result reads as a unified diff: it starts with `diff --git` or a `--- ` header
/// followed by `+++ `.
fn looks_like_diff(output: &str) -> bool {
    let mut lines = output.lines().skip_while(|l| l.trim().is_empty());
    match lines.next() {
        Some(first) if first.starts_with("diff --git ") => true,
        Some(first) if first.starts_with("--- ") => {
            lines.next().is_some_and(|l| l.starts_with("+++ "))
        }
        _ => false,
    }
}
