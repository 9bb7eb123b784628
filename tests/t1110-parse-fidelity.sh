#!/bin/sh
# Mail fidelity (issue 19): patch mail as `git am` (git mailinfo) and
# patchwork read it. Each case is a real-shaped mail built here from
# `git format-patch` output, rewritten the way a mailer or list sends it;
# where git mailinfo / git am have an answer, the test says whether quorum
# matches it.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip_all "python3 is needed to build mail and read JSON"

# j FILE EXPR: evaluate a python expression over the JSON document d
j() {
	python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$1" "$2" 2>&1
}

# py SCRIPT ARGS...: a python helper over the mails of this test
py() {
	s=$1
	shift
	python3 -c "import base64, sys, re
$s" "$@"
}

R=$TMP/repo
make_repo "$R"
BASE=$(git -C "$R" rev-parse HEAD)

# ---- 1. runs of base64 encoded-words in Subject: and From: ----
# Thunderbird-style: each word holds whole characters; GMime 3.2.13 kept
# only the first word of such a run.
SUBJ='Исправление ошибки в обработке длинных заголовков писем'
NAME='Иван Петрович Сидоров-Длинноименный'
printf '/* %s */\n' "$SUBJ" >>"$R/main.c"
git -C "$R" commit -q -a --author="$NAME <ivan@example.org>" -m "main: $SUBJ" \
	-m "Signed-off-by: $NAME <ivan@example.org>"
git -C "$R" format-patch -q --stdout -1 >"$TMP/cyr.patch"
cat >"$TMP/words.py" <<'PYEOF'
import base64, re, sys
m = open(sys.argv[1], encoding="utf-8").read()
subj, name, out, step = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
def words(t, n, sep):
    if step == 0:  # bytes split anywhere, a character may straddle words
        b = t.encode()
        return sep.join("=?UTF-8?B?%s?=" % base64.b64encode(b[i:i+n]).decode() for i in range(0, len(b), n))
    return sep.join("=?UTF-8?B?%s?=" % base64.b64encode(t[i:i+n].encode()).decode() for i in range(0, len(t), n))
h, b = m.split("\n\n", 1)
h = re.sub(r"(?m)^Subject:.*(\n[ \t].*)*", lambda _: "Subject: " + words("[PATCH] main: " + subj, 13 if step else 23, "\n "), h)
h = re.sub(r"(?m)^From:.*(\n[ \t].*)*", lambda _: "From: " + words(name, 7 if step else 17, " ") + " <ivan@example.org>", h)
open(out, "w", encoding="utf-8").write(h + "\n\n" + b)
PYEOF
python3 "$TMP/words.py" "$TMP/cyr.patch" "$SUBJ" "$NAME" "$TMP/cyr-aligned.eml" 1
python3 "$TMP/words.py" "$TMP/cyr.patch" "$SUBJ" "$NAME" "$TMP/cyr-split.eml" 0
like "$TMP/cyr-aligned.eml" '^ =\?UTF-8\?B\?' "the subject is a run of base64 encoded-words"
for v in aligned split; do
	run "$QUORUM" parse --json "$TMP/cyr-$v.eml"
	is "$(j "$TMP/out" 'd["series"][0]["patches"][0]["title"]')" "main: $SUBJ" \
		"$v words: the whole subject is the title"
	is "$(j "$TMP/out" 'd["series"][0]["patches"][0]["from"]')" \
		"$NAME <ivan@example.org>" "$v words: the whole From: name"
done
# git mailinfo reads the same subject (quorum matches it)
git mailinfo "$TMP/mi-msg" "$TMP/mi-patch" <"$TMP/cyr-aligned.eml" >"$TMP/mi-info"
like "$TMP/mi-info" "^Subject: main: $SUBJ\$" "git mailinfo reads the same subject"
# (git mailinfo 2.39 prints the address as the author for both runs of
# words; git am then commits "ivan@example.org" as the name: quorum keeps
# the name, as patchwork does)
git mailinfo "$TMP/mi-msg" "$TMP/mi-patch" <"$TMP/cyr-split.eml" >"$TMP/mi-info"
like "$TMP/mi-info" "^Subject: main: $SUBJ\$" "git mailinfo: split words, same subject"
git -C "$R" reset -q --hard "$BASE"
run "$QUORUM" apply -C "$R" --store-refs "$TMP/cyr-split.eml"
is "$rc" 0 "the mail applies"
c=$(sed -n 's/^patch 1\/1 applied: commit \([0-9a-f]*\) .*/\1/p' "$TMP/out")
is "$(git -C "$R" log -1 --format='%an|%s' "$c" 2>&1)" "$NAME|main: $SUBJ" \
	"the commit carries the whole name and subject"

