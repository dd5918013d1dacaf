//! `CHATCLI_HOME/config.toml`: any setting of the registry, by its key, at the lowest
//! precedence.
//!
//! The file is read into the registry's settings and laid under the environment: a value the
//! environment leaves unset is added to the resolved `Env` as its variable, so every reader of
//! a setting (the config, MCP, the embedder, the notifier) sees it without knowing about the
//! file, and `/config` still says it came from the file. An unknown key, or a value that is not
//! a string, number or boolean, stops chatcli with a line naming the key.

use std::path::Path;

use super::settings::{self, Setting};
use crate::env::{ConfigError, Env};

/// The most of `config.toml` read: a real one is a few KB, so 4 MiB holds any whole while a
/// runaway file cannot fill memory.
const MAX_CONFIG_BYTES: u64 = 4 << 20;

/// What `config.toml` set.
#[derive(Debug, Default, Clone)]
pub(super) struct FileSettings {
    /// Settings with one variable, and the value as text.
    pub(super) values: Vec<(&'static Setting, String)>,
    /// The per-provider ones: `model` and `base_url`.
    pub(super) model: Option<String>,
    pub(super) base_url: Option<String>,
}

impl FileSettings {
    /// Lays the file's values under `env`: each variable the environment leaves unset takes
    /// the file's value. Returns the variables that did.
    pub(super) fn lay_under(&self, env: &mut Env) -> Vec<String> {
        let mut from_file = Vec::new();
        for (setting, value) in &self.values {
            let set = std::iter::once(setting.var)
                .chain(setting.aliases.iter().copied())
                .any(|v| env.get(v).is_some());
            if !set {
                env.set(setting.var, value.clone());
                from_file.push(setting.var.to_string());
            }
        }
        from_file
    }
}

/// Reads `config.toml` at `path`, with the `[profiles.NAME]` table of `profile` laid over its
/// top level; a missing file sets nothing (and then a profile asked for is an error).
pub(super) fn read(path: &Path, profile: Option<&str>) -> Result<FileSettings, ConfigError> {
    // Following links as before (a dotfiles manager links config files into place); a FIFO is
    // refused rather than waited on.
    let read = crate::files::read_following(path, MAX_CONFIG_BYTES).and_then(|b| b.into_text());
    let file_error = |message: String| ConfigError::File {
        path: path.display().to_string(),
        message,
    };
    let text = match read {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(file_error(e.to_string())),
    };
    let mut table: toml::Table =
        toml::from_str(&text).map_err(|e| file_error(e.message().to_string()))?;
    let profiles = match table.remove("profiles") {
        None => toml::Table::new(),
        Some(toml::Value::Table(profiles)) => profiles,
        Some(_) => {
            return Err(file_error(
                "`profiles` must be tables: [profiles.NAME] with settings under it".into(),
            ));
        }
    };
    let mut file = FileSettings::default();
    for (key, value) in table {
        take(&mut file, &key, value).map_err(|e| file_error(e.to_string()))?;
    }
    let Some(name) = profile else {
        return Ok(file);
    };
    let Some(toml::Value::Table(chosen)) = profiles.get(name).cloned() else {
        let known: Vec<&str> = profiles.keys().map(String::as_str).collect();
        return Err(file_error(format!(
            "--profile {name}: there is no [profiles.{name}] table (profiles here: {})",
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        )));
    };
    for (key, value) in chosen {
        take(&mut file, &key, value).map_err(|e| file_error(format!("[profiles.{name}]: {e}")))?;
    }
    Ok(file)
}

/// What is wrong with one `key = value` of the file (the caller names the file).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
enum KeyError {
    #[error(
        "unknown setting `{0}`: a key is a variable without CHATCLI_, lower-cased (e.g. `agent_max_turns = 30`); docs/configuration.md lists them"
    )]
    Unknown(String),
    #[error("`{0}` must be a string, a number or true/false")]
    NotScalar(String),
}

/// Records one `key = value`; a later one replaces an earlier (the profile's over the top's).
fn take(file: &mut FileSettings, key: &str, value: toml::Value) -> Result<(), KeyError> {
    let setting = settings::by_key(key).ok_or_else(|| KeyError::Unknown(key.into()))?;
    let text = match value {
        toml::Value::String(s) => s,
        toml::Value::Integer(n) => n.to_string(),
        toml::Value::Float(n) => n.to_string(),
        toml::Value::Boolean(b) => b.to_string(),
        _ => return Err(KeyError::NotScalar(key.into())),
    };
    match key {
        "model" => file.model = Some(text),
        "base_url" => file.base_url = Some(text),
        _ => {
            file.values.retain(|(s, _)| s.var != setting.var);
            file.values.push((setting, text));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_of_the_registry_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "mode = \"chat\"\nagent_early_exit_turns = 5\nmicrocompact = false\nmodel = \"m\"\n",
        )
        .unwrap();
        let file = read(&path, None).unwrap();
        let vars: Vec<(&str, &str)> = file
            .values
            .iter()
            .map(|(s, v)| (s.var, v.as_str()))
            .collect();
        assert!(vars.contains(&("CHATCLI_MODE", "chat")));
        assert!(vars.contains(&("CHATCLI_AGENT_EARLY_EXIT_TURNS", "5")));
        assert!(vars.contains(&("CHATCLI_MICROCOMPACT", "false")));
        assert_eq!(file.model.as_deref(), Some("m"));
        // The environment wins; the file fills in the rest.
        let mut env = Env::from_pairs([("CHATCLI_MODE", "coder")]);
        let from_file = file.lay_under(&mut env);
        assert_eq!(env.get("CHATCLI_MODE"), Some("coder"));
        assert_eq!(env.get("CHATCLI_AGENT_EARLY_EXIT_TURNS"), Some("5"));
        assert!(!from_file.contains(&"CHATCLI_MODE".to_string()));
        for bad in ["home = \"/x\"\n", "colour = 1\n", "mode = [1]\n"] {
            std::fs::write(&path, bad).unwrap();
            let err = read(&path, None).unwrap_err().to_string();
            assert!(err.contains("config.toml"), "{err}");
        }
    }

    #[test]
    fn a_profile_lays_its_table_over_the_top_level() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "agent_smart_route = \"auto\"\nagent_max_turns = 10\n\n[profiles.deep]\nagent_max_turns = 60\nmodel = \"big\"\n",
        )
        .unwrap();
        let plain = read(&path, None).unwrap();
        let deep = read(&path, Some("deep")).unwrap();
        let value = |file: &FileSettings, var: &str| {
            file.values
                .iter()
                .find(|(s, _)| s.var == var)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(
            value(&plain, "CHATCLI_AGENT_MAX_TURNS").as_deref(),
            Some("10")
        );
        assert_eq!(
            value(&deep, "CHATCLI_AGENT_MAX_TURNS").as_deref(),
            Some("60")
        );
        assert_eq!(
            value(&deep, "CHATCLI_AGENT_SMART_ROUTE").as_deref(),
            Some("auto")
        );
        assert_eq!(deep.model.as_deref(), Some("big"));
        let err = read(&path, Some("fast")).unwrap_err().to_string();
        assert!(
            err.contains("--profile fast: there is no [profiles.fast] table (profiles here: deep)"),
            "{err}"
        );
    }
}
