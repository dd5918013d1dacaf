//! The providers chatcli knows by name: their spellings, the variables that hold their keys and
//! models, and which one a key in the environment picks.

use super::Env;

/// The LLM services chatcli knows by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProviderKind {
    Demo,
    Anthropic,
    OpenAi,
    OpenAiResponses,
    Xai,
    Zai,
    Moonshot,
    Minimax,
    OpenRouter,
    GithubModels,
    GoogleAi,
    Ollama,
    Bedrock,
    Copilot,
    StackSpot,
}

impl ProviderKind {
    /// The default endpoint and model of this provider (the table a user reads to know what
    /// `--provider NAME` talks to).
    pub fn defaults(self) -> (&'static str, &'static str) {
        match self {
            ProviderKind::Anthropic => ("https://api.anthropic.com", "claude-sonnet-4-5"),
            ProviderKind::OpenAi | ProviderKind::OpenAiResponses => {
                ("https://api.openai.com/v1", "gpt-4.1")
            }
            ProviderKind::Xai => ("https://api.x.ai/v1", "grok-4"),
            ProviderKind::Zai => ("https://api.z.ai/api/paas/v4", "glm-4.7"),
            ProviderKind::Moonshot => ("https://api.moonshot.ai/v1", "kimi-k2-0905-preview"),
            ProviderKind::Minimax => ("https://api.minimax.io/anthropic", "MiniMax-M2"),
            ProviderKind::OpenRouter => (
                "https://openrouter.ai/api/v1",
                "anthropic/claude-sonnet-4.5",
            ),
            ProviderKind::GithubModels => ("https://models.github.ai/inference", "openai/gpt-4.1"),
            ProviderKind::GoogleAi => (
                "https://generativelanguage.googleapis.com",
                "gemini-2.5-flash",
            ),
            ProviderKind::Ollama => ("http://localhost:11434", "llama3.2"),
            ProviderKind::Bedrock => ("", "anthropic.claude-sonnet-4-5-20250929-v1:0"),
            ProviderKind::Copilot => ("https://api.github.com", "gpt-4.1"),
            ProviderKind::StackSpot => (
                "https://genai-inference-app.stackspot.com",
                "stackspot-agent",
            ),
            ProviderKind::Demo => ("", "demo"),
        }
    }

    /// Every provider, in the order `--help` lists them.
    pub const ALL: [ProviderKind; 15] = [
        ProviderKind::Anthropic,
        ProviderKind::OpenAi,
        ProviderKind::OpenAiResponses,
        ProviderKind::Xai,
        ProviderKind::Zai,
        ProviderKind::Moonshot,
        ProviderKind::Minimax,
        ProviderKind::OpenRouter,
        ProviderKind::GithubModels,
        ProviderKind::GoogleAi,
        ProviderKind::Ollama,
        ProviderKind::Bedrock,
        ProviderKind::Copilot,
        ProviderKind::StackSpot,
        ProviderKind::Demo,
    ];

