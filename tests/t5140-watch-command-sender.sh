#!/bin/sh
# Who sent a #quorum command: the From header counts only as one plain
# mailbox (not '<author@...> evil@...', a group, two From headers, an
# address hidden in a display name or in the body); with commands = dkim
# (the default once the list's mail comes signed) only a DKIM signature
# of the From domain that verifies over the whole body and the headers
# that say which series it is about; commands = off takes none. Keys are
# made here (openssl) and read from list.NAME.dkim-keys; mail is signed
# with dkimpy (python3-dkim), another implementation than the one that
# verifies. A refused command gets no answer; the run says why, once.
# An answer says how the sender was verified.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/watch.sh"

command -v notmuch >/dev/null || skip_all "notmuch is not installed"
command -v openssl >/dev/null || skip_all "openssl is not installed"
DKIMPY=
for py in python3 /usr/bin/python3; do
	if "$py" -c 'import dkim' 2>/dev/null; then
		DKIMPY=$py
		break
	fi
done
[ -n "$DKIMPY" ] || skip_all "python3-dkim (dkimpy) is not installed"

# key DOMAIN: a 2048-bit key for selector sel of DOMAIN, in $TMP/DOMAIN.pem,
# its public half a line of $TMP/keys (libopendkim's key file format)
key() {
	openssl genrsa -out "$TMP/$1.pem" 2048 2>/dev/null &&
	pub=$(openssl rsa -in "$TMP/$1.pem" -pubout -outform DER 2>/dev/null |
		base64 | tr -d '\n') &&
	printf 'sel._domainkey.%s v=DKIM1; k=rsa; p=%s\n' "$1" "$pub" >>"$TMP/keys"
}

# sign DOMAIN [length|nothread] <MAIL >SIGNED: a DKIM-Signature of DOMAIN
# (d=DOMAIN, s=sel); length: l= (a prefix of the body); nothread: the
# signature covers From, Subject and Date only
sign() {
	"$DKIMPY" -c '
import sys, dkim
dom, how = sys.argv[1], sys.argv[2]
msg = sys.stdin.buffer.read()
kw = {}
if how == "length":
    kw["length"] = True
if how == "nothread":
    kw["include_headers"] = [b"from", b"subject", b"date"]
key = open(sys.argv[3], "rb").read()
sig = dkim.sign(msg, b"sel", dom.encode(), key, linesep=b"\n", **kw)
sys.stdout.buffer.write(sig + msg)' "$1" "${2:-}" "$TMP/$1.pem"
}

