#!/bin/sh
# issue 18 for watch: a pass's plan uses the money it is given. Six
# series of three patches, two LLM voters: the pass costs $U unbounded
# (by the fake server's own usage log). Under a list's daily budget of
# 10%, 40% and 100% of U, the pass spends at least half of the budget
# (85% at 40% and 100%) and never more than it: the plan bounds each
# request as the review does (the server's free /tokenize, at each
# voter's answer floor), what a series does not spend of its share goes
# on to the next, and the series the plan left offline are reviewed
# last, with what the others did not spend, riskiest first.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/llm.sh"
. "$TOP/tests/lib/watch.sh"

command -v notmuch >/dev/null || skip_all "notmuch is not installed"
command -v python3 >/dev/null || skip_all "python3 is not installed"
watch_setup

# Series k (1..6) adds three functions of 4*k statements each.
k=1
while [ $k -le 6 ]; do
	post_fn_series $k 3 $((4 * k))
	k=$((k + 1))
done

cat >"$TMP/script.json" <<'EOS'
{"default": [{"answer": {"findings": []}, "usage": {"in": "auto", "out": 300}}],
 "tokenize": {}}
EOS
FAKE_TIMEOUT=600 fake_start "$TMP/script.json"
ntok() { ls "$REC.tok" 2>/dev/null | wc -l | tr -d ' '; }
conf() {
	watch_config "$(voter a openai ma price-in=3 price-out=15 max-tokens=1000)" \
		"$(voter b openai mb price-in=3 price-out=15 max-tokens=1000)" \
		'[review]' '	retries = 0' '[list "devel"]' "$@"
}
# A fresh pass over the same mail: a new notmuch db, state and outbox.
fresh() {
	rm -rf "$MAIL/.notmuch" "$OUTBOX"
	rm -f "$REC"/* "$REC.tok"/*
	notmuch new --quiet
	export XDG_STATE_HOME=$TMP/state$1
}

conf
fresh 0
watch
is "$rc" 0 "unbounded: the pass exits 0"
U=$(spent)
is "$(nusage)" 48 "unbounded: 2 voters x 6 series x (3 patches + the tip) (\$$U)"
is "$(outbox_count)" 6 "one reply per series"

for pct in 10 40 100; do
	B=$(awk -v x="$U" -v p=$pct 'BEGIN { printf "%.6f", x * p / 100 }')
	conf "	budget-per-day = $B"
	fresh $pct
	t0=$(date +%s.%N)
	watch
	t1=$(date +%s.%N)
	eval "T$pct=\$(awk -v a=\$t0 -v b=\$t1 'BEGIN { printf \"%.2f\", b - a }')"
	cp "$TMP/out" "$TMP/out$pct"
	[ -n "${KEEP:-}" ] && cp "$TMP/out" "$KEEP.out$pct" && rm -rf "$KEEP.ob$pct" && cp -r "$OUTBOX/new" "$KEEP.ob$pct"
	s=$(spent)
	eval "S$pct=\$s N$pct=\$(nusage) K$pct=\$(ntok)"
	is "$(outbox_count)" 6 "$pct%: one reply per series"
	awk -v s="$s" -v b="$B" 'BEGIN { exit !(s <= b + 1e-9) }'
	ok $? "$pct%: the server's usage stays under the budget: \$$s of \$$B ($(nusage) requests)"
	awk -v s="$s" -v b="$B" 'BEGIN { exit !(s >= b / 2) }'
	ok $? "$pct%: at least half the budget is spent (\$$s of \$$B)"
	[ $pct = 10 ] && continue
	awk -v s="$s" -v b="$B" 'BEGIN { exit !(s >= b * 0.85) }'
	ok $? "$pct%: what the planned series leave reaches the others: 85% of the budget is spent (\$$s of \$$B)"
done
echo "# spend: 10% $S10 ($N10 requests), 40% $S40 ($N40), 100% $S100 ($N100) of U=$U"
echo "# pass time: 10% ${T10}s, 40% ${T40}s, 100% ${T100}s; token counts asked: $K10, $K40, $K100"
fake_stop

done_testing
