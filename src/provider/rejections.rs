//! Server errors that name the request as the problem: sending the same request again cannot
//! succeed, so they are reported at once instead of retried.
//!
//! Local servers answer some bad requests with a 5xx (llama.cpp's `Failed to parse tool call
//! arguments as JSON` is an HTTP 500), which a status-only rule would retry four times. Every
//! pattern lives in [`PATTERNS`], each with the server whose message it matches, so adding one is
//! a one-line change. Matching is case-insensitive on a substring of the error message.

/// One message fragment a server uses for a request it will never accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rejection {
    /// The server whose message this is.
    pub server: &'static str,
    /// A fragment of its error message (lowercase).
    pub pattern: &'static str,
    /// What is wrong with the request, in the user's terms.
    pub meaning: &'static str,
}

/// Every known "the request is the problem" message.
pub const PATTERNS: &[Rejection] = &[
    // llama.cpp tools/server (server-common.cpp, chat.cpp): history it cannot turn into a prompt.
    Rejection {
        server: "llama.cpp",
        pattern: "failed to parse",
        meaning: "the server cannot read the request (often a tool call's arguments)",
    },
    Rejection {
        server: "llama.cpp",
        pattern: "tools param requires --jinja flag",
        meaning: "tools need llama-server started with --jinja",
    },
    Rejection {
        server: "llama.cpp",
        pattern: "exceeds the available context size",
        meaning: "the request does not fit the server's context (-c)",
    },
    // vLLM (entrypoints/openai/serving_chat.py, serving_engine.py).
    Rejection {
        server: "vLLM",
        pattern: "maximum context length is",
        meaning: "the request does not fit the model's context",
    },
    Rejection {
        server: "vLLM",
        pattern: "requires --enable-auto-tool-choice",
        meaning: "tools need vLLM started with --enable-auto-tool-choice and --tool-call-parser",
    },
    // Ollama (server/routes.go).
    Rejection {
        server: "Ollama",
        pattern: "does not support tools",
        meaning: "the model has no tool-calling template",
    },
    Rejection {
        server: "Ollama",
        pattern: "model requires more system memory",
        meaning: "the model does not fit this machine's memory",
    },
];

/// The rejection an error message matches, if any.
pub fn matching(message: &str) -> Option<&'static Rejection> {
    let message = message.to_ascii_lowercase();
    PATTERNS.iter().find(|r| message.contains(r.pattern))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_messages_match_their_pattern() {
        for (message, server) in [
            (
                r#"{"error":{"code":500,"message":"Failed to parse tool call arguments as JSON: [json.exception.parse_error.101]","type":"server_error"}}"#,
                "llama.cpp",
            ),
            ("tools param requires --jinja flag", "llama.cpp"),
            (
                "the request exceeds the available context size, try increasing it",
                "llama.cpp",
            ),
            (
                "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens",
                "vLLM",
            ),
            (
                r#""auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set"#,
                "vLLM",
            ),
            (
                "registry.ollama.ai/library/gemma:2b does not support tools",
                "Ollama",
            ),
        ] {
            assert_eq!(
                matching(message).map(|r| r.server),
                Some(server),
                "{message}"
            );
        }
        assert_eq!(matching("upstream overloaded, try again"), None);
        assert!(
            PATTERNS
                .iter()
                .all(|r| r.pattern == r.pattern.to_ascii_lowercase())
        );
    }
}
