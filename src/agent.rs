//! The agent task: owns the conversation and runs each prompt to completion behind channels.
//!
//! Mental model: `spawn` starts one tokio task that reads `Op`s and emits `AgentEvent`s; nothing
//! else touches the history. A prompt runs as a loop of requests (assemble → stream → execute
//! tools → append results) while the task keeps listening for `Interrupt` and approvals. The
//! invariant a newcomer breaks first: after any stop (answer, interrupt, error, turn limit) the
//! history must still be a valid request, i.e. every tool call has a result. `turn` counts
//! requests within one prompt, from 1.

pub mod accounting;
pub mod compaction;
pub mod early_exit;
pub mod retry;
pub mod routing;
pub mod summary;
pub mod tools_run;

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;

use futures_util::StreamExt;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::conversation::{ContentBlock, Message, ModelRequest, Role, push_user_text};
use crate::cost::Pricing;
use crate::memory::{MemoryMode, MemorySettings, Store, digest as memory_digest};
use crate::prompt::{self, VolatileTracker, ledger};
use crate::protocol::{AgentEvent, Mode, Op};
use crate::provider::{Provider, ProviderError, ProviderEvent, StopReason, UsageRecord};
use crate::session_log::{HistoryRecord, SessionLog};
use crate::tools::memory_tool::{MemoryState, SharedMemory};
use crate::tools::{Scratch, ToolContext, ToolRegistry, WebSettings};
use early_exit::{Fingerprint, Stagnation, StagnationGuard};
use routing::RouteMode;
pub use tools_run::ApprovalPolicy;
use tools_run::Approvals;

/// Output tokens a request may produce.
const MAX_OUTPUT_TOKENS: u32 = 8192;

/// How the agent task is set up.
#[derive(Debug, Clone)]
pub struct AgentOptions {
    pub session_id: String,
    pub mode: Mode,
    pub max_turns: u32,
    pub workspace: PathBuf,
    pub pricing: Option<Pricing>,
    /// Where the session log goes (`CHATCLI_HOME/sessions`); `None` keeps no log.
    pub sessions_dir: Option<PathBuf>,
    /// Stop loops that repeat themselves, after this many identical turns (or cycles).
    pub early_exit: bool,
    pub early_exit_turns: u32,
    /// Chat/agent routing of `agent` prompts.
    pub smart_route: RouteMode,
    /// How calls that write or execute are approved.
    pub approval: ApprovalPolicy,
    /// The wall clock (tests move it to check that time never touches the cached prefix).
    pub clock: Clock,
    /// Where large tool outputs are saved.
    pub scratch: Scratch,
    /// Settings of the web tools.
    pub web: WebSettings,
    /// Microcompact of old tool results.
    pub compaction: compaction::Settings,
    /// Long-term memory; `None` keeps none.
    pub memory: Option<MemorySettings>,
    /// Stop starting requests once the session costs this much (`CHATCLI_SESSION_BUDGET_USD`).
    pub budget_usd: Option<f64>,
    /// Behave like a naive client (benchmark only): volatile blocks first in the system prompt.
    pub naive: bool,
    /// Times a failed request is sent again (`CHATCLI_MAX_RETRIES`).
    pub max_retries: u32,
    /// Secret values to mask in the session log and in errors.
    pub secrets: crate::secrets::Secrets,
    /// A session read back from its log, to go on with.
    pub resume: Option<crate::session_log::Resumed>,
}

/// A source of the current time.
#[derive(Clone)]
pub struct Clock(pub Arc<dyn Fn() -> std::time::SystemTime + Send + Sync>);

impl Default for Clock {
    fn default() -> Self {
        Clock(Arc::new(std::time::SystemTime::now))
    }
}

impl std::fmt::Debug for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Clock")
    }
}

impl AgentOptions {
    /// Options with every guard at its default, for a session in `workspace`.
    pub fn new(session_id: String, mode: Mode, workspace: PathBuf) -> Self {
        AgentOptions {
            mode,
            max_turns: crate::config::DEFAULT_MAX_TURNS,
            workspace,
            pricing: None,
            sessions_dir: None,
            early_exit: true,
            early_exit_turns: crate::config::DEFAULT_EARLY_EXIT_TURNS,
            smart_route: RouteMode::default(),
            approval: ApprovalPolicy::Ask,
            clock: Clock::default(),
            scratch: Scratch::private(
                std::env::temp_dir()
                    .join(format!("chatcli-{session_id}"))
                    .join("scratch"),
            ),
            web: WebSettings::default(),
            compaction: compaction::Settings::default(),
            memory: None,
            budget_usd: None,
            naive: false,
            max_retries: retry::DEFAULT_MAX_RETRIES,
            secrets: Default::default(),
            resume: None,
            session_id,
        }
    }
}

