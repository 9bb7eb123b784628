#!/bin/sh
# issue 18 for watch: a pass plans the list's money before its first
# model request. Three series posted oldest first, the last the
# riskiest (with no risk model: the largest diff), and a daily budget
# that fits about one series' models: the riskiest gets the models, the
# next riskiest what is left, the oldest the offline voters only, and
# its reply says why; the server's billed usage stays under the daily cap; one
# reply per series, in the usual order under max-per-hour. Without it
# the series the plan promised money go first, the others after them,
# riskiest first, with what the first did not spend; never a v1 after
# its v2. With a budget that fits all,
# every series gets the models, as before the plan. A '#quorum rerun'
# of the pass puts the series it reopens in the plan; budget.monthly,
# when it is the tightest cap, is the one planned and never passed,
# across passes. With a history index, the plan ranks by its risk
# score. (The spend under 10%, 40% and 100% of a pass's cost: t6075.)
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/llm.sh"
. "$TOP/tests/lib/watch.sh"
CLOCK_START=1500000000 CLOCK_STEP=$((86400 * 20))
. "$TOP/tests/lib/history.sh"

command -v notmuch >/dev/null || skip_all "notmuch is not installed"
command -v python3 >/dev/null || skip_all "python3 is not installed"
watch_setup

# mail_sized ID MINUTE NAME LINES: a one-patch series adding f_NAME.c
# of LINES statements, posted at 10:MINUTE.
mail_sized() {
	{
		cat <<EOM
From: A U Thor <author@example.org>
To: $LIST
Subject: [PATCH] lib: add f_$3()
Message-ID: <$1@example.org>
Date: Tue, 14 Nov 2023 10:$2:00 +0000

lib: add f_$3()
---
diff --git a/f_$3.c b/f_$3.c
new file mode 100644
--- /dev/null
+++ b/f_$3.c
@@ -0,0 +1,$(($4 + 3)) @@
+int f_$3(int x)
+{
EOM
		i=1
		while [ $i -lt "$4" ]; do
			echo "+	x = x * $i + $i;"
			i=$((i + 1))
		done
		echo "+	return x;"
		echo "+}"
	} >"$MAIL/new/$1"
}

cat >"$TMP/script.json" <<'EOS'
{"default": [{"answer": {"findings": []}, "usage": {"in": "auto", "out": 300}}]}
EOS
FAKE_TIMEOUT=300 fake_start "$TMP/script.json"
# The plan's estimate of a one-patch series, per voter: its request as
# the review builds it, bounded as the review bounds it (here by bytes:
# this server has no token counter) at $3/M in, and the voter's answer
# floor (512 tokens, no past answers) at $15/M out: about $0.03 each,
# $0.06 with two voters. $0.10 fits one series and some of another.
conf() {
	b=$1
	shift
	watch_config "$(voter a openai ma price-in=3 price-out=15 max-tokens=1000)" \
		"$(voter b openai mb price-in=3 price-out=15 max-tokens=1000)" \
		'[review]' '	retries = 0' '[list "devel"]' "	budget-per-day = $b" "$@"
}

# Replies an hour on the list: the oldest series get them first, so the
# pass keeps to posting order.
conf 0.10 '	max-per-hour = 100'
mail_sized s1 01 small1 3
mail_sized s2 02 small2 4
mail_sized s3 03 big 60
notmuch new --quiet
export XDG_STATE_HOME=$TMP/state1
watch
is "$rc" 0 "the pass exits 0"
[ -n "${KEEP:-}" ] && cp "$TMP/out" "$KEEP.out"
is "$(outbox_count)" 3 "one reply per series"
[ -n "${KEEP:-}" ] && cp -r "$OUTBOX/new" "$KEEP.outbox"
like "$TMP/out" '^plan: \$0\.1000 left today for list devel; 3 series, riskiest first \(no risk model: the larger diff\): "\[PATCH\] lib: add f_big\(\)" \(\$0\.0[0-9]+\) gets the models, "\[PATCH\] lib: add f_small2\(\)" \(\$0\.0[0-9]+\) gets what is left, "\[PATCH\] lib: add f_small1\(\)" offline$' \
	"the pass says its plan before the reviews: riskiest first, the next gets what is left"
grep -n '^plan:\|^devel: reviewed' "$TMP/out" | cut -d: -f1 | tr '\n' ' ' >"$TMP/order"
is "$(cat "$TMP/order")" "1 2 3 4 " "the plan comes first, then the three reviews"
sed -n 2p "$TMP/out" | grep -q 'f_small1' && sed -n 4p "$TMP/out" | grep -q 'f_big'
ok $? "the reviews still run oldest first"
like "$TMP/out" 'f_small1.*offline voters only: the day.s budget went to riskier series first' \
	"an offline series' run line says why"
unlike "$TMP/out" 'f_big.*offline voters only' "the riskiest one's does not"
n_big=$(grep -l 'f_big' "$REC"/*.json 2>/dev/null | wc -l | tr -d ' ')
n_small=$(grep -l 'f_small' "$REC"/*.json 2>/dev/null | wc -l | tr -d ' ')
is "$n_big" 2 "the riskiest series gets both models' requests"
n_small1=$(grep -l 'f_small1' "$REC"/*.json 2>/dev/null | wc -l | tr -d ' ')
is "$n_small1" 0 "the offline one gets no model request"
awk -v n="$n_small" 'BEGIN { exit !(n >= 1) }'
ok $? "the next riskiest gets what is left: $n_small request(s)"
s=$(spent)
awk -v s="$s" 'BEGIN { exit !(s > 0 && s <= 0.10 + 1e-9) }'
ok $? "the server's billed usage stays under the daily cap (\$$s of \$0.10)"
M=$(grep -l "In-Reply-To: <s1@example.org>" "$OUTBOX"/new/*)
like "$M" "^budget: not reviewed by the models: the day's budget went to riskier" \
	"the offline series' reply says the models were not asked"
like "$M" '^budget: \$0\.1000 left today of \$0\.10 for list devel$' \
	"and what is left of the day, as a review that asked would"
like "$M" '^X-Quorum-Voters: rules$' "and names no model among its voters"
M=$(grep -l "In-Reply-To: <s2@example.org>" "$OUTBOX"/new/*)
like "$M" '^budget: budget short: \$0\.0[0-9]+ left under the budget of this run' \
	"the next riskiest is held to what the plan left it"
unlike "$TMP/out" 'f_small2.*offline voters only' "and its run line does not say offline"
M=$(grep -l "In-Reply-To: <s3@example.org>" "$OUTBOX"/new/*)
like "$M" '^X-Quorum-Voters: .*a, b' "the riskiest series' reply names the models"
unlike "$M" "riskier series first" "and says nothing of the plan"

# The same without max-per-hour: the riskiest is reviewed first, then
# the two the plan promised less, riskiest first, each with what the
# ones before it did not spend; never more than the day's budget.
rm -f "$REC"/*
rm -rf "$OUTBOX"/new/* "$MAIL/.notmuch"
conf 0.10
notmuch new --quiet
export XDG_STATE_HOME=$TMP/state1b
watch
[ -n "${KEEP:-}" ] && cp "$TMP/out" "$KEEP.out1b"
is "$(outbox_count)" 3 "at the end: one reply per series"
grep '^devel: reviewed' "$TMP/out" | sed 's/.*add f_\([a-z0-9]*\)().*/\1/' | tr '\n' ' ' >"$TMP/order"
is "$(cat "$TMP/order")" "big small2 small1 " \
	"at the end: the one promised money first, then the others riskiest first"
s=$(spent)
awk -v s="$s" 'BEGIN { exit !(s > 0 && s <= 0.10 + 1e-9) }'
ok $? "at the end: the server's billed usage stays under the daily cap (\$$s of \$0.10)"

# v1 (small, the plan leaves it what is left) and v2 (large, the
# models) of one series, in two threads: v1 is not left to the end,
# past v2, whose reply points at v1's findings.
rm -f "$REC"/*
rm -rf "$MAIL/new"/* "$MAIL/cur"/* "$OUTBOX"/new/* "$MAIL/.notmuch"
conf 0.07
mail_sized v1 51 ver 3
mail_sized v2 52 ver 60
sed 's/^Subject: \[PATCH\]/Subject: [PATCH v2]/' "$MAIL/new/v2" >"$TMP/v2" &&
	mv "$TMP/v2" "$MAIL/new/v2"
notmuch new --quiet
export XDG_STATE_HOME=$TMP/state1c
watch
[ -n "${KEEP:-}" ] && cp "$TMP/out" "$KEEP.out1c"
is "$(outbox_count)" 2 "v1 and v2: a reply each"
like "$TMP/out" '^plan: .*"\[PATCH v2\] lib: add f_ver\(\)" \(\$0\.0[0-9]+\) gets the models, "\[PATCH\] lib: add f_ver\(\)" \(\$0\.0[0-9]+\) gets what is left$' \
	"v1 and v2: the plan promises v2 the models, v1 what is left"
grep '^devel: reviewed' "$TMP/out" | sed -n 1p | grep -q '"\[PATCH\] lib: add f_ver()"'
ok $? "v1 and v2: v1 is still reviewed first"

# A budget that fits all: every series gets the models, as before.
rm -f "$REC"/*
rm -rf "$MAIL/new"/* "$MAIL/cur"/* "$OUTBOX"/new/* "$MAIL/.notmuch"
conf 10
mail_sized t1 11 one 3
mail_sized t2 12 two 4
mail_sized t3 13 three 60
notmuch new --quiet
export XDG_STATE_HOME=$TMP/state2
watch
is "$rc" 0 "with money for all, the pass exits 0"
is "$(outbox_count)" 3 "one reply per series"
like "$TMP/out" '^plan: \$10\.0000 left today for list devel; 3 series, .*"\[PATCH\] lib: add f_one\(\)" \(\$0\.[0-9]+\) get the models$' \
	"the plan gives every series the models"
is "$(ls "$REC" | grep -c '\.json$')" 6 "two requests per series"
unlike "$TMP/out" 'offline voters only' "no run line says offline"
grep -l "riskier series first" "$OUTBOX"/new/* >/dev/null
ok "$((! $?))" "no reply says offline"

# A '#quorum rerun' in the pass reopens a series reviewed before: the
# plan holds it, ranked with the new series. The first pass reviews
# f_rr() with no daily budget (no plan); the second has its rerun and a
# new, smaller series, and a budget that fits one of them. (The first
# pass has no model voter: no answer is cached for the rerun to reuse.)
rm -f "$REC"/*
rm -rf "$MAIL/new"/* "$MAIL/cur"/* "$OUTBOX"/new/* "$MAIL/.notmuch"
export XDG_STATE_HOME=$TMP/state4
watch_config
mail_sized r1 21 rr 60
notmuch new --quiet
watch
is "$(outbox_count)" 1 "rerun: the first pass reviews the series"
conf 0.07
cat >"$MAIL/new/r1-rerun" <<EOM
From: A U Thor <author@example.org>
To: $LIST
Subject: Re: [PATCH] lib: add f_rr()
Message-ID: <r1-rerun@example.org>
In-Reply-To: <r1@example.org>
References: <r1@example.org>
Date: Tue, 14 Nov 2023 10:30:00 +0000

#quorum rerun
EOM
mail_sized r2 31 new 3
notmuch new --quiet
watch
[ -n "${KEEP:-}" ] && cp "$TMP/out" "$KEEP.out4"
is "$rc" 0 "rerun: the second pass exits 0"
like "$TMP/out" '^plan: \$0\.0700 left today for list devel; 2 series, riskiest first \(no risk model: the larger diff\): "\[PATCH\] lib: add f_rr\(\)" \(\$0\.0[0-9]+\) gets the models, "\[PATCH\] lib: add f_new\(\)" ' \
	"the plan holds the series the rerun reopens, ranked with the new one"
is "$(outbox_count)" 3 "the rerun and the new series get a reply each"
is "$(grep -l 'f_rr' "$REC"/*.json 2>/dev/null | wc -l | tr -d ' ')" 2 \
	"the rerun series gets both models' requests, as planned"
s=$(spent)
awk -v s="$s" 'BEGIN { exit !(s > 0 && s <= 0.07 + 1e-9) }'
ok $? "rerun: the pass stays within what was left (\$$s of \$0.07)"
watch
is "$(outbox_count)" 3 "the rerun is done once"

# budget.monthly, tighter than the list's day: the plan says the month,
# and two passes together never pass it.
rm -f "$REC"/*
rm -rf "$MAIL/new"/* "$MAIL/cur"/* "$OUTBOX"/new/* "$MAIL/.notmuch"
export XDG_STATE_HOME=$TMP/state5
watch_config "$(voter a openai ma price-in=3 price-out=15 max-tokens=1000)" \
	"$(voter b openai mb price-in=3 price-out=15 max-tokens=1000)" \
	'[review]' '	retries = 0' '[list "devel"]' '	budget-per-day = 10' \
	'[budget]' '	monthly = 0.10'
mail_sized m1 41 mone 3
mail_sized m2 42 mtwo 60
notmuch new --quiet
watch
[ -n "${KEEP:-}" ] && cp "$TMP/out" "$KEEP.out5" && cp -r "$OUTBOX/new" "$KEEP.ob5"
is "$rc" 0 "monthly: the pass exits 0"
like "$TMP/out" '^plan: \$0\.1000 left this month \(budget\.monthly\) for list devel; 2 series, riskiest first \(no risk model: the larger diff\): "\[PATCH\] lib: add f_mtwo\(\)" \(\$0\.0[0-9]+\) gets the models' \
	"the plan holds to the monthly budget, the tightest cap"
s1=$(spent)
awk -v s="$s1" 'BEGIN { exit !(s > 0 && s <= 0.10 + 1e-9) }'
ok $? "monthly: the pass spends the month's money, never more (\$$s1 of \$0.10)"
mail_sized m3 43 mthree 60
mail_sized m4 44 mfour 30
notmuch new --quiet
watch
[ -n "${KEEP:-}" ] && cp "$TMP/out" "$KEEP.out5b"
left=$(awk -v s="$s1" 'BEGIN { printf "%.4f", 0.10 - s }')
like "$TMP/out" "^plan: \\\$$left left this month \(budget\.monthly\) for list devel; 2 series" \
	"the next pass plans what the month has left (\$$left)"
s=$(spent)
awk -v s="$s" 'BEGIN { exit !(s <= 0.10 + 1e-9) }'
ok $? "monthly: both passes together stay under it (\$$s of \$0.10)"
is "$(outbox_count)" 4 "every series is replied to, with or without the models"

# With a history index, the plan ranks by the history risk of each
# series' riskiest patch: a C feature like those that needed fixes here,
# posted last, before a docs note like those that never did. (Its size
# ranks it first too: this shows the index's score is the one used.)
rm -f "$REC"/*
rm -rf "$MAIL/new"/* "$MAIL/cur"/* "$OUTBOX"/new/* "$MAIL/.notmuch"
export XDG_STATE_HOME=$TMP/state3
mv "$TMP/repo" "$TMP/repo1"
history_repo
echo "notes" >notes.txt
tick && git add notes.txt && git commit -q -m "initial"
risk_history 12
git tag base
"$QUORUM" index -C "$R" >/dev/null 2>&1
ok $? "the history index is built"
tick
echo "/* one more note */" >>notes.txt
git commit -q -am "docs: one more note"
git format-patch -q --to="$LIST" -o "$TMP/h1" -1
tick && c_function feature_new feature_helper_new 60 >new.c
git add new.c && git commit -q -m "feat: add the new feature"
git format-patch -q --to="$LIST" -o "$TMP/h2" -1
git reset -q --hard base
cd "$TMP"
conf 0.08
post "$TMP/h1"
post "$TMP/h2"
watch
is "$rc" 0 "with a history index, the pass exits 0"
[ -n "${KEEP:-}" ] && cp "$TMP/out" "$KEEP.out3"
like "$TMP/out" '^plan: .*riskiest first \(history risk, their riskiest patch\): "\[PATCH\] feat: add the new feature" \(\$0\.[0-9]+\) gets the models' \
	"the plan ranks the series by their history risk"
is "$(grep -l 'feature_new' "$REC"/*.json 2>/dev/null | wc -l | tr -d ' ')" 2 \
	"the riskier feature gets both models' requests"
fake_stop

done_testing
