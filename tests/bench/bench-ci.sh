#!/bin/sh
# bench-ci: `quorum ci --range` over 50 real iproute2 commits (offline
# voters, history index) against what a CI job would script without it:
# for each commit, `git format-patch -1 --stdout C | quorum review
# --base C~1 -`, in the same run. Best of 3. Prints the ratio, the times,
# max RSS, and checks both saw every commit.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
QUORUM=${QUORUM_BIN:-$TOP/build/quorum}
SHARED=${QUORUM_SHARED:-$TOP/../shared}
BUNDLE=$SHARED/corpora/iproute2.bundle
N=50
TMP=$(mktemp -d "${TMPDIR:-/tmp}/quorum-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
export LC_ALL=C GIT_CONFIG_NOSYSTEM=1 HOME="$TMP/home" XDG_STATE_HOME="$TMP/state"
mkdir -p "$HOME"
unset QUORUM_CONFIG

if [ ! -r "$BUNDLE" ]; then
	echo "ci: skipped (no corpus at $BUNDLE)"
	exit 0
fi
git clone -q "$BUNDLE" "$TMP/r" && cd "$TMP/r" || exit 1
"$QUORUM" index --quiet >/dev/null 2>&1 || { echo "ci: quorum index failed"; exit 1; }
tip=$(git rev-list --no-merges -n 1 HEAD)
from=$(git rev-list --no-merges -n $((N + 1)) "$tip" | tail -1)
git rev-list --reverse --no-merges "$from..$tip" >"$TMP/ids"
n=$(wc -l <"$TMP/ids" | tr -d ' ')

now() { date +%s.%N; }
best() { echo "$@" | tr ' ' '\n' | sort -g | head -1; }

ci_times= loop_times=
for i in 1 2 3; do
	t0=$(now)
	/usr/bin/time -f "%M" -o "$TMP/ci.rss" "$QUORUM" ci --range "$from..$tip" \
		--max-commits 100000 --format json --output "$TMP/ci.json" 2>"$TMP/ci.err"
	rc=$?
	t1=$(now)
	[ $rc -le 1 ] || { echo "ci: quorum ci failed ($rc):"; cat "$TMP/ci.err"; exit 1; }
	ci_times="$ci_times $(echo "$t1 - $t0" | bc)"

	t0=$(now)
	seen=0
	while read -r c; do
		git format-patch -1 --stdout "$c" |
			"$QUORUM" review --base "$c~1" --format json - >"$TMP/one.json" 2>/dev/null
		[ $? -le 1 ] && seen=$((seen + 1))
	done <"$TMP/ids"
	t1=$(now)
	loop_times="$loop_times $(echo "$t1 - $t0" | bc)"
done
reviewed=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(sum(len(r["commits"]) for r in d["reviews"]))
' "$TMP/ci.json")
runs=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["reviews"]))' "$TMP/ci.json")
ci=$(best $ci_times)
loop=$(best $loop_times)
printf 'ci: %d commits (%d with a diff, in %d runs): quorum ci %.2f s, format-patch | quorum review per commit %.2f s (%d reviewed)\n' \
	"$n" "$reviewed" "$runs" "$ci" "$loop" "$seen"
echo "ci: ratio $(echo "scale=1; $loop / $ci" | bc)x faster than a per-commit loop;" \
	"max RSS $(tail -1 "$TMP/ci.rss") KB"
