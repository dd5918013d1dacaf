//! The orchestrator's `dispatch` tool: each task runs as a specialist sub-loop — this same agent
//! loop, with the specialist's prompt, tools and model and a fresh conversation holding only the
//! task — at most `CHATCLI_AGENT_MAX_PARALLEL` at a time.
//!
//! Mental model: a specialist is an `Agent` built from the orchestrator's (`specialist_loop`). It
//! shares what must be one per session — the provider, the bill (so the budget counts everyone),
//! the approvals (so dialogs come one at a time and "allow always" holds for all), the sink (its
//! events go out `Scoped` with its name and task index), the workspace and scratch folder, the
//! cancellation token — and owns the rest: history, compactor, cache ledger, early-exit guard.
//! Its answer comes back as one section of the dispatch call's result, cut at
//! `agents::ANSWER_MAX_CHARS`, with the full transcript saved to the scratch folder.
//!
//! What a newcomer gets wrong: the sub-loop is recursive in type (`run_prompt` → `dispatch` →
//! `run_prompt`), so it is boxed behind a named future type (`run_boxed`), and a specialist never
//! gets `dispatch` itself (its roster is empty), so the recursion is one level deep at run time.

use std::future::Future;
use std::pin::Pin;
use std::time::Instant;

use futures_util::future::BoxFuture;

use super::stack::PromptStack;
use super::thread::Thread;
use super::tools_run::ToolRuntime;
use super::*;
use crate::agents::{self, AgentSpec, Task};
use crate::conversation::ToolSpec;
use crate::tools::{Tool, ToolError, ToolOutput};

/// What makes a loop a specialist: its spec, its task's index, and what it has used.
#[derive(Debug, Clone)]
pub(super) struct Specialist {
    pub spec: AgentSpec,
    pub task: u32,
    pub requests: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// The orchestrator's prompt that dispatched it: `/rewind` to before it undoes this
    /// specialist's writes too.
    pub prompt: usize,
}

/// The `dispatch` tool as the tool array carries it; the orchestrator loop runs its calls itself.
pub(super) struct DispatchTool(pub ToolSpec);

impl Tool for DispatchTool {
    fn spec(&self) -> ToolSpec {
        self.0.clone()
    }

    fn read_only(&self) -> bool {
        false
    }

    fn run<'a>(
        &'a self,
        _args: &'a serde_json::Value,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        // Never reached: `run_or_refuse` takes dispatch calls out before the tool layer.
        Box::pin(async {
            Err(ToolError::Failed(
                "dispatch runs only in the orchestrator loop".into(),
            ))
        })
    }
}

/// How one task ended, as its section of the result says it.
struct Outcome {
    index: u32,
    agent: String,
    ending: String,
    answer: String,
    requests: u32,
    transcript: Option<std::path::PathBuf>,
}

impl Agent {
    /// Whether prompts in `mode` get the `dispatch` tool.
    pub(super) fn orchestrating(&self, mode: Mode) -> bool {
        self.tools.specialist.is_none()
            && self.options.agents.parallel
            && matches!(mode, Mode::Agent | Mode::Coder | Mode::Plan)
            && !self.tools.roster.agents().is_empty()
    }

    /// The model requests go to: the specialist's own, else the session's.
    pub(super) fn model_name(&self) -> String {
        self.tools
            .specialist
            .as_ref()
            .and_then(|s| s.spec.model.clone())
            .unwrap_or_else(|| self.provider.model().to_string())
    }

    /// Whether this loop refuses a call to `tool` (a specialist asking for a tool it lacks).
    pub(super) fn refuses(&self, tool: &str) -> bool {
        self.tools
            .specialist
            .as_ref()
            .is_some_and(|s| !s.spec.allows(tool))
    }

    /// The refused result of a call outside the specialist's tools; nothing runs.
    pub(super) fn refuse(
        &self,
        (id, name, args): &tools_run::Call,
    ) -> (ContentBlock, Option<UsageRecord>) {
        let (agent, tools) = match &self.tools.specialist {
            Some(s) if s.spec.tools.is_empty() => (s.spec.name.as_str(), "none".to_string()),
            Some(s) => (s.spec.name.as_str(), s.spec.tools.join(", ")),
            None => ("main", String::new()),
        };
        let text = format!(
            "refused: `{name}` is not one of the `{agent}` agent's tools ({tools}); nothing was run"
        );
        self.sink.emit(AgentEvent::ToolCall {
            id: id.clone(),
            name: name.clone(),
            args: args.clone(),
        });
        self.sink.emit(failed_result(id, name, &text, 0));
        (
            ContentBlock::ToolResult {
                tool_use_id: id.clone(),
                content: text,
                is_error: true,
            },
            None,
        )
    }

