//! The HTTP side every wire client shares: POST a JSON body, classify failures, read SSE.
//!
//! A request is sent from a spawned task that feeds a channel; the `ProviderStream` handed to
//! the agent is the receiving end, so dropping it cancels the request (the task's next send
//! fails and it drops the connection). Three timeouts guard a stream: one for the response
//! headers (first byte), one between two pieces of content (idle) and one for the whole response
//! (`CHATCLI_RESPONSE_TIMEOUT`). Keep-alives (SSE comments, `ping` events) are not content: a
//! server that only pings still times out. SSE is cut by `SseDecoder` in linear time, with a line
//! or an event capped at `MAX_EVENT_BYTES`. Errors keep the provider's own message, reading at
//! most `MAX_ERROR_BODY_BYTES` of an error or HTML body; an HTML page where JSON was expected (a
//! proxy in the way) is reported as such.

use std::time::Duration;

use futures_util::StreamExt;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::{ProviderError, ProviderEvent, ProviderStream};

/// Default wait for response headers, and between two events of a stream.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(90);

/// Default limit for a whole response, first byte to last (`CHATCLI_RESPONSE_TIMEOUT`).
pub const DEFAULT_RESPONSE_TIMEOUT: Duration = Duration::from_secs(600);

/// Longest SSE line or event (or NDJSON line) accepted.
pub const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// Bytes of an error or HTML body read at most; the rest is never downloaded.
pub const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

/// Times a request that failed before any response is sent again at once.
const CONNECTION_RETRIES: u32 = 2;

/// One server-sent event.
#[derive(Debug, Clone, PartialEq)]
pub struct SseEvent {
    /// The `event:` name; empty when the server sent none.
    pub event: String,
    pub data: String,
}

/// Turns SSE events into provider events; one implementation per wire family.
pub trait StreamParser: Send + 'static {
    /// Handles one event.
    fn feed(&mut self, event: &SseEvent) -> Result<Vec<ProviderEvent>, ProviderError>;
    /// The stream ended; returns what is still owed (usage, stop) or an error if it ended early.
    fn finish(&mut self) -> Result<Vec<ProviderEvent>, ProviderError>;
}

/// Cuts a byte stream into events for a `StreamParser`.
pub trait Decoder: Send + 'static {
    /// Takes the next bytes; returns the events they complete.
    fn push(&mut self, bytes: &[u8]) -> Result<Vec<SseEvent>, ProviderError>;
    /// The stream ended; returns what is left.
    fn end(&mut self) -> Result<Vec<SseEvent>, ProviderError>;
    /// Bytes of the event still in progress (not keep-alives), for decoders that can tell:
    /// growth counts as content. `None` makes every chunk count as content.
    fn content_bytes(&self) -> Option<u64> {
        None
    }
}

fn too_long(what: &str) -> ProviderError {
    ProviderError::Protocol {
        provider: String::new(),
        message: format!(
            "{what} longer than {} MiB; the stream was stopped",
            MAX_EVENT_BYTES / (1024 * 1024)
        ),
    }
}

/// Newline-delimited JSON: each non-empty line is one event.
#[derive(Default)]
pub struct LineDecoder {
    pending: Vec<u8>,
}

impl Decoder for LineDecoder {
    fn push(&mut self, bytes: &[u8]) -> Result<Vec<SseEvent>, ProviderError> {
        let mut out = Vec::new();
        // Only the new bytes are scanned: a long line arriving in pieces stays linear.
        for piece in bytes.split_inclusive(|b| *b == b'\n') {
            if self.pending.len() + piece.len() > MAX_EVENT_BYTES {
                return Err(too_long("a line"));
            }
            self.pending.extend_from_slice(piece);
            if piece.last() == Some(&b'\n') {
                let line = std::mem::take(&mut self.pending);
                let text = String::from_utf8_lossy(&line).trim().to_string();
                if !text.is_empty() {
                    out.push(SseEvent {
                        event: String::new(),
                        data: text,
                    });
                }
            }
        }
        Ok(out)
    }

