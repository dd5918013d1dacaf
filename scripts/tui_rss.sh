#!/usr/bin/env bash
# Resident memory of the TUI at idle, before and after one demo prompt.
# Usage: scripts/tui_rss.sh [path/to/chatcli] [prompt]
# (default: target/debug/chatcli, "read notes.txt": a demo turn with one tool call)
# Runs the binary in a detached 120x40 tmux session with a throwaway CHATCLI_HOME and workspace,
# waits for the welcome screen, reads VmRSS, sends one prompt, waits for the turn to finish and the
# process to settle, then reads VmRSS and VmHWM again.
set -euo pipefail
bin=$(realpath "${1:-target/debug/chatcli}")
work=$(mktemp -d)
trap 'tmux kill-session -t "$session" 2>/dev/null || true; [ -n "${KEEP:-}" ] && cp -r "$work/home" "$KEEP"; rm -rf "$work"' EXIT
session="rss$$"
prompt=${2:-read notes.txt}
mkdir -p "$work/home" "$work/ws"
printf 'one\ntwo\n' > "$work/ws/notes.txt"
tmux new-session -d -s "$session" -x 120 -y 40 -c "$work/ws" \
  "env -i PATH=$PATH TERM=xterm-256color HOME=$work CHATCLI_HOME=$work/home CHATCLI_PROVIDER=demo $bin"
pid=$(tmux display -p -t "$session" '#{pane_pid}')
rss() { awk -v k="$1" '$1 == k":" {print $2 / 1024 " MB"}' "/proc/$pid/status"; }
for _ in $(seq 1 300); do
  tmux capture-pane -p -t "$session" | grep -q "Welcome to chatcli" && break
  sleep 0.1
done
sleep 1
echo "idle before the first prompt: $(rss VmRSS) (anonymous $(rss RssAnon))"
tmux send-keys -t "$session" "$prompt" Enter
for _ in $(seq 1 300); do
  sleep 0.2
  # the demo's answers end with the cost line on the meter; wait until the screen stops changing
  a=$(tmux capture-pane -p -t "$session"); sleep 0.5; b=$(tmux capture-pane -p -t "$session")
  [ "$a" = "$b" ] && echo "$b" | grep -qF "$prompt" && break
done
sleep 2
echo "idle after one demo prompt: $(rss VmRSS) (anonymous $(rss RssAnon), peak $(rss VmHWM))"
