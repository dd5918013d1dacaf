//! Which price a session's model gets, and why: one decision, made once per session, whose rule
//! is named to the user (`/cost`, `/config`, the `cost` event of `exec --json`).
//!
//! The order is the contract: the user's `pricing.toml` always wins; then a server that said it
//! is a local inference server (llama.cpp, Ollama, vLLM, LM Studio) is free; then the price the
//! provider's own model list gives (OpenRouter's); then the catalog; then the model's family,
//! estimated; then a model no catalog knows, behind an address on this
//! machine or a private network, is free (a fine-tune or a GGUF on a home-made server); else the
//! cost is unknown. What a newcomer gets wrong: an address on loopback is *not* a local model —
//! gateways (LiteLLM on localhost:4000, a company proxy on 10.x) sit there too and bill the
//! frontier price, so only the server's own answer makes a catalog model free. A window the
//! provider's list gives wins over the catalog's and the family's: the provider knows what it
//! serves.

use super::{Catalog, Pricing, family};

/// Why the session's model costs what it costs.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum PriceRule {
    /// `CHATCLI_HOME/pricing.toml` lists the model.
    UserFile,
    /// The server said it is a local inference server (its name: `llama.cpp`, `Ollama`…).
    LocalServer(String),
    /// The provider's own model list prices it (the provider's name).
    ProviderList(String),
    /// The built-in catalog lists the model.
    Catalog,
    /// Not listed, but its family is: priced and sized as `representative`.
    Family {
        family: String,
        representative: String,
    },
    /// Listed nowhere, behind an address on this machine or a private network: free.
    Uncatalogued,
    /// Listed nowhere, on a remote provider: no price.
    #[default]
    Unknown,
}

impl PriceRule {
    /// The short phrase `/cost` and `/config` show.
    pub fn phrase(&self) -> String {
        match self {
            PriceRule::UserFile => "pricing.toml".into(),
            PriceRule::LocalServer(server) => format!("free: local {server} server"),
            PriceRule::ProviderList(provider) => format!("priced: {provider}'s model list"),
            PriceRule::Catalog => "priced: catalog".into(),
            PriceRule::Family {
                family,
                representative,
            } => format!("priced: estimated from family {family} (as {representative})"),
            PriceRule::Uncatalogued => "free: in no catalog, on a local address".into(),
            PriceRule::Unknown => "cost unknown: in no catalog".into(),
        }
    }

    /// Whether the price (and window) is a guess from the family.
    pub fn estimated(&self) -> bool {
        matches!(self, PriceRule::Family { .. })
    }
}

/// Where the requests go, as far as pricing cares.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Endpoint {
    /// The base URL is on loopback, a private network or `localhost`.
    pub local_address: bool,
    /// The server said what it is (`llama.cpp`, `Ollama`, `vLLM`, `LM Studio`).
    pub local_server: Option<String>,
    /// The model's entry in the provider's own list, when one was read.
    pub listed: Option<Listed>,
}

/// What the provider's list says of the model.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Listed {
    /// The provider's name, for the rule's phrase.
    pub provider: String,
    pub window: Option<u64>,
    /// USD per million tokens: input, output, cache read, cache write.
    pub price: Option<(f64, f64, Option<f64>, Option<f64>)>,
}

/// A price and the rule that gave it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PriceDecision {
    pub pricing: Option<Pricing>,
    pub rule: PriceRule,
}

