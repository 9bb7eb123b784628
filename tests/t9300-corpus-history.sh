#!/bin/sh
# Corpus tier: the history index on iproute2's real history. The Fixes:
# trailers resolve, the index is fast and small, a rerun is instant,
# similar finds real pairs, and eval's risk beats lines changed.
. "$(dirname "$0")/lib.sh"

BUNDLE=$SHARED/corpora/iproute2.bundle
[ -r "$BUNDLE" ] || skip_all "no corpus at $BUNDLE"
git clone -q "$BUNDLE" "$TMP/r" || { echo "Bail out! cannot clone the bundle"; exit 1; }
R=$TMP/r

start=$(date +%s%N)
run /usr/bin/time -f %M -o "$TMP/rss" "$QUORUM" index -C "$R"
end=$(date +%s%N)
is "$rc" 0 "index of iproute2 exits 0"
ms=$(((end - start) / 1000000))
# A sanitizer build runs several times slower (the symbol index's parser
# most of all): its bound is three times the plain one.
limit=30000
grep -q __asan_init "$QUORUM" 2>/dev/null && limit=90000
ok "$([ "$ms" -lt "$limit" ]; echo $?)" "full index in under $((limit / 1000)) s (took ${ms} ms)"
if grep -q __asan_init "$QUORUM" 2>/dev/null; then
	ok 0 "peak RSS under 512 MB # SKIP sanitizer build ($(($(cat "$TMP/rss") / 1024)) MB with shadow memory)"
else
	ok "$([ "$(cat "$TMP/rss")" -lt 524288 ]; echo $?)" "peak RSS under 512 MB ($(($(cat "$TMP/rss") / 1024)) MB)"
fi
is "$(sed -n 's/^commits: //p' "$TMP/out")" "$(git -C "$R" rev-list --no-merges --count HEAD)" "every non-merge commit is indexed"
trailers=$(sed -n 's/^Fixes: trailers: \([0-9]*\),.*/\1/p' "$TMP/out")
byid=$(sed -n 's/.*resolved by id: \([0-9]*\),.*/\1/p' "$TMP/out")
bysubj=$(sed -n 's/.*by subject: \([0-9]*\),.*/\1/p' "$TMP/out")
unres=$(sed -n 's/.*unresolved: \([0-9]*\) .*/\1/p' "$TMP/out")
ok "$([ "$trailers" -ge 570 ]; echo $?)" "Fixes: trailers found ($trailers)"
ok "$([ $((byid + bysubj)) -ge $((trailers * 98 / 100)) ]; echo $?)" "at least 98% resolve ($byid by id, $bysubj by subject, $unres not)"
is "$((byid + bysubj + unres))" "$trailers" "every trailer is resolved or counted"
pairs=$(sed -n 's/^fix\/bug pairs: \([0-9]*\) .*/\1/p' "$TMP/out")
ok "$([ "$pairs" -ge 600 ]; echo $?)" "fix/bug pairs with reverts ($pairs)"

start=$(date +%s%N)
run "$QUORUM" index -C "$R"
end=$(date +%s%N)
like "$TMP/out" 'up to date' "rerun: nothing new"
ok "$([ $(((end - start) / 1000000)) -lt 1000 ]; echo $?)" "rerun in under a second ($(((end - start) / 1000000)) ms)"

# A real fix: the commit it names shows up for a patch that re-adds the
# buggy lines the fix removed (the fix, reverted).
fix=$(git -C "$R" log --no-merges --format=%H --grep='^Fixes: [0-9a-f]\{12\} ' -- '*.c' | head -20 | while read -r c; do
	n=$(git -C "$R" show --format= "$c" -- '*.c' | grep -c '^-[^-]')
	[ "$n" -ge 2 ] && [ "$n" -le 20 ] && { echo "$c"; break; }
done)
bug=$(git -C "$R" log -1 --format=%B "$fix" | sed -n 's/^Fixes: \([0-9a-f]*\) .*/\1/p' | head -1)
git -C "$R" revert --no-edit "$fix" >/dev/null 2>&1 || { git -C "$R" revert --abort; echo "# revert of $fix did not apply"; }
run "$QUORUM" similar -C "$R" -k 5 HEAD
is "$rc" 0 "similar on the re-added bug exits 0"
like "$TMP/out" "fix  $(git -C "$R" rev-parse --short=12 "$fix")" "the fix that removed those lines is found"
like "$TMP/out" "bug  $(git -C "$R" rev-parse --short=12 "$bug")" "with the bug commit it named"
git -C "$R" reset -q --hard HEAD~1

run "$QUORUM" eval -C "$R" --since 2022-01-01 --until 2023-12-31 --json
is "$rc" 0 "eval over two years exits 0"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print("# commits %d positives %d auc %.3f baseline_auc %.3f precision %.3f recall %.3f seconds %.1f" % (
    d["commits"], d["positives"], d["auc"], d["baseline_auc"], d["precision"], d["recall"], d["seconds"]))
sys.exit(0 if d["auc"] > d["baseline_auc"] and d["commits"] > 500 and d["positives"] > 20 else 1)
' "$TMP/out"
ok $? "risk AUC beats the lines-changed baseline on 2022-2023"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
(alo, ahi), (blo, bhi), (mlo, mhi) = d["auc_ci"], d["baseline_auc_ci"], d["margin_ci"]
print("# auc %.3f-%.3f baseline %.3f-%.3f margin %+.3f (%+.3f to %+.3f) precision %.3f-%.3f" % (
    alo, ahi, blo, bhi, d["margin"], mlo, mhi, d["precision_ci"][0], d["precision_ci"][1]))
assert alo < d["auc"] < ahi and blo < d["baseline_auc"] < bhi
assert mlo < d["margin"] < mhi
# paired: the margin is surer than either AUC
assert mhi - mlo < ahi - alo and mhi - mlo < bhi - blo
assert 0.02 < ahi - alo < 0.2
' "$TMP/out"
ok $? "... with 95% intervals around both AUCs and a narrower one around their margin"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
y = d["years"]
for e in y:
    print("# %d: %d commits, margin %+.3f (%+.3f to %+.3f)" % (
        e["year"], e["commits"], e["margin"], e["margin_ci"][0], e["margin_ci"][1]))
assert [e["year"] for e in y] == [2022, 2023], y
assert sum(e["commits"] for e in y) == d["scored"]
for e in y:
    assert e["margin_ci"][0] < e["margin"] < e["margin_ci"][1], e
    # a year has fewer commits than the window: a wider interval
    assert e["margin_ci"][1] - e["margin_ci"][0] > d["margin_ci"][1] - d["margin_ci"][0]
m = sum(e["margin"] for e in y) / 2
assert abs(d["years_margin"] - m) < 1e-9, d["years_margin"]
lo, hi = d["years_margin_ci"]
assert lo < m < hi
' "$TMP/out"
ok $? "... and per calendar year, with the mean of the years' margins"

done_testing
