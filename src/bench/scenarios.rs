//! The benchmark's scenarios: scripted model turns over real tools on a generated workspace.
//!
//! Everything is deterministic: the fixture crate, the web page and the memory store are
//! generated from fixed seeds, and the local web server answers on loopback only.

use std::path::Path;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::fake::Turn;

/// The scenarios, in report order.
pub const NAMES: [&str; 5] = ["lookup", "coder", "stagnation", "memory", "long"];

/// Sizes that `--quick` shrinks.
#[derive(Debug, Clone, Copy)]
pub struct Size {
    pub page_bytes: usize,
    pub file_bytes: usize,
    pub long_turns: usize,
    pub facts: usize,
}

impl Size {
    /// Full size, as the README's table.
    pub const FULL: Size = Size {
        page_bytes: 140_000,
        file_bytes: 9_000,
        long_turns: 30,
        facts: 500,
    };
    /// A few seconds per run.
    pub const QUICK: Size = Size {
        page_bytes: 140_000,
        file_bytes: 6_000,
        long_turns: 15,
        facts: 120,
    };
}

/// A Rust-looking source file of about `bytes` bytes, with unique function names.
pub fn source_file(module: &str, bytes: usize) -> String {
    let mut out = format!(
        "//! The {module} module of the fixture crate.\n\nuse std::collections::HashMap;\n\n"
    );
    let mut i = 0;
    while out.len() < bytes {
        out.push_str(&format!(
            "/// Handles {module} item {i}.\npub fn {module}_item_{i}(input: &str, table: &mut HashMap<String, usize>) -> Option<usize> {{\n    let key = format!(\"{module}-{i}-{{}}\", input.trim());\n    let next = table.len() + {i};\n    *table.entry(key).or_insert(next) += 1;\n    table.get(input).copied()\n}}\n\n"
        ));
        i += 1;
    }
    out
}

/// Writes the fixture crate into `dir`.
pub fn write_workspace(dir: &Path, size: Size) -> std::io::Result<()> {
    std::fs::create_dir_all(dir.join("src"))?;
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"fixture\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )?;
    for (module, scale) in [
        ("lexer", 1.0),
        ("parser", 1.3),
        ("eval", 0.8),
        ("util", 0.7),
        ("render", 1.1),
        ("store", 0.9),
    ] {
        let bytes = (size.file_bytes as f64 * scale) as usize;
        std::fs::write(
            dir.join("src").join(format!("{module}.rs")),
            source_file(module, bytes),
        )?;
    }
    std::fs::write(
        dir.join("src/main.rs"),
        "mod eval;\nmod lexer;\nmod parser;\nmod render;\nmod store;\nmod util;\n\nfn main() {}\n",
    )?;
    std::fs::write(
        dir.join("run_tests.sh"),
        "echo 'running 12 tests'\necho 'test result: ok. 12 passed; 0 failed'\n",
    )?;
    Ok(())
}

/// The match report page: an HTML article of about `bytes` bytes.
pub fn page(bytes: usize) -> String {
    let mut html = String::from(
        "<!DOCTYPE html><html><head><title>Flamengo 2 x 1 Palmeiras</title><style>p{margin:0}</style>\
         <script>window.tracker = {};</script></head><body><h1>Flamengo beat Palmeiras 2 x 1</h1>",
    );
    let mut n = 0;
    while html.len() < bytes {
        n += 1;
        html.push_str(&format!(
            "<p>Minute {m}: play {n} of the match report, with the ball moving from the midfield to the wing and back while the crowd sang.</p>\n",
            m = n % 90 + 1
        ));
    }
    html.push_str("</body></html>");
    html
}

/// Serves the page at `/match-report` and SearXNG-style results at `/search` on loopback;
/// returns the base URL. The server stops when the runtime does.
pub async fn serve(page: String) -> std::io::Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    let results = json!({"results": [
        {"title": "Flamengo 2 x 1 Palmeiras: match report", "url": format!("{base}/match-report"), "content": "Flamengo won the last game 2 x 1 at the Maracanã."},
        {"title": "Flamengo fixtures", "url": format!("{base}/fixtures"), "content": "Upcoming games and results."}
    ]})
    .to_string();
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let page = page.clone();
            let results = results.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let line = String::from_utf8_lossy(&head);
                let path = line.split_whitespace().nth(1).unwrap_or("/");
                let (status, kind, body) = if path.starts_with("/search") {
                    ("200 OK", "application/json", results)
                } else if path.starts_with("/match-report") {
                    ("200 OK", "text/html; charset=utf-8", page)
                } else {
                    ("404 Not Found", "text/plain", "not found".to_string())
                };
                let response = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(response.as_bytes()).await;
            });
        }
    });
    Ok(base)
}

fn read(file: &str) -> (&'static str, Value) {
    ("read_file", json!({ "file": file }))
}

