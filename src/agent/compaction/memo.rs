//! What the compactor works out of each message once, kept under the message's stamp
//! (`conversation::History`): its compactable blocks with their ids, sizes, the message their
//! age counts from and their placement, its tokens as sent whole, and its rendered form (shared
//! with every request that sends it) with that form's block for the cache ledger (serialised
//! size and hash). A request then costs a pass over the messages' entries, not over their bytes,
//! and the pass allocates and hashes nothing for a message that is neither new, changed, nor
//! moved to another form: ages are counts of assistant messages, placements are kept on the part.
//!
//! The thing a newcomer would get wrong: an entry is valid for its stamp *and* the forms of its
//! compactable blocks; a result moving from whole to a pointer changes the rendered message
//! although the history's message did not change, so the forms are part of the key. What a
//! part keeps of *earlier* messages (where its call was, how many assistant messages came up to
//! it) holds as long as its own stamp does: `History` changes only its last message, or all.

use std::collections::HashMap;
use std::sync::Arc;

use super::{Compactor, MENTIONS_ID, Schedule, Stage, compactable};
use crate::conversation::{ContentBlock, History, Message, Role};
use crate::prompt::ledger::{self, Block};
use crate::tools::Scratch;

/// A compactable block of a message: its id, characters and bytes, where its age counts from,
/// and its placement under the `consumed` schedule.
#[derive(Debug, Clone)]
pub(super) struct Part {
    pub(super) id: String,
    pub(super) chars: usize,
    pub(super) bytes: usize,
    /// The message its age counts from: the assistant message that made the call (for `@`
    /// mention content, its own message); `None` when no earlier message made it.
    pub(super) asked_at: Option<usize>,
    /// Assistant messages up to and including `asked_at`.
    through: usize,
    /// Whether the `consumed` schedule placed it as consumed, once it is placed
    /// (`Compactor::placements` is the record; this saves a lookup per request).
    pub(super) consumed: Option<bool>,
}

impl Part {
    /// Its age when the history has `assistants` assistant messages: how many came after the
    /// one that asked for it.
    pub(super) fn age(&self, assistants: usize) -> usize {
        self.asked_at
            .map_or(0, |_| assistants.saturating_sub(self.through))
    }
}

/// The form a compactable block takes in a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Form {
    Stage(Stage),
    Pointer,
}

/// A message's rendered form and its ledger block.
#[derive(Debug, Clone)]
struct Rendered {
    forms: Vec<Form>,
    /// Shared with every request that sends it (`ModelRequest::messages`).
    message: Arc<Message>,
    block: Block,
    bytes: usize,
}

/// What is known of the message at one index.
#[derive(Debug, Clone)]
pub(super) struct Entry {
    stamp: u64,
    pub(super) parts: Vec<Part>,
    /// Estimated tokens of the message sent whole.
    pub(super) tokens: u64,
    /// Assistant messages up to and including this one.
    assistants: usize,
    rendered: Option<Rendered>,
}

/// The entries of the last history rendered, by index.
#[derive(Debug, Clone, Default)]
pub struct Memo {
    pub(super) entries: Vec<Entry>,
    /// Assistant messages in the last history refreshed.
    pub(super) assistants: usize,
    /// How many messages the last render had to render and serialise (the rest it reused).
    rendered_anew: usize,
}

impl Memo {
    /// Brings the entries in line with `history`: a message whose stamp changed is read again.
    pub(super) fn refresh(&mut self, history: &History) {
        self.entries.truncate(history.len());
        let mut assistants = 0;
        for (index, (message, stamp)) in history.iter().zip(history.stamps()).enumerate() {
            if message.role == Role::Assistant {
                assistants += 1;
            }
            match self.entries.get_mut(index) {
                Some(entry) if entry.stamp == *stamp => entry.assistants = assistants,
                _ => {
                    let entry = Entry {
                        stamp: *stamp,
                        parts: self.parts_of(history, index, assistants),
                        tokens: crate::tokens::rough(ledger::sent_bytes(message).1),
                        assistants,
                        rendered: None,
                    };
                    match self.entries.get_mut(index) {
                        Some(slot) => *slot = entry,
                        None => self.entries.push(entry),
                    }
                }
            }
        }
        self.assistants = assistants;
    }

