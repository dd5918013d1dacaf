//! The full-screen TUI: panes, overlays and the `App` that owns them.
//!
//! `App` owns every piece of UI state; each pane is a plain struct that renders into a ratatui
//! `Buffer`. The UI keeps display cells and a copy of the meters, never the conversation: all it
//! knows arrives as `AgentEvent`s, all it asks leaves as `Op`s.

pub mod app;
pub mod approval;
pub mod cache;
pub mod chat;
pub mod checklist;
pub mod commands;
pub mod composer;
pub mod cost;
pub mod editor;
mod error;
pub mod export;
pub mod files;
pub mod help;
pub mod highlight;
pub mod history;
pub mod markdown;
pub mod models;
pub mod notify;
pub mod paste;
pub mod popup;
pub mod status;
pub mod text;
pub mod theme;
pub mod tool_panel;
pub mod transcript;

pub use app::App;
pub use error::UiError;
