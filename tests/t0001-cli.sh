#!/bin/sh
# The command table: --help, --version, help COMMAND, unknown commands.
. "$(dirname "$0")/lib.sh"

run "$QUORUM" --version
is "$rc" 0 "--version exits 0"
like "$TMP/out" '^quorum [0-9]+\.[0-9]+' "--version prints a version"

run "$QUORUM" --help
is "$rc" 0 "--help exits 0"
like "$TMP/out" 'review' "--help lists review"
like "$TMP/out" 'parse' "--help lists parse"

run "$QUORUM"
is "$rc" 2 "no command exits 2"

run "$QUORUM" frobnicate
is "$rc" 2 "unknown command exits 2"
like "$TMP/err" "'frobnicate' is not a quorum command" "unknown command is named"
is "$(lines "$TMP/err")" 1 "unknown command error is one line"

run "$QUORUM" --bogus
is "$rc" 2 "unknown global option exits 2"

run "$QUORUM" review --bogus
is "$rc" 2 "unknown review option exits 2"
like "$TMP/err" 'usage: quorum review' "unknown option shows usage"
is "$(lines "$TMP/err")" 1 "unknown option: one-line error"

run "$QUORUM" help review
is "$rc" 0 "help review exits 0"
like "$TMP/out" '^usage: quorum review' "help review shows the usage"

run "$QUORUM" review --help
is "$rc" 0 "review --help exits 0"

run "$QUORUM" help nosuch
is "$rc" 2 "help for an unknown command exits 2"

done_testing
