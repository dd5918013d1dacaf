//! The bill: prices per provider family on recorded responses, the catalog, unknown models, the
//! budget, and what `/cost` and the cache chart show.

use std::time::Duration;

use chatcli::agent::accounting::CostBook;
use chatcli::agent::{self, AgentOptions};
use chatcli::cost::Catalog;
use chatcli::protocol::{AgentEvent, Mode, Op, UsageFigures};
use chatcli::provider::openai_chat::{self, Preset};
use chatcli::provider::{UsageRecord, anthropic};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use insta::assert_snapshot;
use serde_json::json;

use crate::common::scripted::{Scripted, respond};
use crate::common::{draw, events_until, fixture_json, provider_fixtures, screen_text};

fn cost(model: &str, usage: &UsageRecord) -> f64 {
    let catalog = Catalog::builtin();
    let pricing = catalog
        .lookup(model)
        .unwrap_or_else(|| panic!("{model} priced"));
    pricing.cost(usage)
}

#[test]
fn cost_arithmetic_per_family_on_recorded_usage() {
    let Some(dir) = provider_fixtures() else {
        return;
    };
    // Anthropic (a6, second call): 3 uncached × $3 + 1,111 read × $0.30 + 418 written × $3.75 + 33 out × $15.
    let a6 = fixture_json(
        &dir,
        "anthropic/a6-nonstream-cache-write-then-read-sonnet-4-5.json",
    );
    let usage = anthropic::usage_from_json(&a6[1]["response"]["body"]["usage"]);
    let expected = (3.0 * 3.0 + 1111.0 * 0.30 + 418.0 * 3.75 + 33.0 * 15.0) / 1e6;
    assert!((cost("claude-sonnet-4-5-20250929", &usage) - expected).abs() < 1e-12);
    // OpenAI (c2, second call): 4,012 of 4,020 prompt tokens cached, billed once at $0.50.
    let c2 = fixture_json(
        &dir,
        "openai-chat/c2-chat-nonstream-prompt_cache_key-cached-4012.json",
    );
    let usage = openai_chat::usage_from_json(&c2[1]["response"]["body"]["usage"], &Preset::OPENAI);
    let expected = (8.0 * 2.0 + 4012.0 * 0.50 + 4.0 * 8.0) / 1e6;
    assert!((cost("gpt-4.1", &usage) - expected).abs() < 1e-12);
    // OpenRouter reports its own cost: the book takes it over any catalog price.
    let or1 = fixture_json(
        &dir,
        "openrouter/or1-cache_control-passthrough-cache_write-then-cached.json",
    );
    let usage =
        openai_chat::usage_from_json(&or1[1]["response"]["body"]["usage"], &Preset::OPENROUTER);
    let mut book = CostBook::new(None);
    let (reported, _) = book.record(
        "anthropic/claude-sonnet-4.5",
        &usage,
        Catalog::builtin().lookup("anthropic/claude-sonnet-4.5"),
    );
    assert_eq!(reported, Some(0.00219855));
    // xAI: reasoning is billed as output beside completion tokens.
    let x1 = UsageRecord {
        uncached_input: 1,
        cache_read: 290,
        output: 222,
        reasoning: 196,
        ..UsageRecord::default()
    };
    let expected = (1.0 * 0.30 + 290.0 * 0.075 + 222.0 * 0.50) / 1e6;
    assert!((cost("grok-3-mini", &x1) - expected).abs() < 1e-12);
}

#[test]
fn a_bad_user_catalog_is_an_error_naming_its_line_and_a_good_one_overrides() {
    let home = tempfile::tempdir().expect("tempdir");
    let env = chatcli::env::Env::from_pairs([("CHATCLI_HOME", home.path().display().to_string())]);
    let overrides = chatcli::config::Overrides {
        cwd: Some(home.path().to_path_buf()),
        ..Default::default()
    };
    let config = chatcli::config::Config::resolve(&overrides, env).expect("config");
    std::fs::write(
        home.path().join("pricing.toml"),
        "[models.mine]\ninput = 1.0\noutput = \"lots\"\n",
    )
    .expect("write");
    let err = chatcli::session::load_catalog(&config)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        err.contains("pricing.toml") && err.contains("line 3"),
        "{err}"
    );
    std::fs::write(
        home.path().join("pricing.toml"),
        "[models.\"gpt-4.1\"]\ninput = 1.0\noutput = 2.0\n",
    )
    .expect("write");
    let catalog = chatcli::session::load_catalog(&config).expect("catalog");
    assert_eq!(catalog.lookup("gpt-4.1").map(|p| p.input), Some(1.0));
}

