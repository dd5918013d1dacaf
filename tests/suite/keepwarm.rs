//! Keep-warm (`CHATCLI_CACHE_KEEPWARM`, issue #39): while the user is away, the agent re-sends
//! its last request with a 16-token limit just before the cache entries lapse, stops once the
//! pings would cost more than the rewrite they avoid, books them in `/cost`, and says the
//! cache's time left for the status bar. Time is tokio's paused clock: hours pass in an instant.

use std::sync::Arc;
use std::time::Duration;

use chatcli::agent::AgentHandle;
use chatcli::agent::keepwarm::{KEEPWARM_AGENT, KeepWarm};
use chatcli::cost::Catalog;
use chatcli::protocol::{AgentEvent, Mode, Op};
use chatcli::provider::Provider;

use chatcli::provider::UsageRecord;

use crate::common::scripted::{Scripted, respond_with};

/// An agent on a scripted provider whose entries live `lifetime` seconds, priced as Claude
/// Sonnet 4.5, keep-warm `setting`.
fn agent(dir: &std::path::Path, lifetime: u64, setting: KeepWarm) -> (AgentHandle, Arc<Scripted>) {
    agent_with_budget(dir, (lifetime, setting), None)
}

/// `agent`, with a session budget.
fn agent_with_budget(
    dir: &std::path::Path,
    (lifetime, setting): (u64, KeepWarm),
    budget_usd: Option<f64>,
) -> (AgentHandle, Arc<Scripted>) {
    agent_on(dir, (lifetime, lifetime), setting, budget_usd)
}

/// An agent whose provider's entries live `lifetime` seconds and are written again for
/// `lapse` seconds after a lapse.
fn agent_on(
    dir: &std::path::Path,
    (lifetime, lapse): (u64, u64),
    setting: KeepWarm,
    budget_usd: Option<f64>,
) -> (AgentHandle, Arc<Scripted>) {
    // 10k tokens read from the cache, a 100-token tail that a ping does not send again: a ping
    // costs 1,080 input-token equivalents at Sonnet's prices (1,000 read, 16 output at 5×), a
    // lapse 11,500.
    let usage = UsageRecord {
        cache_read: 10_000,
        uncached_input: 100,
        output: 10,
        ..UsageRecord::default()
    };
    let provider = Scripted::lapsing(
        vec![
            respond_with("first answer", &[], usage),
            respond_with("second answer", &[], usage),
        ],
        Duration::ZERO,
        lifetime,
        lapse,
    );
    let mut options = crate::common::options(dir, Mode::Chat);
    options.pricing = Catalog::builtin().lookup("claude-sonnet-4-5").cloned();
    options.keepwarm = setting;
    options.budget_usd = budget_usd;
    let dyn_provider: Arc<dyn Provider> = provider.clone();
    (chatcli::agent::spawn(dyn_provider, options), provider)
}

/// The events until `stop`, however long the (paused) clock must run to reach it.
async fn until(handle: &mut AgentHandle, stop: impl Fn(&AgentEvent) -> bool) -> Vec<AgentEvent> {
    let mut events = Vec::new();
    loop {
        let next = tokio::time::timeout(Duration::from_secs(100_000), handle.events.recv())
            .await
            .expect("an event within a day of paused time")
            .expect("the agent is alive")
            .msg;
        let done = stop(&next);
        events.push(next);
        if done {
            return events;
        }
    }
}

