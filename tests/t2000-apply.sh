#!/bin/sh
# quorum apply: per-patch ids equal to git am's, the failing hunk named,
# hostile and broken mail refused in one line with the repo untouched.
. "$(dirname "$0")/lib.sh"

R=$TMP/repo
make_repo "$R"
cd "$R" || exit 1
i=1
while [ $i -le 40 ]; do echo "static int v$i = $i;"; i=$((i + 1)); done >vars.c
printf '#!/bin/sh\necho build\n' >build.sh
git add . && git commit -q -m "more files"
BASE=$(git rev-parse HEAD)

# A 3-patch series with a cover letter: modify, rename + mode, new file.
sed -i 's/v10 = 10/v10 = 100/' vars.c && git commit -q -am "vars: bump v10"
git mv build.sh make.sh && chmod +x make.sh && git commit -q -am "build: rename to make.sh"
printf 'int helper(void);\n' >helper.h && git add helper.h &&
	git commit -q -m "helper: add a header"
TIP_TREE=$(git rev-parse 'HEAD^{tree}')
git format-patch -q --cover-letter --base="$BASE" --stdout "$BASE" >"$TMP/series.mbox"
git reset -q --hard "$BASE"

state() { git for-each-ref; sha1sum .git/index; git status --porcelain; }
state >"$TMP/state.before"

run "$QUORUM" apply "$TMP/series.mbox"
is "$rc" 0 "a series that applies exits 0"
like "$TMP/out" "^base: $BASE \(base-commit\)" "the base and its source are printed"
is "$(grep -Ec '^patch [123]/3 applied: commit [0-9a-f]{40} tree [0-9a-f]{40}$' "$TMP/out")" 3 \
	"each patch gets a commit and a tree id"
is "$(sed -n 's/^patch 3\/3 applied: commit [0-9a-f]* tree //p' "$TMP/out")" "$TIP_TREE" \
	"the last tree is the tree git am makes"
state >"$TMP/state.after"
cmp -s "$TMP/state.before" "$TMP/state.after"
ok $? "refs, index and working tree are unchanged"

run "$QUORUM" apply --json -C "$R" "$TMP/series.mbox"
is "$rc" 0 "--json exits 0"
python3 - "$TMP/out" "$TIP_TREE" <<'EOF' >"$TMP/py" 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
assert d["source"] == "base-commit", d
assert d["applied"] is True
assert [p["index"] for p in d["patches"]] == [1, 2, 3]
assert d["patches"][1]["title"] == "build: rename to make.sh"
assert d["patches"][2]["tree"] == sys.argv[2]
assert all(len(p["commit"]) == 40 and p["error"] is None for p in d["patches"])
EOF
ok $? "--json has base, source and per-patch index/title/commit/tree"
[ -s "$TMP/py" ] && sed 's/^/# /' "$TMP/py"

# A rename that also edits the file: the edit must survive.
git mv vars.c renamed.c && sed -i 's/v3 = 3/v3 = 33/' renamed.c &&
	git add renamed.c && git commit -q -m "vars: rename and edit"
RN_TREE=$(git rev-parse 'HEAD^{tree}')
git format-patch -q --stdout -1 >"$TMP/rename-edit.mbox"
git reset -q --hard "$BASE"
run "$QUORUM" apply "$TMP/rename-edit.mbox"
is "$(sed -n 's/^patch 1\/1 applied: commit [0-9a-f]* tree //p' "$TMP/out")" "$RN_TREE" \
	"a rename with an edit gives git am's tree"

# Standard input, and the help text.
"$QUORUM" apply - <"$TMP/series.mbox" >"$TMP/out" 2>"$TMP/err"
is "$?" 0 "the series can come on standard input"
is "$(sed -n 's/^patch 3\/3 applied: commit [0-9a-f]* tree //p' "$TMP/out")" "$TIP_TREE" \
	"and gives the same tree"
run "$QUORUM" apply --help
is "$rc" 0 "apply --help exits 0"
like "$TMP/out" '--worktree DIR' "apply --help documents --worktree"

