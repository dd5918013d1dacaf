//! What `/config` shows: every effective setting and where it came from (a flag, the
//! environment, `config.toml`, a key that was found, or the default).
//!
//! The sources are worked out again from the same inputs `Config::resolve` used, in the same
//! precedence, so the report cannot drift from what the session really runs with: the values
//! shown are the resolved `Config`'s own.

use super::{Config, Env, Overrides, file, settings};

/// Where one setting's value came from: its flag (and whether it was given), else the first of
/// its variables the environment set, else the one `config.toml` set, else the default.
fn source(flag: Option<(&str, bool)>, vars: &[&str], env: &Env, from_file: &[String]) -> String {
    if let Some((flag, true)) = flag {
        return format!("flag {flag}");
    }
    let in_file = |v: &str| from_file.iter().any(|f| f == v);
    if let Some(var) = vars.iter().find(|v| env.get(v).is_some() && !in_file(v)) {
        return format!("environment {var}");
    }
    if let Some(var) = vars.iter().find(|v| in_file(v)) {
        let key = settings::find(var).and_then(settings::Setting::file_key);
        return format!("config.toml {}", key.as_deref().unwrap_or(var));
    }
    "default".into()
}

/// The source of a per-provider setting (`model`, `base_url`): flag, variable, `config.toml`.
fn per_provider_source(
    flag: (&str, bool),
    vars: &[&str],
    env: &Env,
    file_key: (&str, bool),
) -> String {
    match (flag, vars.iter().find(|v| env.get(v).is_some()), file_key) {
        ((flag, true), _, _) => format!("flag {flag}"),
        (_, Some(var), _) => format!("environment {var}"),
        (_, None, (key, true)) => format!("config.toml {key}"),
        _ => "default".into(),
    }
}

/// The variables the fixed rows of the report already show.
const SHOWN: &[&str] = &[
    "CHATCLI_HOME",
    "CHATCLI_PROVIDER",
    "LLM_PROVIDER",
    "CHATCLI_MODE",
    "CHATCLI_AGENT_MAX_TURNS",
    "CHATCLI_MEMORY_MODE",
    "CHATCLI_MICROCOMPACT_SCHEDULE",
    "CHATCLI_AGENT_SMART_ROUTE",
    "CHATCLI_AGENT_EARLY_EXIT",
    "CHATCLI_AGENT_EARLY_EXIT_TURNS",
    "CHATCLI_AGENT_PARALLEL_MODE",
    "CHATCLI_AGENT_MAX_PARALLEL",
    "CHATCLI_SESSION_BUDGET_USD",
    "CHATCLI_PROMPT_CACHE_TTL",
    "CHATCLI_CACHE_KEEPWARM",
    "CHATCLI_SANDBOX",
    "CHATCLI_SANDBOX_NETWORK",
    crate::process::ENV_ALLOW_VAR,
    "CHATCLI_MAX_RETRIES",
];

impl Config {
    /// Every other setting of the registry the environment or `config.toml` sets, by its key,
    /// with its value (a secret one only as `set`) and where it came from.
    fn other_settings(&self) -> Vec<(&'static str, String, String)> {
        settings::SETTINGS
            .iter()
            .filter(|s| !s.is_pattern() && !SHOWN.contains(&s.var))
            .filter_map(|s| {
                let var = std::iter::once(s.var)
                    .chain(s.aliases.iter().copied())
                    .find(|v| self.env.get(v).is_some())?;
                let value = self.env.get(var).unwrap_or_default();
                let shown = if crate::env::is_secret_name(var) {
                    "set".to_string()
                } else {
                    value.to_string()
                };
                let name = s.key.filter(|k| !k.is_empty()).unwrap_or(s.var);
                Some((
                    name,
                    shown,
                    source(None, &[var], &self.env, &self.from_file),
                ))
            })
            .collect()
    }

