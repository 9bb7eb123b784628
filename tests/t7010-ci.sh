#!/bin/sh
# quorum ci: each non-merge commit of a range reviewed on its parent,
# oldest first; exit codes for every case; JSON and SARIF of a range; a
# budget of 0 with LLM voters; 20 commits of iproute2 when the corpus is here.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip_all "python3 is needed to check JSON"

make_repo "$TMP/repo"
R=$TMP/repo
git -C "$R" tag base
# A clean commit, a side branch merged in, then a defective commit.
commit_sum_ids "$R"
git -C "$R" tag clean
git -C "$R" checkout -q -b side base
echo "notes" >"$R/NOTES"
git -C "$R" add NOTES && git -C "$R" commit -q -m "notes: add"
git -C "$R" checkout -q main
git -C "$R" merge -q --no-edit side
cat >>"$R/main.c" <<'EOC'

/* A new item, or NULL when out of memory (one line more than sum_ids). */
struct item *item_new(int id)
{
	struct item *it;

	it = malloc(sizeof(*it));
	it->id = id;
	return it;
}
EOC
git -C "$R" commit -q -am "main: add item_new()"
git -C "$R" for-each-ref >"$TMP/refs-before"

# 1. The whole range: three commits, the merge skipped, a finding: exit 1.
run "$QUORUM" ci -C "$R" --range base..main
is "$rc" 1 "a range with a medium finding exits 1 (default --fail-on medium)"
like "$TMP/err" '3 commits reviewed, 1 merge skipped' "the merge is skipped and counted"
is "$(grep -c '^quorum review: ' "$TMP/out")" 3 "one report per non-merge commit"
is "$(grep '^quorum review: ' "$TMP/out" | tr '\n' '|')" \
	"quorum review: main: add sum_ids()|quorum review: notes: add|quorum review: main: add item_new()|" \
	"commits are reviewed oldest first"
like "$TMP/out" 'main\.c:[0-9]+.* in item_new\(\), patch 1/1, null-deref' "the defect is found in its commit"
git -C "$R" for-each-ref >"$TMP/refs-after"
cmp -s "$TMP/refs-before" "$TMP/refs-after"
ok $? "no ref changes"

# 2. --fail-on decides the exit status.
run "$QUORUM" ci -C "$R" --range base..main --fail-on high
is "$rc" 0 "--fail-on high: a medium finding exits 0"
run "$QUORUM" ci -C "$R" --range base..main --fail-on low
is "$rc" 1 "--fail-on low: exits 1"
run "$QUORUM" ci -C "$R" --range base..clean
is "$rc" 0 "a clean commit exits 0"
like "$TMP/out" 'No findings at quorum' "clean commit: no findings"
run "$QUORUM" ci -C "$R" --range main..main
is "$rc" 0 "an empty range exits 0"
like "$TMP/err" '0 commits reviewed' "an empty range says so"

# 3. JSON: one review per commit with its id; SARIF: results in main.c.
run "$QUORUM" ci -C "$R" --range base..main --format json --output "$TMP/ci.json"
is "$rc" 1 "--format json --output keeps the exit status"
git -C "$R" rev-list --reverse --no-merges base..main >"$TMP/ids"
python3 - "$TMP/ci.json" "$TMP/ids" >"$TMP/py" 2>&1 <<'EOP'
import json, sys
d = json.load(open(sys.argv[1]))
ids = open(sys.argv[2]).read().split()
assert d["schema"] == "quorum-review/1"
revs = d["reviews"]
got = [r["commit"] for r in revs]
assert sorted(got) == sorted(ids), got
# Oldest first: no commit comes before its parent.
for k, r in enumerate(revs):
    assert r["base"]["id"] not in got[k + 1:], k
for r, i in zip(revs, ids):
    assert r["applied"] is True
    assert r["base"]["source"] == "parent" and len(r["base"]["id"]) == 40
    assert r["patches"][0]["status"] == "applied"
    assert isinstance(r["findings"], list) and isinstance(r["voters"], list)
