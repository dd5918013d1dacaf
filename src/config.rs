//! The one typed `Config`, resolved once at start from flags, environment, `config.toml` and
//! defaults, in that order of precedence.
//!
//! Every clamp and validation lives here, so the rest of the program can trust its values. The
//! environment is read through `Env`, a snapshot, so tests resolve configs without touching the
//! process environment. Variable names follow the reference system (`CHATCLI_*`, `LLM_PROVIDER`)
//! so users carry their settings over. An invalid value is a `ConfigError` that names the
//! setting, the value and what would be accepted.

// `config.toml` and the environment are outside input: no index that could panic on them (#34).
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

use std::path::PathBuf;

use crate::agent::routing::RouteMode;
use crate::agent::{DEFAULT_EARLY_EXIT_TURNS, DEFAULT_MAX_TURNS};
use crate::env::{ConfigError, Env};
use crate::protocol::Mode;
use crate::provider::anthropic::CacheTtl;
use crate::tools::SearchBackend;

mod file;
mod provider_kind;
mod report;
pub mod settings;

pub use provider_kind::ProviderKind;
use provider_kind::detect_from_keys;

/// Settings given on the command line; `None` means "not given".
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub mode: Option<String>,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub max_turns: Option<String>,
    pub cwd: Option<PathBuf>,
    pub yes: bool,
    /// `--sandbox`: workspace-write, read-only, off or required.
    pub sandbox: Option<String>,
    /// `--profile`: the `[profiles.NAME]` table of `config.toml` laid over its top level.
    pub profile: Option<String>,
}

/// The sandbox settings: `--sandbox` over `CHATCLI_SANDBOX`, and `CHATCLI_SANDBOX_NETWORK`.
fn sandbox_settings(
    overrides: &Overrides,
    read: &Reader,
) -> Result<crate::sandbox::SandboxSettings, ConfigError> {
    use crate::sandbox::SandboxSettings;
    let env = read.env;
    // The sandbox's own error says the same; this one names the flag when the flag was wrong.
    let invalid = |setting: String, value: &str, expected: &str| ConfigError::Invalid {
        setting,
        value: value.into(),
        expected: expected.into(),
    };
    let (setting, value) = read
        .flag_or(overrides.sandbox.as_deref(), "--sandbox", "CHATCLI_SANDBOX")
        .unwrap_or_else(|| ("CHATCLI_SANDBOX".to_string(), ""));
    let (policy, required) = SandboxSettings::parse_policy(value).map_err(|_| {
        invalid(
            setting.clone(),
            value,
            "workspace-write, read-only, off or required",
        )
    })?;
    let network = match env.get("CHATCLI_SANDBOX_NETWORK") {
        Some(v) => SandboxSettings::parse_network(v)
            .map_err(|_| invalid(read.origin("CHATCLI_SANDBOX_NETWORK"), v, "on or off"))?,
        None => true,
    };
    let extra_writable = env
        .get("CHATCLI_SANDBOX_WRITABLE")
        .map(|v| {
            std::env::split_paths(v)
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        })
        .unwrap_or_default();
    Ok(SandboxSettings {
        policy,
        required,
        network,
        extra_writable,
        home: resolve_home(env).ok(),
        ..SandboxSettings::default()
    })
}

