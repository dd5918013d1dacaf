//! Long-term memory end to end: the CLI, the digest in the cached prefix, the volatile blocks in
//! the newest user turn, and explicit recall through the tool.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use chatcli::agent::{self, AgentOptions};
use chatcli::memory::embedder::Embedder;
use chatcli::memory::{MemoryMode, MemorySettings, NewFact, Store};
use chatcli::protocol::{AgentEvent, Mode, Op};
use serde_json::json;

use crate::common::events_until;
use crate::common::scripted::{Script, Scripted, respond};

fn chatcli(home: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_chatcli"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("CHATCLI_HOME", home)
        .current_dir(home)
        .args(args)
        .output()
        .expect("run chatcli");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn five_hundred_facts(path: &Path) {
    let categories = [
        "architecture",
        "pattern",
        "preference",
        "gotcha",
        "project",
        "personal",
    ];
    let lines: String = (0..500)
        .map(|i| {
            json!({
                "content": format!("Fact item{i} about subsystem{} and module{}", i * 7919 % 1000, i * 31 % 97),
                "category": categories[i % 6],
                "tags": [format!("topic{}", i % 11)],
            })
            .to_string()
                + "\n"
        })
        .collect();
    std::fs::write(path, lines).expect("write");
}

#[test]
fn the_memory_cli_imports_lists_indexes_and_forgets() {
    let home = tempfile::tempdir().expect("tempdir");
    let file = home.path().join("facts.jsonl");
    five_hundred_facts(&file);
    let (ok, out, err) = chatcli(
        home.path(),
        &["memory", "import", &file.display().to_string()],
    );
    assert!(ok, "{err}");
    assert_eq!(
        out.trim(),
        "imported 500 facts (0 near-duplicates reinforced)"
    );
    let (ok, index, _) = chatcli(home.path(), &["memory", "index"]);
    assert!(ok);
    let index = index.trim_end();
    assert!(index.chars().count() <= 600, "{}", index.chars().count());
    assert!(index.contains("Facts: 500 stored ("));
    assert!(index.lines().all(|l| !l.is_empty()), "whole lines");
    let (ok, _, _) = chatcli(
        home.path(),
        &[
            "memory",
            "add",
            "Use cargo nextest in CI",
            "--category",
            "preference",
            "--tags",
            "ci,testing",
        ],
    );
    assert!(ok);
    let (_, list, _) = chatcli(home.path(), &["memory", "list"]);
    assert_eq!(list.lines().count(), 501);
    let line = list
        .lines()
        .find(|l| l.contains("nextest"))
        .expect("listed");
    assert!(line.contains("[ci, testing]"));
    let id = line.split_whitespace().next().expect("id");
    let (ok, out, _) = chatcli(home.path(), &["memory", "forget", id]);
    assert!(ok && out.starts_with("forgot "));
    let (ok, _, err) = chatcli(
        home.path(),
        &["memory", "add", "x y z", "--category", "mood"],
    );
    assert!(!ok);
    assert!(err.contains("unknown category \"mood\""), "{err}");
    std::fs::write(home.path().join("bad.jsonl"), "{\"text\": 1}\n").expect("write");
    let (ok, _, err) = chatcli(home.path(), &["memory", "import", "bad.jsonl"]);
    assert!(!ok && err.contains("bad.jsonl line 1"), "{err}");
}

fn memory_options(dir: &Path, home: &Path, mode: MemoryMode, autorecall: bool) -> AgentOptions {
    let mut options = AgentOptions::new("s".into(), Mode::Agent, dir.to_path_buf());
    options.smart_route = chatcli::agent::routing::RouteMode::Off;
    options.memory = Some(MemorySettings {
        dir: home.join("memory"),
        mode,
        retrieval_budget: 4000,
        autorecall,
        hyde: false,
        embedder: Embedder::Local,
    });
    options
}

fn seed(home: &Path) {
    let mut store = Store::open(&home.join("memory")).expect("open");
    let facts = [
        (
            "The staging database password rotates every Monday via Vault",
            "gotcha",
        ),
        (
            "Deploy to Kubernetes with the Helm charts in deploy/charts",
            "architecture",
        ),
        ("The user prefers small pull requests", "preference"),
    ];
    for (content, category) in facts {
        store
            .add(NewFact {
                content: content.into(),
                category: category.into(),
                tags: vec!["ops".into()],
                source: "test".into(),
            })
            .expect("add");
    }
}

async fn submit(handle: &mut agent::AgentHandle, text: &str) -> Vec<AgentEvent> {
    handle
        .ops
        .send(Op::Submit {
            text: text.into(),
            mode: Mode::Agent,
        })
        .expect("agent alive");
    events_until(handle, |e| matches!(e, AgentEvent::Cost { .. })).await
}

#[tokio::test]
async fn index_mode_keeps_a_frozen_digest_in_the_cached_system_prompt() {
    let dir = tempfile::tempdir().expect("tempdir");
    seed(dir.path());
    let script = vec![
        respond(
            "",
            &[(
                "m1",
                "memory",
                json!({"action": "add", "content": "A brand new fact about caching layers", "category": "pattern"}),
            )],
        ),
        respond("noted", &[]),
        respond("ok", &[]),
    ];
    let provider = Scripted::new(script, Duration::ZERO);
    let mut handle = agent::spawn(
        provider.clone(),
        memory_options(dir.path(), dir.path(), MemoryMode::Index, true),
    );
    submit(&mut handle, "remember something about vault").await;
    submit(&mut handle, "a totally different question about kubernetes").await;
    let requests = provider.requests();
    assert_eq!(requests.len(), 3);
    let memory_block = requests[0]
        .system
        .iter()
        .find(|b| b.name == "memory index")
        .expect("digest in the system prompt");
    assert!(memory_block.stable);
    assert!(memory_block.text.contains("Facts: 3 stored"));
    for r in &requests {
        assert_eq!(
            r.system, requests[0].system,
            "identical across turns, queries and store changes"
        );
        assert!(r.tools.iter().any(|t| t.name == "memory"));
    }
    // The new fact was stored, but the session's digest stays frozen.
    assert_eq!(
        Store::open(&dir.path().join("memory"))
            .expect("open")
            .facts
            .len(),
        4
    );
    // Auto-recall rides in the newest user turn, never in the system prompt.
    let newest = requests[2].messages.last().expect("message").text();
    assert!(
        newest.contains("[MEMORY AUTO-RECALL]\n- [architecture] Deploy to Kubernetes"),
        "{newest}"
    );
    let block = newest
        .split("[memory auto-recall]\n")
        .nth(1)
        .unwrap_or_default();
    assert!(block.len() <= 700 + 20);
    assert!(
        !requests[2]
            .system
            .iter()
            .any(|b| b.text.contains("AUTO-RECALL"))
    );
    // Passive recall is not an access.
    let store = Store::open(&dir.path().join("memory")).expect("open");
    assert!(store.facts.iter().all(|f| f.access_count == 0));
}

/// A follow-up on a new topic recalls the new topic: the prompt's own words pick the facts, the
/// last answer only leans the embedding. Searched as one text with the answer, "and our code
/// review rules?" after an answer about CI recalled three CI facts, and the model had to ask.
/// Two-letter acronyms count (`CI`).
#[tokio::test]
async fn a_follow_up_on_a_new_topic_recalls_the_new_topic() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut store = Store::open(&dir.path().join("memory")).expect("open");
    let facts = [
        ("CI runs nextest and clippy on every push", "ci"),
        (
            "The team prefers cargo nextest as the test runner",
            "testing",
        ),
        ("Clippy runs with warnings denied on every push", "ci"),
        ("Every push to main deploys the docs site", "ci"),
        ("Pull requests stay small and need one approval", "review"),
        (
            "The staging database password rotates every Monday via Vault",
            "ops",
        ),
    ];
    for (content, tag) in facts {
        store
            .add(NewFact {
                content: content.into(),
                category: "project".into(),
                tags: vec![tag.into()],
                source: "test".into(),
            })
            .expect("add");
    }
    let script = vec![
        respond("CI runs nextest and clippy on every push.", &[]),
        respond("Small pull requests, one approval.", &[]),
    ];
    let provider = Scripted::new(script, Duration::ZERO);
    let mut handle = agent::spawn(
        provider.clone(),
        memory_options(dir.path(), dir.path(), MemoryMode::Index, true),
    );
    submit(&mut handle, "what does our CI run?").await;
    let first = provider.requests()[0]
        .messages
        .last()
        .expect("message")
        .text();
    assert!(first.contains("CI runs nextest and clippy"), "{first}");
    submit(&mut handle, "and our code review rules?").await;
    let requests = provider.requests();
    let newest = requests[1].messages.last().expect("message").text();
    assert!(newest.contains("Pull requests stay small"), "{newest}");
}

