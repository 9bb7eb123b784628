// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-llm-symbols.c - the symbol index on real git repositories made
 * here: definitions and callers on tricky C, an overlay that sees what a
 * series adds and deletes, reruns that parse only what changed, and
 * hostile or broken input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "review/llm.h"

static char tmp[256];

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
	char path[512], cmd[1200];
	va_list ap;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/script.sh", tmp);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fprintf(fp, "set -e\ncd '%s'\n", tmp);
	va_start(ap, fmt);
	vfprintf(fp, fmt, ap);
	va_end(ap);
	fclose(fp);
	snprintf(cmd, sizeof(cmd), "sh %s >%s/sh.log 2>&1", path, tmp);
	if (system(cmd) != 0) {
		snprintf(cmd, sizeof(cmd), "cat %s/sh.log >&2", tmp);
		(void)!system(cmd);
		fail_msg("fixture script failed");
	}
}

/* stdout of a shell command run in tmp, trailing newline removed. */
static char *capture(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static char *capture(const char *fmt, ...)
{
	char cmd[2048];
	struct sb out = SB_INIT;
	va_list ap;
	FILE *fp;
	int n, c;

	n = snprintf(cmd, sizeof(cmd), "cd '%s' && ", tmp);
	va_start(ap, fmt);
	vsnprintf(cmd + n, sizeof(cmd) - (size_t)n, fmt, ap);
	va_end(ap);
	fp = popen(cmd, "r");
	assert_non_null(fp);
	while ((c = fgetc(fp)) != EOF)
		sb_addch(&out, c);
	pclose(fp);
	sb_rtrim(&out);
	return sb_detach(&out, NULL);
}

static int setup(void **state)
{
	char cmd[600];

	snprintf(tmp, sizeof(tmp), "%s/quorum-symbols.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmp))
		return -1;
	snprintf(cmd, sizeof(cmd), "%s/home", tmp);
	setenv("HOME", cmd, 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("GIT_AUTHOR_NAME", "A U Thor", 1);
	setenv("GIT_AUTHOR_EMAIL", "author@example.org", 1);
	setenv("GIT_COMMITTER_NAME", "C O Mitter", 1);
	setenv("GIT_COMMITTER_EMAIL", "committer@example.org", 1);
	setenv("GIT_AUTHOR_DATE", "1700000000 +0000", 1);
	setenv("GIT_COMMITTER_DATE", "1700000000 +0000", 1);
	setenv("LC_ALL", "C", 1);
	sh("mkdir -p home && git config --global init.defaultBranch main\n");
	return 0;
}

static int teardown(void **state)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	return system(cmd) == 0 ? 0 : -1;
}

/*
 * The repo "r": a header with a struct, a static inline function, a
 * prototype, an extern, function-like macros (one wraps a function) and
 * a typedef of a function pointer; a.c with a K&R definition, an ops
 * table and a callback; b.c and c.c that call across files; names in
 * comments and strings that are no calls.
 */
static void tricky_repo(void)
{
	sh("rm -rf r && git init -q r && cd r && mkdir -p include src\n"
	   "cat >include/list.h <<'EOF'\n"
	   "#ifndef LIST_H\n"
	   "#define LIST_H\n"
	   "struct list {\n"
	   "\tstruct list *next;\n"
	   "};\n"
	   "typedef int (*visit_fn)(struct list *);\n"
	   "#define list_empty(l) ((l)->next == (l))\n"
	   "#define a_open_locked(fd) a_open(fd)\n"
	   "int a_open(int fd);\n"
	   "extern int a_count;\n"
	   "static inline void list_add(struct list *l, struct list *n)\n"
	   "{\n"
	   "\tn->next = l->next;\n"
	   "\tl->next = n;\n"
	   "}\n"
	   "#endif\n"
	   "static inline int pick(int x)\n"
	   "{\n"
	   "\treturn walk(0, x ? a_visit : 0);\n"
	   "}\n"
	   "EOF\n"
	   "cat >src/a.c <<'EOF'\n"
	   "#include \"list.h\"\n"
	   "struct ops {\n"
	   "\tint (*open)(int);\n"
	   "\tvisit_fn visit;\n"
	   "};\n"
	   "int a_count;\n"
	   "int knr_sum(a, b)\n"
	   "\tint a;\n"
	   "\tint b;\n"
	   "{\n"
	   "\treturn a + b;\n"
	   "}\n"
	   "int a_open(int fd)\n"
	   "{\n"
	   "\treturn knr_sum(fd, a_count);\n"
	   "}\n"
	   "static int a_visit(struct list *l)\n"
	   "{\n"
	   "\treturn list_empty(l);\n"
	   "}\n"
	   "static const struct ops a_ops = {\n"
	   "\t.open = a_open,\n"
	   "\t.visit = a_visit,\n"
	   "};\n"
	   "int walk(struct list *l, visit_fn fn);\n"
	   "int a_run(struct list *l, const struct ops *ops)\n"
	   "{\n"
	   "\tstruct list n;\n"
	   "\tlist_add(l, &n);\n"
	   "\tops->open(1); /* a_open(2) in a comment */\n"
	   "\treturn walk(l, a_visit) + puts(\"a_open(3)\");\n"
	   "}\n"
	   "EOF\n"
	   "cat >src/b.c <<'EOF'\n"
	   "#include \"list.h\"\n"
	   "int main(void)\n"
	   "{\n"
	   "\treturn a_open(0) + a_open_locked(1);\n"
	   "}\n"
	   "EOF\n"
	   "printf 'int old_fn(void)\\n{\\n\\treturn a_open(9);\\n}\\n"
	   "int kept_fn(void)\\n{\\n\\treturn 1;\\n}\\n' >src/c.c\n"
	   "printf 'int d_fn(void)\\n{\\n\\treturn 4;\\n}\\n' >src/d.c\n"
	   "printf 'int not_c(void) { return 0; }\\n' >notes.txt\n"
	   "git add . && git commit -q -m base\n");
}

static void build_index(struct rv_symbols_stats *st)
{
	struct rv_index_opts opts = RV_INDEX_OPTS_INIT;
	struct errmsg err = {""};
	char repo[512];

	snprintf(repo, sizeof(repo), "%s/r", tmp);
	assert_int_equal(rv_symbols_index(repo, &opts, st, &err), 0);
}

static struct rv_symbols *open_index(void)
{
	struct rv_symbols *s = NULL;
	struct errmsg err = {""};
	char repo[512];

	snprintf(repo, sizeof(repo), "%s/r", tmp);
	assert_int_equal(rv_symbols_open(&s, repo, &err), 0);
	assert_non_null(s);
	return s;
}

/* The one definition of name, which must be of kind at path:line. */
static void expect_def(struct rv_symbols *s, const char *name,
		       enum rv_sym_kind kind, const char *path, int line,
		       int end_line)
{
	struct rv_sym_defs d = {0};

	assert_int_equal(
		rv_symbols_definitions(s, name, RV_SYM_ANY, 10, &d, NULL), 0);
	if (d.total != 1)
		fail_msg("%s: %zu definitions, want 1", name, d.total);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.items[0].name, name);
	assert_string_equal(rv_sym_kind_name(d.items[0].kind),
			    rv_sym_kind_name(kind));
	assert_string_equal(d.items[0].path, path);
	assert_int_equal(d.items[0].line, line);
	assert_int_equal(d.items[0].end_line, end_line);
	rv_sym_defs_release(&d);
}

static size_t ndefs(struct rv_symbols *s, const char *name)
{
	struct rv_sym_defs d = {0};
	size_t n;

	assert_int_equal(
		rv_symbols_definitions(s, name, RV_SYM_ANY, 10, &d, NULL), 0);
	n = d.total;
	rv_sym_defs_release(&d);
	return n;
}

/* Does r hold a reference of kind at path:line in scope? */
static bool has_ref(const struct rv_sym_refs *r, const char *path, int line,
		    enum rv_ref_kind kind, const char *scope)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (!strcmp(r->items[i].path, path) &&
		    r->items[i].line == line && r->items[i].kind == kind &&
		    !strcmp(r->items[i].scope, scope))
			return true;
	return false;
}

