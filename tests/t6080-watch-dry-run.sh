#!/bin/sh
# issue 18 for watch: know before you spend. `quorum watch --once
# --dry-run` plans the pass and prints, per series, the voters the plan
# gives it and its estimated cost, and each request the models would
# get (or writes them to DIR with --dry-run=DIR); it sends the models
# nothing, mails nothing and records nothing: a real pass after it
# replies to each series exactly once.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/llm.sh"
. "$TOP/tests/lib/watch.sh"

command -v notmuch >/dev/null || skip_all "notmuch is not installed"
command -v python3 >/dev/null || skip_all "python3 is not installed"
watch_setup

cat >"$TMP/script.json" <<'EOS'
{"default": [{"answer": {"findings": []}, "usage": {"in": "auto", "out": 300}}],
 "tokenize": {}}
EOS
FAKE_TIMEOUT=300 fake_start "$TMP/script.json"
nreq() { ls "$REC" 2>/dev/null | grep -c 'json$'; }
conf() {
	watch_config "$(voter a openai ma price-in=3 price-out=15 max-tokens=1000)" \
		"$(voter b openai mb price-in=3 price-out=15 max-tokens=1000)" \
		'[review]' '	retries = 0' '[list "devel"]' "$@"
}

# A three-patch series and a one-patch one, no cap.
git -C "$R" format-patch -q --cover-letter --thread=shallow --to="$LIST" \
	-o "$TMP/s3" base..topic
post "$TMP/s3"
mail_single one "A U Thor <author@example.org>" "lib: add f_one()"
notmuch new --quiet
conf
export XDG_STATE_HOME=$TMP/state
watch --dry-run
[ -n "${KEEP:-}" ] && cp "$TMP/out" "$KEEP.out1"
is "$rc" 0 "watch --once --dry-run exits 0"
is "$(nreq)" 0 "no request went to the models"
is "$(nusage)" 0 "the server's usage log is empty"
is "$(outbox_count)" 0 "no reply is written"
like "$TMP/out" '^dry run: no request is sent to the models; only their free token counters' \
	"it says nothing is sent, and what may be asked"
is "$(grep -c '^dry run: no request is sent' "$TMP/out")" 1 "once, before the first series"
like "$TMP/out" '^dry run: list devel, "\[PATCH 0/3\] series s3": the models a, b: 8 requests, \$0\.[0-9]+ planned \(answers at the voters. floors\), at most \$0\.[0-9]+$' \
	"per series: its voters, requests and estimated cost"
like "$TMP/out" '^dry run: list devel, "\[PATCH\] lib: add f_one\(\)": the models a, b: 2 requests' \
	"the one-patch series too"
is "$(grep -c '^request [0-9]*: voter ' "$TMP/out")" 10 "each request: 2 voters x (3 patches + the tip + 1 patch)"
like "$TMP/out" '^request 1: voter a, patch 1/3, POST http://127\.0\.0\.1:[0-9]+/v1/chat/completions$' \
	"each says voter, patch and endpoint"
like "$TMP/out" '^\{"model":"ma","max_tokens":1000,.*"messages":\[\{"role":"system"' \
	"the exact request body is printed"
like "$TMP/out" '^total: 10 requests, at most \$[0-9.]+, about \$[0-9.]+; nothing was sent$' "and the totals"
unlike "$TMP/out" '^plan:' "no cap: no plan"
unlike "$TMP/out" '^devel: reviewed' "no series is reviewed"
ok "$([ "$(ls "$REC.tok" | wc -l)" -gt 0 ]; echo $?)" "the free token counter was asked"
is "$(notmuch count tag:quorum/seen)" 0 "no mail is tagged"
if command -v sqlite3 >/dev/null; then
	is "$(sqlite3 "$XDG_STATE_HOME/quorum/state.db" \
		'SELECT (SELECT COUNT(*) FROM messages) + (SELECT COUNT(*) FROM series) + (SELECT COUNT(*) FROM replies) + (SELECT COUNT(*) FROM cost_ledger) + (SELECT COUNT(*) FROM cost_reservations)')" 0 \
		"nothing is recorded in the state db: no mail seen, no series, no reply, no cost"
fi

# Under a daily budget that fits neither series in full: the riskier
# gets the models as the caps allow, the other the offline voters; the
# requests of the one the plan gives the models go to DIR.
conf '	budget-per-day = 0.02'
watch --dry-run="$TMP/dry"
[ -n "${KEEP:-}" ] && cp "$TMP/out" "$KEEP.out2"
is "$rc" 0 "watch --dry-run=DIR exits 0"
like "$TMP/out" '^plan: \$0\.0200 left today for list devel; 2 series' "the plan under the cap is said"
like "$TMP/out" '^dry run: list devel, "\[PATCH 0/3\] series s3": the models a, b: 8 requests, .*\(as the caps allow\)$' \
	"the riskiest gets the models as the caps allow"
like "$TMP/out" '^dry run: list devel, "\[PATCH\] lib: add f_one\(\)": the offline voters only: the money goes to riskier series first \(2 requests, \$0\.[0-9]+ planned, not sent\)$' \
	"the other is left to the offline voters, and says what it would have cost"
is "$(ls "$TMP/dry" | wc -l | tr -d ' ')" 8 "the request bodies of the planned series in DIR"
like "$TMP/out" "^  body: $TMP/dry/0001-a\\.json$" "each named in the output"
python3 -c 'import json, sys; [json.load(open(f)) for f in sys.argv[1:]]' "$TMP"/dry/*.json
ok $? "each is the JSON body"
is "$(nreq)" 0 "still no request to the models"
is "$(outbox_count)" 0 "still no reply"

# A real pass after the dry runs: each series gets its reply, once.
conf
watch
is "$rc" 0 "the real pass exits 0"
is "$(outbox_count)" 2 "it replies to each series"
is "$(nreq)" 10 "and asks the models what the dry run printed"
watch
is "$(outbox_count)" 2 "exactly once"
watch --dry-run
like "$TMP/out" '^dry run: list devel: no series to review$' "a dry run after it has nothing to plan"

run "$QUORUM" watch --dry-run
is "$rc" 2 "--dry-run without --once is a usage error"
like "$TMP/err" 'give --once too' "and says what to add"
fake_stop

done_testing
