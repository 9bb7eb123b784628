#!/bin/sh
# The offline voters in quorum review: history (a patch re-adding a line
# a past fix removed), risk (the score in the report, learned from this
# repo's history), checkpatch (the tree's own checker, mapped to
# file:line), and what the report says with no index.
. "$(dirname "$0")/lib.sh"

CLOCK_START=1500000000 CLOCK_STEP=$((86400 * 20))
. "$TOP/tests/lib/history.sh"

history_repo
net_c bug
tick; git add net.c && git commit -q -m "net: parse the interface name"
BUG=$(git rev-parse HEAD)

# History for the risk model: big feature commits that later needed
# fixes, small tidy ones that did not.
risk_history 12

commit_net_fix "$BUG"
git tag base

# The patch under review re-adds the unbounded copy.
net_c_alias
tick; git commit -q -am "net: parse aliases too"
git format-patch -q -o "$TMP/readd" -1 HEAD
git reset -q --hard base

# A small, harmless patch.
echo "/* more notes */" >>notes.txt
tick; git commit -q -am "docs: one more note"
git format-patch -q -o "$TMP/small" -1 HEAD
git reset -q --hard base

# A big new feature patch.
c_function feature_big feature_helper_big 80 >big.c
git add big.c && tick && git commit -q -m "feat: add the big feature"
git format-patch -q -o "$TMP/big" -1 HEAD
git reset -q --hard base

# 1. No index: the report says so once, and nothing else changes.
run "$QUORUM" review -C "$R" "$TMP"/readd/*.patch
like "$TMP/out" 'no history index; run `quorum index`' "no index: the report says to run quorum index"
is "$(grep -c 'no history index' "$TMP/out")" 1 "... once"
like "$TMP/out" '^voters: rules \(a finding needs 1\)' "no index: rules votes alone"
unlike "$TMP/out" 'resembles' "no index: no history finding"

# 2. With the index: the history voter cites bug and fix.
run "$QUORUM" index -C "$R"
is "$rc" 0 "index"
run "$QUORUM" review -C "$R" "$TMP"/readd/*.patch
is "$rc" 1 "a patch re-adding fixed code has a finding at quorum"
like "$TMP/out" '^voters: rules, history, risk \(a finding needs 1\)' "history and risk vote with an index"
like "$TMP/out" "resembles code that $(git rev-parse --short=12 "$FIX") had to fix" "finding names the fix"
like "$TMP/out" "This resembles $(git rev-parse --short=12 "$BUG") \(\"net: parse the" "explanation cites the bug id and subject"
like "$TMP/out" "fixed by $(git rev-parse --short=12 "$FIX") \(\"net: bound the name" "explanation cites the fix id and subject"
like "$TMP/out" 'longer than 15 bytes overflowed' "explanation quotes the fix's own explanation"
like "$TMP/out" 'The fix changed this line: memcpy\(o->name, arg, arg_len\);' "quotes the past buggy line"
like "$TMP/out" '> \+memcpy\(o->name, arg, arg_len\);' "quotes the added line"
like "$TMP/out" 'net\.c:[0-9]+(-[0-9]+)?, patch 1/1, history' "finding has file:line"
like "$TMP/out" 'votes: 1/3 \(history\)' "the history voter raised it"
like "$TMP/out" '^  1/1  risk (0\.[0-9]+|1\.00)' "the report shows the risk score"
like "$TMP/out" "like $(git rev-parse --short=12 "$BUG") \"net: parse the interface name\", fixed by $(git rev-parse --short=12 "$FIX")" "the report shows the most similar past fix"

# 3. A clean small patch: no finding, but risk and similar are still shown.
run "$QUORUM" review -C "$R" "$TMP"/small/*.patch
is "$rc" 0 "a small docs patch has no finding"
like "$TMP/out" 'No findings at quorum' "no findings"
like "$TMP/out" '^  1/1  risk ' "risk shown even with no finding"
small=$(sed -n 's/^  1\/1  risk \([0-9.]*\).*/\1/p' "$TMP/out")

# 4. Risk learned from this history: a big feature scores higher.
run "$QUORUM" review -C "$R" "$TMP"/big/*.patch
big=$(sed -n 's/^  1\/1  risk \([0-9.]*\).*/\1/p' "$TMP/out")
ok "$(awk -v a="$big" -v b="$small" 'BEGIN { exit !(a > b) }'; echo $?)" "a big feature ($big) is riskier than a docs note ($small)"

# 5. The tree's own checker votes, mapped to file:line.
mkdir -p scripts
cat >scripts/checkpatch.pl <<'EOP'
#!/usr/bin/perl
# A stand-in for the kernel's checkpatch.pl: same report format.
use strict;
my $file;
for (@ARGV) { $file = $_ unless /^--/; }
die "no file" unless defined $file;
die "wants --no-tree" unless grep { $_ eq '--no-tree' } @ARGV;
open(my $fh, '<', $file) or die;
my ($name, $line, $n) = ('', 0, 0);
my $bad = 0;
while (<$fh>) {
	$n++;
	if (/^\+\+\+ b\/(.*)/) { $name = $1; next; }
	if (/^@@ -\d+(?:,\d+)? \+(\d+)/) { $line = $1 - 1; next; }
	next unless $name;
	$line++ if /^[ +]/;
	if (/^\+.*memcpy\(/) {
		print "WARNING: Prefer strscpy over memcpy for strings\n";
		print "#$n: FILE: $name:$line:\n$_\n";
		$bad = 1;
	}
}
exit $bad;
EOP
git add scripts && tick && git commit -q -m "scripts: add checkpatch" && git tag base2
run "$QUORUM" review -C "$R" "$TMP"/readd/*.patch
like "$TMP/out" '^voters: rules, history, risk, checkpatch' "checkpatch votes when the tree has scripts/checkpatch.pl"
like "$TMP/out" 'low: Prefer strscpy over memcpy for strings' "checkpatch's warning is a finding"
pline=$(sed -n 's/.*net\.c:\([0-9]*\).*, style$/\1/p' "$TMP/out")
want=$(git show base:net.c | wc -l); want=$((want + 6))
is "$pline" "$want" "checkpatch's finding is at the post-image line of net.c"

# A checker that fails is an abstention, not a failed review.
printf '#!/usr/bin/perl\nexit 3;\n' >scripts/checkpatch.pl
git commit -q -am "scripts: break checkpatch"
run "$QUORUM" review -C "$R" "$TMP"/readd/*.patch
is "$rc" 1 "a broken checker: the review still runs"
unlike "$TMP/out" 'strscpy' "a broken checker raises nothing"

# 6. A corrupt index: the review warns and goes on without it.
printf 'garbage %01000d' 0 >"$R/.git/quorum/history.db"
rm -f "$R/.git/quorum/history.db-wal" "$R/.git/quorum/history.db-shm"
run "$QUORUM" review -C "$R" "$TMP"/readd/*.patch
like "$TMP/err" 'warning: .*quorum index' "corrupt index: a warning that says what to run"
like "$TMP/out" 'no history index' "corrupt index: reviewed without history"

done_testing
