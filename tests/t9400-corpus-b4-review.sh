#!/bin/sh
# Corpus tier: `b4 am -m THREAD -o - | quorum review -` on b4's own sample
# threads: quorum sees the same series in b4's output as in the raw
# thread (`quorum parse`), and reviews it.
. "$(dirname "$0")/lib.sh"

SAMPLES=$SHARED/corpora/b4-samples
[ -d "$SAMPLES" ] || skip_all "no corpus at $SAMPLES"
command -v b4 >/dev/null || skip_all "b4 is not installed"
command -v python3 >/dev/null || skip_all "python3 is needed to compare JSON"

cat >"$TMP/shape.py" <<'EOP'
import json, sys
d = json.load(open(sys.argv[1]))
for s in d["series"]:
    if s["superseded"]:
        continue
    print(s["version"], s["total"], s["complete"],
          [p["title"] if p else None for p in s["patches"]])
EOP

n=0
for f in "$SAMPLES"/*.mbox; do
	name=$(basename "$f" .mbox)
	# b4 fills a partial reroll with the earlier version's patches: a
	# different series by design (contrib/b4/README.md).
	case $name in *partial-reroll*) continue ;; esac
	(cd "$TMP" && b4 -q am -m "$f" -o - >"$TMP/$name.b4" 2>/dev/null)
	[ -s "$TMP/$name.b4" ] || continue
	n=$((n + 1))
	test_expect_success "$name: b4 am -o - gives the series of the raw thread" '
		"$QUORUM" parse --json "$f" >"$TMP/raw.json" 2>/dev/null
		"$QUORUM" parse --json "$TMP/$name.b4" >"$TMP/b4.json" 2>/dev/null
		python3 "$TMP/shape.py" "$TMP/raw.json" >"$TMP/raw.shape" &&
		python3 "$TMP/shape.py" "$TMP/b4.json" >"$TMP/b4.shape" &&
		test_cmp "$TMP/raw.shape" "$TMP/b4.shape"
	'
	test_expect_success "$name: quorum review - reads b4's output" '
		(cd "$TMP" && "$QUORUM" review --format json - <"$TMP/$name.b4" >"$TMP/r.json" 2>"$TMP/r.err")
		rc=$?
		echo "exit $rc" &&
		test "$rc" -le 1
	'
done
test_expect_success "b4 made an mbox of at least 10 sample threads" '
	echo "$n threads" &&
	test "$n" -ge 10
'

test_done
