//! Which client serves which provider name, built from the resolved `Config`: keys, endpoints,
//! models, and the embedding endpoint memory recall uses.
//!
//! This is assembly, so it lives with the session, above both `provider` and `memory`; the
//! default endpoint and model of each name are `ProviderKind::defaults`. Endpoints: the flag or
//! `<NAME>_BASE_URL` replaces the default base, and each client appends its documented path
//! (`/v1/messages`, `/chat/completions`, `/responses`); OpenAI-style bases include `/v1`,
//! Anthropic-style bases do not, as in the official SDKs.

use std::sync::Arc;
use std::time::Duration;

use crate::config::{Config, ProviderKind};
use crate::memory::embedder::Embedder;
use crate::provider::anthropic::Anthropic;
use crate::provider::bedrock;
use crate::provider::demo::DemoProvider;
use crate::provider::gemini::Gemini;
use crate::provider::http::Http;
use crate::provider::ollama::Ollama;
use crate::provider::openai_chat::{OpenAiChat, Preset};
use crate::provider::openai_responses::OpenAiResponses;
use crate::provider::{Provider, ProviderError};

/// Builds the provider the config names; `demo_delay` paces the demo's stream.
pub fn build(config: &Config, demo_delay: Duration) -> Result<Arc<dyn Provider>, ProviderError> {
    let kind = config.provider;
    let (default_url, default_model) = kind.defaults();
    let base_url = config
        .base_url
        .clone()
        .unwrap_or_else(|| default_url.to_string());
    let model = config
        .model
        .clone()
        .unwrap_or_else(|| default_model.to_string());
    let http = http_client(config);
    let provider: Arc<dyn Provider> = match kind {
        ProviderKind::Demo => Arc::new(DemoProvider::new(demo_delay)),
        ProviderKind::Anthropic | ProviderKind::Minimax => {
            let key = api_key(config, kind)?;
            Arc::new(Anthropic::new(
                http,
                kind.as_str(),
                base_url,
                key,
                model,
                config.cache_ttl,
            ))
        }
        ProviderKind::OpenAiResponses => {
            let key = api_key(config, kind)?;
            Arc::new(
                OpenAiResponses::new(http, kind.as_str(), base_url, key, model)
                    .with_cache_ttl(config.cache_ttl),
            )
        }
        ProviderKind::OpenAi
        | ProviderKind::Xai
        | ProviderKind::Zai
        | ProviderKind::Moonshot
        | ProviderKind::OpenRouter
        | ProviderKind::GithubModels => {
            let key = api_key(config, kind)?;
            Arc::new(
                OpenAiChat::new(http, preset(kind), base_url, key, model)
                    .with_cache_ttl(config.cache_ttl),
            )
        }
        ProviderKind::GoogleAi => {
            let key = api_key(config, kind)?;
            Arc::new(Gemini::new(http, base_url, key, model))
        }
        ProviderKind::Ollama => {
            // --base-url wins, then OLLAMA_HOST (Ollama's own variable), then the default.
            let host = config
                .base_url
                .clone()
                .or_else(|| config.env.get("OLLAMA_HOST").map(str::to_string))
                .unwrap_or_else(|| default_url.to_string());
            Arc::new(Ollama::new(http, &host, model))
        }
        ProviderKind::Bedrock => Arc::new(bedrock_client(config, http, model)?),
        ProviderKind::Copilot => Arc::new(copilot_client(config, http, model)?),
        ProviderKind::StackSpot => Arc::new(crate::provider::stackspot::StackSpot::new(
            http,
            stackspot_settings(config)?,
        )),
    };
    Ok(provider)
}

/// The HTTP settings every client shares: request cap, prompt cache, timeouts.
fn http_client(config: &Config) -> Http {
    let mut http = Http::default();
    http.max_request_bytes = config.max_request_bytes;
    http.prompt_cache = config.prompt_cache;
    http.response_timeout = Duration::from_secs(config.response_timeout_secs);
    http.first_byte_timeout = config.first_byte_timeout();
    http
}

