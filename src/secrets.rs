//! Secrets never leave chatcli's memory: API keys, tokens and passwords are masked (`sk-…abcd`)
//! in everything chatcli prints, sends back to the model as a tool result, or writes to a file.
//!
//! The set is taken from the environment once at start: the value of every variable whose name
//! says it holds a secret (`*KEY*`, `*TOKEN*`, `*SECRET*`, `*PASSWORD*`, `*PASSWD*`, `*PAT`,
//! `*CREDENTIAL*`) and the userinfo of any URL-valued variable (`postgres://user:pw@host`).
//! Values shorter than 8 characters are ignored so that common words are never masked.
//!
//! Two things a newcomer gets wrong. Masking must run on raw values, before serialisation:
//! a secret holding `"` or `\` no longer appears verbatim in its JSON form (`mask_json` walks
//! the strings of a value instead). And masking streamed text piece by piece misses a key that
//! arrives in 7-character deltas: `DeltaMasker` holds back any tail that could still become a
//! secret, and releases it masked once the next piece (or the end of the stream) decides.

// It runs over every text chatcli shows or writes: no index that could panic on it (#34).
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

use std::sync::Arc;

use crate::env::{Env, is_secret_name};
use crate::protocol::AgentEvent;

/// Values shorter than this are never treated as secrets (they would mask common words).
pub const MIN_SECRET_CHARS: usize = 8;

/// The known secret values, longest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Secrets(Arc<Vec<String>>);

/// The userinfo (`user:password`) of a URL-valued string, and its password part.
fn url_userinfo(value: &str) -> Vec<String> {
    let Ok(url) = url::Url::parse(value.trim()) else {
        return Vec::new();
    };
    if !url.has_host() {
        return Vec::new();
    }
    let mut out = Vec::new();
    // The raw text between `://` and `@`, as written (percent-encoding included).
    if let Some(rest) = value.trim().split_once("://").map(|(_, r)| r) {
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        if let Some((userinfo, _)) = authority.rsplit_once('@') {
            out.push(userinfo.to_string());
            if let Some((_, password)) = userinfo.split_once(':') {
                out.push(password.to_string());
            }
        }
    }
    if let Some(password) = url.password() {
        out.push(password.to_string());
        if let Ok(decoded) = urlencoding_decode(password) {
            out.push(decoded);
        }
    }
    out
}

/// Percent-decodes `text` (a URL password as the `url` crate keeps it).
fn urlencoding_decode(text: &str) -> Result<String, std::string::FromUtf8Error> {
    let hex = |b: u8| (b as char).to_digit(16);
    let mut rest = text.as_bytes();
    let mut out = Vec::with_capacity(rest.len());
    while let Some((&first, after)) = rest.split_first() {
        if let [b'%', high, low, ..] = rest
            && let (Some(h), Some(l)) = (hex(*high), hex(*low))
        {
            out.push((h * 16 + l) as u8);
            rest = rest.get(3..).unwrap_or_default();
            continue;
        }
        out.push(first);
        rest = after;
    }
    String::from_utf8(out)
}

/// `sk-…abcd`: enough to recognise a key, not to use it.
pub fn mask(secret: &str) -> String {
    let chars: Vec<char> = secret.chars().collect();
    if chars.len() < 12 {
        return "…".to_string();
    }
    let head: String = chars.iter().take(3).collect();
    let tail: String = chars.iter().skip(chars.len() - 4).collect();
    format!("{head}…{tail}")
}

/// A JSON string literal without its quotes (the literal itself if it has none).
fn unquoted(literal: &str) -> &str {
    literal
        .strip_prefix('"')
        .and_then(|inner| inner.strip_suffix('"'))
        .unwrap_or(literal)
}

impl Secrets {
    /// The secrets in this environment.
    pub fn from_env(env: &Env) -> Secrets {
        let mut values = Vec::new();
        for (name, value) in env.iter() {
            if is_secret_name(name) {
                values.push(value.trim().to_string());
            }
            values.extend(url_userinfo(value));
        }
        Secrets::from_values(values)
    }

    /// A set of explicit values (values shorter than 8 characters are dropped).
    pub fn of(values: &[&str]) -> Secrets {
        Secrets::from_values(values.iter().map(|v| v.to_string()).collect())
    }

    fn from_values(mut values: Vec<String>) -> Secrets {
        values.retain(|v| v.chars().count() >= MIN_SECRET_CHARS);
        // Longest first, so a key that contains another is masked whole.
        values.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        values.dedup();
        Secrets(Arc::new(values))
    }