/// The two ends of a running agent task.
pub struct AgentHandle {
    pub ops: mpsc::UnboundedSender<Op>,
    pub events: mpsc::UnboundedReceiver<AgentEvent>,
    pub join: JoinHandle<()>,
}

/// Opens the memory store for a session and freezes its digest; memory failures only warn.
fn open_memory(
    settings: Option<&MemorySettings>,
) -> (Option<(SharedMemory, MemorySettings)>, String) {
    let Some(settings) = settings.filter(|s| s.mode != MemoryMode::Off) else {
        return (None, String::new());
    };
    match Store::open(&settings.dir) {
        Ok(store) => {
            let digest = memory_digest::index_digest(&store);
            let state =
                MemoryState::new(store).with_embedder(settings.embedder.clone(), &settings.dir);
            let shared = Arc::new(std::sync::Mutex::new(state));
            (Some((shared, settings.clone())), digest)
        }
        Err(e) => {
            tracing::warn!(error = %e, "memory is unavailable this session");
            (None, String::new())
        }
    }
}

/// What the session log already holds of the history.
struct LoggedHistory {
    len: usize,
    last: Option<u64>,
}

fn message_hash(message: &Message) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    serde_json::to_vec(message)
        .unwrap_or_default()
        .hash(&mut hasher);
    hasher.finish()
}

/// The history and the bill of a resumed session (empty for a new one).
fn resumed_state(options: &AgentOptions, model: &str) -> (Vec<Message>, accounting::CostBook) {
    let mut book = accounting::CostBook::new(options.budget_usd);
    let Some(resumed) = &options.resume else {
        return (Vec::new(), book);
    };
    for event in &resumed.events {
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
            book.record(model, &record, options.pricing.as_ref());
        }
    }
    (resumed.history.clone(), book)
}

/// Starts the agent task.
pub fn spawn(provider: Arc<dyn Provider>, options: AgentOptions) -> AgentHandle {
    let (ops_tx, ops_rx) = mpsc::unbounded_channel();
    let (events_tx, events_rx) = mpsc::unbounded_channel();
    let (answers_tx, answers_rx) = mpsc::unbounded_channel();
    let workspace = options
        .workspace
        .canonicalize()
        .unwrap_or_else(|_| options.workspace.clone());
    let log = match (&options.resume, options.sessions_dir.as_deref()) {
        (Some(resumed), _) => SessionLog::reopen(&resumed.path, options.secrets.clone())
            .inspect_err(|e| tracing::warn!(error = %e, "cannot reopen the session log"))
            .ok(),
        (None, Some(dir)) => SessionLog::create(dir, &options.session_id, options.secrets.clone())
            .inspect_err(|e| tracing::warn!(error = %e, "cannot create the session log"))
            .ok(),
        (None, None) => None,
    };
    let (history, book) = resumed_state(&options, provider.model());
    let logged = LoggedHistory {
        len: history.len(),
        last: history.last().map(message_hash),
    };
    let (memory, digest) = open_memory(options.memory.as_ref());
    let hyde = memory
        .as_ref()
        .filter(|(_, settings)| settings.hyde)
        .map(|_| Arc::clone(&provider));
    let approvals = Approvals {
        policy: options.approval,
        always: Default::default(),
        answers: answers_rx,
    };
    let agent = Agent {
        book,
        logged,
        provider,
        compactor: compaction::Compactor::new(options.compaction),
        last_input: 0,
        volatile: VolatileTracker::default(),
        ledger: ledger::CacheLedger::default(),
        log,
        approvals,
        mode: options.mode,
        tool_ctx: ToolContext {
            workspace,
            scratch: options.scratch.clone(),
            web: options.web.clone(),
            memory: memory.as_ref().map(|(shared, _)| Arc::clone(shared)),
            hyde,
        },
        digest,
        memory,
        prompt_memory: (None, None),
        options,
        history,

        events: events_tx,
    };
    let join = tokio::spawn(agent.run(ops_rx, answers_tx));
    AgentHandle {
        ops: ops_tx,
        events: events_rx,
        join,
    }
}

