#!/usr/bin/env python3
"""A local mock LLM server for whole-process measurements of `chatcli exec`.

Answers POST /v1/chat/completions (OpenAI Chat Completions) and POST /v1/messages (Anthropic
Messages) with server-sent events, reporting usage as the real services do. Each answer is a
`read_file` call until the request carries TOOL_CALLS tool results, then a short text answer, so a
session makes TOOL_CALLS + 1 requests. Stateless: the count comes from the request body.

Usage: scripts/mock_sse.py PORT [TOOL_CALLS [TOOL ARGS_JSON]]
  (default 5 `read_file` calls of notes<n>.txt: a 6-request session; with TOOL and ARGS_JSON,
  every call is that tool with those arguments, on the OpenAI Chat wire: scripts/curves.sh)
With MOCK_GAPS=FILE, each request appends a line to FILE: its number, the milliseconds since the
previous response was written (chatcli's own time between a response's end and the next
request's start, seen from the server) and the request body's bytes.
"""
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOOL_CALLS = int(sys.argv[2]) if len(sys.argv) > 2 else 5
TOOL = sys.argv[3] if len(sys.argv) > 3 else None
TOOL_ARGS = sys.argv[4] if len(sys.argv) > 4 else None
ANSWER = "The file says hello. " * 20


def sse(events):
    out = []
    for name, data in events:
        if name:
            out.append(f"event: {name}\n")
        out.append("data: " + (data if isinstance(data, str) else json.dumps(data)) + "\n\n")
    return "".join(out).encode()


def openai(body):
    done = sum(1 for m in body.get("messages", []) if m.get("role") == "tool")
    chunk = lambda delta, finish=None: {
        "id": "c", "object": "chat.completion.chunk", "model": body.get("model", "m"),
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    events = [(None, chunk({"role": "assistant", "content": ""}))]
    if done < TOOL_CALLS:
        events.append((None, chunk({"tool_calls": [{
            "index": 0, "id": f"call_{done}", "type": "function",
            "function": {"name": TOOL or "read_file",
                         "arguments": TOOL_ARGS or json.dumps({"file": f"notes{done}.txt"})},
        }]})))
        events.append((None, chunk({}, "tool_calls")))
    else:
        for word in ANSWER.split(" "):
            events.append((None, chunk({"content": word + " "})))
        events.append((None, chunk({}, "stop")))
    events.append((None, {"id": "c", "object": "chat.completion.chunk", "choices": [],
                          "usage": {"prompt_tokens": 1500 + 100 * done, "completion_tokens": 40,
                                    "prompt_tokens_details": {"cached_tokens": 0}}}))
    events.append((None, "[DONE]"))
    return sse(events)


def anthropic(body):
    done = sum(1 for m in body.get("messages", []) if isinstance(m.get("content"), list)
               for b in m["content"] if b.get("type") == "tool_result")
    events = [("message_start", {"type": "message_start", "message": {
        "id": "m", "type": "message", "role": "assistant", "model": body.get("model", "m"),
        "content": [], "usage": {"input_tokens": 1500 + 100 * done, "output_tokens": 1,
                                 "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}}})]
    if done < TOOL_CALLS:
        events += [
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {
                "type": "tool_use", "id": f"toolu_{done}", "name": "read_file", "input": {}}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
                "type": "input_json_delta", "partial_json": json.dumps({"file": f"notes{done}.txt"})}}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ]
        stop = "tool_use"
    else:
        events.append(("content_block_start", {"type": "content_block_start", "index": 0,
                                               "content_block": {"type": "text", "text": ""}}))
        for word in ANSWER.split(" "):
            events.append(("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                   "delta": {"type": "text_delta", "text": word + " "}}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
        stop = "end_turn"
    events += [
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop},
                           "usage": {"output_tokens": 40}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return sse(events)


GAPS = os.environ.get("MOCK_GAPS")
LAST_END = [None, 0]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes: with Nagle's algorithm the body waits for the
    # client's delayed ACK (~40 ms), which would be counted as chatcli's time.
    disable_nagle_algorithm = True

    def do_POST(self):
        start = time.monotonic()
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if GAPS and LAST_END[0] is not None:
            LAST_END[1] += 1
            with open(GAPS, "a") as out:
                out.write(f"{LAST_END[1]} {(start - LAST_END[0]) * 1000:.3f} {len(raw)}\n")
        body = json.loads(raw or b"{}")
        if self.path.endswith("/chat/completions"):
            payload = openai(body)
        elif self.path.endswith("/messages"):
            payload = anthropic(body)
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()
        LAST_END[0] = time.monotonic()

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
