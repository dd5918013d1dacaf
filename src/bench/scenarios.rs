//! The benchmark's scenarios: scripted model turns over real tools on a generated workspace.
//!
//! Everything is deterministic: the fixture crate, the web page and the memory store are
//! generated from fixed seeds, and the local web server answers on loopback only.

use std::path::Path;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::fake::{Source, Turn};

/// The scenarios, in report order (one a line, so adding one is a one-line change).
pub const NAMES: &[&str] = &[
    "lookup",
    "coder",
    "edit",
    "research",
    "stagnation",
    "memory",
    "long",
    ORCHESTRATED,
    "session6",
    "session11",
    "session25",
    FANOUT,
];

/// The coder session with a batch of twelve parallel searches in its middle.
pub const FANOUT: &str = "fanout";

/// Whether scenario `name` runs over the peer sessions' files of numbered lines, in coder mode.
pub fn on_session_files(name: &str) -> bool {
    name.starts_with("session") || name == FANOUT
}

/// The scenario that reads many files and answers, with specialists or without.
pub const ORCHESTRATED: &str = "orchestrated";

/// The mode a scenario's prompts are sent in: the sessions over numbered files are coder
/// sessions.
pub fn mode(name: &str) -> crate::protocol::Mode {
    if on_session_files(name) {
        crate::protocol::Mode::Coder
    } else {
        crate::protocol::Mode::Agent
    }
}

/// The fixture crate's modules and their size relative to `Size::file_bytes`.
const MODULES: [(&str, f64); 6] = [
    ("lexer", 1.0),
    ("parser", 1.3),
    ("eval", 0.8),
    ("util", 0.7),
    ("render", 1.1),
    ("store", 0.9),
];

/// The research scenario's pages: (path, team, referee), each ending its report deep inside.
const REPORTS: [(&str, &str, &str); 3] = [
    ("/report/santos", "Santos", "Wilton Pereira Sampaio"),
    ("/report/gremio", "Gremio", "Raphael Claus"),
    ("/report/inter", "Internacional", "Anderson Daronco"),
];

/// Sizes that `--quick` shrinks.
#[derive(Debug, Clone, Copy)]
pub struct Size {
    pub page_bytes: usize,
    pub file_bytes: usize,
    pub long_turns: usize,
    pub facts: usize,
}

