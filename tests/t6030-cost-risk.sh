#!/bin/sh
# issue 8 step-down, third step: with a history index, a budget that
# holds one patch of a two-patch series reviews the riskier one (a big
# feature like those that needed fixes here), not the first one (a docs
# note), and the report says so.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/llm.sh"
CLOCK_START=1500000000 CLOCK_STEP=$((86400 * 20))
. "$TOP/tests/lib/history.sh"

test_expect_success 'the history index is built' '
	history_repo &&
	echo "notes" >notes.txt &&
	tick && git add notes.txt && git commit -q -m "initial" &&
	# Big features needed fixes later; small tidy-ups did not.
	risk_history 12 &&
	git tag base &&
	"$QUORUM" index -C "$R"
'

test_expect_success 'setup: a series, 1/2 a docs note, 2/2 a big feature; two priced voters' '
	tick && echo "/* one more note */" >>notes.txt &&
	git commit -q -am "docs: one more note" &&
	tick && c_function feature_big feature_helper_big 80 >big.c &&
	git add big.c && git commit -q -m "feat: add the big feature" &&
	git format-patch -q -o "$TMP/s" base..HEAD &&
	cat "$TMP"/s/*.patch >"$TMP/s.mbox" &&
	git reset -q --hard base &&
	cd "$TMP" &&
	# Answers as long as max-tokens: each costs its bound, so what the
	# budget holds is known before (answers that settle below their
	# bound leave money for more requests, riskiest first: t6040).
	cat >"$TMP/s.json" <<-\EOS &&
	{"default": [{"answer": {"findings": []}, "usage": {"in": 100, "out": 400}}]}
	EOS
	fake_start "$TMP/s.json" &&
	{
		voter a openai ma price-in=0 price-out=15 max-tokens=400 &&
		voter b openai mb price-in=0 price-out=15 max-tokens=400 &&
		printf "[review]\n\tbudget-per-review = 0.013\n"
	} >"$TMP/config" &&
	export QUORUM_CONFIG=$TMP/config
'

test_expect_success 'the review completes' '
	run "$QUORUM" review -C "$R" --base base "$TMP/s.mbox" &&
	test "$rc" = 0
'
test_expect_success 'the feature is riskier than the note' '
	r1=$(sed -n "s/^  1\/2  risk \([0-9.]*\).*/\1/p" "$TMP/out") &&
	r2=$(sed -n "s/^  2\/2  risk \([0-9.]*\).*/\1/p" "$TMP/out") &&
	echo "feature $r2, note $r1" &&
	awk -v a="$r2" -v b="$r1" "BEGIN { exit !(a > b) }"
'
test_expect_success 'the riskier patch is reviewed, and the report says so' '
	test_grep "^step-down: budget short: .*reviewed only the highest-risk patches \(left out: the series tip, 1/2\)" "$TMP/out"
'
test_expect_success 'one request per voter' '
	test "$(requests ma) $(requests mb)" = "1 1"
'
test_expect_success 'both about the big feature' '
	grep -l "big\.c" "$REC"/*.json >"$TMP/about" &&
	test_line_count = 2 "$TMP/about"
'
test_expect_success 'none about the docs note' '
	! grep -l "notes\.txt" "$REC"/*.json
'

test_done
