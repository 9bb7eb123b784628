#!/bin/sh
# mode = digest: reviews go to the outbox only, and once a day one mail
# to the maintainers lists the series reviewed since the last digest.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/watch.sh"

command -v notmuch >/dev/null || skip_all "notmuch is not installed"

test_expect_success 'setup: a digest list, a fake sendmail, two series posted' '
	watch_setup &&
	fake_sendmail &&
	watch_config "[list \"devel\"]" "	mode = digest" \
		"	maintainers = maint@example.org" \
		"[deliver]" "	method = sendmail" \
		"	sendmail = $TMP/bin/fake-sendmail" &&
	now=$(date +%s) &&
	git -C "$R" format-patch -q --cover-letter --thread=shallow \
		--to="$LIST" -o "$TMP/a" base..topic &&
	post "$TMP/a" &&
	git -C "$R" format-patch -q --thread=shallow --to="$LIST" \
		-o "$TMP/b" -1 topic~2 &&
	post "$TMP/b"
'

test_expect_success "each series' review goes to the outbox" '
	QUORUM_NOW=$now watch &&
	test "$(outbox_count)" = 2
'
test_expect_success 'nothing is sent to the list' '
	test "$(sent_count)" = 0
'
test_expect_success 'no digest before a day has passed' '
	QUORUM_NOW=$((now + 3600)) watch &&
	test "$(sent_count)" = 0
'
test_expect_success 'one digest after a day' '
	QUORUM_NOW=$((now + 86400)) watch &&
	test "$(sent_count)" = 1 &&
	D=$TMP/sent/mail-0
'
test_expect_success 'to the maintainers' '
	test_grep "^To: maint@example.org$" "$D"
'
test_expect_success 'saying how many series' '
	test_grep "^Subject: quorum digest for devel: 2 series reviewed" "$D"
'
test_expect_success 'each series with its author and outcome' '
	test_grep "^- \"\[PATCH 0/3\] series a\" from A U Thor <author@example.org>: findings" "$D"
'
test_expect_success 'marked auto-generated' '
	test_grep "^Auto-Submitted: auto-generated$" "$D"
'
test_expect_success 'every line fits 78 columns' '
	awk "length(\$0) > 78 { bad = 1 } END { exit bad }" "$D"
'
test_expect_success 'nothing new: no second digest' '
	QUORUM_NOW=$((now + 86500)) watch &&
	test "$(sent_count)" = 1
'

test_expect_success "the next day's digest" '
	git -C "$R" format-patch -q --thread=shallow --to="$LIST" \
		-o "$TMP/c" -1 topic~1 &&
	post "$TMP/c" &&
	QUORUM_NOW=$((now + 90000)) watch &&
	QUORUM_NOW=$((now + 86400 + 86400)) watch &&
	test "$(sent_count)" = 2
'
test_expect_success 'lists only what is new' '
	test_grep "digest for devel: 1 series reviewed" "$TMP/sent/mail-1"
'

test_done
