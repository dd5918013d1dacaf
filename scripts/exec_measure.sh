#!/usr/bin/env bash
# Whole-process figures of one `chatcli exec` session (6 requests: 5 read_file calls, then an
# answer) against scripts/mock_sse.py on the OpenAI Chat Completions and the Anthropic wires.
# Usage: scripts/exec_measure.sh [path/to/chatcli] [runs]   (default target/debug/chatcli, 3 runs)
# Prints, per wire and run, the wall time and the peak resident memory from /usr/bin/time -v,
# then (a second run under scripts/rss_split.py) the peaks of anonymous and file-backed memory.
set -euo pipefail
bin=$(realpath "${1:-target/debug/chatcli}")
runs=${2:-3}
here=$(dirname "$(realpath "$0")")
port=$((20000 + RANDOM % 20000))
work=$(mktemp -d)
python3 "$here/mock_sse.py" "$port" 5 &
mock=$!
trap 'kill "$mock" 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/home" "$work/ws"
for n in 0 1 2 3 4; do echo "hello from notes $n" > "$work/ws/notes$n.txt"; done
sleep 0.5
run() { # wire, provider, base url, key variable
  for i in $(seq 1 "$runs"); do
    (cd "$work/ws" && env -i PATH="$PATH" HOME="$work" CHATCLI_HOME="$work/home" "$4=test-key" \
      /usr/bin/time -v "$bin" exec --json --mode run --provider "$2" --base-url "$3" \
      "read the five notes files" >"$work/out.jsonl" 2>"$work/time.txt") || {
        cat "$work/time.txt"; exit 1; }
    requests=$(grep -c '"type":"turn_started"' "$work/out.jsonl" || true)
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$work/time.txt")
    rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.1f MB", $2 / 1024}' "$work/time.txt")
    split=$(cd "$work/ws" && env -i PATH="$PATH" HOME="$work" CHATCLI_HOME="$work/home" "$4=test-key" \
      python3 "$here/rss_split.py" "$bin" exec --json --mode run --provider "$2" --base-url "$3" \
      "read the five notes files")
    echo "$1 run $i: $requests requests, wall $wall, max RSS $rss ($split)"
  done
}
run openai-chat openai "http://127.0.0.1:$port/v1" OPENAI_API_KEY
run anthropic anthropic "http://127.0.0.1:$port" ANTHROPIC_API_KEY