assert [len(r["findings"]) for r in revs] == [0, 0, 1]
assert revs[2]["commit"] == ids[-1]
f = revs[2]["findings"][0]
assert f["file"] == "main.c" and f["category"] == "null-deref"
assert f["severity"] == "medium" and f["voters"] == ["rules"]
print("ok")
EOP
ok $? "JSON: a review per commit, oldest first, with ids and the finding"; cat "$TMP/py" | sed "s/^/# /"
run "$QUORUM" ci -C "$R" --range base..main --format sarif
python3 - "$TMP/out" >"$TMP/py" 2>&1 <<'EOP'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["version"] == "2.1.0"
run = d["runs"][0]
assert run["tool"]["driver"]["name"] == "quorum"
assert [r["id"] for r in run["tool"]["driver"]["rules"]] == ["null-deref"]
(x,) = run["results"]
assert x["ruleId"] == "null-deref" and x["level"] == "warning"
loc = x["locations"][0]["physicalLocation"]
assert loc["artifactLocation"]["uri"] == "main.c"
assert 1 <= loc["region"]["startLine"] <= loc["region"]["endLine"]
EOP
ok $? "SARIF: one result with a relative URI and a region"

# 3b. Over --max-commits: the riskiest reviewed (no index: the most lines
# changed), the rest listed as skipped.
run "$QUORUM" ci -C "$R" --range base..main --max-commits 1
is "$rc" 1 "--max-commits 1 reviews the riskiest commit, the defective one"
like "$TMP/err" '1 commit reviewed, 1 merge skipped, 2 commits over --max-commits 1 skipped' "the summary counts the skipped commits"
is "$(grep -c '^quorum review: ' "$TMP/out")" 1 "one report"
like "$TMP/out" '^quorum review: main: add item_new\(\)$' "the largest commit is the one reviewed"
like "$TMP/out" '^skipped \(the range is over the limit\): [0-9a-f]{12} main: add sum_ids\(\)$' "a skipped commit is listed"
like "$TMP/out" '^skipped \(the range is over the limit\): [0-9a-f]{12} notes: add$' "every skipped commit is listed"
run "$QUORUM" ci -C "$R" --range base..main --max-commits 2 --format json
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert [r["series"]["title"] for r in d["reviews"]] == ["main: add sum_ids()", "main: add item_new()"], d["reviews"]
(s,) = d["skipped"]
assert s["title"] == "notes: add" and len(s["commit"]) == 40 and s["risk"] is None
' "$TMP/out"
ok $? "JSON lists the skipped commit and keeps the reviewed ones oldest first"
git -C "$R" config -f "$R/.git/quorum.conf" ci.max-commits 0
run "$QUORUM" ci -C "$R" --range base..main
is "$rc" 2 "config ci.max-commits = 0 exits 2"
like "$TMP/err" 'ci.max-commits must be 1 or more' "and says so"
rm "$R/.git/quorum.conf"

# 4. Usage and input errors: exit 2, one line.
run "$QUORUM" ci -C "$R"
is "$rc" 2 "no --range exits 2"
like "$TMP/err" '--range A\.\.B is required' "no --range says so"
run "$QUORUM" ci -C "$R" --range main
is "$rc" 2 "a range that is not A..B exits 2"
like "$TMP/err" "range 'main' is not of the form A\.\.B" "a range that is not A..B says so"
run "$QUORUM" ci -C "$R" --range base..nosuch
is "$rc" 3 "a range naming no commit exits 3, as review --base nosuch does"
is "$(lines "$TMP/err")" 1 "a bad range is one line"
like "$TMP/err" "range 'base\.\.nosuch' does not name two commits" "a bad range is named"
run "$QUORUM" ci -C "$R" --range base..main --fail-on severe
is "$rc" 2 "--fail-on severe exits 2"
run "$QUORUM" ci -C "$R" --range base..main --format bogus
is "$rc" 2 "--format bogus exits 2"
run "$QUORUM" ci -C "$R" --range base..main --format email
is "$rc" 2 "ci --format email exits 2 (a commit has no thread to reply in)"
run "$QUORUM" ci -C "$R" --range base..main --budget lots
is "$rc" 2 "--budget lots exits 2"

# 5. Environment: not a repository exits 3.
mkdir "$TMP/plain"
run "$QUORUM" ci -C "$TMP/plain" --range base..main
is "$rc" 3 "not a repository exits 3"

# 6. A budget of 0 with an LLM voter configured never asks it and says so.
cat >"$TMP/config" <<'EOC'
[voter "m"]
	provider = openai
	url = http://127.0.0.1:9/v1
	model = m
	price-in = 3
	price-out = 15
