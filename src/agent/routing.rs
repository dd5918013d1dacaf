//! Smart routing: whether a prompt sent in `agent` mode is a plain question that one chat
//! request (no tools, no tool schemas) answers for a fraction of the tokens.
//!
//! A lexical classifier, English and Portuguese, over lowercase words split on Unicode word
//! boundaries (so accented words match whole). A query is conversational when it opens with a
//! question lead or ends with `?`, names no task verb, references nothing in the workspace, and
//! is at most 160 characters. Anything in doubt stays in the tool loop: a wrong reroute costs a
//! useless answer, a wrong loop only some tokens. Every decision carries the signals behind it.

use crate::protocol::Mode;

/// What `CHATCLI_AGENT_SMART_ROUTE` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RouteMode {
    /// Never reroute, say nothing.
    Off,
    /// Keep the tool loop, but tell the user when `/chat` would have been cheaper.
    #[default]
    Hint,
    /// Answer conversational queries with one chat request.
    Auto,
}

impl RouteMode {
    /// Parses the variable's value; `None` for a value that is not accepted.
    pub fn parse(value: &str) -> Option<RouteMode> {
        match value.trim().to_ascii_lowercase().as_str() {
            "off" | "0" | "false" | "no" => Some(RouteMode::Off),
            "hint" | "1" | "on" | "true" | "yes" => Some(RouteMode::Hint),
            "auto" | "redirect" | "2" => Some(RouteMode::Auto),
            _ => None,
        }
    }
}

/// Longest query still considered a quick question, in characters.
pub const MAX_CHARS: usize = 160;

/// Openings of a question, as word sequences.
const QUESTION_LEADS: &[&str] = &[
    // English
    "what",
    "what's",
    "whats",
    "why",
    "how does",
    "how do",
    "how is",
    "how are",
    "how can",
    "how come",
    "when",
    "where",
    "who",
    "whom",
    "whose",
    "which",
    "explain",
    "tell me about",
    "summarize",
    "summarise",
    "difference between",
    "what is the difference",
    "define",
    "is there",
    "are there",
    "can you explain",
    "could you explain",
    "do you know",
    "hi",
    "hello",
    "hey",
    "thanks",
    "thank you",
    // Portuguese
    "o que",
    "o quê",
    "oque",
    "por que",
    "por quê",
    "porque",
    "pq",
    "como funciona",
    "como funcionam",
    "como é",
    "como são",
    "quando",
    "onde",
    "quem",
    "explique",
    "explica",
    "me explique",
    "me explica",
    "resuma",
    "resume",
    "diferença entre",
    "qual",
    "quais",
    "me fale sobre",
    "fale sobre",
    "fala sobre",
    "defina",
    "existe",
    "oi",
    "olá",
    "ola",
    "obrigado",
    "obrigada",
];

/// Verbs that ask for work on something, English and Portuguese forms.
const TASK_VERBS: &[&str] = &[
    // English
    "create",
    "build",
    "run",
    "fix",
    "write",
    "edit",
    "delete",
    "remove",
    "refactor",
    "install",
    "deploy",
    "test",
    "commit",
    "push",
    "pull",
    "merge",
    "implement",
    "add",
    "update",
    "upgrade",
    "rename",
    "move",
    "generate",
    "execute",
    "compile",
    "debug",
    "change",
    "modify",
    "patch",
    "read",
    "open",
    "list",
    "search",
    "find",
    "grep",
    "download",
    "fetch",
    "clone",
    "setup",
    "configure",
    "migrate",
    "format",
    "lint",
    "scaffold",
    "rewrite",
    "replace",
    "save",
    // Portuguese
    "criar",
    "crie",
    "cria",
    "construir",
    "construa",
    "compilar",
    "compile",
    "rodar",
    "rode",
    "roda",
    "executar",
    "execute",
    "executa",
    "corrigir",
    "corrija",
    "conserte",
    "consertar",
    "escrever",
    "escreva",
    "editar",
    "edite",
    "apagar",
    "apague",
    "deletar",
    "delete",
    "remover",
    "remova",
    "refatorar",
    "refatore",
    "instalar",
    "instale",
    "implantar",
    "implante",
    "testar",
    "teste",
    "testes",
    "commitar",
    "commite",
    "implementar",
    "implemente",
    "adicionar",
    "adicione",
    "atualizar",
    "atualize",
    "renomear",
    "renomeie",
    "mover",
    "mova",
    "gerar",
    "gere",
    "mudar",
    "mude",
    "alterar",
    "altere",
    "ler",
    "leia",
    "abrir",
    "abra",
    "listar",
    "liste",
    "buscar",
    "busque",
    "procurar",
    "procure",
    "baixar",
    "baixe",
    "salvar",
    "salve",
    "configurar",
    "configure",
    "migrar",
    "migre",
    "formatar",
    "formate",
    "substituir",
    "substitua",
    "reescrever",
    "reescreva",
];

