// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for mailparse/series.c: series assembly from messages built
 * here directly (every string malloc'd, as mp_patch_free() expects).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mailparse/mailparse.h"

/* The spec tables below leave trailing fields out on purpose. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define T0 1700000000

struct spec {
	const char *id;
	const char *irt;  /* In-Reply-To */
	const char *refs; /* References, space separated, oldest first */
	const char *from;
	int version, index, total;
	enum mp_kind kind;
	const char *title;
	int64_t ts;
	const char *body; /* commit message, or the body of a reply */
	bool reply;
};

static struct mp_patch *mk(const struct spec *s)
{
	struct mp_patch *p = xcalloc(1, sizeof(*p));
	char buf[256];

	p->kind = s->kind;
	p->message_id = xstrdup_or_null(s->id);
	p->in_reply_to = xstrdup_or_null(s->irt);
	if (s->refs) {
		char *copy = xstrdup_or_null(s->refs), *tok, *save = NULL;

		for (tok = strtok_r(copy, " ", &save); tok;
		     tok = strtok_r(NULL, " ", &save)) {
			p->references =
				xrealloc(p->references,
					 (p->nreferences + 1) * sizeof(char *));
			p->references[p->nreferences++] = xstrdup_or_null(tok);
		}
		free(copy);
	}
	p->from =
		xstrdup_or_null(s->from ? s->from : "A U Thor <a@example.org>");
	p->timestamp = s->ts ? s->ts : T0;
	p->subject.version = s->version ? s->version : 1;
	p->subject.index = s->index;
	p->subject.total = s->total;
	p->subject.has_patch_tag =
		s->kind == MP_KIND_PATCH || s->kind == MP_KIND_COVER;
	p->subject.reply = s->reply;
	p->subject.title = xstrdup_or_null(s->title ? s->title : "a title");
	snprintf(buf, sizeof(buf), "%s[PATCH v%d %d/%d] %s",
		 s->reply ? "Re: " : "", p->subject.version, s->index, s->total,
		 p->subject.title);
	p->subject_raw = xstrdup_or_null(buf);
	p->commit_message = xstrdup_or_null(s->body);
	if (s->kind == MP_KIND_PATCH) {
		p->diff = xstrdup_or_null("diff --git a/f b/f\n");
		p->diff_len = strlen(p->diff);
		p->files = xcalloc(1, sizeof(char *));
		p->files[0] = xstrdup_or_null("f");
		p->nfiles = 1;
		p->trailers = xcalloc(1, sizeof(*p->trailers));
		p->trailers[0].key = xstrdup_or_null("Signed-off-by");
		p->trailers[0].value =
			xstrdup_or_null("A U Thor <a@example.org>");
		p->ntrailers = 1;
	}
	return p;
}

static struct mp_set *collect(const struct spec *specs, size_t n,
			      const size_t *order)
{
	struct mp_collector *c = mp_collector_new();
	size_t i;

	for (i = 0; i < n; i++)
		mp_collector_add(c, mk(&specs[order ? order[i] : i]));
	return mp_collector_finish(c);
}

#define P MP_KIND_PATCH
#define C MP_KIND_COVER

static void assert_patch_ids(const struct mp_series *s, const char **ids)
{
	size_t i;

	for (i = 0; i < s->npatches; i++) {
		if (!ids[i])
			assert_null(s->patches[i]);
		else
			assert_string_equal(s->patches[i]->message_id, ids[i]);
	}
}

static void test_cover_and_shallow_thread_out_of_order(void **state)
{
	const struct spec specs[] = {
		{"c", NULL, NULL, NULL, 1, 0, 3, C, "cover"},
		{"p1", "c", "c", NULL, 1, 1, 3, P, "one"},
		{"p2", "c", "c", NULL, 1, 2, 3, P, "two"},
		{"p3", "c", "c", NULL, 1, 3, 3, P, "three"},
	};
	const size_t order[] = {3, 1, 0, 2};
	const char *ids[] = {"p1", "p2", "p3"};
	struct mp_set *set = collect(specs, 4, order);

	assert_int_equal(set->nseries, 1);
	assert_int_equal(set->series[0]->total, 3);
	assert_int_equal(set->series[0]->npatches, 3);
	assert_true(set->series[0]->complete);
	assert_int_equal(set->series[0]->nmissing, 0);
	assert_non_null(set->series[0]->cover);
	assert_string_equal(set->series[0]->cover->message_id, "c");
	assert_patch_ids(set->series[0], ids);
	assert_int_equal(set->nothers, 0);
	assert_int_equal(set->nerrors, 0);
	mp_set_free(set);
}

