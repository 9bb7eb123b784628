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

# Options of every test script (as git's t/test-lib.sh): `sh tNNNN-x.sh -v`
# shows what each test_expect_success body printed, `-i` stops at the
# first failing test; prove passes them after `::`, and QUORUM_TEST_VERBOSE=1
# or QUORUM_TEST_IMMEDIATE=1 do the same from the environment.
verbose=${QUORUM_TEST_VERBOSE:-}
immediate=${QUORUM_TEST_IMMEDIATE:-}
for _arg in "$@"; do
	case $_arg in
	-v | --verbose) verbose=1 ;;
	-i | --immediate) immediate=1 ;;
	-h | --help)
		echo "usage: sh $0 [-v|--verbose] [-i|--immediate]"
		exit 0
		;;
	esac
done

plan() { echo "1..$1"; }
done_testing() { echo "1..$_tap_n"; [ "$_tap_fail" -eq 0 ]; exit $?; }
test_done() { done_testing; }
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

# test_expect_success [PREREQ] DESCRIPTION BODY: eval BODY (a chain of
# commands joined by &&, as in git's tests) in this shell, so that what it
# sets stays set for the next test, and report `ok N - DESCRIPTION` when
# it exits 0, else `not ok N - DESCRIPTION` with the body, and with -v
# what it printed. A failing setup step thus fails where it happens,
# under its own name. A body ends with its last command's status; it
# must not `return` or `exit` (that leaves the test unreported). PREREQ (names joined by commas, as set by
# test_set_prereq) missing: the test is skipped.
test_expect_success() {
	_test_run success "$@"
}

# test_expect_failure [PREREQ] DESCRIPTION BODY: a known breakage, kept
# in the suite: a failing BODY is `not ok N - DESCRIPTION # TODO known
# breakage` (prove counts it as passing), one that passes is reported as
# `ok ... # TODO known breakage vanished` so someone turns it around.
test_expect_failure() {
	_test_run failure "$@"
}

# test_set_prereq NAME / test_have_prereq NAME[,NAME...]
_test_prereqs=,
test_set_prereq() { _test_prereqs="$_test_prereqs$1,"; }
test_have_prereq() {
	_p_rest=$1,
	while [ -n "$_p_rest" ]; do
		case $_test_prereqs in
		*",${_p_rest%%,*},"*) ;;
		*) return 1 ;;
		esac
		_p_rest=${_p_rest#*,}
	done
	return 0
}

_test_run() {
	_t_want=$1
	shift
	_t_prereq=
	if [ $# -eq 3 ]; then
		_t_prereq=$1
		shift
	fi
	[ $# -eq 2 ] || { echo "Bail out! test_expect_$_t_want wants [PREREQ] DESCRIPTION BODY"; exit 1; }
	_tap_n=$((_tap_n + 1))
	if [ -n "$_t_prereq" ] && ! test_have_prereq "$_t_prereq"; then
		echo "ok $_tap_n # SKIP $1 (missing $_t_prereq)"
		return 0
	fi
	# The body runs in this shell (its variables and cd stay), its
	# output goes to a file, shown on failure with -v.
	if [ -n "$verbose" ]; then
		echo "# expecting $_t_want: $1"
	fi
	eval "$2" >"$TMP/.test-output" 2>&1 </dev/null
	_t_rc=$?
	if [ -n "$verbose" ] && [ -s "$TMP/.test-output" ]; then
		sed 's/^/#   | /' "$TMP/.test-output"
	fi
	case $_t_want,$_t_rc in
	success,0) echo "ok $_tap_n - $1" ;;
	failure,0) echo "ok $_tap_n - $1 # TODO known breakage vanished" ;;
	failure,*) echo "not ok $_tap_n - $1 # TODO known breakage" ;;
	*)
		echo "not ok $_tap_n - $1"
		echo "#   exit status $_t_rc of:"
		printf '%s\n' "$2" | sed -e '/^[[:space:]]*$/d' -e 's/^/#\t/'
		if [ -z "$verbose" ]; then
			echo "#   (sh $0 -v shows its output)"
		fi
		_tap_fail=$((_tap_fail + 1))
		if [ -n "$immediate" ]; then
			echo "1..$_tap_n"
			exit 1
		fi
		;;
	esac
	return 0
}

# test_cmp WANT GOT: the files are the same (a diff shows how they differ)
test_cmp() { diff -u "$@"; }

# test_must_fail CMD...: CMD exits non-zero, not by a signal (a crash or
# a sanitizer abort is not the failure a test expects)
test_must_fail() {
	"$@"
	_tmf=$?
	if [ $_tmf -eq 0 ]; then
		echo "test_must_fail: $* succeeded" >&2
		return 1
	elif [ $_tmf -gt 128 ]; then
		echo "test_must_fail: $* died of signal $((_tmf - 128))" >&2
		return 1
	fi
	return 0
}

# test_grep [-v] REGEX FILE: FILE has a line matching REGEX (grep -E),
# or with -v none; else the file, or the lines that match, go to stderr
# (shown with -v), as git's test_grep
test_grep() {
	if [ "$1" = -v ]; then
		shift
		if grep -Eq -- "$1" "$2"; then
			echo "test_grep: '$2' has lines matching /$1/:" >&2
			grep -E -- "$1" "$2" | head -10 >&2
			return 1
		fi
		return 0
	fi
	grep -Eq -- "$1" "$2" && return 0
	echo "test_grep: '$2' has no line matching /$1/; it has:" >&2
	head -20 "$2" >&2
	return 1
}

# test_line_count OP N FILE: `test_line_count = 1 err`
test_line_count() {
	[ "$(lines "$3")" "$1" "$2" ] || {
		echo "test_line_count: $3 has $(lines "$3") lines, want $1 $2" >&2
		return 1
	}
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

# commit_functions DIR N [NAME]: N commits on DIR, the Ith adding NAMEI.c
# (NAME defaults to f) with `int NAMEI(int x)`, subject "NAMEI: add NAMEI()"
commit_functions() {
	_cf_i=1
	while [ $_cf_i -le "$2" ]; do
		_cf_n=${3:-f}$_cf_i
		printf 'int %s(int x)\n{\n\treturn x + %d;\n}\n' "$_cf_n" $_cf_i >"$1/$_cf_n.c"
		git -C "$1" add "$_cf_n.c" &&
			git -C "$1" commit -q -m "$_cf_n: add $_cf_n()" || return 1
		_cf_i=$((_cf_i + 1))
	done
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

# commit_item_new DIR [SUBJECT]: commit "main: add item_new()" (or
# SUBJECT), whose malloc() result is used unchecked (the rules voter's
# medium null-deref).
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
	git -C "$1" commit -q -am "${2:-main: add item_new()}"
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
