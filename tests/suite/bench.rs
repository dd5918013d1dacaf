//! The token-efficiency benchmark in its `--quick` form: the structural facts it must show.

use chatcli::bench::{self, BenchOptions, ProviderModel, Row};

fn find<'a>(rows: &'a [Row], name: &str, mode: &str, pm: &str) -> &'a Row {
    rows.iter()
        .find(|r| r.name == name && r.mode == mode && r.provider_model == pm)
        .unwrap_or_else(|| panic!("no row {name}/{mode}/{pm}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quick_bench_shows_the_savings() {
    let options = BenchOptions {
        scenarios: bench::scenarios::NAMES
            .iter()
            .map(|s| s.to_string())
            .collect(),
        provider_models: vec![ProviderModel::Anthropic, ProviderModel::OpenAi],
        quick: true,
    };
    let rows = bench::run(&options).await.expect("the benchmark runs");
    assert_eq!(rows.len(), 5 * 4 * 2);
    for pm in ["anthropic", "openai"] {
        for name in bench::scenarios::NAMES {
            let optimised = find(&rows, name, "optimised", pm);
            let naive = find(&rows, name, "naive", pm);
            assert!(
                optimised.cost_usd < naive.cost_usd,
                "{pm}/{name}: optimised {} vs naive {}",
                optimised.cost_usd,
                naive.cost_usd
            );
            assert_eq!(
                naive.cache_read_tokens, 0,
                "{pm}/{name}: the naive client never hits the cache"
            );
            // Scratch file names carry the time, so runs differ by a few tokens: allow 2%.
            let batched = find(&rows, name, "batched", pm);
            let eager = find(&rows, name, "eager", pm);
            assert!(
                batched.cost_usd <= eager.cost_usd * 1.02,
                "{pm}/{name}: batched (the default) is not dearer than eager"
            );
        }
        assert_eq!(
            find(&rows, "stagnation", "optimised", pm).requests,
            3,
            "stops at the third repeat"
        );
        assert!(find(&rows, "stagnation", "naive", pm).requests > 10);
        for name in ["coder", "long"] {
            let r = find(&rows, name, "optimised", pm);
            assert!(
                r.floor_ratio() <= 1.25,
                "{pm}/{name}: {:.2}× the floor",
                r.floor_ratio()
            );
        }
        let lookup = find(&rows, "lookup", "optimised", pm).cost_usd
            / find(&rows, "lookup", "naive", pm).cost_usd;
        assert!(
            lookup <= 0.30,
            "{pm}/lookup: optimised costs {:.0}% of naive",
            lookup * 100.0
        );
    }
    let json: serde_json::Value = serde_json::from_str(&bench::json(&rows)).expect("json");
    let first = &json["scenarios"][0];
    for field in [
        "name",
        "mode",
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
