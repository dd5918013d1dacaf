mod agent_channels;
mod agent_loop;
mod exec_cli;
mod peers;
mod provider_fixtures;
mod provider_wire;
mod screen;
