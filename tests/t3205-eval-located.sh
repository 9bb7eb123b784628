#!/bin/sh
# quorum eval's located precision: a finding counts only when a later fix
# changed the lines it points at or the function it sits in. The function
# of a line is the one it is really in, not the one the hunk header names;
# lines are followed by their text across the commits that moved them; a
# fix of other lines of the same file does not count.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not installed"

CLOCK_START=1500000000 CLOCK_STEP=$((86400 * 10))
. "$TOP/tests/lib/history.sh"

history_repo
at() { date -u -d "@$((CLOCK_START + $1 * CLOCK_STEP))" +%Y-%m-%d; }
cat >pool.c <<'EOC'
#include <stdlib.h>

struct pool {
	int *slots;
	int nslots;
	int used;
};

int pool_count(const struct pool *p)
{
	int i, n = 0;

	for (i = 0; i < p->nslots; i++)
		n += p->slots[i] != 0;
	n += p->used;
	return n;
}
EOC
tick; git add pool.c && git commit -q -m "pool: count the slots in use"
WSTART=$((CLOCK_N + 1))
# NEW adds pool_grow() after pool_count(): its hunk starts inside
# pool_count(), so the hunk header names pool_count().
tick; cat >>pool.c <<'EOC'

int pool_grow(struct pool *p, int more)
{
	int *bigger = malloc((p->nslots + more) * sizeof(*bigger));

	bigger[0] = p->slots[0];
	p->nslots += more;
	p->used = p->used + 0;
	p->slots = bigger;
	return p->nslots;
}
EOC
git commit -q -am "pool: grow the slot array"
NEW=$(git rev-parse HEAD)
git show "$NEW" | grep -q '^@@ .* @@ int pool_count' ||
	echo "Bail out! the hunk header of NEW does not name pool_count"
# OTHER also adds an unchecked allocation to pool.c, in pool_shrink().
tick; cat >>pool.c <<'EOC'

int pool_shrink(struct pool *p, int fewer)
{
	int *smaller = malloc((p->nslots - fewer) * sizeof(*smaller));

	smaller[0] = p->slots[0];
	p->nslots -= fewer;
	p->slots = smaller;
	return p->nslots;
}
EOC
git commit -q -am "pool: shrink the slot array"
OTHER=$(git rev-parse HEAD)
WEND=$CLOCK_N
# Lines move: five lines at the top of the file push everything down.
tick; sed -i 's|#include <stdlib.h>|#include <stdlib.h>\n#include <string.h>\n\n/* A pool of slots. */\n/* Grows and shrinks. */\n/* Counts what is used. */|' pool.c
git commit -q -am "pool: say what the file is"
# The fix of NEW changes pool_grow() far from the allocation it pointed
# at (the last line before its return).
tick; sed -i 's|	p->slots = bigger;|	free(p->slots);\n	p->slots = bigger;|' pool.c
git commit -q -am "pool: free the old array when growing" -m "$(fixes "$NEW")"
# The fix of OTHER changes another function of pool.c: not the place
# OTHER's finding pointed at.
tick; sed -i 's|	n += p->used;|	n += p->used > 0 ? p->used : 0;|' pool.c
git commit -q -am "pool: do not count a negative use" -m "$(fixes "$OTHER")"
SINCE=$(at "$WSTART"); UNTIL=$(at "$WEND")

"$QUORUM" index -C "$R" >/dev/null || echo "Bail out! index failed"
run "$QUORUM" eval -C "$R" --since "$SINCE" --until "$UNTIL" --json
is "$rc" 0 "eval exits 0"
cp "$TMP/out" "$TMP/eval.json"
rules() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["voters"]["rules"][sys.argv[2]])' "$TMP/eval.json" "$1"; }
# Two rules speak at each allocation (unchecked, and its size's product).
is "$(rules findings)" 4 "the rules voter points at both unchecked allocations"
is "$(rules located)" 2 "... those at one are located: the fix of pool_grow() changed pool_grow(), though the hunk header named pool_count()"
run "$QUORUM" eval -C "$R" --since "$SINCE" --until "$UNTIL"
like "$TMP/out" '^ *rules +.* 1/2|rules.*0\.500' "the text report says so too"

# Now the fix of NEW rewrites the very line the finding points at, after
# more lines moved it: found by its text.
cd "$TMP" && rm -rf repo && history_repo
# Lines that moved and a function renamed since: the fix of a line a
# finding points at is found by its text. A copy of a line near a finding,
# elsewhere in the file, is not that line.
git show "$NEW^:pool.c" >"$TMP/pool.c"
cd "$TMP" && rm -rf repo && history_repo
cp "$TMP/pool.c" pool.c
tick; git add pool.c && git commit -q -m "pool: count the slots in use"
WSTART=$((CLOCK_N + 1))
tick; cat >>pool.c <<'EOC'

