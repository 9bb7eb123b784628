#!/bin/sh
# The risk model's features and reasons: every feature of a commit is
# computed from the commits before it only (the same with or without the
# future in the repository), a history without any Fixes: indexes and
# says no model can be fitted, and a risky patch's reasons are words
# about what it does, not bytes.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 not installed"

CLOCK_START=1500000000 CLOCK_STEP=$((86400 * 20))
. "$TOP/tests/lib/history.sh"

# 1. A history with no Fixes: at all.
history_repo
i=0
while [ $i -lt 30 ]; do
	tick; c_function "f$i" "g$i" 10 >"f$i.c"; git add "f$i.c"
	git commit -q -m "lib: add f$i"
	i=$((i + 1))
done
run "$QUORUM" index -C "$R"
is "$rc" 0 "a history without Fixes: indexes"
like "$TMP/out" '^commits: 30$' "... every commit"
like "$TMP/out" 'risk model cannot be fitted: no commit .* named by a Fixes: trailer' "... and says the risk model cannot be fitted, and why"
git format-patch -q -o "$TMP/p0" -1 HEAD
run "$QUORUM" review -C "$R" --base HEAD~1 "$TMP/p0"/*.patch
like "$TMP/out" '1/1  applied' "... review applies a patch on it"
unlike "$TMP/out" 'risky patch' "... and invents no risk finding"
like "$TMP/out" '^  1/1  risk n/a: the risk model cannot be fitted: no commit' \
	"... and its risk line says why there is no score"
run "$QUORUM" review -C "$R" --base HEAD~1 --format json "$TMP/p0"/*.patch
python3 - "$TMP/out" >"$TMP/json-risk" <<'EOP'
import json, sys
p = json.load(open(sys.argv[1]))["reviews"][0]["patches"][0]
print(p["risk"], p["risk_reasons"], p["risk_error"])
EOP
like "$TMP/json-risk" '^None None the risk model cannot be fitted' \
	"... and so does JSON, as risk_error, not as reasons"
run "$QUORUM" eval -C "$R" --since 2017-01-01 --until 2030-01-01
is "$rc" 0 "eval runs on it"
like "$TMP/out" '^auc +n/a$' "... with no AUC to report"
rm -rf "$R"

# 2. A history to learn from, and a commit C in its middle.
history_repo
net_c bug
tick; git add net.c && git commit -q -m "net: parse the interface name"
BUG=$(git rev-parse HEAD)
risk_history 12
commit_net_fix "$BUG"
# EARLY: an earlier change to net.c, named by a fix only after C.
tick
net_c_alias
git commit -q -am "net: parse an alias"
EARLY=$(git rev-parse HEAD)
tick
cat >>net.c <<'EOC'

int net_open(struct opts *o, size_t n)
{
	char *buf = malloc(n * sizeof(*buf));

	if (!buf)
		return -ENOMEM;
	pthread_mutex_lock(&o->lock);
	if (o->flags)
		goto out;
	pthread_mutex_unlock(&o->lock);
	return 0;
out:
	free(buf);
	return -EINVAL;
}
EOC
git commit -q -am "net: open with a buffer"
C=$(git rev-parse HEAD)
git clone -q "$R" "$TMP/past"
# The future: C is fixed, its file and functions fixed again, its
# author commits much more, and EARLY (same file, same author, words
# like C's) is named by a fix: the commits to net.c and the author's
# later named, the words and the grounding they would give. None of it
# may change C's features.
tick; sed -i 's/return -EINVAL;/return -EIO;/' net.c
git commit -q -am "net: fix the error of net_open" -m "$(fixes "$C")"
tick; sed -i 's/o->mtu = parse_mtu_value(arg, arg_len);/o->mtu = 0;/' net.c
git commit -q -am "net: no mtu from an alias" -m "$(fixes "$EARLY")"
i=0
while [ $i -lt 8 ]; do
	tick; echo "/* $i */" >>net.c
	git commit -q -am "net: fix net_open again $i" -m "$(fixes "$C")"
	i=$((i + 1))
done
"$QUORUM" index -C "$R" >"$TMP/idx" || echo "Bail out! index failed"
"$QUORUM" index -C "$TMP/past" >/dev/null || echo "Bail out! index failed"
risk_features "$R" "$C" >"$TMP/f-future"
risk_features "$TMP/past" "$C" >"$TMP/f-past"
cmp -s "$TMP/f-future" "$TMP/f-past"
ok $? "no leakage: C's features are the same with and without the later commits"
like "$TMP/f-past" ' [1-9]' "... (and there were features to compare)"

# The fix of BUG came before C: C's file, author and words know of it.
risk_features "$TMP/past" "$C" file_bugs author_bugs grounding \
	la_weighted la >"$TMP/named"
like "$TMP/named" 'file_bugs=1 author_bugs=[1-9][0-9]* grounding=0\.[1-9]' "a commit after a fix counts the bug it names in its file, author and grounding"
awk '{ split($4, w, "="); split($5, l, "="); exit !(w[2] > l[2]) }' "$TMP/named"
ok $? "... and its lines weigh more in a file whose commits were fixed"
like "$TMP/idx" '^risk model: fitted on [0-9]+ commits, [0-9]+ later fixed' "index says what the model was fitted on"

# An incremental run computes what a full run does.
git -C "$TMP/past" fetch -q "$R" HEAD && git -C "$TMP/past" reset -q --hard FETCH_HEAD
"$QUORUM" index -C "$TMP/past" >/dev/null
python3 - "$R/.git/quorum/history.db" "$TMP/past/.git/quorum/history.db" <<'EOP'
import sqlite3, sys
q = ("SELECT c.oid, r.x FROM risk r JOIN commits c ON c.seq = r.seq"
     " ORDER BY c.oid")
a = sqlite3.connect(sys.argv[1]).execute(q).fetchall()
b = sqlite3.connect(sys.argv[2]).execute(q).fetchall()
sys.exit(0 if a == b and len(a) > 30 else 1)
EOP
ok $? "an incremental index stores the features a full one does"

# A rerun with nothing new does not refit or rewrite.
run "$QUORUM" index -C "$R"
like "$TMP/out" '^history index up to date' "a rerun has nothing to do"

# 3. The reasons of a risky patch are what it does, in words.
git format-patch -q -o "$TMP/pc" -1 "$C"
run "$QUORUM" review -C "$TMP/past" --base "$C~1" "$TMP/pc"/*.patch
grep '^  1/1  risk ' "$TMP/out" >"$TMP/why"
like "$TMP/why" '^  1/1  risk [01]\.[0-9]+: ' "review gives the risk score with its reasons"
like "$TMP/why" '(adds [0-9]+ |touches |author|fixed)' "... in words about what the patch does"
unlike "$TMP/why" 'bytes' "... never in bytes"

# 4. A model stored by another version (other inputs): no score, and why.
python3 - "$TMP/past/.git/quorum/history.db" <<'EOP'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
v = db.execute("SELECT value FROM meta WHERE key = 'model'").fetchone()[0].split(" ")
v[1] = str(int(v[1]) + 1)
db.execute("UPDATE meta SET value = ? WHERE key = 'model'", (" ".join(v),))
db.commit()
EOP
run "$QUORUM" review -C "$TMP/past" --base "$C~1" "$TMP/pc"/*.patch
like "$TMP/out" '^  1/1  risk n/a: the stored risk model is of another version of quorum; run `quorum index --rebuild`' \
	"a model of another version gives no score, and says what to run"

done_testing
