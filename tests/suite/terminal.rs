//! The real binary in a real terminal (tmux): what a person types reaches the screen as they
//! meant it. Needs tmux; skipped with one line without it (a failure under `CI=true`).

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;
use wiremock::MockServer;

/// A tmux session running one command, killed when dropped.
struct Tmux(String);

impl Tmux {
    fn start(name: &str, dir: &Path, command: &str) -> Option<Tmux> {
        let ok = std::process::Command::new("tmux")
            .args([
                "new-session",
                "-d",
                "-s",
                name,
                "-x",
                "120",
                "-y",
                "40",
                "-c",
            ])
            .arg(dir)
            .arg(command)
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Tmux(name.to_string()))
    }

    fn keys(&self, args: &[&str]) {
        let _ = std::process::Command::new("tmux")
            .args(["send-keys", "-t", &self.0])
            .args(args)
            .status();
    }

    fn screen(&self) -> String {
        std::process::Command::new("tmux")
            .args(["capture-pane", "-p", "-t", &self.0])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
            .unwrap_or_default()
    }

    /// Waits until the screen shows `needle` (or 20 s pass); returns the last screen.
    fn wait_for(&self, needle: &str) -> String {
        let started = Instant::now();
        loop {
            let screen = self.screen();
            if screen.contains(needle) || started.elapsed() > Duration::from_secs(20) {
                return screen;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = std::process::Command::new("tmux")
            .args(["kill-session", "-t", &self.0])
            .status();
    }
}

fn have_tmux() -> bool {
    crate::common::needs("tmux", crate::common::runs("tmux", &["-V"]))
}

/// A sentence typed at speed while the approval dialog is open answers nothing and lands in
/// the prompt whole; a `y` pressed on its own then runs the command.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typing_during_an_approval_answers_nothing_and_is_kept() {
    if !have_tmux() {
        return;
    }
    let ws = tempfile::tempdir().expect("tempdir");
    let home = tempfile::tempdir().expect("tempdir");
    let marker = ws.path().join("ran.txt");
    let args = json!({ "cmd": format!("touch {}", marker.display()) }).to_string();
    let server = MockServer::start().await;
    crate::common::mount_calls_then_answer(&server, &[("run_command", args)], "all done").await;
    let command = format!(
        "env -i PATH=\"$PATH\" HOME={home} TERM=xterm-256color CHATCLI_HOME={home} \
         OPENAI_API_KEY=sk-test OPENAI_BASE_URL={base}/v1 {bin} --provider openai --mode agent",
        home = home.path().display(),
        base = server.uri(),
        bin = env!("CARGO_BIN_EXE_chatcli"),
    );
    let name = format!("chatcli-test-{}", std::process::id());
    let Some(tmux) = Tmux::start(&name, ws.path(), &command) else {
        panic!("tmux could not start a session");
    };
    let ready = tmux.wait_for("AGENT");
    assert!(ready.contains("AGENT"), "chatcli started:\n{ready}");
    tmux.keys(&["-l", "touch the file"]);
    tmux.keys(&["Enter"]);
    // The mock server answers on its own threads: blocking here does not hold it up.
    let asked = tmux.wait_for("Approve tool call?");
    assert!(asked.contains("Approve tool call?"), "{asked}");
    // Let the dialog settle, then type a sentence full of a, y and n in one burst.
    std::thread::sleep(Duration::from_millis(600));
    tmux.keys(&["-l", "please check the output carefully, yes any day"]);
    std::thread::sleep(Duration::from_millis(1200));
    let screen = tmux.screen();
    assert!(
        screen.contains("Approve tool call?"),
        "the dialog is still open:\n{screen}"
    );
    assert!(!marker.exists(), "nothing typed answered the dialog");
    // A deliberate `y`, on its own.
    tmux.keys(&["y"]);
    let done = tmux.wait_for("all done");
    assert!(marker.exists(), "y on its own ran the command:\n{done}");
    assert!(
        done.contains("please check the output carefully, yes any day"),
        "the typed sentence waits in the prompt:\n{done}"
    );
}

/// `/model` in the real binary offers what the provider's list endpoint serves, read in the
/// background after the start, and says where the list came from.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_picker_offers_what_the_provider_lists() {
    use wiremock::matchers::{header, method, path};
    use wiremock::{Mock, ResponseTemplate};
    if !have_tmux() {
        return;
    }
    let ws = tempfile::tempdir().expect("tempdir");
    let home = tempfile::tempdir().expect("tempdir");
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .and(header("authorization", "Bearer sk-test"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"data": [
            {"id": "acme/coder-9", "context_length": 65_536,
             "pricing": {"prompt": "0.000002", "completion": "0.000004"}}
        ]})))
        .mount(&server)
        .await;
    let command = format!(
        "env -i PATH=\"$PATH\" HOME={home} TERM=xterm-256color CHATCLI_HOME={home} \
         OPENAI_API_KEY=sk-test OPENAI_BASE_URL={base}/v1 {bin} --provider openai --model gpt-4.1",
        home = home.path().display(),
        base = server.uri(),
        bin = env!("CARGO_BIN_EXE_chatcli"),
    );
    let name = format!("chatcli-models-{}", std::process::id());
    let Some(tmux) = Tmux::start(&name, ws.path(), &command) else {
        panic!("tmux could not start a session");
    };
    let ready = tmux.wait_for("AGENT");
    assert!(ready.contains("AGENT"), "chatcli started:\n{ready}");
    tmux.keys(&["-l", "/model"]);
    tmux.keys(&["Enter"]);
    let picker = tmux.wait_for("acme/coder-9");
    assert!(
        picker.contains("acme/coder-9")
            && picker.contains("65k")
            && picker.contains("$2.00 / $4.00")
            && picker.contains("1 model listed by openai now"),
        "{picker}"
    );
}

/// Ctrl+Z hands the terminal back to the shell (job control says the job stopped) and `fg`
/// brings chatcli back, redrawn whole and still answering.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_z_suspends_to_the_shell_and_fg_resumes() {
    if !have_tmux() {
        return;
    }
    let ws = tempfile::tempdir().expect("tempdir");
    let home = tempfile::tempdir().expect("tempdir");
    let name = format!("chatcli-suspend-{}", std::process::id());
    let Some(tmux) = Tmux::start(&name, ws.path(), "bash --noprofile --norc") else {
        panic!("tmux could not start a session");
    };
    let command = format!(
        "env -i PATH=\"$PATH\" HOME={home} TERM=xterm-256color CHATCLI_HOME={home} {bin} --provider demo",
        home = home.path().display(),
        bin = env!("CARGO_BIN_EXE_chatcli"),
    );
    tmux.keys(&["-l", &command]);
    tmux.keys(&["Enter"]);
    let ready = tmux.wait_for("AGENT");
    assert!(ready.contains("AGENT"), "chatcli started:\n{ready}");
    tmux.keys(&["C-z"]);
    let stopped = tmux.wait_for("Stopped");
    assert!(
        stopped.contains("Stopped") && !stopped.contains("AGENT MODE"),
        "the shell has the terminal:\n{stopped}"
    );
    tmux.keys(&["-l", "fg"]);
    tmux.keys(&["Enter"]);
    let back = tmux.wait_for("AGENT MODE");
    assert!(back.contains("AGENT MODE"), "fg redraws chatcli:\n{back}");
    tmux.keys(&["-l", "hello"]);
    tmux.keys(&["Enter"]);
    let answered = tmux.wait_for("offline demo");
    assert!(
        answered.contains("offline demo"),
        "it still answers:\n{answered}"
    );
}