int pool_grow(struct pool *p, int more)
{
	int *bigger = malloc((p->nslots + more) * sizeof(*bigger));

	bigger[0] = p->slots[0];
	p->nslots += more;
	p->slots = bigger;
	return p->nslots;
}
EOC
git commit -q -am "pool: grow the slot array"
GROW=$(git rev-parse HEAD)
tick; cat >>pool.c <<'EOC'

int pool_widen(struct pool *p, int more)
{
	int *wider = malloc((p->nslots + more) * sizeof(*wider));

	wider[0] = p->slots[0];
	p->nslots += more;
	p->slots = wider;
	return p->nslots;
}
EOC
git commit -q -am "pool: widen the slot array"
WIDEN=$(git rev-parse HEAD)
WEND=$CLOCK_N
# Twelve lines at the top, and pool_grow() is called pool_expand() now.
tick
{ printf '/* pool.c: line %s */\n' 1 2 3 4 5 6 7 8 9 10 11 12; cat pool.c; } >pool.new
sed 's/pool_grow/pool_expand/' pool.new >pool.c && rm pool.new
git commit -q -am "pool: a header; growing is expanding"
# The fix of GROW checks the allocation it pointed at.
tick; sed -i 's|^\tint \*bigger = malloc.*|&\n\tif (!bigger)\n\t\treturn -1;|' pool.c
git commit -q -am "pool: check the allocation when expanding" -m "$(fixes "$GROW")"
# The fix of WIDEN changes a copy of a line near its finding, in
# pool_expand(): not the line it pointed at.
tick; sed -i '0,/\tp->nslots += more;/s//\tp->nslots = p->nslots + more;/' pool.c
git commit -q -am "pool: spell the addition out" -m "$(fixes "$WIDEN")"
git show HEAD | grep -q '^@@ .* @@ int pool_expand' ||
	echo "Bail out! the fix of WIDEN does not change pool_expand()"
SINCE=$(at "$WSTART"); UNTIL=$(at "$WEND")

"$QUORUM" index -C "$R" >/dev/null || echo "Bail out! index failed"
run "$QUORUM" eval -C "$R" --since "$SINCE" --until "$UNTIL" --json
is "$rc" 0 "eval exits 0"
cp "$TMP/out" "$TMP/eval.json"
is "$(rules findings)" 4 "the rules voter points at both allocations"
is "$(rules located)" 2 "... those at one are located: the fix changed the line it pointed at, moved and in a renamed function"

# The risk finding names no line of its own: it points into the function
# the patch adds the most hazards to (conditions, error returns,
# allocations), big_alloc() here, not at the top of the new file (a
# comment) nor at the biggest function, big_feature().
big_history() { # big_history SED: the big feature, and its fix by SED
	cd "$TMP" && rm -rf repo && history_repo
	CLOCK_N=0
	risk_history 16
	WSTART=$((CLOCK_N + 1))
	tick
	{
		printf '/* big.c: the big feature */\n#include <stdlib.h>\n\n'
		c_function big_feature big_helper 80
		printf '\nint big_alloc(int n)\n{\n'
		for j in 1 2 3 4 5 6 7 8; do
			printf '\tint *p%s = malloc(n);\n' $j
			printf '\tif (!p%s)\n\t\treturn -1;\n' $j
		done
		printf '\treturn 0;\n}\n'
	} >big.c
	git add big.c && git commit -q -m "feat: add the big feature"
	BIG=$(git rev-parse HEAD)
	WEND=$CLOCK_N
	tick; sed -i "$1" big.c
	git commit -q -am "feat: fix the big feature" -m "$(fixes "$BIG")"
	SINCE=$(at "$WSTART"); UNTIL=$(at "$WEND")
	"$QUORUM" index -C "$R" >/dev/null || echo "Bail out! index failed"
	run "$QUORUM" eval -C "$R" --since "$SINCE" --until "$UNTIL" --json
	cp "$TMP/out" "$TMP/eval.json"
}
risk() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["voters"]["risk"][sys.argv[2]])' "$TMP/eval.json" "$1"; }
big_history 's/int \*p8 = malloc(n);/int *p8 = calloc(1, n);/'
is "$(risk findings)" 1 "the risk voter flags the big feature"
is "$(risk located)" 1 "... and its fix, in big_alloc(), is where the finding points"
big_history 's/v\[70 % n\] += big_helper(v, n, 70);/v[70 % n] -= big_helper(v, n, 70);/'
is "$(risk findings)" 1 "the risk voter flags it whichever its fix"
is "$(risk located)" 0 "... and a fix of big_feature() is not where it points"

done_testing
