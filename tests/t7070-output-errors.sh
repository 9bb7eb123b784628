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

test_done
