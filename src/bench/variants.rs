//! The configurations a run is made in: `optimised` (the defaults), `off` (every feature
//! switched off), one `without:<feature>` per feature, the reference's eager compaction, the
//! `batched` schedule, the fixed cache lifetimes and keep-warm on the provider's default
//! lifetime. Each is only environment variables a user could set, resolved the way `chatcli`
//! resolves its own (`variant_config`), so any row can be reproduced by hand; the thing a
//! newcomer would get wrong is to configure a row any other way (a test checks that `off`
//! differs from `optimised` only by the documented switches).

use super::{BenchError, ProviderModel};
use crate::config::{Config, Overrides};
use crate::env::Env;

/// An optimisation the benchmark can switch off, with the variable a user sets to do the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Feature {
    /// The name in `without:<name>` rows.
    pub name: &'static str,
    pub var: &'static str,
    /// The value that turns it off.
    pub off: &'static str,
}

/// Every optimisation, with its off switch.
pub const FEATURES: [Feature; 8] = [
    Feature {
        name: "cache",
        var: "CHATCLI_PROMPT_CACHE",
        off: "off",
    },
    Feature {
        name: "microcompact",
        var: "CHATCLI_MICROCOMPACT",
        off: "off",
    },
    Feature {
        name: "early_exit",
        var: "CHATCLI_AGENT_EARLY_EXIT",
        off: "off",
    },
    Feature {
        name: "routing",
        var: "CHATCLI_AGENT_SMART_ROUTE",
        off: "off",
    },
    Feature {
        name: "autosave",
        var: "CHATCLI_WEBFETCH_AUTOSAVE_BYTES",
        off: "off",
    },
    Feature {
        name: "memory_index",
        var: "CHATCLI_MEMORY_MODE",
        off: "full",
    },
    Feature {
        name: "parallel",
        var: "CHATCLI_AGENT_PARALLEL_MODE",
        off: "false",
    },
    Feature {
        name: "keepwarm",
        var: "CHATCLI_CACHE_KEEPWARM",
        off: "off",
    },
];

/// One configuration of a run: its name in reports and the variables that make it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variant {
    pub mode: String,
    pub env: Vec<(&'static str, &'static str)>,
    /// The one family it means something on (the fixed cache lifetimes), else every family.
    pub family: Option<ProviderModel>,
}

/// The fixed cache lifetimes, each a row on its family: (mode, `CHATCLI_PROMPT_CACHE_TTL`,
/// family). `optimised` is the pause-aware `auto`.
pub const LIFETIMES: [(&str, &str, ProviderModel); 4] = [
    ("ttl:5m", "5m", ProviderModel::Anthropic),
    ("ttl:1h", "1h", ProviderModel::Anthropic),
    ("ttl:in_memory", "in_memory", ProviderModel::OpenAi),
    ("ttl:24h", "24h", ProviderModel::OpenAi),
];

/// The lifetime row that is the provider's own default on family `pm` (`openai`, or
/// `openai:MODEL` when priced as another model).
pub fn default_lifetime(pm: &str) -> &'static str {
    if pm == "openai" || pm.starts_with("openai:") {
        "ttl:in_memory"
    } else {
        "ttl:5m"
    }
}

/// The reference system's eager microcompact, kept as one extra row.
pub const REFERENCE_EAGER: &str = "reference:eager_compaction";
/// The `batched` schedule (the default before `consumed`), kept as one extra row.
pub const SCHEDULE_BATCHED: &str = "schedule:batched";

/// Every configuration, in report order: `optimised` (the defaults), `off` (every switch off),
/// one `without:<feature>` per feature, the reference's eager compaction, the `batched`
/// schedule and the fixed cache lifetimes.
pub fn variants() -> Vec<Variant> {
    let every = |mode: String, env: Vec<(&'static str, &'static str)>| Variant {
        mode,
        env,
        family: None,
    };
    let mut out = vec![
        every("optimised".into(), Vec::new()),
        every(
            "off".into(),
            FEATURES.iter().map(|f| (f.var, f.off)).collect(),
        ),
    ];
    for f in FEATURES {
        out.push(every(format!("without:{}", f.name), vec![(f.var, f.off)]));
    }
    out.push(every(
        REFERENCE_EAGER.into(),
        vec![("CHATCLI_MICROCOMPACT_SCHEDULE", "eager")],
    ));
    out.push(every(
        SCHEDULE_BATCHED.into(),
        vec![("CHATCLI_MICROCOMPACT_SCHEDULE", "batched")],
    ));
    // A fixed lifetime alone, as the peers run it: no keep-warm pings.
    for (mode, value, family) in LIFETIMES {
        out.push(Variant {
            mode: mode.into(),
            env: vec![
                ("CHATCLI_PROMPT_CACHE_TTL", value),
                ("CHATCLI_CACHE_KEEPWARM", "off"),
            ],
            family: Some(family),
        });
    }
    // The heartbeat some agents send: the provider's default lifetime, kept warm by pings.
    for (value, family) in [
        ("5m", ProviderModel::Anthropic),
        ("in_memory", ProviderModel::OpenAi),
    ] {
        out.push(Variant {
            mode: KEEPWARM.into(),
            env: vec![
                ("CHATCLI_PROMPT_CACHE_TTL", value),
                ("CHATCLI_CACHE_KEEPWARM", "on"),
            ],
            family: Some(family),
        });
    }
    out
}

/// The row of the provider's default lifetime kept warm by pings.
pub const KEEPWARM: &str = "keepwarm";

/// The configurations run on family `pm`.
pub fn variants_for(pm: ProviderModel) -> Vec<Variant> {
    variants()
        .into_iter()
        .filter(|v| v.family.is_none_or(|f| f == pm))
        .collect()
}

/// The configuration a variant resolves to, the way `chatcli` resolves its own environment.
pub fn variant_config(
    variant: &Variant,
    home: &std::path::Path,
    workspace: &std::path::Path,
    web: &str,
) -> Result<Config, BenchError> {
    let mut env: Vec<(String, String)> = vec![
        ("CHATCLI_HOME".into(), home.display().to_string()),
        ("CHATCLI_SEARXNG_URL".into(), web.to_string()),
    ];
    env.extend(
        variant
            .env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    let overrides = Overrides {
        cwd: Some(workspace.to_path_buf()),
        ..Overrides::default()
    };
    Config::resolve(&overrides, Env::from_pairs(env)).map_err(|source| BenchError::Config {
        mode: variant.mode.clone(),
        source,
    })
}
