#!/bin/sh
# The command table: --help, --version, help COMMAND, unknown commands.
. "$(dirname "$0")/lib.sh"

test_expect_success '--version exits 0' '
	run "$QUORUM" --version &&
	test "$rc" = 0
'
test_expect_success '--version prints a version' '
	test_grep "^quorum [0-9]+\.[0-9]+" "$TMP/out"
'

test_expect_success '--help exits 0' '
	run "$QUORUM" --help &&
	test "$rc" = 0
'
test_expect_success '--help lists review' 'test_grep review "$TMP/out"'
test_expect_success '--help lists parse' 'test_grep parse "$TMP/out"'

test_expect_success 'no command exits 2' '
	run "$QUORUM" &&
	test "$rc" = 2
'

test_expect_success 'unknown command exits 2' '
	run "$QUORUM" frobnicate &&
	test "$rc" = 2
'
test_expect_success 'unknown command is named' '
	test_grep "'\''frobnicate'\'' is not a quorum command" "$TMP/err"
'
test_expect_success 'unknown command error is one line' '
	test_line_count = 1 "$TMP/err"
'

test_expect_success 'unknown global option exits 2' '
	run "$QUORUM" --bogus &&
	test "$rc" = 2
'

test_expect_success 'unknown review option exits 2' '
	run "$QUORUM" review --bogus &&
	test "$rc" = 2
'
test_expect_success 'unknown option shows usage' '
	test_grep "usage: quorum review" "$TMP/err"
'
test_expect_success 'unknown option: one-line error' '
	test_line_count = 1 "$TMP/err"
'

test_expect_success 'help review exits 0' '
	run "$QUORUM" help review &&
	test "$rc" = 0
'
test_expect_success 'help review shows the usage' '
	test_grep "^usage: quorum review" "$TMP/out"
'

test_expect_success 'review --help exits 0' '
	run "$QUORUM" review --help &&
	test "$rc" = 0
'

test_expect_success 'help for an unknown command exits 2' '
	run "$QUORUM" help nosuch &&
	test "$rc" = 2
'

test_done