    /// The rows of the features' settings: memory, compaction, routing, guards, budget, cache,
    /// sandbox, child environment, retries, home.
    fn feature_rows(&self) -> Vec<(&'static str, String, String)> {
        let env = &self.env;
        let from_file = &self.from_file;
        let on_off = |b: bool| if b { "on" } else { "off" }.to_string();
        vec![
            (
                "memory",
                format!("{:?}", self.memory_mode).to_lowercase(),
                source(None, &["CHATCLI_MEMORY_MODE"], env, from_file),
            ),
            (
                "microcompact schedule",
                format!("{:?}", self.compaction.schedule).to_lowercase(),
                source(
                    None,
                    &[
                        "CHATCLI_MICROCOMPACT_SCHEDULE",
                        "CHATCLI_MICROCOMPACT_TRUNCATE_TURNS",
                        "CHATCLI_MICROCOMPACT_SUMMARIZE_TURNS",
                        "CHATCLI_MICROCOMPACT_HEAD_CHARS",
                        "CHATCLI_MICROCOMPACT_TAIL_CHARS",
                    ],
                    env,
                    from_file,
                ),
            ),
            (
                "smart routing",
                format!("{:?}", self.smart_route).to_lowercase(),
                source(None, &["CHATCLI_AGENT_SMART_ROUTE"], env, from_file),
            ),
            (
                "early exit",
                format!(
                    "{} after {} repeats",
                    on_off(self.early_exit),
                    self.early_exit_turns
                ),
                source(
                    None,
                    &["CHATCLI_AGENT_EARLY_EXIT", "CHATCLI_AGENT_EARLY_EXIT_TURNS"],
                    env,
                    from_file,
                ),
            ),
            (
                "parallel agents",
                if self.agents.parallel {
                    format!("on, {} at once", self.agents.max_parallel)
                } else {
                    "off".into()
                },
                source(
                    None,
                    &["CHATCLI_AGENT_PARALLEL_MODE", "CHATCLI_AGENT_MAX_PARALLEL"],
                    env,
                    from_file,
                ),
            ),
        ]
    }

    /// The rows of the limits and protections: budget, cache TTL, sandbox, child environment,
    /// retries, home.
    fn safety_rows(&self, overrides: &Overrides) -> Vec<(&'static str, String, String)> {
        let env = &self.env;
        let from_file = &self.from_file;
        vec![
            (
                "budget",
                self.budget_usd
                    .map_or_else(|| "none".into(), |b| format!("${b:.2}")),
                source(None, &["CHATCLI_SESSION_BUDGET_USD"], env, from_file),
            ),
            (
                "prompt cache TTL",
                self.cache_ttl.name().to_string(),
                source(None, &["CHATCLI_PROMPT_CACHE_TTL"], env, from_file),
            ),
            (
                "cache keep-warm",
                self.keepwarm.name(),
                source(None, &["CHATCLI_CACHE_KEEPWARM"], env, from_file),
            ),
            (
                "sandbox",
                self.sandbox.describe(),
                source(
                    Some(("--sandbox", overrides.sandbox.is_some())),
                    &["CHATCLI_SANDBOX", "CHATCLI_SANDBOX_NETWORK"],
                    env,
                    from_file,
                ),
            ),
            (
                "child environment",
                {
                    let withheld = crate::process::withheld_among(
                        env.iter().map(|(name, _)| name),
                        env.get(crate::process::ENV_ALLOW_VAR).unwrap_or(""),
                    );
                    if withheld.is_empty() {
                        "nothing withheld".to_string()
                    } else {
                        format!(
                            "withheld from commands and servers: {}",
                            withheld.join(", ")
                        )
                    }
                },
                source(None, &[crate::process::ENV_ALLOW_VAR], env, from_file),
            ),
            (
                "max retries",
                self.max_retries.to_string(),
                source(None, &["CHATCLI_MAX_RETRIES"], env, from_file),
            ),
            (
                "home",
                self.home.display().to_string(),
                source(None, &["CHATCLI_HOME"], env, from_file),
            ),
        ]
    }

