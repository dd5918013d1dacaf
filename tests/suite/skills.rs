//! Skills in the prompt, checked on the requests a scripted provider receives: skills at every
//! location (CHATCLI_HOME and the project's `.chatcli`, `.agents`, `.claude` folders), the
//! stable catalog and pinned blocks, the `skill` tool and `read_file` inside skill folders,
//! activation by trigger words and by `@` mentions, and the token cost of a hundred skills.

use std::path::{Path, PathBuf};
use std::time::Duration;

use chatcli::agent::{self, AgentHandle, AgentOptions};
use chatcli::conversation::{ContentBlock, ModelRequest};
use chatcli::protocol::{AgentEvent, Mode, Op, SkillAction};
use chatcli::provider::UsageRecord;
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::common::events_until;
use crate::common::scripted::{Scripted, respond, respond_with};

/// A project (`.git` at the root, the session in `app/`) and a CHATCLI_HOME.
struct Project {
    _dirs: (tempfile::TempDir, tempfile::TempDir),
    root: PathBuf,
    cwd: PathBuf,
    home: PathBuf,
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

fn skill_md(name: &str, description: &str, extra: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n{extra}---\n{body}\n")
}

fn project() -> Project {
    let root_dir = tempfile::tempdir().expect("tempdir");
    let home_dir = tempfile::tempdir().expect("tempdir");
    let root = root_dir.path().canonicalize().expect("canonical");
    let home = home_dir.path().canonicalize().expect("canonical");
    std::fs::create_dir(root.join(".git")).expect("mkdir");
    let cwd = root.join("app");
    std::fs::create_dir(&cwd).expect("mkdir");
    Project {
        root,
        cwd,
        home,
        _dirs: (root_dir, home_dir),
    }
}

/// One skill at each location, one overridden by the project, and one invalid.
fn install_everywhere(p: &Project) {
    write(
        &p.home.join("skills/deploy/SKILL.md"),
        &skill_md(
            "deploy",
            "Ship a release to production",
            "triggers:\n  - deploy\n  - \"roll back\"\nmodel: opus\n",
            "DEPLOY-BODY: tag, build, push.",
        ),
    );
    write(
        &p.home.join("skills/deploy/references/checklist.md"),
        "CHECKLIST-TEXT",
    );
    write(
        &p.home.join("skills/style.md"),
        &skill_md("style", "User copy, overridden", "", "USER-STYLE"),
    );
    write(
        &p.root.join(".chatcli/skills/style/SKILL.md"),
        &skill_md("style", "House style for prose", "", "PROJECT-STYLE"),
    );
    write(
        &p.root.join(".agents/skills/sql/SKILL.md"),
        &skill_md(
            "sql",
            "Writing migrations",
            "paths: [\"**/*.sql\"]\n",
            "SQL-BODY: never drop a column.",
        ),
    );
    write(
        &p.root.join(".claude/skills/api/SKILL.md"),
        &skill_md("api", "HTTP API conventions", "", "API-BODY"),
    );
    write(
        &p.root.join(".claude/skills/broken/SKILL.md"),
        "---\nname: broken\n---\nno description",
    );
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

async fn skill_op(handle: &mut AgentHandle, action: SkillAction) -> String {
    handle.ops.send(Op::Skill { action }).expect("agent alive");
    let answer = |e: &AgentEvent| {
        matches!(e, AgentEvent::Notice { message }
            if !message.starts_with("cost unknown") && !message.starts_with("skill skipped"))
    };
    match events_until(handle, answer).await.pop() {
        Some(AgentEvent::Notice { message }) => message,
        other => panic!("expected a notice, got {other:?}"),
    }
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

fn last_turn(request: &ModelRequest) -> String {
    request.messages.last().expect("a message").text()
}

fn notices(events: &[AgentEvent]) -> Vec<&str> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Notice { message } => Some(message.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn the_catalog_is_sorted_stable_over_five_requests_and_skips_the_invalid_skill() {
    let p = project();
    install_everywhere(&p);
    let provider = Scripted::new(vec![respond("ok", &[])], Duration::ZERO);
    let mut handle = agent::spawn(provider.clone(), options(&p, Mode::Agent));
    let mut events = Vec::new();
    for i in 0..5 {
        events.extend(submit(&mut handle, &format!("question {i}"), Mode::Agent).await);
    }
    let requests = provider.requests();
    assert_eq!(requests.len(), 5);
    assert_eq!(names(&requests[0]), vec!["core", "skills", "tools"]);
    assert_eq!(
        block(&requests[0], "skills"),
        "Skills (call the `skill` tool with a name to load its instructions when a task matches):\n\
         - api: HTTP API conventions\n\
         - deploy: Ship a release to production\n\
         - sql: Writing migrations\n\
         - style: House style for prose"
    );
    let first = serde_json::to_string(&requests[0].system).expect("json");
    let tools = serde_json::to_string(&requests[0].tools).expect("json");
    for request in &requests[1..] {
        assert_eq!(serde_json::to_string(&request.system).expect("json"), first);
        assert_eq!(serde_json::to_string(&request.tools).expect("json"), tools);
    }
    assert!(requests[0].tools.iter().any(|t| t.name == "skill"));
    let warnings: Vec<&str> = notices(&events)
        .into_iter()
        .filter(|n| n.starts_with("skill skipped"))
        .collect();
    assert_eq!(warnings.len(), 1, "one warning: {warnings:?}");
    assert!(
        warnings[0].ends_with(".claude/skills/broken/SKILL.md: `description` is missing"),
        "{}",
        warnings[0]
    );

    let listing = skill_op(&mut handle, SkillAction::List).await;
    assert!(listing.starts_with("skills (4):"), "{listing}");
    assert!(
        listing.contains(&format!(
            "  style · project · {} · ",
            p.root.join(".chatcli/skills/style").display()
        )),
        "{listing}"
    );
    assert!(listing.contains("  deploy · user · "), "{listing}");
    let shown = skill_op(
        &mut handle,
        SkillAction::Show {
            name: "deploy".into(),
        },
    )
    .await;
    assert!(shown.contains("model: opus (shown, not applied in the main loop)"));
    assert!(shown.ends_with("DEPLOY-BODY: tag, build, push."), "{shown}");
}

#[tokio::test]
async fn the_catalog_is_capped_and_chat_mode_leaves_it_out() {
    let p = project();
    for i in 0..40 {
        write(
            &p.root.join(format!(".agents/skills/s{i:02}/SKILL.md")),
            &skill_md(&format!("s{i:02}"), "A skill about one topic", "", "body"),
        );
    }
    let provider = Scripted::new(vec![respond("ok", &[])], Duration::ZERO);
    let mut opts = options(&p, Mode::Agent);
    opts.skills.catalog_max_chars = 500;
    let mut handle = agent::spawn(provider.clone(), opts);
    submit(&mut handle, "hello", Mode::Agent).await;
    submit(&mut handle, "hello", Mode::Chat).await;
    let requests = provider.requests();
    let catalog = block(&requests[0], "skills");
    assert!(catalog.len() <= 500, "{}", catalog.len());
    let shown = catalog.matches("\n- s").count();
    assert!(shown > 5, "{catalog}");
    assert!(
        catalog.ends_with(&format!("\n{} more: /skill list", 40 - shown)),
        "{catalog}"
    );
    assert!(catalog.contains("- s00:") && !catalog.contains("- s39:"));
    assert_eq!(names(&requests[1]), vec!["core"], "chat: no catalog");
    assert!(requests[1].tools.is_empty());
}

#[tokio::test]
async fn the_skill_tool_returns_the_body_and_files_and_read_file_reads_only_inside_them() {
    let p = project();
    install_everywhere(&p);
    write(&p.home.join("secret.txt"), "SECRET");
    let checklist = p.home.join("skills/deploy/references/checklist.md");
    let escape = format!(
        "{}/../../secret.txt",
        p.home.join("skills/deploy").display()
    );
    let provider = Scripted::new(
        vec![
            respond("", &[("c1", "skill", json!({"name": "deploy"}))]),
            respond(
                "",
                &[
                    (
                        "c2",
                        "read_file",
                        json!({"file": checklist.display().to_string()}),
                    ),
                    (
                        "c3",
                        "read_file",
                        json!({"file": p.home.join("secret.txt").display().to_string()}),
                    ),
                    ("c4", "read_file", json!({"file": escape})),
                    ("c5", "skill", json!({"name": "nope"})),
                ],
            ),
            respond("done", &[]),
        ],
        Duration::ZERO,
    );
    let mut handle = agent::spawn(provider.clone(), options(&p, Mode::Agent));
    submit(&mut handle, "ship it", Mode::Agent).await;
    let requests = provider.requests();
    assert_eq!(requests.len(), 3);
    let results = |request: &ModelRequest| -> Vec<(String, bool)> {
        request
            .messages
            .last()
            .expect("results")
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ToolResult {
                    content, is_error, ..
                } => Some((content.clone(), *is_error)),
                _ => None,
            })
            .collect()
    };
    let loaded = results(&requests[1]);
    assert_eq!(loaded.len(), 1);
    assert!(
        loaded[0]
            .0
            .starts_with("<skill name=\"deploy\">\nDEPLOY-BODY: tag, build, push.\n</skill>"),
        "{}",
        loaded[0].0
    );
    assert!(loaded[0].0.contains("model: opus"));
    assert!(
        loaded[0].0.ends_with(&format!(
            "Its files (read them with read_file, by these paths):\n{}",
            checklist.display()
        )),
        "{}",
        loaded[0].0
    );
    let read = results(&requests[2]);
    assert_eq!(read.len(), 4);
    assert!(
        !read[0].1 && read[0].0.contains("CHECKLIST-TEXT"),
        "{:?}",
        read[0]
    );
    assert!(read[1].1 && !read[1].0.contains("SECRET"), "{:?}", read[1]);
    assert!(read[2].1 && !read[2].0.contains("SECRET"), "{:?}", read[2]);
    assert!(
        read[3].1
            && read[3]
                .0
                .contains("no skill named nope (installed: api, deploy, sql, style)"),
        "{:?}",
        read[3]
    );
}

#[tokio::test]
async fn a_trigger_sends_the_body_for_one_turn_then_refers_to_it_by_name() {
    let p = project();
    install_everywhere(&p);
    let provider = Scripted::new(vec![respond("ok", &[])], Duration::ZERO);
    let mut handle = agent::spawn(provider.clone(), options(&p, Mode::Agent));
    let events = submit(&mut handle, "How do I DÉPLOY the app?", Mode::Agent).await;
    assert!(
        notices(&events)
            .iter()
            .any(|n| n.starts_with("skills for this prompt: deploy (\"deploy\")")),
        "{:?}",
        notices(&events)
    );
    submit(&mut handle, "thanks, and the deployment docs?", Mode::Agent).await;
    submit(&mut handle, "now deploy again", Mode::Agent).await;
    let requests = provider.requests();
    let first = last_turn(&requests[0]);
    assert!(first.contains("<context>"), "{first}");
    assert!(
        first.contains(
            "[skills]\nSkills for this request (follow them):\n<skill name=\"deploy\">\nDEPLOY-BODY"
        ),
        "{first}"
    );
    assert!(!first.contains("SQL-BODY"));
    let second = last_turn(&requests[1]);
    assert!(!second.contains("DEPLOY-BODY"), "one turn only: {second}");
    assert!(!second.contains("[skills]"), "{second}");
    let third = last_turn(&requests[2]);
    assert!(!third.contains("DEPLOY-BODY"), "{third}");
    assert!(
        third
            .contains("Skill `deploy` applies: its instructions are earlier in this conversation."),
        "{third}"
    );
    // The body sent in the first turn is still in the history the third request carries.
    assert_eq!(
        requests[2]
            .messages
            .iter()
            .filter(|m| m.text().contains("DEPLOY-BODY"))
            .count(),
        1
    );
    assert!(
        block(&requests[2], "skills").contains("- deploy:"),
        "the catalog stays"
    );
}

#[tokio::test]
async fn an_at_mention_of_a_matching_path_activates_the_skill_in_chat_mode_too() {
    let p = project();
    install_everywhere(&p);
    write(&p.cwd.join("db/schema.sql"), "create table t (id int);\n");
    let provider = Scripted::new(vec![respond("ok", &[])], Duration::ZERO);
    let mut handle = agent::spawn(provider.clone(), options(&p, Mode::Chat));
    submit(&mut handle, "what is wrong in this file?", Mode::Chat).await;
    submit(&mut handle, "review @db/schema.sql please", Mode::Chat).await;
    let requests = provider.requests();
    assert!(!last_turn(&requests[0]).contains("SQL-BODY"));
    let turn = last_turn(&requests[1]);
    assert!(turn.contains("<skill name=\"sql\">\nSQL-BODY"), "{turn}");
    assert!(
        turn.contains("create table t"),
        "the mention is inlined too"
    );
    assert_eq!(names(&requests[1]), vec!["core"]);
}

#[tokio::test]
async fn pinning_puts_the_body_in_the_prefix_persists_and_the_explainer_names_the_block() {
    let p = project();
    install_everywhere(&p);
    let warm = UsageRecord {
        cache_write_5m: 3000,
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
            respond_with("two", &[], cold),
            respond_with("three", &[], cold),
        ],
        Duration::ZERO,
    );
    let mut handle = agent::spawn(provider.clone(), options(&p, Mode::Agent));
    submit(&mut handle, "first", Mode::Agent).await;
    let pinned = skill_op(
        &mut handle,
        SkillAction::Pin {
            name: "style".into(),
        },
    )
    .await;
    assert!(
        pinned.starts_with("pinned style (~") && pinned.contains("`pinned skills` block"),
        "{pinned}"
    );
    let miss = |events: &[AgentEvent]| {
        events.iter().find_map(|e| match e {
            AgentEvent::CacheMiss { block, .. } => Some(block.clone()),
            _ => None,
        })
    };
    let events = submit(&mut handle, "second", Mode::Agent).await;
    assert_eq!(
        miss(&events).as_deref(),
        Some("system/pinned skills now stands where system/tools was")
    );
    let requests = provider.requests();
    assert_eq!(
        names(&requests[1]),
        vec!["core", "skills", "pinned skills", "tools"]
    );
    assert_eq!(requests[0].system[..2], requests[1].system[..2]);
    assert!(
        block(&requests[1], "pinned skills")
            .contains("<skill name=\"style\">\nPROJECT-STYLE\n</skill>")
    );
    assert!(
        skill_op(&mut handle, SkillAction::List)
            .await
            .lines()
            .any(|l| l.starts_with("  style · project · ") && l.ends_with(" · pinned"))
    );

    // A new session in the same workspace keeps the pin.
    let again = Scripted::new(vec![respond("ok", &[])], Duration::ZERO);
    let mut second = agent::spawn(again.clone(), options(&p, Mode::Chat));
    submit(&mut second, "hi", Mode::Chat).await;
    assert_eq!(names(&again.requests()[0]), vec!["core", "pinned skills"]);

    let unpinned = skill_op(
        &mut handle,
        SkillAction::Unpin {
            name: "style".into(),
        },
    )
    .await;
    assert!(unpinned.starts_with("unpinned style"), "{unpinned}");
    // The cold usage repeats: request 3 read 40 of the 3140 request 2 had cached.
    let events = submit(&mut handle, "third", Mode::Agent).await;
    assert_eq!(
        miss(&events).as_deref(),
        Some("system/tools now stands where system/pinned skills was")
    );
    assert_eq!(
        names(&provider.requests()[2]),
        vec!["core", "skills", "tools"]
    );
    assert_eq!(
        skill_op(
            &mut handle,
            SkillAction::Unpin {
                name: "style".into()
            }
        )
        .await,
        "style is not pinned (/skill list marks the pinned ones)"
    );
}

/// Tokens of what every request repeats: the system blocks and the tool definitions.
fn fixed_tokens(request: &ModelRequest) -> u64 {
    let system: Vec<&str> = request.system.iter().map(|b| b.text.as_str()).collect();
    chatcli::tokens::count(&system.join("\n\n"))
        + chatcli::tokens::count(&serde_json::to_string(&request.tools).expect("json"))
}

/// The measurement in `docs/guide/skills.md`: 100 installed skills cost their catalog on every request, not
/// their bodies. Run with `--nocapture` to print the figures.
#[tokio::test]
async fn a_hundred_skills_cost_a_catalog_not_a_hundred_bodies() {
    let p = project();
    let first = async |p: &Project, max: usize| {
        let provider = Scripted::new(vec![respond("ok", &[])], Duration::ZERO);
        let mut opts = options(p, Mode::Agent);
        opts.skills.catalog_max_chars = max;
        let mut handle = agent::spawn(provider.clone(), opts);
        submit(&mut handle, "hello", Mode::Agent).await;
        let request = provider.requests().remove(0);
        (handle, request)
    };
    let (_, none) = first(&p, 4000).await;
    for i in 0..100 {
        let body: String = (0..25)
            .map(|j| {
                format!(
                    "{j}. For service-{i}, run `svc{i} check --stage {j}` and compare its report with the runbook before going on.\n"
                )
            })
            .collect();
        write(
            &p.home.join(format!("skills/service-{i:03}/SKILL.md")),
            &skill_md(
                &format!("service-{i:03}"),
                &format!("Build, test and release steps for service {i} and its runbook"),
                "",
                &body,
            ),
        );
    }
    let (_, capped) = first(&p, 4000).await;
    let (_, full) = first(&p, 1_000_000).await;
    // Pins persist per workspace: pinning all 100 here puts their bodies in the next session.
    let (mut handle, _) = first(&p, 4000).await;
    for i in 0..100 {
        skill_op(
            &mut handle,
            SkillAction::Pin {
                name: format!("service-{i:03}"),
            },
        )
        .await;
    }
    let bodies = Scripted::new(vec![respond("ok", &[])], Duration::ZERO);
    let mut pinned = agent::spawn(bodies.clone(), options(&p, Mode::Agent));
    submit(&mut pinned, "hello", Mode::Agent).await;
    let all = bodies.requests().remove(0);
    assert!(all.system.iter().any(|b| b.name == "pinned skills"));

    let base = fixed_tokens(&none);
    let catalog = fixed_tokens(&capped) - base;
    let catalog_full = fixed_tokens(&full) - base;
    let with_bodies = fixed_tokens(&all) - fixed_tokens(&capped);
    println!(
        "skills measurement: no skills {base} tokens per request; 100 skills, catalog capped at 4000 chars +{catalog}; catalog uncapped +{catalog_full}; all 100 bodies +{with_bodies} (on top of the capped catalog)"
    );
    assert!(block(&capped, "skills").ends_with("more: /skill list"));
    assert!(catalog < 1_200, "{catalog}");
    assert!(
        catalog_full < with_bodies / 5,
        "{catalog_full} vs {with_bodies}"
    );
}

#[test]
fn the_skill_command_goes_to_the_agent_and_a_bad_one_shows_the_usage() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let (tx, mut ops) = crate::common::keys::ui_channel();
    let mut app = chatcli::ui::App::new(tx, Mode::Agent, "demo".into(), "demo".into());
    let type_line = |app: &mut chatcli::ui::App, line: &str| {
        for c in line.chars() {
            app.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        }
        app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    };
    for (line, action) in [
        ("/skill", SkillAction::List),
        (
            "/skill pin deploy",
            SkillAction::Pin {
                name: "deploy".into(),
            },
        ),
        (
            "/skill unpin deploy",
            SkillAction::Unpin {
                name: "deploy".into(),
            },
        ),
        ("/skill show sql", SkillAction::Show { name: "sql".into() }),
    ] {
        type_line(&mut app, line);
        assert_eq!(ops.try_recv().ok(), Some(Op::Skill { action }), "{line}");
    }
    type_line(&mut app, "/skill pin");
    assert!(ops.try_recv().is_err(), "nothing sent");
    let screen = crate::common::screen_text(&crate::common::draw(&mut app));
    assert!(
        screen.contains("usage: /skill list | show NAME | pin NAME | unpin NAME"),
        "{screen}"
    );
}

