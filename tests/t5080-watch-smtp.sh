#!/bin/sh
# deliver.method = smtp (libcurl) against a real SMTP server on
# 127.0.0.1: the envelope holds every To and Cc, the message is the
# reply; STARTTLS is required unless the config says otherwise.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/watch.sh"

command -v notmuch >/dev/null || skip_all "notmuch is not installed"
command -v python3 >/dev/null || skip_all "python3 is not installed"
watch_setup
python3 "$TOP/tests/lib/fake-smtp.py" --port-file "$TMP/port" \
	--record "$TMP/smtp" --timeout 60 &
SMTP_PID=$!
trap 'kill $SMTP_PID 2>/dev/null; rm -rf "$TMP"' EXIT
i=0
while [ ! -s "$TMP/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
PORT=$(cat "$TMP/port")
now=$(date +%s)

# 1. STARTTLS is required by default: a server without it gets nothing.
watch_config '[list "devel"]' '	mode = reply' '	maintainers = maint@example.org' \
	'[deliver]' '	method = smtp' "	smtp-url = smtp://127.0.0.1:$PORT" \
	'[watch]' '	from = Quorum Bot <bot@quorum.example.org>'
git -C "$R" format-patch -q --cover-letter --thread=shallow --to="$LIST" \
	-o "$TMP/a" base..topic
post "$TMP/a"
QUORUM_NOW=$now watch
is "$(ls "$TMP/smtp" 2>/dev/null | wc -l | tr -d ' ')" 0 \
	"without STARTTLS nothing is sent in the clear"
like "$TMP/err" 'SMTP to smtp://127.0.0.1:[0-9]+ failed: .*retrying in 60s' \
	"the failure is reported and retried later"

# 2. starttls = false (a local relay): the retry goes out.
watch_config '[list "devel"]' '	mode = reply' '	maintainers = maint@example.org' \
	'[deliver]' '	method = smtp' "	smtp-url = smtp://127.0.0.1:$PORT" \
	'	starttls = false' \
	'[watch]' '	from = Quorum Bot <bot@quorum.example.org>'
QUORUM_NOW=$((now + 61)) watch
is "$(ls "$TMP/smtp"/*.eml 2>/dev/null | wc -l | tr -d ' ')" 1 "the retry is delivered over SMTP"
like "$TMP/smtp/0.env" '^MAIL FROM:<bot@quorum.example.org>' "envelope sender is the from address"
like "$TMP/smtp/0.env" '^RCPT TO:<author@example.org>$' "envelope: the author"
like "$TMP/smtp/0.env" "^RCPT TO:<$LIST>\$" "envelope: the list"
like "$TMP/smtp/0.env" '^RCPT TO:<maint@example.org>$' "envelope: the maintainers"
like "$TMP/smtp/0.eml" '^In-Reply-To: <cover\.' "the message is the threaded reply"
like "$TMP/smtp/0.eml" '^X-Quorum-Version: ' "with its headers"
QUORUM_NOW=$((now + 200)) watch
is "$(ls "$TMP/smtp"/*.eml | wc -l | tr -d ' ')" 1 "and is sent once"

done_testing
