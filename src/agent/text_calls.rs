//! Tool calls a model wrote as text: small instruct models behind llama-server or Ollama often
//! answer with the call in the content when the chat template does not parse it. Three shapes
//! are recognised, the ones small models use: Hermes `<tool_call>{"name": …, "arguments": …}
//! </tool_call>` blocks (one or several), Mistral's `[TOOL_CALLS] [{"name": …, "arguments": …}]`,
//! and a fenced ```json block holding exactly one object with `name` and `arguments`.
//!
//! Pure text in, calls out: the agent calls [`extract`] only when the request offered tools and
//! the response has no native call, then runs what it found like native calls. The one thing a
//! newcomer gets wrong: a call is only a call when its `name` is one of the offered tools, and a
//! block that *looks* like a call but does not parse is not silently dropped — it is reported
//! as [`Extracted::malformed`], so the agent can send one short FORMAT ERROR reminder.

// The model's text: no index that could panic on it (#34).
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

use serde_json::Value;

/// What was found in a response's text.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Extracted {
    /// Calls found, in order: (tool name, arguments object).
    pub calls: Vec<(String, Value)>,
    /// The text without the blocks that held the calls (trimmed).
    pub text: String,
    /// A block that looked like a call but did not parse, or named no offered tool: why.
    pub malformed: Option<String>,
}

const HERMES_OPEN: &str = "<tool_call>";
const HERMES_CLOSE: &str = "</tool_call>";
const MISTRAL: &str = "[TOOL_CALLS]";

/// The calls written in `text`, for the offered `tools`.
pub fn extract(text: &str, tools: &[&str]) -> Extracted {
    let mut out = Extracted::default();
    let mut kept = String::new();
    let mut rest = text;
    // Hermes blocks, one or several; an unclosed last block runs to the end.
    if rest.contains(HERMES_OPEN) {
        while let Some((before, after)) = rest.split_once(HERMES_OPEN) {
            kept.push_str(before);
            let (body, next) = after.split_once(HERMES_CLOSE).unwrap_or((after, ""));
            match parse_call(body.trim(), tools) {
                Ok(call) => out.calls.push(call),
                Err(why) => {
                    out.malformed.get_or_insert(why);
                    // The block as written stays in the answer: open tag, body, close tag.
                    kept.push_str(HERMES_OPEN);
                    kept.push_str(body);
                    if after.len() > body.len() {
                        kept.push_str(HERMES_CLOSE);
                    }
                }
            }
            rest = next;
        }
        kept.push_str(rest);
        out.text = kept.trim().to_string();
        return out;
    }
    if let Some((before, body)) = text.split_once(MISTRAL) {
        let body = body.trim();
        match serde_json::from_str::<Value>(body)
            .map_err(|_| "the [TOOL_CALLS] list is not valid JSON".to_string())
            .and_then(|v| match v {
                Value::Array(items) => items
                    .into_iter()
                    .map(|item| call_of(item, tools))
                    .collect::<Result<Vec<_>, _>>(),
                item @ Value::Object(_) => call_of(item, tools).map(|c| vec![c]),
                _ => Err("[TOOL_CALLS] must be followed by a list of calls".to_string()),
            }) {
            Ok(calls) => {
                out.calls = calls;
                out.text = before.trim().to_string();
            }
            Err(why) => {
                out.malformed = Some(why);
                out.text = text.trim().to_string();
            }
        }
        return out;
    }
    // A fenced JSON block that is exactly one call. Any other fenced JSON is just an answer.
    let mut search = 0;
    while let Some(found) = text.get(search..).and_then(|t| t.find("```json")) {
        let open = search + found;
        let body_start = open + "```json".len();
        let Some(close) = text.get(body_start..).and_then(|t| t.find("```")) else {
            break;
        };
        let body = text
            .get(body_start..body_start + close)
            .unwrap_or_default()
            .trim();
        let end = body_start + close + 3;
        if let Ok(value) = serde_json::from_str::<Value>(body)
            && value.get("name").is_some()
            && value.get("arguments").is_some()
        {
            match call_of(value, tools) {
                Ok(call) => {
                    out.calls.push(call);
                    out.text = format!(
                        "{}{}",
                        text.get(..open).unwrap_or_default(),
                        text.get(end..).unwrap_or_default()
                    )
                    .trim()
                    .to_string();
                }
                Err(why) => {
                    out.malformed = Some(why);
                    out.text = text.trim().to_string();
                }
            }
            return out;
        }
        search = end;
    }
    out.text = text.to_string();
    out
}

/// One Hermes block's body.
fn parse_call(body: &str, tools: &[&str]) -> Result<(String, Value), String> {
    let value: Value = serde_json::from_str(body)
        .map_err(|_| "the <tool_call> block is not one JSON object".to_string())?;
    call_of(value, tools)
}

