//! The skills module's one error type: why a skill file's front matter was refused, or why a pin
//! was not saved. Each message names the key (or the file) and what to write instead; the loader
//! prefixes the file's path, so a variant never repeats it. Custom agents share the front matter
//! parser, so `agents` wraps this type rather than copying its messages.

/// Why a skill (or agent) file was refused, or a pin was not saved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SkillError {
    /// The file does not open with a `---` line.
    #[error("no YAML front matter (the file must start with a `---` line)")]
    NoFrontMatter,
    /// The front matter never ends.
    #[error("the front matter is not closed by a `---` line")]
    Unclosed,
    /// A header line that is not `key: value`.
    #[error("line {line}: expected `key: value`, got {text:?}")]
    NotKeyValue { line: usize, text: String },
    /// No `name` key.
    #[error("`name` is missing")]
    NoName,
    /// A `name` that is not one short word.
    #[error("`name` {0:?} must be one word of at most 64 characters (letters, digits, `-`)")]
    BadName(String),
    /// No `description` key.
    #[error("`description` is missing")]
    NoDescription,
    /// A quoted value without its closing quote.
    #[error("`{key}`: unterminated {quote} quote")]
    Unterminated { key: String, quote: char },
    /// A list where text belongs.
    #[error("`{0}` must be text, not a list")]
    NotText(String),
    /// A `[` list not closed on its line.
    #[error("`{0}`: a `[` list must close with `]` on the same line")]
    UnclosedList(String),
    /// A line under a list key that is not `- item`.
    #[error("`{key}` must be a list of `- item` lines (got {line:?})")]
    NotList { key: String, line: String },
    /// The pins file could not be written; the pin still holds in memory.
    #[error("the pin holds for this session but was not saved to {path}: {message}")]
    PinNotSaved { path: String, message: String },
}
