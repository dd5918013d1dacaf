//! Code blocks as styled lines: diff colours for `diff`/`patch`, syntect's highlighting for a
//! language it knows (its default syntaxes, a dark or light theme from `theme::background`),
//! plain text otherwise.
//!
//! Mental model: the syntax set and the theme are loaded on the first highlighted block, not at
//! startup (a `OnceLock`), so a session that never shows code pays nothing for them. Highlighting
//! is the costly step of drawing an answer, and an answer is laid out again on every streamed
//! delta: a small per-thread cache keeps each recent block's lines with syntect's state after its
//! last complete line, so a block that is unchanged is shared (an `Rc`), and a block that grows
//! (while it streams) is highlighted from where it stopped. With the pure-Rust regex engine a
//! line costs a few hundred microseconds, so this matters. Very large blocks (over `MAX_BYTES`,
//! or with a line over `MAX_LINE_BYTES`) are drawn plain: minified text can take seconds.

// Code the model or a file wrote: no index that could panic on it (#34).
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::OnceLock;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;
use syntect::highlighting::{
    FontStyle, HighlightIterator, HighlightState, Highlighter, Theme, ThemeSet,
};
use syntect::parsing::{ParseState, ScopeStack, SyntaxReference, SyntaxSet};

use super::text::diff_style;
use super::theme::{self, Background};

/// Blocks larger than this are drawn plain.
const MAX_BYTES: usize = 256 * 1024;
/// Blocks with a line longer than this are drawn plain.
const MAX_LINE_BYTES: usize = 4 * 1024;
/// Highlighted blocks kept per thread.
const CACHE_ENTRIES: usize = 16;

/// One line of a code block.
pub type CodeLine = Vec<Span<'static>>;

/// The language a fence's info string names: its first word (`rust,ignore` → `rust`).
pub fn fence_language(info: &str) -> &str {
    info.split(|c: char| c.is_whitespace() || c == ',' || c == '{')
        .next()
        .unwrap_or("")
}

/// The lines of a code block in `lang`, styled; tabs become four spaces. Shared with the cache
/// (see the module note), hence the `Rc`.
pub fn highlight(lang: &str, code: &str) -> Rc<Vec<CodeLine>> {
    let lang = lang.trim();
    if matches!(
        lang.to_ascii_lowercase().as_str(),
        "diff" | "patch" | "udiff"
    ) {
        return Rc::new(
            split_lines(code)
                .map(|line| {
                    let line = untab(line);
                    let style = diff_style(&line).unwrap_or_default();
                    vec![Span::styled(line, style)]
                })
                .collect(),
        );
    }
    let too_big = code.len() > MAX_BYTES || code.lines().any(|l| l.len() > MAX_LINE_BYTES);
    if lang.is_empty() || too_big {
        return plain(code);
    }
    let Some(syntax) = syntax_for(lang) else {
        return plain(code);
    };
    highlight_cached(syntax, code).unwrap_or_else(|| plain(code))
}

fn plain(code: &str) -> Rc<Vec<CodeLine>> {
    Rc::new(
        split_lines(code)
            .map(|line| vec![Span::raw(untab(line))])
            .collect(),
    )
}

/// The lines of a block's text (a final newline ends the last line, it does not start one).
fn split_lines(code: &str) -> impl Iterator<Item = &str> {
    code.strip_suffix('\n')
        .unwrap_or(code)
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
}

fn untab(line: &str) -> String {
    line.replace('\t', "    ")
}

fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(SyntaxSet::load_defaults_newlines)
}

fn theme() -> &'static Theme {
    static THEME: OnceLock<Theme> = OnceLock::new();
    THEME.get_or_init(|| {
        let name = match theme::background() {
            Background::Dark => "base16-ocean.dark",
            Background::Light => "InspiredGitHub",
        };
        // Only the chosen theme is kept; the others are dropped with the set.
        ThemeSet::load_defaults()
            .themes
            .remove(name)
            .unwrap_or_default()
    })
}

