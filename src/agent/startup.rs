//! Starting an agent: its parts built from the options (a resumed session's history and bill
//! restored, its log reopened), and what it tells the front end before the first prompt.
//!
//! The one thing a newcomer would get wrong: the parts share state on purpose — the file
//! snapshots are the conversation's and the tools' journal, the memory store is the prompt
//! stack's and the memory tool's — so each is built once here and handed to both.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::sync::mpsc;

use super::context::open_memory;
use super::sink::EventSink;
use super::stack::PromptStack;
use super::thread::Thread;
use super::tools_run::{Approvals, ToolRuntime};
use super::{Agent, AgentOptions, FALLBACK_CONTEXT_WINDOW, accounting, rewind, streaming};
use crate::conversation::Message;
use crate::memory::MemorySettings;
use crate::prompt::{VolatileTracker, ledger};
use crate::protocol::{AgentEvent, ApprovalDecision};
use crate::provider::{Provider, UsageRecord};
use crate::session_log::writer::{LogTarget, LogWriter};
use crate::tools::ToolContext;
use crate::tools::memory_tool::SharedMemory;

/// The memory store and its settings, when memory is on.
type OpenMemory = Option<(SharedMemory, MemorySettings)>;

impl Agent {
    /// The session's agent: every part built from `options`, events going to `front`, approval
    /// answers coming from `answers`.
    pub(super) fn new(
        provider: Arc<dyn Provider>,
        options: AgentOptions,
        front: mpsc::UnboundedSender<crate::protocol::Event>,
        answers: mpsc::UnboundedReceiver<(String, ApprovalDecision)>,
    ) -> Agent {
        let workspace = options
            .workspace
            .canonicalize()
            .unwrap_or_else(|_| options.workspace.clone());
        let log = open_log(&options);
        let (history, book) = resumed_state(&options, provider.model());
        let (memory, digest) = open_memory(options.memory.as_ref(), &options.secrets);
        let snapshots = file_snapshots(&options, &history);
        let stack = prompt_stack(&options, &workspace, memory, digest);
        let tools = tool_runtime(&options, workspace, &stack, &provider, &snapshots, answers);
        Agent {
            stack,
            tools,
            accounts: accounting::Accounts {
                book: Arc::new(std::sync::Mutex::new(book)),
                ledger: ledger::CacheLedger::default(),
                last_input: 0,
                last_usage: Default::default(),
            },
            thread: Thread::new(history, snapshots, options.compaction),
            tip_shown: false,
            warm: super::keepwarm::Warm::new(options.keepwarm),
            plan: Default::default(),
            provider,
            sink: EventSink::new(options.secrets.clone(), log, front),
            mode: options.mode,
            options,
        }
    }

    /// Tells the front end what the session runs on, then every notice about its setup: unknown
    /// prices or window, the sandbox, MCP servers, skills and specialists that did not load.
    pub(super) fn announce_start(&mut self) {
        self.emit(AgentEvent::SessionConfigured {
            session_id: self.options.session_id.clone(),
            provider: self.provider.label(),
            model: self.provider.model().to_string(),
            mode: self.mode,
            context_window: self.context_window(),
            price_estimated: self.options.pricing_rule.estimated(),
        });
        for message in self.pricing_notices() {
            self.emit(AgentEvent::Notice { message });
        }
        if let Some(message) = self.options.compaction.unused_knobs_notice() {
            self.emit(AgentEvent::Notice { message });
        }
        if let Some(message) = self.options.sandbox.notice() {
            self.emit(AgentEvent::Notice { message });
        }
        if self.options.sandbox.policy == crate::sandbox::Policy::WorkspaceWrite
            && let Some(message) = crate::process::protection_notice()
        {
            self.emit(AgentEvent::Notice { message });
        }
        self.ask_project_server();
        self.announce_mcp();
        for message in self.stack.skills.catalog().warnings.clone() {
            self.emit(AgentEvent::Notice { message });
        }
        for message in self.tools.roster.warnings.clone() {
            self.emit(AgentEvent::Notice { message });
        }
        self.announce_setup();
    }

    /// What the price catalog does not know of the model: its price, its window, or both (then
    /// estimated from its family).
    fn pricing_notices(&self) -> Vec<String> {
        let model = self.provider.model().to_string();
        let window_unknown = self.known_context_window().is_none().then(|| {
            format!(
                "context window of {model} unknown: assuming {FALLBACK_CONTEXT_WINDOW} tokens (set context_window in CHATCLI_HOME/pricing.toml)"
            )
        });
        let cost_unknown = self.options.pricing.is_none().then(|| {
            format!("cost unknown for {model}: add its prices to CHATCLI_HOME/pricing.toml")
        });
        let estimated = match &self.options.pricing_rule {
            crate::cost::PriceRule::Family {
                family,
                representative,
            } => Some(format!(
                "{model} is not in the price catalog: priced and sized as {representative}, estimated from family {family} ({} tokens); set its own in CHATCLI_HOME/pricing.toml",
                self.context_window()
            )),
            _ => None,
        };
        [cost_unknown, window_unknown, estimated]
            .into_iter()
            .flatten()
            .collect()
    }
}

/// The session log's writer: a new log, or the resumed one reopened; none without a folder.
fn open_log(options: &AgentOptions) -> Option<LogWriter> {
    match (&options.resume, options.sessions_dir.as_deref()) {
        (None, None) => None,
        (resumed, dir) => Some(LogWriter::spawn(
            LogTarget {
                dir: dir.map_or_else(|| PathBuf::from("."), |d| d.to_path_buf()),
                id: options.session_id.clone(),
                resume: resumed.as_ref().map(|r| r.path.clone()),
            },
            options.secrets.clone(),
        )),
    }
}

