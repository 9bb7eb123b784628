#!/usr/bin/env python3
# fences.py - check that what quorum sent a model keeps every byte from
# outside (mail, the tree, its history) inside the data blocks.
#
# usage: fences.py [--marker TEXT]... [--seen TEXT]... REQUEST.json...
#
# Each REQUEST.json is a request body the fake LLM server recorded
# (OpenAI chat completions or Anthropic messages). A prompt's data blocks
# are the ones every prompt builder of quorum writes:
#
#   <<<BOUNDARY KIND key=value key="C-quoted value">>>
#   ...data, any bytes but the boundary...
#   <<<END BOUNDARY>>>
#
# with BOUNDARY "Q" and 32 hex digits, the one of the prompt's first
# opening line. The checker splits the user message into blocks and the
# text between them and fails (exit 1, one line per problem) when:
#   - an opening line is not exactly that shape (a raw value, a '>>>'
#     or a newline in a value), a block is not closed, or blocks nest;
#   - the boundary occurs inside a block's data;
#   - the text between blocks, or an opening line outside its values,
#     holds a byte that is not printable ASCII (a control byte, DEL,
#     UTF-8), or a --marker (input the test wrote has a marker on every
#     line, so no line outside the blocks comes from input);
#   - the instructions (the system message) hold a --marker, or do not
#     name the boundary.
# --seen TEXT: TEXT must occur, whole and unchanged, in the data (block
# contents and decoded values) of at least one of the requests: the
# hostile input did reach the model, as data. Prints "ok N requests, M
# blocks" when all is well.
import argparse
import json
import re
import sys

BOUNDARY = re.compile(r"Q[0-9a-f]{32}")
BARE = r"[A-Za-z0-9._/+,@~:-]+"
QUOTED = r'"(?:[\x20-\x21\x23-\x3b\x3d\x3f-\x5b\x5d-\x7e]|\\[abtnvfr"\\]|\\[0-7]{3})*"'
ATTR = re.compile(r" ([a-z_]+)=(%s|%s)" % (BARE, QUOTED))
ESC = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13,
       '"': 34, "\\": 92}


def unquote(v):
    """The bytes of an attribute value, as text (UTF-8, surrogates kept)."""
    if not v.startswith('"'):
        return v
    out, i, s = bytearray(), 0, v[1:-1]
    while i < len(s):
        if s[i] == "\\":
            if s[i + 1] in ESC:
                out.append(ESC[s[i + 1]])
                i += 2
            else:
                out.append(int(s[i + 1:i + 4], 8))
                i += 4
        else:
            out.append(ord(s[i]))
            i += 1
    return out.decode("utf-8", "surrogateescape")


def texts(body):
    """(system texts, user texts) of a request body."""
    def flat(c):
        if isinstance(c, str):
            return [c]
        if isinstance(c, list):
            return [x.get("text", "") for x in c if isinstance(x, dict)]
        return []
    system, user = [], []
    system += flat(body.get("system"))
    for m in body.get("messages") or []:
        (system if m.get("role") == "system" else user).extend(
            flat(m.get("content")))
    return system, user


def printable(s):
    return all(c == "\n" or " " <= c <= "~" for c in s)


def check_user(name, text, markers, problems, data):
    # The first opening line is ours: the data comes after it.
    m = re.search(r"^<<<(%s) " % BOUNDARY.pattern, text, re.M)
    if not m:
        problems.append("%s: no data block" % name)
        return None, 0
    b = m.group(1)
    opening = re.compile(r"<<<%s ([a-z][a-z-]*)((?:%s)*)>>>" %
                         (b, ATTR.pattern))
    closing = "<<<END %s>>>" % b
    outside, inside, nblocks = [], None, 0
    for no, line in enumerate(text.split("\n"), 1):
        where = "%s:%d" % (name, no)
        if inside is None:
            if line == closing:
                problems.append("%s: a close with no open" % where)
            elif line.startswith("<<<" + b):
                m = opening.fullmatch(line)
                if not m:
                    problems.append("%s: a malformed opening line: %r" %
                                    (where, line[:200]))
                    continue
                inside, nblocks = [], nblocks + 1
                keys = ""
                for a in ATTR.finditer(m.group(2)):
                    data.append(unquote(a.group(2)))
                    keys += " %s=" % a.group(1)
                outside.append((where, "<<<%s %s%s>>>" %
                                (b, m.group(1), keys)))
            else:
                outside.append((where, line))
        elif line == closing:
            body = "\n".join(inside)
            if b in body:
                problems.append("%s: the boundary inside a block" % where)
            data.append(body)
            inside = None
        elif line.startswith("<<<" + b):
            problems.append("%s: a block opened inside a block" % where)
        else:
            inside.append(line)
    if inside is not None:
        problems.append("%s: a block is never closed" % name)
    for where, line in outside:
        if not printable(line):
            problems.append("%s: outside the blocks, bytes from input: %r"
                            % (where, line[:200]))
        for mk in markers:
            if mk in line:
                problems.append("%s: outside the blocks, input (%s): %r" %
                                (where, mk, line[:200]))
    return b, nblocks


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--marker", action="append", default=[])
    ap.add_argument("--seen", action="append", default=[])
    ap.add_argument("requests", nargs="+")
    a = ap.parse_args()
    problems, data, nblocks = [], [], 0
    for f in a.requests:
        body = json.load(open(f))
        system, user = texts(body)
        if not user:
            problems.append("%s: no user message" % f)
        bounds = []
        for i, u in enumerate(user):
            b, n = check_user("%s#%d" % (f, i), u, a.marker, problems, data)
            nblocks += n
            bounds.append(b)
        for s in system:
            for mk in a.marker:
                if mk in s:
                    problems.append("%s: the instructions hold input (%s)"
                                    % (f, mk))
            for b in bounds:
                if b and b not in s:
                    problems.append("%s: the instructions do not name the "
                                    "boundary" % f)
    for s in a.seen:
        if not any(s in d for d in data):
            problems.append("never seen in a block: %r" % s)
    for p in problems:
        print(p)
    if problems:
        return 1
    print("ok %d requests, %d blocks" % (len(a.requests), nblocks))
    return 0


if __name__ == "__main__":
    sys.exit(main())
