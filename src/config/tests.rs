//! `Config::resolve`: precedence, clamps, and the errors that name a setting.
#![cfg(test)]

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
    let err =
        resolve(&[("CHATCLI_RESPONSE_TIMEOUT", "10m")], Overrides::default()).expect_err("refused");
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
    let config = resolve(&[("LLM_PROVIDER", "CLAUDEAI")], Overrides::default()).expect("config");
    assert_eq!(config.provider, ProviderKind::Anthropic);
    let config = resolve(&[("LLM_PROVIDER", "GoogleAI")], Overrides::default()).expect("config");
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
        Some("CHATCLI_MODE must be one of: chat, agent, coder, plan, run (got \"fast\")")
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
        let config =
            resolve(&[("CHATCLI_AGENT_EARLY_EXIT", off)], Overrides::default()).expect("config");
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
        Some("CHATCLI_AGENT_EARLY_EXIT_TURNS must be a whole number from 2 to 10 (got \"three\")")
    );
    let err = resolve(
        &[("CHATCLI_AGENT_SMART_ROUTE", "maybe")],
        Overrides::default(),
    )
    .err()
    .map(|e| e.to_string());
    assert_eq!(
        err.as_deref(),
        Some("CHATCLI_AGENT_SMART_ROUTE must be off, hint or auto (also 0/1/2) (got \"maybe\")")
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

    const NUMERIC: [&str; 15] = [
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
        "CHATCLI_CACHE_KEEPWARM",
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

#[test]
fn config_toml_takes_every_setting_under_the_environment_and_says_so() {
    let home = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        home.path().join("config.toml"),
        "agent_early_exit_turns = 5\nmicrocompact_schedule = \"batched\"\nnotify = \"off\"\nmode = \"coder\"\n",
    )
    .expect("write");
    let env = Env::from_pairs([
        ("CHATCLI_HOME", home.path().display().to_string()),
        ("CHATCLI_MODE", "chat".to_string()),
    ]);
    let config = Config::resolve(&Overrides::default(), env.clone()).expect("config");
    assert_eq!(config.early_exit_turns, 5);
    assert_eq!(
        config.compaction.schedule,
        crate::agent::compaction::Schedule::Batched
    );
    assert_eq!(
        config.mode,
        Mode::Chat,
        "the environment wins over the file"
    );
    assert_eq!(config.env.get("CHATCLI_NOTIFY"), Some("off"));
    let report = config.report(&Overrides::default()).join("\n");
    assert!(
        report.contains("config.toml agent_early_exit_turns"),
        "{report}"
    );
    assert!(report.contains("environment CHATCLI_MODE"), "{report}");
    assert!(
        report.contains("CHATCLI_NOTIFY") && report.contains("config.toml notify"),
        "{report}"
    );
    std::fs::write(
        home.path().join("config.toml"),
        "agent_early_exit_turns = \"lots\"\n",
    )
    .expect("write");
    let err = Config::resolve(&Overrides::default(), env)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert_eq!(
        err,
        "agent_early_exit_turns in config.toml must be a whole number from 2 to 10 (got \"lots\")"
    );
}
