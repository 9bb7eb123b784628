#!/bin/sh
# Small things that misled a new maintainer: format-patch's untouched
# cover letter subject is no title, -C with a path that is not there says
# so, a hunk that must end the file shows what the base has where the
# hunk is, every command's usage line names each of its options, and the
# README says what `make demo` finds.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: a series with an untouched cover letter' '
	R=$TMP/repo &&
	make_repo "$R" &&
	git -C "$R" tag base &&
	commit_sum_ids "$R" &&
	commit_item_new "$R" &&
	git -C "$R" format-patch -q --cover-letter -o "$TMP/s" base &&
	grep -q "SUBJECT HERE" "$TMP"/s/0000-*.patch &&
	git -C "$R" checkout -q base
'

test_expect_success '*** SUBJECT HERE *** is not the title: patch 1 is' '
	cat "$TMP"/s/*.patch >"$TMP/s.mbox" &&
	run "$QUORUM" review -C "$R" "$TMP/s.mbox" &&
	test_grep "^quorum review: main: add sum_ids\(\)$" "$TMP/out" &&
	test_grep -v "SUBJECT HERE" "$TMP/out" &&
	run "$QUORUM" review -C "$R" --format json "$TMP/s.mbox" &&
	test_grep "\"title\":[[:space:]]*\"main: add sum_ids\(\)\"" "$TMP/out"
'

test_expect_success '-C /nonexistent: the path does not exist' '
	wrong= &&
	for c in "review -C $TMP/nowhere $TMP/s.mbox" "apply -C $TMP/nowhere $TMP/s.mbox" \
		"index -C $TMP/nowhere" "similar -C $TMP/nowhere HEAD" \
		"ci -C $TMP/nowhere --range a..b"; do
		run "$QUORUM" $c
		test "$rc" = 3 && grep -q "^quorum: -C $TMP/nowhere: No such file or directory$" "$TMP/err" ||
			wrong="$wrong ${c%% *}:$rc"
	done &&
	echo "wrong:$wrong" &&
	test -z "$wrong"
'

test_expect_success 'setup: a patch appending to a file whose end changed' '
	A=$TMP/append &&
	git init -q "$A" &&
	printf "a\nb\nc\nd\ne\n" >"$A/f.txt" &&
	git -C "$A" add f.txt && git -C "$A" commit -q -m init &&
	git -C "$A" tag base &&
	printf "f\ng\n" >>"$A/f.txt" &&
	git -C "$A" commit -q -am "append f and g" &&
	git -C "$A" format-patch -q -o "$TMP/app" -1 &&
	git -C "$A" reset -q --hard base
'

test_expect_success 'a hunk that must end the file: what the base has where the hunk is' '
	printf "a\nb\nc\nd\nE-changed\nX\n" >"$A/f.txt" &&
	git -C "$A" commit -q -am "change the end" &&
	run "$QUORUM" apply -C "$A" --no-3way "$TMP"/app/*.patch &&
	test "$rc" = 2 &&
	test_grep "expected \"e\" at line 5, the base has \"E-changed\"" "$TMP/out"
'

test_expect_success 'the same context, but the file goes on: the line after it' '
	printf "a\nb\nc\nd\ne\nX\n" >"$A/f.txt" &&
	git -C "$A" commit -q -am "one more line" &&
	run "$QUORUM" apply -C "$A" --no-3way "$TMP"/app/*.patch &&
	test "$rc" = 2 &&
	test_grep "expected the end of the file at line 6, the base has \"X\"" "$TMP/out"
'

test_expect_success 'every option in a command'\''s help is in its usage line' '
	"$QUORUM" --help | sed -n "/^Commands:/,/^$/s/^  \([a-z]*\) .*/\1/p" >"$TMP/cmds" &&
	missing= &&
	for c in $(cat "$TMP/cmds"); do
		"$QUORUM" help $c >"$TMP/help"
		usage=$(head -1 "$TMP/help")
		for opt in $(sed -n "/^Options:/,/^$/p" "$TMP/help" | grep -o -- "--[a-z][a-z0-9-]*" | sort -u); do
			test "$opt" = --help && continue
			# "-v, --verbose": the short form in the usage line will do.
			short=$(sed -n "s/^  \(-[a-zA-Z]\), $opt\b.*/\1/p" "$TMP/help")
			case "$usage" in
			*"$opt"*) ;;
			*"[$short]"* | *"[$short "*) test -n "$short" ;;
			*) missing="$missing $c:$opt" ;;
			esac
		done
	done &&
	echo "missing:$missing" &&
	test -z "$missing"
'

test_expect_success 'the README says what make demo finds' '
	QUORUM_DEMO_DIR=$TMP/demo-dir sh "$TOP/contrib/demo/run-demo.sh" "$QUORUM" >"$TMP/demo" 2>&1
	test_grep "found issues at quorum \(exit 1\), as expected" "$TMP/demo" &&
	n=$(sed -n "s/^\([0-9]*\) findings at quorum:$/\1/p" "$TMP/demo") &&
	test "$n" = 3 &&
	test_grep "^\[1\] high: .return. at line [0-9]+ leaves .t->lock. locked" "$TMP/demo" &&
	test_grep "malloc\(\) result .keys. is dereferenced without a NULL check" "$TMP/demo" &&
	tr "\n" " " <"$TOP/README.md" | sed "s/  */ /g" >"$TMP/readme" &&
	test_grep "a lock left held by an early .return. \(high\) and a .malloc\(\). result used unchecked \(medium\), and flag that .malloc\(\)..s size multiplication too: three findings, exit 1" "$TMP/readme"
'

test_done
