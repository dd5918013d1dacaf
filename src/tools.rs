//! Tools the model can call: their definitions, which modes offer them, and how they run.
//!
//! A tool is a plain value implementing `Tool`; the `ToolRegistry` picks the set a mode offers
//! and keeps it sorted by name, because the tool array is part of the cached prompt prefix and
//! must be byte-identical from request to request. Descriptions are one line each: every token
//! here is paid on every request. Tools never panic on the model's arguments: bad arguments are a
//! `ToolError` whose text goes back to the model as the result.

// Tools read pages, files, command output and the model's arguments: no index that could panic
// on them (#34).
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

pub mod cut;
pub mod git;
pub mod list_directory;
pub mod memory_tool;
pub mod patch_file;
pub mod preview;
pub mod read_file;
pub mod read_image;
pub mod run_command;
pub mod scratch;
pub mod search_files;
pub mod skill;
pub mod update_plan;
pub mod web_fetch;
pub mod web_search;
pub mod workspace;
pub mod write_file;

use std::path::PathBuf;
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;

use crate::conversation::ToolSpec;
use crate::protocol::Mode;
pub use scratch::Scratch;
pub use web_search::SearchBackend;

/// What a tool run produced: the text for the model, a file it saved, and the usage of any
/// model request it made (HyDE), which the agent accounts like any other.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolOutput {
    pub text: String,
    pub saved_path: Option<PathBuf>,
    pub usage: Option<crate::provider::UsageRecord>,
    /// A command's exit code, for the transcript (`✗ … exit 3`).
    pub exit_code: Option<i32>,
    /// An image for the model (`read_file` of a picture), attached after the result.
    pub image: Option<crate::conversation::ContentBlock>,
}

impl ToolOutput {
    /// Output that is only text.
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            text: text.into(),
            ..ToolOutput::default()
        }
    }
}

/// Why a tool call failed; the message is what the model reads.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ToolError {
    /// The arguments are missing something or have the wrong shape.
    #[error("invalid arguments: {0}")]
    InvalidArgs(String),
    /// A path leaves the workspace.
    #[error("{0}")]
    Confinement(String),
    /// The operation failed.
    #[error("{0}")]
    Failed(String),
    /// `patch_file`'s search text is not in the file.
    #[error("the search text was not found (it must match exactly, whitespace included)")]
    SearchNotFound,
    /// `patch_file`'s search text is in the file more than once.
    #[error("the search text occurs {0} times; include more surrounding lines so it occurs once")]
    SearchRepeated(usize),
}

/// Settings of the web tools.
#[derive(Debug, Clone, PartialEq)]
pub struct WebSettings {
    /// Extracted text larger than this many bytes is saved to a file (`CHATCLI_WEBFETCH_AUTOSAVE_BYTES`).
    pub autosave_bytes: usize,
    /// Where `web_search` asks, in order (DuckDuckGo last, by default alone).
    pub search: Vec<SearchBackend>,
    /// `max_length` when the call gives none, in characters.
    pub default_max_length: usize,
}

impl Default for WebSettings {
    fn default() -> Self {
        WebSettings {
            autosave_bytes: web_fetch::DEFAULT_AUTOSAVE_BYTES,
            search: vec![SearchBackend::duckduckgo()],
            default_max_length: web_fetch::DEFAULT_MAX_LENGTH,
        }
    }
}

/// What every tool run may need from the session.
#[derive(Clone)]
pub struct ToolContext {
    /// The workspace root, canonical.
    pub workspace: PathBuf,
    /// Where large outputs are saved.
    pub scratch: Scratch,
    pub web: WebSettings,
    /// The long-term memory store, when memory is on.
    pub memory: Option<memory_tool::SharedMemory>,
    /// The provider HyDE asks for hypothetical answers (`CHATCLI_MEMORY_HYDE=1`).
    pub hyde: Option<std::sync::Arc<dyn crate::provider::Provider>>,
    /// The session's skills (the `skill` tool; `read_file` may read inside their folders).
    pub skills: std::sync::Arc<crate::skills::Catalog>,
    /// The OS sandbox `run_command` and the git tools run under.
    pub sandbox: crate::sandbox::SandboxSettings,
    /// Where the write tools book what they change, for `/rewind`.
    pub journal: Option<std::sync::Arc<dyn WriteJournal>>,
    /// Whether the model sees images, and the images calls read (`read_file` of a picture).
    pub images: read_image::ToolImages,
}

