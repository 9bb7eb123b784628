#!/bin/sh
# Building the prompts takes time linear in the patch and the files it
# touches, and the review's deadline covers it: a new 80k-line function
# and a 9,999-file patch with an LLM voter take little more than the
# same review offline (the quadratic builder took minutes), and a review
# whose prompts outlast review.deadline stops there with exit 3.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/llm.sh"

# secs CMD...: run CMD (stdout and stderr as `run`), under a 60 s
# timeout, and set $secs to the seconds it took
secs() {
	_s=$(date +%s.%N)
	timeout -k 5 60 "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	secs=$(awk -v s="$_s" -v e="$(date +%s.%N)" 'BEGIN { printf "%.3f", e - s }')
}

# below LIMIT: $secs < LIMIT, or say how long it took
below() {
	awk -v t="$secs" -v l="$1" 'BEGIN { exit !(t < l) }' ||
		{ echo "# took $secs s, limit $1 s"; false; }
}

test_expect_success 'setup: a new function of 80,000 lines, 9,999 new files' '
	make_repo "$TMP/repo" &&
	git -C "$TMP/repo" tag base &&
	{
		printf "\nint big(int *v)\n{\n\tint sum = 0;\n\n" &&
		awk "BEGIN { for (i = 0; i < 80000; i++)
			printf \"\\tsum += v[%d] + %d;\\n\", i % 97, i % 1000 }" &&
		printf "\treturn sum;\n}\n"
	} >>"$TMP/repo/main.c" &&
	git -C "$TMP/repo" commit -q -am "main: add big()" &&
	git -C "$TMP/repo" format-patch -q -o "$TMP/fn" -1 &&
	awk "BEGIN {
		printf \"commit refs/heads/main\\ncommitter C <c@example.org> 1700000000 +0000\\ndata 14\\nd: 9999 files\\nfrom refs/heads/main^0\\n\"
		for (i = 0; i < 9999; i++) {
			c = sprintf(\"int f%d(int x)\\n{\\n\\treturn x + %d;\\n}\\n\", i, i)
			printf \"M 100644 inline d/a_rather_long_file_name_that_makes_the_directory_big_%04d.c\\ndata %d\\n%s\\n\", i, length(c), c
		} }" >"$TMP/files.fi" &&
	git -C "$TMP/repo" fast-import --quiet <"$TMP/files.fi" &&
	git -C "$TMP/repo" format-patch -q -o "$TMP/files" -1 main &&
	echo "{\"default\": [{\"answer\": {\"findings\": []}}]}" >"$TMP/s.json" &&
	fake_start "$TMP/s.json" &&
	voter a openai ma >"$TMP/config" &&
	: >"$TMP/none"
'

# The bound: 2 s more than 10 times the offline review of the same patch
# on this machine now (the quadratic builder took 38 s for the function).
test_expect_success 'an 80,000-line function: the prompt in linear time' '
	QUORUM_CONFIG=$TMP/none secs "$QUORUM" review -C "$TMP/repo" \
		--base base~0 "$TMP"/fn/*.patch &&
	test "$rc" = 0 &&
	off=$secs &&
	QUORUM_CONFIG=$TMP/config secs "$QUORUM" review -C "$TMP/repo" \
		--base base "$TMP"/fn/*.patch &&
	test "$rc" = 0 &&
	test_grep "^models: 1 asked" "$TMP/out" &&
	below "$(awk -v o="$off" "BEGIN { print 2 + 10 * o }")"
'

# Each file of the patch is read from a directory of 9,999 long names:
# reading it again for each file took 80 s.
test_expect_success 'a 9,999-file patch: each file read once' '
	QUORUM_CONFIG=$TMP/none secs "$QUORUM" review -C "$TMP/repo" \
		--base HEAD~1 "$TMP"/files/*.patch &&
	test "$rc" = 0 &&
	off=$secs &&
	QUORUM_CONFIG=$TMP/config secs "$QUORUM" review -C "$TMP/repo" \
		--base HEAD~1 "$TMP"/files/*.patch &&
	test "$rc" = 0 &&
	test_grep "^models: 1 asked, 1 answered" "$TMP/out" &&
	below "$(awk -v o="$off" "BEGIN { print 2 + 3 * o }")"
'

# A hundred voters: building their prompts outlasts a deadline of 1 s more
# than twice the offline review (reading, applying, the rules voter).
test_expect_success 'the deadline covers building the prompts' '
	QUORUM_CONFIG=$TMP/none secs "$QUORUM" review -C "$TMP/repo" \
		--base base "$TMP"/fn/*.patch &&
	dl=$(awk -v o="$secs" "BEGIN { printf \"%.1f\", 1 + 2 * o }") &&
	{
		i=0 &&
		while [ $i -lt 100 ]; do
			voter v$i openai m$i || break
			i=$((i + 1))
		done &&
		printf "[review]\n\tdeadline = %s\n" "$dl"
	} >"$TMP/many" &&
	QUORUM_CONFIG=$TMP/many secs "$QUORUM" review -C "$TMP/repo" \
		--base base "$TMP"/fn/*.patch &&
	test "$rc" = 3 &&
	test_line_count = 1 "$TMP/err" &&
	test_grep "passed its deadline of [0-9.]* s \(review.deadline\) while building the prompts \(patch 1/1, voter v[0-9]*\)" "$TMP/err" &&
	test_line_count = 0 "$TMP/out" &&
	test "$(requests m0)" = 0 &&
	below "$(awk -v d="$dl" "BEGIN { print d + 5 }")"
'

test_done
