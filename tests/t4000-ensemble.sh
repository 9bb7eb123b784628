#!/bin/sh
# LLM voters on the fake server: two of three models agree on a real
# defect and it is reported with its tally; one model's finding is not;
# invented files, lines and quotes are dropped and counted; a model that
# times out or answers garbage abstains and the review completes; 429,
# 500, resets, truncated and slow answers are retried; both APIs; keys.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/llm.sh"

R=$TMP/repo
make_repo "$R"
git -C "$R" tag base
cat >>"$R/main.c" <<'EOC'

int sum_ids(struct item *items, int n)
{
	int i, s = 0;

	for (i = 0; i <= n; i++)
		s += items[i].id;
	return s;
}
EOC
git -C "$R" commit -q -am "main: add sum_ids()"
git -C "$R" format-patch -q -o "$TMP/p1" -1 HEAD
BUG=$(grep -n 'i <= n' "$R/main.c" | cut -d: -f1)
OLD=$(grep -n 'i < n' "$R/main.c" | cut -d: -f1)

review() {
	QUORUM_CONFIG=$TMP/config run "$QUORUM" review -C "$R" --base base "$@"
}

# 1. Two of three agree (naming the category differently); the third
# speaks alone; invented file, line and quote.
cat >"$TMP/s1.json" <<EOS
{"models": {
 "ma": [{"answer": "Sure. Here is my review:\n\`\`\`json\n{\"findings\": [{\"file\": \"main.c\", \"line_start\": $BUG, \"line_end\": $((BUG + 1)), \"severity\": \"high\", \"category\": \"out-of-bounds\", \"title\": \"loop reads items[n], one past the end\", \"quote\": \"for (i = 0; i <= n; i++)\"}, {\"file\": \"nosuch.c\", \"line_start\": 3, \"severity\": \"high\", \"category\": \"leak\", \"title\": \"invented file\"}]}\n\`\`\`"}],
 "mb": [{"answer": {"findings": [{"file": "main.c", "line_start": $BUG, "severity": "medium", "category": "Buffer_Overflow", "title": "off-by-one: the loop reads past the end of items"}, {"file": "main.c", "line_start": 900, "severity": "high", "category": "leak", "title": "invented line"}]}}],
 "mc": [{"answer": {"findings": [{"file": "main.c", "line_start": $((BUG - 2)), "severity": "low", "category": "style", "title": "ONLY-MC-SAYS-THIS"}, {"file": "main.c", "line_start": $((BUG + 1)), "severity": "high", "category": "use-after-free", "title": "frees items twice", "quote": "free(items);"}]}}]
}}
EOS
fake_start "$TMP/s1.json"
{
	voter a openai ma key-env=KEY_A price-in=3 price-out=15
	voter b openai mb price-in=3 price-out=15
	voter c openai mc price-in=1 price-out=5
} >"$TMP/config"
export KEY_A=sk-test-SECRET-4242
start=$(date +%s.%N)
review "$TMP"/p1/*.patch
end=$(date +%s.%N)
# What a review with models that answer at once takes on this machine
# now: the time bounds below allow for it (a loaded machine is slow).
BASE=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.3f", e - s }')
# within LIMIT: the review took less than LIMIT + twice BASE, never more
# than CAP (the slow model's delay: reaching it proves nothing).
within() {
	awk -v s="$start" -v e="$end" -v l="$1" -v b="$BASE" -v c="$2" \
		'BEGIN { m = l + 2 * b; if (m > c) m = c; if (!(e - s < m)) print "# took " e - s " (limit " m ")"; exit !(e - s < m) }'
}
is "$rc" 1 "a finding at quorum exits 1"
like "$TMP/out" '^models: 3 asked, 3 answered$' "all three models answered"
like "$TMP/out" '^1 finding at quorum' "one finding at quorum"
# a says lines BUG..BUG+1, b line BUG: the narrower place, never wider.
like "$TMP/out" "main\.c:$BUG in sum_ids\(\), patch 1/1" "the finding points at the loop"
like "$TMP/out" 'votes: 2/3 \(a, b\)' "the tally says 2/3 and names the voters"
unlike "$TMP/out" 'ONLY-MC-SAYS-THIS' "a single model's finding is not reported"
like "$TMP/out" '^1 more below quorum' "it is kept below quorum"
like "$TMP/out" '^2 findings dropped: not on lines the patch has' "invented file and line dropped and counted"
like "$TMP/out" '^1 finding dropped: quoting code the post-image does not have' "invented quote dropped as a hallucination"
like "$TMP/out" 'cost: \$0\.0014 \(3 requests, 300 tokens in, 60 out\)' "usage of every request is added up and priced"
grep -q 'Bearer sk-test-SECRET-4242' "$REC"/*-ma.hdr
ok $? "the key is sent as a bearer token"
! grep -q 'SECRET-4242' "$TMP/out" "$TMP/err"
ok $? "the key is never printed"
like "$(ls "$REC"/*-ma.json | head -1)" '"max_tokens"' "openai request carries max_tokens"
fake_stop

# 2. One model times out, one answers garbage: both abstain, the review
# completes with the third.
cat >"$TMP/s2.json" <<EOS
{"models": {
 "ma": [{"answer": {"findings": [{"file": "main.c", "line_start": $BUG, "severity": "high", "category": "bounds", "title": "loop reads past the end"}]}}],
 "mb": [{"body": "<html>502 bad gateway</html> {not json"}],
 "mc": [{"delay": 3}],
 "md": [{"answer": "I looked at it and it seems fine to me."}],
 "me": [{"answer": "{\"findings\": [{\"file\": \"main.c\", \"line_st", "cut": true}]
}}
EOS
fake_start "$TMP/s2.json"
{
	voter a openai ma
	voter b openai mb
	voter c openai mc timeout=0.5
	voter d anthropic md key-env=KEY_A
	voter e openai me
	printf '[review]\n\tretries = 0\n'
} >"$TMP/config"
start=$(date +%s.%N)
review "$TMP"/p1/*.patch
end=$(date +%s.%N)
is "$rc" 1 "the review completes without the abstaining models"
like "$TMP/out" '^models: 5 asked, 1 answered, 4 abstained$' "abstentions are counted"
like "$TMP/out" 'e abstained on patch 1/1: invalid answer \(cut short at max-tokens; raise it\)' "an answer cut at max-tokens says so"
like "$TMP/out" 'c abstained on patch 1/1: timed out after 0\.5 s' "a timeout is an abstention, with the reason"
like "$TMP/out" 'b abstained on patch 1/1: garbage answer: the answer is not JSON' "garbage is an abstention, with the reason"
like "$TMP/out" 'd abstained on patch 1/1: invalid answer: the answer holds no JSON object' "prose without JSON is an abstention"
like "$TMP/out" 'votes: 1/1 \(a\)' "the quorum is a majority of those that answered"
within 2.2 2.9
ok $? "the slow model does not hold the review past its timeout"
like "$REC/$(ls "$REC" | grep -- '-md.hdr$')" '^x-api-key: sk-test-SECRET-4242' "anthropic: the key goes in x-api-key"
like "$REC/$(ls "$REC" | grep -- '-md.hdr$')" '^anthropic-version: ' "anthropic: the API version header"
like "$REC/$(ls "$REC" | grep -- '-md.hdr$')" '^POST /v1/messages' "anthropic: the messages endpoint"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert "system" in d and all(m["role"]=="user" for m in d["messages"])' "$REC"/*-md.json
ok $? "anthropic: instructions in system, data in the user message"
! grep -q 'SECRET-4242' "$TMP/out" "$TMP/err"
ok $? "the key is not in the report or errors"
fake_stop

# 3. Transport faults are retried: 429 with Retry-After, 500, a reset
# connection, a truncated body; a slow drip still arrives.
ANS='{"findings": [{"file": "main.c", "line_start": '$BUG', "severity": "high", "category": "bounds", "title": "loop reads past the end of items"}]}'
cat >"$TMP/s3.json" <<EOS
{"models": {
 "ma": [{"status": 429, "retry_after": "0.4", "times": 1}, {"answer": $ANS}],
 "mb": [{"status": 500, "times": 1}, {"reset": true, "times": 1}, {"answer": $ANS, "drip": 0.01}],
 "mc": [{"truncate": true, "times": 1}, {"answer": $ANS}]
}}
EOS
fake_start "$TMP/s3.json"
{
	voter a openai ma
	voter b openai mb
	voter c anthropic mc
	printf '[review]\n\tretries = 3\n\tbackoff = 0.1\n'
} >"$TMP/config"
start=$(date +%s.%N)
review "$TMP"/p1/*.patch
end=$(date +%s.%N)
is "$rc" 1 "faults retried: the finding is reported"
like "$TMP/out" '^models: 3 asked, 3 answered$' "every model answered in the end"
like "$TMP/out" 'votes: 3/3 \(a, b, c\)' "three votes"
is "$(requests ma)" 2 "429: asked again"
is "$(requests mb)" 3 "500 and a reset: asked again each time"
is "$(requests mc)" 2 "truncated answer: asked again"
awk -v s="$start" -v e="$end" 'BEGIN { exit !(e - s >= 0.4) }'
ok $? "Retry-After was honoured"
fake_stop

# 4. A model that never stops failing gives up after the retries.
cat >"$TMP/s4.json" <<EOS
{"models": {"ma": [{"status": 503}], "mb": [{"answer": $ANS}]}}
EOS
fake_start "$TMP/s4.json"
{
	voter a openai ma
	voter b openai mb
	printf '[review]\n\tretries = 2\n\tbackoff = 0.05\n'
} >"$TMP/config"
review "$TMP"/p1/*.patch
like "$TMP/out" 'a abstained on patch 1/1: HTTP 503 \(after 3 attempts\)' "gives up after the retries, says so"
is "$(requests ma)" 3 "one try and two retries"
fake_stop

# 5. Findings about code the patch did not touch are pre-existing.
cat >"$TMP/s5.json" <<EOS
{"models": {
 "ma": [{"answer": {"findings": [{"file": "main.c", "line_start": $OLD, "severity": "high", "category": "bounds", "title": "count_items trusts n", "quote": "for (i = 0; i < n; i++)"}]}}],
 "mb": [{"answer": {"findings": [{"file": "main.c", "line_start": $OLD, "severity": "high", "category": "bounds", "title": "n is not checked in count_items"}]}}]
}}
EOS
fake_start "$TMP/s5.json"
{
	voter a openai ma
	voter b openai mb
} >"$TMP/config"
review "$TMP"/p1/*.patch
is "$rc" 0 "a pre-existing problem is not a finding at quorum"
like "$TMP/out" '^1 finding about code the patch did not touch \(pre-existing, not mailed\)' "pre-existing findings are counted"
fake_stop

# 6. Key files: refused when others can read them, used when 0600.
printf 'sk-file-KEY-777\n' >"$TMP/key"
chmod 644 "$TMP/key"
cat >"$TMP/s6.json" <<EOS
{"models": {"ma": [{"answer": {"findings": []}}]}}
EOS
fake_start "$TMP/s6.json"
voter a openai ma key-file="$TMP/key" >"$TMP/config"
review "$TMP"/p1/*.patch
is "$rc" 3 "a group/world-readable key file is an environment error"
like "$TMP/err" 'key-file .*/key is readable by others \(mode 0644\); run chmod 600' "the error says how to fix it"
! grep -q 'KEY-777' "$TMP/out" "$TMP/err"
ok $? "the refused key is not printed"
chmod 600 "$TMP/key"
review "$TMP"/p1/*.patch
is "$rc" 0 "a 0600 key file is used"
grep -q 'Bearer sk-file-KEY-777' "$REC"/*-ma.hdr
ok $? "the key from the file is sent"
voter a openai ma key-env=NO_SUCH_KEY_VAR >"$TMP/config"
review "$TMP"/p1/*.patch
is "$rc" 3 "an unset key-env is an environment error"
like "$TMP/err" 'environment variable NO_SUCH_KEY_VAR \(key-env\) is not set' "and says which variable"
fake_stop

# 8. The review's deadline bounds everything; an answer over the size
# cap is cut off and abstains.
cat >"$TMP/s8.json" <<EOS
{"models": {"ma": [{"delay": 3, "answer": $ANS}], "mb": [{"answer": $ANS, "pad": 1100000}],
 "mc": [{"answer": $ANS}]}}
EOS
fake_start "$TMP/s8.json"
{
	voter a openai ma timeout=30
	voter b openai mb
	voter c openai mc
	printf '[review]\n\tdeadline = 0.7\n'
} >"$TMP/config"
start=$(date +%s.%N)
review "$TMP"/p1/*.patch
end=$(date +%s.%N)
like "$TMP/out" 'a abstained on patch 1/1: no answer within the review.s deadline of 0\.7 s' "the overall deadline ends a slow request"
like "$TMP/out" 'b abstained on patch 1/1: answer larger than 1048576 bytes' "an oversized answer is refused"
like "$TMP/out" 'votes: 1/1 \(c\)' "the review completes with the model that answered"
within 1.7 2.9
ok $? "the review ends at its deadline"
fake_stop

# 9. Weights: votes and the default quorum (a majority of the answered
# weight) count them; the prompts must be there.
cat >"$TMP/s9.json" <<EOS
{"models": {"ma": [{"answer": $ANS}], "mb": [{"answer": {"findings": []}}],
 "mc": [{"answer": {"findings": []}}], "md": [{"answer": $ANS}]}}
EOS
fake_start "$TMP/s9.json"
{
	voter a openai ma weight=2
	voter b openai mb
	voter c openai mc
} >"$TMP/config"
review "$TMP"/p1/*.patch
is "$rc" 0 "2 of 4 by weight is not a majority"
like "$TMP/out" 'a finding needs 3' "the default quorum is a majority of the answered weight"
review --quorum 2 "$TMP"/p1/*.patch
is "$rc" 1 "with --quorum 2 the heavy voter's finding is at quorum"
like "$TMP/out" 'votes: 2/4 \(a\)' "the tally counts weights"
voter d openai md weight=0.5 >>"$TMP/config"
review "$TMP"/p1/*.patch
like "$TMP/out" '^1 more below quorum' "2.5 of 4.5 is below a quorum of 3 (quorums are whole votes)"
sed -i 's/weight = 0.5/weight = 1/' "$TMP/config"
review "$TMP"/p1/*.patch
like "$TMP/out" 'votes: 3/5 \(a, d\)' "with another voter agreeing: 3 of 5"
is "$rc" 1 "and that is a majority"
(unset QUORUM_PROMPTS; review "$TMP"/p1/*.patch; echo "$rc" >"$TMP/rc")
is "$(cat "$TMP/rc")" 1 "without QUORUM_PROMPTS the prompts next to the binary are used"
QUORUM_PROMPTS=$TMP/nowhere review "$TMP"/p1/*.patch
is "$rc" 3 "missing prompts are an environment error"
like "$TMP/err" 'cannot read prompt file .*/nowhere/review\.md' "naming the file"
voter a openai ma weight=heavy >"$TMP/config"
review "$TMP"/p1/*.patch
is "$rc" 2 "a bad weight is refused as a config error (exit 2, as in every command)"
like "$TMP/err" 'voter "a": weight = .heavy. is not a number' "with the voter and key"
fake_stop

# 10. A voter's requests run at most max-parallel at once (a 3-patch
# series and its tip are 4 requests of 0.3 s each).
git -C "$R" checkout -q -b three
for f in one two; do
	echo "int $f;" >"$R/$f.c"
	git -C "$R" add "$f.c" && git -C "$R" commit -q -m "add $f"
done
git -C "$R" format-patch -q -o "$TMP/p10" base
cat >"$TMP/s10.json" <<EOS
{"default": [{"delay": 0.3, "answer": {"findings": []}}]}
EOS
fake_start "$TMP/s10.json"
voter a openai ma max-parallel=1 >"$TMP/config"
voter b openai mb >>"$TMP/config"
cat "$TMP"/p10/*.patch >"$TMP/p10.mbox"
start=$(date +%s.%N)
review "$TMP/p10.mbox"
end=$(date +%s.%N)
like "$TMP/out" '^models: 2 asked, 2 answered$' "both answered every request"
is "$(requests ma)" 4 "three patches and the tip"
awk -v s="$start" -v e="$end" 'BEGIN { d = e - s; if (!(d >= 1.2)) print "# took " d; exit !(d >= 1.2) }' &&
	within 2.7 6
ok $? "max-parallel = 1: one request after another"
python3 - "$REC" >"$TMP/overlap" <<'EOP'
import os, sys
# The fake server numbers requests as they arrive: b's 4 all arrive
# among the first 5, a's one by one.
names = sorted(os.listdir(sys.argv[1]))
order = [n.split("-", 1)[1].split(".")[0] for n in names if n.endswith(".json")]
print("ok" if order[:5].count("mb") == 4 else "order %s" % order)
EOP
is "$(cat "$TMP/overlap")" ok "the other voter's requests ran at once"
fake_stop
git -C "$R" checkout -q -

# 7. No [voter] section: offline voters only, as before.
: >"$TMP/config"
review "$TMP"/p1/*.patch
unlike "$TMP/out" '^models:' "no models without a [voter] section"
like "$TMP/out" 'cost: \$0\.00 \(offline voters only\)' "offline review costs nothing"

done_testing
