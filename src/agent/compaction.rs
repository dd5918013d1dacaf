//! Microcompact: old tool results are shrunk in the request, never in the history.
//!
//! Mental model: the agent keeps every tool result whole; each request is *rendered* from the
//! history, and a result's form in it depends on its age (the number of assistant messages after
//! the one that asked for it). Under the `eager` and `batched` schedules a result of at least
//! 3,000 characters is whole for two requests, truncated to head + tail from its third, and
//! replaced by a one-line summary from its fifth (the original saved to the scratch directory,
//! its path in the line). Rendering
//! is deterministic (no counters, no fresh file names), so a compacted message keeps its bytes
//! until its next stage. Every stage change rewrites a message in the middle of the cached
//! prefix, so the `batched` schedule holds stage changes back until they pay for that rewrite
//! and for the re-reads they may cause (a cut result the model needs again costs a request).
//! Content inlined by `@` mentions (a `<mentions>` text block in a user turn) is compacted like
//! a tool result; its age counts from its own message and its id is a hash of its text.
//! The default `consumed` schedule avoids that rewrite altogether: each large result is placed
//! when it arrives (`placement`): kept whole, or shown whole once and sent as a pointer from the
//! next request on, before it was ever cached; the compactor then reports how many leading
//! messages are settled so the rolling cache marker goes before the result about to change.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::conversation::{ContentBlock, History, Message, Role};
use crate::tools::{Scratch, last_chars, take_chars};

pub mod knobs;
mod memo;
pub mod placement;
pub use memo::Memo;
use placement::Placement;

/// When compactions are applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Schedule {
    /// As soon as a result reaches a stage (the reference behaviour).
    Eager,
    /// Together, when the tokens they save pay for re-writing the cached suffix.
    Batched,
    /// Each large result placed when it arrives: kept, or whole once and then a pointer,
    /// never rewriting a cached message (`placement`).
    #[default]
    Consumed,
}

/// The microcompact settings (`CHATCLI_MICROCOMPACT_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// `CHATCLI_MICROCOMPACT=off` sends every result whole (the context guard still acts).
    pub enabled: bool,
    pub min_content: usize,
    pub truncate_turns: usize,
    pub summarize_turns: usize,
    pub head_chars: usize,
    pub tail_chars: usize,
    pub schedule: Schedule,
    /// Results shorter than this (characters) stay whole under `consumed`:
    /// `placement::CONSUME_MIN_CHARS`, or `CHATCLI_MICROCOMPACT_MIN_CONTENT` when it is set.
    pub consume_min_chars: usize,
    /// Which of `knobs::STAGE_KNOBS` the user set (for the notice naming an unused one).
    pub stage_knobs_set: [bool; 4],
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            enabled: true,
            min_content: 3000,
            truncate_turns: 2,
            summarize_turns: 4,
            head_chars: 2000,
            tail_chars: 500,
            // `chatcli bench` measures consumed at or below batched, eager and "off" on every
            // scenario (`docs/benchmark.md`), so it is the default.
            schedule: Schedule::Consumed,
            consume_min_chars: placement::CONSUME_MIN_CHARS,
            stage_knobs_set: [false; 4],
        }
    }
}

/// How far a result is compacted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    Whole,
    Truncated,
    Summary,
}

/// Bounds of the requests the `batched` schedule expects still to come: as many as the session
/// has made so far (a session that ran `t` requests is likely to run about `t` more), within these.
pub const MIN_REMAINING_TURNS: u64 = 2;
pub const MAX_REMAINING_TURNS: u64 = 6;
/// Chance that a result cut from the request is needed again and re-read (one more request).
pub const REREAD_SHARE: f64 = 0.5;
/// Tokens a ranged re-read brings back.
pub const REREAD_TOKENS: u64 = 400;
/// Above this share of the context window, `batched` applies what is pending at once.
pub const BATCH_PRESSURE: f64 = 0.60;

/// Prices relative to plain input, for weighing a rewrite (Anthropic's by default).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CacheEconomics {
    pub read: f64,
    pub write: f64,
}

impl Default for CacheEconomics {
    fn default() -> Self {
        CacheEconomics {
            read: 0.1,
            write: 1.25,
        }
    }
}

/// What the compactor needs to know about the next request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pressure {
    /// Share of the context window the last request used (0 when unknown).
    pub context_share: f64,
    pub economics: CacheEconomics,
}

