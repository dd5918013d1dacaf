//! Keep-warm (`CHATCLI_CACHE_KEEPWARM`): while the user is away and the session is still open,
//! a minimal request that reads the cached prefix just before its entries lapse, so the prompt
//! the user types on return reads the conversation instead of writing it again.
//!
//! A ping is the last request cut after its rolling cache marker, with a 16-token output limit:
//! the same tools, system and settled messages, so every byte up to the marker is a cache read,
//! and a read refreshes the entry (Anthropic: "refreshed for no additional cost each time the
//! cached content is used"; OpenAI's in-memory retention counts from the last use). What came
//! after the marker (results shown whole once, about to become pointers, and the newest turn's
//! volatile context) is not sent again: a message of one-word stub results answers the settled
//! calls instead (`ping_request`). It goes out `MARGIN_SECS` before the entries would lapse,
//! and again one lifetime later while the user is still away.
//!
//! What bounds it, the part a newcomer would get wrong: the user may never come back, and then
//! every ping was paid for nothing. The pings of one pause stop once they would together cost
//! more than the rewrite they are there to avoid, and never run past `max_idle` minutes; so an
//! abandoned session loses at most one rewrite per pause, and a returning user never pays more
//! than the expiry would have cost. A ping's cost is its whole bill, not only the cache read:
//! the last request's cached tokens at the read price, its stub tail at the input price, and
//! its answer at the output price. The rewrite is priced at the lifetime the returning request
//! will ask for (`Provider::lapse_lifetime`): under `auto` a lapse of 5-minute Claude entries is
//! a pause past 2 minutes, so the return writes them for an hour at 2×. That allows up to about
//! 19 pings (85 minutes) on a large cached conversation, fewer on a small one (its stub tail and
//! answer weigh more), none on a context under the provider's cache minimum; an abandoned
//! session so loses up to about 1.9× its cached prefix per pause, the price of bridging a
//! 40-minute meeting (docs/benchmark.md). A request with a thinking budget is never pinged: a 16-token limit is below
//! any budget, and a changed thinking setting would not read the same entries. The benchmark's
//! model and the agent's timer both take their ping times from `KeepWarm::pings`. Pings count
//! against `CHATCLI_SESSION_BUDGET_USD` like any request: none is sent once it is spent. An op that
//! arrives while a ping is in flight waits for it (a 16-token answer); a command between
//! prompts (`/cost`) leaves the planned pings as they are, a prompt plans new ones.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use futures_util::StreamExt;

use crate::conversation::{ContentBlock, Message, ModelRequest, Role};
use crate::cost::Pricing;
use crate::protocol::AgentEvent;
use crate::provider::ProviderEvent;

/// Seconds before the entries would lapse at which a ping goes out.
pub const MARGIN_SECS: u64 = 30;
/// Idle minutes kept warm at most when the setting is `on`.
pub const DEFAULT_MAX_IDLE_MINUTES: u64 = 120;
/// The setting when `CHATCLI_CACHE_KEEPWARM` is unset (chosen on the benchmark's days:
/// docs/benchmark.md).
pub const DEFAULT: KeepWarm = KeepWarm::On {
    max_idle_secs: DEFAULT_MAX_IDLE_MINUTES * 60,
};
/// The output a ping asks for: the smallest every wire accepts (OpenAI's Responses API: 16).
pub const PING_OUTPUT_TOKENS: u32 = 16;

/// `CHATCLI_CACHE_KEEPWARM`: off, or on for at most this many seconds of idle time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeepWarm {
    Off,
    On { max_idle_secs: u64 },
}

/// Cache prices relative to plain input: a read, writing the entries again after a lapse, and
/// an output token.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prices {
    pub read: f64,
    pub rewrite: f64,
    pub output: f64,
}

/// What the last request carried: tokens cached (read or written) and its uncached tail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Carried {
    pub cached: u64,
    pub uncached: u64,
}

impl Prices {
    /// The model's prices when a lapse writes the entries again with `lifetime_secs` (an hour
    /// or more: the 1-hour write price); `None` without a price to weigh pings against.
    pub fn of(pricing: &Pricing, lifetime_secs: u64) -> Option<Prices> {
        if pricing.input <= 0.0 {
            return None;
        }
        let write = if lifetime_secs >= 3_600 {
            pricing.cache_write_1h.or(pricing.cache_write_5m)
        } else {
            pricing.cache_write_5m
        };
        Some(Prices {
            read: pricing.cache_read? / pricing.input,
            rewrite: write.unwrap_or(pricing.input) / pricing.input,
            output: pricing.output / pricing.input,
        })
    }
}