/// Runs `write` of `target` off the agent task, booked in the session's journal: before it runs,
/// and after with what the file then holds (read back through the file door).
pub async fn journaled<T: Send + 'static>(
    ctx: &ToolContext,
    target: &workspace::Rooted,
    shown: &str,
    write: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    let journal = ctx.journal.clone();
    let target = target.clone();
    let shown = shown.to_string();
    tokio::task::spawn_blocking(move || {
        if let Some(journal) = &journal {
            journal.before(&target);
        }
        let result = write();
        if let Some(journal) = &journal {
            let now = result.as_ref().ok().and_then(|_| {
                crate::files::read_beneath(&target.root, &target.rel, JOURNAL_READ_BYTES)
                    .ok()
                    .map(|r| r.bytes)
            });
            journal.after(&target, now.as_deref());
        }
        result
    })
    .await
    .map_err(|e| ToolError::Failed(format!("cannot write {shown}: {e}")))?
}

/// Bytes of a written file read back for the journal (`/rewind` keeps nothing larger).
const JOURNAL_READ_BYTES: u64 = 8 * 1024 * 1024 + 1;

/// What the write tools tell about each write, once it is approved and about to run.
pub trait WriteJournal: Send + Sync {
    /// `target` is about to be written: keep it as it is now.
    fn before(&self, target: &workspace::Rooted);
    /// The write ended: `written` is what the file holds now, `None` when nothing was written.
    fn after(&self, target: &workspace::Rooted, written: Option<&[u8]>);
}

impl ToolContext {
    /// A context with no memory, default web settings and no sandbox.
    pub fn new(workspace: PathBuf, scratch: Scratch, web: WebSettings) -> Self {
        ToolContext {
            workspace,
            scratch,
            web,
            memory: None,
            hyde: None,
            skills: Default::default(),
            sandbox: crate::sandbox::SandboxSettings::off(),
            journal: None,
            images: Default::default(),
        }
    }

    /// Where a sandboxed command may write: the workspace, the scratch folder, the temp folder.
    pub fn writable_roots(&self) -> Vec<PathBuf> {
        self.sandbox
            .writable_roots(&self.workspace, self.scratch.dir())
    }

    /// The sandbox a command of this session runs under: the Landlock ruleset and the protected
    /// paths bound read-only; an error (the command must not run) when the policy is `required`
    /// and the kernel cannot enforce it.
    pub fn confinement(&self) -> Result<crate::process::Confinement, ToolError> {
        if self.sandbox.enforced() && self.sandbox.policy != crate::sandbox::Policy::ReadOnly {
            // Landlock allows a folder that exists: make the scratch folder before the rule.
            let _ = crate::private_fs::create_private_dirs(self.scratch.dir());
        }
        let writable = self.writable_roots();
        let ruleset = self
            .sandbox
            .prepare(&writable)
            .map_err(|e| ToolError::Failed(e.to_string()))?;
        // Read-only binds only matter where something is writable; off means off.
        let protected = match self.sandbox.policy {
            // A protected folder the user named in CHATCLI_SANDBOX_WRITABLE is theirs to open.
            crate::sandbox::Policy::WorkspaceWrite => {
                crate::process::protected_paths(&writable, self.sandbox.home.as_deref())
                    .into_iter()
                    .filter(|p| {
                        !self
                            .sandbox
                            .extra_writable
                            .iter()
                            .any(|w| w == p || w.canonicalize().is_ok_and(|c| c == *p))
                    })
                    .collect()
            }
            _ => Vec::new(),
        };
        Ok(crate::process::Confinement { ruleset, protected })
    }

