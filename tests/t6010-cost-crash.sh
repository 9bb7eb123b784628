#!/bin/sh
# issue 8: 100 reviews by three concurrent voters under a daily cap of
# 40% of what they would cost, with quorum killed (SIGKILL) at random
# points and the killed review run again: what the server billed,
# including answers to processes that died, stays at or under the cap,
# and every dollar billed is in the ledger, settled or still reserved.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/llm.sh"

R=$TMP/repo
make_repo "$R"
git -C "$R" tag base
commit_functions "$R" 100 g
git -C "$R" format-patch -q -N -o "$TMP/p" base..HEAD

# Slow answers, so that kills land while requests are in flight.
cat >"$TMP/s.json" <<'EOS'
{"default": [{"answer": {"findings": []}, "usage": {"in": 1500, "out": 300}, "delay": 0.15}]}
EOS
FAKE_TIMEOUT=300 fake_start "$TMP/s.json"
CAP=1.08 # 40% of 300 requests at $0.009
{
	voter a openai ma price-in=3 price-out=15 max-tokens=400
	voter b openai mb price-in=3 price-out=15 max-tokens=400
	voter c openai mc price-in=3 price-out=15 max-tokens=400
	printf '[list "netdev"]\n\tbudget-per-day = %s\n' $CAP
} >"$TMP/config"
export QUORUM_CONFIG=$TMP/config

# How long one review takes here (sanitizer builds are slower), measured
# against its own state db so it costs the capped ledger nothing.
# The quicker of two: a loaded machine can stretch one, and kills timed
# from it come after most reviews are over.
SPAN=
for m in 1 2; do
	start=$(date +%s.%N)
	XDG_STATE_HOME=$TMP/measure$m "$QUORUM" review -C "$R" --base base \
		"$TMP/p/0001-g1-add-g1.patch" >/dev/null 2>&1
	end=$(date +%s.%N)
	SPAN=$(awk -v s="$start" -v e="$end" -v f="$SPAN" \
		'BEGIN { t = (e - s) * 1.3; if (f != "" && f < t) t = f; printf "%.3f", t }')
done
measure=$(ls "$REC"/*.usage | wc -l | tr -d ' ')

kills=0
seed=6010
for f in "$TMP"/p/*.patch; do
	seed=$((seed + 1))
	"$QUORUM" review -C "$R" --base base --list netdev "$f" \
		>"$f.out" 2>&1 &
	pid=$!
	# Half the reviews are killed at a random point of their run.
	d=$(awk -v s=$seed -v span="$SPAN" 'BEGIN { srand(s); r = rand();
		if (r < 0.5) printf "%.3f", r * 2 * span; else print "" }')
	if [ -n "$d" ]; then
		sleep "$d"
		if kill -9 $pid 2>/dev/null; then
			kills=$((kills + 1))
		fi
	fi
	wait $pid 2>/dev/null
	rc=$?
	if [ $rc -ge 128 ]; then
		# Restarted: the same review, run to the end.
		"$QUORUM" review -C "$R" --base base --list netdev "$f" \
			>"$f.out" 2>&1
		rc=$?
	fi
	echo $rc >"$f.rc"
done
ok $([ $kills -ge 5 ] && echo 0 || echo 1) "quorum was killed at random points ($kills times)"
is "$(cat "$TMP"/p/*.rc | sort -u | tr '\n' ' ')" "0 " "every review completes once restarted"

# Billed: every answer the server generated, to live processes or not.
billed=$(ls "$REC"/*.usage | tail -n +$((measure + 1)) | xargs cat |
	awk '{ s += $1 * 3 / 1e6 + $2 * 15 / 1e6 } END { printf "%.6f", s }')
awk -v s="$billed" -v c="$CAP" 'BEGIN { exit !(s <= c + 1e-9) }'
ok $? "what the server billed stays under the cap: \$$billed of \$$CAP"
awk -v s="$billed" 'BEGIN { exit !(s >= 0.3) }'
ok $? "the budget was used (\$$billed)"

run "$QUORUM" cost
is "$rc" 0 "quorum cost runs"
settled=$(sed -n 's/^total: .*\$\([0-9.]*\)$/\1/p' "$TMP/out")
reserved=$(sed -n 's/^reserved: \$\([0-9.]*\) .*/\1/p' "$TMP/out")
reserved=${reserved:-0}
awk -v s="$settled" -v r="$reserved" -v c="$CAP" 'BEGIN { exit !(s + r <= c + 1e-9) }'
ok $? "the ledger stays under the cap: \$$settled settled + \$$reserved reserved"
awk -v s="$settled" -v r="$reserved" -v b="$billed" 'BEGIN { exit !(s + r >= b - 1e-9) }'
ok $? "every dollar billed is in the ledger, settled or reserved"
awk -v r="$reserved" 'BEGIN { exit !(r > 0) }'
ok $? "kills between reservation and settlement left reservations that still count"
ok $([ "$(grep -l 'budget' "$TMP"/p/*.out | wc -l)" -gt 0 ] && echo 0 || echo 1) "reviews past the cap say the budget stopped them"

done_testing
