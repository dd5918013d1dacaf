//! Property tests: every parser of outside input (streams, frames, pages, files, MCP messages,
//! typed keys) takes any input without panicking; errors are fine, panics are not. Where a
//! parser has an invariant (a checked price, only http(s) links, unique tool names), it is
//! asserted too.

use chatcli::provider::anthropic::{AnthropicParser, parse_arguments};
use chatcli::provider::http::{SseEvent, StreamParser, replay};
use chatcli::provider::openai_chat::{ChatParser, Preset};
use chatcli::provider::openai_responses::ResponsesParser;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use proptest::prelude::*;
use serde_json::{Value, json};

const TYPES: &[&str] = &[
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
    "ping",
    "error",
    "response.created",
    "response.output_text.delta",
    "response.output_item.added",
    "response.output_item.done",
    "response.function_call_arguments.delta",
    "response.completed",
    "response.incomplete",
    "response.failed",
    "unknown.kind",
];

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u32>().prop_map(|n| json!(n)),
        ".{0,12}".prop_map(Value::String),
        Just(json!("tool_use")),
        Just(json!("text_delta")),
        Just(json!("input_json_delta")),
        Just(json!("function_call")),
        Just(json!("{\"a\":")),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    Just("type".to_string()),
                    Just("index".to_string()),
                    Just("delta".to_string()),
                    Just("usage".to_string()),
                    Just("choices".to_string()),
                    Just("tool_calls".to_string()),
                    Just("item".to_string()),
                    Just("response".to_string()),
                    Just("content_block".to_string()),
                    Just("message".to_string()),
                    "[a-z_]{1,8}",
                ],
                inner,
                0..5
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// An SSE data payload: protocol-shaped JSON, or arbitrary text.
fn payload() -> impl Strategy<Value = String> {
    prop_oneof![
        (prop::sample::select(TYPES), value()).prop_map(|(t, v)| {
            let mut obj = match v {
                Value::Object(m) => m,
                other => {
                    let mut m = serde_json::Map::new();
                    m.insert("x".into(), other);
                    m
                }
            };
            obj.insert("type".into(), json!(t));
            Value::Object(obj).to_string()
        }),
        ".{0,40}",
        Just("[DONE]".to_string()),
    ]
}

fn feed_all(mut parser: impl StreamParser, events: &[String]) {
    for data in events {
        if parser
            .feed(&SseEvent {
                event: String::new(),
                data: data.clone(),
            })
            .is_err()
        {
            return;
        }
    }
    let _ = parser.finish();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    #[test]
    fn anthropic_parser_takes_any_events(events in prop::collection::vec(payload(), 1..6)) {
        feed_all(AnthropicParser::new("fuzz"), &events);
    }

    #[test]
    fn chat_parser_takes_any_events(events in prop::collection::vec(payload(), 1..6)) {
        feed_all(ChatParser::new(Preset::OPENAI, String::new()), &events);
    }

    #[test]
    fn responses_parser_takes_any_events(events in prop::collection::vec(payload(), 1..6)) {
        feed_all(ResponsesParser::new("fuzz"), &events);
    }

    /// Arguments are the JSON they say when they are JSON, `{}` when blank, and otherwise kept
    /// as the text itself (so the agent can answer the call with an error naming it).
    #[test]
    fn tool_arguments_are_their_json_or_kept_as_text(
        raw in prop_oneof![".{0,60}", "\\{\"[a-z]{1,5}\": [0-9]{1,3}\\}", Just("  ".to_string())],
    ) {
        let parsed = parse_arguments(&raw);
        match serde_json::from_str::<Value>(&raw) {
            _ if raw.trim().is_empty() => prop_assert_eq!(parsed, serde_json::json!({})),
            Ok(value) => prop_assert_eq!(parsed, value),
            Err(_) => prop_assert_eq!(parsed, Value::String(raw.clone())),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1_000))]

    /// Raw bytes through the SSE decoder and a parser: any split, any garbage.
    #[test]
    fn sse_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300), chunk in 1usize..40) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().expect("runtime");
        let _ = rt.block_on(replay(&bytes, chunk, AnthropicParser::new("fuzz")));
    }
}

