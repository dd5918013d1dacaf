//! A session's skills: the blocks they add to the prompt, which ones the user's words activate
//! for a turn, the pins, and the `/skill` commands.
//!
//! Activation: a skill is activated by a prompt that contains one of its `triggers` as whole
//! words (case-insensitive, accents folded: "Déploy" matches "deploy") or that `@`-mentions a path
//! matching one of its `paths` globs (relative to the project root or to the working directory).
//! At most `MAX_ACTIVE` bodies and `active_max_chars` characters ride in one turn's `<context>`;
//! a skill already sent this session (or pinned) is named instead of sent again, because its body
//! is still in the history. The sent set is forgotten when the history is folded into a summary.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{Catalog, Limits, MAX_ACTIVE, Skill, pins::Pins};
use crate::conversation::SystemBlock;
use crate::protocol::{Mode, SkillAction};

/// Lowercase with Latin accents removed, for matching triggers.
pub fn fold(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars().flat_map(char::to_lowercase) {
        match c {
            'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' | 'ā' | 'ă' | 'ą' => out.push('a'),
            'ç' | 'ć' | 'č' => out.push('c'),
            'ď' => out.push('d'),
            'è' | 'é' | 'ê' | 'ë' | 'ē' | 'ė' | 'ę' | 'ě' => out.push('e'),
            'ì' | 'í' | 'î' | 'ï' | 'ī' | 'į' => out.push('i'),
            'ł' => out.push('l'),
            'ñ' | 'ń' | 'ň' => out.push('n'),
            'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' | 'ō' | 'ő' => out.push('o'),
            'ř' => out.push('r'),
            'ś' | 'š' | 'ş' => out.push('s'),
            'ť' | 'ţ' => out.push('t'),
            'ù' | 'ú' | 'û' | 'ü' | 'ū' | 'ů' | 'ű' => out.push('u'),
            'ý' | 'ÿ' => out.push('y'),
            'ź' | 'ż' | 'ž' => out.push('z'),
            'æ' => out.push_str("ae"),
            'œ' => out.push_str("oe"),
            'ß' => out.push_str("ss"),
            // Combining marks of decomposed text.
            '\u{300}'..='\u{36f}' => {}
            c => out.push(c),
        }
    }
    out
}

fn words(text: &str) -> Vec<String> {
    fold(text)
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// Whether `text` contains `phrase` as whole words.
pub fn contains_phrase(text_words: &[String], phrase: &str) -> bool {
    let phrase = words(phrase);
    !phrase.is_empty()
        && text_words
            .windows(phrase.len())
            .any(|w| w == phrase.as_slice())
}

/// Why a skill was activated.
fn reason(skill: &Skill, text_words: &[String], mentioned: &[String]) -> Option<String> {
    if let Some(t) = skill
        .triggers
        .iter()
        .find(|t| contains_phrase(text_words, t))
    {
        return Some(format!("\"{t}\""));
    }
    let mut builder = globset::GlobSetBuilder::new();
    for pattern in &skill.paths {
        if let Ok(glob) = globset::Glob::new(pattern.trim_start_matches("./")) {
            builder.add(glob);
        }
    }
    let set = builder.build().ok()?;
    mentioned
        .iter()
        .find(|p| set.is_match(p.as_str()))
        .map(|p| format!("@{p}"))
}

/// What one prompt activated, for the notice.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Activation {
    /// (name, why) of the bodies sent this turn.
    pub sent: Vec<(String, String)>,
    /// Names referred to instead (already sent or pinned).
    pub referred: Vec<String>,
    /// Names that matched but did not fit this turn's limits.
    pub left_out: Vec<String>,
    /// Tokens of the block, estimated from its bytes (`tokens::rough`).
    pub tokens: u64,
}

/// The skills of one session.
#[derive(Debug, Clone)]
pub struct SessionSkills {
    catalog: Arc<Catalog>,
    pins: Pins,
    /// Names whose bodies the history holds.
    sent: BTreeSet<String>,
    catalog_max_chars: usize,
    active_max_chars: usize,
    /// The project root and the working directory, for `paths` globs.
    root: PathBuf,
    workspace: PathBuf,
    /// This prompt's volatile `skills` block text (empty: none).
    turn: String,
}

impl SessionSkills {
    /// The skills of a session in `workspace` (canonical): found in `home` and at the project
    /// root, with the workspace's pins.
    pub fn discover(home: Option<&Path>, workspace: &Path, limits: Limits) -> Self {
        let root = crate::project::project_root(workspace);
        SessionSkills {
            pins: Pins::load(home, &root),
            catalog: Arc::new(Catalog::discover(home, &root)),
            sent: BTreeSet::new(),
            catalog_max_chars: limits.catalog_max_chars,
            active_max_chars: limits.active_max_chars,
            root,
            workspace: workspace.to_path_buf(),
            turn: String::new(),
        }
    }

    /// The catalog, shared with the tools.
    pub fn catalog(&self) -> &Arc<Catalog> {
        &self.catalog
    }

