#!/bin/sh
# Prerequisite series: `b4 am -o - <msgid> | quorum review -` when the
# series S only applies on top of another series P. b4 >= 0.14 writes P's
# patches and then S's into one mbox; git format-patch --base writes
# prerequisite-patch-id: lines. quorum applies P first, reviews S only,
# and says which prerequisite is missing when P is not there at all.
# The b4 cases skip one by one when b4 is not installed.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip_all "python3 is needed to read JSON"
HAVE_B4=0
command -v b4 >/dev/null && HAVE_B4=1

# The author's tree: P (2 commits) on upstream, S (2 commits) on P.
A=$TMP/author
make_repo "$A"
git -C "$A" tag upstream
git -C "$A" checkout -q -b p upstream
commit_item_new "$A" "item: add item_new()"
cat >>"$A/main.c" <<'EOC'

void item_free(struct item *it)
{
	free(it);
}
EOC
git -C "$A" commit -q -am "item: add item_free()"
git -C "$A" checkout -q -b s p
sed -i 's/^int count_items/int sum_ids(struct item *items, int n)\n{\n\tint i, s = 0;\n\n\tfor (i = 0; i < n; i++)\n\t\ts += items[i].id;\n\treturn s;\n}\n\nint count_items/' "$A/main.c"
git -C "$A" commit -q -am "item: add sum_ids()"
# S's second patch changes lines P added, and plants a use after free.
sed -i 's/^\tfree(it);/\tfree(it);\n\tit->id = 0;/' "$A/main.c"
git -C "$A" commit -q -am "item: clear the id of freed items"
# Two series independent of P and S, for the regression case.
git -C "$A" checkout -q -b a upstream
printf 'int alpha(void)\n{\n\treturn 1;\n}\n' >"$A/alpha.c"
git -C "$A" add alpha.c && git -C "$A" commit -q -m "alpha: add alpha()"
git -C "$A" checkout -q -b b upstream
printf 'int beta(void)\n{\n\treturn 2;\n}\n' >"$A/beta.c"
git -C "$A" add beta.c && git -C "$A" commit -q -m "beta: add beta()"
git -C "$A" checkout -q main
PID1=$(git -C "$A" show p~1 | git patch-id --stable | cut -c1-40)
PID2=$(git -C "$A" show p | git patch-id --stable | cut -c1-40)

