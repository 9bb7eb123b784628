#!/usr/bin/env python3
# fake-llm.py - a real HTTP server on 127.0.0.1 that plays the LLM for
# quorum's tests. It speaks the OpenAI chat completions API (any path
# not ending in /messages) and the Anthropic messages API (/messages).
#
# usage: fake-llm.py --script FILE --port-file FILE --record DIR
#                    [--timeout SECONDS]
#
# The port (chosen by the OS) is written to --port-file once listening.
# Every request body is written to DIR/NNNN-MODEL.json (NNNN counts up
# from 0001), its path and headers to DIR/NNNN-MODEL.hdr, and the usage
# a well-formed answer reported to DIR/NNNN-MODEL.usage ("IN OUT", written
# as the answer goes out: a provider bills what it generated even when the
# client is gone, so these files are what was really spent). The server
# exits by itself after --timeout seconds (default 60).
#
# The script is JSON: {"models": {"MODEL": [RULE, ...]}, "default": [...]}.
# For a request, the first RULE of its model whose "when" substring (if
# any) occurs in the request body and whose "times" (if any) is not used
# up answers it. A RULE may hold:
#   "answer": a string, or any JSON value (sent as its JSON text), as the
#             model's text
#   "usage": {"in": N, "out": M} token counts to report (default 100/20)
#   "delay": seconds to wait before answering
#   "status": HTTP status (e.g. 429, 500); "retry_after": header value
#   "body": a raw response body instead of a well-formed answer
#   "truncate": true: declare a longer Content-Length, send half, close
#   "drip": seconds between 16-byte chunks of the body
#   "reset": true: close the connection with a TCP reset, no answer
#   "pad": N: append N spaces to the body (an oversized answer)
#   "cut": true: say the model stopped at max_tokens
# "usage" may say "in": "auto" (a quarter of the characters of the
# request's texts, plus 10 for the chat template) and "out": "auto" (a
# quarter of the answer's). Like a real provider, the server never
# generates (nor bills) more than the request's max_tokens: past it the
# answer is cut there and says so.
#
# Token counting, free like the providers': POST .../messages/count_tokens
# (Anthropic: {"input_tokens": N}) and POST /tokenize (llama.cpp's
# {"content": TEXT} -> {"tokens": [...]}, vLLM's {"model", "prompt"} ->
# {"count": N, "tokens": [...]}) answer only when the script has a
# "count_tokens" or "tokenize" RULE (else 404, as a server without them);
# N is a quarter of the characters of the texts, times the RULE's "scale"
# (default 1); "status", "body" and "delay" work as above. They are
# recorded as DIR.tok/NNNN.req (path, then body), apart from the model
# requests.
import argparse
import json
import os
import socket
import socketserver
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler

LOCK = threading.Lock()
STATE = {"n": 0, "tok": 0, "used": {}}


def texts_of(req):
    """The texts a request would make the model read."""
    out = []
    if not isinstance(req, dict):
        return out
    for k in ("system", "content", "prompt"):
        if isinstance(req.get(k), str):
            out.append(req[k])
    for m in req.get("messages") or []:
        if isinstance(m, dict) and isinstance(m.get("content"), str):
            out.append(m["content"])
    return out


def quarter(n):
    return (n + 3) // 4


def pick_rule(script, model, body):
    rules = script.get("models", {}).get(model)
    if rules is None:
        rules = script.get("default", [])
    for i, rule in enumerate(rules):
        when = rule.get("when")
        if when is not None and when not in body:
            continue
        key = (model, i)
        times = rule.get("times")
        with LOCK:
            used = STATE["used"].get(key, 0)
            if times is not None and used >= times:
                continue
            STATE["used"][key] = used + 1
        return rule
    return {"status": 404, "body": '{"error":"no rule for this model"}'}


def rule_usage(rule, req, text):
    """The tokens (in, out) the answer reports, and whether it is cut."""
    u = rule.get("usage", {"in": 100, "out": 20})
    tin, tout = u.get("in", 100), u.get("out", 20)
    if tin == "auto":
        tin = quarter(sum(len(t) for t in texts_of(req))) + 10
    if tout == "auto":
        tout = quarter(len(text))
    cut = False
    mt = req.get("max_tokens") if isinstance(req, dict) else None
    if isinstance(mt, int) and mt > 0 and tout > mt:
        tout, cut = mt, True
    return int(tin), int(tout), cut


