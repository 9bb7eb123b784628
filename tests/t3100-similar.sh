#!/bin/sh
# quorum similar: a commit or a patch mail that re-adds code a past fix
# had to change finds that bug/fix pair, with ids, subjects, score and
# the lines that matched; fixes from after a commit stay invisible.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/history.sh"

history_repo
net_c
tick; git add net.c && git commit -q -m "net: initial"

# The bug: a copy with no bound on the name.
net_c bug
tick; git commit -q -am "net: parse the interface name"
BUG=$(git rev-parse HEAD)
echo "int unrelated_counter;" >other.c
tick; git add other.c && git commit -q -m "other: add a counter"
BEFORE_FIX=$(git rev-parse HEAD)

# A hostile fix: escape sequences in its subject and explanation.
sed -i 's/o->mtu = parse_mtu_value(arg, arg_len);/o->mtu = parse_mtu_value(arg, (int)arg_len);/' net.c
tick; git commit -q -am "$(printf 'net: \033[31mred\033[0m bounded')" -m "$(printf '\033]0;pwned\007 Copy of o->name, arg.\n\nFixes: %s ("net: parse the interface name")' "$(git rev-parse --short=12 "$BUG")")"

# The fix bounds the copy.
commit_net_fix "$BUG"

# A new function re-adds the very same unbounded copy.
net_c_alias
tick; git commit -q -am "net: parse aliases too"
NEW=$(git rev-parse HEAD)
git format-patch -q -o "$TMP/mail" -1 HEAD

run "$QUORUM" similar -C "$R" HEAD
is "$rc" 3 "similar before quorum index exits 3"
like "$TMP/err" 'quorum index' "... and says to run quorum index"

run "$QUORUM" index -C "$R"
is "$rc" 0 "index"

run "$QUORUM" similar -C "$R" "$NEW"
is "$rc" 0 "similar REV exits 0"
like "$TMP/out" "^commit $(git rev-parse --short=12 "$NEW") net: parse aliases too" "names the commit asked about"
like "$TMP/out" '^1\. score (0\.[0-9]+|1\.00) ' "first result has a score"
like "$TMP/out" "bug  $(git rev-parse --short=12 "$BUG") net: parse the interface name" "cites the bug commit, id and subject"
like "$TMP/out" "fix  $(git rev-parse --short=12 "$FIX") net: bound the name copy in parse_opts" "cites the fix commit, id and subject"
like "$TMP/out" '^   \+ net\.c:[0-9]+: memcpy\(o->name, arg, arg_len\);' "shows the patch line that matched, with file:line"
like "$TMP/out" '~ removed by the fix: memcpy\(o->name, arg, arg_len\);' "shows the past line the fix removed"
line=$(grep -n 'memcpy(o->name, arg, arg_len);' net.c | tail -1 | cut -d: -f1)
like "$TMP/out" "net\\.c:$line: memcpy" "the patch line number is the post-image line"

# The same patch as mail.
run "$QUORUM" similar -C "$R" "$TMP"/mail/*.patch
is "$rc" 0 "similar FILE exits 0"
like "$TMP/out" '^patch 1/1: net: parse aliases too' "names the patch of the mail"
like "$TMP/out" "fix  $(git rev-parse --short=12 "$FIX")" "mail: finds the same pair"
run sh -c "'$QUORUM' similar -C '$R' - <'$(ls "$TMP"/mail/*.patch)'"
like "$TMP/out" "fix  $(git rev-parse --short=12 "$FIX")" "mail on standard input works too"

run "$QUORUM" similar -C "$R" -k 10 "$NEW"
like "$TMP/out" 'net: \?\[31mred\?\[0m bounded' "the hostile fix is listed, its escapes defused"
ok "$(! grep -q "$(printf '\033')" "$TMP/out"; echo $?)" "no escape byte reaches the terminal"

# A maildir is mail too.
mkdir -p "$TMP/md/cur" "$TMP/md/new" "$TMP/md/tmp"
cp "$TMP"/mail/*.patch "$TMP/md/cur/1:2,S"
run "$QUORUM" similar -C "$R" "$TMP/md"
like "$TMP/out" "fix  $(git rev-parse --short=12 "$FIX")" "a maildir is read as mail"

# -k bounds the list.
run "$QUORUM" similar -C "$R" -k 1 "$NEW"
is "$(grep -c '^[0-9]*\. score' "$TMP/out")" 1 "-k 1 shows one pair"

# No leakage: a commit from before the fix does not see that fix.
run "$QUORUM" similar -C "$R" "$BEFORE_FIX"
is "$rc" 0 "similar of an older commit exits 0"
unlike "$TMP/out" "$(git rev-parse --short=12 "$FIX")" "a fix from after the commit is invisible"
run "$QUORUM" similar -C "$R" "$BUG"
unlike "$TMP/out" "$(git rev-parse --short=12 "$FIX")" "the bug commit itself does not see its own later fix"

# Nothing similar is not an error.
run "$QUORUM" similar -C "$R" HEAD~4
is "$rc" 0 "nothing similar exits 0"
like "$TMP/out" 'nothing similar' "says so"

# Bad input.
run "$QUORUM" similar -C "$R" no-such-rev
is "$rc" 2 "an unknown REV exits 2"
like "$TMP/err" "no-such-rev" "names the bad REV"
run "$QUORUM" similar -C "$R" -k 0 HEAD
is "$rc" 2 "-k 0 is a usage error"
run "$QUORUM" similar -C "$R"
is "$rc" 2 "no FILE or REV is a usage error"
printf 'From: a@b\nSubject: hi\n\nno patch here\n' >"$TMP/nopatch"
run "$QUORUM" similar -C "$R" "$TMP/nopatch"
is "$rc" 2 "a mail with no patch exits 2"
is "$(lines "$TMP/err")" 1 "no patch: one line"
head -c 3000 /dev/urandom >"$TMP/junk"
run "$QUORUM" similar -C "$R" "$TMP/junk"
ok "$([ "$rc" -eq 2 ] || [ "$rc" -eq 0 ]; echo $?)" "random bytes: no crash (exit $rc)"

done_testing
