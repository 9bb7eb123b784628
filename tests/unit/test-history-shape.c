// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Code as a shape (review/history-shape.c): what the normalizer keeps
 * and abstracts, that a renamed copy has the same shingles and a changed
 * line only some, the API prefixes learned from calls, and junk.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "review/history-int.h"

/* The shape of text as "$ = malloc ( $ ) ;" into a static buffer. */
static const char *shape_of(const char *text, const struct hist_api *api)
{
	static char buf[4096];
	struct hist_shape s = {0};
	struct sb out = SB_INIT;

	hist_shape_lex(text, strlen(text), api, &s, HIST_SHAPE_MAX_TOKENS);
	hist_shape_text(&s, &out);
	snprintf(buf, sizeof(buf), "%s", sb_str(&out));
	sb_release(&out);
	hist_shape_release(&s);
	return buf;
}

static void test_keeps_keywords_and_libc(void **state)
{
	(void)state;
	assert_string_equal(shape_of("char *s = malloc(len);", NULL),
			    "char * $ = malloc ( $ ) ;");
	assert_string_equal(shape_of("memcpy(s, src, len);", NULL),
			    "memcpy ( $ , $ , $ ) ;");
	assert_string_equal(
		shape_of("if (!s) return -1; while (i <= n) i++;", NULL),
		"if ( ! $ ) return - 1 ; while ( $ <= $ ) $ ++ ;");
	/* A name that is not called stays a name, even a libc one. */
	assert_string_equal(shape_of("free = x->next;", NULL), "$ = $ -> $ ;");
	/* Types of C and the kernel's fixed-size ones are kept. */
	assert_string_equal(shape_of("__u32 v = sizeof(struct foo);", NULL),
			    "__u32 $ = sizeof ( struct $ ) ;");
}

static void test_abstracts_names_and_literals(void **state)
{
	(void)state;
	/* 0 and 1 carry meaning ("len - 1"); other numbers do not. */
	assert_string_equal(shape_of("s[len - 1] = 0; x = 42 + 0x1f;", NULL),
			    "$ [ $ - 1 ] = 0 ; $ = # + # ;");
	assert_string_equal(shape_of("fprintf(stderr, \"a \\\" b\", c);", NULL),
			    "fprintf ( $ , \" , $ ) ;");
	assert_string_equal(shape_of("c = 'x'; d = '\\n';", NULL),
			    "$ = ' ; $ = ' ;");
	/* A renamed copy is the same shape. */
	assert_string_equal(shape_of("char *out = malloc(n);", NULL),
			    shape_of("char *s = malloc(len);", NULL));
}

static void test_ignores_comments_and_blanks(void **state)
{
	(void)state;
	assert_string_equal(shape_of("a = b; // why\n"
				     "/* a block\n"
				     " * comment */ c = d;\n"
				     "#include <x.h>\n"
				     "#define X(a) (a)\n",
				     NULL),
			    "$ = $ ; $ = $ ;");
	/* A hunk that starts inside a block comment. */
	assert_string_equal(shape_of(" * the middle of a comment\n"
				     " */\n"
				     "x =\t\ty  ;\n",
				     NULL),
			    "$ = $ ;");
	assert_string_equal(shape_of("a   =   b ;", NULL),
			    shape_of("a=b;", NULL));
}

static void test_api_prefixes(void **state)
{
	struct hist_api_counts c = {0};
	struct hist_api api;
	struct sb text = SB_INIT;
	char file[32];
	int i;

	(void)state;
	/* rta_ is called from many files; parse_ only in its own file. */
	for (i = 0; i < 6; i++) {
		int j;

		snprintf(file, sizeof(file), "f%d.c", i);
		sb_reset(&text);
		for (j = 0; j < 6; j++)
			sb_addf(&text, "x = rta_get%d(a);\n", j);
		hist_api_count(&c, sb_str(&text), file);
		sb_reset(&text);
		sb_addf(&text, "parse_thing%d(a);\n", i);
		hist_api_count(&c, sb_str(&text), "one.c");
	}
	hist_api_choose(&c, &api);
	hist_api_counts_release(&c);
	sb_release(&text);
	assert_int_equal(api.n, 1);
	assert_string_equal(api.v[0], "rta_");
	assert_true(hist_api_keeps(&api, "rta_getattr_u32", 15));
	assert_false(hist_api_keeps(&api, "parse_thing", 11));
	assert_true(hist_api_keeps(NULL, "memcpy", 6));
	/* Kept only as a call. */
	assert_string_equal(shape_of("v = rta_getattr_u32(tb[X]);", &api),
			    "$ = rta_getattr_u32 ( $ [ $ ] ) ;");
	assert_string_equal(shape_of("v = my_getattr_u32(tb[X]);", &api),
			    "$ = $ ( $ [ $ ] ) ;");

	/* The stored form reads back the same. */
	{
		struct hist_api back;
		struct sb s = SB_INIT;

		hist_api_format(&api, &s);
		hist_api_parse(sb_str(&s), &back);
		assert_int_equal(back.n, 1);
		assert_string_equal(back.v[0], "rta_");
		sb_release(&s);
	}
}