    fn end(&mut self) -> Result<Vec<SseEvent>, ProviderError> {
        let text = String::from_utf8_lossy(&std::mem::take(&mut self.pending))
            .trim()
            .to_string();
        Ok(if text.is_empty() {
            Vec::new()
        } else {
            vec![SseEvent {
                event: String::new(),
                data: text,
            }]
        })
    }
}

/// Server-sent events (the WHATWG `text/event-stream` format), cut in linear time: each byte is
/// looked at once, a line or an event past `MAX_EVENT_BYTES` is an error, comments are dropped.
#[derive(Default)]
pub struct SseDecoder {
    line: Vec<u8>,
    /// The previous chunk ended with `\r`: a `\n` starting this one belongs to it.
    after_cr: bool,
    started: bool,
    event: String,
    data: String,
    /// The line in progress is a comment (its bytes are not content).
    in_comment: bool,
}

impl SseDecoder {
    fn take_line(&mut self, out: &mut Vec<SseEvent>) -> Result<(), ProviderError> {
        let mut raw = std::mem::take(&mut self.line);
        self.in_comment = false;
        if !self.started {
            self.started = true;
            if raw.starts_with(&[0xEF, 0xBB, 0xBF]) {
                raw.drain(..3);
            }
        }
        if raw.is_empty() {
            if !self.data.is_empty() {
                let mut data = std::mem::take(&mut self.data);
                if data.ends_with('\n') {
                    data.pop();
                }
                let event = match std::mem::take(&mut self.event) {
                    e if e.is_empty() => "message".to_string(),
                    e => e,
                };
                out.push(SseEvent { event, data });
            } else {
                self.event.clear();
            }
            return Ok(());
        }
        if raw.first() == Some(&b':') {
            return Ok(());
        }
        let line = String::from_utf8_lossy(&raw);
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (&*line, ""),
        };
        match field {
            "event" => self.event = value.to_string(),
            "data" => {
                if self.data.len() + value.len() + 1 > MAX_EVENT_BYTES {
                    return Err(too_long("an event"));
                }
                self.data.push_str(value);
                self.data.push('\n');
            }
            _ => {}
        }
        Ok(())
    }
}

impl Decoder for SseDecoder {
    fn push(&mut self, mut bytes: &[u8]) -> Result<Vec<SseEvent>, ProviderError> {
        let mut out = Vec::new();
        if self.after_cr
            && let Some(rest) = bytes.strip_prefix(b"\n")
        {
            bytes = rest;
        }
        self.after_cr = false;
        while !bytes.is_empty() {
            let end = bytes.iter().position(|b| *b == b'\n' || *b == b'\r');
            let (piece, rest) = bytes.split_at(end.unwrap_or(bytes.len()));
            if self.line.is_empty() && piece.first() == Some(&b':') {
                self.in_comment = true;
            }
            if self.line.len() + piece.len() > MAX_EVENT_BYTES {
                return Err(too_long("a line"));
            }
            self.line.extend_from_slice(piece);
            if end.is_none() {
                break;
            }
            // `rest` starts with the `\r` or `\n` that ended the line.
            let after = match rest {
                [b'\r', b'\n', after @ ..] => after,
                [b'\r'] => {
                    self.after_cr = true;
                    &[]
                }
                [_, after @ ..] => after,
                [] => &[],
            };
            self.take_line(&mut out)?;
            bytes = after;
        }
        Ok(out)
    }

    fn end(&mut self) -> Result<Vec<SseEvent>, ProviderError> {
        // An event without its blank line is incomplete (a cut stream): dropped, as the spec
        // says; the parser's `finish` then reports the truncation.
        self.line.clear();
        self.data.clear();
        self.event.clear();
        Ok(Vec::new())
    }

    fn content_bytes(&self) -> Option<u64> {
        let line = if self.in_comment { 0 } else { self.line.len() };
        Some((line + self.data.len()) as u64)
    }
}