    /// Whether there is nothing to mask.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `text` with every known secret masked.
    pub fn mask(&self, text: &str) -> String {
        let mut out = text.to_string();
        for secret in self.0.iter() {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), &mask(secret));
            }
        }
        out
    }

    /// Bytes with every known secret masked (files that may not be UTF-8).
    pub fn mask_bytes(&self, bytes: &[u8]) -> Vec<u8> {
        if let Ok(text) = std::str::from_utf8(bytes) {
            return self.mask(text).into_bytes();
        }
        let mut out = bytes.to_vec();
        for secret in self.0.iter() {
            let needle = secret.as_bytes();
            let replacement = mask(secret).into_bytes();
            let mut masked = Vec::with_capacity(out.len());
            let mut rest = out.as_slice();
            while let Some((&first, after)) = rest.split_first() {
                if let Some(past) = rest.strip_prefix(needle) {
                    masked.extend_from_slice(&replacement);
                    rest = past;
                } else {
                    masked.push(first);
                    rest = after;
                }
            }
            out = masked;
        }
        out
    }

    /// Every string (and object key) in a JSON value masked, before it is serialised.
    pub fn mask_json(&self, value: &mut serde_json::Value) {
        if self.is_empty() {
            return;
        }
        match value {
            serde_json::Value::String(s)
                if self.0.iter().any(|secret| s.contains(secret.as_str())) =>
            {
                *s = self.mask(s);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(|v| self.mask_json(v)),
            serde_json::Value::Object(map) => {
                let entries = std::mem::take(map);
                for (key, mut v) in entries {
                    self.mask_json(&mut v);
                    map.insert(self.mask(&key), v);
                }
            }
            _ => {}
        }
    }

    /// A serialisable value as JSON text, masked on its raw strings.
    pub fn to_masked_json<T: serde::Serialize>(&self, value: &T) -> serde_json::Result<String> {
        let line = serde_json::to_string(value)?;
        if self.is_empty() {
            return Ok(line);
        }
        // JSON escapes character by character, so a raw secret inside a string shows up as its
        // escaped form: replacing that keeps the field order of the line as serialised.
        let mut out = line.clone();
        let mut replaced = false;
        for secret in self.0.iter() {
            let escaped = serde_json::to_string(secret)?;
            let escaped = unquoted(&escaped);
            if out.contains(escaped) {
                let masked = serde_json::to_string(&mask(secret))?;
                out = out.replace(escaped, unquoted(&masked));
                replaced = true;
            }
        }
        if !replaced {
            return Ok(out);
        }
        // A match that began inside an escape sequence (`\n` + "nabc…") would change other text
        // or break the line: the result must equal the value masked on its raw strings.
        let mut json = serde_json::to_value(value)?;
        self.mask_json(&mut json);
        match serde_json::from_str::<serde_json::Value>(&out) {
            Ok(parsed) if parsed == json => Ok(out),
            _ => serde_json::to_string(&json),
        }
    }

    /// A value with its strings masked (round trip through JSON); the value itself when nothing
    /// needs masking or the round trip fails.
    pub fn mask_serde<T>(&self, value: T) -> T
    where
        T: serde::Serialize + serde::de::DeserializeOwned,
    {
        if self.is_empty() {
            return value;
        }
        let Ok(mut json) = serde_json::to_value(&value) else {
            return value;
        };
        let before = json.clone();
        self.mask_json(&mut json);
        if json == before {
            return value;
        }
        serde_json::from_value(json).unwrap_or(value)
    }

    /// Length in bytes of the longest suffix of `text` that is a proper prefix of a secret.
    fn partial_tail(&self, text: &str) -> usize {
        let mut best = 0;
        for secret in self.0.iter() {
            let longest = secret.len().saturating_sub(1).min(text.len());
            for start in (text.len() - longest)..text.len() {
                if text.len() - start > best
                    && let Some(tail) = text.get(start..)
                    && secret.starts_with(tail)
                {
                    best = text.len() - start;
                    break;
                }
            }
        }
        best
    }

    /// Where a complete secret in `text` crosses `cut`, the start of that secret (else `cut`).
    fn cut_before_straddling(&self, text: &str, mut cut: usize) -> usize {
        loop {
            let mut moved = false;
            for secret in self.0.iter() {
                for (at, _) in text.match_indices(secret.as_str()) {
                    if at < cut && at + secret.len() > cut {
                        cut = at;
                        moved = true;
                    }
                }
            }
            if !moved {
                return cut;
            }
        }
    }
}

/// Masks a stream of text deltas: a secret split across pieces is still masked whole.
#[derive(Debug, Clone, Default)]
pub struct DeltaMasker {
    secrets: Secrets,
    pending: String,
}

