#!/bin/sh
# contrib/quorum.1: generated from the help texts by contrib/gen-man.sh;
# it renders without warnings and covers every command, option, config
# key of the example and exit code.
. "$(dirname "$0")/lib.sh"

command -v groff >/dev/null || skip_all "groff is needed to render the man page"

sh "$TOP/contrib/gen-man.sh" "$QUORUM" >"$TMP/quorum.1" 2>"$TMP/err"
ok $? "gen-man.sh writes the man page"
groff -man -Tutf8 -ww "$TMP/quorum.1" >"$TMP/man.txt" 2>"$TMP/warn"
ok $? "it renders"
is "$(lines "$TMP/warn")" 0 "groff -ww has no warning"
# Plain text of the rendering: no overstrike, no hyphenation breaks.
sed -e 's/.\x08//g' -e 's/‐$//' "$TMP/man.txt" | tr -s ' \n' ' ' >"$TMP/flat"

"$QUORUM" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z]*\) .*/\1/p' >"$TMP/cmds"
ok "$([ "$(lines "$TMP/cmds")" -ge 9 ]; echo $?)" "the command list is read ($(lines "$TMP/cmds"))"
missing=
for c in $(cat "$TMP/cmds"); do
	grep -q "usage: quorum $c " "$TMP/flat" || missing="$missing $c"
	for opt in $("$QUORUM" help "$c" | grep -o -- '--[a-z][a-z-]*' | sort -u); do
		grep -q -- "$opt" "$TMP/flat" || missing="$missing $c:$opt"
	done
done
is "$missing" "" "every command and each of its options is in the page"
missing=
for k in $(sed -n 's/^[[:space:]]*\([a-z][a-z-]*\)[[:space:]]*=.*/\1/p' "$TOP/contrib/quorum.conf.example" | sort -u); do
	grep -q -- "$k" "$TMP/flat" || missing="$missing $k"
done
is "$missing" "" "every key of quorum.conf.example is in the page"
like "$TMP/flat" 'ci\.max-commits' "keys the example lacks are listed too"
for code in 0 1 2 3; do
	grep -A1 "^\.B $code\$" "$TMP/quorum.1" | grep -q .
	ok $? "exit status $code is described"
done
# The committed page: regenerate it when a help text changes.
cmp -s "$TMP/quorum.1" "$TOP/contrib/quorum.1"
ok $? "contrib/quorum.1 is up to date (else: contrib/gen-man.sh build/quorum >contrib/quorum.1)"

done_testing
