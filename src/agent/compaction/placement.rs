//! Where a tool result lives, decided once when it arrives: whole for good (`Keep`), or whole
//! for the one request that shows it to the model and a pointer from then on (`Consume`).
//!
//! Mental model: a result the model has read once costs, if it stays, the cache-write premium
//! once plus a cache read on every later request; if it becomes a pointer before it is ever
//! cached (the rolling cache marker sits *before* it, see `ModelRequest::settled_messages`), it
//! costs its bytes once at the plain input price, and a later need of it costs one ranged
//! re-read. The comparison uses the size of the result, the context it would be re-read with,
//! the provider's cache prices and the requests still expected. A result is only consumed when
//! its content stays reachable: the original is saved to the scratch directory (and a file read
//! names the workspace file as well), so the pointer always says where to read it again. The
//! one thing a newcomer would get wrong: changing a result *after* it was cached rewrites every
//! message behind it; consuming it at age 1, while it is the tail, rewrites nothing cached.

use super::memo::Part;
use super::{
    CacheEconomics, Compactor, Memo, Pressure, REREAD_SHARE, REREAD_TOKENS, Schedule, Stage,
    compactable, guess_kind, safe_name,
};
use crate::conversation::Message;
use crate::tokens::rough;
use crate::tools::{Scratch, last_chars};

/// What happens to a result after the request that first shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// Whole in every request (small, or cheaper kept than re-read).
    Keep,
    /// Whole once, then this pointer (its original is at the path it names).
    Consume { pointer: String },
}

/// Tokens a pointer line costs (it stays in every later request).
pub const POINTER_TOKENS: u64 = 60;
/// Results shorter than this (characters) are always kept: a pointer saves too little
/// (`Settings::consume_min_chars`; `CHATCLI_MICROCOMPACT_MIN_CONTENT` replaces it when set).
pub const CONSUME_MIN_CHARS: usize = 1_000;
/// Requests expected after a result arrives: as many as the session has made so far, within
/// these bounds (sessions of 10–30 requests are what the schedule is built for; `chatcli bench`
/// measured a floor of 2, as `batched` uses, at 1–11% dearer on `long` and the peer sessions).
pub const MIN_HORIZON: u64 = 10;
/// The most requests a decision expects to come.
pub const MAX_HORIZON: u64 = 30;
/// Lines of a command's output a pointer keeps: its verdict is at the end.
pub const COMMAND_TAIL_LINES: usize = 3;
/// Characters of those lines a pointer keeps at most.
pub const COMMAND_TAIL_CHARS: usize = 300;

/// What a decision is made from, at the result's arrival.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Arrival {
    /// Tokens of the result, whole.
    pub tokens: u64,
    /// Tokens of the context a re-read request would carry.
    pub context_tokens: u64,
    /// Requests still expected after the one that shows the result.
    pub horizon: u64,
    /// The provider's cache prices, relative to plain input.
    pub economics: CacheEconomics,
}

impl Arrival {
    /// Expected cost of keeping the result whole, in input-token equivalents: the cache-write
    /// premium once, then a cache read per request to come.
    pub fn keep_cost(&self) -> f64 {
        let e = self.economics;
        self.tokens as f64 * ((e.write - 1.0).max(0.0) + e.read * self.horizon as f64)
    }

    /// Expected cost of consuming it: the pointer kept instead, and with `REREAD_SHARE` one
    /// more request that reads the context from the cache and brings a range back.
    pub fn consume_cost(&self) -> f64 {
        let e = self.economics;
        let pointer =
            POINTER_TOKENS as f64 * ((e.write - 1.0).max(0.0) + e.read * self.horizon as f64);
        pointer
            + REREAD_SHARE * (self.context_tokens as f64 * e.read + REREAD_TOKENS as f64 * e.write)
    }

    /// Whether consuming is cheaper than keeping.
    pub fn consume_pays(&self) -> bool {
        self.consume_cost() < self.keep_cost()
    }
}

/// The pointer a consumed result becomes: what it was, where to read it again, and for a
/// command's output its last lines (the verdict). `saved` is the scratch copy of the result.
pub fn pointer(tool: &str, args: &serde_json::Value, content: &str, saved: &str) -> String {
    let lines = content.lines().count();
    let chars = content.chars().count();
    match tool {
        "read_file" => {
            let file = args["file"].as_str().unwrap_or("the file");
            let range = match (args["start"].as_u64(), args["end"].as_u64()) {
                (Some(s), Some(e)) => format!(" lines {s}-{e}"),
                (Some(s), None) => format!(" from line {s}"),
                _ => String::new(),
            };
            format!(
                "[read_file {file}{range}: {lines} lines, {chars} chars, cleared after use; \
                 read_file {file} with start/end to see lines again (as shown: {saved})]"
            )
        }
        "run_command" | "git" => {
            let mut tail: Vec<&str> = content.lines().rev().take(COMMAND_TAIL_LINES).collect();
            tail.reverse();
            let joined = tail.join("\n");
            let tail = last_chars(&joined, COMMAND_TAIL_CHARS);
            format!(
                "[{tool} output: {lines} lines, {chars} chars, cleared after use; full text: {saved}; it ended:\n{tail}]"
            )
        }
        _ => format!(
            "[{tool} result: {lines} lines, {chars} chars, {}, cleared after use; full text: {saved}]",
            guess_kind(content)
        ),
    }
}

