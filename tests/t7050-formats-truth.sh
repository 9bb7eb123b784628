#!/bin/sh
# The JSON and email forms tell what the text tells: cost.day_left is
# null with no daily cap (as contrib/review-json.md says), each patch
# carries the risk reasons and the similar past fixes the text prints,
# and every reply of --format email has a Message-ID of its own.
. "$(dirname "$0")/lib.sh"
# Twenty days a commit, as t3300: a history the risk model learns from.
CLOCK_START=1500000000 CLOCK_STEP=$((86400 * 20))
. "$TOP/tests/lib/history.sh"

command -v python3 >/dev/null || skip_all "python3 is needed to check JSON"

test_expect_success 'setup: a fixed bug in the history, a patch re-adding it, a big feature, an index' '
	history_repo &&
	commit_net_bug &&
	risk_history 12 &&
	commit_net_fix "$BUG" &&
	git tag base &&
	net_c_alias &&
	tick && git commit -q -am "net: parse aliases too" &&
	git format-patch -q -o "$TMP/mail" -1 HEAD &&
	git reset -q --hard base &&
	c_function feature_big feature_helper_big 80 >big.c &&
	git add big.c && tick && git commit -q -m "feat: add the big feature" &&
	git format-patch -q -o "$TMP/big" -1 HEAD &&
	git reset -q --hard base &&
	run "$QUORUM" index -C "$R" --quiet &&
	test "$rc" = 0 &&
	cd "$TMP"
'

test_expect_success 'the text report prints similar past fixes' '
	run "$QUORUM" review -C "$R" "$TMP"/mail/*.patch &&
	test_grep "^      like [0-9a-f]{12} \"net: parse the interface name\", fixed by [0-9a-f]{12} \"net: bound the name copy" "$TMP/out" &&
	sed -n "s/^  1\/1  risk [0-9.n\/a]*: //p" "$TMP/out" >"$TMP/why-text"
'

test_expect_success 'JSON: day_left null without a daily cap; the risk reasons and similar fixes of the text' '
	run "$QUORUM" review -C "$R" --format json "$TMP"/mail/*.patch &&
	python3 - "$TMP/out" "$TMP/why-text" "$(git -C "$R" rev-parse "$BUG")" "$(git -C "$R" rev-parse "$FIX")" >"$TMP/py" 2>&1 <<-\EOP &&
	import json, sys
	d = json.load(open(sys.argv[1]))
	why = open(sys.argv[2]).read().strip() or None
	(r,) = d["reviews"]
	assert r["cost"]["day_left"] is None, r["cost"]
	(p,) = r["patches"]
	assert p["risk_reasons"] == why, (p["risk_reasons"], why)
	s = p["similar"][0]
	assert s["bug"] == sys.argv[3] and s["fix"] == sys.argv[4], s
	assert s["bug_subject"] == "net: parse the interface name", s
	assert s["fix_subject"] == "net: bound the name copy in parse_opts", s
	assert s["kind"] == "fixes" and 0 < s["score"] <= 1, s
	EOP
	cat "$TMP/py"
'

test_expect_success 'JSON without an index: similar is empty, risk_reasons null' '
	git init -q "$TMP/bare" &&
	git -C "$TMP/bare" fetch -q "$R" base:base &&
	git -C "$TMP/bare" checkout -q base &&
	run "$QUORUM" review -C "$TMP/bare" --format json "$TMP"/mail/*.patch &&
	python3 -c "
import json, sys
(p,) = json.load(open(sys.argv[1]))[\"reviews\"][0][\"patches\"]
assert p[\"similar\"] == [] and p[\"risk_reasons\"] is None, p
" "$TMP/out"
'

test_expect_success 'JSON: the risk reasons are those the text prints' '
	run "$QUORUM" review -C "$R" "$TMP"/big/*.patch &&
	sed -n "s/^  1\/1  risk [0-9.]*: //p" "$TMP/out" >"$TMP/why-text" &&
	test -s "$TMP/why-text" &&
	run "$QUORUM" review -C "$R" --format json "$TMP"/big/*.patch &&
	python3 -c "
import json, sys
(p,) = json.load(open(sys.argv[1]))[\"reviews\"][0][\"patches\"]
why = open(sys.argv[2]).read().strip()
assert p[\"risk\"] is not None and p[\"risk_reasons\"] == why, (p, why)
" "$TMP/out" "$TMP/why-text"
'

test_expect_success '--format email: each review, and each run, its own Message-ID' '
	cp "$TMP"/mail/*.patch "$TMP/one.mbox" &&
	sed "s/^Message-I[Dd]: <\(.*\)>$/Message-ID: <other-\1>/; s/^Subject: \[PATCH\]/Subject: [PATCH] again:/" "$TMP/one.mbox" >"$TMP/two.mbox" &&
	run "$QUORUM" review -C "$R" --format email "$TMP/one.mbox" &&
	grep -i "^Message-ID:" "$TMP/out" >"$TMP/ids" &&
	run "$QUORUM" review -C "$R" --format email "$TMP/two.mbox" &&
	grep -i "^Message-ID:" "$TMP/out" >>"$TMP/ids" &&
	sleep 1 &&
	run "$QUORUM" review -C "$R" --format email "$TMP/one.mbox" &&
	grep -i "^Message-ID:" "$TMP/out" >>"$TMP/ids" &&
	cat "$TMP/ids" &&
	test_line_count = 3 "$TMP/ids" &&
	test "$(sort -u "$TMP/ids" | wc -l)" = 3
'

test_done