# fmt DIR RANGE TITLE [format-patch options]: a posted thread in DIR.mbox
fmt() {
	dir=$1 range=$2 title=$3
	shift 3
	git -C "$A" format-patch -q --base=upstream --thread \
		--to=list@example.org -o "$TMP/$dir" "$@" "$range" &&
	# Covers made in the same second share a message-id: tell them apart.
	sed -i -e "s/\*\*\* SUBJECT HERE \*\*\*/$title/" \
		-e "s/<cover\./<cover-$dir./" "$TMP/$dir"/*.patch &&
	cat "$TMP/$dir"/*.patch >"$TMP/$dir.mbox"
}
fmt P upstream..p "item: allocation helpers" --cover-letter
fmt S p..s "item: sums and clean-up" --cover-letter
fmt Snc p..s "unused"
fmt Aa upstream..a "unused"
fmt Bb upstream..b "unused"
like "$TMP/S.mbox" "^prerequisite-patch-id: $PID1" "fixture: S's cover names P's patches"

# The reviewer's repository has upstream only: not P, not even its objects.
R=$TMP/repo
git clone -q --no-local --single-branch --branch main "$A" "$R"

# b4am MBOX OUT: b4 am of a thread to an am-ready mbox (b4 0.12 drops
# the cover letter and its base-commit/prerequisite lines).
b4am() {
	(cd "$TMP" && b4 -q am -m "$1" -o - >"$2" 2>"$TMP/b4.err")
}

# reviews FILE: "title|prerequisites|base note|patches|findings" per review
cat >"$TMP/shape.py" <<'EOP'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["reviews"]:
    print("|".join([
        r["series"]["title"],
        ",".join("%s/%d/%s" % (p["title"], p["patches"], p["message_id"])
                 for p in r["prerequisites"]),
        (r["base"] or {}).get("note") or "",
        ",".join("%d:%s:%s" % (p["index"], p["status"], p["title"])
                 for p in r["patches"]),
        ",".join("%d:%s" % (f["patch"], f["category"])
                 for f in r["findings"]),
    ]))
EOP
reviews() { python3 "$TMP/shape.py" "$1"; }

S_PATCHES="1:applied:item: add sum_ids(),2:applied:item: clear the id of freed items"
P_NOTE="on top of prerequisite series 'item: allocation helpers' \(2 patches\) from the same input"

# (ii) The raw threads of P and S (covers with prerequisite-patch-id:).
cat "$TMP/P.mbox" "$TMP/S.mbox" >"$TMP/PS.mbox"
run "$QUORUM" review -C "$R" "$TMP/PS.mbox"
is "$rc" 1 "P+S threads: S is reviewed on top of P (finding: exit 1)"
is "$(grep -c '^quorum review:' "$TMP/out")" 1 "P+S threads: one review, S's"
like "$TMP/out" '^quorum review: item: sums and clean-up$' "P+S threads: the review is S's"
like "$TMP/out" "used base-commit [0-9a-f]{12}; $P_NOTE" "P+S threads: base note names P"
like "$TMP/out" "^prerequisite: item: allocation helpers \(v1, 2 patches, <cover-P\..*>\) applied first, not reviewed itself$" \
	"P+S threads: the report says P was applied, not reviewed"
like "$TMP/out" 'use-after-free|used after .*free' "P+S threads: the bug planted in S is found"
like "$TMP/out" 'in item_free\(\), patch 2/2' "P+S threads: ... in S's patch 2"
unlike "$TMP/out" 'malloc|null-deref' "P+S threads: the bug in P is not reported"
run "$QUORUM" review -C "$R" --format json "$TMP/PS.mbox"
reviews "$TMP/out" >"$TMP/shape"
is "$(lines "$TMP/shape")" 1 "P+S threads JSON: one review"
is "$(cut -d'|' -f1 "$TMP/shape")" "item: sums and clean-up" "P+S threads JSON: S's title"
like "$TMP/shape" "^[^|]*\|item: allocation helpers/2/cover-P\.[^|]*\|" "P+S threads JSON: prerequisites names P, its size and message-id"
like "$TMP/shape" "\|[^|]*$P_NOTE[^|]*\|" "P+S threads JSON: base.note names P"
is "$(cut -d'|' -f4 "$TMP/shape")" "$S_PATCHES" "P+S threads JSON: patches are S's only"
is "$(cut -d'|' -f5 "$TMP/shape")" "2:use-after-free" "P+S threads JSON: the one finding is S's"

# The models see S's changes only: P's lines are base, in every prompt
# and in the combined diff of the series tip; a finding about them is
# about code S did not touch, so it is not at quorum.
. "$TOP/tests/lib/llm.sh"
MALLOC=$(git -C "$A" show s:main.c | grep -n 'it = malloc' | cut -d: -f1)
cat >"$TMP/llm.json" <<EOS
{"models": {"m1": [{"answer": {"findings": [{"file": "main.c", "line_start": $MALLOC, "line_end": $((MALLOC + 1)), "severity": "high", "category": "null-deref", "title": "PLANTED-IN-P unchecked malloc", "quote": "it = malloc(sizeof(*it));"}]}}]}}
EOS
fake_start "$TMP/llm.json"
voter m1 openai m1 >"$TMP/config"
QUORUM_CONFIG=$TMP/config run "$QUORUM" review -C "$R" --format json "$TMP/PS.mbox"
fake_stop
is "$(requests m1)" 3 "LLM: S's two patches and its tip are asked about, not P's"
for f in "$REC"/*.json; do prompt_of "$f"; done >"$TMP/prompts"
like "$TMP/prompts" 'patches 1-2 combined' "LLM: the series tip was asked about"
like "$TMP/prompts" '^ *[0-9]+ \+	it->id = 0;' "LLM: S's lines are in the prompts"
unlike "$TMP/prompts" '^ *[0-9]+ \+(	it = malloc|struct item \*item_new|void item_free)' \
	"LLM: P's lines are never shown as added (the tip starts at P's tip)"
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["reviews"][0]
for k in ("findings", "minority"):
    print(k, " ".join("%d:%s:%s" % (f["patch"], f["preexisting"], f["title"][:12]) for f in r[k]))
' "$TMP/out" >"$TMP/j"
unlike "$TMP/j" 'PLANTED' "LLM: the finding about P's code is not at quorum, nor in the minority"
like "$TMP/j" '^findings 2:False:`it` is used$' "LLM: S's use after free is the one finding"

# Declared, not guessed: with an independent series between P and S,
# S still gets P alone, and the other one is reviewed on its own.
cat "$TMP/P.mbox" "$TMP/Aa.mbox" "$TMP/S.mbox" >"$TMP/PAS.mbox"
run "$QUORUM" review -C "$R" --format json "$TMP/PAS.mbox"
reviews "$TMP/out" >"$TMP/shape"
is "$(cut -d'|' -f1,2 "$TMP/shape" | sed 's/cover-P\.[^|]*/ID/')" \
	"$(printf 'alpha: add alpha()|\nitem: sums and clean-up|item: allocation helpers/2/ID')" \
	"P, A, S: A is reviewed, S on top of P (its prerequisite-patch-id:), P not"

# (i) b4 >= 0.14: P's am-ready patches, then S's, no covers, no In-Reply-To.
if [ "$HAVE_B4" = 1 ] && b4am "$TMP/P.mbox" "$TMP/P.b4" && b4am "$TMP/S.mbox" "$TMP/S.b4"; then
	unlike "$TMP/S.b4" 'prerequisite-patch-id|^In-Reply-To' "b4 output: no declaration survived"
	cat "$TMP/P.b4" "$TMP/S.b4" >"$TMP/PS.b4"
	(cd "$TMP" && cat "$TMP/PS.b4" | "$QUORUM" review -C "$R" - >"$TMP/out" 2>"$TMP/err")
	is "$?" 1 "b4 P+S: S is reviewed on top of P (finding: exit 1)"
	is "$(grep -c '^quorum review:' "$TMP/out")" 1 "b4 P+S: one review"
	like "$TMP/out" "on top of prerequisite series 'item: add item_new\(\)' \(2 patches\) from the same input" \
		"b4 P+S: base note names P (by its first patch: no cover)"
	like "$TMP/out" 'in item_free\(\), patch 2/2' "b4 P+S: the bug planted in S is found"
	unlike "$TMP/out" 'malloc|null-deref' "b4 P+S: the bug in P is not reported"
	(cd "$TMP" && cat "$TMP/PS.b4" | "$QUORUM" review -C "$R" --format json - >"$TMP/out" 2>"$TMP/err")
	reviews "$TMP/out" >"$TMP/shape"
	is "$(cut -d'|' -f1 "$TMP/shape")" "item: add sum_ids()" "b4 P+S JSON: the review is S's"
	like "$TMP/shape" "^[^|]*\|item: add item_new\(\)/2/[0-9a-f]{40}\.[^|]*\|" "b4 P+S JSON: prerequisites names P"
	is "$(cut -d'|' -f4 "$TMP/shape")" "$S_PATCHES" "b4 P+S JSON: patches are S's only"
	is "$(cut -d'|' -f5 "$TMP/shape")" "2:use-after-free" "b4 P+S JSON: the one finding is S's"

	# Guessed, then trimmed: an independent series between P and S is
	# not taken for a prerequisite, and is reviewed on its own.
	b4am "$TMP/Aa.mbox" "$TMP/A.b4"
	cat "$TMP/P.b4" "$TMP/A.b4" "$TMP/S.b4" >"$TMP/PAS.b4"
	run "$QUORUM" review -C "$R" --format json "$TMP/PAS.b4"
	reviews "$TMP/out" >"$TMP/shape"
	is "$(cut -d'|' -f1,2 "$TMP/shape" | sed 's,/[0-9a-f]\{40\}\.[^|]*,/ID,')" \
		"$(printf 'alpha: add alpha()|\nitem: add sum_ids()|item: add item_new()/2/ID')" \
		"b4 P, A, S: A is reviewed, S on top of P only, P not"

	# (iii) S alone from b4 (the cover and its declarations are gone).
	(cd "$TMP" && cat "$TMP/S.b4" | "$QUORUM" review -C "$R" - >"$TMP/out" 2>"$TMP/err")
	is "$?" 2 "b4 S alone: exit 2"
	is "$(lines "$TMP/err")" 1 "b4 S alone: a one-line error"
	like "$TMP/err" '^quorum: patch 2/2 "item: clear the id of freed items" does not apply: main\.c' \
		"b4 S alone: says which patch does not apply"
	like "$TMP/out" 'Not reviewed: the series does not apply' "b4 S alone: the report says why"
else
	i=0
	while [ $i -lt 15 ]; do
		_tap_n=$((_tap_n + 1))
		echo "ok $_tap_n # SKIP b4 is not installed or failed"
		i=$((i + 1))
	done
fi

# (iii) S alone, posted without a cover: patch 1 carries the
# prerequisite-patch-id: lines (b4 0.12 keeps them), so they are named.
SNC=$TMP/Snc.mbox
if [ "$HAVE_B4" = 1 ] && b4am "$TMP/Snc.mbox" "$TMP/Snc.b4"; then
	SNC=$TMP/Snc.b4
fi
run sh -c "cat '$SNC' | '$QUORUM' review -C '$R' -"
is "$rc" 2 "S alone with declarations: exit 2"
is "$(lines "$TMP/err")" 1 "S alone with declarations: a one-line error"
like "$TMP/err" "^quorum: patch 2/2 \"item: clear the id of freed items\" does not apply: .*missing prerequisite patch-id $PID1, $PID2\)$" \
	"S alone with declarations: the error names the missing prerequisites"
like "$TMP/out" "prerequisite patch-id $PID1, $PID2 not among the last 1000 commits of the base" \
	"S alone with declarations: so does the report"
run sh -c "cat '$SNC' | '$QUORUM' review -C '$R' --format json -"
is "$rc" 2 "S alone with declarations, JSON: exit 2"
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["reviews"][0]
print(r["applied"], r["prerequisites"], r["patches"][1]["status"], r["patches"][1]["error"])
' "$TMP/out" >"$TMP/j"
like "$TMP/j" "^False \[\] failed patch 2/2 .* does not apply: .*missing prerequisite patch-id $PID1, $PID2\)$" \
	"S alone with declarations, JSON: the failed patch names the missing prerequisites"

# (iv) Two independent series in one input are both reviewed.
cat "$TMP/Aa.mbox" "$TMP/Bb.mbox" >"$TMP/AB.mbox"
run "$QUORUM" review -C "$R" --format json "$TMP/AB.mbox"
is "$rc" 0 "A+B: exit 0"
reviews "$TMP/out" >"$TMP/shape"
is "$(cut -d'|' -f1,2,4 "$TMP/shape")" \
	"$(printf 'alpha: add alpha()||1:applied:alpha: add alpha()\nbeta: add beta()||1:applied:beta: add beta()')" \
	"A+B: both reviewed, neither a prerequisite of the other"

# (v) P already in the reviewer's HEAD: S alone applies there.
R2=$TMP/repo-p
git clone -q --no-local --single-branch --branch p "$A" "$R2"
run "$QUORUM" review -C "$R2" "$TMP/S.mbox"
is "$rc" 1 "P in HEAD: S alone is reviewed (finding: exit 1)"
like "$TMP/out" 'base: [0-9a-f]{12} \(HEAD\)' "P in HEAD: applied on HEAD"
unlike "$TMP/out" '^prerequisite:' "P in HEAD: no prerequisite series"
like "$TMP/out" 'in item_free\(\), patch 2/2' "P in HEAD: the bug planted in S is found"
# ... and with P's thread in the input too, S is still the one reviewed.
run "$QUORUM" review -C "$R2" "$TMP/PS.mbox"
is "$rc" 1 "P in HEAD, P+S threads: S is reviewed (finding: exit 1)"
is "$(grep -c '^quorum review:' "$TMP/out")" 1 "P in HEAD, P+S threads: one review"
like "$TMP/out" 'in item_free\(\), patch 2/2' "P in HEAD, P+S threads: the bug planted in S is found"

# b4 >= 0.14 declares by change-id: P's cover has change-id:, S's names
# it with prerequisite-change-id: ID:vN (and no patch-ids); S comes first
# in the input, P after it: declared, so found wherever it is.
CID=20261203-item-helpers-0123456789ab
sed "/^base-commit:/i change-id: $CID" "$TMP/P.mbox" >"$TMP/Pc.mbox"
sed -e '/^prerequisite-patch-id:/d' \
	-e "/^base-commit:/i prerequisite-change-id: $CID:v1" "$TMP/S.mbox" >"$TMP/Sc.mbox"
"$QUORUM" parse --json "$TMP/Sc.mbox" >"$TMP/parse.json"
like "$TMP/parse.json" "\"change_ids\":\\[\"$CID:v1\"\\]" "parse --json shows prerequisite-change-id"
cat "$TMP/Sc.mbox" "$TMP/Pc.mbox" >"$TMP/SPc.mbox"
run "$QUORUM" review -C "$R" --format json "$TMP/SPc.mbox"
is "$rc" 1 "S naming P by change-id, P after S: S reviewed on top of P (exit 1)"
reviews "$TMP/out" >"$TMP/shape"
is "$(lines "$TMP/shape")" 1 "change-id: one review"
like "$TMP/shape" "^item: sums and clean-up\|item: allocation helpers/2/cover-P\.[^|]*\|.*$P_NOTE\|" \
	"change-id: the review is S's, on top of P"
is "$(cut -d'|' -f4 "$TMP/shape")" "$S_PATCHES" "change-id: S's patches applied"
sed "s/prerequisite-change-id: $CID:v1/prerequisite-change-id: $CID:v2/" "$TMP/SPc.mbox" >"$TMP/SPc2.mbox"
run "$QUORUM" review -C "$R" --format json "$TMP/SPc2.mbox"
is "$rc" 2 "a change-id naming another version (v2) is not P: S does not apply (exit 2)"

# quorum apply takes the same input the same way: S on top of P.
run "$QUORUM" apply -C "$R" "$TMP/PS.mbox"
is "$rc" 0 "apply P+S threads: S applies on top of P"
like "$TMP/out" "^note: .*$P_NOTE" "apply: the note names the prerequisite series"
is "$(grep -c '^patch [0-9]/2 applied' "$TMP/out")" 2 "apply: S's two patches, P's not listed on their own"
run "$QUORUM" apply -C "$R" "$TMP/S.mbox"
is "$rc" 2 "apply S alone: does not apply (exit 2)"
like "$TMP/err" "missing prerequisite patch-id $PID1" "apply S alone: the missing prerequisite is named"

done_testing
