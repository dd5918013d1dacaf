mod agent_channels;
mod agent_loop;
mod exec_cli;
mod provider_fixtures;
mod provider_wire;
mod screen;