/// Everything the program needs to know about how it was asked to run.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where `config.toml`, logs and sessions live.
    pub home: PathBuf,
    /// The mode prompts run in until the user switches.
    pub mode: Mode,
    /// The provider: the one the user named, else the first whose key is set, else the demo.
    pub provider: ProviderKind,
    /// Whether the user named the provider (rather than chatcli picking it).
    pub provider_explicit: bool,
    pub model: Option<String>,
    pub base_url: Option<String>,
    /// Requests the tool loop may send for one prompt, in [1, 200].
    pub max_turns: u32,
    /// The directory the coder tools work in.
    pub workspace: PathBuf,
    /// Approve every tool call that would ask (`--yes`).
    pub auto_approve: bool,
    /// Stop a tool loop that repeats itself (`CHATCLI_AGENT_EARLY_EXIT`).
    pub early_exit: bool,
    /// Identical turns (or cycles) that stop it, in [2, 10] (`CHATCLI_AGENT_EARLY_EXIT_TURNS`).
    pub early_exit_turns: u32,
    /// Chat/agent routing of `agent` prompts (`CHATCLI_AGENT_SMART_ROUTE`).
    pub smart_route: RouteMode,
    /// Extracted web text above this many bytes is saved, not inlined (`CHATCLI_WEBFETCH_AUTOSAVE_BYTES`).
    pub webfetch_autosave_bytes: usize,
    /// The user's own scratch directory (`CHATCLI_AGENT_TMPDIR`), never deleted by chatcli.
    pub agent_tmpdir: Option<PathBuf>,
    /// The OS sandbox of commands (`--sandbox`, `CHATCLI_SANDBOX`, `CHATCLI_SANDBOX_NETWORK`).
    pub sandbox: crate::sandbox::SandboxSettings,
    /// Sessions older than this many days are pruned at start (`CHATCLI_SESSION_RETENTION_DAYS`).
    pub session_retention_days: u64,
    /// Where `web_search` asks, in order: SearXNG (`CHATCLI_SEARXNG_URL`) and Brave
    /// (`BRAVE_SEARCH_API_KEY`) when configured, then DuckDuckGo (no key).
    pub search: Vec<SearchBackend>,
    /// Times a failed request is sent again (`CHATCLI_MAX_RETRIES`).
    pub max_retries: u32,
    /// Largest request body, in bytes (`CHATCLI_MAX_REQUEST_BYTES`).
    pub max_request_bytes: usize,
    /// Longest a whole model response may stream, in seconds (`CHATCLI_RESPONSE_TIMEOUT`).
    pub response_timeout_secs: u64,
    /// Wait for a response's first byte (`CHATCLI_FIRST_BYTE_TIMEOUT`, seconds); `None` takes
    /// the default for where the server is (see [`Config::first_byte_timeout`]).
    pub first_byte_timeout: Option<std::time::Duration>,
    /// The session budget in USD (`CHATCLI_SESSION_BUDGET_USD`).
    pub budget_usd: Option<f64>,
    /// What the prompt carries of long-term memory (`CHATCLI_MEMORY_MODE`).
    pub memory_mode: crate::memory::MemoryMode,
    /// Characters of the `full` memory block (`CHATCLI_MEMORY_RETRIEVAL_BUDGET`).
    pub memory_retrieval_budget: usize,
    /// Auto-recall in index mode (`CHATCLI_MEMORY_AUTORECALL`).
    pub memory_autorecall: bool,
    /// HyDE for explicit recall (`CHATCLI_MEMORY_HYDE`).
    pub memory_hyde: bool,
    /// Microcompact of old tool results (`CHATCLI_MICROCOMPACT_*`).
    pub compaction: crate::agent::compaction::Settings,
    /// TTL of the prompt-cache entries chatcli's markers write (`CHATCLI_PROMPT_CACHE_TTL`).
    pub cache_ttl: CacheTtl,
    /// Pings that keep the cache warm while the user is away (`CHATCLI_CACHE_KEEPWARM`).
    pub keepwarm: crate::agent::keepwarm::KeepWarm,
    /// Characters of one bootstrap file the prompt keeps (`CHATCLI_BOOTSTRAP_MAX_CHARS`).
    pub bootstrap_max_chars: usize,
    /// Size limits of the skill blocks (`CHATCLI_SKILLS_CATALOG_MAX_CHARS`,
    /// `CHATCLI_SKILLS_ACTIVE_MAX_CHARS`).
    pub skills: crate::skills::Limits,
    /// The orchestrator (`CHATCLI_AGENT_PARALLEL_MODE`, `CHATCLI_AGENT_MAX_PARALLEL`,
    /// `CHATCLI_AGENT_<NAME>_MODEL` / `_EFFORT`).
    pub agents: crate::agents::Settings,
    /// Tokens all `/context` attachments may add up to (`CHATCLI_CONTEXT_MAX_TOKENS`).
    pub context_max_tokens: u64,
    /// Cache markers and cache keys in requests (`CHATCLI_PROMPT_CACHE`; off sends neither).
    pub prompt_cache: bool,
    /// The environment snapshot the config was resolved from (providers read their keys here),
    /// with `config.toml`'s values laid under it.
    pub env: Env,
    /// The variables whose value came from `config.toml` (for `/config` and error messages).
    pub from_file: Vec<String>,
}

/// Longest session retention, in days (`CHATCLI_SESSION_RETENTION_DAYS`): 100 years.
pub const MAX_RETENTION_DAYS: u64 = 36_500;

