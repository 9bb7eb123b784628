#!/bin/sh
# contrib/ci/: the GitHub Actions and GitLab CI examples are valid YAML,
# and every quorum option they use is one `quorum` accepts.
. "$(dirname "$0")/lib.sh"

python3 -c 'import yaml' 2>/dev/null || skip_all "python3 yaml module not installed"

for f in "$TOP"/contrib/ci/*.yml; do
	python3 -c '
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
assert isinstance(d, dict) and d
' "$f" 2>"$TMP/err"
	ok $? "$(basename "$f") is valid YAML"
	grep -q 'quorum ci --range' "$f"
	ok $? "$(basename "$f") runs quorum ci on a range"
	for cmd in ci index; do
		"$QUORUM" "$cmd" --help >"$TMP/help" 2>&1
		grep -o "quorum $cmd [^#]*" "$f" | grep -o -- '--[a-z-]*' | sort -u |
		while read -r opt; do
			grep -q -- "$opt" "$TMP/help" || echo "$opt"
		done >"$TMP/unknown"
		is "$(cat "$TMP/unknown")" "" "$(basename "$f"): quorum $cmd options exist"
	done
done

done_testing