static void test_definitions_on_tricky_c(void **state)
{
	struct rv_symbols_stats st;
	struct rv_sym_defs d = {0};
	struct rv_symbols *s;

	tricky_repo();
	build_index(&st);
	assert_int_equal(st.files, 5); /* notes.txt is not C */
	assert_int_equal(st.parsed, 5);
	s = open_index();
	/* a struct defined in a header, used (without a body) in a.c */
	expect_def(s, "list", RV_SYM_STRUCT, "include/list.h", 3, 5);
	expect_def(s, "ops", RV_SYM_STRUCT, "src/a.c", 2, 5);
	expect_def(s, "visit_fn", RV_SYM_TYPEDEF, "include/list.h", 6, 6);
	/* macros that look like functions are macros */
	expect_def(s, "list_empty", RV_SYM_FUNC_MACRO, "include/list.h", 7, 7);
	expect_def(s, "LIST_H", RV_SYM_MACRO, "include/list.h", 2, 2);
	expect_def(s, "list_add", RV_SYM_FUNCTION, "include/list.h", 11, 15);
	/* K&R parameters, and a prototype that is no definition */
	expect_def(s, "knr_sum", RV_SYM_FUNCTION, "src/a.c", 7, 12);
	expect_def(s, "a_open", RV_SYM_FUNCTION, "src/a.c", 13, 16);
	/* an extern is no definition either */
	expect_def(s, "a_count", RV_SYM_VARIABLE, "src/a.c", 6, 6);
	expect_def(s, "a_ops", RV_SYM_VARIABLE, "src/a.c", 21, 24);
	assert_int_equal(ndefs(s, "walk"), 0);
	assert_int_equal(ndefs(s, "not_c"), 0);
	assert_int_equal(ndefs(s, "no_such_name"), 0);
	/* one kind only */
	assert_int_equal(rv_symbols_definitions(s, "list_empty",
						RV_SYM_FUNCTION, 10, &d, NULL),
			 0);
	assert_int_equal(d.total, 0);
	rv_sym_defs_release(&d);
	assert_int_equal(rv_sym_kind_parse("typedef"), RV_SYM_TYPEDEF);
	assert_int_equal(rv_sym_kind_parse("nonsense"), -1);
	rv_symbols_free(s);
}

