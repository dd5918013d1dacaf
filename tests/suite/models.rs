//! Every model a user names, through `chatcli exec --json` against a scripted server on loopback
//! that is not a local inference server (a gateway, as LiteLLM on localhost:4000 is): a catalog
//! model is priced, a model newer than the catalog gets its family's window and price, and a
//! tool call the model wrote as text is run with its result in the next request. A server that
//! says it is llama.cpp still makes a catalog model free.

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

fn chatcli_exec(home: &std::path::Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_chatcli"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("CHATCLI_HOME", home)
        .current_dir(home);
    cmd
}

/// A gateway: it lists its models as an OpenAI-style proxy does, and answers chat with `body`.
async fn gateway(model: &str, body: String) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({"object": "list",
            "data": [{"id": model, "object": "model", "owned_by": "openai"}]})),
        )
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "text/event-stream")
                .set_body_string(body),
        )
        .mount(&server)
        .await;
    server
}

/// Runs `exec --json` with `model` against `server`; the events, and stderr for failures.
async fn exec(server: &MockServer, model: &str, extra: &[&str]) -> (Vec<Value>, String) {
    let home = tempfile::tempdir().expect("tempdir");
    std::fs::write(home.path().join("a.txt"), "alpha beta gamma\n").expect("write");
    let mut cmd = chatcli_exec(home.path());
    cmd.env("OPENAI_API_KEY", "sk-none")
        .env("OPENAI_BASE_URL", format!("{}/v1", server.uri()))
        .env("OPENAI_MODEL", model)
        .args(["exec", "--json"])
        .args(extra);
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("join")
        .expect("run chatcli");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let events = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    drop(home);
    (events, stdout)
}

fn find<'a>(events: &'a [Value], kind: &str) -> &'a Value {
    events
        .iter()
        .find(|e| e["type"] == kind)
        .unwrap_or_else(|| panic!("no {kind} event in {events:#?}"))
}

fn answer(text: &str) -> String {
    crate::common::sse::openai_chat(text, None, 12_000, 0, 300)
}

#[tokio::test]
async fn a_catalog_model_behind_a_loopback_gateway_costs_more_than_nothing() {
    let server = gateway("claude-sonnet-4-5", answer("Hello from the gateway.")).await;
    let (events, stdout) = exec(&server, "claude-sonnet-4-5", &["--mode", "chat", "hi"]).await;
    let usage = find(&events, "usage");
    let cost = find(&events, "cost");
    assert!(usage["cost_usd"].as_f64().unwrap_or(0.0) > 0.0, "{stdout}");
    // 12,000 in × $3/M + 300 out × $15/M.
    let expected = 12_000.0 * 3.0 / 1e6 + 300.0 * 15.0 / 1e6;
    let total = cost["cost_usd"].as_f64().unwrap_or(0.0);
    assert!((total - expected).abs() < 1e-9, "{total} vs {expected}");
    assert_eq!(cost["pricing"], "priced: catalog", "{cost}");
    assert!(cost.get("price_estimated").is_none(), "{cost}");
}

#[tokio::test]
async fn a_model_newer_than_the_catalog_gets_its_familys_window_and_price() {
    let server = gateway("claude-sonnet-4-7", answer("Hello from a newer Sonnet.")).await;
    let (events, stdout) = exec(&server, "claude-sonnet-4-7", &["--mode", "chat", "hi"]).await;
    let configured = find(&events, "session_configured");
    let window = configured["context_window"].as_u64().unwrap_or(0);
    assert!(window >= 100_000, "{configured}");
    assert_eq!(window, 200_000, "the Sonnet window");
    let usage = find(&events, "usage");
    assert!(usage["cost_usd"].as_f64().unwrap_or(0.0) > 0.0, "{stdout}");
    let cost = find(&events, "cost");
    assert_eq!(cost["price_estimated"], true, "{cost}");
    assert!(
        cost["pricing"]
            .as_str()
            .is_some_and(|p| p.contains("estimated from family claude-sonnet-*")),
        "{cost}"
    );
    assert!(
        events.iter().any(|e| e["type"] == "notice"
            && e["message"]
                .as_str()
                .is_some_and(|m| m.contains("priced and sized as claude-sonnet-4-6"))),
        "said once at the start: {stdout}"
    );
    assert!(
        !stdout.contains("assuming 8192"),
        "no 8k fallback: {stdout}"
    );
    // max_tokens is no longer squeezed by an 8k window.
    let requests = server.received_requests().await.unwrap_or_default();
    let post = requests
        .iter()
        .find(|r| r.method.as_str() == "POST")
        .expect("a chat request");
    let body: Value = serde_json::from_slice(&post.body).expect("json body");
    let max = body["max_completion_tokens"]
        .as_u64()
        .or_else(|| body["max_tokens"].as_u64())
        .unwrap_or(0);
    assert_eq!(max, 8192, "{body}");
}

