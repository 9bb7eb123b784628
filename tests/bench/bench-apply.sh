#!/bin/sh
# bench-apply: a 30-patch series of real iproute2 commits, applied by
# `quorum apply` (in memory) and by `git am` into a fresh worktree at the
# same base (what a maintainer would do), in the same run. Best of 3.
# Prints the ratio, the times, max RSS, and checks both trees are equal.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
QUORUM=${QUORUM_BIN:-$TOP/build/quorum}
SHARED=${QUORUM_SHARED:-$TOP/../shared}
BUNDLE=$SHARED/corpora/iproute2.bundle
N=30
TMP=$(mktemp -d "${TMPDIR:-/tmp}/quorum-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
export LC_ALL=C GIT_CONFIG_NOSYSTEM=1 HOME="$TMP/home"
mkdir -p "$HOME"
git config --global user.name "Bench" && git config --global user.email b@example.org

if [ ! -r "$BUNDLE" ]; then
	echo "apply: skipped (no corpus at $BUNDLE)"
	exit 0
fi
git clone -q "$BUNDLE" "$TMP/r" && cd "$TMP/r" || exit 1

# The newest run of N commits without a merge.
tip=
for c in $(git rev-list --no-merges -400 HEAD); do
	git rev-parse -q --verify "$c~$N" >/dev/null || continue
	[ -z "$(git rev-list --merges "$c~$N..$c")" ] && { tip=$c; break; }
done
[ -n "$tip" ] || { echo "apply: no linear run of $N commits"; exit 1; }
base=$(git rev-parse "$tip~$N")
git format-patch -q --stdout "$base..$tip" >"$TMP/series.mbox"
want=$(git rev-parse "$tip^{tree}")

now() { date +%s.%N; }
best() { # "a b c" -> smallest
	echo "$@" | tr ' ' '\n' | sort -g | head -1
}

q_times= am_times= wt_times=
for i in 1 2 3; do
	t0=$(now)
	"$QUORUM" apply --base "$base" "$TMP/series.mbox" >"$TMP/q.out" 2>&1 || {
		echo "apply: quorum failed:"; cat "$TMP/q.out"; exit 1; }
	t1=$(now)
	q_times="$q_times $(echo "$t1 - $t0" | bc)"

	rm -rf "$TMP/wt"; git worktree prune
	t0=$(now)
	git worktree add -q --detach "$TMP/wt" "$base"
	t1=$(now)
	(cd "$TMP/wt" && git am -q "$TMP/series.mbox") || { echo "apply: git am failed"; exit 1; }
	t2=$(now)
	wt_times="$wt_times $(echo "$t1 - $t0" | bc)"
	am_times="$am_times $(echo "$t2 - $t1" | bc)"
	am_tree=$(git -C "$TMP/wt" rev-parse 'HEAD^{tree}')
done
q_tree=$(sed -n "s/^patch $N\/$N applied: commit [0-9a-f]* tree //p" "$TMP/q.out")
[ "$q_tree" = "$want" ] && [ "$am_tree" = "$want" ] ||
	{ echo "apply: trees differ (quorum $q_tree, git am $am_tree, commit $want)"; exit 1; }

q=$(best $q_times) am=$(best $am_times) wt=$(best $wt_times)
q_rss=$(/usr/bin/time -f %M "$QUORUM" apply --base "$base" "$TMP/series.mbox" 2>&1 >/dev/null | tail -1)
rm -rf "$TMP/wt"; git worktree prune
git worktree add -q --detach "$TMP/wt" "$base"
am_rss=$(cd "$TMP/wt" && /usr/bin/time -f %M git am -q "$TMP/series.mbox" 2>&1 | tail -1)

printf 'apply: %.1fx git am (quorum %.3f s, git am %.3f s, %d patches, same tree)\n' \
	"$(echo "$am / $q" | bc -l)" "$q" "$am" "$N"
printf 'apply: %.1fx worktree add + git am (%.3f s + %.3f s)\n' \
	"$(echo "($wt + $am) / $q" | bc -l)" "$wt" "$am"
printf 'apply: max RSS quorum %d KB, git am %d KB\n' "$q_rss" "$am_rss"
