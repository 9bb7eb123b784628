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
#
# Tool calls. A RULE may answer with "tool_calls": [CALL, ...] instead of
# (or after) its "answer" text, each CALL {"name": N, "arguments": A}
# with an optional "id" (else one is made: call_... / toolu_...) and
# "repeat": K (the call K times, each with its own id); A is any JSON
# value, or a string sent as it is (OpenAI carries arguments as a JSON
# string: a string that is not JSON tests a client's parser). They go
# out in the API's shape: OpenAI choices[0].message.tool_calls (type
# "function", function.name, function.arguments) with finish_reason
# "tool_calls"; Anthropic content blocks {"type": "tool_use", "id",
# "name", "input"} after any text, with stop_reason "tool_use". So that
# a test scripts a conversation, a RULE may also say:
#   "turn": N           only when the request holds N assistant messages
#                       (0: the first request of a conversation)
#   "tool_result": S    only when the last tool result in the request
#                       (OpenAI: the last "tool" message; Anthropic: the
#                       last tool_result block) holds the substring S
#
# Strictness. Like the real APIs, a request that breaks their rules is
# answered 400 with an error body of the API's own shape (OpenAI
# {"error": {"message", "type", "param", "code"}}, Anthropic {"type":
# "error", "error": {"type": "invalid_request_error", "message"}}),
# billed nothing, uses up no rule, and its message is written to
# DIR/NNNN-MODEL.err. OpenAI: messages is a non-empty list of known
# roles; system/developer messages come first, and the first other one
# is not an assistant's; tool_calls are well-formed and only in a
# request that declares tools; every tool call of an assistant message
# is answered by a "tool" message with its tool_call_id before any other
# message; a "tool" message answers a call of the assistant message
# before it, once. Anthropic: max_tokens is given; system is top-level
# only (a "system" role is refused); messages start with user and
# alternate; a tool_use is answered by tool_result blocks (its id, each
# one once, before any other block) in the very next user message, and
# a tool_result answers a tool_use of the message before it; tool_use
# ids are unique; tool_use or tool_result needs declared tools; at most
# 4 cache_control breakpoints, of type "ephemeral". Both: declared tools
# are well-formed, with names of 1-64 of [a-zA-Z0-9_-].
#
# Prompt caching, as the real APIs bill it (the cache lives as long as
# the server, per model). Tokens of a prefix are a quarter of its
# characters, as "auto" counts them. Anthropic: the blocks of a request,
# in order tools, system, messages, may carry cache_control breakpoints;
# the longest prefix ending at a block boundary (at a breakpoint or up
# to 20 blocks before one) that an earlier request wrote is read
# (cache_read_input_tokens), the rest up to the last breakpoint is
# written (cache_creation_input_tokens), and input_tokens is what
# follows; a prefix under the script's "cache_min_tokens" (default
# 1024) is not cached. OpenAI: the longest prefix shared with an earlier
# request of the same model, when it is at least 1024 tokens, is
# reported as usage.prompt_tokens_details.cached_tokens, in steps of
# 128 tokens. A RULE's "usage" "in" is the request's whole input;
# cached tokens are part of it. The .usage file then reads "IN OUT READ
# WRITE": all input tokens, output tokens, of the input those read from
# the cache and those written to it (0 0 without caching).
import argparse
import hashlib
import json
import os
import re
import socket
import socketserver
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler

LOCK = threading.Lock()
STATE = {"n": 0, "tok": 0, "used": {}, "calls": 0,
         "anthropic_cache": set(), "openai_seen": {}}
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def block_texts(b):
    """The texts of a content block (or of a plain string)."""
    if isinstance(b, str):
        return [b]
    if not isinstance(b, dict):
        return []
    t = b.get("type")
    if t == "text" and isinstance(b.get("text"), str):
        return [b["text"]]
    if t == "tool_use":
        return [str(b.get("name", "")),
                json.dumps(b.get("input"), sort_keys=True)]
    if t == "tool_result":
        return content_texts(b.get("content"))
    return []


