//! Markdown to styled, wrapped lines (pulldown-cmark), for the chat pane.
//!
//! Rendering happens in two steps: `parse` turns the source into blocks — prose lines (one per
//! paragraph line, list item, heading) with the indent their continuation lines take, code blocks
//! (highlighted once, see `highlight`), and tables (each cell as styled spans); `render` fits them
//! to a width. Prose is word-wrapped; code is never re-flowed (indentation is meaning): a line
//! wider than the block is cut with a `…`; a table's columns take their content's width and,
//! when the table is wider than the pane, the widest shrink first and their cells are cut with
//! `…`. The chat pane caches the result per width, so a message is parsed again only when its
//! text changes (while it streams) or the pane is resized.

// The model's text: no index that could panic on it (#34).
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

use pulldown_cmark::{Alignment, CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use super::highlight::{self, CodeLine};
use super::text::{spans_width, truncate, truncate_spans, wrap_spans};

/// A line before wrapping: its spans, and the indent of its continuation lines.
#[derive(Debug, Clone, PartialEq)]
pub struct LogicalLine {
    pub spans: Vec<Span<'static>>,
    pub indent: usize,
}

/// A fenced or indented code block, highlighted.
#[derive(Debug, Clone, PartialEq)]
pub struct CodeBlock {
    /// What stands before each of its lines (quote bars, list indent).
    pub prefix: String,
    /// The fence's language (`rust`), empty when it names none.
    pub lang: String,
    pub lines: std::rc::Rc<Vec<CodeLine>>,
}

/// A table: its header cells, its rows, and each column's alignment.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub prefix: String,
    pub aligns: Vec<Alignment>,
    pub header: Vec<Vec<Span<'static>>>,
    pub rows: Vec<Vec<Vec<Span<'static>>>>,
}

/// One parsed piece of a message.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Prose(LogicalLine),
    Code(CodeBlock),
    Table(Table),
}

/// Renders markdown to lines fitted to `width` columns.
pub fn render(source: &str, width: usize, base: Style) -> Vec<Line<'static>> {
    let width = width.max(1);
    let mut out = Vec::new();
    for block in parse(source, base) {
        match block {
            Block::Prose(l) => out.extend(wrap_spans(&l.spans, width, l.indent)),
            Block::Code(code) => layout_code(&code, width, &mut out),
            Block::Table(table) => layout_table(&table, width, &mut out),
        }
    }
    out
}

const DIM: Style = Style::new().fg(Color::DarkGray);

/// The code block in a rounded frame with its language in the top border; lines too wide are
/// cut with `…`. Below 8 columns the frame is left out.
fn layout_code(block: &CodeBlock, width: usize, out: &mut Vec<Line<'static>>) {
    let prefix_width = block.prefix.width();
    let avail = width.saturating_sub(prefix_width);
    let lead = || -> Vec<Span<'static>> {
        if block.prefix.is_empty() {
            Vec::new()
        } else {
            vec![Span::styled(block.prefix.clone(), DIM)]
        }
    };
    let blank = [CodeLine::new()];
    let lines: &[CodeLine] = if block.lines.is_empty() {
        &blank
    } else {
        &block.lines
    };
    if avail < 8 {
        for line in lines {
            let mut spans = lead();
            spans.extend(truncate_spans(line, avail, DIM));
            out.push(Line::from(spans));
        }
        return;
    }
    let inner = avail - 4;
    let label = if block.lang.is_empty() {
        String::new()
    } else {
        format!(" {} ", truncate(&block.lang, avail - 6))
    };
    let fill = avail.saturating_sub(3 + label.width());
    let mut top = lead();
    top.push(Span::styled("╭─", DIM));
    top.push(Span::styled(label, DIM.add_modifier(Modifier::ITALIC)));
    top.push(Span::styled(format!("{}╮", "─".repeat(fill)), DIM));
    out.push(Line::from(top));
    for line in lines {
        let cut = truncate_spans(line, inner, DIM);
        let pad = inner.saturating_sub(spans_width(&cut));
        let mut spans = lead();
        spans.push(Span::styled("│ ", DIM));
        spans.extend(cut);
        spans.push(Span::raw(" ".repeat(pad)));
        spans.push(Span::styled(" │", DIM));
        out.push(Line::from(spans));
    }
    let mut bottom = lead();
    bottom.push(Span::styled(format!("╰{}╯", "─".repeat(avail - 2)), DIM));
    out.push(Line::from(bottom));
}

