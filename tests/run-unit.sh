#!/bin/sh
# Run each cmocka unit test binary; end with one summary line.
pass=0
fail=0
failed=
for t in "$@"; do
	if "$t"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		failed="$failed $(basename "$t")"
	fi
done
[ -n "$failed" ] && echo "unit: failing:$failed"
echo "unit: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
