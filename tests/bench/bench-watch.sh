#!/bin/sh
# bench-watch: `quorum watch --once` over a maildir of 2,000 messages
# (200 series of a cover letter and 9 patches) indexed by notmuch, with
# the offline voters only, against what a user would do instead: export
# each thread with `notmuch show --format=mbox` and pipe it into
# `quorum review`, in the same run. Peak memory is measured at 1,000 and
# 2,000 messages: it must not grow with the number of messages.
# QUORUM_BENCH_SERIES sets the series count (default 200).
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
QUORUM=${QUORUM_BIN:-$TOP/build/quorum}
NS=${QUORUM_BENCH_SERIES:-200}

command -v notmuch >/dev/null || { echo "watch: skipped (no notmuch)"; exit 0; }
[ -x "$QUORUM" ] || { echo "watch: $QUORUM is not built"; exit 1; }
[ -x /usr/bin/time ] || { echo "watch: /usr/bin/time is needed"; exit 1; }

W=$(mktemp -d "${TMPDIR:-/tmp}/quorum-bench-watch.XXXXXX")
trap 'rm -rf "$W"' EXIT
export GIT_CONFIG_NOSYSTEM=1 HOME="$W/home" LC_ALL=C
export XDG_STATE_HOME="$W/state" XDG_DATA_HOME="$W/data"
mkdir -p "$HOME"
git init -q "$W/repo"
printf 'int main(void)\n{\n\treturn 0;\n}\n' >"$W/repo/main.c"
git -C "$W/repo" add main.c
git -C "$W/repo" -c user.name=B -c user.email=b@example.org commit -q -m init

cat >"$W/mails.py" <<'EOF'
import os, sys
d, lo, hi = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.makedirs(d + "/new", exist_ok=True)
for s in range(lo, hi):
    cover = "cover-%d@bench.example.org" % s
    date = "Tue, 14 Nov 2023 22:%02d:00 +0000" % (s % 60)
    hdr = ("From: Dev %d <dev%d@example.org>\nTo: devel@lists.example.org\n"
           "Date: %s\n" % (s, s % 17, date))
    with open("%s/new/%05d-00" % (d, s), "w") as f:
        f.write(hdr + "Subject: [PATCH 0/9] topic %d\nMessage-ID: <%s>\n\n"
                "Nine patches of topic %d.\n" % (s, cover, s))
    for k in range(1, 10):
        name = "src/t%d_%d.c" % (s, k)
        body = ["#include <stdlib.h>", "", "struct o%d { int v; };" % k, ""]
        body += ["int f%d_%d(int a)" % (s, k), "{", "\tint r = a;", ""]
        body += ["\tr += %d;" % i for i in range(12)]
        body += ["\treturn r;", "}", ""]
        if k == 5:
            body += ["struct o%d *n%d_%d(void)" % (k, s, k), "{",
                     "\tstruct o%d *o = malloc(sizeof(*o));" % k, "",
                     "\to->v = 1;", "\treturn o;", "}"]
        diff = ("diff --git a/{0} b/{0}\nnew file mode 100644\n"
                "--- /dev/null\n+++ b/{0}\n@@ -0,0 +1,{1} @@\n").format(
                    name, len(body))
        diff += "".join("+" + l + "\n" for l in body)
        with open("%s/new/%05d-%02d" % (d, s, k), "w") as f:
            f.write(hdr + "Subject: [PATCH %d/9] t%d: add f%d_%d()\n"
                    "Message-ID: <p-%d-%d@bench.example.org>\n"
                    "In-Reply-To: <%s>\nReferences: <%s>\n\n"
                    "Add f%d_%d().\n\nSigned-off-by: Dev <dev@example.org>\n"
                    "---\n%s-- \n2.42.0\n" % (k, s, s, k, s, k, cover, cover,
                                              s, k, diff))
EOF

# setup DIR N: a maildir of N series, indexed; the configs for it.
setup() {
	mkdir -p "$1/mail/cur" "$1/mail/tmp"
	python3 "$W/mails.py" "$1/mail" 0 "$2"
	cat >"$1/notmuch-config" <<EOC
[database]
path=$1/mail
[new]
tags=new
EOC
	NOTMUCH_CONFIG=$1/notmuch-config notmuch new --quiet >/dev/null 2>&1
	printf '[notmuch]\n\tdatabase = %s\n[list "devel"]\n\taddress = devel@lists.example.org\n\trepo = %s\n\tbranch = HEAD\n[review]\n\tquorum = 1\n[deliver]\n\toutbox = %s\n[watch]\n\tstate = %s\n' \
		"$1/mail" "$W/repo" "$1/outbox" "$1/state.db" >"$1/quorum.conf"
}

# secs_rss CMD...: "SECONDS MAXRSS_KB CPU_SECONDS"
secs_rss() {
	/usr/bin/time -f '%e %M %U %S' -o "$W/time" "$@" >"$W/stdout" 2>"$W/stderr"
	st=$?
	tail -1 "$W/time" | awk '{ print $1, $2, $3 + $4 }'
	return $st
}

half=$((NS / 2))
setup "$W/half" "$half"
setup "$W/full" "$NS"
h=$(NOTMUCH_CONFIG=$W/half/notmuch-config QUORUM_CONFIG=$W/half/quorum.conf \
	secs_rss "$QUORUM" watch --once) ||
	{ echo "watch: quorum watch failed:"; head -5 "$W/stderr"; exit 1; }
f=$(NOTMUCH_CONFIG=$W/full/notmuch-config QUORUM_CONFIG=$W/full/quorum.conf \
	secs_rss "$QUORUM" watch --once) ||
	{ echo "watch: quorum watch failed:"; head -5 "$W/stderr"; exit 1; }
replies=$(ls "$W/full/outbox/new" | wc -l)
msgs=$((NS * 10))

# The user's way: one quorum review per thread, fed by notmuch show.
cat >"$W/user-way.sh" <<'EOF'
for t in $(notmuch search --output=threads tag:new); do
	notmuch show --format=mbox "$t" | "$1" review -C "$2" - >/dev/null
done
exit 0
EOF
u=$(NOTMUCH_CONFIG=$W/full/notmuch-config QUORUM_CONFIG=/dev/null \
	secs_rss sh "$W/user-way.sh" "$QUORUM" "$W/repo")

echo "$f $h $u $msgs $replies $NS" | awk '{
	fs = $1 > 0 ? $1 : 0.01; us = $7 > 0 ? $7 : 0.01
	printf "watch: %.0f messages/s (%d messages, %d series, %d replies in " \
	       "%.2f s, CPU %.2f s); %.1fx notmuch show | quorum review per " \
	       "thread (%.2f s); peak RSS %.1f MB at %d messages, %.1f MB at %d\n",
	       $10 / fs, $10, $12, $11, $1, $3, us / fs, $7,
	       $5 / 1024, $10 / 2, $2 / 1024, $10
}'
[ "$replies" -eq "$NS" ] || { echo "watch: $replies replies for $NS series"; exit 1; }
