#!/bin/sh
# issue 18: a dead voter stops costing time. A voter whose server
# answers 500 to everything is tried (with its retries) on one request,
# not on every patch of a 30-patch series and its tip: its circuit opens,
# it abstains on the rest, and the report says when and why. A voter
# that answers a 429 is busy, not dead: its circuit stays closed.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/llm.sh"

R=$TMP/repo
make_repo "$R"
git -C "$R" tag base
i=1
while [ $i -le 30 ]; do
	printf 'int h%d(int x)\n{\n\treturn x * %d;\n}\n' $i $i >"$R/h$i.c"
	git -C "$R" add "h$i.c"
	git -C "$R" commit -q -m "h$i: add h$i()"
	i=$((i + 1))
done
git -C "$R" format-patch -q -o "$TMP/p" base..HEAD
cat "$TMP"/p/*.patch >"$TMP/s.mbox"

cat >"$TMP/s.json" <<'EOS'
{"models": {"m5": [{"status": 500}],
            "mr": [{"reset": true}],
            "mb": [{"status": 429, "times": 2}, {"answer": {"findings": []}}]},
 "default": [{"answer": {"findings": []}, "usage": {"in": 100, "out": 20}}]}
EOS
FAKE_TIMEOUT=120 fake_start "$TMP/s.json"
{
	voter a openai ma
	voter e openai m5
	printf '[review]\n\tretries = 2\n\tbackoff = 0.05\n'
} >"$TMP/config"
export QUORUM_CONFIG=$TMP/config

run "$QUORUM" review -C "$R" --base base "$TMP/s.mbox"
is "$rc" 0 "the review completes"
is "$(requests ma)" 31 "the live voter is asked about 30 patches and the tip"
tries=$(requests m5)
# One request's three tries, and at most the first requests that were
# already in flight (max-parallel 4) once each.
ok "$([ "$tries" -ge 3 ] && [ "$tries" -le 6 ]; echo $?)" "the dead voter got $tries tries, not 93"
like "$TMP/out" '^circuit: e: circuit opened at [0-9-]+ [0-9:]+ UTC, on patch [0-9]+/30 after 3 tries \(HTTP 500 \(after 3 attempts\)\); it abstains for the rest of the run' "the report says when the circuit opened, and why"
like "$TMP/out" "e abstained on patch [0-9]+/30: not asked: the voter's circuit is open" "the voter abstains on the rest"
like "$TMP/out" "not sent: the voter's circuit was open" "the cost line counts what was not sent"
like "$TMP/out" '^models: 2 asked, 1 answered' "the review goes on with the live voter"

# One at a time: exactly one request's tries.
{
	voter a openai ma
	voter e openai m5 max-parallel=1
	printf '[review]\n\tretries = 2\n\tbackoff = 0.05\n'
} >"$TMP/config"
before=$(requests m5)
run "$QUORUM" review -C "$R" --base base --no-cache "$TMP/s.mbox"
is "$(($(requests m5) - before))" 3 "with max-parallel 1, exactly one request's three tries"

# JSON says it too.
run "$QUORUM" review -C "$R" --base base --no-cache --format json "$TMP/s.mbox"
python3 - "$TMP/out" <<'EOP'
import json, sys
r = json.load(open(sys.argv[1]))["reviews"][0]
assert len(r["breakers"]) == 1 and r["breakers"][0].startswith("e: circuit opened"), r["breakers"]
assert r["cost"]["not_sent_breaker"] >= 26, r["cost"]
EOP
ok $? "JSON: breakers and cost.not_sent_breaker"

# A reset is a dead server too.
{
	voter a openai ma
	voter r openai mr max-parallel=1
	printf '[review]\n\tretries = 2\n\tbackoff = 0.05\n'
} >"$TMP/config"
run "$QUORUM" review -C "$R" --base base --no-cache "$TMP/s.mbox"
# quorum tries one request three times; curl itself may send a request
# again when a reused keep-alive connection turns out dead, so the
# server counts a few more hits, never one per patch.
is "$(grep 'r abstained on .*after 3 attempts' "$TMP/out" | grep -vc 'not asked')" 1 "a voter whose connection is reset: one request's three tries"
is "$(grep -c "r abstained on .*not asked: the voter's circuit is open" "$TMP/out")" 30 "and none on the other 30"
n=$(requests mr)
ok "$([ "$n" -ge 3 ] && [ "$n" -lt 31 ]; echo $?)" "the server saw $n requests, not 93"
like "$TMP/out" '^circuit: r: circuit opened' "and its circuit opens"

# 429 is a busy server: retried, and the circuit stays closed.
{
	voter a openai ma
	voter b openai mb max-parallel=1
	printf '[review]\n\tretries = 2\n\tbackoff = 0.05\n'
} >"$TMP/config"
run "$QUORUM" review -C "$R" --base base --no-cache "$TMP/s.mbox"
unlike "$TMP/out" '^circuit:' "a 429 does not open the circuit"
like "$TMP/out" '^models: 2 asked, 2 answered' "the busy voter answers once it can"

done_testing
