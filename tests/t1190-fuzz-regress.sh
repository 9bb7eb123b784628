#!/bin/sh
# Replay every input the fuzzers ever crashed on (tests/fuzz/regress/)
# through quorum parse: each must end in exit 0 or 2, never a crash or a
# sanitizer report (make asan runs this with the ASan+UBSan binary).
. "$(dirname "$0")/lib.sh"

n=0
for f in "$TOP"/tests/fuzz/regress/*; do
	[ -f "$f" ] || continue
	n=$((n + 1))
	name=$(basename "$f")
	test_expect_success "$name: exit 0 or 2" '
		run "$QUORUM" parse --json "$f" &&
		echo "exit $rc" &&
		head -20 "$TMP/err" &&
		case $rc in 0 | 2) true ;; *) false ;; esac
	'
	test_expect_success "$name: no sanitizer report" '
		test_grep -v "runtime error|AddressSanitizer|LeakSanitizer" "$TMP/err"
	'
done
[ $n -gt 0 ] || skip_all "no regression inputs in tests/fuzz/regress"
test_done