static size_t shingles(const char *text, bool winnow, uint64_t **v)
{
	struct hist_shape s = {0};
	size_t n;

	hist_shape_lex(text, strlen(text), NULL, &s, HIST_SHAPE_MAX_TOKENS);
	n = hist_shape_shingles(&s, winnow, v);
	hist_shape_release(&s);
	return n;
}

static size_t shared(const uint64_t *a, size_t na, const uint64_t *b, size_t nb)
{
	size_t i = 0, j = 0, n = 0;

	while (i < na && j < nb) {
		if (a[i] == b[j]) {
			n++;
			i++;
			j++;
		} else if (a[i] < b[j]) {
			i++;
		} else {
			j++;
		}
	}
	return n;
}

static const char past[] = "int copy_name(struct ctx *c, const char *src,"
			   " size_t len)\n{\n\tchar *s = malloc(len);\n\n"
			   "\tmemcpy(s, src, len);\n\ts[len] = '\\0';\n"
			   "\tc->name = s;\n\treturn 0;\n}\n";
static const char renamed[] = "int dup_label(struct obj *o, const char "
			      "*from, size_t n)\n{\n\tchar *out = malloc(n);"
			      "\n\n\tmemcpy(out, from, n);\n\tout[n] = '\\0';"
			      "\n\to->label = out;\n\treturn 0;\n}\n";
static const char changed[] = "int dup_label(struct obj *o, const char "
			      "*from, size_t n)\n{\n\tchar *out = malloc(n);"
			      "\n\n\tmemcpy(out, from, n);\n\tout[n] = '\\0';"
			      "\n\to->label = out;\n\to->count++;\n\treturn 0;"
			      "\n}\n";

static void test_clones(void **state)
{
	uint64_t *a, *b, *c, *w;
	size_t na, nb, nc, nw;

	(void)state;
	na = shingles(past, false, &a);
	nb = shingles(renamed, false, &b);
	nc = shingles(changed, false, &c);
	assert_true(na > 10);
	/* Type 2 (renamed): identical. */
	assert_int_equal(na, nb);
	assert_int_equal(shared(a, na, b, nb), na);
	/* Type 3 (a line added): most shingles still shared, not all. */
	assert_true(shared(a, na, c, nc) * 10 >= na * 6);
	assert_true(shared(a, na, c, nc) < na);
	/* Winnowing keeps fewer, all of them among the shingles. */
	nw = shingles(past, true, &w);
	assert_true(nw > 0 && nw < na);
	assert_int_equal(shared(w, nw, a, na), nw);
	free(a);
	free(b);
	free(c);
	free(w);
}

static void test_junk_is_bounded(void **state)
{
	size_t len = (size_t)4 << 20, i;
	char *junk = malloc(len + 1);
	struct hist_shape s = {0};
	uint64_t *v = NULL;
	size_t n;

	(void)state;
	assert_non_null(junk);
	/* Binary junk: NULs, controls, high bytes, a quote never closed. */
	for (i = 0; i < len; i++)
		junk[i] = (char)((i * 2654435761u) >> 13);
	junk[len] = '\0';
	junk[10] = '"';
	hist_shape_lex(junk, len, NULL, &s, HIST_SHAPE_MAX_TOKENS);
	assert_true(s.n <= HIST_SHAPE_MAX_TOKENS);
	n = hist_shape_shingles(&s, true, &v);
	assert_true(n <= s.n);
	free(v);
	hist_shape_release(&s);

	/* 100,000 lines of code: the token cap bounds the work. */
	{
		struct sb big = SB_INIT;

		for (i = 0; i < 100000; i++)
			sb_addf(&big, "\tv%zu = f(v%zu, %zu);\n", i, i, i);
		hist_shape_lex(big.buf, big.len, NULL, &s,
			       HIST_SHAPE_MAX_TOKENS);
		assert_int_equal(s.n, HIST_SHAPE_MAX_TOKENS);
		hist_shape_release(&s);
		sb_release(&big);
	}
	/* Empty and tiny inputs: no shingle, no crash. */
	hist_shape_lex("", 0, NULL, &s, HIST_SHAPE_MAX_TOKENS);
	assert_int_equal(hist_shape_shingles(&s, true, &v), 0);
	assert_null(v);
	hist_shape_release(&s);
	free(junk);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keeps_keywords_and_libc),
		cmocka_unit_test(test_abstracts_names_and_literals),
		cmocka_unit_test(test_ignores_comments_and_blanks),
		cmocka_unit_test(test_api_prefixes),
		cmocka_unit_test(test_clones),
		cmocka_unit_test(test_junk_is_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
