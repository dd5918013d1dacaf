#!/usr/bin/env bash
# chatcli's own time between a response's end and the next request's start, seen from the
# server (scripts/mock_sse.py with MOCK_GAPS), over one `chatcli exec` session of N requests on
# the Anthropic wire: the model reads a different 2 KB file each request, then answers.
# Usage: scripts/session_overhead.sh [path/to/chatcli] [requests]   (default debug build, 200:
# CHATCLI_AGENT_MAX_TURNS is clamped to 200, so one prompt makes at most 200 requests)
# Prints the median gap over requests 41-60 and over the last 20, with the body sizes there.
set -euo pipefail
bin=$(realpath "${1:-target/debug/chatcli}")
requests=${2:-200}
here=$(dirname "$(realpath "$0")")
port=$((20000 + RANDOM % 20000))
work=$(mktemp -d)
MOCK_GAPS="$work/gaps.txt" python3 "$here/mock_sse.py" "$port" "$requests" &
mock=$!
trap 'kill "$mock" 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/home" "$work/ws"
for n in $(seq 0 "$requests"); do
  for l in $(seq 1 40); do echo "line $l of notes $n: fn parse_$n(input: &str) -> Node { todo }"; done >"$work/ws/notes$n.txt"
done
sleep 0.5
(cd "$work/ws" && env -i PATH="$PATH" HOME="$work" CHATCLI_HOME="$work/home" ANTHROPIC_API_KEY=test-key \
  CHATCLI_AGENT_MAX_TURNS=$((requests + 10)) \
  ${PERF:-} "$bin" exec --json --mode run --provider anthropic --base-url "http://127.0.0.1:$port" \
  "read the notes files one by one" >"$work/out.jsonl" 2>"$work/err.txt") || { tail -5 "$work/err.txt"; exit 1; }
python3 - "$work/gaps.txt" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
def show(label, part):
    gaps = [float(r[1]) for r in part]
    print(f"{label}: median {statistics.median(gaps):.2f} ms (min {min(gaps):.2f}, max {max(gaps):.2f}), body {int(part[-1][2]) // 1024} KB")
show("requests 41-60", rows[40:60])
show(f"requests {len(rows) - 19}-{len(rows)}", rows[-20:])
PY
