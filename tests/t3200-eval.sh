#!/bin/sh
# quorum eval: replay a window as if each commit were new. Nothing from
# after a commit may change how it is scored; labels come from later
# Fixes:; the JSON has exactly the contracted keys.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not installed"

CLOCK_START=1500000000 CLOCK_STEP=$((86400 * 10))
. "$TOP/tests/lib/history.sh"

history_repo
at() { date -u -d "@$((CLOCK_START + $1 * CLOCK_STEP))" +%Y-%m-%d; }
feature() { # feature NAME LINES: a new file with a function
	c_function "$1" "$1_step" "$2" >"$1.c"
	git add "$1.c"
}
cat >net.c <<'EOC'
struct opts {
	char name[16];
};

int parse_opts(struct opts *o, const char *arg)
{
	size_t arg_len = strlen(arg);

	memcpy(o->name, arg, arg_len);
	o->flags = parse_flags_value(arg, arg_len);
	return 0;
}
EOC
tick; git add net.c && git commit -q -m "net: parse the interface name"
BUG=$(git rev-parse HEAD)
# Training history: features that needed fixes, notes that did not.
i=0
while [ $i -lt 20 ]; do
	tick; feature "feat$i" 40; git commit -q -m "feat: add feature $i"
	eval "F$i=\$(git rev-parse HEAD)"
	tick; echo "note $i" >>notes.txt; git add notes.txt; git commit -q -m "docs: note $i"
	i=$((i + 1))
done
i=0
while [ $i -lt 20 ]; do
	tick; eval "f=\$F$i"
	echo "/* checked */" >>"feat$i.c"
	git commit -q -am "feat: fix feature $i" -m "Fixes: $(git rev-parse --short=12 "$f") (\"feat: add feature $i\")"
	i=$((i + 2))
done
# The window starts here.
WSTART=$((CLOCK_N + 1))
# X re-adds the unbounded copy BEFORE anyone fixed it.
tick; cat >>net.c <<'EOC'

int parse_alias(struct opts *o, const char *arg)
{
	size_t arg_len = strlen(arg);

	memcpy(o->name, arg, arg_len);
	o->flags = parse_flags_value(arg, arg_len);
	return 1;
}
EOC
git commit -q -am "net: parse aliases"
X=$(git rev-parse HEAD)
tick; feature winfeat 50; git commit -q -m "feat: add a window feature"
WF=$(git rev-parse HEAD)
tick; echo "note w" >>notes.txt; git commit -q -am "docs: window note"
# Now the fix of the original bug.
tick; sed -i '0,/memcpy(o->name, arg, arg_len);/s//memcpy(o->name, arg, sizeof(o->name) - 1);/' net.c
git commit -q -am "net: bound the copy in parse_opts" -m "Names of 16 bytes or more overflowed.

