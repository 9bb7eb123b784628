#!/bin/sh
# Corpus tier: every mbox of ../shared/corpora/b4-samples (real list threads
# from b4's own test suite) through `quorum parse --json`, checked against
# what `b4 am -m FILE -o -` itself makes of the same file: the number of
# patches, their titles, and their trailers (b4's own plus the follow-up
# trailers it applies; we may find more follow-ups than b4 applies, since
# b4 drops those whose address differs from the sender's, but never fewer).
. "$(dirname "$0")/lib.sh"

DIR=$SHARED/corpora/b4-samples
[ -d "$DIR" ] || skip_all "$DIR is absent"
command -v b4 >/dev/null || skip_all "b4 is not installed"
command -v python3 >/dev/null || skip_all "python3 is needed to read JSON"

cat >"$TMP/cmp.py" <<'EOF'
# cmp.py OURS.json B4.mbox: print "count|titles|trailers" lines, each
# "ok" or a reason.
import json, re, sys

ours = json.load(open(sys.argv[1]))
raw = open(sys.argv[2], encoding="utf-8", errors="replace").read()

# b4's mbox: split on its From_ lines, take subject and the trailers of
# the last paragraph before "---"
msgs = [m for m in re.split(r"^From [^\n]* \d{4}\n", raw, flags=re.M) if m.strip()]
b4 = []
for m in msgs:
    head, _, body = m.partition("\n\n")
    subj = re.search(r"^Subject: (.*(?:\n[ \t].*)*)", head, re.M)
    subj = re.sub(r"\s*\n[ \t]+", " ", subj.group(1)) if subj else ""
    title = re.sub(r"^(\s*\[[^\]]*\])+\s*", "", subj)
    # the commit message ends at "---", or where a diff starts
    cut = re.search(r"^(---$|--- |diff --git |Index: )", body, re.M)
    msg = body[:cut.start()] if cut else body
    rest = body[cut.start():] if cut else ""
    para = msg.rstrip("\n").split("\n\n")[-1]
    tr = [tuple(x.strip() for x in l.split(":", 1)) for l in para.split("\n")
          if re.match(r"^[A-Za-z0-9-]+: ", l)]
    # b4 0.12 appends follow-ups after a non-git diff: count those too
    tr += [tuple(x.strip() for x in l.split(":", 1))
           for l in rest.split("\n") if re.match(r"^[A-Za-z-]+-by: ", l)]
    b4.append((title, tr))

# ours: the newest series; a partial reroll takes the missing patches from
# the version before, as b4 does
series = [s for s in ours["series"]]
if not series:
    print("count|no series found"); sys.exit(0)
series.sort(key=lambda s: s["version"])
newest = series[-1]
patches = {p["index"]: p for p in newest["patches"]}
for older in reversed(series[:-1]):
    if older["total"] != newest["total"]:
        continue
    for p in older["patches"]:
        patches.setdefault(p["index"], p)
mine = [patches[i] for i in sorted(patches)]

print("count|" + ("ok" if len(mine) == len(b4) else
      "quorum %d patches, b4 %d" % (len(mine), len(b4))))
t_ours = [p["title"] for p in mine]
t_b4 = [t for t, _ in b4]
print("titles|" + ("ok" if t_ours == t_b4 else "quorum %r, b4 %r" % (t_ours, t_b4)))
bad = []
for p, (t, tr) in zip(mine, b4):
    own = [(x["key"], x["value"]) for x in p["trailers"]]
    fu = [(x["key"], x["value"]) for x in p["followups"]]
    low = lambda l: [(k.lower(), v) for k, v in l]
    for k, v in low(tr):
        if (k, v) not in low(own) + low(fu):
            bad.append("%s: b4 has %s: %s, quorum does not" % (t, k, v))
    for k, v in low(own):
        if (k, v) not in low(tr):
            bad.append("%s: quorum has %s: %s, b4 does not" % (t, k, v))
print("trailers|" + ("ok" if not bad else "; ".join(bad[:3])))
EOF

# b4 starts slowly: no attestation checks, and all files at once
git config --global b4.attestation-policy off
for f in "$DIR"/*.mbox; do
	[ -f "$f" ] || continue
	name=$(basename "$f" .mbox)
	(cd "$TMP" && b4 -n am -m "$f" -o - >"$TMP/$name.b4" 2>/dev/null) &
done
wait

n=0
for f in "$DIR"/*.mbox; do
	[ -f "$f" ] || continue
	n=$((n + 1))
	name=$(basename "$f" .mbox)
	"$QUORUM" parse --json "$f" >"$TMP/$name.json" 2>"$TMP/$name.err"
	rc=$?
	is "$rc" 0 "$name: quorum parse exits 0"
	if [ ! -s "$TMP/$name.b4" ]; then
		ok 1 "$name: b4 am produced nothing"
		continue
	fi
	python3 "$TMP/cmp.py" "$TMP/$name.json" "$TMP/$name.b4" \
		>"$TMP/$name.cmp" 2>&1
	for what in count titles trailers; do
		got=$(grep "^$what|" "$TMP/$name.cmp" | cut -d'|' -f2-)
		is "${got:-$(head -3 "$TMP/$name.cmp")}" ok "$name: $what as b4"
	done
done
[ $n -gt 0 ] || skip_all "no mbox in $DIR"

# what b4 leaves implicit: the naked cover letters
j() {
	python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$1" "$2" 2>&1
}
if [ -f "$TMP/naked-cover-single.json" ]; then
	is "$(j "$TMP/naked-cover-single.json" 'd["series"][0]["cover"]["message_id"]')" \
		"20221025-widget-v1-0-author@example.org" \
		"an unprefixed first mail by the author is the cover letter"
fi
if [ -f "$TMP/naked-cover-bugreport.json" ]; then
	is "$(j "$TMP/naked-cover-bugreport.json" '(d["series"][0]["cover"], len(d["others"]))')" \
		"(None, 1)" "a bug report by someone else is not a cover letter"
fi
if [ -f "$TMP/trailers-followup-partial-reroll.json" ]; then
	is "$(j "$TMP/trailers-followup-partial-reroll.json" '[(s["version"], s["superseded"], s["missing"]) for s in d["series"]]')" \
		"[(2, True, []), (3, False, [1])]" \
		"partial reroll: v2 superseded, v3 lacks patch 1"
fi
if [ -f "$TMP/trailers-thread-with-cover-followup.json" ]; then
	is "$(j "$TMP/trailers-thread-with-cover-followup.json" '[t["value"] for t in d["series"][0]["followups"]]')" \
		"['Cover Upper <cover.upper@example.org>']" \
		"trailers sent to the cover are the series' follow-ups"
fi

done_testing
