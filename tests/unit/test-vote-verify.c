// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The guard against invented findings: files and lines outside the
 * patch and its functions, quotes of code that does not exist, findings
 * about untouched code, and findings a later patch fixes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "review/llm.h"

/* The post-image: f() untouched at 3-10, g() added at 12-18. */
static const char post[] = "#include <stdlib.h>\n"	  /* 1 */
			   "\n"				  /* 2 */
			   "int f(int *p, int n)\n"	  /* 3 */
			   "{\n"			  /* 4 */
			   "\tint i, s = 0;\n"		  /* 5 */
			   "\n"				  /* 6 */
			   "\tfor (i = 0; i < n; i++)\n"  /* 7 */
			   "\t\ts += p[i];\n"		  /* 8 */
			   "\treturn s;\n"		  /* 9 */
			   "}\n"			  /* 10 */
			   "\n"				  /* 11 */
			   "int g(int *p, int n)\n"	  /* 12 */
			   "{\n"			  /* 13 */
			   "\tint i;\n"			  /* 14 */
			   "\n"				  /* 15 */
			   "\tfor (i = 0; i <= n; i++)\n" /* 16 */
			   "\t\tp[i] = 0;\n"		  /* 17 */
			   "\treturn n;\n"		  /* 18 */
			   "}\n"			  /* 19 */
			   "\n"				  /* 20 */
			   "int h(void)\n"		  /* 21 */
			   "{\n"			  /* 22 */
			   "\treturn 0;\n"		  /* 23 */
			   "}\n";			  /* 24 */

static const char diff1[] = "diff --git a/a.c b/a.c\n"
			    "--- a/a.c\n"
			    "+++ b/a.c\n"
			    "@@ -7,7 +7,16 @@ int f(int *p, int n)\n"
			    " \tfor (i = 0; i < n; i++)\n"
			    " \t\ts += p[i];\n"
			    " \treturn s;\n"
			    " }\n"
			    "+\n"
			    "+int g(int *p, int n)\n"
			    "+{\n"
			    "+\tint i;\n"
			    "+\n"
			    "+\tfor (i = 0; i <= n; i++)\n"
			    "+\t\tp[i] = 0;\n"
			    "+\treturn n;\n"
			    "+}\n"
			    " \n"
			    " int h(void)\n"
			    " {\n";

/* Patch 2 fixes the bound in g(). */
static const char diff2[] = "diff --git a/a.c b/a.c\n"
			    "--- a/a.c\n"
			    "+++ b/a.c\n"
			    "@@ -15,3 +15,3 @@ int g(int *p, int n)\n"
			    " \n"
			    "-\tfor (i = 0; i <= n; i++)\n"
			    "+\tfor (i = 0; i < n; i++)\n"
			    " \t\tp[i] = 0;\n";

/* Patch 2': two lines added at the top shift g() down, then one after. */
static const char diff3[] = "diff --git a/a.c b/a.c\n"
			    "--- a/a.c\n"
			    "+++ b/a.c\n"
			    "@@ -1,2 +1,4 @@\n"
			    " #include <stdlib.h>\n"
			    "+#include <string.h>\n"
			    "+#include <stdio.h>\n"
			    " \n"
			    "@@ -21,3 +23,4 @@ int h(void)\n"
			    " int h(void)\n"
			    " {\n"
			    "+\tputs(\"h\");\n"
			    " \treturn 0;\n";

static struct rv_diff *parse(const char *text)
{
	struct rv_diff *d = NULL;

	assert_int_equal(rv_diff_parse(&d, text, strlen(text), NULL), 0);
	return d;
}

static enum rv_verdict check(const struct rv_diff *d, const char *file, int a,
			     int b, const char *quote, bool with_post)
{
	struct rv_finding f = {0};

	f.file = (char *)file;
	f.line_start = a;
	f.line_end = b;
	f.quote = (char *)quote;
	return rv_verify_finding(&f, d, with_post ? post : NULL,
				 with_post ? strlen(post) : 0);
}

static void test_verdicts(void **state)
{
	struct rv_diff *d = parse(diff1);

	(void)state;
	assert_int_equal(
		check(d, "a.c", 16, 17, "for (i = 0; i <= n; i++)", true),
		RV_VERDICT_KEEP);
	/* Our gutter and a diff origin copied into the quote are fine. */
	assert_int_equal(check(d, "a.c", 16, 16,
			       "   16 +\tfor (i = 0; i <= n; i++)\n...", true),
			 RV_VERDICT_KEEP);
	assert_int_equal(check(d, "b.c", 16, 16, NULL, true),
			 RV_VERDICT_OUTSIDE);
	assert_int_equal(check(d, "a.c", 400, 401, NULL, true),
			 RV_VERDICT_OUTSIDE);
	assert_int_equal(check(d, "a.c", 1, 1, NULL, true), RV_VERDICT_OUTSIDE);
	/* A range that meets the hunk but runs past the file's end: made up. */
	assert_int_equal(check(d, "a.c", 16, 401, NULL, true),
			 RV_VERDICT_HALLUCINATED);
	assert_int_equal(check(d, "a.c", 16, 25, NULL, true),
			 RV_VERDICT_HALLUCINATED);
	assert_int_equal(check(d, "a.c", 16, 24, NULL, true), RV_VERDICT_KEEP);
	/* In f(), which the hunk reaches, but untouched: pre-existing. */
	assert_int_equal(check(d, "a.c", 5, 5, "int i, s = 0;", true),
			 RV_VERDICT_PREEXISTING);
	/* A quote of code the post-image does not have is invented. */
	assert_int_equal(check(d, "a.c", 17, 17, "free(p);", true),
			 RV_VERDICT_HALLUCINATED);
	/* A line the patch removes may be quoted (a finding on a removal). */
	rv_diff_free(d);
	d = parse(diff2);
	assert_int_equal(
		check(d, "a.c", 16, 16, "for (i = 0; i <= n; i++)", false),
		RV_VERDICT_KEEP);
	rv_diff_free(d);
	d = parse(diff1);
	/* Without the tree, the diff's lines are the reference. */
	assert_int_equal(check(d, "a.c", 16, 16, "p[i] = 0;", false),
			 RV_VERDICT_KEEP);
	/* ... and its last line shown the end of what exists. */
	assert_int_equal(check(d, "a.c", 16, 22, NULL, false), RV_VERDICT_KEEP);
	assert_int_equal(check(d, "a.c", 16, 23, NULL, false),
			 RV_VERDICT_HALLUCINATED);
	assert_int_equal(check(d, "a.c", 16, 16, "memset(p, 0, n);", false),
			 RV_VERDICT_HALLUCINATED);
	rv_diff_free(d);
}