/// The syntax for a fence's language: by extension or name, then a few common aliases that the
/// default set lacks (TypeScript is drawn as JavaScript, a shell session as Bash).
fn syntax_for(lang: &str) -> Option<&'static SyntaxReference> {
    let set = syntaxes();
    let lower = lang.to_ascii_lowercase();
    set.find_syntax_by_token(&lower).or_else(|| {
        let alias = match lower.as_str() {
            "typescript" | "ts" | "tsx" | "jsx" | "javascript" | "node" => "js",
            "shell" | "console" | "zsh" | "sh" | "bash" | "shellscript" => "sh",
            "jsonc" | "json5" => "json",
            "yml" => "yaml",
            "golang" => "go",
            "c++" => "cpp",
            "objc" | "objective-c" => "m",
            "py3" | "python3" => "py",
            _ => return None,
        };
        set.find_syntax_by_token(alias)
    })
}

/// syntect's state between two lines.
type State = (ParseState, HighlightState);

/// A block highlighted earlier: its lines, the text of its complete lines (`done`) with
/// syntect's state after them, and its unfinished last line (`tail`, drawn but not in `done`)
/// with the state after it as if it ended there (`tail_state`): while code streams, the tail of
/// one frame is most often finished, unchanged, by the next.
struct Entry {
    syntax: String,
    done: String,
    tail: String,
    lines: Rc<Vec<CodeLine>>,
    state: Option<State>,
    tail_state: Option<State>,
}

thread_local! {
    static CACHE: RefCell<Vec<Entry>> = const { RefCell::new(Vec::new()) };
}

fn highlighter() -> &'static Highlighter<'static> {
    static HIGHLIGHTER: OnceLock<Highlighter<'static>> = OnceLock::new();
    HIGHLIGHTER.get_or_init(|| Highlighter::new(theme()))
}

fn highlight_cached(syntax: &SyntaxReference, code: &str) -> Option<Rc<Vec<CodeLine>>> {
    CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        // The longest earlier block in this syntax that this one starts with.
        let found = cache
            .iter()
            .enumerate()
            .filter(|(_, e)| e.syntax == syntax.name && code.starts_with(e.done.as_str()))
            .max_by_key(|(_, e)| e.done.len())
            .map(|(i, _)| i);
        let mut entry = match found {
            Some(i) => cache.remove(i),
            None => {
                if cache.len() >= CACHE_ENTRIES {
                    cache.remove(0);
                }
                Entry {
                    syntax: syntax.name.clone(),
                    done: String::new(),
                    tail: String::new(),
                    lines: Rc::new(Vec::new()),
                    state: None,
                    tail_state: None,
                }
            }
        };
        if code.len() == entry.done.len() + entry.tail.len() && code.ends_with(&entry.tail) {
            let lines = Rc::clone(&entry.lines);
            cache.push(entry);
            return Some(lines);
        }
        extend(&mut entry, syntax, code)?;
        let lines = Rc::clone(&entry.lines);
        // The block grew (or is new): its entry moves on, an older prefix is not wanted.
        cache.push(entry);
        Some(lines)
    })
}

/// Highlights what `code` has past `entry.done`, from the state saved there.
fn extend(entry: &mut Entry, syntax: &SyntaxReference, code: &str) -> Option<()> {
    let set = syntaxes();
    let highlighter = highlighter();
    let lines = Rc::make_mut(&mut entry.lines);
    if !entry.tail.is_empty() {
        // `code` starts with `entry.done` (the cache picks entries so).
        let after = code.strip_prefix(entry.done.as_str())?;
        let finished = after
            .strip_prefix(entry.tail.as_str())
            .is_some_and(|rest| rest.starts_with('\n'));
        match entry.tail_state.take() {
            Some(state) if finished => {
                entry.done.push_str(&entry.tail);
                entry.done.push('\n');
                entry.state = Some(state);
            }
            _ => {
                lines.pop();
            }
        }
        entry.tail.clear();
    }
    entry.tail_state = None;
    let (mut parse, mut style): State = entry.state.take().unwrap_or_else(|| {
        (
            ParseState::new(syntax),
            HighlightState::new(highlighter, ScopeStack::new()),
        )
    });
    let rest = code.strip_prefix(entry.done.as_str())?;
    for line in rest.split_inclusive('\n') {
        if line.ends_with('\n') {
            lines.push(styled_line(&mut parse, &mut style, line, set, highlighter)?);
            entry.done.push_str(line);
        } else {
            // The unfinished last line (still streaming): highlighted as if it ended here, from
            // a copy of the state, so the next delta continues from the last complete line.
            let (mut p, mut s) = (parse.clone(), style.clone());
            let ended = format!("{line}\n");
            lines.push(styled_line(&mut p, &mut s, &ended, set, highlighter)?);
            entry.tail.push_str(line);
            entry.tail_state = Some((p, s));
        }
    }
    entry.state = Some((parse, style));
    Some(())
}

