#!/bin/sh
# issue 18 for watch, with crashes: a pass planned under a list's daily
# budget of 40% of its unbounded cost is killed (SIGKILL) at random
# points and run again until it finishes. What the server billed,
# answers to killed processes included, stays under the budget, and
# every series gets exactly one reply.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/llm.sh"
. "$TOP/tests/lib/watch.sh"

command -v notmuch >/dev/null || skip_all "notmuch is not installed"
command -v python3 >/dev/null || skip_all "python3 is not installed"
watch_setup

NS=8
k=1
while [ $k -le $NS ]; do
	post_fn_series $k 2 $((3 * k))
	k=$((k + 1))
done

# Slow answers, so that kills land while requests are in flight.
cat >"$TMP/script.json" <<'EOS'
{"default": [{"answer": {"findings": []}, "usage": {"in": "auto", "out": 300}, "delay": 0.1}],
 "tokenize": {}}
EOS
FAKE_TIMEOUT=600 fake_start "$TMP/script.json"
conf() {
	watch_config "$(voter a openai ma price-in=3 price-out=15 max-tokens=1000)" \
		"$(voter b openai mb price-in=3 price-out=15 max-tokens=1000)" \
		'[review]' '	retries = 0' '[list "devel"]' "$@"
}
fresh() {
	rm -rf "$MAIL/.notmuch" "$OUTBOX"
	rm -f "$REC"/* "$REC.tok"/*
	notmuch new --quiet
	export XDG_STATE_HOME=$TMP/state$1
}

# The unbounded cost of the pass, and how long it takes here.
conf
fresh 0
start=$(date +%s.%N)
watch
end=$(date +%s.%N)
is "$rc" 0 "unbounded: the pass exits 0"
U=$(spent)
is "$(outbox_count)" $NS "unbounded: one reply per series"
SPAN=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.3f", (e - s) * 1.2 }')

B=$(awk -v x="$U" 'BEGIN { printf "%.6f", x * 0.4 }')
conf "	budget-per-day = $B"
fresh 40
kills=0
seed=6076
pass=0
# Each pass is killed at a random point of the first sixth of what a
# whole pass takes, until one ends on its own or five were killed; then
# a last pass runs to the end.
rc=1
while [ $rc -ne 0 ] && [ $pass -lt 5 ]; do
	pass=$((pass + 1))
	seed=$((seed + 1))
	"$QUORUM" watch --once >"$TMP/pass$pass.out" 2>&1 &
	pid=$!
	d=$(awk -v s=$seed -v span="$SPAN" \
		'BEGIN { srand(s); printf "%.3f", 0.05 + rand() * span / 6 }')
	sleep "$d"
	kill -9 $pid 2>/dev/null && kills=$((kills + 1))
	wait $pid 2>/dev/null
	rc=$?
done
if [ $rc -ne 0 ]; then
	"$QUORUM" watch --once >"$TMP/last.out" 2>&1
	rc=$?
fi
ok $([ $kills -ge 2 ] && echo 0 || echo 1) "passes were killed at random points ($kills times)"
is "$rc" 0 "a pass that ran to the end after the kills exits 0"
s=$(spent)
awk -v s="$s" -v b="$B" 'BEGIN { exit !(s <= b + 1e-9) }'
ok $? "what the server billed stays under the budget across the kills: \$$s of \$$B"
is "$(outbox_count)" $NS "every series got a reply"
grep -h '^In-Reply-To:' "$OUTBOX"/new/* | sort | uniq -d >"$TMP/dups"
is "$(wc -l <"$TMP/dups" | tr -d ' ')" 0 "... and none got two"
echo "# killed $kills times; billed \$$s of \$$B (unbounded \$$U)"
fake_stop

done_testing
