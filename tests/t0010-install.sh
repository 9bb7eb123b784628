#!/bin/sh
# make install puts the binary, the prompts and the man page under
# DESTDIR/PREFIX (the man page under MANDIR); make uninstall takes away
# every file install put there.
. "$(dirname "$0")/lib.sh"

command -v make >/dev/null || skip_all "make is not installed"

D=$TMP/dest
# minst TARGET [VAR=VALUE...]: make TARGET on this tree into $D, with the
# binary under test (no build)
minst() {
	_t=$1
	shift
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		make -C "$TOP" --no-print-directory -s "$_t" DESTDIR="$D" \
		QUORUM_INSTALL="$QUORUM" "$@"
}

test_expect_success 'make install into DESTDIR' '
	minst install >"$TMP/install.out" 2>&1
'
test_expect_success 'the binary is in PREFIX/bin, executable, and runs' '
	test -x "$D/usr/local/bin/quorum" &&
	"$D/usr/local/bin/quorum" --version >"$TMP/v" &&
	test_grep "^quorum [0-9]" "$TMP/v"
'
test_expect_success 'the man page is in PREFIX/share/man/man1' '
	cmp "$TOP/contrib/quorum.1" "$D/usr/local/share/man/man1/quorum.1"
'
test_expect_success 'every prompt is installed' '
	(cd "$TOP/prompts" && find . -type f | sort) >"$TMP/want" &&
	(cd "$D/usr/local/share/quorum/prompts" && find . -type f | sort) >"$TMP/got" &&
	test_cmp "$TMP/want" "$TMP/got"
'
test_expect_success 'make uninstall leaves no file behind' '
	minst uninstall >"$TMP/uninstall.out" 2>&1 &&
	find "$D" ! -type d >"$TMP/left" &&
	test_line_count = 0 "$TMP/left"
'
test_expect_success 'nor a directory of its own' '
	find "$D" -name "*quorum*" >"$TMP/left" &&
	test_line_count = 0 "$TMP/left"
'

test_expect_success 'PREFIX and MANDIR move it, uninstall follows them' '
	rm -rf "$D" &&
	minst install PREFIX=/opt/q MANDIR=/opt/man >"$TMP/install.out" 2>&1 &&
	test -x "$D/opt/q/bin/quorum" &&
	test -f "$D/opt/man/man1/quorum.1" &&
	test -f "$D/opt/q/share/quorum/prompts/review.md" &&
	minst uninstall PREFIX=/opt/q MANDIR=/opt/man >"$TMP/uninstall.out" 2>&1 &&
	find "$D" ! -type d >"$TMP/left" &&
	test_line_count = 0 "$TMP/left"
'

test_done
