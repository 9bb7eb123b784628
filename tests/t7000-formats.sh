#!/bin/sh
# quorum review --format text|json|sarif and --output: the JSON schema of
# contrib/review-json.md and the SARIF 2.1.0 required properties, checked
# with python3 on a real series (a clean patch and a defective one).
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip_all "python3 is needed to check JSON"

make_repo "$TMP/repo"
R=$TMP/repo
git -C "$R" tag base
item_series "$R"

# 1. Text stays the default and is byte for byte --format text.
run "$QUORUM" review -C "$R" "$TMP/series.mbox"
is "$rc" 1 "default format: a defect exits 1"
cp "$TMP/out" "$TMP/default.txt"
run "$QUORUM" review -C "$R" --format text "$TMP/series.mbox"
is "$rc" 1 "--format text exits 1"
cmp -s "$TMP/out" "$TMP/default.txt"
ok $? "--format text is the default output"
like "$TMP/out" 'votes: 1/1 \(rules\)' "text still shows the vote tally"

# 1b. Colour only on a terminal, and never with NO_COLOR.
grep -q "$(printf '\033')" "$TMP/default.txt"
ok $((!$?)) "no colour when standard output is not a terminal"
if command -v script >/dev/null; then
	TERM=xterm script -qec "'$QUORUM' review -C '$R' '$TMP/series.mbox'" /dev/null >"$TMP/tty.txt" 2>&1
	like "$TMP/tty.txt" "$(printf '\033')\\[33mmedium:$(printf '\033')\\[m" "a terminal shows the severity in colour"
	TERM=xterm NO_COLOR=1 script -qec "'$QUORUM' review -C '$R' '$TMP/series.mbox'" /dev/null >"$TMP/tty.txt" 2>&1
	like "$TMP/tty.txt" '^\[1\] medium: ' "NO_COLOR: the text as it is"
	grep -q "$(printf '\033')" "$TMP/tty.txt"
	ok $((!$?)) "NO_COLOR: no escape sequence at all"
else
	ok 0 "# SKIP script(1) is needed for a terminal"
fi

# 2. JSON: the documented schema.
run "$QUORUM" review -C "$R" --format json "$TMP/series.mbox"
is "$rc" 1 "--format json keeps the exit status"
cp "$TMP/out" "$TMP/review.json"
cat >"$TMP/check-json.py" <<'EOP'
import json, sys

def fail(msg):
    print(msg)
    sys.exit(1)

d = json.load(open(sys.argv[1]))
want_findings = int(sys.argv[2])
if d.get("schema") != "quorum-review/1": fail("schema")
if not isinstance(d.get("version"), str): fail("version")
revs = d["reviews"]
if not isinstance(revs, list) or len(revs) != 1: fail("reviews")
r = revs[0]
keys = ["series", "base", "applied", "patches", "quorum", "voters",
        "findings", "minority", "abstentions", "dropped", "cost",
        "stepdown", "no_history"]
for k in keys:
    if k not in r: fail("missing " + k)
s = r["series"]
for k, t in [("title", str), ("version", int), ("total", int),
             ("complete", bool), ("missing", list)]:
    if not isinstance(s[k], t): fail("series." + k)
b = r["base"]
if len(b["id"]) != 40 or b["source"] not in ("option", "series", "branch", "head", "parent"):
    fail("base")
if r["applied"] is not True: fail("applied")
for p in r["patches"]:
    if p["status"] not in ("applied", "failed", "skipped", "missing", "reviewed"):
        fail("patch status")
    if not isinstance(p["index"], int): fail("patch index")
    if p["status"] == "applied" and len(p["commit"]) != 40: fail("commit")
    for k in ("title", "message_id", "tree", "three_way", "error", "risk"):
        if k not in p: fail("patch." + k)
if [v["name"] for v in r["voters"]] == []: fail("voters")
for v in r["voters"]:
    if not isinstance(v["weight"], (int, float)) or not isinstance(v["llm"], bool):
        fail("voter fields")
