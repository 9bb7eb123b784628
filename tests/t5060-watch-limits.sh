#!/bin/sh
# Rate limits per list and per author hold series back until the window
# passes (reviewed later, never dropped); an embargoed list's replies go
# to its maintainers only.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/watch.sh"

command -v notmuch >/dev/null || skip_all "notmuch is not installed"
watch_setup
now=$(date +%s)

# single ID FROM TITLE: a one-patch series adding its own file.
single() {
	cat >"$MAIL/new/$1" <<EOM
From: $2
To: $LIST
Subject: [PATCH] $3
Message-ID: <$1@example.org>
Date: Tue, 14 Nov 2023 22:20:00 +0000

$3
---
diff --git a/f_$1.c b/f_$1.c
new file mode 100644
--- /dev/null
+++ b/f_$1.c
@@ -0,0 +1,4 @@
+int f_$1(void)
+{
+	return 1;
+}
EOM
}

# 1. One reply an hour on the list: the second series waits an hour.
watch_config '[list "devel"]' '	max-per-hour = 1'
single a1 'A <a@example.org>' 'main: one'
single b1 'B <b@example.org>' 'main: two'
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
single a2 'A <a@example.org>' 'main: three'
single c1 'C <c@example.org>' 'main: four'
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
single e1 'A <a@example.org>' 'main: quiet fix'
notmuch new --quiet
QUORUM_NOW=$((now + 90000)) watch
E=$(grep -l 'main: quiet fix' "$OUTBOX"/new/*)
like "$E" '^To: sec@example.org$' "an embargoed list's reply goes to its maintainers"
unlike "$E" "^(To|Cc):.*($LIST|a@example.org)" "and neither to the list nor to the author"

done_testing