impl Compactor {
    /// Parts not placed yet take the placement their id already has: a message read again
    /// (a prompt merged into it) keeps its results' placements.
    pub(super) fn recall_placements(&self, memo: &mut Memo) {
        for entry in &mut memo.entries {
            for part in entry.parts.iter_mut().filter(|p| p.consumed.is_none()) {
                part.consumed = self.placements.get(&part.id).map(is_consumed);
            }
        }
    }

    /// Decides the placement of every result that has none yet, and which leading messages
    /// are settled: all before the first one holding a consumed result still shown whole.
    pub(super) fn place_arrivals(
        &mut self,
        history: &[Message],
        memo: &mut Memo,
        scratch: &Scratch,
        pressure: Pressure,
    ) {
        if memo.parts().any(|p| p.consumed.is_none()) {
            self.place_new(history, memo, scratch, pressure);
        }
        let fresh_consumed = |p: &Part| p.consumed == Some(true) && p.age(memo.assistants) == 0;
        self.settled = memo
            .entries
            .iter()
            .position(|e| e.parts.iter().any(fresh_consumed));
    }

    /// Decides the placement of every result that has none yet. The context a re-read would
    /// carry is the history's tokens with consumed results counted as their pointers.
    fn place_new(
        &mut self,
        history: &[Message],
        memo: &mut Memo,
        scratch: &Scratch,
        pressure: Pressure,
    ) {
        let consumed: u64 = memo
            .parts()
            .filter(|p| p.consumed == Some(true))
            .map(|p| rough(p.bytes))
            .sum();
        let context_tokens = memo
            .entries
            .iter()
            .map(|e| e.tokens)
            .sum::<u64>()
            .saturating_sub(consumed);
        let horizon = (memo.assistants as u64).clamp(MIN_HORIZON, MAX_HORIZON);
        for (message, entry) in history.iter().zip(&mut memo.entries) {
            if entry.parts.iter().all(|p| p.consumed.is_some()) {
                continue;
            }
            for (id, content) in compactable(message) {
                let Some(part) = entry
                    .parts
                    .iter_mut()
                    .find(|p| p.id == id && p.consumed.is_none())
                else {
                    continue;
                };
                // Placed already under another message's copy of the id.
                if let Some(placed) = self.placements.get(&id) {
                    part.consumed = Some(is_consumed(placed));
                    continue;
                }
                let arrival = Arrival {
                    tokens: rough(content.len()),
                    context_tokens,
                    horizon,
                    economics: pressure.economics,
                };
                let placement = self.place(history, part, content, arrival, scratch);
                part.consumed = Some(is_consumed(&placement));
                self.placements.insert(id, placement);
            }
        }
    }

    /// The placement of `part`, whose text is `content`, arriving as `arrival`.
    fn place(
        &self,
        history: &[Message],
        part: &Part,
        content: &str,
        arrival: Arrival,
        scratch: &Scratch,
    ) -> Placement {
        if part.chars < self.settings.consume_min_chars || !arrival.consume_pays() {
            return Placement::Keep;
        }
        let null = serde_json::Value::Null;
        let (tool, args) = part
            .asked_at
            .and_then(|at| history.get(at))
            .and_then(|m| m.tool_uses().find(|(call, _, _)| *call == part.id))
            .map_or(("@ mention", &null), |(_, name, input)| (name, input));
        // Consumed only when the original is on disk: the pointer must lead to it.
        match scratch.save_fixed(
            &format!("toolresult_{}.txt", safe_name(&part.id)),
            content.as_bytes(),
        ) {
            Ok(path) => Placement::Consume {
                pointer: pointer(tool, args, content, &path.display().to_string()),
            },
            Err(_) => Placement::Keep,
        }
    }

    /// The form of a result in this render, by its stage or its placement and `age`.
    pub(super) fn form_at(&self, id: &str, content: &str, scratch: &Scratch, age: usize) -> String {
        let stage = self.applied.get(id).copied().unwrap_or(Stage::Whole);
        if stage == Stage::Whole
            && self.settings.schedule == Schedule::Consumed
            && let Some(Placement::Consume { pointer }) = self.placements.get(id)
            && age >= 1
        {
            return pointer.clone();
        }
        self.form(id, content, scratch)
    }
}