def answer_body(anthropic, model, rule, req):
    cut = bool(rule.get("cut"))
    text = rule.get("answer", '{"findings": []}')
    if not isinstance(text, str):
        text = json.dumps(text)
    tin, tout, clamped = rule_usage(rule, req, text)
    if clamped:
        cut = True
        text = text[: tout * 4]
    usage = {"in": tin, "out": tout}
    if anthropic:
        return json.dumps({
            "id": "msg_fake", "type": "message", "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": text}],
            "stop_reason": "max_tokens" if cut else "end_turn",
            "usage": {"input_tokens": usage["in"],
                      "output_tokens": usage["out"]},
        })
    return json.dumps({
        "id": "chatcmpl-fake", "object": "chat.completion", "model": model,
        "choices": [{"index": 0,
                     "finish_reason": "length" if cut else "stop",
                     "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": usage["in"],
                  "completion_tokens": usage["out"],
                  "total_tokens": usage["in"] + usage["out"]},
    })


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def count_tokens(self, kind, raw, req):
        with LOCK:
            STATE["tok"] += 1
            n = STATE["tok"]
        with open(os.path.join(self.server.record + ".tok",
                               "%04d.req" % n), "wb") as f:
            f.write(("POST %s\n" % self.path).encode())
            f.write(raw)
        rule = self.server.script.get(kind)
        if rule is None:
            status, out = 404, '{"error": "not found"}'
        else:
            if rule.get("delay"):
                time.sleep(float(rule["delay"]))
            status = int(rule.get("status", 200))
            # llama.cpp reads content, vLLM prompt: the same text.
            if isinstance(req.get("content"), str):
                texts = [req["content"]]
            elif isinstance(req.get("prompt"), str):
                texts = [req["prompt"]]
            else:
                texts = texts_of(req)
            count = int(quarter(sum(len(t) for t in texts)) *
                        float(rule.get("scale", 1)))
            if "body" in rule:
                out = rule["body"]
            elif status != 200:
                out = json.dumps({"error": "fake error %d" % status})
            elif kind == "count_tokens":
                out = json.dumps({"input_tokens": count})
            elif "prompt" in req:
                out = json.dumps({"count": count,
                                  "tokens": list(range(count))})
            else:
                out = json.dumps({"tokens": list(range(count))})
        data = out.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length) if length > 0 else b""
        body = raw.decode("utf-8", "replace")
        try:
            req = json.loads(body)
        except ValueError:
            req = None
        try:
            model = str(req.get("model", "unknown"))
        except AttributeError:
            model = "unknown"
        path = self.path.rstrip("/")
        if path.endswith("/count_tokens"):
            return self.count_tokens("count_tokens", raw, req or {})
        if path.endswith("/tokenize"):
            return self.count_tokens("tokenize", raw, req or {})
        safe = "".join(c if c.isalnum() or c in "-_." else "_"
                       for c in model)[:64]
        with LOCK:
            STATE["n"] += 1
            n = STATE["n"]
        base = os.path.join(self.server.record, "%04d-%s" % (n, safe))
        with open(base + ".json", "wb") as f:
            f.write(raw)
        with open(base + ".hdr", "w") as f:
            f.write("POST %s\n" % self.path)
            for k, v in self.headers.items():
                f.write("%s: %s\n" % (k, v))
        rule = pick_rule(self.server.script, model, body)
        anthropic = self.path.rstrip("/").endswith("/messages")
        if rule.get("delay"):
            time.sleep(float(rule["delay"]))
        if rule.get("reset"):
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
            return
        status = int(rule.get("status", 200))
        if "body" in rule:
            out = rule["body"]
        elif status != 200:
            out = json.dumps({"error": {"message": "fake error %d" % status}})
        else:
            out = answer_body(anthropic, model, rule, req)
        data = out.encode("utf-8") + b" " * int(rule.get("pad", 0))
        usage = None
        if status == 200 and "body" not in rule and not rule.get("truncate"):
            text = rule.get("answer", '{"findings": []}')
            if not isinstance(text, str):
                text = json.dumps(text)
            tin, tout, _ = rule_usage(rule, req, text)
            usage = "%d %d\n" % (tin, tout)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        if "retry_after" in rule:
            self.send_header("Retry-After", str(rule["retry_after"]))
        if rule.get("truncate"):
            self.send_header("Content-Length", str(len(data) * 2 + 10))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.send_header("Content-Length", str(len(data)))
        if usage is not None:
            with open(base + ".usage", "w") as f:
                f.write(usage)
        self.end_headers()
        if rule.get("drip"):
            for i in range(0, len(data), 16):
                self.wfile.write(data[i:i + 16])
                self.wfile.flush()
                time.sleep(float(rule["drip"]))
        else:
            self.wfile.write(data)


class Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        # A client that gave up (timeout, deadline, size cap) is expected.
        pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--script", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--record", required=True)
    ap.add_argument("--timeout", type=float, default=60.0)
    a = ap.parse_args()
    with open(a.script) as f:
        script = json.load(f)
    os.makedirs(a.record, exist_ok=True)
    os.makedirs(a.record + ".tok", exist_ok=True)
    srv = Server(("127.0.0.1", 0), Handler)
    srv.script = script
    srv.record = a.record
    # Never outlive a test: exit after the timeout whatever happens.
    t = threading.Timer(a.timeout, lambda: os._exit(0))
    t.daemon = True
    t.start()
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, a.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    sys.exit(0)


if __name__ == "__main__":
    main()
