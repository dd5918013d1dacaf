//! The completion popups over the composer: the command palette (`/` at the start) and the
//! mention picker (`@` at the start of a word).
//!
//! Both are a filtered list with a selection, drawn just above the composer. The palette reads
//! the one registry of slash commands (`commands::COMMANDS`), so a command added there appears
//! here and in the help overlay alike. The picker lists workspace files honouring `.gitignore`
//! (walked once, on first use, capped at `MAX_FILES`) and ranks them with nucleo's fuzzy
//! matcher. Which popup is open follows from the composer's text; the app recomputes it after
//! every edit.

// Typed text and the workspace's file names: no index that could panic on them (#34).
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

use std::path::{Path, PathBuf};

use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};

use super::commands::COMMANDS;
use super::text::truncate;

/// Rows a popup shows at most.
pub const MAX_ROWS: usize = 8;
/// Files the mention picker indexes at most.
pub const MAX_FILES: usize = 20_000;

/// What a popup completes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PopupKind {
    Commands,
    Files,
}

/// One entry of a popup.
#[derive(Debug, Clone, PartialEq)]
pub struct PopupItem {
    /// What is inserted (`/cost`, `@src/main.rs`).
    pub insert: String,
    /// A one-line description (commands only).
    pub detail: String,
}

/// An open popup.
#[derive(Debug, Clone, PartialEq)]
pub struct Popup {
    pub kind: PopupKind,
    pub items: Vec<PopupItem>,
    pub selected: usize,
}

impl Popup {
    /// The palette for the text typed after `/`, the built-in commands first, then the ones
    /// added at run time (MCP prompts, command files); `None` when nothing matches.
    pub fn commands(query: &str, dynamic: &[super::commands::DynamicCommand]) -> Option<Popup> {
        let query = query.to_ascii_lowercase();
        let item = |name: &str, args: &str, about: &str| PopupItem {
            insert: format!("/{name}"),
            detail: if args.is_empty() {
                about.to_string()
            } else {
                format!("{args} — {about}")
            },
        };
        let mut items: Vec<PopupItem> = COMMANDS
            .iter()
            .filter(|c| c.name.starts_with(&query))
            .map(|c| item(c.name, c.args, c.about))
            .chain(
                dynamic
                    .iter()
                    .filter(|c| c.name.to_ascii_lowercase().starts_with(&query))
                    .map(|c| item(&c.name, &c.args, &c.about)),
            )
            .collect();
        if items.is_empty() {
            // No prefix matched: fall back to commands that contain the text.
            items = COMMANDS
                .iter()
                .filter(|c| c.name.contains(&query))
                .map(|c| PopupItem {
                    insert: format!("/{}", c.name),
                    detail: c.about.to_string(),
                })
                .collect();
        }
        (!items.is_empty()).then_some(Popup {
            kind: PopupKind::Commands,
            items,
            selected: 0,
        })
    }

    /// The picker for the text typed after `@`, ranked by fuzzy score.
    pub fn files(query: &str, index: &FileIndex) -> Option<Popup> {
        let items: Vec<PopupItem> = index
            .matching(query, MAX_ROWS * 4)
            .into_iter()
            .map(|path| PopupItem {
                insert: format!("@{path}"),
                detail: String::new(),
            })
            .collect();
        (!items.is_empty()).then_some(Popup {
            kind: PopupKind::Files,
            items,
            selected: 0,
        })
    }

    /// Moves the selection by `step`, wrapping.
    pub fn step(&mut self, step: isize) {
        let n = self.items.len() as isize;
        if n > 0 {
            self.selected = (self.selected as isize + step).rem_euclid(n) as usize;
        }
    }

    /// The selected entry.
    pub fn chosen(&self) -> Option<&PopupItem> {
        self.items.get(self.selected)
    }

    /// Rows it needs, borders included.
    pub fn height(&self) -> u16 {
        self.items.len().min(MAX_ROWS) as u16 + 2
    }
}

