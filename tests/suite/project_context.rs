//! Project context in the prompt: bootstrap files, `/context` attachments and `@` mentions, each
//! in its place (stable blocks after core, one-off content in the newest user turn), checked on
//! the requests a scripted provider receives.

use std::path::PathBuf;
use std::time::Duration;

use chatcli::agent::{self, AgentHandle, AgentOptions};
use chatcli::conversation::ModelRequest;
use chatcli::protocol::{AgentEvent, ContextAction, Mode, Op};
use chatcli::provider::UsageRecord;
use pretty_assertions::assert_eq;

use crate::common::events_until;
use crate::common::scripted::{Scripted, respond, respond_with};

/// A project with a `.git` folder, a working directory inside it, and a separate CHATCLI_HOME.
struct Project {
    _dirs: (tempfile::TempDir, tempfile::TempDir),
    root: PathBuf,
    cwd: PathBuf,
    home: PathBuf,
}

fn project() -> Project {
    let root_dir = tempfile::tempdir().expect("tempdir");
    let home_dir = tempfile::tempdir().expect("tempdir");
    let root = root_dir.path().to_path_buf();
    std::fs::create_dir(root.join(".git")).expect("mkdir");
    let cwd = root.join("app");
    std::fs::create_dir(&cwd).expect("mkdir");
    std::fs::write(
        root.join("AGENTS.md"),
        "Run cargo test before you say done.",
    )
    .expect("write");
    std::fs::write(root.join("RULES.md"), "Project rule: no unwrap.").expect("write");
    std::fs::write(home_dir.path().join("RULES.md"), "Global rule: hidden.").expect("write");
    std::fs::write(home_dir.path().join("SOUL.md"), "You are terse.").expect("write");
    Project {
        root,
        cwd,
        home: home_dir.path().to_path_buf(),
        _dirs: (root_dir, home_dir),
    }
}

fn options(p: &Project, mode: Mode) -> AgentOptions {
    let mut options = AgentOptions::new("s".into(), mode, p.cwd.clone());
    options.home = Some(p.home.clone());
    options
}

async fn submit(handle: &mut AgentHandle, text: &str, mode: Mode) -> Vec<AgentEvent> {
    handle
        .ops
        .send(Op::Submit {
            text: text.into(),
            mode,
        })
        .expect("agent alive");
    events_until(handle, |e| matches!(e, AgentEvent::Cost { .. })).await
}

fn names(request: &ModelRequest) -> Vec<&str> {
    request.system.iter().map(|b| b.name.as_str()).collect()
}

fn block<'a>(request: &'a ModelRequest, name: &str) -> &'a str {
    request
        .system
        .iter()
        .find(|b| b.name == name)
        .map(|b| b.text.as_str())
        .unwrap_or_else(|| panic!("no {name} block in {:?}", names(request)))
}

async fn context(handle: &mut AgentHandle, action: ContextAction) -> String {
    handle
        .ops
        .send(Op::Context { action })
        .expect("agent alive");
    // The session's first notice may be about pricing or the context window; the answer follows.
    let answer = |e: &AgentEvent| {
        matches!(e, AgentEvent::Notice { message }
            if !message.starts_with("cost unknown") && !message.starts_with("context window of"))
    };
    match events_until(handle, answer).await.pop() {
        Some(AgentEvent::Notice { message }) => message,
        other => panic!("expected a notice, got {other:?}"),
    }
}