/// The Chat Completions preset of an OpenAI-compatible provider name.
fn preset(kind: ProviderKind) -> Preset {
    match kind {
        ProviderKind::Xai => Preset::XAI,
        ProviderKind::Zai => Preset::ZAI,
        ProviderKind::Moonshot => Preset::MOONSHOT,
        ProviderKind::OpenRouter => Preset::OPENROUTER,
        ProviderKind::GithubModels => Preset::GITHUB_MODELS,
        _ => Preset::OPENAI,
    }
}

/// Bedrock: the region and endpoint from the AWS variables, a bearer token or SigV4 keys.
fn bedrock_client(
    config: &Config,
    http: Http,
    model: String,
) -> Result<bedrock::Bedrock, ProviderError> {
    let env = &config.env;
    let region = env
        .get("AWS_REGION")
        .or_else(|| env.get("AWS_DEFAULT_REGION"))
        .unwrap_or("us-east-1")
        .to_string();
    let endpoint = config
        .base_url
        .clone()
        .unwrap_or_else(|| bedrock::endpoint_for(&region));
    let auth = match (
        env.get("AWS_BEARER_TOKEN_BEDROCK"),
        env.get("AWS_ACCESS_KEY_ID"),
        env.get("AWS_SECRET_ACCESS_KEY"),
    ) {
        (Some(token), _, _) => bedrock::Auth::Bearer(token.trim().to_string()),
        (None, Some(access), Some(secret)) => bedrock::Auth::SigV4 {
            access_key: access.trim().to_string(),
            secret_key: secret.trim().to_string(),
            session_token: env.get("AWS_SESSION_TOKEN").map(|t| t.trim().to_string()),
        },
        _ => {
            return Err(ProviderError::Setup(
                "provider `bedrock` needs credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN if temporary), or AWS_BEARER_TOKEN_BEDROCK".into(),
            ));
        }
    };
    Ok(bedrock::Bedrock::new(http, endpoint, region, auth, model))
}

/// Copilot: the GitHub token from the environment or `chatcli auth copilot`'s store.
fn copilot_client(
    config: &Config,
    http: Http,
    model: String,
) -> Result<crate::provider::copilot::Copilot, ProviderError> {
    let oauth = config
        .env
        .get("GITHUB_COPILOT_TOKEN")
        .map(str::to_string)
        .or_else(|| crate::provider::copilot::stored_token(&config.home))
        .ok_or_else(|| {
            ProviderError::Setup(
                "provider `copilot` needs a GitHub token: run `chatcli auth copilot`, or set GITHUB_COPILOT_TOKEN".into(),
            )
        })?;
    let github_api = config
        .base_url
        .clone()
        .unwrap_or_else(|| crate::provider::copilot::GITHUB_API.to_string());
    Ok(crate::provider::copilot::Copilot::new(
        http, github_api, oauth, model,
    ))
}

/// StackSpot: its realm, client and agent from the environment, each named when missing.
fn stackspot_settings(
    config: &Config,
) -> Result<crate::provider::stackspot::Settings, ProviderError> {
    let env = &config.env;
    let var = |names: &[&str]| {
        names
            .iter()
            .find_map(|n| env.get(n))
            .map(|v| v.trim().to_string())
    };
    let missing = |what: &str| ProviderError::Setup(format!("provider `stackspot` needs {what}"));
    Ok(crate::provider::stackspot::Settings {
        idm: config
            .base_url
            .clone()
            .unwrap_or_else(|| crate::provider::stackspot::IDM.to_string()),
        inference: config
            .base_url
            .clone()
            .unwrap_or_else(|| crate::provider::stackspot::INFERENCE.to_string()),
        realm: var(&["STACKSPOT_REALM"]).ok_or_else(|| missing("STACKSPOT_REALM"))?,
        client_id: var(&["STACKSPOT_CLIENT_ID", "CLIENT_ID"])
            .ok_or_else(|| missing("STACKSPOT_CLIENT_ID (or CLIENT_ID)"))?,
        client_secret: var(&["STACKSPOT_CLIENT_SECRET", "CLIENT_KEY"])
            .ok_or_else(|| missing("STACKSPOT_CLIENT_SECRET (or CLIENT_KEY)"))?,
        agent_id: var(&["STACKSPOT_AGENT_ID"]).ok_or_else(|| missing("STACKSPOT_AGENT_ID"))?,
    })
}

