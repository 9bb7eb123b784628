#!/bin/sh
# quorum ci: consecutive commits are one series only when they really
# are (one author, and a shared subject topic or the merge of a posted
# series), not a run of unrelated commits; SARIF's series names the
# finding's own series; no "(--base)" when no --base was given.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip_all "python3 is needed to check JSON"

# titles JSON: the patch titles of each review, one review a line.
titles() {
	python3 -c '
import json, sys
for r in json.load(open(sys.argv[1]))["reviews"]:
    print(" | ".join(p["title"] for p in r["patches"]))
' "$1"
}

test_expect_success 'setup: unrelated commits, then a series of one author' '
	R=$TMP/repo &&
	make_repo "$R" &&
	git -C "$R" tag base &&
	echo "int a;" >"$R/a.c" && git -C "$R" add a.c &&
	git -C "$R" commit -q -m "lib: add a" &&
	echo "docs" >"$R/README" && git -C "$R" add README &&
	GIT_AUTHOR_EMAIL=other@example.org git -C "$R" commit -q -m "docs: add a README" &&
	commit_item_new "$R" "main: add item_new()" &&
	git -C "$R" tag unrelated &&
	echo "int b;" >>"$R/a.c" &&
	git -C "$R" commit -q -am "lib: add b" &&
	echo "int c;" >>"$R/a.c" &&
	git -C "$R" commit -q -am "lib: add c" &&
	git -C "$R" tag topic
'

test_expect_success 'three unrelated commits are three series' '
	run "$QUORUM" ci -C "$R" --range base..unrelated --format json &&
	test "$rc" = 1 &&
	titles "$TMP/out" >"$TMP/got" &&
	printf "%s\n" "lib: add a" "docs: add a README" "main: add item_new()" >"$TMP/want" &&
	test_cmp "$TMP/want" "$TMP/got"
'

test_expect_success 'one author, one topic: one series' '
	run "$QUORUM" ci -C "$R" --range unrelated..topic --format json &&
	titles "$TMP/out" >"$TMP/got" &&
	echo "lib: add b | lib: add c" >"$TMP/want" &&
	test_cmp "$TMP/want" "$TMP/got"
'

test_expect_success 'the same topic from another author is another series' '
	git -C "$R" checkout -q -b two topic &&
	echo "int d;" >>"$R/a.c" &&
	GIT_AUTHOR_EMAIL=other@example.org git -C "$R" commit -q -am "lib: add d" &&
	run "$QUORUM" ci -C "$R" --range unrelated..two --format json &&
	titles "$TMP/out" >"$TMP/got" &&
	printf "%s\n" "lib: add b | lib: add c" "lib: add d" >"$TMP/want" &&
	test_cmp "$TMP/want" "$TMP/got"
'

test_expect_success 'a merged series is one series, whatever its topics' '
	git -C "$R" checkout -q -b feature base &&
	echo "int e;" >"$R/e.c" && git -C "$R" add e.c &&
	git -C "$R" commit -q -m "e: add e" &&
	echo "e" >"$R/E.txt" && git -C "$R" add E.txt &&
	git -C "$R" commit -q -m "docs: describe e" &&
	git -C "$R" checkout -q -b merged base &&
	git -C "$R" merge -q --no-ff --no-edit -m "Merge the e series" feature &&
	run "$QUORUM" ci -C "$R" --range base..merged --format json &&
	titles "$TMP/out" >"$TMP/got" &&
	echo "e: add e | docs: describe e" >"$TMP/want" &&
	test_cmp "$TMP/want" "$TMP/got"
'

test_expect_success 'SARIF: the series of a finding is its own commit'\''s' '
	run "$QUORUM" ci -C "$R" --range base..unrelated --format sarif &&
	python3 -c "
import json, sys
(x,) = json.load(open(sys.argv[1]))[\"runs\"][0][\"results\"]
assert x[\"properties\"][\"series\"] == \"main: add item_new()\", x[\"properties\"]
" "$TMP/out"
'

test_expect_success 'the text names the base as the parent, never --base' '
	run "$QUORUM" ci -C "$R" --range base..unrelated &&
	test_grep -v "\(--base\)" "$TMP/out" &&
	test_grep "^base: [0-9a-f]{12} \(the parent of its first commit\)$" "$TMP/out"
'

test_done
