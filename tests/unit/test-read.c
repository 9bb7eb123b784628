// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests for mailparse/read.c: files in, a set (and its errors) out. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "mailparse/mailparse.h"

#define PATCH(n, id)                                                           \
	"From 1234567890123456789012345678901234567890 Mon Sep 17 00:00:00 "   \
	"2001\n"                                                               \
	"From: A U Thor <a@example.org>\n"                                     \
	"Date: Tue, 14 Nov 2023 22:13:20 +0000\n"                              \
	"Subject: [PATCH " #n "/2] f" #n ": add f" #n "\n"                     \
	"Message-Id: <" id ">\n"                                               \
	"In-Reply-To: <cover@example.org>\n"                                   \
	"References: <cover@example.org>\n"                                    \
	"\n"                                                                   \
	"Add f" #n ".\n\n"                                                     \
	"Signed-off-by: A U Thor <a@example.org>\n"                            \
	"---\n"                                                                \
	" f" #n ".c | 1 +\n"                                                   \
	"\n"                                                                   \
	"diff --git a/f" #n ".c b/f" #n ".c\n"                                 \
	"new file mode 100644\n"                                               \
	"index 0000000..1111111\n"                                             \
	"--- /dev/null\n"                                                      \
	"+++ b/f" #n ".c\n"                                                    \
	"@@ -0,0 +1 @@\n"                                                      \
	"+int f" #n ";\n"                                                      \
	"-- \n2.39.0\n\n"

static char *write_tmp(const char *data, size_t len)
{
	char *path = xstrdup_or_null("/tmp/test-read.XXXXXX");
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
	return path;
}

static void test_reads_a_series_and_lists_bad_messages(void **state)
{
	struct sb in = SB_INIT;
	struct mp_limits lim = MP_LIMITS_INIT;
	struct mp_set *set = NULL;
	struct errmsg err = {""};
	char *path;
	int i;

	sb_adds(&in, PATCH(2, "p2@example.org"));
	/* over the cap: skipped and reported */
	sb_adds(&in, "From x Mon Sep 17 00:00:00 2001\nSubject: big\n\n");
	for (i = 0; i < 3000; i++)
		sb_adds(&in, "0123456789\n");
	/* binary junk: reported, not fatal */
	sb_adds(&in, "From y Mon Sep 17 00:00:00 2001\n");
	sb_add(&in, "\x01\x02\0\x03\n", 5);
	sb_adds(&in, PATCH(1, "p1@example.org"));
	path = write_tmp(in.buf, in.len);
	lim.max_message = 16 << 10;

	assert_int_equal(mp_read_path(&set, path, &lim, &err), 0);
	assert_non_null(set);
	assert_int_equal(set->nseries, 1);
	assert_true(set->series[0]->complete);
	assert_int_equal(set->series[0]->total, 2);
	assert_string_equal(set->series[0]->patches[0]->message_id,
			    "p1@example.org");
	assert_int_equal(set->series[0]->patches[0]->nfiles, 1);
	/* mp_read_path keeps the diffs (quorum review needs them) */
	assert_non_null(set->series[0]->patches[0]->diff);
	assert_int_equal(set->nerrors, 2);
	assert_non_null(strstr(set->errors[0].where, "message 2"));
	assert_non_null(strstr(set->errors[0].message, "limit"));
	assert_non_null(strstr(set->errors[1].where, "message 3"));
	mp_set_free(set);
	unlink(path);
	free(path);
	sb_release(&in);
}

static void test_collect_several_files_without_bodies(void **state)
{
	const char *a = PATCH(1, "p1@example.org");
	const char *b = PATCH(2, "p2@example.org");
	char *pa = write_tmp(a, strlen(a)), *pb = write_tmp(b, strlen(b));
	struct mp_collector *c = mp_collector_new();
	struct mp_set *set;

	mp_collector_set_keep_bodies(c, false);
	assert_int_equal(mp_collect_path(c, pa, NULL, NULL), 1);
	assert_int_equal(mp_collect_path(c, pb, NULL, NULL), 1);
	/* the same file twice: the message-id is a duplicate */
	assert_int_equal(mp_collect_path(c, pb, NULL, NULL), 1);
	set = mp_collector_finish(c);
	assert_int_equal(set->nseries, 1);
	assert_true(set->series[0]->complete);
	assert_null(set->series[0]->patches[1]->diff);
	assert_int_equal(set->series[0]->patches[1]->nfiles, 1);
	assert_int_equal(set->nerrors, 1);
	assert_non_null(strstr(set->errors[0].message, "duplicate"));
	mp_set_free(set);
	unlink(pa);
	unlink(pb);
	free(pa);
	free(pb);
}

static void test_unreadable_and_empty_files(void **state)
{
	struct mp_set *set = (struct mp_set *)1;
	struct errmsg err = {""};
	char *empty = write_tmp("", 0);
	char *blank = write_tmp("\n\n \n", 4);

	assert_int_equal(mp_read_path(&set, "/nonexistent/x", NULL, &err),
			 MP_ERR_IO);
	assert_null(set);
	assert_non_null(strstr(err.msg, "/nonexistent/x"));
	assert_int_equal(mp_read_path(&set, empty, NULL, &err), MP_ERR_EMPTY);
	assert_null(set);
	assert_non_null(strstr(err.msg, "empty"));
	assert_int_equal(mp_read_path(&set, blank, NULL, &err), MP_ERR_EMPTY);
	unlink(empty);
	unlink(blank);
	free(empty);
	free(blank);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reads_a_series_and_lists_bad_messages),
		cmocka_unit_test(test_collect_several_files_without_bodies),
		cmocka_unit_test(test_unreadable_and_empty_files),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
