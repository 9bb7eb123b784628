#!/bin/sh
# issue 8: a v2 of a 5-patch series with 3 unchanged patches makes
# requests only for the 2 changed ones, and the unchanged patches keep
# their findings at no cost; a RESEND or a re-post to another list asks
# nothing; new prompts or --no-cache ask again.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/llm.sh"

R=$TMP/repo
make_repo "$R"
git -C "$R" tag base

# series VERSION DIR: five patches, each adding a1.c..a5.c; in v2
# patches 2 and 4 change.
series() {
	git -C "$R" checkout -q -B "v$1" base
	for i in 1 2 3 4 5; do
		body="return x + $i;"
		if [ "$1" = 2 ] && { [ $i = 2 ] || [ $i = 4 ]; }; then
			body="return x * $i;"
		fi
		printf 'int a%d(int x)\n{\n\t%s\n}\n' $i "$body" >"$R/a$i.c"
		git -C "$R" add "a$i.c"
		git -C "$R" commit -q -m "a$i: add a$i()"
	done
	git -C "$R" format-patch -q --cover-letter -v "$1" -o "$2" base..HEAD
	cat "$2"/*.patch >"$2.mbox"
}
series 1 "$TMP/v1"
series 2 "$TMP/v2"

cat >"$TMP/s.json" <<'EOS'
{"default": [
 {"when": "the series tip", "answer": {"findings": []}},
 {"when": "a1.c", "answer": {"findings": [{"file": "a1.c", "line_start": 3, "severity": "high", "category": "overflow", "title": "x + 1 can overflow", "quote": "return x + 1;"}]}},
 {"answer": {"findings": []}}
]}
EOS
fake_start "$TMP/s.json"
{
	voter a openai ma price-in=3 price-out=15
	voter b anthropic mb price-in=3 price-out=15
	printf '[list "other"]\n\tbudget-per-day = 5\n'
} >"$TMP/config"
export QUORUM_CONFIG=$TMP/config

review() {
	run "$QUORUM" review -C "$R" --base base "$@"
}

review "$TMP/v1.mbox"
is "$rc" 1 "v1: the finding on patch 1 is at quorum"
is "$(requests ma) $(requests mb)" "6 6" "v1: five patches and the series tip, per voter"
like "$TMP/out" 'a1\.c:3 .*patch 1/5' "v1: the finding points at a1.c"

before=$(ls "$REC" | grep -c 'json$')
review "$TMP/v2.mbox"
is "$rc" 1 "v2: the unchanged patch keeps its finding"
like "$TMP/out" 'a1\.c:3 .*patch 1/5' "v2: the finding comes from the cache"
like "$TMP/out" 'votes: 2/2 \(a, b\)' "v2: both voters' cached answers vote"
is "$(($(ls "$REC" | grep -c 'json$') - before))" 4 "v2: four requests, two voters on two changed patches"
new=$(ls "$REC" | grep 'json$' | tail -4)
n2=0
n4=0
for f in $new; do
	grep -q 'a1\.c\|a3\.c\|a5\.c' "$REC/$f" && continue
	grep -q 'a2\.c' "$REC/$f" && n2=$((n2 + 1))
	grep -q 'a4\.c' "$REC/$f" && n4=$((n4 + 1))
done
is "$n2 $n4" "2 2" "v2: the requests are about patches 2 and 4 only"
like "$TMP/out" '^cost: \$[0-9.]+ \(4 requests, .*6 answers reused from the cache at no cost' "v2: the report says six answers were reused at no cost"
like "$TMP/out" 'the series tip \(a, b\): not asked again, 3 patches unchanged' "v2: the series tip is not paid for again, and it says so"

# A RESEND (the same mail again), or a re-post to another list.
sed 's/^Subject: \[PATCH v1/Subject: [PATCH RESEND v1/' "$TMP/v1.mbox" >"$TMP/resend.mbox"
before=$(ls "$REC" | grep -c 'json$')
review --list other "$TMP/resend.mbox"
is "$rc" 1 "RESEND to another list: the finding is reported"
is "$(ls "$REC" | grep -c 'json$')" "$before" "RESEND to another list: no request at all"
like "$TMP/out" '^cost: \$0\.0000 \(0 requests' "RESEND: it cost nothing"

# New prompts are a new review; so is --no-cache.
cp -r "$TOP/prompts" "$TMP/prompts"
echo "Also check integer overflow." >>"$TMP/prompts/review.md"
QUORUM_PROMPTS=$TMP/prompts review "$TMP/v1.mbox"
is "$(($(ls "$REC" | grep -c 'json$') - before))" 12 "changed prompts: every patch is asked again"
before=$(ls "$REC" | grep -c 'json$')
review --no-cache "$TMP/v2.mbox"
is "$(($(ls "$REC" | grep -c 'json$') - before))" 12 "--no-cache: every patch is asked again"

done_testing
