//! Frame render cost with a 10,000-message history (target: under 2 ms per frame).
//!
//! `steady`: the transcript is unchanged between frames (every cell's wrap is cached).
//! `streaming`: a text delta lands in the last cell before each frame, as while an answer streams
//! (the last cell is re-parsed and re-wrapped every frame; the rest comes from the cache).
//! `streaming_code`: the delta is a line of Rust inside an open fence, so the last cell's code
//! block is highlighted again every frame (from where it stopped, see `ui::highlight`).
//! Every history message holds a list, a table and a highlighted Rust block.

use criterion::{Criterion, criterion_group, criterion_main};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use chatcli::protocol::{AgentEvent, Mode, UsageFigures};
use chatcli::ui::App;

fn history_app(messages: usize) -> App {
    let (tx, _rx) = chatcli::protocol::op_channel();
    let mut app = App::new(tx, Mode::Agent, "demo (offline)".into(), "demo".into());
    for i in 0..messages / 2 {
        app.handle_agent_event(AgentEvent::TurnStarted { turn: 1 });
        app.handle_agent_event(AgentEvent::TextDelta {
            text: format!(
                "Answer **{i}**: here is a list\n\n- first point with `code`\n- second point that is long enough to wrap across the pane width once or twice\n\n| crate | version | why |\n|---|---:|---|\n| ratatui | 0.30 | drawing, with a cell that is long enough to be cut in a narrow pane |\n| syntect | 5.3 | highlighting {i} |\n\n```rust\nuse std::collections::HashMap;\n\n/// Counts words.\nfn main() {{\n    let mut counts: HashMap<&str, usize> = HashMap::new();\n    for w in \"a b a\".split(' ') {{ *counts.entry(w).or_insert(0) += 1; }}\n    println!(\"{i} {{counts:?}}\");\n}}\n```\n"
            ),
        });
        app.handle_agent_event(AgentEvent::Usage {
            turn: 1,
            usage: UsageFigures {
                input_tokens: 1000 + i as u64,
                output_tokens: 50,
                ..UsageFigures::default()
            },
            cost_usd: Some(0.001),
        });
        app.handle_agent_event(AgentEvent::Notice {
            message: format!("note {i}"),
        });
    }
    app
}

fn render(c: &mut Criterion) {
    let mut app = history_app(10_000);
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).expect("test terminal");
    // The first frame with code loads syntect's syntaxes and theme: measured once, here.
    let rss_before = rss_kb();
    let started = std::time::Instant::now();
    terminal.draw(|f| app.render(f)).expect("draw");
    eprintln!(
        "first frame (loads the highlighter): {:.1} ms; resident memory {} -> {} MB",
        started.elapsed().as_secs_f64() * 1000.0,
        rss_before / 1024,
        rss_kb() / 1024
    );
    c.bench_function("frame_10k_history_steady", |b| {
        b.iter(|| {
            terminal.draw(|f| app.render(f)).expect("draw");
        })
    });
    let mut deltas = 0usize;
    c.bench_function("frame_10k_history_streaming", |b| {
        b.iter(|| {
            // A new answer every 200 deltas keeps the streaming message at a realistic ~2 KB.
            deltas += 1;
            if deltas.is_multiple_of(200) {
                app.handle_agent_event(AgentEvent::TurnStarted { turn: 1 });
            }
            app.handle_agent_event(AgentEvent::TextDelta {
                text: " more words".into(),
            });
            terminal.draw(|f| app.render(f)).expect("draw");
        })
    });
    let mut lines = 0usize;
    c.bench_function("frame_10k_history_streaming_code", |b| {
        b.iter(|| {
            // A new answer (an open rust fence) every 100 lines of code.
            if lines.is_multiple_of(100) {
                app.handle_agent_event(AgentEvent::TurnStarted { turn: 1 });
                app.handle_agent_event(AgentEvent::TextDelta {
                    text: "Here it is:\n\n```rust\n".into(),
                });
            }
            lines += 1;
            app.handle_agent_event(AgentEvent::TextDelta {
                text: format!("    let value_{lines} = compute({lines}, \"text\"); // step\n"),
            });
            terminal.draw(|f| app.render(f)).expect("draw");
        })
    });
}

/// A keystroke in the `@` picker over a 100,000-file workspace: the fuzzy match of the index
/// (what each keystroke costs once the background walk is done), and the walk itself.
fn picker(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    for d in 0..1_000 {
        let folder = dir.path().join(format!("pkg{d:04}/src"));
        std::fs::create_dir_all(&folder).expect("mkdir");
        for f in 0..100 {
            std::fs::write(folder.join(format!("module_{f:03}.rs")), "").expect("write");
        }
    }
    let started = std::time::Instant::now();
    let mut index = chatcli::ui::popup::FileIndex::new(dir.path());
    index.load();
    index.wait(std::time::Duration::from_secs(120));
    eprintln!(
        "walk of 100,000 files (warm cache, background thread): {:.0} ms",
        started.elapsed().as_secs_f64() * 1000.0
    );
    c.bench_function("picker_keystroke_100k_files", |b| {
        b.iter(|| index.matching("pkg0999/mod050", 8))
    });
}

/// Resident memory in KiB (Linux `/proc/self/statm`), 0 elsewhere.
fn rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4)
}

criterion_group!(benches, render, picker);
criterion_main!(benches);
