# tests/lib/history.sh - git histories with bugs and the commits that fixed
# them, for the history index, similar, eval, risk and grounding tests
# (after lib.sh). Every commit is made by the test itself, with dates from
# a clock of its own, so ids and ages are the same on every run.
#
#   tick              the next commit's date: CLOCK_STEP seconds (default
#                     an hour) after the last one, counted from CLOCK_START
#                     (default 1700000000); sets GIT_AUTHOR_DATE and
#                     GIT_COMMITTER_DATE; CLOCK_N counts the ticks
#   history_repo      an empty repo in $R ($TMP/repo), now the working
#                     directory
#   net_c [bug]       write net.c: parse_opts() as a stub, or (bug) with an
#                     unbounded memcpy() of the argument into o->name
#   net_c_fix         bound that copy in net.c, as its fix did
#   net_c_alias       append parse_alias(), which re-adds the unbounded copy
#   commit_net_bug    commit net.c as a stub ("net: initial"), then with
#                     the bug ("net: parse the interface name", $BUG)
#   commit_net_fix BUG   tick, net_c_fix and commit the fix of BUG; $FIX
#   fixes COMMIT      the line `Fixes: <12 hex digits> ("<its subject>")`
#   c_function NAME CALLEE LINES   print int NAME(int *v, int n) of LINES
#                     statements calling CALLEE
#   risk_history N    N big features (featI.c, $FI their commit) with a
#                     docs tidy-up after each, then a fix of every other
#                     feature: the history the risk model learns from
#   risk_features REPO COMMIT [NAME...]
#                     the risk features the index of REPO stored for
#                     COMMIT: NAME=value for each NAME, else every value
#                     in stored order (needs python3)

CLOCK_START=${CLOCK_START:-1700000000}
CLOCK_STEP=${CLOCK_STEP:-3600}
CLOCK_N=0

tick() {
	CLOCK_N=$((CLOCK_N + 1))
	export GIT_COMMITTER_DATE="$((CLOCK_START + CLOCK_N * CLOCK_STEP)) +0000"
	export GIT_AUTHOR_DATE="$GIT_COMMITTER_DATE"
}

history_repo() {
	R=$TMP/repo
	mkdir -p "$R" && git -C "$R" init -q && cd "$R"
}

net_c() {
	if [ "${1:-}" = bug ]; then
		cat >net.c <<'EOC'
#include <string.h>

struct opts {
	char name[16];
	int mtu;
};

int parse_opts(struct opts *o, const char *arg)
{
	size_t arg_len = strlen(arg);

	memcpy(o->name, arg, arg_len);
	o->mtu = parse_mtu_value(arg, arg_len);
	return 0;
}
EOC
	else
		cat >net.c <<'EOC'
#include <string.h>

struct opts {
	char name[16];
	int mtu;
};

int parse_opts(struct opts *o, const char *arg)
{
	return 0;
}
EOC
	fi
}

net_c_fix() {
	sed -i 's/memcpy(o->name, arg, arg_len);/memcpy(o->name, arg, min(arg_len, sizeof(o->name) - 1));/' net.c
}

net_c_alias() {
	cat >>net.c <<'EOC'

int parse_alias(struct opts *o, const char *arg)
{
	size_t arg_len = strlen(arg);

	memcpy(o->name, arg, arg_len);
	o->mtu = parse_mtu_value(arg, arg_len);
	return 1;
}
EOC
}

fixes() {
	printf 'Fixes: %s ("%s")\n' "$(git rev-parse --short=12 "$1")" \
		"$(git log -1 --format=%s "$1")"
}

commit_net_bug() {
	net_c &&
	tick && git add net.c && git commit -q -m "net: initial" &&
	net_c bug &&
	tick && git commit -q -am "net: parse the interface name" &&
	BUG=$(git rev-parse HEAD)
}

commit_net_fix() {
	net_c_fix
	tick
	git commit -q -am "net: bound the name copy in parse_opts" \
		-m "A name longer than 15 bytes overflowed o->name.

$(fixes "$1")" &&
	FIX=$(git rev-parse HEAD)
}

c_function() {
	echo "int $1(int *v, int n)"
	echo "{"
	_cf_j=0
	while [ $_cf_j -lt "$3" ]; do
		echo "	v[$_cf_j % n] += $2(v, n, $_cf_j);"
		_cf_j=$((_cf_j + 1))
	done
	echo "	return 0;"
	echo "}"
}

risk_history() {
	_rh_i=0
	while [ $_rh_i -lt "$1" ]; do
		tick
		c_function "feature_$_rh_i" "feature_helper_$_rh_i" 60 >"feat$_rh_i.c"
		git add "feat$_rh_i.c" && git commit -q -m "feat: add feature $_rh_i" || return 1
		eval "F$_rh_i=\$(git rev-parse HEAD)"
		tick
		echo "/* tidy $_rh_i */" >>notes.txt
		git add notes.txt && git commit -q -m "docs: tidy $_rh_i" || return 1
		_rh_i=$((_rh_i + 1))
	done
	_rh_i=0
	while [ $_rh_i -lt "$1" ]; do
		tick
		eval "_rh_f=\$F$_rh_i"
		sed -i 's/return 0;/return n ? 0 : -1;/' "feat$_rh_i.c"
		git commit -q -am "feat: fix feature $_rh_i" -m "$(fixes "$_rh_f")" || return 1
		_rh_i=$((_rh_i + 2))
	done
}

risk_features() {
	python3 - "$1/.git/quorum/history.db" "$@" <<'EOP'
import sqlite3, struct, sys
db = sqlite3.connect(sys.argv[1])
names = db.execute("SELECT value FROM meta"
                   " WHERE key = 'risk_features'").fetchone()[0].split()
row = db.execute("SELECT r.x FROM risk r JOIN commits c ON c.seq = r.seq"
                 " WHERE c.oid = ?", (sys.argv[3],)).fetchone()
assert row, "no features for " + sys.argv[3]
v = struct.unpack("%df" % (len(row[0]) // 4), row[0])
assert len(v) == len(names), "%d values, %d names" % (len(v), len(names))
f = dict(zip(names, v))
if sys.argv[4:]:
    print(" ".join("%s=%g" % (n, f[n]) for n in sys.argv[4:]))
else:
    print(" ".join("%g" % x for x in v))
EOP
}
