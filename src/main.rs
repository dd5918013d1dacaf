//! The `chatcli` binary: parses the command line, resolves the config, starts a front end.

// Data from the network, the disk or the user is never unwrapped: outside tests, a panic
// there is a bug this lint catches at build time.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]
// A string index that lands inside a character panics: text from outside must not (#34).
#![deny(clippy::string_slice)]

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;

use chatcli::agent::{AgentOptions, ApprovalPolicy};
use chatcli::bench::{BenchOptions, ProviderModel};
use chatcli::cli::{BenchArgs, Cli, Command, ExecArgs, MemoryCommand, ModelsArgs};
use chatcli::config::{Config, Overrides, ProviderKind};
use chatcli::cost::Catalog;
use chatcli::env::Env;
use chatcli::provider::Provider;
use chatcli::session::LocalServer;
use chatcli::session_log::Resumed;
use chatcli::{exec, logging, session, tui};

/// Pause between the demo provider's streamed pieces in the TUI, so streaming is visible.
const DEMO_CHUNK_DELAY: Duration = Duration::from_millis(25);

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("chatcli: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("chatcli: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let overrides = cli.overrides();
    let mut config = Config::resolve(&overrides, Env::from_process()?)?;
    let starts_provider = matches!(
        cli.command,
        None | Some(Command::Exec(_)) | Some(Command::Models(_))
    );
    if starts_provider {
        session::settle_provider(&mut config).await?;
    }
    let local = if starts_provider {
        session::settle_local_server(&mut config).await
    } else {
        None
    };
    let _log_guard = logging::init(&config.log_dir(), &config.env);
    // Read where no `Config` reaches: `config.toml`'s values for them come through here.
    chatcli::process::set_env_allow(
        config
            .env
            .get(chatcli::process::ENV_ALLOW_VAR)
            .unwrap_or(""),
    );
    chatcli::ui::theme::set_theme(config.env.get("CHATCLI_THEME"));
    let start = open_session(config, local, cli.resume())?;

    match cli.command {
        Some(Command::Bench(args)) => bench(args, &start.config).await,
        Some(Command::Auth { provider }) => auth(&start.config, &provider).await,
        Some(Command::Mcp(chatcli::cli::McpCommand::List)) => mcp_list(&start.config).await,
        Some(Command::Memory(command)) => memory(&start.config, command),
        Some(Command::Models(args)) => models(&start, args).await,
        Some(Command::Skill(chatcli::cli::SkillCommand::List)) => skill_list(&start.config),
        Some(Command::Exec(args)) => exec(start, args).await,
        None => run_tui(start, overrides).await,
    }
}

/// What every subcommand starts from: the resolved config and the session it belongs to.
struct SessionStart {
    config: Config,
    /// What a local server said about itself, when the provider is one.
    local: Option<LocalServer>,
    catalog: Catalog,
    session_id: String,
    /// The session `--resume` named, read back.
    resumed: Option<Resumed>,
}

/// Loads the price catalog, prunes old sessions and reads back the one `--resume` names.
fn open_session(
    config: Config,
    local: Option<LocalServer>,
    resume: Option<&str>,
) -> anyhow::Result<SessionStart> {
    let catalog = session::load_catalog(&config)?;
    let pruned = session::prune_old_sessions(&config);
    if pruned > 0 {
        tracing::info!(
            pruned,
            days = config.session_retention_days,
            "pruned old sessions"
        );
    }
    let resumed = match resume {
        Some(id) => Some(session::find_session(&config, id)?),
        None => None,
    };
    if let Some(r) = &resumed {
        report_resume_repairs(r);
    }
    let session_id = resumed
        .as_ref()
        .map(|r| r.id.clone())
        .unwrap_or_else(session::new_session_id);
    tracing::info!(%session_id, provider = ?config.provider, mode = %config.mode, "session start");
    Ok(SessionStart {
        config,
        local,
        catalog,
        session_id,
        resumed,
    })
}

