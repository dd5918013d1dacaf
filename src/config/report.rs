//! What `/config` shows: every effective setting and where it came from (a flag, the
//! environment, `config.toml`, a key that was found, or the default).
//!
//! The sources are worked out again from the same inputs `Config::resolve` used, in the same
//! precedence, so the report cannot drift from what the session really runs with: the values
//! shown are the resolved `Config`'s own.

use super::{Config, Env, Overrides, read_file_config};

/// Where one setting's value came from.
fn source(
    flag: Option<(&str, bool)>,
    vars: &[&str],
    env: &Env,
    file_key: Option<(&str, bool)>,
) -> String {
    if let Some((flag, true)) = flag {
        return format!("flag {flag}");
    }
    if let Some(var) = vars.iter().find(|v| env.get(v).is_some()) {
        return format!("environment {var}");
    }
    if let Some((key, true)) = file_key {
        return format!("config.toml {key}");
    }
    "default".into()
}

impl Config {
    /// One line per setting: `name  value  (source)`.
    pub fn report(&self, overrides: &Overrides) -> Vec<String> {
        let env = &self.env;
        let file = read_file_config(&self.home.join("config.toml")).unwrap_or_default();
        let model_vars = self.provider.model_vars();
        let model_vars: Vec<&str> = model_vars.iter().map(String::as_str).collect();
        let url_vars = self.provider.base_url_vars();
        let url_vars: Vec<&str> = url_vars.iter().map(String::as_str).collect();
        let (default_url, default_model) = self.provider.defaults();
        let provider_source = if self.provider_explicit {
            source(
                Some(("--provider", overrides.provider.is_some())),
                &["CHATCLI_PROVIDER", "LLM_PROVIDER"],
                env,
                Some(("provider", file.provider.is_some())),
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
        };
        let on_off = |b: bool| if b { "on" } else { "off" }.to_string();
        let rows: Vec<(&str, String, String)> = vec![
            (
                "provider",
                self.provider.as_str().to_string(),
                provider_source,
            ),
            (
                "model",
                self.model.clone().unwrap_or_else(|| default_model.into()),
                source(
                    Some(("--model", overrides.model.is_some())),
                    &model_vars,
                    env,
                    Some(("model", file.model.is_some())),
                ),
            ),
            (
                "base URL",
                self.base_url.clone().unwrap_or_else(|| default_url.into()),
                source(
                    Some(("--base-url", overrides.base_url.is_some())),
                    &url_vars,
                    env,
                    Some(("base_url", file.base_url.is_some())),
                ),
            ),
            (
                "mode",
                self.mode.to_string(),
                source(
                    Some(("--mode", overrides.mode.is_some())),
                    &["CHATCLI_MODE"],
                    env,
                    Some(("mode", file.mode.is_some())),
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
                    Some(("max_turns", file.max_turns.is_some())),
                ),
            ),
            (
                "memory",
                format!("{:?}", self.memory_mode).to_lowercase(),
                source(None, &["CHATCLI_MEMORY_MODE"], env, None),
            ),
            (
                "microcompact schedule",
                format!("{:?}", self.compaction.schedule).to_lowercase(),
                source(None, &["CHATCLI_MICROCOMPACT_SCHEDULE"], env, None),
            ),
            (
                "smart routing",
                format!("{:?}", self.smart_route).to_lowercase(),
                source(None, &["CHATCLI_AGENT_SMART_ROUTE"], env, None),
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
                    None,
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
                    None,
                ),
            ),
            (
                "budget",
                self.budget_usd
                    .map_or_else(|| "none".into(), |b| format!("${b:.2}")),
                source(None, &["CHATCLI_SESSION_BUDGET_USD"], env, None),
            ),
            (
                "prompt cache TTL",
                self.cache_ttl.name().to_string(),
                source(None, &["CHATCLI_PROMPT_CACHE_TTL"], env, None),
            ),
            (
                "sandbox",
                self.sandbox.describe(),
                source(
                    Some(("--sandbox", overrides.sandbox.is_some())),
                    &["CHATCLI_SANDBOX", "CHATCLI_SANDBOX_NETWORK"],
                    env,
                    None,
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
                source(None, &[crate::process::ENV_ALLOW_VAR], env, None),
            ),
            (
                "max retries",
                self.max_retries.to_string(),
                source(None, &["CHATCLI_MAX_RETRIES"], env, None),
            ),
            (
                "home",
                self.home.display().to_string(),
                source(None, &["CHATCLI_HOME"], env, None),
            ),
        ];
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