    /// A child of this session through the process door, under its sandbox.
    pub fn door(&self, program: &str) -> Result<crate::process::Door, ToolError> {
        Ok(crate::process::Door::new(program).confine(self.confinement()?))
    }
}

impl std::fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolContext")
            .field("workspace", &self.workspace)
            .field("scratch", &self.scratch)
            .field("memory", &self.memory.is_some())
            .field("sandbox", &self.sandbox.policy)
            .finish()
    }
}

/// A tool the model can call.
pub trait Tool: Send + Sync {
    /// The definition sent to the model.
    fn spec(&self) -> ToolSpec;
    /// Whether it only reads: read-only tools never ask and may run in parallel.
    fn read_only(&self) -> bool;
    /// Whether this call only reads (a tool that forwards to others decides per call).
    fn read_only_call(&self, _args: &serde_json::Value) -> bool {
        self.read_only()
    }
    /// What "allow always" covers for this call; `None` is the tool's name (MCP tools share one
    /// key per server).
    fn approval_key(&self, _args: &serde_json::Value) -> Option<String> {
        None
    }
    /// What the call would change, shown in the approval dialog and kept with the result (a
    /// diff for writes); `None` when the arguments say it all.
    fn preview(&self, _args: &serde_json::Value, _ctx: &ToolContext) -> Option<String> {
        None
    }
    /// Runs the call.
    fn run<'a>(
        &'a self,
        args: &'a serde_json::Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>>;
    /// How long this call may take before the tool layer stops it (`run_command` grants the
    /// timeout the call asks for, plus its own grace).
    fn time_limit(&self, _args: &serde_json::Value) -> Duration {
        DEFAULT_TIME_LIMIT
    }
}

/// How long a tool call may run unless the tool says otherwise.
pub const DEFAULT_TIME_LIMIT: Duration = Duration::from_secs(300);

/// A tool whose every call runs under its `time_limit`: a tool that hangs (a slow disk, a peer
/// that never answers) ends as an error the model can read instead of holding the turn.
struct Timed(Box<dyn Tool>);

impl Tool for Timed {
    fn spec(&self) -> ToolSpec {
        self.0.spec()
    }

    fn read_only(&self) -> bool {
        self.0.read_only()
    }

    fn time_limit(&self, args: &serde_json::Value) -> Duration {
        self.0.time_limit(args)
    }

    // Every method the trait has must be forwarded: a default here silently hides the tool's own.
    fn preview(&self, args: &serde_json::Value, ctx: &ToolContext) -> Option<String> {
        self.0.preview(args, ctx)
    }

    fn run<'a>(
        &'a self,
        args: &'a serde_json::Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        run_timed(self.0.as_ref(), args, ctx, self.0.time_limit(args))
    }
}

/// Runs `tool` and stops it after `limit` with an error that names the tool and the limit.
pub fn run_timed<'a>(
    tool: &'a dyn Tool,
    args: &'a serde_json::Value,
    ctx: &'a ToolContext,
    limit: Duration,
) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
    async move {
        match tokio::time::timeout(limit, tool.run(args, ctx)).await {
            Ok(out) => out,
            Err(_) => Err(ToolError::Failed(format!(
                "{} did not finish within {} and was stopped",
                tool.spec().name,
                crate::provider::wait_text(limit.as_millis() as u64)
            ))),
        }
    }
    .boxed()
}

/// The tools one mode offers, sorted by name.
pub struct ToolRegistry {
    tools: Vec<(String, Box<dyn Tool>)>,
}