static void test_deep_thread_with_missing_patch(void **state)
{
	/* each patch replies to the previous; patch 2 never arrived */
	const struct spec specs[] = {
		{"p1", NULL, NULL, NULL, 1, 1, 4, P},
		{"p3", "p2", "p1 p2", NULL, 1, 3, 4, P},
		{"p4", "p3", "p1 p2 p3", NULL, 1, 4, 4, P},
	};
	const char *ids[] = {"p1", NULL, "p3", "p4"};
	struct mp_set *set = collect(specs, 3, NULL);

	assert_int_equal(set->nseries, 1);
	assert_null(set->series[0]->cover);
	assert_false(set->series[0]->complete);
	assert_int_equal(set->series[0]->nmissing, 1);
	assert_int_equal(set->series[0]->missing[0], 2);
	assert_patch_ids(set->series[0], ids);
	mp_set_free(set);
}

static void test_missing_cover_groups_by_thread_root(void **state)
{
	/* the cover is not in the mbox; the patches still form one series */
	const struct spec specs[] = {
		{"p2", "gone", "gone", NULL, 1, 2, 2, P},
		{"p1", "gone", "gone", NULL, 1, 1, 2, P},
		/* another series answering a different missing root */
		{"q1", "other", "other", NULL, 1, 1, 2, P},
	};
	struct mp_set *set = collect(specs, 3, NULL);

	assert_int_equal(set->nseries, 2);
	assert_true(set->series[0]->complete);
	assert_false(set->series[1]->complete);
	assert_int_equal(set->series[1]->missing[0], 2);
	mp_set_free(set);
}

static void test_duplicates(void **state)
{
	const struct spec specs[] = {
		{"c", NULL, NULL, NULL, 1, 0, 2, C},
		{"p1", "c", "c", NULL, 1, 1, 2, P, "first"},
		{"p1", "c", "c", NULL, 1, 1, 2, P, "first again"},
		{"p1b", "c", "c", NULL, 1, 1, 2, P, "same index"},
		{"p2", "c", "c", NULL, 1, 2, 2, P},
	};
	struct mp_set *set = collect(specs, 5, NULL);

	assert_int_equal(set->nseries, 1);
	assert_true(set->series[0]->complete);
	assert_string_equal(set->series[0]->patches[0]->message_id, "p1");
	assert_string_equal(set->series[0]->patches[0]->subject.title, "first");
	assert_int_equal(set->nerrors, 2);
	assert_non_null(strstr(set->errors[0].message, "duplicate"));
	assert_non_null(strstr(set->errors[1].message, "sent twice"));
	/* the second copy of index 1 is kept among the others */
	assert_int_equal(set->nothers, 1);
	assert_string_equal(set->others[0]->message_id, "p1b");
	mp_set_free(set);
}

static void test_resend_in_its_thread(void **state)
{
	const struct spec specs[] = {
		{"c", NULL, NULL, NULL, 1, 0, 2, C},
		{"p1", "c", "c", NULL, 1, 1, 2, P, "one"},
		{"p2", "c", "c", NULL, 1, 2, 2, P, "two"},
		/* the same series again, its cover answering the first */
		{"c'", "c", "c", NULL, 1, 0, 2, C, NULL, T0 + 60},
		{"p1'", "c'", "c c'", NULL, 1, 1, 2, P, "one", T0 + 60},
		{"p2'", "c'", "c c'", NULL, 1, 2, 2, P, "two", T0 + 60},
	};
	struct mp_set *set = collect(specs, 6, NULL);

	assert_int_equal(set->nseries, 2);
	assert_int_equal(set->nerrors, 0);
	assert_string_equal(set->series[0]->cover->message_id, "c");
	assert_string_equal(set->series[1]->cover->message_id, "c'");
	assert_true(set->series[0]->complete && set->series[1]->complete);
	assert_int_equal(set->series[0]->repost_of, 0);
	assert_int_equal(set->series[1]->repost_of, 1);
	assert_true(set->series[1]->resend);
	/* reviewed once: the first posting */
	assert_false(set->series[0]->superseded);
	assert_true(set->series[1]->superseded);
	mp_set_free(set);
}

