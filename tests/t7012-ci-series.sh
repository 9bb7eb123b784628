#!/bin/sh
# quorum ci: commits that follow each other are one series (the
# series-tip rule): a finding a later commit fixes is dropped, SARIF puts
# a finding where its lines are at the run's tip, a merge or a commit
# left out by --max-commits starts a new run.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip_all "python3 is needed to check JSON"

make_repo "$TMP/repo"
R=$TMP/repo
git -C "$R" tag base
# 1. A defect and its fix in the next commit: nothing to report.
commit_item_new "$R"
git -C "$R" tag buggy
sed -i 's/^\tit->id = id;/\tif (!it)\n\t\treturn NULL;\n\tit->id = id;/' "$R/main.c"
git -C "$R" commit -q -am "main: check item_new()'s allocation"
git -C "$R" tag fixed
run "$QUORUM" ci -C "$R" --range base..buggy
is "$rc" 1 "the defective commit alone: exit 1"
run "$QUORUM" ci -C "$R" --range base..fixed
is "$rc" 0 "the defect and its fix in one range: exit 0"
like "$TMP/err" '2 commits reviewed' "both commits are reviewed"
is "$(grep -c '^quorum review: ' "$TMP/out")" 1 "one report for the run"
like "$TMP/out" '^commits [0-9a-f]{12}\.\.[0-9a-f]{12} \(2\)$' "the report names the run's commits"
like "$TMP/out" '1 finding dropped: a later patch of the series changes those lines' "the fixed finding is counted as dropped"
run "$QUORUM" ci -C "$R" --range base..fixed --format json
git -C "$R" rev-list --reverse base..fixed >"$TMP/ids"
python3 - "$TMP/out" "$TMP/ids" >"$TMP/py" 2>&1 <<'EOP'
import json, sys
d = json.load(open(sys.argv[1]))
ids = open(sys.argv[2]).read().split()
(r,) = d["reviews"]
assert r["commits"] == ids, r["commits"]
assert r["commit"] == ids[-1]
assert [p["status"] for p in r["patches"]] == ["applied", "applied"]
assert [p["index"] for p in r["patches"]] == [1, 2]
assert r["series"]["total"] == 2
assert r["findings"] == [], r["findings"]
assert r["dropped"]["fixed_later"] == 1, r["dropped"]
print("ok")
EOP
ok $? "JSON: one review with both commits, the finding dropped as fixed later"; sed 's/^/# /' "$TMP/py"

# 2. A later commit moves the defect's lines: SARIF points at the tip.
git -C "$R" checkout -q -b shift buggy
sed -i '1i /* items: a list of ids. */\n/* (c) the authors */\n' "$R/main.c"
git -C "$R" commit -q -am "main: a header comment"
run "$QUORUM" ci -C "$R" --range base..shift --format json
python3 - "$TMP/out" >"$TMP/line" 2>"$TMP/py" <<'EOP'
import json, sys
d = json.load(open(sys.argv[1]))
(r,) = d["reviews"]
(f,) = r["findings"]
assert f["patch"] == 1 and f["file"] == "main.c"
t = f["at_tip"]
assert t["file"] == "main.c" and t["line_start"] == f["line_start"] + 3, (f, t)
print(f["line_start"], t["line_start"])
EOP
ok $? "JSON: the finding on commit 1 and where its lines are at the tip"; sed 's/^/# /' "$TMP/py"
read -r at1 attip <"$TMP/line"
is "$(git -C "$R" show buggy:main.c | sed -n "${at1}p")" "	it = malloc(sizeof(*it));" "line_start is the line in the commit's own tree"
is "$(git -C "$R" show shift:main.c | sed -n "${attip}p")" "	it = malloc(sizeof(*it));" "at_tip is the same line in the tip's tree"
run "$QUORUM" ci -C "$R" --range base..shift --format sarif
python3 - "$TMP/out" "$attip" "$(git -C "$R" rev-parse buggy)" >"$TMP/py" 2>&1 <<'EOP'
import json, sys
d = json.load(open(sys.argv[1]))
(x,) = d["runs"][0]["results"]
loc = x["locations"][0]["physicalLocation"]
assert loc["artifactLocation"]["uri"] == "main.c"
assert loc["region"]["startLine"] == int(sys.argv[2]), loc
assert x["properties"]["commit"] == sys.argv[3], x["properties"]
EOP
ok $? "SARIF: the region is in the tip's tree, the commit is named"; sed 's/^/# /' "$TMP/py"

# 3. A merge ends a run; so does a commit left out by --max-commits.
git -C "$R" checkout -q -b topic base
echo "int one(void) { return 1; }" >>"$R/main.c"
git -C "$R" commit -q -am "main: one()"
git -C "$R" checkout -q -b other base
echo "notes" >"$R/NOTES"
git -C "$R" add NOTES && git -C "$R" commit -q -m "notes: add"
git -C "$R" checkout -q topic
git -C "$R" merge -q --no-edit other
echo "int two(void) { return 2; }" >>"$R/main.c"
git -C "$R" commit -q -am "main: two()"
echo "int three(void) { return 3; }" >>"$R/main.c"
git -C "$R" commit -q -am "main: three()"
run "$QUORUM" ci -C "$R" --range base..topic --format json
is "$rc" 0 "a range with a merge: exit 0"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
runs = [[p["title"] for p in r["patches"]] for r in d["reviews"]]
assert runs == [["main: one()"], ["notes: add"], ["main: two()", "main: three()"]], runs
assert all(r["applied"] for r in d["reviews"])
' "$TMP/out"
ok $? "runs: one commit, the other side, then the two after the merge"
git -C "$R" checkout -q -b long base
printf 'int a(void)\n{\n\treturn 1;\n}\n' >>"$R/main.c"
git -C "$R" commit -q -am "main: a()"
sed -i 's/return 1;$/return 11;/' "$R/main.c"
git -C "$R" commit -q -am "main: a() returns 11"
printf 'int b(void)\n{\n\treturn 2;\n}\nint c(void)\n{\n\treturn 3;\n}\n' >>"$R/main.c"
git -C "$R" commit -q -am "main: b() and c()"
run "$QUORUM" ci -C "$R" --range base..long --max-commits 2 --format json
is "$rc" 0 "--max-commits 2 of 3: exit 0"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
runs = [[p["title"] for p in r["patches"]] for r in d["reviews"]]
assert runs == [["main: a()"], ["main: b() and c()"]], runs
assert all(r["applied"] for r in d["reviews"]), "the run after a skipped commit applies on its own parent"
assert [s["title"] for s in d["skipped"]] == ["main: a() returns 11"]
' "$TMP/out"
ok $? "a commit left out splits the run; the next run applies on its parent"

done_testing
