#!/bin/sh
# Functions are named only in source files. A man page's hunk section is
# a heading ("Capabilities (state-can-change)"), a Makefile's a
# conditional ("ifeq (...)"): a risk explanation saying "Capabilities()
# was fixed 1 time before" names a function that does not exist. The
# index stores no function for such hunks, the risk line names the C
# function a fix changed before and not the heading, and `quorum similar`
# keeps finding the C fix.
. "$(dirname "$0")/lib.sh"

command -v sqlite3 >/dev/null 2>&1 || skip_all "sqlite3 not installed"

CLOCK_START=1500000000 CLOCK_STEP=$((86400 * 20))
. "$TOP/tests/lib/history.sh"

# tool.8: a heading that reads like a call, then 12 capabilities (no
# line starts with a letter, so git keeps the heading as the section);
# the last one says $1.
man_page() {
	{
		echo '.TH TOOL 8'
		echo '.SH CAPABILITIES'
		echo 'Capabilities (state-can-change, priority-can-change)'
		i=0
		while [ $i -lt 12 ]; do
			echo ".B cap$i"
			if [ $i -eq 11 ]; then
				echo "	describes capability $i${1:+ ($1)}"
			else
				echo "	describes capability $i"
			fi
			i=$((i + 1))
		done
	} >tool.8
}

# pin.c: pin_show() of 20 statements; the 15th says $1.
pin_c() {
	{
		echo 'int pin_show(int *v, int n)'
		echo '{'
		i=0
		while [ $i -lt 20 ]; do
			if [ $i -eq 15 ]; then
				echo "	v[$i % n] += $1;"
			else
				echo "	v[$i % n] += pin_state(v, $i);"
			fi
			i=$((i + 1))
		done
		echo '	return 0;'
		echo '}'
	} >pin.c
}

# Makefile: a conditional as the section of its hunk; the last flag
# says $1.
make_file() {
	{
		echo 'ifeq ($(HAVE_PIN),y)'
		i=0
		while [ $i -lt 8 ]; do
			if [ $i -eq 7 ]; then
				echo "	CFLAGS += -DPIN_$i${1:+ -D$1}"
			else
				echo "	CFLAGS += -DPIN_$i"
			fi
			i=$((i + 1))
		done
		echo 'endif'
	} >Makefile
}

test_expect_success 'a history where a man page, a Makefile and a C function were fixed' '
	history_repo &&
	risk_history 10 &&
	tick && man_page && pin_c 1 && make_file &&
	git add tool.8 pin.c Makefile &&
	git commit -q -m "pin: add pin_show" &&
	BUG=$(git rev-parse HEAD) &&
	tick && man_page fixed && pin_c 2 && make_file FIXED &&
	git commit -q -am "pin: fix the state sum and its docs" -m "$(fixes "$BUG")" &&
	"$QUORUM" index -C "$R" >"$TMP/idx"
'
like "$TMP/idx" '^risk model: fitted on' "... fits a risk model"

test_expect_success 'the index keeps the C function of a fixed hunk, no heading or conditional' '
	sqlite3 "$R/.git/quorum/history.db" \
		"SELECT file || \" \" || func FROM funcfix ORDER BY 1" >"$TMP/ff" &&
	sqlite3 "$R/.git/quorum/history.db" \
		"SELECT DISTINCT file || \" \" || COALESCE(func, \"-\") FROM hunks ORDER BY 1" >"$TMP/hf"
'
like "$TMP/ff" '^pin\.c pin_show$' "... funcfix has pin.c pin_show"
unlike "$TMP/ff" '^(tool\.8|Makefile) ' "... and nothing of tool.8 or the Makefile"
unlike "$TMP/hf" '^tool\.8 Capabilities|^Makefile ifeq' "... nor do the stored hunks"

test_expect_success 'a patch touching the heading and the function' '
	tick && man_page again && pin_c 3 && make_file AGAIN &&
	git commit -q -am "pin: sum the states once more" &&
	git format-patch -q -o "$TMP/p" -1 HEAD &&
	git reset -q --hard HEAD~1 &&
	"$QUORUM" review -C "$R" --base HEAD "$TMP/p"/*.patch >"$TMP/out" 2>&1;
	grep "^  1/1  risk " "$TMP/out" >"$TMP/why"
'
like "$TMP/why" 'pin_show\(\) was fixed 1 time before' "the risk line names the C function fixed before"
unlike "$TMP/why" 'Capabilities\(\)|ifeq\(\)' "... and no heading or conditional as a function"

test_expect_success 'similar still finds the C fix' '
	"$QUORUM" similar -C "$R" "$TMP/p"/*.patch >"$TMP/sim" 2>&1
'
like "$TMP/sim" 'pin: fix the state sum' "... the fix of pin_show"

done_testing
