//! The typed protocol between the UI and the agent task.
//!
//! `Op` travels from the user (TUI or headless runner) to the agent; `AgentEvent` travels back.
//! Both are serde enums tagged by `type` in snake_case: the same `AgentEvent` values are drawn by
//! the TUI, printed one per line by `chatcli exec --json`, and appended to the session log, so a
//! field renamed here is a breaking change for scripts. The UI never reaches into the agent and
//! the agent never draws: everything either side needs to know crosses this boundary.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The marker a tip notice starts with (the reference system prints its routing tip after
/// `ℹ`); the chat pane draws it in place of a notice's usual dot.
pub const TIP_MARKER: &str = "ℹ ";

/// A slash command the agent offers: an MCP server's prompt, or a command file (`file`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpPromptCommand {
    /// `SERVER:PROMPT` (or the command file's name), typed after the `/`.
    pub name: String,
    /// Its arguments, as help shows them.
    pub args: String,
    pub about: String,
    /// A command file (`.chatcli/commands/NAME.md`): sent as a prompt, which the agent expands.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub file: bool,
}

/// How a prompt is handled: a plain chat request, or the tool loop with a given tool set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// One request, no tools.
    Chat,
    /// The tool loop with every registered tool; may be rerouted to chat.
    #[default]
    Agent,
    /// The tool loop with the coder tools and the coder prompt; never rerouted.
    Coder,
    /// The tool loop, forced: never rerouted.
    Run,
    /// Coder's prompt and tools, but nothing writes or runs: the model reads, searches and
    /// plans; a write or command call is refused whatever the permission mode.
    Plan,
}

impl Mode {
    /// Every mode: Shift+Tab cycles through all but `run`.
    pub const ALL: [Mode; 5] = [Mode::Chat, Mode::Agent, Mode::Coder, Mode::Plan, Mode::Run];

    /// The mode's name as the user types it.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Chat => "chat",
            Mode::Agent => "agent",
            Mode::Coder => "coder",
            Mode::Run => "run",
            Mode::Plan => "plan",
        }
    }

    /// The next mode of the Shift+Tab cycle chat → agent → coder → plan → chat (`run` rejoins
    /// at chat).
    pub fn cycle(self) -> Mode {
        match self {
            Mode::Chat => Mode::Agent,
            Mode::Agent => Mode::Coder,
            Mode::Coder => Mode::Plan,
            Mode::Plan | Mode::Run => Mode::Chat,
        }
    }

    /// The mode whose cached prefix (system blocks and tools) a request in this mode sends:
    /// plan mode sends coder's byte for byte, so switching between them writes no cache; its
    /// rule rides in the volatile context.
    pub fn prefix(self) -> Mode {
        match self {
            Mode::Plan => Mode::Coder,
            mode => mode,
        }
    }

    /// Whether this mode runs the tool loop.
    pub fn uses_tools(self) -> bool {
        !matches!(self, Mode::Chat)
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A mode name that is not one of `chat`, `agent`, `coder`, `run`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown mode \"{0}\" (expected one of: chat, agent, coder, plan, run)")]
pub struct UnknownMode(pub String);

impl FromStr for Mode {
    type Err = UnknownMode;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "chat" => Ok(Mode::Chat),
            "agent" => Ok(Mode::Agent),
            "coder" => Ok(Mode::Coder),
            "run" => Ok(Mode::Run),
            "plan" => Ok(Mode::Plan),
            _ => Err(UnknownMode(s.to_string())),
        }
    }
}

/// Where one step of the model's plan (`update_plan`) is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    Pending,
    InProgress,
    Completed,
}

/// One step of the model's plan, as `update_plan` gave it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanStep {
    pub step: String,
    pub status: StepStatus,
}

/// The user's answer to a tool call that asked for approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalDecision {
    /// Run this call once.
    AllowOnce,
    /// Run this call, and every later call of the same tool in this session, without asking.
    AllowAlways,
    /// Run it, and save an `allow` rule for calls like it in the project's settings file.
    AllowAlwaysProject,
    /// Run it, and save an `allow` rule for calls like it in the user's settings file.
    AllowAlwaysUser,
    /// Do not run it; the model is told the user denied it.
    Deny,
}

