//! Logs go to a file under `CHATCLI_HOME/logs`, never to the terminal the TUI owns.
//!
//! The directory is created 0700 and the file is opened by tracing-appender's non-blocking
//! writer; the returned guard must live until exit or the last lines are lost. `RUST_LOG`
//! (or `LOG_LEVEL`, the reference system's name) sets the filter; the default is `info`.

use std::path::Path;

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::EnvFilter;

use crate::config::Env;

/// Starts file logging; `None` when the directory cannot be made (chatcli runs on without logs).
pub fn init(dir: &Path, env: &Env) -> Option<WorkerGuard> {
    if create_private_dir(dir).is_err() {
        return None;
    }
    let appender = tracing_appender::rolling::daily(dir, "chatcli.log");
    let (writer, guard) = tracing_appender::non_blocking(appender);
    let level = env
        .get("RUST_LOG")
        .or_else(|| env.get("LOG_LEVEL"))
        .unwrap_or("info");
    let filter = EnvFilter::try_new(level).unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init()
        .ok()?;
    Some(guard)
}

/// Creates a directory (and parents) readable only by the user.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}
