//! What the compactor works out of each message once, kept under the message's stamp
//! (`conversation::History`): its compactable blocks with their ids and sizes, its tokens as
//! sent whole, and its rendered form with that form's block for the cache ledger (serialised
//! size and hash). A request then costs a pass over the messages' entries, not over their bytes:
//! only a message that is new, changed, or whose results moved to another form is read again.
//!
//! The thing a newcomer would get wrong: an entry is valid for its stamp *and* the forms of its
//! compactable blocks; a result moving from whole to a pointer changes the rendered message
//! although the history's message did not change, so the forms are part of the key.

use std::collections::HashMap;

use super::placement::Placement;
use super::{Compactor, Schedule, Stage, compactable};
use crate::conversation::{ContentBlock, History, Message, Role};
use crate::prompt::ledger::{self, Block};
use crate::tools::Scratch;

/// A compactable block of a message: its id, characters and bytes.
#[derive(Debug, Clone)]
pub(super) struct Part {
    pub(super) id: String,
    pub(super) chars: usize,
    pub(super) bytes: usize,
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
    message: Message,
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
    rendered: Option<Rendered>,
}

/// The entries of the last history rendered, by index.
#[derive(Debug, Clone, Default)]
pub struct Memo {
    pub(super) entries: Vec<Entry>,
    /// How many messages the last render had to render and serialise (the rest it reused).
    rendered_anew: usize,
}

impl Memo {
    /// Brings the entries in line with `history`: a message whose stamp changed is read again.
    pub(super) fn refresh(&mut self, history: &History) {
        self.entries.truncate(history.len());
        for (index, (message, stamp)) in history.iter().zip(history.stamps()).enumerate() {
            match self.entries.get(index) {
                Some(entry) if entry.stamp == *stamp => {}
                _ => {
                    let entry = Entry {
                        stamp: *stamp,
                        parts: compactable(message)
                            .into_iter()
                            .map(|(id, text)| Part {
                                id,
                                chars: text.chars().count(),
                                bytes: text.len(),
                            })
                            .collect(),
                        tokens: crate::tokens::rough(ledger::sent_bytes(message).1),
                        rendered: None,
                    };
                    match self.entries.get_mut(index) {
                        Some(slot) => *slot = entry,
                        None => self.entries.push(entry),
                    }
                }
            }
        }
    }

    /// Every compactable block with its age and characters.
    pub(super) fn ages(&self, history: &[Message]) -> HashMap<String, (usize, usize)> {
        let mut assistants_after = vec![0; history.len()];
        let mut seen = 0;
        for (i, message) in history.iter().enumerate().rev() {
            if let Some(count) = assistants_after.get_mut(i) {
                *count = seen;
            }
            if message.role == Role::Assistant {
                seen += 1;
            }
        }
        let mut asked_at: HashMap<&str, usize> = HashMap::new();
        for (i, message) in history.iter().enumerate() {
            if message.role != Role::Assistant {
                continue;
            }
            for (id, _, _) in message.tool_uses() {
                asked_at.insert(id, i);
            }
        }
        let mut ages = HashMap::new();
        for (index, entry) in self.entries.iter().enumerate() {
            for part in &entry.parts {
                let at = if part.id.starts_with(super::MENTIONS_ID) {
                    Some(index)
                } else {
                    asked_at.get(part.id.as_str()).copied()
                };
                let age = at.and_then(|i| assistants_after.get(i)).copied();
                ages.insert(part.id.clone(), (age.unwrap_or(0), part.chars));
            }
        }
        ages
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

impl Compactor {
    /// The form of block `id` in this render (what `form_at` makes of it).
    fn form_of(&self, id: &str, ages: &HashMap<String, (usize, usize)>) -> Form {
        let stage = self.applied.get(id).copied().unwrap_or(Stage::Whole);
        if stage == Stage::Whole
            && self.settings.schedule == Schedule::Consumed
            && matches!(self.placements.get(id), Some(Placement::Consume { .. }))
            && ages.get(id).is_some_and(|(age, _)| *age >= 1)
        {
            return Form::Pointer;
        }
        Form::Stage(stage)
    }

    /// The messages to send for `history`, each rendered again only when it or the form of one
    /// of its results changed since the last render.
    pub(super) fn render_with(
        &mut self,
        memo: &mut Memo,
        history: &History,
        scratch: &Scratch,
        ages: &HashMap<String, (usize, usize)>,
    ) -> Vec<Message> {
        let mut out = Vec::with_capacity(history.len());
        memo.rendered_anew = 0;
        for (index, (message, entry)) in history.iter().zip(&mut memo.entries).enumerate() {
            let forms: Vec<Form> = entry
                .parts
                .iter()
                .map(|p| self.form_of(&p.id, ages))
                .collect();
            // A stamp never moves to another index (`History` only appends, truncates and
            // changes the last message), so the block's label still holds.
            let cached = entry.rendered.as_ref().filter(|r| r.forms == forms);
            if let Some(rendered) = cached {
                out.push(rendered.message.clone());
                continue;
            }
            let rendered = self.render_message(message, scratch, ages);
            memo.rendered_anew += 1;
            let (hash, bytes) = ledger::sent_bytes(&rendered);
            entry.rendered = Some(Rendered {
                forms,
                block: ledger::message_block(index, &rendered, hash, bytes),
                message: rendered.clone(),
                bytes,
            });
            out.push(rendered);
        }
        out
    }

    /// One message as sent: its results (and `@` mention content) in their forms.
    fn render_message(
        &self,
        message: &Message,
        scratch: &Scratch,
        ages: &HashMap<String, (usize, usize)>,
    ) -> Message {
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
                        content: self.form_at(tool_use_id, content, scratch, ages),
                        is_error: *is_error,
                    },
                    ContentBlock::Text { text } if message.role == Role::User => {
                        match super::mentions_id(text) {
                            Some(id) => ContentBlock::Text {
                                text: self.form_at(&id, text, scratch, ages),
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

    #[test]
    fn reused_messages_render_as_a_fresh_render_does_and_only_what_changed_is_rendered_again() {
        let dir = tempfile::tempdir().expect("tempdir");
        let scratch = Scratch::private(dir.path().join("scratch"));
        let pressure = Pressure {
            context_share: 0.2,
            economics: CacheEconomics::default(),
        };
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
}
