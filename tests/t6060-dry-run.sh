#!/bin/sh
# issue 18: know before you spend. `quorum review --dry-run` and
# `quorum ci --dry-run` print the exact requests the LLM voters would
# get (or write them to DIR with --dry-run=DIR), their token bounds and
# prices and the totals per voter, and send the models nothing (only
# their free token counters may be asked, and the output says so).
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/llm.sh"

R=$TMP/repo
make_repo "$R"
git -C "$R" tag base
commit_sum_ids "$R"
commit_item_new "$R"
git -C "$R" format-patch -q -o "$TMP/p" base..HEAD
cat "$TMP"/p/*.patch >"$TMP/s.mbox"

cat >"$TMP/s.json" <<'EOS'
{"default": [{"answer": {"findings": []}, "usage": {"in": "auto", "out": 300}}],
 "tokenize": {}}
EOS
fake_start "$TMP/s.json"
{
	voter a openai ma price-in=3 price-out=15 max-tokens=1000
	voter b openai mb price-in=1 price-out=5 max-tokens=500 count-tokens=none
} >"$TMP/config"
export QUORUM_CONFIG=$TMP/config

run "$QUORUM" review -C "$R" --base base --dry-run "$TMP/s.mbox"
is "$rc" 0 "review --dry-run exits 0"
is "$(ls "$REC" | grep -c 'json$')" 0 "no request went to the models"
like "$TMP/out" '^dry run: no request is sent to the models; only their free token counters' "it says nothing is sent, and what may be asked"
is "$(grep -c '^request [0-9]*: voter ' "$TMP/out")" 6 "six requests: two voters x (two patches + the tip)"
like "$TMP/out" '^request 1: voter a, patch 1/2, POST http://127\.0\.0\.1:[0-9]+/v1/chat/completions$' "each says voter, patch and endpoint"
like "$TMP/out" '^  input: [0-9]+ tokens at most \(counted by the voter.s counter; [0-9]+ bytes\), max-tokens 1000: at most \$[0-9.]+, about \$[0-9.]+$' "a counted input, max-tokens and prices"
like "$TMP/out" '^  input: [0-9]+ tokens at most \(a token per byte, no counter; [0-9]+ bytes\), max-tokens 500' "count-tokens = none: bytes"
like "$TMP/out" '^\{"model":"ma","max_tokens":1000,.*"messages":\[\{"role":"system","content":".*"role":"user","content":".*item_new' "the exact request body is printed"
like "$TMP/out" '^voter a: 3 requests, at most \$[0-9.]+, about \$[0-9.]+$' "the total of voter a"
like "$TMP/out" '^voter b: 3 requests, at most \$[0-9.]+, about \$[0-9.]+$' "the total of voter b"
like "$TMP/out" '^total: 6 requests, at most \$[0-9.]+, about \$[0-9.]+; nothing was sent$' "and in all"
unlike "$TMP/out" '^plan:' "no cap: no plan"

# The request printed is the one a real run sends (its boundary aside).
sed -n 's/^\({"model":"ma".*\)$/\1/p' "$TMP/out" | head -1 >"$TMP/dry1.json"
run "$QUORUM" review -C "$R" --base base "$TMP/s.mbox"
norm() { sed 's/[0-9a-f]\{32\}/BOUNDARY/g' "$1"; }
norm "$TMP/dry1.json" >"$TMP/d.n"
found=1
for real in "$REC"/*-ma.json; do
	norm "$real" >"$TMP/r.n"
	printf '\n' >>"$TMP/r.n"
	cmp -s "$TMP/d.n" "$TMP/r.n" && found=0
done
test $found = 0
ok $? "the dry run's first request is the one a real run sends"
rm -f "$REC"/*

# --dry-run=DIR: the bodies in files, under a cap: the plan is said.
printf '[review]\n\tbudget-per-review = 0.01\n' >>"$TMP/config"
run "$QUORUM" review -C "$R" --base base --no-cache --dry-run="$TMP/dry" "$TMP/s.mbox"
is "$rc" 0 "review --dry-run=DIR exits 0"
is "$(ls "$TMP/dry" | wc -l | tr -d ' ')" 6 "six request bodies in DIR"
like "$TMP/out" "^  body: $TMP/dry/0001-a\\.json$" "each named in the output"
python3 -c 'import json, sys; [json.load(open(f)) for f in sys.argv[1:]]' "$TMP"/dry/*.json
ok $? "each is the JSON body"
like "$TMP/out" '^plan: \$0\.0100 left under the budget per review; [0-9]+ of 6 requests fit at once' "the plan under the cap"
like "$TMP/out" '\(not in the plan: over budget\)' "what the plan leaves out says so"
is "$(ls "$REC" | grep -c 'json$')" 0 "still no request to the models"
ok "$([ "$(ls "$REC.tok" | wc -l)" -gt 0 ]; echo $?)" "the free token counter was asked"

# JSON: the report carries the dry run.
run "$QUORUM" review -C "$R" --base base --no-cache --dry-run --format json "$TMP/s.mbox"
python3 - "$TMP/out" <<'EOP'
import json, sys
r = json.load(open(sys.argv[1]))["reviews"][0]
d = r["dry_run"]
assert len(d) == 6, d
assert {x["voter"] for x in d} == {"a", "b"}
assert all(x["worst"] >= x["estimate"] > 0 for x in d), d
assert r["cost"]["requests"] == 0, r["cost"]
EOP
ok $? "JSON: dry_run lists the six requests, none sent"

# ci --dry-run; an answer in the cache would not be asked for again:
# a fresh state db.
XDG_STATE_HOME=$TMP/state2 run "$QUORUM" ci -C "$R" --range base..HEAD --dry-run
is "$rc" 0 "ci --dry-run exits 0"
is "$(grep -c '^request [0-9]*: voter ' "$TMP/out")" 6 "ci: the six requests"
like "$TMP/out" '^total: 6 requests' "ci: the totals"
is "$(ls "$REC" | grep -c 'json$')" 0 "ci: no request to the models"
run "$QUORUM" ci -C "$R" --range base..HEAD --dry-run
like "$TMP/out" '^total: 0 requests' "answers in the cache: nothing would be sent"

# A voter whose context budget the patches are over would get nothing:
# the dry run says so, as the real run's abstentions would.
{
	cat "$TMP/config"
	voter small openai msmall price-in=1 price-out=5 context-tokens=256
} >"$TMP/config.small"
QUORUM_CONFIG=$TMP/config.small run "$QUORUM" review -C "$R" --base base --no-cache --dry-run "$TMP/s.mbox"
is "$rc" 0 "a voter over its context budget: the dry run exits 0"
is "$(grep -c '^not sent: voter small, \(patch [12]/2\|the series tip\): the patch does not fit in its context budget of 256 tokens' "$TMP/out")" 3 \
	"each request the voter would not get is said, with why"
like "$TMP/out" '^voter small: 0 requests, at most \$0\.0000, about \$0\.0000; 3 not sent' "its total says so"
like "$TMP/out" '^3 more requests would not be sent: a real run reviews without them$' "and the grand total"
QUORUM_CONFIG=$TMP/config.small run "$QUORUM" review -C "$R" --base base --no-cache --dry-run --format json "$TMP/s.mbox"
python3 - "$TMP/out" <<'EOP'
import json, sys
r = json.load(open(sys.argv[1]))["reviews"][0]
assert {x["voter"] for x in r["dry_run"]} == {"a", "b"}, r["dry_run"]
ab = [a for a in r["abstentions"] if a["voter"] == "small"]
assert len(ab) == 3, r["abstentions"]
assert all("context budget of 256 tokens" in a["reason"] for a in ab), ab
EOP
ok $? "JSON: the left-out requests are abstentions with their reason"
XDG_STATE_HOME=$TMP/state3 QUORUM_CONFIG=$TMP/config.small run "$QUORUM" ci -C "$R" --range base..HEAD --dry-run
like "$TMP/out" '^not sent: voter small, ' "ci --dry-run says so too"
is "$(ls "$REC" | grep -c 'json$')" 0 "still no request to the models"

done_testing