/// Renders histories into requests, remembering which stage each result was sent at.
#[derive(Debug, Clone, Default)]
pub struct Compactor {
    pub settings: Settings,
    applied: HashMap<String, Stage>,
    /// Force every eligible result to its summary (the context guard's first stage).
    force_summary: bool,
    /// The `consumed` schedule's decision for each result, made when it arrived.
    placements: HashMap<String, Placement>,
    /// Leading messages of the last render that the next one sends unchanged.
    settled: Option<usize>,
    /// What each message of the last history rendered came to, kept under its stamp.
    memo: Memo,
}

/// A pending decision of the batched schedule, for tests and logs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BatchDecision {
    pub apply: bool,
    pub saved_per_turn: u64,
    pub rewrite_tokens: u64,
}

impl Compactor {
    /// A compactor with these settings.
    pub fn new(settings: Settings) -> Self {
        Compactor {
            settings,
            applied: HashMap::new(),
            force_summary: false,
            placements: HashMap::new(),
            settled: None,
            memo: Memo::default(),
        }
    }

    /// What the last render's messages came to: their ledger blocks and serialised sizes.
    pub fn rendered(&self) -> &Memo {
        &self.memo
    }

    /// How many leading messages of the last render the next request sends unchanged (`None`:
    /// all of them, or not known); the rolling cache marker belongs on the last of them.
    pub fn settled(&self) -> Option<usize> {
        self.settled
    }

    /// The `consumed` schedule's decision for a result, if one was made.
    pub fn placement(&self, id: &str) -> Option<&Placement> {
        self.placements.get(id)
    }

    /// From now on every eligible old result is sent as its summary line.
    pub fn force_summaries(&mut self) {
        self.force_summary = true;
    }

    /// The stage a result should be at for its age.
    pub fn target(&self, age: usize, chars: usize) -> Stage {
        if chars < self.settings.min_content || (!self.settings.enabled && !self.force_summary) {
            return Stage::Whole;
        }
        if (self.force_summary && age >= 1) || age >= self.settings.summarize_turns {
            Stage::Summary
        } else if age >= self.settings.truncate_turns {
            Stage::Truncated
        } else {
            Stage::Whole
        }
    }

    /// The messages to send for `history`, compacted; `scratch` keeps originals of summaries.
    /// A plain list of messages has no stamps: every message is read again
    /// (`render_history` is what the agent calls).
    pub fn render(
        &mut self,
        history: &[Message],
        scratch: &Scratch,
        pressure: Pressure,
    ) -> Vec<Arc<Message>> {
        self.render_history(&History::from(history.to_vec()), scratch, pressure)
    }

    /// The messages to send for `history`, compacted. Only messages that are new or changed
    /// since the last render, or whose results changed form, are read and serialised again;
    /// their sizes and ledger blocks are then in `rendered()`.
    pub fn render_history(
        &mut self,
        history: &History,
        scratch: &Scratch,
        pressure: Pressure,
    ) -> Vec<Arc<Message>> {
        let mut memo = std::mem::take(&mut self.memo);
        memo.refresh(history);
        let apply_now = match self.settings.schedule {
            Schedule::Eager => true,
            Schedule::Batched => {
                let ages = memo.ages();
                let targets = self.targets(&ages);
                self.batch_decision(history, &targets, pressure).apply || self.force_summary
            }
            // Only the context guard moves stages; placements do the rest.
            Schedule::Consumed => self.force_summary,
        };
        self.settled = None;
        if self.settings.schedule == Schedule::Consumed {
            self.recall_placements(&mut memo);
            if self.settings.enabled {
                self.place_arrivals(history, &mut memo, scratch, pressure);
            }
        }
        if apply_now {
            self.apply_targets(&memo);
        }
        let out = self.render_with(&mut memo, history, scratch);
        self.memo = memo;
        out
    }

