// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * classify's parts that need no repository: the AUC (ties count half),
 * the regularised logistic regression and its threshold, the subject
 * word lists, question config (bounded, one-line errors), label lines
 * stripped from a message, and the backport's upstream id.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <math.h>

#include "review/classify-int.h"

static void test_model_fit(void **state)
{
	enum { N = 200 };
	double *X = calloc(N * CF_N, sizeof(*X));
	int y[N];
	struct cl_model m, back;
	double hi[CF_N] = {0}, lo[CF_N] = {0};
	char *saved;
	size_t i;

	(void)state;
	/* The label follows CF_SHIPPED, with some noise in CF_FILES. */
	for (i = 0; i < N; i++) {
		X[i * CF_N + CF_SHIPPED] = i % 4 == 0;
		X[i * CF_N + CF_FILES] = (double)(i % 7);
		y[i] = i % 4 == 0 && i % 40 != 0;
	}
	cl_model_fit(&m, X, y, N);
	assert_true(m.ok);
	assert_true(m.w[CF_SHIPPED] > 1);
	hi[CF_SHIPPED] = 1;
	assert_true(cl_model_prob(&m, hi) >= m.threshold);
	assert_true(cl_model_prob(&m, lo) < m.threshold);
	assert_true(cl_calibrate(m.threshold, m.threshold) > 0.49 &&
		    cl_calibrate(m.threshold, m.threshold) < 0.51);
	saved = cl_model_save(&m);
	assert_int_equal(cl_model_load(&back, saved), 0);
	assert_true(back.ok);
	assert_true(fabs(cl_model_prob(&back, hi) - cl_model_prob(&m, hi)) <
		    1e-9);
	free(saved);
	assert_int_equal(cl_model_load(&back, "1 0.5 0.1 3 garbage"), -1);
	/* Too few labelled rows: no model, it abstains. */
	cl_model_fit(&m, X, y, 10);
	assert_false(m.ok);
	free(X);
}

static void test_subjects(void **state)
{
	char w[CL_MAX_WORDS][32];

	(void)state;
	assert_true(cl_subject_fix("mlx5: Fix a use-after-free in destroy"));
	assert_true(cl_subject_fix("net: prevent NULL deref"));
	assert_false(cl_subject_fix("mlx5: add support for DEK objects"));
	assert_true(cl_subject_feat("mlx5: add support for DEK objects"));
	assert_true(cl_subject_clean("docs: typo in the README"));
	assert_int_equal(cl_subject_words("the mlx5: Fix the fix, and FIX", w,
					  CL_MAX_WORDS),
			 2);
	assert_string_equal(w[0], "mlx5");
	assert_string_equal(w[1], "fix");
}

static void test_question(void **state)
{
	struct rv_question q;
	struct errmsg err = {""};
	char big[RV_CL_MAX_REGEX + 8];
	char *s;

	(void)state;
	assert_int_equal(rv_question_init(&q, "stable", &err), 0);
	assert_int_equal(q.nregex, 1);
	assert_non_null(q.upstream_branches);
	assert_string_equal(q.prompt, "classify-stable.md");
	/* The first label key of the config replaces the built-in ones. */
	assert_int_equal(rv_question_set(&q, "label-trailer",
					 "Cc: stable@dpdk.org", &err),
			 0);
	assert_int_equal(q.nregex, 1);
	assert_null(q.upstream_branches);
	s = rv_question_strip(
		&q, "x: y\n\nCc: stable@dpdk.org\nSigned-off-by: a\n");
	assert_string_equal(s, "x: y\n\nSigned-off-by: a\n");
	free(s);
	assert_int_equal(
		rv_question_set(&q, "label-regex", "CVE-\\d+-\\d+", &err), 0);
	s = rv_question_strip(&q, "a\nfixes CVE-2024-1234\nb\n");
	assert_string_equal(s, "a\nb\n");
	free(s);
	assert_int_equal(rv_question_set(&q, "label-regex", "([", &err),
			 RV_ERR_INPUT);
	assert_non_null(strstr(err.msg, "does not compile"));
	assert_null(strchr(err.msg, '\n'));
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(rv_question_set(&q, "label-regex", big, &err),
			 RV_ERR_INPUT);
	assert_non_null(strstr(err.msg, "longer than"));
	assert_int_equal(rv_question_set(&q, "prompt", "../x", &err),
			 RV_ERR_INPUT);
	assert_int_equal(rv_question_set(&q, "colour", "red", &err),
			 RV_ERR_INPUT);
	assert_int_equal(rv_question_set(&q, "ripe-days", "-1", &err),
			 RV_ERR_INPUT);
	rv_question_release(&q);
	assert_int_equal(rv_question_init(&q, "a b", &err), RV_ERR_INPUT);
	assert_int_equal(rv_question_init(&q, "mine", &err), 0);
	assert_int_equal(rv_question_check(&q, &err), RV_ERR_INPUT);
	rv_question_release(&q);
}

static void test_upstream_id(void **state)
{
	size_t len = 0;
	const char *id;

	(void)state;
	id = cl_upstream_id("x\n\n[ Upstream commit "
			    "1f9f73c28b006bcb4b37bfc594f12c173156c385 ]\n",
			    &len);
	assert_non_null(id);
	assert_int_equal(len, 40);
	id = cl_upstream_id(
		"commit 593963660919a97a4546acfd706dac93625724f5 upstream.\n",
		&len);
	assert_non_null(id);
	assert_null(cl_upstream_id("nothing here; upstream commit xyz", &len));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model_fit),
		cmocka_unit_test(test_subjects),
		cmocka_unit_test(test_question),
		cmocka_unit_test(test_upstream_id),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
