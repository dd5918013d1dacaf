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
mod error;
mod gate;
mod hook_points;
mod images;
mod init;
pub mod keepwarm;
mod mcp_glue;
pub mod measure;
mod options;
pub mod outbox;
pub mod paste;
pub mod plan;
pub mod retry;
pub mod rewind;
pub mod routing;
mod session_diff;
pub mod sink;
mod stack;
mod startup;
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
use crate::protocol::{AgentEvent, Event, Mode, Op, Submission};
use crate::provider::{Provider, ProviderError, ProviderEvent, StopReason, UsageRecord};
use crate::session_log::HistoryRecord;
use crate::tools::memory_tool::{MemoryState, SharedMemory};
use crate::tools::{ToolContext, ToolRegistry};
use early_exit::{Fingerprint, Stagnation, StagnationGuard};
pub use error::AgentError;
use routing::RouteMode;
use sink::EventSink;
pub use tools_run::ApprovalPolicy;

pub use options::{
    AgentOptions, Clock, DEFAULT_EARLY_EXIT_TURNS, DEFAULT_MAX_TURNS, FALLBACK_CONTEXT_WINDOW,
    MAX_OUTPUT_TOKENS,
};

/// The two ends of a running agent task.
pub struct AgentHandle {
    /// Bounded (`protocol::OPS_CAPACITY`).
    pub ops: crate::protocol::OpSender,
    /// Bounded (`outbox::EVENT_CAPACITY`); text deltas merge while it is full. Each event carries
    /// the id `ops.send` returned for the op it answers.
    pub events: mpsc::Receiver<Event>,
    pub join: JoinHandle<()>,
}