    /// The stage each result should be at for its age.
    fn targets<'a>(&self, ages: &'a HashMap<String, (usize, usize)>) -> HashMap<&'a str, Stage> {
        ages.iter()
            .map(|(id, (age, chars))| (id.as_str(), self.target(*age, *chars)))
            .collect()
    }

    fn form(&self, id: &str, content: &str, scratch: &Scratch) -> String {
        match self.applied.get(id).copied().unwrap_or(Stage::Whole) {
            Stage::Whole => content.to_string(),
            Stage::Truncated => {
                truncate(content, self.settings.head_chars, self.settings.tail_chars)
            }
            Stage::Summary => {
                let saved = scratch.save_fixed(
                    &format!("toolresult_{}.txt", safe_name(id)),
                    content.as_bytes(),
                );
                let line = summary_line(
                    content,
                    saved.ok().map(|p| p.display().to_string()).as_deref(),
                );
                if id.starts_with(MENTIONS_ID) {
                    line.replacen("Old tool result", "Old @ mention content", 1)
                } else {
                    line
                }
            }
        }
    }

    /// Whether the batched schedule applies its pending stage changes now.
    pub fn batch_decision(
        &self,
        history: &[Message],
        targets: &HashMap<&str, Stage>,
        pressure: Pressure,
    ) -> BatchDecision {
        let mut saved_per_turn = 0u64;
        let mut changed = 0u64;
        let mut first_changed: Option<usize> = None;
        for (index, message) in history.iter().enumerate() {
            for (id, content) in compactable(message) {
                let target = targets.get(id.as_str()).copied().unwrap_or(Stage::Whole);
                let applied = self.applied.get(&id).copied().unwrap_or(Stage::Whole);
                if target <= applied {
                    continue;
                }
                let now = self.tokens_at(content, applied);
                let then = self.tokens_at(content, target);
                saved_per_turn += now.saturating_sub(then);
                changed += 1;
                first_changed.get_or_insert(index);
            }
        }
        let Some(first) = first_changed else {
            return BatchDecision {
                apply: false,
                saved_per_turn: 0,
                rewrite_tokens: 0,
            };
        };
        // Everything from the first rewritten message on is written to the cache again.
        let tokens =
            |m: &Message| crate::tokens::rough(serde_json::to_vec(m).map(|b| b.len()).unwrap_or(0));
        let rewrite_tokens: u64 = history[first..]
            .iter()
            .map(tokens)
            .sum::<u64>()
            .saturating_sub(saved_per_turn);
        let context_tokens: u64 = history.iter().map(tokens).sum();
        let requests = history.iter().filter(|m| m.role == Role::Assistant).count() as u64;
        let remaining = requests.clamp(MIN_REMAINING_TURNS, MAX_REMAINING_TURNS);
        let e = pressure.economics;
        let gain = saved_per_turn as f64 * remaining as f64 * e.read;
        let rewrite = rewrite_tokens as f64 * (e.write - e.read);
        // What was cut may be needed again: one more request reading the whole context from
        // the cache and writing what it brings back.
        let rereads = changed as f64
            * REREAD_SHARE
            * (context_tokens as f64 * e.read + REREAD_TOKENS as f64 * e.write);
        BatchDecision {
            apply: gain > rewrite + rereads || pressure.context_share > BATCH_PRESSURE,
            saved_per_turn,
            rewrite_tokens,
        }
    }

    fn tokens_at(&self, content: &str, stage: Stage) -> u64 {
        let chars = match stage {
            Stage::Whole => content.chars().count(),
            Stage::Truncated => {
                truncate(content, self.settings.head_chars, self.settings.tail_chars)
                    .chars()
                    .count()
            }
            Stage::Summary => 120,
        };
        crate::tokens::rough(chars)
    }
}

/// Prefix of the id microcompact gives a block of `@` mention content.
const MENTIONS_ID: &str = "mentions-";

/// The id of a user text block that carries `@` mention content, else `None`.
fn mentions_id(text: &str) -> Option<String> {
    if !text.starts_with(crate::prompt::mentions::OPEN_TAG) {
        return None;
    }
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    Some(format!("{MENTIONS_ID}{:016x}", hasher.finish()))
}

/// The blocks of a message microcompact may shrink, as (id, text): tool results, and `@`
/// mention content in a user turn.
fn compactable(message: &Message) -> Vec<(String, &str)> {
    message
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                ..
            } => Some((tool_use_id.clone(), content.as_str())),
            ContentBlock::Text { text } if message.role == Role::User => {
                mentions_id(text).map(|id| (id, text.as_str()))
            }
            _ => None,
        })
        .collect()
}