/// A follow-up with no words of its own ("and why?") still recalls the topic of the answer it
/// follows, through the embedding the last answer leans.
#[tokio::test]
async fn a_follow_up_without_words_of_its_own_recalls_the_last_topic() {
    let dir = tempfile::tempdir().expect("tempdir");
    seed(dir.path());
    // Among 200 other facts.
    let mut store = Store::open(&dir.path().join("memory")).expect("open");
    for i in 0..200 {
        store
            .add(NewFact {
                content: format!(
                    "Note{i} about component{} and service{}",
                    i * 7 % 211,
                    i % 97
                ),
                category: "project".into(),
                tags: vec![format!("area{}", i % 9)],
                source: "test".into(),
            })
            .expect("add");
    }
    let script = vec![
        respond("Every Monday, via Vault.", &[]),
        respond("Because the auditors ask for it.", &[]),
    ];
    let provider = Scripted::new(script, Duration::ZERO);
    let mut handle = agent::spawn(
        provider.clone(),
        memory_options(dir.path(), dir.path(), MemoryMode::Index, true),
    );
    submit(&mut handle, "when does the staging password rotate?").await;
    submit(&mut handle, "and why?").await;
    let requests = provider.requests();
    let newest = requests[1].messages.last().expect("message").text();
    assert!(
        newest.contains("rotates every Monday via Vault"),
        "{newest}"
    );
}

