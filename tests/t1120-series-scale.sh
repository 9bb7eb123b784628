#!/bin/sh
# Many series in one input: planned in memory linear in the input (an
# mbox of 10,000 one-patch series applies within 400 MB of address
# space; each series had an array of all of them, 719 MB), and more
# than 10,000 are refused with one line before anything is planned.
. "$(dirname "$0")/lib.sh"

# within KB CMD...: `run CMD` in at most KB of address space, its status
# in $rc; without the limit under ASan, whose shadow maps terabytes
if (ulimit -v 400000 && "$QUORUM" --version) >/dev/null 2>&1; then
	test_set_prereq ULIMIT
fi
within() {
	_kb=$1
	shift
	if test_have_prereq ULIMIT; then
		(ulimit -v "$_kb" && run "$@" && echo "$rc" >"$TMP/rc")
	else
		run "$@" && echo "$rc" >"$TMP/rc"
	fi
	rc=$(cat "$TMP/rc")
}

# series_mbox N FILE: N one-patch series, each adding its own file
series_mbox() {
	awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) {
		printf "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
		printf "From: A U Thor <author@example.org>\n"
		printf "Date: Mon, 1 Jan 2024 00:00:00 +0000\n"
		printf "Subject: [PATCH] add s%d\nMessage-Id: <s%d@example.org>\n\n", i, i
		printf "add s%d\n---\ndiff --git a/s%d.txt b/s%d.txt\n", i, i, i
		printf "new file mode 100644\n--- /dev/null\n+++ b/s%d.txt\n", i
		printf "@@ -0,0 +1 @@\n+line %d\n-- \n2.39.2\n\n", i } }' >"$2"
}

test_expect_success 'setup: mboxes of 10,000 and 10,001 one-patch series' '
	make_repo "$TMP/repo" &&
	git -C "$TMP/repo" tag base &&
	series_mbox 10000 "$TMP/10000.mbox" &&
	series_mbox 10001 "$TMP/10001.mbox"
'

test_expect_success '10,000 series apply within 400 MB' '
	within 400000 "$QUORUM" apply -C "$TMP/repo" --base base \
		"$TMP/10000.mbox" &&
	test "$rc" = 0 &&
	test "$(grep -c "^patch 1/1 applied" "$TMP/out")" = 10000
'

test_expect_success 'review: more than 10,000 series is one line, exit 2' '
	within 400000 "$QUORUM" review -C "$TMP/repo" --base base \
		"$TMP/10001.mbox" &&
	test "$rc" = 2 &&
	test_line_count = 1 "$TMP/err" &&
	test_grep "10001.mbox holds 10001 series, more than the 10000 one review takes; split it" "$TMP/err" &&
	test_line_count = 0 "$TMP/out"
'

test_expect_success 'apply: the same' '
	run "$QUORUM" apply -C "$TMP/repo" --base base "$TMP/10001.mbox" &&
	test "$rc" = 2 &&
	test_line_count = 1 "$TMP/err" &&
	test_grep "holds 10001 series, more than the 10000 one run applies" "$TMP/err"
'

test_expect_success 'the help says so' '
	run "$QUORUM" review --help &&
	test_grep "10000 series" "$TMP/out" &&
	run "$QUORUM" apply --help &&
	test_grep "10000 series" "$TMP/out"
'

test_done
