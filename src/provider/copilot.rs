//! GitHub Copilot: a GitHub OAuth token is exchanged for a short-lived Copilot token, then chat
//! goes through the OpenAI Chat Completions client at the API endpoint that exchange names.
//!
//! The OAuth token comes from `GITHUB_COPILOT_TOKEN`, or from `chatcli auth copilot` (GitHub's
//! device flow; stored 0600 in `CHATCLI_HOME/copilot-oauth.json`). The Copilot token is kept in
//! memory and exchanged again a minute before its `expires_at`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::Value;
use tokio::sync::Mutex;

use super::http::{Http, json_at, json_str, token_json};
use super::openai_chat::{OpenAiChat, Preset};
use super::{Provider, ProviderError, ProviderStream};
use crate::conversation::ModelRequest;

/// The OAuth app Copilot editors use for the device flow.
pub const CLIENT_ID: &str = "Iv1.b507a08c87ecfe98";
/// GitHub's API, where the token exchange happens.
pub const GITHUB_API: &str = "https://api.github.com";
/// GitHub's site, where the device flow happens.
pub const GITHUB_WEB: &str = "https://github.com";

/// The Chat Completions quirks of Copilot's API.
pub const PRESET: Preset = Preset {
    headers: &[
        ("Copilot-Integration-Id", "vscode-chat"),
        (
            "Editor-Version",
            concat!("chatcli/", env!("CARGO_PKG_VERSION")),
        ),
    ],
    ..Preset::compatible("copilot")
};

#[derive(Debug, Clone)]
struct CopilotToken {
    token: String,
    api: String,
    expires_at: u64,
}

/// The Copilot client.
pub struct Copilot {
    http: Http,
    github_api: String,
    oauth: String,
    model: String,
    cached: Arc<Mutex<Option<CopilotToken>>>,
}

impl Copilot {
    /// A client that exchanges `oauth` at `github_api` (GitHub's API, or a test server).
    pub fn new(http: Http, github_api: String, oauth: String, model: String) -> Self {
        Copilot {
            http,
            github_api: github_api.trim_end_matches('/').to_string(),
            oauth,
            model,
            cached: Arc::new(Mutex::new(None)),
        }
    }
}

fn now() -> u64 {
    crate::clock::now_secs()
}

fn setup(message: String) -> ProviderError {
    ProviderError::Setup(format!("copilot: {message}"))
}

/// Exchanges the OAuth token for a Copilot token (cached until a minute before it expires).
async fn token(
    cached: &Mutex<Option<CopilotToken>>,
    github_api: &str,
    oauth: &str,
) -> Result<CopilotToken, ProviderError> {
    let mut slot = cached.lock().await;
    if let Some(t) = slot.as_ref()
        && t.expires_at > now() + 60
    {
        return Ok(t.clone());
    }
    let request = reqwest::Client::new()
        .get(format!("{github_api}/copilot_internal/v2/token"))
        .header("Authorization", format!("token {oauth}"))
        .header("Accept", "application/json")
        .header("User-Agent", concat!("chatcli/", env!("CARGO_PKG_VERSION")));
    let body = token_json(
        "copilot",
        request,
        "token exchange",
        " (is the GitHub token allowed to use Copilot?)",
    )
    .await?;
    let fresh = CopilotToken {
        token: json_str(&body, "/token")
            .ok_or_else(|| setup("the token exchange returned no token".into()))?
            .to_string(),
        api: json_str(&body, "/endpoints/api")
            .unwrap_or("https://api.githubcopilot.com")
            .trim_end_matches('/')
            .to_string(),
        expires_at: body
            .get("expires_at")
            .and_then(Value::as_u64)
            .unwrap_or_else(|| now() + 600),
    };
    *slot = Some(fresh.clone());
    Ok(fresh)
}

impl Provider for Copilot {
    fn name(&self) -> &str {
        "copilot"
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn stream(&self, request: ModelRequest) -> ProviderStream {
        let cached = Arc::clone(&self.cached);
        let github_api = self.github_api.clone();
        let oauth = self.oauth.clone();
        let http = self.http.clone();
        let model = self.model.clone();
        let start = async move {
            match token(&cached, &github_api, &oauth).await {
                Ok(t) => OpenAiChat::new(http, PRESET, t.api, t.token, model).stream(request),
                Err(e) => {
                    Box::pin(futures_util::stream::once(async move { Err(e) })) as ProviderStream
                }
            }
        };
        Box::pin(futures_util::stream::once(start).flatten())
    }
}

/// The models the Copilot API offers to this account.
pub async fn models(github_api: &str, oauth: &str) -> Result<Vec<String>, ProviderError> {
    let cached = Mutex::new(None);
    let t = token(&cached, github_api, oauth).await?;
    let client = reqwest::Client::new();
    let response = client
        .get(format!("{}/models", t.api))
        .bearer_auth(&t.token)
        .header("Copilot-Integration-Id", "vscode-chat")
        .send()
        .await
        .map_err(|e| ProviderError::Transport {
            provider: "copilot".into(),
            message: e.to_string(),
        })?;
    let body: Value = response
        .json()
        .await
        .map_err(|e| setup(format!("model list: {e}")))?;
    Ok(json_at(&body, "/data")
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["id"].as_str().map(str::to_string))
        .collect())
}

