#!/bin/sh
# classify offline: a history with release tags, fixes of shipped and
# unshipped bugs and the kernel's stable trailer convention. A fix of a
# shipped bug is a yes with the release named; a fix of a bug no release
# had, and a feature, are no. Formats, mail input, backport-branch
# labels, eval, and question config errors as one line with exit 2.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/history.sh"
. "$TOP/tests/lib/classify.sh"

export QUORUM_CONFIG=$TMP/config
: >"$QUORUM_CONFIG"

test_expect_success 'setup: releases, stable-Cc fixes, unshipped fixes' '
	classify_repo &&
	test -n "$SHIPPED" && test -n "$UNSHIPPED" && test -n "$FEATURE"
'

cl() {
	"$QUORUM" classify -C "$R" "$@"
}

test_expect_success 'a fix of a shipped bug: yes, exit 1, the release named' '
	test_expect_code 1 cl --stable "$SHIPPED" >out &&
	grep -E "^yes  [0-9.]+  ${SHIPPED%"${SHIPPED#????????????}"}" out &&
	grep "shipped in v1\.7" out &&
	grep "answer: YES" out &&
	grep "similar past commits:" out &&
	grep "\[yes\] .*beta: fix crash in feature" out
'

test_expect_success 'a fix of a bug no release had: no, and why' '
	cl --stable "$UNSHIPPED" >out &&
	grep -E "^no " out &&
	grep "never reached a release" out
'

test_expect_success 'a feature: no' '
	cl --stable "$FEATURE" >out &&
	grep -E "^no " out &&
	grep "answer: NO" out
'

test_expect_success 'a range: one line per commit, exit 1 when any is yes' '
	test_expect_code 1 cl --stable --range "$SHIPPED~1..$FEATURE" >out &&
	test "$(grep -cE "^(yes|no) " out)" = 4 &&
	test "$(grep -cE "^yes " out)" = 1
'

test_expect_success 'json: the documented fields' '
	test_expect_code 1 cl --stable --format json "$SHIPPED" >out.json &&
	python3 - out.json "$SHIPPED" <<-\EOP
	import json, sys
	d = json.load(open(sys.argv[1]))
	assert d["question"] == "stable", d
	r = d["results"][0]
	assert r["commit"] == sys.argv[2], r
	assert r["answer"] == "yes" and 0 <= r["score"] <= 1, r
	assert r["message_id"] is None
	assert {v["voter"] for v in r["votes"]} == {"model", "similar"}, r
	assert all(v["vote"] in ("yes", "no", "abstained") for v in r["votes"])
	assert r["reasons"] and isinstance(r["reasons"][0], str)
	assert r["similar"] and {"commit", "subject", "label", "score"} <= set(r["similar"][0])
	assert any(s["label"] == "yes" for s in r["similar"])
	EOP
'

test_expect_success 'mail: the mail is all there is (format-patch of a new commit)' '
	git -C "$R" format-patch -q -1 --stdout "$SHIPPED" >p.mbox &&
	test_expect_code 1 cl --stable --format json p.mbox >out.json &&
	python3 -c "
import json; r = json.load(open(\"out.json\"))[\"results\"][0]
assert r[\"message_id\"], r
assert r[\"answer\"] == \"yes\", r
assert r[\"subject\"] == \"beta: fix crash in feature 26\", r
assert r[\"known\"] is False
" &&
	git -C "$R" show "$FEATURE" >show.txt &&
	cl --stable - <show.txt >out &&
	grep -E "^no .*beta: add support for feature 41" out
'

test_expect_success 'mail touching files and words the history never had' '
	git -C "$R" checkout -q -b side &&
	mkdir -p "$R/brand" && echo "int zq;" >"$R/brand/zzqx.c" &&
	git -C "$R" add brand && git -C "$R" commit -q -m "brand: qwzzy the frobnicator" &&
	git -C "$R" format-patch -q -1 --stdout >new.mbox &&
	git -C "$R" checkout -q main &&
	cl --stable new.mbox >out &&
	grep -E "^no .*brand: qwzzy the frobnicator" out
'

test_expect_success 'email: the AUTOSEL form, in reply to the posting' '
	test_expect_code 1 cl --stable --format email p.mbox >mail.mbox &&
	grep "^Subject: \[PATCH AUTOSEL stable\] beta: fix crash in feature 26" mail.mbox &&
	grep "^In-Reply-To: <" mail.mbox &&
	grep "^\*\*YES\*\*" mail.mbox &&
	grep "^\[ Upstream commit $SHIPPED \]" mail.mbox &&
	grep -E "^Vote: [12] of 2 voters said yes" mail.mbox &&
	grep "^Comparison with similar commits:" mail.mbox &&
	grep "automated and may be wrong" mail.mbox &&
	"$QUORUM" parse p.mbox >/dev/null
'

test_expect_success 'email of a revision carries the patch' '
	test_expect_code 1 cl --stable --format email "$SHIPPED" >mail2 &&
	grep "^diff --git a/drv/beta/f26.c" mail2 &&
	! grep "^In-Reply-To:" mail2
'

test_expect_success 'labels from a backport branch: [ Upstream commit ID ]' '
	git -C "$R" checkout -q -b stable-v1 v1.8 &&
	git -C "$R" cherry-pick -x "$SHIPPED" >/dev/null &&
	git -C "$R" commit -q --amend -m "beta: fix crash in feature 26

[ Upstream commit $SHIPPED ]" &&
	git -C "$R" checkout -q main &&
	test_expect_code 1 cl --stable "$SHIPPED" >out &&
	grep "already labelled yes" out &&
	cl --cve "$SHIPPED" >out 2>err &&
	grep "no commit of this tree carries the label" err
'

test_expect_success 'eval: AUC beside the baselines, overall and among Fixes:' '
	since=$(git -C "$R" log --reverse --format=%ct | sed -n 40p) &&
	"$QUORUM" eval -C "$R" --stable --since "@$since" \
		--until "@$(date +%s)" >out &&
	grep -E "^AUC  quorum [0-9.n/a]+ .*baselines: has Fixes: [0-9.]+, subject says fix" out &&
	grep -E "^among the [0-9]+ with Fixes: .*the bug shipped" out &&
	"$QUORUM" eval -C "$R" --stable --since "@$since" \
		--until "@$(date +%s)" --json >out.json &&
	python3 -c "
import json; d = json.load(open(\"out.json\"))
assert d[\"commits\"] >= 30 and d[\"positives\"] > 5, d
assert d[\"auc\"] > 0.8, d
"
'

cfg() {
	printf "%s\n" "$@" >"$TMP/config"
}

bad() {
	test_expect_code 2 "$QUORUM" classify -C "$R" "$@" HEAD 2>err &&
	test "$(wc -l <err)" = 1
}

test_expect_success 'question config errors: one line, exit 2' '
	cfg "[classify \"foo\"]" "label-regex = ([" && bad --question foo &&
	grep "label-regex" err && grep "does not compile" err &&
	cfg "[classify \"foo\"]" "colour = red" && bad --question foo &&
	grep "colour is not a classify key" err &&
	cfg "[classify \"foo\"]" "ripe-days = soon" && bad --question foo &&
	grep "ripe-days" err &&
	cfg "" && bad --question nosuch && grep "no question .nosuch." err &&
	cfg "[classify \"foo\"]" "prompt = ../../etc/passwd" &&
	bad --question foo && grep "prompt" err &&
	cfg "" && bad --question "x;y" && grep "question name" err &&
	long=$(python3 -c "print(\"a\" * 600)") &&
	cfg "[classify \"foo\"]" "label-regex = $long" && bad --question foo &&
	grep "longer than 512" err &&
	cfg "[classify \"foo\"]" "label-trailer = nocolon" &&
	bad --question foo && grep "Key: value" err
'

test_expect_success 'usage errors: exit 2' '
	test_expect_code 2 "$QUORUM" classify -C "$R" HEAD 2>err &&
	grep "which question" err &&
	test_expect_code 2 "$QUORUM" classify -C "$R" --stable --cve HEAD 2>err &&
	test_expect_code 2 "$QUORUM" classify -C "$R" --stable --range HEAD 2>err &&
	test_expect_code 2 "$QUORUM" classify -C "$R" --stable --format sarif HEAD 2>err &&
	test_expect_code 2 "$QUORUM" classify -C "$R" --stable no-such-rev 2>err &&
	grep "does not name a commit" err &&
	echo "not mail" >junk && test_expect_code 2 "$QUORUM" classify -C "$R" --stable junk 2>err &&
	test_expect_code 3 "$QUORUM" classify -C "$TMP/nope" --stable HEAD 2>err
'

test_expect_success 'labels from a trailer and an ids file; the ids file is bounded' '
	git -C "$R" log --format=%H --grep="fix crash" | sed -n "2p;4p;6p;8p" >ids &&
	cfg "[classify \"picked\"]" "label-ids-file = $TMP/ids" &&
	"$QUORUM" classify -C "$R" --question picked "$FEATURE" >out &&
	grep -E "^no " out &&
	cfg "[classify \"stable\"]" "label-trailer = Reviewed-by: r@example.org" &&
	"$QUORUM" classify -C "$R" --stable --format json "$UNSHIPPED" >out.json
	test $? -le 1 &&
	python3 -c "
import json; d = json.load(open(\"out.json\"))
assert d[\"question\"] == \"stable\" and d[\"results\"][0][\"known\"], d
" &&
	python3 -c "import sys; sys.stdout.write(\"0\" * 5000000)" >big &&
	cfg "[classify \"picked\"]" "label-ids-file = $TMP/big" &&
	test_expect_code 2 "$QUORUM" classify -C "$R" --question picked HEAD 2>err &&
	grep "larger than" err
'

test_expect_success 'help tells the truth' '
	"$QUORUM" help classify >help &&
	grep -- "--stable" help && grep "label-upstream-branches" help &&
	grep "Exit status: 0 every answer is no, 1 some answer is yes" help &&
	"$QUORUM" help eval | grep -- "--question"
'

test_done
