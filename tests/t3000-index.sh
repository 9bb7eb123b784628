#!/bin/sh
# quorum index: Fixes: trailers in their spellings, reverts, merges,
# ids that do not resolve, incremental runs, and a broken or missing db.
. "$(dirname "$0")/lib.sh"

command -v sqlite3 >/dev/null 2>&1 || skip_all "sqlite3 command not installed"

R=$TMP/repo
make_repo "$R"
cd "$R" || exit 1
n=0
# commit FILE SUBJECT [BODY]: change FILE and commit with the message
commit() {
	n=$((n + 1))
	export GIT_COMMITTER_DATE="$((1700000000 + n * 60)) +0000"
	export GIT_AUTHOR_DATE="$GIT_COMMITTER_DATE"
	printf 'int v%d_%s(void) { return %d; }\n' "$n" "$(echo "$1" | tr -c 'a-z\n' _)" "$n" >>"$1"
	git add "$1"
	git commit -q -m "$2" ${3:+-m "$3"}
}
sqlq() { sqlite3 "$R/.git/quorum/history.db" "$1"; }

commit net.c "net: add the parser"
BUG1=$(git rev-parse HEAD)
commit net.c "net: add the dumper"
BUG2=$(git rev-parse HEAD)
commit route.c "route: a very long subject that the fix will wrap across two lines of its trailer"
BUG3=$(git rev-parse HEAD)
commit route.c "route: add the cache"
BUG4=$(git rev-parse HEAD)
commit counters.c "link: add the counters"
BUG5=$(git rev-parse HEAD)
commit other.c "other: unrelated work"

# Twelve hex digits and a quoted subject: the usual form.
commit net.c "net: fix the parser" "Fixes: $(git rev-parse --short=12 "$BUG1") (\"net: add the parser\")
Signed-off-by: A U Thor <author@example.org>"
FIX1=$(git rev-parse HEAD)
# The full 40 hex digits, and the `Fixes: commit X` spelling.
commit net.c "net: fix the dumper" "Fixes: commit $BUG2 (\"net: add the dumper\")"
# A subject wrapped onto the next line.
commit route.c "route: fix the long one" "Fixes: $(git rev-parse --short=12 "$BUG3") (\"route: a very long subject that the fix will
wrap across two lines of its trailer\")
Signed-off-by: A U Thor <author@example.org>"
# An id that resolves to nothing, with a subject that does.
commit route.c "route: fix the cache" "Fixes: 0123456789ab (\"route: add the cache\")"
# Neither id nor subject resolve: counted, not dropped.
commit link.c "link: fix a thing" "Fixes: 0badc0ffee12 (\"no such commit anywhere\")"
# Fixes: lines that name no commit at all.
commit link.c "link: fix the docs" "Fixes: https://bugzilla.example.org/123"
# A revert names the reverted commit.
git revert --no-edit "$BUG5" >/dev/null 2>&1 || { echo "Bail out! git revert failed"; exit 1; }
REV=$(git rev-parse HEAD)
# A merge commit with a Fixes: trailer of its own: skipped.
git checkout -q -b side HEAD~3
commit side.c "side: work on a branch"
git checkout -q main
git merge -q --no-ff -m "Merge branch side

