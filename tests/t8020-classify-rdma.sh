#!/bin/sh
# Corpus tier: classify --stable on rdma-core, whose stable-vNN branches
# label master commits with "[ Upstream commit ID ]". The labels are
# found, 3,000+ commits classify offline in well under a minute, and the
# replay beats the maintainer's baselines among the commits with Fixes:.
. "$(dirname "$0")/lib.sh"

BUNDLE=$SHARED/corpora/rdma-core.bundle
[ -r "$BUNDLE" ] || skip_all "no corpus at $BUNDLE"
git clone -q -b master "$BUNDLE" "$TMP/r" || { echo "Bail out! cannot clone the bundle"; exit 1; }
R=$TMP/r

base=$(git -C "$R" rev-list --no-merges HEAD | sed -n 3001p)
start=$(date +%s%N)
"$QUORUM" classify -C "$R" --stable --range "$base..HEAD" >"$TMP/out" 2>"$TMP/err"
rc=$?
end=$(date +%s%N)
is "$rc" 1 "classify of 3,000+ commits exits 1 (some answers are yes)"
ms=$(((end - start) / 1000000))
n=$(grep -cE '^(yes|no) ' "$TMP/out")
ok "$([ "$n" -ge 3000 ]; echo $?)" "one line per commit ($n)"
ok "$([ "$ms" -lt 60000 ]; echo $?)" "cold, offline, in under a minute (took ${ms} ms)"

# A commit stable-v50 backported is known; its neighbours have labels.
up=$(git -C "$R" log --format=%B origin/stable-v50 ^origin/master |
	sed -n 's/^\[ Upstream commit \([0-9a-f]\{40\}\) \]$/\1/p' | head -1)
"$QUORUM" classify -C "$R" --stable --format json "$up" >"$TMP/one.json"
python3 - "$TMP/one.json" <<\EOP
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
assert r["known"] is True, r
assert any(s["label"] == "yes" for s in r["similar"]), r
EOP
ok $? "a backported commit is known, and similar commits carry labels"

"$QUORUM" eval -C "$R" --stable --since 2023-01-01 --until 2024-12-31 --json >"$TMP/eval.json"
python3 - "$TMP/eval.json" <<\EOP
import json, sys
d = json.load(open(sys.argv[1]))
print("# %s" % d)
assert d["commits"] > 400 and d["positives"] > 50, d
assert d["auc"] >= d["auc_subject_fix"] and d["auc"] > 0.85, d
assert d["fixes_auc"] > d["fixes_auc_shipped"], d
assert d["fixes_auc"] > d["fixes_auc_subject_fix"], d
lo, hi = d["auc_ci"]
assert lo < d["auc"] < hi, d
lo, hi = d["margin_has_fixes_ci"]
assert lo < d["auc"] - d["auc_has_fixes"] < hi, d
lo, hi = d["fixes_margin_shipped_ci"]
assert lo < d["fixes_auc"] - d["fixes_auc_shipped"] < hi, d
EOP
ok $? "eval 2023-2024: the AUC beats the baselines among Fixes: commits, inside 95% intervals"

done_testing
