#!/bin/sh
# tests/lib/fake-llm.py itself: it scripts tool calls in each API's own
# shape, follows a conversation by its turn and its last tool result,
# refuses with a 400 shaped like the real API's every request that breaks
# the APIs' rules on tool calls, roles and cache breakpoints (and none
# that keeps them), and bills prompt caching as the real APIs do. The
# tool loop's tests trust it to be as strict as the real servers.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/llm.sh"

# Many small clients: the interpreter itself, not a wrapper script that
# finds it each time (pyenv's take a second).
PY=$(python3 -c 'import sys; print(sys.executable)')

# req NAME: the request body on stdin, into $TMP/NAME.json.
req() { cat >"$TMP/$1.json"; }

# post openai|anthropic NAME: POST $TMP/NAME.json; the answer's body in
# $TMP/NAME.out, its HTTP status in $status.
post() {
	case $1 in
	openai) url=http://127.0.0.1:$PORT/v1/chat/completions ;;
	anthropic) url=http://127.0.0.1:$PORT/v1/messages ;;
	esac
	status=$("$PY" -c '
import sys, urllib.request, urllib.error
data = open(sys.argv[2], "rb").read()
r = urllib.request.Request(sys.argv[1], data=data,
                           headers={"Content-Type": "application/json"})
try:
    with urllib.request.urlopen(r, timeout=20) as a:
        status, body = a.status, a.read()
except urllib.error.HTTPError as e:
    status, body = e.code, e.read()
open(sys.argv[3], "wb").write(body)
print(status)' "$url" "$TMP/$2.json" "$TMP/$2.out")
}

# jget NAME EXPR: EXPR (Python, over the answer d) of $TMP/NAME.out.
jget() {
	"$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$TMP/$1.out" "$2"
}

# has TEXT FILE: FILE holds TEXT (a fixed string).
has() {
	grep -qF -- "$1" "$2" && return 0
	echo "has: '$2' lacks '$1'; it has:" >&2
	head -5 "$2" >&2
	return 1
}

