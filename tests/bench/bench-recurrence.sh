#!/bin/sh
# bench-recurrence: does `quorum similar` find a past bug when it comes
# back in another shape? On iproute2's history, 150 past fixes' buggy
# code (the pre-image of each fix's largest C hunk) is posted again as a
# new file elsewhere (tests/bench/recur.py): (a) as is, (b) with every
# name renamed, (c) renamed with one line removed, added or changed.
# recall@5: the fix is among the 5 pairs shown. The lexical-only ranking
# (QUORUM_SIMILAR_LEXICAL=1) is measured in the same run, and so is the
# search time (p50, in process) and `quorum index --rebuild` commits/s
# (best of 3); with QUORUM_BASE_BIN set to an older quorum, its index
# speed is measured too, alternating, as the ratio new/old.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
QUORUM=${QUORUM_BIN:-$TOP/build/quorum}
BASE=${QUORUM_BASE_BIN:-}
SHARED=${QUORUM_SHARED:-$TOP/../shared}
BUNDLE=$SHARED/corpora/iproute2.bundle
N=${RECUR_N:-150}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/quorum-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
export LC_ALL=C GIT_CONFIG_NOSYSTEM=1 HOME="$TMP/home"
mkdir -p "$HOME"

if [ ! -r "$BUNDLE" ]; then
	echo "recurrence: skipped (no corpus at $BUNDLE)"
	exit 0
fi
for t in python3 sqlite3 bc; do
	command -v $t >/dev/null 2>&1 || { echo "recurrence: skipped (no $t)"; exit 0; }
done
git clone -q "$BUNDLE" "$TMP/r" && cd "$TMP/r" || exit 1
[ -z "$BASE" ] || git clone -q "$BUNDLE" "$TMP/b" || exit 1

now() { date +%s.%N; }
best() { echo "$@" | tr ' ' '\n' | grep . | sort -g | head -1; }
median() { echo "$@" | tr ' ' '\n' | grep . | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

commits=$(git rev-list --no-merges --count HEAD)
qn= qb=
for i in 1 2 3; do
	t0=$(now)
	"$QUORUM" index --rebuild >/dev/null 2>"$TMP/err" || { echo "recurrence: index failed:"; cat "$TMP/err"; exit 1; }
	t1=$(now)
	qn="$qn $(echo "$t1 - $t0" | bc)"
	if [ -n "$BASE" ]; then
		t0=$(now)
		(cd "$TMP/b" && "$BASE" index --rebuild >/dev/null 2>&1)
		t1=$(now)
		qb="$qb $(echo "$t1 - $t0" | bc)"
	fi
done
tn=$(best $qn)
echo "index --rebuild: $commits commits in ${tn}s = $(echo "$commits / $tn" | bc) commits/s (best of 3)"
if [ -n "$BASE" ]; then
	tb=$(best $qb)
	echo "  base $BASE: ${tb}s = $(echo "$commits / $tb" | bc) commits/s; new/base speed $(echo "scale=2; $tb / $tn" | bc)"
fi

sqlite3 "$(git rev-parse --git-dir)/quorum/history.db" \
	"SELECT DISTINCT fix_oid FROM pairs WHERE kind = 'fixes'" |
	python3 "$TOP/tests/bench/recur.py" "$TMP/rec" "$N" || exit 1
total=$(wc -l <"$TMP/rec/list")

# recall VARIANT MODE: hits of the fix in the top 5; MODE lexical or new.
recall() {
	hits=0
	ms=
	while read -r k fix; do
		if [ "$2" = lexical ]; then
			QUORUM_SIMILAR_LEXICAL=1 "$QUORUM" similar --timing -k 5 "$TMP/rec/$1/$k.mbox" >"$TMP/out" 2>"$TMP/t"
		else
			"$QUORUM" similar --timing -k 5 "$TMP/rec/$1/$k.mbox" >"$TMP/out" 2>"$TMP/t"
		fi
		ms="$ms $(sed -n 's/^similar: search took \([0-9.]*\) ms/\1/p' "$TMP/t")"
		short=$(echo "$fix" | cut -c1-12)
		grep -q "^   fix  $short" "$TMP/out" && hits=$((hits + 1))
	done <"$TMP/rec/list"
	echo "$hits $(median $ms)"
}

echo "recall@5 of the fix, $total past bugs posted again in a new file:"
printf '  %-28s %14s %14s\n' "variant" "lexical (old)" "names+shape"
p50= op50=
for v in a b c; do
	set -- $(recall $v lexical)
	old=$1 oldms=$2
	set -- $(recall $v new)
	new=$1 newms=$2
	case $v in
	a) name="(a) as is" ;;
	b) name="(b) renamed" ;;
	c) name="(c) renamed + a line changed" ;;
	esac
	printf '  %-28s %13s%% %13s%%\n' "$name" \
		"$(echo "scale=1; 100 * $old / $total" | bc)" \
		"$(echo "scale=1; 100 * $new / $total" | bc)"
	p50="$p50 $newms"
	op50="$op50 $oldms"
done
echo "similar search time, median of the variants' medians: $(median $p50) ms (lexical only: $(median $op50) ms)"
