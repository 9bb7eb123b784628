#!/bin/sh
# A finding mailed in full once is not mailed in full again: v2 of a
# series whose v1 reply named a bug that is still there lists it in one
# line ("Still open from the review of v1 (<id>)"), while a new finding
# of v2, and the same code from another author, are shown in full.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/watch.sh"

command -v notmuch >/dev/null || skip_all "notmuch is not installed"
command -v sqlite3 >/dev/null || skip_all "sqlite3 is not installed"
watch_setup
watch_config '[list "devel"]' '	maintainers = maint@example.org' \
	'[watch]' '	domain = quorum.example.net'
DB=$XDG_STATE_HOME/quorum/state.db

ITEM_NEW='
struct item *item_new(int id)
{
	struct item *it;

	it = malloc(sizeof(*it));
	it->id = id;
	return it;
}'
ITEM_DUP='
struct item *item_dup(const struct item *src)
{
	struct item *copy;

	copy = malloc(sizeof(*copy));
	copy->id = src->id;
	return copy;
}'

# series NAME VERSION [PATCH1-EXTRA] [PATCH2-EXTRA]: a 2-patch series on
# its own branch off main, format-patched into $TMP/NAME. Patch 1 adds
# item_new() (malloc() used unchecked) and, with PATCH1-EXTRA, a line near
# the top of main.c; patch 2 adds first_id() and PATCH2-EXTRA.
series() {
	git -C "$R" checkout -q -b "$1" main
	if [ -n "${3:-}" ]; then
		sed -i "2a $3" "$R/main.c"
	fi
	printf '%s\n' "$ITEM_NEW" >>"$R/main.c"
	git -C "$R" commit -q -am "main: add item_new()"
	printf '\nint first_id(struct item *items) { return items[0].id; }\n' >>"$R/main.c"
	[ -n "${4:-}" ] && printf '%s\n' "$4" >>"$R/main.c"
	git -C "$R" commit -q -am "main: add first_id()"
	git -C "$R" format-patch -q --cover-letter --thread=shallow --to="$LIST" \
		--subject-prefix="PATCH v$2" -o "$TMP/$1" main..
	sed -i 's/\*\*\* SUBJECT HERE \*\*\*/main: item helpers/' "$TMP/$1"/0000-*
	git -C "$R" checkout -q main
}
cover_of() { sed -n 's/^Message-I[Dd]: <\(.*\)\.git\.\(.*\)>$/\1.git.'"$1"'.\2/p' "$TMP/$1"/0000-*; }
# reply_to NAME: the outbox file that answers series NAME's cover letter.
# reply_to NAME: the review (not an explanation) answering series NAME.
reply_to() {
	grep -l "^In-Reply-To: <$(cover_of "$1")>" "$OUTBOX"/new/* 2>/dev/null |
		xargs -r grep -l '^Message-I[Dd]: <quorum\.[0-9a-f]*\.\(review\|unchanged\)@'
}
msgid_of() { sed -n 's/^Message-I[Dd]: <\(.*\)>$/\1/p' "$1"; }

# 1. v1: the finding in full.
series v1 1
post "$TMP/v1"
watch
is "$rc" 0 "watch exits 0"
is "$(outbox_count)" 1 "v1 gets one reply"
R1=$(reply_to v1)
id1=$(msgid_of "$R1")
like "$R1" '^\[1\] medium: malloc\(\) result `it` is dereferenced without a NULL' \
	"v1's reply has the finding"
like "$R1" 'malloc\(\) returns NULL when the allocation fails' \
	"... with its explanation"
unlike "$R1" 'Still open' "v1's reply lists nothing as still open"
is "$(sqlite3 "$DB" "select count(*) from fingerprints where reply_msgid = '$id1'")" 1 \
	"the finding's fingerprint is recorded with v1's reply"

# 2. v2: patch 1 changed in another hunk (every line below moves), the
# bug still there; patch 2 adds item_dup() with a new unchecked malloc().
series v2 2 '#include <stdio.h>' "$ITEM_DUP"
post "$TMP/v2"
watch
is "$rc" 0 "watch exits 0 on v2"
is "$(outbox_count)" 2 "v2 gets one reply"
R2=$(reply_to v2)
[ -n "${KEEP:-}" ] && cp "$R2" "$KEEP"
like "$TMP/out" 'reviewed "\[PATCH v2 0/2\] main: item helpers": findings \(1 of them still open from earlier reviews\)' \
	"the run says one finding was reported before"
like "$R2" "^Still open from the review of v1 of 'main: item helpers'\$" \
	"v2's reply names v1's review"
like "$R2" "^\\(<$id1>\\), not repeated here:\$" "... by its reply's Message-ID"
like "$R2" '^    \[1\] medium main\.c item_new\(\): malloc\(\) result `it` is' \
	"... and the finding in one line, numbered as in the review"
unlike "$R2" 'result `it` is used at line|> \+.*it = malloc' \
	"v1's finding is not repeated in full"
like "$R2" '^\[2\] medium: malloc\(\) result `copy` is dereferenced' \
	"v2's new finding is shown in full"
like "$R2" '> \+.*copy = malloc\(sizeof\(\*copy\)\);' "... with its quote"
like "$R2" 'in item_dup\(\), patch 2/2, null-deref' "... file, function, patch"
like "$R2" '^quorum found 2 potential issues in 1/2, 2/2; 1 of [0-9]+ voters agree on the' \
	"the summary counts both findings"
like "$R2" '^new one\. 1 of them was reported before and is still there: listed by' \
	"... and says one was reported before"
like "$R2" '^voters: .*\(a finding needs 1\)$' "the footer stays"
awk 'length($0) > 78 { bad = 1 } END { exit bad }' "$R2"
ok $? "every line of v2's reply fits 78 columns"

# 3. #quorum explain 1 on v2 explains the still-open finding in full.
id2=$(msgid_of "$R2")
cat >"$MAIL/new/explain" <<EOM
From: Maint <maint@example.org>
To: $LIST
Subject: Re: [PATCH v2 0/2] main: item helpers
Message-ID: <explain-1@example.org>
In-Reply-To: <$id2>
References: <$(cover_of v2)> <$id2>
Date: Tue, 14 Nov 2023 22:30:00 +0000

#quorum explain 1
EOM
notmuch new --quiet
watch
is "$rc" 0 "watch exits 0 on the command"
is "$(outbox_count)" 3 "#quorum explain 1 gets a reply"
E=$(grep -l 'finding 1 in detail' "$OUTBOX"/new/*)
like "$E" 'malloc\(\) returns NULL when the allocation fails' \
	"the explanation shows the still-open finding in full"

# 3b. #quorum rerun of v2: its own finding is shown in full again, v1's
# is still listed in one line.
cat >"$MAIL/new/rerun" <<EOM
From: A U Thor <author@example.org>
To: $LIST
Subject: Re: [PATCH v2 0/2] main: item helpers
Message-ID: <rerun-1@example.org>
In-Reply-To: <$id2>
References: <$(cover_of v2)> <$id2>
Date: Tue, 14 Nov 2023 22:40:00 +0000

#quorum rerun
EOM
notmuch new --quiet
watch
is "$rc" 0 "watch exits 0 on the rerun"
is "$(outbox_count)" 4 "#quorum rerun of v2 gets a reply"
RR=$(reply_to v2 | grep -v "$R2")
like "$RR" '^\[2\] medium: malloc\(\) result `copy` is dereferenced' \
	"the rerun shows v2's own finding in full again"
like "$RR" "^\\(<$id1>\\), not repeated here:\$" "... and still names v1's reply"

# 4. v3, unchanged code: everything was reported before; the reply still
# goes out, with only the still-open lines and the footer.
series v3 3 '#include <stdio.h>' "$ITEM_DUP
/* v3 */"
post "$TMP/v3"
watch
is "$rc" 0 "watch exits 0 on v3"
is "$(outbox_count)" 5 "v3 gets one reply"
R3=$(reply_to v3)
[ -n "${KEEP3:-}" ] && cp "$R3" "$KEEP3"
like "$R3" '^quorum found no new issue in this version: the 2 findings at quorum' \
	"the summary says nothing is new"
like "$R3" "^\\(<$id1>\\), not repeated here:\$" "item_new()'s finding points at v1's reply"
like "$R3" "^\\(<$id2>\\), not repeated here:\$" "item_dup()'s finding points at v2's reply"
like "$R3" '^    \[2\] medium main\.c item_dup\(\): malloc\(\) result `copy`' \
	"... one line each"
unlike "$R3" '^\[[0-9]+\] |> \+' "no finding in full"
like "$R3" '^cost: \$0\.0000 \(offline voters only\)' "the footer stays"

# 5. Another author posting the same code gets the finding in full.
GIT_AUTHOR_NAME="Other Person" GIT_AUTHOR_EMAIL=other@example.org \
GIT_COMMITTER_NAME="Other Person" GIT_COMMITTER_EMAIL=other@example.org \
	series o1 1 '' '/* o1 */'
post "$TMP/o1"
watch
is "$(outbox_count)" 6 "the other author's series gets one reply"
RO=$(reply_to o1)
like "$RO" '^To: Other Person <other@example.org>$' "it answers the other author"
like "$RO" '^\[1\] medium: malloc\(\) result `it` is dereferenced' \
	"the same code from another author is shown in full"
unlike "$RO" 'Still open' "... and nothing is listed as still open"

# 6. v1 and v2 (a day later) arrive in one pass, in two threads: v1 is
# answered first, with the finding in full, and v2 names that reply.
export GIT_AUTHOR_NAME="Third Person" GIT_AUTHOR_EMAIL=third@example.org
export GIT_COMMITTER_NAME="Third Person" GIT_COMMITTER_EMAIL=third@example.org
series t1 1 '' '/* t1 */'
GIT_AUTHOR_DATE="1700086400 +0000" GIT_COMMITTER_DATE="1700086400 +0000" \
	series t2 2 '#include <stdio.h>' '/* t2 */'
export GIT_AUTHOR_NAME="A U Thor" GIT_AUTHOR_EMAIL=author@example.org
export GIT_COMMITTER_NAME="A U Thor" GIT_COMMITTER_EMAIL=author@example.org
post "$TMP/t2"
post "$TMP/t1"
watch
is "$(outbox_count)" 8 "v1 and v2 posted together get one reply each"
RT1=$(reply_to t1)
RT2=$(reply_to t2)
like "$RT1" '^\[1\] medium: malloc\(\) result `it` is dereferenced' \
	"the older version has the finding in full"
like "$RT2" "^\\(<$(msgid_of "$RT1")>\\), not repeated here:\$" \
	"the newer one names the older one's reply"

# 7. Exactly one reply per series; a second run sends nothing.
is "$(reply_to v2 | wc -l | tr -d ' ')" 2 "series v2 has its reply and the rerun's"
for s in v1 v3 o1 t1 t2; do
	is "$(reply_to "$s" | wc -l | tr -d ' ')" 1 "series $s has exactly one reply"
done
watch
is "$(outbox_count)" 8 "a second run sends nothing"
is "$(sqlite3 "$DB" 'select count(*) from fingerprints f left join replies r on r.msgid = f.reply_msgid where r.msgid is null')" 0 \
	"every fingerprint belongs to a recorded reply"

# 7b. 181 days later the fingerprints are forgotten: v4 of the series,
# the bug still there, gets the finding in full again.
series v4 4 '#include <stdio.h>' '/* v4 */'
post "$TMP/v4"
QUORUM_NOW=$(($(date +%s) + 181 * 86400)) watch
is "$rc" 0 "watch exits 0 half a year later"
R4=$(reply_to v4)
like "$R4" '^\[1\] medium: malloc\(\) result `it` is dereferenced' \
	"a finding mailed more than 180 days ago is shown in full again"
unlike "$R4" 'Still open' "... and nothing is listed as still open"
is "$(sqlite3 "$DB" "select count(*) from fingerprints where at < $(date +%s) + 86400")" 0 \
	"the old fingerprints are pruned"

# 7c. At most 100,000 fingerprints per list: with 100,000 more in the
# list, v5's review (its finding still open from v4) prunes the oldest.
NOW5=$(($(date +%s) + 181 * 86400 + 3600))
python3 - "$DB" "$NOW5" <<'EOP'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
now = int(sys.argv[2])
db.executemany("INSERT INTO fingerprints (fp, list, series_key, reply_msgid,"
               " version, title, at) VALUES (?, 'devel', 'k', 'r@x', 1, 't', ?)",
               (("%040x" % i, now - 100000 + i) for i in range(100000)))
db.commit()
EOP
is "$(sqlite3 "$DB" "select count(*) from fingerprints where list = 'devel'")" 100001 \
	"the list holds 100,001 fingerprints (v4's and 100,000 filler)"
series v5 5 '#include <errno.h>' '/* v5 */'
post "$TMP/v5"
QUORUM_NOW=$((NOW5 + 60)) watch
is "$rc" 0 "watch exits 0 with the list's fingerprints full"
is "$(sqlite3 "$DB" "select count(*) from fingerprints where list = 'devel'")" 100000 \
	"at most 100,000 fingerprints are kept for the list"
is "$(sqlite3 "$DB" "select count(*) from fingerprints where fp = '$(printf '%040x' 0)'")" 0 \
	"the oldest one is the one dropped"
is "$(sqlite3 "$DB" "select count(*) from fingerprints where reply_msgid = '$(msgid_of "$R4")'")" 1 \
	"v4's fingerprint, newer than the dropped ones, is kept"
like "$(reply_to v5)" "^Still open from the review of v4" \
	"... and v5's reply names v4's as still open"
sqlite3 "$DB" "delete from fingerprints where reply_msgid = 'r@x'"

# 8. Killed at random points while answering copies of v1, v2 and o1 in
# one pass (a fresh state db and outbox each trial): each series gets
# exactly one reply, no fingerprint is left without its reply, and of v1
# and v2 exactly one mails item_new()'s finding in full, the other names
# that reply.
OUTBOX=$TMP/crash-outbox
CDB=$TMP/crash.db
watch_config '[list "devel"]' '	query = tag:crash' '[watch]' '	domain = quorum.example.net' \
	"	state = $CDB"
for s in v1 v2 o1; do
	cp -r "$TMP/$s" "$TMP/c$s"
	post "$TMP/c$s"
	for f in "$TMP/c$s"/*.patch; do
		id=$(sed -n 's/^Message-I[Dd]: <\(.*\)\.git\.\(.*\)>$/\1.git.c'$s'.\2/p' "$f")
		notmuch tag +crash -- "id:$id"
	done
done
fresh() {
	rm -rf "$CDB" "$CDB-wal" "$CDB-shm" "$OUTBOX"
	notmuch tag -quorum/seen -quorum/reviewed -quorum/skipped -quorum/failed -- tag:crash
}
check_trial() {
	is "$(outbox_count)" 3 "$1: one reply each for v1, v2 and o1"
	n=0
	for s in cv1 cv2 co1; do
		[ "$(reply_to "$s" | wc -l | tr -d ' ')" = 1 ] && n=$((n + 1))
	done
	is "$n" 3 "$1: every series has exactly one reply"
	is "$(sqlite3 "$CDB" 'select count(*) from fingerprints f left join replies r on r.msgid = f.reply_msgid where r.msgid is null')" 0 \
		"$1: no fingerprint without its reply"
	is "$(sqlite3 "$CDB" 'select count(*) from fingerprints')" 3 \
		"$1: three findings mailed in full (item_new() per author, item_dup())"
	R1=$(reply_to cv1)
	R2=$(reply_to cv2)
	n=0
	grep -q "^(<$(msgid_of "$R1")>), not repeated here:\$" "$R2" && n=$((n + 1))
	grep -q "^(<$(msgid_of "$R2")>), not repeated here:\$" "$R1" && n=$((n + 1))
	is "$n" 1 "$1: one of v1 and v2 names the other's reply for item_new()"
	is "$(grep -c 'Still open' "$(reply_to co1)")" 0 \
		"$1: o1's reply lists nothing as still open"
}
# The quicker of two undisturbed runs: the first one warms the caches.
full=
for warm in 1 2; do
	fresh
	t0=$(date +%s.%N)
	"$QUORUM" watch --once >/dev/null 2>&1
	t1=$(date +%s.%N)
	full=$(awk -v a="$t0" -v b="$t1" -v f="$full" \
		'BEGIN { t = b - a; if (f != "" && f < t) t = f; printf "%.3f", t }')
done
echo "# an undisturbed run takes $full s"
check_trial "undisturbed"
kills=0
mid=0
trial=0
while [ $trial -lt 8 ]; do
	trial=$((trial + 1))
	fresh
	runs=0
	while [ $runs -lt 20 ] && [ "$(outbox_count)" -lt 3 ]; do
		runs=$((runs + 1))
		"$QUORUM" watch --once >/dev/null 2>&1 &
		pid=$!
		# Within the time of a whole run (a rerun has less left to
		# do, and a loaded machine made the first one slow): early
		# enough that most runs are still going when the kill comes.
		sleep "$(awk -v s="$trial$runs" -v t="$full" 'BEGIN { srand(s * 7919); printf "%.3f", t * (0.1 + rand() * 0.7) }')"
		if kill -9 $pid 2>/dev/null; then
			kills=$((kills + 1))
			wait $pid 2>/dev/null
			[ "$(outbox_count)" -gt 0 ] && [ "$(outbox_count)" -lt 3 ] &&
				mid=$((mid + 1))
		else
			wait $pid 2>/dev/null
		fi
	done
	"$QUORUM" watch --once >/dev/null 2>&1
	check_trial "trial $trial"
done
echo "# $kills kills, $mid of them between two replies"
ok $([ $kills -ge 4 ]; echo $?) "watch was killed at least 4 times ($kills)"

done_testing
