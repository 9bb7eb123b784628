#!/bin/sh
# Mail commands are answered where they were asked: an explanation goes
# in reply to the command mail; a finding that does not exist is said to
# the sender only, never the list; #quorum mute is acknowledged and
# #quorum unmute undoes it; a rerun of a muted author's series says why
# it was not done.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/watch.sh"

command -v notmuch >/dev/null || skip_all "notmuch is not installed"

# command FROM ID TEXT: a reply to quorum's review in the thread.
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

# reply_to ID: the outbox mail whose In-Reply-To is <ID>.
reply_to() {
	grep -l "^In-Reply-To: <$1>" "$OUTBOX"/new/* 2>/dev/null
}

test_expect_success 'setup: a reviewed series on a list with a maintainer' '
	watch_setup &&
	watch_config "[list \"devel\"]" "	maintainers = maint@example.org" \
		"	reply-to = author,list" &&
	git -C "$R" format-patch -q --cover-letter --thread=shallow --to="$LIST" \
		-o "$TMP/s" base..topic &&
	post "$TMP/s" &&
	watch &&
	test "$(outbox_count)" = 1 &&
	cover=$(sed -n "s/^Message-I[Dd]: <\(.*\)>$/\1/p" "$MAIL"/new/msg-s-1) &&
	first=$(sed -n "s/^Message-I[Dd]: <\(.*\)>$/\1/p" "$OUTBOX"/new/*)
'

test_expect_success '#quorum explain 1: the answer is in reply to the command mail' '
	command maint@example.org ex1 "#quorum explain 1" &&
	watch &&
	E=$(reply_to ex1@example.org) &&
	test -n "$E" &&
	test_grep "finding 1 in detail" "$E" &&
	sed -n "/^References:/,/^[A-Z]/p" "$E" | tr -d "\n\t" >"$TMP/refs" &&
	test_grep "<$first> <ex1@example.org>" "$TMP/refs" &&
	test_grep "^Cc: .*$LIST" "$E"
'

test_expect_success '#quorum explain 7 (no such finding): to the sender only, never the list' '
	command maint@example.org ex7 "#quorum explain 7" &&
	watch &&
	E=$(reply_to ex7@example.org) &&
	test -n "$E" &&
	test_grep "there is no finding 7 in this review" "$E" &&
	test_grep "^To: .*<maint@example.org>$" "$E" &&
	test_grep -v "^(To|Cc):.*$LIST" "$E" &&
	test_grep -v "^(To|Cc):.*author@example.org" "$E"
'

# flat FILE: a mail's body on one line (replies wrap at 78 columns).
flat() { sed '1,/^$/d' "$1" | tr '\n' ' ' | tr -s ' '; }

test_expect_success '#quorum explain 4294967297 (past a 32-bit int): no such finding, not finding 1' '
	command maint@example.org ex32 "#quorum explain 4294967297" &&
	watch &&
	E=$(reply_to ex32@example.org) &&
	test -n "$E" &&
	flat "$E" >"$TMP/body" &&
	test_grep "there is no finding 4294967297 in this review; it has 1\." "$TMP/body" &&
	test_grep -v "in detail" "$E" &&
	test_grep "^To: .*<maint@example.org>$" "$E" &&
	test_grep -v "^(To|Cc):.*$LIST" "$E"
'

test_expect_success '#quorum explain -1, and explain with no number: a note to the sender, not silence' '
	command maint@example.org exneg "#quorum explain -1" &&
	command maint@example.org exnone "#quorum explain" &&
	watch &&
	E=$(reply_to exneg@example.org) &&
	test -n "$E" &&
	flat "$E" >"$TMP/body" &&
	test_grep "quorum: .-1. is not the number of a finding; .#quorum explain N. takes one from 1 to the findings of this review, which has 1\." "$TMP/body" &&
	test_grep "^To: .*<maint@example.org>$" "$E" &&
	test_grep -v "^(To|Cc):.*$LIST" "$E" &&
	test_grep -v "in detail" "$E" &&
	E=$(reply_to exnone@example.org) &&
	test -n "$E" &&
	flat "$E" >"$TMP/body" &&
	test_grep "needs the number of a finding, as in .#quorum explain 1.; this review has 1\." "$TMP/body" &&
	test_grep -v "^(To|Cc):.*$LIST" "$E"
'

test_expect_success '#quorum explain 0001 is finding 1; 1x and a control character in N are not numbers' '
	command maint@example.org ex0001 "#quorum explain 0001" &&
	command maint@example.org ex1x "#quorum explain 1x" &&
	command maint@example.org exctl "$(printf "#quorum explain 1\0331")" &&
	watch &&
	test_grep "finding 1 in detail" "$(reply_to ex0001@example.org)" &&
	flat "$(reply_to ex1x@example.org)" >"$TMP/body" &&
	test_grep "quorum: .1x. is not the number of a finding" "$TMP/body" &&
	flat "$(reply_to exctl@example.org)" >"$TMP/body" &&
	test_grep "quorum: .1\?1. is not the number of a finding" "$TMP/body" &&
	test_grep "no finding .1x. to explain" "$TMP/out"
'

test_expect_success '#quorum mute is acknowledged, to the one who asked' '
	command author@example.org mu1 "#quorum mute" &&
	watch &&
	test_grep "#quorum mute from author@example.org" "$TMP/out" &&
	A=$(reply_to mu1@example.org) &&
	test -n "$A" &&
	test_grep "will not review mail from author@example.org on list devel" "$A" &&
	test_grep "#quorum unmute" "$A" &&
	test_grep "^To: .*author@example.org" "$A" &&
	test_grep -v "^(To|Cc):.*$LIST" "$A"
'

test_expect_success 'a maintainer'\''s rerun of the muted author'\''s series says why it is skipped' '
	n=$(outbox_count) &&
	command maint@example.org rr1 "#quorum rerun" &&
	watch &&
	test_grep "#quorum rerun from maint@example.org: skipped, the author author@example.org is muted" "$TMP/out" &&
	test "$(outbox_count)" = $((n + 1)) &&
	N=$(reply_to rr1@example.org) &&
	test_grep "is muted on list devel" "$N" &&
	test_grep "^To: .*<maint@example.org>$" "$N" &&
	test_grep -v "in detail|found" "$N"
'

test_expect_success '#quorum unmute undoes it; then a rerun reviews again' '
	command maint@example.org um1 "#quorum unmute" &&
	watch &&
	U=$(reply_to um1@example.org) &&
	test_grep "reviews mail from author@example.org on list devel again" "$U" &&
	n=$(outbox_count) &&
	command maint@example.org rr2 "#quorum rerun" &&
	watch &&
	test "$(outbox_count)" = $((n + 1)) &&
	test_grep "^devel: reviewed" "$TMP/out"
'

test_expect_success 'each command is answered once' '
	n=$(outbox_count) &&
	watch &&
	test "$(outbox_count)" = "$n"
'

test_done
