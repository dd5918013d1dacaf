//! Setting up a session: its id, its provider and the agent options, from a resolved `Config`.
//!
//! This is the one place that decides which provider runs: the one the user named, else the
//! first whose key is in the environment, else the offline demo. Both front ends (TUI and
//! `exec`) start sessions through here so they cannot drift apart.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

use crate::agent::{AgentOptions, ApprovalPolicy};
use crate::clock::utc_stamp;
use crate::config::Config;
use crate::cost::{Catalog, CatalogError};
use crate::provider::{Provider, ProviderError};
use crate::tools::{Scratch, WebSettings};

pub mod models;
pub mod registry;

/// Why a session could not start.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The provider cannot be set up (missing key, not available).
    #[error(transparent)]
    Provider(#[from] ProviderError),
    /// The user's pricing file is invalid.
    #[error(transparent)]
    Pricing(#[from] CatalogError),
    /// `/provider NAME` names no provider chatcli knows.
    #[error("unknown provider \"{kind}\" (expected one of: {accepted})")]
    UnknownProvider { kind: String, accepted: String },
    /// `--resume ID` matches more than one saved session.
    #[error("--resume {id} matches {count} sessions: give more of the id")]
    AmbiguousSession { id: String, count: usize },
    /// `--resume ID` matches no saved session.
    #[error("no saved session {id} in {dir} (chatcli --resume with no id takes the latest)")]
    NoSession { id: String, dir: String },
    /// The saved session's log cannot be read.
    #[error("cannot read the saved session {path}: {source}")]
    Unreadable {
        path: String,
        source: std::io::Error,
    },
}

/// A new session id: UTC time to the second, then 6 hex digits that make it unique.
pub fn new_session_id() -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let mut hasher = Sha256::new();
    hasher.update(now.as_nanos().to_le_bytes());
    hasher.update(std::process::id().to_le_bytes());
    let digest = hasher.finalize();
    let suffix: String = digest.iter().take(3).map(|b| format!("{b:02x}")).collect();
    format!("{}-{suffix}", utc_stamp(now.as_secs()))
}

/// The provider this config asks for; `chunk_delay` paces the demo's stream.
pub fn build_provider(
    config: &Config,
    chunk_delay: Duration,
) -> Result<Arc<dyn Provider>, SetupError> {
    Ok(registry::build(config, chunk_delay)?)
}

/// Settles the provider where a server decides: with no provider named and no key set, a local
/// Ollama that answers within 300 ms is used instead of the demo; a named Ollama must answer.
pub async fn settle_provider(config: &mut Config) -> Result<(), SetupError> {
    use crate::config::ProviderKind;
    use crate::provider::ollama;
    let host = config
        .base_url
        .clone()
        .or_else(|| config.env.get("OLLAMA_HOST").map(str::to_string))
        .unwrap_or_else(|| "http://localhost:11434".to_string());
    let unnamed_demo = config.provider == ProviderKind::Demo && !config.provider_explicit;
    if unnamed_demo && ollama::answers(&host, Duration::from_millis(300)).await {
        config.provider = ProviderKind::Ollama;
    } else if config.provider == ProviderKind::Ollama
        && config.provider_explicit
        && !ollama::answers(&host, Duration::from_secs(3)).await
    {
        return Err(SetupError::Provider(ProviderError::Setup(format!(
            "no Ollama server answers at {} (OLLAMA_HOST): start `ollama serve`, or point OLLAMA_HOST at it",
            ollama::normalize_host(&host)
        ))));
    }
    Ok(())
}

/// What a local server said about itself before the session starts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LocalServer {
    /// Tokens of context the server runs with, when it says.
    pub context_window: Option<u64>,
    /// What the server said it is (llama.cpp, Ollama, vLLM, LM Studio); `None` for a gateway
    /// or anything else that did not say.
    pub server: Option<crate::provider::local::LocalKind>,
    /// Whether the server said its model takes images (`None`: it did not say).
    pub vision: Option<bool>,
}

/// For a server on loopback or a private network (llama-server, Ollama, vLLM): takes the model
/// name from the server when none was given, and asks for its context window. `None` for a
/// remote provider, which is never asked.
pub async fn settle_local_server(config: &mut Config) -> Option<LocalServer> {
    use crate::config::ProviderKind;
    use crate::provider::local::{self, Family};
    if !config.local_server() {
        return None;
    }
    let family = match config.provider {
        ProviderKind::Ollama => Family::Ollama,
        ProviderKind::Anthropic | ProviderKind::Minimax => Family::Anthropic,
        ProviderKind::OpenAi
        | ProviderKind::OpenAiResponses
        | ProviderKind::Xai
        | ProviderKind::Zai
        | ProviderKind::Moonshot
        | ProviderKind::OpenRouter
        | ProviderKind::GithubModels => Family::OpenAi,
        _ => return None,
    };
    let base = config
        .base_url
        .clone()
        .or_else(|| config.env.get("OLLAMA_HOST").map(str::to_string))
        .unwrap_or_else(|| config.provider.defaults().0.to_string());
    let model = match (&config.model, family) {
        (Some(model), _) => Some(model.clone()),
        (None, Family::Ollama) => Some(config.provider.defaults().1.to_string()),
        (None, _) => None,
    };
    let facts = local::discover(family, &base, model.as_deref()).await;
    if config.model.is_none() && family != Family::Ollama {
        config.model = facts.model.clone();
    }
    tracing::info!(?facts, %base, "local server");
    Some(LocalServer {
        context_window: facts.context_window,
        vision: facts.vision,
        server: facts.server,
    })
}