/// Whether an event only keeps the connection alive (`ping` events, empty data).
pub fn is_keep_alive(event: &SseEvent) -> bool {
    let data = event.data.trim();
    event.event == "ping"
        || data.is_empty()
        || (data.len() < 64
            && (data.contains(r#""type":"ping""#) || data.contains(r#""type": "ping""#)))
}

/// How long a stream may take: between two pieces of content, and in all.
#[derive(Debug, Clone, Copy)]
pub struct StreamLimits {
    pub idle: Duration,
    pub response: Duration,
}

/// A JSON POST about to be sent.
pub struct HttpRequest {
    pub provider: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: serde_json::Value,
}

/// The shared client: connection pool and timeouts.
#[derive(Clone)]
pub struct Http {
    client: reqwest::Client,
    pub first_byte_timeout: Duration,
    pub idle_timeout: Duration,
    /// Longest a whole response may take (`CHATCLI_RESPONSE_TIMEOUT`).
    pub response_timeout: Duration,
    /// Largest request body sent, in bytes (`CHATCLI_MAX_REQUEST_BYTES`).
    pub max_request_bytes: usize,
    /// Prompt-cache hints in requests (`CHATCLI_PROMPT_CACHE`); off strips them before sending.
    pub prompt_cache: bool,
}

/// Default request body cap: 32 MiB.
pub const DEFAULT_MAX_REQUEST_BYTES: usize = 32 * 1024 * 1024;

impl Default for Http {
    fn default() -> Self {
        Http::new(DEFAULT_TIMEOUT, DEFAULT_TIMEOUT)
    }
}

impl Http {
    /// A client with these timeouts.
    pub fn new(first_byte_timeout: Duration, idle_timeout: Duration) -> Self {
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(20))
            .user_agent(concat!("chatcli/", env!("CARGO_PKG_VERSION")))
            .build()
            .unwrap_or_else(|_| reqwest::Client::new());
        Http {
            client,
            first_byte_timeout,
            idle_timeout,
            response_timeout: DEFAULT_RESPONSE_TIMEOUT,
            max_request_bytes: DEFAULT_MAX_REQUEST_BYTES,
            prompt_cache: true,
        }
    }

    /// Sends the request and streams the parsed SSE response.
    pub fn stream_sse<P: StreamParser>(&self, request: HttpRequest, parser: P) -> ProviderStream {
        self.stream_decoded(request, SseDecoder::default(), parser)
    }

    /// Sends the request and streams a response that `decoder` cuts into events (SSE, NDJSON
    /// lines for Ollama, AWS event-stream frames for Bedrock), each handed to `parser`.
    pub fn stream_decoded<D: Decoder, P: StreamParser>(
        &self,
        request: HttpRequest,
        decoder: D,
        parser: P,
    ) -> ProviderStream {
        let (tx, rx) = mpsc::channel::<Result<ProviderEvent, ProviderError>>(64);
        let http = self.clone();
        tokio::spawn(async move {
            let provider = request.provider.clone();
            let started = Instant::now();
            let limits = StreamLimits {
                idle: http.idle_timeout,
                response: http.response_timeout,
            };
            let result = async {
                let response = http.send(request).await?;
                drive(
                    response.bytes_stream(),
                    &provider,
                    limits,
                    started,
                    decoder,
                    parser,
                    &tx,
                )
                .await
            }
            .await;
            if let Err(error) = result {
                let _ = tx.send(Err(error)).await;
            }
        });
        Box::pin(futures_util::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|item| (item, rx))
        }))
    }

    /// POSTs the body; a non-success status becomes a `ProviderError::Http` with the server's message.
    pub async fn send(&self, request: HttpRequest) -> Result<reqwest::Response, ProviderError> {
        let HttpRequest {
            provider,
            url,
            mut headers,
            mut body,
        } = request;
        if !self.prompt_cache {
            super::cache_markers::strip_body(&mut body);
            super::cache_markers::strip_headers(&mut headers);
        }
        let bytes = self.encode(&provider, &body)?;
        let response = self.post(&provider, &url, &headers, bytes).await?;
        checked_response(provider, response).await
    }

    /// The body's bytes, within `max_request_bytes`.
    fn encode(&self, provider: &str, body: &serde_json::Value) -> Result<Vec<u8>, ProviderError> {
        let bytes = serde_json::to_vec(body).map_err(|e| ProviderError::Protocol {
            provider: provider.to_string(),
            message: format!("cannot encode the request: {e}"),
        })?;
        if bytes.len() > self.max_request_bytes {
            return Err(ProviderError::Setup(format!(
                "{provider}: the request body is {:.1} MB, over the cap of {:.1} MB (CHATCLI_MAX_REQUEST_BYTES); /compact the conversation or raise the cap",
                bytes.len() as f64 / 1_048_576.0,
                self.max_request_bytes as f64 / 1_048_576.0
            )));
        }
        Ok(bytes)
    }

    /// Sends the POST until a response begins, within `first_byte_timeout` each time; a
    /// connection that failed before anything was answered is tried again, fresh.
    async fn post(
        &self,
        provider: &str,
        url: &str,
        headers: &[(String, String)],
        bytes: Vec<u8>,
    ) -> Result<reqwest::Response, ProviderError> {
        let mut attempt = 0;
        loop {
            let mut builder = self
                .client
                .post(url)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(bytes.clone());
            for (name, value) in headers {
                builder = builder.header(name, value);
            }
            let sent = tokio::time::timeout(self.first_byte_timeout, builder.send())
                .await
                .map_err(|_| ProviderError::Idle {
                    provider: provider.to_string(),
                    waited_ms: self.first_byte_timeout.as_millis() as u64,
                })?;
            match sent {
                Ok(response) => return Ok(response),
                // A pooled keep-alive connection the server already closed fails before any
                // response ("connection closed before message completed", seen against
                // llama-server): nothing was answered, so sending again on a fresh one is safe.
                Err(e) if attempt < CONNECTION_RETRIES && (e.is_connect() || e.is_request()) => {
                    attempt += 1;
                    tracing::debug!(%provider, attempt, error = %describe_reqwest(&e), "resending on a fresh connection");
                    tokio::time::sleep(Duration::from_millis(50 * attempt as u64)).await;
                }
                Err(e) => {
                    return Err(ProviderError::Transport {
                        provider: provider.to_string(),
                        message: describe_reqwest(&e),
                    });
                }
            }
        }
    }
}