/// The table with its columns aligned, a bold header, a rule under it, and ` │ ` between cells.
fn layout_table(table: &Table, width: usize, out: &mut Vec<Line<'static>>) {
    let columns = table
        .rows
        .iter()
        .map(Vec::len)
        .chain([table.header.len()])
        .max()
        .unwrap_or(0);
    if columns == 0 {
        return;
    }
    let mut natural = vec![1usize; columns];
    for row in table.rows.iter().chain([&table.header]) {
        for (width, cell) in natural.iter_mut().zip(row) {
            *width = (*width).max(spans_width(cell));
        }
    }
    let avail = width.saturating_sub(table.prefix.width());
    let widths = fit_columns(&natural, avail.saturating_sub(3 * (columns - 1)));
    let lead = || -> Vec<Span<'static>> {
        if table.prefix.is_empty() {
            Vec::new()
        } else {
            vec![Span::styled(table.prefix.clone(), DIM)]
        }
    };
    let row_line = |row: &[Vec<Span<'static>>], bold: bool| -> Line<'static> {
        let mut spans = lead();
        for (i, &w) in widths.iter().enumerate() {
            if i > 0 {
                spans.push(Span::styled(" │ ", DIM));
            }
            let mut cell: Vec<Span<'static>> = row.get(i).cloned().unwrap_or_default();
            if bold {
                for span in &mut cell {
                    span.style = span.style.add_modifier(Modifier::BOLD);
                }
            }
            let cell = truncate_spans(&cell, w, DIM);
            let pad = w.saturating_sub(spans_width(&cell));
            let (left, right) = match table.aligns.get(i) {
                Some(Alignment::Right) => (pad, 0),
                Some(Alignment::Center) => (pad / 2, pad - pad / 2),
                _ => (0, pad),
            };
            if left > 0 {
                spans.push(Span::raw(" ".repeat(left)));
            }
            spans.extend(cell);
            // The last column's padding is left out: trailing blanks only get in the way.
            if right > 0 && i + 1 < widths.len() {
                spans.push(Span::raw(" ".repeat(right)));
            }
        }
        // Only when not even one column each fits: cut the row at the pane.
        Line::from(truncate_spans(&spans, width, DIM))
    };
    out.push(row_line(&table.header, true));
    let rule: Vec<String> = widths.iter().map(|&w| "─".repeat(w)).collect();
    let mut spans = lead();
    spans.push(Span::styled(rule.join("─┼─"), DIM));
    out.push(Line::from(truncate_spans(&spans, width, DIM)));
    for row in &table.rows {
        out.push(row_line(row, false));
    }
}

