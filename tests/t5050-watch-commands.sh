#!/bin/sh
# Email commands in the thread: #quorum rerun, explain N and mute, taken
# only from the series' author or a maintainer, each acted on once;
# quoted commands and strangers' commands do nothing.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/watch.sh"

command -v notmuch >/dev/null || skip_all "notmuch is not installed"
watch_setup
watch_config '[list "devel"]' '	maintainers = maint@example.org'
git -C "$R" format-patch -q --cover-letter --thread=shallow --to="$LIST" \
	-o "$TMP/s" base..topic
post "$TMP/s"
watch
is "$(outbox_count)" 1 "the series is reviewed"
cover=$(sed -n 's/^Message-I[Dd]: <\(.*\)>$/\1/p' "$MAIL"/new/msg-s-1)
first=$(sed -n 's/^Message-I[Dd]: <\(.*\)>$/\1/p' "$OUTBOX"/new/*)

# command FROM ID TEXT: a reply to quorum's reply in the thread.
command() {
	cat >"$MAIL/new/$2" <<EOM
From: Some One <$1>
To: $LIST
Subject: Re: [PATCH 0/3] series s
Message-ID: <$2@example.org>
In-Reply-To: <$first>
References: <$cover> <$first>
Date: Tue, 14 Nov 2023 22:30:00 +0000

$3
EOM
	notmuch new --quiet
}

# 1. A stranger cannot command quorum.
command stranger@example.org c1 '#quorum rerun'
watch
is "$(outbox_count)" 1 "a stranger's #quorum rerun does nothing"
like "$TMP/out" 'ignored #quorum rerun from stranger@example.org: not the author or a maintainer' \
	"and the run says why"

# 2. A quoted command is not a command.
command author@example.org c2 "> '#quorum rerun' to review it again
> #quorum rerun

Thanks, fixed in v2."
watch
is "$(outbox_count)" 1 "a quoted command does nothing"

# 3. The author asks for a rerun: one new reply, with a new Message-ID.
command author@example.org c3 'Fixed the base, please look again.

#quorum rerun'
watch
is "$(outbox_count)" 2 "#quorum rerun from the author reviews again"
like "$TMP/out" '#quorum rerun from author@example.org' "the run says so"
is "$(grep -h '^Message-I[Dd]:' "$OUTBOX"/new/* | sort -u | wc -l | tr -d ' ')" 2 \
	"the rerun's reply has its own Message-ID"
watch
is "$(outbox_count)" 2 "the same command is not acted on twice"

# 4. A maintainer asks for an explanation of finding 1.
command maint@example.org c4 '#quorum explain 1'
watch
is "$(outbox_count)" 3 "#quorum explain 1 from a maintainer gets a reply"
E=$(grep -l 'finding 1 in detail' "$OUTBOX"/new/*)
[ -n "${KEEP:-}" ] && cp "$E" "$KEEP"
like "$E" 'in item_new\(\), patch 3/3' "it is about the finding"
like "$E" 'No similar past fix was found' "and says what history knows"
like "$E" '^Cc: .*maint@example.org' "maintainers are on Cc"
awk 'length($0) > 78 { bad = 1 } END { exit bad }' "$E"
ok $? "every line of the explanation fits 78 columns"
command maint@example.org c5 '#quorum explain 7'
watch
like "$(grep -l 'no finding 7' "$OUTBOX"/new/*)" 'there is no finding 7 in this review; it has 1' \
	"explaining a finding that does not exist says so"

# 5. The author mutes quorum: their next series is not reviewed.
command author@example.org c6 '#quorum mute'
watch
n=$(outbox_count)
git -C "$R" format-patch -q --thread=shallow --to="$LIST" \
	--subject-prefix="PATCH v2" -o "$TMP/v2" -1 topic
post "$TMP/v2"
watch
is "$(outbox_count)" "$n" "after #quorum mute the author's mail is not reviewed"
like "$TMP/out" 'skipped muted series' "the run says it is muted"

done_testing