async fn prompt(handle: &mut AgentHandle, text: &str) {
    handle
        .ops
        .send(Op::Submit {
            text: text.into(),
            mode: Mode::Chat,
        })
        .expect("agent alive");
    until(handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
}

fn kept_warm(events: &[AgentEvent]) -> usize {
    events
        .iter()
        .filter(|e| {
            matches!(
                e,
                AgentEvent::CacheWarm {
                    kept_warm: true,
                    ..
                }
            )
        })
        .count()
}

#[tokio::test(start_paused = true)]
async fn an_away_user_s_cache_is_pinged_until_the_pings_would_cost_a_rewrite() {
    let dir = tempfile::tempdir().expect("tempdir");
    let on = KeepWarm::parse("on").expect("on parses");
    let (mut handle, provider) = agent(dir.path(), 300, on);
    prompt(&mut handle, "hello").await;
    let started = tokio::time::Instant::now();
    // The lifetime is said once the prompt is over, then 10 pings (10 × 1,080 < 11,500),
    // 4½ minutes apart.
    let events = until(&mut handle, |e| {
        matches!(
            e,
            AgentEvent::CacheWarm {
                kept_warm: true,
                ..
            }
        )
    })
    .await;
    assert!(events.contains(&AgentEvent::CacheWarm {
        lifetime_secs: 300,
        kept_warm: false
    }));
    let waited = started.elapsed();
    assert!(
        waited > Duration::from_secs(200) && waited <= Duration::from_secs(270),
        "the first ping goes out 30 s before the lapse: {waited:?}"
    );
    let mut warm = 1;
    while warm < 10 {
        warm += kept_warm(&until(&mut handle, |e| matches!(e, AgentEvent::CacheWarm { .. })).await);
    }
    // Two more hours away: no eleventh ping.
    tokio::time::sleep(Duration::from_secs(7_200)).await;
    let pings = provider.pings();
    assert_eq!(pings.len(), 10, "the pings stop at the bound");
    let last = provider.requests().pop().expect("one request");
    for ping in &pings {
        assert_eq!(ping.max_output_tokens, 16);
        assert_eq!(ping.messages, last.messages, "a ping reads the same prefix");
        assert_eq!(ping.system, last.system);
    }
    // Booked apart in `/cost`, and the session goes on.
    handle.ops.send(Op::CostReport).expect("agent alive");
    let events = until(&mut handle, |e| matches!(e, AgentEvent::CostReport { .. })).await;
    let Some(AgentEvent::CostReport { by_agent, .. }) = events.last() else {
        panic!("a cost report");
    };
    let share = by_agent.iter().find(|a| a.agent == KEEPWARM_AGENT);
    assert_eq!(share.map(|a| a.requests), Some(10), "{by_agent:?}");
    prompt(&mut handle, "back again").await;
    assert_eq!(provider.requests().len(), 2);
}

/// Anthropic's `auto` writes 5-minute entries until the first pause and an hour's after it: a
/// lapse there costs the 2× write (19,000 here), so 17 pings pay (17 × 1,080), not 10.
#[tokio::test(start_paused = true)]
async fn pings_on_five_minute_entries_weigh_against_the_hour_written_after_a_lapse() {
    let dir = tempfile::tempdir().expect("tempdir");
    let on = KeepWarm::parse("on").expect("on parses");
    let (mut handle, provider) = agent_on(dir.path(), (300, 3_600), on, None);
    prompt(&mut handle, "hello").await;
    tokio::time::sleep(Duration::from_secs(7_200)).await;
    assert_eq!(provider.pings().len(), 17);
}

#[tokio::test(start_paused = true)]
async fn a_user_back_before_the_lapse_and_a_session_with_it_off_are_never_pinged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let on = KeepWarm::parse("on").expect("on parses");
    let (mut handle, provider) = agent(dir.path(), 300, on);
    prompt(&mut handle, "hello").await;
    tokio::time::sleep(Duration::from_secs(200)).await;
    prompt(&mut handle, "quick follow-up").await;
    assert!(
        provider.pings().is_empty(),
        "back after 200 s: nothing to keep"
    );

    let off = tempfile::tempdir().expect("tempdir");
    let (mut handle, provider) = agent(off.path(), 300, KeepWarm::Off);
    prompt(&mut handle, "hello").await;
    tokio::time::sleep(Duration::from_secs(3_600)).await;
    assert!(provider.pings().is_empty(), "keep-warm off");
    // The status bar still learns the lifetime.
    handle.ops.send(Op::CostReport).expect("agent alive");
    let events = until(&mut handle, |e| matches!(e, AgentEvent::CostReport { .. })).await;
    assert!(
        events.iter().all(|e| !matches!(
            e,
            AgentEvent::CacheWarm {
                kept_warm: true,
                ..
            }
        )),
        "{events:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn pings_stop_when_the_session_budget_is_spent() {
    let dir = tempfile::tempdir().expect("tempdir");
    let on = KeepWarm::parse("on").expect("on parses");
    // The prompt costs $0.00345 at Sonnet's prices, each ping $0.000315: a $0.004 budget is
    // spent after the second ping, and no third goes out.
    let (mut handle, provider) = agent_with_budget(dir.path(), (300, on), Some(0.004));
    prompt(&mut handle, "hello").await;
    tokio::time::sleep(Duration::from_secs(7_200)).await;
    assert_eq!(provider.pings().len(), 2);
}