# ---- 2. a bogus in-body From: is text, not the author ----
# git's t5100 msg0015: the body opens with "From: bogosity" and a list.
# git mailinfo 2.39 takes it as the author (an empty one: git am fails);
# quorum keeps the mail's own From:, as t5100's info0015 expects, and
# keeps the lines in the message (they are no header).
git -C "$R" reset -q --hard "$BASE"
echo '/* bogus */' >>"$R/main.c"
git -C "$R" commit -q -a -m "main: check bogus body header" \
	-m "From: bogosity
  - a list
  - of stuff"
git -C "$R" format-patch -q --stdout -1 >"$TMP/bogus.eml"
like "$TMP/bogus.eml" '^From: bogosity$' "the body opens with From: bogosity"
git -C "$R" reset -q --hard "$BASE"
run "$QUORUM" parse --json "$TMP/bogus.eml"
is "$(j "$TMP/out" 'd["series"][0]["patches"][0]["from"]')" \
	"A U Thor <author@example.org>" "parse: the author is the mail's From:"
run "$QUORUM" apply -C "$R" --store-refs "$TMP/bogus.eml"
is "$rc" 0 "apply: no 'bad author'"
c=$(sed -n 's/^patch 1\/1 applied: commit \([0-9a-f]*\) .*/\1/p' "$TMP/out")
is "$(git -C "$R" log -1 --format='%an <%ae>' "$c" 2>&1)" \
	"A U Thor <author@example.org>" "apply: the commit's author is the mail's From:"
git -C "$R" log -1 --format=%B "$c" >"$TMP/msg" 2>&1
like "$TMP/msg" '^  - of stuff$' "the list stays in the commit message"
# a real in-body From: still names the author (git am's convention)
sed 's/^From: bogosity$/From: Other Author <other@example.org>\
/' "$TMP/bogus.eml" >"$TMP/inbody.eml"
run "$QUORUM" parse --json "$TMP/inbody.eml"
is "$(j "$TMP/out" 'd["series"][0]["patches"][0]["from"]')" \
	"Other Author <other@example.org>" "a valid in-body From: is the author"
git mailinfo "$TMP/mi-msg" "$TMP/mi-patch" <"$TMP/inbody.eml" >"$TMP/mi-info"
like "$TMP/mi-info" '^Author: Other Author$' "git mailinfo agrees on a valid one"

# ---- 3. CRLF inside a base64 (or quoted-printable) body ----
# The mailer turned the text into CRLF and base64-encoded it, but left a
# line or two (the signature, a final line) with LF; or converted only
# the diff. git am --quoted-cr=strip mends it; quorum always does, since
# git never writes CR on a `diff --git`/`+++` line.
git -C "$R" reset -q --hard "$BASE"
printf '#!/bin/sh\necho hi\n' >"$R/configure"
git -C "$R" add configure && git -C "$R" commit -q -m "add configure"
CBASE=$(git -C "$R" rev-parse HEAD)
echo 'echo bye' >>"$R/configure"
git -C "$R" commit -q -a -m "configure: say bye" -m "Signed-off-by: A U Thor <author@example.org>"
git -C "$R" format-patch -q --stdout -1 >"$TMP/conf.patch"
git -C "$R" reset -q --hard "$CBASE"
for v in all lastlf siglf diffonly qp-siglf; do
	py '
import quopri
m = open(sys.argv[1]).read()
h, b = m.split("\n\n", 1)
v = sys.argv[3]
cte = "quoted-printable" if v.startswith("qp-") else "base64"
h += "\nMIME-Version: 1.0\nContent-Type: text/plain; charset=UTF-8\nContent-Transfer-Encoding: " + cte
v = v.replace("qp-", "")
c = b.replace("\n", "\r\n")
if v == "lastlf":
    c = c[:-2] + "\n"
