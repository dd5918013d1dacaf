mod agent_channels;
mod exec_cli;
mod screen;
