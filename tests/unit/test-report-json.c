// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The machine-readable reports (review/report-json.c, report-sarif.c):
 * what a review becomes in the JSON document and the SARIF log, that
 * mail text which is not UTF-8 still makes valid JSON, and that SARIF
 * lists each rule once, before the results that point at it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
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

/* Three findings: two of one category, one with a title not in UTF-8. */
static int three_findings(const struct rv_voter *v,
			  const struct rv_context *ctx, struct rv_findings *out,
			  struct errmsg *err)
{
	static const struct {
		int line;
		const char *category, *title;
		enum rv_severity sev;
	} says[] = {
		{13, "null-deref", "n may be NULL", RV_SEV_HIGH},
		{17, "null-deref", "bad \xff byte", RV_SEV_MEDIUM},
		{15, "style", "style", RV_SEV_LOW},
	};
	const char *voters[1] = {v->name};
	struct rv_finding f = {0};
	size_t i;

	(void)err;
	for (i = 0; i < sizeof(says) / sizeof(says[0]); i++) {
		f.patch = ctx->patch_index;
		f.file = (char *)"lib/list.c";
		f.line_start = f.line_end = says[i].line;
		f.category = (char *)says[i].category;
		f.title = (char *)says[i].title;
		f.severity = says[i].sev;
		f.voters = (char **)voters;
		f.nvoters = 1;
		rv_findings_add(out, &f);
	}
	return 0;
}

static struct rv_review *review(void)
{
	static struct mp_patch p;
	static struct mp_patch *patches[1];
	static struct mp_series s;
	static const struct rv_voter a = {"a", 1.0, three_findings, NULL};
	static const struct rv_voter *const v[] = {&a};
	struct rv_review_opts opts = RV_REVIEW_OPTS_INIT;
	struct rv_review *r = NULL;
	struct errmsg err;

	memset(&p, 0, sizeof(p));
	p.kind = MP_KIND_PATCH;
	p.diff = diff_text;
	p.diff_len = strlen(diff_text);
	p.subject.title = (char *)"list: add without a \xfe check";
	p.subject.index = 0; /* unnumbered: it is patch 1 */
	patches[0] = &p;
	memset(&s, 0, sizeof(s));
	s.patches = patches;
	s.npatches = 1;
	s.total = 1;
	s.version = 2;
	s.complete = true;
	opts.voters = v;
	opts.nvoters = 1;
	assert_int_equal(rv_review_series(&r, NULL, &s, &opts, &err), 0);
	assert_int_equal(r->findings.n, 3);
	return r;
}

static const char ids[2][RV_OID_HEXSZ + 1] = {
	"1111111111111111111111111111111111111111",
	"2222222222222222222222222222222222222222",
};

static cJSON *item(const cJSON *o, const char *key)
{
	cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);

	assert_non_null(it);
	return it;
}

static const char *str(const cJSON *o, const char *key)
{
	cJSON *it = item(o, key);

	assert_true(cJSON_IsString(it));
	return it->valuestring;
}

/* Does s hold U+FFFD (what a byte that is not UTF-8 becomes)? */
static bool has_replacement(const char *s)
{
	return strstr(s, "\xef\xbf\xbd") != NULL;
}

