//! The HTTP side every wire client shares: POST a JSON body, classify failures, read SSE.
//!
//! A request is sent from a spawned task that feeds a channel; the `ProviderStream` handed to
//! the agent is the receiving end, so dropping it cancels the request (the task's next send
//! fails and it drops the connection). Two timeouts guard a stream: one for the response headers
//! (first byte) and one between two SSE events (idle). Errors keep the provider's own message;
//! an HTML page where JSON was expected (a proxy in the way) is reported as such.

use std::time::Duration;

use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use tokio::sync::mpsc;

use super::{ProviderError, ProviderEvent, ProviderStream};

/// Default wait for response headers, and between two events of a stream.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(90);

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
}

/// Newline-delimited JSON: each non-empty line is one event.
#[derive(Default)]
pub struct LineDecoder {
    pending: Vec<u8>,
}

impl Decoder for LineDecoder {
    fn push(&mut self, bytes: &[u8]) -> Result<Vec<SseEvent>, ProviderError> {
        self.pending.extend_from_slice(bytes);
        let mut out = Vec::new();
        while let Some(at) = self.pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=at).collect();
            let text = String::from_utf8_lossy(&line).trim().to_string();
            if !text.is_empty() {
                out.push(SseEvent {
                    event: String::new(),
                    data: text,
                });
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
            max_request_bytes: DEFAULT_MAX_REQUEST_BYTES,
            prompt_cache: true,
        }
    }

    /// Sends the request and streams the parsed SSE response.
    pub fn stream_sse<P: StreamParser>(&self, request: HttpRequest, parser: P) -> ProviderStream {
        let (tx, rx) = mpsc::channel::<Result<ProviderEvent, ProviderError>>(64);
        let http = self.clone();
        tokio::spawn(async move {
            if let Err(error) = http.pump(request, parser, &tx).await {
                let _ = tx.send(Err(error)).await;
            }
        });
        Box::pin(futures_util::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|item| (item, rx))
        }))
    }

    /// Sends the request and streams a response that `decoder` cuts into events (NDJSON lines
    /// for Ollama, AWS event-stream frames for Bedrock), each handed to `parser`.
    pub fn stream_decoded<D: Decoder, P: StreamParser>(
        &self,
        request: HttpRequest,
        mut decoder: D,
        mut parser: P,
    ) -> ProviderStream {
        let (tx, rx) = mpsc::channel::<Result<ProviderEvent, ProviderError>>(64);
        let http = self.clone();
        tokio::spawn(async move {
            let provider = request.provider.clone();
            let result = async {
                let response = http.send(request).await?;
                let mut bytes = response.bytes_stream();
                loop {
                    let next = tokio::time::timeout(http.idle_timeout, bytes.next())
                        .await
                        .map_err(|_| ProviderError::Idle {
                            provider: provider.clone(),
                            waited_ms: http.idle_timeout.as_millis() as u64,
                        })?;
                    let (events, at_end) = match next {
                        Some(Ok(chunk)) => (decoder.push(&chunk)?, false),
                        Some(Err(e)) => {
                            return Err(ProviderError::Transport {
                                provider: provider.clone(),
                                message: e.to_string(),
                            });
                        }
                        None => (decoder.end()?, true),
                    };
                    let mut out = Vec::new();
                    for event in &events {
                        out.extend(parser.feed(event)?);
                    }
                    if at_end && !next_is_end(&out) {
                        out.extend(parser.finish()?);
                    }
                    let ended = at_end || next_is_end(&out);
                    for item in out {
                        if tx.send(Ok(item)).await.is_err() {
                            return Ok(());
                        }
                    }
                    if ended {
                        return Ok(());
                    }
                }
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

    async fn pump<P: StreamParser>(
        &self,
        request: HttpRequest,
        parser: P,
        tx: &mpsc::Sender<Result<ProviderEvent, ProviderError>>,
    ) -> Result<(), ProviderError> {
        let provider = request.provider.clone();
        let response = self.send(request).await?;
        drive(
            response.bytes_stream(),
            &provider,
            self.idle_timeout,
            parser,
            tx,
        )
        .await
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
        let bytes = serde_json::to_vec(&body).map_err(|e| ProviderError::Protocol {
            provider: provider.clone(),
            message: format!("cannot encode the request: {e}"),
        })?;
        if bytes.len() > self.max_request_bytes {
            return Err(ProviderError::Setup(format!(
                "{provider}: the request body is {:.1} MB, over the cap of {:.1} MB (CHATCLI_MAX_REQUEST_BYTES); /compact the conversation or raise the cap",
                bytes.len() as f64 / 1_048_576.0,
                self.max_request_bytes as f64 / 1_048_576.0
            )));
        }
        let mut attempt = 0;
        let response = loop {
            let mut builder = self
                .client
                .post(&url)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(bytes.clone());
            for (name, value) in &headers {
                builder = builder.header(name, value);
            }
            let sent = tokio::time::timeout(self.first_byte_timeout, builder.send())
                .await
                .map_err(|_| ProviderError::Idle {
                    provider: provider.clone(),
                    waited_ms: self.first_byte_timeout.as_millis() as u64,
                })?;
            match sent {
                Ok(response) => break response,
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
                        provider,
                        message: describe_reqwest(&e),
                    });
                }
            }
        };
        let status = response.status();
        if status.is_success() {
            let is_html = response
                .headers()
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("text/html"));
            if is_html {
                let text = response.text().await.unwrap_or_default();
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
        let text = response.text().await.unwrap_or_default();
        Err(ProviderError::Http {
            provider,
            status: status.as_u16(),
            message: error_message(&text),
            retry_after,
        })
    }
}

/// Reads SSE from `bytes` into `parser`, sending what it yields, until the parser's `Stop`.
async fn drive<S, B, E, P>(
    bytes: S,
    provider: &str,
    idle: Duration,
    mut parser: P,
    tx: &mpsc::Sender<Result<ProviderEvent, ProviderError>>,
) -> Result<(), ProviderError>
where
    S: futures_util::Stream<Item = Result<B, E>> + Unpin,
    B: AsRef<[u8]>,
    E: std::fmt::Display,
    P: StreamParser,
{
    let mut events = bytes.eventsource();
    loop {
        let next = tokio::time::timeout(idle, events.next())
            .await
            .map_err(|_| ProviderError::Idle {
                provider: provider.to_string(),
                waited_ms: idle.as_millis() as u64,
            })?;
        let at_end = next.is_none();
        let out = match next {
            None => parser.finish()?,
            Some(Ok(event)) => parser.feed(&SseEvent {
                event: event.event,
                data: event.data,
            })?,
            Some(Err(e)) => {
                return Err(ProviderError::Transport {
                    provider: provider.to_string(),
                    message: e.to_string(),
                });
            }
        };
        let ended = at_end || next_is_end(&out);
        for item in out {
            if tx.send(Ok(item)).await.is_err() {
                // The agent dropped the stream: cancelled. Dropping `events` closes the connection.
                return Ok(());
            }
        }
        if ended {
            return Ok(());
        }
    }
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
    let result = drive(
        futures_util::stream::iter(chunks),
        "replay",
        DEFAULT_TIMEOUT,
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

fn describe_reqwest(e: &reqwest::Error) -> String {
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
}
