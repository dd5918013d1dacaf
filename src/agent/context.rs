//! What each request carries besides the user's words: the memory blocks, the history as
//! sent (microcompacted), the context guard with its summary, and the volatile blocks of the
//! newest user turn.

use super::measure::RequestSize;
use super::thread::{LoggedHistory, message_hash};
use super::*;

/// What is known of a request before it is sent, worked out from the sizes the compactor kept.
#[derive(Debug, Clone)]
pub(super) struct Sent {
    /// The request's length serialised as JSON.
    pub(super) bytes: usize,
    /// The request cut into the cache ledger's blocks.
    pub(super) blocks: Vec<ledger::Block>,
}

/// Opens the memory store for a session and freezes its digest; memory failures only warn.
pub(super) fn open_memory(
    settings: Option<&MemorySettings>,
    secrets: &crate::secrets::Secrets,
) -> (Option<(SharedMemory, MemorySettings)>, String) {
    let Some(settings) = settings.filter(|s| s.mode != MemoryMode::Off) else {
        return (None, String::new());
    };
    match Store::open(&settings.dir) {
        Ok(store) => {
            let store = store.with_secrets(secrets.clone());
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

/// What `/context add` or `/context refresh` says: the files `verb` (attached, re-read) with their
/// tokens, the new total against the cap, and what was skipped.
fn describe_attached(
    verb: &str,
    outcome: &prompt::attachments::Outcome,
    total: u64,
    max: u64,
) -> String {
    let files: Vec<String> = outcome
        .files
        .iter()
        .map(|(path, tokens)| format!("{path} ({tokens} tokens)"))
        .collect();
    let mut text = format!(
        "{verb} {}; attachments now {total} of {max} tokens, sent with the cached prefix",
        if files.is_empty() {
            "nothing".to_string()
        } else {
            files.join(", ")
        }
    );
    if !outcome.skipped.is_empty() {
        text.push_str(&format!("; skipped {}", outcome.skipped.join(", ")));
    }
    text
}

impl Agent {
    /// `/config memory`: the active mode and the store's size.
    pub(super) fn memory_status(&self) -> String {
        let Some((shared, settings)) = &self.stack.memory else {
            return "memory: off (CHATCLI_MEMORY_MODE=off, or the store could not be opened; see the log)".into();
        };
        let (facts, dir) = match shared.lock() {
            Ok(state) => (
                state.store.facts.len(),
                state.store.dir().display().to_string(),
            ),
            Err(_) => (0, String::new()),
        };
        let bytes = crate::files::metadata(&settings.dir.join("facts.jsonl"))
            .map(|m| m.len())
            .unwrap_or(0);
        format!(
            "memory: {} mode · {facts} facts ({} KB) in {dir} · auto-recall {} · HyDE {} · digest {} chars",
            settings.mode.as_str(),
            bytes.div_ceil(1024),
            if settings.autorecall { "on" } else { "off" },
            if settings.hyde { "on" } else { "off" },
            self.stack.digest.chars().count()
        )
    }

    /// The tools a mode offers this session (no `memory` tool when memory is off).
    pub(super) fn tools_for(&self, mode: Mode) -> ToolRegistry {
        if let Some(specialist) = &self.tools.specialist {
            return ToolRegistry::for_mode(Mode::Run).only(&specialist.spec.tools);
        }
        let mut tools = ToolRegistry::for_mode(mode);
        if self.orchestrating(mode) {
            tools = tools.with_tool(Box::new(super::dispatch::DispatchTool(
                self.tools.roster.dispatch_spec(),
            )));
        }
        if mode.uses_tools() && !self.stack.skills.catalog().is_empty() {
            tools = tools.with_skill_tool();
        }
        let tools = if self.stack.memory.is_some() {
            tools
        } else {
            tools.without("memory")
        };
        tools.with_extra(self.mcp_extra(mode))
    }

    /// The stable system blocks of a request in `mode`: a specialist's own, or the session's
    /// stack (`stack::STACK`).
    pub(super) fn system_blocks(&self, mode: Mode) -> Vec<crate::conversation::SystemBlock> {
        if let Some(specialist) = &self.tools.specialist {
            return specialist.spec.system_blocks(&self.tools.ctx.workspace);
        }
        super::stack::blocks(self, mode, super::stack::Placement::Stable)
    }

    /// The frozen digest, when the mode shows it (index mode, and never in chat mode).
    pub(super) fn memory_index(&self, mode: Mode) -> Option<&str> {
        match &self.stack.memory {
            Some((_, settings)) if settings.mode == MemoryMode::Index && mode != Mode::Chat => {
                Some(&self.stack.digest)
            }
            _ => None,
        }
    }

    /// This prompt's volatile memory blocks: (full retrieval, auto-recall). Passive: no access
    /// is counted.
    pub(super) fn memory_blocks(
        &self,
        query: &str,
        mode: Mode,
    ) -> (Option<String>, Option<String>) {
        let Some((shared, settings)) = &self.stack.memory else {
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
            .thread
            .history
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant)
            .map(|m| m.text().chars().take(500).collect())
            .unwrap_or_default();
        // The prompt's own words pick the facts; the last answer only leans the embedding (a
        // follow-up such as "and why?" has no words of its own). Counted as words, the last
        // answer kept recalling the topic the user had just left.
        let extra = (!last_answer.is_empty()).then_some(last_answer.as_str());
        let hits = state.recall(query, extra, 3);
        let facts: Vec<&crate::memory::Fact> =
            hits.iter().map(|i| &state.store.facts[*i]).collect();
        let budget = memory_digest::AUTORECALL_BUDGET - memory_digest::AUTORECALL_HEADER.len() - 1;
        let lines = memory_digest::fact_lines(&facts, budget);
        let recall =
            (!lines.is_empty()).then(|| format!("{}\n{lines}", memory_digest::AUTORECALL_HEADER));
        (None, recall)
    }

    /// The history as the next request sends it, old tool results compacted.
    pub(super) fn render_messages(&mut self) -> Vec<Arc<Message>> {
        let context_share = self.accounts.last_input as f64 / self.context_window() as f64;
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
        self.thread.compactor.render_history(
            &self.thread.history,
            &self.tools.ctx.scratch,
            pressure,
        )
    }

    /// Whether a request of these parts would fill more than 85% of the model's window;
    /// `messages` are the compactor's last render, whose sizes it kept.
    pub(super) fn over_guard(
        &self,
        system: &[crate::conversation::SystemBlock],
        tools: &[crate::conversation::ToolSpec],
        messages: &[Arc<Message>],
    ) -> bool {
        self.request_size(system, tools)
            .over(messages, self.context_window(), summary::GUARD_SHARE)
    }

    /// The size of a request of these parts and the compactor's last render.
    fn request_size(
        &self,
        system: &[crate::conversation::SystemBlock],
        tools: &[crate::conversation::ToolSpec],
    ) -> RequestSize {
        RequestSize::new(system, tools, self.thread.compactor.rendered().sizes())
    }

    /// The context window the server or the catalog reported, if either did.
    pub(super) fn known_context_window(&self) -> Option<u64> {
        self.options
            .context_window
            .or_else(|| self.options.pricing.as_ref().and_then(|p| p.context_window))
            .filter(|w| *w > 0)
    }

    /// The model's context window: never 0, so the guard is never off.
    pub(super) fn context_window(&self) -> u64 {
        self.known_context_window()
            .unwrap_or(super::FALLBACK_CONTEXT_WINDOW)
    }

    /// The request as sent, and what is known of it before it is: `max_tokens` lowered to what
    /// the window has left after its input (`RequestSize::fit_output_limit`), the bridge marker
    /// placed, and its size and ledger blocks from the sizes the compactor kept of its messages
    /// (the compactor's last render). Nothing here serialises the history again.
    pub(super) fn finish_request(&mut self, request: ModelRequest) -> (ModelRequest, Sent) {
        let size = self.request_size(&request.system, &request.tools);
        let request = size.fit_output_limit(request, self.context_window());
        let mut request = self.bridge(request);
        let blocks = ledger::blocks_with(
            &request,
            self.thread.compactor.rendered().blocks().cloned().collect(),
        );
        let bytes = super::measure::request_bytes(&mut request, size.messages);
        (request, Sent { bytes, blocks })
    }

    /// The request with a bridge marker where the last request's rolling marker was, when it
    /// sends that message again unchanged (`ModelRequest::bridge_message`); remembers where this
    /// request's rolling marker goes, for the next.
    pub(super) fn bridge(&mut self, mut request: ModelRequest) -> ModelRequest {
        request.bridge_message = self
            .thread
            .last_marker
            .take()
            .filter(|(i, message)| {
                // The same render shares the message; an equal one rendered anew is as good.
                request
                    .messages
                    .get(*i)
                    .is_some_and(|m| Arc::ptr_eq(m, message) || m == message)
            })
            .map(|(i, _)| i);
        self.thread.last_marker = request
            .rolling_marker()
            .and_then(|i| request.messages.get(i).map(|m| (i, Arc::clone(m))));
        request
    }

    /// The context guard: summary lines for every old result first, then a model summary.
    pub(super) async fn guard_context(
        &mut self,
        system: &[crate::conversation::SystemBlock],
        tools: &[crate::conversation::ToolSpec],
        cancel: &CancellationToken,
    ) -> Vec<Arc<Message>> {
        self.pre_compact_hooks("auto").await;
        self.thread.compactor.force_summaries();
        let messages = self.render_messages();
        self.emit(AgentEvent::Notice {
            message: "context over 85% of the window: old tool results are now sent as one-line summaries".into(),
        });
        if !self.over_guard(system, tools, &messages) {
            return messages;
        }
        if let Err(e) = self.summarize(cancel).await {
            self.emit(AgentEvent::Notice {
                message: e.to_string(),
            });
        }
        self.render_messages()
    }

    /// Replaces older turns by a summary the model writes; `Err` says why nothing changed.
    pub(super) async fn summarize(&mut self, cancel: &CancellationToken) -> Result<(), AgentError> {
        let Some(cut) = summary::cut_point(&self.thread.history) else {
            return Err(AgentError::NothingToCompact(summary::KEEP_MESSAGES));
        };
        self.emit(AgentEvent::Notice {
            message: format!("compacting: summarising {cut} earlier messages (one extra request)"),
        });
        // A one-off request: its prefix is copied so the prompt can merge into its last message.
        let mut prefix: Vec<Message> = self
            .render_messages()
            .iter()
            .take(cut)
            .map(|m| Message::clone(m))
            .collect();
        push_user_text(&mut prefix, summary::SUMMARY_REQUEST.to_string());
        let request = ModelRequest {
            model: self.provider.model().to_string(),
            system: prompt::stable_blocks(Mode::Chat, &self.tools.ctx.workspace, &[], None),
            tools: Vec::new(),
            messages: crate::conversation::shared(prefix),
            max_output_tokens: 1024,
            session_id: self.options.session_id.clone(),
            effort: None,
            settled_messages: None,
            bridge_message: None,
        };
        let mut stream = self.provider.stream(request);
        let mut text = String::new();
        loop {
            let next = tokio::select! {
                _ = cancel.cancelled() => return Err(AgentError::CompactionCancelled),
                next = stream.next() => next,
            };
            match next {
                None => break,
                Some(Err(e)) => return Err(AgentError::CompactionFailed(e)),
                Some(Ok(ProviderEvent::TextDelta(t))) => text.push_str(&t),
                Some(Ok(ProviderEvent::Usage(usage))) => self.record_usage(0, usage),
                Some(Ok(ProviderEvent::Stop(_))) => break,
                Some(Ok(_)) => {}
            }
        }
        if text.trim().is_empty() {
            return Err(AgentError::EmptySummary);
        }
        let replaced: usize = self.thread.history[..cut]
            .iter()
            .map(|m| serde_json::to_vec(m).map_or(0, |b| b.len()))
            .sum();
        // Where each prompt starts after the fold: the kept messages move up to just after the
        // summary (or into the message that carries it); prompts inside the fold are gone.
        let merged = self
            .thread
            .history
            .get(cut)
            .is_some_and(|m| m.role == Role::User);
        self.thread.history = summary::fold(&self.thread.history, cut, text.trim()).into();
        for (number, start) in self.thread.prompt_starts.iter_mut().enumerate() {
            match *start {
                Some(at) if at >= cut => *start = Some(at - cut + usize::from(!merged)),
                Some(_) => {
                    *start = None;
                    self.thread.folded_prompts = self.thread.folded_prompts.max(number + 1);
                }
                None => {}
            }
        }
        self.emit(AgentEvent::Notice {
            message: format!(
                "compacted: {cut} earlier messages (~{} tokens) replaced by a summary of ~{} tokens",
                crate::tokens::rough(replaced),
                crate::tokens::rough(text.trim().len())
            ),
        });
        self.sink.append_history(&HistoryRecord::HistoryReset {
            messages: self.thread.history.to_vec(),
        });
        self.thread.logged = LoggedHistory::of(&self.thread.history);
        // The volatile blocks rode in the folded messages: send them again.
        self.stack.volatile = VolatileTracker::default();
        self.stack.skills.forget_sent();
        Ok(())
    }

    /// Writes the history changes since the last sync to the session log: new messages, and the
    /// last logged one again if it changed in place (a merged prompt, an attached context block).
    pub(super) fn sync_history(&mut self) {
        let from = self.thread.logged.len.saturating_sub(1);
        for (index, message) in self.thread.history.iter().enumerate().skip(from) {
            let unchanged = index + 1 == self.thread.logged.len
                && self.thread.logged.last == Some(message_hash(message));
            if !unchanged {
                self.sink.append_history(&HistoryRecord::History {
                    index,
                    message: message.clone(),
                });
            }
        }
        self.thread.logged = LoggedHistory::of(&self.thread.history);
    }

    /// The prompt's `@` mentions and the text that inlines them (off the agent task: it reads
    /// files and runs git); a notice says what was inlined.
    pub(super) async fn expand_mentions(
        &mut self,
        text: &str,
    ) -> (Vec<prompt::mentions::Mention>, Option<String>) {
        let cwd = self.tools.ctx.workspace.clone();
        let probe = text.to_string();
        let found = {
            let cwd = cwd.clone();
            tokio::task::spawn_blocking(move || prompt::mentions::find(&probe, &cwd))
                .await
                .unwrap_or_default()
        };
        let git = match found
            .iter()
            .any(|m| m.target == prompt::mentions::Target::Git)
        {
            true => Some(prompt::mentions::git_summary(&cwd, &self.tools.ctx.sandbox).await),
            false => None,
        };
        let (mentions, inlined, images) = tokio::task::spawn_blocking(move || {
            let inlined =
                (!found.is_empty()).then(|| prompt::mentions::expand(&found, &cwd, git.as_deref()));
            let images = super::images::load_mentioned(&found, &cwd);
            (found, inlined, images)
        })
        .await
        .unwrap_or_default();
        self.take_images(images);
        if let Some(inlined) = &inlined {
            let names: Vec<String> = mentions.iter().map(|m| format!("@{}", m.written)).collect();
            self.emit(AgentEvent::Notice {
                message: format!(
                    "inlined {} into this prompt (~{} tokens)",
                    names.join(", "),
                    crate::tokens::rough(inlined.len())
                ),
            });
        }
        (mentions, inlined)
    }

    /// Re-checks the bootstrap files (off the agent task: it touches the disk).
    pub(super) async fn refresh_bootstrap(&mut self) {
        let mut bootstrap = std::mem::take(&mut self.stack.bootstrap);
        let fallback = bootstrap.unloaded();
        self.stack.bootstrap = tokio::task::spawn_blocking(move || {
            bootstrap.refresh();
            bootstrap
        })
        .await
        .unwrap_or(fallback);
    }

    /// Sets this prompt's activated skills (volatile) and says which, when any.
    pub(super) fn activate_skills(
        &mut self,
        text: &str,
        mentioned: &[prompt::mentions::Mention],
        mode: Mode,
    ) {
        let paths: Vec<&std::path::Path> = mentioned.iter().filter_map(|m| m.path()).collect();
        let activation = self.stack.skills.activate(text, &paths, mode);
        let mut parts: Vec<String> = activation
            .sent
            .iter()
            .map(|(name, why)| format!("{name} ({why})"))
            .collect();
        if !activation.referred.is_empty() {
            parts.push(format!(
                "referred to, already in the conversation: {}",
                activation.referred.join(", ")
            ));
        }
        if !activation.left_out.is_empty() {
            parts.push(format!(
                "left out (over 3 skills or CHATCLI_SKILLS_ACTIVE_MAX_CHARS): {}",
                activation.left_out.join(", ")
            ));
        }
        if !parts.is_empty() {
            self.emit(AgentEvent::Notice {
                message: format!(
                    "skills for this prompt: {} (~{} tokens)",
                    parts.join("; "),
                    activation.tokens
                ),
            });
        }
    }

    /// `/context`: changes the attachments (off the agent task: it reads files) or lists what the
    /// prompt carries; the answer is the notice text.
    pub(super) async fn context_command(
        &mut self,
        action: crate::protocol::ContextAction,
    ) -> String {
        use crate::protocol::ContextAction;
        match action {
            ContextAction::List => {
                self.refresh_bootstrap().await;
                self.context_listing()
            }
            ContextAction::Drop { path } => {
                let gone = self.stack.attachments.drop_path(&path);
                if gone.is_empty() {
                    format!("{path} is not attached (/context list shows what is)")
                } else {
                    format!(
                        "dropped {}; attachments now {} tokens",
                        gone.join(", "),
                        self.stack.attachments.total_tokens()
                    )
                }
            }
            ContextAction::Add { paths } => {
                self.change_attachments("/context add", "attached", move |a, cwd| {
                    a.add(cwd, &paths)
                })
                .await
            }
            ContextAction::Refresh => {
                self.change_attachments("/context refresh", "re-read", |a, cwd| a.refresh(cwd))
                    .await
            }
        }
    }

    /// Applies `change` to a copy of the attachments off the async thread (it reads files): on
    /// success the copy replaces them and the answer says what was `verb`, else why `command`
    /// did nothing.
    async fn change_attachments(
        &mut self,
        command: &str,
        verb: &str,
        change: impl FnOnce(
            &mut prompt::attachments::Attachments,
            &std::path::Path,
        )
            -> Result<prompt::attachments::Outcome, prompt::attachments::AttachError>
        + Send
        + 'static,
    ) -> String {
        let cwd = self.tools.ctx.workspace.clone();
        let mut attachments = self.stack.attachments.clone();
        let result = tokio::task::spawn_blocking(move || {
            change(&mut attachments, &cwd).map(|o| (attachments, o))
        })
        .await;
        match result {
            Ok(Ok((attachments, outcome))) => {
                self.stack.attachments = attachments;
                describe_attached(
                    verb,
                    &outcome,
                    self.stack.attachments.total_tokens(),
                    self.stack.attachments.max_tokens(),
                )
            }
            Ok(Err(e)) => format!("{command} refused: {e}"),
            Err(e) => format!("{command} failed: {e}"),
        }
    }

    /// What `/context list` says: the bootstrap files with where they came from, and the
    /// attachments, each with its tokens.
    fn context_listing(&self) -> String {
        let mut lines = vec![
            "bootstrap files (AGENTS.md, SOUL.md, USER.md, IDENTITY.md, RULES.md):".to_string(),
        ];
        if self.stack.bootstrap.files().is_empty() {
            lines.push("  none found in the project root or CHATCLI_HOME".into());
        }
        for file in self.stack.bootstrap.files() {
            lines.push(format!(
                "  {} · {} · {} · {} tokens",
                file.name,
                file.source.as_str(),
                file.path.display(),
                crate::tokens::count(&file.text)
            ));
        }
        lines.push(format!(
            "attachments ({} of {} tokens):",
            self.stack.attachments.total_tokens(),
            self.stack.attachments.max_tokens()
        ));
        if self.stack.attachments.items().is_empty() {
            lines.push("  none (/context add PATH…)".into());
        }
        for item in self.stack.attachments.items() {
            lines.push(format!("  {} · {} tokens", item.path, item.tokens));
        }
        lines.join("\n")
    }

    /// Appends the volatile blocks that changed since they were last sent to the newest user turn.
    pub(super) fn attach_volatile(&mut self) {
        let blocks = self.volatile_now();
        if let Some(text) = self.stack.volatile.pending(&blocks)
            && let Some(last) = self
                .thread
                .history
                .last_mut()
                .filter(|m| m.role == Role::User)
        {
            last.content.push(ContentBlock::Text { text });
        }
    }

    /// The volatile blocks for the next request, in stack order (`stack::STACK`).
    pub(super) fn volatile_now(&self) -> Vec<crate::conversation::SystemBlock> {
        super::stack::blocks(self, self.mode, super::stack::Placement::Volatile)
    }
}