/// What tools may do without asking (`/permissions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Permission {
    /// Writes and commands ask first.
    #[default]
    Ask,
    /// Writes and patches inside the workspace run without asking; commands still ask.
    AutoEdit,
    /// Write and execute tools are refused without asking.
    ReadOnly,
}

impl Permission {
    /// The name as the user types it.
    pub fn as_str(self) -> &'static str {
        match self {
            Permission::Ask => "ask",
            Permission::AutoEdit => "auto-edit",
            Permission::ReadOnly => "read-only",
        }
    }
}

impl fmt::Display for Permission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A permission name that is not one of `ask`, `auto-edit`, `read-only`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown permission mode \"{0}\" (expected one of: ask, auto-edit, read-only)")]
pub struct UnknownPermission(pub String);

impl FromStr for Permission {
    type Err = UnknownPermission;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "ask" => Ok(Permission::Ask),
            "auto-edit" | "auto_edit" | "autoedit" => Ok(Permission::AutoEdit),
            "read-only" | "read_only" | "readonly" => Ok(Permission::ReadOnly),
            _ => Err(UnknownPermission(s.trim().to_string())),
        }
    }
}

/// Ops a front end may have waiting for the agent before it is told the agent is not keeping
/// up: far more than a person types between two turns of the agent's loop.
pub const OPS_CAPACITY: usize = 256;

/// The number a front end's submission gets; every event the agent emits while handling it
/// carries the same number, so a front end can tell which of its requests an event answers.
pub type SubmissionId = u64;

/// Events the agent emits of its own accord (the session's start, before any op) carry this id.
pub const SESSION_EVENT: SubmissionId = 0;

/// An op as it travels to the agent: numbered by the sender, from 1.
#[derive(Debug, Clone, PartialEq)]
pub struct Submission {
    pub id: SubmissionId,
    pub op: Op,
}

/// An event as it travels to the front end: `id` is the submission it answers
/// ([`SESSION_EVENT`] for the session's own). The session log and `exec --json` keep `msg` alone.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub id: SubmissionId,
    pub msg: AgentEvent,
}

/// The front end's end of the ops channel: bounded, so a front end that floods the agent (or
/// a stuck agent) is an error it sees, never memory that grows without end. Clones share one
/// counter, so ids stay unique whoever sends.
#[derive(Debug, Clone)]
pub struct OpSender {
    tx: tokio::sync::mpsc::Sender<Submission>,
    next: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

/// Why an op was not made from a command or not delivered to the agent.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum OpError {
    /// The words after a slash command do not parse; the message is its usage line.
    #[error("{0}")]
    Usage(&'static str),
    /// `OPS_CAPACITY` ops are already waiting.
    #[error("the agent is not keeping up: {OPS_CAPACITY} requests are already waiting")]
    Full,
    /// The agent task has ended.
    #[error("the agent task has ended")]
    Closed,
}

impl OpSender {
    /// Hands `op` to the agent without waiting; the id its events will carry.
    pub fn send(&self, op: Op) -> Result<SubmissionId, OpError> {
        use std::sync::atomic::Ordering;
        use tokio::sync::mpsc::error::TrySendError;
        let permit = self.tx.try_reserve().map_err(|e| match e {
            TrySendError::Full(()) => OpError::Full,
            TrySendError::Closed(()) => OpError::Closed,
        })?;
        // Numbered only once the op is sure to be delivered: ids have no gaps.
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        permit.send(Submission { id, op });
        Ok(id)
    }
}

/// A new ops channel: the front end's sender and the agent's receiver.
pub fn op_channel() -> (OpSender, tokio::sync::mpsc::Receiver<Submission>) {
    let (tx, rx) = tokio::sync::mpsc::channel(OPS_CAPACITY);
    let next = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(SESSION_EVENT + 1));
    (OpSender { tx, next }, rx)
}

