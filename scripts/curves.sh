#!/usr/bin/env bash
# The curves of issue 41: what one tool call (or one resume) costs as the work grows x1/x10/x100,
# measured on a whole `chatcli exec` process against scripts/mock_sse.py (OpenAI Chat wire),
# which asks for exactly that call and then answers. Each row: wall time and peak RSS from
# /usr/bin/time -v (start-up included: ~20 MB and a few tens of ms on the release build).
# Usage: scripts/curves.sh [path/to/chatcli] [axis ...]
#   axes: repo file line output session (default: all); default binary target/release/chatcli.
# Needs python3 and /usr/bin/time; writes up to ~1.5 GB under a temporary folder, removed after.
set -euo pipefail
bin=$(realpath "${1:-target/release/chatcli}")
shift || true
axes=${*:-repo file line output session}
here=$(dirname "$(realpath "$0")")
work=$(mktemp -d "${TMPDIR:-/tmp}/curves.XXXXXX")
mock=
cleanup() { [ -n "$mock" ] && kill "$mock" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

# measure LABEL WORKSPACE CALLS TOOL ARGS_JSON [exec flags...]: one session of CALLS calls of TOOL.
measure() {
  local label=$1 ws=$2 calls=$3 tool=$4 args=$5
  shift 5
  local port=$((20000 + RANDOM % 20000))
  python3 "$here/mock_sse.py" "$port" "$calls" "$tool" "$args" &
  mock=$!
  for _ in $(seq 1 50); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.1
  done
  (cd "$ws" && env -i PATH="$PATH" HOME="$work" CHATCLI_HOME="$work/home" OPENAI_API_KEY=test-key \
    /usr/bin/time -v "$bin" exec --json --mode run --yes --provider openai \
    --base-url "http://127.0.0.1:$port/v1" "$@" "go" >"$work/out.jsonl" 2>"$work/time.txt") || {
    head -5 "$work/time.txt"; exit 1; }
  kill "$mock" 2>/dev/null || true
  wait "$mock" 2>/dev/null || true
  mock=
  local wall rss calls_done
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$work/time.txt")
  rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.1f MB", $2 / 1024}' "$work/time.txt")
  calls_done=$(grep -c '"type":"tool_result".*"ok":true' "$work/out.jsonl" || true)
  requests=$(grep -c '"type":"turn_started"' "$work/out.jsonl" || true)
  echo "| $label | $wall | $rss | $requests / $calls_done |"
}

header() { echo; echo "| $1 | wall | peak RSS | requests / tool results ok |"; echo "|---|---|---|---|"; }

# A workspace of N files in folders of 100, one of them holding NEEDLE_ZZ.
repo() {
  local n=$1 dir=$work/repo$1
  python3 - "$dir" "$n" <<'EOF'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    folder = os.path.join(root, f"d{i // 100}")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"f{i}.rs"), "w") as f:
        f.write(f"fn f{i}() {{ let x = {i}; }}\n" + ("NEEDLE_ZZ\n" if i == n - 1 else ""))
EOF
  echo "$dir"
}

# A file of N MB in lines of 64 bytes (or one line), NEEDLE_ZZ at its end.
text_file() {
  local path=$1 mb=$2 one_line=$3
  python3 - "$path" "$mb" "$one_line" <<'EOF'
import sys
path, mb, one_line = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
unit = "var a=1;function b(){return a+2};" if one_line else "a line of text in a large file, 64 bytes long, of no interest.\n"
chunk = unit * (1024 * 1024 // len(unit))
with open(path, "w") as f:
    for _ in range(mb):
        f.write(chunk)
    f.write("NEEDLE_ZZ\n")
EOF
}

mkdir -p "$work/home" "$work/ws"
for axis in $axes; do
  case $axis in
  repo)
    header "repository: files"
    for n in 1000 10000 100000; do
      dir=$(repo "$n")
      measure "search_files, $n files" "$dir" 1 search_files '{"term":"NEEDLE_ZZ"}'
      measure "list_directory depth 10, $n files" "$dir" 1 list_directory '{"max_depth":10}'
      rm -rf "$dir"
    done ;;
  file)
    header "file size (64-byte lines)"
    for mb in 1 10 100; do
      text_file "$work/ws/big.txt" "$mb" 0
      measure "read_file head, $mb MB" "$work/ws" 1 read_file '{"file":"big.txt"}'
      measure "read_file tail=5, $mb MB" "$work/ws" 1 read_file '{"file":"big.txt","tail":5}'
      measure "search_files, $mb MB" "$work/ws" 1 search_files '{"term":"NEEDLE_ZZ"}'
    done
    rm -f "$work/ws/big.txt" ;;
  line)
    header "line size (one line)"
    for mb in 2 20 200; do
      text_file "$work/ws/min.js" "$mb" 1
      measure "search_files, one $mb MB line" "$work/ws" 1 search_files '{"term":"NEEDLE_ZZ"}'
      measure "read_file, one $mb MB line" "$work/ws" 1 read_file '{"file":"min.js"}'
    done
    rm -f "$work/ws/min.js"
    python3 -c "open('$work/ws/wide.txt','w').write('0123456789' * 5000 + '\n')"
    measure "read_file, a 50,000-character line" "$work/ws" 1 read_file '{"file":"wide.txt"}'
    rm -f "$work/ws/wide.txt" ;;
  output)
    header "command output"
    for mb in 10 100 1000; do
      measure "run_command, $mb MB of output" "$work/ws" 1 run_command \
        "{\"cmd\":\"yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c ${mb}000000\",\"timeout\":600}"
      rm -rf "$work/home/sessions"
    done ;;
  session)
    header "session length: resume, then one request"
    for n in 5 50 500; do
      for i in $(seq 0 $((n - 1))); do echo "hello from notes $i" >"$work/ws/notes$i.txt"; done
      rm -rf "$work/home/sessions"
      # A session of n read_file calls of notes<i>.txt (the mock's default: each call differs, so
      # the stagnation guard lets them run), n + 1 requests; then its resume, measured.
      # At most 200 requests a prompt (--max-turns): a longer session takes several prompts.
      measure "the session's first prompt" "$work/ws" "$n" "" "" --max-turns 200
      for _ in $(seq 200 200 $((n - 1))); do
        measure "the session, resumed" "$work/ws" "$n" "" "" --max-turns 200 --resume latest
      done
      measure "resume of $((n + 1)) requests, one more request" "$work/ws" "$n" "" "" --resume latest
    done ;;
  *) echo "unknown axis $axis" >&2; exit 2 ;;
  esac
done