impl Widget for &Popup {
    fn render(self, area: Rect, buf: &mut Buffer) {
        Clear.render(area, buf);
        let title = match self.kind {
            PopupKind::Commands => " commands · ↑↓ select · Tab complete · Enter run · Esc close ",
            PopupKind::Files => " files · ↑↓ select · Enter/Tab insert · Esc close ",
        };
        let block = Block::new()
            .borders(Borders::ALL)
            .border_style(Style::new().fg(Color::DarkGray))
            .title(Span::styled(
                truncate(title, area.width.saturating_sub(2) as usize),
                Style::new().fg(Color::LightBlue),
            ));
        let inner = block.inner(area);
        block.render(area, buf);
        let rows = inner.height as usize;
        let top = self.selected.saturating_sub(rows.saturating_sub(1));
        for (row, (i, item)) in self
            .items
            .iter()
            .enumerate()
            .skip(top)
            .take(rows)
            .enumerate()
        {
            let selected = i == self.selected;
            let style = if selected {
                Style::new().fg(Color::Black).bg(Color::LightBlue)
            } else {
                Style::new()
            };
            let width = inner.width as usize;
            let name = truncate(&item.insert, width);
            let room = width.saturating_sub(name.chars().count() + 2);
            let mut spans = vec![Span::styled(name, style.add_modifier(Modifier::BOLD))];
            if room > 3 && !item.detail.is_empty() {
                spans.push(Span::styled("  ", style));
                spans.push(Span::styled(
                    truncate(&item.detail, room),
                    if selected {
                        style
                    } else {
                        Style::new().fg(Color::Gray)
                    },
                ));
            }
            buf.set_line(
                inner.x,
                inner.y + row as u16,
                &Line::from(spans),
                inner.width,
            );
        }
    }
}

/// The workspace's files, relative paths with `/`, walked once.
#[derive(Debug, Default)]
pub struct FileIndex {
    root: Option<PathBuf>,
    files: Option<Vec<String>>,
}

impl FileIndex {
    /// An index of `root`, walked on first use.
    pub fn new(root: &Path) -> Self {
        FileIndex {
            root: Some(root.to_path_buf()),
            files: None,
        }
    }

    fn files(&mut self) -> &[String] {
        if self.files.is_none() {
            let files = match &self.root {
                Some(root) => walk(root),
                None => Vec::new(),
            };
            self.files = Some(files);
        }
        self.files.as_deref().unwrap_or_default()
    }

    /// Walks the workspace now, if it was not walked yet.
    pub fn load(&mut self) {
        self.files();
    }

    /// Up to `limit` paths matching `query`, best first (all, in path order, for an empty one).
    pub fn matching(&self, query: &str, limit: usize) -> Vec<String> {
        let files = self.files.as_deref().unwrap_or_default();
        if query.is_empty() {
            return files.iter().take(limit).cloned().collect();
        }
        let mut matcher = Matcher::new(Config::DEFAULT.match_paths());
        let pattern = Pattern::parse(query, CaseMatching::Smart, Normalization::Smart);
        let mut buf = Vec::new();
        let mut scored: Vec<(u32, &String)> = files
            .iter()
            .filter_map(|f| {
                pattern
                    .score(Utf32Str::new(f, &mut buf), &mut matcher)
                    .map(|s| (s, f))
            })
            .collect();
        scored.sort_by(|a, b| {
            b.0.cmp(&a.0)
                .then(a.1.len().cmp(&b.1.len()))
                .then(a.1.cmp(b.1))
        });
        scored
            .into_iter()
            .take(limit)
            .map(|(_, f)| f.clone())
            .collect()
    }
}

fn walk(root: &Path) -> Vec<String> {
    let mut files: Vec<String> = ignore::WalkBuilder::new(root)
        .require_git(false)
        .build()
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .filter_map(|e| {
            e.path()
                .strip_prefix(root)
                .ok()
                .map(|p| p.to_string_lossy().replace('\\', "/"))
        })
        .take(MAX_FILES)
        .collect();
    files.sort();
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_palette_filters_the_registry() {
        let popup = Popup::commands("co", &[]).expect("matches");
        let names: Vec<&str> = popup.items.iter().map(|i| i.insert.as_str()).collect();
        assert_eq!(
            names,
            vec![
                "/coder", "/compact", "/context", "/cost", "/config", "/copy"
            ]
        );
        assert!(Popup::commands("zzz", &[]).is_none());
    }

    #[test]
    fn the_picker_ranks_fuzzy_matches_and_honours_gitignore() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("src/ui")).expect("mkdir");
        std::fs::create_dir_all(dir.path().join("target")).expect("mkdir");
        for f in ["src/main.rs", "src/ui/app.rs", "README.md", "target/out.rs"] {
            std::fs::write(dir.path().join(f), "x").expect("write");
        }
        std::fs::write(dir.path().join(".gitignore"), "target/\n").expect("write");
        let mut index = FileIndex::new(dir.path());
        index.load();
        let all = index.matching("", 10);
        assert!(!all.iter().any(|f| f.starts_with("target/")), "{all:?}");
        assert_eq!(
            index.matching("uiapp", 10).first().map(String::as_str),
            Some("src/ui/app.rs")
        );
        assert_eq!(index.matching("main", 10), vec!["src/main.rs"]);
    }
}