elif v == "siglf":
    c = c[:c.rindex("-- \r\n")] + c[c.rindex("-- \r\n"):].replace("\r\n", "\n")
elif v == "diffonly":
    i = b.index("diff --git")
    c = b[:i] + b[i:].replace("\n", "\r\n")
if cte == "base64":
    enc = base64.encodebytes(c.encode()).decode()
else:  # a CR before a line end travels as =0D
    enc = ""
    for x in c.splitlines(True):
        crlf = x.endswith("\r\n")
        q = quopri.encodestring(x.rstrip("\r\n").encode()).decode().rstrip("\n")
        enc += q + ("=0D\n" if crlf else "\n")
open(sys.argv[2], "w").write(h + "\n\n" + enc)
' "$TMP/conf.patch" "$TMP/conf-$v.eml" "$v"
	run "$QUORUM" parse --json "$TMP/conf-$v.eml"
	is "$(j "$TMP/out" 'd["series"][0]["patches"][0]["files"]')" "['configure']" \
		"CRLF after transfer decoding ($v): file configure"
	run "$QUORUM" apply -C "$R" "$TMP/conf-$v.eml"
	is "$rc" 0 "CRLF after transfer decoding ($v): applies (no configure\\r)"
done
# CRLF content of a file under an LF message is content: left alone
py '
m = open(sys.argv[1]).read()
h, b = m.split("\n\n", 1)
h += "\nMIME-Version: 1.0\nContent-Type: text/plain; charset=UTF-8\nContent-Transfer-Encoding: base64"
b = b.replace("+echo bye\n", "+echo bye\r\n")
open(sys.argv[2], "w").write(h + "\n\n" + base64.encodebytes(b.encode()).decode())
' "$TMP/conf.patch" "$TMP/conf-content.eml"
run "$QUORUM" apply -C "$R" --store-refs "$TMP/conf-content.eml"
is "$rc" 0 "a CRLF line of content applies"
c=$(sed -n 's/^patch 1\/1 applied: commit \([0-9a-f]*\) .*/\1/p' "$TMP/out")
is "$(git -C "$R" show "$c:configure" | tail -1 | od -An -c | tr -d ' ')" \
	'echobye\r\n' "and keeps its CR, as git am does"

# ---- 8. parse --json carries each patch's commit message as git am commits it ----
git -C "$R" reset -q --hard "$BASE"
echo '/* m1 */' >>"$R/main.c"
git -C "$R" commit -q -a -F - <<'MSG'
main: a title long enough that format-patch folds the subject line when it writes it out

A body paragraph.

Another one, after which come notes and trailers.

Fixes: 0123456789ab ("initial")
Reviewed-by: R E Viewer <r@example.org>
Signed-off-by: A U Thor <author@example.org>
MSG
echo '/* m2 */' >>"$R/main.c"
git -C "$R" commit -q -a -m "main: second" -m "Signed-off-by: A U Thor <author@example.org>"
git -C "$R" format-patch -q --cover-letter --thread -o "$TMP/cm" "$BASE"
# what mailers do to text: trailing blanks, blank runs, blank lines
# before the body, and notes after ---; git am's stripspace undoes them
py '
import glob
for f in sorted(glob.glob(sys.argv[1] + "/000[12]-*.patch")):
    m = open(f).read()
    h, b = m.split("\n\n", 1)
    b = b.replace("A body paragraph.\n\n", "A body paragraph.   \n\n\n\n")
    b = b.replace("\n---\n", "\n---\nv2: a note for reviewers, not for the commit\n\n", 1)
    open(f, "w").write(h + "\n\n\n" + b)
