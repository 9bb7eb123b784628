#!/bin/sh
# quorum watch keeps each list's mail to that list: a series of one list
# is never applied, named or hinted at in another list's reply unless the
# config shares it (list.NAME.prerequisites-from), and an embargoed list's
# mail never leaves it, even to a list that names it. A public series
# whose cover names an embargoed series (prerequisite-message-id:) gets
# the very bytes it gets when that series does not exist; mail posted
# into an embargoed thread, a RESEND of its patches and a command about
# it get nothing of it either.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/watch.sh"

command -v notmuch >/dev/null || skip_all "notmuch is not installed"

SEC=sec@lists.example.org
OTHER=other@lists.example.org
export QUORUM_NOW=1700003600

msgid() { sed -n 's/^Message-I[Dd]: *<\(.*\)>.*/\1/p' "$1"; }
# posted_id FILE TAG: the Message-ID of a format-patch file once
# maildir_put has made it unique with TAG
posted_id() { msgid "$1" | sed "s/\\.git\\./.git.$2./"; }
# declare_prereq FILE ID: a prerequisite-message-id: line in a cover letter
declare_prereq() { sed -i "/^-- \$/i prerequisite-message-id: <$2>" "$1"; }
# reply_to ID: the outbox replies to ID
reply_to() { grep -l "^In-Reply-To: <$1>\$" "$OUTBOX"/new/* 2>/dev/null; }
# flat FILE: a mail's body on one line (replies wrap at 78 columns)
flat() { sed '1,/^$/d' "$1" | tr '\n' ' ' | tr -s ' '; }
# lists [LINES...]: devel (public) first, then sec (embargoed), then LINES
lists() {
	watch_config "[list \"sec\"]" "	address = $SEC" "	repo = $R" \
		"	branch = main" "	embargo = true" \
		"	maintainers = sec-maint@example.org" "$@"
}
# world: no reply, no state, nothing tagged; the mail stays
world() {
	rm -rf "$OUTBOX" "$XDG_STATE_HOME/quorum" &&
	notmuch new --quiet &&
	notmuch tag -quorum/seen -quorum/reviewed -quorum/skipped \
		-quorum/failed -- '*'
}
# public: the outbox mail that goes to the list or to the author
public() {
	grep -l -E "^(To|Cc):.*($LIST|author@example.org)" "$OUTBOX"/new/* \
		2>/dev/null
}
# public_clean REGEX: no public mail's Subject or body matches REGEX
public_clean() {
	for f in $(public); do
		if sed -n -e '/^Subject:/p' -e '/^$/,$p' "$f" | grep -Eq -- "$1"; then
			echo "$f tells of it:"
			grep -E -- "$1" "$f"
			return 1
		fi
	done
}

test_expect_success 'setup: an embargoed fix on sec, public series on devel that need it' '
	watch_setup &&
	lists &&
	git -C "$R" checkout -q -b e-sec main &&
	printf "%s\n" "#include <stdlib.h>" "" "struct secret {" "	int len;" \
		"};" "" "struct secret *parse_secret(int n)" "{" \
		"	struct secret *s;" "" "	s = malloc(sizeof(*s));" \
		"	s->len = n;" "	return s;" "}" >"$R/secret.c" &&
	git -C "$R" add secret.c &&
	git -C "$R" commit -q -m "EMBARGOED: fix CVE-2099-0001 heap overflow in parse_secret()" &&
	git -C "$R" format-patch -q -1 --thread=shallow --to="$SEC" -o "$TMP/esec" &&
	E=$(posted_id "$TMP"/esec/0001-*.patch esec) &&
	# S applies only on top of E; S2 applies nowhere (it needs a commit
	# never posted); both name E.
	git -C "$R" checkout -q -b s-dep e-sec &&
	sed -i "s/s->len = n;/s->len = n > 0 ? n : 0;/" "$R/secret.c" &&
	git -C "$R" commit -q -am "secret: no negative length" &&
	git -C "$R" format-patch -q --cover-letter --thread=shallow \
		--to="$LIST" -o "$TMP/sdep" e-sec..s-dep &&
	git -C "$R" checkout -q -b x-hidden e-sec &&
	sed -i "s/int len;/int len, cap;/" "$R/secret.c" &&
	git -C "$R" commit -q -am "secret: a capacity" &&
	git -C "$R" checkout -q -b s-try &&
	sed -i "s/int len, cap;/int len, cap, flags;/" "$R/secret.c" &&
	git -C "$R" commit -q -am "secret: flags" &&
	git -C "$R" format-patch -q --cover-letter --thread=shallow \
		--to="$LIST" -o "$TMP/stry" x-hidden..s-try &&
	git -C "$R" checkout -q main &&
	declare_prereq "$TMP"/sdep/0000-cover-letter.patch "$E" &&
	declare_prereq "$TMP"/stry/0000-cover-letter.patch "$E" &&
	S=$(posted_id "$TMP"/sdep/0000-cover-letter.patch sdep) &&
	S2=$(posted_id "$TMP"/stry/0000-cover-letter.patch stry) &&
	post "$TMP/sdep" &&
	post "$TMP/stry"
'

test_expect_success 'the prerequisite does not exist: S and S2 name it as missing' '
	watch &&
	test "$rc" = 0 &&
	cp "$(reply_to "$S")" "$TMP/absent-s" &&
	cp "$(reply_to "$S2")" "$TMP/absent-s2" &&
	flat "$TMP/absent-s" >"$TMP/body" &&
	test_grep "declares the prerequisite <$E>, which is not in the mail quorum reads" "$TMP/body" &&
	flat "$TMP/absent-s2" >"$TMP/body" &&
	test_grep "declares the prerequisite <$E>, which is not in the mail quorum reads" "$TMP/body"
'

test_expect_success 'on the embargoed list: the very same replies, byte for byte' '
	world &&
	post "$TMP/esec" &&
	test "$(notmuch count "id:$E")" = 1 &&
	watch &&
	test "$rc" = 0 &&
	test_grep "^sec: reviewed \"\[PATCH\] EMBARGOED" "$TMP/out" &&
	test_cmp "$TMP/absent-s" "$(reply_to "$S")" &&
	test_cmp "$TMP/absent-s2" "$(reply_to "$S2")" &&
	public_clean "EMBARGOED|CVE-2099|parse_secret" &&
	test_grep "^To: sec-maint@example.org$" "$(reply_to "$E")"
'

test_expect_success 'on a list quorum does not watch, not shared: the same bytes' '
	rm -f "$MAIL"/new/msg-esec-* &&
	world &&
	sed "s/^To: .*/To: $OTHER/" "$TMP"/esec/0001-*.patch >"$TMP/eother.patch" &&
	mkdir -p "$TMP/eother" &&
	mv "$TMP/eother.patch" "$TMP/eother/0001-x.patch" &&
	sed -i "s/\\.git\\./.git.esec./" "$TMP/eother/0001-x.patch" &&
	tail -n +2 "$TMP/eother/0001-x.patch" >"$MAIL/new/msg-eother" &&
	notmuch new --quiet &&
	test "$(notmuch count "id:$E and to:$OTHER")" = 1 &&
	watch &&
	test_cmp "$TMP/absent-s" "$(reply_to "$S")" &&
	test_cmp "$TMP/absent-s2" "$(reply_to "$S2")"
'

test_expect_success 'shared by list.devel.prerequisites-from = that address: S is applied on it' '
	world &&
	lists "[list \"devel\"]" "	prerequisites-from = $OTHER" &&
	watch &&
	test "$rc" = 0 &&
	flat "$(reply_to "$S")" >"$TMP/body" &&
	test_grep "Applied on top of the prerequisite series .EMBARGOED: fix CVE-2099-0001" "$TMP/body" &&
	flat "$(reply_to "$S2")" >"$TMP/body" &&
	test_grep "Tried on top of the prerequisite series .EMBARGOED" "$TMP/body" &&
	rm -f "$MAIL/new/msg-eother"
'

test_expect_success 'an embargoed list is never a source: prerequisites-from = sec, or its address, is an error' '
	lists "[list \"devel\"]" "	prerequisites-from = sec" &&
	watch &&
	test "$rc" = 2 &&
	test_grep "list devel: prerequisites-from names sec, an embargoed list: its mail never leaves it" "$TMP/err" &&
	lists "[list \"devel\"]" "	prerequisites-from = other, $SEC" &&
	watch &&
	test "$rc" = 2 &&
	test_grep "prerequisites-from names other, which is neither a \[list\] section with an address nor an address" "$TMP/err" &&
	lists "[list \"devel\"]" "	prerequisites-from = SEC@lists.example.org" &&
	watch &&
	test "$rc" = 2 &&
	test_grep "list devel: prerequisites-from names SEC@lists.example.org, an embargoed list" "$TMP/err" &&
	lists
'

test_expect_success 'mail posted into the embargoed thread: devel neither reviews nor explains the embargoed series' '
	lists &&
	world &&
	post "$TMP/esec" &&
	cat >"$MAIL/new/join" <<-EOM &&
	From: Mallory <mallory@evil.example>
	To: $LIST
	Subject: [PATCH] main: a helper
	Message-ID: <join@evil.example>
	In-Reply-To: <$E>
	References: <$E>
	Date: Tue, 14 Nov 2023 22:20:00 +0000

	A helper.
	---
	diff --git a/helper.c b/helper.c
	new file mode 100644
	--- /dev/null
	+++ b/helper.c
	@@ -0,0 +1,4 @@
	+int helper(void)
	+{
	+	return 1;
	+}
	EOM
	cat >"$MAIL/new/forged" <<-EOM &&
	From: A U Thor <author@example.org>
	To: $LIST
	Subject: Re: [PATCH] EMBARGOED
	Message-ID: <forged@evil.example>
	In-Reply-To: <$E>
	References: <$E>
	Date: Tue, 14 Nov 2023 22:21:00 +0000

	#quorum explain 1
	EOM
	# A v2 the sec people sent each other, to no list: in a thread
	# that holds sec mail it is sec'\''s, though no list is on it.
	sed -e "s/^To: .*/To: A U Thor <author@example.org>/" \
		-e "s/^From: .*/From: Sec Maint <sec-maint@example.org>/" \
		-e "s/^Subject: .*/Subject: [PATCH] secret: the fix, reworked/" \
		-e "s/^Message-I[Dd]: .*/Message-ID: <private-v2@example.org>\nIn-Reply-To: <$E>\nReferences: <$E>/" \
		"$TMP"/esec/0001-*.patch | tail -n +2 >"$MAIL/new/private" &&
	notmuch new --quiet &&
	watch &&
	test "$rc" = 0 &&
	test_grep "^sec: reviewed \"\[PATCH\] EMBARGOED" "$TMP/out" &&
	test_grep "^sec: reviewed \"\[PATCH\] secret: the fix, reworked" "$TMP/out" &&
	test_grep -v "^devel: .*reworked" "$TMP/out" &&
	test_grep -v "^devel: .*EMBARGOED" "$TMP/out" &&
	test_grep -v "explained finding" "$TMP/out" &&
	test_grep "^devel: reviewed \"\[PATCH\] main: a helper\"" "$TMP/out" &&
	test_grep -v "^sec: .*main: a helper" "$TMP/out" &&
	test -z "$(reply_to forged@evil.example)" &&
	public_clean "EMBARGOED|CVE-2099|parse_secret" &&
	flat "$(reply_to join@evil.example)" >"$TMP/body" &&
	test_grep "quorum found no issue" "$TMP/body" &&
	test_grep -v "$E" "$TMP/body" &&
	test "$(ls "$OUTBOX"/new | wc -l)" = 5
'

test_expect_success 'a series made to look like the embargoed one (its root, sender, version, total) is still reviewed on devel' '
	cat >"$MAIL/new/lookalike" <<-EOM &&
	From: A U Thor <author@example.org>
	To: $LIST
	Subject: [PATCH] main: another helper
	Message-ID: <lookalike@evil.example>
	In-Reply-To: <$E>
	References: <$E>
	Date: Tue, 14 Nov 2023 22:23:00 +0000

	Another helper.
	---
	diff --git a/helper2.c b/helper2.c
	new file mode 100644
	--- /dev/null
	+++ b/helper2.c
	@@ -0,0 +1,4 @@
	+int helper2(void)
	+{
	+	return 2;
	+}
	EOM
	notmuch new --quiet &&
	watch &&
	test_grep "^devel: reviewed \"\[PATCH\] main: another helper\": no findings" "$TMP/out" &&
	flat "$(reply_to lookalike@evil.example)" >"$TMP/body" &&
	test_grep "quorum found no issue" "$TMP/body"
'

test_expect_success 'a sec maintainer may still command in the embargoed thread, to quorum alone' '
	first=$(msgid "$(reply_to "$E")") &&
	cat >"$MAIL/new/maint" <<-EOM &&
	From: Sec Maint <sec-maint@example.org>
	To: $SEC
	Subject: Re: [PATCH] EMBARGOED
	Message-ID: <maint-cmd@example.org>
	In-Reply-To: <$first>
	References: <$E> <$first>
	Date: Tue, 14 Nov 2023 22:22:00 +0000

	#quorum explain 1
	EOM
	notmuch new --quiet &&
	watch &&
	X=$(reply_to maint-cmd@example.org) &&
	test_grep "finding 1 in detail" "$X" &&
	test_grep "^To: sec-maint@example.org$" "$X" &&
	test_grep -v "^(To|Cc):.*($LIST|author@)" "$X"
'

test_expect_success 'named by patch-id (format-patch --base): the embargoed series is not found' '
	git -C "$R" checkout -q -b s-pid e-sec &&
	sed -i "s/s->len = n;/s->len = n + 1;/" "$R/secret.c" &&
	git -C "$R" commit -q -am "secret: one more" &&
	git -C "$R" format-patch -q --cover-letter --thread=shallow \
		--base=main --to="$LIST" -o "$TMP/spid" e-sec..s-pid &&
	git -C "$R" checkout -q main &&
	test_grep "^prerequisite-patch-id: " "$TMP"/spid/0000-cover-letter.patch &&
	post "$TMP/spid" &&
	P6=$(posted_id "$TMP"/spid/0000-cover-letter.patch spid) &&
	watch &&
	flat "$(reply_to "$P6")" >"$TMP/body" &&
	test_grep "quorum did not review this series" "$TMP/body" &&
	test_grep -v "on top of|EMBARGOED|CVE-2099" "$TMP/body"
'

test_expect_success 'a RESEND of the embargoed patches on devel is reviewed afresh, never "unchanged since" sec'\''s reply' '
	mkdir -p "$TMP/resend" &&
	sed -e "s/^To: .*/To: $LIST/" \
		-e "s/^Subject: .*/Subject: [PATCH] lib: add a struct/" \
		"$TMP"/esec/0001-*.patch >"$TMP/resend/0001-x.patch" &&
	post "$TMP/resend" &&
	R5=$(posted_id "$TMP/resend/0001-x.patch" resend) &&
	watch &&
	flat "$(reply_to "$R5")" >"$TMP/body" &&
	test_grep "quorum found 1 potential issue" "$TMP/body" &&
	test_grep -v "unchanged since|Still open|EMBARGOED|CVE-2099" "$TMP/body"
'

test_expect_success 'an embargoed list may take prerequisites from a public one when it says so' '
	git -C "$R" checkout -q -b p-pub main &&
	printf "int pub(void) { return 0; }\n" >"$R/pub.c" &&
	git -C "$R" add pub.c &&
	git -C "$R" commit -q -m "pub: add pub()" &&
	git -C "$R" checkout -q -b e-pub &&
	printf "int pub2(void) { return 1; }\n" >>"$R/pub.c" &&
	git -C "$R" commit -q -am "pub: add pub2()" &&
	git -C "$R" format-patch -q --cover-letter --thread=shallow \
		--to="$LIST" -o "$TMP/ppub" main..p-pub &&
	git -C "$R" format-patch -q --cover-letter --thread=shallow \
		--to="$SEC" -o "$TMP/epub" p-pub..e-pub &&
	git -C "$R" checkout -q main &&
	P7=$(posted_id "$TMP"/ppub/0000-cover-letter.patch ppub) &&
	E7=$(posted_id "$TMP"/epub/0000-cover-letter.patch epub) &&
	declare_prereq "$TMP"/epub/0000-cover-letter.patch "$P7" &&
	post "$TMP/ppub" &&
	post "$TMP/epub" &&
	watch &&
	flat "$(reply_to "$E7")" >"$TMP/body" &&
	test_grep "declares the prerequisite <$P7>, which is not in the mail quorum reads" "$TMP/body" &&
	lists "[list \"sec\"]" "	prerequisites-from = devel" &&
	world &&
	watch &&
	flat "$(reply_to "$E7")" >"$TMP/body" &&
	test_grep "Applied on top of the prerequisite series .series ppub. \\(v1, 1 patch, <$P7>\\)" "$TMP/body" &&
	test_grep "^To: sec-maint@example.org$" "$(reply_to "$E7")"
'

. "$TOP/tests/lib/llm.sh"

test_expect_success 'a model answer given for the embargoed series is never reused for devel'\''s copy of it' '
	cat >"$TMP/llm.json" <<-EOS &&
	{"default": [
	 {"when": "EMBARGOED", "answer": {"findings": [{"file": "secret.c",
	  "line_start": 11, "line_end": 12, "severity": "high",
	  "category": "overflow",
	  "title": "CVE-2099-0001 is still reachable through parse_secret()",
	  "quote": "s = malloc(sizeof(*s));"}]}},
	 {"answer": {"findings": []}}
	]}
	EOS
	fake_start "$TMP/llm.json" &&
	lists "$(voter a openai ma)" &&
	mkdir -p "$TMP/held" &&
	mv "$MAIL"/new/msg-resend-* "$TMP/held/" &&
	world &&
	watch &&
	test_grep "^sec: reviewed \"\[PATCH\] EMBARGOED" "$TMP/out" &&
	test_grep "CVE-2099-0001 is still reachable" "$(reply_to "$E")" &&
	n=$(requests ma) &&
	mv "$TMP"/held/* "$MAIL/new/" &&
	notmuch new --quiet &&
	watch &&
	test "$(requests ma)" -gt "$n" &&
	flat "$(reply_to "$R5")" >"$TMP/body" &&
	test_grep "quorum found 1 potential issue" "$TMP/body" &&
	test_grep -v "CVE-2099|still reachable" "$TMP/body" &&
	fake_stop
'

test_expect_success 'a series recorded before keys named the list is not reviewed again' '
	command -v sqlite3 >/dev/null &&
	lists &&
	world &&
	watch &&
	n=$(ls "$OUTBOX"/new | wc -l) &&
	db=$XDG_STATE_HOME/quorum/state.db &&
	sqlite3 "$db" "UPDATE series SET key = substr(key, instr(key, char(10)) + 1) WHERE key LIKE '\''%$S%'\''" &&
	test "$(sqlite3 "$db" "SELECT count(*) FROM series WHERE key LIKE '\''%$S%'\'' AND instr(key, char(10)) = 0")" = 1 &&
	cat >"$MAIL/new/thanks" <<-EOM &&
	From: Some One <someone@example.org>
	To: $LIST
	Subject: Re: [PATCH 0/1] series sdep
	Message-ID: <thanks@example.org>
	In-Reply-To: <$S>
	References: <$S>
	Date: Tue, 14 Nov 2023 22:24:00 +0000

	Thanks.
	EOM
	notmuch new --quiet &&
	watch &&
	test "$(ls "$OUTBOX"/new | wc -l)" = "$n" &&
	test_grep -v "series sdep" "$TMP/out" &&
	test_grep "^watch: 0 reviewed, 0 waiting, 0 skipped, 0 failed, 0 delivered" "$TMP/out"
'

test_done
