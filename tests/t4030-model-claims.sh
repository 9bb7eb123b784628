#!/bin/sh
# What a model says is checked against what exists. A cited past fix must
# be a fix of the history index (a prefix resolved to its full id; made-up
# ids dropped, every cite without an index); a range must lie in the file
# and never widens a finding the others placed; a SARIF rule id and the
# JSON category come from quorum's own list, the model's text kept apart
# as data; SARIF's artifact URI is percent-encoded.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/llm.sh"
. "$TOP/tests/lib/history.sh"

TITLE='malloc() result `it` is dereferenced without a NULL check'
# The category a model gives, as JSON: ESC ]52 (a clipboard write), BEL.
CATJ='null-deref\u001b]52;c;eA==\u0007Bcc: evil@evil.example'
# The category as printed: the answer's control bytes made '?'.
CATP='null-deref?]52;c;eA==?Bcc: evil@evil.example'
# A file name with a space, %, #, ?, UTF-8 and a control byte.
ODD=$(printf 'a b%%#?\303\251\001.c')
ODD_URI='a%20b%25%23%3F%C3%A9%01.c'

# sarif.py SARIF: the rule ids, the results' ids and URIs, one a line
cat >"$TMP/sarif.py" <<'EOP'
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
for r in run["tool"]["driver"]["rules"]:
    print("rule", r["id"], "|", r["shortDescription"]["text"])
for x in run["results"]:
    loc = x["locations"][0]["physicalLocation"]
    print("result", x["ruleId"], loc["artifactLocation"]["uri"],
          "%d-%d" % (loc["region"]["startLine"], loc["region"]["endLine"]))
    print("message", json.dumps(x["message"]["text"]))
EOP

test_expect_success 'setup: item_new() on a 26-line main.c, item_dup() in an odd file' '
	make_repo "$TMP/r1" &&
	git -C "$TMP/r1" tag base &&
	commit_item_new "$TMP/r1" &&
	test "$(wc -l <"$TMP/r1/main.c")" = 26 &&
	MALLOC=$(grep -n "it = malloc" "$TMP/r1/main.c" | cut -d: -f1) &&
	sed -n "19,27p" "$TMP/r1/main.c" | sed "s/item_new/item_dup/" >"$TMP/r1/$ODD" &&
	git -C "$TMP/r1" add . &&
	git -C "$TMP/r1" commit -q --amend --no-edit &&
	git -C "$TMP/r1" format-patch -q -o "$TMP/p" -1 &&
	cat >"$TMP/s.json" <<-EOS &&
	{"models": {
	 "ma": [{"answer": {"findings": [
	   {"file": "main.c", "line_start": 1, "line_end": 401, "severity": "critical",
	    "category": "null-deref", "title": "$TITLE", "cites": ["deadbeefdead"]}]}}],
	 "mb": [{"answer": {"findings": [
	   {"file": "main.c", "line_start": 1, "line_end": 26, "severity": "high",
	    "category": "null-deref", "title": "$TITLE"},
	   {"file": "main.c", "line_start": $MALLOC, "severity": "high",
	    "category": "$CATJ",
	    "title": "B-SAYS: item_new() returns garbage", "cites": ["deadbeefdead"]}]}}]
	}}
	EOS
	fake_start "$TMP/s.json" &&
	{
		voter a openai ma &&
		voter b openai mb
	} >"$TMP/config"
'