#[tokio::test]
async fn every_mode_gets_bootstrap_then_attachments_after_core_and_mentions_in_the_turn() {
    let p = project();
    std::fs::write(p.cwd.join("spec.md"), "The spec: attached-text.").expect("write");
    std::fs::write(p.cwd.join("notes.txt"), "mentioned-text\n").expect("write");
    for mode in Mode::ALL {
        let provider = Scripted::new(vec![respond("ok", &[])], Duration::ZERO);
        let mut handle = agent::spawn(provider.clone(), options(&p, mode));
        let notice = context(
            &mut handle,
            ContextAction::Add {
                paths: vec!["spec.md".into()],
            },
        )
        .await;
        assert!(notice.starts_with("attached spec.md ("), "{notice}");
        submit(&mut handle, "fix the bug described in @notes.txt", mode).await;
        let request = &provider.requests()[0];
        // Parallel mode adds no block (its catalog comes from `dispatch {}`).
        let expected: Vec<&str> = match mode {
            Mode::Chat => vec!["core", "bootstrap", "attachments"],
            Mode::Agent | Mode::Coder | Mode::Plan | Mode::Run => {
                vec!["core", "bootstrap", "attachments", "tools"]
            }
        };
        assert!(
            block(request, "attachments")
                .contains("<file path=\"spec.md\">\nThe spec: attached-text.\n</file>")
        );
        let turn = request.messages.last().expect("message").text();
        assert!(turn.contains("1  mentioned-text"), "{mode}: {turn}");
        assert!(
            request
                .system
                .iter()
                .all(|b| !b.text.contains("mentioned-text"))
        );
        assert_eq!(names(request), expected, "{mode}");
        let bootstrap = block(request, "bootstrap");
        let agents = bootstrap.find("# AGENTS.md (project)").expect("AGENTS.md");
        let soul = bootstrap.find("# SOUL.md (global)").expect("SOUL.md");
        let rules = bootstrap.find("# RULES.md (project)").expect("RULES.md");
        assert!(agents < soul && soul < rules, "{bootstrap}");
        assert!(bootstrap.contains("Project rule: no unwrap."));
        assert!(
            !bootstrap.contains("Global rule"),
            "the project file wins: {bootstrap}"
        );
    }
}

#[tokio::test]
async fn an_edited_bootstrap_file_changes_the_next_request_and_the_explainer_names_it() {
    let p = project();
    let warm = UsageRecord {
        cache_write_5m: 3000,
        output: 5,
        ..UsageRecord::default()
    };
    let hit = UsageRecord {
        cache_read: 3000,
        cache_write_5m: 40,
        output: 5,
        ..UsageRecord::default()
    };
    let cold = UsageRecord {
        cache_read: 40,
        cache_write_5m: 3100,
        output: 5,
        ..UsageRecord::default()
    };
    let provider = Scripted::new(
        vec![
            respond_with("one", &[], warm),
            respond_with("two", &[], hit),
            respond_with("three", &[], cold),
        ],
        Duration::ZERO,
    );
    let mut handle = agent::spawn(provider.clone(), options(&p, Mode::Coder));
    submit(&mut handle, "first", Mode::Coder).await;
    let second = submit(&mut handle, "second", Mode::Coder).await;
    assert!(
        !second
            .iter()
            .any(|e| matches!(e, AgentEvent::CacheMiss { .. }))
    );
    std::fs::write(
        p.root.join("AGENTS.md"),
        "Run cargo test and cargo clippy before you say done.",
    )
    .expect("write");
    let third = submit(&mut handle, "third", Mode::Coder).await;
    let requests = provider.requests();
    assert_eq!(requests[0].system, requests[1].system, "byte-identical");
    assert_ne!(requests[1].system, requests[2].system);
    assert!(block(&requests[2], "bootstrap").contains("cargo clippy"));
    assert_eq!(
        requests[1].system[0], requests[2].system[0],
        "core is untouched"
    );
    let miss = third.iter().find_map(|e| match e {
        AgentEvent::CacheMiss { block, .. } => Some(block.clone()),
        _ => None,
    });
    assert_eq!(miss.as_deref(), Some("system/bootstrap changed"));

    handle.ops.send(Op::CacheReport).expect("agent alive");
    let report = events_until(&mut handle, |e| matches!(e, AgentEvent::CacheReport { .. })).await;
    match report.last() {
        Some(AgentEvent::CacheReport { blocks, .. }) => {
            let bootstrap = blocks
                .iter()
                .find(|b| b.name == "system/bootstrap")
                .expect("/cache lists the bootstrap block");
            assert!(bootstrap.tokens > 0);
        }
        other => panic!("expected a cache report, got {other:?}"),
    }
}

#[tokio::test]
async fn without_bootstrap_files_there_is_no_block() {
    let dir = tempfile::tempdir().expect("tempdir");
    let provider = Scripted::new(vec![respond("ok", &[])], Duration::ZERO);
    let mut handle = agent::spawn(
        provider.clone(),
        AgentOptions::new("s".into(), Mode::Chat, dir.path().to_path_buf()),
    );
    submit(&mut handle, "hello", Mode::Chat).await;
    assert_eq!(names(&provider.requests()[0]), vec!["core"]);
}