struct Agent {
    provider: Arc<dyn Provider>,
    /// How much of the history the session log has, and the hash of its last message.
    logged: LoggedHistory,
    /// The memory store and its settings, when memory is on.
    memory: Option<(SharedMemory, MemorySettings)>,
    /// The memory digest, frozen for the session so the cached prefix never changes.
    digest: String,
    /// This prompt's memory blocks: (full retrieval, auto-recall).
    prompt_memory: (Option<String>, Option<String>),
    compactor: compaction::Compactor,
    /// All input of the last request, for the context share.
    last_input: u64,
    volatile: VolatileTracker,
    ledger: ledger::CacheLedger,
    log: Option<SessionLog>,
    approvals: Approvals,
    options: AgentOptions,
    mode: Mode,
    tool_ctx: ToolContext,
    history: Vec<Message>,
    book: accounting::CostBook,
    events: mpsc::UnboundedSender<AgentEvent>,
}

/// What one streamed response left behind.
#[derive(Default)]
struct Response {
    text: String,
    reasoning: Vec<ContentBlock>,
    tool_calls: Vec<(String, String, serde_json::Value)>,
    stop: Option<StopReason>,
    interrupted: bool,
}

/// How a prompt ended, as `turn_finished` names it.
enum Ending {
    Answer(StopReason),
    Interrupted,
    MaxTurns,
    EarlyExit,
    Budget,
    Failed,
}

impl Ending {
    fn as_str(&self) -> &str {
        match self {
            Ending::Answer(reason) => reason.as_str(),
            Ending::Interrupted => "interrupted",
            Ending::MaxTurns => "max_turns",
            Ending::EarlyExit => "early_exit",
            Ending::Budget => "budget",
            Ending::Failed => "error",
        }
    }
}

impl Agent {
    fn emit(&mut self, event: AgentEvent) {
        // Text that may quote a provider's error goes out with known secrets masked.
        let secrets = &self.options.secrets;
        let event = match event {
            AgentEvent::Error { message } => AgentEvent::Error {
                message: secrets.mask(&message),
            },
            AgentEvent::Notice { message } => AgentEvent::Notice {
                message: secrets.mask(&message),
            },
            AgentEvent::Retrying {
                attempt,
                max,
                wait_ms,
                reason,
            } => AgentEvent::Retrying {
                attempt,
                max,
                wait_ms,
                reason: secrets.mask(&reason),
            },
            other => other,
        };
        if let Some(log) = self.log.as_mut() {
            log.append(&event);
        }
        // The receiver gone means the UI is shutting down; there is nobody left to tell.
        let _ = self.events.send(event);
    }

    async fn run(
        mut self,
        mut ops: mpsc::UnboundedReceiver<Op>,
        answers: mpsc::UnboundedSender<(String, crate::protocol::ApprovalDecision)>,
    ) {
        self.emit(AgentEvent::SessionConfigured {
            session_id: self.options.session_id.clone(),
            provider: self.provider.label(),
            model: self.provider.model().to_string(),
            mode: self.mode,
            context_window: self
                .options
                .pricing
                .as_ref()
                .and_then(|p| p.context_window)
                .unwrap_or(0),
        });
        if self.options.pricing.is_none() {
            let model = self.provider.model().to_string();
            self.emit(AgentEvent::Notice {
                message: format!(
                    "cost unknown for {model}: add its prices to CHATCLI_HOME/pricing.toml"
                ),
            });
        }
        let mut queued: VecDeque<Op> = VecDeque::new();
        loop {
            let op = match queued.pop_front() {
                Some(op) => op,
                None => match ops.recv().await {
                    Some(op) => op,
                    None => break,
                },
            };
            match op {
                Op::Submit { text, mode } => {
                    if self
                        .run_prompt_listening(text, mode, &mut ops, &answers, &mut queued)
                        .await
                    {
                        break;
                    }
                }
                Op::SetMode { mode } => {
                    self.mode = mode;
                    self.emit(AgentEvent::ModeChanged { mode });
                }
                Op::Interrupt => {}
                Op::Approve { id, .. } => {
                    tracing::debug!(%id, "approval for a call that is not waiting");
                }
                Op::CacheReport => {
                    let report = self.cache_report();
                    self.emit(report);
                }
                Op::CostReport => {
                    let report = self.cost_report();
                    self.emit(report);
                }
                Op::SetBudget { usd } => {
                    self.book.set_budget(usd);
                    let message = match usd {
                        Some(b) => format!("session budget set to ${b:.2}"),
                        None => "session budget removed".into(),
                    };
                    self.emit(AgentEvent::Notice { message });
                }
                Op::MemoryStatus => {
                    let message = self.memory_status();
                    self.emit(AgentEvent::Notice { message });
                }
                Op::Compact => {
                    let cancel = CancellationToken::new();
                    if let Err(message) = self.summarize(&cancel).await {
                        self.emit(AgentEvent::Notice { message });
                    }
                }
                Op::Shutdown => break,
            }
        }
    }

