#!/bin/sh
# mode = digest: reviews go to the outbox only, and once a day one mail
# to the maintainers lists the series reviewed since the last digest.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/watch.sh"

command -v notmuch >/dev/null || skip_all "notmuch is not installed"
watch_setup
mkdir -p "$TMP/sent" "$TMP/bin"
cat >"$TMP/bin/fake-sendmail" <<EOF2
#!/bin/sh
cat >"$TMP/sent/mail-\$(ls "$TMP/sent" | wc -l)"
EOF2
chmod +x "$TMP/bin/fake-sendmail"
watch_config '[list "devel"]' '	mode = digest' '	maintainers = maint@example.org' \
	'[deliver]' '	method = sendmail' "	sendmail = $TMP/bin/fake-sendmail"
now=$(date +%s)

git -C "$R" format-patch -q --cover-letter --thread=shallow --to="$LIST" \
	-o "$TMP/a" base..topic
post "$TMP/a"
git -C "$R" format-patch -q --thread=shallow --to="$LIST" -o "$TMP/b" -1 topic~2
post "$TMP/b"
QUORUM_NOW=$now watch
is "$(outbox_count)" 2 "each series' review goes to the outbox"
is "$(ls "$TMP/sent" | wc -l | tr -d ' ')" 0 "nothing is sent to the list"
QUORUM_NOW=$((now + 3600)) watch
is "$(ls "$TMP/sent" | wc -l | tr -d ' ')" 0 "no digest before a day has passed"
QUORUM_NOW=$((now + 86400)) watch
is "$(ls "$TMP/sent" | wc -l | tr -d ' ')" 1 "one digest after a day"
D=$TMP/sent/mail-0
like "$D" '^To: maint@example.org$' "to the maintainers"
like "$D" '^Subject: quorum digest for devel: 2 series reviewed' "saying how many series"
like "$D" '^- "\[PATCH 0/3\] series a" from A U Thor <author@example.org>: findings' \
	"each series with its author and outcome"
like "$D" '^Auto-Submitted: auto-generated$' "marked auto-generated"
awk 'length($0) > 78 { bad = 1 } END { exit bad }' "$D"
ok $? "every line fits 78 columns"
QUORUM_NOW=$((now + 86500)) watch
is "$(ls "$TMP/sent" | wc -l | tr -d ' ')" 1 "nothing new: no second digest"

git -C "$R" format-patch -q --thread=shallow --to="$LIST" -o "$TMP/c" -1 topic~1
post "$TMP/c"
QUORUM_NOW=$((now + 90000)) watch
QUORUM_NOW=$((now + 86400 + 86400)) watch
is "$(ls "$TMP/sent" | wc -l | tr -d ' ')" 2 "the next day's digest"
like "$TMP/sent/mail-1" 'digest for devel: 1 series reviewed' "lists only what is new"

done_testing