impl DeltaMasker {
    /// A masker for these secrets.
    pub fn new(secrets: Secrets) -> DeltaMasker {
        DeltaMasker {
            secrets,
            pending: String::new(),
        }
    }

    /// Takes the next piece; returns the text that is safe to show now (possibly empty). A tail
    /// that could still grow into a secret is held back until the next piece or `finish`.
    pub fn push(&mut self, delta: &str) -> String {
        if self.secrets.is_empty() {
            return delta.to_string();
        }
        self.pending.push_str(delta);
        let hold = self.secrets.partial_tail(&self.pending);
        let cut = self
            .secrets
            .cut_before_straddling(&self.pending, self.pending.len() - hold);
        let rest = self.pending.split_off(cut);
        let ready = std::mem::replace(&mut self.pending, rest);
        self.secrets.mask(&ready)
    }

    /// Whether text is being held back.
    pub fn holding(&self) -> bool {
        !self.pending.is_empty()
    }

    /// The end of the stream: whatever was held back, masked.
    pub fn finish(&mut self) -> String {
        let rest = std::mem::take(&mut self.pending);
        self.secrets.mask(&rest)
    }
}

/// The masking stage of the agent's event sink: text and reasoning deltas through a
/// `DeltaMasker` each, every other event masked on its raw strings. Held-back text is released
/// before the next event of another kind, so the order of events never changes.
#[derive(Debug, Clone, Default)]
pub struct EventMasker {
    secrets: Secrets,
    text: DeltaMasker,
    reasoning: DeltaMasker,
}

impl EventMasker {
    /// A masker for these secrets.
    pub fn new(secrets: Secrets) -> EventMasker {
        EventMasker {
            text: DeltaMasker::new(secrets.clone()),
            reasoning: DeltaMasker::new(secrets.clone()),
            secrets,
        }
    }

    /// The events to send for `event`, masked: none while a delta is held back, the held-back
    /// text first when another kind of event arrives.
    pub fn filter(&mut self, event: AgentEvent) -> Vec<AgentEvent> {
        let mut out = Vec::new();
        match event {
            AgentEvent::TextDelta { text } => {
                self.flush_reasoning(&mut out);
                let text = self.text.push(&text);
                if !text.is_empty() {
                    out.push(AgentEvent::TextDelta { text });
                }
            }
            AgentEvent::ReasoningDelta { text } => {
                self.flush_text(&mut out);
                let text = self.reasoning.push(&text);
                if !text.is_empty() {
                    out.push(AgentEvent::ReasoningDelta { text });
                }
            }
            other => {
                self.flush_text(&mut out);
                self.flush_reasoning(&mut out);
                out.push(self.secrets.mask_serde(other));
            }
        }
        out
    }

    fn flush_text(&mut self, out: &mut Vec<AgentEvent>) {
        if self.text.holding() {
            out.push(AgentEvent::TextDelta {
                text: self.text.finish(),
            });
        }
    }

    fn flush_reasoning(&mut self, out: &mut Vec<AgentEvent>) {
        if self.reasoning.holding() {
            out.push(AgentEvent::ReasoningDelta {
                text: self.reasoning.finish(),
            });
        }
    }
}

/// Masks a stream of bytes (a command's output saved as it arrives, which need not be UTF-8): a
/// secret split across chunks is still masked whole. At most the longest secret's length less
/// one byte is held back until the next chunk or `finish`.
#[derive(Debug, Clone, Default)]
pub struct ByteMasker {
    secrets: Secrets,
    /// Bytes not yet released: the last chunk's tail, which may start a secret.
    carry: Vec<u8>,
    /// Whether a byte can start a secret.
    starts: Vec<bool>,
    /// The longest secret, in bytes.
    longest: usize,
}

impl ByteMasker {
    /// A masker for these secrets.
    pub fn new(secrets: Secrets) -> ByteMasker {
        let mut starts = vec![false; 256];
        for secret in secrets.0.iter() {
            if let Some(slot) = secret
                .bytes()
                .next()
                .and_then(|b| starts.get_mut(b as usize))
            {
                *slot = true;
            }
        }
        let longest = secrets.0.iter().map(String::len).max().unwrap_or(0);
        ByteMasker {
            secrets,
            carry: Vec::new(),
            starts,
            longest,
        }
    }