    /// Runs one prompt while still taking ops; returns true when the session should end.
    async fn run_prompt_listening(
        &mut self,
        text: String,
        mode: Mode,
        ops: &mut mpsc::UnboundedReceiver<Op>,
        answers: &mpsc::UnboundedSender<(String, crate::protocol::ApprovalDecision)>,
        queued: &mut VecDeque<Op>,
    ) -> bool {
        let cancel = CancellationToken::new();
        let mut shutdown = false;
        let prompt = self.run_prompt(text, mode, cancel.clone());
        tokio::pin!(prompt);
        loop {
            tokio::select! {
                _ = &mut prompt => break,
                op = ops.recv(), if !shutdown => match op {
                    Some(Op::Interrupt) => cancel.cancel(),
                    Some(Op::Approve { id, decision }) => {
                        let _ = answers.send((id, decision));
                    }
                    Some(Op::Shutdown) | None => {
                        cancel.cancel();
                        shutdown = true;
                    }
                    Some(other) => queued.push_back(other),
                },
            }
        }
        shutdown
    }

    async fn run_prompt(&mut self, text: String, mode: Mode, cancel: CancellationToken) {
        self.emit(AgentEvent::Prompt {
            text: text.clone(),
            mode,
        });
        let mode = self.route(&text, mode);
        let mode = if mode.uses_tools() && !self.provider.supports_tools() {
            let name = self.provider.name().to_string();
            self.emit(AgentEvent::Notice {
                message: format!("{name} runs as chat only: it has no client-side tools, so this prompt is sent without them"),
            });
            Mode::Chat
        } else {
            mode
        };
        self.prompt_memory = self.memory_blocks(&text, mode);
        push_user_text(&mut self.history, text);
        // The prompt is on disk before anything is sent: a crash now loses no question.
        self.sync_history();
        let tools = self.tools_for(mode);
        let mut guard =
            StagnationGuard::new(self.options.early_exit, self.options.early_exit_turns);
        let mut final_text = String::new();
        let mut turn = 0u32;
        let ending = loop {
            if let Some(message) = self.book.over_budget() {
                self.emit(AgentEvent::Notice { message });
                break Ending::Budget;
            }
            turn += 1;
            self.emit(AgentEvent::TurnStarted { turn });
            let mut system =
                prompt::stable_blocks(mode, &self.tool_ctx.workspace, self.memory_index(mode));
            if self.options.naive {
                // The naive client of the benchmark: volatile blocks first, in the system prompt.
                let mut volatile = self.volatile_now(true);
                volatile.append(&mut system);
                system = volatile;
            } else {
                self.attach_volatile();
            }
            self.sync_history();
            let specs = tools.specs();
            let mut messages = self.render_messages();
            if self.over_guard(&system, &specs, &messages) {
                messages = self.guard_context(&system, &specs, &cancel).await;
            }
            let request = ModelRequest {
                model: self.provider.model().to_string(),
                system,
                tools: specs,
                messages,
                max_output_tokens: MAX_OUTPUT_TOKENS,
                session_id: self.options.session_id.clone(),
            };
            let (response, error) = self.stream_with_retries(request, turn, &cancel).await;
            self.append_assistant(&response);
            if let Some(error) = error {
                self.emit(AgentEvent::Error {
                    message: error.to_string(),
                });
                break Ending::Failed;
            }
            if response.interrupted {
                break Ending::Interrupted;
            }
            if response.tool_calls.is_empty() {
                final_text = response.text;
                break Ending::Answer(response.stop.unwrap_or(StopReason::EndTurn));
            }
            let fingerprint =
                Fingerprint::of(response.tool_calls.iter().map(|(_, n, a)| (n.as_str(), a)));
            if let Some(stagnation) = guard.observe(fingerprint) {
                self.stop_repeating(&response.tool_calls, stagnation);
                break Ending::EarlyExit;
            }
            let results = tools_run::run_calls(
                &tools,
                &self.tool_ctx,
                &response.tool_calls,
                &mut self.approvals,
                &cancel,
                &self.events,
            )
            .await;
            let mut content = Vec::with_capacity(results.len());
            for (block, usage) in results {
                if let Some(usage) = usage {
                    self.record_usage(0, usage);
                }
                content.push(block);
            }
            self.history.push(Message {
                role: Role::User,
                content,
            });
            if cancel.is_cancelled() {
                break Ending::Interrupted;
            }
            if turn >= self.options.max_turns {
                self.emit(AgentEvent::Notice {
                    message: format!(
                        "stopped after {turn} requests (CHATCLI_AGENT_MAX_TURNS); send another prompt to go on"
                    ),
                });
                break Ending::MaxTurns;
            }
        };
        self.sync_history();
        self.emit(AgentEvent::TurnFinished {
            text: final_text,
            stop_reason: ending.as_str().to_string(),
        });
        let cost = self.cost_event();
        self.emit(cost);
    }