static void test_repost_with_changes(void **state)
{
	const struct spec specs[] = {
		{"p1", NULL, NULL, NULL, 1, 1, 2, P, "one"},
		{"p2", "p1", "p1", NULL, 1, 2, 2, P, "two"},
		/* each patch answers its twin; patch 2 has a new title */
		{"p1'", "p1", "p1", NULL, 1, 1, 2, P, "one", T0 + 60},
		{"p2'", "p2", "p1 p2", NULL, 1, 2, 2, P, "two, fixed", T0 + 60},
	};
	struct mp_set *set = collect(specs, 4, NULL);

	assert_int_equal(set->nseries, 2);
	assert_int_equal(set->nerrors, 0);
	assert_int_equal(set->series[1]->repost_of, 1);
	assert_false(set->series[1]->resend);
	/* the changed posting replaces the first, as a v2 would */
	assert_true(set->series[0]->superseded);
	assert_false(set->series[1]->superseded);
	mp_set_free(set);
}

static void test_versioned_cover_unversioned_patches(void **state)
{
	const struct spec specs[] = {
		/* threaded: the patches answer the cover */
		{"c", NULL, NULL, NULL, 3, 0, 2, C},
		{"p1", "c", "c", NULL, 1, 1, 2, P},
		{"p2", "c", "c", NULL, 1, 2, 2, P},
		/* no threading at all, another sender, a day later */
		{"d", NULL, NULL, "B <b@example.org>", 2, 0, 2, C, NULL,
		 T0 + 86400},
		{"q1", NULL, NULL, "B <b@example.org>", 1, 1, 2, P, NULL,
		 T0 + 86400},
		{"q2", NULL, NULL, "B <b@example.org>", 1, 2, 2, P, NULL,
		 T0 + 86460},
	};
	struct mp_set *set = collect(specs, 6, NULL);

	assert_int_equal(set->nseries, 2);
	assert_int_equal(set->nothers, 0);
	assert_int_equal(set->series[0]->version, 3);
	assert_string_equal(set->series[0]->cover->message_id, "c");
	assert_true(set->series[0]->complete);
	assert_int_equal(set->series[1]->version, 2);
	assert_string_equal(set->series[1]->cover->message_id, "d");
	assert_true(set->series[1]->complete);
	mp_set_free(set);
}

static void test_v2_in_reply_to_v1(void **state)
{
	const struct spec specs[] = {
		{"c1", NULL, NULL, NULL, 1, 0, 2, C, "feature"},
		{"a1", "c1", "c1", NULL, 1, 1, 2, P},
		{"a2", "c1", "c1", NULL, 1, 2, 2, P},
		{"c2", "c1", "c1", NULL, 2, 0, 2, C, "feature"},
		{"b1", "c2", "c1 c2", NULL, 2, 1, 2, P},
		{"b2", "c2", "c1 c2", NULL, 2, 2, 2, P},
	};
	struct mp_set *set = collect(specs, 6, NULL);

	assert_int_equal(set->nseries, 2);
	assert_int_equal(set->series[0]->version, 1);
	assert_int_equal(set->series[1]->version, 2);
	assert_true(set->series[0]->superseded);
	assert_false(set->series[1]->superseded);
	assert_string_equal(set->series[1]->cover->message_id, "c2");
	assert_true(set->series[1]->complete);
	assert_string_equal(set->series[1]->patches[0]->message_id, "b1");
	mp_set_free(set);
}

static void test_coverless_v2_answering_v1_cover(void **state)
{
	const struct spec specs[] = {
		{"c1", NULL, NULL, NULL, 1, 0, 2, C},
		{"a1", "c1", "c1", NULL, 1, 1, 2, P},
		{"a2", "c1", "c1", NULL, 1, 2, 2, P},
		/* v2 has no cover: both patches answer v1's */
		{"b1", "c1", "c1", NULL, 2, 1, 2, P},
		{"b2", "c1", "c1", NULL, 2, 2, 2, P},
	};
	struct mp_set *set = collect(specs, 5, NULL);

	assert_int_equal(set->nseries, 2);
	assert_int_equal(set->series[1]->version, 2);
	assert_true(set->series[1]->complete);
	assert_null(set->series[1]->cover);
	assert_true(set->series[0]->superseded);
	mp_set_free(set);
}

