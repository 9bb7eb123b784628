#!/bin/sh
# Replay every input the fuzzers ever crashed on (tests/fuzz/regress/)
# through quorum parse: each must end in exit 0 or 2, never a crash or a
# sanitizer report (make asan runs this with the ASan+UBSan binary).
. "$(dirname "$0")/lib.sh"

n=0
for f in "$TOP"/tests/fuzz/regress/*; do
	[ -f "$f" ] || continue
	n=$((n + 1))
	run "$QUORUM" parse --json "$f"
	case $rc in
	0 | 2) ok 0 "$(basename "$f"): exit $rc" ;;
	*)
		ok 1 "$(basename "$f"): exit $rc"
		sed 's/^/#   /' "$TMP/err" | head -20
		;;
	esac
	unlike "$TMP/err" "runtime error|AddressSanitizer|LeakSanitizer" \
		"$(basename "$f"): no sanitizer report"
done
[ $n -gt 0 ] || skip_all "no regression inputs in tests/fuzz/regress"
done_testing
