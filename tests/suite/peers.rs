//! Conformance against a real server written by others: llama.cpp's `llama-server` on loopback
//! (see `../shared/peers/README.md`), speaking OpenAI chat, OpenAI Responses and Anthropic
//! messages with a real prefix cache. Each test runs a whole agent turn through the same agent
//! task `chatcli exec` drives. Without `CHATCLI_PEER_URL` the suite says so and passes, so
//! `cargo test` works anywhere; `.ci/run` starts the server and sets it.

use std::sync::Arc;
use std::time::Duration;

use chatcli::agent::{self, AgentOptions, ApprovalPolicy};
use chatcli::config::{Config, Env, Overrides};
use chatcli::conversation::{Message, ModelRequest, SystemBlock};
use chatcli::protocol::{AgentEvent, Mode, Op, UsageFigures};
use chatcli::provider::{Provider, ProviderEvent, registry};
use futures_util::StreamExt;

use crate::common::scripted::{Scripted, respond};
use chatcli::memory::embedder::Embedder;
use chatcli::memory::{MemoryMode, MemorySettings, NewFact, Store};

fn peer_url() -> Option<String> {
    match std::env::var("CHATCLI_PEER_URL") {
        Ok(url) if !url.trim().is_empty() => Some(url.trim_end_matches('/').to_string()),
        _ => {
            eprintln!(
                "note: CHATCLI_PEER_URL is not set; the llama-server conformance suite is skipped"
            );
            None
        }
    }
}

fn peer_provider(name: &str, base_url: String, home: &std::path::Path) -> Arc<dyn Provider> {
    let overrides = Overrides {
        provider: Some(name.into()),
        base_url: Some(base_url),
        model: Some(std::env::var("CHATCLI_PEER_MODEL").unwrap_or_else(|_| "tiny".into())),
        cwd: Some(home.to_path_buf()),
        ..Overrides::default()
    };
    let env = Env::from_pairs([
        ("CHATCLI_HOME", home.display().to_string()),
        ("OPENAI_API_KEY", "sk-none".to_string()),
        ("ANTHROPIC_API_KEY", "sk-none".to_string()),
    ]);
    let config = Config::resolve(&overrides, env).expect("config");
    registry::build(&config, Duration::ZERO).expect("provider")
}

/// Runs one prompt in agent mode against the peer and checks a whole turn happened.
async fn whole_turn(name: &str, base_url: impl FnOnce(&str) -> String) {
    let Some(url) = peer_url() else { return };
    let home = tempfile::tempdir().expect("tempdir");
    let provider = peer_provider(name, base_url(&url), home.path());
    let mut options = AgentOptions::new(
        format!("peer-{name}"),
        Mode::Agent,
        home.path().to_path_buf(),
    );
    options.approval = ApprovalPolicy::Deny;
    options.smart_route = chatcli::agent::routing::RouteMode::Off;
    options.max_turns = 4;
    let mut handle = agent::spawn(provider, options);
    handle
        .ops
        .send(Op::Submit {
            text: "Look at the notes file in this project and summarise it.".into(),
            mode: Mode::Agent,
        })
        .expect("agent alive");
    let mut events = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(120), handle.events.recv())
            .await
            .unwrap_or_else(|_| panic!("{name}: no event within 120 s; events so far: {events:#?}"))
            .expect("agent alive");
        let done = matches!(event, AgentEvent::Cost { .. });
        events.push(event);
        if done {
            break;
        }
    }
    let errors: Vec<&AgentEvent> = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::Error { .. }))
        .collect();
    assert!(errors.is_empty(), "{name}: {errors:#?}");
    let calls = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::ToolCall { .. }))
        .count();
    let results = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::ToolResult { .. }))
        .count();
    assert!(calls >= 1, "{name}: the model called a tool: {events:#?}");
    assert_eq!(calls, results, "{name}: every call got a result");
    let text: String = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        !text.trim().is_empty(),
        "{name}: the model answered in text"
    );
    let requests = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::TurnStarted { .. }))
        .count();
    let usages: Vec<UsageFigures> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Usage { usage, .. } => Some(*usage),
            _ => None,
        })
        .collect();
    eprintln!("peer {name}: {calls} tool call(s), usage per request: {usages:?}");
    assert_eq!(usages.len(), requests, "{name}: one usage per request");
    assert!(
        usages.len() >= 2,
        "{name}: a tool round trip takes two requests"
    );
    let (first, second) = (usages[0], usages[1]);
    assert!(
        second.cache_read_tokens * 10 >= first.input_tokens * 8,
        "{name}: the second request read its prefix from the cache: first {first:?}, second {second:?}"
    );
    let finished = events.iter().find_map(|e| match e {
        AgentEvent::TurnFinished { stop_reason, .. } => Some(stop_reason.clone()),
        _ => None,
    });
    assert_eq!(
        finished.as_deref(),
        Some("end_turn"),
        "{name}: the turn ended cleanly"
    );
}