    /// The compactable blocks of message `index`, whose entries before it are refreshed and
    /// which comes after `assistants` assistant messages, itself included.
    fn parts_of(&self, history: &[Message], index: usize, assistants: usize) -> Vec<Part> {
        let Some(message) = history.get(index) else {
            return Vec::new();
        };
        compactable(message)
            .into_iter()
            .map(|(id, text)| {
                let asked_at = if id.starts_with(MENTIONS_ID) {
                    Some(index)
                } else {
                    asker(history, index, &id)
                };
                let through = match asked_at {
                    Some(at) if at < index => self.entries.get(at).map_or(0, |e| e.assistants),
                    _ => assistants,
                };
                Part {
                    chars: text.chars().count(),
                    bytes: text.len(),
                    id,
                    asked_at,
                    through,
                    consumed: None,
                }
            })
            .collect()
    }

    /// Every compactable block of the last history refreshed, in order.
    pub(super) fn parts(&self) -> impl Iterator<Item = &Part> {
        self.entries.iter().flat_map(|e| &e.parts)
    }

    /// Every compactable block with its age and characters (a later block with the same id
    /// wins).
    pub(super) fn ages(&self) -> HashMap<String, (usize, usize)> {
        self.parts()
            .map(|p| (p.id.clone(), (p.age(self.assistants), p.chars)))
            .collect()
    }

    /// The ledger blocks of the last render's messages, in order.
    pub fn blocks(&self) -> impl Iterator<Item = &Block> {
        self.entries
            .iter()
            .filter_map(|e| e.rendered.as_ref().map(|r| &r.block))
    }

    /// How many messages the last render rendered and serialised anew.
    pub fn rendered_anew(&self) -> usize {
        self.rendered_anew
    }

    /// The serialised size of each message of the last render, in order.
    pub fn sizes(&self) -> impl Iterator<Item = usize> + '_ {
        self.entries
            .iter()
            .filter_map(|e| e.rendered.as_ref().map(|r| r.bytes))
    }
}

/// The assistant message before `index` that made call `id`, the nearest one (its results'
/// message follows it, so the search usually stops at the first step).
fn asker(history: &[Message], index: usize, id: &str) -> Option<usize> {
    history
        .get(..index)?
        .iter()
        .rposition(|m| m.role == Role::Assistant && m.tool_uses().any(|(call, _, _)| call == id))
}

impl Compactor {
    /// The form of `part` in this render (what `form_at` makes of it), at age `age`.
    fn form_of(&self, part: &Part, age: usize) -> Form {
        let stage = self.applied.get(&part.id).copied().unwrap_or(Stage::Whole);
        if stage == Stage::Whole
            && self.settings.schedule == Schedule::Consumed
            && part.consumed == Some(true)
            && age >= 1
        {
            return Form::Pointer;
        }
        Form::Stage(stage)
    }

    /// Moves every result to the stage its age calls for (only those whose stage changes are
    /// written, so a request where none does allocates nothing).
    pub(super) fn apply_targets(&mut self, memo: &Memo) {
        for part in memo.parts() {
            let target = self.target(part.age(memo.assistants), part.chars);
            if self.applied.get(&part.id).copied().unwrap_or(Stage::Whole) != target {
                self.applied.insert(part.id.clone(), target);
            }
        }
    }

