#!/bin/sh
# A diff carries bytes, not text: a latin-1 file patched in a mail must
# apply byte-exact, as git am does, whatever charset the mail declares.
. "$(dirname "$0")/lib.sh"

# tree_of JSON: the tree of the last patch quorum apply --json applied
tree_of() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["patches"][-1]["tree"])' "$1"
}

test_expect_success 'setup: a latin-1 file and a commit changing it' '
	R=$TMP/repo &&
	git init -q "$R" &&
	printf "caf\351 = 1\nna\357ve = 2\nplain = 3\n" >"$R/latin1.txt" &&
	git -C "$R" add latin1.txt &&
	git -C "$R" commit -q -m "add a latin-1 file" &&
	git -C "$R" tag base &&
	printf "caf\351 = 1\nna\357ve = 20\nplain = 3\nr\351sum\351 = 4\n" >"$R/latin1.txt" &&
	git -C "$R" commit -q -am "change the latin-1 file" &&
	want=$(git -C "$R" rev-parse HEAD^{tree})
'

# 1. As git format-patch sends it (declared UTF-8, latin-1 bytes inside).
test_expect_success 'undeclared 8-bit diff applies' '
	git -C "$R" format-patch -q -o "$TMP/p" -1 HEAD &&
	run "$QUORUM" apply -C "$R" --base base --json "$TMP"/p/*.patch &&
	test "$rc" = 0
'
test_expect_success "tree equals the commit's, byte for byte" '
	test "$(tree_of "$TMP/out")" = "$want"
'

# 2. Declared latin-1, sent as quoted-printable.
test_expect_success 'declared latin-1 quoted-printable diff applies' '
	python3 - "$TMP"/p/*.patch "$TMP/qp.eml" <<-\EOP &&
	import quopri, sys
	raw = open(sys.argv[1], "rb").read()
	head, body = raw.split(b"\n\n", 1)
	head = b"\n".join(l for l in head.split(b"\n")
	                  if not l.lower().startswith((b"content-type", b"content-transfer-encoding", b"mime-version")))
	head += b"\nMIME-Version: 1.0\nContent-Type: text/plain; charset=ISO-8859-1\nContent-Transfer-Encoding: quoted-printable"
	open(sys.argv[2], "wb").write(head + b"\n\n" + quopri.encodestring(body))
	EOP
	run "$QUORUM" apply -C "$R" --base base --json "$TMP/qp.eml" &&
	test "$rc" = 0
'
test_expect_success "quoted-printable latin-1: tree equals the commit's" '
	test "$(tree_of "$TMP/out")" = "$want"
'

# git am agrees on both.
for m in "$TMP"/p/*.patch "$TMP/qp.eml"; do
	test_expect_success "git am agrees on $(basename "$m")" '
		git -C "$R" checkout -q base 2>/dev/null &&
		git -C "$R" am -q "$m" &&
		test "$(git -C "$R" rev-parse HEAD^{tree})" = "$want"
	'
done
git -C "$R" checkout -q base 2>/dev/null

test_done
