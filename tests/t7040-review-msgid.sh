#!/bin/sh
# quorum review MESSAGE-ID|URL: the series is read from the local notmuch
# database only (read-only, never the network): by <id>, bare id and lore
# URLs it is the review of the same mail as an mbox file; a reply picks
# the series it answers; a superseded version is reviewed when named;
# prerequisite-message-id: threads join the input; missing mail, a
# missing database and hostile ids fail in one line; a FILE always wins.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib/watch.sh"

command -v notmuch >/dev/null || skip_all "notmuch is not installed"

watch_setup

msgid() { sed -n 's/^Message-I[Dd]: *<\(.*\)>.*/\1/p' "$1"; }
# mbox FILES...: the maildir files as one mbox, as b4 am -o - would give
mbox() {
	for f in "$@"; do
		echo "From quorum@z Thu Jan  1 00:00:00 1970"
		cat "$f"
	done
}
# put DIR TAG: DIR's format-patch files into the maildir as they are (a
# second apart, so format-patch made each Message-ID unique)
put() {
	for f in "$1"/*.patch; do
		sed "s/\*\*\* SUBJECT HERE \*\*\*/series $2/" "$f" |
			tail -n +2 >"$MAIL/new/$2-$(basename "$f")"
	done
	notmuch new --quiet
}
fp() { sleep 1; git -C "$R" format-patch -q --thread=shallow --to="$LIST" "$@"; }
review() { run "$QUORUM" review -C "$R" --format json "$@"; }
# json_field KEY: the first "KEY": value of the first review in $TMP/out
json_field() {
	sed -n '/"series":/,$p' "$TMP/out" |
		sed -n "s/.*\"$1\":[[:space:]]*\"\\{0,1\\}\\([^\",]*\\).*/\\1/p" | head -1
}
nreviews() { grep -c '"series":' "$TMP/out"; }

# Series a: cover + 3 patches, posted with lib/watch.sh's post.
git -C "$R" format-patch -q --cover-letter --thread=shallow --to="$LIST" \
	-o "$TMP/a" main..topic
post "$TMP/a"
A0=$(msgid "$MAIL/new/msg-a-1")
A2=$(msgid "$MAIL/new/msg-a-3")
mbox "$MAIL"/new/msg-a-* >"$TMP/a.mbox"
# snap: what a write to the database would change (revision, tags, ids)
snap() { { notmuch count --lastmod '*'; notmuch dump; } | cksum; }
snap >"$TMP/snap.a"

run "$QUORUM" review -C "$R" --format json "$TMP/a.mbox"
is "$rc" 1 "the mbox of series a has a finding at quorum"
cp "$TMP/out" "$TMP/ref.json"
like "$TMP/ref.json" "\"cover_message_id\":[[:space:]]*\"$A0\"" "the reference review is of series a"

same_as_mbox() { # DESCRIPTION: the review in $TMP/out is the mbox's
	is "$rc" 1 "$1: exit 1 (findings at quorum)"
	if cmp -s "$TMP/out" "$TMP/ref.json"; then ok 0 "$1: same JSON as the mbox"
	else
		ok 1 "$1: same JSON as the mbox"
		diff "$TMP/ref.json" "$TMP/out" | head -10 | sed 's/^/#   /'
	fi
}

review "<$A0>"
same_as_mbox "<cover id>"
is "$(cat "$TMP/err")" "" "nothing on stderr"
review "$A2"
same_as_mbox "bare id of patch 2/3"
AT=$(printf '%s' "$A2" | sed 's/@/%40/')
for url in "https://lore.kernel.org/devel/$A2/" \
	"https://lore.kernel.org/devel/$A2/T/#u" \
	"https://lore.kernel.org/all/$A0/raw" \
	"https://lore.kernel.org/devel/$A0/t.mbox.gz" \
	"https://lore.kernel.org/r/$A2" \
	"https://patch.msgid.link/$A0" \
	"http://lkml.kernel.org/r/$A0" \
	"https://lore.kernel.org/devel/$AT/" \
	"https://lore.kernel.org/r/%3C$AT%3E"; do
	review "$url"
	same_as_mbox "$url"
done

# A file that exists always wins, even when its name looks like an id.
cp "$TMP/a.mbox" "$TMP/series@example.org"
review "$TMP/series@example.org"
same_as_mbox "an existing file named x@y is read as a file"
mkdir "$TMP/cwd"
printf 'From: x@y\nSubject: hello\n\nno patch here\n' >"$TMP/cwd/$A0"
(cd "$TMP/cwd" && "$QUORUM" review -C "$R" "$A0" >"$TMP/out" 2>"$TMP/err")
is "$?" 2 "a file named like the id is read instead of the database"
like "$TMP/err" "holds mail but no patch" "... and it says what it found in the file"