    /// The messages to send for `history`, each rendered again only when it or the form of one
    /// of its results changed since the last render; the others are shared, not copied.
    pub(super) fn render_with(
        &mut self,
        memo: &mut Memo,
        history: &History,
        scratch: &Scratch,
    ) -> Vec<Arc<Message>> {
        let mut out = Vec::with_capacity(history.len());
        memo.rendered_anew = 0;
        let assistants = memo.assistants;
        for (index, (message, entry)) in history.iter().zip(&mut memo.entries).enumerate() {
            let forms = entry
                .parts
                .iter()
                .map(|p| self.form_of(p, p.age(assistants)));
            // A stamp never moves to another index (`History` only appends, truncates and
            // changes the last message), so the block's label still holds.
            let cached = entry
                .rendered
                .as_ref()
                .filter(|r| r.forms.iter().copied().eq(forms.clone()));
            if let Some(rendered) = cached {
                out.push(Arc::clone(&rendered.message));
                continue;
            }
            let forms = forms.collect();
            let rendered =
                Arc::new(self.render_message(message, &entry.parts, assistants, scratch));
            memo.rendered_anew += 1;
            let (hash, bytes) = ledger::sent_bytes(&rendered);
            entry.rendered = Some(Rendered {
                forms,
                block: ledger::message_block(index, &rendered, hash, bytes),
                message: Arc::clone(&rendered),
                bytes,
            });
            out.push(rendered);
        }
        out
    }