#[tokio::test]
async fn the_dynamic_context_says_local_time_zone_and_directory_and_is_resent_only_on_change() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};
    let now = Arc::new(AtomicU64::new(1_796_000_000)); // 2026-11-30 00:53:20 UTC
    let clock_now = Arc::clone(&now);
    let dir = tempfile::tempdir().expect("tempdir");
    let provider = Scripted::new(vec![respond("ok", &[])], Duration::ZERO);
    let mut options = AgentOptions::new("s".into(), Mode::Chat, dir.path().to_path_buf());
    options.time_zone = chatcli::prompt::dynamic::TimeZone::Fixed {
        offset_secs: -3 * 3600,
        name: "-03".into(),
    };
    options.clock = chatcli::agent::Clock(Arc::new(move || {
        std::time::UNIX_EPOCH + Duration::from_secs(clock_now.load(Ordering::SeqCst))
    }));
    let mut handle = agent::spawn(provider.clone(), options);
    submit(&mut handle, "one", Mode::Chat).await;
    now.fetch_add(20, Ordering::SeqCst); // same minute
    submit(&mut handle, "two", Mode::Chat).await;
    now.fetch_add(60, Ordering::SeqCst); // next minute
    submit(&mut handle, "three", Mode::Chat).await;
    let requests = provider.requests();
    let cwd = dir.path().canonicalize().expect("canonical");
    let first = requests[0].messages[0].text();
    assert!(
        first.contains(&format!(
            "Today is 2026-11-29 (Sunday), 21:53 local time (time zone -03, UTC-03:00).\nWorking directory: {}",
            cwd.display()
        )),
        "{first}"
    );
    let second = requests[1].messages.last().expect("message").text();
    assert!(
        !second.contains("<context>"),
        "unchanged: not sent again: {second}"
    );
    let third = requests[2].messages.last().expect("message").text();
    assert!(third.contains("21:54 local time"), "{third}");
    assert!(
        requests
            .iter()
            .all(|r| !r.system.iter().any(|b| b.text.contains("local time"))),
        "never in the system prompt"
    );
}

#[test]
fn coder_mode_offers_the_web_tools() {
    let names: Vec<String> = chatcli::tools::ToolRegistry::for_mode(Mode::Coder)
        .specs()
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert!(names.contains(&"web_fetch".to_string()), "{names:?}");
    assert!(names.contains(&"web_search".to_string()), "{names:?}");
    assert!(names.contains(&"memory".to_string()), "{names:?}");
    assert!(names.contains(&"update_plan".to_string()), "{names:?}");
    assert_eq!(names.len(), 13);
}

#[tokio::test]
async fn a_mentioned_file_rides_in_that_turn_only_and_emails_stay_text() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("notes.txt"), "alpha-line\nbeta-line\n").expect("write");
    let provider = Scripted::new(vec![respond("ok", &[])], Duration::ZERO);
    let mut options = AgentOptions::new("s".into(), Mode::Agent, dir.path().to_path_buf());
    options.smart_route = chatcli::agent::routing::RouteMode::Auto;
    let mut handle = agent::spawn(provider.clone(), options);
    let first = submit(&mut handle, "what does @notes.txt say?", Mode::Agent).await;
    let route = first.iter().find_map(|e| match e {
        AgentEvent::Route { decision, reason } => Some((*decision, reason.clone())),
        _ => None,
    });
    assert_eq!(
        route,
        Some((
            Mode::Agent,
            "task: workspace reference \"@notes.txt\"".to_string()
        )),
        "a mention is never rerouted to chat"
    );
    submit(
        &mut handle,
        "mail user@example.com and ask @someone",
        Mode::Agent,
    )
    .await;
    let requests = provider.requests();
    let first_turn = requests[0].messages.last().expect("message").text();
    assert!(
        first_turn
            .contains("<mention file=\"notes.txt\">\n1  alpha-line\n2  beta-line\n</mention>"),
        "{first_turn}"
    );
    assert!(
        requests[0]
            .system
            .iter()
            .all(|b| !b.text.contains("alpha-line"))
    );
    let second_turn = requests[1].messages.last().expect("message").text();
    assert!(second_turn.starts_with("mail user@example.com and ask @someone"));
    assert!(!second_turn.contains("<mention"), "{second_turn}");
    let everywhere: String = requests[1].messages.iter().map(|m| m.text()).collect();
    assert_eq!(
        everywhere.matches("alpha-line").count(),
        1,
        "the inlined file is history now, sent once"
    );
    assert_eq!(
        requests[1].messages[..requests[0].messages.len()],
        requests[0].messages[..],
        "and it did not change the earlier bytes"
    );
}