/// Tells the user what reading a resumed session had to skip or repair.
fn report_resume_repairs(resumed: &Resumed) {
    if resumed.skipped > 0 {
        eprintln!(
            "chatcli: skipped {} unreadable line(s) of {} (a crash mid-write); the rest is resumed",
            resumed.skipped,
            resumed.path.display()
        );
    }
    for repair in &resumed.repairs {
        eprintln!("chatcli: resume repaired the history: {repair}");
        tracing::warn!(%repair, "resume repaired the history");
    }
}

/// The scenario `--replay ID|FILE` names: a log file when it holds a `/` or ends in `.jsonl`,
/// else the saved session whose id starts with it (`latest` for the newest), as `--resume`
/// finds it.
fn replay_scenario(id: &str, config: &Config) -> anyhow::Result<chatcli::bench::ScriptedScenario> {
    let path = if id.contains('/') || id.ends_with(".jsonl") {
        std::path::PathBuf::from(id)
    } else {
        session::find_session_path(config, id)?
    };
    Ok(chatcli::bench::replay::from_log(&path)?)
}

/// `chatcli bench`: runs the scenarios, writes both reports into `--out` and prints one.
async fn bench(args: BenchArgs, config: &Config) -> anyhow::Result<ExitCode> {
    let (provider_models, model) = match args.provider_model.as_deref() {
        None => (vec![ProviderModel::Anthropic, ProviderModel::OpenAi], None),
        Some(v) => {
            let (family, model) = ProviderModel::parse_with_model(v).ok_or_else(|| {
                anyhow::anyhow!(
                    "--provider-model must be anthropic or openai, optionally with a model to price it as (openai:gpt-5.1) (got \"{v}\")"
                )
            })?;
            (vec![family], model)
        }
    };
    let scenarios = match args.scenario {
        Some(name) => vec![name],
        None => chatcli::bench::scenarios::NAMES
            .iter()
            .map(|s| s.to_string())
            .collect(),
    };
    let script = match &args.script {
        Some(path) => {
            // A scenario file is small; 16 MiB is far above any a person writes.
            let text = chatcli::files::read_bounded(path, 16 << 20)
                .and_then(|b| b.into_text())
                .map_err(|e| anyhow::anyhow!("--script {}: {e}", path.display()))?;
            Some(chatcli::bench::ScriptedScenario::parse(&text)?)
        }
        None => match &args.replay {
            Some(id) => Some(replay_scenario(id, config)?),
            None => None,
        },
    };
    let options = BenchOptions {
        scenarios,
        provider_models,
        model,
        quick: args.quick,
        script,
    };
    let rows = chatcli::bench::run(&options).await?;
    let markdown = chatcli::bench::markdown(&rows);
    let json = chatcli::bench::json(&rows);
    // Into the folder the user named (made when missing), never through a link planted at a
    // report's name; 0666 less the umask, as before.
    chatcli::files::create_dirs(&args.out)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", args.out.display()))?;
    for (name, text) in [("bench-report.md", &markdown), ("bench-report.json", &json)] {
        chatcli::files::write_beneath(&args.out, Path::new(name), text.as_bytes(), 0o666)?;
    }
    if args.json {
        println!("{json}");
    } else {
        print!("{markdown}");
    }
    Ok(ExitCode::SUCCESS)
}

