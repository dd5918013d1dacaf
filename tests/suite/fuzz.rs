//! Property tests: the stream parsers and the tool-argument parser take any input without
//! panicking (10,000 cases each); errors are fine, panics are not.

use chatcli::provider::anthropic::{AnthropicParser, parse_arguments};
use chatcli::provider::http::{SseEvent, StreamParser, replay};
use chatcli::provider::openai_chat::{ChatParser, Preset};
use chatcli::provider::openai_responses::ResponsesParser;
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

    #[test]
    fn tool_arguments_are_an_object_or_kept_as_text(raw in ".{0,60}") {
        let parsed = parse_arguments(&raw);
        prop_assert!(parsed.is_object() || parsed.is_string() || serde_json::from_str::<Value>(&raw).is_ok());
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
