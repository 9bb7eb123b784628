#!/bin/sh
# Control characters from mail, the tree and the models never reach a
# terminal or a mail as they are: a file name holding ESC ]52 (a clipboard
# write), BEL, ESC [2J, a newline, a raw 0x9b (8-bit CSI) and U+202E, a
# subject with C1 and bidi controls, and model answers with DEL, U+009B,
# U+202E and ESC, through review (text, email), apply, watch (its log and
# the reply in the outbox) and classify (text, email). Nothing raw comes
# out (mail is read decoded, as a mail reader shows it), the escape is
# visible (\e, \x9b, <U+202E>), and a newline in a name forges no line.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/watch.sh"
. "$TOP/tests/lib/llm.sh"

command -v notmuch >/dev/null || skip_all "notmuch is not installed"
unset QUORUM_CONFIG

NAME=$(printf 'evil\033]52;c;cHduZWQ=\007\033[2J\nx\233\342\200\256.c')
# The subject: C1 CSI (U+009B), ESC, BEL, RLO (U+202E), LRI (U+2066),
# RLM (U+200F), DEL.
SUBJ=$(printf 'main: add \302\2332J item\033]0;t\007 \342\200\256gnp.c \342\201\246x\342\200\217\177')

# clean FILE...: no raw control, DEL, C1, bidi or invisible format
# character and no byte that is not UTF-8 in FILE; mail (a file that
# starts with headers, or an mbox) is checked as read: each message's
# decoded headers and decoded body.
clean() {
	python3 - "$@" <<-\EOP
	import mailbox, re, sys
	from email import policy
	from email.parser import BytesParser
	bad = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u180e"
	                 "\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]")
	def check(where, text):
	    m = bad.search(text)
	    if m:
	        sys.exit("%s: raw %r in %r" % (where, m.group(),
	                 text[max(0, m.start() - 40):m.start() + 40]))
	def check_mail(where, msg):
	    for k, v in msg.items():
	        check("%s header %s" % (where, k), str(v))
	    for part in msg.walk():
	        if part.get_content_maintype() == "text":
	            check(where + " body", part.get_content())
	for f in sys.argv[1:]:
	    raw = open(f, "rb").read()
	    try:
	        text = raw.decode("utf-8")
	    except UnicodeDecodeError as e:
	        sys.exit("%s: not UTF-8 at %d: %r" % (f, e.start,
	                 raw[max(0, e.start - 40):e.start + 40]))
	    check(f, text)
	    if raw.startswith(b"From "):
	        for i, m in enumerate(mailbox.mbox(f)):
	            check_mail("%s message %d" % (f, i + 1),
	                       BytesParser(policy=policy.default)
	                       .parsebytes(m.as_bytes()))
	    elif re.match(rb"[A-Za-z-]+: ", raw):
	        check_mail(f, BytesParser(policy=policy.default).parsebytes(raw))
	EOP
}

# decoded FILE: the text of mail FILE as a reader shows it (headers and
# body decoded), for greps of the visible escapes.
decoded() {
	python3 - "$1" <<-\EOP
	import mailbox, sys
	from email import policy
	from email.parser import BytesParser
	raw = open(sys.argv[1], "rb").read()
	msgs = ([m.as_bytes() for m in mailbox.mbox(sys.argv[1])]
	        if raw.startswith(b"From ") else [raw])
	for b in msgs:
	    m = BytesParser(policy=policy.default).parsebytes(b)
	    for k, v in m.items():
	        print("%s: %s" % (k, v))
	    print()
	    for part in m.walk():
	        if part.get_content_maintype() == "text":
	            print(part.get_content())
	EOP
}

