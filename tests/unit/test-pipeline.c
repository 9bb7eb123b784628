// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The vote: findings from distinct voters that point at the same place
 * and problem are one finding; only those at quorum are kept; findings
 * about lines the patch does not have are dropped and counted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "review/review.h"

static char diff_text[] =
	"diff --git a/lib/list.c b/lib/list.c\n"
	"index 1111111..2222222 100644\n"
	"--- a/lib/list.c\n"
	"+++ b/lib/list.c\n"
	"@@ -10,6 +10,9 @@ int list_add(struct list *l, int v)\n"
	" \tstruct node *n;\n"
	" \n"
	" \tn = l->free;\n"
	"+\tn->next = l->head;\n"
	"+\tl->head = n;\n"
	"+\tn->value = v;\n"
	" \tl->len++;\n"
	" \treturn 0;\n"
	" }\n";

/* What each scripted voter says: file, first line, category, last line. */
struct script {
	const char *file;
	int line;
	const char *category;
	enum rv_severity sev;
	int end; /* 0: line */
};

static int scripted_review(const struct rv_voter *v,
			   const struct rv_context *ctx,
			   struct rv_findings *out, struct errmsg *err)
{
	const struct script *s = v->priv;
	const char *voters[1] = {v->name};
	struct rv_finding f = {0};

	if (!s)
		return errmsg_set(err, RV_ERR_INTERNAL, "%s abstains", v->name);
	for (; s->file; s++) {
		f.patch = ctx->patch_index;
		f.file = (char *)s->file;
		f.line_start = f.line_end = s->line;
		if (s->end)
			f.line_end = s->end;
		f.category = (char *)s->category;
		f.severity = s->sev;
		f.title = (char *)"title";
		f.voters = (char **)voters;
		f.nvoters = 1;
		rv_findings_add(out, &f);
	}
	return 0;
}

static const struct script agree_a[] = {
	{"lib/list.c", 13, "null-deref", RV_SEV_HIGH, 0},
	{"lib/list.c", 15, "style", RV_SEV_LOW, 0}, /* only a says this */
	{NULL, 0, NULL, 0, 0},
};
static const struct script agree_b[] = {
	{"lib/list.c", 14, "null-deref", RV_SEV_MEDIUM, 0},
	{"lib/nothere.c", 13, "null-deref", RV_SEV_HIGH, 0}, /* invented */
	{"lib/list.c", 400, "null-deref", RV_SEV_HIGH, 0},   /* no such hunk */
	{NULL, 0, NULL, 0, 0},
};

static void run_review(struct rv_review **r, const struct rv_voter *const *v,
		       size_t nv, int quorum)
{
	static struct mp_patch p;
	static struct mp_patch *patches[1];
	static struct mp_series s;
	struct rv_review_opts opts = RV_REVIEW_OPTS_INIT;
	struct errmsg err;

	memset(&p, 0, sizeof(p));
	p.kind = MP_KIND_PATCH;
	p.diff = diff_text;
	p.diff_len = strlen(diff_text);
	patches[0] = &p;
	memset(&s, 0, sizeof(s));
	s.patches = patches;
	s.npatches = 1;
	s.total = 1;
	s.version = 1;
	s.complete = true;
	opts.voters = v;
	opts.nvoters = nv;
	opts.quorum = quorum;
	assert_int_equal(rv_review_series(r, NULL, &s, &opts, &err), 0);
}