/// The scripted turns of a scenario, as prompts (each a list of turns ending in an answer).
pub fn script(name: &str, size: Size, web_base: &str) -> Vec<(String, Vec<Turn>)> {
    match name {
        "lookup" => vec![(
            "who won the last Flamengo game".into(),
            vec![
                Turn::calls(vec![(
                    "web_search",
                    json!({"query": "Flamengo last game result"}),
                )]),
                Turn::calls(vec![(
                    "web_fetch",
                    json!({"url": format!("{web_base}/match-report")}),
                )]),
                Turn::answer(
                    "Flamengo won the last game, 2 x 1 against Palmeiras at the Maracanã.",
                ),
            ],
        )],
        "coder" => vec![(
            "rename parser_item_3 to parse_entry and eval_item_2 to eval_entry, then run the tests"
                .into(),
            vec![
                Turn::calls(vec![("list_directory", json!({}))]),
                Turn::calls(vec![(
                    "search_files",
                    json!({"term": "fn parser_item_3", "glob": "*.rs"}),
                )]),
                Turn::calls(vec![read("src/parser.rs")]),
                Turn::calls(vec![read("src/eval.rs")]),
                Turn::calls(vec![read("src/lexer.rs"), read("src/util.rs")]),
                Turn::calls(vec![(
                    "patch_file",
                    json!({"file": "src/parser.rs", "search": "pub fn parser_item_3(", "replace": "pub fn parse_entry("}),
                )]),
                Turn::calls(vec![(
                    "patch_file",
                    json!({"file": "src/eval.rs", "search": "pub fn eval_item_2(", "replace": "pub fn eval_entry("}),
                )]),
                Turn::calls(vec![("run_command", json!({"cmd": "sh run_tests.sh"}))]),
                Turn::answer(
                    "Renamed `parser_item_3` to `parse_entry` and `eval_item_2` to `eval_entry`; the 12 tests pass.",
                ),
            ],
        )],
        "stagnation" => {
            let ab = Turn::calls(vec![read("src/lexer.rs"), read("src/util.rs")]);
            let ba = Turn::calls(vec![read("src/util.rs"), read("src/lexer.rs")]);
            let turns = (0..60)
                .map(|i| if i % 2 == 0 { ab.clone() } else { ba.clone() })
                .collect();
            vec![("find where tokens are normalised".into(), turns)]
        }
        "memory" => {
            let recall =
                |q: &str| Turn::calls(vec![("memory", json!({"action": "recall", "query": q}))]);
            vec![
                (
                    "how do we deploy the staging environment?".into(),
                    vec![
                        recall("staging deploy"),
                        Turn::answer("With the Helm charts, after the Monday password rotation."),
                    ],
                ),
                (
                    "thanks, and which test runner do we prefer?".into(),
                    vec![Turn::answer("cargo nextest.")],
                ),
                (
                    "where do the database credentials live?".into(),
                    vec![
                        recall("database credentials vault"),
                        Turn::answer("In Vault, rotated every Monday."),
                    ],
                ),
                (
                    "ok, summarise what you know about our CI".into(),
                    vec![Turn::answer("CI runs nextest and clippy on every push.")],
                ),
                (
                    "and our code review rules?".into(),
                    vec![Turn::answer("Small pull requests, one approval.")],
                ),
            ]
        }
        "long" => {
            let files = ["lexer", "parser", "eval", "util", "render", "store"];
            let mut prompts = Vec::new();
            let per_prompt = 10;
            let mut turn = 0;
            while turn < size.long_turns {
                let mut turns = Vec::new();
                for _ in 0..per_prompt.min(size.long_turns - turn) {
                    let f = files[turn % files.len()];
                    let t = match turn % 5 {
                        0 | 1 => Turn::calls(vec![read(&format!("src/{f}.rs"))]),
                        2 => Turn::calls(vec![(
                            "patch_file",
                            json!({"file": format!("src/{f}.rs"), "search": format!("pub fn {f}_item_{turn}("), "replace": format!("pub fn {f}_step_{turn}(")}),
                        )]),
                        3 => Turn::calls(vec![(
                            "search_files",
                            json!({"term": format!("{f}_item_1"), "glob": "*.rs"}),
                        )]),
                        _ => Turn::calls(vec![(
                            "read_file",
                            json!({"file": format!("src/{f}.rs"), "start": 1, "end": 40 + turn}),
                        )]),
                    };
                    turns.push(t);
                    turn += 1;
                }
                turns.push(Turn::answer("Done with this batch of edits."));
                prompts.push((
                    format!("continue the cleanup, part {}", prompts.len() + 1),
                    turns,
                ));
            }
            prompts
        }
        _ => Vec::new(),
    }
}

/// Facts for the memory scenario: a few the prompts need, the rest filler.
pub fn facts(n: usize) -> Vec<crate::memory::NewFact> {
    let mut facts = vec![
        (
            "Deploy staging with the Helm charts in deploy/charts",
            "architecture",
            "deploy",
        ),
        (
            "The staging database password rotates every Monday via Vault",
            "gotcha",
            "ops",
        ),
        (
            "The team prefers cargo nextest as the test runner",
            "preference",
            "testing",
        ),
        ("CI runs nextest and clippy on every push", "project", "ci"),
        (
            "Pull requests stay small and need one approval",
            "pattern",
            "review",
        ),
    ]
    .into_iter()
    .map(|(c, cat, tag)| crate::memory::NewFact {
        content: c.into(),
        category: cat.into(),
        tags: vec![tag.into()],
        source: "bench".into(),
    })
    .collect::<Vec<_>>();
    for i in facts.len()..n {
        facts.push(crate::memory::NewFact {
            content: format!(
                "Note{i} about component{} and service{} behaviour",
                i * 7 % 211,
                i * 13 % 97
            ),
            category: crate::memory::CATEGORIES[i % 6].into(),
            tags: vec![format!("area{}", i % 9)],
            source: "bench".into(),
        });
    }
    facts
}