test_expect_success 'setup: a tree with a hostile file name, posted to a list' '
	notmuch_setup &&
	watch_repo &&
	git -C "$R" checkout -q -b evil main &&
	printf "#include <stdlib.h>\nstruct item { int id; };\nstruct item *item_new(int id)\n{\n\tstruct item *it;\n\n\tit = malloc(sizeof(*it));\n\tit->id = id;\n\treturn it;\n}\n" >"$R/$NAME" &&
	printf "#include <stdlib.h>\nint plain(void)\n{\n\treturn 0;\n}\n" >"$R/plain.c" &&
	git -C "$R" add -A &&
	git -C "$R" commit -q -m "$SUBJ" &&
	printf "int extra;\n" >>"$R/$NAME" &&
	git -C "$R" commit -q -am "evil: touch the file" &&
	git -C "$R" format-patch -q --thread=shallow --to="$LIST" -o "$TMP/a" -1 HEAD~1 &&
	git -C "$R" format-patch -q --thread=shallow --to="$LIST" -o "$TMP/b" -1 HEAD &&
	git -C "$R" checkout -q main &&
	A=$(ls "$TMP"/a/*.patch) && B=$(ls "$TMP"/b/*.patch) &&
	grep -q "^Subject: .*=?UTF-8?" "$A"
'

test_expect_success 'setup: a model whose answers hold DEL, U+009B, U+202E and ESC' '
	cat >"$TMP/s.json" <<-\EOS &&
	{"default": [
	 {"when": "backport", "answer": "YES\n\nIt fixes a crash\u007f \u009b2J \u202eevil\u001b]0;x\u0007 LLM-SAYS."},
	 {"answer": {"findings": [{"file": "plain.c", "line_start": 1, "severity": "high", "category": "leak\u009b", "title": "model title \u001b]52;c;eA==\u0007 \u009b2J \u202eRLO \u007fDEL", "explanation": "why \u001b[2J \u202e \u009b1m \u2066x\u2069", "quote": "#include <stdlib.h>"}]}}
	]}
	EOS
	fake_start "$TMP/s.json" &&
	{
		printf "[review]\n\tquorum = 1\n" &&
		voter m openai mm price-in=1 price-out=2
	} >"$TMP/llm.conf"
'

test_expect_success 'review text: the escape shown, nothing raw, no forged line' '
	run "$QUORUM" review -C "$R" "$A" &&
	test "$rc" = 1 &&
	clean "$TMP/out" "$TMP/err" &&
	test_grep "^    \"evil\\\\e\\]52;c;cHduZWQ=\\\\a\\\\e\\[2J\\\\nx\\\\x9b<U\\+202E>\\.c\":[0-9]" "$TMP/out" &&
	test_grep "<U\\+009B>2J item\\\\e\\]0;t\\\\a <U\\+202E>gnp\\.c <U\\+2066>x<U\\+200F>\\\\x7f" "$TMP/out" &&
	! grep "^x" "$TMP/out"
'

test_expect_success 'review text with the model: its title, category and explanation visible' '
	QUORUM_CONFIG=$TMP/llm.conf run "$QUORUM" review -C "$R" "$A" &&
	test "$rc" = 1 &&
	clean "$TMP/out" "$TMP/err" &&
	test_grep "model title .*<U\\+009B>2J <U\\+202E>RLO" "$TMP/out" &&
	test_grep "why .*<U\\+202E> <U\\+009B>1m <U\\+2066>x<U\\+2069>" "$TMP/out" &&
	test_grep "leak<U\\+009B>" "$TMP/out"
'

test_expect_success 'review --dry-run: the request bodies printed, nothing raw' '
	QUORUM_CONFIG=$TMP/llm.conf run "$QUORUM" review -C "$R" --no-cache --dry-run "$A" &&
	test "$rc" = 0 &&
	test_grep "^request 1: voter m" "$TMP/out" &&
	clean "$TMP/out" "$TMP/err"
'

test_expect_success 'setup: a deletion-only hunk in the hostile file, a tight budget' '
	git -C "$R" checkout -q evil &&
	i=0 &&
	while [ $i -lt 120 ]; do
		echo "/* filler line $i of an old comment block that is deleted */"
		i=$((i + 1))
	done >>"$R/$NAME" &&
	git -C "$R" commit -q -am "evil: a long comment" &&
	git -C "$R" tag base2 &&
	sed -i "/filler line/d" "$R/$NAME" &&
	printf "int more(void)\n{\n\treturn 1;\n}\n" >>"$R/plain.c" &&
	git -C "$R" commit -q -am "evil: drop the comment, add more()" &&
	git -C "$R" format-patch -q -o "$TMP/c" -1 &&
	git -C "$R" checkout -q main &&
	SYS=$(cat "$TOP"/prompts/review.md "$TOP"/prompts/false-positives.md "$TOP"/prompts/schema.json | wc -c) &&
	{
		printf "[review]\n\tquorum = 1\n" &&
		voter m openai mm price-in=1 price-out=2 context-tokens=$(((SYS + 2500) / 4))
	} >"$TMP/tight.conf"
'

test_expect_success 'context left out: the hunk of the hostile file named on one line' '
	QUORUM_CONFIG=$TMP/tight.conf run "$QUORUM" review -C "$R" --base base2 --no-cache "$TMP"/c/*.patch &&
	clean "$TMP/out" "$TMP/err" &&
	test_grep "^context left out of the prompts" "$TMP/out" &&
	test_grep "^  patch 1/1 \\(m\\): deletion-only hunk 1 of evil\\\\e\\]52;c;cHduZWQ=\\\\a\\\\e\\[2J\\\\nx\\\\x9b<U\\+202E>\\.c" "$TMP/out" &&
	! grep "^x" "$TMP/out"
'

test_expect_success 'review --format email: nothing raw as a reader sees it' '
	QUORUM_CONFIG=$TMP/llm.conf run "$QUORUM" review -C "$R" --format email "$A" &&
	test "$rc" = 1 &&
	cp "$TMP/out" "$TMP/reply.eml" &&
	clean "$TMP/reply.eml" "$TMP/err" &&
	decoded "$TMP/reply.eml" >"$TMP/reply.txt" &&
	test_grep "\"evil\\\\e\\]52;c;cHduZWQ=\\\\a\\\\e\\[2J\\\\nx\\\\x9b<U\\+202E>\\.c\":" "$TMP/reply.txt" &&
	test_grep "^Subject: Re: \\[PATCH\\] main: add <U\\+009B>2J" "$TMP/reply.txt" &&
	test_grep "model title .*<U\\+009B>2J <U\\+202E>RLO" "$TMP/reply.txt"
'

test_expect_success 'a patch on a file the base lacks: the error names it visibly' '
	run "$QUORUM" review -C "$R" "$B" &&
	test "$rc" = 2 &&
	clean "$TMP/out" "$TMP/err" &&
	test_line_count = 1 "$TMP/err" &&
	test_grep "evil\\\\e\\]52;c;cHduZWQ=\\\\a\\\\e\\[2J\\\\nx\\\\x9b<U\\+202E>\\.c does not exist in the base" "$TMP/err" &&
	run "$QUORUM" review -C "$R" --format email "$B" &&
	clean "$TMP/out" "$TMP/err" &&
	decoded "$TMP/out" >"$TMP/b.txt" &&
	test_grep "\\\\x9b<U\\+202E>\\.c does not exist in the base" "$TMP/b.txt"
'

test_expect_success 'apply: text and errors, nothing raw' '
	run "$QUORUM" apply -C "$R" "$A" &&
	test "$rc" = 0 &&
	clean "$TMP/out" "$TMP/err" &&
	run "$QUORUM" apply -C "$R" "$B" &&
	test "$rc" = 2 &&
	clean "$TMP/out" "$TMP/err" &&
	test_grep "\\\\x9b<U\\+202E>\\.c does not exist in the base" "$TMP/out" &&
	run "$QUORUM" apply -C "$R" --json "$B" &&
	clean "$TMP/out" "$TMP/err"
'

test_expect_success 'watch: its log and both replies in the outbox, nothing raw' '
	export QUORUM_CONFIG=$TMP/watch.conf &&
	watch_config &&
	maildir_put "$TMP/a" && maildir_put "$TMP/b" &&
	notmuch new --quiet &&
	watch &&
	test "$rc" = 0 &&
	test "$(outbox_count)" = 2 &&
	clean "$TMP/out" "$TMP/err" "$OUTBOX"/new/* &&
	test_grep "<U\\+009B>2J item\\\\e\\]0;t\\\\a" "$TMP/out" &&
	for f in "$OUTBOX"/new/*; do decoded "$f"; done >"$TMP/outbox.txt" &&
	test_grep "\\\\x9b<U\\+202E>\\.c does not exist in the base" "$TMP/outbox.txt" &&
	test_grep "\"evil\\\\e\\]52;c;cHduZWQ=\\\\a\\\\e\\[2J\\\\nx\\\\x9b<U\\+202E>\\.c\":" "$TMP/outbox.txt"
'

test_expect_success 'classify text and email: the subject and the model answer visible' '
	cp "$TMP/llm.conf" "$TMP/cl.conf" &&
	QUORUM_CONFIG=$TMP/cl.conf run "$QUORUM" classify -C "$R" --stable "$A" &&
	test "$rc" = 1 &&
	clean "$TMP/out" "$TMP/err" &&
	test_grep "^yes .* main: add <U\\+009B>2J item.*<U\\+202E>gnp.c <U\\+2066>x<U\\+200F>\\\\x7f" "$TMP/out" &&
	test_grep "crash\\\\x7f <U\\+009B>2J <U\\+202E>evil.* LLM-SAYS" "$TMP/out" &&
	QUORUM_CONFIG=$TMP/cl.conf run "$QUORUM" classify -C "$R" --stable --format email "$A" &&
	test "$rc" = 1 &&
	clean "$TMP/out" "$TMP/err" &&
	decoded "$TMP/out" >"$TMP/cl.txt" &&
	test_grep "crash\\\\x7f <U\\+009B>2J <U\\+202E>evil.* LLM-SAYS" "$TMP/cl.txt" &&
	test_grep "^Subject: \\[PATCH AUTOSEL stable\\] main: add <U\\+009B>2J" "$TMP/cl.txt"
'

test_done
