//! One response: streamed with retries, its usage booked and its cost reported, and the answer
//! appended to the history.
//!
//! Tool calls are announced (`tool_call_started`) as soon as their name is known and complete
//! only when their arguments are whole. The thing a newcomer gets wrong: a call whose arguments
//! are not a complete JSON object (the output limit cut it, the stream dropped) must never run
//! and must never go back to the provider as it came; servers reject such a history for good
//! (llama-server answers HTTP 500 "Failed to parse tool call arguments"). Such a call enters the
//! history with `{}` and a result that says what cut it off.

use super::*;
use std::time::{Duration, Instant};

/// How often a streaming call's byte count is reported.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);

/// The tool-call ids of a session, so that every call gets one of its own.
#[derive(Default)]
pub(super) struct CallIds {
    seen: std::collections::HashSet<String>,
    next: u64,
}

impl CallIds {
    /// The ids already in a (resumed) history.
    pub(super) fn from_history(history: &[Message]) -> Self {
        let seen = history
            .iter()
            .flat_map(|m| &m.content)
            .filter_map(|block| match block {
                ContentBlock::ToolUse { id, .. } => Some(id.clone()),
                _ => None,
            })
            .collect();
        CallIds { seen, next: 0 }
    }

    /// `id` when it is new and not empty, else a fresh `call_s<n>` no call of the session has.
    pub(super) fn unique(&mut self, id: String) -> String {
        let id = if id.is_empty() || self.seen.contains(&id) {
            loop {
                self.next += 1;
                let fresh = format!("call_s{}", self.next);
                if !self.seen.contains(&fresh) {
                    break fresh;
                }
            }
        } else {
            id
        };
        self.seen.insert(id.clone());
        id
    }
}

/// A tool call whose arguments are still streaming.
struct Incoming {
    /// The provider's index for the call (its content block, output item or delta slot).
    index: usize,
    /// The id the provider sent (may be empty).
    raw_id: String,
    /// The session-unique id the call goes by.
    id: String,
    name: String,
    arguments: String,
    done: bool,
    reported: Instant,
}

/// The calls of one response that began streaming.
#[derive(Default)]
struct Receiving {
    calls: Vec<Incoming>,
}

impl Receiving {
    /// The open call a provider event with this index (and maybe id) belongs to.
    fn open(&mut self, index: usize) -> Option<&mut Incoming> {
        self.calls
            .iter_mut()
            .rev()
            .find(|c| !c.done && c.index == index)
    }

    /// The open call a finished `ToolCall` completes: same provider id, else the oldest open.
    fn complete(&mut self, raw_id: &str) -> Option<String> {
        let at = self
            .calls
            .iter()
            .position(|c| !c.done && !raw_id.is_empty() && c.raw_id == raw_id)
            .or_else(|| self.calls.iter().position(|c| !c.done))?;
        self.calls[at].done = true;
        Some(self.calls[at].id.clone())
    }

    /// The calls that began and never completed, closing them.
    fn take_open(&mut self) -> Vec<Incoming> {
        let (open, done) = std::mem::take(&mut self.calls)
            .into_iter()
            .partition(|c| !c.done);
        self.calls = done;
        open
    }
}

/// Why a cut-off call's result says it did not run.
#[derive(Clone, Copy)]
enum CutBy {
    MaxTokens,
    DroppedStream,
    /// The user interrupted: the result says only that.
    Interrupted,
    Malformed,
}

/// The result text of a call that was not run because its arguments are not a JSON object.
fn cut_off_text(args: &serde_json::Value, by: CutBy) -> String {
    let raw = match args {
        serde_json::Value::String(raw) => raw.clone(),
        other => other.to_string(),
    };
    let (shown, cut) = crate::tools::take_chars(&raw, 200);
    let ellipsis = if cut { "…" } else { "" };
    let what = match by {
        CutBy::MaxTokens => {
            "not run: the arguments were cut off by the output limit (max_tokens) before they were a complete JSON object"
        }
        CutBy::DroppedStream => {
            "not run: the arguments were cut off by a dropped stream before they were a complete JSON object"
        }
        CutBy::Interrupted => tools_run::CANCELLED,
        CutBy::Malformed => "invalid arguments: the arguments were not a JSON object (not run)",
    };
    format!(
        "{what}; received: {shown}{ellipsis}. Call the tool again with complete (shorter) arguments."
    )
}

/// Puts `{}` in place of every tool-call input that is not a JSON object; returns how many.
pub(super) fn repair_history(history: &mut [Message]) -> usize {
    let mut repaired = 0;
    for block in history.iter_mut().flat_map(|m| m.content.iter_mut()) {
        if let ContentBlock::ToolUse { input, .. } = block
            && !input.is_object()
        {
            *input = serde_json::json!({});
            repaired += 1;
        }
    }
    repaired
}

