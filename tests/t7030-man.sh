#!/bin/sh
# contrib/quorum.1: generated from the help texts by contrib/gen-man.sh;
# it renders without warnings and covers every command, option, config
# key of the example and exit code.
. "$(dirname "$0")/lib.sh"

command -v groff >/dev/null || skip_all "groff is needed to render the man page"

test_expect_success 'gen-man.sh writes the man page' '
	sh "$TOP/contrib/gen-man.sh" "$QUORUM" >"$TMP/quorum.1"
'
test_expect_success 'it renders' '
	groff -man -Tutf8 -ww "$TMP/quorum.1" >"$TMP/man.txt" 2>"$TMP/warn"
'
test_expect_success 'groff -ww has no warning' '
	test_line_count = 0 "$TMP/warn"
'

# Plain text of the rendering: no overstrike, no hyphenation breaks.
test_expect_success 'the command list is read' '
	sed -e "s/.\x08//g" -e "s/‐$//" "$TMP/man.txt" | tr -s " \n" " " >"$TMP/flat" &&
	"$QUORUM" --help | sed -n "/^Commands:/,/^$/s/^  \([a-z]*\) .*/\1/p" >"$TMP/cmds" &&
	test_line_count -ge 9 "$TMP/cmds"
'
test_expect_success 'every command and each of its options is in the page' '
	missing= &&
	for c in $(cat "$TMP/cmds"); do
		grep -q "usage: quorum $c " "$TMP/flat" || missing="$missing $c"
		for opt in $("$QUORUM" help "$c" | grep -o -- "--[a-z][a-z-]*" | sort -u); do
			grep -q -- "$opt" "$TMP/flat" || missing="$missing $c:$opt"
		done
	done &&
	echo "missing:$missing" &&
	test -z "$missing"
'
test_expect_success 'every key of quorum.conf.example is in the page' '
	missing= &&
	for k in $(sed -n "s/^[[:space:]]*#*\([a-z][a-z-]*\)[[:space:]]*=.*/\1/p" "$TOP/contrib/quorum.conf.example" | sort -u); do
		grep -q -- "$k" "$TMP/flat" || missing="$missing $k"
	done &&
	echo "missing:$missing" &&
	test -z "$missing"
'
test_expect_success 'keys the example lacks are listed too' '
	test_grep "ci\.max-commits" "$TMP/flat"
'
for code in 0 1 2 3; do
	test_expect_success "exit status $code is described" '
		grep -A1 "^\.B $code\$" "$TMP/quorum.1" | grep -q .
	'
done
# The committed page: regenerate it when a help text changes.
test_expect_success 'contrib/quorum.1 is up to date (else: contrib/gen-man.sh build/quorum >contrib/quorum.1)' '
	cmp "$TMP/quorum.1" "$TOP/contrib/quorum.1"
'

test_done
