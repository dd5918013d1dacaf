//! Helpers shared by the suites: spawning an agent on the demo provider, draining its events,
//! and drawing an `App` on a fixed-size test terminal.
#![allow(dead_code)]
pub mod keys;
pub mod scripted;
pub mod sse;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use chatcli::agent::{self, AgentHandle, AgentOptions};
use chatcli::cost::Catalog;
use chatcli::protocol::{AgentEvent, Mode};
use chatcli::provider::Provider;
use chatcli::provider::demo::DemoProvider;
use chatcli::ui::App;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// Agent options for a test session in `workspace`, priced like the real demo.
pub fn options(workspace: &Path, mode: Mode) -> AgentOptions {
    AgentOptions {
        pricing: Catalog::builtin().lookup("demo").cloned(),
        ..AgentOptions::new("test-session".into(), mode, workspace.to_path_buf())
    }
}

/// An agent on the demo provider; `delay` paces its stream.
pub fn demo_agent(
    workspace: &Path,
    mode: Mode,
    delay: Duration,
) -> (AgentHandle, Arc<dyn Provider>) {
    let provider: Arc<dyn Provider> = Arc::new(DemoProvider::new(delay));
    (
        agent::spawn(Arc::clone(&provider), options(workspace, mode)),
        provider,
    )
}

/// Receives events until (and including) the first one `stop` accepts; fails after 10 s.
pub async fn events_until(
    handle: &mut AgentHandle,
    stop: impl Fn(&AgentEvent) -> bool,
) -> Vec<AgentEvent> {
    let mut events = Vec::new();
    loop {
        let next = tokio::time::timeout(Duration::from_secs(10), handle.events.recv())
            .await
            .expect("an agent event within 10 s")
            .expect("the agent task is alive")
            .msg;
        let done = stop(&next);
        events.push(next);
        if done {
            return events;
        }
    }
}