static void test_fixed_later(void **state)
{
	struct rv_diff *d[3] = {parse(diff1), parse(diff2), NULL};
	struct rv_finding f = {0};

	(void)state;
	f.file = (char *)"a.c";
	f.patch = 0;
	f.line_start = f.line_end = 16;
	assert_true(rv_verify_fixed_later(&f, d, 2));
	f.line_start = f.line_end = 18; /* return n; untouched later */
	assert_false(rv_verify_fixed_later(&f, d, 2));
	f.patch = 1; /* the last patch: nothing after it */
	f.line_start = f.line_end = 16;
	assert_false(rv_verify_fixed_later(&f, d, 2));
	rv_diff_free(d[1]);

	/* Lines shift by the hunks above them before they are compared. */
	d[1] = parse(diff3);
	f.patch = 0;
	f.line_start = f.line_end = 16;
	assert_false(rv_verify_fixed_later(&f, d, 2));
	f.line_start = f.line_end = 22; /* h()'s '{': a line is added after */
	assert_true(rv_verify_fixed_later(&f, d, 2));
	rv_diff_free(d[0]);
	rv_diff_free(d[1]);
}

/* Where a finding's lines are at the tip: shifted, or gone. */
static void test_at_tip(void **state)
{
	struct rv_diff *d[2] = {parse(diff1), parse(diff3)};
	struct rv_finding f = {0};

	(void)state;
	f.file = (char *)"a.c";
	f.patch = 0;
	/* g()'s loop: line 16 of patch 1 is line 18 after patch 2. */
	f.line_start = f.line_end = 16;
	assert_int_equal(rv_verify_at_tip(&f, d, 2), 0);
	assert_string_equal(f.tip_file, "a.c");
	assert_int_equal(f.tip_line_start, 18);
	assert_int_equal(f.tip_line_end, 18);
	/* The last patch's findings are already at the tip. */
	f.patch = 1;
	f.line_start = f.line_end = 25;
	assert_int_equal(rv_verify_at_tip(&f, d, 2), 0);
	assert_int_equal(f.tip_line_start, 25);
	/* Lines a later patch changes have no place at the tip. */
	f.patch = 0;
	f.line_start = f.line_end = 22;
	assert_int_equal(rv_verify_at_tip(&f, d, 2), -1);
	assert_null(f.tip_file);
	assert_int_equal(f.tip_line_start, 0);
	rv_diff_free(d[0]);
	rv_diff_free(d[1]);
}

static void test_tip_owner(void **state)
{
	struct rv_diff *d[2] = {parse(diff1), parse(diff3)};
	struct rv_finding f = {0};

	(void)state;
	/* g()'s loop: line 16 of patch 1, line 18 of the tip. */
	f.file = xstrdup_or_null("a.c");
	f.line_start = f.line_end = 18;
	assert_int_equal(rv_verify_tip_owner(&f, d, 2), 0);
	assert_int_equal(f.line_start, 16);
	assert_string_equal(f.file, "a.c");
	/* The puts() patch 2 adds in h(). */
	f.line_start = f.line_end = 25;
	assert_int_equal(rv_verify_tip_owner(&f, d, 2), 1);
	assert_int_equal(f.line_start, 25);
	/* A line no patch added: the last patch that changes the file. */
	f.line_start = f.line_end = 1;
	assert_int_equal(rv_verify_tip_owner(&f, d, 2), 1);
	assert_int_equal(f.line_start, 1);
	free(f.file);
	f.file = xstrdup_or_null("b.c");
	assert_int_equal(rv_verify_tip_owner(&f, d, 2), -1);
	free(f.file);
	rv_diff_free(d[0]);
	rv_diff_free(d[1]);
}

/* A category as a stable id: quorum's own list, synonyms folded, else other. */
static void test_category_id(void **state)
{
	(void)state;
	assert_string_equal(rv_category_id("null-deref"), "null-deref");
	assert_string_equal(rv_category_id("Buffer_Overflow"), "bounds");
	assert_string_equal(rv_category_id("NULL pointer"), "null-deref");
	assert_string_equal(rv_category_id("unsafe-string"), "unsafe-string");
	assert_string_equal(rv_category_id("null-deref??Bcc: x@evil.example"),
			    "other");
	assert_string_equal(rv_category_id("general"), "other");
	assert_string_equal(rv_category_id(""), "other");
	assert_string_equal(rv_category_id(NULL), "other");
	assert_string_equal(rv_category_text("race"), "race condition");
	assert_string_equal(rv_category_text("nonsense"),
			    "another kind of defect");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verdicts),
		cmocka_unit_test(test_fixed_later),
		cmocka_unit_test(test_tip_owner),
		cmocka_unit_test(test_at_tip),
		cmocka_unit_test(test_category_id),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
