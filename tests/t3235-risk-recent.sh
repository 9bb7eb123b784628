#!/bin/sh
# Weighted size, now: lines added weighted by how often their file's
# commits were later fixed counts the whole history alike, so a file
# whose bugs were fixed years ago weighs what a file fixed last month
# does. la_weighted_recent counts both the commits and the bugs with a
# half-life of a year: of two files with the same record overall, the
# one whose bugs are recent weighs more. And it is a reason a risky
# patch is told.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not installed"

CLOCK_START=1500000000 CLOCK_STEP=$((86400 * 10))
. "$TOP/tests/lib/history.sh"

# Add $3 lines to file $1 (function $2) and commit with subject $4.
grow() {
	c_function "$2" "helper_$2" "$3" >>"$1"
	tick; git add "$1" && git commit -q -m "$4"
}

# A commit to $1 that a fix names right after it.
buggy() {
	grow "$1" "$2" 8 "$1: add $2" || return 1
	_b=$(git rev-parse HEAD)
	echo "/* $2: bounded */" >>"$1"
	tick; git commit -q -am "$1: fix $2" -m "$(fixes "$_b")"
}

history_repo
: >old.c
: >new.c
: >other.c
tick; git add . && git commit -q -m "initial"
# Years ago: old.c's bugs, new.c quiet.
for i in 1 2 3 4 5 6; do
	buggy old.c "o$i" || exit 1
	grow new.c "n$i" 8 "new.c: add n$i" || exit 1
	grow new.c "m$i" 8 "new.c: add m$i" || exit 1
done
# Three years pass, other.c keeps the tree busy.
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
	CLOCK_N=$((CLOCK_N + 8))
	grow other.c "q$i" 4 "other.c: add q$i" || exit 1
done
# Lately: new.c's bugs, old.c quiet.
for i in 1 2 3 4 5 6; do
	buggy new.c "p$i" || exit 1
	grow old.c "r$i" 8 "old.c: add r$i" || exit 1
	grow old.c "s$i" 8 "old.c: add s$i" || exit 1
done
grow old.c probe_old 20 "old.c: add probe_old" && P_OLD=$(git rev-parse HEAD)
grow new.c probe_new 20 "new.c: add probe_new" && P_NEW=$(git rev-parse HEAD)

"$QUORUM" index >"$TMP/idx" 2>&1
ok $? "index a history whose bugs moved from one file to another"
like "$TMP/idx" '^risk model: fitted on' "... and fits a model"

risk_features "$R" "$P_OLD" la la_weighted la_weighted_recent >"$TMP/old"
risk_features "$R" "$P_NEW" la la_weighted la_weighted_recent >"$TMP/new"
paste -d' ' "$TMP/old" "$TMP/new" >"$TMP/both"
sed "s/^/# /" "$TMP/both"
like "$TMP/both" '^la=[0-9.]+ la_weighted=[0-9.]+ la_weighted_recent=[0-9.]+ la=[0-9.]+ la_weighted=[0-9.]+ la_weighted_recent=[0-9.]+$' \
	"the index stores both commits' weighted sizes, over all time and recent"
# check COND: COND over v[1..3] (P_OLD's la, la_weighted,
# la_weighted_recent) and v[4..6] (P_NEW's); false without them.
check() {
	awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[i] = kv[2] } }
	END { exit !(NR == 1 && NF == 6 && ('"$1"')) }' "$TMP/both"
}
check 'v[1] == v[4] && v[2] > 0 && v[5] > 0 && v[2] / v[5] < 1.25 && v[5] / v[2] < 1.25'
ok $? "the same lines weigh about the same in both files over all time"
check 'v[6] > 1.5 * v[3]'
ok $? "... and half again as much or more where the bugs are recent"
check 'v[6] > v[4] && v[3] < v[1]'
ok $? "... more than plain lines in the file fixed lately, less in the other"

# No leakage: the features of P_NEW are the same without the commits
# that came after it.
tick; echo "/* later */" >>new.c
git commit -q -am "new.c: fix probe_new" -m "$(fixes "$P_NEW")"
"$QUORUM" index -q >/dev/null 2>&1
risk_features "$R" "$P_NEW" la_weighted_recent >"$TMP/after"
sed 's/.* la_weighted_recent=/la_weighted_recent=/' "$TMP/new" >"$TMP/before"
grep -q '^la_weighted_recent=[0-9.]*[1-9]' "$TMP/before" &&
	cmp -s "$TMP/before" "$TMP/after"
ok $? "a later fix does not change the weighted size of the commit it names"

# The reason: a risky patch to new.c is told its file's recent record.
git format-patch -q -1 "$P_NEW" --stdout >"$TMP/p.mbox"
"$QUORUM" review --base "$P_NEW^" --budget 0 --format json "$TMP/p.mbox" \
	>"$TMP/review.json" 2>"$TMP/review.err"
python3 - "$TMP/review.json" >"$TMP/why" <<'EOP'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["reviews"]:
    for p in r["patches"]:
        print(p.get("risk_reasons") or "")
EOP
sed "s/^/# /" "$TMP/why"
like "$TMP/why" 'times.* in the last year' "a risky patch's reasons say its files' record of the last year"

done_testing