impl ToolRegistry {
    /// The tools a mode offers: none in chat mode; every tool in agent, coder and run (coder
    /// differs by its prompt, not its tools: it needs the web tools for docs and the memory tool
    /// for the index its prompt carries).
    pub fn for_mode(mode: Mode) -> ToolRegistry {
        let mut tools: Vec<Box<dyn Tool>> = match mode {
            Mode::Chat => Vec::new(),
            // Plan mode offers coder's tools byte for byte (its writes are refused when called):
            // switching between them keeps the cached prefix.
            Mode::Agent | Mode::Coder | Mode::Plan | Mode::Run => vec![
                Box::new(read_file::ReadFile),
                Box::new(write_file::WriteFile),
                Box::new(patch_file::PatchFile),
                Box::new(list_directory::ListDirectory),
                Box::new(search_files::SearchFiles),
                Box::new(run_command::RunCommand),
                Box::new(git::GitStatus),
                Box::new(git::GitDiff),
                Box::new(git::GitLog),
                Box::new(web_fetch::WebFetch),
                Box::new(web_search::WebSearch),
                Box::new(memory_tool::MemoryTool),
                Box::new(update_plan::UpdatePlan),
            ],
        };
        tools.sort_by_key(|t| t.spec().name);
        ToolRegistry {
            tools: tools
                .into_iter()
                .map(|t| (t.spec().name, Box::new(Timed(t)) as Box<dyn Tool>))
                .collect(),
        }
    }

    /// The registry with `extra` appended after the built-in tools, in the order given (MCP
    /// tools, sorted by their own rule), so built-ins keep their place in the cached prefix.
    pub fn with_extra(mut self, extra: Vec<Box<dyn Tool>>) -> Self {
        self.tools
            .extend(extra.into_iter().map(|t| (t.spec().name, t)));
        self
    }

    /// The registry without the named tool (memory when it is off).
    pub fn without(mut self, name: &str) -> Self {
        self.tools.retain(|(n, _)| n != name);
        self
    }

    /// The registry with the `skill` tool added in its sorted place (only when skills are
    /// installed: with none, the tool array stays as it was).
    pub fn with_skill_tool(mut self) -> Self {
        let tool: Box<dyn Tool> = Box::new(skill::SkillTool);
        self.tools
            .push((tool.spec().name, Box::new(Timed(tool)) as Box<dyn Tool>));
        self.tools.sort_by(|a, b| a.0.cmp(&b.0));
        self
    }

    /// The registry with `tool` added in its sorted place (the orchestrator's `dispatch`).
    pub fn with_tool(mut self, tool: Box<dyn Tool>) -> Self {
        self.tools.push((tool.spec().name, tool));
        self.tools.sort_by(|a, b| a.0.cmp(&b.0));
        self
    }

    /// The registry with only the named tools (a specialist's set), in their sorted order.
    pub fn only(mut self, names: &[String]) -> Self {
        self.tools.retain(|(n, _)| names.iter().any(|k| k == n));
        self
    }

    /// The definitions, in the stable order they are sent.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools.iter().map(|(_, t)| t.spec()).collect()
    }

    /// The tool with this name.
    pub fn get(&self, name: &str) -> Option<&dyn Tool> {
        self.tools
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t.as_ref())
    }
}

/// A string argument, or a clear error naming it.
pub fn required_str<'a>(args: &'a serde_json::Value, name: &str) -> Result<&'a str, ToolError> {
    args.get(name)
        .and_then(|v| v.as_str())
        .ok_or_else(|| ToolError::InvalidArgs(format!("`{name}` (a string) is required")))
}

/// An optional string argument.
pub fn optional_str<'a>(args: &'a serde_json::Value, name: &str) -> Option<&'a str> {
    args.get(name)
        .and_then(|v| v.as_str())
        .filter(|s| !s.is_empty())
}

/// An optional boolean argument; `"true"` as a string is accepted too.
pub fn optional_bool(args: &serde_json::Value, name: &str) -> bool {
    match args.get(name) {
        Some(serde_json::Value::Bool(b)) => *b,
        Some(serde_json::Value::String(s)) => s.eq_ignore_ascii_case("true"),
        _ => false,
    }
}

/// An optional non-negative integer argument; numbers sent as strings are accepted.
pub fn optional_usize(args: &serde_json::Value, name: &str) -> Result<Option<usize>, ToolError> {
    match args.get(name) {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
            .map(|n| Some(n as usize))
            .ok_or_else(|| {
                ToolError::InvalidArgs(format!("`{name}` must be a non-negative integer (got {v})"))
            }),
    }
}

