#!/bin/sh
# A past bug that comes back in another file with every name changed:
# similar finds it by shape and shows the renaming, the history voter in
# review cites the past bug, its fix and the renaming; a common idiom
# repeated by many past fixes matches nothing; a hunk of 100,000 lines
# or of binary junk costs bounded time and memory; an index of the
# schema before shapes is rebuilt.
. "$(dirname "$0")/lib.sh"

R=$TMP/repo
mkdir -p "$R" && git -C "$R" init -q
cd "$R" || exit 1
n=0
tick() {
	n=$((n + 1))
	export GIT_COMMITTER_DATE="$((1700000000 + n * 3600)) +0000"
	export GIT_AUTHOR_DATE="$GIT_COMMITTER_DATE"
}
cat >name.c <<'EOC'
#include <stdlib.h>
#include <string.h>

struct ctx {
	char *name;
};
EOC
tick; git add name.c && git commit -q -m "name: initial"

# The bug: one byte short for the terminating NUL.
cat >>name.c <<'EOC'

int copy_name(struct ctx *c, const char *src, size_t len)
{
	char *s = malloc(len);

	memcpy(s, src, len);
	s[len] = '\0';
	c->name = s;
	return 0;
}
EOC
tick; git commit -q -am "name: keep a copy of the name"
BUG=$(git rev-parse HEAD)
sed -i 's/char \*s = malloc(len);/char *s = malloc(len + 1);/' name.c
tick; git commit -q -am "name: room for the NUL" -m "s[len] wrote one byte past the buffer.

