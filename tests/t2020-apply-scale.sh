#!/bin/sh
# A series whose every patch rewrites a directory of thousands (here a
# root of 20,000 files, a file added by each of 1,000 patches) writes a
# tree of that size for every patch: gigabytes for a long enough
# series. Past 64 MB of trees the patch fails with one line and the
# run stays within 400 MB of address space (it took 750 MB, and more
# with every patch).
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

test_expect_success 'setup: a root of 20,000 files, 1,000 patches adding one' '
	git init -q "$TMP/repo" &&
	awk "BEGIN {
		printf \"blob\\nmark :1\\ndata 8\\nint x;\\n\\n\\n\"
		printf \"commit refs/heads/main\\ncommitter C <c@example.org> 1700000000 +0000\\ndata 5\\nbase\\n\"
		for (i = 0; i < 20000; i++) printf \"M 100644 :1 f%05d.c\\n\", i
		printf \"\\n\"
		for (i = 0; i < 1000; i++) {
			printf \"commit refs/heads/main\\ncommitter C <c@example.org> 1700000000 +0000\\n\"
			printf \"data 8\\nadd %04d\\nM 100644 inline g%04d.c\\ndata 8\\nint %04d\\n\\n\", i, i, i
		} }" >"$TMP/fi" &&
	git -C "$TMP/repo" fast-import --quiet <"$TMP/fi" &&
	git -C "$TMP/repo" tag base main~1000 &&
	git -C "$TMP/repo" format-patch -q --stdout base..main >"$TMP/series.mbox"
'

test_expect_success 'the series stops at 64 MB of trees, in bounded memory' '
	within 400000 "$QUORUM" apply -C "$TMP/repo" --base base \
		"$TMP/series.mbox" &&
	test "$rc" = 2 &&
	test_grep "^patch [0-9]*/1000 \"add [0-9]*\" does not apply: the series rewrites more than 64 MB of directory listings \(one of [0-9]* KB with this patch\); apply it in parts$" "$TMP/out" &&
	test_line_count = 1 "$TMP/err"
'

test_expect_success 'a series within the bound applies as before: the trees git made' '
	head -c 2000000 "$TMP/series.mbox" | awk "/^From [0-9a-f]+ Mon Sep 17/ { n++ } n <= 20" >"$TMP/twenty.mbox" &&
	run "$QUORUM" apply -C "$TMP/repo" --base base "$TMP/twenty.mbox" &&
	test "$rc" = 0 &&
	test "$(grep -c " applied: commit " "$TMP/out")" = 20 &&
	test "$(sed -n "s/^patch 20\/1000 applied: commit [0-9a-f]* tree //p" "$TMP/out")" = \
		"$(git -C "$TMP/repo" rev-parse "main~980^{tree}")"
'

test_done