/// Largest size or character count a setting takes; larger values are clamped to it, so sums
/// and products of settings never overflow.
pub const MAX_SIZE_SETTING: usize = 1 << 40;
/// First-byte timeout for remote providers, in seconds (`CHATCLI_FIRST_BYTE_TIMEOUT`).
pub const REMOTE_FIRST_BYTE_TIMEOUT_SECS: u64 = 90;
/// First-byte timeout for a server on loopback or a private network, in seconds.
pub const LOCAL_FIRST_BYTE_TIMEOUT_SECS: u64 = 600;

/// Whether `url`'s host is `localhost`, loopback, private (RFC 1918, IPv6 ULA) or link-local.
pub fn is_local_url(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = match host_port.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host_port.split(':').next().unwrap_or_default(),
    };
    let host = host.to_ascii_lowercase();
    if host == "localhost" || host.ends_with(".localhost") {
        return true;
    }
    match host.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(ip)) => ip.is_loopback() || ip.is_private() || ip.is_link_local(),
        Ok(std::net::IpAddr::V6(ip)) => {
            let first = ip.segments()[0];
            ip.is_loopback() || (first & 0xfe00) == 0xfc00 || (first & 0xffc0) == 0xfe80
        }
        Err(_) => false,
    }
}

/// Reads settings from the resolved environment (`config.toml` laid under it), naming where a
/// value came from when it is wrong: the variable, or the key in `config.toml`.
struct Reader<'a> {
    env: &'a Env,
    from_file: &'a [String],
}

impl Reader<'_> {
    /// `CHATCLI_X`, or `x in config.toml` when the file gave it.
    fn origin(&self, var: &str) -> String {
        if self.from_file.iter().any(|v| v == var) {
            let key = settings::find(var).and_then(settings::Setting::file_key);
            format!("{} in config.toml", key.as_deref().unwrap_or(var))
        } else {
            var.to_string()
        }
    }

    /// The variable's value as `parse` reads it (given trimmed), `default` when it is unset; a
    /// value `parse` refuses is an error naming where it came from and `expected`.
    fn setting<T>(
        &self,
        var: &str,
        default: T,
        expected: &str,
        parse: impl FnOnce(&str) -> Option<T>,
    ) -> Result<T, ConfigError> {
        match self.env.get(var) {
            None => Ok(default),
            Some(v) => parse(v.trim()).ok_or_else(|| ConfigError::Invalid {
                setting: self.origin(var),
                value: v.to_string(),
                expected: expected.to_string(),
            }),
        }
    }

    fn switch(&self, var: &str, default: bool) -> Result<bool, ConfigError> {
        self.setting(
            var,
            default,
            "on or off (1/0, true/false, yes/no)",
            parse_switch,
        )
    }

    /// A whole number, clamped to `MAX_SIZE_SETTING`.
    fn number(&self, var: &str, default: u64) -> Result<u64, ConfigError> {
        self.setting(var, default, "a whole number", |v| {
            v.parse::<u64>()
                .ok()
                .map(|n| n.min(MAX_SIZE_SETTING as u64))
        })
    }

    /// A positive whole number, clamped to `MAX_SIZE_SETTING`.
    fn positive(&self, var: &str, default: usize) -> Result<usize, ConfigError> {
        self.setting(var, default, "a positive whole number", |v| {
            v.parse::<usize>()
                .ok()
                .filter(|n| *n > 0)
                .map(|n| n.min(MAX_SIZE_SETTING))
        })
    }

    /// A flag's value, else the variable's: (where it came from, the value).
    fn flag_or<'v>(
        &'v self,
        flag: Option<&'v str>,
        name: &str,
        var: &str,
    ) -> Option<(String, &'v str)> {
        flag.map(|v| (name.to_string(), v))
            .or_else(|| self.env.get(var).map(|v| (self.origin(var), v)))
    }
}

/// `on`/`off` and the usual spellings; `None` for anything else.
fn parse_switch(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "on" | "yes" => Some(true),
        "0" | "false" | "off" | "no" => Some(false),
        _ => None,
    }
}