/// From the user to the agent task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Op {
    /// Run a prompt to completion in the given mode.
    Submit { text: String, mode: Mode },
    /// Answer a pending approval request.
    Approve {
        id: String,
        decision: ApprovalDecision,
    },
    /// Cancel the running request and any running tool at once.
    Interrupt,
    /// Make `mode` the default for prompts that do not name one.
    SetMode { mode: Mode },
    /// Ask for a `cache_report` of the last request (what `/cache` shows).
    CacheReport,
    /// Replace older turns by a summary the model writes (`/compact`).
    Compact,
    /// Say how memory is set up (`/config memory`), as a notice.
    MemoryStatus,
    /// Ask for a `cost_report` (what `/cost` shows).
    CostReport,
    /// Set (or with `None` remove) the session budget in USD (`/budget`).
    SetBudget { usd: Option<f64> },
    /// Manage attached context and list the bootstrap files (`/context`); answered by a notice.
    Context { action: ContextAction },
    /// What tools may do without asking from now on (`/permissions`).
    SetPermission { permission: Permission },
    /// List, show, pin or unpin skills (`/skill`); answered by a notice.
    Skill { action: SkillAction },
    /// Return the conversation to before the `prompt`-th prompt of the session (from 0), and
    /// restore the files `write_file`/`patch_file` changed since (`/rewind`).
    Rewind { prompt: usize },
    /// List the MCP servers (`/mcp`), or approve a project server and start it
    /// (`/mcp approve NAME`); answered by a notice.
    Mcp { approve: Option<String> },
    /// Run an MCP server's prompt (`/SERVER:PROMPT ARGS`) as a prompt in `mode`.
    McpPrompt {
        server: String,
        prompt: String,
        args: String,
        mode: Mode,
    },
    /// List the hooks and what they have cost in time (`/hooks`); answered by a notice.
    Hooks,
    /// List the permission rules with the file each came from (`/permissions rules`); answered
    /// by a notice.
    Rules,
    /// Show what this session changed in the workspace (`/diff`), as a notice.
    Diff,
    /// Attach the image at `path` (pasted or dragged; the user chose it, so it may lie outside
    /// the workspace) to the next prompt; a notice says it was attached or why not.
    AttachImage { path: String },
    /// Attach the clipboard's image (`/paste`, Ctrl+V; read with wl-paste or xclip) to the next
    /// prompt; a notice says it was attached or why not.
    PasteImage,
    /// Finish: the agent task ends after emitting the session cost.
    Shutdown,
}

/// What `/context` asks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum ContextAction {
    /// Attach files, folders and globs (relative to the working directory).
    Add { paths: Vec<String> },
    /// List the bootstrap files and the attachments with their tokens.
    List,
    /// Remove one path (a file or a folder's files), or `all`.
    Drop { path: String },
    /// Re-read every attached file.
    Refresh,
}

impl ContextAction {
    /// What `/context` takes.
    pub const USAGE: &str = "usage: /context add PATH… | list | drop PATH|all | refresh";

    /// Parses the words after `/context` (none means `list`); `Err` is the usage line.
    pub fn parse(args: &str) -> Result<ContextAction, OpError> {
        let mut words = args.split_whitespace();
        let rest = |words: std::str::SplitWhitespace| words.map(str::to_string).collect::<Vec<_>>();
        match words.next() {
            None | Some("list") | Some("ls") => Ok(ContextAction::List),
            Some("refresh") => Ok(ContextAction::Refresh),
            Some("add") => {
                let paths = rest(words);
                if paths.is_empty() {
                    Err(OpError::Usage(Self::USAGE))
                } else {
                    Ok(ContextAction::Add { paths })
                }
            }
            Some("drop") | Some("rm") => match rest(words).as_slice() {
                [path] => Ok(ContextAction::Drop { path: path.clone() }),
                _ => Err(OpError::Usage(Self::USAGE)),
            },
            Some(_) => Err(OpError::Usage(Self::USAGE)),
        }
    }
}

/// What `/skill` asks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum SkillAction {
    /// Name, scope, folder and tokens of every skill.
    List,
    /// One skill's front matter and body.
    Show { name: String },
    /// Put a skill's body in the cached prefix, for this workspace.
    Pin { name: String },
    /// Take it out again.
    Unpin { name: String },
}

impl SkillAction {
    /// What `/skill` takes.
    pub const USAGE: &str = "usage: /skill list | show NAME | pin NAME | unpin NAME";

    /// Parses the words after `/skill` (none means `list`); `Err` is the usage line.
    pub fn parse(args: &str) -> Result<SkillAction, OpError> {
        let words: Vec<&str> = args.split_whitespace().collect();
        match words.as_slice() {
            [] | ["list"] | ["ls"] => Ok(SkillAction::List),
            ["show", name] => Ok(SkillAction::Show {
                name: name.to_string(),
            }),
            ["pin", name] => Ok(SkillAction::Pin {
                name: name.to_string(),
            }),
            ["unpin", name] => Ok(SkillAction::Unpin {
                name: name.to_string(),
            }),
            _ => Err(OpError::Usage(Self::USAGE)),
        }
    }
}

