//! The token-efficiency benchmark's honesty rules (not its numbers): every row is chatcli with
//! switches a user can set, `off` is exactly every switch, no two rows are one configuration,
//! and no row costs less than its floor.

use chatcli::bench::{self, BenchOptions, FEATURES, ProviderModel, Row};

fn find<'a>(rows: &'a [Row], name: &str, mode: &str, pm: &str) -> &'a Row {
    rows.iter()
        .find(|r| r.name == name && r.mode == mode && r.provider_model == pm)
        .unwrap_or_else(|| panic!("no row {name}/{mode}/{pm}"))
}

#[test]
fn off_differs_from_optimised_only_by_the_documented_switches() {
    let home = tempfile::tempdir().expect("home");
    let workspace = tempfile::tempdir().expect("workspace");
    let variants = bench::variants();
    let config = |mode: &str| {
        let variant = variants
            .iter()
            .find(|v| v.mode == mode)
            .unwrap_or_else(|| panic!("no variant {mode}"));
        bench::variant_config(variant, home.path(), workspace.path(), "http://127.0.0.1:9")
            .expect("the variant resolves")
    };
    let optimised = config("optimised");
    let mut off = config("off");
    // Each switch really changes something...
    assert!(optimised.prompt_cache && !off.prompt_cache);
    assert!(optimised.compaction.enabled && !off.compaction.enabled);
    assert!(optimised.early_exit && !off.early_exit);
    assert_ne!(optimised.smart_route, off.smart_route);
    assert_eq!(off.webfetch_autosave_bytes, usize::MAX, "autosave off");
    assert_ne!(optimised.memory_mode, off.memory_mode);
    assert!(optimised.agents.parallel && !off.agents.parallel);
    assert_ne!(optimised.keepwarm, off.keepwarm);
    // ...and nothing else differs.
    off.prompt_cache = optimised.prompt_cache;
    off.compaction = optimised.compaction;
    off.early_exit = optimised.early_exit;
    off.smart_route = optimised.smart_route;
    off.webfetch_autosave_bytes = optimised.webfetch_autosave_bytes;
    off.memory_mode = optimised.memory_mode;
    off.agents = optimised.agents.clone();
    off.keepwarm = optimised.keepwarm;
    off.env = optimised.env.clone();
    assert_eq!(format!("{off:?}"), format!("{optimised:?}"));
    // Every mode is a name the report promises, and `without:<f>` is one switch.
    let modes: Vec<&str> = variants.iter().map(|v| v.mode.as_str()).collect();
    assert_eq!(&modes[..2], ["optimised", "off"]);
    for f in FEATURES {
        let without = format!("without:{}", f.name);
        let v = variants
            .iter()
            .find(|v| v.mode == without)
            .unwrap_or_else(|| panic!("no {without}"));
        assert_eq!(v.env, vec![(f.var, f.off)]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quick_bench_rows_are_honest() {
    let options = BenchOptions {
        scenarios: ["lookup", "coder", "research"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        provider_models: vec![ProviderModel::Anthropic, ProviderModel::OpenAi],
        model: None,
        quick: true,
        script: None,
    };
    let rows = bench::run(&options).await.expect("the benchmark runs");
    assert_eq!(
        rows.len(),
        3 * (bench::variants_for(ProviderModel::Anthropic).len()
            + bench::variants_for(ProviderModel::OpenAi).len())
    );
    assert_eq!(bench::honesty_violations(&rows), Vec::<String>::new());
    for r in &rows {
        assert!(
            r.cost_usd >= r.floor_cost_usd,
            "{}/{}/{}: below its floor",
            r.provider_model,
            r.name,
            r.mode
        );
    }
    for pm in ["anthropic", "openai"] {
        // The off rows send no cache hint: on Anthropic nothing is ever read from the cache.
        if pm == "anthropic" {
            assert_eq!(find(&rows, "coder", "off", pm).cache_read_tokens, 0);
        }
        // The research answer needs passages deep in the pages: every row pays to re-read them.
        assert!(find(&rows, "research", "optimised", pm).requests > 4);
        // The consumed schedule beats the batched one it replaced.
        let optimised = find(&rows, "coder", "optimised", pm).cost_usd;
        let batched = find(&rows, "coder", bench::SCHEDULE_BATCHED, pm).cost_usd;
        assert!(optimised < batched * 0.9, "{pm}: {optimised} vs {batched}");
    }
    let json: serde_json::Value = serde_json::from_str(&bench::json(&rows)).expect("json");
    let first = &json["scenarios"][0];
    for field in [
        "name",
        "mode",
        "provider_model",
        "requests",
        "input_tokens",
        "cache_read_tokens",
        "cache_creation_tokens",
        "output_tokens",
        "cost_usd",
        "floor_cost_usd",
    ] {
        assert!(first.get(field).is_some(), "{field} missing from {first}");
    }
}

/// The peer sessions and the 25-request session on both cache models: the schedule's wins are
/// pinned, so a regression in where results live or where the markers go fails here.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_sessions_beat_every_other_row_and_stay_far_below_the_peers() {
    let options = BenchOptions {
        scenarios: ["session6", "session11", "session25"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        provider_models: vec![ProviderModel::Anthropic, ProviderModel::OpenAi],
        model: None,
        quick: false,
        script: None,
    };
    let rows = bench::run(&options).await.expect("the benchmark runs");
    assert_eq!(bench::honesty_violations(&rows), Vec::<String>::new());
    // The targets on these scenarios: optimised ≤ every other row (+1% noise) but
    // without:parallel, parallel mode's unused cost within its pinned share of optimised (2.6–4.7%
    // measured), session25 within 1.35× its floor. The peer goals are reported, not asserted:
    // three of them are not met.
    let failed: Vec<String> = bench::targets(&rows)
        .into_iter()
        .filter(|(target, met)| !met && !target.contains(" below "))
        .map(|(target, _)| target)
        .collect();
    assert_eq!(failed, Vec::<String>::new());
    for pm in ["anthropic", "openai"] {
        for name in ["session6", "session11", "session25"] {
            let optimised = find(&rows, name, "optimised", pm);
            let batched = find(&rows, name, bench::SCHEDULE_BATCHED, pm);
            // The consumed schedule against the previous default: at least 5% cheaper.
            assert!(
                optimised.cost_usd < batched.cost_usd * 0.95,
                "{pm}/{name}: optimised ${:.4} vs batched ${:.4}",
                optimised.cost_usd,
                batched.cost_usd
            );
            assert!(optimised.floor_ratio() <= 1.2, "{pm}/{name}: {optimised:?}");
            // The fixed prefix (tools and system prompt, coder mode, parallel mode on) stays
            // small and cheap: 1,198 tokens today (1,345 with the orchestrator block, 1,580
            // before its terse catalog), 13–22% of what the session costs.
            assert!(
                optimised.fixed_prefix_tokens > 500 && optimised.fixed_prefix_tokens <= 1_480,
                "{pm}/{name}: {optimised:?}"
            );
            assert!(
                optimised.fixed_prefix_cost_usd < optimised.cost_usd * 0.25,
                "{pm}/{name}: {optimised:?}"
            );
        }
    }
    // Against the peers (same oracle, same prices): the measured ratios (3.35×, 3.07×, 2.21×,
    // 2.68×), with a little room.
    let ratio = |scenario: &str, pm: &str| {
        bench::against_peers(&rows)
            .into_iter()
            .find(|(p, _, _)| p.scenario == scenario && p.provider_model == pm)
            .map(|(_, _, r)| r)
            .unwrap_or_else(|| panic!("no peer row {scenario}/{pm}"))
    };
    assert!(ratio("session6", "anthropic") >= 3.25);
    assert!(ratio("session11", "anthropic") >= 2.95);
    assert!(ratio("session6", "openai") >= 2.15);
    assert!(ratio("session11", "openai") >= 2.6);
    // The answer needs a line from the middle of each file it read: consumed results are
    // re-read, and that request is paid for (one more than the script's 11).
    assert_eq!(
        find(&rows, "session11", "optimised", "anthropic").requests,
        12
    );
    assert_eq!(
        find(&rows, "session11", "without:microcompact", "anthropic").requests,
        11
    );
}

/// Twelve parallel searches in the middle of `fanout` move the rolling marker 24 content blocks
/// at once, past Anthropic's 20-block lookback: the bridge marker keeps the history read from
/// the cache. Without it the batched schedule (whole results in the history) rewrites the
/// history after the batch (1.63× its floor instead of 1.17×) and `optimised` pays 1.7% more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_parallel_batch_keeps_the_history_cached() {
    let options = BenchOptions {
        scenarios: vec!["fanout".to_string()],
        provider_models: vec![ProviderModel::Anthropic],
        model: None,
        quick: false,
        script: None,
    };
    let rows = bench::run(&options).await.expect("the benchmark runs");
    assert_eq!(bench::honesty_violations(&rows), Vec::<String>::new());
    let failed: Vec<String> = bench::targets(&rows)
        .into_iter()
        .filter(|(_, met)| !met)
        .map(|(target, _)| target)
        .collect();
    assert_eq!(failed, Vec::<String>::new());
    let batched = find(&rows, "fanout", bench::SCHEDULE_BATCHED, "anthropic");
    assert!(batched.floor_ratio() <= 1.3, "{batched:?}");
    let optimised = find(&rows, "fanout", "optimised", "anthropic");
    assert!(optimised.floor_ratio() <= 1.2, "{optimised:?}");
}

/// Two runs of `chatcli bench --json` print the same bytes: fixed workspace paths, scratch
/// names on the virtual clock, and the `orchestrated` specialists answered in one order. The
/// first run writes its reports into a folder that does not exist yet.
#[test]
fn two_bench_runs_print_the_same_json_and_out_makes_its_folder() {
    let dir = tempfile::tempdir().expect("tempdir");
    let run = |out: &std::path::Path, scenario: &str| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_chatcli"))
            .env("CHATCLI_HOME", dir.path().join("home"))
            .args([
                "bench",
                "--quick",
                "--json",
                "--scenario",
                scenario,
                "--out",
            ])
            .arg(out)
            .output()
            .expect("run chatcli bench");
        assert!(
            output.status.success(),
            "stderr: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).expect("utf-8")
    };
    let missing = dir.path().join("reports").join("today");
    for scenario in ["orchestrated", "lookup"] {
        let first = run(&missing, scenario);
        let second = run(&dir.path().join("again"), scenario);
        assert!(first.contains("\"orchestrated\"") || first.contains("\"lookup\""));
        pretty_assertions::assert_eq!(first, second, "{scenario}: two runs differ");
        // Every row carries the user's wait under the latency model; on `orchestrated` the
        // dispatched run makes more requests than one loop (the catalog call, the specialists).
        let json: serde_json::Value = serde_json::from_str(&first).expect("json");
        let rows = json["scenarios"].as_array().expect("rows");
        assert!(rows.iter().all(|r| r["wall_seconds"].as_f64() > Some(0.0)));
        if scenario == "orchestrated" {
            let requests = |mode: &str| {
                rows.iter()
                    .find(|r| r["mode"] == mode && r["provider_model"] == "anthropic")
                    .and_then(|r| r["requests"].as_u64())
            };
            assert!(requests("optimised") > requests("without:parallel"));
        }
    }
    let report = std::fs::read_to_string(missing.join("bench-report.md")).expect("report");
    assert!(report.contains("| ×floor | wait |"), "the wait column");
    assert!(missing.join("bench-report.json").is_file());
    assert!(missing.join("bench-report.md").is_file());
}

/// `--script`: the documented coder day (six prompts, pauses of 0 to 40 minutes) runs through
/// every row; the pause-aware default beats each provider's default lifetime and stays near
/// the best fixed lifetime, and the fixed lifetimes appear only on their own family.
#[test]
fn a_scripted_day_with_pauses_is_cheaper_with_the_pause_aware_lifetime() {
    let dir = tempfile::tempdir().expect("tempdir");
    let day = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/examples/coder-day.json");
    let json = scripted_rows(&day, dir.path());
    let rows: Vec<Row> = json
        .iter()
        .map(|r| Row {
            name: r["name"].as_str().unwrap_or_default().into(),
            mode: r["mode"].as_str().unwrap_or_default().into(),
            provider_model: r["provider_model"].as_str().unwrap_or_default().into(),
            requests: r["requests"].as_u64().unwrap_or_default() as usize,
            input_tokens: 0,
            uncached_input_tokens: 0,
            cache_read_tokens: 0,
            cache_creation_tokens: 0,
            output_tokens: 0,
            cost_usd: r["cost_usd"].as_f64().unwrap_or_default(),
            floor_cost_usd: r["floor_cost_usd"].as_f64().unwrap_or_default(),
            fixed_prefix_tokens: 0,
            fixed_prefix_cost_usd: 0.0,
            pause_minutes: r["pause_minutes"].as_f64().unwrap_or_default(),
            wall_seconds: r["wall_seconds"].as_f64().unwrap_or_default(),
        })
        .collect();
    assert!(find(&rows, "coder-day", "optimised", "anthropic").pause_minutes > 80.0);
    assert!(
        rows.iter()
            .all(|r| r.cost_usd >= r.floor_cost_usd * (1.0 - 1e-9))
    );
    assert!(
        !rows
            .iter()
            .any(|r| r.provider_model == "openai" && r.mode == "ttl:5m")
    );
    assert!(
        !rows
            .iter()
            .any(|r| r.provider_model == "anthropic" && r.mode == "ttl:24h")
    );
    for (pm, default, long) in [
        ("anthropic", "ttl:5m", "ttl:1h"),
        ("openai", "ttl:in_memory", "ttl:24h"),
    ] {
        let o = find(&rows, "coder-day", "optimised", pm).cost_usd;
        let short = find(&rows, "coder-day", default, pm).cost_usd;
        let long = find(&rows, "coder-day", long, pm).cost_usd;
        assert!(
            o < short * 0.9,
            "{pm}: optimised ${o} vs {default} ${short}"
        );
        assert!(
            o <= long.min(short) * 1.10,
            "{pm}: optimised ${o} vs best fixed"
        );
    }
    // The pauses cost the 5-minute row rewrites: it writes more than the pause-aware one.
    let written = |mode: &str| {
        json.iter()
            .find(|r| r["mode"] == mode && r["provider_model"] == "anthropic")
            .and_then(|r| r["cache_creation_tokens"].as_u64())
            .expect("row")
    };
    assert!(written("ttl:5m") > written("optimised"));
}

/// The scenario's rows as JSON from `chatcli bench --script FILE --json`.
fn scripted_rows(script: &std::path::Path, out: &std::path::Path) -> Vec<serde_json::Value> {
    scripted_rows_with(script, out, &[])
}

/// `scripted_rows` with more arguments.
fn scripted_rows_with(
    script: &std::path::Path,
    out: &std::path::Path,
    more: &[&str],
) -> Vec<serde_json::Value> {
    let mut bench = std::process::Command::new(env!("CARGO_BIN_EXE_chatcli"));
    bench
        .env("CHATCLI_HOME", out.join("home"))
        .args(["bench", "--json", "--script"])
        .arg(script)
        .arg("--out")
        .arg(out)
        .args(more);
    crate::common::bench_rows(bench)
}

/// The cost of row `mode` of family `pm` in JSON rows.
fn cost_of(rows: &[serde_json::Value], mode: &str, pm: &str) -> f64 {
    rows.iter()
        .find(|r| r["mode"] == mode && r["provider_model"] == pm)
        .and_then(|r| r["cost_usd"].as_f64())
        .unwrap_or_else(|| panic!("no {pm} {mode} row"))
}

/// A day with a pause longer than the hour `auto` holds (the documented `coder-day-lunch`):
/// keep-warm's ping before the hour is up makes the default cheaper than without it and than
/// every fixed lifetime; a heartbeat on 5-minute entries alone is a row of its own.
#[test]
fn keep_warm_pays_on_a_day_with_a_lunch_break() {
    let dir = tempfile::tempdir().expect("tempdir");
    let day =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/examples/coder-day-lunch.json");
    let rows = scripted_rows_with(&day, dir.path(), &["--provider-model", "anthropic"]);
    let optimised = cost_of(&rows, "optimised", "anthropic");
    let without = cost_of(&rows, "without:keepwarm", "anthropic");
    assert!(
        optimised < without * 0.9,
        "${optimised} vs ${without} without"
    );
    for fixed in ["ttl:5m", "ttl:1h", "keepwarm"] {
        let cost = cost_of(&rows, fixed, "anthropic");
        assert!(
            optimised < cost,
            "optimised ${optimised} vs {fixed} ${cost}"
        );
    }
    let requests = |mode: &str| {
        rows.iter()
            .find(|r| r["mode"] == mode)
            .and_then(|r| r["requests"].as_u64())
            .unwrap_or_default()
    };
    assert!(
        requests("optimised") > requests("without:keepwarm"),
        "pings are requests"
    );
}

/// A day of meetings (the documented `coder-day-meetings`: 40 minutes away before every
/// prompt). The first pause comes while the entries live 5 minutes, and coming back after it
/// writes them for an hour (`auto`), so keep-warm weighs its pings against that 1-hour write:
/// it bridges the first meeting and lands within 10% of the 1-hour lifetime only hindsight
/// could have picked. Weighed against a 5-minute write it stopped halfway and paid both.
#[test]
fn keep_warm_bridges_a_first_long_pause_against_the_write_that_follows_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let day = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs/examples/coder-day-meetings.json");
    let rows = scripted_rows_with(&day, dir.path(), &["--provider-model", "anthropic"]);
    let optimised = cost_of(&rows, "optimised", "anthropic");
    let hour = cost_of(&rows, "ttl:1h", "anthropic");
    let without = cost_of(&rows, "without:keepwarm", "anthropic");
    assert!(optimised <= hour * 1.1, "${optimised} vs ttl:1h ${hour}");
    assert!(optimised < without, "${optimised} vs ${without} without");
}

/// `--provider-model openai:gpt-5.1` prices the OpenAI family as gpt-5.1 (cached input at
/// 0.1×): its rows say so, and on the scripted day the pause-aware default is 20% below the
/// in-memory lifetime, which GPT-4.1's 0.25× cached price cannot reach (its floor is 18% below).
#[test]
fn a_family_can_be_priced_as_another_model() {
    let dir = tempfile::tempdir().expect("tempdir");
    let day = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/examples/coder-day.json");
    let rows = scripted_rows_with(&day, dir.path(), &["--provider-model", "openai:gpt-5.1"]);
    assert!(rows.iter().all(|r| r["provider_model"] == "openai:gpt-5.1"));
    let optimised = cost_of(&rows, "optimised", "openai:gpt-5.1");
    let in_memory = cost_of(&rows, "ttl:in_memory", "openai:gpt-5.1");
    assert!(optimised <= in_memory * 0.8, "${optimised} vs ${in_memory}");
}

/// A plan → coder session (the documented `plan-coder` script: a prompt in plan mode, then
/// "go ahead" in coder mode) writes no more to the cache than the same prompts all in coder
/// mode, but for the plan rule's own few tokens in the first prompt's turn: the switch keeps
/// the cached prefix (system blocks and tools), which alone would rewrite over a thousand.
#[test]
fn switching_from_plan_to_coder_writes_nothing_to_the_cache_for_the_switch() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/examples/plan-coder.json");
    let text = std::fs::read_to_string(&plan).expect("script");
    assert!(
        text.contains(r#""mode": "plan""#),
        "the script switches modes"
    );
    let coder = dir.path().join("coder-coder.json");
    std::fs::write(&coder, text.replace(r#""mode": "plan","#, "")).expect("write");
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let with_switch = scripted_rows(&plan, &a);
    let without = scripted_rows(&coder, &b);
    let field = |rows: &[serde_json::Value], pm: &str, key: &str| {
        rows.iter()
            .find(|r| r["mode"] == "optimised" && r["provider_model"] == pm)
            .and_then(|r| r[key].as_u64())
            .expect("row")
    };
    for pm in ["anthropic", "openai"] {
        assert_eq!(field(&with_switch, pm, "requests"), 6);
        // Everything the plan requests cached is read again after the switch.
        assert!(
            field(&with_switch, pm, "cache_read_tokens")
                >= field(&without, pm, "cache_read_tokens"),
            "{pm}: fewer cache reads with the switch"
        );
    }
    assert_eq!(
        field(&with_switch, "anthropic", "uncached_input_tokens"),
        field(&without, "anthropic", "uncached_input_tokens"),
        "the switch sends nothing uncached on Anthropic"
    );
    // The first prompt really ran in plan mode: its rule rode in the turns.
    assert!(
        field(&with_switch, "anthropic", "input_tokens")
            > field(&without, "anthropic", "input_tokens")
    );
    let written = |rows: &[serde_json::Value]| field(rows, "anthropic", "cache_creation_tokens");
    let extra = written(&with_switch).saturating_sub(written(&without));
    assert!(
        extra < 300,
        "plan → coder wrote {extra} tokens more than coder → coder ({} vs {})",
        written(&with_switch),
        written(&without)
    );
}