#[tokio::test]
async fn full_mode_puts_retrieval_in_the_newest_user_turn() {
    let dir = tempfile::tempdir().expect("tempdir");
    seed(dir.path());
    let provider = Scripted::new(vec![respond("ok", &[])], Duration::ZERO);
    let mut handle = agent::spawn(
        provider.clone(),
        memory_options(dir.path(), dir.path(), MemoryMode::Full, true),
    );
    submit(&mut handle, "how does vault rotate the database password").await;
    let request = provider.requests().pop().expect("request");
    assert!(!request.system.iter().any(|b| b.name.starts_with("memory")));
    let newest = request.messages.last().expect("message").text();
    assert!(
        newest.contains("[memory (full)]\n- [gotcha] The staging database password rotates"),
        "{newest}"
    );
}

#[tokio::test]
async fn explicit_recall_through_the_tool_counts_as_an_access() {
    let dir = tempfile::tempdir().expect("tempdir");
    seed(dir.path());
    let store_files = || {
        ["facts.jsonl", "MEMORY.md"]
            .map(|name| std::fs::read(dir.path().join("memory").join(name)).expect("read"))
    };
    let before = store_files();
    let script = vec![
        respond(
            "",
            &[(
                "r1",
                "memory",
                json!({"action": "recall", "query": "when does vault rotate credentials"}),
            )],
        ),
        respond("Mondays.", &[]),
    ];
    let provider = Scripted::new(script, Duration::ZERO);
    let mut handle = agent::spawn(
        provider.clone(),
        memory_options(dir.path(), dir.path(), MemoryMode::Index, false),
    );
    submit(&mut handle, "when is the password rotated?").await;
    let second = &provider.requests()[1];
    let result = second.messages.last().expect("results");
    let text = match &result.content[0] {
        chatcli::conversation::ContentBlock::ToolResult { content, .. } => content.clone(),
        other => panic!("{other:?}"),
    };
    assert!(
        text.starts_with(
            "1. [gotcha] The staging database password rotates every Monday via Vault (id "
        ),
        "{text}"
    );
    let store = Store::open(&dir.path().join("memory")).expect("open");
    let vault = store
        .facts
        .iter()
        .find(|f| f.content.contains("Vault"))
        .expect("fact");
    assert_eq!(vault.access_count, 1);
    // Recall is read-only for the store: the access went to its own append-only record.
    assert!(
        store_files() == before,
        "a recall left facts.jsonl and MEMORY.md byte-identical"
    );
    assert!(dir.path().join("memory").join("access.jsonl").exists());
}