review() {
	QUORUM_CONFIG=$TMP/config run "$QUORUM" review -C "$TMP/r1" \
		--base base --quorum 1 "$@" "$TMP"/p/*.patch
}

test_expect_success 'a range past the end of the file is dropped as made up' '
	review --format json &&
	test "$rc" = 1 &&
	python3 - "$TMP/out" <<-\EOP
	import json, sys
	r = json.load(open(sys.argv[1]))["reviews"][0]
	assert r["dropped"]["hallucinated"] == 1, r["dropped"]
	for f in r["findings"] + r["minority"]:
	    assert f["line_end"] <= 26, f
	EOP
	review &&
	test_grep "^1 finding dropped: quoting code the post-image does not have, or lines past its end\.$" "$TMP/out"
'
test_expect_success 'a wide range in the file does not widen the finding it joins' '
	review &&
	test_grep "^    main\.c:$MALLOC-$((MALLOC + 1)) in item_new\(\), patch 1/1, null-deref$" "$TMP/out" &&
	test_grep -v "main\.c:1-" "$TMP/out" &&
	test_grep "votes: 1/2 \(b\) \+ offline: rules" "$TMP/out"
'
test_expect_success 'nor its SARIF region' '
	review --format sarif &&
	python3 "$TMP/sarif.py" "$TMP/out" >"$TMP/sarif" &&
	test_grep "^result null-deref main\.c $MALLOC-$((MALLOC + 1))$" "$TMP/sarif" &&
	test_grep -v "401|-26$" "$TMP/sarif"
'
test_expect_success "without a history index, a made-up cite is not shown" '
	review &&
	test_grep -v "deadbeef" "$TMP/out" &&
	review --format json &&
	test_grep -v "deadbeef" "$TMP/out"
'
test_expect_success 'a SARIF rule id is one of quorum'"'"'s categories' '
	review --format sarif &&
	python3 "$TMP/sarif.py" "$TMP/out" >"$TMP/sarif" &&
	grep "^rule \|^result " "$TMP/sarif" | cut -d" " -f2 | sort -u >"$TMP/ids" &&
	test_grep -v "[^a-z-]" "$TMP/ids" &&
	test_grep "^other$" "$TMP/ids" &&
	test_grep "^rule other \| another kind of defect$" "$TMP/sarif" &&
	test_grep "^rule null-deref \| NULL pointer dereference$" "$TMP/sarif" &&
	test_grep -v "Bcc" "$TMP/ids"
'
test_expect_success "the model's category is message text, escaped" '
	grep -F "B-SAYS" "$TMP/sarif" >"$TMP/msg" &&
	grep -F "Category as the voter gave it: $CATP\"" "$TMP/msg"
'
test_expect_success 'JSON: the category is an id, the text apart' '
	review --format json &&
	python3 - "$TMP/out" "$CATP" <<-\EOP
	import json, sys
	known = {"null-deref", "leak", "lock-leak", "use-after-free",
	         "double-free", "bounds", "integer-overflow", "alloc-overflow",
	         "unsafe-string", "error-handling", "race", "logic",
	         "api-misuse", "history", "risk", "style", "other"}
	r = json.load(open(sys.argv[1]))["reviews"][0]
	fs = r["findings"] + r["minority"]
	assert all(f["category"] in known for f in fs), fs
	b = [f for f in fs if f["title"].startswith("B-SAYS")]
	assert len(b) == 1, fs
	assert b[0]["category"] == "other", b
	assert b[0]["category_text"] == sys.argv[2], b
	assert all(f["cites"] == [] for f in fs), fs
	EOP
'
test_expect_success 'a SARIF URI is percent-encoded' '
	review --format sarif &&
	python3 "$TMP/sarif.py" "$TMP/out" >"$TMP/sarif" &&
	test_grep "^result null-deref $ODD_URI [0-9]+-[0-9]+$" "$TMP/sarif" &&
	test_grep "^result null-deref main\.c " "$TMP/sarif"
'
fake_stop

test_expect_success 'setup: a history index with one past fix; models cite it and more' '
	history_repo &&
	commit_net_bug &&
	commit_net_fix "$BUG" &&
	git tag base &&
	run "$QUORUM" index -C "$R" &&
	test "$rc" = 0 &&
	net_c_alias &&
	tick && git commit -q -am "net: parse aliases too" &&
	git format-patch -q -o "$TMP/p2" -1 HEAD &&
	COPY=$(grep -n "memcpy(o->name, arg, arg_len);" net.c | cut -d: -f1) &&
	F12=$(echo "$FIX" | cut -c1-12 | tr a-f A-F) &&
	B12=$(echo "$BUG" | cut -c1-12) &&
	cat >"$TMP/s2.json" <<-EOS &&
	{"models": {
	 "ma": [{"answer": {"findings": [{"file": "net.c", "line_start": $COPY,
	   "severity": "high", "category": "bounds", "title": "unbounded copy into o->name",
	   "cites": ["deadbeefdead", "$F12", "$B12"]}]}}],
	 "mb": [{"answer": {"findings": [{"file": "net.c", "line_start": $COPY,
	   "severity": "high", "category": "bounds", "title": "copy of arg has no bound",
	   "cites": ["$B12", "cafe0000cafe"]}]}}]
	}}
	EOS
	fake_start "$TMP/s2.json" &&
	{
		voter a openai ma &&
		voter b openai mb
	} >"$TMP/config"
'
test_expect_success 'a cite is the fix of the index it names, in full; the rest are dropped' '
	QUORUM_CONFIG=$TMP/config run "$QUORUM" review -C "$R" --base base \
		--format json "$TMP"/p2/*.patch &&
	test "$rc" = 1 &&
	python3 - "$TMP/out" "$FIX" <<-\EOP
	import json, sys
	fs = json.load(open(sys.argv[1]))["reviews"][0]["findings"]
	assert len(fs) == 1 and fs[0]["votes"] == 2, fs
	assert fs[0]["cites"] == [sys.argv[2]], fs[0]["cites"]
	EOP
'
test_expect_success 'the text names that fix once, and nothing made up' '
	QUORUM_CONFIG=$TMP/config run "$QUORUM" review -C "$R" --base base \
		"$TMP"/p2/*.patch &&
	grep "cites past fix" "$TMP/out" >"$TMP/cites" &&
	test_line_count = 1 "$TMP/cites" &&
	test_grep "cites past fix $(echo "$FIX" | cut -c1-12) \"net: bound the name copy in parse_opts\"" "$TMP/cites" &&
	test_grep -v "deadbeef|cafe0000|$B12" "$TMP/cites"
'

test_done