/// Endings of file names that point at the workspace.
const CODE_EXTENSIONS: &[&str] = &[
    "rs",
    "go",
    "py",
    "js",
    "ts",
    "tsx",
    "jsx",
    "mjs",
    "java",
    "kt",
    "c",
    "h",
    "cc",
    "cpp",
    "hpp",
    "cs",
    "rb",
    "php",
    "swift",
    "scala",
    "toml",
    "yaml",
    "yml",
    "json",
    "md",
    "sh",
    "bash",
    "sql",
    "html",
    "css",
    "scss",
    "lock",
    "txt",
    "xml",
    "gradle",
    "proto",
    "tf",
    "ini",
    "cfg",
    "env",
    "dockerfile",
    "mk",
];

/// First components that mark a two-part token as a path.
const COMMON_DIRS: &[&str] = &[
    "src", "lib", "tests", "test", "docs", "doc", "app", "pkg", "cmd", "internal", "crates",
    "benches", "examples", "scripts", "bin", "config", "assets", "include", "target", "build",
];

/// A routing decision and the signals that made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// `Mode::Chat` for a conversational query, `Mode::Agent` otherwise.
    pub decision: Mode,
    /// The signals, in words.
    pub reason: String,
}

/// Lowercase words, split on anything that is not a letter, digit or apostrophe.
fn words(query: &str) -> Vec<String> {
    query
        .to_lowercase()
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'))
        .filter(|w| !w.is_empty())
        .map(|w| w.replace('’', "'"))
        .collect()
}

fn question_lead(words: &[String]) -> Option<&'static str> {
    QUESTION_LEADS.iter().copied().find(|lead| {
        let lead_words: Vec<&str> = lead.split(' ').collect();
        lead_words.len() <= words.len() && lead_words.iter().zip(words).all(|(a, b)| *a == b)
    })
}

fn task_verb(words: &[String]) -> Option<&'static str> {
    TASK_VERBS
        .iter()
        .copied()
        .find(|verb| words.iter().any(|w| w == verb))
}

/// A token that points into the workspace: `@file`, a path, or a file name with a code extension.
fn workspace_reference(query: &str) -> Option<String> {
    query
        .split_whitespace()
        .map(|token| {
            token.trim_matches(|c: char| {
                matches!(
                    c,
                    '`' | '"' | '\'' | ',' | '?' | '!' | '(' | ')' | ':' | ';'
                )
            })
        })
        .map(|token| token.trim_end_matches('.'))
        .find(|token| {
            if token.len() < 2 {
                return false;
            }
            if token.starts_with('@')
                || token.starts_with("./")
                || token.starts_with("../")
                || token.starts_with("~/")
            {
                return true;
            }
            let segments: Vec<&str> = token.split('/').filter(|s| !s.is_empty()).collect();
            // `src/lib`, `a/b/c` or `x/y.rs` are paths; `TCP/IP` and `HTTP/2` are not.
            let looks_like_path = token.contains('/')
                && !token.contains("://")
                && segments.len() >= 2
                && (segments.len() >= 3
                    || segments.last().is_some_and(|s| s.contains('.'))
                    || COMMON_DIRS.contains(&segments[0].to_ascii_lowercase().as_str()));
            if looks_like_path {
                return true;
            }
            token.rsplit_once('.').is_some_and(|(stem, ext)| {
                !stem.is_empty() && CODE_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str())
            })
        })
        .map(str::to_string)
}

/// Classifies a query sent in `agent` mode.
pub fn classify(query: &str) -> Route {
    let trimmed = query.trim();
    let words = words(trimmed);
    let chars = trimmed.chars().count();
    let lead = question_lead(&words);
    let question_mark = trimmed.ends_with('?');
    let verb = task_verb(&words);
    let reference = workspace_reference(trimmed);

    let mut signals = Vec::new();
    match lead {
        Some(lead) => signals.push(format!("question lead \"{lead}\"")),
        None => signals.push("no question lead".to_string()),
    }
    if question_mark {
        signals.push("ends with ?".to_string());
    }
    match verb {
        Some(verb) => signals.push(format!("task verb \"{verb}\"")),
        None => signals.push("no task verb".to_string()),
    }
    match &reference {
        Some(r) => signals.push(format!("workspace reference \"{r}\"")),
        None => signals.push("no workspace reference".to_string()),
    }
    signals.push(format!(
        "{chars} chars{}",
        if chars > MAX_CHARS { " (long)" } else { "" }
    ));

    let conversational = (lead.is_some() || question_mark)
        && verb.is_none()
        && reference.is_none()
        && chars <= MAX_CHARS;
    Route {
        decision: if conversational {
            Mode::Chat
        } else {
            Mode::Agent
        },
        reason: signals.join(", "),
    }
}