/// Where `chatcli auth copilot` keeps the OAuth token.
pub fn token_path(home: &Path) -> PathBuf {
    home.join("copilot-oauth.json")
}

/// The stored OAuth token, if `chatcli auth copilot` saved one.
pub fn stored_token(home: &Path) -> Option<String> {
    // The token file chatcli wrote is ~100 bytes: 1 MiB is far above it. Read through no link
    // planted at its path, never waiting on a FIFO.
    let read = crate::files::read_bounded(&token_path(home), 1 << 20).ok()?;
    let text = read.into_text().ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    json_str(&v, "/access_token").map(str::to_string)
}

/// GitHub's device flow: prints where to go and the code, waits for the user, stores the token
/// 0600 in `home`. `web` is GitHub's site (or a test server).
pub async fn device_login(
    web: &str,
    home: &Path,
    out: &mut (dyn std::io::Write + Send),
) -> Result<(), ProviderError> {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| setup(e.to_string()))?;
    let code = post_form(
        &client,
        format!("{web}/login/device/code"),
        vec![
            ("client_id", CLIENT_ID.to_string()),
            ("scope", "read:user".to_string()),
        ],
    )
    .await?;
    let device_code = json_str(&code, "/device_code")
        .ok_or_else(|| setup(format!("device flow refused: {code}")))?
        .to_string();
    let _ = writeln!(
        out,
        "Open {} and enter the code {}",
        json_str(&code, "/verification_uri").unwrap_or("https://github.com/login/device"),
        json_str(&code, "/user_code").unwrap_or("?")
    );
    let seconds = |key: &str| code.get(key).and_then(Value::as_u64);
    let mut interval = seconds("interval").unwrap_or(5).max(1);
    let deadline = now() + seconds("expires_in").unwrap_or(900);
    loop {
        tokio::time::sleep(Duration::from_secs(interval)).await;
        let answer = post_form(
            &client,
            format!("{web}/login/oauth/access_token"),
            vec![
                ("client_id", CLIENT_ID.to_string()),
                ("device_code", device_code.clone()),
                (
                    "grant_type",
                    "urn:ietf:params:oauth:grant-type:device_code".to_string(),
                ),
            ],
        )
        .await?;
        if let Some(token) = json_str(&answer, "/access_token") {
            return store_token(home, token, out);
        }
        match json_str(&answer, "/error") {
            Some("authorization_pending") => {}
            Some("slow_down") => interval += 5,
            Some(other) => return Err(setup(format!("device flow failed: {other}"))),
            None => return Err(setup(format!("device flow answered {answer}"))),
        }
        if now() > deadline {
            return Err(setup(
                "the device code expired before it was entered".into(),
            ));
        }
    }
}

/// POSTs `form` to one of the device flow's endpoints; returns its JSON answer.
async fn post_form(
    client: &reqwest::Client,
    url: String,
    form: Vec<(&'static str, String)>,
) -> Result<Value, ProviderError> {
    let transport = |e: reqwest::Error| ProviderError::Transport {
        provider: "copilot".into(),
        message: e.to_string(),
    };
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form)
        .finish();
    client
        .post(url)
        .header("Accept", "application/json")
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .map_err(transport)?
        .json()
        .await
        .map_err(transport)
}

/// Stores the signed-in token in `home` (0600) and says where.
fn store_token(
    home: &Path,
    token: &str,
    out: &mut (dyn std::io::Write + Send),
) -> Result<(), ProviderError> {
    let path = token_path(home);
    crate::private_fs::create_private_dir(home).map_err(|e| setup(e.to_string()))?;
    let json = serde_json::json!({"access_token": token}).to_string();
    // A private file beside it renamed over it: 0600, never through a planted link.
    crate::private_fs::replace_private(&path, json.as_bytes())
        .map_err(|e| setup(format!("{}: {e}", path.display())))?;
    let _ = writeln!(
        out,
        "Signed in; the token is stored in {} (readable only by you).",
        path.display()
    );
    Ok(())
}
