#!/bin/sh
# A watch pass under a daily budget plans its money from every request
# the review will send, built by a dry review; the review then sends
# those very requests instead of building them again. Building is most
# of the work for a large patch and many voters, so the pass costs about
# what a review of the same series costs (building twice cost twice).
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/llm.sh"
. "$TOP/tests/lib/watch.sh"

command -v notmuch >/dev/null || skip_all "notmuch is not installed"
command -v python3 >/dev/null || skip_all "python3 is not installed"
[ -x /usr/bin/time ] || skip_all "/usr/bin/time is not installed (make deps)"
watch_setup

# cpu CMD...: run CMD under a 120 s timeout (stdout and stderr as
# `run`); $cpu is the CPU seconds it used
cpu() {
	/usr/bin/time -f "%U %S" -o "$TMP/time" timeout -k 5 120 "$@" \
		>"$TMP/out" 2>"$TMP/err"
	rc=$?
	cpu=$(awk '{ print $1 + $2 }' "$TMP/time")
}

test_expect_success 'setup: a 40,000-line function, 30 voters, a daily budget' '
	{
		cat <<-EOM &&
		From: A U Thor <author@example.org>
		To: $LIST
		Subject: [PATCH] lib: add big()
		Message-ID: <big@example.org>
		Date: Tue, 14 Nov 2023 10:00:00 +0000

		lib: add big()
		---
		diff --git a/big.c b/big.c
		new file mode 100644
		--- /dev/null
		+++ b/big.c
		@@ -0,0 +1,40004 @@
		+int big(int *v)
		+{
		EOM
		awk "BEGIN { for (i = 0; i < 40000; i++)
			printf \"+\\tv[%d] += %d;\\n\", i % 97, i }" &&
		printf "+\treturn v[0];\n+}\n"
	} >"$MAIL/new/big" &&
	notmuch new --quiet &&
	echo "{\"default\": [{\"answer\": {\"findings\": []}}]}" >"$TMP/s.json" &&
	FAKE_TIMEOUT=300 fake_start "$TMP/s.json" &&
	i=0 &&
	while [ $i -lt 30 ]; do
		# Half the voters take the whole patch, half cannot.
		if [ $i -lt 15 ]; then
			voter v$i openai m$i price-in=0.01 price-out=0.01 \
				context-tokens=1000000
		else
			voter v$i openai m$i price-in=0.01 price-out=0.01
		fi >>"$TMP/voters" || break
		i=$((i + 1))
	done &&
	watch_config "$(cat "$TMP/voters")" "[list \"devel\"]" \
		"	budget-per-day = 100"
'

test_expect_success 'a review of the series: what building its prompts costs' '
	cpu "$QUORUM" review --no-cache -C "$R" --base main "$MAIL/new/big" &&
	test "$rc" = 0 &&
	test_grep "^models: 30 asked, 15 answered" "$TMP/out" &&
	echo "$cpu" >"$TMP/review.cpu"
'

test_expect_success 'the pass plans, then sends what it planned: no more' '
	export XDG_STATE_HOME=$TMP/state &&
	cpu "$QUORUM" watch --once &&
	test "$rc" = 0 &&
	test_grep "^plan: " "$TMP/out" &&
	test "$(requests m0)" = 2 &&
	test "$(requests m20)" = 0 &&
	test "$(outbox_count)" = 1 &&
	review=$(cat "$TMP/review.cpu") &&
	awk -v w="$cpu" -v r="$review" "BEGIN { exit !(w < 1.5 * r + 0.3) }" ||
		{ echo "# the pass used $cpu s of CPU, the review $review s"; false; }
'

test_expect_success 'the reply is the one a review that built its prompts sends' '
	M=$(ls "$OUTBOX"/new/*) &&
	test_grep "^X-Quorum-Voters: rules, v0" "$M" &&
	test_grep "does not fit in its context budget" "$M"
'

test_done
