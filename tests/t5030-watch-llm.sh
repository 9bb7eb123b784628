#!/bin/sh
# quorum watch with LLM voters on the fake server: the reply carries the
# models' tally, the cost, and the hash of the prompt files; a model that
# fails abstains and the reply still goes out, once.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib/llm.sh"
. "$TOP/tests/lib/watch.sh"

command -v notmuch >/dev/null || skip_all "notmuch is not installed"
command -v python3 >/dev/null || skip_all "python3 is not installed"
watch_setup
LINE=$(git -C "$R" show topic:main.c | grep -n 'it = malloc' | cut -d: -f1)
ANS='{"findings": [{"file": "main.c", "line_start": '$LINE', "line_end": '$((LINE + 1))', "severity": "high", "category": "null-deref", "title": "item_new() uses the malloc() result without checking it", "quote": "it = malloc(sizeof(*it));", "explanation": "If malloc() fails, it->id writes through NULL."}]}'
cat >"$TMP/script.json" <<EOS
{"models": {
 "ma": [{"when": "item_new", "answer": $ANS, "usage": {"in": 1000, "out": 100}},
        {"answer": {"findings": []}}],
 "mb": [{"when": "item_new", "answer": $ANS, "usage": {"in": 1000, "out": 100}},
        {"answer": {"findings": []}}],
 "mc": [{"status": 500}]
}}
EOS
fake_start "$TMP/script.json"
watch_config "$(voter a openai ma price-in=3.00 price-out=15.00)" \
	"$(voter b openai mb price-in=3.00 price-out=15.00)" \
	"$(voter c openai mc)" '[review]' '	retries = 0' '	quorum = 0'
git -C "$R" format-patch -q --cover-letter --thread=shallow --to="$LIST" \
	-o "$TMP/s" base..topic
post "$TMP/s"
watch
is "$rc" 0 "watch with LLM voters exits 0"
is "$(outbox_count)" 1 "one reply"
M=$(ls "$OUTBOX"/new/* | head -1)
[ -n "${KEEP:-}" ] && cp "$M" "$KEEP"
like "$M" '^X-Quorum-Voters: .*a, b, c' "X-Quorum-Voters names the models"
like "$M" '^X-Quorum-Prompt: sha1:[0-9a-f]{16}$' "X-Quorum-Prompt is the hash of the prompt files"
like "$M" '^X-Quorum-Cost: 0\.0[0-9]+ USD$' "X-Quorum-Cost adds up the requests"
unlike "$M" '^X-Quorum-Cost: 0\.0000 USD$' "and is not zero"
like "$M" 'main\.c:[0-9-]+ in item_new\(\), patch 3/3' "the models' finding is in the reply"
like "$M" 'votes: [0-9]+ of [0-9]+ \(.*a, b' "with the voters that raised it"
like "$M" '^cost: \$0\.0[0-9]+$' "the footer states the cost"
like "$M" '^c abstained: ' "the footer says which model abstained"
hash1=$(sed -n 's/^X-Quorum-Prompt: //p' "$M")

# Another prompt text gives another hash.
cp -r "$TOP/prompts" "$TMP/prompts"
echo "One more instruction." >>"$TMP/prompts/review.md"
git -C "$R" format-patch -q --thread=shallow --to="$LIST" -o "$TMP/t" -1 topic~1
QUORUM_PROMPTS=$TMP/prompts post "$TMP/t"
QUORUM_PROMPTS=$TMP/prompts watch
M2=$(grep -L "$hash1" "$OUTBOX"/new/* | head -1)
like "$M2" '^X-Quorum-Prompt: sha1:[0-9a-f]{16}$' "a changed prompt file changes X-Quorum-Prompt"

# A daily budget of list devel too small for any request: the offline
# voters vote alone, the models are not asked, and the reply says why.
before=$(ls "$REC" | grep -c '\.json$')
watch_config "$(voter a openai ma price-in=3.00 price-out=15.00)" \
	'[review]' '	retries = 0' '[list "devel"]' '	budget-per-day = 0.000001'
mail_single budget-1 "A U Thor <author@example.org>" "main: add f_budget()" budget
notmuch new --quiet
watch
B=$(grep -l 'f_budget' "$OUTBOX"/new/*)
[ -n "${KEEP:-}" ] && cp "$B" "$KEEP"
like "$B" '^budget: .*daily budget of list devel' "a budget too small for any request is stated in the reply"
like "$B" '^budget: \$0\.0000 left today of \$0\.00 for list devel$' "the reply footer gives the day's remaining budget of the list"
like "$B" 'only the offline voters voted' "with what quorum did instead"
is "$(ls "$REC" | grep -c '\.json$')" "$before" "and no model was asked"
fake_stop

done_testing