/// `{"name": …, "arguments": {…}}` (arguments may arrive as a JSON string, as OpenAI sends them).
fn call_of(value: Value, tools: &[&str]) -> Result<(String, Value), String> {
    let Value::Object(mut object) = value else {
        return Err("a call must be a JSON object".into());
    };
    let name = match object.remove("name") {
        Some(Value::String(name)) => name,
        _ => return Err("the call has no \"name\"".into()),
    };
    if !tools.contains(&name.as_str()) {
        return Err(format!("\"{name}\" is not one of the tools offered"));
    }
    let arguments = match object
        .remove("arguments")
        .or_else(|| object.remove("parameters"))
    {
        Some(Value::String(s)) => serde_json::from_str::<Value>(&s)
            .map_err(|_| format!("the arguments of {name} are not a JSON object"))?,
        Some(v) => v,
        None => Value::Object(Default::default()),
    };
    if !arguments.is_object() {
        return Err(format!("the arguments of {name} are not a JSON object"));
    }
    Ok((name, arguments))
}

/// A FORMAT ERROR reminder to send back, and why (for the session log's notice).
#[derive(Debug, Clone, PartialEq)]
pub struct Reminder {
    pub text: String,
    pub why: String,
}

/// The reminder sent back once when a block did not parse: what went wrong and the shape.
pub fn format_error(why: &str, example_tool: &str) -> String {
    format!(
        "FORMAT ERROR: {why}. Write the call as <tool_call>{{\"name\": \"{example_tool}\", \"arguments\": {{…}}}}</tool_call> with one JSON object inside, or answer in plain text."
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const TOOLS: &[&str] = &["read_file", "list_dir"];

    #[test]
    fn the_formats_small_models_write() {
        // (text, calls found, text kept, malformed?)
        type Case<'a> = (&'a str, Vec<(&'a str, Value)>, &'a str, bool);
        let cases: Vec<Case> = vec![
            (
                "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"file\": \"a.txt\"}}\n</tool_call>",
                vec![("read_file", json!({"file": "a.txt"}))],
                "",
                false,
            ),
            (
                "Let me look.\n<tool_call>{\"name\": \"read_file\", \"arguments\": {\"file\": \"a\"}}</tool_call>\n<tool_call>{\"name\": \"list_dir\", \"arguments\": {}}</tool_call>",
                vec![("read_file", json!({"file": "a"})), ("list_dir", json!({}))],
                "Let me look.",
                false,
            ),
            (
                "<tool_call>{\"name\": \"read_file\", \"arguments\": \"{\\\"file\\\": \\\"b\\\"}\"}",
                vec![("read_file", json!({"file": "b"}))],
                "",
                false,
            ),
            (
                "[TOOL_CALLS] [{\"name\": \"list_dir\", \"arguments\": {\"path\": \".\"}}]",
                vec![("list_dir", json!({"path": "."}))],
                "",
                false,
            ),
            (
                "Sure:\n```json\n{\"name\": \"read_file\", \"arguments\": {\"file\": \"c\"}}\n```",
                vec![("read_file", json!({"file": "c"}))],
                "Sure:",
                false,
            ),
            // Fenced JSON that is not a call is an answer.
            (
                "```json\n{\"version\": 2}\n```",
                vec![],
                "```json\n{\"version\": 2}\n```",
                false,
            ),
            ("No tools needed: 4.", vec![], "No tools needed: 4.", false),
            // Looks like a call, does not parse.
            (
                "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"file\": </tool_call>",
                vec![],
                "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"file\": </tool_call>",
                true,
            ),
            (
                "<tool_call>{\"name\": \"delete_everything\", \"arguments\": {}}</tool_call>",
                vec![],
                "<tool_call>{\"name\": \"delete_everything\", \"arguments\": {}}</tool_call>",
                true,
            ),
            (
                "[TOOL_CALLS] [{\"name\": ",
                vec![],
                "[TOOL_CALLS] [{\"name\":",
                true,
            ),
            (
                "```json\n{\"name\": \"nope\", \"arguments\": {}}\n```",
                vec![],
                "```json\n{\"name\": \"nope\", \"arguments\": {}}\n```",
                true,
            ),
        ];
        for (text, calls, kept, malformed) in cases {
            let found = extract(text, TOOLS);
            let expected: Vec<(String, Value)> =
                calls.into_iter().map(|(n, a)| (n.to_string(), a)).collect();
            assert_eq!(found.calls, expected, "{text}");
            assert_eq!(found.text, kept, "{text}");
            assert_eq!(found.malformed.is_some(), malformed, "{text}");
        }
    }

    #[test]
    fn the_reminder_names_the_shape() {
        let text = format_error("the <tool_call> block is not one JSON object", "read_file");
        assert!(text.starts_with("FORMAT ERROR: "), "{text}");
        assert!(
            text.contains("<tool_call>{\"name\": \"read_file\""),
            "{text}"
        );
    }

    proptest::proptest! {
        #[test]
        fn never_panics_on_arbitrary_text(text in ".{0,400}") {
            let _ = extract(&text, TOOLS);
        }

        #[test]
        fn never_panics_near_the_markers(
            a in ".{0,40}", b in ".{0,40}",
            marker in proptest::sample::select(vec!["<tool_call>", "</tool_call>", "[TOOL_CALLS]", "```json", "```", "{\"name\": \"read_file\", \"arguments\": "]),
        ) {
            let _ = extract(&format!("{a}{marker}{b}{marker}é"), TOOLS);
        }
    }
}
