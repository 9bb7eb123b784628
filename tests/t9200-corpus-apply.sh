#!/bin/sh
# quorum apply on real history: iproute2 commits made into mail with
# git format-patch, applied on their parents, must give the very trees
# git am gives (and git am -3 where the context moved). Needs the corpus.
. "$(dirname "$0")/lib.sh"

BUNDLE=$SHARED/corpora/iproute2.bundle
[ -r "$BUNDLE" ] || skip_all "no corpus at $BUNDLE"

R=$TMP/ip2
git clone -q "$BUNDLE" "$R" || skip_all "cannot clone $BUNDLE"
cd "$R" || exit 1

# tree_of FILE: the tree id quorum printed for the last applied patch
tree_of() { sed -n 's/^patch .* applied.*: commit [0-9a-f]* tree \([0-9a-f]*\)$/\1/p' "$1" | tail -1; }

# 1. The last 200 non-merge commits, one by one, each on its parent.
N=200
git format-patch -q -N --no-merges -o "$TMP/one" -$N HEAD
git log --no-merges -$N --format='%H %T' HEAD >"$TMP/trees"
same=0 differ=0 am_agrees=0
for f in "$TMP"/one/*.patch; do
	sha=$(sed -n '1s/^From \([0-9a-f]*\) .*/\1/p' "$f")
	want=$(grep "^$sha " "$TMP/trees" | cut -d' ' -f2)
	"$QUORUM" apply --base "$sha^" "$f" >"$TMP/out" 2>"$TMP/err"
	got=$(tree_of "$TMP/out")
	if [ "$got" = "$want" ]; then
		same=$((same + 1))
		continue
	fi
	differ=$((differ + 1))
	echo "# differs: $(basename "$f"): $(head -c 300 "$TMP/err")"
	# Only acceptable when git am does not reproduce the commit either.
	rm -rf "$TMP/am" && git worktree add -q --detach "$TMP/am" "$sha^" &&
	if (cd "$TMP/am" && git am -q "$f" >/dev/null 2>&1); then
		[ "$(git -C "$TMP/am" rev-parse 'HEAD^{tree}')" = "$got" ] &&
			am_agrees=$((am_agrees + 1))
	else
		[ -z "$got" ] && [ -s "$TMP/err" ] && am_agrees=$((am_agrees + 1))
	fi
	git worktree remove --force "$TMP/am"
done
is "$((same + am_agrees))" "$N" "$N real commits: quorum's tree equals git am's for each ($same equal the commit)"
ok $([ "$same" -ge 195 ]; echo $?) "at least 195 of $N reproduce the commit's own tree ($same)"