impl Size {
    /// Full size, as the tables of `docs/benchmark.md`.
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

/// Writes the workspace of scenario `name` into `dir`: the session files for the peer sessions
/// and `fanout`, the fixture crate for every other scenario.
pub fn write_scenario_workspace(name: &str, dir: &Path, size: Size) -> std::io::Result<()> {
    if on_session_files(name) {
        super::sessions::write_session_workspace(name, dir)
    } else {
        write_workspace(dir, size)
    }
}

/// Writes the fixture crate into `dir`.
pub fn write_workspace(dir: &Path, size: Size) -> std::io::Result<()> {
    // A fresh temporary workspace: its folders and files are chatcli's own (0700 and 0600).
    use crate::private_fs::{create_private_dirs, write_private};
    create_private_dirs(&dir.join("src"))?;
    write_private(
        &dir.join("Cargo.toml"),
        b"[package]\nname = \"fixture\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )?;
    for (module, _) in MODULES {
        write_private(
            &dir.join("src").join(format!("{module}.rs")),
            module_source(module, size).as_bytes(),
        )?;
    }
    write_private(
        &dir.join("src/main.rs"),
        b"mod eval;\nmod lexer;\nmod parser;\nmod render;\nmod store;\nmod util;\n\nfn main() {}\n",
    )?;
    write_private(
        &dir.join("run_tests.sh"),
        b"echo 'running 12 tests'\necho 'test result: ok. 12 passed; 0 failed'\n",
    )?;
    write_private(&dir.join("run_edit_tests.sh"), EDIT_TESTS.as_bytes())?;
    Ok(())
}

/// The edit scenario's test run: a long log and one failure until the three fixes are in.
const EDIT_TESTS: &str = r#"fail() {
  echo "running 121 tests"
  i=1
  while [ $i -le 120 ]; do echo "test tests::case_$i ... ok"; i=$((i+1)); done
  echo "test tests::entry ... FAILED"
  echo "---- tests::entry stdout ----"
  echo "thread 'tests::entry' panicked: $1"
  echo "test result: FAILED. 120 passed; 1 failed"
  exit 1
}
grep -q 'pub fn parse_entry(' src/parser.rs || fail "parser::parse_entry is missing"
grep -q 'parse_entry' src/eval.rs || fail "eval_item_4 must call parse_entry"
grep -q 'pub fn eval_entry(' src/eval.rs || fail "eval_item_2 must be renamed eval_entry"
grep -q 'eval_entry' src/util.rs || fail "util_item_1 must call eval_entry"
echo "test result: ok. 121 passed; 0 failed"
"#;

/// The source of one fixture module at this size.
pub fn module_source(module: &str, size: Size) -> String {
    let scale = MODULES
        .iter()
        .find(|(m, _)| *m == module)
        .map_or(1.0, |(_, s)| *s);
    source_file(module, (size.file_bytes as f64 * scale) as usize)
}

/// The signature line of a fixture function (what a model must see to patch it).
pub fn signature(name: &str) -> String {
    format!("pub fn {name}(input: &str, table: &mut HashMap<String, usize>) -> Option<usize> {{")
}

/// The line of a fixture function that builds its key.
pub fn key_line(module: &str, i: usize) -> String {
    format!("let key = format!(\"{module}-{i}-{{}}\", input.trim());")
}

/// A match report of about `bytes` bytes whose `passage` sits at 70% of the page.
pub fn report(team: &str, passage: &str, bytes: usize) -> String {
    let mut html = format!(
        "<!DOCTYPE html><html><head><title>Flamengo x {team}</title></head><body><h1>Flamengo x {team}: match report</h1>"
    );
    let mut n = 0;
    let mut placed = false;
    while html.len() < bytes {
        n += 1;
        if !placed && html.len() >= bytes * 7 / 10 {
            html.push_str(&format!("<p>{passage}</p>\n"));
            placed = true;
        }
        html.push_str(&format!(
            "<p>Minute {m}: against {team}, play {n} went from the midfield to the wing and back while the crowd sang.</p>\n",
            m = n % 90 + 1
        ));
    }
    html.push_str("</body></html>");
    html
}

/// The research scenario's passage for a team.
fn referee_passage(team: &str, referee: &str) -> String {
    format!("Officials: the game against {team} was refereed by {referee}")
}

/// Every page the local server answers, by path, at this size.
pub fn pages(size: Size) -> Vec<(String, String)> {
    let mut pages = vec![("/match-report".to_string(), page(size.page_bytes))];
    for (path, team, referee) in REPORTS {
        pages.push((
            path.to_string(),
            report(team, &referee_passage(team, referee), size.page_bytes),
        ));
    }
    pages
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

/// Serves `pages` (path, HTML) and SearXNG-style results at `/search` on loopback; returns the
/// base URL. The server stops when the runtime does.
pub async fn serve(pages: Vec<(String, String)>) -> std::io::Result<String> {
    let pages = std::sync::Arc::new(pages);
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
            let pages = std::sync::Arc::clone(&pages);
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
                } else if let Some((_, page)) = pages.iter().find(|(p, _)| p == path) {
                    ("200 OK", "text/html; charset=utf-8", page.clone())
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

pub(super) fn read(file: &str) -> (&'static str, Value) {
    ("read_file", json!({ "file": file }))
}

/// The scripted turns of a scenario, as prompts (each a list of turns ending in an answer);
/// none for a scenario without a script here (`orchestrated` has its own, [`orchestrated`]).
pub fn script(name: &str, size: Size, web_base: &str) -> Vec<Prompt> {
    SCRIPTS
        .iter()
        .find(|(scenario, _)| *scenario == name)
        .map(|(_, script)| script(size, web_base))
        .unwrap_or_default()
}

/// Builds a scenario's prompts from the run's size and the local web server's base URL.
type Script = fn(Size, &str) -> Vec<Prompt>;

/// Each scripted scenario's script, by name.
const SCRIPTS: &[(&str, Script)] = &[
    ("lookup", |_, web_base| lookup(web_base)),
    ("coder", |_, _| coder()),
    ("edit", |_, _| edit()),
    ("research", |_, web_base| research(web_base)),
    ("stagnation", |_, _| stagnation()),
    ("memory", |_, _| memory()),
    ("long", |size, _| long(size)),
    ("session6", |_, _| peer_session("session6")),
    ("session11", |_, _| peer_session("session11")),
    ("session25", |_, _| peer_session("session25")),
    (FANOUT, |_, _| super::sessions::fanout_prompts()),
];

/// `lookup`: one search, one fetch of the match report, the answer.
fn lookup(web_base: &str) -> Vec<Prompt> {
    vec![(
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
            Turn::answer("Flamengo won the last game, 2 x 1 against Palmeiras at the Maracanã."),
        ],
    )]
}

/// `coder`: renames, a test run, and a function needed again six turns after it was read.
fn coder() -> Vec<Prompt> {
    let lexer = || Source::File("src/lexer.rs".into());
    vec![(
        "rename parser_item_3 to parse_entry and eval_item_2 to eval_entry, run the tests, then document lexer_item_12"
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
            )])
            .needs(&signature("parser_item_3"), Source::File("src/parser.rs".into())),
            Turn::calls(vec![(
                "patch_file",
                json!({"file": "src/eval.rs", "search": "pub fn eval_item_2(", "replace": "pub fn eval_entry("}),
            )])
            .needs(&signature("eval_item_2"), Source::File("src/eval.rs".into())),
            Turn::calls(vec![("run_command", json!({"cmd": "sh run_tests.sh"}))]),
            Turn::calls(vec![read("src/render.rs")]),
            Turn::calls(vec![(
                "search_files",
                json!({"term": "eval_entry", "glob": "*.rs"}),
            )]),
            // Six turns after it was read, lexer_item_12 is needed again.
            Turn::calls(vec![(
                "patch_file",
                json!({"file": "src/lexer.rs", "search": "/// Handles lexer item 12.\n", "replace": "/// Handles lexer item 12: the entry token.\n"}),
            )])
            .needs(&signature("lexer_item_12"), lexer())
            .needs(&key_line("lexer", 12), lexer()),
            Turn::calls(vec![("run_command", json!({"cmd": "sh run_tests.sh"}))]),
            Turn::answer(
                "Renamed `parser_item_3` to `parse_entry` and `eval_item_2` to `eval_entry`, documented `lexer_item_12`; the 12 tests pass.",
            ),
        ],
    )]
}