/// A Bedrock event-stream frame with valid checksums around any header bytes: only the length
/// fields inside can lie, which is what a crafted frame does.
fn crafted_frame(headers: &[u8], payload: &[u8]) -> Vec<u8> {
    use chatcli::provider::bedrock::crc32;
    let total = (12 + headers.len() + payload.len() + 4) as u32;
    let mut out = Vec::new();
    out.extend_from_slice(&total.to_be_bytes());
    out.extend_from_slice(&(headers.len() as u32).to_be_bytes());
    let prelude = crc32(&out);
    out.extend_from_slice(&prelude.to_be_bytes());
    out.extend_from_slice(headers);
    out.extend_from_slice(payload);
    let all = crc32(&out);
    out.extend_from_slice(&all.to_be_bytes());
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(5_000))]

    /// Any header bytes with checksums that pass: an error or a frame, never a panic.
    #[test]
    fn bedrock_frames_with_lying_lengths_never_panic(
        headers in prop::collection::vec(any::<u8>(), 0..40),
        payload in prop::collection::vec(any::<u8>(), 0..20),
    ) {
        let frame = crafted_frame(&headers, &payload);
        let _ = chatcli::provider::bedrock::decode_frame(&frame);
    }

    /// Raw bytes as a frame.
    #[test]
    fn bedrock_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..80)) {
        let _ = chatcli::provider::bedrock::decode_frame(&bytes);
    }

    /// Typed text of any script through the slash-command parser.
    #[test]
    fn slash_lines_never_panic(line in "/\\PC{0,12}( \\PC{0,12})?") {
        let _ = chatcli::ui::commands::parse(&line);
        let _ = chatcli::ui::commands::parse_with(&line, &[]);
    }

    /// Any text through the HTML entity decoder of pages and search results.
    #[test]
    fn entity_decoding_never_panics(text in "(\\PC|&|;|#|x){0,40}") {
        let _ = chatcli::tools::web_search::decode_entities(&text);
    }
}

/// Writes `bytes` to a file in a fresh folder and returns both.
fn file_with(bytes: &[u8], name: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).expect("write");
    (dir, path)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// A skill's or agent's front matter, any text.
    #[test]
    fn front_matter_never_panics(text in "(---\\n)?(\\\\PC|\\n|:| ){0,80}(\\n---\\n)?(\\\\PC|\\n){0,20}") {
        let _ = chatcli::skills::frontmatter::parse(&text);
    }

    /// A hand-edited pricing.toml, any text.
    #[test]
    fn pricing_files_never_panic(text in "(\\\\PC|\\n|=|\\[|\\]|\"|\\.){0,120}") {
        let _ = chatcli::cost::Catalog::parse(&text, "pricing.toml");
    }

    /// A session log of any bytes: load and repair never panic.
    #[test]
    fn session_logs_never_panic(lines in prop::collection::vec(payload(), 0..6), junk in prop::collection::vec(any::<u8>(), 0..60)) {
        let mut bytes = lines.join("\n").into_bytes();
        bytes.push(b'\n');
        bytes.extend_from_slice(&junk);
        let (_dir, path) = file_with(&bytes, "20990101-000000-aaaaaa.jsonl");
        let _ = chatcli::session_log::load(&path);
    }

    /// The prompt history file, any bytes.
    #[test]
    fn history_files_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let (_dir, path) = file_with(&bytes, "history.jsonl");
        let _ = chatcli::ui::history::PromptHistory::load(&path, Default::default());
    }

    /// An MCP configuration (`mcp.json` / `.mcp.json`), any text, with `${VAR}` expansion.
    #[test]
    fn mcp_configs_never_panic(text in "(\\\\PC|\\{|\\}|\"|:|,|\\$|\\[|\\]){0,120}") {
        let (_dir, path) = file_with(text.as_bytes(), "mcp.json");
        let env = chatcli::env::Env::from_pairs([("HOME", "/home/u")]);
        let _ = chatcli::mcp::config::read_file(&path, chatcli::mcp::config::Scope::User, &env);
        let _ = chatcli::mcp::config::expand(&text, &env);
    }
}

