#!/bin/sh
# Exactly once under kill -9: quorum watch --once is killed at random
# points while it answers 50 series, and restarted each time. At the end
# every series has exactly one reply in the outbox and one row in state.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/watch.sh"

command -v notmuch >/dev/null || skip_all "notmuch is not installed"
command -v sqlite3 >/dev/null || skip_all "sqlite3 is not installed"

NSERIES=${NSERIES:-50}
notmuch_setup
export GIT_COMMITTER_NAME="$GIT_AUTHOR_NAME" GIT_COMMITTER_EMAIL="$GIT_AUTHOR_EMAIL"
R=$TMP/repo
make_repo "$R"
watch_config
i=1
while [ $i -le "$NSERIES" ]; do
	git -C "$R" checkout -q -b "s$i" main
	printf '\nint get%d(struct item *it) { return it->id + %d; }\n' $i $i >>"$R/main.c"
	git -C "$R" commit -q -am "main: add get$i()"
	printf '\nstruct item *new%d(void)\n{\n\tstruct item *it = malloc(sizeof(*it));\n\n\tit->id = %d;\n\treturn it;\n}\n' $i $i >>"$R/main.c"
	git -C "$R" commit -q -am "main: add new$i()"
	git -C "$R" format-patch -q --cover-letter --thread=shallow --to="$LIST" \
		-o "$TMP/s$i" main
	maildir_put "$TMP/s$i"
	i=$((i + 1))
done
git -C "$R" checkout -q main
notmuch new --quiet

[ -n "${TIMEIT:-}" ] && { time "$QUORUM" watch --once; exit 0; }
# How long a run takes to start (open notmuch, query, nothing to do), so
# the kills land during the work on fast and on sanitizer builds alike.
printf '[notmuch]\n\tdatabase = %s\n[list "probe"]\n\taddress = nobody@nowhere.invalid\n[watch]\n\tstate = %s\n' \
	"$MAIL" "$TMP/probe.db" >"$TMP/probe.conf"
# The quicker of two probes: a loaded machine can stretch one of them,
# and kills that come too late find every run already done.
startup=
for probe in 1 2; do
	t0=$(date +%s.%N)
	QUORUM_CONFIG=$TMP/probe.conf "$QUORUM" watch --once >/dev/null 2>&1
	t1=$(date +%s.%N)
	startup=$(awk -v a="$t0" -v b="$t1" -v f="$startup" \
		'BEGIN { t = b - a; if (f != "" && f < t) t = f; printf "%.3f", t }')
done
echo "# a run starts in $startup s"

# Kill at random points; restart each time, until every series has its
# reply. A kill counts as mid-work when some replies were out and some not.
kills=0
mid=0
runs=0
while [ $runs -lt 300 ]; do
	runs=$((runs + 1))
	"$QUORUM" watch --once >"$TMP/run.out" 2>"$TMP/run.err" &
	pid=$!
	delay=$(awk -v s="$runs" -v t="$startup" 'BEGIN { srand(s * 7919); printf "%.3f", t * (1 + rand() * 2) }')
	sleep "$delay"
	if kill -9 $pid 2>/dev/null; then
		wait $pid 2>/dev/null
		kills=$((kills + 1))
		out=$(ls "$OUTBOX/new" 2>/dev/null | wc -l)
		[ "$out" -gt 0 ] && [ "$out" -lt "$NSERIES" ] && mid=$((mid + 1))
	else
		wait $pid
		st=$?
		if [ $st -ne 0 ]; then
			echo "# run $runs exited $st:"; sed 's/^/#   /' "$TMP/run.err"
		fi
	fi
	[ "$(ls "$OUTBOX/new" 2>/dev/null | wc -l)" -ge "$NSERIES" ] && break
done
echo "# $kills kills in $runs runs, $mid of them mid-work"
ok $([ $mid -ge 5 ]; echo $?) "watch was killed mid-work at least 5 times ($mid)"

# Undisturbed runs: the first finishes what is left, the next finds
# nothing more to do.
"$QUORUM" watch --once >/dev/null 2>&1
run "$QUORUM" watch --once
is "$rc" 0 "the last run exits 0"
like "$TMP/out" '^watch: 0 reviewed, 0 waiting, 0 skipped, 0 failed, 0 delivered' \
	"nothing was left to review or deliver"

DB=$XDG_STATE_HOME/quorum/state.db
is "$(ls "$OUTBOX/new" | wc -l | tr -d ' ')" "$NSERIES" "$NSERIES replies in the outbox"
is "$(ls "$OUTBOX/tmp" | wc -l | tr -d ' ')" 0 "no half-written file left in tmp/ is visible as mail"
is "$(sqlite3 "$DB" 'select count(*) from replies')" "$NSERIES" "$NSERIES replies recorded"
is "$(sqlite3 "$DB" 'select count(*) from replies where state = 1')" "$NSERIES" \
	"every reply is marked sent"
is "$(sqlite3 "$DB" 'select count(*) from series where status = 2')" "$NSERIES" \
	"every series is marked reviewed"

# Each cover letter is answered exactly once.
grep -h '^In-Reply-To:' "$OUTBOX"/new/* | sort | uniq -d >"$TMP/dups"
is "$(lines "$TMP/dups")" 0 "no series is answered twice"
grep -h '^In-Reply-To:' "$OUTBOX"/new/* | grep -c '<cover\.' >"$TMP/ncov"
is "$(cat "$TMP/ncov")" "$NSERIES" "every reply answers a cover letter"

done_testing
