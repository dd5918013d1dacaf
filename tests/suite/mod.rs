mod agent_channels;
mod exec_cli;
mod provider_fixtures;
mod provider_wire;
mod screen;
