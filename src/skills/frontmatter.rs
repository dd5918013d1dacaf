//! The YAML front matter of a skill file, read by a small parser for the keys skills use.
//!
//! Accepted: `key: value` scalars (plain, `'single'` or `"double"` quoted), `key: [a, "b c"]`
//! flow lists, `key:` followed by `- item` lines, and `key: >` / `key: |` block scalars. Keys
//! other than `name`, `description`, `triggers`, `paths`, `tools`, `model` and `effort` are skipped with
//! everything indented under them (Claude Code's `allowed-tools`, `metadata`, `license`), so a
//! skill written for another tool still loads. What a newcomer gets wrong: the front matter must
//! open on the very first line with `---`; a file without it is not a skill, and the caller
//! reports that as the problem.

use super::SkillError;

/// The keys a skill's front matter gives.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FrontMatter {
    pub name: String,
    pub description: String,
    pub triggers: Vec<String>,
    pub paths: Vec<String>,
    pub model: Option<String>,
    pub effort: Option<String>,
    /// `argument-hint:` (custom slash commands): what the palette shows after the name.
    pub argument_hint: Option<String>,
    /// `tools:` as written (custom agents): `None` when the key is absent. A plain value is a
    /// comma-separated list (`tools: Read, Grep`, as Claude Code writes it).
    pub tools: Option<Vec<String>>,
}

/// Splits `text` into its front matter and body; `Err` says what is wrong, in words.
pub fn parse(text: &str) -> Result<(FrontMatter, String), SkillError> {
    let (header, body) = split_header(text)?;
    let fm = read_keys(&header)?;
    if fm.name.is_empty() {
        return Err(SkillError::NoName);
    }
    if fm.name.len() > 64 || fm.name.chars().any(|c| c.is_whitespace() || c == '/') {
        return Err(SkillError::BadName(fm.name));
    }
    if fm.description.is_empty() {
        return Err(SkillError::NoDescription);
    }
    Ok((fm, body))
}

/// Like `parse`, for files where front matter is optional and no key is required (custom
/// slash commands): a file without a leading `---` is all body.
pub fn parse_optional(text: &str) -> Result<(FrontMatter, String), SkillError> {
    let stripped = text.strip_prefix('\u{feff}').unwrap_or(text);
    if stripped.lines().next().map(str::trim_end) != Some("---") {
        return Ok((FrontMatter::default(), stripped.trim().to_string()));
    }
    let (header, body) = split_header(stripped)?;
    Ok((read_keys(&header)?, body))
}

/// The front matter's lines, between the opening `---` on the first line and the closing one,
/// and the body after it (trimmed).
fn split_header(text: &str) -> Result<(Vec<&str>, String), SkillError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines();
    if lines.next().map(str::trim_end) != Some("---") {
        return Err(SkillError::NoFrontMatter);
    }
    let mut header: Vec<&str> = Vec::new();
    let mut closed = false;
    for line in lines.by_ref() {
        if line.trim_end() == "---" {
            closed = true;
            break;
        }
        header.push(line);
    }
    if !closed {
        return Err(SkillError::Unclosed);
    }
    let body = lines.collect::<Vec<_>>().join("\n").trim().to_string();
    Ok((header, body))
}

/// The keys of the front matter's lines, each with the lines indented under it; comments,
/// blank lines and unknown keys are skipped.
fn read_keys(header: &[&str]) -> Result<FrontMatter, SkillError> {
    let mut fm = FrontMatter::default();
    let mut i = 0;
    while let Some(&line) = header.get(i) {
        i += 1;
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if line.starts_with(' ') || line.starts_with('\t') {
            // Belongs to a key skipped above (a nested map or list we do not read).
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            return Err(SkillError::NotKeyValue {
                line: i + 1,
                text: line.to_string(),
            });
        };
        let key = key.trim();
        let value = strip_comment(value.trim());
        // The lines indented under this key.
        let start = i;
        while header.get(i).is_some_and(|l| {
            l.trim().is_empty() || l.starts_with(' ') || l.starts_with('\t') || l.starts_with("- ")
        }) {
            i += 1;
        }
        let nested = header.get(start..i).unwrap_or_default();
        fm.set(key, value, nested)?;
    }
    Ok(fm)
}

impl FrontMatter {
    /// Sets `key` from its `value` and the lines `nested` under it; a key skills do not use is
    /// skipped.
    fn set(&mut self, key: &str, value: &str, nested: &[&str]) -> Result<(), SkillError> {
        match key {
            "name" | "description" | "model" | "effort" | "argument-hint" => {
                let text = scalar(key, value, nested)?;
                match key {
                    "name" => self.name = text,
                    "description" => self.description = text,
                    "model" => self.model = Some(text).filter(|t| !t.is_empty()),
                    "argument-hint" => self.argument_hint = Some(text).filter(|t| !t.is_empty()),
                    _ => self.effort = Some(text).filter(|t| !t.is_empty()),
                }
            }
            "triggers" | "paths" => {
                let list = list(key, value, nested)?;
                if key == "triggers" {
                    self.triggers = list;
                } else {
                    self.paths = list;
                }
            }
            "tools" => {
                let items = list(key, value, nested)?;
                self.tools = Some(
                    items
                        .iter()
                        .flat_map(|item| item.split(','))
                        .map(|t| t.trim().to_string())
                        .filter(|t| !t.is_empty())
                        .collect(),
                );
            }
            _ => {}
        }
        Ok(())
    }
}

