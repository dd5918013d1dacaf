//! `web_search` with no account: DuckDuckGo's HTML endpoint by default, configured backends
//! first, a failing backend falling through to the next. Every backend is a local wiremock
//! server; the DuckDuckGo page is `tests/fixtures/duckduckgo_results.html`.

use std::path::Path;

use chatcli::config::{Config, Overrides};
use chatcli::env::Env;
use chatcli::tools::{Scratch, SearchBackend, ToolContext, ToolRegistry, WebSettings};
use pretty_assertions::assert_eq;
use serde_json::json;
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

const PAGE: &str = include_str!("../fixtures/duckduckgo_results.html");

const EXPECTED: &str = "1. Prompt caching - Anthropic
   https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching
   Prompt caching is a powerful feature that optimizes your API usage by allowing resuming from specific prefixes in your prompts.
2. openai/codex: Lightweight coding agent that runs in your terminal
   https://github.com/openai/codex
   Codex CLI is a coding agent from OpenAI that runs locally on your computer — written in Rust.
3. Caching & \"prefixes\" 'explained' – a blog
   https://example.com/blog/cache?a=1&b=2
   Why a timestamp at the top of a prompt costs you the whole cache <3";

async fn ddg_server() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/html/"))
        .and(query_param("q", "rust prompt caching"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "text/html; charset=UTF-8")
                .set_body_string(PAGE),
        )
        .mount(&server)
        .await;
    server
}

fn context(dir: &Path, search: Vec<SearchBackend>) -> ToolContext {
    ToolContext::new(
        dir.to_path_buf(),
        Scratch::private(dir.join("scratch")),
        WebSettings {
            search,
            ..WebSettings::default()
        },
    )
}

async fn search(ctx: &ToolContext, max: u64) -> Result<String, String> {
    let tools = ToolRegistry::for_mode(chatcli::protocol::Mode::Coder);
    let tool = tools.get("web_search").expect("coder mode has web_search");
    tool.run(
        &json!({"query": "rust prompt caching", "max_results": max}),
        ctx,
    )
    .await
    .map(|o| o.text)
    .map_err(|e| e.to_string())
}

#[tokio::test]
async fn with_no_account_duckduckgo_answers_as_numbered_lines() {
    let server = ddg_server().await;
    let home = tempfile::tempdir().expect("tempdir");
    let env = Env::from_pairs([
        ("CHATCLI_HOME", home.path().to_str().expect("utf-8")),
        ("CHATCLI_WEBSEARCH_DDG_URL", server.uri().as_str()),
    ]);
    let overrides = Overrides {
        cwd: Some(home.path().to_path_buf()),
        ..Overrides::default()
    };
    let config = Config::resolve(&overrides, env).expect("config");
    assert_eq!(
        config.search,
        vec![SearchBackend::DuckDuckGo {
            base_url: server.uri()
        }],
        "no key, no URL: DuckDuckGo alone"
    );
    let ctx = context(home.path(), config.search.clone());
    assert_eq!(search(&ctx, 5).await.as_deref(), Ok(EXPECTED));
    let two = search(&ctx, 2).await.expect("searched");
    assert_eq!(two.lines().count(), 6, "{two}");
}

#[tokio::test]
async fn a_failing_backend_falls_through_to_the_next() {
    let ddg = ddg_server().await;
    let broken = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/search"))
        .respond_with(ResponseTemplate::new(500).set_body_string("searx is down"))
        .mount(&broken)
        .await;
    Mock::given(method("GET"))
        .and(path("/res/v1/web/search"))
        .respond_with(
            ResponseTemplate::new(401).set_body_json(json!({"error": {"message": "bad key"}})),
        )
        .mount(&broken)
        .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let chain = vec![
        SearchBackend::Searxng(broken.uri()),
        SearchBackend::Brave {
            key: "k".into(),
            base_url: broken.uri(),
        },
        SearchBackend::DuckDuckGo {
            base_url: ddg.uri(),
        },
    ];
    let ctx = context(dir.path(), chain);
    assert_eq!(search(&ctx, 5).await.as_deref(), Ok(EXPECTED));
    assert_eq!(
        broken.received_requests().await.unwrap_or_default().len(),
        2,
        "SearXNG and Brave were asked first"
    );
}

#[tokio::test]
async fn when_every_backend_fails_the_reasons_are_named() {
    let server = MockServer::start().await;
    // DuckDuckGo's bot check: HTTP 202 with a challenge page.
    Mock::given(method("GET"))
        .and(path("/html/"))
        .respond_with(
            ResponseTemplate::new(202)
                .set_body_string("<html><div class=\"anomaly-modal__title\">Unfortunately, bots use DuckDuckGo too.</div></html>"),
        )
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/search"))
        .respond_with(ResponseTemplate::new(503).set_body_string("busy"))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = context(
        dir.path(),
        vec![
            SearchBackend::Searxng(server.uri()),
            SearchBackend::DuckDuckGo {
                base_url: server.uri(),
            },
        ],
    );
    let err = search(&ctx, 5).await.expect_err("every backend failed");
    assert!(
        err.starts_with("web search failed on every backend: SearXNG: HTTP 503"),
        "{err}"
    );
    assert!(
        err.contains("DuckDuckGo: DuckDuckGo asked for a bot check"),
        "{err}"
    );
}

#[tokio::test]
async fn a_page_without_results_is_no_results() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/html/"))
        .respond_with(ResponseTemplate::new(200).set_body_string(
            "<html><body><div class=\"no-results\">No results found for <b>zzqx</b>.</div></body></html>",
        ))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = context(
        dir.path(),
        vec![SearchBackend::DuckDuckGo {
            base_url: server.uri(),
        }],
    );
    assert_eq!(search(&ctx, 5).await.as_deref(), Ok("no results"));
}
