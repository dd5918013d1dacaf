//! The documentation stays reachable and true to the tree: the README is short (under
//! [`README_MAX_LINES`]) and links every page of `docs/`; every relative link in the README and
//! in `docs/**/*.md` names a file that exists and, with a `#fragment`, a heading of that file;
//! every docs page opens with its title and a summary paragraph; the configuration reference
//! keeps its settings table between the markers the generator rewrites; and the module layers
//! drawn in `docs/architecture.md` name every top-level module of `src/`.
//!
//! Links are read as GitHub renders them, closely enough for our own pages: inline links
//! `[text](target)` and reference definitions `[label]: target`, outside fenced code and code
//! spans; a fragment is a GitHub heading slug (lower case, punctuation dropped except `-` and
//! `_`, spaces to `-`, `-1`, `-2`… for repeats). The thing a newcomer gets wrong: a `](` inside
//! a code span is text, not a link, so code is blanked out before links are looked for.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

/// The README's length limit (tracker issue 36): what chatcli is, the first commands, a first
/// session and where to read on; the rest belongs in `docs/`.
const README_MAX_LINES: usize = 400;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Every Markdown file under `dir`, sorted.
fn markdown_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The docs pages, then the README: every page whose links are checked.
fn pages() -> Vec<PathBuf> {
    let mut pages = markdown_under(&root().join("docs"));
    assert!(!pages.is_empty(), "docs/ holds no Markdown page");
    pages.push(root().join("README.md"));
    pages
}

/// Whether `line` opens or closes a fenced code block.
fn is_fence(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with("```") || line.starts_with("~~~")
}

/// `text` with fenced blocks and code spans blanked (every character but a newline becomes a
/// space), so what is left is prose and the line structure is kept.
fn prose(text: &str) -> String {
    let mut unfenced = String::with_capacity(text.len());
    let mut in_fence = false;
    for line in text.split_inclusive('\n') {
        let toggles = is_fence(line);
        if in_fence || toggles {
            unfenced.extend(line.chars().map(|c| if c == '\n' { '\n' } else { ' ' }));
        } else {
            unfenced.push_str(line);
        }
        if toggles {
            in_fence = !in_fence;
        }
    }
    // A code span opens with a run of n backticks and closes with the next run of exactly n,
    // within its paragraph; an opener without a closer is a literal backtick.
    let chars: Vec<char> = unfenced.chars().collect();
    let mut out = chars.clone();
    let run_at = |i: usize| chars[i..].iter().take_while(|c| **c == '`').count();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            i += 1;
            continue;
        }
        let n = run_at(i);
        let mut j = i + n;
        let mut close = None;
        while j < chars.len() {
            if chars[j] == '\n' && chars.get(j + 1) == Some(&'\n') {
                break;
            }
            if chars[j] == '`' {
                let m = run_at(j);
                if m == n {
                    close = Some(j + m);
                    break;
                }
                j += m;
            } else {
                j += 1;
            }
        }
        match close {
            Some(end) => {
                for c in &mut out[i..end] {
                    if *c != '\n' {
                        *c = ' ';
                    }
                }
                i = end;
            }
            None => i += n,
        }
    }
    out.into_iter().collect()
}

/// The targets of the inline links and reference definitions in `text`.
fn link_targets(text: &str) -> Vec<String> {
    let prose = prose(text);
    let mut targets = Vec::new();
    for (at, _) in prose.match_indices("](") {
        let rest = &prose[at + 2..];
        let end = rest.find([')', ' ', '\n']).unwrap_or(rest.len());
        targets.push(
            rest[..end]
                .trim_start_matches('<')
                .trim_end_matches('>')
                .to_string(),
        );
    }
    for line in prose.lines() {
        let line = line.trim_start();
        if let Some(after) = line.strip_prefix('[')
            && let Some((_, target)) = after.split_once("]:")
            && let Some(target) = target.split_whitespace().next()
        {
            targets.push(target.to_string());
        }
    }
    targets
}

/// GitHub's anchor for a heading's text.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of `text`'s headings, a repeated one numbered as GitHub numbers it.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut in_fence = false;
    for line in text.lines() {
        if is_fence(line) {
            in_fence = !in_fence;
            continue;
        }
        let hashes = line.chars().take_while(|c| *c == '#').count();
        if in_fence || hashes == 0 || hashes > 6 || !line[hashes..].starts_with(' ') {
            continue;
        }
        let base = slug(&line[hashes..]);
        let mut anchor = base.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        seen.insert(anchor);
    }
    seen
}

