#!/bin/sh
# issue 8: 100 reviews by three concurrent voters, four reviews at a
# time, under a daily cap of 40% of what they would cost: the ledger and
# the fake server's own usage both stay at or under the cap, reviews go
# on with the offline voters and say why; `quorum cost` totals equal the
# server's usage times the prices; step-down drops the most expensive
# voter, or leaves a review to the offline voters, and says so.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/llm.sh"

R=$TMP/repo
make_repo "$R"
git -C "$R" tag base
commit_functions "$R" 100
git -C "$R" format-patch -q -N -o "$TMP/p" base..HEAD
is "$(ls "$TMP/p" | wc -l | tr -d ' ')" 100 "100 patches to review"

# Every answer reports 1500 tokens in, 300 out: $0.009 at 3/15 per M.
cat >"$TMP/s.json" <<'EOS'
{"default": [{"answer": {"findings": []}, "usage": {"in": 1500, "out": 300}, "delay": 0.02}]}
EOS
FAKE_TIMEOUT=120 fake_start "$TMP/s.json"
CAP=1.08 # 40% of 300 requests at $0.009
{
	voter a openai ma price-in=3 price-out=15 max-tokens=400
	voter b openai mb price-in=3 price-out=15 max-tokens=400
	voter c anthropic mc price-in=3 price-out=15 max-tokens=400
	printf '[list "netdev"]\n\tbudget-per-day = %s\n' $CAP
} >"$TMP/config"
export QUORUM_CONFIG=$TMP/config

cat >"$TMP/one.sh" <<EOS
#!/bin/sh
"$QUORUM" review -C "$R" --base base --list netdev "\$1" \
	>"\$1.out" 2>"\$1.err"
