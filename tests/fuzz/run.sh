#!/bin/sh
# tests/fuzz/run.sh [SECONDS]: make the libFuzzer targets (tests/fuzz/fuzz-*.c,
# built by `make fuzz-targets` with clang, ASan and UBSan into build-fuzz/),
# generate seed inputs from a git repository made here (git format-patch
# series, mboxrd, CRLF, replies), and run each target for SECONDS (default
# 300). Crashes, leaks and sanitizer reports land in build-fuzz/artifacts/;
# the script then exits 1. Keep each crash input in tests/fuzz/regress/
# (t1190 replays them in make check). `make fuzz` runs this.
set -u
secs=${1:-300}
[ -n "$secs" ] || secs=300
top=$(cd "$(dirname "$0")/../.." && pwd)
# FUZZ_BUILD and FUZZ_SAN (read by make) override the build directory and
# the sanitizer flags (e.g. to make one known report recoverable while a
# fix is pending); FUZZ_TARGETS which targets run.
fb=${FUZZ_BUILD:-build-fuzz}
out=$top/$fb
shared=${QUORUM_SHARED:-$top/../shared}
cd "$top" || exit 1

command -v clang >/dev/null || { echo "fuzz: clang is not installed"; exit 3; }
# Up to date when make fuzz called this; the rules live in the Makefile.
make --no-print-directory FUZZ_BUILD="$fb" fuzz-targets || exit 1

