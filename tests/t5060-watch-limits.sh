#!/bin/sh
# Rate limits per list and per author hold series back until the window
# passes (reviewed later, never dropped); an embargoed list's replies go
# to its maintainers only.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/watch.sh"

command -v notmuch >/dev/null || skip_all "notmuch is not installed"
watch_setup
now=$(date +%s)


# 1. One reply an hour on the list: the second series waits an hour.
watch_config '[list "devel"]' '	max-per-hour = 1'
mail_single a1 'A <a@example.org>' 'main: one'
mail_single b1 'B <b@example.org>' 'main: two'
notmuch new --quiet
QUORUM_NOW=$now watch
is "$(outbox_count)" 1 "max-per-hour = 1: one reply in the hour"
like "$TMP/out" 'rate limit of 1 replies an hour reached; "\[PATCH\] main: (one|two)" waits' \
	"the run says which series waits"
QUORUM_NOW=$((now + 1800)) watch
is "$(outbox_count)" 1 "still held within the hour"
QUORUM_NOW=$((now + 3601)) watch
is "$(outbox_count)" 2 "reviewed once the hour has passed"

# 2. One reply a day per author.
watch_config '[list "devel"]' '	max-per-author-per-day = 1'
mail_single a2 'A <a@example.org>' 'main: three'
mail_single c1 'C <c@example.org>' 'main: four'
notmuch new --quiet
QUORUM_NOW=$((now + 3602)) watch
is "$(outbox_count)" 3 "another author is answered"
like "$TMP/out" 'rate limit of 1 replies a day to a@example.org reached' \
	"the author over the limit waits"
# A's last reply may be a1's at now + 3601 (section 1 answers a1 or b1
# first, in either order): a day after that, a2 is answered.
QUORUM_NOW=$((now + 86400 + 3602)) watch
is "$(outbox_count)" 4 "and is answered the next day"

# 3. Embargo: maintainers only.
watch_config '[list "devel"]' '	embargo = true' '	maintainers = sec@example.org'
mail_single e1 'A <a@example.org>' 'main: quiet fix'
notmuch new --quiet
QUORUM_NOW=$((now + 90000)) watch
E=$(grep -l 'main: quiet fix' "$OUTBOX"/new/*)
like "$E" '^To: sec@example.org$' "an embargoed list's reply goes to its maintainers"
unlike "$E" "^(To|Cc):.*($LIST|a@example.org)" "and neither to the list nor to the author"

done_testing
