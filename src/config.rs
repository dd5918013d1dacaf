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

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::agent::routing::RouteMode;
use crate::agent::{DEFAULT_EARLY_EXIT_TURNS, DEFAULT_MAX_TURNS};
use crate::env::{ConfigError, Env};
use crate::protocol::Mode;
use crate::provider::anthropic::CacheTtl;
use crate::tools::SearchBackend;

mod provider_kind;
mod report;

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
}

/// The sandbox settings: `--sandbox` over `CHATCLI_SANDBOX`, and `CHATCLI_SANDBOX_NETWORK`.
fn sandbox_settings(
    overrides: &Overrides,
    env: &Env,
) -> Result<crate::sandbox::SandboxSettings, ConfigError> {
    use crate::sandbox::SandboxSettings;
    // The sandbox's own error says the same; this one names the flag when the flag was wrong.
    let invalid = |setting: &str, value: &str, expected: &str| ConfigError::Invalid {
        setting: setting.into(),
        value: value.into(),
        expected: expected.into(),
    };
    let (setting, value) = match (&overrides.sandbox, env.get("CHATCLI_SANDBOX")) {
        (Some(flag), _) => ("--sandbox", flag.as_str()),
        (None, Some(var)) => ("CHATCLI_SANDBOX", var),
        (None, None) => ("CHATCLI_SANDBOX", ""),
    };
    let (policy, required) = SandboxSettings::parse_policy(value).map_err(|_| {
        invalid(
            setting,
            value,
            "workspace-write, read-only, off or required",
        )
    })?;
    let network = match env.get("CHATCLI_SANDBOX_NETWORK") {
        Some(v) => SandboxSettings::parse_network(v)
            .map_err(|_| invalid("CHATCLI_SANDBOX_NETWORK", v, "on or off"))?,
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

/// `config.toml`: the same settings as the flags, for users who want them permanent.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    mode: Option<String>,
    provider: Option<String>,
    model: Option<String>,
    base_url: Option<String>,
    max_turns: Option<toml::Value>,
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
    /// The environment snapshot the config was resolved from (providers read their keys here).
    pub env: Env,
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

/// The variable's value as `parse` reads it (given trimmed), `default` when it is unset; a value
/// `parse` refuses is an error naming the variable and `expected`.
fn env_setting<T>(
    env: &Env,
    var: &str,
    default: T,
    expected: &str,
    parse: impl FnOnce(&str) -> Option<T>,
) -> Result<T, ConfigError> {
    match env.get(var) {
        None => Ok(default),
        Some(v) => parse(v.trim()).ok_or_else(|| ConfigError::Invalid {
            setting: var.to_string(),
            value: v.to_string(),
            expected: expected.to_string(),
        }),
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
        let file = read_file_config(&home.join("config.toml"))?;

        let mode = MODE
            .pick(overrides.mode.as_deref(), &env, file.mode.as_deref())
            .map(|(setting, v)| {
                v.parse::<Mode>().map_err(|_| ConfigError::Invalid {
                    setting,
                    value: v.to_string(),
                    expected: "one of: chat, agent, coder, run".into(),
                })
            })
            .transpose()?
            .unwrap_or_default();

        let provider_source = overrides
            .provider
            .as_deref()
            .map(|v| ("--provider", v))
            .or_else(|| env.get("CHATCLI_PROVIDER").map(|v| ("CHATCLI_PROVIDER", v)))
            .or_else(|| env.get("LLM_PROVIDER").map(|v| ("LLM_PROVIDER", v)))
            .or_else(|| {
                file.provider
                    .as_deref()
                    .map(|v| ("provider in config.toml", v))
            });
        let provider = provider_source
            .map(|(setting, v)| {
                ProviderKind::parse(v).ok_or_else(|| ConfigError::Invalid {
                    setting: setting.to_string(),
                    value: v.to_string(),
                    expected: format!("one of: {}", ProviderKind::accepted()),
                })
            })
            .transpose()?;

        let provider_explicit = provider.is_some();
        let provider = provider
            .or_else(|| detect_from_keys(&env))
            .unwrap_or(ProviderKind::Demo);
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

        let file_turns = file.max_turns.map(|v| match v {
            toml::Value::String(s) => s,
            other => other.to_string(),
        });
        let max_turns =
            match MAX_TURNS.pick(overrides.max_turns.as_deref(), &env, file_turns.as_deref()) {
                None => DEFAULT_MAX_TURNS,
                Some((setting, v)) => {
                    let n: i64 = v.trim().parse().map_err(|_| ConfigError::Invalid {
                        setting,
                        value: v.to_string(),
                        expected: "a whole number from 1 to 200".into(),
                    })?;
                    n.clamp(1, 200) as u32
                }
            };

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

        let cache_ttl = env_setting(
            &env,
            "CHATCLI_PROMPT_CACHE_TTL",
            CacheTtl::FiveMinutes,
            "5m or 1h",
            |v| match v.to_ascii_lowercase().as_str() {
                "5m" => Some(CacheTtl::FiveMinutes),
                "1h" => Some(CacheTtl::OneHour),
                _ => None,
            },
        )?;
        let switch = |var: &str, default: bool| {
            env_setting(
                &env,
                var,
                default,
                "on or off (1/0, true/false, yes/no)",
                parse_switch,
            )
        };
        let number = |var: &str, default: u64| {
            env_setting(&env, var, default, "a whole number", |v| {
                v.parse::<u64>()
                    .ok()
                    .map(|n| n.min(MAX_SIZE_SETTING as u64))
            })
        };
        let positive = |var: &str, default: usize| {
            env_setting(&env, var, default, "a positive whole number", |v| {
                v.parse::<usize>()
                    .ok()
                    .filter(|n| *n > 0)
                    .map(|n| n.min(MAX_SIZE_SETTING))
            })
        };

        let early_exit = switch("CHATCLI_AGENT_EARLY_EXIT", true)?;
        let early_exit_turns = env_setting(
            &env,
            "CHATCLI_AGENT_EARLY_EXIT_TURNS",
            DEFAULT_EARLY_EXIT_TURNS,
            "a whole number from 2 to 10",
            |v| v.parse::<i64>().ok().map(|n| n.clamp(2, 10) as u32),
        )?;
        let smart_route = env_setting(
            &env,
            "CHATCLI_AGENT_SMART_ROUTE",
            RouteMode::default(),
            "off, hint or auto (also 0/1/2)",
            RouteMode::parse,
        )?;

        let prompt_cache = switch("CHATCLI_PROMPT_CACHE", true)?;
        // `off` never saves: pages are inlined up to `max_length`.
        let webfetch_autosave_bytes = env_setting(
            &env,
            "CHATCLI_WEBFETCH_AUTOSAVE_BYTES",
            crate::tools::web_fetch::DEFAULT_AUTOSAVE_BYTES,
            "a whole number of bytes, or off",
            |v| match v.to_ascii_lowercase().as_str() {
                "off" => Some(usize::MAX),
                n => n.parse::<usize>().ok(),
            },
        )?;
        // At most 100 years: a cut-off further back than the epoch cannot be computed.
        let session_retention_days =
            number("CHATCLI_SESSION_RETENTION_DAYS", 30)?.clamp(1, MAX_RETENTION_DAYS);
        let agent_tmpdir = env.get("CHATCLI_AGENT_TMPDIR").map(PathBuf::from);
        let search = search_backends(&env);
        let sandbox = sandbox_settings(overrides, &env)?;

        let defaults = crate::agent::compaction::Settings::default();
        let compaction = crate::agent::compaction::Settings {
            enabled: switch("CHATCLI_MICROCOMPACT", defaults.enabled)?,
            min_content: positive("CHATCLI_MICROCOMPACT_MIN_CONTENT", defaults.min_content)?,
            truncate_turns: positive(
                "CHATCLI_MICROCOMPACT_TRUNCATE_TURNS",
                defaults.truncate_turns,
            )?,
            summarize_turns: positive(
                "CHATCLI_MICROCOMPACT_SUMMARIZE_TURNS",
                defaults.summarize_turns,
            )?,
            head_chars: positive("CHATCLI_MICROCOMPACT_HEAD_CHARS", defaults.head_chars)?,
            tail_chars: positive("CHATCLI_MICROCOMPACT_TAIL_CHARS", defaults.tail_chars)?,
            schedule: env_setting(
                &env,
                "CHATCLI_MICROCOMPACT_SCHEDULE",
                defaults.schedule,
                "consumed, batched or eager",
                |v| match v.to_ascii_lowercase().as_str() {
                    "eager" => Some(crate::agent::compaction::Schedule::Eager),
                    "batched" => Some(crate::agent::compaction::Schedule::Batched),
                    "consumed" => Some(crate::agent::compaction::Schedule::Consumed),
                    _ => None,
                },
            )?,
        };

        let memory_mode = env_setting(
            &env,
            "CHATCLI_MEMORY_MODE",
            crate::memory::MemoryMode::default(),
            "index, full or off",
            crate::memory::MemoryMode::parse,
        )?;
        let memory_autorecall = switch("CHATCLI_MEMORY_AUTORECALL", true)?;
        let memory_hyde = switch("CHATCLI_MEMORY_HYDE", false)?;
        let memory_retrieval_budget = positive("CHATCLI_MEMORY_RETRIEVAL_BUDGET", 4000)?;

        let budget_usd = env_setting(
            &env,
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
        )?;

        let max_retries = number(
            "CHATCLI_MAX_RETRIES",
            u64::from(crate::agent::retry::DEFAULT_MAX_RETRIES),
        )?
        .min(10) as u32;
        let max_request_bytes = positive(
            "CHATCLI_MAX_REQUEST_BYTES",
            crate::provider::http::DEFAULT_MAX_REQUEST_BYTES,
        )?;
        let response_timeout_secs = env_setting(
            &env,
            "CHATCLI_RESPONSE_TIMEOUT",
            crate::provider::http::DEFAULT_RESPONSE_TIMEOUT.as_secs(),
            "a positive number of seconds, e.g. 600",
            |v| v.parse::<u64>().ok().filter(|n| *n > 0),
        )?;

        let bootstrap_max_chars = positive(
            "CHATCLI_BOOTSTRAP_MAX_CHARS",
            crate::prompt::bootstrap::DEFAULT_MAX_CHARS,
        )?;
        let context_max_tokens = positive(
            "CHATCLI_CONTEXT_MAX_TOKENS",
            crate::prompt::attachments::DEFAULT_MAX_TOKENS as usize,
        )? as u64;

        let skills = crate::skills::Limits {
            catalog_max_chars: positive(
                "CHATCLI_SKILLS_CATALOG_MAX_CHARS",
                crate::skills::DEFAULT_CATALOG_MAX_CHARS,
            )?,
            active_max_chars: positive(
                "CHATCLI_SKILLS_ACTIVE_MAX_CHARS",
                crate::skills::DEFAULT_ACTIVE_MAX_CHARS,
            )?,
        };

        let agents = crate::agents::Settings {
            parallel: switch("CHATCLI_AGENT_PARALLEL_MODE", true)?,
            max_parallel: positive(
                "CHATCLI_AGENT_MAX_PARALLEL",
                crate::agents::DEFAULT_MAX_PARALLEL,
            )?
            .min(16),
            overrides: crate::agents::Settings::overrides_from(env.iter()).map_err(
                |(setting, value)| ConfigError::Invalid {
                    setting,
                    value,
                    expected: "low, medium or high".into(),
                },
            )?,
        };

        let first_byte_timeout = env_setting(
            &env,
            "CHATCLI_FIRST_BYTE_TIMEOUT",
            None,
            "a positive number of seconds, e.g. 600",
            |v| {
                v.parse::<u64>()
                    .ok()
                    .filter(|s| *s > 0)
                    .map(|s| Some(std::time::Duration::from_secs(s)))
            },
        )?;

        Ok(Config {
            home,
            skills,
            agents,
            bootstrap_max_chars,
            context_max_tokens,
            max_retries,
            max_request_bytes,
            response_timeout_secs,
            first_byte_timeout,
            budget_usd,
            memory_mode,
            memory_autorecall,
            memory_hyde,
            memory_retrieval_budget,
            compaction,
            webfetch_autosave_bytes,
            agent_tmpdir,
            sandbox,
            session_retention_days,
            search,
            early_exit,
            early_exit_turns,
            smart_route,
            cache_ttl,
            prompt_cache,
            mode,
            provider,
            provider_explicit,
            model,
            base_url,
            max_turns,
            workspace,
            auto_approve: overrides.yes,
            env,
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

/// Where a setting can come from: its flag, its environment variable and its `config.toml` key.
struct Setting {
    flag: &'static str,
    var: &'static str,
    key: &'static str,
}

impl Setting {
    /// The first source that is set, as (name of that source, value).
    fn pick<'a>(
        &self,
        flag: Option<&'a str>,
        env: &'a Env,
        file: Option<&'a str>,
    ) -> Option<(String, &'a str)> {
        flag.map(|v| (self.flag.to_string(), v))
            .or_else(|| env.get(self.var).map(|v| (self.var.to_string(), v)))
            .or_else(|| file.map(|v| (format!("{} in config.toml", self.key), v)))
    }
}

const MODE: Setting = Setting {
    flag: "--mode",
    var: "CHATCLI_MODE",
    key: "mode",
};
const MAX_TURNS: Setting = Setting {
    flag: "--max-turns",
    var: "CHATCLI_AGENT_MAX_TURNS",
    key: "max_turns",
};

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

/// The most of `config.toml` read: a real one is a few KB, so 4 MiB holds any whole while a
/// runaway file cannot fill memory.
const MAX_CONFIG_BYTES: u64 = 4 << 20;

fn read_file_config(path: &Path) -> Result<FileConfig, ConfigError> {
    // Following links as before (a dotfiles manager links config files into place); a FIFO is
    // refused rather than waited on.
    let read = crate::files::read_following(path, MAX_CONFIG_BYTES).and_then(|b| b.into_text());
    let text = match read {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(FileConfig::default()),
        Err(e) => {
            return Err(ConfigError::File {
                path: path.display().to_string(),
                message: e.to_string(),
            });
        }
    };
    toml::from_str(&text).map_err(|e| ConfigError::File {
        path: path.display().to_string(),
        message: e.message().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(pairs: &[(&str, &str)], overrides: Overrides) -> Result<Config, ConfigError> {
        let home = tempfile::tempdir().expect("tempdir");
        let mut env: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        env.push(("CHATCLI_HOME".into(), home.path().display().to_string()));
        Config::resolve(&overrides, Env::from_pairs(env))
    }

    #[test]
    fn defaults_when_nothing_is_set() {
        let config = resolve(&[], Overrides::default()).expect("config");
        assert_eq!(config.mode, Mode::Agent);
        assert_eq!(config.provider, ProviderKind::Demo);
        assert!(!config.provider_explicit);
        assert_eq!(config.max_turns, DEFAULT_MAX_TURNS);
    }

    #[test]
    fn the_response_timeout_is_seconds_600_by_default() {
        let config = resolve(&[], Overrides::default()).expect("config");
        assert_eq!(config.response_timeout_secs, 600);
        let config = resolve(
            &[("CHATCLI_RESPONSE_TIMEOUT", "1200")],
            Overrides::default(),
        )
        .expect("config");
        assert_eq!(config.response_timeout_secs, 1200);
        let err = resolve(&[("CHATCLI_RESPONSE_TIMEOUT", "10m")], Overrides::default())
            .expect_err("refused");
        assert!(
            err.to_string().contains("CHATCLI_RESPONSE_TIMEOUT"),
            "{err}"
        );
        assert!(err.to_string().contains("seconds"), "{err}");
    }

    #[test]
    fn flags_beat_environment() {
        let overrides = Overrides {
            mode: Some("coder".into()),
            provider: Some("openai".into()),
            ..Overrides::default()
        };
        let config = resolve(
            &[("CHATCLI_MODE", "chat"), ("LLM_PROVIDER", "CLAUDEAI")],
            overrides,
        )
        .expect("config");
        assert_eq!(config.mode, Mode::Coder);
        assert_eq!(config.provider, ProviderKind::OpenAi);
    }

    #[test]
    fn reference_aliases_are_accepted() {
        let config =
            resolve(&[("LLM_PROVIDER", "CLAUDEAI")], Overrides::default()).expect("config");
        assert_eq!(config.provider, ProviderKind::Anthropic);
        let config =
            resolve(&[("LLM_PROVIDER", "GoogleAI")], Overrides::default()).expect("config");
        assert_eq!(config.provider, ProviderKind::GoogleAi);
        let config = resolve(
            &[("CHATCLI_PROVIDER", "demo"), ("LLM_PROVIDER", "OPENAI")],
            Overrides::default(),
        )
        .expect("config");
        assert_eq!(config.provider, ProviderKind::Demo);
    }

    #[test]
    fn bad_values_name_the_setting() {
        let err = resolve(&[("CHATCLI_MODE", "fast")], Overrides::default())
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some("CHATCLI_MODE must be one of: chat, agent, coder, run (got \"fast\")")
        );
        let err = resolve(
            &[("CHATCLI_AGENT_MAX_TURNS", "three")],
            Overrides::default(),
        )
        .err()
        .map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some("CHATCLI_AGENT_MAX_TURNS must be a whole number from 1 to 200 (got \"three\")")
        );
        let err = resolve(&[("LLM_PROVIDER", "skynet")], Overrides::default())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.starts_with("LLM_PROVIDER must be one of: anthropic, openai"),
            "{err}"
        );
    }

    #[test]
    fn a_key_in_the_environment_picks_its_provider_and_its_model_variable() {
        let config = resolve(
            &[
                ("OPENAI_API_KEY", "sk-x"),
                ("OPENAI_MODEL", "gpt-5"),
                ("ANTHROPIC_MODEL", "claude"),
            ],
            Overrides::default(),
        )
        .expect("config");
        assert_eq!(config.provider, ProviderKind::OpenAi);
        assert!(!config.provider_explicit);
        assert_eq!(config.model.as_deref(), Some("gpt-5"));
        let config = resolve(
            &[
                ("CLAUDEAI_API_KEY", "k"),
                ("CLAUDEAI_MODEL", "claude-haiku-4-5"),
                ("OPENAI_API_KEY", "k"),
            ],
            Overrides::default(),
        )
        .expect("config");
        assert_eq!(config.provider, ProviderKind::Anthropic);
        assert_eq!(config.model.as_deref(), Some("claude-haiku-4-5"));
    }

    #[test]
    fn early_exit_settings_are_clamped_and_checked() {
        let config = resolve(&[], Overrides::default()).expect("config");
        assert!(config.early_exit);
        assert_eq!(config.early_exit_turns, 3);
        let config = resolve(
            &[("CHATCLI_AGENT_EARLY_EXIT_TURNS", "50")],
            Overrides::default(),
        )
        .expect("config");
        assert_eq!(config.early_exit_turns, 10);
        let config = resolve(
            &[("CHATCLI_AGENT_EARLY_EXIT_TURNS", "1")],
            Overrides::default(),
        )
        .expect("config");
        assert_eq!(config.early_exit_turns, 2);
        for off in ["0", "false", "OFF", "no"] {
            let config = resolve(&[("CHATCLI_AGENT_EARLY_EXIT", off)], Overrides::default())
                .expect("config");
            assert!(!config.early_exit, "{off}");
        }
        let err = resolve(
            &[("CHATCLI_AGENT_EARLY_EXIT_TURNS", "three")],
            Overrides::default(),
        )
        .err()
        .map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some(
                "CHATCLI_AGENT_EARLY_EXIT_TURNS must be a whole number from 2 to 10 (got \"three\")"
            )
        );
        let err = resolve(
            &[("CHATCLI_AGENT_SMART_ROUTE", "maybe")],
            Overrides::default(),
        )
        .err()
        .map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some(
                "CHATCLI_AGENT_SMART_ROUTE must be off, hint or auto (also 0/1/2) (got \"maybe\")"
            )
        );
    }

    #[test]
    fn bootstrap_and_context_ceilings() {
        let config = resolve(&[], Overrides::default()).expect("config");
        assert_eq!(config.bootstrap_max_chars, 20_000);
        assert_eq!(config.context_max_tokens, 40_000);
        assert_eq!(config.skills, crate::skills::Limits::default());
        let skills = resolve(
            &[
                ("CHATCLI_SKILLS_CATALOG_MAX_CHARS", "800"),
                ("CHATCLI_SKILLS_ACTIVE_MAX_CHARS", "900"),
            ],
            Overrides::default(),
        )
        .expect("config")
        .skills;
        assert_eq!(
            (skills.catalog_max_chars, skills.active_max_chars),
            (800, 900)
        );
        let config = resolve(
            &[
                ("CHATCLI_BOOTSTRAP_MAX_CHARS", "500"),
                ("CHATCLI_CONTEXT_MAX_TOKENS", "9000"),
            ],
            Overrides::default(),
        )
        .expect("config");
        assert_eq!(config.bootstrap_max_chars, 500);
        assert_eq!(config.context_max_tokens, 9000);
        let err = resolve(&[("CHATCLI_CONTEXT_MAX_TOKENS", "0")], Overrides::default())
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some("CHATCLI_CONTEXT_MAX_TOKENS must be a positive whole number (got \"0\")")
        );
    }

    #[test]
    fn web_settings() {
        let config = resolve(&[], Overrides::default()).expect("config");
        assert_eq!(config.webfetch_autosave_bytes, 10_000);
        assert_eq!(config.search, vec![SearchBackend::duckduckgo()]);
        let config = resolve(
            &[
                ("CHATCLI_WEBFETCH_AUTOSAVE_BYTES", "500"),
                ("CHATCLI_SEARXNG_URL", "http://s"),
                ("BRAVE_SEARCH_API_KEY", "b"),
                ("CHATCLI_WEBSEARCH_BRAVE_URL", "http://brave"),
                ("CHATCLI_WEBSEARCH_DDG_URL", "http://127.0.0.1:9"),
            ],
            Overrides::default(),
        )
        .expect("config");
        assert_eq!(config.webfetch_autosave_bytes, 500);
        assert_eq!(
            config.search,
            vec![
                SearchBackend::Searxng("http://s".into()),
                SearchBackend::Brave {
                    key: "b".into(),
                    base_url: "http://brave".into()
                },
                SearchBackend::DuckDuckGo {
                    base_url: "http://127.0.0.1:9".into()
                },
            ]
        );
        let err = resolve(
            &[("CHATCLI_WEBFETCH_AUTOSAVE_BYTES", "10k")],
            Overrides::default(),
        )
        .err()
        .map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some(
                "CHATCLI_WEBFETCH_AUTOSAVE_BYTES must be a whole number of bytes, or off (got \"10k\")"
            )
        );
    }

    #[test]
    fn microcompact_settings_are_positive_integers() {
        let config = resolve(
            &[
                ("CHATCLI_MICROCOMPACT_TRUNCATE_TURNS", "3"),
                ("CHATCLI_MICROCOMPACT_SCHEDULE", "batched"),
            ],
            Overrides::default(),
        )
        .expect("config");
        assert_eq!(config.compaction.truncate_turns, 3);
        assert_eq!(config.compaction.summarize_turns, 4);
        assert_eq!(
            config.compaction.schedule,
            crate::agent::compaction::Schedule::Batched
        );
        let consumed = resolve(
            &[("CHATCLI_MICROCOMPACT_SCHEDULE", "Consumed")],
            Overrides::default(),
        )
        .expect("config");
        assert_eq!(
            consumed.compaction.schedule,
            crate::agent::compaction::Schedule::Consumed
        );
        assert_eq!(
            resolve(&[], Overrides::default())
                .expect("config")
                .compaction
                .schedule,
            crate::agent::compaction::Schedule::Consumed,
            "the default"
        );
        for bad in ["0", "-1", "two"] {
            let err = resolve(
                &[("CHATCLI_MICROCOMPACT_HEAD_CHARS", bad)],
                Overrides::default(),
            )
            .err()
            .map(|e| e.to_string());
            assert_eq!(
                err,
                Some(format!(
                    "CHATCLI_MICROCOMPACT_HEAD_CHARS must be a positive whole number (got \"{bad}\")"
                ))
            );
        }
    }

    #[test]
    fn every_optimisation_has_an_off_switch() {
        let defaults = resolve(&[], Overrides::default()).expect("config");
        assert!(defaults.prompt_cache && defaults.compaction.enabled);
        let off = resolve(
            &[
                ("CHATCLI_PROMPT_CACHE", "off"),
                ("CHATCLI_MICROCOMPACT", "0"),
                ("CHATCLI_WEBFETCH_AUTOSAVE_BYTES", "OFF"),
            ],
            Overrides::default(),
        )
        .expect("config");
        assert!(!off.prompt_cache);
        assert!(!off.compaction.enabled);
        assert_eq!(off.webfetch_autosave_bytes, usize::MAX, "never saved");
        let err = resolve(
            &[("CHATCLI_PROMPT_CACHE", "sometimes")],
            Overrides::default(),
        )
        .err()
        .map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some(
                "CHATCLI_PROMPT_CACHE must be on or off (1/0, true/false, yes/no) (got \"sometimes\")"
            )
        );
    }

    #[test]
    fn max_turns_is_clamped() {
        let config =
            resolve(&[("CHATCLI_AGENT_MAX_TURNS", "500")], Overrides::default()).expect("config");
        assert_eq!(config.max_turns, 200);
        let config =
            resolve(&[("CHATCLI_AGENT_MAX_TURNS", "0")], Overrides::default()).expect("config");
        assert_eq!(config.max_turns, 1);
    }

    #[test]
    fn config_file_is_the_last_resort_and_checked() {
        let home = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            home.path().join("config.toml"),
            "mode = \"chat\"\nmax_turns = 7\n",
        )
        .expect("write");
        let env = Env::from_pairs([("CHATCLI_HOME", home.path().display().to_string())]);
        let config = Config::resolve(&Overrides::default(), env.clone()).expect("config");
        assert_eq!(config.mode, Mode::Chat);
        assert_eq!(config.max_turns, 7);
        std::fs::write(home.path().join("config.toml"), "colour = \"red\"\n").expect("write");
        let err = Config::resolve(&Overrides::default(), env)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains("config.toml") && err.contains("colour"),
            "{err}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_non_utf8_variable_is_ignored_unless_chatcli_reads_it() {
        use std::ffi::OsString;
        use std::os::unix::ffi::OsStringExt;
        let bad = || OsString::from_vec(vec![0x66, 0xff, 0xfe]);
        let env = Env::from_os([
            (OsString::from("LC_STRANGE"), bad()),
            (OsString::from_vec(vec![0xff]), OsString::from("x")),
            (OsString::from("CHATCLI_MODE"), OsString::from("chat")),
            (OsString::from("EDITOR"), OsString::from("vim")),
            (
                OsString::from("CLIENT_ID"),
                OsString::from("stackspot-client"),
            ),
            (
                OsString::from("DATABASE_URL"),
                OsString::from("postgres://a:b@h/d"),
            ),
        ])
        .expect("a stray variable is no error");
        assert_eq!(env.get("CHATCLI_MODE"), Some("chat"));
        assert_eq!(env.get("CLIENT_ID"), Some("stackspot-client"));
        assert_eq!(
            env.get("EDITOR"),
            None,
            "variables chatcli does not use are not kept"
        );
        assert!(
            env.get("DATABASE_URL").is_some(),
            "kept to mask its password"
        );
        let err = Env::from_os([(OsString::from("CHATCLI_MODE"), bad())])
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some("CHATCLI_MODE is not valid UTF-8: give it a UTF-8 value or unset it")
        );
    }

    #[test]
    fn an_empty_chatcli_home_is_an_error() {
        let err = Config::resolve(
            &Overrides::default(),
            Env::from_pairs([("CHATCLI_HOME", "")]),
        )
        .err()
        .map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some(
                "CHATCLI_HOME must be a directory path (unset it to use the default folder) (got \"\")"
            )
        );
    }

    /// Every numeric setting, with the overflow class among its values, resolves without a
    /// panic, and the values it resolves to never panic where they are used (pruning, twice as
    /// on a second run; microcompact arithmetic).
    mod numeric_settings {
        use super::*;
        use proptest::prelude::*;

        const NUMERIC: [&str; 14] = [
            "CHATCLI_AGENT_MAX_TURNS",
            "CHATCLI_AGENT_EARLY_EXIT_TURNS",
            "CHATCLI_WEBFETCH_AUTOSAVE_BYTES",
            "CHATCLI_SESSION_RETENTION_DAYS",
            "CHATCLI_MICROCOMPACT_MIN_CONTENT",
            "CHATCLI_MICROCOMPACT_TRUNCATE_TURNS",
            "CHATCLI_MICROCOMPACT_SUMMARIZE_TURNS",
            "CHATCLI_MICROCOMPACT_HEAD_CHARS",
            "CHATCLI_MICROCOMPACT_TAIL_CHARS",
            "CHATCLI_MEMORY_RETRIEVAL_BUDGET",
            "CHATCLI_SESSION_BUDGET_USD",
            "CHATCLI_MAX_RETRIES",
            "CHATCLI_MAX_REQUEST_BYTES",
            "CHATCLI_PROMPT_CACHE_TTL",
        ];

        fn value() -> impl Strategy<Value = String> {
            prop_oneof![
                // The overflow class.
                Just(u64::MAX.to_string()),
                Just((u64::MAX - 1).to_string()),
                Just(i64::MAX.to_string()),
                Just(i64::MIN.to_string()),
                Just(usize::MAX.to_string()),
                Just("18446744073709551616".to_string()),
                Just("1e400".to_string()),
                Just("-1e400".to_string()),
                any::<u64>().prop_map(|n| n.to_string()),
                any::<i64>().prop_map(|n| n.to_string()),
                any::<f64>().prop_map(|n| n.to_string()),
                // Ordinary and odd values.
                (0u64..1000).prop_map(|n| n.to_string()),
                Just("0".to_string()),
                Just("-0".to_string()),
                Just("NaN".to_string()),
                Just("inf".to_string()),
                Just(" 12 ".to_string()),
                "[a-z0-9 .$-]{0,12}",
            ]
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(200))]
            #[test]
            fn no_value_panics(var in 0usize..NUMERIC.len(), value in value()) {
                let home = tempfile::tempdir().expect("tempdir");
                std::fs::create_dir_all(home.path().join("sessions")).expect("mkdir");
                let env = Env::from_pairs([
                    ("CHATCLI_HOME".to_string(), home.path().display().to_string()),
                    (NUMERIC[var].to_string(), value.clone()),
                ]);
                if let Ok(config) = Config::resolve(&Overrides::default(), env) {
                    prop_assert!(config.session_retention_days <= MAX_RETENTION_DAYS);
                    prop_assert!((1..=200).contains(&config.max_turns));
                    for _run in 0..2 {
                        crate::tools::scratch::prune_sessions(
                            &home.path().join("sessions"),
                            config.session_retention_days,
                        );
                    }
                    let text = "x".repeat(5000);
                    let _ = crate::agent::compaction::truncate(
                        &text,
                        config.compaction.head_chars,
                        config.compaction.tail_chars,
                    );
                    if let Some(budget) = config.budget_usd {
                        prop_assert!(budget.is_finite() && budget > 0.0);
                    }
                }
            }
        }
    }

    #[test]
    fn local_servers_are_loopback_private_or_localhost() {
        for url in [
            "http://127.0.0.1:8080/v1",
            "http://localhost:11434",
            "http://[::1]:8000/v1",
            "http://192.168.1.20:8000/v1",
            "http://10.0.0.5/v1",
            "https://user:pw@172.16.3.4:443/v1",
        ] {
            assert!(is_local_url(url), "{url}");
        }
        for url in [
            "https://api.openai.com/v1",
            "http://172.32.0.1/v1",
            "http://8.8.8.8",
            "https://localhost.example.com",
        ] {
            assert!(!is_local_url(url), "{url}");
        }
    }

    #[test]
    fn first_byte_timeout_is_longer_for_local_servers_and_settable() {
        let remote = resolve(&[("OPENAI_API_KEY", "k")], Overrides::default()).expect("config");
        assert_eq!(remote.first_byte_timeout().as_secs(), 90);
        let local = resolve(
            &[
                ("OPENAI_API_KEY", "k"),
                ("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1"),
            ],
            Overrides::default(),
        )
        .expect("config");
        assert_eq!(local.first_byte_timeout().as_secs(), 600);
        let set = resolve(
            &[
                ("OPENAI_API_KEY", "k"),
                ("CHATCLI_FIRST_BYTE_TIMEOUT", "30"),
            ],
            Overrides::default(),
        )
        .expect("config");
        assert_eq!(set.first_byte_timeout().as_secs(), 30);
        let err = resolve(
            &[("CHATCLI_FIRST_BYTE_TIMEOUT", "soon")],
            Overrides::default(),
        )
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
        assert!(err.contains("CHATCLI_FIRST_BYTE_TIMEOUT"), "{err}");
    }

    #[test]
    fn the_orchestrator_is_on_by_default_and_its_settings_are_checked() {
        let config = resolve(&[], Overrides::default()).expect("config");
        assert!(config.agents.parallel);
        assert_eq!(
            config.agents.max_parallel,
            crate::agents::DEFAULT_MAX_PARALLEL
        );
        let config = resolve(
            &[
                ("CHATCLI_AGENT_PARALLEL_MODE", "false"),
                ("CHATCLI_AGENT_MAX_PARALLEL", "2"),
                ("CHATCLI_AGENT_REVIEWER_MODEL", "big-model"),
            ],
            Overrides::default(),
        )
        .expect("config");
        assert!(!config.agents.parallel);
        assert_eq!(config.agents.max_parallel, 2);
        assert_eq!(
            config
                .agents
                .overrides
                .get("REVIEWER")
                .and_then(|o| o.model.as_deref()),
            Some("big-model")
        );
        let err = resolve(
            &[("CHATCLI_AGENT_FILE_EFFORT", "max")],
            Overrides::default(),
        )
        .err()
        .map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some("CHATCLI_AGENT_FILE_EFFORT must be low, medium or high (got \"max\")")
        );
    }
}