    /// `/config memory`: the active mode and the store's size.
    fn memory_status(&self) -> String {
        let Some((shared, settings)) = &self.memory else {
            return "memory: off (CHATCLI_MEMORY_MODE=off, or the store could not be opened; see the log)".into();
        };
        let (facts, dir) = match shared.lock() {
            Ok(state) => (
                state.store.facts.len(),
                state.store.dir().display().to_string(),
            ),
            Err(_) => (0, String::new()),
        };
        let bytes = std::fs::metadata(settings.dir.join("facts.jsonl"))
            .map(|m| m.len())
            .unwrap_or(0);
        format!(
            "memory: {} mode · {facts} facts ({} KB) in {dir} · auto-recall {} · HyDE {} · digest {} chars",
            settings.mode.as_str(),
            bytes.div_ceil(1024),
            if settings.autorecall { "on" } else { "off" },
            if settings.hyde { "on" } else { "off" },
            self.digest.chars().count()
        )
    }

    /// The tools a mode offers this session (no `memory` tool when memory is off).
    fn tools_for(&self, mode: Mode) -> ToolRegistry {
        let tools = ToolRegistry::for_mode(mode);
        if self.memory.is_some() {
            tools
        } else {
            tools.without("memory")
        }
    }

    /// The frozen digest, when the mode shows it (index mode, and never in chat mode).
    fn memory_index(&self, mode: Mode) -> Option<&str> {
        match &self.memory {
            Some((_, settings)) if settings.mode == MemoryMode::Index && mode != Mode::Chat => {
                Some(&self.digest)
            }
            _ => None,
        }
    }

