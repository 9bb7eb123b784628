#!/bin/sh
# bench-classify: quorum classify --stable, offline, on rdma-core (stable
# labels from the stable-vNN branches' "[ Upstream commit ID ]" lines),
# against what a user would run instead, measured in the same run:
#  - classify of the newest 3,000+ non-merge commits (--range), cold (no
#    cache: history read, releases, labels, model fitted) and warm;
#  - vs `git log --all --grep=<id>` per commit (is it already picked by
#    a stable branch? the label alone, no answer for new commits),
#    timed on a sample and scaled to the range;
#  - eval --stable over 2023-2024: AUC vs the has-Fixes: and subject
#    baselines.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
QUORUM=${QUORUM_BIN:-$TOP/build/quorum}
SHARED=${QUORUM_SHARED:-$TOP/../shared}
BUNDLE=$SHARED/corpora/rdma-core.bundle
TMP=$(mktemp -d "${TMPDIR:-/tmp}/quorum-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
export LC_ALL=C GIT_CONFIG_NOSYSTEM=1 HOME="$TMP/home"
mkdir -p "$HOME"

if [ ! -r "$BUNDLE" ]; then
	echo "classify: skipped (no corpus at $BUNDLE)"
	exit 0
fi
git clone -q -b master "$BUNDLE" "$TMP/r" && cd "$TMP/r" || exit 1

now() { date +%s.%N; }
ratio() { echo "scale=1; $1 / $2" | bc; }

N=3000
base=$(git rev-list --no-merges HEAD | sed -n "$((N + 1))p")
range="$base..HEAD"
t0=$(now)
"$QUORUM" classify --stable --range "$range" >"$TMP/cold" 2>"$TMP/err"
rc=$?
t1=$(now)
[ $rc -le 1 ] || { echo "classify: failed:"; cat "$TMP/err"; exit 1; }
cold=$(echo "$t1 - $t0" | bc)
n=$(grep -cE '^(yes|no) ' "$TMP/cold")
yes=$(grep -cE '^yes ' "$TMP/cold")
t0=$(now)
"$QUORUM" classify --stable --range "$range" >"$TMP/warm" 2>/dev/null
t1=$(now)
warm=$(echo "$t1 - $t0" | bc)
cmp -s "$TMP/cold" "$TMP/warm" || echo "classify: warm answers differ from cold"
echo "classify: $n commits ($yes yes) in ${cold}s cold, ${warm}s warm (cached facts and model)"

# The baseline on a sample of 30 commits of the range, scaled to n.
s=0
t0=$(now)
for c in $(git rev-list --no-merges "$range" | awk 'NR % 100 == 1' | head -30); do
	git log --all --oneline -F --grep="$c" >/dev/null
	s=$((s + 1))
done
t1=$(now)
per=$(echo "scale=4; ($t1 - $t0) / $s" | bc)
est=$(echo "scale=1; $per * $n" | bc)
echo "  vs git log --all --grep=<id> per commit: ${per}s each, ~${est}s for $n (quorum is $(ratio "$est" "$cold")x faster cold, $(ratio "$est" "$warm")x warm)"

"$QUORUM" eval --stable --since 2023-01-01 --until 2024-12-31 | sed 's/^/  eval 2023-2024: /'