/// What is known of a response that may end before its final usage arrives.
#[derive(Default)]
struct Unfinished {
    /// Any event came back: the provider began (and bills) the request.
    started: bool,
    /// The final usage was booked.
    booked: bool,
    /// Usage reported before the end (Anthropic's `message_start`).
    partial: Option<UsageRecord>,
    request_bytes: usize,
    output_bytes: usize,
}

/// One response while it streams: what it says so far and what is known of its cost.
struct Streamed {
    response: Response,
    /// The calls that began streaming.
    receiving: Receiving,
    unfinished: Unfinished,
    /// The request's blocks, for the cache ledger once the usage arrives.
    blocks: Option<Vec<ledger::Block>>,
    /// The `max_tokens` asked for: output that reaches it is at the limit.
    limit: u64,
    /// A call a small model writes as text is run, not shown: its block is held back.
    hold: super::text_calls::Holdback,
}

impl Streamed {
    /// Nothing received yet of the response to `request`, whose size and blocks are `sent`.
    fn for_request(
        request: &ModelRequest,
        sent: context::Sent,
        rule: crate::provider::images::TokenRule,
    ) -> Self {
        Streamed {
            blocks: Some(sent.blocks),
            unfinished: Unfinished {
                // Images by the provider's formula, not their base64 bytes.
                request_bytes: super::images::estimate_bytes(&request.messages, sent.bytes, rule),
                ..Unfinished::default()
            },
            limit: u64::from(request.max_output_tokens),
            hold: super::text_calls::Holdback::new(
                request.tools.iter().map(|t| t.name.clone()).collect(),
            ),
            response: Response::default(),
            receiving: Receiving::default(),
        }
    }
}

impl Agent {
    /// Streams a response, sending the request again after a retryable failure that came before
    /// any output (429, 529, 5xx, a dropped connection): exponential backoff with jitter, or the
    /// provider's `Retry-After`, at most `max_retries` times. A failure after output began is not
    /// retried: the user already saw part of an answer. The request comes with its size and
    /// ledger blocks (`context::Sent`), worked out without serialising the history again.
    pub(super) async fn stream_with_retries(
        &mut self,
        (request, sent): (ModelRequest, context::Sent),
        turn: u32,
        cancel: &CancellationToken,
    ) -> (Response, Option<ProviderError>) {
        let mut attempt = 0u32;
        loop {
            let sent_at = tokio::time::Instant::now();
            let (response, error) = self
                .stream_response(request.clone(), sent.clone(), turn, cancel)
                .await;
            let Some(error) = error else {
                self.arm_keepwarm(request, sent_at);
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
                _ = cancel.cancelled() => {
                    // Interrupted while waiting to retry: the turn ends as interrupted, never as
                    // an (empty) answer.
                    let response = Response {
                        interrupted: true,
                        ..response
                    };
                    return (response, None);
                }
                _ = tokio::time::sleep(wait) => {}
            }
        }
    }

    /// Shows what the holdback still holds once the response ended, unless it was a call.
    fn release_held(&mut self, hold: &mut super::text_calls::Holdback) {
        let text = hold.finish();
        if !text.is_empty() {
            self.emit(AgentEvent::TextDelta { text });
        }
    }

    /// Streams one response, emitting deltas and usage as they arrive.
    pub(super) async fn stream_response(
        &mut self,
        request: ModelRequest,
        sent: context::Sent,
        turn: u32,
        cancel: &CancellationToken,
    ) -> (Response, Option<ProviderError>) {
        let rule = crate::provider::images::rule_for(self.provider.name());
        let mut streamed = Streamed::for_request(&request, sent, rule);
        let mut stream = self.provider.stream(request);
        loop {
            let next = tokio::select! {
                _ = cancel.cancelled() => return self.end_interrupted(streamed, turn),
                next = stream.next() => next,
            };
            let event = match next {
                None if streamed.response.stop.is_some() => return self.end_complete(streamed),
                None => {
                    let error = ProviderError::Truncated {
                        provider: self.provider.name().to_string(),
                    };
                    return self.end_dropped(streamed, turn, error);
                }
                Some(Err(error)) => return self.end_dropped(streamed, turn, error),
                Some(Ok(event)) => event,
            };
            streamed.unfinished.started = true;
            self.take_event(&mut streamed, turn, event);
        }
    }

