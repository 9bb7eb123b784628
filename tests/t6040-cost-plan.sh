#!/bin/sh
# issue 18: a cap buys what it says. `quorum ci` over 10 small commits
# with two LLM voters costs $X unbounded; under --budget of 10%, 40% and
# 100% of X it spends (by the fake server's own usage) never more than
# the budget, and at 40% and 100% at least half of it; the plan is said
# before the first request (text and JSON). Inputs are bounded by the
# servers' free token counters (/tokenize, Anthropic's count_tokens),
# which are asked once per voter when they are not there, and whose
# hostile or failed answers fall back to a token per byte. Killed with
# SIGKILL during a planned spend and run again, quorum never passes a
# monthly cap.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/llm.sh"

R=$TMP/repo
make_repo "$R"
git -C "$R" tag base
i=1
while [ $i -le 10 ]; do
	printf 'int f%d(int x)\n{\n\treturn x + %d;\n}\n' $i $i >"$R/f$i.c"
	git -C "$R" add "f$i.c"
	git -C "$R" commit -q -m "lib: add f$i()"
	i=$((i + 1))
done

# Input tokens as the texts' size makes them, 300 out: a few findings'
# worth. The server counts tokens the same way, for free.
cat >"$TMP/s.json" <<'EOS'
{"default": [{"answer": {"findings": []}, "usage": {"in": "auto", "out": 300}}],
 "tokenize": {}}
EOS
fake_start "$TMP/s.json"
{
	voter a openai ma price-in=3 price-out=15 max-tokens=1000
	voter b openai mb price-in=3 price-out=15 max-tokens=1000
} >"$TMP/config"
export QUORUM_CONFIG=$TMP/config


XDG_STATE_HOME=$TMP/state0 run "$QUORUM" ci -C "$R" --range base..HEAD
is "$rc" 0 "unbounded: the range is reviewed"
X=$(spent)
is "$(nusage)" 22 "unbounded: 2 voters x (10 commits + the run's tip) requests (\$$X)"
is "$(ls "$REC.tok" | wc -l | tr -d ' ')" 0 "with no cap, no token is counted"