#[tokio::test]
async fn a_memory_write_waiting_for_the_lock_does_not_hold_up_the_agent() {
    // The tool waits for the store's lock file (another chatcli writing, here this test). The
    // test runs on one thread: only if that wait is off the agent task can the test see the
    // call start and release the lock, so the write succeeds instead of timing out.
    let dir = tempfile::tempdir().expect("tempdir");
    seed(dir.path());
    let lock = dir.path().join("memory").join(".lock");
    std::fs::write(&lock, format!("{}\n", std::process::id())).expect("plant the lock");
    let script = vec![
        respond(
            "",
            &[(
                "a1",
                "memory",
                json!({"action": "add", "content": "Releases are cut on Thursdays", "category": "project"}),
            )],
        ),
        respond("Noted.", &[]),
    ];
    let provider = Scripted::new(script, Duration::ZERO);
    let mut handle = agent::spawn(
        provider.clone(),
        memory_options(dir.path(), dir.path(), MemoryMode::Index, false),
    );
    handle
        .ops
        .send(Op::Submit {
            text: "remember the release day".into(),
            mode: Mode::Agent,
        })
        .expect("agent alive");
    events_until(&mut handle, |e| matches!(e, AgentEvent::ToolCall { .. })).await;
    std::fs::remove_file(&lock).expect("release the lock");
    let events = events_until(&mut handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
    let result = events.iter().find_map(|e| match e {
        AgentEvent::ToolResult { ok, output, .. } => Some((*ok, output.clone())),
        _ => None,
    });
    let (ok, output) = result.expect("a tool result");
    assert!(ok && output.starts_with("remembered"), "{output}");
    let store = Store::open(&dir.path().join("memory")).expect("open");
    assert!(store.facts.iter().any(|f| f.content.contains("Thursdays")));
}

#[tokio::test]
async fn memory_off_sends_no_memory_tool_and_no_block() {
    let dir = tempfile::tempdir().expect("tempdir");
    seed(dir.path());
    let provider = Scripted::new(vec![respond("ok", &[])], Duration::ZERO);
    let mut handle = agent::spawn(
        provider.clone(),
        memory_options(dir.path(), dir.path(), MemoryMode::Off, true),
    );
    submit(&mut handle, "vault?").await;
    handle.ops.send(Op::MemoryStatus).expect("alive");
    let status = events_until(&mut handle, |e| matches!(e, AgentEvent::Notice { .. })).await;
    assert!(
        matches!(status.last(), Some(AgentEvent::Notice { message }) if message.starts_with("memory: off"))
    );
    let request = provider.requests().pop().expect("request");
    assert!(!request.tools.iter().any(|t| t.name == "memory"));
    assert!(
        !request
            .messages
            .last()
            .expect("message")
            .text()
            .contains("MEMORY")
    );
}

/// An OpenAI-style `/embeddings` mock: texts about pull requests (and the query about review
/// habits) point one way, everything else another, so only the provider's vectors can rank the
/// pull-request fact first.
async fn embeddings_server(status: u16) -> wiremock::MockServer {
    use wiremock::matchers::{method, path};
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(method("POST"))
        .and(path("/v1/embeddings"))
        .respond_with(move |request: &wiremock::Request| {
            if status != 200 {
                return wiremock::ResponseTemplate::new(status)
                    .set_body_json(json!({"error": {"message": "no embeddings here"}}));
            }
            let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap_or_default();
            let data: Vec<_> = body["input"]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
                .map(|(i, text)| {
                    let text = text.as_str().unwrap_or_default();
                    let v = if text.contains("pull requests") || text.contains("review habits") {
                        [1.0, 0.0, 0.0]
                    } else {
                        [0.0, 1.0, 0.0]
                    };
                    json!({"index": i, "embedding": v})
                })
                .collect();
            wiremock::ResponseTemplate::new(200).set_body_json(json!({"data": data}))
        })
        .mount(&server)
        .await;
    server
}

fn recall_script(query: &str) -> Vec<Script> {
    vec![
        respond(
            "",
            &[("r1", "memory", json!({"action": "recall", "query": query}))],
        ),
        respond("done", &[]),
    ]
}

fn first_result(provider: &Scripted) -> String {
    let second = &provider.requests()[1];
    match &second.messages.last().expect("results").content[0] {
        chatcli::conversation::ContentBlock::ToolResult { content, .. } => content.clone(),
        other => panic!("{other:?}"),
    }
}

fn embedded_texts(requests: &[wiremock::Request]) -> Vec<usize> {
    requests
        .iter()
        .map(|r| {
            let body: serde_json::Value = serde_json::from_slice(&r.body).expect("json");
            body["input"].as_array().map_or(0, Vec::len)
        })
        .collect()
}

/// Index-mode memory in `dir` whose recall embeds through the mock's OpenAI endpoint.
fn openai_embedding_options(dir: &Path, server: &wiremock::MockServer) -> AgentOptions {
    let mut options = memory_options(dir, dir, MemoryMode::Index, false);
    if let Some(memory) = options.memory.as_mut() {
        memory.embedder = Embedder::OpenAi {
            base: format!("{}/v1", server.uri()),
            key: "sk-test".into(),
            model: "text-embedding-3-small".into(),
        };
    }
    options
}

#[tokio::test]
async fn explicit_recall_ranks_with_the_provider_embeddings_and_caches_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    seed(dir.path());
    let server = embeddings_server(200).await;
    let options = openai_embedding_options(dir.path(), &server);
    for round in 0..2 {
        let provider = Scripted::new(recall_script("what review habits matter"), Duration::ZERO);
        let mut handle = agent::spawn(provider.clone(), options.clone());
        submit(&mut handle, "how should I send changes?").await;
        let text = first_result(&provider);
        assert!(
            text.starts_with("1. [preference] The user prefers small pull requests (id "),
            "round {round}: {text}"
        );
    }
    // The first recall embedded the three facts and the query; the second, a new session,
    // found the facts' vectors in the cache and embedded only its query.
    let requests = server.received_requests().await.expect("recorded");
    assert_eq!(embedded_texts(&requests), vec![4, 1]);
    let cache = dir
        .path()
        .join("memory/embeddings/openai-text-embedding-3-small.jsonl");
    let lines = std::fs::read_to_string(&cache).expect("cache written");
    assert_eq!(lines.lines().count(), 3);
}