/// Starts the agent task.
pub fn spawn(provider: Arc<dyn Provider>, options: AgentOptions) -> AgentHandle {
    let (ops_tx, ops_rx) = crate::protocol::op_channel();
    let (events_tx, events_rx) = outbox::channel();
    let (answers_tx, answers_rx) = mpsc::unbounded_channel();
    let agent = Agent::new(provider, options, events_tx, answers_rx);
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
    /// Plan mode and the model's last plan.
    plan: plan::PlanState,
    /// The last request, kept to ping its cache entries while the user is away.
    warm: keepwarm::Warm,
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

/// What the turn loop keeps across one prompt's requests.
struct TurnState {
    /// Requests sent for this prompt so far.
    turn: u32,
    stagnation: StagnationGuard,
    /// One FORMAT ERROR reminder per prompt, at most: a model that cannot write the shape after
    /// one reminder will not after five, and each costs a request.
    reminded: bool,
}

/// The files mentions inlined and the context hooks added: one text that rides in this turn.
fn join_context(inlined: Option<String>, hook_context: Vec<String>) -> Option<String> {
    let parts: Vec<String> = inlined.into_iter().chain(hook_context).collect();
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

/// What the guard step makes of a response.
enum Verdict {
    /// Run its calls.
    Execute(Response),
    /// A call did not parse: the reminder is in the history, send the next request.
    Remind,
    /// The prompt ends, with this answer.
    Stop(String, Ending),
}

impl Agent {
    fn emit(&mut self, event: AgentEvent) {
        self.sink.emit(event);
    }

    /// The task's body: announces the session, then takes ops until `Shutdown` or the front end
    /// hangs up; ops that arrive while a prompt runs wait in `queued` unless the prompt takes them.
    async fn run(
        mut self,
        mut ops: mpsc::Receiver<Submission>,
        answers: mpsc::UnboundedSender<(String, crate::protocol::ApprovalDecision)>,
    ) {
        self.announce_start();
        self.session_start_hooks().await;
        let mut queued: VecDeque<Submission> = VecDeque::new();
        loop {
            let submission = match queued.pop_front() {
                Some(submission) => submission,
                None => match self.idle(&mut ops).await {
                    Some(submission) => submission,
                    None => break,
                },
            };
            self.sink.answering(submission.id);
            if self
                .handle_op(submission.op, &mut ops, &answers, &mut queued)
                .await
            {
                break;
            }
        }
        self.session_end_hooks().await;
        if let Some(mcp) = &self.options.mcp {
            mcp.hub.shutdown();
        }
        // Front ends await this task: the log is complete on disk when it ends.
        self.sink.settled().await;
    }

    /// Handles one op between prompts; returns true when the session should end.
    async fn handle_op(
        &mut self,
        op: Op,
        ops: &mut mpsc::Receiver<Submission>,
        answers: &mpsc::UnboundedSender<(String, crate::protocol::ApprovalDecision)>,
        queued: &mut VecDeque<Submission>,
    ) -> bool {
        let text = match op {
            Op::Submit { text, mode } => Some(init::with_mode(text, mode)),
            Op::McpPrompt {
                server,
                prompt,
                args,
                mode,
            } => self
                .mcp_prompt_text(&server, &prompt, &args)
                .await
                .map(|text| (text, mode)),
            Op::Shutdown => return true,
            command => {
                self.apply_command(command).await;
                None
            }
        };
        match text {
            Some((text, mode)) => {
                self.run_prompt_listening(text, mode, ops, answers, queued)
                    .await
            }
            None => false,
        }
    }

    /// An MCP prompt's text, from its server; a failure is reported as a prompt that failed.
    async fn mcp_prompt_text(&mut self, server: &str, prompt: &str, args: &str) -> Option<String> {
        let text = match &self.options.mcp {
            Some(mcp) => mcp.hub.prompt_text(server, prompt, args).await,
            None => Err(crate::mcp::McpError::NoServers),
        };
        match text {
            Ok(text) => Some(text),
            Err(e) => {
                self.emit(AgentEvent::Notice {
                    message: e.to_string(),
                });
                self.finish_prompt(String::new(), Ending::Failed).await;
                None
            }
        }
    }

    /// Applies an op that answers at once, without running a prompt.
    async fn apply_command(&mut self, op: Op) {
        match op {
            Op::SetMode { mode } => {
                self.mode = mode;
                self.emit(AgentEvent::ModeChanged { mode });
            }
            Op::Approve { id, decision } if id.starts_with(mcp_glue::PROJECT_APPROVAL) => {
                self.answer_project_server(&id, decision);
            }
            Op::Approve { id, decision } if id.starts_with(hook_points::SETTINGS_APPROVAL) => {
                self.answer_project_settings(decision);
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
            Op::Diff => self.session_diff().await,
            Op::AttachImage { path } => self.attach_pasted(&path).await,
            Op::PasteImage => self.paste_clipboard().await,
            Op::MemoryStatus => {
                let message = self.memory_status();
                self.emit(AgentEvent::Notice { message });
            }
            Op::Compact => {
                let cancel = CancellationToken::new();
                self.pre_compact_hooks("manual").await;
                if let Err(e) = self.summarize(&cancel).await {
                    self.emit(AgentEvent::Notice {
                        message: e.to_string(),
                    });
                }
            }
            Op::Mcp { approve } => {
                let message = self.mcp_command(approve);
                self.emit(AgentEvent::Notice { message });
            }
            Op::Hooks => {
                let message = self.tools.gate.hooks.report();
                self.emit(AgentEvent::Notice { message });
            }
            Op::Rules => {
                let message = self.tools.gate.rules_report();
                self.emit(AgentEvent::Notice { message });
            }
            // Nothing to interrupt between prompts; prompts and shutdown are `handle_op`'s.
            Op::Interrupt | Op::Submit { .. } | Op::McpPrompt { .. } | Op::Shutdown => {}
        }
    }

    /// Runs one prompt while still taking ops; returns true when the session should end.
    async fn run_prompt_listening(
        &mut self,
        text: String,
        mode: Mode,
        ops: &mut mpsc::Receiver<Submission>,
        answers: &mpsc::UnboundedSender<(String, crate::protocol::ApprovalDecision)>,
        queued: &mut VecDeque<Submission>,
    ) -> bool {
        let cancel = CancellationToken::new();
        let mut shutdown = false;
        let prompt = self.run_prompt(text, mode, cancel.clone());
        tokio::pin!(prompt);
        loop {
            tokio::select! {
                _ = &mut prompt => break,
                // Interrupts and answers serve the running prompt: its events keep its id.
                submission = ops.recv(), if !shutdown => match submission.map(|s| (s.id, s.op)) {
                    Some((_, Op::Interrupt)) => cancel.cancel(),
                    Some((id, op @ Op::Approve { .. })) if matches!(&op, Op::Approve { id, .. } if id.starts_with(mcp_glue::PROJECT_APPROVAL) || id.starts_with(hook_points::SETTINGS_APPROVAL)) => {
                        queued.push_back(Submission { id, op });
                    }
                    Some((_, Op::Approve { id, decision })) => {
                        let _ = answers.send((id, decision));
                    }
                    Some((_, Op::Shutdown)) | None => {
                        cancel.cancel();
                        shutdown = true;
                    }
                    Some((id, op)) => queued.push_back(Submission { id, op }),
                },
            }
        }
        shutdown
    }

    /// Runs one prompt to its end and returns its final answer and how it ended: the prompt is
    /// routed, admitted into the history (or refused over budget), then the turn loop runs.
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
        let admitted = match self.expand_command(text, &cancel).await {
            Ok(text) => self
                .prompt_hooks(&text)
                .await
                .map(|context| (text, context)),
            Err(why) => Err(why),
        };
        let (text, hook_context) = match admitted {
            Ok(admitted) => admitted,
            Err(e) => {
                self.emit(e.event());
                self.finish_prompt(String::new(), Ending::Failed).await;
                return (String::new(), Ending::Failed);
            }
        };
        let (mentioned, inlined) = self.expand_mentions(&text).await;
        let inlined = join_context(inlined, hook_context);
        let mode = self.route(&text, mode, mentioned.first().map(|m| m.written.as_str()));
        let mode = self.without_tools_if_unsupported(mode);
        let mode = self.enter_mode(mode);
        if self.refuse_over_budget() {
            self.finish_prompt(String::new(), Ending::Budget).await;
            return (String::new(), Ending::Budget);
        }
        self.stack.prompt_memory = self.memory_blocks(&text, mode);
        if self.tools.specialist.is_none() {
            self.activate_skills(&text, &mentioned, mode);
        }
        self.admit_prompt(number, text, inlined);
        self.refresh_mcp(mode).await;
        let (final_text, ending) = self.run_turns_until_stopped(number, mode, &cancel).await;
        self.sync_history();
        self.finish_prompt(final_text.clone(), ending.clone()).await;
        (final_text, ending)
    }

    /// `mode`, or chat when it needs tools and the provider runs none (said in a notice).
    fn without_tools_if_unsupported(&mut self, mode: Mode) -> Mode {
        if !mode.uses_tools() || self.provider.supports_tools() {
            return mode;
        }
        let name = self.provider.name().to_string();
        self.emit(AgentEvent::Notice {
            message: format!("{name} runs as chat only: it has no client-side tools, so this prompt is sent without them"),
        });
        Mode::Chat
    }

    /// Whether the budget is spent, so the prompt is refused (said in a notice).
    fn refuse_over_budget(&mut self) -> bool {
        let over_budget = accounting::lock(&self.accounts.book).over_budget();
        let Some(message) = over_budget else {
            return false;
        };
        // Refused before it enters the history: it must not ride along with the next prompt.
        self.emit(AgentEvent::Notice {
            message: format!("{message}; this prompt was not sent"),
        });
        true
    }

    /// Puts prompt `number`'s text (and the files its mentions inlined) into the history, and
    /// the history on disk.
    fn admit_prompt(&mut self, number: usize, text: String, inlined: Option<String>) {
        let start = match self.thread.history.last() {
            // Merged into a trailing user message (an interrupted prompt got no answer).
            Some(last) if last.role == Role::User => self.thread.history.len() - 1,
            _ => self.thread.history.len(),
        };
        self.thread.prompt_starts[number] = Some(start);
        self.thread.history.push_user_text(text);
        if let Some(inlined) = inlined {
            // Rides in this turn's user message only: history from the next request on.
            self.thread.history.push_user_text(inlined);
        }
        self.attach_images();
        // The prompt is on disk before anything is sent: a crash now loses no question.
        self.sync_history();
    }

    /// The turn loop of prompt `number`: assemble → send → parse → guard → execute, one request
    /// a turn, until the model answers or something stops the prompt. Returns the answer (empty
    /// unless the model answered or the prompt stopped early) and how the prompt ended.
    async fn run_turns(
        &mut self,
        number: usize,
        mode: Mode,
        cancel: &CancellationToken,
    ) -> (String, Ending) {
        let tools = self.tools_for(mode);
        let mut state = TurnState {
            turn: 0,
            stagnation: StagnationGuard::new(
                self.options.early_exit,
                self.options.early_exit_turns,
            ),
            reminded: false,
        };
        loop {
            let over_budget = accounting::lock(&self.accounts.book).over_budget();
            if let Some(message) = over_budget {
                self.emit(AgentEvent::Notice { message });
                return (String::new(), Ending::Budget);
            }
            state.turn += 1;
            self.emit(AgentEvent::TurnStarted { turn: state.turn });
            let (request, offered) = self.assemble_request(mode, &tools, cancel).await;
            let (mut response, error) = self.stream_with_retries(request, state.turn, cancel).await;
            let reminder = if error.is_none() && !response.interrupted {
                self.take_text_calls(&mut response, &offered)
            } else {
                None
            };
            self.append_assistant(&response);
            // The calls are on disk before any of them runs: a crash mid-tool cannot make a
            // resumed session run them again unknowingly.
            self.sync_history();
            let response = match self.guard_response(response, error, reminder, &mut state) {
                Verdict::Execute(response) => response,
                Verdict::Remind => continue,
                Verdict::Stop(text, ending) => return (text, ending),
            };
            self.execute_calls(number, &tools, &response, cancel).await;
            if let Some(ending) = self.stop_after_tools(state.turn, cancel) {
                return (String::new(), ending);
            }
        }
    }

    /// The assemble step: refreshes what may have changed since the last request (MCP reports,
    /// bootstrap files, volatile blocks), folds the history when it would overflow the window,
    /// and builds the request. Also returns the names of the tools it offers.
    async fn assemble_request(
        &mut self,
        mode: Mode,
        tools: &ToolRegistry,
        cancel: &CancellationToken,
    ) -> ((ModelRequest, context::Sent), Vec<String>) {
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
            messages = self.guard_context(&system, &specs, cancel).await;
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
        (self.finish_request(request), offered)
    }

    /// The guard step: a failed or interrupted request stops the prompt, and so does an answer
    /// or a batch repeated without progress; a call that does not parse gets one reminder.
    /// Anything else goes on to run.
    fn guard_response(
        &mut self,
        response: Response,
        error: Option<ProviderError>,
        reminder: Option<text_calls::Reminder>,
        state: &mut TurnState,
    ) -> Verdict {
        if let Some(error) = error {
            let message = match error.rejection() {
                Some(r) => format!("{error} ({}: {}; not retried)", r.server, r.meaning),
                None => error.to_string(),
            };
            self.emit(AgentEvent::Error { message });
            return Verdict::Stop(String::new(), Ending::Failed);
        }
        if response.interrupted {
            return Verdict::Stop(String::new(), Ending::Interrupted);
        }
        if response.tool_calls.is_empty() {
            if let Some(reminder) = reminder.filter(|_| !state.reminded) {
                state.reminded = true;
                self.emit(AgentEvent::Notice {
                    message: format!(
                        "the model wrote a tool call that does not parse; one FORMAT ERROR reminder sent ({})",
                        reminder.why
                    ),
                });
                self.thread.history.push_user_text(reminder.text);
                return Verdict::Remind;
            }
            let ending = Ending::Answer(response.stop.unwrap_or(StopReason::EndTurn));
            return Verdict::Stop(response.text, ending);
        }
        let fingerprint =
            Fingerprint::of(response.tool_calls.iter().map(|(_, n, a)| (n.as_str(), a)));
        if let Some(stagnation) = state.stagnation.observe(fingerprint) {
            let text = self.stop_repeating(&response.tool_calls, stagnation);
            return Verdict::Stop(text, Ending::EarlyExit);
        }
        Verdict::Execute(response)
    }

    /// The execute step: books the files the calls may write to prompt `number`, runs the calls
    /// (or refuses them) and appends their results to the history.
    async fn execute_calls(
        &mut self,
        number: usize,
        tools: &ToolRegistry,
        response: &Response,
        cancel: &CancellationToken,
    ) {
        // The calls' history line is synced by the log's thread; wait for it, not the disk.
        self.sink.settled().await;
        self.book_writes_to(number);
        let results = self.run_or_refuse(tools, response, cancel).await;
        let mut content = Vec::with_capacity(results.len());
        for (block, usage) in results {
            if let Some(usage) = usage {
                self.record_usage(0, usage);
            }
            content.push(block);
        }
        self.report_plans(&response.tool_calls, &content);
        self.attach_tool_images(&mut content);
        self.thread.history.push(Message {
            role: Role::User,
            content,
        });
    }

    /// How the prompt ends once a turn's results are in: interrupted meanwhile, or out of turns
    /// (said in a notice); `None` to go on.
    fn stop_after_tools(&mut self, turn: u32, cancel: &CancellationToken) -> Option<Ending> {
        if cancel.is_cancelled() {
            return Some(Ending::Interrupted);
        }
        if turn < self.options.max_turns {
            return None;
        }
        self.emit(AgentEvent::Notice {
            message: format!(
                "stopped after {turn} requests (CHATCLI_AGENT_MAX_TURNS); send another prompt to go on"
            ),
        });
        Some(Ending::MaxTurns)
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