impl KeepWarm {
    /// Parses `off`, `on`, or a number of idle minutes to keep warm at most (`0` is off).
    pub fn parse(value: &str) -> Option<KeepWarm> {
        match value.trim().to_ascii_lowercase().as_str() {
            "off" | "false" | "0" => Some(KeepWarm::Off),
            "on" | "true" => Some(KeepWarm::On {
                max_idle_secs: DEFAULT_MAX_IDLE_MINUTES * 60,
            }),
            n => n.parse::<u64>().ok().map(|minutes| KeepWarm::On {
                max_idle_secs: minutes.saturating_mul(60),
            }),
        }
    }

    /// The setting as `/config` shows it.
    pub fn name(&self) -> String {
        match self {
            KeepWarm::Off => "off".into(),
            KeepWarm::On { max_idle_secs } => format!("on, up to {} min idle", max_idle_secs / 60),
        }
    }

    /// When to ping after a request that `carried` these tokens and whose entries live
    /// `lifetime_secs`, in seconds after that request: one lifetime less the margin apart,
    /// while their cost stays under one rewrite and within the idle time kept warm.
    pub fn pings(&self, lifetime_secs: u64, prices: Prices, carried: Carried) -> Vec<u64> {
        let KeepWarm::On { max_idle_secs } = *self else {
            return Vec::new();
        };
        let ping = carried.cached as f64 * prices.read
            + carried.uncached as f64
            + f64::from(PING_OUTPUT_TOKENS) * prices.output;
        let rewrite = carried.cached as f64 * (prices.rewrite - prices.read);
        if lifetime_secs <= MARGIN_SECS || ping <= 0.0 || rewrite <= 0.0 {
            return Vec::new();
        }
        let every = lifetime_secs - MARGIN_SECS;
        let most = (rewrite / ping).floor() as u64;
        (1..=most)
            .map(|k| k * every)
            .take_while(|at| *at < max_idle_secs)
            .collect()
    }
}

/// The text of a stub result in a ping: the model's answer is thrown away.
const STUB: &str = "(keep-warm)";

/// What a ping sends after the settled messages of `request`: a user message answering the last
/// settled message's calls with stubs (or a one-word turn when it has none); nothing when every
/// message is settled and the last is the user's.
fn ping_tail(request: &ModelRequest) -> Option<Message> {
    let last = request
        .rolling_marker()
        .and_then(|i| request.messages.get(i));
    match last {
        Some(m) if m.role == Role::User => None,
        Some(m) if m.tool_uses().next().is_some() => Some(Message {
            role: Role::User,
            content: m
                .tool_uses()
                .map(|(id, _, _)| ContentBlock::ToolResult {
                    tool_use_id: id.to_string(),
                    content: STUB.into(),
                    is_error: false,
                })
                .collect(),
        }),
        _ => Some(Message::user_text(STUB)),
    }
}

/// A ping for `request`: its settled messages (through the rolling marker) and the stub tail,
/// with the same markers, a 16-token limit.
pub fn ping_request(request: &ModelRequest) -> ModelRequest {
    let settled = request.rolling_marker().map_or(0, |m| m + 1);
    // The settled messages are shared with the request (`Arc`): a ping copies pointers.
    let mut messages: Vec<Arc<Message>> = request.messages.iter().take(settled).cloned().collect();
    messages.extend(ping_tail(request).map(Arc::new));
    ModelRequest {
        model: request.model.clone(),
        system: request.system.clone(),
        tools: request.tools.clone(),
        messages,
        max_output_tokens: PING_OUTPUT_TOKENS,
        session_id: request.session_id.clone(),
        effort: request.effort,
        settled_messages: Some(settled),
        bridge_message: request.bridge_message,
    }
}

/// What a ping for `request` would carry, from the request's billed usage: its cached tokens,
/// and the stub tail (serialised bytes, roughly counted) in place of what followed the marker.
pub fn ping_carries(request: &ModelRequest, usage: &crate::provider::UsageRecord) -> Carried {
    let tail = ping_tail(request)
        .and_then(|m| serde_json::to_vec(&m).ok())
        .map_or(0, |b| crate::tokens::rough(b.len()));
    Carried {
        cached: usage.cache_read + usage.cache_write_5m + usage.cache_write_1h,
        uncached: tail,
    }
}

