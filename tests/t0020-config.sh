#!/bin/sh
# The config a new maintainer copies and mistypes: the examples work as
# copied, a quorum the voters present can never reach is a warning naming
# the key (offline voters are each their own quorum), a typo is one line
# naming file and line (exit 2), every key is documented in
# quorum.conf.example, and every command gives the same exit code for
# the same bad input.
. "$(dirname "$0")/lib.sh"

COMMANDS="review parse apply index similar eval watch cost ci"

# run_cmd NAME: run quorum NAME on the repo and patch of the setup.
run_cmd() {
	case $1 in
	review) run "$QUORUM" review -C "$R" "$P" ;;
	parse) run "$QUORUM" parse "$P" ;;
	apply) run "$QUORUM" apply -C "$R" "$P" ;;
	index) run "$QUORUM" index -C "$R" --quiet ;;
	similar) run "$QUORUM" similar -C "$R" HEAD ;;
	eval) run "$QUORUM" eval -C "$R" --since 2000-01-01 --until 2000-01-02 ;;
	watch) run "$QUORUM" watch --once ;;
	cost) run "$QUORUM" cost ;;
	ci) run "$QUORUM" ci -C "$R" --range base..main ;;
	esac
}

test_expect_success 'setup: a repo and a patch with a defect' '
	R=$TMP/repo &&
	make_repo "$R" &&
	git -C "$R" tag base &&
	commit_item_new "$R" &&
	git -C "$R" format-patch -q -o "$TMP/p" base &&
	P=$(ls "$TMP"/p/*.patch) &&
	git -C "$R" checkout -q base
'

# 1. The examples, as copied, show what the offline voters find.
for ex in quorum.conf.example watch.conf.example; do
	test_expect_success "contrib/$ex as copied: the finding is shown" '
		cp "$TOP/contrib/'$ex'" "$TMP/copied.conf" &&
		QUORUM_CONFIG=$TMP/copied.conf run "$QUORUM" review -C "$R" "$P" &&
		cat "$TMP/err" &&
		test "$rc" = 1 &&
		test_grep "item_new" "$TMP/out" &&
		test_grep -v "below quorum" "$TMP/out"
	'
done

test_expect_success 'review.quorum = 2 with offline voters only: a warning naming the key, the finding shown' '
	printf "[review]\n\tdeadline = 10\n\tquorum = 2\n" >"$TMP/q2.conf" &&
	QUORUM_CONFIG=$TMP/q2.conf run "$QUORUM" review -C "$R" "$P" &&
	test "$rc" = 1 &&
	test_grep "warning: review.quorum = 2 \($TMP/q2.conf:3\) can never be met by the offline voters alone" "$TMP/err" &&
	test_grep "a finding needs 1" "$TMP/out"
'

test_expect_success '--quorum 3 with offline voters only: the warning names the option' '
	run "$QUORUM" review -C "$R" --quorum 3 "$P" &&
	test "$rc" = 1 &&
	test_grep "warning: --quorum 3 can never be met" "$TMP/err"
'

test_expect_success 'a quorum over what one model and one offline vote reach is a warning' '
	printf "[review]\n\tquorum = 5\n[voter \"m\"]\n\tprovider = openai\n\turl = http://127.0.0.1:9/v1\n\tmodel = m\n" >"$TMP/q5.conf" &&
	QUORUM_CONFIG=$TMP/q5.conf run "$QUORUM" review -C "$R" "$P" &&
	test_grep "warning: review.quorum = 5 \($TMP/q5.conf:2\) can never be met by these voters \(at most 2" "$TMP/err"
'

test_expect_success 'a reachable quorum is no warning' '
	printf "[review]\n\tquorum = 1\n" >"$TMP/q1.conf" &&
	QUORUM_CONFIG=$TMP/q1.conf run "$QUORUM" review -C "$R" "$P" &&
	test "$rc" = 1 &&
	test ! -s "$TMP/err"
'

# 2. Typos are one line naming file and line, exit 2.
test_expect_success 'an unknown key: file, line and the key it resembles' '
	printf "[review]\n\tdeadline = 10\n\tqourum = 2\n" >"$TMP/typo.conf" &&
	QUORUM_CONFIG=$TMP/typo.conf run "$QUORUM" review -C "$R" "$P" &&
	test "$rc" = 2 &&
	test_line_count = 1 "$TMP/err" &&
	test_grep "config $TMP/typo.conf:3: unknown key .qourum. in \[review\] \(did you mean quorum\?\)" "$TMP/err"
'

test_expect_success 'a key outside any section: file and line' '
	printf "quorum = 2\n[review]\n" >"$TMP/out.conf" &&
	QUORUM_CONFIG=$TMP/out.conf run "$QUORUM" review -C "$R" "$P" &&
	test "$rc" = 2 &&
	test_line_count = 1 "$TMP/err" &&
	test_grep "config $TMP/out.conf:1: .quorum. is outside any section" "$TMP/err"
'

test_expect_success 'an unknown section, and a list without its name' '
	printf "[reveiw]\n\tquorum = 2\n" >"$TMP/sect.conf" &&
	QUORUM_CONFIG=$TMP/sect.conf run "$QUORUM" review -C "$R" "$P" &&
	test "$rc" = 2 &&
	test_grep "config $TMP/sect.conf:1: unknown section \[reveiw\]" "$TMP/err" &&
	printf "[list]\n\taddress = a@b\n" >"$TMP/list.conf" &&
	QUORUM_CONFIG=$TMP/list.conf run "$QUORUM" review -C "$R" "$P" &&
	test "$rc" = 2 &&
	test_grep "config $TMP/list.conf:1: \[list\] needs a name" "$TMP/err"
'

test_expect_success 'a typo in the repository'\''s .git/quorum.conf is found too' '
	printf "[review]\n\tdeadlin = 3\n" >"$R/.git/quorum.conf" &&
	run "$QUORUM" review -C "$R" "$P" &&
	test "$rc" = 2 &&
	test_grep "quorum.conf:2: unknown key .deadlin." "$TMP/err" &&
	rm "$R/.git/quorum.conf"
'

test_expect_success 'keys wt-cost and wt-classify add are known: count-tokens, [classify "NAME"]' '
	printf "[voter \"m\"]\n\tprovider = openai\n\turl = http://127.0.0.1:9/v1\n\tmodel = m\n\tcount-tokens = none\n[classify \"stable\"]\n\tlabel-regex = x\n\tanything-else = y\n" >"$TMP/new.conf" &&
	QUORUM_CONFIG=$TMP/new.conf run "$QUORUM" parse "$P" &&
	test "$rc" = 0
'

test_expect_success 'an unknown --list NAME: one line naming the option, exit 2' '
	run "$QUORUM" review -C "$R" --list devle "$P" &&
	test "$rc" = 2 &&
	test_line_count = 1 "$TMP/err" &&
	test_grep "[-]-list devle: no \[list \"devle\"\] section" "$TMP/err"
'

test_expect_success 'every key quorum reads (the table in bot/config.c) is in quorum.conf.example' '
	sed -n "s/^	{\"\([a-z]*\)\", [a-z]*, \"\([a-z*-]*\)\"},$/\1 \2/p" "$TOP/bot/config.c" >"$TMP/keys" &&
	test $(lines "$TMP/keys") -gt 40 &&
	missing= &&
	while read -r sect key; do
		grep -q "^[[:space:]]*#*\[$sect[] ]" "$TOP/contrib/quorum.conf.example" || missing="$missing [$sect]"
		test "$key" = "*" && continue
		grep -q "^[[:space:]]*#*$key[[:space:]]*=" "$TOP/contrib/quorum.conf.example" || missing="$missing $sect.$key"
	done <"$TMP/keys" &&
	echo "missing:$missing" &&
	test -z "$missing"
'

# 3. One exit-code contract: every command, the same bad inputs.
bad_config() {
	case $1 in
	typo) printf "[review]\n\tqourum = 2\n" ;;
	outside) printf "quorum = 2\n" ;;
	broken) printf "[review\n" ;;
	nourl) printf "[voter \"a\"]\n\tprovider = openai\n\tmodel = m\n" ;;
	esac >"$TMP/bad.conf"
}
for bad in typo outside broken nourl; do
	test_expect_success "a $bad config: exit 2 naming the file, in every command" '
		bad_config '$bad' &&
		wrong= &&
		for c in $COMMANDS; do
			QUORUM_CONFIG=$TMP/bad.conf run_cmd $c
			if test "$rc" != 2 || ! grep -q "$TMP/bad.conf" "$TMP/err"; then
				wrong="$wrong $c:$rc"
			fi
		done &&
		echo "wrong:$wrong" &&
		test -z "$wrong"
	'
done

test_expect_success 'an unset key-env: exit 3 naming the file, in every command that asks a model' '
	printf "[voter \"a\"]\n\tprovider = openai\n\turl = http://127.0.0.1:9/v1\n\tmodel = m\n\tkey-env = QUORUM_TEST_NO_SUCH_KEY\n" >"$TMP/key.conf" &&
	wrong= &&
	for c in review watch ci; do
		QUORUM_CONFIG=$TMP/key.conf run_cmd $c
		if test "$rc" != 3 || ! grep -q "$TMP/key.conf:1: voter \"a\": environment variable QUORUM_TEST_NO_SUCH_KEY" "$TMP/err"; then
			wrong="$wrong $c:$rc"
		fi
	done &&
	echo "wrong:$wrong" &&
	test -z "$wrong"
'

test_expect_success 'a revision that does not resolve: exit 3 in review --base, apply --base and ci --range' '
	run "$QUORUM" review -C "$R" --base nosuch "$P" && test "$rc" = 3 &&
	run "$QUORUM" apply -C "$R" --base nosuch "$P" && test "$rc" = 3 &&
	run "$QUORUM" ci -C "$R" --range base..nosuch && test "$rc" = 3 &&
	test_grep "does not name two commits" "$TMP/err"
'

test_expect_success 'help review, help ci and help watch give the same contract' '
	wrong= &&
	for c in review ci watch; do
		"$QUORUM" help $c | tr "\n" " " | sed "s/  */ /g" >"$TMP/help-$c"
		grep -Eq "2 usage, input or config error|2 usage or config error" "$TMP/help-$c" &&
		grep -Eq "3 environment error \([^)]*a missing API key" "$TMP/help-$c" &&
		grep -q "a malformed config" "$TMP/help-$c" || wrong="$wrong $c"
	done &&
	echo "wrong:$wrong" &&
	test -z "$wrong"
'

test_done
