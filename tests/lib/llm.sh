# tests/lib/llm.sh - the fake LLM server for shell tests (after lib.sh).
#
#   fake_start SCRIPT   start tests/lib/fake-llm.py with SCRIPT (JSON);
#                       sets $PORT and $REC (its request record directory)
#   fake_stop           stop it (also done at exit)
#   voter NAME PROVIDER MODEL [KEY=VALUE...]   print a [voter] section
#   prompt_of FILE      the user message of a recorded request body
#   requests MODEL      how many requests MODEL got
#   spent, billed, nusage   what the server billed (below)

FAKE_PIDS=
FAKE_N=0
trap 'fake_stop; rm -rf "$TMP"' EXIT
export QUORUM_PROMPTS="$TOP/prompts"

fake_start() {
	FAKE_N=$((FAKE_N + 1))
	REC=$TMP/rec$FAKE_N
	rm -f "$TMP/port$FAKE_N"
	python3 "$TOP/tests/lib/fake-llm.py" --script "$1" \
		--port-file "$TMP/port$FAKE_N" --record "$REC" \
		--timeout "${FAKE_TIMEOUT:-60}" &
	FAKE_PIDS="$FAKE_PIDS $!"
	i=0
	while [ ! -s "$TMP/port$FAKE_N" ] && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	PORT=$(cat "$TMP/port$FAKE_N")
}

fake_stop() {
	for p in $FAKE_PIDS; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	FAKE_PIDS=
}

voter() {
	name=$1 provider=$2 model=$3
	shift 3
	printf '[voter "%s"]\n\tprovider = %s\n\turl = http://127.0.0.1:%s/v1\n\tmodel = %s\n' \
		"$name" "$provider" "$PORT" "$model"
	for kv in "$@"; do
		printf '\t%s = %s\n' "${kv%%=*}" "${kv#*=}"
	done
}

prompt_of() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(d["messages"][-1]["content"])' "$1"
}

requests() {
	ls "$REC" | grep -c -- "-$1\.json$"
}

# spent: what the fake server billed so far, in USD, at the prices the
# cost tests give their voters ($3 per million tokens in, $15 out).
spent() {
	cat "$REC"/*.usage 2>/dev/null |
		awk '{ s += $1 * 3 / 1e6 + $2 * 15 / 1e6 } END { printf "%.6f", s }'
}

# billed PRICE_IN PRICE_OUT [PRICE_READ [PRICE_WRITE]]: what the fake
# server billed so far, in USD at those prices per million tokens, input
# read from the prompt cache at PRICE_READ and written to it at
# PRICE_WRITE (both default to PRICE_IN, which makes it spent's sum).
# A .usage file is "IN OUT READ WRITE", IN counting all input tokens.
billed() {
	cat "$REC"/*.usage 2>/dev/null |
		awk -v pin="$1" -v pout="$2" -v pread="${3:-$1}" \
			-v pwrite="${4:-$1}" '
		{ s += (($1 - $3 - $4) * pin + $2 * pout + $3 * pread + $4 * pwrite) / 1e6 }
		END { printf "%.6f", s }'
}

# nusage: how many answers the fake server billed.
nusage() { ls "$REC"/*.usage 2>/dev/null | wc -l | tr -d ' '; }