/// The agent's keep-warm state: the last request, when it went out, and its pings to come.
#[derive(Debug)]
pub struct Warm {
    setting: KeepWarm,
    armed: Option<Armed>,
}

#[derive(Debug)]
struct Armed {
    request: ModelRequest,
    /// When the request went out (the pings' origin).
    sent: Instant,
    /// When the entries were last read or written, by the session's clock (seconds): a ping
    /// after they lapsed would write them again, so none is sent then.
    refreshed_secs: u64,
    lifetime_secs: u64,
    pings: Vec<u64>,
    next: usize,
    announced: bool,
}

impl Warm {
    /// No request yet.
    pub fn new(setting: KeepWarm) -> Self {
        Warm {
            setting,
            armed: None,
        }
    }

    /// Takes the request just answered (sent at `sent`, `now_secs` by the session's clock),
    /// whose entries live `lifetime_secs`; its pings are planned at `prices`. A request with a
    /// thinking budget, or without prices, gets no pings (see the module note).
    pub fn arm(
        &mut self,
        request: ModelRequest,
        (sent, now_secs): (Instant, u64),
        (lifetime_secs, carried): (u64, Carried),
        prices: Option<Prices>,
    ) {
        let pings = match prices {
            Some(prices) if request.effort.is_none() => {
                self.setting.pings(lifetime_secs, prices, carried)
            }
            _ => Vec::new(),
        };
        self.armed = Some(Armed {
            request,
            sent,
            refreshed_secs: now_secs,
            lifetime_secs,
            pings,
            next: 0,
            announced: false,
        });
    }

    /// The entries' lifetime, once after each request: what the status bar counts down.
    pub fn announce(&mut self) -> Option<u64> {
        let armed = self.armed.as_mut().filter(|a| !a.announced)?;
        armed.announced = true;
        Some(armed.lifetime_secs)
    }

    /// When the next ping is due, if one is planned.
    pub fn due(&self) -> Option<Instant> {
        let armed = self.armed.as_ref()?;
        let at = armed.pings.get(armed.next)?;
        Some(armed.sent + Duration::from_secs(*at))
    }

    /// The next ping's request (the last request with a 16-token limit), unless the entries
    /// lapsed already by the session's clock (a suspended laptop): then no more pings.
    pub fn ping(&mut self, now_secs: u64) -> Option<ModelRequest> {
        let armed = self.armed.as_mut()?;
        if now_secs > armed.refreshed_secs + armed.lifetime_secs {
            armed.pings.clear();
            return None;
        }
        armed.pings.get(armed.next)?;
        armed.next += 1;
        Some(ping_request(&armed.request))
    }

    /// A ping was answered at `now_secs`: the entries live another lifetime from then.
    pub fn refreshed(&mut self, now_secs: u64) -> Option<u64> {
        let armed = self.armed.as_mut()?;
        armed.refreshed_secs = now_secs;
        Some(armed.lifetime_secs)
    }

    /// No more pings this pause (one failed).
    pub fn stop(&mut self) {
        if let Some(armed) = self.armed.as_mut() {
            armed.pings.clear();
        }
    }
}

/// Who a ping's cost is booked under in `/cost`.
pub const KEEPWARM_AGENT: &str = "keep-warm";

impl super::Agent {
    /// Waits for the next op between prompts, pinging the cache when a ping falls due first;
    /// says the cache's lifetime once after each prompt. `None` when the front end hung up.
    pub(super) async fn idle(
        &mut self,
        ops: &mut tokio::sync::mpsc::Receiver<super::Submission>,
    ) -> Option<super::Submission> {
        loop {
            if let Some(lifetime_secs) = self.warm.announce() {
                self.emit(AgentEvent::CacheWarm {
                    lifetime_secs,
                    kept_warm: false,
                });
            }
            let Some(due) = self.warm.due() else {
                return ops.recv().await;
            };
            tokio::select! {
                submission = ops.recv() => return submission,
                () = tokio::time::sleep_until(due) => self.ping().await,
            }
        }
    }

