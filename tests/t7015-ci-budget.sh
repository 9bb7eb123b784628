#!/bin/sh
# quorum ci --budget with LLM voters (the fake LLM server): what the
# server reports as used never passes the budget, the range is reviewed
# to the end with the offline voters once money runs short, and the JSON
# says where the budget stopped the models.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/llm.sh"

R=$TMP/repo
make_repo "$R"
git -C "$R" tag base
commit_functions "$R" 12

# Every answer: 1500 tokens in, 300 out: $0.009 at 3/15 per M.
cat >"$TMP/s.json" <<'EOS'
{"default": [{"answer": {"findings": []}, "usage": {"in": 1500, "out": 300}}]}
EOS
fake_start "$TMP/s.json"
{
	voter a openai ma price-in=3 price-out=15 max-tokens=400
	voter b openai mb price-in=3 price-out=15 max-tokens=400
} >"$TMP/config"
export QUORUM_CONFIG=$TMP/config

BUDGET=0.06
run "$QUORUM" ci -C "$R" --range base..HEAD --budget $BUDGET --format json --output "$TMP/ci.json"
is "$rc" 0 "a range with no findings under a short budget exits 0"
like "$TMP/err" '12 commits reviewed' "every commit is reviewed"

nreq=$(ls "$REC"/*.usage 2>/dev/null | wc -l | tr -d ' ')
spent=$(cat "$REC"/*.usage 2>/dev/null | awk '{ s += $1 * 3 / 1e6 + $2 * 15 / 1e6 } END { printf "%.6f", s }')
ok "$([ "$nreq" -gt 0 ]; echo $?)" "the models were asked ($nreq requests)"
awk -v s="$spent" -v b="$BUDGET" 'BEGIN { exit !(s <= b + 1e-9) }'
ok $? "the server's usage stays under the budget: \$$spent of \$$BUDGET"
# At most 2 models x (12 patches + a tip per series).
ok "$([ "$nreq" -lt 24 ]; echo $?)" "not every request was sent ($nreq of 24)"

python3 - "$TMP/ci.json" "$spent" >"$TMP/py" 2>&1 <<'EOP'
import json, sys
revs = json.load(open(sys.argv[1]))["reviews"]
# The 12 commits follow each other but each has a topic of its own
# (f1:, f2:, ...): twelve one-patch series, not one series of 12.
assert len(revs) == 12 and sum(len(r["patches"]) for r in revs) == 12, len(revs)
usd = sum(r["cost"]["usd"] for r in revs)
assert abs(usd - float(sys.argv[2])) < 1e-6, (usd, sys.argv[2])
short = [r for r in revs
         if r["stepdown"] or r["cost"]["not_sent_budget"]
         or any("budget" in a["reason"] for a in r["abstentions"])]
assert short, "no review says the budget stopped the models"
# Once the money is gone, the reviews go on: the offline voters vote.
for r in revs:
    assert any(not v["llm"] for v in r["voters"]), r["voters"]
print("ok", len(short))
EOP
ok $? "JSON: the cost adds up to the server's usage, and the budget's stop is said ($(tail -1 "$TMP/py"))"
sed 's/^/# /' "$TMP/py" | grep -v '^# ok'

# A budget too small for one request: nothing is sent, the report is
# still written, and the run is an environment error (exit 3). A fresh
# state db: no answer cached by the run above.
rm -rf "$REC"/*
XDG_STATE_HOME=$TMP/state2 run "$QUORUM" ci -C "$R" --range base..HEAD --budget 0.0001 --format json --output "$TMP/none.json"
is "$rc" 3 "a budget exhausted before any request exits 3"
like "$TMP/err" 'the budget ran out before any model was asked' "and says so in one sentence"
is "$(ls "$REC" | wc -l | tr -d ' ')" 0 "the server got no request"
python3 -c '
import json, sys
revs = json.load(open(sys.argv[1]))["reviews"]
assert sum(len(r["patches"]) for r in revs) == 12
assert all(p["status"] == "applied" for r in revs for p in r["patches"])
' "$TMP/none.json"
ok $? "the report of the offline review is still written"

done_testing