/// For every tool result (and `@` mention block) in `history`: its age and its size in
/// characters.
///
/// The age of a result is the number of assistant messages after the one that asked for it;
/// the age of mention content, the number after its own message.
pub fn result_ages(history: &[Message]) -> HashMap<String, (usize, usize)> {
    let history = History::from(history.to_vec());
    let mut memo = Memo::default();
    memo.refresh(&history);
    memo.ages()
}

/// Head and tail of `text` with a marker between, cut at nearby line boundaries (characters).
pub fn truncate(text: &str, head: usize, tail: usize) -> String {
    let total = text.chars().count();
    let slack = 200.max((head + tail) / 10);
    if total <= head + tail + slack {
        return text.to_string();
    }
    let (mut first, _) = take_chars(text, head);
    // A line break in the last fifth of the head is a better place to cut.
    if let Some((before, _)) = first.rsplit_once('\n')
        && before.chars().count() >= head * 4 / 5
    {
        // `before` and the one-byte line break after it.
        first = first.get(..=before.len()).unwrap_or(first);
    }
    let mut last = last_chars(text, tail);
    if let Some((before, after)) = last.split_once('\n')
        && before.chars().count() <= tail / 5
    {
        last = after;
    }
    let omitted = total - first.chars().count() - last.chars().count();
    let sep_before = if first.ends_with('\n') { "" } else { "\n" };
    format!("{first}{sep_before}[... {omitted} chars omitted from old tool result ...]\n{last}")
}

/// `[Old tool result cleared — L lines, C chars, KIND]`, with where the original is when saved.
pub fn summary_line(text: &str, saved: Option<&str>) -> String {
    let lines = text.lines().count();
    let chars = text.chars().count();
    let kind = guess_kind(text);
    match saved {
        Some(path) => format!(
            "[Old tool result cleared — {lines} lines, {chars} chars, {kind}; full text: {path}]"
        ),
        None => format!("[Old tool result cleared — {lines} lines, {chars} chars, {kind}]"),
    }
}

/// What a tool result holds, by its look.
pub fn guess_kind(text: &str) -> &'static str {
    let trimmed = text.trim_start();
    if (trimmed.starts_with('{') || trimmed.starts_with('['))
        && serde_json::from_str::<serde_json::Value>(trimmed).is_ok()
    {
        return "JSON";
    }
    let has = |needles: &[&str]| needles.iter().any(|n| text.contains(n));
    if has(&["diff --git", "\n@@ ", "\n+++ b/"]) {
        return "diff";
    }
    let log_lines = text
        .lines()
        .filter(|l| {
            let word = l.split_whitespace().next().unwrap_or_default();
            (word.len() >= 7 && word.len() <= 12 && word.chars().all(|c| c.is_ascii_hexdigit()))
                || l.starts_with("commit ")
        })
        .count();
    if log_lines * 2 > text.lines().count().max(1) {
        return "git log";
    }
    if has(&["fn ", "impl ", "let mut ", "pub struct ", "use std::"]) {
        return "Rust source";
    }
    if has(&["func ", "package main", ":= "]) {
        return "Go source";
    }
    if has(&["def ", "import ", "self."]) && has(&[":\n", "):"]) {
        return "Python source";
    }
    if has(&["function ", "const ", "=> {", "require(", "export "]) {
        return "JS source";
    }
    "text"
}