    /// The request just answered, kept for pings when the provider names its cache lifetime.
    pub(super) fn arm_keepwarm(&mut self, request: ModelRequest, sent: Instant) {
        let Some(lifetime) = self.provider.cache_lifetime() else {
            return;
        };
        let prices = self
            .options
            .pricing
            .as_ref()
            .and_then(|p| Prices::of(p, self.provider.lapse_lifetime().unwrap_or(lifetime)));
        let now = self.options.clock.now_secs();
        let carried = ping_carries(&request, &self.accounts.last_usage);
        self.warm
            .arm(request, (sent, now), (lifetime, carried), prices);
    }

    /// Sends one ping and books what it cost; a failed ping, or a session budget spent, ends
    /// this pause's pings.
    async fn ping(&mut self) {
        let over_budget = super::accounting::lock(&self.accounts.book).over_budget();
        if over_budget.is_some() {
            self.warm.stop();
            return;
        }
        let Some(request) = self.warm.ping(self.options.clock.now_secs()) else {
            return;
        };
        let mut stream = self.provider.keep_warm(request);
        let mut usage = None;
        while let Some(event) = stream.next().await {
            match event {
                Ok(ProviderEvent::Usage(u)) => usage = Some(u),
                Ok(_) => {}
                Err(e) => {
                    self.warm.stop();
                    self.emit(AgentEvent::Notice {
                        message: format!("cache keep-warm stopped for this pause: {e}"),
                    });
                    return;
                }
            }
        }
        let Some(usage) = usage else {
            return;
        };
        let model = self.model_name();
        let (cost_usd, warnings) = super::accounting::lock(&self.accounts.book).record_for(
            KEEPWARM_AGENT,
            &model,
            &usage,
            self.options.pricing.as_ref(),
        );
        self.emit(AgentEvent::Usage {
            turn: 0,
            usage: usage.figures(),
            cost_usd,
        });
        for message in warnings {
            self.emit(AgentEvent::Notice { message });
        }
        if let Some(lifetime_secs) = self.warm.refreshed(self.options.clock.now_secs()) {
            self.emit(AgentEvent::CacheWarm {
                lifetime_secs,
                kept_warm: true,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLAUDE_5M: Prices = Prices {
        read: 0.1,
        rewrite: 1.25,
        output: 5.0,
    };
    /// A large cached conversation with a short uncached tail.
    const LARGE: Carried = Carried {
        cached: 100_000,
        uncached: 10,
    };

    fn request(messages: Vec<Message>, settled: Option<usize>) -> ModelRequest {
        ModelRequest {
            model: "claude-sonnet-4-5".into(),
            system: Vec::new(),
            tools: Vec::new(),
            messages: crate::conversation::shared(messages),
            max_output_tokens: 8_192,
            session_id: "s".into(),
            effort: None,
            settled_messages: settled,
            bridge_message: Some(1),
        }
    }

    #[test]
    fn a_ping_sends_the_settled_messages_and_stubs_for_what_followed_the_marker() {
        let calls = Message {
            role: Role::Assistant,
            content: vec![
                ContentBlock::ToolUse {
                    id: "a".into(),
                    name: "read_file".into(),
                    input: serde_json::json!({"file": "big.rs"}),
                },
                ContentBlock::ToolUse {
                    id: "b".into(),
                    name: "read_file".into(),
                    input: serde_json::json!({"file": "other.rs"}),
                },
            ],
        };
        let results = Message {
            role: Role::User,
            content: ["a", "b"]
                .iter()
                .map(|id| ContentBlock::ToolResult {
                    tool_use_id: id.to_string(),
                    content: "x".repeat(40_000),
                    is_error: false,
                })
                .collect(),
        };
        let history = vec![Message::user_text("read them"), calls.clone(), results];
        // The results are about to become pointers: the marker is on the calls.
        let ping = ping_request(&request(history.clone(), Some(2)));
        assert_eq!(
            ping.messages[..2],
            crate::conversation::shared(history[..2].to_vec())
        );
        assert_eq!(ping.messages.len(), 3);
        let stubs: Vec<&str> = ping.messages[2]
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ToolResult {
                    tool_use_id,
                    content,
                    ..
                } if content == STUB => Some(tool_use_id.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(stubs, ["a", "b"], "every settled call is answered");
        assert_eq!(
            ping.rolling_marker(),
            Some(1),
            "the marker stays on the calls"
        );
        assert_eq!(ping.bridge_message, Some(1));
        assert_eq!(ping.max_output_tokens, PING_OUTPUT_TOKENS);
        // Its bill: the cached part, and a few tokens of stubs instead of 20k of results.
        let usage = crate::provider::UsageRecord {
            cache_read: 3_000,
            uncached_input: 20_000,
            ..Default::default()
        };
        let carried = ping_carries(&request(history.clone(), Some(2)), &usage);
        assert_eq!(carried.cached, 3_000);
        assert!(carried.uncached < 50, "{carried:?}");
        // Everything settled and the user's turn last: the request itself.
        let all = request(history.clone(), None);
        assert_eq!(
            ping_request(&all).messages,
            crate::conversation::shared(history.clone())
        );
        // Settled up to an answer without calls: a one-word turn follows it.
        let answered = vec![
            Message::user_text("hi"),
            Message {
                role: Role::Assistant,
                content: vec![ContentBlock::Text {
                    text: "hello".into(),
                }],
            },
        ];
        let ping = ping_request(&request(answered, None));
        assert_eq!(
            ping.messages.last().map(|m| m.as_ref()),
            Some(&Message::user_text(STUB))
        );
    }

    #[test]
    fn settings_parse_and_bad_ones_are_refused() {
        assert_eq!(KeepWarm::parse("off"), Some(KeepWarm::Off));
        assert_eq!(KeepWarm::parse("0"), Some(KeepWarm::Off));
        assert_eq!(
            KeepWarm::parse("ON"),
            Some(KeepWarm::On {
                max_idle_secs: 7_200
            })
        );
        assert_eq!(
            KeepWarm::parse(" 45 "),
            Some(KeepWarm::On {
                max_idle_secs: 2_700
            })
        );
        assert_eq!(KeepWarm::parse("soon"), None);
        assert_eq!(KeepWarm::parse("-3"), None);
    }

    #[test]
    fn pings_stop_before_they_cost_more_than_the_rewrite() {
        let on = KeepWarm::parse("on").unwrap_or(KeepWarm::Off);
        // 5-minute Claude entries: every 4.5 minutes, 11 pings (1.1× < 1.15× the rewrite).
        let pings = on.pings(300, CLAUDE_5M, LARGE);
        assert_eq!(pings.len(), 11);
        assert_eq!(pings.first(), Some(&270));
        assert_eq!(pings.last(), Some(&2_970));
        // GPT-4.1's in-memory retention: a read at 0.25×, a lapse re-sent at 1×: 2 pings
        // once the answer (16 tokens at 4×) is counted.
        let gpt41 = Prices {
            read: 0.25,
            rewrite: 1.0,
            output: 4.0,
        };
        assert_eq!(on.pings(300, gpt41, LARGE), vec![270, 540]);
        // A 1-hour entry within a 2-hour cap: a ping before each hour is up.
        let hour = Prices {
            rewrite: 2.0,
            ..CLAUDE_5M
        };
        assert_eq!(on.pings(3_600, hour, LARGE), vec![3_570, 7_140]);
        // A small context behind a long uncached tail: a ping costs more than it saves.
        let small = Carried {
            cached: 3_000,
            uncached: 1_200,
        };
        assert_eq!(on.pings(300, CLAUDE_5M, small), vec![270, 540]);
        let tiny = Carried {
            cached: 1_000,
            uncached: 1_200,
        };
        assert!(on.pings(300, CLAUDE_5M, tiny).is_empty());
    }

    #[test]
    fn nothing_is_pinged_when_it_cannot_pay_or_is_off() {
        let on = KeepWarm::parse("on").unwrap_or(KeepWarm::Off);
        assert!(KeepWarm::Off.pings(300, CLAUDE_5M, LARGE).is_empty());
        // A read that costs half the input (GPT-4o) and no write premium: a ping costs as much
        // as the lapse.
        let half = Prices {
            read: 0.5,
            rewrite: 1.0,
            output: 4.0,
        };
        assert!(on.pings(300, half, LARGE).is_empty());
        // Nothing cached: nothing to keep.
        assert!(on.pings(300, CLAUDE_5M, Carried::default()).is_empty());
        // 24-hour retention: the cap comes long before the lapse.
        assert!(on.pings(86_400, CLAUDE_5M, LARGE).is_empty());
        // A cap of 10 minutes: two pings.
        let short = KeepWarm::parse("10").unwrap_or(KeepWarm::Off);
        assert_eq!(short.pings(300, CLAUDE_5M, LARGE), vec![270, 540]);
    }
}