# refused API NAME MESSAGE: a 400 of the API's shape whose message has
# MESSAGE, recorded in the .err file, billed nothing.
refused() {
	post "$1" "$2" &&
	test "$status" = 400 &&
	"$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(d["error"]["message"])
if sys.argv[2] == "anthropic":
    sys.exit(d["type"] != "error" or
             d["error"]["type"] != "invalid_request_error")
sys.exit(d["error"]["type"] != "invalid_request_error" or "param" not in
         d["error"] or "code" not in d["error"])' "$TMP/$2.out" "$1" >"$TMP/msg" &&
	has "$3" "$TMP/msg" &&
	err=$(ls "$REC"/*.err | tail -n 1) &&
	has "$3" "$err" &&
	test ! -e "${err%.err}.usage"
}

# kept API NAME: a 200.
kept() {
	post "$1" "$2" &&
	{ test "$status" = 200 || { cat "$TMP/$2.out"; false; }; }
}

TOOLS_O='[{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}]'
TOOLS_A='[{"name": "read_file", "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}]'

test_expect_success 'setup: a script of tool calls and answers' '
	cat >"$TMP/script.json" <<-EOF &&
	{"cache_min_tokens": 1024,
	 "models": {
	  "m": [
	   {"turn": 0, "when": "ONE-THOUSAND", "tool_calls": [{"name": "grep", "arguments": {"pattern": "x"}, "repeat": 1000}]},
	   {"turn": 0, "when": "BAD-JSON", "tool_calls": [{"name": "read_file", "arguments": "{\"path\": "}]},
	   {"turn": 0, "when": "CALL", "answer": "Let me look.", "tool_calls": [{"name": "read_file", "arguments": {"path": "a.c"}}, {"name": "grep", "arguments": {"pattern": "lock\\\\("}, "id": "mine"}]},
	   {"turn": 1, "tool_result": "forty-two", "answer": "the file says 42"},
	   {"turn": 1, "answer": "a turn without the result"},
	   {"times": 1, "when": "ONCE", "answer": "once"},
	   {"usage": {"in": "auto", "out": "auto"}, "answer": "plain"}
	  ]}}
	EOF
	fake_start "$TMP/script.json" &&
	test -n "$PORT"
'

test_expect_success 'openai: tool calls go out as tool_calls with JSON string arguments' '
	req o-call <<-EOF &&
	{"model": "m", "tools": $TOOLS_O, "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "CALL"}]}
	EOF
	kept openai o-call &&
	test "$(jget o-call "d[\"choices\"][0][\"finish_reason\"]")" = tool_calls &&
	test "$(jget o-call "d[\"choices\"][0][\"message\"][\"content\"]")" = "Let me look." &&
	jget o-call "[(c[\"type\"], c[\"function\"][\"name\"], json.loads(c[\"function\"][\"arguments\"])) for c in d[\"choices\"][0][\"message\"][\"tool_calls\"]]" >"$TMP/calls" &&
	printf "%s\n" "[('\''function'\'', '\''read_file'\'', {'\''path'\'': '\''a.c'\''}), ('\''function'\'', '\''grep'\'', {'\''pattern'\'': '\''lock\\\\('\''})]" >"$TMP/want" &&
	test_cmp "$TMP/want" "$TMP/calls" &&
	ID=$(jget o-call "d[\"choices\"][0][\"message\"][\"tool_calls\"][0][\"id\"]") &&
	case $ID in call_*) ;; *) false ;; esac &&
	test "$(jget o-call "d[\"choices\"][0][\"message\"][\"tool_calls\"][1][\"id\"]")" = mine &&
	test "$(jget o-call "type(d[\"choices\"][0][\"message\"][\"tool_calls\"][0][\"function\"][\"arguments\"]).__name__")" = str
'

test_expect_success 'openai: a scripted string is sent as it is, even when not JSON' '
	req o-bad <<-EOF &&
	{"model": "m", "tools": $TOOLS_O, "messages": [{"role": "user", "content": "BAD-JSON"}]}
	EOF
	kept openai o-bad &&
	test "$(jget o-bad "d[\"choices\"][0][\"message\"][\"tool_calls\"][0][\"function\"][\"arguments\"]")" = "{\"path\": "
'

test_expect_success 'openai: a conversation that answers every call is kept, by turn and result' '
	req o-turn <<-EOF &&
	{"model": "m", "tools": $TOOLS_O, "messages": [
	 {"role": "system", "content": "s"}, {"role": "user", "content": "CALL"},
	 {"role": "assistant", "content": null, "tool_calls": [
	  {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}},
	  {"id": "call_2", "type": "function", "function": {"name": "grep", "arguments": "{}"}}]},
	 {"role": "tool", "tool_call_id": "call_2", "content": "nothing"},
	 {"role": "tool", "tool_call_id": "call_1", "content": "it says forty-two"}]}
	EOF
	kept openai o-turn &&
	test "$(jget o-turn "d[\"choices\"][0][\"message\"][\"content\"]")" = "the file says 42" &&
	test "$(jget o-turn "d[\"choices\"][0][\"finish_reason\"]")" = stop &&
	sed "s/forty-two/seven/" "$TMP/o-turn.json" >"$TMP/o-turn2.json" &&
	kept openai o-turn2 &&
	test "$(jget o-turn2 "d[\"choices\"][0][\"message\"][\"content\"]")" = "a turn without the result"
'

test_expect_success 'openai: a tool message must answer a call of the assistant before it' '
	req o-wrongid <<-EOF &&
	{"model": "m", "tools": $TOOLS_O, "messages": [{"role": "user", "content": "q"},
	 {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]},
	 {"role": "tool", "tool_call_id": "call_9", "content": "x"}]}
	EOF
	refused openai o-wrongid "messages with role '\''tool'\'' must be a response to a preceeding message with '\''tool_calls'\''" &&
	test "$(jget o-wrongid "d[\"error\"][\"param\"]")" = "messages.[2].role" &&
	req o-stray <<-EOF &&
	{"model": "m", "tools": $TOOLS_O, "messages": [{"role": "user", "content": "q"},
	 {"role": "tool", "tool_call_id": "call_1", "content": "x"}]}
	EOF
	refused openai o-stray "must be a response to a preceeding message" &&
	req o-twice <<-EOF &&
	{"model": "m", "tools": $TOOLS_O, "messages": [{"role": "user", "content": "q"},
	 {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]},
	 {"role": "tool", "tool_call_id": "call_1", "content": "x"},
	 {"role": "tool", "tool_call_id": "call_1", "content": "x"}]}
	EOF
	refused openai o-twice "must be a response to a preceeding message"
'

test_expect_success 'openai: every call is answered before any other message' '
	req o-unanswered <<-EOF &&
	{"model": "m", "tools": $TOOLS_O, "messages": [{"role": "user", "content": "q"},
	 {"role": "assistant", "tool_calls": [
	  {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}},
	  {"id": "call_2", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]},
	 {"role": "tool", "tool_call_id": "call_1", "content": "x"},
	 {"role": "user", "content": "go on"}]}
	EOF
	refused openai o-unanswered "The following tool_call_ids did not have response messages: call_2" &&
	req o-last <<-EOF &&
	{"model": "m", "tools": $TOOLS_O, "messages": [{"role": "user", "content": "q"},
	 {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]}]}
	EOF
	refused openai o-last "did not have response messages: call_1"
'

test_expect_success 'openai: tool calls need declared tools, well-formed' '
	req o-notools <<-EOF &&
	{"model": "m", "messages": [{"role": "user", "content": "q"},
	 {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]},
	 {"role": "tool", "tool_call_id": "call_1", "content": "x"}]}
	EOF
	refused openai o-notools "must declare '\''tools'\''" &&
	req o-objargs <<-EOF &&
	{"model": "m", "tools": $TOOLS_O, "messages": [{"role": "user", "content": "q"},
	 {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": {}}}]},
	 {"role": "tool", "tool_call_id": "call_1", "content": "x"}]}
	EOF
	refused openai o-objargs "string '\''name'\'' and '\''arguments'\''" &&
	req o-badname <<-EOF &&
	{"model": "m", "tools": [{"type": "function", "function": {"name": "read file"}}], "messages": [{"role": "user", "content": "q"}]}
	EOF
	refused openai o-badname "Invalid '\''tools[0].function.name'\'': string does not match pattern"
'

test_expect_success 'openai: system messages first, no assistant first' '
	req o-late-system <<-EOF &&
	{"model": "m", "messages": [{"role": "user", "content": "q"}, {"role": "system", "content": "s"}]}
	EOF
	refused openai o-late-system "system messages must come first" &&
	req o-assistant-first <<-EOF &&
	{"model": "m", "messages": [{"role": "developer", "content": "s"}, {"role": "assistant", "content": "hi"}, {"role": "user", "content": "q"}]}
	EOF
	refused openai o-assistant-first "must not be an assistant" &&
	req o-empty <<-EOF &&
	{"model": "m", "messages": []}
	EOF
	refused openai o-empty "empty array" &&
	printf "{not json" >"$TMP/o-json.json" &&
	refused openai o-json "could not parse the JSON body"
'

test_expect_success 'a refused request uses up no rule and is billed nothing' '
	req o-once-bad <<-EOF &&
	{"model": "m", "messages": [{"role": "assistant", "content": "ONCE"}]}
	EOF
	refused openai o-once-bad "must not be an assistant" &&
	req o-once <<-EOF &&
	{"model": "m", "messages": [{"role": "user", "content": "ONCE"}]}
	EOF
	kept openai o-once &&
	test "$(jget o-once "d[\"choices\"][0][\"message\"][\"content\"]")" = once
'

test_expect_success 'a thousand calls in one turn, each with its own id' '
	req o-1000 <<-EOF &&
	{"model": "m", "tools": $TOOLS_O, "messages": [{"role": "user", "content": "ONE-THOUSAND"}]}
	EOF
	kept openai o-1000 &&
	test "$(jget o-1000 "len(set(c[\"id\"] for c in d[\"choices\"][0][\"message\"][\"tool_calls\"]))")" = 1000 &&
	test "$(jget o-1000 "d[\"choices\"][0][\"message\"][\"content\"]")" = None
'

test_expect_success 'anthropic: tool calls go out as tool_use blocks after the text' '
	req a-call <<-EOF &&
	{"model": "m", "max_tokens": 100, "system": "s", "tools": $TOOLS_A, "messages": [{"role": "user", "content": "CALL"}]}
	EOF
	kept anthropic a-call &&
	test "$(jget a-call "d[\"stop_reason\"]")" = tool_use &&
	test "$(jget a-call "[b[\"type\"] for b in d[\"content\"]]")" = "['\''text'\'', '\''tool_use'\'', '\''tool_use'\'']" &&
	test "$(jget a-call "d[\"content\"][1][\"input\"]")" = "{'\''path'\'': '\''a.c'\''}" &&
	ID=$(jget a-call "d[\"content\"][1][\"id\"]") &&
	case $ID in toolu_*) ;; *) false ;; esac &&
	test "$(jget a-call "sorted(d[\"usage\"])")" = "['\''cache_creation_input_tokens'\'', '\''cache_read_input_tokens'\'', '\''input_tokens'\'', '\''output_tokens'\'']"
'

test_expect_success 'anthropic: tool_result blocks answering every tool_use, first, are kept' '
	req a-turn <<-EOF &&
	{"model": "m", "max_tokens": 100, "system": "s", "tools": $TOOLS_A, "messages": [
	 {"role": "user", "content": "CALL"},
	 {"role": "assistant", "content": [{"type": "text", "text": "Let me look."},
	  {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.c"}},
	  {"type": "tool_use", "id": "toolu_2", "name": "read_file", "input": {"path": "b.c"}}]},
	 {"role": "user", "content": [
	  {"type": "tool_result", "tool_use_id": "toolu_2", "content": "no such file", "is_error": true},
	  {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "forty-two"}]},
	  {"type": "text", "text": "go on"}]}]}
	EOF
	kept anthropic a-turn &&
	test "$(jget a-turn "d[\"content\"][0][\"text\"]")" = "the file says 42" &&
	test "$(jget a-turn "d[\"stop_reason\"]")" = end_turn
'

test_expect_success 'anthropic: a tool_use must be answered in the very next message' '
	req a-unanswered <<-EOF &&
	{"model": "m", "max_tokens": 100, "tools": $TOOLS_A, "messages": [
	 {"role": "user", "content": "q"},
	 {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}},
	  {"type": "tool_use", "id": "toolu_2", "name": "read_file", "input": {}}]},
	 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}]}]}
	EOF
	refused anthropic a-unanswered "messages.1: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: toolu_2" &&
	req a-textonly <<-EOF &&
	{"model": "m", "max_tokens": 100, "tools": $TOOLS_A, "messages": [
	 {"role": "user", "content": "q"},
	 {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}]},
	 {"role": "user", "content": "what did it say?"}]}
	EOF
	refused anthropic a-textonly "ids were found without \`tool_result\` blocks immediately after: toolu_1"
'

test_expect_success 'anthropic: a tool_result answers a tool_use of the message before, first' '
	req a-wrongid <<-EOF &&
	{"model": "m", "max_tokens": 100, "tools": $TOOLS_A, "messages": [
	 {"role": "user", "content": "q"},
	 {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}]},
	 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"},
	  {"type": "tool_result", "tool_use_id": "toolu_7", "content": "x"}]}]}
	EOF
	refused anthropic a-wrongid "messages.2.content.1: unexpected \`tool_use_id\` found in \`tool_result\` blocks: toolu_7" &&
	req a-notfirst <<-EOF &&
	{"model": "m", "max_tokens": 100, "tools": $TOOLS_A, "messages": [
	 {"role": "user", "content": "q"},
	 {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}]},
	 {"role": "user", "content": [{"type": "text", "text": "here"},
	  {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}]}]}
	EOF
	refused anthropic a-notfirst "\`tool_result\` blocks must come first" &&
	req a-dupid <<-EOF &&
	{"model": "m", "max_tokens": 100, "tools": $TOOLS_A, "messages": [
	 {"role": "user", "content": "q"},
	 {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}]},
	 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}]},
	 {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}]},
	 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}]}]}
	EOF
	refused anthropic a-dupid "\`tool_use\` ids must be unique" &&
	req a-notools <<-EOF &&
	{"model": "m", "max_tokens": 100, "messages": [
	 {"role": "user", "content": "q"},
	 {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}]},
	 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}]}]}
	EOF
	refused anthropic a-notools "Requests which include \`tool_use\` or \`tool_result\` blocks must define tools."
'

test_expect_success 'anthropic: system is top-level only; user first; roles alternate' '
	req a-system <<-EOF &&
	{"model": "m", "max_tokens": 100, "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "q"}]}
	EOF
	refused anthropic a-system "Unexpected role \"system\". The Messages API accepts a top-level \`system\` parameter" &&
	req a-first <<-EOF &&
	{"model": "m", "max_tokens": 100, "messages": [{"role": "assistant", "content": "hi"}, {"role": "user", "content": "q"}]}
	EOF
	refused anthropic a-first "first message must use the \"user\" role" &&
	req a-twice <<-EOF &&
	{"model": "m", "max_tokens": 100, "messages": [{"role": "user", "content": "q"}, {"role": "user", "content": "q"}]}
	EOF
	refused anthropic a-twice "roles must alternate between \"user\" and \"assistant\", but found multiple \"user\" roles in a row" &&
	req a-maxtok <<-EOF &&
	{"model": "m", "messages": [{"role": "user", "content": "q"}]}
	EOF
	refused anthropic a-maxtok "max_tokens: Field required" &&
	req a-schema <<-EOF &&
	{"model": "m", "max_tokens": 100, "tools": [{"name": "read_file"}], "messages": [{"role": "user", "content": "q"}]}
	EOF
	refused anthropic a-schema "tools.0.input_schema: Field required"
'

test_expect_success 'anthropic: at most 4 cache_control breakpoints' '
	"$PY" -c "
import json
blocks = [{\"type\": \"text\", \"text\": \"part %d\" % i, \"cache_control\": {\"type\": \"ephemeral\"}} for i in range(5)]
for n, name in ((5, \"a-five\"), (4, \"a-four\")):
    json.dump({\"model\": \"m\", \"max_tokens\": 100, \"system\": blocks[:n - 1],
               \"messages\": [{\"role\": \"user\", \"content\": blocks[n - 1:n]}]},
              open(\"$TMP/%s.json\" % name, \"w\"))
" &&
	refused anthropic a-five "A maximum of 4 blocks with cache_control may be provided. Found 5." &&
	kept anthropic a-four &&
	sed "s/ephemeral/permanent/" "$TMP/a-four.json" >"$TMP/a-type.json" &&
	refused anthropic a-type "cache_control.type: Input should be '\''ephemeral'\''"
'

# A system prompt of 8,000 characters (2,000 tokens) and a question.
cached_req() {
	"$PY" -c "
import json, sys
api, q, bp2 = sys.argv[1], sys.argv[2], sys.argv[3] == 'yes'
system = 'You review patches. ' * 400
if api == 'anthropic':
    user = [{'type': 'text', 'text': q}]
    if bp2:
        user[0]['cache_control'] = {'type': 'ephemeral'}
    r = {'model': 'm', 'max_tokens': 100,
         'system': [{'type': 'text', 'text': system,
                     'cache_control': {'type': 'ephemeral'}}],
         'messages': [{'role': 'user', 'content': user}]}
else:
    r = {'model': 'm', 'messages': [{'role': 'system', 'content': system},
                                    {'role': 'user', 'content': q}]}
print(json.dumps(r))" "$@"
}

# usage_of NAME: the last .usage file the server wrote.
last_usage() { cat "$(ls "$REC"/*.usage | tail -n 1)"; }

test_expect_success 'anthropic: a breakpoint seen before is read, the rest written' '
	cached_req anthropic "question one" no >"$TMP/a-c1.json" &&
	kept anthropic a-c1 &&
	test "$(jget a-c1 "(d[\"usage\"][\"cache_read_input_tokens\"], d[\"usage\"][\"cache_creation_input_tokens\"], d[\"usage\"][\"input_tokens\"])")" = "(0, 2000, 13)" &&
	test "$(last_usage)" = "2013 2 0 2000" &&
	cached_req anthropic "question two, longer" no >"$TMP/a-c2.json" &&
	kept anthropic a-c2 &&
	test "$(jget a-c2 "(d[\"usage\"][\"cache_read_input_tokens\"], d[\"usage\"][\"cache_creation_input_tokens\"], d[\"usage\"][\"input_tokens\"])")" = "(2000, 0, 15)" &&
	test "$(last_usage)" = "2015 2 2000 0" &&
	cached_req anthropic "$(printf "%04000d" 7)" yes >"$TMP/a-c3.json" &&
	kept anthropic a-c3 &&
	test "$(jget a-c3 "(d[\"usage\"][\"cache_read_input_tokens\"], d[\"usage\"][\"cache_creation_input_tokens\"], d[\"usage\"][\"input_tokens\"])")" = "(2000, 1000, 10)"
'

test_expect_success 'anthropic: a prefix under the minimum is not cached' '
	"$PY" -c "
import json
print(json.dumps({\"model\": \"m\", \"max_tokens\": 100,
  \"system\": [{\"type\": \"text\", \"text\": \"short\", \"cache_control\": {\"type\": \"ephemeral\"}}],
  \"messages\": [{\"role\": \"user\", \"content\": \"q\"}]}))" >"$TMP/a-short.json" &&
	kept anthropic a-short &&
	kept anthropic a-short &&
	test "$(jget a-short "(d[\"usage\"][\"cache_read_input_tokens\"], d[\"usage\"][\"cache_creation_input_tokens\"])")" = "(0, 0)"
'

test_expect_success 'openai: a prefix of 1024 tokens seen before is cached, in 128-token steps' '
	cached_req openai "question one" no >"$TMP/o-c1.json" &&
	kept openai o-c1 &&
	test "$(jget o-c1 "d[\"usage\"][\"prompt_tokens_details\"][\"cached_tokens\"]")" = 0 &&
	test "$(last_usage)" = "2013 2 0 0" &&
	cached_req openai "question two" no >"$TMP/o-c2.json" &&
	kept openai o-c2 &&
	test "$(jget o-c2 "d[\"usage\"][\"prompt_tokens_details\"][\"cached_tokens\"]")" = 1920 &&
	test "$(jget o-c2 "d[\"usage\"][\"prompt_tokens\"]")" = 2013 &&
	test "$(last_usage)" = "2013 2 1920 0"
'

test_expect_success 'billed prices cached tokens apart; spent is unchanged' '
	# The last answer: 2013 in (1920 of them cached), 2 out.
	cp "$(ls "$REC"/*.usage | tail -n 1)" "$TMP/one.usage" &&
	REC_ALL=$REC && REC=$TMP/one && mkdir -p "$REC" &&
	cp "$TMP/one.usage" "$REC/0001-m.usage" &&
	test "$(spent)" = "0.006069" &&
	test "$(billed 3 15)" = "0.006069" &&
	test "$(billed 3 15 0.3)" = "0.000885" &&
	REC=$REC_ALL
'

test_done