async fn run(
    options: AgentOptions,
    script: Vec<chatcli::provider::ProviderEvent>,
    more: usize,
) -> (Vec<AgentEvent>, usize) {
    let mut scripts = vec![script];
    for _ in 0..more {
        scripts.push(respond("done", &[]));
    }
    let provider = Scripted::new(scripts, Duration::ZERO);
    let mut handle = agent::spawn(provider.clone(), options);
    handle
        .ops
        .send(Op::Submit {
            text: "go".into(),
            mode: Mode::Agent,
        })
        .expect("alive");
    let events = events_until(&mut handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
    (events, provider.requests().len())
}

#[tokio::test]
async fn an_unknown_model_says_so_and_its_cost_stays_unknown() {
    let dir = tempfile::tempdir().expect("tempdir");
    let options = AgentOptions::new("s".into(), Mode::Agent, dir.path().to_path_buf());
    let (events, _) = run(options, respond("hi", &[]), 0).await;
    assert!(events.iter().any(|e| matches!(e, AgentEvent::Notice { message } if message == "cost unknown for scripted-model: add its prices to CHATCLI_HOME/pricing.toml")));
    assert!(matches!(
        events.last(),
        Some(AgentEvent::Cost { cost_usd: None, .. })
    ));
}

#[tokio::test]
async fn the_budget_stops_new_requests_once_spent() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("a.txt"), "A\n").expect("write");
    let mut options = AgentOptions::new("s".into(), Mode::Agent, dir.path().to_path_buf());
    options.pricing = Catalog::builtin().lookup("claude-sonnet-4-5").cloned();
    // Each scripted response bills 100 input + 10 output tokens at Sonnet prices: $0.00045.
    options.budget_usd = Some(0.0004);
    let (events, requests) = run(
        options,
        respond("", &[("1", "read_file", json!({"file": "a.txt"}))]),
        1,
    )
    .await;
    assert_eq!(
        requests, 1,
        "the tool result is never sent: the budget was spent"
    );
    let stop = events.iter().find_map(|e| match e {
        AgentEvent::TurnFinished { stop_reason, .. } => Some(stop_reason.clone()),
        _ => None,
    });
    assert_eq!(stop.as_deref(), Some("budget"));
    assert!(events.iter().any(|e| matches!(e, AgentEvent::Notice { message } if message.starts_with("session budget of $0.00 reached"))));
}

fn app() -> chatcli::ui::App {
    let (tx, _rx) = chatcli::protocol::op_channel();
    chatcli::ui::App::new(
        tx,
        Mode::Agent,
        "anthropic".into(),
        "claude-sonnet-4-5".into(),
    )
}

#[test]
fn the_cost_summary_and_the_cache_chart() {
    let mut app = app();
    let usage = |input: u64, read: u64, write: u64| UsageFigures {
        input_tokens: input,
        output_tokens: 120,
        cache_read_tokens: read,
        cache_creation_tokens: write,
        reasoning_tokens: 0,
        estimated: false,
        cache_reported: true,
    };
    // The cache warms up, then a miss rewrites everything, then it reads again.
    for (turn, u) in [
        usage(4000, 0, 3900),
        usage(4600, 3900, 650),
        usage(5200, 4550, 600),
        usage(5800, 0, 5700),
        usage(6400, 5700, 650),
    ]
    .into_iter()
    .enumerate()
    {
        app.handle_agent_event(AgentEvent::TurnStarted {
            turn: turn as u32 + 1,
        });
        app.handle_agent_event(AgentEvent::Usage {
            turn: turn as u32 + 1,
            usage: u,
            cost_usd: Some(0.01),
        });
    }
    let chart = screen_text(&draw(&mut app));
    assert_snapshot!("cache_chart", chart);
    for c in "/cost".chars() {
        app.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    app.handle_agent_event(AgentEvent::CostReport {
        provider: "anthropic".into(),
        model: "claude-sonnet-4-5".into(),
        requests: 5,
        uncached_input_tokens: 12_345,
        input_tokens: 26_000,
        output_tokens: 3_210,
        cache_read_tokens: 87_650,
        cache_creation_tokens: 4_100,
        cost_usd: Some(0.0234),
        saved_usd: 0.2367,
        budget_usd: Some(2.0),
        by_model: Vec::new(),
        by_agent: Vec::new(),
        images: 0,
        image_tokens: 0,
        expiries: vec!["cache expired after 12 min idle: 31k tokens written again, $0.12".into()],
    });
    let summary = screen_text(&draw(&mut app));
    assert!(
        summary.contains("cache expired after 12 min idle: 31k tokens written again, $0.12"),
        "{summary}"
    );
    assert!(summary.contains("Session cost summary"));
    assert!(summary.contains("Total cost: $0.0234"));
    // The reference system's lines first, in its order, then chatcli's breakdown.
    let at = |needle: &str| summary.find(needle).unwrap_or(usize::MAX);
    let order = [
        "Provider: anthropic | Model: claude-sonnet-4-5",
        "Input tokens:",
        "Output tokens:",
        "Cache read:",
        "Cache creation:",
        "Total cost:",
        "Uncached input:",
        "Requests: 5",
    ];
    for pair in order.windows(2) {
        assert!(at(pair[0]) < at(pair[1]), "{} before {}", pair[0], pair[1]);
    }
    assert_snapshot!("cost_summary", summary);
}

/// `/config`'s cache-policy line says what the session's model gets under the setting.
#[test]
fn config_shows_the_cache_policy_for_the_sessions_model() {
    let home = tempfile::tempdir().expect("tempdir");
    let resolve = |ttl: &str| {
        let env = chatcli::env::Env::from_pairs([
            ("CHATCLI_HOME", home.path().display().to_string()),
            ("CHATCLI_PROMPT_CACHE_TTL", ttl.to_string()),
        ]);
        let overrides = chatcli::config::Overrides {
            cwd: Some(home.path().to_path_buf()),
            ..Default::default()
        };
        chatcli::config::Config::resolve(&overrides, env).expect("config")
    };
    let line = chatcli::session::cache_policy_report_line(&resolve("auto"), "claude-sonnet-4-5");
    assert!(line.starts_with("cache policy"), "{line}");
    assert!(
        line.contains("auto: 5-minute cache entries, 1-hour ones from the first pause over 2 min  (for claude-sonnet-4-5)"),
        "{line}"
    );
    let line = chatcli::session::cache_policy_report_line(&resolve("auto"), "gpt-5.1");
    assert!(line.contains("24h retention asked"), "{line}");
    let line = chatcli::session::cache_policy_report_line(&resolve("1h"), "claude-opus-4-5");
    assert!(line.contains("1h: 1-hour cache entries"), "{line}");
}
