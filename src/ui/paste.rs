//! What a paste is: text for the composer, or image files the terminal pasted as their paths
//! (a drag from a file manager, a copied path). Terminals paste a path in one of a few shapes:
//! plain (`/home/me/shot.png`), quoted (`'/home/me/my shot.png'`, GNOME and KDE), with
//! backslash-escaped spaces (`/Users/me/my\ shot.png`, macOS Terminal and iTerm2), or as a
//! `file://` URL with `%20`s; several dragged files come separated by spaces.
//!
//! A paste is taken for images only when every word of it is an absolute path to an existing
//! file named like an image; anything else stays text, so pasting a path into a sentence, or a
//! path to a missing file, types it as usual.

// Pasted text is outside input: no index that could panic on it (#34).
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

use std::path::PathBuf;

/// The image paths a paste consists of, when it is nothing else; `None` for text.
pub fn image_paths(text: &str, exists: impl Fn(&std::path::Path) -> bool) -> Option<Vec<PathBuf>> {
    let words = shell_words(text.trim())?;
    if words.is_empty() {
        return None;
    }
    let paths: Vec<PathBuf> = words
        .into_iter()
        .map(|w| {
            PathBuf::from(
                w.strip_prefix("file://")
                    .map_or_else(|| w.clone(), percent_decode),
            )
        })
        .collect();
    paths
        .iter()
        .all(|p| p.is_absolute() && crate::prompt::images::looks_like_image(p) && exists(p))
        .then_some(paths)
}

/// Splits `text` as a shell would for words: quotes group, a backslash escapes the next
/// character outside single quotes; `None` when a quote is left open.
fn shell_words(text: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') | (None, '\\') => {
                word.push(chars.next()?);
                in_word = true;
            }
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return None;
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

/// `%20` and friends decoded (a `file://` URL's path); a broken escape is kept as written.
fn percent_decode(text: &str) -> String {
    let mut bytes = Vec::with_capacity(text.len());
    let mut rest = text.as_bytes().iter().copied();
    while let Some(b) = rest.next() {
        if b != b'%' {
            bytes.push(b);
            continue;
        }
        let hex: Vec<u8> = rest.clone().take(2).collect();
        match std::str::from_utf8(&hex)
            .ok()
            .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            Some(byte) if hex.len() == 2 => {
                bytes.push(byte);
                rest.nth(1);
            }
            _ => bytes.push(b),
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(text: &str) -> Option<Vec<String>> {
        image_paths(text, |_| true).map(|ps| ps.iter().map(|p| p.display().to_string()).collect())
    }

    #[test]
    fn each_terminals_shape_of_a_pasted_path_is_read() {
        let cases = [
            ("/home/me/shot.png", vec!["/home/me/shot.png"]),
            ("  /home/me/shot.png\n", vec!["/home/me/shot.png"]),
            ("'/home/me/my shot.png'", vec!["/home/me/my shot.png"]),
            ("\"/home/me/my shot.JPG\"", vec!["/home/me/my shot.JPG"]),
            (
                "/Users/me/my\\ screen\\ shot.png",
                vec!["/Users/me/my screen shot.png"],
            ),
            (
                "file:///home/me/my%20shot.webp",
                vec!["/home/me/my shot.webp"],
            ),
            (
                "'/tmp/a.png' '/tmp/b b.gif'",
                vec!["/tmp/a.png", "/tmp/b b.gif"],
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(
                paths(text),
                Some(expected.iter().map(|s| s.to_string()).collect()),
                "{text:?}"
            );
        }
    }

    #[test]
    fn anything_else_stays_text() {
        for text in [
            "look at /home/me/shot.png",
            "shot.png",
            "/home/me/notes.txt",
            "'/home/me/open quote.png",
            "",
            "/home/me/shot.png and more",
        ] {
            assert_eq!(paths(text), None, "{text:?}");
        }
        assert_eq!(
            image_paths("/nowhere/shot.png", |_| false),
            None,
            "a missing file is text"
        );
    }
}