#[tokio::test]
async fn openai_chat_whole_turn_against_llama_server() {
    whole_turn("openai", |url| format!("{url}/v1")).await;
}

#[tokio::test]
async fn openai_responses_whole_turn_against_llama_server() {
    whole_turn("openai-responses", |url| format!("{url}/v1")).await;
}

#[tokio::test]
async fn anthropic_whole_turn_against_llama_server() {
    whole_turn("anthropic", |url| url.to_string()).await;
}

async fn one_request(provider: &dyn Provider, system: &str, session: &str) -> UsageFigures {
    let request = ModelRequest {
        model: provider.model().to_string(),
        system: vec![SystemBlock {
            name: "core".into(),
            text: system.to_string(),
            stable: true,
        }],
        tools: Vec::new(),
        messages: vec![Message::user_text("Say hello.")],
        max_output_tokens: 16,
        session_id: session.to_string(),
    };
    let mut stream = provider.stream(request);
    let mut usage = None;
    while let Some(event) = stream.next().await {
        if let ProviderEvent::Usage(u) = event.expect("no stream error") {
            usage = Some(u.figures());
        }
    }
    usage.expect("a usage record")
}

#[tokio::test]
async fn a_prompt_that_changes_at_its_start_gets_almost_no_cache_read() {
    let Some(url) = peer_url() else { return };
    let home = tempfile::tempdir().expect("tempdir");
    let provider = peer_provider("openai", format!("{url}/v1"), home.path());
    // The server keeps earlier prompts in its cache across runs: make every start new to it.
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let body = "You are a careful assistant. Follow the rules below exactly.\n".repeat(40);
    let same_a = one_request(provider.as_ref(), &format!("Session {nonce}. {body}"), "a").await;
    let same_b = one_request(provider.as_ref(), &format!("Session {nonce}. {body}"), "a").await;
    assert!(
        same_b.cache_read_tokens * 10 >= same_a.input_tokens * 8,
        "control: identical prompts hit the cache"
    );
    let changed = one_request(provider.as_ref(), &format!("It is {nonce}. {body}"), "a").await;
    eprintln!("peer counter-test: same {same_a:?} then {same_b:?}; changed start {changed:?}");
    assert!(
        changed.cache_read_tokens * 5 < changed.input_tokens,
        "a changed first line must invalidate the prefix: {changed:?}"
    );
}

