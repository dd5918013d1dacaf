//! Hooks: commands the user's settings files run at points of the agent's loop, in the shape
//! Claude Code's `settings.json` gives them (`{"hooks": {"PreToolUse": [{"matcher": "Bash",
//! "hooks": [{"type": "command", "command": "…", "timeout": 30}]}]}}`).
//!
//! A hook gets the event as JSON on stdin (`session_id`, `cwd`, `hook_event_name`, and per event
//! `tool_name`/`tool_input`/`tool_response`, `prompt`, `message`…). Exit 0 goes on; exit 2
//! blocks, and its stderr is the reason the model (or, for a prompt, the user) reads; JSON on
//! stdout may decide (`hookSpecificOutput.permissionDecision`: allow / deny / ask, or
//! `decision: "block"`) and add context (`additionalContext`; plain stdout for
//! `UserPromptSubmit` and `SessionStart`). Any other exit is a hook that failed: said, not
//! blocking. Every hook runs through the process door (`hooks/runner.rs`): its own session and
//! group, killed at its time limit, the scrubbed environment plus the variables its entry names
//! in `env`. What a newcomer gets wrong: added context belongs to the volatile part of the next
//! request (the agent puts it there), never the cached prefix — a hook that prints the date must
//! not cost a cache write.

mod runner;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Value, json};

pub use runner::HookRun;

/// When a hook runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HookEvent {
    PreToolUse,
    PostToolUse,
    UserPromptSubmit,
    Stop,
    SessionStart,
    SessionEnd,
    PreCompact,
    Notification,
}

impl HookEvent {
    /// Every event, in the order `/hooks` lists them.
    pub const ALL: [HookEvent; 8] = [
        HookEvent::SessionStart,
        HookEvent::UserPromptSubmit,
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::Notification,
        HookEvent::PreCompact,
        HookEvent::Stop,
        HookEvent::SessionEnd,
    ];

    /// The name settings files use.
    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::Stop => "Stop",
            HookEvent::SessionStart => "SessionStart",
            HookEvent::SessionEnd => "SessionEnd",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::Notification => "Notification",
        }
    }

    fn parse(name: &str) -> Option<HookEvent> {
        HookEvent::ALL.into_iter().find(|e| e.as_str() == name)
    }

    /// Whether the matcher applies (tool events match tool names; the others run always).
    fn matches_tools(self) -> bool {
        matches!(self, HookEvent::PreToolUse | HookEvent::PostToolUse)
    }
}

/// The default time limit of a hook, as Claude Code's.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// One hook command and when it runs.
#[derive(Debug, Clone)]
pub struct Hook {
    pub event: HookEvent,
    /// A regex over the tool name (chatcli's or its Claude Code alias); empty or `*` is all.
    pub matcher: String,
    matcher_re: Option<regex::Regex>,
    pub command: String,
    pub timeout: Duration,
    /// Variables the hook asks for by name: passed even when the scrubbed environment would
    /// withhold them.
    pub env: Vec<String>,
    /// The settings file it came from.
    pub source: String,
}

/// A hooks section that cannot be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HookError {
    #[error(
        "{file}: hook event {name:?} is not one of PreToolUse, PostToolUse, UserPromptSubmit, Stop, SessionStart, SessionEnd, PreCompact, Notification"
    )]
    UnknownEvent { file: String, name: String },
    #[error("{file}: hooks.{event}: {why}")]
    Shape {
        file: String,
        event: String,
        why: String,
    },
    /// The hook's process could not be started or waited for.
    #[error("hook could not {what}: {why}")]
    Process { what: &'static str, why: String },
    /// The hook ran past its time limit and was killed.
    #[error("hook timed out after {0} and was killed")]
    TimedOut(String),
}

/// The `hooks` object of one settings file.
pub fn parse(hooks: &Value, source: &str) -> Result<Vec<Hook>, HookError> {
    let Some(events) = hooks.as_object() else {
        return Err(HookError::Shape {
            file: source.into(),
            event: String::new(),
            why: "`hooks` must be an object of event names".into(),
        });
    };
    let mut out = Vec::new();
    for (name, groups) in events {
        let event = HookEvent::parse(name).ok_or_else(|| HookError::UnknownEvent {
            file: source.into(),
            name: name.clone(),
        })?;
        let shape = |why: &str| HookError::Shape {
            file: source.into(),
            event: name.clone(),
            why: why.into(),
        };
        let groups = groups
            .as_array()
            .ok_or_else(|| shape("must be a list of {\"matcher\", \"hooks\"} entries"))?;
        for group in groups {
            out.extend(parse_group(event, group, source)?);
        }
    }
    Ok(out)
}

