#!/bin/sh
# watch never calls a failure "reviewed": a series that does not apply
# and the series of a list without a repo are counted as failed, tagged
# quorum/failed (and not tried again every pass), the reply says plainly
# that the series was not applied and why, a misconfigured list makes
# the pass exit 2, and the pass summary's counts match the tags.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/watch.sh"

command -v notmuch >/dev/null || skip_all "notmuch is not installed"

test_expect_success 'setup: a series, then main changes the lines it touches' '
	watch_setup &&
	git -C "$R" format-patch -q --cover-letter --thread=shallow --to="$LIST" \
		-o "$TMP/s" base..topic &&
	sed -i "s/^int count_items(struct item \*items, int n)$/int count_items(const struct item *items, int n)/" "$R/main.c" &&
	sed -i "\$a int last_line_on_main;" "$R/main.c" &&
	git -C "$R" commit -q -am "main: a conflicting change" &&
	post "$TMP/s"
'

test_expect_success 'a series that does not apply: failed, counted, tagged' '
	watch &&
	test "$rc" = 0 &&
	test_grep "^devel: failed \"\[PATCH 0/3\] series s\": patch 1 does not apply" "$TMP/out" &&
	test_grep "^watch: 0 reviewed, 0 waiting, 0 skipped, 1 failed" "$TMP/out" &&
	test "$(notmuch count tag:quorum/reviewed)" = 0 &&
	test "$(notmuch count "tag:quorum/failed and subject:PATCH")" = 4
'

test_expect_success 'its reply says it was not applied and why, with no tally' '
	test "$(outbox_count)" = 1 &&
	f=$(ls "$OUTBOX"/new/*) &&
	tr "\n" " " <"$f" | sed "s/  */ /g" >"$TMP/reply" &&
	test_grep "quorum did not review this series: it was not applied, because patch 1/3 does not apply on [0-9a-f]{12}" "$TMP/reply" &&
	test_grep "voters: none ran \(the series was not applied\)" "$TMP/reply" &&
	test_grep -v "a finding needs 0" "$TMP/reply"
'

test_expect_success 'the next pass does not try it again' '
	watch &&
	test "$rc" = 0 &&
	test "$(outbox_count)" = 1 &&
	test_grep -v "failed \"" "$TMP/out"
'

test_expect_success 'new mail, a RESEND once main is fixed, is tried again and reviewed' '
	git -C "$R" revert --no-edit HEAD >/dev/null &&
	mkdir "$TMP/resend" &&
	for f in "$TMP"/s/*.patch; do
		sed "s/^Subject: \[PATCH/Subject: [PATCH RESEND/" "$f" >"$TMP/resend/$(basename "$f")" || break
	done &&
	post "$TMP/resend" &&
	watch &&
	test "$rc" = 0 &&
	test_grep "^devel: reviewed \"\[PATCH RESEND 0/3\] series resend\": findings" "$TMP/out" &&
	test_grep "^watch: 1 reviewed, 0 waiting, 0 skipped, 0 failed" "$TMP/out" &&
	test "$(outbox_count)" = 2
'

test_expect_success 'a list without a repo key: exit 2 naming the section, the series failed' '
	mail_single norepo-1 "A U Thor <author@example.org>" "main: add f_norepo()" norepo &&
	notmuch new --quiet &&
	grep -v "repo = " "$QUORUM_CONFIG" >"$TMP/c" && mv "$TMP/c" "$QUORUM_CONFIG" &&
	watch &&
	test "$rc" = 2 &&
	test_grep "list devel \($QUORUM_CONFIG:3\) has no repo key" "$TMP/err" &&
	test_grep "^devel: failed \"\[PATCH\] main: add f_norepo\(\)\": the list.s repo is not set" "$TMP/out" &&
	test_grep "^watch: 0 reviewed, 0 waiting, 0 skipped, 1 failed" "$TMP/out" &&
	test "$(notmuch count id:norepo-1@example.org and tag:quorum/failed)" = 1 &&
	test "$(outbox_count)" = 2
'

test_expect_success 'a repo that is not a repository: exit 2 naming it' '
	mkdir "$TMP/plain" &&
	watch_config &&
	sed -i "s|repo = .*|repo = $TMP/plain|" "$QUORUM_CONFIG" &&
	watch &&
	test "$rc" = 2 &&
	test_grep "list devel: repo = $TMP/plain: " "$TMP/err"
'

test_done
