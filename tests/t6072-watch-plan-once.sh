#!/bin/sh
# A watch pass under a daily budget plans its money from every request
# the review will send, built by a dry review; the review then sends
# those very requests instead of building them again. Each prompt takes
# a data boundary of 16 random bytes (getrandom): a shim counts them,
# and the pass with a plan draws as many as one with none.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/llm.sh"
. "$TOP/tests/lib/watch.sh"

command -v notmuch >/dev/null || skip_all "notmuch is not installed"
command -v python3 >/dev/null || skip_all "python3 is not installed"
watch_setup

# A getrandom() that counts the 16-byte draws (a boundary each) into
# $DRAWS; quorum runs with it preloaded (not under ASan, which must come
# first).
cat >"$TMP/draws.c" <<'EOC'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

ssize_t getrandom(void *buf, size_t len, unsigned int flags)
{
	static ssize_t (*real)(void *, size_t, unsigned int);
	const char *f = getenv("DRAWS");
	FILE *o;

	if (!real)
		real = (ssize_t (*)(void *, size_t, unsigned int))dlsym(
			RTLD_NEXT, "getrandom");
	if (len == 16 && f && (o = fopen(f, "a"))) {
		fputs("draw\n", o);
		fclose(o);
	}
	return real(buf, len, flags);
}
EOC
cc -shared -fPIC -o "$TMP/draws.so" "$TMP/draws.c" -ldl 2>/dev/null &&
	LD_PRELOAD=$TMP/draws.so "$QUORUM" --version >/dev/null 2>&1 &&
	test_set_prereq SHIM

# draws CMD...: `run` CMD with the shim; $draws is how many boundaries
# it drew
draws() {
	: >"$TMP/draws"
	DRAWS=$TMP/draws LD_PRELOAD=$TMP/draws.so run timeout -k 5 120 "$@"
	draws=$(wc -l <"$TMP/draws" | tr -d " ")
}

test_expect_success 'setup: a 40,000-line function, 30 voters' '
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
	} >"$TMP/big.eml" &&
	cp "$TMP/big.eml" "$MAIL/new/big" &&
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
	done
'

# Without a cap a pass makes no plan and builds each prompt once.
test_expect_success SHIM 'a pass with no daily budget builds each prompt once' '
	watch_config "$(cat "$TMP/voters")" &&
	XDG_STATE_HOME=$TMP/state0 draws "$QUORUM" watch --once &&
	test "$rc" = 0 &&
	test_grep "reviewed" "$TMP/out" &&
	test_grep -v "^plan: " "$TMP/out" &&
	test "$(requests m0)" = 1 &&
	test "$draws" = 30 &&
	rm -f "$OUTBOX"/new/* &&
	sed "s/<big@example.org>/<big2@example.org>/" "$TMP/big.eml" \
		>"$MAIL/new/big2" &&
	notmuch new --quiet
'

test_expect_success SHIM 'a pass under a daily budget plans, then sends what it planned' '
	watch_config "$(cat "$TMP/voters")" "[list \"devel\"]" \
		"	budget-per-day = 100" &&
	XDG_STATE_HOME=$TMP/state1 draws "$QUORUM" watch --once &&
	test "$rc" = 0 &&
	test_grep "^plan: " "$TMP/out" &&
	test "$(requests m0)" = 2 &&
	test "$(requests m20)" = 0 &&
	test "$(outbox_count)" = 1 &&
	test "$draws" = 30
'

test_expect_success SHIM 'the reply is the one a review that built its prompts sends' '
	M=$(ls "$OUTBOX"/new/*) &&
	test_grep "^X-Quorum-Voters: rules, v0" "$M" &&
	test_grep "does not fit in its context budget" "$M"
'

test_done