/// One `{"matcher", "hooks"}` entry of `event`; `Err` says what is wrong with it.
fn parse_group(event: HookEvent, group: &Value, source: &str) -> Result<Vec<Hook>, HookError> {
    let shape = |why: String| HookError::Shape {
        file: source.into(),
        event: event.as_str().into(),
        why,
    };
    let mut out = Vec::new();
    let matcher = group
        .get("matcher")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .trim()
        .to_string();
    let matcher_re = match matcher.as_str() {
        "" | "*" => None,
        m => Some(
            regex::Regex::new(&format!("^(?:{m})$"))
                .map_err(|e| shape(format!("matcher {m:?} is not a regex: {e}")))?,
        ),
    };
    let commands = group
        .get("hooks")
        .and_then(Value::as_array)
        .ok_or_else(|| shape("each entry needs a `hooks` list".into()))?;
    for hook in commands {
        let kind = hook
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("command");
        if kind != "command" {
            return Err(shape(format!(
                "hook type {kind:?} is not supported: use \"command\""
            )));
        }
        let command = hook
            .get("command")
            .and_then(Value::as_str)
            .filter(|c| !c.trim().is_empty())
            .ok_or_else(|| shape("a hook needs a `command`".into()))?;
        let timeout = hook
            .get("timeout")
            .and_then(Value::as_f64)
            .filter(|t| *t > 0.0 && t.is_finite())
            .map(Duration::from_secs_f64)
            .unwrap_or(DEFAULT_TIMEOUT);
        let env = hook
            .get("env")
            .and_then(Value::as_array)
            .map(|names| {
                names
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        out.push(Hook {
            event,
            matcher: matcher.clone(),
            matcher_re: matcher_re.clone(),
            command: command.to_string(),
            timeout,
            env,
            source: source.into(),
        });
    }
    Ok(out)
}

/// Claude Code's name for a chatcli tool, so `"matcher": "Bash"` works.
fn claude_name(tool: &str) -> Option<&'static str> {
    Some(match tool {
        "run_command" => "Bash",
        "read_file" => "Read",
        "write_file" => "Write",
        "patch_file" => "Edit",
        "web_fetch" => "WebFetch",
        "web_search" => "WebSearch",
        "search_files" => "Grep",
        "list_directory" => "LS",
        _ => return None,
    })
}

impl Hook {
    fn applies(&self, event: HookEvent, tool: Option<&str>) -> bool {
        if self.event != event {
            return false;
        }
        let (Some(re), true, Some(tool)) = (&self.matcher_re, event.matches_tools(), tool) else {
            return true;
        };
        re.is_match(tool) || claude_name(tool).is_some_and(|alias| re.is_match(alias))
    }
}

/// What the hooks of one event decided, together.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// A hook blocked (exit 2, `decision: "block"` or `permissionDecision: "deny"`): the reason.
    pub blocked: Option<String>,
    /// `permissionDecision` `allow` or `ask` (PreToolUse), when nothing blocked.
    pub decision: Option<crate::rules::Verdict>,
    /// Context the hooks added, in order.
    pub context: Vec<String>,
    /// One line per hook that ran.
    pub runs: Vec<HookRun>,
}

/// What the point of the loop tells the hooks.
#[derive(Debug, Clone, Default)]
pub struct Input {
    pub tool_name: Option<String>,
    /// Every other field of the event's JSON (`tool_input`, `prompt`, `message`…).
    pub fields: serde_json::Map<String, Value>,
}

impl Input {
    /// The input of a tool event.
    pub fn tool(name: &str, args: &Value) -> Input {
        let mut fields = serde_json::Map::new();
        fields.insert("tool_name".into(), json!(name));
        fields.insert("tool_input".into(), args.clone());
        Input {
            tool_name: Some(name.to_string()),
            fields,
        }
    }

    /// An input with one field.
    pub fn with(key: &str, value: Value) -> Input {
        Input::default().and(key, value)
    }

    /// Adds a field.
    pub fn and(mut self, key: &str, value: Value) -> Input {
        self.fields.insert(key.into(), value);
        self
    }
}

/// How often a hook ran and what it cost in time (`/hooks`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Tally {
    pub runs: u32,
    pub blocks: u32,
    pub failures: u32,
    pub total_ms: u64,
}

/// The session's hooks, with their tallies.
#[derive(Debug, Default)]
pub struct Hooks {
    /// Grows when the user approves a project settings file mid-session.
    hooks: std::sync::RwLock<Vec<Hook>>,
    session_id: String,
    cwd: PathBuf,
    tallies: Mutex<BTreeMap<usize, Tally>>,
}

impl Hooks {
    /// The hooks `hooks` for session `session_id` in `cwd`.
    pub fn new(hooks: Vec<Hook>, session_id: &str, cwd: PathBuf) -> Hooks {
        Hooks {
            hooks: std::sync::RwLock::new(hooks),
            session_id: session_id.into(),
            cwd,
            tallies: Mutex::new(BTreeMap::new()),
        }
    }

