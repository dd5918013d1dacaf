//! The environment as chatcli sees it: a snapshot of the variables it reads, and the error a
//! setting with an unusable value gives, whichever module reads that setting.
//!
//! A leaf: it imports nothing of ours, so feature modules (MCP, secrets, logging) read their own
//! settings from an `Env` without importing `config`, which assembles them. The snapshot keeps
//! only variables chatcli reads plus those whose values must be known to mask them; a newcomer
//! adding a provider must add its prefix to `READ_PREFIXES` or its variables are never seen.

use std::collections::HashMap;

/// Whether a variable's name says it holds a secret.
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"]
        .iter()
        .any(|s| upper.contains(s))
        || upper.ends_with("PAT")
}

/// A setting with a value chatcli cannot use.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    /// A setting's value is not one of the accepted ones.
    #[error("{setting} must be {expected} (got \"{value}\")")]
    Invalid {
        setting: String,
        value: String,
        expected: String,
    },
    /// The config file could not be read or parsed.
    #[error("config file {path}: {message}")]
    File { path: String, message: String },
    /// No home directory could be found for chatcli's files.
    #[error("cannot find a home directory for chatcli's files: set CHATCLI_HOME")]
    NoHome,
    /// A variable chatcli reads holds bytes that are not UTF-8.
    #[error("{var} is not valid UTF-8: give it a UTF-8 value or unset it")]
    NotUnicode { var: String },
}

/// Name prefixes of the variables chatcli reads: its own settings and the providers' keys,
/// models and endpoints.
const READ_PREFIXES: [&str; 20] = [
    "CHATCLI_",
    "DEMO_",
    "BEDROCK_",
    "LLM_",
    "ANTHROPIC_",
    "CLAUDEAI_",
    "OPENAI_",
    "XAI_",
    "ZAI_",
    "MOONSHOT_",
    "MINIMAX_",
    "OPENROUTER_",
    "GITHUB_",
    "GOOGLE",
    "GEMINI_",
    "OLLAMA_",
    "AWS_",
    "COPILOT_",
    "STACKSPOT_",
    "BRAVE_",
];

/// Whether chatcli reads this variable.
fn is_read(name: &str) -> bool {
    READ_PREFIXES.iter().any(|p| name.starts_with(p))
        // StackSpot's unprefixed aliases, and the log filter.
        || matches!(name, "CLIENT_ID" | "CLIENT_KEY" | "RUST_LOG" | "LOG_LEVEL")
}

/// A snapshot of environment variables.
#[derive(Debug, Clone, Default)]
pub struct Env(HashMap<String, String>);

impl Env {
    /// The process environment, read now: the variables chatcli reads, plus those whose value
    /// it must know to mask it (secret-named ones, URLs with a password). Other variables are
    /// never decoded, so a stray non-UTF-8 value cannot stop chatcli; a non-UTF-8 value of one
    /// chatcli reads is an error naming it.
    pub fn from_process() -> Result<Env, ConfigError> {
        Env::from_os(std::env::vars_os())
    }

    /// `from_process` over the given pairs.
    pub fn from_os<I>(vars: I) -> Result<Env, ConfigError>
    where
        I: IntoIterator<Item = (std::ffi::OsString, std::ffi::OsString)>,
    {
        let mut kept = HashMap::new();
        for (name, value) in vars {
            // A name that is not UTF-8 is not one chatcli could read.
            let Some(name) = name.to_str() else { continue };
            let read = is_read(name);
            match value.into_string() {
                Ok(value) => {
                    if read
                        || is_secret_name(name)
                        || (value.contains("://") && value.contains('@'))
                    {
                        kept.insert(name.to_string(), value);
                    }
                }
                Err(_) if read => {
                    return Err(ConfigError::NotUnicode {
                        var: name.to_string(),
                    });
                }
                Err(_) => {}
            }
        }
        Ok(Env(kept))
    }

    /// An environment made of the given pairs (for tests).
    pub fn from_pairs<I, K, V>(pairs: I) -> Env
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        Env(pairs
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect())
    }

    /// Every variable, as (name, value).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The variable's value as set, blank included (to tell "set empty" from "unset").
    pub fn raw(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// Sets a variable (`config.toml`'s values are laid under the environment this way).
    pub fn set(&mut self, name: &str, value: String) {
        self.0.insert(name.to_string(), value);
    }

    /// The variable's value, if set and not blank.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.trim().is_empty())
    }
}