Fixes: $(git rev-parse --short=12 "$BUG1") (\"net: add the parser\")" side

run "$QUORUM" index -C "$R"
is "$rc" 0 "index exits 0"
like "$TMP/out" 'merges skipped' "summary counts skipped merges"
like "$TMP/out" '\(1 merges skipped\)' "the one merge commit is skipped"
like "$TMP/out" 'resolved by id: 3, by subject: 1, unresolved: 1' "ids, subjects and failures counted"
like "$TMP/out" 'reverts: 1' "the revert counts as a pair"
like "$TMP/out" 'naming no commit: 1' "a Fixes: URL is counted as naming no commit"
like "$TMP/out" 'fix/bug pairs: 5 ' "five fix/bug pairs"
is "$(sqlq "SELECT bug_oid FROM pairs WHERE fix_oid='$FIX1'")" "$BUG1" "12-hex id resolves to the full bug id"
is "$(sqlq "SELECT bug_subject FROM pairs WHERE fix_oid='$FIX1'")" "net: add the parser" "bug subject stored"
is "$(sqlq "SELECT COUNT(*) FROM pairs WHERE bug_oid='$BUG2'")" 1 "40-hex 'Fixes: commit X' resolves"
is "$(sqlq "SELECT COUNT(*) FROM pairs WHERE bug_oid='$BUG3'")" 1 "wrapped subject: the pair is found"
is "$(sqlq "SELECT how FROM pairs WHERE bug_oid='$BUG4'")" subject "unknown id resolved by its quoted subject"
is "$(sqlq "SELECT kind FROM pairs WHERE fix_oid='$REV'")" revert "revert pair recorded as a revert"
is "$(sqlq "SELECT bug_oid FROM pairs WHERE fix_oid='$REV'")" "$BUG5" "revert names the reverted commit"
is "$(sqlq "SELECT subject FROM unresolved")" "no such commit anywhere" "the unresolved trailer is kept with its subject"
is "$(sqlq "SELECT COUNT(*) FROM commits WHERE subject LIKE 'Merge%'")" 0 "no merge commit in the index"
is "$(sqlq "SELECT COUNT(*) FROM hunks WHERE role=0")" "$(sqlq "SELECT COUNT(*) FROM hunks WHERE role=0 AND lines LIKE '+%'")" "bug hunks hold added lines"
ok "$([ "$(sqlq "SELECT COUNT(*) FROM hunks_fts WHERE hunks_fts MATCH 'v1_net_c'")" -ge 1 ]; echo $?)" "FTS finds a bug hunk by an identifier it added"
is "$(sqlq "PRAGMA journal_mode")" wal "the db is in WAL mode"
sqlq "SELECT value FROM meta WHERE key='schema'" >"$TMP/schema"
like "$TMP/schema" '^[1-9][0-9]*$' "schema is versioned"

# A no-change rerun reads nothing and is quick.
start=$(date +%s%N)
run "$QUORUM" index -C "$R"
end=$(date +%s%N)
is "$rc" 0 "rerun exits 0"
like "$TMP/out" 'up to date' "rerun: nothing new"
ok "$([ $(((end - start) / 1000000)) -lt 1000 ]; echo $?)" "rerun takes under a second"

# Incremental: only the new commit is read.
commit net.c "net: one more" "Fixes: $(git rev-parse --short=12 "$BUG1") (\"net: add the parser\")"
run "$QUORUM" index -C "$R"
like "$TMP/out" 'indexed 1 new commits' "second run reads only the new commit"
like "$TMP/out" 'resolved by id: 4,' "counts add up across runs"
is "$(sqlq "SELECT COUNT(*) FROM pairs WHERE bug_oid='$BUG1'")" 2 "the new pair is added"
is "$(sqlq "SELECT COUNT(*) FROM commits")" "$(git rev-list --no-merges HEAD | wc -l | tr -d ' ')" "every non-merge commit indexed once"

# A corrupted db is rebuilt with a clear message, not a crash.
printf 'this is not a database at all %0500d' 0 >"$R/.git/quorum/history.db"
rm -f "$R/.git/quorum/history.db-wal" "$R/.git/quorum/history.db-shm"
run "$QUORUM" similar -C "$R" HEAD
is "$rc" 3 "similar on a corrupt index exits 3"
like "$TMP/err" 'run `quorum index`' "similar says to run quorum index"
run "$QUORUM" index -C "$R"
is "$rc" 0 "index over a corrupt db exits 0"
like "$TMP/err" 'warning: .*unusable.*rebuilt' "index warns that it rebuilt the db"
like "$TMP/out" 'fix/bug pairs: 6 ' "the rebuilt index has every pair"

# A db of another schema version is rebuilt too.
sqlq "UPDATE meta SET value='0' WHERE key='schema'"
run "$QUORUM" index -C "$R"
like "$TMP/err" 'schema version 0' "an old schema is named and rebuilt"

# A missing db is simply built.
rm -rf "$R/.git/quorum"
run "$QUORUM" similar -C "$R" HEAD
is "$rc" 3 "similar with no index exits 3"
like "$TMP/err" 'no history index.*quorum index' "similar with no index says what to run"
run "$QUORUM" index -C "$R"
is "$rc" 0 "index with no db exits 0"
is "$(lines "$TMP/err")" 0 "a first build warns about nothing"

# History rewritten under the index: the vanished tip forces a rebuild.
git reset -q --hard HEAD~1
git commit -q --allow-empty -m "rewritten"
git reflog expire --expire=now --all && git gc -q --prune=now
run "$QUORUM" index -C "$R"
is "$rc" 0 "index after a rewrite exits 0"
like "$TMP/err" 'rewritten' "a rewritten history is rebuilt with a reason"

# Rewritten with the old tip still in the object store (a reset, a
# rebase, before any gc): HEAD no longer descends from it, so what was
# indexed from it (here a fix and its pair) must not stay.
npairs=$(sqlq "SELECT COUNT(*) FROM pairs")
echo "/* fixed */" >>junk2.c && git add junk2.c &&
	git commit -q -m "net: fix the parser again" \
		-m "Fixes: $(git rev-parse --short=12 "$BUG1") (\"net: add the parser\")"
run "$QUORUM" index -C "$R"
is "$(sqlq "SELECT COUNT(*) FROM pairs")" "$((npairs + 1))" "the fix is indexed"
git reset -q --hard HEAD~1
git commit -q --allow-empty -m "another way"
run "$QUORUM" index -C "$R"
is "$rc" 0 "index after a reset exits 0"
like "$TMP/err" 'HEAD does not descend from the commit indexed last.*rebuilt' \
	"a reset under the index rebuilds it, saying why"
is "$(sqlq "SELECT COUNT(*) FROM pairs")" "$npairs" "the dropped fix's pair is gone"
is "$(sqlq "SELECT COUNT(*) FROM commits WHERE subject = 'net: fix the parser again'")" 0 \
	"the dropped commit is gone"
git commit -q --allow-empty -m "forward"
run "$QUORUM" index -C "$R"
is "$(lines "$TMP/err")" 0 "moving forward is no rewrite"

# Hostile messages: many Fixes: lines, binary junk, giant ids.
{
	echo "junk: hostile message"
	echo
	i=0
	while [ $i -lt 300 ]; do
		echo "Fixes: $(git rev-parse --short=12 "$BUG1") (\"net: add the parser\")"
		i=$((i + 1))
	done
	printf 'Fixes: %0200d ("x")\n' 1
	printf 'Fixes: ("unterminated\n'
	printf 'Fixes: \001\002\377\376 ("\377")\n'
} >"$TMP/msg"
echo x >>junk.c && git add junk.c && git commit -q -F "$TMP/msg" 2>/dev/null
run "$QUORUM" index -C "$R"
is "$rc" 0 "hostile message: index exits 0"
ok "$([ "$(sqlq "SELECT COUNT(*) FROM pairs WHERE fix_oid='$(git rev-parse HEAD)'")" -le 16 ]; echo $?)" "Fixes: per commit are capped"

# Bad use.
mkdir -p "$TMP/plain"
run "$QUORUM" index -C "$TMP/plain"
is "$rc" 3 "not a repository exits 3"
is "$(lines "$TMP/err")" 1 "not a repository: one line"
git init -q "$TMP/empty"
run "$QUORUM" index -C "$TMP/empty"
is "$rc" 3 "a repository with no commits exits 3"
like "$TMP/err" 'no commits' "no commits: says so"
git clone -q --depth 2 "file://$R" "$TMP/shallow" 2>/dev/null
run "$QUORUM" index -C "$TMP/shallow"
is "$rc" 3 "a shallow clone exits 3, not 'up to date'"
like "$TMP/err" 'shallow clone.*--unshallow' "a shallow clone: says what to fetch"
run "$QUORUM" index -C "$R" extra
is "$rc" 2 "an argument is a usage error"

done_testing