/// Decides `model`'s price: `catalog` is the built-in one (with the user's file merged over it),
/// `user` the user's file alone.
pub fn decide(
    model: &str,
    catalog: &Catalog,
    user: Option<&Catalog>,
    endpoint: &Endpoint,
) -> PriceDecision {
    let provider_window = endpoint.listed.as_ref().and_then(|l| l.window);
    if let Some(p) = user.and_then(|u| u.lookup(model)) {
        let mut p = p.clone();
        p.context_window = p.context_window.or(provider_window);
        return PriceDecision {
            pricing: Some(p),
            rule: PriceRule::UserFile,
        };
    }
    let listed = catalog.lookup(model);
    let family = family::family_of(model);
    let family_pricing = family
        .as_ref()
        .and_then(|f| catalog.lookup(f.representative));
    // Never a window smaller than the family's: an entry without one takes the family's.
    let window = provider_window
        .or_else(|| listed.and_then(|p| p.context_window))
        .or_else(|| family_pricing.and_then(|p| p.context_window));
    if let Some(server) = &endpoint.local_server {
        return PriceDecision {
            pricing: Some(Pricing::free(window)),
            rule: PriceRule::LocalServer(server.clone()),
        };
    }
    if let Some(l) = &endpoint.listed
        && let Some((input, output, cache_read, cache_write)) = l.price
    {
        return PriceDecision {
            pricing: Some(Pricing {
                input,
                output,
                cache_read,
                cache_write_5m: cache_write,
                cache_write_1h: None,
                context_window: window,
                aliases: Vec::new(),
                source: format!("{}'s model list", l.provider),
                as_of: String::new(),
            }),
            rule: PriceRule::ProviderList(l.provider.clone()),
        };
    }
    if let Some(p) = listed {
        let mut p = p.clone();
        p.context_window = window;
        return PriceDecision {
            pricing: Some(p),
            rule: PriceRule::Catalog,
        };
    }
    if let (Some(f), Some(p)) = (family, family_pricing) {
        let mut p = p.clone();
        p.context_window = window;
        p.source = format!("estimated from family {} ({})", f.family, p.source);
        return PriceDecision {
            pricing: Some(p),
            rule: PriceRule::Family {
                family: f.family.to_string(),
                representative: f.representative.to_string(),
            },
        };
    }
    if endpoint.local_address {
        return PriceDecision {
            pricing: Some(Pricing::free(None)),
            rule: PriceRule::Uncatalogued,
        };
    }
    PriceDecision::default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gateway() -> Endpoint {
        Endpoint {
            local_address: true,
            ..Endpoint::default()
        }
    }

    fn llama() -> Endpoint {
        Endpoint {
            local_address: true,
            local_server: Some("llama.cpp".into()),
            ..Endpoint::default()
        }
    }

    /// The cases of `each_rule_in_its_order`: (model, endpoint, with the user's pricing file,
    /// expected phrase, free?).
    fn rule_cases() -> Vec<(&'static str, Endpoint, bool, &'static str, Option<bool>)> {
        let remote = Endpoint::default();
        vec![
            (
                "claude-sonnet-4-5",
                gateway(),
                false,
                "priced: catalog",
                Some(false),
            ),
            (
                "claude-sonnet-4-5",
                remote.clone(),
                false,
                "priced: catalog",
                Some(false),
            ),
            (
                "claude-sonnet-4-5",
                llama(),
                false,
                "free: local llama.cpp server",
                Some(true),
            ),
            (
                "claude-sonnet-4-5",
                llama(),
                true,
                "pricing.toml",
                Some(false),
            ),
            ("my-tune", gateway(), true, "pricing.toml", Some(false)),
            (
                "claude-sonnet-4-7",
                gateway(),
                false,
                "priced: estimated from family claude-sonnet-* (as claude-sonnet-4-6)",
                Some(false),
            ),
            (
                "smol.gguf",
                gateway(),
                false,
                "free: in no catalog, on a local address",
                Some(true),
            ),
            (
                "smol.gguf",
                llama(),
                false,
                "free: local llama.cpp server",
                Some(true),
            ),
            (
                "smol.gguf",
                remote,
                false,
                "cost unknown: in no catalog",
                None,
            ),
        ]
    }

    #[test]
    fn each_rule_in_its_order() {
        let catalog = Catalog::builtin();
        let user = Catalog::parse(
            "[models.\"claude-sonnet-4-5\"]\ninput = 1.0\noutput = 2.0\n[models.\"my-tune\"]\ninput = 0.5\noutput = 0.5\n",
            "pricing.toml",
        )
        .ok();
        for (model, endpoint, with_user, phrase, free) in rule_cases() {
            let d = decide(
                model,
                &catalog,
                user.as_ref().filter(|_| with_user),
                &endpoint,
            );
            assert_eq!(d.rule.phrase(), phrase, "{model} {endpoint:?}");
            assert_eq!(
                d.pricing
                    .as_ref()
                    .map(|p| p.input == 0.0 && p.output == 0.0),
                free,
                "{model} {endpoint:?}"
            );
        }
    }

    #[test]
    fn a_newer_model_gets_its_familys_window_and_price() {
        let catalog = Catalog::builtin();
        for model in [
            "claude-sonnet-4-7",
            "claude-sonnet-4-6",
            "anthropic/claude-sonnet-4.7",
        ] {
            let d = decide(model, &catalog, None, &Endpoint::default());
            let p = d.pricing.unwrap_or_else(|| panic!("{model} priced"));
            assert_eq!(p.context_window, Some(200_000), "{model}");
            assert!((p.input - 3.0).abs() < 1e-9 && (p.output - 15.0).abs() < 1e-9);
        }
        let d = decide("claude-sonnet-4-7", &catalog, None, &Endpoint::default());
        assert!(d.rule.estimated());
        assert!(
            !decide("claude-sonnet-4-6", &catalog, None, &Endpoint::default())
                .rule
                .estimated()
        );
    }

    #[test]
    fn the_providers_list_prices_and_sizes_before_the_catalog() {
        let catalog = Catalog::builtin();
        let routed = Endpoint {
            listed: Some(Listed {
                provider: "openrouter".into(),
                window: Some(1_000_000),
                price: Some((3.3, 16.5, Some(0.33), None)),
            }),
            ..Endpoint::default()
        };
        let d = decide("anthropic/claude-sonnet-4.5", &catalog, None, &routed);
        assert_eq!(d.rule, PriceRule::ProviderList("openrouter".into()));
        assert_eq!(d.rule.phrase(), "priced: openrouter's model list");
        let p = d.pricing.unwrap();
        assert_eq!((p.input, p.output, p.cache_read), (3.3, 16.5, Some(0.33)));
        assert_eq!(p.context_window, Some(1_000_000));
        // A list without prices still sizes a catalog model.
        let sized = Endpoint {
            listed: Some(Listed {
                provider: "anthropic".into(),
                window: Some(1_000_000),
                price: None,
            }),
            ..Endpoint::default()
        };
        let d = decide("claude-sonnet-4-5", &catalog, None, &sized);
        assert_eq!(d.rule, PriceRule::Catalog);
        assert_eq!(d.pricing.unwrap().context_window, Some(1_000_000));
    }

    #[test]
    fn every_family_representative_is_in_the_catalog() {
        let catalog = Catalog::builtin();
        for id in family::representatives() {
            let p = catalog.lookup(id);
            assert!(p.is_some_and(|p| p.context_window.is_some()), "{id}");
        }
    }
}
