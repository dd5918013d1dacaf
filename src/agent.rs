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
mod context;
mod dispatch;
pub mod early_exit;
mod mcp_glue;
mod options;
pub mod outbox;
pub mod retry;
pub mod rewind;
pub mod routing;
pub mod sink;
mod stack;
mod streaming;
pub mod summary;
pub mod text_calls;
mod thread;
pub mod tools_run;

use std::collections::VecDeque;
use std::sync::Arc;

use futures_util::StreamExt;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::conversation::{ContentBlock, Message, ModelRequest, Role, push_user_text};

use crate::memory::{MemoryMode, MemorySettings, Store, digest as memory_digest};
use crate::prompt::{self, VolatileTracker, ledger};
use crate::protocol::{AgentEvent, Mode, Op};
use crate::provider::{Provider, ProviderError, ProviderEvent, StopReason, UsageRecord};
use crate::session_log::HistoryRecord;
use crate::session_log::writer::{LogTarget, LogWriter};
use crate::tools::memory_tool::{MemoryState, SharedMemory};
use crate::tools::{ToolContext, ToolRegistry};
use context::open_memory;
use early_exit::{Fingerprint, Stagnation, StagnationGuard};
use routing::RouteMode;
use sink::EventSink;
pub use tools_run::ApprovalPolicy;
use tools_run::Approvals;

pub use options::{
    AgentOptions, Clock, DEFAULT_EARLY_EXIT_TURNS, DEFAULT_MAX_TURNS, FALLBACK_CONTEXT_WINDOW,
    MAX_OUTPUT_TOKENS,
};