/// The routing tip for a conversational prompt, in the prompt's language (Portuguese or
/// English), in the reference system's words (its `agent.early_exit.chat_hint`, which it prints
/// in both modes): `rerouted` (auto) says the agent loop was skipped, as the reference does;
/// in hint mode the loop still runs, so that one clause says so instead. `first` gives the
/// whole tip, later ones are a short marker so the transcript is not nagged.
pub fn tip(prompt: &str, rerouted: bool, first: bool) -> String {
    let pt = looks_portuguese(prompt);
    let text = match (pt, rerouted, first) {
        (false, true, true) => {
            "Tip: this query looks conversational — the /agent loop was skipped. Use /chat or just type the question to force chat mode, or /run to force agent mode."
        }
        (false, false, true) => {
            "Tip: this query looks conversational — the /agent loop runs as asked. Use /chat to force chat mode, or /run to force agent mode."
        }
        (true, true, true) => {
            "Dica: essa pergunta parece conversacional — o loop /agent foi ignorado. Use /chat ou digite a pergunta direto para forçar chat, ou /run para forçar o agente."
        }
        (true, false, true) => {
            "Dica: essa pergunta parece conversacional — o loop /agent roda como pedido. Use /chat para forçar chat, ou /run para forçar o agente."
        }
        (false, _, false) => "looks conversational: /chat · /run",
        (true, _, false) => "parece conversacional: /chat · /run",
    };
    format!("{}{text}", crate::protocol::TIP_MARKER)
}

