#!/bin/sh
# bench-parse: `quorum parse --json` over a large git format-patch mbox,
# against what a user would do instead: `git mailsplit` and then
# `git mailinfo` per message, on the same mbox in the same run.
#
# The mbox is >= 5,000 patches of iproute2's history (../shared/corpora).
# Then a ~1 GB mbox made by repeating it checks that peak memory stays flat
# (quorum parse keeps metadata only and drops repeated message-ids). The
# big run is on by default when TMPDIR has 4 GB free; QUORUM_BENCH_BIG=0
# skips it, QUORUM_BENCH_BIG=1 forces it. QUORUM_BENCH_PATCHES sets the
# patch count (default 5000).
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
QUORUM=${QUORUM_BIN:-$TOP/build/quorum}
SHARED=${QUORUM_SHARED:-$TOP/../shared}
BUNDLE=$SHARED/corpora/iproute2.bundle
N=${QUORUM_BENCH_PATCHES:-5000}

if [ ! -f "$BUNDLE" ]; then
	echo "parse: skipped ($BUNDLE is absent)"
	exit 0
fi
[ -x "$QUORUM" ] || { echo "parse: $QUORUM is not built"; exit 1; }
[ -x /usr/bin/time ] || { echo "parse: /usr/bin/time is needed"; exit 1; }

W=$(mktemp -d "${TMPDIR:-/tmp}/quorum-bench-parse.XXXXXX")
trap 'rm -rf "$W"' EXIT
export GIT_CONFIG_NOSYSTEM=1 HOME="$W/home" LC_ALL=C
mkdir -p "$HOME"

git clone -q "$BUNDLE" "$W/iproute2" 2>/dev/null ||
	{ echo "parse: cannot clone $BUNDLE"; exit 1; }
git -C "$W/iproute2" format-patch -q --stdout --no-merges -"$N" HEAD \
	>"$W/big.mbox" || { echo "parse: git format-patch failed"; exit 1; }
bytes=$(wc -c <"$W/big.mbox")
msgs=$(grep -c '^From [0-9a-f]\{40\} Mon Sep 17 00:00:00 2001$' "$W/big.mbox")

# secs_rss CMD...: run, print "SECONDS MAXRSS_KB CPU_SECONDS" (stdout of
# CMD discarded); CPU time (user + sys) is the figure the noise of a shared
# machine disturbs least
secs_rss() {
	/usr/bin/time -f '%e %M %U %S' -o "$W/time" "$@" >/dev/null 2>"$W/stderr"
	st=$?
	tail -1 "$W/time" | awk '{ print $1, $2, $3 + $4 }'
	return $st
}

# the user's way: split, then mailinfo each message
cat >"$W/git-way.sh" <<'EOF'
set -e
rm -rf "$1/split" && mkdir "$1/split"
git mailsplit -o"$1/split" "$1/big.mbox" >/dev/null
for f in "$1"/split/*; do
	git mailinfo "$1/msg" "$1/patch" <"$f" >/dev/null
done
EOF

q=$(secs_rss "$QUORUM" parse --json "$W/big.mbox") ||
	{ echo "parse: quorum parse failed:"; head -5 "$W/stderr"; exit 1; }
g=$(secs_rss sh "$W/git-way.sh" "$W") ||
	{ echo "parse: git mailsplit/mailinfo failed"; exit 1; }
"$QUORUM" parse --json "$W/big.mbox" >"$W/out.json" 2>/dev/null
found=$(python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print(sum(len(s["patches"]) for s in d["series"]))' "$W/out.json" 2>/dev/null)

echo "$q $g $bytes $msgs ${found:-?}" | awk '{
	qs = $1 > 0 ? $1 : 0.01; qc = $3 > 0 ? $3 : 0.01
	printf "parse: %.1fx git mailsplit+mailinfo (quorum %.2f s, git %.2f s, " \
	       "%d messages, %s patches found, %.0f MB/s, max RSS %.0f MB; " \
	       "CPU time: %.1fx, quorum %.2f s, git %.2f s, %.0f MB/s)\n",
	       $4 / qs, $1, $4, $8, $9, $7 / 1048576 / qs, $2 / 1024,
	       $6 / qc, $3, $6, $7 / 1048576 / qc
}'

big=${QUORUM_BENCH_BIG:-auto}
if [ "$big" = auto ]; then
	free_kb=$(df -Pk "$W" | awk 'NR == 2 { print $4 }')
	if [ "${free_kb:-0}" -gt 4194304 ]; then big=1; else big=0; fi
fi
if [ "$big" = 1 ]; then
	reps=$(( (1073741824 + bytes - 1) / bytes ))
	i=0
	while [ $i -lt $reps ]; do
		cat "$W/big.mbox"
		i=$((i + 1))
	done >"$W/huge.mbox"
	rm -rf "$W/split"
	hbytes=$(wc -c <"$W/huge.mbox")
	h=$(secs_rss "$QUORUM" parse --json "$W/huge.mbox") ||
		{ echo "parse: quorum parse failed on the 1 GB mbox:"; head -5 "$W/stderr"; exit 1; }
	echo "$h $hbytes $reps" | awk '{
		s = $1 > 0 ? $1 : 0.01; c = $3 > 0 ? $3 : 0.01
		printf "parse-1GB: %.0f MB in %.1f s (%.0f MB/s; CPU %.1f s, " \
		       "%.0f MB/s; the corpus mbox %d times), max RSS %.0f MB\n",
		       $4 / 1048576, $1, $4 / 1048576 / s, $3,
		       $4 / 1048576 / c, $5, $2 / 1024
	}'
else
	echo "parse-1GB: skipped (QUORUM_BENCH_BIG=1 runs it)"
fi