' "$TMP/cm"
cat "$TMP"/cm/*.patch >"$TMP/cm.mbox"
run "$QUORUM" parse --json "$TMP/cm.mbox"
j "$TMP/out" 'd["series"][0]["patches"][0]["commit_message"]' >"$TMP/cm-q1"
j "$TMP/out" 'd["series"][0]["patches"][1]["commit_message"]' >"$TMP/cm-q2"
git clone -q "$R" "$TMP/am" && git -C "$TMP/am" reset -q --hard "$BASE"
git -C "$TMP/am" am -q "$TMP"/cm/0001-*.patch "$TMP"/cm/0002-*.patch
# the raw message of each commit git am made (j's print adds one newline)
for n in 1 2; do
	{ git -C "$TMP/am" cat-file commit "HEAD~$((2 - n))" | sed '1,/^$/d'; echo; } >"$TMP/cm-g$n"
done
ok "$(cmp -s "$TMP/cm-q1" "$TMP/cm-g1"; echo $?)" \
	"commit_message of patch 1 is byte for byte what git am committed"
ok "$(cmp -s "$TMP/cm-q2" "$TMP/cm-g2"; echo $?)" \
	"commit_message of patch 2 is byte for byte what git am committed"
unlike "$TMP/cm-q1" 'a note for reviewers' "notes after --- are not in it"
is "$(j "$TMP/out" 'd["series"][0]["cover"].get("commit_message", "absent")')" "absent" \
	"a cover letter has no commit_message"
# quotes, backslashes, tabs and control bytes come back as they were sent
printf 'From: A <a@example.org>\nSubject: [PATCH] x: odd bytes\nMessage-Id: <odd@example.org>\n\nA \033[31m"quoted" \\ back\001slash\ttab.\n---\ndiff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n' >"$TMP/odd.eml"
run "$QUORUM" parse --json "$TMP/odd.eml"
is "$(j "$TMP/out" 'repr(d["series"][0]["patches"][0]["commit_message"])')" \
	"'x: odd bytes\\n\\nA \\x1b[31m\"quoted\" \\\\ back\\x01slash\\ttab.\\n'" \
	"commit_message: escapes and control bytes survive the JSON"

# ---- 6. binary patches list their files ----
git -C "$R" reset -q --hard "$BASE"
printf 'x\000' >"$R/logo.png"
git -C "$R" add logo.png && git -C "$R" commit -q -m "add logo"
BBASE=$(git -C "$R" rev-parse HEAD)
printf 'y\000' >"$R/logo.png"
printf 'z\000' >"$R/new.png"
echo '/* with images */' >>"$R/main.c"
git -C "$R" add . && git -C "$R" commit -q -m "main: images" -m "Signed-off-by: A U Thor <author@example.org>"
git -C "$R" format-patch -q --stdout -1 >"$TMP/bin-git.eml"
git -C "$R" format-patch -q --stdout --no-binary -1 >"$TMP/bin-nobin.eml"
like "$TMP/bin-git.eml" '^GIT binary patch$' "format-patch writes GIT binary patch"
like "$TMP/bin-nobin.eml" '^Binary files /dev/null and b/new.png differ$' \
	"format-patch --no-binary writes Binary files ... differ"
for v in git nobin; do
	run "$QUORUM" parse --json "$TMP/bin-$v.eml"
	is "$(j "$TMP/out" 'sorted(d["series"][0]["patches"][0]["files"])')" \
		"['logo.png', 'main.c', 'new.png']" "$v: every file, binary ones too"
done
run "$QUORUM" apply -C "$R" --base "$BBASE" "$TMP/bin-git.eml"
is "$rc" 0 "a GIT binary patch applies"
# GNU diff -r and Mercurial (without --git) write one line per binary
# file and no diff header: `git apply` skips them (no data to apply),
# the files list has them (as the diffstat of the change does)
mkdir -p "$TMP/gnu/a" "$TMP/gnu/b"
echo one >"$TMP/gnu/a/notes.txt" && echo two >"$TMP/gnu/b/notes.txt"
printf 'x\000' >"$TMP/gnu/a/logo.png" && printf 'y\000' >"$TMP/gnu/b/logo.png"
printf 'z\000' >"$TMP/gnu/b/new.png"
(cd "$TMP/gnu" && diff -ruN a b) >"$TMP/gnu.diff"
like "$TMP/gnu.diff" '^Binary files a/logo.png and b/logo.png differ$' "GNU diff's binary line"
mkgnu() { # mkgnu OUT: a mail carrying stdin as its diff
	{
		printf 'From: A U Thor <author@example.org>\nSubject: [PATCH] images: update\n'
		printf 'Message-Id: <%s@example.org>\nDate: Tue, 14 Nov 2023 22:13:20 +0000\n\n' "$(basename "$1")"
		printf 'Update the images.\n\nSigned-off-by: A U Thor <author@example.org>\n---\n'
		cat
	} >"$1"
}
mkgnu "$TMP/gnu1.eml" <"$TMP/gnu.diff"
grep '^Binary' "$TMP/gnu.diff" | mkgnu "$TMP/gnu2.eml"
printf 'Binary file images/logo.png has changed\n' | mkgnu "$TMP/hg.eml"
run "$QUORUM" parse --json "$TMP/gnu1.eml"
is "$(j "$TMP/out" 'd["series"][0]["patches"][0]["files"]')" \
	"['logo.png', 'new.png', 'notes.txt']" "GNU diff -r: text and binary files, in order"
