#!/bin/sh
# quorum parse: series from real git format-patch output (cover letters,
# shallow and deep threads, v2 in reply to v1, gaps, shuffled order,
# follow-up trailers), the text and JSON forms, and bad input.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip_all "python3 is needed to read JSON"

# j FILE EXPR: evaluate a python expression over the JSON document d
j() {
	python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$1" "$2" 2>&1
}

R=$TMP/repo
make_repo "$R"
for i in 1 2 3; do
	printf 'int f%d(void)\n{\n\treturn %d;\n}\n' "$i" "$i" >"$R/f$i.c"
	git -C "$R" add "f$i.c"
	git -C "$R" commit -q -s -m "f$i: add f$i

From upstream commit 0123456789ab, a body line git does not escape.

Reviewed-by: R E Viewer <r@example.org>"
done

# v1: cover letter, shallow thread, base-commit
git -C "$R" format-patch -q --cover-letter --thread --base=HEAD~3 \
	-o "$TMP/v1" HEAD~3
cat "$TMP"/v1/*.patch >"$TMP/v1.mbox"

run "$QUORUM" parse --json "$TMP/v1.mbox"
is "$rc" 0 "parse --json exits 0 on a series"
cp "$TMP/out" "$TMP/v1.json"
is "$(j "$TMP/v1.json" 'len(d["series"])')" 1 "one series"
is "$(j "$TMP/v1.json" 'd["series"][0]["total"]')" 3 "total 3"
is "$(j "$TMP/v1.json" 'd["series"][0]["version"]')" 1 "version 1"
is "$(j "$TMP/v1.json" 'd["series"][0]["complete"]')" True "complete"
is "$(j "$TMP/v1.json" 'd["series"][0]["missing"]')" "[]" "nothing missing"
is "$(j "$TMP/v1.json" 'd["series"][0]["cover"]["subject"]')" \
	"[PATCH 0/3] *** SUBJECT HERE ***" "cover subject"
cover_id=$(j "$TMP/v1.json" 'd["series"][0]["cover"]["message_id"]')
like "$TMP/v1/0000-cover-letter.patch" "^Message-I[dD]: <$cover_id>" \
	"cover message-id without <>"
is "$(j "$TMP/v1.json" '[p["index"] for p in d["series"][0]["patches"]]')" \
	"[1, 2, 3]" "patches 1..3"
is "$(j "$TMP/v1.json" '[p["title"] for p in d["series"][0]["patches"]]')" \
	"['f1: add f1', 'f2: add f2', 'f3: add f3']" "titles"
is "$(j "$TMP/v1.json" 'd["series"][0]["patches"][1]["files"]')" \
	"['f2.c']" "files touched"
is "$(j "$TMP/v1.json" 'd["series"][0]["patches"][0]["from"]')" \
	"A U Thor <author@example.org>" "author"
is "$(j "$TMP/v1.json" '[(t["key"], t["value"]) for t in d["series"][0]["patches"][0]["trailers"]]')" \
	"[('Reviewed-by', 'R E Viewer <r@example.org>'), ('Signed-off-by', 'C O Mitter <committer@example.org>')]" \
	"trailers in order"
is "$(j "$TMP/v1.json" 'd["series"][0]["patches"][2]["base_commit"]')" \
	"$(git -C "$R" rev-parse HEAD~3)" "base-commit"
is "$(j "$TMP/v1.json" 'd["errors"]')" "[]" "no errors"
is "$(j "$TMP/v1.json" 'sorted(d["series"][0]["patches"][0].keys())')" \
	"['base_commit', 'change_id', 'commit_message', 'date', 'files', 'followups', 'from', 'index', 'message_id', 'prerequisites', 'sender', 'subject', 'title', 'trailers']" \
	"patch fields of the documented schema"
is "$(j "$TMP/v1.json" 'sorted(d["series"][0]["cover"].keys())')" \
	"['change_id', 'from', 'message_id', 'prerequisites', 'subject']" \
	"cover fields of the documented schema"

# text form
run "$QUORUM" parse "$TMP/v1.mbox"
is "$rc" 0 "text form exits 0"
like "$TMP/out" "^series 1: v1, 3 patches, complete$" "text: series line"
like "$TMP/out" "^  cover: \[PATCH 0/3\]" "text: cover"
like "$TMP/out" "^  \[2/3\] f2: add f2$" "text: patch line"
like "$TMP/out" "files: f2.c$" "text: files"
like "$TMP/out" "base-commit: [0-9a-f]{40}$" "text: base-commit"

# standard input
run sh -c "\"$QUORUM\" parse --json - <\"$TMP/v1.mbox\""
is "$(j "$TMP/out" 'd["series"][0]["total"]')" 3 "reads - (standard input)"

# shuffled order, and a patch missing
cat "$TMP/v1/0003-"*.patch "$TMP/v1/0001-"*.patch \
	"$TMP/v1/0000-"*.patch "$TMP/v1/0002-"*.patch >"$TMP/shuffled.mbox"
run "$QUORUM" parse --json "$TMP/shuffled.mbox"
is "$(j "$TMP/out" '[p["title"] for p in d["series"][0]["patches"]]')" \
	"['f1: add f1', 'f2: add f2', 'f3: add f3']" "shuffled: patches in order"
cat "$TMP/v1/0000-"*.patch "$TMP/v1/0001-"*.patch \
	"$TMP/v1/0003-"*.patch >"$TMP/gap.mbox"
run "$QUORUM" parse --json "$TMP/gap.mbox"
is "$rc" 0 "an incomplete series still exits 0"
is "$(j "$TMP/out" 'd["series"][0]["complete"]')" False "gap: incomplete"
is "$(j "$TMP/out" 'd["series"][0]["missing"]')" "[2]" "gap: 2 is missing"
is "$(j "$TMP/out" '[p["index"] for p in d["series"][0]["patches"]]')" \
	"[1, 3]" "gap: the present patches"
run "$QUORUM" parse "$TMP/gap.mbox"
like "$TMP/out" "incomplete, missing 2$" "text: missing numbers"

# deep threading: each patch replies to the previous one
GIT_COMMITTER_DATE="1700000100 +0000" git -C "$R" format-patch -q --stdout \
	--cover-letter --thread=deep HEAD~3 >"$TMP/deep.mbox"
run "$QUORUM" parse --json "$TMP/deep.mbox"
is "$(j "$TMP/out" 'len(d["series"])')" 1 "deep: one series"
is "$(j "$TMP/out" 'd["series"][0]["complete"]')" True "deep: complete"

# v2 posted in reply to v1's cover letter, same mbox, and as two FILEs
git -C "$R" commit -q --amend -m "f3: add f3 (v2)"
GIT_COMMITTER_DATE="1700000200 +0000" git -C "$R" format-patch -q --stdout \
	--cover-letter --thread -v2 --in-reply-to="$cover_id" HEAD~3 \
	>"$TMP/v2.mbox"
cat "$TMP/v1.mbox" "$TMP/v2.mbox" >"$TMP/both.mbox"
run "$QUORUM" parse --json "$TMP/both.mbox"
is "$(j "$TMP/out" 'len(d["series"])')" 2 "v1 + v2: two series"
is "$(j "$TMP/out" '[(s["version"], s["superseded"]) for s in d["series"]]')" \
	"[(1, True), (2, False)]" "v1 superseded by v2"
is "$(j "$TMP/out" 'd["series"][1]["patches"][2]["title"]')" \
	"f3: add f3 (v2)" "v2 patches belong to v2"
run "$QUORUM" parse --json "$TMP/v2.mbox" "$TMP/v1.mbox"
is "$(j "$TMP/out" '[(s["version"], s["superseded"], s["complete"]) for s in d["series"]]')" \
	"[(1, True, True), (2, False, True)]" "two FILEs: one set, oldest first"

# follow-up trailers from replies; quoted lines are not trailers
p2_id=$(j "$TMP/v1.json" 'd["series"][0]["patches"][1]["message_id"]')
cat >"$TMP/reply.mbox" <<EOF
From reviewer@example.org Mon Nov 13 00:00:00 2023
From: Re Viewer <rv@example.org>
Subject: Re: [PATCH 2/3] f2: add f2
Date: Tue, 14 Nov 2023 22:13:20 +0000
Message-Id: <reply-1@example.org>
In-Reply-To: <$p2_id>
References: <$cover_id> <$p2_id>

> Reviewed-by: Not Me <quoted@example.org>
> +	return 2;

Looks right.

Tested-by: Re Viewer <rv@example.org>

From reviewer@example.org Mon Nov 13 00:00:00 2023
From: Ack Er <ack@example.org>
Subject: Re: [PATCH 0/3] *** SUBJECT HERE ***
Date: Tue, 14 Nov 2023 22:13:21 +0000
Message-Id: <reply-2@example.org>
In-Reply-To: <$cover_id>
References: <$cover_id>

For the series:
Acked-by: Ack Er <ack@example.org>
EOF
cat "$TMP/v1.mbox" "$TMP/reply.mbox" >"$TMP/thread.mbox"
run "$QUORUM" parse --json "$TMP/thread.mbox"
is "$(j "$TMP/out" '[(t["key"], t["value"]) for t in d["series"][0]["patches"][1]["followups"]]')" \
	"[('Tested-by', 'Re Viewer <rv@example.org>')]" "follow-up on patch 2"
is "$(j "$TMP/out" 'd["series"][0]["patches"][0]["followups"]')" "[]" \
	"no follow-up on patch 1"
is "$(j "$TMP/out" '[(t["key"], t["value"]) for t in d["series"][0]["followups"]]')" \
	"[('Acked-by', 'Ack Er <ack@example.org>')]" "follow-up on the cover"
is "$(j "$TMP/out" 'len(d["others"])')" 2 "replies are others"
is "$(j "$TMP/out" 'len(d["series"])')" 1 "replies make no series"

# mboxrd input with >From escaping, CRLF line ends, a maildir
sed 's/^From upstream/>From upstream/' "$TMP/v1.mbox" >"$TMP/rd.mbox"
run "$QUORUM" parse --json "$TMP/rd.mbox"
is "$(j "$TMP/out" 'd["series"][0]["complete"]')" True "mboxrd: complete"
sed 's/$/\r/' "$TMP/v1.mbox" >"$TMP/crlf.mbox"
run "$QUORUM" parse --json "$TMP/crlf.mbox"
is "$(j "$TMP/out" '[p["title"] for p in d["series"][0]["patches"]]')" \
	"['f1: add f1', 'f2: add f2', 'f3: add f3']" "CRLF: titles"
mkdir -p "$TMP/md/cur" "$TMP/md/new" "$TMP/md/tmp"
n=0
for f in "$TMP"/v1/*.patch; do
	n=$((n + 1))
	cp "$f" "$TMP/md/new/17000000$n.M1P1.host"
done
run "$QUORUM" parse --json "$TMP/md"
is "$(j "$TMP/out" '(len(d["series"]), d["series"][0]["complete"])')" \
	"(1, True)" "maildir: one complete series"

# a single unnumbered patch is a series of one
git -C "$R" format-patch -q --stdout -1 >"$TMP/one.mbox"
run "$QUORUM" parse --json "$TMP/one.mbox"
is "$(j "$TMP/out" '(d["series"][0]["total"], d["series"][0]["complete"], d["series"][0]["cover"])')" \
	"(1, True, None)" "single patch: total 1, complete, no cover"

# bad input: one line on stderr, exit 2, nothing crashes
: >"$TMP/empty"
run "$QUORUM" parse "$TMP/empty"
is "$rc" 2 "empty file: exit 2"
is "$(lines "$TMP/err")" 1 "empty file: one line"
like "$TMP/err" "empty" "empty file: says so"
run "$QUORUM" parse "$TMP/does-not-exist"
is "$rc" 2 "missing file: exit 2"
like "$TMP/err" "cannot read .*does-not-exist" "missing file: named"
head -c 4096 /dev/urandom >"$TMP/blob"
run "$QUORUM" parse "$TMP/blob"
is "$rc" 2 "binary blob: exit 2"
is "$(lines "$TMP/err")" 1 "binary blob: one line"
printf 'From: a@example.org\nSubject: hello\n\njust text\n' >"$TMP/text.eml"
run "$QUORUM" parse "$TMP/text.eml"
is "$rc" 2 "mail with no patch: exit 2"
like "$TMP/err" "no patch" "mail with no patch: says so"
run "$QUORUM" parse --json "$TMP/v1.mbox" "$TMP/empty"
is "$rc" 2 "an empty FILE among several: exit 2"
run "$QUORUM" parse
is "$rc" 2 "no FILE: exit 2"
run "$QUORUM" parse --frobnicate "$TMP/v1.mbox"
is "$rc" 2 "unknown option: exit 2"
run "$QUORUM" parse --help
is "$rc" 0 "--help exits 0"
like "$TMP/out" "contrib/parse-json.md" "--help names the JSON schema"

# Terminal escapes in mail (an ESC in a subject, a C1 CSI encoded with
# RFC 2047, a folded header's newline) never reach the terminal as is.
CSI=$(printf '\302\233')
cat >"$TMP/esc.mbox" <<EOM
From x@y Thu Jan  1 00:00:00 1970
From: =?utf-8?b?$(printf 'Eve \302\2332J' | base64)?= <eve@example.org>
Subject: [PATCH] =?utf-8?b?$(printf 'a: \302\2332J\033]0;pwned\007title' | base64)?=
Message-Id: <esc.1@example.org>
Date: Thu, 1 Jan 2026 00:00:00 +0000

x
---
diff --git a/a.c b/a.c
--- a/a.c
+++ b/a.c
@@ -1 +1 @@
-a
+b
EOM
run "$QUORUM" parse "$TMP/esc.mbox"
is "$rc" 0 "a subject with escapes parses"
ok "$(! grep -q "$(printf '\033')" "$TMP/out"; echo $?)" "no ESC byte in parse's text output"
ok "$(! grep -q "$CSI" "$TMP/out"; echo $?)" "no C1 CSI in parse's text output"
like "$TMP/out" 'a: <U\+009B>2J\\e\]0;pwned\\atitle' "the escapes are shown as <U+009B>, \\e, \\a"

done_testing