/// One model's share of the session.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ModelCost {
    pub model: String,
    pub requests: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_creation_tokens: u64,
    pub cost_usd: Option<f64>,
}

/// One agent's share of the session (`main`, or a specialist by name).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct AgentCost {
    pub agent: String,
    pub requests: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: Option<f64>,
}

/// How one block of the last request was billed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockReport {
    pub name: String,
    pub tokens: u64,
    /// `read`, `written` or `uncached`.
    pub state: String,
}

/// Token usage of one request, as the `usage` event carries it.
///
/// `input_tokens` is ALL input of the request (uncached + cache read + cache creation), whatever
/// the provider's own convention; the parts are given beside it. A provider with no prompt cache
/// at all (Ollama) has `cache_reported: false`, and its cache counts are `null` in JSON rather
/// than a misleading 0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UsageFigures {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_creation_tokens: u64,
    pub reasoning_tokens: u64,
    pub estimated: bool,
    pub cache_reported: bool,
}

impl Default for UsageFigures {
    fn default() -> Self {
        UsageFigures {
            input_tokens: 0,
            output_tokens: 0,
            cache_read_tokens: 0,
            cache_creation_tokens: 0,
            reasoning_tokens: 0,
            estimated: false,
            cache_reported: true,
        }
    }
}

#[derive(Serialize, Deserialize)]
struct UsageWire {
    input_tokens: u64,
    output_tokens: u64,
    cache_read_tokens: Option<u64>,
    cache_creation_tokens: Option<u64>,
    #[serde(default)]
    reasoning_tokens: u64,
    #[serde(default)]
    estimated: bool,
}

