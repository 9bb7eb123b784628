#!/bin/sh
# bench-history: the history index on iproute2's full history, against
# what a user would run instead, measured in the same run:
#  - quorum index (full build, best of 3) vs `git log --format=%B | grep
#    Fixes:` (just finding the trailers) and `git log --numstat` (the
#    cheapest way to get per-commit churn); commits/s, max RSS;
#  - a no-change rerun;
#  - quorum similar over 40 recent commits: median in-process search time
#    and median wall time per call, vs `git log -S<identifier>` (grep the
#    history for one identifier the commit adds);
#  - quorum eval over 2022-2023: AUC of the risk score vs lines changed.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
QUORUM=${QUORUM_BIN:-$TOP/build/quorum}
SHARED=${QUORUM_SHARED:-$TOP/../shared}
BUNDLE=$SHARED/corpora/iproute2.bundle
TMP=$(mktemp -d "${TMPDIR:-/tmp}/quorum-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
export LC_ALL=C GIT_CONFIG_NOSYSTEM=1 HOME="$TMP/home"
mkdir -p "$HOME"

if [ ! -r "$BUNDLE" ]; then
	echo "history: skipped (no corpus at $BUNDLE)"
	exit 0
fi
git clone -q "$BUNDLE" "$TMP/r" && cd "$TMP/r" || exit 1

now() { date +%s.%N; }
best() { echo "$@" | tr ' ' '\n' | grep . | sort -g | head -1; }
median() { echo "$@" | tr ' ' '\n' | grep . | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
ratio() { echo "scale=2; $1 / $2" | bc; }

commits=$(git rev-list --count HEAD)
q= g= ns= rss=
for i in 1 2 3; do
	t0=$(now)
	/usr/bin/time -f %M -o "$TMP/rss" "$QUORUM" index --rebuild >"$TMP/index.out" 2>"$TMP/index.err" ||
		{ echo "history: quorum index failed:"; cat "$TMP/index.err"; exit 1; }
	t1=$(now)
	q="$q $(echo "$t1 - $t0" | bc)"
	rss="$rss $(cat "$TMP/rss")"
	t0=$(now)
	git log --format=%B | grep -c '^Fixes:' >"$TMP/fixes.count"
	t1=$(now)
	g="$g $(echo "$t1 - $t0" | bc)"
	t0=$(now)
	git log --no-merges --numstat --format=%H >/dev/null
	t1=$(now)
	ns="$ns $(echo "$t1 - $t0" | bc)"
done
qi=$(best $q); gi=$(best $g); ni=$(best $ns)
echo "index: $commits commits in ${qi}s = $(echo "$commits / $qi" | bc) commits/s, max RSS $(($(best $rss) / 1024)) MB"
echo "  vs git log | grep Fixes: ${gi}s (quorum is $(ratio "$qi" "$gi")x its time; it finds $(cat "$TMP/fixes.count") trailer lines, no pairs)"
echo "  vs git log --numstat ${ni}s (quorum is $(ratio "$qi" "$ni")x its time)"
sed -n 's/^/  /; /pairs\|Fixes:\|reverts/p' "$TMP/index.out"

t0=$(now)
"$QUORUM" index >/dev/null
t1=$(now)
echo "rerun with nothing new: $(echo "$t1 - $t0" | bc)s"

# similar: the 40 newest non-merge commits that touch C code.
ms= wall= gs=
for c in $(git rev-list --no-merges -200 HEAD -- '*.c' | head -40); do
	t0=$(now)
	"$QUORUM" similar --timing "$c" >/dev/null 2>"$TMP/t" || { echo "history: similar $c failed"; exit 1; }
	t1=$(now)
	ms="$ms $(sed -n 's/^similar: search took \([0-9.]*\) ms/\1/p' "$TMP/t")"
	wall="$wall $(echo "($t1 - $t0) * 1000" | bc)"
	tok=$(git show --format= "$c" -- '*.c' | sed -n 's/^+[^+]//p' | grep -oE '[A-Za-z_][A-Za-z0-9_]{7,}' | head -1)
	[ -n "$tok" ] || continue
	t0=$(now)
	git log -S"$tok" --oneline >/dev/null
	t1=$(now)
	gs="$gs $(echo "($t1 - $t0) * 1000" | bc)"
done
mq=$(median $ms); mw=$(median $wall); mg=$(median $gs)
echo "similar: median search ${mq} ms in process, ${mw} ms per call (process start included)"
echo "  vs git log -S<identifier> median ${mg} ms (quorum similar is $(ratio "$mg" "$mw")x faster per call)"

"$QUORUM" eval --since 2022-01-01 --until 2023-12-31 --json >"$TMP/eval.json" ||
	{ echo "history: eval failed"; exit 1; }
echo "eval 2022-01-01..2023-12-31: $(cat "$TMP/eval.json")"
