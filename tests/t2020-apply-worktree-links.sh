#!/bin/sh
# apply --worktree writes a symlink only when it resolves inside the
# worktree: an absolute target, ../.. out of the top, a link through
# another link (sub/up -> .., x -> sub/up/..) and a loop are refused
# with exit 2 and no worktree left; links that stay inside are written
# as they are; a symlink replaced by a directory (or a directory by a
# symlink) in a series writes nothing outside (the in-memory apply
# refuses a file written through a link, even one the patch deletes).
. "$(dirname "$0")/lib.sh"

R=$TMP/repo

test_expect_success 'setup: a repo with a directory' '
	make_repo "$R" &&
	mkdir "$R/sub" &&
	echo "int real;" >"$R/sub/real.h" &&
	git -C "$R" add sub &&
	git -C "$R" commit -q -m "sub: add real.h" &&
	git -C "$R" tag base &&
	mkdir "$TMP/outside"
'

# links NAME TARGET...: a one-patch mail $TMP/NAME.mbox adding the links
# (pairs of path and target) on base
links() {
	_n=$1 && shift &&
	git -C "$R" checkout -q -b "$_n" base &&
	while [ $# -gt 1 ]; do
		mkdir -p "$R/$(dirname "$1")" &&
		ln -s "$2" "$R/$1" && git -C "$R" add "$1" || return 1
		shift 2
	done &&
	git -C "$R" commit -q -m "links: $_n" &&
	git -C "$R" format-patch -q --stdout -1 >"$TMP/$_n.mbox" &&
	git -C "$R" checkout -q main
}

# refused NAME: apply --worktree of NAME.mbox exits 2 naming the link,
# and leaves no worktree
refused() {
	rm -rf "$TMP/wt" &&
	run "$QUORUM" apply -C "$R" --base base --worktree "$TMP/wt" --keep \
		"$TMP/$1.mbox" &&
	test "$rc" = 2 &&
	test_grep "refusing the symlink $2 -> " "$TMP/err" &&
	test ! -e "$TMP/wt" &&
	test -z "$(ls "$TMP/outside")"
}

test_expect_success 'an absolute target: main.c -> /etc/passwd' '
	links abs evil.c /etc/passwd &&
	refused abs evil.c &&
	test_grep "it points outside the worktree" "$TMP/err"
'

test_expect_success 'the in-memory apply still takes it (a link is data there)' '
	run "$QUORUM" apply -C "$R" --base base "$TMP/abs.mbox" &&
	test "$rc" = 0
'

test_expect_success 'out of the top: sub/up -> ../..' '
	links dotdot sub/up ../.. &&
	refused dotdot sub/up
'

test_expect_success 'through a link in the middle: sub/up -> .., x -> sub/up/..' '
	links middle sub/up .. x sub/up/.. &&
	refused middle x
'

test_expect_success 'through a link to a link that leaves: a -> b/c, b -> sub, sub/c -> ../../outside' '
	links chain a b/c b sub sub/c ../../outside &&
	refused chain a
'

test_expect_success 'a loop of links' '
	links loop l1 l2 l2 l1 &&
	refused loop l1 &&
	test_grep "too many links" "$TMP/err"
'

test_expect_success 'links that stay inside are written as they are' '
	links inside inc.h sub/real.h sub/up .. sub/alias.h ../inc.h &&
	rm -rf "$TMP/wt" &&
	run "$QUORUM" apply -C "$R" --base base --worktree "$TMP/wt" --keep \
		"$TMP/inside.mbox" &&
	test "$rc" = 0 &&
	test "$(readlink "$TMP/wt/inc.h")" = sub/real.h &&
	test "$(readlink "$TMP/wt/sub/up")" = .. &&
	test "$(cat "$TMP/wt/sub/alias.h")" = "int real;"
'

test_expect_success 'a symlink out replaced by a directory: nothing written outside' '
	git -C "$R" checkout -q -b todir base &&
	ln -s "$TMP/outside" "$R/d" && git -C "$R" add d &&
	git -C "$R" commit -q -m "d: a link out" &&
	git -C "$R" rm -q d && mkdir "$R/d" && echo "int f;" >"$R/d/f.c" &&
	git -C "$R" add d && git -C "$R" commit -q -m "d: a directory" &&
	git -C "$R" format-patch -q --stdout base >"$TMP/todir.mbox" &&
	git -C "$R" checkout -q main &&
	rm -rf "$TMP/wt" &&
	run "$QUORUM" apply -C "$R" --base base --worktree "$TMP/wt" --keep \
		"$TMP/todir.mbox" &&
	test "$rc" = 2 &&
	test_grep "writes d/f.c through the symlink d" "$TMP/out" &&
	test ! -e "$TMP/wt" &&
	test -z "$(ls "$TMP/outside")"
'

test_expect_success 'the link alone, patch 1 of it: refused in the worktree' '
	git -C "$R" format-patch -q --stdout -1 todir~1 >"$TMP/todir1.mbox" &&
	refused todir1 d
'

test_expect_success 'a directory replaced by a symlink out: refused, nothing written' '
	git -C "$R" checkout -q -b tolink base &&
	git -C "$R" rm -q -r sub && rm -rf "$R/sub" && ln -s "$TMP/outside" "$R/sub" &&
	git -C "$R" add sub && git -C "$R" commit -q -m "sub: a link out" &&
	git -C "$R" format-patch -q --stdout -1 >"$TMP/tolink.mbox" &&
	git -C "$R" checkout -q main &&
	rm -rf "$TMP/wt" &&
	run "$QUORUM" apply -C "$R" --base base --worktree "$TMP/wt" --keep \
		"$TMP/tolink.mbox" &&
	test "$rc" = 2 &&
	test ! -e "$TMP/wt" &&
	test -z "$(ls "$TMP/outside")"
'

test_done