def content_texts(c):
    if isinstance(c, str):
        return [c]
    out = []
    if isinstance(c, list):
        for b in c:
            out.extend(block_texts(b))
    return out


def message_texts(m):
    """The texts of one message of either API."""
    if not isinstance(m, dict):
        return []
    out = content_texts(m.get("content"))
    for tc in m.get("tool_calls") or []:
        if isinstance(tc, dict) and isinstance(tc.get("function"), dict):
            f = tc["function"]
            out.append(str(f.get("name", "")))
            out.append(f.get("arguments") if isinstance(
                f.get("arguments"), str) else json.dumps(f.get("arguments")))
    return out


def tool_text(t):
    return json.dumps(t, sort_keys=True)


def texts_of(req):
    """The texts a request would make the model read."""
    out = []
    if not isinstance(req, dict):
        return out
    for t in req.get("tools") or []:
        out.append(tool_text(t))
    for k in ("system", "content", "prompt"):
        if isinstance(req.get(k), str):
            out.append(req[k])
    if isinstance(req.get("system"), list):
        out.extend(content_texts(req["system"]))
    for m in req.get("messages") or []:
        out.extend(message_texts(m))
    return out


def quarter(n):
    return (n + 3) // 4


def turn_of(req):
    """How many assistant messages the request holds."""
    msgs = req.get("messages") if isinstance(req, dict) else None
    return sum(1 for m in msgs or []
               if isinstance(m, dict) and m.get("role") == "assistant")


def last_tool_result(req):
    """The text of the last tool result in the request, or None."""
    msgs = req.get("messages") if isinstance(req, dict) else None
    for m in reversed(msgs or []):
        if not isinstance(m, dict):
            continue
        if m.get("role") == "tool":
            return "\n".join(content_texts(m.get("content")))
        if isinstance(m.get("content"), list):
            for b in reversed(m["content"]):
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    return "\n".join(content_texts(b.get("content")))
    return None


def pick_rule(script, model, body, req):
    rules = script.get("models", {}).get(model)
    if rules is None:
        rules = script.get("default", [])
    for i, rule in enumerate(rules):
        when = rule.get("when")
        if when is not None and when not in body:
            continue
        if "turn" in rule and rule["turn"] != turn_of(req):
            continue
        if "tool_result" in rule:
            last = last_tool_result(req)
            if last is None or rule["tool_result"] not in last:
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


def rule_text(rule):
    text = rule.get("answer", '{"findings": []}' if "tool_calls" not in rule
                    else "")
    if not isinstance(text, str):
        text = json.dumps(text)
    return text


def rule_calls(rule, anthropic):
    """The tool calls of a rule: [(id, name, arguments)]."""
    out = []
    for c in rule.get("tool_calls") or []:
        for _ in range(int(c.get("repeat", 1))):
            with LOCK:
                STATE["calls"] += 1
                k = STATE["calls"]
            cid = c.get("id") or ("toolu_fake%012d" % k if anthropic
                                  else "call_fake%012d" % k)
            out.append((cid, c.get("name", ""), c.get("arguments", {})))
    return out


def calls_text(calls):
    return "".join(name + (a if isinstance(a, str) else json.dumps(a))
                   for _, name, a in calls)


# ---- prompt caching -------------------------------------------------------

def anthropic_blocks(req):
    """The blocks of a request in cache order: (key, chars, breakpoint)."""
    out = []

    def add(role, b):
        if isinstance(b, dict):
            bare = {k: v for k, v in b.items() if k != "cache_control"}
            key = role + json.dumps(bare, sort_keys=True)
            chars = sum(len(t) for t in (block_texts(b) if role != "tool"
                                         else [tool_text(bare)]))
            out.append((key, chars, "cache_control" in b))
        elif isinstance(b, str):
            out.append((role + json.dumps(b), len(b), False))

    for t in req.get("tools") or []:
        add("tool", t)
    sysp = req.get("system")
    for b in (sysp if isinstance(sysp, list) else [sysp] if sysp else []):
        add("system", b)
    for m in req.get("messages") or []:
        if not isinstance(m, dict):
            continue
        c = m.get("content")
        for b in (c if isinstance(c, list) else [c]):
            add(str(m.get("role")), b)
    return out


