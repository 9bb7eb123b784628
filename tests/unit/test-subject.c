// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests for mailparse/subject.c: the patch subject grammar. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "mailparse/mailparse.h"

struct want {
	const char *subject;
	const char *title;
	int version, index, total;
	bool patch, rfc, resend, reply;
	const char *tags; /* tags joined with '|' */
};

static void check(const struct want *w)
{
	struct mp_subject s;
	char tags[256] = "";

	mp_subject_parse(&s, w->subject);
	for (size_t i = 0; i < s.ntags; i++) {
		if (i)
			strcat(tags, "|");
		strcat(tags, s.tags[i]);
	}
	assert_string_equal(s.title, w->title);
	assert_int_equal(s.version, w->version);
	assert_int_equal(s.index, w->index);
	assert_int_equal(s.total, w->total);
	assert_int_equal(s.has_patch_tag, w->patch);
	assert_int_equal(s.rfc, w->rfc);
	assert_int_equal(s.resend, w->resend);
	assert_int_equal(s.reply, w->reply);
	assert_string_equal(tags, w->tags);
	mp_subject_release(&s);
	/* release leaves an empty, reusable struct */
	assert_null(s.title);
	assert_int_equal(s.ntags, 0);
}

static void test_plain_patch(void **state)
{
	static const struct want w[] = {
		{"[PATCH] foo: bar", "foo: bar", 1, 0, 0, 1, 0, 0, 0, ""},
		{"[PATCH v2] foo: bar", "foo: bar", 2, 0, 0, 1, 0, 0, 0, ""},
		{"[PATCHv3] foo", "foo", 3, 0, 0, 1, 0, 0, 0, ""},
		{"[PATCH V4 1/2] foo", "foo", 4, 1, 2, 1, 0, 0, 0, ""},
		{"[PATCH 0/3] cover", "cover", 1, 0, 3, 1, 0, 0, 0, ""},
		{"[PATCH 02/10] two", "two", 1, 2, 10, 1, 0, 0, 0, ""},
		{"[PATCH 001/123] many", "many", 1, 1, 123, 1, 0, 0, 0, ""},
		{"[patch 3/5] lower", "lower", 1, 3, 5, 1, 0, 0, 0, ""},
	};

	for (size_t i = 0; i < ARRAY_SIZE(w); i++)
		check(&w[i]);
}