impl Serialize for UsageFigures {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let cache = |n: u64| self.cache_reported.then_some(n);
        UsageWire {
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            cache_read_tokens: cache(self.cache_read_tokens),
            cache_creation_tokens: cache(self.cache_creation_tokens),
            reasoning_tokens: self.reasoning_tokens,
            estimated: self.estimated,
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for UsageFigures {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let wire = UsageWire::deserialize(deserializer)?;
        Ok(UsageFigures {
            input_tokens: wire.input_tokens,
            output_tokens: wire.output_tokens,
            cache_read_tokens: wire.cache_read_tokens.unwrap_or(0),
            cache_creation_tokens: wire.cache_creation_tokens.unwrap_or(0),
            reasoning_tokens: wire.reasoning_tokens,
            estimated: wire.estimated,
            cache_reported: wire.cache_read_tokens.is_some(),
        })
    }
}

/// From the agent task to whoever listens (TUI, `exec --json`, session log).
///
/// An event of a dispatched specialist is `Scoped`: on the wire it is the inner event's object
/// with `"agent"` and `"task"` added (`{"type":"tool_call","agent":"file","task":0,…}`), and an
/// object carrying both reads back as `Scoped` (see the `Serialize`/`Deserialize` impls below).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    /// The session is ready: what the status bar names.
    SessionConfigured {
        session_id: String,
        provider: String,
        model: String,
        mode: Mode,
        context_window: u64,
        /// The model's price (and window) is a guess from its family: the meter marks its cost.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        price_estimated: bool,
    },
    /// The default mode changed.
    ModeChanged { mode: Mode },
    /// A prompt was accepted and starts running in `mode`.
    Prompt { text: String, mode: Mode },
    /// The conversation went back to before the `prompt`-th prompt (from 0): what came after
    /// it is gone for the model, and a resumed screen drops it too.
    Rewound { prompt: usize },
    /// A request is about to be sent to the model (one per request; `turn` counts from 1 per prompt).
    TurnStarted { turn: u32 },
    /// A piece of the assistant's visible answer.
    TextDelta { text: String },
    /// A piece of the model's reasoning, when the provider streams it.
    ReasoningDelta { text: String },
    /// The model began a tool call: its name is known, its arguments are still streaming. A
    /// `tool_call` with the same id follows once they are whole, or a failed `tool_result` if
    /// the response ended first.
    ToolCallStarted { id: String, name: String },
    /// Bytes of a streaming call's arguments received so far (a few times a second at most).
    ToolCallProgress { id: String, bytes: u64 },
    /// The model asked for a tool call; it is about to run (or to ask for approval).
    ToolCall {
        id: String,
        name: String,
        args: serde_json::Value,
    },
    /// A tool call asks the user before it runs; `preview` is what it would change (a unified
    /// diff against the file on disk, or the new file line-numbered), when the tool can say.
    ApprovalRequest {
        id: String,
        name: String,
        args: serde_json::Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        preview: Option<String>,
    },
    /// A tool call finished; `chars` is the size of the result sent to the model.
    ToolResult {
        id: String,
        name: String,
        ok: bool,
        chars: u64,
        saved_path: Option<String>,
        duration_ms: u64,
        /// First line of the error, when `ok` is false.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// A command's exit code (`run_command`); non-zero is shown as a failure.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
        /// The full result the model received (or the error text).
        #[serde(default)]
        output: String,
        /// What a write or patch changed, as a unified diff.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        diff: Option<String>,
    },
    /// The model's plan changed (`update_plan`): every step with its status, and why it
    /// changed when the model said.
    PlanUpdated {
        plan: Vec<PlanStep>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        explanation: Option<String>,
    },
    /// Usage of one request; `cost_usd` is `None` when the model has no known price.
    Usage {
        turn: u32,
        #[serde(flatten)]
        usage: UsageFigures,
        cost_usd: Option<f64>,
    },
    /// A request read less from the prompt cache than the previous one had cached; `block` names
    /// the first block whose bytes changed.
    CacheMiss {
        block: String,
        rewritten_tokens: u64,
        expected_read: u64,
        actual_read: u64,
    },
    /// The prompt cache's entries live `lifetime_secs` from now: the last request wrote or read
    /// them, or (`kept_warm`) a keep-warm ping read them while the user was away.
    CacheWarm { lifetime_secs: u64, kept_warm: bool },
    /// The fixed part of a request in `mode` (o200k tokens) and how the last request's blocks
    /// were billed.
    CacheReport {
        mode: Mode,
        tools_tokens: u64,
        system_tokens: u64,
        /// Tokens of the MCP catalog block within `system_tokens` (0 without deferred MCP tools).
        #[serde(default)]
        mcp_catalog_tokens: u64,
        blocks: Vec<BlockReport>,
    },
    /// The session's bill, for `/cost`: totals, what the cache saved, and each model's share.
    CostReport {
        provider: String,
        model: String,
        requests: u32,
        uncached_input_tokens: u64,
        input_tokens: u64,
        output_tokens: u64,
        cache_read_tokens: u64,
        cache_creation_tokens: u64,
        cost_usd: Option<f64>,
        saved_usd: f64,
        budget_usd: Option<f64>,
        by_model: Vec<ModelCost>,
        /// Each agent's share: `main` and every specialist that made a request.
        #[serde(default)]
        by_agent: Vec<AgentCost>,
        /// Images sent this session (attached, pasted, read by `read_file`), and their tokens
        /// estimated by the provider's formula.
        #[serde(default)]
        images: u64,
        #[serde(default)]
        image_tokens: u64,
        /// Each cache expiry of the session, as the explainer worded it ("cache expired after
        /// 12 min idle: 31k tokens written again, $0.12").
        #[serde(default)]
        expiries: Vec<String>,
    },
    /// The router decided how an `agent` prompt runs.
    Route { decision: Mode, reason: String },
    /// The loop stopped because tool batches repeated without progress; `kind` is `repeat`
    /// (the same batch `repeats` turns in a row) or `cycle` (two batches alternating `repeats` times).
    EarlyExit {
        fingerprint: String,
        repeats: u32,
        kind: String,
    },
    /// A request failed before any output and is sent again after `wait_ms`.
    Retrying {
        attempt: u32,
        max: u32,
        wait_ms: u64,
        reason: String,
    },
    /// Something went wrong; the session goes on.
    Error { message: String },
    /// A short notice for the user (not an error); one that starts with `TIP_MARKER` is a tip.
    Notice { message: String },
    /// The MCP servers' prompts, offered as `/SERVER:PROMPT` commands (sent once they started).
    McpPrompts { commands: Vec<McpPromptCommand> },
    /// The prompt is finished; `text` is the final answer.
    TurnFinished { text: String, stop_reason: String },
    /// Session totals; the last event `exec` prints. `pricing` names the rule that priced the
    /// session's model (`priced: catalog`, `free: local llama.cpp server`, `pricing.toml`…);
    /// `price_estimated` is true when that price is a guess from the model's family.
    Cost {
        input_tokens: u64,
        output_tokens: u64,
        cache_read_tokens: u64,
        cache_creation_tokens: u64,
        cost_usd: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pricing: Option<String>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        price_estimated: bool,
    },
    /// The command files found (`.chatcli/commands/*.md`…), for the palette, F1 and completion.
    CommandFiles { commands: Vec<McpPromptCommand> },
    /// A hook from a settings file ran: which event, its command, how it ended and what it
    /// said (`note`: a block's reason or a failure). The tool panel lists it; `/hooks` tallies.
    HookRan {
        event: String,
        command: String,
        exit_code: Option<i32>,
        duration_ms: u64,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        blocked: bool,
        #[serde(default, skip_serializing_if = "String::is_empty")]
        note: String,
    },
    /// A dispatched specialist finished its task (sent `Scoped`): how it ended, how long it
    /// took, its usage, and where its full transcript was saved.
    AgentFinished {
        stop_reason: String,
        duration_ms: u64,
        requests: u32,
        input_tokens: u64,
        output_tokens: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        transcript: Option<String>,
    },
    /// An event of the specialist `agent` running task `task` (from 0) of a `dispatch` call.
    #[serde(skip)]
    Scoped {
        agent: String,
        task: u32,
        event: Box<AgentEvent>,
    },
}