/// A `config.toml` line: one of the keys it reads (or any other) with a value of any TOML type,
/// or a line of anything.
fn config_line() -> impl Strategy<Value = String> {
    let key = prop_oneof![
        Just("mode".to_string()),
        Just("provider".to_string()),
        Just("model".to_string()),
        Just("base_url".to_string()),
        Just("max_turns".to_string()),
        "[a-z_]{1,10}",
    ];
    let value = prop_oneof![
        "\\PC{0,16}".prop_map(|s| format!("{s:?}")),
        Just("\"chat\"".to_string()),
        Just("\"agent\"".to_string()),
        Just("\"anthropic\"".to_string()),
        Just("\"http://localhost:11434\"".to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|n| n.to_string()),
        any::<bool>().prop_map(|b| b.to_string()),
        Just("[1, \"two\"]".to_string()),
        Just("{ a = 1 }".to_string()),
    ];
    prop_oneof![
        4 => (key, value).prop_map(|(k, v)| format!("{k} = {v}")),
        1 => "(\\PC|=|\\[|\\]|\"|#){0,30}",
    ]
}

/// Resolves a configuration whose `CHATCLI_HOME` holds `config.toml` = `bytes`.
fn resolve_with_config_file(
    bytes: &[u8],
) -> Result<chatcli::config::Config, chatcli::env::ConfigError> {
    let home = tempfile::tempdir().expect("tempdir");
    std::fs::write(home.path().join("config.toml"), bytes).expect("write");
    let env = chatcli::env::Env::from_pairs([("CHATCLI_HOME", home.path().display().to_string())]);
    chatcli::config::Config::resolve(&chatcli::config::Overrides::default(), env)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// A hand-edited `config.toml` of any lines: a checked config or an error, never a panic;
    /// a file that is not TOML is an error, and what is resolved stays within its clamps.
    #[test]
    fn config_files_never_panic(lines in prop::collection::vec(config_line(), 0..6)) {
        let text = lines.join("\n");
        let resolved = resolve_with_config_file(text.as_bytes());
        if toml::from_str::<toml::Table>(&text).is_err() {
            prop_assert!(resolved.is_err(), "not TOML, yet resolved:\n{text}");
        }
        if let Ok(config) = resolved {
            prop_assert!((1..=200).contains(&config.max_turns), "{}", config.max_turns);
        }
    }

    /// `config.toml` of any bytes (not UTF-8 included): an error or a config, never a panic.
    #[test]
    fn config_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..120)) {
        let resolved = resolve_with_config_file(&bytes);
        if std::str::from_utf8(&bytes).is_err() {
            prop_assert!(resolved.is_err());
        }
    }

    /// A `pricing.toml` entry with any numbers: accepted exactly when every price is a finite
    /// number of zero or more, and then found by its id.
    #[test]
    fn pricing_entries_are_checked(
        id in "[a-z][a-z0-9.-]{0,12}",
        input in any::<f64>(),
        output in any::<f64>(),
        cache_read in prop::option::of(any::<f64>()),
    ) {
        let mut text = format!("[models.\"{id}\"]\ninput = {input:?}\noutput = {output:?}\n");
        if let Some(read) = cache_read {
            text.push_str(&format!("cache_read = {read:?}\n"));
        }
        let sane = |v: f64| v.is_finite() && v >= 0.0;
        let expected = sane(input) && sane(output) && cache_read.is_none_or(sane);
        match chatcli::cost::Catalog::parse(&text, "pricing.toml") {
            Ok(catalog) => {
                prop_assert!(expected, "accepted a bad price:\n{text}");
                prop_assert!(catalog.lookup(&id).is_some(), "{id} not found in:\n{text}");
            }
            Err(_) => prop_assert!(!expected, "refused good prices:\n{text}"),
        }
    }
}