    /// The pinned names, sorted.
    pub fn pinned(&self) -> &[String] {
        self.pins.names()
    }

    /// The stable blocks for `mode`: catalog (tool modes), pinned bodies.
    pub fn system_blocks(&self, mode: Mode) -> Vec<SystemBlock> {
        self.catalog
            .system_blocks(mode, self.pins.names(), self.catalog_max_chars)
    }

    /// The volatile block of this prompt, if it activated anything.
    pub fn volatile_block(&self) -> Option<SystemBlock> {
        (!self.turn.is_empty()).then(|| SystemBlock {
            name: "skills".into(),
            text: self.turn.clone(),
            stable: false,
        })
    }

    /// The history lost the bodies it held (a summary replaced it): send them again if needed.
    pub fn forget_sent(&mut self) {
        self.sent.clear();
    }

    /// Works out which skills this prompt activates and sets the turn's block; `mentioned` are
    /// the files and folders the prompt `@`-mentions (relative to the working directory); `mode`
    /// decides whether a skill that does not fit may be pointed at the `skill` tool.
    pub fn activate(&mut self, text: &str, mentioned_paths: &[&Path], mode: Mode) -> Activation {
        self.turn.clear();
        let text_words = words(text);
        let mut mentioned = Vec::new();
        for rel in mentioned_paths {
            mentioned.push(slashes(rel));
            if let Ok(from_root) = self.workspace.join(rel).strip_prefix(&self.root) {
                mentioned.push(slashes(from_root));
            }
        }
        let mut activation = Activation::default();
        let mut bodies = Vec::new();
        let mut used = 0usize;
        for skill in self.catalog.skills() {
            let Some(why) = reason(skill, &text_words, &mentioned) else {
                continue;
            };
            if self.sent.contains(&skill.name) || self.pins.names().contains(&skill.name) {
                activation.referred.push(skill.name.clone());
                continue;
            }
            let body = skill.tagged_body();
            let size = body.chars().count();
            if bodies.len() >= MAX_ACTIVE || used + size > self.active_max_chars {
                activation.left_out.push(skill.name.clone());
                continue;
            }
            used += size;
            bodies.push(body);
            activation.sent.push((skill.name.clone(), why));
        }
        let mut parts = Vec::new();
        if !bodies.is_empty() {
            parts.push(format!(
                "Skills for this request (follow them):\n{}",
                bodies.join("\n")
            ));
        }
        for name in &activation.referred {
            parts.push(format!(
                "Skill `{name}` applies: its instructions are earlier in this conversation."
            ));
        }
        if mode.uses_tools() && !activation.left_out.is_empty() {
            parts.push(format!(
                "Also relevant (load with the `skill` tool if needed): {}.",
                activation.left_out.join(", ")
            ));
        }
        self.turn = parts.join("\n");
        for (name, _) in &activation.sent {
            self.sent.insert(name.clone());
        }
        // A per-prompt notice ("~N tokens"): the cheap estimate, never the encoder.
        activation.tokens = crate::tokens::rough(self.turn.len());
        activation
    }

    /// Runs a `/skill` command; the answer is the notice text.
    pub fn command(&mut self, action: SkillAction) -> String {
        match action {
            SkillAction::List => self.catalog.listing(self.pins.names()),
            SkillAction::Show { name } => self
                .catalog
                .show(&name)
                .unwrap_or_else(|| self.unknown(&name)),
            SkillAction::Pin { name } => {
                let Some(skill) = self.catalog.get(&name) else {
                    return self.unknown(&name);
                };
                let tokens = skill.tokens();
                match self.pins.pin(&name) {
                    Ok(false) => format!("{name} is already pinned"),
                    Ok(true) => format!(
                        "pinned {name} (~{tokens} tokens) in this workspace: the cached prefix changes from the `pinned skills` block on, once"
                    ),
                    Err(e) => format!("pinned {name}; {e}"),
                }
            }
            SkillAction::Unpin { name } => match self.pins.unpin(&name) {
                Ok(false) => format!("{name} is not pinned (/skill list marks the pinned ones)"),
                Ok(true) => format!(
                    "unpinned {name}: the cached prefix changes from the `pinned skills` block on, once"
                ),
                Err(e) => format!("unpinned {name}; {e}"),
            },
        }
    }

    fn unknown(&self, name: &str) -> String {
        format!("no skill named {name} ({})", self.catalog.names())
    }
}

fn slashes(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triggers_match_whole_words_with_accents_folded() {
        let text = words("Como faço o DEPLOY da aplicação? Re-deploy later");
        assert!(contains_phrase(&text, "deploy"));
        assert!(contains_phrase(&text, "Aplicacao"));
        assert!(contains_phrase(&text, "faco o deploy"));
        assert!(!contains_phrase(&text, "app"));
        assert!(!contains_phrase(&words("deployment"), "deploy"));
        assert!(contains_phrase(&words("e\u{301}te"), "été"));
        assert!(!contains_phrase(&text, ""));
    }
}