#[tokio::test]
async fn mentions_work_in_chat_mode_and_git_is_summarised() {
    let dir = tempfile::tempdir().expect("tempdir");
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(dir.path())
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    };
    if !crate::common::needs("git", git(&["init", "-q"])) {
        return;
    }
    std::fs::write(dir.path().join("new.rs"), "fn main() {}\n").expect("write");
    std::fs::create_dir(dir.path().join("docs")).expect("mkdir");
    std::fs::write(dir.path().join("docs/guide.md"), "# guide\n").expect("write");
    let provider = Scripted::new(vec![respond("ok", &[])], Duration::ZERO);
    let mut handle = agent::spawn(
        provider.clone(),
        AgentOptions::new("s".into(), Mode::Chat, dir.path().to_path_buf()),
    );
    submit(&mut handle, "review @git and @docs", Mode::Chat).await;
    let turn = provider.requests()[0].messages[0].text();
    assert!(
        turn.contains("<mention git=\"git\">\n$ git status --short\n?? docs/\n?? new.rs\n$ git diff --stat\n(nothing)\n</mention>"),
        "{turn}"
    );
    assert!(
        turn.contains("<mention folder=\"docs\">\nguide.md\n</mention>"),
        "{turn}"
    );
}

#[tokio::test]
async fn attachments_change_only_on_refresh_and_context_list_shows_tokens() {
    let p = project();
    std::fs::create_dir(p.cwd.join("docs")).expect("mkdir");
    std::fs::write(p.cwd.join("docs/a.md"), "first version").expect("write");
    std::fs::write(p.cwd.join("docs/b.md"), "bee").expect("write");
    std::fs::write(p.cwd.join("logo.png"), [0u8, 159, 146, 150]).expect("write");
    let provider = Scripted::new(vec![respond("ok", &[])], Duration::ZERO);
    let mut options = options(&p, Mode::Coder);
    options.attachments = chatcli::prompt::attachments::Attachments::new(50);
    let mut handle = agent::spawn(provider.clone(), options);
    let added = context(
        &mut handle,
        ContextAction::Add {
            paths: vec!["docs".into()],
        },
    )
    .await;
    assert!(
        added.contains("docs/a.md (2 tokens), docs/b.md (1 tokens)"),
        "{added}"
    );
    let binary = context(
        &mut handle,
        ContextAction::Add {
            paths: vec!["logo.png".into()],
        },
    )
    .await;
    assert_eq!(
        binary,
        "/context add refused: logo.png is a binary file: only text files can be attached"
    );
    std::fs::write(p.cwd.join("big.txt"), "word ".repeat(100)).expect("write");
    let big = context(
        &mut handle,
        ContextAction::Add {
            paths: vec!["big.txt".into()],
        },
    )
    .await;
    assert!(
        big.contains("over CHATCLI_CONTEXT_MAX_TOKENS (50)"),
        "{big}"
    );
    assert!(
        big.contains("Sizes: big.txt 101, docs/a.md 2, docs/b.md 1"),
        "{big}"
    );

    submit(&mut handle, "one", Mode::Coder).await;
    std::fs::write(p.cwd.join("docs/a.md"), "second version").expect("write");
    submit(&mut handle, "two", Mode::Coder).await;
    let refreshed = context(&mut handle, ContextAction::Refresh).await;
    assert!(refreshed.starts_with("re-read docs/a.md"), "{refreshed}");
    submit(&mut handle, "three", Mode::Coder).await;
    let requests = provider.requests();
    assert_eq!(requests[0].system, requests[1].system, "no silent re-read");
    assert!(block(&requests[1], "attachments").contains("first version"));
    assert!(block(&requests[2], "attachments").contains("second version"));

    let list = context(&mut handle, ContextAction::List).await;
    let root = p.root.canonicalize().expect("canonical");
    assert!(
        list.contains(&format!(
            "  AGENTS.md · project · {} · ",
            root.join("AGENTS.md").display()
        )),
        "{list}"
    );
    assert!(list.contains("  SOUL.md · global · "), "{list}");
    assert!(
        list.contains(
            "attachments (3 of 50 tokens):\n  docs/a.md · 2 tokens\n  docs/b.md · 1 tokens"
        ),
        "{list}"
    );
    let dropped = context(&mut handle, ContextAction::Drop { path: "all".into() }).await;
    assert_eq!(
        dropped,
        "dropped docs/a.md, docs/b.md; attachments now 0 tokens"
    );
    submit(&mut handle, "four", Mode::Coder).await;
    assert_eq!(
        names(&provider.requests()[3]),
        vec!["core", "bootstrap", "tools"]
    );
}

