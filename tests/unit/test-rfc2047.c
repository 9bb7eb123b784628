// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for mailparse/rfc2047.c: runs of adjacent encoded-words are
 * joined into one word before GMime decodes them (GMime 3.2.13 cuts some
 * runs after their first word).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mailparse/mp-internal.h"

static void test_nothing_to_join(void **state)
{
	(void)state;
	assert_null(mp_header_join_words(NULL));
	assert_null(mp_header_join_words("[PATCH] plain ascii"));
	assert_null(mp_header_join_words("=?UTF-8?B?w6k=?= alone"));
	/* different charsets or encodings stay apart */
	assert_null(
		mp_header_join_words("=?UTF-8?B?w6k=?= =?ISO-8859-1?B?6Q==?="));
	assert_null(
		mp_header_join_words("=?UTF-8?B?w6k=?= =?UTF-8?Q?=C3=A9?="));
	/* text between words: not a run */
	assert_null(
		mp_header_join_words("=?UTF-8?B?w6k=?= x =?UTF-8?B?w6k=?="));
	/* not encoded-words at all */
	assert_null(mp_header_join_words("=?broken =?UTF-8?X?abc?= =?"));
}

static void test_base64_run(void **state)
{
	char *j;

	(void)state;
	/* "Иван" split inside the second character: bytes joined first */
	j = mp_header_join_words("=?utf-8?b?0JjQ?=\r\n =?UTF-8?B?stCw0L0=?= "
				 "<ivan@example.org>");
	assert_non_null(j);
	assert_string_equal(j, "=?utf-8?B?0JjQstCw0L0=?= <ivan@example.org>");
	free(j);
	/* padded words in the middle of a run */
	j = mp_header_join_words("[PATCH] =?UTF-8?B?w6k=?= =?UTF-8?B?w6k=?=\t"
				 "=?UTF-8?B?w6k=?= end");
	assert_non_null(j);
	assert_string_equal(j, "[PATCH] =?UTF-8?B?w6nDqcOp?= end");
	free(j);
}

static void test_q_run(void **state)
{
	char *j;

	(void)state;
	j = mp_header_join_words("=?UTF-8?q?caf=C3?= =?utf-8?Q?=A9_au_lait?=");
	assert_non_null(j);
	assert_string_equal(j, "=?UTF-8?Q?caf=C3=A9_au_lait?=");
	free(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nothing_to_join),
		cmocka_unit_test(test_base64_run),
		cmocka_unit_test(test_q_run),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
