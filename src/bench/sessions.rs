//! The peer sessions (`session6`, `session11`, `session25`): coder sessions over files of
//! numbered text lines, the steps Claude Code and Codex CLI were measured on; and `fanout`, a
//! session over the same files whose middle turn is twelve parallel searches. Each answer needs a
//! line from the middle of every file it read, so a run that no longer carries one pays a
//! re-read. The peers' measured costs on them (`PEERS`) are fixed figures the benchmark prints
//! beside chatcli's and never tunes.

use std::path::Path;

use serde::Serialize;
use serde_json::json;

use super::fake::{Source, Turn};
use super::scenarios::read;
use super::{Row, find};

/// A peer session's files: (path, bytes). Sizes are those the peers were measured on; `--quick`
/// does not shrink them.
pub fn session_files(name: &str) -> &'static [(&'static str, usize)] {
    match name {
        "session6" => &[
            ("src/a.rs", 6_000),
            ("src/b.rs", 7_000),
            ("src/c.rs", 8_000),
            ("README.md", 3_000),
        ],
        "session11" | "fanout" => &[
            ("src/a.rs", 9_000),
            ("src/b.rs", 12_000),
            ("src/c.rs", 7_000),
            ("src/d.rs", 5_000),
            ("README.md", 4_000),
        ],
        _ => &[
            ("src/a.rs", 9_000),
            ("src/b.rs", 12_000),
            ("src/c.rs", 7_000),
            ("src/d.rs", 5_000),
            ("src/e.rs", 10_000),
            ("README.md", 4_000),
        ],
    }
}

/// One numbered text line of a session file (1-based `i`): unique, so a patch can name it.
pub fn numbered_line(stem: &str, i: usize) -> String {
    const WORDS: [&str; 8] = [
        "parser", "buffer", "config", "window", "socket", "record", "filter", "cursor",
    ];
    if i.is_multiple_of(20) {
        format!(
            "{stem} {i:04}: TODO check the {} limits of item_{i}",
            WORDS[i % 8]
        )
    } else {
        format!(
            "{stem} {i:04}: item_{i} keeps {} units of the {} state for the next pass",
            i * 7 % 97,
            WORDS[i % 8]
        )
    }
}

/// A file of numbered text lines of about `bytes` bytes.
pub fn numbered_text(stem: &str, bytes: usize) -> String {
    let mut out = String::new();
    let mut i = 1;
    while out.len() < bytes {
        out.push_str(&numbered_line(stem, i));
        out.push('\n');
        i += 1;
    }
    out
}

/// The text of a session file of about `bytes` bytes at `path`.
fn session_file(path: &str, bytes: usize) -> String {
    let stem = path.rsplit('/').next().unwrap_or(path);
    numbered_text(stem, bytes)
}

/// Writes a peer session's files, its manifest and its test script.
pub(super) fn write_session_workspace(name: &str, dir: &Path) -> std::io::Result<()> {
    // A fresh temporary workspace: its folders and files are chatcli's own (0700 and 0600).
    crate::private_fs::create_private_dirs(&dir.join("src"))?;
    for (path, bytes) in session_files(name) {
        crate::private_fs::write_private(&dir.join(path), session_file(path, *bytes).as_bytes())?;
    }
    crate::private_fs::write_private(
        &dir.join("Cargo.toml"),
        b"[package]\nname = \"session\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nserde = \"1\"\n",
    )?;
    crate::private_fs::write_private(&dir.join("run_tests.sh"), SESSION_TESTS.as_bytes())?;
    Ok(())
}

/// The 25-request session's test run: a log of 60 passing tests.
const SESSION_TESTS: &str = r#"echo "running 60 tests"
i=1
while [ $i -le 60 ]; do echo "test tests::item_$i ... ok"; i=$((i+1)); done
echo "test result: ok. 60 passed; 0 failed"
"#;

