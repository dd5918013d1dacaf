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

use super::AgentError;

/// What was found in a response's text.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Extracted {
    /// Calls found, in order: (tool name, arguments object).
    pub calls: Vec<(String, Value)>,
    /// The text without the blocks that held the calls (trimmed).
    pub text: String,
    /// A block that looked like a call but did not parse, or named no offered tool: why.
    pub malformed: Option<AgentError>,
}

const HERMES_OPEN: &str = "<tool_call>";
const HERMES_CLOSE: &str = "</tool_call>";
const MISTRAL: &str = "[TOOL_CALLS]";

/// The calls written in `text`, for the offered `tools`: the first shape present decides.
pub fn extract(text: &str, tools: &[&str]) -> Extracted {
    if text.contains(HERMES_OPEN) {
        return extract_hermes(text, tools);
    }
    if let Some((before, body)) = text.split_once(MISTRAL) {
        return extract_mistral(text, before, body, tools);
    }
    extract_fenced(text, tools)
}

/// Hermes blocks, one or several; an unclosed last block runs to the end.
fn extract_hermes(text: &str, tools: &[&str]) -> Extracted {
    let mut out = Extracted::default();
    let mut kept = String::new();
    let mut rest = text;
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
    out
}

/// Mistral's `[TOOL_CALLS]` list (or one object), `body` being all that follows the marker and
/// `before` what precedes it.
fn extract_mistral(text: &str, before: &str, body: &str, tools: &[&str]) -> Extracted {
    let mut out = Extracted::default();
    let body = body.trim();
    match serde_json::from_str::<Value>(body)
        .map_err(|_| AgentError::MistralNotJson)
        .and_then(|v| match v {
            Value::Array(items) => items
                .into_iter()
                .map(|item| call_of(item, tools))
                .collect::<Result<Vec<_>, _>>(),
            item @ Value::Object(_) => call_of(item, tools).map(|c| vec![c]),
            _ => Err(AgentError::MistralNotList),
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
    out
}

/// A fenced JSON block that is exactly one call. Any other fenced JSON is just an answer.
fn extract_fenced(text: &str, tools: &[&str]) -> Extracted {
    let mut out = Extracted::default();
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
fn parse_call(body: &str, tools: &[&str]) -> Result<(String, Value), AgentError> {
    let value: Value = serde_json::from_str(body).map_err(|_| AgentError::HermesNotJson)?;
    call_of(value, tools)
}

/// `{"name": …, "arguments": {…}}` (arguments may arrive as a JSON string, as OpenAI sends them).
fn call_of(value: Value, tools: &[&str]) -> Result<(String, Value), AgentError> {
    let Value::Object(mut object) = value else {
        return Err(AgentError::CallNotObject);
    };
    let name = match object.remove("name") {
        Some(Value::String(name)) => name,
        _ => return Err(AgentError::CallWithoutName),
    };
    if !tools.contains(&name.as_str()) {
        return Err(AgentError::NotOffered(name));
    }
    let arguments = match object
        .remove("arguments")
        .or_else(|| object.remove("parameters"))
    {
        Some(Value::String(s)) => serde_json::from_str::<Value>(&s)
            .map_err(|_| AgentError::ArgumentsNotObject(name.clone()))?,
        Some(v) => v,
        None => Value::Object(Default::default()),
    };
    if !arguments.is_object() {
        return Err(AgentError::ArgumentsNotObject(name));
    }
    Ok((name, arguments))
}

/// While a response streams, holds back the text that may be a call written as text, so the
/// screen never shows a `<tool_call>` block that then runs as a call: text before a marker
/// streams at once; a block is held from its marker to its end (`</tool_call>`, the closing
/// fence, or the response's end for `[TOOL_CALLS]`), then dropped if it is a call of an offered
/// tool, else shown whole. A marker's first characters at the end of a delta wait for the next.
#[derive(Debug, Default)]
pub struct Holdback {
    tools: Vec<String>,
    buf: String,
    /// The end of the block being held (`None`: the response's end), while one is.
    holding: Option<Option<&'static str>>,
}

/// Where a held block starts, and where it ends.
const MARKERS: [(&str, Option<&str>); 3] = [
    (HERMES_OPEN, Some(HERMES_CLOSE)),
    (MISTRAL, None),
    ("```json", Some("```")),
];

impl Holdback {
    /// A holdback for a request that offered `tools` (none: nothing is ever held).
    pub fn new(tools: Vec<String>) -> Self {
        Holdback {
            tools,
            ..Holdback::default()
        }
    }

    /// Takes a streamed piece; returns what may be shown now.
    pub fn push(&mut self, delta: &str) -> String {
        if self.tools.is_empty() {
            return delta.to_string();
        }
        self.buf.push_str(delta);
        let mut shown = String::new();
        loop {
            match self.holding {
                Some(None) => return shown,
                Some(Some(close)) => {
                    // The block's end, looked for after its opening marker.
                    let opened = MARKERS
                        .iter()
                        .find(|(_, c)| *c == Some(close))
                        .map_or(0, |(open, _)| open.len());
                    let Some(end) = self
                        .buf
                        .get(opened..)
                        .and_then(|rest| rest.find(close))
                        .map(|at| opened + at + close.len())
                    else {
                        return shown;
                    };
                    let rest = self.buf.split_off(end);
                    let block = std::mem::replace(&mut self.buf, rest);
                    if !self.is_call(&block) {
                        shown.push_str(&block);
                    }
                    self.holding = None;
                }
                None => {
                    let first = MARKERS
                        .iter()
                        .filter_map(|(open, close)| self.buf.find(open).map(|at| (at, *close)))
                        .min_by_key(|(at, _)| *at);
                    if let Some((at, close)) = first {
                        let block = self.buf.split_off(at);
                        shown.push_str(&std::mem::replace(&mut self.buf, block));
                        self.holding = Some(close);
                        continue;
                    }
                    let keep = self.partial_marker_len();
                    let tail = self.buf.split_off(self.buf.len() - keep);
                    shown.push_str(&std::mem::replace(&mut self.buf, tail));
                    return shown;
                }
            }
        }
    }

    /// The response ended: what is still held and should be shown (nothing when it is a call).
    pub fn finish(&mut self) -> String {
        let held = std::mem::take(&mut self.buf);
        let was_block = self.holding.take().is_some();
        if was_block && self.is_call(&held) {
            String::new()
        } else {
            held
        }
    }

    /// Bytes at the end of the buffer that begin some marker (and may complete with the next
    /// piece).
    fn partial_marker_len(&self) -> usize {
        let len = self.buf.len();
        let longest = MARKERS
            .iter()
            .map(|(open, _)| open.len())
            .max()
            .unwrap_or(0);
        (1..longest.min(len + 1))
            .rev()
            .find(|k| {
                self.buf
                    .get(len - k..)
                    .is_some_and(|tail| MARKERS.iter().any(|(open, _)| open.starts_with(tail)))
            })
            .unwrap_or(0)
    }

    fn is_call(&self, block: &str) -> bool {
        let tools: Vec<&str> = self.tools.iter().map(String::as_str).collect();
        let found = extract(block, &tools);
        !found.calls.is_empty() && found.malformed.is_none()
    }
}

/// A FORMAT ERROR reminder to send back, and why (for the session log's notice).
#[derive(Debug, Clone, PartialEq)]
pub struct Reminder {
    pub text: String,
    pub why: AgentError,
}

/// The reminder sent back once when a block did not parse: what went wrong and the shape.
pub fn format_error(why: impl std::fmt::Display, example_tool: &str) -> String {
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

    /// Streams `pieces` through a holdback; what was shown.
    fn shown(pieces: &[&str]) -> String {
        let mut hold = Holdback::new(TOOLS.iter().map(|t| t.to_string()).collect());
        let mut out: String = pieces.iter().map(|p| hold.push(p)).collect();
        out.push_str(&hold.finish());
        out
    }

    #[test]
    fn a_call_written_as_text_never_reaches_the_screen() {
        let call = [
            "I will read it.\n<tool",
            "_call>{\"name\": \"read_file\", ",
            "\"arguments\": {\"file\": \"a\"}}</tool_",
            "call>\nDone.",
        ];
        assert_eq!(shown(&call), "I will read it.\n\nDone.");
        let mistral = [
            "Reading. [TOOL",
            "_CALLS] [{\"name\": \"list_dir\", \"arguments\": {}}]",
        ];
        assert_eq!(shown(&mistral), "Reading. ");
        let fenced = [
            "Here:\n```js",
            "on\n{\"name\": \"read_file\", \"arguments\": {\"file\": \"a\"}}\n``",
            "`",
        ];
        assert_eq!(shown(&fenced), "Here:\n");
        // Not calls: shown whole, in order.
        let json_answer = ["The config:\n```json\n{\"port\": 8080}\n```\nThat is all."];
        assert_eq!(shown(&json_answer), json_answer[0]);
        let unknown = ["<tool_call>{\"name\": \"rm\", \"arguments\": {}}</tool_call> ok"];
        assert_eq!(shown(&unknown), unknown[0]);
        let cut = ["text then <tool_call>{\"name\": \"read_"];
        assert_eq!(shown(&cut), cut[0], "a cut block that is no call is shown");
        assert_eq!(
            shown(&["a <", "b"]),
            "a <b",
            "a marker's start that is none"
        );
        assert_eq!(shown(&["é<tool", "é"]), "é<toolé");
        let mut plain = Holdback::new(Vec::new());
        assert_eq!(
            plain.push("<tool_call>"),
            "<tool_call>",
            "no tools, nothing held"
        );
    }

    #[test]
    fn text_before_a_marker_streams_at_once() {
        let mut hold = Holdback::new(vec!["read_file".into()]);
        assert_eq!(hold.push("Hello wor"), "Hello wor");
        assert_eq!(hold.push("ld <tool_c"), "ld ");
        assert_eq!(hold.push("all>{"), "");
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

    use proptest::prop_assert_eq;

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

        /// However the stream cuts the text, the same is shown; text with no marker is shown
        /// exactly.
        #[test]
        fn the_holdback_shows_the_same_whatever_the_cuts(
            a in ".{0,30}", b in ".{0,30}", cuts in proptest::collection::vec(0usize..80, 0..6),
            marker in proptest::sample::select(vec!["", "<tool_call>", "</tool_call>", "[TOOL_CALLS]", "```json", "```", "{\"name\": \"read_file\", \"arguments\": {}}"]),
        ) {
            let text = format!("{a}{marker}{b}{marker}");
            let mut points: Vec<usize> = cuts
                .into_iter()
                .map(|c| c.min(text.len()))
                .filter(|c| text.is_char_boundary(*c))
                .collect();
            points.sort_unstable();
            let mut pieces = Vec::new();
            let mut from = 0;
            for at in points {
                pieces.push(text.get(from..at).unwrap_or_default());
                from = at;
            }
            pieces.push(text.get(from..).unwrap_or_default());
            let whole = shown(&[text.as_str()]);
            prop_assert_eq!(shown(&pieces), whole.clone());
            let has_marker = MARKERS.iter().any(|(open, _)| text.contains(open));
            if !has_marker {
                prop_assert_eq!(whole, text);
            }
        }
    }
}