/// Pieces of a DuckDuckGo results page: the markup the parser looks for, entities, accented
/// text and redirect links, in any order.
fn results_page_piece() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("<a rel=\"nofollow\" class=\"result__a\" href=\"".to_string()),
        Just("\">".to_string()),
        Just("</a>".to_string()),
        Just("<a class=\"result__snippet\" href=\"x\">".to_string()),
        Just("<div class=\"result__snippet\">".to_string()),
        Just("</div>".to_string()),
        Just("</td>".to_string()),
        Just("//duckduckgo.com/l/?uddg=".to_string()),
        Just("https%3A%2F%2Fexample.com%2F".to_string()),
        Just("&amp;rut=abc".to_string()),
        Just("https://example.org/é".to_string()),
        Just("https://duckduckgo.com/y.js?ad=1".to_string()),
        Just("javascript:alert(1)".to_string()),
        Just("R&D ééééé".to_string()),
        Just("&#233;&#x1F600;&#xD800;&#99999999;".to_string()),
        Just("&hellip;&nbsp;&".to_string()),
        Just("<b>".to_string()),
        Just("</b>".to_string()),
        Just("\"".to_string()),
        "\\PC{0,8}",
    ]
}

/// One well-formed result: a title of any text and entities, a distinct https address (behind
/// the redirect or not), and a snippet.
fn well_formed_result(n: usize) -> impl Strategy<Value = (String, String)> {
    (
        "(\\PC|&amp;|&#233;|R&D é){0,12}",
        "[a-z0-9]{1,8}",
        any::<bool>(),
        "(\\PC|&quot;){0,20}",
    )
        .prop_map(move |(title, path, redirect, snippet)| {
            let url = format!("https://example.com/{n}/{path}");
            let href = if redirect {
                let encoded = url.replace(':', "%3A").replace('/', "%2F");
                format!("//duckduckgo.com/l/?uddg={encoded}&amp;rut=0")
            } else {
                url.clone()
            };
            let title = title.replace(['<', '>', '"'], "");
            let snippet = snippet.replace(['<', '>'], "");
            let html = format!(
                "<div class=\"result\"><h2><a rel=\"nofollow\" class=\"result__a\" href=\"{href}\">{title}</a></h2><a class=\"result__snippet\" href=\"{href}\">{snippet}</a></div>\n"
            );
            (html, url)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    /// A results page of any pieces: only http(s) links come out, each once, at most one per
    /// result link on the page.
    #[test]
    fn duckduckgo_pages_never_panic(pieces in prop::collection::vec(results_page_piece(), 0..40)) {
        let html = pieces.concat();
        let hits = chatcli::tools::web_search::parse_duckduckgo(&html);
        prop_assert!(hits.len() <= html.matches("class=\"result__a\"").count());
        for (i, hit) in hits.iter().enumerate() {
            prop_assert!(hit.url.starts_with("http://") || hit.url.starts_with("https://"), "{}", hit.url);
            prop_assert!(hits.iter().skip(i + 1).all(|h| h.url != hit.url), "{} twice", hit.url);
        }
        let _ = chatcli::tools::web_search::format_results(&hits, 5);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// A page of well-formed results, whatever their titles and snippets hold: every result is
    /// found, in order, with its address.
    #[test]
    fn duckduckgo_results_are_all_found(
        results in (0usize..6).prop_flat_map(|n| (0..n).map(well_formed_result).collect::<Vec<_>>()),
    ) {
        let html = format!(
            "<html><body>{}</body></html>",
            results.iter().map(|(html, _)| html.as_str()).collect::<String>()
        );
        let hits = chatcli::tools::web_search::parse_duckduckgo(&html);
        let urls: Vec<&str> = hits.iter().map(|h| h.url.as_str()).collect();
        let expected: Vec<&str> = results.iter().map(|(_, url)| url.as_str()).collect();
        prop_assert_eq!(urls, expected);
    }

    /// Any HTML through the page reader's pieces: tags stripped, nesting measured, previews
    /// cut on a character, never a panic.
    #[test]
    fn html_pages_never_panic(
        pieces in prop::collection::vec(prop_oneof![
            prop::sample::select(vec![
                "<p>", "</p>", "<br/>", "<img src=x>", "<script>", "</script>", "<!--", "-->",
                "<", ">", "/", "&amp;", "&#", "é", "日本", "\n", "<div ",
            ]).prop_map(str::to_string),
            "\\PC{0,6}",
        ], 0..40),
        max in 0usize..50,
    ) {
        use chatcli::tools::web_fetch::{nesting_depth, preview, strip_tags};
        let html = pieces.concat();
        let _ = strip_tags(&html);
        prop_assert!(nesting_depth(&html) <= html.matches('<').count());
        let shown = preview(&html, max);
        prop_assert!(html.starts_with(shown));
        prop_assert!(shown.chars().count() <= max);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// An MCP server's tool list of any names, descriptions and schemas: every offered name is
    /// distinct, at most 64 characters of `[A-Za-z0-9_-]`, and every schema an object.
    #[test]
    fn mcp_tool_lists_never_panic(
        tools in prop::collection::vec(("\\PC{0,12}", "\\PC{0,40}", "(\\PC|\\.|\\n| ){0,60}", value()), 0..8),
    ) {
        use chatcli::mcp::naming::{MAX_NAME, adapt_schema, assign, first_sentence};
        let pairs: Vec<(String, String)> = tools.iter().map(|(s, t, _, _)| (s.clone(), t.clone())).collect();
        let names = assign(&pairs);
        prop_assert_eq!(names.len(), pairs.len());
        for (i, name) in names.iter().enumerate() {
            prop_assert!(name.len() <= MAX_NAME, "{name}");
            prop_assert!(name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'), "{name}");
            prop_assert!(names.iter().skip(i + 1).all(|n| n != name), "{name} twice");
        }
        for (_, _, description, schema) in &tools {
            prop_assert!(first_sentence(description).chars().count() <= 161);
            let adapted = adapt_schema(schema);
            prop_assert_eq!(adapted.get("type").and_then(Value::as_str), Some("object"));
        }
    }

    /// A tool result of any shape from an MCP server: text out or an error, never a panic.
    #[test]
    fn mcp_results_never_panic(result in value(), kinds in prop::collection::vec(prop_oneof![
        Just("text"), Just("image"), Just("audio"), Just("resource"), Just("resource_link"), Just("other"),
    ], 0..4), data in "(\\PC|=|/|\\+){0,24}") {
        let dir = tempfile::tempdir().expect("tempdir");
        let ctx = chatcli::tools::ToolContext::new(
            dir.path().canonicalize().expect("canonical"),
            chatcli::tools::Scratch::private(dir.path().join(".scratch")),
            chatcli::tools::WebSettings::default(),
        );
        let content: Vec<Value> = kinds
            .iter()
            .map(|kind| json!({
                "type": kind,
                "text": data,
                "data": data,
                "mimeType": data,
                "resource": {"uri": data, "text": data, "blob": data},
            }))
            .collect();
        let _ = chatcli::mcp::tools::result_text("fuzz", &json!({"content": content}), &ctx);
        let _ = chatcli::mcp::tools::result_text("fuzz", &result, &ctx);
    }
}

/// A key a person or a terminal can send: any character (in a burst, as typing), the editing
/// and moving keys, F1, and the Ctrl shortcuts.
fn any_key() -> impl Strategy<Value = KeyEvent> {
    use KeyCode::*;
    let with = |code: KeyCode, modifiers: KeyModifiers| KeyEvent::new(code, modifiers);
    prop_oneof![
        3 => any::<char>().prop_map(move |c| with(Char(c), KeyModifiers::NONE)),
        3 => prop::sample::select(vec!['/', '@', ' ', 'é', '日', 'a', 'y', 'n', 'q', '\u{301}', '😀', '['])
            .prop_map(move |c| with(Char(c), KeyModifiers::NONE)),
        3 => prop::sample::select(vec![
            Enter, Backspace, Delete, Tab, BackTab, Esc, Up, Down, Left, Right, Home, End,
            PageUp, PageDown, F(1),
        ])
        .prop_map(move |code| with(code, KeyModifiers::NONE)),
        1 => prop::sample::select(vec!['t', 'r', 'b', 'g', 'o', 'u', 'w', 'k', 'a', 'e', 'j', 'c'])
            .prop_map(move |c| with(Char(c), KeyModifiers::CONTROL)),
        1 => prop::sample::select(vec![Up, Down, Enter])
            .prop_map(move |code| with(code, KeyModifiers::CONTROL)),
        1 => Just(with(Enter, KeyModifiers::SHIFT)),
    ]
}

/// Whether `key` would run `/export`, which writes a file in the working folder: the only key
/// the harness holds back.
fn would_export(app: &chatcli::ui::App, key: &KeyEvent) -> bool {
    use chatcli::ui::commands::{Slash, parse};
    if key.code != KeyCode::Enter {
        return false;
    }
    let chosen = app
        .input
        .popup
        .as_ref()
        .and_then(|p| p.chosen())
        .map(|item| item.insert.clone());
    [Some(app.input.composer.text()), chosen]
        .into_iter()
        .flatten()
        .any(|text| matches!(parse(&text), Some(Slash::Command { name: "export", .. })))
}

/// A session to type into: an answer with Markdown and a finished call, and (when `asking`) a
/// command waiting for approval.
fn typed_into_app(asking: bool) -> chatcli::ui::App {
    use chatcli::protocol::{AgentEvent, Mode};
    let (mut app, _ops) = crate::common::keys::app_for(Mode::Agent, "demo", "demo");
    app.handle_agent_event(AgentEvent::TurnStarted { turn: 1 });
    app.handle_agent_event(AgentEvent::TextDelta {
        text: "Here is **a table**:\n\n| a | b |\n|---|---|\n| é | 日本 |\n\n```rust\nfn main() {}\n```\n".into(),
    });
    app.handle_agent_event(AgentEvent::ToolCall {
        id: "c1".into(),
        name: "run_command".into(),
        args: json!({"cmd": "echo é"}),
    });
    app.handle_agent_event(AgentEvent::ToolResult {
        id: "c1".into(),
        name: "run_command".into(),
        ok: true,
        chars: 2,
        saved_path: None,
        duration_ms: 5,
        error: None,
        exit_code: Some(0),
        output: "é\n".into(),
        diff: Some("--- a\n+++ b\n@@ -1 +1 @@\n-é\n+日本\n".into()),
    });
    if asking {
        app.handle_agent_event(AgentEvent::ApprovalRequest {
            id: "c2".into(),
            name: "run_command".into(),
            args: json!({"cmd": "rm -rf é"}),
            preview: None,
        });
    }
    app
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Any keys, pastes and sizes through the whole key map and a frame after each: typing of
    /// any script, the palette, the mention picker, history, overlays, the approval dialog and
    /// the call selection never panic.
    #[test]
    fn the_key_map_takes_any_keys(
        asking in any::<bool>(),
        keys in prop::collection::vec(any_key(), 0..60),
        paste in "\\PC{0,20}",
        width in 20u16..210,
        height in 6u16..60,
    ) {
        use crossterm::event::Event;
        let mut app = typed_into_app(asking);
        app.handle_terminal_event(Event::Paste(paste));
        for key in keys {
            if would_export(&app, &key) {
                continue;
            }
            app.handle_key(key);
            let _ = crate::common::draw_at(&mut app, width, height);
        }
        app.settle_at(std::time::Instant::now() + std::time::Duration::from_secs(5));
        let _ = crate::common::draw_at(&mut app, width, height);
    }
}
