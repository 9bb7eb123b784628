# tests/lib/watch.sh - a maildir indexed by notmuch and a repo with a
# series to post, for the `quorum watch` tests (after lib.sh; it brings
# tests/lib/notmuch.sh: notmuch_setup, maildir_put, post, $MAIL, $OUTBOX).
#
#   watch_setup        notmuch_setup, watch_repo and watch_config: $MAIL,
#                      $OUTBOX, NOTMUCH_CONFIG, QUORUM_CONFIG
#                      ($TMP/quorum.conf), $R
#   watch_repo         $R: a repo at base on main, a topic branch with 3
#                      commits, the last one adding malloc() without a
#                      NULL check; commits by the author (format-patch
#                      puts the committer on the cover letter)
#   watch_config [LINES...]  write the quorum config: the devel list plus
#                      the given lines appended verbatim
#   fake_sendmail      $TMP/bin/fake-sendmail, a sendmail that keeps the
#                      Nth message it is given as $TMP/sent/mail-N and its
#                      arguments, one a line, as $TMP/sent/argv-N, and
#                      fails (exit 75) while $TMP/fail exists
#   sent_count         how many messages it took
#   watch [ARGS]       run `quorum watch --once ARGS` ($TMP/out, $TMP/err, $rc)
#   outbox_count       mails in the outbox's new/

. "$TOP/tests/lib/notmuch.sh"

export QUORUM_CONFIG=$TMP/quorum.conf

watch_config() {
	{
		printf '[notmuch]\n\tdatabase = %s\n' "$MAIL"
		printf '[list "devel"]\n\taddress = %s\n\trepo = %s\n\tbranch = main\n' \
			"$LIST" "$R"
		printf '[review]\n\tquorum = 1\n'
		printf '[deliver]\n\toutbox = %s\n' "$OUTBOX"
		for l in "$@"; do
			printf '%s\n' "$l"
		done
	} >"$QUORUM_CONFIG"
}

watch_repo() {
	export GIT_COMMITTER_NAME="$GIT_AUTHOR_NAME"
	export GIT_COMMITTER_EMAIL="$GIT_AUTHOR_EMAIL"
	R=$TMP/repo
	make_repo "$R"
	git -C "$R" tag base
	git -C "$R" checkout -q -b topic
	printf '\nint first_id(struct item *items) { return items[0].id; }\n' >>"$R/main.c"
	git -C "$R" commit -q -am "main: add first_id()"
	printf '\nint second_id(struct item *items) { return items[1].id; }\n' >>"$R/main.c"
	git -C "$R" commit -q -am "main: add second_id()"
	printf '\nstruct item *item_new(int id)\n{\n\tstruct item *it;\n\n\tit = malloc(sizeof(*it));\n\tit->id = id;\n\treturn it;\n}\n' >>"$R/main.c"
	git -C "$R" commit -q -am "main: add item_new()"
	git -C "$R" checkout -q main
}

watch_setup() {
	notmuch_setup
	watch_repo
	watch_config
}

fake_sendmail() {
	mkdir -p "$TMP/sent" "$TMP/bin"
	cat >"$TMP/bin/fake-sendmail" <<EOF2
#!/bin/sh
[ -e "$TMP/fail" ] && { cat >/dev/null; echo "relay refused" >&2; exit 75; }
n=\$(ls "$TMP/sent" | grep -c '^mail-')
for a in "\$@"; do printf '%s\n' "\$a"; done >"$TMP/sent/argv-\$n"
cat >"$TMP/sent/mail-\$n"
EOF2
	chmod +x "$TMP/bin/fake-sendmail"
}
sent_count() { ls "$TMP/sent" | grep -c '^mail-'; }

watch() { run "$QUORUM" watch --once "$@"; }
outbox_count() { ls "$OUTBOX/new" 2>/dev/null | wc -l | tr -d ' '; }

# post_fn_series K NPATCHES NSTMTS: series K on branch sK from base,
# NPATCHES patches each adding a function gK_J() of NSTMTS statements,
# formatted with a cover letter into $TMP/sK and posted to the list.
post_fn_series() {
	git -C "$R" checkout -q -b s$1 base
	j=1
	while [ $j -le $2 ]; do
		{
			printf 'int g%d_%d(int x)\n{\n' $1 $j
			i=0
			while [ $i -lt $3 ]; do
				printf '\tx = x * %d + %d;\n' $i $j
				i=$((i + 1))
			done
			printf '\treturn x;\n}\n'
		} >"$R/g$1_$j.c"
		git -C "$R" add "g$1_$j.c"
		git -C "$R" commit -q -m "lib$1: add g$1_$j()"
		j=$((j + 1))
	done
	git -C "$R" format-patch -q --cover-letter --thread=shallow \
		--to="$LIST" -o "$TMP/s$1" base..s$1
	git -C "$R" checkout -q main
	maildir_put "$TMP/s$1"
}