static void test_two_voters_agree(void **state)
{
	struct rv_voter a = {"a", 1.0, scripted_review, (void *)agree_a};
	struct rv_voter b = {"b", 1.0, scripted_review, (void *)agree_b};
	const struct rv_voter *v[] = {&a, &b};
	struct rv_review *r;

	run_review(&r, v, 2, 0);
	assert_int_equal(r->quorum, 2); /* majority of 2 */
	assert_int_equal(r->findings.n, 1);
	assert_string_equal(r->findings.items[0].file, "lib/list.c");
	assert_int_equal(r->findings.items[0].nvoters, 2);
	/* Placed where one voter put it, never wider than that. */
	assert_int_equal(r->findings.items[0].line_start, 13);
	assert_int_equal(r->findings.items[0].line_end, 13);
	/* The cluster keeps the worst severity either voter gave. */
	assert_int_equal(r->findings.items[0].severity, RV_SEV_HIGH);
	/* a's lone style remark is kept below quorum, not reported. */
	assert_int_equal(r->minority.n, 1);
	assert_string_equal(r->minority.items[0].category, "style");
	/* Invented file and line are dropped and counted. */
	assert_int_equal(r->dropped, 2);
	rv_review_free(r);
}

static void test_explicit_quorum_one(void **state)
{
	struct rv_voter a = {"a", 1.0, scripted_review, (void *)agree_a};
	struct rv_voter b = {"b", 1.0, scripted_review, (void *)agree_b};
	const struct rv_voter *v[] = {&a, &b};
	struct rv_review *r;

	run_review(&r, v, 2, 1);
	assert_int_equal(r->findings.n, 2);
	/* Ranked by votes first: the agreed finding leads. */
	assert_int_equal(r->findings.items[0].nvoters, 2);
	assert_int_equal(r->minority.n, 0);
	rv_review_free(r);
}

static void test_abstaining_voter(void **state)
{
	struct rv_voter a = {"a", 1.0, scripted_review, (void *)agree_a};
	struct rv_voter quiet = {"quiet", 1.0, scripted_review, NULL};
	const struct rv_voter *v[] = {&a, &quiet};
	struct rv_review *r;

	run_review(&r, v, 2, 2);
	/* One voter alone never reaches a quorum of two. */
	assert_int_equal(r->findings.n, 0);
	assert_int_equal(r->minority.n, 2);
	rv_review_free(r);
}

/* b's range covers the whole hunk and more: it does not move a's place. */
static const struct script wide_b[] = {
	{"lib/list.c", 10, "null-deref", RV_SEV_HIGH, 18},
	{NULL, 0, NULL, 0, 0},
};

static void test_wide_range_does_not_widen(void **state)
{
	struct rv_voter a = {"a", 1.0, scripted_review, (void *)agree_a};
	struct rv_voter b = {"b", 1.0, scripted_review, (void *)wide_b};
	const struct rv_voter *v[] = {&b, &a};
	struct rv_review *r;

	run_review(&r, v, 2, 2);
	assert_int_equal(r->findings.n, 1);
	assert_int_equal(r->findings.items[0].nvoters, 2);
	assert_int_equal(r->findings.items[0].line_start, 13);
	assert_int_equal(r->findings.items[0].line_end, 13);
	rv_review_free(r);
}

static void test_report_text(void **state)
{
	struct rv_voter a = {"a", 1.0, scripted_review, (void *)agree_a};
	struct rv_voter b = {"b", 1.0, scripted_review, (void *)agree_b};
	const struct rv_voter *v[] = {&a, &b};
	struct rv_review *r;
	struct sb out = SB_INIT;

	run_review(&r, v, 2, 0);
	assert_int_equal(rv_report_text(r, &out), 0);
	assert_non_null(strstr(sb_str(&out), "1 finding at quorum"));
	assert_non_null(strstr(sb_str(&out), "lib/list.c:13, patch 1/1"));
	assert_non_null(strstr(sb_str(&out), "votes: 2/2 (a, b)"));
	assert_non_null(strstr(sb_str(&out), "1 more below quorum"));
	assert_non_null(strstr(sb_str(&out), "2 findings dropped"));
	assert_non_null(strstr(sb_str(&out), "no repository"));
	sb_release(&out);
	rv_review_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_voters_agree),
		cmocka_unit_test(test_explicit_quorum_one),
		cmocka_unit_test(test_abstaining_voter),
		cmocka_unit_test(test_wide_range_does_not_widen),
		cmocka_unit_test(test_report_text),
	};

	return cmocka_run_group_tests_name("pipeline", tests, NULL, NULL);
}
