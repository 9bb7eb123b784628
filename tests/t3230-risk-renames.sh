#!/bin/sh
# A file a commit moves is a rename, for the risk model as for a patch:
# `git format-patch` shows "rename from" and only the lines that
# changed, so the index counts those, not the whole file as added (and
# eval replays the commit the same way). Found as git finds a rename:
# the same content, the same name in another directory, or any file
# with at least half its lines alike; a file that only shares a name is
# a new file.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not installed"

CLOCK_START=1500000000 CLOCK_STEP=86400
. "$TOP/tests/lib/history.sh"

history_repo
mkdir lib
c_function kept helper 40 >lib/kept.c
c_function other helper 40 >lib/other.c
c_function pure helper 40 >lib/pure.c
c_function gone helper 40 >lib/gone.c
c_function many helper 10 >lib/m0.c
i=1
while [ $i -lt 70 ]; do
	sed "s/many/many$i/" lib/m0.c >lib/m$i.c
	i=$((i + 1))
done
tick; git add lib && git commit -q -m "lib: initial"

mkdir core
# The same name in another directory, one line changed.
git mv lib/kept.c core/kept.c
sed -i 's/v\[3 % n\]/v[4 % n]/' core/kept.c
tick; git commit -q -am "core: move kept() out of lib"
MV_NAME=$(git rev-parse HEAD)
# Another name, one line changed: found by its lines.
git mv lib/other.c core/renamed.c
sed -i 's/v\[3 % n\]/v[4 % n]/' core/renamed.c
tick; git commit -q -am "core: rename other.c"
MV_ALIKE=$(git rev-parse HEAD)
# Another name, not a byte changed.
git mv lib/pure.c core/moved.c
tick; git commit -q -am "core: move pure.c"
MV_SAME=$(git rev-parse HEAD)
# Only the name in common: a new file.
git rm -q lib/gone.c
c_function fresh callee 30 >core/gone.c
git add core/gone.c
tick; git commit -q -m "core: a new gone.c"
NOT_MV=$(git rev-parse HEAD)
# A whole directory moved: more files than the model reads line by line.
git mv lib/m* core/
tick; git commit -q -m "core: take lib's m files"
MV_DIR=$(git rev-parse HEAD)

# Files of the same content (empty) moved: each pairs with one.
mkdir -p lib/e
for f in a b c d e; do : >lib/e/$f.py; done
tick; git add lib/e && git commit -q -m "lib: empty modules"
mkdir -p core/e
git mv lib/e/* core/e/
: >core/e/f.py
git add core/e/f.py
tick; git commit -q -m "core: take the empty modules, add one"
MV_EMPTY=$(git rev-parse HEAD)

# Many big files moved, each with a line changed: finding them by
# their lines reads at most 32 MB of blobs per commit; the rest count
# as new files.
mkdir -p big
seq 1 50000 | sed 's/^/static int v/; s/$/;/' >"$TMP/big.c"
i=0
while [ $i -lt 40 ]; do
	cp "$TMP/big.c" big/b$i.c
	i=$((i + 1))
done
tick; git add big && git commit -q -m "big: tables"
mkdir -p huge
i=0
while [ $i -lt 40 ]; do
	git mv big/b$i.c huge/b$i.c
	echo "static int w$i;" >>huge/b$i.c
	i=$((i + 1))
done
tick; git commit -q -am "huge: move the tables"
MV_BIG=$(git rev-parse HEAD)

run "$QUORUM" index -C "$R"
is "$rc" 0 "index runs"
risk_features "$R" "$MV_NAME" la ld new_files nf >"$TMP/f"
like "$TMP/f" '^la=1 ld=1 new_files=0 nf=1$' \
	"a file moved to another directory with one line changed adds 1 line"
risk_features "$R" "$MV_ALIKE" la ld new_files >"$TMP/f"
like "$TMP/f" '^la=1 ld=1 new_files=0$' \
	"... and so does one renamed with one line changed"
risk_features "$R" "$MV_SAME" la ld new_files nf >"$TMP/f"
like "$TMP/f" '^la=0 ld=0 new_files=0 nf=1$' \
	"a file renamed as it was adds nothing"
risk_features "$R" "$NOT_MV" la ld new_files >"$TMP/f"
like "$TMP/f" '^la=34 ld=44 new_files=1$' \
	"a new file that only shares a deleted file's name is a new file"
risk_features "$R" "$MV_DIR" la ld new_files nf >"$TMP/f"
like "$TMP/f" '^la=0 ld=0 new_files=0 nf=70$' \
	"70 files moved to another directory add nothing"

risk_features "$R" "$MV_EMPTY" la new_files nf >"$TMP/f"
like "$TMP/f" '^la=0 new_files=1 nf=6$' \
	"5 identical files moved are 5 renames, and the sixth a new file"

risk_features "$R" "$MV_BIG" new_files nf >"$TMP/f"
python3 - "$TMP/f" <<'EOP'
import sys
f = dict(kv.split("=") for kv in open(sys.argv[1]).read().split())
new, nf = float(f["new_files"]), float(f["nf"])
# 32 MB reads about 17 pairs of 0.9 MB blobs; an unpaired move is two
# files, one deleted and one new
assert 10 <= new <= 30 and nf == 40 + new, f
EOP
ok $? "big moved files are compared up to a budget, the rest count as new files"

# eval replays the commits as patches: a rename is its changed lines.
run "$QUORUM" eval -C "$R" --since 2017-01-01 --until 2030-01-01 -v
is "$rc" 0 "eval runs"
short() { git rev-parse --short=12 "$1"; }
grep "^$(short "$MV_NAME") " "$TMP/out" >"$TMP/l"
like "$TMP/l" ' lines +2 ' "eval's lines changed count a moved file's changed lines"
grep "^$(short "$MV_DIR") " "$TMP/out" >"$TMP/l"
like "$TMP/l" ' lines +0 ' "... and none for a directory moved as it was"

done_testing
