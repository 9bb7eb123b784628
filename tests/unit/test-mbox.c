// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests for mailparse/mbox.c: splitting mboxes the way git does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "mailparse/mailparse.h"

#define MAX_MSGS 16

struct split {
	char *msg[MAX_MSGS];
	int ret[MAX_MSGS];
	int n;
};

static void split_free(struct split *s)
{
	int i;

	for (i = 0; i < s->n; i++)
		free(s->msg[i]);
	s->n = 0;
}

/* Read every message of an open reader into s; the reader is freed. */
static void drain(struct mp_mbox *mb, struct split *s)
{
	struct sb msg = SB_INIT;
	const char *where;
	int ret;

	memset(s, 0, sizeof(*s));
	while ((ret = mp_mbox_next(mb, &msg, &where)) != 0) {
		assert_true(s->n < MAX_MSGS);
		assert_non_null(where);
		s->ret[s->n] = ret;
		s->msg[s->n] = xstrdup_or_null(sb_str(&msg));
		s->n++;
	}
	sb_release(&msg);
	mp_mbox_free(mb);
}

static void split_mem(const char *data, size_t len, size_t max_message,
		      struct split *s)
{
	struct mp_limits lim = MP_LIMITS_INIT;
	struct mp_mbox *mb = NULL;
	FILE *fp = fmemopen((void *)data, len, "rb");

	assert_non_null(fp);
	if (max_message)
		lim.max_message = max_message;
	assert_int_equal(mp_mbox_open_fp(&mb, fp, "mem", &lim, NULL), 0);
	drain(mb, s);
	fclose(fp);
}

static void split_str(const char *data, struct split *s)
{
	split_mem(data, strlen(data), 0, s);
}

#define FROM1 "From 1234567890abcdef Mon Sep 17 00:00:00 2001\n"
#define FROM2 "From mboxrd@z Thu Jan  1 00:00:00 1970\n"

static void test_splits_on_from_lines(void **state)
{
	struct split s;

	split_str(FROM1 "Subject: one\n\nbody 1\n" FROM2
			"Subject: two\n\nbody 2\n",
		  &s);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.ret[0], 1);
	/* the From_ line stays: the parser reads the commit id from it */
	assert_string_equal(s.msg[0], FROM1 "Subject: one\n\nbody 1\n");
	assert_string_equal(s.msg[1], FROM2 "Subject: two\n\nbody 2\n");
	split_free(&s);
}

static void test_from_in_body_does_not_split(void **state)
{
	struct split s;

	/* git format-patch --stdout leaves these unescaped */
	split_str(FROM1 "Subject: one\n\n"
			"From upstream commit 1234\n"
			"From: someone else <x@y>\n"
			"From the top of the file\n"
			"From here on: 12:30 is late\n" FROM2
			"Subject: two\n\nb\n",
		  &s);
	assert_int_equal(s.n, 2);
	assert_non_null(strstr(s.msg[0], "\nFrom upstream commit 1234\n"));
	assert_non_null(strstr(s.msg[0], "\nFrom here on: 12:30 is late\n"));
	split_free(&s);
}

static void test_mboxrd_unescaping(void **state)
{
	struct split s;

	split_str(FROM2 "Subject: x\n\n>From the start\n>>From quoted\n"
			"> From not escaped\n>Frome\n",
		  &s);
	assert_int_equal(s.n, 1);
	assert_non_null(strstr(s.msg[0], "\nFrom the start\n>From quoted\n"
					 "> From not escaped\n>Frome\n"));
	split_free(&s);
}

static void test_no_from_line_is_one_message(void **state)
{
	struct split s;

	split_str("From: A <a@b>\nSubject: [PATCH] x\n\n" FROM1
		  "still the same message\n",
		  &s);
	assert_int_equal(s.n, 1);
	assert_non_null(strstr(s.msg[0], "still the same message"));
	split_free(&s);

	split_str("commit 391dda1bd7c5\nAuthor: A <a@b>\n\n    title\n", &s);
	assert_int_equal(s.n, 1);
	assert_true(!strncmp(s.msg[0], "commit 391dda1bd7c5\n", 20));
	split_free(&s);
}

static void test_crlf(void **state)
{
	struct split s;

	split_str("From 1234 Mon Sep 17 00:00:00 2001\r\nSubject: a\r\n\r\n"
		  "body\r\n>From x\r\n"
		  "From 5678 Mon Sep 17 00:00:00 2001\r\nSubject: b\r\n\r\n"
		  "body\r\n",
		  &s);
	assert_int_equal(s.n, 2);
	assert_non_null(strstr(s.msg[0], "body\r\nFrom x\r\n"));
	assert_non_null(strstr(s.msg[1], "Subject: b\r\n"));
	split_free(&s);
}

static void test_leading_blank_and_empty_messages(void **state)
{
	struct split s;

	split_str("\n\n" FROM1 FROM1 "\n" FROM2 "Subject: x\n\nb\n", &s);
	/* a From_ line with nothing after it is no message */
	assert_int_equal(s.n, 1);
	assert_non_null(strstr(s.msg[0], "Subject: x"));
	split_free(&s);

	split_str("", &s);
	assert_int_equal(s.n, 0);
	split_str("\n\n  \n", &s);
	assert_int_equal(s.n, 0);
}