/// The embedding endpoint memory recall uses with this config: the provider's own where it has
/// one (OpenAI, Gemini, Ollama), else the local embedding. `CHATCLI_MEMORY_EMBEDDINGS=local`
/// forces the local one; `CHATCLI_MEMORY_EMBEDDING_MODEL` names the model.
pub fn embedder(config: &Config) -> Embedder {
    let env = &config.env;
    if env
        .get("CHATCLI_MEMORY_EMBEDDINGS")
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("local"))
    {
        return Embedder::Local;
    }
    let kind = config.provider;
    let (default_url, _) = kind.defaults();
    let base = config
        .base_url
        .clone()
        .unwrap_or_else(|| default_url.to_string());
    let model = |default: &str| {
        env.get("CHATCLI_MEMORY_EMBEDDING_MODEL")
            .map(|m| m.trim().to_string())
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| default.to_string())
    };
    match kind {
        ProviderKind::OpenAi | ProviderKind::OpenAiResponses => match api_key(config, kind) {
            Ok(key) => Embedder::OpenAi {
                base,
                key,
                model: model("text-embedding-3-small"),
            },
            Err(_) => Embedder::Local,
        },
        ProviderKind::GoogleAi => match api_key(config, kind) {
            Ok(key) => Embedder::Gemini {
                base,
                key,
                model: model("text-embedding-004"),
            },
            Err(_) => Embedder::Local,
        },
        ProviderKind::Ollama => Embedder::Ollama {
            host: config
                .base_url
                .clone()
                .or_else(|| env.get("OLLAMA_HOST").map(str::to_string))
                .unwrap_or_else(|| default_url.to_string()),
            model: model("nomic-embed-text"),
        },
        _ => Embedder::Local,
    }
}

fn api_key(config: &Config, kind: ProviderKind) -> Result<String, ProviderError> {
    let vars = kind.key_vars();
    vars.iter()
        .find_map(|var| config.env.get(var))
        .map(|key| key.trim().to_string())
        .ok_or_else(|| {
            let alternatives = match vars {
                [] | [_] => String::new(),
                [_, rest @ ..] => format!(" (or {})", rest.join(", ")),
            };
            ProviderError::Setup(format!(
                "provider `{}` needs an API key: set {}{alternatives}",
                kind.as_str(),
                vars.first().copied().unwrap_or("its key variable"),
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Overrides;
    use crate::env::Env;

    fn config(pairs: &[(&str, &str)]) -> Config {
        let home = std::env::temp_dir().join("chatcli-registry-test");
        let mut env: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        env.push(("CHATCLI_HOME".into(), home.display().to_string()));
        Config::resolve(&Overrides::default(), Env::from_pairs(env)).expect("config")
    }

    #[test]
    fn recall_embeds_with_the_providers_endpoint_where_there_is_one() {
        let openai = embedder(&config(&[("OPENAI_API_KEY", "sk-x")]));
        assert_eq!(
            openai,
            Embedder::OpenAi {
                base: "https://api.openai.com/v1".into(),
                key: "sk-x".into(),
                model: "text-embedding-3-small".into(),
            }
        );
        assert!(
            !format!("{openai:?}").contains("sk-x"),
            "the key stays out of logs"
        );
        let gemini = embedder(&config(&[
            ("LLM_PROVIDER", "googleai"),
            ("GEMINI_API_KEY", "g"),
            ("CHATCLI_MEMORY_EMBEDDING_MODEL", "gemini-embedding-001"),
        ]));
        assert!(
            matches!(&gemini, Embedder::Gemini { model, .. } if model == "gemini-embedding-001"),
            "{gemini:?}"
        );
        let anthropic = embedder(&config(&[("ANTHROPIC_API_KEY", "k")]));
        assert_eq!(anthropic, Embedder::Local);
        let forced = embedder(&config(&[
            ("OPENAI_API_KEY", "sk-x"),
            ("CHATCLI_MEMORY_EMBEDDINGS", "local"),
        ]));
        assert_eq!(forced, Embedder::Local);
    }
}
