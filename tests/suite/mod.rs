//! The integration suites, one module per capability; see each file's own paragraph.

mod agent_channels;
mod agent_loop;
mod bench;
mod cost;
mod exec_cli;
mod fuzz;
mod local_servers;
mod memory;
mod peers;
mod prompt_cache;
mod prompt_size;
mod provider_fixtures;
mod provider_wire;
mod reliability;
mod screen;
mod tools;
mod trust_agent;
mod trust_screen;
