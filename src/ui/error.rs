//! The UI's one error type: what a pane or a command of the TUI could not do, worded for the
//! notice line the user reads (`/copy`, Ctrl+X's editor, `CHATCLI_NOTIFY`). What a newcomer gets
//! wrong: these never stop the session; the app shows them as a notice and goes on, so each
//! message must say what to type or set instead.

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
}