/// The `web_search` backends, in the order they are tried: the configured ones, then DuckDuckGo
/// (its address from `CHATCLI_WEBSEARCH_DDG_URL`, for tests and mirrors).
fn search_backends(env: &Env) -> Vec<SearchBackend> {
    let mut backends = Vec::new();
    if let Some(url) = env
        .get("CHATCLI_WEBSEARCH_SEARXNG_URL")
        .or_else(|| env.get("CHATCLI_SEARXNG_URL"))
    {
        backends.push(SearchBackend::Searxng(url.trim().to_string()));
    }
    if let Some(key) = env.get("BRAVE_SEARCH_API_KEY") {
        backends.push(SearchBackend::Brave {
            key: key.trim().to_string(),
            base_url: env
                .get("CHATCLI_WEBSEARCH_BRAVE_URL")
                .or_else(|| env.get("BRAVE_SEARCH_BASE_URL"))
                .unwrap_or(crate::tools::web_search::BRAVE_BASE_URL)
                .trim()
                .to_string(),
        });
    }
    backends.push(SearchBackend::DuckDuckGo {
        base_url: env
            .get("CHATCLI_WEBSEARCH_DDG_URL")
            .unwrap_or(crate::tools::web_search::DDG_BASE_URL)
            .trim()
            .to_string(),
    });
    backends
}

impl Config {
    /// Resolves the configuration: flags over environment over `config.toml` over defaults.
    pub fn resolve(overrides: &Overrides, env: Env) -> Result<Config, ConfigError> {
        let home = resolve_home(&env)?;
        let file = file::read(&home.join("config.toml"), overrides.profile.as_deref())?;
        let mut env = env;
        let from_file = file.lay_under(&mut env);
        let read = Reader {
            env: &env,
            from_file: &from_file,
        };
        let (provider, provider_explicit) = resolve_provider(overrides, &read)?;
        let from_env = |vars: Vec<String>| vars.iter().find_map(|v| env.get(v)).map(str::to_string);
        let model = overrides
            .model
            .clone()
            .or_else(|| from_env(provider.model_vars()))
            .or(file.model);
        let base_url = overrides
            .base_url
            .clone()
            .or_else(|| from_env(provider.base_url_vars()))
            .or(file.base_url);
        let limits = Limits::resolve(&read)?;
        let memory = MemoryChoice::resolve(&read)?;
        Ok(Config {
            mode: resolve_mode(overrides, &read)?,
            max_turns: resolve_max_turns(overrides, &read)?,
            workspace: resolve_workspace(overrides)?,
            provider,
            provider_explicit,
            model,
            base_url,
            auto_approve: overrides.yes,
            early_exit: read.switch("CHATCLI_AGENT_EARLY_EXIT", true)?,
            early_exit_turns: resolve_early_exit_turns(&read)?,
            smart_route: read.setting(
                "CHATCLI_AGENT_SMART_ROUTE",
                RouteMode::default(),
                "off, hint or auto (also 0/1/2)",
                RouteMode::parse,
            )?,
            prompt_cache: read.switch("CHATCLI_PROMPT_CACHE", true)?,
            cache_ttl: resolve_cache_ttl(&read)?,
            keepwarm: read.setting(
                "CHATCLI_CACHE_KEEPWARM",
                crate::agent::keepwarm::DEFAULT,
                "on, off, or the idle minutes to keep warm at most",
                crate::agent::keepwarm::KeepWarm::parse,
            )?,
            webfetch_autosave_bytes: resolve_autosave(&read)?,
            // At most 100 years: a cut-off further back than the epoch cannot be computed.
            session_retention_days: read
                .number("CHATCLI_SESSION_RETENTION_DAYS", 30)?
                .clamp(1, MAX_RETENTION_DAYS),
            agent_tmpdir: env.get("CHATCLI_AGENT_TMPDIR").map(PathBuf::from),
            search: search_backends(&env),
            sandbox: sandbox_settings(overrides, &read)?,
            compaction: resolve_compaction(&read)?,
            memory_mode: memory.mode,
            memory_retrieval_budget: memory.retrieval_budget,
            memory_autorecall: memory.autorecall,
            memory_hyde: memory.hyde,
            budget_usd: resolve_budget(&read)?,
            max_retries: limits.max_retries,
            max_request_bytes: limits.max_request_bytes,
            response_timeout_secs: limits.response_timeout_secs,
            first_byte_timeout: limits.first_byte_timeout,
            bootstrap_max_chars: limits.bootstrap_max_chars,
            context_max_tokens: limits.context_max_tokens,
            skills: limits.skills,
            agents: resolve_agents(&read)?,
            home,
            from_file: from_file.clone(),
            env: env.clone(),
        })
    }