#[tokio::test]
async fn a_llama_cpp_server_still_makes_a_catalog_model_free() {
    let server = gateway("claude-sonnet-4-5", answer("Hi from llama.cpp.")).await;
    Mock::given(method("GET"))
        .and(path("/props"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"default_generation_settings": {"n_ctx": 4096}, "total_slots": 1}),
        ))
        .mount(&server)
        .await;
    let (events, stdout) = exec(&server, "claude-sonnet-4-5", &["--mode", "chat", "hi"]).await;
    assert_eq!(find(&events, "usage")["cost_usd"], 0.0, "{stdout}");
    let cost = find(&events, "cost");
    assert_eq!(cost["pricing"], "free: local llama.cpp server", "{cost}");
    assert_eq!(find(&events, "session_configured")["context_window"], 4096);
}

/// Answers the first chat request with `first`, every later one with `then`.
struct Sequence {
    first: String,
    then: String,
    seen: std::sync::atomic::AtomicUsize,
}

impl wiremock::Respond for Sequence {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let n = self.seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let body = if n == 0 { &self.first } else { &self.then };
        ResponseTemplate::new(200)
            .insert_header("content-type", "text/event-stream")
            .set_body_string(body.clone())
    }
}

#[tokio::test]
async fn a_tool_call_written_as_text_runs_and_its_result_reaches_the_next_request() {
    let server = MockServer::start().await;
    let written = "I will read it.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"file\": \"a.txt\"}}\n</tool_call>";
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(Sequence {
            first: crate::common::sse::openai_chat(written, None, 900, 0, 40),
            then: answer("The file says alpha beta gamma."),
            seen: Default::default(),
        })
        .mount(&server)
        .await;
    let (events, stdout) = exec(
        &server,
        "small-local-model",
        &["--mode", "agent", "read a.txt and tell me what it says"],
    )
    .await;
    let call = find(&events, "tool_call");
    assert_eq!(call["name"], "read_file", "{stdout}");
    // The screen never shows the block that ran as a call: only the words around it stream.
    let streamed: String = events
        .iter()
        .filter(|e| e["type"] == "text_delta")
        .filter_map(|e| e["text"].as_str())
        .collect();
    assert!(
        streamed.contains("I will read it.") && !streamed.contains("tool_call"),
        "{streamed}"
    );
    let result = find(&events, "tool_result");
    assert_eq!(result["ok"], true, "{result}");
    let finished = find(&events, "turn_finished");
    assert_eq!(finished["text"], "The file says alpha beta gamma.");
    let posts: Vec<Value> = server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .filter(|r| r.method.as_str() == "POST")
        .filter_map(|r| serde_json::from_slice(&r.body).ok())
        .collect();
    assert_eq!(posts.len(), 2, "{stdout}");
    let second = posts[1].to_string();
    assert!(
        second.contains("alpha beta gamma"),
        "the result reaches the next request: {second}"
    );
    // The block itself is not what the model said: it went back as a call.
    let messages = posts[1]["messages"].as_array().cloned().unwrap_or_default();
    let assistant = messages
        .iter()
        .find(|m| m["role"] == "assistant")
        .expect("the assistant turn");
    assert_eq!(assistant["tool_calls"][0]["function"]["name"], "read_file");
    assert!(
        !assistant["content"]
            .as_str()
            .unwrap_or_default()
            .contains("<tool_call>"),
        "{assistant}"
    );
}

