# tests/lib/notmuch.sh - a maildir indexed by a real notmuch, and mail
# from git format-patch put into it (after lib.sh).
#
#   notmuch_setup [LINES...]  $MAIL (maildir and notmuch database),
#                      $OUTBOX, NOTMUCH_CONFIG ($TMP/notmuch-config; new
#                      mail tagged new and inbox, nothing excluded), with
#                      LINES appended to that config verbatim
#   maildir_put DIR    put each format-patch file of DIR into the maildir
#                      as msg-TAG-N (TAG: DIR's name), with its
#                      Message-IDs made unique per DIR (format-patch
#                      repeats them within a second) and "*** SUBJECT
#                      HERE ***" made "series TAG"; the files of DIR are
#                      left as they are
#   post DIR           maildir_put DIR, then notmuch new
#   mail_single ID FROM TITLE [NAME]  a one-patch series to $LIST as
#                      $MAIL/new/ID, Message-ID <ID@example.org>, adding
#                      f_NAME.c (NAME defaults to ID); no notmuch new

LIST=devel@lists.example.org
MAIL=$TMP/mail
OUTBOX=$MAIL/outbox

notmuch_setup() {
	mkdir -p "$MAIL/cur" "$MAIL/new" "$MAIL/tmp"
	export NOTMUCH_CONFIG=$TMP/notmuch-config
	{
		cat <<EOC
[database]
path=$MAIL
[new]
tags=new;inbox
[search]
exclude_tags=
EOC
		for l in "$@"; do
			printf '%s\n' "$l"
		done
	} >"$NOTMUCH_CONFIG"
}

_post_n=0
maildir_put() {
	_tag=$(basename "$1")
	for f in "$1"/*.patch; do
		_post_n=$((_post_n + 1))
		sed -e "/^\\(Message-I[Dd]\\|In-Reply-To\\|References\\):/s/\\.git\\./.git.$_tag./g" \
			-e "s/\\*\\*\\* SUBJECT HERE \\*\\*\\*/series $_tag/" "$f" |
			tail -n +2 >"$MAIL/new/msg-$_tag-$_post_n"
	done
}

post() {
	maildir_put "$1" && notmuch new --quiet
}

mail_single() {
	_ms_name=${4:-$1}
	cat >"$MAIL/new/$1" <<EOM
From: $2
To: $LIST
Subject: [PATCH] $3
Message-ID: <$1@example.org>
Date: Tue, 14 Nov 2023 22:20:00 +0000

$3
---
diff --git a/f_$_ms_name.c b/f_$_ms_name.c
new file mode 100644
--- /dev/null
+++ b/f_$_ms_name.c
@@ -0,0 +1,4 @@
+int f_$_ms_name(void)
+{
+	return 1;
+}
EOM
}