# 2. Series (5 commits each, no merges) that end in a rename, a binary
# change and a mode change: the whole series on the first one's parent.
series_check() { # KIND COMMIT
	base=$(git rev-parse "$2~5")
	rm -rf "$TMP/s"
	git format-patch -q --binary -o "$TMP/s" "$base..$2"
	cat "$TMP"/s/*.patch >"$TMP/series.mbox"
	run "$QUORUM" apply --base "$base" "$TMP/series.mbox"
	is "$rc" 0 "$1 series ending at ${2%${2#????????????}} applies"
	is "$(tree_of "$TMP/out")" "$(git rev-parse "$2^{tree}")" \
		"$1 series: last tree equals git am's"
}
linear5() { [ -z "$(git rev-list --merges "$1~5..$1" 2>/dev/null)" ] && git rev-parse -q --verify "$1~5" >/dev/null; }
pick() { # git log args...: first commit with a linear 5-commit run before it
	for c in $(git log --no-merges --format=%H -300 "$@"); do
		linear5 "$c" && { echo "$c"; return; }
	done
}
first_linear() { while read -r x; do linear5 "$x" && { echo "$x"; break; }; done; }
c=$(git log --no-merges --format=%H -300 --diff-filter=R -M HEAD | first_linear)
[ -n "$c" ] && series_check rename "$c"
c=$(git log --no-merges --format='C %H' --numstat HEAD |
	awk '/^C /{c=$2} /^-\t-\t/{print c}' | first_linear)
[ -n "$c" ] && series_check binary "$c"
c=$(git log --no-merges --format='C %H' --summary HEAD |
	awk '/^C /{c=$2} / mode change /{print c}' | first_linear)
[ -n "$c" ] && series_check mode "$c"
[ -n "$c" ] || ok 1 "no mode-change commit found in the corpus"

# 3. Three-way: a commit applied where its first hunk's leading context
# line was edited. Plain git am fails, and so does quorum --no-3way, with
# the hunk named; git am -3 merges, and quorum gives the same tree.
# a commit that changes ip/ipaddress.c only, with 3 lines of leading context
for x in $(git log --no-merges --format=%H -100 -- ip/ipaddress.c); do
	[ "$(git show --format= --name-only "$x" | wc -l)" = 1 ] || continue
	git show --format= "$x" | awk '/^@@/{h=1; next} h && /^ /{n++; next} h{exit} END{exit !(n >= 3)}' && break
done
git format-patch -q -o "$TMP/x" -1 "$x"
xf=$(ls "$TMP"/x/*.patch)
line=$(sed -n 's/^@@ -\([0-9]*\),.*/\1/p' "$xf" | head -1)
git worktree add -q --detach "$TMP/w3" "$x^"
(cd "$TMP/w3" && sed -i "${line}s/\$/ \/* moved *\//" ip/ipaddress.c &&
	git commit -q -am "touch the context")
base3=$(git -C "$TMP/w3" rev-parse HEAD)
(cd "$TMP/w3" && git am -q "$xf" >/dev/null 2>&1)
ok $([ $? -ne 0 ]; echo $?) "3-way case: plain git am fails"
(cd "$TMP/w3" && git am --abort && git am -q -3 "$xf" >/dev/null 2>&1)
ok $? "3-way case: git am -3 applies"
run "$QUORUM" apply --no-3way --base "$base3" "$xf"
is "$rc" 2 "3-way case: quorum --no-3way fails like git am (exit 2)"
like "$TMP/err" "does not apply: ip/ipaddress.c hunk 1 \(@@ -$line,[0-9]+ \+[0-9,]+ @@\) expected .* at line $line, the base has .*moved" \
	"3-way case: the failure names file, hunk, line and what the base has"
run "$QUORUM" apply --base "$base3" "$xf"
is "$rc" 0 "3-way case: quorum falls back to 3-way"
like "$TMP/out" "applied \(3-way\)" "3-way case: the patch says it needed 3-way"
is "$(tree_of "$TMP/out")" "$(git -C "$TMP/w3" rev-parse 'HEAD^{tree}')" \
	"3-way case: tree equals git am -3's"

# 4. Where git am -3 fails (a conflict), quorum fails too, naming the path.
git -C "$TMP/w3" reset -q --hard "$x^"
hl=$(awk '/^@@/{n=0; split($2, a, ","); s=-a[1]; next} s && /^[ ]/{n++} s && /^-/{print s+n; exit}' "$xf")
(cd "$TMP/w3" && sed -i "${hl}s/\$/ \/* clash *\//" ip/ipaddress.c &&
	git commit -q -am clash)
base4=$(git -C "$TMP/w3" rev-parse HEAD)
(cd "$TMP/w3" && git am -q -3 "$xf" >/dev/null 2>&1)
ok $([ $? -ne 0 ]; echo $?) "conflict case: git am -3 fails"
(cd "$TMP/w3" && git am --abort 2>/dev/null)
run "$QUORUM" apply --base "$base4" "$xf"
is "$rc" 2 "conflict case: quorum fails too (exit 2)"
like "$TMP/err" "conflict in ip/ipaddress.c" "conflict case: the path is named"
git worktree remove --force "$TMP/w3"

# 5. Patches applied on a base that is not their parent (commits from
# HEAD~500..HEAD~490 and HEAD~260..HEAD~250, each alone on HEAD~500): some
# apply at an offset, some do not apply, some need 3-way. quorum must
# agree with git am, and with git am -3, on every one: same tree, or both fail.
B=$(git rev-parse HEAD~500)
git format-patch -q -N --no-merges -o "$TMP/far" HEAD~500..HEAD~490
git format-patch -q -N --no-merges --start-number 100 -o "$TMP/far" HEAD~260..HEAD~250
git worktree add -q --detach "$TMP/w5" "$B"
n=0 agree=0 agree3=0 applied=0 failed=0 three=0
for f in "$TMP"/far/*.patch; do
	n=$((n + 1))
	for mode in plain 3way; do
		git -C "$TMP/w5" reset -q --hard "$B"
		if [ $mode = plain ]; then
			amopt= qopt=--no-3way
		else
			amopt=-3 qopt=
		fi
		if (cd "$TMP/w5" && git am -q $amopt "$f" >/dev/null 2>&1); then
			am=$(git -C "$TMP/w5" rev-parse 'HEAD^{tree}')
		else
			(cd "$TMP/w5" && git am --abort)
			am=FAIL
		fi
		"$QUORUM" apply $qopt --base "$B" "$f" >"$TMP/out" 2>"$TMP/err"
		q=$(tree_of "$TMP/out")
		[ -n "$q" ] || q=FAIL
		if [ "$q" = "$am" ]; then
			[ $mode = plain ] && agree=$((agree + 1)) || agree3=$((agree3 + 1))
		else
			echo "# $mode: $(basename "$f"): git am $am, quorum $q: $(head -c 200 "$TMP/err")"
		fi
		if [ $mode = 3way ]; then
			[ "$q" = FAIL ] && failed=$((failed + 1)) || applied=$((applied + 1))
			grep -q 'applied (3-way)' "$TMP/out" && three=$((three + 1))
		fi
	done
done
git worktree remove --force "$TMP/w5"
is "$agree" "$n" "$n patches on a far base: quorum --no-3way agrees with git am on each"
is "$agree3" "$n" "$n patches on a far base: quorum agrees with git am -3 on each ($applied applied, $three by 3-way, $failed failed)"
ok $([ "$failed" -gt 0 ] && [ "$three" -gt 0 ]; echo $?) "the far-base set has both failures and 3-way merges"

done_testing
