// SPDX-License-Identifier: GPL-2.0-or-later
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "mailparse/sb.h"

static void test_add_and_str(void **state)
{
	struct sb sb = SB_INIT;

	assert_string_equal(sb_str(&sb), "");
	assert_int_equal(sb_adds(&sb, "abc"), 0);
	assert_int_equal(sb_addch(&sb, '-'), 0);
	assert_int_equal(sb_addf(&sb, "%d/%s", 42, "x"), 0);
	assert_string_equal(sb_str(&sb), "abc-42/x");
	assert_int_equal(sb.len, 8);
	sb_release(&sb);
	assert_null(sb.buf);
}

static void test_cap_refuses_growth(void **state)
{
	struct sb sb;

	sb_init(&sb, 8);
	assert_int_equal(sb_adds(&sb, "12345678"), 0);
	/* One more byte is over the cap: refused, contents unchanged. */
	assert_int_equal(sb_addch(&sb, '9'), -1);
	assert_int_equal(sb_addf(&sb, "%s", "x"), -1);
	assert_string_equal(sb_str(&sb), "12345678");
	sb_reset(&sb);
	assert_int_equal(sb.len, 0);
	assert_int_equal(sb_adds(&sb, "abc"), 0);
	sb_release(&sb);
}

static void test_huge_request_refused(void **state)
{
	struct sb sb = SB_INIT;

	assert_int_equal(sb_grow(&sb, (size_t)-1), -1);
	assert_int_equal(sb_add(&sb, "x", SB_DEFAULT_CAP + 1), -1);
	assert_null(sb.buf);
}

static void test_detach_and_trim(void **state)
{
	struct sb sb = SB_INIT;
	size_t len;
	char *s;

	s = sb_detach(&sb, &len);
	assert_non_null(s);
	assert_string_equal(s, "");
	free(s);
	sb_adds(&sb, "line  \n\t ");
	sb_rtrim(&sb);
	assert_string_equal(sb_str(&sb), "line");
	sb_setlen(&sb, 2);
	s = sb_detach(&sb, &len);
	assert_string_equal(s, "li");
	assert_int_equal(len, 2);
	assert_null(sb.buf);
	free(s);
}

static void test_errmsg(void **state)
{
	struct errmsg e;

	assert_int_equal(errmsg_set(&e, -7, "patch %d/%d", 2, 3), -7);
	assert_string_equal(e.msg, "patch 2/3");
	assert_int_equal(errmsg_set(NULL, -3, "ignored"), -3);
}

static void test_xstrndup_stops_at_nul(void **state)
{
	char *s = xstrndup("ab\0cd", 5);

	assert_string_equal(s, "ab");
	free(s);
	assert_null(xstrdup_or_null(NULL));
}

static bool is_dir(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The state db, the ledger and the outbox all make their own parents. */
static void test_mkdir_parents(void **state)
{
	char base[] = "/tmp/quorum-sb-XXXXXX", p[128];

	assert_non_null(mkdtemp(base));
	snprintf(p, sizeof(p), "%s/a/b/state.db", base);
	assert_int_equal(mkdir_parents(p, false), 0);
	snprintf(p, sizeof(p), "%s/a/b", base);
	assert_true(is_dir(p));
	snprintf(p, sizeof(p), "%s/a/b/state.db", base);
	assert_false(is_dir(p));
	/* Again: what exists is fine. With self, the last one too. */
	assert_int_equal(mkdir_parents(p, false), 0);
	snprintf(p, sizeof(p), "%s/a/c/outbox", base);
	assert_int_equal(mkdir_parents(p, true), 0);
	assert_true(is_dir(p));
	/* A file in the way is an error, not a crash. */
	snprintf(p, sizeof(p), "%s/a/b/f", base);
	fclose(fopen(p, "w"));
	snprintf(p, sizeof(p), "%s/a/b/f/x/y", base);
	assert_int_equal(mkdir_parents(p, false), -1);
	snprintf(p, sizeof(p), "rm -rf '%s'", base);
	assert_int_equal(system(p), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_and_str),
		cmocka_unit_test(test_cap_refuses_growth),
		cmocka_unit_test(test_huge_request_refused),
		cmocka_unit_test(test_detach_and_trim),
		cmocka_unit_test(test_errmsg),
		cmocka_unit_test(test_xstrndup_stops_at_nul),
		cmocka_unit_test(test_mkdir_parents),
	};

	return cmocka_run_group_tests_name("sb", tests, NULL, NULL);
}