/// One line highlighted; `None` when syntect fails (the block is then drawn plain).
fn styled_line(
    parse: &mut ParseState,
    state: &mut HighlightState,
    line: &str,
    set: &SyntaxSet,
    highlighter: &Highlighter<'_>,
) -> Option<CodeLine> {
    let ops = parse.parse_line(line, set).ok()?;
    let mut spans: CodeLine = Vec::new();
    for (style, text) in HighlightIterator::new(state, &ops, line, highlighter) {
        let text = text.trim_end_matches(['\n', '\r']);
        if text.is_empty() {
            continue;
        }
        let style = convert(style);
        let text = untab(text);
        match spans.last_mut() {
            Some(last) if last.style == style => last.content.to_mut().push_str(&text),
            _ => spans.push(Span::styled(text, style)),
        }
    }
    Some(spans)
}

/// A syntect style as a ratatui one: the foreground only (the terminal keeps its background).
fn convert(style: syntect::highlighting::Style) -> Style {
    let fg = style.foreground;
    let mut out = Style::new();
    if fg.a > 0 {
        out = out.fg(if theme::truecolor() {
            Color::Rgb(fg.r, fg.g, fg.b)
        } else {
            Color::Indexed(theme::xterm_256(fg.r, fg.g, fg.b))
        });
    }
    if style.font_style.contains(FontStyle::BOLD) {
        out = out.add_modifier(Modifier::BOLD);
    }
    if style.font_style.contains(FontStyle::ITALIC) {
        out = out.add_modifier(Modifier::ITALIC);
    }
    if style.font_style.contains(FontStyle::UNDERLINE) {
        out = out.add_modifier(Modifier::UNDERLINED);
    }
    out
}

#[cfg(test)]
#[allow(clippy::string_slice)] // fixed ASCII fixtures, cut at known places
mod tests {
    use super::*;

    fn text(lines: &[CodeLine]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    fn fg_of(lines: &[CodeLine], line: usize, word: &str) -> Option<Color> {
        lines[line]
            .iter()
            .find(|s| s.content.contains(word))
            .and_then(|s| s.style.fg)
    }

    #[test]
    fn rust_keywords_get_a_colour_other_than_identifiers() {
        let lines = highlight("rust", "fn main() {\n\tlet x = 1;\n}\n");
        assert_eq!(text(&lines), vec!["fn main() {", "    let x = 1;", "}"]);
        let keyword = fg_of(&lines, 0, "fn").expect("fn is coloured");
        assert_ne!(Some(keyword), fg_of(&lines, 0, "main"));
        assert_eq!(fg_of(&lines, 1, "let"), Some(keyword));
    }

    #[test]
    fn diff_blocks_use_the_diff_colours_and_unknown_languages_stay_plain() {
        let lines = highlight("diff", "@@ -1 +1 @@\n-old\n+new\n ctx\n");
        assert_eq!(lines[0][0].style, diff_style("@@").unwrap_or_default());
        assert_eq!(lines[1][0].style.fg, Some(Color::Red));
        assert_eq!(lines[2][0].style.fg, Some(Color::Green));
        assert_eq!(lines[3][0].style, Style::new());
        let lines = highlight("no-such-language", "x = 1\n");
        assert_eq!(*lines, vec![vec![Span::raw("x = 1")]]);
    }

    #[test]
    fn a_growing_block_highlights_the_same_as_the_whole_block_at_once() {
        let code = "fn a() -> u8 {\n    /* open\n still comment */ 1\n}\nstruct S;\n";
        let whole = highlight("rs", code);
        for cut in (0..code.len()).filter(|&i| code.is_char_boundary(i)) {
            let _ = highlight("rs", &code[..cut]);
        }
        // The cache now holds the streamed state; the full block from it must match.
        assert_eq!(highlight("rs", code), whole);
        let streamed = highlight("rs", &code[..code.len() - 3]);
        assert_eq!(streamed[..4], whole[..4]);
    }

    #[test]
    fn fence_info_strings_name_their_language_by_the_first_word() {
        assert_eq!(fence_language("rust,ignore"), "rust");
        assert_eq!(fence_language("python title=\"x.py\""), "python");
        assert_eq!(fence_language(""), "");
        assert!(syntax_for("ts").is_some());
        assert!(syntax_for("bash").is_some());
    }
}