/// The numbered line `i` of the session file at `path` (what a turn needs verbatim).
fn line_of_file(path: &str, i: usize) -> String {
    numbered_line(path.rsplit('/').next().unwrap_or(path), i)
}

/// The line in the middle of the session file at `path`.
fn middle_line(name: &str, path: &str) -> usize {
    let bytes = session_files(name)
        .iter()
        .find(|(p, _)| *p == path)
        .map_or(0, |(_, b)| *b);
    session_file(path, bytes).lines().count().div_ceil(2).max(1)
}

/// A turn that needs line `i` of `path` (it was shown earlier; re-read when it is gone).
fn needing(turn: Turn, path: &str, i: usize) -> Turn {
    turn.needs(&line_of_file(path, i), Source::File(path.into()))
}

/// `patch_file` of line `i` of `path`, which the model must have seen.
fn patch_line(path: &str, i: usize) -> Turn {
    let line = line_of_file(path, i);
    needing(
        Turn::calls(vec![(
            "patch_file",
            json!({"file": path, "search": line, "replace": format!("{line} (checked)")}),
        )]),
        path,
        i,
    )
}

/// The peer sessions' turns. `session6` and `session11` are the steps the peers were measured
/// on; every session's answer describes each file it read, so it needs a line of each.
pub(super) fn session_turns(name: &str) -> Vec<Turn> {
    let search = |term: &str| Turn::calls(vec![("search_files", json!({"term": term}))]);
    let list = || Turn::calls(vec![("list_directory", json!({"dir": "src"}))]);
    // The answer describes each file: it needs a line from the middle of each.
    let answer = |files: &[&str]| {
        files.iter().fold(
            Turn::answer("Each file keeps numbered item records; the README describes them."),
            |t, f| needing(t, f, middle_line(name, f)),
        )
    };
    match name {
        "session6" => vec![
            Turn::calls(vec![read("src/a.rs")]),
            Turn::calls(vec![read("src/b.rs")]),
            Turn::calls(vec![read("src/c.rs")]),
            Turn::calls(vec![read("README.md")]),
            list(),
            answer(&["src/a.rs", "src/b.rs", "src/c.rs", "README.md"]),
        ],
        "session11" => vec![
            Turn::calls(vec![read("src/a.rs")]),
            Turn::calls(vec![read("src/b.rs")]),
            search("TODO"),
            Turn::calls(vec![read("src/c.rs")]),
            Turn::calls(vec![read("src/d.rs")]),
            Turn::calls(vec![(
                "read_file",
                json!({"file": "src/a.rs", "start": 10, "end": 40}),
            )]),
            Turn::calls(vec![read("README.md")]),
            list(),
            Turn::calls(vec![read("Cargo.toml")]),
            search("item_42 "),
            answer(&["src/a.rs", "src/b.rs", "src/c.rs", "src/d.rs", "README.md"]),
        ],
        _ => vec![
            list(),
            Turn::calls(vec![read("src/a.rs")]),
            Turn::calls(vec![read("src/b.rs")]),
            search("TODO"),
            Turn::calls(vec![read("src/c.rs")]),
            patch_line("src/a.rs", 40),
            Turn::calls(vec![read("src/d.rs")]),
            Turn::calls(vec![("run_command", json!({"cmd": "sh run_tests.sh"}))]),
            Turn::calls(vec![read("src/e.rs")]),
            Turn::calls(vec![(
                "read_file",
                json!({"file": "src/b.rs", "start": 10, "end": 40}),
            )]),
            patch_line("src/b.rs", 25),
            search("item_42 "),
            Turn::calls(vec![read("README.md")]),
            patch_line("src/c.rs", 60),
            Turn::calls(vec![("run_command", json!({"cmd": "sh run_tests.sh"}))]),
            Turn::calls(vec![read("Cargo.toml")]),
            Turn::calls(vec![read("src/d.rs")]),
            patch_line("src/d.rs", 30),
            search("checked"),
            Turn::calls(vec![(
                "read_file",
                json!({"file": "src/a.rs", "start": 100, "end": 140}),
            )]),
            patch_line("src/e.rs", 80),
            Turn::calls(vec![("run_command", json!({"cmd": "sh run_tests.sh"}))]),
            list(),
            search("TODO check the parser"),
            answer(&["src/a.rs", "src/e.rs", "README.md"]),
        ],
    }
}