#[tokio::test]
async fn the_peer_refuses_embeddings_with_an_error_recall_can_fall_back_on() {
    let Some(url) = peer_url() else { return };
    // The provider a user points at the server gets an embedder at the same base.
    let home = tempfile::tempdir().expect("tempdir");
    let overrides = Overrides {
        provider: Some("openai".into()),
        base_url: Some(format!("{url}/v1")),
        ..Overrides::default()
    };
    let env = Env::from_pairs([
        ("CHATCLI_HOME", home.path().display().to_string()),
        ("OPENAI_API_KEY", "sk-none".to_string()),
    ]);
    let config = Config::resolve(&overrides, env).expect("config");
    let embedder = registry::embedder(&config);
    assert!(matches!(&embedder, Embedder::OpenAi { base, .. } if *base == format!("{url}/v1")));
    // Started without --embeddings, llama-server answers 501: an error, never vectors.
    let err = embedder
        .embed(&["deploy with helm".to_string()])
        .await
        .expect_err("no embeddings on this server");
    assert!(
        err.starts_with("HTTP 501") && err.contains("does not support embeddings"),
        "{err}"
    );
}

#[tokio::test]
async fn recall_embeds_facts_and_query_through_a_real_embeddings_endpoint() {
    let Ok(url) = std::env::var("CHATCLI_PEER_EMBEDDINGS_URL") else {
        eprintln!(
            "note: CHATCLI_PEER_EMBEDDINGS_URL is not set; the embeddings peer test is skipped"
        );
        return;
    };
    let embedder = Embedder::OpenAi {
        base: format!("{}/v1", url.trim_end_matches('/')),
        key: "sk-none".into(),
        model: "tiny".into(),
    };
    let texts = vec![
        "deploy with helm charts".to_string(),
        "the user prefers small pull requests".to_string(),
    ];
    let first = embedder
        .embed(&texts)
        .await
        .expect("embeddings")
        .expect("vectors");
    let again = embedder
        .embed(&texts)
        .await
        .expect("embeddings")
        .expect("vectors");
    assert_eq!(first.len(), 2);
    assert!(!first[0].is_empty() && first[0].len() == first[1].len());
    assert_eq!(first, again, "the same text embeds the same way");
    assert_ne!(first[0], first[1], "different texts embed differently");

    // Through the agent: the facts' vectors land in the cache, one line a fact.
    let home = tempfile::tempdir().expect("tempdir");
    let dir = home.path().join("memory");
    let mut store = Store::open(&dir).expect("open");
    for content in [
        "Deploy with the Helm charts",
        "Vault rotates passwords on Monday",
        "Small pull requests",
    ] {
        store
            .add(NewFact {
                content: content.into(),
                category: "project".into(),
                tags: Vec::new(),
                source: "test".into(),
            })
            .expect("add");
    }
    let mut options =
        AgentOptions::new("peer-embed".into(), Mode::Agent, home.path().to_path_buf());
    options.smart_route = chatcli::agent::routing::RouteMode::Off;
    options.memory = Some(MemorySettings {
        dir: dir.clone(),
        mode: MemoryMode::Index,
        retrieval_budget: 4000,
        autorecall: false,
        hyde: false,
        embedder,
    });
    let provider = Scripted::new(
        vec![
            respond(
                "",
                &[(
                    "r1",
                    "memory",
                    serde_json::json!({"action": "recall", "query": "how do we deploy"}),
                )],
            ),
            respond("With Helm.", &[]),
        ],
        Duration::ZERO,
    );
    let mut handle = agent::spawn(provider.clone(), options);
    handle
        .ops
        .send(Op::Submit {
            text: "how do we deploy?".into(),
            mode: Mode::Agent,
        })
        .expect("agent alive");
    crate::common::events_until(&mut handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
    let requests = provider.requests();
    let result = &requests[1].messages.last().expect("results").content[0];
    let text = match result {
        chatcli::conversation::ContentBlock::ToolResult { content, .. } => content.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(text.lines().count(), 3, "{text}");
    let cache = std::fs::read_to_string(dir.join("embeddings/openai-tiny.jsonl")).expect("cache");
    assert_eq!(cache.lines().count(), 3);
    let line: serde_json::Value =
        serde_json::from_str(cache.lines().next().unwrap_or_default()).expect("json line");
    assert_eq!(line["v"].as_array().map(Vec::len), Some(first[0].len()));
}