    /// Runs one `dispatch` call: every task as a specialist, results in task order; a call
    /// without tasks gets the catalog.
    pub(super) async fn dispatch(
        &self,
        (id, name, args): &tools_run::Call,
        cancel: &CancellationToken,
    ) -> (ContentBlock, Option<UsageRecord>) {
        self.sink.emit(AgentEvent::ToolCall {
            id: id.clone(),
            name: name.clone(),
            args: args.clone(),
        });
        let started = Instant::now();
        // A call without tasks asks for the catalog: the prompt carries only the one-line tool.
        let (content, ok) = if agents::wants_catalog(args) {
            (
                self.tools.roster.catalog(self.options.agents.max_parallel),
                true,
            )
        } else {
            match agents::parse_tasks(&self.tools.roster, args) {
                Err(e) => (e.to_string(), false),
                Ok(tasks) => (self.run_tasks(tasks, cancel).await, true),
            }
        };
        let duration_ms = started.elapsed().as_millis() as u64;
        let event = if ok {
            AgentEvent::ToolResult {
                id: id.clone(),
                name: name.clone(),
                ok: true,
                chars: content.chars().count() as u64,
                saved_path: None,
                duration_ms,
                error: None,
                exit_code: None,
                output: content.clone(),
                diff: None,
            }
        } else {
            failed_result(id, name, &content, duration_ms)
        };
        self.sink.emit(event);
        (
            ContentBlock::ToolResult {
                tool_use_id: id.clone(),
                content,
                is_error: !ok,
            },
            None,
        )
    }

    /// Runs the tasks, at most `max_parallel` at once, and renders one section per task.
    async fn run_tasks(&self, tasks: Vec<Task>, cancel: &CancellationToken) -> String {
        let max = self.options.agents.max_parallel.max(1);
        let outcomes: Vec<Outcome> = futures_util::stream::iter(tasks.into_iter().enumerate())
            .map(|(i, task)| self.run_task(i as u32, task, cancel))
            .buffered(max)
            .collect()
            .await;
        outcomes
            .iter()
            .map(render_section)
            .collect::<Vec<_>>()
            .join("\n\n")
    }

    /// One task as a specialist sub-loop; its transcript is saved whatever the ending.
    async fn run_task(&self, index: u32, task: Task, cancel: &CancellationToken) -> Outcome {
        let agent = task.agent.name.clone();
        if cancel.is_cancelled() {
            return Outcome {
                index,
                agent,
                ending: "not started: interrupted".into(),
                answer: String::new(),
                requests: 0,
                transcript: None,
            };
        }
        let mut sub = self.specialist_loop(task.agent, index);
        let started = Instant::now();
        let (answer, ending) = sub.run_boxed(task.task, cancel.clone()).await;
        let duration_ms = started.elapsed().as_millis() as u64;
        let transcript = sub.save_transcript().await;
        let (requests, input_tokens, output_tokens) = sub
            .tools
            .specialist
            .as_ref()
            .map_or((0, 0, 0), |s| (s.requests, s.input_tokens, s.output_tokens));
        sub.sink.emit(AgentEvent::AgentFinished {
            stop_reason: ending.as_str().to_string(),
            duration_ms,
            requests,
            input_tokens,
            output_tokens,
            transcript: transcript.as_ref().map(|p| p.display().to_string()),
        });
        Outcome {
            index,
            agent,
            ending: ending_words(&ending).to_string(),
            answer,
            requests,
            transcript,
        }
    }

    /// A specialist loop for `spec`, task `index`: shares the session's provider, bill,
    /// approvals, sink, workspace and scratch; owns a fresh conversation.
    fn specialist_loop(&self, spec: AgentSpec, index: u32) -> Agent {
        let pricing = match &spec.model {
            Some(model) if model != self.provider.model() => {
                self.options.catalog.lookup(model).cloned()
            }
            _ => self.options.pricing.clone(),
        };
        let options = AgentOptions {
            pricing,
            // A specialist always runs with its guards: it has no user watching each turn.
            compaction: compaction::Settings {
                enabled: true,
                ..self.options.compaction
            },
            memory: None,
            mcp: None,
            resume: None,
            smart_route: RouteMode::Off,
            early_exit: true,
            max_turns: self.options.max_turns.min(agents::SPECIALIST_MAX_TURNS),
            agents: agents::Settings::off(),
            attachments: Default::default(),
            ..self.options.clone()
        };
        let snapshots = Arc::clone(&self.thread.snapshots);
        let sink = self.sink.scoped(&spec.name, index);
        Agent {
            provider: Arc::clone(&self.provider),
            stack: PromptStack::bare(self.stack.skills.clone()),
            tools: ToolRuntime {
                ctx: ToolContext {
                    memory: None,
                    hyde: None,
                    ..self.tools.ctx.clone()
                },
                approvals: Arc::clone(&self.tools.approvals),
                roster: Arc::new(agents::Roster::default()),
                specialist: Some(Specialist {
                    spec,
                    task: index,
                    requests: 0,
                    input_tokens: 0,
                    output_tokens: 0,
                    prompt: self.thread.prompt_starts.len().saturating_sub(1),
                }),
                mcp_tools: None,
                mcp_asked: Vec::new(),
                gate: self.tools.gate.clone(),
            },
            accounts: accounting::Accounts {
                book: Arc::clone(&self.accounts.book),
                ledger: Default::default(),
                last_input: 0,
                last_usage: Default::default(),
            },
            thread: Thread::new(Vec::new(), snapshots, options.compaction),
            // A specialist never waits for the user: nothing to keep warm.
            warm: super::keepwarm::Warm::new(super::keepwarm::KeepWarm::Off),
            sink,
            mode: Mode::Run,
            tip_shown: true,
            plan: self.plan.inherited(),
            options,
        }
    }

