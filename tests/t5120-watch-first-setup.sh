#!/bin/sh
# A maintainer's first `quorum watch`, as contrib/watch.md tells it: the
# config snippet of the page works as written (paths aside); mail that
# notmuch indexed before `new` was in new.tags is not silently ignored
# (the pass says why and what to run); the run names a series whose
# cover letter still says "*** SUBJECT HERE ***" by its first patch.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/watch.sh"

command -v notmuch >/dev/null || skip_all "notmuch is not installed"

test_expect_success 'setup: the list mail indexed with notmuch'\''s default tags' '
	notmuch_setup &&
	sed -i "s/^tags=new;inbox$/tags=inbox;unread/" "$NOTMUCH_CONFIG" &&
	watch_repo &&
	git -C "$R" format-patch -q --cover-letter --thread=shallow --to="$LIST" \
		-o "$TMP/s" main..topic &&
	n=0 &&
	for f in "$TMP"/s/*.patch; do
		n=$((n + 1)) && tail -n +2 "$f" >"$MAIL/new/m$n" || break
	done &&
	notmuch new --quiet &&
	test "$(notmuch count tag:new)" = 0
'

test_expect_success 'the config snippet of contrib/watch.md, as written' '
	sed -n "/^In .~\/.config\/quorum\/config./,/^Every key/p" "$TOP/contrib/watch.md" |
		sed -n "/^    \[notmuch\]/,/^            from = /p" | sed "s/^    //" |
		sed -e "s|~/mail|$MAIL|" -e "s|~/src/project|$R|" >"$QUORUM_CONFIG" &&
	test_grep "address = $LIST" "$QUORUM_CONFIG" &&
	printf "[deliver]\n\toutbox = %s\n" "$OUTBOX" >>"$QUORUM_CONFIG" &&
	watch &&
	cat "$TMP/err" &&
	test "$rc" = 0
'

test_expect_success 'mail the query cannot see: the pass says so, with the command to run' '
	test_grep "^watch: 0 reviewed" "$TMP/out" &&
	test_grep "warning: list devel: none of the 4 messages to $LIST matches the query" "$TMP/err" &&
	test_grep "notmuch tag \+new -- to:$LIST" "$TMP/err"
'

test_expect_success 'tagged as the warning says: reviewed, named by its first patch' '
	notmuch tag +new -- "to:$LIST" &&
	watch &&
	test "$rc" = 0 &&
	test_grep "^devel: reviewed \"main: add first_id\(\)\": findings" "$TMP/out" &&
	test_grep -v "SUBJECT HERE" "$TMP/out" &&
	test "$(outbox_count)" = 1
'

test_expect_success 'once quorum has seen the list, no more warning' '
	watch &&
	test ! -s "$TMP/err"
'

test_done
