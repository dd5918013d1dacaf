//! Model families: a model the catalog does not list, but whose name says whose it is
//! (`claude-sonnet-4-7`, `gpt-5.9-mini`, `gemini-4-flash`), is sized and priced as its family's
//! newest mainstream model, the *representative*, and marked estimated.
//!
//! The table is ordered: the first rule whose prefix and words match wins, so the narrow rules
//! (`claude-haiku`, `gpt-*-mini`) come before the broad ones (`claude-`, `gpt-`). A rule names
//! a catalog id; a test checks that every representative is in the built-in catalog, so a
//! catalog edit cannot leave a family without a price. The one thing a newcomer gets wrong:
//! names arrive decorated (`anthropic/claude-sonnet-4.6`, Bedrock's
//! `us.anthropic.claude-sonnet-4-5-20250929-v1:0`, Ollama's `qwen3:8b`), so [`family_of`]
//! matches on the bare, lower-cased name.

/// One family: names that start with `prefix` and contain every word of `contains`.
struct Rule {
    prefix: &'static str,
    contains: &'static [&'static str],
    /// How the family is named to the user (`claude-sonnet-*`).
    family: &'static str,
    /// The catalog id whose window and price the family gets.
    representative: &'static str,
}

const fn rule(
    prefix: &'static str,
    contains: &'static [&'static str],
    family: &'static str,
    representative: &'static str,
) -> Rule {
    Rule {
        prefix,
        contains,
        family,
        representative,
    }
}

/// First match wins: narrow before broad.
const RULES: &[Rule] = &[
    rule("claude-opus", &[], "claude-opus-*", "claude-opus-4-7"),
    rule("claude-sonnet", &[], "claude-sonnet-*", "claude-sonnet-4-6"),
    rule("claude-haiku", &[], "claude-haiku-*", "claude-haiku-4-5"),
    rule("claude-", &[], "claude-*", "claude-sonnet-4-6"),
    rule("gpt-4o", &["mini"], "gpt-4o-mini*", "gpt-4o-mini"),
    rule("gpt-4o", &[], "gpt-4o*", "gpt-4o"),
    rule("gpt-4.1", &["nano"], "gpt-4.1-nano*", "gpt-4.1-nano"),
    rule("gpt-4.1", &["mini"], "gpt-4.1-mini*", "gpt-4.1-mini"),
    rule("gpt-4.1", &[], "gpt-4.1*", "gpt-4.1"),
    rule("gpt-", &["nano"], "gpt-*-nano", "gpt-5-nano"),
    rule("gpt-", &["mini"], "gpt-*-mini", "gpt-5-mini"),
    rule("gpt-", &[], "gpt-*", "gpt-5.4"),
    rule("o1", &["mini"], "o*-mini", "o4-mini"),
    rule("o3", &["mini"], "o*-mini", "o4-mini"),
    rule("o4", &["mini"], "o*-mini", "o4-mini"),
    rule("o1", &[], "o1/o3/o4*", "o3"),
    rule("o3", &[], "o1/o3/o4*", "o3"),
    rule("o4", &[], "o1/o3/o4*", "o3"),
    rule(
        "gemini-",
        &["flash-lite"],
        "gemini-*-flash-lite",
        "gemini-2.5-flash-lite",
    ),
    rule(
        "gemini-",
        &["flash"],
        "gemini-*-flash",
        "gemini-3-flash-preview",
    ),
    rule("gemini-", &["pro"], "gemini-*-pro", "gemini-3-pro-preview"),
    rule("gemini-", &[], "gemini-*", "gemini-3-flash-preview"),
    rule("grok-", &["mini"], "grok-*-mini", "grok-3-mini"),
    rule("grok-code", &[], "grok-code-*", "grok-code-fast-1"),
    rule("grok-", &[], "grok-*", "grok-4"),
    rule("glm-", &[], "glm-*", "glm-4.6"),
    rule("kimi-", &[], "kimi-*", "kimi-k2-0905-preview"),
    rule("minimax-", &[], "MiniMax-*", "MiniMax-M2"),
    rule(
        "deepseek-",
        &["reason"],
        "deepseek-reasoner*",
        "deepseek-reasoner",
    ),
    rule("deepseek-", &["r1"], "deepseek-r1*", "deepseek-reasoner"),
    rule("deepseek-", &[], "deepseek-*", "deepseek-chat"),
    rule("codestral", &[], "codestral*", "codestral-latest"),
    rule("devstral", &[], "devstral*", "devstral-medium-latest"),
    rule(
        "mistral-small",
        &[],
        "mistral-small*",
        "mistral-small-latest",
    ),
    rule(
        "mistral-medium",
        &[],
        "mistral-medium*",
        "mistral-medium-latest",
    ),
    rule("mistral", &[], "mistral*", "mistral-large-latest"),
];

