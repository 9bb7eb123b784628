#!/bin/sh
# A diff carries bytes, not text: a latin-1 file patched in a mail must
# apply byte-exact, as git am does, whatever charset the mail declares.
. "$(dirname "$0")/lib.sh"

R=$TMP/repo
git init -q "$R"
printf 'caf\351 = 1\nna\357ve = 2\nplain = 3\n' >"$R/latin1.txt"
git -C "$R" add latin1.txt && git -C "$R" commit -q -m "add a latin-1 file"
git -C "$R" tag base
printf 'caf\351 = 1\nna\357ve = 20\nplain = 3\nr\351sum\351 = 4\n' >"$R/latin1.txt"
git -C "$R" commit -q -am "change the latin-1 file"
want=$(git -C "$R" rev-parse HEAD^{tree})

# 1. As git format-patch sends it (declared UTF-8, latin-1 bytes inside).
git -C "$R" format-patch -q -o "$TMP/p" -1 HEAD
run "$QUORUM" apply -C "$R" --base base --json "$TMP"/p/*.patch
is "$rc" 0 "undeclared 8-bit diff applies"
tree=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["patches"][-1]["tree"])' "$TMP/out" 2>/dev/null)
is "$tree" "$want" "tree equals the commit's, byte for byte"

# 2. Declared latin-1, sent as quoted-printable.
python3 - "$TMP"/p/*.patch "$TMP/qp.eml" <<'EOP'
import quopri, sys
raw = open(sys.argv[1], "rb").read()
head, body = raw.split(b"\n\n", 1)
head = b"\n".join(l for l in head.split(b"\n")
                  if not l.lower().startswith((b"content-type", b"content-transfer-encoding", b"mime-version")))
head += b"\nMIME-Version: 1.0\nContent-Type: text/plain; charset=ISO-8859-1\nContent-Transfer-Encoding: quoted-printable"
open(sys.argv[2], "wb").write(head + b"\n\n" + quopri.encodestring(body))
EOP
run "$QUORUM" apply -C "$R" --base base --json "$TMP/qp.eml"
is "$rc" 0 "declared latin-1 quoted-printable diff applies"
tree=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["patches"][-1]["tree"])' "$TMP/out" 2>/dev/null)
is "$tree" "$want" "quoted-printable latin-1: tree equals the commit's"

# git am agrees on both.
git -C "$R" checkout -q base 2>/dev/null
for m in "$TMP"/p/*.patch "$TMP/qp.eml"; do
	git -C "$R" am -q "$m" >/dev/null 2>&1
	is "$(git -C "$R" rev-parse HEAD^{tree})" "$want" "git am agrees on $(basename "$m")"
	git -C "$R" checkout -q base 2>/dev/null
done

done_testing