/// Whether a placement is `Consume`.
fn is_consumed(placement: &Placement) -> bool {
    matches!(placement, Placement::Consume { .. })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::compaction::Settings;
    use crate::conversation::{ContentBlock, Role};
    use serde_json::json;

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

    fn read_call(id: &str, file: &str) -> Message {
        Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: id.into(),
                name: "read_file".into(),
                input: json!({ "file": file }),
            }],
        }
    }

    #[test]
    fn the_consumed_schedule_shows_a_large_result_once_and_settles_what_comes_before() {
        let dir = tempfile::tempdir().expect("tempdir");
        let scratch = Scratch::private(dir.path().join("scratch"));
        let pressure = Pressure {
            context_share: 0.0,
            economics: CacheEconomics::default(),
        };
        let big = "fn x() {}\n".repeat(600);
        let mut history = vec![
            Message::user_text("go"),
            read_call("a", "src/a.rs"),
            result("a", &big),
        ];
        let mut c = Compactor::new(Settings::default());
        let first = c.render(&history, &scratch, pressure);
        assert_eq!(
            *first[2], history[2],
            "whole while the model has not seen it"
        );
        assert_eq!(c.settled(), Some(2), "the marker goes before it");
        history.push(read_call("b", "src/b.rs"));
        history.push(result("b", "small"));
        let second = c.render(&history, &scratch, pressure);
        let ContentBlock::ToolResult { content, .. } = &second[2].content[0] else {
            panic!("a result")
        };
        assert!(
            content.starts_with("[read_file src/a.rs: 600 lines, 6000 chars")
                && content.contains("read_file src/a.rs with start/end"),
            "{content}"
        );
        assert_eq!(c.settled(), None, "every message is settled");
        assert_eq!(*second[4], history[4], "small results stay whole");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("scratch/toolresult_a.txt")).ok(),
            Some(big.clone())
        );
        assert_eq!(
            c.render(&history, &scratch, pressure),
            second,
            "rendering again changes nothing"
        );
        // When the original cannot be saved, nothing would lead back to it: kept whole.
        let blocked = dir.path().join("file");
        std::fs::write(&blocked, "x").expect("write");
        let unsaved = Scratch::private(blocked.join("scratch"));
        let mut c = Compactor::new(Settings::default());
        c.render(&history[..3], &unsaved, pressure);
        assert_eq!(c.placement("a"), Some(&Placement::Keep));
        assert_eq!(*c.render(&history, &unsaved, pressure)[2], history[2]);
    }

    fn arrival(tokens: u64, context_tokens: u64, horizon: u64, e: CacheEconomics) -> Arrival {
        Arrival {
            tokens,
            context_tokens,
            horizon,
            economics: e,
        }
    }

    #[test]
    fn a_large_read_in_a_small_context_is_consumed_a_small_one_in_a_large_context_kept() {
        let anthropic = CacheEconomics::default();
        let openai = CacheEconomics {
            read: 0.25,
            write: 1.0,
        };
        for e in [anthropic, openai] {
            assert!(arrival(2500, 3000, 4, e).consume_pays(), "{e:?}");
            assert!(!arrival(800, 60_000, 2, e).consume_pays(), "{e:?}");
        }
        // The longer the horizon, the more a kept result costs.
        let short = arrival(900, 8000, 1, anthropic);
        let long = arrival(900, 8000, 6, anthropic);
        assert!(long.keep_cost() > short.keep_cost());
        assert!(!short.consume_pays() && long.consume_pays());
    }

    #[test]
    fn pointers_say_what_the_result_was_and_where_to_read_it_again() {
        let file = pointer(
            "read_file",
            &json!({"file": "src/a.rs", "start": 10, "end": 40}),
            "1 a\n2 b\n",
            "/s/toolresult_c1.txt",
        );
        assert_eq!(
            file,
            "[read_file src/a.rs lines 10-40: 2 lines, 8 chars, cleared after use; \
             read_file src/a.rs with start/end to see lines again (as shown: /s/toolresult_c1.txt)]"
        );
        let log: String = (1..=50)
            .map(|i| format!("test t{i} ... ok\n"))
            .collect::<String>()
            + "test result: FAILED. 49 passed; 1 failed\n";
        let command = pointer(
            "run_command",
            &json!({"cmd": "cargo test"}),
            &log,
            "/s/x.txt",
        );
        assert!(
            command.ends_with(
                "test t49 ... ok\ntest t50 ... ok\ntest result: FAILED. 49 passed; 1 failed]"
            ),
            "{command}"
        );
        assert!(command.contains("full text: /s/x.txt"), "{command}");
        let search = pointer("search_files", &json!({}), "x\n", "/s/y.txt");
        assert!(
            search.starts_with("[search_files result: 1 lines"),
            "{search}"
        );
    }
}
