//! The front end's one error type (`ui` and the terminal loop in `tui`): what a pane or a
//! command of the TUI could not do, worded for the notice line the user reads (`/copy`, Ctrl+X's
//! editor, `/provider`, `CHATCLI_NOTIFY`). What a newcomer gets wrong: apart from a terminal that
//! fails (`Io`, which ends the TUI), these never stop the session; the app shows them as a
//! notice and goes on, so each message must say what to type or set instead.

/// Why a UI action could not be done.
#[derive(Debug, thiserror::Error)]
pub enum UiError {
    /// The draft's temporary file could not be written or read back.
    #[error("cannot prepare the draft for the editor: {0}")]
    EditorFile(std::io::Error),
    /// The editor command could not be started.
    #[error("cannot start the editor `{editor}` (set VISUAL or EDITOR): {source}")]
    EditorStart {
        editor: String,
        source: std::io::Error,
    },
    /// The editor exited with an error; the draft is kept.
    #[error("the editor `{editor}` exited with {status}: the draft is unchanged")]
    EditorFailed { editor: String, status: String },
    /// `/copy` before any answer.
    #[error("nothing to copy yet: no answer in this conversation")]
    NothingToCopy,
    /// `/copy N` past the answer's code blocks.
    #[error(
        "the last answer has {count} code block(s); /copy N takes 1 to {}",
        (*count).max(1)
    )]
    NoSuchBlock { count: usize },
    /// `/copy` with something that is not a number.
    #[error("/copy takes a code block's number (got \"{0}\")")]
    BlockNumber(String),
    /// `CHATCLI_NOTIFY` is not one of the four.
    #[error("CHATCLI_NOTIFY must be bell, osc9, osc777 or off (got \"{0}\")")]
    Notify(String),
    /// The terminal, or the session log read back for a switch, failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// `/provider` or `/model ID` in a session started without a way to switch.
    #[error("switching is not available in this session")]
    NoSwitch,
    /// `/provider` or `/model ID` in a session that keeps no log to carry over.
    #[error("this session keeps no log to go on from")]
    NoLog,
    /// The provider switched to cannot be set up.
    #[error(transparent)]
    Switch(#[from] crate::session::SetupError),
}
