//! Text helpers for the panes: width-aware wrapping of styled spans, truncation, compact numbers.
//!
//! Widths are terminal columns (unicode-width), never bytes or chars: a CJK character takes two
//! columns and an accent none. Wrapping keeps each span's style across the break.

// Every text on screen is cut and wrapped here: no index that could panic on it (#34).
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// `999`, `1.2k`, `12.3k`, `123k`, `1.2M`: token counts as the meters show them.
pub fn compact(n: u64) -> String {
    match n {
        0..=999 => n.to_string(),
        1_000..=99_999 => trim_zero(format!("{:.1}k", n as f64 / 1_000.0)),
        100_000..=999_999 => format!("{}k", n / 1_000),
        _ => trim_zero(format!("{:.1}M", n as f64 / 1_000_000.0)),
    }
}

fn trim_zero(s: String) -> String {
    s.replace(".0k", "k").replace(".0M", "M")
}

/// The colour of a unified-diff line (additions, deletions, hunk headers), or `None` for context.
pub fn diff_style(line: &str) -> Option<Style> {
    if line.starts_with("+++") || line.starts_with("---") {
        Some(Style::new().fg(Color::White))
    } else if line.starts_with("@@") {
        Some(Style::new().fg(Color::Cyan))
    } else if line.starts_with('+') {
        Some(Style::new().fg(Color::Green))
    } else if line.starts_with('-') {
        Some(Style::new().fg(Color::Red))
    } else {
        None
    }
}

/// `N↑ M↓`.
pub fn meter(input: u64, output: u64) -> String {
    format!("{}↑ {}↓", compact(input), compact(output))
}