echo \$? >"\$1.rc"
EOS
ls "$TMP"/p/*.patch | xargs -P 4 -n 1 sh "$TMP/one.sh"

is "$(cat "$TMP"/p/*.rc | sort -u | tr '\n' ' ')" "0 " "all 100 reviews complete"
n_budget=$(grep -l 'abstained on patch 1/1: budget\|^step-down: budget short: .* left under the daily budget of list netdev' "$TMP"/p/*.out | wc -l)
ok $([ "$n_budget" -gt 0 ] && echo 0 || echo 1) "reviews past the cap say the voters abstained for the budget ($n_budget)"
like "$(ls "$TMP"/p/*.out | tail -1)" 'budget: \$[0-9.]+ left today of \$1\.08 for list netdev' "the footer says what is left today"

# What the server says was spent, priced.
spent=$(cat "$REC"/*.usage | awk '{ s += $1 * 3 / 1e6 + $2 * 15 / 1e6 } END { printf "%.6f", s }')
nreq=$(ls "$REC"/*.usage | wc -l | tr -d ' ')
awk -v s="$spent" -v c="$CAP" 'BEGIN { exit !(s <= c + 1e-9) }'
ok $? "the server's usage stays under the cap: \$$spent of \$$CAP ($nreq requests)"
awk -v s="$spent" 'BEGIN { exit !(s >= 0.6) }'
ok $? "the budget is used, not refused wholesale (\$$spent)"

run "$QUORUM" cost
is "$rc" 0 "quorum cost runs"
ledger=$(sed -n 's/^total: .*\$\([0-9.]*\)$/\1/p' "$TMP/out")
is "$ledger" "$spent" "quorum cost total equals the server's usage times the prices"
like "$TMP/out" "^total: $nreq requests, $((nreq * 1500)) tokens in, $((nreq * 300)) out" "requests and tokens are counted"
unlike "$TMP/out" '^reserved' "no reservation is left open"
run "$QUORUM" cost --by voter
like "$TMP/out" '^a  +[0-9]+ ' "by voter: a"
like "$TMP/out" '^c  +[0-9]+ ' "by voter: c (the anthropic API's usage)"
sum=$(awk '$1 ~ /^[abc]$/ { s += $5 } END { printf "%.6f", s }' "$TMP/out")
is "$sum" "$spent" "the voters' rows add up to the total"
run "$QUORUM" cost --by list --since "$(date -u +%Y-%m-%d)"
like "$TMP/out" "^netdev +$nreq " "by list, since today"
run "$QUORUM" cost --by day
like "$TMP/out" "^$(date -u +%Y-%m-%d) +$nreq " "by day"
run "$QUORUM" cost --by month
is "$rc" 2 "a bad --by is a usage error"
run "$QUORUM" cost --since yesterday
is "$rc" 2 "a bad --since is a usage error"

# A patch reviewed before costs nothing: its answers come from the cache.
run "$QUORUM" review -C "$R" --base base --list netdev "$(ls "$TMP"/p/*.patch | head -1)"
like "$TMP/out" '^cost: \$0\.0000 \(0 requests, .*3 answers reused from the cache at no cost' "a patch seen before is answered from the cache"
# The ledger is what the daily budget sees: one more review is refused.
run "$QUORUM" review -C "$R" --base base --list netdev --no-cache "$(ls "$TMP"/p/*.patch | head -1)"
is "$rc" 0 "a review past the cap still completes"
like "$TMP/out" 'not sent: over budget' "and its cost line says why nothing was sent"
is "$(ls "$REC"/*.usage | wc -l | tr -d ' ')" "$nreq" "no request went out past the cap"

# Step-down: a per-review budget that holds two voters' worst case but
# not three drops the most expensive voter (the quorum of 2 holds).
fake_stop
fake_start "$TMP/s.json"
rm -rf "$XDG_STATE_HOME"
{
	voter a openai ma price-in=3 price-out=15 max-tokens=400
	voter b openai mb price-in=3 price-out=15 max-tokens=400
	voter c openai mc price-in=30 price-out=150 max-tokens=400
	printf '[review]\n\tbudget-per-review = 0.06\n'
} >"$TMP/config"
run "$QUORUM" review -C "$R" --base base "$TMP/p/0001-f1-add-f1.patch"
is "$rc" 0 "step-down: the review completes"
like "$TMP/out" '^step-down: budget short: \$0\.0600 left under the budget per review, .*dropped the most expensive voter\(s\) c, the quorum can still be met' "step-down says the most expensive voter was dropped, and why"
is "$(requests mc)" 0 "the expensive voter was not asked"
is "$(requests ma)$(requests mb)" 11 "the others were"

# A budget that holds four of eight requests of a 3-patch series, with
# no voter to spare: the series tip and the last patch are left out.
# The answers (300 tokens) are as long as max-tokens, so each costs its
# bound and no money is left over for a fifth.
git -C "$R" format-patch -q -o "$TMP/s3" HEAD~3..HEAD
cat "$TMP"/s3/*.patch >"$TMP/s3.mbox"
{
	voter a openai ma price-in=0 price-out=15 max-tokens=300
	voter b openai mb price-in=0 price-out=15 max-tokens=300
	printf '[review]\n\tbudget-per-review = 0.02\n'
} >"$TMP/config"
before=$(ls "$REC" | grep -c 'json$')
run "$QUORUM" review -C "$R" --base HEAD~3 "$TMP/s3.mbox"
is "$rc" 0 "step-down to fewer patches: the review completes"
like "$TMP/out" '^step-down: budget short: .*reviewed only the first patches, with no history index to rank them by risk \(left out: the series tip, 3/3\)' "the report says which patches were left out, and why"
is "$(($(ls "$REC" | grep -c 'json$') - before))" 4 "four requests went out"
is "$(cat "$REC"/*.json | grep -c 'f100\.c')" 0 "none about the patch left out"
like "$TMP/out" 'a abstained on patch 3/3: budget: a lower-risk patch' "the voters abstain on it for the budget"

# One voter (nothing to drop) and a patch inside a 250-line function:
# a budget of 75% of the request's worst case shrinks its context.
B=$TMP/big
make_repo "$B"
{
	printf 'int big(int x)\n{\n'
	i=0
	while [ $i -lt 250 ]; do
		printf '\tx += %d * x + %d;\n' $i $i
		i=$((i + 1))
	done
	printf '\treturn x;\n}\n'
} >"$B/big.c"
git -C "$B" add big.c && git -C "$B" commit -q -m "big: add big()"
sed 's/x += 120 \* x + 120;/x += 121 * x + 120;/' "$B/big.c" >"$B/big.tmp"
mv "$B/big.tmp" "$B/big.c"
git -C "$B" commit -q -am "big: change one step"
git -C "$B" format-patch -q -o "$TMP/bp" -1
voter a openai ma price-in=3 price-out=0 max-tokens=400 >"$TMP/config"
before=$(ls "$REC" | grep 'json$' | tail -1)
run "$QUORUM" review -C "$B" --base HEAD~1 "$TMP"/bp/*.patch
full=$(wc -c <"$REC/$(ls "$REC" | grep 'json$' | tail -1)")
budget=$(awk -v b="$full" 'BEGIN { printf "%.6f", b * 3 / 1e6 * 0.75 }')
printf '[review]\n\tbudget-per-review = %s\n' "$budget" >>"$TMP/config"
run "$QUORUM" review -C "$B" --base HEAD~1 --no-cache "$TMP"/bp/*.patch
is "$rc" 0 "step-down to less context: the review completes"
like "$TMP/out" '^step-down: budget short: .*; shrank the context to [0-9]+%$' "the report says the context was shrunk to fit"
small=$(wc -c <"$REC/$(ls "$REC" | grep 'json$' | tail -1)")
awk -v s="$small" -v f="$full" 'BEGIN { exit !(s * 3 / 1e6 <= f * 3 / 1e6 * 0.75) }'
ok $? "the smaller request ($small of $full bytes) fits the budget"
like "$TMP/out" '^models: 1 asked, 1 answered' "and the model was asked"

# A budget that holds no request: the offline voters vote alone.
printf '[review]\n\tbudget-per-review = 0.001\n' >>"$TMP/config"
run "$QUORUM" review -C "$R" --base base "$TMP/p/0002-f2-add-f2.patch"
is "$rc" 0 "no request fits: the review completes"
like "$TMP/out" 'step-down: .*no request fits: only the offline voters voted' "the report says only the offline voters voted"
is "$(ls "$REC" | grep -c 'json$')" 8 "no request went out"

# A request that went out and got no answer may be billed: it is
# charged at its worst case. An HTTP error is not billed: released.
fake_stop
cat >"$TMP/s5.json" <<'EOS'
{"models": {"mt": [{"delay": 3}], "m5": [{"status": 500}]},
 "default": [{"answer": {"findings": []}, "usage": {"in": 1500, "out": 300}}]}
EOS
fake_start "$TMP/s5.json"
rm -rf "$XDG_STATE_HOME"
{
	voter a openai ma price-in=3 price-out=15 max-tokens=400
	voter t openai mt price-in=3 price-out=15 max-tokens=400 timeout=0.5
	voter e openai m5 price-in=3 price-out=15 max-tokens=400
	printf '[review]\n\tretries = 0\n'
} >"$TMP/config"
run "$QUORUM" review -C "$R" --base base "$TMP/p/0003-f3-add-f3.patch"
like "$TMP/out" 't abstained on patch 1/1: timed out' "the slow voter timed out"
worst=$(wc -c <"$REC/$(ls "$REC" | grep -- '-mt\.json$')" |
	awk '{ printf "%.6f", $1 * 3 / 1e6 + 400 * 15 / 1e6 }')
run "$QUORUM" cost --by voter
like "$TMP/out" "^t +1 +0 +0 +$worst\$" "the timed-out request is charged its worst case (\$$worst)"
unlike "$TMP/out" '^e ' "the request answered with HTTP 500 is not charged"
like "$TMP/out" "^of which \\\$$worst charged at the worst case" "quorum cost says how much was assumed"

# A damaged state db: one line saying what to do, exit 3.
rm -rf "$XDG_STATE_HOME"
mkdir -p "$XDG_STATE_HOME/quorum"
head -c 4096 /dev/urandom >"$XDG_STATE_HOME/quorum/state.db"
run "$QUORUM" review -C "$R" --base base "$TMP/p/0002-f2-add-f2.patch"
is "$rc" 3 "a damaged state db is an environment error"
like "$TMP/err" 'state\.db is damaged .*move it aside' "the error says what to do"
is "$(lines "$TMP/err")" 1 "in one line"

done_testing