    /// Whether requests go to a server on this machine or a private network (llama-server,
    /// Ollama, vLLM): the base URL's host is loopback, a private or link-local address, or
    /// `localhost`. Ollama without a base URL is local by default.
    pub fn local_server(&self) -> bool {
        match &self.base_url {
            Some(url) => is_local_url(url),
            None => {
                self.provider == ProviderKind::Ollama
                    && self.env.get("OLLAMA_HOST").is_none_or(is_local_url)
            }
        }
    }

    /// How long a request waits for its first byte: `CHATCLI_FIRST_BYTE_TIMEOUT`, else 90 s for
    /// remote providers and 600 s for a local server (a cold prompt on a laptop CPU is slow).
    pub fn first_byte_timeout(&self) -> std::time::Duration {
        self.first_byte_timeout.unwrap_or_else(|| {
            std::time::Duration::from_secs(if self.local_server() {
                LOCAL_FIRST_BYTE_TIMEOUT_SECS
            } else {
                REMOTE_FIRST_BYTE_TIMEOUT_SECS
            })
        })
    }

    /// Where the log files go.
    pub fn log_dir(&self) -> PathBuf {
        self.home.join("logs")
    }
}

/// `--mode` over `CHATCLI_MODE` (`mode` in `config.toml`).
fn resolve_mode(overrides: &Overrides, read: &Reader) -> Result<Mode, ConfigError> {
    read.flag_or(overrides.mode.as_deref(), "--mode", "CHATCLI_MODE")
        .map(|(setting, v)| {
            v.parse::<Mode>().map_err(|_| ConfigError::Invalid {
                setting,
                value: v.to_string(),
                expected: "one of: chat, agent, coder, plan, run".into(),
            })
        })
        .transpose()
        .map(Option::unwrap_or_default)
}

/// The provider the user named (flag, `CHATCLI_PROVIDER`, `LLM_PROVIDER`, `config.toml`), else
/// the first whose key is set, else the demo; and whether the user named it.
fn resolve_provider(
    overrides: &Overrides,
    read: &Reader,
) -> Result<(ProviderKind, bool), ConfigError> {
    let named = read
        .flag_or(
            overrides.provider.as_deref(),
            "--provider",
            "CHATCLI_PROVIDER",
        )
        .or_else(|| {
            read.env
                .get("LLM_PROVIDER")
                .map(|v| ("LLM_PROVIDER".to_string(), v))
        });
    let provider = named
        .map(|(setting, v)| {
            ProviderKind::parse(v).ok_or_else(|| ConfigError::Invalid {
                setting,
                value: v.to_string(),
                expected: format!("one of: {}", ProviderKind::accepted()),
            })
        })
        .transpose()?;
    let explicit = provider.is_some();
    let provider = provider
        .or_else(|| detect_from_keys(read.env))
        .unwrap_or(ProviderKind::Demo);
    Ok((provider, explicit))
}

/// `--max-turns` over `CHATCLI_AGENT_MAX_TURNS` (`max_turns` in `config.toml`), clamped to 1–200.
fn resolve_max_turns(overrides: &Overrides, read: &Reader) -> Result<u32, ConfigError> {
    match read.flag_or(
        overrides.max_turns.as_deref(),
        "--max-turns",
        "CHATCLI_AGENT_MAX_TURNS",
    ) {
        None => Ok(DEFAULT_MAX_TURNS),
        Some((setting, v)) => {
            let n: i64 = v.trim().parse().map_err(|_| ConfigError::Invalid {
                setting,
                value: v.to_string(),
                expected: "a whole number from 1 to 200".into(),
            })?;
            Ok(n.clamp(1, 200) as u32)
        }
    }
}

/// `--cwd`, else the current directory; it must exist.
fn resolve_workspace(overrides: &Overrides) -> Result<PathBuf, ConfigError> {
    let workspace = match &overrides.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(|e| ConfigError::Invalid {
            setting: "the current directory".into(),
            value: e.to_string(),
            expected: "a readable directory (or pass --cwd)".into(),
        })?,
    };
    if !workspace.is_dir() {
        return Err(ConfigError::Invalid {
            setting: "--cwd".into(),
            value: workspace.display().to_string(),
            expected: "an existing directory".into(),
        });
    }
    Ok(workspace)
}

/// `CHATCLI_PROMPT_CACHE_TTL`: `auto`, `5m` (`in_memory`) or `1h` (`24h`).
fn resolve_cache_ttl(read: &Reader) -> Result<CacheTtl, ConfigError> {
    read.setting(
        "CHATCLI_PROMPT_CACHE_TTL",
        CacheTtl::Auto,
        "auto, 5m (in_memory) or 1h (24h)",
        CacheTtl::parse,
    )
}