is "$(snap)" "$(cat "$TMP/snap.a")" "the reviews of series a left the notmuch database as it was"

# Series b: v1 (cover + 2), then v2 (cover + 3) posted in reply to v1.
fp --cover-letter -o "$TMP/b1" main..topic~1
put "$TMP/b1" b1
B1=$(msgid "$TMP/b1/0000-cover-letter.patch")
B1P1=$(msgid "$TMP/b1/0001-main-add-first_id.patch")
fp --cover-letter -v2 --in-reply-to="$B1" -o "$TMP/b2" main..topic
put "$TMP/b2" b2
B2=$(msgid "$TMP/b2/v2-0000-cover-letter.patch")
B2P3=$(msgid "$TMP/b2/v2-0003-main-add-item_new.patch")

review "$B2P3"
is "$rc" 1 "v2 by its patch 3: reviewed, a finding"
is "$(nreviews)" 1 "one series reviewed"
is "$(json_field cover_message_id)" "$B2" "... v2"
is "$(json_field total)" 3 "... with its 3 patches"
is "$(lines "$TMP/err")" 0 "no note for the newest version"

review "$B1P1"
is "$rc" 0 "superseded v1 by its patch 1: reviewed as asked (no finding in it)"
is "$(nreviews)" 1 "one series reviewed"
is "$(json_field cover_message_id)" "$B1" "... v1, not the newer v2"
is "$(json_field version)" 1 "... version 1"
like "$TMP/err" "note: .*newer version \\(v2\\).*reviewing v1" "a one-line note names v2"
is "$(lines "$TMP/err")" 1 "... and only that"

# A reply in the thread: its message-id reviews the series it answers.
cat >"$MAIL/new/reply-b1" <<EOF
From: Reviewer <rev@example.org>
To: $LIST
Subject: Re: [PATCH 1/2] main: add first_id()
Date: Tue, 14 Nov 2023 22:14:00 +0000
Message-ID: <reply.1@example.org>
In-Reply-To: <$B1P1>
References: <$B1> <$B1P1>

> +int first_id(struct item *items) { return items[0].id; }

What if items is empty?
EOF
cat >"$MAIL/new/reply-reply" <<EOF
From: A U Thor <author@example.org>
To: $LIST
Subject: Re: [PATCH 1/2] main: add first_id()
Date: Tue, 14 Nov 2023 22:15:00 +0000
Message-ID: <reply.2@example.org>
In-Reply-To: <reply.1@example.org>
References: <$B1> <$B1P1> <reply.1@example.org>

Callers check n first.
EOF
notmuch new --quiet
review "<reply.1@example.org>"
is "$(json_field cover_message_id)" "$B1" "a reply to v1 patch 1 reviews v1"
review "reply.2@example.org"
is "$(json_field cover_message_id)" "$B1" "a reply to that reply reviews v1 too"
is "$(nreviews)" 1 "one series reviewed"

# A thread with no patch at all.
cat >"$MAIL/new/question" <<EOF
From: User <user@example.org>
To: $LIST
Subject: how do I build this?
Date: Tue, 14 Nov 2023 23:00:00 +0000
Message-ID: <question@example.org>

Thanks.
EOF
notmuch new --quiet
review "<question@example.org>"
is "$rc" 2 "a thread with no patch: exit 2"
like "$TMP/err" "thread of <question@example.org>.*holds mail but no patch" "... the usual no-series message"
is "$(lines "$TMP/err")" 1 "... in one line"

# Prerequisites: series q names series p (another thread) in a
# prerequisite-message-id: line; s names r, which names q, s (a loop)
# and one that is not in the database. Each adds its own file, so each
# applies on main alone and after the ones before it.
for b in q r s; do
	git -C "$R" checkout -q -b "$b" main
	printf 'int %s_id(void)\n{\n\treturn 1;\n}\n' "$b" >"$R/$b.c"
	git -C "$R" add "$b.c"
	git -C "$R" commit -q -m "$b: add $b.c"
done
git -C "$R" checkout -q main
fp -o "$TMP/p" topic~3..topic~2
put "$TMP/p" p
P=$(msgid "$TMP/p"/0001-*.patch)
fp --cover-letter -o "$TMP/q" main..q
Q=$(msgid "$TMP/q/0000-cover-letter.patch")
sed -i "/^-- \$/i prerequisite-message-id: <$P>" "$TMP/q/0000-cover-letter.patch"
put "$TMP/q" q
review "<$Q>"
is "$(json_field cover_message_id)" "$Q" "series q is reviewed"
is "$(nreviews)" 1 "... only q (the prerequisite joins the input, not the report)"
like "$TMP/err" "prerequisite <$P> is in the local database: \"main: add first_id\\(\\)\" v1 \\(a thread of 1 message\\) joins the input" \
	"stderr says the prerequisite series p joined the input"
