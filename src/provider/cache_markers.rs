//! `CHATCLI_PROMPT_CACHE=off`: a request body and headers without any prompt-cache hint.
//!
//! Every wire family places its hints while building the body (Anthropic's `cache_control`,
//! Bedrock's `cachePoint` blocks, OpenAI's `prompt_cache_key`, xAI's `x-grok-conv-id` header,
//! Anthropic's extended-TTL beta header). Stripping them here, after the body is built, is what
//! keeps the rest of the request byte-for-byte the same as with caching on: the one thing a
//! newcomer would get wrong is to add an `if` in each builder and let the bodies drift apart.

use serde_json::Value;

/// Headers that only steer the prompt cache.
const CACHE_HEADERS: [&str; 1] = ["x-grok-conv-id"];

/// Removes every prompt-cache hint from `body`, in place.
pub fn strip_body(body: &mut Value) {
    match body {
        Value::Object(map) => {
            map.remove("cache_control");
            map.remove("prompt_cache_key");
            map.remove("prompt_cache_retention");
            for value in map.values_mut() {
                strip_body(value);
            }
        }
        Value::Array(items) => {
            items.retain(|item| !is_cache_point(item));
            for item in items.iter_mut() {
                strip_body(item);
            }
        }
        _ => {}
    }
}

/// Removes the headers that only steer the prompt cache.
pub fn strip_headers(headers: &mut Vec<(String, String)>) {
    headers.retain(|(name, value)| {
        let name = name.to_ascii_lowercase();
        let steers_cache = CACHE_HEADERS.contains(&name.as_str())
            || (name == "anthropic-beta" && value.contains("extended-cache-ttl"));
        !steers_cache
    });
}