static void test_callers_on_tricky_c(void **state)
{
	struct rv_symbols_stats st;
	struct rv_sym_refs r = {0};
	struct errmsg err = {""};
	struct rv_symbols *s;

	tricky_repo();
	build_index(&st);
	s = open_index();
	assert_int_equal(rv_symbols_callers(s, "a_open", 50, &r, NULL), 0);
	/* calls in another file, through a macro, and an ops table */
	assert_true(has_ref(&r, "src/b.c", 4, RV_REF_CALL, "main"));
	assert_true(has_ref(&r, "include/list.h", 8, RV_REF_MACRO,
			    "a_open_locked"));
	assert_true(has_ref(&r, "src/a.c", 22, RV_REF_ADDRESS, "a_ops"));
	assert_true(has_ref(&r, "src/c.c", 3, RV_REF_CALL, "old_fn"));
	/* not the comment, the string, nor ops->open() */
	assert_int_equal(r.total, 4);
	assert_int_equal(r.n, 4);
	assert_false(has_ref(&r, "src/a.c", 30, RV_REF_CALL, "a_run"));
	assert_false(has_ref(&r, "src/a.c", 31, RV_REF_CALL, "a_run"));
	rv_sym_refs_release(&r);

	/* a callback handed to a function (also by a ?:), in an ops table */
	assert_int_equal(rv_symbols_callers(s, "a_visit", 50, &r, NULL), 0);
	assert_int_equal(r.total, 3);
	assert_true(has_ref(&r, "include/list.h", 19, RV_REF_ADDRESS, "pick"));
	assert_true(has_ref(&r, "src/a.c", 23, RV_REF_ADDRESS, "a_ops"));
	assert_true(has_ref(&r, "src/a.c", 31, RV_REF_ADDRESS, "a_run"));
	rv_sym_refs_release(&r);

	/* a static inline function of a header, called from a.c */
	assert_int_equal(rv_symbols_callers(s, "list_add", 50, &r, NULL), 0);
	assert_int_equal(r.total, 1);
	assert_true(has_ref(&r, "src/a.c", 29, RV_REF_CALL, "a_run"));
	rv_sym_refs_release(&r);

	/* the use of a function-like macro is its call */
	assert_int_equal(rv_symbols_callers(s, "list_empty", 50, &r, NULL), 0);
	assert_int_equal(r.total, 1);
	assert_true(has_ref(&r, "src/a.c", 19, RV_REF_CALL, "a_visit"));
	rv_sym_refs_release(&r);

	/* bounded: the first of all, and the count of all */
	assert_int_equal(rv_symbols_callers(s, "a_open", 2, &r, NULL), 0);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.total, 4);
	rv_sym_refs_release(&r);

	/* a name that is no C identifier is refused */
	assert_int_equal(rv_symbols_callers(s, "a b", 2, &r, &err),
			 RV_ERR_INPUT);
	assert_non_null(strstr(err.msg, "C identifier"));
	assert_int_equal(rv_symbols_callers(s, "", 2, &r, NULL), RV_ERR_INPUT);
	assert_int_equal(r.n, 0);
	rv_symbols_free(s);
}