unlike "$TMP/err" "warning" "no warning: it was found"

fp -o "$TMP/r" main..r
fp --cover-letter -o "$TMP/s" main..s
S=$(msgid "$TMP/s/0000-cover-letter.patch")
# r names s back: a loop that must end
sed -i -e "/^-- \$/i prerequisite-message-id: <missing.prereq@example.org>" \
	-e "/^-- \$/i prerequisite-message-id: <$Q>" \
	-e "/^-- \$/i prerequisite-message-id: <$S>" "$TMP/r"/0001-*.patch
sed -i "/^-- \$/i prerequisite-message-id: <$(msgid "$TMP/r"/0001-*.patch)>" \
	"$TMP/s/0000-cover-letter.patch"
put "$TMP/r" r
put "$TMP/s" s
snap >"$TMP/snap.s"
review "$S"
is "$(json_field cover_message_id)" "$S" "series s (prerequisite r, then q, then p; r names s again) is reviewed"
is "$(grep -c 'joins the input' "$TMP/err")" 3 "r, q and p join the input, each once"
like "$TMP/err" "warning: prerequisite <missing.prereq@example.org> is not in the local notmuch database" \
	"a missing prerequisite is named in a warning"
is "$(grep -c missing.prereq "$TMP/err")" 1 "... once"

# A prerequisite the series needs: t changes what u adds, neither is in
# the tree; the database has u, so t is applied on u and reviewed alone.
git -C "$R" checkout -q -b u main
printf 'int dep_id(void)\n{\n\treturn 1;\n}\n' >"$R/dep.c"
git -C "$R" add dep.c && git -C "$R" commit -q -m "dep: add dep_id()"
git -C "$R" checkout -q -b t u
sed -i 's/return 1;/return 2;/' "$R/dep.c"
git -C "$R" commit -q -am "dep: dep_id() returns 2"
git -C "$R" checkout -q main
fp --cover-letter -o "$TMP/u" main..u
U=$(msgid "$TMP/u/0000-cover-letter.patch")
fp --cover-letter -o "$TMP/t" u..t
T=$(msgid "$TMP/t/0000-cover-letter.patch")
sed -i "/^-- \$/i prerequisite-message-id: <$U>" "$TMP/t/0000-cover-letter.patch"
put "$TMP/t" t
review "<$T>"
is "$rc" 2 "t without its prerequisite in the database: exit 2"
like "$TMP/err" 'does not apply' "... it does not apply, and says so"
like "$TMP/err" "warning: prerequisite <$U> is not in the local notmuch database" "... the missing prerequisite is named"
put "$TMP/u" u
snap >"$TMP/snap.s" # what the reviews from here on must not change
review "<$T>"
is "$rc" 0 "t with its prerequisite u in the database: applied and reviewed (exit 0)"
is "$(nreviews)" 1 "... one review: t's"
is "$(json_field cover_message_id)" "$T" "... of series t"
like "$TMP/out" '"applied":[[:space:]]*true' "... t applied on top of u"
like "$TMP/out" "on top of prerequisite series 'series u' \\(1 patch\\) from the same input" "... the base note names u"
python3 -c '
import json, sys
(r,) = json.load(open(sys.argv[1]))["reviews"]
(p,) = r["prerequisites"]
assert p["message_id"] == sys.argv[2] and p["patches"] == 1, p
assert [x["title"] for x in r["patches"]] == ["dep: dep_id() returns 2"]
' "$TMP/out" "$U"
ok $? "JSON: u listed as the prerequisite, only t's patch reviewed"

# Declared in turn: w names only t, t names u; w needs both.
git -C "$R" checkout -q -b w t
sed -i 's/return 2;/return 3;/' "$R/dep.c"
git -C "$R" commit -q -am "dep: dep_id() returns 3"
git -C "$R" checkout -q main
fp --cover-letter -o "$TMP/w" t..w
W=$(msgid "$TMP/w/0000-cover-letter.patch")
sed -i "/^-- \$/i prerequisite-message-id: <$T>" "$TMP/w/0000-cover-letter.patch"
put "$TMP/w" w
snap >"$TMP/snap.s"
review "$W"
is "$rc" 0 "w, which needs t, which needs u: applied and reviewed"
python3 -c '
import json, sys
(r,) = json.load(open(sys.argv[1]))["reviews"]
assert r["applied"] is True
assert [p["message_id"] for p in r["prerequisites"]] == sys.argv[2:], r["prerequisites"]
assert [x["title"] for x in r["patches"]] == ["dep: dep_id() returns 3"]
' "$TMP/out" "$U" "$T"
ok $? "JSON: u then t applied first, only w reviewed"