EOC
QUORUM_CONFIG=$TMP/config run "$QUORUM" ci -C "$R" --range base..main --budget 0 --format json
is "$rc" 1 "--budget 0 with an LLM voter still reviews"
like "$TMP/err" '--budget 0: reviewing with the offline voters only' "--budget 0 says the models are not asked"
python3 -c '
import json, sys
for r in json.load(open(sys.argv[1]))["reviews"]:
    assert not any(v["llm"] for v in r["voters"]), r["voters"]
    assert r["abstentions"] == [] and r["cost"]["usd"] == 0
' "$TMP/out"
ok $? "--budget 0: no LLM voter took part and nothing was spent"

# 7. Corpus: 20 commits of iproute2 with the offline voters, JSON checked.
BUNDLE=$SHARED/corpora/iproute2.bundle
if [ -r "$BUNDLE" ] && git clone -q "$BUNDLE" "$TMP/ip" 2>/dev/null; then
	top=$(git -C "$TMP/ip" rev-list --no-merges -n 1 HEAD)
	from=$(git -C "$TMP/ip" rev-list --no-merges -n 21 "$top" | tail -1)
	git -C "$TMP/ip" rev-list --reverse --no-merges "$from..$top" >"$TMP/ip-ids"
	run "$QUORUM" ci -C "$TMP/ip" --range "$from..$top" --format json --output "$TMP/ip.json"
	ok "$([ "$rc" -eq 0 ] || [ "$rc" -eq 1 ]; echo $?)" "iproute2: 20 commits reviewed (exit $rc)"
	python3 - "$TMP/ip.json" "$TMP/ip-ids" >"$TMP/py" 2>&1 <<'EOP'
import json, sys
d = json.load(open(sys.argv[1]))
ids = open(sys.argv[2]).read().split()
revs = d["reviews"]
assert len(ids) == 20, len(ids)
# Runs of consecutive commits, each one series: commits[k] is patches[k].
got = [c for r in revs for c in r["commits"]]
assert set(got) <= set(ids) and len(set(got)) == len(got), got
assert len(got) >= 18, len(got)  # empty commits carry no diff
for k, r in enumerate(revs):
    assert len(r["commits"]) == len(r["patches"]), k
    assert r["commit"] == r["commits"][-1]
    # Oldest first: no run comes before its base.
    assert r["base"]["id"] not in [c for x in revs[k:] for c in x["commits"]], k
for r in revs:
    assert r["applied"] is True, r["patches"]
    for k in ("series", "patches", "quorum", "voters", "findings", "minority",
              "abstentions", "dropped", "cost"):
        assert k in r, k
    for f in r["findings"] + r["minority"]:
        assert f["severity"] in ("low", "medium", "high", "critical")
        assert isinstance(f["line_start"], int) and f["file"]
        assert not f["file"].startswith("/")
print("ok", len(got), "commits in", len(revs), "runs")
EOP
	ok $? "iproute2: the JSON of 20 commits holds the schema ($(cat "$TMP/py" | tail -1))"; sed "s/^/# /" "$TMP/py"
	run "$QUORUM" ci -C "$TMP/ip" --range "$from..$top" --format sarif
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["version"] == "2.1.0"
for x in d["runs"][0]["results"]:
    u = x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert not u.startswith("/") and ".." not in u.split("/")
' "$TMP/out"
	ok $? "iproute2: SARIF URIs are relative to the repo"
	# With the history index, over --max-commits: the riskiest first.
	"$QUORUM" index -C "$TMP/ip" >/dev/null 2>&1
	run "$QUORUM" ci -C "$TMP/ip" --range "$from..$top" --max-commits 5 --format json
	python3 - "$TMP/out" >"$TMP/py" 2>&1 <<'EOP'
import json, sys
d = json.load(open(sys.argv[1]))
revs, skipped = d["reviews"], d["skipped"]
pats = [p for r in revs for p in r["patches"]]
assert len(pats) == 5 and len(skipped) == 15, (len(pats), len(skipped))
low = min(p["risk"] for p in pats)
high = max(s["risk"] for s in skipped)
assert high <= low + 1e-9, (high, low)
print("ok", low, high)
EOP
	ok $? "iproute2: --max-commits 5 reviews the 5 riskiest by the index ($(tail -1 "$TMP/py"))"
else
	ok 0 "# SKIP no corpus at $BUNDLE"
fi

done_testing