# --base overrides base-commit; HEAD is used when there is none.
run "$QUORUM" apply --base HEAD "$TMP/series.mbox"
like "$TMP/out" "^base: $BASE \(--base\)" "--base is used and said"
sed '/^base-commit:/d' "$TMP/series.mbox" >"$TMP/nobase.mbox"
run "$QUORUM" apply "$TMP/nobase.mbox"
like "$TMP/out" "^base: $BASE \(HEAD\)" "without base-commit, HEAD"
sed 's/^base-commit: .*/base-commit: 0123456789abcdef0123456789abcdef01234567/' \
	"$TMP/series.mbox" >"$TMP/gone.mbox"
run "$QUORUM" apply "$TMP/gone.mbox"
is "$rc" 0 "an unknown base-commit falls through to HEAD"
like "$TMP/out" "^note: base-commit 0123456789abcdef0123456789abcdef01234567 is not in the repository; used HEAD" \
	"and says so"

# A series that does not apply: which patch, file, hunk, line, and what's there.
sed -i 's/v11 = 11/v11 = 111/' vars.c && git commit -q -am "vars: bump v11"
sed -i 's/v13 = 13/v13 = 113/' vars.c && git commit -q -am "vars: bump v13"
printf 'x\n' >x.c && git add x.c && git commit -q -m "x: add"
git format-patch -q --stdout "$BASE" >"$TMP/bad-series.mbox"
git reset -q --hard "$BASE"
sed -i 's/v16 = 16/v16 = -16/' vars.c && git commit -q -am "drift"
DRIFT=$(git rev-parse HEAD)
state >"$TMP/state.before"
run "$QUORUM" apply --no-3way "$TMP/bad-series.mbox"
is "$rc" 2 "a series that does not apply exits 2"
is "$(lines "$TMP/err")" 1 "the failure is one line on stderr"
like "$TMP/err" '^quorum: patch 2/3 "vars: bump v13" does not apply: vars.c hunk 1 \(@@ -10,7 \+10,7 @@\) expected "static int v16 = 16;" at line 16, the base has "static int v16 = -16;"$' \
	"it names patch n/m and title, file, hunk header, line, expected and found text"
like "$TMP/out" '^patch 1/3 applied: ' "patches before it are applied"
like "$TMP/out" '^patch 3/3 "x: add" not tried' "patches after it are listed as not tried"
like "$TMP/out" "^note: tried HEAD $(echo "$DRIFT" | cut -c1-12) only" "the note says which base was tried"
state >"$TMP/state.after"
cmp -s "$TMP/state.before" "$TMP/state.after"
ok $? "a failed apply changes nothing"

# Hostile and broken mail: refused in one line, nothing changes.
mail() { # NAME: wrap standard input (a diff) into a patch mail
	{
		printf 'From: Mallory <m@example.org>\nSubject: [PATCH] %s\n' "$1"
		printf 'Date: Tue, 14 Nov 2023 22:13:20 +0000\n\nmsg\n---\n'
		cat
	} >"$TMP/$1.mbox"
}
mail traversal <<'EOF'
diff --git a/../../evil.sh b/../../evil.sh
new file mode 100755
--- /dev/null
+++ b/../../evil.sh
@@ -0,0 +1 @@
+echo pwned
EOF
mail dotgit <<'EOF'
diff --git a/.git/config b/.git/config
--- a/.git/config
+++ b/.git/config
@@ -1 +1,2 @@
 [core]
+	fsmonitor = "echo pwned"
EOF
mail dotgit-case <<'EOF'
diff --git a/.Git/hooks/pre-commit b/.Git/hooks/pre-commit
new file mode 100755
--- /dev/null
+++ b/.Git/hooks/pre-commit
@@ -0,0 +1 @@
+echo pwned
EOF
ln -s /tmp out-link && git add out-link && git commit -q -m "a symlink"
mail symlink <<'EOF'
diff --git a/out-link/x b/out-link/x
new file mode 100644
--- /dev/null
+++ b/out-link/x
@@ -0,0 +1 @@
+x
EOF
mail lost-hunks <<'EOF'
diff --git a/vars.c b/renamed.c
similarity index 97%
rename from vars.c
rename to renamed.c
index 1111111..2222222 100644
EOF
mail corrupt <<'EOF'
diff --git a/vars.c b/vars.c
--- a/vars.c
+++ b/vars.c
@@ -1,3 +1,3 @@
 static int v1 = 1;