fn is_cache_point(item: &Value) -> bool {
    item.as_object()
        .is_some_and(|o| o.len() == 1 && o.contains_key("cachePoint"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::{Message, ModelRequest, SystemBlock, ToolSpec};
    use crate::provider::anthropic::CacheTtl;
    use serde_json::json;

    fn request() -> ModelRequest {
        ModelRequest {
            model: "m".into(),
            system: vec![SystemBlock {
                name: "base".into(),
                text: "stable".into(),
                stable: true,
            }],
            tools: vec![ToolSpec {
                name: "read_file".into(),
                description: "reads".into(),
                parameters: json!({"type": "object"}),
            }],
            messages: crate::conversation::shared([Message::user_text("hi")]),
            max_output_tokens: 100,
            session_id: "s1".into(),
            effort: None,
            settled_messages: None,
            bridge_message: None,
        }
    }

    fn mentions_cache(body: &Value) -> bool {
        let text = body.to_string();
        text.contains("cache_control")
            || text.contains("cachePoint")
            || text.contains("prompt_cache_key")
    }

    #[test]
    fn every_family_loses_its_markers_and_keeps_everything_else() {
        let r = request();
        let bodies = [
            crate::provider::anthropic::build_body(&r, CacheTtl::FiveMinutes),
            crate::provider::bedrock::build_body(&r),
            crate::provider::openai_responses::build_body(&r),
        ];
        for mut body in bodies {
            assert!(mentions_cache(&body), "the builder places hints: {body}");
            strip_body(&mut body);
            assert!(!mentions_cache(&body), "{body}");
            assert!(
                body.to_string().contains("\"hi\""),
                "the content stays: {body}"
            );
        }
        let mut anthropic = crate::provider::anthropic::build_body(&r, CacheTtl::FiveMinutes);
        strip_body(&mut anthropic);
        // Only the markers went: the system block is the same object without its marker.
        assert_eq!(
            anthropic["system"],
            json!([{"type": "text", "text": "stable"}])
        );
        assert_eq!(anthropic["model"], json!("m"));
    }

    #[test]
    fn the_rolling_marker_goes_on_the_last_settled_message_on_every_marking_wire() {
        let mut r = request();
        r.messages = crate::conversation::shared([
            Message::user_text("read it"),
            Message {
                role: crate::conversation::Role::Assistant,
                content: vec![crate::conversation::ContentBlock::ToolUse {
                    id: "c1".into(),
                    name: "read_file".into(),
                    input: json!({"file": "big.rs"}),
                }],
            },
            Message {
                role: crate::conversation::Role::User,
                content: vec![crate::conversation::ContentBlock::ToolResult {
                    tool_use_id: "c1".into(),
                    content: "a large result about to become a pointer".into(),
                    is_error: false,
                }],
            },
        ]);
        let marked = |messages: &Value| -> Vec<usize> {
            messages
                .as_array()
                .map(|m| {
                    m.iter()
                        .enumerate()
                        .filter(|(_, m)| mentions_cache(m))
                        .map(|(i, _)| i)
                        .collect()
                })
                .unwrap_or_default()
        };
        for (settled, expected) in [(None, vec![2]), (Some(2), vec![1]), (Some(0), vec![])] {
            r.settled_messages = settled;
            let anthropic = crate::provider::anthropic::build_body(&r, CacheTtl::FiveMinutes);
            assert_eq!(marked(&anthropic["messages"]), expected, "{settled:?}");
            let bedrock = crate::provider::bedrock::build_body(&r);
            assert_eq!(marked(&bedrock["messages"]), expected, "{settled:?}");
        }
        // OpenRouter passes markers through for Claude: its system message comes first, the
        // tool result is a message of its own, and a tool-calls-only turn has no part to mark
        // (the prompt before it carries the marker).
        r.model = "anthropic/claude-sonnet-4.5".into();
        for (settled, expected) in [(None, vec![0, 3]), (Some(2), vec![0, 1])] {
            r.settled_messages = settled;
            let body = crate::provider::openai_chat::build_body(
                &r,
                &crate::provider::openai_chat::Preset::OPENROUTER,
            );
            assert_eq!(marked(&body["messages"]), expected, "{settled:?}");
        }
    }

    #[test]
    fn the_bridge_goes_where_the_previous_rolling_marker_was_and_never_past_four() {
        let call = |id: &str| crate::conversation::ContentBlock::ToolUse {
            id: id.into(),
            name: "search_files".into(),
            input: json!({"term": id}),
        };
        let result = |id: &str| crate::conversation::ContentBlock::ToolResult {
            tool_use_id: id.into(),
            content: format!("found {id}"),
            is_error: false,
        };
        let ids: Vec<String> = (0..12).map(|i| format!("c{i}")).collect();
        let mut r = request();
        r.messages = crate::conversation::shared([
            Message::user_text("find them"),
            Message {
                role: crate::conversation::Role::Assistant,
                content: ids.iter().map(|i| call(i)).collect(),
            },
            Message {
                role: crate::conversation::Role::User,
                content: ids.iter().map(|i| result(i)).collect(),
            },
        ]);
        // The previous request's rolling marker was on the prompt: 24 blocks back.
        r.bridge_message = Some(0);
        let count = |body: &Value| body.to_string().matches("cache_control").count();
        let points = |body: &Value| body.to_string().matches("cachePoint").count();
        let anthropic = crate::provider::anthropic::build_body(&r, CacheTtl::FiveMinutes);
        assert!(mentions_cache(&anthropic["messages"][0]), "{anthropic}");
        assert!(mentions_cache(&anthropic["messages"][2]), "{anthropic}");
        assert_eq!(count(&anthropic), 4, "tools, system, bridge, rolling");
        let bedrock = crate::provider::bedrock::build_body(&r);
        assert!(mentions_cache(&bedrock["messages"][0]), "{bedrock}");
        assert_eq!(points(&bedrock), 4, "{bedrock}");
        r.model = "anthropic/claude-sonnet-4.5".into();
        let openrouter = crate::provider::openai_chat::build_body(
            &r,
            &crate::provider::openai_chat::Preset::OPENROUTER,
        );
        // System, the prompt (the bridge), the last tool result (rolling).
        assert!(mentions_cache(&openrouter["messages"][1]), "{openrouter}");
        assert_eq!(count(&openrouter), 3, "{openrouter}");
        // No bridge where it would fall on the rolling marker or after it.
        r.model = "m".into();
        for bridge in [Some(2), Some(5), None] {
            r.bridge_message = bridge;
            let body = crate::provider::anthropic::build_body(&r, CacheTtl::FiveMinutes);
            assert_eq!(count(&body), 3, "{bridge:?}");
        }
    }

    #[test]
    fn cache_headers_go_and_the_others_stay() {
        let mut headers = vec![
            ("x-api-key".to_string(), "k".to_string()),
            ("x-grok-conv-id".to_string(), "s1".to_string()),
            (
                "anthropic-beta".to_string(),
                "extended-cache-ttl-2025-04-11".to_string(),
            ),
        ];
        strip_headers(&mut headers);
        assert_eq!(headers, vec![("x-api-key".to_string(), "k".to_string())]);
    }
}