/// What a model costs, and the rule that says so (see `cost::rule`): the user's file, then a
/// server that said it is a local inference server, then the provider's own list, then the
/// catalog, then the model's family, then free for a model no catalog knows behind a local
/// address. `local` is what the server said about itself (`None` when it was not asked);
/// Ollama's own API is always Ollama. `listed` is the model's entry in the provider's list.
pub fn price_decision(
    config: &Config,
    model: &str,
    catalog: &Catalog,
    local: Option<&LocalServer>,
    listed: Option<&crate::provider::listing::ListedModel>,
) -> crate::cost::PriceDecision {
    use crate::provider::local::LocalKind;
    let path = config.home.join("pricing.toml");
    let user = read_pricing(&path)
        .ok()
        .and_then(|text| Catalog::parse(&text, &path.display().to_string()).ok());
    let ollama = config.provider == crate::config::ProviderKind::Ollama;
    let server = local
        .and_then(|l| l.server)
        .or_else(|| ollama.then_some(LocalKind::Ollama));
    let endpoint = crate::cost::Endpoint {
        local_address: config.local_server() || ollama,
        local_server: server.map(|s| s.label().to_string()),
        listed: listed.map(|m| crate::cost::Listed {
            provider: config.provider.as_str().to_string(),
            window: m.window,
            price: m
                .price
                .map(|p| (p.input, p.output, p.cache_read, p.cache_write)),
        }),
    };
    crate::cost::rule::decide(model, catalog, user.as_ref(), &endpoint)
}

/// Applies what the local server said to a session's options: its window, and the price its
/// answer decides (a llama.cpp server's models are free; a gateway's catalog models are not).
pub fn apply_local_server(
    options: &mut AgentOptions,
    config: &Config,
    provider: &dyn Provider,
    catalog: &Catalog,
    local: Option<&LocalServer>,
) {
    let listed = models::listed_model(&config.home, provider);
    // A local inference server's model sees images only when the server says so.
    options.local_vision = local
        .filter(|l| l.server.is_some())
        .map(|l| l.vision.unwrap_or(false));
    options.context_window = local
        .and_then(|l| l.context_window)
        .or_else(|| listed.as_ref().and_then(|m| m.window));
    let decision = price_decision(config, provider.model(), catalog, local, listed.as_ref());
    options.pricing = decision.pricing;
    options.pricing_rule = decision.rule;
}

/// The `/config` line that says which pricing rule the model got, in the report's own shape.
pub fn pricing_report_line(model: &str, rule: &crate::cost::PriceRule) -> String {
    format!("{:<22} {model}  ({})", "pricing", rule.phrase())
}

/// `/config`'s line on the cache policy for the session's model (`CHATCLI_PROMPT_CACHE_TTL`).
pub fn cache_policy_report_line(config: &Config, model: &str) -> String {
    let policy =
        crate::provider::cache_policy::describe(config.cache_ttl, config.prompt_cache, model);
    format!("{:<22} {policy}  (for {model})", "cache policy")
}

/// The most of `pricing.toml` read: a price list of a few hundred models is tens of KB, so
/// 4 MiB holds any whole while a runaway file cannot fill memory.
const MAX_PRICING_BYTES: u64 = 4 << 20;

/// `CHATCLI_HOME/pricing.toml`, read whole through the file door (links followed as a dotfiles
/// manager makes them; a FIFO refused rather than waited on).
fn read_pricing(path: &std::path::Path) -> std::io::Result<String> {
    crate::files::read_following(path, MAX_PRICING_BYTES).and_then(|b| b.into_text())
}

/// The price catalog: the built-in one, with `CHATCLI_HOME/pricing.toml` over it.
pub fn load_catalog(config: &Config) -> Result<Catalog, SetupError> {
    let mut catalog = Catalog::builtin();
    let path = config.home.join("pricing.toml");
    if let Ok(text) = read_pricing(&path) {
        catalog.merge(Catalog::parse(&text, &path.display().to_string())?);
    }
    Ok(catalog)
}

/// The session `--resume ID` names (`latest` for the newest), read back from its log.
pub fn find_session(config: &Config, id: &str) -> Result<crate::session_log::Resumed, SetupError> {
    let path = find_session_path(config, id)?;
    load_session(config, &path)
}

