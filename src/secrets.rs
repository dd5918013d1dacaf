//! Secrets never leave chatcli's memory: API keys and tokens are masked (`sk-…abcd`) in every
//! line the session log writes and in every error or notice shown.
//!
//! The set is taken from the environment once at start: every variable whose name says it holds
//! a key, token, secret or password. A provider that echoes a key back in an error message is
//! the usual way one would leak; masking the text itself catches that whatever the source.

use std::sync::Arc;

use crate::config::Env;

/// The known secret values.
#[derive(Debug, Clone, Default)]
pub struct Secrets(Arc<Vec<String>>);

/// Variable names that hold secrets.
fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["API_KEY", "TOKEN", "SECRET", "PASSWORD"]
        .iter()
        .any(|s| upper.contains(s))
        || upper.ends_with("CLIENT_KEY")
}

/// `sk-…abcd`: enough to recognise a key, not to use it.
pub fn mask(secret: &str) -> String {
    let chars: Vec<char> = secret.chars().collect();
    if chars.len() < 12 {
        return "…".to_string();
    }
    let head: String = chars[..3].iter().collect();
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("{head}…{tail}")
}

impl Secrets {
    /// The secrets in this environment (values of 8 characters or more).
    pub fn from_env(env: &Env) -> Secrets {
        let mut values: Vec<String> = env
            .iter()
            .filter(|(k, _)| is_secret_name(k))
            .map(|(_, v)| v.trim().to_string())
            .filter(|v| v.len() >= 8)
            .collect();
        // Longest first, so a key that contains another is masked whole.
        values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        values.dedup();
        Secrets(Arc::new(values))
    }

    /// A set of explicit values (tests).
    pub fn of(values: &[&str]) -> Secrets {
        Secrets(Arc::new(values.iter().map(|v| v.to_string()).collect()))
    }

    /// `text` with every known secret masked.
    pub fn mask(&self, text: &str) -> String {
        let mut out = text.to_string();
        for secret in self.0.iter() {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), &mask(secret));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_masked_wherever_they_appear() {
        let env = Env::from_pairs([
            ("OPENAI_API_KEY", "sk-test-1234567890abcd"),
            ("HOME", "/root"),
        ]);
        let secrets = Secrets::from_env(&env);
        assert_eq!(
            secrets.mask("Incorrect API key provided: sk-test-1234567890abcd."),
            "Incorrect API key provided: sk-…abcd."
        );
        assert_eq!(secrets.mask("/root is fine"), "/root is fine");
        assert_eq!(mask("short"), "…");
    }
}