/// The text cut to `width` columns, with `…` when something was cut.
pub fn truncate(text: &str, width: usize) -> String {
    if text.width() <= width {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for ch in text.chars() {
        let w = ch.width().unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        out.push(ch);
        used += w;
    }
    out.push('…');
    out
}

/// Styled spans cut to `width` columns; when something was cut the last column is a `…` in
/// `marker`'s style.
pub fn truncate_spans(spans: &[Span<'static>], width: usize, marker: Style) -> Vec<Span<'static>> {
    if spans_width(spans) <= width {
        return spans.to_vec();
    }
    if width == 0 {
        return Vec::new();
    }
    let room = width - 1;
    let mut out = Vec::new();
    let mut used = 0;
    for span in spans {
        let w = span.content.width();
        if used + w <= room {
            out.push(span.clone());
            used += w;
            continue;
        }
        let mut cut = String::new();
        for ch in span.content.chars() {
            let cw = ch.width().unwrap_or(0);
            if used + cw > room {
                break;
            }
            cut.push(ch);
            used += cw;
        }
        if !cut.is_empty() {
            out.push(Span::styled(cut, span.style));
        }
        break;
    }
    out.push(Span::styled("…", marker));
    out
}

/// The columns styled spans take.
pub fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|s| s.content.width()).sum()
}

/// Takes every colour out of a drawn frame (`NO_COLOR`), keeping bold, italic and underline; a
/// cell that stood out by its background (a selection, the mode badge) is shown reversed instead.
pub fn strip_colors(buf: &mut Buffer) {
    for cell in buf.content.iter_mut() {
        if cell.bg != Color::Reset {
            cell.modifier.insert(Modifier::REVERSED);
        }
        cell.fg = Color::Reset;
        cell.bg = Color::Reset;
    }
}

/// Word-wraps styled spans to `width` columns; continuation lines start with `indent` spaces.
pub fn wrap_spans(spans: &[Span<'static>], width: usize, indent: usize) -> Vec<Line<'static>> {
    let width = width.max(1);
    let indent = if indent >= width { 0 } else { indent };
    let mut lines: Vec<Line<'static>> = Vec::new();
    let mut current: Vec<Span<'static>> = Vec::new();
    let mut used = 0usize;

    let flush = |current: &mut Vec<Span<'static>>, lines: &mut Vec<Line<'static>>| {
        lines.push(Line::from(std::mem::take(current)));
    };

    for span in spans {
        for word in split_words(&span.content) {
            let w = word.width();
            let trimmed_w = word.trim_end().width();
            if used + trimmed_w > width && used > indent_if(lines.is_empty(), indent) {
                flush(&mut current, &mut lines);
                current.push(Span::raw(" ".repeat(indent)));
                used = indent;
                if word.trim().is_empty() {
                    continue;
                }
            }
            if used + trimmed_w <= width {
                // Blanks that would run past the edge are dropped: a line never overflows, so
                // a frame's right border drawn after it stays in place.
                let word = if used + w > width {
                    word.trim_end()
                } else {
                    word
                };
                current.push(Span::styled(word.to_string(), span.style));
                used += word.width();
                continue;
            }
            // A word longer than a whole line: split it by columns.
            for ch in word.chars() {
                let cw = ch.width().unwrap_or(0);
                if used + cw > width {
                    flush(&mut current, &mut lines);
                    // A wide character that does not fit after the indent starts the line.
                    let indent = if indent + cw > width { 0 } else { indent };
                    current.push(Span::raw(" ".repeat(indent)));
                    used = indent;
                }
                push_char(&mut current, ch, span.style);
                used += cw;
            }
        }
    }
    if !current.is_empty() || lines.is_empty() {
        lines.push(Line::from(current));
    }
    lines
}

fn indent_if(first: bool, indent: usize) -> usize {
    if first { 0 } else { indent }
}

fn push_char(current: &mut Vec<Span<'static>>, ch: char, style: Style) {
    match current.last_mut() {
        Some(last) if last.style == style => last.content.to_mut().push(ch),
        _ => current.push(Span::styled(ch.to_string(), style)),
    }
}

/// Splits text into words, each with its trailing whitespace.
fn split_words(text: &str) -> impl Iterator<Item = &str> {
    text.split_inclusive(char::is_whitespace)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| {
                l.spans
                    .iter()
                    .map(|s| s.content.as_ref())
                    .collect::<String>()
            })
            .collect()
    }

    #[test]
    fn compact_numbers() {
        assert_eq!(compact(0), "0");
        assert_eq!(compact(999), "999");
        assert_eq!(compact(1_000), "1k");
        assert_eq!(compact(12_345), "12.3k");
        assert_eq!(compact(123_456), "123k");
        assert_eq!(compact(1_250_000), "1.2M");
        assert_eq!(meter(12_345, 80), "12.3k↑ 80↓");
    }

    #[test]
    fn wraps_words_and_long_words() {
        let spans = vec![Span::raw("the quick brown fox jumps")];
        assert_eq!(
            plain(&wrap_spans(&spans, 10, 0)),
            vec!["the quick ", "brown fox ", "jumps"]
        );
        let spans = vec![Span::raw("abcdefghijkl")];
        assert_eq!(
            plain(&wrap_spans(&spans, 5, 0)),
            vec!["abcde", "fghij", "kl"]
        );
        let spans = vec![Span::raw("• one two three")];
        assert_eq!(
            plain(&wrap_spans(&spans, 8, 2)),
            vec!["• one ", "  two ", "  three"]
        );
    }

    #[test]
    fn spans_are_cut_with_an_ellipsis_keeping_their_styles() {
        let bold = Style::new().add_modifier(Modifier::BOLD);
        let spans = vec![Span::styled("fn ", bold), Span::raw("main()")];
        assert_eq!(truncate_spans(&spans, 9, Style::new()), spans);
        let cut = truncate_spans(&spans, 6, Style::new());
        assert_eq!(plain(&[Line::from(cut.clone())]), vec!["fn ma…"]);
        assert_eq!(cut[0].style, bold);
        assert_eq!(spans_width(&truncate_spans(&spans, 1, Style::new())), 1);
    }

    #[test]
    fn stripping_colours_keeps_modifiers_and_reverses_highlights() {
        let mut buf = Buffer::empty(ratatui::layout::Rect::new(0, 0, 3, 1));
        buf[(0, 0)].set_style(Style::new().fg(Color::Red).add_modifier(Modifier::BOLD));
        buf[(1, 0)].set_style(Style::new().fg(Color::Black).bg(Color::Yellow));
        strip_colors(&mut buf);
        assert_eq!(buf[(0, 0)].fg, Color::Reset);
        assert!(buf[(0, 0)].modifier.contains(Modifier::BOLD));
        assert_eq!(buf[(1, 0)].bg, Color::Reset);
        assert!(buf[(1, 0)].modifier.contains(Modifier::REVERSED));
        assert!(!buf[(2, 0)].modifier.contains(Modifier::REVERSED));
    }

    #[test]
    fn a_word_that_fills_the_line_drops_its_trailing_blank() {
        let spans = vec![Span::raw("abcd efgh")];
        let lines = wrap_spans(&spans, 4, 0);
        assert_eq!(plain(&lines), vec!["abcd", "efgh"]);
        assert!(lines.iter().all(|l| l.width() <= 4));
    }

    #[test]
    fn wide_characters_count_two_columns() {
        let spans = vec![Span::raw("日本語のテキスト")];
        let lines = wrap_spans(&spans, 6, 0);
        assert!(lines.iter().all(|l| l.width() <= 6));
        assert_eq!(truncate("日本語", 4), "日…");
    }
}
