// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The AUC, its bootstrap intervals and Wilson's interval (review/auc.c),
 * as eval and the classify eval print them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include "review/auc.h"

/* Ties count half; one class or no rows is no AUC. */
static void test_auc(void **state)
{
	const double s[] = {0.1, 0.4, 0.35, 0.8};
	const int y[] = {0, 0, 1, 1};
	const double tie[] = {1, 1, 1, 1};
	const int one[] = {1, 1, 1, 1};

	assert_true(fabs(rv_auc(s, y, 4) - 0.75) < 1e-12);
	assert_true(fabs(rv_auc(tie, y, 4) - 0.5) < 1e-12);
	assert_true(rv_auc(s, one, 4) < 0);
	assert_true(rv_auc(s, y, 0) < 0);
	(void)state;
}

/*
 * The intervals: a bootstrap over the rows, the same draws for both
 * scores, so a score against itself differs by exactly 0, and the same
 * intervals on every run; Wilson's for a precision.
 */
static void test_auc_intervals(void **state)
{
	static double s[400], t[400], noise[400];
	static int y[400];
	struct rv_auc_ci ci, again;
	double w[2];
	uint32_t x = 12345;
	size_t i;

	for (i = 0; i < 400; i++) {
		x = x * 1103515245u + 12345u;
		noise[i] = (double)(x >> 8) / (double)(1u << 24);
		y[i] = i % 4 == 0;
		s[i] = y[i] ? 1 + noise[i] : noise[i]; /* separates */
		t[i] = (double)(i % 7);		       /* ties, unrelated */
	}
	rv_auc_boot(s, s, y, 400, &ci);
	assert_true(ci.ok);
	assert_true(ci.lo[0] == 1 && ci.hi[0] == 1);
	assert_true(ci.lo[2] == 0 && ci.hi[2] == 0);
	rv_auc_boot(noise, t, y, 400, &ci);
	assert_true(ci.ok);
	assert_true(ci.lo[0] < rv_auc(noise, y, 400) &&
		    rv_auc(noise, y, 400) < ci.hi[0]);
	assert_true(ci.lo[1] < 0.5 && 0.5 < ci.hi[1]);
	assert_true(ci.hi[0] - ci.lo[0] > 0.05 && ci.hi[0] - ci.lo[0] < 0.25);
	assert_true(ci.lo[2] < 0 && 0 < ci.hi[2]);
	rv_auc_boot(noise, t, y, 400, &again);
	assert_memory_equal(&ci, &again, sizeof(ci));
	/* One class only: no interval. */
	memset(y, 0, sizeof(y));
	rv_auc_boot(noise, t, y, 400, &ci);
	assert_false(ci.ok);
	rv_auc_boot(noise, NULL, y, 1, &ci);
	assert_false(ci.ok);

	rv_wilson(5, 10, w);
	assert_true(fabs(w[0] - 0.2366) < 0.001 && fabs(w[1] - 0.7634) < 0.001);
	rv_wilson(0, 10, w);
	assert_true(w[0] == 0 && fabs(w[1] - 0.2775) < 0.001);
	rv_wilson(0, 0, w);
	assert_true(w[0] < 0 && w[1] < 0);
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_auc),
		cmocka_unit_test(test_auc_intervals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