run "$QUORUM" parse --json "$TMP/gnu2.eml"
is "$(j "$TMP/out" '[len(d["series"]), d["series"][0]["patches"][0]["files"]]')" \
	"[1, ['logo.png', 'new.png']]" "GNU diff -r, binary files only: still a patch"
run "$QUORUM" parse --json "$TMP/hg.eml"
is "$(j "$TMP/out" 'd["series"][0]["patches"][0]["files"]')" \
	"['images/logo.png']" "Mercurial's Binary file ... has changed"
# a sentence in a commit message is no diff
printf 'From: A <a@example.org>\nSubject: [PATCH] doc\nMessage-Id: <prose@example.org>\n\nBinary files that differ are skipped.\n---\n' >"$TMP/prose.eml"
sed -n '/^diff -ruN/,$p' "$TMP/gnu.diff" | grep -v '^Binary' >>"$TMP/prose.eml"
run "$QUORUM" parse --json "$TMP/prose.eml"
is "$(j "$TMP/out" 'd["series"][0]["patches"][0]["files"]')" "['notes.txt']" \
	"prose about binary files is not a diff"

# ---- 4. "Re:" with an in-body Subject: [PATCH] and a diff is a new patch ----
# git am takes the in-body Subject: as the title; patchwork files such a
# mail as a patch. A "Re:" with a diff and no such line stays a reply.
git -C "$R" reset -q --hard "$BASE"
for i in 1 2; do
	echo "/* s$i */" >>"$R/main.c"
	git -C "$R" commit -q -a -m "main: step $i" -m "Signed-off-by: A U Thor <author@example.org>"
