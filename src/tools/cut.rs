//! How a tool says it cut its result: one first line, `[cut: …]`, written by `Cut::line`.
//!
//! Every tool result that shows less than the whole (a command's head and tail, a page past its
//! cap, a file past `read_file`'s 40,000 characters, a search stopped at its limit, a listing
//! stopped at its entries) starts with this line: what is shown, how large the whole is, where
//! the whole (or the part kept) is saved when it is, and how to read on. The model reads a result
//! from the top and may act on it before the end: a note at the bottom of 40,000 characters, or
//! at the end of a saved file, arrives after the conclusions. A marker may still stand where the
//! gap is (`[... N bytes omitted ...]`), but the first line is the one that must say it.
//! `tests/suite/cuts.rs` drives every tool past its cap and checks the first line.

use std::path::{Path, PathBuf};

/// How every cut result starts.
pub const PREFIX: &str = "[cut: ";

/// What a cut result shows and what it left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    /// What is shown (`the first 12,000 and last 4,000 characters`).
    shown: String,
    /// How large the whole is (`5,000,000 bytes`), when known.
    whole: Option<String>,
    /// What was saved and where (`the whole output`, its path).
    saved: Vec<(String, PathBuf)>,
    /// How to see the rest (`read it with read_file`), when there is a way.
    read_on: Option<String>,
}

impl Cut {
    /// A cut that shows `shown`.
    pub fn showing(shown: impl Into<String>) -> Self {
        Cut {
            shown: shown.into(),
            whole: None,
            saved: Vec::new(),
            read_on: None,
        }
    }

    /// The whole's size, in words (`5,000,000 bytes`, `lines 1-90,000`).
    pub fn of(mut self, whole: impl Into<String>) -> Self {
        self.whole = Some(whole.into());
        self
    }

    /// `what` (`the whole stdout`) is saved at `path`.
    pub fn saved(mut self, what: impl Into<String>, path: &Path) -> Self {
        self.saved.push((what.into(), path.to_path_buf()));
        self
    }

    /// How to read on (`read them with start=812`).
    pub fn read_on(mut self, how: impl Into<String>) -> Self {
        self.read_on = Some(how.into());
        self
    }

    /// The first line of the result: `[cut: shown … of …; … saved at …; …]`.
    pub fn line(&self) -> String {
        let mut line = format!("{PREFIX}shown {}", self.shown);
        if let Some(whole) = &self.whole {
            line.push_str(&format!(" of {whole}"));
        }
        for (what, path) in &self.saved {
            line.push_str(&format!("; {what} is saved at {}", path.display()));
        }
        if let Some(how) = &self.read_on {
            line.push_str(&format!("; {how}"));
        }
        line.push(']');
        line
    }

    /// `body` under the cut's line.
    pub fn above(&self, body: &str) -> String {
        format!("{}\n{body}", self.line())
    }
}

/// `n` with thousands separators (`5,000,000`): sizes the model reads at a glance.
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_says_what_is_shown_of_what_and_where_the_rest_is() {
        let cut = Cut::showing("the first 12,000 and last 4,000 characters")
            .of(format!("{} bytes", count(5_000_000)))
            .saved("the whole stdout", Path::new("/s/command_1.txt"))
            .read_on("read it with read_file or search_files");
        assert_eq!(
            cut.line(),
            "[cut: shown the first 12,000 and last 4,000 characters of 5,000,000 bytes; \
             the whole stdout is saved at /s/command_1.txt; read it with read_file or search_files]"
        );
        assert_eq!(cut.above("body"), format!("{}\nbody", cut.line()));
        assert_eq!(
            Cut::showing("200 matches").line(),
            "[cut: shown 200 matches]"
        );
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1000), "1,000");
        assert_eq!(count(10_485_760), "10,485,760");
    }
}