/// The first `max` characters of `text` (never cutting a UTF-8 sequence), and whether it was cut.
pub fn take_chars(text: &str, max: usize) -> (&str, bool) {
    match text.char_indices().nth(max) {
        Some((byte, _)) => (text.get(..byte).unwrap_or(text), true),
        None => (text, false),
    }
}

/// The last `max` characters of `text`.
pub fn last_chars(text: &str, max: usize) -> &str {
    let total = text.chars().count();
    if total <= max {
        return text;
    }
    let skip = total - max;
    let byte = text
        .char_indices()
        .nth(skip)
        .map(|(b, _)| b)
        .unwrap_or(text.len());
    text.get(byte..).unwrap_or_default()
}

/// Keeps the head and the tail of a long output with a marker between them (character counts).
pub fn cap_head_tail(text: &str, head: usize, tail: usize) -> String {
    let total = text.chars().count();
    if total <= head + tail {
        return text.to_string();
    }
    let (first, _) = take_chars(text, head);
    let last = last_chars(text, tail);
    let omitted = total - head - tail;
    format!("{first}\n[... {omitted} characters omitted ...]\n{last}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn character_cuts_never_split_a_sequence() {
        assert_eq!(take_chars("héllo", 2), ("hé", true));
        assert_eq!(take_chars("hé", 5), ("hé", false));
        assert_eq!(last_chars("日本語テキスト", 3), "キスト");
        let capped = cap_head_tail(&"é".repeat(100), 10, 5);
        assert!(capped.starts_with(&"é".repeat(10)));
        assert!(capped.contains("[... 85 characters omitted ...]"));
        assert!(capped.ends_with(&"é".repeat(5)));
    }

    #[test]
    fn tools_are_sorted_and_modes_offer_their_sets() {
        let names: Vec<String> = ToolRegistry::for_mode(Mode::Agent)
            .specs()
            .into_iter()
            .map(|s| s.name)
            .collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        assert!(names.contains(&"web_fetch".to_string()));
        let coder: Vec<String> = ToolRegistry::for_mode(Mode::Coder)
            .specs()
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert!(
            coder.contains(&"web_fetch".to_string()) && coder.contains(&"web_search".to_string())
        );
        assert!(
            coder.contains(&"memory".to_string()),
            "coder reads the memory index too"
        );
        assert!(coder.contains(&"patch_file".to_string()));
        assert!(coder.contains(&"update_plan".to_string()));
        assert!(names.contains(&"update_plan".to_string()));
        let plan = serde_json::to_string(&ToolRegistry::for_mode(Mode::Plan).specs()).ok();
        let coder = serde_json::to_string(&ToolRegistry::for_mode(Mode::Coder).specs()).ok();
        assert_eq!(
            plan, coder,
            "plan mode sends coder's tools array byte for byte"
        );
        assert!(ToolRegistry::for_mode(Mode::Chat).specs().is_empty());
    }

    struct Hangs;

    impl Tool for Hangs {
        fn spec(&self) -> ToolSpec {
            ToolSpec {
                name: "hangs".into(),
                description: String::new(),
                parameters: serde_json::json!({}),
            }
        }
        fn read_only(&self) -> bool {
            true
        }
        fn run<'a>(
            &'a self,
            _: &'a serde_json::Value,
            _: &'a ToolContext,
        ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
            futures_util::future::pending().boxed()
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_tool_that_hangs_is_stopped_at_its_time_limit() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ctx = ToolContext::new(
            dir.path().to_path_buf(),
            Scratch::private(dir.path().join("s")),
            WebSettings::default(),
        );
        let timed = Timed(Box::new(Hangs));
        let err = timed
            .run(&serde_json::json!({}), &ctx)
            .await
            .expect_err("stopped");
        assert_eq!(
            err.to_string(),
            "hangs did not finish within 300 s and was stopped"
        );
        let run = ToolRegistry::for_mode(Mode::Coder);
        let limit = run
            .get("run_command")
            .expect("offered")
            .time_limit(&serde_json::json!({"cmd": "x", "timeout": 1000}));
        assert!(limit > Duration::from_secs(1000), "{limit:?}");
    }
}
