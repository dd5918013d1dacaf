//! The completion popups over the composer: the command palette (`/` at the start) and the
//! mention picker (`@` at the start of a word).
//!
//! Both are a filtered list with a selection, drawn just above the composer. The palette reads
//! the one registry of slash commands (`commands::COMMANDS`), so a command added there appears
//! here and in the help overlay alike. The picker lists workspace files honouring `.gitignore`
//! and ranks them with nucleo's fuzzy matcher. The files are walked once, on the first `@`, by
//! ignore's parallel walker on a thread of its own: the screen never waits for it, the first
//! results show while it walks (the app redraws as files arrive), and the cap (`MAX_FILES`,
//! a million) lies far above real monorepos, so no folder is hidden by walk order. Which popup is open follows from the composer's text; the app recomputes it after
//! every edit.

// Typed text and the workspace's file names: no index that could panic on them (#34).
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

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
/// Files the mention picker indexes at most: far above real monorepos (the walk is in the
/// background; this only bounds memory on a runaway tree).
pub const MAX_FILES: usize = 1_000_000;

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

/// The workspace's files, relative paths with `/`, walked once in the background.
#[derive(Debug, Default)]
pub struct FileIndex {
    root: Option<PathBuf>,
    walked: Arc<Walked>,
    started: bool,
    /// How many files the last `grew` saw.
    seen: usize,
}

/// What the walker thread has found so far.
#[derive(Debug, Default)]
struct Walked {
    files: Mutex<Vec<String>>,
    done: AtomicBool,
}

impl FileIndex {
    /// An index of `root`, walked on first use.
    pub fn new(root: &Path) -> Self {
        FileIndex {
            root: Some(root.to_path_buf()),
            ..FileIndex::default()
        }
    }

    /// Starts the walk, if it was not started yet; returns at once.
    pub fn load(&mut self) {
        if self.started {
            return;
        }
        self.started = true;
        let Some(root) = self.root.clone() else {
            self.walked.done.store(true, Ordering::Release);
            return;
        };
        let walked = Arc::clone(&self.walked);
        let spawned = std::thread::Builder::new()
            .name("file-index".into())
            .spawn(move || {
                walk(&root, &walked);
                walked.done.store(true, Ordering::Release);
            });
        if spawned.is_err() {
            // No thread to walk on: walk here rather than offer nothing.
            if let Some(root) = self.root.clone() {
                walk(&root, &self.walked);
            }
            self.walked.done.store(true, Ordering::Release);
        }
    }

    /// Whether the walk has started and not finished.
    pub fn walking(&self) -> bool {
        self.started && !self.walked.done.load(Ordering::Acquire)
    }

    /// Whether files arrived since the last call (the open picker should be recomputed).
    pub fn grew(&mut self) -> bool {
        let len = self.lock().len();
        let grew = len != self.seen;
        self.seen = len;
        grew
    }

    /// Blocks until the walk is over (at most `limit`); for tests and benchmarks.
    pub fn wait(&self, limit: std::time::Duration) {
        let until = std::time::Instant::now() + limit;
        while self.walking() && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<String>> {
        match self.walked.files.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Up to `limit` paths matching `query`, best first (all, in path order, for an empty one).
    pub fn matching(&self, query: &str, limit: usize) -> Vec<String> {
        let files = self.lock();
        if query.is_empty() {
            // The first `limit` in path order, without sorting them all.
            let mut all: Vec<&String> = files.iter().collect();
            if all.len() > limit {
                all.select_nth_unstable(limit);
                all.truncate(limit);
            }
            all.sort();
            return all.into_iter().cloned().collect();
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

/// Walks `root` with ignore's parallel walker, adding each file to `walked` as it is found.
fn walk(root: &Path, walked: &Walked) {
    ignore::WalkBuilder::new(root)
        .require_git(false)
        .build_parallel()
        .run(|| {
            Box::new(|entry| {
                let Ok(entry) = entry else {
                    return ignore::WalkState::Continue;
                };
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    return ignore::WalkState::Continue;
                }
                let Some(rel) = entry
                    .path()
                    .strip_prefix(root)
                    .ok()
                    .map(|p| p.to_string_lossy().replace('\\', "/"))
                else {
                    return ignore::WalkState::Continue;
                };
                let mut files = match walked.files.lock() {
                    Ok(guard) => guard,
                    Err(poisoned) => poisoned.into_inner(),
                };
                if files.len() >= MAX_FILES {
                    return ignore::WalkState::Quit;
                }
                files.push(rel);
                ignore::WalkState::Continue
            })
        });
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
        index.wait(std::time::Duration::from_secs(10));
        let all = index.matching("", 10);
        assert!(!all.iter().any(|f| f.starts_with("target/")), "{all:?}");
        assert_eq!(
            index.matching("uiapp", 10).first().map(String::as_str),
            Some("src/ui/app.rs")
        );
        assert_eq!(index.matching("main", 10), vec!["src/main.rs"]);
    }
}
