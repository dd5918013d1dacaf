//! Byte stability of the cached prefix: what each request repeats must be identical to what the
//! previous one sent, and what changes must be named.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, UNIX_EPOCH};

use chatcli::agent::{self, AgentOptions, Clock};
use chatcli::protocol::{AgentEvent, Mode, Op};
use chatcli::provider::UsageRecord;
use chatcli::provider::anthropic::{Anthropic, CacheTtl};
use chatcli::provider::http::Http;
use pretty_assertions::assert_eq;
use serde_json::Value;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::scripted::{Scripted, respond, respond_with};
use crate::common::{count_markers, events_until, sse};

fn strip_markers(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| k.as_str() != "cache_control")
                .map(|(k, v)| (k.clone(), strip_markers(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(strip_markers).collect()),
        other => other.clone(),
    }
}

async fn submit(handle: &mut agent::AgentHandle, text: &str, mode: Mode) -> Vec<AgentEvent> {
    handle
        .ops
        .send(Op::Submit {
            text: text.into(),
            mode,
        })
        .expect("agent alive");
    events_until(handle, |e| matches!(e, AgentEvent::Cost { .. })).await
}

#[tokio::test]
async fn consecutive_anthropic_requests_keep_the_prefix_byte_identical() {
    let server = MockServer::start().await;
    let answers = [
        sse::anthropic(
            "",
            Some(("toolu_1", "read_file", r#"{"file":"notes.txt"}"#)),
            10,
            0,
            1500,
            5,
        ),
        sse::anthropic("It says alpha.", None, 10, 1500, 60, 5),
        sse::anthropic("Yes.", None, 10, 1560, 20, 2),
    ];
    for (i, body) in answers.into_iter().enumerate() {
        Mock::given(method("POST"))
            .and(path("/v1/messages"))
            .respond_with(
                ResponseTemplate::new(200)
                    .insert_header("content-type", "text/event-stream")
                    .set_body_string(body),
            )
            .up_to_n_times(1)
            .with_priority(i as u8 + 1)
            .mount(&server)
            .await;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("notes.txt"), "alpha\n").expect("write");
    let provider = Arc::new(Anthropic::new(
        Http::default(),
        "anthropic",
        server.uri(),
        "k".into(),
        "claude-sonnet-4-5".into(),
        CacheTtl::FiveMinutes,
    ));
    let mut options = AgentOptions::new("s".into(), Mode::Coder, dir.path().to_path_buf());
    // A stopped clock: the local time is to the minute, and a minute may turn mid-test.
    options.clock = Clock(Arc::new(|| UNIX_EPOCH + Duration::from_secs(1_796_000_000)));
    let mut handle = agent::spawn(provider, options);
    submit(&mut handle, "read notes.txt", Mode::Coder).await;
    submit(&mut handle, "is that all?", Mode::Coder).await;
    let bodies: Vec<Value> = server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).expect("json"))
        .collect();
    assert_eq!(bodies.len(), 3);
    for pair in bodies.windows(2) {
        let (before, after) = (&pair[0], &pair[1]);
        assert_eq!(
            before["tools"].to_string(),
            after["tools"].to_string(),
            "tool bytes identical"
        );
        assert_eq!(
            before["system"].to_string(),
            after["system"].to_string(),
            "system bytes identical"
        );
        let old = strip_markers(&before["messages"]);
        let new = strip_markers(&after["messages"]);
        let old = old.as_array().expect("messages");
        let new = new.as_array().expect("messages");
        assert!(new.len() > old.len());
        assert_eq!(&new[..old.len()], &old[..], "messages are append-only");
    }
    for body in &bodies {
        assert!(count_markers(body) <= 4);
        assert!(
            body["tools"]
                .as_array()
                .and_then(|t| t.last())
                .and_then(|t| t.get("cache_control"))
                .is_some()
        );
        let last_message = body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .expect("a message");
        let last_block = last_message["content"]
            .as_array()
            .and_then(|c| c.last())
            .expect("a block");
        assert!(
            last_block.get("cache_control").is_some(),
            "the rolling marker is on the newest message"
        );
        assert!(
            !body["system"].to_string().contains("Today is"),
            "volatile blocks never enter the system prompt"
        );
    }
    let first_user = bodies[0]["messages"][0]["content"].to_string();
    assert!(
        first_user.contains("<context>") && first_user.contains("Today is"),
        "{first_user}"
    );
    let second_prompt = bodies[2]["messages"]
        .as_array()
        .and_then(|m| m.last())
        .expect("message")
        .to_string();
    assert!(
        !second_prompt.contains("Today is"),
        "an unchanged volatile block is not sent again"
    );
}