/// `edit`: three fixes across three files, the failing test run after each until it is green.
fn edit() -> Vec<Prompt> {
    let eval = || Source::File("src/eval.rs".into());
    let tests = || {
        Turn::calls(vec![(
            "run_command",
            json!({"cmd": "sh run_edit_tests.sh"}),
        )])
    };
    vec![(
        "make eval_item_4 call the parser's entry point (rename parser_item_3 to parse_entry) and get run_edit_tests.sh green"
            .into(),
        vec![
            Turn::calls(vec![read("src/eval.rs")]),
            Turn::calls(vec![read("src/parser.rs")]),
            Turn::calls(vec![(
                "search_files",
                json!({"term": "parser_item_3", "glob": "*.rs"}),
            )]),
            Turn::calls(vec![(
                "patch_file",
                json!({"file": "src/parser.rs", "search": "pub fn parser_item_3(", "replace": "pub fn parse_entry("}),
            )])
            .needs(&signature("parser_item_3"), Source::File("src/parser.rs".into())),
            tests(),
            Turn::calls(vec![(
                "patch_file",
                json!({"file": "src/eval.rs", "search": key_line("eval", 4), "replace": format!("{} let _ = crate::parser::parse_entry;", key_line("eval", 4))}),
            )])
            .needs(&signature("eval_item_4"), eval())
            .needs(&key_line("eval", 4), eval()),
            tests(),
            Turn::calls(vec![(
                "patch_file",
                json!({"file": "src/eval.rs", "search": "pub fn eval_item_2(", "replace": "pub fn eval_entry("}),
            )])
            .needs(&signature("eval_item_2"), eval()),
            tests(),
            Turn::calls(vec![read("src/util.rs")]),
            Turn::calls(vec![(
                "patch_file",
                json!({"file": "src/util.rs", "search": key_line("util", 1), "replace": format!("{} let _ = crate::eval::eval_entry;", key_line("util", 1))}),
            )])
            .needs(&key_line("util", 1), Source::File("src/util.rs".into())),
            tests(),
            Turn::answer(
                "`eval_item_4` now calls `parse_entry`, `eval_item_2` is `eval_entry` and `util_item_1` uses it; run_edit_tests.sh passes (121 tests).",
            ),
        ],
    )]
}

