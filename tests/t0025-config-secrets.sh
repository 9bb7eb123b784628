#!/bin/sh
# A key pasted into the config where a name belongs (key-env = sk-...,
# key-file = sk-..., price-in = sk-...) is never echoed: the error says
# which voter and what to do, without the value. URLs are shown without
# their password (dry run text and JSON), and the embeddings and SMTP
# password settings follow the same rule.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/llm.sh"

KEY=sk-SECRETKEY0123456789abcdefXYZ
export QUORUM_CONFIG=$TMP/config

test_expect_success 'setup: a repo, a patch, a model' '
	R=$TMP/repo &&
	make_repo "$R" &&
	git -C "$R" tag base &&
	commit_item_new "$R" &&
	git -C "$R" format-patch -q -o "$TMP/p" -1 &&
	P=$(ls "$TMP"/p/*.patch) &&
	printf "{\"default\": [{\"answer\": {\"findings\": []}}]}\n" >"$TMP/s.json" &&
	fake_start "$TMP/s.json"
'

# conf LINES...: a voter "a" of the fake server, with LINES appended
conf() {
	{
		voter a openai ma price-in=1 price-out=2 &&
		for l in "$@"; do printf "\t%s\n" "$l"; done
	} >"$QUORUM_CONFIG"
}

# no_secret: $TMP/out and $TMP/err do not hold the key, nor its middle
no_secret() {
	! grep -e "$KEY" -e SECRETKEY -e "0123456789abcdef" "$TMP/out" "$TMP/err"
}

test_expect_success 'key-env = the key: which voter, what to do, not the key' '
	conf "key-env = $KEY" &&
	run "$QUORUM" review -C "$R" "$P" &&
	test "$rc" = 2 &&
	test_line_count = 1 "$TMP/err" &&
	test_grep "voter \"a\": key-env must name an environment variable, and its value looks like a key itself" "$TMP/err" &&
	test_grep "put the key in the environment and name the variable \\(key-env = QUORUM_KEY_A, with QUORUM_KEY_A set to the key\\)" "$TMP/err" &&
	test_grep "config $TMP/config:" "$TMP/err" &&
	no_secret
'

test_expect_success 'a key that is also a valid name (ghp_...), unset: the same' '
	conf "key-env = ghp_16C7e42F292c6912E7710c838347Ae178B4a" &&
	run "$QUORUM" review -C "$R" "$P" &&
	test "$rc" = 2 &&
	test_grep "looks like a key itself" "$TMP/err" &&
	! grep "16C7e42F292c" "$TMP/err"
'

test_expect_success 'a variable name that is not set is still named (exit 3)' '
	conf "key-env = QUORUM_KEY_A" &&
	run env -u QUORUM_KEY_A "$QUORUM" review -C "$R" "$P" &&
	test "$rc" = 3 &&
	test_grep "environment variable QUORUM_KEY_A \\(key-env\\) is not set" "$TMP/err"
'

test_expect_success 'and set, it is used' '
	QUORUM_KEY_A=k run "$QUORUM" review -C "$R" "$P" &&
	test "$rc" = 1 &&
	test "$(requests ma)" -ge 1
'

test_expect_success 'key-env = $NAME: not a variable name, said so' '
	conf "key-env = \$QUORUM_KEY_A" &&
	run "$QUORUM" review -C "$R" "$P" &&
	test "$rc" = 2 &&
	test_grep "key-env = .\\\$QUORUM_KEY_A. is not the name of an environment variable" "$TMP/err"
'

test_expect_success 'key-file = the key: not echoed either' '
	conf "key-file = $KEY" &&
	run "$QUORUM" review -C "$R" "$P" &&
	test "$rc" = 2 &&
	test_grep "voter \"a\": key-file names no file, and its value looks like a key itself" "$TMP/err" &&
	no_secret
'

test_expect_success 'a key pasted into a number: not echoed' '
	conf "max-tokens = $KEY" &&
	run "$QUORUM" review -C "$R" "$P" &&
	test "$rc" = 2 &&
	test_grep "max-tokens = .\\(not shown: it looks like a key\\). is not a number" "$TMP/err" &&
	no_secret &&
	printf "[review]\n\tquorum = %s\n" "$KEY" >"$QUORUM_CONFIG" &&
	run "$QUORUM" review -C "$R" "$P" &&
	test "$rc" = 2 &&
	test_grep "review.quorum = .\\(not shown: it looks like a key\\). is not a number" "$TMP/err" &&
	no_secret &&
	conf "key-env = QUORUM_KEY_A" "[review]" "deadline = $KEY" &&
	QUORUM_KEY_A=k run "$QUORUM" review -C "$R" "$P" &&
	test "$rc" != 0 &&
	test_grep "review.deadline = .\\(not shown: it looks like a key\\). is not a number of seconds" "$TMP/err" &&
	no_secret
'

test_expect_success 'a URL with user:password@: the dry run shows no password' '
	printf "[voter \"a\"]\n\tprovider = openai\n\turl = http://bob:hunter2@127.0.0.1:%s/v1\n\tmodel = ma\n" "$PORT" >"$QUORUM_CONFIG" &&
	run "$QUORUM" review -C "$R" --dry-run "$P" &&
	test "$rc" = 0 &&
	test_grep "POST http://bob:\\*\\*\\*@127\\.0\\.0\\.1:$PORT/v1/chat/completions" "$TMP/out" &&
	! grep hunter2 "$TMP/out" "$TMP/err" &&
	run "$QUORUM" review -C "$R" --dry-run --format json "$P" &&
	test_grep "\"url\":.*bob:\\*\\*\\*@" "$TMP/out" &&
	! grep hunter2 "$TMP/out" "$TMP/err"
'

test_expect_success 'history.embeddings-key-env = the key: a warning without it' '
	printf "[history]\n\tembeddings-key-env = %s\n" "$KEY" >"$QUORUM_CONFIG" &&
	run "$QUORUM" index -C "$R" --quiet &&
	test_grep "embeddings-key-env must name an environment variable, and its value looks like a key itself" "$TMP/err" &&
	no_secret
'

test_expect_success 'deliver.smtp-password-env = a password: not echoed' '
	printf "[deliver]\n\tmethod = smtp\n\tsmtp-url = smtp://127.0.0.1:1\n\tsmtp-password-env = hunter2 is my password\n" >"$QUORUM_CONFIG" &&
	run "$QUORUM" watch --once &&
	test "$rc" != 0 &&
	test_grep "smtp-password-env must name an environment variable" "$TMP/err" &&
	! grep hunter2 "$TMP/out" "$TMP/err"
'

test_done