    /// How the provider was chosen: named (flag, variable, `config.toml`), detected from a key,
    /// or the default.
    fn provider_source(&self, overrides: &Overrides) -> String {
        let env = &self.env;
        if self.provider_explicit {
            source(
                Some(("--provider", overrides.provider.is_some())),
                &["CHATCLI_PROVIDER", "LLM_PROVIDER"],
                env,
                &self.from_file,
            )
        } else if let Some(key) = self
            .provider
            .key_vars()
            .iter()
            .find(|k| env.get(k).is_some())
        {
            format!("detected: {key} is set")
        } else {
            "default (no key found)".into()
        }
    }

    /// One line per setting: `name  value  (source)`.
    pub fn report(&self, overrides: &Overrides) -> Vec<String> {
        let env = &self.env;
        let file = file::read(&self.home.join("config.toml"), overrides.profile.as_deref())
            .unwrap_or_default();
        let from_file = &self.from_file;
        let model_vars = self.provider.model_vars();
        let model_vars: Vec<&str> = model_vars.iter().map(String::as_str).collect();
        let url_vars = self.provider.base_url_vars();
        let url_vars: Vec<&str> = url_vars.iter().map(String::as_str).collect();
        let (default_url, default_model) = self.provider.defaults();
        let provider_source = self.provider_source(overrides);
        let mut rows: Vec<(&str, String, String)> = vec![
            (
                "provider",
                self.provider.as_str().to_string(),
                provider_source,
            ),
            (
                "model",
                self.model.clone().unwrap_or_else(|| default_model.into()),
                per_provider_source(
                    ("--model", overrides.model.is_some()),
                    &model_vars,
                    env,
                    ("model", file.model.is_some()),
                ),
            ),
            (
                "base URL",
                self.base_url.clone().unwrap_or_else(|| default_url.into()),
                per_provider_source(
                    ("--base-url", overrides.base_url.is_some()),
                    &url_vars,
                    env,
                    ("base_url", file.base_url.is_some()),
                ),
            ),
            (
                "mode",
                self.mode.to_string(),
                source(
                    Some(("--mode", overrides.mode.is_some())),
                    &["CHATCLI_MODE"],
                    env,
                    from_file,
                ),
            ),
            (
                "workspace",
                self.workspace.display().to_string(),
                if overrides.cwd.is_some() {
                    "flag --cwd".into()
                } else {
                    "the current directory".into()
                },
            ),
            (
                "max turns",
                self.max_turns.to_string(),
                source(
                    Some(("--max-turns", overrides.max_turns.is_some())),
                    &["CHATCLI_AGENT_MAX_TURNS"],
                    env,
                    from_file,
                ),
            ),
        ];
        rows.extend(self.feature_rows());
        rows.extend(self.safety_rows(overrides));
        rows.extend(self.other_settings());
        rows.into_iter()
            .map(|(name, value, from)| format!("{name:<22} {value}  ({from})"))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_setting_names_its_source() {
        let home = tempfile::tempdir().expect("tempdir");
        std::fs::write(home.path().join("config.toml"), "mode = \"coder\"\n").expect("write");
        let env = Env::from_pairs([
            ("CHATCLI_HOME", home.path().display().to_string()),
            ("ANTHROPIC_API_KEY", "sk-ant-test-0123456789".to_string()),
            ("CHATCLI_MEMORY_MODE", "full".to_string()),
        ]);
        let overrides = Overrides {
            model: Some("claude-opus-4-5".into()),
            ..Overrides::default()
        };
        let config = Config::resolve(&overrides, env).expect("resolves");
        let report = config.report(&overrides).join("\n");
        assert!(
            report.contains("(detected: ANTHROPIC_API_KEY is set)"),
            "{report}"
        );
        assert!(
            report.contains("claude-opus-4-5  (flag --model)"),
            "{report}"
        );
        assert!(report.contains("coder  (config.toml mode)"), "{report}");
        assert!(
            report.contains("full  (environment CHATCLI_MEMORY_MODE)"),
            "{report}"
        );
        assert!(report.contains("(default)"), "{report}");
    }
}
