//! chatcli: a full-screen terminal agent that keeps the token bill of long sessions low.
//!
//! The crate is split along one seam: the agent task (`agent`, `provider`, `tools`, `prompt`)
//! owns the conversation, the front ends (`ui` for the TUI, `exec` for headless runs) own only
//! what they show, and `protocol` is the typed channel between them.

// Data from the network, the disk or the user is never unwrapped: outside tests, a panic
// there is a bug this lint catches at build time.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]
// A string index that lands inside a character panics: text from outside must not (#34).
#![deny(clippy::string_slice)]

pub mod agent;
pub mod agents;
pub mod bench;
pub mod cli;
pub mod clock;
pub mod command_files;
pub mod config;
pub mod conversation;
pub mod cost;
pub mod env;
pub mod exec;
pub mod files;
pub mod hooks;
pub mod logging;
pub mod mcp;
pub mod memory;
pub mod private_fs;
pub mod process;
pub mod project;
pub mod prompt;
pub mod protocol;
pub mod provider;
pub mod rules;
pub mod sandbox;
pub mod secrets;
pub mod session;
pub mod session_log;
pub mod skills;
pub mod tokens;
pub mod tools;
pub mod tui;
pub mod ui;
pub mod user_settings;
