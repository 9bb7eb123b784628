#!/bin/sh
# What review, ci and classify write when the input is wrong: one line on
# stderr and the exit status of the contract (2 for input), the same for
# every --format; a document on stdout only when there is one to write.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: a repo and a one-patch mail' '
	make_repo "$TMP/repo" &&
	git -C "$TMP/repo" tag base &&
	commit_item_new "$TMP/repo" &&
	git -C "$TMP/repo" format-patch -q -o "$TMP/p" -1 &&
	P=$(ls "$TMP"/p/*.patch)
'

# quoted_id ID: the mail with Message-ID <ID> (a quote, a backslash...)
quoted_id() {
	sed -e "/^Subject:/a Message-ID: <$1>" "$P" >"$TMP/quoted.patch"
}

test_expect_success 'review --format email: a quoted Message-ID is an input error, said once' '
	quoted_id "a\"b\\\\c@example.org" &&
	grep "^Message-ID: <a\"b\\\\c@example.org>" "$TMP/quoted.patch" &&
	run "$QUORUM" review -C "$TMP/repo" --base base --format email \
		"$TMP/quoted.patch" &&
	test "$rc" = 2 &&
	test_line_count = 1 "$TMP/err" &&
	test_grep "cannot compose the reply to .main: add item_new()." "$TMP/err" &&
	test_grep "Message-ID <a\"b\\\\c@example.org> is not one a reply can name" "$TMP/err" &&
	test "$(grep -o "cannot compose" "$TMP/err" | wc -l)" = 1 &&
	test ! -s "$TMP/out"
'

test_expect_success 'the same mail reviews as text, JSON and SARIF (the id is not needed there)' '
	bad= &&
	for f in text json sarif; do
		run "$QUORUM" review -C "$TMP/repo" --base base --format $f \
			"$TMP/quoted.patch"
		{ test "$rc" = 1 && test -s "$TMP/out"; } || bad="$bad $f"
	done &&
	test -z "$bad"
'

# no_document FMT ARGS...: review with --format FMT writes nothing, to
# stdout or to --output, and says why in one line with exit 2
no_document() {
	_fmt=$1 && shift &&
	rm -f "$TMP/report" &&
	run "$QUORUM" review -C "$TMP/repo" --base base --format "$_fmt" \
		--output "$TMP/report" "$@" &&
	test "$rc" = 2 && test ! -e "$TMP/report" && test ! -s "$TMP/out" &&
	test_line_count = 1 "$TMP/err" &&
	run "$QUORUM" review -C "$TMP/repo" --base base --format "$_fmt" "$@" &&
	test "$rc" = 2 && test ! -s "$TMP/out" && test_line_count = 1 "$TMP/err"
}

test_expect_success 'review json, sarif: a missing file, a mail with no patch: no document' '
	printf "From: a@example.org\nSubject: hello\n\nno diff here\n" >"$TMP/nopatch.eml" &&
	bad= &&
	for f in json sarif text email; do
		no_document $f "$TMP/nosuch.mbox" || bad="$bad $f:missing"
		no_document $f "$TMP/nopatch.eml" || bad="$bad $f:nopatch"
	done &&
	test -z "$bad"
'

test_expect_success 'setup: an mbox of two series, the first on a file the base lacks' '
	git -C "$TMP/repo" checkout -q -b other base &&
	echo "int a;" >"$TMP/repo/other.c" &&
	git -C "$TMP/repo" add other.c &&
	git -C "$TMP/repo" commit -q -m "other: add a" &&
	echo "int b;" >>"$TMP/repo/other.c" &&
	git -C "$TMP/repo" commit -q -am "other: add b" &&
	git -C "$TMP/repo" format-patch -q --stdout -1 >"$TMP/two.mbox" &&
	git -C "$TMP/repo" checkout -q main &&
	git -C "$TMP/repo" format-patch -q --stdout -1 >>"$TMP/two.mbox" &&
	test "$(grep -c "^Subject:" "$TMP/two.mbox")" = 2
'

test_expect_success 'a series that does not apply is in the document, the next one reviewed, exit 2' '
	run "$QUORUM" review -C "$TMP/repo" --base base --format json "$TMP/two.mbox" &&
	test "$rc" = 2 &&
	test_line_count = 1 "$TMP/err" &&
	test_grep "other.c does not exist in the base" "$TMP/err" &&
	python3 - "$TMP/out" <<-\EOP
	import json, sys
	d = json.load(open(sys.argv[1]))
	r = {x["series"]["title"]: x for x in d["reviews"]}
	assert len(r) == 2, list(r)
	assert r["other: add b"]["applied"] is False, r
	p = r["other: add b"]["patches"][0]
	assert p["status"] == "failed" and "does not exist" in p["error"], p
	assert r["main: add item_new()"]["applied"] is True, r
	assert r["main: add item_new()"]["findings"], r
	EOP
'

test_expect_success 'the same as SARIF and text: both series, exit 2' '
	run "$QUORUM" review -C "$TMP/repo" --base base --format sarif "$TMP/two.mbox" &&
	test "$rc" = 2 &&
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d[\"runs\"][0][\"results\"]" "$TMP/out" &&
	run "$QUORUM" review -C "$TMP/repo" --base base "$TMP/two.mbox" &&
	test "$rc" = 2 &&
	test_grep "^quorum review: other: add b" "$TMP/out" &&
	test_grep "^quorum review: main: add item_new()" "$TMP/out"
'

test_expect_success 'classify: one revision that is no commit: no document in any format' '
	bad= &&
	for f in json text email; do
		rm -f "$TMP/report"
		run "$QUORUM" classify -C "$TMP/repo" --stable --format $f \
			--output "$TMP/report" nosuchrev
		{ test "$rc" = 2 && test ! -e "$TMP/report" &&
		  test_grep "nosuchrev. does not name a commit" "$TMP/err"; } ||
			bad="$bad $f:output"
		run "$QUORUM" classify -C "$TMP/repo" --stable --format $f nosuchrev
		{ test "$rc" = 2 && test ! -s "$TMP/out"; } || bad="$bad $f"
	done &&
	test -z "$bad"
'

test_expect_success 'classify: a mail with no patch, a bad question: no document' '
	run "$QUORUM" classify -C "$TMP/repo" --stable --format json "$TMP/nopatch.eml" &&
	test "$rc" = 2 && test ! -s "$TMP/out" &&
	run "$QUORUM" classify -C "$TMP/repo" --question nosuch --format json HEAD &&
	test "$rc" = 2 && test ! -s "$TMP/out" && test_line_count = 1 "$TMP/err"
'

test_expect_success 'ci json, sarif: a range that names no commit writes no file' '
	bad= &&
	for f in json sarif; do
		rm -f "$TMP/report"
		run "$QUORUM" ci -C "$TMP/repo" --range base..nosuch --format $f \
			--output "$TMP/report"
		{ test "$rc" = 3 && test ! -e "$TMP/report" && test ! -s "$TMP/out"; } ||
			bad="$bad $f"
	done &&
	test -z "$bad"
'

test_done