static void test_overlay_sees_the_series(void **state)
{
	struct rv_symbols_stats st;
	struct rv_sym_refs r = {0};
	struct rv_repo *repo = NULL;
	struct rv_symbols *s;
	struct errmsg err = {""};
	char path[512], *base, *series;

	tricky_repo();
	build_index(&st);
	base = capture("git -C r rev-parse HEAD^{tree}");
	/* a series: new_fn added in b.c, old_fn deleted, d.c removed */
	sh("cd r && git checkout -q -b topic\n"
	   "printf 'int new_fn(void)\\n{\\n\\treturn a_open(7);\\n}\\n' "
	   ">>src/b.c\n"
	   "printf 'int kept_fn(void)\\n{\\n\\treturn 1;\\n}\\n' >src/c.c\n"
	   "git rm -q src/d.c && git commit -q -am series\n"
	   "git checkout -q main\n");
	series = capture("git -C r rev-parse topic");
	s = open_index();
	assert_string_equal(rv_symbols_tree(s), base);
	snprintf(path, sizeof(path), "%s/r", tmp);
	assert_int_equal(rv_repo_open(&repo, path, NULL), 0);
	assert_int_equal(ndefs(s, "old_fn"), 1);
	assert_int_equal(rv_symbols_overlay(s, repo, series, &err), 0);
	assert_string_not_equal(rv_symbols_tree(s), base);
	expect_def(s, "new_fn", RV_SYM_FUNCTION, "src/b.c", 6, 9);
	assert_int_equal(ndefs(s, "old_fn"), 0);
	assert_int_equal(ndefs(s, "d_fn"), 0);
	expect_def(s, "kept_fn", RV_SYM_FUNCTION, "src/c.c", 1, 4);
	/* files the series left alone still answer */
	expect_def(s, "list_add", RV_SYM_FUNCTION, "include/list.h", 11, 15);
	assert_int_equal(rv_symbols_callers(s, "a_open", 50, &r, NULL), 0);
	assert_true(has_ref(&r, "src/b.c", 8, RV_REF_CALL, "new_fn"));
	assert_false(has_ref(&r, "src/c.c", 3, RV_REF_CALL, "old_fn"));
	assert_int_equal(r.total, 4);
	/* the series' own files come first */
	assert_string_equal(r.items[0].path, "src/b.c");
	assert_int_equal(r.unindexed, 0);
	rv_sym_refs_release(&r);

	/* back to the indexed tree: the overlay is gone */
	assert_int_equal(rv_symbols_overlay(s, repo, base, &err), 0);
	assert_int_equal(ndefs(s, "new_fn"), 0);
	assert_int_equal(ndefs(s, "old_fn"), 1);
	assert_int_equal(ndefs(s, "d_fn"), 1);

	/* not a tree: an error, and the answers stay */
	assert_int_equal(rv_symbols_overlay(s, repo, "0123", &err),
			 RV_ERR_REPO);
	assert_int_equal(
		rv_symbols_overlay(s, repo,
				   "0123456789abcdef0123456789abcdef01234567",
				   &err),
		RV_ERR_REPO);
	assert_int_equal(ndefs(s, "d_fn"), 1);
	rv_symbols_free(s);
	rv_repo_free(repo);
	free(base);
	free(series);
}

static void test_rerun_parses_only_what_changed(void **state)
{
	struct rv_symbols_stats st;
	struct rv_symbols *s;

	tricky_repo();
	build_index(&st);
	assert_int_equal(st.parsed, 5);
	assert_false(st.up_to_date);
	build_index(&st);
	assert_true(st.up_to_date);
	assert_int_equal(st.parsed, 0);
	assert_int_equal(st.files, 5);
	/* a new HEAD: only the changed blob is read; a copy costs nothing */
	sh("cd r && printf 'int e_fn(void)\\n{\\n\\treturn 5;\\n}\\n' "
	   ">>src/d.c && cp src/b.c src/b2.c && git add . && "
	   "git commit -q -m more\n");
	build_index(&st);
	assert_false(st.up_to_date);
	assert_int_equal(st.files, 6);
	assert_int_equal(st.parsed, 1);
	assert_int_equal(st.reused, 5);
	s = open_index();
	expect_def(s, "e_fn", RV_SYM_FUNCTION, "src/d.c", 5, 8);
	assert_int_equal(ndefs(s, "main"), 2);
	rv_symbols_free(s);
}