    /// Folds one provider event into the response, telling the front end what it shows.
    fn take_event(&mut self, streamed: &mut Streamed, turn: u32, event: ProviderEvent) {
        match event {
            ProviderEvent::TextDelta(text) => {
                streamed.unfinished.output_bytes += text.len();
                streamed.response.text.push_str(&text);
                let shown = streamed.hold.push(&text);
                if !shown.is_empty() {
                    self.emit(AgentEvent::TextDelta { text: shown });
                }
            }
            ProviderEvent::ReasoningDelta(text) => {
                streamed.unfinished.output_bytes += text.len();
                self.emit(AgentEvent::ReasoningDelta { text });
            }
            ProviderEvent::ReasoningBlock { text, signature } => {
                streamed
                    .response
                    .reasoning
                    .push(ContentBlock::Thinking { text, signature });
            }
            ProviderEvent::ToolCallStarted { index, id, name } => {
                streamed.unfinished.output_bytes += name.len();
                self.start_call(&mut streamed.receiving, index, id, name);
            }
            ProviderEvent::ToolCallArgs { index, fragment } => {
                streamed.unfinished.output_bytes += fragment.len();
                self.continue_call(&mut streamed.receiving, index, &fragment);
            }
            ProviderEvent::PartialUsage(usage) => streamed.unfinished.partial = Some(usage),
            ProviderEvent::ToolCall { id, name, args } => {
                // Gemini, Ollama and some compatible servers send no ids (or `call_1` on
                // every response); results are matched by id, so each must be unique.
                let id = match streamed.receiving.complete(&id) {
                    Some(started) => started,
                    None => self.thread.call_ids.unique(id),
                };
                streamed.response.tool_calls.push((id, name, args));
            }
            ProviderEvent::Usage(usage) => self.take_usage(streamed, turn, usage),
            ProviderEvent::Notice(message) => self.emit(AgentEvent::Notice { message }),
            ProviderEvent::Stop(reason) => streamed.response.stop = Some(reason),
        }
    }

    /// A call whose name arrived: announced under a session-unique id, unless it is the open
    /// call at this index said again.
    fn start_call(&mut self, receiving: &mut Receiving, index: usize, id: String, name: String) {
        let repeated = receiving
            .open(index)
            .is_some_and(|c| id.is_empty() || c.raw_id.is_empty() || c.raw_id == id);
        if repeated {
            return;
        }
        let unique = self.thread.call_ids.unique(id.clone());
        self.emit(AgentEvent::ToolCallStarted {
            id: unique.clone(),
            name: name.clone(),
        });
        receiving.calls.push(Incoming {
            index,
            raw_id: id,
            id: unique,
            name,
            arguments: String::new(),
            done: false,
            reported: Instant::now(),
        });
    }

    /// More of an open call's arguments; their byte count is reported every `PROGRESS_EVERY`.
    fn continue_call(&mut self, receiving: &mut Receiving, index: usize, fragment: &str) {
        let Some(call) = receiving.open(index) else {
            return;
        };
        call.arguments.push_str(fragment);
        if call.reported.elapsed() >= PROGRESS_EVERY {
            call.reported = Instant::now();
            let event = AgentEvent::ToolCallProgress {
                id: call.id.clone(),
                bytes: call.arguments.len() as u64,
            };
            self.emit(event);
        }
    }

    /// The response's final usage: booked, and checked against the cache ledger (a miss is
    /// reported with the block that caused it).
    fn take_usage(&mut self, streamed: &mut Streamed, turn: u32, usage: UsageRecord) {
        streamed.response.at_limit = usage.output >= streamed.limit;
        streamed.unfinished.booked = true;
        self.record_usage(turn, usage);
        let now = self.options.clock.now_secs();
        if let Some(miss) = streamed
            .blocks
            .take()
            .and_then(|b| self.accounts.ledger.record(b, &usage, now))
        {
            let words = miss.expiry_words(
                self.options
                    .pricing
                    .as_ref()
                    .map(|p| p.rewrite_cost(miss.rewritten_tokens, &usage)),
            );
            if words != miss.block {
                accounting::lock(&self.accounts.book)
                    .expiries
                    .push(words.clone());
            }
            self.emit(AgentEvent::CacheMiss {
                block: words,
                rewritten_tokens: miss.rewritten_tokens,
                expected_read: miss.expected_read,
                actual_read: miss.actual_read,
            });
        }
    }

    /// The stream ended after a stop reason: the response is kept, calls cut off mid-stream
    /// with it.
    fn end_complete(&mut self, mut streamed: Streamed) -> (Response, Option<ProviderError>) {
        self.keep_cut_off(&mut streamed.receiving, &mut streamed.response);
        self.release_held(&mut streamed.hold);
        (streamed.response, None)
    }