/// A response whose stream may be read: a success that is not an HTML page (a proxy's). Any
/// other status is an error with the server's message and its `Retry-After`.
async fn checked_response(
    provider: String,
    response: reqwest::Response,
) -> Result<reqwest::Response, ProviderError> {
    let status = response.status();
    if status.is_success() {
        let is_html = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/html"));
        if is_html {
            let text = read_bounded(response, MAX_ERROR_BODY_BYTES).await;
            return Err(ProviderError::Protocol {
                provider,
                message: format!(
                    "HTTP {} with an HTML page instead of a stream (a proxy in the way?): {}",
                    status.as_u16(),
                    first_line(&text)
                ),
            });
        }
        return Ok(response);
    }
    // Retry-After in seconds (the HTTP-date form is rare from APIs; it is treated as absent).
    let retry_after = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let text = read_bounded(response, MAX_ERROR_BODY_BYTES).await;
    Err(ProviderError::Http {
        provider,
        status: status.as_u16(),
        message: error_message(&text),
        retry_after,
    })
}

/// What a server's JSON holds at `pointer` (`/delta/text`), `null` when nothing is there: the
/// reading side of `value["delta"]["text"]`, spelled so no index is needed.
pub fn json_at<'a>(value: &'a serde_json::Value, pointer: &str) -> &'a serde_json::Value {
    static NULL: serde_json::Value = serde_json::Value::Null;
    value.pointer(pointer).unwrap_or(&NULL)
}

