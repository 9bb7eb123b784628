#!/bin/sh
# quorum watch around the edges: delivery by a sendmail command (argv, no
# shell), retries with backoff and a reply held in the outbox after too
# many failures, mute lists, pull requests, RESENDs answered "unchanged"
# at most once, cover letters alone, and config mistakes.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/watch.sh"

command -v notmuch >/dev/null || skip_all "notmuch is not installed"
watch_setup

# A fake sendmail: records its argv and the message; fails while
# $TMP/fail exists.
fake_sendmail

# 1. mode = reply with a sendmail command: argv split, never a shell.
watch_config '[list "devel"]' '	mode = reply' \
	'[deliver]' '	method = sendmail' \
	"	sendmail = \"$TMP/bin/fake-sendmail -i 'two words' ;touch $TMP/pwned\""
git -C "$R" format-patch -q --cover-letter --thread=shallow --to="$LIST" \
	-o "$TMP/a" base..topic
post "$TMP/a"
watch
is "$rc" 0 "watch in reply mode exits 0"
is "$(sent_count)" 1 "the reply went to the sendmail command"
is "$(outbox_count)" 0 "and not to the outbox"
is "$(sed -n 2p "$TMP/sent/argv-0")" "two words" "quoted words stay one argument"
is "$(sed -n 3p "$TMP/sent/argv-0")" ";touch" "shell syntax is passed as a word"
ok $([ ! -e "$TMP/pwned" ]; echo $?) "no shell ran the command"
like "$TMP/sent/mail-0" '^In-Reply-To: <cover\.' "the sent mail is the threaded reply"
watch
is "$(sent_count)" 1 "a second run sends nothing"

# 2. Failures are retried with backoff; after max-attempts the reply is
#    held in the outbox with the reason.
watch_config '[list "devel"]' '	mode = reply' \
	'[deliver]' '	method = sendmail' "	sendmail = $TMP/bin/fake-sendmail" \
	'	max-attempts = 2'
touch "$TMP/fail"
git -C "$R" format-patch -q --thread=shallow --to="$LIST" -o "$TMP/b" -1 topic~1
post "$TMP/b"
now=$(date +%s)
QUORUM_NOW=$now watch
is "$(sent_count)" 1 "a failing sendmail sends nothing"
like "$TMP/err" 'not delivered \(.*exited with status 75\); retrying in 60s' \
	"the failure is reported with its reason and the retry delay"
QUORUM_NOW=$((now + 30)) watch
like "$TMP/out" '0 delivered, 0 held' "no retry before the backoff is over"
QUORUM_NOW=$((now + 61)) watch
like "$TMP/err" 'not delivered after 2 attempts .*waits in the outbox' \
	"after max-attempts the reply is held"
is "$(outbox_count)" 1 "the held reply waits in the outbox"
like "$(ls "$OUTBOX"/new/* | head -1)" '^X-Quorum-Held: .*exited with status 75' \
	"with the reason in a header"
rm "$TMP/fail"
QUORUM_NOW=$((now + 4000)) watch
is "$(sent_count)" 1 "a held reply is not sent behind the maintainer's back"

# 3. Mute: a muted sender's series is skipped, and tagged so.
watch_config '[list "devel"]' '	mute = spammer@example.com, [WIP'
cat >"$MAIL/new/muted" <<EOM
From: Spam Mer <spammer@example.com>
To: $LIST
Subject: [PATCH] main: muted change
Message-ID: <muted-1@example.com>
Date: Tue, 14 Nov 2023 22:20:00 +0000

main: muted change
---
$(git -C "$R" show --format= topic)
EOM
notmuch new --quiet
before=$(outbox_count)
watch
is "$(outbox_count)" "$before" "a muted sender gets no reply"
like "$TMP/out" 'skipped muted series' "the run says it was muted"
is "$(notmuch count id:muted-1@example.com and tag:quorum/skipped)" 1 \
	"the muted series is tagged quorum/skipped"

# 4. A pull request is never reviewed.
cat >"$MAIL/new/pull" <<EOM
From: Sub Maintainer <sub@example.org>
To: $LIST
Subject: [GIT PULL] main fixes for 6.7
Message-ID: <pull-1@example.org>
Date: Tue, 14 Nov 2023 22:20:00 +0000

The following changes since commit $(git -C "$R" rev-parse base):

  initial (2023-11-14)

are available in the Git repository at:

  https://git.example.org/main.git tags/fixes

$(git -C "$R" diff base topic)
EOM
notmuch new --quiet
watch
is "$(outbox_count)" "$before" "a pull request gets no reply"
is "$(notmuch count id:pull-1@example.org and tag:quorum/skipped)" 1 \
	"the pull request is tagged quorum/skipped"