#[test]
fn chatcli_skill_list_prints_every_skill_and_the_skipped_one_headless() {
    let p = project();
    install_everywhere(&p);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_chatcli"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("CHATCLI_HOME", &p.home)
        .current_dir(&p.cwd)
        .args(["skill", "list"])
        .output()
        .expect("run chatcli");
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).expect("utf-8");
    let names: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("  ")?.split(" · ").next())
        .collect();
    assert_eq!(names[..4], ["api", "deploy", "sql", "style"], "{stdout}");
    assert!(
        stdout.contains("skill skipped: ") && stdout.contains("`description` is missing"),
        "{stdout}"
    );
}

#[tokio::test]
async fn after_a_rewind_past_the_turn_that_carried_it_the_body_is_sent_again() {
    let p = project();
    install_everywhere(&p);
    let provider = Scripted::new(vec![respond("ok", &[])], Duration::ZERO);
    let mut handle = agent::spawn(provider.clone(), options(&p, Mode::Agent));
    submit(&mut handle, "how do we deploy?", Mode::Agent).await;
    handle
        .ops
        .send(Op::Rewind { prompt: 0 })
        .expect("agent alive");
    submit(&mut handle, "deploy, step by step", Mode::Agent).await;
    let requests = provider.requests();
    assert_eq!(requests.len(), 2);
    assert!(
        last_turn(&requests[1]).contains("<skill name=\"deploy\">\nDEPLOY-BODY"),
        "{}",
        last_turn(&requests[1])
    );
    assert_eq!(
        requests[1].messages.len(),
        1,
        "the first prompt was rewound"
    );
}