static void test_v2_patches_answering_their_v1_twins(void **state)
{
	const struct spec specs[] = {
		{"c1", NULL, NULL, NULL, 1, 0, 2, C},
		{"a1", "c1", "c1", NULL, 1, 1, 2, P},
		{"a2", "c1", "c1", NULL, 1, 2, 2, P},
		{"b1", "a1", "c1 a1", NULL, 2, 1, 2, P},
		{"b2", "a2", "c1 a2", NULL, 2, 2, 2, P},
		/* a partial reroll: only patch 2 of v3 */
		{"d2", "b2", "c1 a2 b2", NULL, 3, 2, 2, P},
	};
	struct mp_set *set = collect(specs, 6, NULL);

	assert_int_equal(set->nseries, 3);
	assert_true(set->series[1]->complete);
	assert_string_equal(set->series[1]->patches[0]->message_id, "b1");
	assert_string_equal(set->series[1]->patches[1]->message_id, "b2");
	assert_false(set->series[2]->complete);
	assert_int_equal(set->series[2]->missing[0], 1);
	assert_true(set->series[0]->superseded);
	assert_true(set->series[1]->superseded);
	assert_false(set->series[2]->superseded);
	mp_set_free(set);
}

static void test_cover_that_miscounts(void **state)
{
	const struct spec specs[] = {
		{"c", NULL, NULL, NULL, 1, 0, 4, C},
		{"p1", "c", "c", NULL, 1, 1, 3, P},
		{"p2", "c", "c", NULL, 1, 2, 3, P},
		{"p3", "c", "c", NULL, 1, 3, 3, P},
	};
	struct mp_set *set = collect(specs, 4, NULL);

	assert_int_equal(set->nseries, 1);
	assert_int_equal(set->series[0]->total, 3);
	assert_true(set->series[0]->complete);
	assert_non_null(set->series[0]->cover);
	mp_set_free(set);
}

static void test_v2_unthreaded_same_title_supersedes(void **state)
{
	const struct spec specs[] = {
		{"x1", NULL, NULL, NULL, 1, 0, 0, P, "fix it", T0},
		{"x2", NULL, NULL, NULL, 3, 0, 0, P, "fix it", T0 + 86400},
		{"y", NULL, NULL, "B <b@example.org>", 2, 0, 0, P, "fix it"},
	};
	struct mp_set *set = collect(specs, 3, NULL);

	assert_int_equal(set->nseries, 3);
	assert_true(set->series[0]->superseded);
	assert_string_equal(set->series[0]->patches[0]->message_id, "x1");
	/* another sender's v2 of the same title is another patch */
	assert_false(set->series[1]->superseded);
	assert_false(set->series[2]->superseded);
	mp_set_free(set);
}

static void test_followup_trailers(void **state)
{
	const struct spec specs[] = {
		{"c", NULL, NULL, NULL, 1, 0, 2, C},
		{"p1", "c", "c", NULL, 1, 1, 2, P},
		{"p2", "c", "c", NULL, 1, 2, 2, P},
		{"r1", "p2", "c p2", "R <r@example.org>", 1, 2, 2,
		 MP_KIND_REPLY, NULL, 0,
		 "> Reviewed-by: Quoted <q@example.org>\n"
		 "> Signed-off-by: A U Thor <a@example.org>\n\n"
		 "Looks good.\n\n"
		 "Reviewed-by: R <r@example.org>\n"
		 "Signed-off-by: A U Thor <a@example.org>\n"
		 "Tested-by: T\n",
		 true},
		/* a reply to the reply still counts for patch 2 */
		{"r2", "r1", "c p2 r1", "S <s@example.org>", 1, 2, 2,
		 MP_KIND_REPLY, NULL, 0, "Acked-by: S <s@example.org>\n", true},
		{"r3", "c", "c", "S <s@example.org>", 1, 0, 2, MP_KIND_REPLY,
		 NULL, 0,
		 "For the series:\nAcked-by: S <s@example.org>\n"
		 "-- \nSigned-off-by: sig <sig@example.org>\n",
		 true},
	};
	struct mp_set *set = collect(specs, 6, NULL);
	struct mp_patch *p2;

	assert_int_equal(set->nseries, 1);
	assert_int_equal(set->nothers, 3);
	assert_int_equal(set->series[0]->patches[0]->nfollowups, 0);
	p2 = set->series[0]->patches[1];
	/* quoted lines, trailers already there and ones with no address
	 * are left out */
	assert_int_equal(p2->nfollowups, 2);
	assert_string_equal(p2->followups[0].key, "Reviewed-by");
	assert_string_equal(p2->followups[0].value, "R <r@example.org>");
	assert_string_equal(p2->followups[1].key, "Acked-by");
	assert_int_equal(set->series[0]->nfollowups, 1);
	assert_string_equal(set->series[0]->followups[0].value,
			    "S <s@example.org>");
	mp_set_free(set);
}