/// `chatcli auth copilot`: the GitHub device login, then the models the account may use.
async fn auth(config: &Config, provider: &str) -> anyhow::Result<ExitCode> {
    use chatcli::provider::copilot;
    if ProviderKind::parse(provider) != Some(ProviderKind::Copilot) {
        anyhow::bail!(
            "auth is only needed for copilot (got \"{provider}\"); other providers read their key from the environment"
        );
    }
    let web = config
        .env
        .get("COPILOT_AUTH_URL")
        .unwrap_or(copilot::GITHUB_WEB)
        .to_string();
    let mut stdout = std::io::stdout();
    copilot::device_login(&web, &config.home, &mut stdout).await?;
    if let Some(oauth) = copilot::stored_token(&config.home) {
        let api = config
            .base_url
            .clone()
            .unwrap_or_else(|| copilot::GITHUB_API.to_string());
        match copilot::models(&api, &oauth).await {
            Ok(models) if !models.is_empty() => println!("Models: {}", models.join(", ")),
            Ok(_) => {}
            Err(e) => eprintln!("chatcli: signed in, but the model list failed: {e}"),
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `chatcli mcp list`: starts the configured servers and prints what each offers.
async fn mcp_list(config: &Config) -> anyhow::Result<ExitCode> {
    let mcp = session::start_mcp(config, false)?;
    mcp.hub.wait_started().await;
    for notice in mcp.hub.take_reports() {
        eprintln!("chatcli: {notice}");
    }
    println!("{}", chatcli::mcp::listing(&mcp.hub.report()));
    mcp.hub.shutdown();
    Ok(ExitCode::SUCCESS)
}

/// `chatcli memory …`: the memory store's own commands.
fn memory(config: &Config, command: MemoryCommand) -> anyhow::Result<ExitCode> {
    let mut stdout = std::io::stdout();
    chatcli::memory::cli::run(
        &config.home.join("memory"),
        command.action(&config.workspace),
        chatcli::secrets::Secrets::from_env(&config.env),
        &mut stdout,
    )?;
    Ok(ExitCode::SUCCESS)
}

/// `chatcli models`: the provider's models, as a table or JSON.
async fn models(start: &SessionStart, args: ModelsArgs) -> anyhow::Result<ExitCode> {
    let config = &start.config;
    let provider = session::build_provider(config, Duration::ZERO)?;
    let is_local = start.local.as_ref().is_some_and(|l| l.server.is_some())
        || config.provider == ProviderKind::Ollama;
    let list = session::models::model_list(
        &config.home,
        provider.as_ref(),
        &start.catalog,
        args.refresh,
        is_local,
    )
    .await;
    eprintln!("chatcli: {}", list.note);
    let shown = session::models::shown(&list, provider.name(), args.all);
    if args.json {
        println!("{}", session::models::json(&shown));
    } else {
        print!("{}", session::models::table(&shown, provider.model()));
    }
    Ok(ExitCode::SUCCESS)
}

/// `chatcli skill list`: the skills this directory and the home offer.
fn skill_list(config: &Config) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir()?;
    let skills = chatcli::skills::SessionSkills::discover(
        Some(&config.home),
        &cwd.canonicalize().unwrap_or(cwd),
        config.skills,
    );
    println!("{}", skills.catalog().listing(skills.pinned()));
    Ok(ExitCode::SUCCESS)
}

/// `chatcli exec PROMPT`: one run without a terminal; the exit code says how it ended.
async fn exec(start: SessionStart, args: ExecArgs) -> anyhow::Result<ExitCode> {
    let SessionStart {
        config,
        local,
        catalog,
        session_id,
        resumed,
    } = start;
    let provider = session::build_provider(&config, Duration::ZERO)?;
    let approval = if args.yes {
        ApprovalPolicy::AutoApprove
    } else {
        ApprovalPolicy::Deny
    };
    let mut options =
        session::agent_options(&config, provider.as_ref(), &catalog, session_id, approval);
    options.resume = resumed;
    options.mcp = Some(session::start_mcp(&config, args.yes)?);
    if !args.context.is_empty() {
        attach_context(&mut options, &config, &args.context)?;
    }
    session::apply_local_server(
        &mut options,
        &config,
        provider.as_ref(),
        &catalog,
        local.as_ref(),
    );
    let prompt = args.prompt.join(" ");
    let mut stdout = std::io::stdout();
    let outcome = exec::run(
        provider,
        options,
        prompt,
        config.mode,
        args.json,
        &mut stdout,
    )
    .await;
    // Every group a run_command of this session started dies with the session.
    chatcli::process::kill_all_groups();
    let outcome = outcome?;
    for warning in &outcome.warnings {
        eprintln!("chatcli: {warning}");
    }
    // Both modes: a script reading --json lines on stdout still sees why it failed.
    for error in &outcome.errors {
        eprintln!("chatcli: {}", error.replace('\n', " "));
    }
    Ok(ExitCode::from(outcome.exit_code()))
}

/// `exec --context PATH…`: attaches the files, saying which it skipped.
fn attach_context(
    options: &mut AgentOptions,
    config: &Config,
    paths: &[String],
) -> anyhow::Result<()> {
    let outcome = options
        .attachments
        .add(&config.workspace, paths)
        .map_err(|e| anyhow::anyhow!("--context: {e}"))?;
    for skipped in &outcome.skipped {
        eprintln!("chatcli: --context skipped {skipped}");
    }
    Ok(())
}

/// `chatcli` alone: the TUI, which needs a terminal on both ends; `/config` reports `overrides`.
async fn run_tui(start: SessionStart, overrides: Overrides) -> anyhow::Result<ExitCode> {
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        anyhow::bail!("the TUI needs a terminal; use `chatcli exec PROMPT` for scripts and pipes");
    }
    let SessionStart {
        config,
        local,
        catalog,
        session_id,
        resumed,
    } = start;
    let provider = session::build_provider(&config, DEMO_CHUNK_DELAY)?;
    let mut options = session::agent_options(
        &config,
        provider.as_ref(),
        &catalog,
        session_id,
        ApprovalPolicy::Ask,
    );
    options.resume = resumed;
    session::apply_local_server(
        &mut options,
        &config,
        provider.as_ref(),
        &catalog,
        local.as_ref(),
    );
    options.mcp = Some(session::start_mcp(&config, false)?);
    let notify =
        chatcli::ui::notify::Notify::parse(config.env.get("CHATCLI_NOTIFY").unwrap_or_default())
            .map_err(|e| anyhow::anyhow!(e))?;
    let mut report = config.report(&overrides);
    report.push(session::pricing_report_line(
        provider.model(),
        &options.pricing_rule,
    ));
    report.push(session::cache_policy_report_line(&config, provider.model()));
    let setup = tui::Setup {
        notify,
        history_path: Some(config.home.join("history.jsonl")),
        config_report: report,
        models: session::models::catalog_list(provider.name(), &catalog),
        lister: Some(model_lister(
            &config,
            &catalog,
            local.as_ref(),
            provider.as_ref(),
        )),
        switch: Some(provider_switch(config, catalog, local)),
    };
    let ended = tui::run(provider, options, setup).await;
    // Every group a run_command of this session started dies with the session.
    chatcli::process::kill_all_groups();
    ended?;
    Ok(ExitCode::SUCCESS)
}

/// How `/model` reads a provider's list: from the provider, or the local server it runs on.
fn model_lister(
    config: &Config,
    catalog: &Catalog,
    local: Option<&LocalServer>,
    provider: &dyn Provider,
) -> tui::Lister {
    let home = config.home.clone();
    let catalog = catalog.clone();
    // What the server said of itself holds for the endpoint it was asked at.
    let local_list = local
        .is_some_and(|l| l.server.is_some())
        .then(|| provider.model_list())
        .flatten();
    Arc::new(move |provider| {
        let home = home.clone();
        let catalog = catalog.clone();
        let is_local = provider.name() == "ollama"
            || (local_list.is_some() && provider.model_list() == local_list);
        Box::pin(async move {
            session::models::model_list(&home, provider.as_ref(), &catalog, false, is_local).await
        })
    })
}

/// How `/provider` and `/model ID` start a new provider from the session's config.
fn provider_switch(config: Config, catalog: Catalog, local: Option<LocalServer>) -> tui::Switch {
    Arc::new(move |kind: Option<String>, model: Option<String>| {
        let mut next = config.clone();
        if let Some(kind) = kind {
            next.provider =
                ProviderKind::parse(&kind).ok_or_else(|| session::SetupError::UnknownProvider {
                    accepted: ProviderKind::accepted(),
                    kind,
                })?;
            next.provider_explicit = true;
            next.model = None;
            next.base_url = None;
        }
        if model.is_some() {
            next.model = model;
        }
        let provider = session::build_provider(&next, DEMO_CHUNK_DELAY)?;
        let mut options = session::agent_options(
            &next,
            provider.as_ref(),
            &catalog,
            String::new(),
            ApprovalPolicy::Ask,
        );
        // The same server as at the start: what it said of itself still holds.
        if next.provider == config.provider && next.base_url == config.base_url {
            session::apply_local_server(
                &mut options,
                &next,
                provider.as_ref(),
                &catalog,
                local.as_ref(),
            );
        }
        Ok((provider, options))
    })
}