#[tokio::test]
async fn a_large_result_is_never_cached_whole_and_its_pointer_rewrites_only_the_tail() {
    let server = MockServer::start().await;
    let answers = [
        sse::anthropic(
            "",
            Some(("toolu_1", "read_file", r#"{"file":"big.rs"}"#)),
            10,
            0,
            1500,
            5,
        ),
        sse::anthropic(
            "",
            Some(("toolu_2", "read_file", r#"{"file":"notes.txt"}"#)),
            10,
            1500,
            60,
            5,
        ),
        sse::anthropic("It says alpha.", None, 10, 1560, 20, 2),
    ];
    for (i, body) in answers.into_iter().enumerate() {
        Mock::given(method("POST"))
            .and(path("/v1/messages"))
            .respond_with(
                ResponseTemplate::new(200)
                    .insert_header("content-type", "text/event-stream")
                    .set_body_string(body),
            )
            .up_to_n_times(1)
            .with_priority(i as u8 + 1)
            .mount(&server)
            .await;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("notes.txt"), "alpha\n").expect("write");
    let big: String = (1..=300)
        .map(|i| format!("pub fn item_{i}() -> usize {{ {i} }}\n"))
        .collect();
    std::fs::write(dir.path().join("big.rs"), big).expect("write");
    let provider = Arc::new(Anthropic::new(
        Http::default(),
        "anthropic",
        server.uri(),
        "k".into(),
        "claude-sonnet-4-5".into(),
        CacheTtl::FiveMinutes,
    ));
    let mut options = AgentOptions::new("s".into(), Mode::Coder, dir.path().to_path_buf());
    options.clock = Clock(Arc::new(|| UNIX_EPOCH + Duration::from_secs(1_796_000_000)));
    options.pricing = chatcli::cost::Catalog::builtin()
        .lookup("claude-sonnet-4-5")
        .cloned();
    let mut handle = agent::spawn(provider, options);
    submit(&mut handle, "read big.rs", Mode::Coder).await;
    let bodies: Vec<Value> = server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).expect("json"))
        .collect();
    assert_eq!(bodies.len(), 3);
    let messages = |b: &Value| b["messages"].as_array().cloned().unwrap_or_default();
    let marked = |b: &Value| -> Vec<usize> {
        messages(b)
            .iter()
            .enumerate()
            .filter(|(_, m)| m["content"].to_string().contains("cache_control"))
            .map(|(i, _)| i)
            .collect()
    };
    // Request 2 shows the file whole: the rolling marker sits on the call before it, so the
    // whole file is never written to the cache (request 3 would never read it); the bridge is
    // on the prompt, where request 1's rolling marker was.
    let second = messages(&bodies[1]);
    assert_eq!(second.len(), 3);
    assert!(second[2].to_string().contains("item_150"));
    assert_eq!(marked(&bodies[1]), vec![0, 1]);
    // Request 3 carries a pointer instead, and repeats request 2 byte for byte up to the marker.
    let third = messages(&bodies[2]);
    assert!(!third[2].to_string().contains("item_150"));
    assert!(
        third[2]
            .to_string()
            .contains("read_file big.rs with start/end")
    );
    assert_eq!(
        strip_markers(&Value::Array(third[..2].to_vec())),
        strip_markers(&Value::Array(second[..2].to_vec()))
    );
    // The small result is the newest message and stays: the marker is on it, the bridge on the
    // call request 2 marked.
    assert_eq!(marked(&bodies[2]), vec![1, third.len() - 1]);
    for body in &bodies {
        assert!(count_markers(body) <= 4);
    }
}

#[tokio::test]
async fn a_date_change_between_turns_changes_no_earlier_byte() {
    let now = Arc::new(AtomicU64::new(1_796_000_000));
    let clock_now = Arc::clone(&now);
    let provider = Scripted::new(
        vec![respond("one", &[]), respond("two", &[])],
        Duration::ZERO,
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let mut options = AgentOptions::new("s".into(), Mode::Agent, dir.path().to_path_buf());
    options.time_zone = chatcli::prompt::dynamic::TimeZone::utc();
    options.clock = Clock(Arc::new(move || {
        UNIX_EPOCH + Duration::from_secs(clock_now.load(Ordering::SeqCst))
    }));
    let mut handle = agent::spawn(provider.clone(), options);
    submit(&mut handle, "first", Mode::Agent).await;
    now.fetch_add(86_400, Ordering::SeqCst);
    submit(&mut handle, "second", Mode::Agent).await;
    let requests = provider.requests();
    assert_eq!(requests[0].system, requests[1].system);
    assert_eq!(requests[0].tools, requests[1].tools);
    assert_eq!(
        &requests[1].messages[..requests[0].messages.len()],
        &requests[0].messages[..]
    );
    let newest = requests[1].messages.last().expect("message").text();
    assert!(newest.contains("Today is 2026-12-01"), "{newest}");
    assert!(
        requests[0].messages[0]
            .text()
            .contains("Today is 2026-11-30")
    );
}

#[tokio::test]
async fn the_explainer_names_the_stable_block_that_changed() {
    let warm = UsageRecord {
        cache_write_5m: 3000,
        output: 5,
        ..UsageRecord::default()
    };
    let cold = UsageRecord {
        cache_read: 40,
        cache_write_5m: 3100,
        output: 5,
        ..UsageRecord::default()
    };
    let provider = Scripted::new(
        vec![
            respond_with("one", &[], warm),
            respond_with("two", &[], cold),
        ],
        Duration::ZERO,
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let mut handle = agent::spawn(
        provider,
        AgentOptions::new("s".into(), Mode::Agent, dir.path().to_path_buf()),
    );
    submit(&mut handle, "first", Mode::Agent).await;
    // Switching to coder mode keeps the tools (memory is off) but changes the core block.
    let events = submit(&mut handle, "second", Mode::Coder).await;
    let miss = events.iter().find_map(|e| match e {
        AgentEvent::CacheMiss {
            block,
            expected_read,
            actual_read,
            ..
        } => Some((block.clone(), *expected_read, *actual_read)),
        _ => None,
    });
    assert_eq!(miss, Some(("system/core changed".to_string(), 3000, 40)));

    handle.ops.send(Op::CacheReport).expect("agent alive");
    let report = events_until(&mut handle, |e| matches!(e, AgentEvent::CacheReport { .. })).await;
    match report.last() {
        Some(AgentEvent::CacheReport {
            tools_tokens,
            system_tokens,
            blocks,
            ..
        }) => {
            assert!(*tools_tokens > 0 && *system_tokens > 0);
            assert!(blocks.iter().any(|b| b.name == "system/core"));
        }
        other => panic!("expected a cache report, got {other:?}"),
    }
}

/// After a pause past the entry's lifetime, with nothing changed, the explainer says it was an
/// expiry, how long the session was idle, and what writing the prefix again cost.
#[tokio::test]
async fn an_expiry_after_a_pause_is_named_with_its_idle_time_and_cost() {
    let warm = UsageRecord {
        cache_write_5m: 31_000,
        output: 5,
        ..UsageRecord::default()
    };
    let cold = UsageRecord {
        cache_write_5m: 31_500,
        output: 5,
        ..UsageRecord::default()
    };
    let provider = Scripted::new(
        vec![
            respond_with("one", &[], warm),
            respond_with("two", &[], cold),
        ],
        Duration::ZERO,
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let now = Arc::new(AtomicU64::new(1_796_000_000));
    let mut options = AgentOptions::new("s".into(), Mode::Agent, dir.path().to_path_buf());
    let tick = Arc::clone(&now);
    options.clock = Clock(Arc::new(move || {
        UNIX_EPOCH + Duration::from_secs(tick.load(Ordering::Relaxed))
    }));
    options.pricing = chatcli::cost::Catalog::builtin()
        .lookup("claude-sonnet-4-5")
        .cloned();
    let mut handle = agent::spawn(provider, options);
    submit(&mut handle, "first", Mode::Agent).await;
    now.fetch_add(12 * 60, Ordering::Relaxed);
    let events = submit(&mut handle, "second", Mode::Agent).await;
    let miss = events.iter().find_map(|e| match e {
        AgentEvent::CacheMiss { block, .. } => Some(block.clone()),
        _ => None,
    });
    // 31,000 tokens at Sonnet's 5-minute write price ($3.75 a million).
    assert_eq!(
        miss.as_deref(),
        Some("cache expired after 12 min idle: 31k tokens written again, $0.12")
    );
    // `/cost` lists it.
    handle.ops.send(Op::CostReport).expect("agent alive");
    let report = events_until(&mut handle, |e| matches!(e, AgentEvent::CostReport { .. })).await;
    let expiries = report.iter().find_map(|e| match e {
        AgentEvent::CostReport { expiries, .. } => Some(expiries.clone()),
        _ => None,
    });
    assert_eq!(
        expiries,
        Some(vec![
            "cache expired after 12 min idle: 31k tokens written again, $0.12".to_string()
        ])
    );
}

/// Each caching provider names how long its entries live (the status bar's timer and keep-warm
/// read it): Anthropic the lifetime its last request's markers asked for and nothing with cache
/// hints off (and after a lapse the lifetime its policy would ask for), Bedrock 5 minutes,
/// OpenAI 24 hours where that retention is asked and offered and else the 5-minute low end of
/// its in-memory retention; a wire with no clock of its own, nothing.
#[tokio::test]
async fn caching_providers_name_their_cache_lifetime() {
    use chatcli::provider::Provider;
    use chatcli::provider::openai_chat::{OpenAiChat, Preset};
    use futures_util::StreamExt;

    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "text/event-stream")
                .set_body_string(sse::anthropic("Hi.", None, 10, 0, 1500, 2)),
        )
        .mount(&server)
        .await;
    let anthropic = |http: Http, ttl: CacheTtl| {
        Anthropic::new(
            http,
            "anthropic",
            server.uri(),
            "k".into(),
            "claude-sonnet-4-5".into(),
            ttl,
        )
    };
    let request = chatcli::conversation::ModelRequest {
        model: "claude-sonnet-4-5".into(),
        system: Vec::new(),
        tools: Vec::new(),
        messages: chatcli::conversation::shared([chatcli::conversation::Message::user_text(
            "hello",
        )]),
        max_output_tokens: 16,
        session_id: "s".into(),
        effort: None,
        settled_messages: None,
        bridge_message: None,
    };
    let claude = anthropic(Http::default(), CacheTtl::OneHour);
    assert_eq!(claude.cache_lifetime(), None, "no request yet");
    let mut stream = claude.stream(request.clone());
    while stream.next().await.is_some() {}
    assert_eq!(claude.cache_lifetime(), Some(3_600));
    // `auto` writes 5-minute entries until a pause, and writes them again for an hour after a
    // lapse: keep-warm weighs its pings against that hour's price; a fixed `5m` against 5.
    for (ttl, lapse) in [(CacheTtl::Auto, 3_600), (CacheTtl::FiveMinutes, 300)] {
        let claude = anthropic(Http::default(), ttl);
        let mut stream = claude.stream(request.clone());
        while stream.next().await.is_some() {}
        assert_eq!(claude.cache_lifetime(), Some(300), "{ttl:?}");
        assert_eq!(claude.lapse_lifetime(), Some(lapse), "{ttl:?}");
    }
    let mut off = Http::default();
    off.prompt_cache = false;
    let plain = anthropic(off.clone(), CacheTtl::FiveMinutes);
    let mut stream = plain.stream(request);
    while stream.next().await.is_some() {}
    assert_eq!(plain.cache_lifetime(), None, "CHATCLI_PROMPT_CACHE=off");

    let bedrock = |http: Http| {
        chatcli::provider::bedrock::Bedrock::new(
            http,
            server.uri(),
            "eu-west-1".into(),
            chatcli::provider::bedrock::Auth::SigV4 {
                access_key: "AKIDEXAMPLE".into(),
                secret_key: "secret".into(),
                session_token: None,
            },
            "anthropic.claude-sonnet-4-5-20250929-v1:0".into(),
        )
    };
    assert_eq!(bedrock(Http::default()).cache_lifetime(), Some(300));
    assert_eq!(bedrock(off).cache_lifetime(), None);

    let chat = |preset: Preset, model: &str, ttl: CacheTtl| {
        OpenAiChat::new(
            Http::default(),
            preset,
            server.uri(),
            "k".into(),
            model.into(),
        )
        .with_cache_ttl(ttl)
    };
    assert_eq!(
        chat(Preset::OPENAI, "gpt-4.1", CacheTtl::Auto).cache_lifetime(),
        Some(86_400)
    );
    assert_eq!(
        chat(Preset::OPENAI, "gpt-4.1", CacheTtl::FiveMinutes).cache_lifetime(),
        Some(300),
        "in-memory retention asked"
    );
    assert_eq!(
        chat(Preset::OPENAI, "gpt-4o", CacheTtl::Auto).cache_lifetime(),
        Some(300),
        "no extended retention offered"
    );
    assert_eq!(
        chat(Preset::MOONSHOT, "kimi-k2", CacheTtl::Auto).cache_lifetime(),
        None
    );
}