#[tokio::test]
async fn exec_context_attaches_headless_and_refuses_what_it_cannot() {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "text/event-stream")
                .set_body_string(crate::common::sse::anthropic("Read it.", None, 10, 0, 0, 3)),
        )
        .mount(&server)
        .await;
    let home = tempfile::tempdir().expect("tempdir");
    let work = tempfile::tempdir().expect("tempdir");
    std::fs::write(work.path().join("design.md"), "headless-attached-text").expect("write");
    std::fs::write(work.path().join("extra.txt"), "second-attached-text").expect("write");
    std::fs::write(work.path().join("blob.bin"), [0u8, 1, 2]).expect("write");
    let run = |args: Vec<String>| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_chatcli"));
        cmd.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("CHATCLI_HOME", home.path())
            .env("ANTHROPIC_API_KEY", "k")
            .current_dir(work.path())
            .args(args);
        cmd
    };
    let base = server.uri();
    let args = |extra: &[&str]| {
        let mut v: Vec<String> = vec!["exec", "--provider", "anthropic", "--base-url", &base]
            .into_iter()
            .map(String::from)
            .collect();
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let ok = tokio::task::spawn_blocking({
        let mut cmd = run(args(&[
            "--context",
            "design.md",
            "--context",
            "extra.txt",
            "summarise",
        ]));
        move || cmd.output().expect("run chatcli")
    })
    .await
    .expect("joined");
    assert!(
        ok.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&ok.stdout).trim_end(), "Read it.");
    let bodies = crate::common::posts(&server).await;
    assert_eq!(bodies.len(), 1);
    let body: serde_json::Value = serde_json::from_slice(&bodies[0].body).expect("json");
    let system = body["system"].to_string();
    let design = system
        .find("headless-attached-text")
        .expect("design.md in the system prompt");
    let extra = system
        .find("second-attached-text")
        .expect("extra.txt in the system prompt");
    assert!(design < extra, "in the order given");

    let refused = tokio::task::spawn_blocking({
        let mut cmd = run(args(&["--context", "blob.bin", "summarise"]));
        move || cmd.output().expect("run chatcli")
    })
    .await
    .expect("joined");
    assert!(!refused.status.success());
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr).trim_end(),
        "chatcli: --context: blob.bin is a binary file: only text files can be attached"
    );
    assert_eq!(crate::common::posts(&server).await.len(), 1, "nothing sent");
}

#[test]
fn the_context_command_goes_to_the_agent_and_a_bad_one_shows_the_usage() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let (tx, mut ops) = crate::common::keys::ui_channel();
    let mut app = chatcli::ui::App::new(tx, Mode::Agent, "demo".into(), "demo".into());
    let type_line = |app: &mut chatcli::ui::App, line: &str| {
        for c in line.chars() {
            app.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        }
        app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    };
    type_line(&mut app, "/context add src *.md");
    assert_eq!(
        ops.try_recv().ok(),
        Some(Op::Context {
            action: ContextAction::Add {
                paths: vec!["src".into(), "*.md".into()]
            }
        })
    );
    type_line(&mut app, "/context wipe");
    assert!(ops.try_recv().is_err(), "nothing sent");
    let screen = crate::common::screen_text(&crate::common::draw(&mut app));
    assert!(screen.contains("usage: /context add PATH"), "{screen}");
}