#[tokio::test]
async fn a_failing_embedding_endpoint_falls_back_to_the_local_embedding() {
    let dir = tempfile::tempdir().expect("tempdir");
    seed(dir.path());
    let server = embeddings_server(404).await;
    let options = openai_embedding_options(dir.path(), &server);
    let mut script = recall_script("when does vault rotate credentials");
    script.insert(
        1,
        respond(
            "",
            &[(
                "r2",
                "memory",
                json!({"action": "recall", "query": "vault password"}),
            )],
        ),
    );
    let provider = Scripted::new(script, Duration::ZERO);
    let mut handle = agent::spawn(provider.clone(), options);
    submit(&mut handle, "when is the password rotated?").await;
    let text = first_result(&provider);
    assert!(
        text.starts_with(
            "1. [gotcha] The staging database password rotates every Monday via Vault (id "
        ),
        "{text}"
    );
    // One failed request, then the session stays local instead of failing on every recall.
    let requests = server.received_requests().await.expect("recorded");
    assert_eq!(requests.len(), 1);
}

#[tokio::test]
async fn gemini_and_ollama_embeddings_are_read_from_their_own_shapes() {
    use wiremock::matchers::{header, method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1beta/models/text-embedding-004:batchEmbedContents"))
        .and(header("x-goog-api-key", "g-key"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"embeddings": [{"values": [0.5, 0.25]}, {"values": [1.0, 0.0]}]}),
        ))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/api/embed"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"embeddings": [[0.0, 1.0], [1.0, 1.0]]})),
        )
        .mount(&server)
        .await;
    let texts = vec!["one".to_string(), "two".to_string()];
    let gemini = Embedder::Gemini {
        base: server.uri(),
        key: "g-key".into(),
        model: "text-embedding-004".into(),
    };
    assert_eq!(
        gemini.embed(&texts).await.map_err(|e| e.to_string()),
        Ok(Some(vec![vec![0.5, 0.25], vec![1.0, 0.0]]))
    );
    let ollama = Embedder::Ollama {
        host: server.uri(),
        model: "nomic-embed-text".into(),
    };
    assert_eq!(
        ollama.embed(&texts).await.map_err(|e| e.to_string()),
        Ok(Some(vec![vec![0.0, 1.0], vec![1.0, 1.0]]))
    );
    // A short answer is an error, not a silent misalignment of facts and vectors.
    let short = Embedder::Gemini {
        base: server.uri(),
        key: "g-key".into(),
        model: "text-embedding-004".into(),
    };
    let three = vec!["a".to_string(), "b".to_string(), "c".to_string()];
    assert_eq!(
        short.embed(&three).await.map_err(|e| e.to_string()),
        Err("asked for 3 embeddings, got 2".to_string())
    );
    assert_eq!(
        Embedder::Local
            .embed(&texts)
            .await
            .map_err(|e| e.to_string()),
        Ok(None)
    );
}