static void test_unthreaded_grouping(void **state)
{
	const struct spec specs[] = {
		{"a2", NULL, NULL, NULL, 1, 2, 2, P, NULL, T0 + 5},
		{"b1", NULL, NULL, "B <b@example.org>", 1, 1, 2, P},
		{"a1", NULL, NULL, NULL, 1, 1, 2, P, NULL, T0},
		/* the same sender two days later: another series */
		{"l1", NULL, NULL, NULL, 1, 1, 2, P, NULL, T0 + 172800},
	};
	struct mp_set *set = collect(specs, 4, NULL);
	size_t i, complete = 0;

	assert_int_equal(set->nseries, 3);
	for (i = 0; i < set->nseries; i++)
		if (set->series[i]->complete) {
			complete++;
			assert_string_equal(
				set->series[i]->patches[0]->message_id, "a1");
			assert_string_equal(
				set->series[i]->patches[1]->message_id, "a2");
		}
	assert_int_equal(complete, 1);
	mp_set_free(set);
}

static void test_single_patch_lone_cover_pull(void **state)
{
	const struct spec specs[] = {
		{"s", NULL, NULL, NULL, 1, 0, 0, P, "single"},
		{"lc", NULL, NULL, NULL, 1, 0, 3, C, "lonely cover"},
		{"pr", NULL, NULL, NULL, 1, 0, 0, MP_KIND_PULL, "pull"},
	};
	struct mp_set *set = collect(specs, 3, NULL);

	assert_int_equal(set->nseries, 1);
	assert_int_equal(set->series[0]->total, 1);
	assert_int_equal(set->series[0]->npatches, 1);
	assert_true(set->series[0]->complete);
	assert_null(set->series[0]->cover);
	assert_string_equal(set->series[0]->patches[0]->message_id, "s");
	assert_int_equal(set->nothers, 2);
	assert_string_equal(set->others[0]->message_id, "lc");
	assert_string_equal(set->others[1]->message_id, "pr");
	mp_set_free(set);
}

static void test_naked_cover(void **state)
{
	const struct spec specs[] = {
		/* same sender, unprefixed root: a cover letter */
		{"nc", NULL, NULL, NULL, 1, 0, 0, MP_KIND_OTHER, "thing"},
		{"np", "nc", "nc", NULL, 1, 0, 0, P, "do the thing"},
		/* a bug report by someone else is not a cover */
		{"bug", NULL, NULL, "R <r@example.org>", 1, 0, 0, MP_KIND_OTHER,
		 "it breaks"},
		{"fix", "bug", "bug", NULL, 1, 0, 0, P, "fix it"},
	};
	struct mp_set *set = collect(specs, 4, NULL);

	assert_int_equal(set->nseries, 2);
	assert_non_null(set->series[0]->cover);
	assert_string_equal(set->series[0]->cover->message_id, "nc");
	assert_null(set->series[1]->cover);
	assert_int_equal(set->nothers, 1);
	assert_string_equal(set->others[0]->message_id, "bug");
	mp_set_free(set);
}

static void test_reply_with_diff_and_bad_totals(void **state)
{
	const struct spec specs[] = {
		{"p", NULL, NULL, NULL, 1, 1, 1, P},
		/* a reviewer's fixup diff in a reply is no series patch */
		{"fix", "p", "p", "R <r@example.org>", 1, 1, 1, P, NULL, 0,
		 NULL, true},
		{"huge", NULL, NULL, NULL, 1, 1, 999999999, P},
		{"beyond", "p", "p", NULL, 1, 5, 1, P},
	};
	struct mp_set *set = collect(specs, 4, NULL);

	assert_int_equal(set->nseries, 1);
	assert_int_equal(set->series[0]->total, 1);
	assert_true(set->series[0]->complete);
	assert_int_equal(set->nothers, 3);
	assert_int_equal(set->nerrors, 2);
	assert_non_null(strstr(set->errors[0].message, "not believed"));
	assert_non_null(strstr(set->errors[1].message, "beyond"));
	mp_set_free(set);
}