#[tokio::test]
async fn a_call_that_does_not_parse_gets_one_format_error_reminder_per_prompt() {
    let server = MockServer::start().await;
    let broken = "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"file\": </tool_call>";
    let body = crate::common::sse::openai_chat(broken, None, 900, 0, 20);
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(Sequence {
            first: body.clone(),
            then: body,
            seen: Default::default(),
        })
        .mount(&server)
        .await;
    let (events, stdout) = exec(
        &server,
        "small-local-model",
        &["--mode", "agent", "read a.txt"],
    )
    .await;
    let reminders: Vec<&Value> = events
        .iter()
        .filter(|e| {
            e["type"] == "notice"
                && e["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("FORMAT ERROR reminder"))
        })
        .collect();
    assert_eq!(reminders.len(), 1, "{stdout}");
    let posts: Vec<String> = server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .filter(|r| r.method.as_str() == "POST")
        .map(|r| String::from_utf8_lossy(&r.body).to_string())
        .collect();
    assert_eq!(
        posts.len(),
        2,
        "one reminder, then the answer stands: {stdout}"
    );
    assert!(
        posts[1].contains("FORMAT ERROR: ")
            && posts[1].contains("<tool_call>{\\\"name\\\": \\\"read_file\\\""),
        "{}",
        posts[1]
    );
    assert!(!events.iter().any(|e| e["type"] == "tool_call"), "{stdout}");
}

/// Runs `chatcli ARGS` in `home` with `env`; stdout and stderr (it must succeed).
async fn chatcli_in(
    home: &std::path::Path,
    env: &[(&str, String)],
    args: &[&str],
) -> (String, String) {
    let mut cmd = chatcli_exec(home);
    for (name, value) in env {
        cmd.env(name, value);
    }
    cmd.args(args);
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("join")
        .expect("run chatcli");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stdout}\n{stderr}");
    (stdout, stderr)
}

/// An OpenRouter-style list: a model no catalog knows, with its window and its price.
fn routed_list() -> Value {
    json!({"data": [
        {"id": "acme/coder-9", "context_length": 65_536,
         "pricing": {"prompt": "0.000002", "completion": "0.000004"}},
        {"id": "claude-sonnet-4-5", "context_length": 1_000_000}
    ]})
}