Fixes: $(git rev-parse --short=12 "$BUG") (\"net: parse the interface name\")"
# Y re-adds the copy AFTER the fix: this one the history voter may see.
tick; cat >>net.c <<'EOC'

int parse_peer(struct opts *o, const char *arg)
{
	size_t arg_len = strlen(arg);

	memcpy(o->name, arg, arg_len);
	o->flags = parse_flags_value(arg, arg_len);
	return 2;
}
EOC
git commit -q -am "net: parse peers"
Y=$(git rev-parse HEAD)
WEND=$CLOCK_N
SINCE=$(at "$WSTART"); UNTIL=$(at "$WEND")

run "$QUORUM" eval -C "$R" --since "$SINCE" --until "$UNTIL"
is "$rc" 3 "eval without an index exits 3"
like "$TMP/err" 'quorum index' "... and says to run quorum index"

"$QUORUM" index -C "$R" >/dev/null || echo "Bail out! index failed"
run "$QUORUM" eval -C "$R" --since "$SINCE" --until "$UNTIL" -v
is "$rc" 0 "eval exits 0"
cp "$TMP/out" "$TMP/before"
like "$TMP/out" '^commits +5$' "the five window commits are replayed"
like "$TMP/out" '^positives +0$' "none is named by a Fixes: yet"
x=$(git rev-parse --short=12 "$X"); y=$(git rev-parse --short=12 "$Y")
grep "^$x " "$TMP/out" >"$TMP/x"
grep "^$y " "$TMP/out" >"$TMP/y"
unlike "$TMP/x" 'flagged:.*history' "no leakage: the copy added before its fix is not flagged by history"
like "$TMP/y" 'flagged:.*history' "the copy added after the fix is flagged by history"
grep "^$(git rev-parse --short=12 "$WF") " "$TMP/out" >"$TMP/wf"
like "$TMP/wf" 'risk (0\.[0-9]+|1\.000)' "a window commit gets a risk score from the model"

# The future arrives: fixes naming window commits, more history. Every
# score and flag of the window must stay as it was; only labels change.
tick; echo "/* bounded */" >>net.c
git commit -q -am "net: bound aliases" -m "Fixes: $(git rev-parse --short=12 "$X") (\"net: parse aliases\")"
tick; echo "/* checked */" >>winfeat.c
git commit -q -am "feat: fix the window feature" -m "Fixes: $(git rev-parse --short=12 "$WF") (\"feat: add a window feature\")"
# Late fixes of old commits change what a leaky model would learn.
for f in "$F1" "$F3" "$F5" "$F7"; do
	tick; echo "/* late */" >>notes.txt
	git commit -q -am "feat: late fix" -m "Fixes: $(git rev-parse --short=12 "$f") (\"$(git log -1 --format=%s "$f")\")"
done
i=20
while [ $i -lt 30 ]; do
	tick; feature "late$i" 5; git commit -q -m "late: add $i"
	tick; echo "/* x */" >>"late$i.c"; git commit -q -am "late: fix $i" -m "Fixes: $(git rev-parse --short=12 HEAD~0) (\"late: add $i\")"
	i=$((i + 1))
done
run "$QUORUM" eval -C "$R" --since "$SINCE" --until "$UNTIL" -v
is "$rc" 3 "a stale index is refused"
like "$TMP/err" 'older than HEAD.*quorum index' "... with what to run"
"$QUORUM" index -C "$R" >/dev/null
run "$QUORUM" eval -C "$R" --since "$SINCE" --until "$UNTIL" -v
cp "$TMP/out" "$TMP/after"
like "$TMP/after" '^positives +2$' "later Fixes: label two window commits buggy"
grep "^$x " "$TMP/after" >"$TMP/x2"
like "$TMP/x2" 'buggy' "the re-added copy is now labelled buggy"
# Y is flagged by history; only X (not flagged by it) is buggy so far.
like "$TMP/after" '^history +1 flagged, 0 later fixed \(0\.00x the base rate 0\.400\)$' "eval counts the history voter's flags and how many were later fixed"
scores() { grep -E '^[0-9a-f]{12} ' "$1" | sed -E 's/ (buggy|clean)//'; }
scores "$TMP/before" >"$TMP/s1"
scores "$TMP/after" >"$TMP/s2"
cmp -s "$TMP/s1" "$TMP/s2"
ok $? "no leakage: risk scores and flags of the window are unchanged by later commits"
[ -s "$TMP/s1" ]; ok $? "... (and there were scores to compare)"

# JSON: exactly the contracted keys.
run "$QUORUM" eval -C "$R" --since "$SINCE" --until "$UNTIL" --json
is "$rc" 0 "--json exits 0"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
want = ["auc", "auc_ci", "baseline_auc", "baseline_auc_ci", "calibration",
        "commits", "findings", "history_flagged",
        "history_flagged_positive", "located", "located_precision",
        "margin", "margin_ci", "model_heldout_auc", "positives",
        "precision", "precision_ci", "recall", "scored", "seconds",
        "voters", "years", "years_margin", "years_margin_ci"]
assert sorted(d) == want, sorted(d)
assert sorted(d["voters"]) == ["history", "risk", "rules"], d["voters"]
for v in d["voters"].values():
    assert sorted(v) == ["findings", "flagged", "flagged_positive",
                         "located", "located_precision", "precision",
                         "precision_ci", "recall"], sorted(v)
    if v["flagged"]:
        lo, hi = v["precision_ci"]
        assert 0 <= lo <= v["precision"] <= hi <= 1, v
    else:
        assert v["precision_ci"] is None, v
    assert 0 <= v["flagged_positive"] <= v["flagged"] <= 5
    assert 0 <= v["located"] <= v["findings"]
    assert v["located_precision"] is None or 0 <= v["located_precision"] <= 1
assert d["voters"]["history"]["flagged"] == d["history_flagged"]
assert 0 <= d["located"] <= d["findings"]
assert len(d["calibration"]) <= 10
assert sum(b["commits"] for b in d["calibration"]) == d["scored"]
for b in d["calibration"]:
    assert sorted(b) == ["commits", "decile", "observed", "positives",
                         "predicted", "risk_max", "risk_min"], sorted(b)
    assert 0 <= b["risk_min"] <= b["risk_max"] <= 1
    # predicted: the fix rate the history had at those scores
    assert 0 <= b["predicted"] <= 1
    assert 0 <= b["observed"] <= 1
assert 0 <= d["history_flagged_positive"] <= d["history_flagged"] <= 5
assert d["commits"] == 5 and d["positives"] == 2
for k in ("auc", "baseline_auc"):
    assert d[k] is None or 0 <= d[k] <= 1, d[k]
    ci = d[k + "_ci"]
    assert ci is None or 0 <= ci[0] <= d[k] <= ci[1] <= 1, (k, ci)
if d["auc"] is None or d["baseline_auc"] is None:
    assert d["margin"] is None
else:
    assert abs(d["margin"] - (d["auc"] - d["baseline_auc"])) < 1e-9
    assert d["margin_ci"] is None or d["margin_ci"][0] <= d["margin_ci"][1]
assert 0 <= d["precision"] <= 1 and 0 <= d["recall"] <= 1
assert d["seconds"] >= 0
assert sum(e["commits"] for e in d["years"]) == d["scored"]
for e in d["years"]:
    assert sorted(e) == ["auc", "baseline_auc", "commits", "margin",
                         "margin_ci", "positives", "year"], sorted(e)
    assert e["margin_ci"] is None or e["margin_ci"][0] <= e["margin_ci"][1]
assert d["years_margin"] is None or len(d["years"]) >= 2
' "$TMP/out"
ok $? "JSON has exactly the keys of contrib/eval-json.md, per voter and per decile"

# An empty window is not an error.
run "$QUORUM" eval -C "$R" --since 1990-01-01 --until 1990-12-31 --json
is "$rc" 0 "an empty window exits 0"
like "$TMP/out" '"commits":0' "... with no commits"

# Bad use.
run "$QUORUM" eval -C "$R" --since "$SINCE"
is "$rc" 2 "--until missing is a usage error"
run "$QUORUM" eval -C "$R" --since yesterday --until "$UNTIL"
is "$rc" 2 "an unreadable date is a usage error"
like "$TMP/err" 'yesterday' "... naming it"
run "$QUORUM" eval -C "$R" --since "$UNTIL" --until "$SINCE"
is "$rc" 2 "--until before --since is a usage error"
mkdir -p "$TMP/plain"
run "$QUORUM" eval -C "$TMP/plain" --since "$SINCE" --until "$UNTIL"
is "$rc" 3 "not a repository exits 3"

done_testing