    /// One message as sent: its results (and `@` mention content) in their forms; `parts` are
    /// its compactable blocks, `assistants` the history's assistant messages.
    fn render_message(
        &self,
        message: &Message,
        parts: &[Part],
        assistants: usize,
        scratch: &Scratch,
    ) -> Message {
        let age = |id: &str| {
            parts
                .iter()
                .rfind(|p| p.id == id)
                .map_or(0, |p| p.age(assistants))
        };
        Message {
            role: message.role,
            content: message
                .content
                .iter()
                .map(|block| match block {
                    ContentBlock::ToolResult {
                        tool_use_id,
                        content,
                        is_error,
                    } => ContentBlock::ToolResult {
                        tool_use_id: tool_use_id.clone(),
                        content: self.form_at(tool_use_id, content, scratch, age(tool_use_id)),
                        is_error: *is_error,
                    },
                    ContentBlock::Text { text } if message.role == Role::User => {
                        match super::mentions_id(text) {
                            Some(id) => ContentBlock::Text {
                                text: self.form_at(&id, text, scratch, age(&id)),
                            },
                            None => block.clone(),
                        }
                    }
                    other => other.clone(),
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::compaction::{CacheEconomics, Pressure, Settings};
    use serde_json::json;

    /// Request `i` of a session: the model reads a file (large every third time) and gets it;
    /// every fifth request the user says something with `@` mention content inlined.
    fn turn(history: &mut History, i: usize) {
        if i.is_multiple_of(5) {
            let mention = format!(
                "<mentions>\n{}</mentions>",
                format!("{i} fn m() {{}}\n").repeat(200)
            );
            history.push_user_text(format!("prompt {i}"));
            history.push_user_text(mention);
        }
        let id = format!("call_{i}");
        history.push(Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: id.clone(),
                name: "read_file".into(),
                input: json!({"file": format!("src/{i}.rs")}),
            }],
        });
        let lines = if i.is_multiple_of(3) { 500 } else { 5 };
        history.push(Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: id,
                content: format!("{i}  let x = \"é\";\n").repeat(lines),
                is_error: false,
            }],
        });
    }

    /// A scratch folder (kept while the first value lives) and a fifth of the window used.
    fn fixture() -> (tempfile::TempDir, Scratch, Pressure) {
        let dir = tempfile::tempdir().expect("tempdir");
        let scratch = Scratch::private(dir.path().join("scratch"));
        let pressure = Pressure {
            context_share: 0.2,
            economics: CacheEconomics::default(),
        };
        (dir, scratch, pressure)
    }

    #[test]
    fn reused_messages_render_as_a_fresh_render_does_and_only_what_changed_is_rendered_again() {
        let (_dir, scratch, pressure) = fixture();
        for schedule in [Schedule::Consumed, Schedule::Eager, Schedule::Batched] {
            let settings = Settings {
                schedule,
                ..Settings::default()
            };
            let mut kept = Compactor::new(settings);
            let mut fresh = Compactor::new(settings);
            let mut history = History::default();
            for i in 0..30 {
                turn(&mut history, i);
                if i == 24 {
                    kept.force_summaries();
                    fresh.force_summaries();
                }
                let before = kept.rendered().entries.len();
                let reused = kept.render_history(&history, &scratch, pressure);
                // A plain list has no stamps: every message is rendered again.
                let whole = fresh.render(&history, &scratch, pressure);
                assert_eq!(reused, whole, "{schedule:?}, request {i}");
                assert_eq!(kept.settled(), fresh.settled(), "{schedule:?}, request {i}");
                let sizes: Vec<usize> = kept.rendered().sizes().collect();
                let serialised: Vec<usize> = reused
                    .iter()
                    .map(|m| serde_json::to_vec(m).map_or(0, |b| b.len()))
                    .collect();
                assert_eq!(sizes, serialised, "{schedule:?}, request {i}");
                let blocks: Vec<Block> = kept.rendered().blocks().cloned().collect();
                let request = crate::conversation::ModelRequest {
                    model: "m".into(),
                    system: Vec::new(),
                    tools: Vec::new(),
                    messages: reused,
                    max_output_tokens: 1,
                    session_id: "s".into(),
                    effort: None,
                    settled_messages: None,
                    bridge_message: None,
                };
                assert_eq!(blocks, ledger::request_blocks(&request));
                let sent = serde_json::to_string(&request.messages).unwrap_or_default();
                if i == 23 && schedule != Schedule::Batched {
                    assert!(
                        sent.contains("cleared"),
                        "{schedule:?}: results were compacted"
                    );
                }
                if i == 29 {
                    assert!(
                        sent.contains("Old tool result cleared"),
                        "{schedule:?}: summaries"
                    );
                }
                // New messages, the last one before them (a merged prompt), and at most one
                // whose result moved to its pointer; under the eager schedule results move
                // stages as they age, a few per request, never the whole history.
                let new = history.len() - before + 1;
                let limit = if schedule == Schedule::Consumed {
                    new + 1
                } else {
                    new + 4
                };
                if i > 0 && i != 24 {
                    assert!(
                        kept.rendered().rendered_anew() <= limit,
                        "{schedule:?}, request {i}: {} of {} messages rendered again",
                        kept.rendered().rendered_anew(),
                        history.len()
                    );
                }
            }
        }
    }

    #[test]
    fn a_message_sent_again_is_shared_not_copied_and_an_unchanged_history_renders_nothing_anew() {
        let (_dir, scratch, pressure) = fixture();
        for schedule in [Schedule::Consumed, Schedule::Eager, Schedule::Batched] {
            let mut compactor = Compactor::new(Settings {
                schedule,
                ..Settings::default()
            });
            let mut history = History::default();
            for i in 0..12 {
                turn(&mut history, i);
            }
            let first = compactor.render_history(&history, &scratch, pressure);
            let again = compactor.render_history(&history, &scratch, pressure);
            assert_eq!(compactor.rendered().rendered_anew(), 0, "{schedule:?}");
            assert!(
                first.iter().zip(&again).all(|(a, b)| Arc::ptr_eq(a, b)),
                "{schedule:?}: every message of the same history is the memo's, not a copy"
            );
            // The next request: a message shown unchanged is the one already sent.
            turn(&mut history, 12);
            let next = compactor.render_history(&history, &scratch, pressure);
            let pairs = first.iter().zip(&next).enumerate();
            let mut count = 0;
            for (index, (a, b)) in pairs.filter(|(_, (a, b))| a == b) {
                assert!(Arc::ptr_eq(a, b), "{schedule:?}: message {index} copied");
                count += 1;
            }
            assert!(count >= first.len() - 3, "{schedule:?}: {count} shared");
        }
    }
}