/// `CHATCLI_AGENT_EARLY_EXIT_TURNS`, clamped to 2–10.
fn resolve_early_exit_turns(read: &Reader) -> Result<u32, ConfigError> {
    read.setting(
        "CHATCLI_AGENT_EARLY_EXIT_TURNS",
        DEFAULT_EARLY_EXIT_TURNS,
        "a whole number from 2 to 10",
        |v| v.parse::<i64>().ok().map(|n| n.clamp(2, 10) as u32),
    )
}

/// `CHATCLI_WEBFETCH_AUTOSAVE_BYTES`; `off` never saves: pages are inlined up to `max_length`.
fn resolve_autosave(read: &Reader) -> Result<usize, ConfigError> {
    read.setting(
        "CHATCLI_WEBFETCH_AUTOSAVE_BYTES",
        crate::tools::web_fetch::DEFAULT_AUTOSAVE_BYTES,
        "a whole number of bytes, or off",
        |v| match v.to_ascii_lowercase().as_str() {
            "off" => Some(usize::MAX),
            n => n.parse::<usize>().ok(),
        },
    )
}

/// `CHATCLI_MICROCOMPACT*`. A stage knob (`knobs::STAGE_KNOBS`) set with no schedule named
/// selects the staged schedule that honours it; `MIN_CONTENT`, when set, is also the size below
/// which `consumed` keeps a result whole.
fn resolve_compaction(read: &Reader) -> Result<crate::agent::compaction::Settings, ConfigError> {
    use crate::agent::compaction::{Schedule, Settings, knobs};
    let defaults = Settings::default();
    let stage_knobs_set = knobs::STAGE_KNOBS.map(|var| read.env.get(var).is_some());
    let min_content_set = read.env.get("CHATCLI_MICROCOMPACT_MIN_CONTENT").is_some();
    let min_content = read.positive("CHATCLI_MICROCOMPACT_MIN_CONTENT", defaults.min_content)?;
    Ok(Settings {
        enabled: read.switch("CHATCLI_MICROCOMPACT", defaults.enabled)?,
        min_content,
        truncate_turns: read.positive(
            "CHATCLI_MICROCOMPACT_TRUNCATE_TURNS",
            defaults.truncate_turns,
        )?,
        summarize_turns: read.positive(
            "CHATCLI_MICROCOMPACT_SUMMARIZE_TURNS",
            defaults.summarize_turns,
        )?,
        head_chars: read.positive("CHATCLI_MICROCOMPACT_HEAD_CHARS", defaults.head_chars)?,
        tail_chars: read.positive("CHATCLI_MICROCOMPACT_TAIL_CHARS", defaults.tail_chars)?,
        schedule: read.setting(
            "CHATCLI_MICROCOMPACT_SCHEDULE",
            knobs::implied_schedule(stage_knobs_set),
            "consumed, batched or eager",
            |v| match v.to_ascii_lowercase().as_str() {
                "eager" => Some(Schedule::Eager),
                "batched" => Some(Schedule::Batched),
                "consumed" => Some(Schedule::Consumed),
                _ => None,
            },
        )?,
        consume_min_chars: if min_content_set {
            min_content
        } else {
            defaults.consume_min_chars
        },
        stage_knobs_set,
    })
}

/// `CHATCLI_MEMORY_*`.
struct MemoryChoice {
    mode: crate::memory::MemoryMode,
    retrieval_budget: usize,
    autorecall: bool,
    hyde: bool,
}

impl MemoryChoice {
    fn resolve(read: &Reader) -> Result<MemoryChoice, ConfigError> {
        Ok(MemoryChoice {
            mode: read.setting(
                "CHATCLI_MEMORY_MODE",
                crate::memory::MemoryMode::default(),
                "index, full or off",
                crate::memory::MemoryMode::parse,
            )?,
            autorecall: read.switch("CHATCLI_MEMORY_AUTORECALL", true)?,
            hyde: read.switch("CHATCLI_MEMORY_HYDE", false)?,
            retrieval_budget: read.positive("CHATCLI_MEMORY_RETRIEVAL_BUDGET", 4000)?,
        })
    }
}

