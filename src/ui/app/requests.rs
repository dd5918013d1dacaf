//! What the UI asks of the front end that owns the terminal and the session: quit, a frame
//! later than now, a session to resume or start afresh, a provider or model to switch to, a
//! draft to open in the external editor, a suspend (Ctrl+Z), bytes to write to the terminal itself.
//!
//! Each request but `quit` is taken once (`take_*`): the front end acts on it and the UI forgets
//! it. The UI never does these itself, since they outlive the `App` or need the raw terminal.

use std::path::PathBuf;
use std::time::Instant;

/// The requests waiting for the front end.
#[derive(Debug, Default)]
pub struct Requests {
    /// The user asked to quit (Ctrl+C twice, Ctrl+D, `/quit`).
    pub(super) quit: bool,
    /// When the next frame is wanted, if later than now (notice expiry, a retry's countdown).
    pub(super) wake: Option<Instant>,
    /// `/resume`: the session log to go on from.
    pub(super) resume: Option<PathBuf>,
    /// `/new`: start a fresh session.
    pub(super) new_session: bool,
    /// `/provider NAME` or `/model ID`: (provider, model) to switch to.
    pub(super) switch: Option<(Option<String>, Option<String>)>,
    /// Ctrl+X: the draft to open in `$VISUAL`/`$EDITOR`.
    pub(super) editor: Option<String>,
    /// Ctrl+Z: hand the terminal back to the shell and stop until `fg`.
    pub(super) suspend: bool,
    /// Bytes for the terminal itself (an OSC 52 clipboard write, a notification), sent between
    /// frames.
    pub(super) terminal_write: Option<String>,
}

impl Requests {
    /// Queues `bytes` for the terminal after what is already queued.
    pub(super) fn write_terminal(&mut self, bytes: String) {
        self.terminal_write
            .get_or_insert_with(String::new)
            .push_str(&bytes);
    }
}