/// The history and the bill of a resumed session (empty for a new one).
fn resumed_state(options: &AgentOptions, model: &str) -> (Vec<Message>, accounting::CostBook) {
    let mut book = accounting::CostBook::new(options.budget_usd);
    let Some(resumed) = &options.resume else {
        return (Vec::new(), book);
    };
    for event in &resumed.events {
        let (agent, event) = match event {
            AgentEvent::Scoped { agent, event, .. } => (agent.as_str(), event.as_ref()),
            event => (accounting::MAIN_AGENT, event),
        };
        if let AgentEvent::Usage {
            usage, cost_usd, ..
        } = event
        {
            let record = UsageRecord {
                uncached_input: usage
                    .input_tokens
                    .saturating_sub(usage.cache_read_tokens + usage.cache_creation_tokens),
                cache_read: usage.cache_read_tokens,
                cache_write_5m: usage.cache_creation_tokens,
                cache_write_1h: 0,
                output: usage.output_tokens,
                reasoning: usage.reasoning_tokens,
                estimated: usage.estimated,
                reported_cost: *cost_usd,
                cache_reported: usage.cache_reported,
            };
            book.record_for(agent, model, &record, options.pricing.as_ref());
        }
    }
    let mut history = resumed.history.clone();
    // A log written before cut-off calls were caught may hold arguments that are not JSON.
    streaming::repair_history(&mut history);
    (history, book)
}

/// Where `/rewind` keeps files as they were: the session folder when there is a log, else the
/// session's scratch folder; prompts of a resumed `history` are before this run.
fn file_snapshots(
    options: &AgentOptions,
    history: &[Message],
) -> Arc<std::sync::Mutex<rewind::FileSnapshots>> {
    Arc::new(std::sync::Mutex::new(rewind::FileSnapshots::new(
        Some(options.sessions_dir.as_ref().map_or_else(
            || options.scratch.dir().join("rewind"),
            |d| d.join(&options.session_id).join("files"),
        )),
        rewind::prompt_starts(history).len(),
    )))
}

/// The prompt's blocks for a session in `workspace`: its bootstrap files, attachments, skills
/// and memory.
fn prompt_stack(
    options: &AgentOptions,
    workspace: &Path,
    memory: OpenMemory,
    digest: String,
) -> PromptStack {
    PromptStack {
        bootstrap: crate::prompt::bootstrap::Bootstrap::new(
            crate::project::project_root(workspace),
            options.home.clone(),
            options.bootstrap_max_chars,
        ),
        attachments: options.attachments.clone(),
        skills: crate::skills::SessionSkills::discover(
            options.home.as_deref(),
            workspace,
            options.skills,
        ),
        memory,
        digest,
        prompt_memory: (None, None),
        volatile: VolatileTracker::default(),
        hook_context: Vec::new(),
        images: Vec::new(),
    }
}

/// The tools' part: the context they run in (sharing the stack's memory and skills and the
/// snapshots' journal), the approvals, and the specialists `dispatch` may run.
fn tool_runtime(
    options: &AgentOptions,
    workspace: PathBuf,
    stack: &PromptStack,
    provider: &Arc<dyn Provider>,
    snapshots: &Arc<std::sync::Mutex<rewind::FileSnapshots>>,
    answers: mpsc::UnboundedReceiver<(String, ApprovalDecision)>,
) -> ToolRuntime {
    let roster = Arc::new(if options.agents.parallel {
        crate::agents::Roster::discover(
            options.home.as_deref(),
            &crate::project::project_root(&workspace),
            &options.agents,
        )
    } else {
        crate::agents::Roster::default()
    });
    let hyde = stack
        .memory
        .as_ref()
        .filter(|(_, settings)| settings.hyde)
        .map(|_| Arc::clone(provider));
    let ctx = ToolContext {
        scratch: options
            .scratch
            .clone()
            .with_secrets(options.secrets.clone()),
        web: options.web.clone(),
        memory: stack.memory.as_ref().map(|(shared, _)| Arc::clone(shared)),
        hyde,
        skills: Arc::clone(stack.skills.catalog()),
        sandbox: options.sandbox.clone(),
        journal: Some(Arc::new(rewind::Journal(Arc::clone(snapshots)))),
        images: crate::tools::read_image::ToolImages::new(
            super::images::vision_refusal(provider.as_ref(), options.local_vision),
            crate::provider::images::rule_for(provider.name()),
        ),
        workspace: workspace.clone(),
    };
    let gate = super::gate::Gate {
        hooks: Arc::new(crate::hooks::Hooks::new(
            options.setup.hooks.clone(),
            &options.session_id,
            workspace.clone(),
        )),
        rules: Arc::new(std::sync::RwLock::new(options.setup.rules.clone())),
        project_root: crate::project::project_root(&workspace),
        workspace,
        home: options.home.clone(),
    };
    ToolRuntime {
        ctx,
        approvals: Arc::new(tokio::sync::Mutex::new(Approvals {
            policy: options.approval,
            permission: Default::default(),
            always: Default::default(),
            answers,
        })),
        roster,
        specialist: None,
        mcp_tools: None,
        mcp_asked: Vec::new(),
        gate,
    }
}
