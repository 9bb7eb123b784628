#!/bin/sh
# quorum index also builds the symbol index of HEAD's C: definitions and
# callers stored by blob, a rerun that reads nothing, a new HEAD that
# parses only the changed files, a hostile file, and a broken db.
. "$(dirname "$0")/lib.sh"

command -v sqlite3 >/dev/null 2>&1 || skip_all "sqlite3 command not installed"

R=$TMP/repo
sqlq() { sqlite3 "$R/.git/quorum/symbols.db" "$1"; }

test_expect_success 'setup: a repo whose C calls across files' '
	make_repo "$R" &&
	mkdir -p "$R/lib" &&
	printf "#include \"../main.c\"\nstatic const struct ops { int (*count)(struct item *, int); } ops = {\n\t.count = count_items,\n};\nint total(struct item *it)\n{\n\treturn count_items(it, 4); /* count_items(x) */\n}\n" >"$R/lib/use.c" &&
	printf "count_items(a, b)\n" >"$R/notes.txt" &&
	git -C "$R" add . && git -C "$R" commit -q -m use
'

test_expect_success 'index says what it parsed into the symbol index' '
	run "$QUORUM" index -C "$R" &&
	test "$rc" = 0 &&
	test_grep "^symbols: 2 C files, 2 parsed, 0 unchanged, 0 over 2 MiB, 0 the parser gave up on; [0-9]+ definitions, [0-9]+ calls and addresses taken" "$TMP/out"
'

test_expect_success 'definitions and callers are where the C has them' '
	test "$(sqlq "SELECT f.path, d.kind, d.line, d.end_line FROM defs d JOIN files f ON f.blob = d.blob WHERE d.name = '"'"'count_items'"'"'")" = "main.c|1|9|17" &&
	test "$(sqlq "SELECT f.path, d.kind, d.line FROM defs d JOIN files f ON f.blob = d.blob WHERE d.name = '"'"'item'"'"'")" = "main.c|2|4" &&
	sqlq "SELECT f.path, r.kind, r.line, r.scope FROM refs r JOIN files f ON f.blob = r.blob WHERE r.name = '"'"'count_items'"'"' ORDER BY r.line" >"$TMP/callers" &&
	printf "lib/use.c|2|3|ops\nlib/use.c|1|7|total\n" >"$TMP/want" &&
	test_cmp "$TMP/want" "$TMP/callers" &&
	test "$(sqlq "PRAGMA journal_mode")" = wal
'

test_expect_success 'a rerun with nothing new reads nothing' '
	run "$QUORUM" index -C "$R" &&
	test "$rc" = 0 &&
	test_grep "^symbol index up to date: 2 C files" "$TMP/out" &&
	test_grep -v "^symbols:" "$TMP/out"
'

test_expect_success 'a new HEAD parses only the blobs that changed' '
	printf "int added(void)\n{\n\treturn 1;\n}\n" >>"$R/lib/use.c" &&
	cp "$R/main.c" "$R/copy.c" &&
	git -C "$R" add . && git -C "$R" commit -q -m more &&
	run "$QUORUM" index -C "$R" &&
	test_grep "^symbols: 3 C files, 1 parsed, 2 unchanged," "$TMP/out" &&
	test "$(sqlq "SELECT count(*) FROM defs WHERE name = '"'"'added'"'"'")" = 1 &&
	test "$(sqlq "SELECT count(*) FROM blobs")" = 2
'

test_expect_success 'a file that crashes the parser is counted, not fatal' '
	awk "BEGIN { for (i = 0; i < 100000; i++) printf \"(\" }" >"$R/crash.c" &&
	git -C "$R" add . && git -C "$R" commit -q -m crash &&
	run "$QUORUM" index -C "$R" &&
	test "$rc" = 0 &&
	test_grep "^symbols: 4 C files, 0 parsed, 3 unchanged, 0 over 2 MiB, 1 the parser gave up on;" "$TMP/out"
'

test_expect_success 'a broken db is rebuilt, with a warning' '
	rm -f "$R/.git/quorum/symbols.db-wal" "$R/.git/quorum/symbols.db-shm" &&
	printf "not a db" >"$R/.git/quorum/symbols.db" &&
	run "$QUORUM" index -C "$R" &&
	test "$rc" = 0 &&
	test_grep "symbol index .* was unusable .* and was rebuilt" "$TMP/err" &&
	test_grep "^symbols: 4 C files, 2 parsed, 0 unchanged" "$TMP/out"
'

test_expect_success 'index --help tells of the symbol index' '
	run "$QUORUM" index --help &&
	test_grep "symbols.db" "$TMP/out"
'

test_done