/// `research`: three long match reports, each with the referee's name deep inside.
fn research(web_base: &str) -> Vec<Prompt> {
    let mut turns: Vec<Turn> = REPORTS
        .iter()
        .map(|(path, _, _)| {
            Turn::calls(vec![(
                "web_fetch",
                json!({"url": format!("{web_base}{path}")}),
            )])
        })
        .collect();
    let mut answer = Turn::answer(
        "Santos: Wilton Pereira Sampaio; Gremio: Raphael Claus; Internacional: Anderson Daronco.",
    );
    for (path, team, referee) in REPORTS {
        answer = answer.needs(
            &referee_passage(team, referee),
            Source::Web(format!("{web_base}{path}")),
        );
    }
    turns.push(answer);
    vec![(
        "who refereed Flamengo's last three games? read the match reports".into(),
        turns,
    )]
}

/// `stagnation`: the same two reads, swapped, turn after turn until the guard stops the loop.
fn stagnation() -> Vec<Prompt> {
    let ab = Turn::calls(vec![read("src/lexer.rs"), read("src/util.rs")]);
    let ba = Turn::calls(vec![read("src/util.rs"), read("src/lexer.rs")]);
    let turns = (0..60)
        .map(|i| if i % 2 == 0 { ab.clone() } else { ba.clone() })
        .collect();
    vec![("find where tokens are normalised".into(), turns)]
}

/// `memory`: five questions, each answered from one fact of the memory store.
fn memory() -> Vec<Prompt> {
    let answer = |text: &str, fact: &str, query: &str| {
        Turn::answer(text).needs(fact, Source::Memory(query.into()))
    };
    vec![
        (
            "how do we deploy the staging environment?".into(),
            vec![answer(
                "With the Helm charts in deploy/charts.",
                "Deploy staging with the Helm charts",
                "staging deploy",
            )],
        ),
        (
            "thanks, and which test runner do we prefer?".into(),
            vec![answer(
                "cargo nextest.",
                "prefers cargo nextest",
                "test runner",
            )],
        ),
        (
            "where do the database credentials live?".into(),
            vec![answer(
                "In Vault, rotated every Monday.",
                "password rotates every Monday via Vault",
                "database credentials vault",
            )],
        ),
        (
            "ok, summarise what you know about our CI".into(),
            vec![answer(
                "CI runs nextest and clippy on every push.",
                "CI runs nextest and clippy",
                "CI pipeline",
            )],
        ),
        (
            "and our code review rules?".into(),
            vec![answer(
                "Small pull requests, one approval.",
                "Pull requests stay small",
                "code review",
            )],
        ),
    ]
}

