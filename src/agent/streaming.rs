//! One response: streamed with retries, its usage booked and its cost reported, and the answer
//! appended to the history.

use super::*;

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

impl Agent {
    /// Streams a response, sending the request again after a retryable failure that came before
    /// any output (429, 529, 5xx, a dropped connection): exponential backoff with jitter, or the
    /// provider's `Retry-After`, at most `max_retries` times. A failure after output began is not
    /// retried: the user already saw part of an answer.
    pub(super) async fn stream_with_retries(
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

    /// Streams one response, emitting deltas and usage as they arrive.
    pub(super) async fn stream_response(
        &mut self,
        request: ModelRequest,
        turn: u32,
        cancel: &CancellationToken,
    ) -> (Response, Option<ProviderError>) {
        let blocks = ledger::request_blocks(&request);
        let mut blocks = Some(blocks);
        let mut unfinished = Unfinished {
            request_bytes: serde_json::to_vec(&request).map_or(0, |b| b.len()),
            ..Unfinished::default()
        };
        let mut stream = self.provider.stream(request);
        let mut response = Response::default();
        loop {
            let next = tokio::select! {
                _ = cancel.cancelled() => {
                    // Calls that were never run must not enter the history without results.
                    response.tool_calls.clear();
                    response.interrupted = true;
                    self.book_unfinished(turn, unfinished);
                    return (response, None);
                }
                next = stream.next() => next,
            };
            let event = match next {
                None if response.stop.is_some() => return (response, None),
                None => {
                    response.tool_calls.clear();
                    self.book_unfinished(turn, unfinished);
                    let error = ProviderError::Truncated {
                        provider: self.provider.name().to_string(),
                    };
                    return (response, Some(error));
                }
                Some(Err(error)) => {
                    response.tool_calls.clear();
                    self.book_unfinished(turn, unfinished);
                    return (response, Some(error));
                }
                Some(Ok(event)) => event,
            };
            unfinished.started = true;
            match event {
                ProviderEvent::TextDelta(text) => {
                    unfinished.output_bytes += text.len();
                    response.text.push_str(&text);
                    self.emit(AgentEvent::TextDelta { text });
                }
                ProviderEvent::ReasoningDelta(text) => {
                    unfinished.output_bytes += text.len();
                    self.emit(AgentEvent::ReasoningDelta { text });
                }
                ProviderEvent::ReasoningBlock { text, signature } => {
                    response
                        .reasoning
                        .push(ContentBlock::Thinking { text, signature });
                }
                ProviderEvent::ToolCallStarted { name, .. } => {
                    unfinished.output_bytes += name.len();
                }
                ProviderEvent::ToolCallArgs { fragment, .. } => {
                    unfinished.output_bytes += fragment.len();
                }
                ProviderEvent::PartialUsage(usage) => unfinished.partial = Some(usage),
                ProviderEvent::ToolCall { id, name, args } => {
                    // Gemini, Ollama and some compatible servers send no ids (or `call_1` on
                    // every response); results are matched by id, so each must be unique.
                    let id = self.call_ids.unique(id);
                    response.tool_calls.push((id, name, args));
                }
                ProviderEvent::Usage(usage) => {
                    unfinished.booked = true;
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
        self.last_input = usage.total_input();
        let model = self.provider.model().to_string();
        let (cost_usd, warnings) = self
            .book
            .record(&model, &usage, self.options.pricing.as_ref());
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
    pub(super) fn append_assistant(&mut self, response: &Response) {
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

    pub(super) fn cost_event(&self) -> AgentEvent {
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