    /// The name `--provider` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Demo => "demo",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::OpenAi => "openai",
            ProviderKind::OpenAiResponses => "openai-responses",
            ProviderKind::Xai => "xai",
            ProviderKind::Zai => "zai",
            ProviderKind::Moonshot => "moonshot",
            ProviderKind::Minimax => "minimax",
            ProviderKind::OpenRouter => "openrouter",
            ProviderKind::GithubModels => "github-models",
            ProviderKind::GoogleAi => "googleai",
            ProviderKind::Ollama => "ollama",
            ProviderKind::Bedrock => "bedrock",
            ProviderKind::Copilot => "copilot",
            ProviderKind::StackSpot => "stackspot",
        }
    }

    /// Parses a provider name or one of the reference system's aliases, case-insensitively.
    pub fn parse(value: &str) -> Option<ProviderKind> {
        let v = value.trim().to_ascii_lowercase().replace('_', "-");
        let kind = match v.as_str() {
            "demo" => ProviderKind::Demo,
            "anthropic" | "claudeai" | "claude" => ProviderKind::Anthropic,
            "openai" => ProviderKind::OpenAi,
            "openai-responses" | "responses" => ProviderKind::OpenAiResponses,
            "xai" | "grok" => ProviderKind::Xai,
            "zai" | "z.ai" | "glm" => ProviderKind::Zai,
            "moonshot" | "kimi" => ProviderKind::Moonshot,
            "minimax" => ProviderKind::Minimax,
            "openrouter" => ProviderKind::OpenRouter,
            "github-models" | "githubmodels" => ProviderKind::GithubModels,
            "googleai" | "gemini" | "google" => ProviderKind::GoogleAi,
            "ollama" => ProviderKind::Ollama,
            "bedrock" | "aws-bedrock" => ProviderKind::Bedrock,
            "copilot" | "github-copilot" => ProviderKind::Copilot,
            "stackspot" => ProviderKind::StackSpot,
            _ => return None,
        };
        Some(kind)
    }

    /// The prefix of this provider's own variables (`ANTHROPIC` in `ANTHROPIC_MODEL`).
    pub fn env_prefix(self) -> &'static str {
        match self {
            ProviderKind::Demo => "DEMO",
            ProviderKind::Anthropic => "ANTHROPIC",
            ProviderKind::OpenAi | ProviderKind::OpenAiResponses => "OPENAI",
            ProviderKind::Xai => "XAI",
            ProviderKind::Zai => "ZAI",
            ProviderKind::Moonshot => "MOONSHOT",
            ProviderKind::Minimax => "MINIMAX",
            ProviderKind::OpenRouter => "OPENROUTER",
            ProviderKind::GithubModels => "GITHUB_MODELS",
            ProviderKind::GoogleAi => "GEMINI",
            ProviderKind::Ollama => "OLLAMA",
            ProviderKind::Bedrock => "BEDROCK",
            ProviderKind::Copilot => "COPILOT",
            ProviderKind::StackSpot => "STACKSPOT",
        }
    }

    /// Variables that name the model, most specific first (`ANTHROPIC_MODEL`, `CLAUDEAI_MODEL`).
    pub fn model_vars(self) -> Vec<String> {
        let mut vars = vec![format!("{}_MODEL", self.env_prefix())];
        match self {
            ProviderKind::Anthropic => vars.push("CLAUDEAI_MODEL".into()),
            ProviderKind::GoogleAi => vars.push("GOOGLEAI_MODEL".into()),
            _ => {}
        }
        vars
    }

    /// Variables that override the endpoint.
    pub fn base_url_vars(self) -> Vec<String> {
        let mut vars = vec![format!("{}_BASE_URL", self.env_prefix())];
        if self == ProviderKind::Bedrock {
            vars.push("AWS_ENDPOINT_URL_BEDROCK_RUNTIME".into());
        }
        vars
    }

    /// Variables that hold the API key, in the order they are read.
    pub fn key_vars(self) -> &'static [&'static str] {
        match self {
            ProviderKind::Anthropic => &["ANTHROPIC_API_KEY", "CLAUDEAI_API_KEY"],
            ProviderKind::OpenAi | ProviderKind::OpenAiResponses => &["OPENAI_API_KEY"],
            ProviderKind::Xai => &["XAI_API_KEY"],
            ProviderKind::Zai => &["ZAI_API_KEY"],
            ProviderKind::Moonshot => &["MOONSHOT_API_KEY"],
            ProviderKind::Minimax => &["MINIMAX_API_KEY"],
            ProviderKind::OpenRouter => &["OPENROUTER_API_KEY"],
            ProviderKind::GithubModels => &["GITHUB_TOKEN"],
            ProviderKind::GoogleAi => &["GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLEAI_API_KEY"],
            ProviderKind::Demo
            | ProviderKind::Ollama
            | ProviderKind::Bedrock
            | ProviderKind::Copilot
            | ProviderKind::StackSpot => &[],
        }
    }

    pub fn accepted() -> String {
        ProviderKind::ALL.map(ProviderKind::as_str).join(", ")
    }
}

/// Providers picked from the keys in the environment when none is named, in this order.
/// (`GITHUB_TOKEN` is set for many other tools, so it never picks GitHub Models by itself.)
const DETECT_ORDER: [ProviderKind; 7] = [
    ProviderKind::Anthropic,
    ProviderKind::OpenAi,
    ProviderKind::Xai,
    ProviderKind::Zai,
    ProviderKind::Moonshot,
    ProviderKind::Minimax,
    ProviderKind::OpenRouter,
];

pub(super) fn detect_from_keys(env: &Env) -> Option<ProviderKind> {
    DETECT_ORDER
        .into_iter()
        .find(|kind| kind.key_vars().iter().any(|var| env.get(var).is_some()))
}