/// The log of the session `--resume ID` names (`latest` for the newest).
pub fn find_session_path(config: &Config, id: &str) -> Result<std::path::PathBuf, SetupError> {
    let dir = config.home.join("sessions");
    let sessions = crate::session_log::list(&dir);
    let found = if id == "latest" {
        sessions.first()
    } else {
        let matching: Vec<_> = sessions.iter().filter(|s| s.id.starts_with(id)).collect();
        if matching.len() > 1 {
            return Err(SetupError::AmbiguousSession {
                id: id.to_string(),
                count: matching.len(),
            });
        }
        matching.into_iter().next()
    };
    let Some(found) = found else {
        return Err(SetupError::NoSession {
            id: id.to_string(),
            dir: dir.display().to_string(),
        });
    };
    Ok(found.path.clone())
}

/// Reads the log at `path` back, and records any repair it needed.
fn load_session(
    config: &Config,
    path: &std::path::Path,
) -> Result<crate::session_log::Resumed, SetupError> {
    let resumed = crate::session_log::load(path).map_err(|source| SetupError::Unreadable {
        path: path.display().to_string(),
        source,
    })?;
    if !resumed.repairs.is_empty() {
        // The repaired history goes to the log, so the next resume starts from it.
        let secrets = crate::secrets::Secrets::from_env(&config.env);
        match crate::session_log::SessionLog::reopen(&resumed.path, secrets) {
            Ok(mut log) => log.append_history(&crate::session_log::HistoryRecord::HistoryReset {
                messages: resumed.history.clone(),
            }),
            Err(e) => tracing::warn!(error = %e, "cannot record the repaired history"),
        }
    }
    Ok(resumed)
}

/// Deletes sessions older than the retention period (`CHATCLI_SESSION_RETENTION_DAYS`).
pub fn prune_old_sessions(config: &Config) -> usize {
    crate::tools::scratch::prune_sessions(
        &config.home.join("sessions"),
        config.session_retention_days,
    )
}

/// Starts the configured MCP servers (in the background) for a session; `approve_project`
/// starts project servers not yet approved (`exec --yes`). Unusable entries and servers
/// awaiting approval are reported through the hub, once.
pub fn start_mcp(
    config: &Config,
    approve_project: bool,
) -> Result<crate::mcp::McpHandle, crate::env::ConfigError> {
    let settings = crate::mcp::McpSettings::from_env(&config.env)?;
    let (hub, startup) = crate::mcp::start_session(
        &config.home,
        &config.workspace,
        &config.env,
        &settings,
        approve_project,
    );
    for notice in startup.notices {
        hub.report_later(notice);
    }
    Ok(crate::mcp::McpHandle { hub, settings })
}

/// Everything the agent task needs, for this config and provider.
pub fn agent_options(
    config: &Config,
    provider: &dyn Provider,
    catalog: &Catalog,
    session_id: String,
    approval: ApprovalPolicy,
) -> AgentOptions {
    let listed = models::listed_model(&config.home, provider);
    let decision = price_decision(config, provider.model(), catalog, None, listed.as_ref());
    AgentOptions {
        mode: config.mode,
        max_turns: config.max_turns,
        workspace: config.workspace.clone(),
        pricing: decision.pricing,
        pricing_rule: decision.rule,
        catalog: std::sync::Arc::new(catalog.clone()),
        context_window: listed.as_ref().and_then(|m| m.window),
        local_vision: None,
        max_output_tokens: crate::agent::MAX_OUTPUT_TOKENS,
        sessions_dir: Some(config.home.join("sessions")),
        early_exit: config.early_exit,
        early_exit_turns: config.early_exit_turns,
        smart_route: config.smart_route,
        approval,
        clock: Default::default(),
        time_zone: Default::default(),
        scratch: match &config.agent_tmpdir {
            Some(dir) => Scratch::user(dir.clone()),
            None => Scratch::private(
                config
                    .home
                    .join("sessions")
                    .join(&session_id)
                    .join("scratch"),
            ),
        },
        web: WebSettings {
            autosave_bytes: config.webfetch_autosave_bytes,
            search: config.search.clone(),
            ..WebSettings::default()
        },
        compaction: config.compaction,
        budget_usd: config.budget_usd,
        max_retries: config.max_retries,
        keepwarm: config.keepwarm,
        secrets: crate::secrets::Secrets::from_env(&config.env),
        resume: None,
        home: Some(config.home.clone()),
        bootstrap_max_chars: config.bootstrap_max_chars,
        skills: config.skills,
        agents: config.agents.clone(),
        attachments: crate::prompt::attachments::Attachments::new(config.context_max_tokens),
        mcp: None,
        sandbox: config.sandbox.clone(),
        setup: crate::user_settings::load(
            &config.home,
            &crate::project::project_root(&config.workspace),
        ),
        memory: Some(crate::memory::MemorySettings {
            dir: config.home.join("memory"),
            mode: config.memory_mode,
            retrieval_budget: config.memory_retrieval_budget,
            autorecall: config.memory_autorecall,
            hyde: config.memory_hyde,
            embedder: registry::embedder(config),
        }),
        session_id,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_differ() {
        let a = new_session_id();
        std::thread::sleep(Duration::from_millis(2));
        assert_ne!(a, new_session_id());
    }
}