    /// Takes the next chunk; returns the bytes that are safe to write now, masked.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<u8> {
        if self.secrets.is_empty() {
            return chunk.to_vec();
        }
        self.carry.extend_from_slice(chunk);
        // A match starting before this point ends within what is held: it can be decided now.
        let boundary = self
            .carry
            .len()
            .saturating_sub(self.longest.saturating_sub(1));
        let (out, scanned) = self.scan(boundary);
        self.carry.drain(..scanned.min(self.carry.len()));
        out
    }

    /// The bytes still held back, masked: the end of the stream.
    pub fn finish(&mut self) -> Vec<u8> {
        let (out, _) = self.scan(self.carry.len());
        self.carry.clear();
        out
    }

    /// The held bytes up to `boundary` with every secret that starts before it masked (longest
    /// first), and how far the scan went (a secret may end past `boundary`).
    fn scan(&self, boundary: usize) -> (Vec<u8>, usize) {
        let mut out = Vec::with_capacity(boundary);
        let mut at = 0;
        while at < boundary {
            let rest = self.carry.get(at..boundary).unwrap_or_default();
            let Some(next) = rest
                .iter()
                .position(|b| self.starts.get(*b as usize).copied().unwrap_or(false))
            else {
                out.extend_from_slice(rest);
                at = boundary;
                break;
            };
            out.extend_from_slice(rest.get(..next).unwrap_or_default());
            at += next;
            let here = self.carry.get(at..).unwrap_or_default();
            match self
                .secrets
                .0
                .iter()
                .find(|s| here.starts_with(s.as_bytes()))
            {
                Some(secret) => {
                    out.extend_from_slice(mask(secret).as_bytes());
                    at += secret.len();
                }
                None => {
                    out.extend_from_slice(here.get(..1).unwrap_or_default());
                    at += 1;
                }
            }
        }
        (out, at)
    }
}

#[cfg(test)]
#[allow(clippy::string_slice)] // fixed ASCII fixtures, cut at known places
mod tests {
    use super::*;

    const KEY: &str = "sk-test-1234567890abcd";

    #[test]
    fn keys_are_masked_wherever_they_appear() {
        let env = Env::from_pairs([("OPENAI_API_KEY", KEY), ("HOME", "/root")]);
        let secrets = Secrets::from_env(&env);
        assert_eq!(
            secrets.mask("Incorrect API key provided: sk-test-1234567890abcd."),
            "Incorrect API key provided: sk-…abcd."
        );
        assert_eq!(secrets.mask("/root is fine"), "/root is fine");
        assert_eq!(mask("short"), "…");
    }

    #[test]
    fn wider_names_and_url_passwords_are_secrets_short_values_are_not() {
        let env = Env::from_pairs([
            ("MY_PRIVATE_KEY", "private-value-0001"),
            ("STRIPE_KEY", "stripe-value-0002"),
            ("GITHUB_PAT", "ghp_value_000000003"),
            ("DB_PASSWD", "passwd-value-0004"),
            ("AWS_CREDENTIALS", "credential-value-5"),
            (
                "DATABASE_URL",
                "postgres://admin:hunter2-is-long@db.example:5432/app",
            ),
            ("SHORT_TOKEN", "abc1234"),
            ("EDITOR", "vim-with-a-long-name"),
        ]);
        let secrets = Secrets::from_env(&env);
        for value in [
            "private-value-0001",
            "stripe-value-0002",
            "ghp_value_000000003",
            "passwd-value-0004",
            "credential-value-5",
            "hunter2-is-long",
        ] {
            let masked = secrets.mask(&format!("x {value} y"));
            assert!(!masked.contains(value), "{value} leaked: {masked}");
        }
        assert_eq!(secrets.mask("abc1234 stays"), "abc1234 stays");
        assert_eq!(
            secrets.mask("vim-with-a-long-name stays"),
            "vim-with-a-long-name stays"
        );
        assert!(
            !secrets
                .mask("postgres://admin:hunter2-is-long@db")
                .contains("admin:hunter2")
        );
    }

