//! The overlays drawn over the panes, and the state each keeps: F1's help and its scroll, the
//! saved files and their pager, the transcript pager, the `/resume`, `/rewind` and `/model`
//! pickers, the `/cache`, `/cost` and `/config` reports, and the approval dialog.
//!
//! One overlay is open at a time (`open`); its state may outlive it (a report that arrives after
//! its overlay opened is shown when it comes). The approval dialog is the exception to the key
//! order: `App` gives it keys before anything else, because a key typed while it pops up must
//! never answer it.

use std::path::PathBuf;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Clear, Widget};

use crate::session::models::ModelList;
use crate::session_log::SessionInfo;
use crate::ui::approval::PendingApproval;
use crate::ui::cache::CacheView;
use crate::ui::commands::DynamicCommand;
use crate::ui::cost::CostView;
use crate::ui::files::{FilesView, Pager, SavedFile};
use crate::ui::models::{ModelPicker, PickerKey};
use crate::ui::{cost, files, help};

/// An overlay drawn over the panes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overlay {
    Help,
    Files,
    /// A tool call waits for approval (see `Overlays::approval`).
    Approval,
    /// `/cache`: the prompt-cache report.
    Cache,
    /// `/cost`: the session's bill.
    Cost,
    /// `/resume`: the recent sessions.
    Resume,
    /// Ctrl+T: the full results of tool calls (of the picked one, when a call is picked).
    Transcript,
    /// `/rewind`: this session's prompts, to return to before one.
    Rewind,
    /// `/config`: every effective setting and where it came from.
    Config,
    /// `/model`: the models it can switch to.
    Models,
}

/// The open overlay and what each overlay keeps.
#[derive(Debug, Default)]
pub struct Overlays {
    /// The overlay drawn over the panes, if any.
    pub open: Option<Overlay>,
    /// The tool call waiting for approval.
    pub approval: Option<PendingApproval>,
    /// Lines of F1's help scrolled off the top.
    pub help_scroll: usize,
    /// The saved files list and its pager.
    pub files: FilesView,
    /// The transcript pager, while open.
    pub transcript: Option<Pager>,
    /// The sessions `/resume` lists, and which is selected.
    pub resume: Option<(Vec<SessionInfo>, usize)>,
    /// The prompts `/rewind` lists, and which is selected.
    pub rewind: Option<(Vec<String>, usize)>,
    /// The `/model` picker's filter and selection.
    pub model_picker: ModelPicker,
    /// `/cache`'s report, once the agent sent it.
    pub cache: Option<CacheView>,
    /// `/cost`'s report, once the agent sent it.
    pub cost: Option<CostView>,
    /// What `/config` shows, given by the front end (settings and where each came from).
    pub config_report: Vec<String>,
}

/// What the overlays read from the parts around them.
pub(super) struct OverlayContext<'a> {
    /// The chat's height: a pager's page is about as tall.
    pub chat_height: u16,
    pub saved_files: &'a [SavedFile],
    pub models: &'a ModelList,
    pub dynamic_commands: &'a [DynamicCommand],
    /// The session's provider and model, for the `/model` picker.
    pub provider: &'a str,
    pub model: &'a str,
}

/// What a key on an open overlay asks of the `App`.
#[derive(Debug, PartialEq)]
pub(super) enum OverlayKey {
    /// Handled here, or nothing to do.
    Stay,
    /// `/resume`'s pick: go on from this session log.
    Resume(PathBuf),
    /// `/rewind`'s pick: return to before prompt `prompt`, whose text is `text`.
    Rewind { prompt: usize, text: String },
    /// `/model`'s pick.
    Model(String),
    /// A character typed over a read-only overlay: it closed, and the key goes on to the
    /// composer.
    TypeThrough,
}

impl Overlays {
    /// Opens `overlay` over the panes.
    pub(super) fn show(&mut self, overlay: Overlay) {
        self.open = Some(overlay);
    }

    /// Closes the open overlay.
    pub(super) fn close(&mut self) {
        self.open = None;
    }

    /// F1: the help, from its top.
    pub(super) fn open_help(&mut self) {
        self.help_scroll = 0;
        self.show(Overlay::Help);
    }