def anthropic_cache(model, req, total, min_tokens):
    """(read, write) tokens of the request, and the cache written."""
    blocks = anthropic_blocks(req)
    bps = [i for i, b in enumerate(blocks) if b[2]]
    if not bps:
        return 0, 0
    hashes, cum, h, chars = [], [], hashlib.sha256(model.encode()), 0
    for key, n, _ in blocks:
        h = h.copy()
        h.update(key.encode("utf-8", "replace"))
        hashes.append(h.hexdigest())
        chars += n
        cum.append(quarter(chars))
    with LOCK:
        cache = STATE["anthropic_cache"]
        read_at = -1
        for b in bps:
            for j in range(b, max(-1, b - 20), -1):
                if hashes[j] in cache:
                    read_at = max(read_at, j)
                    break
        last = bps[-1]
        read = cum[read_at] if read_at >= 0 else 0
        write = 0
        if last > read_at and cum[last] >= min_tokens:
            write = cum[last] - read
        for b in bps:
            if cum[b] >= min_tokens:
                cache.add(hashes[b])
    read = min(read, total)
    return read, min(write, total - read)


def openai_serial(req):
    parts = ["tool:" + tool_text(t) for t in req.get("tools") or []]
    for m in req.get("messages") or []:
        if isinstance(m, dict):
            parts.append("%s:%s:%s" % (m.get("role"), m.get("tool_call_id", ""),
                                       "\x00".join(message_texts(m))))
    return "\x01".join(parts)


