# tests/lib.sh - a small TAP library for quorum's shell tests.
#
# Each test script sources this, calls `plan N` (or `done_testing` at the
# end), and uses `ok`, `is`, `like` and `run`. Every test gets its own
# scratch directory ($TMP) and a fixed git identity, so tests never touch
# the user's config or repos.

set -u

TOP=$(cd "$(dirname "$0")/.." && pwd)
QUORUM=${QUORUM_BIN:-$TOP/build/quorum}
SHARED=${QUORUM_SHARED:-$TOP/../shared}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/quorum-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

export HOME="$TMP/home"
export XDG_CONFIG_HOME="$HOME/.config"
export XDG_STATE_HOME="$HOME/.local/state"
export XDG_DATA_HOME="$HOME/.local/share"
mkdir -p "$HOME"
unset QUORUM_CONFIG
export GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME="A U Thor" GIT_AUTHOR_EMAIL="author@example.org"
export GIT_COMMITTER_NAME="C O Mitter" GIT_COMMITTER_EMAIL="committer@example.org"
export GIT_AUTHOR_DATE="1700000000 +0000" GIT_COMMITTER_DATE="1700000000 +0000"
export LC_ALL=C
git config --global init.defaultBranch main
git config --global user.name "A U Thor"
git config --global user.email "author@example.org"

_tap_n=0
_tap_fail=0

plan() { echo "1..$1"; }
done_testing() { echo "1..$_tap_n"; [ "$_tap_fail" -eq 0 ]; exit $?; }
skip_all() { echo "1..0 # SKIP $*"; exit 0; }

# ok COND-EXIT-STATUS DESCRIPTION: `ok $? "desc"` or `cmd; ok $? desc`
ok() {
	_tap_n=$((_tap_n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $_tap_n - $2"
	else
		echo "not ok $_tap_n - $2"
		_tap_fail=$((_tap_fail + 1))
	fi
}

# is GOT WANT DESCRIPTION
is() {
	_tap_n=$((_tap_n + 1))
	if [ "$1" = "$2" ]; then
		echo "ok $_tap_n - $3"
	else
		echo "not ok $_tap_n - $3"
		echo "#   got:  '$1'"
		echo "#   want: '$2'"
		_tap_fail=$((_tap_fail + 1))
	fi
}

# like FILE REGEX DESCRIPTION (grep -E)
like() {
	_tap_n=$((_tap_n + 1))
	if grep -Eq -- "$2" "$1"; then
		echo "ok $_tap_n - $3"
	else
		echo "not ok $_tap_n - $3"
		echo "#   '$1' does not match /$2/; it has:"
		sed 's/^/#   /' "$1" | head -20
		_tap_fail=$((_tap_fail + 1))
	fi
}

# unlike FILE REGEX DESCRIPTION
unlike() {
	_tap_n=$((_tap_n + 1))
	if grep -Eq -- "$2" "$1"; then
		echo "not ok $_tap_n - $3"
		grep -E -- "$2" "$1" | sed 's/^/#   matched: /' | head -5
		_tap_fail=$((_tap_fail + 1))
	else
		echo "ok $_tap_n - $3"
	fi
}

# run CMD...: runs it with stdout in $TMP/out, stderr in $TMP/err, status in $rc
run() {
	"$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
}

# lines FILE: the number of lines in FILE
lines() { wc -l <"$1" | tr -d ' '; }

# make_repo DIR: a git repo with one C file, committed
make_repo() {
	mkdir -p "$1" && git -C "$1" init -q &&
	cat >"$1/main.c" <<'EOC'
#include <stdlib.h>
#include <string.h>

struct item {
	int id;
	char name[32];
};

int count_items(struct item *items, int n)
{
	int i, c = 0;

	for (i = 0; i < n; i++)
		if (items[i].id)
			c++;
	return c;
}
EOC
	git -C "$1" add main.c && git -C "$1" commit -q -m "initial"
}

# commit_sum_ids DIR: commit "main: add sum_ids()" to make_repo's main.c,
# a clean function.
commit_sum_ids() {
	cat >>"$1/main.c" <<'EOC'

int sum_ids(struct item *items, int n)
{
	int i, s = 0;

	for (i = 0; i < n; i++)
		s += items[i].id;
	return s;
}
EOC
	git -C "$1" commit -q -am "main: add sum_ids()"
}

# commit_item_new DIR: commit "main: add item_new()", whose malloc()
# result is used unchecked (the rules voter's medium null-deref).
commit_item_new() {
	cat >>"$1/main.c" <<'EOC'

struct item *item_new(int id)
{
	struct item *it;

	it = malloc(sizeof(*it));
	it->id = id;
	return it;
}
EOC
	git -C "$1" commit -q -am "main: add item_new()"
}

# item_series DIR: on DIR's tag base, the series "main: item helpers"
# (commit_sum_ids, commit_item_new) as $TMP/series/*.patch with a cover
# letter and as $TMP/series.mbox, the clean first patch alone in
# $TMP/clean/; DIR is left checked out at base (detached).
item_series() {
	commit_sum_ids "$1"
	commit_item_new "$1"
	git -C "$1" format-patch -q --cover-letter -o "$TMP/series" base
	sed -i 's/\*\*\* SUBJECT HERE \*\*\*/main: item helpers/' "$TMP"/series/0000-*.patch
	cat "$TMP"/series/*.patch >"$TMP/series.mbox"
	git -C "$1" format-patch -q -o "$TMP/clean" -1 HEAD~1
	git -C "$1" checkout -q base
}