/// `CHATCLI_SESSION_BUDGET_USD`: a positive amount, `$` allowed.
fn resolve_budget(read: &Reader) -> Result<Option<f64>, ConfigError> {
    read.setting(
        "CHATCLI_SESSION_BUDGET_USD",
        None,
        "a positive amount in US dollars, e.g. 2.50",
        |v| {
            v.trim_start_matches('$')
                .parse::<f64>()
                .ok()
                .filter(|b| b.is_finite() && *b > 0.0)
                .map(Some)
        },
    )
}

/// Requests and prompt sizes: retries, body and time limits, bootstrap, attachments, skills.
struct Limits {
    max_retries: u32,
    max_request_bytes: usize,
    response_timeout_secs: u64,
    first_byte_timeout: Option<std::time::Duration>,
    bootstrap_max_chars: usize,
    context_max_tokens: u64,
    skills: crate::skills::Limits,
}

impl Limits {
    fn resolve(read: &Reader) -> Result<Limits, ConfigError> {
        let seconds = "a positive number of seconds, e.g. 600";
        Ok(Limits {
            max_retries: read
                .number(
                    "CHATCLI_MAX_RETRIES",
                    u64::from(crate::agent::retry::DEFAULT_MAX_RETRIES),
                )?
                .min(10) as u32,
            max_request_bytes: read.positive(
                "CHATCLI_MAX_REQUEST_BYTES",
                crate::provider::http::DEFAULT_MAX_REQUEST_BYTES,
            )?,
            response_timeout_secs: read.setting(
                "CHATCLI_RESPONSE_TIMEOUT",
                crate::provider::http::DEFAULT_RESPONSE_TIMEOUT.as_secs(),
                seconds,
                |v| v.parse::<u64>().ok().filter(|n| *n > 0),
            )?,
            first_byte_timeout: read.setting("CHATCLI_FIRST_BYTE_TIMEOUT", None, seconds, |v| {
                v.parse::<u64>()
                    .ok()
                    .filter(|s| *s > 0)
                    .map(|s| Some(std::time::Duration::from_secs(s)))
            })?,
            bootstrap_max_chars: read.positive(
                "CHATCLI_BOOTSTRAP_MAX_CHARS",
                crate::prompt::bootstrap::DEFAULT_MAX_CHARS,
            )?,
            context_max_tokens: read.positive(
                "CHATCLI_CONTEXT_MAX_TOKENS",
                crate::prompt::attachments::DEFAULT_MAX_TOKENS as usize,
            )? as u64,
            skills: crate::skills::Limits {
                catalog_max_chars: read.positive(
                    "CHATCLI_SKILLS_CATALOG_MAX_CHARS",
                    crate::skills::DEFAULT_CATALOG_MAX_CHARS,
                )?,
                active_max_chars: read.positive(
                    "CHATCLI_SKILLS_ACTIVE_MAX_CHARS",
                    crate::skills::DEFAULT_ACTIVE_MAX_CHARS,
                )?,
            },
        })
    }
}

/// The orchestrator: `CHATCLI_AGENT_PARALLEL_MODE`, `_MAX_PARALLEL`, `_<NAME>_MODEL`/`_EFFORT`.
fn resolve_agents(read: &Reader) -> Result<crate::agents::Settings, ConfigError> {
    Ok(crate::agents::Settings {
        parallel: read.switch("CHATCLI_AGENT_PARALLEL_MODE", true)?,
        max_parallel: read
            .positive(
                "CHATCLI_AGENT_MAX_PARALLEL",
                crate::agents::DEFAULT_MAX_PARALLEL,
            )?
            .min(16),
        overrides: crate::agents::Settings::overrides_from(read.env.iter())?,
    })
}

fn resolve_home(env: &Env) -> Result<PathBuf, ConfigError> {
    if env.raw("CHATCLI_HOME").is_some_and(|v| v.trim().is_empty()) {
        // An empty value is a mistake (a `CHATCLI_HOME=$UNSET_VAR`), not a request for the default.
        return Err(ConfigError::Invalid {
            setting: "CHATCLI_HOME".into(),
            value: String::new(),
            expected: "a directory path (unset it to use the default folder)".into(),
        });
    }
    if let Some(home) = env.get("CHATCLI_HOME") {
        return Ok(PathBuf::from(home));
    }
    directories::ProjectDirs::from("", "", "chatcli")
        .map(|dirs| dirs.config_dir().to_path_buf())
        .ok_or(ConfigError::NoHome)
}

#[cfg(test)]
mod tests;
