#!/bin/sh
# quorum similar: a commit or a patch mail that re-adds code a past fix
# had to change finds that bug/fix pair, with ids, subjects, score and
# the lines that matched; fixes from after a commit stay invisible.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/history.sh"

test_expect_success 'setup: a bug, a hostile fix, the fix, and a patch re-adding the bug' '
	history_repo &&
	# The bug: a copy with no bound on the name.
	commit_net_bug &&
	echo "int unrelated_counter;" >other.c &&
	tick && git add other.c && git commit -q -m "other: add a counter" &&
	BEFORE_FIX=$(git rev-parse HEAD) &&
	# A hostile fix: escape sequences in its subject and explanation.
	sed -i "s/o->mtu = parse_mtu_value(arg, arg_len);/o->mtu = parse_mtu_value(arg, (int)arg_len);/" net.c &&
	tick &&
	git commit -q -am "$(printf "net: \033[31mred\033[0m bounded")" \
		-m "$(printf "\033]0;pwned\007 Copy of o->name, arg.\n\n%s" "$(fixes "$BUG")")" &&
	# The fix bounds the copy.
	commit_net_fix "$BUG" &&
	# A new function re-adds the very same unbounded copy.
	net_c_alias &&
	tick && git commit -q -am "net: parse aliases too" &&
	NEW=$(git rev-parse HEAD) &&
	git format-patch -q -o "$TMP/mail" -1 HEAD &&
	fix=$(git rev-parse --short=12 "$FIX")
'

test_expect_success 'similar before quorum index exits 3' '
	run "$QUORUM" similar -C "$R" HEAD &&
	test "$rc" = 3
'
test_expect_success '... and says to run quorum index' '
	test_grep "quorum index" "$TMP/err"
'

test_expect_success 'index' '
	run "$QUORUM" index -C "$R" &&
	test "$rc" = 0
'

test_expect_success 'similar REV exits 0' '
	run "$QUORUM" similar -C "$R" "$NEW" &&
	test "$rc" = 0
'
test_expect_success 'names the commit asked about' '
	test_grep "^commit $(git rev-parse --short=12 "$NEW") net: parse aliases too" "$TMP/out"
'
test_expect_success 'first result has a score' '
	test_grep "^1\. score (0\.[0-9]+|1\.00) " "$TMP/out"
'
test_expect_success 'cites the bug commit, id and subject' '
	test_grep "bug  $(git rev-parse --short=12 "$BUG") net: parse the interface name" "$TMP/out"
'
test_expect_success 'cites the fix commit, id and subject' '
	test_grep "fix  $fix net: bound the name copy in parse_opts" "$TMP/out"
'
test_expect_success 'shows the patch line that matched, with file:line' '
	test_grep "^   \+ net\.c:[0-9]+: memcpy\(o->name, arg, arg_len\);" "$TMP/out"
'
test_expect_success 'shows the past line the fix removed' '
	test_grep "~ removed by the fix: memcpy\(o->name, arg, arg_len\);" "$TMP/out"
'
test_expect_success 'the patch line number is the post-image line' '
	line=$(grep -n "memcpy(o->name, arg, arg_len);" net.c | tail -1 | cut -d: -f1) &&
	test_grep "net\.c:$line: memcpy" "$TMP/out"
'

# The same patch as mail.
test_expect_success 'similar FILE exits 0' '
	run "$QUORUM" similar -C "$R" "$TMP"/mail/*.patch &&
	test "$rc" = 0
'
test_expect_success 'names the patch of the mail' '
	test_grep "^patch 1/1: net: parse aliases too" "$TMP/out"
'
test_expect_success 'mail: finds the same pair' '
	test_grep "fix  $fix" "$TMP/out"
'
test_expect_success 'mail on standard input works too' '
	run "$QUORUM" similar -C "$R" - <"$(ls "$TMP"/mail/*.patch)" &&
	test_grep "fix  $fix" "$TMP/out"
'

test_expect_success 'the hostile fix is listed, its escapes defused' '
	run "$QUORUM" similar -C "$R" -k 10 "$NEW" &&
	test_grep "net: \?\[31mred\?\[0m bounded" "$TMP/out"
'
test_expect_success 'no escape byte reaches the terminal' '
	! grep -q "$(printf "\033")" "$TMP/out"
'

test_expect_success 'a maildir is read as mail' '
	mkdir -p "$TMP/md/cur" "$TMP/md/new" "$TMP/md/tmp" &&
	cp "$TMP"/mail/*.patch "$TMP/md/cur/1:2,S" &&
	run "$QUORUM" similar -C "$R" "$TMP/md" &&
	test_grep "fix  $fix" "$TMP/out"
'

test_expect_success '-k 1 shows one pair' '
	run "$QUORUM" similar -C "$R" -k 1 "$NEW" &&
	test "$(grep -c "^[0-9]*\. score" "$TMP/out")" = 1
'

# No leakage: a commit from before the fix does not see that fix.
test_expect_success 'similar of an older commit exits 0' '
	run "$QUORUM" similar -C "$R" "$BEFORE_FIX" &&
	test "$rc" = 0
'
test_expect_success 'a fix from after the commit is invisible' '
	test_grep -v "$fix" "$TMP/out"
'
test_expect_success 'the bug commit itself does not see its own later fix' '
	run "$QUORUM" similar -C "$R" "$BUG" &&
	test_grep -v "$fix" "$TMP/out"
'

test_expect_success 'nothing similar exits 0' '
	run "$QUORUM" similar -C "$R" HEAD~4 &&
	test "$rc" = 0
'
test_expect_success 'says so' '
	test_grep "nothing similar" "$TMP/out"
'

# Bad input.
test_expect_success 'an unknown REV exits 2' '
	run "$QUORUM" similar -C "$R" no-such-rev &&
	test "$rc" = 2
'
test_expect_success 'names the bad REV' '
	test_grep "no-such-rev" "$TMP/err"
'
test_expect_success '-k 0 is a usage error' '
	run "$QUORUM" similar -C "$R" -k 0 HEAD &&
	test "$rc" = 2
'
test_expect_success 'no FILE or REV is a usage error' '
	run "$QUORUM" similar -C "$R" &&
	test "$rc" = 2
'
test_expect_success 'a mail with no patch exits 2' '
	printf "From: a@b\nSubject: hi\n\nno patch here\n" >"$TMP/nopatch" &&
	run "$QUORUM" similar -C "$R" "$TMP/nopatch" &&
	test "$rc" = 2
'
test_expect_success 'no patch: one line' '
	test_line_count = 1 "$TMP/err"
'
test_expect_success 'random bytes: no crash' '
	head -c 3000 /dev/urandom >"$TMP/junk" &&
	run "$QUORUM" similar -C "$R" "$TMP/junk" &&
	echo "exit $rc" &&
	{ test "$rc" -eq 2 || test "$rc" -eq 0; }
'

test_done