done
git -C "$R" format-patch -q --cover-letter --thread -o "$TMP/re" "$BASE"
p2=$(sed -n 's/^Message-I[dD]: <\(.*\)>$/\1/p' "$TMP"/re/0002-*.patch)
cov=$(sed -n 's/^Message-I[dD]: <\(.*\)>$/\1/p' "$TMP"/re/0000-*.patch)
git -C "$R" reset -q --hard HEAD~1
echo "/* s2, done better */" >>"$R/main.c"
git -C "$R" commit -q -a -m "main: step 2, done better" -m "Signed-off-by: A U Thor <author@example.org>"
git -C "$R" format-patch -q --stdout -1 >"$TMP/re-new.patch"
# mkre OUT INBODY: a reply to patch 2/2 whose body is the new patch,
# opening with an in-body Subject: when INBODY is 1
mkre() {
	py '
m = open(sys.argv[1]).read()
h, b = m.split("\n\n", 1)
subj = re.search(r"(?m)^Subject: (.*(\n[ \t].*)*)", h).group(1).replace("\n", "")
h = re.sub(r"(?m)^Subject: .*(\n[ \t].*)*", "Subject: Re: [PATCH 2/2] main: step 2", h)
h = re.sub(r"(?m)^Message-I[dD]: .*", "Message-ID: <re-%s@example.org>" % sys.argv[3], h)
h = h.replace("\nDate:", "\nIn-Reply-To: <%s>\nReferences: <%s> <%s>\nDate:" % (sys.argv[4], sys.argv[5], sys.argv[4]), 1)
if sys.argv[3] == "1":
    b = "Subject: " + subj + "\n\n" + b
open(sys.argv[2], "w").write(h + "\n\n" + b)
' "$TMP/re-new.patch" "$1" "$2" "$p2" "$cov"
}
mkre "$TMP/re-inbody.eml" 1
mkre "$TMP/re-plain.eml" 0
like "$TMP/re-inbody.eml" '^Subject: \[PATCH\] main: step 2, done better$' "the reply opens with an in-body Subject:"
cat "$TMP"/re/*.patch "$TMP/re-inbody.eml" >"$TMP/re1.mbox"
run "$QUORUM" parse --json "$TMP/re1.mbox"
is "$(j "$TMP/out" '[(s["total"], len(s["patches"])) for s in d["series"]]')" "[(2, 2), (1, 1)]" \
	"in-body Subject: the series, and a new one-patch series"
is "$(j "$TMP/out" 'd["series"][1]["patches"][0]["title"]')" "main: step 2, done better" \
	"its title is the in-body Subject:"
is "$(j "$TMP/out" 'd["series"][1]["patches"][0]["subject"]')" "Re: [PATCH 2/2] main: step 2" \
	"its subject stays the mail's"
is "$(j "$TMP/out" 'len(d["others"])')" 0 "nothing left as a reply"
git mailinfo "$TMP/mi-msg" "$TMP/mi-patch" <"$TMP/re-inbody.eml" >"$TMP/mi-info"
like "$TMP/mi-info" '^Subject: main: step 2, done better$' "git mailinfo takes the same title"
cat "$TMP"/re/*.patch "$TMP/re-plain.eml" >"$TMP/re2.mbox"
run "$QUORUM" parse --json "$TMP/re2.mbox"
is "$(j "$TMP/out" '[len(d["series"]), len(d["others"])]')" "[1, 1]" \
	"a Re: with a diff and no in-body Subject: stays a reply (in others)"
# an in-body Subject: in a Re: with no diff: still a reply
py '
m = open(sys.argv[1]).read()
open(sys.argv[2], "w").write(m[:m.index("\n---\n")] + "\n")
' "$TMP/re-inbody.eml" "$TMP/re-nodiff.eml"
cat "$TMP"/re/*.patch "$TMP/re-nodiff.eml" >"$TMP/re3.mbox"
run "$QUORUM" parse --json "$TMP/re3.mbox"
is "$(j "$TMP/out" '[len(d["series"]), [o["kind"] for o in d["others"]]]')" "[1, ['reply']]" \
	"an in-body Subject: without a diff stays a reply"

# ---- 5. series numbering forms ----
git -C "$R" reset -q --hard "$BASE"
for i in 1 2 3; do
	echo "/* n$i */" >>"$R/main.c"
	git -C "$R" commit -q -a -m "main: number $i" -m "Signed-off-by: A U Thor <author@example.org>"