    /// The transcript pager on `pager`.
    pub(super) fn open_transcript(&mut self, pager: Pager) {
        self.transcript = Some(pager);
        self.show(Overlay::Transcript);
    }

    /// The saved files list, from its first file.
    pub(super) fn open_files(&mut self) {
        self.files = FilesView::default();
        self.show(Overlay::Files);
    }

    /// A saved file straight in the pager.
    pub(super) fn open_saved(&mut self, path: &str) {
        self.files = FilesView {
            selected: 0,
            pager: Some(Pager::open(path)),
        };
        self.show(Overlay::Files);
    }

    /// Shows the approval dialog for `pending`.
    pub(super) fn ask(&mut self, pending: PendingApproval) {
        self.approval = Some(pending);
        self.show(Overlay::Approval);
    }

    /// Takes the waiting approval, if any, and closes its dialog.
    pub(super) fn take_approval(&mut self) -> Option<PendingApproval> {
        let pending = self.approval.take()?;
        self.close();
        Some(pending)
    }

    /// A key for the open overlay (the approval dialog's go through `App`).
    pub(super) fn handle_key(&mut self, key: KeyEvent, around: &OverlayContext<'_>) -> OverlayKey {
        let Some(overlay) = self.open else {
            return OverlayKey::Stay;
        };
        let page = (around.chat_height as usize).saturating_sub(2).max(1);
        match overlay {
            Overlay::Transcript => {
                let open = self
                    .transcript
                    .as_mut()
                    .is_some_and(|pager| pager.handle_key(key, page));
                if !open {
                    self.transcript = None;
                    self.close();
                }
                OverlayKey::Stay
            }
            Overlay::Resume => self.resume_key(key),
            Overlay::Rewind => self.rewind_key(key),
            Overlay::Models => {
                match self
                    .model_picker
                    .handle_key(key, &around.models.entries, around.provider)
                {
                    PickerKey::Stay => OverlayKey::Stay,
                    PickerKey::Close => {
                        self.close();
                        OverlayKey::Stay
                    }
                    PickerKey::Choose(id) => {
                        self.close();
                        OverlayKey::Model(id)
                    }
                }
            }
            Overlay::Files => {
                let page = (around.chat_height as usize).saturating_sub(4).max(1);
                if !self.files.handle_key(key, around.saved_files, page) {
                    self.close();
                }
                OverlayKey::Stay
            }
            _ => self.read_only_key(overlay, key, page),
        }
    }

