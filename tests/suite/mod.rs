//! The integration suites, one module per capability; see each file's own paragraph.

mod agent_channels;
mod agent_loop;
mod bench;
mod containment;
mod cost;
mod daily_driver;
mod exec_cli;
mod fuzz;
mod mcp;
mod memory;
mod output;
mod peers;
mod project_context;
mod prompt_cache;
mod prompt_size;
mod provider_fixtures;
mod provider_wire;
mod reliability;
mod safekeeping;
mod sandbox;
mod screen;
mod skills;
mod tools;
mod trust_agent;
mod trust_screen;
mod web_search;