# Not in the database: exit 2, one line, how to get it, no fetching.
review "<nowhere.1@example.org>"
is "$rc" 2 "an unknown message-id: exit 2"
is "$(lines "$TMP/err")" 1 "... one line"
like "$TMP/err" "<nowhere.1@example.org> is not in the local notmuch database \\($MAIL\\); quorum never fetches mail" \
	"... it names the id and the database, and says quorum never fetches"
like "$TMP/err" "b4 am -o - nowhere.1@example.org \\| quorum review -" "... and gives the b4 command"
is "$(cat "$TMP/out")" "" "... no report"
review "https://lore.kernel.org/devel/nowhere.2%40example.org/T/"
is "$rc" 2 "an unknown lore URL: exit 2"
like "$TMP/err" "<nowhere.2@example.org> is not in the local" "... the id decoded from it"

# No database: exit 3, which path and how to configure it.
printf '[notmuch]\n\tdatabase = %s\n' "$TMP/nodb" >"$TMP/nodb.conf"
QUORUM_CONFIG=$TMP/nodb.conf run "$QUORUM" review -C "$R" "<$A0>"
is "$rc" 3 "notmuch.database that is no database: exit 3"
is "$(lines "$TMP/err")" 1 "... one line"
like "$TMP/err" "cannot open the notmuch database $TMP/nodb: .*set notmuch.database in quorum's config" \
	"... names the path and the config key"
: >"$TMP/empty.conf"
QUORUM_CONFIG=$TMP/empty.conf NOTMUCH_CONFIG=$TMP/none run "$QUORUM" review -C "$R" "<$A0>"
is "$rc" 3 "no notmuch.database and no notmuch config: exit 3"
like "$TMP/err" "notmuch's config \\($TMP/none\\).*notmuch.database in quorum's config, or NOTMUCH_CONFIG" \
	"... says where it looked and what to set"
QUORUM_CONFIG=$TMP/empty.conf review "<$A0>"
same_as_mbox "no notmuch.database: notmuch's own config (NOTMUCH_CONFIG) is used"

# Hostile ids: refused in one short line, nothing looked up or read.
hostile() { # DESCRIPTION ARG
	review "$2"
	is "$rc" 2 "$1: exit 2"
	is "$(lines "$TMP/err")" 1 "$1: one line"
	is "$(cat "$TMP/out")" "" "$1: no report"
	ok "$([ "$(wc -c <"$TMP/err")" -lt 300 ]; echo $?)" "$1: a short line"
	unlike "$TMP/err" "$(printf '\033')" "$1: no escape character echoed"
}
hostile "escape sequence" "$(printf '<a\033]0;owned\007b@x>')"
hostile "newline" "$(printf 'a@x\nFrom: evil')"
hostile "space" "<a b@x>"
hostile "5000 bytes" "<$(printf '%05000d' 0)@x>"
hostile "../../etc/passwd@x" "../../etc/passwd@x"
like "$TMP/err" "is not a file, nor a message-id" "... it says it is neither"
hostile "%0A in a URL" "https://lore.kernel.org/devel/a%0Ab@x/"
hostile "%00 in a URL" "https://lore.kernel.org/devel/a%00b@x/"
hostile "a URL with no id" "https://lore.kernel.org/devel/"
# The one message-id check (mailparse's) is the one replies are built
# with: no quote or backslash, at most 250 bytes, so any id quorum takes
# can be written back between <> in a header.
hostile "a quote" '<a"b@x>'
like "$TMP/err" "is not a message-id" "... a quote makes no message-id"
hostile "a backslash" '<a\b@x>'
hostile "300 bytes" "<$(printf '%0300d' 0)@x>"
like "$TMP/err" "at most 250 bytes" "... too long for a header, and says so"
review "<../../etc/passwd@x>"
is "$rc" 2 "<../../etc/passwd@x> is only looked up: not found, exit 2"
like "$TMP/err" "not in the local notmuch database" "... as a message-id"
unlike "$TMP/err" "root:" "... no file read"

# The database was opened read-only: nothing changed in it.
is "$(snap)" "$(cat "$TMP/snap.s")" "the notmuch database is as it was (revision, tags)"
notmuch search --output=tags '*' >"$TMP/tags"
unlike "$TMP/tags" quorum "no quorum tag in it"

done_testing