/// `path` without `.` and `..` components (the file need not exist).
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// What is wrong with the relative links of `page`, one line each.
fn broken_links(page: &Path) -> Vec<String> {
    let text = read(page);
    let dir = page.parent().expect("a page has a folder");
    let shown = page
        .strip_prefix(root())
        .unwrap_or(page)
        .display()
        .to_string();
    let mut broken = Vec::new();
    for target in link_targets(&text) {
        if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        let (file, fragment) = match target.split_once('#') {
            Some((file, fragment)) => (file, Some(fragment)),
            None => (target.as_str(), None),
        };
        let linked = if file.is_empty() {
            page.to_path_buf()
        } else {
            normalise(&dir.join(file))
        };
        if !linked.starts_with(root()) {
            broken.push(format!("{shown}: `{target}` leads out of the repository"));
            continue;
        }
        if !linked.exists() {
            broken.push(format!("{shown}: `{target}` names no file"));
            continue;
        }
        if let Some(fragment) = fragment
            && linked.extension().is_some_and(|e| e == "md")
            && !anchors(&read(&linked)).contains(fragment)
        {
            broken.push(format!(
                "{shown}: `{target}`: {} has no heading with the anchor `#{fragment}`",
                linked.strip_prefix(root()).unwrap_or(&linked).display()
            ));
        }
    }
    broken
}

#[test]
fn the_readme_is_short_and_links_every_docs_page() {
    let readme = read(&root().join("README.md"));
    let lines = readme.lines().count();
    assert!(
        lines < README_MAX_LINES,
        "README.md has {lines} lines; keep it under {README_MAX_LINES} and move the rest to a page \
         of docs/"
    );
    let linked: BTreeSet<PathBuf> = link_targets(&readme)
        .iter()
        .map(|t| normalise(&root().join(t.split('#').next().unwrap_or(t))))
        .collect();
    let unlisted: Vec<String> = markdown_under(&root().join("docs"))
        .iter()
        .filter(|page| !linked.contains(*page))
        .map(|page| {
            page.strip_prefix(root())
                .unwrap_or(page)
                .display()
                .to_string()
        })
        .collect();
    assert!(
        unlisted.is_empty(),
        "README.md's \"Where to read on\" does not link {unlisted:?}"
    );
}

#[test]
fn every_relative_link_in_the_docs_resolves() {
    let broken: Vec<String> = pages().iter().flat_map(|p| broken_links(p)).collect();
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_docs_page_opens_with_a_title_and_a_summary() {
    for page in markdown_under(&root().join("docs")) {
        let text = read(&page);
        let mut lines = text.lines();
        let shown = page
            .strip_prefix(root())
            .unwrap_or(&page)
            .display()
            .to_string();
        assert!(
            lines.next().is_some_and(|l| l.starts_with("# ")),
            "{shown} does not open with a `# ` title"
        );
        assert_eq!(
            lines.next(),
            Some(""),
            "{shown}: a blank line after the title"
        );
        let summary = lines.next().unwrap_or("");
        let prose = summary
            .chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric() || c == '`' || c == '*');
        assert!(
            prose && !summary.starts_with("- ") && !summary.starts_with("* "),
            "{shown}: the title is followed by a one-paragraph summary, not {summary:?}"
        );
    }
}

/// The settings table of `docs/configuration.md` is the settings registry's own
/// (`chatcli::config::settings::reference_table`), between two marker lines: a setting declared
/// in code and not in the docs (or the other way round) fails here. `CHATCLI_WRITE_DOCS=1`
/// rewrites the table from the registry.
#[test]
fn the_configuration_table_is_the_settings_registry() {
    let path = root().join("docs/configuration.md");
    let text = read(&path);
    let (begin, end) = ("<!-- settings:begin -->\n", "<!-- settings:end -->");
    let (head, rest) = text
        .split_once(begin)
        .expect("docs/configuration.md needs `<!-- settings:begin -->` on a line of its own");
    let (table, tail) = rest
        .split_once(end)
        .expect("docs/configuration.md needs `<!-- settings:end -->` after the begin marker");
    let generated = chatcli::config::settings::reference_table();
    if std::env::var("CHATCLI_WRITE_DOCS").is_ok_and(|v| v == "1") {
        std::fs::write(&path, format!("{head}{begin}{generated}{end}{tail}")).expect("write");
        return;
    }
    assert!(
        table == generated,
        "docs/configuration.md's settings table differs from the registry \
         (src/config/settings.rs): run `CHATCLI_WRITE_DOCS=1 cargo test --test all docs::` \
         and review the diff"
    );
}

#[test]
fn the_architecture_page_draws_every_top_level_module() {
    let text = read(&root().join("docs/architecture.md"));
    let section = text
        .split("\n## Module layers")
        .nth(1)
        .expect("docs/architecture.md has a `## Module layers` section");
    let drawing = section
        .split("```")
        .nth(1)
        .expect("the Module layers section draws the layers in a code block");
    let words: BTreeSet<&str> = drawing
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .collect();
    let src = root().join("src");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&src).expect("src/") {
        let path = entry.expect("an entry of src/").path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        if path.extension().is_some_and(|e| e == "rs") && stem != "lib" && !words.contains(stem) {
            missing.push(stem.to_string());
        }
    }
    missing.sort();
    assert!(
        missing.is_empty(),
        "the module layers drawn in docs/architecture.md do not name {missing:?}: add each to \
         its layer there (and to LAYERS in tests/suite/architecture.rs)"
    );
}
