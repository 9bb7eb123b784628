#!/bin/sh
# quorum review end to end: a real repo, a real series from
# git format-patch, the offline rules voter, and every way input goes bad.
. "$(dirname "$0")/lib.sh"

make_repo "$TMP/repo"
R=$TMP/repo
git -C "$R" tag base

# A clean patch and a defective one (allocation used without a check).
item_series "$R"

snapshot() {
	{
		git -C "$R" for-each-ref
		git -C "$R" status --porcelain
		git -C "$R" rev-parse HEAD
		sha1sum "$R/.git/index" | cut -d' ' -f1
	} >"$1"
}
snapshot "$TMP/before"

# 1. A series with a defect: one finding, exit 1.
run "$QUORUM" review -C "$R" "$TMP/series.mbox"
is "$rc" 1 "a series with a defect exits 1"
like "$TMP/out" '^quorum review: main: item helpers$' "report is titled by the cover letter"
like "$TMP/out" 'base: [0-9a-f]{12} \(HEAD\)' "report names the base and why"
like "$TMP/out" '1/2 +applied +main: add sum_ids\(\)' "patch 1 applied"
like "$TMP/out" '2/2 +applied +main: add item_new\(\)' "patch 2 applied"
like "$TMP/out" 'main\.c:[0-9]+.* in item_new\(\), patch 2/2' "finding has file:line, function and patch"
like "$TMP/out" '> \+.*it = malloc\(sizeof\(\*it\)\);' "finding quotes the added line"
like "$TMP/out" 'votes: 1/1 \(rules\)' "finding shows the vote tally"
unlike "$TMP/out" 'sum_ids\(\), patch' "nothing flagged in the clean patch"

# The user's repository is untouched.
snapshot "$TMP/after"
cmp -s "$TMP/before" "$TMP/after"
ok $? "refs, index, HEAD and status unchanged by review"

# 2. The same series from standard input.
run sh -c "cat '$TMP/series.mbox' | '$QUORUM' review -C '$R' -"
is "$rc" 1 "review - reads standard input"

# 3. The clean patch alone: exit 0, no findings.
run "$QUORUM" review -C "$R" "$TMP"/clean/*.patch
is "$rc" 0 "a clean patch exits 0"
like "$TMP/out" 'No findings at quorum' "clean patch: no findings"

# 4. A series that does not apply: which patch, file and hunk; exit 2.
git -C "$R" checkout -q -b other base
sed -i 's/c++;/c += 1;/' "$R/main.c"
git -C "$R" commit -q -am "other: change the loop"
git -C "$R" checkout -q base
mkdir -p "$TMP/nope"
(
	cd "$R" && git checkout -q other &&
	printf '\nint nope(void)\n{\n\treturn 0;\n}\n' >>main.c &&
	sed -i 's/c += 1;/c += 2;/' main.c &&
	git commit -q -am "nope: depends on other" &&
	git format-patch -q -o "$TMP/nope" -1 HEAD &&
	git checkout -q base
)
snapshot "$TMP/before"
run "$QUORUM" review -C "$R" --base base "$TMP"/nope/*.patch
is "$rc" 2 "a series that does not apply exits 2"
like "$TMP/err" 'patch 1/1' "apply failure names the patch"
like "$TMP/err" 'main\.c' "apply failure names the file"
like "$TMP/err" 'hunk' "apply failure names the hunk"
like "$TMP/out" 'FAILED' "report marks the failed patch"

# 5. Bad input: one line on stderr, exit 2.
: >"$TMP/empty"
run "$QUORUM" review -C "$R" "$TMP/empty"
is "$rc" 2 "empty file exits 2"
is "$(lines "$TMP/err")" 1 "empty file: one-line error"

printf 'From: someone@example.org\nSubject: lunch?\nMessage-Id: <x@y>\n\nAnyone for lunch?\n' >"$TMP/notpatch"
run "$QUORUM" review -C "$R" "$TMP/notpatch"
is "$rc" 2 "a mail with no patch exits 2"
is "$(lines "$TMP/err")" 1 "no patch: one-line error"
like "$TMP/err" 'no patch|no diff' "no patch: says so"

head -c 4096 /dev/urandom >"$TMP/blob"
printf '\0\0\0' >>"$TMP/blob"
run "$QUORUM" review -C "$R" "$TMP/blob"
is "$rc" 2 "a binary blob exits 2"
is "$(lines "$TMP/err")" 1 "binary blob: one-line error"

run "$QUORUM" review -C "$R" "$TMP/does-not-exist"
is "$rc" 2 "a missing file exits 2"
like "$TMP/err" 'does-not-exist' "missing file is named"

# Terminal escapes in mail never reach the terminal: shown as \e, \a.
sed -e 's/^Subject: .*/Subject: =?utf-8?q?[PATCH]_evil=1B]0;pwned=07_=1B[2J_title?=/' \
	"$TMP"/clean/*.patch >"$TMP/escape.patch"
run "$QUORUM" review -C "$R" "$TMP/escape.patch"
is "$rc" 0 "a subject with escapes is still reviewed"
like "$TMP/out" 'evil\\e\]0;pwned\\a \\e\[2J title' "escapes are shown as \\e and \\a"
tr -d '\n\t\040-\176' <"$TMP/out" >"$TMP/ctl"
is "$(wc -c <"$TMP/ctl" | tr -d ' ')" 0 "no control byte in the text report"

# 6. Environment errors: exit 3.
mkdir -p "$TMP/plain"
run "$QUORUM" review -C "$TMP/plain" "$TMP/series.mbox"
is "$rc" 3 "-C on a directory that is not a repo exits 3"
is "$(lines "$TMP/err")" 1 "not a repo: one-line error"

run "$QUORUM" review -C "$R" --base no-such-rev "$TMP/series.mbox"
is "$rc" 3 "--base that does not resolve exits 3"

# 7. A malformed config: one line naming the file and line.
printf '[review]\n\tquorum = 1\n[broken\n' >"$TMP/bad.conf"
QUORUM_CONFIG=$TMP/bad.conf run "$QUORUM" review -C "$R" "$TMP/series.mbox"
is "$rc" 2 "malformed config exits 2"
like "$TMP/err" 'bad\.conf' "malformed config: names the file"
like "$TMP/err" 'line 3|:3' "malformed config: names the line"
is "$(lines "$TMP/err")" 1 "malformed config: one-line error"

printf '[review]\n\tquorum = lots\n' >"$TMP/nan.conf"
QUORUM_CONFIG=$TMP/nan.conf run "$QUORUM" review -C "$R" "$TMP/series.mbox"
is "$rc" 2 "non-numeric review.quorum exits 2"
like "$TMP/err" 'review.quorum' "non-numeric quorum: names the key"

# 8. Outside a repository: the diff alone is reviewed, with a warning.
(cd "$TMP/plain" && "$QUORUM" review "$TMP/series.mbox" >"$TMP/out" 2>"$TMP/err")
rc=$?
is "$rc" 1 "outside a repo the diff is still reviewed"
like "$TMP/err" 'not in a git repository' "outside a repo: warns"

snapshot "$TMP/after"
cmp -s "$TMP/before" "$TMP/after"
ok $? "repo still unchanged after every run"

done_testing
