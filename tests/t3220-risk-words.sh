#!/bin/sh
# The risk explanation names the words of a patch that made it risky: an
# identifier most commits using it were later fixed for is named with
# its figures (commits with it, share later fixed, share of all), a word
# seen in too few commits is not, and a patch with no such word gets no
# such sentence. The history is one where that identifier is the whole
# story, so the patch using it is among the tree's riskiest and its risk
# finding says how often commits scored as high were later fixed.
. "$(dirname "$0")/lib.sh"

CLOCK_START=1500000000 CLOCK_STEP=$((86400 * 20))
. "$TOP/tests/lib/history.sh"

# part NAME CALLEE [EXTRA]: NAME.c, a function calling CALLEE $CALLS
# times (default 10) and EXTRA once, the same shape for every part.
part() {
	{
		echo "int $1_run(int *v, int n)"
		echo "{"
		_p_j=0
		while [ $_p_j -lt "${CALLS:-10}" ]; do
			echo "	v[$_p_j % n] += $2(v, n, $_p_j);"
			_p_j=$((_p_j + 1))
		done
		if [ -n "${3:-}" ]; then
			echo "	$3(v);"
		else
			echo "	v[0]++;"
		fi
		echo "	return 0;"
		echo "}"
	} >"$1.c"
}

# 20 rounds: a part calling ring_slot_take (3 of every 4 of them fixed a
# round later; the first three also call seldom_used_call), and a part
# of the same shape calling a helper of its own, never fixed.
history_repo
i=0 PEND=""
while [ $i -lt 20 ]; do
	extra=
	[ $i -lt 3 ] && extra=seldom_used_call
	tick; part "ring$i" ring_slot_take $extra; git add "ring$i.c"
	git commit -q -m "lib: add ring part $i"
	A=$(git rev-parse HEAD)
	tick; part "plain$i" "plain_helper_$i"; git add "plain$i.c"
	git commit -q -m "lib: add part $i"
	if [ -n "$PEND" ]; then
		tick; sed -i 's/return 0;/return n ? 0 : -1;/' "$PF"
		git commit -q -am "lib: check n in ${PF%.c}" -m "$(fixes "$PEND")"
	fi
	PEND= PF=
	[ $((i % 4)) -ne 3 ] && PEND=$A PF="ring$i.c"
	i=$((i + 1))
done
"$QUORUM" index -C "$R" >"$TMP/idx" || echo "Bail out! index failed"
like "$TMP/idx" '^risk model: fitted on' "the history fits a risk model"

# newpatch NAME CALLEE [EXTRA]: a patch adding NAME.c, in $TMP/p-NAME,
# made on top of HEAD and taken off again, so the index is up to date.
newpatch() {
	tick; part "$1" "$2" "${3:-}"; git add "$1.c"
	git commit -q -m "lib: add part $1"
	git format-patch -q -o "$TMP/p-$1" -1 HEAD
	git reset -q --hard HEAD~1
}

# The risk line and the finding, each on one line.
review() {
	run "$QUORUM" review -C "$R" --base HEAD "$TMP/p-$1"/*.patch
	grep '^  1/1  risk ' "$TMP/out" >"$TMP/why-$1"
	{
		sed -n '/risky patch/,/votes:/p' "$TMP/out" | tr -s ' \n' '  '
		echo
	} >"$TMP/finding-$1"
}

# 20 commits used ring_slot_take, 15 of them later fixed; 15 of the 55
# commits were. Twice as big as any part: bigger commits were fixed more
# (the fixes, small, never were), so no commit of the history can score
# above it.
CALLS=20 newpatch ring ring_slot_take seldom_used_call
review ring
is "$rc" 1 "review runs, with a finding at quorum"
like "$TMP/why-ring" 'its code uses ring_slot_take \(in 20 earlier commits, 75% of them later fixed, against 27% of all\)' \
	"the risk reason names the word that made the patch risky, with its figures"
unlike "$TMP/why-ring" 'seldom_used_call' "... but not a word only 3 earlier commits had, though all were fixed"
unlike "$TMP/why-ring" 'names that earlier commits' "... and not the sentence that names none"
like "$TMP/finding-ring" 'risky patch: score 1\.00' "the patch is among the riskiest of the tree"
like "$TMP/finding-ring" '[0-9]+% of the commits scored about as high were later fixed, against [0-9]+% of all\)' \
	"... and its finding says how often commits that risky were later fixed"
like "$TMP/finding-ring" 'its code uses ring_slot_take \(in 20 earlier' "... and names the word"
like "$TMP/why-ring" "its subject says 'ring' \\(in the subjects of 20 earlier commits, 75% of them later fixed, against 27% of all\\)" \
	"its subject's word that commits later fixed had is named too"
unlike "$TMP/why-ring" "'(lib|add|part)'" "... not those all commits had"

newpatch other other_helper
review other
is "$rc" 0 "review of a patch without those words runs, with no finding"
like "$TMP/why-other" '^  1/1  risk [01]\.[0-9]+' "... and scores it"
unlike "$TMP/why-other" 'its code uses' "... with no sentence about its code's words"
unlike "$TMP/why-other" "ring_slot_take|'ring'|'lib'|'add'|'part'" "... naming none"
# Its subject's words (lib, add, part) were a little more often those of
# fixed commits (15 of 40, 15 of 55), but too little to name one; and it
# scores below the middle of the history, where what raised a score
# raised it from lower still: the risk line gives no reasons at all.
like "$TMP/why-other" '^  1/1  risk 0\.[0-4][0-9]$' \
	"... and, below the middle of the history, gives no reasons"
unlike "$TMP/out" 'risky patch' "... and no risk finding"

done_testing
