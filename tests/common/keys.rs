//! Driving an `App` by hand: a UI wired to a channel the test reads, and key presses.
#![allow(dead_code)]

use chatcli::protocol::{Mode, Op, OpSender, Submission};
use chatcli::ui::App;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use tokio::sync::mpsc;

/// The agent's end of a UI's ops channel as a test reads it: what the UI asked for, without
/// the ids (`agent_channels` checks those).
pub struct Ops(mpsc::Receiver<Submission>);

impl Ops {
    /// The next op sent, if one is waiting.
    pub fn try_recv(&mut self) -> Result<Op, mpsc::error::TryRecvError> {
        self.0.try_recv().map(|s| s.op)
    }
}

/// An ops channel whose receiving end a test reads.
pub fn ui_channel() -> (OpSender, Ops) {
    let (tx, rx) = chatcli::protocol::op_channel();
    (tx, Ops(rx))
}

/// A UI for `provider` · `model` whose ops the test receives.
pub fn app_for(mode: Mode, provider: &str, model: &str) -> (App, Ops) {
    let (tx, rx) = ui_channel();
    (App::new(tx, mode, provider.into(), model.into()), rx)
}

/// A plain key press.
pub fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

/// Ctrl plus a letter.
pub fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

/// Types `text` one key at a time.
pub fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        app.handle_key(key(KeyCode::Char(c)));
    }
}

/// Every op sent so far.
pub fn drain(ops: &mut Ops) -> Vec<Op> {
    let mut out = Vec::new();
    while let Ok(op) = ops.try_recv() {
        out.push(op);
    }
    out
}