    /// `run_prompt` behind a named future type, which breaks the type recursion of a loop that
    /// runs loops.
    fn run_boxed(
        &mut self,
        text: String,
        cancel: CancellationToken,
    ) -> Pin<Box<dyn Future<Output = (String, Ending)> + Send + '_>> {
        Box::pin(self.run_prompt(text, Mode::Run, cancel))
    }

    /// Saves this specialist's whole conversation to the scratch folder; `None` if it could not.
    async fn save_transcript(&self) -> Option<std::path::PathBuf> {
        let specialist = self.tools.specialist.as_ref()?;
        let prefix = format!("agent-{}-task{}", specialist.spec.name, specialist.task + 1);
        let text = transcript_text(&specialist.spec.name, &self.thread.history);
        let scratch = self.tools.ctx.scratch.clone();
        let saved =
            tokio::task::spawn_blocking(move || scratch.save(&prefix, "md", text.as_bytes())).await;
        match saved {
            Ok(Ok(path)) => Some(path),
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "a specialist's transcript could not be saved");
                None
            }
            Err(_) => None,
        }
    }

    /// Counts a request of this specialist, for its row and its section.
    pub(super) fn count_specialist_usage(&mut self, usage: &UsageRecord) {
        if let Some(s) = self.tools.specialist.as_mut() {
            s.requests += 1;
            s.input_tokens += usage.total_input();
            s.output_tokens += usage.output;
        }
    }
}

fn failed_result(id: &str, name: &str, text: &str, duration_ms: u64) -> AgentEvent {
    let error = text.lines().next().unwrap_or_default().to_string();
    tools_run::failed_event(id, name, text.to_string(), error, duration_ms)
}

/// How a task ended, in the words of its section.
fn ending_words(ending: &Ending) -> &'static str {
    match ending {
        Ending::Answer(_) => "done",
        Ending::Interrupted => "interrupted",
        Ending::MaxTurns => "stopped at its request limit",
        Ending::EarlyExit => "stopped: it repeated itself",
        Ending::Budget => "stopped: session budget reached",
        Ending::Failed => "failed",
    }
}

/// One task's section of the dispatch result: a header line, the transcript's path, the answer.
fn render_section(outcome: &Outcome) -> String {
    // No wall time here: the model has no use for it, and a duration in the history makes the
    // same work cost different tokens on a faster machine (the tool panel shows it instead).
    let mut text = format!(
        "## Task {} · {} · {} ({} requests)",
        outcome.index + 1,
        outcome.agent,
        outcome.ending,
        outcome.requests,
    );
    if let Some(path) = &outcome.transcript {
        text.push_str(&format!("\nTranscript: {}", path.display()));
    }
    let answer = outcome.answer.trim();
    let (shown, cut) = crate::tools::take_chars(answer, agents::ANSWER_MAX_CHARS);
    text.push('\n');
    if answer.is_empty() {
        text.push_str("(no answer)");
    } else {
        text.push_str(shown);
    }
    if cut {
        text.push_str(&format!(
            "\n[… answer cut at {} characters; the whole answer is at the end of the transcript]",
            agents::ANSWER_MAX_CHARS
        ));
    }
    text
}

/// A specialist's conversation as Markdown: its task, each answer, each call and each result.
fn transcript_text(agent: &str, history: &[Message]) -> String {
    let mut text = format!("# Transcript of the `{agent}` agent\n");
    for message in history {
        for block in &message.content {
            match block {
                ContentBlock::Text { text: t } => {
                    let who = if message.role == Role::User {
                        "task"
                    } else {
                        agent
                    };
                    text.push_str(&format!("\n## {who}\n{t}\n"));
                }
                ContentBlock::ToolUse { name, input, .. } => {
                    text.push_str(&format!("\n### call {name}\n```json\n{input}\n```\n"));
                }
                ContentBlock::ToolResult {
                    content, is_error, ..
                } => {
                    let what = if *is_error { "error" } else { "result" };
                    text.push_str(&format!("\n### {what}\n```\n{content}\n```\n"));
                }
                _ => {}
            }
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_answer_is_cut_and_points_at_the_transcript() {
        let outcome = Outcome {
            index: 1,
            agent: "file".into(),
            ending: "done".into(),
            answer: "x".repeat(agents::ANSWER_MAX_CHARS + 10),
            requests: 2,
            transcript: Some("/s/agent-file-task2.md".into()),
        };
        let text = render_section(&outcome);
        assert!(
            text.starts_with("## Task 2 · file · done (2 requests)\n"),
            "{text}"
        );
        assert!(text.contains("\nTranscript: /s/agent-file-task2.md\n"));
        assert_eq!(text.matches('x').count(), agents::ANSWER_MAX_CHARS);
        assert!(text.ends_with("at the end of the transcript]"));
    }
}