    /// Keys of the `/resume` picker: Enter asks the front end to go on from the chosen session.
    fn resume_key(&mut self, key: KeyEvent) -> OverlayKey {
        let Some((sessions, selected)) = self.resume.as_mut() else {
            self.close();
            return OverlayKey::Stay;
        };
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => self.close(),
            KeyCode::Down | KeyCode::Char('j') => {
                *selected = (*selected + 1).min(sessions.len().saturating_sub(1))
            }
            KeyCode::Up | KeyCode::Char('k') => *selected = selected.saturating_sub(1),
            KeyCode::Enter => {
                let path = sessions.get(*selected).map(|session| session.path.clone());
                self.close();
                if let Some(path) = path {
                    return OverlayKey::Resume(path);
                }
            }
            _ => {}
        }
        OverlayKey::Stay
    }

    /// Keys of the `/rewind` picker: Enter returns the conversation to before the chosen prompt.
    fn rewind_key(&mut self, key: KeyEvent) -> OverlayKey {
        let Some((prompts, selected)) = self.rewind.as_mut() else {
            self.close();
            return OverlayKey::Stay;
        };
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => {
                self.close();
                self.rewind = None;
            }
            KeyCode::Up | KeyCode::Char('k') => *selected = selected.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => {
                *selected = (*selected + 1).min(prompts.len().saturating_sub(1))
            }
            KeyCode::Enter => {
                let prompt = *selected;
                let Some(text) = prompts.get(prompt).cloned() else {
                    return OverlayKey::Stay;
                };
                self.close();
                self.rewind = None;
                return OverlayKey::Rewind { prompt, text };
            }
            _ => {}
        }
        OverlayKey::Stay
    }

    /// Keys of an overlay that only shows something: Esc closes it, the help scrolls, and typing
    /// closes it and goes on in the composer.
    fn read_only_key(&mut self, overlay: Overlay, key: KeyEvent, page: usize) -> OverlayKey {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let help = overlay == Overlay::Help;
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => self.close(),
            KeyCode::F(1) if help => self.close(),
            KeyCode::Down if help => self.help_scroll += 1,
            KeyCode::Up if help => self.help_scroll = self.help_scroll.saturating_sub(1),
            KeyCode::PageDown if help => self.help_scroll += page,
            KeyCode::PageUp if help => self.help_scroll = self.help_scroll.saturating_sub(page),
            KeyCode::Home if help => self.help_scroll = 0,
            KeyCode::End if help => self.help_scroll = usize::MAX / 2,
            KeyCode::Char(_) if !ctrl => {
                self.close();
                return OverlayKey::TypeThrough;
            }
            _ => {}
        }
        OverlayKey::Stay
    }

    /// Draws the open overlay over `area`.
    pub(super) fn render(&mut self, around: &OverlayContext<'_>, area: Rect, buf: &mut Buffer) {
        match self.open {
            Some(Overlay::Help) => {
                help::render(area, buf, around.dynamic_commands, &mut self.help_scroll)
            }
            Some(Overlay::Files) => files::render(&self.files, around.saved_files, area, buf),
            Some(Overlay::Cache) => crate::ui::cache::render(self.cache.as_ref(), area, buf),
            Some(Overlay::Resume) => files::render_sessions(self.resume.as_ref(), area, buf),
            Some(Overlay::Cost) => cost::render_summary(self.cost.as_ref(), area, buf),
            Some(Overlay::Approval) => {
                if let Some(pending) = self.approval.as_mut() {
                    crate::ui::approval::render(pending, area, buf);
                }
            }
            Some(Overlay::Transcript) => {
                if let Some(pager) = &self.transcript {
                    files::render_pager(pager, area, buf);
                }
            }
            Some(Overlay::Rewind) => self.render_rewind(area, buf),
            Some(Overlay::Models) => {
                crate::ui::models::render(
                    &self.model_picker,
                    around.models,
                    around.provider,
                    around.model,
                    area,
                    buf,
                );
            }
            Some(Overlay::Config) => {
                let lines: Vec<Line> = self
                    .config_report
                    .iter()
                    .map(|l| Line::raw(l.clone()))
                    .collect();
                list_overlay(" Configuration · Esc to close ", lines, area, buf);
            }
            None => {}
        }
    }

    fn render_rewind(&self, area: Rect, buf: &mut Buffer) {
        let Some((prompts, selected)) = &self.rewind else {
            return;
        };
        let mut lines: Vec<Line> = prompts
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let text = format!("{:>3}. {}", i + 1, p.replace('\n', " ⏎ "));
                let style = if i == *selected {
                    Style::new().fg(Color::Black).bg(Color::LightBlue)
                } else {
                    Style::new()
                };
                Line::styled(text, style)
            })
            .collect();
        if lines.is_empty() {
            lines.push(Line::styled(
                "No prompt in this session yet.",
                Style::new().fg(Color::Gray),
            ));
        }
        lines.push(Line::default());
        lines.push(Line::styled(
            "Enter: go back to before this prompt (its text returns to the composer; files the tools changed since are restored) · Esc close",
            Style::new().fg(Color::DarkGray).add_modifier(Modifier::ITALIC),
        ));
        list_overlay(" Rewind · pick a prompt ", lines, area, buf);
    }
}

/// A centred box with `lines`, wrapped, at most the whole area.
fn list_overlay(title: &str, lines: Vec<Line<'_>>, area: Rect, buf: &mut Buffer) {
    let width = 100.min(area.width);
    let height = (lines.len() as u16 + 2).min(area.height);
    let rect = help::centered(area, width, height);
    Clear.render(rect, buf);
    ratatui::widgets::Paragraph::new(lines)
        .wrap(ratatui::widgets::Wrap { trim: false })
        .block(help::overlay_frame(title, Color::LightBlue))
        .render(rect, buf);
}