/// Column widths that fit `room`: each column its natural width when all fit, else the widest
/// columns shrink first (every column at most one cap, the cap as large as fits) down to one.
fn fit_columns(natural: &[usize], room: usize) -> Vec<usize> {
    let total: usize = natural.iter().sum();
    if total <= room {
        return natural.to_vec();
    }
    if room <= natural.len() {
        return vec![1; natural.len()];
    }
    let capped = |cap: usize| natural.iter().map(|&w| w.min(cap)).sum::<usize>();
    let (mut lo, mut hi) = (1, natural.iter().copied().max().unwrap_or(1));
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if capped(mid) <= room {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let mut widths: Vec<usize> = natural.iter().map(|&w| w.min(lo)).collect();
    // The columns left over go one each to the shrunk columns, left to right.
    let mut spare = room - capped(lo);
    for (w, &n) in widths.iter_mut().zip(natural) {
        if spare == 0 {
            break;
        }
        if *w < n {
            *w += 1;
            spare -= 1;
        }
    }
    widths
}

struct List {
    next: Option<u64>,
}

/// A table while its events arrive.
struct TableBuild {
    table: Table,
    row: Vec<Vec<Span<'static>>>,
}

/// Parses markdown into blocks.
pub fn parse(source: &str, base: Style) -> Vec<Block> {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut blocks = BlockBuilder::new(base);
    for event in Parser::new_ext(source, options) {
        match event {
            Event::Start(tag) => blocks.start(tag),
            Event::End(end) => blocks.end(end),
            inline => blocks.inline(inline),
        }
    }
    blocks.flush();
    blocks.out
}

/// The state of `parse` between events: the blocks made so far, the prose line being built, and
/// the containers (quotes, lists, a code block or table) it is inside.
struct BlockBuilder {
    base: Style,
    out: Vec<Block>,
    current: Vec<Span<'static>>,
    styles: Vec<Style>,
    lists: Vec<List>,
    quote: usize,
    code: Option<(String, String)>,
    table: Option<TableBuild>,
    prefix_len: usize,
    pending_blank: bool,
    link_url: Option<String>,
}

impl BlockBuilder {
    fn new(base: Style) -> Self {
        BlockBuilder {
            base,
            out: Vec::new(),
            current: Vec::new(),
            styles: vec![base],
            lists: Vec::new(),
            quote: 0,
            code: None,
            table: None,
            prefix_len: 0,
            pending_blank: false,
            link_url: None,
        }
    }

    /// The inline style in effect.
    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or(self.base)
    }

    /// What stands before each line of a code block or table here (quote bars, list indent).
    fn container(&self) -> String {
        format!(
            "{}{}",
            "▌ ".repeat(self.quote),
            "  ".repeat(self.lists.len())
        )
    }

    /// Ends the prose line being built, if any.
    fn flush(&mut self) {
        if !self.current.is_empty() {
            self.out.push(Block::Prose(LogicalLine {
                spans: std::mem::take(&mut self.current),
                indent: self.prefix_len,
            }));
        }
    }

    /// The blank line owed between two blocks, once something comes after it.
    fn blank_if_pending(&mut self) {
        if self.pending_blank && !self.out.is_empty() {
            self.out.push(Block::Prose(LogicalLine {
                spans: Vec::new(),
                indent: 0,
            }));
        }
        self.pending_blank = false;
    }

    /// Starts a prose line with the quote bars and `prefix`; its continuation lines are indented
    /// by the bars and `len` columns.
    fn start_block(&mut self, prefix: &str, len: usize) {
        self.blank_if_pending();
        let mut p = "▌ ".repeat(self.quote);
        p.push_str(prefix);
        self.prefix_len = self.quote * 2 + len;
        if !p.is_empty() {
            self.current.push(Span::styled(p, DIM));
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph if self.current.is_empty() => {
                let indent = " ".repeat(self.lists.len() * 2);
                self.start_block(&indent, indent.len());
            }
            Tag::Heading { level, .. } => {
                self.flush();
                self.start_block("", 0);
                let marker = match level {
                    HeadingLevel::H1 => "# ",
                    HeadingLevel::H2 => "## ",
                    _ => "### ",
                };
                self.current.push(Span::styled(marker, DIM));
                self.styles.push(
                    self.style()
                        .add_modifier(Modifier::BOLD)
                        .fg(Color::LightCyan),
                );
            }
            Tag::BlockQuote(_) => {
                self.flush();
                self.quote += 1;
            }
            Tag::CodeBlock(kind) => {
                self.flush();
                self.blank_if_pending();
                let lang = match &kind {
                    CodeBlockKind::Fenced(info) => highlight::fence_language(info).to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
            }
            Tag::List(start) => {
                self.flush();
                if self.lists.is_empty() {
                    self.pending_blank = self.pending_blank || !self.out.is_empty();
                }
                self.lists.push(List { next: start });
            }
            Tag::Item => self.start_item(),
            Tag::Emphasis => self
                .styles
                .push(self.style().add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.styles.push(self.style().add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self
                .styles
                .push(self.style().add_modifier(Modifier::CROSSED_OUT)),
            Tag::Link { dest_url, .. } => {
                self.link_url = Some(dest_url.to_string());
                self.styles.push(
                    self.style()
                        .fg(Color::LightBlue)
                        .add_modifier(Modifier::UNDERLINED),
                );
            }
            Tag::Table(aligns) => {
                self.flush();
                self.blank_if_pending();
                self.table = Some(TableBuild {
                    table: Table {
                        prefix: self.container(),
                        aligns,
                        header: Vec::new(),
                        rows: Vec::new(),
                    },
                    row: Vec::new(),
                });
            }
            Tag::TableCell => self.current.clear(),
            _ => {}
        }
    }

    /// A list item: its bullet or number, indented by the lists around it.
    fn start_item(&mut self) {
        self.flush();
        let depth = self.lists.len().saturating_sub(1);
        let marker = match self.lists.last_mut() {
            Some(List { next: Some(n) }) => {
                let m = format!("{n}. ");
                *n += 1;
                m
            }
            _ => "• ".to_string(),
        };
        let prefix = format!("{}{marker}", "  ".repeat(depth));
        let len = prefix.chars().count();
        self.start_block(&prefix, len);
    }

    fn end(&mut self, end: TagEnd) {
        match end {
            TagEnd::Paragraph => {
                self.flush();
                self.pending_blank = true;
            }
            TagEnd::Heading(_) => {
                self.styles.pop();
                self.flush();
                self.pending_blank = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.quote = self.quote.saturating_sub(1);
                self.pending_blank = true;
            }
            TagEnd::CodeBlock => {
                if let Some((lang, text)) = self.code.take() {
                    self.out.push(Block::Code(CodeBlock {
                        prefix: self.container(),
                        lines: highlight::highlight(&lang, &text),
                        lang,
                    }));
                }
                self.pending_blank = true;
            }
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
                self.pending_blank = self.lists.is_empty();
            }
            TagEnd::Item => self.flush(),
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                self.styles.pop();
            }
            TagEnd::Link => {
                self.styles.pop();
                if let Some(url) = self.link_url.take()
                    && !self
                        .current
                        .iter()
                        .any(|s| s.content.contains(url.as_str()))
                {
                    self.current.push(Span::styled(format!(" ({url})"), DIM));
                }
            }
            TagEnd::TableCell | TagEnd::TableHead | TagEnd::TableRow | TagEnd::Table => {
                self.end_table_part(end)
            }
            _ => {}
        }
    }

    /// The end of a table's cell, header, row, or of the table itself.
    fn end_table_part(&mut self, end: TagEnd) {
        match end {
            TagEnd::TableCell => {
                if let Some(build) = self.table.as_mut() {
                    build.row.push(std::mem::take(&mut self.current));
                }
            }
            TagEnd::TableHead => {
                if let Some(build) = self.table.as_mut() {
                    build.table.header = std::mem::take(&mut build.row);
                }
            }
            TagEnd::TableRow => {
                if let Some(build) = self.table.as_mut() {
                    let row = std::mem::take(&mut build.row);
                    build.table.rows.push(row);
                }
            }
            _ => {
                if let Some(build) = self.table.take() {
                    self.out.push(Block::Table(build.table));
                }
                self.pending_blank = true;
            }
        }
    }

    /// Any event that is not a tag's start or end: text, code spans, breaks, rules, markers.
    fn inline(&mut self, event: Event<'_>) {
        let style = self.style();
        match event {
            Event::Start(_) | Event::End(_) => {}
            Event::Text(text) => match self.code.as_mut() {
                Some((_, body)) => body.push_str(&text),
                None => self.current.push(Span::styled(text.to_string(), style)),
            },
            Event::Code(code) => self
                .current
                .push(Span::styled(code.to_string(), style.fg(Color::Cyan))),
            Event::SoftBreak => self.current.push(Span::styled(" ", style)),
            Event::HardBreak => self.flush(),
            Event::Rule => self.rule(),
            Event::TaskListMarker(done) => self
                .current
                .push(Span::styled(if done { "[x] " } else { "[ ] " }, style)),
            Event::Html(html) | Event::InlineHtml(html) => self
                .current
                .push(Span::styled(html.trim_end().to_string(), style)),
            Event::FootnoteReference(r) => self.current.push(Span::styled(format!("[{r}]"), style)),
            Event::InlineMath(m) | Event::DisplayMath(m) => {
                self.current.push(Span::styled(m.to_string(), style))
            }
        }
    }

    /// A thematic break: a short dim rule with a blank line before it.
    fn rule(&mut self) {
        self.flush();
        if !self.out.is_empty() {
            self.out.push(Block::Prose(LogicalLine {
                spans: Vec::new(),
                indent: 0,
            }));
        }
        self.out.push(Block::Prose(LogicalLine {
            spans: vec![Span::styled("────────────", DIM)],
            indent: 0,
        }));
        self.pending_blank = true;
    }
}

#[cfg(test)]
#[allow(clippy::string_slice)] // fixed ASCII fixtures, cut at known places
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
                "╭─ rust ───────────────────────────────╮",
                "│ fn main() {}                         │",
                "╰──────────────────────────────────────╯",
            ]
        );
    }

    #[test]
    fn tables_align_their_columns_under_a_bold_header_and_a_rule() {
        let md = "| Concept | Rust | Go |\n|---|:---:|---:|\n| Ownership | yes | no |\n| GC | no | yes |\n";
        assert_eq!(
            plain(md, 60),
            vec![
                "Concept   │ Rust │  Go",
                "──────────┼──────┼────",
                "Ownership │ yes  │  no",
                "GC        │  no  │ yes",
            ]
        );
        let lines = render(md, 60, Style::new());
        let header = &lines[0].spans[0];
        assert_eq!(header.content, "Concept");
        assert!(header.style.add_modifier.contains(Modifier::BOLD));
        assert!(
            !lines[2].spans[0]
                .style
                .add_modifier
                .contains(Modifier::BOLD)
        );
    }

    #[test]
    fn a_table_wider_than_the_pane_shrinks_its_widest_column_and_cuts_cells() {
        let md = "| a | description |\n|---|---|\n| x | a very long cell that cannot fit |\n";
        let lines = plain(md, 20);
        assert_eq!(
            lines,
            vec![
                "a │ description",
                "──┼─────────────────",
                "x │ a very long cel…",
            ]
        );
        assert!(render(md, 20, Style::new()).iter().all(|l| l.width() <= 20));
        // Too narrow for one column each: every row is still cut at the pane.
        assert!(render(md, 3, Style::new()).iter().all(|l| l.width() <= 3));
    }

    #[test]
    fn long_code_lines_are_cut_not_wrapped() {
        let md = "```\nlet s = \"a long line of code that goes on\";\nx\n```";
        assert_eq!(
            plain(md, 24),
            vec![
                "╭──────────────────────╮",
                "│ let s = \"a long lin… │",
                "│ x                    │",
                "╰──────────────────────╯",
            ]
        );
        assert_eq!(plain(md, 6), vec!["let s…", "x"]);
    }

    #[test]
    fn columns_fit_the_room_widest_first() {
        assert_eq!(fit_columns(&[3, 10, 4], 30), vec![3, 10, 4]);
        assert_eq!(fit_columns(&[3, 10, 4], 12), vec![3, 5, 4]);
        assert_eq!(fit_columns(&[3, 10, 9], 12), vec![3, 5, 4]);
        assert_eq!(fit_columns(&[3, 10, 4], 2), vec![1, 1, 1]);
    }

    #[test]
    fn quotes_links_and_headings() {
        let md = "## Notes\n\n> quoted [docs](https://example.com)\n";
        assert_eq!(
            plain(md, 60),
            vec!["## Notes", "", "▌ quoted docs (https://example.com)"]
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