/// A value with a trailing ` # comment` removed (not inside quotes).
fn strip_comment(value: &str) -> &str {
    if value.starts_with('"') || value.starts_with('\'') {
        return value;
    }
    match value.split_once(" #") {
        Some((before, _)) => before.trim_end(),
        None => value,
    }
}

fn unquote(key: &str, value: &str) -> Result<String, SkillError> {
    let value = value.trim();
    for quote in ['"', '\''] {
        if let Some(inner) = value.strip_prefix(quote) {
            let Some(inner) = inner.strip_suffix(quote) else {
                return Err(SkillError::Unterminated {
                    key: key.to_string(),
                    quote,
                });
            };
            return Ok(if quote == '"' {
                inner.replace("\\\"", "\"").replace("\\n", "\n")
            } else {
                inner.replace("''", "'")
            });
        }
    }
    Ok(value.to_string())
}

fn scalar(key: &str, value: &str, nested: &[&str]) -> Result<String, SkillError> {
    let lines = || nested.iter().map(|l| l.trim());
    match value {
        ">" | ">-" | ">+" => Ok(lines()
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" ")),
        "|" | "|-" | "|+" => Ok(lines().collect::<Vec<_>>().join("\n").trim().to_string()),
        "" if nested.iter().any(|l| l.trim_start().starts_with("- ")) => {
            Err(SkillError::NotText(key.to_string()))
        }
        // A plain scalar may continue on indented lines.
        _ => {
            let mut text = unquote(key, value)?;
            for more in lines().filter(|l| !l.is_empty()) {
                text.push(' ');
                text.push_str(more);
            }
            Ok(text.trim().to_string())
        }
    }
}

fn list(key: &str, value: &str, nested: &[&str]) -> Result<Vec<String>, SkillError> {
    let mut items = Vec::new();
    if let Some(inner) = value.strip_prefix('[') {
        let Some(inner) = inner.strip_suffix(']') else {
            return Err(SkillError::UnclosedList(key.to_string()));
        };
        for item in inner.split(',') {
            items.push(unquote(key, item)?);
        }
    } else if !value.is_empty() {
        // `triggers: deploy` — one item.
        items.push(unquote(key, value)?);
    } else {
        for line in nested.iter().map(|l| l.trim()).filter(|l| !l.is_empty()) {
            let Some(item) = line
                .strip_prefix("- ")
                .or(line.strip_prefix('-').filter(|r| r.is_empty()))
            else {
                return Err(SkillError::NotList {
                    key: key.to_string(),
                    line: line.to_string(),
                });
            };
            items.push(unquote(key, strip_comment(item.trim()))?);
        }
    }
    Ok(items.into_iter().filter(|s| !s.is_empty()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_style_front_matter_parses() {
        let (fm, body) = parse(
            "---\nname: pdf-tools\ndescription: >\n  Fill and merge\n  PDF forms.\nallowed-tools:\n  - Bash\nmetadata:\n  version: 2\ntriggers:\n  - pdf\n  - \"fill form\"   \npaths: [\"**/*.pdf\", docs/*]\nmodel: opus # best\neffort: 'high'\n---\n\n# PDF\nUse qpdf.\n",
        )
        .expect("valid");
        assert_eq!(fm.name, "pdf-tools");
        assert_eq!(fm.description, "Fill and merge PDF forms.");
        assert_eq!(fm.triggers, vec!["pdf", "fill form"]);
        assert_eq!(fm.paths, vec!["**/*.pdf", "docs/*"]);
        assert_eq!(fm.model.as_deref(), Some("opus"));
        assert_eq!(fm.effort.as_deref(), Some("high"));
        assert_eq!(body, "# PDF\nUse qpdf.");
        assert_eq!(fm.tools, None);
    }

    #[test]
    fn tools_take_every_list_form() {
        for header in [
            "tools: Read, Grep",
            "tools: [Read, \"Grep\"]",
            "tools:\n  - Read\n  - Grep",
        ] {
            let text = format!("---\nname: a\ndescription: d\n{header}\n---\nbody");
            let (fm, _) = parse(&text).expect("valid");
            assert_eq!(
                fm.tools,
                Some(vec!["Read".into(), "Grep".into()]),
                "{header}"
            );
        }
    }

    #[test]
    fn problems_are_named() {
        let cases = [
            ("# no header", "no YAML front matter"),
            ("---\nname: a\n", "not closed"),
            ("---\nname: a\n---\n", "`description` is missing"),
            ("---\ndescription: d\n---\n", "`name` is missing"),
            (
                "---\nname: two words\ndescription: d\n---\n",
                "must be one word",
            ),
            ("---\nname: a\ndescription: \"d\n---\n", "unterminated"),
            (
                "---\nname: a\ndescription: d\ntriggers: [a, b\n---\n",
                "must close",
            ),
            ("---\nname a\n---\n", "expected `key: value`"),
        ];
        for (text, problem) in cases {
            let err = parse(text).expect_err(text).to_string();
            assert!(err.contains(problem), "{text:?}: {err}");
        }
    }
}
