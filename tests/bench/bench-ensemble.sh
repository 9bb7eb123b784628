#!/bin/sh
# bench-ensemble: 4 LLM voters on the fake server, each answering after
# 1 s. The review must take at most 1.2x the slowest voter plus the local
# work (the same review with no voters), because every request runs at
# once on one curl multi handle; asking them one after another (what a
# script calling each model in turn would do) takes about 4 s.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
QUORUM=${QUORUM_BIN:-$TOP/build/quorum}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/quorum-bench.XXXXXX")
PID=
trap '[ -n "$PID" ] && kill $PID 2>/dev/null; rm -rf "$TMP"' EXIT
export LC_ALL=C GIT_CONFIG_NOSYSTEM=1 HOME="$TMP/home"
export QUORUM_PROMPTS="$TOP/prompts"
unset QUORUM_CONFIG
mkdir -p "$HOME"
git config --global user.name "A U Thor"
git config --global user.email author@example.org
DELAY=1

R=$TMP/repo
mkdir -p "$R" && git -C "$R" init -q
printf '#include <stdlib.h>\n\nint f(int *p, int n)\n{\n\treturn n ? p[0] : 0;\n}\n' >"$R/a.c"
git -C "$R" add a.c && git -C "$R" commit -q -m initial
printf '\nint g(int *p, int n)\n{\n\tint i, s = 0;\n\n\tfor (i = 0; i <= n; i++)\n\t\ts += p[i];\n\treturn s;\n}\n' >>"$R/a.c"
git -C "$R" commit -q -am "a: add g()"
git -C "$R" format-patch -q -o "$TMP/p" -1 HEAD

ANS='{"findings": [{"file": "a.c", "line_start": 12, "severity": "high", "category": "bounds", "title": "reads p[n]"}]}'
cat >"$TMP/script.json" <<EOS
{"default": [{"delay": $DELAY, "answer": $ANS}]}
EOS
python3 "$TOP/tests/lib/fake-llm.py" --script "$TMP/script.json" \
	--port-file "$TMP/port" --record "$TMP/rec" --timeout 60 &
PID=$!
i=0
while [ ! -s "$TMP/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
PORT=$(cat "$TMP/port")
for v in a b c d; do
	printf '[voter "%s"]\n\tprovider = openai\n\turl = http://127.0.0.1:%s/v1\n\tmodel = m%s\n' \
		"$v" "$PORT" "$v"
done >"$TMP/config"
: >"$TMP/none"

now() { date +%s.%N; }
best() { echo "$@" | tr ' ' '\n' | grep . | sort -g | head -1; }
local_t= wall_t=
for i in 1 2 3; do
	s=$(now)
	QUORUM_CONFIG=$TMP/none "$QUORUM" review -C "$R" --base HEAD~1 "$TMP"/p/*.patch >/dev/null 2>&1
	e=$(now)
	local_t="$local_t $(echo "$e - $s" | bc -l)"
	s=$(now)
	# --no-cache: each run asks the models (the cache would answer runs 2, 3).
	QUORUM_CONFIG=$TMP/config "$QUORUM" review -C "$R" --base HEAD~1 --no-cache "$TMP"/p/*.patch >"$TMP/out" 2>&1
	e=$(now)
	wall_t="$wall_t $(echo "$e - $s" | bc -l)"
done
grep -q 'models: 4 asked, 4 answered' "$TMP/out" || { echo "ensemble: not all voters answered"; cat "$TMP/out"; exit 1; }
L=$(best $local_t)
W=$(best $wall_t)
# Faster than one model's delay: the answers did not come from the models.
echo "$W >= $DELAY" | bc -l | grep -q 1 ||
	{ echo "ensemble: review took $W s, under the models' $DELAY s: not measured"; exit 1; }
RATIO=$(echo "$W / ($DELAY + $L)" | bc -l)
SEQ=$(echo "4 * $DELAY + $L" | bc -l)
printf 'ensemble: 4 voters x %ss each: review %.3f s, local work %.3f s\n' "$DELAY" "$W" "$L"
printf 'ensemble: wall / (slowest voter + local) = %.3f (must be <= 1.2)\n' "$RATIO"
printf 'ensemble: vs asking them in turn (%.2f s): %.2fx faster\n' "$SEQ" "$(echo "$SEQ / $W" | bc -l)"
echo "$RATIO <= 1.2" | bc -l | grep -q 1
