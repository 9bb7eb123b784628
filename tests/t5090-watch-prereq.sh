#!/bin/sh
# quorum watch applies a series on top of the prerequisite series its
# cover names with prerequisite-message-id:, read from the notmuch
# database (the watched list, or another its prerequisites-from names;
# t5130 shows that no other list is read), and says so in the reply;
# the prerequisite is reviewed only when it is a series on the watched
# list itself, its mail is never tagged otherwise; a prerequisite that
# is not in the database is named when the series does not apply (and
# once it arrives, '#quorum rerun' applies it); a loop of declarations
# ends; a second run sends nothing.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib/watch.sh"

command -v notmuch >/dev/null || skip_all "notmuch is not installed"

watch_setup
OTHER=other@lists.example.org
watch_config '[list "devel"]' "	prerequisites-from = $OTHER"

msgid() { sed -n 's/^Message-I[Dd]: *<\(.*\)>.*/\1/p' "$1"; }
# posted_id FILE TAG: the Message-ID of a format-patch file once `post`
# has made it unique with TAG
posted_id() { msgid "$1" | sed "s/\\.git\\./.git.$2./"; }
# declare FILE ID: add a prerequisite-message-id: line to a cover letter
declare_prereq() { sed -i "/^-- \$/i prerequisite-message-id: <$2>" "$1"; }
# reply_to ID: the outbox replies to ID, one file name a line
reply_to() { grep -l "^In-Reply-To: <$1>\$" "$OUTBOX"/new/* 2>/dev/null; }
# flat FILE: the body of a reply as one line (replies wrap at 78 columns)
flat() { sed '1,/^$/d' "$1" | tr '\n' ' ' | tr -s ' '; }

# pair NAME: branch p-NAME (off main) adds NAME.c with two clean
# functions; s-NAME (off p-NAME) rewrites the lines p-NAME added so that
# NAME_new() uses malloc()'s result unchecked. s-NAME applies only on
# top of p-NAME, which is not in the list's branch.
pair() {
	git -C "$R" checkout -q -b "p-$1" main
	cat >"$R/$1.c" <<EOC
#include <stdlib.h>

struct $1 {
	int id;
};

struct $1 *$1_new(int id)
{
	struct $1 *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->id = id;
	return d;
}
EOC
	git -C "$R" add "$1.c"
	git -C "$R" commit -q -m "$1: add $1_new()"
	printf '\nint %s_id(const struct %s *d)\n{\n\treturn d ? d->id : -1;\n}\n' \
		"$1" "$1" >>"$R/$1.c"
	git -C "$R" commit -q -am "$1: add $1_id()"
	git -C "$R" checkout -q -b "s-$1"
	cat >"$R/$1.c" <<EOC
#include <stdlib.h>

struct $1 {
	int id;
};

struct $1 *$1_new(int id)
{
	struct $1 *d;

	d = malloc(sizeof(*d));
	d->id = id;
	return d;
}

int $1_id(const struct $1 *d)
{
	return d ? d->id : -1;
}
EOC
	git -C "$R" commit -q -am "$1: allocate with malloc()"
	git -C "$R" checkout -q main
	# P: cover + 2 patches; S: cover + 1 patch
	git -C "$R" format-patch -q --cover-letter --thread=shallow \
		--to="${2:-$LIST}" -o "$TMP/p$1" "main..p-$1"
	git -C "$R" format-patch -q --cover-letter --thread=shallow \
		--to="$LIST" -o "$TMP/s$1" "p-$1..s-$1"
}

# 1. P and S both on the watched list; S's cover names P's.
pair one
P1=$(posted_id "$TMP"/pone/0000-cover-letter.patch pone)
S1=$(posted_id "$TMP"/sone/0000-cover-letter.patch sone)
declare_prereq "$TMP"/sone/0000-cover-letter.patch "$P1"
post "$TMP/pone"
post "$TMP/sone"
is "$(notmuch count "id:$P1")" 1 "P's cover is in the database"
watch
is "$rc" 0 "watch --once exits 0"
is "$(outbox_count)" 2 "two replies: S's and P's own"
is "$(reply_to "$S1" | wc -l | tr -d ' ')" 1 "S gets exactly one reply"
RS=$(reply_to "$S1" | head -1)
[ -n "${KEEP:-}" ] && cp "$RS" "$KEEP"
flat "$RS" >"$TMP/rs"
like "$TMP/rs" "Applied on top of the prerequisite series 'series pone' \\(v1, 2 patches, <$P1>\\), not reviewed here\\." \
	"S's reply says it was applied on top of P (title, version, size, id)"
like "$TMP/rs" "quorum found 1 potential issue in 1/1" "S's reply has S's finding"
like "$RS" 'one\.c:[0-9-]+ in one_new\(\), patch 1/1, null-deref' \
	"... the malloc() result used unchecked, in S's patch"
unlike "$TMP/rs" "does not apply|could not apply" "S applied: no 'does not apply'"
unlike "$TMP/rs" "one: add one_new|one: add one_id" "P's patches are not reviewed in S's reply"
base=$(git -C "$R" rev-parse main)
like "$RS" "^X-Quorum-Base: $base\$" "S's base is the list's branch (P applied on it)"
awk 'length($0) > 78 { bad = 1 } END { exit bad }' "$RS"
ok $? "every line of S's reply fits 78 columns"
is "$(reply_to "$P1" | wc -l | tr -d ' ')" 1 "P, a series on the list, gets its own reply"
RP=$(reply_to "$P1" | head -1)
flat "$RP" >"$TMP/rp"
unlike "$TMP/rp" "prerequisite" "P's reply is a normal one: no prerequisite"
like "$TMP/rp" "quorum found no issue" "P's reply: no finding in P"
like "$TMP/out" 'devel: reviewed "\[PATCH 0/1\] series sone": findings' "the run says S was reviewed"
is "$(notmuch count "tag:quorum/reviewed and id:$S1")" 1 "S's cover tagged reviewed"
is "$(notmuch count "tag:quorum/reviewed and id:$P1")" 1 "P's cover tagged reviewed (its own review)"

watch
is "$rc" 0 "second run exits 0"
is "$(outbox_count)" 2 "second run: no new mail"
like "$TMP/out" '^watch: 0 reviewed' "second run reviews nothing"

# 2. P on a list that is not watched, which devel takes prerequisites
# from: S is applied on it, P gets no reply and none of its mail is
# tagged.
pair two "$OTHER"
P2=$(posted_id "$TMP"/ptwo/0000-cover-letter.patch ptwo)
S2=$(posted_id "$TMP"/stwo/0000-cover-letter.patch stwo)
declare_prereq "$TMP"/stwo/0000-cover-letter.patch "$P2"
post "$TMP/ptwo"
post "$TMP/stwo"
notmuch dump "to:$OTHER" >"$TMP/tags.p2"
watch
is "$rc" 0 "P unwatched: watch exits 0"
is "$(outbox_count)" 3 "P unwatched: one new reply"
is "$(reply_to "$S2" | wc -l | tr -d ' ')" 1 "P unwatched: S gets exactly one reply"
is "$(reply_to "$P2" | wc -l | tr -d ' ')" 0 "P unwatched: P gets none"
flat "$(reply_to "$S2")" >"$TMP/rs"
like "$TMP/rs" "Applied on top of the prerequisite series 'series ptwo' \\(v1, 2 patches, <$P2>\\), not reviewed here\\." \
	"P unwatched: S's reply names P"
like "$TMP/rs" "quorum found 1 potential issue in 1/1" "P unwatched: S's finding"
unlike "$TMP/rs" "does not apply|could not apply" "P unwatched: S applied"
notmuch dump "to:$OTHER" >"$TMP/tags.p2.after"
if cmp -s "$TMP/tags.p2" "$TMP/tags.p2.after"; then
	ok 0 "P unwatched: P's mail is not tagged or changed"
else
	ok 1 "P unwatched: P's mail is not tagged or changed"
	diff "$TMP/tags.p2" "$TMP/tags.p2.after" | sed 's/^/#   /'
fi
is "$(notmuch count "tag:quorum/seen and to:$OTHER")" 0 "P unwatched: no quorum tag on P"

# 3. P is not in the database: S is tried alone, does not apply, and
# the reply names the missing prerequisite.
pair three
P3=$(posted_id "$TMP"/pthree/0000-cover-letter.patch pthree)
S3=$(posted_id "$TMP"/sthree/0000-cover-letter.patch sthree)
declare_prereq "$TMP"/sthree/0000-cover-letter.patch "$P3"
post "$TMP/sthree"
watch
is "$rc" 0 "P missing: watch exits 0"
is "$(reply_to "$S3" | wc -l | tr -d ' ')" 1 "P missing: S gets exactly one reply"
RS=$(reply_to "$S3")
flat "$RS" >"$TMP/rs"
like "$TMP/rs" "quorum did not review this series: it was not applied, because patch 1/1 does not apply on [0-9a-f]{12}: .*does not apply: .*\\(missing prerequisite <$P3>\\)" \
	"P missing: the failure names the missing prerequisite"
like "$TMP/rs" "The series declares the prerequisite <$P3>, which is not in the mail quorum reads, so the series was tried without it" \
	"P missing: ... and says quorum has no mail of it"
unlike "$TMP/rs" "Applied on top" "P missing: nothing applied first"
like "$TMP/out" 'devel: failed "\[PATCH 0/1\] series sthree": patch 1 does not apply, reply' "P missing: S is answered, and counted as failed"
watch
is "$(reply_to "$S3" | wc -l | tr -d ' ')" 1 "P missing: a second run sends nothing more"

# quorum review by message-id says the same (it reads the same database).
run "$QUORUM" review -C "$R" "<$S3>"
is "$rc" 2 "review <S> with P missing: exit 2"
like "$TMP/err" "does not apply: .*\\(missing prerequisite <$P3>\\)" \
	"review <S> with P missing: the error names the prerequisite"

# As the reply says: P arrives (on the other list), the author asks for
# a rerun, and S is applied on top of it.
sed -i "s/^To: .*/To: $OTHER/" "$TMP"/pthree/*.patch
post "$TMP/pthree"
first=$(msgid "$RS")
cat >"$MAIL/new/rerun-three" <<EOM
From: A U Thor <author@example.org>
To: $LIST
Subject: Re: [PATCH 0/1] series sthree
Message-ID: <rerun.three@example.org>
In-Reply-To: <$first>
References: <$S3> <$first>
Date: Tue, 14 Nov 2023 22:30:00 +0000

Posted it now.

#quorum rerun
EOM
notmuch new --quiet
watch
is "$(reply_to "$S3" | wc -l | tr -d ' ')" 2 "P arrived, #quorum rerun: a second reply to S"
RS2=$(reply_to "$S3" | grep -v "^$RS\$")
flat "$RS2" >"$TMP/rs"
like "$TMP/rs" "Applied on top of the prerequisite series 'series pthree' \\(v1, 2 patches, <$P3>\\)" \
	"P arrived: S applied on top of it"
like "$TMP/rs" "quorum found 1 potential issue in 1/1" "P arrived: S's finding"
unlike "$TMP/rs" "could not apply|not in the mail" "P arrived: nothing missing"
is "$(notmuch count "tag:quorum/seen and to:$OTHER")" 0 "P arrived: P's mail is not tagged"

# 4. A loop: P names S and S names P, both on the watched list. S is
# applied on P; P does not need S and is reviewed alone.
pair four
P4=$(posted_id "$TMP"/pfour/0000-cover-letter.patch pfour)
S4=$(posted_id "$TMP"/sfour/0000-cover-letter.patch sfour)
declare_prereq "$TMP"/sfour/0000-cover-letter.patch "$P4"
declare_prereq "$TMP"/pfour/0000-cover-letter.patch "$S4"
post "$TMP/pfour"
post "$TMP/sfour"
n=$(outbox_count)
watch
is "$rc" 0 "loop: watch exits 0"
is "$(outbox_count)" $((n + 2)) "loop: two replies"
is "$(reply_to "$S4" | wc -l | tr -d ' ')" 1 "loop: S gets exactly one reply"
flat "$(reply_to "$S4")" >"$TMP/rs"
like "$TMP/rs" "Applied on top of the prerequisite series 'series pfour' \\(v1, 2 patches, <$P4>\\)" \
	"loop: S applied on top of P"
like "$TMP/rs" "quorum found 1 potential issue in 1/1" "loop: S's finding"
is "$(reply_to "$P4" | wc -l | tr -d ' ')" 1 "loop: P gets exactly one reply"
flat "$(reply_to "$P4")" >"$TMP/rp"
unlike "$TMP/rp" "prerequisite|could not apply" "loop: P applies alone, no prerequisite"
watch
is "$(outbox_count)" $((n + 2)) "loop: a second run sends nothing"

# 5. Declared by patch-id only (git format-patch --base=main puts one
# prerequisite-patch-id: line per commit of P in S's cover): P, posted
# in its own thread and reviewed, is found by the patch-ids watch keeps
# of the series it saw; S is applied on top of it.
pair five
git -C "$R" format-patch -q --cover-letter --thread=shallow --base=main \
	--to="$LIST" -o "$TMP/sfive-base" "p-five..s-five"
grep -q '^prerequisite-patch-id: ' "$TMP"/sfive-base/0000-cover-letter.patch
ok $? "patch-id: S's cover names P's patches by patch-id"
unlike "$TMP"/sfive-base/0000-cover-letter.patch 'prerequisite-message-id' \
	"patch-id: and not by message-id"
P5=$(posted_id "$TMP"/pfive/0000-cover-letter.patch pfive)
S5=$(posted_id "$TMP"/sfive-base/0000-cover-letter.patch sfive-base)
post "$TMP/pfive"
n=$(outbox_count)
watch
is "$(reply_to "$P5" | wc -l | tr -d ' ')" 1 "patch-id: P is reviewed on its own first"
post "$TMP/sfive-base"
watch
is "$rc" 0 "patch-id: watch exits 0"
is "$(outbox_count)" $((n + 2)) "patch-id: one reply for S"
is "$(reply_to "$S5" | wc -l | tr -d ' ')" 1 "patch-id: S gets exactly one reply"
flat "$(reply_to "$S5")" >"$TMP/rs"
like "$TMP/rs" "Applied on top of the prerequisite series 'series pfive' \\(v1, 2 patches, <$P5>\\), not reviewed here\\." \
	"patch-id: S applied on top of P, found by its patch-ids"
like "$TMP/rs" "quorum found 1 potential issue in 1/1" "patch-id: S's finding"
unlike "$TMP/rs" "does not apply|could not apply|missing prerequisite" "patch-id: nothing missing"
watch
is "$(outbox_count)" $((n + 2)) "patch-id: a second run sends nothing"

done_testing
