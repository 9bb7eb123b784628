#!/bin/sh
# classify --format email: the AUTOSEL mail is composed by the path of the
# review replies (GMime), so the mail classified adds no recipient and no
# header: a From display name with a comma, an address or group syntax
# is one quoted name of one Cc; a Message-ID with quotes or backslashes
# is not put in In-Reply-To; a subject with C1 and bidi controls comes out
# visible, RFC 2047 encoded where it is not ASCII. A real parser (python3's
# email package, policy=default) reads what quorum wrote.
. "$(dirname "$0")/lib.sh"

export QUORUM_CONFIG=$TMP/config
: >"$QUORUM_CONFIG"

test_expect_success 'setup: a repo and a patch mail' '
	make_repo "$TMP/repo" &&
	git -C "$TMP/repo" tag base &&
	commit_item_new "$TMP/repo" &&
	git -C "$TMP/repo" format-patch -q -1 --stdout >"$TMP/p.mbox"
'

# hostile FROM SUBJECT MSGID: $TMP/h.mbox, the patch mail with these
# headers as raw bytes (printf escapes allowed)
hostile() {
	python3 - "$TMP/p.mbox" "$TMP/h.mbox" "$1" "$2" "$3" <<-\EOP
	import sys
	src = open(sys.argv[1], "rb").read()
	head, body = src.split(b"\n\n", 1)
	esc = lambda s: s.encode().decode("unicode_escape").encode("latin-1")
	out = []
	for line in head.split(b"\n"):
	    if line.startswith(b"From: "):
	        line = b"From: " + esc(sys.argv[3])
	    elif line.startswith(b"Subject: "):
	        line = b"Subject: " + esc(sys.argv[4])
	    out.append(line)
	out.append(b"Message-ID: " + esc(sys.argv[5]))
	open(sys.argv[2], "wb").write(b"\n".join(out) + b"\n\n" + body)
	EOP
}

# mail_check WANT...: read the one mail of $TMP/out (an mbox) with
# python's email package; each WANT is "HEADER=VALUE" (the decoded
# value, "" for absent) or "HEADER#N" (N addresses in it)
mail_check() {
	python3 - "$TMP/out" "$@" <<-\EOP
	import mailbox, sys
	from email import policy
	from email.parser import BytesParser
	raw = open(sys.argv[1], "rb").read()
	msgs = [m for m in mailbox.mbox(sys.argv[1])]
	assert len(msgs) == 1, "%d mails" % len(msgs)
	m = BytesParser(policy=policy.default).parsebytes(msgs[0].as_bytes())
	for want in sys.argv[2:]:
	    if "#" in want:
	        h, n = want.split("#")
	        got = len(m[h].addresses) if m[h] is not None else 0
	        assert got == int(n), "%s: %d addresses: %r" % (h, got, m[h])
	    else:
	        h, v = want.split("=", 1)
	        got = str(m[h]) if m[h] is not None else ""
	        assert got == v, "%s: %r, want %r" % (h, got, v)
	EOP
}
cc_is() {
	python3 - "$TMP/out" "$1" <<-\EOP
	import mailbox, sys
	from email import policy
	from email.parser import BytesParser
	m = BytesParser(policy=policy.default).parsebytes(
	    next(iter(mailbox.mbox(sys.argv[1]))).as_bytes())
	a = [x.addr_spec for x in m["Cc"].addresses]
	assert a == [sys.argv[2]], a
	EOP
}

cl() { run "$QUORUM" classify -C "$TMP/repo" --stable --format email "$TMP/h.mbox"; }

test_expect_success 'a display name holding a comma and an address: one Cc' '
	hostile "\"cc-injected@evil.example, A U Thor\" <author@example.org>" \
		"[PATCH] main: add item_new()" "<ok.1@example.org>" &&
	cl && test "$rc" = 0 &&
	mail_check "Cc#1" "To#0" "Bcc#0" &&
	cc_is author@example.org &&
	! grep -i "^Cc: cc-injected" "$TMP/out"
'

test_expect_success 'group syntax: one Cc, the group a name' '
	hostile "undisclosed: cc-injected@evil.example, A U Thor <author@example.org>;" \
		"[PATCH] main: add item_new()" "<ok.2@example.org>" &&
	cl && test "$rc" = 0 &&
	mail_check "Cc#1" "To#0" &&
	cc_is author@example.org
'

test_expect_success 'a display name with quotes and an address in it: one Cc' '
	hostile "\"Eve \\\\\"x\\\\\" <eve@evil.example>, bob@evil.example\" <author@example.org>" \
		"[PATCH] main: add item_new()" "<ok.3@example.org>" &&
	cl && test "$rc" = 0 &&
	mail_check "Cc#1" &&
	cc_is author@example.org
'

test_expect_success 'a usable Message-ID threads the mail' '
	mail_check "In-Reply-To=<ok.3@example.org>" "References=<ok.3@example.org>"
'

test_expect_success 'quotes and backslashes in the Message-ID: no thread headers, a warning' '
	sed -e "/^Subject:/a Message-ID: <a\"b\\\\c@example.org>" \
		"$TMP/p.mbox" >"$TMP/h.mbox" &&
	grep "^Message-ID: <a\"b\\\\c@example.org>" "$TMP/h.mbox" &&
	cl && test "$rc" = 0 &&
	mail_check "In-Reply-To=" "References=" "Cc#1" &&
	! grep "a\"b" "$TMP/out" &&
	test_grep "not threaded under it" "$TMP/err"
'

test_expect_success 'a subject with C1 and bidi controls: visible, encoded-word, no raw byte' '
	hostile "A U Thor <author@example.org>" \
		"[PATCH] caf\\xc3\\xa9: a \\xc2\\x9b2J leak \\xe2\\x80\\xae gnp.exe \\xe2\\x81\\xa6x\\xe2\\x80\\x8f\\x7f" \
		"<ok.4@example.org>" &&
	cl && test "$rc" = 0 &&
	mail_check "Subject=[PATCH AUTOSEL stable] caf$(printf "\303\251"): a <U+009B>2J leak <U+202E> gnp.exe <U+2066>x<U+200F>\\x7f" &&
	test_grep "^Subject: .*=\\?UTF-8\\?" "$TMP/out" &&
	! LC_ALL=C grep -q "$(printf "[\\200-\\377]")" "$TMP/out"
'

test_expect_success 'to = ADDRESS of the question: one To, the author on Cc' '
	printf "[classify \"stable\"]\n\tto = Stable Team <stable@example.org>\n" >"$QUORUM_CONFIG" &&
	hostile "\"x@evil.example, y@evil.example\" <author@example.org>" \
		"[PATCH] main: add item_new()" "<ok.5@example.org>" &&
	cl && test "$rc" = 0 &&
	mail_check "To#1" "Cc#1" "To=Stable Team <stable@example.org>" &&
	cc_is author@example.org
'

test_expect_success 'a to that is no address: exit 2, one line' '
	printf "[classify \"stable\"]\n\tto = stable@example.org, evil@evil.example\n" >"$QUORUM_CONFIG" &&
	cl && test "$rc" = 2 &&
	test_line_count = 2 "$TMP/err" &&
	test_grep "is not an address" "$TMP/err" &&
	test ! -s "$TMP/out"
'

test_done
