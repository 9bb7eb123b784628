#!/bin/sh
# make bench: run every tests/bench/bench-*.sh; each prints its figures as
# ratios against the tool a user would use instead, measured in the same run.
dir=$(dirname "$0")
status=0
for b in "$dir"/bench-*.sh; do
	[ -e "$b" ] || continue
	echo "== $(basename "$b" .sh)"
	sh "$b" || { echo "bench: $(basename "$b") failed"; status=1; }
done
exit $status
