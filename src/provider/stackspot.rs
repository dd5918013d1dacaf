//! StackSpot AI: an agent behind client credentials, with the conversation kept server-side.
//!
//! `STACKSPOT_CLIENT_ID` and `STACKSPOT_CLIENT_SECRET` (the reference system's `CLIENT_ID` and
//! `CLIENT_KEY` too) are exchanged at `idm.stackspot.com/{realm}/oidc/oauth/token`; the chat goes
//! to the agent `STACKSPOT_AGENT_ID` with `user_prompt`, `streaming`, `use_conversation` and the
//! `conversation_id` the server returned. The stream is SSE `data: {"message": …}` deltas; usage
//! comes from `tokens {user, enrichment, input, output}`. There are no client-side tools: in
//! agent mode chatcli says so and runs the prompt as chat.

use std::sync::Arc;

use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::sync::Mutex;

use super::http::{
    Http, HttpRequest, SseEvent, StreamParser, json_at, json_str, set_field, token_json,
};
use super::{Provider, ProviderError, ProviderEvent, ProviderStream, StopReason, UsageRecord};
use crate::conversation::{ContentBlock, ModelRequest, Role};

/// The identity server.
pub const IDM: &str = "https://idm.stackspot.com";
/// The inference server.
pub const INFERENCE: &str = "https://genai-inference-app.stackspot.com";

/// Where and as whom to talk to StackSpot.
#[derive(Debug, Clone)]
pub struct Settings {
    pub idm: String,
    pub inference: String,
    pub realm: String,
    pub client_id: String,
    pub client_secret: String,
    pub agent_id: String,
}

#[derive(Default)]
struct State {
    token: Option<(String, u64)>,
    conversation_id: Option<String>,
}

/// The StackSpot client.
pub struct StackSpot {
    http: Http,
    settings: Settings,
    state: Arc<Mutex<State>>,
}

impl StackSpot {
    /// A client with these settings.
    pub fn new(http: Http, settings: Settings) -> Self {
        StackSpot {
            http,
            settings,
            state: Arc::new(Mutex::new(State::default())),
        }
    }
}

fn setup(message: String) -> ProviderError {
    ProviderError::Setup(format!("stackspot: {message}"))
}

async fn access_token(settings: &Settings, state: &Mutex<State>) -> Result<String, ProviderError> {
    let mut state = state.lock().await;
    if let Some((token, expires)) = &state.token
        && *expires > crate::clock::now_secs() + 60
    {
        return Ok(token.clone());
    }
    let body = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("grant_type", "client_credentials")
        .append_pair("client_id", &settings.client_id)
        .append_pair("client_secret", &settings.client_secret)
        .finish();
    let request = reqwest::Client::new()
        .post(format!(
            "{}/{}/oidc/oauth/token",
            settings.idm.trim_end_matches('/'),
            settings.realm
        ))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(body);
    let v = token_json("stackspot", request, "token request", "").await?;
    let token = json_str(&v, "/access_token")
        .ok_or_else(|| setup("no access_token in the token answer".into()))?
        .to_string();
    let lifetime = v.get("expires_in").and_then(Value::as_u64).unwrap_or(600);
    let expires = crate::clock::now_secs() + lifetime;
    state.token = Some((token.clone(), expires));
    Ok(token)
}

/// The newest user text (the server keeps the rest of the conversation).
fn user_prompt(request: &ModelRequest) -> String {
    request
        .messages
        .iter()
        .rev()
        .find(|m| m.role == Role::User)
        .map(|m| {
            m.content
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::Text { text } => Some(text.as_str()),
                    ContentBlock::ToolResult { content, .. } => Some(content.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n\n")
        })
        .unwrap_or_default()
}

impl Provider for StackSpot {
    fn name(&self) -> &str {
        "stackspot"
    }

    fn model(&self) -> &str {
        "stackspot-agent"
    }

    fn supports_tools(&self) -> bool {
        false
    }

    fn stream(&self, request: ModelRequest) -> ProviderStream {
        let settings = self.settings.clone();
        let state = Arc::clone(&self.state);
        let http = self.http.clone();
        let start = async move {
            let token = match access_token(&settings, &state).await {
                Ok(t) => t,
                Err(e) => {
                    return Box::pin(futures_util::stream::once(async move { Err(e) }))
                        as ProviderStream;
                }
            };
            let conversation = state.lock().await.conversation_id.clone();
            let mut body = json!({
                "user_prompt": user_prompt(&request),
                "streaming": true,
                "use_conversation": true,
            });
            if let Some(id) = conversation {
                set_field(&mut body, "conversation_id", json!(id));
            }
            http.stream_sse(
                HttpRequest {
                    provider: "stackspot".into(),
                    url: format!(
                        "{}/v1/agent/{}/chat",
                        settings.inference.trim_end_matches('/'),
                        settings.agent_id
                    ),
                    headers: vec![("Authorization".into(), format!("Bearer {token}"))],
                    body,
                },
                StackSpotParser {
                    state,
                    ..StackSpotParser::default()
                },
            )
        };
        Box::pin(futures_util::stream::once(start).flatten())
    }
}

/// Parses StackSpot's SSE stream.
#[derive(Default)]
pub struct StackSpotParser {
    state: Arc<Mutex<State>>,
    usage: Option<UsageRecord>,
    done: bool,
}

impl StackSpotParser {
    fn end(&mut self) -> Vec<ProviderEvent> {
        self.done = true;
        vec![
            ProviderEvent::Usage(self.usage.unwrap_or_else(|| UsageRecord {
                estimated: true,
                ..UsageRecord::default()
            })),
            ProviderEvent::Stop(StopReason::EndTurn),
        ]
    }
}

impl StreamParser for StackSpotParser {
    fn feed(&mut self, event: &SseEvent) -> Result<Vec<ProviderEvent>, ProviderError> {
        if event.data.trim() == "[DONE]" {
            return Ok(self.end());
        }
        let data: Value =
            serde_json::from_str(&event.data).map_err(|e| ProviderError::Protocol {
                provider: "stackspot".into(),
                message: format!("event is not JSON ({e})"),
            })?;
        let mut out = Vec::new();
        if let Some(text) = json_str(&data, "/message").filter(|t| !t.is_empty()) {
            out.push(ProviderEvent::TextDelta(text.to_string()));
        }
        if let Some(id) = json_str(&data, "/conversation_id")
            && let Ok(mut state) = self.state.try_lock()
        {
            state.conversation_id = Some(id.to_string());
        }
        let tokens = json_at(&data, "/tokens");
        if tokens.is_object() {
            let get = |k: &str| tokens[k].as_u64().unwrap_or(0);
            // `input` is the whole prompt; `user` and `enrichment` are its parts.
            let input = get("input").max(get("user") + get("enrichment"));
            self.usage = Some(UsageRecord {
                uncached_input: input,
                output: get("output"),
                ..UsageRecord::default()
            });
        }
        Ok(out)
    }

    fn finish(&mut self) -> Result<Vec<ProviderEvent>, ProviderError> {
        if self.done {
            return Ok(Vec::new());
        }
        // StackSpot closes the stream when the answer is done; there is no terminal event.
        Ok(self.end())
    }
}
