//! Markdown to styled, wrapped lines (pulldown-cmark), for the chat pane.
//!
//! Rendering happens in two steps: `parse` turns the source into logical lines of styled spans
//! (one per paragraph line, list item, code line), each with the indent its continuation lines
//! take; `wrap` cuts them to a width. The chat pane caches the result per width, so a message is
//! parsed again only when its text changes (while it streams).

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use super::text::wrap_spans;

/// A line before wrapping: its spans, and the indent of its continuation lines.
#[derive(Debug, Clone, PartialEq)]
pub struct LogicalLine {
    pub spans: Vec<Span<'static>>,
    pub indent: usize,
}

/// Renders markdown to lines wrapped at `width` columns.
pub fn render(source: &str, width: usize, base: Style) -> Vec<Line<'static>> {
    parse(source, base)
        .iter()
        .flat_map(|l| wrap_spans(&l.spans, width, l.indent))
        .collect()
}

struct List {
    next: Option<u64>,
}

/// Parses markdown into logical lines.
pub fn parse(source: &str, base: Style) -> Vec<LogicalLine> {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut out: Vec<LogicalLine> = Vec::new();
    let mut current: Vec<Span<'static>> = Vec::new();
    let mut styles: Vec<Style> = vec![base];
    let mut lists: Vec<List> = Vec::new();
    let mut quote = 0usize;
    let mut in_code = false;
    let mut prefix_len = 0usize;
    let mut pending_blank = false;
    let mut link_url: Option<String> = None;

    let style = |styles: &Vec<Style>| styles.last().copied().unwrap_or(base);

    macro_rules! flush {
        () => {
            if !current.is_empty() {
                out.push(LogicalLine {
                    spans: std::mem::take(&mut current),
                    indent: prefix_len,
                });
            }
        };
    }
    macro_rules! start_block {
        ($prefix:expr, $len:expr) => {{
            if pending_blank && !out.is_empty() {
                out.push(LogicalLine {
                    spans: Vec::new(),
                    indent: 0,
                });
            }
            pending_blank = false;
            let quote_prefix = "▌ ".repeat(quote);
            let mut p = quote_prefix.clone();
            p.push_str($prefix);
            prefix_len = quote * 2 + $len;
            if !p.is_empty() {
                current.push(Span::styled(p, Style::new().fg(Color::DarkGray)));
            }
        }};
    }

    for event in Parser::new_ext(source, options) {
        match event {
            Event::Start(tag) => match tag {
                Tag::Paragraph if current.is_empty() => {
                    let indent = " ".repeat(lists.len() * 2);
                    start_block!(&indent, indent.len());
                }
                Tag::Heading { level, .. } => {
                    flush!();
                    start_block!("", 0);
                    let marker = match level {
                        HeadingLevel::H1 => "# ",
                        HeadingLevel::H2 => "## ",
                        _ => "### ",
                    };
                    current.push(Span::styled(marker, Style::new().fg(Color::DarkGray)));
                    styles.push(
                        style(&styles)
                            .add_modifier(Modifier::BOLD)
                            .fg(Color::LightCyan),
                    );
                }
                Tag::BlockQuote(_) => {
                    flush!();
                    quote += 1;
                }
                Tag::CodeBlock(kind) => {
                    flush!();
                    start_block!("", 0);
                    in_code = true;
                    if let CodeBlockKind::Fenced(lang) = kind
                        && !lang.is_empty()
                    {
                        current.push(Span::styled(
                            format!("  {lang}"),
                            Style::new()
                                .fg(Color::DarkGray)
                                .add_modifier(Modifier::ITALIC),
                        ));
                        flush!();
                    } else {
                        current.clear();
                    }
                }
                Tag::List(start) => {
                    flush!();
                    if lists.is_empty() {
                        pending_blank = pending_blank || !out.is_empty();
                    }
                    lists.push(List { next: start });
                }
                Tag::Item => {
                    flush!();
                    let depth = lists.len().saturating_sub(1);
                    let marker = match lists.last_mut() {
                        Some(List { next: Some(n) }) => {
                            let m = format!("{n}. ");
                            *n += 1;
                            m
                        }
                        _ => "• ".to_string(),
                    };
                    let prefix = format!("{}{marker}", "  ".repeat(depth));
                    let len = prefix.chars().count();
                    start_block!(&prefix, len);
                }
                Tag::Emphasis => styles.push(style(&styles).add_modifier(Modifier::ITALIC)),
                Tag::Strong => styles.push(style(&styles).add_modifier(Modifier::BOLD)),
                Tag::Strikethrough => {
                    styles.push(style(&styles).add_modifier(Modifier::CROSSED_OUT))
                }
                Tag::Link { dest_url, .. } => {
                    link_url = Some(dest_url.to_string());
                    styles.push(
                        style(&styles)
                            .fg(Color::LightBlue)
                            .add_modifier(Modifier::UNDERLINED),
                    );
                }
                Tag::Table(_) | Tag::TableHead | Tag::TableRow => {
                    flush!();
                    start_block!("", 0);
                }
                Tag::TableCell if current.len() > 1 => {
                    current.push(Span::styled(" │ ", Style::new().fg(Color::DarkGray)));
                }
                _ => {}
            },
            Event::End(end) => match end {
                TagEnd::Paragraph => {
                    flush!();
                    pending_blank = true;
                }
                TagEnd::Heading(_) => {
                    styles.pop();
                    flush!();
                    pending_blank = true;
                }
                TagEnd::BlockQuote(_) => {
                    flush!();
                    quote = quote.saturating_sub(1);
                    pending_blank = true;
                }
                TagEnd::CodeBlock => {
                    flush!();
                    in_code = false;
                    pending_blank = true;
                }
                TagEnd::List(_) => {
                    flush!();
                    lists.pop();
                    pending_blank = lists.is_empty();
                }
                TagEnd::Item => flush!(),
                TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                    styles.pop();
                }
                TagEnd::Link => {
                    styles.pop();
                    if let Some(url) = link_url.take()
                        && !current.iter().any(|s| s.content.contains(url.as_str()))
                    {
                        current.push(Span::styled(
                            format!(" ({url})"),
                            Style::new().fg(Color::DarkGray),
                        ));
                    }
                }
                TagEnd::TableHead | TagEnd::TableRow => flush!(),
                TagEnd::Table => {
                    flush!();
                    pending_blank = true;
                }
                _ => {}
            },
            Event::Text(text) if in_code => {
                let code_style = Style::new().fg(Color::LightYellow);
                let mut lines = text.split('\n').peekable();
                while let Some(line) = lines.next() {
                    if lines.peek().is_none() && line.is_empty() {
                        break;
                    }
                    current.push(Span::styled("  ", Style::new()));
                    current.push(Span::styled(line.replace('\t', "    "), code_style));
                    prefix_len = 2;
                    flush!();
                }
            }
            Event::Text(text) => current.push(Span::styled(text.to_string(), style(&styles))),
            Event::Code(code) => current.push(Span::styled(
                code.to_string(),
                style(&styles).fg(Color::Cyan),
            )),
            Event::SoftBreak => current.push(Span::styled(" ", style(&styles))),
            Event::HardBreak => flush!(),
            Event::Rule => {
                flush!();
                if !out.is_empty() {
                    out.push(LogicalLine {
                        spans: Vec::new(),
                        indent: 0,
                    });
                }
                out.push(LogicalLine {
                    spans: vec![Span::styled(
                        "────────────",
                        Style::new().fg(Color::DarkGray),
                    )],
                    indent: 0,
                });
                pending_blank = true;
            }
            Event::TaskListMarker(done) => current.push(Span::styled(
                if done { "[x] " } else { "[ ] " },
                style(&styles),
            )),
            Event::Html(html) | Event::InlineHtml(html) => {
                current.push(Span::styled(html.trim_end().to_string(), style(&styles)))
            }
            Event::FootnoteReference(r) => {
                current.push(Span::styled(format!("[{r}]"), style(&styles)))
            }
            Event::InlineMath(m) | Event::DisplayMath(m) => {
                current.push(Span::styled(m.to_string(), style(&styles)))
            }
        }
    }
    flush!();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(source: &str, width: usize) -> Vec<String> {
        render(source, width, Style::new())
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn paragraphs_lists_and_code() {
        let md = "Hello **world**.\n\n- one\n- two\n\n```rust\nfn main() {}\n```\n";
        assert_eq!(
            plain(md, 40),
            vec![
                "Hello world.",
                "",
                "• one",
                "• two",
                "",
                "  rust",
                "  fn main() {}"
            ]
        );
    }

    #[test]
    fn ordered_lists_number_and_wrap_under_their_text() {
        let md = "1. first item is long\n2. second";
        assert_eq!(
            plain(md, 12),
            vec!["1. first ", "   item is ", "   long", "2. second"]
        );
    }

    #[test]
    fn headings_and_inline_code_keep_text() {
        let md = "# Title\nuse `cargo test` now";
        assert_eq!(plain(md, 40), vec!["# Title", "", "use cargo test now"]);
    }

    #[test]
    fn unfinished_markdown_while_streaming_does_not_panic() {
        for cut in 0.."**bold** and `code` ```\nx".len() {
            let src = &"**bold** and `code` ```\nx"[..cut];
            let _ = plain(src, 10);
        }
    }
}