/// The two ends of a running agent task.
pub struct AgentHandle {
    pub ops: mpsc::UnboundedSender<Op>,
    /// Bounded (`outbox::EVENT_CAPACITY`); text deltas merge while it is full.
    pub events: mpsc::Receiver<AgentEvent>,
    pub join: JoinHandle<()>,
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

/// Starts the agent task.
pub fn spawn(provider: Arc<dyn Provider>, options: AgentOptions) -> AgentHandle {
    let (ops_tx, ops_rx) = mpsc::unbounded_channel();
    let (events_tx, events_rx) = outbox::channel();
    let (answers_tx, answers_rx) = mpsc::unbounded_channel();
    let workspace = options
        .workspace
        .canonicalize()
        .unwrap_or_else(|_| options.workspace.clone());
    let log = match (&options.resume, options.sessions_dir.as_deref()) {
        (None, None) => None,
        (resumed, dir) => Some(LogWriter::spawn(
            LogTarget {
                dir: dir.map_or_else(|| std::path::PathBuf::from("."), |d| d.to_path_buf()),
                id: options.session_id.clone(),
                resume: resumed.as_ref().map(|r| r.path.clone()),
            },
            options.secrets.clone(),
        )),
    };
    let (history, book) = resumed_state(&options, provider.model());
    let (memory, digest) = open_memory(options.memory.as_ref(), &options.secrets);
    let hyde = memory
        .as_ref()
        .filter(|(_, settings)| settings.hyde)
        .map(|_| Arc::clone(&provider));
    let approvals = Arc::new(tokio::sync::Mutex::new(Approvals {
        policy: options.approval,
        permission: Default::default(),
        always: Default::default(),
        answers: answers_rx,
    }));
    let bootstrap = prompt::bootstrap::Bootstrap::new(
        crate::project::project_root(&workspace),
        options.home.clone(),
        options.bootstrap_max_chars,
    );
    let skills =
        crate::skills::SessionSkills::discover(options.home.as_deref(), &workspace, options.skills);
    let roster = Arc::new(if options.agents.parallel {
        crate::agents::Roster::discover(
            options.home.as_deref(),
            &crate::project::project_root(&workspace),
            &options.agents,
        )
    } else {
        crate::agents::Roster::default()
    });
    // The session folder when there is a log, else the session's scratch folder.
    let snapshots = Arc::new(std::sync::Mutex::new(rewind::FileSnapshots::new(
        Some(options.sessions_dir.as_ref().map_or_else(
            || options.scratch.dir().join("rewind"),
            |d| d.join(&options.session_id).join("files"),
        )),
        rewind::prompt_starts(&history).len(),
    )));
    let tool_ctx = ToolContext {
        workspace,
        scratch: options
            .scratch
            .clone()
            .with_secrets(options.secrets.clone()),
        web: options.web.clone(),
        memory: memory.as_ref().map(|(shared, _)| Arc::clone(shared)),
        hyde,
        skills: Arc::clone(skills.catalog()),
        sandbox: options.sandbox.clone(),
        journal: Some(Arc::new(rewind::Journal(Arc::clone(&snapshots)))),
    };
    let thread = thread::Thread::new(history, Arc::clone(&snapshots), options.compaction);
    let agent = Agent {
        stack: stack::PromptStack {
            bootstrap,
            attachments: options.attachments.clone(),
            skills,
            memory,
            digest,
            prompt_memory: (None, None),
            volatile: VolatileTracker::default(),
        },
        tools: tools_run::ToolRuntime {
            ctx: tool_ctx,
            approvals,
            roster,
            specialist: None,
            mcp_tools: None,
            mcp_asked: Vec::new(),
        },
        accounts: accounting::Accounts {
            book: Arc::new(std::sync::Mutex::new(book)),
            ledger: ledger::CacheLedger::default(),
            last_input: 0,
        },
        thread,
        tip_shown: false,
        provider,
        sink: EventSink::new(options.secrets.clone(), log, events_tx),
        mode: options.mode,
        options,
    };
    let join = tokio::spawn(agent.run(ops_rx, answers_tx));
    AgentHandle {
        ops: ops_tx,
        events: events_rx,
        join,
    }
}

/// One agent loop: the session's own, or a dispatched specialist's. It composes its parts —
/// the conversation, the prompt stack, the tool runtime and the accounts — and the turn loop
/// (`run_prompt`) drives them; a feature's state lives in the part it belongs to.
struct Agent {
    provider: Arc<dyn Provider>,
    options: AgentOptions,
    mode: Mode,
    /// Where every event and history change goes (masking, the session log, the front end).
    sink: EventSink,
    /// The conversation: history, call ids, log sync, rewind points, compaction.
    thread: thread::Thread,
    /// The prompt's blocks: bootstrap, attachments, skills, memory, volatile tracking.
    stack: stack::PromptStack,
    /// Tools: their context, approvals, specialists, MCP tools.
    tools: tools_run::ToolRuntime,
    /// The bill, the cache ledger, the context share.
    accounts: accounting::Accounts,
    /// The routing tip was shown in full once; later ones are a short marker.
    tip_shown: bool,
}

/// What one streamed response left behind.
#[derive(Default)]
struct Response {
    text: String,
    reasoning: Vec<ContentBlock>,
    tool_calls: Vec<(String, String, serde_json::Value)>,
    stop: Option<StopReason>,
    /// The output used all the `max_tokens` asked for (whatever stop reason the server gave:
    /// llama-server's Responses API says "completed" even then).
    at_limit: bool,
    interrupted: bool,
}

/// How a prompt ended, as `turn_finished` names it.
#[derive(Debug, Clone, PartialEq)]
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
        self.sink.emit(event);
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
            context_window: self.context_window(),
            price_estimated: self.options.pricing_rule.estimated(),
        });
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
        for message in [cost_unknown, window_unknown, estimated]
            .into_iter()
            .flatten()
        {
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
                Op::Approve { id, decision } if id.starts_with(mcp_glue::PROJECT_APPROVAL) => {
                    self.answer_project_server(&id, decision);
                }
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
                    accounting::lock(&self.accounts.book).set_budget(usd);
                    let message = match usd {
                        Some(b) => format!("session budget set to ${b:.2}"),
                        None => "session budget removed".into(),
                    };
                    self.emit(AgentEvent::Notice { message });
                }
                Op::Context { action } => {
                    let message = self.context_command(action).await;
                    self.emit(AgentEvent::Notice { message });
                }
                Op::Skill { action } => {
                    let message = self.stack.skills.command(action);
                    self.emit(AgentEvent::Notice { message });
                }
                Op::SetPermission { permission } => {
                    self.tools.approvals.lock().await.permission = permission;
                }
                Op::Rewind { prompt } => self.rewind(prompt),
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
                Op::McpPrompt {
                    server,
                    prompt,
                    args,
                    mode,
                } => {
                    let text = match &self.options.mcp {
                        Some(mcp) => mcp.hub.prompt_text(&server, &prompt, &args).await,
                        None => Err("no MCP servers in this session".into()),
                    };
                    match text {
                        Ok(text) => {
                            if self
                                .run_prompt_listening(text, mode, &mut ops, &answers, &mut queued)
                                .await
                            {
                                break;
                            }
                        }
                        Err(message) => {
                            self.emit(AgentEvent::Notice { message });
                            self.finish_prompt(String::new(), Ending::Failed).await;
                        }
                    }
                }
                Op::Mcp { approve } => {
                    let message = self.mcp_command(approve);
                    self.emit(AgentEvent::Notice { message });
                }
                Op::Shutdown => break,
            }
        }
        if let Some(mcp) = &self.options.mcp {
            mcp.hub.shutdown();
        }
        // Front ends await this task: the log is complete on disk when it ends.
        self.sink.settled().await;
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
                    Some(op @ Op::Approve { .. }) if matches!(&op, Op::Approve { id, .. } if id.starts_with(mcp_glue::PROJECT_APPROVAL)) => {
                        queued.push_back(op);
                    }
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

    /// Runs one prompt to its end and returns its final answer and how it ended.
    async fn run_prompt(
        &mut self,
        text: String,
        mode: Mode,
        cancel: CancellationToken,
    ) -> (String, Ending) {
        self.emit(AgentEvent::Prompt {
            text: text.clone(),
            mode,
        });
        // Numbered like the prompts the user sees, refused ones included (`/rewind` picks by it).
        let number = self.thread.prompt_starts.len();
        self.thread.prompt_starts.push(None);
        let (mentioned, inlined) = self.expand_mentions(&text).await;
        let mode = self.route(&text, mode, mentioned.first().map(|m| m.written.as_str()));
        let mode = if mode.uses_tools() && !self.provider.supports_tools() {
            let name = self.provider.name().to_string();
            self.emit(AgentEvent::Notice {
                message: format!("{name} runs as chat only: it has no client-side tools, so this prompt is sent without them"),
            });
            Mode::Chat
        } else {
            mode
        };
        let over_budget = accounting::lock(&self.accounts.book).over_budget();
        if let Some(message) = over_budget {
            // Refused before it enters the history: it must not ride along with the next prompt.
            self.emit(AgentEvent::Notice {
                message: format!("{message}; this prompt was not sent"),
            });
            self.finish_prompt(String::new(), Ending::Budget).await;
            return (String::new(), Ending::Budget);
        }
        self.stack.prompt_memory = self.memory_blocks(&text, mode);
        if self.tools.specialist.is_none() {
            self.activate_skills(&text, &mentioned, mode);
        }
        let start = match self.thread.history.last() {
            // Merged into a trailing user message (an interrupted prompt got no answer).
            Some(last) if last.role == Role::User => self.thread.history.len() - 1,
            _ => self.thread.history.len(),
        };
        self.thread.prompt_starts[number] = Some(start);
        push_user_text(&mut self.thread.history, text);
        if let Some(inlined) = inlined {
            // Rides in this turn's user message only: history from the next request on.
            push_user_text(&mut self.thread.history, inlined);
        }
        // The prompt is on disk before anything is sent: a crash now loses no question.
        self.sync_history();
        self.refresh_mcp(mode).await;
        let tools = self.tools_for(mode);
        let mut guard =
            StagnationGuard::new(self.options.early_exit, self.options.early_exit_turns);
        let mut final_text = String::new();
        let mut turn = 0u32;
        // One FORMAT ERROR reminder per prompt, at most: a model that cannot write the shape
        // after one reminder will not after five, and each costs a request.
        let mut reminded = false;
        let ending = loop {
            let over_budget = accounting::lock(&self.accounts.book).over_budget();
            if let Some(message) = over_budget {
                self.emit(AgentEvent::Notice { message });
                break Ending::Budget;
            }
            turn += 1;
            self.emit(AgentEvent::TurnStarted { turn });
            self.mcp_reports();
            self.refresh_bootstrap().await;
            let system = self.system_blocks(mode);
            self.attach_volatile();
            self.sync_history();
            let specs = tools.specs();
            let offered: Vec<String> = specs.iter().map(|s| s.name.clone()).collect();
            let mut messages = self.render_messages();
            let mut settled_messages = self.thread.compactor.settled();
            if self.over_guard(&system, &specs, &messages) {
                messages = self.guard_context(&system, &specs, &cancel).await;
                settled_messages = None;
            }
            let request = ModelRequest {
                model: self.model_name(),
                system,
                tools: specs,
                messages,
                max_output_tokens: self.options.max_output_tokens,
                session_id: self.options.session_id.clone(),
                // A specialist's effort; the session's own loop leaves the provider's default.
                effort: self.tools.specialist.as_ref().map(|s| s.spec.effort),
                settled_messages,
                bridge_message: None,
            };
            let request = self.bridge(self.fit_output_limit(request));
            let (mut response, error) = self.stream_with_retries(request, turn, &cancel).await;
            let reminder = if error.is_none() && !response.interrupted {
                self.take_text_calls(&mut response, &offered)
            } else {
                None
            };
            self.append_assistant(&response);
            // The calls are on disk before any of them runs: a crash mid-tool cannot make a
            // resumed session run them again unknowingly.
            self.sync_history();
            if let Some(error) = error {
                let message = match error.rejection() {
                    Some(r) => format!("{error} ({}: {}; not retried)", r.server, r.meaning),
                    None => error.to_string(),
                };
                self.emit(AgentEvent::Error { message });
                break Ending::Failed;
            }
            if response.interrupted {
                break Ending::Interrupted;
            }
            if response.tool_calls.is_empty() {
                if let Some(reminder) = reminder.filter(|_| !reminded) {
                    reminded = true;
                    self.emit(AgentEvent::Notice {
                        message: format!(
                            "the model wrote a tool call that does not parse; one FORMAT ERROR reminder sent ({})",
                            reminder.why
                        ),
                    });
                    push_user_text(&mut self.thread.history, reminder.text);
                    continue;
                }
                final_text = response.text;
                break Ending::Answer(response.stop.unwrap_or(StopReason::EndTurn));
            }
            let fingerprint =
                Fingerprint::of(response.tool_calls.iter().map(|(_, n, a)| (n.as_str(), a)));
            if let Some(stagnation) = guard.observe(fingerprint) {
                final_text = self.stop_repeating(&response.tool_calls, stagnation);
                break Ending::EarlyExit;
            }
            // The calls' history line is synced by the log's thread; wait for it, not the disk.
            self.sink.settled().await;
            self.book_writes_to(number);
            let results = self.run_or_refuse(&tools, &response, &cancel).await;
            let mut content = Vec::with_capacity(results.len());
            for (block, usage) in results {
                if let Some(usage) = usage {
                    self.record_usage(0, usage);
                }
                content.push(block);
            }
            self.thread.history.push(Message {
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
        self.finish_prompt(final_text.clone(), ending.clone()).await;
        (final_text, ending)
    }

    /// Reports the end of a prompt: `turn_finished`, then (once the log holds it, so a failure to
    /// write is said before it) the session's cost.
    async fn finish_prompt(&mut self, text: String, ending: Ending) {
        self.emit(AgentEvent::TurnFinished {
            text,
            stop_reason: ending.as_str().to_string(),
        });
        self.sink.settled().await;
        // A specialist's totals are the session's: the orchestrator reports them once.
        if self.tools.specialist.is_none() {
            let cost = self.cost_event();
            self.emit(cost);
        }
    }

    /// What `/cache` shows: the fixed part of a request in this mode and the last request's blocks.
    fn cache_report(&self) -> AgentEvent {
        let tools = self.tools_for(self.mode).specs();
        let system = self.system_blocks(self.mode);
        let tools_tokens = crate::tokens::count(&serde_json::to_string(&tools).unwrap_or_default());
        let system_text: Vec<&str> = system.iter().map(|b| b.text.as_str()).collect();
        AgentEvent::CacheReport {
            mode: self.mode,
            tools_tokens,
            system_tokens: crate::tokens::count(&system_text.join("\n\n")),
            mcp_catalog_tokens: self.mcp_catalog_tokens(),
            blocks: self.accounts.ledger.report(),
        }
    }

    /// The mode a prompt really runs in: `agent` prompts may be routed to chat, unless they
    /// mention workspace content (`mentioned`, the first `@` mention).
    fn route(&mut self, text: &str, mode: Mode, mentioned: Option<&str>) -> Mode {
        if mode != Mode::Agent || self.options.smart_route == RouteMode::Off {
            return mode;
        }
        if let Some(written) = mentioned {
            self.emit(AgentEvent::Route {
                decision: Mode::Agent,
                reason: format!("task: workspace reference \"@{written}\""),
            });
            return Mode::Agent;
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
        if conversational {
            let message = routing::tip(text, auto, !self.tip_shown);
            self.tip_shown = true;
            self.emit(AgentEvent::Notice { message });
        }
        decision
    }

    /// Answers a repeated batch with "not executed" results, reports the stop, and returns the
    /// answer the user reads: what repeated, how often, and what to do about it.
    /// Calls the model wrote as text, when the request offered tools and the response has
    /// none of its own: they become the response's calls (fresh ids, the blocks cut from its
    /// text) and run like native ones. A block that looks like a call but does not parse gives
    /// the reminder to send back.
    fn take_text_calls(
        &mut self,
        response: &mut Response,
        offered: &[String],
    ) -> Option<text_calls::Reminder> {
        if offered.is_empty() || !response.tool_calls.is_empty() || response.text.is_empty() {
            return None;
        }
        let names: Vec<&str> = offered.iter().map(String::as_str).collect();
        let found = text_calls::extract(&response.text, &names);
        if found.calls.is_empty() {
            let example = if names.contains(&"read_file") {
                "read_file"
            } else {
                names.first().copied().unwrap_or("read_file")
            };
            return found.malformed.map(|why| text_calls::Reminder {
                text: text_calls::format_error(&why, example),
                why,
            });
        }
        tracing::info!(calls = found.calls.len(), "tool calls written as text");
        response.text = found.text;
        response.tool_calls = found
            .calls
            .into_iter()
            .map(|(name, args)| (self.thread.call_ids.unique(String::new()), name, args))
            .collect();
        None
    }

    fn stop_repeating(&mut self, calls: &[tools_run::Call], stagnation: Stagnation) -> String {
        let content = calls
            .iter()
            .map(|(id, _, _)| ContentBlock::ToolResult {
                tool_use_id: id.clone(),
                content: "not executed: repeated without progress".into(),
                is_error: true,
            })
            .collect();
        self.thread.history.push(Message {
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
        let batch = calls
            .iter()
            .map(|(_, name, args)| {
                let args = args.to_string();
                let (shown, cut) = crate::tools::take_chars(&args, 120);
                format!("`{name} {shown}{}`", if cut { "…" } else { "" })
            })
            .collect::<Vec<_>>()
            .join(", ");
        let what = if kind == "cycle" {
            format!("two tool batches alternated {repeats} times (the last was {batch})")
        } else {
            format!("the model asked for {batch} {repeats} times in a row")
        };
        format!(
            "Stopped early: {what} without making progress, so the last call was not run. \
             You can rephrase the request with more detail, force the tool loop with /run, or \
             allow more repeats with CHATCLI_AGENT_EARLY_EXIT_TURNS (now {}).",
            self.options.early_exit_turns
        )
    }
}