# 5. A RESEND of a reviewed series: "unchanged since" once, then silence.
watch_config
git -C "$R" format-patch -q --cover-letter --thread=shallow --to="$LIST" \
	-o "$TMP/c" base..topic~1
post "$TMP/c"
watch
n1=$(outbox_count)
is "$n1" $((before + 1)) "a new series is reviewed"
for v in r1 r2; do
	rm -rf "$TMP/$v"
	git -C "$R" format-patch -q --cover-letter --thread=shallow --to="$LIST" \
		--subject-prefix="PATCH RESEND" -o "$TMP/$v" base..topic~1
	post "$TMP/$v"
	watch
done
is "$(outbox_count)" $((n1 + 1)) "two RESENDs get one reply between them"
U=$(grep -l '^Subject: Re: \[PATCH RESEND 0/2\]' "$OUTBOX"/new/* | head -1)
like "$U" 'unchanged since it was reviewed in' "the reply says unchanged since the earlier review"
like "$U" '<quorum\.[0-9a-f]+\.review@quorum\.invalid>' "and links it by Message-ID"
like "$TMP/out" 'unchanged, and already said so' "the second RESEND is skipped"

# 6. A cover letter whose patches never come is not reviewed.
cat >"$MAIL/new/lonely" <<EOM
From: A U Thor <author@example.org>
To: $LIST
Subject: [PATCH 0/2] main: a plan
Message-ID: <lonely-0@example.org>
Date: Tue, 14 Nov 2023 22:20:00 +0000

Patches follow, some day.
EOM
notmuch new --quiet
before=$(outbox_count)
now=$(date +%s)
QUORUM_NOW=$now watch
QUORUM_NOW=$((now + 3600)) watch
like "$TMP/out" '^watch: 0 reviewed' "a cover letter alone is not reviewed"
is "$(outbox_count)" "$before" "and gets no reply"

# 7. Config mistakes are reported, and nothing is sent.
watch_config '[list "devel"]' '	mode = loud'
watch
is "$rc" 2 "an unknown mode is a usage error"
like "$TMP/err" "list devel: mode 'loud' is not dry-run, reply or digest" "it says which"
watch_config '[list "devel"]' '	wait = soon'
watch
like "$TMP/err" "wait 'soon' is not a duration" "a bad wait is named"
watch_config '[deliver]' '	method = pigeon'
watch
like "$TMP/err" "deliver.method 'pigeon' is not outbox, sendmail or smtp" "a bad method is named"
printf '[list "x"]\n\trepo = /nonexistent\n' >"$QUORUM_CONFIG"
watch
is "$rc" 2 "no list with an address: nothing to watch"
like "$TMP/err" 'no \[list "NAME"\] section with an address' "it says so"
# 8. A repo that is not there is the config's fault: the pass exits 2,
#    nothing is sent, the series is failed (tagged so, not retried every
#    pass), and a '#quorum rerun' reviews it once the repo is back.
mv "$R" "$R.away"
mail_single norepo-1 "A U Thor <author@example.org>" "main: add f_norepo()" norepo
notmuch new --quiet
watch_config
before=$(outbox_count)
watch
is "$rc" 2 "a missing repo: the pass exits 2"
like "$TMP/err" "list devel: repo = .*: No such file or directory" "a missing repo is reported, as missing"
is "$(outbox_count)" "$before" "and nothing is sent"
is "$(notmuch count id:norepo-1@example.org and tag:quorum/failed)" 1 \
	"the series is tagged failed"
like "$TMP/out" "^watch: 0 reviewed, 0 waiting, 0 skipped, 1 failed" "and counted so"
watch
is "$rc" 2 "the next pass still exits 2"
unlike "$TMP/out" "1 failed" "but does not try the series again"
mv "$R.away" "$R"
watch
is "$rc" 0 "the repo is back: the pass exits 0"
is "$(outbox_count)" "$before" "a failed series waits for a rerun"
cat >"$MAIL/new/norepo-rerun" <<EOM
From: A U Thor <author@example.org>
To: $LIST
Subject: Re: [PATCH] main: add f_norepo()
Message-ID: <norepo-rerun@example.org>
In-Reply-To: <norepo-1@example.org>
References: <norepo-1@example.org>
Date: Tue, 14 Nov 2023 22:30:00 +0000

#quorum rerun
EOM
notmuch new --quiet
watch
is "$(outbox_count)" $((before + 1)) "'#quorum rerun' once the repo is back reviews the series"

run "$QUORUM" watch --once extra
is "$rc" 2 "watch takes no arguments"

done_testing
