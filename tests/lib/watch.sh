# tests/lib/watch.sh - a maildir indexed by notmuch and a repo with a
# series to post, for the `quorum watch` tests (after lib.sh).
#
#   watch_setup        $MAIL (maildir, notmuch db), $OUTBOX, $R (repo at
#                      base on main, a topic branch with 3 commits, the
#                      last one adding malloc() without a NULL check),
#                      NOTMUCH_CONFIG, QUORUM_CONFIG ($TMP/quorum.conf,
#                      written by watch_config)
#   watch_config [LINES...]  write the quorum config: the devel list plus
#                      the given lines appended verbatim
#   post DIR           put each format-patch file of DIR into the maildir,
#                      Message-IDs made unique per DIR
#   watch [ARGS]       run `quorum watch --once ARGS` ($TMP/out, $TMP/err, $rc)
#   outbox_count       mails in the outbox's new/

LIST=devel@lists.example.org
MAIL=$TMP/mail
OUTBOX=$MAIL/outbox

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

watch_setup() {
	mkdir -p "$MAIL/cur" "$MAIL/new" "$MAIL/tmp"
	export NOTMUCH_CONFIG=$TMP/notmuch-config
	cat >"$NOTMUCH_CONFIG" <<EOC
[database]
path=$MAIL
[new]
tags=new;inbox
[search]
exclude_tags=
EOC
	export QUORUM_CONFIG=$TMP/quorum.conf
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
	watch_config
}

_post_n=0
post() {
	_tag=$(basename "$1")
	for f in "$1"/*.patch; do
		_post_n=$((_post_n + 1))
		sed -e "/^\\(Message-I[Dd]\\|In-Reply-To\\|References\\):/s/\\.git\\./.git.$_tag./g" \
			-e "s/\\*\\*\\* SUBJECT HERE \\*\\*\\*/series $_tag/" "$f" |
			tail -n +2 >"$MAIL/new/msg-$_tag-$_post_n"
	done
	notmuch new --quiet
}

watch() { run "$QUORUM" watch --once "$@"; }
outbox_count() { ls "$OUTBOX/new" 2>/dev/null | wc -l | tr -d ' '; }