for pct in 10 40 100; do
	rm -f "$REC"/* "$REC.tok"/*
	B=$(awk -v x="$X" -v p=$pct 'BEGIN { printf "%.6f", x * p / 100 }')
	XDG_STATE_HOME=$TMP/state$pct run "$QUORUM" ci -C "$R" \
		--range base..HEAD --budget "$B" --format json --output "$TMP/ci$pct.json"
	cp "$TMP/err" "$TMP/err$pct"
	s=$(spent)
	eval "S$pct=\$s N$pct=\$(nusage)"
	awk -v s="$s" -v b="$B" 'BEGIN { exit !(s <= b + 1e-9) }'
	ok $? "$pct%: the server's usage stays under the budget: \$$s of \$$B ($(nusage) requests)"
	if [ $pct -ge 40 ]; then
		awk -v s="$s" -v b="$B" 'BEGIN { exit !(s >= b / 2) }'
		ok $? "$pct%: at least half the budget is spent (\$$s of \$$B)"
	else
		ok "$([ "$(nusage)" -gt 0 ]; echo $?)" "$pct%: some of the budget is spent (\$$s of \$$B)"
	fi
done
echo "# spend: 10% $S10 ($N10 requests), 40% $S40 ($N40), 100% $S100 ($N100) of X=$X"

# At 10% not even one whole answer fits: the request goes with its
# max-tokens cut to what is left, never under the voter's floor.
python3 - "$TMP/ci10.json" >"$TMP/py" 2>&1 <<'EOP'
import json, sys
r = json.load(open(sys.argv[1]))["reviews"][0]
c = r["cost"]
assert c["clamped"] >= 1 and c["requests"] >= 1, c
assert 400 <= c["est_tokens_out"] / c["requests"] < 1000, c
print("ok", c["clamped"], "of", c["requests"])
EOP
ok $? "10%: max-tokens is cut to what the budget left ($(tail -1 "$TMP/py"))"
sed 's/^/# /' "$TMP/py" | grep -v '^# ok'
# The 40% run's plan, riskiest (here: first) patches first.
python3 - "$TMP/ci40.json" >"$TMP/py" 2>&1 <<'EOP'
import json, sys
r = json.load(open(sys.argv[1]))["reviews"][0]
p = r["plan"]
assert p["cap"] == "the budget of this run", p
assert p["requests"] == 22 and 0 < p["planned_requests"] < 22, p
assert p["counted"] == 22, p
assert p["order"].startswith("1/10, 2/10") and p["order"].endswith("the series tip"), p
assert p["planned"] <= p["left"] + 1e-9 < p["worst"], p
assert r["cost"]["est_tokens_in"] >= r["cost"]["tokens_in"], r["cost"]
assert "reviewed only the first patches" in r["stepdown"], r["stepdown"]
print("ok", p["planned_requests"])
EOP
ok $? "JSON: the plan (cap, requests, order, token counts) ($(tail -1 "$TMP/py"))"
sed 's/^/# /' "$TMP/py" | grep -v '^# ok'
XDG_STATE_HOME=$TMP/state40b run "$QUORUM" ci -C "$R" --range base..HEAD \
	--budget "$(awk -v x="$X" 'BEGIN { printf "%.6f", x * 0.4 }')"
like "$TMP/out" '^plan: \$[0-9.]+ left under the budget of this run; [0-9]+ of 22 requests fit at once .*the series. order first \(1/10, 2/10, .*inputs bounded by token counts' "text: the plan is said"
like "$TMP/out" 'b abstained on the series tip: budget: a lower-risk patch' "text: what the money did not reach says so"

# quorum cost: per voter, the tokens estimated against those billed.
XDG_STATE_HOME=$TMP/state40 run "$QUORUM" cost --by voter
like "$TMP/out" '^slack a: [0-9]+ requests; in: [0-9]+ tokens estimated, [0-9]+ billed \([0-9]+%\); out: [0-9]+ estimated \(max-tokens\), [0-9]+ billed \([0-9]+%\)$' "quorum cost --by voter shows the slack of voter a"
awk '/^slack / { gsub(/[;,()%]/, " "); if ($9 > $6 || $16 > $13) bad = 1; n++ }
	END { exit !(n == 2 && !bad) }' "$TMP/out"
ok $? "for both voters, never more billed than estimated"
sed -n 's/^slack/# slack/p' "$TMP/out"

# The counter: llama.cpp's and vLLM's fields, at the server's root.
f=$(ls "$REC.tok" | head -1)
like "$REC.tok/$f" '^POST /tokenize$' "the counter is POST /tokenize at the server's root"
like "$REC.tok/$f" '"content":".*"prompt":"' "with llama.cpp's content and vLLM's prompt"

# A server with no counter: asked once per voter, then a token per byte.
fake_stop
cat >"$TMP/s2.json" <<'EOS'
{"default": [{"answer": {"findings": []}, "usage": {"in": "auto", "out": 300}}]}
EOS
fake_start "$TMP/s2.json"
{
	voter a openai ma price-in=3 price-out=15 max-tokens=1000
	voter b openai mb price-in=3 price-out=15 max-tokens=1000
} >"$TMP/config"
B=$(awk -v x="$X" 'BEGIN { printf "%.6f", x * 0.4 }')
XDG_STATE_HOME=$TMP/state2 run "$QUORUM" ci -C "$R" --range base..HEAD --budget "$B"
is "$(ls "$REC.tok" | wc -l | tr -d ' ')" 2 "no counter there: one try per voter"
like "$TMP/out" '^plan: .*inputs bounded by bytes \(no token counter\)' "the plan says inputs are bounded by bytes"
awk -v s="$(spent)" -v b="$B" 'BEGIN { exit !(s <= b + 1e-9 && s > 0) }'
ok $? "bytes: still under the budget (\$$(spent) of \$$B)"
echo "# 40% with bytes only: $(spent) ($(nusage) requests)"

# Hostile counters: more tokens than bytes, far too few, garbage, 500.
for rule in '{"scale": 100}' '{"scale": 0.001}' '{"body": "{\"count\": \"many\"}"}' '{"status": 500}' '{"body": "{\"tokens\": 5}"}'; do
	fake_stop
	printf '{"default": [{"answer": {"findings": []}, "usage": {"in": "auto", "out": 300}}], "tokenize": %s}\n' "$rule" >"$TMP/s3.json"
	fake_start "$TMP/s3.json"
	{
		voter a openai ma price-in=3 price-out=15 max-tokens=1000
		voter b openai mb price-in=3 price-out=15 max-tokens=1000
	} >"$TMP/config"
	rm -rf "$TMP/state3"
	XDG_STATE_HOME=$TMP/state3 run "$QUORUM" ci -C "$R" --range base..HEAD --budget "$B" --format json
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["reviews"][0]
assert r["plan"]["counted"] == 0, r["plan"]
assert r["cost"]["est_tokens_in"] > 3 * r["cost"]["tokens_in"], r["cost"]
' "$TMP/out"
	ok $? "a counter answering $rule is not believed: bytes bound the input"
	awk -v s="$(spent)" -v b="$B" 'BEGIN { exit !(s <= b + 1e-9) }'
	ok $? "and the budget holds (\$$(spent) of \$$B)"
done

# Anthropic's count_tokens: the request less max_tokens and temperature.
fake_stop
cat >"$TMP/s4.json" <<'EOS'
{"default": [{"answer": {"findings": []}, "usage": {"in": "auto", "out": 300}}],
 "count_tokens": {}}
EOS
fake_start "$TMP/s4.json"
{
	voter c anthropic mc price-in=3 price-out=15 max-tokens=1000
	voter d anthropic md price-in=3 price-out=15 max-tokens=1000 count-tokens=none
} >"$TMP/config"
XDG_STATE_HOME=$TMP/state4 run "$QUORUM" ci -C "$R" --range base..HEAD --budget "$B" --format json
ok "$(grep -l '^POST /v1/messages/count_tokens$' "$REC.tok"/* | wc -l | tr -d ' ' | grep -qx 11; echo $?)" "count_tokens: one per request of the counting voter, none for count-tokens = none"
f=$(ls "$REC.tok" | head -1)
unlike "$REC.tok/$f" 'max_tokens' "the count request has no max_tokens"
like "$REC.tok/$f" '"system":' "and has the system prompt"
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["reviews"][0]
assert r["plan"]["counted"] == 11, r["plan"]
' "$TMP/out"
ok $? "the Anthropic voter's inputs are counted, the other's are bytes"
printf '[voter "x"]\n\tprovider = openai\n\turl = http://127.0.0.1:1/v1\n\tmodel = m\n\tcount-tokens = bytes\n' >"$TMP/config"
run "$QUORUM" ci -C "$R" --range base..HEAD --budget 1
is "$rc" 2 "a bad count-tokens is a config error (exit 2, as every malformed config)"
like "$TMP/err" "count-tokens = 'bytes' is not auto, anthropic, tokenize or none" "that says what it may be"

# Several runs of commits (a merge splits the range): under the budget
# the money goes to the riskiest run first (no history index here: the
# one that changes the most lines), not to the oldest.
fake_stop
fake_start "$TMP/s.json"
R2=$TMP/runs
make_repo "$R2"
git -C "$R2" tag base
git -C "$R2" checkout -q -b side
{
	printf 'int big(int *v, int n)\n{\n'
	i=0
	while [ $i -lt 60 ]; do
		printf '\tv[%d %% n] += v[(%d + 1) %% n] * %d;\n' $i $i $i
		i=$((i + 1))
	done
	printf '\treturn 0;\n}\n'
} >"$R2/big.c"
git -C "$R2" add big.c && git -C "$R2" commit -q -m "big: add big()"
git -C "$R2" checkout -q main
for i in 1 2 3; do
	printf 'int s%d(void)\n{\n\treturn %d;\n}\n' $i $i >"$R2/s$i.c"
	git -C "$R2" add "s$i.c" && git -C "$R2" commit -q -m "small: add s$i()"
done
git -C "$R2" merge -q --no-edit side
{
	voter a openai ma price-in=3 price-out=15 max-tokens=400
	voter b openai mb price-in=3 price-out=15 max-tokens=400
} >"$TMP/config"
XDG_STATE_HOME=$TMP/state6 run "$QUORUM" ci -C "$R2" --range base..HEAD --budget 0.03
is "$rc" 0 "two runs under a budget for one: the range is reviewed"
like "$TMP/err" '^quorum ci: under the budget, 2 runs of commits are reviewed riskiest first: [0-9a-f]{12}, [0-9a-f]{12}$' "ci says the runs go riskiest first"
is "$(grep -l 'big\.c' "$REC"/*.json | wc -l | tr -d ' ')" 2 "both voters reviewed the big commit"
is "$(grep -L 'big\.c' "$REC"/*.json | wc -l | tr -d ' ')" 0 "the small ones got what was left: nothing"
awk -v s="$(spent)" 'BEGIN { exit !(s <= 0.03 + 1e-9) }'
ok $? "within the budget (\$$(spent) of \$0.03)"
first=$(sed -n 's/^quorum review: //p' "$TMP/out" | head -1)
is "$first" "small: add s1()" "the report keeps the range's order"

# SIGKILL during a planned spend, then run again: a monthly cap of 40%
# of X is never passed, by the server's own usage.
fake_stop
cat >"$TMP/s5.json" <<'EOS'
{"default": [{"answer": {"findings": []}, "usage": {"in": "auto", "out": 300}, "delay": 0.3}],
 "tokenize": {}}
EOS
FAKE_TIMEOUT=200 fake_start "$TMP/s5.json"
CAP=$(awk -v x="$X" 'BEGIN { printf "%.6f", x * 0.4 }')
{
	voter a openai ma price-in=3 price-out=15 max-tokens=1000
	voter b openai mb price-in=3 price-out=15 max-tokens=1000
	printf '[budget]\n\tmonthly = %s\n' "$CAP"
} >"$TMP/config"
kills=0
seed=6040
for k in 1 2 3 4 5 6; do
	seed=$((seed + 1))
	XDG_STATE_HOME=$TMP/state5 "$QUORUM" ci -C "$R" --range base..HEAD \
		>/dev/null 2>&1 &
	pid=$!
	d=$(awk -v s=$seed 'BEGIN { srand(s); printf "%.2f", 0.2 + rand() * 1.2 }')
	sleep "$d"
	kill -9 $pid 2>/dev/null && kills=$((kills + 1))
	wait $pid 2>/dev/null
done
XDG_STATE_HOME=$TMP/state5 run "$QUORUM" ci -C "$R" --range base..HEAD
ok "$([ $kills -ge 3 ]; echo $?)" "quorum was killed during its spend ($kills times)"
awk -v s="$(spent)" -v c="$CAP" 'BEGIN { exit !(s <= c + 1e-9) }'
ok $? "what the server billed stays under the monthly cap: \$$(spent) of \$$CAP"

done_testing