/// Whether the prompt reads as Portuguese rather than English (common words and diacritics).
pub fn looks_portuguese(text: &str) -> bool {
    const PT: &[&str] = &[
        "o",
        "os",
        "as",
        "que",
        "de",
        "do",
        "da",
        "dos",
        "das",
        "em",
        "no",
        "na",
        "um",
        "uma",
        "é",
        "não",
        "você",
        "como",
        "para",
        "por",
        "qual",
        "quais",
        "onde",
        "quando",
        "isso",
        "esse",
        "essa",
        "está",
        "são",
        "com",
        "mais",
        "porque",
        "funciona",
        "diferença",
        "entre",
    ];
    const EN: &[&str] = &[
        "the", "a", "an", "is", "are", "what", "how", "why", "of", "in", "on", "to", "for", "with",
        "does", "do", "this", "that", "which", "where", "when", "and", "between",
    ];
    let lower = text.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let pt = words.iter().filter(|w| PT.contains(w)).count()
        + lower.chars().filter(|c| "ãõçêâôáéíóú".contains(*c)).count();
    let en = words.iter().filter(|w| EN.contains(w)).count();
    pt > en
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tip_speaks_the_prompts_language_and_shortens_after_the_first() {
        // The reference's words (`agent.early_exit.chat_hint`, en and pt-BR), after its marker.
        assert_eq!(
            tip("what is a channel in Go?", true, true),
            "ℹ Tip: this query looks conversational — the /agent loop was skipped. Use /chat or just type the question to force chat mode, or /run to force agent mode."
        );
        assert_eq!(
            tip("o que é um canal em Go?", true, true),
            "ℹ Dica: essa pergunta parece conversacional — o loop /agent foi ignorado. Use /chat ou digite a pergunta direto para forçar chat, ou /run para forçar o agente."
        );
        // Hint mode: the same opening, and the truth about the loop, which still runs.
        let en = tip("what is a channel in Go?", false, true);
        assert!(
            en.starts_with(
                "ℹ Tip: this query looks conversational — the /agent loop runs as asked."
            ) && en.ends_with("Use /chat to force chat mode, or /run to force agent mode."),
            "{en}"
        );
        let pt = tip("o que é um canal em Go?", false, true);
        assert!(
            pt.starts_with("ℹ Dica: essa pergunta parece conversacional — o loop /agent roda"),
            "{pt}"
        );
        let short = tip("what is a channel in Go?", false, false);
        assert!(short.contains("looks conversational") && short.chars().count() < 40);
        assert!(looks_portuguese("qual a diferença entre TCP e UDP?"));
        assert!(!looks_portuguese(
            "what is the difference between TCP and UDP?"
        ));
    }

    const CHAT: Mode = Mode::Chat;
    const AGENT: Mode = Mode::Agent;

    /// (query, expected decision)
    const CASES: &[(&str, Mode)] = &[
        // English questions
        ("what is a mutex?", CHAT),
        (
            "What's the difference between a process and a thread?",
            CHAT,
        ),
        ("whats a monad", CHAT),
        ("why is the sky blue?", CHAT),
        ("how does TCP slow start work?", CHAT),
        ("how do I think about lifetimes in Rust", CHAT),
        ("when was Rust 1.0 released?", CHAT),
        // A task verb inside a question keeps the loop: in doubt, the loop is the safe side.
        ("where does the borrow checker run", AGENT),
        ("is TCP/IP a protocol suite?", CHAT),
        ("who wrote the C programming language?", CHAT),
        ("explain CAP theorem briefly", CHAT),
        ("tell me about B-trees", CHAT),
        ("summarize the idea of CRDTs", CHAT),
        ("difference between TCP and UDP", CHAT),
        ("is HTTP/2 multiplexed?", CHAT),
        ("hello", CHAT),
        ("a mutex or a channel?", CHAT),
        // Portuguese questions
        ("o que é um mutex?", CHAT),
        ("por que o céu é azul?", CHAT),
        ("porque usar Rust", CHAT),
        ("como funciona o garbage collector do Go?", CHAT),
        ("quando usar async?", CHAT),
        ("onde fica a pilha na memória?", CHAT),
        ("quem criou o Linux?", CHAT),
        ("explique o teorema CAP", CHAT),
        ("resuma a ideia de CRDTs", CHAT),
        ("diferença entre processo e thread", CHAT),
        ("qual a diferença entre TCP e UDP?", CHAT),
        ("quais são os tipos primitivos em Rust?", CHAT),
        // Tasks
        ("fix the failing test in the parser", AGENT),
        ("create a new module for caching", AGENT),
        ("run cargo test", AGENT),
        ("refactor the config loader", AGENT),
        ("install ripgrep", AGENT),
        ("write a function that parses dates", AGENT),
        ("corrija o teste que falha", AGENT),
        ("crie um arquivo de configuração", AGENT),
        ("rode os testes", AGENT),
        ("refatore o módulo de rede", AGENT),
        ("instale as dependências", AGENT),
        ("implemente a função de busca", AGENT),
        // Questions that still need the workspace or a task
        ("what does src/main.rs do?", AGENT),
        ("what is in Cargo.toml?", AGENT),
        ("why does ./build.sh fail?", AGENT),
        ("explain @file:lib.rs", AGENT),
        ("what does ~/notes/todo say?", AGENT),
        ("how do I fix this error?", AGENT),
        ("o que faz o arquivo main.go?", AGENT),
        ("por que o teste falha?", AGENT),
        ("what is the best way to write a parser?", AGENT),
        // No question signal at all
        ("the build is broken", AGENT),
        ("mutexes", AGENT),
        // Too long to be a quick question
        (
            "what are all the trade-offs between optimistic and pessimistic concurrency control in distributed databases across partitions, replicas, failure modes and latency budgets?",
            AGENT,
        ),
    ];

    #[test]
    fn classifier_table() {
        let mut wrong = Vec::new();
        for (query, expected) in CASES {
            let route = classify(query);
            if route.decision != *expected {
                wrong.push(format!(
                    "{query:?}: expected {expected}, got {} ({})",
                    route.decision, route.reason
                ));
            }
        }
        assert!(CASES.len() >= 40);
        assert!(wrong.is_empty(), "misrouted:\n{}", wrong.join("\n"));
    }

    #[test]
    fn accented_words_match_whole() {
        assert_eq!(
            words("Explique a diferença, já!"),
            vec!["explique", "a", "diferença", "já"]
        );
        // "testemunha" contains "teste" but is not the verb.
        assert_eq!(classify("o que é uma testemunha?").decision, CHAT);
    }

    #[test]
    fn the_reason_names_the_signals() {
        let route = classify("fix src/lib.rs");
        assert_eq!(
            route.reason,
            "no question lead, task verb \"fix\", workspace reference \"src/lib.rs\", 14 chars"
        );
    }

    #[test]
    fn route_mode_values() {
        assert_eq!(RouteMode::parse("OFF"), Some(RouteMode::Off));
        assert_eq!(RouteMode::parse("1"), Some(RouteMode::Hint));
        assert_eq!(RouteMode::parse("redirect"), Some(RouteMode::Auto));
        assert_eq!(RouteMode::parse("sometimes"), None);
    }
}
