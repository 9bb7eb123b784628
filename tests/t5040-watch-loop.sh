#!/bin/sh
# quorum watch without --once: polls, wakes on SIGUSR1 (the notmuch
# post-new hook), leaves the notmuch database free between polls, and
# ends cleanly on SIGTERM.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/watch.sh"

command -v notmuch >/dev/null || skip_all "notmuch is not installed"
watch_setup
PIDFILE=$XDG_STATE_HOME/quorum/watch.pid

# wait_for N: until the outbox holds N mails, at most 10 s.
wait_for() {
	i=0
	while [ "$(outbox_count)" -lt "$1" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ "$(outbox_count)" -eq "$1" ]
}

# 1. Polling every second.
"$QUORUM" watch --interval 1 >"$TMP/d.out" 2>"$TMP/d.err" &
pid=$!
git -C "$R" format-patch -q --thread=shallow --to="$LIST" -o "$TMP/a" -1 topic
post "$TMP/a"
wait_for 1
ok $? "the loop answers a series posted while it runs"
is "$(cat "$PIDFILE" 2>/dev/null)" "$pid" "watch.pid holds the daemon's pid"
kill -TERM $pid
wait $pid
is "$?" 0 "SIGTERM ends the loop with status 0"
like "$TMP/d.err" 'watch stopped on a signal' "and it says so"
ok $([ ! -e "$PIDFILE" ]; echo $?) "watch.pid is removed"

# 2. A long interval: SIGUSR1 wakes it at once.
"$QUORUM" watch --interval 3600 >"$TMP/d.out" 2>"$TMP/d.err" &
pid=$!
sleep 0.5
git -C "$R" format-patch -q --thread=shallow --to="$LIST" -o "$TMP/b" -1 topic~1
post "$TMP/b"
ok $? "notmuch new runs while the daemon waits"
kill -USR1 "$(cat "$PIDFILE")"
wait_for 2
ok $? "SIGUSR1 makes it look at new mail at once"
kill -TERM $pid
wait $pid
is "$?" 0 "SIGTERM during the wait ends it cleanly"
is "$(outbox_count)" 2 "one reply per series, no more"

# 3. The contrib post-new hook: with no daemon running, notmuch new runs
#    one pass itself.
mkdir -p "$TMP/bin" "$MAIL/.notmuch/hooks"
ln -s "$QUORUM" "$TMP/bin/quorum"
cp "$TOP/contrib/notmuch-post-new" "$MAIL/.notmuch/hooks/post-new"
git -C "$R" format-patch -q --thread=shallow --to="$LIST" -o "$TMP/c" -1 topic~2
PATH=$TMP/bin:$PATH post "$TMP/c" >"$TMP/hook.out"
is "$(outbox_count)" 3 "the post-new hook runs quorum watch --once after notmuch new"

# 4. With a daemon running, the hook wakes it instead.
"$QUORUM" watch --interval 3600 >"$TMP/d.out" 2>"$TMP/d.err" &
pid=$!
i=0
while [ ! -s "$PIDFILE" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
sleep 0.3
cat >"$MAIL/new/single" <<EOM
From: A U Thor <author@example.org>
To: $LIST
Subject: [PATCH] main: one more
Message-ID: <single-1@example.org>
Date: Tue, 14 Nov 2023 22:20:00 +0000

main: one more
---
$(git -C "$R" diff base topic~2)
EOM
PATH=$TMP/bin:$PATH notmuch new --quiet >"$TMP/hook.out"
wait_for 4
ok $? "the post-new hook wakes the running daemon"
unlike "$TMP/hook.out" 'reviewed' "and does not run a pass of its own"
kill -TERM $pid
wait $pid

done_testing
