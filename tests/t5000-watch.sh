#!/bin/sh
# quorum watch --once over a real maildir indexed by a real notmuch:
# exactly one threaded reply per complete series, nothing for other lists,
# for replies, for auto-replies or for quorum's own mail; incomplete
# series wait, then are reviewed with the gap stated.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/watch.sh"

command -v notmuch >/dev/null || skip_all "notmuch is not installed"

notmuch_setup '[user]' 'name=Maintainer' 'primary_email=maint@example.org'
watch_repo
git -C "$R" checkout -q topic
watch_config '[list "devel"]' '	wait = 10m' '[watch]' '	domain = quorum.example.net'

# deliver DIR: put each format-patch file of DIR into the maildir, with
# Message-IDs made unique per DIR (format-patch repeats them within a second).
n=0
deliver() {
	tag=$(basename "$1")
	for f in "$1"/*.patch; do
		n=$((n + 1))
		sed -i "/^\(Message-I[Dd]\|In-Reply-To\|References\):/s/\.git\./.git.$tag./g" "$f"
		tail -n +2 "$f" >"$MAIL/new/msg-$n"
	done
}

# 1. A complete 3-patch series with a cover letter, to the opted-in list.
git -C "$R" format-patch -q --cover-letter --thread=shallow --to="$LIST" \
	-o "$TMP/s1" base
sed -i 's/\*\*\* SUBJECT HERE \*\*\*/main: item helpers/' "$TMP"/s1/0000-*
deliver "$TMP/s1"
notmuch new --quiet
watch
is "$rc" 0 "watch --once exits 0"
is "$(outbox_count)" 1 "a complete 3-patch series gets exactly one reply"
like "$TMP/out" 'devel: reviewed "\[PATCH 0/3\] main: item helpers": findings' \
	"the run says what it reviewed"
R1=$(ls "$OUTBOX"/new/* | head -1)
[ -n "${KEEP:-}" ] && cp "$R1" "$KEEP"
cover_id=$(sed -n 's/^Message-I[Dd]: <\(.*\)>$/\1/p' "$TMP"/s1/0000-* | head -1)
like "$R1" '^Subject: Re: \[PATCH 0/3\] main: item helpers$' "Subject: Re: <cover subject>"
like "$R1" "^In-Reply-To: <$cover_id>\$" "In-Reply-To the cover letter"
like "$R1" "^References: <$cover_id>\$" "References the cover letter"
like "$R1" '^To: A U Thor <author@example.org>$' "To: the author (reply-to default author,list)"
like "$R1" "^Cc: $LIST\$" "Cc: the list"
like "$R1" '^Message-I[Dd]: <quorum\.[0-9a-f]+\.review@quorum\.example\.net>$' \
	"Message-ID of quorum's own domain"
like "$R1" '^Auto-Submitted: auto-generated$' "Auto-Submitted: auto-generated"
like "$R1" '^X-Quorum-Version: [0-9]' "X-Quorum-Version"
like "$R1" '^X-Quorum-Voters: .*rules' "X-Quorum-Voters names the voters"
base=$(git -C "$R" rev-parse base)
like "$R1" "^X-Quorum-Base: $base\$" "X-Quorum-Base is the list's branch"
like "$R1" '^X-Quorum-Prompt: none$' "X-Quorum-Prompt: none without LLM voters"
like "$R1" '^X-Quorum-Cost: 0\.0000 USD$' "X-Quorum-Cost"
like "$R1" '^quorum found 1 potential issue in 3/3; 1 of [0-9]+ voters agree on the' \
	"one-line summary names the patch and the tally"
like "$R1" '> \+.*it = malloc\(sizeof\(\*it\)\);' "the finding quotes the diff line"
like "$R1" 'main\.c:[0-9-]+ in item_new\(\), patch 3/3, null-deref' "file, line, function, patch"
like "$R1" 'severity [a-z]+; votes: 1 of [0-9]+ \(rules\)' "severity and voters"
like "$R1" '^cost: \$0\.0000 \(offline voters only\)' "footer with cost"
like "$R1" "'#quorum mute'" "footer says how to mute or ask for a rerun"
awk 'length($0) > 78 { bad = 1 } END { exit bad }' "$R1"
ok $? "every line of the reply fits 78 columns"

# Threading, as notmuch sees it once the outbox is indexed.
notmuch new --quiet
reply_id=$(sed -n 's/^Message-I[Dd]: <\(.*\)>$/\1/p' "$R1")
t_reply=$(notmuch search --output=threads "id:$reply_id")
t_cover=$(notmuch search --output=threads "id:$cover_id")
ok $([ -n "$t_reply" ] && [ "$t_reply" = "$t_cover" ]; echo $?) \
	"notmuch threads the reply under the series"
is "$(notmuch count "tag:quorum/reviewed")" 4 "cover and 3 patches tagged quorum/reviewed"
is "$(notmuch count "id:$cover_id and tag:new and tag:inbox")" 1 \
	"the user's own tags are untouched"

# 2. A second run (quorum's own reply is now indexed too) sends nothing.
watch
is "$(outbox_count)" 1 "a second run sends nothing"
like "$TMP/out" '0 reviewed' "the second run reviews nothing"
is "$(notmuch count "id:$reply_id and tag:quorum/skipped")" 1 \
	"quorum's own reply is seen and skipped, not reviewed"

# 3. A reply from a person in the thread is not reviewed.
p1_id=$(sed -n 's/^Message-I[Dd]: <\(.*\)>$/\1/p' "$TMP"/s1/0001-* | head -1)
cat >"$MAIL/new/human-reply" <<EOM
From: Rev Iewer <rev@example.org>
To: $LIST
Subject: Re: [PATCH 1/3] main: add first_id()
Message-ID: <human-1@example.org>
In-Reply-To: <$p1_id>
References: <$cover_id> <$p1_id>
Date: Tue, 14 Nov 2023 22:20:00 +0000

> +int first_id(struct item *items) { return items[0].id; }

What if items is empty?
EOM
notmuch new --quiet
watch
is "$(outbox_count)" 1 "a reply from a person gets no review"
is "$(notmuch count "id:human-1@example.org and tag:quorum/skipped")" 1 \
	"the person's reply is tagged quorum/skipped"

# 4. A series on a list that did not opt in gets nothing.
git -C "$R" format-patch -q --thread=shallow --to=other@lists.example.org \
	--subject-prefix="PATCH other" -o "$TMP/s2" -1 HEAD
deliver "$TMP/s2"
notmuch new --quiet
watch
is "$(outbox_count)" 1 "a list without a section gets nothing"
is "$(notmuch count "tag:quorum/seen and to:other@lists.example.org")" 0 \
	"mail of other lists is not even tagged"

# 5. Auto-replies are never reviewed, even with a diff in them.
{
	echo "Auto-Submitted: auto-replied"
	tail -n +2 "$TMP"/s2/*.patch | sed "s/other@lists.example.org/$LIST/;s/^Message-I[Dd]: <\(.*\)>/Message-ID: <auto-\1>/"
} >"$MAIL/new/auto"
notmuch new --quiet
watch
is "$(outbox_count)" 1 "an auto-reply carrying a diff is not reviewed"
is "$(notmuch count "tag:quorum/skipped and from:author@example.org and not tag:quorum/reviewed")" 1 \
	"the auto-reply is tagged quorum/skipped"

# 6. A half-arrived series waits; after the wait it is reviewed, gap stated.
git -C "$R" format-patch -q --cover-letter --thread=shallow --to="$LIST" \
	--subject-prefix="PATCH v2" -o "$TMP/s3" base
sed -i 's/\*\*\* SUBJECT HERE \*\*\*/main: item helpers again/' "$TMP"/s3/0000-*
rm "$TMP"/s3/0002-*
deliver "$TMP/s3"
notmuch new --quiet
now=$(date +%s)
QUORUM_NOW=$now watch
is "$(outbox_count)" 1 "an incomplete series waits"
like "$TMP/out" 'waiting for 1 missing patch of "\[PATCH v2 0/3\]' "the run says it waits"
QUORUM_NOW=$((now + 300)) watch
is "$(outbox_count)" 1 "it still waits before the wait is over"
QUORUM_NOW=$((now + 601)) watch
is "$(outbox_count)" 2 "after the wait the incomplete series is reviewed"
R3=$(grep -l 'Subject: Re: \[PATCH v2 0/3\]' "$OUTBOX"/new/*)
like "$R3" 'incomplete: patch 2/3 did not arrive; reviewed the 2 that did' \
	"the reply states the gap"
QUORUM_NOW=$((now + 900)) watch
is "$(outbox_count)" 2 "and it is answered only once"

# 7. Hostile subjects cannot add headers to the reply.
{
	printf 'From: Mal <mal@example.org>\nTo: %s\n' "$LIST"
	printf 'Subject: =?utf-8?q?[PATCH]_x=0D=0ABcc:_victim@example.org?=\n'
	printf 'Message-ID: <evil-1@example.org>\nDate: Tue, 14 Nov 2023 22:20:00 +0000\n\n'
	printf 'x\n---\n'
	git -C "$R" show --format= HEAD
} >"$MAIL/new/evil"
notmuch new --quiet
QUORUM_NOW=$((now + 900)) watch
is "$(outbox_count)" 3 "a patch with a hostile subject is reviewed"
R4=$(grep -l 'evil-1@example.org' "$OUTBOX"/new/*)
unlike "$R4" '^Bcc:' "CR/LF in the subject adds no header"

done_testing