done
# Mercurial's patchbomb: "[PATCH 1 of 2]" (b4 0.12 reads only patch 1)
git -C "$R" format-patch -q --cover-letter --thread -o "$TMP/hg" "$BASE..HEAD~1"
sed -i 's/^Subject: \[PATCH \([0-9]\)\/2\]/Subject: [PATCH \1 of 2]/' "$TMP"/hg/*.patch
like "$TMP/hg/0001-main-number-1.patch" '^Subject: \[PATCH 1 of 2\]' "Mercurial-style subject"
cat "$TMP"/hg/*.patch >"$TMP/hg.mbox"
run "$QUORUM" parse --json "$TMP/hg.mbox"
is "$(j "$TMP/out" '[(s["total"], s["complete"], [p["index"] for p in s["patches"]], s["cover"] is not None) for s in d["series"]]')" \
	"[(2, True, [1, 2], True)]" "[PATCH n of 2]: one complete series with its cover"
# an extra "[PATCH 3/2]" sent into the thread of a 2-patch series
git -C "$R" format-patch -q --cover-letter --thread -o "$TMP/ex" "$BASE..HEAD~1"
cov=$(sed -n 's/^Message-I[dD]: <\(.*\)>$/\1/p' "$TMP"/ex/0000-*.patch)
git -C "$R" format-patch -q --stdout -1 --subject-prefix=PATCH \
	--in-reply-to="$cov" >"$TMP/ex3.eml"
sed -i 's/^Subject: \[PATCH\] /Subject: [PATCH 3\/2] /' "$TMP/ex3.eml"
like "$TMP/ex3.eml" '^Subject: \[PATCH 3/2\] main: number 3' "an extra 3/2 in the thread"
cat "$TMP"/ex/*.patch "$TMP/ex3.eml" >"$TMP/ex.mbox"
run "$QUORUM" parse --json "$TMP/ex.mbox"
is "$(j "$TMP/out" '[(s["total"], s["complete"], [p["title"] for p in s["patches"]]) for s in d["series"]]')" \
	"[(3, True, ['main: number 1', 'main: number 2', 'main: number 3'])]" \
	"[PATCH 3/2]: the third patch of that series"
is "$(j "$TMP/out" 'd["errors"]')" "[]" "and no 'beyond the total' error"
run "$QUORUM" apply -C "$R" --base "$BASE" "$TMP/ex.mbox"
is "$rc" 0 "the three patches apply in order"
like "$TMP/out" '^patch 3/3 applied' "patch 3 is applied last"
# a cover letter "v3 0/2" whose patches say "1/2", "2/2" (no version)
git -C "$R" format-patch -q -v3 --cover-letter --thread -o "$TMP/v3" "$BASE..HEAD~1"
sed -i 's/^Subject: \[PATCH v3 \([12]\/2\)\]/Subject: [PATCH \1]/' "$TMP"/v3/v3-000[12]-*.patch
like "$TMP/v3/v3-0001-main-number-1.patch" '^Subject: \[PATCH 1/2\]' "patches without the version"
like "$TMP/v3/v3-0000-cover-letter.patch" '^Subject: \[PATCH v3 0/2\]' "a cover with it"
cat "$TMP"/v3/*.patch >"$TMP/v3.mbox"
run "$QUORUM" parse --json "$TMP/v3.mbox"
is "$(j "$TMP/out" '[(s["version"], s["total"], s["complete"], s["cover"] is not None) for s in d["series"]]')" \
	"[(3, 2, True, True)]" "one v3 series with its cover"
is "$(j "$TMP/out" 'len(d["others"])')" 0 "the cover is not left over"
# the same with no threading at all (sent one by one): sender, total, time
git -C "$R" format-patch -q -v3 --cover-letter --no-thread -o "$TMP/v3u" "$BASE..HEAD~1"
sed -i 's/^Subject: \[PATCH v3 \([12]\/2\)\]/Subject: [PATCH \1]/' "$TMP"/v3u/v3-000[12]-*.patch
cat "$TMP"/v3u/*.patch >"$TMP/v3u.mbox"
unlike "$TMP/v3u.mbox" '^In-Reply-To:' "no threading"
run "$QUORUM" parse --json "$TMP/v3u.mbox"
is "$(j "$TMP/out" '[(s["version"], s["total"], s["complete"], s["cover"] is not None) for s in d["series"]]')" \
	"[(3, 2, True, True)]" "unthreaded: still one v3 series with its cover"

# ---- 7. a series sent twice in its own thread ----
# (same patches, no version, the second posting in reply to the first):
# two postings of one series, the later marked as the resend, reviewed
# once. git am / b4 am take one copy of each patch; so does review.
git -C "$R" reset -q --hard "$BASE"
for i in 1 2; do
	echo "/* r$i */" >>"$R/main.c"
	git -C "$R" commit -q -a -m "main: resent $i" -m "Signed-off-by: A U Thor <author@example.org>"
done
RS=$(git -C "$R" rev-parse HEAD)
git -C "$R" format-patch -q --cover-letter --thread -o "$TMP/rs1" "$BASE"
cov1=$(sed -n 's/^Message-I[dD]: <\(.*\)>$/\1/p' "$TMP"/rs1/0000-*.patch)
# format-patch's message-ids hold the time: make the second posting's own
git -C "$R" format-patch -q --cover-letter --thread --in-reply-to="$cov1" \
	-o "$TMP/rs2" "$BASE"