/// `chatcli models` lists what the provider serves with windows and prices, keeps the list a
/// day (a failing endpoint is not asked again), and `--refresh` on a failing endpoint falls back
/// to the catalog with one line that says so.
#[tokio::test]
async fn models_lists_what_the_provider_serves_and_keeps_it_a_day() {
    let server = MockServer::start().await;
    // The list is asked with the key; the local-server probe (without one) is not the list.
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .and(wiremock::matchers::header(
            "authorization",
            "Bearer sk-listing",
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(routed_list()))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .respond_with(
            ResponseTemplate::new(503)
                .set_body_string("{\"error\": {\"message\": \"down for maintenance\"}}"),
        )
        .mount(&server)
        .await;
    let home = tempfile::tempdir().expect("tempdir");
    let env = [
        ("OPENAI_API_KEY", "sk-listing".to_string()),
        ("OPENAI_BASE_URL", format!("{}/v1", server.uri())),
        ("OPENAI_MODEL", "acme/coder-9".to_string()),
    ];
    let (table, note) = chatcli_in(home.path(), &env, &["models"]).await;
    assert!(note.contains("2 models listed by openai now"), "{note}");
    let row = table
        .lines()
        .find(|l| l.contains("acme/coder-9"))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(
        row.starts_with('▸')
            && row.contains("65k")
            && row.contains("$2.00 / $4.00")
            && row.contains("openai list"),
        "{row}"
    );
    let sonnet = table
        .lines()
        .find(|l| l.contains("claude-sonnet-4-5 "))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(
        sonnet.contains("1M") && sonnet.contains("$3.00 / $15.00"),
        "the list's window, the catalog's price: {sonnet}"
    );
    let kept: Vec<_> = std::fs::read_dir(home.path().join("models"))
        .expect("kept")
        .collect();
    assert_eq!(kept.len(), 1);

    // Within the day the kept list answers (the endpoint now fails and is not asked).
    let (json_out, note) = chatcli_in(home.path(), &env, &["models", "--json"]).await;
    assert!(
        note.contains("listed by openai") && note.contains("ago"),
        "{note}"
    );
    let rows: Value = serde_json::from_str(&json_out).expect("json");
    assert_eq!(rows[0]["id"], "acme/coder-9");
    assert_eq!(rows[0]["window"], 65_536);
    assert_eq!(rows[0]["listed"], true);
    let gets = |requests: &[Request]| {
        requests
            .iter()
            .filter(|r| r.method.as_str() == "GET" && r.headers.contains_key("authorization"))
            .count()
    };
    assert_eq!(
        gets(&server.received_requests().await.unwrap_or_default()),
        1
    );

    // --refresh asks again; the endpoint fails: the catalog alone, said once.
    let (table, note) = chatcli_in(home.path(), &env, &["models", "--refresh", "--all"]).await;
    assert_eq!(note.lines().count(), 1, "{note}");
    assert!(
        note.contains("the catalog only") && note.contains("down for maintenance"),
        "{note}"
    );
    assert!(
        !table.contains("acme/coder-9") && table.contains("claude-sonnet-4-5"),
        "{table}"
    );
    assert!(!table.contains("sk-listing") && !note.contains("sk-listing"));
}

/// A session on a model the catalog does not know takes its window and price from the
/// provider's list kept by `chatcli models`, and `/cost`'s rule says so.
#[tokio::test]
async fn a_session_takes_its_window_and_price_from_the_kept_list() {
    let server = gateway("acme/coder-9", answer("Hello from a routed model.")).await;
    server.reset().await;
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .respond_with(ResponseTemplate::new(200).set_body_json(routed_list()))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "text/event-stream")
                .set_body_string(answer("Hello from a routed model.")),
        )
        .mount(&server)
        .await;
    let home = tempfile::tempdir().expect("tempdir");
    let env = [
        ("OPENAI_API_KEY", "sk-none".to_string()),
        ("OPENAI_BASE_URL", format!("{}/v1", server.uri())),
        ("OPENAI_MODEL", "acme/coder-9".to_string()),
    ];
    chatcli_in(home.path(), &env, &["models"]).await;
    let (stdout, _) = chatcli_in(
        home.path(),
        &env,
        &["exec", "--json", "--mode", "chat", "hi"],
    )
    .await;
    let events: Vec<Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert_eq!(
        find(&events, "session_configured")["context_window"],
        65_536,
        "{stdout}"
    );
    let cost = find(&events, "cost");
    assert_eq!(cost["pricing"], "priced: openai's model list", "{cost}");
    // 12,000 in × $2/M + 300 out × $4/M.
    let expected = 12_000.0 * 2.0 / 1e6 + 300.0 * 4.0 / 1e6;
    let total = cost["cost_usd"].as_f64().unwrap_or(0.0);
    assert!((total - expected).abs() < 1e-9, "{total} vs {expected}");
}

/// Anthropic's list is paged: every page is read (`after_id`), each with the key and version.
#[tokio::test]
async fn anthropics_paged_list_is_read_whole() {
    use wiremock::matchers::{header, query_param};
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .and(header("x-api-key", "sk-ant-test"))
        .and(header("anthropic-version", "2023-06-01"))
        .and(query_param("after_id", "claude-opus-4-7"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "data": [{"id": "claude-haiku-4-5", "type": "model", "max_input_tokens": 200_000}],
            "has_more": false, "last_id": "claude-haiku-4-5"})))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .and(header("x-api-key", "sk-ant-test"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "data": [{"id": "claude-opus-4-7", "type": "model", "max_input_tokens": 1_000_000, "max_tokens": 128_000}],
            "has_more": true, "last_id": "claude-opus-4-7"})))
        .mount(&server)
        .await;
    let home = tempfile::tempdir().expect("tempdir");
    let env = [
        ("ANTHROPIC_API_KEY", "sk-ant-test".to_string()),
        ("ANTHROPIC_BASE_URL", server.uri()),
    ];
    let (out, note) = chatcli_in(home.path(), &env, &["models", "--json"]).await;
    assert!(note.contains("2 models listed by anthropic now"), "{note}");
    let rows: Value = serde_json::from_str(&out).expect("json");
    let ids: Vec<&str> = rows
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|r| r["id"].as_str())
        .collect();
    assert_eq!(
        ids.get(..2),
        Some(&["claude-opus-4-7", "claude-haiku-4-5"][..])
    );
    assert_eq!(rows[0]["window"], 1_000_000);
}