    #[test]
    fn values_with_quotes_and_backslashes_are_masked_before_serialisation() {
        let raw = r#"pa"ss\word-1234567"#;
        let secrets = Secrets::of(&[raw]);
        let event = AgentEvent::Notice {
            message: format!("the key is {raw}"),
        };
        let line = secrets.to_masked_json(&event).expect("json");
        assert!(!line.contains(r#"pa\"ss\\word-1234567"#), "{line}");
        assert!(line.contains("pa\\\"…4567"), "{line}");
        let masked = secrets.mask_serde(event);
        assert_eq!(
            masked,
            AgentEvent::Notice {
                message: format!("the key is {}", mask(raw))
            }
        );
    }

    #[test]
    fn a_secret_that_looks_like_the_tail_of_an_escape_never_breaks_a_line() {
        let secrets = Secrets::of(&["nabcdefgh12345"]);
        let event = AgentEvent::Notice {
            message: "line one\nabcdefgh12345 and nabcdefgh12345".into(),
        };
        let line = secrets.to_masked_json(&event).expect("json");
        let back: AgentEvent = serde_json::from_str(&line).expect("still JSON");
        assert_eq!(
            back,
            AgentEvent::Notice {
                message: "line one\nabcdefgh12345 and nab…2345".into()
            }
        );
    }

    /// Feeds `text` in pieces of `size` characters and returns what the masker lets out.
    fn stream(secrets: &Secrets, text: &str, size: usize) -> (Vec<String>, String) {
        let mut masker = DeltaMasker::new(secrets.clone());
        let chars: Vec<char> = text.chars().collect();
        let mut pieces = Vec::new();
        for chunk in chars.chunks(size) {
            pieces.push(masker.push(&chunk.iter().collect::<String>()));
        }
        pieces.push(masker.finish());
        let joined = pieces.concat();
        (pieces, joined)
    }

    #[test]
    fn a_key_split_across_deltas_is_masked_whole() {
        let secrets = Secrets::of(&[KEY]);
        let text = format!("Your key is {KEY}, keep it safe. {KEY}");
        for size in 1..=text.len() {
            let (pieces, joined) = stream(&secrets, &text, size);
            assert_eq!(
                joined,
                format!("Your key is {m}, keep it safe. {m}", m = mask(KEY)),
                "piece size {size}"
            );
            // No piece, nor any two neighbours, holds more than a proper prefix of the key.
            for pair in pieces.windows(2) {
                assert!(!pair.concat().contains(&KEY[..KEY.len() - 1]), "{pieces:?}");
            }
        }
    }

    #[test]
    fn text_without_secrets_is_not_held_back() {
        let secrets = Secrets::of(&[KEY]);
        let mut masker = DeltaMasker::new(secrets);
        assert_eq!(masker.push("hello world. "), "hello world. ");
        // "s" could start the key: held until the next piece says otherwise.
        assert_eq!(masker.push("this s"), "this ");
        assert_eq!(masker.push("hould go"), "should go");
        assert_eq!(masker.finish(), "");
    }

    #[test]
    fn overlapping_secrets_never_leave_a_straddling_part() {
        let secrets = Secrets::of(&["abcdefgh12", "gh12XYZW99"]);
        let (_, joined) = stream(&secrets, "..abcdefgh12XY and more", 3);
        assert!(!joined.contains("abcdef"), "{joined}");
    }

    #[test]
    fn the_event_masker_keeps_order_and_masks_every_event() {
        let mut masker = EventMasker::new(Secrets::of(&[KEY]));
        let mut out = Vec::new();
        for piece in KEY.as_bytes().chunks(7) {
            out.extend(masker.filter(AgentEvent::TextDelta {
                text: String::from_utf8_lossy(piece).to_string(),
            }));
        }
        out.extend(masker.filter(AgentEvent::ToolCall {
            id: "1".into(),
            name: "run_command".into(),
            args: serde_json::json!({"command": format!("echo {KEY}")}),
        }));
        let lines: Vec<String> = out
            .iter()
            .map(|e| serde_json::to_string(e).expect("json"))
            .collect();
        assert!(lines.iter().all(|l| !l.contains("1234567890")), "{lines:?}");
        assert_eq!(out[0], AgentEvent::TextDelta { text: mask(KEY) });
        assert!(matches!(out.last(), Some(AgentEvent::ToolCall { .. })));
    }

    #[test]
    fn non_utf8_bytes_are_masked_too() {
        let secrets = Secrets::of(&[KEY]);
        let mut bytes = vec![0xff, b' '];
        bytes.extend_from_slice(KEY.as_bytes());
        let masked = secrets.mask_bytes(&bytes);
        assert!(!masked.windows(KEY.len()).any(|w| w == KEY.as_bytes()));
    }

    #[test]
    fn a_byte_stream_is_masked_across_its_chunks() {
        let secrets = Secrets::of(&["sk-abcdefghijklmnop"]);
        let text = b"key=sk-abcdefghijklmnop and again sk-abcdefghijklmnop\xff end";
        for size in 1..text.len() {
            let mut masker = ByteMasker::new(secrets.clone());
            let mut out = Vec::new();
            for chunk in text.chunks(size) {
                out.extend(masker.push(chunk));
            }
            out.extend(masker.finish());
            assert_eq!(out, secrets.mask_bytes(text), "chunks of {size}");
        }
        let mut none = ByteMasker::new(Secrets::default());
        assert_eq!(none.push(b"plain"), b"plain");
        assert!(none.finish().is_empty());
    }
}