    /// The user interrupted: no call of the response runs, what it cost so far is booked.
    fn end_interrupted(
        &mut self,
        mut streamed: Streamed,
        turn: u32,
    ) -> (Response, Option<ProviderError>) {
        // Calls that were never run must not enter the history without results.
        streamed.response.tool_calls.clear();
        self.close_unfinished(&mut streamed.receiving, CutBy::Interrupted);
        streamed.response.interrupted = true;
        self.book_unfinished(turn, streamed.unfinished);
        self.release_held(&mut streamed.hold);
        (streamed.response, None)
    }

    /// The stream failed or ended without a stop reason: no call of the response runs, what it
    /// cost so far is booked, and `error` says why.
    fn end_dropped(
        &mut self,
        mut streamed: Streamed,
        turn: u32,
        error: ProviderError,
    ) -> (Response, Option<ProviderError>) {
        streamed.response.tool_calls.clear();
        self.close_unfinished(&mut streamed.receiving, CutBy::DroppedStream);
        self.book_unfinished(turn, streamed.unfinished);
        self.release_held(&mut streamed.hold);
        (streamed.response, Some(error))
    }

    /// A response that finished with calls still streaming (the output limit hit mid-call on a
    /// wire that sends no "done" for it): they join its calls, arguments as received, so they
    /// are answered as cut off.
    fn keep_cut_off(&mut self, receiving: &mut Receiving, response: &mut Response) {
        for call in receiving.take_open() {
            response.tool_calls.push((
                call.id,
                call.name,
                serde_json::Value::String(call.arguments),
            ));
        }
    }

    /// Calls of a response that is not kept (the stream dropped, the user interrupted): each
    /// one that began streaming gets a failed `tool_result`, so no front end waits for it. They
    /// are not in the history.
    fn close_unfinished(&mut self, receiving: &mut Receiving, by: CutBy) {
        for call in std::mem::take(&mut receiving.calls) {
            let text = match by {
                CutBy::Interrupted => tools_run::CANCELLED.to_string(),
                _ if call.done => {
                    "not run: the stream dropped before the response was complete".to_string()
                }
                _ => cut_off_text(&serde_json::Value::String(call.arguments), by),
            };
            self.emit(cut_off_event(&call.id, &call.name, text));
        }
    }

    /// Runs a response's calls, except those whose arguments are not a JSON object: those get a
    /// result saying what cut them off and never run. Results come back in call order.
    pub(super) async fn run_or_refuse(
        &mut self,
        tools: &ToolRegistry,
        response: &Response,
        cancel: &CancellationToken,
    ) -> Vec<(ContentBlock, Option<UsageRecord>)> {
        let (runnable, cut): (Vec<tools_run::Call>, Vec<tools_run::Call>) = response
            .tool_calls
            .iter()
            .cloned()
            .partition(|(_, _, args)| args.is_object());
        // `dispatch` runs specialists here, not in the tool layer; a specialist asking for a
        // tool outside its set is refused before anything runs.
        let (dispatches, runnable): (Vec<tools_run::Call>, Vec<tools_run::Call>) =
            runnable.into_iter().partition(|(_, name, _)| {
                name == crate::agents::DISPATCH
                    && self.tools.specialist.is_none()
                    && tools.get(name).is_some()
            });
        let (refused, runnable): (Vec<tools_run::Call>, Vec<tools_run::Call>) = runnable
            .into_iter()
            .partition(|(_, name, _)| self.refuses(name));
        let (planning, runnable): (Vec<tools_run::Call>, Vec<tools_run::Call>) = runnable
            .into_iter()
            .partition(|(_, name, args)| self.refused_by_plan(tools, name, args));
        let mut results = if runnable.is_empty() {
            Vec::new()
        } else {
            tools_run::run_calls(
                tools,
                &self.tools.ctx,
                &runnable,
                &self.tools.approvals,
                &self.tools.gate,
                cancel,
                &self.sink,
            )
            .await
        };
        for call in &refused {
            results.push(self.refuse(call));
        }
        for call in &planning {
            results.push(self.refuse_in_plan_mode(call));
        }
        for call in &dispatches {
            results.push(self.dispatch(call, cancel).await);
        }
        for (id, name, args) in cut {
            let limited = response.at_limit || response.stop == Some(StopReason::MaxTokens);
            let by = match &args {
                serde_json::Value::String(_) if limited => CutBy::MaxTokens,
                _ => CutBy::Malformed,
            };
            let text = cut_off_text(&args, by);
            self.emit(AgentEvent::ToolCall {
                id: id.clone(),
                name: name.clone(),
                args,
            });
            self.emit(cut_off_event(&id, &name, text.clone()));
            results.push((
                ContentBlock::ToolResult {
                    tool_use_id: id,
                    content: text,
                    is_error: true,
                },
                None,
            ));
        }
        let position = |block: &ContentBlock| match block {
            ContentBlock::ToolResult { tool_use_id, .. } => response
                .tool_calls
                .iter()
                .position(|(id, _, _)| id == tool_use_id),
            _ => None,
        };
        results.sort_by_key(|(block, _)| position(block));
        results
    }