static void test_drop_bodies_keeps_metadata(void **state)
{
	const struct spec specs[] = {
		{"p", NULL, NULL, NULL, 1, 0, 0, P, "x", 0, "body\n"},
		{"r", "p", "p", "R <r@example.org>", 1, 0, 0, MP_KIND_REPLY,
		 NULL, 0, "Reviewed-by: R <r@example.org>\n", true},
	};
	struct mp_collector *c = mp_collector_new();
	struct mp_set *set;
	struct mp_patch *p;

	mp_collector_set_keep_bodies(c, false);
	mp_collector_add(c, mk(&specs[0]));
	mp_collector_add(c, mk(&specs[1]));
	mp_collector_error(c, "file message 3", "could not be read");
	set = mp_collector_finish(c);
	assert_int_equal(set->nseries, 1);
	p = set->series[0]->patches[0];
	assert_null(p->diff);
	/* the commit message of a patch stays: parse --json prints it */
	assert_non_null(p->commit_message);
	assert_null(set->others[0]->commit_message); /* a reply's goes */
	assert_int_equal(p->nfiles, 1);
	assert_int_equal(p->ntrailers, 1);
	assert_int_equal(p->nfollowups, 1);
	assert_int_equal(set->nerrors, 1);
	assert_string_equal(set->errors[0].where, "file message 3");
	mp_set_free(set);
}

static void test_cover_base_commit_reaches_patches(void **state)
{
	const struct spec specs[] = {
		{"c", NULL, NULL, NULL, 1, 0, 2, C},
		{"p1", "c", "c", NULL, 1, 1, 2, P},
		{"p2", "c", "c", NULL, 1, 2, 2, P},
	};
	struct mp_collector *c = mp_collector_new();
	struct mp_patch *p;
	struct mp_set *set;
	size_t i;

	for (i = 0; i < 3; i++) {
		p = mk(&specs[i]);
		if (i == 0)
			p->base_commit = xstrdup_or_null("abc123");
		if (i == 2)
			p->base_commit = xstrdup_or_null("own");
		mp_collector_add(c, p);
	}
	set = mp_collector_finish(c);
	assert_int_equal(set->nseries, 1);
	assert_string_equal(set->series[0]->patches[0]->base_commit, "abc123");
	assert_string_equal(set->series[0]->patches[1]->base_commit, "own");
	mp_set_free(set);
}

static void test_many_errors_are_capped(void **state)
{
	struct mp_collector *c = mp_collector_new();
	struct mp_set *set;
	int i;

	for (i = 0; i < 5000; i++)
		mp_collector_error(c, "x", "bad");
	set = mp_collector_finish(c);
	assert_true(set->nerrors <= 1000);
	assert_non_null(
		strstr(set->errors[set->nerrors - 1].message, "more problems"));
	mp_set_free(set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cover_and_shallow_thread_out_of_order),
		cmocka_unit_test(test_deep_thread_with_missing_patch),
		cmocka_unit_test(test_missing_cover_groups_by_thread_root),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_resend_in_its_thread),
		cmocka_unit_test(test_versioned_cover_unversioned_patches),
		cmocka_unit_test(test_repost_with_changes),
		cmocka_unit_test(test_v2_in_reply_to_v1),
		cmocka_unit_test(test_coverless_v2_answering_v1_cover),
		cmocka_unit_test(test_v2_patches_answering_their_v1_twins),
		cmocka_unit_test(test_cover_that_miscounts),
		cmocka_unit_test(test_v2_unthreaded_same_title_supersedes),
		cmocka_unit_test(test_followup_trailers),
		cmocka_unit_test(test_unthreaded_grouping),
		cmocka_unit_test(test_single_patch_lone_cover_pull),
		cmocka_unit_test(test_naked_cover),
		cmocka_unit_test(test_reply_with_diff_and_bad_totals),
		cmocka_unit_test(test_drop_bodies_keeps_metadata),
		cmocka_unit_test(test_cover_base_commit_reaches_patches),
		cmocka_unit_test(test_many_errors_are_capped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