    /// This prompt's volatile memory blocks: (full retrieval, auto-recall). Passive: no access
    /// is counted.
    fn memory_blocks(&self, query: &str, mode: Mode) -> (Option<String>, Option<String>) {
        let Some((shared, settings)) = &self.memory else {
            return (None, None);
        };
        let Ok(mut state) = shared.lock() else {
            return (None, None);
        };
        // Chat mode has no memory tool, so index mode behaves as full there.
        let full = settings.mode == MemoryMode::Full
            || (settings.mode == MemoryMode::Index && mode == Mode::Chat);
        if full {
            let hits = state.recall(query, None, 30);
            let facts: Vec<&crate::memory::Fact> =
                hits.iter().map(|i| &state.store.facts[*i]).collect();
            let text = memory_digest::fact_lines(&facts, settings.retrieval_budget);
            return ((!text.is_empty()).then_some(text), None);
        }
        if !settings.autorecall {
            return (None, None);
        }
        let last_answer: String = self
            .history
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant)
            .map(|m| m.text().chars().take(500).collect())
            .unwrap_or_default();
        let hits = state.recall(&format!("{query} {last_answer}"), None, 3);
        let facts: Vec<&crate::memory::Fact> =
            hits.iter().map(|i| &state.store.facts[*i]).collect();
        let budget = memory_digest::AUTORECALL_BUDGET - memory_digest::AUTORECALL_HEADER.len() - 1;
        let lines = memory_digest::fact_lines(&facts, budget);
        let recall =
            (!lines.is_empty()).then(|| format!("{}\n{lines}", memory_digest::AUTORECALL_HEADER));
        (None, recall)
    }

    /// The history as the next request sends it, old tool results compacted.
    fn render_messages(&mut self) -> Vec<Message> {
        let window = self
            .options
            .pricing
            .as_ref()
            .and_then(|p| p.context_window)
            .unwrap_or(0);
        let context_share = if window > 0 {
            self.last_input as f64 / window as f64
        } else {
            0.0
        };
        let economics = self
            .options
            .pricing
            .as_ref()
            .filter(|p| p.input > 0.0)
            .map(|p| compaction::CacheEconomics {
                read: p.cache_read.unwrap_or(p.input) / p.input,
                write: p.cache_write_5m.unwrap_or(p.input) / p.input,
            })
            .unwrap_or_default();
        let pressure = compaction::Pressure {
            context_share,
            economics,
        };
        self.compactor
            .render(&self.history, &self.tool_ctx.scratch, pressure)
    }

    /// Whether a request of these parts would fill more than 85% of the model's window.
    fn over_guard(
        &self,
        system: &[crate::conversation::SystemBlock],
        tools: &[crate::conversation::ToolSpec],
        messages: &[Message],
    ) -> bool {
        let window = self
            .options
            .pricing
            .as_ref()
            .and_then(|p| p.context_window)
            .unwrap_or(0);
        if window == 0 {
            return false;
        }
        let bytes = serde_json::to_vec(system).map(|b| b.len()).unwrap_or(0)
            + serde_json::to_vec(tools).map(|b| b.len()).unwrap_or(0)
            + serde_json::to_vec(messages).map(|b| b.len()).unwrap_or(0);
        crate::provider::demo::estimate_tokens(bytes) as f64 > window as f64 * summary::GUARD_SHARE
    }

    /// The context guard: summary lines for every old result first, then a model summary.
    async fn guard_context(
        &mut self,
        system: &[crate::conversation::SystemBlock],
        tools: &[crate::conversation::ToolSpec],
        cancel: &CancellationToken,
    ) -> Vec<Message> {
        self.compactor.force_summaries();
        let messages = self.render_messages();
        self.emit(AgentEvent::Notice {
            message: "context over 85% of the window: old tool results are now sent as one-line summaries".into(),
        });
        if !self.over_guard(system, tools, &messages) {
            return messages;
        }
        if let Err(message) = self.summarize(cancel).await {
            self.emit(AgentEvent::Notice { message });
        }
        self.render_messages()
    }

    /// Replaces older turns by a summary the model writes; `Err` says why nothing changed.
    async fn summarize(&mut self, cancel: &CancellationToken) -> Result<(), String> {
        let Some(cut) = summary::cut_point(&self.history) else {
            return Err(format!(
                "nothing to compact: the conversation has at most {} messages",
                summary::KEEP_MESSAGES
            ));
        };
        self.emit(AgentEvent::Notice {
            message: format!("compacting: summarising {cut} earlier messages (one extra request)"),
        });
        let mut prefix = self.render_messages()[..cut].to_vec();
        push_user_text(&mut prefix, summary::SUMMARY_REQUEST.to_string());
        let request = ModelRequest {
            model: self.provider.model().to_string(),
            system: prompt::stable_blocks(Mode::Chat, &self.tool_ctx.workspace, None),
            tools: Vec::new(),
            messages: prefix,
            max_output_tokens: 1024,
            session_id: self.options.session_id.clone(),
        };
        let mut stream = self.provider.stream(request);
        let mut text = String::new();
        loop {
            let next = tokio::select! {
                _ = cancel.cancelled() => return Err("compaction cancelled".into()),
                next = stream.next() => next,
            };
            match next {
                None => break,
                Some(Err(e)) => return Err(format!("compaction failed: {e}")),
                Some(Ok(ProviderEvent::TextDelta(t))) => text.push_str(&t),
                Some(Ok(ProviderEvent::Usage(usage))) => self.record_usage(0, usage),
                Some(Ok(ProviderEvent::Stop(_))) => break,
                Some(Ok(_)) => {}
            }
        }
        if text.trim().is_empty() {
            return Err("compaction failed: the model returned an empty summary".into());
        }
        self.history = summary::fold(&self.history, cut, text.trim());
        if let Some(log) = self.log.as_mut() {
            log.append_history(&HistoryRecord::HistoryReset {
                messages: self.history.clone(),
            });
        }
        self.logged = LoggedHistory {
            len: self.history.len(),
            last: self.history.last().map(message_hash),
        };
        // The volatile blocks rode in the folded messages: send them again.
        self.volatile = VolatileTracker::default();
        Ok(())
    }

    /// Writes the history changes since the last sync to the session log: new messages, and the
    /// last logged one again if it changed in place (a merged prompt, an attached context block).
    fn sync_history(&mut self) {
        let Some(log) = self.log.as_mut() else {
            return;
        };
        let from = self.logged.len.saturating_sub(1);
        for (index, message) in self.history.iter().enumerate().skip(from) {
            let unchanged =
                index + 1 == self.logged.len && self.logged.last == Some(message_hash(message));
            if !unchanged {
                log.append_history(&HistoryRecord::History {
                    index,
                    message: message.clone(),
                });
            }
        }
        self.logged = LoggedHistory {
            len: self.history.len(),
            last: self.history.last().map(message_hash),
        };
    }

    /// Appends the volatile blocks that changed since they were last sent to the newest user turn.
    fn attach_volatile(&mut self) {
        let blocks = self.volatile_now(false);
        if let Some(text) = self.volatile.pending(&blocks)
            && let Some(last) = self.history.last_mut().filter(|m| m.role == Role::User)
        {
            last.content.push(ContentBlock::Text { text });
        }
    }

    /// The volatile blocks for the next request; `with_time` adds the time of day to the date (the
    /// naive client does, as the reference system did).
    fn volatile_now(&self, with_time: bool) -> Vec<crate::conversation::SystemBlock> {
        let secs = (self.options.clock.0)()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        let today = if with_time {
            let stamp = crate::session::utc_stamp(secs);
            format!(
                "{} {}:{}:{}",
                prompt::utc_date(secs),
                &stamp[9..11],
                &stamp[11..13],
                &stamp[13..15]
            )
        } else {
            prompt::utc_date(secs)
        };
        let (full, recall) = self.prompt_memory.clone();
        prompt::volatile_blocks(&today, full, recall)
    }

    /// What `/cache` shows: the fixed part of a request in this mode and the last request's blocks.
    fn cache_report(&self) -> AgentEvent {
        let tools = self.tools_for(self.mode).specs();
        let system = prompt::stable_blocks(
            self.mode,
            &self.tool_ctx.workspace,
            self.memory_index(self.mode),
        );
        let tools_tokens = crate::tokens::count(&serde_json::to_string(&tools).unwrap_or_default());
        let system_text: Vec<&str> = system.iter().map(|b| b.text.as_str()).collect();
        AgentEvent::CacheReport {
            mode: self.mode,
            tools_tokens,
            system_tokens: crate::tokens::count(&system_text.join("\n\n")),
            blocks: self.ledger.report(),
        }
    }

    /// The mode a prompt really runs in: `agent` prompts may be routed to chat.
    fn route(&mut self, text: &str, mode: Mode) -> Mode {
        if mode != Mode::Agent || self.options.smart_route == RouteMode::Off {
            return mode;
        }
        let route = routing::classify(text);
        let conversational = route.decision == Mode::Chat;
        let auto = self.options.smart_route == RouteMode::Auto;
        let decision = if conversational && auto {
            Mode::Chat
        } else {
            Mode::Agent
        };
        let reason = match (conversational, auto) {
            (true, true) => format!("conversational: {}", route.reason),
            (true, false) => format!("conversational, hint only: {}", route.reason),
            (false, _) => format!("task: {}", route.reason),
        };
        self.emit(AgentEvent::Route { decision, reason });
        if conversational && !auto {
            self.emit(AgentEvent::Notice {
                message: "tip: this looks like a plain question; /chat answers those in one request without tool schemas (this one runs in the tool loop as asked)".into(),
            });
        }
        decision
    }

    /// Answers a repeated batch with "not executed" results and reports the stop.
    fn stop_repeating(&mut self, calls: &[tools_run::Call], stagnation: Stagnation) {
        let content = calls
            .iter()
            .map(|(id, _, _)| ContentBlock::ToolResult {
                tool_use_id: id.clone(),
                content: "not executed: repeated without progress".into(),
                is_error: true,
            })
            .collect();
        self.history.push(Message {
            role: Role::User,
            content,
        });
        let (fingerprint, repeats, kind) = match stagnation {
            Stagnation::Repeat {
                fingerprint,
                repeats,
            } => (fingerprint, repeats, "repeat"),
            Stagnation::Cycle {
                fingerprint,
                cycles,
            } => (fingerprint, cycles, "cycle"),
        };
        self.emit(AgentEvent::EarlyExit {
            fingerprint: fingerprint.0,
            repeats,
            kind: kind.into(),
        });
    }

    /// Streams a response, sending the request again after a retryable failure that came before
    /// any output (429, 529, 5xx, a dropped connection): exponential backoff with jitter, or the
    /// provider's `Retry-After`, at most `max_retries` times. A failure after output began is not
    /// retried: the user already saw part of an answer.
    async fn stream_with_retries(
        &mut self,
        request: ModelRequest,
        turn: u32,
        cancel: &CancellationToken,
    ) -> (Response, Option<ProviderError>) {
        let mut attempt = 0u32;
        loop {
            let (response, error) = self.stream_response(request.clone(), turn, cancel).await;
            let Some(error) = error else {
                return (response, None);
            };
            let nothing_shown = response.text.is_empty()
                && response.reasoning.is_empty()
                && response.tool_calls.is_empty();
            if !error.is_retryable()
                || !nothing_shown
                || attempt >= self.options.max_retries
                || cancel.is_cancelled()
            {
                return (response, Some(error));
            }
            attempt += 1;
            let wait = retry::delay(attempt, error.retry_after());
            self.emit(AgentEvent::Retrying {
                attempt,
                max: self.options.max_retries,
                wait_ms: wait.as_millis() as u64,
                reason: error.to_string(),
            });
            tokio::select! {
                _ = cancel.cancelled() => return (response, None),
                _ = tokio::time::sleep(wait) => {}
            }
        }
    }

    /// Streams one response, emitting deltas and usage as they arrive.
    async fn stream_response(
        &mut self,
        request: ModelRequest,
        turn: u32,
        cancel: &CancellationToken,
    ) -> (Response, Option<ProviderError>) {
        let blocks = ledger::request_blocks(&request);
        let mut blocks = Some(blocks);
        let mut stream = self.provider.stream(request);
        let mut response = Response::default();
        loop {
            let next = tokio::select! {
                _ = cancel.cancelled() => {
                    // Calls that were never run must not enter the history without results.
                    response.tool_calls.clear();
                    response.interrupted = true;
                    return (response, None);
                }
                next = stream.next() => next,
            };
            let event = match next {
                None if response.stop.is_some() => return (response, None),
                None => {
                    response.tool_calls.clear();
                    let error = ProviderError::Truncated {
                        provider: self.provider.name().to_string(),
                    };
                    return (response, Some(error));
                }
                Some(Err(error)) => {
                    response.tool_calls.clear();
                    return (response, Some(error));
                }
                Some(Ok(event)) => event,
            };
            match event {
                ProviderEvent::TextDelta(text) => {
                    response.text.push_str(&text);
                    self.emit(AgentEvent::TextDelta { text });
                }
                ProviderEvent::ReasoningDelta(text) => {
                    self.emit(AgentEvent::ReasoningDelta { text });
                }
                ProviderEvent::ReasoningBlock { text, signature } => {
                    response
                        .reasoning
                        .push(ContentBlock::Thinking { text, signature });
                }
                ProviderEvent::ToolCallStarted { .. } | ProviderEvent::ToolCallArgs { .. } => {}
                ProviderEvent::ToolCall { id, name, args } => {
                    response.tool_calls.push((id, name, args));
                }
                ProviderEvent::Usage(usage) => {
                    self.record_usage(turn, usage);
                    if let Some(miss) = blocks.take().and_then(|b| self.ledger.record(b, &usage)) {
                        self.emit(AgentEvent::CacheMiss {
                            block: miss.block,
                            rewritten_tokens: miss.rewritten_tokens,
                            expected_read: miss.expected_read,
                            actual_read: miss.actual_read,
                        });
                    }
                }
                ProviderEvent::Notice(message) => self.emit(AgentEvent::Notice { message }),
                ProviderEvent::Stop(reason) => response.stop = Some(reason),
            }
        }
    }

    fn record_usage(&mut self, turn: u32, usage: UsageRecord) {
        self.last_input = usage.total_input();
        let model = self.provider.model().to_string();
        let (cost_usd, warning) = self
            .book
            .record(&model, &usage, self.options.pricing.as_ref());
        self.emit(AgentEvent::Usage {
            turn,
            usage: usage.figures(),
            cost_usd,
        });
        if let Some(message) = warning {
            self.emit(AgentEvent::Notice { message });
        }
    }

    /// What `/cost` shows.
    fn cost_report(&self) -> AgentEvent {
        let t = &self.book.totals;
        AgentEvent::CostReport {
            provider: self.provider.label(),
            model: self.provider.model().to_string(),
            requests: self.book.requests,
            uncached_input_tokens: t.uncached_input,
            input_tokens: t.total_input(),
            output_tokens: t.output,
            cache_read_tokens: t.cache_read,
            cache_creation_tokens: t.cache_write(),
            cost_usd: self.book.cost_usd,
            saved_usd: self.book.saved_usd,
            budget_usd: self.book.budget_usd,
            by_model: self.book.by_model.clone(),
        }
    }

    /// Appends what the model said, if anything; tool calls go in only when the response finished.
    fn append_assistant(&mut self, response: &Response) {
        let mut content = response.reasoning.clone();
        if !response.text.is_empty() {
            content.push(ContentBlock::Text {
                text: response.text.clone(),
            });
        }
        for (id, name, input) in &response.tool_calls {
            content.push(ContentBlock::ToolUse {
                id: id.clone(),
                name: name.clone(),
                input: input.clone(),
            });
        }
        if content.is_empty() {
            return;
        }
        self.history.push(Message {
            role: Role::Assistant,
            content,
        });
    }

    fn cost_event(&self) -> AgentEvent {
        let t = &self.book.totals;
        AgentEvent::Cost {
            input_tokens: t.total_input(),
            output_tokens: t.output,
            cache_read_tokens: t.cache_read,
            cache_creation_tokens: t.cache_write(),
            cost_usd: self.book.cost_usd,
        }
    }
}