impl AgentEvent {
    /// The event wrapped as one of specialist `agent`'s, task `task` (never wrapped twice).
    pub fn scoped(self, agent: &str, task: u32) -> AgentEvent {
        match self {
            AgentEvent::Scoped { .. } => self,
            event => AgentEvent::Scoped {
                agent: agent.to_string(),
                task,
                event: Box::new(event),
            },
        }
    }
}

/// The flat wire form of a scoped event: the inner object plus `agent` and `task`.
#[derive(Serialize)]
struct ScopedWire<'a> {
    agent: &'a str,
    task: u32,
    #[serde(flatten)]
    event: Unscoped<'a>,
}

/// An event serialized by the derived code alone (a scoped event is never nested, and going
/// through the `Serialize` impl again would make the serializer type recurse without end).
struct Unscoped<'a>(&'a AgentEvent);

impl Serialize for Unscoped<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        AgentEvent::serialize(self.0, serializer)
    }
}

impl Serialize for AgentEvent {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            AgentEvent::Scoped { agent, task, event } => ScopedWire {
                agent,
                task: *task,
                event: Unscoped(event),
            }
            .serialize(serializer),
            event => AgentEvent::serialize(event, serializer),
        }
    }
}

impl<'de> Deserialize<'de> for AgentEvent {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut value = serde_json::Value::deserialize(deserializer)?;
        let scope = match value.as_object_mut() {
            Some(object) if object.contains_key("agent") && object.contains_key("task") => {
                let agent = object.remove("agent");
                let task = object.remove("task");
                match (agent, task.as_ref().and_then(serde_json::Value::as_u64)) {
                    (Some(serde_json::Value::String(agent)), Some(task)) => {
                        Some((agent, u32::try_from(task).map_err(D::Error::custom)?))
                    }
                    _ => {
                        return Err(D::Error::custom(
                            "`agent` must be a string and `task` a number",
                        ));
                    }
                }
            }
            _ => None,
        };
        let event = AgentEvent::deserialize(value).map_err(D::Error::custom)?;
        Ok(match scope {
            Some((agent, task)) => event.scoped(&agent, task),
            None => event,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ops_channel_is_bounded_and_says_so() {
        let (tx, rx) = op_channel();
        for n in 0..OPS_CAPACITY {
            assert_eq!(tx.send(Op::Interrupt), Ok(n as u64 + 1));
        }
        assert_eq!(tx.send(Op::Interrupt), Err(OpError::Full));
        drop(rx);
        assert_eq!(tx.send(Op::Interrupt), Err(OpError::Closed));
    }
    use pretty_assertions::assert_eq;

    #[test]
    fn context_commands_parse() {
        assert_eq!(ContextAction::parse(""), Ok(ContextAction::List));
        assert_eq!(
            ContextAction::parse(" add src *.md "),
            Ok(ContextAction::Add {
                paths: vec!["src".into(), "*.md".into()]
            })
        );
        assert_eq!(
            ContextAction::parse("drop all"),
            Ok(ContextAction::Drop { path: "all".into() })
        );
        assert_eq!(ContextAction::parse("refresh"), Ok(ContextAction::Refresh));
        for bad in ["add", "drop", "drop a b", "wipe"] {
            assert_eq!(
                ContextAction::parse(bad).map_err(|e| e.to_string()),
                Err(ContextAction::USAGE.to_string())
            );
        }
        let op = Op::Context {
            action: ContextAction::Drop { path: "a".into() },
        };
        assert_eq!(
            serde_json::to_string(&op).ok().as_deref(),
            Some(r#"{"type":"context","action":{"action":"drop","path":"a"}}"#)
        );
    }

    #[test]
    fn events_serialize_with_the_documented_field_names() {
        let usage = AgentEvent::Usage {
            turn: 1,
            usage: UsageFigures {
                input_tokens: 10,
                output_tokens: 2,
                cache_read_tokens: 6,
                cache_creation_tokens: 4,
                reasoning_tokens: 0,
                estimated: false,
                cache_reported: true,
            },
            cost_usd: Some(0.5),
        };
        assert_eq!(
            serde_json::to_string(&usage).unwrap_or_default(),
            r#"{"type":"usage","turn":1,"input_tokens":10,"output_tokens":2,"cache_read_tokens":6,"cache_creation_tokens":4,"reasoning_tokens":0,"estimated":false,"cost_usd":0.5}"#
        );
        let call = AgentEvent::ToolCallStarted {
            id: "call_1".into(),
            name: "read_file".into(),
        };
        assert_eq!(
            serde_json::to_string(&call).unwrap_or_default(),
            r#"{"type":"tool_call_started","id":"call_1","name":"read_file"}"#
        );
        let started = AgentEvent::TurnStarted { turn: 1 };
        assert_eq!(
            serde_json::to_string(&started).unwrap_or_default(),
            r#"{"type":"turn_started","turn":1}"#
        );
    }

    #[test]
    fn a_specialist_event_is_the_inner_object_with_agent_and_task() {
        let event = AgentEvent::ToolCall {
            id: "c1".into(),
            name: "read_file".into(),
            args: serde_json::json!({"file": "a"}),
        }
        .scoped("file", 1);
        let json = serde_json::to_string(&event).unwrap_or_default();
        assert_eq!(
            json,
            r#"{"agent":"file","task":1,"type":"tool_call","id":"c1","name":"read_file","args":{"file":"a"}}"#
        );
        let back: AgentEvent = serde_json::from_str(&json).expect("round trip");
        assert_eq!(back, event);
        let plain: AgentEvent =
            serde_json::from_str(r#"{"type":"turn_started","turn":2}"#).expect("plain");
        assert_eq!(plain, AgentEvent::TurnStarted { turn: 2 });
    }

    #[test]
    fn a_provider_without_a_cache_reports_null_cache_counts() {
        let usage = AgentEvent::Usage {
            turn: 1,
            usage: UsageFigures {
                input_tokens: 169,
                output_tokens: 15,
                cache_reported: false,
                ..UsageFigures::default()
            },
            cost_usd: Some(0.0),
        };
        let json = serde_json::to_string(&usage).unwrap_or_default();
        assert!(
            json.contains(r#""cache_read_tokens":null,"cache_creation_tokens":null"#),
            "{json}"
        );
        let back: AgentEvent = serde_json::from_str(&json).expect("round trip");
        assert_eq!(back, usage);
    }

    #[test]
    fn mode_cycle_and_parse() {
        assert_eq!(Mode::Chat.cycle(), Mode::Agent);
        assert_eq!(Mode::Agent.cycle(), Mode::Coder);
        assert_eq!(Mode::Coder.cycle(), Mode::Plan);
        assert_eq!(Mode::Plan.cycle(), Mode::Chat);
        assert_eq!(Mode::Plan.prefix(), Mode::Coder);
        assert_eq!("CODER".parse::<Mode>(), Ok(Mode::Coder));
        let err = "fast".parse::<Mode>().err().map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some("unknown mode \"fast\" (expected one of: chat, agent, coder, plan, run)")
        );
    }
}
