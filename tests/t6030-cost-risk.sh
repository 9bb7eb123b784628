#!/bin/sh
# issue 8 step-down, third step: with a history index, a budget that
# holds one patch of a two-patch series reviews the riskier one (a big
# feature like those that needed fixes here), not the first one (a docs
# note), and the report says so.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/llm.sh"

R=$TMP/repo
mkdir -p "$R" && git -C "$R" init -q
cd "$R" || exit 1
n=0
day() {
	n=$((n + 1))
	export GIT_COMMITTER_DATE="$((1500000000 + n * 86400 * 20)) +0000"
	export GIT_AUTHOR_DATE="$GIT_COMMITTER_DATE"
}
feature() {
	echo "int feature_$1(int *v, int n)"
	echo "{"
	j=0
	while [ $j -lt "$2" ]; do
		echo "	v[$j % n] += feature_helper_$1(v, n, $j);"
		j=$((j + 1))
	done
	echo "	return 0;"
	echo "}"
}
echo "notes" >notes.txt
day; git add notes.txt && git commit -q -m "initial"
# Big features needed fixes later; small tidy-ups did not.
i=0
while [ $i -lt 12 ]; do
	day; feature $i 60 >"feat$i.c"
	git add "feat$i.c" && git commit -q -m "feat: add feature $i"
	eval "F$i=\$(git rev-parse HEAD)"
	day; echo "/* tidy $i */" >>notes.txt
	git commit -q -am "docs: tidy $i"
	i=$((i + 1))
done
i=0
while [ $i -lt 12 ]; do
	if [ $((i % 2)) -eq 0 ]; then
		day
		eval "f=\$F$i"
		sed -i 's/return 0;/return n ? 0 : -1;/' "feat$i.c"
		git commit -q -am "feat: fix feature $i" -m "Fixes: $(git rev-parse --short=12 "$f") (\"feat: add feature $i\")"
	fi
	i=$((i + 1))
done
git tag base
"$QUORUM" index -C "$R" >/dev/null 2>&1
ok $? "the history index is built"

# The series: 1/2 a docs note, 2/2 a big feature.
day; echo "/* one more note */" >>notes.txt
git commit -q -am "docs: one more note"
day; feature big 80 >big.c
git add big.c && git commit -q -m "feat: add the big feature"
git format-patch -q -o "$TMP/s" base..HEAD
cat "$TMP"/s/*.patch >"$TMP/s.mbox"
git reset -q --hard base
cd "$TMP" || exit 1

# Answers as long as max-tokens: each costs its bound, so what the
# budget holds is known before (answers that settle below their bound
# leave money for more requests, riskiest first: t6040).
cat >"$TMP/s.json" <<'EOS'
{"default": [{"answer": {"findings": []}, "usage": {"in": 100, "out": 400}}]}
EOS
fake_start "$TMP/s.json"
{
	voter a openai ma price-in=0 price-out=15 max-tokens=400
	voter b openai mb price-in=0 price-out=15 max-tokens=400
	printf '[review]\n\tbudget-per-review = 0.013\n'
} >"$TMP/config"
export QUORUM_CONFIG=$TMP/config

run "$QUORUM" review -C "$R" --base base "$TMP/s.mbox"
is "$rc" 0 "the review completes"
r1=$(sed -n 's/^  1\/2  risk \([0-9.]*\).*/\1/p' "$TMP/out")
r2=$(sed -n 's/^  2\/2  risk \([0-9.]*\).*/\1/p' "$TMP/out")
awk -v a="$r2" -v b="$r1" 'BEGIN { exit !(a > b) }'
ok $? "the feature ($r2) is riskier than the note ($r1)"
like "$TMP/out" '^step-down: budget short: .*reviewed only the highest-risk patches \(left out: the series tip, 1/2\)' "the riskier patch is reviewed, and the report says so"
is "$(requests ma) $(requests mb)" "1 1" "one request per voter"
ok "$(grep -l 'big\.c' "$REC"/*.json | wc -l | tr -d ' ' | grep -qx 2; echo $?)" "both about the big feature"
ok "$(grep -l 'notes\.txt' "$REC"/*.json | wc -l | tr -d ' ' | grep -qx 0; echo $?)" "none about the docs note"

done_testing