static void test_hostile_and_broken(void **state)
{
	struct rv_symbols_stats st;
	struct rv_index_opts opts = RV_INDEX_OPTS_INIT;
	struct rv_sym_defs d = {0};
	struct rv_sym_refs r = {0};
	struct rv_repo *repo = NULL;
	struct rv_symbols *s = NULL;
	struct errmsg err = {""};
	char path[512], *series, *src;
	size_t i, n = 100000;

	/*
	 * 100,000 '(' make libtree-sitter 0.20.7 free a bad pointer; and a
	 * file over the cap: each is counted, the rest indexed.
	 */
	tricky_repo();
	sh("cd r && awk 'BEGIN { for (i = 0; i < 100000; i++) printf \"(\" }' "
	   ">crash.c && awk 'BEGIN { for (i = 0; i < 70000; i++) "
	   "printf \"int big_%%d = %%d; /* padding padding */\\n\", i, i }' "
	   ">big.c && git add . && git commit -q -m hostile\n");
	build_index(&st);
	assert_int_equal(st.failed, 1);
	assert_int_equal(st.too_big, 1);
	assert_int_equal(st.parsed, 5);
	s = open_index();
	assert_int_equal(
		rv_symbols_definitions(s, "big_1", RV_SYM_ANY, 5, &d, NULL), 0);
	assert_int_equal(d.total, 0);
	assert_int_equal(d.unindexed, 2);
	rv_sym_defs_release(&d);
	expect_def(s, "list_add", RV_SYM_FUNCTION, "include/list.h", 11, 15);

	/* the same in a series: the overlay counts it, and goes on */
	sh("cd r && git checkout -q -b evil && cp crash.c src/evil.c && "
	   "printf 'int fine_fn(void)\\n{\\n\\treturn 0;\\n}\\n' >src/fine.c "
	   "&& "
	   "git add . && git commit -q -m evil && git checkout -q main\n");
	series = capture("git -C r rev-parse evil");
	snprintf(path, sizeof(path), "%s/r", tmp);
	assert_int_equal(rv_repo_open(&repo, path, NULL), 0);
	assert_int_equal(rv_symbols_overlay(s, repo, series, &err), 0);
	assert_int_equal(
		rv_symbols_definitions(s, "fine_fn", RV_SYM_ANY, 5, &d, NULL),
		0);
	assert_int_equal(d.total, 1);
	assert_int_equal(d.unindexed, 3);
	rv_sym_defs_release(&d);
	rv_symbols_free(s);
	rv_repo_free(repo);
	free(series);

	/* one file's text: refused past the cap, given up on, or parsed */
	src = malloc(RV_SYMBOLS_MAX_FILE + 1);
	assert_non_null(src);
	memset(src, '(', n);
	assert_int_equal(rv_symbols_parse("big.c", src, RV_SYMBOLS_MAX_FILE + 1,
					  &d, &r, &err),
			 RV_ERR_INPUT);
	assert_int_equal(rv_symbols_parse("crash.c", src, n, &d, &r, &err),
			 RV_ERR_INPUT);
	assert_non_null(strstr(err.msg, "gave up on crash.c"));
	assert_int_equal(d.n + r.n, 0);
	n = 20000;
	for (i = 0; i < n; i++)
		src[i] = (char)(i * 7919 % 251 + 1);
	memcpy(src + n - 40, "\nint after(void) { return junk(); }\n", 36);
	assert_int_equal(rv_symbols_parse("junk.c", src, n, &d, &r, &err), 0);
	assert_int_equal(d.total, d.n);
	rv_sym_defs_release(&d);
	rv_sym_refs_release(&r);
	free(src);

	/* a db that is not a db: reading says what to do, index rebuilds */
	sh("cd r && printf 'junk junk junk' >.git/quorum/symbols.db && "
	   "rm -f .git/quorum/symbols.db-wal .git/quorum/symbols.db-shm\n");
	assert_int_equal(rv_symbols_open(&s, path, &err), RV_ERR_INTERNAL);
	assert_non_null(strstr(err.msg, "quorum index"));
	assert_int_equal(rv_symbols_index(path, &opts, &st, &err), 0);
	assert_true(st.rebuilt);
	assert_int_equal(st.parsed, 5);

	/* no index at all: no error, nothing to answer from */
	sh("rm -rf r/.git/quorum\n");
	assert_int_equal(rv_symbols_open(&s, path, &err), 0);
	assert_null(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_definitions_on_tricky_c),
		cmocka_unit_test(test_callers_on_tricky_c),
		cmocka_unit_test(test_overlay_sees_the_series),
		cmocka_unit_test(test_rerun_parses_only_what_changed),
		cmocka_unit_test(test_hostile_and_broken),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