if len(r["findings"]) != want_findings: fail("findings: %d" % len(r["findings"]))
for f in r["findings"] + r["minority"]:
    for k, t in [("patch", int), ("file", str), ("line_start", int),
                 ("line_end", int), ("severity", str), ("category", str),
                 ("title", str), ("votes", (int, float)), ("voters", list),
                 ("preexisting", bool), ("cites", list)]:
        if not isinstance(f[k], t): fail("finding." + k)
    if f["severity"] not in ("low", "medium", "high", "critical"): fail("severity")
    t = f["at_tip"]
    if t is not None and not (isinstance(t["file"], str) and
            isinstance(t["line_start"], int) and
            t["line_start"] <= t["line_end"]):
        fail("finding.at_tip")
    if not f["voters"]: fail("finding without voters")
for k in ("outside_patch", "hallucinated", "fixed_later"):
    if not isinstance(r["dropped"][k], int): fail("dropped." + k)
for k in ("usd", "requests", "cached", "tokens_in", "tokens_out"):
    if not isinstance(r["cost"][k], (int, float)): fail("cost." + k)
if not isinstance(r["abstentions"], list): fail("abstentions")
if want_findings:
    f = r["findings"][0]
    if (f["file"], f["patch"], f["voters"]) != ("main.c", 2, ["rules"]):
        fail("finding: %r" % f)
    if "malloc" not in f["quote"] or f["line_start"] < 20: fail("finding quote/line")
print("ok")
EOP
python3 "$TMP/check-json.py" "$TMP/review.json" 1 >"$TMP/py" 2>&1
ok $? "JSON holds the documented fields and types"
like "$TMP/py" '^ok$' "JSON check ran"
like "$TMP/review.json" '"function":[[:space:]]*"item_new"' "JSON finding names the function"

