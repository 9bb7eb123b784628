// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests for mailparse/trailers.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mailparse/mailparse.h"

static void free_all(struct mp_trailer *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(t[i].key);
		free(t[i].value);
	}
	free(t);
}

static void test_basic_block(void **state)
{
	struct mp_trailer *t = NULL;
	size_t n = 0;

	assert_int_equal(
		mp_trailers_parse("net: fix foo\n"
				  "\n"
				  "Body text: with a colon in prose.\n"
				  "\n"
				  "Reported-by: R <r@example.org>\n"
				  "Cc: stable@vger.kernel.org # 5.10+\n"
				  "Link: https://lore.kernel.org/r/1@x\n"
				  "Closes: https://bugs.example.org/2\n"
				  "Signed-off-by: A U Thor <a@example.org>\n"
				  "\n\n",
				  &t, &n),
		5);
	assert_int_equal(n, 5);
	assert_string_equal(t[0].key, "Reported-by");
	assert_string_equal(t[0].value, "R <r@example.org>");
	assert_string_equal(t[1].value, "stable@vger.kernel.org # 5.10+");
	assert_string_equal(t[2].key, "Link");
	assert_string_equal(t[2].value, "https://lore.kernel.org/r/1@x");
	assert_string_equal(mp_trailer_get(t, n, "signed-off-by"),
			    "A U Thor <a@example.org>");
	assert_string_equal(mp_trailer_get(t, n, "closes"),
			    "https://bugs.example.org/2");
	assert_null(mp_trailer_get(t, n, "Acked-by"));
	/* appends to what is there */
	assert_int_equal(mp_trailers_parse("t\n\nAcked-by: B <b@x>\n", &t, &n),
			 1);
	assert_int_equal(n, 6);
	assert_string_equal(mp_trailer_get(t, n, "Acked-by"), "B <b@x>");
	free_all(t, n);
}

static void test_wrapped_fixes(void **state)
{
	struct mp_trailer *t = NULL;
	size_t n = 0;

	assert_int_equal(
		mp_trailers_parse(
			"title\n\nbody\n\n"
			"Fixes: 1234567890ab (\"net: a very long title that\n"
			"was wrapped by a mailer\")\n"
			"Fixes: abcdef012345 (\"second one\n"
			"  indented continuation\")\n"
			"Reviewed-by: Some One\n"
			" <one@example.org>\n"
			"Signed-off-by: X <x@y>\n",
			&t, &n),
		4);
	assert_string_equal(t[0].key, "Fixes");
	assert_string_equal(t[0].value,
			    "1234567890ab (\"net: a very long "
			    "title that was wrapped by a mailer\")");
	assert_string_equal(
		t[1].value,
		"abcdef012345 (\"second one indented continuation\")");
	assert_string_equal(t[2].value, "Some One <one@example.org>");
	free_all(t, n);
}

static void test_not_trailers(void **state)
{
	struct mp_trailer *t = NULL;
	size_t n = 0;

	/* the title alone is never a trailer block */
	assert_int_equal(mp_trailers_parse("net: fix foo\n", &t, &n), 0);
	/* prose with one colon line is not a trailer block */
	assert_int_equal(mp_trailers_parse("title\n\n"
					   "This is prose and so is this\n"
					   "Note: one line of it\n"
					   "and more prose here\n",
					   &t, &n),
			 0);
	/* URLs and keys with spaces are not trailers */
	assert_int_equal(mp_trailers_parse("title\n\nhttps://example.org\n"
					   "Some Key: value\n",
					   &t, &n),
			 0);
	/* an empty value is not a trailer */
	assert_int_equal(mp_trailers_parse("title\n\nCc:\n", &t, &n), 0);
	assert_int_equal(mp_trailers_parse(NULL, &t, &n), 0);
	assert_int_equal(mp_trailers_parse("", &t, &n), 0);
	assert_int_equal(n, 0);
	assert_null(t);
}

static void test_mixed_block(void **state)
{
	struct mp_trailer *t = NULL;
	size_t n = 0;

	/* stable-style notes between sign-offs keep the block */
	assert_int_equal(mp_trailers_parse("title\n\nbody\n\n"
					   "Signed-off-by: A <a@x>\n"
					   "[ b: fixed up context ]\n"
					   "Signed-off-by: B <b@x>\n",
					   &t, &n),
			 2);
	assert_string_equal(t[1].value, "B <b@x>");
	free_all(t, n);
}

static void test_html_junk(void **state)
{
	struct mp_trailer *t = NULL;
	size_t n = 0;

	assert_int_equal(
		mp_trailers_parse("t\n\nReviewed-by: H J <h@example.com"
				  "<mailto:h@example.com>>\n",
				  &t, &n),
		1);
	assert_string_equal(t[0].value, "H J <h@example.com>");
	free_all(t, n);
}

static void test_many(void **state)
{
	size_t len = 20 + 2000 * 24, n = 0;
	char *m = malloc(len), *p = m;
	struct mp_trailer *t = NULL;

	p += sprintf(p, "title\n\n");
	for (int i = 0; i < 2000; i++)
		p += sprintf(p, "Acked-by: x%04d <a@b>\n", i);
	/* capped, not unbounded */
	assert_int_equal(mp_trailers_parse(m, &t, &n), 1024);
	free_all(t, n);
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic_block),
		cmocka_unit_test(test_wrapped_fixes),
		cmocka_unit_test(test_not_trailers),
		cmocka_unit_test(test_mixed_block),
		cmocka_unit_test(test_html_junk),
		cmocka_unit_test(test_many),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