    fn list(&self) -> std::sync::RwLockReadGuard<'_, Vec<Hook>> {
        match self.hooks.read() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Adds hooks (a project file the user just approved).
    pub fn add(&self, more: Vec<Hook>) {
        let mut hooks = match self.hooks.write() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        hooks.extend(more);
    }

    /// Whether any hook is set for `event`.
    pub fn any(&self, event: HookEvent) -> bool {
        self.list().iter().any(|h| h.event == event)
    }

    /// Runs the hooks of `event` that apply, one after the other (a block stops the rest).
    pub async fn run(&self, event: HookEvent, input: Input) -> Outcome {
        let mut outcome = Outcome::default();
        // Cloned out of the lock: a hook runs for seconds, and approvals may add hooks meanwhile.
        let applying: Vec<(usize, Hook)> = self
            .list()
            .iter()
            .enumerate()
            .filter(|(_, h)| h.applies(event, input.tool_name.as_deref()))
            .map(|(i, h)| (i, h.clone()))
            .collect();
        if applying.is_empty() {
            return outcome;
        }
        let mut payload = input.fields.clone();
        payload.insert("session_id".into(), json!(self.session_id));
        payload.insert("cwd".into(), json!(self.cwd.display().to_string()));
        payload.insert("hook_event_name".into(), json!(event.as_str()));
        let stdin = Value::Object(payload).to_string();
        for (index, hook) in applying {
            let run = runner::run(&hook, &stdin, &self.cwd).await;
            self.tally(index, &run);
            run.fold_into(event, &mut outcome);
            outcome.runs.push(run);
            if outcome.blocked.is_some() {
                break;
            }
        }
        outcome
    }

    fn tally(&self, index: usize, run: &HookRun) {
        let mut tallies = match self.tallies.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        let tally = tallies.entry(index).or_default();
        tally.runs += 1;
        tally.total_ms += run.duration_ms;
        tally.blocks += u32::from(run.blocked);
        tally.failures += u32::from(run.failed());
    }

    /// `/hooks`: every hook, where it came from, and what it has cost in time.
    pub fn report(&self) -> String {
        let hooks = self.list().clone();
        if hooks.is_empty() {
            return "no hooks: add them to CHATCLI_HOME/settings.json or .chatcli/settings.json \
                    (see docs/guide/hooks.md)"
                .into();
        }
        let tallies = match self.tallies.lock() {
            Ok(guard) => guard.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        };
        let mut lines = vec![format!("{} hook(s):", hooks.len())];
        for (index, hook) in hooks.iter().enumerate() {
            let tally = tallies.get(&index).copied().unwrap_or_default();
            let matcher = match hook.matcher.as_str() {
                "" => String::new(),
                m => format!(" [{m}]"),
            };
            lines.push(format!(
                "  {}{matcher}: {} — {} run(s), {} ms in all, {} blocked, {} failed ({})",
                hook.event.as_str(),
                hook.command,
                tally.runs,
                tally.total_ms,
                tally.blocks,
                tally.failures,
                hook.source
            ));
        }
        lines.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_codes_shape_reads_and_matchers_take_both_names() {
        let hooks = parse(
            &json!({
                "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh", "timeout": 5}]}],
                "PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"command": "fmt.sh"}]}],
                "Stop": [{"hooks": [{"command": "ping.sh", "env": ["PUSH_TOKEN"]}]}]
            }),
            "settings.json",
        )
        .expect("hooks");
        assert_eq!(hooks.len(), 3);
        let pre = hooks
            .iter()
            .find(|h| h.event == HookEvent::PreToolUse)
            .expect("pre");
        assert!(pre.applies(HookEvent::PreToolUse, Some("run_command")));
        assert!(!pre.applies(HookEvent::PreToolUse, Some("read_file")));
        assert_eq!(pre.timeout, Duration::from_secs(5));
        let post = hooks
            .iter()
            .find(|h| h.event == HookEvent::PostToolUse)
            .expect("post");
        assert!(post.applies(HookEvent::PostToolUse, Some("write_file")));
        assert!(post.applies(HookEvent::PostToolUse, Some("patch_file")));
        let stop = hooks
            .iter()
            .find(|h| h.event == HookEvent::Stop)
            .expect("stop");
        assert_eq!(stop.env, ["PUSH_TOKEN"]);
    }

    #[test]
    fn a_wrong_shape_says_where() {
        let err = parse(&json!({"BeforeTool": []}), "s.json").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("s.json: hook event \"BeforeTool\""),
            "{err}"
        );
        let err = parse(
            &json!({"Stop": [{"hooks": [{"type": "prompt", "command": "x"}]}]}),
            "s.json",
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "s.json: hooks.Stop: hook type \"prompt\" is not supported: use \"command\""
        );
    }
}