Fixes: $(git rev-parse --short=12 "$BUG") (\"name: keep a copy of the name\")"
FIX=$(git rev-parse HEAD)

# A NULL dereference, fixed by adding the missing check (nothing removed).
cat >dup.c <<'EOC'
#include <stdlib.h>
#include <string.h>

int keep_title(const char *src, size_t len)
{
	char *s = malloc(len);

	memcpy(s, src, len);
	s[len - 1] = 0;
	set_title_text(s);
	return 0;
}
EOC
tick; git add dup.c && git commit -q -m "dup: keep the title"
BUG2=$(git rev-parse HEAD)
sed -i 's/^\tmemcpy(s, src, len);$/\tif (!s)\n\t\treturn -1;\n\tmemcpy(s, src, len);/' dup.c
tick; git commit -q -am "dup: check the allocation" -m "malloc() can fail; s was dereferenced.

Fixes: $(git rev-parse --short=12 "$BUG2") (\"dup: keep the title\")"
FIX2=$(git rev-parse HEAD)

# A common idiom, in the code of many past fixes.
i=0
while [ $i -lt 12 ]; do
	cat >"step$i.c" <<EOC
int setup_$i(struct dev *dev)
{
	int ret;

	ret = step_$i(dev);
	if (ret < 0)
		return ret;
	dev->state_$i = $i;
	return 0;
}
EOC
	tick; git add "step$i.c" && git commit -q -m "step$i: set up"
	b=$(git rev-parse --short=12 HEAD)
	sed -i "s/dev->state_$i = $i;/dev->state_$i = $i + 1;/" "step$i.c"
	tick; git commit -q -am "step$i: right state" -m "Fixes: $b (\"step$i: set up\")"
	i=$((i + 1))
done
git tag base

run "$QUORUM" index -C "$R"
is "$rc" 0 "index"

# The same bug in another file, every name changed.
cat >label.c <<'EOC'
#include <stdlib.h>
#include <string.h>

struct obj {
	char *label;
};

int dup_label(struct obj *o, const char *from, size_t n)
{
	char *out = malloc(n);

	memcpy(out, from, n);
	out[n] = '\0';
	o->label = out;
	return 0;
}
EOC
tick; git add label.c && git commit -q -m "label: keep a copy of the label"
NEW=$(git rev-parse HEAD)
git format-patch -q -o "$TMP/renamed" -1 HEAD

run "$QUORUM" similar -C "$R" "$NEW"
is "$rc" 0 "similar exits 0"
like "$TMP/out" "fix  $(git rev-parse --short=12 "$FIX") name: room for the NUL" "the renamed recurrence finds the past fix"
like "$TMP/out" "bug  $(git rev-parse --short=12 "$BUG") name: keep a copy of the name" "... and the bug"
like "$TMP/out" 'renaming .*out ↔ s' "shows the renaming out <-> s"
like "$TMP/out" 'renaming .*n ↔ len' "... and n <-> len"
like "$TMP/out" '\+ label\.c:10: char \*out = malloc\(n\);' "shows the patch line that matched"
like "$TMP/out" '~ removed by the fix \(same shape\): char \*s = malloc\(len\);' "... and the past line the fix removed"
like "$TMP/out" 'shape (0\.[1-9]|1\.)' "the score has a shape part"
QUORUM_SIMILAR_LEXICAL=1 run "$QUORUM" similar -C "$R" "$NEW"
unlike "$TMP/out" "$(git rev-parse --short=12 "$FIX")" "the lexical ranking alone misses it"

git reset -q --hard base
run "$QUORUM" review -C "$R" "$TMP"/renamed/*.patch
is "$rc" 1 "review: the history voter raises a finding"
like "$TMP/out" "repeats, with other names, code that $(git rev-parse --short=12 "$FIX") had to fix" "the finding names the fix"
like "$TMP/out" "$(git rev-parse --short=12 "$BUG") \(\"name: keep a copy of the name\"\)" "... the past bug"
like "$TMP/out" 'renaming [^.]*out ↔ s' "... and the renaming"
like "$TMP/out" 'The fix changed this line: char \*s = malloc\(len\);' "... and the line the fix changed"
like "$TMP/out" 'label\.c:[0-9]+-[0-9]+, patch 1/1, history' "at the recurrence's file:lines"

# The NULL dereference comes back renamed in another file.
cat >copy.c <<'EOC'
#include <stdlib.h>
#include <string.h>

int dup_label(const char *from, size_t n)
{
	char *out = malloc(n);

	memcpy(out, from, n);
	out[n - 1] = 0;
	put_label_text(out);
	return 0;
}
EOC
tick; git add copy.c && git commit -q -m "copy: labels"
git format-patch -q -o "$TMP/nocheck" -1 HEAD
run "$QUORUM" similar -C "$R" HEAD
like "$TMP/out" "fix  $(git rev-parse --short=12 "$FIX2") dup: check the allocation" "a fix that only added a check is found for its renamed bug"
like "$TMP/out" '~ where the fix added code \(same shape\): char \*s = malloc\(len\);' "... showing where the fix added code"
git reset -q --hard base
run "$QUORUM" review -C "$R" "$TMP"/nocheck/*.patch
like "$TMP/out" "repeats, with other names, code that $(git rev-parse --short=12 "$FIX2") had to fix" "review: the history voter cites that fix"
like "$TMP/out" 'The fix added a check next to this line: char \*s = malloc\(len\);' "... and where it added the check"
# With the check, the same code is the fixed code: no history finding.
cat >copy.c <<'EOC'
#include <stdlib.h>
#include <string.h>

int dup_label(const char *from, size_t n)
{
	char *out = malloc(n);

	if (!out)
		return -1;
	memcpy(out, from, n);
	out[n - 1] = 0;
	put_label_text(out);
	return 0;
}
EOC
tick; git add copy.c && git commit -q -m "copy: labels, checked"
git format-patch -q -o "$TMP/checked" -1 HEAD
run "$QUORUM" similar -C "$R" HEAD
like "$TMP/out" 'the patch also has what the fix added' "similar: the checked copy has what the fix added"
git reset -q --hard base
run "$QUORUM" review -C "$R" "$TMP"/checked/*.patch
unlike "$TMP/out" "code that $(git rev-parse --short=12 "$FIX2") had to fix" "review: no history finding on the checked copy"

# A common idiom in another file: many past fixes hold it; no match.
cat >probe.c <<'EOC'
int other_init(struct other *o)
{
	int err;

	err = other_probe(o);
	if (err < 0)
		return err;
	o->ready = 1;
	return 0;
}
EOC
tick; git add probe.c && git commit -q -m "probe: init"
git format-patch -q -o "$TMP/idiom" -1 HEAD
run "$QUORUM" similar -C "$R" "$TMP"/idiom/*.patch
is "$rc" 0 "similar of a common idiom exits 0"
unlike "$TMP/out" 'same shape' "a common idiom matches no past code by shape"
unlike "$TMP/out" 'step[0-9]+: right state' "... and cites none of the fixes that hold it"
git reset -q --hard base
run "$QUORUM" review -C "$R" "$TMP"/idiom/*.patch
unlike "$TMP/out" 'other names|resembles code that' "review: no history finding on the idiom"

# Bad input: 100,000 added lines, and binary junk, in one hunk each.
big() {
	echo "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001"
	echo "From: A <a@example.org>"
	echo "Subject: [PATCH] $1"
	echo
	echo "---"
	echo "diff --git a/$1.c b/$1.c"
	echo "new file mode 100644"
	echo "--- /dev/null"
	echo "+++ b/$1.c"
	echo "@@ -0,0 +1,$2 @@"
}
{
	big huge 100000
	awk 'BEGIN { for (i = 0; i < 100000; i++) printf "+\tv%d = f(v%d, %d);\n", i, i, i }'
} >"$TMP/huge.patch"
head -c 3000000 /dev/urandom | tr '\n\r\000' 'xyz' | fold -w 30 | sed 's/^/+/' | head -100000 >"$TMP/junk.lines"
{
	big junk "$(lines "$TMP/junk.lines")"
	cat "$TMP/junk.lines"
} >"$TMP/junk.patch"
for p in huge junk; do
	t0=$(date +%s)
	if command -v /usr/bin/time >/dev/null 2>&1; then
		run /usr/bin/time -f '%M' -o "$TMP/rss" "$QUORUM" similar -C "$R" "$TMP/$p.patch"
		rss=$(tail -1 "$TMP/rss")
	else
		run "$QUORUM" similar -C "$R" "$TMP/$p.patch"
		rss=0
	fi
	t1=$(date +%s)
	ok "$([ "$rc" -eq 0 ] || [ "$rc" -eq 2 ]; echo $?)" "$p: similar ends cleanly (exit $rc)"
	[ "$rc" -eq 0 ] || echo "# $(cat "$TMP/err")"
	ok "$([ $((t1 - t0)) -le 20 ]; echo $?)" "$p: in bounded time ($((t1 - t0)) s)"
	ok "$([ "$rss" -le 512000 ]; echo $?)" "$p: in bounded memory (${rss} KB)"
done

# An index of the schema before shapes is rebuilt, and says so.
DB=$(git rev-parse --git-dir)/quorum/history.db
sqlite3 "$DB" "UPDATE meta SET value = '4' WHERE key = 'schema'" 2>/dev/null ||
	python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"UPDATE meta SET value='4' WHERE key='schema'\"); c.commit()" "$DB"
run "$QUORUM" similar -C "$R" "$NEW"
is "$rc" 3 "an index of schema 4 is refused by similar"
like "$TMP/err" 'schema version 4.*quorum index' "... saying to run quorum index"
run "$QUORUM" index -C "$R"
is "$rc" 0 "index upgrades it"
cat "$TMP/out" "$TMP/err" >"$TMP/both"
like "$TMP/both" 'schema version 4, not [0-9]+.*rebuilt' "... by a rebuild, and says so"
run "$QUORUM" similar -C "$R" "$NEW"
like "$TMP/out" 'renaming .*out ↔ s' "the rebuilt index finds the renamed recurrence"

done_testing