def common_prefix(a, b):
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def openai_cache(model, req, total):
    """The cached tokens of the request: its longest prefix seen before."""
    text = openai_serial(req)
    with LOCK:
        seen = STATE["openai_seen"].setdefault(model, [])
        best = max([common_prefix(text, t) for t in seen] or [0])
        seen.append(text)
    tok = quarter(best)
    if tok < 1024:
        return 0
    return min(1024 + (tok - 1024) // 128 * 128, total)


def make_usage(anthropic, model, rule, req, text, calls, script):
    """(in, out, cut, read, write): what the answer bills."""
    tin, tout, cut = rule_usage(rule, req, text + calls_text(calls))
    read = write = 0
    if isinstance(req, dict):
        if anthropic:
            read, write = anthropic_cache(
                model, req, tin, int(script.get("cache_min_tokens", 1024)))
        else:
            read = openai_cache(model, req, tin)
    return tin, tout, cut, read, write


def answer_body(anthropic, model, rule, req, text, calls, usage):
    tin, tout, clamped, read, write = usage
    cut = bool(rule.get("cut")) or clamped
    if clamped:
        text = text[: tout * 4]
    if anthropic:
        content = [{"type": "text", "text": text}] if text or not calls \
            else []
        for cid, name, args in calls:
            content.append({"type": "tool_use", "id": cid, "name": name,
                            "input": args})
        return json.dumps({
            "id": "msg_fake", "type": "message", "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": "max_tokens" if cut
            else "tool_use" if calls else "end_turn",
            "usage": {"input_tokens": tin - read - write,
                      "cache_creation_input_tokens": write,
                      "cache_read_input_tokens": read,
                      "output_tokens": tout},
        })
    message = {"role": "assistant",
               "content": text if text or not calls else None}
    if calls:
        message["tool_calls"] = [
            {"id": cid, "type": "function",
             "function": {"name": name,
                          "arguments": args if isinstance(args, str)
                          else json.dumps(args)}}
            for cid, name, args in calls]
    return json.dumps({
        "id": "chatcmpl-fake", "object": "chat.completion", "model": model,
        "choices": [{"index": 0,
                     "finish_reason": "length" if cut
                     else "tool_calls" if calls else "stop",
                     "message": message}],
        "usage": {"prompt_tokens": tin,
                  "completion_tokens": tout,
                  "total_tokens": tin + tout,
                  "prompt_tokens_details": {"cached_tokens": read}},
    })


# ---- strictness -----------------------------------------------------------

class Invalid(Exception):
    def __init__(self, message, param=None):
        Exception.__init__(self, message)
        self.message, self.param = message, param


def check_tools(req, anthropic):
    tools = req.get("tools")
    if tools is None:
        return
    if not isinstance(tools, list):
        raise Invalid("tools: Input should be a valid list", "tools")
    for i, t in enumerate(tools):
        where = "tools.%d" % i if anthropic else "tools[%d]" % i
        if not isinstance(t, dict):
            raise Invalid("%s: Input should be an object" % where, where)
        if anthropic:
            name, schema = t.get("name"), t.get("input_schema")
            if not isinstance(schema, dict) or \
                    schema.get("type") != "object":
                raise Invalid("%s.input_schema: Field required, an object "
                              "with type \"object\"" % where, where)
        else:
            f = t.get("function")
            if t.get("type") != "function" or not isinstance(f, dict):
                raise Invalid("Invalid '%s': expected an object with type "
                              "'function' and a 'function' object." % where,
                              where)
            name = f.get("name")
            if "parameters" in f and not isinstance(f["parameters"], dict):
                raise Invalid("Invalid '%s.function.parameters': expected "
                              "an object." % where, where)
            where += ".function"
        if not isinstance(name, str) or not TOOL_NAME.match(name):
            raise Invalid("Invalid '%s.name': string does not match pattern. "
                          "Expected a string that matches the pattern "
                          "'^[a-zA-Z0-9_-]{1,64}$'." % where,
                          where + ".name")


def check_openai(req):
    msgs = req.get("messages")
    if not isinstance(msgs, list):
        raise Invalid("'messages' is a required property", "messages")
    if not msgs:
        raise Invalid("Invalid 'messages': empty array. Expected an array "
                      "with minimum length 1, but got an empty array "
                      "instead.", "messages")
    check_tools(req, False)
    pending = None  # ids of the last assistant's calls not yet answered
    answered = set()
    seen_other = False
    for i, m in enumerate(msgs):
        where = "messages.[%d]" % i
        if not isinstance(m, dict):
            raise Invalid("Invalid type for '%s': expected an object." %
                          where, where)
        role = m.get("role")
        if role not in ("system", "developer", "user", "assistant", "tool"):
            raise Invalid("Invalid value: '%s'. Supported values are: "
                          "'system', 'developer', 'user', 'assistant' and "
                          "'tool'." % role, where + ".role")
        if role != "tool" and pending:
            raise Invalid("An assistant message with 'tool_calls' must be "
                          "followed by tool messages responding to each "
                          "'tool_call_id'. The following tool_call_ids did "
                          "not have response messages: %s" %
                          ", ".join(sorted(pending)), where + ".role")
        if role in ("system", "developer"):
            if seen_other:
                raise Invalid("Invalid '%s': %s messages must come first, "
                              "before any user, assistant or tool message." %
                              (where, role), where + ".role")
            continue
        if not seen_other and role == "assistant":
            raise Invalid("Invalid '%s': the first message after the system "
                          "messages must not be an assistant's." % where,
                          where + ".role")
        seen_other = True
        if role == "tool":
            tid = m.get("tool_call_id")
            if not isinstance(tid, str):
                raise Invalid("Missing required parameter: "
                              "'%s.tool_call_id'." % where,
                              where + ".tool_call_id")
            if pending is None or tid in answered or \
                    (tid not in pending):
                raise Invalid("Invalid parameter: messages with role 'tool' "
                              "must be a response to a preceeding message "
                              "with 'tool_calls'.", where + ".role")
            pending.discard(tid)
            answered.add(tid)
            if not isinstance(m.get("content"), (str, list)):
                raise Invalid("Invalid type for '%s.content': expected one "
                              "of a string or array of objects." % where,
                              where + ".content")
            continue
        pending, answered = None, set()
        calls = m.get("tool_calls") if role == "assistant" else None
        if calls is None:
            continue
        if "tools" not in req:
            raise Invalid("Invalid '%s.tool_calls': a request with tool calls "
                          "in its messages must declare 'tools'." % where,
                          where + ".tool_calls")
        if not isinstance(calls, list) or not calls:
            raise Invalid("Invalid '%s.tool_calls': empty array." % where,
                          where + ".tool_calls")
        pending = set()
        for k, c in enumerate(calls):
            cw = "%s.tool_calls.[%d]" % (where, k)
            f = c.get("function") if isinstance(c, dict) else None
            if not isinstance(c, dict) or not isinstance(c.get("id"), str) \
                    or c.get("type") != "function" or \
                    not isinstance(f, dict) or \
                    not isinstance(f.get("name"), str) or \
                    not isinstance(f.get("arguments"), str):
                raise Invalid("Invalid '%s': expected an object with a "
                              "string 'id', type 'function' and a "
                              "'function' with string 'name' and "
                              "'arguments'." % cw, cw)
            if c["id"] in pending:
                raise Invalid("Invalid '%s.id': duplicate tool call id "
                              "'%s'." % (cw, c["id"]), cw + ".id")
            pending.add(c["id"])
    if pending:
        raise Invalid("An assistant message with 'tool_calls' must be "
                      "followed by tool messages responding to each "
                      "'tool_call_id'. The following tool_call_ids did not "
                      "have response messages: %s" %
                      ", ".join(sorted(pending)), "messages")


def count_cache_control(req):
    n = 0
    blocks = list(req.get("tools") or [])
    if isinstance(req.get("system"), list):
        blocks += req["system"]
    for m in req.get("messages") or []:
        if isinstance(m, dict) and isinstance(m.get("content"), list):
            blocks += m["content"]
    for b in blocks:
        if isinstance(b, dict) and "cache_control" in b:
            cc = b["cache_control"]
            if not isinstance(cc, dict) or cc.get("type") != "ephemeral":
                raise Invalid("cache_control.type: Input should be "
                              "'ephemeral'")
            n += 1
    return n


def check_anthropic(req):
    if not isinstance(req.get("max_tokens"), int) or req["max_tokens"] < 1:
        raise Invalid("max_tokens: Field required")
    msgs = req.get("messages")
    if not isinstance(msgs, list):
        raise Invalid("messages: Field required")
    if not msgs:
        raise Invalid("messages: at least one message is required")
    sysp = req.get("system")
    if sysp is not None and not isinstance(sysp, (str, list)):
        raise Invalid("system: Input should be a valid string or a list of "
                      "text blocks")
    check_tools(req, True)
    n = count_cache_control(req)
    if n > 4:
        raise Invalid("A maximum of 4 blocks with cache_control may be "
                      "provided. Found %d." % n)
    uses_tools = False
    all_ids = set()
    prev_uses = []
    for i, m in enumerate(msgs):
        if not isinstance(m, dict):
            raise Invalid("messages.%d: Input should be an object" % i)
        role = m.get("role")
        if role == "system":
            raise Invalid("messages: Unexpected role \"system\". The "
                          "Messages API accepts a top-level `system` "
                          "parameter, not \"system\" as an input message "
                          "role.")
        if role not in ("user", "assistant"):
            raise Invalid("messages.%d.role: Input should be 'user' or "
                          "'assistant'" % i)
        if i == 0 and role != "user":
            raise Invalid("messages: first message must use the \"user\" "
                          "role")
        if i and msgs[i - 1].get("role") == role:
            raise Invalid("messages: roles must alternate between \"user\" "
                          "and \"assistant\", but found multiple \"%s\" "
                          "roles in a row" % role)
        c = m.get("content")
        if isinstance(c, str):
            blocks = []
        elif isinstance(c, list):
            blocks = c
        else:
            raise Invalid("messages.%d.content: Input should be a valid "
                          "string or list" % i)
        uses, results, other_seen = [], [], False
        for j, b in enumerate(blocks):
            where = "messages.%d.content.%d" % (i, j)
            t = b.get("type") if isinstance(b, dict) else None
            if t == "text":
                if not isinstance(b.get("text"), str):
                    raise Invalid("%s.text: Field required" % where)
                other_seen = True
            elif t == "tool_use":
                if role != "assistant":
                    raise Invalid("%s: `tool_use` blocks are only allowed "
                                  "in assistant messages" % where)
                if not isinstance(b.get("id"), str) or \
                        not isinstance(b.get("name"), str) or \
                        not isinstance(b.get("input"), dict):
                    raise Invalid("%s: a `tool_use` block needs a string "
                                  "id and name and an object input" % where)
                if b["id"] in all_ids:
                    raise Invalid("%s: `tool_use` ids must be unique" %
                                  where)
                all_ids.add(b["id"])
                uses.append(b["id"])
                uses_tools = True
            elif t == "tool_result":
                if role != "user":
                    raise Invalid("%s: `tool_result` blocks are only "
                                  "allowed in user messages" % where)
                uses_tools = True
                tid = b.get("tool_use_id")
                if tid not in prev_uses or tid in results:
                    raise Invalid("%s: unexpected `tool_use_id` found in "
                                  "`tool_result` blocks: %s. Each "
                                  "`tool_result` block must have a "
                                  "corresponding `tool_use` block in the "
                                  "previous message." % (where, tid))
                if other_seen:
                    raise Invalid("%s: `tool_result` blocks must come "
                                  "first in the content, before any other "
                                  "block" % where)
                results.append(tid)
            elif t in ("image", "document"):
                other_seen = True
            else:
                raise Invalid("%s.type: Input tag '%s' found using 'type' "
                              "does not match any of the expected tags" %
                              (where, t))
        if role == "user" and prev_uses:
            missing = [u for u in prev_uses if u not in results]
            if missing:
                raise Invalid("messages.%d: `tool_use` ids were found "
                              "without `tool_result` blocks immediately "
                              "after: %s. Each `tool_use` block must have a "
                              "corresponding `tool_result` block in the "
                              "next message." % (i - 1, ", ".join(missing)))
        prev_uses = uses if role == "assistant" else []
    if prev_uses:
        raise Invalid("messages.%d: `tool_use` ids were found without "
                      "`tool_result` blocks immediately after: %s. Each "
                      "`tool_use` block must have a corresponding "
                      "`tool_result` block in the next message." %
                      (len(msgs) - 1, ", ".join(prev_uses)))
    if uses_tools and not req.get("tools"):
        raise Invalid("Requests which include `tool_use` or `tool_result` "
                      "blocks must define tools.")


def check_request(anthropic, req):
    """None, or the (message, param) of the 400 the real API would give."""
    if not isinstance(req, dict):
        return Invalid("We could not parse the JSON body of your request. "
                       "The API expects a JSON object.")
    try:
        if anthropic:
            check_anthropic(req)
        else:
            check_openai(req)
    except Invalid as e:
        return e
    return None


def invalid_body(anthropic, e):
    if anthropic:
        return json.dumps({"type": "error",
                           "error": {"type": "invalid_request_error",
                                     "message": e.message},
                           "request_id": "req_fake"})
    return json.dumps({"error": {"message": e.message,
                                 "type": "invalid_request_error",
                                 "param": e.param, "code": None}})


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
        anthropic = path.endswith("/messages")
        bad = check_request(anthropic, req)
        if bad is not None:
            with open(base + ".err", "w") as f:
                f.write(bad.message + "\n")
            data = invalid_body(anthropic, bad).encode("utf-8")
            self.send_response(400)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        rule = pick_rule(self.server.script, model, body, req)
        if rule.get("delay"):
            time.sleep(float(rule["delay"]))
        if rule.get("reset"):
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
            return
        status = int(rule.get("status", 200))
        usage = None
        if "body" in rule:
            out = rule["body"]
        elif status != 200:
            out = json.dumps({"error": {"message": "fake error %d" % status}})
        else:
            text, calls = rule_text(rule), rule_calls(rule, anthropic)
            usage = make_usage(anthropic, model, rule, req, text, calls,
                               self.server.script)
            out = answer_body(anthropic, model, rule, req, text, calls, usage)
        data = out.encode("utf-8") + b" " * int(rule.get("pad", 0))
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
            tin, tout, _, read, write = usage
            with open(base + ".usage", "w") as f:
                f.write("%d %d %d %d\n" % (tin, tout, read, write))
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