/// The `type` tag of an event, as `exec --json` prints it.
pub fn kind(event: &AgentEvent) -> String {
    serde_json::to_value(event).expect("events serialize")["type"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Draws the app on a 100x30 test terminal and returns the terminal.
pub fn draw(app: &mut App) -> Terminal<TestBackend> {
    draw_at(app, 100, 30)
}

/// Draws the app on a `width`x`height` test terminal and returns the terminal.
pub fn draw_at(app: &mut App, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test terminal");
    terminal.draw(|frame| app.render(frame)).expect("draw");
    terminal
}

/// Draws the app on a `width` x `height` test terminal and returns the screen as text.
pub fn screen_at(app: &mut App, width: u16, height: u16) -> String {
    screen_text(&draw_at(app, width, height))
}

/// The style of the cell where `needle` first starts on screen, or `None` when it is not shown.
pub fn style_at(terminal: &Terminal<TestBackend>, needle: &str) -> Option<ratatui::style::Style> {
    let buffer = terminal.backend().buffer();
    for y in 0..buffer.area.height {
        // Each cell's symbol, with the cell it came from, so a byte offset maps back to a column.
        let mut row = String::new();
        let mut starts = Vec::new();
        for x in 0..buffer.area.width {
            starts.push((row.len(), x));
            row.push_str(buffer[(x, y)].symbol());
        }
        if let Some(offset) = row.find(needle) {
            let x = starts
                .iter()
                .rev()
                .find(|(start, _)| *start <= offset)
                .map_or(0, |(_, x)| *x);
            return Some(buffer[(x, y)].style());
        }
    }
    None
}

/// The screen as plain text, one line per row.
pub fn screen_text(terminal: &Terminal<TestBackend>) -> String {
    let buffer = terminal.backend().buffer();
    let mut out = String::new();
    for y in 0..buffer.area.height {
        let mut line = String::new();
        for x in 0..buffer.area.width {
            line.push_str(buffer[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// A folder the sandbox's `workspace-write` policy does not let commands write: not under the
/// system temp folder (which the policy grants) wherever the checkout lives. Cargo's target
/// tmp folder when it is elsewhere, else a folder under the user's cache or `/var/tmp`. `None`
/// (one line printed; a failure under `CI=true`) when the machine has no such place.
pub fn outside_dir() -> Option<tempfile::TempDir> {
    let temp = std::env::temp_dir()
        .canonicalize()
        .unwrap_or_else(|_| std::env::temp_dir());
    let home_cache = std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/chatcli-tests"));
    let candidates = [
        Some(std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))),
        home_cache,
        Some(std::path::PathBuf::from("/var/tmp/chatcli-tests")),
    ];
    for candidate in candidates.into_iter().flatten() {
        let _ = std::fs::create_dir_all(&candidate);
        let Ok(canonical) = candidate.canonicalize() else {
            continue;
        };
        if canonical.starts_with(&temp) {
            continue;
        }
        if let Ok(dir) = tempfile::tempdir_in(&canonical) {
            return Some(dir);
        }
    }
    needs(
        &format!(
            "a folder outside the system temp folder {} to write to",
            temp.display()
        ),
        false,
    );
    None
}

/// The one door of a test that needs something the machine may lack (a program, a peer, a
/// kernel feature, a fixture folder): `true` when it is `present`; otherwise a failure naming
/// `what` under `CI=true` (CI provides everything), and locally one skip line and `false`.
pub fn needs(what: &str, present: bool) -> bool {
    if present {
        return true;
    }
    let in_ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    assert!(
        !in_ci,
        "CI=true but {what} is missing (.ci/run provides it)"
    );
    eprintln!("skipped: {what} is missing");
    false
}

/// Whether `program args` runs and exits 0.
pub fn runs(program: &str, args: &[&str]) -> bool {
    std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The recorded provider responses in `../shared/fixtures/providers`, when that folder exists.
pub fn provider_fixtures() -> Option<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/providers");
    let what = format!("the recorded responses in {}", dir.display());
    needs(&what, dir.is_dir()).then_some(dir)
}

/// A fixture as an SSE body: `.sse` files as recorded; `.jsonl` files hold one `data:` payload
/// per line, so each line becomes one event.
pub fn fixture_sse(dir: &Path, name: &str) -> Vec<u8> {
    let path = dir.join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if name.ends_with(".jsonl") {
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| format!("data: {l}\n\n"))
            .collect::<String>()
            .into_bytes()
    } else {
        text.into_bytes()
    }
}

/// A JSON fixture (cassette) parsed.
pub fn fixture_json(dir: &Path, name: &str) -> serde_json::Value {
    let path = dir.join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// How many `cache_control` markers a request body carries, at any depth.
pub fn count_markers(value: &serde_json::Value) -> usize {
    match value {
        serde_json::Value::Object(map) => {
            usize::from(map.contains_key("cache_control"))
                + map.values().map(count_markers).sum::<usize>()
        }
        serde_json::Value::Array(items) => items.iter().map(count_markers).sum(),
        _ => 0,
    }
}

/// Ages the open approval dialog past its type-ahead guard, as if the user had looked at it.
pub fn settle_approval(app: &mut App) {
    if let Some(pending) = app.overlays.approval.as_mut() {
        pending.shown_at = std::time::Instant::now().checked_sub(std::time::Duration::from_secs(1));
    }
}

/// Presses `key` on the open approval dialog as a user answering does: on its own, then
/// nothing for longer than the burst gap (so the held answer stands).
pub fn press_alone(app: &mut App, key: crossterm::event::KeyEvent) {
    if let Some(pending) = app.overlays.approval.as_mut() {
        pending.last_key_at = None;
    }
    app.handle_key(key);
    app.settle_at(
        std::time::Instant::now()
            + chatcli::ui::approval::BURST_GAP
            + std::time::Duration::from_millis(10),
    );
}

/// Mounts an OpenAI Chat server that asks for `calls` one request each, in order (name and JSON
/// arguments), then answers `answer` to every later request.
pub async fn mount_calls_then_answer(
    server: &wiremock::MockServer,
    calls: &[(&str, String)],
    answer: &str,
) {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, ResponseTemplate};
    let sse = |body: String| {
        ResponseTemplate::new(200)
            .insert_header("content-type", "text/event-stream")
            .set_body_string(body)
    };
    for (i, (name, args)) in calls.iter().enumerate() {
        let id = format!("call_{i}");
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(sse(sse::openai_chat("", Some((&id, name, args)), 30, 0, 5)))
            .up_to_n_times(1)
            .mount(server)
            .await;
    }
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(sse(sse::openai_chat(answer, None, 30, 0, 5)))
        .mount(server)
        .await;
}

/// The model requests a mock server received (a loopback server is also asked, with GET, which
/// model it serves and how large its context is).
pub async fn posts(server: &wiremock::MockServer) -> Vec<wiremock::Request> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .into_iter()
        .filter(|r| r.method == wiremock::http::Method::POST)
        .collect()
}

/// The rows (`scenarios`) a `chatcli bench … --json` command prints; the run must succeed.
pub fn bench_rows(mut bench: std::process::Command) -> Vec<serde_json::Value> {
    let output = bench.output().expect("run chatcli bench");
    assert!(
        output.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
    json["scenarios"].as_array().expect("rows").clone()
}