/// The string a server's JSON holds at `pointer`, if it is one.
pub fn json_str<'a>(value: &'a serde_json::Value, pointer: &str) -> Option<&'a str> {
    value.pointer(pointer).and_then(serde_json::Value::as_str)
}

/// Sets `key` of a request body's JSON object, as `body[key] = value` does (a `null` becomes an
/// object) but without its panic on anything else: a body is always an object, so that is a
/// no-op, never a crash.
pub fn set_field(body: &mut serde_json::Value, key: &str, value: serde_json::Value) {
    if body.is_null() {
        *body = serde_json::Value::Object(serde_json::Map::new());
    }
    if let Some(object) = body.as_object_mut() {
        object.insert(key.to_string(), value);
    }
}

/// The first `cap` bytes of a response body as text (lossy); the rest is never read.
pub async fn read_bounded(response: reqwest::Response, cap: usize) -> String {
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while body.len() < cap {
        match stream.next().await {
            Some(Ok(chunk)) => {
                let room = cap - body.len();
                body.extend_from_slice(chunk.get(..room).unwrap_or(chunk.as_ref()));
            }
            Some(Err(_)) | None => break,
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}

/// Reads `bytes` through `decoder` into `parser`, sending what it yields, until the parser's
/// `Stop`, an error, or a limit: `limits.idle` without content, `limits.response` since `started`.
async fn drive<S, B, E, D, P>(
    mut bytes: S,
    provider: &str,
    limits: StreamLimits,
    started: Instant,
    mut decoder: D,
    mut parser: P,
    tx: &mpsc::Sender<Result<ProviderEvent, ProviderError>>,
) -> Result<(), ProviderError>
where
    S: futures_util::Stream<Item = Result<B, E>> + Unpin,
    B: AsRef<[u8]>,
    E: std::fmt::Display,
    D: Decoder,
    P: StreamParser,
{
    let response_deadline = started + limits.response;
    let mut idle = IdleDeadline {
        at: Instant::now() + limits.idle,
        idle: limits.idle,
        content_seen: decoder.content_bytes().unwrap_or(0),
    };
    let named = |e: ProviderError| match e {
        ProviderError::Protocol {
            provider: p,
            message,
        } if p.is_empty() => ProviderError::Protocol {
            provider: provider.to_string(),
            message,
        },
        other => other,
    };
    loop {
        let deadline = idle.at.min(response_deadline);
        let Ok(next) = tokio::time::timeout_at(deadline, bytes.next()).await else {
            return Err(timed_out(provider, &limits, deadline == response_deadline));
        };
        let (events, at_end) = match next {
            Some(Ok(chunk)) => (decoder.push(chunk.as_ref()).map_err(named)?, false),
            Some(Err(e)) => {
                return Err(ProviderError::Transport {
                    provider: provider.to_string(),
                    message: e.to_string(),
                });
            }
            None => (decoder.end().map_err(named)?, true),
        };
        idle.observe(decoder.content_bytes(), &events);
        if forward(&mut parser, &events, at_end, tx).await? {
            return Ok(());
        }
    }
}

/// When a stream that sent nothing new times out: content moves it, keep-alives do not.
struct IdleDeadline {
    at: Instant,
    idle: Duration,
    /// The decoder's content bytes as of the last chunk.
    content_seen: u64,
}

impl IdleDeadline {
    /// Moves the deadline when a chunk brought content: events that are not keep-alives (comments,
    /// pings), or more content bytes where the decoder counts them (else any chunk counts).
    fn observe(&mut self, content_bytes: Option<u64>, events: &[SseEvent]) {
        match content_bytes {
            None => self.at = Instant::now() + self.idle,
            Some(seen) => {
                if events.iter().any(|e| !is_keep_alive(e)) || seen > self.content_seen {
                    self.at = Instant::now() + self.idle;
                }
                self.content_seen = seen;
            }
        }
    }
}

/// The error of a stream that hit a limit: the whole response's, or the idle one.
fn timed_out(provider: &str, limits: &StreamLimits, whole_response: bool) -> ProviderError {
    if whole_response {
        ProviderError::ResponseTimeout {
            provider: provider.to_string(),
            waited_ms: limits.response.as_millis() as u64,
        }
    } else {
        ProviderError::Idle {
            provider: provider.to_string(),
            waited_ms: limits.idle.as_millis() as u64,
        }
    }
}

/// Parses one chunk's events (and the parser's end, `at_end`) and sends what they yield; returns
/// whether the stream is over: it ended, or the agent dropped it (cancelled).
async fn forward<P: StreamParser>(
    parser: &mut P,
    events: &[SseEvent],
    at_end: bool,
    tx: &mpsc::Sender<Result<ProviderEvent, ProviderError>>,
) -> Result<bool, ProviderError> {
    let mut out = Vec::new();
    for event in events {
        out.extend(parser.feed(event)?);
    }
    if at_end && !next_is_end(&out) {
        out.extend(parser.finish()?);
    }
    let ended = at_end || next_is_end(&out);
    for item in out {
        if tx.send(Ok(item)).await.is_err() {
            // The agent dropped the stream: cancelled. Dropping `bytes` closes the connection.
            return Ok(true);
        }
    }
    Ok(ended)
}

/// Runs a recorded SSE body through `parser` in chunks of `chunk` bytes, as the network would
/// deliver it: the same path as a live response, for fixture tests.
pub async fn replay<P: StreamParser>(
    body: &[u8],
    chunk: usize,
    parser: P,
) -> Result<Vec<ProviderEvent>, ProviderError> {
    let chunks: Vec<Result<Vec<u8>, std::convert::Infallible>> =
        body.chunks(chunk.max(1)).map(|c| Ok(c.to_vec())).collect();
    let (tx, mut rx) = mpsc::channel(body.len().max(16));
    let limits = StreamLimits {
        idle: DEFAULT_TIMEOUT,
        response: DEFAULT_RESPONSE_TIMEOUT,
    };
    let result = drive(
        futures_util::stream::iter(chunks),
        "replay",
        limits,
        Instant::now(),
        SseDecoder::default(),
        parser,
        &tx,
    )
    .await;
    drop(tx);
    let mut events = Vec::new();
    while let Some(item) = rx.recv().await {
        events.push(item?);
    }
    result.map(|()| events)
}

/// Whether a parser's output ends the stream (it holds the `Stop`).
fn next_is_end(out: &[ProviderEvent]) -> bool {
    out.iter().any(|e| matches!(e, ProviderEvent::Stop(_)))
}

/// Sends a token request (an auth exchange, not a model request) and reads its JSON answer;
/// `what` names the request in errors, and `hint` (may be empty) follows an HTTP error.
pub async fn token_json(
    provider: &str,
    request: reqwest::RequestBuilder,
    what: &str,
    hint: &str,
) -> Result<serde_json::Value, ProviderError> {
    let response = request
        .timeout(std::time::Duration::from_secs(30))
        .send()
        .await
        .map_err(|e| ProviderError::Transport {
            provider: provider.into(),
            message: e.to_string(),
        })?;
    let status = response.status();
    let text = response.text().await.unwrap_or_default();
    if !status.is_success() {
        return Err(ProviderError::Http {
            provider: provider.into(),
            status: status.as_u16(),
            message: format!("{what} failed: {}{hint}", error_message(&text)),
            retry_after: None,
        });
    }
    serde_json::from_str(&text).map_err(|e| {
        ProviderError::Setup(format!(
            "{provider}: the {what} answered something that is not JSON: {e}"
        ))
    })
}

/// The provider's own error message from an error body, or the body's first line.
pub fn error_message(body: &str) -> String {
    if let Ok(json) = serde_json::from_str::<serde_json::Value>(body) {
        let candidates = [
            json.pointer("/error/message"),
            json.pointer("/message"),
            json.pointer("/error"),
            json.pointer("/detail"),
        ];
        for candidate in candidates.into_iter().flatten() {
            if let Some(s) = candidate.as_str() {
                return s.to_string();
            }
        }
        return first_line(body);
    }
    let trimmed = body.trim_start();
    if trimmed.starts_with('<') {
        return format!(
            "an HTML page instead of JSON (a proxy in the way?): {}",
            first_line(trimmed)
        );
    }
    if trimmed.is_empty() {
        return "empty response body".to_string();
    }
    first_line(trimmed)
}

fn first_line(text: &str) -> String {
    let line = text.trim_start().lines().next().unwrap_or_default().trim();
    let mut out: String = line.chars().take(200).collect();
    if line.chars().count() > 200 {
        out.push('…');
    }
    out
}

pub(crate) fn describe_reqwest(e: &reqwest::Error) -> String {
    use std::error::Error;
    let mut message = e.to_string();
    let mut source = e.source();
    while let Some(inner) = source {
        message = format!("{message}: {inner}");
        source = inner.source();
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_messages_come_from_the_body() {
        assert_eq!(
            error_message(
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too large"}}"#
            ),
            "max_tokens: too large"
        );
        assert_eq!(
            error_message(r#"{"error":{"message":"Incorrect API key provided"}}"#),
            "Incorrect API key provided"
        );
        assert_eq!(
            error_message("<!DOCTYPE html>\n<html><body>502 Bad Gateway</body></html>"),
            "an HTML page instead of JSON (a proxy in the way?): <!DOCTYPE html>"
        );
        assert_eq!(error_message(""), "empty response body");
    }

    fn decode(chunks: &[&[u8]]) -> Result<Vec<(String, String)>, ProviderError> {
        let mut decoder = SseDecoder::default();
        let mut out = Vec::new();
        for chunk in chunks {
            out.extend(decoder.push(chunk)?);
        }
        out.extend(decoder.end()?);
        Ok(out.into_iter().map(|e| (e.event, e.data)).collect())
    }

    #[test]
    fn sse_lines_end_in_lf_crlf_or_cr_even_split_across_chunks() {
        let events = decode(&[
            b"\xEF\xBB\xBFevent: a\r",
            b"\ndata: one\r\ndata:two\r\r: comment\n",
            b"data: {\"x\":1}\n\nid: 7\nretry: 5\nfield-only\ndata\n\n",
        ])
        .expect("decoded");
        assert_eq!(
            events,
            vec![
                ("a".to_string(), "one\ntwo".to_string()),
                ("message".to_string(), "{\"x\":1}".to_string()),
                ("message".to_string(), String::new()),
            ]
        );
    }

    #[test]
    fn an_event_cut_by_the_end_of_the_stream_is_dropped() {
        assert_eq!(decode(&[b"data: {\"partial"]).expect("decoded"), vec![]);
    }

    #[test]
    fn a_line_past_the_cap_is_an_error_not_a_hang() {
        let mut decoder = SseDecoder::default();
        let piece = vec![b'a'; 1024 * 1024];
        decoder.push(b"data: ").expect("start");
        let mut result = Ok(Vec::new());
        for _ in 0..17 {
            result = decoder.push(&piece);
            if result.is_err() {
                break;
            }
        }
        let err = result.expect_err("capped");
        assert!(
            err.to_string().contains("a line longer than 16 MiB"),
            "{err}"
        );
        let mut lines = LineDecoder::default();
        let mut result = Ok(Vec::new());
        for _ in 0..17 {
            result = lines.push(&piece);
            if result.is_err() {
                break;
            }
        }
        assert!(result.is_err(), "NDJSON lines are capped too");
    }

    #[test]
    fn keep_alives_are_told_from_content() {
        let event = |event: &str, data: &str| SseEvent {
            event: event.into(),
            data: data.into(),
        };
        assert!(is_keep_alive(&event("ping", "{}")));
        assert!(is_keep_alive(&event("message", r#"{"type": "ping"}"#)));
        assert!(is_keep_alive(&event("message", "  ")));
        assert!(!is_keep_alive(&event(
            "content_block_delta",
            r#"{"type":"content_block_delta"}"#
        )));
    }
}