/// `long`: `size.long_turns` tool turns over the six modules, in prompts of ten.
fn long(size: Size) -> Vec<Prompt> {
    let per_prompt = 10;
    let mut prompts = Vec::new();
    let mut turn = 0;
    while turn < size.long_turns {
        let mut turns = Vec::new();
        for _ in 0..per_prompt.min(size.long_turns - turn) {
            turns.push(long_turn(turn, size));
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

/// The `long` scenario's turn number `turn`: a read, a patch, a search or a partial read, in
/// a cycle of five over the six modules.
fn long_turn(turn: usize, size: Size) -> Turn {
    let files = ["lexer", "parser", "eval", "util", "render", "store"];
    let f = files[turn % files.len()];
    match turn % 5 {
        0 | 1 => Turn::calls(vec![read(&format!("src/{f}.rs"))]),
        2 => {
            let patch = Turn::calls(vec![(
                "patch_file",
                json!({"file": format!("src/{f}.rs"), "search": format!("pub fn {f}_item_{turn}("), "replace": format!("pub fn {f}_step_{turn}(")}),
            )]);
            // A model patches only what it has seen.
            let sig = signature(&format!("{f}_item_{turn}"));
            if module_source(f, size).contains(&sig) {
                patch.needs(&sig, Source::File(format!("src/{f}.rs")))
            } else {
                patch
            }
        }
        3 => Turn::calls(vec![(
            "search_files",
            json!({"term": format!("{f}_item_1"), "glob": "*.rs"}),
        )]),
        _ => Turn::calls(vec![(
            "read_file",
            json!({"file": format!("src/{f}.rs"), "start": 1, "end": 40 + turn}),
        )]),
    }
}

/// `session6`, `session11`, `session25`: one prompt over the peer session's numbered files.
fn peer_session(name: &str) -> Vec<Prompt> {
    vec![(
        "read through this crate and tell me what each source file and the README keep".into(),
        super::sessions::session_turns(name),
    )]
}

/// A prompt (or a specialist's lane key) and the turns that answer it.
pub type Prompt = (String, Vec<Turn>);

/// The `orchestrated` scenario: read the six modules and name each one's first function, then
/// a follow-up answered from what the session holds. With `parallel` the model asks `dispatch`
/// for its catalog, dispatches three `file` specialists (two modules each) and answers from their reports; without, it reads all
/// six files itself in one batch (the cheapest a single loop can do it). Returns the prompts and
/// the specialists' lanes (keyed by a text of their task).
pub fn orchestrated(parallel: bool) -> (Vec<Prompt>, Vec<Prompt>) {
    let pairs = [("lexer", "parser"), ("eval", "util"), ("render", "store")];
    let first = |m: &str| format!("{m}.rs: the first function is {m}_item_0(input, table)");
    let answer = format!(
        "Each module's first function: {}. All take (input: &str, table: &mut HashMap<String, usize>).",
        MODULES
            .iter()
            .map(|(m, _)| format!("{m}_item_0"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let follow_up = (
        "and which module is the largest?".to_string(),
        vec![Turn::answer(
            "parser.rs is the largest of the six, then render.rs.",
        )],
    );
    let prompt = "for each of the six modules in src/ (lexer, parser, eval, util, render, store), name its first function and what the functions take".to_string();
    if !parallel {
        let reads = MODULES
            .iter()
            .map(|(m, _)| ("read_file", json!({ "file": format!("src/{m}.rs") })))
            .collect();
        return (
            vec![
                (prompt, vec![Turn::calls(reads), Turn::answer(&answer)]),
                follow_up,
            ],
            Vec::new(),
        );
    }
    let task = |a: &str, b: &str| {
        format!(
            "Read src/{a}.rs and src/{b}.rs; for each, name its first function and its parameters."
        )
    };
    let tasks: Vec<Value> = pairs
        .iter()
        .map(|(a, b)| json!({"agent": "file", "task": task(a, b)}))
        .collect();
    let lanes = pairs
        .iter()
        .map(|(a, b)| {
            (
                format!("src/{a}.rs and src/{b}.rs"),
                vec![
                    Turn::calls(vec![
                        read(&format!("src/{a}.rs")),
                        read(&format!("src/{b}.rs")),
                    ]),
                    Turn::answer(&format!("{}; {}.", first(a), first(b))),
                ],
            )
        })
        .collect();
    (
        vec![
            (
                prompt,
                vec![
                    // The catalog is on demand: the first call asks for it.
                    Turn::calls(vec![("dispatch", json!({}))]),
                    Turn::calls(vec![("dispatch", json!({ "tasks": tasks }))]),
                    Turn::answer(&answer),
                ],
            ),
            follow_up,
        ],
        lanes,
    )
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
