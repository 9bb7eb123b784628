// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * auc.c - how well a score ranks labelled rows, and how sure that is:
 * the AUC (Mann-Whitney, ties count half), 95% bootstrap intervals of
 * two scores' AUCs and their difference from the same draws, and the
 * Wilson interval of a proportion. Shared by `quorum eval` (risk) and
 * the classify eval (stable, CVE).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auc.h"
#include "mailparse/sb.h"

/* The rows of s ordered by score, ascending; ties are counted together. */
struct srow {
	double s;
	size_t i;
};

static int cmp_srow(const void *a, const void *b)
{
	double x = ((const struct srow *)a)->s, y = ((const struct srow *)b)->s;

	return x < y ? -1 : x > y;
}

static size_t *score_order(const double *s, size_t n)
{
	struct srow *r = xmalloc((n + 1) * sizeof(*r));
	size_t *o = xmalloc((n + 1) * sizeof(*o)), i;

	for (i = 0; i < n; i++) {
		r[i].s = s[i];
		r[i].i = i;
	}
	qsort(r, n, sizeof(*r), cmp_srow);
	for (i = 0; i < n; i++)
		o[i] = r[i].i;
	free(r);
	return o;
}

/*
 * Mann-Whitney: the AUC of s (in order o) with each row counted c[i]
 * times (once each without c), ties half; -1 with one class only.
 */
static double counted_auc(const double *s, const size_t *o, const int *y,
			  const uint32_t *c, size_t n)
{
	double below = 0, sum = 0, pos = 0, neg;
	size_t i, j, t;

	for (i = 0; i < n; i = j) {
		double p = 0, q = 0;

		for (j = i; j < n && s[o[j]] == s[o[i]]; j++) {
			t = o[j];
			if (y[t])
				p += c ? c[t] : 1;
			else
				q += c ? c[t] : 1;
		}
		sum += p * (below + q / 2);
		below += q;
		pos += p;
	}
	neg = below;
	return pos > 0 && neg > 0 ? sum / (pos * neg) : -1;
}

double rv_auc(const double *score, const int *label, size_t n)
{
	size_t *o;
	double auc;

	if (!n)
		return -1;
	o = score_order(score, n);
	auc = counted_auc(score, o, label, NULL, n);
	free(o);
	return auc;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void rv_auc_boot(const double *s1, const double *s2, const int *y, size_t n,
		 struct rv_auc_ci *ci)
{
	size_t *o1, *o2 = NULL, i, b, nb = 0;
	uint32_t *c = xcalloc(n + 1, sizeof(*c));
	double *v1 = xmalloc(RV_AUC_BOOT * sizeof(*v1));
	double *v2 = xmalloc(RV_AUC_BOOT * sizeof(*v2));
	double *vd = xmalloc(RV_AUC_BOOT * sizeof(*vd));
	uint64_t x = 0x9e3779b97f4a7c15ULL; /* the same draws every run */

	memset(ci, 0, sizeof(*ci));
	if (n < 2)
		goto out;
	o1 = score_order(s1, n);
	if (counted_auc(s1, o1, y, NULL, n) < 0) {
		free(o1);
		goto out;
	}
	if (s2)
		o2 = score_order(s2, n);
	for (b = 0; b < RV_AUC_BOOT; b++) {
		double a1, a2 = 0;

		memset(c, 0, n * sizeof(*c));
		for (i = 0; i < n; i++) {
			/* xorshift64*: enough for drawing rows */
			x ^= x >> 12;
			x ^= x << 25;
			x ^= x >> 27;
			c[(x * 0x2545f4914f6cdd1dULL >> 11) % n]++;
		}
		a1 = counted_auc(s1, o1, y, c, n);
		if (s2)
			a2 = counted_auc(s2, o2, y, c, n);
		if (a1 < 0 || a2 < 0)
			continue; /* a draw with one class only */
		v1[nb] = a1;
		v2[nb] = a2;
		vd[nb++] = a1 - a2;
	}
	free(o1);
	free(o2);
	if (nb < RV_AUC_BOOT / 2)
		goto out;
	qsort(v1, nb, sizeof(*v1), cmp_dbl);
	qsort(v2, nb, sizeof(*v2), cmp_dbl);
	qsort(vd, nb, sizeof(*vd), cmp_dbl);
	i = (size_t)(0.025 * (double)nb);
	ci->lo[0] = v1[i];
	ci->hi[0] = v1[nb - 1 - i];
	ci->lo[1] = v2[i];
	ci->hi[1] = v2[nb - 1 - i];
	ci->lo[2] = vd[i];
	ci->hi[2] = vd[nb - 1 - i];
	ci->ok = true;
out:
	free(c);
	free(v1);
	free(v2);
	free(vd);
}

void rv_wilson(size_t k, size_t n, double ci[2])
{
	const double z = 1.959964;
	double p, d, m, h;

	if (!n) {
		ci[0] = ci[1] = -1;
		return;
	}
	p = (double)k / (double)n;
	d = 1 + z * z / (double)n;
	m = (p + z * z / (2.0 * (double)n)) / d;
	h = z *
	    sqrt(p * (1 - p) / (double)n +
		 z * z / (4.0 * (double)n * (double)n)) /
	    d;
	ci[0] = m - h < 0 ? 0 : m - h;
	ci[1] = m + h > 1 ? 1 : m + h;
}