fn safe_name(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn truncation_golden() {
        let text: String = (1..=400).map(|i| format!("line {i:03}\n")).collect();
        let out = truncate(&text, 200, 50);
        assert_eq!(
            out,
            format!(
                "{}[... {} chars omitted from old tool result ...]\n{}",
                (1..=22)
                    .map(|i| format!("line {i:03}\n"))
                    .collect::<String>(),
                3600 - 198 - 45,
                (396..=400)
                    .map(|i| format!("line {i:03}\n"))
                    .collect::<String>(),
            )
        );
    }

    #[test]
    fn mention_content_ages_like_a_tool_result() {
        let dir = tempfile::tempdir().expect("tempdir");
        let scratch = Scratch::private(dir.path().to_path_buf());
        let inlined = format!("<mentions>\n{}</mentions>", "1  fn x() {}\n".repeat(400));
        let mut history = vec![Message {
            role: Role::User,
            content: vec![
                ContentBlock::Text {
                    text: "explain".into(),
                },
                ContentBlock::Text {
                    text: inlined.clone(),
                },
            ],
        }];
        let eager = Settings {
            schedule: Schedule::Eager,
            ..Settings::default()
        };
        let pressure = Pressure {
            context_share: 0.0,
            economics: CacheEconomics::default(),
        };
        let mut sent = Vec::new();
        for turn in 0..5 {
            let mut compactor = Compactor::new(eager);
            let rendered = compactor.render(&history, &scratch, pressure);
            sent.push(rendered[0].content[1].clone());
            assert_eq!(
                rendered[0].content[0], history[0].content[0],
                "the prompt itself is never touched"
            );
            history.push(Message {
                role: Role::Assistant,
                content: vec![ContentBlock::Text {
                    text: format!("answer {turn}"),
                }],
            });
            history.push(Message::user_text(format!("next {turn}")));
        }
        let text = |b: &ContentBlock| match b {
            ContentBlock::Text { text } => text.clone(),
            _ => String::new(),
        };
        assert_eq!(text(&sent[1]), inlined, "whole while young");
        assert!(
            text(&sent[2]).contains("chars omitted"),
            "{}",
            text(&sent[2])
        );
        assert!(
            text(&sent[4]).starts_with("[Old @ mention content cleared — 402 lines"),
            "{}",
            text(&sent[4])
        );
        assert_eq!(history[0].content[1], ContentBlock::Text { text: inlined });
    }

    #[test]
    fn truncation_is_a_no_op_when_barely_longer_and_respects_characters() {
        let text = "x".repeat(2600);
        assert_eq!(truncate(&text, 2000, 500), text);
        let multi = "é".repeat(5000);
        let out = truncate(&multi, 2000, 500);
        assert!(out.starts_with(&"é".repeat(2000)));
        assert!(out.contains("[... 2500 chars omitted from old tool result ...]"));
        assert!(out.ends_with(&"é".repeat(500)));
    }

    #[test]
    fn summary_golden_and_kinds() {
        assert_eq!(
            summary_line("a\nb\nc", None),
            "[Old tool result cleared — 3 lines, 5 chars, text]"
        );
        assert_eq!(
            summary_line("fn main() {}\n", Some("/s/toolresult_1.txt")),
            "[Old tool result cleared — 1 lines, 13 chars, Rust source; full text: /s/toolresult_1.txt]"
        );
        assert_eq!(guess_kind(&json!({"a": [1, 2]}).to_string()), "JSON");
        assert_eq!(
            guess_kind("diff --git a/x b/x\n@@ -1 +1 @@\n-a\n+b\n"),
            "diff"
        );
        assert_eq!(
            guess_kind("abc1234 2026-01-01 A: fix\nbcd2345 2026-01-01 B: add\n"),
            "git log"
        );
        assert_eq!(guess_kind("package main\nfunc main() {}\n"), "Go source");
        assert_eq!(guess_kind("def f(x):\n    return x\n"), "Python source");
        assert_eq!(guess_kind("const a = () => {\n};\n"), "JS source");
    }

    fn call(id: &str) -> Message {
        Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: id.into(),
                name: "read_file".into(),
                input: json!({}),
            }],
        }
    }

    fn result(id: &str, content: &str) -> Message {
        Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: id.into(),
                content: content.into(),
                is_error: false,
            }],
        }
    }

    #[test]
    fn age_is_assistant_messages_after_the_call() {
        let history = vec![
            Message::user_text("go"),
            call("a"),
            result("a", "x"),
            call("b"),
            result("b", "y"),
            call("c"),
            result("c", "z"),
        ];
        let ages = result_ages(&history);
        assert_eq!(ages["a"].0, 2);
        assert_eq!(ages["b"].0, 1);
        assert_eq!(ages["c"].0, 0);
    }

    #[test]
    fn custom_thresholds_move_the_stages() {
        let c = Compactor::new(Settings {
            min_content: 10,
            truncate_turns: 1,
            summarize_turns: 3,
            ..Settings::default()
        });
        assert_eq!(c.target(0, 100), Stage::Whole);
        assert_eq!(c.target(1, 100), Stage::Truncated);
        assert_eq!(c.target(3, 100), Stage::Summary);
        assert_eq!(
            c.target(9, 5),
            Stage::Whole,
            "small results are never candidates"
        );
    }

    #[test]
    fn rendering_is_deterministic() {
        let dir = tempfile::tempdir().expect("tempdir");
        let scratch = Scratch::private(dir.path().to_path_buf());
        let big = "fn x() {}\n".repeat(600);
        let history = vec![
            Message::user_text("go"),
            call("a"),
            result("a", &big),
            call("b"),
            result("b", &big),
            call("c"),
            result("c", "small"),
            call("d"),
            result("d", "small"),
            call("e"),
            result("e", "small"),
        ];
        let pressure = Pressure {
            context_share: 0.0,
            economics: CacheEconomics::default(),
        };
        let eager = Settings {
            schedule: Schedule::Eager,
            ..Settings::default()
        };
        let mut one = Compactor::new(eager);
        let mut two = Compactor::new(eager);
        let a = one.render(&history, &scratch, pressure);
        let b = two.render(&history, &scratch, pressure);
        assert_eq!(
            serde_json::to_string(&a).ok(),
            serde_json::to_string(&b).ok()
        );
        assert_eq!(
            a,
            one.render(&history, &scratch, pressure),
            "rendering again changes nothing"
        );
        let text = |m: &Message| match &m.content[0] {
            ContentBlock::ToolResult { content, .. } => content.clone(),
            _ => String::new(),
        };
        assert!(text(&a[2]).starts_with(
            "[Old tool result cleared — 600 lines, 6000 chars, Rust source; full text: "
        ));
        assert!(text(&a[4]).contains("chars omitted from old tool result"));
        assert_eq!(
            history[2],
            result("a", &big),
            "the history itself is never changed"
        );
    }

    fn decide(c: &Compactor, history: &[Message], share: f64) -> BatchDecision {
        let ages = result_ages(history);
        let targets: HashMap<&str, Stage> = ages
            .iter()
            .map(|(id, (age, n))| (id.as_str(), c.target(*age, *n)))
            .collect();
        let pressure = Pressure {
            context_share: share,
            economics: CacheEconomics::default(),
        };
        c.batch_decision(history, &targets, pressure)
    }

    /// `before` small results, then a big one, then two small ones (the big one is due).
    fn session(before: usize) -> Vec<Message> {
        let mut history = vec![Message::user_text("go")];
        for i in 0..before {
            history.push(call(&format!("p{i}")));
            history.push(result(&format!("p{i}"), &"small ".repeat(200)));
        }
        history.push(call("a"));
        history.push(result("a", &"word ".repeat(6000)));
        for i in 0..2 {
            history.push(call(&format!("s{i}")));
            history.push(result(&format!("s{i}"), "small"));
        }
        history
    }

    #[test]
    fn the_batched_schedule_waits_until_the_saving_pays_for_the_rewrite_and_the_rereads() {
        let c = Compactor::new(Settings {
            schedule: Schedule::Batched,
            ..Settings::default()
        });
        let history = session(4);
        let decision = decide(&c, &history, 0.1);
        // 30,000 chars cut to ~2,500: thousands of tokens saved on each of the next requests.
        assert!(decision.saved_per_turn > 4000, "{decision:?}");
        assert!(decision.apply, "{decision:?}");
        // The same saving behind a long suffix to rewrite does not pay.
        let mut long = history.clone();
        for i in 0..40 {
            long.push(call(&format!("t{i}")));
            long.push(result(&format!("t{i}"), &"small ".repeat(200)));
        }
        let decision = decide(&c, &long, 0.1);
        assert!(!decision.apply, "{decision:?}");
        assert!(
            decide(&c, &long, 0.7).apply,
            "over 60% of the window it applies"
        );
        // A short suffix, but a context so large that re-reading the cut result once costs
        // more than the cut saves: the rewrite alone would pay, the expected re-read does not.
        let big = session(300);
        let decision = decide(&c, &big, 0.1);
        let e = CacheEconomics::default();
        assert!(
            decision.saved_per_turn as f64 * MAX_REMAINING_TURNS as f64 * e.read
                > decision.rewrite_tokens as f64 * (e.write - e.read),
            "{decision:?}"
        );
        assert!(!decision.apply, "{decision:?}");
    }

    #[test]
    fn microcompact_off_sends_every_result_whole_until_the_context_guard_acts() {
        let mut c = Compactor::new(Settings {
            enabled: false,
            schedule: Schedule::Eager,
            ..Settings::default()
        });
        assert_eq!(c.target(9, 100_000), Stage::Whole);
        c.force_summaries();
        assert_eq!(c.target(1, 100_000), Stage::Summary, "the guard still acts");
    }
}