/// A model's family: how it is named, and the catalog id it is priced and sized as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Family {
    pub family: &'static str,
    pub representative: &'static str,
}

/// The bare, lower-cased name: the part after the last `/` (OpenRouter, GitHub Models), from
/// `anthropic.`/`openai.` on for Bedrock ids (dropping the region and the `-v1:0` version).
fn bare(model: &str) -> String {
    let lower = model.trim().to_ascii_lowercase();
    let tail = lower.rsplit('/').next().unwrap_or_default();
    let tail = match tail.find("anthropic.").or_else(|| tail.find("openai.")) {
        Some(i) => tail
            .get(i..)
            .and_then(|t| t.split_once('.'))
            .map_or(tail, |(_, rest)| rest),
        None => tail,
    };
    tail.to_string()
}

/// The family `model` belongs to, if any.
pub fn family_of(model: &str) -> Option<Family> {
    let name = bare(model);
    let o_series = |prefix: &str| {
        // `o3`, `o3-mini`, `o4-mini-2025-04-16`, but not `ollama…` or `o3x`.
        prefix.len() == 2 && prefix.starts_with('o')
    };
    RULES
        .iter()
        .find(|r| {
            name.starts_with(r.prefix)
                && (!o_series(r.prefix)
                    || name.len() == 2
                    || name.as_bytes().get(2).is_some_and(|b| *b == b'-'))
                && r.contains.iter().all(|w| name.contains(w))
        })
        .map(|r| Family {
            family: r.family,
            representative: r.representative,
        })
}

/// Every representative (for the test that they are all priced).
pub fn representatives() -> Vec<&'static str> {
    RULES.iter().map(|r| r.representative).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_find_their_family() {
        let cases: &[(&str, Option<&str>)] = &[
            ("claude-sonnet-4-7", Some("claude-sonnet-4-6")),
            ("claude-sonnet-4-6", Some("claude-sonnet-4-6")),
            ("anthropic/claude-sonnet-4.8", Some("claude-sonnet-4-6")),
            (
                "us.anthropic.claude-opus-5-20270101-v1:0",
                Some("claude-opus-4-7"),
            ),
            ("claude-haiku-5", Some("claude-haiku-4-5")),
            ("claude-3-7-sonnet-latest", Some("claude-sonnet-4-6")),
            ("gpt-5.9", Some("gpt-5.4")),
            ("gpt-5.9-mini", Some("gpt-5-mini")),
            ("openai/gpt-5.5-nano", Some("gpt-5-nano")),
            ("gpt-4o-mini-2024-07-18", Some("gpt-4o-mini")),
            ("gpt-4.1-mini-2025-04-14", Some("gpt-4.1-mini")),
            ("o3-pro", Some("o3")),
            ("o4-mini-high", Some("o4-mini")),
            ("o1", Some("o3")),
            ("ollama-thing", None),
            ("o3x", None),
            ("gemini-4-flash", Some("gemini-3-flash-preview")),
            ("gemini-3.5-pro-preview", Some("gemini-3-pro-preview")),
            ("gemini-2.5-flash-lite-001", Some("gemini-2.5-flash-lite")),
            ("grok-5", Some("grok-4")),
            ("grok-4-mini", Some("grok-3-mini")),
            ("GLM-5", Some("glm-4.6")),
            ("kimi-k3", Some("kimi-k2-0905-preview")),
            ("MiniMax-M3", Some("MiniMax-M2")),
            ("deepseek-v4", Some("deepseek-chat")),
            ("deepseek-reasoner", Some("deepseek-reasoner")),
            ("codestral-2508", Some("codestral-latest")),
            ("mistral-large-2512", Some("mistral-large-latest")),
            ("mistral-small-3.2", Some("mistral-small-latest")),
            ("qwen2.5:7b", None),
            ("llama3.2", None),
            ("SmolLM2-135M-Instruct.Q4_1.gguf", None),
            ("", None),
        ];
        for (model, expected) in cases {
            assert_eq!(
                family_of(model).map(|f| f.representative),
                *expected,
                "{model}"
            );
        }
    }
}