/// The `fanout` session: reads, then twelve searches in one turn (24 content blocks between two
/// rolling cache markers, past Anthropic's 20-block lookback), more reads, an answer, and a
/// follow-up prompt answered after one more search.
pub(super) fn fanout_prompts() -> Vec<super::scenarios::Prompt> {
    let search = |term: String| ("search_files", json!({"term": term}));
    let batch = (1..=12)
        .map(|i| search(format!("item_{}2 ", i * 3)))
        .collect();
    let files = ["src/a.rs", "src/b.rs", "src/c.rs"];
    let answer = files.iter().fold(
        Turn::answer("Each file keeps numbered item records; the searches found where each is."),
        |t, f| needing(t, f, middle_line("fanout", f)),
    );
    vec![
        (
            "read src/a.rs and src/b.rs, find where items 32 to 362 are, then read src/c.rs and \
             tell me what each file keeps"
                .into(),
            vec![
                Turn::calls(vec![read("src/a.rs")]),
                Turn::calls(vec![read("src/b.rs")]),
                Turn::calls(batch),
                Turn::calls(vec![read("src/c.rs")]),
                answer,
            ],
        ),
        (
            "and which files mention a TODO?".into(),
            vec![
                Turn::calls(vec![search("TODO".into())]),
                Turn::answer("Every file has a TODO every 20 lines."),
            ],
        ),
    ]
}

/// A peer client's measured cost on one of the peer sessions: the same session run by the peer,
/// every request's prompt tokens split into uncached, cache write and cache read, priced as
/// the same model. Fixed figures: the benchmark never tunes them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Peer {
    pub scenario: &'static str,
    pub provider_model: &'static str,
    pub peer: &'static str,
    pub peer_cost_usd: f64,
    /// How many times cheaper than the peer chatcli's `optimised` row is meant to be.
    pub goal: f64,
}

impl Peer {
    /// What chatcli may cost on the session to meet the goal.
    pub fn goal_cost_usd(&self) -> f64 {
        self.peer_cost_usd / self.goal
    }
}

/// The peers' measured costs: Claude Code on the Anthropic wire at Sonnet prices, Codex CLI
/// on the Responses wire at GPT-4.1 prices (issue 28).
pub const PEERS: [Peer; 4] = [
    Peer {
        scenario: "session6",
        provider_model: "anthropic",
        peer: "Claude Code",
        peer_cost_usd: 0.1475,
        goal: 4.0,
    },
    Peer {
        scenario: "session11",
        provider_model: "anthropic",
        peer: "Claude Code",
        peer_cost_usd: 0.2162,
        goal: 4.0,
    },
    Peer {
        scenario: "session6",
        provider_model: "openai",
        peer: "Codex CLI (gpt-4.1)",
        peer_cost_usd: 0.0678,
        goal: 2.5,
    },
    Peer {
        scenario: "session11",
        provider_model: "openai",
        peer: "Codex CLI (gpt-4.1)",
        peer_cost_usd: 0.1388,
        goal: 2.5,
    },
];

/// chatcli's `optimised` cost beside each peer's on the scenarios `rows` ran: (peer, chatcli's
/// cost, how many times cheaper chatcli is).
pub fn against_peers(rows: &[Row]) -> Vec<(Peer, f64, f64)> {
    PEERS
        .iter()
        .filter_map(|p| {
            let o = find(rows, p.scenario, "optimised", p.provider_model)?;
            let ratio = if o.cost_usd > 0.0 {
                p.peer_cost_usd / o.cost_usd
            } else {
                f64::INFINITY
            };
            Some((*p, o.cost_usd, ratio))
        })
        .collect()
}