-static int v2 = 2;
+static int v2 = 22;
this line does not belong in a hunk
EOF
head -c 4000 /dev/urandom >blob.bin && git add blob.bin && git commit -q -m bin
head -c 100 /dev/urandom >>blob.bin && git commit -q -am bin2
git format-patch -q --stdout -1 HEAD >"$TMP/full-binary.mbox"
git reset -q --hard HEAD~1
awk '/^(literal|delta) /{n=NR} n && NR==n+2 {print substr($0, 1, 20); exit} {print}' \
	"$TMP/full-binary.mbox" >"$TMP/truncated-binary.mbox"

state >"$TMP/state.before"
for t in traversal:'outside the repository: ../../evil.sh' \
	dotgit:'into the .git directory: .git/config' \
	dotgit-case:'into the .git directory: .Git/hooks/pre-commit' \
	symlink:'through the symlink out-link' \
	corrupt:'corrupt patch: vars.c hunk 1' \
	lost-hunks:'index line of renamed.c says its content changes' \
	truncated-binary:'corrupt binary patch of blob.bin'; do
	name=${t%%:*}
	run "$QUORUM" apply "$TMP/$name.mbox"
	is "$rc" 2 "$name: refused with exit 2"
	is "$(lines "$TMP/err")" 1 "$name: one line of reason"
	like "$TMP/err" "${t#*:}" "$name: the reason says what is wrong"
done
state >"$TMP/state.after"
cmp -s "$TMP/state.before" "$TMP/state.after"
ok $? "hostile patches change no ref, index or file"
test ! -e "$TMP/evil.sh" && test ! -e /tmp/x.quorum-test
ok $? "nothing was written outside the repo"

# Repo and input errors.
run "$QUORUM" apply -C "$TMP" "$TMP/series.mbox"
is "$rc" 3 "not a repository exits 3"
run "$QUORUM" apply --base no-such-branch "$TMP/series.mbox"
is "$rc" 3 "a bad --base exits 3"
like "$TMP/err" "no-such-branch" "and names the revision"
: >"$TMP/empty"
run "$QUORUM" apply "$TMP/empty"
is "$rc" 2 "an empty file exits 2"
is "$(lines "$TMP/err")" 1 "with a one-line error"
run "$QUORUM" apply
is "$rc" 2 "no FILE is a usage error"

# --worktree: the applied files on disk, removed unless --keep.
git reset -q --hard "$BASE"
run "$QUORUM" apply --worktree "$TMP/wt" "$TMP/series.mbox"
is "$rc" 0 "--worktree exits 0"
like "$TMP/out" "^worktree: $TMP/wt" "the worktree is named"
test ! -e "$TMP/wt"
ok $? "without --keep it is removed"
run "$QUORUM" apply --worktree "$TMP/wt" --keep "$TMP/series.mbox"
git archive "$TIP_TREE" | (mkdir "$TMP/ref" && tar -C "$TMP/ref" -xf -)
diff -r "$TMP/ref" "$TMP/wt" >/dev/null && test -x "$TMP/wt/make.sh"
ok $? "with --keep it holds exactly the series' final tree"
run "$QUORUM" apply --worktree "$TMP/wt" "$TMP/series.mbox"
is "$rc" 2 "an existing --worktree is refused"
git worktree list | grep -q "$TMP/wt"
ok $([ $? -ne 0 ]; echo $?) "the repo has no worktree entry for it"

# --store-refs: a person can git log the result; HEAD stays.
run "$QUORUM" apply --store-refs "$TMP/series.mbox"
is "$rc" 0 "--store-refs exits 0"
ref=$(git for-each-ref --format='%(refname)' refs/quorum)
like "$TMP/out" "^patch 3/3 applied: commit $(git rev-parse "$ref") " "the ref points at the last commit"
is "$(git log --format=%s "$BASE..$ref" | tr '\n' '|')" "helper: add a header|build: rename to make.sh|vars: bump v10|" \
	"git log shows the series"
is "$(git rev-parse HEAD)" "$BASE" "HEAD did not move"
git fsck --no-dangling >/dev/null 2>&1
ok $? "the repository is consistent (git fsck)"

done_testing