run "$QUORUM" review -C "$R" --format json "$TMP"/clean/*.patch
is "$rc" 0 "--format json on a clean patch exits 0"
python3 "$TMP/check-json.py" "$TMP/out" 0 >"$TMP/py" 2>&1
ok $? "clean patch: valid JSON with no findings"

# 3. SARIF 2.1.0: required properties and types, URIs relative to the repo.
run "$QUORUM" review -C "$R" --format sarif --output "$TMP/review.sarif" "$TMP/series.mbox"
is "$rc" 1 "--format sarif --output exits 1"
is "$(lines "$TMP/out")" 0 "--output leaves standard output empty"
cat >"$TMP/check-sarif.py" <<'EOP'
import json, sys

def fail(msg):
    print(msg)
    sys.exit(1)

d = json.load(open(sys.argv[1]))
want = int(sys.argv[2])
if d.get("version") != "2.1.0": fail("version")
if not isinstance(d.get("$schema"), str): fail("$schema")
runs = d["runs"]
if not isinstance(runs, list) or len(runs) != 1: fail("runs")
run = runs[0]
drv = run["tool"]["driver"]
if drv["name"] != "quorum" or not isinstance(drv["version"], str): fail("driver")
rules = drv["rules"]
ids = [r["id"] for r in rules]
if len(set(ids)) != len(ids): fail("duplicate rules")
for r in rules:
    if not isinstance(r["id"], str): fail("rule id")
    if not isinstance(r["shortDescription"]["text"], str): fail("rule text")
res = run["results"]
if len(res) != want: fail("results: %d" % len(res))
for x in res:
    if x["ruleId"] not in ids: fail("ruleId not a rule")
    if ids[x["ruleIndex"]] != x["ruleId"]: fail("ruleIndex")
    if x["level"] not in ("none", "note", "warning", "error"): fail("level")
    if not isinstance(x["message"]["text"], str) or not x["message"]["text"]:
        fail("message.text")
    for loc in x["locations"]:
        pl = loc["physicalLocation"]
        uri = pl["artifactLocation"]["uri"]
        if uri.startswith("/") or ":" in uri or ".." in uri.split("/"):
            fail("uri not relative: " + uri)
        reg = pl["region"]
        if not (isinstance(reg["startLine"], int) and reg["startLine"] >= 1):
            fail("startLine")
        if reg["endLine"] < reg["startLine"]: fail("endLine")
if want:
    x = res[0]
    if x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] != "main.c":
        fail("uri")
    if x["ruleId"] != "null-deref": fail("ruleId " + x["ruleId"])
print("ok")
EOP
python3 "$TMP/check-sarif.py" "$TMP/review.sarif" 1 >"$TMP/py" 2>&1
ok $? "SARIF has the 2.1.0 required properties, rules and relative URIs"
like "$TMP/py" '^ok$' "SARIF check ran"

run "$QUORUM" review -C "$R" --format sarif "$TMP"/clean/*.patch
python3 "$TMP/check-sarif.py" "$TMP/out" 0 >"$TMP/py" 2>&1
ok $? "clean patch: valid SARIF with no results"

# 3b. email: the reply quorum watch would send, to the author, in thread.
run "$QUORUM" review -C "$R" --format email "$TMP/series.mbox"
is "$rc" 1 "--format email keeps the exit status"
cp "$TMP/out" "$TMP/reply.eml"
cover_from=$(sed -n 's/^From: //p' "$TMP"/series/0000-*.patch | head -1)
python3 - "$TMP/reply.eml" "$cover_from" >"$TMP/py" 2>&1 <<'EOP'
import email, sys
m = email.message_from_bytes(open(sys.argv[1], "rb").read())
assert m["Subject"] == "Re: [PATCH 0/2] main: item helpers", m["Subject"]
assert m["In-Reply-To"].startswith("<") and m["In-Reply-To"] == m["References"]
assert m["To"] == sys.argv[2], (m["To"], sys.argv[2])
assert m["From"] == "quorum <quorum@quorum.invalid>"
assert m["Auto-Submitted"] == "auto-generated"
assert m["X-Quorum-Voters"] == "rules"
body = m.get_payload(decode=True).decode()
assert "main.c:" in body and "votes: 1 of 1 (rules)" in body, body
assert "+\tit = malloc(sizeof(*it));" in body
print("ok")
EOP
ok $? "email: a reply in the thread, to the author, with the finding"
sed 's/^/# /' "$TMP/py"
cat >"$TMP/wconf" <<'EOC'
[watch]
	domain = bots.example.org
EOC
QUORUM_CONFIG=$TMP/wconf run "$QUORUM" review -C "$R" --format email "$TMP/series.mbox"
like "$TMP/out" '^From: quorum <quorum@bots\.example\.org>$' "email: watch.domain sets From:"
cat "$TMP/series.mbox" "$TMP"/clean/*.patch >"$TMP/two.mbox"
run "$QUORUM" review -C "$R" --format email "$TMP/two.mbox"
is "$rc" 1 "email of two series exits 1"
is "$(grep -c '^From quorum@localhost ' "$TMP/out")" 2 "two replies make an mbox of two messages"
is "$(grep -c '^In-Reply-To: ' "$TMP/out")" 2 "each reply is in its own thread"

# 4. A series that does not apply still gives JSON that says so; exit 2.
git -C "$R" checkout -q -b other base
sed -i 's/c++;/c += 1;/' "$R/main.c"
printf '\nint unrelated;\n' >"$R/main.c"
git -C "$R" commit -q -am "other: rewrite"
run "$QUORUM" review -C "$R" --format json "$TMP/series.mbox"
is "$rc" 2 "a series that does not apply exits 2 with --format json"
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["reviews"][0]
assert r["applied"] is False
assert r["patches"][0]["status"] == "failed" and r["patches"][0]["error"]
' "$TMP/out"
ok $? "JSON names the patch that failed and why"
git -C "$R" checkout -q base

# 5. Bad options: one line, exit 2, nothing on stdout.
run "$QUORUM" review -C "$R" --format bogus "$TMP/series.mbox"
is "$rc" 2 "--format bogus exits 2"
like "$TMP/err" "--format wants text, json, sarif or email, not 'bogus'" "--format bogus says what it wants"
is "$(lines "$TMP/out")" 0 "--format bogus prints nothing on stdout"
is "$(lines "$TMP/err")" 1 "--format bogus is one line"
run "$QUORUM" review -C "$R" --output "$TMP/no/such/dir/x.json" --format json "$TMP/series.mbox"
is "$rc" 3 "an unwritable --output exits 3"
like "$TMP/err" 'cannot write .*x\.json' "an unwritable --output is named"

done_testing