# cmd ID FROM TEXT: a command mail in reply to quorum's review, on stdout
cmd() {
	cat <<EOM
From: $2
To: $LIST
Subject: Re: [PATCH 0/3] series s
Message-ID: <$1@example.org>
In-Reply-To: <$first>
References: <$cover> <$first>
Date: Tue, 14 Nov 2023 22:30:00 +0000

$3
EOM
}
# put ID: $TMP/ID.eml into the maildir
put() { cp "$TMP/$1.eml" "$MAIL/new/$1" && notmuch new --quiet; }
# reply_to ID: the outbox mail in reply to <ID@example.org>
reply_to() { grep -l "^In-Reply-To: <$1@example.org>" "$OUTBOX"/new/* 2>/dev/null; }
flat() { sed '1,/^$/d' "$1" | tr '\n' ' ' | tr -s ' '; }
# still_reviewed: a new series of the author is reviewed (not muted)
still_reviewed() {
	_sr=$((_sr + 1)) &&
	mail_single "sr$_sr" "A U Thor <author@example.org>" "lib: helper $_sr" &&
	notmuch new --quiet &&
	watch &&
	test_grep "^devel: reviewed \"\[PATCH\] lib: helper $_sr\"" "$TMP/out"
}
_sr=0
# config [LINES...]: the devel list with a maintainer and LINES
config() {
	watch_config '[list "devel"]' '	maintainers = maint@example.org' "$@"
}
# dkim [LINES...]: the same, with the keys made here instead of DNS
dkim() { config "	dkim-keys = $TMP/keys" "$@"; }

test_expect_success 'setup: keys, and a reviewed series on a list with a maintainer' '
	key example.org &&
	key evil.example &&
	key org &&
	watch_setup &&
	config &&
	git -C "$R" format-patch -q --cover-letter --thread=shallow --to="$LIST" \
		-o "$TMP/s" base..topic &&
	post "$TMP/s" &&
	watch &&
	test "$rc" = 0 &&
	cover=$(sed -n "s/^Message-I[Dd]: <\(.*\)>$/\1/p" "$MAIL"/new/msg-s-1) &&
	first=$(sed -n "s/^Message-I[Dd]: <\(.*\)>$/\1/p" "$OUTBOX"/new/*)
'

test_expect_success 'From: <author@...> evil@... is two addresses, not the author' '
	cmd two "<author@example.org> evil@evil.example" "#quorum mute" >"$TMP/two.eml" &&
	put two &&
	watch &&
	test_grep "ignored #quorum mute from .*: its From is not one plain address" "$TMP/out" &&
	test -z "$(reply_to two)" &&
	still_reviewed
'

test_expect_success 'group syntax, a trailing address, a display name with an address, two From headers: none is the author' '
	cmd grp "authors: A U Thor <author@example.org>;" "#quorum mute" >"$TMP/grp.eml" &&
	cmd tail "author@example.org@evil.example" "#quorum mute" >"$TMP/tail.eml" &&
	cmd dname "\"author@example.org\" <evil@evil.example>" "#quorum mute" >"$TMP/dname.eml" &&
	cmd dbl "Mallory <mallory@evil.example>" "#quorum mute" |
		sed "1i From: A U Thor <author@example.org>" >"$TMP/dbl.eml" &&
	put grp && put tail && put dname && put dbl &&
	watch &&
	test_grep "ignored #quorum mute from authors: .*: its From is not one plain address" "$TMP/out" &&
	test_grep "ignored #quorum mute from author@example.org@evil.example: its From is not one plain address" "$TMP/out" &&
	test_grep "ignored #quorum mute from evil@evil.example: not the author or a maintainer" "$TMP/out" &&
	test_grep "ignored #quorum mute from .*: it has more than one From header" "$TMP/out" &&
	test -z "$(reply_to grp)$(reply_to tail)$(reply_to dname)$(reply_to dbl)" &&
	still_reviewed
'

test_expect_success 'a From: line in the body is not the sender' '
	cmd body "Mallory <mallory@evil.example>" "From: A U Thor <author@example.org>

#quorum mute" >"$TMP/body.eml" &&
	put body &&
	watch &&
	test_grep "ignored #quorum mute from mallory@evil.example: not the author or a maintainer" "$TMP/out" &&
	still_reviewed
'

test_expect_success 'commands = from: an unsigned command of the author counts, and the answer says how it was checked' '
	cmd fromok "A U Thor <author@example.org>" "#quorum explain 9" >"$TMP/fromok.eml" &&
	put fromok &&
	watch &&
	A=$(reply_to fromok) &&
	test -n "$A" &&
	flat "$A" >"$TMP/b" &&
	test_grep "Sender author@example.org, checked by the From header only, as list devel takes commands \(commands = from\): it is not signed \(DKIM\)\." "$TMP/b" &&
	test_grep "^To: A U Thor <author@example.org>$" "$A"
'

test_expect_success 'commands = dkim: a forged unsigned From: A U Thor <author@...> does not mute the author' '
	dkim "	commands = dkim" &&
	cmd forged "A U Thor <author@example.org>" "#quorum mute" >"$TMP/forged.eml" &&
	put forged &&
	watch &&
	test_grep "ignored #quorum mute from author@example.org: it is not signed \(DKIM\), and list devel wants a DKIM signature \(commands = dkim\)" "$TMP/out" &&
	test -z "$(reply_to forged)" &&
	still_reviewed &&
	watch &&
	test_grep -v "ignored" "$TMP/out"
'

test_expect_success 'commands = dkim: signed by another domain, by a top-level domain, or changed after signing: refused' '
	cmd evil "A U Thor <author@example.org>" "#quorum mute" | sign evil.example >"$TMP/evil.eml" &&
	cmd tld "A U Thor <author@example.org>" "#quorum mute" | sign org >"$TMP/tld.eml" &&
	cmd changed "A U Thor <author@example.org>" "Looks good." | sign example.org |
		sed "s/^Looks good\\.\$/#quorum mute/" >"$TMP/changed.eml" &&
	put evil && put tld && put changed &&
	watch &&
	test_grep "ignored #quorum mute from author@example.org: its DKIM signature is of evil.example, not of example.org" "$TMP/out" &&
	test_grep "ignored #quorum mute from author@example.org: its DKIM signature is of org, not of example.org" "$TMP/out" &&
	test_grep "ignored #quorum mute from author@example.org: its DKIM signature does not verify" "$TMP/out" &&
	test -z "$(reply_to evil)$(reply_to tld)$(reply_to changed)" &&
	still_reviewed
'

test_expect_success 'commands = dkim: l= (a signed prefix with a command after it), headers left unsigned or doubled: refused' '
	cmd len "A U Thor <author@example.org>" "Thanks." | sign example.org length >"$TMP/len.eml" &&
	printf "\n#quorum mute\n" >>"$TMP/len.eml" &&
	cmd nothr "A U Thor <author@example.org>" "#quorum mute" | sign example.org nothread >"$TMP/nothr.eml" &&
	cmd dup "A U Thor <author@example.org>" "#quorum mute" | sign example.org |
		sed "1i In-Reply-To: <$cover>" >"$TMP/dup.eml" &&
	put len && put nothr && put dup &&
	watch &&
	test_grep "ignored #quorum mute from author@example.org: its DKIM signature covers only part of the body \(l=\)" "$TMP/out" &&
	test_grep "ignored #quorum mute from author@example.org: its DKIM signature does not cover From, Message-ID, In-Reply-To and References" "$TMP/out" &&
	test_grep "ignored #quorum mute from author@example.org: it has more than one in-reply-to header" "$TMP/out" &&
	test -z "$(reply_to len)$(reply_to nothr)$(reply_to dup)" &&
	still_reviewed
'

test_expect_success 'commands = dkim: the author'\''s signed mute is taken, and the answer says so' '
	cmd good "A U Thor <author@example.org>" "#quorum mute" | sign example.org >"$TMP/good.eml" &&
	put good &&
	watch &&
	test_grep "#quorum mute from author@example.org" "$TMP/out" &&
	A=$(reply_to good) &&
	test -n "$A" &&
	flat "$A" >"$TMP/b" &&
	test_grep "will not review mail from author@example.org on list devel" "$TMP/b" &&
	test_grep "Sender author@example.org, verified by the DKIM signature of example.org\." "$TMP/b" &&
	mail_single muted1 "A U Thor <author@example.org>" "lib: after the mute" &&
	notmuch new --quiet &&
	watch &&
	test_grep "skipped muted series \"\[PATCH\] lib: after the mute\"" "$TMP/out"
'

test_expect_success 'commands = off: no command is taken, not even a signed one' '
	dkim "	commands = off" &&
	cmd off "A U Thor <author@example.org>" "#quorum unmute" | sign example.org >"$TMP/off.eml" &&
	put off &&
	watch &&
	test_grep "ignored #quorum unmute from author@example.org: list devel takes no commands \(commands = off\)" "$TMP/out" &&
	test -z "$(reply_to off)"
'

test_expect_success 'default: once a patch of the list comes signed, an unsigned command is refused; a signed one is taken' '
	dkim &&
	cmd before "Maint <maint@example.org>" "#quorum explain 9" >"$TMP/before.eml" &&
	put before &&
	watch &&
	test -n "$(reply_to before)" &&
	mail_single signedp "A U Thor <author@example.org>" "lib: a signed patch" &&
	sign example.org <"$MAIL/new/signedp" >"$TMP/signedp" &&
	mv "$TMP/signedp" "$MAIL/new/signedp" &&
	cmd unsig "A U Thor <author@example.org>" "#quorum unmute" >"$TMP/unsig.eml" &&
	put unsig &&
	watch &&
	test_grep "ignored #quorum unmute from author@example.org: it is not signed \(DKIM\), and list devel wants a DKIM signature \(commands = dkim, the default: its mail comes signed\)" "$TMP/out" &&
	test -z "$(reply_to unsig)" &&
	cmd sig "A U Thor <author@example.org>" "#quorum unmute" | sign example.org >"$TMP/sig.eml" &&
	put sig &&
	watch &&
	test_grep "#quorum unmute from author@example.org" "$TMP/out" &&
	test_grep "verified by the DKIM signature of example.org" "$(reply_to sig)"
'

test_expect_success 'config: commands and dkim-keys are checked' '
	dkim "	commands = yes" &&
	watch &&
	test "$rc" = 2 &&
	test_grep "list devel: commands .yes. is not dkim, from or off" "$TMP/err" &&
	watch_config "[list \"devel\"]" "	dkim-keys = $TMP/no-such-keys" &&
	watch &&
	test "$rc" = 2 &&
	test_grep "list devel: dkim-keys $TMP/no-such-keys cannot be read: No such file or directory" "$TMP/err"
'

test_done