static void test_tags_and_groups(void **state)
{
	static const struct want w[] = {
		{"[PATCH net-next v3 02/10] net: x", "net: x", 3, 2, 10, 1, 0,
		 0, 0, "net-next"},
		{"[net-next][PATCH v2 3/5] foo", "foo", 2, 3, 5, 1, 0, 0, 0,
		 "net-next"},
		{"[PATCH AUTOSEL 5.10 6/6] wil6210: fix support",
		 "wil6210: fix support", 1, 6, 6, 1, 0, 0, 0, "AUTOSEL|5.10"},
		{"[PATCH bpf-next,v2] bpf: y", "bpf: y", 2, 0, 0, 1, 0, 0, 0,
		 "bpf-next"},
		{"[PATCH iproute2-next] ip: z", "ip: z", 1, 0, 0, 1, 0, 0, 0,
		 "iproute2-next"},
		{"[RFC PATCH 1/2] idea", "idea", 1, 1, 2, 1, 1, 0, 0, ""},
		{"[RFC] idea", "idea", 1, 0, 0, 1, 1, 0, 0, ""},
		{"[RFCv2 0/4] idea", "idea", 2, 0, 4, 1, 1, 0, 0, ""},
		{"[PATCH RESEND v2] again", "again", 2, 0, 0, 1, 0, 1, 0, ""},
		{"[RESEND PATCH] again", "again", 1, 0, 0, 1, 0, 1, 0, ""},
		{"[PATCH] [bpf] two groups", "two groups", 1, 0, 0, 1, 0, 0, 0,
		 "bpf"},
		{"[GIT PULL] net fixes", "net fixes", 1, 0, 0, 0, 0, 0, 0,
		 "GIT PULL"},
		{"[ANNOUNCE] v1.0", "v1.0", 1, 0, 0, 0, 0, 0, 0, "ANNOUNCE"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(w); i++)
		check(&w[i]);
}

static void test_replies(void **state)
{
	static const struct want w[] = {
		{"Re: [PATCH 2/3] foo", "foo", 1, 2, 3, 1, 0, 0, 1, ""},
		{"RE: Re: AW: [PATCH] foo", "foo", 1, 0, 0, 1, 0, 0, 1, ""},
		{"Aw: [PATCH v2] foo", "foo", 2, 0, 0, 1, 0, 0, 1, ""},
		{"Fwd: [PATCH] foo", "foo", 1, 0, 0, 1, 0, 0, 1, ""},
		{"Fw: bar", "bar", 1, 0, 0, 0, 0, 0, 1, ""},
		{"Re[2]: baz", "baz", 1, 0, 0, 0, 0, 0, 1, ""},
		{"[list] Re: [PATCH] x", "x", 1, 0, 0, 1, 0, 0, 1, "list"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(w); i++)
		check(&w[i]);
}

static void test_not_patches(void **state)
{
	static const struct want w[] = {
		{"Hello world", "Hello world", 1, 0, 0, 0, 0, 0, 0, ""},
		/* "Release: v2" is not a reply and keeps its colon */
		{"Release: v2 is out", "Release: v2 is out", 1, 0, 0, 0, 0, 0,
		 0, ""},
		/* a bracket that is not closed is part of the title */
		{"[PATCH foo", "[PATCH foo", 1, 0, 0, 0, 0, 0, 0, ""},
		{"", "", 1, 0, 0, 0, 0, 0, 0, ""},
		{NULL, "", 1, 0, 0, 0, 0, 0, 0, ""},
		{"  folded\n\t subject  here ", "folded subject here", 1, 0, 0,
		 0, 0, 0, 0, ""},
		/* bad numbers: kept as tags, never as index/total */
		{"[PATCH 7/3] x", "x", 1, 0, 0, 1, 0, 0, 0, "7/3"},
		/* an extra patch sent after a 2-patch series */
		{"[PATCH 3/2] x", "x", 1, 3, 2, 1, 0, 0, 0, ""},
		/* Mercurial: patchbomb's "n of m" */
		{"[PATCH 1 of 2] x", "x", 1, 1, 2, 1, 0, 0, 0, ""},
		{"[PATCH 0 of 12 V2] x", "x", 2, 0, 12, 1, 0, 0, 0, ""},
		{"[PATCH 2 of 3 stable] x", "x", 1, 2, 3, 1, 0, 0, 0, "stable"},
		{"[PATCH 1 of] x", "x", 1, 0, 0, 1, 0, 0, 0, "1|of"},
		{"[PATCH 1 of 2x] x", "x", 1, 0, 0, 1, 0, 0, 0, "1|of|2x"},
		{"[PATCH 1/9999999] x", "x", 1, 0, 0, 1, 0, 0, 0, "1/9999999"},
		{"[PATCH v0] x", "x", 1, 0, 0, 1, 0, 0, 0, "v0"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(w); i++)
		check(&w[i]);
}

static void test_hostile(void **state)
{
	char big[8192];
	struct mp_subject s;

	/* many groups: tags are capped, nothing crashes */
	big[0] = '\0';
	for (int i = 0; i < 200; i++)
		strcat(big, "[x]");
	strcat(big, " t");
	mp_subject_parse(&s, big);
	assert_string_equal(s.title, "t");
	assert_true(s.ntags <= 32);
	mp_subject_release(&s);
	/* invalid UTF-8 in a title comes back valid */
	mp_subject_parse(&s, "[PATCH] caf\xe9 \xff");
	assert_string_equal(s.title, "caf\xc3\xa9 \xc3\xbf");
	mp_subject_release(&s);
	mp_subject_release(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_patch),
		cmocka_unit_test(test_tags_and_groups),
		cmocka_unit_test(test_replies),
		cmocka_unit_test(test_not_patches),
		cmocka_unit_test(test_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