    /// Books a response that ended without its final usage (interrupted, dropped, failed after
    /// it began): the usage the provider reported so far, else an estimate; both flagged
    /// `estimated`. A request that never got a byte back is not booked: nothing is known of it.
    fn book_unfinished(&mut self, turn: u32, unfinished: Unfinished) {
        if unfinished.booked || !unfinished.started {
            return;
        }
        let output = crate::tokens::rough(unfinished.output_bytes);
        let usage = match unfinished.partial {
            Some(partial) => UsageRecord {
                output: partial.output.max(output),
                estimated: true,
                ..partial
            },
            None => UsageRecord {
                uncached_input: crate::tokens::rough(unfinished.request_bytes),
                output,
                estimated: true,
                ..UsageRecord::default()
            },
        };
        self.record_usage(turn, usage);
    }

    pub(super) fn record_usage(&mut self, turn: u32, usage: UsageRecord) {
        self.accounts.last_input = usage.total_input();
        self.accounts.last_usage = usage;
        self.count_specialist_usage(&usage);
        let model = self.model_name();
        let agent = self
            .tools
            .specialist
            .as_ref()
            .map_or(accounting::MAIN_AGENT, |s| s.spec.name.as_str());
        let (cost_usd, warnings) = accounting::lock(&self.accounts.book).record_for(
            agent,
            &model,
            &usage,
            self.options.pricing.as_ref(),
        );
        self.emit(AgentEvent::Usage {
            turn,
            usage: usage.figures(),
            cost_usd,
        });
        for message in warnings {
            self.emit(AgentEvent::Notice { message });
        }
    }

    /// What `/cost` shows.
    pub(super) fn cost_report(&self) -> AgentEvent {
        let book = accounting::lock(&self.accounts.book);
        let t = &book.totals;
        // The rule rides in the model's name: `/cost` shows it without a field of its own.
        AgentEvent::CostReport {
            provider: self.provider.label(),
            model: format!(
                "{} ({})",
                self.provider.model(),
                self.options.pricing_rule.phrase()
            ),
            requests: book.requests,
            uncached_input_tokens: t.uncached_input,
            input_tokens: t.total_input(),
            output_tokens: t.output,
            cache_read_tokens: t.cache_read,
            cache_creation_tokens: t.cache_write(),
            cost_usd: book.cost_usd,
            saved_usd: book.saved_usd,
            budget_usd: book.budget_usd,
            by_model: book.by_model.clone(),
            by_agent: book.by_agent.clone(),
            images: self.tools.ctx.images.tally().0,
            image_tokens: self.tools.ctx.images.tally().1,
            expiries: book.expiries.clone(),
        }
    }

    /// Appends what the model said, if anything; tool calls go in only when the response finished.
    pub(super) fn append_assistant(&mut self, response: &Response) {
        let mut content = response.reasoning.clone();
        if !response.text.is_empty() {
            content.push(ContentBlock::Text {
                text: response.text.clone(),
            });
        }
        for (id, name, input) in &response.tool_calls {
            // Arguments that are not a JSON object are never sent back as they came.
            let input = if input.is_object() {
                input.clone()
            } else {
                serde_json::json!({})
            };
            content.push(ContentBlock::ToolUse {
                id: id.clone(),
                name: name.clone(),
                input,
            });
        }
        if content.is_empty() {
            return;
        }
        self.thread.history.push(Message {
            role: Role::Assistant,
            content,
        });
    }

    pub(super) fn cost_event(&self) -> AgentEvent {
        let book = accounting::lock(&self.accounts.book);
        let t = &book.totals;
        AgentEvent::Cost {
            input_tokens: t.total_input(),
            output_tokens: t.output,
            cache_read_tokens: t.cache_read,
            cache_creation_tokens: t.cache_write(),
            cost_usd: book.cost_usd,
            pricing: Some(self.options.pricing_rule.phrase()),
            price_estimated: self.options.pricing_rule.estimated(),
        }
    }
}

/// The failed `tool_result` of a call that was not run.
fn cut_off_event(id: &str, name: &str, text: String) -> AgentEvent {
    tools_run::failed_event(id, name, text.clone(), text, 0)
}