# ... and the same cover id when the two runs fell in different seconds.
cov2=$(sed -n 's/^Message-I[dD]: <\(.*\)>$/\1/p' "$TMP"/rs2/0000-*.patch)
sed -i "s/$cov2/$cov1/g" "$TMP"/rs2/*.patch
sed -i 's/^\(Message-I[dD]: <\)\([^>]*\)>/\1r2.\2>/; s/^\(In-Reply-To: <\)\(cover\)/\1r2.\2/; s/^\(References: .* <\)\(cover\)/\1r2.\2/' \
	"$TMP"/rs2/*.patch
sed -i 's/^\(In-Reply-To: <\)r2\./\1/' "$TMP"/rs2/0000-*.patch
sed -i 's/^\(References: <\)r2\./\1/' "$TMP"/rs2/0000-*.patch
cat "$TMP"/rs1/*.patch "$TMP"/rs2/*.patch >"$TMP/rs.mbox"
run "$QUORUM" parse --json "$TMP/rs.mbox"
is "$(j "$TMP/out" '[(len(s["patches"]), s["cover"] is not None, s["superseded"], s["repost_of"], s["resend"]) for s in d["series"]]')" \
	"[(2, True, False, None, False), (2, True, True, 0, True)]" \
	"two postings; the later is the resend, the earlier the one reviewed"
is "$(j "$TMP/out" 'd["errors"]')" "[]" "no 'sent twice' errors"
is "$(j "$TMP/out" 'd["series"][1]["cover"]["message_id"]')" "r2.$cov1" "the resend's own cover"
run "$QUORUM" parse "$TMP/rs.mbox"
like "$TMP/out" '^series 2: v1, 2 patches, complete \(a resend: the patches of series 1 again; reviewed there\)$' \
	"text: series 2 is the resend"
git -C "$R" reset -q --hard "$BASE"
run "$QUORUM" review -C "$R" --format json "$TMP/rs.mbox"
is "$(j "$TMP/out" '[r["series"]["cover_message_id"] for r in d["reviews"]]')" "['$cov1']" \
	"review: one review, of the first posting"
# without a cover: each patch of the second posting answers its twin
git -C "$R" format-patch -q --thread -o "$TMP/tw1" "$BASE..$RS"
for n in 1 2; do
	f=$(ls "$TMP"/tw1/000$n-*.patch)
	id=$(sed -n 's/^Message-I[dD]: <\(.*\)>$/\1/p' "$f")
	sed -e "s/^Message-I[dD]: <\(.*\)>/Message-ID: <tw2.\1>/" \
		-e '/^In-Reply-To:/d; /^References:/d' \
		-e "s/^Date: /In-Reply-To: <$id>\nReferences: <$id>\nDate: /" \
		"$f" >"$TMP/tw2-$n.eml"
done
cat "$TMP"/tw1/*.patch "$TMP"/tw2-*.eml >"$TMP/tw.mbox"
run "$QUORUM" parse --json "$TMP/tw.mbox"
is "$(j "$TMP/out" '[(len(s["patches"]), s["superseded"], s["repost_of"], s["resend"]) for s in d["series"]]')" \
	"[(2, False, None, False), (2, True, 0, True)]" \
	"no cover, each patch answering its twin: the same two postings"
# the first posting lost a patch: the complete resend is the one reviewed
cat "$TMP"/rs1/0000-*.patch "$TMP"/rs1/0001-*.patch "$TMP"/rs2/*.patch >"$TMP/rs-lost.mbox"
run "$QUORUM" parse --json "$TMP/rs-lost.mbox"
is "$(j "$TMP/out" '[(s["complete"], s["superseded"], s["repost_of"], s["resend"]) for s in d["series"]]')" \
	"[(False, True, None, False), (True, False, 0, True)]" \
	"an incomplete first posting: the complete resend replaces it"
# sent again with a change but no new version: a repost, not a resend;
# it replaces the first posting as a new version would
sed -i 's/^+\/\* r2 \*\/$/+\/* r2, changed *\//' "$TMP"/rs2/0002-*.patch
cat "$TMP"/rs1/*.patch "$TMP"/rs2/*.patch >"$TMP/rs-changed.mbox"
run "$QUORUM" parse --json "$TMP/rs-changed.mbox"
is "$(j "$TMP/out" '[(s["superseded"], s["repost_of"], s["resend"]) for s in d["series"]]')" \
	"[(True, None, False), (False, 0, False)]" \
	"changed and sent again: a repost that replaces the first posting"
git -C "$R" reset -q --hard "$BASE"
run "$QUORUM" review -C "$R" --format json "$TMP/rs-changed.mbox"
is "$(j "$TMP/out" '[r["series"]["cover_message_id"] for r in d["reviews"]]')" "['r2.$cov1']" \
	"review: the changed posting only"

done_testing