static void test_oversized_message_is_skipped(void **state)
{
	struct sb in = SB_INIT;
	struct split s;
	int i;

	sb_adds(&in, FROM1 "Subject: small\n\nok\n" FROM2 "Subject: big\n\n");
	for (i = 0; i < 2000; i++)
		sb_adds(&in, "0123456789012345678901234567890123456789\n");
	/* a line longer than the read buffer, too */
	for (i = 0; i < 100000; i++)
		sb_addch(&in, 'x');
	sb_adds(&in, "\n" FROM1 "Subject: after\n\nok\n");
	split_mem(in.buf, in.len, 4096, &s);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.ret[0], 1);
	assert_int_equal(s.ret[1], MP_ERR_TOO_BIG);
	assert_string_equal(s.msg[1], "");
	assert_int_equal(s.ret[2], 1);
	assert_non_null(strstr(s.msg[2], "Subject: after"));
	split_free(&s);
	sb_release(&in);
}

static void test_long_line_is_kept_whole(void **state)
{
	struct sb in = SB_INIT;
	struct split s;
	int i;

	sb_adds(&in, FROM1 "Subject: long\n\n");
	for (i = 0; i < 200000; i++)
		sb_addch(&in, 'a' + i % 26);
	sb_adds(&in, "\n" FROM2 "Subject: next\n\n");
	split_mem(in.buf, in.len, 0, &s);
	assert_int_equal(s.n, 2);
	assert_int_equal(strlen(s.msg[0]),
			 strlen(FROM1 "Subject: long\n\n") + 200001);
	split_free(&s);
	sb_release(&in);
}

static void test_from_line_across_buffer_boundary(void **state)
{
	size_t shift;

	/* the second From_ line (and a >From line) straddle the 64 KiB
	 * read buffer at every offset around its end */
	for (shift = 0; shift < 16; shift++) {
		struct sb in = SB_INIT;
		struct split s;
		size_t i;

		sb_adds(&in, FROM1 "Subject: one\n\n");
		while (in.len < 65536 - 8 + shift - 16)
			sb_adds(&in, "x\n");
		for (i = in.len; i < 65536 - 8 + shift; i++)
			sb_addch(&in, i + 1 == 65536 - 8 + shift ? '\n' : 'y');
		sb_adds(&in, ">From quoted\n" FROM2 "Subject: two\n\nb\n");
		split_mem(in.buf, in.len, 0, &s);
		assert_int_equal(s.n, 2);
		assert_non_null(strstr(s.msg[0], "\nFrom quoted\n"));
		assert_null(strstr(s.msg[0], "Subject: two"));
		assert_string_equal(s.msg[1], FROM2 "Subject: two\n\nb\n");
		split_free(&s);
		sb_release(&in);
	}
}

static void write_file(const char *path, const char *data)
{
	FILE *fp = fopen(path, "wb");

	assert_non_null(fp);
	fputs(data, fp);
	fclose(fp);
}

static void test_maildir_in_name_order(void **state)
{
	char dir[] = "/tmp/test-mbox.XXXXXX";
	char path[256];
	struct mp_mbox *mb = NULL;
	struct split s;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/cur", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/new", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/tmp", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/new/0003.host", dir);
	write_file(path, "Subject: three\n\n" FROM1 "body\n");
	snprintf(path, sizeof(path), "%s/cur/0001.host:2,S", dir);
	write_file(path, "Subject: one\n\nbody\n");
	snprintf(path, sizeof(path), "%s/cur/0002.host:2,S", dir);
	write_file(path, "Subject: two\n\nbody\n");
	snprintf(path, sizeof(path), "%s/tmp/0000.host", dir);
	write_file(path, "Subject: half-delivered\n\nbody\n");

	assert_int_equal(mp_mbox_open(&mb, dir, NULL, NULL), 0);
	drain(mb, &s);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.msg[0], "Subject: one\n\nbody\n");
	assert_string_equal(s.msg[1], "Subject: two\n\nbody\n");
	/* a maildir file is one message even with a From_ line inside */
	assert_string_equal(s.msg[2], "Subject: three\n\n" FROM1 "body\n");
	split_free(&s);

	unlink(path);
	snprintf(path, sizeof(path), "%s/new/0003.host", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/cur/0001.host:2,S", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/cur/0002.host:2,S", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/cur", dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/new", dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/tmp", dir);
	rmdir(path);
	rmdir(dir);
}

static void test_open_errors(void **state)
{
	struct mp_mbox *mb = NULL;
	struct errmsg err = {""};

	assert_int_equal(mp_mbox_open(&mb, "/nonexistent/x.mbox", NULL, &err),
			 MP_ERR_IO);
	assert_null(mb);
	assert_non_null(strstr(err.msg, "/nonexistent/x.mbox"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_splits_on_from_lines),
		cmocka_unit_test(test_from_in_body_does_not_split),
		cmocka_unit_test(test_mboxrd_unescaping),
		cmocka_unit_test(test_no_from_line_is_one_message),
		cmocka_unit_test(test_crlf),
		cmocka_unit_test(test_leading_blank_and_empty_messages),
		cmocka_unit_test(test_oversized_message_is_skipped),
		cmocka_unit_test(test_long_line_is_kept_whole),
		cmocka_unit_test(test_from_line_across_buffer_boundary),
		cmocka_unit_test(test_maildir_in_name_order),
		cmocka_unit_test(test_open_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