static void test_json_document(void **state)
{
	struct rv_review *r = review();
	struct rv_json_report *j;
	cJSON *doc, *rev, *fs, *f, *sk;
	char *text;
	int i, seen = 0;

	(void)state;
	assert_int_equal(rv_json_report_new(&j, "test-1"), 0);
	rv_json_report_add(j, r, ids, 2);
	rv_json_report_skip(j, ids[0], "skipped \xff one", -1);
	rv_json_report_skip(j, ids[1], NULL, 0.5);
	text = rv_json_report_print(j);
	assert_non_null(text);
	assert_true(text[strlen(text) - 1] != '\n');
	doc = cJSON_Parse(text);
	assert_non_null(doc);

	assert_string_equal(str(doc, "schema"), "quorum-review/1");
	assert_string_equal(str(doc, "version"), "test-1");
	assert_int_equal(cJSON_GetArraySize(item(doc, "reviews")), 1);
	rev = cJSON_GetArrayItem(item(doc, "reviews"), 0);
	assert_true(has_replacement(str(item(rev, "series"), "title")));
	assert_int_equal(item(item(rev, "series"), "version")->valueint, 2);
	assert_true(cJSON_IsNull(item(rev, "base"))); /* no repository */
	assert_true(cJSON_IsTrue(item(rev, "applied")));
	/* A review of commits names them; the last is "commit". */
	assert_string_equal(str(rev, "commit"), ids[1]);
	assert_int_equal(cJSON_GetArraySize(item(rev, "commits")), 2);

	fs = item(rev, "findings");
	assert_int_equal(cJSON_GetArraySize(fs), 3);
	for (i = 0; i < 3; i++) {
		f = cJSON_GetArrayItem(fs, i);
		assert_int_equal(item(f, "patch")->valueint, 1);
		assert_string_equal(str(f, "file"), "lib/list.c");
		assert_true(cJSON_IsNull(item(f, "at_tip")) ||
			    cJSON_IsObject(item(f, "at_tip")));
		if (!strcmp(str(f, "category"), "null-deref") &&
		    item(f, "line_start")->valueint == 17) {
			assert_string_equal(str(f, "severity"), "medium");
			assert_true(has_replacement(str(f, "title")));
			seen++;
		}
	}
	assert_int_equal(seen, 1);

	sk = item(doc, "skipped");
	assert_int_equal(cJSON_GetArraySize(sk), 2);
	assert_true(has_replacement(str(cJSON_GetArrayItem(sk, 0), "title")));
	assert_true(cJSON_IsNull(item(cJSON_GetArrayItem(sk, 0), "risk")));
	assert_true(cJSON_IsNull(item(cJSON_GetArrayItem(sk, 1), "title")));
	assert_true(item(cJSON_GetArrayItem(sk, 1), "risk")->valuedouble ==
		    0.5);

	cJSON_Delete(doc);
	free(text);
	rv_json_report_free(j);
	rv_review_free(r);
}

static void test_sarif_log(void **state)
{
	struct rv_review *r = review();
	struct rv_sarif_report *sr;
	cJSON *doc, *run, *driver, *rules, *res, *loc;
	char *text;
	int i, nbad = 0;

	(void)state;
	assert_int_equal(rv_sarif_report_new(&sr, "test-1"), 0);
	rv_sarif_report_add(sr, r, ids, 1);
	text = rv_sarif_report_print(sr);
	assert_non_null(text);
	doc = cJSON_Parse(text);
	assert_non_null(doc);

	assert_string_equal(str(doc, "version"), "2.1.0");
	run = cJSON_GetArrayItem(item(doc, "runs"), 0);
	assert_non_null(run);
	driver = item(item(run, "tool"), "driver");
	assert_string_equal(str(driver, "name"), "quorum");
	assert_string_equal(str(driver, "version"), "test-1");
	/* Two categories: each rule once. */
	rules = item(driver, "rules");
	assert_int_equal(cJSON_GetArraySize(rules), 2);

	res = item(run, "results");
	assert_int_equal(cJSON_GetArraySize(res), 3);
	for (i = 0; i < 3; i++) {
		cJSON *x = cJSON_GetArrayItem(res, i);
		int k = item(x, "ruleIndex")->valueint;
		const char *level = str(x, "level");

		/* ruleIndex points at the rule named by ruleId. */
		assert_string_equal(str(cJSON_GetArrayItem(rules, k), "id"),
				    str(x, "ruleId"));
		if (!strcmp(str(x, "ruleId"), "style"))
			assert_string_equal(level, "note");
		else
			assert_true(!strcmp(level, "error") ||
				    !strcmp(level, "warning"));
		loc = cJSON_GetArrayItem(item(x, "locations"), 0);
		assert_string_equal(str(item(item(loc, "physicalLocation"),
					     "artifactLocation"),
					"uri"),
				    "lib/list.c");
		/* Patch 0 of one commit: the finding names that commit. */
		assert_string_equal(str(item(x, "properties"), "commit"),
				    ids[0]);
		nbad += has_replacement(str(item(x, "message"), "text"));
	}
	assert_int_equal(nbad, 1);

	cJSON_Delete(doc);
	free(text);
	rv_sarif_report_free(sr);
	rv_review_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_document),
		cmocka_unit_test(test_sarif_log),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