# Seeds: real git format-patch output, made here, never copied from elsewhere.
seeds=$out/seeds
rm -rf "$seeds" "$out/repo"
mkdir -p "$seeds/message" "$seeds/mbox" "$out/artifacts"
(
	export GIT_CONFIG_NOSYSTEM=1 HOME="$out" GIT_AUTHOR_NAME="A U Thor" \
		GIT_AUTHOR_EMAIL=a@example.org GIT_COMMITTER_NAME="C O Mitter" \
		GIT_COMMITTER_EMAIL=c@example.org
	r=$out/repo
	git init -q "$r" && cd "$r" || exit 1
	printf 'int main(void)\n{\n\treturn 0;\n}\n' >main.c
	git add main.c && git commit -q -m initial
	for i in 1 2 3; do
		printf '/* change %d */\n' "$i" >>main.c
		printf 'line %d\n' "$i" >"file$i.txt"
		git add . && git commit -q -m "main: change $i

From upstream commit 1234 (a body line that is not a From_ line).

Fixes: 0123456789ab (\"initial\")
Reviewed-by: R <r@example.org>
Signed-off-by: A U Thor <a@example.org>"
	done
	git format-patch -q --cover-letter --thread=shallow -o "$seeds/message" \
		--base=HEAD~3 HEAD~3
	git format-patch -q --stdout --cover-letter --thread=deep -v2 \
		--subject-prefix="PATCH net-next" HEAD~3 >"$seeds/mbox/deep.mbox"
	git format-patch -q --stdout HEAD~3 >"$seeds/mbox/plain.mbox"
	sed 's/$/\r/' "$seeds/mbox/plain.mbox" >"$seeds/mbox/crlf.mbox"
	sed 's/^From upstream/>From upstream/' "$seeds/mbox/plain.mbox" \
		>"$seeds/mbox/mboxrd.mbox"
	git show HEAD >"$seeds/message/git-show.txt"
	m=$(ls "$seeds/message"/0001-* | head -1)
	{
		cat "$seeds/mbox/deep.mbox"
		echo "From reviewer Mon Sep 17 00:00:00 2001"
		echo "From: R <r@example.org>"
		echo "Subject: Re: [PATCH net-next v2 1/3] main: change 1"
		echo "In-Reply-To: <x@example.org>"
		echo "Message-Id: <reply@example.org>"
		echo
		echo "> quoted"
		echo "Acked-by: R <r@example.org>"
	} >"$seeds/mbox/thread.mbox"
	cp "$m" "$seeds/mbox/single.patch"
	{
		sed -n '1,/^$/p' "$m" | grep -v '^Content-Transfer'
		echo
		sed '1,/^$/d' "$m" | base64
	} >"$seeds/message/base64.eml"
) >/dev/null 2>&1 || { echo "fuzz: could not build the seed repository"; exit 1; }
mkdir -p "$seeds/msgid"
i=0
for s in '<20240101.123-1-author@example.org>' 'x@example.org' \
	'https://lore.kernel.org/netdev/20240101.1-a@example.org/T/#u' \
	'https://lore.kernel.org/r/a%40b' 'https://patch.msgid.link/%3Ca@b%3E' \
	'http://lkml.kernel.org/r/a@b?q=1' 'series.mbox' '../../x@y'; do
	i=$((i + 1))
	printf '%s' "$s" >"$seeds/msgid/$i"
done
# The sanitiser: text with escapes, C1, bidi controls, bytes not UTF-8.
mkdir -p "$seeds/shown"
printf 'evil\033]52;c;eA==\007\033[2J\nx\233\342\200\256.c' >"$seeds/shown/1"
printf 'caf\303\251 \302\2332J \342\201\246x\342\201\251\177\t"q\\"' >"$seeds/shown/2"
printf '\300\233\355\240\200\364\220\200\200\363\240\201\201\r\n' >"$seeds/shown/3"
cp "$seeds"/mbox/* "$seeds/message/"
# The diff parser and rules voter start from the same patch mail.
mkdir -p "$seeds/diff" && cp "$seeds"/message/* "$seeds/diff/"
cp "$seeds"/message/* "$seeds/mbox/" 2>/dev/null
# The prompt builder: a C file, a NUL, and a patch naming it (main.c).
mkdir -p "$seeds/prompt"
i=0
for m in "$seeds"/message/0*.patch "$seeds/message/git-show.txt"; do
	[ -e "$m" ] || continue
	i=$((i + 1))
	{
		printf '#include <stdlib.h>\n\nint main(void)\n{\n\tchar *p = malloc(8);\n\n\treturn helper(p);\n}\n\nstatic int helper(char *p)\n{\n\treturn *p;\n}\n'
		printf '\0'
		cat "$m"
	} >"$seeds/prompt/$i"
done
# Many series in one mbox, some declaring others (the first byte says
# how many times the mbox is read).
mkdir -p "$seeds/series"
for m in "$seeds"/mbox/*.mbox; do
	{ printf '\003'; cat "$m"; } >"$seeds/series/$(basename "$m")"
done
{
	printf '\001'
	for i in 1 2 3 4 5 6 7 8; do
		printf 'From x Mon Sep 17 00:00:00 2001\nFrom: A <a@example.org>\n'
		printf 'Subject: [PATCH] s%d\nMessage-Id: <s%d@example.org>\n\n' $i $i
		printf 's%d\n\nprerequisite-message-id: <s%d@example.org>\n' $i $((i % 3 + 1))
		printf 'prerequisite-change-id: c%d:v1\nchange-id: c%d\n---\n' $((i % 4)) $i
		printf 'diff --git a/f%d b/f%d\n--- a/f%d\n+++ b/f%d\n@@ -1 +1 @@\n-a\n+b\n\n' $i $i $i $i
	done
} >"$seeds/series/declared.mbox"
[ -d tests/fuzz/regress ] && cp tests/fuzz/regress/* "$seeds/mbox/" 2>/dev/null
[ -d tests/fuzz/regress ] && cp tests/fuzz/regress/* "$seeds/message/" 2>/dev/null

# Real list mail from ../shared, read in place (never copied into the tree).
extra=
[ -d "$shared/corpora/b4-samples" ] && extra="$shared/corpora/b4-samples"
[ -d "$shared/seeds" ] && extra="$extra $shared/seeds"

status=0
# FUZZ_TARGETS: which targets to run (default: all of them).
for t in ${FUZZ_TARGETS:-message mbox diff msgid shown prompt series}; do
	mkdir -p "$out/corpus-$t"
	echo "fuzz: fuzz-$t for $secs s"
	# shellcheck disable=SC2086
	rm -f "$out/artifacts/fuzz-$t-"*
	# fork mode: a crash is recorded and fuzzing goes on, so one bug
	# does not hide the next
	"$out/fuzz-$t" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 \
		-ignore_ooms=1 -max_total_time="$secs" -max_len=65536 \
		-timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$out/artifacts/fuzz-$t-" \
		"$out/corpus-$t" "$seeds/$t" \
		$(case $t in msgid | shown | prompt) ;; *) echo "$extra" ;; esac) \
		>"$out/fuzz-$t.log" 2>&1
	rc=$?
	grep -E '^#[0-9]+: cov: .* exec/s' "$out/fuzz-$t.log" | tail -1 |
		sed "s/^/fuzz-$t: /"
	crashes=$(ls "$out/artifacts/fuzz-$t-"* 2>/dev/null | wc -l)
	if [ $rc -ne 0 ] || [ "$crashes" -gt 0 ]; then
		echo "fuzz: fuzz-$t: $crashes crash/leak/timeout input(s) in" \
			"$out/artifacts; first reports:"
		for a in "$out/artifacts/fuzz-$t-"*; do
			"$out/fuzz-$t" "$a" 2>&1 | grep -m1 -E '^SUMMARY' ||
				echo "no report (timeout or slow input)"
		done | sort | uniq -c | sort -rn | head -10
		status=1
	fi
done
exit $status
